"""The per-GPU memory arithmetic vLLM performs at start-up, and its start-up verdict.

For one engine (all its tensor- and pipeline-parallel ranks) on one GPU type this computes what vLLM logs:

    requested  = total x gpu_memory_utilization
    kv_cache   = requested - weights - non_torch - activation_peak - cudagraph_estimate
    blocks     = kv_cache // (block_size x KV bytes per token of all layers on the rank)

following vLLM's worker / KV-cache code release by release (``worker/worker.py``, ``v1/worker/gpu_worker.py``,
``v1/core/kv_cache_utils.py``); which formula applies is
decided by :mod:`vramlint.versions`. vLLM *measures* the activation peak and the non-torch memory; this module
estimates them (see :func:`activation_peak_bytes` and :func:`non_torch_bytes` for how they were calibrated on
the real start-up logs). Every start-up error is reported with vLLM's own text and the argument responsible.
"""

from __future__ import annotations

import json
import math
from typing import Any

from vramlint import versions
from vramlint.model import Budget, GpuSpec, ModelInfo

GiB = 1 << 30

DTYPE_BYTES = {
    "float16": 2, "half": 2, "fp16": 2, "bfloat16": 2, "bf16": 2, "float32": 4, "float": 4, "fp32": 4,
}
KV_DTYPES = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "bfloat16", "float16")

# Sampler peak of the profile run, bytes per logit (max_num_seqs x padded vocab), see activation_peak_bytes.
SAMPLER_BYTES_PER_LOGIT_TORCH = 38.2
SAMPLER_BYTES_PER_LOGIT_FLASHINFER = 14.5
# Measured / predicted forward activation per token (Llama-3.1-8B on RTX 3090, 0.6.4: 111.1 and 110.7 KB
# measured vs 114.7 KB from the formula).
FORWARD_CALIBRATION = 0.967
# Minimum compute capability per quantization method (get_min_capability() in
# model_executor/layers/quantization/*.py).
QUANT_MIN_CAPABILITY = {
    "awq": 75, "awq_marlin": 80, "gptq": 60, "gptq_marlin": 80, "marlin": 80, "gptq_marlin_24": 80,
    "fp8": 80, "fbgemm_fp8": 80, "modelopt": 89, "bitsandbytes": 70, "compressed-tensors": 70, "gguf": 60,
    "experts_int8": 80, "mxfp4": 80, "squeezellm": 70, "aqlm": 60, "deepspeedfp": 80, "hqq": 80,
}
# Kernels that only take fp16 activations (E15).
FP16_ONLY_QUANT = ("awq", "gptq")


def _gib(x: float) -> float:
    return round(x / GiB, 2)


def _arg(args: dict, key: str, default: Any = None) -> Any:
    value = args.get(key)
    return default if value is None else value


def _int_arg(args: dict, key: str) -> int | None:
    value = args.get(key)
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(str(value).replace("_", ""))
    except ValueError:
        return None


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("1", "true", "yes", "on")


def parse_len(value: Any) -> int | None:
    """``32768``, ``"32k"``, ``"1M"`` (vLLM accepts k/m suffixes, 1k = 1024 since 0.10) -> int, else None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip().lower()
    mult = 1
    if text.endswith("k"):
        mult, text = 1024, text[:-1]
    elif text.endswith("m"):
        mult, text = 1024 * 1024, text[:-1]
    try:
        return int(float(text) * mult)
    except (ValueError, OverflowError):  # not a number, or inf/nan (`1e999`): vLLM's parser refuses both
        return None


# --------------------------------------------------------------------------------------------------------
# Model facts per rank


def model_dtype(model: ModelInfo, args: dict, gpu: GpuSpec, key: versions.VersionKey) -> tuple[str, list[dict], list[str]]:
    """(dtype vLLM runs the model in, errors, notes): --dtype, else the checkpoint's (float32 -> fp16)."""
    errors: list[dict] = []
    notes: list[str] = []
    requested = str(_arg(args, "dtype", "auto")).lower()
    ckpt = (model.torch_dtype or "bfloat16").lower()
    aliases = {"half": "float16", "fp16": "float16", "bf16": "bfloat16", "float": "float32", "fp32": "float32"}
    requested = aliases.get(requested, requested)
    if requested == "auto":
        dtype = "float16" if ckpt == "float32" else ckpt
        if dtype == "bfloat16" and not gpu.bf16:
            if versions.at_least(key, 0, 9):
                notes.append(
                    f"Your device '{_device(gpu)}' (with compute capability {_cc(gpu)}) doesn't support "
                    "torch.bfloat16. Falling back to torch.float16 for compatibility."
                )
                return "float16", errors, notes
            errors.append(_bf16_error(gpu, key))
        return dtype, errors, notes
    if requested == "bfloat16" and not gpu.bf16:
        errors.append(_bf16_error(gpu, key))
    if requested in ("float16", "bfloat16", "float32"):
        return requested, errors, notes
    return dtype_fallback(ckpt), errors, notes


def dtype_fallback(ckpt: str) -> str:
    return "float16" if ckpt == "float32" else ckpt


def _device(gpu: GpuSpec) -> str:
    from vramlint import gpus

    return gpus.device_name(gpu.name)


def _cc(gpu: GpuSpec) -> str:
    return f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}"


def _bf16_error(gpu: GpuSpec, key: versions.VersionKey) -> dict:
    # 0.6.x printed the message without a space before `dtype`.
    setting = "setting the`dtype` flag" if not versions.at_least(key, 0, 7) else "setting the `dtype` flag"
    return {
        "code": "bf16-unsupported",
        "message": (
            f"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {_device(gpu)} GPU "
            f"has compute capability {_cc(gpu)}. You can use float16 instead by explicitly {setting} in CLI, for "
            "example: --dtype=half."
        ),
        "arg": "dtype",
    }


def _compute_capability_error(gpu: GpuSpec, key: versions.VersionKey, version: str) -> dict | None:
    """The start-up failure of a GPU older than every architecture the release's CUDA kernels are built for.

    The kernels of the official build (wheel and image) are cubins for a list of architectures
    (:func:`vramlint.versions.min_compute_capability`); on an older GPU the first launch of a vLLM kernel raises
    CUDA's "no kernel image" error. The PyTorch each release pins has the same floor (torch 2.10 is built for
    sm_70 and up, torch 2.11, which 0.20 pins, for sm_75 and up).
    """
    floor = versions.min_compute_capability(key)
    cc = tuple(gpu.compute_capability)
    if cc >= floor:
        return None
    floor_text = f"{floor[0]}.{floor[1]}"
    if floor > (7, 0) and cc >= (7, 0):
        fix = (f"run it on a GPU of compute capability {floor_text} or newer; vLLM 0.19 is the last release whose "
               f"CUDA kernels are built for compute capability {_cc(gpu)}")
    else:
        fix = (f"run it on a GPU of compute capability {floor_text} or newer; no official vLLM build has CUDA "
               f"kernels for compute capability {_cc(gpu)}")
    return {
        "code": "compute-capability-unsupported",
        "message": (
            "CUDA error: no kernel image is available for execution on the device. The official vLLM "
            f"{version} build has CUDA kernels for compute capability {floor_text} and newer; the "
            f"{_device(gpu)} has compute capability {_cc(gpu)}"
        ),
        "arg": None,
        "fix": fix,
        # an older release runs on this GPU: the verdict depends on which version the image really runs
        "version_dependent": cc >= (7, 0),
    }


