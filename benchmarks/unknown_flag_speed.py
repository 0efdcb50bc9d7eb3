"""What VRL009 spends on unknown flags: which releases accept each, and the closest known flag (issue 14).

    python3 benchmarks/unknown_flag_speed.py [--repeat 10]

In one process, as a run has it when VRL009 starts (the argument table read, the file's own release index
built), prints the CPU time of `versions_knowing` for the first misspelt flag (the one that used to build
every release's index) and for each further one, then of `closest` per flag (the did-you-mean), its cache
cleared between repeats.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))

MISSPELT = ["--max-model-length", "--gpu-memory-util", "--tensor-paralel-size", "--disable-log-request",
            "--foo-bar-baz", "--enable-prefix-cacheing", "--served-model", "--kv-cache-dtipe", "--trust-remote",
            "--quantisation", "--max-num-seq", "--enforce-eger", "--dtype-x", "--zzzzzzzzzzzzzzzzzzzzzzzzzzzzz"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10, help="repeats of the closest timing")
    ap.add_argument("--version", default="0.10.2", help="the release the file's image runs")
    opts = ap.parse_args()
    from vramlint import vllm_args

    rule = importlib.import_module("rules.vrl009_unknown_vllm_argument")
    vllm_args.lookup("--model", opts.version)
    vllm_args.known_flags(opts.version)
    start = time.process_time()
    rule._versions_knowing(MISSPELT[0])
    first = time.process_time() - start
    start = time.process_time()
    for flag in MISSPELT[1:]:
        rule._versions_knowing(flag)
    further = (time.process_time() - start) / (len(MISSPELT) - 1)
    start = time.process_time()
    for _ in range(opts.repeat):
        vllm_args.closest.cache_clear()
        for flag in MISSPELT:
            vllm_args.closest(flag, opts.version)
    closest = (time.process_time() - start) / opts.repeat / len(MISSPELT)
    print(f"versions_knowing: first flag {first * 1e3:.1f} ms, each further {further * 1e3:.2f} ms; "
          f"closest {closest * 1e3:.2f} ms a flag (CPU time, {len(MISSPELT)} misspelt flags, vLLM {opts.version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
