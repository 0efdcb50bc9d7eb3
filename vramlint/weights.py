"""Parameter count and weight bytes computed from architecture facts (see ``modelconfig`` for the keys).

What vLLM's "Model loading took X GiB" measures is every tensor allocated while the model is built:
the parameters as stored on the GPU (quantized linear layers packed, the rest in the model dtype) plus
non-persistent buffers, of which the RoPE ``cos_sin_cache`` is the one that matters (32 MiB for Llama 3).
``weight_bytes`` gives the parameters of the whole model; ``weight_bytes_per_rank`` one tensor/pipeline
parallel rank, optionally with the RoPE buffer.

Quantized storage per parameter of a quantized linear layer (bits b, group g):
    AWQ/GPTQ   b/8 + 2/g (fp16 scales) + b/8/g (packed zero points)
    FP8        1 (+ fp32 scales: per tensor, per channel, or per 128x128 block; on the Marlin kernel a block-quantized
               layer holds a model-dtype scale per 128 input columns and output row instead: 1 + 2/128)
    MXFP4      0.5 + 1/32 (uint8 exponent per 32)          NVFP4  0.5 + 1/16 (fp8 scale per 16)
    bnb nf4    0.5 + 4/64 (fp32 absmax per 64; double quantisation: 1/64 + 4/(64*256))
Embeddings, lm_head, norms and MoE routers stay in the model dtype unless the checkpoint says otherwise.
"""

from __future__ import annotations

import copy
from dataclasses import field

from vramlint.intparse import small_int
from vramlint.lean_dataclass import dataclass

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1, "fp8": 1}
VOCAB_PADDING = 64  # vLLM DEFAULT_VOCAB_PADDING_SIZE


@dataclass
class ParamCount:
    """Parameters by kind. ``linear`` entries are quantizable matrices (kind -> list of (in, out, n))."""

    total: int = 0
    embed: int = 0
    lm_head: int = 0
    norms: int = 0
    other: int = 0  # biases, routers, conv, SSM vectors: stay in model dtype
    vision: int = 0
    # parameters vLLM allocates that the checkpoint does not hold (Gemma 4's V slot filled with a copy of K):
    # in ``linear`` (they take memory) but not in ``total``
    duplicated: int = 0
    linear: dict[str, int] = field(default_factory=dict)  # kind -> parameters in quantizable matrices
    # per kind: sum over matrices of output rows (for per-channel scales) and input columns (GPTQ g_idx)
    linear_rows: dict[str, int] = field(default_factory=dict)

    def add_linear(self, kind: str, fan_in: int, fan_out: int, count: int = 1) -> None:
        n = fan_in * fan_out * count
        self.linear[kind] = self.linear.get(kind, 0) + n
        self.linear_rows[kind] = self.linear_rows.get(kind, 0) + fan_out * count


