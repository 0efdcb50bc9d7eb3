"""Parameter counts and weight bytes from architecture facts, checked against published numbers."""

from __future__ import annotations

import pytest

from vramlint.modelconfig import facts_from_config, model_info_from_facts
from vramlint.models import catalog, catalog_entry
from vramlint.weights import (
    bytes_from_safetensors,
    count_parameters,
    quantized_bytes_per_param,
    rope_cache_bytes,
    weight_bytes,
    weight_bytes_per_rank,
)

LLAMA31_8B = {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16", "tie_word_embeddings": False,
    "rope_scaling": {"factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}
QWEN25_7B = {
    "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
    "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}
GEMMA2_2B = {
    "model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000,
    "max_position_embeddings": 8192, "sliding_window": 4096,
}


@pytest.mark.parametrize(
    ("cfg", "published"),
    [
        (LLAMA31_8B, 8_030_261_248),  # HF API safetensors count
        (QWEN25_7B, 7_615_616_512),  # HF API, q/k/v biases included
        (GEMMA2_2B, 2_614_341_888),  # tied embeddings (Gemma2Config default)
    ],
)
def test_dense_counts_match_published_exactly(cfg, published):
    assert count_parameters(facts_from_config(cfg)).total == published


def test_llama31_8b_loaded_bytes_match_vllm_log():
    # vLLM 0.6.4 logged "Loading model weights took 14.9888 GB" (bytes / 2**30): params + 32 MiB RoPE cache
    facts = facts_from_config(LLAMA31_8B)
    assert rope_cache_bytes(facts) == 131072 * 128 * 2
    assert round(weight_bytes_per_rank(facts) / 2**30, 4) == 14.9888


def test_awq_int4_is_about_a_third_of_bf16_and_keeps_embeddings():
    awq = dict(LLAMA31_8B, torch_dtype="float16",
               quantization_config={"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True})
    facts = facts_from_config(awq)
    assert quantized_bytes_per_param(facts["quant"]) == pytest.approx(0.5 + 2 / 128 + 0.5 / 128)
    pc = count_parameters(facts)
    bf16 = weight_bytes(facts_from_config(LLAMA31_8B))
    got = weight_bytes(facts)
    embed_and_head = (pc.embed + pc.lm_head) * 2
    assert got == pytest.approx(embed_and_head + sum(pc.linear.values()) * (0.5 + 2.5 / 128) + (pc.norms + pc.other) * 2, rel=1e-6)
    assert 0.3 < got / bf16 < 0.4


def test_fp8_block_and_nvfp4_and_mxfp4_bytes_per_param():
    assert quantized_bytes_per_param({"method": "fp8", "bits": 8, "block": [128, 128]}) == pytest.approx(1 + 4 / 16384)
    assert quantized_bytes_per_param({"method": "modelopt", "bits": 4, "group": 16, "format": "nvfp4"}) == 0.5625
    assert quantized_bytes_per_param({"method": "mxfp4", "bits": 4, "group": 32}) == 0.53125
    assert quantized_bytes_per_param({"method": "bitsandbytes", "bits": 4}) == 0.5625


def test_mxfp4_quantizes_only_experts():
    gpt_oss = catalog_entry("openai/gpt-oss-20b")
    facts = {k: v for k, v in gpt_oss.items() if k not in ("weight_bytes", "params")}
    pc = count_parameters(facts)
    assert abs(pc.total - 20.9e9) / 20.9e9 < 0.01
    expected = pc.linear["experts"] * 0.53125 + (pc.total - pc.linear["experts"]) * 2
    assert weight_bytes(facts) == pytest.approx(expected, rel=1e-6)


def test_tensor_parallel_splits_and_replicates_kv_heads():
    facts = facts_from_config(LLAMA31_8B)
    one = weight_bytes_per_rank(facts, tp=1, include_buffers=False)
    two = weight_bytes_per_rank(facts, tp=2, include_buffers=False)
    assert two == pytest.approx(one / 2, rel=0.001)  # norms are replicated but tiny
    # 8 KV heads on 16 ranks: each rank still holds one KV head, so more than 1/16 of the total
    sixteen = weight_bytes_per_rank(facts, tp=16, include_buffers=False)
    pc = count_parameters(facts)
    kv_params = 2 * 4096 * 8 * 128 * 32
    assert sixteen > one / 16
    assert sixteen == pytest.approx((one - kv_params * 2) / 16 + kv_params * 2 / 8, rel=0.01)
    assert pc.total == 8_030_261_248


def test_vocab_padding_per_rank():
    odd_vocab = dict(LLAMA31_8B, vocab_size=32001, tie_word_embeddings=True)
    facts = facts_from_config(odd_vocab)
    pc = count_parameters(facts)
    bytes_tp1 = weight_bytes_per_rank(facts, tp=1, include_buffers=False)
    assert bytes_tp1 - (pc.total - pc.embed) * 2 == 32064 * 4096 * 2  # padded to a multiple of 64


def test_bytes_from_safetensors_follow_vllm_loading():
    facts = facts_from_config(dict(LLAMA31_8B, num_hidden_layers=2, tie_word_embeddings=True))
    tensors = {
        "model.embed_tokens.weight": ("F32", [10, 4]),  # cast to the 2-byte load dtype
        "lm_head.weight": ("F32", [10, 4]),  # tied: vLLM does not load the stored copy
        "model.layers.0.mlp.down_proj.weight": ("BF16", [4, 4]),
        "model.layers.1.mlp.down_proj.weight_scale": ("F32", [4]),  # scales keep their dtype
        "model.layers.2.mlp.down_proj.weight": ("BF16", [4, 4]),  # beyond num_hidden_layers (MTP): not loaded
        "model.layers.0.self_attn.rotary_emb.inv_freq": ("F32", [2]),
    }
    assert bytes_from_safetensors(tensors, facts) == 40 * 2 + 16 * 2 + 4 * 4


# ----------------------------------------------------------------------------------------- catalog

REQUIRED = [
    "meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-13b-hf", "meta-llama/Llama-2-70b-hf",
    "meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct",
    "meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Llama-3.1-405B-Instruct-FP8", "meta-llama/Llama-3.2-1B-Instruct",
    "meta-llama/Llama-3.2-3B-Instruct", "meta-llama/Llama-3.3-70B-Instruct",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
    "Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-Coder-32B-Instruct",
    "Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen/Qwen3-0.6B", "Qwen/Qwen3-235B-A22B",
    "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-32B-FP8", "Qwen/Qwen3-Coder-480B-A35B-Instruct",
    "mistralai/Mistral-7B-v0.1", "mistralai/Mistral-7B-Instruct-v0.2", "mistralai/Mistral-7B-Instruct-v0.3",
    "mistralai/Mistral-Small-24B-Instruct-2501", "mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai/Mixtral-8x22B-v0.1",
    "google/gemma-2-2b-it", "google/gemma-2-9b-it", "google/gemma-2-27b-it", "google/gemma-3-1b-it",
    "google/gemma-3-27b-it", "microsoft/Phi-3-mini-4k-instruct", "microsoft/Phi-3-medium-4k-instruct",
    "microsoft/phi-4", "deepseek-ai/DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
    "openai/gpt-oss-20b", "openai/gpt-oss-120b", "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
    "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8",
]


def test_catalog_size_sources_and_family_coverage():
    entries = catalog()
    assert len(entries) >= 60
    for key, entry in entries.items():
        assert entry["source"].startswith("https://"), key
    missing = [m for m in REQUIRED if catalog_entry(m) is None]
    assert missing == []


def test_every_catalog_entry_has_a_usable_architecture_and_stored_counts_agree():
    for key in catalog():
        entry = catalog_entry(key)
        facts = {k: v for k, v in entry.items() if k not in ("id", "source", "note", "same_as")}
        assert facts["layers"] > 0 and facts["hidden"] > 0 and facts["heads"] > 0 and facts["vocab"] > 0, key
        pc = count_parameters({k: v for k, v in facts.items() if k not in ("params", "weight_bytes")})
        if "params" in facts and key not in ("qwen/qwen3-next-80b-a3b-instruct",):
            assert abs(pc.total - facts["params"]) / facts["params"] < 0.02, key



# Recent catalog entries against published totals: exact HF API counts of the same architecture (Qwen2.5 Instruct)
# or the model cards' totals. Counts exclude MTP layers (vLLM loads them only for speculative decoding).
@pytest.mark.parametrize(
    ("model_id", "published"),
    [
        ("Qwen/Qwen2.5-1.5B", 1_543_714_304),  # HF API count of Qwen2.5-1.5B-Instruct, same architecture
        ("Qwen/Qwen2.5-7B", 7_615_616_512),  # HF API count of Qwen2.5-7B-Instruct
        ("Qwen/Qwen3.5-27B", 27e9),
        ("Qwen/Qwen3.5-35B-A3B", 35e9),
        ("Qwen/Qwen3.5-122B-A10B", 122e9),
        ("Qwen/Qwen3.5-397B-A17B", 397e9),
        ("Qwen/Qwen3-VL-235B-A22B-Instruct", 235e9),
        ("deepseek-ai/DeepSeek-V3.2", 671e9),  # card: 671B main model + 14B MTP module
        ("zai-org/GLM-5", 744e9),
        ("MiniMaxAI/MiniMax-M2.5", 230e9),  # MiniMax-M2 card: 230B total (same architecture)
        ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", 120e9),  # 120B total, 12B active
    ],
)
def test_recent_catalog_models_match_published_counts(model_id, published):
    entry = catalog_entry(model_id)
    facts = {k: v for k, v in entry.items() if k not in ("id", "source", "note", "params", "weight_bytes")}
    assert abs(count_parameters(facts).total - published) / published < 0.02


# Nemotron 3 Super's shape (our config, the fields NemotronHConfig reads): 88 layers of Mamba-2, attention and
# latent-MoE layers, 512 experts of width 2688 working at moe_latent_size 1024
NEMOTRON3_SUPER = {
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
    "hybrid_override_pattern": "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
    "num_hidden_layers": 88, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "intermediate_size": 2688, "moe_intermediate_size": 2688, "moe_latent_size": 1024,
    "moe_shared_expert_intermediate_size": 5376, "n_routed_experts": 512, "n_shared_experts": 1,
    "num_experts_per_tok": 22, "mamba_head_dim": 64, "mamba_num_heads": 128, "n_groups": 8, "ssm_state_size": 128,
    "conv_kernel": 4, "expand": 2, "mlp_hidden_act": "relu2", "vocab_size": 131072, "tie_word_embeddings": False,
    "max_position_embeddings": 262144, "num_nextn_predict_layers": 1, "dtype": "bfloat16",
}


def test_latent_moe_experts_work_at_the_latent_width():
    # vLLM NemotronHMoE: the routed experts take moe_latent_size inputs between fc1_latent_proj (hidden -> latent)
    # and fc2_latent_proj (latent -> hidden); 120B total is the published size (123.6B with the MTP layer, which
    # vLLM loads only for speculative decoding); at the hidden width the experts alone would be 451B
    facts = facts_from_config(NEMOTRON3_SUPER)
    assert facts["moe"]["latent"] == 1024
    pc = count_parameters(facts)
    assert pc.linear["experts"] == 40 * 512 * 2 * 1024 * 2688  # 40 MoE layers, relu2 up + down
    assert pc.linear["latent"] == 40 * 2 * 4096 * 1024
    assert abs(pc.total - 120e9) / 120e9 < 0.01
    wide = count_parameters(facts_from_config({k: v for k, v in NEMOTRON3_SUPER.items() if k != "moe_latent_size"}))
    assert wide.total > 3.5 * pc.total
    # the latent projections are ReplicatedLinear: every tensor-parallel rank holds them whole
    tp1 = weight_bytes_per_rank(facts, tp=1, include_buffers=False)
    tp2 = weight_bytes_per_rank(facts, tp=2, include_buffers=False)
    assert tp2 - tp1 / 2 >= pc.linear["latent"] * 2 / 2  # half of the latent bytes kept on each rank beyond tp1/2


def test_modelopt_mixed_precision_sizes_each_kind_in_its_own_format():
    # vLLM ModelOptMixedPrecisionConfig: a module listed in quantized_layers runs its own algorithm, one not
    # listed (the gated delta net's in_proj_ba, the vision tower) stays in the model dtype
    layer = "model.language_model.layers.{}."
    listed = {}
    for i in range(2):
        listed[layer.format(i) + "mlp.experts"] = {"quant_algo": "W4A16_NVFP4", "group_size": 16}
        listed[layer.format(i) + "self_attn.q_proj"] = {"quant_algo": "FP8"}
    cfg = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
           "num_hidden_layers": 2, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128,
           "vocab_size": 151936, "max_position_embeddings": 32768, "moe_intermediate_size": 768, "num_experts": 8,
           "num_experts_per_tok": 2, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
           "quantization_config": {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
                                   "quantized_layers": dict(listed, lm_head={"quant_algo": "NVFP4", "group_size": 16})}}
    facts = facts_from_config(cfg)
    assert model_info_from_facts(facts, "m", "test").quantization == "modelopt_mixed"  # vLLM's name for it
    assert facts["quant"]["kinds"] == {"experts": {"format": "nvfp4", "bits": 4, "group": 16},
                                       "attn": {"format": "fp8", "bits": 8},
                                       "lm_head": {"format": "nvfp4", "bits": 4, "group": 16}}
    pc = count_parameters(facts)
    padded_lm_head = pc.lm_head  # 151936 is a multiple of 64
    plain = pc.total - pc.linear["experts"] - pc.linear["attn"] - padded_lm_head
    assert weight_bytes(facts) == pytest.approx(
        pc.linear["experts"] * 0.5625 + pc.linear["attn"] * 1 + padded_lm_head * 0.5625 + plain * 2, rel=1e-9)
    # a kind listed in two formats, or an algorithm vramlint does not size, leaves the mapping unread
    twice = dict(listed, **{layer.format(1) + "self_attn.q_proj": {"quant_algo": "NVFP4"}})
    assert "kinds" not in facts_from_config({**cfg, "quantization_config": {
        "quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "quantized_layers": twice}})["quant"]


def test_nvidia_qwen36_mixed_precision_checkpoint_is_a_third_of_bf16():
    # the model card: 3.06x smaller than BF16 on disk, where both hold the bf16 MTP layer vLLM does not load;
    # the loaded weights alone are a little smaller still
    strip = ("id", "source", "note")
    mixed = weight_bytes({k: v for k, v in catalog_entry("nvidia/Qwen3.6-35B-A3B-NVFP4").items() if k not in strip})
    plain = weight_bytes({k: v for k, v in catalog_entry("Qwen/Qwen3.6-35B-A3B").items() if k not in strip})
    assert 1 / 3.3 < mixed / plain < 1 / 3.06


def test_nvfp4_qwen35_keeps_attention_and_deltanet_in_bf16():
    # nvidia's NVFP4 checkpoints quantize the routed experts only (attention, gated delta net, shared experts and
    # the vision tower stay bf16), so the weights are far more than a quarter of bf16
    plain = catalog_entry("Qwen/Qwen3.5-397B-A17B")
    fp4 = catalog_entry("nvidia/Qwen3.5-397B-A17B-NVFP4")
    strip = ("id", "source", "note")
    pc = count_parameters({k: v for k, v in fp4.items() if k not in strip})
    got = weight_bytes({k: v for k, v in fp4.items() if k not in strip})
    expected = pc.linear["experts"] * 0.5625 + (pc.total - pc.linear["experts"]) * 2
    assert got == pytest.approx(expected, rel=1e-6)
    assert 0.29 < got / weight_bytes({k: v for k, v in plain.items() if k not in strip}) < 0.31


def test_explain_resolves_a_hybrid_qwen35_offline(capsys):
    import json

    from vramlint.cli import main

    code = main(["explain", "--offline", "--gpu", "H100-SXM", "--vllm-version", "0.19.0", "--format", "json", "--",
                 "vllm", "serve", "Qwen/Qwen3.5-27B", "--max-model-len", "32768"])
    (server,) = json.loads(capsys.readouterr().out)["servers"]
    b = server["budget"]
    assert code == 0 and b is not None and b["starts"]
    # bf16 weights of 27.4B parameters (vision tower included), 16 full-attention layers of 4 KV heads x 256,
    # the float32 gated-delta-net state sets the block size (see test_budget_hybrid_state)
    assert 50 < b["weights_gib"] < 52
    assert b["kv_bytes_per_token"] == 2 * 4 * 256 * 2 * 16 and b["block_size"] == 784
