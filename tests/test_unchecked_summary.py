"""Servers left without a budget are said once per cause, with the fix, in every output format; no advice is
repeated server by server."""

from __future__ import annotations

import json

import pytest

from vramlint.cli import main

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "{model}", "--max-model-len", "{length}"]
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deploy").mkdir()
    servers = [("a", "Qwen/Qwen2.5-7B-Instruct", 8192), ("b", "meta-llama/Llama-3.1-8B-Instruct", 16384),
               ("c", "Qwen/Qwen2.5-7B-Instruct", 4096), ("d", "/models/finetune", 4096)]
    for name, model, length in servers:
        (tmp_path / "deploy" / f"{name}.yaml").write_text(DEPLOY.format(name=name, model=model, length=length))
    return tmp_path


def _run(capsys, *args) -> str:
    code = main(["check", "deploy", "--offline", *args])
    assert code in (0, 1)
    return capsys.readouterr().out


def test_json_has_the_causes_once_and_each_server_a_budget_or_requirement(repo, capsys):
    doc = json.loads(_run(capsys, "--output-format", "json"))
    causes = {g["cause"]: g for g in doc["summary"]["unchecked"]}
    assert causes["gpu-not-said"]["count"] == 4 and causes["gpu-not-said"]["gpu_requirement"] == 3
    assert causes["model-path"]["items"] == ["/models/finetune"]
    assert all("gpu:" in g["fix"] or "model-aliases" in g["fix"] for g in causes.values())
    sized = [s for s in doc["servers"] if s.get("gpu_requirement")]
    assert len(sized) == 3 and all(s["budget"] is None for s in sized)
    assert {"min_total_gib", "fits", "does_not_fit"} <= set(sized[0]["gpu_requirement"])
    messages = [f["message"] for f in doc["findings"]]
    assert len(messages) == len(set(messages)), "a message repeated on several servers"
    assert not any("gpu:" in m for m in messages), "the fix for an unnamed GPU is said once, not per server"


def test_text_sarif_markdown_github_say_each_cause_once(repo, capsys):
    text = _run(capsys)
    assert text.count("do not say their GPU") == 1 and "Servers without a memory budget (4), by cause:" in text
    sarif = json.loads(_run(capsys, "--output-format", "sarif"))
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    gpu = [n for n in notes if "do not say their GPU" in n["message"]["text"]]
    assert len(gpu) == 1 and len(gpu[0]["locations"]) == 4 and gpu[0]["associatedRule"]["id"] == "VRL010"
    assert _run(capsys, "--output-format", "markdown").count("do not say their GPU") == 1
    github = _run(capsys, "--output-format", "github")
    assert github.count("do not say their GPU") == 1 and "::notice title=vramlint%3A memory not checked::" in github


def test_naming_the_gpu_removes_the_cause(repo, capsys):
    doc = json.loads(_run(capsys, "--output-format", "json", "--gpu", "L40S"))
    assert [g["cause"] for g in doc["summary"]["unchecked"]] == ["model-path"]
    assert sum(1 for s in doc["servers"] if s["budget"]) == 3


def test_ignoring_vrl010_leaves_the_summary_out(repo, capsys):
    doc = json.loads(_run(capsys, "--output-format", "json", "--ignore", "VRL010"))
    assert doc["summary"]["unchecked"] == []
