"""GPUs outside the catalog declared in the configuration (`custom-gpus`), through the real command line: `--gpu`
and `gpu:` name them, node selectors and affinities on their labels resolve to them, their compute capability
decides what vLLM refuses as a catalog GPU's does, and a mistake in an entry is reported with its line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Memory as CUDA reports it for a 48 GB Turing card (7.5) and a 32 GB Blackwell one (12.0); the figures are the
# test's, what matters is that the budget uses them.
CONFIG = """\
custom-gpus:
  - name: Quadro-RTX-8000
    memory-gib: 44.5
    compute-capability: 7.5
    aliases: ["Quadro RTX 8000"]
    node-labels:
      nvidia.com/gpu.product: Quadro-RTX-8000
  - name: RTX-PRO-4500
    memory-gib: 31.36
    compute-capability: "12.0"
    aliases: ["NVIDIA RTX PRO 4500 Blackwell"]
    node-labels:
      example.com/gpu-class: [pro4500, pro4500-spot]
"""


def deployment(name: str, scheduling: str, model: str = "meta-llama/Llama-3.1-8B-Instruct") -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
{scheduling}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model={model}", "--max-model-len=8192"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


SELECTOR = """      nodeSelector:
        example.com/gpu-class: pro4500"""
AFFINITY = """      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: example.com/gpu-class, operator: In, values: [pro4500-spot]}"""
PRODUCT = """      nodeSelector:
        nvidia.com/gpu.product: Quadro-RTX-8000"""
UNDECLARED = """      nodeSelector:
        example.com/gpu-class: something-else"""
COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}
"""


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()  # the configuration search stops here, as at a repository's root
    (tmp_path / ".vramlint.yaml").write_text(CONFIG, encoding="utf-8")
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / "selector.yaml").write_text(deployment("selector", SELECTOR), encoding="utf-8")
    (deploy / "affinity.yaml").write_text(deployment("affinity", AFFINITY), encoding="utf-8")
    (deploy / "product.yaml").write_text(deployment("product", PRODUCT), encoding="utf-8")
    (deploy / "undeclared.yaml").write_text(deployment("undeclared", UNDECLARED), encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    return tmp_path


def vramlint(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", NO_COLOR="1", PYTHONPATH=str(ROOT))
    env.pop("HF_TOKEN", None)
    return subprocess.run([sys.executable, "-m", "vramlint", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def explain(cwd: Path, *argv: str) -> dict[str, dict]:
    proc = vramlint(cwd, "explain", "--output-format", "json", *argv)
    assert proc.returncode == 0, proc.stderr
    return {s["file"]: s for s in json.loads(proc.stdout)["servers"]}


def test_node_selector_and_affinity_on_a_declared_label_resolve_to_the_custom_gpu(repo):
    servers = explain(repo, "deploy")
    for name in ("deploy/selector.yaml", "deploy/affinity.yaml"):
        budget = servers[name]["budget"]
        assert budget["gpu"] == "RTX-PRO-4500"
        assert budget["total_gib"] == 31.36
        assert budget["sources"]["total_gib"] == "custom-gpus, .vramlint.yaml:8"
        assert "compute capability not known" not in json.dumps(servers[name])
    assert servers["deploy/product.yaml"]["budget"]["gpu"] == "Quadro-RTX-8000"  # a catalog label key, a declared value
    # a value of the label that no entry declares names no GPU: the server says it has none, nothing is guessed
    assert servers["deploy/undeclared.yaml"]["budget"] is None


def test_gpu_flag_and_configuration_name_a_custom_gpu_by_name_or_alias(repo):
    for flag in ("RTX-PRO-4500", "NVIDIA RTX PRO 4500 Blackwell", "rtx-pro-4500"):
        budget = explain(repo, "compose.yaml", "--gpu", flag)["compose.yaml"]["budget"]
        assert (budget["gpu"], budget["total_gib"]) == ("RTX-PRO-4500", 31.36), flag
    (repo / ".vramlint.yaml").write_text(CONFIG + "gpu: Quadro-RTX-8000\n", encoding="utf-8")
    budget = explain(repo, "compose.yaml")["compose.yaml"]["budget"]
    assert (budget["gpu"], budget["total_gib"]) == ("Quadro-RTX-8000", 44.5)


def test_compute_capability_decides_what_vllm_refuses(repo):
    """bfloat16 on compute capability 7.5 is refused as on a T4 (with the alias CUDA prints in vLLM's message), and
    FlashAttention is not run there; on 12.0 both are fine."""
    (repo / "bf16.yaml").write_text(COMPOSE.replace('"8192"]', '"8192", "--dtype", "bfloat16"]'), encoding="utf-8")
    proc = vramlint(repo, "check", "bf16.yaml", "--gpu", "Quadro-RTX-8000", "--output-format", "json")
    assert proc.returncode == 1
    messages = {f["rule"]: f["message"] for f in json.loads(proc.stdout)["findings"]}
    assert "Your Quadro RTX 8000 GPU has compute capability 7.5" in messages["VRL005"]
    assert "compute capability 7.5" in messages["VRL004"]
    proc = vramlint(repo, "check", "bf16.yaml", "--gpu", "RTX-PRO-4500", "--output-format", "json")
    assert proc.returncode == 0, proc.stdout
    assert {f["rule"] for f in json.loads(proc.stdout)["findings"]} & {"VRL004", "VRL005"} == set()


def test_pyproject_table_declares_them_too(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.vramlint]\ngpu = "Lab-GPU"\n\n[[tool.vramlint.custom-gpus]]\nname = "Lab-GPU"\nmemory-gib = 22.0\n'
        'compute-capability = 8.9\n', encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    budget = explain(tmp_path, "compose.yaml")["compose.yaml"]["budget"]
    assert (budget["gpu"], budget["total_gib"]) == ("Lab-GPU", 22.0)
    assert budget["sources"]["total_gib"] == "custom-gpus, pyproject.toml:4"


@pytest.mark.parametrize(("entry", "message"), [
    ("  - name: Bad\n    memory-gib: 20\n    compute-capability: eight\n",
     ".vramlint.yaml:16:25: 'custom-gpus[2].compute-capability': 'eight' is not a compute capability"),
    ("  - name: Bad\n    memory-gib: -1\n    compute-capability: 8.0\n",
     ".vramlint.yaml:15:17: 'custom-gpus[2].memory-gib'"),
    ("  - name: Bad\n    compute-capability: 8.0\n", "'memory-gib' is required"),
    ("  - name: Bad\n    memory-gib: 20\n    compute-capability: 8.0\n    bf16: true\n",
     "unknown key 'bf16' in 'custom-gpus[2]'"),
    ("  - name: RTX-PRO-4500\n    memory-gib: 20\n    compute-capability: 8.0\n",
     ".vramlint.yaml:14: custom GPU 'RTX-PRO-4500' is declared again with other values (first at .vramlint.yaml:8)"),
])
def test_a_mistake_in_an_entry_is_a_configuration_error_with_its_line(repo, entry, message):
    (repo / ".vramlint.yaml").write_text(CONFIG + entry, encoding="utf-8")
    # named with --config (the user's own file): a usage error, on its line
    proc = vramlint(repo, "check", "compose.yaml", "--config", ".vramlint.yaml")
    assert proc.returncode == 2
    assert message in proc.stderr, proc.stderr
    # found in the tree (a pull request's): a VRL102 finding on that line, the run goes on with the defaults
    proc = vramlint(repo, "check", "compose.yaml")
    assert proc.returncode == 1, proc.stderr
    assert "VRL102 [error]" in proc.stdout and "this configuration file is not applied" in proc.stdout


def test_an_unknown_gpu_name_points_at_custom_gpus(repo):
    proc = vramlint(repo, "check", "compose.yaml", "--gpu", "Quadro-RTX-9000")
    assert proc.returncode == 2
    assert "custom-gpus" in proc.stderr


def test_a_nested_configuration_declares_gpus_for_its_folder_too(repo):
    team = repo / "team"
    team.mkdir()
    (team / ".vramlint.yaml").write_text(
        "gpu: Team-GPU\ncustom-gpus:\n  - {name: Team-GPU, memory-gib: 40, compute-capability: 9.0}\n",
        encoding="utf-8")
    (team / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    servers = explain(repo, ".")
    budget = servers["team/compose.yaml"]["budget"]
    assert (budget["gpu"], budget["total_gib"]) == ("Team-GPU", 40.0)
    assert budget["sources"]["total_gib"] == "custom-gpus, team/.vramlint.yaml:3"
