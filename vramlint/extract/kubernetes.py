"""Kubernetes documents: each object goes to the extractor of its kind (`registry`: KServe, KubeAI, KAITO,
llmaz, Kthena, Ray, ...), ConfigMaps are kept for `--config` joins, and any other object is read as plain
workloads: every PodSpec-shaped ``containers`` list (Deployments, Jobs, LeaderWorkerSets, ...), through the
shared PodSpec reading in `podspec`.
"""

from __future__ import annotations

import re
from typing import Any

from vramlint.cmdline import ENTRYPOINT_NOT_SEEN
from vramlint.extract import registry
from vramlint.extract.groups import engine_group
from vramlint.extract.k8s_required import required_field_problems
from vramlint.extract.podspec import (
    ConfigMapRecord,
    extract_pod_objects,
    is_block_scalar,
    is_map,
    is_seq,
    scalar_text,
)
from vramlint.extract.ray_pods import WORKLOAD_KINDS, service_record
from vramlint.extract.ray_pods import read_pods as read_ray_pods
from vramlint.extract.records import Records
from vramlint.yamlload import join_path, value_location

# --- documents ------------------------------------------------------------------------------------------


def extract_records(doc: Any) -> Records:
    records = Records()
    data = doc.data
    kind = scalar_text(data.get("kind"))
    if kind == "List" or (kind and kind.endswith("List") and is_seq(data.get("items"))):
        items = data.get("items")
        if is_seq(items):
            for i, item in enumerate(items[:10_000]):
                if is_map(item):
                    _extract_object(doc, item, join_path("items", i), records)
        return records
    _extract_object(doc, data, "", records)
    return records


_NEVER_A_SERVER = frozenset((
    "Secret", "Service", "Ingress", "Namespace", "PersistentVolumeClaim", "ServiceAccount", "Role", "RoleBinding",
    "ClusterRole", "ClusterRoleBinding", "HorizontalPodAutoscaler", "PodDisruptionBudget", "NetworkPolicy",
    "CustomResourceDefinition"))


def _is_kubernetes_api(api: str) -> bool:
    """An API group of Kubernetes itself (core `v1`, `*.k8s.io`, `autoscaling`, `policy`): an operator's custom
    resource may reuse a built-in kind's name (llmaz's `Service` holds a LeaderWorkerSet template of vLLM pods)."""
    group = api.split("/")[0] if "/" in api else ""
    return group in ("", "autoscaling", "policy") or group.endswith(".k8s.io") or group == "k8s.io"


