"""Whether two copies of vramlint give the same reports (a speed change must not change any output).

    python3 benchmarks/same_reports.py --old /path/to/other/checkout PATH [PATH ...]

For each PATH, runs `python3 -m vramlint check --offline PATH` with the text and with the JSON report, once with
the code of this checkout and once with the code of ``--old`` (a checkout or worktree of another commit, put
first on PYTHONPATH), and compares: the text reports byte for byte, the JSON reports as data without their
`run` key (timings), and the exit codes. Prints one line a path and report, and the first differing lines of
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


def run(code_root: str, path: str, fmt: str) -> tuple[int, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = code_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["NO_COLOR"] = "1"
    cmd = [sys.executable, "-m", "vramlint", "check", "--offline", "--output-format", fmt, path]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=os.getcwd(), check=False)
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
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args(argv)
    differ = 0
    for path in args.paths:
        for fmt in ("text", "json"):
            old_rc, old = run(os.path.abspath(args.old), path, fmt)
            new_rc, new = run(ROOT, path, fmt)
            if fmt == "json":
                old, new = normal_json(old), normal_json(new)
            same = old == new and old_rc == new_rc
            print(f"{'same' if same else 'DIFFERENT'}  {fmt:4}  exit {old_rc}/{new_rc}  {len(new):>9} chars  {path}")
            if not same:
                differ += 1
                diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "old", "new", lineterm="", n=1)
                for line in list(diff)[:40]:
                    print("    " + line)
    print(f"{differ} report(s) differ")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
