"""Accelerators beyond NVIDIA's read from the drivers' own names: the AWS Neuron DRA driver's device class
(`neuron.aws.com`, its `instanceType` attribute naming the chip), Intel Gaudi's `model` attribute in a
`gaudi.intel.com` claim, Rebellions' device plugin resources (`rebellions.ai/ATOM`), and the NeuronCores per
device of the chip an instance type names, which VRL006 compares with the tensor-parallel size."""

from __future__ import annotations

import subprocess
import sys

from vramlint.scan import scan

# shaped after the Neuron DRA driver's documented 1x4-connected-devices example, serving vLLM
NEURON_CLAIMED = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: four-neurons}
spec:
  spec:
    devices:
      requests:
      - name: neurons
        deviceClassName: neuron.aws.com
        allocationMode: ExactCount
        count: 4
        selectors:
        - cel:
            expression: "device.attributes['neuron.aws.com'].instanceType == 'trn2.48xlarge'"
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama-neuron}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py310-sdk2.25.0-ubuntu22.04
        command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --tensor-parallel-size, "16"]
        resources:
          claims:
          - name: neurons
      resourceClaims:
      - name: neurons
        resourceClaimTemplateName: four-neurons
"""

# shaped after Intel's Gaudi resource driver example claim, with the model selector
GAUDI_CLAIMED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: two-gaudi3}
spec:
  devices:
    requests:
    - name: gaudi
      exactly:
        deviceClassName: gaudi.intel.com
        count: 2
        selectors:
        - cel:
            expression: device.attributes["gaudi.intel.com"].model == 'Gaudi3'
---
apiVersion: v1
kind: Pod
metadata: {name: gaudi-vllm}
spec:
  containers:
  - name: vllm
    image: vault.habana.ai/gaudi-docker/1.21.0/ubuntu22.04/habanalabs/vllm:latest
    command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, "2"]
    resources:
      claims:
      - name: gaudi
  resourceClaims:
  - name: gaudi
    resourceClaimName: two-gaudi3
"""

# shaped after an llm-d / device-plugin deployment on Rebellions ATOM NPUs
REBELLIONS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: rbln}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.2
        command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --tensor-parallel-size, "4"]
        resources:
          limits:
            rebellions.ai/ATOM: 1
"""

# an inf2 node: two NeuronCores per Inferentia2 device
INF2 = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: inf2}}
spec:
  template:
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: {instance}
      containers:
      - name: vllm
        image: public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py310-sdk2.25.0-ubuntu22.04
        command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --tensor-parallel-size, "8"]
        resources:
          limits:
            aws.amazon.com/neuron: 2
"""


def _server(tmp_path, text: str, name: str = "deploy.yaml"):
    path = tmp_path / name
    path.write_text(text)
    [server] = scan([str(path)]).servers
    return server


def _vrl006(tmp_path, name: str = "deploy.yaml") -> str:
    done = subprocess.run([sys.executable, "-m", "vramlint", "check", str(tmp_path / name), "--offline", "--select",
                           "VRL006"], capture_output=True, text=True, check=False)
    return done.stdout


def test_neuron_dra_claim_gives_devices_and_the_chip_its_instance_type_names(tmp_path):
    gpu = _server(tmp_path, NEURON_CLAIMED).gpu
    assert (gpu.vendor, gpu.count, gpu.type) == ("aws-neuron", 4, "Trainium2")
    assert "deviceClassName neuron.aws.com" in gpu.evidence and "instanceType: trn2.48xlarge" in gpu.evidence


def test_gaudi_claim_names_the_model_its_selector_compares(tmp_path):
    gpu = _server(tmp_path, GAUDI_CLAIMED).gpu
    assert (gpu.vendor, gpu.count, gpu.type) == ("intel-gaudi", 2, "Gaudi3")


def test_rebellions_atom_is_an_npu_not_an_unknown_resource(tmp_path):
    gpu = _server(tmp_path, REBELLIONS).gpu
    assert (gpu.vendor, gpu.count, gpu.type) == ("rebellions", 1, "ATOM")
    # the compiled model decides how many ATOMs an engine takes: no comparison with --tensor-parallel-size
    assert "VRL006" not in _vrl006(tmp_path)


def test_inferentia2_devices_hold_two_neuroncores_each(tmp_path):
    server = _server(tmp_path, INF2.format(instance="inf2.24xlarge"))
    assert (server.gpu.vendor, server.gpu.type, server.gpu.count) == ("aws-neuron", "Inferentia2", 2)
    out = _vrl006(tmp_path)
    out = " ".join(out.split())
    assert "tensor-parallel-size 8 needs 8 NeuronCores, but the deployment requests 4 NeuronCores" in out
    assert "(2 per Inferentia2 device) (line 15)" in out and "request 4 Neuron devices" in out
    # a Trainium2 node may show 8 cores a device: 2 devices hold TP 8, nothing to say
    _server(tmp_path, INF2.format(instance="trn2.48xlarge"))
    assert "VRL006" not in _vrl006(tmp_path)


# shaped after an EKS Karpenter NodePool for Inferentia2 nodes (its taint, the pods' toleration)
NEURON_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: inferentia}
spec:
  template:
    spec:
      requirements:
      - key: karpenter.k8s.aws/instance-family
        operator: In
        values: [inf2]
      taints:
      - {key: aws.amazon.com/neuron, effect: NoSchedule}
"""
POOL_POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: inf2-pool}
spec:
  template:
    spec:
      nodeSelector: {karpenter.sh/nodepool: inferentia}
      tolerations: [{key: aws.amazon.com/neuron, operator: Exists, effect: NoSchedule}]
      containers:
      - name: vllm
        image: public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py310-sdk2.25.0-ubuntu22.04
        command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --tensor-parallel-size, "8"]
        resources: {limits: {aws.amazon.com/neuron: 2}}
"""


def test_the_nodepool_a_neuron_pod_selects_names_its_chip(tmp_path):
    # aws.amazon.com/neuron says only "a Neuron device": the pool's instance family says Inferentia2
    (tmp_path / "pool.yaml").write_text(NEURON_POOL)
    (tmp_path / "deploy.yaml").write_text(POOL_POD)
    [server] = scan([str(tmp_path)]).servers
    assert (server.gpu.vendor, server.gpu.type) == ("aws-neuron", "Inferentia2")
    assert "Karpenter NodePool inferentia" in server.gpu.evidence
