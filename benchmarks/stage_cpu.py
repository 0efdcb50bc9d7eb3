"""Where the CPU time of one `vramlint check` goes, by stage (issue 14): a sampling profile in this process.

    python3 benchmarks/stage_cpu.py [--interval-ms 1] [--top 0] -- check --offline TREE

Runs the vramlint command given after ``--`` in this process, with the scan's pool off (one process: the
workers' time would not be sampled), and every ``--interval-ms`` of CPU time (ITIMER_PROF: user + system time of
this process, not wall, so other work on a shared machine does not count) records which stage the code running
is in. A stage is the phase the outermost vramlint frame is in (start-up before the scan; the scan; assessment;
rules; report after them) and, inside it, the module of the innermost vramlint frame (a YAML load called by an
extractor counts as parse, a budget computed for a GPU requirement as budget). Module imports count as imports
wherever they happen. cProfile's own overhead doubles the run and falls unevenly on small functions; samples
do not. Prints CPU-s by stage (each sample weighted by the CPU time since the one before) and ``--top`` N
vramlint functions, by their own time (the innermost vramlint frame) and cumulative.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import signal
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PKG = os.path.join(ROOT, "vramlint") + os.sep

# innermost vramlint module (path under vramlint/, without .py) -> stage; first prefix that matches
_MODULE_STAGES = (
    ("yamlload", "parse"), ("helm/templated", "templated text"), ("helm", "helm"),
    ("fsread", "read"), ("textfile", "read"), ("discover", "discover"), ("gitignore", "discover"),
    ("extract", "extract"), ("cmdline", "extract"), ("vllm_args", "extract"), ("fold", "extract"),
    ("budget", "budget"), ("requirement", "budget"),
    ("assess", "resolve"), ("models", "resolve"), ("modelconfig", "resolve"), ("gpus", "resolve"),
    ("versions", "resolve"), ("platforms", "resolve"), ("weights", "resolve"), ("hub", "resolve"),
    ("rule", "rules"), ("rules", "rules"), ("report", "report"), ("suppress", "report"), ("meta", "report"),
)
# outermost phase markers: (module, function) -> phase
_PHASES = {("commands/check", "assess_all"): "assess", ("commands/check", "_run_rules"): "rules",
           ("scan", "scan"): "scan"}


def _module(filename: str) -> str | None:
    if filename.startswith(PKG):
        return filename[len(PKG):-3] if filename.endswith(".py") else filename[len(PKG):]
    if os.sep + "rules" + os.sep in filename and filename.startswith(ROOT):
        return "rules"
    return None


def _stage(frame) -> str:
    inner = None
    phase = None
    scan_fn = None
    importing = False
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        if "importlib._bootstrap" in filename:
            importing = True
        mod = _module(filename)
        if mod is not None:
            if inner is None:
                inner = mod
            if mod == "scan" and code.co_name in ("_join", "prefilter"):
                scan_fn = code.co_name
            phase = _PHASES.get((mod, code.co_name), phase)
        frame = frame.f_back
    if importing:
        return "imports"
    if phase is None:
        # after the rules (the report) or before the scan (start-up, configuration)
        return "report/other" if _STATE["rules_done"] else "start-up/config"
    if phase == "scan":
        _STATE["scan_started"] = True
        if scan_fn == "_join":
            return "scan: join"
        if scan_fn == "prefilter" and inner == "scan":
            return "scan: prefilter"
    if phase == "rules":
        _STATE["rules_done"] = True
        return "rules"
    stage = "other"
    for prefix, name in _MODULE_STAGES:
        if inner and (inner == prefix or inner.startswith(prefix + "/") or inner.startswith(prefix + "_")
                      or inner.startswith(prefix)):
            stage = name
            break
    else:
        stage = inner or "other"
    if phase == "assess":
        return "assess: " + ("budget" if stage == "budget" else "resolve")
    return f"{phase}: {stage}"


_STATE = {"rules_done": False, "scan_started": False}
_SAMPLES: collections.defaultdict[str, float] = collections.defaultdict(float)
_FUNCS: collections.Counter[str] = collections.Counter()
_CUMULATIVE: collections.Counter[str] = collections.Counter()


_LAST = [0.0]


def _on_tick(_signum, frame) -> None:
    # A signal is handled between bytecodes: ticks that fall in one long C call (libyaml composing a file) come
    # as one, at the frame that made the call. Each is weighted by the CPU time since the one before.
    now = time.process_time()
    spent = now - _LAST[0]
    _LAST[0] = now
    _SAMPLES[_stage(frame)] += spent
    f = frame
    innermost = True
    seen = set()
    while f is not None:
        mod = _module(f.f_code.co_filename)
        if mod is not None:
            name = f"{mod}:{f.f_code.co_name}"
            if innermost:
                _FUNCS[name] += spent
                innermost = False
            if name not in seen:  # a recursive function counted once a sample
                seen.add(name)
                _CUMULATIVE[name] += spent
        f = f.f_back


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--interval-ms", type=float, default=1.0)
    ap.add_argument("--top", type=int, default=0)
    opts = ap.parse_args(argv[:split])
    command = argv[split + 1:]
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core: the scan runs in this process
    sys.path.insert(0, ROOT)
    interval = opts.interval_ms / 1000
    signal.signal(signal.SIGPROF, _on_tick)
    start = resource.getrusage(resource.RUSAGE_SELF)
    _LAST[0] = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, interval, interval)
    devnull = open(os.devnull, "w")  # noqa: SIM115 - the report is not what is measured
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = devnull
    try:
        from vramlint.cli import main as vramlint_main

        sys.argv = ["vramlint", *command]  # as the console script runs: its caches of patterns and code used
        try:
            code = vramlint_main()
        except SystemExit as exc:
            code = exc.code
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        sys.stdout, sys.stderr = saved
    end = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)
    total = sum(_SAMPLES.values()) or 1
    print(f"vramlint {' '.join(command)}: exit {code}, {cpu:.2f} CPU-s in this process (after the interpreter's "
          f"start), {total:.2f} of them sampled every {opts.interval_ms} ms of CPU, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'stage':28} {'CPU-s':>7} {'share':>6}")
    for stage, n in sorted(_SAMPLES.items(), key=lambda kv: -kv[1]):
        print(f"{stage:28} {cpu * n / total:7.2f} {100 * n / total:5.1f}%")
    if opts.top:
        print()
        print(f"innermost vramlint function, top {opts.top}:")
        for name, n in _FUNCS.most_common(opts.top):
            print(f"  {n:6.2f}  {name}")
        print()
        print(f"vramlint function and what it calls (cumulative), top {opts.top}:")
        for name, n in _CUMULATIVE.most_common(opts.top):
            print(f"  {n:6.2f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
