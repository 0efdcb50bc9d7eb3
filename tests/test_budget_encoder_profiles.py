"""The multimodal encoder's dummy batch in V1's profiling run for Qwen2.5-VL and Mistral 3, worked by hand from
vLLM's code (vramlint/budget/multimodal.py names the functions).

Qwen2.5-VL-7B (tower hidden 1280, 32 layers, intermediate 3420, patch 14, merge 2, output 3584):

* the tower: per layer 4 x 1280^2 + 4 x 1280 (qkv and proj with biases) + 2 x 1280 (RMSNorms) + 3 x 1280 x 3420
  + 2 x 3420 + 1280 (biased GLU MLP) = 19,702,200, x 32 = 630,470,400; patch embedding 3 x 2 x 14 x 14 x 1280 =
  1,505,280; merger 1280 + 5120^2 + 5120 + 5120 x 3584 + 3584 = 44,574,464: 676,550,144 parameters (with the
  language model, 8,292,166,656 in all);
* the largest image: 12,845,056 px // 28^2 = 16,384 merged patches = 128 x 128 (aspect 1), so 16,384 tokens from
  65,536 patches; outputs 16,384 x 3584 x 2 B = 117,440,512 B per item; the encoder budget max(8192, 16384)
  holds one item;
* the dummy image's pixel values, held from the tower's run until the profiling run returns: 65,536 patches x
  3 channels x 2 frames x 14 x 14 px x 2 B = 154,140,672 B;
* the tower's peak: 65,536 x (2 x 1280 + 3 x 1280 + 2 x 3420) x 2 B + the outputs + the pixel values =
  2,006,974,464 B.

Mistral 3 (Magistral-Small-2509: tower hidden 1024, 24 layers, intermediate 4096, 1540 px, patch 14, merge 2,
text hidden 5120): 110^2 = 12,100 patches and 55^2 = 3,025 tokens per image; at 8192 batched tokens 2 items,
outputs 2 x 3025 x 5120 x 2 B = 61,952,000 B; without xformers (0.12 - 0.28) the block mask over the 24,200
patches is 24,200^2 x 2 B = 1,171,280,000 B; pixel values 24,200 x 3 x 14 x 14 x 2 B = 28,459,200 B; the tower's
peak 24,200 x (2 x 1024 + 3 x 1024 + 2 x 4096) x 2 B + outputs + mask + pixel values = 1,905,992,000 B
(734,712,000 B from 0.29, when the tower's attention takes no mask).
"""

from __future__ import annotations

from vramlint import gpus, versions
from vramlint.budget import compute_budget
from vramlint.budget.multimodal import encoder_profile, tower_skipped
from vramlint.model import ResolveOptions
from vramlint.models import resolve_model
from vramlint.weights import count_parameters

OFFLINE = ResolveOptions(allow_network=False)
V = versions.parse_version


def _model(name):
    info, why = resolve_model(name, OFFLINE)
    assert info is not None, why
    return info


def test_qwen2_5_vl_tower_parameters():
    facts = _model("Qwen/Qwen2.5-VL-7B-Instruct").extra["facts"]
    counted = count_parameters(facts)
    assert counted.vision == 676_550_144 and counted.total == 8_292_166_656


def test_qwen2_5_vl_encoder_dummy_batch():
    facts = _model("Qwen/Qwen2.5-VL-7B-Instruct").extra["facts"]
    enc, why = encoder_profile(facts, {}, V("0.19.0"), 256, 8192, 128000, 2, 1)
    assert why is None
    assert (enc.items, enc.tokens_per_item, enc.patches_per_item) == (1, 16384, 65536)
    assert enc.output_bytes == 117_440_512 and enc.tower_peak_bytes == 2_006_974_464
    assert enc.held_bytes == 117_440_512 + 154_140_672
    assert encoder_profile(facts, {}, V("0.19.0"), 256, 40000, 128000, 2, 1)[0].items == 2
    # a few videos per prompt: the dummy video's frames follow the sequence length, not estimated
    enc, why = encoder_profile(facts, {"limit_mm_per_prompt": {"video": 1}}, V("0.19.0"), 256, 8192, 128000, 2, 1)
    assert enc is None and "videos" in why
    enc, why = encoder_profile(facts, {}, V("0.11.0"), 256, 8192, 128000, 2, 1)
    assert enc is None and "before vLLM 0.14" in why
    assert tower_skipped(facts, {"limit_mm_per_prompt": {"image": 0, "video": 0}}, V("0.14.0"))
    assert not tower_skipped(facts, {"limit_mm_per_prompt": {"image": 0, "video": 0}}, V("0.13.0"))


