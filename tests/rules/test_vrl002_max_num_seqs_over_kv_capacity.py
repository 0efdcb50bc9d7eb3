"""VRL002 max-num-seqs-over-kv-capacity, through scan -> assess -> rules."""

from __future__ import annotations

import math

from rules_harness import line_of


def _held(budget, length: int) -> float:
    return budget.num_gpu_blocks / math.ceil(length / budget.block_size)


def test_a_cache_that_holds_fewer_than_four_typical_requests(lint):
    result = lint("vrl002/fail_small_cache.yaml", rule="VRL002")
    [finding] = result.of("VRL002")
    budget = result.budget
    held = _held(budget, 4096)
    assert budget.max_num_seqs == 256 and held < 4
    assert finding.level == "warning"
    assert finding.location.line == line_of("vrl002/fail_small_cache.yaml", "- name: vllm")
    for number in ("admits up to 256", f"{budget.kv_cache_gib:.2f} GiB", f"{budget.kv_tokens:,} tokens",
                   f"{held:.2f}x 4,096-token requests", f"--max-num-seqs {math.floor(held)}", "preempts",
                   "fewer than 4 requests fit"):
        assert number in finding.message, number


def test_quiet_without_a_traffic_profile_when_a_few_typical_requests_fit(lint):
    # the default 256 is above the 8.66 requests of 4096 tokens this cache holds, but that is the common case:
    # only traffic says whether it is reached
    result = lint("vrl002/fail_default.yaml", rule="VRL002")
    assert 4 <= _held(result.budget, 4096) < 256
    assert result.of("VRL002") == []


def test_the_peak_of_the_traffic_profile_decides(lint):
    assert lint("vrl002/fail_default.yaml", rule="VRL002", peak=4).of("VRL002") == []
    result = lint("vrl002/fail_default.yaml", rule="VRL002", peak=200)
    [finding] = result.of("VRL002")
    assert "peak of 200 concurrent requests does not fit" in finding.message
    assert f"{_held(result.budget, 4096):.2f}x 4,096-token requests" in finding.message


def test_p99_context_from_the_traffic_profile(lint):
    result = lint("vrl002/fail_default.yaml", rule="VRL002", p99=2000, peak=64)
    [finding] = result.of("VRL002")
    held = _held(result.budget, 2000)
    assert f"{held:.2f}x 2,000-token requests (your p99 context)" in finding.message
    assert "assumed typical request" not in finding.message
    # a p99 context long enough that fewer than 4 fit fires without a peak too
    assert lint("vrl002/fail_default.yaml", rule="VRL002", p99=8192).of("VRL002") == []  # 4.3 fit
    assert lint("vrl002/fail_small_cache.yaml", rule="VRL002", p99=1024).of("VRL002") == []  # 13.5 fit


def test_quiet_when_bounded(lint):
    assert lint("vrl002/pass_bounded.yaml", rule="VRL002").of("VRL002") == []
    assert lint("vrl002/pass_bounded.yaml", rule="VRL002", peak=200).of("VRL002") == []


def test_options(lint):
    # a tiny typical request fits many times over: nothing to say
    small = lint("vrl002/fail_small_cache.yaml", rule="VRL002", options={"typical_context_tokens": 64})
    assert small.of("VRL002") == []
    # a higher bar for concurrency makes the ordinary cache too small
    strict = lint("vrl002/fail_default.yaml", rule="VRL002", options={"min_concurrency": 16})
    assert len(strict.of("VRL002")) == 1 and "fewer than 16 requests fit" in strict.of("VRL002")[0].message
