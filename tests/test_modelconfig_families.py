"""config.json reading per model family. Fixtures are small config dicts written from public facts."""

from __future__ import annotations

import pytest

from vramlint.modelconfig import derived_max_model_len, facts_from_config, model_info_from_config

LLAMA31_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "max_position_embeddings": 131072, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}


def info(cfg, **kw):
    return model_info_from_config(cfg, "test/model", "test", **kw)


def test_llama_gqa_head_dim_from_hidden_and_llama3_rope_not_multiplied():
    m = info(LLAMA31_8B)
    assert (m.num_layers, m.num_attention_heads, m.num_kv_heads, m.head_dim) == (32, 32, 8, 128)
    assert m.max_position_embeddings == 131072  # llama3 rope type: vLLM does not multiply
    assert m.max_len_key == "max_position_embeddings"
    assert m.torch_dtype == "bfloat16" and not m.tie_word_embeddings and m.layer_types is None


def test_explicit_head_dim_wins_over_hidden_by_heads():
    cfg = dict(LLAMA31_8B, hidden_size=5120, num_attention_heads=32, head_dim=128)  # Mistral Small / Nemo style
    assert info(cfg).head_dim == 128


def test_mqa_falcon_multi_query_and_mha_default():
    falcon = {"model_type": "falcon", "architectures": ["FalconForCausalLM"], "hidden_size": 4544, "num_attention_heads": 71,
              "num_hidden_layers": 32, "multi_query": True, "vocab_size": 65024, "max_position_embeddings": 2048}
    assert info(falcon).num_kv_heads == 1
    opt = {"model_type": "opt", "hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12, "ffn_dim": 3072,
           "vocab_size": 50272, "max_position_embeddings": 2048, "torch_dtype": "float16"}
    m = info(opt)
    assert m.num_kv_heads == 12 and m.tie_word_embeddings  # absent tie -> transformers default True


def test_falcon_without_tie_key_shares_its_embeddings_as_lm_head():
    # FalconConfig has no tie_word_embeddings of its own (PretrainedConfig's True applies) and vLLM's
    # FalconForCausalLM then uses the word embeddings as its LM head. tiiuae/falcon-7b-instruct's config sets no
    # tie key: 6.92B parameters (the model card's count), not 7.22B with a second 65024 x 4544 matrix
    from vramlint.weights import count_parameters

    falcon7b = {"model_type": "falcon", "architectures": ["FalconForCausalLM"], "hidden_size": 4544,
                "num_attention_heads": 71, "num_hidden_layers": 32, "multi_query": True, "num_kv_heads": 71,
                "new_decoder_architecture": False, "parallel_attn": True, "bias": False, "vocab_size": 65024,
                "torch_dtype": "bfloat16"}
    facts = facts_from_config(falcon7b)
    assert facts["tie"] is True and count_parameters(facts).lm_head == 0
    assert round(count_parameters(facts).total / 1e9, 2) == 6.92
    assert facts_from_config(dict(falcon7b, tie_word_embeddings=False))["tie"] is False


def test_yarn_multiplies_original_length_and_newest_vllm_does_not():
    cfg = dict(LLAMA31_8B, max_position_embeddings=32768,
               rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    facts = facts_from_config(cfg)
    assert derived_max_model_len(facts) == 131072
    assert derived_max_model_len(facts, "0.10.2") == 131072
    assert derived_max_model_len(facts, "0.31.0") == 32768


def test_linear_and_dynamic_rope_multiply_longrope_does_not():
    linear = dict(LLAMA31_8B, max_position_embeddings=16384, rope_scaling={"type": "linear", "factor": 4.0})
    assert info(linear).max_position_embeddings == 65536
    longrope = dict(LLAMA31_8B, max_position_embeddings=131072,
                    rope_scaling={"type": "longrope", "long_factor": [1.0], "short_factor": [1.0]})
    assert info(longrope).max_position_embeddings == 131072
    su = dict(LLAMA31_8B, max_position_embeddings=131072, rope_scaling={"type": "su", "factor": 2.0})
    assert info(su).max_position_embeddings == 131072


def test_min_over_length_keys_model_max_length_override_and_default_2048():
    cfg = dict(LLAMA31_8B, rope_scaling=None, seq_length=4096)
    m = info(cfg)
    assert m.max_position_embeddings == 4096 and m.max_len_key == "seq_length"
    cohere = dict(LLAMA31_8B, rope_scaling=None, max_position_embeddings=8192, model_max_length=131072)
    assert info(cohere).max_position_embeddings == 131072
    bare = {k: v for k, v in LLAMA31_8B.items() if k not in ("max_position_embeddings", "rope_scaling")}
    assert info(bare).max_position_embeddings == 2048


GEMMA3_4B = {
    "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "torch_dtype": "bfloat16",
    "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
                    "num_hidden_layers": 34, "sliding_window": 1024, "sliding_window_pattern": 6,
                    "rope_scaling": {"factor": 8.0, "rope_type": "linear"}},
    "vision_config": {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27, "patch_size": 14,
                      "image_size": 896},
}


