"""Speculative decoding in the budget: a separate draft model counted as vLLM loads it, the rest said in a note.

vLLM (V1 from 0.15, ``DraftModelProposer``; V0 up to 0.9.2, ``SpecDecodeWorker``) loads the draft model whole on
the same GPUs, TP as the model's, before it measures memory, and gives its attention layers KV cache in the same
pool. The figures below are derived by hand from the catalog facts:

* Llama-3.2-1B (16 layers, hidden 2048, 32 heads, 8 KV heads x 64, inter 8192, vocab 128256, tied embeddings,
  bf16): per TP-4 rank 128256/4 x 2048 embedding + 16 x ((2048 x 2048 x 2 + 2048 x 512 x 2 + 3 x 2048 x 8192) / 4
  + 2 x 2048 norms) + 2048 final norm = 309,004,288 parameters x 2 B = 618,008,576 B, plus the RoPE cache
  (131072 positions x 64 x 2 B = 16,777,216 B): 634,785,792 B. KV per token per rank: 2 x 8/4 heads x 64 x 2 B
  x 16 layers = 8,192 B.
* Llama-3.1-70B on TP 4: 2 x 8/4 heads x 128 x 2 B x 80 layers = 81,920 B per token.
* Llama-3.1-8B on one GPU: 2 x 8 x 128 x 2 B x 32 = 131,072 B; Llama-3.2-1B on one GPU 2 x 8 x 64 x 2 B x 16
  = 32,768 B.
"""

from __future__ import annotations

import json

import pytest

from vramlint import gpus
from vramlint.budget import GiB, compute_budget, speculative_draft_name, weights_per_rank
from vramlint.cli import main
from vramlint.model import ResolveOptions
from vramlint.models import resolve_model

OFFLINE = ResolveOptions(allow_network=False)
TARGET = "meta-llama/Llama-3.1-70B-Instruct"
DRAFT = "meta-llama/Llama-3.2-1B-Instruct"
DRAFT_WEIGHTS_TP4 = 634_785_792
DRAFT_KV_TP4 = 8_192
TARGET_KV_TP4 = 81_920


def catalog_model(name):
    info, why = resolve_model(name, OFFLINE)
    assert info is not None, why
    return info


def _args(**extra):
    return {"tensor_parallel_size": 4, "max_model_len": 32768, **extra}


def _budget(args, version="0.19.0", draft=None, model=TARGET, gpu="H100-SXM", gpus_=4):
    return compute_budget(catalog_model(model), gpus.lookup(gpu), args, {}, version, gpus_, draft=draft)


def test_draft_model_weights_and_kv_are_counted():
    spec = {"model": DRAFT, "num_speculative_tokens": 5}
    assert speculative_draft_name({"speculative_config": spec}) == DRAFT
    draft = catalog_model(DRAFT)
    assert weights_per_rank(draft, 4, 1, "bfloat16", {})[0] == DRAFT_WEIGHTS_TP4
    alone = _budget(_args())
    b = _budget(_args(speculative_config=spec), draft=(draft, None))
    assert alone.kv_bytes_per_token == TARGET_KV_TP4
    assert b.kv_bytes_per_token == TARGET_KV_TP4 + DRAFT_KV_TP4
    target_weights, _ = weights_per_rank(catalog_model(TARGET), 4, 1, "bfloat16", {})
    assert b.weights_gib == round((target_weights + DRAFT_WEIGHTS_TP4) / GiB, 2)
    # the draft's weights come out of the KV cache (0.59 GiB, within the 0.01 rounding)
    assert abs(alone.kv_cache_gib - b.kv_cache_gib - DRAFT_WEIGHTS_TP4 / GiB) <= 0.011
    assert b.num_gpu_blocks < alone.num_gpu_blocks and b.max_concurrency < alone.max_concurrency
    assert DRAFT in b.sources["weights"] and DRAFT in b.sources["kv_bytes_per_token"]
    assert "counted" in b.sources["speculative"]
    assert not any(DRAFT in n for n in b.notes) and b.starts


