"""The defaults-template idiom: `include "x.defaults" . | fromYaml` where the template is `mergeOverwrite $defaults
.Values.x | toYaml` (audit22 D1: a false nil-pointer error because mergeOverwrite was not evaluated and fromYaml of
the unknown text gave Helm's error map). Sprig's mergeOverwrite lets the right-most dict win through mergo's
WithOverride, which keeps the left value where the right one is empty."""

import yaml

from vramlint.helm.chart import chart_values, load_chart, render_chart

HELPERS = """\
{{- define "gw.defaults" -}}
networkPolicy:
  enabled: true
replicas: 1
debug: true
{{- end -}}
{{- define "gw.settings" -}}
{{- $defaults := include "gw.defaults" . | fromYaml -}}
{{- %s $defaults (default dict .Values.gw) | toYaml -}}
{{- end -}}
"""

TEMPLATE = """\
{{- $gw := include "gw.settings" . | fromYaml }}
{{- if $gw.networkPolicy.enabled }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: gw
data:
  replicas: {{ $gw.replicas | quote }}
  debug: {{ $gw.debug | quote }}
{{- end }}
"""


def _render(tmp_path, merge: str, values: str):
    chart = tmp_path / "gw"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gw\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(values)
    (chart / "templates" / "_helpers.tpl").write_text(HELPERS % merge)
    (chart / "templates" / "cm.yaml").write_text(TEMPLATE)
    loaded = load_chart(str(chart))
    vals, _ = chart_values(loaded, [])
    [render] = render_chart(loaded, vals)
    return render


def test_merge_overwrite_lets_the_values_win_except_where_they_are_empty(tmp_path):
    render = _render(tmp_path, "mergeOverwrite", "gw:\n  replicas: 3\n  debug: false\n")
    assert not render.problems
    [doc] = [yaml.safe_load(r.output.text) for r in render.rendered]
    # replicas 3 overrides 1; `debug: false` is Go's zero value, which mergo's WithOverride does not write
    assert doc["data"] == {"replicas": "3", "debug": "true"}


def test_from_yaml_of_an_unevaluated_include_is_unknown_not_a_nil_pointer(tmp_path):
    render = _render(tmp_path, "someFunctionVramlintDoesNotKnow", "gw:\n  replicas: 3\n")
    assert not [p for p in render.problems if "nil pointer" in p.message]
