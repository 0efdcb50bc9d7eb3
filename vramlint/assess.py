"""Resolve each server's model, GPU and vLLM version, then compute its budget.

Resolution order:
* model: ``vramlint.models.resolve_model`` (configuration alias, local directory, HF cache, Hub, embedded
  catalog); each distinct model name is resolved once per run.
* GPU: what the deployment says (``server.gpu``: catalog type, MIG profile, memory cap), else ``--gpu`` /
  configuration, with ``--gpu-memory-gib`` standing in for a GPU that is not in the catalog.
* vLLM version: the image tag, else ``--vllm-version`` / configuration, else ``versions.DEFAULT_VERSION``.

What cannot be resolved is never guessed: the server gets ``budget=None`` and an ``unresolved`` entry that
says what is missing and how to supply it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vramlint import gpus as gpu_catalog
from vramlint import versions
from vramlint.budget import compute_budget, speculative_draft_name
from vramlint.budget.common import NotSized, sizing_args
from vramlint.model import Assessment, GpuSpec, ModelInfo, ResolveOptions, Server
from vramlint.platforms import CPU_UNRESOLVED, cpu_backend
from vramlint.textsafe import shortened

# GPUs of one engine (tensor x pipeline parallel) whose budget vramlint computes: the widest vLLM deployments use a
# few hundred; a wider one is said (VRL010) and not sized, since the budget's cost grows with the ranks.
MAX_SIZED_GPUS = 4096
# A model longer than this is no path (Linux's PATH_MAX) and no Hub id vLLM could load
MAX_MODEL_NAME = 4096

__all__ = ["assess", "compute_budget", "resolve_gpu", "resolve_version"]


def _said_on_the_model_line(why: str | None) -> str | None:
    """The part of a model's reason to say on the line that names it: a local folder outside the scanned tree,
    or a config.json of the tree that is not usable (`vramlint.models.IN_THE_TREE`); None for the others (a path
    that exists only where the server runs, a Hub model not looked up), which the summary says by cause."""
    from vramlint.models import CACHE_DOTDOT, IN_THE_TREE

    if not why:
        return None
    if why.startswith(CACHE_DOTDOT):
        return shortened(why[len(CACHE_DOTDOT):].split("; ")[0], 300)
    if IN_THE_TREE in why:
        return shortened(why.split(IN_THE_TREE, 1)[1].split("; ")[0], 300)
    first = why.split("; ")[0]
    return shortened(first, 300) if " is outside the scanned tree" in first else None


def _resolve_model(name: str, options: ResolveOptions) -> tuple[ModelInfo | None, str | None]:
    try:
        from vramlint.models import resolve_model
    except ImportError:
        return None, "model resolution is not available in this build of vramlint"
    return resolve_model(name, options)


def resolve_version(server: Server, options: ResolveOptions) -> tuple[str, str]:
    """(version, where it came from): image tag, --vllm-version / the configuration file, the newest release for
    a `:latest` vLLM image, an operator's pin, or the default."""
    # a vLLM built from source over a base image replaces the base's release (its tag says nothing then)
    tagged = versions.normalize_version(server.vllm_version) or (
        None if server.vllm_source_build is not None else versions.version_from_image(server.image))
    if tagged and server.vllm_version_source:
        return tagged, server.vllm_version_source
    if tagged:
        return tagged, f"image tag ({server.image})" if server.image else "image tag"
    configured = versions.normalize_version(options.vllm_version)
    if configured:
        return configured, options.vllm_version_source or "configuration"
    if versions.runs_newest_release(server.image) and server.vllm_source_build is None:
        return versions.DEFAULT_VERSION, f"latest tag ({server.image}: the newest release)"
    assumed = versions.normalize_version(server.assumed_version)
    if not assumed and server.image:
        # a third-party image whose plain tag looks like a vLLM release: assumed, as an operator's pin is
        assumed = versions.assumed_version_from_tag(server.image)
        if assumed:
            server.assumed_version, server.assumed_version_source = assumed, versions.assumed_tag_source(server.image)
            return assumed, f"assumed from the image tag ({server.assumed_version_source})"
    if assumed:
        return assumed, f"operator pin ({server.assumed_version_source or 'the operator pins it'})"
    why = f"default (vLLM {versions.DEFAULT_VERSION}"
    if server.vllm_source_build is not None:
        why += f"; {server.vllm_source_build.describe()}, which is no release"
    elif server.image and "@" in server.image:
        why += f"; {versions.why_no_version(server.image)}"
    elif server.image:
        why += f"; the image tag of {server.image} names no version"
    return versions.DEFAULT_VERSION, why + ")"


