"""Read a Hugging Face ``config.json`` into the architecture facts the budget needs.

Two steps, so the embedded catalog and a live config.json go through the same code:

``facts_from_config(cfg)``  config.json (any family, multimodal wrappers unwrapped) -> compact *facts* dict
``model_info_from_facts(facts, name, source)``  facts -> ``ModelInfo``

The facts dict is vramlint's own compact schema (the catalog stores it). Keys:

    arch, type           architectures[0], model_type of the text config
    layers hidden heads kv_heads head_dim vocab inter
    max_pos, max_pos_key the smallest of vLLM's length keys and which key it was (before RoPE scaling)
    model_max_length     config.json ``model_max_length`` (Cohere style; overrides the min in vLLM)
    rope                 {"type", "factor", "orig"} when rope_scaling is set
    dtype, tie           torch_dtype, tie_word_embeddings
    attn_bias, qk_norm   q/k/v projection biases (Qwen2, gpt-oss), per-head q/k RMSNorm (Qwen3, Gemma 3)
    mlp                  "glu" (gate+up+down) or "mlp" (up+down: GPT-2, OPT, Nemotron-H relu2)
    mlp_bias             biases on the gated MLP's projections (LlamaConfig ``mlp_bias``: Granite Code)
    pattern              one letter per layer: F full attention, S sliding window, C chunked local attention,
                         M mamba, L linear attention (gated deltanet), - MLP-only (no token mixer), E MoE-only
    sliding_window, attention_chunk_size
    moe                  {"experts", "top_k", "inter", "shared", "shared_inter", "dense_layers": [i, ...],
                          "dense_inter"}
    mla                  {"kv_lora_rank", "q_lora_rank", "qk_rope", "qk_nope", "v_head"}
    mamba                {"d_state", "d_conv", "inner", "n_groups", "n_heads", "head_dim", "version"}
    linear               {"k_heads", "k_dim", "v_heads", "v_dim", "conv"}  (gated deltanet)
    quant                {"method", "bits", "group", "format", "skip": [...], "zero_point", "block"}
    vision               {"hidden", "inter", "layers", "patch", "channels", "image"} of a vision tower
                         ("spatial_merge": patches merged into one token, Qwen2-VL, Qwen2.5-VL and Mistral 3;
                         "style": "qwen2_vl" / "qwen2_5_vl" / "gemma4" where the tower's layout differs); Qwen3-VL /
                         Qwen3.5 towers also {"temporal", "positions", "merge", "deepstack", "out"} (3-D patch
                         embedding, learned positions, 2x2 patch merger to the text width, deepstack mergers)
    indexer              {"heads", "head_dim"} of the DeepSeek sparse-attention lightning indexer (DeepSeek-V3.2,
                         GLM-5): its own fp8 key cache next to the MLA cache; with IndexCache also "topk_freq",
                         "skip_topk_offset" or "topk_pattern" (the layers that build one, GLM-5.2)
    mtp_layers           extra next-token-prediction layers shipped in the checkpoint (DeepSeek-V3;
                         Qwen3.5's ``mtp_num_hidden_layers``, then with ``mtp_style`` "qwen3_5": one shared ``fc``
                         split over TP and full-attention decoder layers, Qwen3_5MultiTokenPredictor)
    eagle                {"version": 1 | 3, "draft_vocab", "target_hidden"} of an EAGLE / EAGLE-3 draft head
                         (architectures naming Eagle, or ``draft_vocab_size`` / ``speculators_model_type``)
    medusa               {"heads", "layers", "truncated_vocab", "original_lm_head", "bias"} of a Medusa head
    full_attn            {"head_dim", "kv_heads", "k_eq_v"}: the full-attention layers' own shape when it differs
                         from the other layers' (Gemma 4: ``global_head_dim``, ``num_global_key_value_heads``;
                         ``k_eq_v`` when their checkpoint has no v_proj and V is a copy of K)
    moe.parallel_mlp_inter  a dense GLU MLP of this width next to the experts in every MoE layer (Gemma 4)
    moe.latent           the routed experts' own width (``moe_latent_size``, Nemotron 3 Super): each MoE layer
                         projects the hidden state down to it before the experts and back up after them
"""

from __future__ import annotations

import math
from typing import Any

from vramlint.model import ModelInfo
from vramlint.versions import at_least, parse_version

# The keys vLLM's ``_get_and_verify_max_len`` takes the minimum over (vllm/config/__init__.py, 0.10.2).
MAX_LEN_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)

LAYER_LETTERS = {
    "F": "full_attention",
    "S": "sliding_attention",
    "C": "chunked_attention",
    "M": "mamba",
    "L": "linear_attention",
    "-": "mlp_only",
    "E": "moe_only",
}
_LETTER_OF = {v: k for k, v in LAYER_LETTERS.items()}
_LETTER_OF.update({"attention": "F", "linear": "L", "hybrid": "F"})
# NemotronHConfig's layers_block_type (transformers 5.25 configuration_nemotron_h.py, which saves it in place of
# hybrid_override_pattern): "linear_attention" is its Mamba-2 mixer there, and the legacy names "mamba" / "attention"
# are remapped to the new ones (configuration_utils._LEGACY_LAYER_TYPE_REMAP); vLLM 0.34's nemotron_h.py builds one
# decoder layer per letter of the hybrid_override_pattern the config derives from the list (M, *, E, -)
_NEMOTRON_H_LETTER = {"mamba": "M", "linear_attention": "M", "attention": "F", "full_attention": "F", "moe": "E",
                      "mlp": "-"}

# transformer_layer_config: the decoder layer of a speculators-format EAGLE head (vLLM SpeculatorsConfig)
_NESTED_TEXT_KEYS = ("text_config", "llm_config", "language_config", "thinker_config", "transformer_layer_config")

MLA_MODEL_TYPES = {
    "deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_mtp", "kimi_k2", "kimi_linear",
    "longcat_flash", "pangu_ultra_moe", "glm_moe_dsa",
}


def text_config(cfg: dict) -> dict:
    """The language model's part of a config: the nested text config of multimodal wrappers, with the
    top-level keys that wrappers keep outside it (dtype, quantization, tie) filled in."""
    inner = None
    for key in _NESTED_TEXT_KEYS:
        sub = cfg.get(key)
        if isinstance(sub, dict) and sub:
            inner = sub
            break
    if inner is None:
        return cfg
    if "thinker_config" in cfg and isinstance(inner.get("text_config"), dict):
        inner = inner["text_config"]
    merged = dict(inner)
    for key in ("torch_dtype", "dtype", "quantization_config", "tie_word_embeddings"):
        if key not in merged and key in cfg:
            merged[key] = cfg[key]
    if "architectures" not in merged and "architectures" in cfg:
        merged["architectures"] = cfg["architectures"]
        merged["_wrapper_architecture"] = True
    return merged


# No size in a model config comes near this (int64, the largest integer safetensors, torch and JSON readers in
# other languages hold); a larger one is a broken or hostile file, not a model.
MAX_CONFIG_INT = 2**63


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)) and math.isfinite(value) and abs(value) < MAX_CONFIG_INT:
        return int(value)
    return None


def _first(cfg: dict, *keys: str) -> Any:
    for key in keys:
        value = cfg.get(key)
        if value is not None:
            return value
    return None


def _dtype(cfg: dict) -> str | None:
    value = _first(cfg, "torch_dtype", "dtype")
    if isinstance(value, str):
        value = value.replace("torch.", "")
        return {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32",
                "float": "float32"}.get(value, value)
    return None


def _num_kv_heads(cfg: dict, heads: int) -> int:
    # Same order as vLLM's ModelConfig.get_total_num_kv_heads.
    if cfg.get("multi_query") and cfg.get("model_type") in ("falcon", "RefinedWeb", "RefinedWebModel", "gpt_bigcode"):
        return 1
    if cfg.get("multi_query") and not cfg.get("new_decoder_architecture"):
        return 1
    attn_config = cfg.get("attn_config")
    if isinstance(attn_config, dict) and attn_config.get("kv_n_heads"):
        return int(attn_config["kv_n_heads"])
    value = _first(cfg, "n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num")
    return _int(value) or heads


def _rope(cfg: dict) -> dict | None:
    scaling = cfg.get("rope_scaling")
    if not isinstance(scaling, dict):
        params = cfg.get("rope_parameters")  # transformers 5 spelling
        scaling = params if isinstance(params, dict) and params.get("rope_type") not in (None, "default") else None
    if not scaling:
        return None
    rope_type = scaling.get("rope_type") or scaling.get("type")
    if rope_type == "su":
        rope_type = "longrope"
    if rope_type == "mrope":
        rope_type = "default"  # vLLM's patch_rope_scaling: mrope carries no length factor
    out: dict[str, Any] = {"type": rope_type}
    if scaling.get("factor") is not None:
        out["factor"] = float(scaling["factor"])
    orig = _int(scaling.get("original_max_position_embeddings"))
    if orig:
        out["orig"] = orig
    return out


def _max_pos(cfg: dict) -> tuple[int | None, str | None]:
    best: int | None = None
    best_key: str | None = None
    for key in MAX_LEN_KEYS:
        value = _int(cfg.get(key))
        if value is not None and (best is None or value < best):
            best, best_key = value, key
    if _int(cfg.get("model_max_length")):
        best, best_key = _int(cfg["model_max_length"]), "model_max_length"
    return best, best_key


def _nemotron_h_types(cfg: dict) -> list | None:
    """The per-layer kinds of a NemotronHConfig saved by transformers 5 (``layer_types`` is its attribute alias);
    None for the configs that give only hybrid_override_pattern."""
    for key in ("layers_block_type", "layer_types"):
        value = cfg.get(key)
        if isinstance(value, list) and value:
            return value
    return None


