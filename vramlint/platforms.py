"""Which vLLM platform a server runs on, where the deployment says it without a GPU: vLLM's CPU backend.

vLLM picks its platform when it starts (``vllm/platforms/__init__.py``: ``cpu_platform_plugin`` is the one that
answers when the installed build is the CPU one, ``vllm.__version__`` ending in ``+cpu``): a CPU build runs on
the host's cores and keeps its KV cache in host memory (``VLLM_CPU_KVCACHE_SPACE`` GiB), so no GPU budget applies.
The build shows in the image vLLM publishes it as (``vllm/vllm-openai-cpu``, and the ECR repositories
``q9t5s3a7/vllm-cpu-release-repo`` and ``vllm-arm64-cpu-release-repo`` of the CPU installation docs), or in a
`cpu` tag of an image built on vLLM (KubeAI's ``substratusai/vllm:v0.6.3.post1-cpu``); releases that have
``--device`` take ``--device cpu``.

vLLM's own CPU images are the CPU backend even where the pod asks for a GPU or lands on a GPU node: the CUDA
platform plugin declines a CPU build on a GPU machine (``cuda_platform_plugin``: "Edge case: vllm cpu build on a
GPU machine", ``nvmlDeviceGetCount() > 0 and not vllm_version_matches_substr("cpu")``; read in the 0.9.2 and
0.22.1 wheels), so the GPU is not used. A build known only from its name (a `cpu` tag, ``--device cpu``) in a
container that also asks for a GPU is not taken as CPU-only: what it was built as is not certain.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

CPU_IMAGE_REPOSITORIES = ("vllm/vllm-openai-cpu", "q9t5s3a7/vllm-cpu-release-repo",
                          "q9t5s3a7/vllm-arm64-cpu-release-repo")
_CPU_TAG = re.compile(r"(?:^|[-_.])cpu(?:[-_.]|$)", re.IGNORECASE)


@lru_cache(maxsize=1024)  # asked three times per server; a fleet of 10,000 servers has a few images
def _repository_and_tag(image: str) -> tuple[str, str]:
    from vramlint.versions import image_parts

    repo, tag = image_parts(image.strip())
    parts = repo.lower().split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]  # the registry host
    return "/".join(parts), tag


def _asks_for_a_gpu(server: Any) -> bool:
    gpu = server.gpu
    return gpu is not None and bool(gpu.count or gpu.type or gpu.fleet or getattr(gpu, "mig_profile", None))


def cpu_backend(server: Any) -> str | None:
    """What says that ``server`` runs vLLM's CPU backend ("image vllm/vllm-openai-cpu:v0.23.0"), else None."""
    image = server.image if isinstance(server.image, str) else ""
    built = getattr(server, "cpu_build", None)
    if built and not image and not _asks_for_a_gpu(server):
        return built
    if image and _own_cpu_image(image):
        if _asks_for_a_gpu(server):
            return (f"image {image}, a CPU build: the GPU the deployment names is not used, as vLLM's CUDA platform "
                    "declines a CPU build on a GPU machine")
        return f"image {image}"
    if _asks_for_a_gpu(server):
        return None
    device = server.args.get("device")
    if isinstance(device, str) and device.strip().lower() == "cpu":
        return "--device cpu"
    if not image:
        return None
    repo, tag = _repository_and_tag(image)
    if "vllm" in repo and (_CPU_TAG.search(tag) or _CPU_TAG.search(repo.rsplit("/", 1)[-1].replace("vllm", ""))):
        return f"image {image} (a CPU build)"
    return None


@lru_cache(maxsize=1024)
def _own_cpu_image(image: str) -> bool:
    """Whether ``image`` is one of the CPU images vLLM publishes (any registry host in front)."""
    repo, _ = _repository_and_tag(image)
    return repo in CPU_IMAGE_REPOSITORIES or any(repo.endswith("/" + r.split("/", 1)[1])
                                                 for r in CPU_IMAGE_REPOSITORIES if r.startswith("q9t5s3a7/"))


CPU_BACKEND = "vLLM's CPU backend"  # how the unresolved reason starts (vramlint.unchecked groups by it)
CPU_UNRESOLVED = (CPU_BACKEND + " ({why}): it runs on the host's cores and keeps its KV cache in host memory "
                  "(VLLM_CPU_KVCACHE_SPACE), so no GPU memory budget applies")
