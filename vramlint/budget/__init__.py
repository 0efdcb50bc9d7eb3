"""The per-GPU memory arithmetic vLLM performs at start-up, and its start-up verdict.

For one engine (all its tensor- and pipeline-parallel ranks) on one GPU type this computes what vLLM logs:

    requested  = total x gpu_memory_utilization
    kv_cache   = requested - weights - non_torch - activation_peak - cudagraph_estimate
    blocks     = kv_cache // (block_size x KV bytes per token of all layers on the rank)

in the stages vLLM's own start-up goes through, one module and one function each, each following vLLM's code
release by release (its ``VLLM_SOURCES``); which formula applies is decided by :mod:`vramlint.versions`:

1. :func:`~vramlint.budget.configuration.resolve_configuration`: lengths, dtypes, parallelism, engine, scheduler
   limits, the requested memory, and the configuration vLLM refuses;
2. :func:`~vramlint.budget.loading.load_weights`: the weights one rank loads (and a separate draft model's);
3. :func:`~vramlint.budget.profile.profile_memory`: the profiling run (activation peak, non-torch memory, CUDA
   graphs) and the memory it leaves for the KV cache; vLLM *measures* these, this stage estimates them;
4. :func:`~vramlint.budget.kv_cache.plan_kv_cache`: KV bytes per token, layer groups, blocks, tokens, concurrency;
5. :func:`~vramlint.budget.verdict.startup_verdict`: the start-up refusals that depend on memory.

Every start-up error is reported with vLLM's own text and the argument responsible.
"""

from __future__ import annotations

from vramlint.budget.common import GiB, StageResult, parse_len, round_gib
from vramlint.budget.configuration import resolve_configuration
from vramlint.budget.kv_cache import plan_kv_cache
from vramlint.budget.kv_layout import mamba_state_bytes
from vramlint.budget.loading import load_weights
from vramlint.budget.profile import activation_peak_bytes, cudagraph_bytes, non_torch_bytes, profile_memory
from vramlint.budget.rank_weights import mxfp4_backend, weights_per_rank
from vramlint.budget.speculative import speculative_draft_name, speculative_request
from vramlint.budget.verdict import startup_verdict
from vramlint.model import Budget, GpuSpec, ModelInfo

__all__ = [
    "STAGES", "Budget", "GiB", "activation_peak_bytes", "compute_budget", "cudagraph_bytes", "mamba_state_bytes",
    "mxfp4_backend", "non_torch_bytes", "parse_len", "speculative_draft_name", "speculative_request",
    "weights_per_rank",
]

# The stages in vLLM's order: (name, function). Each function's module lists the vLLM code it follows
# (``VLLM_SOURCES``).
STAGES = (
    ("configuration", resolve_configuration),
    ("weights", load_weights),
    ("profile", profile_memory),
    ("KV cache", plan_kv_cache),
    ("verdict", startup_verdict),
)


def compute_budget(model: ModelInfo, gpu: GpuSpec, args: dict, env: dict, version: str, gpus: int,
                   image: str | None = None, sources: dict[str, str] | None = None,
                   draft: tuple[ModelInfo | None, str | None] | None = None,
                   compile_cache: str = "cold") -> Budget:
    """The start-up memory budget of one vLLM engine on ``gpu``, per GPU (the rank that decides).

    ``args`` are vLLM dest names as typed by vLLM (``max_model_len``, ``tensor_parallel_size``, ...);
    ``env`` the container environment; ``version`` the vLLM release; ``gpus`` the devices the engine sees
    (used for TP when ``tensor_parallel_size`` is not given). ``image`` (optional) tells whether the official
    vLLM image (which ships FlashInfer) runs; ``sources`` (optional) where the caller's inputs came from;
    ``draft`` (optional) the speculative-decoding draft model named by the arguments, as (facts, why unresolved)
    from the same resolver as the model (None: not resolved; see :func:`speculative_draft_name`).
    ``compile_cache`` (optional): "cold" (the default, a first start) or "warm" (the compiled graphs of this
    configuration are already in ``VLLM_CACHE_ROOT``: see :func:`vramlint.budget.profile_compile.compile_benchmark`).
    """
    if compile_cache not in ("cold", "warm"):
        raise ValueError(f"compile_cache is 'cold' or 'warm', not {compile_cache!r}")
    cfg = resolve_configuration(model, gpu, args, env, version, gpus, image=image, compile_cache=compile_cache)
    weights = load_weights(cfg, draft)
    profile = profile_memory(cfg, weights)
    kv = plan_kv_cache(cfg, weights, profile)
    verdict = startup_verdict(cfg, weights, profile, kv)
    stages: tuple[StageResult, ...] = (cfg, weights, profile, kv, verdict)
    given = dict(sources or {})
    src = dict(given)
    for stage in stages:
        # what the caller says wins; a later stage restates an earlier stage's entry in place
        src.update({k: v for k, v in stage.sources.items() if k not in given})
    errors = [e for stage in stages for e in stage.errors]
    notes = [n for stage in stages for n in stage.notes]
    if gpu.vendor == "amd":
        platform, rocm_notes = rocm_platform(cfg, model)
        src.setdefault("platform", platform)
        notes.extend(rocm_notes)
    return Budget(
        engine=cfg.beh.engine,
        vllm_version=version,
        gpu=gpu.name,
        gpus=cfg.tp * cfg.pp,
        total_gib=round(gpu.total_gib, 2),
        gpu_memory_utilization=cfg.util,
        usable_gib=round_gib(cfg.requested),
        # with pipeline parallel: the stage with the fewest KV cache blocks, the one that decides
        weights_gib=round_gib(weights.per_stage[kv.stage]),
        non_torch_gib=round_gib(profile.non_torch),
        activation_gib=round_gib(profile.activation[kv.stage]),
        cudagraph_gib=round_gib(profile.cudagraph[kv.stage]),
        kv_cache_gib=round_gib(kv.kv_bytes),
        kv_bytes_per_token=kv.kv_bytes_per_token,
        block_size=kv.block_size,
        num_gpu_blocks=kv.num_blocks,
        kv_tokens=kv.kv_tokens,
        max_model_len=verdict.max_model_len,
        max_concurrency=round(verdict.concurrency, 2),
        max_num_seqs=cfg.max_num_seqs,
        max_num_batched_tokens=cfg.max_num_batched_tokens,
        starts=not errors,
        errors=errors,
        sources=src,
        notes=notes,
        one_request_kv_gib=round(kv.one_request / GiB, 3),
        measured_kv=({k: round(v / GiB, 3) for k, v in profile.kv_measured[kv.stage].items()}
                     if profile.kv_measured else None),
        runner_state_gib=round_gib(
            (profile.resident[kv.stage] if profile.resident and profile.resident_counted else 0)
            + (profile.offload_pool[kv.stage] if profile.offload_pool and profile.offload_pool_counted else 0)),
    )


