"""The hybrid KV cache manager under a KV connector, KV events and chunked local attention, release by release.

vLLM's ``VllmConfig.__post_init__`` turns the manager off for a ``--kv-transfer-config`` (always up to 0.21, from
0.22 only for a connector that does not subclass SupportsHMA), a ``--kv-events-config`` (up to 0.19) and Llama 4's
chunked local attention; with it off, ``unify_hybrid_kv_cache_specs`` sizes sliding-window layers for the full
length and refuses a model with Mamba / linear-attention state layers (0.9.2 - 0.26).
"""

import json

from vramlint import gpus
from vramlint.budget import GiB, compute_budget
from vramlint.model import ModelInfo
from vramlint.modelconfig import model_info_from_config

# Shaped like gpt-oss: 24 layers alternating a 128-token window and full attention, 8 KV heads x 64.
WINDOWED = dict(name="test/windowed-moe", source="test", num_layers=24, hidden_size=2880, num_attention_heads=64,
                num_kv_heads=8, head_dim=64, vocab_size=201088, intermediate_size=2880, max_position_embeddings=131072,
                torch_dtype="bfloat16", sliding_window=128, layer_types=["sliding_attention", "full_attention"] * 12,
                num_experts=32, num_experts_per_tok=4, weight_bytes=int(13 * GiB))

# Shaped like a Qwen3.5 text model: 32 layers, every fourth full attention, the rest gated delta net.
STATEFUL = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5_text", "num_hidden_layers": 32,
    "hidden_size": 4096, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256,
    "intermediate_size": 12288, "vocab_size": 248320, "max_position_embeddings": 262144, "torch_dtype": "bfloat16",
    "full_attention_interval": 4, "linear_num_key_heads": 16, "linear_key_head_dim": 128,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
}

KV = int(30 * GiB)
LMCACHE = {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}
NIXL = {"kv_connector": "NixlConnector", "kv_role": "kv_both"}


def windowed(args, version, env=None):
    return compute_budget(ModelInfo(**WINDOWED), gpus.lookup("H100"), dict({"kv_cache_memory_bytes": KV}, **args),
                          env or {}, version, 1)


def test_a_connector_sizes_window_layers_for_the_full_length():
    """With LMCache's connector the window layers hold the full length, as with --disable-hybrid-kv-cache-manager."""
    for version in ("0.10.0", "0.19.0", "0.27.1"):
        plain = windowed({}, version)
        flat = windowed({"disable_hybrid_kv_cache_manager": True}, version)
        connected = windowed({"kv_transfer_config": LMCACHE}, version)
        assert connected.max_concurrency == flat.max_concurrency < plain.max_concurrency / 1.5, version
        assert "LMCacheConnectorV1" in connected.sources["hybrid_kv_cache_manager"]
        assert any("every layer is sized for the full length" in n for n in connected.notes)
    # the JSON text a command line gives is read as the dict
    text = windowed({"kv_transfer_config": json.dumps(LMCACHE)}, "0.19.0")
    assert text.max_concurrency == windowed({"kv_transfer_config": LMCACHE}, "0.19.0").max_concurrency


def test_hma_connectors_keep_it_from_0_22():
    """NIXL subclasses SupportsHMA; vLLM consults that from 0.22: before, any connector turned the manager off."""
    assert windowed({"kv_transfer_config": NIXL}, "0.21.0").max_concurrency == \
        windowed({"disable_hybrid_kv_cache_manager": True}, "0.21.0").max_concurrency
    assert windowed({"kv_transfer_config": NIXL}, "0.22.0").max_concurrency == windowed({}, "0.22.0").max_concurrency
    multi = {"kv_connector": "MultiConnector", "kv_role": "kv_both",
             "kv_connector_extra_config": {"connectors": [NIXL, LMCACHE]}}
    assert windowed({"kv_transfer_config": multi}, "0.27.1").max_concurrency < windowed({}, "0.27.1").max_concurrency
    only_hma = dict(multi, kv_connector_extra_config={"connectors": [NIXL, {"kv_connector": "OffloadingConnector"}]})
    assert windowed({"kv_transfer_config": only_hma}, "0.27.1").max_concurrency == windowed({}, "0.27.1").max_concurrency


