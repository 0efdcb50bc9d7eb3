"""Terraform files that deploy vLLM: the Kubernetes objects and Helm releases their resources create.

Read (never run) from a `.tf` file that names vLLM, with the module folder's variables, locals and auto-loaded
`.tfvars` (`terraform_eval`); from one that names no vLLM, only its `helm_release`s of a chart in the tree that
names vLLM (the module installs such a chart with values that need not name it: groundx-on-prem's operator/):

- `kubernetes_deployment`, `kubernetes_stateful_set`, `kubernetes_daemon_set`, `kubernetes_pod`, `kubernetes_job`,
  `kubernetes_cron_job` (and their `_v1` names) and `kubernetes_config_map`: the hashicorp/kubernetes provider's
  block form of the object (kubernetes/schema_pod_spec.go, schema_container.go: the API's field names in
  snake_case, a repeated block for each item of a list, `container` for `containers`), turned into the object the
  provider sends and read by the same PodSpec reading as a manifest (`podspec`, through `kubernetes`).
- `kubectl_manifest` (`yaml_body`) and `kubernetes_manifest` (`manifest`): the manifest written in a heredoc, a
  `yamlencode({...})` / object, `file()` or `templatefile()`; its positions are the `.tf` file's lines (or the
  read file's).
- `helm_release`: `values` (heredocs, `yamlencode`, `file()`) merged in order, then `set` / `set_list` /
  `set_sensitive` (blocks, or the provider 3.x list of objects) over them, as `helm install -f ... --set ...`
  does. A chart in the scanned tree (`chart = "./charts/x"`) is evaluated with those values through the chart
  reader (`vramlint.helm.extract_charts`), as that release, in place of its own defaults; a chart from a
  repository is read as its values file would be (the known charts, by their values' shape).
- `google_compute_instance`, `aws_instance`, `aws_launch_template`, `azurerm_*virtual_machine*`: the start-up
  script the VM runs at boot, read as a shell script on the VM's GPUs (`terraform_vms`).

Anything the module does not say is unknown and said once, with the change that makes it known. A file that
names vLLM but gives no server says why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vramlint.extract import hcl
from vramlint.extract.records import Records
from vramlint.extract.terraform_eval import (
    MAX_READ_FILES,
    MAX_STEPS,
    Context,
    Module,
    Placed,
    Unknown,
    is_unknown,
    load_module,
)
from vramlint.model import Location, Problem, Server
from vramlint.yamlload import Document, LineCol, YamlMap, YamlSeq, has_template_marker, shift_positions

# resource type (without `_v1`) -> (apiVersion, kind) of the object the provider creates
_OBJECTS = {
    "kubernetes_deployment": ("apps/v1", "Deployment"),
    "kubernetes_stateful_set": ("apps/v1", "StatefulSet"),
    "kubernetes_daemonset": ("apps/v1", "DaemonSet"),
    "kubernetes_daemon_set": ("apps/v1", "DaemonSet"),
    "kubernetes_replication_controller": ("v1", "ReplicationController"),
    "kubernetes_pod": ("v1", "Pod"),
    "kubernetes_job": ("batch/v1", "Job"),
    "kubernetes_cron_job": ("batch/v1", "CronJob"),
    "kubernetes_config_map": ("v1", "ConfigMap"),
}
_MANIFESTS = {"kubectl_manifest": "yaml_body", "kubernetes_manifest": "manifest"}

# Repeated blocks that are the items of an API list, and the list's name (schema_pod_spec.go, schema_container.go,
# schema_affinity_spec.go, schema_volume_source.go; the provider's expanders put each block in that list)
_LIST_BLOCKS = {
    "container": "containers",
    "init_container": "initContainers",
    "ephemeral_container": "ephemeralContainers",
    "toleration": "tolerations",
    "volume": "volumes",
    "volume_mount": "volumeMounts",
    "volume_device": "volumeDevices",
    "env": "env",
    "env_from": "envFrom",
    "port": "ports",
    "node_selector_term": "nodeSelectorTerms",
    "match_expressions": "matchExpressions",
    "match_fields": "matchFields",
    "preferred_during_scheduling_ignored_during_execution": "preferredDuringSchedulingIgnoredDuringExecution",
    "image_pull_secrets": "imagePullSecrets",
    "host_aliases": "hostAliases",
    "topology_spread_constraint": "topologySpreadConstraints",
    "readiness_gate": "readinessGates",
    "volume_claim_template": "volumeClaimTemplates",
    "items": "items",
    "sysctl": "sysctls",
    "http_header": "httpHeaders",
    "option": "options",
    "resource_claim": "resourceClaims",
    "claims": "claims",
    "sources": "sources",
}
# ... and one that is a list under some parents only (pod (anti-)affinity terms; node affinity's is one object)
_LIST_UNDER = {"required_during_scheduling_ignored_during_execution": ("pod_affinity", "pod_anti_affinity")}
_NAMES = {"host_ipc": "hostIPC", "host_pid": "hostPID"}
# the provider's own settings in an object's blocks, not fields of the object
_PROVIDER_ONLY = {"wait_for_rollout", "wait_for_completion", "timeouts", "lifecycle", "depends_on", "count",
                  "for_each", "provider"}

MAX_RESOURCES = 2000  # resources read a file
MAX_INSTANCES = 16  # instances of a resource's for_each or count read (past it, one with each / count unknown)
MAX_SET_ITEMS = 10_000  # `set` entries a release
MAX_PADDING = 100_000  # nulls `set` entries' list indexes may add to a release's values


@dataclass
class TerraformRecord:
    """What one Terraform file gives the scan, kept apart until the join: its servers and problems, the charts in
    the tree it installs (evaluated here with the release's values, so the chart's reading on its own defaults
    is dropped), and the files it reads as manifests or values (their own reading is dropped: these servers are
    those files' with the module's values)."""

    file: str
    servers: list[Server] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    released_charts: list[str] = field(default_factory=list)
    consumed_files: list[str] = field(default_factory=list)


# A `helm_release` whose `chart` may be a folder of the tree: a string with a `/` or an interpolation (`"./charts/x"`,
# `"${path.module}/../charts/x"`, `"${local.charts}/x"`) or a reference (`local.chart_dir`), not a repository URL.
# The scan's cheap test for a `.tf` that names no vLLM but may install a chart of the tree that does (and its JSON
# syntax's `"chart": "..."`, every string a template).
_LOCAL_CHART = re.compile(r'^[ \t]*(?:chart[ \t]*=|"chart"[ \t]*:)[ \t]*(?!"(?:oci|https?)://)'
                          r'(?:"[^"\n]*[/$]|[a-z_]\w*\.)', re.M)


def may_release_local_chart(text: str) -> bool:
    """Could this Terraform text install a chart of the scanned tree (`helm_release` with a local `chart`)? False
    means certainly not; True is checked by reading the file (`read_terraform(..., releases_only=True)`)."""
    return "helm_release" in text and _LOCAL_CHART.search(text) is not None


def read_terraform(text: str, display: str, path: str, records: Records,
                   read_document: Callable[[Any, str], Records], releases_only: bool = False) -> TerraformRecord:
    """The servers of one Terraform file (``display`` as shown, ``path`` to open its folder); the pieces a
    cross-file join completes (ConfigMaps, `--config` files, env references) go to ``records``.
    ``read_document(doc, folder)``: the Records of one manifest (the dispatcher's, given by the caller: extractors
    do not import it). ``releases_only``: the file names no vLLM, so only its `helm_release`s of a chart in the tree
    that names vLLM are read (the chart is evaluated with the release's values); anything else of it says nothing."""
    out = TerraformRecord(display)
    lines = text.split("\n")
    try:
        body = hcl.parse_json(text) if display.lower().endswith(".tf.json") else hcl.parse(text)
    except hcl.HclError as exc:
        out.problems.append(Problem(display, exc.line + 1, 1, (
            f"vramlint cannot read this Terraform file past line {exc.line + 1} ({exc}): its resources are not "
            "checked (`terraform validate` says whether Terraform reads it)"), level="note"))
        return out
    folder = os.path.dirname(os.path.abspath(path))
    module = load_module(folder, own=(path, body))
    reader = _Reader(module, display, lines, records, out, read_document)
    reader.releases_only = releases_only
    blocks = [b for b in body if isinstance(b, hcl.Block) and b.type == "resource" and len(b.labels) >= 2]
    for k, block in enumerate(blocks):
        if k >= MAX_RESOURCES:
            out.problems.append(Problem(display, block.line + 1, 1, (
                f"more than {MAX_RESOURCES:,} resources in this file: the rest are not read"), level="warning"))
            break
        try:
            reader.resource(block)
        except RecursionError:
            out.problems.append(Problem(display, block.line + 1, 1, "resource nested too deeply to read",
                                        level="warning"))
    if releases_only and not out.released_charts and not reader.outside_charts:
        return TerraformRecord(display)  # it installs no chart of the tree that names vLLM: nothing to say
    for block in body:
        if isinstance(block, hcl.Block) and block.type == "module":
            problem = _module_outside(block, folder, display)
            if problem is not None:
                out.problems.append(problem)
    said: set[tuple[str, int, str]] = set()
    for file, line, col, message, level in reader.refused:  # each on its line once (a resource read per instance)
        if (file, line, message) not in said and len(said) < MAX_READ_FILES:
            said.add((file, line, message))
            out.problems.append(Problem(file, line + 1, col + 1, message, level=level,
                                        outside_link=reader.outside_links.get((file, line, col))))
    if not out.servers and not releases_only:
        reason = _no_server_reason(body, lines, reader, module)
        if reason is not None:
            out.problems.append(Problem(display, reason[0], 1, reason[1], level="note"))
    if module.unread and out.servers:
        out.servers[0].notes.append("files of the module not read, so values they set are unknown: " +
                                    "; ".join(module.unread[:3]))
    return out


class _Reader:
    def __init__(self, module: Module, display: str, lines: list[str], records: Records,
                 out: TerraformRecord, read_document: Callable[[Any, str], Records]) -> None:
        self.read_document = read_document
        self.module = module
        self.display = display
        self.lines = lines
        self.records = records
        self.out = out
        self.said: set[str] = set()
        self.unread: list[tuple[int, str]] = []  # (line, why) of resources naming vLLM that gave no server
        self.doc_index = 0
        self.budget = [MAX_STEPS]  # expressions evaluated, all the file's resources together
        self.refused: list[tuple[str, int, int, str, str]] = []  # what is said on its line (terraform_eval)
        self.outside_charts = 0  # releases of a local chart outside the scanned tree (said on their line)
        self.outside_links: dict[tuple[str, int, int], str] = {}  # (file, line, col) said -> the chart path shown
        self.releases_only = False  # read_terraform's

    def resource(self, block: hcl.Block) -> None:
        rtype = block.labels[0]
        base = rtype[:-3] if rtype.endswith("_v1") or rtype.endswith("_v2") else rtype
        from vramlint.extract.terraform_vms import VM_RESOURCES

        if base not in _OBJECTS and rtype not in _MANIFESTS and rtype != "helm_release" and rtype not in VM_RESOURCES:
            return
        if self.releases_only and rtype != "helm_release":
            return
        instances = self._instances(block)
        for key, scope in instances or [(None, None)]:
            ctx = Context(self.module, self.display, self.budget, self.refused)
            ctx.scope = scope
            before = len(self.out.servers)
            if base in _OBJECTS:
                self._object(block, ctx, *_OBJECTS[base])
            elif rtype in _MANIFESTS:
                self._manifest(block, ctx, _MANIFESTS[rtype])
            elif rtype in VM_RESOURCES:
                self._vm(block, ctx)
            else:
                self._helm_release(block, ctx)
            made = self.out.servers[before:]
            if key is not None:
                for server in made:
                    server.notes.append(f"{rtype}.{block.labels[1]}[{key}]: one instance of the resource's "
                                        + ("for_each" if "each" in scope else "count"))
            self._say(block, ctx, made, expanded=instances is not None)

    def _instances(self, block: hcl.Block) -> list[tuple[str, dict]] | None:
        """The resource's instances when its for_each (a map, or a set of strings) or its count (above 1, used
        through count.index) is known: (key as Terraform writes it, the `each` / `count` they see); else None."""
        ctx = Context(self.module, self.display, self.budget, self.refused)
        for_each = block.attr("for_each")
        if for_each is not None:
            items = ctx.evaluate(for_each.expr)
            if isinstance(items, dict) and 0 < len(items) <= MAX_INSTANCES:
                pairs = [(str(k), v) for k, v in items.items()]
            elif isinstance(items, list) and 0 < len(items) <= MAX_INSTANCES and all(
                    isinstance(v, str) and not is_unknown(v) for v in items):
                pairs = [(str(v), str(v)) for v in dict.fromkeys(items)]
            else:
                return None
            return [(f'"{k}"', {"each": _scope_map({"key": k, "value": v})}) for k, v in pairs]
        count = block.attr("count")
        if count is not None and "count.index" in "\n".join(self.lines[block.line:block.end_line + 1]):
            n = ctx.evaluate(count.expr)
            if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= MAX_INSTANCES:
                return [(str(i), {"count": _scope_map({"index": i})}) for i in range(n)]
        return None

    # --- what a resource's values leave unknown, and where they came from
    def _say(self, block: hcl.Block, ctx: Context, servers: list[Server], expanded: bool = False) -> None:
        if not servers:
            return
        where = f"{block.labels[0]}.{block.labels[1]}"
        count = block.attr("count")
        if count is not None:
            n = Context(self.module, self.display, self.budget, self.refused).evaluate(count.expr)  # (its values are no server's)
            if isinstance(n, int) and not isinstance(n, bool) and n == 0:
                servers[0].notes.append(f"{where}: its count is 0 with the module's values (read as it would be "
                                        "deployed when the count is raised)")
            elif isinstance(n, int) and not isinstance(n, bool) and n > 1 and not expanded:
                # said on the count's line: one server stands for all its instances
                self.refused.append((self.display, count.expr.line, count.expr.col, (
                    f"{where}: count is {n:,}; read as one instance (" + (
                        f"past vramlint's {MAX_INSTANCES} instances, so count.index is unknown)"
                        if n > MAX_INSTANCES and "count.index" in "\n".join(self.lines[block.line:block.end_line + 1])
                        else "nothing in it uses count.index, so every instance is the same object)")), "note"))
        for_each = block.attr("for_each")
        if for_each is not None and not expanded:
            self.refused.append((self.display, for_each.expr.line, for_each.expr.col, (
                f"{where}: one instance per for_each item, which vramlint does not expand (a map or a set of strings "
                f"known to vramlint, of at most {MAX_INSTANCES} items, is): values from each.key / each.value are "
                "unknown"), "note"))
        # said only where it reaches a server (a namespace or a label left unknown changes nothing checked)
        placed = [_server_lines(s, self.display) for s in servers]
        used = None if any(p is None for p in placed) else set().union(*placed)
        by_source: dict[str, list[str]] = {}
        for name, src in ctx.taken.items():
            if name not in self.said and (used is None or not ctx.taken_lines.get(name) or
                                          ctx.taken_lines[name] & used):
                by_source.setdefault(src, []).append(name)
        if by_source:
            self.said.update(ctx.taken)
            parts = [", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "") +
                     f" from {src}" for src, names in by_source.items()]
            variables = any(n.startswith("var.") for names in by_source.values() for n in names)
            servers[0].notes.append("Terraform values taken: " + "; ".join(parts[:4]) + (
                " (a -var, TF_VAR_ variable or -var-file given to `terraform apply` may set other variables)"
                if variables else ""))
        fresh = [(name, why) for name, why in ctx.unknown.items() if name not in self.said
                 and not name.startswith(("each.", "count.")) and (
                     used is None or name.startswith("%{") or not ctx.unknown_lines.get(name) or
                     ctx.unknown_lines[name] & used)]
        if fresh:
            self.said.update(name for name, _why in fresh)
            shown = "; ".join(f"{name}: {why}" for name, why in fresh[:5])
            more = f" and {len(fresh) - 5} more" if len(fresh) > 5 else ""
            servers[0].notes.append(f"Terraform values unknown here ({shown}{more}): what they set is not checked; "
                                    "give the variables a default or a terraform.tfvars value to have it checked")
        if ctx.over_budget:
            servers[0].notes.append("values past vramlint's evaluation limits are unknown")
        for server in servers:
            if has_template_marker(server.image):
                server.image, server.vllm_version = None, None
            if has_template_marker(server.name):
                server.name = None
            server.notes = [re.sub("\u2983[_\u2984]*", "(unknown)", n) for n in server.notes]

    # --- Kubernetes objects in the provider's block form
    def _object(self, block: hcl.Block, ctx: Context, api: str, kind: str) -> None:
        data = YamlMap()
        data.lc = LineCol(block.line, block.col)
        data.lc.data = {}
        data["apiVersion"], data["kind"] = api, kind
        data.lc.data["apiVersion"] = data.lc.data["kind"] = [block.line, block.col, block.line, block.col]
        for part in ("metadata", "spec", "data"):
            if part == "data":
                attr = block.attr("data")
                if attr is not None and kind == "ConfigMap":
                    data["data"] = ctx.evaluate(attr.expr)
                    data.lc.data["data"] = [attr.line, attr.col, attr.expr.line, attr.expr.col]
                continue
            found = block.blocks(part)
            if found:
                data[part] = self._block(found[0], ctx)
                data.lc.data[part] = [found[0].line, found[0].col, found[0].line, found[0].col]
        if kind == "ConfigMap" and "metadata" not in data:
            return
        self._extract(data, ctx, self.display, self.lines, block)

    def _block(self, block: hcl.Block, ctx: Context) -> YamlMap:
        out = YamlMap()
        out.lc = LineCol(block.line, block.col)
        out.lc.data = {}
        for item in block.body:
            if isinstance(item, hcl.Attribute):
                if item.name in _PROVIDER_ONLY:
                    continue
                key = _camel(item.name)
                out[key] = ctx.evaluate(item.expr)
                out.lc.data[key] = [item.line, item.col, item.expr.line, item.expr.col]
                continue
            if item.type in _PROVIDER_ONLY or item.type == "dynamic":
                continue
            listed = _LIST_BLOCKS.get(item.type)
            if listed is None and block.type in _LIST_UNDER.get(item.type, ()):
                listed = _camel(item.type)
            inner = self._block(item, ctx)
            if listed is not None:
                seq = out.get(listed)
                if not isinstance(seq, YamlSeq):
                    seq = YamlSeq()
                    seq.lc = LineCol(item.line, item.col)
                    seq.lc.data = {}
                    out[listed] = seq
                    out.lc.data[listed] = [item.line, item.col, item.line, item.col]
                seq.lc.data[len(seq)] = [item.line, item.col]
                seq.append(inner)
            else:
                key = _camel(item.type)
                out[key] = inner
                out.lc.data[key] = [item.line, item.col, item.line, item.col]
        return out

    # --- virtual machines whose start-up script starts vLLM
    def _vm(self, block: hcl.Block, ctx: Context) -> None:
        from vramlint.extract.terraform_vms import vm_servers

        # (a VM named for vLLM whose script is not known is said: what it runs is all there is to read)
        named = any("vllm" in line.lower() for line in self.lines[block.line:block.end_line + 1])
        servers, problems, consumed, why = vm_servers(block, ctx, self.display, self.lines, named)
        self.out.servers.extend(servers)
        self.out.problems.extend(problems)
        self.out.consumed_files.extend(consumed)
        if why is not None:
            self.unread.append((block.line + 1, why))

    # --- manifests written as YAML or as an object
    def _manifest(self, block: hcl.Block, ctx: Context, attr_name: str) -> None:
        attr = block.attr(attr_name)
        if attr is None:
            return
        value = ctx.evaluate(attr.expr)
        if isinstance(value, YamlMap):
            self._extract(value, ctx, self.display, self.lines, block)
            return
        if isinstance(value, str) and not _wholly_unknown(value):
            for data, file, lines in self._yaml(value, attr, ctx):
                if isinstance(data, YamlMap):
                    self._extract(data, ctx, file, lines, block)
            return
        if _mentions(self.lines, block):
            why = next((f"{name}: {reason}" for name, reason in ctx.unknown.items()),
                       "an expression it does not evaluate")
            self.unread.append((attr.line + 1, f"{block.labels[0]}.{block.labels[1]}: its {attr_name} is not known "
                                f"to vramlint ({why}): its manifest is not checked"))

    def _yaml(self, text: str, attr: hcl.Attribute, ctx: Context) -> list[tuple[Any, str, list[str]]]:
        """The documents of YAML text, placed where the text is written."""
        from vramlint.yamlload import load_text

        placed = text if isinstance(text, Placed) else Placed(text, None, attr.expr.line, attr.expr.col,
                                                                attr.expr.col)
        own = placed.file is None or placed.file == self.display
        file = self.display if own else placed.file
        docs, problems = load_text(str(placed), file)
        lines = self.lines if own else str(placed).split("\n")
        if not own:
            self.out.consumed_files.append(file)
        for doc in docs:
            if own and placed.indent < 0:
                _flatten_positions(doc.data, placed.line, placed.col)  # a JSON string's YAML: at the string
            elif own:
                shift_positions(doc.data, placed.line, placed.indent)
        for p in problems:
            if own and p.line is not None and placed.indent < 0:
                p.line, p.column = placed.line + 1, placed.col + 1
            elif own and p.line is not None:
                p.line += placed.line
                if p.column is not None:
                    p.column += placed.indent
            if p.level == "error":
                # the provider refuses to apply it (it parses the YAML first); said as a note: what Terraform
                # renders may differ where vramlint left values unknown
                p = Problem(p.file, p.line, p.column, f"{p.message} (in the YAML of this Terraform resource: "
                            "the provider cannot apply it as written)", level="warning" if not any(
                                is_unknown(x) for x in (str(placed),)) else "note")
            self.out.problems.append(p)
        return [(doc.data, file, lines) for doc in docs]

    def _extract(self, data: YamlMap, ctx: Context, file: str, lines: list[str], block: hcl.Block) -> None:
        doc = Document(file, self.doc_index, data, lines)
        self.doc_index += 1
        rec = self.read_document(doc, os.path.dirname(file) or ".")
        self.out.servers.extend(rec.servers)
        self.out.problems.extend(rec.problems)
        for name in ("runtimes", "inference_services", "configmaps", "config_refs", "llmaz", "script_refs",
                     "env_refs", "node_pools", "device_claims"):
            getattr(self.records, name).extend(getattr(rec, name))
        if not rec.servers and _mentions(self.lines, block):
            self.unread.append((block.line + 1, f"{block.labels[0]}.{block.labels[1]} names vLLM, but the object it "
                                "creates runs no vLLM server vramlint reads"))

    # --- Helm releases
    def _helm_release(self, block: hcl.Block, ctx: Context) -> None:
        chart = _text(ctx, block.attr("chart"))
        repository = _text(ctx, block.attr("repository"))
        where = f"helm_release.{block.labels[1]}"
        if self._chart_outside(block, chart, repository, where):
            return
        if self.releases_only:
            chart_dir = self._local_chart(chart, repository)
            if chart_dir is None:
                return
            refused = len(self.refused)
            values, problems, _unknown = self._release_values(block, ctx)
            from vramlint.helm.hook import names_vllm

            if not names_vllm(chart_dir, [values]):
                del self.refused[refused:]  # (a file() it could not read is said of no release that is taken)
                return  # neither the release nor its chart names vLLM: the chart says nothing either
            self.out.problems.extend(problems)
            self._local_release(block, chart_dir, values, where, ctx)
            return
        values, problems, unknown_values = self._release_values(block, ctx)
        self.out.problems.extend(problems)
        chart_dir = self._local_chart(chart, repository)
        if chart_dir is not None:
            self._local_release(block, chart_dir, values, where, ctx)
            return
        from vramlint.extract.helm_values import extract_helm_values, is_helm_values

        if is_helm_values(values, None):
            servers, found = extract_helm_values(Document(self.display, self.doc_index, values, self.lines))
            self.doc_index += 1
            for server in servers:
                server.notes.append(f"{where} installs chart {chart or '?'}"
                                    + (f" from {repository}" if repository else "") +
                                    ": read from the values the release gives it (the chart's defaults are not in "
                                    "the scanned files)")
            self.out.servers.extend(servers)
            self.out.problems.extend(found)
            if servers:
                return
        if _mentions(self.lines, block) and unknown_values:
            self.unread.append((block.line + 1, (
                f"{where} installs chart {chart or '(unknown)'}" + (f" from {repository}" if repository else "") +
                f" with values vramlint does not know ({unknown_values}): its vLLM server is not checked")))
        elif _mentions(self.lines, block):
            shown = chart or "(unknown)"
            self.unread.append((block.line + 1, (
                f"{where} installs chart {shown}" + (f" from {repository}" if repository else "") +
                ", whose values vramlint does not read as a chart it knows (and the chart is not in the scanned "
                "tree): its vLLM server is not checked; scan the chart with the release's values (`helm template` "
                "of it, piped to `vramlint check -`) to check it")))

    def _local_chart(self, chart: str | None, repository: str | None) -> str | None:
        """The chart folder in the tree a release installs (`chart = "./charts/x"`, or a local `repository`)."""
        from vramlint.fsread import outside_reason
        from vramlint.helm import is_chart_dir

        full = self._chart_path(chart, repository)
        if full is None or not os.path.isdir(full) or outside_reason(full) is not None or not is_chart_dir(full):
            return None
        return full

    def _chart_outside(self, block: hcl.Block, chart: str | None, repository: str | None, where: str) -> bool:
        """A release's local chart folder that is outside the scanned tree (`chart = "../../elsewhere/x"`, a link
        to `/`): said on its `chart` line, never listed or read (hostile26: silent, in a .tf naming vLLM or not)."""
        from vramlint.fsread import outside_reason

        full = self._chart_path(chart, repository)
        if full is None or not os.path.lexists(full):
            return False
        why = outside_reason(full)
        if why is None:
            return False
        from vramlint.discover import display_path

        attr = block.attr("chart")
        self.refused.append((self.display, attr.line, attr.col, (
            f"{where}: its chart {chart} is {why}: not read, so a vLLM server it deploys is not checked; scan the "
            "tree that holds the chart"), "warning"))
        self.outside_links[(self.display, attr.line, attr.col)] = display_path(full)
        self.outside_charts += 1
        return True

    def _chart_path(self, chart: str | None, repository: str | None) -> str | None:
        """The path of the local chart folder a release names, or None (a repository chart, not known)."""
        if not chart or is_unknown(chart) or chart.startswith(("oci://", "http://", "https://")):
            return None
        if repository and is_unknown(repository):
            return None
        if repository and not repository.startswith(("oci://", "http://", "https://")):
            candidate = os.path.join(repository, chart)
        elif repository:
            return None
        else:
            candidate = chart
        folder = self.module.folder
        full = candidate if os.path.isabs(candidate) else os.path.normpath(
            os.path.join(os.getcwd(), candidate) if candidate.startswith(self.module.display_folder.rstrip("/") + "/")
            and self.module.display_folder not in (".", "") else os.path.join(folder, candidate))
        return full

    def _local_release(self, block: hcl.Block, chart_dir: str, values: YamlMap, where: str, ctx: Context) -> None:
        """The chart in the tree evaluated as this release installs it (`vramlint.helm.releases`: its name and
        namespace, its values over the chart's values.yaml)."""
        from vramlint.discover import display_path
        from vramlint.helm import extract_charts
        from vramlint.helm.releases import InlineValues, Release

        data, origins = _plain_with_origins(values, self.display)
        shown = display_path(chart_dir)
        name, namespace = _text(ctx, block.attr("name")), _text(ctx, block.attr("namespace"))
        release = Release(None if name is None or is_unknown(name) else name,
                          None if namespace is None or is_unknown(namespace) else namespace,
                          self.display, block.line + 1, "Terraform helm_release")
        release.values.append(InlineValues(f"{self.display}:{block.line + 1} ({where})", data, origins))
        servers, problems, notes = extract_charts([chart_dir], releases=[release])
        self.out.released_charts.append(shown)
        self.out.servers.extend(servers)
        self.out.problems.extend(problems)
        self.out.notes.extend(notes)
        if not servers and _mentions(self.lines, block):
            self.unread.append((block.line + 1, f"{where} installs the chart {shown}, which renders no vLLM server "
                                "vramlint reads with the release's values"))

    def _release_values(self, block: hcl.Block, ctx: Context) -> tuple[YamlMap, list[Problem], str | None]:
        """The release's values: `values` in order, then the `set` entries over them (Helm's -f, then --set); and
        what made a `values` item unknown as a whole, if one was."""
        merged = YamlMap()
        merged.lc = LineCol(block.line, block.col)
        merged.lc.data = {}
        problems: list[Problem] = []
        unknown_values = None
        attr = block.attr("values")
        if attr is not None:
            items = ctx.evaluate(attr.expr)
            if isinstance(items, str) and _wholly_unknown(items):
                unknown_values = next((f"{n}: {w}" for n, w in ctx.unknown.items()), "`values`")
            if isinstance(items, list):
                for k, item in enumerate(items):
                    if isinstance(item, str) and _wholly_unknown(item):
                        unknown_values = unknown_values or next(
                            (f"{n}: {w}" for n, w in ctx.unknown.items()), f"values[{k}]")
                    if isinstance(item, YamlMap):
                        _merge(merged, item)
                    elif isinstance(item, str) and not _wholly_unknown(item):
                        expr = attr.expr.items[k] if isinstance(attr.expr, hcl.TupleExpr) and \
                            k < len(attr.expr.items) else attr.expr
                        for data, file, _lines in self._yaml(item, hcl.Attribute("values", expr, expr.line,
                                                                                 expr.col), ctx):
                            if file != self.display:
                                _flatten_positions(data, expr.line, expr.col)
                            if isinstance(data, YamlMap):
                                _merge(merged, data)
        sets: list[tuple[Any, Any, Any, str]] = []  # (name, value, type, kind) expressions
        for kind in ("set", "set_sensitive", "set_list"):
            for sblock in block.blocks(kind):
                sets.append((sblock.attr("name"), sblock.attr("value"), sblock.attr("type"), kind))
            listed = block.attr(kind)
            if listed is not None and isinstance(listed.expr, hcl.TupleExpr):
                for item in listed.expr.items:
                    if isinstance(item, hcl.ObjectExpr):
                        fields = {i.bare: i for i in item.items if i.bare}
                        sets.append(tuple(_AttrOf(fields.get(n)) if fields.get(n) else None
                                          for n in ("name", "value", "type")) + (kind,))
        padding = [MAX_PADDING]
        for k, (name_attr, value_attr, type_attr, kind) in enumerate(sets):
            if k >= MAX_SET_ITEMS:
                break
            if name_attr is None or value_attr is None:
                continue
            name = ctx.evaluate(name_attr.expr)
            if not isinstance(name, str) or is_unknown(name):
                continue
            value = ctx.evaluate(value_attr.expr, (value_attr.expr.line, value_attr.expr.col)
                                 if _from_elsewhere(value_attr.expr, ctx) else None)
            typed = ctx.evaluate(type_attr.expr) if type_attr is not None else None
            if kind == "set_list":
                if not isinstance(value, list):
                    continue
            elif typed != "string" and not isinstance(value, (YamlMap, YamlSeq)):
                value = _strval(value)
            elif isinstance(value, (int, float, bool)) or value is None:
                value = _text_of(value)
            _set_path(merged, name, value, (value_attr.expr.line, value_attr.expr.col), padding)
        return merged, problems, unknown_values


def _wholly_unknown(text: str) -> bool:
    """A text that is one unknown value as a whole (YAML with an unknown value in it is read, the value unknown)."""
    return isinstance(text, Unknown) or re.fullmatch("\\s*\u2983_*\u2984\\s*", text) is not None


def _scope_map(values: dict) -> YamlMap:
    out = YamlMap(values)
    out.lc = LineCol(0, 0)
    out.lc.data = {}
    return out


class _AttrOf:
    """An object item of a provider 3.x `set = [{ name = ..., value = ... }]` list, as a block's attribute."""

    def __init__(self, item: hcl.ObjectItem) -> None:
        self.expr = item.value


def _from_elsewhere(expr: hcl.Expr, ctx: Context) -> bool:
    return isinstance(expr, hcl.Ref)


def _text(ctx: Context, attr: hcl.Attribute | None) -> str | None:
    if attr is None:
        return None
    value = ctx.evaluate(attr.expr)
    return str(value) if isinstance(value, str) else None


def _text_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _strval(value: Any) -> Any:
    """A `--set` value as Helm's strvals types it: true/false, null, an integer, else the text."""
    if isinstance(value, bool) or value is None or is_unknown(value):
        return value
    text = _text_of(value) if not isinstance(value, str) else str(value)
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if re.fullmatch(r"[-+]?(?:0|[1-9][0-9]*)", text) and len(text) < 19:
        return int(text)
    return text


_SET_PART = re.compile(r"((?:\\.|[^.\[\\])+)((?:\[[0-9]+\])*)")


def _split_set_name(name: str) -> list[Any] | None:
    """`a.b\\.c[0].d` as ["a", "b.c", 0, "d"] (Helm's strvals key syntax), or None."""
    out: list[Any] = []
    pos = 0
    while pos < len(name):
        m = _SET_PART.match(name, pos)
        if m is None:
            return None
        out.append(re.sub(r"\\(.)", r"\1", m.group(1)))
        out.extend(int(i) for i in re.findall(r"\[([0-9]+)\]", m.group(2)))
        pos = m.end()
        if pos < len(name):
            if name[pos] != ".":
                return None
            pos += 1
    return out if out and all(isinstance(p, int) and p < 1000 or isinstance(p, str) for p in out) else None


def _set_path(root: YamlMap, name: str, value: Any, at: tuple[int, int], padding: list[int]) -> None:
    parts = _split_set_name(name)
    if parts is None or not isinstance(parts[0], str):
        return
    node: Any = root
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        nxt = None if last else parts[k + 1]
        if isinstance(part, str):
            if not isinstance(node, dict):
                return
            if last:
                node[part] = value
                _entry(node)[part] = [at[0], at[1], at[0], at[1]]
                return
            child = node.get(part)
            want_seq = isinstance(nxt, int)
            if not isinstance(child, YamlSeq if want_seq else YamlMap):
                child = _new(YamlSeq if want_seq else YamlMap, at)
                node[part] = child
                _entry(node)[part] = [at[0], at[1], at[0], at[1]]
            node = child
        else:
            if not isinstance(node, list):
                return
            if part >= len(node):
                padding[0] -= part + 1 - len(node)
                if padding[0] < 0:
                    return  # past vramlint's bound on the nulls `set` indexes add: not applied
            while len(node) <= part:  # Helm pads a list with nulls up to the index
                _entry(node)[len(node)] = [at[0], at[1]]
                node.append(None)
            if last:
                node[part] = value
                _entry(node)[part] = [at[0], at[1]]
                return
            child = node[part]
            want_seq = isinstance(nxt, int)
            if not isinstance(child, YamlSeq if want_seq else YamlMap):
                child = _new(YamlSeq if want_seq else YamlMap, at)
                node[part] = child
                _entry(node)[part] = [at[0], at[1]]
            node = child


def _new(cls: Any, at: tuple[int, int]) -> Any:
    node = cls()
    node.lc = LineCol(*at)
    node.lc.data = {}
    return node


def _entry(node: Any) -> dict:
    lc = getattr(node, "lc", None)
    if lc is None:
        node.lc = lc = LineCol(0, 0)
    if lc.data is None:
        lc.data = {}
    return lc.data


def _merge(into: YamlMap, other: Any, depth: int = 0) -> None:
    """``other`` over ``into`` as Helm coalesces a later values file: maps merge, anything else replaces, null
    deletes."""
    if not isinstance(other, dict) or depth > 100:
        return
    src = getattr(getattr(other, "lc", None), "data", None) or {}
    for key, value in other.items():
        if value is None:
            into.pop(key, None)
            _entry(into).pop(key, None)
            continue
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value, depth + 1)
            continue
        into[key] = value
        if key in src:
            _entry(into)[key] = list(src[key])


