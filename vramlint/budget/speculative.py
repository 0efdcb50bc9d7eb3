"""Speculative decoding in the budget: which draft ``SpeculativeConfig`` settles on, whether the release runs
it, and, for a separate draft model, its share of the weights and of the KV cache pool."""

from __future__ import annotations

from typing import Any

from vramlint import versions
from vramlint.budget.common import config_arg, int_arg
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
# Methods whose draft is a small trained head that reads the model's hidden states (its own checkpoint).
SPEC_HEADS = ("eagle", "eagle3", "medusa")
SPEC_MTP_TARGET_TYPES = ("deepseek_v3", "deepseek_v32", "glm_moe_dsa", "pangu_ultra_moe", "ernie4_5_moe", "qwen3_next",
                         "exaone_moe", "qwen3_5", "qwen3_5_moe", "qwen3_5_moe_text", "longcat_flash", "step3p5",
                         "mimo", "glm4_moe", "glm4_moe_lite")


def speculative_request(args: dict) -> dict | None:
    """What the command line asks of speculative decoding, or None: ``{"method", "model", "draft_tp",
    "quantization", "flag"}`` from ``--speculative-config`` (JSON, vLLM 0.8.2+) or the older
    ``--speculative-model`` / ``--speculative-draft-tensor-parallel-size`` / ``--speculative-model-quantization``
    flags; ``{"unreadable": True, "flag": ...}`` when the value is known only at run time."""
    if "speculative_config" in args:
        sc = config_arg(args, "speculative_config")
        if sc is not None:
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
    """The name of the draft checkpoint vLLM would load beside the model (a separate draft model, an EAGLE /
    EAGLE-3 head or Medusa heads, the method given or inferred), to be resolved like the main model; None for
    ngram / suffix / MTP (the model's own layers) or no speculative decoding."""
    req = speculative_request(args)
    if not req or req.get("unreadable"):
        return None
    model = req.get("model")
    if not model or str(model) in SPEC_NO_MODEL:
        return None
    if req.get("method") not in (None, "draft_model", *SPEC_HEADS):
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
            eagle = (draft.extra.get("facts") or {}).get("eagle")
            if eagle:
                return "eagle3" if eagle.get("version") == 3 else "eagle"
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

    Qwen3.5 (``mtp_num_hidden_layers``; ``Qwen3_5MultiTokenPredictor``, models/qwen3_5_mtp.py, 0.20.0 wheel)
    differs: one ``fc`` for all its layers, a ``ColumnParallelLinear`` of 2 x hidden -> hidden split over TP, three
    RMSNorms (``norm``, ``pre_fc_norm_hidden``, ``pre_fc_norm_embedding``) and full-attention
    ``Qwen3_5DecoderLayer``s; embedding and LM head shared the same way. Those attention layers have the model's
    own KV spec, so in the hybrid layout they join its full-attention group (``full_attention_layers``; see
    :func:`vramlint.budget.kv_cache._plan_stage`).
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
    qwen3_5 = facts.get("mtp_style") == "qwen3_5"
    if qwen3_5:
        # Qwen3_5MultiTokenPredictor (models/qwen3_5_mtp.py, 0.20.0 wheel): full-attention Qwen3_5DecoderLayers
        layer_facts["pattern"] = "F" * n
        layer_facts.pop("linear", None)
    # n decoder layers (+ one norm: the shared head's), eh_proj and enorm / hnorm per layer
    layer_bytes = weights_mod.weight_bytes_per_rank(layer_facts, tp=tp, pp=1, dtype_bytes=dtype_bytes,
                                                    include_buffers=False)
    if qwen3_5:
        # one fc for all the layers, a ColumnParallelLinear 2 x hidden -> hidden split over TP, and the
        # pre_fc_norm_hidden / pre_fc_norm_embedding RMSNorms (its final `norm` is the one counted above)
        own = (2 * hidden * -(-hidden // max(1, tp)) + 2 * hidden) * dtype_bytes
    else:
        own = n * (2 * hidden * hidden + 2 * hidden) * dtype_bytes
    head = 0
    if not versions.at_least(key, 0, 17):
        vocab = facts.get("vocab") or 0
        pad = weights_mod.VOCAB_PADDING * tp
        head = n * (-(-vocab // pad) * pad) * hidden // tp * dtype_bytes
    total = int(layer_bytes + own + head)
    proj = "fc split over TP" if qwen3_5 else "eh_proj"
    how = (f"{n} MTP layer{'s' if n != 1 else ''} of {model.name} {total / (1 << 30):.2f} GiB (decoder layer + "
           f"{proj} + norms" + (", its own LM head copy before 0.17" if head else "") + "; embedding and LM head shared)")
    per_layer, kv_how = kv_bytes_per_token_layer(model, tp, kv_dtype_bytes, beh.engine, beh.mla_supported)
    from vramlint.modelconfig import model_info_from_facts

    return {"name": f"{model.name} MTP", "tp": tp, "weights": total, "weights_how": how,
            "per_token": per_layer * n, "per_token_how": f"{kv_how} x {n} MTP layer{'s' if n != 1 else ''}",
            # full-attention layers with the model's own attention shape: they join its full-attention KV group
            "full_attention_layers": n if qwen3_5 else 0,
            # V1 runs the MTP layers through EagleProposer (SpeculativeConfig.use_eagle: "mtp"), whose buffers and
            # dummy run in the profile are an EAGLE head's (profile.head_profile_bytes); the hidden states it
            # takes are the model's own
            "proposer": {"label": "MTP layers", "hidden": hidden, "target_hidden": hidden, "aux_states": 1,
                         "info": model_info_from_facts(layer_facts, f"{model.name} MTP", "MTP layers")}}, ""


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
    if method in SPEC_HEADS:
        draft_info, draft_why = draft if draft is not None else (None, None)
        why_not = _head_support(method, beh, key, version, env, pp)
        if why_not is None and draft_info is None:
            why_not = draft_why or "not resolved"
        if why_not is None:
            if method == "medusa":
                share, why_not = _medusa_share(draft_info, tp, dtype)
            else:
                share, why_not = _eagle_share(draft_info, model, method, key, tp, dtype, kv_dtype_bytes, beh.engine)
                if share is not None and share.get("note"):
                    notes.append(share["note"])
            if share is not None:
                return share, f"{method}: {share['weights_how']} counted", notes, errors
        label = "Medusa heads" if method == "medusa" else ("EAGLE-3 head" if method == "eagle3" else "EAGLE head")
        notes.append(f"the {label} {name or ''} of speculative decoding is not counted ({why_not}): its weights"
                     + ("" if method == "medusa" else " and the KV cache of its attention layers")
                     + " are missing from the budget, so KV cache and concurrency are over-estimated")
        return None, f"{method}: not counted", notes, errors
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
        share["info"] = draft_info
    return share, f"draft model {name} (TP {draft_tp}) counted", notes, errors


def _head_support(method: str, beh: versions.Behavior, key: versions.VersionKey, version: str, env: dict,
                  pp: int) -> str | None:
    """Why the budget does not count this EAGLE / Medusa head on this release, else None.

    V1 runs EAGLE from 0.8 (``EagleProposer``) and Medusa from 0.9.2 (``MedusaProposer``); 0.8 falls back to
    V0 for EAGLE unless VLLM_USE_V1 is set (``_is_v1_supported_oracle``: "Eagle is under development", and
    ``_warn_or_fallback``), 0.8 - 0.9.1 for Medusa. V0's ``SpecDecodeWorker`` heads are not modelled."""
    if beh.engine == "v0":
        return f"V0's speculative decoding heads are not modelled (vLLM {version})"
    forced_v1 = env.get("VLLM_USE_V1") is not None
    if method == "medusa" and not versions.at_least(key, 0, 9, 2) and not forced_v1:
        return f"vLLM {version} runs Medusa on the V0 engine, not modelled"
    if method != "medusa" and not versions.at_least(key, 0, 9) and not forced_v1:
        return f"vLLM {version} falls back to the V0 engine for EAGLE unless VLLM_USE_V1 is set; V0 is not modelled"
    if pp > 1:
        return "a draft head with pipeline parallel is not modelled"
    return None


def _padded_rows(vocab: int, tp: int) -> float:
    """Rows of a vocab-parallel matrix on one rank (``VocabParallelEmbedding`` / ``ParallelLMHead``, padded to
    64 x tp)."""
    from vramlint import weights as weights_mod

    pad = weights_mod.VOCAB_PADDING * max(1, tp)
    return -(-vocab // pad) * pad / max(1, tp)


def _eagle_share(draft: ModelInfo, model: ModelInfo, method: str, key: versions.VersionKey, tp: int, dtype: str,
                 kv_dtype_bytes: int, engine: str) -> tuple[dict | None, str]:
    """The share of an EAGLE (``EagleLlamaForCausalLM``, llama_eagle.py) or EAGLE-3 (``Eagle3LlamaForCausalLM``,
    llama_eagle3.py) head, or (None, why not).

    ``EagleProposer.load_model`` builds the head with the draft config in the model's dtype, loads it in the
    same ``DeviceMemoryProfiler`` block as the model, then replaces parts by the model's own (the replaced
    tensors are freed before memory is measured):

    * its decoder layers (Llama layers, tensor-parallel like the model's; EAGLE-3's first layer takes 2 x hidden
      into ``qkv_proj`` and has one more RMSNorm, ``hidden_norm``; EAGLE-3 ends with a norm);
    * ``fc``: a ``ReplicatedLinear`` (whole on every rank) of 2 x hidden -> hidden (EAGLE) or 3 x the model's
      hidden -> hidden (EAGLE-3, the three auxiliary hidden states);
    * the embedding: EAGLE in 0.8 keeps its own (only EAGLE-3 borrows the model's when the checkpoint lacks
      one); 0.9 - 0.13 share it when its shape equals the model's (``eagle_shape == target_shape``); 0.14+ when
      the checkpoint has none or an identical one (``has_own_embed_tokens``, ``torch.equal``). The heads are
      trained with the model's embedding frozen, so from 0.9 it is taken as shared (a note says what a distinct
      one would add from 0.14);
    * the LM head: EAGLE has none (the model's is used); EAGLE-3 has its own of ``draft_vocab_size`` rows
      (shared when it has the model's shape, 0.10 - 0.13) and ``draft_id_to_target_id``, one int64 per draft
      token.

    Its attention layers register in the same forward context as the model's: each takes KV cache from the
    same pool (``_draft_attn_layer_names``), one layer of the draft's shape per token.
    """
    from vramlint import weights as weights_mod

    facts = draft.extra.get("facts") or {}
    hidden = facts.get("hidden") or draft.hidden_size
    n = int(facts.get("layers") or draft.num_layers or 0)
    if not hidden or not n or not facts.get("heads"):
        return None, "the head's layer shapes are not known"
    if draft.is_mla or facts.get("moe") or any(k != "full_attention" for k in layer_kinds(draft)):
        return None, "a head other than Llama-style full-attention layers is not modelled"
    eagle3 = method == "eagle3"
    dtype_bytes = weights_mod.DTYPE_BYTES.get(dtype, 2)
    layer_facts = {**facts, "layers": n, "pattern": None, "vocab": 0, "tie": True, "vision": None,
                   "mtp_layers": None, "quant": None}
    layers = weights_mod.weight_bytes_per_rank(layer_facts, tp=tp, pp=1, dtype_bytes=dtype_bytes,
                                               include_buffers=False)
    parts = [f"{n} decoder layer{'s' if n != 1 else ''} {layers / (1 << 30):.2f} GiB"]
    extra = 0.0
    target_hidden = (facts.get("eagle") or {}).get("target_hidden") or model.hidden_size or hidden
    if eagle3:
        heads, kvh, hd = facts["heads"], facts.get("kv_heads") or facts["heads"], facts.get("head_dim") or 0
        kv_rank = max(1, kvh // max(1, tp)) if kvh >= tp else 1
        extra += hidden * (heads / max(1, tp) + 2 * kv_rank) * hd * dtype_bytes  # layer 0's qkv_proj: 2 x hidden in
        extra += hidden * dtype_bytes  # hidden_norm
        fc = 3 * target_hidden * hidden * dtype_bytes
    else:
        fc = 2 * hidden * hidden * dtype_bytes
        extra -= 2 * hidden * dtype_bytes  # no final norm; layer 0's input_layernorm is an nn.Identity
    extra += fc
    parts.append(f"fc {fc / (1 << 20):.0f} MiB (replicated)")
    vocab = facts.get("vocab") or draft.vocab_size or 0
    embed_rows = _padded_rows(vocab, tp)
    embed = embed_rows * hidden * dtype_bytes
    note = None
    if not eagle3 and not versions.at_least(key, 0, 9):
        extra += embed
        parts.append(f"its own embedding {embed / (1 << 30):.2f} GiB (0.8 keeps it)")
    else:
        parts.append("embedding shared with the model")
        if versions.at_least(key, 0, 14) and embed:
            note = (f"the {'EAGLE-3' if eagle3 else 'EAGLE'} head {draft.name} is taken to share the model's embedding; "
                    f"vLLM keeps a separate one when the checkpoint carries an embedding that differs from the model's "
                    f"(\"Detected EAGLE model with distinct embed_tokens weights\" in the start-up log): "
                    f"{embed / (1 << 30):.2f} GiB more per GPU")
    if eagle3:
        draft_vocab = (facts.get("eagle") or {}).get("draft_vocab") or vocab
        shared = (versions.at_least(key, 0, 10) and not versions.at_least(key, 0, 14)
                  and draft_vocab == model.vocab_size and hidden == model.hidden_size)
        if shared:
            parts.append("LM head shared (same shape as the model's)")
        else:
            head = _padded_rows(draft_vocab, tp) * hidden * dtype_bytes + draft_vocab * 8
            extra += head
            parts.append(f"own LM head of {draft_vocab} tokens {head / (1 << 20):.0f} MiB")
    else:
        parts.append("LM head shared")
    total = int(layers + extra)
    per_layer, kv_how = kv_bytes_per_token_layer(draft, tp, kv_dtype_bytes, engine, False)
    how = f"{draft.name} {total / (1 << 30):.2f} GiB (" + ", ".join(parts) + ")"
    return {"name": draft.name, "tp": tp, "weights": total, "weights_how": how, "per_token": per_layer * n,
            "per_token_how": f"{kv_how} x {n} layer{'s' if n != 1 else ''}", "note": note,
            "head": "eagle3" if eagle3 else "eagle", "hidden": hidden, "target_hidden": target_hidden,
            "info": draft,
            "proposer": {"label": "EAGLE-3 head" if eagle3 else "EAGLE head", "hidden": hidden,
                         "target_hidden": target_hidden, "aux_states": 3 if eagle3 else 1, "info": draft}}, ""


def _medusa_share(draft: ModelInfo, tp: int, dtype: str) -> tuple[dict | None, str]:
    """The share of Medusa heads (vLLM ``Medusa``, model_executor/models/medusa.py, loaded by
    ``MedusaProposer.load_model``): ``num_heads`` residual blocks of ``num_hidden_layers`` ``nn.Linear(hidden,
    hidden)`` each (plain torch layers: whole on every rank), and one ``ParallelLMHead`` over the first
    ``truncated_vocab_size`` tokens per head (one shared when ``original_lm_head``). No attention, no KV cache."""
    from vramlint import weights as weights_mod

    facts = draft.extra.get("facts") or {}
    medusa = facts.get("medusa") or {}
    hidden = facts.get("hidden") or draft.hidden_size
    heads = int(medusa.get("heads") or 0)
    if not medusa or not heads or not hidden:
        return None, "the Medusa config (num_heads, hidden_size) is not known"
    dtype_bytes = weights_mod.DTYPE_BYTES.get(dtype, 2)
    layers = int(medusa.get("layers") or 1)
    blocks = heads * layers * (hidden * hidden + (hidden if medusa.get("bias") else 0)) * dtype_bytes
    lm_heads = 1 if medusa.get("original_lm_head") else heads
    vocab = int(medusa.get("truncated_vocab") or facts.get("vocab") or 0)
    head_bytes = lm_heads * _padded_rows(vocab, tp) * hidden * dtype_bytes
    total = int(blocks + head_bytes)
    how = (f"{draft.name} {total / (1 << 30):.2f} GiB ({heads} heads x {layers} residual layer"
           f"{'s' if layers != 1 else ''} (replicated) + {lm_heads} LM head{'s' if lm_heads != 1 else ''} of {vocab} "
           "tokens)")
    return {"name": draft.name, "tp": tp, "weights": total, "weights_how": how, "per_token": None,
            "per_token_how": "", "head": "medusa"}, ""

