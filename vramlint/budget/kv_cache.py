"""Stage 4 of the budget: the KV cache vLLM lays out in the memory the profile left.

Bytes per token of each layer on a rank (GQA, MLA, sliding windows, chunked local attention, Mamba /
gated-delta-net state, a draft model's layers), the layer groups of the V1 hybrid manager, the number of
blocks, the tokens vLLM reports and the maximum concurrency, release by release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field, replace

from vramlint import versions
from vramlint.budget.common import (
    DTYPE_BYTES,
    StageResult,
    arg_or,
    config_arg,
    int_arg,
    per_stage_text,
)
from vramlint.budget.configuration import Configuration
from vramlint.budget.kv_layout import (
    _groups,
    _unify_mamba_page,
    draft_full_attention_layers,
    full_attention_bytes_per_token_layer,
    indexer_layers,
    kv_bytes_per_token_layer,
    layer_kinds,
    mamba_state_bytes,
    padding_notes,
    sparse_mla_bytes,
)
from vramlint.budget.loading import Weights
from vramlint.budget.profile import Profile
from vramlint.budget.speculative import SPEC_MTP, speculative_request
from vramlint.lean_dataclass import dataclass

VLLM_SOURCES = (
    "vllm/worker/cache_engine.py::get_cache_block_size (V0, 0.4 - 0.10)",
    "vllm/executor/executor_base.py::initialize_cache (V0: blocks, concurrency)",
    "vllm/v1/kv_cache_interface.py: AttentionSpec / MLAAttentionSpec / SlidingWindowSpec / "
    "ChunkedLocalAttentionSpec / MambaSpec page_size_bytes, max_memory_usage_bytes (0.8 - 0.33)",
    "vllm/v1/core/kv_cache_utils.py: get_kv_cache_config(s), unify_kv_cache_spec_page_size, "
    "unify_hybrid_kv_cache_specs (the manager off: local layers sized as full ones, state layers refused up to 0.26), "
    "get_max_concurrency_for_kv_cache_config, _report_kv_cache_config (0.8 - 0.2x); "
    "vllm/v1/core/kv_cache_planning.py (0.3x)",
    "vllm/model_executor/models/config.py::HybridAttentionMambaModelConfig (page unification, 0.10+)",
    "vllm/v1/core/kv_cache_utils.py::_get_kv_cache_groups_uniform_page_size: layers grouped by spec, the last group "
    "of each type padded ('Add N padding layers'); a drafter's attention layers join the model's (0.20.0 wheel)",
    "vllm/model_executor/models/mimo_v2.py: MiMoV2Attention's head_size_v and per-layer-type KV heads (0.20 - 0.34; "
    "mimo_v2_flash.py padded V to the QK head in 0.14 - 0.19)",
    "vllm/v1/kv_cache_interface.py::SlidingWindowSpec.extra_retained_tokens and "
    "vllm/v1/core/kv_cache_utils.py::get_kv_cache_configs (0.28.0 - 0.30.0 wheels): with multi-module MTP "
    "(SpeculativeConfig.use_multi_module_mtp) a sliding-window layer keeps num_speculative_tokens - 1 more tokens",
)


def mtp_retained_tokens(cfg: Configuration) -> int:
    """The tokens a sliding-window layer keeps below its window for multi-module MTP, from 0.28.

    ``get_kv_cache_configs`` (v1/core/kv_cache_utils.py, 0.28.0 and 0.30.0 wheels) sets every
    ``SlidingWindowSpec``'s ``extra_retained_tokens`` to ``num_speculative_tokens - 1`` when
    ``SpeculativeConfig.use_multi_module_mtp()``: the method is "mtp" (the MTP model types fold into it) and
    ``min(num_nextn_predict_layers, num_speculative_tokens) > 1`` (the draft's layer count: the model's MTP
    layers, ``hf_config_override``); ``max_admission_blocks_per_request`` then holds ``window - 1 +
    extra_retained_tokens + max_num_batched_tokens`` tokens per request (at most max_model_len). 0.27.1 has no
    such field."""
    if not versions.at_least(cfg.key, 0, 28) or cfg.beh.engine != "v1":
        return 0
    req = speculative_request(cfg.args)
    if not req or req.get("unreadable") or req.get("method") not in SPEC_MTP:
        return 0
    layers = int((cfg.model.extra.get("facts") or {}).get("mtp_layers") or 0)
    num_spec = int_arg(config_arg(cfg.args, "speculative_config") or {}, "num_speculative_tokens")
    if num_spec is None:
        num_spec = layers  # SpeculativeConfig: "Default to max value defined in draft model config" (n_predict)
    return num_spec - 1 if min(layers, num_spec) > 1 else 0


@dataclass(kw_only=True)
class KvCache(StageResult):
    """The KV cache of one rank: its layout, blocks, the tokens vLLM reports and the concurrency it allows."""

    kv_bytes_per_token: int  # all layers of the rank (and a draft model's)
    block_size: int  # tokens per block (raised for hybrid Mamba models)
    per_block_pool: int  # bytes one block takes from the pool
    num_blocks: int
    num_override: int | None  # --num-gpu-blocks-override
    kv_tokens: int
    concurrency: float
    one_request: float  # bytes of KV cache one max_model_len request needs
    # (bytes, blocks) one request of a given length takes from the pool
    per_request: Callable[[int], tuple[float, int]]
    kv_bytes: float  # the memory available for it
    fractional_blocks: float  # kv_bytes / bytes of a block (negative: no memory)
    stage: int = 0  # the pipeline stage this is (the one with the fewest blocks)
    stages: list[KvCache] = field(default_factory=list)  # every pipeline stage's, with pipeline parallel


def plan_kv_cache(cfg: Configuration, weights: Weights, profile: Profile) -> KvCache:
    """Stage 4: the KV cache layout, blocks, reported tokens and maximum concurrency (see the module docstring).

    With pipeline parallel every stage lays out its own layers in its own memory, and the scheduler, which
    keeps one block table for all workers, gives every worker the smallest number of blocks (V1
    ``get_kv_cache_configs``: "Change the num_blocks of each worker to the smallest among all workers"; V0
    ``determine_num_available_blocks`` takes the minimum over workers): the result is the stage with the fewest
    blocks, the others in ``stages``.
    """
    kinds = layer_kinds(cfg.model)
    stages: list[KvCache] = []
    # Stages alike in all _plan_stage reads (their layer kinds, their memory and, where the indexer's layers
    # depend on the position, their first layer) are one plan: with --pipeline-parallel-size 4096 most of the
    # stages are alike, and planning each was 270,000 plans for one server over the GPU catalog.
    planned: dict[tuple, KvCache] = {}
    by_position = _indexer_by_position(cfg)
    start = 0
    for index, layers in enumerate(cfg.pp_partition):
        part = kinds[start:start + layers]
        if len(kinds) != cfg.model.num_layers and cfg.model.num_layers:
            # a layer list that does not follow the decoder layers one to one: the stage's share of it
            part = kinds[len(kinds) * start // cfg.model.num_layers:len(kinds) * (start + layers) // cfg.model.num_layers]
        alike = (tuple(part), profile.kv_bytes[index], start if by_position else None)
        stage = planned.get(alike)
        if stage is None:
            stage = planned[alike] = _plan_stage(cfg, weights, profile.kv_bytes[index], part, first_layer=start)
        stages.append(stage)
        start += layers
    decides = min(range(len(stages)), key=lambda i: (stages[i].fractional_blocks, i))
    if len(stages) == 1:
        return stages[decides]
    # a copy: the plan may stand for other stages too, which keep their own notes and sources
    result = replace(stages[decides])
    notes: list[str] = []
    for stage in planned.values():
        notes.extend(n for n in stage.notes if n not in notes)
    result.notes = notes
    result.sources = dict(result.sources)
    result.sources["kv_bytes_per_token"] += (
        f" (pipeline stage {decides + 1} of {len(stages)}, the one with the fewest blocks: "
        + per_stage_text([str(s.num_blocks) for s in stages]) + " blocks per stage)")
    result.stage = decides
    result.stages = stages
    return result


def _indexer_by_position(cfg: Configuration) -> bool:
    """Whether which layers build a sparse-attention indexer depends on their position (`indexer_layers`)."""
    indexer = (cfg.model.extra.get("facts") or {}).get("indexer") or {}
    return bool(int(indexer.get("topk_freq") or 1) > 1 or indexer.get("topk_pattern"))


def standard_fp8_sparse_mla(cfg: Configuration) -> bool:
    """Whether a quantized sparse-MLA latent is stored in "the standard fp8 KV cache format" (FLASHINFER_MLA_SPARSE)
    rather than DeepSeek's fp8_ds_mla: on compute capability 10.x with an fp8 KV cache other than fp8_ds_mla,
    ``_get_backend_priorities`` (platforms/cuda.py) puts FLASHINFER_MLA_SPARSE first among the sparse backends
    ("Prefer FlashInfer for fp8 kv cache"; 0.20.0, 0.24.0, 0.26.0) and ``_canonicalize_sparse_mla_kv_cache_dtype``
    leaves its dtype alone (it turns FLASHMLA_SPARSE's and SM120's into fp8_ds_mla)."""
    return (cfg.kv_dtype_bytes == 1 and cfg.kv_dtype != "fp8_ds_mla" and cfg.beh.engine == "v1"
            and cfg.gpu.compute_capability[0] == 10 and versions.at_least(cfg.key, 0, 20))


def _plan_stage(cfg: Configuration, weights: Weights, kv_bytes: float, kinds: list[str],
                first_layer: int = 0) -> KvCache:
    """The KV cache of one rank holding the layers ``kinds`` (all of them without pipeline parallel), the first of
    them decoder layer ``first_layer``."""
    model, beh, key, args, tp, pp = cfg.model, cfg.beh, cfg.key, cfg.args, cfg.tp, cfg.pp
    kv_dtype_bytes, dtype_bytes, mnbt, max_model_len = (cfg.kv_dtype_bytes, cfg.dtype_bytes,
                                                        cfg.max_num_batched_tokens, cfg.max_model_len)
    spec_share = weights.draft
    src: dict[str, str] = {}
    notes: list[str] = []
    mla = beh.mla_supported
    standard_fp8 = standard_fp8_sparse_mla(cfg)
    per_layer, kv_how = kv_bytes_per_token_layer(model, tp, kv_dtype_bytes, beh.engine, mla, standard_fp8, key=key)
    block_size = beh.block_size
    attn_kinds = [k for k in kinds if k in ("full_attention", "sliding_attention", "chunked_attention")]
    layers_rank = len(attn_kinds)
    window = model.sliding_window or 0
    chunk = model.attention_chunk_size or 0
    n_full = sum(1 for k in attn_kinds if k == "full_attention")
    n_local = len(attn_kinds) - n_full
    # Full-attention layers with their own head size / KV heads (Gemma 4): their own bytes per token.
    per_full, full_how = full_attention_bytes_per_token_layer(model, tp, kv_dtype_bytes, mla, key=key)
    sparse = sparse_mla_bytes(model, kv_dtype_bytes, standard_fp8) if mla and beh.engine == "v1" else None
    with_indexer = indexer_layers(model, key, first_layer, layers_rank) if sparse else layers_rank
    if per_full is None and sparse and with_indexer != layers_rank:
        per_full = per_layer
        latent, index = sparse
        kv_bytes_per_token = latent * layers_rank + index * with_indexer
        src.setdefault("kv_bytes_per_token", f"MLA latent {latent} B x {layers_rank} layers + sparse-attention indexer "
                                             f"key {index} B x {with_indexer} layers that build an indexer (IndexCache: "
                                             "the others reuse a previous layer's top-k)")
    elif per_full is None:
        per_full = per_layer
        kv_bytes_per_token = per_layer * layers_rank
        src.setdefault("kv_bytes_per_token", kv_how + f" x {layers_rank} layers")
    else:
        full_rank, local_rank = n_full, n_local
        kv_bytes_per_token = per_full * full_rank + per_layer * local_rank
        src.setdefault("kv_bytes_per_token", f"{full_how} x {full_rank} full-attention layers + {kv_how} x "
                                             f"{local_rank} other layers")
    hybrid = beh.hybrid_kv_manager and n_local > 0 and (window or chunk)
    # A drafter's full-attention layers with the model's own full-attention KV spec (an EAGLE head of gpt-oss, a
    # draft model of the same shape) are more layers of that spec: they join its groups (get_kv_cache_spec
    # collects them from the same forward context) and can change the group size (GROUP_SIZE_RATIOS).
    draft_full = (draft_full_attention_layers(spec_share, model, tp, per_layer, per_full, kv_dtype_bytes, beh.engine)
                  if hybrid and n_full and spec_share is not None else 0)
    if draft_full:
        n_full += draft_full
        kv_bytes_per_token += spec_share["per_token"]
        src["kv_bytes_per_token"] += (f" + {spec_share['name']}: {spec_share['per_token_how']}, in the "
                                      f"full-attention layers' groups")
    off_why = beh.sources.get("hybrid_kv_cache_manager")
    if n_local > 0 and (window or chunk) and not beh.hybrid_kv_manager and off_why:
        # unify_hybrid_kv_cache_specs: sliding-window and chunked layers become full-attention layers
        notes.append(f"the hybrid KV cache manager is {off_why}: every layer is sized for the full length")
    # unify_kv_cache_spec_page_size (v1/core/kv_cache_utils.py, 0.19 - 0.26): layers with the smaller page get a
    # block size raised by the ratio of the pages, so that every layer's page is the largest one.
    page = block_size * max(per_layer, per_full)  # one layer, one block
    block_full = block_local = block_size
    if hybrid and per_full != per_layer and n_full:
        if page % (block_size * per_full) == 0 and page % (block_size * per_layer) == 0:
            block_full = page // per_full
            block_local = page // per_layer

    retained = mtp_retained_tokens(cfg) if hybrid and window else 0
    if retained:
        src["sliding_window_retained"] = (f"{retained} tokens kept below the {window}-token window for "
                                          "multi-module MTP (SlidingWindowSpec.extra_retained_tokens, 0.28+)")

    def per_request_blocks(length: int) -> tuple[float, int]:
        """(bytes for one request of `length` tokens, blocks it takes from the pool)."""
        if not hybrid:
            blocks = -(-length // block_size)
            return blocks * block_size * kv_bytes_per_token, blocks
        groups = _groups(n_full, n_local, key)
        full_blocks = -(-length // block_full)
        if window:
            local_tokens = min(window - 1 + retained + mnbt, length)
            local_blocks = -(-local_tokens // block_local) + 1
        else:
            local_tokens = min(chunk + mnbt, length)
            local_blocks = -(-local_tokens // block_local)
        n_full_groups, n_local_groups = groups[1], groups[2]
        blocks = n_full_groups * full_blocks + n_local_groups * local_blocks
        need = (n_full * full_blocks + n_local * local_blocks) * page
        return need, blocks

    # Mamba / gated-delta-net state layers (V1): one state page per request per layer, pooled with attention.
    n_state = sum(1 for k in kinds if k in ("mamba", "linear_attention"))
    state_page = 0
    if n_state and beh.engine == "v1":
        mamba_bytes = DTYPE_BYTES.get(str(arg_or(args, "mamba_cache_dtype", "auto")).lower(), dtype_bytes)
        ssm_arg = str(arg_or(args, "mamba_ssm_cache_dtype", "auto")).lower()
        gdn = model.extra.get("linear_attention") or {}
        if ssm_arg == "auto" and gdn.get("ssm_dtype") and versions.at_least(key, 0, 17):
            # Qwen3_5ForConditionalGenerationConfig.verify_and_update_config (models/config.py, 0.17+) takes the
            # config's mamba_ssm_dtype
            ssm_arg = str(gdn["ssm_dtype"]).lower()
        ssm_bytes = DTYPE_BYTES.get(ssm_arg, mamba_bytes)
        if gdn and not versions.at_least(key, 0, 17):
            ssm_bytes = mamba_bytes  # gated_delta_net_state_dtype used one dtype for both states before 0.17
        state_page, state_how = mamba_state_bytes(model, tp, mamba_bytes, ssm_bytes)
    mamba_hybrid = bool(state_page) and n_full > 0
    errors: list[dict] = []
    if mamba_hybrid and beh.engine == "v1" and not beh.hybrid_kv_manager and versions.at_least(key, 0, 9, 2):
        why = beh.sources.get("hybrid_kv_cache_manager") or "off"
        if not versions.at_least(key, 0, 27):
            # get_kv_cache_groups -> unify_hybrid_kv_cache_specs (0.9.2 - 0.26.0 wheels): a state layer cannot
            # become a full-attention one
            errors.append({"code": "hybrid-kv-manager-required",
                           "message": ("Hybrid KV cache manager is disabled but failed to convert the KV cache "
                                       f"specs to one unified type. (vramlint: the manager is {why}; the model's "
                                       "Mamba / linear-attention state layers need it)"),
                           "arg": "disable_hybrid_kv_cache_manager"})
        else:
            notes.append(f"the hybrid KV cache manager is {why}; vLLM {cfg.version} says hybrid state-space models "
                         "need it and fail at start-up without it (VllmConfig.__post_init__); where they fail is not modelled")
    # A model's own MTP layers (Qwen3.5) are full-attention layers with its KV spec: one group with its own
    # full-attention layers (get_kv_cache_spec collects the drafter's attention layers from the same forward context)
    mtp_full = int(spec_share.get("full_attention_layers") or 0) if spec_share is not None else 0
    if mamba_hybrid:
        raw_state = state_page
        block_size, state_page, page = _unify_mamba_page(per_layer, state_page, block_size)
        attn_rank = n_full + mtp_full
        gsize, n_attn_groups, n_state_groups = _groups(attn_rank, n_state, key)
        src["block_size"] = (f"raised to {block_size} so that an attention page holds one Mamba state page "
                             "(HybridAttentionMambaModelConfig.verify_and_update_config)")
        src["kv_bytes_per_token"] += f"; {n_state} state layers of {state_how} per request"
        notes.append(f"Setting attention block size to {block_size} tokens to ensure that attention page size is >= "
                     "mamba page size.")
        if page > raw_state:
            notes.append(f"Padding mamba page size by {100 * (page - raw_state) / raw_state:.2f}% to ensure that mamba "
                         "page size and attention page size are exactly equal.")
        # _get_kv_cache_groups_uniform_page_size: the last group of each type is padded to the group size
        notes.extend(padding_notes((attn_rank, n_state), gsize))

        def per_request_blocks(length: int) -> tuple[float, int]:  # noqa: F811 - the hybrid Mamba layout
            attn_blocks = -(-length // block_size)
            blocks = n_attn_groups * attn_blocks + n_state_groups  # one state page per state group
            return (attn_rank * attn_blocks + n_state) * page, blocks

    # The draft model's attention layers: one more KV cache spec per layer in the same pool. V1 puts layers of
    # one attention type in one group whatever their page sizes (UniformTypeKVCacheSpecs, 0.11+): a block holds
    # every layer's page; V0 gives the draft the same number of blocks in a cache of its own (below).
    draft_per_token = spec_share["per_token"] if spec_share is not None and not draft_full else None
    if draft_per_token and mtp_full and mamba_hybrid:
        kv_bytes_per_token += draft_per_token
        src["kv_bytes_per_token"] += (f" + {spec_share['name']}: {spec_share['per_token_how']}, in the full-attention "
                                      f"group ({attn_rank} layers per group)")
        draft_per_token = None
    elif draft_per_token and (hybrid or mamba_hybrid or n_state):
        label = {"eagle": "EAGLE head", "eagle3": "EAGLE-3 head"}.get(spec_share.get("head"), "draft model")
        notes.append(f"the KV cache of the {label} {spec_share['name']} is not counted (the model's KV cache has "
                     "several layer groups): KV cache and concurrency are over-estimated")
        draft_per_token = None
    target_per_token = kv_bytes_per_token
    if draft_per_token:
        kv_bytes_per_token += draft_per_token
        label = {"eagle": "EAGLE head", "eagle3": "EAGLE-3 head"}.get(spec_share.get("head"), "draft model")
        src["kv_bytes_per_token"] += f" + {label} {spec_share['name']}: {spec_share['per_token_how']}"
        if beh.engine == "v0":
            src["kv_bytes_per_token"] += (" (V0: the model's blocks split between the two caches, "
                                          "split_num_cache_blocks_evenly)")

    num_override = int_arg(args, "num_gpu_blocks_override")
    if mamba_hybrid:
        per_block_pool = page * gsize
        num_groups = n_attn_groups + n_state_groups
    elif hybrid:
        gsize, n_full_groups, n_local_groups = _groups(n_full, n_local, key)
        per_block_pool = page * gsize
        num_groups = n_full_groups + n_local_groups
        notes.extend(padding_notes((n_full, n_local), gsize))
    else:
        per_block_pool = block_size * kv_bytes_per_token
        num_groups = 1
    num_blocks = int(kv_bytes // per_block_pool) if kv_bytes > 0 and per_block_pool else 0
    if draft_per_token and beh.engine == "v0":
        # SpecDecodeWorker.determine_num_available_blocks: the model's own count, then split_num_cache_blocks_evenly
        target_blocks = int(kv_bytes // (block_size * target_per_token)) if kv_bytes > 0 else 0
        num_blocks = int(target_blocks * target_per_token / (target_per_token + draft_per_token))
    if num_override:
        notes.append(f"Overriding num_gpu_blocks={num_blocks} with num_gpu_blocks_override={num_override}")
        num_blocks = num_override
        src["num_gpu_blocks"] = "--num-gpu-blocks-override"

    # ---- concurrency and tokens
    if beh.concurrency == "v0":
        kv_tokens = num_blocks * block_size
        concurrency = kv_tokens / max_model_len if max_model_len else 0.0
    elif beh.concurrency == "v1-tokens":
        kv_tokens = num_blocks * block_size
        concurrency = kv_tokens / max_model_len if max_model_len else 0.0
    else:
        _, blocks_per_req = per_request_blocks(max_model_len)
        concurrency = num_blocks / blocks_per_req if blocks_per_req else 0.0
        kv_tokens = (num_blocks // num_groups) * block_size
        # From 0.21 `_report_kv_cache_config` (later `get_kv_cache_capacity`) logs the group-aware capacity,
        # max_concurrency x max_model_len, instead of num_blocks // groups x block_size.
        if versions.at_least(key, 0, 21):
            kv_tokens = int(concurrency * max_model_len)

    # ---- the KV cache one request of max_model_len needs: vLLM's start-up check below (what a GPU must leave free)
    if beh.engine == "v0":
        one_request = (pp if versions.at_least(key, 0, 8) else 1) * -(-max_model_len // block_size) * per_block_pool
    else:
        one_request = per_request_blocks(max_model_len)[0]

    return KvCache(kv_bytes_per_token=kv_bytes_per_token, block_size=block_size, per_block_pool=per_block_pool,
                   num_blocks=num_blocks, num_override=num_override, kv_tokens=kv_tokens, concurrency=concurrency,
                   one_request=one_request, per_request=per_request_blocks, kv_bytes=kv_bytes,
                   fractional_blocks=kv_bytes / per_block_pool if per_block_pool else 0.0, notes=notes, sources=src,
                   errors=errors)
