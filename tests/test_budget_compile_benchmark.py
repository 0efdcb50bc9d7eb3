"""A cold torch.compile inside vLLM's profiling window (vramlint.budget.profile_compile): Inductor's combo-kernel
benchmark, which vLLM turns on from 0.12, runs the embedding gather on a fresh copy of the rank's embedding table,
and the peak vLLM subtracts holds it. Shaped after the 0.29 RTX 4090 logs of a Qwen3-8B-like model (P47 - P49 of
benchmarks/startup_logs_public.md: 1.23 / 1.28 GiB cold-compile peaks, 0.44 with the compile cache warm); the
model below is made up with those shapes, not the catalog's checkpoint."""

import pytest

from vramlint import gpus, versions
from vramlint.budget import GiB, compute_budget
from vramlint.budget.configuration import resolve_configuration
from vramlint.budget.loading import load_weights
from vramlint.budget.profile import profile_memory
from vramlint.budget.profile_compile import ROCM_FLUSH_BYTES, compile_benchmark, compile_benchmark_bytes
from vramlint.model import ModelInfo

MiB = 1 << 20
WIDE = dict(name="test/wide-vocab-8b", source="test facts", architecture="Qwen3ForCausalLM", model_type="qwen3",
            num_layers=36, hidden_size=4096, num_attention_heads=32, num_kv_heads=8, head_dim=128,
            vocab_size=151936, intermediate_size=12288, max_position_embeddings=40960, torch_dtype="bfloat16",
            weight_bytes=int(15.27 * GiB), weight_bytes_source="safetensors metadata")
TABLE = 151936 * 4096 * 2  # the vocabulary is already a multiple of 64


def _beh(version, args=None, model=None, gpu="RTX-4090"):
    return versions.behavior(version, gpus.lookup(gpu), args or {}, {}, ModelInfo(**(model or WIDE)), 4096)


def test_which_starts_benchmark_the_embedding_gather():
    model = ModelInfo(**WIDE)
    for version in ("0.12.0", "0.19.0", "0.28.0", "0.34.0"):
        assert compile_benchmark(_beh(version), {}, model)[0], version
    assert not compile_benchmark(_beh("0.11.0"), {}, model)[0]  # torch 2.8: no combo kernels set
    assert not compile_benchmark(_beh("0.28.0", {"enforce_eager": True}), {"enforce_eager": True}, model)[0]
    for args in ({"optimization_level": 0}, {"compilation_config": {"mode": 0}},
                 {"compilation_config": '{"mode": "STOCK_TORCH_COMPILE"}'},
                 {"compilation_config": {"backend": "eager"}},
                 {"compilation_config": {"inductor_compile_config": {"benchmark_combo_kernel": False}}},
                 {"enable_prompt_embeds": True}):
        assert not compile_benchmark(_beh("0.28.0", args), args, model)[0], args
    # naming one of the two keys stops vLLM from setting either; Inductor's defaults are off
    only_combo = {"compilation_config": {"inductor_compile_config": {"combo_kernels": True}}}
    assert not compile_benchmark(_beh("0.28.0", only_combo), only_combo, model)[0]
    deterministic = {"compilation_config": {"inductor_compile_config": {"deterministic": True}}}
    assert not compile_benchmark(_beh("0.33.0", deterministic), deterministic, model)[0]
    assert compile_benchmark(_beh("0.28.0", deterministic), deterministic, model)[0]
    vision = ModelInfo(**dict(WIDE, extra={"facts": {"vision": {"depth": 24}}}))
    assert not compile_benchmark(_beh("0.28.0"), {}, vision)[0]


def test_benchmark_bytes_are_the_table_its_output_and_the_flush():
    model = ModelInfo(**WIDE)
    rtx = gpus.lookup("RTX-4090")
    one, how = compile_benchmark_bytes(model, rtx, 1, 4096, 2)
    assert one == TABLE + 4096 * 4096 * 2 + 72 * MiB
    assert "151936 x 4096" in how and "72 MiB L2" in how
    two, _ = compile_benchmark_bytes(model, rtx, 2, 4096, 2)
    assert two == TABLE // 2 + 4096 * 4096 * 2 + 72 * MiB
    odd = ModelInfo(**dict(WIDE, vocab_size=152000))  # padded to 152,000 -> 152,000 (64 x 2,375)
    assert compile_benchmark_bytes(odd, rtx, 1, 0, 2)[0] - 72 * MiB == 152000 * 4096 * 2
    odd = ModelInfo(**dict(WIDE, vocab_size=151937))
    assert compile_benchmark_bytes(odd, rtx, 1, 0, 2)[0] - 72 * MiB == 152000 * 4096 * 2
    amd = compile_benchmark_bytes(model, gpus.lookup("MI300X"), 1, 0, 2)[0]
    assert amd == TABLE + ROCM_FLUSH_BYTES
    unknown, how = compile_benchmark_bytes(model, gpus.lookup("B200"), 1, 0, 2)
    assert unknown == TABLE and "not in the catalog" in how