def kv_heads_per_rank(model: ModelInfo, tp: int) -> int:
    """``ModelConfig.get_num_kv_heads``: KV heads split over TP ranks, replicated when fewer than ranks."""
    total = model.num_kv_heads or model.num_attention_heads or 1
    return max(1, total // max(1, tp))


def head_dim(model: ModelInfo) -> int:
    if model.head_dim:
        return model.head_dim
    return model.hidden_size // max(1, model.num_attention_heads)


def pp_layers(num_layers: int, pp: int) -> int:
    """Layers on the fullest pipeline stage (vLLM ``get_pp_indices``: even split, remainder spread)."""
    return -(-num_layers // max(1, pp))


def layer_kinds(model: ModelInfo) -> list[str]:
    if model.layer_types:
        return list(model.layer_types)
    if model.sliding_window and not model.is_mla:
        return ["sliding_attention"] * model.num_layers
    return ["full_attention"] * model.num_layers


def full_attention_bytes_per_token_layer(model: ModelInfo, tp: int, kv_dtype_bytes: int,
                                         mla: bool) -> tuple[int | None, str]:
    """KV bytes per token of one full-attention layer on one rank when those layers have their own shape (Gemma 4:
    ``global_head_dim`` and ``num_global_key_value_heads``), else (None, ""). vLLM's ``Attention`` gets that layer's
    head size and KV heads (``Gemma4DecoderLayer``), and ``AttentionSpec.page_size_bytes`` stores K and V even
    when V is a copy of K (``attention_k_eq_v``): 2 x heads x head size x dtype bytes."""
    full = (model.extra.get("facts") or {}).get("full_attn")
    if not full or mla or model.is_mla:
        return None, ""
    heads = max(1, full["kv_heads"] // max(1, tp))
    how = f"2 x {heads} KV heads x {full['head_dim']} head dim x {kv_dtype_bytes} B"
    if full["kv_heads"] < tp:
        how += f" (KV heads replicated: {full['kv_heads']} < TP {tp})"
    if full.get("k_eq_v"):
        how += " (V is a copy of K, stored all the same)"
    return 2 * heads * full["head_dim"] * kv_dtype_bytes, how


def kv_bytes_per_token_layer(model: ModelInfo, tp: int, kv_dtype_bytes: int, engine: str, mla: bool) -> tuple[int, str]:
    """KV bytes one attention layer stores per token on one rank, and how it was derived."""
    if mla:
        width = (model.kv_lora_rank or 512) + (model.qk_rope_head_dim or 64)
        if engine == "v0":
            # CacheEngine._align_cache (VLLM_CUDA_MEM_ALIGN_KV_CACHE=1): entries padded to 256 bytes.
            align = 256 // kv_dtype_bytes
            width = -(-width // align) * align
        indexer = (model.extra.get("facts") or {}).get("indexer")
        if indexer and engine != "v0":
            # DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): an fp8 fp8_ds_mla latent is 656 B (512 fp8 values,
            # 4 fp32 scales, 64 bf16 RoPE values); each layer also has a DeepseekV32IndexerCache, one uint8 key of
            # head_dim + head_dim / 128 x 4 B (fp8 values and an fp32 scale per 128) per token, in the same pool.
            latent = 656 if kv_dtype_bytes == 1 else width * kv_dtype_bytes
            index = indexer["head_dim"] + indexer["head_dim"] // 128 * 4
            return latent + index, (f"MLA latent {latent} B + sparse-attention indexer key {index} B "
                                    "(one head, not split by TP)")
        return width * kv_dtype_bytes, f"MLA latent {width} x {kv_dtype_bytes} B (one head, not split by TP)"
    if model.is_mla:
        # vLLM before 0.7 cached DeepSeek-V2's full K/V with the head size padded to 256.
        heads = kv_heads_per_rank(model, tp)
        return 2 * heads * 256 * kv_dtype_bytes, f"2 x {heads} heads x 256 (pre-MLA vLLM) x {kv_dtype_bytes} B"
    heads = kv_heads_per_rank(model, tp)
    hd = head_dim(model)
    how = f"2 x {heads} KV heads x {hd} head dim x {kv_dtype_bytes} B"
    if (model.num_kv_heads or model.num_attention_heads) < tp:
        how += f" (KV heads replicated: {model.num_kv_heads} < TP {tp})"
    return 2 * heads * hd * kv_dtype_bytes, how


# --------------------------------------------------------------------------------------------------------
# Estimates of what vLLM measures


def padded_vocab(vocab: int) -> int:
    pad = 64
    return -(-vocab // pad) * pad if vocab else 0


def activation_peak_bytes(model: ModelInfo, tp: int, num_tokens: int, num_seqs: int, dtype_bytes: int,
                          flashinfer_sampler: bool, dp: int = 1, expert_parallel: bool = False) -> tuple[int, str]:
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

    * Data parallel MoE (``dp`` > 1): the naive all-to-all (``NaiveAll2AllManager.dispatch``,
      distributed/device_communicators/all2all.py, the default VLLM_ALL2ALL_BACKEND) multicasts every DP rank's
      tokens to every rank, so each rank's fused-MoE runs on dp x T tokens (chunked by
      VLLM_FUSED_MOE_CHUNK_SIZE, 32768) and holds the gathered hidden states and the combined output (2 x
      dp x T x H). With expert parallelism an expert keeps its whole intermediate size on its rank.

    Not estimated: multimodal encoders' profile (can be tens of GiB), LoRA warm-up adapters.
    """
    hd = head_dim(model)
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
        forward = num_tokens * per_token + chunk * model.num_experts_per_tok * (3 * moe_inter / expert_split + hidden) * dtype_bytes
        if dp > 1:
            forward += 2 * moe_tokens * hidden * dtype_bytes  # multicast hidden states + all-reduced output
    else:
        per_token = (3 * inter / tp + 2 * hidden + (q_heads + 2 * kv_heads) * hd) * dtype_bytes
        forward = num_tokens * per_token
    forward *= FORWARD_CALIBRATION
    per_logit = SAMPLER_BYTES_PER_LOGIT_FLASHINFER if flashinfer_sampler else SAMPLER_BYTES_PER_LOGIT_TORCH
    sampler = num_seqs * padded_vocab(model.vocab_size) * per_logit + num_tokens * hidden * dtype_bytes
    if forward > sampler:
        return int(forward), f"forward pass of {num_tokens} tokens"
    kind = "FlashInfer" if flashinfer_sampler else "PyTorch"
    return int(sampler), f"{kind} sampler on {num_seqs} sequences x {padded_vocab(model.vocab_size)} vocab"


def non_torch_bytes(beh: versions.Behavior, tp: int, pp: int, dp: int = 1) -> tuple[int, str]:
    """Estimated non-torch memory vLLM counts (fitted on real start-up logs).

    0.05 GiB for one GPU (0.05 on T4, 0.03 RTX 4060, 0.02-0.09 on RTX 4090 / L40S / A100 in the logs);
    with TP or PP > 1 NCCL and custom all-reduce buffers add 0.25 GiB (0.20 and 0.34 GiB seen on TP ranks);
    vLLM 0.6.4 (V0) and V1 0.7-0.9.0 also count the CUDA context, 0.30 GiB (0.35 GiB total on RTX 3090, 0.6.4).
    """
    gib = 0.05
    why = "0.05 GiB typical for one GPU"
    if tp * pp * dp > 1:
        gib += 0.25
        why = "0.30 GiB typical with NCCL buffers (TP/PP/DP > 1)"
    if beh.counts_cuda_context:
        gib += 0.30
        why += f" + 0.30 GiB CUDA context (counted by vLLM {beh.version})"
    return int(gib * GiB), why


def cudagraph_bytes(beh: versions.Behavior, model: ModelInfo, max_num_seqs: int) -> tuple[int, str]:
    """CUDA-graph memory vLLM subtracts before the KV cache (V1 0.18+ with the estimate on, 0.20+ by default).

    vLLM measures two captures and extrapolates; observed totals are 0.1-1 GiB (0.17 GiB for a 3B model with
    27 sizes on a T4, 0.19-0.20 GiB on small models). Estimate: 4 MiB per captured batch size (vLLM captures
    ``min(2 x max_num_seqs, 512)`` sizes in steps of 8 above 8) plus 1 MiB per layer.
    """
    if not beh.cudagraph_in_budget:
        return 0, "not counted by this version (taken from the 1 - gpu_memory_utilization headroom)"
    largest = min(2 * max_num_seqs, 512)
    sizes = 4 + max(0, (largest - 8) // 8)
    est = sizes * 4 * (1 << 20) + model.num_layers * (1 << 20)
    return est, f"estimate for {sizes} capture sizes (largest {largest})"


# --------------------------------------------------------------------------------------------------------
# Error texts (as vLLM raises them, release by release)


def _e1(key: versions.VersionKey) -> str:
    text = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
    if versions.at_least(key, 0, 33):
        text = (text[:-1] + " (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
                "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.")
    return text


def _e4(key: versions.VersionKey, max_model_len: int, needed: float, available: float, estimated: int) -> str:
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


def _long_len_error(key: versions.VersionKey, user: int, model: ModelInfo, derived: int) -> dict:
    length_key = model.max_len_key or "max_position_embeddings"
    model_max_length = (model.extra.get("facts") or {}).get("model_max_length")
    head = (f"User-specified max_model_len ({user}) is greater than the derived max_model_len ({length_key}={derived} "
            f"or model_max_length={model_max_length} in model's config.json).")
    if versions.at_least(key, 0, 10):
        tail = (" To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. "
                "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position "
                "encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute "
                "position encoding, positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds error.")
    else:
        tail = (" This may lead to incorrect model outputs or CUDA errors. To allow overriding this maximum, set the env "
                "var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
    return {"code": "max-model-len-above-model", "message": head + tail, "arg": "max_model_len"}


# --------------------------------------------------------------------------------------------------------
# Weights per rank


# Quantization methods vLLM can apply to an unquantized checkpoint while loading it ("online"), and how the
# quantized linear layers are then stored. ``Fp8Config`` (quantization/fp8.py) quantizes every LinearBase
# layer to fp8 with a per-tensor scale; the embedding and ``ParallelLMHead`` are not LinearBase layers and stay
# in the model dtype. In-flight bitsandbytes (model_loader/bitsandbytes_loader.py) quantizes to nf4 with
# ``compress_statistics=True`` (double-quantized absmax).
ONLINE_QUANT = {
    "fp8": {"method": "fp8", "bits": 8, "skip": ["lm_head"]},
    "bitsandbytes": {"method": "bitsandbytes", "bits": 4, "double_quant": True, "skip": ["lm_head"]},
}
# Methods whose kernels need a quantized checkpoint: vLLM's ``get_quant_config`` looks for their config file
# (quantize_config.json / quant_config.json) and raises when a plain checkpoint has none.
CHECKPOINT_ONLY_QUANT = ("awq", "gptq", "awq_marlin", "gptq_marlin", "marlin", "gptq_marlin_24")


def _vllm_image(image: str | None) -> bool:
    """Whether the container runs a vLLM image (the official one or one built on it), not a bare pip install."""
    return bool(image) and "vllm" in str(image).lower()


def mxfp4_backend(gpu: GpuSpec, key: versions.VersionKey, env: dict, image: str | None = None) -> tuple[str, str]:
    """The MoE kernel backend vLLM picks for MXFP4 experts (it decides their padding), and why.

    ``Mxfp4MoEMethod._should_use_marlin`` (quantization/mxfp4.py, 0.10.1 - 0.11), ``get_mxfp4_backend`` (0.12 -
    0.14) and ``select_mxfp4_moe_backend`` (fused_moe/oracle/mxfp4.py, 0.19): Marlin below compute capability
    9.0; on Hopper the Triton kernels from ``triton_kernels``, which the wheels vendor from 0.12
    (vllm/third_party/triton_kernels) -- before that a pip install has none and falls back to Marlin, while the
    vLLM 0.11 image has them (llm-d's published H100 runs on vllm/vllm-openai:v0.11.0 load gpt-oss-20b/120b in
    13.47/64.38 GiB, the Triton layout; a pip-installed 0.11.0 logs the Marlin layout); FlashInfer TRT-LLM on
    Blackwell (10.x).
    """
    cc = tuple(gpu.compute_capability)
    if _truthy(env.get("VLLM_MXFP4_USE_MARLIN")):
        return "marlin", "VLLM_MXFP4_USE_MARLIN=1"
    if cc[0] == 10:
        return "flashinfer_trtllm", "FlashInfer TRT-LLM MXFP4 MoE on Blackwell"
    if cc == (9, 0):
        if _truthy(env.get("VLLM_USE_FLASHINFER_MOE_MXFP4_BF16")):
            return ("flashinfer_cutlass" if versions.at_least(key, 0, 12) else "flashinfer_trtllm",
                    "VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1")
        if versions.at_least(key, 0, 12):
            return "triton", "Triton MXFP4 MoE kernels on Hopper (vendored from vLLM 0.12)"
        if versions.at_least(key, 0, 11) and _vllm_image(image):
            return "triton", "Triton MXFP4 MoE kernels on Hopper (the vLLM 0.11 image installs triton_kernels)"
        return "marlin", "Marlin MXFP4 MoE on Hopper (a pip-installed vLLM before 0.12 has no triton_kernels)"
    return "marlin", f"Marlin MXFP4 MoE (weight-only) on compute capability {cc[0]}.{cc[1]}"


def weights_per_rank(model: ModelInfo, tp: int, pp: int, dtype: str, args: dict, gpu: GpuSpec | None = None,
                     key: versions.VersionKey | None = None, env: dict | None = None,
                     ep_size: int = 0, image: str | None = None) -> tuple[int, str]:
    """Bytes of weights one rank loads: the quantization-aware split when the architecture facts are known,
    else the checkpoint bytes divided evenly, plus the RoPE cos/sin cache every rank holds.

    ``--quantization fp8`` / ``bitsandbytes`` on an unquantized checkpoint quantize while loading; MXFP4 experts
    are laid out as the GPU's kernel backend needs them; with expert parallelism (``ep_size`` ranks) each rank
    holds its share of whole experts."""
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
        backend = None
        if (loaded.get("quant") or {}).get("method") == "mxfp4" and gpu is not None and key is not None:
            backend, _ = mxfp4_backend(gpu, key, env or {}, image)
        per_rank = weights.weight_bytes_per_rank(loaded, tp=tp, pp=pp, dtype_bytes=dtype_bytes, include_buffers=True,
                                                 mxfp4_backend=backend, ep_size=ep_size)
        how = "architecture split per rank"
        if model.weight_bytes and model.weight_bytes_source not in (None, "computed from architecture"):
            whole = weights.weight_bytes(facts, dtype_bytes=dtype_bytes)
            rope = weights.rope_cache_bytes(facts, 4 if facts.get("type") == "gpt_oss" else dtype_bytes)
            if whole:
                per_rank = (per_rank - rope) * model.weight_bytes / whole + rope
                how = f"{model.weight_bytes_source}, split per rank by architecture"
        if loaded is not facts:
            how += f"; quantized to {online} while loading (--quantization {online} on an unquantized checkpoint)"
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
        total = base / (tp * pp) + rope
        if tp * pp > 1:
            how += f" / {tp * pp} ranks"
        how += " + RoPE cache"
    offload = args.get("cpu_offload_gb")
    if offload:
        try:
            total = max(0.0, total - float(offload) * GiB)
            how += f" - {offload} GiB --cpu-offload-gb"
        except ValueError:
            pass
    return int(total), how


# --------------------------------------------------------------------------------------------------------
# Speculative decoding

# Methods that propose tokens without a model of their own (prompt lookup, suffix trees).
SPEC_NO_MODEL = ("ngram", "[ngram]", "ngram_gpu", "suffix")
# Methods vLLM folds into "mtp" (MTPModelTypes, config/speculative.py): the target's own next-token-prediction layers.
SPEC_MTP = ("mtp", "deepseek_mtp", "mimo_mtp", "glm4_moe_mtp", "glm4_moe_lite_mtp", "glm_ocr_mtp", "ernie_mtp",
            "nemotron_h_mtp", "exaone_moe_mtp", "qwen3_next_mtp", "qwen3_5_mtp", "longcat_flash_mtp",
            "pangu_ultra_moe_mtp", "step3p5_mtp")
# Model types SpeculativeConfig.hf_config_override turns into an MTP draft when named as the draft model.
SPEC_MTP_TARGET_TYPES = ("deepseek_v3", "deepseek_v32", "glm_moe_dsa", "pangu_ultra_moe", "ernie4_5_moe", "qwen3_next",
                         "exaone_moe", "qwen3_5", "qwen3_5_moe", "qwen3_5_moe_text", "longcat_flash", "step3p5",
                         "mimo", "glm4_moe", "glm4_moe_lite")


def speculative_request(args: dict) -> dict | None:
    """What the command line asks of speculative decoding, or None: ``{"method", "model", "draft_tp",
    "quantization", "flag"}`` from ``--speculative-config`` (JSON, vLLM 0.8.2+) or the older
    ``--speculative-model`` / ``--speculative-draft-tensor-parallel-size`` / ``--speculative-model-quantization``
    flags; ``{"unreadable": True, "flag": ...}`` when the value is known only at run time."""
    if "speculative_config" in args:
        sc = args.get("speculative_config")
        if isinstance(sc, str):
            try:
                sc = json.loads(sc)
            except ValueError:
                sc = None
        if isinstance(sc, dict):
            method = sc.get("method")
            return {"method": str(method).lower() if method else None, "model": sc.get("model"),
                    "draft_tp": _int_arg(sc, "draft_tensor_parallel_size"), "quantization": sc.get("quantization"),
                    "flag": "--speculative-config"}
        return {"unreadable": True, "flag": "--speculative-config"}
    if "speculative_model" in args:
        model = args.get("speculative_model")
        if model is None:
            return {"unreadable": True, "flag": "--speculative-model"}
        return {"method": None, "model": model, "draft_tp": _int_arg(args, "speculative_draft_tensor_parallel_size"),
                "quantization": args.get("speculative_model_quantization"), "flag": "--speculative-model"}
    return None


def speculative_draft_name(args: dict) -> str | None:
    """The name of the separate draft model vLLM would load (method ``draft_model``, given or inferred), to be
    resolved like the main model; None for ngram / suffix / MTP / EAGLE / Medusa or no speculative decoding."""
    req = speculative_request(args)
    if not req or req.get("unreadable"):
        return None
    model = req.get("model")
    if not model or str(model) in SPEC_NO_MODEL or req.get("method") not in (None, "draft_model"):
        return None
    if "eagle-" in str(model).lower() or "eagle3" in str(model).lower():
        return None
    return str(model)


def _speculative_method(req: dict, draft: ModelInfo | None) -> str:
    """The method as ``SpeculativeConfig.__post_init__`` settles it (0.8.3 - 0.33; the V0 flags the same way)."""
    method = req.get("method")
    model = str(req.get("model") or "")
    if method is None:
        method = "ngram" if model in ("ngram", "[ngram]") else "draft_model"
    if method == "[ngram]":
        method = "ngram"
    if method in SPEC_MTP:
        return "mtp"
    if method == "draft_model" and model:
        if "eagle-" in model.lower():
            return "eagle"
        if "eagle3" in model.lower():
            return "eagle3"
        if draft is not None:
            mtype = (draft.model_type or "").lower()
            if mtype in ("medusa", "mlp_speculator", "eagle"):
                return mtype
            if mtype in SPEC_MTP or mtype in SPEC_MTP_TARGET_TYPES or (draft.extra.get("facts") or {}).get("mtp_layers"):
                return "mtp"
    return method


def _draft_support(beh: versions.Behavior, key: versions.VersionKey, version: str, env: dict) -> str | None:
    """Why this release does not run a separate draft model on the engine the budget models, else None.

    V0 (``spec_decode/``, up to 0.9.2) runs one through ``SpecDecodeWorker``; V1 only from 0.15
    (``v1/spec_decode/draft_model.py``, ``DraftModelProposer``). In between V1 falls back to V0 for it (0.8 -
    0.9, ``_is_v1_supported_oracle``); 0.10 - 0.14 refuse it at start-up, an error of :func:`_speculative_budget`."""
    if beh.engine == "v0":
        if versions.at_least(key, 0, 10):
            return f"vLLM {version} has no V0 speculative decoding (removed in 0.10)"
        return None
    if versions.at_least(key, 0, 15):
        return None
    if versions.at_least(key, 0, 8) and not versions.at_least(key, 0, 10) and env.get("VLLM_USE_V1") is None:
        return (f"vLLM {version} runs a separate draft model only on the V0 engine and falls back to V0 for it; "
                "this V1 budget does not model that")
    return f"vLLM {version}'s V1 engine does not run a separate draft model (it does from 0.15)"


def _speculative_budget(req: dict, draft: tuple[ModelInfo | None, str | None] | None, model: ModelInfo,
                        gpu: GpuSpec, env: dict, beh: versions.Behavior, key: versions.VersionKey, version: str,
                        tp: int, pp: int, dtype: str, kv_dtype_bytes: int,
                        image: str | None) -> tuple[dict | None, str, list[str], list[dict]]:
    """(the draft model's share of the budget, source text, notes, errors) for a speculative-decoding request.

    The share is ``{"name", "tp", "weights", "weights_how", "per_token", "per_token_how"}`` when a separate draft
    model (method ``draft_model``) runs and resolves: vLLM loads it on the same GPU in the same
    ``DeviceMemoryProfiler`` block as the model (``GPUModelRunner.load_model`` -> ``DraftModelProposer.load_model``,
    whole, embeddings and LM head not shared, with the model's dtype and the draft checkpoint's own quantization;
    V0: ``SpecDecodeWorker.init_device`` before the profile run), and its attention layers register in the same
    forward context, so ``get_kv_cache_spec`` gives them KV cache in the same pool. ``per_token`` is None when
    the draft's layers are not plain full attention (then only its weights are counted)."""
    flag = req.get("flag", "--speculative-config")
    notes: list[str] = []
    errors: list[dict] = []
    if req.get("unreadable"):
        notes.append(f"{flag} is set from a value vramlint cannot read: a draft model, if it names one, is not counted, "
                     "so KV cache and concurrency may be over-estimated")
        return None, f"{flag}: not readable", notes, errors
    draft_info, draft_why = draft if draft is not None else (None, None)
    method = _speculative_method(req, draft_info)
    name = str(req.get("model") or "")
    if method in SPEC_NO_MODEL:
        return None, f"{method}: proposes tokens without a model of its own, nothing added to the budget", notes, errors
    if method == "mtp":
        n = (model.extra.get("facts") or {}).get("mtp_layers")
        what = f"{n} MTP layer{'s' if n != 1 else ''}" if n else "MTP layers"
        notes.append(f"speculative decoding with {model.name}'s own {what} (method mtp) is not counted: vLLM loads them "
                     "as a draft model whose attention layers take KV cache from the same pool, so KV cache and "
                     "concurrency are over-estimated")
        return None, "mtp: not counted", notes, errors
    if method != "draft_model":
        notes.append(f"the {method} draft {name or 'model'} of speculative decoding is not counted (vLLM loads it "
                     "beside the model, possibly sharing the model's embeddings and LM head, and its attention layers, "
                     "if any, take KV cache from the same pool): KV cache and concurrency are over-estimated")
        return None, f"{method}: not counted", notes, errors
    if not name:
        notes.append(f"{flag} names no draft model: no draft is counted in the budget")
        return None, "draft model: none named", notes, errors
    if beh.engine == "v1" and versions.at_least(key, 0, 10) and not versions.at_least(key, 0, 15):
        # EngineArgs refuses an explicit "draft_model" method (0.11 - 0.14); otherwise GPUModelRunner, which knows
        # only ngram / EAGLE / Medusa (/ MTP) drafters, raises when it builds the drafter (0.10 - 0.14).
        if req.get("method") == "draft_model" and versions.at_least(key, 0, 11):
            text = ("Draft model speculative decoding is not supported yet. Please consider using other speculative "
                    "decoding methods such as ngram, medusa, eagle, or mtp.")
        else:
            text = "Unknown speculative decoding method: draft_model"
        errors.append({"code": "draft-model-unsupported", "message": text,
                       "arg": "speculative_config" if flag == "--speculative-config" else "speculative_model",
                       "fix": "use vLLM 0.15 or newer for a separate draft model, or an ngram, EAGLE or MTP draft"})
        return None, "draft model: refused by this release", notes, errors
    why_not = _draft_support(beh, key, version, env)
    if why_not:
        notes.append(f"the draft model {name} of speculative decoding is not counted: {why_not}")
        return None, "draft model: not counted", notes, errors
    if draft_info is None:
        notes.append(f"the draft model {name} of speculative decoding is not counted ({draft_why or 'not resolved'}): its "
                     "weights and KV cache are missing from the budget, so KV cache and concurrency are over-estimated")
        return None, "draft model: not resolved", notes, errors
    draft_tp = req.get("draft_tp") or tp
    if beh.engine == "v1" and draft_tp != tp:
        # DraftModelProposer._raise_if_draft_tp_mismatch (v1/spec_decode/draft_model.py, 0.15 - 0.33)
        errors.append({
            "code": "draft-tp-mismatch",
            "message": (f"Currently, 'draft_tensor_parallel_size' and 'tensor_parallel_size' must be the same. Got "
                        f"{draft_tp} and {tp}. Please pass 'draft_tensor_parallel_size' in the speculative_config."),
            "arg": "speculative_config",
            "fix": f"set draft_tensor_parallel_size to {tp} (the model's tensor_parallel_size) or leave it out",
        })
        return None, "draft model: draft_tensor_parallel_size differs from tensor_parallel_size", notes, errors
    if draft_tp not in (1, tp) or pp > 1:
        notes.append(f"the draft model {name} of speculative decoding is not counted: draft TP {draft_tp} with TP {tp} "
                     f"and PP {pp} is not modelled")
        return None, "draft model: not counted", notes, errors
    quant = req.get("quantization")
    weights, weights_how = weights_per_rank(draft_info, draft_tp, 1, dtype, {"quantization": quant} if quant else {},
                                            gpu=gpu, key=key, env=env, image=image)
    share: dict[str, Any] = {"name": name, "tp": draft_tp, "weights": weights, "weights_how": weights_how,
                             "per_token": None, "per_token_how": ""}
    kinds = layer_kinds(draft_info)
    if draft_info.is_mla or not kinds or any(k != "full_attention" for k in kinds):
        notes.append(f"the KV cache of the draft model {name} (not plain full attention) is not counted: KV cache and "
                     "concurrency are over-estimated")
    else:
        per_layer, how = kv_bytes_per_token_layer(draft_info, draft_tp, kv_dtype_bytes, beh.engine, False)
        share["per_token"] = per_layer * len(kinds)
        share["per_token_how"] = f"{how} x {len(kinds)} layers"
    return share, f"draft model {name} (TP {draft_tp}) counted", notes, errors


# --------------------------------------------------------------------------------------------------------
# The budget


def _parallelism_errors(model: ModelInfo, tp: int) -> list[dict]:
    """What vLLM refuses about tensor parallel for this model: heads, and KV heads, not divisible by ``tp``."""
    errors: list[dict] = []
    heads = model.num_attention_heads
    if heads and heads % tp:
        errors.append({
            "code": "tp-heads",
            "message": f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp}).",
            "arg": "tensor_parallel_size",
        })
    kvh = model.num_kv_heads
    if kvh and not model.is_mla and tp > 1 and ((kvh >= tp and kvh % tp) or (kvh < tp and tp % kvh)):
        errors.append({
            "code": "tp-kv-heads",
            "message": (f"AssertionError (vLLM's model code requires the {kvh} KV heads and tensor_parallel_size {tp} "
                        "to divide one another; it raises without a message)"),
            "arg": "tensor_parallel_size",
        })
    return errors


def _quantization_checks(model: ModelInfo, args: dict, gpu: GpuSpec, key: versions.VersionKey,
                         dtype: str) -> tuple[list[dict], list[str]]:
    """(errors, notes) about the quantization method (``--quantization`` or the checkpoint's) on this GPU."""
    errors: list[dict] = []
    notes: list[str] = []
    quant = (args.get("quantization") or model.quantization or "")
    quant = str(quant).lower()
    cc_int = gpu.compute_capability[0] * 10 + gpu.compute_capability[1]
    if quant and args.get("quantization") and not model.quantization and quant in CHECKPOINT_ONLY_QUANT:
        errors.append({
            "code": "quantization-needs-checkpoint",
            "message": f"Cannot find the config file for {quant}",
            "arg": "quantization",
        })
        notes.append(f"--quantization {quant} needs a checkpoint quantized with it; {model.name} is not quantized "
                     "(vLLM can quantize an unquantized checkpoint while loading only with fp8 or bitsandbytes)")
    if not quant:
        return errors, notes
    effective = quant
    explicit = bool(args.get("quantization"))
    # vLLM upgrades awq/gptq checkpoints to the Marlin kernels when the GPU can run them; only an explicit
    # marlin method fails on an older GPU.
    min_cc = QUANT_MIN_CAPABILITY.get(effective)
    if effective == "fp8" and versions.at_least(key, 0, 15):
        min_cc = 75
    if effective == "modelopt" and versions.at_least(key, 0, 33):
        min_cc = 80
    if effective.endswith("marlin") and not explicit:
        min_cc = None
    if min_cc is not None and cc_int < min_cc:
        errors.append({
            "code": "quantization-unsupported",
            "message": (f"The quantization method {effective} is not supported for the current GPU. Minimum "
                        f"capability: {min_cc}. Current capability: {cc_int}."),
            "arg": "quantization" if explicit else "model",
        })
    elif effective == "fp8" and not gpu.fp8:
        notes.append("Your GPU does not have native support for FP8 computation but FP8 quantization is being used. "
                     "Weight-only FP8 compression will be used leveraging the Marlin kernel.")
    if effective in FP16_ONLY_QUANT and explicit and dtype == "bfloat16" and cc_int < 80:
        errors.append({
            "code": "quantization-dtype",
            "message": f"torch.bfloat16 is not supported for quantization method {effective}. Supported dtypes: [torch.float16]",
            "arg": "dtype",
        })
    return errors, notes


def _flashinfer_sampler(beh: versions.Behavior, key: versions.VersionKey, env: dict, image: str | None) -> bool:
    """Whether the sampler in the start-up profile run is FlashInfer's (a smaller peak per logit than PyTorch's)."""
    fi_env = env.get("VLLM_USE_FLASHINFER_SAMPLER")
    if fi_env is not None:
        return _truthy(fi_env)
    if beh.engine == "v1" and versions.at_least(key, 0, 21):
        return True
    if beh.engine == "v1" and versions.at_least(key, 0, 9) and not versions.at_least(key, 0, 11):
        return _vllm_image(image)  # only the official image ships FlashInfer
    return False


def compute_budget(model: ModelInfo, gpu: GpuSpec, args: dict, env: dict, version: str, gpus: int,
                   image: str | None = None, sources: dict[str, str] | None = None,
                   draft: tuple[ModelInfo | None, str | None] | None = None) -> Budget:
    """The start-up memory budget of one vLLM engine on ``gpu``, per GPU (the rank that decides).

    ``args`` are vLLM dest names as typed by vLLM (``max_model_len``, ``tensor_parallel_size``, ...);
    ``env`` the container environment; ``version`` the vLLM release; ``gpus`` the devices the engine sees
    (used for TP when ``tensor_parallel_size`` is not given). ``image`` (optional) tells whether the official
    vLLM image (which ships FlashInfer) runs; ``sources`` (optional) where the caller's inputs came from;
    ``draft`` (optional) the speculative-decoding draft model named by the arguments, as (facts, why unresolved)
    from the same resolver as the model (None: not resolved; see :func:`speculative_draft_name`).
    """
    args = dict(args or {})
    env = dict(env or {})
    key = versions.parse_version(version) or versions.parse_version(versions.DEFAULT_VERSION)
    src: dict[str, str] = dict(sources or {})
    notes: list[str] = []
    errors: list[dict] = []

    tp = _int_arg(args, "tensor_parallel_size") or 1
    pp = _int_arg(args, "pipeline_parallel_size") or 1
    src.setdefault("tensor_parallel_size", "--tensor-parallel-size" if args.get("tensor_parallel_size") else "default 1")
    if gpus and tp * pp < gpus and not args.get("tensor_parallel_size") and not args.get("data_parallel_size"):
        notes.append(f"the engine sees {gpus} GPUs but uses {tp * pp} (tensor_parallel_size x pipeline_parallel_size)")

    # ---- max_model_len (ModelConfig._get_and_verify_max_len)
    derived = model.max_position_embeddings or 2048
    user_len = parse_len(args.get("max_model_len"))
    auto_fit = str(args.get("max_model_len")).strip().lower() in ("auto", "-1")
    if user_len is not None and user_len > 0:
        max_model_len = user_len
        src.setdefault("max_model_len", "--max-model-len")
        if user_len > derived and not _truthy(env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN")):
            errors.append(_long_len_error(key, user_len, model, derived))
    else:
        max_model_len = derived
        src.setdefault("max_model_len", f"model maximum ({model.max_len_key or 'max_position_embeddings'} of {model.name})")
        if "max_model_len" in args and args.get("max_model_len") is None:
            notes.append("--max-model-len is set from a value vramlint cannot read; the model maximum was assumed")
    gemma2 = (model.model_type or "").startswith("gemma2") or (model.architecture or "").startswith("Gemma2")
    if gemma2 and versions.at_least(key, 0, 5) and not versions.at_least(key, 0, 6, 5) and model.sliding_window:
        if max_model_len > model.sliding_window:
            notes.append(f"vLLM {version} disables Gemma 2's sliding window and caps max_model_len to {model.sliding_window}")
            max_model_len = min(max_model_len, model.sliding_window)
    if _truthy(args.get("disable_sliding_window")) and model.sliding_window and max_model_len > model.sliding_window:
        max_model_len = model.sliding_window
        src["max_model_len"] = "capped to the sliding window by --disable-sliding-window"

    beh = versions.behavior(version, gpu, args, env, model, max_model_len)
    errors.extend(beh.errors)
    notes.extend(beh.notes)
    src.update({k: v for k, v in beh.sources.items() if k not in src})
    src.setdefault("engine", beh.engine_reason)

    # ---- utilisation
    util_arg = args.get("gpu_memory_utilization")
    try:
        util = float(util_arg) if util_arg is not None else beh.gpu_memory_utilization
    except (TypeError, ValueError):
        util = beh.gpu_memory_utilization
        notes.append(f"--gpu-memory-utilization {util_arg!r} is not a number; the default was assumed")
    src.setdefault("gpu_memory_utilization", "--gpu-memory-utilization" if util_arg is not None else f"default for vLLM {version}")
    if versions.at_least(key, 0, 11):
        # CacheConfig's pydantic Field(gt=0, le=1): pydantic-core tests `le` before `gt`, and nan fails every
        # comparison, so nan (like inf) is "less than or equal to 1"
        if not util <= 1.0 or not util > 0:
            kind, text = (("less_than_equal", "Input should be less than or equal to 1") if not util <= 1.0
                          else ("greater_than", "Input should be greater than 0"))
            msg = (f"1 validation error for CacheConfig\ngpu_memory_utilization\n  {text} [type={kind}, "
                   f"input_value={util}, input_type=float]")
            errors.append({"code": "utilization-out-of-range", "message": msg, "arg": "gpu_memory_utilization"})
    elif util > 1.0:
        errors.append({"code": "utilization-out-of-range", "arg": "gpu_memory_utilization",
                       "message": f"GPU memory utilization must be less than 1.0. Got {util}."})
    elif math.isnan(util):
        # CacheConfig._verify_args tests `> 1.0` only; the memory profiler then sizes the KV cache from nan and
        # int(nan) raises while the engine starts
        errors.append({"code": "utilization-out-of-range", "arg": "gpu_memory_utilization",
                       "message": "gpu_memory_utilization is nan: vLLM does not check it, and the number of KV-cache "
                       "blocks it computes from it is not a number (ValueError: cannot convert float NaN to integer)"})
    if not math.isfinite(util):
        util = beh.gpu_memory_utilization  # said above; the rest of the budget is computed with the default

    errors.extend(_parallelism_errors(model, tp))

    # ---- the GPU vs the compute capabilities the release's CUDA kernels are built for
    cc_error = _compute_capability_error(gpu, key, version)
    if cc_error:
        errors.append(cc_error)

    # ---- dtype and quantization vs the GPU
    dtype, dtype_errors, dtype_notes = model_dtype(model, args, gpu, key)
    errors.extend(dtype_errors)
    notes.extend(dtype_notes)
    dtype_bytes = DTYPE_BYTES.get(dtype, 2)
    quant_errors, quant_notes = _quantization_checks(model, args, gpu, key, dtype)
    errors.extend(quant_errors)
    notes.extend(quant_notes)

    # ---- KV dtype
    kv_dtype = str(_arg(args, "kv_cache_dtype", "auto")).lower()
    if kv_dtype not in KV_DTYPES:
        errors.append({"code": "kv-cache-dtype", "message": f"Unknown kv cache dtype: {kv_dtype}", "arg": "kv_cache_dtype"})
        kv_dtype = "auto"
    kv_dtype_bytes = 1 if kv_dtype.startswith("fp8") else (dtype_bytes if kv_dtype == "auto" else 2)
    src.setdefault("kv_cache_dtype", "--kv-cache-dtype" if args.get("kv_cache_dtype") else f"auto (model dtype {dtype})")

    # ---- scheduler
    max_num_seqs = beh.max_num_seqs
    mnbt = beh.max_num_batched_tokens
    if mnbt < max_num_seqs:
        errors.append({
            "code": "batched-tokens-below-seqs",
            "message": f"max_num_batched_tokens ({mnbt}) must be greater than or equal to max_num_seqs ({max_num_seqs}).",
            "arg": "max_num_batched_tokens" if args.get("max_num_batched_tokens") else "max_num_seqs",
        })
    if not beh.chunked_prefill and mnbt < max_model_len:
        errors.append({
            "code": "batched-tokens-below-max-model-len",
            "message": (f"max_num_batched_tokens ({mnbt}) is smaller than max_model_len ({max_model_len}). This "
                        "effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM "
                        "reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len."),
            "arg": "max_num_batched_tokens" if args.get("max_num_batched_tokens") else "max_model_len",
        })

    # ---- memory
    total_bytes = gpu.total_gib * GiB
    requested = total_bytes * util
    dp = _int_arg(args, "data_parallel_size") or 1
    ep_size = dp * tp if _truthy(args.get("enable_expert_parallel")) and model.num_experts else 0
    weights, weights_how = weights_per_rank(model, tp, pp, dtype, args, gpu=gpu, key=key, env=env, ep_size=ep_size,
                                            image=image)
    src.setdefault("weights", weights_how)
    spec_req = speculative_request(args)
    spec_share = None
    if spec_req is not None:
        spec_share, spec_how, spec_notes, spec_errors = _speculative_budget(
            spec_req, draft, model, gpu, env, beh, key, version, tp, pp, dtype, kv_dtype_bytes, image)
        notes.extend(spec_notes)
        errors.extend(spec_errors)
        src["speculative"] = spec_how
        if spec_share is not None:
            weights += spec_share["weights"]
            src["weights"] += (f" + draft model {spec_share['name']} {spec_share['weights'] / GiB:.2f} GiB "
                               f"({spec_share['weights_how']}, TP {spec_share['tp']})")
    non_torch, nt_how = non_torch_bytes(beh, tp, pp, dp)
    src.setdefault("non_torch", "estimate: " + nt_how)
    flashinfer = _flashinfer_sampler(beh, key, env, image)
    profile_seqs = min(max_num_seqs, mnbt)
    activation, act_how = activation_peak_bytes(model, tp, mnbt, profile_seqs, dtype_bytes, flashinfer,
                                                dp=dp, expert_parallel=ep_size > 1)
    src.setdefault("activation", "estimate: " + act_how)
    if model.extra.get("facts", {}).get("vision") or model.extra.get("multimodal"):
        notes.append("multimodal encoder profiling is not estimated: the real activation peak can be much larger")
    if any(k in ("mamba", "linear_attention") for k in (model.layer_types or [])):
        notes.append("the non-torch memory of the Mamba / gated-delta-net Triton kernels is not estimated (it can "
                     "reach GiBs)" + ("" if beh.engine == "v1" else "; V0's per-sequence Mamba state is not estimated"))
    cudagraph, cg_how = cudagraph_bytes(beh, model, max_num_seqs)
    src.setdefault("cudagraph", cg_how)

    kv_override = _int_arg(args, "kv_cache_memory_bytes")
    if kv_override and beh.engine == "v1" and versions.at_least(key, 0, 10, 2):
        kv_bytes = float(kv_override)
        src["kv_cache"] = "--kv-cache-memory-bytes (gpu_memory_utilization is not used)"
    else:
        kv_bytes = requested - weights - non_torch - activation - cudagraph
        src.setdefault("kv_cache", "total x utilisation - weights - non-torch - activation - CUDA graphs")

    if weights > total_bytes:
        errors.append({
            "code": "weights-exceed-gpu",
            "message": (f"torch.OutOfMemoryError: CUDA out of memory (the weights need {weights / GiB:.2f} GiB per GPU; "
                        f"the GPU has {gpu.total_gib:.2f} GiB in total)"),
            "arg": "tensor_parallel_size" if tp * pp == 1 else "model",
        })
    if beh.engine == "v1" and versions.at_least(key, 0, 9, 2) and not kv_override:
        ctx = 0.25 * GiB  # the CUDA context alone takes at least this much before vLLM measures free memory
        if requested > total_bytes - ctx:
            errors.append({
                "code": "free-below-requested",
                "message": (f"Free memory on device ({(total_bytes - ctx) / GiB:.2f}/{gpu.total_gib:.2f} GiB) on startup is "
                            f"less than desired GPU memory utilization ({util}, {requested / GiB:.2f} GiB). Decrease GPU "
                            "memory utilization or reduce GPU memory used by other processes."),
                "arg": "gpu_memory_utilization",
            })

    # ---- KV layout
    mla = beh.mla_supported
    per_layer, kv_how = kv_bytes_per_token_layer(model, tp, kv_dtype_bytes, beh.engine, mla)
    block_size = beh.block_size
    kinds = layer_kinds(model)
    attn_kinds = [k for k in kinds if k in ("full_attention", "sliding_attention", "chunked_attention")]
    layers_rank = pp_layers(len(attn_kinds), pp)
    window = model.sliding_window or 0
    chunk = model.attention_chunk_size or 0
    n_full = sum(1 for k in attn_kinds if k == "full_attention")
    n_local = len(attn_kinds) - n_full
    # Full-attention layers with their own head size / KV heads (Gemma 4): their own bytes per token.
    per_full, full_how = full_attention_bytes_per_token_layer(model, tp, kv_dtype_bytes, mla)
    if per_full is None:
        per_full = per_layer
        kv_bytes_per_token = per_layer * layers_rank
        src.setdefault("kv_bytes_per_token", kv_how + f" x {layers_rank} layers")
    else:
        full_rank, local_rank = pp_layers(n_full, pp), pp_layers(n_local, pp)
        kv_bytes_per_token = per_full * full_rank + per_layer * local_rank
        src.setdefault("kv_bytes_per_token", f"{full_how} x {full_rank} full-attention layers + {kv_how} x "
                                             f"{local_rank} other layers")
    hybrid = beh.hybrid_kv_manager and n_local > 0 and (window or chunk)
    if hybrid and chunk and not _truthy(env.get("VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE")) and not window:
        hybrid = False
        notes.append("the hybrid KV cache manager is off for chunked local attention: every layer is sized for the full length")
    # unify_kv_cache_spec_page_size (v1/core/kv_cache_utils.py, 0.19 - 0.26): layers with the smaller page get a
    # block size raised by the ratio of the pages, so that every layer's page is the largest one.
    page = block_size * max(per_layer, per_full)  # one layer, one block
    block_full = block_local = block_size
    if hybrid and per_full != per_layer and n_full:
        if page % (block_size * per_full) == 0 and page % (block_size * per_layer) == 0:
            block_full = page // per_full
            block_local = page // per_layer
        src.setdefault("block_size", f"{block_size}; full-attention layers {block_full}, sliding-window layers "
                                     f"{block_local} tokens per block so that their pages are equal "
                                     "(unify_kv_cache_spec_page_size)")

    def per_request_blocks(length: int) -> tuple[float, int]:
        """(bytes for one request of `length` tokens, blocks it takes from the pool)."""
        if not hybrid:
            blocks = -(-length // block_size)
            return blocks * block_size * kv_bytes_per_token, blocks
        groups = _groups(n_full, n_local)
        full_blocks = -(-length // block_full)
        if window:
            local_tokens = min(window - 1 + mnbt, length)
            local_blocks = -(-local_tokens // block_local) + 1
        else:
            local_tokens = min(chunk + mnbt, length)
            local_blocks = -(-local_tokens // block_local)
        n_full_groups, n_local_groups = groups[1], groups[2]
        blocks = n_full_groups * full_blocks + n_local_groups * local_blocks
        need = (n_full * full_blocks + n_local * local_blocks) * page
        return need, blocks

    # Mamba / gated-delta-net state layers (V1): one state page per request per layer, pooled with attention.
    n_state = pp_layers(sum(1 for k in kinds if k in ("mamba", "linear_attention")), pp)
    state_page = 0
    if n_state and beh.engine == "v1":
        mamba_bytes = DTYPE_BYTES.get(str(_arg(args, "mamba_cache_dtype", "auto")).lower(), dtype_bytes)
        ssm_arg = str(_arg(args, "mamba_ssm_cache_dtype", "auto")).lower()
        gdn = model.extra.get("linear_attention") or {}
        if ssm_arg == "auto" and gdn.get("ssm_dtype") and versions.at_least(key, 0, 17):
            # Qwen3_5ForConditionalGenerationConfig.verify_and_update_config (models/config.py, 0.17+) takes the
            # config's mamba_ssm_dtype
            ssm_arg = str(gdn["ssm_dtype"]).lower()
        ssm_bytes = DTYPE_BYTES.get(ssm_arg, mamba_bytes)
        if gdn and not versions.at_least(key, 0, 17):
            ssm_bytes = mamba_bytes  # gated_delta_net_state_dtype used one dtype for both states before 0.17
        state_page, state_how = mamba_state_bytes(model, tp, mamba_bytes, ssm_bytes)
    mamba_hybrid = bool(state_page) and n_full > 0
    if mamba_hybrid:
        raw_state = state_page
        block_size, state_page, page = _unify_mamba_page(per_layer, state_page, block_size)
        attn_rank = pp_layers(n_full, pp)
        gsize, n_attn_groups, n_state_groups = _groups(attn_rank, n_state)
        src["block_size"] = (f"raised to {block_size} so that an attention page holds one Mamba state page "
                             "(HybridAttentionMambaModelConfig.verify_and_update_config)")
        src["kv_bytes_per_token"] += f"; {n_state} state layers of {state_how} per request"
        notes.append(f"Setting attention block size to {block_size} tokens to ensure that attention page size is >= "
                     "mamba page size.")
        if page > raw_state:
            notes.append(f"Padding mamba page size by {100 * (page - raw_state) / raw_state:.2f}% to ensure that mamba "
                         "page size and attention page size are exactly equal.")

        def per_request_blocks(length: int) -> tuple[float, int]:  # noqa: F811 - the hybrid Mamba layout
            attn_blocks = -(-length // block_size)
            blocks = n_attn_groups * attn_blocks + n_state_groups  # one state page per state group
            return (attn_rank * attn_blocks + n_state) * page, blocks

    # The draft model's attention layers: one more KV cache spec per layer in the same pool. V1 puts layers of
    # one attention type in one group whatever their page sizes (UniformTypeKVCacheSpecs, 0.11+): a block holds
    # every layer's page; V0 gives the draft the same number of blocks in a cache of its own (below).
    draft_per_token = spec_share["per_token"] if spec_share is not None else None
    if draft_per_token and (hybrid or mamba_hybrid or n_state):
        notes.append(f"the KV cache of the draft model {spec_share['name']} is not counted (the model's KV cache has "
                     "several layer groups): KV cache and concurrency are over-estimated")
        draft_per_token = None
    target_per_token = kv_bytes_per_token
    if draft_per_token:
        kv_bytes_per_token += draft_per_token
        src["kv_bytes_per_token"] += f" + draft model {spec_share['name']}: {spec_share['per_token_how']}"
        if beh.engine == "v0":
            src["kv_bytes_per_token"] += (" (V0: the model's blocks split between the two caches, "
                                          "split_num_cache_blocks_evenly)")

    num_override = _int_arg(args, "num_gpu_blocks_override")
    if mamba_hybrid:
        per_block_pool = page * gsize
        num_groups = n_attn_groups + n_state_groups
    elif hybrid:
        gsize, n_full_groups, n_local_groups = _groups(n_full, n_local)
        per_block_pool = page * gsize
        num_groups = n_full_groups + n_local_groups
        if n_full % gsize or n_local % gsize:
            padding = num_groups * gsize - len(attn_kinds)
            notes.append(f"Add {padding} padding layers, may waste at most {100 * padding / (num_groups * gsize):.2f}% KV cache memory")
    else:
        per_block_pool = block_size * kv_bytes_per_token
        num_groups = 1
    num_blocks = int(kv_bytes // per_block_pool) if kv_bytes > 0 and per_block_pool else 0
    if draft_per_token and beh.engine == "v0":
        # SpecDecodeWorker.determine_num_available_blocks: the model's own count, then split_num_cache_blocks_evenly
        target_blocks = int(kv_bytes // (block_size * target_per_token)) if kv_bytes > 0 else 0
        num_blocks = int(target_blocks * target_per_token / (target_per_token + draft_per_token))
    if num_override:
        notes.append(f"Overriding num_gpu_blocks={num_blocks} with num_gpu_blocks_override={num_override}")
        num_blocks = num_override
        src["num_gpu_blocks"] = "--num-gpu-blocks-override"

    # ---- concurrency and tokens
    if beh.concurrency == "v0":
        kv_tokens = num_blocks * block_size
        concurrency = kv_tokens / max_model_len if max_model_len else 0.0
    elif beh.concurrency == "v1-tokens":
        kv_tokens = num_blocks * block_size
        concurrency = kv_tokens / max_model_len if max_model_len else 0.0
    else:
        _, blocks_per_req = per_request_blocks(max_model_len)
        concurrency = num_blocks / blocks_per_req if blocks_per_req else 0.0
        kv_tokens = (num_blocks // num_groups) * block_size
        # From 0.21 `_report_kv_cache_config` (later `get_kv_cache_capacity`) logs the group-aware capacity,
        # max_concurrency x max_model_len, instead of num_blocks // groups x block_size.
        if versions.at_least(key, 0, 21):
            kv_tokens = int(concurrency * max_model_len)

    # ---- the KV cache one request of max_model_len needs: vLLM's start-up check below (what a GPU must leave free)
    if beh.engine == "v0":
        one_request = (pp if versions.at_least(key, 0, 8) else 1) * -(-max_model_len // block_size) * per_block_pool
    else:
        one_request = per_request_blocks(max_model_len)[0]

    # ---- start-up verdicts on the KV cache
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
        if kv_bytes <= 0:
            errors.append({"code": "no-cache-memory", "message": _e1(key), "arg": "gpu_memory_utilization"})
        else:
            needed, _ = per_request_blocks(max_model_len)
            available = num_blocks * per_block_pool if num_override else kv_bytes
            if needed > available and auto_fit:
                # --max-model-len auto (-1): vLLM fits the context to the KV cache instead of refusing to start
                estimated = _estimate_max_len(per_request_blocks, available, max_model_len)
                if estimated > 0:
                    notes.append(f"--max-model-len auto: vLLM fits the context to the KV cache, {estimated} tokens "
                                 f"instead of the model's {max_model_len}")
                    src["max_model_len"] = f"auto-fit to the KV cache (model maximum {max_model_len})"
                    max_model_len = estimated
                    needed = available
                    concurrency = 1.0  # the fitted context is what one request can hold
            if needed > available:
                estimated = _estimate_max_len(per_request_blocks, available, max_model_len)
                errors.append({
                    "code": "kv-cache-below-max-model-len",
                    "message": _e4(key, max_model_len, needed, available, estimated),
                    "arg": "max_model_len",
                })

    starts = not errors
    budget = Budget(
        engine=beh.engine,
        vllm_version=version,
        gpu=gpu.name,
        gpus=tp * pp,
        total_gib=round(gpu.total_gib, 2),
        gpu_memory_utilization=util,
        usable_gib=_gib(requested),
        weights_gib=_gib(weights),
        non_torch_gib=_gib(non_torch),
        activation_gib=_gib(activation),
        cudagraph_gib=_gib(cudagraph),
        kv_cache_gib=_gib(kv_bytes),
        kv_bytes_per_token=kv_bytes_per_token,
        block_size=block_size,
        num_gpu_blocks=num_blocks,
        kv_tokens=kv_tokens,
        max_model_len=max_model_len,
        max_concurrency=round(concurrency, 2),
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=mnbt,
        starts=starts,
        errors=errors,
        sources=src,
        notes=notes,
        one_request_kv_gib=round(one_request / GiB, 3),
    )
    return budget


def mamba_state_bytes(model: ModelInfo, tp: int, conv_bytes: int, ssm_bytes: int) -> tuple[int, str]:
    """Bytes of one state layer's per-request state on one rank (``MambaSpec.page_size_bytes``), and how.

    Shapes from ``MambaStateShapeCalculator`` (model_executor/layers/mamba/mamba_utils.py, 0.11 - 0.14):
    gated delta net conv (kernel - 1, (2 k_heads k_dim + v_heads v_dim) / tp) and state (v_heads / tp, k_dim,
    v_dim); Mamba2 conv (kernel - 1, (inner + 2 groups' state) / tp) with the groups extended to the TP size when
    they do not divide it, state (heads / tp, head_dim, state); Mamba1 conv (kernel - 1, inner / tp) and state
    (inner / tp, state). Conv in --mamba-cache-dtype, the recurrent state in --mamba-ssm-cache-dtype (both the
    model dtype by default).
    """
    la = model.extra.get("linear_attention")
    if la:
        conv = (la["conv"] - 1) * (2 * la["k_heads"] * la["k_dim"] + la["v_heads"] * la["v_dim"]) // tp
        ssm = la["v_heads"] // tp * la["k_dim"] * la["v_dim"]
        return conv * conv_bytes + ssm * ssm_bytes, "gated delta net state"
    m = model.extra.get("mamba")
    if not m:
        return 0, "unknown"
    if m.get("version") == 2:
        groups = m.get("n_groups", 1)
        groups += 0 if groups % tp == 0 else tp - groups
        conv = (m["d_conv"] - 1) * ((m["inner"] + 2 * groups * m["d_state"]) // tp)
        ssm = m["n_heads"] // tp * m["head_dim"] * m["d_state"]
        return conv * conv_bytes + ssm * ssm_bytes, "Mamba2 state"
    conv = (m["d_conv"] - 1) * (m["inner"] // tp)
    ssm = m["inner"] // tp * m["d_state"]
    return conv * conv_bytes + ssm * ssm_bytes, "Mamba1 state"


def _unify_mamba_page(attn_per_token: int, state_page: int, block_size: int) -> tuple[int, int, int]:
    """(attention block size, state page, page) after vLLM makes both page sizes equal (without prefix caching):
    the attention block grows to ``16 x cdiv(state_page, 16 x attention bytes per token)`` tokens and the state
    page is padded up to the attention page."""
    needed = 16 * -(-state_page // (16 * attn_per_token))
    block = max(block_size, needed)
    page = block * attn_per_token
    return block, page, page


def _groups(n_full: int, n_local: int) -> tuple[int, int, int]:
    """KV cache groups of the V1 hybrid manager: (layers per group, full-attention groups, local groups)."""
    sizes = [n for n in (n_full, n_local) if n]
    gsize = min(sizes)
    return gsize, -(-n_full // gsize) if n_full else 0, -(-n_local // gsize) if n_local else 0


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
