"""Stage 5 of the budget: vLLM's start-up verdict on memory.

The refusals after the configuration: weights that do not fit the GPU (CUDA out of memory while loading), free
memory below the requested memory (V1 ``init_device``; from 0.11 after the communicators are set up, so their
buffers count against it), no memory left for cache blocks, a KV cache smaller than one ``max_model_len``
request (V0 ``_verify_args`` / ``CacheEngine``; V1 ``check_enough_kv_cache_memory``, with the estimated maximum
length and, for ``--max-model-len auto``, the fitted length), and CUDA graphs that do not fit in what the KV
cache left free, where the release captures them after allocating it (``capture_model``; see
:mod:`vramlint.budget.profile_graphs`), and the sampler warm-up that follows the capture on the last stage
(``compile_or_warm_up_model``, V1 0.9.2 - 0.19) when it does not fit in what the graphs left.
"""

from __future__ import annotations

from vramlint import versions
from vramlint.budget.common import GiB, StageResult, truthy
from vramlint.budget.configuration import Configuration
from vramlint.budget.kv_cache import KvCache
from vramlint.budget.loading import Weights
from vramlint.budget.profile import CUDA_CONTEXT_BYTES, Profile
from vramlint.budget.profile_graphs import enforce_eager, nccl_graph_cost_measured
from vramlint.lean_dataclass import dataclass

VLLM_SOURCES = (
    "vllm/v1/worker/gpu_worker.py::init_device (0.9.2+): free memory below the requested memory",
    "vllm/worker/worker.py::raise_if_cache_size_invalid (V0), vllm/engine/llm_engine.py / executor_base.py",
    "vllm/v1/core/kv_cache_utils.py::check_enough_kv_cache_memory, estimate_max_model_len (V1); "
    "vllm/v1/core/kv_cache_planning.py (0.3x, --max-model-len auto)",
    "vllm/worker/model_runner.py::capture_model (V0), vllm/v1/worker/gpu_model_runner.py::capture_model (V1): "
    "CUDA graphs captured after initialize_kv_cache (up to 0.17, and 0.18+ without the graph-memory estimate)",
    "vllm/v1/worker/gpu_worker.py::determine_available_memory wraps profile_run in memory_profiling, whose first "
    "forward pass compiles the model or loads it from VLLM_CACHE_ROOT/torch_compile_cache; from 0.27 "
    "vllm/utils/mem_utils.py counts total_consumed + transient_peak_headroom (the first-compile note)",
)

# The most the KV cache of a public start-up log fell short of vramlint's on a first torch.compile (issue #13,
# docs/budget.md "Cases that stay off": P47, 0.29.0): what Inductor allocates then is not stated by vLLM's code,
# so it is said, not subtracted.
FIRST_COMPILE_SHORTFALL_SEEN = int(2.3 * GiB)


@dataclass(kw_only=True)
class Verdict(StageResult):
    """The memory refusals of start-up, and the length and concurrency that hold after them (``--max-model-len
    auto`` fits the length to the KV cache)."""

    max_model_len: int
    concurrency: float


