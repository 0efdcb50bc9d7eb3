"""Every entry of the embedded model catalog loads, says where its facts come from, and its sizes hold together."""

from __future__ import annotations

import json

import pytest

from vramlint.models import (
    CATALOG_DIR,
    CATALOG_INDEX,
    _from_catalog,
    build_catalog_index,
    catalog,
    catalog_entry,
)
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


def test_the_generated_index_names_the_file_of_every_catalog_model():
    # resolving a model reads only the index and the file it names: a model missing from the index would be
    # unknown offline (regenerate with `python tools/gen_model_index.py`)
    stored = json.loads(CATALOG_INDEX.read_text(encoding="utf-8"))["files"]
    assert stored == build_catalog_index()
    assert len(stored) == len(catalog())


def test_a_fresh_process_resolves_through_the_index_reading_one_file(tmp_path):
    import os
    import subprocess
    import sys

    code = (
        "import json, vramlint.models as m\n"
        "a = m.catalog_entry('Qwen/QwQ-32B-Preview'); b = m.catalog_entry('RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8')\n"
        "print(json.dumps([a['layers'], b['quant']['method'], m.catalog_entry('no-such/model'), sorted(m._file_cache), "
        "m._catalog_cache is None]))\n"
    )
    root = str(CATALOG_DIR.parent.parent.parent)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(tmp_path),
                         env=dict(os.environ, PYTHONPATH=root)).stdout
    layers, method, missing, files_read, whole_catalog_unread = json.loads(out)
    assert (layers, method, missing) == (64, "compressed-tensors", None)
    assert files_read == ["llama.json", "popular2-qwen.json"] and whole_catalog_unread


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
    # within 0.1%: GPT-2's causal-mask buffers and Gemma 4's per-layer scalars are bytes that are no parameter;
    # Gemma 4's k_eq_v full-attention layers load K into the V slot too (vLLM allocates it): bytes of no parameter
    # (google/gemma-4-31B-it: 10 layers x 5376 x 4 heads x 512 = 110M, 0.35% of its weights)
    for model_id in catalog():
        entry = catalog_entry(model_id)
        if entry.get("quant") or entry.get("weight_bytes"):
            continue
        facts = {k: v for k, v in entry.items() if k not in STORED + ("params",)}
        counted = count_parameters(facts)
        assert weight_bytes(facts) == pytest.approx((counted.total + counted.duplicated) * 2, rel=1e-3), model_id


def test_config_shapes_the_new_entries_rely_on():
    from vramlint.modelconfig import config_problem, facts_from_config

    # Qwen2.5-VL configs of early 2025 keep the text fields at the top level (model_type qwen2_5_vl); like the
    # text-config spelling, use_sliding_window false means no sliding layers whatever sliding_window says
    qwen_vl = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
               "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16,
               "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 128000,
               "sliding_window": 32768, "use_sliding_window": False, "max_window_layers": 70}
    assert "pattern" not in facts_from_config(qwen_vl)
    assert facts_from_config(dict(qwen_vl, use_sliding_window=True, max_window_layers=30))["pattern"] == "F" * 30 + "S" * 6
    # SmolLM3Config sets no tie_word_embeddings of its own: PretrainedConfig's True applies
    smollm3 = {"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3", "hidden_size": 2048,
               "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
               "vocab_size": 128256, "max_position_embeddings": 65536}
    assert facts_from_config(smollm3)["tie"] is True
    assert facts_from_config(dict(smollm3, tie_word_embeddings=False))["tie"] is False
    # Exaone4Config accepts the sliding pattern as letters ("LLLG"); layer_types says the same per layer
    exaone = {"architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "hidden_size": 5120,
              "intermediate_size": 27392, "num_hidden_layers": 8, "num_attention_heads": 40, "num_key_value_heads": 8,
              "head_dim": 128, "vocab_size": 102400, "max_position_embeddings": 131072, "sliding_window": 4096,
              "sliding_window_pattern": "LLLG",
              "layer_types": ["sliding_attention"] * 3 + ["full_attention"] + ["sliding_attention"] * 3 + ["full_attention"]}
    assert config_problem(exaone) is None
    assert facts_from_config(exaone)["pattern"] == "SSSFSSSF"
    assert config_problem(dict(exaone, sliding_window_pattern="every fourth")) is not None


def test_qwen25_vl_vision_tower_counts_its_gated_mlps_and_patch_merger():
    # torchinfo of Qwen2.5-VL-3B-Instruct's vision tower (whaler404/Hf-Learn, qwen2.5_vl.md): patch embedding
    # 1,505,280, each of 32 blocks 19,702,200, merger MLP 36,707,328 (its RMSNorm 1,280)
    from vramlint.modelconfig import facts_from_config

    cfg = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl", "hidden_size": 2048,
           "intermediate_size": 11008, "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 2,
           "vocab_size": 151936, "max_position_embeddings": 128000, "tie_word_embeddings": True,
           "vision_config": {"depth": 32, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16,
                             "out_hidden_size": 2048, "patch_size": 14, "spatial_merge_size": 2,
                             "temporal_patch_size": 2, "fullatt_block_indexes": [7, 15, 23, 31]}}
    torchinfo = 1_505_280 + 32 * 19_702_200 + 36_707_328 + 1_280
    assert abs(count_parameters(facts_from_config(cfg)).vision - torchinfo) <= 2 * 1280


def test_qwen2_vl_vision_tower_is_embed_dim_wide_with_an_mlp_ratio():
    # Qwen2-VL's vision_config gives the tower's width as embed_dim and its MLP as embed_dim * mlp_ratio; its
    # hidden_size is the text width the patch merger projects to (transformers Qwen2VisionTransformerPretrainedModel).
    # Qwen2-VL-7B-Instruct: 8,291,375,616 parameters in all, 7,615,616,512 of them the Qwen2-7B text model
    from vramlint.modelconfig import config_problem, facts_from_config

    cfg = {"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl", "hidden_size": 3584,
           "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
           "vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
           "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16, "in_chans": 3,
                             "hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2, "spatial_patch_size": 14,
                             "temporal_patch_size": 2}}
    assert config_problem(cfg) is None
    facts = facts_from_config(cfg)
    assert facts["vision"]["hidden"] == 1280 and facts["vision"]["inter"] == 5120 and facts["vision"]["out"] == 3584
    # Conv3d 1,505,280 (no bias) + 32 blocks of 19,677,440 + merger (LayerNorm 2,560, 5120 -> 5120 -> 3584)
    assert count_parameters(facts).vision == 1_505_280 + 32 * 19_677_440 + 2_560 + 26_219_520 + 18_353_664
    assert count_parameters(facts).vision == 8_291_375_616 - 7_615_616_512
    assert count_parameters(facts).total == 8_291_375_616
