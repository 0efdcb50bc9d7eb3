"""Gemma 4 E2B / E4B as vLLM 0.33 builds them (vllm/model_executor/models/gemma4.py, gemma4_mm.py; the audio tower
is transformers' Gemma4AudioModel), worked by hand for google/gemma-4-E4B-it (text hidden 2560, 42 layers of which
the last 18 share an earlier layer's KV cache, 8 heads, 2 KV heads, head size 256 and 512 in the 7 full-attention
layers, MLP 10240, vocabulary 262144, per-layer embeddings 256 wide over a 262144 vocabulary; audio tower 1024 wide,
12 conformer layers, 8 heads, conv kernel 5, subsampling channels 128 / 32, output 1536):

* per-layer embeddings: embed_tokens_per_layer 262144 x (42 x 256) = 2,818,572,288; per_layer_model_projection
  2560 x 10752 = 27,525,120; per_layer_input_gate + per_layer_projection 2 x 2560 x 256 = 1,310,720 per layer;
* KV-shared layers: 15 sliding ones without k/v (2 x 2560 x 2 x 256 = 2,621,440 each) and 3 full ones without
  k/v (2 x 2560 x 2 x 512 = 5,242,880 each);
* audio tower: subsampling 9 x 128 + 128 + 9 x 128 x 32 + 32 + 32 x 32 x 1024 = 1,086,752; per layer
  24 x 1024^2 + 5 x 1024 + 9 x 1024 + 128 = 25,180,288 (x 12 = 302,163,456); output_proj 1024 x 1536 + 1536;
  embed_audio 1536 x 2560: 308,756,768 in all;
* KV cache per token: 4 full-attention layers x 2 x 2 x 512 x 2 B + 20 sliding ones x 2 x 2 x 256 x 2 B = 57,344 B.
"""

from __future__ import annotations

import copy

from vramlint import gpus, versions
from vramlint.budget import compute_budget
from vramlint.budget.kv_layout import layer_kinds
from vramlint.budget.multimodal import audio_tower_skipped, encoder_profile
from vramlint.model import ResolveOptions
from vramlint.modelconfig import facts_from_config, model_info_from_config, unmodelled_architecture
from vramlint.models import resolve_model
from vramlint.weights import (
    audio_tower_parameters,
    count_parameters,
    pipeline_stage_facts,
    weight_bytes_per_rank,
)

V = versions.parse_version
_TYPES = (["sliding_attention"] * 5 + ["full_attention"]) * 7
E4B = {
    "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "dtype": "bfloat16",
    "tie_word_embeddings": True,
    "text_config": {"model_type": "gemma4_text", "hidden_size": 2560, "intermediate_size": 10240,
                    "num_hidden_layers": 42, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256,
                    "global_head_dim": 512, "num_global_key_value_heads": None, "attention_k_eq_v": False,
                    "vocab_size": 262144, "vocab_size_per_layer_input": 262144, "hidden_size_per_layer_input": 256,
                    "num_kv_shared_layers": 18, "use_double_wide_mlp": False, "sliding_window": 512,
                    "layer_types": _TYPES, "max_position_embeddings": 131072, "tie_word_embeddings": True},
    "audio_config": {"model_type": "gemma4_audio", "hidden_size": 1024, "num_hidden_layers": 12,
                     "num_attention_heads": 8, "conv_kernel_size": 5, "subsampling_conv_channels": [128, 32],
                     "output_proj_dims": 1536},
}


def test_the_catalog_entry_counts_per_layer_embeddings_shared_layers_and_the_audio_tower():
    info, why = resolve_model("google/gemma-4-E4B-it", ResolveOptions(allow_network=False))
    assert why is None and info.source.startswith("catalog (")
    facts = info.extra["facts"]
    assert audio_tower_parameters(facts) == 308_756_768
    assert count_parameters(facts).total == 7_941_100_874
    # against the same model sized as if it had neither (vramlint before): the differences, worked by hand
    plain = {k: v for k, v in facts.items() if k not in ("ple", "kv_shared", "audio")}
    gained = count_parameters(facts).total - count_parameters(plain).total
    ple = 2_818_572_288 + 27_525_120 + 256 + 42 * (1_310_720 + 2560)
    shared = 15 * (2_621_440 + 256) + 3 * (5_242_880 + 512)
    assert gained == ple - shared + 308_756_768


