"""VRL009 unknown-vllm-argument, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of


def test_typo_with_did_you_mean(lint):
    result = lint("vrl009/fail_typo.yaml", rule="VRL009")
    [finding] = result.of("VRL009")
    assert finding.level == "error"
    assert finding.location.line == line_of("vrl009/fail_typo.yaml", "--max-model-length")
    assert "--max-model-length" in finding.message and "did you mean --max-model-len?" in finding.message
    assert "vLLM 0.10.2 (from the image tag)" in finding.message


def test_quiet_when_every_argument_is_known(lint):
    assert lint("vrl009/pass.yaml", rule="VRL009").of("VRL009") == []
