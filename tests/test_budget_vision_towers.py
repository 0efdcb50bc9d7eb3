"""The vision towers of Mistral Small 3.1 (Pixtral) and Llama 4 Scout: their parameters, and whether vLLM splits
them over the tensor-parallel ranks, worked by hand from vLLM's code (0.12.0 and 0.19.0 wheels).

Pixtral tower of Mistral-Small-3.1-24B-Instruct-2503 (hidden 1024, 24 layers, intermediate 4096, patch 14, merge 2,
text hidden 5120): per layer 4 x 1024^2 (bias-free q/k/v/o) + 3 x 1024 x 4096 (GLU MLP) + 2 x 1024 (RMSNorms) =
16,779,264, x 24 = 402,702,336; Conv2d patch embedding 3 x 14^2 x 1024 = 602,112 and ln_pre 1,024; projector
RMSNorm 1,024 + patch merger 4096 x 1024 + 1024 x 5120 + 5120^2 = 35,652,608: 438,958,080 parameters, which with
the text model make 24,011,361,280 -- the Hub's safetensors count of Magistral-Small-2509, the same architecture.

Llama 4 Scout (hidden 1408, 34 layers, intermediate 5632, 336 px, patch 14): per layer 4 x (1408^2 + 1408)
(biased q/k/v/o) + 1408 x 5632 + 5632 + 5632 x 1408 + 1408 (biased fc1/fc2) + 4 x 1408 (two LayerNorms) =
23,807,872, x 34 = 809,467,648; patch embedding 588 x 1408 = 827,904, class embedding 1,408, positions
(24^2 + 1) x 1408 = 812,416, layernorm_pre/post 5,632; adapter 5632 x 4096 + 4096 x 4096 = 39,845,888;
projector 4096 x 5120 = 20,971,520: 871,932,416 parameters.

With the Mistral format (vLLM 0.12+ by default when the repository has params.json) the model is
PixtralForConditionalGeneration, whose tower and adapter are plain nn.Linear: whole on every rank, so a TP 4 rank
holds 877,916,160 B x 3/4 = 658,437,120 B more than with config.json's Mistral3ForConditionalGeneration, whose
PixtralHFVisionModel and projector are split. Llama 4's tower is split by TP unless --mm-encoder-tp-mode data.
"""

from __future__ import annotations

from vramlint import gpus, versions
from vramlint.budget import compute_budget
from vramlint.budget.multimodal import encoder_profile, mistral_format, tower_replicated
from vramlint.model import ResolveOptions
from vramlint.modelconfig import facts_from_config
from vramlint.models import resolve_model
from vramlint.weights import count_parameters

OFFLINE = ResolveOptions(allow_network=False)
V = versions.parse_version
GiB = 2**30
PIXTRAL_TOWER = 438_958_080
LLAMA4_TOWER = 871_932_416


def _model(name):
    info, why = resolve_model(name, OFFLINE)
    assert info is not None, why
    return info


def test_pixtral_tower_parameters():
    facts = _model("mistralai/Mistral-Small-3.1-24B-Instruct-2503").extra["facts"]
    counted = count_parameters(facts)
    assert counted.vision == 24 * 16_779_264 + 602_112 + 1_024 + 35_652_608 == PIXTRAL_TOWER
    assert counted.total == 24_011_361_280
    magistral = count_parameters(_model("mistralai/Magistral-Small-2509").extra["facts"])
    assert magistral.vision == PIXTRAL_TOWER and magistral.total == 24_011_361_280


def test_llama4_tower_parameters():
    facts = _model("meta-llama/Llama-4-Scout-17B-16E-Instruct").extra["facts"]
    assert count_parameters(facts).vision == 34 * 23_807_872 + 1_647_360 + 39_845_888 + 20_971_520 == LLAMA4_TOWER


def test_configs_name_the_towers():
    # shaped after the two checkpoints' config.json (the text sizes cut down; the towers as published)
    mistral3 = {"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
                "spatial_merge_size": 2, "multimodal_projector_bias": False,
                "text_config": {"model_type": "mistral", "hidden_size": 5120, "intermediate_size": 32768,
                                "num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 8,
                                "head_dim": 128, "vocab_size": 131072, "max_position_embeddings": 131072},
                "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "intermediate_size": 4096,
                                  "num_hidden_layers": 24, "num_attention_heads": 16, "num_channels": 3,
                                  "patch_size": 14, "image_size": 1540}}
    facts = facts_from_config(mistral3)
    assert facts["vision"]["style"] == "pixtral" and facts["vision"]["spatial_merge"] == 2
    assert count_parameters(facts).vision == PIXTRAL_TOWER
    llama4 = {"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
              "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
                              "intermediate_size_mlp": 16384, "num_hidden_layers": 2, "num_attention_heads": 40,
                              "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048,
                              "num_local_experts": 16, "num_experts_per_tok": 1, "max_position_embeddings": 10485760},
              "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408, "intermediate_size": 5632,
                                "num_hidden_layers": 34, "num_attention_heads": 16, "num_channels": 3,
                                "patch_size": 14, "image_size": 336, "pixel_shuffle_ratio": 0.5,
                                "projector_input_dim": 4096, "projector_output_dim": 4096,
                                "vision_output_dim": 4096, "multi_modal_projector_bias": False}}
    facts = facts_from_config(llama4)
    assert facts["vision"]["style"] == "llama4"
    assert count_parameters(facts).vision == LLAMA4_TOWER


