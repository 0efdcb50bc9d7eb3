"""Speed and peak memory of `vramlint check --offline` on trees where every file is about vLLM (issue 14).

    python3 benchmarks/speed_trees.py [--sizes 1000,3000] [--with-10k] [--variants copies,varied]
                                      [--kserve 1000,3000] [--repeat 10] [--skip-others] [--keep DIR]

Builds, in a temporary directory, trees of N copies of the files of /work/shared/corpus (all vLLM-related:
the text prefilter skips none of them), byte-for-byte ('copies') and changed per copy so that no two files
are the same text ('varied': vramlint keeps the parse of a text it has seen, which byte-for-byte copies
flatter), and trees of N KServe InferenceService + ServingRuntime pairs (one object a file, each
InferenceService naming its runtime), then runs, as separate processes on the same tree in
the same run:
  * `python3 -m vramlint check --offline TREE`,
  * `yamllint -d relaxed TREE`,
  * `checkov -d TREE --framework kubernetes` when checkov is installed (`--checkov PATH` names it, e.g. in a
    venv of its own: its dependencies conflict with vramlint's; else the table says it was not run),
and prints wall time, CPU time (user + system) and peak RSS of each child (os.wait4's rusage of that child and
its children: vramlint's worker processes count), then how many times faster vramlint was, in wall and CPU time.
On a machine shared with other work, compare CPU times: wall times there say how busy the machine was.
Then the single-file path: median wall time of 10 runs of `check --offline` on one small corpus Deployment,
`inventory` on it, `vramlint --version` and a bare `python3 -c pass`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CORPUS = os.environ.get("VRAMLINT_CORPUS", "/work/shared/corpus")
SMALL_DEPLOYMENT = "GoogleCloudPlatform__kubernetes-engine-samples/ai-ml__llm-serving-gemma__vllm__vllm-7b-it-h100-80gb.yaml"

RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: vllm-runtime-{i}
  namespace: team-{ns}
spec:
  supportedModelFormats:
    - name: vllm-{i}
      autoSelect: false
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.8.5
      command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
      args:
        - --port=8080
        - --gpu-memory-utilization=0.9
      resources:
        limits:
          nvidia.com/gpu: "1"
"""

ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: llm-{i}
  namespace: team-{ns}
spec:
  predictor:
    nodeSelector:
      cloud.google.com/gke-accelerator: nvidia-l4
    model:
      modelFormat:
        name: vllm-{i}
      runtime: vllm-runtime-{i}
      args:
        - --model=Qwen/Qwen2.5-1.5B-Instruct
        - --max-model-len={len}
