"""VRL003 unquantized-weights-on-small-gpu, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of


def test_bf16_8b_on_l4_offers_fp8_and_4bit_with_real_numbers(lint):
    result = lint("vrl003/fail_l4_bf16.yaml", rule="VRL003")
    [finding] = result.of("VRL003")
    budget = result.budget
    assert finding.level == "note"
    assert finding.location.line == line_of("vrl003/fail_l4_bf16.yaml", "Llama-3.1-8B-Instruct")  # the model
    assert budget.weights_gib / budget.usable_gib > 0.5
    for number in (f"{budget.weights_gib:.2f} GiB", f"{budget.usable_gib:.2f} GiB", f"{budget.kv_tokens:,}"):
        assert number in finding.message, number
    assert "FP8 (8-bit) frees" in finding.message and "AWQ/GPTQ (4-bit) frees" in finding.message
    freed = [float(x) for x in __import__("re").findall(r"frees (\d+\.\d+) GiB", finding.message)]
    assert len(freed) == 2 and 0 < freed[0] < freed[1] < budget.weights_gib  # 8-bit frees less than 4-bit


def test_t4_is_not_offered_fp8_before_vllm_0_15(lint):
    result = lint("vrl003/fail_t4_fp16.yaml", rule="VRL003")
    [finding] = result.of("VRL003")
    assert "AWQ/GPTQ" in finding.message and "FP8" not in finding.message
    [newer] = lint("vrl003/fail_t4_newer_vllm.yaml", rule="VRL003").of("VRL003")
    assert "FP8 (8-bit) frees" in newer.message and "weight-only on this GPU" in newer.message


def test_quiet_for_quantized_models_and_big_gpus(lint):
    assert lint("vrl003/pass_awq.yaml", rule="VRL003").of("VRL003") == []
    assert lint("vrl003/pass_fp8_online.yaml", rule="VRL003").of("VRL003") == []
    assert lint("vrl003/pass_big_gpu.yaml", rule="VRL003").of("VRL003") == []


def test_share_option(lint):
    assert lint("vrl003/fail_l4_bf16.yaml", rule="VRL003", options={"max_weight_share": 0.9}).of("VRL003") == []
    assert lint("vrl003/pass_big_gpu.yaml", rule="VRL003", options={"max_weight_share": 0.1}).of("VRL003") != []


def test_an_option_that_still_leaves_no_kv_cache_says_so(lint):
    # 70B in bf16 on one L4: neither FP8 nor 4-bit weights fit beside a KV cache; the note must not read as if
    # they helped ("0 KV-cache tokens instead of 0")
    [finding] = lint("vrl003/fail_l4_70b_no_room_even_4bit.yaml", rule="VRL003").of("VRL003")
    assert "instead of 0" not in finding.message
    assert finding.message.count("still too little for any KV cache") == 2
