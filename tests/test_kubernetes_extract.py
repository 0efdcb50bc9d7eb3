"""Kubernetes, KServe, Ray, KubeAI, LWS extraction over fixtures written for these tests."""

from __future__ import annotations

import os

import pytest

from vramlint.scan import scan
from vramlint.versions import version_from_image as vllm_version_from_image

HERE = os.path.dirname(os.path.abspath(__file__))
K8S = os.path.join(HERE, "fixtures", "kubernetes")


def servers_in(*names):
    inv = scan([os.path.join(K8S, n) for n in names])
    return inv, {(s.name, s.container): s for s in inv.servers}


def test_deployment_container_with_positions_env_gpu_shm_and_ignore():
    inv, by = servers_in("deployment.yaml")
    assert [k for k in by] == [("llama", "vllm")]  # the sleeping sidecar and the Service are not servers
    s = by[("llama", "vllm")]
    assert s.file.endswith("tests/fixtures/kubernetes/deployment.yaml")
    assert not s.file.startswith("/")  # relative to the current directory
    assert (s.location.line, s.location.column) == (22, 11)
    assert s.location.yaml_path == "spec.template.spec.containers[0]"
    assert s.kind == "Deployment" and s.replicas == 2
    assert s.image == "vllm/vllm-openai:v0.6.4" and s.vllm_version == "0.6.4"
    assert s.image_location.line == 23
    assert s.model == "meta-llama/Llama-3.2-3B-Instruct"
    assert s.model_location.line == 24
    assert s.env == {"VLLM_ATTENTION_BACKEND": "FLASH_ATTN", "HF_TOKEN": None}  # valueFrom: unknown, not empty
    assert s.env_locations["VLLM_ATTENTION_BACKEND"].line == 30
    assert any("envFrom configMapRef shared-env" in n for n in s.notes)
    assert s.gpu.type == "T4" and s.gpu.count == 1 and s.gpu.vendor == "nvidia"
    assert "gke-accelerator: nvidia-tesla-t4" in s.gpu.evidence
    assert s.gpu.location.line == 20
    assert s.shm is True
    assert set(s.ignore_rules) == {"VRL001", "VRL003"} and s.ignore_rules["VRL001"].line == 14


def test_list_kind_pod_cronjob_anchors_and_accelerator_vendors():
    inv, by = servers_in("workloads.yaml")
    pod = by[("bare-pod", "engine")]
    assert pod.kind == "Pod" and pod.replicas == 1
    assert pod.location.yaml_path == "items[0].spec.containers[0]"
    assert pod.vllm_version == "0.8.5.post1"
    assert pod.gpu.mig_profile == "3g.40gb" and pod.gpu.count == 1 and pod.gpu.memory_gib > 30
    cron = by[("nightly", "batch")]
    assert cron.kind == "CronJob"
    assert cron.location.yaml_path == "items[1].spec.jobTemplate.spec.template.spec.containers[0]"
    assert cron.gpu.vendor == "amd" and cron.gpu.count == 2
    assert cron.vllm_version == "0.8.5"  # ROCm tag embeds the vLLM version
    merged = by[("anchored", "merged")]
    assert merged.image == "vllm/vllm-openai:v0.10.1-cu128" and merged.vllm_version == "0.10.1"
    assert merged.model == "org/anchored-model"
    # Gaudi resources with an NVIDIA product label: the resource decides, never counted as NVIDIA.
    assert merged.gpu.vendor == "intel-gaudi" and merged.gpu.count == 1
    assert merged.image_location.line == 35  # the anchored line the value came from


def test_lookalikes_are_not_servers():
    inv, by = servers_in("lookalikes.yaml")
    assert by == {}
    assert inv.files_scanned == 1


def test_leaderworkerset_leader_is_the_server():
    inv, by = servers_in("lws.yaml")
    assert list(by) == [("big", "leader")]
    s = by[("big", "leader")]
    assert s.model == "org/big-model" and s.gpu.count == 8 and s.replicas == 1
    assert any("spans 2 pods" in n for n in s.notes)
    assert (s.model_location.line, s.model_location.column) == (17, 47)


def test_kserve_runtime_and_inference_service_in_two_files_are_joined():
    inv, by = servers_in("kserve-runtime.yaml", "kserve-isvc.yaml")
    assert list(by) == [("granite", "kserve-container")]
    s = by[("granite", "kserve-container")]
    assert s.kind == "InferenceService" and s.file.endswith("kserve-isvc.yaml")
    assert s.image == "vllm/vllm-openai:v0.7.3" and s.vllm_version == "0.7.3"
    assert s.model == "ibm-granite/granite-3.1-8b-instruct"  # --model=/mnt/models + storageUri hf://
    assert s.model_location.file.endswith("kserve-isvc.yaml") and s.model_location.line == 14
    assert s.gpu.type == "L4" and s.gpu.count == 1 and s.replicas == 1
    assert any("my-vllm" in n and "kserve-runtime.yaml" in n for n in s.notes)