def test_gemma3_nested_text_config_defaults_pattern_and_unscaled_length():
    m = info(GEMMA3_4B)
    assert (m.num_attention_heads, m.num_kv_heads, m.head_dim, m.vocab_size) == (8, 4, 256, 262208)
    assert m.sliding_window == 1024
    assert m.layer_types[:6] == ["sliding_attention"] * 5 + ["full_attention"]
    assert m.layer_types.count("full_attention") == 5
    assert m.max_position_embeddings == 131072  # Gemma 3's length is already scaled: factor not applied
    assert m.torch_dtype == "bfloat16" and m.tie_word_embeddings
    assert abs(m.param_count - 4.30e9) / 4.30e9 < 0.02  # published 4.3B includes the SigLIP tower


def test_gemma2_alternates_starting_with_sliding():
    cfg = {"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
           "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000,
           "max_position_embeddings": 8192, "sliding_window": 4096}
    m = info(cfg)
    assert m.layer_types[:4] == ["sliding_attention", "full_attention"] * 2 and m.sliding_window == 4096


def test_explicit_layer_types_gpt_oss_and_mxfp4():
    cfg = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
           "intermediate_size": 2880, "num_hidden_layers": 4, "num_attention_heads": 64, "num_key_value_heads": 8,
           "head_dim": 64, "vocab_size": 201088, "max_position_embeddings": 131072, "sliding_window": 128,
           "layer_types": ["sliding_attention", "full_attention"] * 2, "num_local_experts": 32, "experts_per_token": 4,
           "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]},
           "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096}}
    m = info(cfg)
    assert m.layer_types == ["sliding_attention", "full_attention"] * 2 and m.sliding_window == 128
    assert m.num_experts == 32 and m.num_experts_per_tok == 4
    assert m.quantization == "mxfp4" and m.quant_bits == 4 and m.quant_group_size == 32
    assert m.max_position_embeddings == 131072  # yarn: 4096 x 32


def test_mistral_uniform_window_and_v03_without_window():
    v01 = dict(LLAMA31_8B, model_type="mistral", rope_scaling=None, max_position_embeddings=32768, sliding_window=4096)
    assert info(v01).layer_types == ["sliding_attention"] * 32
    v03 = dict(v01, sliding_window=None)
    assert info(v03).layer_types is None and info(v03).sliding_window is None


def test_qwen2_sliding_window_only_when_enabled_and_from_max_window_layers():
    base = {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
            "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768,
            "sliding_window": 32768, "max_window_layers": 21, "use_sliding_window": False}
    assert info(base).layer_types is None and info(base).sliding_window is None
    enabled = dict(base, use_sliding_window=True, sliding_window=4096)
    m = info(enabled)
    assert m.layer_types.count("sliding_attention") == 3 and m.layer_types[21] == "sliding_attention"
    assert facts_from_config(base)["attn_bias"] == "qkv"


DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
    "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
    "num_key_value_heads": 128, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "first_k_dense_replace": 3, "moe_layer_freq": 1, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "vocab_size": 129280, "max_position_embeddings": 163840,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "num_nextn_predict_layers": 1,
    "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096},
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]},
}


