"""Generated config.json and safetensors headers, as a hostile Hub or repository could write them: reading them
gives a model or a reason, never an exception, and a reason names what was wrong."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_models_resolve_hub import TINY_LLAMA
from vramlint.model import ResolveOptions
from vramlint.modelconfig import NUMBER_LIMITS, config_problem
from vramlint.models import _info_from_answer, resolve_model, tensors_from_header

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                      st.dictionaries(st.text(max_size=10), inner, max_size=5)),
                    max_leaves=30)
KEYS = sorted(NUMBER_LIMITS) + ["architectures", "model_type", "layer_types", "rope_scaling", "quantization_config",
                                "text_config", "vision_config", "torch_dtype", "mlp_only_layers", "no_rope_layers",
                                "hybrid_override_pattern", "attn_config", "sliding_window", "tie_word_embeddings"]


CORE = ["num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "vocab_size",
        "intermediate_size", "max_position_embeddings", "head_dim"]
HOSTILE = st.one_of(st.integers(min_value=-(10**30), max_value=10**30), st.floats(allow_nan=True),
                    st.text(max_size=8), st.booleans(), st.lists(st.integers(), max_size=2))


@st.composite
def hostile_configs(draw):
    cfg = dict(TINY_LLAMA)
    for key in draw(st.lists(st.sampled_from(CORE), max_size=3)):
        cfg[key] = draw(HOSTILE)
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4)):
        cfg[key] = draw(JSON)
    if draw(st.booleans()):
        cfg["text_config"] = {k: draw(JSON) for k in draw(st.lists(st.sampled_from(KEYS), max_size=4))}
    return cfg


SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_configs())
def test_a_hostile_config_gives_a_model_or_a_reason(cfg):
    info, reason = _info_from_answer(cfg, None, None, "acme/x", "test", "the config")
    assert (info is None) != (reason is None)
    if info is not None:
        # what the budget computes with is numbers of a real model's size
        for value, key in ((info.num_layers, "num_hidden_layers"), (info.hidden_size, "hidden_size"),
                           (info.num_attention_heads, "num_attention_heads"), (info.vocab_size, "vocab_size"),
                           (info.head_dim, "head_dim")):
            assert isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= NUMBER_LIMITS[key]
        assert isinstance(info.weight_bytes, int) and 0 <= info.weight_bytes < 2**80
        assert math.isfinite(info.max_position_embeddings)
    else:
        assert "not usable" in reason and "model-aliases" in reason


@SETTINGS
@given(st.dictionaries(st.sampled_from(sorted(NUMBER_LIMITS)), SCALARS, min_size=1, max_size=3))
def test_a_refused_number_is_named(fields):
    cfg = {**TINY_LLAMA, **fields}
    problem = config_problem(cfg)
    if problem is not None:
        assert any(key in problem for key in fields), problem


@SETTINGS
@given(JSON)
def test_any_json_as_a_safetensors_header_gives_tensors_or_a_reason(header):
    tensors, problem = tensors_from_header(header)
    assert (tensors is None) != (problem is None)
    for dtype, shape in (tensors or {}).values():
        assert isinstance(dtype, str) and all(isinstance(d, int) and not isinstance(d, bool) for d in shape)


@settings(max_examples=15, deadline=None)
@given(hostile_configs())
def test_a_hostile_local_config_json_in_the_repository(tmp_path_factory, cfg):
    folder = tmp_path_factory.mktemp("model")
    (folder / "config.json").write_text(json.dumps(cfg))
    info, reason = resolve_model(str(folder), ResolveOptions(allow_network=False, base_dir=str(folder)))
    assert (info is None) != (reason is None)
