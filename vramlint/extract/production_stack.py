"""The vLLM production-stack operator's `VLLMRuntime` (production-stack.vllm.ai/v1alpha1).

The operator turns one VLLMRuntime into one Deployment whose container `vllm` runs
`/opt/venv/bin/vllm serve MODEL_URL --host 0.0.0.0 --port PORT` followed by the flags its spec asks for, in the
controller's order (operator/internal/controller/vllmruntime_controller.go, `deploymentForVLLMRuntime`):
`--enable-lora` (model.enableLoRA), `--enable-auto-tool-choice` (model.enableTool), `--tool-call-parser`,
`--enable-chunked-prefill` or `--no-enable-chunked-prefill` and `--enable-prefix-caching` or
`--no-enable-prefix-caching` (vllmConfig; always one of each), `--max-model-len` (model.maxModelLen > 0),
`--dtype`, `--tensor-parallel-size` (vllmConfig.tensorParallelSize > 0), `--max-num-seqs`,
`--gpu_memory_utilization` (vllmConfig.gpuMemoryUtilization, a string), `--max_loras`, then
vllmConfig.extraArgs as written, `--chat-template`, and with lmCacheConfig.enabled an LMCache
`--kv-transfer-config`. Its env: VLLM_USE_V1 ("1" with vllmConfig.v1, else "0"), then vllmConfig.env. The image
is deploymentConfig.image `registry/name`; deploymentConfig.resources.gpu is requested (and limited) as
resources.gpuType (default nvidia.com/gpu); deploymentConfig.nodeSelectorTerms become required node affinity;
/dev/shm is a memory emptyDir only when deploymentConfig.shmSize is set.

Read from the operator's source at vllm-project/production-stack a6c01db (2026-08-05); older operator versions
have no shmSize (no /dev/shm mount), which this reading gives them too when the field is absent.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import (
    apply_invocation,
    combine_gpu,
    gpu_from_count_key,
    gpu_from_selector_terms,
    is_map,
    is_seq,
    object_context,
    read_env,
    scalar_text,
    to_int,
)
from vramlint.extract.records import Records
from vramlint.model import Location, Problem, Server
from vramlint.versions import version_from_image
from vramlint.yamlload import join_path, node_location, value_location

# (section, key, flag, how): `flag` when the value is true / `no_flag` when false ("bool"), the value after the
# flag when set and positive ("int") or non-empty ("str").
_FLAGS = (
    ("model", "enableLoRA", "--enable-lora", "true"),
    ("model", "enableTool", "--enable-auto-tool-choice", "true"),
    ("model", "toolCallParser", "--tool-call-parser", "str"),
    ("vllmConfig", "enableChunkedPrefill", "--enable-chunked-prefill", "bool"),
    ("vllmConfig", "enablePrefixCaching", "--enable-prefix-caching", "bool"),
    ("model", "maxModelLen", "--max-model-len", "int"),
    ("model", "dtype", "--dtype", "str"),
    ("vllmConfig", "tensorParallelSize", "--tensor-parallel-size", "int"),
    ("model", "maxNumSeqs", "--max-num-seqs", "int"),
    ("vllmConfig", "gpuMemoryUtilization", "--gpu_memory_utilization", "str"),
    ("vllmConfig", "maxLoras", "--max_loras", "int"),
)
_LMCACHE_CONNECTOR = {True: '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}',
                      False: '{"kv_connector":"LMCacheConnector","kv_role":"kv_both"}'}


def extract_vllm_runtime(doc: Any, obj: Any, path: str, records: Records) -> None:
    from vramlint.cmdline import Token, find_vllm_invocation

    spec = obj.get("spec")
    if not is_map(spec):
        return
    file = doc.file
    spath = join_path(path, "spec")
    ctx = object_context(doc, obj, path)
    sections = {name: (spec.get(name), join_path(spath, name)) for name in
                ("model", "vllmConfig", "deploymentConfig", "lmCacheConfig")}
    model, mpath = sections["model"]
    vllm_config, vpath = sections["vllmConfig"]
    deploy, dpath = sections["deploymentConfig"]
    model = model if is_map(model) else {}
    vllm_config = vllm_config if is_map(vllm_config) else {}
    deploy = deploy if is_map(deploy) else {}
    location = node_location(file, spec, spath) or Location(file, 1, 1, yaml_path=spath)
    server = Server(file=file, location=location, source_format="kubernetes", kind="VLLMRuntime", name=ctx.name,
                    container="vllm")

    def at(section: str, key: str) -> Location | None:
        node, npath = sections[section]
        return value_location(file, node, key, join_path(npath, key)) if is_map(node) else None

    v1 = vllm_config.get("v1") is True
    server.env["VLLM_USE_V1"] = "1" if v1 else "0"
    server.env_locations["VLLM_USE_V1"] = at("vllmConfig", "v1") or location
    read_env(file, vllm_config, vpath, server)

    port = to_int(vllm_config.get("port")) or 8000
    args = [Token(scalar_text(model.get("modelURL")), at("model", "modelURL")),
            Token("--host", None), Token("0.0.0.0", None), Token("--port", None), Token(str(port), None)]
    for section, key, flag, how in _FLAGS:
        node = sections[section][0]
        value = node.get(key) if is_map(node) else None
        loc = at(section, key)
        if how == "bool":
            args.append(Token(flag if value is True else "--no-" + flag[2:], loc))
        elif how == "true" and value is True:
            args.append(Token(flag, loc))
        elif how == "int" and (to_int(value) or 0) > 0:
            args += [Token(flag, loc), Token(str(to_int(value)), loc)]
        elif how == "str" and scalar_text(value):
            args += [Token(flag, loc), Token(scalar_text(value), loc)]
    extra = vllm_config.get("extraArgs")
    if is_seq(extra):
        epath = join_path(vpath, "extraArgs")
        args += [Token(scalar_text(v), value_location(file, extra, i, join_path(epath, i))) for i, v in enumerate(extra)]
    if scalar_text(model.get("chatTemplate")):
        args += [Token("--chat-template", at("model", "chatTemplate")), Token("/etc/chat-template.json", None)]
    lmcache = sections["lmCacheConfig"][0]
    if is_map(lmcache) and lmcache.get("enabled") is True:
        args += [Token("--kv-transfer-config", at("lmCacheConfig", "enabled")), Token(_LMCACHE_CONNECTOR[v1], None)]

    image_spec = deploy.get("image")
    image = None
    if is_map(image_spec):
        registry, name = scalar_text(image_spec.get("registry")), scalar_text(image_spec.get("name"))
        image = f"{registry}/{name}" if registry and name else name
        server.image_location = value_location(file, image_spec, "name", join_path(join_path(dpath, "image"), "name"))
    server.image = image
    server.vllm_version = version_from_image(image)
    command = [Token("/opt/venv/bin/vllm", None), Token("serve", None)]
    invocation = find_vllm_invocation(command, args, image or "vllm/vllm-openai", dict(server.env))
    if invocation is None:
        return
    apply_invocation(server, invocation)
    records.problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)

    server.replicas = to_int(deploy["replicas"]) if "replicas" in deploy else 1  # +kubebuilder:default=1
    server.gpu = combine_gpu(_gpu_request(file, deploy, dpath), _gpu_scheduling(file, deploy, dpath))
    server.shm = bool(scalar_text(deploy.get("shmSize")))
    server.ignore_rules = dict(ctx.ignore_rules)
    server.notes.append("VLLMRuntime: the production-stack operator builds the vllm serve command line from the "
                        "spec (model, vllmConfig, lmCacheConfig)")
    records.servers.append(server)


def _gpu_request(file: str, deploy: Any, dpath: str) -> Any:
    """deploymentConfig.resources.gpu as the operator requests it: under resources.gpuType (nvidia.com/gpu)."""
    resources = deploy.get("resources")
    if not is_map(resources) or not scalar_text(resources.get("gpu")):
        return None
    return gpu_from_count_key(file, resources, "gpu", join_path(dpath, "resources"),
                              scalar_text(resources.get("gpuType")),
                              f"deploymentConfig.resources gpu: {scalar_text(resources.get('gpu'))}")


def _gpu_scheduling(file: str, deploy: Any, dpath: str) -> Any:
    terms = deploy.get("nodeSelectorTerms")
    return gpu_from_selector_terms(file, terms, join_path(dpath, "nodeSelectorTerms")) if is_seq(terms) else None
