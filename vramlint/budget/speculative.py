"""Speculative decoding in the budget: which draft ``SpeculativeConfig`` settles on, whether the release runs
it, and, for a separate draft model, its share of the weights and of the KV cache pool."""

from __future__ import annotations

import json
from typing import Any

from vramlint import versions
from vramlint.budget.common import int_arg
from vramlint.budget.kv_layout import kv_bytes_per_token_layer, layer_kinds
from vramlint.budget.rank_weights import weights_per_rank
from vramlint.model import GpuSpec, ModelInfo

# Methods that propose tokens without a model of their own (prompt lookup, suffix trees).
SPEC_NO_MODEL = ("ngram", "[ngram]", "ngram_gpu", "suffix")
# Methods vLLM folds into "mtp" (MTPModelTypes, config/speculative.py): the target's own next-token-prediction layers.
SPEC_MTP = ("mtp", "deepseek_mtp", "mimo_mtp", "glm4_moe_mtp", "glm4_moe_lite_mtp", "glm_ocr_mtp", "ernie_mtp",
            "nemotron_h_mtp", "exaone_moe_mtp", "qwen3_next_mtp", "qwen3_5_mtp", "longcat_flash_mtp",
            "pangu_ultra_moe_mtp", "step3p5_mtp")
# Model types SpeculativeConfig.hf_config_override turns into an MTP draft when named as the draft model.
SPEC_MTP_TARGET_TYPES = ("deepseek_v3", "deepseek_v32", "glm_moe_dsa", "pangu_ultra_moe", "ernie4_5_moe", "qwen3_next",
                         "exaone_moe", "qwen3_5", "qwen3_5_moe", "qwen3_5_moe_text", "longcat_flash", "step3p5",
                         "mimo", "glm4_moe", "glm4_moe_lite")


def speculative_request(args: dict) -> dict | None:
    """What the command line asks of speculative decoding, or None: ``{"method", "model", "draft_tp",
    "quantization", "flag"}`` from ``--speculative-config`` (JSON, vLLM 0.8.2+) or the older
    ``--speculative-model`` / ``--speculative-draft-tensor-parallel-size`` / ``--speculative-model-quantization``
    flags; ``{"unreadable": True, "flag": ...}`` when the value is known only at run time."""
    if "speculative_config" in args:
        sc = args.get("speculative_config")
        if isinstance(sc, str):
            try:
                sc = json.loads(sc)
            except ValueError:
                sc = None
        if isinstance(sc, dict):
            method = sc.get("method")
            return {"method": str(method).lower() if method else None, "model": sc.get("model"),
                    "draft_tp": int_arg(sc, "draft_tensor_parallel_size"), "quantization": sc.get("quantization"),
                    "flag": "--speculative-config"}
        return {"unreadable": True, "flag": "--speculative-config"}
    if "speculative_model" in args:
        model = args.get("speculative_model")
        if model is None:
            return {"unreadable": True, "flag": "--speculative-model"}
        return {"method": None, "model": model, "draft_tp": int_arg(args, "speculative_draft_tensor_parallel_size"),
                "quantization": args.get("speculative_model_quantization"), "flag": "--speculative-model"}
    return None


def speculative_draft_name(args: dict) -> str | None:
    """The name of the separate draft model vLLM would load (method ``draft_model``, given or inferred), to be
    resolved like the main model; None for ngram / suffix / MTP / EAGLE / Medusa or no speculative decoding."""
    req = speculative_request(args)
    if not req or req.get("unreadable"):
        return None
    model = req.get("model")
    if not model or str(model) in SPEC_NO_MODEL or req.get("method") not in (None, "draft_model"):
        return None
    if "eagle-" in str(model).lower() or "eagle3" in str(model).lower():
        return None
    return str(model)


