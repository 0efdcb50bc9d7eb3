"""A chart with no values.yaml has no defaults: it is installed only with the values a release gives (a deploy
tool's values file beside it), so a nil pointer when it is rendered with none is a warning that asks for those
values, not an error. A chart whose own values.yaml leaves the key out still fails `helm install` as it is."""

from __future__ import annotations

import json

from vramlint.cli import main

# a vLLM stack's chart: one that names no vLLM is not evaluated at all (test_charts_naming_no_vllm.py)
CHART = "apiVersion: v2\nname: jobs\ndescription: migrations of the vLLM gateway's database\nversion: 0.0.1\n"

TEMPLATE = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate-{{ .Values.app.migration.tag }}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: "busybox:{{ .Values.app.migration.tag }}"
"""


def _findings(path, capsys):
    main(["check", str(path), "--offline", "--output-format", "json"])
    return [f for f in json.loads(capsys.readouterr().out)["findings"] if "helm template" in f["message"]]


def _chart(tmp_path):
    chart = tmp_path / "migrations"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(CHART)
    (chart / "templates" / "job.yaml").write_text(TEMPLATE)
    return chart


def test_a_chart_without_defaults_asks_for_values_in_a_warning(tmp_path, capsys):
    chart = _chart(tmp_path)
    [finding] = _findings(chart, capsys)
    assert finding["level"] == "warning"
    assert "nil pointer evaluating interface {}.migration" in finding["message"]
    assert "no values.yaml" in finding["message"]
    assert finding["line"] == 4


def test_a_chart_whose_own_defaults_leave_the_key_out_fails_as_it_is(tmp_path, capsys):
    chart = _chart(tmp_path)
    (chart / "values.yaml").write_text("app:\n  name: jobs\n")
    [finding] = _findings(chart, capsys)
    # no release in the tree gives the key: the chart expects it from its release (audit21 C3), a warning
    assert finding["level"] == "warning"
    assert finding["message"].startswith("helm template fails with the chart's own values: nil pointer")