def _attention(facts: dict, pc: ParamCount, layers: int) -> None:
    hidden = facts["hidden"]
    heads = facts.get("heads") or 0
    kv = facts.get("kv_heads") or heads
    hd = facts.get("head_dim") or (hidden // heads if heads else 0)
    mla = facts.get("mla")
    if mla:
        rope, nope, v = mla["qk_rope"], mla["qk_nope"], mla["v_head"]
        q_lora, kv_lora = mla.get("q_lora_rank"), mla["kv_lora_rank"]
        if q_lora:
            pc.add_linear("attn", hidden, q_lora, layers)
            pc.add_linear("attn", q_lora, heads * (nope + rope), layers)
            pc.norms += q_lora * layers
        else:
            pc.add_linear("attn", hidden, heads * (nope + rope), layers)
        pc.add_linear("attn", hidden, kv_lora + rope, layers)
        pc.norms += kv_lora * layers
        pc.add_linear("attn", kv_lora, heads * (nope + v), layers)
        pc.add_linear("attn", heads * v, hidden, layers)
        idx = facts.get("indexer")
        if idx:
            # DeepSeek sparse-attention indexer: wq_b (q_lora -> heads x head_dim), wk (hidden -> head_dim),
            # k_norm (LayerNorm), weights_proj (hidden -> heads)
            pc.add_linear("attn", q_lora or hidden, idx["heads"] * idx["head_dim"], layers)
            pc.add_linear("attn", hidden, idx["head_dim"], layers)
            pc.norms += 2 * idx["head_dim"] * layers
            pc.other += hidden * idx["heads"] * layers
        return
    full = facts.get("full_attn")
    if full:
        # Gemma 4: the full-attention layers have their own head size and KV heads; with k_eq_v their checkpoint
        # has no v_proj, but vLLM's QKVParallelLinear still allocates the V slot and loads K into it.
        # MiMo-V2-Flash: their own KV heads (and possibly query heads), a V head narrower than the QK head.
        n_full = (facts.get("pattern") or "").count("F")
        fhd, fkv = full["head_dim"], full["kv_heads"]
        fheads, fvhd = full.get("heads") or heads, full.get("v_head_dim") or fhd
        pc.add_linear("attn", hidden, fheads * fhd, n_full)
        pc.add_linear("attn", hidden, fkv * (fhd + fvhd), n_full)
        pc.add_linear("attn", fheads * fvhd, hidden, n_full)
        if full.get("k_eq_v"):
            pc.duplicated += hidden * fkv * fhd * n_full
        if facts.get("qk_norm"):
            pc.norms += 2 * fhd * n_full
        if "F" in (facts.get("sinks") or ""):
            pc.other += fheads * n_full
        layers -= n_full
    elif "F" in (facts.get("sinks") or ""):
        pc.other += heads * (facts.get("pattern") or "").count("F")
    vhd = facts.get("v_head_dim") or hd  # MiMo-V2: V (and the o_proj input) narrower than Q and K
    q_out = heads * hd * (2 if facts.get("attn_gate") else 1)
    pc.add_linear("attn", hidden, q_out, layers)
    pc.add_linear("attn", hidden, kv * (hd + vhd), layers)
    pc.add_linear("attn", heads * vhd, hidden, layers)
    if "S" in (facts.get("sinks") or ""):
        pc.other += heads * (facts.get("pattern") or "").count("S")  # MiMo-V2's attention sink bias
    bias = facts.get("attn_bias")
    if bias:
        pc.other += (heads * hd + 2 * kv * hd) * layers
        if bias == "all":
            pc.other += hidden * layers
    if facts.get("qk_norm"):
        pc.norms += 2 * hd * layers
    if facts.get("type") == "gpt_oss":
        pc.other += heads * layers  # attention sinks


def _mlp(facts: dict, pc: ParamCount, kind: str, inter: int, count: int, hidden: int = 0) -> None:
    hidden = hidden or facts["hidden"]
    if not inter or not count:
        return
    if facts.get("mlp") == "mlp":
        pc.add_linear(kind, hidden, inter, count)
        pc.add_linear(kind, inter, hidden, count)
        if facts.get("type") in ("gpt2", "opt", "gpt_bigcode", "phi", "starcoder2"):
            pc.other += (inter + hidden) * count
    else:
        pc.add_linear(kind, hidden, 2 * inter, count)
        pc.add_linear(kind, inter, hidden, count)
        if facts.get("mlp_bias") and kind == "mlp":
            pc.other += (2 * inter + hidden) * count


def _moe_layer(facts: dict, pc: ParamCount, count: int) -> None:
    moe = facts["moe"]
    hidden = facts["hidden"]
    experts, inter = moe["experts"], moe.get("inter") or facts.get("inter") or 0
    latent = moe.get("latent") or 0
    # latent MoE (vLLM NemotronHMoE with moe_latent_size): the routed experts work at the latent width, between
    # fc1_latent_proj (hidden -> latent) and fc2_latent_proj (latent -> hidden); the router and the shared
    # experts stay at the hidden width
    _mlp(facts, pc, "experts", inter, experts * count, hidden=latent)
    if latent:
        pc.add_linear("latent", hidden, latent, count)
        pc.add_linear("latent", latent, hidden, count)
    pc.other += hidden * experts * count  # router
    if facts.get("type") == "gemma4_text":
        pc.other += (hidden + experts) * count  # Gemma4Router scale and per_expert_scale
    if facts.get("type") == "gpt_oss":
        pc.other += (2 * inter + hidden + 1) * experts * count  # expert and router biases
    if moe.get("shared"):
        _mlp(facts, pc, "shared", moe.get("shared_inter") or inter, count)
        if facts.get("type") in ("qwen2_moe", "qwen3_next", "qwen3_5_moe_text"):
            pc.other += hidden * count  # shared_expert_gate
    if facts.get("type") in ("deepseek_v3", "deepseek_v32", "kimi_k2", "nemotron_h", "glm4_moe", "glm_moe_dsa",
                             "minimax_m2", "mimo_v2_flash", "mimo_v2"):
        pc.other += experts * count  # e_score_correction_bias


def _mamba_layers(facts: dict, pc: ParamCount, count: int) -> None:
    m = facts["mamba"]
    hidden = facts["hidden"]
    inner, d_state, d_conv = m["inner"], m["d_state"], m["d_conv"]
    if m.get("version") == 2:
        groups, nheads = m.get("n_groups", 1), m["n_heads"]
        conv_dim = inner + 2 * groups * d_state
        pc.add_linear("mamba", hidden, 2 * inner + 2 * groups * d_state + nheads, count)
        pc.other += (conv_dim * d_conv + conv_dim + 3 * nheads + inner) * count
        pc.add_linear("mamba", inner, hidden, count)
    else:
        dt_rank = -(-hidden // 16)
        pc.add_linear("mamba", hidden, 2 * inner, count)
        pc.other += (inner * d_conv + inner) * count
        pc.add_linear("mamba", inner, dt_rank + 2 * d_state, count)
        pc.other += (dt_rank * inner + inner + inner * d_state + inner) * count
        pc.add_linear("mamba", inner, hidden, count)
        if facts.get("type") == "jamba":
            pc.norms += (dt_rank + 2 * d_state) * count


def _linear_attention_layers(facts: dict, pc: ParamCount, count: int) -> None:
    la = facts["linear"]
    hidden = facts["hidden"]
    key_dim, value_dim = la["k_heads"] * la["k_dim"], la["v_heads"] * la["v_dim"]
    pc.add_linear("linear_attn", hidden, 2 * key_dim + 2 * value_dim, count)  # q, k, v, z
    pc.add_linear("linear_attn", hidden, 2 * la["v_heads"], count)  # b, a
    pc.other += ((2 * key_dim + value_dim) * la["conv"] + 2 * la["v_heads"]) * count
    pc.norms += la["v_dim"] * count
    pc.add_linear("linear_attn", value_dim, hidden, count)


def _vision(facts: dict, pc: ParamCount) -> None:
    v = facts.get("vision")
    if not v:
        return
    h, layers = v["hidden"], v["layers"]
    inter = v.get("inter") or 4 * h
    if v.get("style") == "gemma4":
        # bias-free attention with q/k norms, GLU MLP, 4 RMSNorms; patch projection, 2-D position table,
        # embed_vision projection (no bias, weightless pre-norm)
        per_layer = 4 * h * h + 2 * (v.get("head_dim") or 0) + 3 * h * inter + 4 * h
        embed = (v.get("channels") or 3) * (v.get("patch") or 16) ** 2 * h + (v.get("positions") or 0) * h
        pc.vision = layers * per_layer + embed + h * facts["hidden"]
        return
    if v.get("style") == "qwen2_5_vl":
        # Qwen2_5_VisionTransformer: biased qkv and proj, two RMSNorms, biased GLU MLP; Conv3d patch embedding
        # without bias; merger RMSNorm(h), Linear(4h, 4h), Linear(4h, out), biased
        per_layer = 4 * h * h + 4 * h + 2 * h + 3 * h * inter + 2 * inter + h
        patch, channels = v.get("patch") or 14, v.get("channels") or 3
        embed = channels * (v.get("temporal") or 2) * patch * patch * h
        wide, out = h * (v.get("spatial_merge") or 2) ** 2, v.get("out") or facts["hidden"]
        pc.vision = layers * per_layer + embed + h + wide * wide + wide + wide * out + out
        return
    if v.get("style") == "pixtral":
        # Pixtral tower (vLLM PixtralHFVisionModel / pixtral.VisionTransformer): bias-free q/k/v/o, GLU MLP, two
        # RMSNorms; bias-free Conv2d patch embedding, ln_pre, 2-D RoPE (no learned positions). Projector
        # (Mistral3MultiModalProjector / PatchMerger + VisionLanguageAdapter): RMSNorm(h), the patch merger
        # Linear(merge^2 h, h), Linear(h, text hidden), Linear(text hidden, text hidden), bias-free
        per_layer = 4 * h * h + 3 * h * inter + 2 * h
        patch, channels = v.get("patch") or 14, v.get("channels") or 3
        merge = v.get("spatial_merge") or 1
        embed = channels * patch * patch * h + h
        text = facts["hidden"]
        projector = h + (merge * merge * h * h if merge > 1 else 0) + h * text + text * text
        pc.vision = layers * per_layer + embed + projector
        return
    per_layer = 4 * h * h + 4 * h + 2 * h * inter + inter + h + 4 * h
    if v.get("style") == "llava_next":
        # LLaVA-NeXT as vLLM builds it (llava.py init_vision_tower_for_llava, clip.py CLIPVisionModel): the CLIP
        # tower up to vision_feature_layer (-2: 23 of 24 layers), no post-layernorm (require_post_norm False);
        # bias-free Conv2d patch embedding, class embedding, one learned position per patch and the class token,
        # pre_layrnorm; LlavaMultiModalProjector Linear(h, text) + Linear(text, text), biased; image_newline
        feature = int(v.get("feature_layer") or -1)
        built = layers + feature + 1 if feature < 0 else feature
        patch, channels, text = v.get("patch") or 14, v.get("channels") or 3, facts["hidden"]
        positions = (v["image"] // patch) ** 2 + 1
        embed = channels * patch * patch * h + h + positions * h + 2 * h
        pc.vision = built * per_layer + embed + h * text + text + text * text + text + text
        return
    if v.get("style") == "llama4":
        # Llama4VisionModel (vLLM mllama4.py): the generic block (biased q/k/v/o and fc1/fc2, two LayerNorms);
        # a bias-free unfold-convolution patch embedding, a class embedding, one learned position per patch and
        # for the class token, layernorm_pre/post; the pixel-shuffle adapter Llama4VisionMLP(intermediate_size ->
        # projector_input_dim -> projector_output_dim) and the projector Linear(vision_output_dim, text hidden),
        # bias-free (multi_modal_projector_bias false)
        patch, channels = v.get("patch") or 14, v.get("channels") or 3
        positions = (v["image"] // patch) ** 2 + 1 if v.get("image") else 0
        embed = channels * patch * patch * h + h + positions * h + 4 * h
        adapter_in, adapter = inter, v.get("adapter") or 0
        out = v.get("out") or adapter
        projector = adapter_in * adapter + adapter * out + (v.get("vision_out") or out) * facts["hidden"]
        pc.vision = layers * per_layer + embed + projector
        return
    if v.get("style") == "qwen2_vl":
        # Qwen2VisionTransformer: the generic block (biased qkv, proj, fc1, fc2; two LayerNorms); Conv3d patch
        # embedding without bias; merger LayerNorm(h), Linear(4h, 4h), Linear(4h, out), biased
        patch, channels = v.get("patch") or 14, v.get("channels") or 3
        embed = channels * (v.get("temporal") or 2) * patch * patch * h
        wide, out = h * (v.get("spatial_merge") or 2) ** 2, v.get("out") or facts["hidden"]
        pc.vision = layers * per_layer + embed + 2 * h + wide * wide + wide + wide * out + out
        return
    patch, channels = v.get("patch") or 14, v.get("channels") or 3
    embed = channels * (v.get("temporal") or 1) * patch * patch * h + h
    if v.get("image"):
        embed += (v["image"] // patch) ** 2 * h
    embed += (v.get("positions") or 0) * h
    if v.get("merge"):
        # Qwen3-VL patch merger: LayerNorm(h), fc1 (4h -> 4h), fc2 (4h -> out), biased; the deepstack mergers
        # normalise after the shuffle (LayerNorm(4h))
        wide, out = h * v["merge"] ** 2, v.get("out") or facts["hidden"]
        merger = wide * wide + wide + wide * out + out
        projector = merger + 2 * h + v.get("deepstack", 0) * (merger + 2 * wide)
        pc.vision = layers * per_layer + embed + projector
        return
    projector = h * facts["hidden"]
    pc.vision = layers * per_layer + embed + 2 * h + projector


# One run sizes the same model on every catalog GPU, for every fleet GPU and every server that names it: the
# counts depend on the facts alone. Keyed by id(facts) with the facts held in the entry (so the id is not reused
# while cached); facts are built once and never changed after (modelconfig.facts_from_config, the catalog).
_MEMO_LIMIT = 1024
_counted: dict[int, tuple[dict, ParamCount]] = {}
_per_rank: dict[tuple, tuple[dict, int]] = {}


def count_parameters(facts: dict) -> ParamCount:
    """Parameters of the model vLLM loads (MTP / next-token-prediction layers excluded), by kind (a copy of the
    run's count for these facts: callers may change it)."""
    hit = _counted.get(id(facts))
    if hit is None or hit[0] is not facts:
        if len(_counted) >= _MEMO_LIMIT:
            _counted.clear()
        hit = _counted[id(facts)] = (facts, _count_parameters(facts))
    pc = copy.copy(hit[1])
    pc.linear, pc.linear_rows = dict(pc.linear), dict(pc.linear_rows)
    return pc


def _count_parameters(facts: dict) -> ParamCount:
    pc = ParamCount()
    hidden, layers = facts.get("hidden") or 0, facts.get("layers") or 0
    vocab = facts.get("vocab") or 0
    if not hidden or not layers:
        return pc
    pattern = facts.get("pattern") or "F" * layers
    attention_layers = sum(1 for ch in pattern if ch in "FSC")
    mamba_layers = pattern.count("M")
    linear_layers = pattern.count("L")
    if facts.get("mamba_parallel"):
        mamba_layers = layers
    pc.embed = vocab * hidden
    pc.lm_head = 0 if facts.get("tie") else vocab * hidden
    if facts.get("type") in ("gpt2", "opt") and facts.get("max_pos"):
        pc.embed += (facts["max_pos"] + (2 if facts.get("type") == "opt" else 0)) * hidden  # learned positions
    _attention(facts, pc, attention_layers)
    if mamba_layers and facts.get("mamba"):
        _mamba_layers(facts, pc, mamba_layers)
    if linear_layers and facts.get("linear"):
        _linear_attention_layers(facts, pc, linear_layers)
    # Feed-forward: hybrid patterns (Nemotron-H) put MLPs in their own layers ("-" dense, "E" MoE).
    if "-" in pattern or "E" in pattern:
        _mlp(facts, pc, "mlp", facts.get("inter") or 0, pattern.count("-"))
        if facts.get("moe") and pattern.count("E"):
            _moe_layer(facts, pc, pattern.count("E"))
        norms_per_layer = 1
    else:
        moe = facts.get("moe")
        if moe:
            dense = len(moe.get("dense_layers") or [])
            _mlp(facts, pc, "mlp", moe.get("dense_inter") or facts.get("inter") or 0, dense)
            _moe_layer(facts, pc, layers - dense)
            if moe.get("parallel_mlp_inter"):
                _mlp(facts, pc, "mlp", moe["parallel_mlp_inter"], layers - dense)
        else:
            _mlp(facts, pc, "mlp", facts.get("inter") or 0, layers)
        norms_per_layer = 4 if (facts.get("type") or "").startswith(("gemma2", "gemma3", "gemma4")) else 2
        if facts.get("type") == "gemma4_text":
            norms_per_layer += 3 if moe else 0  # post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2
            pc.other += layers  # layer_scalar
    pc.norms += norms_per_layer * hidden * layers + hidden
    if facts.get("type") in ("gpt2", "opt", "phi", "starcoder2", "falcon", "gpt_bigcode"):
        pc.norms *= 2  # LayerNorm with bias
    if facts.get("ple") or facts.get("kv_shared") or facts.get("audio"):
        _gemma4_edge(facts, pc, pattern)
    _vision(facts, pc)
    pc.total = pc.embed + pc.lm_head + pc.norms + pc.other + pc.vision + sum(pc.linear.values()) - pc.duplicated
    return pc


def _gemma4_edge(facts: dict, pc: ParamCount, pattern: str) -> None:
    """Gemma 4 E2B / E4B as vLLM 0.33 builds them (vllm/model_executor/models/gemma4.py, gemma4_mm.py).

    Per-layer embeddings: ``embed_tokens_per_layer`` (a VocabParallelEmbedding of vocab_size_per_layer_input x
    layers x hidden_size_per_layer_input), ``per_layer_model_projection`` (ColumnParallelLinear, hidden -> layers x
    that width) and its RMSNorm; in every layer ``per_layer_input_gate`` and ``per_layer_projection``
    (ReplicatedLinear: whole on every rank) and ``post_per_layer_input_norm``.
    KV-shared layers (the last num_kv_shared_layers): only q_proj and o_proj, no k/v projections and no k_norm
    (their K and V are an earlier layer's); with use_double_wide_mlp their MLP is twice as wide.
    Audio tower: transformers' Gemma4AudioModel (AutoModel, not tensor parallel: whole on every rank) and the
    embed_audio projection; per conformer layer two feed-forward blocks (H -> 4H -> H, two RMSNorms each), attention
    (q, k, v, post and relative_k_proj, H x H each, per_dim_scale), a light conv block (linear_start H -> 2H,
    depthwise conv, linear_end, two RMSNorms) and three RMSNorms; before them two 3x3 conv layers with LayerNorms and
    the input projection, after them output_proj (with bias). The clipped linears' four scalar bounds are left out."""
    hidden, layers = facts["hidden"], facts["layers"]
    ple = facts.get("ple")
    if ple:
        dim = ple["dim"]
        if ple.get("embed", True):  # with pipeline parallel only the first stage holds them
            width = (ple.get("model_layers") or layers) * dim  # one slice per decoder layer of the whole model
            pc.embed += ple["vocab"] * width
            pc.add_linear("ple", hidden, width)
            pc.norms += dim
        pc.other += 2 * hidden * dim * layers
        pc.norms += hidden * layers
    shared = facts.get("kv_shared") or 0
    if shared:
        heads = facts.get("heads") or 0
        kv = facts.get("kv_heads") or heads
        hd = facts.get("head_dim") or (hidden // heads if heads else 0)
        full = facts.get("full_attn")
        for ch in pattern[-shared:]:
            kv_h, size = (full["kv_heads"], full["head_dim"]) if ch == "F" and full else (kv, hd)
            pc.linear["attn"] = pc.linear.get("attn", 0) - 2 * hidden * kv_h * size
            pc.linear_rows["attn"] = pc.linear_rows.get("attn", 0) - 2 * kv_h * size
            if ch == "F" and full and full.get("k_eq_v"):
                pc.duplicated -= hidden * kv_h * size
            if facts.get("qk_norm"):
                pc.norms -= size  # k_norm (v_norm has no weight)
        if facts.get("double_wide"):
            _mlp(facts, pc, "mlp", facts.get("inter") or 0, shared)  # intermediate_size x 2 in those layers
    pc.other += audio_tower_parameters(facts)


def audio_tower_parameters(facts: dict) -> int:
    """Parameters of Gemma 4's audio tower and its embed_audio projection (see :func:`_gemma4_edge`), 0 without."""
    audio = facts.get("audio")
    if not audio or not audio.get("hidden") or not audio.get("layers"):
        return 0
    h, c0, c1 = audio["hidden"], audio["sub"][0], audio["sub"][1]
    head_dim = h // max(1, audio.get("heads") or 1)
    subsample = 9 * c0 + c0 + 9 * c0 * c1 + c1 + (c0 // 4) * c1 * h
    per_layer = 24 * h * h + (audio.get("conv") or 0) * h + 9 * h + head_dim
    out = audio.get("out") or h
    return subsample + audio["layers"] * per_layer + h * out + out + out * (facts.get("hidden") or 0)


def _layer_index(pattern: str) -> int | None:
    """The layer a skip pattern names (``model.layers.0.mlp.down_proj`` -> 0), None for wildcards."""
    parts = pattern.split(".")
    for i, part in enumerate(parts[:-1]):
        if part == "layers" and parts[i + 1].isdigit():
            return int(parts[i + 1])
    return None


def _names_a_norm(pattern: str) -> bool:
    """Whether a skip entry names a norm (``model.layers.*.post_attention_layernorm``, ``self_attn.q_norm``):
    vLLM matches the list against linear layers' prefixes only (``is_layer_skipped``, exact match for fp8), so a
    norm in it leaves every linear layer as it is, whatever words its name has."""
    last = pattern.lower().rstrip("*").rstrip(".").split(".")[-1]
    return last.endswith("norm") or last.startswith("ln_") or last in ("ln", "ln_f")


def _per_layer_skips(quant: dict) -> dict[str, set[int]]:
    """Kinds left unquantized in some layers only (Meta's FP8 checkpoints keep the first and last layers'
    feed-forward in bf16): kind -> the layer indices."""
    out: dict[str, set[int]] = {}
    for pattern in quant.get("skip") or []:
        index = _layer_index(pattern)
        if index is None or _names_a_norm(pattern):
            continue
        p = pattern.lower()
        if p.endswith((".gate", "router")):
            continue  # MoE router: not a quantized linear kind
        if "self_attn" in p or ".attn" in p:
            out.setdefault("attn", set()).add(index)
        elif "shared_expert" in p:
            out.setdefault("shared", set()).add(index)
        elif ".mlp" in p:
            out.setdefault("mlp", set()).add(index)
    return out


def _skipped_kinds(quant: dict) -> set[str]:
    """Which kinds of layers a quantization config leaves unquantized (besides embeddings/lm_head/norms)."""
    kinds: set[str] = set()
    for pattern in quant.get("skip") or []:
        if _layer_index(pattern) is not None or _names_a_norm(pattern):
            continue  # one layer only: see _per_layer_skips; a norm is no linear layer
        p = pattern.lower()
        if "self_attn" in p or p.endswith(".attn") or "attention" in p:
            kinds.add("attn")
        if "shared_expert" in p:
            kinds.add("shared")
        elif p.endswith("mlp") or p.endswith("mlp.*"):
            kinds.update({"mlp", "experts", "shared"})
        elif p.endswith(".mlp*"):
            kinds.add("mlp")  # Gemma 4 NVFP4: the dense MLP (its experts live under .experts, quantized)
        elif p.startswith("re:") and "mlp\\.(" in p and "expert" not in p:
            kinds.add("mlp")  # compressed-tensors regex naming the dense MLP projections (Kimi-K2.5)
        if "mixer" in p or "mamba" in p:
            kinds.add("mamba")
        if "linear_attn" in p:
            kinds.add("linear_attn")
        if "vision" in p or "visual" in p:
            kinds.add("vision")
        if "lm_head" in p:
            kinds.add("lm_head")
    if quant.get("method") == "mxfp4":
        kinds.update({"attn", "mlp", "shared", "linear_attn", "mamba"})  # gpt-oss: only experts are MXFP4
    return kinds


def quantized_bytes_per_param(quant: dict) -> float:
    """Storage of one parameter of a quantized linear layer, scales and zero points included."""
    method = quant.get("method")
    bits = quant.get("bits") or 16
    group = quant.get("group")
    fmt = quant.get("format")
    if method == "mxfp4":
        return 0.5 + 1 / 32
    if fmt in ("nvfp4",) or (method == "modelopt" and bits == 4 and (group or 16) == 16):
        return 0.5 + 1 / (group or 16)
    if method == "bitsandbytes":
        if bits == 4:
            return 0.5 + (1 / 64 + 4 / (64 * 256) if quant.get("double_quant") else 4 / 64)
        return 1.0
    if bits == 8 and (method in ("fp8", "fbgemm_fp8", "modelopt") or fmt in ("fp8", "w8a8")):
        block = quant.get("block")
        if block and quant.get("marlin_scale_bytes"):
            # weight-only FP8 on the Marlin kernel: the block scales become one scale per block[1] input columns
            # for every output row, in the model dtype (vramlint.budget.rank_weights.fp8_marlin)
            return 1.0 + quant["marlin_scale_bytes"] / block[1]
        return 1.0 + (4 / (128 * 128) if block else 0.0)
    if bits in (2, 3, 4, 8) and method in ("awq", "gptq", "marlin", "gptq_marlin", "awq_marlin", "compressed-tensors",
                                            "autoround", "auto-round", "modelopt"):
        per = bits / 8
        if group and group > 0:
            per += 2 / group
            if quant.get("zero_point"):
                per += bits / 8 / group
        return per
    return 2.0


def _linear_bytes(pc: ParamCount, quant: dict | None, dtype_bytes: float, divide: dict[str, float],
                  layers: int = 0) -> float:
    total = 0.0
    if quant and quant.get("kinds") is not None:
        # ModelOpt MIXED_PRECISION: each kind in its own format, a kind not listed in the model dtype (the
        # MIXED_PRECISION FP8 layers are per-tensor: one fp32 scale per matrix, no bytes worth counting)
        for kind, n in pc.linear.items():
            own = quant["kinds"].get(kind)
            total += n / divide.get(kind, 1.0) * (quantized_bytes_per_param({"method": "modelopt", **own}) if own
                                                  else dtype_bytes)
        return total
    skipped = _skipped_kinds(quant) if quant else set()
    partly = _per_layer_skips(quant) if quant else {}
    per_quant = quantized_bytes_per_param(quant) if quant else dtype_bytes
    for kind, n in pc.linear.items():
        n_rank = n / divide.get(kind, 1.0)
        if quant and kind not in skipped:
            # the share of this kind's layers kept in the model dtype by per-layer skip entries
            plain = min(1.0, len(partly.get(kind, ())) / layers) if layers else 0.0
            total += n_rank * (1 - plain) * per_quant + n_rank * plain * dtype_bytes
            if quant.get("bits") == 8 and quant.get("method") not in ("bitsandbytes",) and not quant.get("block"):
                total += (4 * pc.linear_rows[kind] / divide.get(kind, 1.0) * (1 - plain)
                          * (1 if quant.get("strategy") == "channel" else 0))
        else:
            total += n_rank * dtype_bytes
    return total


def weight_bytes(facts: dict, dtype_bytes: float = 2, counted: ParamCount | None = None) -> int:
    """Bytes of the whole model's parameters as vLLM holds them (one copy, no parallelism, no buffers).

    Unquantized tensors are in the load dtype (2 bytes: vLLM loads float32 checkpoints as fp16/bf16
    unless told ``--dtype float32``)."""
    return weight_bytes_per_rank(facts, tp=1, dtype_bytes=dtype_bytes, counted=counted, include_buffers=False)


def rope_cache_bytes(facts: dict, dtype_bytes: float = 2) -> int:
    """vLLM's non-persistent RoPE ``cos_sin_cache``: [positions, rotary_dim] in the model dtype."""
    if (facts.get("type") or "") in ("gpt2", "opt", "bloom", "gpt_bigcode", "mpt") or not facts.get("max_pos"):
        return 0
    mla = facts.get("mla")
    rotary_dim = mla["qk_rope"] if mla else int((facts.get("head_dim") or 0) * facts.get("rotary_pct", 1.0))
    positions = facts["max_pos"]
    rope = facts.get("rope") or {}
    if rope.get("type") in ("yarn", "deepseek_yarn", "linear", "dynamic") and rope.get("factor"):
        positions = int((rope.get("orig") or positions) * rope["factor"])
    if rope.get("type") == "longrope" and rope.get("orig"):
        positions = facts["max_pos"]
    extra = 0
    if facts.get("full_attn") and (facts.get("type") or "").startswith("gemma4"):
        # Gemma4RotaryEmbedding (proportional RoPE of the full-attention layers) is a second cache over the whole
        # global head size (rotary_dim = head_size, the non-rotated part zero-padded)
        extra = positions * facts["full_attn"]["head_dim"]
    return int((positions * rotary_dim + extra) * dtype_bytes)


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


# How vLLM lays out MXFP4 MoE experts on the GPU, per kernel backend: (intermediate padding, hidden padding,
# bias bytes, extra scale copy). From ``Mxfp4MoEMethod.create_weights`` / ``process_weights_after_loading``
# (vllm/model_executor/layers/quantization/mxfp4.py, 0.10.1 - 0.14) and
# ``mxfp4_round_up_hidden_size_and_intermediate_size`` (fused_moe/oracle/mxfp4.py, 0.19):
#   marlin            n % 256, k % 128: intermediate to 128, hidden to 256; scales e8m0, bias in the model dtype
#   triton            intermediate to 64; bias cast to fp32; the Hopper swizzle (triton_kernels
#                     HopperMXScaleLayout) writes a new scale tensor with rows padded to 256 while the loaded
#                     ``w*_weight_scale`` parameters stay registered, so the scales are held twice
#   flashinfer_trtllm intermediate and hidden to 256, bias fp32 (Blackwell)
#   flashinfer_cutlass intermediate and hidden to 128 (Hopper with VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1)
MXFP4_BACKENDS = ("marlin", "triton", "flashinfer_trtllm", "flashinfer_cutlass", "checkpoint")


def mxfp4_expert_bytes(hidden: int, inter: int, experts: int, backend: str = "checkpoint") -> int:
    """Bytes of one MoE layer's MXFP4 experts (w13 + w2, scales, biases) for one partition.

    ``inter`` is the intermediate size of the partition (``moe_intermediate_size / tp``), ``experts`` the experts
    the rank holds. Weights are 4-bit (two per byte), one uint8 exponent per 32 values.
    """
    if backend == "marlin":
        i_pad, h_pad, bias_bytes = _round_up(inter, 128), _round_up(hidden, 256), 2
    elif backend == "flashinfer_trtllm":
        i_pad, h_pad, bias_bytes = _round_up(inter, 256), _round_up(hidden, 256), 4
    elif backend == "flashinfer_cutlass":
        i_pad, h_pad, bias_bytes = _round_up(inter, 128), _round_up(hidden, 128), 2
    elif backend == "triton":
        i_pad, h_pad, bias_bytes = _round_up(inter, 64), hidden, 4
    else:  # "checkpoint": as stored in the safetensors files (no kernel known)
        i_pad, h_pad, bias_bytes = inter, hidden, 2
    values = 2 * i_pad * h_pad + h_pad * i_pad
    weights = values // 2
    scales = values // 32
    if backend == "triton":
        # Hopper-swizzled copy: (2I, H/32) and (H, I/32) with the first dimension padded to 256.
        scales += _round_up(2 * i_pad, 256) * (h_pad // 32) + _round_up(h_pad, 256) * (i_pad // 32)
    biases = (2 * i_pad + h_pad) * bias_bytes
    return experts * (weights + scales + biases)


def weight_bytes_per_rank(facts: dict, tp: int = 1, pp: int = 1, dtype_bytes: float = 2, include_buffers: bool = True,
                          counted: ParamCount | None = None, mxfp4_backend: str | None = None, ep_size: int = 0,
                          stage: tuple[int, int, int] | None = None, mla_dequant: bool = False) -> int:
    """Bytes one GPU holds for weights (see :func:`_weight_bytes_per_rank`), once per run for the same inputs."""
    if counted is not None:
        return _weight_bytes_per_rank(facts, tp, pp, dtype_bytes, include_buffers, counted, mxfp4_backend, ep_size,
                                      stage, mla_dequant)
    key = (id(facts), tp, pp, dtype_bytes, include_buffers, mxfp4_backend, ep_size, stage, mla_dequant)
    hit = _per_rank.get(key)
    if hit is None or hit[0] is not facts:
        if len(_per_rank) >= _MEMO_LIMIT:
            _per_rank.clear()
        hit = _per_rank[key] = (facts, _weight_bytes_per_rank(facts, tp, pp, dtype_bytes, include_buffers, None,
                                                              mxfp4_backend, ep_size, stage, mla_dequant))
    return hit[1]


def _weight_bytes_per_rank(
    facts: dict,
    tp: int = 1,
    pp: int = 1,
    dtype_bytes: float = 2,
    include_buffers: bool = True,
    counted: ParamCount | None = None,
    mxfp4_backend: str | None = None,
    ep_size: int = 0,
    stage: tuple[int, int, int] | None = None,
    mla_dequant: bool = False,
) -> int:
    """Bytes one GPU holds for weights with tensor parallel ``tp`` and pipeline parallel ``pp``.

    ``stage`` (first layer, end layer, pipeline stages) gives one pipeline stage exactly, as vLLM's models build
    it (``make_layers`` with ``get_pp_indices``; ``PPMissingLayer`` elsewhere): the stage's own decoder layers,
    the input embedding on the first stage, the final norm and the LM head on the last (with tied embeddings the
    last stage holds the embedding that serves as LM head), a vision encoder on every stage.

    ``mla_dequant``: the MLA attention backend runs (vLLM 0.7+): for a quantized ``kv_b_proj`` it keeps
    dequantized copies of its two halves, W_UK and W_UV, in the model dtype beside the quantized weight
    (``MLACommonImpl.process_weights_after_loading``: "we just store fp16/bf16 copies and perform the bmm's in
    16-bit"), kv_lora_rank x heads per rank x (qk_nope_head_dim + v_head_dim) per layer, inside the memory vLLM
    logs as the model's.

    Column/row-parallel matrices split by ``tp``; KV projections are replicated when there are fewer KV
    heads than ranks; embeddings and lm_head are vocab-parallel (vocab padded to 64 x tp); norms, routers,
    MLA down-projections and biases are replicated. With expert parallel (``ep_size`` ranks, DP x TP) whole
    experts spread over the ranks, each keeping its full intermediate size. Pipeline parallel divides the
    layers evenly (the first rank also holds the embedding, the last the lm_head: taken as the largest).
    """
    if stage is not None and stage[2] > 1 and facts.get("layers"):
        start, end, _ = stage
        layers = facts["layers"]
        part = pipeline_stage_facts(facts, start, end)
        own = weight_bytes_per_rank(part, tp=tp, dtype_bytes=dtype_bytes, include_buffers=include_buffers,
                                    mxfp4_backend=mxfp4_backend, ep_size=ep_size, mla_dequant=mla_dequant)
        ends = vocab_matrices_per_rank(facts, tp, dtype_bytes)
        # ``own`` holds the vocabulary matrices of a whole model (one if tied): keep the embedding on the first
        # stage, the LM head (or the tied embedding serving as one) and the final norm on the last
        own -= ends["embed"] + ends["lm_head"] + facts.get("hidden", 0) * dtype_bytes
        if start == 0:
            own += ends["embed"]
        if end >= layers:
            own += (ends["lm_head"] or ends["embed"]) + facts.get("hidden", 0) * dtype_bytes
        return int(own)
    pc = counted or count_parameters(facts)
    quant = facts.get("quant")
    tp = max(1, int(tp))
    pp = max(1, int(pp))
    heads = facts.get("heads") or 1
    kv = facts.get("kv_heads") or heads
    divide: dict[str, float] = {k: float(tp) for k in pc.linear}
    if "latent" in divide:
        divide["latent"] = 1.0  # NemotronHMoE builds the latent projections as ReplicatedLinear: whole on every rank
    full = facts.get("full_attn")
    if tp > 1 and not facts.get("mla") and "attn" in pc.linear and (kv < tp or (full and full["kv_heads"] < tp)):
        # k/v projections replicated: each rank holds one KV head's worth instead of kv/tp.
        hidden, hd = facts["hidden"], facts.get("head_dim") or 0
        own_kv = facts.get("pattern") or "F" * facts["layers"]
        if facts.get("kv_shared"):
            own_kv = own_kv[:-facts["kv_shared"]]  # Gemma 4's KV-shared layers have no k/v projections
        layers = sum(1 for ch in own_kv if ch in "FSC")
        v_hd = facts.get("v_head_dim") or hd
        shapes = [(kv, hd + v_hd, layers)]
        if full:
            n_full = own_kv.count("F")
            shapes = [(kv, hd + v_hd, layers - n_full),
                      (full["kv_heads"], full["head_dim"] + (full.get("v_head_dim") or full["head_dim"]), n_full)]
        attn = pc.linear["attn"]
        per_rank = attn / tp
        for heads_kv, kv_size, count in shapes:
            if heads_kv < tp:
                kv_params = hidden * heads_kv * kv_size * count
                per_rank += kv_params / heads_kv - kv_params / tp
        divide["attn"] = attn / per_rank
    if tp > 1 and facts.get("mla") and "attn" in pc.linear:
        mla, hidden = facts["mla"], facts["hidden"]
        layers = facts["layers"]
        replicated = (hidden * (mla["kv_lora_rank"] + mla["qk_rope"]) + hidden * (mla.get("q_lora_rank") or 0)) * layers
        attn = pc.linear["attn"]
        divide["attn"] = attn / ((attn - replicated) / tp + replicated)
    moe = facts.get("moe") or {}
    experts_rank = moe.get("experts") or 0
    if ep_size > 1 and "experts" in pc.linear and experts_rank:
        # Expert parallel (vLLM FusedMoE ``determine_expert_map``): whole experts spread over the EP ranks
        # (DP x TP), the remainder on the first ranks; each expert keeps its full intermediate size.
        experts_rank = -(-moe["experts"] // ep_size)
        divide["experts"] = moe["experts"] / experts_rank
    other = pc.other
    linear_pc = pc
    extra_bytes = 0.0
    if quant and quant.get("method") == "mxfp4" and "experts" in pc.linear and moe.get("experts"):
        # MXFP4 experts as the kernel backend lays them out (padding, scale copies, fp32 biases).
        moe_layers = (facts.get("pattern") or "").count("E") or (facts.get("layers", 0) - len(moe.get("dense_layers") or []))
        inter = moe.get("inter") or facts.get("inter") or 0
        inter_part = inter if ep_size > 1 else -(-inter // tp)
        extra_bytes = moe_layers * mxfp4_expert_bytes(facts["hidden"], inter_part, experts_rank,
                                                       mxfp4_backend or "checkpoint")
        linear_pc = ParamCount(linear={k: v for k, v in pc.linear.items() if k != "experts"},
                               linear_rows={k: v for k, v in pc.linear_rows.items() if k != "experts"})
        if facts.get("type") == "gpt_oss":
            other -= (2 * inter + facts["hidden"]) * moe["experts"] * moe_layers  # expert biases, counted above
    layer_bytes = _linear_bytes(linear_pc, quant, dtype_bytes, divide, facts.get("layers") or 0) + extra_bytes
    layer_bytes += (other + pc.norms) * dtype_bytes  # replicated (biases of column layers split, ignored)
    vocab = facts.get("vocab") or 0
    pad = VOCAB_PADDING * tp
    padded_vocab = -(-vocab // pad) * pad if vocab else 0
    embed_rank = (pc.embed - vocab * facts.get("hidden", 0) + padded_vocab * facts.get("hidden", 0)) / tp
    lm_head_rank = padded_vocab * facts.get("hidden", 0) / tp if pc.lm_head else 0
    if quant and pc.lm_head and (quant.get("kinds") or {}).get("lm_head"):
        lm_bytes = lm_head_rank * quantized_bytes_per_param({"method": "modelopt", **quant["kinds"]["lm_head"]})
    elif quant and pc.lm_head and "lm_head" not in _skipped_kinds(quant) and quant.get("method") in ("compressed-tensors",) and "lm_head" not in " ".join(quant.get("skip") or []):
        lm_bytes = lm_head_rank * quantized_bytes_per_param(quant)
    else:
        lm_bytes = lm_head_rank * dtype_bytes
    total = layer_bytes / pp + max(embed_rank * dtype_bytes, lm_bytes if pp > 1 else 0)
    if pp == 1:
        total = layer_bytes + embed_rank * dtype_bytes + lm_bytes
    total += pc.vision * dtype_bytes / (tp if pc.vision else 1)
    if mla_dequant and facts.get("mla") and quant and _quantizes_mla_up_projection(quant):
        mla = facts["mla"]
        total += (facts.get("layers") or 0) * mla["kv_lora_rank"] * heads / tp * (mla["qk_nope"] + mla["v_head"]) \
            * dtype_bytes
    if include_buffers:
        # gpt-oss builds its YaRN rotary embedding in float32 (``get_rope(..., dtype=torch.float32)``).
        total += rope_cache_bytes(facts, 4 if facts.get("type") == "gpt_oss" else dtype_bytes)
    return int(total)


def _quantizes_mla_up_projection(quant: dict) -> bool:
    """Whether the quantization covers MLA's kv_b_proj (not left in the model dtype by the checkpoint)."""
    if "attn" in _skipped_kinds(quant):
        return False
    return not any("kv_b_proj" in str(pattern) for pattern in quant.get("skip") or [])


def vocab_matrices_per_rank(facts: dict, tp: int, dtype_bytes: float) -> dict[str, float]:
    """Bytes of the input embedding and of an untied LM head on one tensor-parallel rank (vocabulary padded to
    64 x tp, ``VocabParallelEmbedding``); ``lm_head`` is 0 for tied embeddings."""
    pc = count_parameters(facts)
    vocab, hidden = facts.get("vocab") or 0, facts.get("hidden") or 0
    pad = VOCAB_PADDING * max(1, tp)
    padded = -(-vocab // pad) * pad if vocab else 0
    embed = (pc.embed - vocab * hidden + padded * hidden) / max(1, tp) * dtype_bytes
    lm_head = padded * hidden / max(1, tp) * dtype_bytes if pc.lm_head else 0.0
    return {"embed": embed, "lm_head": lm_head}


def offloaded_bytes(facts: dict, limit: float, tp: int = 1, dtype_bytes: float = 2, ep_size: int = 0,
                    mxfp4_backend: str | None = None, stage: tuple[int, int, int] | None = None,
                    params: frozenset[str] | set[str] = frozenset()) -> tuple[float, float]:
    """(bytes ``--cpu-offload-gb`` moves off one GPU, bytes it could move at most).

    vLLM offers each decoder layer to the offloader as ``make_layers`` builds it (``maybe_offload_to_cpu``,
    model_executor/models/utils.py, 0.5 - 0.16; ``UVAOffloader._maybe_offload_to_cpu``,
    model_executor/offloader/uva.py, 0.17+: the 0.17.1, 0.22.0, 0.27.1 and 0.34.0 wheels), which moves the
    layer's parameters one at a time, in registration order, to pinned CPU memory while the bytes moved so far
    are below the limit: the last parameter moved can pass the limit, and only decoder layers are offered (the
    embedding, the LM head, the final norm and the RoPE cache stay on the GPU). A layer's parameters are taken
    in vLLM's order: attention (q/k/v, then o), then the feed-forward (gate/up, then down; the experts' w13,
    then w2), by their parameter counts. ``params`` (``--cpu-offload-params``, 0.17+): only the parameters a
    listed name segment matches move (:func:`offload_param_matches`); the rest are skipped, not counted.
    """
    part = pipeline_stage_facts(facts, stage[0], stage[1]) if stage and stage[2] > 1 else facts
    layers = part.get("layers") or 0
    if not layers or limit <= 0:
        return 0.0, 0.0
    per_layer, decoder, shares = _decoder_layer_bytes(part, tp, dtype_bytes, ep_size, mxfp4_backend)
    if params:
        shares = [(names, share) for names, share in shares if offload_param_matches(params, names)]
        if not shares:
            return 0.0, 0.0
        per_layer *= sum(share for _, share in shares)
        decoder = per_layer * layers
        total = sum(share for _, share in shares)
        shares = [(names, share / total) for names, share in shares]
    full = int(limit // per_layer) if per_layer > 0 else layers
    if full >= layers:
        return decoder, decoder
    moved = full * per_layer
    for _, share in shares:
        if moved >= limit:
            break
        moved += share * per_layer
    return min(moved, decoder), decoder


def prefetch_offload_bytes(facts: dict, group_size: int, num_in_group: int, prefetch_step: int, tp: int = 1,
                           dtype_bytes: float = 2, ep_size: int = 0, mxfp4_backend: str | None = None,
                           stage: tuple[int, int, int] | None = None,
                           params: frozenset[str] | set[str] = frozenset()) -> tuple[float, float, int]:
    """(bytes the prefetch offloader moves off one GPU, bytes of its GPU buffer pool, layers offloaded).

    ``PrefetchOffloader.wrap_modules`` (model_executor/offloader/prefetch.py, 0.17+) offloads the last
    ``offload_num_in_group`` of every ``offload_group_size`` decoder layers of the stage (``index % group_size >=
    group_size - num_in_group``), all their parameters or those ``--offload-params`` matches, to pinned CPU
    memory; ``post_init`` then allocates ``StaticBufferPool``: ``offload_prefetch_step`` GPU copies of each
    distinct (name, shape, stride, dtype) parameter of the offloaded layers, which the layers' weights are
    copied into ahead of their forward pass. Decoder layers alike in shape share one set of buffers per slot.
    """
    part = pipeline_stage_facts(facts, stage[0], stage[1]) if stage and stage[2] > 1 else facts
    layers = part.get("layers") or 0
    if not layers or group_size <= 0:
        return 0.0, 0.0, 0
    per_layer, _, shares = _decoder_layer_bytes(part, tp, dtype_bytes, ep_size, mxfp4_backend)
    if params:
        per_layer *= sum(share for names, share in shares if offload_param_matches(params, names))
    count = sum(1 for index in range(layers) if index % group_size >= group_size - num_in_group)
    if not count or per_layer <= 0:
        return 0.0, 0.0, 0
    return count * per_layer, max(1, prefetch_step) * per_layer, count


def offload_param_matches(params, names: tuple[str, ...]) -> bool:
    """Whether one of ``names`` (a decoder layer's parameter names, relative to the layer) is matched by a
    segment of ``--cpu-offload-params`` / ``--offload-params``: ``f".{p}." in f".{name}."``, so "experts" and
    "experts.w2_weight" match "mlp.experts.w2_weight" and "w2" does not (uva.py / prefetch.py, 0.17.1)."""
    return any(f".{p}." in f".{name}." for p in params for name in names)


def _decoder_layer_bytes(part: dict, tp: int, dtype_bytes: float, ep_size: int,
                         mxfp4_backend: str | None) -> tuple[float, float, list[tuple[tuple[str, ...], float]]]:
    """(bytes of one decoder layer on a rank, of all decoder layers, the layer's parameters in registration
    order as (names, share of the layer's bytes))."""
    layers = part.get("layers") or 1
    whole = weight_bytes_per_rank(part, tp=tp, dtype_bytes=dtype_bytes, include_buffers=False,
                                  mxfp4_backend=mxfp4_backend, ep_size=ep_size)
    ends = vocab_matrices_per_rank(part, tp, dtype_bytes)
    pc = count_parameters(part)
    decoder = (whole - ends["embed"] - ends["lm_head"] - (part.get("hidden") or 0) * dtype_bytes
               - pc.vision * dtype_bytes / max(1, tp))
    return decoder / layers, decoder, _layer_parameter_shares(part, pc)


# vLLM's names of a decoder layer's parameters (relative to the layer module, as its named_parameters() gives
# them) for the Llama / Qwen / Mistral / DeepSeek families; a family that names them otherwise is matched by
# these names, which `--cpu-offload-params` segments such as "mlp" or "self_attn" still fit.
_PARAM_NAMES = {
    "attn": (("self_attn.qkv_proj.weight",), ("self_attn.o_proj.weight",)),
    "mla": (("self_attn.q_a_proj.weight", "self_attn.q_b_proj.weight", "self_attn.q_proj.weight",
             "self_attn.kv_a_proj_with_mqa.weight", "self_attn.kv_b_proj.weight", "self_attn.o_proj.weight"),),
    "mlp": (("mlp.gate_up_proj.weight",), ("mlp.down_proj.weight",)),
    "experts": (("mlp.experts.w13_weight",), ("mlp.experts.w2_weight",)),
    "shared": (("mlp.shared_experts.gate_up_proj.weight", "mlp.shared_expert.gate_up_proj.weight"),
               ("mlp.shared_experts.down_proj.weight", "mlp.shared_expert.down_proj.weight")),
}
_NORM_NAMES = ("input_layernorm.weight", "post_attention_layernorm.weight", "mlp.gate.weight",
               "self_attn.q_norm.weight", "self_attn.k_norm.weight")


def _layer_parameter_shares(facts: dict, pc: ParamCount) -> list[tuple[tuple[str, ...], float]]:
    """The parameters of one decoder layer in registration order, as (vLLM's names, share of the layer's
    parameters)."""
    counts: list[tuple[tuple[str, ...], float]] = []
    heads, kv = facts.get("heads") or 0, facts.get("kv_heads") or facts.get("heads") or 0
    for kind, n in pc.linear.items():
        if kind == "attn" and heads and not facts.get("mla"):
            qkv, o = _PARAM_NAMES["attn"]
            counts += [(qkv, n * (heads + 2 * kv) / (2 * heads + 2 * kv)), (o, n * heads / (2 * heads + 2 * kv))]
        elif kind == "attn":
            counts.append((_PARAM_NAMES["mla"][0], float(n)))
        elif kind in ("mlp", "experts", "shared"):
            first, second = _PARAM_NAMES[kind]
            counts += [(first, n * 2 / 3), (second, n / 3)]
        else:
            counts.append(((kind,), float(n)))
    counts.append((_NORM_NAMES, float(pc.norms + pc.other)))
    total = sum(c for _, c in counts) or 1.0
    return [(names, c / total) for names, c in counts]


def pipeline_stage_facts(facts: dict, start: int, end: int) -> dict:
    """The facts of decoder layers ``start`` to ``end`` alone (one pipeline stage): the layer pattern, the dense
    layers of a MoE model and per-layer quantization exceptions renumbered to the stage."""
    import re

    part = dict(facts)
    part["layers"] = end - start
    if facts.get("pattern"):
        part["pattern"] = facts["pattern"][start:end]
    layers = facts.get("layers") or 0
    if facts.get("kv_shared"):
        # the KV-shared layers are the model's last ones: those of them in this stage
        part["kv_shared"] = max(0, min(end, layers) - max(start, layers - facts["kv_shared"]))
    if facts.get("ple"):
        # Gemma 4's per-layer embedding table and projection are built with the input embedding (first stage)
        part["ple"] = {**facts["ple"], "embed": start == 0, "model_layers": layers}
    moe = facts.get("moe")
    if moe and moe.get("dense_layers"):
        part["moe"] = {**moe, "dense_layers": [i - start for i in moe["dense_layers"] if start <= i < end]}
    quant = facts.get("quant")
    if quant and quant.get("skip"):
        skip = []
        for pattern in quant["skip"]:
            index = _layer_index(pattern)
            if index is None:
                skip.append(pattern)
            elif start <= index < end:
                skip.append(re.sub(rf"layers\.{index}(?=\.|$)", f"layers.{index - start}", pattern, count=1))
        part["quant"] = {**quant, "skip": skip}
    return part


# every dtype safetensors reads (its `Dtype` enum, by exact name: a header naming another is refused, see
# vramlint.models.tensors_from_header), in bytes an element
SAFETENSORS_DTYPE_BYTES = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I64": 8, "I32": 4,
    "I16": 2, "I8": 1, "U8": 1, "BOOL": 1, "U16": 2, "U32": 4, "U64": 8, "F4": 0.5, "F6_E2M3": 0.75,
    "F6_E3M2": 0.75, "F8_E4M3FNUZ": 1, "F8_E5M2FNUZ": 1, "C64": 8,
}
_SCALE_SUFFIXES = ("scale", "scales", "scale_inv", "absmax", "zeros", "qzeros", "g_idx", "scale_2", "zero_point",
                   "weight_scale_2", "nested_absmax", "quant_map", "nested_quant_map")


def bytes_from_safetensors(tensors: dict[str, tuple[str, list[int]]], facts: dict, dtype_bytes: float = 2) -> int:
    """Bytes vLLM holds for a checkpoint, from its safetensors headers (dtype x shape per tensor).

    Differences from the file size that vLLM's loading makes: float32 (and float64) weights are cast to the
    load dtype; a stored ``lm_head.weight`` of a tied model is not loaded; next-token-prediction layers
    beyond ``num_hidden_layers`` (DeepSeek-V3 MTP) are not loaded; rotary ``inv_freq`` buffers are dropped.
    """
    layers = facts.get("layers") or 0
    total = 0.0
    for name, (dtype, shape) in tensors.items():
        if name.endswith("rotary_emb.inv_freq"):
            continue
        if facts.get("tie") and name.split(".")[-2:] == ["lm_head", "weight"]:
            continue
        parts = name.split(".")
        if layers and "layers" in parts:
            idx = parts.index("layers")
            if idx + 1 < len(parts) and small_int(parts[idx + 1]) is not None and small_int(parts[idx + 1]) >= layers \
                    and "vision" not in name and "visual" not in name:
                continue
        count = 1
        for dim in shape:
            count *= int(dim)
        size = SAFETENSORS_DTYPE_BYTES.get(dtype.upper(), 2)
        if dtype.upper() in ("F32", "F64") and not parts[-1].endswith(_SCALE_SUFFIXES) \
                and not any(parts[-1].endswith(s) for s in _SCALE_SUFFIXES):
            size = dtype_bytes
        total += count * size
    return int(total)
