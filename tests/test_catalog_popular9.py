"""The fifteenth round's catalog entries (popular9-*.json) and the config readings they needed: NemotronH configs
saved by transformers 5 (``layers_block_type`` in place of ``hybrid_override_pattern``, no ``num_hidden_layers``)
and ModelOpt MIXED_PRECISION layer names under NemotronH's ``mixer``."""

from __future__ import annotations

import json

import pytest

from tests._check_util import deployment, run_cli
from vramlint.modelconfig import facts_from_config
from vramlint.models import _from_catalog, catalog_entry
from vramlint.weights import count_parameters, quantized_bytes_per_param, weight_bytes

STORED = ("id", "source", "note", "same_as")


def _facts(model_id: str) -> dict:
    return {k: v for k, v in catalog_entry(model_id).items() if k not in STORED}


def _nemotron_h(**extra) -> dict:
    # a small hybrid: Mamba-2, MoE-only, attention and MLP-only layers
    cfg = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 512,
           "intermediate_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
           "vocab_size": 4096, "max_position_embeddings": 8192, "mamba_num_heads": 16, "mamba_head_dim": 64,
           "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "expand": 2, "n_routed_experts": 8,
           "num_experts_per_tok": 2, "moe_intermediate_size": 256, "moe_shared_expert_intermediate_size": 512,
           "n_shared_experts": 1, "tie_word_embeddings": False}
    cfg.update(extra)
    return cfg


@pytest.mark.parametrize("names", [
    ["mamba", "moe", "attention", "mlp", "mamba", "moe"],  # the legacy names transformers 5 still accepts
    ["linear_attention", "moe", "full_attention", "mlp", "linear_attention", "moe"],  # its own names
])
def test_a_transformers5_nemotron_h_config_reads_as_its_hybrid_override_pattern(names):
    # transformers 5.25 NemotronHConfig: num_hidden_layers = len(layers_block_type), hybrid_override_pattern derived
    # from the list (linear_attention -> M, moe -> E, full_attention -> *, mlp -> -); vLLM builds one layer per letter
    legacy = facts_from_config(_nemotron_h(hybrid_override_pattern="ME*-ME", num_hidden_layers=6))
    saved = facts_from_config(_nemotron_h(layers_block_type=names))
    assert saved["layers"] == 6 and saved["pattern"] == legacy["pattern"] == "MEF-ME"
    assert count_parameters(saved).total == count_parameters(legacy).total
    # a num_hidden_layers that disagrees is ignored, as NemotronHConfig ignores it
    assert facts_from_config(_nemotron_h(layers_block_type=names, num_hidden_layers=52))["layers"] == 6


def test_layers_block_type_keeps_its_meaning_outside_nemotron_h():
    # Zamba2-style lists: anything but mamba is an attention layer, as before
    cfg = {"architectures": ["Zamba2ForCausalLM"], "model_type": "zamba2", "hidden_size": 512, "num_hidden_layers": 3,
           "num_attention_heads": 8, "vocab_size": 4096, "max_position_embeddings": 4096,
           "layers_block_type": ["mamba", "hybrid", "mamba"]}
    assert facts_from_config(cfg)["pattern"] == "MFM"


def test_mixed_precision_names_under_the_nemotron_h_mixer_are_read_per_kind():
    cfg = _nemotron_h(layers_block_type=["mamba", "moe", "attention"])
    layers = {"backbone.layers.0.mixer.in_proj": {"quant_algo": "FP8"},
              "backbone.layers.0.mixer.out_proj": {"quant_algo": "FP8"},
              "backbone.layers.1.mixer.experts.0.up_proj": {"quant_algo": "W4A16_NVFP4", "group_size": 16},
              "backbone.layers.1.mixer.shared_experts.down_proj": {"quant_algo": "W4A16_NVFP4", "group_size": 16},
              "backbone.layers.2.mixer.q_proj": {"quant_algo": "FP8"}}
    quant = {"quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": layers}}
    kinds = facts_from_config(cfg, quant)["quant"]["kinds"]
    assert kinds == {"mamba": {"format": "fp8", "bits": 8}, "experts": {"format": "nvfp4", "bits": 4, "group": 16},
                     "shared": {"format": "nvfp4", "bits": 4, "group": 16}, "attn": {"format": "fp8", "bits": 8}}
    # a module vramlint cannot place still leaves the whole mapping unread
    layers["backbone.layers.0.mixer.conv1d"] = {"quant_algo": "FP8"}
    assert "kinds" not in facts_from_config(cfg, quant)["quant"]


def test_lightning_nvfp4_has_nanos_shapes_and_its_mixed_formats():
    lightning, nano = _facts("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4"), _facts(
        "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert lightning["layers"] == 52 and lightning["pattern"] == nano["pattern"]
    counted = count_parameters(lightning)
    assert counted.total == count_parameters(nano).total  # the name's 30B-A3B
    kinds = lightning["quant"]["kinds"]
    assert kinds["mamba"]["format"] == "fp8" and kinds["experts"]["format"] == kinds["shared"]["format"] == "nvfp4"
    assert "attn" not in kinds  # the attention layers are not in quantized_layers: bf16
    # each kind at its own width, embeddings, norms and the rest in bf16
    nvfp4 = quantized_bytes_per_param({"method": "modelopt", **kinds["experts"]})
    expected = (counted.linear["experts"] + counted.linear["shared"] + counted.lm_head) * nvfp4 \
        + counted.linear["mamba"] * 1.0 + counted.linear["attn"] * 2 \
        + 2 * (counted.embed + counted.norms + counted.other)
    assert weight_bytes(lightning) == pytest.approx(expected, rel=2e-3)
    assert weight_bytes(lightning) < 0.32 * 2 * counted.total


def test_ultra_counts_its_layers_from_layers_block_type():
    bf16 = _facts("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16")
    assert bf16["layers"] == 108 and bf16["pattern"].count("E") + bf16["pattern"].count("M") + bf16["pattern"].count("F") == 108
    total = count_parameters(bf16).total
    assert total == pytest.approx(550e9, rel=0.005)  # the name's 550B
    sizes = [_from_catalog(f"nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-{v}").weight_bytes for v in ("BF16", "FP8", "NVFP4")]
    assert sizes[0] > sizes[1] > sizes[2]
    assert sizes[1] == pytest.approx(total, rel=0.01) and sizes[2] < 0.6 * total


def test_a_deployment_naming_lightning_gets_a_gpu_requirement_offline(tmp_path):
    text = deployment("vllm/vllm-openai:v0.34.0", ["--model", "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4",
                                                   "--max-model-len", "32768"])
    _, out = run_cli(tmp_path, text, "explain", "--format", "json")
    data = json.loads(out)
    server = (data["servers"] if isinstance(data, dict) and "servers" in data else data)[0]
    requirement = server["gpu_requirement"]
    # its mixed-precision weights, not the bf16 size, set the smallest GPU memory it starts with
    assert requirement["min_total_gib"] > _from_catalog("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4").weight_bytes / 2**30
    assert "H100-SXM" in requirement["fits"]