# GPU vendors whose vLLM platform the budget models: NVIDIA (CUDA) and AMD (ROCm: the same V1 GPU worker)
MODELLED_VENDORS = ("nvidia", "amd")


def _custom_gpu(name: str, gib: float, vendor: str = "nvidia") -> GpuSpec:
    # A GPU outside the catalog: only its memory is known. Compute capability 8.0 is assumed so that no
    # bf16 / quantization verdict is issued on a guess; the note in sources says so.
    return GpuSpec(name=name, total_gib=float(gib), compute_capability=(8, 0), bf16=True, fp8=False, vendor=vendor)


def _vendor(req) -> str:  # noqa: ANN001 - a GpuRequest or None
    return (req.vendor if req is not None and req.vendor else None) or "nvidia"


def resolve_gpu(server: Server, options: ResolveOptions) -> tuple[GpuSpec | None, int | None, dict[str, str], str | None]:
    """(GPU spec, device count, sources, why unresolved). The spec's total is the memory one engine sees."""
    req = server.gpu
    sources: dict[str, str] = {}
    if req is not None and req.vendor and req.vendor not in MODELLED_VENDORS:
        return None, req.count, sources, (
            f"GPU vendor {req.vendor} ({req.evidence or 'from the deployment'}): vramlint's budget models NVIDIA "
            "and AMD GPUs only")
    vendor = _vendor(req)
    count = req.count if req and req.count else None
    if count:
        sources["gpu_count"] = req.evidence or "deployment"
    spec: GpuSpec | None = None
    hint = req.type if req else None
    if hint:
        spec = gpu_catalog.lookup(hint)
        if spec and spec.vendor != vendor and vendor != "nvidia":
            # an AMD deployment's hint names an NVIDIA part: not this server's GPU ("nvidia" is also the vendor of a
            # server that names none, so an AMD hint there is kept)
            spec = None
        if spec:
            sources["gpu"] = f"{req.evidence or 'deployment'}"
    mig = None
    if req and req.mig_profile:
        mig = gpu_catalog.mig_profile(req.mig_profile)
        if mig and spec is None and mig[0]:
            spec = gpu_catalog.lookup(mig[0])
            sources["gpu"] = f"MIG profile {req.mig_profile}"
    if spec is None and req is not None and not hint and not req.mig_profile and req.memory_gib and not req.fleet:
        # the deployment says only the memory (GPU Feature Discovery's nvidia.com/gpu.memory): the model is unknown
        spec = _custom_gpu(f"GPU of {req.memory_gib:g} GiB", req.memory_gib, vendor)
        sources["gpu"] = req.evidence or "deployment"
        sources["total_gib"] = "GPU memory stated by the deployment (compute capability not known; 8.0 assumed)"
    # --gpu naming an NVIDIA GPU is not the GPU of a server that runs on another vendor's
    other_vendors = vendor != "nvidia" and gpu_catalog.vendor_of(options.default_gpu) not in (None, vendor) \
        if options.default_gpu else False
    if spec is None and options.default_gpu and not other_vendors:
        spec = gpu_catalog.lookup(options.default_gpu)
        if spec:
            sources["gpu"] = "--gpu / configuration"
            if options.gpu_memory_gib:
                # the total CUDA reports varies with the driver, ECC and the board: the user's figure wins over
                # the catalog's, the compute capability stays the catalog GPU's
                catalog_total = spec.total_gib
                spec = replace(spec, total_gib=float(options.gpu_memory_gib))
                sources["total_gib"] = f"--gpu-memory-gib (the catalog's {spec.name} reports {catalog_total:g})"
        elif options.gpu_memory_gib:
            spec = _custom_gpu(options.default_gpu, options.gpu_memory_gib, vendor)
            sources["gpu"] = "--gpu (not in the catalog)"
            sources["total_gib"] = "--gpu-memory-gib (compute capability not known; 8.0 assumed)"
        else:
            why = gpu_catalog.ambiguity(options.default_gpu)
            return None, count, sources, (
                f"GPU {options.default_gpu!r} is not in vramlint's catalog"
                + (f" ({why})" if why else "")
                + "; declare it under `custom-gpus` in the configuration (memory as CUDA reports it, compute "
                "capability), or pass --gpu-memory-gib with the total memory CUDA reports for it")
    if spec is None and hint and options.gpu_memory_gib:
        spec = _custom_gpu(hint, options.gpu_memory_gib, vendor)
        sources["gpu"] = req.evidence or "deployment"
        sources["total_gib"] = "--gpu-memory-gib (compute capability not known; 8.0 assumed)"
    if spec is None and mig and options.gpu_memory_gib is None:
        # A MIG slice whose parent GPU is ambiguous: the slice memory is known, the compute capability is not.
        spec = _custom_gpu(f"MIG {req.mig_profile}", mig[1])
        sources["gpu"] = f"MIG profile {req.mig_profile}"
        sources["total_gib"] = "MIG profile memory (parent GPU not known; compute capability 8.0 assumed)"
    if spec is None and options.gpu_memory_gib:
        spec = _custom_gpu("custom", options.gpu_memory_gib, vendor)
        sources["gpu"] = "--gpu-memory-gib"
        sources["total_gib"] = "--gpu-memory-gib (compute capability not known; 8.0 assumed)"
    if spec is None:
        if hint:
            why = gpu_catalog.ambiguity(hint)
            return None, count, sources, (
                f"GPU {hint!r} ({req.evidence or 'from the deployment'}) is not in vramlint's catalog"
                + (f": {why}" if why else "") + "; pass --gpu NAME, or declare it under `custom-gpus` in the "
                "configuration (with the node labels that select it), or --gpu-memory-gib for a GPU outside the catalog")
        if vendor == "amd":
            return None, count, sources, (
                f"AMD GPU type not known: the deployment ({req.evidence or 'amd'}) does not say which AMD GPU it "
                "runs on (no amd.com/gpu.product-name node label, instance type or product name); pass --gpu NAME "
                "(e.g. --gpu MI300X) or set `gpu` in the configuration")
        return None, count, sources, (
            "GPU type not known: the deployment does not say which GPU it runs on (no node selector, affinity, "
            "instance type or GPU product label); pass --gpu NAME (e.g. --gpu L4) or set `gpu` in the configuration")
    if req and req.mig_profile and mig:
        # (a MIG slice has a share of the GPU's SMs and L2, which the catalog does not list: not known)
        spec = replace(spec, name=f"{spec.name} MIG {req.mig_profile}", total_gib=spec.mig_profiles.get(
            req.mig_profile.lower(), mig[1]), compute_units=None,
            l2_cache_mib=None)
        sources["total_gib"] = f"MIG profile {req.mig_profile} memory"
    elif req and req.memory_gib and "total_gib" not in sources:
        spec = replace(spec, total_gib=float(req.memory_gib))
        sources["total_gib"] = f"memory cap stated by the deployment ({req.evidence or 'gpu memory'})"
    if "total_gib" not in sources:
        declared = gpu_catalog.custom_source(spec.name)
        where = gpu_catalog.total_source(spec.name)
        sources["total_gib"] = declared or (f"catalog ({where})" if where else "catalog")
    if count is None and options.default_gpu_count:
        count = options.default_gpu_count
        sources["gpu_count"] = "--gpus / configuration"
    return spec, count, sources, None


