"""SkyPilot task YAML (`sky launch task.yaml`, `sky serve up`): `run:` is a shell script run on each node.

SkyPilot's task spec (docs.skypilot.co, "YAML configuration"): `resources.accelerators` names the GPUs of each
node (`H100:8`, `A100` for one, a mapping `{A100: 8}`, or several alternatives SkyPilot picks one of: a mapping
`{L4: 1, A10G: 1}` or a list), `num_nodes` the nodes (1 by default), `envs` variables set for `setup` and `run`
(a null value must be given with `--env` at launch: unknown here), `secrets` likewise, and
`resources.image_id: docker:<image>` the container image `setup` and `run` run in. In `run` SkyPilot sets
SKYPILOT_NUM_GPUS_PER_NODE (the accelerator count of the node), SKYPILOT_NUM_NODES and SKYPILOT_NODE_RANK. A
`pip install vllm==X` in `setup` installs the vLLM release the server runs (a local build label such as
`0.10.1+gptoss` names no release).
"""

from __future__ import annotations

import re
from typing import Any

from vramlint.model import EngineGroup, GpuRequest, GroupMember, Location, Problem, Server
from vramlint.yamlload import join_path, key_location, value_location

_RESOURCE_KEYS = ("accelerators", "image_id", "cloud", "infra", "instance_type", "cpus", "memory", "ports",
                  "use_spot", "disk_size", "disk_tier", "region", "zone", "network_tier")
_ACCELERATOR = re.compile(r"^\s*([A-Za-z][\w.-]*)\s*(?::\s*(\d+(?:\.\d+)?))?\s*$")
_MAX_COUNT = 10_000


def is_skypilot(doc: Any) -> bool:
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict) or not isinstance(data.get("run"), str):
        return False
    if any(k in data for k in ("kind", "apiVersion", "services", "commands", "steps", "jobs")):
        return False
    resources = data.get("resources")
    if isinstance(resources, dict) and any(k in resources for k in _RESOURCE_KEYS):
        return True
    return isinstance(data.get("envs"), dict) or isinstance(data.get("num_nodes"), int) \
        or isinstance(data.get("setup"), str)


def extract_skypilot(doc: Any) -> tuple[list[Server], list[Problem]]:
    from vramlint.cmdline import Token, find_vllm_invocation, yaml_token
    from vramlint.extract.podspec import apply_invocation, scalar_text
    from vramlint.versions import version_from_image

    data = doc.data
    file = doc.file
    problems: list[Problem] = []
    resources = data.get("resources") if isinstance(data.get("resources"), dict) else {}
    gpu = _gpu(file, resources)
    nodes = data.get("num_nodes", 1)
    nodes = nodes if isinstance(nodes, int) and not isinstance(nodes, bool) and 0 < nodes <= _MAX_COUNT else None
    env, env_locs = _env(file, data)
    if gpu is not None and gpu.count is not None:
        env.setdefault("SKYPILOT_NUM_GPUS_PER_NODE", str(gpu.count))
    if nodes is not None:
        env.setdefault("SKYPILOT_NUM_NODES", str(nodes))
    image = None
    image_id = scalar_text(resources.get("image_id"))
    if image_id and image_id.startswith("docker:"):
        image = image_id[len("docker:"):].strip() or None
    script = yaml_token(file, data, "run", "run", doc.lines)
    start = key_location(file, data, "run", "run") or Location(file, 1, 1, yaml_path="run")
    invocation = find_vllm_invocation([Token("sh", start), Token("-c", start), script], [], image, dict(env))
    if invocation is None:
        return [], problems
    location = Location(file, start.line, start.column, yaml_path="run")
    server = Server(file=file, location=location, source_format="skypilot", kind="SkyPilot task",
                    name=scalar_text(data.get("name")))
    server.image = image
    if image:
        server.image_location = value_location(file, resources, "image_id", "resources.image_id")
        server.vllm_version = version_from_image(image)
    else:
        _setup_pin(server, file, data)
    server.env = {k: v for k, v in env.items() if k in env_locs}
    server.env_locations = dict(env_locs)
    apply_invocation(server, invocation)
    problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
    server.gpu = gpu
    if nodes is not None and nodes > 1:
        server.engine_group = EngineGroup(
            kind="SkyPilot cluster", source="SkyPilot task: num_nodes x resources.accelerators",
            members=[GroupMember("nodes", nodes, gpu.count if gpu is not None else None,
                                 location=value_location(file, data, "num_nodes", "num_nodes"))],
            fix="ask for more nodes (num_nodes) or accelerators per node, or lower the parallel size")
    return [server], problems


