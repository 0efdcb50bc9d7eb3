"""A Ray cluster made of plain Kubernetes workloads (no KubeRay): a head pod whose command runs `ray start --head`
and then vLLM, and worker pods whose command only joins it (`ray start --address=HOST:PORT --block`), HOST a
Service that selects the head's pod.

vLLM's Ray executor places one rank on each GPU of the cluster (each worker actor asks Ray for one GPU), so the
engine spans the head pod and those workers: `join` makes that group (the head's server's `engine_group`) when
it is certain from the scanned files, i.e. the worker's address names a Service of the scanned files, in the
head's namespace, whose selector matches the head pod's labels. A worker whose address is an IP, a Service not
scanned, or a namespace that cannot be told is joined to nothing: the server is left as it was read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from vramlint.model import EngineGroup, GroupMember, Location, Server

_RAY_HEAD = re.compile(r"\bray\s+start\b[^;&|\n]*\s--head\b")
_ADDRESS = re.compile(r"^--address(?:=(.*))?$")
# `replicas` unset: 1 (Kubernetes' default); a Pod is one
_REPLICATED_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "Pod")
WORKLOAD_KINDS = ("Pod", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job")
MAX_RAY_PODS = 1000  # workers and Services joined per scan (past these: not joined)


@dataclass
class RayPod:
    """A workload's container that starts a Ray head before vLLM (``server`` its server) or joins a cluster."""

    role: str  # "head" | "worker"
    kind: str | None
    name: str | None
    namespace: str | None
    labels: dict[str, str]
    pods: int | None
    gpus: int | None
    location: Location | None
    address: str | None = None  # a worker's `--address` HOST
    server: Server | None = None


@dataclass
class ServiceRecord:
    name: str
    namespace: str | None
    selector: dict[str, str] = field(default_factory=dict)


def _plain_map(node: Any) -> dict[str, str]:
    if not isinstance(node, dict):
        return {}
    return {str(k): str(v) for k, v in node.items() if isinstance(v, (str, int, float, bool))}


def _namespace(obj: Any) -> str | None:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    value = meta.get("namespace") if isinstance(meta, dict) else None
    return str(value) if isinstance(value, str) else None


def _labels(hit: Any) -> dict[str, str]:
    meta = hit.metadata[0] if getattr(hit, "metadata", None) else None
    return _plain_map(meta.get("labels")) if isinstance(meta, dict) else {}


def _words(container: Any) -> list[str]:
    words: list[str] = []
    for key in ("command", "args"):
        value = container.get(key)
        if isinstance(value, str):
            words.append(value)
        elif isinstance(value, list):
            words.extend(str(w) for w in value if isinstance(w, (str, int, float)))
    return words


def runs_ray_head(words: list[str]) -> bool:
    """Whether a container's command line starts a Ray head (`ray start --head`, in a `sh -c` script too)."""
    return _RAY_HEAD.search(" ".join(words)) is not None


def worker_address(words: list[str]) -> str | None:
    """The HOST of a Ray worker's `ray start --address=HOST:PORT` (a `sh -c` script's words too), or None."""
    texts = " ".join(words).split()
    for k, word in enumerate(texts):
        m = _ADDRESS.match(word)
        if m is None:
            continue
        value = m.group(1) if m.group(1) is not None else (texts[k + 1] if k + 1 < len(texts) else "")
        host = value.strip("'\"").rsplit(":", 1)[0] if value else ""
        return host or None
    return None