def test_the_cold_compile_peak_replaces_a_smaller_profile_peak():
    """512 batched tokens and 8 sequences: the forward pass and sampler peak far below the table copy, so the
    activation vLLM subtracts is the benchmark's, 1.23 GiB (P47 logs 1.23); eager, nothing is compiled."""
    gpu = gpus.lookup("RTX-4090")
    args = {"max_model_len": 4096, "max_num_batched_tokens": 512, "max_num_seqs": 8, "gpu_memory_utilization": 0.75}
    model = ModelInfo(**WIDE)
    cold = compute_budget(model, gpu, args, {}, "0.29.0", 1)
    eager = compute_budget(model, gpu, {**args, "enforce_eager": True}, {}, "0.29.0", 1)
    assert cold.activation_gib == pytest.approx((TABLE + 512 * 4096 * 2 + 72 * MiB) / GiB, abs=0.01)
    assert eager.activation_gib < 0.2
    assert "cold torch.compile" in cold.sources["activation"]
    assert "cold torch.compile" not in eager.sources["activation"]
    assert cold.kv_cache_gib < eager.kv_cache_gib - 1.0


def test_only_the_first_pipeline_stage_holds_the_table():
    gpu = gpus.lookup("L4")
    args = {"max_model_len": 4096, "max_num_seqs": 128, "pipeline_parallel_size": 2}
    cfg = resolve_configuration(ModelInfo(**WIDE), gpu, args, {}, "0.28.0", 2)
    first, last = profile_memory(cfg, load_weights(cfg)).activation
    bench = TABLE + cfg.max_num_batched_tokens * 4096 * 2 + 48 * MiB
    assert first == bench
    assert last < bench - GiB // 2


def test_a_warm_compile_cache_loads_the_graphs_and_benchmarks_nothing():
    """A start whose compiled graphs are already in VLLM_CACHE_ROOT (vLLM 0.17.1 logs "Directly load AOT
    compilation"): the profiling window holds the forward pass and the sampler only. Shaped after one GPU of 24
    GiB at 0.9 with 2,048 batched tokens, an 8B-like model; VLLM_DISABLE_COMPILE_CACHE=1 reads no cache, so the
    start stays cold whatever the caller says."""
    gpu = gpus.lookup("RTX-3090")
    args = {"max_model_len": 8192}
    model = ModelInfo(**WIDE)
    cold = compute_budget(model, gpu, args, {}, "0.17.1", 1)
    warm = compute_budget(model, gpu, args, {}, "0.17.1", 1, compile_cache="warm")
    eager = compute_budget(model, gpu, {**args, "enforce_eager": True}, {}, "0.17.1", 1)
    assert "cold torch.compile" in cold.sources["activation"]
    assert "cold torch.compile" not in warm.sources["activation"]
    assert warm.activation_gib == eager.activation_gib < cold.activation_gib - 0.5
    assert warm.kv_cache_gib > cold.kv_cache_gib + 0.5
    assert warm.sources["compile_cache"].startswith("warm (as given)")
    assert "compile_cache" not in cold.sources
    disabled = compute_budget(model, gpu, args, {"VLLM_DISABLE_COMPILE_CACHE": "1"}, "0.17.1", 1,
                              compile_cache="warm")
    assert disabled.activation_gib == cold.activation_gib
    assert "reads no compile cache" in disabled.sources["compile_cache"]
    forced = {**args, "compilation_config": {"inductor_compile_config": {"force_disable_caches": True}}}
    assert compile_benchmark(_beh("0.17.1", forced), forced, model, {}, "warm")[0]
    assert not compile_benchmark(_beh("0.17.1"), {}, model, {}, "warm")[0]
    with pytest.raises(ValueError):
        compute_budget(model, gpu, args, {}, "0.17.1", 1, compile_cache="lukewarm")
