"""Each stage of the budget on its own, with numbers from real vLLM start-up logs (vllm-memory.md section 9)."""

import dataclasses
import importlib
import re

import pytest

from tests.test_budget_worked_examples import LLAMA_31_8B, LLAMA_32_3B
from vramlint import gpus, versions
from vramlint.budget import STAGES, GiB, compute_budget
from vramlint.budget.configuration import resolve_configuration
from vramlint.budget.kv_cache import plan_kv_cache
from vramlint.budget.loading import load_weights
from vramlint.budget.profile import CUDA_CONTEXT_BYTES, Profile, profile_memory
from vramlint.budget.profile_comm import (
    communication_memory,
    custom_all_reduce,
    flashinfer_fusion_workspace,
    nccl_communicator_bytes,
    symmetric_memory_bytes,
)
from vramlint.budget.verdict import startup_verdict
from vramlint.model import ModelInfo

QWEN3_8B = dict(name="Qwen/Qwen3-8B-FP8", source="test facts", num_layers=36, hidden_size=4096, num_attention_heads=32,
                num_kv_heads=8, head_dim=128, vocab_size=151936, intermediate_size=12288, max_position_embeddings=40960,
                torch_dtype="bfloat16", weight_bytes=int(8.80 * GiB), weight_bytes_source="safetensors metadata")
QWEN3_CODER_480B = dict(name="Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", source="test facts", num_layers=62,
                        hidden_size=6144, num_attention_heads=96, num_kv_heads=8, head_dim=128, vocab_size=151936,
                        intermediate_size=8192, max_position_embeddings=262144, torch_dtype="bfloat16",
                        weight_bytes=int(60 * GiB), weight_bytes_source="safetensors metadata")


def _model(facts, **over):
    return ModelInfo(**{**facts, **over})


def _stages(facts, gpu, args, version, **over):
    cfg = resolve_configuration(_model(facts, **over), gpus.lookup(gpu), args, {}, version, 1)
    weights = load_weights(cfg)
    return cfg, weights


def test_stages_are_in_vllms_order_and_name_the_code_they_follow():
    assert [name for name, _ in STAGES] == ["configuration", "weights", "profile", "KV cache", "verdict"]
    for _, function in STAGES:
        sources = importlib.import_module(function.__module__).VLLM_SOURCES
        assert sources and all("vllm/" in s for s in sources)


def test_configuration_resolves_lengths_engine_scheduler_and_the_requested_memory():
    """The vLLM forum T4 question (vLLM 0.6.5 V0): total 14.56 GiB x 0.90 = 13.10 GiB requested; chunked prefill
    is off below 32K in V0, so the profile batch is max(max_model_len, 2048) tokens; 8k is 8192 (1k = 1024)."""
    cfg = resolve_configuration(_model(LLAMA_32_3B), gpus.lookup("T4"), {"max_model_len": "8k", "dtype": "half"}, {},
                                "0.6.5", 1)
    assert (cfg.beh.engine, cfg.tp, cfg.pp, cfg.max_model_len, cfg.dtype) == ("v0", 1, 1, 8192, "float16")
    assert (cfg.max_num_seqs, cfg.max_num_batched_tokens) == (256, 8192)
    assert cfg.requested == 14.56 * 0.9 * GiB and round(cfg.requested / GiB, 2) == 13.10
    assert cfg.errors == []
    assert cfg.sources["max_model_len"] == "--max-model-len" and cfg.sources["tensor_parallel_size"] == "default 1"


def test_performance_mode_throughput_doubles_the_batch_defaults_not_given():
    """EngineArgs._set_default_max_num_seqs_and_batched_tokens_args (0.17.0 - 0.28.0): after the defaults per GPU
    (`vllm serve` on a GPU below 70 GiB: 2048 tokens, 256 sequences), --performance-mode throughput doubles those
    the user did not give, then max_num_batched_tokens is clamped to max_num_seqs x max_model_len."""
    l4 = gpus.lookup("L4")
    base = {"max_model_len": 4096}
    cfg = resolve_configuration(_model(LLAMA_32_3B), l4, base, {}, "0.21.0", 1)
    assert (cfg.max_num_seqs, cfg.max_num_batched_tokens) == (256, 2048)
    cfg = resolve_configuration(_model(LLAMA_32_3B), l4, {**base, "performance_mode": "throughput"}, {}, "0.21.0", 1)
    assert (cfg.max_num_seqs, cfg.max_num_batched_tokens) == (512, 4096)
    assert "--performance-mode throughput" in cfg.sources["max_num_batched_tokens"]
    given = {**base, "performance_mode": "throughput", "max_num_seqs": 64, "max_num_batched_tokens": 1024}
    cfg = resolve_configuration(_model(LLAMA_32_3B), l4, given, {}, "0.21.0", 1)
    assert (cfg.max_num_seqs, cfg.max_num_batched_tokens) == (64, 1024)
    one = {"max_model_len": 1024, "performance_mode": "throughput", "max_num_seqs": 2}
    cfg = resolve_configuration(_model(LLAMA_32_3B), l4, one, {}, "0.21.0", 1)
    assert cfg.max_num_batched_tokens == 2 * 1024  # min(2 x 1024, 4096)
    for other in ("balanced", "interactivity"):
        cfg = resolve_configuration(_model(LLAMA_32_3B), l4, {**base, "performance_mode": other}, {}, "0.21.0", 1)
        assert (cfg.max_num_seqs, cfg.max_num_batched_tokens) == (256, 2048)
    cfg = resolve_configuration(_model(LLAMA_32_3B), l4, {**base, "performance_mode": "throughput"}, {}, "0.16.0", 1)
    assert (cfg.max_num_seqs, cfg.max_num_batched_tokens) == (256, 2048)  # no such mode before 0.17


