"""Gemma 4: per-layer-type attention shapes, the dense MLP next to the experts, and the KV-cache layout vLLM
builds from layers whose pages differ in size (full-attention layers: global head size 512 with 2 or 4 KV heads and
V = K; sliding-window layers: head size 256 with 8 or 16 KV heads)."""

from __future__ import annotations

import json

import pytest

from vramlint.budget import compute_budget
from vramlint.gpus import lookup as get_gpu
from vramlint.modelconfig import model_info_from_facts
from vramlint.models import catalog_entry
from vramlint.weights import count_parameters, weight_bytes

STRIP = ("id", "source", "note", "params", "weight_bytes")


def _facts(model_id: str) -> dict:
    entry = catalog_entry(model_id)
    assert entry is not None, model_id
    return {k: v for k, v in entry.items() if k not in STRIP}


def _info(model_id: str):
    return model_info_from_facts(_facts(model_id), model_id, "catalog")


def test_catalog_facts_carry_the_full_attention_shape():
    moe = _facts("google/gemma-4-26B-A4B")
    assert moe["full_attn"] == {"head_dim": 512, "kv_heads": 2, "k_eq_v": True}
    assert (moe["head_dim"], moe["kv_heads"]) == (256, 8)
    assert moe["pattern"] == "SSSSSF" * 5 and moe["sliding_window"] == 1024
    assert moe["moe"] == {"experts": 128, "top_k": 8, "inter": 704, "parallel_mlp_inter": 2112}
    dense = _facts("nvidia/Gemma-4-31B-IT-NVFP4")
    assert dense["full_attn"] == {"head_dim": 512, "kv_heads": 4, "k_eq_v": True}
    assert (dense["head_dim"], dense["kv_heads"], dense["layers"]) == (256, 16, 60) and "moe" not in dense


@pytest.mark.parametrize(
    ("model_id", "expected", "text_card"),
    [
        # language model 25.2B (card) + a ~550M vision encoder
        ("google/gemma-4-26B-A4B", 25_805_933_902, 25.2e9),
        ("nvidia/Gemma-4-26B-A4B-NVFP4", 25_805_933_902, 25.2e9),
        # language model 30.7B (card) + a ~550M vision encoder
        ("nvidia/Gemma-4-31B-IT-NVFP4", 31_273_086_572, 30.7e9),
    ],
)
def test_parameter_counts(model_id, expected, text_card):
    pc = count_parameters(_facts(model_id))
    assert pc.total == expected
    assert abs(pc.total - pc.vision - text_card) / text_card < 0.02
    assert 0.54e9 < pc.vision < 0.58e9


def test_k_eq_v_layers_hold_a_v_copy_in_memory_but_not_in_the_checkpoint():
    # QKVParallelLinear allocates the V slot and vLLM loads k_proj into it: memory, not parameters
    facts = _facts("nvidia/Gemma-4-31B-IT-NVFP4")
    pc = count_parameters(facts)
    assert pc.duplicated == 5376 * 4 * 512 * 10
    without = count_parameters({**facts, "full_attn": {**facts["full_attn"], "k_eq_v": False}})
    assert without.total - pc.total == pc.duplicated
    assert sum(without.linear.values()) == sum(pc.linear.values())


def test_nvfp4_26b_quantizes_only_the_experts():
    facts = _facts("nvidia/Gemma-4-26B-A4B-NVFP4")
    pc = count_parameters(facts)
    expected = pc.linear["experts"] * 0.5625 + (pc.total + pc.duplicated - pc.linear["experts"]) * 2
    assert weight_bytes(facts) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    ("model_id", "tp", "per_token"),
    [
        # 5 full layers x 2 x 2 heads x 512 x 2 B + 25 sliding layers x 2 x 8 heads x 256 x 2 B
        ("google/gemma-4-26B-A4B", 1, 5 * 4096 + 25 * 8192),
        ("google/gemma-4-26B-A4B", 2, 5 * 2048 + 25 * 4096),
        # TP 4: the 2 global KV heads are replicated (1 per rank)
        ("google/gemma-4-26B-A4B", 4, 5 * 2048 + 25 * 2048),
        ("nvidia/Gemma-4-31B-IT-NVFP4", 1, 10 * 8192 + 50 * 16384),
    ],
)
def test_kv_bytes_per_token(model_id, tp, per_token):
    b = compute_budget(_info(model_id), get_gpu("H100-SXM"), {"tensor_parallel_size": tp, "max_model_len": 32768},
                       {}, "0.20.0", tp)
    assert b.kv_bytes_per_token == per_token


def test_unified_pages_and_groups_in_vllm_0_20():
    # unify_kv_cache_spec_page_size: the full-attention layers' page is half the sliding layers', so their block
    # size doubles to 32; groups of 5 layers (1 full + 5 sliding); GPU KV cache size = blocks // groups x 16
    b = compute_budget(_info("google/gemma-4-26B-A4B"), get_gpu("H100-SXM"), {"max_model_len": 32768}, {},
                       "0.20.0", 1)
    page = 16 * 8192
    assert abs(b.num_gpu_blocks - b.kv_cache_gib * (1 << 30) / (page * 5)) < 20  # kv_cache_gib is rounded
    assert b.kv_tokens == b.num_gpu_blocks // 6 * 16
    sliding = -(-min(1023 + b.max_num_batched_tokens, 32768) // 16) + 1
    per_request = 32768 // 32 + 5 * sliding
    assert b.max_concurrency == round(b.num_gpu_blocks / per_request, 2)


def test_explain_gemma4_offline(capsys):
    from vramlint.cli import main

    code = main(["explain", "--offline", "--gpu", "H100-SXM", "--format", "json", "--",
                 "vllm", "serve", "google/gemma-4-26B-A4B", "--max-model-len", "32768"])
    (server,) = json.loads(capsys.readouterr().out)["servers"]
    b = server["budget"]
    assert code == 0 and b is not None and b["starts"]
    # bf16 weights of 25.8B parameters (+ the V copies of K and the two RoPE caches)
    assert 48 < b["weights_gib"] < 49
    assert b["kv_bytes_per_token"] == 225280
    assert b["max_concurrency"] > 8
