"""Baseten Truss configs (`config.yaml`) with a custom server: `docker_server.start_command` in `base_image`.

Truss (basetenlabs/truss, contexts/image_builder/serving_image_builder.py) writes `start_command` as the
supervisord program that starts the model server in the `base_image.image` container, whose environment has
`environment_variables`. Supervisord splits the command into words as a POSIX shell would (shlex), without
expanding anything, so the command is read as one shell command line; vLLM's server is usually behind an
explicit `sh -c`. `resources.accelerator` is `TYPE` or `TYPE:COUNT` (or a mapping with `accelerator` and
`count`), TYPE one of Truss's Accelerator names (truss/base/truss_config.py): `A100` is the 80 GB card there
(`A100_40GB` the other), `H100_40GB` a 40 GB share of an H100.
"""

from __future__ import annotations

from typing import Any

from vramlint.model import GpuRequest, Location, Problem, Server
from vramlint.yamlload import join_path, key_location, value_location

# Truss's Accelerator names whose catalog name is not the name itself
_CATALOG_NAMES = {"A100": "A100-80GB", "A100_40GB": "A100-40GB"}


def is_truss(doc: Any) -> bool:
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return False
    server = data.get("docker_server")
    return isinstance(server, dict) and isinstance(server.get("start_command"), str)


def extract_truss(doc: Any) -> tuple[list[Server], list[Problem]]:
    from vramlint.cmdline import Token, find_vllm_invocation, yaml_token
    from vramlint.extract.podspec import apply_invocation, scalar_text
    from vramlint.versions import version_from_image

    data = doc.data
    file = doc.file
    docker_server = data["docker_server"]
    base_image = data.get("base_image")
    image = scalar_text(base_image.get("image")) if isinstance(base_image, dict) else None
    env, env_locs = _env(file, data)
    path = "docker_server.start_command"
    script = yaml_token(file, docker_server, "start_command", path, doc.lines)
    invocation = find_vllm_invocation([Token("sh", None), Token("-c", None), script], [], image, dict(env))
    if invocation is None:
        return [], []
    location = value_location(file, docker_server, "start_command", path) or \
        key_location(file, data, "docker_server", "docker_server") or Location(file, 1, 1, yaml_path=path)
    location = Location(file, location.line, location.column, yaml_path=path)
    name = scalar_text(data.get("model_name"))
    server = Server(file=file, location=location, source_format="truss", kind="Truss docker_server", name=name)
    server.image = image
    if image:
        server.image_location = value_location(file, base_image, "image", "base_image.image")
        server.vllm_version = version_from_image(image)
    server.env = {k: v for k, v in env.items() if k in env_locs}
    server.env_locations = dict(env_locs)
    apply_invocation(server, invocation)
    server.gpu, gpu_problem = _gpu(file, data)
    problems = [Problem(file, location.line, location.column, m) for m in invocation.problems]
    return [server], problems + ([gpu_problem] if gpu_problem else [])


def _env(file: str, data: dict) -> tuple[dict[str, str | None], dict[str, Location]]:
    env: dict[str, str | None] = {}
    locs: dict[str, Location] = {}
    raw = data.get("environment_variables")
    if not isinstance(raw, dict):
        return env, locs
    for name, value in raw.items():
        # a null value is a placeholder filled at deploy time (secrets): unknown here
        env[str(name)] = None if value is None or isinstance(value, (dict, list)) else str(value)
        loc = value_location(file, raw, name, join_path("environment_variables", str(name)))
        if loc is not None:
            locs[str(name)] = loc
    return env, locs


def _gpu(file: str, data: dict) -> tuple[GpuRequest | None, Problem | None]:
    """The GPU `resources.accelerator` asks for, and a warning when its count is no positive whole number (the GPU
    is then unknown, not guessed: Truss's own reading of such a count is not checked here)."""
    from vramlint.extract.podspec import resolve_gpu_hint, to_int

    resources = data.get("resources")
    if not isinstance(resources, dict) or resources.get("accelerator") is None:
        return None, None
    spec = resources["accelerator"]
    loc = value_location(file, resources, "accelerator", "resources.accelerator")
    if isinstance(spec, dict):
        name, count = spec.get("accelerator"), spec.get("count", 1)
    else:
        name, _, count_text = str(spec).strip().partition(":")
        # to_int: a count past Python's int-string limit (4,300 digits) is no count, not a failed file
        count = to_int(count_text) if count_text.isdigit() else (1 if not count_text else None)
    if not name:
        return None, None
    if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
        shown = str(spec if not isinstance(spec, dict) else spec.get("count"))
        shown = shown if len(shown) <= 40 else shown[:40] + "..."
        at = loc or Location(file, 1, 1)
        return None, Problem(file, at.line, at.column, f"resources.accelerator {shown!r}: the GPU count is not a "
                             "positive whole number, so the GPU this Truss asks for is unknown (write TYPE:COUNT, "
                             "e.g. A100:2)", level="warning")
    name = str(name)
    resolved = resolve_gpu_hint(_CATALOG_NAMES.get(name, name.replace("_", "-")))
    return GpuRequest(type=resolved or name, count=count, evidence=f"resources.accelerator: {spec}", location=loc,
                      count_location=loc), None
