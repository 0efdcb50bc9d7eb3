"""Weights as vLLM lays them out for a kernel backend or an online quantization, pinned on real start-up logs.

The catalog facts of the gpt-oss models go through the same code a resolved config.json goes through; the
logged figures are vLLM's "Model loading took X GiB" lines (public issues and a blog post quoted per test).
"""

import pytest

from vramlint import gpus
from vramlint.budget import GiB, compute_budget, mxfp4_backend
from vramlint.model import ResolveOptions
from vramlint.modelconfig import facts_from_config
from vramlint.models import resolve_model
from vramlint.versions import parse_version
from vramlint.weights import weight_bytes_per_rank

OFFLINE = ResolveOptions(allow_network=False)


def catalog_model(name):
    info, why = resolve_model(name, OFFLINE)
    assert info is not None, why
    return info


@pytest.mark.parametrize(
    "name, gpu, version, logged, backend",
    [
        # myoceane.fr blog, vLLM 0.19.0 on an 80 GB A100: "Model loading took 13.72 GiB memory"
        ("openai/gpt-oss-20b", "A100-80GB", "0.19.0", 13.72, "marlin"),
        # vllm#23278, 0.10.1 on an H100 (pip wheel, Marlin): "Model loading took 65.9651 GiB"
        ("openai/gpt-oss-120b", "H100", "0.10.1.1", 65.9651, "marlin"),
        # vllm#33155, 0.14.1 on one H100 (Triton backend): "Model loading took 64.38 GiB memory"
        ("openai/gpt-oss-120b", "H100", "0.14.1", 64.38, "triton"),
    ],
)
def test_mxfp4_weights_follow_the_moe_backend(name, gpu, version, logged, backend):
    spec = gpus.lookup(gpu)
    assert mxfp4_backend(spec, parse_version(version), {})[0] == backend
    b = compute_budget(catalog_model(name), spec, {}, {}, version, 1)
    assert abs(b.weights_gib - logged) / logged < 0.005
    assert backend in b.sources["weights"]


@pytest.mark.parametrize(
    "image, logged, backend",
    [
        # llm-d-benchmark's empirical H100 runs on the vLLM 0.11.0 image: gpt-oss-120b weights 64.38 GiB
        ("vllm/vllm-openai:v0.11.0", 64.38, "triton"),
        # a pip-installed 0.11.0 has no triton_kernels: the Marlin layout (vllm#27508 fits it)
        (None, 65.93, "marlin"),
    ],
)
def test_mxfp4_on_hopper_before_0_12_depends_on_the_install(image, logged, backend):
    spec = gpus.lookup("H100")
    assert mxfp4_backend(spec, parse_version("0.11.0"), {}, image)[0] == backend
    b = compute_budget(catalog_model("openai/gpt-oss-120b"), spec, {}, {}, "0.11.0", 1, image=image)
    assert abs(b.weights_gib - logged) / logged < 0.005
    # the 0.10 image is not known to carry triton_kernels: Marlin, as for a pip install
    assert mxfp4_backend(spec, parse_version("0.10.2"), {}, "vllm/vllm-openai:v0.10.2")[0] == "marlin"


def test_mxfp4_marlin_pads_more_than_triton_and_env_forces_marlin():
    oss = catalog_model("openai/gpt-oss-120b")
    h100 = gpus.lookup("H100")
    triton = compute_budget(oss, h100, {}, {}, "0.14.1", 1)
    marlin = compute_budget(oss, h100, {}, {"VLLM_MXFP4_USE_MARLIN": "1"}, "0.14.1", 1)
    # Marlin pads the 2880-wide expert dimensions to 2944 / 3072: about 1.6 GiB more than Triton's layout.
    assert 1.4 < marlin.weights_gib - triton.weights_gib < 1.8


