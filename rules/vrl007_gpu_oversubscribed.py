"""Several vLLM engines share a GPU and together claim more than its memory.

Each engine takes `gpu_memory_utilization` x the GPU's total memory at start-up (vLLM 0.9.2+ refuses to
start when less than that is free: "Free memory on device (...) on startup is less than desired GPU memory
utilization"; older versions run out of memory later). When several engines are pinned to the same
physical GPU (compose `device_ids`, `NVIDIA_VISIBLE_DEVICES`, fractional GPU sharing), their utilizations
must add up to at most `max-total-utilization` (1.0). The last engine to start is the one that fails, so
which one breaks depends on start order. Devices named through a variable the repository does not set
(`NVIDIA_VISIBLE_DEVICES: ${GPU_DEVICES:-all}`, `device_ids: ["${GPU_ID}"]`, set by a per-node `.env` or the
shell) are not known to be shared, so they are not added up.

vLLM V0 0.6.4 and V1 0.7-0.9.0 go further: they count the memory held by every other process on the GPU
against the engine's own share, so even utilizations that add up to less than 1 leave the second engine
without KV cache. For those versions the rule checks that each engine still has room for one full-length
request with the other engines' shares taken out.

Compose services that the scanned tree starts one at a time are a warning too, "if they are started together": a
llama-swap config whose models' `cmd` (macros expanded) or a script, Makefile or config among the scanned paths that
runs `docker compose -f <this file> up <one service>` (or `run <service>`, or `up "$1"`) says the file is a catalog
started service by service, not with a plain `docker compose up` (only the scanned paths are read, their exclusions
and .gitignore applied; a file named alone on the command line has no such evidence).
Compose services in `profiles` run only when their profile is active, so each profile is checked with
the services that have no profile; services in different profiles are not added up. A group that a profile's
services complete is a warning: they run together only when the profile is started as a whole (`docker compose
--profile P up`), while `docker compose up SERVICE` (or an on-demand starter) runs one of them alone. Services that set the same
`container_name` never run together (Docker Compose refuses to create two containers of one name, and Docker a
second container of a name in use): of each such set, one engine counts, the one with the smallest share. Time-sliced GPUs
(`nvidia.com/gpu.shared`) are not checked: the device plugin decides at run time which
pods share a device, so the files do not say which engines add up.

The finding is reported once per group, on its last engine in file order, at its
`--gpu-memory-utilization` (or its container when it is left at the default), and names the others with
their lines (SARIF `relatedLocations`). When the devices come from the default of a variable the repository does not set
(`NVIDIA_VISIBLE_DEVICES: ${CHAT_GPUS:-all}`, set in a `.env` at deploy time), the placement is only the
file's assumption and the finding is a warning. So it is when an engine left at the default share has a word
of its command line known only at run time (`$EXTRA_ARGS`): that word may set its `--gpu-memory-utilization`.

Fix (safe when every engine's budget still starts): each engine's `--gpu-memory-utilization` scaled down in
proportion, to hundredths, so that they add up to at most `max-total-utilization`; one fix edits all the
engines; unsafe when the placement is only the file's assumption.

Failing example (two engines on device 0, each at the default 0.9):

```yaml
services:
  chat:
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]}}}
  embed:
    command: ["--model", "BAAI/bge-m3"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]}}}
```

Passing example (0.45 each):

```yaml
services:
  chat:
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--gpu-memory-utilization", "0.45"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]}}}
  embed:
    command: ["--model", "BAAI/bge-m3", "--gpu-memory-utilization", "0.45"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]}}}
```

What vramlint prints for `examples/compose/compose.yaml`, and the edit of its fix (`--diff`):

<!-- output: vramlint check examples/compose/compose.yaml --select VRL007 -->
```text
VRL007 [error] 2 engines share the same GPU of 22.03 GiB: gpu_memory_utilization adds up to 1.05 = 23.13 GiB
  --> examples/compose/compose.yaml:31:7
   |
31 |       --gpu-memory-utilization 0.45
   |       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
   = note: The engines: chat (line 7) 0.6, qwen-small (line 26) 0.45; whichever starts last finds too little
           free memory and vLLM refuses to start. Shared with chat (line 7); lower --gpu-memory-utilization so
           the engines add up to at most 1 (this one to 0.40 at most, if the others stay)
   = note: line 12: --gpu-memory-utilization 0.60
   = help: scale gpu_memory_utilization down to chat 0.57, qwen-small 0.42 (adds up to 0.99) (safe fix: --fix
           applies it)

Found 1 finding (1 error) in 2 servers, 1 file. Failing: findings at or above error. 1 fixable with --fix (--diff shows them).
```

<!-- output: vramlint check examples/compose/compose.yaml --select VRL007 --diff -->
```text
--- a/examples/compose/compose.yaml
+++ b/examples/compose/compose.yaml
@@ -9,7 +9,7 @@
     command: >
       --model meta-llama/Llama-3.2-3B-Instruct
       --max-model-len 16384
-      --gpu-memory-utilization 0.60
+      --gpu-memory-utilization 0.57
     ports:
       - "8000:8000"
     ipc: host
@@ -28,7 +28,7 @@
     command: >
       --model Qwen/Qwen2.5-1.5B-Instruct
       --max-model-len 8192
-      --gpu-memory-utilization 0.45
+      --gpu-memory-utilization 0.42
       --port 8001
     ports:
       - "8001:8001"
```
"""

