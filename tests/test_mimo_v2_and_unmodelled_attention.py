"""MiMo-V2-Flash as vLLM builds it (vllm/model_executor/models/mimo_v2.py, 0.20 - 0.34): two attention shapes picked
by ``hybrid_layer_pattern``, a V head narrower than the QK head, a dense first layer; and the 2026 attention layouts
the budget does not lay out (DeepSeek-V4, MiniMax-M3, Kimi Linear / K3, Step-3.5 / 3.7), refused rather than sized."""

from __future__ import annotations

import json

import pytest

from vramlint.budget import compute_budget
from vramlint.gpus import lookup as get_gpu
from vramlint.model import ResolveOptions
from vramlint.modelconfig import facts_from_config, model_info_from_facts, unmodelled_architecture
from vramlint.models import NOT_MODELLED, UNMODELLED_INDEX, catalog_entry, resolve_model
from vramlint.weights import count_parameters, weight_bytes_per_rank

STORED = ("id", "source", "note")


def _mimo_v2(**extra) -> dict:
    # a small MiMo-V2: layers 0 and 3 full attention, the others sliding; layer 0 dense
    cfg = {"architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "num_hidden_layers": 4,
           "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 96,
           "v_head_dim": 64, "swa_num_attention_heads": 8, "swa_num_key_value_heads": 4, "swa_head_dim": 96,
           "swa_v_head_dim": 64, "sliding_window": 64, "sliding_window_size": 64, "hybrid_layer_pattern": [0, 1, 1, 0],
           "moe_layer_freq": [0, 1, 1, 1], "intermediate_size": 2048, "moe_intermediate_size": 256,
           "n_routed_experts": 8, "num_experts_per_tok": 2, "vocab_size": 4096, "max_position_embeddings": 8192,
           "add_swa_attention_sink_bias": True, "add_full_attention_sink_bias": False, "tie_word_embeddings": False,
           "torch_dtype": "bfloat16"}
    cfg.update(extra)
    return cfg


def test_mimo_v2_layers_take_their_own_shapes():
    facts = facts_from_config(_mimo_v2())
    assert facts["pattern"] == "FSSF" and facts["sliding_window"] == 64
    # the facts' own heads are the sliding layers', full_attn the full layers'
    assert (facts["kv_heads"], facts["head_dim"], facts["v_head_dim"]) == (4, 96, 64)
    assert facts["full_attn"] == {"heads": 8, "kv_heads": 2, "head_dim": 96, "v_head_dim": 64, "k_eq_v": False}
    assert facts["moe"]["dense_layers"] == [0] and facts["moe"]["dense_inter"] == 2048


def test_mimo_v2_parameters_count_the_narrow_v_and_o_projections():
    facts = facts_from_config(_mimo_v2())
    h = 512
    attn = (2 * (h * 8 * 96 + h * 2 * (96 + 64) + 8 * 64 * h)  # 2 full layers
            + 2 * (h * 8 * 96 + h * 4 * (96 + 64) + 8 * 64 * h))  # 2 sliding layers
    assert count_parameters(facts).linear["attn"] == attn
    sinks = 2 * 8
    uniform = facts_from_config(_mimo_v2(add_swa_attention_sink_bias=False))
    assert count_parameters(facts).other - count_parameters(uniform).other == sinks


def test_mimo_v2_flash_catalog_entry_counts_the_cards_309b():
    facts = {k: v for k, v in catalog_entry("XiaomiMiMo/MiMo-V2-Flash").items() if k not in STORED}
    assert facts["pattern"].count("F") == 9 and facts["pattern"].count("S") == 39
    assert abs(count_parameters(facts).total - 309e9) < 0.5e9


