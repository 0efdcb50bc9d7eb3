"""Stage 1 of the budget: the configuration vLLM resolves before it touches the GPU.

``EngineArgs.create_engine_config`` and the config classes' checks (``ModelConfig._get_and_verify_max_len``,
``_get_and_verify_dtype``, ``verify_with_parallel_config``, ``CacheConfig._verify_args``,
``SchedulerConfig._verify_args``, ``VllmConfig._get_quantization_config``), then the worker's
``init_device``: the engine, the lengths, dtypes, parallelism, scheduler limits and the memory it requests
(total x gpu_memory_utilization). Every refusal is reported with vLLM's own text.
"""

from __future__ import annotations

import math

from vramlint import versions
from vramlint.budget.common import (
    DTYPE_BYTES,
    GiB,
    StageResult,
    arg_or,
    cc_text,
    device_name,
    int_arg,
    parse_len,
    per_stage_text,
    truthy,
)
from vramlint.lean_dataclass import dataclass
from vramlint.model import GpuSpec, ModelInfo

# vLLM code this stage follows, by release.
VLLM_SOURCES = (
    "vllm/engine/arg_utils.py::EngineArgs.create_engine_config (0.4 - 0.33)",
    "vllm/config.py (0.4 - 0.9), vllm/config/__init__.py (0.10), vllm/config/{model,cache,scheduler,parallel}.py "
    "(0.11+): ModelConfig._get_and_verify_max_len, _get_and_verify_dtype, verify_with_parallel_config, "
    "CacheConfig._verify_args / Field(gt=0, le=1), SchedulerConfig._verify_args",
    "vllm/worker/worker.py::init_device (V0), vllm/v1/worker/gpu_worker.py::init_device (V1): "
    "requested memory = total x gpu_memory_utilization",
    "VllmConfig.__post_init__ (vllm/config.py 0.9.2 - 0.10.0, vllm/config/vllm.py 0.12+): whether the hybrid KV cache "
    "manager runs (a KV connector, KV events, chunked local attention; SupportsHMA connectors from 0.22), "
    "vramlint.versions.hybrid_kv_cache_manager",
    "vllm/model_executor/model_loader.py (0.2.0 - 0.2.4), vllm/model_executor/models/__init__.py (0.2.5 - 0.6.0), "
    "vllm/model_executor/models/registry.py (0.6.1+): the architectures the release runs "
    "(vramlint/data/vllm_architectures.json, tools/gen_vllm_architectures.py)",
)

KV_DTYPES = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "bfloat16", "float16")
# Minimum compute capability per quantization method (get_min_capability() in
# model_executor/layers/quantization/*.py).
QUANT_MIN_CAPABILITY = {
    "awq": 75, "awq_marlin": 80, "gptq": 60, "gptq_marlin": 80, "marlin": 80, "gptq_marlin_24": 80,
    "fp8": 80, "fbgemm_fp8": 80, "modelopt": 89, "bitsandbytes": 70, "compressed-tensors": 70, "gguf": 60,
    "experts_int8": 80, "mxfp4": 80, "squeezellm": 70, "aqlm": 60, "deepspeedfp": 80, "hqq": 80,
    "modelopt_mixed": 89,
}
# Kernels that only take fp16 activations (E15).
FP16_ONLY_QUANT = ("awq", "gptq")
# Methods whose kernels need a quantized checkpoint: vLLM's ``get_quant_config`` looks for their config file
# (quantize_config.json / quant_config.json) and raises when a plain checkpoint has none.
CHECKPOINT_ONLY_QUANT = ("awq", "gptq", "awq_marlin", "gptq_marlin", "marlin", "gptq_marlin_24")


