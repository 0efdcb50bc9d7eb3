"""The thirteenth round's catalog entries (popular7-*.json): each resolves offline to the size its own checkpoint
publishes, and tools/catalog_entry.py writes entries through facts_from_config, refusing configs vramlint refuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vramlint.models import _from_catalog, catalog_entry

ROOT = Path(__file__).resolve().parent.parent

# model id -> (parameters the checkpoint publishes, relative tolerance, weight bytes its safetensors index gives or
# None, where the figure comes from). A model card's "6.7B" is rounded: the tolerance says how much.
PUBLISHED = {
    "HuggingFaceH4/zephyr-7b-beta": (7_241_732_096, 0.0, 14_483_464_192,
                                     "model.safetensors.index.json total_size / 2 bytes (bf16)"),
    "facebook/opt-6.7b": (6.7e9, 0.01, None, "the OPT model card's 6.7B"),
    "facebook/opt-13b": (13e9, 0.015, None, "the OPT model card's 13B"),
    "lmsys/vicuna-7b-v1.3": (6_738_415_616, 0.0, None, "LLaMA-7B, which Vicuna v1.3 fine-tunes unchanged in shape"),
}


@pytest.mark.parametrize("model_id", sorted(PUBLISHED))
def test_entry_resolves_offline_to_the_published_size(model_id):
    params, tolerance, index_bytes, _why = PUBLISHED[model_id]
    entry = catalog_entry(model_id)
    assert entry is not None and "github.com/" in entry["source"] and "/blob/" in entry["source"], model_id
    info = _from_catalog(model_id)
    assert info.param_count == pytest.approx(params, rel=tolerance, abs=0 if tolerance else 0.5), model_id
    if index_bytes is not None:
        assert info.weight_bytes == index_bytes, model_id
    # 16-bit checkpoints without a quantization config: two bytes per parameter (the LM head once when tied), and the
    # rows vLLM's VocabParallelEmbedding pads the vocabulary with, up to a multiple of 64
    padded_rows = -(-info.vocab_size // 64) * 64 - info.vocab_size
    assert info.weight_bytes == 2 * (info.param_count + padded_rows * info.hidden_size), model_id


def test_opt_shares_its_embeddings_as_lm_head_and_keeps_learned_positions():
    # OPTConfig sets no tie_word_embeddings (PretrainedConfig's True) and vLLM's OPTForCausalLM uses embed_tokens as
    # LM head; its learned positional embedding has max_position_embeddings + 2 rows (OPTLearnedPositionalEmbedding)
    info = _from_catalog("facebook/opt-6.7b")
    assert info.max_position_embeddings == 2048
    per_layer = 4 * (4096 * 4096 + 4096) + (4096 * 16384 + 16384) + (16384 * 4096 + 4096) + 4 * 4096
    assert info.param_count == 50272 * 4096 + 2050 * 4096 + 32 * per_layer + 2 * 4096
    # the vocabulary, 50272 rows, is padded to 50304 when loaded: one table of embeddings, no second LM head
    assert info.weight_bytes == 2 * (info.param_count + 32 * 4096)


def _run_tool(tmp_path, cfg, *extra):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return subprocess.run([sys.executable, str(ROOT / "tools" / "catalog_entry.py"), "org/model", str(path),
                           "--source", "https://huggingface.co/org/model/blob/main/config.json", *extra],
                          capture_output=True, text=True, cwd=str(tmp_path))


def test_catalog_entry_tool_writes_what_facts_from_config_reads(tmp_path):
    from vramlint.modelconfig import facts_from_config, model_info_from_facts

    cfg = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 32000, "max_position_embeddings": 32768, "sliding_window": 4096, "torch_dtype": "bfloat16",
           "tie_word_embeddings": False}
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 14483464192}}), encoding="utf-8")
    done = _run_tool(tmp_path, cfg, "--note", "a note", "--index", str(index))
    assert done.returncode == 0, done.stderr
    model_id, entry = next(iter(json.loads("{" + done.stdout.strip() + "}").items()))
    assert model_id == "org/model" and entry["note"] == "a note"
    facts = {k: v for k, v in entry.items() if k not in ("source", "note")}
    assert facts == {k: v for k, v in facts_from_config(cfg).items() if v is not None}
    assert model_info_from_facts(facts, model_id, "test").weight_bytes == 14_483_464_192
    assert "7,241,732,096 parameters counted" in done.stderr and "total_size 14,483,464,192" in done.stderr


def test_catalog_entry_tool_refuses_a_config_vramlint_refuses(tmp_path):
    done = _run_tool(tmp_path, {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": "wide",
                                "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000})
    assert done.returncode != 0 and "refused" in done.stderr and done.stdout == ""