def assess(servers: list[Server], options: ResolveOptions) -> list[Assessment]:
    """An :class:`Assessment` per server, in order; models resolved once per distinct name."""
    models: dict[str, tuple[ModelInfo | None, str | None]] = {}
    names = list(dict.fromkeys(s.model for s in servers if s.model))
    if len(names) > 1:
        # models that need the Hub are asked for concurrently, not one after another
        try:
            from vramlint.models import resolve_models
        except ImportError:
            pass
        else:
            models.update(resolve_models(names, options))
    out: list[Assessment] = []
    budgets: dict[tuple, Any] = {}  # budgets by everything compute_budget reads (see _budget)
    deferred = _DeferredRequirements()  # what a server that names no GPU needs of one, by model and settings
    for server in servers:
        try:
            out.append(_assess_one(server, options, models, deferred, budgets))
        except Exception as exc:  # noqa: BLE001 - one server's failure is a finding on it; the others go on
            a = Assessment(server=server)
            a.failure = f"vramlint failed while assessing this server ({_exception_text(exc)})"
            a.unresolved = [a.failure]
            out.append(a)
    deferred.settle()
    return out


class _DeferredRequirements:
    """The GPU requirements of one `assess`, computed after every server is resolved: the distinct ones (each a
    budget on every catalog GPU, ~10 ms; 35 for the 114 files of a corpus, 0.31 of their 0.34 assessment CPU-s)
    at the same time by the cores (`vramlint.parallel.shared_out`), then given to the servers in order as
    `gpu_requirement` with ``cache`` would give them one after another: the first `MAX_REQUIREMENTS` distinct
    settings computed, by the first server to have them; a computation that failed is done again here, for
    each server, as it was."""

    def __init__(self) -> None:
        self.cache: dict[str, Any] = {}
        self.pending: list[tuple[Assessment, tuple]] = []

    def defer(self, a: Assessment, inputs: tuple) -> None:
        self.pending.append((a, inputs))

    def settle(self) -> None:
        if not self.pending:
            return  # (the requirement module is not loaded where every server names its GPU)
        from vramlint.parallel import shared_out
        from vramlint.requirement import MAX_REQUIREMENTS, gpu_requirement, requirement_key

        keys = [requirement_key(*inputs[:4], draft=inputs[5]) for _a, inputs in self.pending]
        first: dict[str, tuple] = {}
        for key, (_a, inputs) in zip(keys, self.pending, strict=True):
            if key is not None and key not in first and key not in self.cache and \
                    len(first) + len(self.cache) < MAX_REQUIREMENTS:
                first[key] = inputs
        computed = dict(zip(first, shared_out(_requirement_or_none, list(first.values()), least=8), strict=True))
        cache = self.cache
        for key, (a, inputs) in zip(keys, self.pending, strict=True):
            if key is not None and key not in cache and len(cache) < MAX_REQUIREMENTS and \
                    computed.get(key) is not None:
                cache[key] = computed.pop(key)  # what the call below would compute and keep
            try:
                a.gpu_requirement = gpu_requirement(*inputs, cache=cache)
                a.requirement_not_computed = a.gpu_requirement is None
            except Exception as exc:  # noqa: BLE001 - one bad server must not stop the run; it is reported
                _budget_failed(a, exc, a.unresolved)
        self.pending.clear()


