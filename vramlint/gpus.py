"""The embedded GPU catalog: what each GPU reports to CUDA, and how deployments name it.

Deployments name GPUs in many ways: node labels (``nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB``), GKE
accelerators (``nvidia-tesla-t4``), Karpenter (``instance-gpu-name: l4``), KubeAI resource profiles
(``nvidia-gpu-h100``), product names (``NVIDIA GeForce RTX 4090``) and cloud instance types
(``g5.12xlarge``). All of them resolve to one canonical catalog name here.

The catalog (``vramlint/data/gpus.json``) is read on first use, never at import.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

from vramlint.model import GpuSpec

# Words that only say who made or sells the GPU; dropped before matching so that "NVIDIA-L4", "nvidia-l4",
# "NVIDIA L4" and "L4" are the same name. "gtx" is GeForce's older product line: hand-written labels put it before
# any GeForce number ("nvidia-gtx-2080ti"), and the number alone names the card.
_NOISE_PREFIXES = ("nvidia", "tesla", "geforce", "gtx", "gpu", "amd", "instinct")
# Node-label suffixes the GPU operator adds: "-MIG-3g.40gb" (mixed strategy), "-SHARED" (time-slicing).
_SUFFIX_RE = re.compile(r"(-mig-\d+g\.\d+gb(\+me)?|-shared)$", re.IGNORECASE)
_MIG_RE = re.compile(r"(?:^|[/-])(?:mig-)?(\d+g\.(\d+)gb(?:\+me)?)$", re.IGNORECASE)


def _normalize(text: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    changed = True
    while changed:
        changed = False
        for prefix in _NOISE_PREFIXES:
            if key.startswith(prefix) and len(key) > len(prefix):
                key = key[len(prefix):]
                changed = True
    return key


def _catalog_json() -> dict[str, Any]:
    """gpus.json as shipped, read next to this module as the model catalog and vllm_args.json are
    (importlib.resources would load pathlib, zipfile and tempfile for one file of the package)."""
    import json
    import os

    with open(os.path.join(os.path.dirname(__file__), "data", "gpus.json"), encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=1)
def _catalog() -> dict[str, Any]:
    raw = _catalog_json()
    specs: dict[str, GpuSpec] = {}
    aliases: dict[str, str] = {}
    exact: dict[str, str] = {}  # as written ("nvidia-tesla-a100" is the 40 GB A100 on GKE), before normalizing
    sources: dict[str, str] = {}
    for entry in raw["gpus"]:
        total = float(entry["total_gib"])
        cc = tuple(entry["cc"])
        slices = entry.get("mig_slices")
        mig: dict[str, float] = {}
        for profile, n in entry.get("mig", {}).items():
            mig[profile] = round(total * n / slices, 2)
        mig.update(entry.get("mig_gib", {}))
        spec = GpuSpec(
            name=entry["name"],
            total_gib=total,
            # AMD parts: the capability torch reports on ROCm (gfx942 -> 9.4), bf16 / fp8 as the entry says
            compute_capability=(int(cc[0]), int(cc[1])),
            bf16=entry.get("bf16", cc >= (8, 0)),
            fp8=entry.get("fp8", cc >= (8, 9)),
            vendor=entry.get("vendor", "nvidia"),
            marketing_gb=entry.get("marketing_gb"),
            mig_profiles=mig,
            compute_units=entry.get("compute_units"),
            l2_cache_mib=entry.get("l2_cache_mib"),
        )
        specs[spec.name] = spec
        sources[spec.name] = entry.get("total_source", "")
        for alias in [spec.name, *entry.get("aliases", [])]:
            exact.setdefault(alias.lower(), spec.name)
            aliases.setdefault(_normalize(alias), spec.name)
    ambiguous = {_normalize(k): v for k, v in raw.get("ambiguous", {}).items()}
    instances: dict[str, tuple] = {}
    for cloud in ("aws", "gcp", "azure", "oci"):
        for name, value in raw["instances"].get(cloud, {}).items():
            instances[name.lower()] = (value[0], int(value[1]), value[2] if len(value) > 2 else 1.0, cloud)
    label_values = {key: {str(k).lower(): v for k, v in table.items()}
                    for key, table in raw.get("label_values", {}).items() if not key.startswith("_")}
    return {"specs": specs, "aliases": aliases, "exact": exact, "ambiguous": ambiguous, "instances": instances,
            "sources": sources, "instance_sources": raw["instances"]["_sources"], "label_values": label_values}


# GPUs the run's configuration declares (`custom-gpus`): looked up before the catalog, for the command that set
# them only (each command runs in its own context: vramlint.fsread.own_roots). None: no custom GPU.
_CUSTOM: ContextVar[dict[str, Any] | None] = ContextVar("vramlint_custom_gpus", default=None)


def use_custom(declarations: list[tuple[Any, str]]) -> None:
    """Make the configuration's custom GPUs (``(vramlint.config.CustomGpu, "file:line")`` pairs) known to every
    lookup of this run. bf16 and FP8 follow from the compute capability, as for catalog GPUs."""
    if not declarations:
        _CUSTOM.set(None)
        return
    specs: dict[str, GpuSpec] = {}
    exact: dict[str, str] = {}
    aliases: dict[str, str] = {}
    labels: dict[tuple[str, str], str] = {}
    sources: dict[str, str] = {}
    device_names: dict[str, str] = {}  # the product name CUDA prints, when an alias is one ("NVIDIA RTX ...")
    for entry, where in declarations:
        cc = entry.capability()
        specs[entry.name] = GpuSpec(name=entry.name, total_gib=float(entry.memory_gib), compute_capability=cc,
                                    bf16=cc >= (8, 0), fp8=cc >= (8, 9))
        sources[entry.name] = where
        spaced = [alias for alias in entry.aliases if " " in alias.strip()]
        if spaced:
            device_names[entry.name] = spaced[0].strip()
        for alias in [entry.name, *entry.aliases]:
            exact.setdefault(alias.strip().lower(), entry.name)
            aliases.setdefault(_normalize(alias), entry.name)
        for key, value in entry.label_pairs():
            labels.setdefault((key, value.strip().lower()), entry.name)
    _CUSTOM.set({"specs": specs, "exact": exact, "aliases": aliases, "labels": labels, "sources": sources,
                 "device_names": device_names, "label_keys": tuple(dict.fromkeys(key for key, _ in labels))})


def custom_source(name: str) -> str | None:
    """Where the configuration declares the custom GPU ``name`` ("custom-gpus, .vramlint.yaml:4"), else None."""
    custom = _CUSTOM.get()
    where = custom["sources"].get(name) if custom else None
    return f"custom-gpus, {where}" if where else None


def names() -> list[str]:
    """Every canonical GPU name in the catalog, and the custom GPUs of the run's configuration."""
    custom = _CUSTOM.get()
    extra = [n for n in custom["specs"] if n not in _catalog()["specs"]] if custom else []
    return list(_catalog()["specs"]) + extra


