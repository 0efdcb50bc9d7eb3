"""The GPUs and instance types of the newer clusters (Blackwell B300 / GB200 / GB300, H800 / A800, H200 NVL, RTX PRO
6000 editions, DGX Spark's GB10) and how their node labels and cloud instance types resolve: to the catalog GPU,
with the label named as the evidence and the catalog's measured total as the budget's source."""

from __future__ import annotations

import pytest

from vramlint import gpus
from vramlint.assess import assess
from vramlint.budget.profile_comm import interconnect
from vramlint.model import ResolveOptions
from vramlint.scan import scan

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      nodeSelector: {{'{key}': '{value}'}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "{model}", "--max-model-len", "8192", "--tensor-parallel-size", "{tp}"]
          resources: {{limits: {{nvidia.com/gpu: {tp}}}}}
"""


def _assessed(tmp_path, key: str, value: str, tp: int = 1, model: str = "Qwen/Qwen2.5-7B-Instruct"):
    path = tmp_path / "deploy.yaml"
    path.write_text(POD.format(key=key, value=value, tp=tp, model=model))
    [server] = scan([str(path)]).servers
    [a] = assess([server], ResolveOptions(allow_network=False))
    return a


@pytest.mark.parametrize(("key", "value", "gpu", "logged"), [
    ("node.kubernetes.io/instance-type", "p6-b300.48xlarge", "B300", "267.69"),
    ("node.kubernetes.io/instance-type", "p6e-gb200.36xlarge", "GB200", "184.31"),
    ("node.kubernetes.io/instance-type", "a4x-highgpu-4g", "GB200", "184.31"),
    ("node.kubernetes.io/instance-type", "a4x-maxgpu-4g-metal", "GB300", "276.50"),
    ("node.kubernetes.io/instance-type", "Standard_ND128isr_NDR_GB200_v6", "GB200", "184.31"),
    ("node.kubernetes.io/instance-type", "Standard_ND128isr_GB300_v6", "GB300", "276.50"),
    ("node.kubernetes.io/instance-type", "BM.GPU.B300.8", "B300", "267.69"),
    ("node.kubernetes.io/instance-type", "BM.GPU.GB200.4", "GB200", "184.31"),
    ("node.kubernetes.io/instance-type", "BM.GPU.B200.8", "B200", "178.35"),
    ("node.kubernetes.io/instance-type", "g7e.48xlarge", "RTX-PRO-6000", "94.97"),
    ("node.kubernetes.io/instance-type", "g4-standard-96", "RTX-PRO-6000", "94.97"),
    ("karpenter.k8s.aws/instance-family", "p6-b300", "B300", "267.69"),
    ("karpenter.k8s.aws/instance-family", "g7e", "RTX-PRO-6000", "94.97"),
    ("karpenter.k8s.aws/instance-gpu-name", "b300", "B300", "267.69"),
    ("karpenter.k8s.aws/instance-gpu-name", "gb200", "GB200", "184.31"),
    ("cloud.google.com/gke-accelerator", "nvidia-gb200", "GB200", "184.31"),
    ("cloud.google.com/gke-accelerator", "nvidia-gb300", "GB300", "276.50"),
    ("gpu.nvidia.com/class", "GB200", "GB200", "184.31"),
    ("nvidia.com/gpu.product", "NVIDIA-B300-SXM6-AC", "B300", "267.69"),
    ("nvidia.com/gpu.product", "NVIDIA-GB200", "GB200", "184.31"),
    ("nvidia.com/gpu.product", "NVIDIA-GB300", "GB300", "276.50"),
    ("nvidia.com/gpu.product", "NVIDIA-A800-SXM4-80GB", "A800-80GB", "79.33"),
    ("nvidia.com/gpu.product", "NVIDIA-GB10", "GB10", "121.69"),
    ("nvidia.com/gpu.product", "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition", "RTX-PRO-6000", "94.97"),
])
def test_the_label_names_the_gpu_and_the_budget_says_where_its_memory_comes_from(tmp_path, key, value, gpu, logged):
    a = _assessed(tmp_path, key, value)
    assert a.gpu is not None and a.gpu.name == gpu
    assert a.budget is not None and a.gpu_requirement is None
    assert key in a.server.gpu.evidence
    assert logged in a.budget.sources["total_gib"]  # the catalog's logged figure, not a marketing size


@pytest.mark.parametrize(("value", "gpu"), [
    ("NVIDIA-H800", "H800"), ("NVIDIA-H800-PCIe", "H800-PCIe"), ("NVIDIA-H200-NVL", "H200-NVL"),
    ("NVIDIA-A800-80GB-PCIe", "A800-80GB-PCIe"), ("NVIDIA-RTX-4000-SFF-Ada-Generation", "RTX-4000-Ada"),
])
def test_estimated_parts_say_so(tmp_path, value, gpu):
    a = _assessed(tmp_path, "nvidia.com/gpu.product", value)
    assert a.gpu.name == gpu and a.budget is not None
    assert "estimate" in a.budget.sources["total_gib"]


@pytest.mark.parametrize(("instance", "gpu", "tp"), [("p6-b300.48xlarge", "B300", 8), ("p6e-gb200.36xlarge", "GB200", 4)])
def test_all_gpus_of_one_instance_are_budgeted(tmp_path, instance, gpu, tp):
    a = _assessed(tmp_path, "node.kubernetes.io/instance-type", instance, tp=tp, model="meta-llama/Llama-3.1-8B-Instruct")
    assert a.gpu.name == gpu and a.server.gpu.count == tp
    assert a.budget is not None and a.budget.gpus == tp and not a.budget.errors
    assert a.budget.total_gib == gpus.lookup(gpu).total_gib


@pytest.mark.parametrize(("instance", "expected"), [
    ("p6-b300.48xlarge", ("B300", 8)), ("p6e-gb200.36xlarge", ("GB200", 4)),
    ("g7e.2xlarge", ("RTX-PRO-6000", 1)), ("g7e.12xlarge", ("RTX-PRO-6000", 2)), ("g7e.24xlarge", ("RTX-PRO-6000", 4)),
    ("gr6.8xlarge", ("L4", 1)),
    ("a4x-highgpu-4g", ("GB200", 4)), ("a4x-maxgpu-4g-metal", ("GB300", 4)),
    ("g4-standard-48", ("RTX-PRO-6000", 1)), ("g4-standard-384", ("RTX-PRO-6000", 8)),
    ("Standard_ND128isr_NDR_GB200_v6", ("GB200", 4)), ("Standard_ND128isr_GB300_v6", ("GB300", 4)),
    ("Standard_NCC40ads_H100_v5", ("H100-NVL", 1)),
    ("BM.GPU.B200.8", ("B200", 8)), ("BM.GPU.B300.8", ("B300", 8)), ("BM.GPU.GB200-v3.4", ("GB200", 4)),
    ("BM.GPU.GB300.4", ("GB300", 4)), ("BM.GPU.MI355X.8", ("MI355X", 8)),
])
def test_instance_types_carry_their_gpus(instance, expected):
    assert gpus.instance_type(instance) == expected


def test_capabilities_and_interconnects_of_the_new_parts():
    b300, gb10 = gpus.lookup("B300"), gpus.lookup("GB10")
    assert b300.compute_capability == (10, 3) and b300.fp8 and b300.compute_units == 160
    assert gb10.compute_capability == (12, 1) and gb10.bf16 and gb10.fp8
    # HGX / NVL72 parts are NVSwitch-connected; the PCIe cards and the one-GPU GB10 are not
    assert {interconnect(gpus.lookup(n)) for n in ("B300", "GB200", "GB300", "H800", "A800-80GB")} == {"nvlink"}
    assert {interconnect(gpus.lookup(n)) for n in ("H800-PCIe", "A800-80GB-PCIe", "H200-NVL", "GB10")} == {"pcie"}


def test_a800_without_its_memory_is_ambiguous(tmp_path):
    assert gpus.resolve_hint("A800") is None
    assert "40 GB or 80 GB" in gpus.ambiguity("NVIDIA A800")
    a = _assessed(tmp_path, "nvidia.com/gpu.product", "NVIDIA-A800")
    assert a.budget is None