@pytest.mark.parametrize("tp", [1, 4, 8])
def test_mimo_v2_flash_kv_bytes_per_token(tp):
    # AttentionSpec page: KV heads per rank x (head_size + head_size_v) x 2 B, 9 full layers of 4 KV heads and
    # 39 sliding layers of 8 (each at least one per rank)
    facts = {k: v for k, v in catalog_entry("XiaomiMiMo/MiMo-V2-Flash").items() if k not in STORED}
    info = model_info_from_facts(facts, "XiaomiMiMo/MiMo-V2-Flash", "catalog")
    b = compute_budget(info, get_gpu("H200"), {"tensor_parallel_size": tp, "max_model_len": 65536}, {}, "0.34.0", tp)
    per_token = 9 * max(1, 4 // tp) * (192 + 128) * 2 + 39 * max(1, 8 // tp) * (192 + 128) * 2
    assert b.kv_bytes_per_token == per_token


def test_before_0_20_v_was_padded_to_the_qk_head():
    facts = facts_from_config(_mimo_v2())
    info = model_info_from_facts(facts, "mimo-small", "test")
    old = compute_budget(info, get_gpu("H100-SXM"), {"max_model_len": 8192}, {}, "0.19.0", 1)
    new = compute_budget(info, get_gpu("H100-SXM"), {"max_model_len": 8192}, {}, "0.20.0", 1)
    assert old.kv_bytes_per_token == 2 * (2 * 2 * 96 + 2 * 4 * 96) * 2
    assert new.kv_bytes_per_token == 2 * (2 * (96 + 64) + 4 * (96 + 64)) * 2


def test_mimo_v2_replicated_kv_projections_at_tp_above_the_kv_heads():
    # TP 4: the full layers' 2 KV heads are replicated, one whole head (K 96 + V 64) per rank, as much as a rank
    # holds of 4 KV heads split 4 ways; at TP 1 the two models differ by those 2 heads' projections
    two, four = facts_from_config(_mimo_v2()), facts_from_config(_mimo_v2(num_key_value_heads=4))
    assert weight_bytes_per_rank(two, tp=4, include_buffers=False) == pytest.approx(
        weight_bytes_per_rank(four, tp=4, include_buffers=False), abs=1)
    diff = weight_bytes_per_rank(four, tp=1, include_buffers=False) - weight_bytes_per_rank(two, tp=1,
                                                                                           include_buffers=False)
    assert diff == pytest.approx(2 * 512 * 2 * (96 + 64) * 2, abs=1)


_DEEPSEEK_V4 = {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "num_hidden_layers": 4,
                "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 128,
                "q_lora_rank": 256, "o_lora_rank": 256, "qk_rope_head_dim": 64, "sliding_window": 128,
                "compress_ratios": [0, 4, 128, 4], "index_n_heads": 8, "index_head_dim": 64, "vocab_size": 4096,
                "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 256, "hc_mult": 4,
                "max_position_embeddings": 8192}
_MINIMAX_M3 = {"architectures": ["MiniMaxM3SparseForCausalLM"], "model_type": "minimax_m3_text", "num_hidden_layers": 4,
               "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
               "vocab_size": 4096, "max_position_embeddings": 8192, "num_local_experts": 8,
               "sparse_attention_config": {"use_sparse_attention": True, "sparse_num_index_heads": 2,
                                           "sparse_index_dim": 64, "sparse_attention_freq": [0, 1, 1, 1]}}
_KIMI_LINEAR = {"architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "num_hidden_layers": 4,
                "hidden_size": 512, "num_attention_heads": 8, "num_key_value_heads": 8, "kv_lora_rank": 128,
                "q_lora_rank": 256, "qk_rope_head_dim": 32, "qk_nope_head_dim": 64, "v_head_dim": 64,
                "vocab_size": 4096, "max_position_embeddings": 8192,
                "linear_attn_config": {"kda_layers": [1, 2, 3], "full_attn_layers": [4], "num_heads": 8,
                                       "head_dim": 64, "short_conv_kernel_size": 4}}
_STEP3P5 = {"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5", "num_hidden_layers": 4,
            "hidden_size": 512, "num_attention_heads": 8, "num_attention_groups": 2, "head_dim": 64,
            "vocab_size": 4096, "max_position_embeddings": 8192, "sliding_window": 256,
            "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "full_attention"]}


@pytest.mark.parametrize("cfg, says", [
    (_DEEPSEEK_V4, "DeepSeek-V4"), ({**_DEEPSEEK_V4, "model_type": "deepseek_ref"}, "1 of ratio 128"),
    (_MINIMAX_M3, "MiniMax-M3"), (_KIMI_LINEAR, "3 Kimi Delta Attention layers"),
    ({**_STEP3P5, "architectures": ["Step3p7FlashForCausalLM"], "model_type": "step3p7"}, "Step3p7FlashForCausalLM"),
])
def test_attention_layouts_the_budget_does_not_lay_out_are_refused(cfg, says, tmp_path):
    assert says in unmodelled_architecture(cfg)
    (tmp_path / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    info, why = resolve_model(str(tmp_path), ResolveOptions(base_dir=str(tmp_path)), network=False)
    assert info is None and NOT_MODELLED in why


def test_deepseek_v4_reason_splits_decoder_and_mtp_layers_and_names_what_the_budget_lacks():
    # vllm/models/deepseek_v4/attention.py (0.34.0): layer i < num_hidden_layers takes compress_ratios[i], the MTP
    # layers after them are sliding-window only; the reason used to count the MTP entry as a decoder layer of ratio 0
    cfg = {**_DEEPSEEK_V4, "num_hidden_layers": 3, "compress_ratios": [0, 4, 128, 0], "num_nextn_predict_layers": 1,
           "expert_dtype": "fp4"}
    why = unmodelled_architecture(cfg)
    assert "(3 decoder layers: 1 sliding-window only, 1 of ratio 4, 1 of ratio 128; 1 MTP layer" in why
    assert "128-token sliding-window latent" in why and "indexer key cache (64-wide)" in why
    assert "one bytes-per-token figure, one block size" in why and "fp4 experts (expert_dtype)" in why
    data = json.loads(UNMODELLED_INDEX.read_text(encoding="utf-8"))["models"]
    flash = data["deepseek-ai/DeepSeek-V4-Flash"]["reason"]
    assert "43 decoder layers: 2 sliding-window only, 21 of ratio 4, 20 of ratio 128; 1 MTP layer" in flash
    assert "61 decoder layers: 30 of ratio 4, 31 of ratio 128; 1 MTP layer" in data["deepseek-ai/DeepSeek-V4-Pro"]["reason"]
    assert "expert_dtype" not in data["sgl-project/DeepSeek-V4-Flash-FP8"]["reason"]


def test_deepseek_v32_and_plain_sliding_window_models_are_still_sized():
    v32 = {"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32", "num_hidden_layers": 4,
           "hidden_size": 512, "num_attention_heads": 8, "kv_lora_rank": 128, "q_lora_rank": 256,
           "qk_rope_head_dim": 32, "qk_nope_head_dim": 64, "v_head_dim": 64, "index_n_heads": 8, "index_head_dim": 64,
           "vocab_size": 4096, "max_position_embeddings": 8192}
    assert unmodelled_architecture(v32) is None
    assert unmodelled_architecture({**_STEP3P5, "architectures": ["MistralForCausalLM"], "model_type": "mistral"}) is None


def test_the_read_models_of_these_layouts_are_refused_offline_too():
    # data/unmodelled_models.json holds the reasons unmodelled_architecture gives for their config.json: offline,
    # DeepSeek-V4-Pro is a model the budget does not model, not one outside the catalog
    info, why = resolve_model("deepseek-ai/DeepSeek-V4-Pro", ResolveOptions(), network=False)
    assert info is None and NOT_MODELLED in why and "DeepSeek-V4" in why
    data = json.loads(UNMODELLED_INDEX.read_text(encoding="utf-8"))["models"]
    assert all(catalog_entry(model_id) is None for model_id in data)


def _mimo_v2_mtp_tokens(version: str, spec: dict | None) -> tuple[int, int]:
    model = model_info_from_facts(facts_from_config(_mimo_v2(num_nextn_predict_layers=3)), "test/mimo-v2-mtp", "test")
    args = {"max_model_len": 8192, "max_num_batched_tokens": 256}
    if spec is not None:
        args["speculative_config"] = spec
    b = compute_budget(model, get_gpu("H100"), args, {}, version, 1)
    return b.kv_tokens, b.num_gpu_blocks


def test_multi_module_mtp_keeps_more_sliding_window_tokens_from_0_28():
    # 0.28's get_kv_cache_configs sets SlidingWindowSpec.extra_retained_tokens = num_speculative_tokens - 1 when
    # min(num_nextn_predict_layers, num_speculative_tokens) > 1: each request holds 2 more tokens per sliding-window
    # layer here, so the same pool of blocks is fewer tokens of max_model_len; 0.27.1 has no such field
    three = {"method": "mtp", "num_speculative_tokens": 3}
    old_tokens, old_blocks = _mimo_v2_mtp_tokens("0.27.1", three)
    new_tokens, new_blocks = _mimo_v2_mtp_tokens("0.28.0", three)
    assert new_blocks == old_blocks and new_tokens < old_tokens
    # one speculative token is single-module MTP: nothing retained
    one = {"method": "mtp", "num_speculative_tokens": 1}
    assert _mimo_v2_mtp_tokens("0.28.0", one) == _mimo_v2_mtp_tokens("0.27.1", one)
    # num_speculative_tokens left out defaults to the model's MTP layers (3): multi-module too
    unset = {"method": "mtp"}
    (unset_old, blocks_old), (unset_new, blocks_new) = (_mimo_v2_mtp_tokens(v, unset) for v in ("0.27.1", "0.28.0"))
    assert blocks_new == blocks_old and unset_new < unset_old