from __future__ import annotations

import math

from vramlint.rule import arg_location, gib, version_tuple

ID = "VRL007"
NAME = "gpu-oversubscribed"
LEVEL = "error"
OPTIONS = {
    "max_total_utilization": 1.0,  # the sum of gpu_memory_utilization allowed on one GPU
}


# Sharing that does not say which engines land on the same device (the device plugin decides at run time).
UNPLACED_KEYS = {"time-sliced"}


def _label(assessment, seen_from=None) -> str:
    server = assessment.server
    name = server.name or server.container or "engine"
    if server.container and server.container != name:
        name = f"{name}/{server.container}"
    if seen_from is not None and seen_from.server.file == server.file:
        return f"{name} (line {server.location.line})"
    return f"{name} ({server.location.file}:{server.location.line})"


def _scenarios(members: list) -> list[tuple[str | None, list]]:
    """Which engines run together: compose services in profiles start only when their profile is active, and
    services that give their container one name never run at once (see ``_one_per_container_name``)."""
    always = [a for a in members if not a.server.profiles]
    profiles = sorted({p for a in members for p in a.server.profiles})
    if not profiles:
        return [(None, _one_per_container_name(members))]
    out: list[tuple[str | None, list]] = [(None, _one_per_container_name(always))]
    for profile in profiles:
        out.append((profile, _one_per_container_name(always + [a for a in members if profile in a.server.profiles])))
    return out


def _container_name(server) -> str | None:
    """The `container_name` a compose service sets (None: compose names the container after the project and the
    service, `<project>-<service>-1`, unique to it)."""
    if server.source_format != "compose" or not server.container or server.container == server.name:
        return None
    return server.container


def _one_per_container_name(running: list) -> list:
    """Compose services that set one `container_name` never run together: Docker Compose refuses a project in
    which two of its services declare the same container name (compose-go `Project.CheckContainerNameUnicity`,
    which `docker compose create` / `up` run on the services selected, "container name ... is already in use by
    service ..."), and Docker refuses a second container of a name in use. Such a file is run one service at a
    time (`docker compose up SERVICE`), so of each such set only one engine is on the GPU at once: the one with
    the smallest share is kept, as whichever runs claims at least that much."""
    by_name: dict[str, list] = {}
    out = []
    for a in running:
        name = _container_name(a.server)
        if name is None:
            out.append(a)
        else:
            by_name.setdefault(name, []).append(a)
    for same in by_name.values():
        known = [a for a in same if _utilization(a) is not None]
        out.append(min(known, key=_utilization) if known else same[0])
    return sorted(out, key=lambda a: (a.server.file, a.server.location.line))