def startup_verdict(cfg: Configuration, weights: Weights, profile: Profile, kv: KvCache) -> Verdict:
    """Stage 5: the start-up errors that depend on memory (see the module docstring)."""
    gpu, beh, key = cfg.gpu, cfg.beh, cfg.key
    tp, pp, util, requested, total_bytes = cfg.tp, cfg.pp, cfg.util, cfg.requested, cfg.total_bytes
    max_model_len, auto_fit = cfg.max_model_len, cfg.auto_fit
    kv_override = profile.kv_override
    num_blocks, num_override, block_size = kv.num_blocks, kv.num_override, kv.block_size
    concurrency = kv.concurrency
    weights_bytes = weights.bytes
    src: dict[str, str] = {}
    notes: list[str] = []
    errors: list[dict] = []
    if weights_bytes > total_bytes:
        errors.append({
            "code": "weights-exceed-gpu",
            "message": (f"torch.OutOfMemoryError: CUDA out of memory (the weights need {weights_bytes / GiB:.2f} GiB per GPU; "
                        f"the GPU has {gpu.total_gib:.2f} GiB in total)"),
            "arg": "tensor_parallel_size" if tp * pp == 1 else "model",
        })
    extensible = beh.extensible_kv_cache and profile.kv_capacity is not None
    if beh.engine == "v1" and versions.at_least(key, 0, 9, 2) and not kv_override and not extensible:
        # (0.34's extensible KV cache: "the budget is only a cap; exceeding free memory over-reserves address
        # space rather than pages", request_memory)
        # the CUDA context alone takes at least this much before vLLM measures free memory; from 0.11 the
        # communicators set up before its snapshot too
        ctx = CUDA_CONTEXT_BYTES + (profile.communication.before_snapshot if profile.communication else 0)
        if requested > total_bytes - ctx:
            errors.append({
                "code": "free-below-requested",
                "message": (f"Free memory on device ({(total_bytes - ctx) / GiB:.2f}/{gpu.total_gib:.2f} GiB) on startup is "
                            f"less than desired GPU memory utilization ({util}, {requested / GiB:.2f} GiB). Decrease GPU "
                            "memory utilization or reduce GPU memory used by other processes."),
                "arg": "gpu_memory_utilization",
            })

    # ---- start-up verdicts on the KV cache
    def available(stage: KvCache) -> float:
        if extensible:
            # 0.34: the size measured after warmup, with the null block held back (shrink_kv_cache_configs)
            return max(stage.num_blocks - 1, 0) * stage.per_block_pool
        return stage.num_blocks * stage.per_block_pool if num_override else stage.kv_bytes

    if beh.engine == "v0":
        if num_blocks <= 0:
            errors.append({"code": "no-cache-memory", "message": _e1(key), "arg": "gpu_memory_utilization"})
        else:
            usable_blocks = num_blocks // pp if versions.at_least(key, 0, 8) else num_blocks
            max_seq_len = block_size * usable_blocks
            if max_model_len > max_seq_len:
                errors.append({
                    "code": "kv-cache-below-max-model-len",
                    "message": (f"The model's max seq len ({max_model_len}) is larger than the maximum number of tokens "
                                f"that can be stored in KV cache ({max_seq_len}). Try increasing `gpu_memory_utilization` "
                                "or decreasing `max_model_len` when initializing the engine."),
                    "arg": "max_model_len",
                })
    else:
        # every worker checks its own layers against its own memory (get_kv_cache_configs ->
        # check_enough_kv_cache_memory), in rank order: the first that fails raises
        stages = kv.stages or [kv]
        capacity = profile.kv_capacity if extensible else None
        # 0.34's extensible KV cache: the capacity reserved from the profiling estimate is checked first
        # (get_kv_cache_configs), then the size measured after warmup (finalize_extensible_kv_cache)
        if capacity is not None and any(c <= 0 for c in capacity):
            errors.append({"code": "no-cache-memory", "arg": "gpu_memory_utilization",
                           "message": _e1(key, _hint(cfg, after_warmup=False))})
        elif capacity is not None and not auto_fit and any(
                s.per_request(max_model_len)[0] > c for s, c in zip(stages, capacity, strict=False)):
            index = next(i for i, (s, c) in enumerate(zip(stages, capacity, strict=False))
                         if s.per_request(max_model_len)[0] > c)
            stage = stages[index]
            needed = stage.per_request(max_model_len)[0]
            estimated = _estimate_max_len(stage.per_request, capacity[index], max_model_len)
            errors.append({"code": "kv-cache-below-max-model-len", "arg": "max_model_len",
                           "message": _e4(key, max_model_len, needed, capacity[index], estimated,
                                          _hint(cfg, after_warmup=False))})
        elif any(stage.kv_bytes <= 0 for stage in stages) or (extensible and any(available(s) <= 0 for s in stages)):
            errors.append({"code": "no-cache-memory", "message": _e1(key, _hint(cfg, after_warmup=extensible)),
                           "arg": "gpu_memory_utilization"})
        else:
            short = [s for s in stages if s.per_request(max_model_len)[0] > available(s)]
            if short and auto_fit:
                # --max-model-len auto (-1): vLLM fits the context to the KV cache instead of refusing to start
                estimated = min(_estimate_max_len(s.per_request, available(s), max_model_len) for s in stages)
                if estimated > 0:
                    notes.append(f"--max-model-len auto: vLLM fits the context to the KV cache, {estimated} tokens "
                                 f"instead of the model's {max_model_len}")
                    src["max_model_len"] = f"auto-fit to the KV cache (model maximum {max_model_len})"
                    max_model_len = estimated
                    short = []
                    concurrency = 1.0  # the fitted context is what one request can hold
            if short:
                stage = short[0]
                needed = stage.per_request(max_model_len)[0]
                estimated = _estimate_max_len(stage.per_request, available(stage), max_model_len)
                errors.append({
                    "code": "kv-cache-below-max-model-len",
                    "message": _e4(key, max_model_len, needed, available(stage), estimated,
                                   _hint(cfg, after_warmup=extensible)),
                    "arg": "max_model_len",
                })

    if not errors:
        capture = _capture_out_of_memory(cfg, weights, profile, kv)
        if capture:
            errors.append(capture)
    if not errors and beh.engine == "v1" and versions.at_least(key, 0, 27) and not kv_override \
            and not enforce_eager(cfg.args) and cfg.compile_cache != "warm":
        stages = kv.stages or [kv]
        margin = min(available(s) - s.per_request(max_model_len)[0] for s in stages)
        if margin < FIRST_COMPILE_SHORTFALL_SEEN:
            notes.append(f"the KV cache holds one {max_model_len}-token request with {max(margin, 0) / GiB:.2f} GiB to "
                         "spare; on a first start with an empty torch.compile cache the profiling run also holds "
                         "Inductor's compile-time allocations, up to 2.3 GiB more in public 0.28 - 0.29 start-up logs "
                         "(not estimated): keep the compile cache (VLLM_CACHE_ROOT, ~/.cache/vllm) on a volume, or "
                         "leave that much more memory")
    return Verdict(max_model_len=max_model_len, concurrency=concurrency, errors=errors, notes=notes, sources=src)