def test_gpt_oss_120b_on_one_h100_fails_as_logged():
    """vllm#23278 (0.10.1): "Available KV cache memory: -2.14 GiB", EngineCore failed to start; vllm#27508
    (~0.11.0, util 0.95, --max-num-batched-tokens 1024): "Available KV cache memory: 1.71 GiB" and the KV
    cache cannot hold the 131072-token default length."""
    oss = catalog_model("openai/gpt-oss-120b")
    h100 = gpus.lookup("H100")
    old = compute_budget(oss, h100, {}, {}, "0.10.1.1", 1)
    assert not old.starts and old.errors[0]["code"] == "no-cache-memory"
    assert abs(old.kv_cache_gib - (-2.14)) < 0.2
    tight = compute_budget(oss, h100, {"gpu_memory_utilization": 0.95, "max_num_batched_tokens": 1024}, {}, "0.11.0", 1)
    assert not tight.starts and tight.errors[0]["code"] == "kv-cache-below-max-model-len"
    assert abs(tight.kv_cache_gib - 1.71) / 1.71 < 0.10


def _llama_405b_fp8_config():
    # Shaped like Meta's FP8 checkpoint: every self-attention projection and the first and last layers'
    # feed-forward listed in modules_to_not_convert.
    skip = ["lm_head"]
    skip += [f"model.layers.{i}.self_attn.{p}" for i in range(126) for p in ("q_proj", "k_proj", "v_proj", "o_proj")]
    skip += [f"model.layers.{i}.mlp.{p}" for i in (0, 125) for p in ("gate_proj", "up_proj", "down_proj")]
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 126,
            "hidden_size": 16384, "num_attention_heads": 128, "num_key_value_heads": 8, "vocab_size": 128256,
            "intermediate_size": 53248, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192},
            "quantization_config": {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0,
                                    "modules_to_not_convert": skip}}


def test_fbgemm_fp8_keeps_attention_and_edge_layers_in_bf16():
    """vllm#6746 (~0.5.3, 8 x H100, TP 8): "Loading model weights took 57.7520 GB" per rank for
    Llama-3.1-405B-Instruct-FP8. Counting every linear layer as fp8 gave 47.78 GiB (17% low)."""
    facts = facts_from_config(_llama_405b_fp8_config())
    skip = facts["quant"]["skip"]
    assert "model.layers.0.mlp" in skip and "model.layers.125.mlp" in skip
    assert "model.layers.*.self_attn.q_proj" in skip
    per_rank = weight_bytes_per_rank(facts, tp=8) / GiB
    assert abs(per_rank - 57.752) / 57.752 < 0.02
    # the catalog entry carries the same facts
    b = compute_budget(catalog_model("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8"), gpus.lookup("H100"),
                       {"tensor_parallel_size": 8}, {}, "0.5.3", 8)
    assert abs(b.weights_gib - 57.752) / 57.752 < 0.02


def test_online_fp8_quantizes_a_bf16_checkpoint():
    """--quantization fp8 on Qwen/Qwen3-8B (bf16) stores the linear layers in fp8 and keeps the embedding and
    lm_head in bf16: the same bytes as the offline Qwen3-8B-FP8 checkpoint, which vLLM 0.10.2 logged as
    "weights memory: 8.80GiB" on an RTX 4090 (public notebook log)."""
    bf16 = catalog_model("Qwen/Qwen3-8B")
    gpu = gpus.lookup("RTX 4090")
    args = {"max_model_len": 1024, "gpu_memory_utilization": 0.8}
    plain = compute_budget(bf16, gpu, args, {}, "0.10.2", 1)
    online = compute_budget(bf16, gpu, {**args, "quantization": "fp8"}, {}, "0.10.2", 1)
    assert plain.weights_gib > 15
    assert abs(online.weights_gib - 8.80) <= 0.02
    assert "quantized to fp8 while loading" in online.sources["weights"]
    assert online.kv_cache_gib > plain.kv_cache_gib + 6
    # on Ampere vLLM runs the fp8 weights through Marlin (weight-only): same storage, a note says so
    a100 = compute_budget(bf16, gpus.lookup("A100-80GB"), {**args, "quantization": "fp8"}, {}, "0.10.2", 1)
    assert a100.starts and abs(a100.weights_gib - 8.80) <= 0.02
    assert any("Marlin" in n for n in a100.notes)
    # on a T4 (7.5) 0.10.2 refuses fp8 (minimum capability 80)
    t4 = compute_budget(bf16, gpus.lookup("T4"), {**args, "quantization": "fp8", "dtype": "half"}, {}, "0.10.2", 1)
    assert "quantization-unsupported" in [e["code"] for e in t4.errors]


