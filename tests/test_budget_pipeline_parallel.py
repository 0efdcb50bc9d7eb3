"""Pipeline parallel in the budget: each stage its own layers, weights, profile and KV cache, as vLLM builds them.

Numbers are worked from vLLM's code (``get_pp_indices``, the models' ``PPMissingLayer`` placement, the profile
run that samples on the last stage only, ``get_kv_cache_configs`` taking the smallest number of blocks).
"""

import pytest

from tests.test_weights_counts import LLAMA31_8B
from vramlint import gpus, versions
from vramlint.budget import GiB, compute_budget
from vramlint.budget.configuration import pp_partition, resolve_configuration
from vramlint.budget.loading import load_weights
from vramlint.budget.profile import profile_memory
from vramlint.model import ResolveOptions
from vramlint.modelconfig import facts_from_config
from vramlint.models import resolve_model
from vramlint.weights import weight_bytes_per_rank

OFFLINE = ResolveOptions(allow_network=False)
ROPE = 131072 * 128 * 2  # Llama-3.1's cos/sin cache, on every stage
LAYER = 4096 * 4096 * 2 + 4096 * 1024 * 2 + 3 * 4096 * 14336 + 2 * 4096  # q, o, k, v, gate/up/down, two norms
VOCAB = 128256 * 4096


def _key(version):
    return versions.parse_version(version)


@pytest.mark.parametrize("layers, pp, version, stages", [
    # vLLM PR #13839 (0.8): the remainder on the stages before the last, from the last but one backwards
    (61, 8, "0.8.5", [7, 7, 8, 8, 8, 8, 8, 7]),  # DeepSeek-V3 / R1
    (61, 4, "0.11.0", [15, 15, 16, 15]),
    (94, 4, "0.20.2", [23, 24, 24, 23]),  # Qwen3-235B-A22B
    (32, 2, "0.11.0", [16, 16]),
    (61, 8, "0.7.3", [7, 7, 7, 7, 7, 7, 7, 12]),  # up to 0.7: the remainder on the last stage
])
def test_layers_per_stage_follow_get_pp_indices(layers, pp, version, stages):
    assert pp_partition(layers, pp, _key(version), {}) == (stages, None)


def test_vllm_pp_layer_partition_is_honoured_and_checked():
    assert pp_partition(32, 2, _key("0.11.0"), {"VLLM_PP_LAYER_PARTITION": "10,22"}) == ([10, 22], None)
    partition, error = pp_partition(32, 2, _key("0.11.0"), {"VLLM_PP_LAYER_PARTITION": "10,20"})
    assert partition == [16, 16] and error["message"] == "sum(partitions)=30 does not match num_hidden_layers=32."
    _, error = pp_partition(32, 2, _key("0.11.0"), {"VLLM_PP_LAYER_PARTITION": "8,8,16"})
    assert error["message"] == "len(partitions)=3 does not match pp_size=2."


def test_each_stage_holds_its_layers_the_first_the_embedding_the_last_the_lm_head():
    """Llama-3.1-8B at PP 2: 16 decoder layers each; LlamaModel builds embed_tokens on the first stage and the
    final norm and ParallelLMHead on the last (PPMissingLayer elsewhere); every stage has the RoPE cache."""
    facts = facts_from_config(LLAMA31_8B)
    first = weight_bytes_per_rank(facts, stage=(0, 16, 2))
    last = weight_bytes_per_rank(facts, stage=(16, 32, 2))
    assert first == (16 * LAYER + VOCAB) * 2 + ROPE
    assert last == (16 * LAYER + VOCAB + 4096) * 2 + ROPE
    assert first + last == weight_bytes_per_rank(facts) + ROPE


def test_tied_embeddings_are_held_by_the_first_and_the_last_stage():
    """LlamaModel: `if get_pp_group().is_first_rank or (config.tie_word_embeddings and
    get_pp_group().is_last_rank): self.embed_tokens = VocabParallelEmbedding(...)`: with PP the tied matrix is
    built twice, once as the input embedding, once as the LM head."""
    facts = facts_from_config(dict(LLAMA31_8B, tie_word_embeddings=True))
    first = weight_bytes_per_rank(facts, stage=(0, 16, 2))
    last = weight_bytes_per_rank(facts, stage=(16, 32, 2))
    assert first == (16 * LAYER + VOCAB) * 2 + ROPE and last == (16 * LAYER + VOCAB + 4096) * 2 + ROPE
    assert first + last == weight_bytes_per_rank(facts) + ROPE + VOCAB * 2


def test_the_profile_samples_on_the_last_stage_only():
    model, _ = resolve_model("meta-llama/Llama-3.1-8B-Instruct", OFFLINE)
    cfg = resolve_configuration(model, gpus.lookup("L4"), {"pipeline_parallel_size": 2, "max_model_len": 8192}, {},
                                "0.11.0", 2)
    profile = profile_memory(cfg, load_weights(cfg))
    first, last = profile.activation
    # V1 0.11: 2048 tokens, 256 sequences; the last stage's sampler (256 x 128256 logits) dominates its forward;
    # it also holds the dummy hidden states and residual it profiles on (2 x 2048 x 4096 x 2 B)
    assert first < last and last == int(256 * 128256 * 38.2 + 2048 * 4096 * 2) + 2 * 2048 * 4096 * 2
    assert profile.kv_bytes[0] > profile.kv_bytes[1]