def test_deepseek_v3_mla_moe_fp8_block():
    m = info(DEEPSEEK_V3)
    assert m.is_mla and m.kv_lora_rank == 512 and m.qk_rope_head_dim == 64
    assert m.num_experts == 256 and m.extra["facts"]["moe"]["dense_layers"] == [0, 1, 2]
    assert m.extra["facts"]["moe"]["shared_inter"] == 2048
    assert m.quantization == "fp8" and m.extra["facts"]["quant"]["block"] == [128, 128]
    assert m.max_position_embeddings == 163840  # yarn 4096 x 40
    assert abs(m.param_count - 671e9) / 671e9 < 0.01  # MTP layer not counted (vLLM does not load it)


def test_kimi_k2_is_mla_by_kv_lora_rank():
    cfg = dict(DEEPSEEK_V3, model_type="kimi_k2", n_routed_experts=384, num_attention_heads=64, first_k_dense_replace=1)
    m = info(cfg)
    assert m.is_mla and m.num_experts == 384


def test_nemotron_h_hybrid_pattern_and_mamba2_state():
    cfg = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
           "intermediate_size": 21504, "num_hidden_layers": 8, "num_attention_heads": 32, "num_key_value_heads": 8,
           "head_dim": 128, "vocab_size": 131072, "max_position_embeddings": 8192, "hybrid_override_pattern": "M-M*-M-",
           "ssm_state_size": 128, "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8, "conv_kernel": 4,
           "expand": 2, "torch_dtype": "bfloat16", "tie_word_embeddings": False}
    cfg["num_hidden_layers"] = 7
    m = info(cfg)
    assert m.layer_types == ["mamba", "mlp_only", "mamba", "full_attention", "mlp_only", "mamba", "mlp_only"]
    assert m.extra["mamba"] == {"d_state": 128, "d_conv": 4, "inner": 8192, "version": 2, "n_groups": 8,
                                "n_heads": 128, "head_dim": 64}


def test_qwen3_next_linear_attention_every_fourth_layer_full():
    cfg = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
           "intermediate_size": 5120, "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 2,
           "head_dim": 256, "vocab_size": 151936, "max_position_embeddings": 262144, "full_attention_interval": 4,
           "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
           "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "num_experts": 512, "num_experts_per_tok": 10,
           "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "decoder_sparse_step": 1}
    m = info(cfg)
    assert m.layer_types == (["linear_attention"] * 3 + ["full_attention"]) * 2
    assert m.extra["linear_attention"]["v_heads"] == 32
    assert m.extra["facts"]["moe"]["shared"] == 1


def test_jamba_attention_period_and_expert_period():
    cfg = {"architectures": ["JambaForCausalLM"], "model_type": "jamba", "hidden_size": 4096, "intermediate_size": 14336,
           "num_hidden_layers": 8, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 65536,
           "attn_layer_period": 8, "attn_layer_offset": 4, "expert_layer_period": 2, "expert_layer_offset": 1,
           "num_experts": 16, "num_experts_per_tok": 2, "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2}
    m = info(cfg)
    assert m.layer_types.count("full_attention") == 1 and m.layer_types[4] == "full_attention"
    assert m.extra["facts"]["moe"]["dense_layers"] == [0, 2, 4, 6]
    assert m.extra["mamba"]["version"] == 1 and m.extra["mamba"]["inner"] == 8192


@pytest.mark.parametrize(
    ("qc", "method", "bits", "group"),
    [
        ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}, "awq", 4, 128),
        ({"quant_method": "gptq", "bits": 8, "group_size": 32, "desc_act": True, "sym": True}, "gptq", 8, 32),
        ({"quant_method": "marlin", "group_size": 128}, "marlin", 4, 128),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, "bitsandbytes", 4, None),
        ({"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"], "config_groups": {
            "group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
                                                           "group_size": 128, "symmetric": True}}}},
         "compressed-tensors", 4, 128),
        ({"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {
            "group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}},
         "compressed-tensors", 8, None),
        ({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "config_groups": {
            "group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
                                                           "group_size": 16}}}},
         "compressed-tensors", 4, 16),
        ({"quant_method": "compressed-tensors", "format": "int-quantized", "config_groups": {
            "group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
                        "input_activations": {"num_bits": 8, "type": "int"}}}},
         "compressed-tensors", 8, None),
    ],
)
def test_quantization_configs(qc, method, bits, group):
    m = info(dict(LLAMA31_8B, quantization_config=qc))
    assert (m.quantization, m.quant_bits, m.quant_group_size) == (method, bits, group)


