"""The pods whose GPUs one vLLM engine spans: a KubeRay cluster (head + worker groups) or a LeaderWorkerSet group.

vLLM places its tensor x pipeline parallel workers on the whole Ray cluster it runs in: with
`--distributed-executor-backend ray`, or by itself when the engine needs more GPUs than its pod has and Ray is
installed (vllm/config ParallelConfig picks Ray then), so "TP 16 in a pod with 8 GPUs" is fine when the cluster
has 16. What each kind of pod gives the group follows the operators' own code:

- KubeRay (ray-operator v1.1 and later, `utils.GetWorkerGroupDesiredReplicas`, `common/pod.go`): a worker group runs
  clamp(`replicas`, `minReplicas`, `maxReplicas`) x `numOfHosts` pods (0 when `suspend`), and up to
  `maxReplicas` x `numOfHosts` when `enableInTreeAutoscaling` is on; each pod gives Ray `rayStartParams.num-gpus`,
  else the Ray container's `nvidia.com/gpu` limit. With the annotation `ray.io/overwrite-container-cmd: "true"`
  (on the RayCluster, copied to every pod, or on a group's pod template) KubeRay does not write the container's
  `ray start` command: a worker whose container then sets no command and no args runs its image's own
  entrypoint (for a vLLM image, vLLM's API server) and never joins the cluster. Without the annotation KubeRay
  writes `ray start` (then the container's own command, if any), so a Ray container without a command runs no
  vLLM server at all.
- The clusters inside other objects: RayService `rayClusterConfig`, RayJob `rayClusterSpec`, AIBrix
  RayClusterFleet `template.spec` (v0.2 - v0.4, which creates RayClusters from that template).
- LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, LWS v0.4 - v0.7): `size` pods per group (default 1), the leader
  from `leaderTemplate` (the worker template when absent) and `size - 1` workers.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import gpu_from_resources, is_map, is_seq, scalar_text, to_int
from vramlint.model import EngineGroup, GroupMember, Location, Problem
from vramlint.yamlload import MAX_DEPTH, join_path, lines_mention, node_location

OVERWRITE_CMD = "ray.io/overwrite-container-cmd"
_KUBERAY = "KubeRay ray-operator v1.1+ (GetWorkerGroupDesiredReplicas, rayStartParams num-gpus)"
_LWS = "LeaderWorkerSet v0.4-v0.7 (size pods per group: a leader and size-1 workers)"


def engine_group(doc: Any, obj: Any, path: str) -> EngineGroup | None:
    """The engine group an object's vLLM servers run in, or None when the object is no such group."""
    if not is_map(obj):
        return None
    kind = scalar_text(obj.get("kind")) or ""
    spec = obj.get("spec")
    if not is_map(spec):
        return None
    if kind == "LeaderWorkerSet":
        return _lws(doc, spec, join_path(path, "spec"))
    if not lines_mention(getattr(doc, "lines", None), "headGroupSpec"):
        return None  # no Ray cluster spec written in the file (10,000 Deployments are not each walked for one)
    found = _ray_cluster_spec(obj, path)
    if found is None:
        return None
    cluster, cpath, annotated = found
    return _ray(doc, cluster, cpath, annotated)


def _annotation_true(meta: Any) -> bool:
    annotations = meta.get("annotations") if is_map(meta) else None
    return is_map(annotations) and str(annotations.get(OVERWRITE_CMD) or "").strip().lower() == "true"


def _ray_cluster_spec(obj: Any, path: str) -> tuple[Any, str, bool] | None:
    """The mapping holding `headGroupSpec`, its path, and whether the cluster carries the overwrite annotation."""
    annotated = _annotation_true(obj.get("metadata"))
    # keys, not paths, on the stack: every object is walked, and the path is wanted only for the one found
    stack: list[tuple[Any, tuple, bool, int]] = [(obj, (), annotated, 0)]
    while stack:
        node, keys, ann, depth = stack.pop()
        if not is_map(node) or depth > min(MAX_DEPTH, 6):
            continue
        if is_map(node.get("headGroupSpec")):
            npath = path
            for key in keys:
                npath = join_path(npath, key)
            return node, npath, ann
        for key, value in node.items():
            if key in ("metadata", "status") or not is_map(value):
                continue
            # a RayClusterFleet's RayCluster template: its metadata annotations become the RayCluster's
            child_ann = ann or (key == "template" and _annotation_true(value.get("metadata")))
            stack.append((value, (*keys, key), child_ann, depth + 1))
    return None


def _ray_container(pod: Any) -> tuple[Any, int] | None:
    containers = pod.get("containers") if is_map(pod) else None
    if not is_seq(containers) or not containers or not is_map(containers[0]):
        return None
    return containers[0], 0  # KubeRay's RayContainerIndex: the first container runs Ray


