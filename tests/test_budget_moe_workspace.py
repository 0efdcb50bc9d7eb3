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
    # a quantized checkpoint goes through its own MoE method (not modelled here)
    fp8, _ = resolve_model("Qwen/Qwen3-30B-A3B-FP8", ResolveOptions(allow_network=False))
    assert "fused-MoE workspace" not in compute_budget(fp8, gpus.lookup("H100"), ARGS, {}, "0.27.1", 1
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
