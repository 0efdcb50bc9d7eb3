"""Helm values files of two known charts, read as the charts render them into `vllm serve` command lines.

1. vLLM production-stack (`vllm-stack`): ``servingEngineSpec.modelSpec[]``. The chart's deployment template
   runs ``vllm serve <modelURL> --host 0.0.0.0 --port ...`` and appends flags from camelCase ``vllmConfig``
   keys (see `_VLLM_CONFIG_FLAGS`) and ``vllmConfig.extraArgs``; ``requestGPU`` is the GPU count of the
   resource named by ``requestGPUType`` (default ``nvidia.com/gpu``), unless the entry writes its own ``resources``,
   which the chart uses as they are; ``nodeSelectorTerms`` become required node
   affinity; a memory-backed /dev/shm is mounted when ``tensorParallelSize`` is set.
2. vLLM's example chart (examples/online_serving/chart-helm): ``image.command`` is the full command line,
   ``resources`` the container's, ``shm.enabled`` mounts /dev/shm.

Other charts known by their values shape are in `vramlint.extract.helm_known`.

Every synthesised flag points at the values line that produced it, so findings land where the user edits.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import (
    apply_invocation,
    gpu_from_resources,
    gpu_from_selector_terms,
    is_map,
    is_seq,
    read_env,
    scalar_text,
    to_int,
    tokens_from,
)
from vramlint.model import Location, Problem, Server
from vramlint.versions import version_from_image
from vramlint.yamlload import join_path, key_location, node_location, value_location

# vllmConfig key -> (flag, kind): "value" passes the value; "bool" gives --flag / --no-flag.
_VLLM_CONFIG_FLAGS = {
    "enableChunkedPrefill": ("--enable-chunked-prefill", "bool"),
    "enablePrefixCaching": ("--enable-prefix-caching", "bool"),
    "maxModelLen": ("--max-model-len", "value"),
    "dtype": ("--dtype", "value"),
    "tensorParallelSize": ("--tensor-parallel-size", "value"),
    "pipelineParallelSize": ("--pipeline-parallel-size", "value"),
    "maxNumSeqs": ("--max-num-seqs", "value"),
    "gpuMemoryUtilization": ("--gpu-memory-utilization", "value"),
    "maxLoras": ("--max-loras", "value"),
    "runner": ("--runner", "value"),
    "convert": ("--convert", "value"),
}
# vllmConfig keys the chart uses for other things than flags.
_VLLM_CONFIG_OTHER = {"extraArgs", "v0", "v1", "prometheusMultiprocDir"}


def _production_stack_blocks(data: Any) -> list[tuple[str, Any]]:
    """(path, values) of the production-stack values in ``data``: the file's own top level, or, in an umbrella
    chart's values, the mapping under a dependency's name or alias (Helm gives a subchart the values under that
    key: `vllm-stack: {servingEngineSpec: ...}`), unless it says `enabled: false` (the usual dependency condition)."""
    ses = data.get("servingEngineSpec")
    if is_map(ses) and "modelSpec" in ses:
        return [("", data)]
    blocks = []
    for key, value in data.items():
        if isinstance(key, str) and is_map(value) and value.get("enabled") is not False:
            inner = value.get("servingEngineSpec")
            if is_map(inner) and "modelSpec" in inner:
                blocks.append((key, value))
    return blocks


def is_helm_values(data: Any, file: str | None = None) -> bool:
    if not is_map(data) or "kind" in data:
        return False
    if _production_stack_blocks(data):
        return True
    from vramlint.extract.app_template import values_blocks

    if values_blocks(data):
        return True
    from vramlint.extract.helm_known import detect

    if detect(data, file) is not None:
        return True
    image = data.get("image")
    return is_map(image) and is_seq(image.get("command")) and any(
        "vllm" in str(w).lower() for w in image.get("command") or []
    ) or (is_map(image) and "vllm" in str(image.get("repository", "")).lower() and "containerPort" in data)


def extract_helm_values(doc: Any) -> tuple[list[Server], list[Problem]]:
    data = doc.data
    servers: list[Server] = []
    problems: list[Problem] = []
    blocks = _production_stack_blocks(data)
    if blocks or is_map(data.get("servingEngineSpec")):
        for prefix, values in blocks:
            ses = values.get("servingEngineSpec")
            specs = ses.get("modelSpec") if is_map(ses) else None
            if not is_seq(specs):
                continue
            base = join_path(join_path(prefix, "servingEngineSpec"), "modelSpec") if prefix \
                else "servingEngineSpec.modelSpec"
            for i, spec in enumerate(specs):
                if is_map(spec):
                    server = _model_spec(doc, ses, spec, join_path(base, i), problems)
                    if server is not None:
                        servers.append(server)
        return servers, problems
    from vramlint.extract import app_template

    app_blocks = app_template.values_blocks(data)
    if app_blocks:
        # a values file of app-template (or of a chart that depends on it): each controller's pod as the chart
        # renders it (extract_records keeps the `--config` references these records hold too)
        from vramlint.extract.records import Records

        records = Records()
        for prefix, values in app_blocks:
            app_template.read_app_template(doc, {}, values, prefix, records)
        return records.servers, records.problems
    from vramlint.extract.helm_known import detect, extract_known

    shape = detect(data, doc.file)
    if shape is not None:
        return extract_known(doc, shape)
    server = _example_chart(doc, data, problems)
    if server is not None:
        servers.append(server)
    return servers, problems


def _model_spec(doc: Any, ses: Any, spec: Any, path: str, problems: list[Problem]) -> Server | None:
    # (imported once per entry, not once per word: a modelSpec of 20,000 entries made 120,000 words)
    from vramlint.cmdline import Token as _tok
    from vramlint.cmdline import find_vllm_invocation

    file = doc.file
    if spec.get("enabled") is False:
        return None  # the chart renders nothing for a disabled entry
    location = node_location(file, spec, path) or Location(file, 1, 1, yaml_path=path)
    server = Server(file=file, location=location, source_format="helm-values", kind="modelSpec",
                    name=scalar_text(spec.get("name")), container="vllm")
    repo, tag = scalar_text(spec.get("repository")), scalar_text(spec.get("tag"))
    if repo:
        server.image = f"{repo}:{tag}" if tag else repo
        server.image_location = value_location(file, spec, "tag" if tag else "repository",
                                               join_path(path, "tag" if tag else "repository"))
        server.vllm_version = version_from_image(server.image)
    # Environment: servingEngineSpec.env first, then the model's (the template writes them in that order).
    read_env(file, ses, path.rsplit(".modelSpec", 1)[0], server)
    read_env(file, spec, path, server)
    if "hf_token" in spec:
        server.env["HF_TOKEN"] = None  # a Secret reference in the rendered pod; the value is never printed
        server.env_locations["HF_TOKEN"] = value_location(file, spec, "hf_token", join_path(path, "hf_token")) or location

    def at(node: Any, key: str, p: str) -> Location | None:
        return value_location(file, node, key, join_path(p, key))

    command = [_tok("vllm", None), _tok("serve", None)]
    if "modelURL" in spec:
        command.append(_tok(scalar_text(spec.get("modelURL")), at(spec, "modelURL", path)))
    args = []
    if spec.get("enableLoRA"):
        args.append(_tok("--enable-lora", at(spec, "enableLoRA", path)))
    if spec.get("enableTool"):
        args.append(_tok("--enable-auto-tool-choice", at(spec, "enableTool", path)))
    if spec.get("toolCallParser"):
        loc = at(spec, "toolCallParser", path)
        args += [_tok("--tool-call-parser", loc), _tok(scalar_text(spec.get("toolCallParser")), loc)]
    cfg = spec.get("vllmConfig")
    cpath = join_path(path, "vllmConfig")
    if is_map(cfg):
        for key, (flag, kind) in _VLLM_CONFIG_FLAGS.items():
            if kind == "bool" and key == "enablePrefixCaching":
                # The template writes one of the two forms whenever vllmConfig exists.
                loc = at(cfg, key, cpath) if key in cfg else key_location(file, spec, "vllmConfig", cpath)
                args.append(_tok(flag if cfg.get(key) else "--no-" + flag[2:], loc))
                continue
            if key not in cfg:
                continue
            loc = at(cfg, key, cpath)
            if kind == "bool":
                args.append(_tok(flag if cfg.get(key) else "--no-" + flag[2:], loc))
            else:
                args += [_tok(flag, loc), _tok(scalar_text(cfg.get(key)), loc)]
        extra = cfg.get("extraArgs")
        if is_seq(extra):
            args += tokens_from(file, cfg, "extraArgs", cpath, doc.lines)
        for key in cfg:
            if key not in _VLLM_CONFIG_FLAGS and key not in _VLLM_CONFIG_OTHER:
                server.notes.append(f"vllmConfig.{key} is not turned into a vLLM flag by the chart's deployment "
                                    "template; put it in vllmConfig.extraArgs")
    if spec.get("modelRevision"):
        loc = at(spec, "modelRevision", path)
        args += [_tok("--revision", loc), _tok(scalar_text(spec.get("modelRevision")), loc)]
    invocation = find_vllm_invocation(command, args, server.image, dict(server.env))
    if invocation is None:
        return None
    apply_invocation(server, invocation)
    problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
    if "replicaCount" in spec:
        server.replicas = to_int(spec.get("replicaCount"))
    gpu = None
    if is_map(spec.get("resources")) and spec.get("resources"):
        # the chart writes a model entry's own `resources` as the container's, in place of the ones it builds from
        # requestCPU/requestMemory/requestGPU (deployment-vllm-multi.yaml, `if $modelSpec.resources`; chart 0.1.9+)
        gpu = gpu_from_resources(file, spec, path)
    elif "requestGPU" in spec:
        resource = scalar_text(spec.get("requestGPUType")) or "nvidia.com/gpu"
        synthetic = {"resources": {"limits": {resource: spec.get("requestGPU")}}}
        gpu = gpu_from_resources(file, synthetic, path)
        if gpu is not None:
            gpu.evidence = f"requestGPU: {scalar_text(spec.get('requestGPU'))}" + (
                f" of {resource}" if resource != "nvidia.com/gpu" else "")
            gpu.location = at(spec, "requestGPU", path)
    terms = spec.get("nodeSelectorTerms")
    if is_seq(terms) and not spec.get("affinity"):
        sched = gpu_from_selector_terms(file, terms, join_path(path, "nodeSelectorTerms"))
        if sched is not None:
            if gpu is None:
                gpu = sched
            else:
                gpu.type = gpu.type or sched.type
                gpu.evidence = f"{gpu.evidence}; {sched.evidence}"
    server.gpu = gpu
    server.shm = bool(is_map(cfg) and "tensorParallelSize" in cfg)
    for key, (flag, kind) in _VLLM_CONFIG_FLAGS.items():
        if kind == "value" and not (is_map(cfg) and key in cfg):
            # the template writes --no-enable-prefix-caching whenever vllmConfig exists: adding the block is
            # more than the one flag
            server.values_keys[flag[2:].replace("-", "_")] = (cpath, key) if is_map(cfg) else (
                f"this model entry has no vllmConfig, and the chart adds --no-enable-prefix-caching whenever it "
                f"has one: add vllmConfig.{key} (with enablePrefixCaching as you want it)")
    return server


def _example_chart(doc: Any, data: Any, problems: list[Problem]) -> Server | None:
    from vramlint.cmdline import find_vllm_invocation

    file = doc.file
    image = data.get("image")
    if not is_map(image):
        return None
    repo, tag = scalar_text(image.get("repository")), scalar_text(image.get("tag"))
    location = node_location(file, image, "image") or Location(file, 1, 1, yaml_path="image")
    server = Server(file=file, location=location, source_format="helm-values", kind="values", name=None,
                    container="vllm")
    if repo:
        server.image = f"{repo}:{tag}" if tag else repo
        server.image_location = value_location(file, image, "tag" if tag else "repository",
                                               join_path("image", "tag" if tag else "repository"))
        server.vllm_version = version_from_image(server.image)
    read_env(file, data, "", server)
    command = tokens_from(file, image, "command", "image", doc.lines)
    invocation = find_vllm_invocation(command, [], server.image, dict(server.env))
    if invocation is None:
        from vramlint.cmdline import hidden_vllm_command

        said = hidden_vllm_command(server.image, [t.text for t in command], server.env)
        if said is not None:
            problems.append(Problem(file, location.line, location.column, said, level="note"))
        return None
    apply_invocation(server, invocation)
    problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
    extra = data.get("extraInit")
    s3_path = scalar_text(extra.get("s3modelpath")) if is_map(extra) else None
    if s3_path and isinstance(server.model, str) and server.model.rstrip("/") == "/data":
        # The chart's download job runs `aws s3 sync s3://$S3_BUCKET_NAME/$S3_PATH /data` with S3_PATH set
        # from extraInit.s3modelpath (examples/online_serving/chart-helm/templates/_helpers.tpl).
        server.notes.append(f"the model directory {server.model} is filled from S3 (extraInit.s3modelpath "
                            f"{s3_path}); which Hub model that is is not stated: add a model alias for "
                            f"{server.model!r}")
    if "replicaCount" in data:
        server.replicas = to_int(data.get("replicaCount"))
    server.gpu = gpu_from_resources(file, data, "")
    shm = data.get("shm")
    server.shm = bool(is_map(shm) and shm.get("enabled") is True)
    return server