def test_dtype_override_and_checkpoint_only_methods():
    bf16 = catalog_model("Qwen/Qwen3-8B")
    gpu = gpus.lookup("A100-80GB")
    half = compute_budget(bf16, gpu, {"dtype": "half"}, {}, "0.10.2", 1)
    full = compute_budget(bf16, gpu, {"dtype": "float32"}, {}, "0.10.2", 1)
    assert abs(full.weights_gib - 2 * half.weights_gib) < 0.05
    awq = compute_budget(bf16, gpu, {"quantization": "awq_marlin"}, {}, "0.10.2", 1)
    (err,) = [e for e in awq.errors if e["code"] == "quantization-needs-checkpoint"]
    assert err["message"] == "Cannot find the config file for awq_marlin" and err["arg"] == "quantization"
    bnb = compute_budget(bf16, gpu, {"quantization": "bitsandbytes"}, {}, "0.10.2", 1)
    assert bnb.weights_gib < 0.4 * half.weights_gib + 2.4  # nf4 layers; embeddings and lm_head stay bf16


def test_data_parallel_expert_parallel_per_rank():
    """vllm-project/recipes#12 (vLLM 0.10.1.dev, Qwen3-Coder-480B-A35B-Instruct-FP8, -dp=8 --enable-expert-parallel,
    8 x H20): "(62.00 GiB KV cache is needed, which is larger than the available KV cache memory (48.66 GiB) ...
    estimated maximum model length is 205728" at util 0.90 and 55.65 GiB / 235296 at 0.95. The two runs differ by
    6.99 GiB for 0.05 of utilisation: a 139.8 GiB (141 GB) H20. Each rank holds 20 of the 160 experts, all of the
    attention, and runs the MoE on the tokens of all 8 DP ranks in the profile run."""
    coder = catalog_model("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8")
    h20 = gpus.lookup("H20")
    h20_141 = type(h20)(name="H20", total_gib=139.8, compute_capability=(9, 0), bf16=True, fp8=True)
    args = {"data_parallel_size": 8, "enable_expert_parallel": True}
    for util, logged, logged_len in ((0.90, 48.66, 205728), (0.95, 55.65, 235296)):
        b = compute_budget(coder, h20_141, {**args, "gpu_memory_utilization": util}, {}, "0.10.1", 1)
        assert not b.starts
        (err,) = b.errors
        assert err["code"] == "kv-cache-below-max-model-len"
        assert "(62.00 GiB KV cache is needed" in err["message"]
        assert abs(b.kv_cache_gib - logged) / logged < 0.05
        estimated = int(err["message"].split("maximum model length is ")[1].split(".")[0])
        assert abs(estimated - logged_len) / logged_len < 0.05
        assert "experts split over 8 expert-parallel ranks" in b.sources["weights"]
    # without expert parallelism every rank would hold all 160 experts: it could not load
    whole = compute_budget(coder, h20_141, {"data_parallel_size": 8}, {}, "0.10.1", 1)
    assert whole.weights_gib > 400 and not whole.starts


def _qwen3_moe_fp8_config(layers):
    # Shaped like Qwen's block-FP8 MoE checkpoints: modules_to_not_convert lists the LM head, each layer's norms
    # and its router (mlp.gate); every attention and expert projection is fp8 with 128 x 128 block scales.
    skip = ["lm_head"]
    for i in range(layers):
        skip += [f"model.layers.{i}.input_layernorm", f"model.layers.{i}.mlp.gate",
                 f"model.layers.{i}.post_attention_layernorm"]
    return {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_hidden_layers": layers,
            "hidden_size": 4096, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
            "vocab_size": 151936, "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_experts": 128,
            "num_experts_per_tok": 8, "max_position_embeddings": 40960, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3",
                                    "weight_block_size": [128, 128], "modules_to_not_convert": skip}}


