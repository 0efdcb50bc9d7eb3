"""Multimodal models: the vision tower at load time and in the profiling run (V1).

Load time (stage 2):

* The vision tower is not built when every modality it serves is limited to 0 items per prompt
  (``--limit-mm-per-prompt '{"image": 0, "video": 0}'``, or ``--language-model-only``, 0.17+): its weights
  are not allocated. Qwen3-VL / Qwen3.5 did this themselves from 0.11 (``self.visual = None``); from 0.17 every
  model that builds its tower inside ``SupportsMultiModal._mark_tower_model`` does (``no_init_weights`` ->
  ``StageMissingLayer``).
* Qwen3-VL allocates its deepstack buffers when it builds the tower: ``deepstack_num_level`` tensors of
  ``max_num_batched_tokens x text hidden size`` in the model dtype (``Qwen3VLForConditionalGeneration.__init__``,
  0.11 - 0.21), inside "Model loading took".

Profiling run (stage 3), V1 0.17+ (``GPUModelRunner.profile_run``; ``MultiModalBudget``): before the text
forward pass vLLM runs the encoder on a dummy batch of the modality with the most tokens per item, of

    items = max(1, min(encoder_budget // tokens_per_item, max_num_seqs x items_per_prompt))
    encoder_budget = max(max_num_batched_tokens, tokens_per_item)        (compute_mm_encoder_budget)
    items_per_prompt = max(1, min(limit_mm_per_prompt (default 999), max_model_len // tokens_per_item))

(without chunked prefill ``max_num_seqs`` is first capped at ``max_num_batched_tokens // tokens_per_item``),
and keeps the encoder outputs (items x tokens x output width, Qwen3-VL's deepstack levels concatenated) in
the encoder cache while the text forward pass and the sampler run. The measured peak is therefore

    max(vision-tower peak, encoder outputs + text forward / sampler peak)

The tokens per item come from the model's processor: Qwen3-VL's image processor resizes to at most
16,777,216 pixels (``size.longest_edge`` of its preprocessor config; 0.17+ counts a video item as 2 frames,
fewer tokens than an image), so an image is (4096 / patch)^2 / merge^2 tokens (16,384 for patch 16, merge 2)
from (4096 / patch)^2 patches; Qwen3.5 uses the same processor classes. Gemma 3 maps each 896 px image (no
pan-and-scan, the default) to 256 tokens from (896 / 14)^2 = 4096 patches. Qwen2.5-VL's largest image is the
largest count of merged patches up to ``max_pixels`` (12,845,056 in its preprocessor config) / 28^2 that factors
with an aspect ratio of at most 200: 16,384 tokens from 65,536 patches (0.14+). Mistral 3 (Pixtral-HF tower) maps
its ``image_size`` (1540 px) to (1540 / 14)^2 patches and (1540 / 28)^2 tokens; without xformers (not a wheel
dependency from 0.12) the tower builds one dense block attention mask over every patch of the dummy batch, in
the patch dtype, until ``MMEncoderAttention`` replaces it in 0.29. In 0.11 xformers is a dependency of the x86-64
wheel, and both Pixtral towers attend through its block-diagonal bias (no dense mask) below compute capability 10.0
(the dense mask from 10.0, where vLLM turns xformers off); 0.11 counts an image as its placeholder's contiguous
length, a break token after each row (55 x 56 = 3,080 tokens), and the encoder outputs 55^2 rows. A checkpoint in the Mistral format
(params.json, loaded by default from 0.12) runs as ``PixtralForConditionalGeneration`` instead, whose tower is
plain ``nn.Linear``: whole on every tensor-parallel rank, at load time and in the profiling run
(:func:`tower_replicated`).

Before 0.17 the items follow each release's own formula (:func:`_dummy_items`), and 0.11 - 0.12 copy each item's
output into an (encoder budget, width) tensor that the encoder cache holds through the text forward pass; the
copying loop's variable keeps the last original output (for Qwen a view of the tower's one output tensor) alive
until the sampler's output takes its name. Qwen3-VL in 0.11 - 0.12 counts each video token 12.5 times (its
timestamp text), so its dummy item is a video: as many frames of the largest image as ``max_model_len`` holds, up
to 24,576, resized together to the video processor's 25,165,824 px (:func:`_qwen3_vl_dummy_video`: 12,288 tokens,
49,152 patches, counted 153,600, from 16,200 tokens of sequence length); from 0.13 a video's tokens are counted
once, at most 16,200, and the 16,384-token image is the dummy item. In every release read (0.11, 0.13, 0.19, 0.26)
the dummy batch's pixel values (``batched_dummy_mm_inputs``, on the GPU in the model dtype) stay referenced until
``profile_run`` returns, so they are held through the tower's run and the text forward pass.

The vision tower's own peak is not something vLLM's code states (it measures it); it is estimated like the
text forward pass: per patch, the residual stream and one layer's attention and MLP intermediates
((3 x hidden + 2 x intermediate) / tp, the tower's linear layers being tensor-parallel) in the model dtype,
plus the outputs and the pixel values. Gemma 4 (0.19+) counts an image as ``default_output_length`` (280) tokens
and a video as 32 frames x (70 + 8), so its dummy item is a video of 32 frames of 224 x 224 px (the image
processor has no size: the dummy builder's default), each padded to 70 x 3^2 = 630 patches; the tower takes one
frame (or image) at a time (``_process_video_input`` / ``_process_image_input`` loop over them), so only the
outputs and pixel values of the batch add up. Qwen2-VL is estimated for 0.10.2 (the release read): the Qwen2.5-VL image (the same ``max_pixels``), through its
tower's QuickGELU MLP, with the dummy batch's float32 pixel values (moved to the GPU uncast) held and the tower's
copy in the model dtype. Llama 4 (its tower counted and split by TP, its processor's dummy
tiles not modelled), InternVL, Gemma 4 before 0.19 and releases before 0.9 keep the note that the encoder profile is not estimated; so does a
video dummy item from 0.13 (images limited to 0); ``--mm-processor-kwargs`` overrides of the image size (Gemma 4's
``max_soft_tokens``, 0.26) are not read.
"""