def resolve_hint(text: str) -> str | None:
    """The canonical catalog name for a node-label / product / GKE / Karpenter / KubeAI value, else None."""
    if not text:
        return None
    cat = _catalog()
    # KubeAI resource profiles may carry a count: "nvidia-gpu-l4:2".
    stripped = _SUFFIX_RE.sub("", text.strip().split(":")[0])
    custom = _CUSTOM.get()
    if custom:
        found = custom["exact"].get(stripped.lower()) or custom["aliases"].get(_normalize(stripped))
        if found:
            return found
    if stripped.lower() in cat["exact"]:
        return cat["exact"][stripped.lower()]
    key = _normalize(stripped)
    if key in cat["ambiguous"]:
        return None
    return cat["aliases"].get(key)


def lookup(name: str) -> GpuSpec | None:
    """The catalog entry for a canonical name or any alias ("T4", "Tesla-T4", "nvidia-h100-80gb"), else None.
    A custom GPU of the configuration is found first (one named as a catalog GPU replaces it)."""
    canonical = resolve_hint(name) if name else None
    if not canonical:
        return None
    custom = _CUSTOM.get()
    if custom and canonical in custom["specs"]:
        return custom["specs"][canonical]
    return _catalog()["specs"].get(canonical)


def ambiguity(name: str) -> str | None:
    """Why ``name`` cannot be resolved to one GPU (e.g. "A100" without its memory size), else None."""
    return _catalog()["ambiguous"].get(_normalize(_SUFFIX_RE.sub("", name or "")))


