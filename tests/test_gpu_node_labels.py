"""The GPU a pod lands on, read from the node labels real clusters use (GPU Feature Discovery, clouds, Karpenter,
CoreWeave), with where it came from; several GPU products in a required node affinity are a fleet."""

from __future__ import annotations

import pytest

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.scan import scan

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
{scheduling}
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _assessed(tmp_path, scheduling: str):
    path = tmp_path / "deploy.yaml"
    path.write_text(POD.format(scheduling=scheduling))
    [server] = scan([str(path)]).servers
    [a] = assess([server], ResolveOptions(allow_network=False))
    return a


@pytest.mark.parametrize(("labels", "gpu"), [
    ("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB", "A100-80GB"),
    ("cloud.google.com/gke-accelerator: nvidia-l4", "L4"),
    ("karpenter.k8s.aws/instance-gpu-name: a10g", "A10G"),
    ("eks.amazonaws.com/instance-gpu-name: l40s", "L40S"),
    ("karpenter.k8s.aws/instance-family: g6e", "L40S"),
    ("karpenter.k8s.aws/instance-family: p4d", "A100-40GB"),
    ("node.kubernetes.io/instance-type: g5.xlarge", "A10G"),
    ("node.kubernetes.io/instance-type: p5.48xlarge", "H100-SXM"),
    ("node.kubernetes.io/instance-type: g6.xlarge", "L4"),
    ("node.kubernetes.io/instance-type: Standard_NC24ads_A100_v4", "A100-80GB-PCIe"),
    ("node.kubernetes.io/instance-type: a2-highgpu-1g", "A100-40GB"),
    ("node.kubernetes.io/instance-type: BM.GPU.H100.8", "H100-SXM"),
    ("node.kubernetes.io/instance-type: VM.GPU.A10.1", "A10"),
    ("gpu.nvidia.com/class: A100_NVLINK_80GB", "A100-80GB"),
    ("gpu.nvidia.com/class: H100_NVLINK_80GB", "H100-SXM"),
    ("{nvidia.com/gpu.memory: '81920', nvidia.com/gpu.family: ampere}", "A100-80GB"),
    ("accelerator: nvidia-tesla-t4", "T4"),
    ("accelerator: nvidia-gtx-2080ti", "RTX-2080-Ti"),  # GeForce's line word before the number
    ("node.kubernetes.io/instance-type: Standard_NC12s_v3", "V100-16GB"),
])
def test_node_selector_labels_name_the_gpu(tmp_path, labels, gpu):
    selector = labels if labels.startswith("{") else "{" + labels + "}"
    a = _assessed(tmp_path, f"      nodeSelector: {selector}")
    assert a.gpu is not None and a.gpu.name == gpu
    assert a.budget is not None and a.gpu_requirement is None
    key = labels.strip("{").split(":")[0]
    assert key in a.server.gpu.evidence  # where it came from


def test_gpu_memory_alone_is_the_memory_not_a_model(tmp_path):
    a = _assessed(tmp_path, "      nodeSelector: {nvidia.com/gpu.memory: '23028'}")
    assert a.gpu is not None and a.gpu.total_gib == pytest.approx(22.03)
    assert "compute capability not known" in a.budget.sources["total_gib"]
    assert "nvidia.com/gpu.memory" in a.server.gpu.evidence


def test_tolerations_and_node_pool_names_are_not_evidence(tmp_path):
    a = _assessed(tmp_path, "      nodeSelector: {cloud.google.com/gke-nodepool: l4-pool}")
    assert a.gpu is None and a.budget is None and a.gpu_requirement is not None
    # a hand-made `accelerator` label counts only when its value is a GPU the catalog knows
    a = _assessed(tmp_path, "      nodeSelector: {accelerator: big-ones}")
    assert a.server.gpu.type is None and a.gpu_requirement is not None


def test_required_affinity_with_several_products_is_a_fleet(tmp_path):
    affinity = """\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge, g6e.xlarge]}"""
    a = _assessed(tmp_path, affinity)
    assert a.server.gpu.fleet == ["A10G", "L40S"]
    assert [b.gpu for b in a.fleet] == ["A10G", "L40S"]
    assert "several GPU models" in a.server.gpu.evidence


def test_preferred_affinity_is_not_evidence(tmp_path):
    affinity = """\
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 1
              preference:
                matchExpressions:
                  - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]}"""
    a = _assessed(tmp_path, affinity)
    assert a.gpu is None and a.gpu_requirement is not None


def test_a_name_several_gpus_answer_to_is_a_fleet_of_them(tmp_path):
    a = _assessed(tmp_path, "      nodeSelector: {karpenter.azure.com/sku-gpu-name: A100}")
    assert [b.gpu for b in a.fleet] == ["A100-40GB", "A100-80GB"]
    assert "comes in several sizes" in a.budget.sources["gpu"]
    assert not any(u.startswith("GPU") for u in a.unresolved)


ACCEL_POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      nodeSelector: {{{selector}}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
          resources: {{limits: {{{resource}: 1}}}}
"""


@pytest.mark.parametrize(("selector", "resource", "accelerator", "vendor"), [
    ("kubernetes.io/os: linux", "habana.ai/gaudi", "Gaudi", "intel-gaudi"),
    ("kubernetes.io/os: linux", "aws.amazon.com/neuron", "Neuron", "aws-neuron"),
    # the instance type names the Neuron chip more exactly than the device plugin's resource name
    ("node.kubernetes.io/instance-type: trn1.2xlarge", "aws.amazon.com/neuron", "Trainium", "aws-neuron"),
    ("karpenter.k8s.aws/instance-family: inf2", "aws.amazon.com/neuroncore", "Inferentia2", "aws-neuron"),
    ("kubernetes.io/os: linux", "amd.com/gpu", None, "amd"),  # the resource says only the vendor
])
def test_other_accelerators_are_named_by_what_the_file_says(tmp_path, selector, resource, accelerator, vendor):
    path = tmp_path / "deploy.yaml"
    path.write_text(ACCEL_POD.format(selector=selector, resource=resource))
    [server] = scan([str(path)]).servers
    assert (server.gpu.type, server.gpu.vendor, server.gpu.count) == (accelerator, vendor, 1)
    [a] = assess([server], ResolveOptions(allow_network=False))
    assert a.budget is None  # the budget follows vLLM's CUDA path only
