"""A wrapper chart whose Chart.yaml declares a dependency that charts/ does not hold (not vendored: Argo CD or
`helm dependency build` fetches it at install) reads that dependency's values under `.Values.<name or alias>`:
Helm coalesces the dependency's own values.yaml there. Those values are not in the tree, so what the wrapper's
templates read there and its own values do not set is unknown, never nil and never an error."""

from __future__ import annotations

import json

from vramlint.cli import main

CHART = """\
apiVersion: v2
name: dashboards
version: 0.1.0
dependencies:
  - name: dashboards-upstream
    alias: upstream
    version: 3.2.1
    repository: https://charts.example.org
"""

# the route to a vLLM deployment's dashboards: a chart naming no vLLM is not evaluated (test_charts_naming_no_vllm.py)
ROUTE = """\
{{- $cfg := index .Values.upstream "server.ini" | default dict -}}
{{- $root := index $cfg "server" | default dict -}}
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: dashboards
spec:
  hostnames:
    - {{ .Values.hostname | default "vllm-dashboards.local" }}
  rules:
    - backendRefs:
        - name: {{ .Values.upstream.service.name }}
          port: {{ .Values.upstream.service.port }}
"""


def _helm_findings(path, capsys):
    main(["check", str(path), "--offline", "--output-format", "json"])
    return [f for f in json.loads(capsys.readouterr().out)["findings"] if "helm template" in f["message"]]


def _chart(tmp_path, chart_yaml=CHART, values="hostname: \"\"\nupstream:\n  replicas: 1\n"):
    chart = tmp_path / "dashboards"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(chart_yaml)
    (chart / "values.yaml").write_text(values)
    (chart / "templates" / "route.yaml").write_text(ROUTE)
    return chart


def test_values_of_a_dependency_not_in_charts_are_unknown_not_nil(tmp_path, capsys):
    # `index .Values.upstream "server.ini"` and `.Values.upstream.service.name` come from the dependency
    assert _helm_findings(_chart(tmp_path), capsys) == []


def test_a_dependency_block_the_values_do_not_write_at_all_is_unknown_too(tmp_path, capsys):
    assert _helm_findings(_chart(tmp_path, values="hostname: \"\"\n"), capsys) == []


def test_the_same_reads_without_a_declared_dependency_still_fail(tmp_path, capsys):
    # nothing coalesces values under `upstream`: Helm stops at the nil pointer, as before; with the chart's own
    # values alone and no release in the tree, that is the value the chart expects from its release (a warning)
    chart_yaml = "apiVersion: v2\nname: dashboards\nversion: 0.1.0\n"
    [finding] = _helm_findings(_chart(tmp_path, chart_yaml=chart_yaml), capsys)
    assert finding["level"] == "warning"
    assert "nil pointer" in finding["message"] and "expects this value from its release" in finding["message"]


def test_a_dependency_switched_off_by_its_condition_gives_no_values(tmp_path, capsys):
    chart_yaml = CHART + "    condition: upstream.enabled\n"
    values = "hostname: \"\"\nupstream:\n  enabled: false\n"
    [finding] = _helm_findings(_chart(tmp_path, chart_yaml=chart_yaml, values=values), capsys)
    assert finding["level"] == "warning"  # the chart's own values alone, no release in the tree: a warning
    assert "nil pointer" in finding["message"]
