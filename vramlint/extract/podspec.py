"""The shared PodSpec reading: find pod specs in any object, read each container (command/args, image, env,
resources and accelerator requests, volumes and mounts, /dev/shm, node selectors and affinity, annotations),
and keep where every setting was written.

Every Kubernetes extractor imports this module and it imports none of them: `kubernetes` (plain workloads and
the dispatch of objects to operators through `registry`) and the operator modules (KServe, KubeAI, KAITO,
llmaz, Kthena, Ray, ...). The walk is bounded (node budget, depth, visited set), so an alias bomb costs at most
MAX_NODES_WALKED steps.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any

from vramlint.extract.records import EnvRef, Records
from vramlint.gpus import NODE_LABELS
from vramlint.lean_dataclass import dataclass
from vramlint.model import GpuRequest, Location, Problem, Server
from vramlint.versions import version_from_image
from vramlint.yamlload import (
    MAX_DEPTH,
    MAX_NODES_WALKED,
    has_template_marker,
    join_path,
    key_location,
    node_location,
    value_location,
)

IGNORE_ANNOTATION = "vramlint.dev/ignore"

# Resource names of accelerators other than NVIDIA GPUs: recognised so they are never counted as NVIDIA, with the
# accelerator the name itself says (the device plugins' resource names: habana.ai/gaudi is Intel's Gaudi plugin,
# gpu.intel.com/i915 and /xe its GPU plugin, named by kernel driver, aws.amazon.com/neuron* the Neuron plugin, whose
# devices are Trainium or Inferentia chips); None when the name says
# only the vendor (amd.com/gpu: any Instinct or Radeon; google.com/tpu: the node label says which TPU).
_VENDOR_RESOURCES = (
    (re.compile(r"^amd\.com/gpu$"), "amd", None),
    (re.compile(r"^habana\.ai/gaudi$"), "intel-gaudi", "Gaudi"),
    (re.compile(r"^gpu\.intel\.com/(i915|xe)$"), "intel-gpu", None),
    (re.compile(r"^google\.com/tpu$"), "google-tpu", None),
    (re.compile(r"^aws\.amazon\.com/neuron(core|device)?$"), "aws-neuron", "Neuron"),
    (re.compile(r"^huawei\.com/ascend", re.IGNORECASE), "huawei-ascend", None),
    # Rebellions' device plugin (rbln-k8s-device-plugin): ATOM and REBEL NPUs by family, or rebellions.ai/npu when
    # it runs with use-generic-resource-name
    (re.compile(r"^rebellions\.ai/ATOM$"), "rebellions", "ATOM"),
    (re.compile(r"^rebellions\.ai/REBEL$"), "rebellions", "REBEL"),
    (re.compile(r"^rebellions\.ai/npu$"), "rebellions", None),
)
# The accelerator names above that say only the family (habana.ai/gaudi: any Gaudi; aws.amazon.com/neuron: any
# Trainium or Inferentia): a node label or a NodePool may still name the chip
FAMILY_ONLY = frozenset(("Gaudi", "Neuron"))
_NVIDIA_GPU = re.compile(r"^nvidia\.com/gpu(\.shared)?$")
_NVIDIA_MIG = re.compile(r"^nvidia\.com/mig-(\d+g\.\d+gb(?:\+me)?)$")

# Node labels that name the GPU model (or imply it: instance types, GPU Feature Discovery's memory): the table
# and how each value is read live with the GPU catalog (vramlint.gpus.NODE_LABELS, node_label_hint).
GPU_PRODUCT_LABELS = NODE_LABELS


# --- small YAML helpers -------------------------------------------------------------------------------


def is_map(node: Any) -> bool:
    return isinstance(node, dict)


def is_seq(node: Any) -> bool:
    return isinstance(node, list)


def scalar_text(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def is_block_scalar(value: Any) -> bool:
    # by name: yamlload's block strings and ruamel's (a file ruamel read) have the same names
    return isinstance(value, str) and type(value).__name__ in ("LiteralScalarString", "FoldedScalarString")


def tokens_from(file: str, node: Any, key: str, path: str, lines: list[str] | None = None) -> list[Any]:
    """Command words from ``node[key]``: a list (one token per item) or a shell string (split).

    A word holding a template expression (see vramlint.helm.templated.neutralize) is unknown: its text is None.
    """
    from vramlint.cmdline import Token, plain_words, split_shell, yaml_token

    value = node.get(key) if is_map(node) else None
    if value is None:
        return []
    kpath = join_path(path, key)
    if is_seq(value):
        out = []
        lc = getattr(value, "lc", None)
        positions = lc.data if lc is not None and isinstance(getattr(lc, "data", None), dict) else {}
        for i, item in enumerate(value):
            if isinstance(item, (dict, list)):
                out.append(Token(None, value_location(file, value, i, join_path(kpath, i))))
                continue
            at = positions.get(i) if type(item) is str and "\n" not in item else None
            if at is not None and lines is not None and at[0] < len(lines):
                # yaml_token for a one-line plain string item, inlined: an argument list of 100,000 items
                first = lines[at[0]][at[1]:at[1] + 1]
                if first not in ("|", ">"):
                    line, column = at[0] + 1, at[1] + 1
                    out.append(Token(item, Location(file, line, column, line, column + len(item),
                                                    yaml_path=f"{kpath}[{i}]"), lines=lines,
                                     quoted=first in ("'", '"')))
                    continue
            out.append(yaml_token(file, value, i, join_path(kpath, i), lines))
        if plain_words(out):
            return out
        return [_unknown_if_template(_go_marked(t)) for t in out]
    if isinstance(value, (dict, list)):
        return []
    tok = _go_marked(yaml_token(file, node, key, kpath, lines))
    if tok.text is None:
        return []
    words = split_shell(tok.text, tok.location, block=tok.block is not None, indent=tok.indent, lines=lines,
                        folded=tok.block == ">", quoted=tok.quoted)
    return [_unknown_if_template(t) for t in words]


def _go_marked(tok: Any, keep_name: bool = True) -> Any:
    """Go template actions left in a valid-YAML manifest (a chart template or an operator's config template)."""
    if tok.text is None or "{{" not in tok.text:
        return tok
    from vramlint.cmdline import mark_go_templates

    marked = mark_go_templates(tok.text, keep_name=keep_name)
    if marked == tok.text:
        return tok
    from dataclasses import replace

    return replace(tok, text=marked)


def _unknown_if_template(tok: Any) -> Any:
    if not has_template_marker(tok.text):
        return tok
    flag, eq, _ = (tok.text or "").partition("=")
    if eq and flag.startswith("-") and not has_template_marker(flag):
        return tok  # `--max-model-len={{ .Values.x }}`: the option is set, its value unknown (cmdline says so)
    if " " in tok.text or "\n" in tok.text or "\t" in tok.text:
        return tok  # a `sh -c` script: only the words holding a marker are unknown (cmdline splits it)
    if has_template_marker(tok.text):
        from dataclasses import replace

        return replace(tok, text=None)
    return tok


def to_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip().strip("'\""))
        except ValueError:
            return None
    return None


# --- GPU hints -------------------------------------------------------------------------------------------


def _gpus_module():
    gpus = _GPUS[0]
    if gpus is None:
        try:
            from vramlint import gpus
        except ImportError:
            return None
        _GPUS[0] = gpus  # (asked a few times a container: `from vramlint import` of a package costs a call)
    return gpus


_GPUS: list[Any] = [None]


def resolve_gpu_hint(text: str) -> str | None:
    gpus = _gpus_module()
    if gpus is None or not text:
        return None
    try:
        return gpus.resolve_hint(text)
    except Exception:  # noqa: BLE001 - a catalog bug must not stop extraction
        return None


def resolve_instance_type(name: str) -> tuple[str, int] | None:
    gpus = _gpus_module()
    if gpus is None or not name:
        return None
    try:
        return gpus.instance_type(name)
    except Exception:  # noqa: BLE001
        return None


