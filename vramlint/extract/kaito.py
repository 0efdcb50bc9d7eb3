"""KAITO (kaito.sh) `Workspace` and `InferenceSet`: a preset model served by KAITO's vLLM runner.

The object names a preset (`inference.preset.name`), the node's VM size (`resource.instanceType`, which gives
the GPU model and count) or a MIG slice (`resource.partition`), and optionally a ConfigMap
(`inference.config`) whose `inference_config.yaml` key holds a `vllm:` mapping. KAITO's runner
(presets/workspace/inference/vllm/inference_api.py, `KAITOArgumentParser.parse_args`) appends every key of
that mapping to vLLM's command line as `--KEY str(VALUE)`, after its own defaults. vLLM is KAITO's default
runtime; the annotation `kaito.sh/runtime: transformers` selects Hugging Face Transformers instead. A value
`true` thus reaches vLLM as the word `True` after a flag that takes none: vLLM's OpenAI parser (0.10 on, which
KAITO's runner uses) reads the first such word as its optional model tag, which the api_server ignores; a second
one is "unrecognized arguments". The runner's vLLM is the version KAITO's image pins (KAITO_VLLM_VERSION).

KAITO sets vLLM's parallelism and context length itself (pkg/model/interface.go `buildVLLMInferenceCommand` /
`configureParallelism`, KAITO 056b828 and the releases since it moved sizing to the operator): tensor
parallelism is the node's GPU count (a model under half of one GPU runs data parallel instead, one engine per
GPU), pipeline parallelism the node count when the workspace spans several nodes (`resource.count`, over a Ray
cluster of its StatefulSet pods), and `--max-model-len auto` (earlier releases probed the longest context that
fits, `kaito_max_probe_steps`): the context is fitted to the KV cache rather than refused. Keys of the inference
config's `vllm:` block are appended after KAITO's own flags, so a `tensor-parallel-size` there wins.

`MultiRoleInference` (kaito.sh/v1alpha1, prefill/decode disaggregation) is read as the InferenceSets its
controller creates (pkg/controllers/multiroleinference/controller.go, `reconcileInferenceSet`, KAITO 056b828 of
2026-08-21): one per role, named `<name>-<role type>`, with the role's `replicas` and `instanceType`, the preset
`spec.model.name`, and the role's `runtimeConfig` ConfigMap as `inference.config`; the object's annotations
(e.g. `kaito.sh/runtime`) are copied to the child workspaces.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import (
    ConfigRef,
    VolumeRef,
    is_map,
    is_seq,
    object_context,
    resolve_instance_memory,
    resolve_instance_type,
    resolve_mig,
    scalar_text,
    to_int,
)
from vramlint.extract.records import Records
from vramlint.model import GpuRequest, Location, Server
from vramlint.yamlload import join_path, node_location, value_location

CONFIG_KEY = "inference_config.yaml"
# KAITO's runtime image installs the vLLM its requirements pin (docker/presets/models/tfs/Dockerfile reads
# `vllm==` from presets/workspace/dependencies/requirements.txt): 0.25.1 at KAITO 056b828 (2026-08-21). The
# KAITO release installed may pin another, so refusals read with it are warnings that say so.
KAITO_VLLM_VERSION = "0.25.1"
KAITO_PIN_SOURCE = "KAITO 056b828 pins vllm==0.25.1 in presets/workspace/dependencies/requirements.txt"
_CONFIG_DIR = "/mnt/config"  # where the runner reads the ConfigMap from (only used to key the join)

# Preset name -> the Hugging Face repository its weights come from, as KAITO's preset catalog states it
# (presets/workspace/models/supported_models.yaml `version:` URLs and model_catalog.yaml, kaito-project/kaito).
PRESET_MODELS = {
    "llama-3.1-8b-instruct": "meta-llama/Llama-3.1-8B-Instruct",
    "falcon-7b": "tiiuae/falcon-7b",
    "falcon-7b-instruct": "tiiuae/falcon-7b-instruct",
    "falcon-40b": "tiiuae/falcon-40b",
    "falcon-40b-instruct": "tiiuae/falcon-40b-instruct",
    "mistral-7b": "mistralai/Mistral-7B-v0.3",
    "mistral-7b-instruct": "mistralai/Mistral-7B-Instruct-v0.3",
    "phi-2": "microsoft/phi-2",
    "phi-3-mini-4k-instruct": "microsoft/Phi-3-mini-4k-instruct",
    "phi-3-mini-128k-instruct": "microsoft/Phi-3-mini-128k-instruct",
    "phi-3-medium-4k-instruct": "microsoft/Phi-3-medium-4k-instruct",
    "phi-3-medium-128k-instruct": "microsoft/Phi-3-medium-128k-instruct",
    "phi-3.5-mini-instruct": "microsoft/Phi-3.5-mini-instruct",
    "phi-4": "microsoft/phi-4",
    "phi-4-mini-instruct": "microsoft/Phi-4-mini-instruct",
    "qwen2.5-coder-7b-instruct": "Qwen/Qwen2.5-Coder-7B-Instruct",
    "qwen2.5-coder-32b-instruct": "Qwen/Qwen2.5-Coder-32B-Instruct",
    "deepseek-r1-distill-qwen-14b": "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
    "deepseek-r1-distill-llama-8b": "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
    "gpt-oss-20b": "openai/gpt-oss-20b",
    "gpt-oss-120b": "openai/gpt-oss-120b",
}


def extract_kaito(doc: Any, obj: Any, path: str, records: Records) -> None:
    file = doc.file
    kind = scalar_text(obj.get("kind"))
    ctx = object_context(doc, obj, path)
    metadata = obj.get("metadata")
    annotations = metadata.get("annotations") if is_map(metadata) else None
    if is_map(annotations) and str(annotations.get("kaito.sh/runtime", "")).lower() == "transformers":
        return  # served by Hugging Face Transformers, not vLLM
    if kind == "InferenceSet":
        spec = obj.get("spec")
        body = spec.get("template") if is_map(spec) else None
        bpath = join_path(join_path(path, "spec"), "template")
        replicas = to_int(spec.get("replicas")) if is_map(spec) else None
    else:
        body, bpath, replicas = obj, path, None
    if not is_map(body):
        return
    inference = body.get("inference")
    if not is_map(inference):
        return  # a tuning Workspace, or one without inference
    ipath = join_path(bpath, "inference")
    preset = inference.get("preset")
    ppath = join_path(ipath, "preset")
    location = (node_location(file, preset, ppath) if is_map(preset) else None) \
        or node_location(file, inference, ipath) or Location(file, 1, 1, yaml_path=ipath)
    server = Server(file=file, location=location, source_format="kubernetes", kind=kind, name=ctx.name,
                    container="inference")
    server.ignore_rules = dict(ctx.ignore_rules)
    server.replicas = replicas
    server.assumed_version, server.assumed_version_source = KAITO_VLLM_VERSION, KAITO_PIN_SOURCE
    preset_name = scalar_text(preset.get("name")) if is_map(preset) else None
    if preset_name:
        name_loc = value_location(file, preset, "name", join_path(ppath, "name"))
        hub_id = preset_name if "/" in preset_name else PRESET_MODELS.get(preset_name.lower())
        if hub_id:
            server.model, server.model_location = hub_id, name_loc
            if hub_id != preset_name:
                server.notes.append(f"KAITO preset {preset_name!r} serves {hub_id} (KAITO's preset catalog); "
                                    "the preset's own run parameters are not included")
        else:
            server.notes.append(f"KAITO preset {preset_name!r}: which Hub model it serves is not known to vramlint; "
                                "add a model alias for it")
    elif is_map(inference.get("template")):
        # a custom pod template (`inference.template`, a PodTemplateSpec, in place of a preset): KAITO's
        # GenerateDeploymentManifestWithPodTemplate (pkg/workspace/manifests) deep-copies it into the Deployment it
        # creates and sets only labels, node affinity (the workspace's labelSelector) and tolerations: its
        # containers run as written, with no flag, image or parallelism of KAITO's, so it is read as a pod spec
        from vramlint.extract.podspec import extract_pod_objects

        extract_pod_objects(doc, inference, ipath, records, ctx)
        return
    server.gpu = _gpu(file, body, bpath)
    resource = body.get("resource")
    nodes = to_int(resource.get("count")) if is_map(resource) and "count" in resource else 1
    kaito_parallelism(server, nodes, value_location(file, resource, "count", join_path(join_path(bpath, "resource"),
                                                                                       "count"))
                      if is_map(resource) and "count" in resource else None)
    _inference_config(server, records, file, inference, "config", ipath, "inference.config")
    records.servers.append(server)


def kaito_parallelism(server: Server, nodes: int | None, nodes_location: Location | None) -> None:
    """The flags KAITO's operator writes for parallelism and context length (see the module docstring); the
    inference config, applied later, overrides them as KAITO's runner does."""
    from vramlint.model import EngineGroup, GroupMember

    gpu = server.gpu
    per_node = gpu.count if gpu is not None and gpu.mig_profile is None else (1 if gpu is not None else None)
    where = (gpu.count_location or gpu.location) if gpu is not None else None
    server.args["max_model_len"] = "auto"
    if where is not None:
        server.arg_locations["max_model_len"] = where
    if per_node is None:
        return
    server.args["tensor_parallel_size"] = per_node
    if where is not None:
        server.arg_locations["tensor_parallel_size"] = where
    said = f"KAITO sets --tensor-parallel-size {per_node} (the node's GPUs)"
    if nodes and nodes > 1:
        server.args["pipeline_parallel_size"] = nodes
        server.args["distributed_executor_backend"] = "ray"
        if nodes_location is not None:
            server.arg_locations["pipeline_parallel_size"] = nodes_location
        said += f" and --pipeline-parallel-size {nodes} (resource.count nodes, one Ray cluster)"
    server.engine_group = EngineGroup(
        kind="KAITO workspace", members=[GroupMember("node", nodes, per_node, location=where)],
        source="KAITO pkg/model/interface.go configureParallelism (056b828)",
        fix="choose an instanceType with more GPUs or more nodes (resource.count), or remove the parallel sizes "
            "from the inference config: KAITO sets them from the nodes' GPUs")
    server.notes.append(said + " and --max-model-len auto (the context fitted to the KV cache); the inference "
                        "config's vllm: keys are appended after these and win")


