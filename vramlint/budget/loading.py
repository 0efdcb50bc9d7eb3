"""Stage 2 of the budget: the weights one rank loads, with a speculative-decoding draft model loaded beside them.

vLLM measures this as the torch allocation around ``load_model()`` (``DeviceMemoryProfiler``, logged as ``Model
loading took X GiB``); a separate draft model is loaded in the same block (V1 ``GPUModelRunner.load_model`` ->
``DraftModelProposer.load_model``; V0 ``SpecDecodeWorker.init_device``).
"""

from __future__ import annotations

from typing import Any

from vramlint.budget.common import GiB, StageResult, per_stage_text
from vramlint.budget.configuration import Configuration
from vramlint.budget.lora import lora_enabled, lora_slot_bytes
from vramlint.budget.multimodal import (
    audio_tower_skipped,
    deepstack_buffer_bytes,
    tower_replicated,
    tower_skipped,
)
from vramlint.budget.rank_weights import weights_per_rank
from vramlint.budget.speculative import _speculative_budget, speculative_request
from vramlint.lean_dataclass import dataclass
from vramlint.model import ModelInfo

VLLM_SOURCES = (
    "vllm/worker/model_runner.py::load_model (V0), vllm/v1/worker/gpu_model_runner.py::load_model (V1): "
    "DeviceMemoryProfiler around the model loader",
    "vllm/model_executor/layers/linear.py, vocab_parallel_embedding.py, fused_moe/layer.py: what each rank holds",
    "vllm/model_executor/model_loader/base_loader.py::BaseModelLoader.load_model: the model is built under "
    "set_default_torch_dtype(model_config.dtype), so --dtype float32 holds unquantized weights in 4 bytes "
    "(read in the 0.19.0 wheel)",
    "vllm/model_executor/layers/quantization/*.py: the stored layout of quantized weights",
    "vllm/model_executor/layers/quantization/utils/marlin_utils_fp8.py::prepare_fp8_layer_for_marlin, "
    "prepare_fp8_moe_layer_for_marlin (0.9.2 - 0.28): FP8 block scales regrouped for Marlin below compute "
    "capability 8.9 (vramlint.budget.rank_weights.fp8_marlin)",
    "vllm/config/speculative.py::SpeculativeConfig, vllm/v1/spec_decode/draft_model.py (0.15+), "
    "vllm/spec_decode/spec_decode_worker.py (V0): the draft model",
    "vllm/v1/spec_decode/eagle.py::EagleProposer.load_model (0.8 - 0.33: embedding / LM head sharing), "
    "model_executor/models/llama_eagle.py, llama_eagle3.py, medusa.py, v1/spec_decode/medusa.py (0.9.2+): "
    "EAGLE / EAGLE-3 / Medusa heads (vramlint.budget.speculative)",
    "vllm/config/speculative.py::SpeculativeConfig.hf_config_override (qwen3_5 / qwen3_5_moe -> qwen3_5_mtp, "
    "n_predict = mtp_num_hidden_layers) and vllm/model_executor/models/qwen3_5_mtp.py::Qwen3_5MultiTokenPredictor "
    "(one fc split over TP, full-attention Qwen3_5DecoderLayers; 0.20.0 wheel): Qwen3.5's MTP layers",
    "vllm/lora/layers/*.py::create_lora_weights: the LoRA slots allocated in load_model (vramlint.budget.lora)",
    "vllm/model_executor/models/interfaces.py::_mark_tower_model, qwen3_vl.py: towers not built, deepstack "
    "buffers (vramlint.budget.multimodal)",
)


@dataclass(kw_only=True)
class Weights(StageResult):
    """The weights one rank holds after loading (model and draft), bytes, for each pipeline stage."""

    per_stage: list[int]  # one entry per pipeline stage (one without pipeline parallel)
    draft: dict[str, Any] | None  # the separate draft model's share (weights, KV bytes per token), if counted

    @property
    def bytes(self) -> int:
        """The weights of the fullest stage (the one that runs out of memory first while loading)."""
        return max(self.per_stage)


def _stage_alike(model: ModelInfo, stage: tuple[int, int, int] | None) -> tuple | None:
    """What `weights_per_rank` reads of a pipeline stage: whether it is the first (the embedding) and the last (the
    LM head and final norm), its layer count and, with architecture facts, every fact `pipeline_stage_facts` gives
    the stage its own value of (a layer pattern, dense layers, KV-shared layers, quantization exceptions);
    the facts it leaves as the model's are the same for every stage. None: not to be shared."""
    if stage is None:
        return None
    start, end, _ = stage
    facts = model.extra.get("facts")
    if not facts or not facts.get("layers"):
        return (start == 0, end >= model.num_layers, end - start)
    # the same model's stages again for each GPU of the catalog: their keys are made once
    memo = _ALIKE_MEMO.get((id(facts), start, end))
    if memo is not None and memo[0] is facts:
        return memo[1]
    from vramlint.weights import pipeline_stage_facts

    part = pipeline_stage_facts(facts, start, end)
    try:
        own = tuple((name, repr(value)) for name, value in part.items() if value is not facts.get(name))
    except RecursionError:
        return None
    alike = (start == 0, end >= facts["layers"], end - start, own)
    if len(_ALIKE_MEMO) >= 20_000:
        _ALIKE_MEMO.clear()
    _ALIKE_MEMO[(id(facts), start, end)] = (facts, alike)
    return alike