def ambiguous_candidates(name: str) -> list[str]:
    """The catalog GPUs an ambiguous name may be ("A100" -> A100-40GB, A100-80GB), as its catalog entry says."""
    why = ambiguity(name)
    if not why:
        return []
    specs = _catalog()["specs"]
    return [word for word in re.findall(r"[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]", why) if word in specs]


def total_source(name: str) -> str | None:
    """Where the catalog's total memory for this GPU comes from (a log URL, or how it was estimated)."""
    return _catalog()["sources"].get(name)


def instance_type(name: str) -> tuple[str, int] | None:
    """GPU type and count of a cloud instance type: "g5.12xlarge" -> ("A10G", 4); GCP a2/a3/g2; Azure NC/ND/NV."""
    if not name:
        return None
    hit = _catalog()["instances"].get(name.strip().lower())
    return (hit[0], hit[1]) if hit else None


def instance_fraction(name: str) -> float | None:
    """The share of one GPU an instance gets (Azure NV A10 v5 partitions: 1/6, 1/3, 1/2), 1.0 for whole GPUs."""
    hit = _catalog()["instances"].get((name or "").strip().lower())
    return hit[2] if hit else None


def instance_memory_gib(name: str) -> float | None:
    """The GPU memory of an instance that gets part of one GPU (Azure NVads A10 v5: 1/6, 1/3, 1/2 of an A10): that
    share of the whole GPU's total, in GiB. None for instances with whole GPUs and for unknown instance types."""
    hit = _catalog()["instances"].get((name or "").strip().lower())
    if not hit or hit[2] >= 1.0:
        return None
    spec = _catalog()["specs"].get(hit[0])
    return round(spec.total_gib * hit[2], 2) if spec else None


def mig_profile(resource: str) -> tuple[str | None, float] | None:
    """GPU and GiB of a MIG resource or profile: "nvidia.com/mig-3g.40gb" -> (None, 39.58); "1g.23gb" -> ("B200", 22.0).

    The GPU is named only when exactly one catalog GPU has the profile; the memory is the smallest that any
    GPU with that profile gives (so a budget is never computed on more memory than the slice may have).
    A profile no catalog GPU has gets its nominal size converted to GiB (``40gb`` -> 37.25 GiB).
    """
    if not resource:
        return None
    m = _MIG_RE.search(resource.strip())
    if not m:
        return None
    profile = m.group(1).lower()
    owners = [(s.name, s.mig_profiles[profile]) for s in _catalog()["specs"].values() if profile in s.mig_profiles]
    if not owners:
        return None, round(int(m.group(2)) * 1e9 / 2**30, 2)
    gpu = owners[0][0] if len(owners) == 1 else None
    return gpu, min(gib for _, gib in owners)


def device_name(name: str) -> str:
    """The name CUDA reports for a catalog GPU ("Tesla T4", "NVIDIA A100-SXM4-80GB"), as vLLM prints it."""
    custom = _CUSTOM.get()
    if custom and name in custom["specs"]:
        return custom["device_names"].get(name, name)
    return _device_names().get(name) or name