def test_compressed_tensors_formats_are_named():
    nvfp4 = {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}}}
    w8a8 = {"quant_method": "compressed-tensors", "format": "int-quantized",
            "config_groups": {"g": {"weights": {"num_bits": 8, "type": "int", "strategy": "channel"}}}}
    assert facts_from_config(dict(LLAMA31_8B, quantization_config=nvfp4))["quant"]["format"] == "nvfp4"
    assert facts_from_config(dict(LLAMA31_8B, quantization_config=w8a8))["quant"]["format"] == "w8a8"


def test_modelopt_hf_quant_config_nvfp4():
    hf_quant = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "group_size": 16,
                "exclude_modules": ["lm_head", "model.layers.0.mlp.gate", "model.layers.1.mlp.gate"]}}
    m = info(LLAMA31_8B, hf_quant_config=hf_quant)
    assert m.quantization == "modelopt" and m.quant_bits == 4 and m.quant_group_size == 16
    assert m.extra["facts"]["quant"]["skip"] == ["lm_head", "model.layers.*.mlp.gate"]


def test_moe_mixtral_and_llama4_interleaved_dense_layers_and_chunked_attention():
    mixtral = dict(LLAMA31_8B, model_type="mixtral", num_local_experts=8, num_experts_per_tok=2, rope_scaling=None)
    m = info(mixtral)
    assert m.num_experts == 8 and "dense_layers" not in m.extra["facts"]["moe"]
    llama4 = {"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
              "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
                              "intermediate_size_mlp": 16384, "num_hidden_layers": 8, "num_attention_heads": 40,
                              "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048, "num_local_experts": 128,
                              "num_experts_per_tok": 1, "interleave_moe_layer_step": 2, "attention_chunk_size": 8192,
                              "max_position_embeddings": 1048576, "torch_dtype": "bfloat16"}}
    m4 = info(llama4)
    assert m4.extra["facts"]["moe"]["dense_layers"] == [0, 2, 4, 6]
    assert m4.extra["facts"]["moe"]["dense_inter"] == 16384
    assert m4.layer_types[:4] == ["chunked_attention"] * 3 + ["full_attention"]
    assert m4.attention_chunk_size == 8192


def test_nested_llm_config_internvl_style_and_dtype_spelling():
    cfg = {"architectures": ["InternVLChatModel"], "llm_config": dict(LLAMA31_8B, torch_dtype=None), "dtype": "float16"}
    m = info(cfg)
    assert m.num_layers == 32 and m.torch_dtype == "float16"



def test_qwen35_partial_rotary_from_rope_parameters_and_vision_merger():
    # transformers 5 configs keep partial_rotary_factor inside rope_parameters: the RoPE cache covers 64 of 256 dims
    cfg = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
           "text_config": {"model_type": "qwen3_5_text", "hidden_size": 5120, "intermediate_size": 17408,
                           "num_hidden_layers": 8, "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256,
                           "vocab_size": 248320, "max_position_embeddings": 262144, "full_attention_interval": 4,
                           "linear_num_key_heads": 16, "linear_num_value_heads": 48, "linear_key_head_dim": 128,
                           "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "attn_output_gate": True,
                           "dtype": "bfloat16", "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.25,
                                                                    "mrope_section": [11, 11, 10]}},
           "vision_config": {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "patch_size": 16,
                             "temporal_patch_size": 2, "in_channels": 3, "num_position_embeddings": 2304,
                             "spatial_merge_size": 2, "out_hidden_size": 5120, "deepstack_visual_indexes": []},
           "tie_word_embeddings": False}
    facts = facts_from_config(cfg)
    assert facts["rotary_pct"] == 0.25 and facts["qk_norm"] and facts["attn_gate"]
    assert facts["vision"] == {"hidden": 1152, "layers": 27, "inter": 4304, "patch": 16, "channels": 3, "temporal": 2,
                               "positions": 2304, "merge": 2, "deepstack": 0, "out": 5120}


