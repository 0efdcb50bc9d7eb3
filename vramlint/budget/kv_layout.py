"""The KV cache shape of a model on one rank: bytes per token of each kind of layer (``AttentionSpec`` /
``MLAAttentionSpec`` page sizes), the state of Mamba / gated-delta-net layers (``MambaSpec``), and the layer
groups of vLLM's hybrid KV cache manager."""

from __future__ import annotations

from vramlint.budget.common import head_dim, kv_heads_per_rank
from vramlint.model import ModelInfo
from vramlint.versions import VersionKey, at_least


def layer_kinds(model: ModelInfo) -> list[str]:
    shared = (model.extra.get("facts") or {}).get("kv_shared") or 0
    if model.layer_types and shared:
        # Gemma 4 E2B / E4B: the last num_kv_shared_layers attend with an earlier layer's cache
        # (kv_sharing_target_layer_name): GPUModelRunner.get_kv_cache_spec gives them no KV cache spec of their own
        return list(model.layer_types[:-shared]) + ["kv_shared"] * shared
    if model.layer_types:
        return list(model.layer_types)
    if model.sliding_window and not model.is_mla:
        return ["sliding_attention"] * model.num_layers
    return ["full_attention"] * model.num_layers


# From vLLM 0.20 MiMo-V2's attention passes ``head_size_v`` to Attention, whose AttentionSpec then stores V at its own
# size (mimo_v2.py, 0.20.0, 0.22.0, 0.34.0); 0.14 - 0.19 (mimo_v2_flash.py) padded V with zeros to the QK head size
# before the cache, so K and V were cached at the same size.
CACHED_V_HEAD_FROM = (0, 20)


def cached_v_head(v_head: int | None, head: int, key: VersionKey | None) -> int:
    """The V head size the KV cache stores for a layer with QK head ``head`` and V head ``v_head``."""
    if not v_head or v_head == head or (key is not None and not at_least(key, *CACHED_V_HEAD_FROM)):
        return head
    return v_head