def test_draft_model_blocks_with_a_fixed_kv_cache():
    """--kv-cache-memory-bytes fixes the pool: blocks = bytes // (16 tokens x both models' bytes per token)."""
    pool = 20 * GiB
    spec = {"model": DRAFT, "num_speculative_tokens": 5}
    alone = _budget(_args(kv_cache_memory_bytes=pool))
    b = _budget(_args(kv_cache_memory_bytes=pool, speculative_config=spec), draft=(catalog_model(DRAFT), None))
    assert alone.num_gpu_blocks == pool // (16 * TARGET_KV_TP4) == 16384
    assert b.num_gpu_blocks == pool // (16 * (TARGET_KV_TP4 + DRAFT_KV_TP4)) == 14894
    assert b.max_concurrency == round(14894 / (32768 // 16), 2) == 7.27


def test_draft_tensor_parallel_size_must_match_on_v1():
    spec = {"model": DRAFT, "num_speculative_tokens": 5, "draft_tensor_parallel_size": 1}
    b = _budget(_args(speculative_config=spec), draft=(catalog_model(DRAFT), None))
    assert not b.starts
    [err] = [e for e in b.errors if e["code"] == "draft-tp-mismatch"]
    assert err["arg"] == "speculative_config" and "Got 1 and 4" in err["message"]


def test_ngram_adds_nothing():
    alone = _budget(_args())
    for spec in ({"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4},
                 {"model": "[ngram]", "num_speculative_tokens": 3}):
        assert speculative_draft_name({"speculative_config": spec}) is None
        b = _budget(_args(speculative_config=spec))
        assert (b.weights_gib, b.kv_bytes_per_token, b.num_gpu_blocks) == \
            (alone.weights_gib, alone.kv_bytes_per_token, alone.num_gpu_blocks)
        assert "nothing added" in b.sources["speculative"] and b.notes == alone.notes


def test_unresolved_draft_model_is_said_not_guessed():
    name = "example-org/private-draft-1b"
    spec = {"model": name, "num_speculative_tokens": 5}
    assert speculative_draft_name({"speculative_config": spec}) == name
    draft = resolve_model(name, OFFLINE)
    assert draft[0] is None
    alone = _budget(_args())
    b = _budget(_args(speculative_config=spec), draft=draft)
    assert (b.weights_gib, b.kv_bytes_per_token, b.num_gpu_blocks) == \
        (alone.weights_gib, alone.kv_bytes_per_token, alone.num_gpu_blocks)
    [note] = [n for n in b.notes if name in n]
    assert "not counted" in note and "over-estimated" in note
    # compute_budget called without resolving the draft says the same
    assert any(name in n for n in _budget(_args(speculative_config=spec)).notes)


def test_unresolved_eagle_head_is_noted_not_counted():
    # an EAGLE head the catalog does not know (offline): resolved like the model, and said once when it is not
    spec = {"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-70B", "num_speculative_tokens": 3}
    assert speculative_draft_name({"speculative_config": spec}) == "yuhuili/EAGLE-LLaMA3.1-Instruct-70B"
    draft = resolve_model(spec["model"], OFFLINE)
    assert draft[0] is None
    alone = _budget(_args())
    b = _budget(_args(speculative_config=spec), draft=draft)
    assert b.kv_bytes_per_token == alone.kv_bytes_per_token and b.weights_gib == alone.weights_gib
    [note] = [n for n in b.notes if "EAGLE head yuhuili/EAGLE-LLaMA3.1-Instruct-70B" in n]
    assert "not counted" in note and "over-estimated" in note

def test_mtp_layers_are_noted_before_0_14():
    b = compute_budget(catalog_model("deepseek-ai/DeepSeek-V3"), gpus.lookup("H200"),
                       {"tensor_parallel_size": 8, "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}},
                       {}, "0.11.0", 8)
    assert any("1 MTP layer " in n and "not counted" in n for n in b.notes)


# MiMo-7B's MTP layer (mimo_mtp.py): one Qwen2-style decoder layer, hidden 4096, 32 heads / 8 KV heads x 128,
# intermediate 11008: q 16,777,216 + k, v 2 x 4,194,304 + o 16,777,216 + gate_up 90,177,536 + down 45,088,768 +
# q/k/v biases 6,144 + 2 norms 8,192 = 177,223,680, + the shared head's norm 4,096, + input_proj 2 x 4096 x 4096 =
# 33,554,432 and its two input norms 8,192: 210,790,400 parameters x 2 B = 421,580,800 B. Its KV cache per token:
# 2 x 8 x 128 x 2 B = 4,096 B. Before 0.17 the layer's own LM head stays loaded: 151,680 x 4096 x 2 B.
MIMO_MTP_BYTES = 421_580_800


def test_mtp_layers_are_counted_from_0_14():
    model = catalog_model("XiaomiMiMo/MiMo-7B-Base")
    gpu = gpus.lookup("H100")
    args = {"max_model_len": 8192}
    mtp = {**args, "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}}
    for version, head in (("0.19.0", 0), ("0.14.0", 151_680 * 4096 * 2)):
        alone = compute_budget(model, gpu, args, {}, version, 1)
        b = compute_budget(model, gpu, mtp, {}, version, 1)
        assert abs((b.weights_gib - alone.weights_gib) - (MIMO_MTP_BYTES + head) / GiB) < 0.011, version
        assert b.kv_bytes_per_token - alone.kv_bytes_per_token == 4_096
        assert "1 MTP layer" in b.sources["weights"] and not any("MTP" in n for n in b.notes)
    deepseek = compute_budget(catalog_model("deepseek-ai/DeepSeek-V3"), gpus.lookup("H200"),
                              {"tensor_parallel_size": 8,
                               "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}}, {}, "0.19.0", 8)
    plain = compute_budget(catalog_model("deepseek-ai/DeepSeek-V3"), gpus.lookup("H200"),
                           {"tensor_parallel_size": 8}, {}, "0.19.0", 8)
    # one more MLA layer: 576 latent values x 2 B per token; roughly a 61st of the decoder layers' weights
    assert deepseek.kv_bytes_per_token - plain.kv_bytes_per_token == 576 * 2
    assert 0.5 < deepseek.weights_gib - plain.weights_gib < 3


def test_0_9_falls_back_to_v0_for_a_draft_model():
    spec = {"model": DRAFT, "num_speculative_tokens": 5}
    alone = _budget(_args(), version="0.9.2")
    b = _budget(_args(speculative_config=spec), version="0.9.2", draft=(catalog_model(DRAFT), None))
    assert b.engine == "v1" and b.kv_bytes_per_token == alone.kv_bytes_per_token
    assert any(DRAFT in n and "falls back to V0" in n for n in b.notes)


@pytest.mark.parametrize("version, method, text", [
    # EngineArgs refuses an explicit draft_model method from 0.11
    ("0.11.0", "draft_model", "Draft model speculative decoding is not supported yet."),
    ("0.14.0", "draft_model", "Draft model speculative decoding is not supported yet."),
    # inferred method (or 0.10): the V1 model runner has no drafter for it
    ("0.14.0", None, "Unknown speculative decoding method: draft_model"),
    ("0.10.2", "draft_model", "Unknown speculative decoding method: draft_model"),
])
def test_v1_releases_before_0_15_refuse_a_draft_model(version, method, text):
    spec = {"model": DRAFT, "num_speculative_tokens": 5, **({"method": method} if method else {})}
    b = _budget(_args(speculative_config=spec), version=version, draft=(catalog_model(DRAFT), None))
    [error] = [e for e in b.errors if e["code"] == "draft-model-unsupported"]
    assert error["message"].startswith(text) and error["arg"] == "speculative_config" and not b.starts
    assert "0.15" in error["fix"]
    ok = _budget(_args(speculative_config=spec), version="0.15.0", draft=(catalog_model(DRAFT), None))
    assert not [e for e in ok.errors if e["code"] == "draft-model-unsupported"]


def test_v0_splits_the_blocks_between_the_two_caches():
    """vLLM 0.6.4 (V0) with --speculative-model: the model's own block count, split in the ratio of the two caches'
    block sizes (split_num_cache_blocks_evenly)."""
    args = {"max_model_len": 8192, "speculative_model": DRAFT, "num_speculative_tokens": 5}
    target = "meta-llama/Llama-3.1-8B-Instruct"
    b = _budget(args, version="0.6.4", draft=(catalog_model(DRAFT), None), model=target, gpu="A100-80GB", gpus_=1)
    assert b.engine == "v0" and b.kv_bytes_per_token == 131_072 + 32_768
    draft_weights, _ = weights_per_rank(catalog_model(DRAFT), 1, 1, "bfloat16", {})
    alone = _budget({"max_model_len": 8192}, version="0.6.4", model=target, gpu="A100-80GB", gpus_=1)
    assert abs(alone.kv_cache_gib - b.kv_cache_gib - draft_weights / GiB) <= 0.011
    # the KV memory is known to 0.01 GiB: the blocks match the split within a block or two
    own_blocks = b.kv_cache_gib * GiB / (16 * 131_072)
    assert abs(b.num_gpu_blocks - own_blocks * 131_072 / (131_072 + 32_768)) <= 2


MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.19.0
          args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4",
                 "--max-model-len", "32768",
                 "--speculative-config", '{"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 5}']
          resources: {limits: {nvidia.com/gpu: 4}}
"""


def test_explain_counts_the_draft_of_a_manifest(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deploy" / "chat.yaml").write_text(MANIFEST)
    assert main(["explain", "deploy", "--offline", "--format", "json"]) == 0
    [server] = json.loads(capsys.readouterr().out)["servers"]
    budget = server["budget"]
    assert budget["kv_bytes_per_token"] == TARGET_KV_TP4 + DRAFT_KV_TP4
    assert DRAFT in budget["sources"]["weights"] and DRAFT in budget["sources"]["speculative"]
    assert not any(DRAFT in n for n in budget["notes"])


def test_a_config_that_names_no_draft_model_says_so():
    b = _budget(_args(speculative_config={"model": None, "num_speculative_tokens": 5}))
    assert "--speculative-config names no draft model: no draft is counted in the budget" in b.notes
    assert not any("the draft model  of" in n for n in b.notes)


# Qwen3.5-9B's MTP module (Qwen3_5MultiTokenPredictor, models/qwen3_5_mtp.py, vLLM 0.20.0): one full-attention
# Qwen3_5DecoderLayer -- gated q_proj 4096 x (16 x 256 x 2) 33,554,432, k / v 2 x 4096 x 1,024, o 4,096 x 4,096
# 16,777,216, q / k norms 2 x 256, two layer norms 8,192, gate_up 2 x 12,288 x 4,096 and down 12,288 x 4,096
# 150,994,944: 209,723,904 -- its final norm 4,096, one fc 2 x 4,096 -> 4,096 (33,554,432, split over TP) and the
# pre_fc_norm_hidden / pre_fc_norm_embedding norms 8,192: 243,290,624 parameters x 2 B. Its attention layer has
# the model's KV spec (2 x 4 KV heads x 256 x 2 B = 4,096 B per token) and joins the 8 full-attention layers'
# group: groups of 9 beside 24 gated-delta-net layers, "Add 3 padding layers, may waste at most 12.50% KV cache
# memory" (the P167 log of benchmarks/startup_logs_public.md: 18.12 GiB loaded against 17.66 without MTP).
QWEN35_9B_MTP_BYTES = 486_581_248


def _qwen35_config(**text):
    return {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
            "tie_word_embeddings": False,
            "text_config": {"model_type": "qwen3_5_text", "hidden_size": 4096, "num_hidden_layers": 32,
                            "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256,
                            "intermediate_size": 12288, "vocab_size": 248320, "max_position_embeddings": 262144,
                            "full_attention_interval": 4, "attn_output_gate": True, "linear_conv_kernel_dim": 4,
                            "linear_key_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
                            "linear_value_head_dim": 128, "dtype": "bfloat16", **text}}


def test_qwen3_5_mtp_layer_count_comes_from_mtp_num_hidden_layers():
    from vramlint.modelconfig import facts_from_config

    facts = facts_from_config(_qwen35_config(mtp_num_hidden_layers=1))
    assert facts["mtp_layers"] == 1 and facts["mtp_style"] == "qwen3_5"
    assert "mtp_layers" not in facts_from_config(_qwen35_config())


@pytest.mark.parametrize("tp, fc_rows", [(1, 4096), (2, 2048)])
def test_qwen3_5_mtp_weights_and_kv_groups(tp, fc_rows):
    model = catalog_model("Qwen/Qwen3.5-9B")
    gpu = gpus.lookup("RTX-5090")
    args = {"gpu_memory_utilization": 0.85, "max_model_len": 4096, "max_num_batched_tokens": 8192,
            "tensor_parallel_size": tp}
    mtp = {**args, "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}}
    alone = compute_budget(model, gpu, args, {}, "0.20.0", tp)
    b = compute_budget(model, gpu, mtp, {}, "0.20.0", tp)
    layer = (209_723_904 - 33_554_432 - 8_388_608 - 16_777_216 - 150_994_944) + \
        (33_554_432 + 8_388_608 + 16_777_216 + 150_994_944) // tp + 4_096
    expected = (layer + 2 * 4096 * fc_rows + 2 * 4096) * 2
    if tp == 1:
        assert expected == QWEN35_9B_MTP_BYTES
    assert abs((b.weights_gib - alone.weights_gib) - expected / GiB) < 0.011
    assert b.kv_bytes_per_token - alone.kv_bytes_per_token == 4096 // tp
    assert "Add 3 padding layers, may waste at most 12.50% KV cache memory" in b.notes
    assert not any("MTP" in n and "not counted" in n for n in b.notes)
    # four groups of 9 layer pages per block instead of 8: fewer blocks and tokens, beyond the weights' share
    assert b.kv_tokens < alone.kv_tokens * 8 / 9


def test_qwen3_5_mtp_drafter_buffers_in_the_profile():
    # V1 runs MTP layers through EagleProposer (SpeculativeConfig.use_eagle), whose __init__ allocates hidden_states
    # and inputs_embeds of max_num_batched_tokens x hidden in the model dtype before memory is measured:
    # 2 x 8,192 x 4,096 x 2 B = 128 MiB (llm_base_proposer.py, 0.20.0 wheel); its dummy run on the profile batch
    # (one decoder layer) peaks below the model's own forward pass
    model = catalog_model("Qwen/Qwen3.5-9B")
    gpu = gpus.lookup("RTX-5090")
    args = {"gpu_memory_utilization": 0.85, "max_model_len": 4096, "max_num_batched_tokens": 8192}
    mtp = {**args, "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}}
    alone = compute_budget(model, gpu, args, {}, "0.20.0", 1)
    b = compute_budget(model, gpu, mtp, {}, "0.20.0", 1)
    assert abs((b.activation_gib - alone.activation_gib) - 2 * 8192 * 4096 * 2 / GiB) < 0.011
    assert "MTP layers: buffers 128 MiB" in b.sources["activation"]
