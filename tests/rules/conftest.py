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
    return lint_files