def _requirement_or_none(inputs: tuple) -> Any:
    """`gpu_requirement` of these inputs without a cache; None when it raises (the caller computes it again and
    reports the failure on each server, as without `_DeferredRequirements`)."""
    from vramlint.requirement import gpu_requirement

    try:
        return gpu_requirement(*inputs)
    except Exception:  # noqa: BLE001 - said where it is computed again
        return None


def _budget_failed(a: Assessment, exc: Exception, unresolved: list[str]) -> None:
    if isinstance(exc, NotSized):
        # an input past what vramlint sizes: said once, on the flag that gave it (VRL010), as a wider engine is
        a.unsized = (a.server.arg_locations.get(exc.dest) or a.server.location, exc.why)
        unresolved.append(exc.why)
    else:
        a.failure = f"vramlint failed while computing the budget ({_exception_text(exc)})"
        unresolved.append(a.failure)


def _exception_text(exc: BaseException) -> str:
    # the type and first line only, bounded: the message may quote hostile input, and a report has no traceback
    first = (str(exc).splitlines() or [""])[0]
    if len(first) > 200:
        first = first[:200] + "..."
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _budget(cache: dict | None, model: ModelInfo, gpu: Any, args: dict, env: dict, version: str, gpus: int,
            image: str | None, sources: dict, draft: Any, pin: str) -> Any:
    """compute_budget, once per distinct set of inputs: a repository that deploys one server under many names
    (overlays, environments, a generated fleet of 10,000 Deployments) computes its budget once. A budget depends
    only on these inputs (no server, no place); it is shared, never changed after, except by _mark_pin_dependent,
    which does the same to every budget of one key (``pin``: the version source, part of the key)."""
    if cache is None:
        return compute_budget(model, gpu, args, env, version, gpus, image=image, sources=sources, draft=draft)
    key = (id(model), repr(gpu), repr(sizing_args(args)), repr(env), version, gpus, image, repr(sources),
           None if draft is None else (id(draft[0]), draft[1]), pin)
    budget = cache.get(key)
    if budget is None:
        budget = cache[key] = compute_budget(model, gpu, args, env, version, gpus, image=image, sources=sources,
                                             draft=draft)
    return budget