def test_configuration_refuses_with_vllms_text():
    cfg = resolve_configuration(_model(LLAMA_32_3B), gpus.lookup("L4"),
                                {"tensor_parallel_size": 5, "max_model_len": 200000}, {}, "0.11.0", 5)
    codes = [e["code"] for e in cfg.errors]
    assert codes == ["max-model-len-above-model", "tp-heads", "tp-kv-heads"]
    assert cfg.errors[1]["message"] == "Total number of attention heads (24) must be divisible by tensor parallel size (5)."


def test_configuration_caps_the_length_to_the_window_with_disable_sliding_window():
    cfg = resolve_configuration(_model(LLAMA_32_3B, sliding_window=4096), gpus.lookup("L4"),
                                {"disable_sliding_window": True}, {}, "0.11.0", 1)
    assert cfg.max_model_len == 4096
    assert cfg.sources["max_model_len"] == "capped to the sliding window by --disable-sliding-window"


def test_weights_per_rank_include_the_rope_cache_and_split_by_tensor_parallel():
    """vllm#10517 logged `Loading model weights took 14.9888 GB` for Llama-3.1-8B: 8,030,261,248 parameters x 2 B
    plus the RoPE cos/sin cache, 131072 positions x 128 x 2 B, which every rank holds whole."""
    rope = 131072 * 128 * 2
    _, one = _stages(LLAMA_31_8B, "RTX 3090", {"max_model_len": 20000}, "0.6.4")
    assert one.bytes == 8030261248 * 2 + rope and round(one.bytes / GiB, 4) == 14.9888
    _, two = _stages(LLAMA_31_8B, "A100-80GB", {"tensor_parallel_size": 2}, "0.11.0")
    assert two.bytes == 8030261248 + rope
    assert two.draft is None and two.errors == []


def test_profile_subtracts_what_the_profiling_run_takes_from_the_requested_memory():
    cfg, weights = _stages(LLAMA_32_3B, "T4", {"max_model_len": 8192, "dtype": "half"}, "0.6.5")
    p = profile_memory(cfg, weights)
    assert p.non_torch == int(0.05 * GiB) and p.cudagraph == [0]  # V0 does not budget CUDA graphs
    # the PyTorch sampler on 256 sequences x 128256 logits x 38.2 B, with the 8192 x 3072 hidden states alive
    assert p.activation == [int(256 * 128256 * 38.2 + 8192 * 3072 * 2)]
    assert p.kv_bytes == [cfg.requested - weights.bytes - p.non_torch - p.activation[0] - p.cudagraph[0]]
    assert round(p.kv_bytes[0] / GiB, 2) == 5.82  # the log: 5.83 GiB


def test_profile_sampler_follows_the_top_k_top_p_path_of_each_release():
    """The profile run samples 256 rows here (the L4 default), while the hidden states of its batch are alive. Up
    to 0.16 PyTorch sorts the vocabulary (38.2 B per logit, fitted); 0.17 - 0.20 mask top-k/top-p in place with
    the Triton kernel from 8 rows on (14 B per logit: model-dtype logits, their fp32 copy, softmax probabilities
    and exponential noise); 0.21+ take FlashInfer on CUDA unless VLLM_USE_FLASHINFER_SAMPLER=0 sends them back
    to the Triton path; 0.21+ sample a second time with a seeded generator, through the native path."""
    logits = 256 * 128256

    def activation(version, env=None, **args):
        # eager: the cold-compile benchmark of the embedding table (0.79 GiB here) would hide the smaller samplers
        cfg, weights = _stages(LLAMA_32_3B, "L4", {"max_model_len": 8192, "enforce_eager": True, **args}, version)
        cfg.env.update(env or {})
        p = profile_memory(cfg, weights)
        return p.activation[0] - cfg.max_num_batched_tokens * 3072 * 2, p.sources["activation"]

    assert activation("0.16.0") == (int(logits * 38.2), "estimate: PyTorch sampler on 256 sequences x 128256 vocab")
    triton, how = activation("0.19.1")
    # and the kernel's cached buffer: one fp32 vocabulary row per program, min(next_power_of_2(min(58, 256)), 58)
    # on the L4's 58 SMs (apply_top_k_top_p_triton's _TRITON_BUFFER_CACHE)
    assert triton == int(logits * 14.0 + 58 * 128256 * 4) and "Triton top-k/top-p kernel on 256 sequences" in how
    assert "row buffer 58 x 128256 fp32" in how
    # 0.21+: FlashInfer, then a seeded PyTorch-native pass (Triton kernel and buffer), the larger of the two
    assert activation("0.21.0")[0] == triton > int(logits * 14.5)
    assert activation("0.21.0", logprobs_mode="processed_logprobs")[0] == int(logits * 14.5)  # no second pass
    assert activation("0.21.0", {"VLLM_USE_FLASHINFER_SAMPLER": "0"})[0] == triton
    assert activation("0.20.0", {"VLLM_USE_FLASHINFER_SAMPLER": "1"})[0] == int(logits * 14.5)  # one pass
    # seven rows: below the kernel's eight, apply_top_k_top_p sorts
    few, how = activation("0.19.1", max_num_seqs=7, max_num_batched_tokens=7)
    assert few == int(7 * 128256 * 38.2) and how.startswith("estimate: PyTorch sampler on 7")


