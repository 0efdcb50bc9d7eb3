"""Fuzz vramlint with >= 100,000 generated hostile inputs, in-process, and print what happened.

Seed inputs come from the hypothesis strategies in tests/fuzz_strategies.py: Kubernetes manifests with vLLM
containers (anchors, alias bombs, odd scalars), compose files, Helm charts (values and templates), `sh -c` scripts and
Hub config.json answers. Each seed is followed by `--mutants` variants made by `fuzz_strategies.mutate` (lines deleted,
duplicated, swapped, re-indented; scalars replaced by odd or huge ones; references to a planted file outside the
folder, to /proc/self/environ and /dev/zero; symlinks out of the folder; control characters; hostile file names):
drawing from hypothesis costs more than running vramlint, mutating costs nothing. Every input runs through
`vramlint check --offline` in-process (`fuzz_strategies.run_case`: scan -> assess -> rules -> JSON and text reports),
in worker processes (one per core), each input with a 5 s CPU-time alarm and its address space capped at 300 MB
above the worker's own. The process runs with HF_TOKEN set to a planted secret (in its /proc/self/environ too) and a
file with it is planted outside each input's folder: an input fails when that secret reaches standard output,
standard error or the report, when the run writes anything but its report, when an exception escapes, when the exit
status is not 0 or 1, when a rule crashes (VRL000), or over the time or memory limit.

    python3 benchmarks/fuzz_inputs.py                                   # 100,000 inputs, 2 workers
    python3 benchmarks/fuzz_inputs.py --inputs 20000 --workers 2 --seed 7
    python3 benchmarks/fuzz_inputs.py --max-seconds 1800                # as many as 30 minutes allow

Prints: inputs run and the rate, crashes, timeouts, max time, max memory (peak resident size of a worker), the
slowest family, and the first failing inputs (their files as JSON, long runs of one character folded).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, ".."))


def _batch(args: tuple[int, int, str, str | None, int]) -> dict:
    """Run `count` inputs (seeds drawn by hypothesis seeded by `seed`, each followed by `mutants` variants); return
    the batch's figures."""
    count, seed, workdir, save_dir, mutants = args
    import random

    import fuzz_strategies as fz
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    stats = {"inputs": 0, "crashes": 0, "timeouts": 0, "max_s": 0.0, "max_wall_s": 0.0, "slowest": None,
             "failures": [], "by_family": {}}
    rng = random.Random(seed)

    @hseed(seed)
    @settings(max_examples=max(1, count // (mutants + 1)), deadline=None, database=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @given(case=fz.any_case())
    def one(case):
        family, files = case
        for k in range(mutants + 1):
            if stats["inputs"] >= count:
                return
            run_one(family, files if k == 0 else fz.mutate(files, rng))

    def run_one(family, files):
        outcome = fz.run_case(files, workdir)
        stats["inputs"] += 1
        fam = stats["by_family"].setdefault(family, [0, 0.0])
        fam[0] += 1
        fam[1] += outcome.seconds
        stats["max_wall_s"] = max(stats["max_wall_s"], outcome.wall_seconds)
        if outcome.seconds > stats["max_s"]:
            stats["max_s"] = outcome.seconds
            stats["slowest"] = family
        if outcome.failure:
            stats["timeouts" if outcome.timed_out else "crashes"] += 1
            if len(stats["failures"]) < 5:
                stats["failures"].append({"family": family, "failure": outcome.failure[-1500:],
                                          "files": {k: v[:3000] if isinstance(v, str) else v
                                                    for k, v in files.items()}})
            if save_dir:
                # the whole input, to reproduce it: `vramlint check` on the files written back from the JSON
                os.makedirs(save_dir, exist_ok=True)
                with open(os.path.join(save_dir, f"{seed}-{stats['inputs']}.json"), "w", encoding="utf-8") as fh:
                    json.dump({"family": family, "failure": outcome.failure, "files": files}, fh)

    one()
    # hypothesis may stop short of max_examples (it skips duplicate draws): the same seeds again, new mutants
    while stats["inputs"] < count:
        before = stats["inputs"]
        one()
        if stats["inputs"] == before:
            break

    stats["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return stats


def _short(text: str, limit: int = 1200) -> str:
    """A failing input as printed: runs of one character folded (`9<x5000>`), then cut."""
    import re

    folded = re.sub(r"(.)\1{19,}", lambda m: f"{m.group(1)}<x{len(m.group(0))}>", text, flags=re.S)
    return folded if len(folded) <= limit else folded[:limit] + f"... ({len(text):,} characters)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=500, help="inputs per hypothesis run in a worker")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save-failures", metavar="DIR",
                        help="write each failing input whole into DIR as JSON ({family, failure, files})")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="stop after this long and print the figures of the inputs run so far")
    parser.add_argument("--mutants", type=int, default=9, help="variants run after each input hypothesis draws")
    args = parser.parse_args()
    import fuzz_strategies as fz

    if os.environ.get("HF_TOKEN") != fz.OUTSIDE_SECRET:
        # the planted token must be in the process's own environment block (what /proc/self/environ shows), so
        # the interpreter starts again with it
        env = dict(os.environ, HF_TOKEN=fz.OUTSIDE_SECRET, HF_HUB_OFFLINE="1")
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)
    batches = []
    left = args.inputs
    i = 0
    # a memory file system when there is one: each input is a few files written and removed
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    workdir = tempfile.mkdtemp(prefix="vramlint-fuzz-", dir=shm)
    while left > 0:
        n = min(args.batch, left)
        batches.append((n, args.seed * 1_000_003 + i, workdir, args.save_failures, args.mutants))
        left -= n
        i += 1
    total = {"inputs": 0, "crashes": 0, "timeouts": 0, "max_s": 0.0, "max_wall_s": 0.0, "slowest": None,
             "peak_mb": 0.0,
             "failures": [], "by_family": {}}
    start = time.monotonic()
    # a fresh worker every few batches, so one input's leftovers cannot build up
    stopped_early = False
    with multiprocessing.get_context("fork").Pool(args.workers, maxtasksperchild=4) as pool:
        for done, stats in enumerate(pool.imap_unordered(_batch, batches), 1):
            if args.max_seconds and time.monotonic() - start > args.max_seconds:
                stopped_early = True
                pool.terminate()
                break
            total["inputs"] += stats["inputs"]
            total["crashes"] += stats["crashes"]
            total["timeouts"] += stats["timeouts"]
            if stats["max_s"] > total["max_s"]:
                total["max_s"], total["slowest"] = stats["max_s"], stats["slowest"]
            total["peak_mb"] = max(total["peak_mb"], stats["peak_mb"])
            total["max_wall_s"] = max(total["max_wall_s"], stats["max_wall_s"])
            for f in stats["failures"]:
                last = f["failure"].strip().splitlines()[-1] if f["failure"].strip() else ""
                print(f"  failing {f['family']} input: {_short(last, 200)}", flush=True)
            total["failures"].extend(stats["failures"][: max(0, 10 - len(total["failures"]))])
            for fam, (n, secs) in stats["by_family"].items():
                agg = total["by_family"].setdefault(fam, [0, 0.0])
                agg[0] += n
                agg[1] += secs
            if done % 2 == 0 or done == len(batches):
                print(f"[{time.monotonic() - start:7.0f} s] {total['inputs']:,} inputs, {total['crashes']} crashes, "
                      f"{total['timeouts']} timeouts", flush=True)
    if stopped_early:
        print(f"stopped after --max-seconds {args.max_seconds:g}: figures of the inputs run so far")
    elapsed = time.monotonic() - start
    print(f"inputs run:  {total['inputs']:,} ({total['inputs'] / max(elapsed, 1e-9):.1f} inputs/s with "
          f"{args.workers} workers; {args.mutants} mutants per hypothesis draw)")
    print(f"crashes:     {total['crashes']} (exceptions, exit status, rule crashes, planted secret in an output, "
          "files written)")
    print(f"timeouts:    {total['timeouts']} (over 5 s of CPU time)")
    print(f"max time:    {total['max_s']:.2f} s of CPU time (a {total['slowest']} input); "
          f"{total['max_wall_s']:.2f} s wall time on this machine")
    print(f"max memory:  {total['peak_mb']:.0f} MB peak resident size of a worker (each input capped at +300 MB)")
    print("per family:  " + ", ".join(f"{fam} {n:,} inputs, {secs / max(n, 1) * 1000:.0f} ms mean"
                                      for fam, (n, secs) in sorted(total["by_family"].items())))
    print(f"wall time:   {time.monotonic() - start:.0f} s with {args.workers} workers")
    shutil.rmtree(workdir, ignore_errors=True)
    for f in total["failures"]:
        print("--- first failing inputs ---" if f is total["failures"][0] else "---")
        print(f"{f['family']}: {_short(f['failure'].strip().splitlines()[-1] if f['failure'].strip() else '', 400)}")
        # (a symlink is a ("symlink", target) pair, not text: printing one raised TypeError after the figures)
        print(json.dumps({k: _short(v) if isinstance(v, str) else v for k, v in f["files"].items()},
                         ensure_ascii=False, indent=1))
    return 1 if total["crashes"] or total["timeouts"] else 0


if __name__ == "__main__":
    sys.exit(main())
