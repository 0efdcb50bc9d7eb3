"""`vramlint check`: exit statuses, --fail-on, selection, severity overrides, per-path overrides, stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._check_util import FIXTURES, TEST_RULES, by_rule, make_repo, run, run_json

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml", "llama-8b-a10g.yaml")
    monkeypatch.chdir(repo)
    return repo


def test_fail_on_levels(repo, capsys):
    # TST002 is an error, TST001 a warning; VRL102 is left out to keep the test about the levels
    base = ("deploy", "--select", "TST", "--ignore", "VRL102")
    assert run(capsys, *base)[0] == 1
    assert run(capsys, *base, "--fail-on", "never")[0] == 0
    assert run(capsys, *base, "--ignore", "TST002")[0] == 0  # only a warning left
    assert run(capsys, *base, "--ignore", "bad-name", "--fail-on", "warning")[0] == 1
    assert run(capsys, "deploy", "--select", "TST001", "--ignore", "VRL102", "--fail-on", "note")[0] == 1


def test_select_and_ignore_by_prefix_and_name(repo, capsys):
    _, doc = run_json(capsys, "deploy", "--select", "model-line", "--ignore", "VRL102")
    assert {f["rule"] for f in doc["findings"]} == {"TST001"}
    _, doc = run_json(capsys, "deploy", "--select", "TST", "--ignore", "TST0,VRL102")
    assert doc["findings"] == []


def test_input_errors_are_kept_when_rules_are_selected(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "broken.yaml")
    monkeypatch.chdir(repo)
    code, doc = run_json(capsys, "deploy", "--select", "TST001")
    errors = by_rule(doc["findings"], "VRL102")
    assert code == 1 and [(e["file"], e["line"], e["level"]) for e in errors] == [("deploy/broken.yaml", 11, "error")]
    code, doc = run_json(capsys, "deploy", "--ignore", "input-error")
    assert by_rule(doc["findings"], "VRL102") == []


def test_configuration_levels_options_and_overrides(repo, capsys):
    (repo / ".vramlint.yaml").write_text(
        "select: [TST]\n"
        "ignore: [VRL102]\n"
        "severity: {TST002: warning}\n"
        "rules: {model-line: {prefix: served}}\n"
        "overrides:\n"
        "  - files: [deploy/llama-*.yaml]\n"
        "    severity: {TST001: error}\n"
        "    rules: {TST001: {prefix: llama}}\n"
    )
    code, doc = run_json(capsys, "deploy")
    levels = {(f["file"], f["rule"]): (f["level"], f["message"].split(" ")[0]) for f in doc["findings"]
              if not f["suppressed"]}
    assert levels[("deploy/two-servers.yaml", "TST002")][0] == "warning"
    assert levels[("deploy/llama-8b-a10g.yaml", "TST001")] == ("error", "llama")
    suppressed = [f for f in doc["findings"] if f["suppressed"] and f["rule"] == "TST001"]
    assert {f["message"].split(" ")[0] for f in suppressed} == {"served"}
    assert code == 1  # the llama file's TST001 is an error there
    assert run(capsys, "deploy", "--fail-on", "never")[0] == 0
    # severity "off" turns a rule off
    (repo / ".vramlint.yaml").write_text("select: [TST]\nignore: [VRL102]\nseverity: {TST002: off, TST001: note}\n")
    code, doc = run_json(capsys, "deploy")
    assert code == 0 and {f["rule"] for f in doc["findings"]} == {"TST001"}


def test_usage_errors_exit_2(repo, capsys):
    code, out, err = run(capsys, "deploy", "--gpu", "A10X")
    assert code == 2 and "unknown GPU 'A10X'" in err and "A10" in err
    code, out, err = run(capsys, "deploy", "--config", "nope.yaml")
    assert code == 2 and "nope.yaml: configuration file not found" in err
    code, out, err = run(capsys, "deploy", "--rules-dir", "no-such-dir", test_rules=False)
    assert code == 2 and "rules directory not found" in err


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["HF_HUB_OFFLINE"] = "1"
    env.pop("NO_COLOR", None)
    return env


def test_stdin_and_real_process_exit_status(tmp_path):
    text = (FIXTURES / "two-servers.yaml").read_text()
    args = [sys.executable, "-m", "vramlint", "-", "--rules-dir", str(TEST_RULES), "--select", "TST",
            "--ignore", "VRL102", "--output-format", "json"]
    (tmp_path / ".git").mkdir()
    proc = subprocess.run(args, input=text, capture_output=True, text=True, cwd=tmp_path, env=_env())
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    tst = {(f["rule"], f["line"], f["suppressed"]) for f in doc["findings"]}
    assert ("TST002", 11, False) in tst and ("TST001", 29, True) in tst  # comments read from stdin's text
    assert {f["file"] for f in doc["findings"]} == {"<stdin>"}
    proc = subprocess.run(args[:-2] + ["--output-format", "sarif"], input=text, capture_output=True, text=True,
                          cwd=tmp_path, env=_env())
    assert proc.returncode == 1 and json.loads(proc.stdout)["version"] == "2.1.0"


def test_a_rule_that_crashes_is_reported_and_the_run_goes_on(repo, capsys, tmp_path):
    rules = tmp_path / "crashing"
    rules.mkdir()
    (rules / "tst009_crash.py").write_text(
        '"""Test rule that crashes."""\nID = "TST009"\nNAME = "crash"\nLEVEL = "note"\n\n'
        "def check(assessment, ctx):\n    raise RuntimeError('boom')\n"
    )
    code, doc = run_json(capsys, "deploy", "--select", "TST", "--rules-dir", str(rules), "--ignore", "VRL102")
    crashed = by_rule(doc["findings"], "VRL000")
    assert code == 1 and crashed and "TST009" in crashed[0]["message"]
    assert by_rule(doc["findings"], "TST002")  # the other rules ran
