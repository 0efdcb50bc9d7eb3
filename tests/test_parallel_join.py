"""Steps spread over cores by forked workers (vramlint.parallel): the same results in the same order as one
process, and one process again when a worker fails or dies; KServe's join of thousands of InferenceServices."""

from __future__ import annotations

import json
import os

import pytest

from vramlint import parallel, scan
from vramlint.extract import kserve

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked")


def _squares(chunk):
    return [x * x for x in chunk]


@needs_fork
def test_chunks_come_back_in_order(monkeypatch):
    monkeypatch.setattr(parallel, "cores", lambda: 3)
    items = list(range(1000))
    assert parallel.map_chunks(_squares, items, 10) == [x * x for x in items]
    assert parallel.map_chunks(_squares, items, 5000) is None  # too few to be worth a fork
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    assert parallel.map_chunks(_squares, items, 10) is None


def _fails_in_a_worker(chunk):
    if parallel.IN_WORKER[0]:
        raise ValueError("a worker's failure")
    return list(chunk)


def _dies_in_a_worker(chunk):
    if parallel.IN_WORKER[0]:
        os._exit(9)  # as when the kernel kills it for its memory
    return list(chunk)


@needs_fork
@pytest.mark.parametrize("fn", [_fails_in_a_worker, _dies_in_a_worker])
def test_a_worker_that_fails_or_dies_leaves_it_to_the_caller(monkeypatch, fn):
    monkeypatch.setattr(parallel, "cores", lambda: 2)
    assert parallel.map_chunks(fn, list(range(100)), 10) is None
    assert parallel.IN_WORKER == [False]


def test_no_workers_from_a_worker_or_beside_other_threads(monkeypatch):
    import threading

    monkeypatch.setattr(parallel, "IN_WORKER", [True])
    assert parallel.cores() == 1
    monkeypatch.setattr(parallel, "IN_WORKER", [False])
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert parallel.cores() == 1  # a fork would copy the other thread's held locks
    finally:
        stop.set()
        thread.join()


RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: vllm-{i}
spec:
  supportedModelFormats:
    - name: fmt-{i}
      autoSelect: true
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.9.2
      args: ["--model", "/mnt/models", "--max-model-len", "{len}"]
      resources:
        limits:
          nvidia.com/gpu: "1"
"""

ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: isvc-{i}
spec:
  predictor:
    nodeSelector:
      cloud.google.com/gke-accelerator: nvidia-l4
    model:
{how}
      storageUri: hf://Qwen/Qwen2.5-1.5B-Instruct
      args: ["--max-model-len", "{len}"]
      resources:
        limits:
          nvidia.com/gpu: "1"
"""


def _pairs(n: int) -> str:
    docs = [RUNTIME.format(i=i, len=1024 + i) for i in range(0, n, 3)]  # a runtime for a third of them
    for i in range(n):
        how = (f"      runtime: vllm-{i - i % 3}" if i % 4 == 0 else
               f"      modelFormat:\n        name: fmt-{i - i % 3}" if i % 4 == 1 else
               "      modelFormat:\n        name: huggingface" if i % 4 == 2 else
               "      runtime: vllm-missing")
        docs.append(ISVC.format(i=i, how=how, len=2048 + i))
    return "".join("---\n" + d for d in docs)


def _servers(inventory) -> list:
    return [(s.kind, s.name, s.file, s.location.line, s.model, json.dumps(s.args, default=str), s.image,
             s.notes, None if s.gpu is None else (s.gpu.count, s.gpu.type)) for s in inventory.servers]


@needs_fork
def test_kserve_joined_by_workers_is_joined_here(tmp_path, monkeypatch):
    (tmp_path / "pairs.yaml").write_text(_pairs(90), encoding="utf-8")
    (tmp_path / "more.yaml").write_text(_pairs(30).replace("isvc-", "other-"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(kserve, "PARALLEL_JOIN_FROM", 1 << 30)
    here = scan.scan(["."])
    joined = []
    real = parallel.map_chunks

    def counted(*args):
        got = real(*args)
        joined.append(got is not None)
        return got

    monkeypatch.setattr(parallel, "map_chunks", counted)
    monkeypatch.setattr(parallel, "cores", lambda: 3)
    monkeypatch.setattr(kserve, "PARALLEL_JOIN_FROM", 10)
    apart = scan.scan(["."])
    assert joined == [True]
    assert _servers(apart) == _servers(here)
    assert [(p.file, p.line, p.message) for p in apart.problems] == [(p.file, p.line, p.message) for p in here.problems]
    # what the comparison is about: InferenceServices on a runtime named, on one a format selects, on KServe's
    # Hugging Face runtime and on a runtime not in the files; and runtimes no InferenceService uses, which are
    # servers of their own
    notes = " ".join(n for s in here.servers for n in s.notes)
    assert "Hugging Face runtime" in notes and "'vllm-missing' is not among the scanned files" in notes
    assert sum(s.kind == "InferenceService" for s in here.servers) == 120
    assert any(s.kind == "ServingRuntime" for s in here.servers)
