"""EAGLE / EAGLE-3 / Medusa heads in the budget, as vLLM's ``EagleProposer`` / ``MedusaProposer`` load them.

Figures derived by hand (bf16, one GPU, target Llama-3.1-8B-Instruct: hidden 4096, 32 heads, 8 KV heads x 128,
inter 14336, vocab 128256):

* one Llama decoder layer of the head: q/o 2 x 4096 x 4096 + k/v 2 x 4096 x 1024 + MLP 3 x 4096 x 14336 +
  2 norms x 4096 = 218,112,000 parameters, plus the head's final norm 4096: 218,116,096 x 2 B = 436,232,192 B.
* EAGLE-3 (llama_eagle3.py): layer 0's qkv_proj takes 2 x hidden, 4096 x (32 + 2 x 8) x 128 = 25,165,824 more
  parameters, and a hidden_norm of 4096; fc 3 x 4096 -> 4096 = 50,331,648 parameters; its own LM head of the
  32,000-token draft vocabulary (32000 x 4096) and draft_id_to_target_id (32000 int64 = 256,000 B):
  436,232,192 + 50,331,648 + 8,192 + 100,663,296 + 262,144,000 + 256,000 = 849,635,328 B.
* EAGLE (llama_eagle.py): the layer without its input norm and no final norm (436,215,808 B) + fc 2 x 4096 ->
  4096 (67,108,864 B) = 503,324,672 B with the embedding shared; vLLM 0.8 keeps its own embedding, 128256 x
  4096 x 2 B = 1,050,673,152 B more.
* KV cache: one more layer, 2 x 8 x 128 x 2 B = 4,096 B per token.
* Medusa (medusa.py), 4 heads of one 4096 x 4096 layer and a 32000-token LM head each:
  4 x 4096 x 4096 x 2 B + 4 x 32000 x 4096 x 2 B = 134,217,728 + 1,048,576,000 = 1,182,793,728 B; no KV cache.
"""

from __future__ import annotations

import pytest

from vramlint import gpus
from vramlint.budget import GiB, compute_budget, speculative_draft_name
from vramlint.model import ResolveOptions
from vramlint.modelconfig import model_info_from_config
from vramlint.models import resolve_model

OFFLINE = ResolveOptions(allow_network=False)
TARGET = "meta-llama/Llama-3.1-8B-Instruct"
EAGLE3 = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
EAGLE3_BYTES = 849_635_328
EAGLE_BYTES = 503_324_672
EMBED_BYTES = 1_050_673_152
TARGET_KV = 131_072
HEAD_KV = 4_096
MEDUSA_BYTES = 1_182_793_728

# an EAGLE (1) head's config.json as the EAGLE authors ship them: a one-layer LlamaForCausalLM
EAGLE_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
                "num_hidden_layers": 1, "vocab_size": 128256, "max_position_embeddings": 8192,
                "torch_dtype": "float16", "rms_norm_eps": 1e-5}
MEDUSA_CONFIG = {"architectures": ["MedusaModel"], "model_type": "medusa", "hidden_size": 4096, "num_heads": 4,
                 "num_hidden_layers": 1, "vocab_size": 32000, "truncated_vocab_size": None}


def _model(name):
    info, why = resolve_model(name, OFFLINE)
    assert info is not None, why
    return info


_NONE = object()


def _budget(spec=_NONE, draft=None, version="0.11.0", env=None, **extra):
    args = {"max_model_len": 8192, **extra}
    if spec is not _NONE:
        args["speculative_config"] = spec
    return compute_budget(_model(TARGET), gpus.lookup("H100-SXM"), args, env or {}, version, 1, draft=draft)


def _eagle3_spec():
    return {"method": "eagle3", "model": EAGLE3, "num_speculative_tokens": 3}


def test_eagle3_head_weights_and_kv_layer():
    assert speculative_draft_name({"speculative_config": _eagle3_spec()}) == EAGLE3
    alone = _budget()
    b = _budget(_eagle3_spec(), draft=(_model(EAGLE3), None))
    assert abs(b.weights_gib - alone.weights_gib - EAGLE3_BYTES / GiB) <= 0.011
    assert alone.kv_bytes_per_token == TARGET_KV and b.kv_bytes_per_token == TARGET_KV + HEAD_KV
    assert "EAGLE-3 head" in b.sources["weights"] and "own LM head of 32000 tokens" in b.sources["weights"]
    assert EAGLE3 in b.sources["kv_bytes_per_token"]
    assert b.num_gpu_blocks < alone.num_gpu_blocks and b.starts
    assert not any("not counted" in n for n in b.notes)


def test_eagle3_blocks_with_a_fixed_kv_cache():
    pool = 10 * GiB
    b = _budget(_eagle3_spec(), draft=(_model(EAGLE3), None), kv_cache_memory_bytes=pool)
    assert b.num_gpu_blocks == pool // (16 * (TARGET_KV + HEAD_KV)) == 4964