def _utilization(assessment) -> float | None:
    value = assessment.server.args.get("gpu_memory_utilization", "default")
    if value == "default":
        return assessment.budget.gpu_memory_utilization if assessment.budget else None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _counts_other_processes(assessment) -> bool:
    """vLLM versions whose KV budget subtracts memory held by every other process on the GPU.

    V0 0.6.4 and V1 0.7-0.9.0 count all used device memory (CUDA context, other engines) as their own
    non-torch memory, so a second engine's `gpu_memory_utilization` share must also cover the first engine.
    """
    budget = assessment.budget
    if budget is None:
        return False
    version = version_tuple(budget.vllm_version)
    if version is None:
        return False
    if budget.engine == "v0":
        return version[:3] == (0, 6, 4)
    return (0, 7) <= version[:2] and version < (0, 9, 2)


def check_all(assessments, ctx):
    groups: dict[str, list] = {}
    for a in assessments:
        gpu = a.server.gpu
        if gpu is not None and gpu.shared_key and gpu.shared_key not in UNPLACED_KEYS:
            groups.setdefault(gpu.shared_key, []).append(a)
    limit = float(ctx.options["max_total_utilization"])
    reported: set[int] = set()
    for members in groups.values():
        for profile, running in _scenarios(members):
            if len(running) < 2:
                continue
            for finding, a in _check_together(running, profile, limit, ctx):
                if id(a) not in reported:
                    reported.add(id(a))
                    yield finding


def _check_together(members, profile, limit, ctx):
    utils = [(a, _utilization(a)) for a in members]
    known = [(a, u) for a, u in utils if u is not None]
    total_gpu = next((a.gpu.total_gib for a in members if a.gpu is not None), None)
    total_util = sum(u for _, u in known)
    unknown = [a for a, u in utils if u is None]
    when = f" when compose profile {profile!r} is active" if profile else ""
    if total_util > limit + 1e-9:
        shares = _shares(known, total_util, limit, ctx) if not unknown else None
        # One root cause, one finding: on the last engine of the group in file order (the one whose share
        # takes the sum over the limit when they start in that order), naming the others and their lines.
        a, u = max(known, key=lambda item: (item[0].server.file, item[0].server.location.line))
        size = f" of {gib(total_gpu)}" if total_gpu else ""
        claimed = f" = {gib(total_util * total_gpu)}" if total_gpu else ""
        listing = ", ".join(f"{_label(x, a)} {xu:g}" for x, xu in known)
        others = [x for x in members if x is not a]
        share = 1.0 - (total_util - u)
        fix = (
            f"lower --gpu-memory-utilization so the engines add up to at most {limit:g} "
            f"(this one to {max(share, 0):.2f} at most, if the others stay)"
            if share > 0.05
            else "give the engines separate GPUs"
        )
        assumed = ", ".join(dict.fromkeys(x.server.gpu.placement_assumed for x in members
                                          if x.server.gpu.placement_assumed))
        if assumed:
            fix += (f". This holds if the engines are placed as the file assumes: the devices come from the "
                    f"defaults of {assumed}, which the repository does not set")
        # Engines of a profile run together only when it is started as a whole (`docker compose --profile P
        # up`); `docker compose up SERVICE` starts that service alone, as an on-demand starter does, and the
        # file does not say which of the two is done: not certain, so a warning.
        by_profile = profile is not None and any(profile in x.server.profiles for x in members)
        if by_profile:
            fix += (f". This holds if the profile's services are started together (`docker compose --profile "
                    f"{profile} up`); started one at a time (`docker compose up SERVICE`) they do not share the GPU")
        # an engine whose share is its default, with a word of its command line known only at run time
        # (`$EXTRA_ARGS`), may set --gpu-memory-utilization there: the sum is not certain
        opaque = [x for x in members if x.server.opaque_args is not None
                  and "gpu_memory_utilization" not in x.server.args]
        # the repository starts these services one at a time (a llama-swap config, a script running `docker
        # compose -f FILE up SERVICE`): a plain `docker compose up` of the file is not how it runs
        alone = [x for x in members if x.server.started_alone]
        together = " if they are started together" if alone else ""
        if alone:
            places = list(dict.fromkeys(x.server.started_alone for x in alone))
            where = places[0] + (f" (and {len(places) - 1} more place{'s' if len(places) > 2 else ''})"
                                 if len(places) > 1 else "")
            fix += (f". This holds if they are started together (`docker compose up` of the file); {where} starts "
                    f"{'them' if len(alone) > 1 else _label(alone[0], a)} one at a time"
                    + (f" ({len(alone)} of the {len(members)})" if len(alone) < len(members) else "")
                    + ", and one at a time they do not share the GPU")
        if opaque:
            fix += (". This holds if " + ", ".join(_label(x, a) for x in opaque) + " keeps the default "
                    "gpu_memory_utilization: a word of its command line is known only at run time and may set it")
        yield ctx.finding(
            a,
            f"{len(members)} engines share the same GPU{size}{when}: gpu_memory_utilization adds up to "
            f"{total_util:.2f}{claimed}{together}",
            arg_location(a.server, "gpu_memory_utilization"),
            detail=f"The engines: {listing}; whichever starts last finds too little free memory and vLLM refuses to start. "
            f"Shared with {', '.join(_label(o, a) for o in others)}; {fix}",
            level="warning" if assumed or by_profile or opaque or alone else None,
            fix=_assumed(shares) if assumed or by_profile or opaque or alone else shares,
            related=[arg_location(o.server, "gpu_memory_utilization") for o in others],
        ), a
        return
    if unknown or total_gpu is None:
        return
    for a, u in known:
        budget = a.budget
        if not _counts_other_processes(a) or not budget.starts:
            continue
        others = [(o, ou) for o, ou in known if o is not a]
        held_by_others = sum(ou for _, ou in others) * total_gpu
        kv_left = budget.kv_cache_gib - held_by_others
        one_request = budget.kv_bytes_per_token * budget.max_model_len / 2**30
        if kv_left >= one_request:
            continue
        yield ctx.finding(
            a,
            f"with the other engines on its GPU running, this engine's KV cache shrinks to {gib(max(kv_left, 0))}, "
            f"less than one {budget.max_model_len:,}-token request",
            detail=f"vLLM {budget.vllm_version} ({budget.engine}) counts memory held by other processes on the GPU "
            f"against this engine's gpu_memory_utilization {u:g} ({gib(u * total_gpu)} of {gib(total_gpu)}): "
            f"when {', '.join(_label(o, a) for o, _ in others)} is already running{when} "
            f"({gib(held_by_others)}), its KV cache shrinks from {gib(budget.kv_cache_gib)} to "
            f"{gib(max(kv_left, 0))}, less than one {budget.max_model_len:,}-token request "
            f"({gib(one_request)}), and it does not start. Give each engine its own GPU, or upgrade to "
            "vLLM 0.9.2+ where each engine's share counts only its own memory",
            location=arg_location(a.server, "gpu_memory_utilization"),
            fix=_advice_own_gpus(),
            related=[arg_location(o.server, "gpu_memory_utilization") for o, _ in others],
        ), a


