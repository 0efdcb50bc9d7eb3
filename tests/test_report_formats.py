"""text, json, github and markdown outputs, and writing several formats in one run."""

from __future__ import annotations

import json
import re

import pytest

from tests._check_util import by_rule, make_repo, run
from vramlint.model import Finding, Location
from vramlint.report import Report, use_color
from vramlint.report.github import escape_data, escape_property


@pytest.fixture
def repo(tmp_path, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml", "llama-8b-a10g.yaml", "broken.yaml")
    monkeypatch.chdir(repo)
    return repo


TEXT_LINE = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<rule>[A-Z]+\d+) \[(?P<level>\w+)\] (?P<msg>.+)$")


def test_text_lines_and_summary(repo, capsys):
    code, out, err = run(capsys, "deploy", "--select", "TST", "--color", "never", "--output-format", "concise")
    lines = out.splitlines()
    parsed = [TEXT_LINE.match(line) for line in lines if TEXT_LINE.match(line)]
    assert ("deploy/two-servers.yaml", "11", "11", "TST002", "error") in [
        (m["file"], m["line"], m["col"], m["rule"], m["level"]) for m in parsed
    ]
    assert ("deploy/broken.yaml", "VRL102", "error") in [(m["file"], m["rule"], m["level"]) for m in parsed]
    assert "second line: 50%" in out and "\n    second line" in out  # a multi-line message stays indented
    assert not any(m["rule"] == "TST001" and m["file"] == "deploy/two-servers.yaml" for m in parsed)  # suppressed
    assert lines[-1].startswith("Found ") and "(2 suppressed)" in lines[-1] and "Failing" in lines[-1]
    assert "\033[" not in out
    code, out, err = run(capsys, "deploy", "--select", "TST", "--show-suppressed", "--color", "never",
                         "--output-format", "concise")
    assert "(suppressed by comment: the 7B model is what we serve)" in out
    code, out, err = run(capsys, "deploy", "--select", "TST", "--show-suppressed", "--color", "never")
    assert "= note: suppressed by comment: the 7B model is what we serve" in out


def test_text_default_frames_each_finding(repo, capsys):
    code, out, err = run(capsys, "deploy", "--select", "TST", "--color", "never")
    lines = out.splitlines()
    head = lines.index("TST002 [error] object bad-qwen is named bad, second line: 50%")  # one line, newline folded
    assert lines[head + 1] == "  --> deploy/two-servers.yaml:11:11"
    assert lines[head + 3].startswith("11 |") and lines[head + 4].startswith("   | " + " " * 10 + "^")
    assert lines[-1].startswith("Found ") and "(2 suppressed)" in lines[-1]


def test_text_colour(repo, capsys, monkeypatch):
    code, out, err = run(capsys, "deploy", "--select", "TST", "--color", "always")
    assert "\033[1;31mTST002 [error]\033[0m" in out
    code, out, err = run(capsys, "deploy", "--select", "TST", "--color", "always", "--output-format", "concise")
    assert "\033[1;31mTST002\033[0m" in out

    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_color("auto", Tty()) is True
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color("auto", Tty()) is False
    assert use_color("always", Tty()) is True
    monkeypatch.delenv("NO_COLOR")
    assert use_color("auto", object()) is False  # not a terminal


def test_clean_text_summary(repo, capsys):
    (repo / "plain.yaml").write_text("a: 1\n")
    code, out, err = run(capsys, "plain.yaml")
    assert code == 0 and out.strip() == "No vLLM server found in 1 file."


def test_json_contract(repo, capsys):
    code, out, err = run(capsys, "deploy", "--select", "TST", "--output-format", "json")
    doc = json.loads(out)
    assert set(doc) >= {"version", "tool", "servers", "findings", "problems", "skipped", "summary"}
    assert len(doc["servers"]) == 3
    for server in doc["servers"]:
        assert {"file", "line", "yaml_path", "model", "args", "budget", "findings"} <= set(server)
    finding = by_rule(doc["findings"], "TST002")[0]
    assert set(finding) >= {"rule", "name", "level", "file", "line", "column", "end_line", "end_column",
                            "yaml_path", "message", "suppressed", "justification"}
    assert finding["name"] == "bad-name" and finding["yaml_path"] == "spec.template.spec.containers[0]"
    bad = [s for s in doc["servers"] if s["name"] == "bad-qwen"][0]
    assert [f["rule"] for f in bad["findings"]].count("TST002") == 1
    assert doc["problems"][0]["file"] == "deploy/broken.yaml"
    assert doc["summary"]["exit_status"] == code == 1
    assert doc["summary"]["suppressed"] == 2


