"""What `vramlint check --fix --unsafe-fixes` does to real deployment files (in a temporary copy).

    python3 benchmarks/fix_corpus.py [/work/shared/corpus] [examples]

Copies the folders to a temporary directory, checks them (JSON), runs `check --fix --unsafe-fixes --offline`,
checks them again, and prints: findings with a fix (how many with edits), findings of the rules about a
value (VRL001/002/005-009) with no fix at all, fixes applied, findings gone after --fix, findings left that
had a fix, findings that appeared, and the files changed: how many still load as YAML and keep their comment
lines ('#' lines counted before and after; Helm templates, not YAML before the fix either, are counted
apart). Findings are matched by (rule, file), not by line: an added list item moves the lines below it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _check(folder: Path, *flags: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline", *flags], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=1800)


def _findings(folder: Path) -> list[dict]:
    out = _check(folder, "--output-format", "json")
    return json.loads(out.stdout)["findings"]


def _comment_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("#"))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def main(argv: list[str]) -> int:
    import yaml

    sources = [Path(a) for a in argv] or [Path("/work/shared/corpus"), ROOT / "examples"]
    with tempfile.TemporaryDirectory(prefix="vramlint-fix-") as tmp:
        work = Path(tmp)
        for src in sources:
            shutil.copytree(src, work / src.name, symlinks=True)
        before_files = _snapshot(work)
        before = _findings(work)
        fixed = _check(work, "--fix", "--unsafe-fixes")
        after = _findings(work)
        after_files = _snapshot(work)

    with_fix = [f for f in before if f.get("fix")]
    with_edits = [f for f in with_fix if f["fix"]["edits"]]
    count_after = Counter((f["rule"], f.get("file")) for f in after)
    count_before = Counter((f["rule"], f.get("file")) for f in before)
    remaining = Counter(count_after)
    left_with_fix = []
    for f in with_edits:
        k = (f["rule"], f.get("file"))
        if remaining[k] > 0:
            remaining[k] -= 1
            left_with_fix.append(f)
    gone = len(with_edits) - len(left_with_fix)
    appeared = count_after - count_before
    applied = re.search(r"fixed (\d+) finding\(s\) in (\d+) file\(s\)", fixed.stderr)
    changed = [name for name, data in after_files.items() if before_files.get(name) != data]
    parse_ok, comments_kept, templates = 0, 0, 0
    for name in changed:
        old, new = before_files[name].decode("utf-8"), after_files[name].decode("utf-8")
        try:
            list(yaml.safe_load_all(old))
        except yaml.YAMLError:
            templates += 1  # a Helm template (Go actions), not YAML before the fix either
            continue
        try:
            list(yaml.safe_load_all(new))
            parse_ok += 1
        except yaml.YAMLError:
            print(f"  does not parse after --fix: {name}")
        if _comment_lines(old) == _comment_lines(new):
            comments_kept += 1
        else:
            print(f"  comment lines changed: {name}")

    value_rules = ("VRL001", "VRL002", "VRL005", "VRL006", "VRL007", "VRL008", "VRL009")
    without = [f for f in before if f["rule"] in value_rules and not f.get("fix")]
    by_rule = Counter(f["rule"] for f in with_fix)
    by_rule_edits = Counter(f["rule"] for f in with_edits)
    print(f"sources: {', '.join(str(s) for s in sources)}")
    print(f"findings before --fix: {len(before)}")
    print(f"findings with a fix: {len(with_fix)} ({len(with_edits)} with edits, "
          f"{len(with_fix) - len(with_edits)} advice or a reason why vramlint cannot write it)")
    for rule in sorted(by_rule):
        print(f"  {rule}: {by_rule[rule]} with a fix, {by_rule_edits[rule]} with edits")
    print(f"findings of {', '.join(value_rules)} with no fix at all: {len(without)}")
    for f in without[:20]:
        print(f"  {f['rule']} {f['file']}:{f['line']}: {f['message'][:100]}")
    print(f"fixes applied: {applied.group(1) if applied else '?'} in {applied.group(2) if applied else '?'} files "
          f"(exit status of --fix: {fixed.returncode})")
    print(f"findings gone after --fix: {gone} of {len(with_edits)} with edits")
    print(f"findings left that had a fix: {len(left_with_fix)}")
    for f in left_with_fix[:20]:
        print(f"  {f['rule']} {f['file']}:{f['line']}: {f['fix']['description'][:100]}")
    print(f"findings that appeared after --fix: {sum(appeared.values())}")
    for (rule, file), n in sorted(appeared.items())[:20]:
        print(f"  {rule} {file} x{n}")
    print(f"files changed: {len(changed)} ({templates} Helm templates, not YAML before the fix either); YAML files "
          f"that still parse: {parse_ok} of {len(changed) - templates}; keep their comment lines: {comments_kept} "
          f"of {len(changed) - templates}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
