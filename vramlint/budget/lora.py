"""LoRA (``--enable-lora``): the adapter slots vLLM allocates on the GPU when it loads the model.

vLLM does not load adapters at start-up, but ``LoRAModelManager._create_lora_modules`` wraps every linear layer
of the language model (and, from the releases that have ``FusedMoEWithLoRA``, the fused MoE experts; and the
embedding and lm_head of architectures that list them in ``embedding_modules``) and each wrapper's
``create_lora_weights`` allocates zero-filled stacks for ``--max-loras`` adapters of rank ``--max-lora-rank``
in ``--lora-dtype`` (``auto``: the model dtype). That happens inside ``load_model``'s ``DeviceMemoryProfiler``
(V1 ``GPUModelRunner.load_model`` -> ``load_lora_model``), so it is part of "Model loading took X GiB".

Per wrapped matrix with input ``i`` and output slices ``o_1..o_n`` (q/k/v are three slices, gate/up two):

* ``lora_a_stacked``: n x max_loras x rank x i  (rank / tp with ``--fully-sharded-loras`` on column layers;
  i / tp on row-parallel layers, whose input is sharded)
* ``lora_b_stacked``: max_loras x o_k x rank per slice  (o_k / tp on column-parallel layers; o / tp on row
  layers only with ``--fully-sharded-loras``)
* fused MoE: w13 a / b = max_loras x experts x rank x hidden / x (intermediate / tp) x rank, twice (gate, up);
  w2 a / b = max_loras x experts x rank x (intermediate / tp) / x hidden x rank
* embedding: a = max_loras x vocab x rank, b = max_loras x hidden x rank; lm_head (``LogitsProcessorWithLoRA``):
  a = max_loras x rank x hidden, b = max_loras x vocab x rank

The vision tower of a multimodal model gets no slots (its modules have no Punica wrapper unless the tower LoRA
option is on). The profiling run with LoRA (``maybe_dummy_run_with_lora``) builds its warm-up adapters on the
CPU (``create_dummy_lora(..., "cpu")``) and copies them into these slots: it allocates nothing more on the GPU
beyond the Punica kernels' small fp32 intermediates (tokens x rank per slice), which are not counted.
``--max-cpu-loras`` sizes the CPU cache only.
"""

from __future__ import annotations

from vramlint import versions
from vramlint.budget.common import int_arg, truthy

VLLM_SOURCES = (
    "vllm/lora/model_manager.py::LoRAModelManager._create_lora_modules, create_dummy_lora (0.11 - 0.21)",
    "vllm/lora/layers/base_linear.py::BaseLinearLayerWithLoRA.create_lora_weights (0.11 - 0.21)",
    "vllm/lora/layers/fused_moe.py::FusedMoEWithLoRA._create_lora_a_weights / _b_weights (0.14 - 0.21; "
    "absent in 0.11)",
    "vllm/lora/layers/vocal_parallel_embedding.py, logits_processor.py: embedding / lm_head slots",
    "vllm/config/lora.py::LoRAConfig (max_lora_rank 16, max_loras 1, lora_dtype auto, max_cpu_loras)",
    "vllm/v1/worker/lora_model_runner_mixin.py: warm-up adapters of rank min(max_lora_rank, 8), on the CPU",
)

LORA_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "half": 2, "float": 4}


def lora_enabled(args: dict) -> bool:
    return bool(truthy(args.get("enable_lora")))


