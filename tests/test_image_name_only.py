"""A container whose image merely has vLLM in its name, with no command, no args and no setting a launcher could
read (vLLM Warden's manager and UI), is not read as a vLLM server: a note says its command line is not visible.
vLLM's own images run `vllm serve` by themselves, and a custom image with a MODEL / VLLM_* setting stays a server
whose command line is hidden. Containers KubeRay writes `ray start` into get no such note."""

from __future__ import annotations

from vramlint.scan import scan

COMPOSE = """services:
  manager:
    image: registry.example.com/acme/vllm-manager:1.4
    environment:
      MANAGER_SECRET: "x"
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
  ui:
    image: registry.example.com/acme/vllm-manager-ui:1.4
    environment:
      BACKEND_URL: http://manager:8080
"""


def _scan(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return scan([str(path)])


def test_image_name_alone_is_no_server_and_is_said(tmp_path):
    inventory = _scan(tmp_path, "compose.yaml", COMPOSE)
    assert inventory.servers == []
    notes = [p for p in inventory.problems if "command line is not visible" in p.message]
    assert [(p.line, p.level) for p in notes] == [(2, "note"), (13, "note")]


def test_a_launcher_setting_keeps_the_server(tmp_path):
    inventory = _scan(tmp_path, "compose.yaml", COMPOSE.replace('MANAGER_SECRET: "x"', "MODEL: Qwen/Qwen2.5-0.5B"))
    assert [s.name for s in inventory.servers] == ["manager"]


def test_vllm_own_image_runs_its_server(tmp_path):
    inventory = _scan(tmp_path, "compose.yaml",
                      COMPOSE.replace("registry.example.com/acme/vllm-manager:1.4", "vllm/vllm-openai:v0.10.1"))
    assert [s.name for s in inventory.servers] == ["manager"]


RAY = """apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: llm
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
          - name: ray-head
            image: registry.example.com/acme/vllm-ray:2.1
            env:
              - name: VLLM_LOGGING_LEVEL
                value: DEBUG
  workerGroupSpecs:
    - groupName: gpu
      replicas: 1
      rayStartParams: {}
      template:
        spec:
          containers:
            - name: ray-worker
              image: registry.example.com/acme/vllm-ray:2.1
              resources:
                limits:
                  nvidia.com/gpu: 1
"""


def test_kuberay_containers_run_ray_start_not_the_image(tmp_path):
    inventory = _scan(tmp_path, "cluster.yaml", RAY)
    assert inventory.servers == []
    assert not [p for p in inventory.problems if "command line is not visible" in p.message]
