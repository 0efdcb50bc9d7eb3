"""Resolution order without the Hub: aliases, local directories, the HF cache, the catalog."""

from __future__ import annotations

import json

import pytest

from tests.test_models_resolve_hub import TINY_LLAMA, safetensors_bytes, tiny_llama_tensors
from vramlint.model import ResolveOptions
from vramlint.models import resolve_model, split_model_name


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # nothing here may reach a network
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")


def offline(tmp_path, **kw) -> ResolveOptions:
    return ResolveOptions(allow_network=False, base_dir=str(tmp_path), **kw)


def write_model_dir(path, cfg=TINY_LLAMA, with_weights=True):
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps(cfg))
    if with_weights:
        (path / "model.safetensors").write_bytes(safetensors_bytes(tiny_llama_tensors()))
    return path


def test_local_directory_relative_to_base_dir_with_exact_weight_bytes(tmp_path):
    write_model_dir(tmp_path / "models" / "tiny")
    info, reason = resolve_model("models/tiny", offline(tmp_path))
    assert reason is None and info.num_layers == 2
    assert info.weight_bytes_source == "safetensors metadata"
    assert info.weight_bytes == sum(2 * _prod(s) for _, s in tiny_llama_tensors().values())
    assert info.source.startswith("local: ")


def test_local_directory_without_weights_is_computed(tmp_path):
    write_model_dir(tmp_path / "tiny", with_weights=False)
    info, _ = resolve_model(str(tmp_path / "tiny"), offline(tmp_path))
    assert info.weight_bytes_source == "computed from architecture" and info.weight_bytes > 0


def test_alias_to_hub_id_in_catalog(tmp_path):
    opts = offline(tmp_path, model_aliases={"/models/llama": "meta-llama/Llama-3.1-8B-Instruct"})
    info, reason = resolve_model("/models/llama", opts)
    assert reason is None and info.name == "meta-llama/Llama-3.1-8B-Instruct"
    assert info.source.startswith("config alias (/models/llama -> meta-llama/Llama-3.1-8B-Instruct)")


def test_alias_to_config_json_path(tmp_path):
    write_model_dir(tmp_path / "cfgs" / "tiny", with_weights=False)
    opts = offline(tmp_path, model_aliases={"served-name": "cfgs/tiny/config.json"})
    info, reason = resolve_model("served-name", opts)
    assert reason is None and info.hidden_size == 256


def test_alias_that_does_not_resolve_says_so(tmp_path):
    opts = offline(tmp_path, model_aliases={"x": "acme/not-in-catalog"})
    info, reason = resolve_model("x", opts)
    assert info is None and "model-aliases maps 'x'" in reason


def test_missing_local_path_asks_for_an_alias(tmp_path):
    info, reason = resolve_model("/models/llama", offline(tmp_path))
    assert info is None
    assert "model-aliases: {'/models/llama': 'org/model'}" in reason and ".vramlint.yaml" in reason


def test_storage_urls_ask_for_an_alias(tmp_path):
    for url in ("s3://bucket/models/llama", "pvc://model-pvc/RedHatAI/x", "gs://b/m"):
        info, reason = resolve_model(url, offline(tmp_path))
        assert info is None and "model-aliases" in reason and "storage URL" in reason


def test_hf_prefix_and_revision_forms():
    assert split_model_name("hf://Qwen/Qwen3-8B") == ("Qwen/Qwen3-8B", None)
    assert split_model_name("Qwen/Qwen3-8B@abc123") == ("Qwen/Qwen3-8B", "abc123")
    assert split_model_name("/models/llama") == ("/models/llama", None)


def test_hf_prefix_resolves_from_catalog(tmp_path):
    info, reason = resolve_model("hf://deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", offline(tmp_path))
    assert reason is None and info.num_kv_heads == 2 and info.source.startswith("catalog (https://huggingface.co/")


def test_catalog_lookup_is_case_insensitive_and_mirrors_inherit(tmp_path):
    info, _ = resolve_model("redhatai/meta-llama-3.1-8b-instruct-fp8", offline(tmp_path))
    assert info.name == "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8" and info.quantization == "compressed-tensors"
    assert info.quant_bits == 8


def test_unknown_model_offline_is_unresolved_with_fix(tmp_path):
    info, reason = resolve_model("acme/brand-new-model", offline(tmp_path))
    assert info is None and "model-aliases" in reason and "HF_TOKEN" in reason


def test_hf_cache_is_used_before_the_catalog(tmp_path):
    # The layout huggingface_hub writes: models--org--name/{refs/main, snapshots/<commit>/...}
    repo = tmp_path / "hf-cache" / "models--meta-llama--Llama-3.1-8B-Instruct"
    commit = "c" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(TINY_LLAMA))
    (snap / "model.safetensors").write_bytes(safetensors_bytes(tiny_llama_tensors()))
    info, reason = resolve_model("meta-llama/Llama-3.1-8B-Instruct", offline(tmp_path))
    assert reason is None and info.source.startswith("hf-cache: ") and info.num_layers == 2
    assert info.weight_bytes_source == "safetensors metadata"


def test_empty_model_name_is_explained(tmp_path):
    info, reason = resolve_model("", offline(tmp_path))
    assert info is None and "--model" in reason


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n