def test_eagle3_method_inferred_from_the_head_config():
    # no "method": SpeculativeConfig infers it from the checkpoint (Eagle3 architecture / draft_vocab_size)
    spec = {"model": EAGLE3, "num_speculative_tokens": 3}
    assert speculative_draft_name({"speculative_config": spec}) == EAGLE3
    b = _budget(spec, draft=(_model(EAGLE3), None))
    assert b.sources["speculative"].startswith("eagle3:")


def test_eagle_head_embedding_kept_in_0_8_and_shared_later():
    head = model_info_from_config(EAGLE_CONFIG, "example/eagle-llama3.1-8b", "test config")
    spec = {"method": "eagle", "model": head.name, "num_speculative_tokens": 3}
    alone = _budget()
    later = _budget(spec, draft=(head, None), version="0.11.0")
    assert abs(later.weights_gib - alone.weights_gib - EAGLE_BYTES / GiB) <= 0.011
    assert later.kv_bytes_per_token == TARGET_KV + HEAD_KV
    old = _budget(spec, draft=(head, None), version="0.8.5", env={"VLLM_USE_V1": "1"})
    assert abs(old.weights_gib - alone.weights_gib - (EAGLE_BYTES + EMBED_BYTES) / GiB) <= 0.011
    assert "its own embedding" in old.sources["weights"]


def test_0_8_falls_back_to_v0_for_eagle_and_says_so():
    b = _budget(_eagle3_spec(), draft=(_model(EAGLE3), None), version="0.8.5")
    alone = _budget(version="0.8.5")
    assert (b.weights_gib, b.kv_bytes_per_token) == (alone.weights_gib, alone.kv_bytes_per_token)
    [note] = [n for n in b.notes if EAGLE3 in n]
    assert "falls back to the V0 engine" in note and "VLLM_USE_V1" in note


def test_from_0_14_a_distinct_embedding_is_said_once():
    b = _budget(_eagle3_spec(), draft=(_model(EAGLE3), None), version="0.19.0")
    notes = [n for n in b.notes if "distinct embed_tokens" in n]
    assert len(notes) == 1 and f"{EMBED_BYTES / GiB:.2f} GiB more" in notes[0]
    assert not [n for n in _budget(_eagle3_spec(), draft=(_model(EAGLE3), None)).notes if "distinct" in n]


def test_eagle_buffers_and_dummy_run_in_the_profile():
    # the sampler's peak (1024 sequences x 128256 vocab) exceeds the head's dummy run here, so the activation grows
    # by the proposer's buffers alone: 8192 tokens x 4096 x 2 B, one buffer in 0.9.2, two from 0.11
    for version, buffers in (("0.9.2", 8192 * 4096 * 2), ("0.11.0", 2 * 8192 * 4096 * 2)):
        alone = _budget(version=version)
        b = _budget(_eagle3_spec(), draft=(_model(EAGLE3), None), version=version)
        assert abs(b.activation_gib - alone.activation_gib - buffers / GiB) <= 0.011
        assert "EAGLE-3 head: buffers" in b.sources["activation"]


def test_medusa_heads_weights_no_kv():
    head = model_info_from_config(MEDUSA_CONFIG, "example/medusa-llama3.1-8b", "test config")
    assert head.extra["facts"]["medusa"]["heads"] == 4
    spec = {"method": "medusa", "model": head.name, "num_speculative_tokens": 4}
    assert speculative_draft_name({"speculative_config": spec}) == head.name
    alone = _budget()
    b = _budget(spec, draft=(head, None))
    assert abs(b.weights_gib - alone.weights_gib - MEDUSA_BYTES / GiB) <= 0.011
    assert b.kv_bytes_per_token == TARGET_KV and b.activation_gib == alone.activation_gib
    assert "Medusa heads" in b.sources["weights"]
    old = _budget(spec, draft=(head, None), version="0.9.1")
    assert old.weights_gib == _budget(version="0.9.1").weights_gib
    assert any("runs Medusa on the V0 engine" in n for n in old.notes)


def test_unreadable_speculative_config_is_said_once():
    alone = _budget()
    for value in ('{"method": "eagle3", "model": ', "${SPEC_CONFIG}", "[1, 2]", None):
        b = _budget(value)
        assert (b.weights_gib, b.kv_bytes_per_token) == (alone.weights_gib, alone.kv_bytes_per_token)
        notes = [n for n in b.notes if "--speculative-config" in n]
        assert len(notes) == 1 and "cannot read" in notes[0], value
        assert speculative_draft_name({"speculative_config": value}) is None


def test_ngram_and_suffix_load_nothing():
    alone = _budget(version="0.19.0")
    for spec in ({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 5},
                 {"method": "suffix", "num_speculative_tokens": 8}):
        assert speculative_draft_name({"speculative_config": spec}) is None
        b = _budget(spec, version="0.19.0")
        assert (b.weights_gib, b.kv_bytes_per_token, b.activation_gib) == \
            (alone.weights_gib, alone.kv_bytes_per_token, alone.activation_gib)