def test_qwen2_vl_encoder_dummy_batch_0_10_2():
    """Qwen2-VL-2B (tower hidden 1280, 32 layers, QuickGELU MLP 5120 wide, patch 14, merge 2, output 1536) on 0.10.2
    at 2,048 batched tokens: the same largest image as Qwen2.5-VL, 16,384 tokens from 65,536 patches, one item
    (budget max(2048, 16384)); outputs 16,384 x 1536 x 2 B = 50,331,648; the pixel values, 65,536 x 3 x 2 x 14 x 14,
    held in float32 (308,281,344 B, moved to the GPU uncast) and copied to bf16 for the tower (154,140,672 B); the
    tower's peak 65,536 x (2 x 1280 + 3 x 1280 + 2 x 5120) x 2 B + outputs + both pixel tensors = 2,693,791,744 B."""
    facts = _model("Qwen/Qwen2-VL-2B-Instruct").extra["facts"]
    enc, why = encoder_profile(facts, {}, V("0.10.2"), 256, 2048, 4096, 2, 1)
    assert why is None
    assert (enc.modality, enc.items, enc.tokens_per_item, enc.patches_per_item) == ("image", 1, 16384, 65536)
    assert enc.output_bytes == 50_331_648 and enc.tower_peak_bytes == 2_693_791_744
    assert enc.held_bytes == 50_331_648 + 308_281_344
    enc, why = encoder_profile(facts, {"limit_mm_per_prompt": {"video": 2}}, V("0.10.2"), 256, 2048, 4096, 2, 1)
    assert enc is None and "videos" in why
    for other in ("0.10.1.1", "0.11.0"):
        enc, why = encoder_profile(facts, {}, V(other), 256, 2048, 4096, 2, 1)
        assert enc is None and "Qwen2-VL" in why, other


def test_mistral3_encoder_dummy_batch_and_mask():
    facts = _model("mistralai/Magistral-Small-2509").extra["facts"]
    enc, why = encoder_profile(facts, {}, V("0.19.0"), 256, 8192, 131072, 2, 1)
    assert why is None
    assert (enc.items, enc.tokens_per_item, enc.patches_per_item) == (2, 3025, 12100)
    assert enc.output_bytes == 61_952_000 and enc.tower_peak_bytes == 1_905_992_000
    assert "block attention mask 1.09 GiB" in enc.how
    later, _ = encoder_profile(facts, {}, V("0.29.0"), 256, 8192, 131072, 2, 1)
    assert later.tower_peak_bytes == 734_712_000 and "mask" not in later.how
    old, why = encoder_profile(facts, {}, V("0.11.0"), 256, 8192, 131072, 2, 1)
    # without a GPU vLLM 0.11's tower attention (xformers or a dense mask) is not known: said, not guessed
    assert old is None and "xformers" in why


def test_encoder_profile_reaches_the_budget():
    info = _model("mistralai/Magistral-Small-2509")
    args = {"max_model_len": 32768, "max_num_batched_tokens": 8192, "max_num_seqs": 8}
    b = compute_budget(info, gpus.lookup("H100-SXM"), args, {}, "0.19.0", 1)
    assert "multimodal encoder: 2 dummy image(s) of 3025 tokens" in b.sources["activation"]
    assert not any("encoder profiling is not estimated" in n for n in b.notes)
    # the tower's peak with its mask exceeds the text pass of 8 sequences
    assert abs(b.activation_gib - 1_905_992_000 / 2**30) < 0.011


