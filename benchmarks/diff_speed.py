"""Time of `vramlint diff HEAD~1 corpus --offline` on a git repository holding the deployment corpus with one
file changed in the last commit, against `vramlint check corpus --offline` on the same tree.

    python3 benchmarks/diff_speed.py [--corpus /work/shared/corpus] [--runs 5] [--keep DIR]

Builds a temporary git repository (a copy of the corpus in a folder `corpus/`, one commit; then one file's
`--max-model-len` value, or a comment when it has none, changed in a second commit), and times each command as a
user runs it (separate processes, wall clock, median of --runs). The diff runs the check pipeline twice (BASE
read from git into a temporary folder, and the working tree), so about twice `check` plus git's cost is expected.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: str, *args: str) -> None:
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def build(corpus: str, repo: str) -> str:
    """The repository; returns the file changed in the last commit (relative to the repository)."""
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    shutil.copytree(corpus, os.path.join(repo, "corpus"), symlinks=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "corpus")
    changed = None
    for folder, _, files in sorted(os.walk(os.path.join(repo, "corpus"))):
        for name in sorted(files):
            path = os.path.join(folder, name)
            if not name.endswith((".yaml", ".yml")):
                continue
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                text = fh.read()
            edited = re.sub(r"(--max-model-len[ =\"',\n-]*)(\d+)", lambda m: m.group(1) + str(int(m.group(2)) // 2),
                            text, count=1)
            if edited != text:
                with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
                    fh.write(edited)
                changed = os.path.relpath(path, repo)
                break
        if changed:
            break
    if changed is None:  # no --max-model-len anywhere: a comment is still a change to one file
        first = next(os.path.join(f, n) for f, _, ns in sorted(os.walk(os.path.join(repo, "corpus")))
                     for n in sorted(ns) if n.endswith((".yaml", ".yml")))
        with open(first, "a", encoding="utf-8") as fh:
            fh.write("\n# changed\n")
        changed = os.path.relpath(first, repo)
    git(repo, "commit", "-q", "-am", "one file changed")
    return changed


def timed(argv: list[str], cwd: str, runs: int) -> tuple[float, list[float], subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": ROOT, "HF_HUB_OFFLINE": "1"}
    times, last = [], None
    for _ in range(runs):
        start = time.perf_counter()
        last = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="/work/shared/corpus")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", metavar="DIR", help="build the repository in DIR and keep it")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="vramlint-diff-bench-")
    repo = os.path.join(work, "repo")
    try:
        changed = build(args.corpus, repo)
        files = sum(len(f) for _, _, f in os.walk(os.path.join(repo, "corpus")))
        vramlint = [sys.executable, "-m", "vramlint"]
        diff_median, diff_times, diff = timed(vramlint + ["diff", "HEAD~1", "corpus", "--offline", "--format", "json"],
                                              repo, args.runs)
        if diff.returncode != 0:
            print(diff.stderr, file=sys.stderr)
            return 1
        document = json.loads(diff.stdout)
        check_median, check_times, _ = timed(vramlint + ["check", "corpus", "--offline", "--fail-on", "never",
                                                         "--output-format", "json"], repo, args.runs)
        print(f"corpus: {files} files copied from {args.corpus}; changed in HEAD: {changed}")
        print(f"vramlint diff HEAD~1 corpus --offline: median {diff_median:.2f} s over {args.runs} runs "
              f"({', '.join(f'{t:.2f}' for t in diff_times)})")
        print(f"vramlint check corpus --offline:       median {check_median:.2f} s over {args.runs} runs "
              f"({', '.join(f'{t:.2f}' for t in check_times)})")
        print(f"diff / check: {diff_median / check_median:.2f}x")
        print(f"servers reported by the diff: {len(document['servers'])} "
              f"({', '.join(sorted({e['status'] for e in document['servers']})) or 'none'})")
        for entry in document["servers"]:
            b, a = entry["before"] or {}, entry["after"] or {}
            print(f"  {entry['key']}: max_model_len {b.get('max_model_len')} -> {a.get('max_model_len')}, "
                  f"concurrency {b.get('max_concurrency')} -> {a.get('max_concurrency')}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