def test_triton_row_buffer_follows_the_programs_the_kernel_launches():
    """apply_top_k_top_p_triton launches min(SMs, rows) programs and caches a (min(next_power_of_2(programs), SMs),
    vocab) buffer of the fp32 logits' dtype; a GPU whose SM count vramlint does not know gets a note instead."""
    from vramlint import gpus
    from vramlint.budget.profile import triton_buffer_rows
    h100, l4 = gpus.lookup("H100-SXM").compute_units, gpus.lookup("L4").compute_units
    assert triton_buffer_rows(h100, 1024) == 132 and triton_buffer_rows(h100, 100) == 128
    assert triton_buffer_rows(h100, 9) == 16 and triton_buffer_rows(l4, 40) == 58
    assert triton_buffer_rows(None, 1024) == 0
    cfg, weights = _stages(LLAMA_32_3B, "H100-SXM", {"max_model_len": 8192}, "0.19.0")
    h100 = profile_memory(cfg, weights)
    assert "row buffer 132 x 128256 fp32" in h100.sources["activation"]
    # a GPU given by its memory only (custom-gpus, --gpu-memory-gib with a name outside the catalog): no SM count
    custom = dataclasses.replace(gpus.lookup("L4"), name="my-24gb-card", compute_units=None)
    cfg = resolve_configuration(_model(LLAMA_32_3B), custom, {"max_model_len": 4096}, {}, "0.19.0", 1)
    unknown = profile_memory(cfg, load_weights(cfg))
    assert "row buffer" not in unknown.sources["activation"]
    assert any("my-24gb-card's SM count is not in vramlint's table" in n for n in unknown.notes)


def test_profile_counts_cuda_graphs_from_020_and_honours_kv_cache_memory_bytes():
    cfg, weights = _stages(LLAMA_32_3B, "L4", {"max_model_len": 8192}, "0.20.2")
    assert profile_memory(cfg, weights).cudagraph[0] > 0
    cfg, weights = _stages(LLAMA_32_3B, "L4", {"max_model_len": 8192, "enforce_eager": True}, "0.20.2")
    assert profile_memory(cfg, weights).cudagraph == [0]
    cfg, weights = _stages(LLAMA_32_3B, "L4", {"kv_cache_memory_bytes": 4 * GiB}, "0.11.0")
    p = profile_memory(cfg, weights)
    assert p.kv_bytes == [4 * GiB] and p.sources["kv_cache"].startswith("--kv-cache-memory-bytes")


def test_kv_cache_blocks_tokens_and_concurrency_of_a_logged_v1_start():
    """Qwen3-8B-FP8 on an RTX 4090, vLLM 0.10.2 (section 9.5): `Current kv cache memory in use is 9232221491
    bytes` -> 36 layers x 65,536 B pages: 3,913 blocks, `GPU KV cache size: 62,608 tokens`, `Maximum concurrency
    for 1,024 tokens per request: 61.14x`."""
    cfg, weights = _stages(QWEN3_8B, "RTX 4090", {"max_model_len": 1024, "gpu_memory_utilization": 0.8}, "0.10.2")
    logged = Profile(non_torch=0, activation=[0], cudagraph=[0], kv_bytes=[9232221491], kv_override=None)
    kv = plan_kv_cache(cfg, weights, logged)
    assert kv.kv_bytes_per_token == 2 * 8 * 128 * 2 * 36 and kv.block_size == 16
    assert (kv.num_blocks, kv.kv_tokens, round(kv.concurrency, 2)) == (3913, 62608, 61.14)
    assert kv.one_request == 1024 * kv.kv_bytes_per_token


def test_verdict_v1_refuses_a_length_the_kv_cache_cannot_hold_with_the_estimated_maximum():
    """vllm-project/recipes#12 (vLLM 0.10.1, DP 8 + EP, TP 1 per rank): "(62.00 GiB KV cache is needed, which is
    larger than the available KV cache memory (48.66 GiB). Based on the available memory, the estimated maximum
    model length is 205728." """
    cfg, weights = _stages(QWEN3_CODER_480B, "H20", {}, "0.10.1")
    logged = Profile(non_torch=0, activation=[0], cudagraph=[0], kv_bytes=[48.66 * GiB], kv_override=None)
    verdict = startup_verdict(cfg, weights, logged, plan_kv_cache(cfg, weights, logged))
    assert [e["code"] for e in verdict.errors] == ["kv-cache-below-max-model-len"]
    message = verdict.errors[0]["message"]
    assert "(62.00 GiB KV cache is needed" in message and "(48.66 GiB)" in message
    assert "the estimated maximum model length is 205728." in message


def test_verdict_v0_compares_the_length_with_the_blocks():
    """vllm#10517 (0.6.4, RTX 3090, 29000 tokens): 1478 blocks x 16 = 23648 tokens < 29000."""
    cfg, weights = _stages(LLAMA_31_8B, "RTX 3090", {"max_model_len": 29000}, "0.6.4")
    logged = Profile(non_torch=0, activation=[0], cudagraph=[0], kv_bytes=[1478.5 * 16 * 131072], kv_override=None)
    kv = plan_kv_cache(cfg, weights, logged)
    assert kv.num_blocks == 1478
    verdict = startup_verdict(cfg, weights, logged, kv)
    assert verdict.errors[0]["message"].startswith(
        "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache "
        "(23648).")