def _pattern(cfg: dict, layers: int, model_type: str) -> str | None:
    """Per-layer kinds as one letter each, or None when every layer is plain full attention."""
    layer_types = cfg.get("layer_types")
    hybrid_layers = _mimo_v2_layers(cfg, layers)
    if hybrid_layers:
        return hybrid_layers
    if model_type == "nemotron_h" and _nemotron_h_types(cfg):
        return "".join(_NEMOTRON_H_LETTER.get(str(t), "F") for t in _nemotron_h_types(cfg))
    if isinstance(layer_types, list) and layer_types:
        letters = "".join(_LETTER_OF.get(str(t), "F") for t in layer_types)
        return None if set(letters) == {"F"} else letters
    hybrid = cfg.get("hybrid_override_pattern")
    if isinstance(hybrid, str) and hybrid:
        return "".join({"M": "M", "*": "F", "-": "-", "E": "E"}.get(ch, "F") for ch in hybrid)
    layers_block_type = cfg.get("layers_block_type")  # Zamba/Granite-4 style
    if isinstance(layers_block_type, list) and layers_block_type:
        return "".join("M" if t == "mamba" else "F" for t in layers_block_type)
    if cfg.get("full_attention_interval") and (cfg.get("linear_num_value_heads") or cfg.get("linear_key_head_dim")):
        interval = int(cfg["full_attention_interval"])
        return "".join("F" if (i + 1) % interval == 0 else "L" for i in range(layers))
    if cfg.get("attn_layer_period") and (model_type == "jamba" or cfg.get("mamba_d_state")):
        period, offset = int(cfg["attn_layer_period"]), int(cfg.get("attn_layer_offset", 0))
        return "".join("F" if i % period == offset else "M" for i in range(layers))
    window = _int(cfg.get("sliding_window"))
    if model_type == "llama4_text" and cfg.get("attention_chunk_size"):
        no_rope = cfg.get("no_rope_layers")
        if isinstance(no_rope, list) and len(no_rope) == layers:
            # no_rope_layers[i] == 1 means the layer uses RoPE, and RoPE layers use chunked attention.
            return "".join("C" if flag else "F" for flag in no_rope)
        return "".join("F" if (i + 1) % 4 == 0 else "C" for i in range(layers))
    if not window:
        return None
    if model_type in ("gemma2", "cohere2_text_placeholder"):
        return "".join("S" if i % 2 == 0 else "F" for i in range(layers))
    if model_type.startswith("gemma3") or model_type == "cohere2":
        every = _int(_first(cfg, "sliding_window_pattern", "_sliding_window_pattern")) or (4 if model_type == "cohere2" else 6)
        return "".join("F" if (i + 1) % every == 0 else "S" for i in range(layers))
    if model_type in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen2_5_vl_text", "qwen2_vl_text", "qwen2_vl",
                      "qwen2_5_vl", "mimo"):
        if not cfg.get("use_sliding_window"):
            return None
        first_sliding = _int(cfg.get("max_window_layers"))
        first_sliding = layers if first_sliding is None else first_sliding
        letters = "".join("S" if i >= first_sliding else "F" for i in range(layers))
        return None if set(letters) == {"F"} else letters
    if model_type in ("mistral", "mixtral", "phi3", "starcoder2", "gemma", "qwen"):
        if model_type == "phi3" and window >= (_int(cfg.get("max_position_embeddings")) or 0):
            return None  # Phi-3 configs set the window to the full context: no effect
        return "S" * layers
    return "S" * layers


def _mimo_v2_layers(cfg: dict, layers: int) -> str | None:
    """MiMo-V2's per-layer attention kinds: ``hybrid_layer_pattern[i] == 1`` is a sliding-window layer
    (MiMoV2FlashDecoderLayer.is_compressed_softmax_layer, vllm/model_executor/models/mimo_v2_flash.py 0.14 - 0.19,
    mimo_v2.py 0.20 - 0.34), 0 full attention; None for configs without the list."""
    pattern = cfg.get("hybrid_layer_pattern")
    if not isinstance(pattern, list) or not pattern or not layers:
        return None
    letters = "".join("S" if _int(flag) == 1 else "F" for flag in pattern[:layers])
    return letters + "F" * (layers - len(letters))


def _mimo_v2_attention(tc: dict, facts: dict) -> None:
    """MiMo-V2-Flash's two attention shapes (vLLM MiMoV2FlashDecoderLayer): sliding-window layers take
    ``swa_num_attention_heads`` / ``swa_num_key_value_heads`` / ``swa_head_dim`` / ``swa_v_head_dim`` and the
    full-attention layers the plain keys; both have a V head (``v_head_dim``) narrower than the QK head, which
    vLLM's Attention gets as ``head_size_v`` from 0.20 (AttentionSpec pages hold heads x (head_size + head_size_v)
    per token; 0.14 - 0.19 padded V to the QK head: vramlint/budget/kv_layout.py).
    The facts' own heads are the sliding layers' and ``full_attn`` the full layers' (as for Gemma 4)."""
    pattern = facts.get("pattern") or ""
    full = {"heads": _int(tc.get("num_attention_heads")) or facts["heads"],
            "kv_heads": _int(tc.get("num_key_value_heads")) or facts["kv_heads"],
            "head_dim": _int(tc.get("head_dim")) or facts["head_dim"], "k_eq_v": False}
    full["v_head_dim"] = _int(tc.get("v_head_dim")) or full["head_dim"]
    if "S" not in pattern:
        facts.update(heads=full["heads"], kv_heads=full["kv_heads"], head_dim=full["head_dim"])
        if full["v_head_dim"] != full["head_dim"]:
            facts["v_head_dim"] = full["v_head_dim"]
        return
    facts["heads"] = _int(tc.get("swa_num_attention_heads")) or full["heads"]
    facts["kv_heads"] = _int(tc.get("swa_num_key_value_heads")) or full["kv_heads"]
    facts["head_dim"] = _int(tc.get("swa_head_dim")) or full["head_dim"]
    v_head = _int(tc.get("swa_v_head_dim")) or facts["head_dim"]
    if v_head != facts["head_dim"]:
        facts["v_head_dim"] = v_head
    window = _int(tc.get("sliding_window_size")) or _int(tc.get("sliding_window"))
    if window:
        facts["sliding_window"] = window
    # the attention sink bias (one value per query head) vLLM builds where the config asks for it
    facts["sinks"] = "".join(ch for ch, key in (("S", "add_swa_attention_sink_bias"),
                                                 ("F", "add_full_attention_sink_bias")) if tc.get(key)) or None
    if "F" in pattern and (full["heads"], full["kv_heads"], full["head_dim"], full["v_head_dim"]) != (
            facts["heads"], facts["kv_heads"], facts["head_dim"], v_head):
        facts["full_attn"] = full


def _moe(cfg: dict, layers: int, model_type: str) -> dict | None:
    experts = _int(_first(cfg, "num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts"))
    if not experts or experts <= 1:
        return None
    moe: dict[str, Any] = {"experts": experts}
    top_k = _int(_first(cfg, "num_experts_per_tok", "experts_per_token", "moe_topk", "top_k", "top_k_experts"))
    if top_k:
        moe["top_k"] = top_k
    inter = _int(_first(cfg, "moe_intermediate_size", "expert_intermediate_size"))
    moe["inter"] = inter or _int(cfg.get("intermediate_size"))
    shared = _int(_first(cfg, "n_shared_experts", "num_shared_experts"))
    shared_inter = _int(_first(cfg, "shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"))
    if model_type.startswith("llama4"):
        shared, shared_inter = 1, _int(cfg.get("intermediate_size"))
    if shared_inter and not shared:
        shared = 1
    if shared:
        moe["shared"] = shared
        # shared_inter is the total width of all shared experts (DeepSeek: n_shared x moe_intermediate_size).
        moe["shared_inter"] = shared_inter or (moe["inter"] or 0) * shared
    dense: list[int] = []
    first_dense = _int(cfg.get("first_k_dense_replace"))
    if first_dense:
        dense.extend(range(first_dense))
    step = _int(_first(cfg, "decoder_sparse_step", "interleave_moe_layer_step", "moe_layer_freq", "expert_layer_period"))
    offset = _int(cfg.get("expert_layer_offset")) or 0
    if model_type.startswith("llama4") and step and step > 1:
        dense.extend(i for i in range(layers) if (i + 1) % step != 0)
    elif step and step > 1 and "expert_layer_period" in cfg:
        dense.extend(i for i in range(layers) if i % step != offset)
    elif step and step > 1 and model_type not in ("deepseek_v2", "deepseek_v3", "kimi_k2"):
        dense.extend(i for i in range(layers) if (i + 1) % step != 0)
    latent = _int(cfg.get("moe_latent_size"))
    if latent:
        moe["latent"] = latent
    if model_type == "gemma4_text" and _int(cfg.get("intermediate_size")):
        # Gemma4DecoderLayer: the dense MLP runs in every layer and the experts are added next to it
        moe["parallel_mlp_inter"] = _int(cfg["intermediate_size"])
    freq = cfg.get("moe_layer_freq")
    if isinstance(freq, list) and freq:
        # MiMo-V2 (MiMoV2FlashDecoderLayer.is_moe_layer) and MiniMax-M3: a dense MLP where the list has 0
        dense.extend(i for i in range(layers) if i >= len(freq) or not freq[i])
    mlp_only = cfg.get("mlp_only_layers")
    if isinstance(mlp_only, list):
        dense.extend(int(i) for i in mlp_only)
    dense = sorted(set(i for i in dense if 0 <= i < layers))
    if dense:
        moe["dense_layers"] = dense
        moe["dense_inter"] = _int(_first(cfg, "intermediate_size_mlp", "intermediate_size"))
    return moe


