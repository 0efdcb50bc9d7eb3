"""vLLM 0.34's extensible KV cache: reserved from the profiling estimate, sized from the memory measured after
warmup (``measure_kv_cache_bytes``), on by default on CUDA and ROCm (``VllmConfig._resolve_extensible_kv_cache``),
where ``gpu_memory_utilization`` defaults to 1.0 (``CacheConfig.resolved_gpu_memory_utilization``). 0.33 and
earlier are sized as before."""

import json
import sys
from pathlib import Path

from vramlint import gpus, versions, vllm_args, vllm_modules
from vramlint.budget import GiB, compute_budget
from vramlint.model import Location, ModelInfo, Server
from vramlint.requirement import gpu_requirement

# Shaped like a Llama-3.1-8B: 32 layers, 8 KV heads x 128, a 128K vocabulary.
DENSE = dict(name="test/dense-8b", source="test", num_layers=32, hidden_size=4096, num_attention_heads=32,
             num_kv_heads=8, head_dim=128, vocab_size=128256, intermediate_size=14336, max_position_embeddings=131072,
             torch_dtype="bfloat16", weight_bytes=int(14.99 * GiB), weight_bytes_source="safetensors metadata")


def budget(args=None, version="0.34.0", gpu="H100", env=None, gpus_count=1):
    return compute_budget(ModelInfo(**DENSE), gpus.lookup(gpu), dict({"max_model_len": 8192}, **(args or {})),
                          env or {}, version, gpus_count)


def codes(b):
    return [e["code"] for e in b.errors]


def test_on_by_default_with_utilisation_one():
    b = budget()
    assert b.gpu_memory_utilization == 1.0 and b.measured_kv is not None
    assert "on by default" in b.sources["extensible_kv_cache"]
    old = budget(version="0.33.0")
    assert old.gpu_memory_utilization == 0.92 and old.measured_kv is None and "extensible_kv_cache" not in old.sources


def test_measured_size_follows_measure_kv_cache_bytes():
    """KV = total - uncounted - (weights + non-torch + graphs) - max(1 GiB, 0.75 x reserve) - reserve, where the
    reserve is the activation peak plus the CUDA-graph estimate."""
    b = budget()
    m = b.measured_kv
    assert abs(m["reserve"] - (b.activation_gib + b.cudagraph_gib)) < 0.01
    assert m["margin"] == round(max(1.0, 0.75 * m["reserve"]), 3) or abs(m["margin"] - max(1.0, 0.75 * m["reserve"])) < 0.01
    expected = b.total_gib - m["uncounted"] - m["resident"] - m["margin"] - m["reserve"]
    assert abs(b.kv_cache_gib - expected) < 0.02
    # the resident part is the weights, non-torch memory, the captured graphs and the V2 runner's penalty bins
    assert b.runner_state_gib > 0.4  # 1,024 sequences x the vocabulary, int32
    assert abs(m["resident"] - (b.weights_gib + b.non_torch_gib + b.cudagraph_gib + b.runner_state_gib)) < 0.02


def test_more_on_a_large_gpu_less_on_a_small_one():
    """0.33 keeps 8% of the GPU out; 0.34 a fixed margin and the reserve: more KV cache on an H100, less on a T4."""
    assert budget().kv_cache_gib > budget(version="0.33.0").kv_cache_gib + 3
    small = dict(DENSE, name="test/small-1b", num_layers=16, hidden_size=2048, intermediate_size=8192,
                 weight_bytes=int(2.3 * GiB), torch_dtype="float16")
    t4 = [compute_budget(ModelInfo(**small), gpus.lookup("T4"), {"max_model_len": 2048}, {}, v, 1) for v in
          ("0.33.0", "0.34.0")]
    assert t4[1].kv_cache_gib < t4[0].kv_cache_gib


def test_turned_off_is_0_33s_arithmetic():
    off = budget({"enable_extensible_kv_cache": False})
    assert off.gpu_memory_utilization == 0.92 and off.measured_kv is None
    assert off.kv_cache_gib == budget(version="0.33.0").kv_cache_gib
    assert off.sources["extensible_kv_cache"] == "off: --no-enable-extensible-kv-cache"


