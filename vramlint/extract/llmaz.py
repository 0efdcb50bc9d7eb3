"""llmaz `BackendRuntime` (inference.llmaz.io): how llmaz starts an inference engine, one way per config.

A BackendRuntime holds the engine's command (`spec.command`, `spec.commands` in older releases), its image
(`spec.image` + `spec.version`) and named argument sets: `spec.recommendedConfigs[]` (`name`, `args`,
`resources`, `sharedMemorySize`), or `spec.args[]` (`name`, `flags`) with `spec.resources` in older releases.
A Playground picks one set by name; llmaz substitutes `{{ .ModelPath }}` / `{{ .ModelName }}` from the
Playground's model when it creates the pod. Each set is a way the runtime can be started, with its own
arguments and resources, so each is reported as a server; the model is unknown here (filled in at run time).
"""

from __future__ import annotations

from typing import Any

from vramlint.extract import Records
from vramlint.extract.kubernetes import (
    apply_invocation,
    gpu_from_resources,
    is_map,
    is_seq,
    object_context,
    read_env,
    scalar_text,
    tokens_from,
)
from vramlint.model import Location, Problem, Server
from vramlint.yamlload import join_path, node_location, value_location


def _image(spec: Any) -> str | None:
    image = scalar_text(spec.get("image"))
    version = scalar_text(spec.get("version"))
    if image and version and ":" not in image.rsplit("/", 1)[-1]:
        return f"{image}:{version}"
    return image


def extract_backend_runtime(doc: Any, obj: Any, path: str, records: Records) -> None:
    from vramlint.cmdline import find_vllm_invocation
    from vramlint.versions import version_from_image

    spec = obj.get("spec")
    if not is_map(spec):
        return
    file = doc.file
    spath = join_path(path, "spec")
    ctx = object_context(doc, obj, path)
    command_key = "command" if "command" in spec else "commands"
    command = tokens_from(file, spec, command_key, spath, doc.lines)
    image = _image(spec)
    configs: list[tuple[Any, str, str, Any]] = []  # (config node, its path, args key, resources holder)
    if is_seq(spec.get("recommendedConfigs")):
        cpath = join_path(spath, "recommendedConfigs")
        configs = [(c, join_path(cpath, i), "args", c) for i, c in enumerate(spec["recommendedConfigs"]) if is_map(c)]
    elif is_seq(spec.get("args")):
        apath = join_path(spath, "args")
        configs = [(c, join_path(apath, i), "flags", spec) for i, c in enumerate(spec["args"]) if is_map(c)]
    if not configs:
        configs = [(spec, spath, "", spec)]
    env_holder = {"env": spec.get("envs") if "envs" in spec else spec.get("env")}
    for config, cpath, args_key, resources_holder in configs:
        location = node_location(file, config, cpath) or Location(file, 1, 1, yaml_path=cpath)
        server = Server(file=file, location=location, source_format="kubernetes", kind="BackendRuntime",
                        name=ctx.name, container=scalar_text(config.get("name")) if args_key else None)
        server.image = image
        server.image_location = value_location(file, spec, "image", join_path(spath, "image"))
        server.vllm_version = version_from_image(image)
        read_env(file, env_holder, spath, server)
        args = tokens_from(file, config, args_key, cpath, doc.lines) if args_key else []
        invocation = find_vllm_invocation(command, args, image, dict(server.env))
        if invocation is None:
            continue
        apply_invocation(server, invocation)
        records.problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
        rpath = cpath if resources_holder is config else spath
        server.gpu = gpu_from_resources(file, resources_holder, rpath)
        if scalar_text(config.get("sharedMemorySize")):
            server.shm = True  # llmaz mounts a memory-backed /dev/shm of that size
        server.ignore_rules = dict(ctx.ignore_rules)
        if args_key:
            server.notes.append(
                f"llmaz BackendRuntime {ctx.name or '(unnamed)'}: config {server.container or '(unnamed)'!r}, one of "
                f"the {len(configs)} ways llmaz starts this runtime (a Playground picks one by name); the model "
                "path and name are filled in by llmaz from the Playground's model")
        records.servers.append(server)