def test_qwen3_vl_text_has_qk_norm_and_deepstack_mergers():
    cfg = {"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
           "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 4096, "intermediate_size": 12288,
                           "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                           "vocab_size": 151936, "max_position_embeddings": 262144, "dtype": "bfloat16"},
           "vision_config": {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "patch_size": 16,
                             "temporal_patch_size": 2, "in_channels": 3, "num_position_embeddings": 2304,
                             "spatial_merge_size": 2, "out_hidden_size": 4096, "deepstack_visual_indexes": [8, 16, 24]},
           "tie_word_embeddings": False}
    facts = facts_from_config(cfg)
    assert facts["qk_norm"] and facts["vision"]["deepstack"] == 3 and facts["vision"]["out"] == 4096


def test_mimo_is_qwen2_like_without_sliding_window():
    # vLLM's MiMoForCausalLM is a Qwen2 model: q/k/v biases only, and use_sliding_window false means no window
    cfg = {"architectures": ["MiMoForCausalLM"], "model_type": "mimo", "hidden_size": 4096, "intermediate_size": 11008,
           "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
           "vocab_size": 151680, "max_position_embeddings": 32768, "attention_bias": True, "sliding_window": 32768,
           "max_window_layers": 32, "use_sliding_window": False, "num_nextn_predict_layers": 1}
    m = info(cfg)
    assert m.layer_types is None and m.sliding_window is None
    assert m.extra["facts"]["attn_bias"] == "qkv"


def test_deepseek_sparse_attention_indexer_cache_per_token():
    from vramlint import gpus
    from vramlint.budget import compute_budget

    cfg = dict(DEEPSEEK_V3, model_type="deepseek_v32", architectures=["DeepseekV32ForCausalLM"], index_head_dim=128,
               index_n_heads=64, index_topk=2048)
    m = info(cfg)
    assert m.extra["facts"]["indexer"] == {"heads": 64, "head_dim": 128}
    h200 = gpus.lookup("H200")
    # bf16 latent 576 x 2 B plus the indexer's uint8 key: 128 fp8 values + one fp32 scale per 128
    b = compute_budget(m, h200, {"tensor_parallel_size": 8, "max_model_len": 32768}, {}, "0.11.0", 8)
    assert b.kv_bytes_per_token == (1152 + 132) * 61
    # an fp8 cache of a sparse-MLA model is fp8_ds_mla: 512 fp8 + 4 fp32 scales + 64 bf16 RoPE values = 656 B
    b8 = compute_budget(m, h200, {"tensor_parallel_size": 8, "max_model_len": 32768, "kv_cache_dtype": "fp8"}, {},
                        "0.11.0", 8)
    assert b8.kv_bytes_per_token == (656 + 132) * 61
    # the plain DeepSeek-V3 MLA cache is unchanged
    assert compute_budget(info(DEEPSEEK_V3), h200, {"tensor_parallel_size": 8, "max_model_len": 32768}, {}, "0.11.0",
                          8).kv_bytes_per_token == 1152 * 61


def _glm52_like(**extra):
    """A GLM-5.2-shaped sparse-MLA config (78 layers, IndexCache every 4th layer from offset 3), as its config.json
    spells the keys."""
    cfg = {"architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa", "hidden_size": 6144,
           "intermediate_size": 12288, "num_hidden_layers": 78, "num_attention_heads": 64, "num_key_value_heads": 64,
           "vocab_size": 154880, "max_position_embeddings": 1048576, "kv_lora_rank": 512, "q_lora_rank": 2048,
           "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "v_head_dim": 256, "index_head_dim": 128,
           "index_n_heads": 32, "index_topk": 2048, "n_routed_experts": 256, "num_experts_per_tok": 8,
           "moe_intermediate_size": 2048, "n_shared_experts": 1, "first_k_dense_replace": 3,
           "torch_dtype": "bfloat16"}
    cfg.update(extra)
    return cfg


