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
