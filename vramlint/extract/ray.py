"""KubeRay: RayService / RayCluster / RayJob.

Pods (head and worker groups) are walked like any pod object, so a head container running `vllm serve` is
found. Ray Serve LLM applications live in ``serveConfigV2``, a YAML document inside a block scalar: it is
parsed with positions shifted into the outer file, and each ``llm_configs`` entry becomes a server whose
``engine_kwargs`` are vLLM's engine arguments (already snake_case). A RayJob ``entrypoint`` is a shell line.
"""

from __future__ import annotations

import re
from typing import Any

from vramlint.extract.podspec import (
    GpuRequest,
    extract_pod_objects,
    find_podspecs,
    gpu_from_resources,
    gpu_from_scheduling,
    is_block_scalar,
    is_map,
    is_seq,
    object_context,
    resolve_gpu_hint,
    scalar_text,
    to_int,
    with_node_selection,
)
from vramlint.extract.records import Records
from vramlint.model import Location, Problem, Server
from vramlint.yamlload import join_path, load_embedded, node_location, to_plain, value_location


def extract_ray(doc: Any, obj: Any, path: str, records: Records) -> None:
    ctx = object_context(doc, obj, path)
    extract_pod_objects(doc, obj, path, records, ctx=ctx)
    spec = obj.get("spec")
    if not is_map(spec):
        return
    spath = join_path(path, "spec")
    head_image = _head_image(obj)
    worker_gpu = _worker_gpu(doc, obj, path)
    for key in ("serveConfigV2", "serveConfig"):
        text = spec.get(key)
        if isinstance(text, str):
            _serve_config(doc, spec, key, spath, text, ctx, head_image, worker_gpu, records)
    entry = spec.get("entrypoint")
    if isinstance(entry, str):
        _entrypoint(doc, spec, spath, ctx, head_image, worker_gpu, records)


def _head_image(obj: Any) -> str | None:
    for hit in find_podspecs(obj):
        if "headGroupSpec" in hit.path:
            for c in hit.node.get("containers") or []:
                if is_map(c) and c.get("image") is not None:
                    return scalar_text(c.get("image"))
    return None


def _worker_gpu(doc: Any, obj: Any, path: str) -> GpuRequest | None:
    for hit in find_podspecs(obj, path):
        for i, c in enumerate(hit.node.get("containers") or []):
            if not is_map(c):
                continue
            res = gpu_from_resources(doc.file, c, join_path(join_path(hit.path, "containers"), i))
            if res is not None and (res.count or 0) > 0:
                sched = gpu_from_scheduling(doc.file, hit.node, hit.path)
                if sched is not None and sched.type and not res.type:
                    res.type = sched.type
                    res.evidence = f"{res.evidence}; {sched.evidence}"
                with_node_selection(res, doc.file, hit.node, hit.path)
                return res
    return None


def _serve_config(doc, spec, key, spath, text, ctx, head_image, worker_gpu, records: Records) -> None:
    loc = value_location(doc.file, spec, key, join_path(spath, key))
    inner_docs, problems = load_embedded(text, doc.file, doc.lines, loc, is_block_scalar(text))
    for p in problems:
        p.message = f"{key}: {p.message}"
    records.problems.extend(problems)
    if not inner_docs or not is_map(inner_docs[0].data):
        return
    root = inner_docs[0].data
    apps = root.get("applications")
    if not is_seq(apps):
        return
    base = join_path(spath, key)
    for ai, app in enumerate(apps):
        if not is_map(app):
            continue
        apath = join_path(join_path(base, "applications"), ai)
        args = app.get("args")
        configs = []
        if is_map(args):
            if is_seq(args.get("llm_configs")):
                configs = [(c, join_path(join_path(join_path(apath, "args"), "llm_configs"), i), args["llm_configs"], i)
                           for i, c in enumerate(args["llm_configs"]) if is_map(c)]
            elif is_map(args.get("llm_config")):
                configs = [(args["llm_config"], join_path(join_path(apath, "args"), "llm_config"), args, "llm_config")]
        for cfg, cpath, _parent, _k in configs:
            server = _llm_server(doc, cfg, cpath, ctx, head_image, worker_gpu)
            # an LLMConfig's own runtime_env, else the application's (Ray Serve passes it to every deployment)
            if not _apply_pip_pin(server, doc.file, cfg.get("runtime_env"), join_path(cpath, "runtime_env")):
                _apply_pip_pin(server, doc.file, app.get("runtime_env"), join_path(apath, "runtime_env"))
            records.servers.append(server)
        if not configs:
            server = _custom_app(doc, app, apath, ctx, head_image, worker_gpu)
            if server is not None:
                _apply_pip_pin(server, doc.file, app.get("runtime_env"), join_path(apath, "runtime_env"))
                records.servers.append(server)


