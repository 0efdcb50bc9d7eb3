"""Beaker experiment specs (Ai2's scheduler, `beaker experiment create spec.yaml`, `version: v2`).

Each item of `tasks:` runs one container: `image.docker` names a Docker image (`image.beaker` a Beaker image, whose
content the file does not show), `command` replaces the image's entrypoint and `arguments` follow it (as a
Kubernetes container's `command` and `args`), `envVars` are `{name, value}` (or `{name, secret}`: set from a Beaker
secret, unknown here), and `resources.gpuCount` is the number of GPUs the task is given.
"""

from __future__ import annotations

from typing import Any

from vramlint.model import GpuRequest, Location, Problem, Server
from vramlint.yamlload import join_path, node_location, value_location


def is_beaker(doc: Any) -> bool:
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict) or str(data.get("version")) != "v2" or "kind" in data:
        return False
    tasks = data.get("tasks")
    return isinstance(tasks, list) and any(
        isinstance(t, dict) and isinstance(t.get("image"), dict) and ("command" in t or "arguments" in t)
        for t in tasks)


def extract_beaker(doc: Any) -> tuple[list[Server], list[Problem]]:
    from vramlint.cmdline import find_vllm_invocation
    from vramlint.extract.podspec import apply_invocation, scalar_text
    from vramlint.versions import version_from_image

    data = doc.data
    file = doc.file
    servers: list[Server] = []
    problems: list[Problem] = []
    for i, task in enumerate(data["tasks"]):
        if not isinstance(task, dict):
            continue
        tpath = join_path("tasks", i)
        image_spec = task.get("image") if isinstance(task.get("image"), dict) else {}
        image = scalar_text(image_spec.get("docker"))
        env, env_locs = _env(file, task, tpath)

        invocation = find_vllm_invocation(_tokens(doc, task, tpath, "command"), _tokens(doc, task, tpath, "arguments"),
                                          image, dict(env))
        if invocation is None:
            continue
        where = node_location(file, task, tpath) or Location(file, 1, 1)
        location = Location(file, where.line, where.column, yaml_path=tpath)
        server = Server(file=file, location=location, source_format="beaker", kind="Beaker task",
                        name=scalar_text(task.get("name")))
        server.image = image
        if image:
            server.image_location = value_location(file, image_spec, "docker", join_path(tpath, "image.docker"))
            server.vllm_version = version_from_image(image)
        server.env = {k: v for k, v in env.items() if k in env_locs}
        server.env_locations = dict(env_locs)
        apply_invocation(server, invocation)
        problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
        resources = task.get("resources")
        count = resources.get("gpuCount") if isinstance(resources, dict) else None
        if isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= 10_000:
            loc = value_location(file, resources, "gpuCount", join_path(tpath, "resources.gpuCount"))
            server.gpu = GpuRequest(type=None, count=count, evidence=f"resources.gpuCount: {count}", location=loc,
                                    count_location=loc)
        servers.append(server)
    return servers, problems


def _tokens(doc: Any, task: dict, tpath: str, key: str) -> list:
    from vramlint.cmdline import yaml_token

    items = task.get(key)
    if not isinstance(items, list):
        return []
    return [yaml_token(doc.file, items, j, join_path(join_path(tpath, key), j), doc.lines) for j in range(len(items))]


def _env(file: str, task: dict, tpath: str) -> tuple[dict[str, str | None], dict[str, Location]]:
    env: dict[str, str | None] = {}
    locs: dict[str, Location] = {}
    items = task.get("envVars")
    if not isinstance(items, list):
        return env, locs
    for j, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        name = item["name"]
        value = item.get("value")
        # `secret:` sets it from a Beaker secret: unknown here
        env[name] = None if value is None or isinstance(value, (dict, list)) else str(value)
        loc = value_location(file, item, "value" if "value" in item else "name",
                             join_path(join_path(tpath, "envVars"), j))
        if loc is not None:
            locs[name] = loc
    return env, locs
