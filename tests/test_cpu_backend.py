"""vLLM's CPU backend: a server whose image is a CPU build (or that says --device cpu) and that asks for no GPU has
no GPU memory budget and no GPU requirement; it is said once, in the run's summary, not as "does not say its GPU"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._check_util import deployment, run_cli
from vramlint.platforms import cpu_backend

QWEN = ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]


def _explain(tmp_path: Path, image: str, extra: list[str] | None = None, limits: str = "cpu: 16") -> tuple[dict, str]:
    text = deployment(image, QWEN + (extra or []), limits=limits)
    _, out = run_cli(tmp_path, text, "explain", "--format", "json")
    data = json.loads(out)
    servers = data["servers"] if isinstance(data, dict) and "servers" in data else data
    _, check = run_cli(tmp_path, text, "check")
    return servers[0], check


@pytest.mark.parametrize("image", [
    "vllm/vllm-openai-cpu:v0.23.0-x86_64",
    "docker.io/vllm/vllm-openai-cpu:latest-arm64",
    "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.9.1",
    "public.ecr.aws/q9t5s3a7/vllm-arm64-cpu-release-repo:v0.10.0",
    "substratusai/vllm:v0.6.3.post1-cpu",
])
def test_a_cpu_build_that_asks_for_no_gpu_has_no_gpu_budget_and_is_said_once(tmp_path, image):
    server, text = _explain(tmp_path, image)
    assert server.get("budget") is None and server.get("gpu_requirement") is None
    assert any(u.startswith("vLLM's CPU backend") for u in server["unresolved"])
    assert "runs vLLM's CPU backend" in text and "does not say its GPU" not in text and "VRL011" not in text


def test_a_cpu_image_with_a_gpu_request_and_a_gpu_image_are_not_the_cpu_backend(tmp_path):
    server, text = _explain(tmp_path, "vllm/vllm-openai-cpu:v0.23.0", limits="nvidia.com/gpu: 1")
    assert not any(u.startswith("vLLM's CPU backend") for u in server.get("unresolved") or [])
    assert server.get("gpu_requirement") is not None
    server, _ = _explain(tmp_path, "vllm/vllm-openai:v0.23.0", limits="cpu: 1")
    assert server.get("gpu_requirement") is not None


def test_device_cpu_on_a_release_that_has_the_flag_is_the_cpu_backend(tmp_path):
    server, _ = _explain(tmp_path, "vllm/vllm-openai:v0.6.3", ["--device", "cpu"], limits="cpu: 1")
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
    _, out = _explain(tmp_path, "vllm/vllm-openai-cpu:v0.23.0", ["-tp", "2"], limits="cpu: 8")
    assert "VRL008" not in out
    _, out = _explain(tmp_path, "vllm/vllm-openai:v0.23.0", ["-tp", "2"], limits="nvidia.com/gpu: 2")
    assert "VRL008" in out
