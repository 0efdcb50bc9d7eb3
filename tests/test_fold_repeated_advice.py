"""Identical advice is said once a run (vramlint.fold): one finding naming every place, while a per-line
defect stays on each of its lines and each file's reason stays in JSON `problems`."""

from __future__ import annotations

import json
from pathlib import Path

from vramlint.cli import main

# A benchmark harness's config: `engine: vllm` in a shape vramlint does not read (no pod spec, no command line).
BENCH = "{pad}engine: vllm\nmodel: org/bench-model-{n}\nrequests: 64\nconcurrency: {n}\n"

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: server-{n}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-L4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--max-seq-len-to-capture", "4096"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def _check(capsys, path: Path, fmt: str = "json") -> dict:
    capsys.readouterr()
    main(["check", str(path), "--offline", "--format", fmt, "--exit-zero"])
    return json.loads(capsys.readouterr().out)


def _bench_repo(tmp_path: Path, count: int) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "configs").mkdir()
    for n in range(count):  # the mention on line 1, 2, 3...: the texts differ only by where they say it
        (root / "configs" / f"run{n}.yaml").write_text(BENCH.format(n=n, pad="# run\n" * n))
    return root


def _unread(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == "VRL102" and "no vLLM server could be read" in f["message"]]


def test_one_finding_names_every_file_and_each_file_keeps_its_reason(tmp_path, capsys):
    root = _bench_repo(tmp_path, 4)
    report = _check(capsys, root)
    unread = _unread(report)
    assert len(unread) == 1, [f["message"] for f in unread]
    message = unread[0]["message"]
    assert "said once for 4 files" in message
    files = {f"run{n}.yaml" for n in range(4)}
    assert all(name in message for name in files)
    related = {Path(r["file"]).name for r in unread[0]["related_locations"]}
    assert related | {Path(unread[0]["file"]).name} == files and len(related) == 3
    # the line each file says it on is gone from the shared text, and kept per file in `problems`
    assert "at line" not in message
    problems = [p for p in report["problems"] if "no vLLM server could be read" in p["message"]]
    assert sorted(Path(p["file"]).name for p in problems) == sorted(files)
    assert {p["line"] for p in problems} == {1, 2, 3, 4}
    assert all("advice" not in p for p in problems)


def test_sarif_carries_the_other_files_as_related_locations(tmp_path, capsys):
    root = _bench_repo(tmp_path, 3)
    sarif = _check(capsys, root, "sarif")
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "VRL102"]
    assert len(results) == 1
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for loc in results[0]["relatedLocations"]}
    assert len(uris) == 2 and all(u.endswith(".yaml") for u in uris)


def test_a_single_file_is_said_as_before(tmp_path, capsys):
    root = _bench_repo(tmp_path, 1)
    unread = _unread(_check(capsys, root))
    assert len(unread) == 1
    assert "said once" not in unread[0]["message"] and "at line 1 (engine: vllm)" in unread[0]["message"]
    assert "related_locations" not in unread[0]


def test_a_suppressed_place_is_neither_said_nor_named(tmp_path, capsys):
    root = _bench_repo(tmp_path, 3)
    quiet = root / "configs" / "run2.yaml"
    quiet.write_text(quiet.read_text().replace("engine: vllm", "engine: vllm  # vramlint: ignore[VRL102] not ours"))
    unread = _unread(_check(capsys, root))
    said = [f for f in unread if not f["suppressed"]]
    assert len(said) == 1
    assert "said once for 2 files" in said[0]["message"] and "run2.yaml" not in said[0]["message"]
    # the suppressed place keeps its own finding, marked suppressed, as any suppression does
    assert [Path(f["file"]).name for f in unread if f["suppressed"]] == ["run2.yaml"]


def test_a_per_line_defect_stays_on_each_line(tmp_path, capsys):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for n in range(3):
        (root / f"server{n}.yaml").write_text(DEPLOYMENT.format(n=n))
    report = _check(capsys, root)
    refused = [f for f in report["findings"] if f["rule"] == "VRL009" and "--max-seq-len-to-capture" in f["message"]]
    assert sorted(Path(f["file"]).name for f in refused) == ["server0.yaml", "server1.yaml", "server2.yaml"]
    assert not any("said once" in f["message"] for f in refused)


# --- findings a rule marks shared: an unknown said once for the servers that share it -----------------------------

# Shaped like copies of one demo across a repository: the image is vLLM's `latest`-less build of a fork, so the
# version is assumed, and each copy passes a flag some releases have; and each asks for TP 2 without /dev/shm.
SHARED = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: demo-{n}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-L4
      containers:
        - name: vllm
          image: registry.example/team/vllm-build:nightly
          command: ["vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct", "--swap-space", "4", "--tensor-parallel-size", "2"]
          resources:
            limits:
              nvidia.com/gpu: 2
"""


def test_an_assumed_version_unknown_is_said_once_with_the_other_servers_and_their_edits(tmp_path, capsys):
    for n in range(3):
        (tmp_path / f"demo-{n}.yaml").write_text(SHARED.format(n=n))
    report = _check(capsys, tmp_path)
    swap = [f for f in report["findings"] if f["rule"] == "VRL009" and "--swap-space" in f["message"]]
    assert len(swap) == 1 and swap[0]["level"] == "warning"
    assert "(and 2 more servers: " in swap[0]["message"]
    assert sorted(r["file"].rsplit("/", 1)[-1] for r in swap[0]["related_locations"]) == ["demo-1.yaml", "demo-2.yaml"]
    # the fix removes the flag at every place it names
    assert sorted({e["file"].rsplit("/", 1)[-1] for e in swap[0]["fix"]["edits"]}) == [
        "demo-0.yaml", "demo-1.yaml", "demo-2.yaml"]
    # a /dev/shm too small is a defect of each Deployment: one finding each
    shm = [f for f in report["findings"] if f["rule"] == "VRL008"]
    assert len(shm) == 3


def test_a_shared_unknown_the_version_removes_is_not_said(tmp_path, capsys):
    # with the version known (vLLM 0.11.0 accepts --swap-space) nothing is assumed, so there is nothing to fold
    for n in range(2):
        (tmp_path / f"demo-{n}.yaml").write_text(SHARED.format(n=n).replace(
            "registry.example/team/vllm-build:nightly", "vllm/vllm-openai:v0.11.0"))
    report = _check(capsys, tmp_path)
    assert not [f for f in report["findings"] if f["rule"] == "VRL009"]
