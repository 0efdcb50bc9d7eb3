"""What vramlint cannot know is said as an unknown, not an error (issue 9, the causes of held-out-14's false
errors and misses): a template file for another tool, engine arguments set in application code, compose services
that never run together, a wrapper script that runs its arguments, a placeholder word, NVIDIA Dynamo's v1alpha1
graph, and a third-party tag read as an assumed release."""

from __future__ import annotations

import json

from vramlint.cli import main
from vramlint.scan import scan


def _check(capsys, *argv: str) -> dict:
    main(["check", *argv, "--offline", "--output-format", "json", "--fail-on", "never"])
    return json.loads(capsys.readouterr().out)


def _findings(report: dict, rule: str | None = None) -> list[dict]:
    return [f for f in report["findings"] if rule is None or f["rule"] == rule]


SKY_TEMPLATE = """\
service:
  ports: {port}
resources:
  accelerators: "{gpu}:{count}"
  image_id: docker:vllm/vllm-openai:v{version}
{extra_block}

run: |
  {command}
"""


def test_a_template_for_another_tool_is_a_note_that_it_could_not_be_read(tmp_path, capsys):
    (tmp_path / "task.yaml.tpl").write_text(SKY_TEMPLATE)
    report = _check(capsys, str(tmp_path / "task.yaml.tpl"))
    [finding] = _findings(report)
    assert finding["rule"] == "VRL102" and finding["level"] == "note"
    assert "invalid YAML" in finding["message"] and "template (.tpl)" in finding["message"]
    assert "not checked" in finding["message"]
    # the same text in a manifest that Kubernetes or Compose reads as it is: still an error
    (tmp_path / "task.yaml").write_text(SKY_TEMPLATE)
    report = _check(capsys, str(tmp_path / "task.yaml"))
    assert [f["level"] for f in _findings(report, "VRL102")] == ["error"]


RAY_CUSTOM_APP = """\
apiVersion: ray.io/v1
kind: RayService
metadata: {name: chat}
spec:
  serveConfigV2: |
    applications:
    - name: llm
      import_path: my_app.serve:deployment
      runtime_env:
        env_vars:
          MODEL_ID: "meta-llama/Llama-3.1-8B-Instruct"
          MAX_MODEL_LEN: "8192"
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers:
          - name: head
            image: example.com/my-ray-vllm:1
    workerGroupSpecs:
    - groupName: gpu
      replicas: 1
      template:
        spec:
          nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
          containers:
          - name: worker
            image: example.com/my-ray-vllm:1
            resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_engine_arguments_set_in_application_code_are_unknown_not_a_budget_at_defaults(tmp_path, capsys):
    (tmp_path / "ray.yaml").write_text(RAY_CUSTOM_APP)
    [server] = scan([str(tmp_path / "ray.yaml")]).servers
    assert server.model == "meta-llama/Llama-3.1-8B-Instruct" and server.engine_args_in_code
    report = _check(capsys, str(tmp_path / "ray.yaml"))
    # at vLLM's defaults (max_model_len 131072) the L4's KV cache is short of one request: not said, not known
    assert not [f for f in _findings(report) if f["level"] == "error"]
    assert not _findings(report, "VRL005") and not _findings(report, "VRL011")
    causes = {g["cause"]: g for g in report["summary"]["unchecked"]}
    assert causes["args-in-code"]["count"] == 1 and "my_app.serve:deployment" not in causes["args-in-code"]["what"]


COMPOSE_ONE_NAME = """\
x-engine: &engine
  image: vllm/vllm-openai:v0.10.0
  container_name: llm
  deploy:
    resources:
      reservations:
        devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]
services:
  small:
    <<: *engine
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--gpu-memory-utilization", "0.6"]
  large:
    <<: *engine
    command: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu-memory-utilization", "0.7"]
  extra:
    <<: *engine
    profiles: [more]
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--gpu-memory-utilization", "0.5"]
"""


def test_compose_services_with_one_container_name_never_share_the_gpu(tmp_path, capsys):
    (tmp_path / "compose.yaml").write_text(COMPOSE_ONE_NAME)
    report = _check(capsys, str(tmp_path / "compose.yaml"), "--gpu", "L4")
    assert not _findings(report, "VRL007")
    # the same services under their own container names run together (`docker compose up`): oversubscribed
    (tmp_path / "compose.yaml").write_text(COMPOSE_ONE_NAME.replace("  container_name: llm\n", ""))
    report = _check(capsys, str(tmp_path / "compose.yaml"), "--gpu", "L4")
    found = _findings(report, "VRL007")
    # small and large always run together: an error; extra joins them only when profile `more` is started as a
    # whole, which the file does not say is done: a warning
    assert [f["level"] for f in found] == ["error", "warning"]


WRAPPER = """\
#!/usr/bin/env bash
set -euo pipefail
ARGS=("$@")
cat > /tmp/worker-command <<'EOF'
ray start --block --address=${HEAD}:6379
EOF
echo "starting"
exec "${ARGS[@]}"
"""

WRAPPED_SERVICE = """\
services:
  engine:
    image: vllm/vllm-openai:v0.10.0
    volumes: ["./wrap.sh:/wrap.sh:ro"]
    command: >
      /wrap.sh vllm serve Qwen/Qwen2.5-7B-Instruct
        --max-model-len 8192 --not-a-vllm-flag