def _extract_object(doc: Any, obj: Any, path: str, records: Records) -> None:
    kind = scalar_text(obj.get("kind")) or ""
    api = scalar_text(obj.get("apiVersion")) or ""
    if kind == "ConfigMap":
        data = obj.get("data")
        name = scalar_text((obj.get("metadata") or {}).get("name")) if is_map(obj.get("metadata")) else None
        if is_map(data) and name:
            records.configmaps.append(ConfigMapRecord(name, doc.file, data, join_path(path, "data"), doc))
        if is_map(data):
            _embedded_workloads(doc, data, join_path(path, "data"), name, records)
        return
    if kind in _NEVER_A_SERVER and _is_kubernetes_api(api):
        if kind == "Service":  # the address a Ray worker joins its head by (extract.ray_pods)
            service = service_record(obj)
            if service is not None:
                records.services.append(service)
        if kind == "Secret":  # no server, but one the API server cannot decode stops the apply (its data)
            records.problems.extend(required_field_problems(doc, obj, path))
        return
    if kind == "Template" and api.startswith("template.openshift.io/") and is_seq(obj.get("objects")):
        # `oc process` creates each of `objects` as written (its ${PARAMETERS} filled in), and OpenShift AI
        # instantiates its runtime templates the same way: each is read as the object it becomes (a ServingRuntime
        # there is a runtime an InferenceService can name)
        opath = join_path(path, "objects")
        params = _template_parameters(obj.get("parameters"))
        for i, item in enumerate(obj["objects"][:10_000]):
            if is_map(item):
                budget = _FillBudget()
                filled = _filled(item, params, 0, budget) if params else item
                if budget.over:
                    from vramlint.model import Problem

                    loc = value_location(doc.file, obj["objects"], i, join_path(opath, i))
                    records.problems.append(Problem(
                        doc.file, loc.line if loc else None, loc.column if loc else None,
                        f"this object of the Template, its parameters filled in as `oc process` fills them, grows "
                        f"past {MAX_FILLED_CHARS:,} characters in one string or {MAX_FILLED_TOTAL:,} in all "
                        "(expansion budget; the API server takes objects of about 1.5 MB at most): the strings past "
                        "it are read as unknown", level="warning"))
                _extract_object(doc, filled, join_path(opath, i), records)
        return
    if kind == "NodePool" and api.startswith("karpenter.sh/"):
        from vramlint.extract.node_pools import read_node_pool  # the GPU of the pods that select its nodes

        pool = read_node_pool(doc, obj, path)
        if pool is not None:
            records.node_pools.append(pool)
        return
    if kind in ("ResourceClaimTemplate", "ResourceClaim") and api.startswith("resource.k8s.io/"):
        from vramlint.extract.resource_claims import read_claim_object  # the devices of the pods that use it

        claim = read_claim_object(doc, obj, path)
        if claim is not None:
            records.device_claims.append(claim)
            records.problems.extend(claim.problems)
        return
    if kind == "ComputeClass" and api.startswith("cloud.google.com/"):
        from vramlint.extract.node_pools import read_compute_class

        records.node_pools.extend(read_compute_class(doc, obj, path))
        return
    records.problems.extend(required_field_problems(doc, obj, path))
    first, first_problem = len(records.servers), len(records.problems)
    if not registry.extract_operator_object(doc, obj, path, api, kind, records):
        extract_pod_objects(doc, obj, path, records)
        if kind in WORKLOAD_KINDS and api.split("/")[0] in ("v1", "apps", "batch"):
            # a Ray head or worker of a cluster of plain workloads, joined once every file is read
            read_ray_pods(doc, obj, kind, records.servers[first:], records)
    if kind == "RoleBasedGroup" and len(records.servers) > first:
        # spec.roleTemplates are bases that roles merge their templatePatch into (RBG's templateRef): no pod
        # runs a template by itself
        templates = join_path(join_path(path, "spec"), "roleTemplates")
        records.servers[first:] = [s for s in records.servers[first:]
                                   if not (s.location.yaml_path or "").startswith(templates)]
    if len(records.servers) > first or len(records.problems) > first_problem:
        group = engine_group(doc, obj, path)
        if group is not None:
            from vramlint.extract.groups import int32_problems

            records.problems.extend(int32_problems(doc, obj, path))
        if group is not None and group.ray_only:
            # KubeRay runs `ray start` in these containers (the image's entrypoint never runs): not vLLM servers,
            # and no note that their image's entrypoint was not seen
            records.servers[first:] = [s for s in records.servers[first:]
                                       if s.location.yaml_path not in group.ray_only]
            lines = {line for line in group.ray_only.values() if line is not None}
            records.problems[first_problem:] = [p for p in records.problems[first_problem:]
                                                if not (p.level == "note" and p.file == doc.file and p.line in lines
                                                        and ENTRYPOINT_NOT_SEEN in p.message)]
    if len(records.servers) > first:
        outside = {m.location.yaml_path for m in group.members if not m.joins and m.location} if group else set()
        for server in records.servers[first:]:
            # a worker that never joins runs its image's own server: an engine of its own, outside the group
            if group is not None and server.engine_group is None and server.location.yaml_path not in outside:
                server.engine_group = group


# `oc process` (openshift/library-go's template processor) replaces `${NAME}` in any string of `objects` with the
# parameter's value, and a string that is exactly `${{NAME}}` with the value as JSON (a number for `replicas`)
_PARAMETER = re.compile(r"\$\{([a-zA-Z0-9_]+)\}")
_NON_STRING_PARAMETER = re.compile(r"\$\{\{([a-zA-Z0-9_]+)\}\}")