def _quant(cfg: dict, hf_quant_config: dict | None = None, num_layers: int = 0) -> dict | None:
    qc = cfg.get("quantization_config") or cfg.get("compression_config")
    if not isinstance(qc, dict) and isinstance(hf_quant_config, dict):
        qc = {"quant_method": "modelopt", **(hf_quant_config.get("quantization") or hf_quant_config)}
    if not isinstance(qc, dict):
        return None
    method = str(qc.get("quant_method") or "").lower()
    if not method and qc.get("quant_algo"):
        method = "modelopt"
    if not method and (qc.get("load_in_4bit") or qc.get("load_in_8bit")):
        method = "bitsandbytes"
    out: dict[str, Any] = {"method": method or "unknown"}
    skip = _first(qc, "modules_to_not_convert", "ignore", "exclude_modules", "llm_int8_skip_modules",
                  "ignored_layers")
    if isinstance(skip, list) and skip:
        # Keep the patterns short: a module skipped in every layer (router gates, all attention) is folded into
        # one wildcard; one skipped in a few layers only (the first and last MLPs of Meta's FP8 checkpoints) is
        # kept with its layer index, so the weights count those layers in the model dtype.
        layers_of: dict[str, set[str]] = {}
        for entry in skip:
            text = str(entry)
            layers_of.setdefault(_fold_layer_index(text), set()).add(text)
        kept: set[str] = set()
        for folded, entries in layers_of.items():
            partial = num_layers and "*" in folded and len(entries) < num_layers
            if partial and all(_module_of(e) != e or e.split(".")[-1] in ("self_attn", "mlp") for e in entries):
                kept.update(_module_of(e) for e in entries)
            else:
                kept.add(folded)
        out["skip"] = sorted(kept)
    if method in ("awq", "gptq", "marlin", "gptq_marlin", "awq_marlin", "autoround", "auto-round"):
        out["bits"] = _int(_first(qc, "bits", "w_bit")) or 4
        group = _int(_first(qc, "group_size", "q_group_size"))
        out["group"] = group if group is not None else 128
        if method.startswith("awq"):
            out["zero_point"] = bool(qc.get("zero_point", True))
        elif method.startswith("gptq"):
            out["zero_point"] = True  # GPTQ checkpoints store packed qzeros even when symmetric
    elif method in ("fp8", "fbgemm_fp8", "ptpc_fp8"):
        out["bits"] = 8
        if method == "fbgemm_fp8":
            out["strategy"] = "channel"  # FBGEMMFp8LinearMethod: one fp32 scale per output channel
        block = qc.get("weight_block_size")
        if isinstance(block, list) and len(block) == 2:
            out["block"] = [int(block[0]), int(block[1])]
    elif method == "mxfp4":
        out["bits"] = 4
        out["group"] = 32
    elif method == "bitsandbytes":
        out["bits"] = 4 if qc.get("load_in_4bit") else 8
        if qc.get("bnb_4bit_use_double_quant"):
            out["double_quant"] = True
    elif method == "modelopt" or method.startswith("modelopt"):
        algo = str(qc.get("quant_algo") or "").upper()
        out["format"] = algo.lower() or None
        kv_cache = _modelopt_kv_cache_dtype(qc)
        if kv_cache:
            out["kv_cache"] = kv_cache
        if algo == "MIXED_PRECISION":
            kinds = _mixed_precision_kinds(qc.get("quantized_layers"))
            if kinds:
                out["kinds"] = kinds
        elif "FP4" in algo:
            out["bits"] = 4
            out["group"] = _int(qc.get("group_size")) or 16
        elif "FP8" in algo:
            out["bits"] = 8
        elif "W4A8" in algo or "INT4" in algo:
            out["bits"] = 4
            out["group"] = _int(qc.get("group_size")) or 128
    elif method == "compressed-tensors":
        _compressed_tensors(qc, out)
    elif method in ("gguf",):
        pass
    return out


# vLLM's MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP (vllm/utils/torch_utils.py, 0.14.0 - 0.26.0).
_MODELOPT_KV_CACHE_DTYPES = {"fp8": "fp8_e4m3", "nvfp4": "nvfp4"}


def _modelopt_kv_cache_dtype(qc: dict) -> str | None:
    """The KV cache dtype a ModelOpt checkpoint asks for, as vLLM's ``get_kv_cache_quant_algo_string`` reads it
    (vllm/utils/torch_utils.py, 0.14.0 - 0.26.0): ``kv_cache_scheme`` (a dict: 8-bit static float is fp8, 4-bit
    float nvfp4) before ``kv_cache_quant_algo`` (a string: FP8, NVFP4), from the ``quantization`` block of
    hf_quant_config.json or the quantization_config itself. None when the checkpoint names none, or names one vLLM
    does not know (vLLM then falls back to "auto")."""
    inner = qc.get("quantization") if isinstance(qc.get("quantization"), dict) else qc
    algo = (inner.get("kv_cache_scheme") or qc.get("kv_cache_scheme") or inner.get("kv_cache_quant_algo")
            or qc.get("kv_cache_quant_algo"))
    if isinstance(algo, dict):
        if algo.get("dynamic") is False and algo.get("num_bits") == 8 and algo.get("type") == "float":
            algo = "fp8"
        elif algo.get("num_bits") == 4 and algo.get("type") == "float":
            algo = "nvfp4"
        else:
            return None
    if isinstance(algo, str):
        return _MODELOPT_KV_CACHE_DTYPES.get(algo.lower())
    return None


# Where a ModelOpt MIXED_PRECISION checkpoint's quantized_layers names a module: the weight kind vramlint counts it
# in (vramlint/weights.py). Checked in this order: experts before the MLP that holds them.
# NemotronH names every layer's block ``backbone.layers.N.mixer``: its routed experts, its shared experts, the Mamba-2
# in/out projections and the attention projections (vLLM 0.34 nemotron_h.py).
_MIXED_KIND_OF = (
    (".mlp.experts", "experts"), (".mixer.experts.", "experts"), (".shared_expert.", "shared"),
    (".shared_experts.", "shared"), (".linear_attn.", "linear_attn"), (".self_attn.", "attn"), (".mlp.", "mlp"),
    (".mixer.in_proj.", "mamba"), (".mixer.out_proj.", "mamba"), (".mixer.q_proj.", "attn"), (".mixer.k_proj.", "attn"),
    (".mixer.v_proj.", "attn"), (".mixer.o_proj.", "attn"),
    ("visual", "vision"), ("vision", "vision"), ("lm_head", "lm_head"),
)
_MIXED_FORMATS = {"NVFP4": ("nvfp4", 4), "W4A16_NVFP4": ("nvfp4", 4), "FP8": ("fp8", 8)}


def _mixed_precision_kinds(layers: Any) -> dict | None:
    """ModelOpt MIXED_PRECISION (vLLM ``ModelOptMixedPrecisionConfig``): each module listed in ``quantized_layers``
    runs the algorithm named for it, a module not listed stays in the model dtype. Folded to one format per kind;
    a kind listed in several formats, or in one vramlint does not size, makes the whole mapping unread (None)."""
    if not isinstance(layers, dict) or not layers:
        return None
    kinds: dict[str, dict] = {}
    for name, info in layers.items():
        algo = str(info.get("quant_algo") or "").upper() if isinstance(info, dict) else ""
        kind = next((k for marker, k in _MIXED_KIND_OF if marker in f".{name}."), None)
        if kind is None or algo not in _MIXED_FORMATS:
            return None
        fmt, bits = _MIXED_FORMATS[algo]
        entry = {"format": fmt, "bits": bits}
        if fmt == "nvfp4":
            entry["group"] = _int(info.get("group_size")) or 16
        if kinds.setdefault(kind, entry) != entry:
            return None
    return kinds


def _module_of(pattern: str) -> str:
    """``model.layers.0.mlp.down_proj`` -> ``model.layers.0.mlp`` (gate/up/down are loaded together)."""
    parts = pattern.split(".")
    if len(parts) > 1 and parts[-1] in ("gate_proj", "up_proj", "down_proj", "q_proj", "k_proj", "v_proj", "o_proj"):
        return ".".join(parts[:-1])
    return pattern


def _fold_layer_index(pattern: str) -> str:
    parts = pattern.split(".")
    return ".".join("*" if p.isdigit() else p for p in parts)


def _compressed_tensors(qc: dict, out: dict) -> None:
    fmt = qc.get("format")
    groups = qc.get("config_groups") or {}
    weights = None
    for group in groups.values() if isinstance(groups, dict) else []:
        if isinstance(group, dict) and isinstance(group.get("weights"), dict):
            weights = group["weights"]
            break
    if weights is None:
        out["format"] = fmt
        return
    bits = _int(weights.get("num_bits"))
    kind = weights.get("type", "int")
    strategy = weights.get("strategy")
    out["bits"] = bits
    if bits == 4 and kind == "float":
        out["format"] = "nvfp4"
        out["group"] = _int(weights.get("group_size")) or 16
    elif bits == 8 and kind == "float":
        out["format"] = "fp8"
        block = weights.get("block_structure")
        if strategy == "block" and isinstance(block, list) and len(block) == 2:
            out["block"] = [int(block[0]), int(block[1])]
    elif kind == "int":
        out["format"] = f"w{bits}a16" if fmt == "pack-quantized" or bits == 4 else f"w{bits}a8"
        if strategy == "group":
            out["group"] = _int(weights.get("group_size")) or 128
        out["zero_point"] = not bool(weights.get("symmetric", True))
    out["strategy"] = strategy


def _mla(cfg: dict) -> dict | None:
    if cfg.get("kv_lora_rank") is None:
        return None
    return {
        "kv_lora_rank": int(cfg["kv_lora_rank"]),
        "q_lora_rank": _int(cfg.get("q_lora_rank")),
        "qk_rope": _int(cfg.get("qk_rope_head_dim")) or 64,
        "qk_nope": _int(cfg.get("qk_nope_head_dim")) or 128,
        "v_head": _int(cfg.get("v_head_dim")) or 128,
    }


