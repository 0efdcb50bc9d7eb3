"""A cold ``torch.compile`` inside vLLM's profiling window, part of stage 3 (:mod:`vramlint.budget.profile`).

V1 compiles the model on its first call, which is ``profile_run``'s dummy forward pass, inside
``memory_profiling`` (``determine_available_memory``, vllm/v1/worker/gpu_worker.py; the AOT path of
vllm/compilation/decorators.py compiles, then runs the profiling forward, and nothing resets the peak in between:
vllm/utils/mem_utils.py::memory_profiling resets it only on entry). Whatever the compiler allocates and frees
there is in the peak vLLM subtracts from the KV cache, on every start whose compile cache is cold (vLLM issues
#54122 and #54383).

What it allocates is stated by the code, in two parts:

* vLLM turns on Inductor's combo kernels with ``benchmark_combo_kernel`` for torch 2.9+
  (``CompilationConfig.__post_init__``, vllm/config/compilation.py, read in the 0.12.0 - 0.34.0 wheels; 0.33+
  not when Inductor is deterministic), so Inductor benchmarks every candidate group of independent kernels
  before combining them (torch/_inductor/scheduler.py::Scheduler.speedup_by_combo_kernel, each subkernel
  through TritonScheduling.benchmark_fused_nodes, then the combination).
* A benchmarked kernel runs on the arguments its generated module's ``get_args()`` makes: a fresh
  ``rand_strided`` tensor of the full size of every buffer it reads or writes (TritonKernel.
  codegen_kernel_benchmark, torch/_inductor/codegen/triton.py, torch 2.13.0), and the benchmarker zeroes an
  L2-sized buffer to flush the cache between runs (InductorBenchmarker.benchmark_gpu,
  torch/_inductor/runtime/benchmarking.py: ``L2_cache_size`` of the device; 256 MiB on ROCm).

The largest buffer any benchmarked kernel of a text model reads is the input embedding table: the embedding
gather is an Inductor kernel (not an extern GEMM) of the first partition, whose argument is the rank's whole
(vocab / TP, hidden) weight. Benchmarked, it takes a second copy of that table for a moment, with the gather's
(tokens, hidden) output and the flush buffer: 1.16 + 0.03 + 0.07 = 1.26 GiB for Qwen3-8B on an RTX 4090 at
4,096 tokens, where a cold start logs a 1.28 GiB activation peak and the same command with the compiled graph
loaded from the cache 0.44 (P49 / P48 of benchmarks/startup_logs_public.md; 1.23 estimated and logged at 512
tokens, P47). Only the first pipeline stage holds the
embedding; a multimodal model embeds its inputs outside the compiled graph (``embed_input_ids`` before the
forward), and ``--enforce-eager``, ``-O0`` or a compilation mode other than VLLM_COMPILE compile nothing with
Inductor.

The estimate is that of a cold compile cache, the first start of a pod (nothing in a manifest says the cache is
warm; later starts with ``VLLM_CACHE_ROOT`` on a persistent volume load the compiled graphs and skip it). A caller
that knows the cache is warm says ``compile_cache="warm"``: the first call then loads the compiled function and
calls it (``torch.compiler.load_compiled_function``, "Directly load AOT compilation", the support_torch_compile
wrapper's ``__call__``, vllm/compilation/decorators.py, 0.17.1 with torch 2.10), or, before the AOT path or without
its file, Dynamo traces and ``CompilerManager.load`` takes Inductor's output from the cache ("Directly load the
compiled graph(s) ... from the cache", vllm/compilation/backends.py): either way Inductor's scheduler does not run
and nothing is benchmarked. ``VLLM_DISABLE_COMPILE_CACHE=1`` (or Inductor's ``force_disable_caches``) reads no
cache: every start is cold whatever the caller says (``envs.disable_compile_cache`` turns the AOT default off;
``is_compile_cache_enabled``, vllm/compilation/compiler_interface.py). What tells a warm start in a log: those two
lines, or, in an excerpt without them, seconds between ``Model loading took`` and ``Available KV cache memory``
where a cold compile takes tens (P49 of benchmarks/startup_logs_public.md: 45 s on an RTX 4090, Dynamo 8.6 s and
Inductor 26.4 s). Not
estimated: whether the freed table stays reserved past ``empty_cache`` because a later allocation was carved
out of its segment (0.27+ then count it twice, in ``total_consumed`` and in the peak: P47 logs 1.16 GiB more
consumed memory than P49 with the same weights); that depends on the order of every allocation, which neither
vLLM's nor Inductor's code states.
"""

from __future__ import annotations

from vramlint import versions
from vramlint.budget.common import GiB, config_arg, padded_vocab, truthy
from vramlint.model import GpuSpec, ModelInfo

