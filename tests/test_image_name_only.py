"""A container whose image merely has vLLM in its name, with no command, no args and no setting a launcher could
read (vLLM Warden's manager and UI), is not read as a vLLM server: a note says its command line is not visible.
vLLM's own images run `vllm serve` by themselves, and a custom image with a MODEL / VLLM_* setting stays a server
whose command line is hidden. Containers KubeRay writes `ray start` into get no such note."""

from __future__ import annotations

import json

from vramlint.cli import main
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
    # the manager may hide a vLLM command line; the UI is named as a companion of vLLM (is_vllm_image's rule), a
    # program that talks to the manager, so nothing is hidden in it
    assert [(p.line, p.level) for p in notes] == [(2, "note")]


def test_a_companion_of_vllm_named_after_it_is_no_hidden_vllm(tmp_path, capsys):
    """A gateway or proxy named after the project it fronts (audit18: a FastAPI gateway whose VLLM_BASE_URL is its
    upstream, a latency proxy built FROM python) hides no vLLM command line, in compose and in Kubernetes."""
    compose = """services:
  gateway:
    image: registry.example.local/acme-vllm-serving-gateway:0.3
    environment:
      VLLM_BASE_URL: http://engine:8000/v1
  proxy:
    image: ghcr.io/acme/vllm-latency-proxy:1.0
    environment:
      VLLM_TIMEOUT: "30"
"""
    kube = """apiVersion: apps/v1
kind: Deployment
metadata: {name: gw}
spec:
  template:
    spec:
      containers:
        - name: gw
          image: ghcr.io/acme/vllm-latency-proxy:1.0
          env:
            - {name: VLLM_BASE_URL, value: "http://vllm:8000"}
"""
    for name, text in (("compose.yaml", compose), ("gw.yaml", kube)):
        inventory = _scan(tmp_path, name, text)
        assert inventory.servers == []
        assert not [p for p in inventory.problems if "command line is not visible" in p.message], name
    # nor is the file one that "mentions vLLM" without a server (the same rule decides, in one place)
    main(["check", str(tmp_path), "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert [f["rule"] for f in report["findings"]] == []
    # the same settings on an image named for vLLM alone: a custom vLLM image whose launcher reads them
    inventory = _scan(tmp_path, "engine.yaml", compose.replace("acme-vllm-serving-gateway", "acme-vllm"))
    assert [s.name for s in inventory.servers] == ["gateway"]


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
