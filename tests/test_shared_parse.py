"""A text read again in one process (a copied file, a compose file every service extends) is parsed once: each
reader gets documents and problems of its own file, and a scan of copies reports what it reports with nothing
kept (every server, finding and position, each under its own file)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import vramlint.scan as scan
import vramlint.yamlload as yamlload

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "examples", ROOT / "tests" / "fixtures" / "kubernetes", ROOT / "tests" / "fixtures" / "compose"]

TEXT = "a: 1\nb:\n  - x\n  - y\na: 2\n---\nc: {d: 3}\n"


def test_a_second_reader_gets_its_own_file_and_the_same_contents():
    yamlload.forget_shared()
    first_docs, first_problems = yamlload.load_shared(TEXT, "one/f.yaml")
    second_docs, second_problems = yamlload.load_shared(TEXT, "two/f.yaml")
    plain_docs, plain_problems = yamlload.load_text(TEXT, "two/f.yaml")
    assert [d.file for d in second_docs] == ["two/f.yaml", "two/f.yaml"]
    assert [d.file for d in first_docs] == ["one/f.yaml", "one/f.yaml"]
    assert second_docs[0].data is first_docs[0].data  # parsed once
    assert [(d.index, d.data, d.data.lc.data, d.lines) for d in second_docs] == \
        [(d.index, d.data, d.data.lc.data, d.lines) for d in plain_docs]
    assert second_problems == plain_problems  # the duplicate key, on two/f.yaml's line
    assert [p.file for p in first_problems] == ["one/f.yaml"]
    assert second_problems[0] is not first_problems[0]


def test_the_kept_parses_are_bounded_by_their_size(monkeypatch):
    yamlload.forget_shared()
    monkeypatch.setattr(yamlload, "SHARED_MAX_CHARS", 3 * len(TEXT))
    for i in range(10):
        yamlload.load_shared(TEXT + f"k{i}: v\n", "f.yaml")
    assert len(yamlload._SHARED) <= 3
    assert yamlload._SHARED_SIZE[0] == sum(len(text) for text, _quick in yamlload._SHARED)
    monkeypatch.setattr(yamlload, "SHARED_MAX_TEXT", 10)
    yamlload.forget_shared()
    yamlload.load_shared(TEXT, "f.yaml")
    assert not yamlload._SHARED  # larger than a text kept


def _report(capsys, path: Path) -> dict:
    from vramlint.cli import main

    main(["check", str(path), "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    report.pop("run", None)
    return report


def test_copies_are_reported_as_with_nothing_kept(tmp_path, capsys, monkeypatch):
    for copy in ("a", "b"):
        for i, source in enumerate(SOURCES):
            shutil.copytree(source, tmp_path / copy / f"{i}-{source.name}")
    monkeypatch.setattr(scan, "_worker_count", lambda files: 1)  # one process: the second copy finds the first's
    yamlload.forget_shared()
    shared = _report(capsys, tmp_path)
    monkeypatch.setattr(yamlload, "SHARED_MAX_TEXT", -1)  # nothing kept: every file parsed
    yamlload.forget_shared()
    unshared = _report(capsys, tmp_path)
    assert shared == unshared
    files = {s["file"] for s in shared["servers"]}
    assert any("/a/" in f for f in files) and any("/b/" in f for f in files)


def test_a_reader_can_keep_the_kept_parses_within_less(monkeypatch):
    yamlload.forget_shared()
    for i in range(10):
        yamlload.load_shared(TEXT + f"k{i}: v\n", "f.yaml")
    assert len(yamlload._SHARED) == 10  # within the scan's bound
    yamlload.load_shared(TEXT + "last: v\n", "f.yaml", max_chars=2 * len(TEXT) + 20)
    assert len(yamlload._SHARED) == 2  # the oldest out until the fixes' own bound holds
    assert yamlload._SHARED_SIZE[0] == sum(len(text) for text, _quick in yamlload._SHARED)
    assert (TEXT + "last: v\n", False) in yamlload._SHARED
    yamlload.forget_shared()
    yamlload.load_shared(TEXT, "f.yaml", max_chars=len(TEXT) - 1)
    assert not yamlload._SHARED  # larger than that bound: not kept


def test_a_check_keeps_few_texts_for_its_fixes_and_reports_the_same(tmp_path, capsys, monkeypatch):
    import vramlint.fixes as fixes

    for i, source in enumerate(SOURCES):
        shutil.copytree(source, tmp_path / f"{i}-{source.name}")
    everything = _report(capsys, tmp_path)
    assert sum(1 for f in everything["findings"] if f.get("fix")) >= 5  # fixes made on many files' texts
    monkeypatch.setattr(fixes, "TEXT_CACHE_MAX_CHARS", 1)  # one text kept at a time
    held: list[int] = []
    read = fixes.file_text

    def watched(path):
        text = read(path)
        held.append(len(fixes._TEXT_CACHE))
        assert fixes._TEXT_CHARS[0] == sum(len(t or "") for t in fixes._TEXT_CACHE.values())
        return text

    monkeypatch.setattr(fixes, "file_text", watched)
    bounded = _report(capsys, tmp_path)
    assert held and max(held) == 1
    assert bounded == everything
    # after the rules nothing the fixes read is kept for the reports
    assert not fixes._TEXT_CACHE and not yamlload._SHARED


def test_check_fix_keeps_every_text_its_edits_were_made_on(tmp_path, capsys, monkeypatch):
    import vramlint.fixes as fixes
    from vramlint.cli import main

    for i, source in enumerate(SOURCES):
        shutil.copytree(source, tmp_path / f"{i}-{source.name}")
    monkeypatch.setattr(fixes, "TEXT_CACHE_MAX_CHARS", 1)
    seen: list[int] = []
    apply = __import__("vramlint.fixing", fromlist=["apply_fixes"]).apply_fixes

    def counting(findings, **options):
        seen.append(len({e.file for f in findings if f.fix for e in f.fix.edits}))
        seen.append(len(fixes._TEXT_CACHE))
        return apply(findings, **options)

    monkeypatch.setattr("vramlint.fixing.apply_fixes", counting)
    main(["check", str(tmp_path), "--offline", "--diff"])
    capsys.readouterr()
    assert seen[0] >= 3 and seen[1] >= seen[0]  # every file a fix edits is still held when fixes are applied