from __future__ import annotations

import math

from vramlint import versions
from vramlint.budget.common import config_arg, truthy
from vramlint.lean_dataclass import dataclass

VLLM_SOURCES = (
    "vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.profile_run (encoder dummy batch, encoder_cache held "
    "through the dummy forward and sampler run; 0.14 - 0.21)",
    "vllm/multimodal/encoder_budget.py::MultiModalBudget._get_max_items (0.17 - 0.21; v1/worker/utils.py in "
    "0.14), vllm/v1/core/encoder_cache_manager.py::compute_mm_encoder_budget",
    "vllm/config/multimodal.py::MultiModalConfig.get_limit_per_prompt (default 999; 0 with language_model_only)",
    "vllm/model_executor/models/interfaces.py::SupportsMultiModal._mark_tower_model (0.17+)",
    "vllm/model_executor/models/qwen3_vl.py: visual skipped with image and video limits 0 (0.11+), "
    "deepstack_input_embeds buffers, Qwen3VLProcessingInfo.get_max_image_tokens / get_max_video_tokens "
    "(video_soft_tokens x 12.5 in 0.11 - 0.12), _get_vision_info, _MAX_FRAMES_PER_VIDEO = 24576, "
    "Qwen3VLDummyInputsBuilder (do_resize False); qwen2_vl.py::_get_max_video_frames, "
    "get_num_frames_with_most_features",
    "transformers/models/qwen3_vl/video_processing_qwen3_vl.py::smart_resize (frames x height x width within "
    "size.longest_edge, 25,165,824 in Qwen3-VL's video_preprocessor_config.json)",
    "vllm/v1/worker/gpu_model_runner.py::profile_run: batched_dummy_mm_inputs referenced until it returns "
    "(0.11, 0.13, 0.19, 0.26); the padding loop's variable (0.11 - 0.12); "
    "vllm/multimodal/processing.py::InputProcessingContext._postprocess_output (pixel values in the model dtype)",
    "vllm/model_executor/models/gemma3_mm.py::Gemma3ProcessingInfo.get_num_image_tokens (image_seq_length)",
    "vllm/model_executor/models/gemma4_mm.py (0.19, 0.26): Gemma4ProcessingInfo.get_mm_max_tokens_per_item, "
    "_compute_num_soft_tokens, _VIDEO_MAX_SOFT_TOKENS = 70, _VIDEO_MAX_FRAMES = 32, Gemma4DummyInputsBuilder "
    "(224 px without a size dict), Gemma4ForConditionalGeneration._process_image_input / _process_video_input "
    "(one image or frame at a time through the tower)",
    "vllm/v1/worker/gpu_model_runner.py::profile_run (0.9 - 0.13: dummy items, outputs padded to the encoder "
    "budget in 0.11 - 0.12), vllm/v1/worker/utils.py::MultiModalBudget.get_max_items (0.11 - 0.16)",
    "vllm/model_executor/models/qwen2_vl.py::Qwen2VLProcessingInfo.get_image_size_with_most_features, "
    "get_num_frames_with_most_features; qwen2_5_vl.py (visual None with limits 0, 0.14+)",
    "vllm/model_executor/models/mistral3.py, pixtral.py::PixtralHFEncoderInfo, PixtralHFVisionModel "
    "(generate_block_attention_mask without xformers, 0.12 - 0.28; MMEncoderAttention from 0.29)",
    "vllm/model_executor/models/pixtral.py (0.11.0): USE_XFORMERS_OPS (off from compute capability 10.0), "
    "VisionTransformer / PixtralHFVisionModel BlockDiagonalMask; vllm/multimodal/profiling.py::"
    "get_mm_max_contiguous_tokens (0.11.0 wheel; xformers a dependency on x86-64 Linux)",
)