def _speculative_method(req: dict, draft: ModelInfo | None) -> str:
    """The method as ``SpeculativeConfig.__post_init__`` settles it (0.8.3 - 0.33; the V0 flags the same way)."""
    method = req.get("method")
    model = str(req.get("model") or "")
    if method is None:
        method = "ngram" if model in ("ngram", "[ngram]") else "draft_model"
    if method == "[ngram]":
        method = "ngram"
    if method in SPEC_MTP:
        return "mtp"
    if method == "draft_model" and model:
        if "eagle-" in model.lower():
            return "eagle"
        if "eagle3" in model.lower():
            return "eagle3"
        if draft is not None:
            mtype = (draft.model_type or "").lower()
            if mtype in ("medusa", "mlp_speculator", "eagle"):
                return mtype
            if mtype in SPEC_MTP or mtype in SPEC_MTP_TARGET_TYPES or (draft.extra.get("facts") or {}).get("mtp_layers"):
                return "mtp"
    return method


def _draft_support(beh: versions.Behavior, key: versions.VersionKey, version: str, env: dict) -> str | None:
    """Why this release does not run a separate draft model on the engine the budget models, else None.

    V0 (``spec_decode/``, up to 0.9.2) runs one through ``SpecDecodeWorker``; V1 only from 0.15
    (``v1/spec_decode/draft_model.py``, ``DraftModelProposer``). In between V1 falls back to V0 for it (0.8 -
    0.9, ``_is_v1_supported_oracle``); 0.10 - 0.14 refuse it at start-up, an error of :func:`_speculative_budget`."""
    if beh.engine == "v0":
        if versions.at_least(key, 0, 10):
            return f"vLLM {version} has no V0 speculative decoding (removed in 0.10)"
        return None
    if versions.at_least(key, 0, 15):
        return None
    if versions.at_least(key, 0, 8) and not versions.at_least(key, 0, 10) and env.get("VLLM_USE_V1") is None:
        return (f"vLLM {version} runs a separate draft model only on the V0 engine and falls back to V0 for it; "
                "this V1 budget does not model that")
    return f"vLLM {version}'s V1 engine does not run a separate draft model (it does from 0.15)"