def _take_default_model(server: Server, options: ResolveOptions) -> None:
    """A command line that names no model: vLLM serves its release's default, taken and said as an assumption
    (the file may be meant to get its model from somewhere vramlint does not see)."""
    version, source = resolve_version(server, options)
    server.model = versions.vllm_default_model(version)
    server.model_location = server.location
    # taken as the default, the server is not one whose command line is left to a chart or an operator
    server.unchecked = [u for u in server.unchecked if "sets no command or args" not in u]
    sure = source.startswith(("image tag", "configuration", "--vllm-version")) or source == options.vllm_version_source
    server.notes.append(f"no model is named (no `vllm serve MODEL`, no --model): vLLM {version} serves its default "
                        f"model, {server.model}, which is assumed here"
                        + ("" if sure else f" (the version is assumed too: {source})"))


def _assess_one(server: Server, options: ResolveOptions, models: dict, requirements: _DeferredRequirements,
                budgets: dict | None = None) -> Assessment:
    a = Assessment(server=server)
    unresolved: list[str] = []
    model: ModelInfo | None = None
    if not server.model and server.model_default and not server.unread_config:
        _take_default_model(server, options)
    if not server.model and server.unread_config:
        unresolved.append(f"model: not on the command line, and {server.unread_config} was not read (the model may "
                          "be set there); nothing to size")
    elif not server.model and server.opaque_args is not None:
        # `vllm serve "$MODEL_ID"` (or `"${args[@]}"`) with the variable set only where the server runs: a model
        # may be named there, so "names no model" would be wrong
        at = server.opaque_args
        where = f" (line {at.line})" if at.line else ""
        unresolved.append(f"model: the command line holds a word known only at run time{where}, which may name the "
                          "model; nothing to size")
    elif not server.model:
        unresolved.append("model: the server names no model (vllm serve MODEL or --model); nothing to size")
    else:
        if len(server.model) > MAX_MODEL_NAME:
            # no path (PATH_MAX) or Hub id (a name of at most 96 characters) vLLM can load: the value is quoted
            # shortened from here on, in every report, not once per report and server (a 1 MB name reached by
            # one YAML anchor from 500 servers made a 2.5 GB JSON report)
            server.model = shortened(server.model, 200)
        if server.model not in models:
            models[server.model] = _resolve_model(server.model, options)
        model, why = models[server.model]
        if model is None:
            unresolved.append(f"model {server.model!r}: {why or 'not resolved'}")
            said = _said_on_the_model_line(why)
            if said:
                # a model folder outside the scanned paths (a link, an absolute path: refused by the one reader), or
                # one of the tree whose config.json is not usable: said on the line that names it (issue 10)
                a.unsized = (server.model_location or server.location,
                             f"the model {shortened(server.model, 120)!r}: {said}, so its size is unknown and the "
                             "server is not sized")
        elif model.source and model.source.startswith("Hugging Face cache snapshot of "):
            server.notes.append(f"the model path is a {model.source.split(';')[0]}: checked as that Hub model")
    gpu, count, gpu_sources, gpu_why = resolve_gpu(server, options)
    if gpu_why:
        unresolved.append(gpu_why)
    version, version_source = resolve_version(server, options)
    a.model = model
    a.gpu = gpu
    a.vllm_version = version
    # the kind of source ("image tag" | "configuration" | "default"); the budget's sources say which flag or file
    a.version_source = "configuration" if version_source.startswith(("configuration", "--")) \
        else "operator" if version_source.startswith(("operator pin", "assumed from the image tag")) \
        else version_source.split(" (")[0]
    tp = _int(server.args.get("tensor_parallel_size")) or 1
    pp = _int(server.args.get("pipeline_parallel_size")) or 1
    a.gpu_count = count or tp * pp
    if tp * pp > MAX_SIZED_GPUS:
        # the budget computes per rank (weights, stages): 2**62 ranks would never end; no real engine is that wide
        dest = "pipeline_parallel_size" if pp > tp else "tensor_parallel_size"
        why = (f"tensor_parallel_size {tp} x pipeline_parallel_size {pp} = {tp * pp:,} GPUs in one engine, more "
               f"than vramlint sizes ({MAX_SIZED_GPUS:,}): its memory budget is not computed")
        unresolved.append(why)
        a.unsized = (server.arg_locations.get(dest) or server.location, why)
        model = None
    if server.args.get("omni") is True:
        # vLLM-Omni runs the model as stages (a thinker, a talker, a diffusion transformer, ...), each with its own
        # engine and memory settings from its stage configs: not the one engine vLLM's budget follows
        unresolved.append("vLLM-Omni (--omni): the model runs as vLLM-Omni's stages, each with the memory "
                          "settings of its stage config, not as one vLLM engine; its memory budget is not computed")
        model = None
    if server.engine_args_in_code:
        # max_model_len, gpu_memory_utilization, quantization, parallelism: all in code; vLLM's defaults would be a
        # guess, so neither a budget nor a requirement is computed (said once, by cause)
        unresolved.append(f"engine arguments: {server.engine_args_in_code}; its memory budget is not computed")
        model = None
    # a GPU the deployment names leaves only vLLM's own CPU images on the CPU backend (cpu_backend says which)
    cpu = cpu_backend(server)
    if cpu is not None:
        # no GPU to size, nor a GPU requirement to say: the note says so once, in place of "does not say its GPU"
        a.gpu = gpu = None
        unresolved = [u for u in unresolved if not u.startswith("GPU")]
        unresolved.append(CPU_UNRESOLVED.format(why=cpu))
        model = None
    fleet, fleet_sources = _fleet(server, options) if (gpu is None and cpu is None) or fleet_wanted(server, options) \
        else ([], {})
    if fleet:
        a.gpu = gpu = None
        unresolved = [u for u in unresolved if not u.startswith("GPU")]
        gpu_sources = fleet_sources
    if model is not None and (gpu is not None or fleet or _sizeable(server)):
        sources: dict[str, Any] = {"vllm_version": version_source, "model": model.source}
        sources.update(gpu_sources)
        # a speculative-decoding draft model: resolved like the model, once per distinct name
        draft_name = speculative_draft_name(server.args)
        if draft_name and draft_name not in models:
            models[draft_name] = _resolve_model(draft_name, options)
        draft = models[draft_name] if draft_name else None
        try:
            if gpu is not None:
                a.budget = _budget(budgets, model, gpu, server.args, server.env, version, a.gpu_count,
                                   server.image, sources, draft, a.version_source)
            elif fleet:
                a.fleet = [compute_budget(model, spec, server.args, server.env, version, a.gpu_count,
                                          image=server.image, sources=dict(sources), draft=draft)
                           for spec in fleet]
                a.budget = deciding_budget(a.fleet)
                a.gpu = next(spec for spec in fleet if spec.name == a.budget.gpu)
            else:
                requirements.defer(a, (model, server, version, a.gpu_count, sources, draft))  # computed in settle()
            if a.budget is not None:
                a.engine = a.budget.engine
                if a.version_source == "operator" and a.budget.errors:
                    _mark_pin_dependent(a, model, draft)
        except Exception as exc:  # noqa: BLE001 - one bad server must not stop the run; it is reported
            _budget_failed(a, exc, unresolved)
    a.unresolved = unresolved
    return a