def _gpu(file: str, body: Any, bpath: str) -> GpuRequest | None:
    resource = body.get("resource")
    if not is_map(resource):
        return None
    return _resource_gpu(file, resource, join_path(bpath, "resource"))


def _resource_gpu(file: str, resource: Any, rpath: str) -> GpuRequest | None:
    partition = resource.get("partition")
    if is_map(partition) and str(partition.get("mode", "")).lower() == "mig" and partition.get("profile"):
        profile = scalar_text(partition.get("profile")) or ""
        loc = value_location(file, partition, "profile", join_path(join_path(rpath, "partition"), "profile"))
        found = resolve_mig(f"nvidia.com/mig-{profile}")
        return GpuRequest(type=found[0] if found else None, count=1, evidence=f"resource.partition mig {profile}",
                          location=loc, mig_profile=profile, memory_gib=found[1] if found else None)
    instance = scalar_text(resource.get("instanceType"))
    if not instance:
        return None
    loc = value_location(file, resource, "instanceType", join_path(rpath, "instanceType"))
    found = resolve_instance_type(instance)
    if found is None:
        return GpuRequest(evidence=f"resource.instanceType {instance} (not a VM size vramlint knows)", location=loc)
    gpu_type, count = found
    share = resolve_instance_memory(instance)
    what = f"part of one {gpu_type}: {share:g} GiB" if share is not None else f"{count} x {gpu_type}"
    return GpuRequest(type=gpu_type, count=count, evidence=f"resource.instanceType {instance} ({what})",
                      location=loc, count_location=loc, memory_gib=share)


