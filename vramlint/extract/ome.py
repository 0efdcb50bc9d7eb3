"""OME (sgl-project/ome, `ome.io/v1beta1`): ServingRuntime / ClusterServingRuntime, read as OME builds the pods.

OME's runtime spec (pkg/apis/ome/v1beta1/servingruntime_types.go, inference_service.go) puts each component's
main container in a `runner` (a Container) beside the component's own pod spec fields (volumes, nodeSelector,
affinity, tolerations...): `engineConfig` is the serving engine, `decoderConfig` the decode engine of a
prefill/decode split, `routerConfig` a router (not an engine). For one pod per replica the engine's pod is the
component's pod spec with its runner as the main container (pkg/controller/v1beta1/inferenceservice/components/
engine.go, `reconcilePodSpec`: `basePodSpec = engineSpec.PodSpec`, `runnerSpec = engineSpec.Runner`); the
InferenceService that selects the runtime adds the model (MODEL_PATH: the BaseModel's storage path, base.go
`UpdateEnvVariables`) and may override resources and arguments. A runtime alone is a template: its server is read
from the runner, the model left to OME. A multi-node runtime (`leader` / `worker`: a Ray cluster over the leader and
`worker.size` workers) is said, not read: its parallelism spans pods vramlint does not join here.

Read from OME's source at sgl-project/ome 17b77ed. OME's kinds share names with KServe's (ServingRuntime,
ClusterServingRuntime, InferenceService) but not their shape, so this entry comes before KServe's by API group.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import PodSpecHit, container_server, is_map, object_context, scalar_text
from vramlint.extract.records import Records
from vramlint.model import Location, Problem
from vramlint.yamlload import join_path, node_location

# (spec key, what the component is)
_ENGINES = (("engineConfig", "engine"), ("decoderConfig", "decode engine"))


def extract_ome(doc: Any, obj: Any, path: str, records: Records) -> bool:
    """Record the engine servers of an OME runtime; True when handled here (False: another OME kind)."""
    kind = scalar_text(obj.get("kind")) or ""
    if kind not in ("ServingRuntime", "ClusterServingRuntime"):
        return False
    spec = obj.get("spec")
    if not is_map(spec):
        return True
    ctx = object_context(doc, obj, path)
    spath = join_path(path, "spec")
    for key, role in _ENGINES:
        component = spec.get(key)
        if not is_map(component):
            continue
        cpath = join_path(spath, key)
        if is_map(component.get("leader")) or is_map(component.get("worker")):
            loc = node_location(doc.file, component, cpath) or Location(doc.file, 1, 1, yaml_path=cpath)
            records.problems.append(Problem(
                doc.file, loc.line, loc.column,
                f"OME {kind} {ctx.name!r}: a multi-node {role} (leader and workers, a Ray cluster across the pods): "
                "its vLLM server is not checked", level="note"))
            continue
        runner = component.get("runner")
        if not is_map(runner):
            continue
        hit = PodSpecHit(component, cpath, None, None)
        server, problems = container_server(doc, ctx, hit, 0, runner, records=records,
                                            container_path=join_path(cpath, "runner"))
        records.problems.extend(problems)
        if server is None:
            continue
        server.notes.append(f"OME {kind} {ctx.name!r}: the {role}'s runner, a runtime template; the model "
                            "(MODEL_PATH) and any overrides come from the InferenceService that selects it")
        records.servers.append(server)
    return True