def test_only_the_layers_with_their_own_cache_hold_kv():
    info = model_info_from_config(E4B, "google/gemma-4-E4B-it", "test")
    kinds = layer_kinds(info)
    assert kinds[24:] == ["kv_shared"] * 18
    assert kinds[:24].count("full_attention") == 4 and kinds[:24].count("sliding_attention") == 20
    budget = compute_budget(info, gpus.lookup("L4"), {"max_model_len": 32768}, {}, "0.33.0", 1)
    assert budget.kv_bytes_per_token == 57_344


def test_an_audio_limit_of_zero_leaves_the_audio_tower_unbuilt_and_audio_alone_is_not_profiled():
    info = model_info_from_config(E4B, "google/gemma-4-E4B-it", "test")
    facts = info.extra["facts"]
    gpu = gpus.lookup("L4")
    full = compute_budget(info, gpu, {"max_model_len": 32768}, {}, "0.33.0", 1)
    no_audio = compute_budget(info, gpu, {"max_model_len": 32768, "limit_mm_per_prompt": {"audio": 0}}, {},
                              "0.33.0", 1)
    assert abs((full.weights_gib - no_audio.weights_gib) - 308_756_768 * 2 / 2**30) < 0.011
    assert "audio tower 0.58 GiB (not built: --limit-mm-per-prompt sets audio to 0)" in no_audio.sources["weights"]
    assert "audio tower" not in full.sources["weights"]
    assert audio_tower_skipped(facts, {"language_model_only": True}, V("0.33.0")) == "--language-model-only"
    # with videos off the dummy item may be an audio clip (the processor's audio_seq_length): not estimated
    facts = resolve_model("google/gemma-4-E4B-it", ResolveOptions(allow_network=False))[0].extra["facts"]
    enc, why = encoder_profile(facts, {"limit_mm_per_prompt": {"video": 0}}, V("0.33.0"), 256, 2048, 32768, 2, 1)
    assert enc is None and "audio" in why
    # videos on: the 32-frame video (2,496 tokens) outweighs any clip, as before
    enc, why = encoder_profile(facts, {}, V("0.33.0"), 256, 2048, 32768, 2, 1)
    assert why is None and enc.modality == "video"


def test_double_wide_shared_layers_pipeline_stages_and_gemma3n():
    # E2B's use_double_wide_mlp: the KV-shared layers' MLP is 2 x intermediate_size
    e2b = copy.deepcopy(E4B)
    e2b["text_config"].update(use_double_wide_mlp=True)
    narrow, wide = count_parameters(facts_from_config(E4B)), count_parameters(facts_from_config(e2b))
    assert wide.linear["mlp"] - narrow.linear["mlp"] == 18 * 3 * 2560 * 10240
    # with pipeline parallel the per-layer embedding table is the first stage's, the shared layers the last's
    facts = facts_from_config(E4B)
    first, last = pipeline_stage_facts(facts, 0, 21), pipeline_stage_facts(facts, 21, 42)
    assert (first.get("kv_shared"), last.get("kv_shared")) == (0, 18)
    assert count_parameters(first).embed - count_parameters(last).embed == 262144 * 42 * 256
    # Gemma 3n (AltUp, LAuReL besides per-layer embeddings) stays unmodelled
    gemma3n = {"architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n",
               "text_config": {"model_type": "gemma3n_text", "hidden_size_per_layer_input": 256,
                               "num_kv_shared_layers": 15}}
    assert "per-layer embeddings" in unmodelled_architecture(gemma3n)
    assert unmodelled_architecture(E4B) is None




def test_tensor_parallel_replicates_only_the_kv_projections_that_exist():
    # TP 4 over 2 KV heads: vLLM gives every rank one whole KV head's k and v. Had the 18 KV-shared layers (15
    # sliding, 3 full) their own k/v, a rank would hold one head of each: 2560 x (15 x 256 + 3 x 512) x 2 (k and v)
    # = 27,525,120 parameters, 55,050,240 B in bf16, and their k_norm (5,376 parameters, 10,752 B)
    facts = facts_from_config(E4B)
    with_own_kv = dict(facts, kv_shared=0)
    assert (weight_bytes_per_rank(with_own_kv, tp=4, include_buffers=False)
            - weight_bytes_per_rank(facts, tp=4, include_buffers=False)) == 55_050_240 + 10_752
