"""NVIDIA Dynamo's DynamoGraphDeployment of API version v1alpha1 (`spec.services`), read as its operator builds pods.

Dynamo's operator (ai-dynamo/dynamo, deploy/operator/api/v1alpha1: dynamographdeployment_types.go,
dynamocomponentdeployment_types.go, common.go) takes `spec.services`, a map from a component's name to its
DynamoComponentDeploymentSharedSpec: `componentType` (frontend, worker, planner, ...), `replicas`, `envs` (variables
of the component's containers), `resources.limits` / `requests` as a ResourceItem (`gpu`: the GPUs of each pod, of
the resource `gpuType`, `nvidia.com/gpu` when not set), `multinode.nodeCount` (the pods of one engine: "Total
number of GPUs is NumberOfNodes * GPU limit"), and `extraPodSpec`: a PodSpec whose `mainContainer` overrides the
component's main container (its command, args, env and image; without an image the operator's default runtime
image, whose vLLM release the file does not say). A worker whose main container runs `python3 -m dynamo.vllm` is a
vLLM engine; the frontend, planner and other engines' workers are not. The later shape (v1beta1
dynamographdeployment_types.go: `spec.components`, a list keyed by each entry's logical `name`, with `type`,
`replicas`, `multinode` and a `podTemplate` whose container `main` the operator completes) holds ordinary pod specs:
they are read as plain workloads, each server named after its component, and a multinode component's engine spans
its nodeCount pods as in v1alpha1.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import (
    PodSpecHit,
    container_server,
    gpu_from_count_key,
    is_map,
    is_seq,
    object_context,
    scalar_text,
    to_int,
)
from vramlint.extract.records import Records
from vramlint.model import EngineGroup, GroupMember
from vramlint.yamlload import join_path, value_location

_SOURCE = "NVIDIA Dynamo operator (v1alpha1 DynamoGraphDeployment: multinode.nodeCount pods x resources gpu)"


def extract_graph(doc: Any, obj: Any, path: str, records: Records) -> bool:
    """The vLLM workers of a v1alpha1 graph; False when the object has no `spec.services` map (the v1beta1 shape,
    read as plain pod specs)."""
    spec = obj.get("spec")
    services = spec.get("services") if is_map(spec) else None
    if not is_map(services):
        components = spec.get("components") if is_map(spec) else None
        return is_seq(components) and _extract_components(doc, obj, path, components, records)
    ctx = object_context(doc, obj, path)
    spath = join_path(join_path(path, "spec"), "services")
    file = doc.file
    for name, component in services.items():
        if not is_map(component):
            continue
        cpath = join_path(spath, str(name))
        extra = component.get("extraPodSpec")
        main = extra.get("mainContainer") if is_map(extra) else None
        if not is_map(main):
            continue
        epath = join_path(cpath, "extraPodSpec")
        replicas = to_int(component.get("replicas"))
        hit = PodSpecHit(extra, epath, replicas if replicas is not None else 1, None)
        envs = component.get("envs")

        def add_envs(server, envs=envs, cpath=cpath) -> None:
            # the component's `envs` go into each of its containers; the main container's own `env` wins
            if not is_seq(envs):
                return
            for k, item in enumerate(envs):
                if is_map(item) and isinstance(item.get("name"), str) and item["name"] not in server.env:
                    server.env[item["name"]] = scalar_text(item.get("value")) if "value" in item else None
                    loc = value_location(file, item, "name", join_path(join_path(join_path(cpath, "envs"), k), "name"))
                    if loc is not None:
                        server.env_locations[item["name"]] = loc

        server, problems = container_server(doc, ctx, hit, 0, main, records=records,
                                            before_invocation=add_envs,
                                            container_path=join_path(epath, "mainContainer"))
        records.problems.extend(problems)
        if server is None:
            continue
        server.name = str(name)
        if server.gpu is None or server.gpu.count is None:
            gpu = _component_gpu(file, component, cpath)
            if gpu is not None:
                server.gpu = gpu
        nodes = _node_count(component)
        if nodes is not None and nodes > 1:
            server.engine_group = _multinode_group(file, component, cpath, nodes, server)
        if server.image is None:
            server.notes.append(f"Dynamo component {name!r}: no image in the file, so the operator's default "
                                "runtime image runs it (its vLLM release is not known here)")
        records.servers.append(server)
    return True


def _extract_components(doc: Any, obj: Any, path: str, components: Any, records: Records) -> bool:
    """The servers of a v1beta1 graph's pod templates (read as plain workloads), named after their component."""
    from vramlint.extract.podspec import extract_pod_objects

    found = extract_pod_objects(doc, obj, path, records)
    cbase = join_path(join_path(path, "spec"), "components")
    for k, component in enumerate(components):
        if not is_map(component):
            continue
        cpath = join_path(cbase, k)
        mine = [s for s in found if s.location.yaml_path.startswith(cpath + ".")]
        name = scalar_text(component.get("name"))
        nodes = _node_count(component)
        for server in mine:
            if name:
                server.name = name
            if nodes is not None and nodes > 1 and server.engine_group is None:
                server.engine_group = _multinode_group(doc.file, component, cpath, nodes, server)
    return True


def _multinode_group(file: str, component: Any, cpath: str, nodes: int, server: Any) -> EngineGroup:
    multinode = component.get("multinode")
    return EngineGroup(
        kind="Dynamo multinode component", source=_SOURCE,
        members=[GroupMember("nodes", nodes, server.gpu.count if server.gpu is not None else None,
                             location=value_location(file, multinode, "nodeCount",
                                                     join_path(join_path(cpath, "multinode"), "nodeCount")))],
        fix="raise multinode.nodeCount or the component's resources gpu, or lower the parallel size")


def _component_gpu(file: str, component: Any, cpath: str):  # noqa: ANN202 - GpuRequest | None
    resources = component.get("resources")
    if not is_map(resources):
        return None
    rpath = join_path(cpath, "resources")
    for section in ("limits", "requests"):
        item = resources.get(section)
        if is_map(item) and item.get("gpu") is not None:
            return gpu_from_count_key(file, item, "gpu", join_path(rpath, section), scalar_text(item.get("gpuType")),
                                      f"Dynamo component resources.{section}.gpu: {scalar_text(item.get('gpu'))}")
    return None


def _node_count(component: Any) -> int | None:
    multinode = component.get("multinode")
    if not is_map(multinode):
        return None
    count = to_int(multinode.get("nodeCount"))
    return 2 if count is None and "nodeCount" not in multinode else count  # kubebuilder default 2
