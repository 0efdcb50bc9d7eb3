"""The bytes of weights one rank loads (``Model loading took X GiB``), quantization and kernel layouts included.

vLLM measures the torch allocation around ``load_model()`` (``DeviceMemoryProfiler``); this computes it from
the checkpoint and the architecture (:mod:`vramlint.weights`).
"""

from __future__ import annotations

import math

from vramlint import versions
from vramlint.budget.common import DTYPE_BYTES, GiB, head_dim, truthy, vllm_image
from vramlint.lean_dataclass import dataclass
from vramlint.model import GpuSpec, ModelInfo

# Quantization methods vLLM can apply to an unquantized checkpoint while loading it ("online"), and how the
# quantized linear layers are then stored. ``Fp8Config`` (quantization/fp8.py) quantizes every LinearBase
# layer to fp8 with a per-tensor scale; the embedding and ``ParallelLMHead`` are not LinearBase layers and stay
# in the model dtype. In-flight bitsandbytes (model_loader/bitsandbytes_loader.py) quantizes to nf4 with
# ``compress_statistics=True`` (double-quantized absmax).
ONLINE_QUANT = {
    "fp8": {"method": "fp8", "bits": 8, "skip": ["lm_head"]},
    "bitsandbytes": {"method": "bitsandbytes", "bits": 4, "double_quant": True, "skip": ["lm_head"]},
}
# The width of an unquantized tensor in a model's recorded weight bytes (``ModelInfo.weight_bytes`` from the
# catalog or the safetensors headers): the default load dtype, fp16 / bf16.
CATALOG_DTYPE_BYTES = 2


def mxfp4_backend(gpu: GpuSpec, key: versions.VersionKey, env: dict, image: str | None = None) -> tuple[str, str]:
    """The MoE kernel backend vLLM picks for MXFP4 experts (it decides their padding), and why.

    ``Mxfp4MoEMethod._should_use_marlin`` (quantization/mxfp4.py, 0.10.1 - 0.11), ``get_mxfp4_backend`` (0.12 -
    0.14) and ``select_mxfp4_moe_backend`` (fused_moe/oracle/mxfp4.py, 0.19): Marlin below compute capability
    9.0; on Hopper the Triton kernels from ``triton_kernels``, which the wheels vendor from 0.12
    (vllm/third_party/triton_kernels) -- before that a pip install has none and falls back to Marlin, while the
    vLLM 0.11 image is taken to have them (first read from llm-d's H100 runs of gpt-oss-20b/120b, 13.47/64.38
    GiB, the Triton layout, keyed as 0.11.0 runs; they were committed when the page's recipe ran the January 2026
    image, 0.13 - 0.14, so no 0.11 log shows it now; a pip-installed 0.11.0 logs the Marlin layout); FlashInfer TRT-LLM on
    Blackwell (10.x).
    """
    cc = tuple(gpu.compute_capability)
    if gpu.vendor == "amd":
        # ROCm's MXFP4 MoE (AITER / Triton) layout is not modelled: the experts are counted unpadded, and the
        # ROCm note of the budget says so (vramlint.budget.rocm_notes)
        return "marlin", "ROCm: the MXFP4 MoE layout of ROCm's kernels is not modelled (experts counted unpadded)"
    if truthy(env.get("VLLM_MXFP4_USE_MARLIN")):
        return "marlin", "VLLM_MXFP4_USE_MARLIN=1"
    if cc[0] == 10:
        return "flashinfer_trtllm", "FlashInfer TRT-LLM MXFP4 MoE on Blackwell"
    if cc == (9, 0):
        if truthy(env.get("VLLM_USE_FLASHINFER_MOE_MXFP4_BF16")):
            return ("flashinfer_cutlass" if versions.at_least(key, 0, 12) else "flashinfer_trtllm",
                    "VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1")
        if versions.at_least(key, 0, 12):
            return "triton", "Triton MXFP4 MoE kernels on Hopper (vendored from vLLM 0.12)"
        if versions.at_least(key, 0, 11) and vllm_image(image):
            return "triton", "Triton MXFP4 MoE kernels on Hopper (the vLLM 0.11 image installs triton_kernels)"
        return "marlin", "Marlin MXFP4 MoE on Hopper (a pip-installed vLLM before 0.12 has no triton_kernels)"
    return "marlin", f"Marlin MXFP4 MoE (weight-only) on compute capability {cc[0]}.{cc[1]}"