@lru_cache(maxsize=1)
def _device_names() -> dict[str, str | None]:
    """Catalog name -> its first alias with a space (the name CUDA prints), from the first entry of that name.
    Read once: a budget's refusals name the device, and a GPU requirement computes a budget on every GPU."""
    out: dict[str, str | None] = {}
    for entry in _catalog_json()["gpus"]:
        out.setdefault(entry["name"], next((a for a in entry.get("aliases", []) if " " in a), None))
    return out


def catalog_specs(vendor: str | None = "nvidia") -> list[GpuSpec]:
    """Every catalog GPU of ``vendor`` (whole GPUs, not MIG slices; None: every vendor's) and the configuration's
    custom GPUs, by ascending total memory then name."""
    specs = {name: spec for name, spec in _catalog()["specs"].items() if vendor is None or spec.vendor == vendor}
    custom = _CUSTOM.get()
    if custom:
        specs.update({name: spec for name, spec in custom["specs"].items() if vendor is None or spec.vendor == vendor})
    return sorted(specs.values(), key=lambda s: (s.total_gib, s.name))


def vendor_of(name: str) -> str | None:
    """The vendor of a catalog GPU ("nvidia", "amd"), None for a name the catalog does not have."""
    spec = lookup(name) if name else None
    return spec.vendor if spec else None


@lru_cache(maxsize=1)
def cloud_names() -> frozenset[str]:
    """GPUs that cloud instance types in the catalog carry (AWS, Google Cloud, Azure): the ones a cluster's nodes
    most often have, which short messages name first."""
    return frozenset(hit[0] for hit in _catalog()["instances"].values())


# Node labels that say which GPU a node has (or imply it), in the order they are trusted. Taints, tolerations
# and node-pool names are not evidence: they are whatever a cluster's operators chose to call them.
# AMD GPU node labeller (ROCm/k8s-device-plugin; the AMD GPU operator runs it): -product-name, -device-id, under
# amd.com/ and, in older releases, beta.amd.com/
_AMD_LABELS = ("amd.com/gpu.product-name", "beta.amd.com/gpu.product-name", "amd.com/gpu.device-id",
               "beta.amd.com/gpu.device-id")
NODE_LABELS = (
    "nvidia.com/gpu.product",  # NVIDIA GPU Feature Discovery (GPU operator): NVIDIA-A100-SXM4-80GB
    "cloud.google.com/gke-accelerator",  # GKE: nvidia-l4, nvidia-tesla-t4, nvidia-h100-80gb
    "karpenter.k8s.aws/instance-gpu-name",  # Karpenter on AWS: a10g, l4, h100
    "eks.amazonaws.com/instance-gpu-name",  # EKS Auto Mode: the same values
    "karpenter.azure.com/sku-gpu-name",  # AKS node auto-provisioning: A100, T4 (sizes say the memory)
    "gpu.nvidia.com/class",  # CoreWeave: A100_NVLINK_80GB, H100_NVLINK_80GB
    "gpu.nvidia.com/model",  # CoreWeave CKS
    "node.kubernetes.io/instance-type",  # every cloud: the VM size implies the GPU (g5.xlarge, a2-highgpu-1g, ...)
    "beta.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-family",  # Karpenter on AWS: g5, g6e, p4d, p5
    "nvidia.com/gpu.memory",  # GPU Feature Discovery: MiB only (with nvidia.com/gpu.family: the generation)
    # The label the Kubernetes documentation's "Schedule GPUs" page puts on nodes by hand (accelerator=...): read
    # only when its value is a GPU name the catalog knows, since a cluster may use it for anything
    "accelerator",
    "cloud.google.com/gke-tpu-accelerator",  # GKE TPUs: another vendor
    *_AMD_LABELS,
)
AMD_LABELS = frozenset(_AMD_LABELS)


def node_label_keys() -> tuple[str, ...]:
    """The node labels read for the GPU: the custom GPUs' own label keys first (the configuration says what they
    mean in this cluster), then NODE_LABELS."""
    custom = _CUSTOM.get()
    if not custom:
        return NODE_LABELS
    return tuple(k for k in custom["label_keys"] if k not in NODE_LABELS) + NODE_LABELS


