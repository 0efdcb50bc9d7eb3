"""Each start-up error vLLM raises for a configuration, with its text and the argument responsible."""

from vramlint import gpus
from vramlint.budget import compute_budget
from vramlint.model import ModelInfo

LLAMA = dict(name="meta-llama/Llama-3.1-8B-Instruct", source="test", num_layers=32, hidden_size=4096,
             num_attention_heads=32, num_kv_heads=8, head_dim=128, vocab_size=128256, intermediate_size=14336,
             max_position_embeddings=131072, torch_dtype="bfloat16", weight_bytes=8030261248 * 2,
             max_len_key="max_position_embeddings")


def run(args=None, env=None, version="0.11.0", gpu="H100", **over):
    return compute_budget(ModelInfo(**{**LLAMA, **over}), gpus.lookup(gpu), args if args is not None else {"max_model_len": 8192},
                          env or {}, version, 1)


def codes(b):
    return [e["code"] for e in b.errors]


def test_fine_config_starts():
    b = run()
    assert b.starts and b.errors == []


def test_max_model_len_above_model_maximum_and_the_override():
    b = run({"max_model_len": 200000}, version="0.10.2")
    (err,) = [e for e in b.errors if e["code"] == "max-model-len-above-model"]
    assert err["arg"] == "max_model_len"
    assert err["message"].startswith("User-specified max_model_len (200000) is greater than the derived max_model_len "
                                     "(max_position_embeddings=131072 or model_max_length=None in model's config.json).")
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution" in err["message"]
    old = run({"max_model_len": 200000}, version="0.6.3")
    assert "This may lead to incorrect model outputs or CUDA errors" in old.errors[0]["message"]
    allowed = run({"max_model_len": 200000}, env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"})
    assert "max-model-len-above-model" not in codes(allowed)


def test_tp_not_dividing_heads():
    b = compute_budget(ModelInfo(**LLAMA), gpus.lookup("H100"), {"tensor_parallel_size": 3, "max_model_len": 8192}, {}, "0.11.0", 3)
    assert "tp-heads" in codes(b)
    err = b.errors[codes(b).index("tp-heads")]
    assert err["message"] == "Total number of attention heads (32) must be divisible by tensor parallel size (3)."
    assert err["arg"] == "tensor_parallel_size"
    assert "tp-kv-heads" in codes(b)  # 8 KV heads and TP 3 do not divide each other either


def test_bf16_on_t4_by_version():
    small = dict(num_layers=16, hidden_size=2048, num_attention_heads=32, num_kv_heads=8, head_dim=64,
                 intermediate_size=8192, weight_bytes=int(2.4e9), max_position_embeddings=131072)
    old = run({"max_model_len": 4096}, version="0.8.5", gpu="T4", **small)
    (err,) = [e for e in old.errors if e["code"] == "bf16-unsupported"]
    assert err["message"] == ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 "
                              "GPU has compute capability 7.5. You can use float16 instead by explicitly setting the "
                              "`dtype` flag in CLI, for example: --dtype=half.")
    assert err["arg"] == "dtype"
    assert old.engine == "v0"  # CC < 8.0 falls back to V0 in 0.8 - 0.10.1
    v06 = run({"max_model_len": 4096}, version="0.6.3", gpu="T4", **small)
    assert "setting the`dtype` flag" in v06.errors[0]["message"]
    new = run({"max_model_len": 4096}, version="0.9.2", gpu="T4", **small)
    assert "bf16-unsupported" not in codes(new)
    assert any("Falling back to torch.float16" in n for n in new.notes)
    explicit = run({"max_model_len": 4096, "dtype": "bfloat16"}, version="0.9.2", gpu="T4", **small)
    assert "bf16-unsupported" in codes(explicit)
    half = run({"max_model_len": 4096, "dtype": "half"}, version="0.8.5", gpu="T4", **small)
    assert half.starts


def test_engine_fallback_and_v1_on_t4_after_0_10_2():
    small = dict(num_layers=16, hidden_size=2048, num_attention_heads=32, num_kv_heads=8, head_dim=64,
                 intermediate_size=8192, weight_bytes=int(2.4e9))
    assert run({"max_model_len": 4096, "dtype": "half"}, version="0.10.1.1", gpu="T4", **small).engine == "v0"
    assert run({"max_model_len": 4096, "dtype": "half"}, version="0.10.2", gpu="T4", **small).engine == "v1"
    forced = run({"max_model_len": 4096, "dtype": "half"}, env={"VLLM_USE_V1": "1"}, version="0.9.2", gpu="T4", **small)
    assert forced.errors[0]["message"] == "VLLM_USE_V1=1 is not supported with Compute Capability < 8.0."


def test_quantization_unsupported_on_gpu():
    awq_v100 = run({"max_model_len": 4096, "dtype": "half"}, version="0.6.4", gpu="V100-16GB", quantization="awq",
                   torch_dtype="float16", weight_bytes=int(5.5e9))
    err = awq_v100.errors[codes(awq_v100).index("quantization-unsupported")]
    assert err["message"] == ("The quantization method awq is not supported for the current GPU. Minimum capability: 75. "
                              "Current capability: 70.")
    assert err["arg"] == "model"
    fp8_t4 = run({"max_model_len": 4096, "dtype": "half", "quantization": "fp8"}, version="0.10.1.1", gpu="T4",
                 num_layers=16, weight_bytes=int(2e9))
    err = fp8_t4.errors[codes(fp8_t4).index("quantization-unsupported")]
    assert err["arg"] == "quantization" and "Minimum capability: 80. Current capability: 75." in err["message"]
    # From 0.15 FP8 runs weight-only on Turing
    later = run({"max_model_len": 4096, "dtype": "half", "quantization": "fp8"}, version="0.15.1", gpu="T4",
                num_layers=16, weight_bytes=int(2e9))
    assert "quantization-unsupported" not in codes(later)


