"""VRL005 will-not-start, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of


def test_default_context_too_long_for_the_kv_cache_is_on_the_container(lint):
    result = lint("vrl005/fail_unset_len.yaml", rule="VRL005")
    budget = result.budget
    assert not budget.starts
    [finding] = result.of("VRL005")
    error = budget.errors[0]
    assert error["arg"] == "max_model_len"
    assert finding.level == "error"
    assert finding.location.line == line_of("vrl005/fail_unset_len.yaml", "- name: vllm")
    assert error["message"] in finding.message  # vLLM's own words
    for number in (f"{budget.weights_gib:.2f} GiB", f"{budget.kv_cache_gib:.2f} GiB", f"{budget.usable_gib:.2f} GiB",
                   "(131072)", "L4"):
        assert number in finding.message, number


def test_too_long_explicit_context_is_on_its_line(lint):
    result = lint("vrl005/fail_long_len.yaml", rule="VRL005")
    [finding] = result.of("VRL005")
    assert finding.location.line == line_of("vrl005/fail_long_len.yaml", "--max-model-len")
    assert "(65536)" in finding.message


def test_utilization_above_one(lint):
    result = lint("vrl005/fail_utilization.yaml", rule="VRL005")
    findings = result.of("VRL005")
    assert findings and all(f.location.line == line_of("vrl005/fail_utilization.yaml", "--gpu-memory-utilization") for f in findings)
    assert any("1.2" in f.message for f in findings)


def test_quiet_when_it_starts(lint):
    result = lint("vrl005/pass.yaml", rule="VRL005")
    assert result.budget.starts and result.of("VRL005") == []
