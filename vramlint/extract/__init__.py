"""Turn one loaded YAML document into the vLLM servers it deploys.

`extract_document(doc)` looks at a document on its own (what pre-commit gives us: one file). `scan` uses
`extract_records(doc)`, which also returns the pieces other documents may complete (KServe runtimes and
InferenceServices, ConfigMaps holding vLLM config files) so they can be joined across files.
"""

from __future__ import annotations

import re
from typing import Any

from vramlint.extract.records import Records
from vramlint.model import Problem, Server

__all__ = ["Records", "document_kind", "extract_document", "extract_document_records", "extract_records",
           "clear_template_values"]


def document_kind(doc: Any) -> str:
    """Which extractor a document belongs to: kubernetes | list | compose | dstack | skypilot | beaker |
    akash | truss | torchserve | github-actions | vllm-config | helm-values | ansible | none."""
    data = doc.data
    if isinstance(data, list) and data and isinstance(data[0], dict):
        from vramlint.extract import ansible  # a tasks file or playbook: a list of task (or play) mappings

        return "ansible" if ansible.is_ansible_tasks(doc) else "none"
    if not hasattr(data, "get"):
        return "none"
    kind = data.get("kind")
    if isinstance(kind, str) and (data.get("apiVersion") is not None or data.get("metadata") is not None):
        if kind == "List" or (kind.endswith("List") and isinstance(data.get("items"), list)):
            return "list"
        return "kubernetes"
    from vramlint.extract import beaker, compose, dstack, github_actions, helm_values, skypilot, vllm_config

    if github_actions.is_github_actions(doc):
        return "github-actions"
    if dstack.is_dstack(doc):
        return "dstack"
    if skypilot.is_skypilot(doc):
        return "skypilot"
    if beaker.is_beaker(doc):
        return "beaker"
    from vramlint.extract import akash, torchserve, truss

    if akash.is_akash(doc):
        return "akash"  # before compose: an SDL's `services` look like compose services
    if truss.is_truss(doc):
        return "truss"
    if torchserve.is_torchserve(doc):
        return "torchserve"
    if helm_values.is_helm_values(data, getattr(doc, "file", None)):
        return "helm-values"
    if compose.is_compose(doc):
        return "compose"
    if vllm_config.is_vllm_config(doc):
        return "vllm-config"
    if isinstance(kind, str) and isinstance(data.get("spec"), dict):
        return "kubernetes"  # a manifest fragment without apiVersion (kustomize patches, chart snippets)
    return "none"


# document kind -> (module of vramlint.extract, its function: doc -> (servers, problems))
_SERVER_READERS = {
    "helm-values": ("helm_values", "extract_helm_values"),
    "dstack": ("dstack", "extract_dstack"),
    "beaker": ("beaker", "extract_beaker"),
    "skypilot": ("skypilot", "extract_skypilot"),
    "akash": ("akash", "extract_akash"),
    "truss": ("truss", "extract_truss"),
    "torchserve": ("torchserve", "extract_torchserve"),
    "github-actions": ("github_actions", "extract_github_actions"),
    "ansible": ("ansible", "extract_ansible"),
}


def extract_records(doc: Any, env_files_dir: str | None = None) -> Records:
    """All records of one document (see `Records`)."""
    what = document_kind(doc)
    if what in ("kubernetes", "list"):
        from vramlint.extract import kubernetes

        return kubernetes.extract_records(doc)
    if what == "helm-values":
        from vramlint.extract import app_template

        blocks = app_template.values_blocks(doc.data)
        if blocks:
            # app-template's values (or a chart's that depends on it): its pods are read as pod specs, whose
            # `--config` files are joined with the scanned ConfigMaps (records beyond servers)
            records = Records()
            for prefix, values in blocks:
                app_template.read_app_template(doc, {}, values, prefix, records)
            return records
    if what in _SERVER_READERS:
        # a reader of servers and problems only, imported when a document of its kind is met (start-up time)
        import importlib

        module, function = _SERVER_READERS[what]
        servers, problems = getattr(importlib.import_module(f"vramlint.extract.{module}"), function)(doc)
        return Records(servers=list(servers), problems=list(problems))
    if what == "compose":
        from vramlint.extract import compose

        built: list[str] = []
        servers, problems = compose.extract_compose(doc, env_files_dir, built)
        return Records(servers=list(servers), problems=list(problems), built_dockerfiles=built)
    if what == "vllm-config":
        from vramlint.extract import vllm_config

        servers, problems = vllm_config.extract_vllm_config(doc)
        return Records(servers=list(servers), problems=list(problems))
    return Records()


