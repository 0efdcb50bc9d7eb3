"""Every entry of the embedded model catalog loads, says where its facts come from, and its sizes hold together."""

from __future__ import annotations

import json

import pytest

from vramlint.models import CATALOG_DIR, _from_catalog, catalog, catalog_entry
from vramlint.weights import count_parameters, weight_bytes

STORED = ("id", "source", "note", "same_as")


def _files() -> dict[str, dict]:
    return {path.name: json.loads(path.read_text(encoding="utf-8")) for path in sorted(CATALOG_DIR.glob("*.json"))}


def test_no_model_is_listed_twice_across_catalog_files():
    # catalog() keeps the last file's entry for an id: a second copy would silently replace the first
    seen: dict[str, str] = {}
    twice = []
    for name, data in _files().items():
        assert data.get("schema") == 1, name
        for model_id in data["models"]:
            key = model_id.lower()
            if key in seen:
                twice.append((model_id, seen[key], name))
            seen[key] = name
    assert twice == []


@pytest.mark.parametrize("model_id", sorted(catalog()))
def test_entry_loads_through_the_catalog_resolver(model_id):
    entry = catalog_entry(model_id)
    assert entry["source"].startswith("https://huggingface.co/"), model_id
    if "same_as" in catalog()[model_id]:
        assert catalog_entry(catalog()[model_id]["same_as"]) is not None, model_id
    info = _from_catalog(model_id)
    assert info is not None and info.weight_bytes > 0 and info.param_count > 0, model_id
    assert info.max_position_embeddings > 0 and info.num_layers > 0 and info.num_kv_heads > 0, model_id


def test_weights_from_the_architecture_agree_with_published_counts_times_dtype():
    # entries that store the checkpoint's own parameter count (the Hub's safetensors count) and its bytes: the
    # bytes computed from the config's architecture alone must come within 3% of the stored ones
    checked = 0
    for model_id in catalog():
        entry = catalog_entry(model_id)
        if not entry.get("weight_bytes") or entry.get("quant") or not entry.get("params"):
            continue
        facts = {k: v for k, v in entry.items() if k not in STORED + ("params", "weight_bytes", "weight_bytes_source")}
        assert entry["params"] * 1.9 <= entry["weight_bytes"] <= entry["params"] * 4.1, model_id
        computed = weight_bytes(facts)
        stored_16bit = entry["params"] * 2  # vLLM loads float32 checkpoints as 16-bit unless told otherwise
        assert abs(computed - stored_16bit) / stored_16bit < 0.03, (model_id, computed, stored_16bit)
        checked += 1
    assert checked >= 20


def test_unquantized_weights_are_parameters_times_two_bytes():
    # within 0.1%: GPT-2's causal-mask buffers and Gemma 4's per-layer scalars are bytes that are no parameter
    for model_id in catalog():
        entry = catalog_entry(model_id)
        if entry.get("quant") or entry.get("weight_bytes"):
            continue
        facts = {k: v for k, v in entry.items() if k not in STORED + ("params",)}
        total = count_parameters(facts).total
        assert weight_bytes(facts) == pytest.approx(total * 2, rel=1e-3), model_id
