"""The GPU of the Karpenter NodePool a pod selects: a pod whose nodeSelector (or required node affinity) names
labels such as `role: gpu-worker` or `karpenter.sh/nodepool: gpu`, and a NodePool among the scanned files whose
nodes carry them, with requirements that restrict the instance type, family or GPU name.

Kubernetes' matching, as the scheduler and Karpenter apply it: every nodeSelector label must be on the node; of
the required affinity's nodeSelectorTerms one must match, all expressions of it; a NoSchedule/NoExecute taint of
the pool must be tolerated. A NodePool's nodes carry `spec.template.metadata.labels`, `karpenter.sh/nodepool:
<name>`, and for each requirement a value the requirement allows; a well-known label the pool leaves open
(zone, architecture, capacity type) can take any value. The GPU is read from the pool's requirements on GPU
labels (`vramlint.gpus.NODE_LABELS`: instance types, families, GPU names, in the order they are trusted) as a
node affinity on them is read; pools that allow several GPU models give a fleet, budgeted on each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vramlint.extract.podspec import (
    FAMILY_ONLY,
    NodeSelection,
    Requirement,
    read_node_selection,
    read_requirements,
)
from vramlint.model import GpuRequest, Location, Server

KARPENTER_GROUP = "karpenter.sh/"
POOL_NAME_LABEL = "karpenter.sh/nodepool"
# Label prefixes Karpenter treats as well known: a pool that does not restrict them may give a node any value
_WELL_KNOWN = ("kubernetes.io/", "node.kubernetes.io/", "topology.kubernetes.io/", "beta.kubernetes.io/",
               "karpenter.sh/", "karpenter.k8s.aws/", "karpenter.azure.com/", "eks.amazonaws.com/")
MAX_POOLS = 1000  # NodePools kept per scan: a cluster has a handful


@dataclass
class NodePoolRecord:
    name: str
    file: str
    location: Location | None
    labels: dict[str, str]
    requirements: list[Requirement]
    taints: list[tuple[str, str | None, str]]  # key, value, effect
    kind: str = "Karpenter NodePool"  # or "GKE ComputeClass" (one record per priority)


# --- reading ----------------------------------------------------------------------------------------------


def read_node_pool(doc: Any, obj: Any, path: str) -> NodePoolRecord | None:
    """A Karpenter NodePool (karpenter.sh/v1, v1beta1) as plain data; None for anything else."""
    from vramlint.extract.podspec import is_map, is_seq, scalar_text
    from vramlint.yamlload import join_path, node_location

    api = scalar_text(obj.get("apiVersion")) or ""
    if scalar_text(obj.get("kind")) != "NodePool" or not api.startswith(KARPENTER_GROUP):
        return None
    meta = obj.get("metadata")
    name = scalar_text(meta.get("name")) if is_map(meta) else None
    spec = obj.get("spec")
    template = spec.get("template") if is_map(spec) else None
    if not name or not is_map(template):
        return None
    tpath = join_path(join_path(path, "spec"), "template")
    tmeta = template.get("metadata")
    raw_labels = tmeta.get("labels") if is_map(tmeta) else None
    labels = {str(k): scalar_text(v) or "" for k, v in raw_labels.items()} if is_map(raw_labels) else {}
    tspec = template.get("spec")
    requirements = read_requirements(doc.file, tspec.get("requirements") if is_map(tspec) else None,
                                 join_path(join_path(tpath, "spec"), "requirements"))
    taints = []
    raw_taints = tspec.get("taints") if is_map(tspec) else None
    if is_seq(raw_taints):
        for t in raw_taints[:100]:
            if is_map(t) and scalar_text(t.get("key")):
                taints.append((scalar_text(t.get("key")) or "", scalar_text(t.get("value")),
                               scalar_text(t.get("effect")) or "NoSchedule"))
    return NodePoolRecord(name, doc.file, node_location(doc.file, obj, path), labels, requirements, taints)


COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
MACHINE_FAMILY_LABEL = "cloud.google.com/machine-family"


def read_compute_class(doc: Any, obj: Any, path: str) -> list[NodePoolRecord]:
    """A GKE ComputeClass (cloud.google.com/v1): one record per `spec.priorities` entry, since GKE may create the
    nodes of any of them; their nodes carry `cloud.google.com/compute-class: <name>`. GKE tolerates the class's
    own taint and the GPU taint for the pods that select it, so no taint is kept."""
    from vramlint.extract.podspec import is_map, is_seq, scalar_text
    from vramlint.yamlload import join_path, node_location, value_location

    api = scalar_text(obj.get("apiVersion")) or ""
    if scalar_text(obj.get("kind")) != "ComputeClass" or not api.startswith("cloud.google.com/"):
        return []
    meta = obj.get("metadata")
    name = scalar_text(meta.get("name")) if is_map(meta) else None
    spec = obj.get("spec")
    priorities = spec.get("priorities") if is_map(spec) else None
    if not name or not is_seq(priorities):
        return []
    ppath = join_path(join_path(path, "spec"), "priorities")
    out = []
    for i, prio in enumerate(priorities[:100]):
        if not is_map(prio):
            continue
        ipath = join_path(ppath, i)
        reqs = []
        gpu = prio.get("gpu")
        if is_map(gpu) and scalar_text(gpu.get("type")):
            reqs.append(Requirement("cloud.google.com/gke-accelerator", "In", [scalar_text(gpu.get("type")) or ""],
                                    value_location(doc.file, gpu, "type", join_path(join_path(ipath, "gpu"), "type"))))
        for field_name, key in (("machineType", "node.kubernetes.io/instance-type"),
                                ("machineFamily", MACHINE_FAMILY_LABEL)):
            value = scalar_text(prio.get(field_name))
            if value:
                reqs.append(Requirement(key, "In", [value],
                                        value_location(doc.file, prio, field_name, join_path(ipath, field_name))))
        out.append(NodePoolRecord(f"{name} (priority {i + 1})", doc.file, node_location(doc.file, prio, ipath),
                                  {COMPUTE_CLASS_LABEL: name}, reqs, [], kind="GKE ComputeClass"))
    return out


# --- matching ---------------------------------------------------------------------------------------------


def _allows(req: Requirement, value: str | None) -> bool:
    """Whether a node whose label ``req.key`` is ``value`` (None: absent) meets the requirement."""
    op = req.operator
    if op == "In":
        return value is not None and value in req.values
    if op == "NotIn":
        return value is None or value not in req.values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and req.values:
        try:
            a, b = int(value), int(req.values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def _pool_may_have(pool: NodePoolRecord, key: str, value: str | None) -> bool:
    """Whether a node of ``pool`` may carry label ``key`` = ``value`` (None: may lack the label)."""
    if key in pool.labels:
        return pool.labels[key] == value
    if key == POOL_NAME_LABEL:
        return value == pool.name
    own = [r for r in pool.requirements if r.key == key]
    if own:
        if value is None:
            return all(_allows(r, None) for r in own)
        return all(_allows(r, value) for r in own)
    if value is None:
        return True
    return key.startswith(_WELL_KNOWN)  # an open well-known label takes the value the pod asks for


def _pool_may_meet(pool: NodePoolRecord, req: Requirement) -> bool:
    """Whether some node of ``pool`` meets the pod's affinity expression ``req``."""
    if req.key in pool.labels or req.key == POOL_NAME_LABEL:
        value = pool.labels.get(req.key, pool.name if req.key == POOL_NAME_LABEL else None)
        return _allows(req, value)
    own = [r for r in pool.requirements if r.key == req.key]
    if req.operator == "In":
        return any(_pool_may_have(pool, req.key, v) for v in req.values) if (own or not req.key.startswith(
            _WELL_KNOWN)) else True
    if req.operator in ("NotIn", "DoesNotExist"):
        if own and all(r.operator == "In" for r in own):
            return any(_allows(req, v) for r in own for v in r.values)
        return True
    if req.operator == "Exists":
        return bool(own) or req.key.startswith(_WELL_KNOWN)
    return True  # Gt / Lt on a pool's label: not narrowed here


