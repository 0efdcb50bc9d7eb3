"""The distinct GPU requirements of a run are computed by the cores at the same time (assess._DeferredRequirements,
parallel.shared_out), and every server gets what computing them one after another in this process gives: the
same requirement, shared by the servers of one setting, and a setting the budget refuses said on each server that
has it."""

from __future__ import annotations

import os
import sys

import pytest

from vramlint import parallel
from vramlint.assess import assess
from vramlint.model import Location, ResolveOptions, Server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no fork")


def _servers(settings: list[dict]) -> list[Server]:
    # no GPU named: each server's requirement is its budget on every catalog GPU
    return [Server(file=f"s{i}.yaml", location=Location(file=f"s{i}.yaml", line=1), source_format="kubernetes",
                   kind="Deployment", model="Qwen/Qwen2.5-1.5B-Instruct", image="vllm/vllm-openai:v0.13.0",
                   args=args) for i, args in enumerate(settings)]


def _assessed(settings: list[dict], monkeypatch, cores: int) -> tuple[list, list]:
    monkeypatch.setattr(parallel, "cores", lambda: cores)
    out = assess(_servers(settings), ResolveOptions(allow_network=False))
    said = [(a.gpu_requirement.to_json() if a.gpu_requirement else None, a.requirement_not_computed, a.unresolved,
             a.unsized, a.failure) for a in out]
    return out, said


def test_requirements_computed_at_the_same_time_are_those_computed_one_after_another(monkeypatch):
    settings = [{"max_model_len": 2048 + 512 * (i % 10)} for i in range(24)]  # 10 distinct, each more than once
    _, alone = _assessed(settings, monkeypatch, cores=1)
    out, shared = _assessed(settings, monkeypatch, cores=2)
    assert shared == alone
    assert all(a.gpu_requirement is not None for a in out)
    # one object per setting, as one cache gives: the servers of one max_model_len share it
    assert out[0].gpu_requirement is out[10].gpu_requirement is out[20].gpu_requirement
    assert out[0].gpu_requirement is not out[1].gpu_requirement


def test_a_setting_the_budget_refuses_is_said_on_each_server_that_has_it(monkeypatch):
    refused = {"compilation_config": {"max_cudagraph_capture_size": float("inf")}}
    settings = [{"max_model_len": 2048 + 512 * i} for i in range(9)] + [refused, {"max_model_len": 4096}, refused]
    _, alone = _assessed(settings, monkeypatch, cores=1)
    out, shared = _assessed(settings, monkeypatch, cores=2)
    assert shared == alone
    assert [a.unsized is not None for a in out] == [False] * 9 + [True, False, True]
    assert "not a finite integer" in out[-1].unresolved[-1]


def test_shared_out_gives_the_results_in_order_and_computes_here_with_one_core(monkeypatch):
    items = list(range(23))
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    results = parallel.shared_out(lambda x: (x * x, os.getpid()), items)
    assert [r[0] for r in results] == [x * x for x in items]
    assert len({pid for _, pid in results}) == 2  # dealt out to a forked worker as well
    assert parallel.shared_out(lambda x: (x, os.getpid()), items[:1]) == [(0, os.getpid())]  # fewer than `least`
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    assert {pid for _, pid in parallel.shared_out(lambda x: (x, os.getpid()), items)} == {os.getpid()}
    assert parallel.shared_out(lambda x: x, []) == []
