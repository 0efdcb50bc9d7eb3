"""Stage 3 of the budget: vLLM's profiling run, and the memory it leaves for the KV cache.

vLLM *measures* the activation peak of a dummy forward pass (and sampler), the non-torch memory (NCCL and
custom all-reduce buffers, cuBLAS handles, ...) and, from 0.18/0.20, the CUDA-graph memory; this stage
estimates them (see each estimate for the real start-up logs it was calibrated on) and subtracts them, with the
weights, from the requested memory, as ``determine_available_memory`` does.
"""

from __future__ import annotations

from vramlint import versions
from vramlint.budget.common import (
    GiB,
    StageResult,
    head_dim,
    int_arg,
    kv_heads_per_rank,
    padded_vocab,
    truthy,
    vllm_image,
)
from vramlint.budget.configuration import Configuration
from vramlint.budget.loading import Weights
from vramlint.budget.multimodal import encoder_not_known, encoder_profile, tower_skipped
from vramlint.budget.profile_comm import VLLM_SOURCES as COMM_SOURCES
from vramlint.budget.profile_comm import (
    Communication,
    communication_memory,
    flashinfer_allreduce_fusion,
    flashinfer_allreduce_fusion_note,
    flashinfer_fusion_workspace,
)
from vramlint.budget.profile_compile import VLLM_SOURCES as COMPILE_SOURCES
from vramlint.budget.profile_compile import compile_benchmark, compile_benchmark_bytes
from vramlint.budget.profile_graphs import VLLM_SOURCES as GRAPH_SOURCES
from vramlint.budget.profile_graphs import (
    capture_sizes,
    describe,
    enforce_eager,
    graph_pool_bytes,
    nccl_graph_bytes,
    nccl_graph_cost_measured,
)
from vramlint.lean_dataclass import dataclass
from vramlint.model import ModelInfo

VLLM_SOURCES = (
    "vllm/worker/worker.py::determine_num_available_blocks (V0, 0.4 - 0.10)",
    "vllm/v1/worker/gpu_worker.py::determine_available_memory (V1, 0.7 - 0.33)",
    "vllm/utils.py (0.6.5 - 0.8), vllm/utils/__init__.py (0.9 - 0.10), vllm/utils/mem_utils.py (0.11+): "
    "memory_profiling, MemorySnapshot",
    "vllm/v1/worker/gpu_model_runner.py::profile_run, profile_cudagraph_memory (0.18+)",
    "--kv-cache-memory-bytes: vllm/config/cache.py::CacheConfig.kv_cache_memory_bytes (0.10.2+)",
    "vllm/v1/worker/gpu_model_runner.py::profile_run: the multimodal encoder's dummy batch (vramlint.budget.multimodal)",
    "vllm/v1/spec_decode/eagle.py::EagleProposer.__init__ buffers and dummy_run, called from "
    "GPUModelRunner._dummy_run (0.9 - 0.33; head_profile_bytes below)",
    *COMM_SOURCES,
    *GRAPH_SOURCES,
    *COMPILE_SOURCES,
)

# Sampler peak of the profile run, bytes per logit (max_num_seqs x padded vocab), see activation_peak_bytes.
SAMPLER_BYTES_PER_LOGIT_TORCH = 38.2
SAMPLER_BYTES_PER_LOGIT_FLASHINFER = 14.5
# PyTorch-native sampling with the Triton top-k/top-p kernel (0.17+), counted from the source: the model-dtype
# logits (2 B, held by _dummy_sampler_run), their fp32 copy (4 B, Sampler.forward), the softmax probabilities
# (4 B, TopKTopPSampler.forward_native) and the exponential noise (4 B, random_sample); the kernel masks the fp32
# logits in place.
SAMPLER_BYTES_PER_LOGIT_TRITON = 14.0
# The V2 runner's second profile sampling of 0.33+ (SamplingParams.for_sampler_warmup), beside the model-dtype
# logits: their fp32 copy, processed in place (apply_sampling_params, 4 B), and the probabilities of the top-k /
# top-p sampling (FlashInfer's fused sampler or apply_top_k_top_p, 4 B); the logprobs are a top-k gather
# (compute_topk_scores), not a vocabulary-wide copy. vllm/v1/worker/gpu/sample/sampler.py, 0.33.0 / 0.34.0. Read
# from the code, not checked against a log (no 0.33 / 0.34 start-up log with its breakdown was found).
V2_WARMUP_PASS_BYTES_PER_LOGIT = 8.0
# apply_top_k_top_p takes the Triton kernel from this many rows (``HAS_TRITON and logits.shape[0] >= 8``).
TRITON_TOPK_TOPP_MIN_ROWS = 8
# The CUDA context (and cuBLAS / NCCL library state) every process holds before vLLM's first snapshot: at least
# this much is on the GPU but not in the budget when the profiler does not count it (0.6.5+ / V1 0.9.1+).
CUDA_CONTEXT_BYTES = int(0.25 * GiB)
# Measured / predicted forward activation per token (Llama-3.1-8B on RTX 3090, 0.6.4: 111.1 and 110.7 KB
# measured vs 114.7 KB from the formula).
FORWARD_CALIBRATION = 0.967


@dataclass(kw_only=True)
class Profile(StageResult):
    """What the profiling run takes on one rank and the memory left for the KV cache, bytes; the lists have one
    entry per pipeline stage (one without pipeline parallel)."""

    non_torch: int
    activation: list[int]
    cudagraph: list[int]  # graph memory subtracted before the KV cache (0 where vLLM takes it after)
    kv_bytes: list[float]  # available KV cache memory (negative: none)
    kv_override: int | None  # --kv-cache-memory-bytes
    # the graphs' estimated memory whether or not it is budgeted, and NCCL's part of it
    capture: list[int] | None = None
    capture_nccl: list[int] | None = None
    # on the GPU but not counted by the profiler: the CUDA context where not counted, and the communicators set
    # up before the 0.11+ snapshot
    uncounted: int = 0
    communication: Communication | None = None
    # the last stage's sampler warm-up after the CUDA-graph capture (V1 compile_or_warm_up_model): the peak of its
    # dummy run and sampler on ``warmup_seqs`` requests, beyond the profile run's buffers that stay allocated
    # (``held``: the Triton top-k/top-p row buffer, the fused-MoE workspace)
    warmup: int = 0
    warmup_seqs: int = 0
    held: int = 0
    # torch memory the model runner allocates for the engine's life after the weights are measured, per stage (the
    # V2 runner's penalty bins on the last stage), and whether vLLM's KV sizing counts it (0.27+: total_consumed)
    resident: list[int] | None = None
    resident_counted: bool = False
    # per stage: the prefetch offloader's GPU buffer pool (--offload-group-size, 0.17+), torch memory allocated
    # after the weights are measured; vLLM's KV sizing counts it from 0.27
    offload_pool: list[int] | None = None
    offload_pool_counted: bool = False
    # 0.34+ with the extensible KV cache: the address range reserved from the profiling estimate (what kv_bytes
    # was up to 0.33: the capacity the measured size is capped to), and the transient reserve kept free
    kv_capacity: list[float] | None = None
    kv_reserve: list[int] | None = None
    kv_measured: list[dict[str, float]] | None = None  # per stage: resident, reserve, margin, uncounted (bytes)


