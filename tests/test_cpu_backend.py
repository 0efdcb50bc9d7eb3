"""vLLM's CPU backend: a server whose image is a CPU build (or that says --device cpu) and that asks for no GPU has
no GPU memory budget and no GPU requirement; it is said once, in the run's summary, not as "does not say its GPU"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vramlint.platforms import cpu_backend

ROOT = Path(__file__).resolve().parent.parent

POD = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: {image}
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"{extra}]
          resources:
            limits:
{limits}
"""


def _explain(tmp_path: Path, text: str, name: str = "deploy.yaml") -> tuple[dict, str]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    out = subprocess.run([sys.executable, "-m", "vramlint", "explain", name, "--offline", "--format", "json"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    check = subprocess.run([sys.executable, "-m", "vramlint", "check", name, "--offline"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    data = json.loads(out.stdout)
    servers = data["servers"] if isinstance(data, dict) and "servers" in data else data
    return servers[0], check.stdout


@pytest.mark.parametrize("image", [
    "vllm/vllm-openai-cpu:v0.23.0-x86_64",
    "docker.io/vllm/vllm-openai-cpu:latest-arm64",
    "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.9.1",
    "public.ecr.aws/q9t5s3a7/vllm-arm64-cpu-release-repo:v0.10.0",
    "substratusai/vllm:v0.6.3.post1-cpu",
])
def test_a_cpu_build_that_asks_for_no_gpu_has_no_gpu_budget_and_is_said_once(tmp_path, image):
    server, text = _explain(tmp_path, POD.format(image=image, extra="", limits="              cpu: \"16\""))
    assert server.get("budget") is None and server.get("gpu_requirement") is None
    assert any(u.startswith("vLLM's CPU backend") for u in server["unresolved"])
    assert "runs vLLM's CPU backend" in text and "does not say its GPU" not in text and "VRL011" not in text


def test_a_cpu_image_with_a_gpu_request_and_a_gpu_image_are_not_the_cpu_backend(tmp_path):
    gpu = "              nvidia.com/gpu: 1"
    server, text = _explain(tmp_path, POD.format(image="vllm/vllm-openai-cpu:v0.23.0", extra="", limits=gpu))
    assert not any(u.startswith("vLLM's CPU backend") for u in server.get("unresolved") or [])
    assert server.get("gpu_requirement") is not None
    server, _ = _explain(tmp_path, POD.format(image="vllm/vllm-openai:v0.23.0", extra="", limits="              cpu: 1"))
    assert server.get("gpu_requirement") is not None


def test_device_cpu_on_a_release_that_has_the_flag_is_the_cpu_backend(tmp_path):
    server, _ = _explain(tmp_path, POD.format(image="vllm/vllm-openai:v0.6.3", extra=', "--device", "cpu"',
                                              limits="              cpu: 1"))
    assert server.get("budget") is None and server.get("gpu_requirement") is None
    assert any("--device cpu" in u for u in server["unresolved"])


def test_what_is_read_as_a_cpu_build():
    class S:
        gpu = None
        args: dict = {}

        def __init__(self, image):
            self.image = image

    assert cpu_backend(S("registry.local:5000/vllm/vllm-openai-cpu:v0.30.0")) is not None
    assert cpu_backend(S("myorg/vllm-cpu:1.0")) is not None  # a build of vLLM named for the CPU
    assert cpu_backend(S("vllm/vllm-openai:v0.11.0")) is None
    assert cpu_backend(S("ghcr.io/acme/cpuinfo-exporter:1")) is None  # no vLLM in its name
    assert cpu_backend(S("vllm/vllm-openai:v0.11.0-cu128")) is None


def test_tensor_parallel_on_the_cpu_backend_is_not_told_about_nccl(tmp_path):
    # VRL008 is about NCCL over /dev/shm (NVIDIA GPUs); the CPU backend's collectives are not NCCL
    text = POD.format(image="vllm/vllm-openai-cpu:v0.23.0", extra=', "-tp", "2"', limits="              cpu: 8")
    _, out = _explain(tmp_path, text)
    assert "VRL008" not in out
    _, out = _explain(tmp_path, text.replace("vllm/vllm-openai-cpu", "vllm/vllm-openai").replace(
        "cpu: 8", "nvidia.com/gpu: 2"))
    assert "VRL008" in out
