"""The devices vLLM sees in a pod whose environment picks among those the container is given: CUDA_VISIBLE_DEVICES
on NVIDIA (torch.cuda.device_count() counts only those), ROCR_VISIBLE_DEVICES then HIP_VISIBLE_DEVICES on ROCm,
ZE_AFFINITY_MASK on Intel GPUs. The indices count the container's own devices from 0; a value the file does not
say (valueFrom, empty, a `$(VAR)` reference, UUIDs) leaves the count unknown."""

from __future__ import annotations

import pytest

from vramlint.scan import scan

# shaped after a plain vLLM Deployment that pins CUDA_VISIBLE_DEVICES in its env list
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: llama}}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "{tp}"]
          env:
            - name: HF_HOME
              value: /data/hf
{env}
          resources:
            limits:
              {resource}: {count}
"""


def _server(tmp_path, env: str, count: int = 4, tp: int = 4, resource: str = "nvidia.com/gpu"):
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOYMENT.format(env=env, count=count, tp=tp, resource=resource))
    [server] = scan([str(path)]).servers
    return server, path


def test_cuda_visible_devices_narrows_the_pods_gpus(tmp_path):
    server, _ = _server(tmp_path, '            - name: CUDA_VISIBLE_DEVICES\n              value: "0,1"')
    assert server.gpu.count == 2
    assert "CUDA_VISIBLE_DEVICES=0,1 (vLLM sees 2 of the 4 devices)" in server.gpu.evidence
    assert server.gpu.count_location.line == 15  # the env value, the line that says how many


def test_cuda_indices_count_the_containers_own_devices(tmp_path):
    cases = [
        ('"0,1,2,3"', 4, 4),  # every device it has
        ('"0,1,2,3"', 2, 2),  # CUDA stops at index 2, which the container does not have
        ('"1,5,0"', 4, 1),  # ... and sees only the devices before the first such index
        ('"3"', 4, 1),
    ]
    seen = [_server(tmp_path, f"            - name: CUDA_VISIBLE_DEVICES\n              value: {value}",
                    count=count)[0].gpu.count for value, count, _ in cases]
    assert seen == [expected for *_, expected in cases]


@pytest.mark.parametrize("entry", [
    '            - name: CUDA_VISIBLE_DEVICES\n              value: ""',
    "            - name: CUDA_VISIBLE_DEVICES\n              value:",
    '            - name: CUDA_VISIBLE_DEVICES\n              value: "$(GPU_IDS)"',
    '            - name: CUDA_VISIBLE_DEVICES\n              value: "GPU-5f1a3c2e-0000-1111-2222-333344445555"',
    "            - name: CUDA_VISIBLE_DEVICES\n              valueFrom: {configMapKeyRef: {name: gpus, key: ids}}",
    '            - name: CUDA_VISIBLE_DEVICES\n              value: "0,0"',
])
def test_a_value_the_file_does_not_say_is_unknown_not_zero(tmp_path, entry):
    server, _ = _server(tmp_path, entry)
    assert server.gpu.count is None
    assert "CUDA_VISIBLE_DEVICES" in server.gpu.evidence and "not known" in server.gpu.evidence


def test_nvidia_visible_devices_does_not_narrow_a_pod(tmp_path):
    # the device plugin sets NVIDIA_VISIBLE_DEVICES to the devices it allocated: the container has 4, and
    # CUDA_VISIBLE_DEVICES picks among those
    env = ('            - name: NVIDIA_VISIBLE_DEVICES\n              value: "0"\n'
           '            - name: CUDA_VISIBLE_DEVICES\n              value: "2,3"')
    server, _ = _server(tmp_path, env)
    assert server.gpu.count == 2


def test_inline_assignment_before_vllm_serve_narrows_too(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("""\
apiVersion: v1
kind: Pod
metadata: {name: chat}
spec:
  containers:
    - name: vllm
      image: vllm/vllm-openai:v0.11.0
      command: ["sh", "-c", "CUDA_VISIBLE_DEVICES=0 vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2"]
      resources: {limits: {nvidia.com/gpu: 2}}
""")
    [server] = scan([str(path)]).servers
    assert server.gpu.count == 1


def test_rocm_variables_pick_among_the_pods_amd_gpus(tmp_path):
    env = ('            - name: ROCR_VISIBLE_DEVICES\n              value: "0,1,2"\n'
           '            - name: HIP_VISIBLE_DEVICES\n              value: "0,2"')
    server, _ = _server(tmp_path, env, resource="amd.com/gpu")
    assert server.gpu.vendor == "amd" and server.gpu.count == 2
    # CUDA_VISIBLE_DEVICES stands for HIP_VISIBLE_DEVICES on ROCm (vLLM's platforms/rocm.py)
    server, _ = _server(tmp_path, '            - name: CUDA_VISIBLE_DEVICES\n              value: "1"',
                        resource="amd.com/gpu")
    assert server.gpu.count == 1


def test_level_zero_mask_picks_among_the_pods_intel_gpus(tmp_path):
    server, _ = _server(tmp_path, '            - name: ZE_AFFINITY_MASK\n              value: "0.0,0.1,1"',
                        resource="gpu.intel.com/i915")
    assert server.gpu.vendor == "intel-gpu" and server.gpu.count == 2  # tiles of device 0 and device 1


def test_tensor_parallel_over_the_visible_gpus_is_refused(tmp_path):
    _server(tmp_path, '            - name: CUDA_VISIBLE_DEVICES\n              value: "0,1"')
    out = _run(tmp_path / "deploy.yaml")
    assert ("tensor-parallel-size 4 needs 4 GPUs, but CUDA_VISIBLE_DEVICES shows vLLM 2 of the 4 GPUs the "
            "container gets (line 15)") in out
    # no rewrite of nvidia.com/gpu: the pod has the GPUs already
    assert "let CUDA_VISIBLE_DEVICES list 4 devices (line 15) (no automatic fix" in " ".join(out.split())


def test_gpus_the_variable_hides_are_idle(tmp_path):
    _server(tmp_path, '            - name: CUDA_VISIBLE_DEVICES\n              value: "0"', tp=1)
    out = _run(tmp_path / "deploy.yaml")
    assert "VRL006 [warning] 3 of the 4 GPUs the deployment requests sit idle" in out
    assert "deploy.yaml:18:" in out  # on the request


def test_compose_empty_cuda_visible_devices_is_unknown_not_all(tmp_path):
    path = tmp_path / "compose.yaml"
    path.write_text("""\
services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    command: --model Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 4
    environment:
      CUDA_VISIBLE_DEVICES: ""
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: 4, capabilities: [gpu]}]
""")
    [server] = scan([str(path)]).servers
    assert server.gpu.count is None and "CUDA_VISIBLE_DEVICES empty" in server.gpu.evidence
    path.write_text(path.read_text().replace('CUDA_VISIBLE_DEVICES: ""', 'CUDA_VISIBLE_DEVICES: "0,1"'))
    [server] = scan([str(path)]).servers
    assert server.gpu.count == 2 and server.gpu.visible_from == ("CUDA_VISIBLE_DEVICES", 4)
    assert server.gpu.count_location.line == 6


def _run(path) -> str:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "vramlint", "check", str(path), "--offline", "--select", "VRL006"],
                          capture_output=True, text=True, check=False)
    return done.stdout + done.stderr
