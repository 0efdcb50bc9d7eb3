"""Helm names each template file by its path, so the checksum idiom `include (print $.Template.BasePath
"/configmap.yaml") . | sha256sum` renders that file: it is no undefined template. When the included file fails on
its own (its `fail` over the chart's defaults), that failure is said once, at that file, and the Deployment that
includes it is still read."""

from pathlib import Path

from vramlint.helm.chart import extract_chart
from vramlint.scan import scan

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gen
spec:
  template:
    metadata:
      annotations:
        checksum/config: {{ include (print $.Template.BasePath "/settings.yaml") . | sha256sum }}
        checksum/creds: {{ include (print $.Template.BasePath "/creds.yaml") . | sha256sum }}
    spec:
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", {{ .Values.model | quote }}, "--max-model-len", "4096"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""

SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: gen-settings
data:
  MODEL: {{ .Values.model | quote }}
"""

CREDS = """\
{{- if not .Values.hubToken }}
{{- fail "hubToken must be given with --set hubToken=..." }}
{{- end }}
apiVersion: v1
kind: Secret
metadata:
  name: gen-creds
stringData:
  HF_TOKEN: {{ .Values.hubToken | quote }}
"""


def _chart(tmp_path: Path) -> Path:
    chart = tmp_path / "gen"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gen\nversion: 1.0.0\n")
    (chart / "values.yaml").write_text("model: Qwen/Qwen2.5-0.5B-Instruct\nhubToken: \"\"\n")
    (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    (chart / "templates" / "settings.yaml").write_text(SETTINGS)
    (chart / "templates" / "creds.yaml").write_text(CREDS)
    return chart


def test_a_template_file_included_by_its_path_is_defined_and_its_failure_said_once(tmp_path):
    inv = scan([str(_chart(tmp_path))])
    assert [s.model for s in inv.servers] == ["Qwen/Qwen2.5-0.5B-Instruct"]
    notes = extract_chart(str(tmp_path / "gen"), []).notes
    assert not [n for n in notes if "is not defined in the chart" in n]
    refusals = [p for p in inv.problems if "hubToken must be given" in p.message]
    assert [(Path(p.file).name, p.line, p.level) for p in refusals] == [("creds.yaml", 2, "warning")]
