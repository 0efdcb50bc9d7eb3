"""LoRA slots and multimodal towers in the budget, with figures worked by hand from vLLM's code.

LoRA (``vllm/lora/layers/base_linear.py::create_lora_weights``, ``fused_moe.py``, ``vocal_parallel_embedding.py``,
``logits_processor.py``): per wrapped matrix of input i and output slices o_k, lora_a = slices x max_loras x rank
x i and lora_b = max_loras x o_k x rank per slice, in the model dtype; column-parallel layers shard lora_b's
output, row-parallel layers lora_a's input.

* Mistral-7B (32 layers, hidden 4096, 32 heads, 8 KV heads x 128, intermediate 14336, vocab 32000), rank 16,
  one slot, one GPU: per layer q 16 x (4096 + 4096), k and v 16 x (4096 + 1024) each, o 16 x (4096 + 4096),
  gate_up 16 x (2 x 4096 + 2 x 14336), down 16 x (14336 + 4096) = 16 x 81,920 elements; x 32 layers =
  41,943,040; embedding and lm_head 2 x 16 x (32000 + 4096) = 1,155,072; 43,098,112 x 2 B = 86,196,224 B.
  The public RunPod log (benchmarks/startup_logs_public.md, P13) says 13.58 GiB loaded with these slots.
* TP 2: q/k/v/gate_up keep lora_a whole and halve lora_b; o/down halve lora_a and keep lora_b whole.

Qwen3-VL-8B (text hidden 4096, 3 deepstack levels; tower hidden 1152, intermediate 4304, patch 16, merge 2):

* deepstack buffers: 3 x max_num_batched_tokens x 4096 x 2 B (8192 tokens: 201,326,592 B);
* an image of at most 16,777,216 px is 4096 x 4096 -> 256 x 256 = 65,536 patches -> 16,384 tokens; the encoder
  outputs held during the text forward pass are items x 16,384 x 4096 x (1 + 3) x 2 B = 536,870,912 B per item,
  with the pixel values, 65,536 x 3 x 2 x 16 x 16 x 2 B = 201,326,592 B per item;
* items = max(1, min(max(max_num_batched_tokens, 16384) // 16384, max_num_seqs x min(limit, max_model_len //
  16384))): 1 at 8192 tokens, 2 at 40,000.

Gemma 3: 256 tokens per 896 px image (4096 patches of 14 px); at 8192 batched tokens 32 images, capped by
max_num_seqs x min(limit, max_model_len // 256).
"""

from __future__ import annotations

from vramlint import gpus, versions
from vramlint.budget import compute_budget
from vramlint.budget.lora import lora_slot_bytes
from vramlint.budget.multimodal import deepstack_buffer_bytes, encoder_profile, tower_skipped
from vramlint.model import ResolveOptions
from vramlint.models import resolve_model
from vramlint.weights import count_parameters

OFFLINE = ResolveOptions(allow_network=False)
V019 = versions.parse_version("0.19.0")


def facts_of(name):
    info, why = resolve_model(name, OFFLINE)
    assert info is not None, why
    return info, info.extra["facts"]


def test_lora_slots_mistral_7b_rank_16():
    _, facts = facts_of("mistralai/Mistral-7B-Instruct-v0.2")
    slots, how = lora_slot_bytes(facts, {"enable_lora": True}, 1, 1, 2, versions.parse_version("0.14.0"))
    assert slots == 86_196_224
    assert "rank 16" in how
    # max_loras and rank scale the slots linearly; float32 slots are twice the bf16 ones
    more, _ = lora_slot_bytes(facts, {"enable_lora": True, "max_loras": 4, "max_lora_rank": 64}, 1, 1, 2,
                              versions.parse_version("0.14.0"))
    assert more == 16 * 86_196_224
    fp32, _ = lora_slot_bytes(facts, {"enable_lora": True, "lora_dtype": "float32"}, 1, 1, 2,
                              versions.parse_version("0.14.0"))
    assert fp32 == 2 * 86_196_224