def test_index_cache_layers_build_an_indexer_cache_from_0_24():
    from vramlint import gpus
    from vramlint.budget import compute_budget

    m = info(_glm52_like(index_topk_freq=4, index_skip_topk_offset=3))
    assert m.extra["facts"]["indexer"] == {"heads": 32, "head_dim": 128, "topk_freq": 4, "skip_topk_offset": 3}
    h200 = gpus.lookup("H200")
    args = {"tensor_parallel_size": 8, "max_model_len": 32768}
    # layers 0, 1, 2 and every 4th from 2 (max(layer - 3 + 1, 0) % 4 == 0): 21 of 78 keep an indexer key
    assert compute_budget(m, h200, args, {}, "0.24.0", 8).kv_bytes_per_token == 1152 * 78 + 132 * 21
    # 0.23 reads the settings to skip the top-k but still builds an Indexer (and its cache) in every layer
    assert compute_budget(m, h200, args, {}, "0.23.0", 8).kv_bytes_per_token == (1152 + 132) * 78
    # without IndexCache settings every layer has one
    plain = info(_glm52_like())
    assert compute_budget(plain, h200, args, {}, "0.26.0", 8).kv_bytes_per_token == (1152 + 132) * 78
    # an explicit pattern wins over the frequency: "F" layers compute (and cache), "S" layers share
    patterned = info(_glm52_like(index_topk_freq=4, index_topk_pattern="F" * 10 + "S" * 68))
    assert compute_budget(patterned, h200, args, {}, "0.26.0", 8).kv_bytes_per_token == 1152 * 78 + 132 * 10


def test_fp8_sparse_mla_latent_follows_the_backend_the_gpu_gets():
    from vramlint import gpus
    from vramlint.budget import compute_budget

    m = info(_glm52_like())
    args = {"tensor_parallel_size": 8, "max_model_len": 32768, "kv_cache_dtype": "fp8"}
    # Blackwell (10.x): FLASHINFER_MLA_SPARSE first for an fp8 cache, "the standard fp8 KV cache format": 576 B
    assert compute_budget(m, gpus.lookup("B200"), args, {}, "0.26.0", 8).kv_bytes_per_token == (576 + 132) * 78
    # Hopper: FLASHMLA_SPARSE turns the cache into fp8_ds_mla, 656 B
    assert compute_budget(m, gpus.lookup("H200"), args, {}, "0.26.0", 8).kv_bytes_per_token == (656 + 132) * 78
    # asked for by name, fp8_ds_mla stays DeepSeek's layout on Blackwell too
    ds = dict(args, kv_cache_dtype="fp8_ds_mla")
    assert compute_budget(m, gpus.lookup("B200"), ds, {}, "0.26.0", 8).kv_bytes_per_token == (656 + 132) * 78