@dataclass(kw_only=True)
class Configuration(StageResult):
    """The resolved configuration of one engine: what every later stage reads."""

    model: ModelInfo
    gpu: GpuSpec
    args: dict
    env: dict
    version: str
    key: versions.VersionKey
    beh: versions.Behavior  # the release's engine, defaults and profiler (vramlint.versions.behavior)
    image: str | None
    tp: int
    pp: int
    pp_partition: list[int]  # decoder layers of each pipeline stage (get_pp_indices)
    dp: int
    ep_size: int  # expert-parallel ranks (0: experts split by tensor parallel)
    max_model_len: int
    auto_fit: bool  # --max-model-len auto / -1: vLLM fits the length to the KV cache
    util: float
    dtype: str
    dtype_bytes: int
    kv_dtype_bytes: int
    max_num_seqs: int
    max_num_batched_tokens: int
    total_bytes: float
    requested: float  # total x gpu_memory_utilization, what the worker asks for
    kv_dtype: str = "auto"  # the resolved --kv-cache-dtype (auto: the model dtype)
    # "cold": the first start, nothing compiled yet; "warm": the caller knows VLLM_CACHE_ROOT holds this
    # configuration's compiled graphs (nothing in a manifest says so)
    compile_cache: str = "cold"


def resolve_configuration(model: ModelInfo, gpu: GpuSpec, args: dict, env: dict, version: str, gpus: int,
                          image: str | None = None, compile_cache: str = "cold") -> Configuration:
    """Stage 1: the engine's configuration as vLLM resolves it (see the module docstring), with its refusals."""
    args = dict(args or {})
    env = dict(env or {})
    key = versions.parse_version(version) or versions.parse_version(versions.DEFAULT_VERSION)
    src: dict[str, str] = {}
    notes: list[str] = []
    errors: list[dict] = []

    tp = int_arg(args, "tensor_parallel_size") or 1
    pp = int_arg(args, "pipeline_parallel_size") or 1
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
        errors.extend(model_refusals(model, args, env, version))
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
    if truthy(args.get("disable_sliding_window")) and model.sliding_window and max_model_len > model.sliding_window:
        max_model_len = model.sliding_window
        src["max_model_len"] = "capped to the sliding window by --disable-sliding-window"

    beh = versions.behavior(version, gpu, args, env, model, max_model_len)
    errors.extend(beh.errors)
    notes.extend(beh.notes)
    src.update({k: v for k, v in beh.sources.items() if k not in src})
    src.setdefault("engine", beh.engine_reason)

    # ---- utilisation
    util_arg = args.get("gpu_memory_utilization")
    if isinstance(util_arg, str) and util_arg.strip() == "None" and versions.at_least(key, 0, 34):
        util_arg = None  # Field(default=None) from 0.34, and the parser takes "None" for it (optional)
    try:
        util = float(util_arg) if util_arg is not None else beh.gpu_memory_utilization
    except (TypeError, ValueError):
        util = beh.gpu_memory_utilization
        notes.append(f"--gpu-memory-utilization {util_arg!r} is not a number; the default was assumed")
    src.setdefault("gpu_memory_utilization", "--gpu-memory-utilization" if util_arg is not None else (
        f"default for vLLM {version}" + (" with the extensible KV cache (sized from measured memory: "
                                          "resolved_gpu_memory_utilization)" if beh.extensible_kv_cache else "")))
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

    offload = args.get("cpu_offload_gb")
    try:
        offload_gb = float(offload) if offload is not None else 0.0
    except (TypeError, ValueError):
        offload_gb = 0.0
    if not math.isfinite(offload_gb):
        # argparse's float() takes "inf" and "nan"; vLLM then refuses a nan (pydantic's ge=0 from 0.11, int(nan)
        # before) and turns an infinity into bytes with int(), which raises, while the engine starts
        errors.append({"code": "cpu-offload-not-finite", "arg": "cpu_offload_gb",
                       "message": f"--cpu-offload-gb {offload} is not a finite number of GiB: vLLM cannot turn it into "
                       "the byte count of its CPU offload (OverflowError: cannot convert float infinity to integer, "
                       "or a validation error for nan) and stops while the engine starts"})
    errors.extend(_offload_config_errors(args, key))
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
    mismatch = _quantization_mismatch(model, args, version) if versions.at_least(key, 0, 4, 3) else None
    if mismatch is not None:
        # ModelConfig raises it while the engine's configuration is built, before the GPU is looked at
        errors.insert(0, mismatch)
    quant_errors, quant_notes = _quantization_checks(model, args, gpu, key, dtype)
    errors.extend(quant_errors)
    notes.extend(quant_notes)

    # ---- the architecture vs the release's model registry: from 0.6.3 ModelConfig inspects it (is_multimodal_model
    # -> inspect_model_cls) before anything looks at a device; earlier releases meet it in get_model, after the
    # worker's dtype check (Worker.init_model / init_device)
    arch_refusal = architecture_refusal(model, version, image)
    if arch_refusal is not None:
        if arch_refusal.pop("certain"):
            arch_refusal.pop("why")
            errors.insert(0 if versions.at_least(key, 0, 6, 3) else len(errors), arch_refusal)
        else:
            notes.append(f"{arch_refusal['message']}: {arch_refusal.pop('why')}")

    # ---- KV dtype
    kv_dtype = str(arg_or(args, "kv_cache_dtype", "auto")).lower()
    if kv_dtype not in KV_DTYPES:
        errors.append({"code": "kv-cache-dtype", "message": f"Unknown kv cache dtype: {kv_dtype}", "arg": "kv_cache_dtype"})
        kv_dtype = "auto"
    checkpoint_kv = checkpoint_kv_cache_dtype(model, key) if kv_dtype == "auto" else None
    if checkpoint_kv == "fp8_e4m3":
        kv_dtype = checkpoint_kv
        src.setdefault("kv_cache_dtype", "auto: fp8_e4m3, the ModelOpt checkpoint's kv_cache_quant_algo (vLLM 0.14+ "
                       "resolves auto from it, engine/arg_utils.py create_engine_config)")
    elif checkpoint_kv:
        notes.append(f"the checkpoint asks for a {checkpoint_kv} KV cache (ModelOpt kv_cache_quant_algo), which vLLM "
                     "uses for --kv-cache-dtype auto; its size is not modelled: the KV cache is sized in the model dtype")
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

    partition, partition_error = pp_partition(model.num_layers, pp, key, env)
    if partition_error:
        errors.append(partition_error)
    if pp > 1:
        src["pipeline_parallel_size"] = (f"--pipeline-parallel-size: decoder layers per stage "
                                         f"{per_stage_text([str(n) for n in partition])} (get_pp_indices"
                                         + (", VLLM_PP_LAYER_PARTITION)" if env.get("VLLM_PP_LAYER_PARTITION") else ")"))
    total_bytes = gpu.total_gib * GiB
    dp = int_arg(args, "data_parallel_size") or 1
    ep_size = dp * tp if truthy(args.get("enable_expert_parallel")) and model.num_experts else 0
    return Configuration(
        model=model, gpu=gpu, args=args, env=env, version=version, key=key, beh=beh, image=image, tp=tp, pp=pp,
        pp_partition=partition, dp=dp, ep_size=ep_size, max_model_len=max_model_len, auto_fit=auto_fit, util=util, dtype=dtype,
        dtype_bytes=dtype_bytes, kv_dtype_bytes=kv_dtype_bytes, max_num_seqs=max_num_seqs,
        max_num_batched_tokens=mnbt, total_bytes=total_bytes, requested=total_bytes * util, kv_dtype=kv_dtype,
        compile_cache=compile_cache, errors=errors, notes=notes, sources=src)


