"""The GPU of the Karpenter NodePool a pod selects (nodeSelector or required node affinity, taints tolerated), read
from the pool's requirements as Kubernetes and Karpenter match them."""

from __future__ import annotations

import json
import os

import pytest

from vramlint.cli import main
from vramlint.helm import extract_charts
from vramlint.scan import scan

DEPLOY = """\
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
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
          resources:
            limits: {{nvidia.com/gpu: 1}}
"""

POOL = """\
apiVersion: {api}
kind: NodePool
metadata:
  name: {name}
spec:
  template:
    metadata:
      labels:
        workload: {workload}
    spec:
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
{requirements}
      taints:
        - {{key: nvidia.com/gpu, value: "true", effect: NoSchedule}}
"""

TOLERATE = """\
      tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"""


def requirement(key: str, *values: str, operator: str = "In") -> str:
    return (f"        - key: {key}\n          operator: {operator}\n"
            f"          values: [{', '.join(json.dumps(v) for v in values)}]")


def pool(name: str, *requirements: str, workload: str = "inference", api: str = "karpenter.sh/v1") -> str:
    return POOL.format(api=api, name=name, workload=workload, requirements="\n".join(requirements))


def gpu_of(tmp_path, scheduling: str, *pools: str):
    (tmp_path / "deploy.yaml").write_text(DEPLOY.format(scheduling=scheduling))
    for i, text in enumerate(pools):
        (tmp_path / f"pool-{i}.yaml").write_text(text)  # no word of vLLM in them: read even so
    (server,) = scan([str(tmp_path)]).servers
    return server


SELECT = "      nodeSelector: {workload: inference}\n" + TOLERATE


def test_the_pool_whose_labels_the_selector_names_gives_its_instance_familys_gpu(tmp_path):
    server = gpu_of(tmp_path, SELECT, pool("gpu", requirement("karpenter.k8s.aws/instance-family", "g6")),
                    pool("cpu", requirement("karpenter.k8s.aws/instance-family", "m7i"), workload="batch"))
    assert (server.gpu.type, server.gpu.count) == ("L4", 1)
    assert "Karpenter NodePool gpu" in server.gpu.evidence and "instance-family In [g6]" in server.gpu.evidence
    assert server.gpu.location.file.endswith("pool-0.yaml") and server.gpu.location.line == 17


def test_nodepool_name_label_and_v1beta1(tmp_path):
    scheduling = "      nodeSelector: {karpenter.sh/nodepool: training}\n" + TOLERATE
    server = gpu_of(tmp_path, scheduling,
                    pool("training", requirement("node.kubernetes.io/instance-type", "p4d.24xlarge"),
                         api="karpenter.sh/v1beta1", workload="other"),
                    pool("inference", requirement("node.kubernetes.io/instance-type", "g5.xlarge")))
    assert server.gpu.type == "A100-40GB"


def test_several_pools_with_different_gpus_are_a_fleet(tmp_path):
    server = gpu_of(tmp_path, SELECT, pool("a", requirement("karpenter.k8s.aws/instance-family", "g5")),
                    pool("b", requirement("karpenter.k8s.aws/instance-gpu-name", "l40s")))
    assert server.gpu.type is None and sorted(server.gpu.fleet) == ["A10G", "L40S"]


def test_one_pool_of_several_sizes_of_one_gpu_is_that_gpu(tmp_path):
    server = gpu_of(tmp_path, SELECT, pool("a", requirement("node.kubernetes.io/instance-type", "g5.2xlarge",
                                                             "g5.12xlarge")))
    assert server.gpu.type == "A10G" and not server.gpu.fleet


def test_a_pool_that_does_not_restrict_the_gpu_is_said_and_left_unknown(tmp_path):
    server = gpu_of(tmp_path, SELECT, pool("open"))
    assert server.gpu.type is None and not server.gpu.fleet
    (said,) = [n for n in server.notes if "Karpenter NodePool open" in n]
    assert "do not restrict the instance type" in said and "not known" in said


def test_a_pool_the_pod_cannot_land_on_gives_nothing(tmp_path):
    family = requirement("karpenter.k8s.aws/instance-family", "g6")
    # a label the pool's nodes do not carry
    other = gpu_of(tmp_path, "      nodeSelector: {workload: inference, team: search}\n" + TOLERATE, pool("a", family))
    assert other.gpu.type is None and not any("NodePool" in n for n in other.notes)
    # the pool's taint is not tolerated
    for f in tmp_path.iterdir():
        f.unlink()
    untolerated = gpu_of(tmp_path, "      nodeSelector: {workload: inference}", pool("a", family))
    assert untolerated.gpu.type is None
    # a requirement the selector's value falls outside of
    for f in tmp_path.iterdir():
        f.unlink()
    outside = gpu_of(tmp_path, "      nodeSelector: {workload: inference, karpenter.sh/capacity-type: reserved}\n"
                     + TOLERATE, pool("a", family))
    assert outside.gpu.type is None


def test_required_node_affinity_terms_select_the_pool(tmp_path):
    scheduling = """\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: workload, operator: In, values: [inference, serving]}
                  - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}
""" + TOLERATE
    server = gpu_of(tmp_path, scheduling, pool("a", requirement("karpenter.k8s.aws/instance-family", "g6e")),
                    pool("b", requirement("karpenter.k8s.aws/instance-family", "p5"), workload="training"))
    assert server.gpu.type == "L40S"