def _env(file: str, data: Any) -> tuple[dict[str, str | None], dict[str, Location]]:
    env: dict[str, str | None] = {}
    locs: dict[str, Location] = {}
    for key in ("envs", "secrets"):
        raw = data.get(key)
        if not isinstance(raw, dict):
            continue
        for name, value in raw.items():
            # a null value is given with --env / --secret at launch: unknown here
            env[str(name)] = None if value is None or isinstance(value, (dict, list)) else str(value)
            loc = value_location(file, raw, name, join_path(key, str(name)))
            if loc is not None:
                locs[str(name)] = loc
    return env, locs


def _gpu(file: str, resources: dict) -> GpuRequest | None:
    spec = resources.get("accelerators")
    if spec is None:
        return None
    loc = value_location(file, resources, "accelerators", "resources.accelerators")
    choices: list[tuple[str, float | None]] = []
    if isinstance(spec, dict):
        for name, count in spec.items():
            # YAML reads `{L4:1, A10G:1}` as keys `L4:1` with null values: the count is in the key then
            m = _ACCELERATOR.match(str(name))
            if m is None:
                return GpuRequest(type=None, count=None, evidence=f"resources.accelerators: {spec}", location=loc)
            if isinstance(count, (int, float)) and not isinstance(count, bool):
                number: float | None = count
            elif count is None:
                number = float(m.group(2)) if m.group(2) else 1
            else:
                number = None
            choices.append((m.group(1), number))
    else:
        items = spec if isinstance(spec, list) else [spec]
        for item in items:
            m = _ACCELERATOR.match(str(item))
            if m is None:
                return GpuRequest(type=None, count=None, evidence=f"resources.accelerators: {spec}", location=loc)
            choices.append((m.group(1), float(m.group(2)) if m.group(2) else 1))
    if not choices:
        return None
    text = ", ".join(f"{n}:{c:g}" if c is not None else n for n, c in choices)
    evidence = f"resources.accelerators: {text}"
    counts = {c for _, c in choices}
    count = None
    if len(counts) == 1:
        [c] = counts
        # bounded first: `.inf`, `.nan` and a 5,000-digit count (a float past 1e308) are no count SkyPilot launches
        if c is not None and 0 < c <= _MAX_COUNT and c == int(c):
            count = int(c)
    names = {n.upper() for n, _ in choices}
    if len(choices) > 1:
        evidence += " (alternatives: SkyPilot launches on one of them)"
    from vramlint.extract.podspec import resolve_gpu_hint

    if len(names) != 1:
        request = GpuRequest(type=None, count=count, evidence=evidence, location=loc, count_location=loc)
        # the task may land on any of them: a fleet (the budget on each, a failure on any said with its GPU),
        # when every alternative is a GPU vramlint knows and they ask for the same count
        resolved = [resolve_gpu_hint(_sky_name(n)) for n, _ in choices]
        if count is not None and all(resolved) and not any(n.lower().startswith("tpu") for n, _ in choices):
            request.fleet = list(dict.fromkeys(resolved))
        return request
    name = choices[0][0]
    if name.lower().startswith("tpu"):
        return GpuRequest(type=name, count=count, evidence=evidence, location=loc, vendor="google-tpu",
                          count_location=loc)
    return GpuRequest(type=resolve_gpu_hint(_sky_name(name)) or name, count=count, evidence=evidence, location=loc,
                      count_location=loc)


def _sky_name(name: str) -> str:
    # SkyPilot's accelerator names: `A100` is the 40 GB part (`A100-80GB` the other), as `sky show-gpus` lists them
    return "A100-40GB" if name.upper() == "A100" else name


def _setup_pin(server: Server, file: str, data: Any) -> None:
    """`pip install vllm==X` in `setup` is the release the server runs (normalised as pip writes it)."""
    from vramlint.versions import pinned_vllm, pip_install_words

    setup = data.get("setup")
    if not isinstance(setup, str) or len(setup) > 1_000_000:
        return
    pins = [v for word in pip_install_words(setup) if (v := pinned_vllm(word)) is not None]
    if len(set(pins)) != 1:
        return
    version = pins[0]
    if "+" in version:
        server.notes.append(f"setup installs vllm=={version}, a build with a local label, not a vLLM release: its "
                            "version is not known from the file")
        return
    # PEP 440's normal form: `0.5.3post1` is 0.5.3.post1
    version = re.sub(r"(\d)(post|dev)(\d*)$", r"\1.\2\3", version)
    server.vllm_version = version
    where = key_location(file, data, "setup", "setup")
    server.vllm_version_source = ("SkyPilot setup (pip install vllm==" + pins[0]
                                  + (f", {where.file}:{where.line}" if where is not None else "") + ")")