def fp8_marlin(gpu: GpuSpec | None, key: versions.VersionKey | None, env: dict | None) -> bool:
    """Whether vLLM runs FP8 checkpoints as weight-only FP8 on the Marlin kernel: CUDA GPUs without native FP8
    (compute capability below 8.9; the configuration stage says which GPUs vLLM runs FP8 on at all), or
    ``VLLM_TEST_FORCE_FP8_MARLIN=1``.

    ``Fp8LinearMethod`` / ``Fp8MoEMethod`` (quantization/fp8.py, 0.9.2: ``use_marlin = not
    has_device_capability(89) or VLLM_TEST_FORCE_FP8_MARLIN``; 0.22.1 and 0.28.0: ``MarlinFP8ScaledMMLinearKernel``
    ahead of the Triton block kernel for 7.5 <= cc < 8.9 in ``_POSSIBLE_FP8_BLOCK_KERNELS``, and the MoE oracle's
    Triton experts need ``supports_fp8()``, so MARLIN) then call ``prepare_fp8_layer_for_marlin`` /
    ``prepare_(fp8_)moe_(fp8_)layer_for_marlin`` (quantization/utils/marlin_utils_fp8.py), which turn a block
    checkpoint's fp32 scales (one per 128 x 128 block) into group-wise scales: ``scales.to(layer.orig_dtype)``,
    ``repeat_interleave(block_n)`` along the output dimension, one row per ``weight_block_size[1]`` input columns
    -- 2 / 128 bytes more per weight in bf16 / fp16. Read in the 0.9.2, 0.22.1 and 0.28.0 wheels; releases before
    0.9.2 are not assumed to do the same."""
    if gpu is None or key is None or gpu.vendor != "nvidia" or not versions.at_least(key, 0, 9, 2):
        return False
    return tuple(gpu.compute_capability) < (8, 9) or truthy((env or {}).get("VLLM_TEST_FORCE_FP8_MARLIN"))


