"""Weights that vLLM's loading adds or moves, worked from its code: ``--cpu-offload-gb`` (whole parameters of the
decoder layers until the limit is reached) and the MLA backend's dequantized copies of a quantized kv_b_proj."""

import pytest

from tests.test_budget_pipeline_parallel import LAYER, ROPE, VOCAB
from tests.test_weights_counts import LLAMA31_8B
from vramlint import gpus
from vramlint.budget import GiB, compute_budget
from vramlint.model import ResolveOptions
from vramlint.modelconfig import facts_from_config
from vramlint.models import resolve_model
from vramlint.weights import offloaded_bytes, weight_bytes_per_rank

OFFLINE = ResolveOptions(allow_network=False)


def _model(name):
    info, _ = resolve_model(name, OFFLINE)
    return info


def test_cpu_offload_moves_whole_parameters_of_decoder_layers_past_the_limit():
    """Llama-3.1-8B, 436,224,000 B per decoder layer: a 4 GiB limit takes 9 whole layers (3.66 GiB), then layer
    9's qkv_proj, o_proj, gate_up_proj (still below 4 GiB) and its down_proj, which passes the limit; its two
    norms stay (the offloader stops once the bytes moved reach the limit)."""
    facts = facts_from_config(LLAMA31_8B)
    moved, most = offloaded_bytes(facts, 4 * GiB)
    assert moved > 4 * GiB
    assert moved == pytest.approx(10 * LAYER * 2 - 2 * 4096 * 2, abs=1024)
    assert most == 32 * LAYER * 2


def test_cpu_offload_keeps_the_embedding_lm_head_and_norm_on_the_gpu():
    """A limit above the decoder layers moves all 32 of them: the embedding, the LM head, the final norm and
    the RoPE cache stay, 2.00 GiB that vramlint used to take off as well."""
    facts = facts_from_config(LLAMA31_8B)
    moved, most = offloaded_bytes(facts, 100 * GiB)
    assert moved == most == 32 * LAYER * 2
    assert weight_bytes_per_rank(facts) - moved == (2 * VOCAB + 4096) * 2 + ROPE
    b = compute_budget(_model("meta-llama/Llama-3.1-8B-Instruct"), gpus.lookup("L4"),
                       {"cpu_offload_gb": 100, "max_model_len": 8192}, {}, "0.11.0", 1)
    assert b.weights_gib == round(((2 * VOCAB + 4096) * 2 + ROPE) / GiB, 2) == 1.99
    assert "the embedding, LM head and norms stay on the GPU" in b.sources["weights"]


def test_mla_backend_keeps_bf16_copies_of_a_quantized_kv_b_proj():
    """DeepSeek-R1 (FP8, 61 MLA layers, 128 heads, kv_lora_rank 512, qk_nope 128, v_head 128): the MLA backend
    dequantizes kv_b_proj into W_UK / W_UV in bf16, 512 x 128/TP heads x 256 x 2 B per layer and rank."""
    facts = _model("deepseek-ai/DeepSeek-R1").extra["facts"]
    for tp in (1, 8):
        extra = (weight_bytes_per_rank(facts, tp=tp, mla_dequant=True) - weight_bytes_per_rank(facts, tp=tp))
        assert extra == pytest.approx(61 * 512 * (128 // tp) * 256 * 2, abs=1)
    assert round(61 * 512 * 16 * 256 * 2 / GiB, 3) == 0.238  # at TP 8


def test_mla_copies_need_a_quantized_kv_b_proj_and_the_mla_backend():
    lite = _model("deepseek-ai/DeepSeek-V2-Lite-Chat").extra["facts"]  # bf16: W_UK / W_UV are views of the weight
    assert weight_bytes_per_rank(lite, mla_dequant=True) == weight_bytes_per_rank(lite)
    r1 = _model("deepseek-ai/DeepSeek-R1")
    h200 = gpus.lookup("H200")
    args = {"tensor_parallel_size": 8, "max_model_len": 16384}
    with_mla = compute_budget(r1, h200, args, {}, "0.11.0", 8)
    without = compute_budget(r1, h200, args, {"VLLM_MLA_DISABLE": "1"}, "0.11.0", 8)
    assert round(with_mla.weights_gib - without.weights_gib, 2) == 0.24
