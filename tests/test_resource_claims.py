"""Accelerators claimed through Dynamic Resource Allocation (resource.k8s.io): a container's resources.claims, the
pod's resourceClaims, and the ResourceClaimTemplate or ResourceClaim among the scanned files that says the device
class, the count and the selectors."""

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.scan import scan

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [--model, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, "2", --max-model-len, "8192"]
        resources:
          claims:
          - name: gpus
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: two-gpus
"""

TEMPLATE_V1 = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          selectors:
          - cel:
              expression: device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'
"""


def _scan(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return scan([str(tmp_path)])


def test_a_claim_template_in_another_file_gives_the_count_and_the_gpu_its_selector_names(tmp_path):
    inv = _scan(tmp_path, **{"deploy.yaml": DEPLOYMENT, "claim.yaml": TEMPLATE_V1})
    [server] = inv.servers
    gpu = server.gpu
    assert (gpu.vendor, gpu.count, gpu.type) == ("nvidia", 2, "L4")
    assert gpu.location.file.endswith("claim.yaml") and gpu.location.line == 10  # the deviceClassName line
    assert "ResourceClaimTemplate two-gpus" in gpu.evidence and "count 2" in gpu.evidence
    [a] = assess([server], ResolveOptions(allow_network=False))
    assert a.budget is not None and a.budget.gpu == "L4"
    assert server.device_claims == []  # joined


def test_v1beta1_requests_a_resource_claim_and_one_request_of_several(tmp_path):
    deployment = DEPLOYMENT.replace("          - name: gpus\n", "          - name: gpus\n            request: big\n")
    deployment = deployment.replace("resourceClaimTemplateName: two-gpus", "resourceClaimName: shared-h100s")
    claim = ("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: shared-h100s}\nspec:\n"
             "  devices:\n    requests:\n    - name: small\n      deviceClassName: gpu.nvidia.com\n"
             "    - name: big\n      deviceClassName: gpu.nvidia.com\n      count: 4\n      selectors:\n"
             "      - cel: {expression: \"device.attributes['gpu.nvidia.com'].productName in "
             "['NVIDIA H100 80GB HBM3', 'NVIDIA H200']\"}\n")
    [server] = _scan(tmp_path, **{"deploy.yaml": deployment, "claim.yaml": claim}).servers
    assert server.gpu.count == 4 and server.gpu.type is None and server.gpu.fleet == ["H100-SXM", "H200"]


def test_every_device_of_the_node_a_missing_template_and_a_class_that_is_no_accelerator(tmp_path):
    every = TEMPLATE_V1.replace("          count: 2\n", "          allocationMode: All\n").replace(
        "gpu.nvidia.com", "tpu.google.com", 1)
    [server] = _scan(tmp_path, **{"deploy.yaml": DEPLOYMENT, "claim.yaml": every}).servers
    assert (server.gpu.vendor, server.gpu.count) == ("google-tpu", None)
    assert "allocationMode All" in server.gpu.evidence
    (tmp_path / "claim.yaml").unlink()
    [server] = scan([str(tmp_path)]).servers
    assert server.gpu is None
    assert any("ResourceClaimTemplate two-gpus is not among the scanned files" in n for n in server.notes)
    nic = TEMPLATE_V1.replace("deviceClassName: gpu.nvidia.com", "deviceClassName: rdma.example.com")
    [server] = _scan(tmp_path, **{"claim.yaml": nic}).servers
    assert server.gpu is None


def test_a_device_plugin_gpu_and_claimed_tpus_are_not_one_accelerator(tmp_path):
    both = DEPLOYMENT.replace("          claims:\n", "          limits: {nvidia.com/gpu: 1}\n          claims:\n")
    tpu = TEMPLATE_V1.replace("gpu.nvidia.com", "tpu.google.com", 1)
    [server] = _scan(tmp_path, **{"deploy.yaml": both, "claim.yaml": tpu}).servers
    assert (server.gpu.vendor, server.gpu.count) == ("nvidia", 1)
    assert any("google-tpu devices, besides the nvidia accelerator" in n for n in server.notes)


def test_a_chart_that_renders_its_claim_template(tmp_path):
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: serve\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("gpus: 2\ndeviceClass: gpu.nvidia.com\n")
    (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    (chart / "templates" / "claim.yaml").write_text(
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\nmetadata: {name: two-gpus}\nspec:\n"
        "  spec:\n    devices:\n      requests:\n      - name: gpu\n"
        "        deviceClassName: {{ .Values.deviceClass }}\n        count: {{ .Values.gpus }}\n")
    [server] = scan([str(chart)]).servers
    assert (server.gpu.vendor, server.gpu.count) == ("nvidia", 2)
    assert server.gpu.location.file.endswith("values.yaml") and server.gpu.location.line == 2


def test_a_count_kubernetes_cannot_take_is_an_error_on_its_line(tmp_path):
    """`count` is an int64 (the API server cannot decode 2**70), and one claim is allocated at most 32 devices
    (AllocationResultsMaxSize: the allocator refuses more, and the pod stays Pending)."""
    for count, words in ((2 ** 70, "does not fit the int64"), ("9" * 400, "does not fit the int64"),
                         (33, "asks for 33 devices, more than one claim may be allocated (32")):
        template = TEMPLATE_V1.replace("count: 2", f"count: {count}")
        inv = _scan(tmp_path, **{"deploy.yaml": DEPLOYMENT, "claim.yaml": template})
        [problem] = [p for p in inv.problems if p.file.endswith("claim.yaml") and "ResourceClaimTemplate" in p.message]
        assert (problem.level, problem.line) == ("error", 11) and words in problem.message
        [server] = inv.servers
        assert server.gpu.count == (33 if count == 33 else None)


def test_thirty_two_devices_in_one_claim_are_taken(tmp_path):
    inv = _scan(tmp_path, **{"deploy.yaml": DEPLOYMENT, "claim.yaml": TEMPLATE_V1.replace("count: 2", "count: 32")})
    assert not [p for p in inv.problems if "ResourceClaimTemplate" in p.message]
    assert inv.servers[0].gpu.count == 32