def resolve_instance_memory(name: str) -> float | None:
    """GiB of the GPU share a partial-GPU instance gets (Azure NVads A10 v5), None for whole GPUs."""
    gpus = _gpus_module()
    if gpus is None or not name:
        return None
    try:
        return gpus.instance_memory_gib(name)
    except Exception:  # noqa: BLE001
        return None


def resolve_mig(resource: str) -> tuple[str | None, float] | None:
    gpus = _gpus_module()
    if gpus is None:
        return None
    try:
        return gpus.mig_profile(resource)
    except Exception:  # noqa: BLE001
        return None


def gpu_from_resources(file: str, container: Any, path: str) -> GpuRequest | None:
    """Accelerator counts from ``resources.limits`` (or ``requests``): NVIDIA, MIG slices, other vendors."""
    resources = container.get("resources") if is_map(container) else None
    if not is_map(resources):
        return None
    rpath = join_path(path, "resources")
    for section in ("limits", "requests"):
        block = resources.get(section)
        if not is_map(block):
            continue
        spath = join_path(rpath, section)
        for name, value in block.items():
            if not isinstance(name, str):
                continue
            loc = value_location(file, block, name, join_path(spath, name))
            count = to_int(value)
            evidence = f"resources.{section} {name}: {scalar_text(value)}"
            if _NVIDIA_GPU.match(name):
                req = GpuRequest(count=count, evidence=evidence, location=loc, count_location=loc)
                if name.endswith(".shared"):
                    req.shared_key = "time-sliced"
                return req
            mig = _NVIDIA_MIG.match(name)
            if mig:
                profile = mig.group(1)
                resolved = resolve_mig(name)
                req = GpuRequest(count=count, evidence=evidence, location=loc, mig_profile=profile, count_location=loc)
                if resolved is not None:
                    req.type, req.memory_gib = resolved[0], resolved[1]
                return req
            for pattern, vendor, accelerator in _VENDOR_RESOURCES:
                if pattern.match(name):
                    return GpuRequest(type=accelerator, count=count, evidence=evidence, location=loc, vendor=vendor,
                                      count_location=loc)
    return None



def gpu_from_count_key(file: str, mapping: Any, key: str, path: str, resource_name: str | None,
                       evidence: str) -> GpuRequest | None:
    """A GPU count an operator's resource writes under ``mapping[key]`` (``gpu: 2`` beside a ``gpuType``): read as
    a container's ``resources.limits`` of ``resource_name`` (vendor resources, MIG slices), placed on that key."""
    resource_name = resource_name or "nvidia.com/gpu"
    request = gpu_from_resources(file, {"resources": {"limits": {resource_name: mapping.get(key)}}}, path)
    if request is not None:
        request.location = request.count_location = value_location(file, mapping, key, join_path(path, key))
        request.evidence = f"{evidence} ({resource_name})"
    return request

def _label_keys() -> tuple[str, ...]:
    """Node labels that say the GPU: the catalog's, and those the configuration's custom GPUs declare."""
    gpus = _gpus_module()
    return gpus.node_label_keys() if gpus is not None else GPU_PRODUCT_LABELS


def _hint_from_label(key: str, value: str, labels: dict | None = None) -> tuple[str | None, int | None, str, float | None]:
    """(GPU type, GPUs per node, vendor, memory GiB) from one node label (vramlint.gpus.node_label_hint)."""
    gpus = _gpus_module()
    try:
        hint = gpus.node_label_hint(key, value, labels) if gpus is not None else None
    except Exception:  # noqa: BLE001 - a catalog bug must not stop extraction
        hint = None
    return hint if hint is not None else (None, None, "nvidia", None)


# A label key written as a placeholder that a step before `kubectl apply` fills in: Mustache (`{{{PREFIX}}}/x`,
# `{{PREFIX}}/x`), a Go template action (`{{ .Values.x }}/y`), or what the template pass marked. Kubernetes would
# refuse such a key as it is (a label key's prefix is a DNS subdomain), so the file is not applied as written:
# which label the pods select, and the GPU of the nodes that carry it, are known only once it is filled in.
_TEMPLATED_KEY = re.compile(r"\{\{.*?\}\}|\$\{[^}]*\}")


def templated_label_key(key: Any) -> bool:
    return isinstance(key, str) and (bool(_TEMPLATED_KEY.search(key)) or has_template_marker(key))


def _templated_selection(file: str, podspec: Any, path: str) -> tuple[str, Location | None] | None:
    """The first nodeSelector key or required node-affinity key written as a placeholder: (what it says, where)."""
    selector = podspec.get("nodeSelector")
    if is_map(selector):
        for key, value in list(selector.items())[:100]:
            if templated_label_key(key):
                return (f"nodeSelector {key}={scalar_text(value) or ''}",
                        value_location(file, selector, key, join_path(join_path(path, "nodeSelector"), key)))
    affinity = podspec.get("affinity")
    node_aff = affinity.get("nodeAffinity") if is_map(affinity) else None
    required = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution") if is_map(node_aff) else None
    terms = required.get("nodeSelectorTerms") if is_map(required) else None
    for term in terms[:50] if is_seq(terms) else []:
        exprs = term.get("matchExpressions") if is_map(term) else None
        for expr in exprs[:100] if is_seq(exprs) else []:
            if is_map(expr) and templated_label_key(expr.get("key")):
                values = [scalar_text(v) or "" for v in expr.get("values") or []] if is_seq(expr.get("values")) else []
                return (f"node affinity {expr.get('key')} {scalar_text(expr.get('operator')) or ''} [{', '.join(values)}]",
                        value_location(file, expr, "key", path))
    return None


def gpu_from_scheduling(file: str, podspec: Any, path: str) -> GpuRequest | None:
    """GPU model named by nodeSelector or required node affinity on a GPU product label; when none does and a
    label key is a placeholder, a request that says so (the GPU it selects is not known until filled in)."""
    if not is_map(podspec):
        return None
    found = _gpu_from_scheduling(file, podspec, path)
    if found is not None:
        return found
    templated = _templated_selection(file, podspec, path)
    if templated is None:
        return None
    said, where = templated
    return GpuRequest(type=None, evidence=f"{said} (the label key is a template placeholder, filled in before the "
                      "manifest is applied: which nodes it selects, and their GPU, are not known until then)",
                      location=where)


