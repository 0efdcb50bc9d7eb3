"""KubeAI AMD resource profiles name their GPU; `vllm` inside another word is not a vLLM image."""
from pathlib import Path

from vramlint.cmdline import is_vllm_image
from vramlint.scan import scan


def test_vllm_as_a_word_of_the_image_name():
    assert is_vllm_image("vllm/vllm-openai:v0.10.0")
    assert is_vllm_image("registry.example/acme/nm-vllm-cuda:1.0")
    assert is_vllm_image("registry.example/kube-ai/vllm:0.4.1")
    assert not is_vllm_image("quay.io/example/vllme:0.2.3")
    assert not is_vllm_image("registry.example/acme/vllmx-bench:1")


def test_kubeai_amd_profile_names_the_gpu(tmp_path: Path):
    f = tmp_path / "model.yaml"
    f.write_text("apiVersion: kubeai.org/v1\nkind: Model\nmetadata:\n  name: m\nspec:\n"
                 "  url: hf://Qwen/Qwen2.5-7B-Instruct\n  engine: VLLM\n  resourceProfile: amd-gpu-mi300x:2\n")
    servers = scan([str(f)]).servers
    assert len(servers) == 1
    assert servers[0].gpu.type == "MI300X" and servers[0].gpu.count == 2 and servers[0].gpu.vendor == "amd"