def weights_per_rank(model: ModelInfo, tp: int, pp: int, dtype: str, args: dict, gpu: GpuSpec | None = None,
                     key: versions.VersionKey | None = None, env: dict | None = None,
                     ep_size: int = 0, image: str | None = None,
                     stage: tuple[int, int, int] | None = None) -> tuple[int, str]:
    """Bytes of weights one rank loads: the quantization-aware split when the architecture facts are known,
    else the checkpoint bytes divided evenly, plus the RoPE cos/sin cache every rank holds.

    ``--quantization fp8`` / ``bitsandbytes`` on an unquantized checkpoint quantize while loading; MXFP4 experts
    are laid out as the GPU's kernel backend needs them; with expert parallelism (``ep_size`` ranks) each rank
    holds its share of whole experts. ``stage`` (first layer, end layer, pipeline stages): one pipeline stage's
    weights (:func:`vramlint.weights.weight_bytes_per_rank`)."""
    dtype_bytes = DTYPE_BYTES.get(dtype, 2)
    facts = model.extra.get("facts")
    total: float
    how: str
    if facts:
        from vramlint import weights

        loaded = facts
        online = str(args.get("quantization") or "").lower()
        if online in ONLINE_QUANT and not facts.get("quant"):
            loaded = {**facts, "quant": dict(ONLINE_QUANT[online])}
        quant = loaded.get("quant") or {}
        marlin_fp8 = quant.get("method") == "fp8" and bool(quant.get("block")) and fp8_marlin(gpu, key, env)
        if marlin_fp8:
            loaded = {**loaded, "quant": {**quant, "marlin_scale_bytes": dtype_bytes}}
        backend = None
        if (loaded.get("quant") or {}).get("method") == "mxfp4" and gpu is not None and key is not None:
            backend, _ = mxfp4_backend(gpu, key, env or {}, image)
        # the MLA backend (vLLM 0.7+, unless VLLM_MLA_DISABLE) keeps dequantized copies of kv_b_proj
        mla_dequant = bool(loaded.get("mla")) and key is not None and versions.at_least(key, 0, 7) \
            and not truthy((env or {}).get("VLLM_MLA_DISABLE"))
        per_rank = weights.weight_bytes_per_rank(loaded, tp=tp, pp=pp, dtype_bytes=dtype_bytes, include_buffers=True,
                                                 mxfp4_backend=backend, ep_size=ep_size, stage=stage,
                                                 mla_dequant=mla_dequant)
        how = "architecture split per rank"
        if model.weight_bytes and model.weight_bytes_source not in (None, "computed from architecture"):
            # model.weight_bytes counts the unquantized tensors at the default load dtype's 2 bytes (the catalog's
            # parameter count x 2, bytes_from_safetensors' cast of float32 tensors), so it corrects the
            # architecture count taken at that width; the split per rank keeps the run's dtype: --dtype float32
            # loads every unquantized tensor in 4 bytes (BaseModelLoader.load_model builds the model under
            # set_default_torch_dtype(model_config.dtype)).
            whole = weights.weight_bytes(facts, dtype_bytes=CATALOG_DTYPE_BYTES)
            rope = weights.rope_cache_bytes(facts, 4 if facts.get("type") == "gpt_oss" else dtype_bytes)
            if whole:
                per_rank = (per_rank - rope) * model.weight_bytes / whole + rope
                how = f"{model.weight_bytes_source}, split per rank by architecture"
        if online in ONLINE_QUANT and not facts.get("quant"):
            how += f"; quantized to {online} while loading (--quantization {online} on an unquantized checkpoint)"
        if marlin_fp8:
            how += (f"; FP8 weight-only on the Marlin kernel (compute capability {gpu.compute_capability[0]}."
                    f"{gpu.compute_capability[1]}): block scales as {dtype} group scales per {quant['block'][1]} "
                    "input columns")
        if backend:
            how += f"; MXFP4 experts laid out for the {backend} MoE kernels"
        if ep_size > 1:
            how += f"; experts split over {ep_size} expert-parallel ranks"
        total = per_rank
    else:
        if model.weight_bytes:
            base = model.weight_bytes
            how = model.weight_bytes_source or "model weight bytes"
        elif model.param_count:
            base = model.param_count * (dtype_bytes if not model.quantization else 0.5 + 2 / 128)
            how = "parameter count"
        else:
            return 0, "unknown"
        if dtype == "float32" and not model.quantization and (model.torch_dtype or "") != "float32":
            base *= 2
        rope = (model.max_position_embeddings or 0) * (model.qk_rope_head_dim if model.is_mla else head_dim(model)) * dtype_bytes
        if stage is not None and stage[2] > 1 and model.num_layers:
            total = base * (stage[1] - stage[0]) / model.num_layers / tp + rope
            how += f" x {stage[1] - stage[0]}/{model.num_layers} layers / {tp} ranks" if tp > 1 else \
                f" x {stage[1] - stage[0]}/{model.num_layers} layers"
        else:
            total = base / (tp * pp) + rope
            if tp * pp > 1:
                how += f" / {tp * pp} ranks"
        how += " + RoPE cache"
    plan = offload_plan(args, key)
    if plan.backend == "prefetch" and facts:
        from vramlint import weights

        moved, pool, count = weights.prefetch_offload_bytes(
            loaded, plan.group_size, plan.num_in_group, plan.prefetch_step, tp=tp, dtype_bytes=dtype_bytes,
            ep_size=ep_size, mxfp4_backend=backend, stage=stage, params=plan.params)
        total -= moved
        how += (f" - {moved / GiB:.2f} GiB of {count} decoder layers moved to the CPU by the prefetch offloader "
                f"(the last {plan.num_in_group} of every {plan.group_size}"
                + (f", parameters matching {', '.join(sorted(plan.params))}" if plan.params else "")
                + f"; its {plan.prefetch_step}-slot GPU buffer pool, {pool / GiB:.2f} GiB, is allocated after the "
                  "weights are measured)")
    elif plan.backend == "prefetch":
        how += " (the prefetch offloader's layers are not estimated: the model's architecture is not known)"
    elif plan.limit > 0 and facts:
        from vramlint import weights

        moved, most = weights.offloaded_bytes(loaded, plan.limit, tp=tp, dtype_bytes=dtype_bytes, ep_size=ep_size,
                                              mxfp4_backend=backend, stage=stage, params=plan.params)
        total -= moved
        how += (f" - {moved / GiB:.2f} GiB of decoder-layer parameters moved to the CPU by --cpu-offload-gb "
                f"{plan.offload_gb} (whole parameters until the limit is reached")
        if plan.params:
            how += f"; only those matching --cpu-offload-params {', '.join(sorted(plan.params))})"
        else:
            how += ("; the embedding, LM head and norms stay on the GPU)" if moved >= most else ")")
    elif plan.limit > 0:
        total = max(0.0, total - plan.limit)
        how += f" - {plan.offload_gb} GiB --cpu-offload-gb"
    return int(total), how