_ALIKE_MEMO: dict[tuple[int, int, int], tuple[dict, tuple]] = {}


def load_weights(cfg: Configuration, draft: tuple[ModelInfo | None, str | None] | None = None) -> Weights:
    """Stage 2: the weights per rank (:func:`weights_per_rank`) plus a separate draft model's, as vLLM loads them;
    with pipeline parallel each stage's own layers, the embedding on the first and the LM head on the last."""
    src: dict[str, str] = {}
    notes: list[str] = []
    errors: list[dict] = []
    per_stage: list[int] = []
    # each distinct stage once (see `_stage_alike`): 4,096 stages are a few distinct ones
    loaded: dict[tuple, int] = {}
    start = 0
    for layers in cfg.pp_partition:
        stage = (start, start + layers, cfg.pp) if cfg.pp > 1 else None
        alike = _stage_alike(cfg.model, stage)
        weights = loaded.get(alike) if alike is not None else None
        if weights is None:
            weights, weights_how = weights_per_rank(cfg.model, cfg.tp, cfg.pp, cfg.dtype, cfg.args, gpu=cfg.gpu,
                                                    key=cfg.key, env=cfg.env, ep_size=cfg.ep_size, image=cfg.image,
                                                    stage=stage)
            if alike is not None:
                loaded[alike] = weights
            if not per_stage:
                src["weights"] = weights_how
        per_stage.append(weights)
        start += layers
    if cfg.pp > 1:
        src["weights"] += ("; per pipeline stage " + per_stage_text([f"{w / GiB:.2f}" for w in per_stage])
                           + " GiB (the embedding on the first, the LM head on the last)")
    # Added on every stage (each builds the vision tower, LoRA slots taken as an even share of the layers'):
    extra = 0
    facts = cfg.model.extra.get("facts") or {}
    if facts.get("vision"):
        skipped = tower_skipped(facts, cfg.args, cfg.key)
        if skipped:
            from vramlint.weights import count_parameters

            tower = int(count_parameters(facts).vision * cfg.dtype_bytes / max(1, cfg.tp))
            extra -= tower
            src["weights"] += f" - vision tower {tower / GiB:.2f} GiB (not built: {skipped})"
        else:
            why_whole = tower_replicated(facts, cfg.args, cfg.key) if cfg.tp > 1 else None
            if why_whole:
                from vramlint.weights import count_parameters

                tower = count_parameters(facts).vision * cfg.dtype_bytes
                replicated = int(tower - tower / cfg.tp)
                extra += replicated
                src["weights"] += (f" + vision tower replicated on every rank {replicated / GiB:.2f} GiB "
                                   f"({why_whole})")
            deepstack = deepstack_buffer_bytes(facts, cfg.max_num_batched_tokens, cfg.dtype_bytes)
            if deepstack:
                extra += deepstack
                src["weights"] += (f" + deepstack buffers {deepstack / GiB:.2f} GiB "
                                   f"({facts['vision']['deepstack']} x max_num_batched_tokens x hidden)")
    skipped = audio_tower_skipped(facts, cfg.args, cfg.key)
    if skipped:
        from vramlint.weights import audio_tower_parameters

        tower = int(audio_tower_parameters(facts) * cfg.dtype_bytes)
        extra -= tower
        src["weights"] += f" - audio tower {tower / GiB:.2f} GiB (not built: {skipped})"
    if lora_enabled(cfg.args):
        slots, slots_how = lora_slot_bytes(facts, cfg.args, cfg.tp, cfg.pp, cfg.dtype_bytes, cfg.key) if facts \
            else (0, "")
        if slots:
            extra += slots
            src["weights"] += f" + LoRA slots {slots / GiB:.2f} GiB"
            src["lora"] = slots_how
        else:
            notes.append("--enable-lora: the LoRA slots vLLM allocates at load time are not counted (the model's "
                         "layer shapes are not known)")
    elif "enable_lora" in cfg.args and cfg.args["enable_lora"] is None:
        notes.append("--enable-lora may be set (its value is not known): the LoRA slots vLLM would allocate at load "
                     "time are not counted")
    if extra:
        per_stage = [max(0, w + extra) for w in per_stage]
    spec_req = speculative_request(cfg.args)
    spec_share = None
    if spec_req is not None:
        spec_share, spec_how, spec_notes, spec_errors = _speculative_budget(
            spec_req, draft, cfg.model, cfg.gpu, cfg.env, cfg.beh, cfg.key, cfg.version, cfg.tp, cfg.pp, cfg.dtype,
            cfg.kv_dtype_bytes, cfg.image)
        notes.extend(spec_notes)
        errors.extend(spec_errors)
        src["speculative"] = spec_how
        if spec_share is not None:
            per_stage = [w + spec_share["weights"] for w in per_stage]
            head = {"eagle": "EAGLE head", "eagle3": "EAGLE-3 head", "medusa": "Medusa heads"}.get(spec_share.get("head"))
            if head:
                src["weights"] += f" + {head} {spec_share['weights_how']}"
            else:
                src["weights"] += (f" + draft model {spec_share['name']} {spec_share['weights'] / GiB:.2f} GiB "
                                   f"({spec_share['weights_how']}, TP {spec_share['tp']})")
    return Weights(per_stage=per_stage, draft=spec_share, errors=errors, notes=notes, sources=src)