def test_compute_budget_is_the_stages_in_order():
    model, gpu, args = _model(LLAMA_31_8B), gpus.lookup("RTX 3090"), {"max_model_len": 29000}
    budget = compute_budget(model, gpu, args, {}, "0.6.4", 1, sources={"gpu": "test"})
    cfg = resolve_configuration(model, gpu, args, {}, "0.6.4", 1)
    weights = load_weights(cfg)
    profile = profile_memory(cfg, weights)
    kv = plan_kv_cache(cfg, weights, profile)
    verdict = startup_verdict(cfg, weights, profile, kv)
    assert budget.kv_cache_gib == round(profile.kv_bytes[0] / GiB, 2) and budget.num_gpu_blocks == kv.num_blocks
    assert budget.errors == cfg.errors + weights.errors + profile.errors + kv.errors + verdict.errors
    assert budget.starts is False
    # the caller's sources first, then each stage's in order
    keys = list(budget.sources)
    assert keys[0] == "gpu" and keys.index("max_model_len") < keys.index("weights") < keys.index("non_torch") \
        < keys.index("kv_bytes_per_token")


def test_non_torch_counts_the_communicators_set_up_before_the_snapshot_only_until_0_11():
    """gpu_worker.init_device: 0.10.2 takes `self.init_snapshot = MemorySnapshot()` before
    `init_worker_distributed_environment`, 0.11.0 after it ("Now take memory snapshot after NCCL is
    initialized"): the TP group's PyNcclCommunicator and the custom all-reduce buffers are non-torch memory on
    0.10.2 and come out of the free memory on 0.11.0; the profile run's torch.distributed communicator (the logits
    gather) is counted by both. 0.11.0 also gives the expert-parallel group, which 0.11 - 0.13 build for every
    model, a PyNccl communicator before the snapshot (0.10.2: ``use_pynccl = "ep" not in unique_name``)."""
    comm, _ = nccl_communicator_bytes(gpus.lookup("A100-80GB"), {})
    assert comm == 24 * 2 * (512 * 1024 + 4915200 + 4 * 1024 * 1024)  # NCCL's default LL / LL128 / SIMPLE buffers
    custom_all_reduce_buffers = 2 * 8 * 1024 * 1024
    texts = {}
    profiles = {}
    for version in ("0.10.2", "0.11.0"):
        cfg, weights = _stages(LLAMA_31_8B, "A100-80GB", {"tensor_parallel_size": 2}, version)
        profiles[version] = p = profile_memory(cfg, weights)
        texts[version] = p.sources["non_torch"]
    assert profiles["0.10.2"].non_torch == int(0.05 * GiB) + 2 * comm + custom_all_reduce_buffers
    assert profiles["0.11.0"].non_torch == int(0.05 * GiB) + comm
    assert profiles["0.10.2"].uncounted == CUDA_CONTEXT_BYTES
    assert profiles["0.11.0"].uncounted == CUDA_CONTEXT_BYTES + 2 * comm + custom_all_reduce_buffers
    assert "counts all of it" in texts["0.10.2"] and "counts only the profile run's" in texts["0.11.0"]
    single, single_weights = _stages(LLAMA_31_8B, "A100-80GB", {}, "0.11.0")
    assert profile_memory(single, single_weights).non_torch == int(0.05 * GiB)


def test_pipeline_stages_get_no_communicator_in_the_profile_run():
    """The profile run of each pipeline stage runs on dummy intermediate tensors (make_empty_intermediate_tensors;
    V1 GPUModelRunner._dummy_run, 0.11.0 - 0.27.1 wheels; V0 ModelRunner._dummy_run, 0.8.5), so no send or recv
    makes a second communicator for the pipeline group: only the start-up one, counted before 0.11 and not after.
    The P75 H100 PP 2 log (0.19.0) counts 0.07 GiB of non-torch memory on both stages."""
    h100 = gpus.lookup("H100-SXM")
    comm, _ = nccl_communicator_bytes(h100, {})
    for version, counted in (("0.19.0", 0), ("0.10.2", comm), ("0.8.5", comm)):
        beh = resolve_configuration(_model(LLAMA_31_8B), h100, {}, {}, version, 1).beh
        c = communication_memory(beh, h100, 1, 2, 1, {}, {})
        assert c.counted == counted and "0 in the profile run" in c.how, (version, c.how)
    beh = resolve_configuration(_model(LLAMA_31_8B), h100, {}, {}, "0.19.0", 1).beh
    both = communication_memory(beh, h100, 2, 2, 1, {}, {})
    assert both.counted == comm and "1 in the profile run" in both.how  # the tensor-parallel logits gather
    cfg, weights = _stages(LLAMA_31_8B, "H100-SXM", {"pipeline_parallel_size": 2}, "0.19.0")
    assert profile_memory(cfg, weights).non_torch == int(0.05 * GiB)


def test_the_logits_gather_takes_pynccl_from_0_26_on_cuda():
    """CudaCommunicator.all_gather (0.26.0, 0.27.1 wheels) sends the logits gather through the PyNccl communicator
    set up at start-up, where 0.25.0 and earlier fall back to torch.distributed, which makes its own communicator
    in the profile run; ROCm keeps the base-class collective. P03 (0.26, TP 4, H100) logs 0.13 GiB non-torch."""
    h100, mi300 = gpus.lookup("H100-SXM"), gpus.lookup("MI300X")
    comm, _ = nccl_communicator_bytes(h100, {})
    for version, counted in (("0.25.0", comm), ("0.26.0", 0), ("0.27.1", 0)):
        beh = resolve_configuration(_model(LLAMA_31_8B), h100, {}, {}, version, 1).beh
        c = communication_memory(beh, h100, 4, 1, 1, {}, {})
        assert c.counted == counted, (version, c.how)
    beh = resolve_configuration(_model(LLAMA_31_8B), mi300, {}, {}, "0.27.1", 1).beh
    assert communication_memory(beh, mi300, 4, 1, 1, {}, {}).counted > 0


