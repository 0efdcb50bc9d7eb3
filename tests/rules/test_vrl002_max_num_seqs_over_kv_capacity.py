"""VRL002 max-num-seqs-over-kv-capacity, through scan -> assess -> rules."""

from __future__ import annotations

import math

from rules_harness import line_of


def test_default_max_num_seqs_above_what_the_kv_cache_holds(lint):
    result = lint("vrl002/fail_default.yaml", rule="VRL002")
    [finding] = result.of("VRL002")
    budget = result.budget
    held = budget.num_gpu_blocks / math.ceil(4096 / budget.block_size)
    assert budget.max_num_seqs == 256 and held < 256
    assert finding.level == "warning"
    assert finding.location.line == line_of("vrl002/fail_default.yaml", "- name: vllm")
    for number in ("admits up to 256", f"{budget.kv_cache_gib:.2f} GiB", f"{budget.kv_tokens:,} tokens",
                   f"{held:.2f}x", "4,096", f"--max-num-seqs {math.floor(held)}", "preempts"):
        assert number in finding.message, number


def test_p99_context_from_the_traffic_profile(lint):
    result = lint("vrl002/fail_default.yaml", rule="VRL002", p99=2000)
    [finding] = result.of("VRL002")
    held = result.budget.num_gpu_blocks / math.ceil(2000 / result.budget.block_size)
    assert "p99 context, 2,000 tokens" in finding.message and f"{held:.2f}x" in finding.message


def test_quiet_when_bounded_or_the_peak_traffic_fits(lint):
    assert lint("vrl002/pass_bounded.yaml", rule="VRL002").of("VRL002") == []
    assert lint("vrl002/fail_default.yaml", rule="VRL002", peak=4).of("VRL002") == []
    assert lint("vrl002/fail_default.yaml", rule="VRL002", peak=200).of("VRL002") != []


def test_typical_context_option(lint):
    # a tiny typical request fits 256 times over: nothing to say
    assert lint("vrl002/fail_default.yaml", rule="VRL002", options={"typical_context_tokens": 64}).of("VRL002") == []