def apply_inference_config(server: Server, doc: Any, cm: Any) -> None:
    """Merge the `vllm:` mapping of KAITO's inference config into ``server`` as KAITO's runner passes it."""
    from vramlint.cmdline import Token, parse_vllm_args
    from vramlint.yamlload import key_location

    data = getattr(doc, "data", None)
    label = f"ConfigMap {cm.name!r} key {CONFIG_KEY!r} in {cm.file}"
    if not is_map(data):
        server.notes.append(f"{label}: not a mapping")
        return
    block = data.get("vllm")
    if not is_map(block):
        server.notes.append(f"{label}: no vllm: settings")
        return
    tokens = []
    for key, value in block.items():
        kloc = key_location(cm.file, block, key)
        vloc = value_location(cm.file, block, key) or kloc
        tokens.append(Token(f"--{key}", kloc))
        tokens.append(Token(None if value is None else str(value), vloc))
    pinned = None if server.vllm_version else server.assumed_version
    inv = parse_vllm_args(tokens, version=server.vllm_version or pinned, entry="openai.api_server")
    if pinned:
        from vramlint.extract.podspec import mark_assumed

        mark_assumed(inv, server.assumed_version_source or KAITO_PIN_SOURCE)
    for dest, value in inv.args.items():
        server.args[dest] = value
        if dest in inv.arg_locations:
            server.arg_locations[dest] = inv.arg_locations[dest]
    server.unknown_args.update(inv.unknown_args)
    server.startup_errors.extend(inv.startup_errors)
    server.unchecked.extend(inv.unchecked)
    server.opaque_args = server.opaque_args or inv.opaque_args
    server.notes.append(f"vLLM settings read from the vllm: block of {label}")


