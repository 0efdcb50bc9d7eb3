"""CUDA graphs in the profile and verdict stages: the sizes each release captures, when their memory is taken,
and the capture that runs out of memory after the KV cache was sized (the 0.8.5 4 x A10 log, P07 of
benchmarks/startup_logs_public.md)."""

from vramlint import gpus, versions
from vramlint.budget import GiB, compute_budget
from vramlint.budget.configuration import resolve_configuration
from vramlint.budget.loading import load_weights
from vramlint.budget.profile import profile_memory
from vramlint.budget.profile_graphs import (
    NCCL_BYTES_PER_CAPTURED_ALL_REDUCE,
    capture_sizes,
    graph_pool_bytes,
    nccl_graph_bytes,
)
from vramlint.model import ModelInfo, ResolveOptions
from vramlint.models import resolve_model

LLAMA_31_8B = dict(name="meta-llama/Llama-3.1-8B-Instruct", source="test facts", num_layers=32, hidden_size=4096,
                   num_attention_heads=32, num_kv_heads=8, head_dim=128, vocab_size=128256, intermediate_size=14336,
                   max_position_embeddings=131072, torch_dtype="bfloat16", weight_bytes=int(14.99 * GiB),
                   weight_bytes_source="safetensors metadata")


def _sizes(version, max_num_seqs=256, max_num_batched_tokens=8192, eager=False):
    beh = versions.behavior(version, gpus.lookup("A10"), {}, {}, None, 8192)
    return capture_sizes(beh, max_num_seqs, max_num_batched_tokens, eager)


def test_capture_sizes_follow_each_release():
    """_set_cudagraph_sizes: V0 up to the first size >= max_num_seqs (35 for 256); V1 0.8.5 [1, 2, 4] + 8 ... 512
    (67, whatever max_num_seqs); 0.11 up to min(2 x max_num_seqs, 512) in steps of 8 plus FULL decode graphs up to
    max_num_seqs; 0.12+ steps of 16 from 256: 51 PIECEWISE and 35 FULL for 256 sequences, as the 0.21 log of
    P10 says ("PIECEWISE=51", "FULL=35")."""
    assert _sizes("0.6.6") == ([], [1, 2, 4, *range(8, 257, 8)])
    piecewise, full = _sizes("0.8.5", max_num_seqs=16)
    assert len(piecewise) == 67 and max(piecewise) == 512 and full == []
    piecewise, full = _sizes("0.11.0")
    assert (len(piecewise), max(piecewise), len(full), max(full)) == (67, 512, 35, 256)
    piecewise, full = _sizes("0.21.0")
    assert (len(piecewise), len(full)) == (51, 35)
    piecewise, full = _sizes("0.21.0", max_num_seqs=32)
    assert max(piecewise) == 64 and max(full) == 32
    assert _sizes("0.21.0", eager=True) == ([], [])


def test_interactivity_mode_captures_every_small_batch():
    """_set_cudagraph_sizes (0.17 - 0.29): --performance-mode interactivity starts the capture sizes with 1 ... 32
    instead of [1, 2, 4], then the same grid (8, 16, ... 248; 256, 272, ...), de-duplicated: for 128 sequences
    (largest 256) 32 + 27 + 1 = 60 PIECEWISE sizes against 35, and the FULL ones up to 128: 32 + 12 = 44 against 19."""
    a10 = gpus.lookup("A10")
    beh = versions.behavior("0.28.0", a10, {"performance_mode": "interactivity"}, {}, None, 4096)
    piecewise, full = capture_sizes(beh, 128, 2048, False)
    assert piecewise[:33] == [*range(1, 33), 40] and max(piecewise) == 256 and len(piecewise) == 60
    assert len(full) == 44 and max(full) == 128
    balanced = versions.behavior("0.28.0", a10, {}, {}, None, 4096)
    assert [len(x) for x in capture_sizes(balanced, 128, 2048, False)] == [35, 19]
    before = versions.behavior("0.16.0", a10, {"performance_mode": "interactivity"}, {}, None, 4096)
    assert [len(x) for x in capture_sizes(before, 128, 2048, False)] == [35, 19]


def test_graph_memory_is_budgeted_only_where_vllm_profiles_it():
    """0.20+ subtract the estimate before the KV cache (FULL_AND_PIECEWISE: both modes' captures); 0.17 and
    --enforce-eager subtract nothing."""
    a10 = gpus.lookup("A10")
    model = ModelInfo(**LLAMA_31_8B)
    new = compute_budget(model, a10, {"max_model_len": 4096}, {}, "0.21.0", 1)
    assert new.cudagraph_gib == round((51 + 35) * 4 * 2**20 / GiB + 2 * 32 * 2**20 / GiB, 2)
    assert compute_budget(model, a10, {"max_model_len": 4096}, {}, "0.17.0", 1).cudagraph_gib == 0
    eager = compute_budget(model, a10, {"max_model_len": 4096, "enforce_eager": True}, {}, "0.21.0", 1)
    assert eager.cudagraph_gib == 0