def test_lora_slots_split_by_tensor_parallel():
    _, facts = facts_of("mistralai/Mistral-7B-Instruct-v0.2")
    per_layer = 16 * ((3 * 4096 + (4096 + 1024 + 1024) / 2)  # qkv: lora_a whole, lora_b halved
                      + (4096 / 2 + 4096)  # o_proj: input halved
                      + (2 * 4096 + 2 * 14336 / 2)  # gate_up
                      + (14336 / 2 + 4096))  # down
    expected = int((32 * per_layer + 2 * 16 * (32000 + 4096)) * 2)
    slots, _ = lora_slot_bytes(facts, {"enable_lora": True}, 2, 1, 2, versions.parse_version("0.14.0"))
    assert slots == expected


def test_lora_slots_in_the_loaded_weights():
    info, _ = facts_of("mistralai/Mistral-7B-Instruct-v0.2")
    gpu = gpus.lookup("L40S")
    args = {"max_model_len": 4096, "gpu_memory_utilization": 0.95}
    plain = compute_budget(info, gpu, args, {}, "0.14.0", 1)
    lora = compute_budget(info, gpu, {**args, "enable_lora": True, "max_loras": 1, "max_lora_rank": 16}, {},
                          "0.14.0", 1)
    assert abs((lora.weights_gib - plain.weights_gib) - 86_196_224 / 2**30) < 0.011
    assert "LoRA slots" in lora.sources["weights"] and "rank 16" in lora.sources["lora"]
    assert lora.kv_cache_gib < plain.kv_cache_gib
    # an --enable-lora whose value is unknown (a template switch) is said, not counted
    unknown = compute_budget(info, gpu, {**args, "enable_lora": None}, {}, "0.14.0", 1)
    assert unknown.weights_gib == plain.weights_gib


def test_lora_slots_on_moe_experts_from_0_14():
    _, facts = facts_of("Qwen/Qwen3-30B-A3B")
    old, _ = lora_slot_bytes(facts, {"enable_lora": True}, 1, 1, 2, versions.parse_version("0.11.0"))
    new, how = lora_slot_bytes(facts, {"enable_lora": True}, 1, 1, 2, versions.parse_version("0.14.0"))
    moe = facts["moe"]
    # FusedMoEWithLoRA: w13 a 2 x rank x hidden, b 2 x inter x rank; w2 a rank x inter, b hidden x rank
    experts = 16 * (2 * facts["hidden"] + moe["inter"] + 2 * moe["inter"] + facts["hidden"])
    assert new - old == experts * moe["experts"] * facts["layers"] * 2
    assert "MoE experts" in how


def test_qwen3_vl_deepstack_buffers_counted_with_the_tower():
    info, facts = facts_of("Qwen/Qwen3-VL-8B-Instruct")
    assert deepstack_buffer_bytes(facts, 8192, 2) == 201_326_592
    gpu = gpus.lookup("H100")
    base = {"max_model_len": 8192, "max_num_batched_tokens": 8192}
    with_tower = compute_budget(info, gpu, base, {}, "0.19.0", 1)
    assert "deepstack buffers 0.19 GiB" in with_tower.sources["weights"]
    text_only = compute_budget(info, gpu, {**base, "limit_mm_per_prompt": {"image": 0, "video": 0}}, {},
                               "0.19.0", 1)
    tower = count_parameters(facts).vision * 2
    assert abs((with_tower.weights_gib - text_only.weights_gib) - (tower + 201_326_592) / 2**30) < 0.011
    assert "not built" in text_only.sources["weights"]
    assert not any("encoder" in n for n in text_only.notes)


def test_tower_skipped_by_release_and_flag():
    _, qwen = facts_of("Qwen/Qwen3-VL-8B-Instruct")
    _, gemma = facts_of("google/gemma-3-27b-it")
    zero = {"limit_mm_per_prompt": {"image": 0, "video": 0}}
    assert tower_skipped(qwen, zero, versions.parse_version("0.11.0"))  # Qwen3-VL's own check
    assert not tower_skipped(qwen, zero, versions.parse_version("0.10.2"))
    assert not tower_skipped(qwen, {"limit_mm_per_prompt": {"image": 0}}, V019)  # video still served
    assert not tower_skipped(gemma, {"limit_mm_per_prompt": {"image": 0}}, versions.parse_version("0.14.0"))
    assert tower_skipped(gemma, {"limit_mm_per_prompt": {"image": 0}}, versions.parse_version("0.17.0"))
    assert tower_skipped(gemma, {"language_model_only": True}, V019) == "--language-model-only"
    assert tower_skipped(qwen, {"limit_mm_per_prompt": '{"image": 0, "video": 0}'}, V019)  # JSON text


