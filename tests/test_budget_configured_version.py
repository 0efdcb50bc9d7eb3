"""The vLLM version the user configures drives argument parsing too, not only the budget.

A server whose image tag does not say its vLLM version (`:latest`) is read with the version set by
`vllm-version` (top level or a per-path override) or `--vllm-version`; the image tag wins when it says one.
"""

from __future__ import annotations

import json

import pytest

from tests._check_util import by_rule, run_json
from vramlint.cli import main
from vramlint.versions import DEFAULT_VERSION

# `--use-v2-block-manager` exists in vLLM 0.4.3 to 0.9.2 and no longer in the newest release.
OLD_FLAG_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
        - name: vllm
          image: {image}
          args: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len", "4096", "--use-v2-block-manager"]
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""

# `vllm serve ... --model X`: vLLM 0.8.3 to 0.11.0 refuse the `--model` option with `vllm serve`.
SERVE_MODEL_FLAG = """\
apiVersion: v1
kind: Pod
metadata: {name: chat}
spec:
  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
  containers:
    - name: vllm
      image: vllm/vllm-openai:latest
      command: ["vllm", "serve"]
      args: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len", "4096"]
      resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _vrl009(capsys, *argv):
    _, doc = run_json(capsys, "deploy", "--select", "VRL009", *argv, test_rules=False)
    return by_rule(doc["findings"], "VRL009")


def test_old_flag_on_latest_is_an_error_without_a_configured_version(repo, capsys):
    # vLLM's own `:latest` runs the newest release, which has no --use-v2-block-manager
    (repo / "deploy" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:latest"))
    [finding] = _vrl009(capsys)
    assert "--use-v2-block-manager" in finding["message"] and finding["level"] == "error"


def test_old_flag_on_an_image_of_unknown_version_is_a_warning(repo, capsys):
    (repo / "deploy" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="registry.example.com/vllm:prod"))
    [finding] = _vrl009(capsys)
    assert "--use-v2-block-manager" in finding["message"] and finding["level"] == "warning"


def test_configured_version_reads_the_flag_as_known(repo, capsys):
    (repo / "deploy" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:latest"))
    (repo / ".vramlint.yaml").write_text("vllm-version: 0.8.5\n")
    assert _vrl009(capsys) == []


def test_flag_reads_the_flag_as_known(repo, capsys):
    (repo / "deploy" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:latest"))
    assert _vrl009(capsys, "--vllm-version", "0.8.5") == []
    # a configured version that no longer has the flag: an error (the version is known, not assumed)
    [finding] = _vrl009(capsys, "--vllm-version", "0.10.0")
    assert finding["level"] == "error" and "vLLM 0.10.0 (set in the configuration)" in finding["message"]


def test_image_tag_wins_over_the_configured_version(repo, capsys):
    (repo / "deploy" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:v0.10.2"))
    (repo / ".vramlint.yaml").write_text("vllm-version: 0.8.5\n")
    [finding] = _vrl009(capsys)
    assert finding["level"] == "error" and "vLLM 0.10.2 (from the image tag)" in finding["message"]


def test_per_path_override_wins_over_the_top_level(repo, capsys):
    (repo / "deploy" / "old").mkdir()
    (repo / "deploy" / "old" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:latest"))
    (repo / "deploy" / "new.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:latest"))
    (repo / ".vramlint.yaml").write_text(
        "vllm-version: 0.11.0\noverrides:\n  - files: [deploy/old/**]\n    vllm-version: 0.8.5\n")
    findings = _vrl009(capsys)
    assert [(f["file"], f["level"]) for f in findings] == [("deploy/new.yaml", "error")]
    assert "vLLM 0.11.0" in findings[0]["message"]


def test_start_up_rejections_follow_the_configured_version(repo, capsys):
    (repo / "deploy" / "pod.yaml").write_text(SERVE_MODEL_FLAG)
    _, doc = run_json(capsys, "deploy", "--select", "VRL005", test_rules=False)
    assert by_rule(doc["findings"], "VRL005") == []  # the newest vLLM takes --model with `vllm serve`
    (repo / ".vramlint.yaml").write_text("vllm-version: 0.8.5\n")
    _, doc = run_json(capsys, "deploy", "--select", "VRL005", test_rules=False)
    [finding] = by_rule(doc["findings"], "VRL005")
    assert finding["level"] == "error" and "vLLM 0.8.5 will not start" in finding["message"]
    assert "positional argument" in finding["message"] and finding["line"] == 10


def test_inventory_reads_arguments_with_the_configured_version(repo, capsys):
    (repo / "deploy" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:latest"))
    assert main(["inventory", "deploy", "--format", "json"]) == 0
    [server] = json.loads(capsys.readouterr().out)["servers"]
    assert "--use-v2-block-manager" in server["unknown_args"]
    (repo / ".vramlint.yaml").write_text("vllm-version: 0.8.5\n")
    assert main(["inventory", "deploy", "--format", "json"]) == 0
    [server] = json.loads(capsys.readouterr().out)["servers"]
    assert server["unknown_args"] == {} and server["args"]["use_v2_block_manager"] is True


def test_explain_command_line_is_read_with_the_given_version(repo, capsys):
    argv = ["explain", "--gpu", "L4", "--offline", "--format", "json"]
    words = ["--", "vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct", "--use-v2-block-manager"]
    assert main(argv + words) == 0
    assert "--use-v2-block-manager" in json.loads(capsys.readouterr().out)["servers"][0]["unknown_args"]
    assert main(argv + ["--vllm-version", "0.8.5"] + words) == 0
    assert json.loads(capsys.readouterr().out)["servers"][0]["unknown_args"] == {}


@pytest.mark.parametrize(("flag", "config", "expected"), [
    (None, None, "(latest tag)"),
    ("0.8.5", None, "(--vllm-version)"),
    (None, "vllm-version: 0.8.5\n", "(configuration (.vramlint.yaml))"),
    ("0.9.2", "vllm-version: 0.8.5\n", "vLLM 0.9.2 (--vllm-version)"),
])
def test_explain_says_where_the_version_came_from(repo, capsys, flag, config, expected):
    (repo / "deploy" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:latest"))
    if config:
        (repo / ".vramlint.yaml").write_text(config)
    argv = ["explain", "deploy", "--offline"] + (["--vllm-version", flag] if flag else [])
    assert main(argv) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert expected in header


def test_explain_says_image_tag(repo, capsys):
    (repo / "deploy" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:v0.9.2"))
    (repo / ".vramlint.yaml").write_text("vllm-version: 0.8.5\n")
    assert main(["explain", "deploy", "--offline"]) == 0
    assert "vLLM 0.9.2 (image tag)" in capsys.readouterr().out


def test_the_flag_wins_over_a_matching_override(repo, capsys):
    (repo / "deploy" / "old").mkdir()
    (repo / "deploy" / "old" / "chat.yaml").write_text(OLD_FLAG_DEPLOYMENT.format(image="vllm/vllm-openai:latest"))
    (repo / ".vramlint.yaml").write_text("overrides:\n  - files: [deploy/old/**]\n    vllm-version: 0.8.5\n")
    assert _vrl009(capsys) == []  # the override: 0.8.5 knows the flag
    [finding] = _vrl009(capsys, "--vllm-version", "0.10.0")
    assert "vLLM 0.10.0 (set in the configuration)" in finding["message"]


def test_explain_applies_the_overrides_of_each_file(repo, capsys):
    """explain gives each server the GPU and version of the overrides matching its file, as check does."""
    (repo / "deploy" / "old").mkdir()
    unlabelled = OLD_FLAG_DEPLOYMENT.replace("      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}\n", "")
    (repo / "deploy" / "old" / "chat.yaml").write_text(unlabelled.format(image="vllm/vllm-openai:latest"))
    (repo / "deploy" / "new.yaml").write_text(unlabelled.format(image="vllm/vllm-openai:latest"))
    (repo / ".vramlint.yaml").write_text(
        "gpu: L4\noverrides:\n  - files: [deploy/old/**]\n    gpu: T4\n    vllm-version: 0.8.5\n")
    assert main(["explain", "deploy", "--offline", "--format", "json"]) == 0
    budgets = {s["file"]: s["budget"] for s in json.loads(capsys.readouterr().out)["servers"]}
    assert budgets["deploy/old/chat.yaml"]["gpu"] == "T4" and budgets["deploy/old/chat.yaml"]["vllm_version"] == "0.8.5"
    assert budgets["deploy/new.yaml"]["gpu"] == "L4" and budgets["deploy/new.yaml"]["vllm_version"] == DEFAULT_VERSION
    # a flag wins over the file and its overrides
    assert main(["explain", "deploy", "--offline", "--format", "json", "--gpu", "A10G"]) == 0
    budgets = {s["file"]: s["budget"] for s in json.loads(capsys.readouterr().out)["servers"]}
    assert {b["gpu"] for b in budgets.values()} == {"A10G"}