def test_github_annotations_escape_properties_and_data(repo, capsys):
    code, out, err = run(capsys, "deploy", "--select", "TST", "--output-format", "github")
    lines = out.splitlines()
    bad = [line for line in lines if "TST002" in line][0]
    assert bad.startswith("::error file=deploy/two-servers.yaml,line=11,endLine=11,col=11,")
    assert "title=TST002 bad-name::object bad-qwen is named bad,%0Asecond line: 50%25" in bad
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    assert not any("two-servers.yaml,line=13" in line for line in lines)  # suppressed: no annotation
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("50%\r\nx: y, z") == "50%25%0D%0Ax: y, z"


def test_github_levels():
    from vramlint.report import render

    findings = [
        Finding("TST00" + str(i), "x", level, "m", Location("a.yaml", i + 1, 2)) for i, level in
        enumerate(["error", "warning", "note"])
    ]
    out = render("github", Report(findings=findings))
    assert [line.split(" ")[0] for line in out.splitlines()] == ["::error", "::warning", "::notice"]


def test_markdown_summary(repo, capsys):
    code, out, err = run(capsys, "deploy", "--select", "TST", "--output-format", "markdown")
    assert out.startswith("## vramlint")
    assert "| Server | Model | GPU | Weights GiB | KV cache GiB | Max concurrency | Verdict | Findings |" in out
    rows = [line for line in out.splitlines() if line.startswith("| `deploy/")]
    assert len(rows) >= 3
    bad_row = [r for r in rows if "bad-qwen" in r][0]
    assert "TST002" in bad_row and "Qwen/Qwen2.5-7B-Instruct" in bad_row
    assert "### Findings" in out and "suppressed findings</summary>" in out
    assert "is named bad, second line: 50%" in out  # newlines folded into the table cell


def test_several_outputs_in_one_run(repo, capsys, tmp_path):
    sarif, md = tmp_path / "o.sarif", tmp_path / "o.md"
    code, out, err = run(capsys, "deploy", "--select", "TST", "--output-format", "sarif", "--output-file", str(sarif),
                         "--output-format", "text", "--output-format", "markdown", "--output-file", str(md))
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert md.read_text().startswith("## vramlint")
    assert re.match(r"^[A-Z]+\d+ \[(error|warning|note)\] ", out.splitlines()[0])


def test_two_formats_on_stdout_is_a_usage_error(repo, capsys):
    code, out, err = run(capsys, "deploy", "--output-format", "text", "--output-format", "json")
    assert code == 2 and "only one output format can go to standard output" in err


def test_the_json_report_is_written_as_json_dumps_writes_it():
    # report/json.py's own indenting writer must give json.dumps(indent=2, default=str)'s text exactly
    import datetime
    import json

    from vramlint.report.json import dumps_indented

    value = {"a": [], "b": {}, "c": [1, 2.5, -0.0, 10**30, 5e-324, float("nan"), float("inf"), -float("inf")],
             "d": {3: "int key", 2.5: "float key", None: "null key", True: "bool key"}, "e": (1, [2, {"x": ()}]),
             "f": "quote \" backslash \\ control \x00\x1b non-ASCII \u00e9 \u2603 \ud800", "g": datetime.date(2020, 1, 2),
             "h": {"nested": {"deeper": [{"k": None}, True, False]}}, "i": {1, 2}}
    assert dumps_indented(value) == json.dumps(value, indent=2, default=str)


def test_a_budget_servers_share_is_written_in_its_place_in_each(tmp_path, capsys):
    # the shared GPU requirement's text is a piece of its own between the servers' (made safe once): the report
    # written piece by piece is still the one json.dumps writes, with the requirement in full in every server
    from vramlint.cli import main

    for i in range(3):
        (tmp_path / f"d{i}.yaml").write_text(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i}\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.9.2\n"
            '          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]\n',
            encoding="utf-8")
    main(["check", str(tmp_path), "--offline", "--output-format", "json"])
    out = capsys.readouterr().out
    report = json.loads(out)
    requirements = [s["gpu_requirement"] for s in report["servers"]]
    assert len(requirements) == 3 and requirements[0]["fits"] and requirements[0] == requirements[1] == requirements[2]
    assert out == json.dumps(report, indent=2) + "\n"
