"""CUDA graphs, part of stage 3 (:mod:`vramlint.budget.profile`): which batch sizes vLLM captures, the memory the
graphs take, and whether it is taken before the KV cache is sized or out of the headroom after it.

Release by release:

* **Capture sizes.** V0 (``VllmConfig._set_cudagraph_sizes``): ``[1, 2, 4] + 8, 16, ...`` up to the first size
  at least ``max_num_seqs``, whole-model graphs. V1 up to 0.10: ``[1, 2, 4] + range(8, 513, 8)`` (at most
  ``max_num_batched_tokens``), PIECEWISE graphs. 0.11: up to ``min(2 x max_num_seqs, 512)`` in steps of 8, and the
  default mode FULL_AND_PIECEWISE adds FULL graphs of the decode batches up to ``max_num_seqs``. 0.12+: steps of 8
  below 256 and of 16 from 256 (51 PIECEWISE and 35 FULL sizes for 256 sequences, as the 0.21 log of P10 says).
  ``--performance-mode interactivity`` (0.17+): every size from 1 to 32 first, instead of ``[1, 2, 4]``.
  ``--enforce-eager``: none. 0.10 - 0.11 bound the sizes at ``min(2 x max_num_seqs, 512)``
  (``cuda_graph_sizes``), 0.13+ multiply ``max_num_seqs`` by ``1 + num_speculative_tokens``, 0.28+ allow 1024 on
  compute capability 10.x; the command line (``--cuda-graph-sizes``, ``--cudagraph-capture-sizes``,
  ``--max-cudagraph-capture-size``, ``cudagraph_mode``, ``-O``) and gpt-oss's config hook (up to 1024) change
  them: :func:`capture_sizes`.
* **When the memory is taken.** V0 and V1 up to 0.17 (and 0.18 / 0.19 by default) capture after the KV cache
  is allocated (``capture_model`` after ``initialize_kv_cache``): the graphs come out of what is free then,
  ``total - requested + the activation peak`` (freed by ``empty_cache`` after profiling) minus what the
  profiler did not count (the CUDA context from 0.6.5 / 0.9.1; the communicators set up before the 0.11+
  snapshot). Larger graphs than that are ``torch.OutOfMemoryError`` in ``capture_model``, after the KV cache
  was sized. V1 0.18+ with ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` (default on from 0.20) measures them
  first (``profile_cudagraph_memory``) and subtracts them before sizing the KV cache.
* **NCCL inside the graphs.** Without the custom all-reduce (PCIe GPUs at TP > 2, GeForce cards,
  ``--disable-custom-all-reduce``) the tensor-parallel all-reduces captured into the graphs are NCCL's, and
  NCCL keeps device memory for every captured collective (vLLM issue #5517: 3.8 GiB of graph memory on A10G /
  L4 with CUDA drivers before 12.4, 1.1 GiB from 12.4; vllm/env_override.py sets ``NCCL_CUMEM_ENABLE=0`` from
  0.5 to 0.10 because cuMem made it worse, NCCL issue #1234). The cost per captured collective is known for the
  releases that pin torch 2.6 or older (up to 0.8.x); for later ones it is named in a note, not checked.
"""

from __future__ import annotations

from vramlint import versions
from vramlint.budget.common import GiB, NotSized, config_arg, truthy

VLLM_SOURCES = (
    "vllm/config.py, vllm/config/vllm.py::VllmConfig._set_cudagraph_sizes (capture sizes by release)",
    "vllm/config/__init__.py (0.11): cudagraph_mode default FULL_AND_PIECEWISE",
    "vllm/v1/worker/gpu_model_runner.py::capture_model (after initialize_kv_cache; 0.7 - 0.17)",
    "vllm/v1/worker/gpu_model_runner.py::profile_cudagraph_memory (0.18+), "
    "envs.VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
    "vllm/env_override.py: NCCL_CUMEM_ENABLE=0 (0.5 - 0.10)",
)