def test_modelopt_mixed_precision_runs_on_turing_from_0_24():
    # vLLM names a MIXED_PRECISION ModelOpt checkpoint modelopt_mixed; its get_min_capability is 89 up to 0.23 and
    # 75 from 0.24 (Marlin W4A16 experts, Marlin FP8 dense layers)
    early = run({"max_model_len": 4096, "dtype": "half"}, version="0.23.0", gpu="T4", quantization="modelopt_mixed",
                num_layers=16, weight_bytes=int(2e9))
    err = early.errors[codes(early).index("quantization-unsupported")]
    assert "modelopt_mixed is not supported" in err["message"] and "Minimum capability: 89." in err["message"]
    later = run({"max_model_len": 4096, "dtype": "half"}, version="0.24.0", gpu="T4", quantization="modelopt_mixed",
                num_layers=16, weight_bytes=int(2e9))
    assert "quantization-unsupported" not in codes(later)


def test_batched_tokens_below_max_model_len_without_chunked_prefill():
    b = run({"max_model_len": 16384, "max_num_batched_tokens": 8192}, version="0.6.5", gpu="A100-80GB")
    err = b.errors[codes(b).index("batched-tokens-below-max-model-len")]
    assert err["message"].startswith("max_num_batched_tokens (8192) is smaller than max_model_len (16384).")
    assert err["arg"] == "max_num_batched_tokens"
    chunked = run({"max_model_len": 16384, "max_num_batched_tokens": 8192, "enable_chunked_prefill": True},
                  version="0.6.5", gpu="A100-80GB")
    assert "batched-tokens-below-max-model-len" not in codes(chunked)
    v1 = run({"max_model_len": 16384, "max_num_batched_tokens": 8192}, version="0.11.0", gpu="A100-80GB")
    assert v1.starts  # V1 always chunks prefill


def test_batched_tokens_below_max_num_seqs():
    b = run({"max_model_len": 8192, "max_num_batched_tokens": 128})
    assert "max_num_batched_tokens (128) must be greater than or equal to max_num_seqs (1024)." in [
        e["message"] for e in b.errors]


def test_utilization_out_of_range_by_version():
    old = run({"max_model_len": 8192, "gpu_memory_utilization": 1.2}, version="0.8.5")
    assert "GPU memory utilization must be less than 1.0. Got 1.2." in [e["message"] for e in old.errors]
    new = run({"max_model_len": 8192, "gpu_memory_utilization": 1.2}, version="0.11.0")
    err = new.errors[codes(new).index("utilization-out-of-range")]
    assert "Input should be less than or equal to 1" in err["message"] and err["arg"] == "gpu_memory_utilization"
    zero = run({"max_model_len": 8192, "gpu_memory_utilization": 0}, version="0.11.0")
    assert "Input should be greater than 0" in zero.errors[0]["message"]


def test_weights_larger_than_gpu():
    b = run({"max_model_len": 8192}, gpu="L4", weight_bytes=int(70e9 * 2))
    assert "weights-exceed-gpu" in codes(b) and not b.starts
    assert "CUDA out of memory" in b.errors[codes(b).index("weights-exceed-gpu")]["message"]


def test_no_memory_for_cache_blocks_v1():
    b = run({"max_model_len": 8192}, gpu="L4", weight_bytes=int(21.5 * 2**30))
    assert "no-cache-memory" in codes(b)
    assert b.num_gpu_blocks == 0


def test_free_memory_below_requested_v1():
    b = run({"max_model_len": 8192, "gpu_memory_utilization": 0.999}, version="0.10.2")
    err = b.errors[codes(b).index("free-below-requested")]
    assert err["message"].startswith("Free memory on device (")
    assert "is less than desired GPU memory utilization (0.999," in err["message"]


def test_unknown_kv_cache_dtype():
    b = run({"max_model_len": 8192, "kv_cache_dtype": "int3"})
    assert {"code": "kv-cache-dtype", "message": "Unknown kv cache dtype: int3", "arg": "kv_cache_dtype"} in b.errors


def test_kv_cache_memory_bytes_and_block_override():
    b = run({"max_model_len": 8192, "kv_cache_memory_bytes": 10 * 2**30})
    assert b.kv_cache_gib == 10.0 and b.num_gpu_blocks == 10 * 2**30 // (16 * 131072)
    o = run({"max_model_len": 8192, "num_gpu_blocks_override": 1000})
    assert o.num_gpu_blocks == 1000 and o.sources["num_gpu_blocks"] == "--num-gpu-blocks-override"
    assert o.max_concurrency == round(1000 / 512, 2)


def test_sources_say_where_inputs_came_from():
    b = run({"max_model_len": 8192})
    assert b.sources["max_model_len"] == "--max-model-len"
    assert b.sources["gpu_memory_utilization"] == "default for vLLM 0.11.0"
    assert b.gpu_memory_utilization == 0.9
    assert run({}, version="0.20.0").gpu_memory_utilization == 0.92
    assert "model maximum" in run({}).sources["max_model_len"]