def test_nccl_graph_memory_counts_every_captured_all_reduce():
    """Two all-reduces per layer and the embedding's, for every captured size and mode."""
    assert nccl_graph_bytes([1, 2], [1], 10) == 3 * 21 * NCCL_BYTES_PER_CAPTURED_ALL_REDUCE
    assert graph_pool_bytes([1, 2], [1], 10) == 3 * 4 * 2**20 + 2 * 10 * 2**20


def _qwen3_30b():
    model, why = resolve_model("Qwen/Qwen3-30B-A3B", ResolveOptions(allow_network=False))
    assert model is not None, why
    return model


def test_capture_runs_out_of_memory_after_the_kv_cache_on_four_a10s():
    """P07: vLLM 0.8.5, Qwen3-30B-A3B at TP 4 on A10s (PCIe: no custom all-reduce for 4 ranks), default
    utilisation: the KV cache is sized, then capture_model runs out of memory; --enforce-eager starts, and so does
    a lower utilisation, which leaves the graphs more room."""
    model, a10 = _qwen3_30b(), gpus.lookup("A10")
    args = {"max_model_len": 8192, "tensor_parallel_size": 4}
    failing = compute_budget(model, a10, args, {}, "0.8.5", 4)
    assert [e["code"] for e in failing.errors] == ["cudagraph-capture-oom"]
    error = failing.errors[0]
    assert error["arg"] == "gpu_memory_utilization" and "--enforce-eager" in error["fix"]
    assert "capture_model" in error["message"] and "NCCL" in error["message"]
    assert error["short"].startswith("the CUDA graphs need about 5.")  # VRL005's headline
    assert failing.kv_tokens > 8192  # the KV cache itself was large enough
    assert compute_budget(model, a10, {**args, "enforce_eager": True}, {}, "0.8.5", 4).starts
    assert compute_budget(model, a10, {**args, "gpu_memory_utilization": 0.75}, {}, "0.8.5", 4).starts
    # two A10s have a peer-to-peer custom all-reduce: no NCCL in the graphs
    two = resolve_configuration(model, a10, {**args, "tensor_parallel_size": 2}, {}, "0.8.5", 2)
    profile = profile_memory(two, load_weights(two))
    assert profile.capture_nccl == [0] and profile.capture[0] > 0


def test_capture_with_nccl_after_0_8_is_a_note_not_an_error():
    """0.9+ pin torch 2.7+ and its newer NCCL (and 0.11+ no longer force NCCL_CUMEM_ENABLE=0): the per-collective
    cost measured on 0.8.5 does not carry over (P21, 0.10.2 on 8 x L40S, took at most a third of it), so the same
    deployment gets a note and no refusal."""
    model, a10 = _qwen3_30b(), gpus.lookup("A10")
    for version in ("0.9.2", "0.10.2", "0.11.0"):
        budget = compute_budget(model, a10, {"max_model_len": 8192, "tensor_parallel_size": 4}, {}, version, 4)
        assert budget.starts, version
        assert any("captured into CUDA graphs go through NCCL" in n for n in budget.notes)
    old = compute_budget(model, a10, {"max_model_len": 8192, "tensor_parallel_size": 4}, {}, "0.8.4", 4)
    assert not any("captured into CUDA graphs go through NCCL" in n for n in old.notes)


def _qwen3_8b():
    model, why = resolve_model("Qwen/Qwen3-8B", ResolveOptions(allow_network=False))
    assert model is not None, why
    return model