@dataclass
class OffloadPlan:
    """The weight offloading vLLM sets up (``create_offloader``, model_executor/offloader/base.py, 0.17+)."""
    backend: str | None = None  # "uva" (--cpu-offload-gb), "prefetch", or None
    limit: float = 0.0  # UVA: bytes to move
    offload_gb: object = None
    params: frozenset[str] = frozenset()
    group_size: int = 0
    num_in_group: int = 1
    prefetch_step: int = 1


def _name_set(value) -> frozenset[str]:
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [str(v) for v in value]
    elif value is None or value == "":
        items = []
    else:
        items = str(value).replace(",", " ").split()
    return frozenset(i.strip() for i in items if i.strip())


def _int(value, default: int) -> int:
    try:
        return int(value) if value is not None and str(value).strip() != "" else default
    except (TypeError, ValueError):
        return default


def offload_plan(args: dict, key: versions.VersionKey | None) -> OffloadPlan:
    """Which offloader vLLM builds from the arguments. Up to 0.16 ``--cpu-offload-gb`` alone (models/utils.py).
    0.17+ (config/offload.py, base.py::create_offloader; the 0.17.1 - 0.34.0 wheels): ``--offload-backend auto``
    takes the prefetch offloader when ``--offload-group-size`` > 0 (over ``--cpu-offload-gb`` if both are set),
    else UVA when ``--cpu-offload-gb`` > 0; "uva" / "prefetch" force one and ignore the other's settings."""
    offload = args.get("cpu_offload_gb")
    try:
        limit = float(offload) * GiB if offload else 0.0
    except (TypeError, ValueError):
        limit = 0.0
    if not math.isfinite(limit):
        limit = 0.0  # refused at start-up (vramlint.budget.configuration); the weights stay on the GPU here
    if key is not None and not versions.at_least(key, 0, 17):
        return OffloadPlan(backend="uva" if limit > 0 else None, limit=limit, offload_gb=offload)
    chosen = str(args.get("offload_backend") or "auto").strip().lower()
    group = _int(args.get("offload_group_size"), 0)
    if chosen == "prefetch" or (chosen == "auto" and group > 0):
        if group <= 0:
            return OffloadPlan()  # refused by OffloadConfig's validator (vramlint.budget.configuration)
        return OffloadPlan(backend="prefetch", group_size=group,
                           num_in_group=_int(args.get("offload_num_in_group"), 1),
                           prefetch_step=_int(args.get("offload_prefetch_step"), 1),
                           params=_name_set(args.get("offload_params")))
    if limit > 0 and chosen in ("auto", "uva"):
        return OffloadPlan(backend="uva", limit=limit, offload_gb=offload,
                           params=_name_set(args.get("cpu_offload_params")))
    return OffloadPlan()


def prefetch_pool_bytes(model: ModelInfo, tp: int, dtype: str, args: dict, key: versions.VersionKey | None,
                        ep_size: int = 0, stage: tuple[int, int, int] | None = None) -> int:
    """The prefetch offloader's GPU buffer pool on one rank (0 without it): torch memory ``post_init`` allocates at
    the end of ``load_model``, after ``Model loading took`` is measured (gpu_model_runner.py, 0.17.1 - 0.34.0)."""
    plan = offload_plan(args, key)
    facts = model.extra.get("facts")
    if plan.backend != "prefetch" or not facts:
        return 0
    from vramlint import weights

    _, pool, _ = weights.prefetch_offload_bytes(facts, plan.group_size, plan.num_in_group, plan.prefetch_step,
                                                tp=tp, dtype_bytes=DTYPE_BYTES.get(dtype, 2), ep_size=ep_size,
                                                stage=stage, params=plan.params)
    return int(pool)
