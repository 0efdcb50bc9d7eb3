"""Fixtures for the rule tests: the real pipeline, offline."""

from __future__ import annotations

import pytest
from rules_harness import lint_files


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    # Model facts come from the embedded catalog; no test may reach the Hub or a user's cache.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def lint():
    from vramlint import vllm_args

    if not vllm_args.versions():
        # The pipeline reads no argument without EA's generated table (vramlint/data/vllm_args.json).
        pytest.skip("vLLM argument table not generated yet: pipeline tests need it")
    return lint_files