def profile_memory(cfg: Configuration, weights: Weights) -> Profile:
    """Stage 3: non-torch memory, the activation peak and CUDA graphs, and the KV cache memory they leave, on each
    pipeline stage: every stage runs its own layers on the profile batch, only the last computes the logits and
    samples (``if get_pp_group().is_last_rank: self._dummy_sampler_run``, V1; V0's model runner likewise)."""
    model, beh, key = cfg.model, cfg.beh, cfg.key
    src: dict[str, str] = {}
    notes: list[str] = []
    comm = communication_memory(beh, cfg.gpu, cfg.tp, cfg.pp, cfg.dp, cfg.args, cfg.env,
                                expert_parallel=cfg.ep_size > 1, moe=bool(model.num_experts))
    non_torch, nt_how = non_torch_bytes(beh, cfg.tp, cfg.pp, cfg.dp, comm=comm)
    src["non_torch"] = "estimate: " + nt_how
    if flashinfer_allreduce_fusion(beh, cfg.gpu, cfg.tp, cfg.pp, cfg.dp, cfg.args, cfg.env):
        workspace, ws_how = flashinfer_fusion_workspace(beh, cfg.gpu, cfg.tp, model.hidden_size or 0,
                                                        cfg.dtype_bytes, cfg.max_num_batched_tokens, cfg.args,
                                                        cfg.env)
        if workspace is None:
            notes.append(flashinfer_allreduce_fusion_note(cfg.tp, beh.version, ws_how))
        elif workspace:
            non_torch += workspace
            src["non_torch"] += " + " + ws_how
    eager = enforce_eager(cfg.args)
    piecewise, full = capture_sizes(beh, cfg.max_num_seqs, cfg.max_num_batched_tokens, eager, cfg.args,
                                    model.architecture, cfg.gpu.compute_capability)
    capture: list[int] = []
    capture_nccl: list[int] = []
    mnbt = cfg.max_num_batched_tokens
    profile_seqs = min(cfg.max_num_seqs, mnbt)
    sampler_path = _sampler_path(beh, key, cfg.env, cfg.image, cfg.gpu.vendor, profile_seqs)
    # 0.21+ sample the dummy batch twice when FlashInfer samples: the second time with a seeded generator, which
    # FlashInfer does not take, so through the PyTorch-native path (_dummy_sampler_run, unless --logprobs-mode is
    # a processed one; the 0.27.1 wheel; TopKTopPSampler.forward_cuda falls back with per-request generators)
    native = sampler_path == "triton" or (
        sampler_path == "flashinfer" and beh.engine == "v1" and versions.at_least(key, 0, 21)
        and profile_seqs >= TRITON_TOPK_TOPP_MIN_ROWS
        and not str(cfg.args.get("logprobs_mode") or "").startswith("processed"))
    triton_rows = triton_buffer_rows(cfg.gpu.compute_units, profile_seqs) if native else 0
    if native and not cfg.gpu.compute_units:
        notes.append(f"the Triton top-k/top-p kernel's row buffer (one fp32 vocabulary row per SM) is not counted: "
                     f"{cfg.gpu.name}'s SM count is not in vramlint's table (0.06 - 0.13 GiB on an H100)")
    activation: list[int] = []
    cudagraph: list[int] = []
    triton_ws = triton_moe_workspace(beh, cfg.gpu.compute_capability, model, cfg.args, cfg.env,
                                     expert_parallel=cfg.ep_size > 1, vendor=cfg.gpu.vendor)
    received = intermediate_tensor_bytes(model, mnbt, cfg.dtype_bytes) if cfg.pp > 1 else 0
    # a stage's profile reads only whether it is the first and the last and how many layers it has: each such
    # stage once (with --pipeline-parallel-size 4096 the stages are a few of these)
    profiled: dict[tuple[bool, bool, int], tuple[int, str, int, str, int, int]] = {}
    for index, layers in enumerate(cfg.pp_partition):
        last = index == len(cfg.pp_partition) - 1
        alike = (index == 0, last, layers)
        got = profiled.get(alike)
        if got is None:
            act, act_how = activation_peak_bytes(model, cfg.tp, mnbt, profile_seqs, cfg.dtype_bytes, sampler_path,
                                                 dp=cfg.dp, expert_parallel=cfg.ep_size > 1, sampler=last,
                                                 triton_workspace=triton_ws, triton_rows=triton_rows)
            if index:
                act += received
            graphs, cg_how = cudagraph_bytes(beh, model, cfg.max_num_seqs, layers=layers,
                                             max_num_batched_tokens=mnbt, enforce_eager=eager, args=cfg.args,
                                             compute_capability=cfg.gpu.compute_capability, sizes=(piecewise, full))
            pool = graph_pool_bytes(piecewise, full, layers)
            nccl = nccl_graph_bytes(piecewise, full, layers) if comm.nccl_in_graphs else 0
            got = profiled[alike] = (act, act_how, graphs, cg_how, pool, nccl)
        act, act_how, graphs, cg_how, pool, nccl = got
        activation.append(act)
        cudagraph.append(graphs)
        capture.append(pool + nccl)
        capture_nccl.append(nccl)
        if last:
            src["activation"] = "estimate: " + act_how + (
                f"; the other pipeline stages {activation[0] / GiB:.2f} GiB (no sampler); every stage after the "
                f"first holds the {received / GiB:.2f} GiB of dummy intermediate tensors it receives"
                if cfg.pp > 1 else "")
            src["cudagraph"] = cg_how
    facts = model.extra.get("facts") or {}
    if facts.get("vision") or model.extra.get("multimodal") or encoder_not_known(model, cfg.args):
        # every stage builds the vision tower and runs the encoder's dummy batch (profile_run), before its layers
        encoder, why_not = (encoder_profile(facts, cfg.args, key, cfg.max_num_seqs, mnbt, cfg.max_model_len,
                                            cfg.dtype_bytes, cfg.tp, gpu=cfg.gpu)
                            if beh.engine == "v1" and facts.get("vision") else (None, None))
        if encoder is not None:
            activation = [max(encoder.tower_peak_bytes, act + encoder.held_bytes) for act in activation]
            src["activation"] += f"; multimodal encoder: {encoder.how}"
        elif why_not or not (facts.get("vision") and tower_skipped(facts, cfg.args, key)):
            notes.append(why_not or "multimodal encoder profiling is not estimated (the model's vision tower is not "
                                    "known): the real activation peak can be much larger")
    proposer = weights.draft.get("proposer") if weights.draft is not None else None
    if proposer is not None and beh.engine == "v1":
        buffers, run, head_how = head_profile_bytes(proposer, key, mnbt, profile_seqs, cfg.dtype_bytes, cfg.tp)
        activation = [max(act, run) + buffers for act in activation]
        src["activation"] += f"; {head_how}"
    benchmarked, not_benchmarked = compile_benchmark(beh, cfg.args, model, cfg.env, cfg.compile_cache)
    if cfg.compile_cache == "warm":
        src["compile_cache"] = ("warm (as given): " + not_benchmarked if not benchmarked else
                                "warm as given, but this configuration reads no compile cache: a cold compile")
    if benchmarked:
        # the first stage holds the embedding; the compile runs before its forward pass and sampler, so the peak
        # is the larger of the two
        bench, bench_how = compile_benchmark_bytes(model, cfg.gpu, cfg.tp, mnbt, cfg.dtype_bytes)
        first = "the first stage: " if cfg.pp > 1 else ""
        if bench > activation[0]:
            activation[0] = bench
            src["activation"] += f"; {first}{bench_how}, {bench / GiB:.2f} GiB, above the rest (a warm compile " \
                                 "cache, on a later start, skips it)"
    if any(k in ("mamba", "linear_attention") for k in (model.layer_types or [])):
        notes.append("the non-torch memory of the Mamba / gated-delta-net Triton kernels is not estimated (it can "
                     "reach GiBs)" + ("" if beh.engine == "v1" else "; V0's per-sequence Mamba state is not estimated"))

    uncounted = (0 if beh.counts_cuda_context else CUDA_CONTEXT_BYTES) + comm.before_snapshot
    resident = [0] * len(cfg.pp_partition)
    pooling = str(cfg.args.get("runner") or "") == "pooling" or str(cfg.args.get("task") or "") in (
        "embed", "embedding", "score", "classify", "reward")
    if beh.v2_model_runner and not pooling:  # a pooling model has no Sampler (GPUModelRunner.load_model)
        state, state_how = v2_sampler_state_bytes(model, cfg.max_num_seqs)
        resident[-1] = state
        counted = versions.at_least(key, 0, 27)
        src["runner_state"] = state_how + (
            " (the last stage), in the memory vLLM 0.27+ counts as consumed before the KV cache" if counted else
            " (the last stage); not in vLLM's KV sizing before 0.27 (torch memory outside the weights and the peak)")
    counted_resident = resident if versions.at_least(key, 0, 27) else [0] * len(resident)
    pool = offload_pool_per_stage(cfg)
    if any(pool):
        # torch memory allocated after "Model loading took" and before memory_profiling's first snapshot: 0.27+
        # count it in total_consumed (the drop in free memory since start-up); before, neither the weights, the
        # peak increase (taken from that snapshot) nor the non-torch memory holds it (mem_utils.py, 0.17.1, 0.22.0)
        counted = versions.at_least(key, 0, 27)
        src["offload_pool"] = (f"the prefetch offloader's GPU buffer pool, {pool[0] / GiB:.2f} GiB per rank "
                               "(StaticBufferPool, model_executor/offloader/prefetch.py), "
                               + ("counted by vLLM before the KV cache (total_consumed)" if counted else
                                  "not counted by vLLM's KV sizing in this release"))
        if counted:
            counted_resident = [r + p for r, p in zip(counted_resident, pool, strict=True)]
        else:
            notes.append(f"the prefetch offloader's GPU buffer pool ({max(pool) / GiB:.2f} GiB) is allocated after "
                         "the weights are measured and before the profiling snapshot, so vLLM before 0.27 sizes "
                         "the KV cache as if it were free: the engine holds that much more than total x "
                         "gpu_memory_utilization")
    kv_override = int_arg(cfg.args, "kv_cache_memory_bytes")
    if kv_override and beh.engine == "v1" and versions.at_least(key, 0, 10, 2):
        kv_bytes = [float(kv_override)] * len(cfg.pp_partition)
        src["kv_cache"] = "--kv-cache-memory-bytes (gpu_memory_utilization is not used)"
    else:
        kv_bytes = [cfg.requested - w - non_torch - a - g - r
                    for w, a, g, r in zip(weights.per_stage, activation, cudagraph, counted_resident, strict=True)]
        src["kv_cache"] = "total x utilisation - weights - non-torch - activation - CUDA graphs"
    if versions.at_least(key, 0, 34) and beh.engine == "v1" and not eager and cfg.gpu.vendor == "nvidia" \
            and tuple(cfg.gpu.compute_capability)[0] == 10:
        # VllmConfig._split_cudagraph_capture_sizes (0.34.0): on the 10.x family unset prefill / decode sizes
        # default to wider grids (max_decode_cudagraph_capture_tokens 8192), not read into capture_sizes
        notes.append("vLLM 0.34 captures wider default CUDA-graph grids on compute capability 10.x "
                     "(_split_cudagraph_capture_sizes); the graphs are estimated with 0.33's sizes")
    capacity: list[float] | None = None
    reserve: list[int] | None = None
    measured: list[dict[str, float]] = []
    if beh.extensible_kv_cache and not kv_override:
        capacity = kv_bytes
        kv_bytes, measured, how = extensible_kv_bytes(cfg, weights, non_torch, activation, cudagraph, capture,
                                                      capture_nccl, uncounted, counted_resident)
        reserve = [int(m["reserve"]) for m in measured]
        src["kv_cache"] = how
        notes.append(EXTENSIBLE_WARMUP_NOTE)
        withheld = extensible_withheld_bytes(cfg, reserve[-1], uncounted)
        if cfg.args.get("gpu_memory_utilization") is not None and 0.7 < cfg.util < 1.0 and withheld >= GiB:
            # measure_kv_cache_blocks: logger.warning_once, the start-up goes on
            notes.append(
                f"vLLM warns: gpu_memory_utilization={cfg.util} caps this instance at {cfg.requested / GiB:.2f} GiB, "
                f"keeping {withheld / GiB:.2f} GiB of free device memory out of the KV cache. The extensible KV cache "
                "is sized from the memory measured after warmup and CUDA graph capture, so vLLM's own use needs no "
                "headroom below 1.0. Leave gpu_memory_utilization unset unless it leaves room for memory vLLM does "
                "not measure: other processes sharing the GPU (including ones that allocate on it later), the CPU on "
                "a unified-memory device, weight transfer buffers for weight updates, or a KV connector's own device "
                "buffers.")
    if capture_nccl and capture_nccl[-1]:
        src["cudagraph"] += (f"; with NCCL all-reduces inside the graphs (no custom all-reduce for TP {cfg.tp} on "
                             f"{cfg.gpu.name}): {capture_nccl[-1] / GiB:.2f} GiB more, "
                             + ("not subtracted by vLLM before the KV cache" if not beh.cudagraph_in_budget
                                else "measured by vLLM but not estimated here"))
        if not nccl_graph_cost_measured(beh):
            notes.append(f"the tensor-parallel all-reduces captured into CUDA graphs go through NCCL (no custom "
                         f"all-reduce for TP {cfg.tp} on {cfg.gpu.name}); their memory (up to "
                         f"{capture_nccl[-1] / GiB:.2f} GiB at the cost measured on vLLM 0.8.5, a few times less with "
                         "newer NCCL and drivers) is not known for this release and is not checked against the free "
                         "memory; --enforce-eager or fewer capture sizes avoid it")
    # compile_or_warm_up_model (V1): after the capture, _dummy_run(min(max_num_seqs, max_num_batched_tokens)) and
    # _dummy_sampler_run on its last hidden states: the same sampler as the profile run, on the same number of
    # requests, with the hidden states of that many tokens only; the row buffer and the MoE workspace are held
    warmup, _ = activation_peak_bytes(model, cfg.tp, profile_seqs, profile_seqs, cfg.dtype_bytes, sampler_path,
                                      dp=cfg.dp, expert_parallel=cfg.ep_size > 1)
    held = (triton_rows * model.vocab_size * 4 if native else 0) + int(
        moe_workspace_bytes(model, cfg.tp, mnbt, cfg.dtype_bytes, cfg.dp, cfg.ep_size > 1) if triton_ws else 0)
    return Profile(non_torch=non_torch, activation=activation, cudagraph=cudagraph, kv_bytes=kv_bytes,
                   kv_override=kv_override, kv_capacity=capacity, kv_reserve=reserve,
                   kv_measured=measured if capacity is not None else None, capture=capture, capture_nccl=capture_nccl, uncounted=uncounted,
                   communication=comm, notes=notes, sources=src, warmup=warmup, warmup_seqs=profile_seqs,
                   held=held, resident=resident, resident_counted=versions.at_least(key, 0, 27),
                   offload_pool=pool if any(pool) else None, offload_pool_counted=versions.at_least(key, 0, 27))


