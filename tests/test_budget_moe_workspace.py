"""The fused-MoE workspace of vLLM's modular Triton kernel in the profiling run (0.15+), from vLLM's source:
FusedMoEModularKernel._allocate_buffers takes TritonExperts.workspace_shapes for all the profile batch's tokens
from the workspace manager, which keeps the buffer allocated, so it is still there when the dummy sampler runs."""

from vramlint import gpus
from vramlint.budget import GiB, compute_budget
from vramlint.model import ResolveOptions
from vramlint.models import resolve_model

ARGS = {"max_num_batched_tokens": 8192, "max_num_seqs": 1024, "max_model_len": 8192}


def _qwen3_30b_a3b():
    info, why = resolve_model("Qwen/Qwen3-30B-A3B", ResolveOptions(allow_network=False))
    assert info is not None, why
    return info


def test_triton_moe_workspace_is_held_through_the_sampler_run():
    model = _qwen3_30b_a3b()  # bf16, hidden 2048, 128 experts, top-8, moe_intermediate_size 768
    # (8192 x 8 x (max(768, 2048) + max(1536, 2048))) bf16 values: the gate/up output shares the (M, H) result
    workspace = 8192 * 8 * (2048 + 2048) * 2 / GiB
    hopper = compute_budget(model, gpus.lookup("H100"), ARGS, {}, "0.27.1", 1)
    blackwell = compute_budget(model, gpus.lookup("B200"), ARGS, {}, "0.27.1", 1)  # FlashInfer kernels: not modelled
    assert "fused-MoE workspace" in hopper.sources["activation"]
    assert "fused-MoE workspace" not in blackwell.sources["activation"]
    assert abs(hopper.activation_gib - blackwell.activation_gib - workspace) < 0.02
    # 0.20 runs the FlashInfer CUTLASS kernel on Hopper (the oracle moves it behind Triton from 0.26), Triton on Ada
    assert "fused-MoE workspace" not in compute_budget(model, gpus.lookup("H100"), ARGS, {}, "0.20.0", 1
                                                       ).sources["activation"]
    assert "fused-MoE workspace" in compute_budget(model, gpus.lookup("L40S"), ARGS, {}, "0.20.0", 1
                                                   ).sources["activation"]
    # a block-FP8 checkpoint on Blackwell datacenter parts goes to FlashInfer TRTLLM (its own buffers)
    fp8, _ = resolve_model("Qwen/Qwen3-30B-A3B-FP8", ResolveOptions(allow_network=False))
    assert "fused-MoE workspace" not in compute_budget(fp8, gpus.lookup("B200"), ARGS, {}, "0.27.1", 1
                                                       ).sources["activation"]


def test_triton_moe_workspace_before_the_oracle_priority_list_is_on_every_cuda_gpu():
    """0.15 - 0.19: select_unquantized_moe_backend takes TRITON (a FusedMoEKernel over TritonExperts, buffers from
    the workspace manager) on CUDA unless VLLM_USE_FLASHINFER_MOE_FP16 opts into FlashInfer; so Hopper holds the
    buffers too. The 0.19.0 H100 log of Qwen3-30B-A3B (P85) has a 2.68 GiB peak, 0.55 above the sampler's."""
    model = _qwen3_30b_a3b()
    workspace = 8192 * 8 * (2048 + 2048) * 2 / GiB
    with_ws = compute_budget(model, gpus.lookup("H100"), ARGS, {}, "0.19.0", 1)
    assert "fused-MoE workspace (0.50 GiB)" in with_ws.sources["activation"]
    opted = compute_budget(model, gpus.lookup("H100"), ARGS, {"VLLM_USE_FLASHINFER_MOE_FP16": "1"}, "0.19.0", 1)
    assert "fused-MoE workspace" not in opted.sources["activation"]
    assert abs(with_ws.activation_gib - opted.activation_gib - workspace) < 0.02
    assert "fused-MoE workspace" in compute_budget(model, gpus.lookup("H100"), ARGS, {}, "0.15.0", 1
                                                   ).sources["activation"]
    assert "fused-MoE workspace" not in compute_budget(model, gpus.lookup("H100"), ARGS, {}, "0.14.0", 1
                                                       ).sources["activation"]  # not read before 0.15


def _qwen3_30b_a3b_fp8():
    info, why = resolve_model("Qwen/Qwen3-30B-A3B-FP8", ResolveOptions(allow_network=False))
    assert info is not None, why
    assert (info.extra.get("facts") or {}).get("quant", {}).get("block") == [128, 128]
    return info


def test_block_fp8_moe_takes_the_triton_workspace_where_the_fp8_oracle_picks_triton():
    """0.25+: oracle/fp8.py puts TRITON first for block FP8 on 9.0 without expert parallelism; on 8.9 and 12.x the
    backends ahead of it decline the block scheme or the device. TritonExperts then takes the same bf16 buffers
    for all the profile batch's tokens as for an unquantized MoE, kept through the sampler run."""
    model = _qwen3_30b_a3b_fp8()
    workspace = 8192 * 8 * (2048 + 2048) * 2 / GiB
    for gpu in ("H100", "L40S", "RTX-PRO-6000"):
        held = compute_budget(model, gpus.lookup(gpu), ARGS, {}, "0.28.0", 1)
        assert "fused-MoE workspace (0.50 GiB)" in held.sources["activation"], gpu
    hopper = compute_budget(model, gpus.lookup("H100"), ARGS, {}, "0.28.0", 1)
    forced = compute_budget(model, gpus.lookup("H100"), {**ARGS, "moe_backend": "deep_gemm"}, {}, "0.28.0", 1)
    assert "fused-MoE workspace" not in forced.sources["activation"]
    # the workspace is held while the sampler runs: the peak is above the other kernel's by about its size
    assert hopper.activation_gib - forced.activation_gib > workspace - 0.15
    # below 8.9 vLLM runs FP8 on Marlin; 10.x takes FlashInfer TRTLLM; before 0.25 not read
    for gpu, version in (("A100-80GB", "0.28.0"), ("B200", "0.28.0"), ("H100", "0.22.1")):
        budget = compute_budget(model, gpus.lookup(gpu), ARGS, {}, version, 1)
        assert "fused-MoE workspace" not in budget.sources["activation"], (gpu, version)


def test_block_fp8_moe_with_expert_parallel_on_hopper_goes_to_flashinfer_cutlass():
    model = _qwen3_30b_a3b_fp8()
    args = {**ARGS, "tensor_parallel_size": 2}
    tp = compute_budget(model, gpus.lookup("H100"), args, {}, "0.28.0", 2)
    ep = compute_budget(model, gpus.lookup("H100"), {**args, "enable_expert_parallel": True}, {}, "0.28.0", 2)
    assert "fused-MoE workspace" in tp.sources["activation"]
    assert "fused-MoE workspace" not in ep.sources["activation"]
    # on Ada there is no FlashInfer CUTLASS block-FP8 kernel: Triton with or without expert parallelism
    ada = compute_budget(model, gpus.lookup("L40S"), {**args, "enable_expert_parallel": True}, {}, "0.28.0", 2)
    assert "fused-MoE workspace" in ada.sources["activation"]