def test_the_mistral_format_replicates_the_pixtral_tower():
    info = _model("mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    facts = info.extra["facts"]
    gpu = gpus.lookup("H100-SXM")
    args = {"tensor_parallel_size": 4, "max_model_len": 8192}
    hf = {**args, "config_format": "hf"}
    auto = compute_budget(info, gpu, args, {}, "0.19.0", 4)
    split = compute_budget(info, gpu, hf, {}, "0.19.0", 4)
    assert abs(auto.weights_gib - split.weights_gib - 658_437_120 / GiB) < 0.011
    assert "replicated on every rank" in auto.sources["weights"] and "PixtralForConditionalGeneration" in \
        auto.sources["weights"]
    assert "replicated" not in split.sources["weights"]
    # 0.11 reads config.json first unless asked for the Mistral format
    assert not mistral_format(facts, {}, V("0.11.0"))
    assert mistral_format(facts, {"config_format": "mistral"}, V("0.11.0"))
    assert mistral_format(facts, {}, V("0.12.0"))
    old = compute_budget(info, gpu, args, {}, "0.11.0", 4)
    asked = compute_budget(info, gpu, {**args, "config_format": "mistral"}, {}, "0.11.0", 4)
    assert abs(asked.weights_gib - old.weights_gib - 658_437_120 / GiB) < 0.011
    # on one GPU nothing is split, the format changes nothing
    assert compute_budget(info, gpu, {"max_model_len": 8192}, {}, "0.19.0", 1).weights_gib == \
        compute_budget(info, gpu, {"max_model_len": 8192, "config_format": "hf"}, {}, "0.19.0", 1).weights_gib
    # a Mistral 3 entry the catalog does not know to ship params.json keeps config.json's split tower
    magistral = _model("mistralai/Magistral-Small-2509").extra["facts"]
    assert tower_replicated(magistral, {}, V("0.19.0")) is None


def test_the_replicated_pixtral_tower_runs_the_whole_dummy_batch_on_every_rank():
    """2 dummy images of 12,100 patches at TP 4: the replicated tower's intermediates are not split,
    24,200 x (2 x 1024 + 3 x 1024 + 2 x 4096) x 2 B = 644,300,800 B, against 24,200 x (2 x 1024 + (3 x 1024 +
    2 x 4096) / 4) x 2 B = 235,417,600 B split; outputs, mask and pixel values as at TP 1."""
    facts = _model("mistralai/Mistral-Small-3.1-24B-Instruct-2503").extra["facts"]
    whole, _ = encoder_profile(facts, {}, V("0.19.0"), 256, 8192, 131072, 2, 4)
    split, _ = encoder_profile(facts, {"config_format": "hf"}, V("0.19.0"), 256, 8192, 131072, 2, 4)
    assert whole.tower_peak_bytes - split.tower_peak_bytes == 644_300_800 - 235_417_600
    assert "every rank runs the whole batch" in whole.how


def test_llama4_tower_is_split_unless_the_encoder_runs_data_parallel():
    info = _model("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    facts = info.extra["facts"]
    gpu = gpus.lookup("H100-SXM")
    args = {"tensor_parallel_size": 4, "max_model_len": 8192}
    weights_mode = compute_budget(info, gpu, args, {}, "0.19.0", 4)
    data_mode = compute_budget(info, gpu, {**args, "mm_encoder_tp_mode": "data"}, {}, "0.19.0", 4)
    assert tower_replicated(facts, {}, V("0.19.0")) is None
    assert abs(data_mode.weights_gib - weights_mode.weights_gib - LLAMA4_TOWER * 2 * 3 / 4 / GiB) < 0.011
    # the encoder profile of Llama 4's processor is not estimated: said once
    notes = [n for n in weights_mode.notes if "encoder profiling" in n]
    assert len(notes) == 1 and "processor" in notes[0]
