"""A chart whose own `fail` refuses its defaults (a token its values.yaml leaves empty, to be given with --set at
install) asks the installer for values: a warning with the chart's values alone or with an overlay found beside
it, an error for the values a user names as a release's that still trip it, nothing once the overlay gives the
value."""

from pathlib import Path

from vramlint.scan import scan

SECRET = """\
{{- $key := .Values.registry.apiKey | default "" }}
{{- if not $key }}
{{- fail "registry.apiKey is not set: install with --set registry.apiKey=$KEY" }}
{{- end }}
apiVersion: v1
kind: Secret
metadata:
  name: registry-key
stringData:
  KEY: {{ $key | quote }}
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "8192"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _chart(tmp_path: Path, overlay: str | None = None) -> Path:
    chart = tmp_path / "chat"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: chat\nversion: 0.2.0\n")
    (chart / "values.yaml").write_text("registry:\n  # given at install time\n  apiKey: \"\"\n")
    (chart / "templates" / "secret.yaml").write_text(SECRET)
    (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    if overlay is not None:
        (chart / "values-staging.yaml").write_text(overlay)
    return chart


def _refusals(inv):
    return [p for p in inv.problems if "registry.apiKey is not set" in p.message]


def test_fail_over_the_charts_own_defaults_is_a_warning_and_the_server_is_read(tmp_path):
    inv = scan([str(_chart(tmp_path))])
    [problem] = _refusals(inv)
    assert problem.level == "warning" and problem.line == 3
    assert "(`fail`)" in problem.message and "install time" in problem.message
    assert [s.model for s in inv.servers] == ["Qwen/Qwen2.5-1.5B-Instruct"]


def test_an_overlay_release_that_trips_the_charts_fail_is_an_error(tmp_path):
    chart = _chart(tmp_path, overlay="registry:\n  apiKey: ''\n")
    inv = scan([str(chart)], values_files=[str(chart / "values-staging.yaml")])
    assert [p.level for p in _refusals(inv)] == ["error"]
    # found beside the chart rather than named: the key is the one the chart says to give with --set at install
    inv = scan([str(chart)])
    assert [p.level for p in _refusals(inv)] == ["warning", "warning"]
    inv = scan([str(_chart(tmp_path / "given", overlay="registry:\n  apiKey: s3cr3t\n"))])
    assert [p.level for p in _refusals(inv)] == ["warning"]  # only the defaults' render asks for it
