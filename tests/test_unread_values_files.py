"""A values file in a chart's folder that Helm does not read by itself and that vramlint cannot place as the chart's
values says so, once per chart (audit24: four `custom-values-*.yaml` model overlays beside an umbrella chart with no
values.yaml, installed with `helm install ./charts/vllm --values ...`, were silent). A file placed as the chart's
values, or one that names no vLLM, gets no such note."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan

SUB_VALUES = """\
image:
  repository: vllm/vllm-openai
  tag: v0.9.1
fullnameOverride: vllm
replicaCount: 1
autoscaling:
  enabled: false
vllm:
  model: ""
  maxModelLen: 4096
  gpuMemoryUtilization: 0.9
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Values.fullnameOverride }}
spec:
  replicas: {{ .Values.replicaCount }}
  template:
    spec:
      containers:
        - name: vllm
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          args:
            - --model={{ .Values.vllm.model }}
            - --max-model-len={{ .Values.vllm.maxModelLen }}
            - --gpu-memory-utilization={{ .Values.vllm.gpuMemoryUtilization }}
"""

OVERLAY = """\
vllm:
  model: "Qwen/Qwen3-8B"
  maxModelLen: 4096
fullnameOverride: "vllm-qwen3-8b"
monitoring:
  enabled: true
"""


def _umbrella(tmp_path, overlays):
    files = {
        "stack/Chart.yaml": "apiVersion: v2\nname: stack\nversion: 0.1.0\ndependencies:\n- name: vllm\n"
                            "  version: 0.1.0\n  repository: file://./charts/vllm\n",
        "stack/charts/vllm/Chart.yaml": "apiVersion: v2\nname: vllm\nversion: 0.1.0\n",
        "stack/charts/vllm/values.yaml": SUB_VALUES,
        "stack/charts/vllm/templates/deployment.yaml": DEPLOYMENT,
        **{f"stack/{name}": text for name, text in overlays.items()},
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path / "stack")


def _unread(inventory):
    return [p for p in inventory.problems if "Helm does not read by itself" in p.message]


def test_values_files_beside_a_chart_that_nothing_reads_are_said_once(tmp_path):
    root = _umbrella(tmp_path, {"custom-values-qwen3-8b.yaml": OVERLAY,
                                "custom-values-qwen3-30b.yaml": OVERLAY.replace("8b", "30b").replace("8B", "30B")})
    [note] = _unread(scan([root]))
    assert note.level == "note" and note.file.endswith("custom-values-qwen3-30b.yaml") and note.line == 1
    assert "no values.yaml of its own" in note.message and "custom-values-qwen3-8b.yaml" in note.message


def test_a_values_file_naming_no_vllm_or_placed_as_the_charts_is_not_said(tmp_path):
    root = _umbrella(tmp_path, {"custom-values-ui.yaml": "ui:\n  replicas: 2\n"})
    assert _unread(scan([root])) == []
    # a chart with a values.yaml whose shape the overlay has: read as its values (a profile), not said
    chart = tmp_path / "plain"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: plain\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(SUB_VALUES)
    (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    (chart / "overrides").mkdir()
    (chart / "overrides" / "qwen-values.yaml").write_text(
        OVERLAY.replace("monitoring:\n  enabled: true\n", "replicaCount: 2\nautoscaling:\n  enabled: false\n"))
    inventory = scan([str(chart)])
    assert _unread(inventory) == []
    assert "Qwen/Qwen3-8B" in [s.model for s in inventory.servers]