def test_qwen3_vl_encoder_dummy_batch():
    _, facts = facts_of("Qwen/Qwen3-VL-8B-Instruct")
    enc, why = encoder_profile(facts, {}, V019, 256, 8192, 262144, 2, 1)
    assert why is None
    assert (enc.items, enc.tokens_per_item, enc.patches_per_item) == (1, 16384, 65536)
    assert enc.output_bytes == 536_870_912
    # the tower peak: per patch 2 x 1152 + 3 x 1152 + 2 x 4304 values in bf16, plus the outputs and pixel values
    assert enc.tower_peak_bytes == 65536 * (2 * 1152 + 3 * 1152 + 2 * 4304) * 2 + 536_870_912 + 201_326_592
    assert enc.held_bytes == 536_870_912 + 201_326_592
    enc2, _ = encoder_profile(facts, {}, V019, 256, 40000, 262144, 2, 1)
    assert enc2.items == 2 and enc2.output_bytes == 2 * 536_870_912
    # one image per prompt and one sequence cap the batch whatever the token budget
    one, _ = encoder_profile(facts, {"limit_mm_per_prompt": {"image": 1}}, V019, 1, 40000, 262144, 2, 1)
    assert one.items == 1


def test_gemma3_encoder_dummy_batch():
    _, facts = facts_of("google/gemma-3-27b-it")
    enc, _ = encoder_profile(facts, {}, V019, 256, 8192, 131072, 2, 1)
    assert (enc.items, enc.tokens_per_item, enc.patches_per_item) == (32, 256, 4096)
    assert enc.output_bytes == 32 * 256 * facts["hidden"] * 2
    capped, _ = encoder_profile(facts, {}, V019, 4, 8192, 512, 2, 1)
    assert capped.items == 8  # 4 sequences x min(999, 512 // 256) images
    no_chunk, _ = encoder_profile(facts, {"enable_chunked_prefill": False}, V019, 256, 1024, 131072, 2, 1)
    assert no_chunk.items == 4  # budget 1024 // 256


def test_encoder_profile_in_the_activation_peak():
    info, facts = facts_of("Qwen/Qwen3-VL-8B-Instruct")
    gpu = gpus.lookup("H100")
    args = {"max_model_len": 8192, "max_num_batched_tokens": 8192, "max_num_seqs": 16}
    b = compute_budget(info, gpu, args, {}, "0.19.0", 1)
    assert "multimodal encoder: 1 dummy image(s) of 16384 tokens" in b.sources["activation"]
    assert not any("encoder profiling is not estimated" in n for n in b.notes)
    # the tower's 65,536 patches outweigh a 16-sequence text pass: the peak is the tower's
    assert abs(b.activation_gib - (65536 * (2 * 1152 + 3 * 1152 + 2 * 4304) * 2 + 536_870_912 + 201_326_592)
               / 2**30) < 0.011
    # before 0.9 (and for processors vramlint does not know) the note stays
    old = compute_budget(info, gpu, args, {}, "0.8.5", 1)
    assert any("not estimated for this release" in n for n in old.notes)
    g4, _ = resolve_model("google/gemma-4-26B-A4B", OFFLINE)
    b4 = compute_budget(g4, gpus.lookup("A100-80GB"), {"max_model_len": 8192}, {}, "0.19.0", 1)
    assert not any("encoder profiling" in n for n in b4.notes)
    assert "multimodal encoder: 1 dummy video(s) of 2048 tokens" in b4.sources["activation"]
    b4_old = compute_budget(g4, gpus.lookup("A100-80GB"), {"max_model_len": 8192}, {}, "0.18.0", 1)
    assert any("Gemma 4 before vLLM 0.19" in n for n in b4_old.notes)


