"""AI Runway's `ModelDeployment` (airunway.ai/v1alpha1, kaito-project/kubeairunway, formerly KubeFoundry).

A ModelDeployment names a model (`spec.model.id`), an engine (`spec.engine.type`: vllm, sglang, trtllm, llamacpp)
and resources; a provider (Dynamo, KAITO, KubeRay, picked by `spec.provider.name` or by the controller) turns it
into the engine's own objects. Only `engine.type: vllm` is a vLLM server. The command line is read as the Dynamo
provider builds it (controller/internal/providers/dynamo/transformer.go, `buildEngineArgs`): the model, then
`--served-model-name` (model.servedName), `--max-model-len` (engine.contextLength), `--trust-remote-code`
(engine.trustRemoteCode), then each `engine.args` entry as `--KEY VALUE` (`--KEY` alone for an empty value). GPUs:
`resources.gpu.count` of `resources.gpu.type` (default nvidia.com/gpu) per pod; in `serving.mode: disaggregated`,
prefill and decode workers are two servers with `scaling.prefill` / `scaling.decode` GPUs. `spec.nodeSelector`
is copied to the pods. The image is `spec.image`, else the provider's default (its vLLM version is not known here).
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import (
    apply_invocation,
    combine_gpu,
    gpu_from_count_key,
    gpu_from_scheduling,
    is_map,
    object_context,
    scalar_text,
    to_int,
)
from vramlint.extract.records import Records
from vramlint.model import Location, Problem, Server
from vramlint.versions import version_from_image
from vramlint.yamlload import join_path, node_location, value_location


def extract_model_deployment(doc: Any, obj: Any, path: str, records: Records) -> None:
    from vramlint.cmdline import Token

    spec = obj.get("spec")
    if not is_map(spec):
        return
    file, spath = doc.file, join_path(path, "spec")
    engine, epath = spec.get("engine"), join_path(spath, "engine")
    engine = engine if is_map(engine) else {}
    if (scalar_text(engine.get("type")) or "").lower() != "vllm":
        return  # another engine (llama.cpp, SGLang, TensorRT-LLM): not a vLLM server
    model, mpath = spec.get("model"), join_path(spath, "model")
    model = model if is_map(model) else {}

    def at(node: Any, npath: str, key: str) -> Location | None:
        return value_location(file, node, key, join_path(npath, key)) if is_map(node) else None

    args = [Token(scalar_text(model.get("id")), at(model, mpath, "id"))]
    if scalar_text(model.get("servedName")):
        args += [Token("--served-model-name", at(model, mpath, "servedName")), Token(scalar_text(model["servedName"]), None)]
    if to_int(engine.get("contextLength")):
        loc = at(engine, epath, "contextLength")
        args += [Token("--max-model-len", loc), Token(str(to_int(engine["contextLength"])), loc)]
    if engine.get("trustRemoteCode") is True:
        args.append(Token("--trust-remote-code", at(engine, epath, "trustRemoteCode")))
    extra = engine.get("args")
    if is_map(extra):
        apath = join_path(epath, "args")
        for key, value in extra.items():
            loc = value_location(file, extra, key, join_path(apath, key))
            args.append(Token(f"--{key}", loc))
            if scalar_text(value):
                args.append(Token(scalar_text(value), loc))

    serving = spec.get("serving")
    disaggregated = is_map(serving) and scalar_text(serving.get("mode")) == "disaggregated"
    scaling, scpath = spec.get("scaling"), join_path(spath, "scaling")
    scaling = scaling if is_map(scaling) else {}
    if disaggregated:
        roles = [(role, scaling.get(role), join_path(scpath, role)) for role in ("prefill", "decode")]
    else:
        roles = [(None, spec.get("resources"), join_path(spath, "resources"))]
    ctx = object_context(doc, obj, path)
    image = scalar_text(spec.get("image"))
    for role, resources, rpath in roles:
        location = node_location(file, resources if is_map(resources) else spec, rpath if is_map(resources) else spath) \
            or Location(file, 1, 1, yaml_path=spath)
        name = f"{ctx.name}/{role}" if role else ctx.name
        server = _server(file, location, name, image, args, records)
        if server is None:
            continue
        server.image_location = at(spec, spath, "image")
        server.replicas = to_int(resources.get("replicas")) if role and is_map(resources) else \
            to_int(scaling.get("replicas")) or 1
        server.gpu = combine_gpu(_gpu_request(file, resources, rpath), gpu_from_scheduling(file, spec, spath))
        server.ignore_rules = dict(ctx.ignore_rules)
        if role in (None, "prefill"):  # said once per object
            server.notes.append("ModelDeployment: AI Runway's provider builds the vLLM command line from the spec "
                                "(read as its Dynamo provider does; the provider's default image is not known here)")
        records.servers.append(server)


def _server(file: str, location: Location, name: str | None, image: str | None, args: list, records: Records) -> Server | None:
    from vramlint.cmdline import Token, find_vllm_invocation

    server = Server(file=file, location=location, source_format="kubernetes", kind="ModelDeployment", name=name,
                    container="main")
    server.image = image
    server.vllm_version = version_from_image(image)
    invocation = find_vllm_invocation([Token("vllm", None), Token("serve", None)], list(args),
                                      image or "vllm/vllm-openai", {})
    if invocation is None:
        return None
    apply_invocation(server, invocation)
    records.problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
    return server


def _gpu_request(file: str, resources: Any, rpath: str) -> Any:
    """`gpu: {count, type}` of the resources (or of a disaggregated role) as the provider requests it."""
    gpu = resources.get("gpu") if is_map(resources) else None
    if not is_map(gpu) or not to_int(gpu.get("count")):
        return None
    return gpu_from_count_key(file, gpu, "count", join_path(rpath, "gpu"), scalar_text(gpu.get("type")),
                              f"resources.gpu count: {to_int(gpu.get('count'))}")