def test_fp8_skip_list_naming_norms_leaves_attention_in_fp8():
    """vLLM matches an fp8 checkpoint's modules_to_not_convert against linear-layer prefixes only
    (Fp8Config.ignored_layers, is_layer_skipped in exact mode): "post_attention_layernorm" is a norm, so the
    attention projections stay fp8. Qwen3-235B-A22B-Instruct-2507-FP8 at TP 4 (vLLM 0.27.1, public blog post,
    benchmarks/startup_logs_public.md P24): "Model loading took 55.19 GiB"."""
    facts = facts_from_config(_qwen3_moe_fp8_config(94))
    per_rank = weight_bytes_per_rank(facts, tp=4) / GiB
    assert abs(per_rank - 55.19) / 55.19 < 0.01
    # a skip list naming the attention projections themselves still keeps them in bf16
    cfg = _qwen3_moe_fp8_config(94)
    cfg["quantization_config"]["modules_to_not_convert"] += ["model.layers.*.self_attn.q_proj"]
    assert weight_bytes_per_rank(facts_from_config(cfg), tp=4) / GiB > per_rank + 1.5
    b = compute_budget(catalog_model("Qwen/Qwen3-235B-A22B-FP8"), gpus.lookup("RTX PRO 6000"),
                       {"tensor_parallel_size": 4, "max_model_len": 32768, "max_num_seqs": 32}, {}, "0.27.1", 4)
    assert abs(b.weights_gib - 55.19) / 55.19 < 0.01


def test_block_fp8_on_marlin_holds_group_scales_in_the_model_dtype():
    # below compute capability 8.9 vLLM runs FP8 weight-only on Marlin, whose block checkpoints hold one bf16 scale
    # per 128 input columns and output row (prepare_fp8_layer_for_marlin / prepare_fp8_moe_layer_for_marlin,
    # 0.9.2, 0.22.1, 0.28.0): 2/128 B more per FP8 weight than the fp32 128 x 128 block scales
    from vramlint.budget.rank_weights import fp8_marlin

    model = catalog_model("MiniMaxAI/MiniMax-M2.7")
    assert model.extra["facts"]["quant"]["block"] == [128, 128]
    a100, h100, l4 = gpus.lookup("A100-80GB"), gpus.lookup("H100"), gpus.lookup("L4")
    assert fp8_marlin(a100, parse_version("0.22.1"), {})
    assert not fp8_marlin(h100, parse_version("0.22.1"), {})
    assert not fp8_marlin(l4, parse_version("0.28.0"), {})  # 8.9: native FP8, the Triton / CUTLASS block kernels
    assert fp8_marlin(h100, parse_version("0.22.1"), {"VLLM_TEST_FORCE_FP8_MARLIN": "1"})
    assert not fp8_marlin(a100, parse_version("0.9.1"), {})  # before the earliest release read
    on_a100 = compute_budget(model, a100, {"tensor_parallel_size": 4}, {}, "0.22.1", 4)
    on_h100 = compute_budget(model, h100, {"tensor_parallel_size": 4}, {}, "0.22.1", 4)
    extra = on_a100.weights_gib - on_h100.weights_gib
    # the FP8 weights per rank are ~53 GiB: their Marlin scales 53/64 ~ 0.8 GiB
    assert 0.75 < extra < 0.9, extra
    assert "Marlin" in on_a100.sources["weights"] and "Marlin" not in on_h100.sources["weights"]


def test_dtype_float32_loads_unquantized_weights_in_four_bytes():
    """--dtype float32 builds the model in float32 (BaseModelLoader.load_model, set_default_torch_dtype): every
    unquantized tensor takes 4 bytes, twice the catalog's 2-byte count. llm-d-planner's v0.19.0 sweep on an H100
    (P78 of benchmarks/startup_logs_public.tsv): "Model loading took 29.98 GiB memory" for Llama-3.1-8B-Instruct
    with --dtype float32, 14.99 GiB without."""
    spec = gpus.lookup("H100")
    llama = catalog_model("meta-llama/Llama-3.1-8B-Instruct")
    bf16 = compute_budget(llama, spec, {"max_model_len": 8192}, {}, "0.19.0", 1)
    fp32 = compute_budget(llama, spec, {"max_model_len": 8192, "dtype": "float32"}, {}, "0.19.0", 1)
    assert round(bf16.weights_gib, 2) == 14.99
    assert abs(fp32.weights_gib - 29.98) / 29.98 < 0.005
    fp32_tp2 = compute_budget(llama, spec, {"max_model_len": 8192, "dtype": "float32", "tensor_parallel_size": 2},
                              {}, "0.19.0", 2)
    assert abs(fp32_tp2.weights_gib - fp32.weights_gib / 2) < 0.1
