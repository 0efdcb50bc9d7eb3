"""Compare vramlint's budget with real vLLM start-up logs.

Runs every row of ../shared/data/vllm-startup-logs.tsv whose inputs are known (plus the worked examples of
issue #3 and vllm-memory.md section 9, marked "extra"), and every row of the project's own
benchmarks/startup_logs_public.tsv (public start-up logs collected for issue #13; the log lines they come from are
quoted in benchmarks/startup_logs_public.md), and prints, per row and overall, the relative error of weights, of
the KV cache (GiB, or KV tokens, or blocks: whichever the log gives) and whether the verdict (starts / fails) is
right. Rows that cannot be run, or stay off, say why.

The figures are printed overall and per category (tensor parallel >= 4, tensor parallel 8, pipeline parallel,
multimodal, LoRA, speculative decoding, CPU offload, vLLM >= 0.20, and the public rows whose log shows a warm
compile cache: their ``compile_cache`` column, run with ``compute_budget(..., compile_cache="warm")``, since
vramlint's default is a first start), each once over all rows and once over the held-out rows
only, with the KV error's median, the cases above 10% and the share within 10%: a row is in-sample when one of
vramlint's estimates was fitted on it or written with its figures in view (IN_SAMPLE says which estimate, for the
shared and extra rows; the public table's ``sample`` column, for its rows), held-out otherwise.

    python benchmarks/startup_logs.py [--tsv PATH] [--public PATH] [--offline]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import json  # noqa: E402

from vramlint import gpus, versions  # noqa: E402
from vramlint.budget import compute_budget, speculative_draft_name, speculative_request  # noqa: E402
from vramlint.model import GpuSpec, ResolveOptions  # noqa: E402
from vramlint.models import resolve_model  # noqa: E402

SHARED_TSV = os.path.join("shared", "data", "vllm-startup-logs.tsv")


def default_tsv() -> str:
    """../shared next to the checkout; from a git worktree elsewhere, ../shared next to the main checkout (the
    worktree's common git directory is that checkout's .git)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    path = os.path.join(here, "..", SHARED_TSV)
    if os.path.exists(path):
        return path
    try:
        common = subprocess.run(["git", "rev-parse", "--git-common-dir"], cwd=here, capture_output=True, text=True,
                                timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return path
    if not common:
        return path
    main_checkout = os.path.dirname(os.path.abspath(os.path.join(here, common)))
    other = os.path.join(main_checkout, "..", SHARED_TSV)
    return other if os.path.exists(other) else path
PUBLIC_TSV = os.path.join(os.path.dirname(__file__), "startup_logs_public.tsv")

# Rows an estimate of vramlint was fitted on, or written with the row's figures in view (from the docstrings of
# vramlint/budget.py and vllm-memory.md): their errors are in-sample. Keys: shared TSV row index, or the label of
# an EXTRA case. Everything else -- all of startup_logs_public.tsv -- is held out.
IN_SAMPLE: dict[int | str, str] = {
    0: "sampler term checked on it (PR #10511 sanity run)",
    3: "forward calibration 0.967 and the CUDA-context non-torch 0.30 GiB (RTX 3090, 0.6.4)",
    4: "forward calibration 0.967 (same RTX 3090 runs)",
    14: "forward calibration 0.967 (#10517, 29000 tokens) and the V0 CUDA-context non-torch",
    15: "sampler check (Qwen2.5-7B, S=256) and the one-GPU non-torch 0.05 GiB",
    16: "TP non-torch 0.25 GiB",
    17: "MXFP4 weights and backend written with it in view",
    18: "MXFP4 weights and backend written with it in view",
    19: "MXFP4 weights and backend written with it in view",
    "vLLM forum T4 Llama-3.2-3B 4096": "sampler bytes per logit (fitted)",
    "vLLM forum T4 Llama-3.2-3B 8192": "sampler bytes per logit (fitted)",
    "vLLM forum T4 Llama-3.2-3B 16384": "sampler bytes per logit (fitted)",
    "Colab T4 notebook Llama-3.2-3B 0.8.2": "sampler check (S=192)",
    "RTX 4090 notebook Qwen3-8B-FP8 0.10.2": "V1 sampler check",
    "llm-d H100 gpt-oss-20b 16000 latest-2026-01": "MXFP4 Triton layout (0.12+)",
    "llm-d H100 gpt-oss-120b 16000 latest-2026-01": "MXFP4 Triton layout (0.12+)",
    "vLLM issue H20-141GB Qwen3.5-27B 32768 0.19.0": "hybrid (gated-delta-net) KV layout of 0.19 (#40691)",
}

# The categories the summary breaks the figures down by, in print order.
CATEGORIES = ("TP>=4", "TP 8", "pipeline parallel", "multimodal", "LoRA", "speculative", "CPU offload", "vLLM>=0.20",
              "warm compile")

# Per-row decisions the TSV leaves open: (row index) -> dict. "skip" gives the reason a row cannot be run.
# Versions: the TSV gives "unknown (~v0.6.4)" etc.; the release whose log format / line numbers match is used.
ROW_INPUTS: dict[int, dict] = {
    0: {"version": "0.6.5", "why": "main between 0.6.4 and 0.6.5 with the memory-profiling overhaul (PR #10511, shipped in 0.6.5)"},
    1: {"version": "0.6.5", "why": "as row 0, -tp 2"},
    2: {"skip": "multimodal (cross-attention vision encoder) profile run: 36.63 GiB activation; vramlint does not estimate encoder profiling"},
    3: {"version": "0.6.4"},
    4: {"version": "0.6.4", "args": {"gpu_memory_utilization": 0.9}, "why": "util 0.9 as in the user's other runs"},
    5: {"version": "0.10.0", "args": {"kv_transfer_config": {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}},
        "why": "V1, 2025-07 (between 0.9.2 and 0.10.0; vramlint's budget is the same for both); "
               "the server runs --kv-transfer-config LMCacheConnectorV1 (kv_both); the same checkpoint family is "
               "off by as much per rank without a connector (P24, P26: 1.45 GiB), so the 17.6% is probably not "
               "the connector's and is not traced to a cause in vLLM's source (docs/budget.md)"},
    6: {"skip": "vLLM 0.2.x (2023): before the releases vramlint models (0.4+)"},
    7: {"skip": "vLLM 0.2.x (2023), torch-peak-only profiler"},
    8: {"skip": "vLLM 0.2.x (2023): before the releases vramlint models (0.4+)"},
    9: {"skip": "vLLM 0.2.x (2023), torch-peak-only profiler"},
    10: {"skip": "GPU not stated"},
    11: {"version": "0.19.0", "gpu": "A100-80GB", "why": "13.72 + 36.56 GiB > 0.65 x 40 GiB: an 80 GB A100"},
    12: {"skip": "GPU not stated"},
    13: {"skip": "GPU not stated"},
    14: {"version": "0.6.4"},
    15: {"version": "0.7.3", "model": "Qwen/Qwen2.5-7B-Instruct-AWQ", "why": "5.20 GiB of weights: a 4-bit Qwen2.5-7B (AWQ assumed)"},
    16: {"version": "0.8.3", "args": {"dtype": "bfloat16"}},
    17: {"version": "0.11.0"},
    18: {"version": "0.10.1.1"},
    19: {"version": "0.14.1"},
    20: {"version": "0.10.1", "gpu": "H20", "total": 139.8,
         "args": {"tensor_parallel_size": 1, "data_parallel_size": 8, "enable_expert_parallel": True},
         "why": "-dp=8 --enable-expert-parallel (TP 1 per rank); H20 total 139.8 GiB from the two runs: "
                "(55.65 - 48.66) GiB / (0.95 - 0.90) -- the 141 GB H20, not the 96 GB one"},
    21: {"version": "0.10.1", "gpu": "H20", "total": 139.8,
         "args": {"tensor_parallel_size": 1, "data_parallel_size": 8, "enable_expert_parallel": True},
         "why": "as row 20, --gpu-memory-utilization 0.95"},
    22: {"version": "0.4.0", "why": "~0.3.0: run as the oldest modelled release (same V0 profiler)"},
    23: {"skip": "local model path: architecture not known"},
    24: {"skip": "failure is an old (0.2) block-size limit, not a memory verdict"},
    25: {"version": "0.5.3", "model": "meta-llama/Llama-3.1-405B-Instruct-FP8", "verdict": None,
         "why": "failure lines not in the excerpt: weights compared, verdict not scored"},
}

# Worked examples with real numbers that are not rows of the TSV (the vLLM forum T4 question; public notebook logs).
# The image llm-d's replication recipe named when its H100 text runs below were committed.
LLM_D_IMAGE = "vllm/vllm-openai:latest"

EXTRA = [
    {"label": "vLLM forum T4 Llama-3.2-3B 4096", "model": "meta-llama/Llama-3.2-3B-Instruct", "gpu": "T4", "total": 14.56, "version": "0.6.5",
     "args": {"max_model_len": 4096, "dtype": "half"}, "weights": 6.02, "kv": 5.85, "blocks": 3422, "starts": True},
    {"label": "vLLM forum T4 Llama-3.2-3B 8192", "model": "meta-llama/Llama-3.2-3B-Instruct", "gpu": "T4", "total": 14.56, "version": "0.6.5",
     "args": {"max_model_len": 8192, "dtype": "half"}, "weights": 6.02, "kv": 5.83, "blocks": 3409, "starts": True},
    {"label": "vLLM forum T4 Llama-3.2-3B 16384", "model": "meta-llama/Llama-3.2-3B-Instruct", "gpu": "T4", "total": 14.56, "version": "0.6.5",
     "args": {"max_model_len": 16384, "dtype": "half"}, "weights": 6.02, "kv": 5.78, "blocks": 3381, "starts": True},
    {"label": "Colab T4 notebook Llama-3.2-3B 0.8.2", "model": "meta-llama/Llama-3.2-3B-Instruct", "gpu": "T4", "total": 14.74,
     "version": "0.8.2", "args": {"max_model_len": 2048, "dtype": "float16", "max_num_batched_tokens": 2048,
                                  "max_num_seqs": 192, "gpu_memory_utilization": 0.8938626454842437},
     "weights": 6.016, "kv": 6.22, "blocks": 3637, "starts": True},
    {"label": "RTX 4090 notebook Qwen3-8B-FP8 0.10.2", "model": "Qwen/Qwen3-8B-FP8", "gpu": "RTX-4090",
     "total": 18.82 / 0.8, "version": "0.10.2", "args": {"max_model_len": 1024, "gpu_memory_utilization": 0.8},
     "weights": 8.80, "kv": 8.60, "tokens": 62608, "starts": True},
    # https://github.com/vllm-project/vllm/issues/40691 (and the fix's test plan in the pull request that
    # follows it, https://github.com/vllm-project/vllm/pull/40694): vLLM 0.19.0 on an H20,
    # `vllm serve Qwen3.5-27B --max-model-len 32768 --max-num-seqs 16 --max-num-batched-token 16384 --load-format
    # dummy` (dummy weights take the same memory), default utilisation 0.9 and KV dtype. GPU KV cache size 290,864
    # tokens (the pre-0.33 num_blocks // groups x block_size figure), maximum concurrency 33.04x. The issue's
    # environment says Qwen3.5-35B-A3B but the command and the fix's test plan run Qwen3.5-27B; tokens per unit of
    # concurrency (8,803, independent of memory) match 27B's layout (vramlint 8,821; 35B-A3B would be 9,220). The 141 GB
    # H20 is inferred: on the 96 GB one the 27B's 51 GiB of weights leave room for ~130k tokens, not 290k.
    {"label": "vLLM issue H20-141GB Qwen3.5-27B 32768 0.19.0", "model": "Qwen/Qwen3.5-27B", "gpu": "H20-141GB",
     "total": 139.8, "version": "0.19.0",
     "args": {"max_model_len": 32768, "max_num_seqs": 16, "max_num_batched_tokens": 16384},
     "tokens": 290864, "starts": True,
     "why": "H20 141 GB inferred from the token count; model from the command (the environment block names 35B-A3B)"},
    # https://github.com/llm-d/llm-d-benchmark/blob/main/config_explorer/empirical-vllm-memory-results.md: vLLM logs
    # on one H100 (79.18 GiB logged), `vllm serve M --max-model-len 16000 --block-size 128 --enable-prefix-caching`,
    # utilisation 0.9 unless noted, default KV dtype. The rows were committed on 2026-01-26 (llm-d-benchmark 0282dcf6)
    # when the page's recipe ran vllm/vllm-openai:latest, 0.13.0 - 0.14.1 that week (the budget of these rows is the
    # same for each; 0.14.0 is taken); the v0.11.0 pin came a month later with the Mistral run (87ab01be, P114). They
    # are not 0.11.0 runs: 0.11.0's image samples with FlashInfer (topk_topp_sampler.py, VLLM_USE_FLASHINFER_SAMPLER
    # unset = on; opt-in from 0.11.1), which would leave 1.8 GiB of activation for Llama-3.1-8B, not the 4.76 logged.
    # Each row's weights + activation + non-torch + KV adds up to total x utilisation.
    {"label": "llm-d H100 Qwen3-0.6B 16000 latest-2026-01", "model": "Qwen/Qwen3-0.6B", "gpu": "H100", "total": 79.18,
     "version": "0.14.0", "image": LLM_D_IMAGE,
     "args": {"max_model_len": 16000, "block_size": 128, "enable_prefix_caching": True},
     "weights": 1.12, "kv": 64.45, "starts": True},
    {"label": "llm-d H100 Qwen3-0.6B 32000 latest-2026-01", "model": "Qwen/Qwen3-0.6B", "gpu": "H100", "total": 79.18,
     "version": "0.14.0", "image": LLM_D_IMAGE,
     "args": {"max_model_len": 32000, "block_size": 128, "enable_prefix_caching": True},
     "weights": 1.12, "kv": 64.45, "starts": True},
    {"label": "llm-d H100 Qwen3-32B 16000 latest-2026-01", "model": "Qwen/Qwen3-32B", "gpu": "H100", "total": 79.18,
     "version": "0.14.0", "image": LLM_D_IMAGE,
     "args": {"max_model_len": 16000, "block_size": 128, "enable_prefix_caching": True},
     "weights": 61.03, "kv": 4.45, "starts": True},
    {"label": "llm-d 2xH100 Qwen3-32B TP2 16000 latest-2026-01", "model": "Qwen/Qwen3-32B", "gpu": "H100", "total": 79.18,
     "version": "0.14.0", "image": LLM_D_IMAGE,
     "args": {"max_model_len": 16000, "tensor_parallel_size": 2, "block_size": 128,
                                  "enable_prefix_caching": True},
     "weights": 30.59, "kv": 34.49, "starts": True},
    {"label": "llm-d H100 Qwen3-32B 32000 latest-2026-01 (fails)", "model": "Qwen/Qwen3-32B", "gpu": "H100", "total": 79.18,
     "version": "0.14.0", "image": LLM_D_IMAGE,
     "args": {"max_model_len": 32000, "block_size": 128, "enable_prefix_caching": True},
     "weights": 61.03, "starts": False},
    {"label": "llm-d H100 gpt-oss-20b 16000 latest-2026-01", "model": "openai/gpt-oss-20b", "gpu": "H100", "total": 79.18,
     "version": "0.14.0", "image": LLM_D_IMAGE,
     "args": {"max_model_len": 16000, "block_size": 128, "enable_prefix_caching": True},
     "weights": 13.47, "kv": 50.28, "starts": True},
    {"label": "llm-d H100 gpt-oss-120b 16000 latest-2026-01", "model": "openai/gpt-oss-120b", "gpu": "H100", "total": 79.18,
     "version": "0.14.0", "image": LLM_D_IMAGE,
     "args": {"max_model_len": 16000, "block_size": 128, "enable_prefix_caching": True,
                                  "gpu_memory_utilization": 0.95},
     "weights": 64.38, "kv": 3.33, "starts": True,
     "why": "utilisation 0.95, not the table's 0.9: 0.95 x 79.18 - 64.38 - 7.38 - 0.13 = 3.33 GiB, the logged KV"},
    {"label": "llm-d H100 Llama-3.1-8B-Instruct 16000 latest-2026-01", "model": "meta-llama/Llama-3.1-8B-Instruct",
     "gpu": "H100", "total": 79.18, "version": "0.14.0", "image": LLM_D_IMAGE,
     "args": {"max_model_len": 16000, "block_size": 128, "enable_prefix_caching": True},
     "weights": 14.99, "kv": 51.38, "starts": True},
    {"label": "llm-d H100 DeepSeek-R1 TP1 16000 latest-2026-01 (fails)", "model": "deepseek-ai/DeepSeek-R1", "gpu": "H100",
     "total": 79.18, "version": "0.14.0", "image": LLM_D_IMAGE,
     "args": {"max_model_len": 16000, "block_size": 128, "enable_prefix_caching": True},
     "starts": False, "why": "CUDA out of memory while loading the weights on one GPU"},
]


def first_float(text: str) -> float | None:
    m = re.search(r"-?\d[\d,]*\.?\d*", text or "")
    if not m:
        return None
    value = float(m.group(0).replace(",", ""))
    if re.search(r"\bMB\b", text):
        value /= 1024
    return value


def known(text: str) -> bool:
    return bool(text) and not text.strip().startswith("?")


def rel(pred: float, real: float) -> float:
    return abs(pred - real) / abs(real) if real else abs(pred - real)


def model_id(text: str) -> str:
    return text.split(" ")[0]


def categories(info, args: dict, version: str) -> set[str]:
    """The summary categories of one case, from its model and arguments."""
    cats = set()
    tp = int(args.get("tensor_parallel_size") or 1)
    if tp >= 4:
        cats.add("TP>=4")
    if tp >= 8:
        cats.add("TP 8")
    if int(args.get("pipeline_parallel_size") or 1) > 1:
        cats.add("pipeline parallel")
    facts = info.extra.get("facts") or {}
    limits = args.get("limit_mm_per_prompt")
    text_only = args.get("language_model_only") or (isinstance(limits, dict) and limits
                                                    and not any(limits.values()))
    if not text_only and (facts.get("vision") or info.extra.get("multimodal")
                          or "ConditionalGeneration" in (info.architecture or "")):
        cats.add("multimodal")  # a multimodal model whose encoder is profiled (not switched off by the limits)
    if args.get("enable_lora"):
        cats.add("LoRA")
    if speculative_request(args):
        cats.add("speculative")
    if float(args.get("cpu_offload_gb") or 0) > 0 or int(args.get("offload_group_size") or 0) > 0:
        cats.add("CPU offload")
    key = versions.parse_version(version)
    if key is not None and versions.at_least(key, 0, 20):
        cats.add("vLLM>=0.20")
    return cats


def run_case(label, model_name, gpu_spec, version, args, logged, options, image=None, env=None, compile_cache="cold"):
    """``image``: the container image when the log says one; None for the issue reports, which mostly ran pip
    installs (PyTorch sampler in 0.9-0.10, Marlin MXFP4 on Hopper before 0.12). ``env``: the server's environment
    where the log shows what it decides (a public row's ``env_json``). ``compile_cache``: "warm" where the log
    shows the compiled graphs loaded from the cache (a public row's ``compile_cache`` column)."""
    info, why = resolve_model(model_name, options)
    if info is None:
        return {"label": label, "skip": f"model {model_name} not resolved: {why}"}
    draft_name = speculative_draft_name(args)
    draft = resolve_model(draft_name, options) if draft_name else None
    b = compute_budget(info, gpu_spec, args, dict(env or {}), version, int(args.get("tensor_parallel_size") or 1), image=image,
                       draft=draft, compile_cache=compile_cache)
    out = {"label": label, "budget": b, "errors": {}, "categories": categories(info, args, version)}
    if logged.get("weights") is not None:
        out["errors"]["weights"] = rel(b.weights_gib, logged["weights"])
    if logged.get("kv") is not None:
        out["errors"]["kv"] = rel(b.kv_cache_gib, logged["kv"])
        out["kv_kind"] = "GiB"
    elif logged.get("tokens") is not None:
        out["errors"]["kv"] = rel(b.kv_tokens, logged["tokens"])
        out["kv_kind"] = "tokens"
    elif logged.get("blocks") is not None:
        out["errors"]["kv"] = rel(b.num_gpu_blocks, logged["blocks"])
        out["kv_kind"] = "blocks"
    if logged.get("cudagraph") is not None and b.cudagraph_gib:
        out["errors"]["cudagraph"] = rel(b.cudagraph_gib, logged["cudagraph"])
    if logged.get("starts") is not None:
        out["verdict_ok"] = b.starts == logged["starts"]
        out["expected"] = logged["starts"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsv", default=None, help="the shared start-up log table (default: ../shared/data)")
    ap.add_argument("--public", default=PUBLIC_TSV, help="the project's own public-log rows")
    ap.add_argument("--offline", action="store_true", help="no Hugging Face Hub (embedded catalog only)")
    ns = ap.parse_args(argv)
    options = ResolveOptions(allow_network=not ns.offline)
    results = []
    with open(ns.tsv or default_tsv(), encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    for i, row in enumerate(rows):
        decide = ROW_INPUTS.get(i, {})
        label = f"row {i}: {model_id(row['model'])[:38]} {row['gpu_name'][:14]} mml={row['max_model_len'][:7]}"
        if "skip" in decide:
            results.append({"label": label, "skip": decide["skip"]})
            continue
        gpu_name = decide.get("gpu") or row["gpu_name"]
        spec = gpus.lookup(gpu_name.split(" (")[0])
        total = first_float(row["gpu_total_gib"]) if known(row["gpu_total_gib"]) else decide.get("total")
        if spec is None and total is None:
            results.append({"label": label, "skip": f"GPU {gpu_name!r} not in the catalog and its total not logged"})
            continue
        if spec is None:
            spec = GpuSpec(name=gpu_name, total_gib=total, compute_capability=(8, 9), bf16=True, fp8=True)
        elif total is not None:
            spec = dataclasses.replace(spec, total_gib=total)  # the logged total; the catalog's other facts
        args: dict = {}
        for col, dest in (("gpu_memory_utilization", "gpu_memory_utilization"), ("max_model_len", "max_model_len"),
                          ("max_num_seqs", "max_num_seqs"), ("max_num_batched_tokens", "max_num_batched_tokens")):
            if known(row[col]) and row[col] != "default":
                args[dest] = first_float(row[col])
                if dest != "gpu_memory_utilization":
                    args[dest] = int(args[dest])
        tp = first_float(row["num_gpus_tp"]) if "dp" not in row["num_gpus_tp"].lower() else None
        if tp and tp > 1:
            args["tensor_parallel_size"] = int(tp)
        if known(row["dtype"]) and row["dtype"] not in ("default",):
            args["dtype"] = row["dtype"].split(" ")[0]
        if row["enforce_eager"] == "True":
            args["enforce_eager"] = True
        args.update(decide.get("args", {}))
        notes = row["notes"]
        starts = True if notes.startswith("SUCCESS") else (False if notes.startswith("FAIL") else None)
        if "verdict" in decide:
            starts = decide["verdict"]
        logged = {
            "weights": first_float(row["logged_weights_gib"]) if known(row["logged_weights_gib"]) else None,
            "kv": first_float(row["logged_kv_cache_gib"]) if known(row["logged_kv_cache_gib"]) else None,
            "tokens": first_float(row["logged_kv_tokens"]) if known(row["logged_kv_tokens"]) and "from" not in row["logged_kv_tokens"] else None,
            "blocks": first_float(row["logged_num_gpu_blocks"]) if known(row["logged_num_gpu_blocks"]) else None,
            "starts": starts,
        }
        if logged["kv"] is not None and logged["kv"] <= 0:
            logged["kv"] = None  # a negative budget is scored by the verdict, not by a relative error
        res = run_case(label, decide.get("model") or model_id(row["model"]), spec, decide["version"], args, logged, options)
        res["why"] = decide.get("why")
        res["in_sample"] = IN_SAMPLE.get(i)
        results.append(res)
    for ex in EXTRA:
        spec = dataclasses.replace(gpus.lookup(ex["gpu"]), total_gib=ex["total"])
        res = run_case("extra: " + ex["label"], ex["model"], spec, ex["version"], ex["args"], ex, options,
                       image=ex.get("image"))
        res["why"] = ex.get("why")
        res["in_sample"] = IN_SAMPLE.get(ex["label"])
        results.append(res)
    public = read_public(ns.public)
    for row in public:
        results.append(run_public(row, options))

    print(f"{'case':<70} {'weights':>8} {'KV':>8} {'kind':>6} {'verdict':>8}")
    for r in results:
        if "skip" in r:
            print(f"{r['label']:<70} skipped: {r['skip']}")
            continue
        e = r["errors"]
        w = f"{100 * e['weights']:.1f}%" if "weights" in e else "-"
        k = f"{100 * e['kv']:.1f}%" if "kv" in e else "-"
        v = "-" if "verdict_ok" not in r else ("right" if r["verdict_ok"] else "WRONG")
        print(f"{r['label']:<70} {w:>8} {k:>8} {r.get('kv_kind', ''):>6} {v:>8}")
        b = r["budget"]
        print(f"    predicted: weights {b.weights_gib} GiB, act {b.activation_gib}, non-torch {b.non_torch_gib}, "
              f"CUDA graph {b.cudagraph_gib}, KV {b.kv_cache_gib} GiB, {b.num_gpu_blocks} blocks, {b.kv_tokens} tokens, "
              f"starts={b.starts}" + (f" ({b.errors[0]['code']})" if b.errors else ""))
        tags = sorted(r.get("categories") or ())
        print(f"    {'in-sample: ' + r['in_sample'] if r.get('in_sample') else 'held-out'}"
              + (f"; categories: {', '.join(tags)}" if tags else ""))
        if r.get("why"):
            print(f"    inputs: {r['why']}")
        if "cudagraph" in e:
            print(f"    CUDA graph: {100 * e['cudagraph']:.0f}% off the logged figure")
        if e.get("weights", 0) > 0.02:
            print("    OFF (weights > 2%): see the model's weight source: " + b.sources.get("weights", ""))
        if e.get("kv", 0) > 0.10:
            print(f"    OFF (KV > 10%): activation estimated as {b.sources.get('activation')}; "
                  f"non-torch {b.sources.get('non_torch')}")
        if r.get("verdict_ok") is False:
            print(f"    OFF (verdict): expected {'starts' if r['expected'] else 'fails'}; errors: "
                  + "; ".join(x["code"] for x in b.errors))
        for note in b.notes:
            if "not estimated" in note or "not modelled" in note:
                print(f"    note: {note}")
    print()
    ran = [r for r in results if "skip" not in r]
    print(f"cases run: {len(ran)} of {len(results)} ({len(rows)} shared TSV rows + {len(EXTRA)} extra + "
          f"{len(public)} public rows); in-sample {sum(1 for r in ran if r.get('in_sample'))}, "
          f"held-out {sum(1 for r in ran if not r.get('in_sample'))}")
    w_err = [r["errors"]["weights"] for r in ran if "weights" in r["errors"]]
    kv_err = [r["errors"]["kv"] for r in ran if "kv" in r["errors"]]
    verdicts = [r["verdict_ok"] for r in ran if "verdict_ok" in r]
    if w_err:
        print(f"weights: {len(w_err)} compared, median error {100 * statistics.median(w_err):.2f}%, "
              f"max {100 * max(w_err):.2f}%, within 2%: {sum(e <= 0.02 for e in w_err)}/{len(w_err)}")
    if kv_err:
        print(f"KV cache: {len(kv_err)} compared, median error {100 * statistics.median(kv_err):.2f}%, "
              f"max {100 * max(kv_err):.2f}%, above 10%: {sum(e > 0.10 for e in kv_err)}")
    if verdicts:
        print(f"verdicts: {sum(verdicts)}/{len(verdicts)} right")
    print()
    print("by category (weights: compared / median / max error / within 2%; KV: compared / median / max / above 10% / "
          "share within 10%):")
    print(f"{'':<28} {'rows':>4} | {'weights n / median / max / <=2%':<34} | {'KV n / median / max / >10% / <=10%':<40} "
          "| verdicts")
    groups = [("all", ran), ("held-out", [r for r in ran if not r.get("in_sample")])]
    for cat in CATEGORIES:
        in_cat = [r for r in ran if cat in (r.get("categories") or ())]
        groups.append((cat, in_cat))
        groups.append((f"  {cat} held-out", [r for r in in_cat if not r.get("in_sample")]))
    for name, group in groups:
        print(summary_line(name, group))
    return 0


def summary_line(name: str, group: list[dict]) -> str:
    """One line of the summary table: weights, KV and verdict figures of ``group``."""
    w = [r["errors"]["weights"] for r in group if "weights" in r["errors"]]
    kv = [r["errors"]["kv"] for r in group if "kv" in r["errors"]]
    verdicts = [r["verdict_ok"] for r in group if "verdict_ok" in r]
    wtxt = (f"{len(w)} / {100 * statistics.median(w):.2f}% / {100 * max(w):.2f}% / {sum(e <= 0.02 for e in w)}"
            if w else "-")
    ktxt = (f"{len(kv)} / {100 * statistics.median(kv):.2f}% / {100 * max(kv):.2f}% / {sum(e > 0.10 for e in kv)} / "
            f"{100 * sum(e <= 0.10 for e in kv) / len(kv):.0f}%" if kv else "-")
    vtxt = f"{sum(verdicts)}/{len(verdicts)}" if verdicts else "-"
    return f"{name:<28} {len(group):>4} | {wtxt:<34} | {ktxt:<40} | {vtxt}"


def read_public(path: str) -> list[dict]:
    """The rows of startup_logs_public.tsv (empty when the file is absent)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def run_public(row: dict, options) -> dict:
    """One row of startup_logs_public.tsv. A row without a GPU (the log does not say it) scores its weights only,
    run on an H100 (the weights do not depend on the GPU for the models these rows have)."""
    label = f"public {row['id']}: {row['model'][:34]} {row['gpu'] or 'GPU?'} {row['vllm_version']}"
    args = json.loads(row["args_json"] or "{}")
    weights_only = not row["gpu"]
    spec = gpus.lookup(row["gpu"] or "H100")
    if spec is None:
        return {"label": label, "skip": f"GPU {row['gpu']!r} not in the catalog"}
    if row["gpu_total_gib"]:
        spec = dataclasses.replace(spec, total_gib=float(row["gpu_total_gib"]))

    def num(col):
        return float(row[col]) if row.get(col) else None

    logged = {"weights": num("logged_weights_gib")}
    if not weights_only:
        logged.update(kv=num("logged_kv_gib"), tokens=num("logged_kv_tokens"), blocks=num("logged_blocks"),
                      cudagraph=num("logged_cudagraph_gib"),
                      starts={"True": True, "False": False}.get(row["starts"]))
    image = "vllm/vllm-openai:v0.11.0" if "image vllm/vllm-openai:v0.11.0" in row["notes"] else None
    # env_json: environment variables the server ran with, or that stand for what its log shows and a manifest would
    # not (VLLM_USE_FLASHINFER_SAMPLER=1 for a pip install that logs "Using FlashInfer for top-p & top-k sampling":
    # vLLM 0.9 - 0.10 use FlashInfer whenever it is installed, topk_topp_sampler.py)
    env = json.loads(row.get("env_json") or "{}")
    # compile_cache (the last column, left off the rows that have none): "warm ..." where the log shows the start
    # loaded its compiled graphs (the "Directly load" lines, or seconds from "Model loading took" to the KV cache
    # size where a cold compile takes tens); absent or empty: a first compile, vramlint's default
    warm = (row.get("compile_cache") or "").strip().startswith("warm")
    res = run_case(label, row["model"], spec, row["vllm_version"], args, logged, options, image=image, env=env,
                   compile_cache="warm" if warm else "cold")
    if warm:
        res.setdefault("categories", set()).add("warm compile")
    res["why"] = "; ".join(x for x in (row["model_basis"] if row["model_basis"] != "logged" else "",
                                      row["notes"]) if x) or None
    sample = (row.get("sample") or "held-out").strip()
    res["in_sample"] = None if sample == "held-out" else sample.removeprefix("in-sample: ")
    return res


if __name__ == "__main__":
    raise SystemExit(main())