def read_pods(doc: Any, obj: Any, kind: str, servers: list[Server], records: Any) -> None:
    """The Ray heads and workers among the containers of a workload ``obj`` of ``kind`` (``servers``: those read
    from it), into ``records.ray_pods``."""
    from vramlint.cmdline import joins_ray_cluster
    from vramlint.extract.podspec import find_podspecs, gpu_from_resources
    from vramlint.yamlload import join_path, node_location

    if kind not in WORKLOAD_KINDS:
        return
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = str(meta.get("name")) if isinstance(meta, dict) and isinstance(meta.get("name"), str) else None
    namespace = _namespace(obj)
    by_path = {s.location.yaml_path: s for s in servers if s.location is not None}
    for hit in find_podspecs(obj):
        containers = hit.node.get("containers")
        pods = hit.replicas if hit.replicas is not None else (1 if kind in _REPLICATED_KINDS else None)
        for index, container in enumerate(containers if isinstance(containers, list) else []):
            if not isinstance(container, dict):
                continue
            words = _words(container)
            if not any("ray" in w for w in words):
                continue
            cpath = join_path(join_path(hit.path, "containers"), index)
            server = by_path.get(cpath)
            if server is not None and runs_ray_head(words):
                records.ray_pods.append(RayPod("head", kind, name, namespace, _labels(hit), pods, None,
                                               server.location, server=server))
            elif server is None and joins_ray_cluster(words):
                address = worker_address(words)
                if address is None:
                    continue
                gpu = gpu_from_resources(doc.file, container, cpath)
                where = (gpu.location if gpu is not None else None) or node_location(doc.file, container, cpath)
                # no GPU request: not known (a node's runtime may still show the container its GPUs)
                records.ray_pods.append(RayPod("worker", kind, name, namespace, _labels(hit), pods,
                                               gpu.count if gpu is not None else None, where, address=address))


def service_record(obj: Any) -> ServiceRecord | None:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    spec = obj.get("spec") if isinstance(obj, dict) else None
    selector = _plain_map(spec.get("selector")) if isinstance(spec, dict) else {}
    if not isinstance(name, str) or not selector:
        return None
    return ServiceRecord(name, _namespace(obj), selector)


def _service_and_namespace(host: str) -> tuple[str, str | None]:
    """`svc`, `svc.ns`, `svc.ns.svc`, `svc.ns.svc.cluster.local`: the Service and the namespace the name says."""
    parts = host.split(".")
    return parts[0], parts[1] if len(parts) > 1 else None


def join(pods: list[RayPod], services: list[ServiceRecord]) -> None:
    """The engine group of each Ray head's server from the workers that reach it through a scanned Service."""
    heads = [p for p in pods if p.role == "head" and p.server is not None and p.server.engine_group is None]
    workers = [p for p in pods if p.role == "worker"][:MAX_RAY_PODS]
    # the workers by the (Service, namespace) they reach, and the Services by namespace, made once: each head
    # then looks only at its own namespace's Services and their workers, not at every worker of the scan
    reaching: dict[tuple[str, str | None], list[RayPod]] = {}
    order = {id(worker): k for k, worker in enumerate(workers)}
    for worker in workers:
        if worker.address is not None:
            service, said_namespace = _service_and_namespace(worker.address)
            namespace = said_namespace if said_namespace is not None else worker.namespace
            reaching.setdefault((service, namespace), []).append(worker)
    by_namespace: dict[str | None, list[ServiceRecord]] = {}
    for record in services[:MAX_RAY_PODS]:
        by_namespace.setdefault(record.namespace, []).append(record)
    for head in heads:
        names = {s.name for s in by_namespace.get(head.namespace, [])
                 if all(head.labels.get(k) == v for k, v in s.selector.items())}
        if not names:
            continue
        # (in the workers' order, as they were scanned)
        joined = sorted((w for name in names for w in reaching.get((name, head.namespace), [])),
                        key=lambda w: order[id(w)])
        if not joined:
            continue
        gpu = head.server.gpu  # as the joins before this one left it (devices narrowed by CUDA_VISIBLE_DEVICES)
        members = [GroupMember(f"head {head.kind} {head.name}", head.pods, gpu.count if gpu is not None else None,
                               location=head.location)]
        members += [GroupMember(f"worker {w.kind} {w.name}", w.pods, w.gpus, location=w.location) for w in joined]
        head.server.engine_group = EngineGroup(
            kind="Ray cluster", members=members,
            source="Ray: worker pods that `ray start --address` a Service selecting the head pod (vLLM's Ray "
                   "executor places one rank per GPU of the cluster)",
            fix="add worker replicas or GPUs per worker pod, or lower the parallel size")