def test_nccl_buffers_follow_the_channels_and_buffer_sizes_in_the_environment():
    """NCCL_MAX_NCHANNELS caps the channels, NCCL_BUFFSIZE replaces the 4 MiB SIMPLE buffer; PCIe parts get 2
    channels, NVLink parts 24."""
    h100, l40s = gpus.lookup("H100-SXM"), gpus.lookup("L40S")
    assert nccl_communicator_bytes(l40s, {})[0] == 2 * 2 * (512 * 1024 + 4915200 + 4 * 1024 * 1024)
    tuned, how = nccl_communicator_bytes(h100, {"NCCL_MAX_NCHANNELS": "4", "NCCL_BUFFSIZE": str(1 << 20)})
    assert tuned == 4 * 2 * (512 * 1024 + 4915200 + (1 << 20)) and "4 channels (nvlink)" in how
    assert nccl_communicator_bytes(l40s, {"NCCL_MIN_NCHANNELS": "8"})[0] == 8 * 2 * (512 * 1024 + 4915200 + (4 << 20))


def test_custom_all_reduce_needs_nvlink_or_two_peer_to_peer_gpus():
    """CustomAllreduce.__init__: 2, 4, 6 or 8 ranks; more than two only when fully NVLink-connected; never with
    --disable-custom-all-reduce. GeForce cards have no peer-to-peer access."""
    h100, l40s, rtx4090 = gpus.lookup("H100-SXM"), gpus.lookup("L40S"), gpus.lookup("RTX-4090")
    assert custom_all_reduce(h100, 8, {}) and custom_all_reduce(l40s, 2, {})
    assert not custom_all_reduce(l40s, 4, {}) and not custom_all_reduce(rtx4090, 2, {})
    assert not custom_all_reduce(h100, 3, {}) and not custom_all_reduce(h100, 8, {"disable_custom_all_reduce": True})


def test_a100_80gb_pcie_cards_talk_over_pcie_not_nvlink():
    """The PCIe A100 80GB (GFD label NVIDIA-A100-80GB-PCIe, Azure NC A100 v4) is its own catalog entry: a server of
    them has no NVSwitch, so NCCL gets the PCIe channel count (2 x 2 connections x (512 KiB + 4,915,200 B +
    4 MiB) = 36.8 MiB per communicator, NCCL's DEFAULT_*BUFFSIZE) instead of the SXM4 part's 24 channels, and the
    custom all-reduce runs for two cards only (CustomAllreduce.__init__: more than two need full NVLink)."""
    pcie, sxm = gpus.lookup("NVIDIA-A100-80GB-PCIe"), gpus.lookup("NVIDIA-A100-SXM4-80GB")
    assert pcie.name == "A100-80GB-PCIe" and sxm.name == "A100-80GB" and pcie.total_gib == sxm.total_gib
    assert gpus.instance_type("Standard_NC96ads_A100_v4") == ("A100-80GB-PCIe", 4)
    assert gpus.instance_type("Standard_ND96amsr_A100_v4") == ("A100-80GB", 8)
    per_connection = 512 * 1024 + 4915200 + 4 * 1024 * 1024
    assert nccl_communicator_bytes(pcie, {})[0] == 2 * 2 * per_connection
    assert nccl_communicator_bytes(sxm, {})[0] == 24 * 2 * per_connection
    assert custom_all_reduce(pcie, 2, {}) and not custom_all_reduce(pcie, 4, {}) and custom_all_reduce(sxm, 4, {})
    beh = versions.behavior("0.10.1.1", pcie, {"tensor_parallel_size": 2}, {}, None, 2048)
    c = communication_memory(beh, pcie, 2, 1, 1, {}, {})
    # 0.10 counts everything: one communicator at start-up, one for the logits gather, 2 x 8 MiB custom all-reduce
    assert c.counted == 2 * 2 * 2 * per_connection + 2 * (8 << 20) and c.before_snapshot == 0


def test_symmetric_memory_buffer_from_0_11_on_hopper_and_it_shrinks_the_custom_all_reduce():
    """0.11's SymmMemCommunicator (VLLM_ALLREDUCE_USE_SYMM_MEM, default on) allocates
    SYMM_MEM_ALL_REDUCE_MAX_SIZES["9.0"][8] = 64 MiB on H100 at TP 8, and CustomAllreduce then takes
    CUSTOM_ALL_REDUCE_MAX_SIZES["9.0"][8] = 256 KiB per buffer; both before the snapshot."""
    h100 = gpus.lookup("H100-SXM")
    comm, _ = nccl_communicator_bytes(h100, {})
    # the TP group's communicator and the profile run's; 0.11 adds the expert-parallel group's (every model)
    for version, symm, ca, comms in (("0.11.0", 64 << 20, 2 * (256 << 10), 3), ("0.10.2", 0, 2 * (8 << 20), 2)):
        beh = versions.behavior(version, h100, {"tensor_parallel_size": 8}, {}, None, 8192)
        c = communication_memory(beh, h100, 8, 1, 1, {}, {})
        assert c.before_snapshot + c.counted == comms * comm + ca + symm
        assert not c.nccl_in_graphs
    beh = versions.behavior("0.11.0", h100, {}, {}, None, 8192)
    assert symmetric_memory_bytes(beh, h100, 8, {"VLLM_ALLREDUCE_USE_SYMM_MEM": "0"}) == 0
    assert symmetric_memory_bytes(beh, gpus.lookup("A100-80GB"), 8, {}) == 0