def test_load_weights_stage_counts_each_head_exactly():
    """Stage 2 alone (resolve_configuration -> load_weights): the head's bytes as derived in the module docstring."""
    from vramlint.budget.configuration import resolve_configuration
    from vramlint.budget.loading import load_weights

    eagle = model_info_from_config(EAGLE_CONFIG, "example/eagle", "test config")
    medusa = model_info_from_config(MEDUSA_CONFIG, "example/medusa", "test config")
    cases = (({"method": "eagle3", "model": EAGLE3}, _model(EAGLE3), "0.11.0", {}, EAGLE3_BYTES, HEAD_KV),
             ({"method": "eagle", "model": eagle.name}, eagle, "0.11.0", {}, EAGLE_BYTES, HEAD_KV),
             ({"method": "eagle", "model": eagle.name}, eagle, "0.8.5", {"VLLM_USE_V1": "1"},
              EAGLE_BYTES + EMBED_BYTES, HEAD_KV),
             ({"method": "medusa", "model": medusa.name}, medusa, "0.11.0", {}, MEDUSA_BYTES, None))
    for spec, head, version, env, expected, per_token in cases:
        cfg = resolve_configuration(_model(TARGET), gpus.lookup("H100-SXM"), {"speculative_config": spec}, env,
                                    version, 1)
        weights = load_weights(cfg, (head, None))
        assert weights.draft["weights"] == expected, (spec, version)
        assert weights.draft["per_token"] == per_token


def test_speculators_format_head_is_read():
    """A speculators-format EAGLE-3 checkpoint (vLLM ``SpeculatorsConfig``): the decoder layer's config nested in
    ``transformer_layer_config``, the method and the draft vocabulary at the top; the same bytes as the EAGLE
    authors' format."""
    layer = {k: v for k, v in EAGLE_CONFIG.items() if k != "architectures"}
    config = {"architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3", "draft_vocab_size": 32000,
              "transformer_layer_config": layer, "torch_dtype": "bfloat16"}
    head = model_info_from_config(config, "example/speculator-head", "test config")
    assert head.extra["facts"]["eagle"] == {"version": 3, "draft_vocab": 32000}
    spec = {"model": head.name, "num_speculative_tokens": 3}
    alone = _budget()
    b = _budget(spec, draft=(head, None))
    assert b.sources["speculative"].startswith("eagle3:")
    assert abs(b.weights_gib - alone.weights_gib - EAGLE3_BYTES / GiB) <= 0.011


# An EAGLE-3 head for openai/gpt-oss-20b (written here after the Llama-style heads such checkpoints ship): one
# full-attention layer with gpt-oss's own attention shape (8 KV heads x 64), so the same FullAttentionSpec as the
# model's 12 full-attention layers: 2 x 8 x 64 x 2 B = 2,048 B per token, a 16-token page of 32,768 B.
GPT_OSS_HEAD_CONFIG = {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 2880,
                       "intermediate_size": 17280, "num_attention_heads": 64, "num_key_value_heads": 8,
                       "head_dim": 64, "num_hidden_layers": 1, "vocab_size": 201088, "draft_vocab_size": 201088,
                       "max_position_embeddings": 131072, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-5}


@pytest.mark.parametrize("version, group_size, padding", [
    # 0.9.2 - 0.11.2: groups of the fewest layers of a spec, 12 -> 13 full = 2 groups (11 padding), 12 sliding = 1
    ("0.11.0", 12, "Add 11 padding layers, may waste at most 84.62% KV cache memory"),
    # 0.12 - 0.17 (13 < 1.25 x 12) and 0.18+ (< 1.5 x 12): groups of 13, one padding sliding layer
    ("0.12.0", 13, "Add 1 padding layers, may waste at most 8.33% KV cache memory"),
    ("0.20.0", 13, "Add 1 padding layers, may waste at most 8.33% KV cache memory"),
])
def test_gpt_oss_eagle3_layer_joins_the_full_attention_groups(version, group_size, padding):
    head = model_info_from_config(GPT_OSS_HEAD_CONFIG, "example/gpt-oss-20b-eagle3", "test config")
    spec = {"method": "eagle3", "model": "example/gpt-oss-20b-eagle3", "num_speculative_tokens": 3}
    pool = 10 * GiB
    args = {"max_model_len": 8192, "kv_cache_memory_bytes": pool}
    alone = compute_budget(_model("openai/gpt-oss-20b"), gpus.lookup("H100-SXM"), args, {}, version, 1)
    b = compute_budget(_model("openai/gpt-oss-20b"), gpus.lookup("H100-SXM"), {**args, "speculative_config": spec},
                       {}, version, 1, draft=(head, None))
    assert b.kv_bytes_per_token == alone.kv_bytes_per_token + 2048
    assert alone.num_gpu_blocks == pool // (32768 * 12)
    assert b.num_gpu_blocks == pool // (32768 * group_size)
    assert padding in b.notes and not any("padding" in n for n in alone.notes)
    assert not any("not counted" in n for n in b.notes)
