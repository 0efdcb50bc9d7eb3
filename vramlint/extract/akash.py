"""Akash Network SDL (`deploy.yaml`): `services`, compute `profiles` and the `deployment` placing them.

The provider builds one Kubernetes container per service (akash-network/provider, cluster/kube/builder/
workload.go): `command` becomes the container's command and `args` its args, so a vLLM image without `command`
runs its own entrypoint with `args`; `env` items are `NAME=value` (a bare `NAME` is set empty). The service's GPUs
are its compute profile's `resources.gpu.units`, requested as `nvidia.com/gpu` (or `amd.com/gpu`) limits; the
`attributes.vendor.<vendor>` list names the models (with `ram`) the provider may place it on, any of them: one
model is the GPU, several (or a model without `ram` that comes in several sizes) a fleet.
`deployment.<service>.<placement>.count` is the number of replicas.
"""

from __future__ import annotations

import re
from typing import Any

from vramlint.model import GpuRequest, Location, Problem, Server
from vramlint.yamlload import join_path, key_location, value_location

_VENDORS = {"nvidia": "nvidia", "amd": "amd"}


def is_akash(doc: Any) -> bool:
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return False
    profiles = data.get("profiles")
    return isinstance(data.get("services"), dict) and isinstance(data.get("deployment"), dict) \
        and isinstance(profiles, dict) and isinstance(profiles.get("compute"), dict)


def extract_akash(doc: Any) -> tuple[list[Server], list[Problem]]:
    from vramlint.cmdline import find_vllm_invocation, yaml_token
    from vramlint.extract.podspec import apply_invocation, scalar_text
    from vramlint.versions import version_from_image

    data = doc.data
    file = doc.file
    servers: list[Server] = []
    problems: list[Problem] = []
    for name, service in data["services"].items():
        if not isinstance(service, dict):
            continue
        base = join_path("services", str(name))
        image = scalar_text(service.get("image"))
        words = {}
        for key in ("command", "args"):
            raw = service.get(key)
            if isinstance(raw, str):
                words[key] = [yaml_token(file, service, key, join_path(base, key), doc.lines)]
            elif isinstance(raw, list):
                words[key] = [yaml_token(file, raw, i, join_path(join_path(base, key), i), doc.lines) for i in range(len(raw))
                              if isinstance(raw[i], (str, int, float))]
            else:
                words[key] = []
        env, env_locs = _env(file, service, base)
        invocation = find_vllm_invocation(words["command"], words["args"], image, dict(env))
        if invocation is None:
            continue
        location = key_location(file, data["services"], name, base) or Location(file, 1, 1, yaml_path=base)
        server = Server(file=file, location=location, source_format="akash", kind="Akash SDL service",
                        name=str(name), container=str(name))
        server.image = image
        if image:
            server.image_location = value_location(file, service, "image", join_path(base, "image"))
            server.vllm_version = version_from_image(image)
        server.env = {k: v for k, v in env.items() if k in env_locs}
        server.env_locations = dict(env_locs)
        apply_invocation(server, invocation)
        problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
        profile, count = _placement(data, str(name))
        server.gpu = _gpu(file, data, profile)
        if count is not None:
            server.replicas = count
        servers.append(server)
    return servers, problems


def _env(file: str, service: dict, base: str) -> tuple[dict[str, str | None], dict[str, Location]]:
    env: dict[str, str | None] = {}
    locs: dict[str, Location] = {}
    raw = service.get("env")
    if not isinstance(raw, list):
        return env, locs
    for i, item in enumerate(raw):
        if not isinstance(item, str):
            continue
        name, _, value = item.partition("=")
        name = name.strip()
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        env[name] = value
        loc = value_location(file, raw, i, join_path(join_path(base, "env"), i))
        if loc is not None:
            locs[name] = loc
    return env, locs


def _placement(data: dict, service: str) -> tuple[str | None, int | None]:
    """The compute profile and replica count `deployment.<service>.<placement>` gives (the first placement)."""
    placements = data["deployment"].get(service)
    if not isinstance(placements, dict):
        return None, None
    for spec in placements.values():
        if isinstance(spec, dict):
            count = spec.get("count")
            profile = spec.get("profile")
            return (str(profile) if profile is not None else None,
                    count if isinstance(count, int) and not isinstance(count, bool) else None)
    return None, None


def _catalog_choices(model: str) -> list[str]:
    """The catalog GPUs a profile's model entry matches: one, or each memory size of a model written without
    `ram` (the provider matches any node of that model then)."""
    from vramlint import gpus
    from vramlint.extract.podspec import resolve_gpu_hint

    name = model.split("-")[0]
    resolved = resolve_gpu_hint(model) or (resolve_gpu_hint(name) if model != name else None)
    if resolved:
        return [resolved]
    return gpus.ambiguous_candidates(name) if model == name else []


def _gpu(file: str, data: dict, profile: str | None) -> GpuRequest | None:
    from vramlint.extract.podspec import to_int

    compute = data["profiles"]["compute"].get(profile) if profile is not None else None
    resources = compute.get("resources") if isinstance(compute, dict) else None
    gpu = resources.get("gpu") if isinstance(resources, dict) else None
    if not isinstance(gpu, dict):
        return None
    path = f"{join_path('profiles.compute', str(profile))}.resources.gpu"
    units = gpu.get("units")
    if isinstance(units, str) and units.strip().isdigit():
        units = to_int(units)  # the SDL's quantities may be written quoted (past 4,300 digits: no count)
    count = units if isinstance(units, int) and not isinstance(units, bool) else None
    if count == 0:
        return None
    loc = value_location(file, gpu, "units", f"{path}.units") or \
        key_location(file, resources, "gpu", path)
    vendor_map = (gpu.get("attributes") or {}).get("vendor") if isinstance(gpu.get("attributes"), dict) else None
    vendor = "nvidia"
    models: list[str] = []
    if isinstance(vendor_map, dict) and len(vendor_map) == 1:
        key, entries = next(iter(vendor_map.items()))
        vendor = _VENDORS.get(str(key), "nvidia")
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("model") is not None:
                ram = str(entry.get("ram") or "").replace("Gi", "GB")
                models.append(f"{entry['model']}-{ram}" if ram else str(entry["model"]))
    evidence = f"Akash profile {profile}: gpu units {units}" + (f", models {', '.join(models)}" if models else "")
    choices = [_catalog_choices(m) for m in models]
    request = GpuRequest(type=None, count=count, evidence=evidence, location=loc, vendor=vendor, count_location=loc)
    if len(models) == 1 and not choices[0]:
        request.type = models[0]  # not in the catalog: said as written
    elif models and all(choices):
        names = list(dict.fromkeys(n for c in choices for n in c))
        if len(names) == 1:
            request.type = names[0]
        else:
            request.fleet = names  # the provider may place it on any of them: each is budgeted
    return request
