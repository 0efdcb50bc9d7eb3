"""A large stream of documents is read in pieces by forked workers (vramlint.scan._read_pieces): cut only where a
document starts, each piece read with the file's lines and positions, and put together it is what one reading of
the whole stream gives: the same servers, problems, places and document indices, or the whole is read instead."""

from __future__ import annotations

import json
import re

import pytest

from vramlint import scan
from vramlint.yamlload import load_each

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm-{i}
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "{len}"]
          resources:
            limits:
              nvidia.com/gpu: "1"
"""

RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: vllm-runtime-{i}
spec:
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.9.2
      args: ["--model", "/mnt/models", "--max-model-len", "2048"]
"""


def _documents(n: int) -> list[str]:
    """Documents of several kinds, some of which the loader says something of or leaves to ruamel."""
    docs = []
    for i in range(n):
        doc = DEPLOYMENT.format(i=i, len=1024 + i)
        if i % 97 == 5:
            doc = doc.replace("  name: llm-", "  name: dup\n  name: llm-", 1)  # a duplicate key (a warning)
        if i % 89 == 7:
            doc = doc.replace('"1"\n', '"1"\n      huge: 1e999\n', 1)  # a number past float64 (a warning)
        if i % 83 == 11:
            doc = doc.replace("kind: Deployment", "kind: !!str Deployment", 1)  # a tag: read by ruamel
        if i % 71 == 13:
            doc = RUNTIME.format(i=i)
        if i % 61 == 17:
            doc = ""  # an empty document (`---` then `---`)
        if i % 53 == 19:
            doc = doc + "  # a comment\ndata: |\n  ---not a marker\n   ---\n"  # text with dashes inside a scalar
        docs.append(doc)
    return docs


def _stream(n: int) -> str:
    return "# a comment before the first document\n" + "".join("---\n" + d for d in _documents(n))


def _projection(read) -> list:
    outcomes, kept, problems = read
    out: list = [("kept", kept if not isinstance(kept, list) else [d.index for d in kept])]
    # (said in file order: vramlint.scan._add_stream)
    out += sorted(("load", p.line or 0, p.column or 0, p.level, p.message) for p in problems)
    for rec, problem in outcomes:
        if problem is not None:
            out.append(("doc problem", problem.line, problem.message))
            continue
        for s in rec.servers:
            out.append(("server", s.name, s.model, s.location.line, s.location.column, json.dumps(s.args, default=str),
                        s.image, s.vllm_version, [(n.line, n.message) for n in rec.problems]))
        for rt in rec.runtimes:
            out.append(("runtime", rt.name, rt.doc.index, rt.doc.lines is not None and len(rt.doc.lines)))
    return out


def _whole(text: str):
    return scan._read_stream("d.yaml", ".", lambda each, restart: load_each(text, "d.yaml", each, restart))


def test_cuts_are_made_only_where_a_document_starts():
    text = _stream(300)
    pieces = scan._stream_pieces(text, 3)
    assert pieces is not None and len(pieces) == 3
    lines = text.split("\n")
    for start, _end, first_line, first_doc in pieces:
        assert start == 0 or text[start:start + 4] == "---\n"
        assert start == 0 or text[start - 1] == "\n"
        assert text[:start].count("\n") == first_line
        assert lines[first_line] == ("---" if start else lines[0])
        assert first_doc == len(re.findall("^---$", text[:start], re.M))  # one per `---` (the head is a comment)
    assert pieces[-1][1] == len(text)
    # a stream whose document count the cut would have to guess is not cut
    assert scan._stream_pieces("%YAML 1.2\n" + text, 3) is None
    assert scan._stream_pieces(text.replace("---\n", "...\n---\n", 40), 3) is None
    assert scan._stream_pieces("a: 1\n", 3) is None
    # nor one whose lines libyaml counts otherwise than its LFs: a piece is padded to its first line by LFs
    for brk in ("\r", "\x85", "\u2028", "\u2029"):
        assert scan._stream_pieces(text.replace("kind: Deployment\n", f"kind: Deployment{brk}", 1), 3) is None
    crlf = text.replace("\n", "\r\n")
    assert scan._stream_pieces(crlf, 3) is not None
    assert _projection(scan._read_pieces(crlf, "d.yaml", ".", scan._stream_pieces(crlf, 3))) == \
        _projection(_whole(crlf))


def test_a_head_document_without_a_start_marker_counts():
    text = "a: 1\n" + "".join("---\n" + d for d in _documents(60))
    pieces = scan._stream_pieces(text, 2)
    assert pieces is not None
    start = pieces[1][0]
    assert pieces[1][3] == len(re.findall("^---$", text[:start], re.M)) + 1  # the head document, one per `---`


@pytest.mark.parametrize("count", [2, 3, 5])
def test_read_in_pieces_is_read_whole(count):
    text = _stream(400)
    pieces = scan._stream_pieces(text, count)
    assert pieces is not None and len(pieces) == count
    together = scan._read_pieces(text, "d.yaml", ".", pieces)
    assert together is not None
    whole = _whole(text)
    assert _projection(together) == _projection(whole)
    kinds = {p[0] for p in _projection(whole)}
    assert {"server", "runtime", "load"} <= kinds  # the stream has what the comparison is about
    assert any("duplicate key" in p[4] for p in _projection(whole) if p[0] == "load")


