"""Helpers for the check/report/suppression/baseline tests: a scratch repository and an in-process run."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "check"
TEST_RULES = FIXTURES / "rules"


def make_repo(tmp_path: Path, *names: str) -> Path:
    """A git-rooted folder holding copies of the named fixtures under deploy/."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "deploy").mkdir()
    for name in names:
        shutil.copy(FIXTURES / name, repo / "deploy" / name)
    return repo


def run(capsys, *argv: str, test_rules: bool = True) -> tuple[int, str, str]:
    from vramlint.cli import main

    args = ["check", *argv, "--offline"]
    if test_rules:
        args += ["--rules-dir", str(TEST_RULES)]
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys, *argv: str, test_rules: bool = True) -> tuple[int, dict]:
    code, out, err = run(capsys, *argv, "--output-format", "json", test_rules=test_rules)
    return code, json.loads(out)


def by_rule(findings: list[dict], rule: str) -> list[dict]:
    return [f for f in findings if f["rule"] == rule]


_HEADLINE = re.compile(r"^(?P<rule>[A-Z]{2,8}\d{3,4}) \[(?P<level>error|warning|note)\] (?P<text>.*)$")
_ARROW = re.compile(r"^ *--> (?P<where>.+:\d+:\d+)$")


def concise_view(out: str) -> str:
    """The default text report's findings as `path:line:col: RULE [level] headline note...` lines (the concise
    format's shape, with the help line left out), other lines as they are: for tests that look for a finding
    in output they do not control the format of (the pre-commit hook, the README's commands)."""
    lines = out.splitlines()
    result: list[str] = []
    i = 0
    while i < len(lines):
        head = _HEADLINE.match(lines[i])
        arrow = _ARROW.match(lines[i + 1]) if head and i + 1 < len(lines) else None
        if not arrow:
            result.append(lines[i])
            i += 1
            continue
        text = [head["text"]]
        i += 2
        label = None
        while i < len(lines) and lines[i].strip():
            stripped = lines[i].strip()
            if stripped.startswith("= "):
                label, _, rest = stripped[2:].partition(": ")
                if label == "note":
                    text.append(rest)
            elif label == "note" and not stripped.startswith("|") and not re.match(r"^\d+ \|", stripped):
                text.append(stripped)
            i += 1
        result.append(f"{arrow['where']}: {head['rule']} [{head['level']}] {' '.join(text)}")
    return "\n".join(result) + ("\n" if out.endswith("\n") else "")


def deployment(image: str, args: list[str], limits: str = "nvidia.com/gpu: 1", command: list[str] | None = None) -> str:
    """A one-container Deployment running ``image`` with these args (JSON flow lists, so each is one line) and
    these resource limits (``key: value`` lines)."""
    cmd = f"          command: {json.dumps(command)}\n" if command else ""
    limit_lines = "".join(f"              {line.strip()}\n" for line in limits.splitlines() if line.strip())
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n"
            f"          image: {image}\n{cmd}          args: {json.dumps(args)}\n"
            f"          resources:\n            limits:\n{limit_lines}")


def run_cli(tmp_path: Path, text: str, *argv: str, name: str = "deploy.yaml") -> tuple[int, str]:
    """``vramlint ARGV... NAME --offline`` in a fresh process on ``text`` written to tmp_path/NAME: (exit, stdout)."""
    import os
    import subprocess
    import sys

    (tmp_path / name).write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-m", "vramlint", *argv, name, "--offline"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return done.returncode, done.stdout