def full_attention_bytes_per_token_layer(model: ModelInfo, tp: int, kv_dtype_bytes: int,
                                         mla: bool, key: VersionKey | None = None) -> tuple[int | None, str]:
    """KV bytes per token of one full-attention layer on one rank when those layers have their own shape (Gemma 4:
    ``global_head_dim`` and ``num_global_key_value_heads``; MiMo-V2-Flash: their own KV heads), else (None, ""). vLLM's ``Attention`` gets that layer's
    head size and KV heads (``Gemma4DecoderLayer``), and ``AttentionSpec.page_size_bytes`` stores K and V even
    when V is a copy of K (``attention_k_eq_v``): 2 x heads x head size x dtype bytes."""
    full = (model.extra.get("facts") or {}).get("full_attn")
    if not full or mla or model.is_mla:
        return None, ""
    heads = max(1, full["kv_heads"] // max(1, tp))
    v_head = cached_v_head(full.get("v_head_dim"), full["head_dim"], key)
    if v_head != full["head_dim"]:
        how = f"{heads} KV heads x ({full['head_dim']} K + {v_head} V head dim) x {kv_dtype_bytes} B"
    else:
        how = f"2 x {heads} KV heads x {full['head_dim']} head dim x {kv_dtype_bytes} B"
    if full["kv_heads"] < tp:
        how += f" (KV heads replicated: {full['kv_heads']} < TP {tp})"
    if full.get("k_eq_v"):
        how += " (V is a copy of K, stored all the same)"
    return heads * (full["head_dim"] + v_head) * kv_dtype_bytes, how


def sparse_mla_bytes(model: ModelInfo, kv_dtype_bytes: int, standard_fp8: bool = False) -> tuple[int, int] | None:
    """(latent, indexer key) bytes per token of one DeepSeek-sparse-attention layer (DeepSeek-V3.2, GLM-5), or None
    for a model without the lightning indexer.

    A quantized latent is DeepSeek's fp8_ds_mla, 656 B (512 fp8 values, 4 fp32 scales, 64 bf16 RoPE values), which
    FLASHMLA_SPARSE and the SM120 backend take (``_canonicalize_sparse_mla_kv_cache_dtype``,
    model_executor/layers/attention/mla_attention.py); FLASHINFER_MLA_SPARSE keeps "the standard fp8 KV cache
    format", kv_lora_rank + rope fp8 values and no scales (``standard_fp8``). The indexer's
    DeepseekV32IndexerCache holds one uint8 key of head_dim + head_dim / 128 x 4 B (fp8 values and an fp32 scale per
    128) per token, in the same pool."""
    indexer = (model.extra.get("facts") or {}).get("indexer")
    if not indexer:
        return None
    width = (model.kv_lora_rank or 512) + (model.qk_rope_head_dim or 64)
    if kv_dtype_bytes == 1:
        latent = width if standard_fp8 else 656
    else:
        latent = width * kv_dtype_bytes
    return latent, indexer["head_dim"] + indexer["head_dim"] // 128 * 4


def indexer_layers(model: ModelInfo, key: VersionKey | None, first: int, count: int) -> int:
    """How many of the decoder layers ``first`` .. ``first + count - 1`` build a lightning indexer, and so an indexer
    cache. IndexCache (config ``index_topk_freq`` / ``index_topk_pattern``, GLM-5.2's IndexShare): from vLLM 0.24
    ``DeepseekV2MLAAttention`` builds the Indexer only where the layer computes its own top-k, ``max(layer -
    index_skip_topk_offset + 1, 0) % index_topk_freq == 0`` (offset 2 unless the config says), or an "F" in the
    pattern (vllm/model_executor/models/deepseek_v2.py, 0.24.0 and 0.26.0); 0.21 - 0.23 read the same settings to
    skip the top-k but built an Indexer in every layer, and 0.20 did not read them."""
    indexer = (model.extra.get("facts") or {}).get("indexer") or {}
    freq = int(indexer.get("topk_freq") or 1)
    pattern = indexer.get("topk_pattern")
    if key is None or not at_least(key, 0, 24) or (freq <= 1 and not pattern):
        return count
    offset = int(indexer.get("skip_topk_offset", 2))
    built = 0
    for layer in range(first, first + count):
        if pattern:
            skip = 0 <= layer < len(pattern) and pattern[layer] == "S"
        else:
            skip = max(layer - offset + 1, 0) % freq != 0
        built += not skip
    return built


def kv_bytes_per_token_layer(model: ModelInfo, tp: int, kv_dtype_bytes: int, engine: str, mla: bool,
                             standard_fp8: bool = False, key: VersionKey | None = None) -> tuple[int, str]:
    """KV bytes one attention layer stores per token on one rank, and how it was derived."""
    if mla:
        width = (model.kv_lora_rank or 512) + (model.qk_rope_head_dim or 64)
        if engine == "v0":
            # CacheEngine._align_cache (VLLM_CUDA_MEM_ALIGN_KV_CACHE=1): entries padded to 256 bytes.
            align = 256 // kv_dtype_bytes
            width = -(-width // align) * align
        sparse = sparse_mla_bytes(model, kv_dtype_bytes, standard_fp8) if engine != "v0" else None
        if sparse:
            latent, index = sparse
            return latent + index, (f"MLA latent {latent} B + sparse-attention indexer key {index} B "
                                    "(one head, not split by TP)")
        return width * kv_dtype_bytes, f"MLA latent {width} x {kv_dtype_bytes} B (one head, not split by TP)"
    if model.is_mla:
        # vLLM before 0.7 cached DeepSeek-V2's full K/V with the head size padded to 256.
        heads = kv_heads_per_rank(model, tp)
        return 2 * heads * 256 * kv_dtype_bytes, f"2 x {heads} heads x 256 (pre-MLA vLLM) x {kv_dtype_bytes} B"
    heads = kv_heads_per_rank(model, tp)
    hd = head_dim(model)
    # a V head of its own size (MiMo-V2: Attention's head_size_v; AttentionSpec stores head_size + head_size_v)
    v_head = cached_v_head((model.extra.get("facts") or {}).get("v_head_dim"), hd, key)
    if v_head != hd:
        how = f"{heads} KV heads x ({hd} K + {v_head} V head dim) x {kv_dtype_bytes} B"
    else:
        how = f"2 x {heads} KV heads x {hd} head dim x {kv_dtype_bytes} B"
    if (model.num_kv_heads or model.num_attention_heads) < tp:
        how += f" (KV heads replicated: {model.num_kv_heads} < TP {tp})"
    return heads * (hd + v_head) * kv_dtype_bytes, how


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


# _get_kv_cache_groups_uniform_page_size (v1/core/kv_cache_utils.py): the layers of each KV spec are split into
# groups of one size, the fewest layers of a spec (0.9.2 - 0.11.2); from 0.12 the most, when the largest spec has
# fewer than this many times the smallest's layers ("gpt-oss-20b + eagle, with 12 sw + 13 full. We pad it to
# (13 sw, 13 full) instead of (12 sw, 24 full)"): 1.25 in 0.12 - 0.17, 1.5 from 0.18 (0.9.2 - 0.28.0 wheels).
GROUP_SIZE_RATIOS = (((0, 18), 1.5), ((0, 12), 1.25))


def group_size_ratio(key: VersionKey | None) -> float | None:
    """The ratio below which vLLM takes the largest spec's layer count as the group size, None before 0.12."""
    for since, ratio in GROUP_SIZE_RATIOS:
        if key is None or at_least(key, *since):
            return ratio
    return None


def _groups(n_full: int, n_local: int, key: VersionKey | None = None) -> tuple[int, int, int]:
    """KV cache groups of the V1 hybrid manager: (layers per group, full-attention groups, local groups)."""
    sizes = [n for n in (n_full, n_local) if n]
    gsize = min(sizes)
    ratio = group_size_ratio(key)
    if ratio is not None and max(sizes) < gsize * ratio:
        gsize = max(sizes)
    return gsize, -(-n_full // gsize) if n_full else 0, -(-n_local // gsize) if n_local else 0


def padding_notes(counts: tuple[int, ...], gsize: int) -> list[str]:
    """vLLM's warning for each spec whose last group is padded to the group size (one per spec, the share of that
    spec's own layers)."""
    notes = []
    for count in counts:
        pad = -count % gsize if count else 0
        if pad:
            notes.append(f"Add {pad} padding layers, may waste at most {100 * pad / count:.2f}% KV cache memory")
    return notes


def draft_full_attention_layers(share: dict, model: ModelInfo, tp: int, per_layer: int, per_full: int,
                                kv_dtype_bytes: int, engine: str) -> int:
    """How many attention layers of a drafter (an EAGLE / EAGLE-3 head, a separate draft model) have exactly the
    model's full-attention KV spec, and so are more layers of it in ``_get_kv_cache_groups_uniform_page_size``
    (the same ``FullAttentionSpec``: KV heads on the rank, head size, dtype, block size, no window); 0 when any
    of its layers has a spec of its own (another group, not modelled) or the drafter's shape is not known."""
    draft = share.get("info")
    if draft is None or not share.get("per_token") or per_full != per_layer or draft.is_mla:
        return 0
    kinds = layer_kinds(draft)
    if not kinds or any(k != "full_attention" for k in kinds) or draft.sliding_window:
        return 0
    if kv_heads_per_rank(draft, tp) != kv_heads_per_rank(model, tp) or head_dim(draft) != head_dim(model):
        return 0
    draft_layer, _ = kv_bytes_per_token_layer(draft, tp, kv_dtype_bytes, engine, False)
    if draft_layer != per_layer or share["per_token"] != draft_layer * len(kinds):
        return 0
    return len(kinds)
