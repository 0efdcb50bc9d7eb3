"""Whether two copies of vramlint give the same reports (a speed change must not change any output).

    python3 benchmarks/same_reports.py --old /path/to/other/checkout PATH [PATH ...]

For each PATH, runs `python3 -m vramlint check --offline PATH` with the text and with the JSON report (and, with
``--inventory``, `vramlint inventory --output-format json PATH`: every server and where each setting is), once with
the code of this checkout and once with the code of ``--old`` (a checkout or worktree of another commit, put
first on PYTHONPATH), and compares: the text reports byte for byte, the JSON reports as data without their
`run` key (timings), and the exit codes. Each run imports the code of its checkout even from a checkout's folder
(where `python -m` would put that folder's vramlint first), and says so before comparing. Prints one line a path and report, and the first differing lines of
any that differ; exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


# `python -m vramlint` puts the working folder first on sys.path: run from a checkout (the paths relative to it),
# both runs would import that checkout's vramlint, whatever PYTHONPATH says. The child drops that entry first.
_CHILD = "import runpy, sys; sys.path.pop(0); sys.argv[0] = 'vramlint'; runpy.run_module('vramlint', run_name='__main__')"


def _env(code_root: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = code_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["NO_COLOR"] = "1"
    return env


def code_used(code_root: str) -> str:
    """The folder of the vramlint package a run with ``code_root`` imports (from this working folder)."""
    probe = "import sys; sys.path.pop(0); import vramlint, os; print(os.path.dirname(os.path.abspath(vramlint.__file__)))"
    proc = subprocess.run([sys.executable, "-c", probe], env=_env(code_root), capture_output=True, text=True,
                          cwd=os.getcwd(), check=False)
    return proc.stdout.strip()


def run(code_root: str, path: str, fmt: str) -> tuple[int, str]:
    if fmt == "inventory":
        cmd = [sys.executable, "-c", _CHILD, "inventory", "--output-format", "json", path]
    else:
        cmd = [sys.executable, "-c", _CHILD, "check", "--offline", "--output-format", fmt, path]
    proc = subprocess.run(cmd, env=_env(code_root), capture_output=True, text=True, cwd=os.getcwd(), check=False)
    return proc.returncode, proc.stdout + ("\n--- stderr ---\n" + proc.stderr if proc.stderr else "")


def normal_json(out: str) -> str:
    body, _, rest = out.partition("\n--- stderr ---\n")
    try:
        data = json.loads(body)
    except ValueError:
        return out
    if isinstance(data, dict):
        data.pop("run", None)
    return json.dumps(data, indent=1, sort_keys=True) + ("\n--- stderr ---\n" + rest if rest else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="checkout whose code gives the reference reports")
    ap.add_argument("--inventory", action="store_true", help="compare `inventory --output-format json` too")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args(argv)
    for root in (os.path.abspath(args.old), ROOT):
        used = code_used(root)
        if os.path.realpath(used) != os.path.realpath(os.path.join(root, "vramlint")):
            print(f"the run meant for {root} imports vramlint from {used or '(nowhere)'}: not compared")
            return 2
    differ = 0
    for path in args.paths:
        for fmt in ("text", "json", "inventory") if args.inventory else ("text", "json"):
            old_rc, old = run(os.path.abspath(args.old), path, fmt)
            new_rc, new = run(ROOT, path, fmt)
            if fmt != "text":
                old, new = normal_json(old), normal_json(new)
            same = old == new and old_rc == new_rc
            print(f"{'same' if same else 'DIFFERENT'}  {fmt:9}  exit {old_rc}/{new_rc}  {len(new):>9} chars  {path}")
            if not same:
                differ += 1
                diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "old", "new", lineterm="", n=1)
                for line in list(diff)[:40]:
                    print("    " + line)
    print(f"{differ} report(s) differ")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