def test_kserve_runtime_alone_is_reported_as_a_template():
    inv, by = servers_in("kserve-runtime.yaml")
    assert list(by) == [("my-vllm", "kserve-container")]
    assert any("no InferenceService" in n for n in by[("my-vllm", "kserve-container")].notes)


def test_inference_service_alone_says_the_runtime_is_missing():
    inv, by = servers_in("kserve-isvc.yaml")
    s = by[("granite", None)]
    assert s.model == "ibm-granite/granite-3.1-8b-instruct"
    assert any("'my-vllm' is not among the scanned files" in n for n in s.notes)


def test_kubeai_model():
    inv, by = servers_in("kubeai.yaml")
    assert list(by) == [("phi", None)]  # the Ollama model is not vLLM
    s = by[("phi", None)]
    assert s.kind == "Model" and s.model == "microsoft/phi-4" and s.model_location.line == 7
    assert s.gpu.type == "L4" and s.gpu.count == 2 and "resourceProfile" in s.gpu.evidence
    assert s.env == {"VLLM_ATTENTION_BACKEND": "FLASHINFER"} and s.replicas == 0
    assert s.shm is None  # KubeAI builds the pod


def test_ray_serve_llm_config_inside_block_scalar_maps_to_outer_lines():
    inv, by = servers_in("rayservice.yaml")
    s = by[("llm", None)]
    assert s.kind == "RayService" and s.model == "Qwen/Qwen2.5-7B-Instruct"
    assert s.args == {"tensor_parallel_size": 2, "max_model_len": 16384}
    # Lines in the outer file: the embedded YAML starts on line 7.
    assert s.arg_locations["max_model_len"].line == 18
    assert s.arg_locations["max_model_len"].column == 30
    assert s.model_location.line == 14
    assert s.gpu.type == "L4" and s.gpu.count == 2 and s.gpu.location.line == 15
    assert s.env == {"VLLM_USE_V1": "1"} and s.env_locations["VLLM_USE_V1"].line == 21
    assert s.replicas == 1
    job = by[("job", None)]
    assert job.kind == "RayJob" and job.model == "facebook/opt-125m" and job.location.line == 49


def _arg_table_available() -> bool:
    from vramlint.cmdline import Token, find_vllm_invocation

    inv = find_vllm_invocation([], [Token("--max-model-len", None), Token("1", None)], "vllm/vllm-openai", {})
    return inv is not None and "max_model_len" in inv.args


needs_arg_table = pytest.mark.skipif(not _arg_table_available(), reason="vLLM argument table (EA) not present yet")


@needs_arg_table
def test_configmap_mounted_config_file_is_merged():
    inv, by = servers_in("configmap-config.yaml")
    (s,) = by.values()
    assert s.model == "org/cfg-model"
    assert s.args.get("max_model_len") == 4096
    assert s.arg_locations["max_model_len"].line == 7  # inside the ConfigMap's block scalar
    assert any("ConfigMap 'vllm-config'" in n for n in s.notes)


@needs_arg_table
def test_configmap_not_in_scanned_files_is_said():
    inv, by = servers_in("missing-configmap.yaml")
    (s,) = by.values()
    notes = " ".join(s.notes)
    assert "'defined-in-another-file'" in notes and "not among the scanned files" in notes


@pytest.mark.parametrize(
    "image,version",
    [
        ("vllm/vllm-openai:v0.6.4", "0.6.4"),
        ("vllm/vllm-openai:0.8.5.post1", "0.8.5.post1"),
        ("vllm/vllm-openai:v0.10.1-cu128", "0.10.1"),
        ("vllm/vllm-openai:v0.7.0rc1", "0.7.0rc1"),
        ("docker.io/vllm/vllm-openai:v0.9.2", "0.9.2"),
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "0.8.5"),
        ("vllm/vllm-openai:latest", None),
        ("vllm/vllm-openai@sha256:" + "a" * 64, None),
        ("vllm/vllm-openai", None),
        ("nvcr.io/nvidia/vllm:25.09-py3", None),  # NGC's YY.MM, not a vLLM version
        ("lmcache/vllm-openai:v0.3.9", None),  # LMCache's version
        ("rayproject/ray-llm:2.44.0-py311", None),
        ("registry:5000/vllm", None),
        (None, None),
    ],
)
def test_vllm_version_from_image_tag(image, version):
    assert vllm_version_from_image(image) == version
