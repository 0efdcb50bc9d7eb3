"""A Ray cluster of plain Deployments (no KubeRay): a head pod running `ray start --head` and then vLLM, worker pods
joining it by `ray start --address=SERVICE:6379`, SERVICE a Service selecting the head pod. The engine's ranks are
spread one per GPU over those pods (vLLM's Ray executor), so only the ranks of one pod share its /dev/shm: with one
GPU per pod VRL008 says nothing (audit23 H5, a false warning before); with two it counts this pod's ranks. Without
a Service that ties the worker to the head, nothing is joined and the server is read as before."""

from __future__ import annotations

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, find_rule, load_rules, run_rules
from vramlint.scan import scan

HEAD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-head
spec:
  selector:
    matchLabels: {{app: vllm-head}}
  template:
    metadata:
      labels: {{app: vllm-head, tier: gpu}}
    spec:
      containers:
        - name: vllm-head
          image: vllm/vllm-openai:v0.9.2
          command: ["/bin/bash", "-c"]
          args:
            - |
              ray start --head --port=6379 --dashboard-host=0.0.0.0 &
              sleep 30
              vllm serve Qwen/Qwen2.5-1.5B-Instruct --tensor-parallel-size {tp} --pipeline-parallel-size 2
          resources:
            limits:
              nvidia.com/gpu: {gpus}
"""
SERVICE = """\
---
apiVersion: v1
kind: Service
metadata:
  name: vllm-head-service
spec:
  selector: {app: vllm-head}
  ports:
    - {name: gcs, port: 6379}
"""
WORKER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-worker
spec:
  replicas: 1
  selector:
    matchLabels: {{app: vllm-worker}}
  template:
    metadata:
      labels: {{app: vllm-worker}}
    spec:
      containers:
        - name: vllm-worker
          image: vllm/vllm-openai:v0.9.2
          command: ["/bin/bash", "-c"]
          args: ["ray start --address={address}:6379 --block"]
          resources:
            limits:
              nvidia.com/gpu: {gpus}
"""


def _scan(tmp_path, tp=1, gpus=1, service=True, address="vllm-head-service"):
    (tmp_path / "head-node.yaml").write_text(HEAD.format(tp=tp, gpus=gpus) + (SERVICE if service else ""))
    (tmp_path / "worker-node.yaml").write_text(WORKER.format(address=address, gpus=gpus))
    inventory = scan([str(tmp_path)])
    [server] = inventory.servers
    assessments = assess(inventory.servers, ResolveOptions(allow_network=False))
    ctx = RuleContext(rule_options={}, traffic=TrafficProfile())
    shm = list(run_rules(assessments, [find_rule(load_rules(), "VRL008")], ctx))
    vrl006 = [f for f in run_rules(assessments, [find_rule(load_rules(), "VRL006")], ctx) if f.level != "note"]
    assert vrl006 == []  # the group gives the engine its GPUs: nothing short, nothing idle
    return server, shm


def test_one_gpu_per_pod_shares_no_dev_shm(tmp_path):
    server, shm = _scan(tmp_path)
    assert server.engine_group is not None and server.engine_group.gpus == 2
    assert [m.label for m in server.engine_group.members] == ["head Deployment vllm-head",
                                                               "worker Deployment vllm-worker"]
    assert shm == []


def test_two_gpus_per_pod_count_this_pods_ranks(tmp_path):
    server, shm = _scan(tmp_path, tp=2, gpus=2)
    assert server.engine_group is not None and server.engine_group.gpus == 4
    [finding] = shm
    assert "4 workers over the Ray cluster's pods, 2 of them in this pod" in finding.message


def test_a_worker_not_tied_to_the_head_by_a_service_joins_nothing(tmp_path):
    server, shm = _scan(tmp_path, service=False)
    assert server.engine_group is None and len(shm) == 1
    server, shm = _scan(tmp_path, address="10.0.0.5")
    assert server.engine_group is None and len(shm) == 1


def test_a_worker_in_another_namespace_joins_nothing(tmp_path):
    server, shm = _scan(tmp_path, address="vllm-head-service.other-ns.svc.cluster.local")
    assert server.engine_group is None and len(shm) == 1