def rocm_platform(cfg, model: ModelInfo) -> tuple[str, list[str]]:  # noqa: ANN001 - a Configuration
    """(how the budget runs on ROCm, notes on what it does not estimate there), for an AMD GPU.

    vLLM's ROCm platform (vllm/platforms/rocm.py, 0.11.0 and 0.28.0) runs the same V1 GPU worker as CUDA
    (``check_and_update_config``: worker_cls ``vllm.v1.worker.gpu_worker.Worker``), whose
    ``determine_available_memory`` profiles with torch.cuda (HIP) memory statistics as on CUDA: the budget's
    arithmetic is the same. What differs, from the same source: the top-k/top-p sampler is PyTorch's
    (``TopKTopPSampler`` takes FlashInfer only ``if current_platform.is_cuda()``); the custom all-reduce runs only
    on gfx94x / gfx95x (``RocmPlatform.use_custom_allreduce``), without the symmetric-memory buffer (CUDA only);
    the quick all-reduce is off unless VLLM_ROCM_QUICK_REDUCE_QUANTIZATION says otherwise (default "NONE"); the
    fp8 type on gfx94x is e4m3fnuz (one byte, as e4m3fn).
    """
    from vramlint.budget.common import truthy
    from vramlint.budget.profile_comm import custom_all_reduce

    env, args, tp = cfg.env, cfg.args, cfg.tp
    parts = ["ROCm (vllm/platforms/rocm.py): the V1 GPU worker's memory profiling as on CUDA; PyTorch sampler "
             "(FlashInfer's is CUDA-only)"]
    if tp > 1:
        parts.append("custom all-reduce " + ("on (gfx94x/gfx95x, xGMI-connected)" if custom_all_reduce(cfg.gpu, tp, args)
                                             else "off (RocmPlatform.use_custom_allreduce: MI300 series only)"))
        parts.append("RCCL communicators and the HIP-graph pool estimated with the CUDA figures")
    notes: list[str] = []
    quick = str(env.get("VLLM_ROCM_QUICK_REDUCE_QUANTIZATION") or "").strip().upper()
    if tp > 1 and quick and quick != "NONE" and custom_all_reduce(cfg.gpu, tp, args):
        notes.append(f"VLLM_ROCM_QUICK_REDUCE_QUANTIZATION={quick}: the quick all-reduce's buffers (QuickAllReduce, "
                     "sized by the ROCm kernels' qr_max_size) are not estimated")
    if truthy(env.get("VLLM_ROCM_USE_AITER")):
        notes.append("VLLM_ROCM_USE_AITER=1: AITER's attention, MoE and GEMM kernels (and their workspaces) replace "
                     "the default ROCm ones; their memory is not estimated beyond the default path's")
    quant = str(args.get("quantization") or model.quantization or "").lower()
    if quant == "mxfp4":
        notes.append("MXFP4 on ROCm: the expert layout of ROCm's MXFP4 MoE kernels is not modelled; the experts are "
                     "counted unpadded")
    return "; ".join(parts), notes