def test_sampler_warm_up_after_the_capture_must_fit_what_the_graphs_leave():
    """V1 0.9.2 - 0.19 capture the graphs after the KV cache, then warm the sampler up on min(max_num_seqs,
    max_num_batched_tokens) dummy requests (compile_or_warm_up_model): at 0.97 of an L4 the graphs fit, the
    768-request warm-up over Qwen3's 151,936-token vocabulary does not. The same command starts with fewer
    requests, in eager mode (no graphs), and from 0.20, whose KV sizing subtracts the graphs first. With 512
    requests the cold compile's benchmark copy of the embedding table (1.22 GiB) is the larger profile peak, so the
    KV cache leaves the warm-up room (tests/test_budget_compile_benchmark.py)."""
    model, l4 = _qwen3_8b(), gpus.lookup("L4")
    args = {"max_model_len": 4096, "gpu_memory_utilization": 0.97, "max_num_seqs": 768}
    failing = compute_budget(model, l4, args, {}, "0.19.0", 1)
    assert [e["code"] for e in failing.errors] == ["sampler-warmup-oom"]
    error = failing.errors[0]
    assert error["message"].startswith("CUDA out of memory occurred when warming up sampler with 768 dummy requests.")
    assert error["arg"] == "gpu_memory_utilization" and "--max-num-seqs" in error["fix"]
    cfg = resolve_configuration(model, l4, args, {}, "0.19.0", 1)
    profile = profile_memory(cfg, load_weights(cfg))
    # the warm-up's own tensors: bf16 logits, their fp32 copy, the probabilities and the noise (14 B per logit)
    assert profile.warmup_seqs == 768
    assert profile.warmup >= 768 * 151936 * 14
    assert compute_budget(model, l4, {**args, "max_num_seqs": 128}, {}, "0.19.0", 1).starts
    assert compute_budget(model, l4, {**args, "max_num_seqs": 512}, {}, "0.19.0", 1).starts
    assert compute_budget(model, l4, {**args, "enforce_eager": True}, {}, "0.19.0", 1).starts
    assert compute_budget(model, l4, args, {}, "0.20.0", 1).starts
    # the V2 model runner warms up otherwise (warmup_kernels): not checked
    assert compute_budget(model, l4, args, {"VLLM_USE_V2_MODEL_RUNNER": "1"}, "0.19.0", 1).starts


def test_sampler_warm_up_size_of_gpt_oss_on_1024_requests():
    """The warm-up of P107 / P108 (gpt-oss-20b, 0.19.0, 1,024 requests): 1,024 x 201,088 logits at 14 B (bf16
    logits, fp32 copy, probabilities, noise: the 786 MiB request of the logs' out-of-memory is one fp32 copy) and
    the 1,024 tokens' hidden states; the Triton kernel's row buffer (132 rows on an H100) is held from the profile
    run, not allocated again."""
    model, why = resolve_model("openai/gpt-oss-20b", ResolveOptions(allow_network=False))
    assert model is not None, why
    h100 = gpus.lookup("H100")
    for tp in (1, 2):
        args = {"max_model_len": 8192, "gpu_memory_utilization": 0.95, "tensor_parallel_size": tp}
        cfg = resolve_configuration(model, h100, args, {}, "0.19.0", tp)
        profile = profile_memory(cfg, load_weights(cfg))
        assert profile.warmup == int(1024 * 201088 * 14 + 1024 * model.hidden_size * 2)
        assert profile.held == 132 * 201088 * 4


def _v1(version, max_num_seqs=256, max_num_batched_tokens=8192, args=None, architecture=None, gpu="H100"):
    spec = gpus.lookup(gpu)
    beh = versions.behavior(version, spec, args or {}, {}, None, 8192)
    return capture_sizes(beh, max_num_seqs, max_num_batched_tokens, False, args or {}, architecture,
                         spec.compute_capability)


def test_v1_0_10_caps_the_sizes_at_twice_max_num_seqs():
    """0.10 - 0.11: SchedulerConfig.cuda_graph_sizes defaults to [min(2 x max_num_seqs, 512)] (0.9.2 had [512]):
    with 16 sequences 0.10.2 captures [1, 2, 4, 8, 16, 24, 32], PIECEWISE only; --cuda-graph-sizes N sets that
    bound, several values are the sizes themselves; 0.9.2 still captures all 67."""
    assert _v1("0.10.2", max_num_seqs=16) == ([1, 2, 4, 8, 16, 24, 32], [])
    assert _v1("0.10.2", args={"cuda_graph_sizes": [64]})[0] == [1, 2, 4, *range(8, 65, 8)]
    assert _v1("0.11.0", args={"cuda_graph_sizes": [4, 1, 32]}) == ([1, 4, 32], [1, 4, 32])
    assert len(_v1("0.9.2", max_num_seqs=16)[0]) == 67