def test_modelopt_kv_cache_quant_algo_sets_the_auto_kv_dtype_from_0_14():
    from vramlint import gpus
    from vramlint.budget import compute_budget

    llama = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
             "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
             "vocab_size": 128256, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}
    hf_quant = {"producer": {"name": "modelopt"},
                "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16}}
    m = model_info_from_config(llama, "x/llama-nvfp4", "test", hf_quant)
    assert m.extra["facts"]["quant"]["kv_cache"] == "fp8_e4m3"
    b200 = gpus.lookup("B200")
    args = {"max_model_len": 8192}
    b = compute_budget(m, b200, args, {}, "0.14.0", 1)
    assert b.kv_bytes_per_token == 2 * 8 * 128 * 1 * 32  # fp8: one byte per value
    assert "kv_cache_quant_algo" in b.sources["kv_cache_dtype"]
    # 0.13 took auto as the model dtype whatever the checkpoint said
    assert compute_budget(m, b200, args, {}, "0.13.0", 1).kv_bytes_per_token == 2 * 8 * 128 * 2 * 32
    # --kv-cache-dtype given wins
    assert compute_budget(m, b200, dict(args, kv_cache_dtype="bfloat16"), {}, "0.26.0", 1).kv_bytes_per_token == \
        2 * 8 * 128 * 2 * 32
    # kv_cache_scheme (a dict) is read before kv_cache_quant_algo; a scheme vLLM does not map leaves auto alone
    scheme = {"quantization": {"quant_algo": "FP8", "kv_cache_scheme": {"dynamic": False, "num_bits": 8,
                                                                        "type": "float"}}}
    assert model_info_from_config(llama, "x/s", "test", scheme).extra["facts"]["quant"]["kv_cache"] == "fp8_e4m3"
    odd = {"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "INT8"}}
    assert "kv_cache" not in model_info_from_config(llama, "x/o", "test", odd).extra["facts"]["quant"]
    none = {"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": None}}
    assert "kv_cache" not in model_info_from_config(llama, "x/n", "test", none).extra["facts"]["quant"]


def test_catalog_glm_5_2_nvfp4_takes_the_fp8_kv_cache_its_checkpoint_names():
    from vramlint import gpus
    from vramlint.budget import compute_budget
    from vramlint.model import ResolveOptions
    from vramlint.models import resolve_model

    m, _ = resolve_model("nvidia/GLM-5.2-NVFP4", ResolveOptions(allow_network=False))
    b = compute_budget(m, gpus.lookup("B200"), {"tensor_parallel_size": 4, "max_model_len": 819200}, {}, "0.26.0", 4)
    # fp8 latent in FLASHINFER_MLA_SPARSE's standard format on every layer, an indexer key on 21 of the 78
    assert b.kv_bytes_per_token == 576 * 78 + 132 * 21


def test_a_nested_llama_text_config_takes_llamaconfig_defaults_for_the_sizes_it_omits():
    # llava-hf/llava-1.5-7b-hf's text_config names only vocab (32064), length and dtype; transformers builds a
    # LlamaConfig from it, so the rest are LlamaConfig's defaults: Llama-2-7B's shape (6,738,415,616 parameters
    # with its 32000 vocab), here with 64 more rows in the embedding and the LM head
    from vramlint.weights import count_parameters

    llava = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "tie_word_embeddings": False,
             "text_config": {"architectures": ["LlamaForCausalLM"], "max_position_embeddings": 4096,
                             "model_type": "llama", "torch_dtype": "float16", "vocab_size": 32064},
             "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
                               "model_type": "clip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 24,
                               "patch_size": 14}}
    facts = facts_from_config(llava)
    assert (facts["layers"], facts["hidden"], facts["heads"], facts["kv_heads"], facts["inter"]) == (32, 4096, 32, 32, 11008)
    assert facts["max_pos"] == 4096 and facts["vocab"] == 32064
    counted = count_parameters(facts)
    assert counted.total - counted.vision == 6_738_415_616 + 2 * 64 * 4096


def test_starcoder2_without_tie_key_shares_its_embeddings_as_lm_head():
    # Starcoder2Config sets no tie_word_embeddings of its own (PretrainedConfig's True applies) and vLLM's
    # Starcoder2ForCausalLM uses embed_tokens as its LM head then. bigcode/starcoder2-3b's config sets no tie key:
    # 3.03B parameters (the Hub's count), not 3.18B with a second 49152 x 3072 matrix
    from vramlint.weights import count_parameters

    starcoder2_3b = {"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2", "hidden_size": 3072,
                     "intermediate_size": 12288, "max_position_embeddings": 16384, "num_attention_heads": 24,
                     "num_hidden_layers": 30, "num_key_value_heads": 2, "sliding_window": 4096, "use_bias": True,
                     "norm_type": "layer_norm", "vocab_size": 49152}
    facts = facts_from_config(starcoder2_3b)
    assert facts["tie"] is True and count_parameters(facts).lm_head == 0
    assert round(count_parameters(facts).total / 1e9, 2) == 3.03


def test_cohere_and_cohere2_share_the_word_embeddings_as_lm_head_whatever_the_config_says():
    # vLLM's CohereForCausalLM (vllm/model_executor/models/commandr.py, also Cohere2ForCausalLM) computes logits with
    # embed_tokens and drops a checkpoint's lm_head: a Command R7B-shaped config (4096 wide, 32 layers, 256000
    # vocabulary) is 8.03B parameters without a second 256000 x 4096 matrix
    from vramlint.weights import count_parameters

    r7b = {"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2", "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 256000, "max_position_embeddings": 8192, "sliding_window": 4096, "sliding_window_pattern": 4}
    for cfg in (r7b, dict(r7b, tie_word_embeddings=False)):
        facts = facts_from_config(cfg)
        assert facts["tie"] is True and count_parameters(facts).lm_head == 0
    assert round(count_parameters(facts_from_config(r7b)).total / 1e9, 2) == 8.03
    llama_untied = facts_from_config(dict(LLAMA31_8B, tie_word_embeddings=False))
    assert llama_untied["tie"] is False