def _tolerated(pool: NodePoolRecord, tolerations: list[tuple[str | None, str, str | None, str | None]]) -> bool:
    for key, value, effect in pool.taints:
        if effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any((tk is None and top == "Exists") or (tk == key and (top == "Exists" or tv == value))
                   and (te is None or te == effect) for tk, top, tv, te in tolerations):
            return False
    return True


def selected_pools(selection: NodeSelection, pools: list[NodePoolRecord]) -> list[NodePoolRecord]:
    out = []
    names_class = COMPUTE_CLASS_LABEL in selection.selector or any(
        r.key == COMPUTE_CLASS_LABEL for term in selection.terms for r in term)
    for pool in pools:
        if pool.kind == "GKE ComputeClass" and not names_class:
            continue  # GKE gives a class's nodes only to the pods that select the class
        if not all(_pool_may_have(pool, k, v) for k, v in selection.selector.items()):
            continue
        if selection.terms and not any(all(_pool_may_meet(pool, r) for r in term) for term in selection.terms):
            continue
        if _tolerated(pool, selection.tolerations):
            out.append(pool)
    return out


# --- the GPU ------------------------------------------------------------------------------------------------


def pool_gpu(pool: NodePoolRecord) -> tuple[list[str] | None, Requirement | None, str | None, set[str]]:
    """(GPU models a pool's nodes may have, the requirement that says so, the label value, their vendors) -
    models None when the pool does not say its GPU."""
    from vramlint.extract.podspec import _hint_from_label, _label_keys

    keys = _label_keys()
    for key in keys:  # a label the pool's nodes all carry
        if key in pool.labels and pool.labels[key]:
            hint = _hint_from_label(key, pool.labels[key])
            if hint[0] is not None:
                return [hint[0]], None, f"{key}: {pool.labels[key]}", {hint[2]}
    for key in keys:
        for req in pool.requirements:
            if req.key != key or req.operator != "In" or not req.values:
                continue
            hints = [_hint_from_label(key, v) for v in req.values]
            if all(h[0] is None for h in hints):
                continue  # no value names a GPU: another requirement may
            models = [h[0] for h in hints]
            shown = f"{key} In [{', '.join(req.values)}]"
            if None in models:
                return None, req, shown, set()
            return list(dict.fromkeys(models)), req, shown, {h[2] for h in hints}
    from vramlint import gpus

    for req in pool.requirements:  # a ComputeClass's machine family: the GPUs of its machine types
        if req.key == MACHINE_FAMILY_LABEL and req.operator == "In" and req.values:
            families = [gpus.gcp_machine_family(v) for v in req.values]
            if all(families):
                models = list(dict.fromkeys(m for f in families for m in f))
                return models, req, f"machineFamily {', '.join(req.values)}", {gpus.vendor_of(m) or "nvidia"
                                                                                for m in models}
    return None, None, None, set()


