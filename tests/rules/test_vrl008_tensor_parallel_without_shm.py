"""VRL008 tensor-parallel-without-shm, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of


def test_tp_without_dev_shm_in_kubernetes(lint):
    result = lint("vrl008/fail_k8s.yaml", rule="VRL008")
    assert result.inventory.servers[0].shm is False
    [finding] = result.of("VRL008")
    assert finding.level == "warning"
    assert finding.location.line == line_of("vrl008/fail_k8s.yaml", "--tensor-parallel-size")
    assert "tensor-parallel-size 2" in finding.message and "medium: Memory at /dev/shm" in finding.message


def test_quiet_with_shm_or_one_gpu(lint):
    assert lint("vrl008/pass_k8s.yaml", rule="VRL008").of("VRL008") == []
    assert lint("vrl008/pass_single_gpu.yaml", rule="VRL008").of("VRL008") == []