def test_free_memory_check_counts_the_communicators_from_0_11():
    """From 0.11 the snapshot that init_device compares with total x utilisation is taken after the NCCL set-up:
    at 0.992 the TP 8 communicators on H100 leave less free memory than requested; 0.10.2 measured before."""
    args = {"tensor_parallel_size": 8, "gpu_memory_utilization": 0.992}
    codes = {}
    for version in ("0.10.2", "0.11.0"):
        cfg, weights = _stages(LLAMA_31_8B, "H100-SXM", args, version)
        p = profile_memory(cfg, weights)
        verdict = startup_verdict(cfg, weights, p, plan_kv_cache(cfg, weights, p))
        codes[version] = [e["code"] for e in verdict.errors]
    assert "free-below-requested" not in codes["0.10.2"] and "free-below-requested" in codes["0.11.0"]


def test_a_thin_kv_margin_on_027_plus_says_what_a_first_torch_compile_can_take():
    """From 0.27 the profile counts what stays reserved after it, and a first torch.compile (an empty compile
    cache) ran inside it in the public 0.28 - 0.29 logs with up to 2.3 GiB less KV cache than vramlint's: not
    estimated, so said where the KV cache holds one request with less than that to spare."""
    from vramlint.model import ResolveOptions
    from vramlint.models import resolve_model

    model, _ = resolve_model("Qwen/Qwen2.5-7B-Instruct", ResolveOptions(allow_network=False))
    l4 = gpus.lookup("L4")

    def notes(version, compile_cache="cold", **args):
        b = compute_budget(model, l4, {"max_model_len": 32768, **args}, {}, version, 1, compile_cache=compile_cache)
        assert b.starts
        return [n for n in b.notes if "torch.compile cache" in n], b

    thin, b = notes("0.28.0", gpu_memory_utilization=0.8)
    assert len(thin) == 1 and "VLLM_CACHE_ROOT" in thin[0]
    spare = float(re.search(r"with (\d+\.\d\d) GiB to spare", thin[0])[1])
    assert abs(spare - (b.kv_cache_gib - b.one_request_kv_gib)) < 0.01 and spare < 2.3
    assert notes("0.28.0", gpu_memory_utilization=0.8, enforce_eager=True)[0] == []  # nothing compiled
    assert notes("0.26.0", gpu_memory_utilization=0.8)[0] == []  # before total_consumed was counted
    assert notes("0.28.0", gpu_memory_utilization=0.9)[0] == []  # over 2.3 GiB to spare
    # the caller says the compiled graphs are already in the cache: no first compile to warn of
    assert notes("0.28.0", compile_cache="warm", gpu_memory_utilization=0.8)[0] == []


def test_a_cpu_offload_that_is_no_finite_number_is_refused_not_a_crash():
    # argparse's float() takes "inf" and "nan"; vLLM turns the GiB into bytes with int() and stops. The fuzz run
    # of issue 10 found --cpu-offload-gb inf crashing the budget (NaN from inf - inf in the weights stage).
    for value in ("inf", "nan", "1e400"):
        budget = compute_budget(_model(LLAMA_31_8B), gpus.lookup("L4"), {"cpu_offload_gb": value}, {}, "0.9.2", 1)
        codes = [e["code"] for e in budget.errors]
        assert "cpu-offload-not-finite" in codes, (value, codes)
        assert budget.weights_gib > 10  # nothing is taken off the weights for it
    finite = compute_budget(_model(LLAMA_31_8B), gpus.lookup("L4"), {"cpu_offload_gb": "4"}, {}, "0.9.2", 1)
    assert "cpu-offload-not-finite" not in [e["code"] for e in finite.errors]


def _fusion(gpu, args, version, env=None, facts=LLAMA_31_8B):
    """(notes about the fusion workspace, the non-torch bytes, the non-torch source) of one profile stage."""
    cfg = resolve_configuration(_model(facts), gpus.lookup(gpu), args, dict(env or {}), version, 1)
    profile = profile_memory(cfg, load_weights(cfg))
    notes = [n for n in profile.notes if "FlashInfer's fusion workspace" in n]
    return notes, profile.non_torch, profile.sources["non_torch"]


