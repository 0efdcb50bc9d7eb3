"""A large stream of documents is read, extracted and reported a document (a server) at a time: its memory does not
grow with the documents held at once, and the JSON report is the same text json.dumps writes."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.test_hostile_bounds import ROOT, deployment, write

QWEN = ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]


def _peak_mb_of_check(folder, *extra: str) -> tuple[float, str]:
    """The largest resident size of one `vramlint check` process (measured by a parent of its own, so that no
    other test's process counts), and its standard output."""
    code = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "sys.stderr.write(p.stderr); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
            "print(p.stdout, end='')")
    proc = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "vramlint", "check", ".", "--offline",
                           *extra], cwd=folder, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    peak_kb, _, out = proc.stdout.partition("\n")
    return int(peak_kb) / 1024, out


def test_four_thousand_deployments_are_never_held_at_once(tmp_path):
    one = deployment(QWEN)
    write(tmp_path, {"d.yaml": "---\n".join(one.replace("name: llm", f"name: llm-{i}") for i in range(4000))})
    peak, out = _peak_mb_of_check(tmp_path, "--output-format", "json", "--output-file", str(tmp_path / "r.json"))
    # 124 MB before (the 4,000 documents built before the first was read, the report's dicts and text held whole);
    # 64 MB now
    assert peak < 95
    text = (tmp_path / "r.json").read_text(encoding="utf-8")
    report = json.loads(text)
    assert len(report["servers"]) == 4000 and report["servers"][-1]["name"] == "llm-3999"
    assert report["servers"][0]["budget"] == report["servers"][-1]["budget"] is not None
    assert text == json.dumps(report, indent=2) + "\n"  # written a server at a time, the same text


def test_a_stream_with_a_document_only_ruamel_reads_is_read_whole_the_same(tmp_path):
    # a date (a timestamp, left to ruamel's load) in the last document: the documents already extracted one at a
    # time are forgotten and the file is read by ruamel's load, once
    one = deployment(QWEN)
    docs = [one.replace("name: llm", f"name: llm-{i}") for i in range(2500)]
    docs[-1] = docs[-1].replace("metadata:\n", "metadata:\n  annotations: {since: 2024-01-02}\n", 1)
    write(tmp_path, {"d.yaml": "---\n".join(docs)})
    assert len("---\n".join(docs)) > 1 << 20  # read a document at a time (vramlint.scan.STREAM_FROM_CHARS)
    _, out = _peak_mb_of_check(tmp_path, "--format", "json")
    report = json.loads(out)
    assert [s["name"] for s in report["servers"]] == [f"llm-{i}" for i in range(2500)]
