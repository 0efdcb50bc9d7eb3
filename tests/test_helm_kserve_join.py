"""A Helm chart that renders a KServe ServingRuntime and the InferenceService naming it in two templates: KServe
finds the runtime by name in the namespace, so the chart's one server is the two joined (the runtime's container
and args, the InferenceService's resources), however the templates are split."""

from __future__ import annotations

import textwrap

import pytest

from vramlint.helm import extract_charts
from vramlint.helm import render as helm_render

RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: {{ .Release.Name }}-rt
spec:
  containers:
    - name: kserve-container
      image: "{{ .Values.image }}"
      command: ["python", "-m", "vllm.entrypoints.openai.api_server"]
      args:
        - --model={{ .Values.model }}
        - --max-model-len={{ .Values.maxLen }}
  supportedModelFormats:
    - name: vLLM
      autoSelect: true
"""

ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: {{ .Release.Name }}-isvc
spec:
  predictor:
    model:
      modelFormat:
        name: vLLM
      runtime: {{ .Release.Name }}-rt
      resources:
        limits:
          nvidia.com/gpu: "{{ .Values.gpus }}"
"""


def make_chart(root, one_template: bool = False) -> str:
    chart = root / "isvc-chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: isvc-chart\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(textwrap.dedent("""\
        image: vllm/vllm-openai:v0.10.1
        model: Qwen/Qwen2.5-7B-Instruct
        maxLen: 8192
        gpus: 2
    """))
    if one_template:  # the two objects as two documents of one template
        (chart / "templates" / "serving.yaml").write_text(RUNTIME + "---\n" + ISVC)
    else:
        (chart / "templates" / "servingruntime.yaml").write_text(RUNTIME)
        (chart / "templates" / "inferenceservice.yaml").write_text(ISVC)
    return str(chart)


def check(servers) -> None:
    [s] = servers  # one server: no unjoined runtime template, no InferenceService without its runtime
    assert s.kind == "InferenceService" and s.name == "release-name-isvc"
    assert s.model == "Qwen/Qwen2.5-7B-Instruct" and s.args["max_model_len"] == 8192
    assert s.vllm_version == "0.10.1"
    assert s.gpu is not None and s.gpu.count == 2
    assert not any("not among the scanned files" in n for n in s.notes)


@pytest.mark.parametrize("one_template", [False, True])
def test_evaluated_chart_joins_runtime_and_inference_service_across_templates(tmp_path, one_template):
    servers, _problems, _notes = extract_charts([make_chart(tmp_path, one_template)])
    check(servers)
    [s] = servers
    # positions still map to the values lines that set them
    assert s.arg_locations["max_model_len"].file.endswith("values.yaml")
    assert s.arg_locations["max_model_len"].line == 3


@pytest.mark.skipif(not helm_render.sdk_available(), reason="helm-python-sdk not installed")
def test_helm_rendered_chart_joins_runtime_and_inference_service_across_templates(tmp_path):
    servers, _problems, _notes = extract_charts([make_chart(tmp_path)], render=True)
    check(servers)
