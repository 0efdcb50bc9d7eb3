"""Instances that get part of one GPU (Azure NVads A10 v5: 1/6, 1/3, 1/2 of an A10) are budgeted on that share,
not on the whole card."""

from __future__ import annotations

import pytest

from vramlint import gpus
from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.scan import scan

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      {scheduling}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "{model}", "--max-model-len", "4096"]
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""

KAITO = """\
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: ws-small
resource:
  instanceType: {instance}
inference:
  preset:
    name: qwen2.5-coder-7b-instruct
"""


def _assess(tmp_path, text):
    path = tmp_path / "deploy.yaml"
    path.write_text(text)
    [server] = scan([str(path)]).servers
    [assessment] = assess([server], ResolveOptions(allow_network=False))
    return server, assessment


def test_share_of_the_whole_gpu_total():
    a10 = gpus.lookup("A10").total_gib
    assert gpus.instance_memory_gib("Standard_NV6ads_A10_v5") == round(a10 * 0.1667, 2)
    assert gpus.instance_memory_gib("standard_nv12ads_a10_v5") == round(a10 * 0.3333, 2)
    assert gpus.instance_memory_gib("Standard_NV18ads_A10_v5") == round(a10 * 0.5, 2)
    assert gpus.instance_memory_gib("Standard_NV36ads_A10_v5") is None  # a whole A10
    assert gpus.instance_memory_gib("g5.xlarge") is None
    assert gpus.instance_memory_gib("m5.large") is None


@pytest.mark.parametrize(("instance", "share"), [
    ("Standard_NV6ads_A10_v5", 0.1667), ("Standard_NV12ads_A10_v5", 0.3333), ("Standard_NV18ads_A10_v5", 0.5),
    ("Standard_NV36ads_A10_v5", 1.0),
])
def test_node_selector_instance_budgets_the_share(tmp_path, instance, share):
    scheduling = f"nodeSelector: {{node.kubernetes.io/instance-type: {instance}}}"
    server, a = _assess(tmp_path, DEPLOYMENT.format(scheduling=scheduling, model="Qwen/Qwen2.5-0.5B-Instruct"))
    a10 = gpus.lookup("A10").total_gib
    assert a.gpu.name == "A10" and a.budget.total_gib == pytest.approx(a10 * share, abs=0.01)
    if share < 1:
        assert server.gpu.memory_gib == a.budget.total_gib
        assert "part of one A10" in a.budget.sources["total_gib"]
    else:
        assert server.gpu.memory_gib is None


def test_a_model_that_fits_an_a10_does_not_fit_half_of_one(tmp_path):
    model = "meta-llama/Llama-3.1-8B-Instruct"
    whole = "nodeSelector: {node.kubernetes.io/instance-type: Standard_NV36ads_A10_v5}"
    _, a = _assess(tmp_path, DEPLOYMENT.format(scheduling=whole, model=model))
    assert a.budget.starts
    half = "nodeSelector: {node.kubernetes.io/instance-type: Standard_NV18ads_A10_v5}"
    _, a = _assess(tmp_path, DEPLOYMENT.format(scheduling=half, model=model))
    assert not a.budget.starts and a.budget.weights_gib > a.budget.usable_gib


def test_affinity_over_several_sizes_takes_the_smallest_share(tmp_path):
    scheduling = """affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - key: node.kubernetes.io/instance-type
                    operator: In
                    values: [Standard_NV36ads_A10_v5, Standard_NV12ads_A10_v5]"""
    server, a = _assess(tmp_path, DEPLOYMENT.format(scheduling=scheduling, model="Qwen/Qwen2.5-0.5B-Instruct"))
    assert server.gpu.memory_gib == gpus.instance_memory_gib("Standard_NV12ads_A10_v5")
    assert a.budget.total_gib == server.gpu.memory_gib


def test_kaito_workspace_on_a_partial_gpu(tmp_path):
    path = tmp_path / "ws.yaml"
    path.write_text(KAITO.format(instance="Standard_NV12ads_A10_v5"))
    [server] = scan([str(path)]).servers
    assert server.gpu.type == "A10" and server.gpu.memory_gib == gpus.instance_memory_gib("Standard_NV12ads_A10_v5")
    assert "part of one A10" in server.gpu.evidence