def test_the_pools_gpu_is_budgeted(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "deploy.yaml").write_text(DEPLOY.format(scheduling=SELECT))
    (tmp_path / "pool.yaml").write_text(pool("a", requirement("karpenter.k8s.aws/instance-family", "g4dn")))
    main(["check", str(tmp_path), "--offline", "--format", "json"])
    (server,) = json.loads(capsys.readouterr().out)["servers"]
    assert server["budget"]["gpu"] == "T4"


CHART_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {{ .Values.pool.name }}
spec:
  template:
    metadata:
      labels:
        {{- toYaml .Values.pool.labels | nindent 8 }}
    spec:
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: {{- toYaml .Values.pool.instanceTypes | nindent 12 }}
"""

CHART_DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      nodeSelector:
        {{- toYaml .Values.nodeSelector | nindent 8 }}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""

CHART_VALUES = """\
nodeSelector:
  pool: serving
pool:
  name: serving
  labels:
    pool: serving
  instanceTypes:
    - g6.xlarge
    - g6.2xlarge
"""


def _serving_chart(tmp_path):
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: serving\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(CHART_VALUES)
    (chart / "templates" / "nodepool.yaml").write_text(CHART_POOL)
    (chart / "templates" / "deployment.yaml").write_text(CHART_DEPLOY)
    return chart


def _helm_available() -> bool:
    import shutil

    from vramlint.helm import render

    return render.sdk_available() or shutil.which("helm") is not None


@pytest.mark.parametrize("render", [False, pytest.param(True, marks=pytest.mark.skipif(
    not _helm_available(), reason="neither helm-python-sdk nor a `helm` binary: Helm's rendering was not run"))])
def test_a_chart_that_brings_its_own_node_pool(tmp_path, render):
    chart = _serving_chart(tmp_path)
    servers, _problems, _notes = extract_charts([str(chart)], render=render)
    (server,) = servers
    assert server.gpu.type == "L4"
    # on the values line that lists the instance types
    assert server.gpu.location.file == os.path.join(str(chart), "values.yaml")
    assert server.gpu.location.line == 8


@pytest.mark.parametrize("operator, values, allowed", [
    ("NotIn", ["p5"], True), ("NotIn", ["g6"], False), ("Exists", [], True), ("DoesNotExist", [], False)])
def test_affinity_operators_against_the_pools_requirement(tmp_path, operator, values, allowed):
    vals = f", values: [{', '.join(values)}]" if values else ""
    scheduling = ("      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                  f"[{{matchExpressions: [{{key: karpenter.k8s.aws/instance-family, operator: {operator}{vals}}}, "
                  "{key: workload, operator: In, values: [inference]}]}]}}}\n" + TOLERATE)
    server = gpu_of(tmp_path, scheduling, pool("a", requirement("karpenter.k8s.aws/instance-family", "g6")))
    assert (server.gpu.type == "L4") is allowed


def test_comparisons_are_bounded_and_what_was_left_out_is_said(tmp_path, monkeypatch):
    from vramlint.extract import node_pools

    docs = [DEPLOY.format(scheduling=f"      nodeSelector: {{workload: inference, slot: s{i}}}\n" + TOLERATE)
            .replace("name: chat", f"name: chat{i}") for i in range(6)]
    (tmp_path / "deploy.yaml").write_text("---\n".join(docs))
    (tmp_path / "pool.yaml").write_text(pool("a", requirement("karpenter.k8s.aws/instance-family", "g6")))
    # each distinct selection costs pools x (1 + labels) = 3 comparisons: room for two of the six
    monkeypatch.setattr(node_pools, "MAX_COMPARISONS", 7)
    inventory = scan([str(tmp_path)])
    (note,) = [n for n in inventory.notes if "Karpenter NodePools" in n]
    assert note.startswith("4 servers whose pods select nodes were not compared")


COMPUTE_CLASS = """\
apiVersion: cloud.google.com/v1
kind: ComputeClass
metadata:
  name: {name}
spec:
  priorities:
{priorities}
  nodePoolAutoCreation:
    enabled: true
"""


@pytest.mark.parametrize("priorities, gpu, fleet", [
    ("    - {gpu: {type: nvidia-l4, count: 1}}\n    - {machineType: g2-standard-8}", "L4", None),
    ("    - {machineFamily: g2}", "L4", None),
    ("    - {gpu: {type: nvidia-l4, count: 1}}\n    - {gpu: {type: nvidia-tesla-t4, count: 1}}", None, ["L4", "T4"]),
    ("    - {machineFamily: n2}", None, None),
])
def test_gke_compute_class_the_pod_selects(tmp_path, priorities, gpu, fleet):
    scheduling = "      nodeSelector: {cloud.google.com/compute-class: inference}"
    server = gpu_of(tmp_path, scheduling, COMPUTE_CLASS.format(name="inference", priorities=priorities),
                    COMPUTE_CLASS.format(name="other", priorities="    - {machineFamily: a3}"))
    assert server.gpu.type == gpu
    assert (sorted(server.gpu.fleet) if server.gpu.fleet else None) == fleet
    if gpu is None and fleet is None:
        assert any("GKE ComputeClass inference (priority 1)" in n and "not known" in n for n in server.notes)


def test_a_compute_class_is_not_a_pool_for_pods_that_do_not_select_it(tmp_path):
    server = gpu_of(tmp_path, "      nodeSelector: {kubernetes.io/os: linux}",
                    COMPUTE_CLASS.format(name="inference", priorities="    - {machineFamily: g2}"))
    assert server.gpu.type is None and not any("ComputeClass" in n for n in server.notes)
