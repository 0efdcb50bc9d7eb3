"""dstack configurations (`.dstack.yml`, `type: service` / `task`): `commands:` run in `image:` on `resources:`.

dstack runs the `commands` items one after another in a shell, with `env:` set (`NAME=value`, or a bare
`NAME` taken from the environment dstack is run in, unknown here) and its own variables, of which
`DSTACK_GPUS_NUM` (GPUs of the run) and `DSTACK_GPUS_PER_NODE` are known from `resources.gpu`
(`H100:8`, `MI300X:8`, `A100:80GB:2`, `24GB..80GB:1..2`, or the mapping form `{name: [H100], count: 8}`).
The `model:` key names the model for dstack's gateway, not necessarily what vLLM loads; the command says that.
"""

from __future__ import annotations

import re
from typing import Any

from vramlint.model import GpuRequest, Location, Problem, Server
from vramlint.yamlload import join_path, key_location, node_location, value_location

_RUN_TYPES = ("service", "task")
_AMD = re.compile(r"^MI\d{3}[A-Z]?$", re.IGNORECASE)
_MEMORY = re.compile(r"^\d+(\.\d+)?(GB|MB|TB)?(\.\.\d*(GB|MB|TB)?)?$", re.IGNORECASE)
_COUNT = re.compile(r"^(\d{1,9})(\.\.(\d{0,9}))?$")  # a count of GPUs has a few digits (int() of 4,300+ raises)


def is_dstack(doc: Any) -> bool:
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict) or data.get("type") not in _RUN_TYPES:
        return False
    return isinstance(data.get("commands"), list) and ("resources" in data or "image" in data or "port" in data)


def extract_dstack(doc: Any) -> tuple[list[Server], list[Problem]]:
    from vramlint.cmdline import Token, find_vllm_invocation, yaml_token
    from vramlint.extract.podspec import apply_invocation, scalar_text
    from vramlint.versions import version_from_image

    data = doc.data
    file = doc.file
    problems: list[Problem] = []
    gpu = _gpu(file, data)
    env, env_locs = _env(file, data)
    if gpu is not None and gpu.count is not None:
        for name in ("DSTACK_GPUS_NUM", "DSTACK_GPUS_PER_NODE"):
            env.setdefault(name, str(gpu.count))
    image = scalar_text(data.get("image"))
    commands = data["commands"]
    for i, item in enumerate(commands):
        if not isinstance(item, str):
            continue
        path = join_path("commands", i)
        script = yaml_token(file, commands, i, path, doc.lines)
        invocation = find_vllm_invocation([Token("sh", None), Token("-c", None), script], [], image, dict(env))
        if invocation is None:
            continue
        location = node_location(file, commands, "commands") or key_location(file, data, "commands", "commands") \
            or Location(file, 1, 1, yaml_path="commands")
        location = Location(file, location.line, location.column, yaml_path=path)
        server = Server(file=file, location=location, source_format="dstack", kind=f"dstack {data.get('type')}",
                        name=scalar_text(data.get("name")))
        server.image = image
        if image:
            server.image_location = value_location(file, data, "image", "image")
            server.vllm_version = version_from_image(image)
        server.env = {k: v for k, v in env.items() if k in env_locs}
        server.env_locations = dict(env_locs)
        apply_invocation(server, invocation)
        problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
        server.gpu = gpu
        resources = data.get("resources")
        server.shm = bool(isinstance(resources, dict) and resources.get("shm_size")) or None
        replicas = data.get("replicas")
        if isinstance(replicas, int) and not isinstance(replicas, bool):
            server.replicas = replicas
        return [server], problems
    return [], problems


def _env(file: str, data: Any) -> tuple[dict[str, str | None], dict[str, Location]]:
    env: dict[str, str | None] = {}
    locs: dict[str, Location] = {}
    raw = data.get("env")
    if isinstance(raw, list):
        for i, item in enumerate(raw):
            if not isinstance(item, str):
                continue
            name, eq, value = item.partition("=")
            name = name.strip()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                continue
            env[name] = value if eq else None  # a bare NAME comes from where dstack runs: unknown here
            loc = value_location(file, raw, i, join_path("env", i))
            if loc is not None:
                locs[name] = loc
    elif isinstance(raw, dict):
        for name, value in raw.items():
            env[str(name)] = None if value is None or isinstance(value, (dict, list)) else str(value)
            loc = value_location(file, raw, name, join_path("env", str(name)))
            if loc is not None:
                locs[str(name)] = loc
    return env, locs


def _gpu(file: str, data: Any) -> GpuRequest | None:
    resources = data.get("resources")
    if not isinstance(resources, dict) or "gpu" not in resources:
        return None
    spec = resources.get("gpu")
    loc = value_location(file, resources, "gpu", "resources.gpu")
    names: list[str] = []
    memory = None
    count: int | None = None
    if isinstance(spec, dict):
        raw_names = spec.get("name")
        names = [str(n) for n in raw_names] if isinstance(raw_names, list) else ([str(raw_names)] if raw_names else [])
        memory = str(spec.get("memory")) if spec.get("memory") is not None else None
        count, _ = _count(str(spec.get("count", 1)))
        text = ", ".join(f"{k}: {v}" for k, v in spec.items())
    else:
        text = str(spec)
        count = 1
        for part in text.split(":"):
            part = part.strip()
            if _COUNT.match(part):
                count, _ = _count(part)
            elif _MEMORY.match(part) and part[-1:].upper() == "B":
                memory = part
            elif part:
                names.extend(n.strip() for n in part.split(",") if n.strip())
    evidence = f"resources.gpu: {text}"
    if count is None:
        evidence += " (a range: the number of GPUs is chosen at run time)"
    if len(names) != 1:
        return GpuRequest(type=None, count=count, evidence=evidence + ("" if not names else " (several GPU models)"),
                          location=loc, count_location=loc)
    name = names[0]
    if _AMD.match(name):
        return GpuRequest(type=name.upper(), count=count, evidence=evidence, location=loc, vendor="amd",
                          count_location=loc)
    if name.lower().startswith(("tpu", "v2-", "v3-", "v4-", "v5", "v6")):
        return GpuRequest(type=name, count=count, evidence=evidence, location=loc, vendor="google-tpu",
                          count_location=loc)
    from vramlint.extract.podspec import resolve_gpu_hint

    resolved = resolve_gpu_hint(f"{name}-{memory}" if memory else name) or resolve_gpu_hint(name)
    return GpuRequest(type=resolved or name, count=count, evidence=evidence, location=loc, count_location=loc)


def _count(text: str) -> tuple[int | None, bool]:
    m = _COUNT.match(text.strip())
    if not m:
        return None, False
    if m.group(2):  # `1..2`: a range
        return (int(m.group(1)) if m.group(3) == m.group(1) else None), True
    return int(m.group(1)), False