def _mamba(cfg: dict, hidden: int, model_type: str) -> dict | None:
    d_state = _int(_first(cfg, "ssm_state_size", "mamba_d_state", "state_size", "mamba_d_ssm_state"))
    if not d_state:
        return None
    expand = _first(cfg, "mamba_expand", "expand")
    inner = _int(_first(cfg, "mamba_d_ssm", "mamba_intermediate_size"))
    n_heads = _int(_first(cfg, "mamba_num_heads", "mamba_n_heads"))
    head_dim = _int(_first(cfg, "mamba_head_dim", "mamba_d_head"))
    if not inner and n_heads and head_dim:
        inner = n_heads * head_dim
    if not inner:
        inner = int(hidden * float(expand or 2))
    version = 2 if n_heads or model_type in ("nemotron_h", "falcon_h1", "mamba2", "bamba", "granitemoehybrid", "zamba2") else 1
    out = {
        "d_state": d_state,
        "d_conv": _int(_first(cfg, "conv_kernel", "mamba_d_conv", "d_conv")) or 4,
        "inner": inner,
        "version": version,
    }
    if version == 2:
        out["n_groups"] = _int(_first(cfg, "n_groups", "mamba_n_groups")) or 1
        out["n_heads"] = n_heads or (inner // (head_dim or 64))
        out["head_dim"] = head_dim or (inner // out["n_heads"])
    return out


def _linear_attention(cfg: dict) -> dict | None:
    if not cfg.get("linear_num_value_heads"):
        return None
    out = {
        "k_heads": int(cfg.get("linear_num_key_heads") or cfg["linear_num_value_heads"]),
        "k_dim": int(cfg.get("linear_key_head_dim") or 128),
        "v_heads": int(cfg["linear_num_value_heads"]),
        "v_dim": int(cfg.get("linear_value_head_dim") or 128),
        "conv": int(cfg.get("linear_conv_kernel_dim") or 4),
    }
    if isinstance(cfg.get("mamba_ssm_dtype"), str):
        out["ssm_dtype"] = cfg["mamba_ssm_dtype"]  # Qwen3.5: recurrent state kept in this dtype (float32)
    return out


def _vision(cfg: dict) -> dict | None:
    vc = cfg.get("vision_config")
    if not isinstance(vc, dict):
        return None
    layers = _int(_first(vc, "num_hidden_layers", "depth", "num_layers", "vt_num_hidden_layers"))
    ratio = vc.get("mlp_ratio")
    if _int(vc.get("embed_dim")) and _int(ratio) is not None and 0 < ratio <= 64 and _int(vc.get("spatial_merge_size")):
        # Qwen2-VL (transformers Qwen2VisionTransformerPretrainedModel, vLLM Qwen2VisionTransformer): the tower is
        # embed_dim wide with an MLP of int(embed_dim * mlp_ratio); its hidden_size is the text width the patch
        # merger projects to, not the tower's
        hidden = _int(vc["embed_dim"])
        if not layers:
            return None
        return {"hidden": hidden, "layers": layers, "inter": int(hidden * ratio),
                "patch": _int(vc.get("patch_size")) or 14,
                "channels": _int(_first(vc, "in_channels", "in_chans", "num_channels")) or 3,
                "style": "qwen2_vl", "temporal": _int(vc.get("temporal_patch_size")) or 2,
                "spatial_merge": _int(vc["spatial_merge_size"]),
                "out": _int(vc.get("hidden_size")) or _int(cfg.get("hidden_size"))}
    hidden = _int(_first(vc, "hidden_size", "embed_dim", "width", "vt_hidden_size"))
    if not hidden or not layers:
        return None
    out = {"hidden": hidden, "layers": layers}
    inter = _int(_first(vc, "intermediate_size", "mlp_dim", "vt_intermediate_size"))
    if inter:
        out["inter"] = inter
    for key, name in (("patch_size", "patch"), ("num_channels", "channels"), ("in_channels", "channels"),
                      ("image_size", "image")):
        value = _int(vc.get(key))
        if value:
            out[name] = value
    if vc.get("model_type") == "gemma4_vision":
        # Gemma4VisionModel: bias-free q/k/v/o with q/k RMSNorms, GLU MLP, 4 RMSNorms per layer, a bias-free
        # patch projection, a (2, position_embedding_size, hidden) position table, and the embed_vision
        # projection to the text width
        out["style"] = "gemma4"
        out["positions"] = 2 * (_int(vc.get("position_embedding_size")) or 0)
        out["head_dim"] = _int(vc.get("head_dim")) or 0
    # the vision_config of the early-2025 Qwen2.5-VL uploads has no model_type, only the window-attention block list
    if (vc.get("model_type") == "qwen2_5_vl" or "fullatt_block_indexes" in vc) and _int(vc.get("spatial_merge_size")) \
            and _int(vc.get("out_hidden_size")):
        # Qwen2.5-VL vision tower (vLLM Qwen2_5_VisionTransformer): Conv3d patch embedding without bias, RMSNorms,
        # biased GLU MLP, windowed attention, a patch merger (RMSNorm, 4h -> 4h -> out)
        out["style"] = "qwen2_5_vl"
        out["temporal"] = _int(vc.get("temporal_patch_size")) or 2
        out["spatial_merge"] = _int(vc["spatial_merge_size"])
        out["out"] = _int(vc["out_hidden_size"])
    if vc.get("model_type") == "pixtral":
        # Pixtral tower (PixtralHFVisionModel): GLU MLP, RMSNorms, 2-D RoPE; the projector merges 2 x 2 patches
        out["style"] = "pixtral"
    if vc.get("model_type") == "llama4_vision_model":
        # Llama4VisionModel: learned positions, the pixel-shuffle adapter and the projector to the text width
        out["style"] = "llama4"
        for key, name in (("projector_input_dim", "adapter"), ("projector_output_dim", "out"),
                          ("vision_output_dim", "vision_out")):
            value = _int(vc.get(key))
            if value:
                out[name] = value
    if _int(cfg.get("spatial_merge_size")) and "Mistral3" in " ".join(str(a) for a in cfg.get("architectures") or []):
        out["spatial_merge"] = _int(cfg["spatial_merge_size"])  # Mistral3PatchMerger (2 x 2 patches per token)
    if "deepstack_visual_indexes" in vc and _int(vc.get("spatial_merge_size")) and _int(vc.get("out_hidden_size")):
        # Qwen3-VL / Qwen3.5 vision tower (vLLM Qwen3_VisionTransformer): Conv3d patch embedding over
        # temporal_patch_size frames, learned position embeddings, a patch merger (LayerNorm, 4h -> 4h -> out)
        # and one more merger per deepstack index
        out["temporal"] = _int(vc.get("temporal_patch_size")) or 2
        out["positions"] = _int(vc.get("num_position_embeddings")) or 0
        out["merge"] = _int(vc["spatial_merge_size"])
        out["deepstack"] = len(vc.get("deepstack_visual_indexes") or [])
        out["out"] = _int(vc["out_hidden_size"])
    return out


# LlamaConfig's defaults (transformers 4.41): a multimodal wrapper's Llama text_config may name only what differs
# from them (llava-hf/llava-1.5-7b-hf gives vocab, length and dtype; the sizes are Llama-2-7B's defaults).
_LLAMA_DEFAULTS = {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
                   "num_attention_heads": 32, "max_position_embeddings": 2048}

# Gemma 3 text configs leave these at Gemma3TextConfig defaults (the multimodal wrappers omit them).
_GEMMA3_TEXT_DEFAULTS = {"num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                         "vocab_size": 262208, "max_position_embeddings": 131072, "sliding_window": 4096}


_ARCH_TYPES = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3", "Qwen3MoeForCausalLM": "qwen3_moe",
    "Qwen2MoeForCausalLM": "qwen2_moe", "Phi3ForCausalLM": "phi3", "PhiForCausalLM": "phi",
    "Gemma2ForCausalLM": "gemma2", "GemmaForCausalLM": "gemma", "Gemma3ForCausalLM": "gemma3_text",
    "Gemma3ForConditionalGeneration": "gemma3", "GPT2LMHeadModel": "gpt2", "OPTForCausalLM": "opt",
    "DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3", "GptOssForCausalLM": "gpt_oss",
    "GraniteForCausalLM": "granite", "GraniteMoeForCausalLM": "granitemoe", "NemotronHForCausalLM": "nemotron_h",
}


def _type_from_architecture(arch: str) -> str:
    return _ARCH_TYPES.get(arch, "")


# ------------------------------------------------------------------------------------------ validation
# A config.json comes from the Hub or from the scanned repository: untrusted. Before any fact is taken from it,
# every field that facts_from_config reads as a number must be one, of a size a real model has; otherwise the
# model is unresolved with a message naming the field (a string where a count belongs would silently become
# "no layers", a 10**12 layer count would build a 10**12-letter layer pattern).

_LAYER_KEYS = (
    "num_hidden_layers", "n_layer", "num_layers", "n_layers", "depth", "vt_num_hidden_layers", "num_nextn_predict_layers",
    "first_k_dense_replace", "max_window_layers", "full_attention_interval", "attn_layer_period", "attn_layer_offset",
    "decoder_sparse_step", "interleave_moe_layer_step", "moe_layer_freq", "expert_layer_period", "expert_layer_offset",
    "sliding_window_pattern", "_sliding_window_pattern",
)
_WIDTH_KEYS = (
    "hidden_size", "n_embd", "d_model", "dim", "intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size",
    "moe_intermediate_size", "expert_intermediate_size", "shared_expert_intermediate_size",
    "moe_shared_expert_intermediate_size", "intermediate_size_mlp", "head_dim", "attention_head_dim",
    "hidden_size_per_head", "global_head_dim", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
    "v_head_dim", "index_head_dim", "linear_key_head_dim", "linear_value_head_dim", "mamba_d_ssm",
    "mamba_intermediate_size", "mamba_head_dim", "mamba_d_head", "ssm_state_size", "mamba_d_state", "state_size",
    "mamba_d_ssm_state", "embed_dim", "width", "vt_hidden_size", "mlp_dim", "vt_intermediate_size", "out_hidden_size",
    "patch_size", "image_size", "position_embedding_size", "num_position_embeddings", "rotary_dim", "vocab_size",
    "padded_vocab_size", "conv_kernel", "mamba_d_conv", "d_conv", "linear_conv_kernel_dim", "temporal_patch_size",
    "spatial_merge_size", "num_channels", "in_channels", "in_chans", "moe_latent_size",
    "hidden_size_per_layer_input", "vocab_size_per_layer_input", "output_proj_dims", "conv_kernel_size",
)
_COUNT_KEYS = (
    "num_attention_heads", "n_head", "num_heads", "n_heads", "n_head_kv", "num_kv_heads", "num_key_value_heads",
    "multi_query_group_num", "num_global_key_value_heads", "index_n_heads", "linear_num_key_heads",
    "linear_num_value_heads", "mamba_num_heads", "mamba_n_heads", "n_groups", "mamba_n_groups", "num_local_experts",
    "n_routed_experts", "num_experts", "moe_num_experts", "num_experts_per_tok", "experts_per_token", "moe_topk",
    "num_kv_shared_layers",
    "top_k", "top_k_experts", "n_shared_experts", "num_shared_experts",
)
_LENGTH_KEYS = MAX_LEN_KEYS + ("sliding_window", "attention_chunk_size", "original_max_position_embeddings")
_FRACTION_KEYS = ("partial_rotary_factor", "mamba_expand", "expand", "factor", "mlp_ratio")
# The fields without which nothing can be sized: a list or an object there is an error, not a missing value.
_CORE_KEYS = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "vocab_size",
              "intermediate_size", "max_position_embeddings", "head_dim")
_KV_HEAD_KEYS = ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num")
_OFF_WHEN_FALSE = ("sliding_window", "attention_chunk_size")  # `false` there means "not used"

NUMBER_LIMITS: dict[str, int] = {}
NUMBER_LIMITS.update(dict.fromkeys(_LAYER_KEYS, 2**14))
NUMBER_LIMITS.update(dict.fromkeys(_WIDTH_KEYS, 2**24))
NUMBER_LIMITS.update(dict.fromkeys(_COUNT_KEYS, 2**20))
NUMBER_LIMITS.update(dict.fromkeys(_LENGTH_KEYS, 2**40))
MAX_DEPTH = 64
MAX_NODES = 500_000


class ConfigProblem(ValueError):
    """A config.json field that is not what a model's config holds; the message names the field."""


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, int):
        digits = len(str(abs(value))) if value.bit_length() < 10_000 else 3000
        return f"an integer of {digits} digits" if digits > 15 else str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return f"{value[:40]!r} (a string)"
    return f"a {'list' if isinstance(value, list) else 'JSON object'}"