def test_mm_encoder_tp_mode_data_replicates_the_tower():
    """--mm-encoder-tp-mode data (Qwen2.5-VL-7B, TP 2, 0.19): the tower is whole on both ranks, 676,550,144
    parameters x 2 B / 2 = 676,550,144 B more per rank than split; the one dummy image runs on one rank through
    the whole tower, 65,536 x (2 x 1280 + 3 x 1280 + 2 x 3420) x 2 B = 1,735,393,280 B, and the all-gathered
    outputs are 2 ranks x 117,440,512 B: 1,970,274,304 B (split by TP: 65,536 x (2 x 1280 + (3 x 1280 + 2 x 3420)
    / 2) x 2 B + 117,440,512 = 1,152,909,312 B); each adds the batch's pixel values, 154,140,672 B. Gemma 3 does not support it: vLLM falls back to weights."""
    info = _model("Qwen/Qwen2.5-VL-7B-Instruct")
    facts = info.extra["facts"]
    data = {"mm_encoder_tp_mode": "data"}
    split, _ = encoder_profile(facts, {}, V("0.19.0"), 256, 8192, 128000, 2, 2)
    whole, _ = encoder_profile(facts, data, V("0.19.0"), 256, 8192, 128000, 2, 2)
    assert split.tower_peak_bytes == 1_307_049_984 and whole.tower_peak_bytes == 2_124_414_976
    assert "--mm-encoder-tp-mode data" in whole.how
    args = {"tensor_parallel_size": 2, "max_model_len": 32768}
    gpu = gpus.lookup("H100-SXM")
    weights_mode = compute_budget(info, gpu, args, {}, "0.19.0", 2)
    data_mode = compute_budget(info, gpu, {**args, **data}, {}, "0.19.0", 2)
    assert abs(data_mode.weights_gib - weights_mode.weights_gib - 676_550_144 / 2**30) < 0.011
    assert "replicated on every rank" in data_mode.sources["weights"]
    # before 0.11 the flag is not read for it; on one GPU it changes nothing
    assert compute_budget(info, gpu, {**args, **data}, {}, "0.10.1", 2).weights_gib == \
        compute_budget(info, gpu, args, {}, "0.10.1", 2).weights_gib
    gemma = _model("google/gemma-3-27b-it").extra["facts"]
    assert encoder_profile(gemma, data, V("0.19.0"), 256, 8192, 131072, 2, 2)[0].tower_peak_bytes == \
        encoder_profile(gemma, {}, V("0.19.0"), 256, 8192, 131072, 2, 2)[0].tower_peak_bytes


def test_a_multimodal_model_without_tower_facts_is_said_once():
    """Llama 4 Maverick in the catalog has no vision tower facts: its encoder profile is said not estimated, once,
    unless every modality is switched off (vLLM then skips the profile, and from 0.17 the tower)."""
    info = _model("meta-llama/Llama-4-Maverick-17B-128E-Instruct")
    assert not info.extra["facts"].get("vision")
    gpu = gpus.lookup("H100-SXM")
    args = {"max_model_len": 8192, "tensor_parallel_size": 4}
    b = compute_budget(info, gpu, args, {}, "0.19.0", 4)
    notes = [n for n in b.notes if "encoder profiling" in n]
    assert len(notes) == 1 and "vision tower is not known" in notes[0]
    off = compute_budget(info, gpu, {**args, "limit_mm_per_prompt": {"image": 0}}, {}, "0.19.0", 4)
    assert not [n for n in off.notes if "encoder profiling" in n]
    text_only = compute_budget(_model("meta-llama/Llama-3.1-8B-Instruct"), gpu, {"max_model_len": 8192}, {},
                               "0.19.0", 1)
    assert not [n for n in text_only.notes if "encoder profiling" in n]
