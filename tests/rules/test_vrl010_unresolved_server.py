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


def test_model_and_gpu_unresolved_make_one_note_with_both_fixes(lint):
    [finding] = lint("vrl010/fail_model_and_gpu.yaml", rule="VRL010").of("VRL010")
    assert finding.location.line == line_of("vrl010/fail_model_and_gpu.yaml", "/models/my-finetune")
    assert "model-aliases: {'/models/my-finetune'" in finding.message
    assert "`gpu: L4`" in finding.message and "--gpu L4" in finding.message


def test_nothing_unresolved_once_the_gpu_is_given(lint):
    assert lint("vrl010/fail_no_gpu_type.yaml", rule="VRL010", gpu="L4").of("VRL010") == []


def test_many_servers_without_a_gpu_type_get_short_notes(lint):
    files = ["vrl010/fail_no_gpu_type.yaml", "vrl010/fail_model_and_gpu.yaml"]
    long_form = lint(*files, rule="VRL010").of("VRL010")
    assert len(long_form) == 2 and all("no node selector" in f.message for f in long_form)
    short_form = lint(*files, "vrl010/fail_model_and_gpu_second.yaml", rule="VRL010").of("VRL010")
    assert len(short_form) == 3 and all("no node selector" not in f.message for f in short_form)