def pp_partition(num_layers: int, pp: int, key: versions.VersionKey, env: dict) -> tuple[list[int], dict | None]:
    """The decoder layers of each pipeline stage, and vLLM's error for a ``VLLM_PP_LAYER_PARTITION`` it refuses.

    ``get_pp_indices`` (vllm/distributed/utils.py): ``VLLM_PP_LAYER_PARTITION`` ("15,16,16,15") when set; else
    ``num_layers // pp`` each, the remainder on the last stage up to 0.7 and, from 0.8 (vLLM PR #13839), one
    more layer on each stage from the last but one backwards (the first and the last stage hold the
    embeddings and the LM head).
    """
    pp = max(1, pp)
    text = env.get("VLLM_PP_LAYER_PARTITION")
    if text is not None:
        try:
            given = [int(x) for x in str(text).split(",")]
        except ValueError:
            given = None
        error = None
        if given is None:
            error = f"Invalid partition string: {text}"
        elif len(given) != pp:
            error = f"len(partitions)={len(given)} does not match pp_size={pp}."
        elif sum(given) != num_layers:
            error = f"sum(partitions)={sum(given)} does not match num_hidden_layers={num_layers}."
        if error is None:
            return given, None
        return _even_partition(num_layers, pp, key), {"code": "pp-layer-partition", "message": error, "arg": None}
    return _even_partition(num_layers, pp, key), None


