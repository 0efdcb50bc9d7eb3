"""Zarf fills in `###ZARF_VAR_NAME###` (and `###ZARF_CONST_...###`, `###ZARF_PKG_TMPL_...###`) in the manifests and
Helm values files it deploys: the API server and vLLM see the value given for the variable, never the marker, so
a marker where a quantity or a number belongs is unknown, not a refusal. A value that is no quantity stays one."""

from __future__ import annotations

import json

from vramlint.cli import main

CHART = """\
apiVersion: v2
name: engine
version: 0.1.0
"""

TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-engine
spec:
  selector:
    matchLabels: {app: engine}
  template:
    metadata:
      labels: {app: engine}
    spec:
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.9.2
          args:
            - --model=Qwen/Qwen2.5-0.5B-Instruct
            - --max-model-len={{ .Values.maxModelLen }}
          resources:
            limits:
              nvidia.com/gpu: {{ .Values.gpuLimit }}
"""

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: engine
spec:
  selector:
    matchLabels: {app: engine}
  template:
    metadata:
      labels: {app: engine}
    spec:
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.9.2
          args: ["--model=Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len=###ZARF_VAR_MAX_CONTEXT###"]
          resources:
            limits:
              nvidia.com/gpu: "GPU_COUNT"
"""


def _errors(path, capsys):
    main(["check", str(path), "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    return [f for f in report["findings"] if f["level"] == "error"], report


def test_a_chart_value_zarf_fills_in_is_no_refused_quantity(tmp_path, capsys):
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(CHART)
    (chart / "templates" / "deployment.yaml").write_text(TEMPLATE)
    (chart / "values.yaml").write_text('maxModelLen: "###ZARF_VAR_MAX_CONTEXT###"\n'
                                       'gpuLimit: "###ZARF_VAR_GPU_LIMIT###"\n')
    errors, report = _errors(chart, capsys)
    assert errors == []
    [server] = report["servers"]
    assert server["model"] == "Qwen/Qwen2.5-0.5B-Instruct"


def test_a_manifest_marker_is_unknown_and_a_word_that_is_no_quantity_is_refused(tmp_path, capsys):
    path = tmp_path / "deployment.yaml"
    path.write_text(MANIFEST)
    errors, _ = _errors(path, capsys)
    # GPU_COUNT is written as it is: the API server cannot decode it (the marker beside it is not said)
    assert [e["rule"] for e in errors] == ["VRL102"]
    assert "'GPU_COUNT'" in errors[0]["message"]
    assert not any("ZARF" in e["message"] for e in errors)

    path.write_text(MANIFEST.replace('"GPU_COUNT"', '"###ZARF_VAR_GPU_LIMIT###"'))
    errors, _ = _errors(path, capsys)
    assert errors == []