def test_gpt_oss_raises_the_largest_capture_size_release_by_release():
    """GptOssForCausalLMConfig.verify_and_update_config: 0.10.1 - 0.10.x the 16-step grid up to 1024 (83 sizes),
    0.11.0 up to 992 (81), 0.12+ max_cudagraph_capture_size 1024 unless the user set it or the sizes: 83
    PIECEWISE and, for 1,024 sequences, 83 FULL decode graphs on 0.19 (the sizes a 0.19.0 gpt-oss-20b log lists,
    P107); at most max_num_batched_tokens; other architectures keep 512."""
    gpt = "GptOssForCausalLM"
    piecewise, full = _v1("0.10.1.1", 1024, architecture=gpt)
    assert (len(piecewise), max(piecewise), full) == (83, 1024, [])
    piecewise, full = _v1("0.11.0", 1024, architecture=gpt)
    assert (len(piecewise), max(piecewise), len(full)) == (81, 992, 81)
    piecewise, full = _v1("0.19.0", 1024, architecture=gpt)
    assert (len(piecewise), max(piecewise), len(full), max(full)) == (83, 1024, 83, 1024)
    assert max(_v1("0.19.0", 256, architecture=gpt)[1]) == 256  # FULL decode graphs stop at max_num_seqs
    assert max(_v1("0.19.0", 1024, 512, architecture=gpt)[0]) == 512
    assert max(_v1("0.19.0", 1024, args={"max_cudagraph_capture_size": 256}, architecture=gpt)[0]) == 256
    assert _v1("0.19.0", 1024, args={"cudagraph_capture_sizes": [1, 8]}, architecture=gpt)[0] == [1, 8]
    assert max(_v1("0.19.0", 1024, architecture="LlamaForCausalLM")[0]) == 512
    assert max(_v1("0.10.2", 1024, args={"cuda_graph_sizes": [2048]}, architecture=gpt)[0]) == 2048


def test_speculative_decoding_widens_the_capture_range_from_0_13():
    """0.13+: min(max_num_seqs x (1 + num_speculative_tokens) x 2, 512), and the FULL decode graphs cover
    uniform_decode_query_len <= size <= max_num_seqs x uniform_decode_query_len; 0.12 has no multiplier."""
    spec = {"speculative_config": {"method": "ngram", "num_speculative_tokens": 3}}
    piecewise, full = _v1("0.13.0", 32, args=spec)
    assert max(piecewise) == 256 and min(full) == 4 and max(full) == 128
    assert max(_v1("0.12.0", 32, args=spec)[0]) == 64
    assert max(_v1("0.13.0", 32)[0]) == 64


def test_cudagraph_mode_and_optimization_level_choose_the_graphs():
    """compilation_config.cudagraph_mode: PIECEWISE no FULL graphs, FULL one FULL graph per size, FULL_DECODE_ONLY
    only the decode ones; 0.12+ -O0 none, -O1 PIECEWISE; 0.11 a compilation level other than 3 none."""
    def mode(m, version="0.19.0"):
        return _v1(version, 32, args={"compilation_config": {"cudagraph_mode": m}})
    assert mode("PIECEWISE")[1] == [] and mode("FULL")[0] == [] and len(mode("FULL")[1]) == 11
    assert mode("FULL_DECODE_ONLY") == ([], [1, 2, 4, 8, 16, 24, 32])
    assert _v1("0.19.0", args={"optimization_level": 0}) == ([], [])
    assert _v1("0.19.0", args={"optimization_level": 1})[1] == []
    assert _v1("0.11.0", args={"compilation_config": {"level": 0}}) == ([], [])
    assert _v1("0.10.2", args={"compilation_config": {"full_cuda_graph": True}})[0] == []


def test_blackwell_captures_up_to_1024_from_0_28():
    """0.28+: the default largest size is 1024 on compute capability 10.x (is_device_capability_family(100))."""
    assert max(_v1("0.28.0", 1024, 16384, gpu="B200")[0]) == 1024
    assert max(_v1("0.27.1", 1024, 16384, gpu="B200")[0]) == 512
    assert max(_v1("0.28.0", 1024, 16384, gpu="H100")[0]) == 512


def test_gpt_oss_graph_estimate_on_0_20_follows_its_capture_sizes():
    """End to end on 0.21 (graph memory subtracted): gpt-oss-20b's 83 + 83 graphs on an H100 with 1,024 sequences
    cost more than the same server told --max-cudagraph-capture-size 512 (51 + 51), by 64 x 4 MiB."""
    model, why = resolve_model("openai/gpt-oss-20b", ResolveOptions(allow_network=False))
    assert model is not None, why
    h100 = gpus.lookup("H100")
    base = {"max_model_len": 8192, "max_num_seqs": 1024}
    raised = compute_budget(model, h100, base, {}, "0.21.0", 1)
    capped = compute_budget(model, h100, {**base, "max_cudagraph_capture_size": 512}, {}, "0.21.0", 1)
    assert round(raised.cudagraph_gib - capped.cudagraph_gib, 2) == round(64 * 4 * 2**20 / GiB, 2)
    assert "83 PIECEWISE (largest 1024)" in raised.sources["cudagraph"]