def _mtp_share(model: ModelInfo, beh: versions.Behavior, key: versions.VersionKey, tp: int, pp: int, dtype: str,
               kv_dtype_bytes: int) -> tuple[dict | None, str]:
    """The draft share of a model's own next-token-prediction (MTP) layers, or (None, why it is not counted).

    vLLM (V1) loads them as the drafter in the same ``load_model`` (``EagleProposer`` / ``SpecDecodeBaseProposer``
    ``.load_model``): each MTP layer is one decoder layer of the model (``mtp_block``: its attention and its MoE or
    MLP, quantized like the model's), an ``eh_proj`` / ``input_proj`` ``nn.Linear`` of 2 x hidden -> hidden in the
    model dtype (not quantized, not split by TP), two RMSNorms on its inputs and the shared head's norm
    (deepseek_mtp.py, glm4_moe_mtp.py, mimo_mtp.py). The embedding is replaced by the model's ("Detected MTP model.
    Sharing target model embedding weights with the draft model", ``_maybe_share_embeddings``, 0.14+) and, from
    0.17, so is each layer's ``shared_head.head`` (``_maybe_share_lm_head``); in 0.14 - 0.16 that LM head copy
    stays loaded. ``DeviceMemoryProfiler`` reads ``max_memory_allocated`` after ``empty_cache``, so the freed
    copies do not count. The MTP attention layers register in the same forward context: each gets KV cache in
    the same pool, one more layer's worth per token.
    """
    facts = model.extra.get("facts") or {}
    n = int(facts.get("mtp_layers") or 0)
    if not n or not facts.get("hidden"):
        return None, "the model's MTP layers are not in the catalog"
    if beh.engine != "v1" or not versions.at_least(key, 0, 14):
        return None, f"counted from vLLM 0.14 (V1), not for {beh.engine} {'.'.join(map(str, key[:3]))}"
    if pp > 1:
        return None, "the MTP layers' pipeline stage is not modelled"
    from vramlint import weights as weights_mod

    dtype_bytes = weights_mod.DTYPE_BYTES.get(dtype, 2)
    layer_facts = {**facts, "layers": n, "pattern": None, "vocab": 0, "tie": True, "vision": None,
                   "mtp_layers": None}
    moe = facts.get("moe")
    if moe:
        layer_facts["moe"] = {**moe, "dense_layers": []}  # the MTP layer is a MoE layer (index >= first_k_dense)
    hidden = facts["hidden"]
    # n decoder layers (+ one norm: the shared head's), eh_proj and enorm / hnorm per layer
    layer_bytes = weights_mod.weight_bytes_per_rank(layer_facts, tp=tp, pp=1, dtype_bytes=dtype_bytes,
                                                    include_buffers=False)
    own = n * (2 * hidden * hidden + 2 * hidden) * dtype_bytes
    head = 0
    if not versions.at_least(key, 0, 17):
        vocab = facts.get("vocab") or 0
        pad = weights_mod.VOCAB_PADDING * tp
        head = n * (-(-vocab // pad) * pad) * hidden // tp * dtype_bytes
    total = int(layer_bytes + own + head)
    how = (f"{n} MTP layer{'s' if n != 1 else ''} of {model.name} {total / (1 << 30):.2f} GiB (decoder layer + eh_proj + "
           "norms" + (", its own LM head copy before 0.17" if head else "") + "; embedding and LM head shared)")
    per_layer, kv_how = kv_bytes_per_token_layer(model, tp, kv_dtype_bytes, beh.engine, beh.mla_supported)
    return {"name": f"{model.name} MTP", "tp": tp, "weights": total, "weights_how": how,
            "per_token": per_layer * n, "per_token_how": f"{kv_how} x {n} MTP layer{'s' if n != 1 else ''}"}, ""


def _speculative_budget(req: dict, draft: tuple[ModelInfo | None, str | None] | None, model: ModelInfo,
                        gpu: GpuSpec, env: dict, beh: versions.Behavior, key: versions.VersionKey, version: str,
                        tp: int, pp: int, dtype: str, kv_dtype_bytes: int,
                        image: str | None) -> tuple[dict | None, str, list[str], list[dict]]:
    """(the draft model's share of the budget, source text, notes, errors) for a speculative-decoding request.

    The share is ``{"name", "tp", "weights", "weights_how", "per_token", "per_token_how"}`` when a separate draft
    model (method ``draft_model``) runs and resolves: vLLM loads it on the same GPU in the same
    ``DeviceMemoryProfiler`` block as the model (``GPUModelRunner.load_model`` -> ``DraftModelProposer.load_model``,
    whole, embeddings and LM head not shared, with the model's dtype and the draft checkpoint's own quantization;
    V0: ``SpecDecodeWorker.init_device`` before the profile run), and its attention layers register in the same
    forward context, so ``get_kv_cache_spec`` gives them KV cache in the same pool. ``per_token`` is None when
    the draft's layers are not plain full attention (then only its weights are counted)."""
    flag = req.get("flag", "--speculative-config")
    notes: list[str] = []
    errors: list[dict] = []
    if req.get("unreadable"):
        notes.append(f"{flag} is set from a value vramlint cannot read: a draft model, if it names one, is not counted, "
                     "so KV cache and concurrency may be over-estimated")
        return None, f"{flag}: not readable", notes, errors
    draft_info, draft_why = draft if draft is not None else (None, None)
    method = _speculative_method(req, draft_info)
    name = str(req.get("model") or "")
    if method in SPEC_NO_MODEL:
        return None, f"{method}: proposes tokens without a model of its own, nothing added to the budget", notes, errors
    if method == "mtp":
        share, why_not = _mtp_share(model, beh, key, tp, pp, dtype, kv_dtype_bytes)
        if share is not None:
            return share, f"mtp: {share['weights_how']} counted", notes, errors
        n = (model.extra.get("facts") or {}).get("mtp_layers")
        what = f"{n} MTP layer{'s' if n != 1 else ''}" if n else "MTP layers"
        notes.append(f"speculative decoding with {model.name}'s own {what} (method mtp) is not counted ({why_not}): "
                     "vLLM loads them as a draft model whose attention layers take KV cache from the same pool, so KV "
                     "cache and concurrency are over-estimated")
        return None, "mtp: not counted", notes, errors
    if method != "draft_model":
        notes.append(f"the {method} draft {name or 'model'} of speculative decoding is not counted (vLLM loads it "
                     "beside the model, possibly sharing the model's embeddings and LM head, and its attention layers, "
                     "if any, take KV cache from the same pool): KV cache and concurrency are over-estimated")
        return None, f"{method}: not counted", notes, errors
    if not name:
        notes.append(f"{flag} names no draft model: no draft is counted in the budget")
        return None, "draft model: none named", notes, errors
    if beh.engine == "v1" and versions.at_least(key, 0, 10) and not versions.at_least(key, 0, 15):
        # EngineArgs refuses an explicit "draft_model" method (0.11 - 0.14); otherwise GPUModelRunner, which knows
        # only ngram / EAGLE / Medusa (/ MTP) drafters, raises when it builds the drafter (0.10 - 0.14).
        if req.get("method") == "draft_model" and versions.at_least(key, 0, 11):
            text = ("Draft model speculative decoding is not supported yet. Please consider using other speculative "
                    "decoding methods such as ngram, medusa, eagle, or mtp.")
        else:
            text = "Unknown speculative decoding method: draft_model"
        errors.append({"code": "draft-model-unsupported", "message": text,
                       "arg": "speculative_config" if flag == "--speculative-config" else "speculative_model",
                       "fix": "use vLLM 0.15 or newer for a separate draft model, or an ngram, EAGLE or MTP draft"})
        return None, "draft model: refused by this release", notes, errors
    why_not = _draft_support(beh, key, version, env)
    if why_not:
        notes.append(f"the draft model {name} of speculative decoding is not counted: {why_not}")
        return None, "draft model: not counted", notes, errors
    if draft_info is None:
        notes.append(f"the draft model {name} of speculative decoding is not counted ({draft_why or 'not resolved'}): its "
                     "weights and KV cache are missing from the budget, so KV cache and concurrency are over-estimated")
        return None, "draft model: not resolved", notes, errors
    draft_tp = req.get("draft_tp") or tp
    if beh.engine == "v1" and draft_tp != tp:
        # DraftModelProposer._raise_if_draft_tp_mismatch (v1/spec_decode/draft_model.py, 0.15 - 0.33)
        errors.append({
            "code": "draft-tp-mismatch",
            "message": (f"Currently, 'draft_tensor_parallel_size' and 'tensor_parallel_size' must be the same. Got "
                        f"{draft_tp} and {tp}. Please pass 'draft_tensor_parallel_size' in the speculative_config."),
            "arg": "speculative_config",
            "fix": f"set draft_tensor_parallel_size to {tp} (the model's tensor_parallel_size) or leave it out",
        })
        return None, "draft model: draft_tensor_parallel_size differs from tensor_parallel_size", notes, errors
    if draft_tp not in (1, tp) or pp > 1:
        notes.append(f"the draft model {name} of speculative decoding is not counted: draft TP {draft_tp} with TP {tp} "
                     f"and PP {pp} is not modelled")
        return None, "draft model: not counted", notes, errors
    quant = req.get("quantization")
    weights, weights_how = weights_per_rank(draft_info, draft_tp, 1, dtype, {"quantization": quant} if quant else {},
                                            gpu=gpu, key=key, env=env, image=image)
    share: dict[str, Any] = {"name": name, "tp": draft_tp, "weights": weights, "weights_how": weights_how,
                             "per_token": None, "per_token_how": ""}
    kinds = layer_kinds(draft_info)
    if draft_info.is_mla or not kinds or any(k != "full_attention" for k in kinds):
        notes.append(f"the KV cache of the draft model {name} (not plain full attention) is not counted: KV cache and "
                     "concurrency are over-estimated")
    else:
        per_layer, how = kv_bytes_per_token_layer(draft_info, draft_tp, kv_dtype_bytes, beh.engine, False)
        share["per_token"] = per_layer * len(kinds)
        share["per_token_how"] = f"{how} x {len(kinds)} layers"
    return share, f"draft model {name} (TP {draft_tp}) counted", notes, errors
