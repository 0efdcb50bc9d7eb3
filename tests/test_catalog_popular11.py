"""The twenty-fourth round's catalog entry (popular11-qwen.json): Qwen/Qwen2-VL-7B-Instruct, from the copy of its
config.json in a PaddleMIX fork's test (the tester of Qwen/Qwen2-VL-7B-Instruct, "configs copy from" the Hub's
config.json). It resolves offline to its checkpoint's size: 8,291,375,616 parameters, 16,582,751,232 bytes in bf16
(the index's total_size a public script keeps when it rewrites the five shards), and a deployment naming it gets a
budget and a GPU requirement without network; before, it was "not in vramlint's catalog"."""

from __future__ import annotations

import json

from tests._check_util import deployment, run_cli
from vramlint.models import _from_catalog, catalog_entry

INDEX_TOTAL_SIZE = 16_582_751_232  # bf16: 2 bytes per parameter


def test_qwen2_vl_7b_resolves_offline_to_its_checkpoint_size():
    entry = catalog_entry("Qwen/Qwen2-VL-7B-Instruct")
    assert entry is not None
    assert "github.com/little1d/PaddleMIX/blob/e79e3b019bf7b8b4c9df3f1959220850f04719c0/tests/models/" \
           "test_qwen2vl.py" in entry["source"]
    info = _from_catalog("Qwen/Qwen2-VL-7B-Instruct")
    assert info.param_count == INDEX_TOTAL_SIZE // 2 == 8_291_375_616
    # the 152,064-row vocabulary is a multiple of 64: vLLM pads neither table, the weights are the file's bytes
    assert info.vocab_size % 64 == 0 and not info.tie_word_embeddings
    assert info.weight_bytes == INDEX_TOTAL_SIZE
    facts = info.extra["facts"]
    assert facts["vision"]["style"] == "qwen2_vl" and facts["vision"]["layers"] == 32


def test_a_deployment_naming_it_gets_a_budget_and_a_gpu_requirement_offline(tmp_path):
    text = deployment("vllm/vllm-openai:v0.11.0", ["--model", "Qwen/Qwen2-VL-7B-Instruct",
                                                   "--max-model-len", "32768"])
    _, out = run_cli(tmp_path, text, "explain", "--format", "json")
    data = json.loads(out)
    server = (data["servers"] if isinstance(data, dict) and "servers" in data else data)[0]
    requirement = server["gpu_requirement"]
    # the checkpoint's bytes and vLLM's non-persistent RoPE cos_sin_cache, 32,768 positions x 128 in bf16
    assert requirement["needs_gib"]["weights"] == round((INDEX_TOTAL_SIZE + 32_768 * 128 * 2) / 2**30, 2) == 15.45
    # 15.44 GiB of weights: a 24 GB card starts it, a 16 GB one has no memory left for the KV cache
    assert "L4" in requirement["fits"] and "RTX-4090" in requirement["fits"]
    assert requirement["why_not"]["RTX-4080"] == "no memory left for the KV cache"
    assert requirement["why_not"]["T4"] == "the weights do not fit"
    _, checked = run_cli(tmp_path, text, "check", "--gpu", "L4")
    assert "bfloat16 weights take 15.45 GiB of the 19.83 GiB usable on each L4" in checked