def _mark_pin_dependent(a: Assessment, model: ModelInfo, draft: Any) -> None:
    """With an operator's pinned version (the release installed not known), an error that the newest vLLM would
    not raise holds only for some releases: it is marked version-dependent, which VRL005 reports as a warning."""
    gpu = next((g for g in [a.gpu] if g is not None and g.name == a.budget.gpu), a.gpu)
    if gpu is None:
        return
    latest = compute_budget(model, gpu, a.server.args, a.server.env, versions.DEFAULT_VERSION, a.gpu_count,
                            image=a.server.image, draft=draft)
    latest_codes = {e.get("code") for e in latest.errors}
    for error in a.budget.errors:
        if error.get("code") not in latest_codes:
            error["version_dependent"] = True


def fleet_wanted(server: Server, options: ResolveOptions) -> bool:
    """Whether the deployment itself names several GPU types (node affinity `In` with several values)."""
    return bool(server.gpu is not None and server.gpu.fleet and len(server.gpu.fleet) > 1)


def _fleet(server: Server, options: ResolveOptions) -> tuple[list[GpuSpec], dict[str, str]]:
    """The GPU types the pods may land on, when there are several: from the deployment (node affinity with
    several GPU products), else from `gpu:` given as a list in the configuration (or --gpu A,B)."""
    req = server.gpu
    if req is not None and req.vendor and req.vendor not in MODELLED_VENDORS:
        return [], {}
    vendor = _vendor(req)
    names: list[str] = []
    where = ""
    if fleet_wanted(server, options):
        names, where = list(req.fleet or []), req.evidence or "deployment"
    elif req is not None and req.type and gpu_catalog.lookup(req.type) is None and \
            len(gpu_catalog.ambiguous_candidates(req.type)) > 1:
        # a name several catalog GPUs answer to ("A100": 40 or 80 GB): the pods may land on either
        names = gpu_catalog.ambiguous_candidates(req.type)
        where = f"{req.evidence or 'deployment'} ({req.type} comes in several sizes)"
    elif len(options.default_gpu_fleet) > 1 and not (req is not None and (req.type or req.mig_profile)) and \
            all(gpu_catalog.vendor_of(name) in (None, vendor) for name in options.default_gpu_fleet):
        names, where = list(options.default_gpu_fleet), "--gpu / configuration (a list: any of these)"
    specs = []
    for name in names:
        spec = gpu_catalog.lookup(name)
        if spec is None:
            return [], {}
        if req is not None and req.memory_gib:
            spec = replace(spec, total_gib=float(req.memory_gib))
        if all(s.name != spec.name for s in specs):
            specs.append(spec)
    if len(specs) < 2:
        return [], {}
    sources = {"gpu": f"{where}: {', '.join(s.name for s in specs)}"}
    if req is not None and req.count:
        sources["gpu_count"] = req.evidence or "deployment"
    return specs, sources


def deciding_budget(budgets: list[Any]) -> Any:
    """Of a fleet's budgets, the one that decides: the first that does not start, else the least KV cache."""
    failing = [b for b in budgets if not b.starts]
    if failing:
        return failing[0]
    return min(budgets, key=lambda b: (b.kv_tokens, b.total_gib))


def _sizeable(server: Server) -> bool:
    """No GPU type known, but an NVIDIA or AMD GPU (or nothing said): what it needs of one can be computed."""
    req = server.gpu
    return req is None or not req.vendor or req.vendor in MODELLED_VENDORS


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None
