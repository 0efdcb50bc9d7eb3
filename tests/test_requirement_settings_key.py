"""The key GPU requirements are shared by (vramlint.requirement._settings_key) is json.dumps(sort_keys=True,
default=str) of a server's settings, written by one C encoder made once: the same text for every value, None
where json refuses, and a refusal leaves nothing behind for the next key."""

from __future__ import annotations

import json

import pytest

from vramlint.requirement import _settings_key

SETTINGS = [
    ["Qwen/Qwen2.5-1.5B-Instruct", "catalog", {"max_model_len": 4096, "enable_prefix_caching": False}, {}, "0.20.0",
     1, None, None, "nvidia"],
    ["m", "s", {"b": [1.5, float("nan"), float("inf"), -0.0], "a": {"z": None, "y": True}}, {"HF_TOKEN": None}],
    ["\u00e9\u2028\x00", 10**30, {"speculative_config": {"method": "eagle", "num_speculative_tokens": 3}}],
    [{"k": {1, 2}}, object.__name__],  # a set is written by default=str
    [{1: "a", "b": 2}],  # keys json cannot sort together: refused
]


@pytest.mark.parametrize("settings", SETTINGS)
def test_the_key_is_what_json_dumps_writes(settings):
    try:
        expected = json.dumps(settings, sort_keys=True, default=str)
    except (TypeError, ValueError):
        expected = None
    assert _settings_key(settings) == expected


def test_a_refused_value_leaves_the_next_key_as_json_writes_it():
    shared = {"a": 1}
    loop: list = [shared]
    loop.append(loop)
    assert _settings_key([loop]) is None  # a circular value: refused, its marks left in the encoder
    assert _settings_key([shared, shared]) == json.dumps([shared, shared], sort_keys=True, default=str)
    assert _settings_key([loop[0]]) == '[{"a": 1}]'
