"""Inline `# vramlint: ignore[...]` comments and `vramlint.dev/ignore` annotations, through the real pipeline."""

from __future__ import annotations

from tests._check_util import by_rule, make_repo, run_json
from vramlint.meta import meta_rules
from vramlint.suppress import RuleNames, comment_suppressions


def test_comment_on_the_line_above_and_annotation_suppress(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml")
    monkeypatch.chdir(repo)
    code, doc = run_json(capsys, "deploy", "--select", "TST")
    tst001 = by_rule(doc["findings"], "TST001")
    assert [(f["line"], f["suppressed"], f["justification"]) for f in tst001] == [
        (13, True, "vramlint.dev/ignore annotation at deploy/two-servers.yaml:6"),
        (29, True, "the 7B model is what we serve"),
    ]
    assert [f["suppression"] for f in tst001] == ["annotation", "comment"]
    assert by_rule(doc["findings"], "VRL100") == []  # both suppressions were used
    # the annotation names TST001 only: TST002 on the same object is still reported
    assert [f["suppressed"] for f in by_rule(doc["findings"], "TST002")] == [False]


def test_comment_on_the_same_line_by_rule_name_and_several_ids(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml")
    path = repo / "deploy" / "two-servers.yaml"
    text = path.read_text().replace(
        '          command: ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]\n          resources:',
        '          command: ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]  # vramlint: ignore[model-line, TST002]\n'
        '          resources:',
        1,
    )
    path.write_text(text.replace('vramlint.dev/ignore: "TST001"', 'vramlint.dev/ignore: "TST002"'))
    monkeypatch.chdir(repo)
    code, doc = run_json(capsys, "deploy", "--select", "TST")
    first = [f for f in doc["findings"] if f["line"] == 13 and f["rule"] == "TST001"][0]
    assert first["suppressed"] and first["justification"] is None and first["suppression"] == "comment"
    # TST002 is suppressed by the annotation, so the comment's TST002 suppresses nothing: reported
    unused = by_rule(doc["findings"], "VRL100")
    assert [(u["line"], u["level"]) for u in unused] == [(13, "warning")]
    assert "'TST002' suppresses nothing" in unused[0]["message"]
    assert by_rule(doc["findings"], "TST002")[0]["suppression"] == "annotation"


def test_unused_and_malformed_comments_are_reported(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "llama-8b-a10g.yaml")
    path = repo / "deploy" / "llama-8b-a10g.yaml"
    lines = path.read_text().splitlines()
    lines[21] += "  # vramlint: ignore[TST001] wrong line: the finding is on the model line"
    lines[18] += "  # vramlint: ignore TST001"
    lines[17] += "  # vramlint: ignore[TST01,]"
    lines[16] += "  # vramlint: ignore[]"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(repo)
    code, doc = run_json(capsys, "deploy", "--select", "TST")
    unused = by_rule(doc["findings"], "VRL100")
    assert [u["line"] for u in unused] == [22]
    assert unused[0]["column"] == lines[21].index("#") + 1
    malformed = by_rule(doc["findings"], "VRL101")
    assert [m["line"] for m in malformed] == [17, 18, 19]
    assert "names no rule" in malformed[0]["message"]
    assert "'TST01' is not a rule id or name; did you mean TST001?" in malformed[1]["message"]
    assert "cannot read this vramlint comment" in malformed[2]["message"]
    assert all(not f["suppressed"] for f in by_rule(doc["findings"], "TST001"))


def test_suppression_of_a_rule_that_is_not_selected_is_not_unused(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml")
    monkeypatch.chdir(repo)
    code, doc = run_json(capsys, "deploy", "--select", "TST002")
    assert by_rule(doc["findings"], "VRL100") == []
    assert by_rule(doc["findings"], "TST001") == []


def test_unknown_rule_in_annotation_is_malformed(tmp_path, capsys, monkeypatch):
    repo = make_repo(tmp_path, "two-servers.yaml")
    path = repo / "deploy" / "two-servers.yaml"
    path.write_text(path.read_text().replace('"TST001"', '"TST001,VRL0001"'))
    monkeypatch.chdir(repo)
    code, doc = run_json(capsys, "deploy", "--select", "TST")
    malformed = by_rule(doc["findings"], "VRL101")
    assert [(m["line"], m["suppressed"]) for m in malformed] == [(6, False)]
    assert "VRL0001" in malformed[0]["message"]


def test_comment_parser_reads_only_comments():
    names = RuleNames(meta_rules())
    lines = [
        'image: "x#vramlint: ignore[VRL100]"',  # no white space before '#': not a comment
        "# vramlint: ignore[VRL100, input-error] -- known",
        "  - --foo  #vramlint:ignore[VRL101]",
    ]
    found, malformed = comment_suppressions("f.yaml", lines, names)
    assert malformed == []
    assert [(s.location.line, s.rule_ids, s.reason) for s in found] == [
        (2, ["VRL100", "VRL102"], "known"),
        (3, ["VRL101"], None),
    ]


def test_files_without_the_word_are_not_read_again_and_an_upper_case_comment_still_suppresses(
        tmp_path, capsys, monkeypatch):
    # the scan notes the files whose text holds no "vramlint" (in any case); only the others are read again for
    # comments, also when the files are read by the scan's worker processes (PARALLEL_FROM files and more)
    from vramlint import scan
    from vramlint.commands import check

    repo = make_repo(tmp_path, "two-servers.yaml")
    source = repo / "deploy" / "two-servers.yaml"
    text = source.read_text().replace('vramlint.dev/ignore: "TST001"', 'team: "a"').replace(
        "          # vramlint: ignore[TST001] the 7B model is what we serve\n", "          # the 7B model\n")
    assert "vramlint" not in text.lower()
    source.write_text(text.replace(
        '          command: ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]\n',
        '          command: ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]  # VRAMLINT: ignore[TST001]\n', 1))
    plain = repo / "deploy" / "plain"
    plain.mkdir()
    for i in range(scan.PARALLEL_FROM):
        (plain / f"copy-{i}.yaml").write_text(text)
    read: list[str] = []
    original = check.FileReader.__call__

    def reading(self, file):
        read.append(file)
        return original(self, file)

    monkeypatch.setattr(check.FileReader, "__call__", reading)
    monkeypatch.chdir(repo)
    code, doc = run_json(capsys, "deploy", "--select", "TST")
    commented = [f for f in by_rule(doc["findings"], "TST001") if f["file"] == "deploy/two-servers.yaml"]
    assert [(f["line"], f["suppressed"]) for f in commented] == [(13, True), (29, False)]
    copies = [f for f in by_rule(doc["findings"], "TST001") if f["file"].startswith("deploy/plain/")]
    assert len(copies) == 2 * scan.PARALLEL_FROM and not any(f["suppressed"] for f in copies)
    # read again: the commented file only (the report's source lines come later, by file)
    assert read[:1] == ["deploy/two-servers.yaml"] and "deploy/plain/copy-0.yaml" not in read[:2]