# nvidia.com/gpu.family (GPU Feature Discovery) -> compute capabilities of that architecture
GPU_FAMILIES = {
    "pascal": ((6, 0), (6, 1)), "volta": ((7, 0),), "turing": ((7, 5),), "ampere": ((8, 0), (8, 6)),
    "ada-lovelace": ((8, 9),), "hopper": ((9, 0),), "blackwell": ((10, 0), (12, 0)),
}


# AWS instance families whose accelerators are Neuron devices (Trainium, Inferentia), not GPUs: the family names
# the chip (AWS instance type documentation)
NEURON_FAMILIES = {"trn1": "Trainium", "trn1n": "Trainium", "trn2": "Trainium2", "trn2u": "Trainium2",
                   "inf1": "Inferentia", "inf2": "Inferentia2"}


def neuron_instance(name: str) -> str | None:
    """The Neuron chip of an AWS instance type or family ("trn1.2xlarge" -> "Trainium"), else None."""
    return NEURON_FAMILIES.get((name or "").strip().lower().split(".")[0])


def instance_family(name: str) -> str | None:
    """The GPU of an AWS instance family ("g5" -> "A10G", "p4d" -> "A100-40GB"), when all its sizes have the same."""
    models = _families("aws").get((name or "").strip().lower(), ())
    return models[0] if len(models) == 1 else None


def gcp_machine_family(name: str) -> list[str]:
    """The GPUs of a Google Cloud machine family ("g2" -> ["L4"], "a2" -> both A100s), from its machine types."""
    return list(_families("gcp").get((name or "").strip().lower(), ()))


@lru_cache(maxsize=2)
def _families(cloud: str) -> dict[str, tuple[str, ...]]:
    """Family -> the GPUs of its instance or machine types, in type-name order, built once: a NodePool join asks
    once per pool and Deployment (3,000 of each selecting 60 pools: 180,000 scans of the instance table)."""
    sep = "." if cloud == "aws" else "-"
    out: dict[str, dict[str, None]] = {}
    for key, hit in sorted(_catalog()["instances"].items()):
        if hit[3] == cloud and sep in key:
            parts = key.split(sep)
            for i in range(1, len(parts)):  # every prefix that ends at a separator ("a2", "a2-highgpu")
                out.setdefault(sep.join(parts[:i]), {})[hit[0]] = None
    return {family: tuple(models) for family, models in out.items()}


# A value written to be replaced before the file is applied: `<your-gpu-type>`, `${GPU}`, `{{ .Values.gpu }}`,
# REPLACE_ME, CHANGE-ME, YOUR_GPU, TODO, xxx. It names no GPU: the node that matches is not known.
_PLACEHOLDER_VALUE = re.compile(
    r"<[^<>]*>|\$\{|\$\(|\{\{|%\{|(?i:\b(?:replace|change[-_ ]?me|your[-_ ]|todo|fixme|tbd|placeholder))"
    r"|^(?i:x{3,}|\.\.\.|\?+)$")


def is_placeholder(value: str | None) -> bool:
    """A label value that stands for one to be filled in (see _PLACEHOLDER_VALUE), not a value itself."""
    return bool(value) and bool(_PLACEHOLDER_VALUE.search(value.strip()))


# node_label_hint's answers, for the custom GPUs they were given with: [that configuration's custom GPUs (None:
# none), {(key, value): answer}]. A fleet of 10,000 Deployments selects the same node label 10,000 times.
_LABEL_HINTS: list[Any] = [None, {}]
_LABEL_HINTS_MAX = 4096


