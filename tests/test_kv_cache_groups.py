"""The layer groups of vLLM's hybrid KV cache manager (``_get_kv_cache_groups_uniform_page_size``,
v1/core/kv_cache_utils.py): the group size is the fewest layers of one KV spec (0.9.2 - 0.11.2); from 0.12 the
most, when the largest spec has fewer than 1.25x (0.12 - 0.17) or 1.5x (0.18 - 0.28) the smallest's layers; and
one "Add N padding layers" warning per spec, N over that spec's own layers."""

from __future__ import annotations

import pytest

from vramlint import gpus
from vramlint.budget import compute_budget
from vramlint.budget.kv_layout import _groups
from vramlint.model import ResolveOptions
from vramlint.models import resolve_model
from vramlint.versions import parse_version


@pytest.mark.parametrize("version, full, local, expected", [
    ("0.11.2", 13, 12, (12, 2, 1)),   # the fewest layers: 13 full = 2 groups
    ("0.12.0", 13, 12, (13, 1, 1)),   # 13 < 1.25 x 12: the most
    ("0.17.0", 14, 10, (10, 2, 1)),   # 14 >= 1.25 x 10
    ("0.18.0", 14, 10, (14, 1, 1)),   # 14 < 1.5 x 10
    ("0.20.0", 10, 52, (10, 1, 6)),   # Gemma-3-27B's 5:1 pattern: groups of 10 in every release
])
def test_group_size_by_release(version, full, local, expected):
    assert _groups(full, local, parse_version(version)) == expected


def test_one_padding_warning_per_spec_over_its_own_layers():
    # Gemma-3-27B: 10 full-attention and 52 sliding-window layers, groups of 10: the sliding spec's last group
    # gets 8 padding layers, 8 / 52 of its layers (vLLM's message), not 8 / 70 of all
    model, why = resolve_model("google/gemma-3-27b-it", ResolveOptions(allow_network=False))
    assert model is not None, why
    b = compute_budget(model, gpus.lookup("H100-SXM"), {"max_model_len": 32768}, {}, "0.20.0", 1)
    assert [n for n in b.notes if "padding layers" in n] == [
        "Add 8 padding layers, may waste at most 15.38% KV cache memory"]
