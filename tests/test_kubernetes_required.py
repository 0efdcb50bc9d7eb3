"""Required fields of pod templates that the API server (or a CRD's PodTemplateSpec schema) enforces."""

from __future__ import annotations

import os

from vramlint.scan import scan

HERE = os.path.dirname(__file__)
LWS = os.path.join(HERE, "fixtures", "k8s_required", "lws-missing-mountpath.yaml")


def _line_of(path: str, needle: str, after: int = 0) -> int:
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if i > after and needle in line:
                return i
    raise AssertionError(needle)


def _required(problems):
    return [p for p in problems if "Required value" in p.message]


def test_volume_mount_without_mount_path_is_an_error_on_its_line():
    inventory = scan([LWS])
    [problem] = _required(inventory.problems)
    assert problem.level == "error"
    worker = _line_of(LWS, "workerTemplate:")
    assert problem.line == _line_of(LWS, "- name: dshm", after=worker)
    assert ("spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].volumeMounts[0].mountPath: Required value"
            in problem.message)
    assert 'LeaderWorkerSet.leaderworkerset.x-k8s.io "vllm" is invalid' in problem.message
    assert len(inventory.servers) >= 1  # the servers are still read


def test_complete_objects_have_no_required_field_error(tmp_path):
    text = open(LWS, encoding="utf-8").read().replace("              - name: dshm\n        volumes:",
                                                       "              - name: dshm\n                mountPath: /dev/shm"
                                                       "\n        volumes:")
    path = tmp_path / "lws.yaml"
    path.write_text(text)
    assert _required(scan([str(path)]).problems) == []


def test_deployment_missing_env_and_container_names(tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  selector: {matchLabels: {app: chat}}
  template:
    metadata: {labels: {app: chat}}
    spec:
      containers:
        - image: vllm/vllm-openai:v0.10.2
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
          env:
            - value: "1"
""")
    messages = sorted(p.message for p in _required(scan([str(path)]).problems))
    assert len(messages) == 2
    assert "spec.template.spec.containers[0].env[0].name: Required value" in messages[0]
    assert "spec.template.spec.containers[0].name: Required value" in messages[1]
    assert 'Deployment.apps "chat" is invalid' in messages[0]


def test_templates_patches_and_custom_kinds_are_not_judged(tmp_path):
    template = tmp_path / "deployment.yaml"
    template.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          volumeMounts:
            - name: cache
              {{- if .Values.cache.enabled }}
              mountPath: /root/.cache
              {{- end }}
""")
    patch = tmp_path / "patch.yaml"
    patch.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          volumeMounts:
            - $patch: delete
              name: cache
""")
    custom = tmp_path / "custom.yaml"
    custom.write_text("""\
apiVersion: example.com/v1
kind: InferenceThing
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          volumeMounts:
            - name: cache
""")
    assert _required(scan([str(template), str(patch), str(custom)]).problems) == []
