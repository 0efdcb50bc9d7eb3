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


def _refusals(problems):
    return sorted((p.line, p.message.split(": ")[2].split(" must be ")[0], p.message.split(" must be ")[1].split(",")[0])
                  for p in problems if "rejects this object" in p.message and " must be " in p.message)


def test_pod_spec_fields_of_the_wrong_type_are_refused_once_on_their_line(tmp_path):
    # shapes the API server's JSON decoding refuses (k8s.io/api/core/v1): each is one error on its own line
    path = tmp_path / "deploy.yaml"
    path.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      nodeSelector:
        gpu: true
      containers:
        - vllm/vllm-openai:v0.10.2
        - name: [vllm]
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
          ports: 8000
          env:
            - HF_HOME=/data
            - name: VLLM_PORT
              value: 8000
          volumeMounts:
            - /dev/shm
          resources:
            limits:
              - nvidia.com/gpu: 1
            requests:
              nvidia.com/gpu: [1]
              cpu: "4"
      volumes: shm
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  jobTemplate: "vllm serve Qwen/Qwen2.5-7B-Instruct"
---
apiVersion: v1
kind: Pod
metadata:
  name: one
spec:
  containers: "vllm/vllm-openai:v0.10.2 --model Qwen/Qwen2.5-7B-Instruct"
""")
    problems = scan([str(path)]).problems
    c0, c1 = "spec.template.spec.containers[0]", "spec.template.spec.containers[1]"
    assert _refusals(problems) == [
        (_line_of(str(path), "gpu: true"), 'spec.template.spec.nodeSelector.gpu', "a string"),
        (_line_of(str(path), "- vllm/vllm-openai"), c0, "a container (an object)"),
        (_line_of(str(path), "name: [vllm]"), f"{c1}.name", "a string"),
        (_line_of(str(path), "ports: 8000"), f"{c1}.ports", "a list of ports"),
        (_line_of(str(path), "- HF_HOME"), f"{c1}.env[0]", "a variable (an object)"),
        (_line_of(str(path), "value: 8000"), f"{c1}.env[1].value", "a string"),
        (_line_of(str(path), "- /dev/shm"), f"{c1}.volumeMounts[0]", "a volume mount (an object)"),
        (_line_of(str(path), "- nvidia.com/gpu: 1"), f"{c1}.resources.limits", "an object"),
        (_line_of(str(path), "nvidia.com/gpu: [1]"), f'{c1}.resources.requests["nvidia.com/gpu"]',
         "a quantity (a string or a number)"),
        (_line_of(str(path), "volumes: shm"), "spec.template.spec.volumes", "a list of volumes"),
        (_line_of(str(path), "jobTemplate:"), "spec.jobTemplate", "an object"),
        (_line_of(str(path), "containers: \"vllm"), "spec.containers", "a list of containers"),
    ]
    assert all(p.level == "error" for p in problems if "rejects this object" in p.message)
    # the container whose name is a list is refused for its type, not said to lack a name as well
    assert _required(problems) == []
    assert "quantities must match the regular expression" in next(
        p.message for p in problems if '"nvidia.com/gpu"]' in p.message)


def test_terraform_templates_convert_scalars_but_not_shapes(tmp_path):
    # Terraform's kubernetes_manifest converts a number to the string the schema wants; a string cannot become a list
    path = tmp_path / "vllm.tftpl"
    path.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "${model_id}", "--port", 8000]
          env:
%{ for key, value in env ~}
            - name: ${key}
              value: ${value}
%{ endfor ~}
            - name: VLLM_PORT
              value: 8000
          volumeMounts: /dev/shm
""")
    assert [(line, field) for line, field, _ in _refusals(scan([str(path)]).problems)] == [
        (_line_of(str(path), "volumeMounts:"), "spec.template.spec.containers[0].volumeMounts")]


NAMED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
"""


def test_a_name_with_control_or_invisible_characters_is_refused_on_its_line(tmp_path):
    """ValidateObjectMeta refuses a name that is not an RFC 1123 subdomain; one holding a C1 control (CSI),
    a bidirectional override, a line separator or a space is refused whatever the rest (said escaped)."""
    for written in ('"llm\\x9b2J"', '"a\\u2066b"', '"a\\u2028b"', '"a b"', '"x\\x85"', '"\\ufeffllm"'):
        path = tmp_path / "deploy.yaml"
        path.write_text(NAMED.format(name=written))
        inventory = scan([str(path)])
        [problem] = [p for p in inventory.problems if "metadata.name" in p.message]
        assert (problem.level, problem.line, problem.column) == ("error", 4, 9)
        assert "RFC 1123 subdomain" in problem.message
        assert not any(0x7f <= ord(c) <= 0x9f or c in "\u2066\u2028\ufeff" for c in problem.message)
        assert len(inventory.servers) == 1


def test_names_a_template_or_placeholder_writes_are_not_judged(tmp_path):
    for written in ("chat", "Chat-${ENV}", "chat_%s", "chat.v1", '"{{ .Release.Name }}"', "LLAMA"):
        path = tmp_path / "deploy.yaml"
        path.write_text(NAMED.format(name=written))
        assert not [p for p in scan([str(path)]).problems if "metadata.name" in p.message], written