def _even_partition(num_layers: int, pp: int, key: versions.VersionKey) -> list[int]:
    partitions = [num_layers // pp] * pp
    remaining = num_layers % pp
    if not versions.at_least(key, 0, 8):
        partitions[-1] += remaining
        return partitions
    for i in range(2, remaining + 2):
        partitions[-i] += 1
    return partitions


def checkpoint_kv_cache_dtype(model: ModelInfo, key: versions.VersionKey) -> str | None:
    """The KV cache dtype vLLM takes from the checkpoint for ``--kv-cache-dtype auto``: a ModelOpt checkpoint's
    ``kv_cache_quant_algo`` / ``kv_cache_scheme`` (``resolve_kv_cache_dtype_string``, called by
    ``EngineArgs.create_engine_config`` before the CacheConfig is built: in 0.14.0 and 0.26.0, not in 0.13.0,
    vllm-project/vllm#30785). Before 0.14 auto meant the model dtype whatever the checkpoint said."""
    if not versions.at_least(key, 0, 14):
        return None
    quant = (model.extra.get("facts") or {}).get("quant") or {}
    if not str(quant.get("method") or "").startswith("modelopt"):
        return None
    return quant.get("kv_cache")


def model_dtype(model: ModelInfo, args: dict, gpu: GpuSpec, key: versions.VersionKey) -> tuple[str, list[dict], list[str]]:
    """(dtype vLLM runs the model in, errors, notes): --dtype, else the checkpoint's (float32 -> fp16)."""
    errors: list[dict] = []
    notes: list[str] = []
    requested = str(arg_or(args, "dtype", "auto")).lower()
    ckpt = (model.torch_dtype or "bfloat16").lower()
    aliases = {"half": "float16", "fp16": "float16", "bf16": "bfloat16", "float": "float32", "fp32": "float32"}
    requested = aliases.get(requested, requested)
    if requested == "auto":
        dtype = "float16" if ckpt == "float32" else ckpt
        if dtype == "bfloat16" and not gpu.bf16:
            if versions.at_least(key, 0, 9):
                notes.append(
                    f"Your device '{device_name(gpu)}' (with compute capability {cc_text(gpu)}) doesn't support "
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


def _bf16_error(gpu: GpuSpec, key: versions.VersionKey) -> dict:
    # Worker._check_if_gpu_supports_dtype: 0.2.x ends after the compute capability; 0.3 - 0.6.x add the float16
    # advice without a space before `dtype` (read in the 0.2.7, 0.3.0, 0.4.x, 0.5.0 and 0.6.0 wheels)
    message = (f"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {device_name(gpu)} "
               f"GPU has compute capability {cc_text(gpu)}.")
    if versions.at_least(key, 0, 3):
        setting = "setting the`dtype` flag" if not versions.at_least(key, 0, 7) else "setting the `dtype` flag"
        message += f" You can use float16 instead by explicitly {setting} in CLI, for example: --dtype=half."
    return {"code": "bf16-unsupported", "message": message, "arg": "dtype"}


def architecture_refusal(model: ModelInfo, version: str, image: str | None = None) -> dict | None:
    """The release's refusal of a checkpoint whose architecture its model registry lacks (vLLM's
    ``ModelRegistry``, release by release in vramlint/data/vllm_architectures.json); certain only where nothing
    but the registry can run it (:mod:`vramlint.vllm_architectures`)."""
    if not model.architecture:
        return None
    from vramlint.vllm_architectures import refusal

    return refusal(model.architecture, version, image)


def _compute_capability_error(gpu: GpuSpec, key: versions.VersionKey, version: str) -> dict | None:
    """The start-up failure of a GPU older than every architecture the release's CUDA kernels are built for.

    The kernels of the official build (wheel and image) are cubins for a list of architectures
    (:func:`vramlint.versions.min_compute_capability`); on an older GPU the first launch of a vLLM kernel raises
    CUDA's "no kernel image" error. The PyTorch each release pins has the same floor (torch 2.10 is built for
    sm_70 and up, torch 2.11, which 0.20 pins, for sm_75 and up).
    """
    if gpu.vendor != "nvidia":
        return None  # the floor is of the CUDA build; the ROCm build is compiled for gfx90a / gfx942 / gfx950
    floor = versions.min_compute_capability(key)
    cc = tuple(gpu.compute_capability)
    if cc >= floor:
        return None
    floor_text = f"{floor[0]}.{floor[1]}"
    if floor > (7, 0) and cc >= (7, 0):
        fix = (f"run it on a GPU of compute capability {floor_text} or newer; vLLM 0.19 is the last release whose "
               f"CUDA kernels are built for compute capability {cc_text(gpu)}")
    else:
        fix = (f"run it on a GPU of compute capability {floor_text} or newer; no official vLLM build has CUDA "
               f"kernels for compute capability {cc_text(gpu)}")
    return {
        "code": "compute-capability-unsupported",
        "message": (
            "CUDA error: no kernel image is available for execution on the device. The official vLLM "
            f"{version} build has CUDA kernels for compute capability {floor_text} and newer; the "
            f"{device_name(gpu)} has compute capability {cc_text(gpu)}"
        ),
        "arg": None,
        "fix": fix,
        # an older release runs on this GPU: the verdict depends on which version the image really runs
        "version_dependent": cc >= (7, 0),
    }


def model_refusals(model: ModelInfo, args: dict, env: dict, version: str) -> list[dict]:
    """What ModelConfig refuses from the model's config and the arguments alone, on any platform and GPU (its
    `_get_and_verify_max_len` runs before a device is looked at): a --max-model-len above the model's maximum
    without VLLM_ALLOW_LONG_MAX_MODEL_LEN. Checked in the configuration stage, and on its own for a server whose
    memory is not sized (an accelerator vramlint does not model, vLLM's CPU backend)."""
    key = versions.parse_version(version) or versions.parse_version(versions.DEFAULT_VERSION)
    derived = model.max_position_embeddings or 2048
    user_len = parse_len((args or {}).get("max_model_len"))
    if user_len is None or user_len <= derived or truthy((env or {}).get("VLLM_ALLOW_LONG_MAX_MODEL_LEN")):
        return []
    return [_long_len_error(key, user_len, model, derived)]


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


# The --quantization values that end ModelConfig._verify_quantization without its mismatch error on a checkpoint of
# each method: the method itself and those whose QuantizationConfig.override_quantization_method claims such a
# checkpoint for that flag (GPTQMarlin / GPTQMarlin24 / Marlin / BitBLAS / GPTQBitBLAS / IPEX / MoeWNA16 /
# AutoGPTQ, AWQMarlin / IPEX / CPUAWQ / MoeWNA16 / AutoAWQ, Humming for any checkpoint), the union of the 0.4.3,
# 0.6.3, 0.8.5, 0.10.2, 0.19.0, 0.28.0 and 0.34.0 wheels. Checkpoints of methods not listed (ModelOpt, whose
# config vLLM may read from hf_quant_config.json, MXFP4, auto-round...) are not checked.
QUANT_FLAGS_FOR_CHECKPOINT = {
    "gptq": {"gptq", "gptq_marlin", "gptq_marlin_24", "marlin", "marlin_24", "gptq_bitblas", "bitblas", "ipex",
             "moe_wna16", "auto_gptq", "humming"},
    "awq": {"awq", "awq_marlin", "marlin", "ipex", "cpu_awq", "moe_wna16", "auto_awq", "humming"},
    "fp8": {"fp8", "deepseek_v4_fp8", "humming"},
    "compressed-tensors": {"compressed-tensors", "humming"},
    "bitsandbytes": {"bitsandbytes", "humming"},
    "gguf": {"gguf", "humming"},
}


def _quantization_mismatch(model: ModelInfo, args: dict, version: str) -> dict | None:
    """``ModelConfig._verify_quantization``: a ``--quantization`` that no override maps the checkpoint's
    ``quantization_config.quant_method`` to raises "Quantization method specified in the model config (X) does not
    match ...", the same sentence in every release read. A method the release does not have at all is the
    argument check's (vramlint.vllm_quantization), not this one."""
    flag = args.get("quantization")
    ckpt = (model.quantization or "").lower()
    if not isinstance(flag, str) or not flag or ckpt not in QUANT_FLAGS_FOR_CHECKPOINT:
        return None
    from vramlint.vllm_quantization import refusal

    if refusal(flag, version, ("--quantization",)) is not None:
        return None
    flag = flag.lower()
    if flag in QUANT_FLAGS_FOR_CHECKPOINT[ckpt]:
        return None
    return {
        "code": "quantization-mismatch",
        "message": (f"Quantization method specified in the model config ({ckpt}) does not match the quantization "
                    f"method specified in the `quantization` argument ({flag})."),
        "arg": "quantization",
        "short": f"--quantization {flag}, but {model.name} is quantized with {ckpt}",
        "fix": f"remove --quantization (vLLM reads {ckpt} from the checkpoint's quantization_config), or name a "
               f"method that runs {ckpt} checkpoints ({', '.join(sorted(QUANT_FLAGS_FOR_CHECKPOINT[ckpt] - {'humming'}))})",
    }


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
    if effective == "modelopt_mixed" and versions.at_least(key, 0, 24):
        min_cc = 75  # ModelOptMixedPrecisionConfig: Marlin W4A16 experts and Marlin FP8 dense layers from 0.24
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


def _offload_config_errors(args: dict, key) -> list[dict]:
    """What ``OffloadConfig.validate_offload_config`` (vllm/config/offload.py, 0.17.1 - 0.34.0) refuses: with the
    prefetch offloader (``--offload-backend prefetch`` or ``--offload-group-size`` > 0), more layers per group
    than the group holds, or a prefetch step below 1."""
    if key is None or not versions.at_least(key, 0, 17):
        return []

    def as_int(name: str, default: int) -> int | None:
        value = args.get(name)
        if value is None or str(value).strip() == "":
            return default
        try:
            return int(value)
        except (TypeError, ValueError):
            return None  # not a number: argparse refuses it (said by the argument checks)

    group = as_int("offload_group_size", 0)
    in_group = as_int("offload_num_in_group", 1)
    step = as_int("offload_prefetch_step", 1)
    backend = str(args.get("offload_backend") or "auto").strip().lower()
    if group is None or in_group is None or step is None or not (backend == "prefetch" or group > 0):
        return []
    if in_group > group:
        return [{"code": "offload-config-invalid", "arg": "offload_num_in_group",
                 "message": f"offload_num_in_group ({in_group}) must be <= offload_group_size ({group}): vLLM's "
                            "OffloadConfig refuses the prefetch offloader's settings and the server does not start"}]
    if step < 1:
        return [{"code": "offload-config-invalid", "arg": "offload_prefetch_step",
                 "message": f"offload_prefetch_step ({step}) must be >= 1 when prefetch offloading is enabled "
                            f"(offload_group_size > 0): vLLM's OffloadConfig refuses it and the server does not "
                            "start"}]
    return []