def test_stages_after_the_first_hold_the_dummy_intermediate_tensors():
    """GPUModelRunner._dummy_run (0.11.0 - 0.27.1 wheels): a stage that is not the first profiles on
    make_empty_intermediate_tensors(batch_size=max_num_tokens), one (tokens, hidden) model-dtype tensor per key,
    "hidden_states" and "residual" for Llama, "hidden_states" only for GPT-2-style models (the factory's keys);
    allocated in the profiler's window. P75 (Llama-3.1-8B, H100, PP 2, 0.19.0) logs a 2.01 GiB peak on the last
    stage against 1.89 at TP 1: the 0.125 GiB of these tensors."""
    model, _ = resolve_model("meta-llama/Llama-3.1-8B-Instruct", OFFLINE)
    # eager: the first stage's cold-compile benchmark of the embedding table would be its peak otherwise
    args = {"max_model_len": 8192, "max_num_batched_tokens": 8192, "enforce_eager": True}
    one = profile_memory(*_cfg_weights(model, args, "0.19.0"))
    four = profile_memory(*_cfg_weights(model, {**args, "pipeline_parallel_size": 4}, "0.19.0"))
    held = 2 * 8192 * 4096 * 2
    assert four.activation[-1] - one.activation[0] == held
    assert four.activation[1] == four.activation[2] == four.activation[0] + held  # middle stages: forward + held
    assert "0.12 GiB of dummy intermediate tensors" in four.sources["activation"]
    from vramlint.budget.profile import intermediate_tensor_bytes
    assert intermediate_tensor_bytes(model, 8192, 2) == held
    gpt2 = type(model)(**{**model.__dict__, "model_type": "gpt2"})
    assert intermediate_tensor_bytes(gpt2, 8192, 2) == held // 2


def _cfg_weights(model, args, version):
    cfg = resolve_configuration(model, gpus.lookup("H100-SXM"), args, {}, version, 1)
    return cfg, load_weights(cfg)


def test_the_stage_with_the_fewest_blocks_decides():
    """Llama-3.1-8B at PP 2 on 0.11: each stage sizes the KV cache of its own 16 layers (all 8 KV heads, where TP
    2 splits them); the last stage holds the LM head and the final norm and samples, so it has the fewer
    blocks, and the scheduler gives both stages that number."""
    model, _ = resolve_model("meta-llama/Llama-3.1-8B-Instruct", OFFLINE)
    gpu = gpus.lookup("L4")
    pp2 = compute_budget(model, gpu, {"pipeline_parallel_size": 2, "max_model_len": 8192}, {}, "0.11.0", 2)
    tp2 = compute_budget(model, gpu, {"tensor_parallel_size": 2, "max_model_len": 8192}, {}, "0.11.0", 2)
    assert pp2.starts and pp2.kv_bytes_per_token == 2 * 8 * 128 * 2 * 16  # 16 layers, all 8 KV heads
    assert tp2.kv_bytes_per_token == 2 * 4 * 128 * 2 * 32  # 32 layers, 4 KV heads
    # the last stage (LM head, sampler) has less memory left: it decides
    assert "pipeline stage 2 of 2" in pp2.sources["kv_bytes_per_token"]
    assert pp2.sources["pipeline_parallel_size"].startswith("--pipeline-parallel-size: decoder layers per stage 16/16")
    blocks = [int(x) for x in pp2.sources["kv_bytes_per_token"].split("fewest blocks: ")[1].split(" ")[0].split("/")]
    assert pp2.num_gpu_blocks == min(blocks) == blocks[1]
    assert pp2.weights_gib == round(((16 * LAYER + VOCAB + 4096) * 2 + ROPE) / GiB, 2)


def test_a_stage_short_of_memory_refuses_to_start_even_if_the_others_fit():
    """V1 checks every worker's KV cache against its own layers (check_enough_kv_cache_memory per worker)."""
    model, _ = resolve_model("meta-llama/Llama-3.1-8B-Instruct", OFFLINE)
    b = compute_budget(model, gpus.lookup("T4"), {"pipeline_parallel_size": 2, "max_model_len": 131072,
                                                  "dtype": "half"}, {}, "0.11.0", 2)
    assert not b.starts and [e["code"] for e in b.errors] == ["kv-cache-below-max-model-len"]
    # one 131072-token request needs 16 layers x 131072 x 2 x 8 x 128 x 2 B = 8.00 GiB on a stage
    assert "(8.00 GiB KV cache is needed" in b.errors[0]["message"]


def test_a_layer_list_longer_than_the_decoder_layers_is_shared_out_by_stage():
    """Each stage sizes its share of the attention layers, never the whole model's list."""
    from vramlint.model import ModelInfo

    model = ModelInfo(name="test/odd", source="test facts", num_layers=4, hidden_size=1024, num_attention_heads=8,
                      num_kv_heads=8, head_dim=128, vocab_size=32000, intermediate_size=4096,
                      max_position_embeddings=4096, torch_dtype="bfloat16", weight_bytes=2 * GiB,
                      weight_bytes_source="test", layer_types=["full_attention"] * 8)
    b = compute_budget(model, gpus.lookup("L4"), {"pipeline_parallel_size": 2}, {}, "0.11.0", 2)
    assert b.kv_bytes_per_token == 2 * 8 * 128 * 2 * 4