VLLM_SOURCES = (
    "vllm/config/compilation.py::CompilationConfig.__post_init__: combo_kernels and benchmark_combo_kernel for "
    "torch 2.9+ (0.12 - 0.34; 0.33+ unless deterministic)",
    "vllm/compilation/decorators.py: the first call compiles inside profile_run (AOT: compile, then the profiling "
    "forward), or loads the compiled function from VLLM_CACHE_ROOT when it is there (0.17.1: load_compiled_function; "
    "backends.py CompilerManager.load); vllm/utils/mem_utils.py::memory_profiling resets the peak only on entry",
    "vllm/envs.py::use_aot_compile / disable_compile_cache, vllm/compilation/compiler_interface.py::"
    "is_compile_cache_enabled: VLLM_DISABLE_COMPILE_CACHE=1 reads no cache (0.17.1)",
    "what vllm/config/compilation.py's benchmark_combo_kernel runs: torch/_inductor/scheduler.py::"
    "Scheduler.speedup_by_combo_kernel, codegen/triton.py::TritonScheduling."
    "benchmark_fused_nodes / codegen_kernel_benchmark (rand_strided arguments), runtime/benchmarking.py::"
    "InductorBenchmarker (L2 flush buffer) (torch 2.13.0)",
)

MiB = 1 << 20
# triton.testing / InductorBenchmarker on ROCm flush with Triton's 256 MB buffer instead of the device's L2 size.
ROCM_FLUSH_BYTES = 256 * MiB


def compile_benchmark(beh: versions.Behavior, args: dict, model: ModelInfo, env: dict | None = None,
                      compile_cache: str = "cold") -> tuple[bool, str]:
    """(whether the start's Inductor compile benchmarks the embedding gather inside the profiling window, why
    not when it does not); ``compile_cache`` "warm": the compiled graphs are loaded from the cache instead."""
    if beh.engine != "v1" or not versions.at_least(beh.key, 0, 12):
        return False, "no Inductor combo-kernel benchmarking in this release (vLLM 0.12+ with torch 2.9+)"
    if truthy(args.get("enforce_eager")):
        return False, "--enforce-eager: nothing is compiled"
    cc = config_arg(args, "compilation_config") or {}
    inductor = cc.get("inductor_compile_config")
    inductor = inductor if isinstance(inductor, dict) else {}
    if compile_cache == "warm" and not truthy((env or {}).get("VLLM_DISABLE_COMPILE_CACHE")) \
            and not truthy(inductor.get("force_disable_caches")):
        return False, "a warm compile cache (as given): the compiled graphs are loaded, Inductor does not run"
    mode = cc.get("mode", cc.get("level"))
    level = args.get("optimization_level")
    if mode is None:
        if level is not None and str(level).strip() == "0":
            return False, "-O0: compilation mode NONE"
    elif str(mode).strip().upper() not in ("3", "VLLM_COMPILE", "PIECEWISE"):
        return False, f"compilation mode {mode}: not vLLM's Inductor compile"
    if str(cc.get("backend") or "inductor").strip().lower() != "inductor":
        return False, f"compilation backend {cc.get('backend')}: not Inductor"
    if "combo_kernels" in inductor or "benchmark_combo_kernel" in inductor:
        # vLLM sets neither when either is given; Inductor's own defaults are off
        if not (truthy(inductor.get("combo_kernels")) and truthy(inductor.get("benchmark_combo_kernel"))):
            return False, "inductor_compile_config turns combo-kernel benchmarking off"
    elif versions.at_least(beh.key, 0, 33) and truthy(inductor.get("deterministic")):
        return False, "deterministic Inductor: no combo-kernel benchmarking (0.33+)"
    facts = model.extra.get("facts") or {}
    if facts.get("vision") or model.extra.get("multimodal"):
        return False, "a multimodal model embeds its inputs outside the compiled graph"
    if truthy(args.get("enable_prompt_embeds")):
        return False, "prompt embeddings: the embedding is looked up outside the compiled graph"
    return True, ""


def compile_benchmark_bytes(model: ModelInfo, gpu: GpuSpec, tp: int, num_tokens: int,
                            dtype_bytes: int) -> tuple[int, str]:
    """The peak of the embedding gather's benchmark on one rank of the first pipeline stage: a copy of the rank's
    embedding table (``VocabParallelEmbedding``: the vocabulary padded to 64, split over TP), the gather's output
    for the profile batch and the benchmarker's flush buffer."""
    rows = -(-padded_vocab(model.vocab_size) // max(1, tp))
    table = rows * (model.hidden_size or 0) * dtype_bytes
    output = num_tokens * (model.hidden_size or 0) * dtype_bytes
    if gpu.vendor == "amd":
        flush, flush_how = ROCM_FLUSH_BYTES, "Triton's 256 MiB flush buffer (ROCm)"
    elif gpu.l2_cache_mib:
        flush = int(gpu.l2_cache_mib * MiB)
        flush_how = f"the {gpu.l2_cache_mib:g} MiB L2 flush buffer"
    else:
        flush, flush_how = 0, f"the L2 flush buffer (not counted: {gpu.name}'s L2 size is not in the catalog)"
    how = (f"a cold torch.compile benchmarks the embedding gather (Inductor combo kernels): a copy of the "
           f"{rows} x {model.hidden_size} embedding table ({table / GiB:.2f} GiB), its {num_tokens}-token output "
           f"and {flush_how}")
    return table + output + flush, how
