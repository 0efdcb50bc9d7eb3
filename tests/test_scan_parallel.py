"""Many files are read and extracted by a pool of processes, with the same output as one process: every server,
finding and position, and the cross-file joins (a KServe InferenceService and its runtime in other chunks, a
`--config` ConfigMap in another file); one file never starts a pool."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import vramlint.scan as scan

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "examples", ROOT / "tests" / "fixtures" / "kubernetes", ROOT / "tests" / "fixtures" / "operators",
           ROOT / "tests" / "fixtures" / "compose"]


def _report(capsys, path: Path) -> dict:
    from vramlint.cli import main

    main(["check", str(path), "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    report.pop("run", None)
    return report


@pytest.mark.skipif(sys.platform == "win32", reason="no fork")
def test_a_pool_gives_what_one_process_gives(tmp_path, capsys, monkeypatch):
    for i, source in enumerate(SOURCES):
        shutil.copytree(source, tmp_path / f"{i}-{source.name}")
    files = [p for p in tmp_path.rglob("*") if p.suffix in (".yaml", ".yml")]
    monkeypatch.setattr(scan, "CHUNK_FILES", 2)  # pieces of one join land in different chunks
    monkeypatch.setattr(scan, "PARALLEL_FROM", 2)
    monkeypatch.setattr(scan, "_worker_count", lambda files: 2)
    pooled = []
    real_add = scan._add_chunk
    monkeypatch.setattr(scan, "_add_chunk", lambda col, part: (pooled.append(part), real_add(col, part)))
    parallel = _report(capsys, tmp_path)
    assert len(pooled) >= len(files) // 2  # the chunks came from the pool
    monkeypatch.setattr(scan, "_worker_count", lambda files: 1)
    single = _report(capsys, tmp_path)
    assert parallel == single
    assert any(s["kind"] == "InferenceService" for s in single["servers"])  # a join across files


def test_one_file_or_a_few_never_start_a_pool():
    assert scan._worker_count(1) == 1
    assert scan._worker_count(scan.PARALLEL_FROM - 1) == 1


def _dies_in_a_worker(job):
    import os

    os._exit(9)  # as when the kernel kills a worker for its memory


def test_a_scan_whose_worker_dies_reads_its_files_here(tmp_path, monkeypatch):
    from vramlint import scan

    for i in range(scan.PARALLEL_FROM + 10):
        (tmp_path / f"d{i}.yaml").write_text(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i}\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.9.2\n"
            '          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]\n', encoding="utf-8")
    monkeypatch.setattr(scan, "_worker_count", lambda files: 2)
    monkeypatch.setattr(scan, "_scan_chunk", _dies_in_a_worker)
    inventory = scan.scan([str(tmp_path)])  # not a wait for ever on the chunk the dead worker had
    assert len(inventory.servers) == scan.PARALLEL_FROM + 10
