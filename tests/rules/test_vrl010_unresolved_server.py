"""VRL010 unresolved-server, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of


def test_local_model_path_says_what_to_add(lint):
    result = lint("vrl010/fail_local_model.yaml", rule="VRL010")
    [finding] = result.of("VRL010")
    assert finding.level == "note"
    assert finding.location.line == line_of("vrl010/fail_local_model.yaml", "/models/my-finetune")
    assert "model-aliases" in finding.message and "/models/my-finetune" in finding.message


def test_unknown_gpu_says_what_to_add(lint):
    [finding] = lint("vrl010/fail_no_gpu_type.yaml", rule="VRL010").of("VRL010")
    assert finding.location.line == line_of("vrl010/fail_no_gpu_type.yaml", "nvidia.com/gpu: 1")
    assert "--gpu" in finding.message


def test_amd_gpu_is_a_note_not_a_silent_skip(lint):
    [finding] = lint("vrl010/fail_amd.yaml", rule="VRL010").of("VRL010")
    assert finding.location.line == line_of("vrl010/fail_amd.yaml", "amd.com/gpu")
    assert "AMD GPU" in finding.message and "not checked" in finding.message


def test_quiet_when_resolved(lint):
    assert lint("vrl010/pass.yaml", rule="VRL010").of("VRL010") == []
