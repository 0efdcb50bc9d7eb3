"""Baselines: findings matched by rule, file and YAML path, so moved lines do not bring them back."""

from __future__ import annotations

import json

import pytest

from tests._check_util import by_rule, make_repo, run, run_json


def _insert_lines_at_top(path, count):
    path.write_text("".join(f"# a comment pushing everything down {i}\n" for i in range(count)) + path.read_text())


def test_written_baseline_survives_lines_moving(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml", "llama-8b-a10g.yaml")
    monkeypatch.chdir(repo)
    code, out, err = run(capsys, "deploy", "--select", "TST", "--ignore", "VRL102", "--write-baseline", "vl.json")
    assert code == 0 and "wrote 2 finding(s) to the baseline vl.json" in err
    saved = json.loads((repo / "vl.json").read_text())
    assert saved["version"] == 1
    keys = sorted((e["rule"], e["file"], e["yaml_path"]) for e in saved["findings"])
    assert keys[0][:2] == ("TST001", "deploy/llama-8b-a10g.yaml")
    assert keys[0][2].startswith("spec.template.spec.containers[0].")
    assert keys[1] == ("TST002", "deploy/two-servers.yaml", "spec.template.spec.containers[0]")
    _, before = run_json(capsys, "deploy", "--select", "TST", "--ignore", "VRL102")
    lines_before = {f["file"]: f["line"] for f in before["findings"] if not f["suppressed"]}

    _insert_lines_at_top(repo / "deploy" / "two-servers.yaml", 5)
    _insert_lines_at_top(repo / "deploy" / "llama-8b-a10g.yaml", 3)
    code, doc = run_json(capsys, "deploy", "--select", "TST", "--ignore", "VRL102", "--baseline", "vl.json")
    assert code == 0
    active = [f for f in doc["findings"] if not f["suppressed"]]
    assert active == []
    baselined = [f for f in doc["findings"] if f["suppression"] == "baseline"]
    assert {f["file"]: f["line"] for f in baselined} == {
        "deploy/two-servers.yaml": lines_before["deploy/two-servers.yaml"] + 5,
        "deploy/llama-8b-a10g.yaml": lines_before["deploy/llama-8b-a10g.yaml"] + 3,
    }
    assert baselined[0]["justification"] == "in baseline vl.json"


def test_new_finding_is_reported_old_one_is_not(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml")
    monkeypatch.chdir(repo)
    run(capsys, "deploy", "--select", "TST", "--ignore", "VRL102", "--write-baseline", "vl.json")
    path = repo / "deploy" / "two-servers.yaml"
    path.write_text(path.read_text().replace("name: good-qwen", "name: bad-qwen-2"))
    code, doc = run_json(capsys, "deploy", "--select", "TST", "--ignore", "VRL102", "--baseline", "vl.json")
    assert code == 1
    tst002 = by_rule(doc["findings"], "TST002")
    assert [(f["line"], f["suppressed"]) for f in tst002] == [(11, True), (26, False)]


def test_baseline_works_from_another_working_directory(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml")
    monkeypatch.chdir(repo)
    run(capsys, "deploy", "--select", "TST002", "--ignore", "VRL102", "--write-baseline", "vl.json")
    monkeypatch.chdir(repo / "deploy")
    code, doc = run_json(capsys, ".", "--select", "TST002", "--ignore", "VRL102", "--baseline", "../vl.json")
    assert code == 0 and all(f["suppressed"] for f in doc["findings"])


@pytest.mark.parametrize("content, message", [
    ("{", "not a JSON baseline"),
    ('{"findings": []}', 'no "version" key'),
    ('{"version": 9, "findings": []}', "baseline version 9 is not supported"),
    ('{"version": 1, "findings": [{"rule": "TST001"}]}', 'needs "rule" and "file"'),
])
def test_bad_baseline_is_a_usage_error(tmp_path, capsys, monkeypatch, content, message):
    repo = make_repo(tmp_path, "two-servers.yaml")
    monkeypatch.chdir(repo)
    (repo / "vl.json").write_text(content)
    code, out, err = run(capsys, "deploy", "--baseline", "vl.json")
    assert code == 2 and message in err


def test_missing_baseline_is_a_usage_error(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml")
    monkeypatch.chdir(repo)
    code, out, err = run(capsys, "deploy", "--baseline", "nope.json")
    assert code == 2 and "baseline file not found" in err