def _check_number(path: str, key: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool):
        if value is False and key in _OFF_WHEN_FALSE:
            return
        raise ConfigProblem(f"field {path} is {_describe(value)}, not a number")
    if isinstance(value, (list, dict)):
        if key in _CORE_KEYS:
            raise ConfigProblem(f"field {path} is {_describe(value)}, not a number")
        return
    if isinstance(value, str):
        if key == "sliding_window_pattern" and len(value) <= 64 and set(value) <= {"L", "G"}:
            return  # Exaone4Config: one letter a layer, L(ocal) or G(lobal), repeated ("LLLG")
        raise ConfigProblem(f"field {path} is {_describe(value)}, not a number")
    if not isinstance(value, (int, float)):
        raise ConfigProblem(f"field {path} is not a number")
    if key in _FRACTION_KEYS:
        if not math.isfinite(value) or not 0 <= value <= 1e6:
            raise ConfigProblem(f"field {path} is {_describe(value)}, not a finite factor between 0 and 1e6")
        return
    limit = NUMBER_LIMITS[key]
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigProblem(f"field {path} is {_describe(value)}, not a finite number")
    if isinstance(value, float) and value != int(value):
        raise ConfigProblem(f"field {path} is {_describe(value)}, not a whole number")
    if value < 0:
        raise ConfigProblem(f"field {path} is {_describe(value)}: a negative size")
    if value == 0 and key == "num_attention_heads":
        # transformers' configs divide hidden_size by it (head_dim): ZeroDivisionError before vLLM starts
        raise ConfigProblem(f"field {path} is 0: a model has at least one attention head")
    if value == 0 and key in _KV_HEAD_KEYS:
        # vLLM's get_total_num_kv_heads returns the first of these that is set, 0 included, and the attention
        # layers then take tp_size % 0 (ZeroDivisionError); read as "no KV heads given" it would be sized as MHA
        raise ConfigProblem(f"field {path} is 0: an attention model has at least one KV head")
    if value == 0 and key == "hidden_size":
        # -0.0 too: it passes the negative check and would size a model of no weights
        raise ConfigProblem(f"field {path} is 0: a model's hidden size is at least 1")
    if value > limit:
        raise ConfigProblem(f"field {path} is {_describe(value)}, over the {limit:,} a real model has")


def _check_int_list(path: str, value: Any, limit: int, length: int = 2**14) -> None:
    if value is None:
        return
    if not isinstance(value, list) or len(value) > length:
        raise ConfigProblem(f"field {path} is {_describe(value)}, not a list of at most {length:,} numbers")
    for i, item in enumerate(value):
        if isinstance(item, bool):
            continue  # no_rope_layers holds 0/1 flags, sometimes written as booleans
        if not isinstance(item, int) or not 0 <= item <= limit:
            raise ConfigProblem(f"field {path}[{i}] is {_describe(item)}, not a number from 0 to {limit:,}")


def _check_section(section: dict, prefix: str) -> None:
    for key, value in section.items():
        if key in NUMBER_LIMITS or key in _FRACTION_KEYS:
            _check_number(prefix + key, key, value)
    for key in ("architectures", "layer_types", "layers_block_type"):
        value = section.get(key)
        if value is not None and (not isinstance(value, list) or len(value) > 2**14
                                  or not all(isinstance(v, str) and len(v) <= 200 for v in value)):
            raise ConfigProblem(f"field {prefix}{key} is {_describe(value)}, not a list of names")
    for key in ("model_type", "hybrid_override_pattern", "torch_dtype", "dtype"):
        value = section.get(key)
        if value is not None and not (isinstance(value, str) and len(value) <= 2**14):
            if key in ("torch_dtype", "dtype") and isinstance(value, dict):
                continue  # transformers 5 may hold a per-module dtype map; it is not read
            raise ConfigProblem(f"field {prefix}{key} is {_describe(value)}, not a name")
    for key in ("mlp_only_layers", "no_rope_layers"):
        _check_int_list(prefix + key, section.get(key), 2**14)
    _check_int_list(prefix + "subsampling_conv_channels", section.get("subsampling_conv_channels"), 2**16)
    for key in ("rope_scaling", "rope_parameters", "attn_config", "quantization_config", "compression_config"):
        sub = section.get(key)
        if isinstance(sub, dict):
            _check_section(sub, f"{prefix}{key}.")
            if key == "attn_config":
                _check_number(f"{prefix}{key}.kv_n_heads", "num_key_value_heads", sub.get("kv_n_heads"))
    for key in ("weight_block_size", "block_structure"):
        value = section.get(key)
        if value is not None and isinstance(value, list):
            _check_int_list(prefix + key, value, 2**20, length=2)
    for key in ("bits", "w_bit", "num_bits", "group_size", "q_group_size"):
        value = section.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) \
                and (not math.isfinite(value) or abs(value) > 2**20):
            raise ConfigProblem(f"field {prefix}{key} is {_describe(value)}, not a quantization size")
    groups = section.get("config_groups")
    if isinstance(groups, dict):
        for name, group in groups.items():
            if isinstance(group, dict) and isinstance(group.get("weights"), dict):
                _check_section(group["weights"], f"{prefix}config_groups.{str(name)[:40]}.weights.")


def _check_shape(value: Any) -> None:
    """Depth and size of the parsed JSON, walked without recursion."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    nodes = 0
    while stack:
        node, depth, path = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH:
            raise ConfigProblem(f"the JSON is nested more than {MAX_DEPTH} levels deep (at {path[:80] or 'the top'})")
        if nodes > MAX_NODES:
            raise ConfigProblem(f"the JSON holds more than {MAX_NODES:,} values")
        if isinstance(node, dict):
            stack.extend((v, depth + 1, f"{path}.{str(k)[:40]}" if path else str(k)[:40]) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, depth + 1, f"{path}[{i}]") for i, v in enumerate(node))
        elif isinstance(node, int) and not isinstance(node, bool) and node.bit_length() > 64:
            raise ConfigProblem(f"field {path[:120]} is {_describe(node)}")


def _check_names(section: dict, prefix: str) -> None:
    """``model_type`` and ``architectures`` are the keys transformers' CONFIG_MAPPING and vLLM's model registry
    look the model up by (a module name, class names): one holding a control character or a blank is no model
    either of them has, and vLLM stops on it; it would also be quoted into reports and the Hub cache."""
    names = [("model_type", section.get("model_type"))]
    archs = section.get("architectures")
    if isinstance(archs, list):
        names += [(f"architectures[{i}]", a) for i, a in enumerate(archs[:64])]
    for field_name, value in names:
        if isinstance(value, str) and (len(value) > 256 or any(c.isspace() or not c.isprintable() for c in value)):
            raise ConfigProblem(f"field {prefix}{field_name} is no model name (a control character, a blank or "
                                "over 256 characters: neither transformers nor vLLM's registry has such a model)")


def config_problem(cfg: Any, hf_quant_config: Any = None) -> str | None:
    """Why ``cfg`` (a parsed config.json) cannot be read as a model's config, naming the field; None if it can."""
    try:
        if not isinstance(cfg, dict):
            raise ConfigProblem("the file is not a JSON object")
        _check_section(cfg, "")
        _check_names(cfg, "")
        for key in _NESTED_TEXT_KEYS + ("vision_config", "audio_config"):
            sub = cfg.get(key)
            if isinstance(sub, dict):
                _check_section(sub, key + ".")
                _check_names(sub, key + ".")
                if isinstance(sub.get("text_config"), dict):
                    _check_section(sub["text_config"], key + ".text_config.")
        _check_shape(cfg)
        if hf_quant_config is not None:
            if not isinstance(hf_quant_config, dict):
                raise ConfigProblem("hf_quant_config.json is not a JSON object")
            _check_shape(hf_quant_config)
            _check_section(hf_quant_config, "hf_quant_config.")
            if isinstance(hf_quant_config.get("quantization"), dict):
                _check_section(hf_quant_config["quantization"], "hf_quant_config.quantization.")
    except ConfigProblem as exc:
        return str(exc)
    return None