def _matrices(facts: dict, moe_lora: bool) -> list[tuple[str, int, list[int], int]]:
    """The LoRA-wrapped matrices of the language model: (parallel kind, input, output slices, count).

    Kinds: ``col`` (column-parallel, output sharded), ``row`` (row-parallel, input sharded), ``rep``
    (replicated), ``experts`` (fused MoE, input hidden / output intermediate, count = experts x layers)."""
    hidden, layers = facts.get("hidden") or 0, facts.get("layers") or 0
    heads = facts.get("heads") or 0
    kv = facts.get("kv_heads") or heads
    hd = facts.get("head_dim") or (hidden // heads if heads else 0)
    pattern = facts.get("pattern") or "F" * layers
    attn_layers = sum(1 for ch in pattern if ch in "FSC")
    out: list[tuple[str, int, list[int], int]] = []
    mla = facts.get("mla")
    if mla:
        rope, nope, v, q_lora, kv_lora = (mla["qk_rope"], mla["qk_nope"], mla["v_head"], mla.get("q_lora_rank"),
                                          mla["kv_lora_rank"])
        if q_lora:
            out.append(("rep", hidden, [q_lora], attn_layers))
            out.append(("col", q_lora, [heads * (nope + rope)], attn_layers))
        else:
            out.append(("col", hidden, [heads * (nope + rope)], attn_layers))
        out.append(("rep", hidden, [kv_lora + rope], attn_layers))
        out.append(("col", kv_lora, [heads * (nope + v)], attn_layers))
        out.append(("row", heads * v, [hidden], attn_layers))
    elif attn_layers:
        full = facts.get("full_attn")
        n_full = (facts.get("pattern") or "").count("F") if full else 0
        if full and n_full:
            fhd, fkv = full["head_dim"], full["kv_heads"]
            out.append(("col", hidden, [heads * fhd, fkv * fhd, fkv * fhd], n_full))
            out.append(("row", heads * fhd, [hidden], n_full))
        rest = attn_layers - n_full
        q_out = heads * hd * (2 if facts.get("attn_gate") else 1)
        out.append(("col", hidden, [q_out, kv * hd, kv * hd], rest))
        out.append(("row", heads * hd, [hidden], rest))
    la = facts.get("linear")
    n_linear = pattern.count("L")
    if la and n_linear:
        key_dim, value_dim = la["k_heads"] * la["k_dim"], la["v_heads"] * la["v_dim"]
        out.append(("col", hidden, [2 * key_dim + value_dim, value_dim], n_linear))  # in_proj_qkv, in_proj_z
        out.append(("col", hidden, [la["v_heads"], la["v_heads"]], n_linear))  # in_proj_b, in_proj_a
        out.append(("row", value_dim, [hidden], n_linear))
    mamba = facts.get("mamba")
    n_mamba = layers if facts.get("mamba_parallel") else pattern.count("M")
    if mamba and n_mamba:
        inner = mamba["inner"]
        in_out = 2 * inner
        if mamba.get("version") == 2:
            in_out += 2 * mamba.get("n_groups", 1) * mamba["d_state"] + mamba["n_heads"]
        out.append(("col", hidden, [in_out], n_mamba))
        out.append(("row", inner, [hidden], n_mamba))

    def mlp(inter: int, count: int) -> None:
        if not inter or not count:
            return
        gated = facts.get("mlp") != "mlp"
        out.append(("col", hidden, [inter, inter] if gated else [inter], count))
        out.append(("row", inter, [hidden], count))

    moe = facts.get("moe")
    if "-" in pattern or "E" in pattern:
        mlp(facts.get("inter") or 0, pattern.count("-"))
        moe_layers = pattern.count("E") if moe else 0
    elif moe:
        dense = len(moe.get("dense_layers") or [])
        mlp(moe.get("dense_inter") or facts.get("inter") or 0, dense)
        moe_layers = layers - dense
        if moe.get("parallel_mlp_inter"):
            mlp(moe["parallel_mlp_inter"], moe_layers)
    else:
        mlp(facts.get("inter") or 0, layers)
        moe_layers = 0
    if moe and moe_layers:
        out.append(("rep", hidden, [moe["experts"]], moe_layers))  # router gate (ReplicatedLinear)
        if moe.get("shared"):
            mlp(moe.get("shared_inter") or moe.get("inter") or facts.get("inter") or 0, moe_layers)
        if moe_lora:
            out.append(("experts", hidden, [moe.get("inter") or facts.get("inter") or 0], moe["experts"] * moe_layers))
    return out


def lora_slot_bytes(facts: dict, args: dict, tp: int, pp: int, dtype_bytes: float,
                    key: versions.VersionKey) -> tuple[int, str]:
    """GPU bytes of the LoRA slots one rank allocates at load time, and how they were counted."""
    rank = int_arg(args, "max_lora_rank") or 16
    max_loras = int_arg(args, "max_loras") or 1
    sharded = bool(truthy(args.get("fully_sharded_loras")))
    lora_dtype = str(args.get("lora_dtype") or "auto").lower().replace("torch.", "")
    elem = LORA_DTYPE_BYTES.get(lora_dtype, dtype_bytes)
    moe_lora = versions.at_least(key, 0, 14)
    tp = max(1, tp)
    elements = 0.0
    for kind, fan_in, slices, count in _matrices(facts, moe_lora):
        if kind == "col":
            a = len(slices) * (rank / tp if sharded else rank) * fan_in
            b = sum(o / tp for o in slices) * rank
        elif kind == "row":
            a = rank * fan_in / tp
            b = sum(o / tp if sharded else o for o in slices) * rank
        elif kind == "experts":
            inter = slices[0] / tp
            a = 2 * rank * fan_in + rank * inter  # w13 (gate, up) and w2
            b = 2 * inter * rank + fan_in * rank
        else:  # replicated
            a = len(slices) * rank * fan_in
            b = sum(slices) * rank
        elements += (a + b) * count
    elements /= max(1, pp)
    vocab, hidden = facts.get("vocab") or 0, facts.get("hidden") or 0
    elements += 2 * rank * (vocab + hidden)  # embedding and lm_head slots
    total = int(elements * max_loras * elem)
    how = (f"{max_loras} LoRA slot(s) of rank {rank} on every language-model linear layer"
           + (" and the MoE experts" if moe_lora and facts.get("moe") else "")
           + f", {lora_dtype if lora_dtype != 'auto' else 'model dtype'}")
    return total, how