def _gpu_from_scheduling(file: str, podspec: Any, path: str) -> GpuRequest | None:
    selector = podspec.get("nodeSelector")
    if is_map(selector):
        labels = {str(k): scalar_text(v) for k, v in selector.items() if scalar_text(v)}
        for key in _label_keys():
            if key in selector:
                value = scalar_text(selector.get(key))
                if not value:
                    continue
                gpu_type, per_node, vendor, share = _hint_from_label(key, value, labels)
                if gpu_type is None and share is None:
                    continue  # an instance type or family that is not a GPU vramlint knows: other labels may say
                loc = value_location(file, selector, key, join_path(join_path(path, "nodeSelector"), key))
                evidence = f"nodeSelector {key}: {value}"
                if key == "nvidia.com/gpu.memory":
                    family = labels.get("nvidia.com/gpu.family")
                    evidence += f" MiB{f', nvidia.com/gpu.family: {family}' if family else ''}"
                    if gpu_type is None:
                        evidence += f" (the GPU model is not named: {share:g} GiB, compute capability not known)"
                        return GpuRequest(type=None, evidence=evidence, location=loc, vendor=vendor, memory_gib=share)
                elif share is not None:
                    evidence += f" (part of one {gpu_type}: {share:g} GiB)"
                elif per_node:
                    evidence += f" ({per_node} x {gpu_type} per node)"
                return GpuRequest(type=gpu_type, evidence=evidence, location=loc, vendor=vendor, memory_gib=share)
    affinity = podspec.get("affinity")
    node_aff = affinity.get("nodeAffinity") if is_map(affinity) else None
    required = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution") if is_map(node_aff) else None
    terms = required.get("nodeSelectorTerms") if is_map(required) else None
    if is_seq(terms):
        tpath = join_path(path, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")
        found = gpu_from_selector_terms(file, terms, tpath)
        if found is not None:
            return found
    return None


def gpu_from_selector_terms(file: str, terms: Any, tpath: str) -> GpuRequest | None:
    if not is_seq(terms):
        return None
    for ti, term in enumerate(terms):
        exprs = term.get("matchExpressions") if is_map(term) else None
        if not is_seq(exprs):
            continue
        for ei, expr in enumerate(exprs):
            if not is_map(expr) or expr.get("key") not in _label_keys():
                continue
            if str(expr.get("operator", "")) != "In" or not is_seq(expr.get("values")):
                continue
            values = [scalar_text(v) for v in expr["values"] if scalar_text(v)]
            if not values:
                continue
            key = expr["key"]
            hints = [_hint_from_label(key, v) for v in values]
            if all(h[0] is None and h[3] is None for h in hints):
                continue  # no value names a GPU (an instance type without one, a hand-made label): no evidence
            types = {h[0] for h in hints}
            fleet = list(dict.fromkeys(h[0] for h in hints if h[0]))
            epath = join_path(join_path(join_path(join_path(tpath, ti), "matchExpressions"), ei), "values")
            loc = value_location(file, expr["values"], 0, join_path(epath, 0))
            share = None
            if len(types) == 1 and None not in types:
                gpu_type = hints[0][0]
                evidence = f"node affinity {key} In [{', '.join(values)}]"
                if key.endswith("instance-type"):
                    # partial-GPU sizes: the smallest share any of the sizes gets (never budget more than it has)
                    shares = [resolve_instance_memory(v) for v in values]
                    if any(x is not None for x in shares):
                        share = min(x for x in shares if x is not None)
                        evidence += f" (part of one {gpu_type}: {share:g} GiB)"
            else:
                gpu_type = None
                evidence = f"node affinity {key} In [{', '.join(values)}] (several GPU models: the pods may land on any)"
            request = GpuRequest(type=gpu_type, evidence=evidence, location=loc, vendor=hints[0][2], memory_gib=share)
            if gpu_type is None and None not in types and len(fleet) > 1:
                request.fleet = fleet  # the budget is computed on each
            return request
    return None


# --- the devices the engine sees among those the container is given ---------------------------------------

# Per vendor, the variables that pick, in order, among the devices the container has (numbered from 0 inside it):
# CUDA_VISIBLE_DEVICES for CUDA (torch.cuda.device_count(), which vLLM's CUDA platform counts); on ROCm,
# ROCR_VISIBLE_DEVICES first (the ROCr runtime), then HIP_VISIBLE_DEVICES, or CUDA_VISIBLE_DEVICES which vLLM's
# platforms/rocm.py keeps equal to it; Level Zero's ZE_AFFINITY_MASK on Intel GPUs (a `0.1` tile entry still
# shows its root device). NVIDIA_VISIBLE_DEVICES is not among them: in a pod the device plugin sets it to the
# devices it allocated, and the container has those devices and no others.
_VISIBLE_DEVICE_VARIABLES = {
    "nvidia": (("CUDA_VISIBLE_DEVICES",),),
    "amd": (("ROCR_VISIBLE_DEVICES",), ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")),
    "intel-gpu": (("ZE_AFFINITY_MASK",),),
}
VISIBLE_DEVICE_NAMES = frozenset(n for steps in _VISIBLE_DEVICE_VARIABLES.values() for names in steps for n in names)
_DEVICE_INDEX_LIST = re.compile(r"\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*")


def narrow_to_visible_devices(gpu: GpuRequest | None, env: dict[str, str | None],
                              env_locations: dict[str, Location]) -> None:
    """The devices the engine sees when the container's environment picks among those it is given
    (`nvidia.com/gpu: 4` with CUDA_VISIBLE_DEVICES=0,1: vLLM counts 2). Indices count the container's own
    devices from 0; CUDA (and HIP) stop at the first index that is not a device, so only those before it are
    seen. A value set where the pod runs (valueFrom), empty, a `$(VAR)` reference, device UUIDs or an index the
    runtime may not take leaves the count unknown, said in the evidence."""
    if gpu is None or gpu.count is None or gpu.mig_profile is not None:
        return
    for names in _VISIBLE_DEVICE_VARIABLES.get(gpu.vendor, ()):
        name = next((n for n in names if n in env), None)
        if name is None:
            continue
        value, given = env[name], gpu.count
        location = env_locations.get(name)
        text = (value or "").strip()
        if not _DEVICE_INDEX_LIST.fullmatch(text):
            why = "set where the pod runs" if value is None else "empty" if not text else "not a list of device indices"
            gpu.evidence = f"{gpu.evidence}; {name} {why}: which of the {given} devices vLLM sees is not known"
            gpu.count = None
            return
        roots = [entry.split(".", 1)[0].strip() for entry in text.split(",")]
        if name == "ZE_AFFINITY_MASK":
            roots = list(dict.fromkeys(roots))  # one root device per tile entry
        if len(set(roots)) < len(roots):
            gpu.evidence = f"{gpu.evidence}; {name}={text} names a device twice: which devices vLLM sees is not known"
            gpu.count = None
            return
        seen = []
        for index in roots:
            if int(index) >= given:
                break
            seen.append(index)
        if len(seen) < len(roots) and name in ("ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"):
            gpu.evidence = (f"{gpu.evidence}; {name}={text} names a device the container does not have (it has "
                            f"{given}): which devices vLLM sees is not known")
            gpu.count = None
            return
        if len(seen) == given:
            continue  # every device the container has: nothing narrowed
        gpu.count = len(seen)
        gpu.visible_from = (name, given if gpu.visible_from is None else gpu.visible_from[1])
        gpu.evidence = f"{gpu.evidence}; {name}={text} (vLLM sees {len(seen)} of the {given} devices)"
        if location is not None:
            gpu.count_location = location  # the line that says how many the engine gets


# --- the nodes a pod selects (joined with node pools by vramlint.extract.node_pools) ----------------------


@dataclass
class Requirement:
    """One node selector requirement (a matchExpressions entry, a NodePool requirement)."""

    key: str
    operator: str
    values: list[str]
    location: Location | None  # of the first value, or of the requirement


@dataclass
class NodeSelection:
    """What a pod says about the nodes it may run on (plain data: it crosses process boundaries)."""

    selector: dict[str, str] = field(default_factory=dict)
    terms: list[list[Requirement]] = field(default_factory=list)  # required affinity: one term must match
    tolerations: list[tuple[str | None, str, str | None, str | None]] = field(default_factory=list)
    evidence: str = ""


def read_requirements(file: str, exprs: Any, path: str) -> list[Requirement]:
    """matchExpressions-shaped requirements (key, operator, values), bounded."""
    out = []
    if not is_seq(exprs):
        return out
    for i, expr in enumerate(exprs[:200]):
        if not is_map(expr) or scalar_text(expr.get("key")) is None:
            continue
        values = expr.get("values")
        vals = [t for t in (scalar_text(v) for v in values[:500]) if t] if is_seq(values) else []
        epath = join_path(path, i)
        loc = (value_location(file, values, 0, join_path(join_path(epath, "values"), 0)) if vals else None) \
            or node_location(file, expr, epath)
        out.append(Requirement(scalar_text(expr.get("key")) or "", scalar_text(expr.get("operator")) or "", vals, loc))
    return out


def read_node_selection(file: str, podspec: Any, path: str) -> NodeSelection | None:
    """The pod's nodeSelector, required node affinity and tolerations; None when it selects no nodes at all."""
    if not is_map(podspec):
        return None
    if _templated_selection(file, podspec, path) is not None:
        return None  # a label the pods select is not known: which NodePool gives their nodes is not either
    out = NodeSelection()
    selector = podspec.get("nodeSelector")
    if is_map(selector):
        out.selector = {str(k): scalar_text(v) or "" for k, v in list(selector.items())[:100]}
    affinity = podspec.get("affinity")
    node_aff = affinity.get("nodeAffinity") if is_map(affinity) else None
    required = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution") if is_map(node_aff) else None
    terms = required.get("nodeSelectorTerms") if is_map(required) else None
    tpath = join_path(path, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")
    if is_seq(terms):
        for ti, term in enumerate(terms[:50]):
            exprs = term.get("matchExpressions") if is_map(term) else None
            reqs = read_requirements(file, exprs, join_path(join_path(tpath, ti), "matchExpressions"))
            if reqs:
                out.terms.append(reqs)
    if not out.selector and not out.terms:
        return None
    tolerations = podspec.get("tolerations")
    if is_seq(tolerations):
        for t in tolerations[:100]:
            if is_map(t):
                out.tolerations.append((scalar_text(t.get("key")), scalar_text(t.get("operator")) or "Equal",
                                        scalar_text(t.get("value")), scalar_text(t.get("effect"))))
    shown = [f"{k}: {v}" for k, v in out.selector.items()]
    if out.selector:
        out.evidence = f"nodeSelector {', '.join(shown[:3])}{' ...' if len(shown) > 3 else ''}"
    else:
        out.evidence = "required node affinity"
    return out


def with_node_selection(gpu: GpuRequest | None, file: str, podspec: Any, path: str) -> None:
    """Keep on a GPU request whose model is not said the nodes the pod selects: the NodePool that gives those
    nodes may say it (joined once every scanned file is read: `vramlint.extract.node_pools`)."""
    if gpu is None or (gpu.type is not None and gpu.type not in FAMILY_ONLY) or gpu.fleet \
            or gpu.memory_gib is not None:
        return
    gpu.node_selection = read_node_selection(file, podspec, path)


def combine_gpu(resources: GpuRequest | None, scheduling: GpuRequest | None) -> GpuRequest | None:
    """The container's count and vendor with the pod's GPU model."""
    if resources is None:
        return scheduling
    if scheduling is None:
        return resources
    if resources.vendor != "nvidia" and scheduling.vendor == "nvidia" and scheduling.type:
        # A TPU/Gaudi count with an NVIDIA label is contradictory; the resource is what the pod gets.
        return resources
    # a node label names the chip more exactly than a vendor's resource name (trn1.2xlarge: Trainium, not Neuron)
    same_vendor = resources.vendor != "nvidia" and scheduling.vendor == resources.vendor
    merged = GpuRequest(
        type=(scheduling.type if same_vendor and scheduling.type else None) or resources.type or scheduling.type,
        count=resources.count,
        evidence=f"{resources.evidence}; {scheduling.evidence}",
        location=scheduling.location if scheduling.type and not resources.type else resources.location,
        vendor=resources.vendor if resources.vendor != "nvidia" else scheduling.vendor,
        mig_profile=resources.mig_profile,
        memory_gib=resources.memory_gib if resources.memory_gib is not None else scheduling.memory_gib,
        shared_key=resources.shared_key,
        count_location=resources.count_location,
        fleet=scheduling.fleet,
        node_selection=resources.node_selection or scheduling.node_selection,
    )
    return merged


# --- DRA claims ----------------------------------------------------------------------------------------


@dataclass
class ClaimUse:
    """A container's `resources.claims` entry, resolved through the pod's `resourceClaims` to what it names."""

    claim: str
    kind: str
    source: str
    request: str | None
    location: Location | None


def read_claim_uses(file: str, podspec: Any, container: Any, cpath: str) -> list[ClaimUse]:
    """The Dynamic Resource Allocation claims a container uses (`resources.claims`), each with the
    ResourceClaimTemplate or ResourceClaim its pod's `resourceClaims` entry names (`source:` in v1alpha2)."""
    resources = container.get("resources") if is_map(container) else None
    claims = resources.get("claims") if is_map(resources) else None
    pod_claims = podspec.get("resourceClaims") if is_map(podspec) else None
    if not is_seq(claims) or not is_seq(pod_claims):
        return []
    by_name = {scalar_text(c.get("name")): c for c in pod_claims if is_map(c)}
    uses = []
    for i, claim in enumerate(claims):
        name = scalar_text(claim.get("name")) if is_map(claim) else None
        entry = by_name.get(name)
        if not name or entry is None:
            continue
        source = entry.get("source") if is_map(entry.get("source")) else entry  # v1alpha2 wraps it in `source`
        for key, kind in (("resourceClaimTemplateName", "ResourceClaimTemplate"),
                          ("resourceClaimName", "ResourceClaim")):
            target = scalar_text(source.get(key))
            if target:
                where = node_location(file, claim, join_path(join_path(join_path(cpath, "resources"), "claims"), i))
                uses.append(ClaimUse(name, kind, target, scalar_text(claim.get("request")), where))
                break
    return uses


# --- env, shm, annotations ------------------------------------------------------------------------------


def _read_only_download(file: str, container: Any, cpath: str, server: Server, invocation: Any) -> None:
    """A Hub model that vLLM's own image must download, in a container whose root filesystem is read-only and
    where no writable volume holds the Hugging Face cache: huggingface_hub's download fails with "[Errno 30]
    Read-only file system" before vLLM loads anything (the image holds no model). Said only when every place the
    cache can be (--download-dir, HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, else the home directory of root or of
    another user) is known and none is under a writable mount."""
    from vramlint.versions import is_own_vllm_image

    security = container.get("securityContext") if is_map(container) else None
    if not is_map(security) or security.get("readOnlyRootFilesystem") is not True:
        return
    model = server.model
    if not is_own_vllm_image(server.image):
        return
    hub_id = isinstance(model, str) and not model.startswith((".", "/", "~")) and model.count("/") == 1 \
        and not any(c in model for c in "$\ue000{")
    unknown = model is None or (isinstance(model, str) and any(c in model for c in "$\ue000"))
    if not hub_id and not unknown:
        return
    writable = []
    mounts = container.get("volumeMounts")
    for mount in mounts if is_seq(mounts) else []:
        path = scalar_text(mount.get("mountPath")) if is_map(mount) else None
        if path is None or mount.get("readOnly") is True:
            if path is None and is_map(mount):
                return  # a mount whose path is not known may hold the cache
            continue
        if path.rstrip("/") != "/dev/shm":
            writable.append(path.rstrip("/") or "/")
    where = value_location(file, security, "readOnlyRootFilesystem",
                           join_path(join_path(cpath, "securityContext"), "readOnlyRootFilesystem"))
    if not writable and "load_format" not in server.args:
        # nothing in the container can be written: neither a download (a Hub id, or a model named where the
        # file does not show) nor a model of its own (vLLM's image holds none) can be had
        what = model if hub_id else "the model (not named in the file; vLLM's image holds none)"
        server.startup_errors.append({
            "code": "read-only-fs", "location": where, "arg": None, "version_known": True,
            "version": getattr(invocation, "version_table", None) or server.vllm_version,
            "message": f"the root filesystem is read-only (readOnlyRootFilesystem: true) and the container mounts no "
                       f"writable volume: downloading {what} fails with \"[Errno 30] Read-only file system\"",
            "fix": "mount a writable volume (an emptyDir or a PersistentVolumeClaim) at the Hugging Face cache, "
                   "e.g. /root/.cache/huggingface, or set HF_HOME to a writable mount"})
        return
    if not hub_id:
        return
    env = server.env
    if "download_dir" in server.args:
        places = [server.args["download_dir"]]
    elif "HF_HUB_CACHE" in env:
        places = [env["HF_HUB_CACHE"]]
    elif "HF_HOME" in env:
        places = [env["HF_HOME"]]
    elif "XDG_CACHE_HOME" in env:
        places = [env["XDG_CACHE_HOME"]]
    elif "HOME" in env:
        places = [env["HOME"]]
    else:
        places = ["/root/.cache/huggingface", "/.cache/huggingface"]  # as root, or as a user with no home
    if server.env_from_unseen or any(not isinstance(p, str) or not p.startswith("/") for p in places):
        return  # set by something the files do not show
    if any(p == w or p.startswith(w.rstrip("/") + "/") for p in places for w in writable):
        return
    server.startup_errors.append({
        "code": "read-only-fs", "location": where, "arg": None, "version_known": True,
        "version": getattr(invocation, "version_table", None) or server.vllm_version,
        "message": f"the root filesystem is read-only (readOnlyRootFilesystem: true) and no writable volume holds "
                   f"the Hugging Face cache ({' or '.join(places)}): downloading {model} fails with \"[Errno 30] "
                   "Read-only file system\"",
        "fix": "mount a writable volume (an emptyDir or a PersistentVolumeClaim) at the cache, e.g. "
               "/root/.cache/huggingface, or set HF_HOME to a writable mount"})


def container_env(server: Server) -> dict[str, str | None]:
    """The environment `$(NAME)` references expand from: the file's env, open to envFrom sources it does not show."""
    from vramlint.cmdline import ENV_FROM_UNSEEN

    env = dict(server.env)
    if server.env_from_unseen:
        env[ENV_FROM_UNSEEN] = None
    return env


def read_env(file: str, container: Any, path: str, server: Server) -> None:
    env = container.get("env") if is_map(container) else None
    epath = join_path(path, "env")
    if is_seq(env):
        for i, item in enumerate(env):
            if not is_map(item) or not isinstance(item.get("name"), str):
                continue
            name = item["name"]
            ipath = join_path(epath, i)
            if "valueFrom" in item:
                server.env[name] = None  # from a Secret/ConfigMap/field: not knowable from the file
                loc = key_location(file, item, "valueFrom", join_path(ipath, "valueFrom"))
            else:
                value = item.get("value")
                server.env[name] = "" if value is None else scalar_text(value)
                loc = value_location(file, item, "value", join_path(ipath, "value")) if "value" in item else None
            server.env_locations[name] = loc or key_location(file, env, i, ipath) or server.location
    elif is_map(env):  # KubeAI and some charts write env as a map
        for name, value in env.items():
            server.env[str(name)] = scalar_text(value) if not is_map(value) else None
            server.env_locations[str(name)] = value_location(file, env, name, join_path(epath, name)) or server.location
    env_from = container.get("envFrom") if is_map(container) else None
    if is_seq(env_from):
        for item in env_from:
            if not is_map(item):
                continue
            for ref_key in ("configMapRef", "secretRef"):
                ref = item.get(ref_key)
                if is_map(ref):
                    server.env_from_unseen = True
                    server.notes.append(
                        f"envFrom {ref_key} {scalar_text(ref.get('name'))}: the variables it sets are not known "
                        "from this file"
                    )


def dev_shm_mounts(container: Any) -> list:
    """The container's volumeMounts at /dev/shm."""
    mounts = container.get("volumeMounts") if is_map(container) else None
    if not is_seq(mounts):
        return []
    return [m for m in mounts if is_map(m) and str(m.get("mountPath", "")).rstrip("/") == "/dev/shm"]


def pod_has_shm(podspec: Any, container: Any) -> bool | None:
    """True when /dev/shm is a memory-backed emptyDir (or the pod shares the host IPC namespace); None when the
    /dev/shm mount cannot be read."""
    if is_map(podspec) and podspec.get("hostIPC") is True:
        return True
    mounts = container.get("volumeMounts") if is_map(container) else None
    volumes = podspec.get("volumes") if is_map(podspec) else None
    if not is_seq(mounts) or not is_seq(volumes):
        return False
    shm_volumes = set()
    for vol in volumes:
        if is_map(vol) and is_map(vol.get("emptyDir")) and str(vol["emptyDir"].get("medium", "")) == "Memory":
            shm_volumes.add(str(vol.get("name")))
    for mount in dev_shm_mounts(container):
        name = mount.get("name")
        if is_map(name) or is_seq(name):
            return None  # a name written as a map or list (a template rendered badly): not known
        if str(name) in shm_volumes:
            return True
    return False


def ignore_rules_from(file: str, metadata: Any, path: str) -> dict[str, Location]:
    out: dict[str, Location] = {}
    annotations = metadata.get("annotations") if is_map(metadata) else None
    if not is_map(annotations) or IGNORE_ANNOTATION not in annotations:
        return out
    text = scalar_text(annotations.get(IGNORE_ANNOTATION)) or ""
    loc = value_location(
        file, annotations, IGNORE_ANNOTATION, join_path(join_path(path, "annotations"), IGNORE_ANNOTATION)
    )
    for rule in re.split(r"[,\s]+", text):
        if rule and loc is not None:
            out[rule] = loc
    return out


# --- the walk -------------------------------------------------------------------------------------------


@dataclass
class PodSpecHit:
    node: Any
    path: str
    replicas: int | None
    metadata: tuple[Any, str] | None  # the template metadata beside the pod spec and its path, if any
    parents: list[tuple[Any, str]] = field(default_factory=list)  # enclosing mappings, outermost first


def looks_like_podspec(node: Any) -> bool:
    containers = node.get("containers")
    if not is_seq(containers) or not containers:
        return False
    return any(is_map(c) and ("image" in c or "command" in c or "args" in c) for c in containers)


# The last object walked and its hits: the required-field check and the extractor walk each object in turn, and a
# file of 10,000 Deployments walked each twice. Kept alive with the object, so its id() cannot be reused meanwhile.
_LAST_WALK: list[Any] = [None, None, None]


def find_podspecs(root: Any, base_path: str = "", budget: list[int] | None = None) -> list[PodSpecHit]:
    """Every mapping with a PodSpec-shaped ``containers`` list under ``root``, with the replicas above it."""
    if budget is None:
        if _LAST_WALK[0] is root and _LAST_WALK[1] == base_path:
            return list(_LAST_WALK[2])
        hits = _find_podspecs(root, base_path, [MAX_NODES_WALKED])
        _LAST_WALK[:] = [root, base_path, hits]
        return list(hits)
    return _find_podspecs(root, base_path, budget)


def _find_podspecs(root: Any, base_path: str, budget: list[int]) -> list[PodSpecHit]:
    hits: list[PodSpecHit] = []
    visited: set[int] = set()
    # (node, path, replicas, depth, metadata, parents); the enclosing mappings as a chain of (node, path, outer)
    # made into a list only for a hit (not copied for every child of every mapping)
    stack: list[tuple[Any, str, int | None, int, Any, Any]] = [(root, base_path, None, 0, None, None)]
    while stack:
        node, path, replicas, depth, metadata, parents = stack.pop()
        if budget[0] <= 0 or depth > MAX_DEPTH:
            break
        if id(node) in visited:
            continue
        visited.add(id(node))
        budget[0] -= 1
        if isinstance(node, dict):
            if "replicas" in node:
                count = to_int(node.get("replicas"))
                if count is not None:
                    replicas = count
            if "containers" in node and looks_like_podspec(node):
                hits.append(PodSpecHit(node, path, replicas, metadata, _chain_list(parents)))
                continue
            meta = node.get("metadata")
            meta_here = (meta, join_path(path, "metadata")) if isinstance(meta, dict) else None
            here = (node, path, parents)
            children = [(value, join_path(path, key), replicas, depth + 1,
                         meta_here if key == "spec" and meta_here is not None else metadata, here)
                        for key, value in node.items()
                        if isinstance(value, (dict, list)) and key not in ("status", "metadata")]
            stack.extend(reversed(children))
        elif isinstance(node, list):
            children = [(value, join_path(path, i), replicas, depth + 1, metadata, parents)
                        for i, value in enumerate(node) if isinstance(value, (dict, list))]
            stack.extend(reversed(children))
    return hits


def _chain_list(chain: Any) -> list[tuple[Any, str]]:
    """The enclosing mappings of a chain of (node, path, outer), outermost first."""
    out = []
    while chain is not None:
        out.append((chain[0], chain[1]))
        chain = chain[2]
    out.reverse()
    return out


_TEMPLATE_OPEN, _TEMPLATE_CLOSE = "\u2983", "\u2984"  # vramlint.helm.templated's width-preserving markers
_MARKER = re.compile("\u2983_*\u2984|\u2983")


def as_written(doc: Any, node: Any, key: Any, value: str) -> str | None:
    """A scalar whose template expressions a template reading replaced (`name: ${DEPLOYMENT_NAME}-worker`), as
    the file writes it: each marker is as wide as the expression it stands for, so the same columns of the file's
    line hold the text; None when they do not line up (a value over several lines, a text changed otherwise)."""
    from vramlint.yamlload import value_location

    lines = getattr(doc, "lines", None)
    loc = value_location(getattr(doc, "file", ""), node, key)
    if not lines or loc is None or not loc.line or loc.line > len(lines) or "\n" in value:
        return None
    start = loc.column - 1 + (1 if getattr(node.get(key), "style", None) in ("'", '"') else 0)
    text = lines[loc.line - 1][start:start + len(value)]
    if len(text) != len(value):
        return None
    kept = 0
    for m in _MARKER.finditer(value):
        if value[kept:m.start()] != text[kept:m.start()]:
            return None
        kept = m.end()
    return text if value[kept:] == text[kept:] else None


@dataclass
class ObjectContext:
    kind: str | None
    name: str | None
    ignore_rules: dict[str, Location]
    notes: list[str] = field(default_factory=list)


def object_context(doc: Any, obj: Any, path: str) -> ObjectContext:
    metadata = obj.get("metadata") if is_map(obj) else None
    name = scalar_text(metadata.get("name")) if is_map(metadata) else None
    if name is not None and _TEMPLATE_OPEN in name:
        name = as_written(doc, metadata, "name", name)
    kind = scalar_text(obj.get("kind")) if is_map(obj) else None
    ignore = ignore_rules_from(doc.file, metadata, join_path(path, "metadata"))
    return ObjectContext(kind, name, ignore)


def container_server(
    doc: Any,
    ctx: ObjectContext,
    hit: PodSpecHit,
    index: int,
    container: Any,
    *,
    extra_args: list[Any] | None = None,
    command_override: list[Any] | None = None,
    shm_known: bool = True,
    records: Records,
    before_invocation: Any = None,
    token_filter: Any = None,
    args_override: list[Any] | None = None,
    follow_scripts: bool = True,
    container_path: str | None = None,
) -> tuple[Server | None, list[Problem]]:
    """The vLLM server run by one container, or None when the container does not run vLLM. ``container_path``:
    where the container is when it is not ``containers[index]`` of the pod spec (an operator's `runner`)."""
    from vramlint.cmdline import find_vllm_invocation, plain_words

    file = doc.file
    cpath = container_path or join_path(join_path(hit.path, "containers"), index)
    location = node_location(file, container, cpath) or Location(file, 1, 1, yaml_path=cpath)
    image = scalar_text(container.get("image"))
    server = Server(file=file, location=location, source_format="kubernetes", kind=ctx.kind, name=ctx.name)
    server.container = scalar_text(container.get("name"))
    server.image = image
    if image is not None:
        server.image_location = value_location(file, container, "image", join_path(cpath, "image"))
    server.vllm_version = version_from_image(image)
    read_env(file, container, cpath, server)
    if before_invocation is not None:
        before_invocation(server)
    command = command_override if command_override is not None else tokens_from(file, container, "command", cpath, doc.lines)
    args = (args_override if args_override is not None else tokens_from(file, container, "args", cpath, doc.lines)) \
        + list(extra_args or [])
    if token_filter is not None:
        command, args = token_filter(command), token_filter(args)
    if not plain_words(command):
        command = [_unknown_if_template(_go_marked(t, keep_name=False)) for t in command]
    if not plain_words(args):
        args = [_unknown_if_template(_go_marked(t, keep_name=False)) for t in args]
    invocation = find_vllm_invocation(command, args, server.image, container_env(server),
                                      env_locations=server.env_locations)
    if invocation is None and image is None and not command and args:
        invocation = _patch_invocation(args, server)
    elif invocation is None and has_template_marker(image) and not command and args:
        invocation = _templated_image_args(args, server, doc)
    elif invocation is None and image is not None and not command and args:
        invocation = _vllm_args_only(args, server)
    if invocation is None:
        from vramlint.cmdline import hidden_vllm_command

        said = hidden_vllm_command(image, [t.text for t in command + args], server.env)
        if follow_scripts:
            from vramlint.extract import scripts

            call = scripts.script_call(command + args)
            if call is not None:  # read once every scanned file's ConfigMaps are known
                records.script_refs.append(scripts.ScriptRef(doc, ctx, hit, index, container, call, location,
                                                             shm_known, said, container_path))
                return None, []
        if said is None:
            return None, []
        from vramlint.cmdline import TRITON_VLLM_BACKEND

        # Triton's vLLM backend is told by its image: said on the image's line
        at = server.image_location if said.startswith(TRITON_VLLM_BACKEND) and server.image_location else location
        return None, [Problem(file, at.line, at.column, said, level="note")]
    apply_invocation(server, invocation)
    # what the kubelet runs is the container as written only in Kubernetes' own workloads (and LWS, Argo's
    # Rollout): an operator's resource is turned into pods by its controller, which may add the model itself
    server.model_default = bool(getattr(invocation, "model_default", False)) and ctx.kind in _KUBELET_RUN_KINDS \
        and command_override is None and args_override is None and not extra_args
    for name, value in (getattr(invocation, "env", None) or {}).items():
        if name in VISIBLE_DEVICE_NAMES:  # `CUDA_VISIBLE_DEVICES=0 vllm serve`: the engine's own environment
            server.env[name] = value
            if name in invocation.env_locations:
                server.env_locations[name] = invocation.env_locations[name]
    _read_only_download(file, container, cpath, server, invocation)
    extra_problems = []
    if getattr(invocation, "entrypoint", None) == "implied" and not command and not args:
        from vramlint.cmdline import hidden_vllm_command, is_vllm_project_image

        said = None if is_vllm_project_image(image) else hidden_vllm_command(image, [], server.env)
        if said is not None:  # a custom image: its own entrypoint decides the command line
            extra_problems.append(Problem(file, location.line, location.column, said, level="note"))
    if getattr(invocation, "entrypoint", None) == "dynamo.vllm":
        server.notes.append("NVIDIA Dynamo's vLLM worker (python3 -m dynamo.vllm): vLLM's engine arguments after "
                            "Dynamo's own; its OpenAI server is Dynamo's frontend, not vLLM's")
    if getattr(invocation, "entrypoint", None) == "huggingfaceserver":
        server.notes.append("KServe's Hugging Face server: it serves with vLLM (these arguments) when vLLM supports "
                            "the model's architecture (--backend auto or vllm), else with Transformers")
    if isinstance(server.model, str) and server.model.startswith("/"):
        _model_from_downloader(doc, server, hit)
    config_files = list(getattr(invocation, "config_files", None) or [])
    problems = [Problem(file, location.line, location.column, msg) for msg in invocation.problems] + extra_problems
    server.replicas = hit.replicas
    gpu = combine_gpu(gpu_from_resources(file, container, cpath), gpu_from_scheduling(file, hit.node, hit.path))
    with_node_selection(gpu, file, hit.node, hit.path)
    server.gpu = gpu
    if gpu is not None and gpu.type is None and gpu.fleet is None:
        templated = _templated_selection(file, hit.node, hit.path)
        if templated is not None:
            server.notes.append(f"the label key of `{templated[0]}` is a template placeholder that a step "
                                "before `kubectl apply` fills in, so which nodes the pods select, and their GPU, "
                                "are not known here; scan the manifest as that step writes it, or set `gpu:` in "
                                ".vramlint.yaml (or --gpu)")
    # DRA claims: joined with their ResourceClaimTemplates once every file is read (extract.resource_claims)
    server.device_claims = read_claim_uses(file, hit.node, container, cpath)
    server.shm = pod_has_shm(hit.node, container) if shm_known else None
    server.ignore_rules = dict(ctx.ignore_rules)
    if hit.metadata is not None:
        server.ignore_rules.update(ignore_rules_from(file, hit.metadata[0], hit.metadata[1]))
    server.notes.extend(ctx.notes)
    if config_files:
        records.config_refs.append(ConfigRef(server, config_files, configmap_mounts(hit.node, container),
                                             written=getattr(invocation, "written", None)))
    return server, problems


# vLLM arguments specific enough that a container patch setting them is a vLLM engine's.
_VLLM_SPECIFIC = ("tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "max_num_seqs",
                  "kv_cache_dtype", "enforce_eager", "max_num_batched_tokens", "pipeline_parallel_size")


def _patch_invocation(args: list[Any], server: Server) -> Any:
    """A kustomize patch: a container with only `args` (its image is in the base). Reported only when the
    args read cleanly as vLLM's and set vLLM-specific options."""
    from vramlint.cmdline import find_vllm_invocation

    if not args or args[0].text is None or not args[0].text.startswith("--"):
        return None
    invocation = find_vllm_invocation([], args, "vllm/vllm-openai", container_env(server),
                                      env_locations=server.env_locations)
    if invocation is None or invocation.unknown_args:
        return None
    if not any(k in _VLLM_SPECIFIC for k in invocation.args):
        return None
    server.notes.append("a patch (no image in this file): read as vLLM's arguments; the image and so the vLLM "
                        "version come from the base manifest")
    return invocation


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
_SOURCE_FLAGS = ("--source", "--repo-id", "--repo_id", "--model", "--model-id", "--model_id")
_DEST_FLAGS = ("--local-dir", "--local_dir", "--output-dir", "--output_dir", "--output", "--dest", "--target-dir")


def _model_from_downloader(doc: Any, server: Server, hit: PodSpecHit) -> None:
    """A local model path filled by an init container from a Hub repository (`huggingface-cli download REPO
    --local-dir PATH`, a downloader with `--source hf://REPO --output-dir PATH`): the model is that repository."""
    inits = hit.node.get("initContainers") if is_map(hit.node) else None
    if not is_seq(inits):
        return
    path = str(server.model).rstrip("/")
    ipath = join_path(hit.path, "initContainers")
    for i, init in enumerate(inits):
        if not is_map(init):
            continue
        cpath = join_path(ipath, i)
        words = []
        for word in tokens_from(doc.file, init, "command", cpath, doc.lines) + tokens_from(doc.file, init, "args",
                                                                                           cpath, doc.lines):
            if word.text is not None and any(c in word.text for c in " \n"):
                from vramlint.cmdline import split_token

                words.extend(w for w in split_token(word) if not w.op)  # a `sh -c` script
            else:
                words.append(word)
        texts = [w.text or "" for w in words]
        dest = None
        sources: list[tuple[str, Any]] = []
        for j, text in enumerate(texts):
            flag, eq, attached = text.partition("=")
            nxt = attached if eq else (texts[j + 1] if j + 1 < len(texts) else "")
            if flag in _DEST_FLAGS:
                dest = nxt.rstrip("/")
            elif flag in _SOURCE_FLAGS or text == "download":
                repo = nxt[len("hf://"):] if nxt.startswith("hf://") else nxt
                if _HUB_ID.match(repo):
                    sources.append((repo, words[j if eq else j + 1].location if j + 1 < len(words) else None))
            elif text.startswith("hf://") and _HUB_ID.match(text[len("hf://"):].rstrip("/")):
                sources.append((text[len("hf://"):].rstrip("/"), words[j].location))
        repos = {r for r, _ in sources}
        if dest == path and len(repos) == 1:
            repo, loc = sources[0]
            server.notes.append(f"the model path {path} is filled by init container "
                                f"{scalar_text(init.get('name'))!r} from the Hub repository {repo}")
            server.model, server.model_location = repo, loc or server.model_location
            return


def _vllm_args_only(args: list[Any], server: Server) -> Any:
    """A vendor image not named like vLLM (Intel Gaudi, custom builds) whose `args` are a vLLM command line:
    read as vLLM's when they name a model with `--model` and some vLLM version accepts every one of them."""
    from vramlint import vllm_args
    from vramlint.cmdline import find_vllm_invocation, parse_vllm_args

    texts = [t.text for t in args]
    if not texts or texts[0] is None or not texts[0].startswith("--") or None in texts:
        return None
    if not any(t == "--model" or t.startswith("--model=") for t in texts):
        return None
    accepted_by = None
    for version in reversed(vllm_args.versions()):
        inv = parse_vllm_args(list(args), version=version, entry="openai.api_server")
        if not inv.unknown_args and not inv.startup_errors and inv.model:
            accepted_by = version
            break
    if accepted_by is None or sum(1 for k in inv.args if k in _VLLM_SPECIFIC) < 2:
        return None
    invocation = find_vllm_invocation([], args, "vllm/vllm-openai", container_env(server),
                                      env_locations=server.env_locations)
    if invocation is not None:
        server.notes.append(f"image {server.image} is not named like a vLLM image; its entrypoint is taken to be "
                            f"vLLM's because every argument is one of vLLM's (e.g. vLLM {accepted_by})")
    return invocation


_VLLM_HELPER = re.compile(r"""include\s+["'](vllm[\w-]*)\.[\w.-]+["']""")


def _templated_image_args(args: list[Any], server: Server, doc: Any) -> Any:
    """A template whose image is a template expression (`{{ .Values.image.repository }}:...`) and whose args
    are a vLLM argument list: read as vLLM's (the image's entrypoint runs them) when they name `--model`, some
    vLLM version accepts every option written, and something besides says vLLM: two vLLM-specific options, or
    the template's own helpers are named after vLLM (`include "vllm.fullname"`: a chart named vllm)."""
    from vramlint import vllm_args
    from vramlint.cmdline import find_vllm_invocation, parse_vllm_args

    texts = [t.text for t in args]
    if not texts or texts[0] is None or not texts[0].startswith("--"):
        return None
    if not any(t is not None and (t == "--model" or t.startswith("--model=")) for t in texts):
        return None
    accepted_by = None
    for version in reversed(vllm_args.versions()):
        inv = parse_vllm_args(list(args), version=version, entry="openai.api_server")
        if not inv.unknown_args and not inv.startup_errors:
            accepted_by = version
            break
    if accepted_by is None:
        return None
    specific = [k for k in inv.args if k in _VLLM_SPECIFIC]
    helper = _VLLM_HELPER.search("\n".join(doc.lines or []))
    if len(specific) >= 2:
        why = f"they set vLLM's {', '.join('--' + k.replace('_', '-') for k in specific[:3])}"
    elif helper is not None:
        why = f"the template's helpers are named after vLLM ({helper.group(0)})"
    else:
        return None
    invocation = find_vllm_invocation([], args, "vllm/vllm-openai", container_env(server),
                                      env_locations=server.env_locations)
    if invocation is not None:
        server.notes.append("the image is a template expression; the container's args are read as a vLLM argument "
                            f"list run by the image's entrypoint because every option is one of vLLM's and {why}")
    return invocation


def mark_assumed(invocation: Any, source: str) -> None:
    """Refusals read with an operator's pinned vLLM version (the release installed not known): VRL005 reports
    them as warnings that name the pin."""
    for error in invocation.startup_errors:
        error["version_known"] = False
        error["assumed_by"] = source


_KUBELET_RUN_KINDS = frozenset(("Pod", "PodTemplate", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
                                "ReplicationController", "Job", "CronJob", "LeaderWorkerSet", "Rollout"))


def apply_invocation(server: Server, invocation: Any) -> None:
    server.model = invocation.model
    server.model_location = invocation.model_location
    server.args.update(invocation.args)
    server.arg_locations.update(invocation.arg_locations)
    server.unknown_args.update(invocation.unknown_args)
    server.startup_errors.extend(getattr(invocation, "startup_errors", None) or [])
    server.unchecked.extend(getattr(invocation, "unchecked", None) or [])
    server.opaque_args = server.opaque_args or getattr(invocation, "opaque_args", None)


# --- ConfigMaps holding vLLM config files --------------------------------------------------------------


@dataclass
class ConfigMapRecord:
    name: str
    file: str
    data: Any  # the `data` mapping
    path: str  # yaml path of `data`
    doc: Any


@dataclass
class ConfigRef:
    """A server started with `--config PATH`, and the ConfigMap mounts that may hold that file."""

    server: Server
    files: list[tuple[str, Location | None]]
    mounts: list[Any]  # VolumeRef
    # How the file's settings reach vLLM when it is not vLLM's own `--config` loader that reads it (an
    # operator's runner, e.g. KAITO): called as apply(server, document, ConfigMapRecord); None: vLLM's loader.
    apply: Any = None
    label: str | None = None  # how notes name the file (default: `--config PATH`)
    # files the container's script writes with a here-document before the server starts (path ->
    # cmdline.WrittenFile): one of them is the --config file vLLM reads, whatever the mounts
    written: dict[str, Any] | None = None


@dataclass
class VolumeRef:
    """A container mount path that shows a ConfigMap (used to resolve `--config /etc/vllm/config.yaml`)."""

    mount_path: str
    configmap: str
    sub_path: str | None
    items: dict[str, str]  # key -> path inside the mount


def configmap_mounts(podspec: Any, container: Any) -> list[VolumeRef]:
    volumes = podspec.get("volumes") if is_map(podspec) else None
    mounts = container.get("volumeMounts") if is_map(container) else None
    if not is_seq(volumes) or not is_seq(mounts):
        return []
    by_name: dict[str, tuple[str, dict[str, str]]] = {}
    for vol in volumes:
        if not is_map(vol) or not is_map(vol.get("configMap")):
            continue
        cm = vol["configMap"]
        items = {}
        if is_seq(cm.get("items")):
            for it in cm["items"]:
                if is_map(it) and it.get("key") is not None:
                    items[str(it.get("key"))] = str(it.get("path") or it.get("key"))
        by_name[str(vol.get("name"))] = (str(cm.get("name")), items)
    out = []
    for mount in mounts:
        if is_map(mount) and str(mount.get("name")) in by_name:
            cm_name, items = by_name[str(mount.get("name"))]
            out.append(VolumeRef(str(mount.get("mountPath", "")), cm_name, scalar_text(mount.get("subPath")), items))
    return out


def config_key_for(path: str, mounts: list[VolumeRef]) -> tuple[str, str] | None:
    """(ConfigMap name, data key) a `--config` path reads, following the container's mounts."""
    for ref in mounts:
        mount = ref.mount_path.rstrip("/")
        if ref.sub_path is not None:
            if path == mount:
                return ref.configmap, ref.sub_path
            continue
        if path.startswith(mount + "/"):
            inner = path[len(mount) + 1 :]
            if ref.items:
                for key, item_path in ref.items.items():
                    if item_path == inner:
                        return ref.configmap, key
                continue
            return ref.configmap, inner
    return None


# --- pods of any object -------------------------------------------------------------------------------


def configmap_refs(container: Any) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """({variable: (ConfigMap, key)} of `env`, [ConfigMap] of `envFrom`) of one container."""
    keyed: dict[str, tuple[str, str]] = {}
    whole: list[str] = []
    env = container.get("env") if is_map(container) else None
    for item in env if is_seq(env) else []:
        source = item.get("valueFrom") if is_map(item) else None
        ref = source.get("configMapKeyRef") if is_map(source) else None
        if is_map(ref) and isinstance(item.get("name"), str):
            name, key = scalar_text(ref.get("name")), scalar_text(ref.get("key"))
            if name and key:
                keyed[item["name"]] = (name, key)
    env_from = container.get("envFrom") if is_map(container) else None
    for item in env_from if is_seq(env_from) else []:
        ref = item.get("configMapRef") if is_map(item) else None
        name = scalar_text(ref.get("name")) if is_map(ref) else None
        if name and not item.get("prefix"):  # a prefix renames the keys: left unknown
            whole.append(name)
    return keyed, whole


def workload_namespace(obj: Any) -> str | None:
    """The namespace an object's metadata writes (None: the one it is applied to)."""
    metadata = obj.get("metadata") if is_map(obj) else None
    return scalar_text(metadata.get("namespace")) if is_map(metadata) else None


def _long_running_containers(hit: PodSpecHit) -> list[tuple[int, Any, str | None]]:
    """(index, container, path when not containers[index]) of the containers that run for the pod's life: its
    containers, and its sidecars, the init containers with `restartPolicy: Always` (Kubernetes' native sidecars,
    KEP-753: started before the containers and kept running), which may serve vLLM beside a client container."""
    out: list[tuple[int, Any, str | None]] = [(i, c, None) for i, c in enumerate(hit.node.get("containers") or [])
                                              if is_map(c)]
    inits = hit.node.get("initContainers")
    if is_seq(inits):
        ipath = join_path(hit.path, "initContainers")
        out += [(i, c, join_path(ipath, i)) for i, c in enumerate(inits)
                if is_map(c) and scalar_text(c.get("restartPolicy")) == "Always"]
    return out


def extract_pod_objects(doc: Any, obj: Any, path: str, records: Records, ctx: ObjectContext | None = None,
                        shm_known: bool = True) -> list[Server]:
    ctx = ctx or object_context(doc, obj, path)
    found: list[Server] = []
    spec = obj.get("spec")
    lws_size = None
    # llmaz's Service wraps the same LeaderWorkerSet template under another key.
    template_key = {"LeaderWorkerSet": "leaderWorkerTemplate", "Service": "workloadTemplate"}.get(ctx.kind)
    if template_key and is_map(spec) and is_map(spec.get(template_key)):
        lws_size = to_int(spec[template_key].get("size"))
    for hit in find_podspecs(obj, path):
        for i, container, cpath in _long_running_containers(hit):
            server, problems = container_server(doc, ctx, hit, i, container, shm_known=shm_known, records=records,
                                                container_path=cpath)
            records.problems.extend(problems)
            if server is None:
                continue
            if any(configmap_refs(container)):  # read again once every scanned ConfigMap is known
                records.env_refs.append(EnvRef(doc, ctx, hit, i, container, shm_known, server,
                                               workload_namespace(obj), len(server.notes), cpath))
            if ctx.kind == "Pod" and server.replicas is None:
                server.replicas = 1
            if lws_size is not None:
                role = "leader" if ".leaderTemplate" in hit.path else "worker"
                server.notes.append(
                    f"LeaderWorkerSet {role} template; each group spans {lws_size} pods (size), so tensor/pipeline "
                    "parallelism may cross nodes"
                )
            records.servers.append(server)
            found.append(server)
    return found