# Architectures vLLM builds from bert.py, bert_with_rope.py, modernbert.py and roberta.py (the registry of vLLM
# 0.33.0, vllm/model_executor/models/registry.py): every attention layer is EncoderOnlyAttention, for which vLLM
# keeps no KV cache ("Encoder-only layers do not need KV cache": EncoderOnlyAttentionSpec.max_memory_usage_bytes is
# 0, vllm/v1/kv_cache_interface.py; the runner leaves them out of get_kv_cache_spec). vramlint's budget sizes a
# decoder's KV cache and sampler, neither of which such a model has.
ENCODER_ONLY_ARCHITECTURES = frozenset({
    "BertForMaskedLM", "BertForSequenceClassification", "BertForTokenClassification", "BertModel",
    "BertSpladeSparseEmbeddingModel", "BgeM3EmbeddingModel", "GteModel", "GteNewForSequenceClassification",
    "GteNewModel", "ModernBertForSequenceClassification", "ModernBertForTokenClassification", "ModernBertModel",
    "NomicBertModel", "RobertaForMaskedLM", "RobertaForSequenceClassification", "RobertaForTokenClassification",
    "RobertaModel", "XLMRobertaForSequenceClassification", "XLMRobertaForTokenClassification", "XLMRobertaModel",
})

# Encoder-decoder models of vLLM 0.33.0 (the registry's whisper, cohere_asr and nemotron_parse modules): besides the
# decoder's own KV cache, each decoder layer's cross-attention caches the encoder's output (CrossAttentionSpec, sized
# by max_num_encoder_input_tokens), and the encoder's layers are counted in no num_hidden_layers.
ENCODER_DECODER_ARCHITECTURES = frozenset({
    "WhisperForConditionalGeneration", "CohereAsrForConditionalGeneration", "NemotronParseForConditionalGeneration",
})


def unmodelled_architecture(cfg: dict) -> str | None:
    """What in a (checked) config.json vramlint's budget does not model, said as "<what the model is>: <why>", or
    None. Such a model is left unchecked with this reason rather than sized as something it is not."""
    archs = cfg.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    if arch in ENCODER_ONLY_ARCHITECTURES:
        return (f"an encoder-only model ({arch}): vLLM keeps no KV cache for its bidirectional attention layers "
                "(EncoderOnlyAttentionSpec) and runs no sampler")
    if arch in ENCODER_DECODER_ARCHITECTURES:
        return (f"an encoder-decoder model ({arch}): vLLM keeps a cross-attention KV cache of the encoder's output "
                "(CrossAttentionSpec) besides the decoder's own")
    tc = text_config(cfg)
    if isinstance(tc.get("block_configs"), list) and tc["block_configs"]:
        # DeciLM / Nemotron-NAS (vllm/model_executor/models/nemotron_nas.py): each layer's attention (its KV heads,
        # or none: no_op) and MLP width (ffn_mult) come from its own block config, not from the model-wide keys
        return (f"a {tc.get('model_type') or 'DeciLM'} model whose {len(tc['block_configs'])} layers each have "
                "their own attention and MLP shapes (block_configs)")
    # Gemma 3n (vllm/model_executor/models/gemma3n.py; Gemma 4's E2B / E4B are modelled, _gemma4_edge): per-layer embeddings
    # (embed_tokens_per_layer, vocab_size_per_layer_input x layers x hidden_size_per_layer_input, with a
    # projection and a gate in every layer) and KV-shared layers (the last num_kv_shared_layers attend with the
    # KV cache of an earlier layer of their type and have no k/v projections, kv_sharing_target_layer_name)
    ple = _int(tc.get("hidden_size_per_layer_input")) or 0
    shared = _int(tc.get("num_kv_shared_layers")) or 0
    if (ple > 0 or shared > 0) and tc.get("model_type") != "gemma4_text":
        parts = []
        if ple > 0:
            parts.append(f"per-layer embeddings (hidden_size_per_layer_input {ple})")
        if shared > 0:
            parts.append(f"KV-shared layers (num_kv_shared_layers {shared}: they reuse an earlier layer's KV cache)")
        return f"a {tc.get('model_type') or arch or 'model'} model with " + " and ".join(parts)
    thinker = cfg.get("thinker_config")
    audio = cfg.get("audio_config")
    if not isinstance(audio, dict) and isinstance(thinker, dict):
        audio = thinker.get("audio_config")  # Qwen2.5-Omni / Qwen3-Omni / Qwen3-ASR keep it in the thinker
    if isinstance(audio, dict) and audio and tc.get("model_type") != "gemma4_text":
        # Speech-in models (vLLM 0.20 - 0.28: voxtral.py's whisper_encoder and audio_language_adapter, qwen2_audio.py,
        # ultravox.py, minicpmo.py, qwen2_5_omni_thinker.py, qwen3_asr.py, ...) build an audio encoder from
        # audio_config and a projector beside the language model; facts_from_config reads the language model only
        # (Gemma 4's audio tower is the one counted, _gemma4_edge), so the weights would come out short by the whole
        # tower and its encoder profile would be missing
        layers = _int(_first(audio, "num_hidden_layers", "encoder_layers", "num_layers"))
        kind = audio.get("model_type")
        what = ", ".join(str(x) for x in (f"{layers} layers" if layers else None, kind) if x)
        return (f"a {arch or tc.get('model_type') or 'model'} model with an audio encoder (audio_config"
                f"{': ' + what if what else ''}) and its projector, whose weights and encoder profile the budget "
                "does not count")
    return _unmodelled_attention(tc, arch)


def _unmodelled_attention(tc: dict, arch: str | None) -> str | None:
    """Attention layouts of 2026 models that vLLM caches in ways the budget's KV cache stage does not lay out;
    read as plain GQA or MLA they would be sized with the wrong KV cache (and, for DeepSeek-V4, the wrong weights)."""
    model_type = str(tc.get("model_type") or "")
    ratios = tc.get("compress_ratios")
    if model_type == "deepseek_v4" or (arch or "").startswith("DeepseekV4") or isinstance(ratios, list):
        return _deepseek_v4_reason(tc, ratios)
    sparse = tc.get("sparse_attention_config")
    if model_type.startswith("minimax_m3") or (isinstance(sparse, dict) and sparse.get("use_sparse_attention")):
        # vllm/models/minimax_m3/common/indexer.py (0.33.0, 0.34.0): each sparse layer keeps an index-key cache
        # (MLAAttentionSpec, its dtype from indexer_kv_dtype) beside the KV cache and attends to top-k blocks
        return ("a MiniMax-M3 model: its block-sparse attention keeps an index-key cache per sparse layer beside "
                "the KV cache (sparse_attention_config; vllm/models/minimax_m3)")
    linear = tc.get("linear_attn_config")
    if isinstance(linear, dict) and isinstance(linear.get("kda_layers"), list) and linear["kda_layers"]:
        # Kimi Linear / Kimi-K3 (the registry maps KimiLinearForCausalLM to vllm/models/kimi_k3, 0.33.0 - 0.34.0): Kimi Delta
        # Attention layers keep a recurrent state and a short-convolution state per request (MambaSpec) between
        # the MLA layers; read as MLA alone every layer would get a latent cache and none a state
        full = linear.get("full_attn_layers")
        return (f"a Kimi Linear model ({len(linear['kda_layers'])} Kimi Delta Attention layers with a recurrent "
                f"state per request, {len(full) if isinstance(full, list) else 'some'} MLA layers: "
                "linear_attn_config)")
    if model_type in ("step3p5", "step3p7") or (arch or "").startswith(("Step3p5", "Step3p7")):
        # vllm/model_executor/models/step3p5.py (0.33.0, 0.34.0): KV heads from num_attention_groups, sliding layers
        # with their own query heads (num_sliding_attention_heads or attention_other_setting) and rope, MTP layer
        # types after the decoder's (mtp_layer_types); Step3p7FlashForCausalLM is in neither release's registry
        return (f"a Step-3.5 / 3.7 model ({arch or model_type}): vLLM builds its sliding-window layers with their "
                "own attention heads (num_sliding_attention_heads / attention_other_setting) and its KV heads from "
                "num_attention_groups (vllm/model_executor/models/step3p5.py)")
    return None


# Text config types of Qwen3.5 / Qwen3.5-MoE checkpoints (the model_type of their text_config).
QWEN3_5_TEXT_TYPES = ("qwen3_5_text", "qwen3_5_moe_text", "qwen3_5", "qwen3_5_moe")