def _flatten_positions(node: Any, line: int, col: int, depth: int = 0) -> None:
    """Every position under ``node`` moved to one place (values read from another file, merged into the release's
    values: their findings land on the `file()` that reads them)."""
    if depth > 100:
        return
    lc = getattr(node, "lc", None)
    if lc is not None:
        lc.line, lc.col = line, col
        for key, entry in (lc.data or {}).items():
            lc.data[key] = [line, col] * (len(entry) // 2)
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        if isinstance(child, (dict, list)):
            _flatten_positions(child, line, col, depth + 1)


def _plain_with_origins(values: YamlMap, file: str) -> tuple[dict, dict[tuple, Location]]:
    """The values as a chart's values (plain data) and where each key path was written (`vramlint.helm.values`)."""
    from vramlint.yamlload import join_path

    origins: dict[tuple, Location] = {}

    def plain(node: Any, path: tuple, ypath: str, depth: int) -> Any:
        if depth > 100:
            return None
        entries = getattr(getattr(node, "lc", None), "data", None) or {}
        if isinstance(node, dict):
            out = {}
            for k, v in node.items():
                e = entries.get(k)
                kp = join_path(ypath, k)
                if e is not None:
                    line, col = (e[2], e[3]) if len(e) >= 4 and not isinstance(v, (dict, list)) else (e[0], e[1])
                    origins[path + (str(k),)] = Location(file, line + 1, col + 1, yaml_path=kp)
                out[str(k)] = plain(v, path + (str(k),), kp, depth + 1)
            return out
        if isinstance(node, list):
            out_list = []
            for i, v in enumerate(node):
                e = entries.get(i)
                kp = join_path(ypath, i)
                if e is not None:
                    origins[path + (i,)] = Location(file, e[0] + 1, e[1] + 1, yaml_path=kp)
                out_list.append(plain(v, path + (i,), kp, depth + 1))
            return out_list
        if isinstance(node, str):
            return str(node)
        return node

    return plain(values, (), "", 0), origins


def _camel(name: str) -> str:
    known = _NAMES.get(name)
    if known is not None:
        return known
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _server_lines(server: Server, file: str) -> set[int] | None:
    """The 0-based lines of ``file`` a server's settings were read from (its image, model, arguments, variables,
    GPUs); None when none was read from it (a chart's template wrote them: what the release gives is all said)."""
    locations = [server.image_location, server.model_location, server.opaque_args]
    locations += list(server.arg_locations.values()) + list(server.env_locations.values())
    gpu = server.gpu
    if gpu is not None:
        locations.append(getattr(gpu, "location", None))
    lines = {loc.line - 1 for loc in locations if isinstance(loc, Location) and loc.line and loc.file == file}
    return lines or None


# What plainly says vLLM runs (as extract.mentions says of YAML), in HCL's `key = value` or a heredoc's YAML: a vLLM
# image, a vLLM command line, an engine setting naming vLLM, a chart whose name says vLLM; not prose (a comment, a
# description) nor a client's URL
_COMMAND = re.compile(r"(?<![\w/.-])(vllm\s+serve\b|-m\s+vllm\.entrypoints\.[\w.]+|vllm\.entrypoints\.openai\.api_server)")
_IMAGE = re.compile(r"\b(image|repository|image_name|imageName)\b\s*[=:]\s*[\"']?[^\s\"',]*vllm", re.I)
_REFERENCE = re.compile(r"[\"'\s=:][a-z0-9._/-]*vllm[a-z0-9._-]*(?:/[a-z0-9._-]+)*:[\w][\w.-]*[\"'\s,]", re.I)
_ENGINE = re.compile(r"\b(engine|backend|runtime|framework|chart)\b\s*[=:]\s*[\"']?[\w./-]*vllm", re.I)


_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S*", re.I)


def plain_mention(line: str) -> bool:
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", "//", "/*", "*")) or "vllm" not in stripped.lower():
        return False
    line = _URL.sub(" ", line)  # a client's endpoint (`http://vllm-router:8000`) runs no vLLM here
    return bool(_COMMAND.search(line) or _IMAGE.search(line) or _REFERENCE.search(" " + line + " ")
                or _ENGINE.search(line))


def _mentions(lines: list[str], block: hcl.Block) -> bool:
    end = block.end_line if block.end_line >= block.line else len(lines) - 1
    return any(plain_mention(line) for line in lines[block.line:end + 1])


def _module_outside(block: hcl.Block, folder: str, display: str) -> Problem | None:
    """A `module` block whose local source (`./`, `../` or an absolute path, as Terraform takes a local path) is a
    folder outside the scanned tree: said on its line, never read (its resources and its files stay unknown)."""
    from vramlint.fsread import outside_reason

    source = block.attr("source")
    if source is None or not isinstance(source.expr, hcl.Template) or len(source.expr.parts) != 1 or \
            not isinstance(source.expr.parts[0], str):
        return None
    text = source.expr.parts[0]
    if not text.startswith(("./", "../", "/")) and text not in (".", ".."):
        return None  # a registry, git or other remote source: fetched by `terraform init`, never read here
    full = os.path.normpath(os.path.join(folder, text))
    why = outside_reason(full)
    if why is None:
        return None
    from vramlint.discover import display_path

    name = ".".join(block.labels) or "?"
    return Problem(display, source.expr.line + 1, source.expr.col + 1, (
        f"module {name}: its source {text} is {why}: not read, so what it deploys is not checked (scan a folder "
        "that holds it)"), level="note", outside_link=display_path(full))


def _no_server_reason(body: list[Any], lines: list[str], reader: _Reader, module: Module) -> tuple[int, str] | None:
    """Why a Terraform file that names vLLM gave no server (line, reason), or None when it does not name vLLM."""
    if reader.unread:
        line, why = reader.unread[0]
        more = f" ({len(reader.unread) - 1} more resources like it)" if len(reader.unread) > 1 else ""
        return line, why + more
    owner = None
    for k, line in enumerate(lines):
        if not plain_mention(line):
            continue
        owner = next((b for b in body if isinstance(b, hcl.Block) and b.line <= k <= b.end_line), None)
        # a module's values are read where a resource of the module uses them (and said there if unknown)
        if owner is not None and owner.type not in ("variable", "locals", "output", "terraform"):
            break
        owner = None
    if owner is None:
        return None
    what = f"{owner.type} " + ".".join(owner.labels) if owner.labels else owner.type
    if owner.type == "module":
        source = owner.attr("source")
        src = source.expr if source is not None else None
        text = "".join(p for p in src.parts if isinstance(p, str)) if isinstance(src, hcl.Template) else "?"
        return owner.line + 1, (f"{what} names vLLM, but vramlint does not read the resources of a module "
                                f"(source {text}) through its call: scan the module's own folder to check it")
    if owner.type == "resource" and owner.labels:
        return owner.line + 1, (f"{what} names vLLM, but vramlint does not read {owner.labels[0]} resources "
                                "(it reads kubernetes_deployment / stateful_set / pod / job, kubectl_manifest, "
                                "kubernetes_manifest, helm_release and the start-up scripts of Compute Engine, EC2 "
                                "and Azure VMs): its vLLM server is not checked")
    return owner.line + 1, f"{what} names vLLM, but no vLLM server is read from it"