# vllm/v1/worker/extensible_kv_cache.py (0.34.0): the margin kept beyond the transient peak when the KV cache is
# sized from the memory measured after warmup, max(floor, 0.75 x the peak); the floor is 3 GiB on ROCm, whose
# runtime maps kernel scratch outside the allocator.
KV_CACHE_MARGIN_FLOOR_BYTES = 1 * GiB
KV_CACHE_MARGIN_FLOOR_BYTES_ROCM = 3 * GiB
KV_CACHE_MARGIN_FRACTION = 0.75
EXTENSIBLE_WARMUP_NOTE = (
    "vLLM 0.34 sizes the extensible KV cache after warmup and keeps free the larger of the profiled peak (with the "
    "CUDA-graph estimate) and the peak of its sizing warmup steps (a full max_num_batched_tokens step with "
    "attention, prompt logprobs in 1,024-row chunks, the sampler), plus a margin of 0.75 x that peak (at least "
    "1 GiB, 3 on ROCm); the sizing steps' own peak is measured there and not estimated here: where it exceeds the "
    "profiled one, the KV cache is smaller by 1.75 x the excess")


def extensible_kv_bytes(cfg: Configuration, weights: Weights, non_torch: int, activation: list[int],
                        cudagraph: list[int], capture: list[int], capture_nccl: list[int],
                        uncounted: int, resident: list[int] | None = None) -> tuple[list[float], list[dict[str, float]], str]:
    """The KV cache memory of each pipeline stage as vLLM 0.34's extensible KV cache measures it after warmup
    (``measure_kv_cache_blocks`` / ``measure_kv_cache_bytes``, vllm/v1/worker/extensible_kv_cache.py; called from
    ``Worker._compile_or_warm_up_model`` after the capture; the engine takes the minimum over ranks and caps it to
    the capacity reserved from the profiling estimate, ``finalize_extensible_kv_cache``):

        non_kv    = init free - free after warmup - committed = weights + non-torch + CUDA graphs captured
        transient = the profiled transient peak + the CUDA-graph estimate (``peak_activation_memory``, set as
                    ``reserved_headroom_bytes`` in ``initialize_from_config``), or the sizing warmup's, if larger
        margin    = max(1 GiB (3 on ROCm), 0.75 x transient)
        KV        = min(requested - non_kv, init free - non_kv - margin) - transient

    The capture's graphs are counted once as resident memory and, through the estimate, once more in the reserve:
    vLLM's code does so. Init free is the total less the CUDA context and the communicators set up before the
    snapshot. Returns (bytes per stage, its terms per stage: resident, reserve, margin, uncounted; how)."""
    floor = KV_CACHE_MARGIN_FLOOR_BYTES_ROCM if cfg.gpu.vendor == "amd" else KV_CACHE_MARGIN_FLOOR_BYTES
    init_free = cfg.total_bytes - uncounted
    recent = not nccl_graph_cost_measured(cfg.beh)
    out: list[float] = []
    terms: list[dict[str, float]] = []
    alike: dict[tuple[float, float], tuple[float, dict[str, float]]] = {}  # stages alike: one measurement
    for index, (w, a, g) in enumerate(zip(weights.per_stage, activation, cudagraph, strict=True)):
        graphs = 0
        if index < len(capture):
            graphs = capture[index] - (capture_nccl[index] if recent and capture_nccl else 0)
        non_kv = w + non_torch + graphs + (resident[index] if resident else 0)
        transient = a + g
        got = alike.get((non_kv, transient))
        if got is None:
            margin = max(floor, int(transient * KV_CACHE_MARGIN_FRACTION))
            got = alike[(non_kv, transient)] = (
                float(min(cfg.requested - non_kv, init_free - non_kv - margin) - transient),
                {"resident": float(non_kv), "reserve": float(transient), "margin": float(margin),
                 "uncounted": float(uncounted)})
        out.append(got[0])
        terms.append(got[1])
    last = terms[-1]
    margin, reserve = last["margin"], last["reserve"]
    how = (f"extensible KV cache, measured after warmup (vLLM 0.34): min(total x utilisation, free at start-up - "
           f"margin {margin / GiB:.2f} GiB) - weights - non-torch - CUDA graphs - transient reserve "
           f"{reserve / GiB:.2f} GiB (activation peak + CUDA-graph estimate), capped to the capacity reserved "
           "from the profiling estimate")
    return out, terms, how


