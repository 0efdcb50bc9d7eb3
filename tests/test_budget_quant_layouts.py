"""Weights as vLLM lays them out for a kernel backend or an online quantization, pinned on real start-up logs.

The catalog facts of the gpt-oss models go through the same code a resolved config.json goes through; the
logged figures are vLLM's "Model loading took X GiB" lines (public issues and a blog post quoted per test).
"""

import pytest

from vramlint import gpus
from vramlint.budget import GiB, compute_budget, mxfp4_backend
from vramlint.model import ResolveOptions
from vramlint.models import resolve_model
from vramlint.versions import parse_version

OFFLINE = ResolveOptions(allow_network=False)


def catalog_model(name):
    info, why = resolve_model(name, OFFLINE)
    assert info is not None, why
    return info


@pytest.mark.parametrize(
    "name, gpu, version, logged, backend",
    [
        # myoceane.fr blog, vLLM 0.19.0 on an 80 GB A100: "Model loading took 13.72 GiB memory"
        ("openai/gpt-oss-20b", "A100-80GB", "0.19.0", 13.72, "marlin"),
        # vllm#23278, 0.10.1 on an H100 (pip wheel, Marlin): "Model loading took 65.9651 GiB"
        ("openai/gpt-oss-120b", "H100", "0.10.1.1", 65.9651, "marlin"),
        # vllm#33155, 0.14.1 on one H100 (Triton backend): "Model loading took 64.38 GiB memory"
        ("openai/gpt-oss-120b", "H100", "0.14.1", 64.38, "triton"),
    ],
)
def test_mxfp4_weights_follow_the_moe_backend(name, gpu, version, logged, backend):
    spec = gpus.lookup(gpu)
    assert mxfp4_backend(spec, parse_version(version), {})[0] == backend
    b = compute_budget(catalog_model(name), spec, {}, {}, version, 1)
    assert abs(b.weights_gib - logged) / logged < 0.005
    assert backend in b.sources["weights"]


def test_mxfp4_marlin_pads_more_than_triton_and_env_forces_marlin():
    oss = catalog_model("openai/gpt-oss-120b")
    h100 = gpus.lookup("H100")
    triton = compute_budget(oss, h100, {}, {}, "0.14.1", 1)
    marlin = compute_budget(oss, h100, {}, {"VLLM_MXFP4_USE_MARLIN": "1"}, "0.14.1", 1)
    # Marlin pads the 2880-wide expert dimensions to 2944 / 3072: about 1.6 GiB more than Triton's layout.
    assert 1.4 < marlin.weights_gib - triton.weights_gib < 1.8


def test_gpt_oss_120b_on_one_h100_fails_as_logged():
    """vllm#23278 (0.10.1): "Available KV cache memory: -2.14 GiB", EngineCore failed to start; vllm#27508
    (~0.11.0, util 0.95, --max-num-batched-tokens 1024): "Available KV cache memory: 1.71 GiB" and the KV
    cache cannot hold the 131072-token default length."""
    oss = catalog_model("openai/gpt-oss-120b")
    h100 = gpus.lookup("H100")
    old = compute_budget(oss, h100, {}, {}, "0.10.1.1", 1)
    assert not old.starts and old.errors[0]["code"] == "no-cache-memory"
    assert abs(old.kv_cache_gib - (-2.14)) < 0.2
    tight = compute_budget(oss, h100, {"gpu_memory_utilization": 0.95, "max_num_batched_tokens": 1024}, {}, "0.11.0", 1)
    assert not tight.starts and tight.errors[0]["code"] == "kv-cache-below-max-model-len"
    assert abs(tight.kv_cache_gib - 1.71) / 1.71 < 0.10
