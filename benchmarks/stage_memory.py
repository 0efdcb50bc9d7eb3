"""Where the memory of one `vramlint check` goes (issue 14): the parent's RSS after each stage, and what the pool's
workers send back, by kind.

    python3 benchmarks/stage_memory.py [--chunk 1000] -- check --offline TREE

Runs the vramlint command given after ``--`` in this process, as the console script does (with its pool of
workers when the tree is large enough), and prints this process's resident memory and its peak (VmRSS, VmHWM of
/proc/self/status: Linux only) and CPU-seconds after the stages of the run: the files read (`scan._scan_entries`,
the workers' results received), the cross-file join, the assessment, the rules, and the end (the report). Peak
RSS of the whole run is the parent's: a worker holds its own chunk only.

``--chunk N``: then the first N files of the scan are read as one worker reads a chunk (`scan._scan_chunk`), and
what it would send is unpickled here and measured, by kind: the servers, and each kind of record kept for the
join (the KServe objects, ConfigMaps, llmaz objects, ConfigMap-set variables, `--config` references), in KB as
held in memory (sys.getsizeof over everything each reaches that the servers do not) and as pickled. Parsed
documents those records keep are what grows with the files until the join, beside the servers themselves.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
_JOIN_KINDS = ("runtimes", "inference_services", "configmaps", "llmaz", "env_refs", "config_refs", "script_refs",
               "node_pools", "device_claims", "dockerfiles", "launchers")


def _memory() -> tuple[int, int]:
    """(RSS, peak RSS) of this process in MB."""
    found = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) // 1024
    return found.get("VmRSS", 0), found.get("VmHWM", 0)


ROWS: list[tuple[str, int, int, float]] = []


def _after(module: object, name: str, label: str) -> None:
    original = getattr(module, name)

    def measured(*args: object, **kwargs: object) -> object:
        result = original(*args, **kwargs)
        ROWS.append((label, *_memory(), time.process_time()))
        return result

    setattr(module, name, measured)


def _size(root: object, seen: set[int]) -> int:
    """Bytes of everything ``root`` reaches that is not in ``seen`` (which it extends)."""
    total = 0
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type) or type(obj).__name__ in ("module", "function",
                                                                              "builtin_function_or_method"):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def chunk_table(paths: list[str], files: int) -> None:
    from vramlint import parallel, scan
    from vramlint.discover import discover

    entries = discover(paths, ()).files[:files]
    try:
        col = scan._scan_chunk((entries, True))
    finally:
        parallel.IN_WORKER[0] = False
        gc.unfreeze()
    sent = pickle.dumps(col, protocol=pickle.HIGHEST_PROTOCOL)
    col = pickle.loads(sent)
    records = col.records
    kept = [records.servers]  # held alive while measured: the ids of what is measured stay unique
    seen: set[int] = set()
    servers = _size(records.servers, seen)
    print(f"\none worker's chunk of {len(entries):,} files: {len(sent) // 1024:,} KB pickled, "
          f"{_size(col, set()) // 1024:,} KB in memory unpickled")
    print(f"  {'servers':20} n={len(records.servers):6,} {servers // 1024:7,} KB in memory "
          f"{len(pickle.dumps(records.servers, protocol=pickle.HIGHEST_PROTOCOL)) // 1024:7,} KB pickled")
    for kind in _JOIN_KINDS:
        items = getattr(records, kind)
        if not items:
            continue
        kept.append(items)
        print(f"  {kind:20} n={len(items):6,} {_size(items, seen) // 1024:7,} KB in memory beyond the servers "
              f"{len(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)) // 1024:7,} KB pickled")


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunk", type=int, default=0, help="also measure what a worker sends for this many files")
    opts = ap.parse_args(argv[:split])
    command = argv[split + 1:]
    sys.path.insert(0, ROOT)
    from vramlint import scan
    from vramlint.commands import check

    _after(scan, "_scan_entries", "files read (workers' results in)")
    _after(scan, "_join", "cross-file join")
    _after(check, "assess_all", "assessment")
    _after(check, "_run_rules", "rules")
    ROWS.append(("start (imports, configuration)", *_memory(), time.process_time()))
    devnull = open(os.devnull, "w")  # noqa: SIM115 - the report is not what is measured
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = devnull
    try:
        from vramlint.cli import main as vramlint_main

        sys.argv = ["vramlint", *command]
        try:
            code = vramlint_main()
        except SystemExit as exc:
            code = exc.code
    finally:
        sys.stdout, sys.stderr = saved
    ROWS.append(("end (report written)", *_memory(), time.process_time()))
    print(f"vramlint {' '.join(command)}: exit {code}, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'after':34} {'RSS MB':>7} {'peak MB':>8} {'CPU-s':>7}  (this process; the workers' CPU is not in it)")
    for label, rss, peak, cpu in ROWS:
        print(f"{label:34} {rss:7} {peak:8} {cpu:7.2f}")
    if opts.chunk:
        chunk_table([a for a in command[1:] if not a.startswith("-") and os.path.exists(a)], opts.chunk)
    return 0


if __name__ == "__main__":
    sys.exit(main())
