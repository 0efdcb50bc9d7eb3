"""Helm charts as Helm renders them (audit21's false errors, causes C1, C4, C5 and C7 of its tally); charts of our
own, shaped after the audited ones."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from vramlint.cli import main

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "{{ .Values.vllm.model }}", "--max-model-len", "{{ .Values.vllm.maxLen }}"]
          resources:
            limits:
              nvidia.com/gpu: {{ .Values.resources.gpus }}
"""


def _tree(root: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(root)


def _check(capsys, root: str) -> dict:
    main(["check", root, "--offline", "--format", "json", "--gpu", "L4"])
    return json.loads(capsys.readouterr().out)


def _errors(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["level"] == "error"]


def test_a_values_file_helm_refuses_is_the_one_error_not_a_nil_pointer_per_value(tmp_path, capsys):
    # a committed merge conflict: Helm stops at values.yaml and renders nothing; rendered with empty values, each
    # `.Values.x.y` was a nil-pointer error of its own
    root = _tree(tmp_path, {
        "chart/Chart.yaml": "apiVersion: v2\nname: llm\nversion: 0.1.0\n",
        "chart/values.yaml": "vllm:\n  model: Qwen/Qwen2.5-7B-Instruct\n<<<<<<< HEAD\n  maxLen: 8192\n=======\n"
                             "  maxLen: 4096\n>>>>>>> feature\nresources:\n  gpus: 1\n",
        "chart/templates/deployment.yaml": DEPLOYMENT,
    })
    errors = _errors(_check(capsys, root))
    assert [e["file"].rsplit("/", 1)[-1] for e in errors] == ["values.yaml"]
    assert not any("nil pointer" in e["message"] for e in errors)


def test_a_field_of_a_parenthesised_nil_is_empty_and_dollar_is_the_included_data(tmp_path, capsys):
    # Go: `(.Values.extra).args` with no `extra` is the zero value (evalPipeline digs the nil interface down to an
    # invalid value, evalField of it gives zero); inside `include "x" (dict "root" .)`, `$` is that dict
    helpers = """\
    {{- define "llm.args" -}}
    {{- with (.root.Values.extra).args }}{{ . }}{{ end -}}
    --model {{ $.root.Values.vllm.model }}
    {{- end -}}
    """
    template = DEPLOYMENT.replace(
        'args: ["--model", "{{ .Values.vllm.model }}", "--max-model-len", "{{ .Values.vllm.maxLen }}"]',
        'command: ["sh", "-c", "python3 -m vllm.entrypoints.openai.api_server {{ include "llm.args" (dict "root" .) }} --max-model-len 8192"]')
    root = _tree(tmp_path, {
        "chart/Chart.yaml": "apiVersion: v2\nname: llm\nversion: 0.1.0\n",
        "chart/values.yaml": "vllm:\n  model: Qwen/Qwen2.5-7B-Instruct\n  maxLen: 8192\nresources:\n  gpus: 1\n",
        "chart/templates/_helpers.tpl": helpers,
        "chart/templates/deployment.yaml": template,
    })
    report = _check(capsys, root)
    assert _errors(report) == []
    [server] = report["servers"]
    assert server["model"] == "Qwen/Qwen2.5-7B-Instruct" and server["args"]["max_model_len"] == 8192


def test_an_umbrella_chart_without_templates_renders_its_subcharts(tmp_path, capsys):
    # the umbrella has only charts/: its subchart's templates are the chart's (Helm renders them with the
    # umbrella's values), not plain YAML with `{{ }}` in it
    sub = DEPLOYMENT.replace("{{ .Values.vllm.model }}", "{{ .Values.model }}").replace(
        "{{ .Values.vllm.maxLen }}", "{{ .Values.maxLen }}").replace("{{ .Values.resources.gpus }}", "1")
    root = _tree(tmp_path, {
        "umb/Chart.yaml": "apiVersion: v2\nname: stack\nversion: 0.1.0\n",
        "umb/values.yaml": "engine:\n  model: Qwen/Qwen2.5-7B-Instruct\n  maxLen: 8192\n",
        "umb/charts/engine/Chart.yaml": "apiVersion: v2\nname: engine\nversion: 0.1.0\n",
        "umb/charts/engine/values.yaml": "model: facebook/opt-125m\nmaxLen: 2048\n",
        "umb/charts/engine/templates/deployment.yaml": sub,
    })
    report = _check(capsys, root)
    assert _errors(report) == []
    [server] = report["servers"]
    assert server["model"] == "Qwen/Qwen2.5-7B-Instruct" and server["args"]["max_model_len"] == 8192


def test_values_the_charts_defaults_leave_unset_are_one_warning_per_chart(tmp_path, capsys):
    # the chart's values.yaml has no `vllm:` and no release in the tree gives it: helm stops at the first nil
    # pointer of the release, so two templates failing for it are one finding, naming the key and the other place;
    # a warning, as the chart expects the value from its release (audit21 C3)
    root = _tree(tmp_path, {
        "chart/Chart.yaml": "apiVersion: v2\nname: llm\nversion: 0.1.0\n",
        "chart/values.yaml": "resources:\n  gpus: 1\n",
        "chart/templates/deployment.yaml": DEPLOYMENT,
        "chart/templates/second.yaml": DEPLOYMENT.replace("-vllm", "-vllm-b"),
    })
    report = _check(capsys, root)
    nil = [f for f in report["findings"] if "nil pointer" in f["message"]]
    assert [f["level"] for f in nil] == ["warning"]
    assert ".Values.vllm is not set in its values.yaml, so the chart expects this value from its release" in \
        nil[0]["message"]
    assert "so do 1 more places" in nil[0]["message"]


def test_a_data_file_of_a_chart_that_is_no_valid_yaml_is_a_note(tmp_path, capsys):
    # conf/engine.yaml is read by the chart's template through .Files.Get and tpl: never applied as written, so
    # its `{{ if }}` halves are no invalid manifest (audit21 C2: an error); a stray manifest outside any chart stays one
    bad = "engine:\n  model: {{ .Values.model }}\n  image: vllm/vllm-openai:v0.10.2\n  {{- if .Values.x }}\n" \
          "  extra: [\n  {{- end }}\n"
    root = _tree(tmp_path, {
        "chart/Chart.yaml": "apiVersion: v2\nname: llm\nversion: 0.1.0\n",
        "chart/values.yaml": "model: Qwen/Qwen2.5-7B-Instruct\n",
        "chart/conf/engine.yaml": bad,
        "chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: engine}\ndata:\n"
                                   "  engine.yaml: |\n{{ tpl (.Files.Get \"conf/engine.yaml\") . | indent 4 }}\n",
        "loose/engine.yaml": bad,
    })
    report = _check(capsys, root)
    invalid = {f["file"].split(str(tmp_path))[-1].lstrip("/"): f["level"] for f in report["findings"]
               if f["message"].startswith("invalid YAML")}
    assert invalid == {"chart/conf/engine.yaml": "note", "loose/engine.yaml": "error"}