# Qwen3-VL's preprocessor_config.json: size.longest_edge (pixels of the largest image after resizing)
QWEN3_VL_MAX_PIXELS = 16_777_216
# Qwen3-VL's video_preprocessor_config.json: size.longest_edge, the pixels of all frames of a video together
QWEN3_VL_VIDEO_MAX_PIXELS = 25_165_824
# Gemma 4 (vllm/model_executor/models/gemma4_mm.py, 0.19+): the vision config's default_output_length (soft tokens
# per image), the video constants _VIDEO_MAX_SOFT_TOKENS / _VIDEO_MAX_FRAMES, and the dummy inputs' size (the
# image processor has no size dict: the builder falls back to 224 x 224)
GEMMA4_IMAGE_SOFT_TOKENS = 280
GEMMA4_VIDEO_SOFT_TOKENS = 70
GEMMA4_VIDEO_FRAMES = 32
GEMMA4_DUMMY_SIDE = 224
# vllm/model_executor/models/qwen3_vl.py::_MAX_FRAMES_PER_VIDEO (0.11+)
QWEN3_VL_MAX_FRAMES_PER_VIDEO = 24_576
GEMMA3_TOKENS_PER_IMAGE = 256
# Qwen2.5-VL's preprocessor_config.json: max_pixels (size.longest_edge), 16384 x 28 x 28
QWEN2_5_VL_MAX_PIXELS = 12_845_056


def _limits(args: dict) -> dict:
    raw = config_arg(args, "limit_mm_per_prompt")
    if raw is None:
        return {}
    out = {}
    for modality, value in raw.items():
        if isinstance(value, dict):  # {"image": {"count": 1, "width": ...}} (0.11+ form)
            value = value.get("count", 999)
        try:
            out[str(modality)] = int(value)
        except (TypeError, ValueError):
            continue
    return out


def _family(facts: dict) -> str | None:
    vision = facts.get("vision") or {}
    if not vision:
        return None
    if vision.get("merge"):
        return "qwen3_vl"
    if vision.get("style") == "qwen2_5_vl":
        return "qwen2_5_vl"
    if vision.get("style") == "qwen2_vl":
        return "qwen2_vl"
    if facts.get("arch") == "Mistral3ForConditionalGeneration" and vision.get("image"):
        return "mistral3"
    if (facts.get("type") or "").startswith("gemma3") and vision.get("image"):
        return "gemma3"
    if vision.get("style") == "gemma4":
        return "gemma4"
    if vision.get("style") == "llama4":
        return "llama4"
    return "other"


def _modalities(family: str | None) -> tuple[str, ...]:
    return ("image", "video") if family in ("qwen3_vl", "qwen2_5_vl", "qwen2_vl", "gemma4") else ("image",)


def tower_skipped(facts: dict, args: dict, key: versions.VersionKey) -> str | None:
    """Why the vision tower is not built (its weights not allocated), or None when it is."""
    family = _family(facts)
    if family is None:
        return None
    generic = versions.at_least(key, 0, 17)
    own = {"qwen3_vl": (0, 11), "qwen2_5_vl": (0, 14)}.get(family)  # visual = None with both limits 0
    if not generic and not (own and versions.at_least(key, *own)):
        return None
    if generic and truthy(args.get("language_model_only")):
        return "--language-model-only"
    limits = _limits(args)
    if all(limits.get(m, 999) == 0 for m in _modalities(family)):
        return "--limit-mm-per-prompt sets every modality of the tower to 0"
    return None


def audio_tower_skipped(facts: dict, args: dict, key: versions.VersionKey) -> str | None:
    """Why Gemma 4's audio tower is not built, or None when it is (or the model has none): the model marks it as
    the tower of the "audio" modality (``_mark_tower_model``, gemma4_mm.py), which vLLM skips when that modality's
    limit is 0 or with --language-model-only (0.17+, as for the vision tower)."""
    if not facts.get("audio") or not versions.at_least(key, 0, 17):
        return None
    if truthy(args.get("language_model_only")):
        return "--language-model-only"
    if _limits(args).get("audio", 999) == 0:
        return "--limit-mm-per-prompt sets audio to 0"
    return None


def deepstack_buffer_bytes(facts: dict, max_num_batched_tokens: int, dtype_bytes: int) -> int:
    """Qwen3-VL's deepstack input buffers, allocated with the tower (0 for other models)."""
    vision = facts.get("vision") or {}
    levels = int(vision.get("deepstack") or 0)
    return levels * max_num_batched_tokens * (facts.get("hidden") or 0) * dtype_bytes