MiB = 1 << 20
# The graphs' own memory pool and executables: 4 MiB per captured size and mode, 1 MiB per layer per mode
# (observed totals 0.1 - 1.3 GiB; low for large MoE models: 0.48 predicted vs 1.34 GiB logged for P03).
BYTES_PER_CAPTURE = 4 * MiB
BYTES_PER_LAYER = 1 * MiB
# Device memory NCCL keeps per all-reduce captured into a CUDA graph: a lower bound from the P08 log (vLLM 0.8.5,
# Qwen3-30B-A3B at TP 4 on A10s: 6.1 GiB of the GPU outside PyTorch's pools when capture ran out of memory, 67
# sizes x 97 all-reduces = 6,499 collectives if all were captured), with the NCCL of torch 2.6 (2.21) that vLLM
# up to 0.8.5 pins, and NCCL_CUMEM_ENABLE=0. With 0.10.2 (torch 2.8) the P21 log (8 x L40S, TP 8) took 3.45 GiB
# for all its graphs, at most 0.27 MiB per captured collective: the cost is not the same for newer NCCL (nor, per
# vLLM issue #5517, for every driver), so it is only applied to the releases it was measured on.
NCCL_BYTES_PER_CAPTURED_ALL_REDUCE = int(0.8 * MiB)
# All-reduces per decoder layer (attention output and MLP / MoE output projections) and one for the embedding.
ALL_REDUCES_PER_LAYER = 2


# Models whose config hook (``verify_and_update_config``, vllm/model_executor/models/config.py) raises the largest
# capture size: GptOssForCausalLMConfig from 0.10.1 ("This will increase the number of CUDA graphs from 67 to 83"):
# 0.10.1 - 0.10.2 replace a single --cuda-graph-sizes value below 1024 with the 16-step grid up to 1024, 0.11.0
# below 992 with the grid up to 992 (the FA3 full-graph limit of its FIXME), 0.12+ set max_cudagraph_capture_size
# to 1024 when neither it nor cudagraph_capture_sizes is given (read in the 0.10.1.1, 0.10.2, 0.11.0, 0.12.0,
# 0.13.0, 0.15.0, 0.17.0, 0.19.0, 0.21.0, 0.24.0, 0.27.1, 0.28.0, 0.29.0, 0.30.0 and 0.33.0 wheels).
LARGER_CAPTURE_ARCHITECTURES = {"GptOssForCausalLM": ((0, 10, 1), {(0, 11): 992}, 1024)}
CUDAGRAPH_MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")


# vLLM builds the list of capture sizes and captures a graph of each: a largest size of 10**11 (the command line
# allows it when max_num_batched_tokens is as large) is 6 billion sizes, a list vLLM itself cannot build; past this
# many the budget is not computed (the widest real grid, 1,024 on Blackwell, is 83 sizes)
MAX_CAPTURE_SIZES = 65_536


def _too_many(count: int, largest: int, dest: str) -> None:
    if count > MAX_CAPTURE_SIZES:
        raise NotSized(dest, f"CUDA-graph capture sizes up to {largest:,} ({count:,} sizes, a graph captured for each) "
                             f"are more than vramlint sizes ({MAX_CAPTURE_SIZES:,}): its memory budget is not computed")


