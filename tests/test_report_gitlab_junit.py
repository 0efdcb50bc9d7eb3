"""`gitlab` (Code Quality) and `junit` output formats, run through the real CLI: the structure each consumer
reads (GitLab's documented Code Quality fields; JUnit XML parsed with xml.etree)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WILL_NOT_START = REPO / "examples" / "kubernetes" / "llama-3.1-8b-will-not-start.yaml"
T4 = REPO / "examples" / "kubernetes" / "llama-3.2-3b-t4.yaml"


def vramlint(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", NO_COLOR="1")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "vramlint", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "big.yaml").write_text(WILL_NOT_START.read_text())
    (tmp_path / "deploy" / "t4.yaml").write_text(T4.read_text())
    return tmp_path


def active_findings(repo: Path) -> list[dict]:
    result = vramlint("check", "deploy", "--offline", "--output-format", "json", cwd=repo)
    return [f for f in json.loads(result.stdout)["findings"] if not f["suppressed"]]


def test_gitlab_code_quality_fields(repo):
    expected = active_findings(repo)
    result = vramlint("check", "deploy", "--offline", "--output-format", "gitlab", cwd=repo)
    assert result.returncode == 1
    issues = json.loads(result.stdout)
    assert isinstance(issues, list) and len(issues) == len(expected) > 0
    for issue, finding in zip(issues, expected, strict=True):
        assert isinstance(issue["description"], str) and finding["message"] in issue["description"]
        assert issue["check_name"].startswith(finding["rule"])
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["path"] == finding["file"]  # relative to the repository root (cwd here)
        assert issue["location"]["lines"]["begin"] == finding["line"] >= 1
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert {i["severity"] for i in issues if i["check_name"].startswith("VRL005")} == {"critical"}
    # the fingerprint does not move with the line: a comment added above the server keeps it
    (repo / "deploy" / "big.yaml").write_text("# moved\n" + WILL_NOT_START.read_text())
    moved = json.loads(vramlint("check", "deploy", "--offline", "--output-format", "gitlab", cwd=repo).stdout)
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in issues]
    assert [i["location"]["lines"]["begin"] for i in moved if "big" in i["location"]["path"]] == \
        [i["location"]["lines"]["begin"] + 1 for i in issues if "big" in i["location"]["path"]]


def test_gitlab_from_a_subfolder_gives_paths_from_the_repository_root(repo):
    result = vramlint("check", ".", "--offline", "--output-format", "gitlab", cwd=repo / "deploy")
    paths = {i["location"]["path"] for i in json.loads(result.stdout)}
    assert paths and all(p.startswith("deploy/") for p in paths)


def test_junit_is_valid_xml_with_failures_for_findings_at_fail_on(repo):
    expected = active_findings(repo)
    result = vramlint("check", "deploy", "--offline", "--output-format", "junit", cwd=repo)
    assert result.returncode == 1
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites"
    cases = root.findall("testsuite/testcase")
    failures = root.findall("testsuite/testcase/failure")
    assert int(root.get("tests")) == len(cases) == len(expected)
    errors = [f for f in expected if f["level"] == "error"]
    assert int(root.get("failures")) == len(failures) == len(errors) > 0
    assert {f.get("type") for f in failures} == {f["rule"] for f in errors}
    for suite in root.findall("testsuite"):
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
        assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
    # below --fail-on a finding is a passing test case with its text; --fail-on note makes all failures
    notes = [c for c in cases if c.find("failure") is None]
    assert notes and all("[note]" in c.find("system-out").text for c in notes)
    strict = ET.fromstring(vramlint("check", "deploy", "--offline", "--output-format", "junit", "--fail-on", "note",
                                    cwd=repo).stdout)
    assert int(strict.get("failures")) == len(expected)


def test_junit_lists_clean_servers_as_passing_test_cases(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "t4.yaml").write_text(T4.read_text())
    result = vramlint("check", ".", "--offline", "--output-format", "junit", "--ignore", "VRL004", cwd=tmp_path)
    assert result.returncode == 0
    root = ET.fromstring(result.stdout)
    (case,) = root.findall("testsuite/testcase")
    assert case.find("failure") is None and "all checks passed" in case.get("name")
    assert root.get("failures") == "0"


def test_output_file_with_xml_extension_is_junit(repo):
    result = vramlint("check", "deploy", "--offline", "--output-file", "reports/vramlint.xml", cwd=repo)
    assert result.returncode == 1
    ET.parse(repo / "reports" / "vramlint.xml")
