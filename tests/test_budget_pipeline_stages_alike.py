"""Pipeline stages alike in what the budget reads are computed once (hostile round 19: `--pipeline-parallel-size
4096` planned every stage of every GPU of the catalog, 270,000 plans and 467 MB for one server).

Alike means: the same layer count, the same first / last role and, for a model whose layers differ by position
(Gemma 3's sliding / full pattern, DeepSeek-V3's dense first layers), the same layers. Each test checks the
shared results against the stage computed on its own.
"""

import pytest

from vramlint import gpus
from vramlint.budget import common, compute_budget, kv_cache
from vramlint.budget import loading as loading_module
from vramlint.budget.configuration import resolve_configuration
from vramlint.budget.kv_layout import layer_kinds
from vramlint.budget.loading import load_weights
from vramlint.budget.profile import profile_memory
from vramlint.budget.rank_weights import weights_per_rank
from vramlint.model import ResolveOptions
from vramlint.models import resolve_model

OFFLINE = ResolveOptions(allow_network=False)


def _counting(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def test_4096_stages_of_a_uniform_model_are_a_few_plans(monkeypatch):
    model, _ = resolve_model("Qwen/Qwen2.5-1.5B-Instruct", OFFLINE)
    gpu, args = gpus.lookup("H100-SXM"), {"pipeline_parallel_size": 4096}
    cfg = resolve_configuration(model, gpu, args, {}, "0.11.0", 4096)
    weights = load_weights(cfg)
    profile = profile_memory(cfg, weights)
    # 28 layers over 4096 stages: mostly empty stages; the stages differ in layers, weights and memory left in
    # only a few ways
    distinct = set(zip(cfg.pp_partition, weights.per_stage, profile.kv_bytes, strict=True))
    assert len(distinct) < 10
    plans = _counting(monkeypatch, kv_cache, "_plan_stage")
    loads = _counting(monkeypatch, loading_module, "weights_per_rank")
    budget = compute_budget(model, gpu, args, {}, "0.11.0", 4096)
    assert len(plans) == len(distinct)
    assert len(loads) <= len(distinct)
    assert "0 x 4,067" in budget.sources["pipeline_parallel_size"]
    assert len(budget.sources["kv_bytes_per_token"]) < 400


def test_stages_of_different_layers_are_not_shared_gemma3_pattern():
    """Gemma 3 27B (62 layers, five sliding then one full) at PP 31: two layers a stage, "SS", "SF", "FS"..."""
    model, _ = resolve_model("google/gemma-3-27b-it", OFFLINE)
    cfg = resolve_configuration(model, gpus.lookup("H100-SXM"), {"pipeline_parallel_size": 31}, {}, "0.11.0", 31)
    weights = load_weights(cfg)
    profile = profile_memory(cfg, weights)
    kv = kv_cache.plan_kv_cache(cfg, weights, profile)
    kinds = layer_kinds(model)
    start = 0
    seen = set()
    for index, layers in enumerate(cfg.pp_partition):
        alone = kv_cache._plan_stage(cfg, weights, profile.kv_bytes[index], kinds[start:start + layers], start)
        request = alone.per_request(cfg.max_model_len)
        assert (kv.stages[index].per_request(cfg.max_model_len), kv.stages[index].num_blocks) == \
            (request, alone.num_blocks)
        seen.add(request)
        start += layers
    assert len(seen) > 1  # the pattern makes stages of two layers differ


@pytest.mark.parametrize("pp", [61, 8])
def test_stages_of_different_layers_are_not_shared_deepseek_dense_layers(pp):
    """DeepSeek-V3 (61 layers, the first three dense): at PP 61 stages 1 and 2 are one dense layer, stage 3 one
    MoE layer, each neither first nor last: their weights differ, as computed alone."""
    model, _ = resolve_model("deepseek-ai/DeepSeek-V3", OFFLINE)
    cfg = resolve_configuration(model, gpus.lookup("H200"), {"pipeline_parallel_size": pp}, {}, "0.11.0", pp)
    weights = load_weights(cfg)
    start = 0
    for index, layers in enumerate(cfg.pp_partition):
        alone, _ = weights_per_rank(model, cfg.tp, cfg.pp, cfg.dtype, cfg.args, gpu=cfg.gpu, key=cfg.key,
                                    env=cfg.env, ep_size=cfg.ep_size, image=cfg.image,
                                    stage=(start, start + layers, cfg.pp))
        assert weights.per_stage[index] == alone
        start += layers
    if pp == 61:
        assert weights.per_stage[1] == weights.per_stage[2] < weights.per_stage[3] == weights.per_stage[4]


def test_per_stage_text_folds_runs_only_past_eight_stages():
    assert common.per_stage_text(["7", "8", "8", "8", "8", "8", "8", "7"]) == "7/8/8/8/8/8/8/7"
    assert common.per_stage_text(["1"] + ["0"] * 4094 + ["1"]) == "1/0 x 4,094/1"