def test_flashinfer_all_reduce_fusion_workspace_is_counted_where_vllm_creates_it():
    """vllm/config/vllm.py::enable_allreduce_rms_fusion (0.18.0, 0.19.0, 0.20.0 wheels): the -O2 default of
    pass_config.fuse_allreduce_rms with TP > 1 on compute capability 9.0 / 10.x, no DP / PP; the pass makes
    FlashInfer's workspace of multicast-granular SymmDeviceMemory buffers while the profile run compiles the model
    (not with --enforce-eager), non-torch memory. Hopper's granularity is known (512 MiB): counted; Blackwell's is
    not: a note."""
    tp2 = {"tensor_parallel_size": 2}
    plain = _fusion("H100", {**tp2, "enforce_eager": True}, "0.19.0")[1]
    for version in ("0.18.0", "0.19.0", "0.20.0", "0.21.0"):
        notes, non_torch, how = _fusion("H100", tp2, version)
        assert notes == [] and "FlashInfer all-reduce fusion workspace 1.50 GiB" in how, (version, how)
        assert non_torch - plain == 3 * 512 * 2**20, version  # three buffers, one 512 MiB unit each
    # 0.22 - 0.24 (FlashInfer 0.6.11.post2 / 0.6.12: torch symmetric memory) take 2 MiB pages: 128 + 2 + 384 MiB
    notes, non_torch, how = _fusion("H100", tp2, "0.24.0")
    assert notes == [] and "2 MiB allocation granularity" in how
    assert non_torch - _fusion("H100", {**tp2, "enforce_eager": True}, "0.24.0")[1] == (130 + 2 + 386) * 2**20
    # from 0.21 pipeline parallel no longer turns the pass off
    assert "fusion workspace" in _fusion("H100", {**tp2, "pipeline_parallel_size": 2}, "0.21.0")[2]
    # from 0.25 "auto" takes the mnnvl backend: three lamport buffers of two-shot size, 2 x 8192 x 4096 x 2 B, in
    # one symmetric allocation (386 MiB with the signal pad); 0.25 also builds the TRT-LLM quant-fusion workspace
    # beside it, which 0.26 no longer does (it reuses the mnnvl one); 0.27 (FlashInfer 0.6.16.post3) makes it one
    # multicast SymmDeviceMemory, one 512 MiB unit on Hopper, not known on Blackwell (a note); 0.28+ not read
    eager = {**tp2, "enforce_eager": True}
    notes, non_torch, how = _fusion("H100", tp2, "0.26.0")
    assert notes == [] and "mnnvl all-reduce workspace 0.38 GiB" in how
    assert non_torch - _fusion("H100", eager, "0.26.0")[1] == 386 * 2**20
    notes, non_torch, how = _fusion("H100", tp2, "0.25.0")
    assert notes == [] and "TRT-LLM quant-fusion workspace" in how
    assert non_torch - _fusion("H100", eager, "0.25.0")[1] == (386 + 130 + 2 + 386) * 2**20
    notes, non_torch, how = _fusion("H100", tp2, "0.27.1")
    assert notes == [] and "512 MiB multicast granularity" in how
    assert non_torch - _fusion("H100", eager, "0.27.1")[1] == 512 * 2**20
    (note,) = _fusion("B200", tp2, "0.27.1")[0]
    assert "mnnvl" in note and "multicast granularity" in note and "not estimated" in note
    (note,) = _fusion("H100", tp2, "0.28.0")[0]
    assert "mnnvl" in note and "not estimated" in note
    forced = _fusion("H100", tp2, "0.27.1", env={"VLLM_FLASHINFER_ALLREDUCE_BACKEND": "trtllm"})
    assert forced[0] == [] and "2 MiB allocation granularity" in forced[2]
    assert _fusion("H100", tp2, "0.33.0", env={"VLLM_BATCH_INVARIANT": "1"})[0] == []  # the pass stays off
    for gpu, args in (("B200", {"tensor_parallel_size": 4}), ("B200", tp2)):
        (note,) = _fusion(gpu, args, "0.19.0")[0]
        assert "not estimated" in note and "multicast granularity" in note and "fuse_allreduce_rms" in note
    assert _fusion("H200", {"tensor_parallel_size": 8}, "0.19.0")[0] == []
    for gpu, args, version in (
        ("H100", {}, "0.19.0"),  # one GPU: no all-reduce
        ("H100", {**tp2, "enforce_eager": True}, "0.19.0"),  # no compilation, no passes
        ("H100", {**tp2, "compilation_config": '{"pass_config": {"fuse_allreduce_rms": false}}'}, "0.19.0"),
        ("H100", {**tp2, "optimization_level": 1}, "0.19.0"),  # O1: fuse_allreduce_rms False
        ("H100", {**tp2, "pipeline_parallel_size": 2}, "0.19.0"),  # tp-pp combination left out up to 0.20
        ("H100", {"tensor_parallel_size": 6}, "0.19.0"),  # FlashInfer's world sizes are 2, 4, 8
        ("L40S", tp2, "0.19.0"),  # compute capability 8.9
        ("H100-NVL", tp2, "0.19.0"),  # no NVSwitch: no multicast for SymmDeviceMemory
        ("H100", tp2, "0.17.0"),  # before the releases read
        ("H100", tp2, "0.35.0"),  # after them (0.34.0's condition was read: 0.33's)
    ):
        notes, _, how = _fusion(gpu, args, version)
        assert notes == [] and "fusion workspace" not in how, (gpu, args, version)


def test_flashinfer_fusion_workspace_follows_the_buffers_flashinfer_allocates():
    """FlashInfer 0.6.6 trtllm_create_ipc_workspace_for_all_reduce_fusion: buffers of ranks x tokens x hidden x 2 B,
    flags, and 3 lamport copies (x 4 B for fp32), tokens = min(max size // (hidden x dtype), max_num_batched_tokens)
    (AllReduceFusionPass); each rounded up to the granularity, so a buffer past 512 MiB takes two units; the
    mnnvl backend (VLLM_FLASHINFER_ALLREDUCE_BACKEND, or more than one node) is sized otherwise: a note."""
    def beh(version):
        return resolve_configuration(_model(LLAMA_31_8B), gpus.lookup("H100"), {}, {}, version, 1).beh

    h100, b = gpus.lookup("H100"), beh("0.19.0")
    small = flashinfer_fusion_workspace(b, h100, 4, 4096, 2, 8192, {}, {})
    assert small[0] == 3 * 512 * 2**20 and "256 tokens" in small[1] and "8, 2, 24 MiB" in small[1]
    tp2 = flashinfer_fusion_workspace(b, h100, 2, 4096, 2, 8192, {}, {})
    assert tp2[0] == 3 * 512 * 2**20 and "8192 tokens" in tp2[1] and "128, 2, 384 MiB" in tp2[1]
    capped = flashinfer_fusion_workspace(b, h100, 2, 4096, 2, 1024, {}, {})
    assert "1024 tokens" in capped[1]  # never more than max_num_batched_tokens
    # a 256 MB max size (pass_config): 2 x 32768 x 4096 x 2 B = 512 MiB + pad -> 2 units; lamport 1.5 GiB -> 4 units
    big = flashinfer_fusion_workspace(
        b, h100, 2, 4096, 2, 65536, {"compilation_config": {"pass_config": {"fi_allreduce_fusion_max_size_mb": 256}}},
        {})
    assert big[0] == (2 + 1 + 4) * 512 * 2**20, big
    fp32 = flashinfer_fusion_workspace(b, h100, 2, 4096, 4, 8192, {}, {})
    # half the tokens; the first buffer stays 2 B an element, the lamport copies take 4 B (use_fp32_lamport)
    assert "4096 tokens" in fp32[1] and "64, 2, 384 MiB" in fp32[1]
    for args, env in (({}, {"VLLM_FLASHINFER_ALLREDUCE_BACKEND": "mnnvl"}), ({"nnodes": 2}, {})):
        size, why = flashinfer_fusion_workspace(b, h100, 2, 4096, 2, 8192, args, env)
        assert size is None and "mnnvl" in why  # before 0.25 (FlashInfer 0.6.8 - 0.6.12) not read
    assert flashinfer_fusion_workspace(b, h100, 2, 4096, 2, 8192, {}, {"VLLM_FLASHINFER_ALLREDUCE_BACKEND": "trtllm"})[0]
    b300 = dataclasses.replace(gpus.lookup("B200"), compute_capability=(10, 3))
    size, why = flashinfer_fusion_workspace(beh("0.18.0"), b300, 2, 4096, 2, 8192, {}, {})
    assert size == 0 and "disables itself" in why  # 0.18 has no 10.3 sizes
    assert flashinfer_fusion_workspace(b, b300, 2, 4096, 2, 8192, {}, {})[0] is None  # 0.19 has; granularity unknown


