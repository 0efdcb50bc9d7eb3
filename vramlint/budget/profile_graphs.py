"""CUDA graphs, part of stage 3 (:mod:`vramlint.budget.profile`): which batch sizes vLLM captures, the memory the
graphs take, and whether it is taken before the KV cache is sized or out of the headroom after it.

Release by release:

* **Capture sizes.** V0 (``VllmConfig._set_cudagraph_sizes``): ``[1, 2, 4] + 8, 16, ...`` up to the first size
  at least ``max_num_seqs``, whole-model graphs. V1 up to 0.10: ``[1, 2, 4] + range(8, 513, 8)`` (at most
  ``max_num_batched_tokens``), PIECEWISE graphs. 0.11: up to ``min(2 x max_num_seqs, 512)`` in steps of 8, and the
  default mode FULL_AND_PIECEWISE adds FULL graphs of the decode batches up to ``max_num_seqs``. 0.12+: steps of 8
  below 256 and of 16 from 256 (51 PIECEWISE and 35 FULL sizes for 256 sequences, as the 0.21 log of P10 says).
  ``--performance-mode interactivity`` (0.17+): every size from 1 to 32 first, instead of ``[1, 2, 4]``.
  ``--enforce-eager``: none.
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
from vramlint.budget.common import GiB, truthy

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


def capture_sizes(beh: versions.Behavior, max_num_seqs: int, max_num_batched_tokens: int,
                  enforce_eager: bool) -> tuple[list[int], list[int]]:
    """The batch sizes vLLM captures: (PIECEWISE, FULL) for V1, ([], whole-model) for V0."""
    if enforce_eager:
        return [], []
    key = beh.key
    if beh.engine == "v0":
        sizes = [1, 2, 4] + [8 * i for i in range(1, 1025)]
        largest = next((s for s in sizes if s >= max_num_seqs), sizes[-1])
        return [], [s for s in sizes if s <= largest]
    if not versions.at_least(key, 0, 11):
        return [s for s in [1, 2, 4, *range(8, 513, 8)] if s <= max_num_batched_tokens], []
    largest = min(2 * max_num_seqs, 512, max_num_batched_tokens)
    if versions.at_least(key, 0, 12):
        # --performance-mode interactivity (0.17+): every size up to 32, then the usual grid
        small = list(range(1, min(largest, 32) + 1)) if beh.performance_mode == "interactivity" else [1, 2, 4]
        sizes = sorted({*small, *range(8, 256, 8), *range(256, largest + 1, 16)})
    else:
        sizes = [1, 2, 4, *range(8, largest + 1, 8)]
    piecewise = [s for s in sizes if s <= largest]
    full = [s for s in piecewise if s <= max_num_seqs]
    return piecewise, full


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

