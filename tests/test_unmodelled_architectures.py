"""Models whose memory vLLM lays out in a way vramlint's budget does not model are left unchecked with that reason
(once per run, as their own cause), not sized as a decoder they are not. Fixtures are small config dicts written
from the public configs' shapes."""

from __future__ import annotations

import json

import pytest

from vramlint.model import ResolveOptions
from vramlint.modelconfig import ENCODER_ONLY_ARCHITECTURES, unmodelled_architecture
from vramlint.models import NOT_MODELLED, resolve_model

# A BERT-large embedding model's shape (BAAI/bge-large-en-v1.5 is one)
BERT = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 1024, "num_hidden_layers": 24,
        "num_attention_heads": 16, "intermediate_size": 4096, "max_position_embeddings": 512, "vocab_size": 30522,
        "type_vocab_size": 2, "torch_dtype": "float32"}
# An XLM-RoBERTa cross-encoder (BAAI/bge-reranker-v2-m3's architecture)
RERANKER = {"architectures": ["XLMRobertaForSequenceClassification"], "model_type": "xlm-roberta",
            "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
            "max_position_embeddings": 8194, "vocab_size": 250002}
# Gemma 3n E4B's shape: per-layer embeddings (with AltUp and LAuReL), the last 15 of 35 layers KV-shared
GEMMA3N = {
    "architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n",
    "text_config": {"model_type": "gemma3n_text", "hidden_size": 2048, "intermediate_size": 16384,
                    "num_hidden_layers": 35, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256,
                    "vocab_size": 262400, "vocab_size_per_layer_input": 262144, "hidden_size_per_layer_input": 256,
                    "num_kv_shared_layers": 15, "sliding_window": 512, "max_position_embeddings": 32768,
                    "altup_num_inputs": 4, "laurel_rank": 64},
    "torch_dtype": "bfloat16",
}


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")


def _model_dir(tmp_path, name, cfg):
    path = tmp_path / "models" / name
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps(cfg))
    return path


def test_encoder_only_models_are_refused_with_their_reason_and_no_alias_advice(tmp_path):
    for name, cfg in (("bge", BERT), ("reranker", RERANKER)):
        info, reason = resolve_model(str(_model_dir(tmp_path, name, cfg)), ResolveOptions(allow_network=False))
        assert info is None
        assert f"an encoder-only model ({cfg['architectures'][0]})" in reason and reason.endswith(NOT_MODELLED)
        assert "model-aliases" not in reason  # mapping the name would change nothing


def test_encoder_decoder_speech_models_are_refused():
    # openai/whisper-large-v3's shape: 32 encoder and 32 decoder layers, d_model 1280
    whisper = {"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper", "d_model": 1280,
               "encoder_layers": 32, "decoder_layers": 32, "num_hidden_layers": 32, "encoder_attention_heads": 20,
               "decoder_attention_heads": 20, "vocab_size": 51866, "max_target_positions": 448}
    assert unmodelled_architecture(whisper).startswith("an encoder-decoder model (WhisperForConditionalGeneration)")


def test_per_layer_block_configs_are_refused():
    # nvidia/Llama-3_3-Nemotron-Super-49B-v1's config: no model-wide intermediate_size or num_key_value_heads, each
    # of the 80 layers has its own attention (n_heads_in_group, or no_op) and ffn_mult
    blocks = [{"attention": {"n_heads_in_group": 8, "no_op": False, "replace_with_linear": False},
               "ffn": {"ffn_mult": 5.25, "no_op": False, "replace_with_linear": False}}] * 79
    blocks.append({"attention": {"n_heads_in_group": None, "no_op": True, "replace_with_linear": False},
                   "ffn": {"ffn_mult": 1.3125, "no_op": False, "replace_with_linear": False}})
    nas = {"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas", "hidden_size": 8192,
           "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": None, "intermediate_size": None,
           "vocab_size": 128256, "max_position_embeddings": 131072, "block_configs": blocks}
    assert unmodelled_architecture(nas) == ("a nemotron-nas model whose 80 layers each have their own attention and "
                                            "MLP shapes (block_configs)")


def test_per_layer_embeddings_or_kv_sharing_outside_gemma4_are_refused():
    reason = unmodelled_architecture(GEMMA3N)
    assert reason.startswith("a gemma3n_text model with per-layer embeddings (hidden_size_per_layer_input 256)")
    assert "num_kv_shared_layers 15" in reason
    only_shared = {**GEMMA3N, "text_config": {**GEMMA3N["text_config"], "hidden_size_per_layer_input": 0}}
    assert "per-layer" not in unmodelled_architecture(only_shared) and "KV-shared" in unmodelled_architecture(only_shared)
    # decoder architectures vLLM can also run bidirectionally (LlamaModel, Qwen2Model) stay decoders
    assert unmodelled_architecture({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}) is None
    assert "LlamaModel" not in ENCODER_ONLY_ARCHITECTURES and "BertModel" in ENCODER_ONLY_ARCHITECTURES


def test_servers_on_unmodelled_models_are_one_cause_that_says_nothing_needs_to_change(tmp_path, capsys):
    from vramlint.cli import main

    _model_dir(tmp_path, "bge", BERT)
    _model_dir(tmp_path, "gemma", GEMMA3N)
    (tmp_path / ".vramlint.yaml").write_text("model-aliases:\n  /mnt/bge: models/bge\n  /mnt/gemma: models/gemma\n")
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n"
        "  embed:\n    image: vllm/vllm-openai:v0.11.0\n    command: [\"--model\", \"/mnt/bge\"]\n"
        "  chat:\n    image: vllm/vllm-openai:v0.11.0\n    command: [\"--model\", \"/mnt/gemma\"]\n")
    main(["check", str(tmp_path), "--offline", "--gpu", "L4", "--format", "json"])
    groups = {g["cause"]: g for g in json.loads(capsys.readouterr().out)["summary"]["unchecked"]}
    assert set(groups) == {"model-not-modelled"}
    group = groups["model-not-modelled"]
    assert group["count"] == 2 and group["fix"].startswith("nothing to change")
    assert sorted(i.split(": ", 1)[1].split(" (")[0] for i in group["items"]) == [
        "a gemma3n_text model with per-layer embeddings", "an encoder-only model"]
