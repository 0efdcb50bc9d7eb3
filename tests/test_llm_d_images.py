"""llm-d's vLLM images (ghcr.io/llm-d/llm-d-cuda and its siblings) run `python -m vllm.entrypoints.openai.api_server`
as their ENTRYPOINT (llm-d/llm-d docker/Dockerfile.*): a container that gives only args is that server. And a node
selector value written to be filled in (`<your-gpu-type>`, `${GPU}`, REPLACE_ME) names no GPU."""

from __future__ import annotations

import pytest

from vramlint.cmdline import is_llm_d_vllm_image
from vramlint.scan import scan

# shaped after an llm-d guide's decode Deployment: the image's entrypoint, the server's flags in args
DECODE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: decode}}
spec:
  template:
    spec:
      containers:
      - name: routing-proxy
        image: ghcr.io/llm-d/llm-d-routing-sidecar:v0.4.0
        args: [--port=8000, --vllm-port=8200, --connector=nixlv2]
      - name: vllm
        image: {image}
        args:
{args}
        resources:
          limits: {{nvidia.com/gpu: 2}}
"""


def _servers(tmp_path, image: str, args: str):
    path = tmp_path / "decode.yaml"
    path.write_text(DECODE.format(image=image, args=args))
    return scan([str(path)]).servers


def test_args_on_an_llm_d_image_are_the_api_servers(tmp_path):
    args = "        - --model\n        - Qwen/Qwen3-8B\n        - --tensor-parallel-size\n        - \"2\"\n" \
           "        - --port\n        - \"8200\""
    [server] = _servers(tmp_path, "ghcr.io/llm-d/llm-d-cuda:v0.4.0", args)  # the sidecar is no server
    assert server.container == "vllm" and server.model == "Qwen/Qwen3-8B"
    assert server.args["tensor_parallel_size"] == 2 and server.gpu.count == 2
    # the tag counts llm-d's releases, not vLLM's
    assert server.vllm_version is None


@pytest.mark.parametrize("image", ["ghcr.io/llm-d/llm-d-rocm:v0.7.0", "ghcr.io/llm-d/llm-d-xpu:v0.7.0",
                                   "ghcr.io/llm-d/llm-d:0.0.8", "registry.example.com/llm-d/llm-d-cuda-gb200:v0.7.0"])
def test_every_llm_d_vllm_image_is_read(tmp_path, image):
    [server] = _servers(tmp_path, image, "        - --model\n        - Qwen/Qwen3-8B")
    assert server.model == "Qwen/Qwen3-8B"


def test_serve_is_no_subcommand_of_the_api_server(tmp_path):
    # `serve` belongs to the vllm CLI; after the api_server module it is one more word its parser reads
    [server] = _servers(tmp_path, "ghcr.io/llm-d/llm-d-cuda:v0.4.0", "        - serve\n        - Qwen/Qwen3-8B")
    assert server.model != "Qwen/Qwen3-8B"
    assert any("'serve'" in e["message"] for e in server.startup_errors)


def test_llm_d_images_that_run_no_vllm_are_not_vllm_images():
    assert is_llm_d_vllm_image("ghcr.io/llm-d/llm-d-cuda:v0.4.0")
    assert not any(is_llm_d_vllm_image(i) for i in (
        "ghcr.io/llm-d/llm-d-routing-sidecar:v0.4.0", "ghcr.io/llm-d/llm-d-inference-scheduler:v0.4.0",
        "ghcr.io/llm-d/llm-d-inference-sim:v0.4.0", "ghcr.io/acme/llm-d-cuda:v1"))


SELECTED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      nodeSelector:
        {key}: {value}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [--model, Qwen/Qwen2.5-7B-Instruct]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize(("key", "value"), [
    ("nvidia.com/gpu.product", '"<your-gpu-type>"'),
    ("nvidia.com/gpu.product", '"${GPU_PRODUCT}"'),
    ("nvidia.com/gpu.product", "REPLACE_ME"),
    ("cloud.google.com/gke-accelerator", "YOUR_ACCELERATOR"),
    ("node.kubernetes.io/instance-type", '"<INSTANCE_TYPE>"'),
    ("karpenter.k8s.aws/instance-gpu-name", "CHANGE-ME"),
])
def test_a_placeholder_node_selector_value_names_no_gpu(tmp_path, key, value):
    path = tmp_path / "chat.yaml"
    path.write_text(SELECTED.format(key=key, value=value))
    [server] = scan([str(path)]).servers
    assert server.gpu.type is None and server.gpu.count == 1


def test_a_real_label_value_still_names_the_gpu(tmp_path):
    path = tmp_path / "chat.yaml"
    path.write_text(SELECTED.format(key="nvidia.com/gpu.product", value="NVIDIA-L4") + "\n")
    [server] = scan([str(path)]).servers
    assert server.gpu.type == "L4"
    path.write_text(SELECTED.format(key="nvidia.com/gpu.product", value='"<NVIDIA-L4>"'))
    [server] = scan([str(path)]).servers
    assert server.gpu.type is None