def _template_parameters(written: Any) -> dict[str, str]:
    """A Template's parameters and the values `oc process` gives them when none is passed: the `value`, else an
    unknown one (`generate: expression` draws a random string; a parameter without a value is `-p`'s to set)."""
    from vramlint.cmdline import UNKNOWN_MARK

    params: dict[str, str] = {}
    if not is_seq(written):
        return params
    for param in written:  # (as many as the document holds: its node bound bounds them; a cut left `${X}` as text)
        name = scalar_text(param.get("name")) if is_map(param) else None
        if not name:
            continue
        value = param.get("value")
        generated = scalar_text(param.get("generate")) == "expression"
        params[name] = UNKNOWN_MARK if generated or value is None or is_map(value) or is_seq(value) \
            else scalar_text(value) or ""
    return params


# What filling in parameters may make of one object: a string past MAX_FILLED_CHARS, or all of them past
# MAX_FILLED_TOTAL, is unknown (a 1 MB parameter used 5,000 times made 10 GB: killed at 9.5 GB)
MAX_FILLED_CHARS = 100_000
MAX_FILLED_TOTAL = 5_000_000


class _FillBudget:
    __slots__ = ("total", "over")

    def __init__(self) -> None:
        self.total = 0
        self.over = False


def _filled(node: Any, params: dict[str, str], depth: int, budget: _FillBudget) -> Any:
    """``node`` with the Template's parameters filled in: a copy where a string changes (positions kept, the
    document itself never changed), the node itself where nothing does."""
    import copy

    if isinstance(node, str):
        if "${" not in node:
            return node

        def value(m: re.Match) -> str:
            return params.get(m.group(1), m.group(0))

        whole = _NON_STRING_PARAMETER.fullmatch(node)
        if whole:
            size = len(params.get(whole.group(1), node))
        else:
            size = len(node) + sum(len(params[m.group(1)]) - len(m.group(0)) for m in _PARAMETER.finditer(node)
                                   if m.group(1) in params)
        if size > MAX_FILLED_CHARS or budget.total + size > MAX_FILLED_TOTAL:
            from vramlint.cmdline import UNKNOWN_MARK

            budget.over = True
            text = UNKNOWN_MARK
        else:
            text = params.get(whole.group(1), node) if whole else _PARAMETER.sub(value, node)
        if text == node:
            return node
        budget.total += len(text)
        try:
            return type(node)(text)  # a block scalar stays one (a `sh -c` script)
        except TypeError:
            return text
    if depth > 200 or not (is_map(node) or is_seq(node)):
        return node
    if is_map(node):
        changed = {k: _filled(v, params, depth + 1, budget) for k, v in node.items()}
        if all(changed[k] is v for k, v in node.items()):
            return node
        out = copy.copy(node)
        for k, v in changed.items():
            if v is not node[k]:
                out[k] = v
        return out
    items = [_filled(v, params, depth + 1, budget) for v in node]
    if all(a is b for a, b in zip(items, node, strict=True)):
        return node
    out = copy.copy(node)
    out[:] = items
    return out


def _embedded_workloads(doc: Any, data: Any, path: str, cm_name: str | None, records: Records) -> None:
    """A ConfigMap key holding a workload manifest that a controller fills in and creates (llm-d presets)."""
    from vramlint.yamlload import load_embedded

    for key, value in data.items():
        if not isinstance(value, str) or "containers:" not in value or "vllm" not in value.lower():
            continue
        if not re.search(r"^kind:\s*(Deployment|StatefulSet|Pod|LeaderWorkerSet|Job)\b", value, re.M):
            continue
        kpath = join_path(path, key)
        loc = value_location(doc.file, data, key, kpath)
        docs, _problems = load_embedded(value, doc.file, doc.lines, loc, is_block_scalar(value))
        for inner in docs:
            if not is_map(inner.data):
                continue
            sub = Records()
            extract_pod_objects(inner, inner.data, kpath, sub)
            for server in sub.servers:
                server.notes.append(f"a {scalar_text(inner.data.get('kind'))} template in ConfigMap "
                                    f"{cm_name or '(unnamed)'} key {key!r}: a controller fills in what it leaves open")
            records.servers.extend(sub.servers)
            records.problems.extend(sub.problems)
