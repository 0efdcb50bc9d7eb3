"""The fourteenth round's catalog entries (popular8-*.json): each resolves offline to the size its own checkpoint
publishes (the safetensors or bin index's total_size, read beside the config.json the entry was made from), and a
deployment naming one gets a GPU requirement without network."""

from __future__ import annotations

import json

import pytest

from tests._check_util import deployment, run_cli
from vramlint.models import _from_catalog, catalog_entry

# model id -> (parameters the checkpoint holds, relative tolerance, weight bytes the index gives when vLLM loads them
# unchanged, or None, where the figure comes from)
PUBLISHED = {
    "google/gemma-2b-it": (5_012_344_832 // 2, 0.0, 5_012_344_832, "model.safetensors.index.json total_size / 2 (bf16)"),
    "google/medgemma-27b-it": (54_864_813_280 // 2, 1e-7, None,
                               "total_size / 2; the count is 1,152 lower, as google/gemma-3-27b-it's (same shapes)"),
    "mistralai/Devstral-Small-2507": (47_144_806_400 // 2, 0.0, 47_144_806_400, "total_size / 2 (bf16)"),
    "cognitivecomputations/Dolphin3.0-R1-Mistral-24B": (47_144_847_360 // 2, 0.0, None, "total_size / 2 (bf16)"),
    "cognitivecomputations/dolphin-2.5-mixtral-8x7b": (93_405_618_176 // 2, 0.0, None,
                                                       "pytorch_model.bin.index.json total_size / 2 (bf16)"),
    "ibm-granite/granite-3b-code-instruct-128k": (6_965_007_360 // 2, 0.0, 6_965_007_360,
                                                  "total_size / 2, the MLP biases of mlp_bias: true included"),
    "instructlab/granite-7b-lab": (13_476_962_304 // 2, 0.0, None, "total_size / 2 (bf16)"),
    "deepcogito/cogito-v1-preview-qwen-14B": (29_531_895_808 // 2, 0.0, None, "total_size / 2 (bf16)"),
    # float32 checkpoints of 2023 also saved each layer's rotary inv_freq (head_dim / 2 values): not parameters
    "cognitivecomputations/Wizard-Vicuna-30B-Uncensored": (130_115_789_824 // 4 - 60 * 64, 0.0, None,
                                                           "pytorch_model.bin.index.json total_size / 4 (float32)"),
    "georgesung/llama2_7b_chat_uncensored": (26_953_670_656 // 4 - 32 * 64, 0.0, None,
                                             "model.safetensors.index.json total_size / 4 (float32)"),
}


@pytest.mark.parametrize("model_id", sorted(PUBLISHED))
def test_entry_resolves_offline_to_the_size_its_checkpoint_publishes(model_id):
    params, tolerance, index_bytes, _why = PUBLISHED[model_id]
    entry = catalog_entry(model_id)
    assert entry is not None and "github.com/" in entry["source"] and "/blob/" in entry["source"], model_id
    info = _from_catalog(model_id)
    assert info.param_count == pytest.approx(params, rel=tolerance, abs=0 if tolerance else 0.5), model_id
    if index_bytes is not None:
        assert info.weight_bytes == index_bytes, model_id
    # 16-bit weights whatever the checkpoint's dtype (vLLM loads float32 as bf16/fp16), plus the rows vLLM's
    # VocabParallelEmbedding pads the vocabulary with up to a multiple of 64, in the LM head too when it is not tied
    padded_rows = -(-info.vocab_size // 64) * 64 - info.vocab_size
    tables = 1 if info.tie_word_embeddings else 2
    assert info.weight_bytes == 2 * (info.param_count + tables * padded_rows * info.hidden_size), model_id


# GPTQ checkpoints: the branch the config.json copy is of (main) and the size its card gives for it, in GB of 10**9
# bytes rounded to 0.01 (packed int4 weights, scales, zeros and act-order g_idx, 16-bit embeddings and LM head)
GPTQ_CARD_GB = {
    "TheBloke/Llama-2-13B-chat-GPTQ": (7.26, 4, 128, 13_015_864_320),
    "TheBloke/Wizard-Vicuna-30B-Uncensored-GPTQ": (16.94, 4, -1, 32_528_943_616),
}


@pytest.mark.parametrize("model_id", sorted(GPTQ_CARD_GB))
def test_gptq_entries_keep_their_quantization_and_the_card_size(model_id):
    card_gb, bits, group, params = GPTQ_CARD_GB[model_id]
    info = _from_catalog(model_id)
    assert info.quantization == "gptq" and info.quant_bits == bits and info.quant_group_size == group
    assert info.param_count == params
    assert info.weight_bytes == pytest.approx(card_gb * 1e9, rel=0.005)
    # about a quarter of the 16-bit size: never sized as the unquantized model
    assert info.weight_bytes < 0.3 * 2 * params

def test_mlp_bias_adds_the_gated_mlp_biases_where_vllm_reads_the_key():
    from vramlint.modelconfig import facts_from_config
    from vramlint.weights import count_parameters

    # vLLM's LlamaDecoderLayer / GraniteDecoderLayer: LlamaMLP(bias=getattr(config, "mlp_bias", False)) on
    # gate_up_proj (2 x intermediate) and down_proj (hidden)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
           "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 1024,
           "max_position_embeddings": 2048}
    plain = count_parameters(facts_from_config(cfg)).total
    assert count_parameters(facts_from_config(dict(cfg, mlp_bias=True))).total == plain + 3 * (2 * 512 + 256)
    assert count_parameters(facts_from_config(dict(cfg, mlp_bias=False))).total == plain
    # MistralForCausalLM is vLLM's LlamaForCausalLM too; Qwen2MLP is built with bias=False whatever the key says
    mistral = dict(cfg, architectures=["MistralForCausalLM"], model_type="mistral")
    assert count_parameters(facts_from_config(dict(mistral, mlp_bias=True))).total == plain + 3 * (2 * 512 + 256)
    qwen2 = dict(cfg, architectures=["Qwen2ForCausalLM"], model_type="qwen2")
    assert (count_parameters(facts_from_config(dict(qwen2, mlp_bias=True))).total
            == count_parameters(facts_from_config(qwen2)).total)


def test_float32_checkpoints_are_sized_as_vllm_loads_them():
    # the entry keeps the config's float32; the budget counts what vLLM holds after casting, not the file size
    info = _from_catalog("cognitivecomputations/Wizard-Vicuna-30B-Uncensored")
    assert info.torch_dtype == "float32"
    assert info.weight_bytes == 2 * info.param_count < 130_115_789_824 / 2 + 1


def test_a_deployment_naming_an_added_model_gets_a_gpu_requirement_offline(tmp_path):
    text = deployment("vllm/vllm-openai:v0.10.1", ["--model", "mistralai/Devstral-Small-2507",
                                                   "--max-model-len", "32768"])
    _, out = run_cli(tmp_path, text, "explain", "--format", "json")
    data = json.loads(out)
    server = (data["servers"] if isinstance(data, dict) and "servers" in data else data)[0]
    requirement = server["gpu_requirement"]
    # 47.1 GB of bf16 weights: no 48 GB card at the default 0.9 utilisation, an 80 GB one does
    assert requirement["min_total_gib"] > 47_144_806_400 / 2**30
    assert "A100-80GB" in requirement["fits"] and "H100-SXM" in requirement["fits"]
    assert requirement["why_not"]["L40S"] == "no memory left for the KV cache"
    assert requirement["why_not"]["A100-40GB"] == "the weights do not fit"
