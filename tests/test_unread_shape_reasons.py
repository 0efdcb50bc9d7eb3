"""The note of a file that mentions vLLM but gives no server says what the file holds where vramlint reads that
shape: a pod spec or compose service whose vLLM-image container runs something else (what it runs), a RayService
whose Serve application is code vramlint does not read, a RayCluster with no vLLM command; never "the file's shape
is not one vramlint reads" or "not a kind vramlint reads" for them."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan


def _note(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    result = scan([str(path)])
    assert result.servers == []
    [note] = [p for p in result.problems if p.level == "note"]
    assert "shape is not one vramlint reads" not in note.message
    assert "not a kind vramlint reads" not in note.message
    return note


def test_a_deployment_whose_vllm_container_idles_says_what_it_runs(tmp_path):
    note = _note(tmp_path, "standalone.yaml", """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: vllm-standalone
        spec:
          selector:
            matchLabels: {app: vllm}
          template:
            metadata:
              labels: {app: vllm}
            spec:
              containers:
                - name: sidecar
                  image: busybox:1.36
                  command: ["sleep", "infinity"]
                - name: vllm
                  image: vllm/vllm-openai:v0.9.1
                  command: ["tail", "-f", "/dev/null"]
                  resources:
                    limits:
                      nvidia.com/gpu: 1
        """)
    assert note.line == 17
    assert "the container vllm runs `tail -f /dev/null`" in note.message and "idle" in note.message


def test_a_compose_ray_worker_says_it_joins_a_cluster(tmp_path):
    note = _note(tmp_path, "node2/docker-compose.yml", """\
        services:
          ray-worker:
            build:
              context: ..
            image: ray-vllm:local
            network_mode: host
            command: ray start --address=192.168.1.10:6379 --block
        """)
    assert note.line == 5
    assert "compose service ray-worker joins a Ray cluster as a worker" in note.message
    assert "ray start --address=192.168.1.10:6379" in note.message


def test_a_raycluster_with_no_vllm_command_is_said_as_such(tmp_path):
    note = _note(tmp_path, "raycluster.yaml", """\
        apiVersion: ray.io/v1
        kind: RayCluster
        metadata:
          name: vllm-cluster
        spec:
          headGroupSpec:
            rayStartParams: {}
            template:
              spec:
                containers:
                  - name: ray-head
                    image: vllm/vllm-openai:v0.8.5
          workerGroupSpecs:
            - groupName: gpu
              replicas: 2
              rayStartParams: {}
              template:
                spec:
                  containers:
                    - name: ray-worker
                      image: vllm/vllm-openai:v0.8.5
                      resources:
                        limits:
                          nvidia.com/gpu: 1
        """)
    assert "no container of the RayCluster runs a vLLM command" in note.message


def test_a_rayservice_whose_app_is_code_names_its_import_path(tmp_path):
    note = _note(tmp_path, "rayservice.yaml", """\
        apiVersion: ray.io/v1
        kind: RayService
        metadata:
          name: llm-serve
        spec:
          serveConfigV2: |
            applications:
              - name: llm
                import_path: serve_app:deployment
                runtime_env:
                  working_dir: /home/ray/app
          rayClusterConfig:
            headGroupSpec:
              rayStartParams: {}
              template:
                spec:
                  containers:
                    - name: ray-head
                      image: vllm/vllm-openai:v0.8.5
        """)
    assert "Ray Serve application (serve_app:deployment) is code (its working_dir /home/ray/app)" in note.message