def test_gemma3_encoder_dummy_batch_before_0_17():
    """The items and held outputs release by release (gemma-3-27b: text hidden 5376, 256 tokens per image):

    0.9 rounds the item count up (cdiv) and does not cap it by max_model_len; 0.10 rounds down; 0.11+ caps the
    items per prompt by max_model_len // 256. 0.11 - 0.12 copy each item's 256 x 5376 output into an
    (encoder budget, 5376) tensor held through the text forward pass: 32 x 8192 x 5376 x 2 B = 2,818,572,288 B
    against 32 x 256 x 5376 x 2 B = 88,080,384 B in 0.13+."""
    _, facts = facts_of("google/gemma-3-27b-it")
    v = versions.parse_version
    cases = (("0.9.2", 8000, 31 + 1), ("0.10.0", 8000, 31), ("0.14.0", 8000, 31), ("0.9.2", 8192, 32))
    for version, mnbt, items in cases:
        enc, why = encoder_profile(facts, {}, v(version), 256, mnbt, 131072, 2, 1)
        assert why is None and enc.items == items, version
    assert encoder_profile(facts, {}, v("0.9.2"), 4, 8192, 512, 2, 1)[0].items == 32
    assert encoder_profile(facts, {}, v("0.11.0"), 4, 8192, 512, 2, 1)[0].items == 8
    padded, _ = encoder_profile(facts, {}, v("0.11.0"), 256, 8192, 131072, 2, 1)
    assert padded.output_bytes == 2_818_572_288 and "padded to the encoder budget of 8192" in padded.how
    # the copy holds the 256-token originals and the padded copies at once
    assert padded.tower_peak_bytes >= 2_818_572_288 + 88_080_384
    plain, _ = encoder_profile(facts, {}, v("0.13.0"), 256, 8192, 131072, 2, 1)
    assert plain.output_bytes == 88_080_384
    old, why = encoder_profile(facts, {}, v("0.8.5"), 256, 8192, 131072, 2, 1)
    assert old is None and "before 0.9" in why


def test_qwen3_vl_image_from_0_13_video_before():
    """0.13 - 0.16 count a video's tokens once (no 12.5 factor): at most 16,200 (3 frames, padded to 4), fewer
    than an image's 16,384, so the image is the dummy item as from 0.17; with images off the video is, and is not
    estimated."""
    _, facts = facts_of("Qwen/Qwen3-VL-8B-Instruct")
    for version in ("0.13.0", "0.14.0"):
        enc, why = encoder_profile(facts, {}, versions.parse_version(version), 256, 8192, 262144, 2, 1)
        assert why is None and (enc.modality, enc.items, enc.tokens_per_item, enc.output_bytes) == \
            ("image", 1, 16384, 536_870_912)
    enc, why = encoder_profile(facts, {"limit_mm_per_prompt": {"image": 0}}, versions.parse_version("0.14.0"),
                               256, 8192, 262144, 2, 1)
    assert enc is None and "video" in why


def test_qwen3_vl_dummy_video_0_11():
    """Qwen3-VL-30B-A3B on vLLM 0.11 (public log P32: 4 x RTX 3090, TP 4, max_model_len 65536, 2048 batched
    tokens): the frames grow to the 24,576 cap (each video of up to 24,576 frames has at most 16,200 tokens), and
    24,576 x 4096^2 px is resized by sqrt(24,576 x 4096^2 / 25,165,824) = 128 to 32 x 32 px: 12,288 x 2 x 2 =
    49,152 patches, 12,288 tokens, counted 12,288 x 12.5 = 153,600 ("Encoder cache will be initialized with a
    budget of 153600 tokens, and profiled with 1 video items"). Outputs 12,288 x 2048 x (1 + 3) x 2 B =
    201,326,592 B, each copied into a 153,600-row tensor: 2,516,582,400 B; pixel values 49,152 x 1536 x 2 B =
    150,994,944 B; all three held through the text forward pass: 2,868,903,936 B. The tower's own run, 49,152 x
    (2 x 1152 + (3 x 1152 + 2 x 4304) / 4) x 2 B + outputs + pixel values = 875,298,816 B, is smaller. With
    max_model_len 8192 the third frame's 16,200 tokens do not fit: 2 frames resized to 3520 px, 1 x 220 x 220 =
    48,400 patches, 12,100 tokens, counted 151,250."""
    _, facts = facts_of("Qwen/Qwen3-VL-30B-A3B-Instruct")
    v011 = versions.parse_version("0.11.0")
    enc, why = encoder_profile(facts, {}, v011, 256, 2048, 65536, 2, 4)
    assert why is None
    assert (enc.modality, enc.items, enc.tokens_per_item, enc.patches_per_item) == ("video", 1, 12288, 49152)
    assert "counted as 153600 tokens" in enc.how and "encoder budget of 153600" in enc.how
    assert enc.output_bytes == 2_516_582_400 and enc.held_bytes == 2_868_903_936
    assert enc.tower_peak_bytes == 2_868_903_936
    short, _ = encoder_profile(facts, {}, v011, 256, 2048, 8192, 2, 4)
    assert (short.tokens_per_item, short.patches_per_item) == (12100, 48400) and "151250" in short.how
    # 0.12 the same; with videos off the image, which fills the budget (no padding)
    assert encoder_profile(facts, {}, versions.parse_version("0.12.0"), 256, 2048, 65536, 2, 4)[0].held_bytes \
        == 2_868_903_936
    image, _ = encoder_profile(facts, {"limit_mm_per_prompt": {"video": 0}}, v011, 256, 2048, 65536, 2, 4)
    assert (image.modality, image.tokens_per_item, image.output_bytes) == ("image", 16384, 16384 * 8192 * 2)