def _capture_out_of_memory(cfg: Configuration, weights: Weights, profile: Profile, kv: KvCache) -> dict | None:
    """CUDA-graph capture after the KV cache is allocated, when the graphs need more than is free then.

    Free then, on each rank: the GPU's total less what the process holds, i.e. the memory the profiler did not
    count (``profile.uncounted``), the weights, the non-torch memory and the KV cache tensors (the activation peak
    was freed by ``empty_cache``). The graphs: :mod:`vramlint.budget.profile_graphs`; NCCL's part only for the
    releases its cost was measured with (up to 0.8.x, torch 2.6's NCCL; later ones get a note instead).
    """
    beh = cfg.beh
    if beh.cudagraph_in_budget or not profile.capture or profile.kv_capacity is not None:
        # (0.34's extensible KV cache: the graphs are captured beside the null block only, and their memory is
        # measured before the cache is committed)
        return None
    stages = kv.stages or [kv]
    recent = not nccl_graph_cost_measured(beh)
    for index, stage in enumerate(stages):
        if index >= len(profile.capture):
            break
        graphs = profile.capture[index] - (profile.capture_nccl[index] if recent and profile.capture_nccl else 0)
        kv_tensors = stage.num_blocks * stage.per_block_pool if stage.num_blocks > 0 else 0
        resident = profile.resident[index] if profile.resident and index < len(profile.resident) else 0
        if profile.offload_pool and index < len(profile.offload_pool):
            resident += profile.offload_pool[index]
        free = (cfg.total_bytes - profile.uncounted - weights.per_stage[index] - profile.non_torch - resident
                - kv_tensors)
        warmup = _sampler_warmup_after_capture(cfg, profile) if index == len(stages) - 1 else 0
        if graphs <= free and warmup and graphs + profile.held + warmup > free:
            left = max(free - graphs - profile.held, 0)
            return {
                "code": "sampler-warmup-oom",
                "message": (f"CUDA out of memory occurred when warming up sampler with {profile.warmup_seqs} dummy "
                            "requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when "
                            f"initializing the engine. (after the CUDA graphs, about {graphs / GiB:.2f} GiB, are "
                            f"captured, about {left / GiB:.2f} GiB is free for a warm-up that needs about "
                            f"{warmup / GiB:.2f} GiB)"),
                "arg": "gpu_memory_utilization",
                "short": (f"the sampler warm-up after the CUDA-graph capture needs about {warmup / GiB:.2f} GiB for "
                          f"{profile.warmup_seqs} dummy requests, but about {left / GiB:.2f} GiB is free then "
                          "(compile_or_warm_up_model)"),
                "fix": ("lower --gpu-memory-utilization (the graphs and the warm-up are taken from the memory above "
                        "it), or lower --max-num-seqs (the warm-up samples that many requests over the whole "
                        "vocabulary), or add --enforce-eager (no graphs)"),
            }
        if graphs > free:
            nccl = profile.capture_nccl[index] if profile.capture_nccl else 0
            return {
                "code": "cudagraph-capture-oom",
                "message": (f"torch.OutOfMemoryError: CUDA out of memory while capturing CUDA graphs (capture_model), "
                            f"after the KV cache was allocated: the graphs need about {graphs / GiB:.2f} GiB"
                            + (f" ({nccl / GiB:.2f} GiB of it NCCL's, for the all-reduces captured into them)"
                               if nccl and not recent else "")
                            + f" and about {max(free, 0) / GiB:.2f} GiB is free on the GPU then"),
                "arg": "gpu_memory_utilization",
                "short": (f"the CUDA graphs need about {graphs / GiB:.2f} GiB, but about {max(free, 0) / GiB:.2f} GiB "
                          "is free once the KV cache is allocated (torch.OutOfMemoryError in capture_model)"),
                "fix": ("lower --gpu-memory-utilization (the graphs are taken from the memory above it), or add "
                        "--enforce-eager (no graphs), or capture fewer batch sizes ("
                        + ("a lower --max-num-seqs" if beh.engine == "v0"
                           else "--compilation-config with fewer cudagraph_capture_sizes") + ")"),
            }
    return None