def _deepseek_v4_reason(tc: dict, ratios) -> str:
    """What vLLM lays out for a DeepSeek-V4 model and which part of it the budget lacks.

    vLLM 0.20.0 - 0.34.0 (model_executor/layers/deepseek_v4_attention.py and deepseek_compressor.py up to 0.21,
    models/deepseek_v4/ from 0.22; v1/attention/backends/mla/sparse_swa.py): every layer registers a
    DeepseekV4SWACache (SlidingWindowMLASpec over `sliding_window` tokens, one head_dim-wide latent); a layer of
    ratio 4 or 128 adds a MLAAttentionSpec holding one latent per ratio tokens and an fp32 compressor-state
    SlidingWindowMLASpec (block 4 or 8); a ratio-4 layer adds an indexer key cache and its compressor state. Layer i
    < num_hidden_layers takes compress_ratios[i]; the MTP layers after them are sliding-window only (attention.py:
    'MTP layer is not included'). The free memory is split into blocks by a DeepSeek-V4 path that changes by
    release: kv_cache_utils._get_kv_cache_config_deepseek_v4 (0.20 - 0.25: layer tuples per page size),
    group_and_unify_kv_cache_specs (0.26 - 0.28: a block size per group, 256 / 64 / 4 / 8), _get_packed_kv_cache_groups
    (0.29 on; kv_cache_planning.py from 0.33). The KV cache stage holds one bytes-per-token figure and one block size,
    and the weight count reads neither hc_mult nor expert_dtype, so neither the blocks nor the weights are sized."""
    layers = _int(tc.get("num_hidden_layers"))
    counts = ""
    if isinstance(ratios, list):
        decoder = ratios[:layers] if layers else ratios
        by = {r: sum(1 for x in decoder if x == r) for r in sorted({x for x in decoder if isinstance(x, int)})}
        parts = [f"{n} of ratio {r}" if r > 1 else f"{n} sliding-window only" for r, n in by.items()]
        mtp = len(ratios) - len(decoder)
        counts = (f" ({len(decoder)} decoder layers: " + ", ".join(parts)
                  + (f"; {mtp} MTP layer{'s' if mtp != 1 else ''}, sliding-window only" if mtp > 0 else "") + ")")
    window = _int(tc.get("sliding_window"))
    head = _int(tc.get("head_dim"))
    index_head = _int(tc.get("index_head_dim"))
    experts = tc.get("expert_dtype")
    hc = _int(tc.get("hc_mult"))
    weights = " or ".join(x for x in (f"hc_mult {hc} hyper-connection streams" if hc else None,
                                     f"{experts} experts (expert_dtype)" if isinstance(experts, str) else None) if x)
    return ("a DeepSeek-V4 model" + counts + ": vLLM caches per layer a "
            + (f"{window}-token " if window else "") + "sliding-window latent, on each compressed layer one "
            + (f"{head}-wide " if head else "") + "latent per 4 or 128 tokens with fp32 compressor state, on the "
            "ratio-4 layers an indexer key cache" + (f" ({index_head}-wide)" if index_head else "")
            + ", and splits the memory into blocks by its own DeepSeek-V4 layout, which changes by release (0.20-0.25 "
            "layer tuples per page size, 0.26-0.28 a block size per cache group, from 0.29 packed page groups); "
            "vramlint's KV cache stage (one bytes-per-token figure, one block size) lays out none of these"
            + (f", nor does its weight count read {weights}" if weights else "") + " (vllm/models/deepseek_v4)")

def facts_from_config(cfg: dict, hf_quant_config: dict | None = None) -> dict:
    """The compact facts of a config.json (see the module docstring for the keys)."""
    top = cfg
    tc = text_config(cfg)
    model_type = str(tc.get("model_type") or top.get("model_type") or "")
    if not model_type:
        archs = top.get("architectures") or tc.get("architectures") or []
        model_type = _type_from_architecture(archs[0]) if archs else ""
    if model_type == "gemma3_text" or (model_type == "gemma3" and tc is not top):
        tc = {**_GEMMA3_TEXT_DEFAULTS, **tc}
        model_type = "gemma3_text"
    elif model_type == "llama" and tc is not top:
        tc = {**_LLAMA_DEFAULTS, **tc}
    archs = top.get("architectures") or tc.get("architectures") or []
    facts: dict[str, Any] = {"arch": archs[0] if archs else None, "type": model_type or None}
    layers = _int(_first(tc, "num_hidden_layers", "n_layer", "num_layers", "n_layers")) or 0
    if model_type == "nemotron_h" and _nemotron_h_types(tc):
        # NemotronHConfig.num_hidden_layers is len(layers_block_type) (transformers 5.25), whatever the config says
        layers = len(_nemotron_h_types(tc))
    hidden = _int(_first(tc, "hidden_size", "n_embd", "d_model", "dim")) or 0
    heads = _int(_first(tc, "num_attention_heads", "n_head", "num_heads", "n_heads")) or 0
    facts.update(layers=layers, hidden=hidden, heads=heads)
    facts["kv_heads"] = _num_kv_heads(tc, heads)
    head_dim = _int(_first(tc, "head_dim", "attention_head_dim", "hidden_size_per_head"))
    facts["head_dim"] = head_dim or (hidden // heads if heads else 0)
    facts["vocab"] = _int(_first(tc, "vocab_size", "padded_vocab_size")) or 0
    inter = _int(_first(tc, "intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size"))
    if inter is None and hidden:
        inter = 4 * hidden if model_type in ("gpt2", "opt", "bloom", "gpt_bigcode", "falcon") else None
    facts["inter"] = inter
    max_pos, key = _max_pos(tc)
    facts["max_pos"], facts["max_pos_key"] = max_pos, key
    if _int(tc.get("model_max_length")):
        facts["model_max_length"] = _int(tc["model_max_length"])
    rope = _rope(tc)
    if rope:
        facts["rope"] = rope
    facts["dtype"] = _dtype(tc) or _dtype(top)
    tie = tc.get("tie_word_embeddings", top.get("tie_word_embeddings"))
    if tie is None:
        # Absent key: the config class default applies. True for these families (Gemma relies on it),
        # False for Llama/Mistral/Qwen2-style classes.
        # SmolLM3Config, FalconConfig and Starcoder2Config leave it to PretrainedConfig's default (True)
        # (transformers 4.57.1); vLLM's Falcon and Starcoder2 models then share the word embeddings as LM head.
        tie = model_type.startswith("gemma") or model_type in ("opt", "gpt2", "bloom", "gpt_bigcode", "gpt_neox_japanese",
                                                               "smollm3", "falcon", "starcoder2")
    if archs and archs[0] in ("CohereForCausalLM", "Cohere2ForCausalLM"):
        # vLLM's CohereForCausalLM (commandr.py, both architectures) has no LM head: its logits come from
        # embed_tokens and a checkpoint's lm_head weights are dropped at load, whatever tie_word_embeddings says
        tie = True
    facts["tie"] = bool(tie)
    if model_type in ("qwen2", "qwen2_moe", "qwen2_vl_text", "qwen2_5_vl_text", "qwen2_vl", "qwen2_5_vl", "qwen", "mimo"):
        facts["attn_bias"] = "qkv"  # Qwen2 (and MiMo, a Qwen2 subclass in vLLM): biases on q/k/v, none on o_proj
    elif tc.get("attention_bias") or tc.get("bias") or model_type in ("gpt2", "opt", "gpt_bigcode", "phi", "starcoder2"):
        facts["attn_bias"] = "all"
    if tc.get("attn_output_gate"):
        facts["attn_gate"] = True  # Qwen3-Next / Qwen3.5: q_proj also produces an output gate
    partial = tc.get("partial_rotary_factor")
    rope_params = tc.get("rope_parameters")
    if partial is None and isinstance(rope_params, dict):
        partial = rope_params.get("partial_rotary_factor")  # transformers 5 keeps it there (Qwen3.5)
    rotary_dim = _int(tc.get("rotary_dim"))  # MiniMax-M2: rotary_dim of head_dim
    if partial is None and rotary_dim and facts["head_dim"]:
        partial = rotary_dim / facts["head_dim"]
    if isinstance(partial, (int, float)) and 0 < partial < 1:
        facts["rotary_pct"] = float(partial)
    if model_type in ("qwen3", "qwen3_moe", "qwen3_next", "gemma3_text", "gemma4_text", "olmo2", "qwen3_5_text", "qwen3_5_moe_text",
                      "qwen3_vl_text", "qwen3_vl_moe_text") or tc.get("use_qk_norm"):
        facts["qk_norm"] = True
    if model_type in ("gpt2", "opt", "bloom", "gpt_bigcode", "falcon", "nemotron_h", "phi", "starcoder2", "gpt_neox"):
        facts["mlp"] = "mlp"  # up + down only (no gate projection)
    elif tc.get("mlp_bias") is True and model_type in ("llama", "mistral", "granite"):
        # vLLM's LlamaDecoderLayer (which MistralForCausalLM is built from too) and GraniteDecoderLayer build their
        # MLP's gate_up_proj and down_proj with bias=getattr(config, "mlp_bias", False); Qwen2MLP and the other
        # families build them without bias whatever the config says
        facts["mlp_bias"] = True
    window = _int(tc.get("sliding_window"))
    if model_type in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "mimo") and not tc.get("use_sliding_window"):
        window = None
    pattern = _pattern(tc, layers, model_type)
    if pattern and "S" in pattern and window:
        facts["sliding_window"] = window
    if pattern and "C" in pattern:
        facts["attention_chunk_size"] = _int(tc.get("attention_chunk_size"))
    if pattern:
        facts["pattern"] = pattern
    full_attn = _full_attention_shape(tc, facts)
    if full_attn and pattern and "F" in pattern:
        facts["full_attn"] = full_attn
    if _mimo_v2_layers(tc, layers):
        _mimo_v2_attention(tc, facts)
    moe = _moe(tc, layers, model_type)
    if moe:
        facts["moe"] = moe
    if model_type in MLA_MODEL_TYPES or tc.get("kv_lora_rank") is not None:
        mla = _mla(tc)
        if mla:
            facts["mla"] = mla
    if facts.get("mla") and _int(tc.get("index_head_dim")) and _int(tc.get("index_n_heads")):
        facts["indexer"] = {"heads": _int(tc["index_n_heads"]), "head_dim": _int(tc["index_head_dim"])}
        # IndexCache (GLM-5.2's IndexShare): the layers that compute their own top-k (vramlint/budget/kv_layout.py)
        if (_int(tc.get("index_topk_freq")) or 1) > 1:
            facts["indexer"]["topk_freq"] = _int(tc["index_topk_freq"])
            if tc.get("index_skip_topk_offset") is not None:
                facts["indexer"]["skip_topk_offset"] = _int(tc["index_skip_topk_offset"])
        if isinstance(tc.get("index_topk_pattern"), str) and tc["index_topk_pattern"]:
            facts["indexer"]["topk_pattern"] = tc["index_topk_pattern"]
    if pattern and "M" in pattern:
        mamba = _mamba(tc, hidden, model_type)
        if mamba:
            facts["mamba"] = mamba
    elif model_type == "falcon_h1":
        mamba = _mamba(tc, hidden, model_type)
        if mamba:
            facts["mamba"] = mamba
            facts["mamba_parallel"] = True  # every layer has attention and a mamba mixer side by side
    linear = _linear_attention(tc)
    if linear:
        facts["linear"] = linear
    quant = _quant(top if top.get("quantization_config") else tc, hf_quant_config, layers)
    if quant:
        facts["quant"] = quant
    vision = _vision(top)
    if vision:
        facts["vision"] = vision
    if model_type == "gemma4_text":
        _gemma4_edge(top, tc, facts)
    mtp = _int(tc.get("num_nextn_predict_layers"))
    if not mtp and model_type in QWEN3_5_TEXT_TYPES:
        # SpeculativeConfig.hf_config_override (vllm/config/speculative.py, 0.17 - 0.28 wheels): qwen3_5 /
        # qwen3_5_moe become qwen3_5_mtp with n_predict = mtp_num_hidden_layers, the text config's key
        # (Qwen3_5MultiTokenPredictor builds that many layers)
        mtp = _int(tc.get("mtp_num_hidden_layers"))
        if mtp:
            facts["mtp_style"] = "qwen3_5"
    if mtp:
        facts["mtp_layers"] = mtp
    eagle = _eagle(top, tc, archs)
    if eagle:
        facts["eagle"] = eagle
    if model_type == "medusa":
        facts["medusa"] = _medusa(top, facts)
    return {k: v for k, v in facts.items() if v is not None}


