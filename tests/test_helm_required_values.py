"""A chart's `required` value left empty in its own values.yaml is the installer's to give: with the chart's
values alone it is a warning that says so, and with an overlay found beside the chart (a profile an install may
complete with --set); the values a user names as the release's that still leave it empty fail to render."""

from pathlib import Path

from vramlint.scan import scan

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.0
          args: ["--model", {{ required "model.name is required" .Values.model.name | quote }}]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _chart(tmp_path: Path, overlay: str | None = None) -> Path:
    chart = tmp_path / "serve"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: serve\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text('model:\n  name: ""\n')
    (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    if overlay is not None:
        (chart / "values-prod.yaml").write_text(overlay)
    return chart


def _required(inv):
    return [p for p in inv.problems if "model.name is required" in p.message]


def test_required_value_empty_in_the_charts_own_values_is_a_warning(tmp_path):
    inv = scan([str(_chart(tmp_path))])
    [problem] = _required(inv)
    assert problem.level == "warning" and problem.line == 11
    assert "asks for this value at install time" in problem.message


def test_an_overlay_that_leaves_the_required_value_empty_fails_to_render(tmp_path):
    chart = _chart(tmp_path, overlay="replicaCount: 2\nmodel:\n  name: ''\n")
    # named as the release's values, values-prod.yaml is all the release gives: helm refuses it
    inv = scan([str(chart)], values_files=[str(chart / "values-prod.yaml")])
    assert [p.level for p in _required(inv)] == ["error"]
    # found beside the chart, it is a profile that an install may complete (--set): the chart asks, as with its
    # defaults
    inv = scan([str(chart)])
    [found, defaults] = sorted(_required(inv), key=lambda p: "values-prod.yaml" not in p.message)
    assert found.level == defaults.level == "warning"
    assert "helm template fails with values-prod.yaml, found in the repository" in found.message
    inv = scan([str(_chart(tmp_path / "set", overlay="model:\n  name: Qwen/Qwen2.5-7B-Instruct\n"))])
    assert [p.level for p in _required(inv)] == ["warning"]
    assert "Qwen/Qwen2.5-7B-Instruct" in [s.model for s in inv.servers]