def extract_multirole(doc: Any, obj: Any, path: str, records: Records) -> None:
    """A MultiRoleInference: one server per role, as the InferenceSet KAITO's controller makes of it."""
    file = doc.file
    ctx = object_context(doc, obj, path)
    metadata = obj.get("metadata")
    annotations = metadata.get("annotations") if is_map(metadata) else None
    if is_map(annotations) and str(annotations.get("kaito.sh/runtime", "")).lower() == "transformers":
        return  # copied to the child workspaces: Hugging Face Transformers, not vLLM
    spec = obj.get("spec")
    roles = spec.get("roles") if is_map(spec) else None
    if not is_seq(roles):
        return
    spath = join_path(path, "spec")
    model = spec.get("model")
    mpath = join_path(spath, "model")
    model_name = scalar_text(model.get("name")) if is_map(model) else None
    for i, role in enumerate(roles):
        if not is_map(role):
            continue
        rpath = join_path(join_path(spath, "roles"), i)
        role_type = scalar_text(role.get("type")) or "role"
        location = node_location(file, role, rpath) or Location(file, 1, 1, yaml_path=rpath)
        server = Server(file=file, location=location, source_format="kubernetes", kind="MultiRoleInference",
                        name=f"{ctx.name}-{role_type}" if ctx.name else None, container="inference")
        server.ignore_rules = dict(ctx.ignore_rules)
        server.replicas = to_int(role.get("replicas")) if "replicas" in role else None
        server.assumed_version, server.assumed_version_source = KAITO_VLLM_VERSION, KAITO_PIN_SOURCE
        if model_name:
            hub_id = model_name if "/" in model_name else PRESET_MODELS.get(model_name.lower())
            if hub_id:
                server.model = hub_id
                server.model_location = value_location(file, model, "name", join_path(mpath, "name"))
                if hub_id != model_name:
                    server.notes.append(f"KAITO preset {model_name!r} serves {hub_id} (KAITO's preset catalog); "
                                        "the preset's own run parameters are not included")
            else:
                server.notes.append(f"KAITO preset {model_name!r}: which Hub model it serves is not known to "
                                    "vramlint; add a model alias for it")
        server.gpu = _resource_gpu(file, role, rpath)  # a role carries instanceType as a Workspace's resource does
        kaito_parallelism(server, 1, None)
        server.notes.append(f"MultiRoleInference {role_type} role: KAITO runs it as InferenceSet "
                            f"{server.name or '(unnamed)'}; the other role serves the same model")
        _inference_config(server, records, file, role, "runtimeConfig", rpath, "runtimeConfig")
        records.servers.append(server)


def _inference_config(server: Any, records: Any, file: str, owner: Any, key: str, owner_path: str,
                      label: str) -> None:
    """The ConfigMap named by ``owner[key]`` joins the server like a `--config` file (KAITO mounts it at
    _CONFIG_DIR); without one KAITO's default inference configuration applies."""
    config_name = scalar_text(owner.get(key))
    if config_name:
        loc = value_location(file, owner, key, join_path(owner_path, key))
        records.config_refs.append(ConfigRef(
            server, [(f"{_CONFIG_DIR}/{CONFIG_KEY}", loc)], [VolumeRef(_CONFIG_DIR, config_name, None, {})],
            apply=apply_inference_config, label=f"{label} {config_name}"))
    else:
        server.notes.append(f"no {label}: KAITO's default inference configuration applies (not read here)")
    server.notes.append("KAITO's runner sets gpu-memory-utilization to the GPU's free memory less 600 MiB, at most "
                        "0.95, unless the inference config sets it")
