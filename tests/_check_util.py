"""Helpers for the check/report/suppression/baseline tests: a scratch repository and an in-process run."""

from __future__ import annotations

import json
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