def _gemma4_edge(top: dict, tc: dict, facts: dict) -> None:
    """Gemma 4 E2B / E4B (vllm/model_executor/models/gemma4.py, gemma4_mm.py, 0.33): per-layer embeddings,
    KV-shared layers, the double-wide MLP of those layers, and the audio tower of variants with an audio_config."""
    ple = _int(tc.get("hidden_size_per_layer_input")) or 0
    if ple > 0:
        facts["ple"] = {"dim": ple, "vocab": _int(tc.get("vocab_size_per_layer_input")) or facts.get("vocab") or 0}
    shared = _int(tc.get("num_kv_shared_layers")) or 0
    if 0 < shared < (facts.get("layers") or 0):
        facts["kv_shared"] = shared
        if tc.get("use_double_wide_mlp"):
            facts["double_wide"] = True
    audio = top.get("audio_config")
    if isinstance(audio, dict) and audio:
        sub = audio.get("subsampling_conv_channels")
        facts["audio"] = {
            "hidden": _int(audio.get("hidden_size")) or 0, "layers": _int(audio.get("num_hidden_layers")) or 0,
            "heads": _int(audio.get("num_attention_heads")) or 1, "conv": _int(audio.get("conv_kernel_size")) or 0,
            "sub": [_int(c) or 0 for c in sub[:2]] if isinstance(sub, list) and len(sub) >= 2 else [0, 0],
            "out": _int(audio.get("output_proj_dims")) or _int(audio.get("hidden_size")) or 0,
        }


def _eagle(top: dict, tc: dict, archs: list) -> dict | None:
    """An EAGLE draft head's own facts (vLLM ``SpeculativeConfig`` maps its architecture to EagleLlamaForCausalLM
    or Eagle3LlamaForCausalLM): EAGLE-3 when the architecture or ``speculators_model_type`` says so, or the config
    has a ``draft_vocab_size`` (its reduced LM head)."""
    names = " ".join(str(a) for a in archs).lower()
    kind = str(top.get("speculators_model_type") or "").lower()
    if "eagle" not in names and "eagle" not in kind and tc.get("draft_vocab_size") is None \
            and top.get("draft_vocab_size") is None:
        return None
    version = 3 if ("eagle3" in names or kind == "eagle3" or top.get("draft_vocab_size") is not None
                    or tc.get("draft_vocab_size") is not None) else 1
    out: dict[str, Any] = {"version": version}
    draft_vocab = _int(_first(tc, "draft_vocab_size")) or _int(top.get("draft_vocab_size"))
    if draft_vocab:
        out["draft_vocab"] = draft_vocab
    target_hidden = _int(_first(tc, "target_hidden_size")) or _int(top.get("target_hidden_size"))
    if target_hidden:
        out["target_hidden"] = target_hidden
    return out


def _medusa(top: dict, facts: dict) -> dict:
    """A Medusa head (vLLM ``Medusa``, model_executor/models/medusa.py): ``num_heads`` residual blocks of
    ``num_hidden_layers`` hidden x hidden linear layers each, and one LM head per head (or one shared
    ``original_lm_head``) over the ``truncated_vocab_size`` first tokens."""
    vocab = facts.get("vocab") or 0
    return {"heads": _int(top.get("num_heads")) or 0, "layers": facts.get("layers") or 1,
            "truncated_vocab": _int(top.get("truncated_vocab_size")) or vocab,
            "original_lm_head": bool(top.get("original_lm_head")), "bias": bool(top.get("medusa_fc_bias"))}


def _full_attention_shape(tc: dict, facts: dict) -> dict | None:
    """The full-attention layers' head size and KV heads when they differ from the other layers' (Gemma 4).

    Mirrors ``Gemma4TextConfig.__post_init__`` (transformers 5) and ``Gemma4DecoderLayer`` (vLLM 0.19 - 0.33):
    full-attention layers take ``global_head_dim``, and ``num_global_key_value_heads`` when
    ``attention_k_eq_v`` is set; their checkpoint then ships k_proj only and vLLM loads it into both the K and V
    slots of qkv_proj (and the KV cache still stores K and V).
    """
    global_hd = _int(tc.get("global_head_dim"))
    k_eq_v = bool(tc.get("attention_k_eq_v"))
    global_kv = _int(tc.get("num_global_key_value_heads")) if k_eq_v else None
    if not global_hd and not global_kv:
        return None
    shape = {"head_dim": global_hd or facts["head_dim"], "kv_heads": global_kv or facts["kv_heads"], "k_eq_v": k_eq_v}
    if shape["head_dim"] == facts["head_dim"] and shape["kv_heads"] == facts["kv_heads"] and not k_eq_v:
        return None
    return shape


def derived_max_model_len(facts: dict, vllm_version: str | None = None) -> int:
    """The maximum model length vLLM derives from the config (``_get_and_verify_max_len``).

    RoPE scaling: types other than su/longrope/llama3 multiply by ``factor``; yarn starts from
    ``original_max_position_embeddings`` (vLLM <= 0.28; 0.31+ treats yarn as already scaled); Gemma 3's
    length is already scaled. No length key at all: vLLM assumes 2048.
    """
    derived: float = facts.get("max_pos") or 2048
    if facts.get("model_max_length"):
        derived = facts["model_max_length"]
    rope = facts.get("rope")
    model_type = facts.get("type") or ""
    if rope and "gemma3" not in model_type:
        rope_type = rope.get("type")
        key = parse_version(vllm_version)
        newest = key is not None and at_least(key, 0, 31)
        if rope_type not in ("su", "longrope", "llama3") and not (newest and rope_type in ("yarn", "deepseek_yarn")):
            factor = rope.get("factor", 1.0)
            if rope_type == "yarn" and rope.get("orig"):
                derived = rope["orig"]
            derived *= factor
    return int(derived)


def quantization_name(quant: dict | None) -> str | None:
    if not quant:
        return None
    method = quant.get("method")
    if method in ("gptq_marlin",):
        return "gptq"
    if method in ("awq_marlin",):
        return "awq"
    if method == "modelopt" and quant.get("format") == "mixed_precision":
        return "modelopt_mixed"  # vLLM's override_quantization_method for quant_algo MIXED_PRECISION
    return method


def model_info_from_facts(facts: dict, name: str, source: str) -> ModelInfo:
    """Build a ``ModelInfo`` from compact facts (a config.json's or a catalog entry's)."""
    from vramlint import weights  # local: weights imports this module

    layers = int(facts.get("layers") or 0)
    pattern = facts.get("pattern")
    layer_types = [LAYER_LETTERS.get(ch, "full_attention") for ch in pattern] if pattern else None
    mla = facts.get("mla")
    moe = facts.get("moe") or {}
    quant = facts.get("quant")
    info = ModelInfo(
        name=name,
        source=source,
        architecture=facts.get("arch"),
        num_layers=layers,
        hidden_size=int(facts.get("hidden") or 0),
        num_attention_heads=int(facts.get("heads") or 0),
        num_kv_heads=int(facts.get("kv_heads") or facts.get("heads") or 0),
        head_dim=int(facts.get("head_dim") or 0),
        vocab_size=int(facts.get("vocab") or 0),
        intermediate_size=facts.get("inter"),
        max_position_embeddings=derived_max_model_len(facts),
        torch_dtype=facts.get("dtype"),
        quantization=quantization_name(quant),
        quant_bits=quant.get("bits") if quant else None,
        tie_word_embeddings=bool(facts.get("tie")),
        is_mla=mla is not None,
        kv_lora_rank=mla.get("kv_lora_rank") if mla else None,
        qk_rope_head_dim=mla.get("qk_rope") if mla else None,
        sliding_window=facts.get("sliding_window"),
        layer_types=layer_types,
        num_experts=moe.get("experts"),
        num_experts_per_tok=moe.get("top_k"),
        model_type=facts.get("type"),
        max_len_key=facts.get("max_pos_key"),
        attention_chunk_size=facts.get("attention_chunk_size"),
        quant_group_size=quant.get("group") if quant else None,
    )
    info.extra["facts"] = facts
    if facts.get("mamba"):
        info.extra["mamba"] = facts["mamba"]
    if facts.get("linear"):
        info.extra["linear_attention"] = facts["linear"]
    if facts.get("rope"):
        info.extra["rope_scaling"] = facts["rope"]
    counted = weights.count_parameters(facts)
    info.param_count = facts.get("params") or counted.total
    if facts.get("weight_bytes"):
        info.weight_bytes = int(facts["weight_bytes"])
        info.weight_bytes_source = facts.get("weight_bytes_source") or "catalog"
    else:
        info.weight_bytes = weights.weight_bytes(facts, counted=counted)
        info.weight_bytes_source = "computed from architecture"
    return info


def model_info_from_config(cfg: dict, name: str, source: str, hf_quant_config: dict | None = None) -> ModelInfo:
    """``ModelInfo`` from a Hugging Face config.json dict."""
    return model_info_from_facts(facts_from_config(cfg, hf_quant_config), name, source)
