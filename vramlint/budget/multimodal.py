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
pan-and-scan, the default) to 256 tokens from (896 / 14)^2 = 4096 patches.

The vision tower's own peak is not something vLLM's code states (it measures it); it is estimated like the
text forward pass: per patch, the residual stream and one layer's attention and MLP intermediates
((3 x hidden + 2 x intermediate) / tp, the tower's linear layers being tensor-parallel) in the model dtype,
plus the outputs. Gemma 4, Mistral 3 / Magistral (Pixtral), Llama 4 and releases before 0.17 (whose Qwen3-VL
video item depends on the sequence length) keep the note that the encoder profile is not estimated;
``--mm-processor-kwargs`` overrides of the image size are not read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from vramlint import versions
from vramlint.budget.common import truthy

VLLM_SOURCES = (
    "vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.profile_run (encoder dummy batch, encoder_cache held "
    "through the dummy forward and sampler run; 0.14 - 0.21)",
    "vllm/multimodal/encoder_budget.py::MultiModalBudget._get_max_items (0.17 - 0.21; v1/worker/utils.py in "
    "0.14), vllm/v1/core/encoder_cache_manager.py::compute_mm_encoder_budget",
    "vllm/config/multimodal.py::MultiModalConfig.get_limit_per_prompt (default 999; 0 with language_model_only)",
    "vllm/model_executor/models/interfaces.py::SupportsMultiModal._mark_tower_model (0.17+)",
    "vllm/model_executor/models/qwen3_vl.py: visual skipped with image and video limits 0 (0.11+), "
    "deepstack_input_embeds buffers, Qwen3VLProcessingInfo.get_max_image_tokens / get_max_video_tokens",
    "vllm/model_executor/models/gemma3_mm.py::Gemma3ProcessingInfo.get_num_image_tokens (image_seq_length)",
)

# Qwen3-VL's preprocessor_config.json: size.longest_edge (pixels of the largest image after resizing)
QWEN3_VL_MAX_PIXELS = 16_777_216
GEMMA3_TOKENS_PER_IMAGE = 256


def _limits(args: dict) -> dict:
    raw = args.get("limit_mm_per_prompt")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    if not isinstance(raw, dict):
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
    if (facts.get("type") or "").startswith("gemma3") and vision.get("image"):
        return "gemma3"
    if vision.get("style") == "gemma4":
        return "gemma4"
    return "other"


def _modalities(family: str | None) -> tuple[str, ...]:
    return ("image", "video") if family == "qwen3_vl" else ("image",)


def tower_skipped(facts: dict, args: dict, key: versions.VersionKey) -> str | None:
    """Why the vision tower is not built (its weights not allocated), or None when it is."""
    family = _family(facts)
    if family is None:
        return None
    generic = versions.at_least(key, 0, 17)
    if not generic and not (family == "qwen3_vl" and versions.at_least(key, 0, 11)):
        return None
    if generic and truthy(args.get("language_model_only")):
        return "--language-model-only"
    limits = _limits(args)
    if all(limits.get(m, 999) == 0 for m in _modalities(family)):
        return "--limit-mm-per-prompt sets every modality of the tower to 0"
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


def encoder_profile(facts: dict, args: dict, key: versions.VersionKey, max_num_seqs: int,
                    max_num_batched_tokens: int, max_model_len: int, dtype_bytes: int,
                    tp: int) -> tuple[EncoderProfile | None, str | None]:
    """The encoder part of V1's profiling run, or (None, why it is not estimated)."""
    family = _family(facts)
    if family is None:
        return None, None
    if tower_skipped(facts, args, key):
        return None, None
    if truthy(args.get("skip_mm_profiling")):
        return None, None
    if not versions.at_least(key, 0, 17):
        return None, ("multimodal encoder profiling is not estimated for this release (before 0.17 the largest "
                      "dummy item can be a video whose size depends on the sequence length)")
    vision = facts["vision"]
    if family == "qwen3_vl":
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
    else:
        return None, ("multimodal encoder profiling is not estimated for this model's processor: the real "
                      "activation peak can be much larger")
    limits = _limits(args)
    limit = limits.get(modality, 999)
    if limit == 0:  # the other modality (video) is the dummy one: not estimated
        return None, "multimodal encoder profiling (video dummy items) is not estimated"
    budget = max(max_num_batched_tokens, tokens)
    per_prompt = max(1, min(limit, max_model_len // tokens))
    reqs = max_num_seqs
    if args.get("enable_chunked_prefill") is not None and not truthy(args.get("enable_chunked_prefill")):
        reqs = min(reqs, max_num_batched_tokens // tokens)
    items = max(1, min(budget // tokens, reqs * per_prompt))
    output_bytes = items * tokens * width * dtype_bytes
    hidden, inter = vision["hidden"], vision.get("inter") or 4 * vision["hidden"]
    per_patch = (2 * hidden + (3 * hidden + 2 * inter) / max(1, tp)) * dtype_bytes
    tower_peak = int(items * patches * per_patch) + output_bytes
    how = (f"{items} dummy {modality}(s) of {tokens} tokens ({patches} patches each) through the vision tower; "
           f"encoder outputs {output_bytes / (1 << 30):.2f} GiB held during the text forward pass")
    return EncoderProfile(modality, items, tokens, patches, output_bytes, tower_peak, how), None
