"""A node label key written as a placeholder (`{{{KARPENTER_PREFIX}}}/instance-family`, `{{ .Values.x }}`) in a
plain manifest: which nodes the pods select, and their GPU, are known only once a step before `kubectl apply`
fills it in; said once on the server, never read as a literal key."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      tolerations:
        - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
{scheduling}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
          resources:
            limits: {{nvidia.com/gpu: 1}}
"""

# one pool of L4 nodes (g6) and one of L40S nodes (g6e), the pods' selector naming the family through a placeholder
POOLS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: l4}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6]}
      taints:
        - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: l40s}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}
      taints:
        - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
"""


def _server(tmp_path, scheduling):
    (tmp_path / "deploy.yaml").write_text(DEPLOY.format(scheduling=textwrap.indent(scheduling, "      ")))
    (tmp_path / "pools.yaml").write_text(POOLS)
    [server] = scan([str(tmp_path)]).servers
    return server


def _placeholder_notes(server):
    return [n for n in server.notes if "template placeholder" in n]


def test_a_mustache_prefix_in_a_node_selector_key_is_said_once(tmp_path):
    server = _server(tmp_path, 'nodeSelector:\n  "{{{KARPENTER_PREFIX}}}/instance-family": g6e\n'
                               '  "{{ .Values.gpuLabel }}": NVIDIA-L40S\n')
    assert server.gpu.type is None and server.gpu.count == 1
    [note] = _placeholder_notes(server)
    assert "{{{KARPENTER_PREFIX}}}/instance-family=g6e" in note and "gpu:" in note
    # the key is not a label the pools' nodes lack (nor one they have): no pool is picked for it
    assert server.gpu.node_selection is None


def test_a_placeholder_key_in_required_node_affinity(tmp_path):
    server = _server(tmp_path, "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
                               "      nodeSelectorTerms:\n      - matchExpressions:\n"
                               '        - {key: "{{{KARPENTER_PREFIX}}}/instance-family", operator: In, values: [g6]}\n')
    assert server.gpu.type is None
    [note] = _placeholder_notes(server)
    assert "node affinity {{{KARPENTER_PREFIX}}}/instance-family In [g6]" in note


def test_a_literal_key_still_selects_its_pool(tmp_path):
    server = _server(tmp_path, "nodeSelector:\n  karpenter.k8s.aws/instance-family: g6e\n")
    assert server.gpu.type == "L40S" and _placeholder_notes(server) == []