"""


def corpus_files() -> list[str]:
    out = []
    for dirpath, _dirs, files in os.walk(CORPUS):
        for name in files:
            if name.endswith((".yaml", ".yml")):
                out.append(os.path.relpath(os.path.join(dirpath, name), CORPUS))
    return sorted(out)


_NAMESPACE = re.compile(r"^(\s*namespace:[ \t]*)([a-z0-9][-a-z0-9]*)[ \t]*$", re.MULTILINE)


def varied_copy(text: str, copy: int) -> str:
    """A corpus file as the ``copy``-th copy of a varied tree: its namespaces get the copy's suffix (one
    namespace a copy, as a repository with one folder per team or environment has) and a comment naming the
    copy ends the file. No two files of the tree are the same text, so a cache of what one text gave (the
    parse of a file seen before) gets no hit it would not get on a real tree; the lines of the file do not move
    and its servers, models and flags stay those of the corpus file, so the work per file stays the same."""
    text = _NAMESPACE.sub(lambda m: f"{m.group(1)}{m.group(2)}-c{copy:03d}", text)
    return text + ("" if text.endswith("\n") or not text else "\n") + f"# speed_trees varied copy {copy}\n"


def build_corpus_tree(root: str, n: int, varied: bool = False) -> int:
    """``n`` files: whole copies of the corpus in copy-K/ folders, the last copy cut short. ``varied``: each
    copy's files changed by `varied_copy` (no file the same text as another), else byte-for-byte copies."""
    files = corpus_files()
    made = 0
    copy = 0
    while made < n:
        for rel in files:
            if made >= n:
                break
            dest = os.path.join(root, f"copy-{copy:03d}", rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            if varied:
                with open(os.path.join(CORPUS, rel), encoding="utf-8", newline="") as src:
                    text = src.read()
                with open(dest, "w", encoding="utf-8", newline="") as out:
                    out.write(varied_copy(text, copy))
            else:
                shutil.copyfile(os.path.join(CORPUS, rel), dest)
            made += 1
        copy += 1
    return made


def build_kserve_tree(root: str, pairs: int) -> int:
    for i in range(pairs):
        sub = os.path.join(root, f"team-{i % 50:02d}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"runtime-{i}.yaml"), "w", encoding="utf-8") as fh:
            fh.write(RUNTIME.format(i=i, ns=i % 50))
        with open(os.path.join(sub, f"isvc-{i}.yaml"), "w", encoding="utf-8") as fh:
            fh.write(ISVC.format(i=i, ns=i % 50, len=2048 + i % 7 * 1024))
    return 2 * pairs


def run_child(cmd: list[str], cwd: str, env: dict[str, str] | None = None) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, exit code) of one child process, output discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss_mb = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / 2**20
    return wall, usage.ru_utime + usage.ru_stime, rss_mb, proc.returncode


def vramlint_env() -> dict[str, str]:
    env = dict(os.environ)
    # an installed package has its bytecode cached: time that, not compiling every module on every run
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def fmt(result: tuple[float, float, float, int] | None) -> str:
    if result is None:
        return "not run"
    wall, cpu, rss, _rc = result
    return f"{wall:7.2f} s wall {cpu:7.2f} CPU-s {rss:6.0f} MB"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,3000", help="corpus-copy tree sizes (files), comma-separated")
    ap.add_argument("--with-10k", action="store_true", help="also the 10,000-file corpus tree")
    ap.add_argument("--variants", default="copies,varied",
                    help="corpus trees: 'copies' (byte-for-byte copies of the corpus files), 'varied' (each copy's "
                    "namespaces and last line changed: no two files the same text), comma-separated")
    ap.add_argument("--kserve", default="1000,3000", help="KServe pair counts, comma-separated ('' for none)")
    ap.add_argument("--repeat", type=int, default=10, help="runs of each single-file command (median)")
    ap.add_argument("--skip-others", action="store_true", help="time vramlint only (no yamllint/checkov)")
    ap.add_argument("--skip-trees", action="store_true", help="only the single-file timings")
    ap.add_argument("--keep", help="build the trees in this folder and keep them")
    ap.add_argument("--checkov", help="the checkov executable (default: checkov on PATH)")
    opts = ap.parse_args()

    variants = [v for v in opts.variants.split(",") if v]
    if any(v not in ("copies", "varied") for v in variants):
        ap.error(f"--variants: 'copies' and/or 'varied', not {opts.variants!r}")
    env = vramlint_env()
    vram = [sys.executable, "-m", "vramlint"]
    yamllint = shutil.which("yamllint")
    checkov = opts.checkov or shutil.which("checkov")
    work = opts.keep or tempfile.mkdtemp(prefix="vramlint-speed-")
    os.makedirs(work, exist_ok=True)
    trees: list[tuple[str, str, int]] = []
    try:
        if not opts.skip_trees:
            sizes = [int(s) for s in opts.sizes.split(",") if s] + ([10000] if opts.with_10k else [])
            for variant in variants:
                for n in sizes:
                    path = os.path.join(work, f"corpus-{n}" if variant == "copies" else f"corpus-varied-{n}")
                    if not os.path.isdir(path):
                        build_corpus_tree(path, n, varied=variant == "varied")
                    trees.append((f"{n:,} corpus files" + (", varied" if variant == "varied" else ""), path, n))
            for pairs in [int(s) for s in opts.kserve.split(",") if s]:
                path = os.path.join(work, f"kserve-{pairs}")
                if not os.path.isdir(path):
                    build_kserve_tree(path, pairs)
                trees.append((f"{pairs:,} KServe pairs ({2 * pairs:,} files)", path, 2 * pairs))
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        if trees:
            print()
            print(f"{'tree':34} | {'vramlint check --offline':40} | {'yamllint -d relaxed':40} | checkov")
            print("-" * 34 + "-+-" + "-" * 40 + "-+-" + "-" * 40 + "-+-" + "-" * 40)
        corpus_runs: dict[str, dict[int, tuple[float, float, float, int]]] = {}
        for label, path, n in trees:
            mine = run_child(vram + ["check", "--offline", path], work, env)
            if " corpus files" in label:
                corpus_runs.setdefault(label.partition(" corpus files")[2], {})[n] = mine
            theirs = None if opts.skip_others or not yamllint else run_child([yamllint, "-d", "relaxed", path], work)
            ck = None if opts.skip_others or not checkov else run_child(
                [checkov, "-d", path, "--framework", "kubernetes", "--quiet"], work)
            print(f"{label:34} | {fmt(mine):40} | {fmt(theirs):40} | {fmt(ck)}", flush=True)
            for name, other in (("yamllint", theirs), ("checkov", ck)):
                if other is not None:
                    print(f"{'':34} | vramlint vs {name}: {other[0] / mine[0]:.1f}x faster wall, "
                          f"{other[1] / mine[1]:.1f}x faster CPU", flush=True)
        for variant, runs in corpus_runs.items():
            sizes_run = sorted(runs)
            for small_n, big_n in zip(sizes_run, sizes_run[1:], strict=False):
                small_run, big_run = runs[small_n], runs[big_n]
                print(f"{big_n:,} vs {small_n:,} corpus files{variant} ({big_n / small_n:.2f}x the files): vramlint "
                      f"took {big_run[1] / small_run[1]:.2f}x the CPU time, {big_run[0] / small_run[0]:.2f}x the "
                      "wall time")
        if trees and not checkov and not opts.skip_others:
            print("checkov: not installed, not run")
        print()
        small = os.path.join(CORPUS, SMALL_DEPLOYMENT)
        print(f"single file ({os.path.basename(small)}), median of {opts.repeat} runs:")
        for label, cmd in (("python3 -c pass", [sys.executable, "-c", "pass"]),
                           ("vramlint --version", vram + ["--version"]),
                           ("vramlint inventory FILE", vram + ["inventory", small]),
                           ("vramlint check --offline FILE", vram + ["check", "--offline", small])):
            run_child(cmd, work, env)  # warm-up: bytecode written, files in the page cache
            runs = [run_child(cmd, work, env) for _ in range(opts.repeat)]
            walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
            print(f"  {label:32} {statistics.median(walls):6.3f} s wall (min {min(walls):.3f}), "
                  f"{statistics.median(cpus):6.3f} CPU-s", flush=True)
    finally:
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