def test_what_turns_it_off_and_what_vllm_refuses():
    for args, why in (({"kv_cache_memory_bytes": int(20 * GiB)}, "kv_cache_memory_bytes overrides"),
                      ({"num_gpu_blocks_override": 1000}, "num_gpu_blocks_override overrides"),
                      ({"kv_offloading_size": 10, "kv_offloading_backend": "lmcache"}, "legacy CUDA IPC")):
        b = budget(args)
        assert b.measured_kv is None and why in b.sources["extensible_kv_cache"], args
        refused = budget(dict(args, enable_extensible_kv_cache=True))
        assert "extensible-kv-cache-unsupported" in codes(refused)
        assert any(e["message"].startswith("enable_extensible_kv_cache: ") and why in e["message"]
                   for e in refused.errors)
    pool = {"kv_connector": "MooncakeConnector", "kv_role": "kv_both",
            "kv_connector_extra_config": {"custom_mem_pool": True}}
    assert "custom_mem_pool" in budget({"kv_transfer_config": pool}).sources["extensible_kv_cache"]


def test_connectors_by_platform():
    nixl = {"kv_connector": "NixlConnector", "kv_role": "kv_both"}
    mooncake = {"kv_connector": "MooncakeConnector", "kv_role": "kv_both"}
    # NIXL on device buffers exports FABRIC handles: off without an IMEX channel unless asked for
    assert budget({"kv_transfer_config": nixl}).measured_kv is None
    assert budget({"kv_transfer_config": nixl, "enable_extensible_kv_cache": True}).measured_kv is not None
    assert budget({"kv_transfer_config": dict(nixl, kv_buffer_device="cpu")}).measured_kv is not None
    # a connector that registers the cache is fine on CUDA, not on ROCm
    assert budget({"kv_transfer_config": mooncake}).measured_kv is not None
    amd = budget({"kv_transfer_config": mooncake}, gpu="MI300X")
    assert amd.measured_kv is None and "on ROCm" in amd.sources["extensible_kv_cache"]


def test_rocm_margin_floor_is_three_gib():
    b = budget(gpu="MI300X")
    assert b.measured_kv["margin"] == 3.0


def test_given_utilisation_caps_and_warns():
    """An explicit value caps the budget; between 0.7 and 1.0, keeping 1 GiB or more out, vLLM warns."""
    capped = budget({"gpu_memory_utilization": 0.9})
    assert capped.gpu_memory_utilization == 0.9
    m = capped.measured_kv
    assert abs(capped.kv_cache_gib - (0.9 * capped.total_gib - m["resident"] - m["reserve"])) < 0.02
    assert capped.kv_cache_gib < budget().kv_cache_gib
    assert any(n.startswith("vLLM warns: gpu_memory_utilization=0.9 caps this instance") for n in capped.notes)
    assert not any("caps this instance" in n for n in budget({"gpu_memory_utilization": 0.5}).notes)
    assert not any("caps this instance" in n for n in budget().notes)
    # "None" is the parser's spelling of the default
    assert budget({"gpu_memory_utilization": "None"}).gpu_memory_utilization == 1.0


def test_full_utilisation_is_no_longer_refused():
    """request_memory: with the extensible cache the budget is only a cap (0.33: free memory below requested)."""
    assert "free-below-requested" in codes(budget({"gpu_memory_utilization": 1.0}, version="0.33.0"))
    assert budget({"gpu_memory_utilization": 1.0}).starts