def _llm_server(doc, cfg, cpath, ctx, head_image, worker_gpu) -> Server:
    file = doc.file
    location = node_location(file, cfg, cpath) or Location(file, 1, 1, yaml_path=cpath)
    server = Server(file=file, location=location, source_format="kubernetes", kind=ctx.kind, name=ctx.name)
    server.image = head_image
    server.ignore_rules = dict(ctx.ignore_rules)
    loading = cfg.get("model_loading_config")
    if is_map(loading):
        lpath = join_path(cpath, "model_loading_config")
        for key in ("model_source", "model_id"):
            value = scalar_text(loading.get(key))
            if value:
                server.model = value
                server.model_location = value_location(file, loading, key, join_path(lpath, key))
                break
    kwargs = cfg.get("engine_kwargs")
    kpath = join_path(cpath, "engine_kwargs")
    if is_map(kwargs):
        for key, value in kwargs.items():
            name = str(key).replace("-", "_")
            server.args[name] = to_plain(value)
            server.arg_locations[name] = value_location(file, kwargs, key, join_path(kpath, key)) or location
        if server.model is None and isinstance(kwargs.get("model"), str):
            server.model = kwargs["model"]
    runtime_env = cfg.get("runtime_env")
    env_vars = runtime_env.get("env_vars") if is_map(runtime_env) else None
    if is_map(env_vars):
        epath = join_path(join_path(cpath, "runtime_env"), "env_vars")
        for key, value in env_vars.items():
            server.env[str(key)] = scalar_text(value)
            server.env_locations[str(key)] = value_location(file, env_vars, key, join_path(epath, key)) or location
    deployment = cfg.get("deployment_config")
    if is_map(deployment):
        if "num_replicas" in deployment:
            server.replicas = to_int(deployment.get("num_replicas"))
        auto = deployment.get("autoscaling_config")
        if server.replicas is None and is_map(auto) and "min_replicas" in auto:
            server.replicas = to_int(auto.get("min_replicas"))
    tp = to_int(server.args.get("tensor_parallel_size")) or 1
    pp = to_int(server.args.get("pipeline_parallel_size")) or 1
    accel = scalar_text(cfg.get("accelerator_type"))
    if accel:
        resolved = resolve_gpu_hint(accel)
        server.gpu = GpuRequest(
            type=resolved or accel, count=tp * pp,
            evidence=f"Ray Serve LLM accelerator_type: {accel}; one GPU per engine worker (tensor x pipeline parallel)",
            location=value_location(file, cfg, "accelerator_type", join_path(cpath, "accelerator_type")),
            vendor="google-tpu" if accel.upper().startswith("TPU") else "nvidia",
        )
    elif worker_gpu is not None:
        server.gpu = GpuRequest(type=worker_gpu.type, count=tp * pp, vendor=worker_gpu.vendor,
                                evidence=f"Ray worker group {worker_gpu.evidence}; one GPU per engine worker",
                                location=worker_gpu.location)
    server.notes.append("Ray Serve LLM application: the vLLM version is the one bundled with the Ray image, unless "
                        "its runtime_env installs another")
    return server


_MODEL_ENV = ("MODEL_ID", "MODEL_NAME", "MODEL", "HF_MODEL_ID")


def _custom_app(doc, app, apath, ctx, head_image, worker_gpu) -> Server | None:
    """A Ray Serve app written by the user that runs vLLM: its model is stated in env_vars, the rest in code."""
    runtime_env = app.get("runtime_env")
    env_vars = runtime_env.get("env_vars") if is_map(runtime_env) else None
    if not is_map(env_vars):
        return None
    text = " ".join(doc.lines).lower()
    if "vllm" not in text:
        return None
    file = doc.file
    location = node_location(file, app, apath) or Location(file, 1, 1, yaml_path=apath)
    server = Server(file=file, location=location, source_format="kubernetes", kind=ctx.kind, name=ctx.name)
    server.image = head_image
    epath = join_path(join_path(apath, "runtime_env"), "env_vars")
    for key, value in env_vars.items():
        server.env[str(key)] = scalar_text(value)
        server.env_locations[str(key)] = value_location(file, env_vars, key, join_path(epath, key)) or location
    for key in _MODEL_ENV:
        value = server.env.get(key)
        if value and not re.match(r"^\$", value):
            server.model = value
            server.model_location = server.env_locations.get(key)
            break
    else:
        return None
    server.gpu = worker_gpu
    import_path = scalar_text(app.get('import_path'))
    server.engine_args_in_code = (f"set by the code of the custom Ray Serve application (import_path {import_path}), "
                                  "which vramlint does not read")
    server.notes.append(f"custom Ray Serve application (import_path {import_path}): its "
                        "vLLM engine arguments are set by application code and are not known; model read from "
                        "runtime_env.env_vars")
    return server