def extensible_withheld_bytes(cfg: Configuration, transient: int, uncounted: int) -> float:
    """What ``gpu_memory_utilization`` below 1.0 keeps out of an extensible KV cache: the measured size with a
    budget of all the memory free at start-up less the one with the requested budget (``measure_kv_cache_blocks``),
    i.e. max(0, free at start-up - margin - requested)."""
    floor = KV_CACHE_MARGIN_FLOOR_BYTES_ROCM if cfg.gpu.vendor == "amd" else KV_CACHE_MARGIN_FLOOR_BYTES
    margin = max(floor, int(transient * KV_CACHE_MARGIN_FRACTION))
    return max(0.0, cfg.total_bytes - uncounted - margin - cfg.requested)


def v2_sampler_state_bytes(model: ModelInfo, max_num_seqs: int) -> tuple[int, str]:
    """The V2 model runner's penalty bins, allocated with its ``Sampler`` in ``load_model`` after the weights are
    measured and kept for the engine's life: ``PenaltiesState.output_bin_counts`` (max_num_reqs x vocab int32,
    "can be very large, taking up GBs of GPU memory" as vLLM's comment says) and ``prompt_bin_mask``
    (max_num_reqs x cdiv(vocab, 32) int32); vllm/v1/worker/gpu/sample/penalties.py, the same in the 0.28.0 -
    0.34.0 wheels. The vocabulary is the model's, not padded (``model_config.get_vocab_size()``)."""
    vocab = model.vocab_size or 0
    counts = max_num_seqs * vocab * 4
    mask = max_num_seqs * (-(-vocab // 32)) * 4
    return counts + mask, (f"V2 model runner's penalty bins: {max_num_seqs} x {vocab} int32 counts and their "
                           f"prompt bit mask, {(counts + mask) / GiB:.2f} GiB")


def triton_buffer_rows(units: int | None, rows: int) -> int:
    """Rows of ``apply_top_k_top_p_triton``'s cached buffer for a ``rows``-row batch on a GPU of ``units`` SMs or
    compute units (the catalog's `compute_units`; 0 when they are not known): ``min(next_power_of_2(min(SMs,
    rows)), SMs)``."""
    if not units:
        return 0
    programs = min(units, rows)
    return min(1 << max(0, programs - 1).bit_length(), units)


# Architectures whose intermediate tensors between pipeline stages are "hidden_states" only (no residual): the
# make_empty_intermediate_tensors of their vllm/model_executor/models/*.py in the 0.19.0 wheel (the factory's
# keys, or granite*.py's own method); the others pass both.
HIDDEN_ONLY_INTERMEDIATE = frozenset({
    "arctic", "bloom", "chatglm", "dbrx", "falcon", "gpt2", "gpt_bigcode", "gptj", "gpt_neox", "granite",
    "granitemoe", "granitemoeshared", "jais", "mpt", "olmo", "olmo2", "olmo_hybrid", "opt", "persimmon", "phi",
    "stablelm", "starcoder2", "step3_text", "step3p5",
})


def intermediate_tensor_bytes(model: ModelInfo, num_tokens: int, dtype_bytes: int) -> int:
    """The dummy intermediate tensors a pipeline stage after the first profiles on: ``make_empty_intermediate_
    tensors(batch_size=max_num_tokens)``, one (tokens, hidden) tensor of the model dtype per key, "hidden_states"
    and, for most architectures, "residual" (vllm/model_executor/models/utils.py::
    make_empty_intermediate_tensors_factory). V1 keeps them as ``GPUModelRunner.intermediate_tensors`` from the
    profile run's ``_dummy_run`` on (0.11.0 - 0.27.1 wheels); V0's ``ModelRunner._dummy_run`` (0.8.5) makes them
    for the profile batch. Either way they are allocated inside the profiler's window and alive at its peak."""
    keys = 1 if (model.model_type or "") in HIDDEN_ONLY_INTERMEDIATE else 2
    return keys * num_tokens * (model.hidden_size or 0) * dtype_bytes


def triton_moe_workspace(beh: versions.Behavior, cc: tuple[int, ...], model: ModelInfo, args: dict,
                         env: dict | None = None, expert_parallel: bool = False, vendor: str = "nvidia") -> bool:
    """Whether the fused MoE runs as vLLM's modular TritonExperts kernel, whose buffers come from the workspace
    manager (``FusedMoEModularKernel._allocate_buffers``, ``vllm/v1/worker/workspace.py``, which keeps them
    allocated from then on): an unquantized (bf16 / fp16) MoE model on V1
    * 0.15 - 0.19 on any CUDA GPU: ``select_unquantized_moe_backend`` takes TRITON unless
      VLLM_USE_FLASHINFER_MOE_FP16 opts into FlashInfer (0.15.0, 0.17.0, 0.18.0, 0.19.0 wheels; P85, P86, P104 log
      0.34 - 0.55 GiB of peak above the sampler, the buffers' 0.30 - 0.50 GiB);
    * 0.20+ below compute capability 9.0 (the FlashInfer TRTLLM and CUTLASS kernels the oracle tries first need
      10.x, and 9.0 / 10.x / 12.x), and on 9.0 from 0.27 (where the oracle moves the FlashInfer kernels behind
      Triton on Hopper; 0.20 takes FlashInfer CUTLASS there). vllm/model_executor/layers/fused_moe/oracle/
      unquantized.py::_get_priority_backends, experts/flashinfer_cutlass_moe.py::_supports_current_device, read
      in the 0.20.0, 0.26.0, 0.27.1 and 0.28.0 wheels.
    A block-FP8 MoE checkpoint (128 x 128 weight scales, dynamic per-group activations) takes the same TritonExperts
    and the same bf16 buffers (``workspace_dtype`` is the activation dtype, ``M_chunk`` = ``M_full``) from 0.25:
    ``oracle/fp8.py::_get_priority_backends`` puts TRITON first on 9.0 without expert parallelism, and on 8.9 and
    12.x every backend ahead of it declines the block scheme or the device (FlashInfer CUTLASS takes block FP8 on
    9.0 only, FlashInfer TRTLLM needs the 10.x family, DeepGEMM 9.0 / 10.x, vLLM's CUTLASS experts no block
    scales); below 8.9 it runs on Marlin (:func:`vramlint.budget.rank_weights.fp8_marlin`). Read in the 0.25.0,
    0.27.1 and 0.28.0 - 0.34.0 wheels (0.19.0's FlashInfer CUTLASS takes block FP8 on more devices).
    Other backends (FlashInfer, Marlin, DeepGEMM, CUTLASS) size their workspaces otherwise."""
    if beh.engine != "v1" or not versions.at_least(beh.key, 0, 15):
        return False
    if not (model.num_experts and model.num_experts_per_tok):
        return False
    quant = (model.extra.get("facts") or {}).get("quant")
    if isinstance(quant, dict) and quant.get("block") and "fp8" in (quant.get("method"), quant.get("format")):
        return vendor == "nvidia" and block_fp8_triton_experts(beh, cc, args, env, expert_parallel)
    if args.get("quantization") or model.quantization or quant:
        return False
    if not versions.at_least(beh.key, 0, 20):
        return not truthy((env or {}).get("VLLM_USE_FLASHINFER_MOE_FP16"))
    if tuple(cc) < (9, 0):
        return True
    return tuple(cc[:1]) == (9,) and versions.at_least(beh.key, 0, 26)


def block_fp8_triton_experts(beh: versions.Behavior, cc: tuple[int, ...], args: dict, env: dict | None,
                             expert_parallel: bool) -> bool:
    """Whether vLLM 0.25+ runs a block-FP8 MoE on TritonExperts (see :func:`triton_moe_workspace`)."""
    if not versions.at_least(beh.key, 0, 25) or str(args.get("quantization") or "fp8").lower() != "fp8":
        return False
    if str(args.get("moe_backend") or "auto").lower() not in ("auto", "triton"):
        return False  # --moe-backend picks the kernel (map_fp8_backend)
    if truthy((env or {}).get("VLLM_TEST_FORCE_FP8_MARLIN")):
        return False
    major = tuple(cc[:1])
    if major == (9,):
        # FlashInfer CUTLASS goes first with expert parallelism
        return tuple(cc[:2]) == (9, 0) and not expert_parallel
    return tuple(cc[:2]) >= (8, 9) and major in ((8,), (12,))


def moe_workspace_bytes(model: ModelInfo, tp: int, num_tokens: int, dtype_bytes: int, dp: int = 1,
                        expert_parallel: bool = False) -> float:
    """The modular TritonExperts kernel's buffers for ``num_tokens`` tokens (see :func:`triton_moe_workspace`):
    ``FusedMoEModularKernel._allocate_buffers`` (0.20+) sizes ``TritonExperts.workspace_shapes`` for all M tokens
    at once (no chunking), (M, top_k, max(I, H)) shared with the (M, H) output and (M, top_k, max(2I, H)), taken
    from the workspace manager, which keeps them allocated from then on (through the sampler run and after)."""
    if not (model.num_experts and model.num_experts_per_tok):
        return 0.0
    inter = model.intermediate_size or 4 * model.hidden_size
    moe_inter = model.extra.get("moe_intermediate_size") or inter
    moe_inter = ((model.extra.get("facts") or {}).get("moe") or {}).get("inter") or moe_inter
    rank_inter = moe_inter / (1 if expert_parallel else tp)
    hidden = model.hidden_size
    return num_tokens * max(1, dp) * model.num_experts_per_tok * (
        max(rank_inter, hidden) + max(2 * rank_inter, hidden)) * dtype_bytes


def activation_peak_bytes(model: ModelInfo, tp: int, num_tokens: int, num_seqs: int, dtype_bytes: int,
                          sampler_path: str, dp: int = 1, expert_parallel: bool = False,
                          sampler: bool = True, triton_workspace: bool = False,
                          triton_rows: int = 0) -> tuple[int, str]:
    """Estimated PyTorch activation peak of vLLM's profile run on one rank, and which term dominates.

    ``max(forward, sampler)`` where (fitted on real start-up logs):

    * forward = T x (3 I/tp + 2 H + (n_q + 2 n_kv)/tp x head_dim) x dtype bytes x 0.967, T = tokens of
      the profile batch; MoE adds T x top_k x (3 I_moe/tp + H) x dtype bytes. The 0.967 is measured/predicted
      on Llama-3.1-8B, RTX 3090, vLLM 0.6.4 (111.1 and 110.7 KB/token measured at 20000 and 29000 tokens).
    * sampler = S x V x 38.2 B + T x H x dtype bytes: fp32 logits, the sort and softmax copies of top-k/top-p
      (S = sequences, V = padded vocab), while the T x H hidden states are still alive. Fitted on the T4
      vLLM forum T4 log (Llama-3.2-3B, S=256: 1.19 / 1.22 / 1.26 GiB at T = 4096 / 8192 / 16384; the
      fit gives 1.19 / 1.21 / 1.26); checked on Llama-3.2-3B S=192 (0.89 vs 0.90 logged), Qwen2.5-7B S=256
      (1.41 vs 1.42) and Qwen3-8B-FP8 on V1 (1.40 vs 1.40).
    * With the FlashInfer top-k/top-p sampler (no full sort) the per-logit cost is 14.5 B, from the one log
      that has it (Llama-3.2-1B, V1, S=256: 0.45 GiB).
    * From 0.17 the PyTorch-native path masks top-k/top-p with a Triton kernel, in place, for 8 or more rows
      (``apply_top_k_top_p``, vllm/v1/sample/ops/topk_topp_sampler.py and topk_topp_triton.py, read in the
      0.17.0 - 0.21.0 and 0.28.0 wheels; 0.11.1 - 0.16 sort): 14 B per logit, counted in
      SAMPLER_BYTES_PER_LOGIT_TRITON. Its cached row buffer, ``(min(next_power_of_2(programs), SMs), vocab)``
      fp32 with ``programs = min(SMs, rows)`` (``_TRITON_BUFFER_CACHE`` in ``apply_top_k_top_p_triton``, kept
      from the profile run on), is ``triton_rows`` x vocab x 4 B: 0.06 - 0.13 GiB on an H100's 132 SMs.
    * The V2 model runner (0.22 - 0.28 where vramlint decides it) samples the dummy batch greedily: the
      model-dtype logits (with the partial ones at TP > 1), and 0.22 - 0.25 an fp32 copy (see
      :func:`_sampler_path`).
    ``sampler_path``: "sort", "flashinfer", "triton", "v2" or "v2-fp32" (:func:`_sampler_path`).

    * Data parallel MoE (``dp`` > 1): the naive all-to-all (``NaiveAll2AllManager.dispatch``,
      distributed/device_communicators/all2all.py, the default VLLM_ALL2ALL_BACKEND) multicasts every DP rank's
      tokens to every rank, so each rank's fused-MoE runs on dp x T tokens (chunked by
      VLLM_FUSED_MOE_CHUNK_SIZE, 32768) and holds the gathered hidden states and the combined output (2 x
      dp x T x H). With expert parallelism an expert keeps its whole intermediate size on its rank.

    ``sampler`` False: a pipeline stage before the last, which neither computes the logits nor samples.

    This is the text model's peak; :func:`profile_memory` adds a multimodal encoder's dummy batch where
    :mod:`vramlint.budget.multimodal` models it (LoRA warm-up adapters add nothing: they are copied into the
    slots allocated at load time, :mod:`vramlint.budget.lora`).
    """
    hd = head_dim(model)
    workspace = 0.0
    inter = model.intermediate_size or 4 * model.hidden_size
    hidden = model.hidden_size
    q_heads = model.num_attention_heads / tp
    kv_heads = kv_heads_per_rank(model, tp)
    if model.num_experts and model.num_experts_per_tok:
        moe_inter = model.extra.get("moe_intermediate_size") or inter
        facts = model.extra.get("facts") or {}
        moe = facts.get("moe") or {}
        moe_inter = moe.get("inter") or moe_inter
        per_token = (2 * hidden + (q_heads + 2 * kv_heads) * hd) * dtype_bytes
        moe_tokens = num_tokens * max(1, dp)
        chunk = min(moe_tokens, 32768)  # VLLM_FUSED_MOE_CHUNK_SIZE
        expert_split = 1 if expert_parallel else tp
        if triton_workspace:
            workspace = moe_workspace_bytes(model, tp, num_tokens, dtype_bytes, dp, expert_parallel)
            forward = num_tokens * per_token + workspace
        else:
            forward = num_tokens * per_token + chunk * model.num_experts_per_tok * (3 * moe_inter / expert_split + hidden) * dtype_bytes
        if dp > 1:
            forward += 2 * moe_tokens * hidden * dtype_bytes  # multicast hidden states + all-reduced output
    else:
        per_token = (3 * inter / tp + 2 * hidden + (q_heads + 2 * kv_heads) * hd) * dtype_bytes
        forward = num_tokens * per_token
    forward *= FORWARD_CALIBRATION
    # V2 runner: the model-dtype logits of compute_logits, with the rank's partial logits beside the gathered
    # ones at TP > 1 (LogitsProcessor._gather_logits), and 0.22 - 0.25's fp32 copy
    v2_logit = dtype_bytes * (1 + 1 / tp if tp > 1 else 1)
    per_logit = {"flashinfer": SAMPLER_BYTES_PER_LOGIT_FLASHINFER, "triton": SAMPLER_BYTES_PER_LOGIT_TRITON,
                 "v2": v2_logit, "v2-fp32": v2_logit + 4, "v2-warmup": v2_logit + V2_WARMUP_PASS_BYTES_PER_LOGIT,
                 }.get(sampler_path, SAMPLER_BYTES_PER_LOGIT_TORCH)
    if not sampler:
        return int(forward), f"forward pass of {num_tokens} tokens"
    logits = num_seqs * padded_vocab(model.vocab_size)
    row_buffer = triton_rows * model.vocab_size * 4 if sampler_path in ("triton", "flashinfer") else 0
    if sampler_path == "flashinfer" and row_buffer:
        # 0.21+: a second, PyTorch-native pass (the Triton kernel and its buffer) after FlashInfer's
        sampled = max(logits * per_logit, logits * SAMPLER_BYTES_PER_LOGIT_TRITON + row_buffer)
        if sampled == logits * per_logit:
            row_buffer = 0
    else:
        sampled = logits * per_logit + row_buffer
    sampler_peak = sampled + num_tokens * hidden * dtype_bytes + workspace
    if forward > sampler_peak:
        return int(forward), f"forward pass of {num_tokens} tokens"
    kind = {"flashinfer": "FlashInfer sampler", "triton": "PyTorch sampler with the Triton top-k/top-p kernel",
            "v2": "V2 model runner's greedy dummy sampling (the logits only)",
            "v2-fp32": "V2 model runner's greedy dummy sampling (the logits and their fp32 copy)",
            "v2-warmup": ("V2 model runner's second dummy sampling with every sampling parameter on (the logits, "
                          "their fp32 copy and the top-k / top-p probabilities)"),
            }.get(sampler_path, "PyTorch sampler")
    held = f", with the fused-MoE workspace ({workspace / GiB:.2f} GiB) still allocated" if workspace else ""
    if row_buffer:
        held += f", the Triton kernel's row buffer {triton_rows} x {model.vocab_size} fp32"
    return int(sampler_peak), f"{kind} on {num_seqs} sequences x {padded_vocab(model.vocab_size)} vocab{held}"


def non_torch_bytes(beh: versions.Behavior, tp: int, pp: int, dp: int = 1,
                    comm: Communication | None = None) -> tuple[int, str]:
    """Estimated non-torch memory vLLM counts.

    0.05 GiB of libraries' own allocations on any rank (0.05 on T4, 0.03 RTX 4060, 0.02-0.09 on RTX 4090 / L40S /
    A100 in the logs); with TP, PP or DP > 1, the communication memory the release counts
    (:mod:`vramlint.budget.profile_comm`: NCCL communicators, custom all-reduce and symmetric-memory buffers,
    counted before 0.11 and only the profile run's from 0.11); vLLM 0.6.4 (V0) and V1 0.7-0.9.0 also count the
    CUDA context, 0.30 GiB (0.35 GiB total on RTX 3090, 0.6.4). Without ``comm`` (no GPU at hand) the
    communication memory is the flat 0.25 GiB of earlier vramlint releases.
    """
    gib = 0.05
    why = "0.05 GiB typical for one GPU"
    extra = 0
    if tp * pp * dp > 1:
        if comm is None:
            extra = int(0.25 * GiB)
            why = "0.30 GiB typical with NCCL buffers (TP/PP/DP > 1)"
        else:
            extra = comm.counted
            why = f"0.05 GiB + {comm.counted / GiB:.2f} GiB communication buffers ({comm.how})"
    if beh.counts_cuda_context:
        gib += 0.30
        why += f" + 0.30 GiB CUDA context (counted by vLLM {beh.version})"
    return int(gib * GiB) + extra, why


def cudagraph_bytes(beh: versions.Behavior, model: ModelInfo, max_num_seqs: int,
                    layers: int | None = None, max_num_batched_tokens: int = 8192,
                    enforce_eager: bool = False, args: dict | None = None,
                    compute_capability: tuple | None = None,
                    sizes: tuple[list[int], list[int]] | None = None) -> tuple[int, str]:
    """CUDA-graph memory vLLM subtracts before the KV cache (V1 0.18+ with the estimate on, 0.20+ by default).

    Up to 0.17 (0.19 by default) the graphs are captured after the KV cache is allocated, out of the memory then
    free, so nothing is subtracted here; the verdict stage checks that they fit (a capture can run out of
    memory after the KV cache was sized: the 0.8.5 4 x A10 log of benchmarks/startup_logs_public.md, P07). From
    0.18 ``GPUModelRunner.profile_cudagraph_memory`` captures before the KV sizing and
    ``determine_available_memory`` subtracts its estimate when VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is set:
    off by default in 0.18 / 0.19 (envs.py default "0", checked in the 0.19.0 wheel), on from 0.20 ("1" in the
    0.20.0 and 0.21.0 wheels; the 0.21 log says "default since v0.21.0"); never with ``--enforce-eager``.
    vLLM measures the first (largest) capture of each mode and extrapolates the rest; the sizes are those of
    :func:`vramlint.budget.profile_graphs.capture_sizes` (51 PIECEWISE and 35 FULL for 256 sequences in the 0.21
    log of Qwen3-8B, P10). The bytes per graph are measured, not stated by the code; observed totals are 0.1 -
    1.3 GiB (0.17 GiB for a 3B model with 27 sizes on a T4, 0.19 - 0.20 GiB on small models, 0.52 GiB for
    Qwen3-8B, 1.34 GiB for Qwen3.5-35B-A3B at TP 4). Estimate: 4 MiB per captured size and mode plus 1 MiB per
    layer and mode (``layers``: those of one pipeline stage, else the model's); it is low for the larger models
    above. ``sizes``: what `capture_sizes` gives for these arguments, when the caller has it already (the profile
    stage reads them for the graph pool too: a budget computed them twice, a tenth of its time).
    """
    if not beh.cudagraph_in_budget:
        return 0, "not counted by this version (taken from the memory free after the KV cache is allocated)"
    piecewise, full = sizes if sizes is not None else capture_sizes(
        beh, max_num_seqs, max_num_batched_tokens, enforce_eager, args, model.architecture, compute_capability)
    est = graph_pool_bytes(piecewise, full, model.num_layers if layers is None else layers)
    return est, f"estimate for {describe(piecewise, full)}"


def _flashinfer_sampler(beh: versions.Behavior, key: versions.VersionKey, env: dict, image: str | None) -> bool:
    """Whether the sampler in the start-up profile run is FlashInfer's (a smaller peak per logit than PyTorch's).

    ``TopKTopPSampler.__init__`` (v1/sample/ops/topk_topp_sampler.py) takes it whenever FlashInfer imports and
    ``VLLM_USE_FLASHINFER_SAMPLER`` is not 0 in 0.9 - 0.11.0 (``is not False``, read in the 0.10.1.1 and 0.11.0
    wheels; FlashInfer an extra of the wheel, installed in vLLM's image); opt-in from 0.11.1 (``if
    envs.VLLM_USE_FLASHINFER_SAMPLER``, the 0.11.1 wheel, vLLM PR #26859); on by default again from 0.21."""
    fi_env = env.get("VLLM_USE_FLASHINFER_SAMPLER")
    if fi_env is not None:
        return truthy(fi_env)
    if beh.engine == "v1" and versions.at_least(key, 0, 21):
        return True
    if beh.engine == "v1" and versions.at_least(key, 0, 9) and not versions.at_least(key, 0, 11, 1):
        return vllm_image(image)  # only the official image ships FlashInfer (an extra of the wheel)
    return False


def _sampler_path(beh: versions.Behavior, key: versions.VersionKey, env: dict, image: str | None, vendor: str,
                  rows: int) -> str:
    """How the profile run's sampler masks top-k/top-p on ``rows`` logit rows: "flashinfer" (CUDA only, see
    :func:`_flashinfer_sampler`), "triton" (V1 0.17+: ``apply_top_k_top_p`` runs ``apply_top_k_top_p_triton`` when
    Triton is there and the batch has 8 or more rows, on CUDA and ROCm alike) or "sort" (the full-vocabulary sort
    of ``apply_top_k_top_p_pytorch``: V0, V1 up to 0.16, and fewer than 8 rows)."""
    if beh.v2_model_runner:
        # the V2 runner's Sampler on the dummy batch, whose requests were never added (temperature 0, no top-k /
        # top-p, no penalties): gumbel_sample on the logits; 0.22 - 0.25 first copy them to fp32
        # (apply_sampling_params: ``torch.empty_like(logits, dtype=torch.float32)``), 0.26 works in place and
        # 0.27+ returns them unchanged (_requires_logits_processing / needs_logits_processing);
        # vllm/v1/worker/gpu/sample/sampler.py, 0.22.0 - 0.32.0 wheels. 0.33+ sample the batch a second time
        # with every sampling parameter on (SamplingParams.for_sampler_warmup: temperature, top-k / top-p,
        # min-p, penalties, logit bias, logprobs), through the fp32 pipeline (_dummy_sampler_run, 0.33.0 / 0.34.0)
        if versions.at_least(key, 0, 33):
            return "v2-warmup"
        return "v2" if versions.at_least(key, 0, 26) else "v2-fp32"
    if vendor == "nvidia" and _flashinfer_sampler(beh, key, env, image):
        return "flashinfer"
    if beh.engine == "v1" and versions.at_least(key, 0, 17) and rows >= TRITON_TOPK_TOPP_MIN_ROWS:
        return "triton"
    return "sort"


def head_profile_bytes(proposer: dict, key: versions.VersionKey, num_tokens: int, num_seqs: int, dtype_bytes: int,
                       tp: int) -> tuple[int, int, str]:
    """(buffers, dummy-run peak, how) of an EAGLE head or a model's MTP layers in V1's profiling run (both run
    through ``EagleProposer``: ``SpeculativeConfig.use_eagle`` is true for "eagle", "eagle3" and "mtp").

    ``EagleProposer.__init__`` (``SpecDecodeBaseProposer`` from 0.20) allocates, before memory is measured,
    ``hidden_states`` (and from 0.11 ``inputs_embeds``): max_num_batched_tokens x the drafter's hidden size in
    the model dtype each, held for the engine's life. ``GPUModelRunner._dummy_run`` then runs the drafter on the
    profile batch (``self.drafter.dummy_run(num_tokens)``) after the model's forward pass, with the model's hidden
    states (three auxiliary layers' for EAGLE-3, ``use_aux_hidden_state_outputs``) as its input: its peak is
    estimated like the model's forward pass, over the drafter's own layers, plus those inputs."""
    hidden = proposer["hidden"]
    buffers = num_tokens * hidden * dtype_bytes * (2 if versions.at_least(key, 0, 11) else 1)
    forward, _ = activation_peak_bytes(proposer["info"], tp, num_tokens, num_seqs, dtype_bytes, "sort", sampler=False)
    inputs = num_tokens * proposer["target_hidden"] * dtype_bytes * proposer["aux_states"]
    run = forward + inputs
    how = (f"{proposer['label']}: buffers {buffers / (1 << 20):.0f} MiB, dummy run {run / (1 << 30):.2f} GiB (its "
           f"forward pass on {num_tokens} tokens + the model's hidden states)")
    return buffers, run, how


def offload_pool_per_stage(cfg: Configuration) -> list[int]:
    """The prefetch offloader's GPU buffer pool on each pipeline stage (0 without it)."""
    from vramlint.budget.loading import _stage_alike
    from vramlint.budget.rank_weights import prefetch_pool_bytes

    pool: list[int] = []
    sized: dict[tuple, int] = {}  # stages alike in their layers (see `_stage_alike`): one pool
    start = 0
    for layers in cfg.pp_partition:
        stage = (start, start + layers, cfg.pp) if cfg.pp > 1 else None
        alike = _stage_alike(cfg.model, stage)
        got = sized.get(alike) if alike is not None else None
        if got is None:
            got = prefetch_pool_bytes(cfg.model, cfg.tp, cfg.dtype, cfg.args, cfg.key, ep_size=cfg.ep_size,
                                      stage=stage)
            if alike is not None:
                sized[alike] = got
        pool.append(got)
        start += layers
    return pool