def _pod_gpus(doc: Any, group: Any, gpath: str) -> tuple[int | None, Any, str]:
    """GPUs one pod of a Ray group gives the cluster, the pod spec, and the Ray container's path."""
    template = group.get("template")
    pod = template.get("spec") if is_map(template) else None
    params = group.get("rayStartParams")
    ppath = join_path(join_path(gpath, "template"), "spec")
    found = _ray_container(pod)
    cpath = join_path(join_path(ppath, "containers"), 0)
    if is_map(params) and "num-gpus" in params:
        return to_int(scalar_text(params.get("num-gpus"))), pod, cpath
    if found is None:
        return None, pod, cpath
    request = gpu_from_resources(doc.file, found[0], cpath)
    if request is None:
        return 0, pod, cpath
    # TPUs, Neuron cores, Gaudi: not GPUs vramlint counts; the group's capacity is then not known
    return (request.count if request.vendor == "nvidia" else None), pod, cpath


def _ray(doc: Any, cluster: Any, cpath: str, annotated: bool) -> EngineGroup:
    group = EngineGroup(kind="Ray cluster", source=_KUBERAY)
    head = cluster.get("headGroupSpec")
    hpath = join_path(cpath, "headGroupSpec")
    gpus, head_pod, head_path = _pod_gpus(doc, head, hpath)
    group.members.append(GroupMember("head", 1, gpus, location=node_location(doc.file, head, hpath)))
    head_template = head.get("template")
    _ray_start_only(doc.file, group, head_pod, head_path, annotated or (is_map(head_template)
                                                              and _annotation_true(head_template.get("metadata"))))
    autoscaling = cluster.get("enableInTreeAutoscaling") is True
    workers = cluster.get("workerGroupSpecs")
    if not is_seq(workers):
        return group
    for i, worker in enumerate(workers):
        if not is_map(worker):
            continue
        wpath = join_path(join_path(cpath, "workerGroupSpecs"), i)
        name = scalar_text(worker.get("groupName")) or f"#{i}"
        gpus, pod, container_path = _pod_gpus(doc, worker, wpath)
        member = GroupMember(f"worker group '{name}'", _worker_pods(worker, autoscaling), gpus,
                             location=node_location(doc.file, worker, wpath))
        template = worker.get("template")
        overwrite = annotated or (is_map(template) and _annotation_true(template.get("metadata")))
        found = _ray_container(pod)
        _ray_start_only(doc.file, group, pod, container_path, overwrite)
        if overwrite and found is not None:
            container = found[0]
            if not _has_words(container.get("command")) and not _has_words(container.get("args")):
                image = scalar_text(container.get("image")) or "its image"
                member.joins = False
                member.why = (f"with {OVERWRITE_CMD}: \"true\" KubeRay does not write its `ray start` command, and "
                              f"the container sets no command or args, so it runs the entrypoint of {image} "
                              "(for a vLLM image, vLLM's own API server) instead of joining the Ray cluster; give it "
                              "a command that runs $KUBERAY_GEN_RAY_START_CMD, or drop the annotation")
                member.location = node_location(doc.file, container, container_path) or member.location
        group.members.append(member)
    return group


def _ray_start_only(file: str, group: EngineGroup, pod: Any, container_path: str, overwrite: bool) -> None:
    """Without the overwrite annotation KubeRay writes the Ray container's command itself (`ray start`, then the
    container's own command if it has one): a container with none runs only Ray, no vLLM server."""
    found = _ray_container(pod)
    if overwrite or found is None:
        return
    if not _has_words(found[0].get("command")) and not _has_words(found[0].get("args")):
        where = node_location(file, found[0], container_path)
        group.ray_only[container_path] = where.line if where else None


def _has_words(value: Any) -> bool:
    if is_seq(value):
        return any(scalar_text(v) for v in value)
    return bool(scalar_text(value))


def _worker_pods(worker: Any, autoscaling: bool) -> int | None:
    if worker.get("suspend") is True:
        return 0
    hosts = to_int(worker.get("numOfHosts")) if "numOfHosts" in worker else 1
    low = to_int(worker.get("minReplicas")) if "minReplicas" in worker else 0
    high = to_int(worker.get("maxReplicas")) if "maxReplicas" in worker else None
    if hosts is None or low is None:
        return None
    if autoscaling:
        return None if high is None else high * hosts  # the autoscaler may add workers up to maxReplicas
    replicas = to_int(worker.get("replicas")) if "replicas" in worker else 0
    if replicas is None:
        return None
    count = max(replicas, low)
    if high is not None:
        count = min(count, high) if low <= high else high
    return count * hosts