def _shares(pool: NodePoolRecord) -> list[float]:
    from vramlint.extract.podspec import resolve_instance_memory

    found = []
    for req in pool.requirements:
        if req.key.endswith("/instance-type") and req.operator == "In":
            found.extend(x for x in (resolve_instance_memory(v) for v in req.values) if x is not None)
    return found


# Label comparisons of one join: pods that select nodes alike are compared once, but 10,000 pods that each select
# differently, against 1,000 pools, must not take minutes
MAX_COMPARISONS = 2_000_000  # label comparisons


def _selection_key(selection: NodeSelection) -> tuple:
    return (tuple(sorted(selection.selector.items())),
            tuple(tuple((r.key, r.operator, tuple(r.values)) for r in term) for term in selection.terms),
            tuple(selection.tolerations))


def join_node_pools(servers: list[Server], pools: list[NodePoolRecord]) -> int:
    """Give each server whose GPU model is not said, and whose pod selects nodes, the GPU of the NodePools of
    ``pools`` it may land on. Returns how many servers were left out at vramlint's comparison limit."""
    if not pools:
        return 0
    pools = pools[:MAX_POOLS]
    chosen_by: dict[tuple, list[NodePoolRecord]] = {}
    gpu_of: dict[int, tuple] = {}  # id(pool) -> pool_gpu(pool): a pool that many pods select is read once
    budget, left_out = MAX_COMPARISONS, 0
    for server in servers:
        gpu = server.gpu
        selection = getattr(gpu, "node_selection", None) if gpu is not None else None
        if selection is None or (gpu.type is not None and gpu.type not in FAMILY_ONLY) or gpu.fleet \
                or gpu.memory_gib is not None:
            continue
        key = _selection_key(selection)
        if key not in chosen_by:
            cost = len(pools) * (1 + len(selection.selector) + sum(len(term) for term in selection.terms))
            if budget < cost:
                left_out += 1
                continue
            budget -= cost
            chosen_by[key] = selected_pools(selection, pools)
        chosen = chosen_by[key]
        if chosen:
            _apply(server, gpu, selection, chosen, gpu_of)
    return left_out


def _apply(server: Server, gpu: GpuRequest, selection: NodeSelection, chosen: list[NodePoolRecord],
           gpu_of: dict[int, tuple]) -> None:
    models: list[str] = []
    vendors: set[str] = set()
    said: list[str] = []
    location = None
    for pool in chosen:
        if id(pool) not in gpu_of:
            gpu_of[id(pool)] = pool_gpu(pool)
        found, req, shown, found_vendors = gpu_of[id(pool)]
        where = f"{pool.kind} {pool.name} ({pool.file}{f':{pool.location.line}' if pool.location else ''})"
        if found is None:
            why = f"{shown}, which names a GPU vramlint does not know" if shown else \
                "its requirements do not restrict the instance type, family or GPU name"
            server.notes.append(f"{selection.evidence} selects {where}: {why}, so the GPU it gives is not known")
            return
        models.extend(m for m in found if m not in models)
        vendors |= found_vendors
        said.append(f"{where} {shown}")
        if location is None and req is not None:
            location = req.location
    if vendors != {gpu.vendor}:
        server.notes.append(f"{selection.evidence} selects {'; '.join(said)}: {', '.join(models)}, not the "
                            f"{gpu.vendor} accelerator the container asks for, so the GPU is not known")
        return
    evidence = f"{selection.evidence} -> {'; '.join(said)}"
    gpu.evidence = f"{gpu.evidence}; {evidence}" if gpu.evidence else evidence
    gpu.location = location or gpu.location
    shares = [share for pool in chosen for share in _shares(pool)]
    if shares:  # partial-GPU sizes: the smallest share any of them gets (never budget more than it has)
        gpu.memory_gib = min(shares)
        gpu.evidence += f" (part of one GPU: {gpu.memory_gib:g} GiB)"
    if len(models) == 1:
        gpu.type = models[0]
    else:
        gpu.fleet = models  # the pods may land on any: the budget is computed on each
        gpu.evidence += " (several GPU models: the pods may land on any)"


__all__ = ["NodePoolRecord", "NodeSelection", "join_node_pools", "read_compute_class", "read_node_pool",
           "read_node_selection", "selected_pools"]
