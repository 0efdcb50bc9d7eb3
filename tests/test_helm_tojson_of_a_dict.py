"""`dict "k" .Values.x | toJson` / `toPrettyJson`: the dict holds values read from the chart's values (carried with
their origin); they are written as JSON like any other (Go's json.Marshal / MarshalIndent), not left unknown."""

import json

import yaml

from vramlint.helm.chart import chart_values, load_chart, render_chart

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: ui
data:
  compact.json: {{ dict "endpoint" .Values.ui.endpoint "retries" .Values.ui.retries "tags" .Values.ui.tags | toJson | quote }}
  pretty.json: |
{{ dict "endpoint" .Values.ui.endpoint "extra" nil | toPrettyJson | nindent 4 }}
"""


def test_a_dict_of_values_is_written_as_json(tmp_path):
    chart = tmp_path / "ui"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: ui\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("ui:\n  endpoint: http://engine:8000/v1\n  retries: 3\n  tags: [a, b]\n")
    (chart / "templates" / "configmap.yaml").write_text(CONFIGMAP)
    loaded = load_chart(str(chart))
    vals, _ = chart_values(loaded, [])
    [render] = render_chart(loaded, vals)
    assert not render.problems and not [r for r in render.reasons if "JSON" in r]
    [doc] = [r.output.text for r in render.rendered]
    data = yaml.safe_load(doc)
    assert json.loads(data["data"]["compact.json"]) == {"endpoint": "http://engine:8000/v1", "retries": 3,
                                                        "tags": ["a", "b"]}
    pretty = data["data"]["pretty.json"]
    assert json.loads(pretty) == {"endpoint": "http://engine:8000/v1", "extra": None}
    assert '\n  "endpoint": "http://engine:8000/v1",\n' in pretty  # MarshalIndent's two spaces