def _lws(doc: Any, spec: Any, spath: str) -> EngineGroup | None:
    template = spec.get("leaderWorkerTemplate")
    if not is_map(template):
        return None
    tpath = join_path(spath, "leaderWorkerTemplate")
    size = to_int(template.get("size")) if "size" in template else 1
    worker = template.get("workerTemplate")
    leader = template.get("leaderTemplate") if is_map(template.get("leaderTemplate")) else worker
    lkey = "leaderTemplate" if is_map(template.get("leaderTemplate")) else "workerTemplate"
    group = EngineGroup(kind="LeaderWorkerSet group", source=_LWS)
    group.members.append(GroupMember("leader", 1, _lws_pod_gpus(doc, leader, join_path(tpath, lkey)),
                                     location=node_location(doc.file, leader, join_path(tpath, lkey))))
    group.members.append(GroupMember("workers", None if size is None else max(size - 1, 0),
                                     _lws_pod_gpus(doc, worker, join_path(tpath, "workerTemplate")),
                                     location=node_location(doc.file, worker, join_path(tpath, "workerTemplate"))))
    return group


def _lws_pod_gpus(doc: Any, template: Any, tpath: str) -> int | None:
    pod = template.get("spec") if is_map(template) else None
    containers = pod.get("containers") if is_map(pod) else None
    if not is_seq(containers):
        return None
    total = 0
    for i, container in enumerate(containers):
        if not is_map(container):
            continue
        request = gpu_from_resources(doc.file, container, join_path(join_path(join_path(tpath, "spec"), "containers"), i))
        if request is not None:
            if request.count is None or request.vendor != "nvidia":
                return None
            total += request.count
    return total


INT32_MAX = 2**31 - 1


def int32_problems(doc: Any, obj: Any, path: str) -> list[Problem]:
    """Counts the operators' Go types hold as int32 (LWS `spec.replicas` and `leaderWorkerTemplate.size`,
    KubeRay's worker group `replicas`, `minReplicas`, `maxReplicas`, `numOfHosts`) written past int32 or not whole:
    the operator's typed client cannot decode the object (encoding/json refuses the number for an int32 field),
    so it is never reconciled. A warning on the value's line; the group's pods are not counted from it."""
    from vramlint.yamlload import value_location

    fields: list[tuple[Any, str, str]] = []  # (mapping, key, its YAML path)
    kind = scalar_text(obj.get("kind")) or ""
    spec = obj.get("spec")
    if kind == "LeaderWorkerSet" and is_map(spec):
        spath = join_path(path, "spec")
        fields.append((spec, "replicas", spath))
        template = spec.get("leaderWorkerTemplate")
        if is_map(template):
            fields.append((template, "size", join_path(spath, "leaderWorkerTemplate")))
        owner = "LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, int32 fields)"
    else:
        found = _ray_cluster_spec(obj, path)
        if found is None:
            return []
        cluster, cpath, _annotated = found
        workers = cluster.get("workerGroupSpecs")
        for i, worker in enumerate(workers if is_seq(workers) else []):
            if is_map(worker):
                wpath = join_path(join_path(cpath, "workerGroupSpecs"), i)
                fields += [(worker, key, wpath) for key in ("replicas", "minReplicas", "maxReplicas", "numOfHosts")]
        owner = "KubeRay (ray.io/v1 WorkerGroupSpec, int32 fields)"
    bad: list[tuple[Any, str, str, Any]] = []
    for mapping, key, mpath in fields:
        value = mapping.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        whole = isinstance(value, int) or (value == value and value not in (float("inf"), float("-inf"))
                                           and value.is_integer())
        if not (whole and -INT32_MAX - 1 <= value <= INT32_MAX):
            bad.append((mapping, key, mpath, value))
    if not bad:
        return []
    # one cause, once an object: said on the first such field, the others named
    mapping, key, mpath, value = bad[0]
    shown = (f"a {len(str(abs(value)))}-digit number" if isinstance(value, int) and abs(value) >= 10**12
             else repr(value))
    others = f" (so are {', '.join(b[1] for b in bad[1:])})" if len(bad) > 1 else ""
    loc = value_location(doc.file, mapping, key, join_path(mpath, key)) or Location(doc.file, 1, 1)
    return [Problem(doc.file, loc.line, loc.column, (
        f"{key} is {shown}, which {owner} cannot hold{others}: its controller cannot decode this object (Go's "
        "encoding/json refuses the number for an int32 field), so it is never reconciled and its pods never "
        "start"), level="warning")]


def member_location(group: EngineGroup) -> Location | None:
    """Where the first pod kind that never joins is written (the finding's line), if any."""
    for m in group.members:
        if not m.joins:
            return m.location
    return None