def test_qwen3_vl_dummy_video_frames_follow_vllms_loop():
    """The shortcut for long sequences gives what vLLM's frame-by-frame loop gives."""
    from vramlint.budget.multimodal import _qwen3_vl_dummy_video, _qwen3_vl_video_grid

    _, facts = facts_of("Qwen/Qwen3-VL-30B-A3B-Instruct")
    vision = facts["vision"]

    def walked(seq_len):
        frames = 2
        while frames < 24576 and _qwen3_vl_video_grid(frames + 1, 4096, 16, 2, 2) // 4 <= seq_len:
            frames += 1
        return _qwen3_vl_video_grid(frames, 4096, 16, 2, 2)

    assert max(_qwen3_vl_video_grid(n, 4096, 16, 2, 2) // 4 for n in range(2, 24577)) == 16200
    for seq_len in (4096, 16199, 16384, 40000):
        assert _qwen3_vl_dummy_video(vision, seq_len)[1] == walked(seq_len), seq_len


def test_gemma4_encoder_dummy_video_and_images():
    """Gemma 4 (vLLM 0.19+, gemma4_mm.py; gemma-4-26B-A4B: tower hidden 1152, intermediate 4304, patch 16, pooling
    3, text hidden 2816). Per item vLLM counts an image as default_output_length = 280 tokens and a video as 32
    frames x (70 + 8) = 2,496, so the video is the dummy item: 32 frames of the builder's 224 x 224 px, each
    processed as an image of at most 70 soft tokens (padded to 70 x 9 = 630 patches; scaled by sqrt(630 / 14^2)
    and rounded down to 48 px: 384 px, 24^2 = 576 patches, 64 tokens). At 2048 batched tokens the budget
    max(2048, 2496) holds one video: outputs 32 x 64 x 2816 x 2 B = 11,534,336 B, pixel values (pre-patchified, 3 x
    16 x 16 per patch) 20,160 x 768 x 2 B = 30,965,760 B, held through the text pass: 42,500,096 B. The tower
    takes one frame at a time: 630 x (2 x 1152 + 3 x 1152 + 2 x 4304) x 2 B + outputs + pixel values = 60,603,776
    B. With videos off: 2048 // 280 = 7 images of 2,520 patches, 768 px -> 48^2 = 2,304 patches -> 256 tokens."""
    _, facts = facts_of("google/gemma-4-26B-A4B")
    enc, why = encoder_profile(facts, {}, V019, 256, 2048, 131072, 2, 1)
    assert why is None
    assert (enc.modality, enc.items, enc.tokens_per_item, enc.patches_per_item) == ("video", 1, 2048, 20160)
    assert enc.output_bytes == 11_534_336 and enc.held_bytes == 42_500_096
    assert enc.tower_peak_bytes == 60_603_776 and "counted as 2496 tokens" in enc.how
    images, _ = encoder_profile(facts, {"limit_mm_per_prompt": {"video": 0}}, V019, 256, 2048, 131072, 2, 1)
    assert (images.modality, images.items, images.tokens_per_item, images.patches_per_item) == \
        ("image", 7, 256, 2520)
    assert tower_skipped(facts, {"limit_mm_per_prompt": {"image": 0, "video": 0}}, V019)
    assert not tower_skipped(facts, {"limit_mm_per_prompt": {"image": 0}}, V019)