def test_offloading_size_makes_a_connector():
    """--kv-offloading-size builds the connector: native (OffloadingConnector, SupportsHMA from 0.22), lmcache."""
    native = windowed({"kv_offloading_size": 8}, "0.19.0")
    assert "OffloadingConnector" in native.sources["hybrid_kv_cache_manager"]
    assert windowed({"kv_offloading_size": 8}, "0.27.1").max_concurrency == windowed({}, "0.27.1").max_concurrency
    lm = windowed({"kv_offloading_size": 8, "kv_offloading_backend": "lmcache"}, "0.27.1")
    assert "LMCacheMPConnector" in lm.sources["hybrid_kv_cache_manager"]
    assert windowed({"kv_offloading_size": 8}, "0.11.0").max_concurrency == windowed({}, "0.11.0").max_concurrency


def test_explicit_enable_keeps_it_from_0_13_and_kv_events_up_to_0_19():
    """--no-disable-hybrid-kv-cache-manager keeps the manager for a connector from 0.13 (three-state flag); KV events
    turn it off whatever the user says up to 0.19, and vLLM refuses the explicit request then."""
    keep = windowed({"kv_transfer_config": LMCACHE, "disable_hybrid_kv_cache_manager": False}, "0.19.0")
    assert keep.starts and keep.max_concurrency == windowed({}, "0.19.0").max_concurrency
    old = windowed({"kv_transfer_config": LMCACHE, "disable_hybrid_kv_cache_manager": False}, "0.12.0")
    assert old.max_concurrency < windowed({}, "0.12.0").max_concurrency  # a plain bool before 0.13
    events = {"enable_kv_cache_events": True, "publisher": "zmq"}
    assert windowed({"kv_events_config": events}, "0.19.0").max_concurrency < windowed({}, "0.19.0").max_concurrency
    assert windowed({"kv_events_config": events}, "0.20.0").max_concurrency == windowed({}, "0.20.0").max_concurrency
    refused = windowed({"kv_events_config": events, "disable_hybrid_kv_cache_manager": False}, "0.19.0")
    assert not refused.starts
    assert [e["code"] for e in refused.errors] == ["hybrid-kv-manager-unsupported"]
    assert refused.errors[0]["message"].startswith("Hybrid KV cache manager was explicitly enabled but is not supported")


def test_chunked_local_attention_by_release():
    """Chunked local attention turns the manager off by default from 0.10.1 (0.10.0: only with an EAGLE draft)."""
    chunked = dict(WINDOWED, name="test/chunked", sliding_window=None, attention_chunk_size=8192,
                   layer_types=["chunked_attention", "chunked_attention", "chunked_attention", "full_attention"] * 6)
    gpu = gpus.lookup("H100")

    def run(version, env=None):
        return compute_budget(ModelInfo(**chunked), gpu, {"kv_cache_memory_bytes": KV}, env or {}, version, 1)

    assert run("0.10.0").max_concurrency > run("0.10.1").max_concurrency * 1.5
    assert "chunked local attention" in run("0.10.1").sources["hybrid_kv_cache_manager"]
    allowed = run("0.19.0", {"VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE": "1"})
    assert allowed.max_concurrency > run("0.19.0").max_concurrency * 1.5
    assert "hybrid_kv_cache_manager" not in allowed.sources


def test_state_layers_refuse_a_connector_up_to_0_26():
    """A gated-delta-net model with LMCache's connector: vLLM 0.19's unify_hybrid_kv_cache_specs raises; from 0.27
    it only warns that such models fail without the manager (a note)."""
    model = model_info_from_config(STATEFUL, "test/stateful", "test config")
    gpu = gpus.lookup("H100")
    args = {"kv_transfer_config": LMCACHE, "max_model_len": 32768}
    b = compute_budget(model, gpu, args, {}, "0.19.0", 1)
    assert not b.starts
    assert b.errors[0]["code"] == "hybrid-kv-manager-required"
    assert b.errors[0]["message"].startswith("Hybrid KV cache manager is disabled but failed to convert the KV cache")
    assert compute_budget(model, gpu, {"max_model_len": 32768}, {}, "0.19.0", 1).starts
    late = compute_budget(model, gpu, args, {}, "0.27.1", 1)
    assert all(e["code"] != "hybrid-kv-manager-required" for e in late.errors)
    assert any("fail at start-up without it" in n for n in late.notes)