def _assumed(fix):
    """The placement is the file's assumption (a variable's default): the same edits, for a person to approve."""
    if fix is not None:
        fix.safe = False
        fix.description += " (if the engines are placed as the file assumes)"
    return fix


def _advice_own_gpus():
    from vramlint.fixes import advice

    return advice("give each engine its own GPU, or upgrade to vLLM 0.9.2+",
                  "which GPU each engine gets, or the image, is a choice for a person")


def _shares(known, total_util, limit, ctx):
    """Each engine's utilisation scaled down in proportion, to hundredths, so they add up to at most ``limit``;
    safe when each engine's budget still starts at its share (all engines' edits are one fix)."""
    from vramlint.fixes import advice, make_fix
    from vramlint.rule import rebudget

    new = [(a, math.floor(u / total_util * limit * 100 + 1e-9) / 100) for a, u in known]
    if any(share < 0.05 for _, share in new):
        return advice("give the engines separate GPUs", "scaled down to add up to at most "
                      f"{limit:g}, some engine would get less than 0.05 of the GPU")
    starts = all(a.budget is None or ((b := rebudget(a, gpu_memory_utilization=share)) is not None and b.starts)
                 for a, share in new)
    listing = ", ".join(f"{a.server.name or a.server.container or 'engine'} {share:g}" for a, share in new)
    return make_fix(f"scale gpu_memory_utilization down to {listing} (adds up to "
                    f"{sum(s for _, s in new):.2f})" + ("" if starts else "; some engine may then not start"),
                    starts and all(a.budget is not None for a, _ in new),
                    [(a.server, "gpu_memory_utilization", share) for a, share in new])