def _grid(largest: int, small: list[int], dest: str = "compilation_config") -> list[int]:
    """[1, 2, 4] (or 1 ... 32), then steps of 8 below 256 and of 16 from 256 (_set_cudagraph_sizes, 0.12+)."""
    _too_many(len(small) + max(0, min(largest, 255) // 8) + max(0, (largest - 256) // 16 + 1), largest, dest)
    sizes = [s for s in small if s <= largest]
    if largest >= 8:
        sizes += range(8, min(largest + 1, 256), 8)
    if largest >= 256:
        sizes += range(256, largest + 1, 16)
    return sorted(set(sizes))


def _int_list(value, dest: str = "compilation_config", what: str = "cudagraph_capture_sizes") -> list[int] | None:
    if value is None:
        return None
    if isinstance(value, (int, str)):
        value = str(value).replace(",", " ").split()
    try:
        out = [_int(v, dest, what, strict=True) for v in value]
    except (TypeError, ValueError):
        return None
    return out or None


def _int(value, dest: str = "compilation_config", what: str = "", strict: bool = False) -> int | None:
    """An integer setting; a JSON number that is no finite number (``Infinity``, ``NaN``, ``1e400``) is no integer
    vLLM's config takes, and the budget cannot be computed from it (``NotSized``, said on ``dest``)."""
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        raise NotSized(dest, f"{what or dest} {value} is not a finite integer (vLLM's config takes an int): its "
                             "memory budget is not computed")
    try:
        if value is None or str(value).strip() == "":
            if strict:
                raise ValueError(value)
            return None
        return int(value)
    except (TypeError, ValueError):
        if strict:
            raise
        return None


def speculative_tokens(args: dict) -> int:
    """``num_speculative_tokens`` of ``--speculative-config`` (or the older ``--num-speculative-tokens``): each
    decode step of a request is 1 + that many tokens (``uniform_decode_query_len``)."""
    spec = config_arg(args, "speculative_config") or {}
    return max(_int(spec.get("num_speculative_tokens", args.get("num_speculative_tokens")), "speculative_config",
                    "speculative_config.num_speculative_tokens") or 0, 0)


def cudagraph_mode(beh: versions.Behavior, args: dict) -> str:
    """The CUDA-graph mode vLLM settles on for V1 from the command line: ``compilation_config.cudagraph_mode`` when
    given; else 0.10 PIECEWISE, 0.11 FULL_AND_PIECEWISE when the compilation level is 3 (PIECEWISE) and NONE
    otherwise (``VllmConfig.__post_init__``), 0.12+ the optimization level's default (``-O0`` NONE, ``-O1``
    PIECEWISE, ``-O2`` / ``-O3`` FULL_AND_PIECEWISE), NONE when a mode needing piecewise compilation meets a
    compilation mode other than VLLM_COMPILE (3). Not modelled: attention backends that lower the mode at run time
    (``_check_and_update_cudagraph_mode``), pooling and encoder-decoder models."""
    cc = config_arg(args, "compilation_config") or {}
    given = str(cc.get("cudagraph_mode") or "").strip().upper()
    mode_given = cc.get("mode", cc.get("level"))
    compile_mode = None
    if mode_given is not None:
        text = str(mode_given).strip().upper()
        compile_mode = {"NONE": 0, "STOCK_TORCH_COMPILE": 1, "DYNAMO_TRACE_ONCE": 2, "DYNAMO_ONCE": 2,
                        "VLLM_COMPILE": 3, "PIECEWISE": 3}.get(text, _int(text))
    key = beh.key
    if not versions.at_least(key, 0, 11):
        if given in CUDAGRAPH_MODES:
            return given
        if truthy(cc.get("full_cuda_graph")):
            return "FULL"  # 0.10.x: the deprecated flag sets cudagraph_mode FULL
        return "NONE" if versions.at_least(key, 0, 10, 1) and compile_mode not in (None, 3) else "PIECEWISE"
    if not versions.at_least(key, 0, 12):
        if given in CUDAGRAPH_MODES:
            return given
        return "FULL_AND_PIECEWISE" if compile_mode in (None, 3) else "NONE"
    level = _int(args.get("optimization_level"))
    level = 2 if level is None else level
    if compile_mode is None:
        compile_mode = 3 if level > 0 else 0
    mode = given if given in CUDAGRAPH_MODES else {0: "NONE", 1: "PIECEWISE"}.get(level, "FULL_AND_PIECEWISE")
    if mode in ("PIECEWISE", "FULL_AND_PIECEWISE") and compile_mode != 3:
        return "NONE"
    return mode


def _v1_sizes(beh: versions.Behavior, max_num_seqs: int, mnbt: int, args: dict, architecture: str | None,
              compute_capability: tuple | None, decode_query_len: int) -> list[int]:
    """The capture sizes (``compilation_config.cudagraph_capture_sizes``) of V1 0.10+."""
    key = beh.key
    cc = config_arg(args, "compilation_config") or {}
    override = LARGER_CAPTURE_ARCHITECTURES.get(architecture or "")
    raised = override is not None and versions.at_least(key, *override[0])
    if not versions.at_least(key, 0, 12):
        # 0.10 - 0.11: SchedulerConfig.cuda_graph_sizes, default [min(2 x max_num_seqs, 512)]; one value N is
        # [1, 2, 4] + 8 ... N in steps of 8, several are the sizes; then those above max_num_batched_tokens go.
        # compilation_config.cudagraph_capture_sizes, when given, replaces the list (init_with_cudagraph_sizes).
        given = _int_list(args.get("cuda_graph_sizes"), "cuda_graph_sizes", "--cuda-graph-sizes")
        listed = _int_list(cc.get("cudagraph_capture_sizes"), what="compilation_config.cudagraph_capture_sizes")
        if listed:
            return sorted(set(listed))
        graph_sizes = given or [min(2 * max_num_seqs, 512)]
        if raised and len(graph_sizes) == 1:
            limit = override[1].get(key[:2], override[2])
            if graph_sizes[0] < limit:
                return [s for s in _grid(limit, [1, 2, 4]) if s <= mnbt]
        if len(graph_sizes) == 1:
            largest = min(graph_sizes[0], mnbt)  # the sizes above max_num_batched_tokens go
            _too_many(3 + max(0, largest // 8), largest, "cuda_graph_sizes" if given else "max_num_seqs")
            sizes = [1, 2, 4, *range(8, largest + 1, 8)]
        else:
            sizes = sorted(graph_sizes)
        return [s for s in sizes if s <= mnbt]
    # 0.12+: compilation_config.max_cudagraph_capture_size (--max-cudagraph-capture-size) or the model's hook, else
    # min(max_num_seqs x decode_query_len x 2, 512) (x decode_query_len from 0.13; 1024 instead of 512 on compute
    # capability 10.x from 0.28), at most max_num_batched_tokens; cudagraph_capture_sizes
    # (--cudagraph-capture-sizes, --cuda-graph-sizes in 0.12) replace the grid, less those above
    # max_num_batched_tokens.
    listed = (_int_list(cc.get("cudagraph_capture_sizes"), what="compilation_config.cudagraph_capture_sizes")
              or _int_list(args.get("cudagraph_capture_sizes"), "cudagraph_capture_sizes")
              or _int_list(args.get("cuda_graph_sizes"), "cuda_graph_sizes"))
    largest = _int(cc.get("max_cudagraph_capture_size"), what="compilation_config.max_cudagraph_capture_size")
    dest = "compilation_config"
    if largest is None:
        largest = _int(args.get("max_cudagraph_capture_size"), "max_cudagraph_capture_size")
        dest = "max_cudagraph_capture_size"
    if largest is None and raised and not listed:
        largest = override[2]
    if largest is None:
        ceiling = 1024 if (versions.at_least(key, 0, 28) and compute_capability
                           and int(compute_capability[0]) == 10) else 512
        dql = decode_query_len if versions.at_least(key, 0, 13) else 1
        largest = min(max_num_seqs * dql * 2, ceiling)
    largest = min(mnbt, largest)
    if listed:
        return sorted({s for s in listed if s <= mnbt})
    small = (list(range(1, min(largest, 32) + 1)) if beh.performance_mode == "interactivity" else [1, 2, 4])
    return _grid(largest, small, dest)


# V0's capture sizes (_BATCH_SIZES_TO_CAPTURE: 1, 2, 4, then 8 to 8,192 in steps of 8), ascending
_V0_CAPTURE_SIZES = (1, 2, 4, *range(8, 8 * 1024 + 1, 8))


def capture_sizes(beh: versions.Behavior, max_num_seqs: int, max_num_batched_tokens: int,
                  enforce_eager: bool, args: dict | None = None, architecture: str | None = None,
                  compute_capability: tuple | None = None) -> tuple[list[int], list[int]]:
    """The batch sizes vLLM captures: (PIECEWISE, FULL) for V1, ([], whole-model) for V0."""
    if enforce_eager:
        return [], []
    args = args or {}
    key = beh.key
    if beh.engine == "v0":
        # the first size >= max_num_seqs (the last when none is) and every size below it, of the sorted grid
        # (made once: it was 1,027 numbers made and filtered for every budget of a V0 engine)
        sizes = _V0_CAPTURE_SIZES
        largest = next((k for k, size in enumerate(sizes) if size >= max_num_seqs), len(sizes) - 1)
        return [], list(sizes[:largest + 1])
    if not versions.at_least(key, 0, 10):
        # up to 0.9: SchedulerConfig.cuda_graph_sizes defaults to [512] (0.9.2), PIECEWISE graphs only
        return [s for s in [1, 2, 4, *range(8, 513, 8)] if s <= max_num_batched_tokens], []
    mode = cudagraph_mode(beh, args)
    if mode == "NONE":
        return [], []
    dql = 1 + speculative_tokens(args)
    sizes = _v1_sizes(beh, max_num_seqs, max_num_batched_tokens, args, architecture, compute_capability, dql)
    # capture_model / CudagraphDispatcher.initialize_cudagraph_keys: the mixed mode's graphs of every size; FULL
    # graphs of uniform decode batches (dql <= size <= max_num_seqs x dql) where the decode routine is separate
    decode = [s for s in sizes if dql <= s <= max_num_seqs * dql]
    if mode == "PIECEWISE":
        return sizes, []
    if mode == "FULL":
        return [], sizes
    if mode == "FULL_DECODE_ONLY":
        return [], decode
    return sizes, decode


def graph_pool_bytes(piecewise: list[int], full: list[int], layers: int) -> int:
    """The graphs' own memory (pool and executables), by the per-capture estimate above."""
    modes = (1 if piecewise else 0) + (1 if full else 0)
    return (len(piecewise) + len(full)) * BYTES_PER_CAPTURE + modes * layers * BYTES_PER_LAYER


def nccl_graph_bytes(piecewise: list[int], full: list[int], layers: int) -> int:
    """NCCL's memory for the tensor-parallel all-reduces captured into the graphs (when NCCL carries them)."""
    collectives = (len(piecewise) + len(full)) * (ALL_REDUCES_PER_LAYER * layers + 1)
    return collectives * NCCL_BYTES_PER_CAPTURED_ALL_REDUCE


def nccl_graph_cost_measured(beh: versions.Behavior) -> bool:
    """Whether NCCL_BYTES_PER_CAPTURED_ALL_REDUCE was measured on this release's NCCL: releases that pin torch
    2.6 or older (vLLM up to 0.8.x; 0.9.0 moved to torch 2.7 and a newer NCCL)."""
    return not versions.at_least(beh.key, 0, 9)


def graphs_in_budget(beh: versions.Behavior) -> bool:
    """Whether vLLM subtracts the graph memory before sizing the KV cache (else it is taken after)."""
    return beh.cudagraph_in_budget


def capture_free_bytes(total: float, requested: float, activation: int, uncounted: int) -> float:
    """Free memory when the graphs are captured after the KV cache: the headroom above the requested memory,
    the activation peak the profiler freed, less what was on the GPU but not counted (``uncounted``)."""
    return total - requested + activation - uncounted


def describe(piecewise: list[int], full: list[int]) -> str:
    if not piecewise and not full:
        return "no CUDA graphs"
    parts = []
    if piecewise:
        parts.append(f"{len(piecewise)} PIECEWISE (largest {max(piecewise)})")
    if full:
        parts.append(f"{len(full)} FULL (largest {max(full)})")
    return " and ".join(parts) + " capture sizes"


def enforce_eager(args: dict) -> bool:
    return truthy(args.get("enforce_eager"))


def gib(value: float) -> str:
    return f"{value / GiB:.2f} GiB"

