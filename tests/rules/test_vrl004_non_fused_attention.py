"""VRL004 non-fused-attention, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of


def test_forced_xformers_on_h100_is_a_warning_on_the_env_value(lint):
    result = lint("vrl004/fail_env_xformers.yaml", rule="VRL004")
    [finding] = result.of("VRL004")
    assert finding.level == "warning"
    assert finding.location.line == line_of("vrl004/fail_env_xformers.yaml", '"XFORMERS"')
    assert "VLLM_ATTENTION_BACKEND=XFORMERS" in finding.message and "compute capability 9.0" in finding.message


def test_forcing_flash_attention_on_t4(lint):
    result = lint("vrl004/fail_flash_on_t4.yaml", rule="VRL004")
    [finding] = result.of("VRL004")
    assert finding.level == "warning"
    assert finding.location.line == line_of("vrl004/fail_flash_on_t4.yaml", '"FLASH_ATTN"')
    assert "compute capability 7.5" in finding.message and "refuses to start" in finding.message


def test_t4_gets_a_note_naming_the_fallback_backend(lint):
    result = lint("vrl004/note_t4.yaml", rule="VRL004")
    [finding] = result.of("VRL004")
    assert finding.level == "note"
    assert finding.location.line == line_of("vrl004/note_t4.yaml", "nvidia-tesla-t4")
    assert "FLEX_ATTENTION" in finding.message and "vLLM 0.10.2" in finding.message
    assert lint("vrl004/note_t4.yaml", rule="VRL004", options={"note_unfused_gpu": False}).of("VRL004") == []


def test_quiet_on_default_backend_and_when_the_variable_is_ignored(lint):
    assert lint("vrl004/pass_h100.yaml", rule="VRL004").of("VRL004") == []
    assert lint("vrl004/pass_env_ignored.yaml", rule="VRL004").of("VRL004") == []