def _sampler_warmup_after_capture(cfg: Configuration, profile: Profile) -> int:
    """The sampler warm-up's peak where V1 runs it after capturing the graphs out of the memory the KV cache left
    (``Worker.compile_or_warm_up_model``: ``capture_model``, then, on the last pipeline stage,
    ``_dummy_run(min(max_num_seqs, max_num_batched_tokens))`` and ``_dummy_sampler_run``, which raises "CUDA out of
    memory occurred when warming up sampler"; read in the 0.9.2, 0.10.0 and 0.19.0 wheels): 0.9.2 - 0.19 with the
    graph-memory estimate off, vLLM's default there; 0 otherwise. From 0.20 the estimate is on by default and
    from 0.27 the V2 model runner, which warms up otherwise, can be chosen without being asked for
    (``VllmConfig.use_v2_model_runner``, 0.27.1), so later releases are not checked."""
    beh = cfg.beh
    if beh.engine != "v1" or not versions.at_least(beh.key, 0, 9, 2) or versions.at_least(beh.key, 0, 20):
        return 0
    if truthy(cfg.env.get("VLLM_USE_V2_MODEL_RUNNER")) or enforce_eager(cfg.args):
        return 0
    return profile.warmup


def _hint(cfg: Configuration, after_warmup: bool) -> str:
    """``_more_kv_cache_memory_hint`` (vllm/v1/core/kv_cache_planning.py, 0.34.0): how to make room, by sizing mode."""
    if not cfg.beh.extensible_kv_cache:
        return ("Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU "
                "memory reservation on the CPU backend, despite its name).")
    used_by = "the model, its activations, CUDA graphs and warmup" if after_warmup else "the model and its activations"
    graphs = (" CUDA graphs take less with fewer or smaller capture sizes in the compilation config."
              if after_warmup else "")
    if cfg.util < 1.0:
        return (f"The KV cache gets what is left after {used_by} within `gpu_memory_utilization`={cfg.util}; increase "
                "it (with the extensible KV cache it defaults to 1.0) or decrease `max_model_len` or `max_num_seqs`."
                + graphs)
    return (f"The extensible KV cache already takes all device memory left after {used_by}; decrease `max_model_len` "
            "or `max_num_seqs`, or the model needs a device with more memory." + graphs)


_MORE = "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."


def _e1(key: versions.VersionKey, hint: str = "") -> str:
    if versions.at_least(key, 0, 34):
        return f"No available memory for the cache blocks. {hint} {_MORE}"
    text = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
    if versions.at_least(key, 0, 33):
        text = (text[:-1] + " (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
                "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.")
    return text


def _e4(key: versions.VersionKey, max_model_len: int, needed: float, available: float, estimated: int,
        hint: str = "") -> str:
    if versions.at_least(key, 0, 34):
        based = (f"Based on the available memory, the estimated maximum model length is {estimated}. "
                 if estimated > 0 else "")
        return (f"To serve at least one request with the model's max seq len ({max_model_len}), ({needed / GiB:.2f} "
                f"GiB KV cache is needed, which is larger than the available KV cache memory ({available / GiB:.2f} "
                f"GiB). {based}{hint} Decreasing `max_model_len` also reduces what is needed. {_MORE}")
    if not versions.at_least(key, 0, 9):
        return (f"To serve at least one request with the models's max seq len ({max_model_len}), ({needed / GiB:.2f} GiB "
                f"KV cache is needed, which is larger than the available KV cache memory ({available / GiB:.2f} GiB). "
                "Based on the available memory,  Try increasing `gpu_memory_utilization` or decreasing "
                "`max_model_len` when initializing the engine.")
    owner = "model's" if versions.at_least(key, 0, 30) else "models's"
    return (f"To serve at least one request with the {owner} max seq len ({max_model_len}), ({needed / GiB:.2f} GiB KV "
            f"cache is needed, which is larger than the available KV cache memory ({available / GiB:.2f} GiB). Based "
            f"on the available memory, the estimated maximum model length is {estimated}. Try increasing "
            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")


def _estimate_max_len(per_request, available: float, upper: int) -> int:
    """vLLM's binary search for the longest length whose KV need fits the available memory."""
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if per_request(mid)[0] <= available:
            lo = mid
        else:
            hi = mid - 1
    return lo