"""


def test_a_wrapper_that_runs_its_arguments_starts_the_callers_command_line(tmp_path, capsys):
    (tmp_path / "wrap.sh").write_text(WRAPPER)
    (tmp_path / "compose.yaml").write_text(WRAPPED_SERVICE)
    [server] = scan([str(tmp_path / "compose.yaml")]).servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 8192
    # positions are the compose file's own, where the command line is written
    assert server.model_location.file.endswith("compose.yaml") and server.model_location.line == 6
    assert "--not-a-vllm-flag" in server.unknown_args
    assert any("runs the command line it is given" in n for n in server.notes)
    # a script that only prints its arguments starts nothing
    (tmp_path / "wrap.sh").write_text('#!/bin/sh\necho "$@"\n')
    assert scan([str(tmp_path / "compose.yaml")]).servers == []


PLACEHOLDER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.0
        command: ["/bin/sh", "-c"]
        args: ["vllm serve __MODEL_NAME_AND_ARGS__"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_placeholder_word_is_an_unknown_said_once_not_the_model(tmp_path, capsys):
    (tmp_path / "d.yaml").write_text(PLACEHOLDER)
    [server] = scan([str(tmp_path / "d.yaml")]).servers
    assert server.model is None
    assert [u for u in server.unchecked if "__MODEL_NAME_AND_ARGS__ is a placeholder" in u]
    report = _check(capsys, str(tmp_path / "d.yaml"))
    assert not [f for f in _findings(report) if f["level"] != "note"]
    [note] = _findings(report, "VRL010")
    assert "__MODEL_NAME_AND_ARGS__" in note["message"]
    causes = {g["cause"] for g in report["summary"]["unchecked"]}
    assert "model-placeholder" in causes and "no-model" not in causes


DYNAMO_V1ALPHA1 = """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: chat}
spec:
  backendFramework: vllm
  services:
    Frontend:
      componentType: frontend
      extraPodSpec:
        mainContainer:
          command: [python3, -m, dynamo.frontend]
    Worker:
      componentType: worker
      replicas: 1
      multinode: {nodeCount: 2}
      resources: {limits: {gpu: "4"}}
      envs:
        - {name: MODEL, value: Qwen/Qwen2.5-7B-Instruct}
      extraPodSpec:
        mainContainer:
          command: [/bin/sh, -c]
          args:
            - |
              exec python3 -m dynamo.vllm --model "${MODEL}" --data-parallel-size 8 \\
                --max-model-len 8192
"""


def test_dynamo_v1alpha1_workers_are_read_with_their_component_gpus_and_nodes(tmp_path, capsys):
    (tmp_path / "graph.yaml").write_text(DYNAMO_V1ALPHA1)
    [server] = scan([str(tmp_path / "graph.yaml")]).servers
    assert server.name == "Worker" and server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.args["data_parallel_size"] == 8 and server.args["max_model_len"] == 8192
    assert server.gpu.count == 4 and server.engine_group.gpus == 8
    assert server.image is None and server.vllm_version is None
    report = _check(capsys, str(tmp_path / "graph.yaml"))
    assert not [f for f in _findings(report) if f["level"] == "error"]


THIRD_PARTY_TAG = """\
services:
  engine:
    image: acme/vllm-custom:v0.8.3
    command: ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--async-scheduling", "--max-model-len", "4096"]
"""


def test_a_third_party_release_tag_is_an_assumed_version_named_in_the_finding(tmp_path, capsys):
    from vramlint.versions import assumed_version_from_tag, version_from_image

    assert version_from_image("acme/vllm-custom:v0.8.3") is None
    assert assumed_version_from_tag("acme/vllm-custom:v0.8.3") == "0.8.3"
    assert assumed_version_from_tag("acme/vllm-cpu:0.3") is None  # not a vLLM release number
    assert assumed_version_from_tag("vllm/vllm-openai:v0.8.3") is None  # known, not assumed
    (tmp_path / "compose.yaml").write_text(THIRD_PARTY_TAG)
    report = _check(capsys, str(tmp_path / "compose.yaml"))
    [finding] = _findings(report, "VRL009")
    # --async-scheduling came in 0.10.0: refused by the assumed 0.8.3, not by the newest release
    assert finding["level"] == "warning" and "vLLM 0.8.3 (assumed from the image tag)" in finding["message"]
    assert "an image outside vLLM's release repositories" in json.dumps(finding)
    # the version vramlint is sure of stays unknown (what score.py compares)
    [server] = scan([str(tmp_path / "compose.yaml")]).servers
    assert server.vllm_version is None
    # the configuration's version wins over the tag
    report = _check(capsys, str(tmp_path / "compose.yaml"), "--vllm-version", "0.10.0")
    assert not _findings(report, "VRL009")