def _entrypoint(doc, spec, spath, ctx, head_image, worker_gpu, records: Records) -> None:
    from vramlint.cmdline import find_vllm_invocation, split_shell, yaml_token
    from vramlint.extract.podspec import apply_invocation

    tok = yaml_token(doc.file, spec, "entrypoint", join_path(spath, "entrypoint"), doc.lines)
    if tok.text is None:
        return
    words = split_shell(tok.text, tok.location, block=tok.block is not None, indent=tok.indent, lines=doc.lines,
                        folded=tok.block == ">", quoted=tok.quoted)
    invocation = find_vllm_invocation(words, [], None, {})
    if invocation is None:
        return
    location = tok.location or Location(doc.file, 1, 1, yaml_path=join_path(spath, "entrypoint"))
    server = Server(file=doc.file, location=location, source_format="kubernetes", kind=ctx.kind, name=ctx.name)
    server.image = head_image
    apply_invocation(server, invocation)
    records.problems.extend(Problem(doc.file, location.line, location.column, m) for m in invocation.problems)
    server.gpu = worker_gpu
    server.ignore_rules = dict(ctx.ignore_rules)
    server.notes.append("RayJob entrypoint: runs on the Ray cluster; GPUs are the worker groups'")
    _job_runtime_env(doc, spec, spath, server, records)
    records.servers.append(server)


def _job_runtime_env(doc, spec, spath, server: Server, records: Records) -> None:
    """A RayJob's `runtimeEnvYAML` (a YAML document in a string) is the job's runtime_env."""
    text = spec.get("runtimeEnvYAML")
    if not isinstance(text, str):
        return
    key_path = join_path(spath, "runtimeEnvYAML")
    loc = value_location(doc.file, spec, "runtimeEnvYAML", key_path)
    inner, problems = load_embedded(text, doc.file, doc.lines, loc, is_block_scalar(text))
    for p in problems:
        p.message = f"runtimeEnvYAML: {p.message}"
    records.problems.extend(problems)
    if inner:
        _apply_pip_pin(server, doc.file, inner[0].data, key_path)


# runtime_env keys whose packages Ray installs into the job's or deployment's environment, over the image's
_INSTALLERS = ("pip", "uv")


def _requirements(runtime_env: Any, rpath: str) -> list[tuple[str, Any, Any, str]]:
    """(installer, list, index, yaml path) of each requirement a runtime_env installs: `pip: [..]`,
    `pip: {packages: [..]}`, the same for `uv`, and a conda environment's `dependencies: [{pip: [..]}]`."""
    out: list[tuple[str, Any, Any, str]] = []
    if not is_map(runtime_env):
        return out

    def listed(kind: str, value: Any, path: str) -> None:
        if is_map(value):
            value, path = value.get("packages"), join_path(path, "packages")
        if is_seq(value):
            out.extend((kind, value, i, join_path(path, i)) for i in range(len(value)))

    for kind in _INSTALLERS:
        listed(kind, runtime_env.get(kind), join_path(rpath, kind))
    conda = runtime_env.get("conda")
    deps = conda.get("dependencies") if is_map(conda) else None
    if is_seq(deps):
        dpath = join_path(join_path(rpath, "conda"), "dependencies")
        for i, dep in enumerate(deps):
            if is_map(dep) and "pip" in dep:
                listed("conda pip", dep.get("pip"), join_path(join_path(dpath, i), "pip"))
    return out


def _apply_pip_pin(server: Server, file: str, runtime_env: Any, rpath: str) -> bool:
    """Ray installs a runtime_env's `vllm==X` into the environment the engine runs in, over the image's vLLM: X is
    the server's version. Whether a runtime_env names vLLM at all (a range or a bare name: said, not guessed)."""
    from vramlint.versions import pinned_vllm

    for kind, items, index, path in _requirements(runtime_env, rpath):
        text = scalar_text(items[index])
        if not text or not re.match(r"\s*vllm\b(?![-_.\w])", text, re.IGNORECASE):
            continue
        version = pinned_vllm(text)
        if version is None:
            server.notes.append(f"runtime_env {kind} installs {text!r}, which names no exact vLLM release: the "
                                "version it installs is not known from the file")
            return True
        server.vllm_version = version
        where = value_location(file, items, index, path)
        server.vllm_version_source = (f"Ray runtime_env {kind} ({text}"
                                      + (f", {where.file}:{where.line}" if where is not None else "")
                                      + "), installed over the image's vLLM")
        return True
    return False