def test_invalid_yaml_before_the_last_piece_reads_the_file_whole():
    docs = _documents(300)
    docs[20] = docs[20].replace("metadata:\n", "metadata: [unclosed\n", 1)
    text = "".join("---\n" + d for d in docs)
    pieces = scan._stream_pieces(text, 3)
    assert pieces is not None and pieces[1][0] > text.index("[unclosed")
    assert scan._read_pieces(text, "d.yaml", ".", pieces) is None  # the whole stream stops there: read it whole
    # in the last piece, what comes after it is read by neither
    docs = _documents(300)
    docs[-2] = docs[-2].replace("metadata:\n", "metadata: [unclosed\n", 1)
    text = "".join("---\n" + d for d in docs)
    pieces = scan._stream_pieces(text, 3)
    assert _projection(scan._read_pieces(text, "d.yaml", ".", pieces)) == _projection(_whole(text))


def test_more_numbers_than_a_file_says_one_by_one_read_whole():
    docs = [DEPLOYMENT.format(i=i, len=2048).replace('"1"\n', '"1"\n      huge: 1e999\n', 1) for i in range(60)]
    text = "".join("---\n" + d for d in docs)
    pieces = scan._stream_pieces(text, 2)
    assert scan._read_pieces(text, "d.yaml", ".", pieces) is None  # folded once in a file: counted over the whole


def test_a_stream_that_gives_nothing_says_why_once(tmp_path, monkeypatch):
    # documents that mention vLLM and give no server: the note on the first mention, as when read whole
    doc = "apiVersion: v1\nkind: Foo\nmetadata:\n  name: s{i}\nspec:\n  image: vllm/vllm-openai:v0.9.2\n"
    text = "".join("---\n" + doc.format(i=i) for i in range(200))
    (tmp_path / "d.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(scan, "PARALLEL_STREAM_FROM", 1)
    monkeypatch.setattr(scan, "STREAM_FROM_CHARS", 1)
    # cores for the pieces of a stream (asked as for PARALLEL_FROM files), not for the one file
    monkeypatch.setattr(scan, "_worker_count", lambda files: 2 if files >= scan.PARALLEL_FROM else 1)
    used = []
    real = scan._read_pieces
    monkeypatch.setattr(scan, "_read_pieces", lambda *args: used.append(1) or real(*args))
    cut = scan.scan(["d.yaml"])
    assert used == [1]
    monkeypatch.setattr(scan, "PARALLEL_STREAM_FROM", 1 << 40)
    whole = scan.scan(["d.yaml"])
    said = [(p.line, p.level, p.message) for p in cut.problems]
    assert said == [(p.line, p.level, p.message) for p in whole.problems]
    assert len(said) == 1 and said[0][1] == "note" and said[0][0] == 7 and "shape is not one" in said[0][2]


def test_check_reports_the_same_with_and_without_pieces(tmp_path, monkeypatch, capsys):
    from vramlint import cli

    text = _stream(500)
    (tmp_path / "d.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    used = []
    real = scan._read_pieces

    def counted(*args):
        got = real(*args)
        used.append(got is not None)
        return got

    monkeypatch.setattr(scan, "_read_pieces", counted)
    monkeypatch.setattr(scan, "STREAM_FROM_CHARS", 1)
    monkeypatch.setattr(scan, "PARALLEL_STREAM_FROM", 1)
    monkeypatch.setattr(scan, "_worker_count", lambda files: 3 if files >= scan.PARALLEL_FROM else 1)
    reports = []
    for _ in range(2):
        code = cli.main(["check", ".", "--offline", "--output-format", "json"])
        reports.append((code, capsys.readouterr().out))
        monkeypatch.setattr(scan, "PARALLEL_STREAM_FROM", 1 << 40)
    assert used == [True]  # the first run read it in pieces, the second whole
    assert reports[0] == reports[1]
    report = json.loads(reports[0][1])
    assert len(report["servers"]) > 350


def _dies(k):
    import os

    os._exit(9)  # as when the kernel kills a worker for its memory


def test_a_worker_that_dies_leaves_the_stream_to_be_read_whole(monkeypatch):
    text = _stream(200)
    monkeypatch.setattr(scan, "_read_piece_job", _dies)
    assert scan._read_pieces(text, "d.yaml", ".", scan._stream_pieces(text, 2)) is None  # not a wait for ever
    assert scan._STREAM_JOB == []


def test_a_stream_of_documents_the_join_keeps_is_read_whole_by_default(monkeypatch):
    monkeypatch.setattr(scan, "PARALLEL_STREAM_FROM", 1)
    monkeypatch.setattr(scan, "_worker_count", lambda files: 2)
    deployments = _stream(200)
    assert scan._stream_pieces(deployments) is not None
    runtimes = "".join("---\n" + RUNTIME.format(i=i) for i in range(200))
    assert scan._stream_pieces(runtimes) is None  # sent back whole and joined here: no faster in pieces
    assert scan._stream_pieces(runtimes, 2) is not None  # (asked for, it is cut all the same)