def test_refusals_before_and_after_warmup_have_vllms_text():
    """The capacity reserved from the profiling estimate is checked first (get_kv_cache_configs), then the size
    measured after warmup (shrink_kv_cache_configs), each with its own hint (_more_kv_cache_memory_hint)."""
    too_long = budget({"max_model_len": 131072, "max_num_seqs": 1}, gpu="L4")
    assert codes(too_long) == ["kv-cache-below-max-model-len"], too_long.errors
    text = too_long.errors[0]["message"]
    assert text.startswith("To serve at least one request with the model's max seq len (131072)")
    assert ("The extensible KV cache already takes all device memory left after the model and its activations; "
            "decrease `max_model_len` or `max_num_seqs`, or the model needs a device with more memory. Decreasing "
            "`max_model_len` also reduces what is needed.") in text
    # a length the capacity holds and the measured size does not: refused after warmup
    fits = budget({"max_model_len": 4096, "max_num_seqs": 1}, gpu="L4")
    per_token = fits.kv_bytes_per_token / GiB
    measured_tokens = int(fits.kv_cache_gib / per_token)
    capacity_tokens = int((fits.total_gib - fits.weights_gib - fits.non_torch_gib - fits.activation_gib
                           - fits.cudagraph_gib) / per_token)
    assert capacity_tokens > measured_tokens + 2048
    between = budget({"max_model_len": measured_tokens + 1024, "max_num_seqs": 1}, gpu="L4")
    assert codes(between) == ["kv-cache-below-max-model-len"], between.errors
    assert ("its activations, CUDA graphs and warmup; decrease `max_model_len` or `max_num_seqs`, or the model needs a "
            "device with more memory. CUDA graphs take less with fewer or smaller capture sizes in the compilation "
            "config.") in between.errors[0]["message"]
    assert budget({"max_model_len": measured_tokens - 1024, "max_num_seqs": 1}, gpu="L4").starts
    capped = budget({"max_model_len": 131072, "max_num_seqs": 1, "gpu_memory_utilization": 0.8}, gpu="L4")
    assert "within `gpu_memory_utilization`=0.8; increase it (with the extensible KV cache it defaults to 1.0)" in \
        capped.errors[0]["message"]
    # without the extensible cache, 0.34's hint is the estimate-based one
    off = budget({"max_model_len": 131072, "max_num_seqs": 1, "enable_extensible_kv_cache": False}, gpu="L4")
    assert "Try increasing `gpu_memory_utilization` when initializing the engine (this flag also" in \
        off.errors[0]["message"]


def test_gpu_requirement_counts_margin_and_reserve():
    """The smallest GPU solved for the measured condition: a GPU of that total starts, a smaller one does not."""
    server = Server(file="x.yaml", location=Location(file="x.yaml", line=1), source_format="kubernetes",
                    image="vllm/vllm-openai:v0.34.0", model=DENSE["name"], args={"max_model_len": 8192})
    req = gpu_requirement(ModelInfo(**DENSE), server, "0.34.0", 1)
    old = gpu_requirement(ModelInfo(**DENSE), server, "0.33.0", 1)
    assert req is not None and old is not None and req.min_total_gib is not None
    m = req.reference.measured_kv
    assert req.min_total_gib >= m["uncounted"] + m["resident"] + m["margin"] + m["reserve"]
    assert req.min_total_gib != old.min_total_gib


def test_latest_is_0_34_and_its_tables():
    assert versions.DEFAULT_VERSION == "0.34.0"
    assert vllm_args.versions()[-1] == "0.34.0" and vllm_args.table_version(None)[0] == "0.34.0"
    new = vllm_args._index("0.34.0")
    assert "--enable-extensible-kv-cache" in new and "--enable-extensible-kv-cache" not in vllm_args._index("0.33.0")
    assert new["--gpu-memory-utilization"].optional and not vllm_args._index("0.33.0")["--gpu-memory-utilization"].optional
    table = json.loads((Path(vllm_modules.__file__).parent / "data" / "vllm_modules.json").read_text())
    assert table["versions"][-1] == "0.34.0"


def test_append_equals_a_full_build():
    """tools/gen_vllm_args.py --append: a table of one release with the next appended is the two-release build."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    try:
        import gen_vllm_args as gen
    finally:
        sys.path.pop(0)
    a = {"x": {"dest": "x", "flags": ["--x"], "type": "int"}, "y": {"dest": "y", "flags": ["--y"], "type": "str"}}
    b = {"x": {"dest": "x", "flags": ["--x"], "type": "int", "optional": True},
         "y": {"dest": "y", "flags": ["--y"], "type": "str"}, "z": {"dest": "z", "flags": ["--z"], "type": "str"}}
    c = {"y": {"dest": "y", "flags": ["--y"], "type": "str"}, "z": {"dest": "z", "flags": ["--z"], "type": "str"},
         "x": {"dest": "x", "flags": ["--x"], "type": "int"}}
    feats = {v: {} for v in ("1.0", "1.1", "1.2")}
    empty = {"versions": [], "features": {}, "args": []}
    whole = gen._merge(empty, {"1.0": a, "1.1": b, "1.2": c}, feats)
    stepwise = gen._merge(gen._merge(gen._merge(empty, {"1.0": a}, {"1.0": {}}), {"1.1": b}, {"1.1": {}}),
                          {"1.2": c}, {"1.2": {}})
    assert stepwise == whole
    # a form that disappears and comes back is a new entry, not a range over the gap
    assert [e["v"] for e in whole["args"] if e["dest"] == "x" and "optional" not in e] == [[0, 0], [2, 2]]
