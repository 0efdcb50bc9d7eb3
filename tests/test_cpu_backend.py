"""vLLM's CPU backend: a server whose image is a CPU build (or that says --device cpu) and that asks for no GPU, or
whose image is one of vLLM's own CPU images whatever GPU it asks for, has no GPU memory budget and no GPU
requirement; it is said once, in the run's summary, not as "does not say its GPU"."""

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


def test_vllms_own_cpu_image_stays_on_the_cpu_backend_where_the_pod_asks_for_a_gpu(tmp_path):
    # vllm/platforms/__init__.py cuda_platform_plugin: a CPU build on a GPU machine does not activate CUDA, so the
    # GPU the pod asks for (or the GPU type its node selector names) is not used: no GPU budget, no GPU requirement
    server, text = _explain(tmp_path, "vllm/vllm-openai-cpu:v0.19.1", limits="nvidia.com/gpu: 1")
    assert server.get("budget") is None and server.get("gpu_requirement") is None
    cpu = [u for u in server["unresolved"] if u.startswith("vLLM's CPU backend")]
    assert cpu and "the GPU the deployment names is not used" in cpu[0]
    assert "VRL011" not in text and "does not say its GPU" not in text


def test_vllms_own_cpu_image_on_a_named_gpu_node_gets_no_gpu_budget(tmp_path):
    text = deployment("public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.10.1", QWEN, limits="nvidia.com/gpu: 1")
    text = text.replace("    spec:\n      containers:",
                        "    spec:\n      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-L4\n      containers:")
    _, out = run_cli(tmp_path, text, "explain", "--format", "json")
    data = json.loads(out)
    server = (data["servers"] if isinstance(data, dict) and "servers" in data else data)[0]
    assert server.get("budget") is None and server.get("gpu_requirement") is None
    assert any(u.startswith("vLLM's CPU backend") for u in server["unresolved"])


def test_tensor_parallel_of_a_cpu_build_is_not_compared_with_the_gpus_the_pod_asks_for(tmp_path):
    # TP 2 with nvidia.com/gpu: 1: on a GPU image VRL006 says vLLM is short of a GPU; the CPU build's ranks are
    # host processes, so there is nothing to compare (nor NCCL over /dev/shm to mount)
    _, cpu = run_cli(tmp_path, deployment("vllm/vllm-openai-cpu:v0.19.1", QWEN + ["-tp", "2"]), "check")
    _, gpu = run_cli(tmp_path, deployment("vllm/vllm-openai:v0.19.1", QWEN + ["-tp", "2"]), "check")
    assert "VRL006" in gpu and "VRL006" not in cpu and "VRL008" not in cpu


def test_a_build_named_cpu_that_asks_for_a_gpu_and_a_gpu_image_are_not_the_cpu_backend(tmp_path):
    # a `cpu` tag of an image built on vLLM says the build only by its name: with a GPU request it is not taken
    server, _ = _explain(tmp_path, "substratusai/vllm:v0.6.3.post1-cpu", limits="nvidia.com/gpu: 1")
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