def test_flashinfer_mnnvl_workspace_follows_flashinfer_0_6_13():
    """MNNVLAllReduceFusionWorkspace (FlashInfer 0.6.13 / 0.6.14, vLLM 0.25 / 0.26): three buffers of the larger of
    the one-shot size (tokens up to 1 MiB across the ranks, x ranks) and the two-shot size (2 x tokens rounded up to
    the ranks), in 2 MiB pages; across nodes (0.25) no TRT-LLM quant workspace beside it."""
    def beh(version):
        return resolve_configuration(_model(LLAMA_31_8B), gpus.lookup("H100"), {}, {}, version, 1).beh

    h100, b = gpus.lookup("H100"), beh("0.26.0")
    # TP 4 on Hopper: 2 MB max size -> 256 tokens; two-shot 2 x 64 x 4 x 4096 x 2 B = 4 MiB, x 3 = 12 MiB (+ pad)
    assert flashinfer_fusion_workspace(b, h100, 4, 4096, 2, 8192, {}, {})[0] == 14 * 2**20
    # TP 8: 0.5 MB -> 64 tokens; one-shot (16 tokens x 8 ranks) and two-shot (2 x 8 x 8) both 1 MiB -> 4 MiB
    assert flashinfer_fusion_workspace(b, h100, 8, 4096, 2, 8192, {}, {})[0] == 4 * 2**20
    # max_num_batched_tokens caps the tokens
    capped = flashinfer_fusion_workspace(b, h100, 2, 4096, 2, 1000, {}, {})
    assert capped[0] == 48 * 2**20 and "1000 tokens" in capped[1]  # 2 x 500 x 2 x 8 KiB x 3 = 46.9 MiB -> 48
    across = flashinfer_fusion_workspace(beh("0.25.0"), h100, 2, 4096, 2, 8192, {"nnodes": 2}, {})
    assert across[0] == 386 * 2**20 and "TRT-LLM" not in across[1]


@pytest.mark.parametrize("version, dense, moe", [
    ("0.10.2", 0, 0),  # "ep" group built, but CudaCommunicator gives it no PyNccl communicator
    ("0.11.0", 1, 1),  # built for every model, with a PyNccl communicator (every group of more than one rank)
    ("0.13.0", 1, 1),
    ("0.14.0", 0, 1),  # "Don't create EP group for dense models"
    ("0.19.0", 0, 1),
    ("0.28.0", 0, 1),
])
def test_the_expert_parallel_group_has_a_communicator_of_its_own(version, dense, moe):
    """initialize_model_parallel (vllm/distributed/parallel_state.py) builds the "ep" group of TP x DP ranks without
    --enable-expert-parallel. The P108 log (gpt-oss-20b, TP 2, H100, 0.19.0): 2.01 GiB in use at the snapshot on
    each rank, 0.51 at TP 1 (P107)."""
    h100 = gpus.lookup("H100-SXM")
    comm, _ = nccl_communicator_bytes(h100, {})
    beh = versions.behavior(version, h100, {"tensor_parallel_size": 2}, {}, None, 8192)
    plain = communication_memory(beh, h100, 2, 1, 1, {}, {})
    for extra, is_moe in ((dense, False), (moe, True)):
        c = communication_memory(beh, h100, 2, 1, 1, {}, {}, moe=is_moe)
        assert (c.before_snapshot + c.counted) - (plain.before_snapshot + plain.counted) == \
            (extra - dense) * comm, (version, is_moe, c.how)
        assert ("expert-parallel group's" in c.how) == bool(extra)
    # the whole stage: the same facts with and without experts
    cfg, weights = _stages(QWEN3_8B, "H100-SXM", {"tensor_parallel_size": 2}, version, num_experts=128)
    dense_cfg, dense_weights = _stages(QWEN3_8B, "H100-SXM", {"tensor_parallel_size": 2}, version)
    assert profile_memory(cfg, weights).uncounted - profile_memory(dense_cfg, dense_weights).uncounted \
        == (moe - dense) * comm