def clear_template_values(server: Server) -> None:
    """Values written as template expressions (replaced by a marker before parsing) are unknown: None.

    Never a model name, an argument value, an env value or a name; the model gets a note saying why.
    """
    from vramlint.cmdline import has_unknown_mark as marked

    if marked(server.model):
        server.model = None
        server.notes.append("the model is written as a template expression: unknown until rendered")
    for attr in ("name", "container"):
        if marked(getattr(server, attr)):
            setattr(server, attr, None)
    for key, value in list(server.env.items()):
        if marked(value):
            server.env[key] = None
    for key, value in list(server.args.items()):
        server.args[key] = _cleared(value, marked)
    if server.gpu is not None and marked(server.gpu.evidence):
        # evidence is prose: say where a template stood rather than print the marker
        server.gpu.evidence = re.sub("\u2983[_\u2984]*", "(template)", server.gpu.evidence or "")
    if any("\u2983" in n for n in server.notes):
        # so are notes, also those a cross-file join wrote (a KServe runtime named `${RUNTIME}` in a here-document)
        server.notes = [re.sub("\u2983[_\u2984]*", "(template)", n) for n in server.notes]


# JSON arguments (--kv-transfer-config, --hf-overrides) are walked this deep for template markers: vLLM's json.loads
# takes several hundred levels, and a recursive walk of each (two frames a level) ran out of Python's stack
MAX_CLEARED_DEPTH = 100


def _cleared(value: Any, marked: Any, depth: int = 0) -> Any:
    """``value`` with every string a template expression stood in (by ``marked``, cmdline.has_unknown_mark)
    replaced by None; the same object when none is (an argument of 50,000 items is not copied for nothing)."""
    if isinstance(value, str):
        return None if marked(value) else value
    if depth >= MAX_CLEARED_DEPTH or not isinstance(value, (list, dict)):
        return value
    if isinstance(value, list):
        items = [_cleared(v, marked, depth + 1) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    cleared = {k: _cleared(v, marked, depth + 1) for k, v in value.items()}
    return value if all(cleared[k] is v for k, v in value.items()) else cleared


def extract_document(doc: Any) -> tuple[list[Server], list[Problem]]:
    """Servers deployed by one document on its own (a KServe runtime counts as a server by itself)."""
    records = extract_document_records(doc)
    return records.servers, records.problems


def extract_document_records(doc: Any, join_kserve: bool = True) -> Records:
    """`extract_document`, with what another document of the same set may complete: ``servers`` are the
    document's own servers (KServe and llmaz objects joined within it), ``config_refs`` their `--config` files,
    ``configmaps`` its ConfigMaps (a Helm chart joins them across its templates). With ``join_kserve=False`` the
    KServe runtimes and InferenceServices are returned unjoined (``runtimes``, ``inference_services``) for a caller
    that joins them across documents, as KServe does by name in the namespace (a chart's templates)."""
    import os

    records = extract_records(doc, os.path.dirname(doc.file) or ".")
    if records.script_refs:
        from vramlint.extract import script_refs

        by_name: dict[str, list] = {}
        for cm in records.configmaps:
            by_name.setdefault(cm.name, []).append(cm)
        script_refs.resolve_script_refs(records.script_refs, by_name, records, joined=False)
    servers = list(records.servers)
    if join_kserve and (records.runtimes or records.inference_services):
        from vramlint.extract import kserve

        joined, _problems, refs = kserve.join(records.runtimes, records.inference_services)
        servers.extend(joined)
        records.config_refs.extend(refs)
    if records.llmaz:
        from vramlint.extract import llmaz

        joined, _problems, replaced = llmaz.join(records.llmaz)
        replaced_ids = {id(r) for r in replaced}  # by identity: a set, not a scan per server
        servers = [s for s in servers if id(s) not in replaced_ids] + joined
    for server in servers:
        clear_template_values(server)
    return Records(servers=servers, problems=list(records.problems), configmaps=records.configmaps,
                   config_refs=records.config_refs, node_pools=records.node_pools,
                   device_claims=records.device_claims,
                   runtimes=[] if join_kserve else records.runtimes,
                   inference_services=[] if join_kserve else records.inference_services)
