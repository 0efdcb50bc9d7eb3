"""vLLM 0.17+'s weight offloaders, worked from model_executor/offloader/ and config/offload.py (0.17.1 wheel):
``--cpu-offload-params`` narrows the UVA offloader to matching parameters, and the prefetch offloader
(``--offload-group-size``) moves whole layers but keeps a GPU buffer pool, which vLLM counts before the KV cache
only from 0.27 (total_consumed)."""

import pytest

from tests.test_budget_pipeline_parallel import LAYER
from tests.test_weights_counts import LLAMA31_8B
from vramlint import gpus, versions
from vramlint.budget import GiB, compute_budget
from vramlint.budget.rank_weights import offload_plan
from vramlint.model import ResolveOptions
from vramlint.modelconfig import facts_from_config
from vramlint.models import resolve_model
from vramlint.weights import offloaded_bytes, prefetch_offload_bytes

OFFLINE = ResolveOptions(allow_network=False)
MLP = 3 * 4096 * 14336 * 2  # one Llama-3.1-8B layer's gate_up_proj + down_proj in bf16
DOWN = 4096 * 14336 * 2


def _llama():
    info, _ = resolve_model("meta-llama/Llama-3.1-8B-Instruct", OFFLINE)
    return info


def test_cpu_offload_params_moves_only_the_parameters_a_segment_matches():
    facts = facts_from_config(LLAMA31_8B)
    moved, most = offloaded_bytes(facts, 100 * GiB, params={"mlp"})
    assert moved == most == pytest.approx(32 * MLP, rel=1e-4)  # parameter shares: the norms' split is approximate
    # segments match whole name parts: "gate_up" is not one ("gate_up_proj" is)
    assert offloaded_bytes(facts, 100 * GiB, params={"gate_up"}) == (0.0, 0.0)
    assert offloaded_bytes(facts, 100 * GiB, params={"gate_up_proj"})[0] == pytest.approx(32 * 2 * DOWN, rel=1e-4)


def test_cpu_offload_params_stops_at_the_limit_one_parameter_past_it():
    """A 1 GiB limit over the down_proj weights (112 MiB each): nine are 0.98 GiB, below the limit, so a tenth
    moves and passes it; then the offloader stops."""
    facts = facts_from_config(LLAMA31_8B)
    moved, most = offloaded_bytes(facts, 1 * GiB, params={"down_proj"})
    assert moved == pytest.approx(10 * DOWN, rel=1e-4)  # 9 x 112 MiB = 0.98 GiB is still below 1 GiB
    assert moved > GiB and most == pytest.approx(32 * DOWN, rel=1e-4)


def test_prefetch_offloader_moves_the_last_layers_of_each_group_and_keeps_a_buffer_pool():
    facts = facts_from_config(LLAMA31_8B)
    moved, pool, count = prefetch_offload_bytes(facts, group_size=4, num_in_group=1, prefetch_step=1)
    assert count == 8 and moved == pytest.approx(8 * LAYER * 2, abs=1024)
    assert pool == pytest.approx(LAYER * 2, abs=1024)
    moved, pool, count = prefetch_offload_bytes(facts, group_size=8, num_in_group=2, prefetch_step=2,
                                                params={"experts", "mlp"})
    assert count == 8 and moved == pytest.approx(8 * MLP, rel=1e-4) and pool == pytest.approx(2 * MLP, rel=1e-4)


def test_which_offloader_vllm_builds():
    new, old = versions.parse_version("0.17.1"), versions.parse_version("0.16.0")
    both = {"cpu_offload_gb": 4, "offload_group_size": 4, "cpu_offload_params": "mlp,self_attn"}
    assert offload_plan(both, new).backend == "prefetch"  # auto: the prefetch settings win
    uva = offload_plan({**both, "offload_backend": "uva"}, new)
    assert uva.backend == "uva" and uva.params == {"mlp", "self_attn"}
    assert offload_plan({"cpu_offload_gb": 4}, old).params == frozenset()
    assert offload_plan({"offload_group_size": 4}, old).backend is None  # no prefetch offloader before 0.17
    assert offload_plan({"cpu_offload_gb": 4, "offload_backend": "prefetch"}, new).backend is None  # refused


def test_the_buffer_pool_is_in_the_kv_sizing_from_0_27_only():
    args = {"max_model_len": 8192, "offload_group_size": 4}
    base = {"max_model_len": 8192}
    gpu = gpus.lookup("L4")
    for version, counted in (("0.17.1", False), ("0.27.1", True)):
        plain = compute_budget(_llama(), gpu, base, {}, version, 1)
        offloaded = compute_budget(_llama(), gpu, args, {}, version, 1)
        assert plain.weights_gib - offloaded.weights_gib == pytest.approx(8 * LAYER * 2 / GiB, abs=0.011)
        gained = offloaded.kv_cache_gib - plain.kv_cache_gib
        expected = (8 - counted) * LAYER * 2 / GiB
        assert gained == pytest.approx(expected, abs=0.02), version
        held = offloaded.runner_state_gib - plain.runner_state_gib  # what explain and the GPU requirement add
        assert held == pytest.approx(LAYER * 2 / GiB if counted else 0, abs=0.011), version
        said = any("buffer pool" in n and "before 0.27" in n for n in offloaded.notes)
        assert said is not counted
        assert "buffer pool" in offloaded.sources["offload_pool"]


def test_prefetch_settings_vllm_refuses_are_errors():
    gpu = gpus.lookup("L4")
    for args in ({"offload_backend": "prefetch"}, {"offload_group_size": 2, "offload_num_in_group": 3},
                 {"offload_group_size": 2, "offload_prefetch_step": 0}):
        codes = [e["code"] for e in compute_budget(_llama(), gpu, {"max_model_len": 8192, **args}, {},
                                                   "0.17.1", 1).errors]
        assert "offload-config-invalid" in codes, args
    fine = compute_budget(_llama(), gpu, {"max_model_len": 8192, "offload_group_size": 2, "offload_num_in_group": 2},
                          {}, "0.17.1", 1)
    assert "offload-config-invalid" not in [e["code"] for e in fine.errors]
