"""How many servers get a verdict on their memory, and is any advice repeated server by server?

    python3 benchmarks/budget_coverage.py [PATH ...] [--root CHECKOUT] [--online]

Runs `vramlint check PATH... --offline --output-format json` (the checkout this script is in, or --root: another
checkout, to compare before and after a change) and prints:

* servers found, servers whose model is known (a model that resolved: the budget or the GPU requirement was
  computed, or nothing about the model is unresolved), and of those the share with a budget (GPU known) or a
  GPU requirement (GPU not named: what it needs of one, VRL011);
* the number of VRL010 findings;
* message texts that recur on several servers (the same text on two or more servers), in total and by rule: a
  message that only repeats the same advice per server is what the end-of-run summary by cause replaces;
* the causes of the servers left without a budget (summary.unchecked), one line each.
Default path: /work/shared/corpus.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(paths: list[str], root: str, online: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=root)
    # run from the checkout: `python -m` puts the current folder first on sys.path
    cmd = [sys.executable, "-m", "vramlint", "check", *(os.path.abspath(p) for p in paths), "--output-format", "json",
           "--fail-on", "never"]
    if not online:
        cmd.append("--offline")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, cwd=root)
    if out.returncode not in (0, 1):
        raise SystemExit(f"vramlint failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def model_known(server: dict) -> bool:
    if server.get("budget") or server.get("gpu_requirement"):
        return True
    if not server.get("model"):
        return False
    return not any(str(u).startswith(("model", "budget could not")) for u in server.get("unresolved", []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=["/work/shared/corpus"])
    parser.add_argument("--root", default=os.path.dirname(HERE), help="vramlint checkout to run (default: this one)")
    parser.add_argument("--online", action="store_true", help="let vramlint ask the Hugging Face Hub")
    args = parser.parse_args(argv)
    doc = run(args.paths, os.path.abspath(args.root), args.online)
    servers = doc["servers"]
    known = [s for s in servers if model_known(s)]
    budget = [s for s in known if s.get("budget")]
    requirement = [s for s in known if not s.get("budget") and s.get("gpu_requirement")]
    covered = len(budget) + len(requirement)
    findings = [f for f in doc["findings"] if not f.get("suppressed")]
    by_rule = collections.Counter(f["rule"] for f in findings)

    # the same message text on two or more distinct servers (file#yaml_path), per rule
    places: dict[tuple[str, str], set] = collections.defaultdict(set)
    keys = {}
    for s in servers:
        for f in s.get("findings", []):
            keys[(f["rule"], f["file"], f["line"], f["column"], f["message"])] = f"{s['file']}#{s['yaml_path']}"
    for f in findings:
        where = keys.get((f["rule"], f["file"], f["line"], f["column"], f["message"]), f"{f['file']}:{f['line']}")
        places[(f["rule"], f["message"])].add(where)
    repeated = {k: v for k, v in places.items() if len(v) > 1}
    repeated_by_rule = collections.Counter()
    for (rule, _message), where in repeated.items():
        repeated_by_rule[rule] += len(where)

    print(f"vramlint at {os.path.abspath(args.root)} on {' '.join(args.paths)} ({'online' if args.online else 'offline'})")
    print(f"servers: {len(servers)}; model known: {len(known)}")
    print(f"budget: {len(budget)}; GPU requirement: {len(requirement)}; "
          f"budget or requirement: {covered}/{len(known)} = {100 * covered / max(1, len(known)):.1f}% of servers whose "
          "model is known")
    print(f"findings by rule: {dict(sorted(by_rule.items()))}")
    print(f"VRL010 findings: {by_rule.get('VRL010', 0)}")
    print(f"message texts repeated on several servers: {len(repeated)} texts on {sum(len(v) for v in repeated.values())} "
          f"servers; by rule: {dict(sorted(repeated_by_rule.items()))}")
    for (rule, message), where in sorted(repeated.items(), key=lambda kv: -len(kv[1]))[:8]:
        print(f"  {len(where)} x {rule}: {message[:150]}")
    for group in doc["summary"].get("unchecked", []):
        print(f"unchecked: {group['message'][:200]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