def node_label_hint(key: str, value: str, labels: dict[str, str] | None = None) -> tuple[str | None, int | None, str, float | None] | None:
    """(GPU type, GPUs per node, vendor, memory GiB) that a node label says, None when the label says nothing
    about the GPU. The type is a canonical catalog name when it resolves, else the label's value (reported as a GPU
    outside the catalog); None with a vendor when the label names no GPU vramlint can tell. ``labels``: the
    other labels of the same selector (nvidia.com/gpu.memory is read with nvidia.com/gpu.family)."""
    if type(key) is not str or type(value) is not str or key == "nvidia.com/gpu.memory":
        return _node_label_hint(key, value, labels)  # (the memory label's answer depends on the other labels)
    custom = _CUSTOM.get()
    memo = _LABEL_HINTS[1]
    if _LABEL_HINTS[0] is not custom or len(memo) >= _LABEL_HINTS_MAX:
        memo = {}
        _LABEL_HINTS[:] = [custom, memo]
    found = memo.get((key, value), memo)
    if found is memo:
        found = memo[(key, value)] = _node_label_hint(key, value, labels)
    return found


def _node_label_hint(key: str, value: str, labels: dict[str, str] | None) -> tuple[str | None, int | None, str, float | None] | None:
    value = (value or "").strip()
    if is_placeholder(value):
        return None  # to be filled in: says no GPU
    custom = _CUSTOM.get()
    if custom and value and (key, value.lower()) in custom["labels"]:
        return custom["labels"][(key, value.lower())], None, "nvidia", None
    if key not in NODE_LABELS or not value:
        return None
    if key == "cloud.google.com/gke-tpu-accelerator":
        return value, None, "google-tpu", None
    if key in AMD_LABELS:
        table = _catalog()["label_values"].get(key, {})
        named = table.get(value.lower()) or resolve_hint(value)
        return (named if named and vendor_of(named) == "amd" else value), None, "amd", None
    if key.endswith("/instance-type") or key == "karpenter.k8s.aws/instance-family":
        chip = neuron_instance(value)
        if chip:
            return chip, None, "aws-neuron", None
    if key.endswith("/instance-type"):
        found = instance_type(value)
        return ((found[0], found[1], vendor_of(found[0]) or "nvidia", instance_memory_gib(value)) if found
                else (None, None, "nvidia", None))
    if key == "karpenter.k8s.aws/instance-family":
        return instance_family(value), None, "nvidia", None
    if key == "nvidia.com/gpu.memory":
        return _from_memory_label(value, (labels or {}).get("nvidia.com/gpu.family"))
    if key == "accelerator":
        named = resolve_hint(value)
        return (named, None, vendor_of(named) or "nvidia", None) if named else None
    table = _catalog()["label_values"].get(key, {})
    resolved = table.get(value.lower()) or resolve_hint(value) or resolve_hint(value.replace("_", "-"))
    return (resolved or value), None, (vendor_of(resolved) if resolved else None) or "nvidia", None


def _from_memory_label(value: str, family: str | None) -> tuple[str | None, int | None, str, float | None]:
    """GPU Feature Discovery's nvidia.com/gpu.memory (MiB, as NVML reports it) and gpu.family: the catalog GPU
    when they single one out, else only the memory: the smallest total CUDA reports on a catalog GPU of that size
    (NVML's figure is 0.4-0.9 GiB above it), so that the budget never counts memory the GPU may not have."""
    try:
        gib = int(float(value)) / 1024
    except (ValueError, OverflowError):  # not a number, or one past float64 (`1e999`)
        return None, None, "nvidia", None
    candidates = [s for s in _catalog()["specs"].values() if abs(s.total_gib - gib) <= 1.0 and s.total_gib <= gib + 0.1
                  and s.vendor == "nvidia"]
    ccs = GPU_FAMILIES.get((family or "").strip().lower())
    if ccs:
        candidates = [s for s in candidates if s.compute_capability in ccs]
    kinds = {(s.compute_capability, s.bf16, s.fp8) for s in candidates}
    if candidates and len(kinds) == 1 and ccs:
        best = min(candidates, key=lambda s: (s.total_gib, s.name))
        return best.name, None, "nvidia", None
    if candidates:
        return None, None, "nvidia", min(s.total_gib for s in candidates)
    return None, None, "nvidia", round(gib - 0.9, 2)