@dataclass
class EncoderProfile:
    modality: str
    items: int
    tokens_per_item: int
    patches_per_item: int
    output_bytes: int  # encoder outputs held in the encoder cache during the text forward pass
    tower_peak_bytes: int  # estimated peak while the tower runs on the dummy batch (outputs included)
    how: str
    held_bytes: int = 0  # all the dummy batch keeps during the text forward pass: outputs, copies, pixel values


def encoder_profile(facts: dict, args: dict, key: versions.VersionKey, max_num_seqs: int,
                    max_num_batched_tokens: int, max_model_len: int, dtype_bytes: int,
                    tp: int, gpu=None) -> tuple[EncoderProfile | None, str | None]:
    """The encoder part of V1's profiling run, or (None, why it is not estimated); ``gpu`` (a GpuSpec) decides
    the attention of the Pixtral tower in 0.11 (:func:`_pixtral_xformers_0_11`)."""
    family = _family(facts)
    audio_dummy = (facts.get("audio") and _limits(args).get("audio", 999) != 0
                   and _limits(args).get("video", 999) == 0 and not truthy(args.get("language_model_only")))
    if audio_dummy and not truthy(args.get("skip_mm_profiling")):
        # Gemma 4 E2B / E4B: with videos off the dummy item is the modality with the most tokens per item
        # (get_modality_with_max_tokens): an audio clip's audio_seq_length (the processor's, not config.json's)
        # against an image's soft tokens; the audio tower's profile is not modelled
        return None, ("multimodal encoder profiling is not estimated: with videos off the dummy item may be an "
                      "audio clip (the audio tower's activations are not modelled)")
    if family is None:
        return None, None
    if tower_skipped(facts, args, key):
        return None, None
    if truthy(args.get("skip_mm_profiling")):
        return None, None
    if not versions.at_least(key, 0, 9):
        return None, "multimodal encoder profiling is not estimated for this release (before 0.9)"
    limits = _limits(args)
    # Qwen3-VL in 0.11 - 0.12 counts a video's tokens 12.5 times (its timestamps), more than any image: the dummy
    # item is the longest video the sequence length allows (_qwen3_vl_dummy_video)
    video_dummy = (family == "qwen3_vl" and not versions.at_least(key, 0, 13) and limits.get("video", 999) != 0)
    if family == "qwen2_5_vl" and not versions.at_least(key, 0, 14):
        return None, "multimodal encoder profiling is not estimated for Qwen2.5-VL before vLLM 0.14"
    if family == "qwen2_vl" and not (versions.at_least(key, 0, 10, 2) and not versions.at_least(key, 0, 11)):
        return None, "multimodal encoder profiling is not estimated for Qwen2-VL outside vLLM 0.10.2 (the release read)"
    if family == "mistral3" and not versions.at_least(key, 0, 11):
        return None, "multimodal encoder profiling is not estimated for Mistral 3 before vLLM 0.11"
    xformers = None
    if family == "mistral3" and not versions.at_least(key, 0, 12):
        xformers = _pixtral_xformers_0_11(gpu)
        if xformers is None:
            return None, ("multimodal encoder profiling is not estimated for Mistral 3 on vLLM 0.11 on this GPU (the "
                          "tower's attention depends on whether xformers is installed: a wheel dependency on x86-64 "
                          "Linux only)")
    if family in ("qwen2_5_vl", "qwen2_vl") and limits.get("video", 999) not in (0, 999):
        # Qwen2VLProcessingInfo.get_num_frames_with_most_features: with fewer videos per prompt a video item
        # gets more frames (as many as max_model_len holds, up to 32), more tokens than an image
        return None, ("multimodal encoder profiling is not estimated when --limit-mm-per-prompt allows a few "
                      "videos: the dummy video's frames depend on the sequence length")
    vision = facts["vision"]
    mask = 0
    if family in ("qwen2_5_vl", "qwen2_vl"):
        # Qwen2-VL's preprocessor has the same max_pixels; with the default 999 videos per prompt a video item
        # gets one frame (get_num_frames_with_most_features), padded to the temporal patch: the image's tokens,
        # and get_modality_with_max_tokens keeps the image on the tie
        patch, merge = vision.get("patch") or 14, vision.get("spatial_merge") or 2
        unit = patch * merge
        tokens = _qwen2_vl_max_tokens(QWEN2_5_VL_MAX_PIXELS // (unit * unit))
        patches = tokens * merge * merge
        width = vision.get("out") or facts.get("hidden") or 0
        modality = "image"
    elif family == "mistral3":
        patch, merge = vision.get("patch") or 14, vision.get("spatial_merge") or 2
        patches = (vision["image"] // patch) ** 2
        tokens = (vision["image"] // (patch * merge)) ** 2
        if not versions.at_least(key, 0, 12):
            # 0.11: the tokens per item are the placeholder's contiguous length (get_mm_max_contiguous_tokens),
            # an [IMG_BREAK] / [IMG_END] after each row of merged patches
            side = vision["image"] // (patch * merge)
            counted = side * (side + 1)
        width = facts.get("hidden") or 0
        modality = "image"
    elif video_dummy:
        tokens, patches, counted = _qwen3_vl_dummy_video(vision, max_model_len)
        width = (vision.get("out") or facts.get("hidden") or 0) * (1 + int(vision.get("deepstack") or 0))
        modality = "video"
    elif family == "qwen3_vl":
        patch, merge = vision.get("patch") or 16, vision.get("merge") or 2
        side = int(QWEN3_VL_MAX_PIXELS ** 0.5) // (patch * merge) * merge  # patches per side
        patches = side * side
        tokens = patches // (merge * merge)
        width = (vision.get("out") or facts.get("hidden") or 0) * (1 + int(vision.get("deepstack") or 0))
        modality = "image"
    elif family == "gemma3":
        patches = (vision["image"] // (vision.get("patch") or 14)) ** 2
        tokens = GEMMA3_TOKENS_PER_IMAGE
        width = facts.get("hidden") or 0
        modality = "image"
    elif family == "gemma4":
        if not versions.at_least(key, 0, 19):
            return None, "multimodal encoder profiling is not estimated for Gemma 4 before vLLM 0.19"
        pooled = (vision.get("pooling") or 3) ** 2
        if limits.get("video", 999) != 0:
            # the video (32 frames x (70 soft tokens + 8), 2,496) outweighs an image (default_output_length, 280)
            frame_tokens, frames, modality = GEMMA4_VIDEO_SOFT_TOKENS, GEMMA4_VIDEO_FRAMES, "video"
            counted = frames * (frame_tokens + 8)
        else:
            frame_tokens, frames, modality = vision.get("tokens") or GEMMA4_IMAGE_SOFT_TOKENS, 1, "image"
            counted = frame_tokens
        # each frame (or image) is padded to max_soft_tokens x pooling^2 patches and runs through the tower alone
        run_patches = frame_tokens * pooled
        patches = frames * run_patches
        tokens = frames * _gemma4_soft_tokens(vision, GEMMA4_DUMMY_SIDE, frame_tokens)
        width = facts.get("hidden") or 0
    else:
        return None, ("multimodal encoder profiling is not estimated for this model's processor: the real "
                      "activation peak can be much larger")
    if not video_dummy and family != "gemma4" and not (family == "mistral3" and xformers is not None):
        counted = tokens  # the tokens vLLM counts per item are the encoder's output rows
    limit = limits.get(modality, 999)
    if limit == 0:  # the other modality (video) is the dummy one: not estimated
        return None, "multimodal encoder profiling (video dummy items) is not estimated"
    budget = max(max_num_batched_tokens, counted)
    items = _dummy_items(key, args, limit, counted, budget, max_num_seqs, max_num_batched_tokens, max_model_len)
    held_tokens = tokens
    padded = versions.at_least(key, 0, 11) and not versions.at_least(key, 0, 13) and tokens < budget
    if padded:
        # 0.11 - 0.12: each item's output is copied into a (encoder_budget, width) tensor kept in the encoder
        # cache ("dummy embeddings of size (encode_budget, hidden_size)")
        held_tokens = budget
    output_bytes = items * held_tokens * width * dtype_bytes
    # The dummy batch's pixel values (batched_dummy_mm_inputs, in the model dtype: the processor's output is cast
    # to it) stay referenced until profile_run returns, through the text forward pass and the sampler (0.11+)
    inputs = (items * patches * _pixel_elements_per_patch(family, vision) * dtype_bytes
              if versions.at_least(key, 0, 11) else 0)
    cast = 0
    if family == "qwen2_vl":
        # 0.10.2: _get_mm_dummy_batch moves the processor's float32 pixel values to the GPU uncast
        # (group_mm_kwargs_by_modality) and profile_run keeps them until it returns; the tower reads a copy in
        # its own dtype (Qwen2VLForConditionalGeneration._process_image_input: pixel_values.type(visual.dtype))
        cast = items * patches * _pixel_elements_per_patch(family, vision) * dtype_bytes
        inputs = items * patches * _pixel_elements_per_patch(family, vision) * 4
    hidden, inter = vision["hidden"], vision.get("inter") or 4 * vision["hidden"]
    data_parallel = tp > 1 and encoder_data_parallel(facts, args, key)
    whole = tp > 1 and mistral_format(facts, args, key)  # every rank runs the whole batch through the whole tower
    split = 1 if data_parallel or whole else max(1, tp)
    per_patch = (2 * hidden + (3 * hidden + 2 * inter) / split) * dtype_bytes
    originals = items * tokens * width * dtype_bytes
    run_items = items
    if data_parallel:
        # run_dp_sharded_*_vision_model: each rank encodes its share of the items with the whole tower, pads its
        # outputs to the largest share and all-gathers them (tp x share outputs)
        run_items = -(-items // tp)
        originals = tp * run_items * tokens * width * dtype_bytes
    if family == "mistral3" and (_pixtral_dense_mask(key) or xformers is False):
        # PixtralHFVisionModel without xformers: generate_block_attention_mask, one (N, N) mask in the patch dtype
        # over the N patches of the whole dummy batch, passed to scaled_dot_product_attention in every layer
        mask = (items * patches) ** 2 * dtype_bytes
    if family != "gemma4":
        run_patches = run_items * patches  # the whole dummy batch in one forward pass of the tower
    tower_peak = int(run_patches * per_patch) + originals + mask + inputs + cast
    held = output_bytes + inputs
    if padded:
        # the copies are made in a loop whose variable keeps the last original -- a view of the tower's one output
        # tensor, so all of it -- until the sampler's output takes the name after the text forward pass
        held += originals
        tower_peak = max(tower_peak, held)
    how = (f"{items} dummy {modality}(s) of {tokens} tokens ({patches} patches each) through the vision tower"
           + (f" (counted as {counted} tokens: 12.5 per video token, 0.11 - 0.12)" if video_dummy else "")
           + (f" (counted as {counted} tokens; one {'frame' if modality == 'video' else 'image'} of {run_patches} "
              "patches at a time through the tower)" if family == "gemma4" else "")
           + f"; encoder outputs {output_bytes / (1 << 30):.2f} GiB held during the text forward pass"
           + (f" (each padded to the encoder budget of {budget} tokens, 0.11 - 0.12, with the unpadded outputs "
              f"{originals / (1 << 30):.2f} GiB)" if padded else "")
           + (f" and its pixel values {inputs / (1 << 30):.2f} GiB" if inputs else "")
           + (f"; the tower's block attention mask {mask / (1 << 30):.2f} GiB" if mask else "")
           + (f"; --mm-encoder-tp-mode data: {run_items} item(s) per rank through the whole tower"
              if data_parallel else "")
           + ("; the Mistral format's replicated tower: every rank runs the whole batch" if whole else ""))
    return EncoderProfile(modality, items, tokens, patches, output_bytes, tower_peak, how, held), None


def _dummy_items(key: versions.VersionKey, args: dict, limit: int, tokens: int, budget: int, max_num_seqs: int,
                 max_num_batched_tokens: int, max_model_len: int) -> int:
    """How many dummy items of ``tokens`` each the profiling run encodes, release by release.

    * 0.9: ``min(cdiv(encoder_budget, tokens), max_num_reqs x limit)`` (gpu_model_runner.py::profile_run);
    * 0.10: ``max(1, min(encoder_budget // tokens, max_num_reqs x limit))``;
    * 0.11+: ``MultiModalBudget.get_max_items`` (v1/worker/utils.py; multimodal/encoder_budget.py from 0.17): the
      items per prompt capped at ``max_model_len // tokens`` (at least 1), and without chunked prefill the
      requests capped at ``max_num_batched_tokens // tokens``.

    ``encoder_budget`` is ``max(max_num_batched_tokens, tokens)`` throughout (``compute_mm_encoder_budget``)."""
    if not versions.at_least(key, 0, 10):
        return min(-(-budget // tokens), max_num_seqs * limit)
    if not versions.at_least(key, 0, 11):
        return max(1, min(budget // tokens, max_num_seqs * limit))
    per_prompt = max(1, min(limit, max_model_len // tokens))
    reqs = max_num_seqs
    if args.get("enable_chunked_prefill") is not None and not truthy(args.get("enable_chunked_prefill")):
        reqs = min(reqs, max_num_batched_tokens // tokens)
    return max(1, min(budget // tokens, reqs * per_prompt))


def _gemma4_soft_tokens(vision: dict, side: int, max_soft_tokens: int) -> int:
    """Soft tokens of a ``side`` x ``side`` image once the padding is stripped
    (``Gemma4ProcessingInfo._compute_num_soft_tokens``): the image is scaled so that its patches fill
    ``max_soft_tokens x pooling^2``, rounded down to whole ``patch x pooling`` units, and pooled."""
    patch, pooling = vision.get("patch") or 16, vision.get("pooling") or 3
    unit = patch * pooling
    scale = math.sqrt(max_soft_tokens * pooling * pooling / ((side / patch) * (side / patch)))
    target = max(unit, int(math.floor(side * scale / unit)) * unit)
    return (target // patch) * (target // patch) // (pooling * pooling)


def _pixel_elements_per_patch(family: str | None, vision: dict) -> int:
    """Elements of the dummy batch's pixel values per patch: Qwen's processors flatten ``temporal_patch_size``
    frames of ``channels x patch x patch`` into each patch row (an image is its frame repeated); Gemma 3 and
    Pixtral pass (items, channels, height, width) images, channels x patch^2 per patch."""
    patch = vision.get("patch") or 14
    temporal = (vision.get("temporal") or 2) if family in ("qwen3_vl", "qwen2_5_vl", "qwen2_vl") else 1
    return (vision.get("channels") or 3) * temporal * patch * patch


def _qwen3_vl_video_grid(frames: int, side: int, patch: int, merge: int, temporal: int) -> int:
    """Patches of a ``frames``-frame dummy video of ``side`` x ``side`` px for Qwen3-VL
    (``Qwen3VLProcessingInfo._get_vision_info`` with the video processor): the frames are resized together so
    that frames x height x width stays within the video processor's ``longest_edge`` (transformers'
    ``Qwen3VLVideoProcessor`` ``smart_resize``: scale by sqrt(frames x h x w / max_pixels), round down to
    ``patch x merge``, at least one unit), and an odd frame count is padded by one frame."""
    factor = patch * merge
    height = round(side / factor) * factor
    if round(frames / temporal) * temporal * height * height > QWEN3_VL_VIDEO_MAX_PIXELS:
        beta = math.sqrt(frames * side * side / QWEN3_VL_VIDEO_MAX_PIXELS)
        height = max(factor, math.floor(side / beta / factor) * factor)
    grid_t = max((frames + frames % temporal) // temporal, 1)
    return grid_t * (height // patch) ** 2


def _qwen3_vl_dummy_video(vision: dict, max_model_len: int) -> tuple[int, int, int]:
    """Qwen3-VL's largest dummy video in vLLM 0.11 - 0.12: (encoder output tokens, patches, tokens vLLM counts).

    ``get_num_frames_with_most_features(seq_len=max_model_len, {"video": 1})``: starting from 2 frames of the
    largest image (4096 x 4096 px for ``longest_edge`` 16,777,216), add frames while the video's tokens stay within
    ``max_model_len`` (``_get_max_video_frames``), at most ``_MAX_FRAMES_PER_VIDEO`` (24,576); the dummy video has
    that many frames, resized as :func:`_qwen3_vl_video_grid` says (``do_resize`` False: the dummy is already that
    size). ``get_max_video_tokens`` counts each of its tokens 12.5 times ("<{timestamp} seconds>" plus the vision
    start, pad and end tokens), so the video is the modality with the most tokens; the encoder still outputs one
    row per merged patch. At 24,576 frames of 32 x 32 px: 12,288 tokens, 49,152 patches, counted 153,600."""
    patch, merge = vision.get("patch") or 16, vision.get("merge") or 2
    temporal = vision.get("temporal") or 2
    side = math.isqrt(QWEN3_VL_MAX_PIXELS) // (patch * merge) * (patch * merge)
    unit = merge * merge

    def tokens(n: int) -> int:
        return _qwen3_vl_video_grid(n, side, patch, merge, temporal) // unit

    # Every frame count from 2 is resized (2 x 4096^2 px exceed max_pixels) to frames x height^2 <= max_pixels with
    # height >= patch x merge up to the cap, so a video has at most (frames + 1) / (2 x frames) x max_pixels /
    # (patch x merge)^2 <= 2/3 x 24,576 = 16,384 tokens: a sequence that long reaches the cap without walking
    # vLLM's loop frame by frame
    bound = 2 * QWEN3_VL_VIDEO_MAX_PIXELS // (3 * (patch * merge) ** 2)
    if (max_model_len >= bound and 2 * side * side > QWEN3_VL_VIDEO_MAX_PIXELS
            and QWEN3_VL_MAX_FRAMES_PER_VIDEO * (patch * merge) ** 2 <= QWEN3_VL_VIDEO_MAX_PIXELS):
        frames = QWEN3_VL_MAX_FRAMES_PER_VIDEO
    else:
        frames = 2
        while frames < QWEN3_VL_MAX_FRAMES_PER_VIDEO and tokens(frames + 1) <= max_model_len:
            frames += 1
    patches = _qwen3_vl_video_grid(frames, side, patch, merge, temporal)
    return patches // unit, patches, int(patches // unit * 12.5)


def _qwen2_vl_max_tokens(max_seq_len: int) -> int:
    """Tokens of Qwen2-VL's largest dummy image (``Qwen2VLProcessingInfo.get_image_size_with_most_features``,
    0.14+): the largest count of merged patches up to ``max_pixels // (patch x merge)^2`` that factors into
    height x width with an aspect ratio of at most 200."""
    for seq_len in range(max_seq_len, 0, -1):
        height = next(d for d in range(math.isqrt(seq_len), 0, -1) if seq_len % d == 0)
        if (seq_len // height) / height <= 200:
            return seq_len
    return 1


def _pixtral_dense_mask(key: versions.VersionKey) -> bool:
    """Whether PixtralHFVisionModel builds a dense attention mask: the wheel required xformers up to 0.11
    (``BlockDiagonalMask``, no dense mask), not from 0.12; from 0.29 the tower uses ``MMEncoderAttention``
    (variable-length attention, no mask)."""
    return versions.at_least(key, 0, 12) and not versions.at_least(key, 0, 29)


def _pixtral_xformers_0_11(gpu) -> bool | None:
    """Whether vLLM 0.11's Pixtral towers (pixtral.py: ``VisionTransformer`` of the Mistral format and
    ``PixtralHFVisionModel``) attend through xformers' ``BlockDiagonalMask`` (no dense mask): xformers is a
    dependency of the 0.11 wheel on x86-64 Linux (``xformers==0.0.32.post1; platform_machine == "x86_64"``), and
    ``USE_XFORMERS_OPS`` is off on compute capability 10.0+ ("Xformers FA is not compatible with B200"), where
    ``generate_block_attention_mask`` builds the dense mask. None where it cannot be told: no GPU, not CUDA, or a
    Grace (aarch64) part whose wheel has no xformers dependency."""
    if gpu is None or getattr(gpu, "vendor", "nvidia") != "nvidia":
        return None
    if tuple(gpu.compute_capability) >= (10, 0):
        return False
    if str(gpu.name).upper().startswith(("GH200", "GB200")):
        return None
    return True


def encoder_data_parallel(facts: dict, args: dict, key: versions.VersionKey) -> bool:
    """Whether ``--mm-encoder-tp-mode data`` applies: the model's class declares ``supports_encoder_tp_data``
    (Qwen2.5-VL, Qwen3-VL / Qwen3.5; read in 0.11+, the flag exists from 0.10.2); for other models
    ``ModelConfig`` falls back to ``weights`` ("This model does not support `--mm-encoder-tp-mode data`").
    Its vision layers are then replicated (``is_vit_use_data_parallel``), whole on every rank."""
    if str(args.get("mm_encoder_tp_mode") or "").lower() != "data" or not versions.at_least(key, 0, 11):
        return False
    family = _family(facts)
    # Llama4ForConditionalGeneration declares it too (mllama4.py, read in 0.12 and 0.19)
    return family in ("qwen2_5_vl", "qwen3_vl") or (family == "llama4" and versions.at_least(key, 0, 12))


def mistral_format(facts: dict, args: dict, key: versions.VersionKey) -> bool:
    """Whether vLLM loads a Mistral 3 checkpoint in the Mistral format (params.json, consolidated*.safetensors) as
    ``PixtralForConditionalGeneration``, not from config.json as ``Mistral3ForConditionalGeneration``.

    ``--config-format mistral`` asks for it; ``auto`` (the default) picks it from vLLM 0.12 when the repository
    ships params.json (``get_config``, transformers_utils/config.py: 0.12.0 checks params.json, 0.19.0
    params.json and consolidated*.safetensors; 0.11.1 took config.json first). The catalog says which
    repositories ship both (``mistral_format``)."""
    if facts.get("arch") != "Mistral3ForConditionalGeneration" or not facts.get("vision"):
        return False
    chosen = str(args.get("config_format") or "auto").lower()
    if chosen == "mistral":
        return True
    return chosen == "auto" and bool(facts.get("mistral_format")) and versions.at_least(key, 0, 12)


def tower_replicated(facts: dict, args: dict, key: versions.VersionKey) -> str | None:
    """Why every tensor-parallel rank holds the whole vision tower, or None when its linear layers are split.

    ``--mm-encoder-tp-mode data`` (:func:`encoder_data_parallel`); the Mistral format's Pixtral tower
    (pixtral.py ``VisionTransformer``, ``PatchMerger``, ``VisionLanguageAdapter``: plain ``nn.Linear``, in 0.12.0
    and 0.19.0), where the config.json path's ``PixtralHFVisionModel`` and ``Mistral3MultiModalProjector`` use
    QKV/column/row-parallel layers."""
    if encoder_data_parallel(facts, args, key):
        return "--mm-encoder-tp-mode data"
    if mistral_format(facts, args, key):
        return ("the Mistral format's PixtralForConditionalGeneration, whose tower and adapter are plain nn.Linear "
                "layers")
    return None


# Encoder-decoder text models that share the multimodal wrappers' class-name suffix
_TEXT_CONDITIONAL = ("T5", "MT5", "UMT5", "Bart", "MBart", "Pegasus", "Marian", "Florence")


def encoder_not_known(model, args: dict) -> bool:
    """A multimodal model (``...ForConditionalGeneration``) whose vision tower the catalog or config does not
    describe, with its modalities not all switched off: its encoder profile cannot be estimated."""
    arch = model.architecture or ""
    if (model.extra.get("facts") or {}).get("vision") or not arch.endswith("ForConditionalGeneration"):
        return False
    if arch.startswith(_TEXT_CONDITIONAL):
        return False
    if truthy(args.get("language_model_only")):
        return False
    limits = _limits(args)
    return not (limits and all(v == 0 for v in limits.values()))
