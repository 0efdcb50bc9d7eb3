"""A Helm chart in which nothing names vLLM (templates, values, Chart.yaml and its dependencies, subcharts, the
values a release gives) cannot hold a vLLM server whatever its values: it is not evaluated, and what would fail
to render in it is no finding of vramlint's. audit24 held out (D-H1): 20 charts of a Terraform-installed product,
none with a values.yaml, gave 20 warnings "helm template fails without values" for charts that deploy no vLLM."""

from __future__ import annotations

import json

from vramlint.cli import main

# a service of the product, installed by a Terraform `helm_release` whose `values` give `.Values.service`
TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Values.service.name }}
  namespace: {{ .Values.service.namespace }}
spec:
  replicas: {{ .Values.replicas | default 1 }}
  template:
    spec:
      containers:
        - name: {{ .Values.service.name }}
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
"""

VLLM_TEMPLATE = TEMPLATE.replace('"{{ .Values.image.repository }}:{{ .Values.image.tag }}"',
                                 '"vllm/vllm-openai:{{ .Values.image.tag }}"')


def _chart(folder, name, template=TEMPLATE, values=None):
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    (folder / "templates" / "deployment.yaml").write_text(template)
    if values is not None:
        (folder / "values.yaml").write_text(values)
    return folder


def _product(tmp_path, count=20):
    for i in range(count):
        _chart(tmp_path / "modules" / f"service{i:02d}" / "helm_chart", f"service{i:02d}")
    return tmp_path


def _run(args, capsys):
    main(["check", *map(str, args), "--offline", "--format", "json"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    helm = [f for f in report["findings"] if "helm template" in f["message"]]
    lines = report.get("notes", []) + [n.removeprefix("vramlint: note: ") for n in captured.err.splitlines()]
    notes = [n for n in lines if "nothing in them names vLLM" in n or "nothing in it names vLLM" in n]
    return helm, notes


def test_twenty_charts_that_name_no_vllm_give_no_warning_and_one_note(tmp_path, capsys):
    helm, notes = _run([_product(tmp_path)], capsys)
    assert helm == []  # was 20 warnings, one per chart
    assert len(notes) == 1 and notes[0].startswith("20 Helm charts not evaluated") and "service00" in notes[0]


def test_a_chart_that_names_vllm_keeps_its_warning(tmp_path, capsys):
    root = _product(tmp_path)
    _chart(root / "modules" / "summary" / "helm_chart", "summary", template=VLLM_TEMPLATE)
    helm, notes = _run([root], capsys)
    assert [f["file"].split("/")[-4] for f in helm] == ["summary"]
    assert helm[0]["level"] == "warning" and "helm template fails without values" in helm[0]["message"]
    assert len(notes) == 1 and notes[0].startswith("20 Helm charts")


def test_a_subchart_named_vllm_counts(tmp_path, capsys):
    umbrella = _chart(tmp_path / "stack", "stack")
    _chart(umbrella / "charts" / "vllm", "engine")
    helm, notes = _run([umbrella], capsys)
    assert helm and notes == []


def test_an_umbrella_whose_values_name_a_vllm_image_counts(tmp_path, capsys):
    values = "engine:\n  image:\n    repository: vllm/vllm-openai\n    tag: v0.10.2\n"
    umbrella = _chart(tmp_path / "stack", "stack", values=values)
    _chart(umbrella / "charts" / "engine", "engine")
    helm, notes = _run([umbrella], capsys)
    assert helm and notes == []


def test_values_a_user_names_that_name_vllm_count(tmp_path, capsys):
    chart = _chart(tmp_path / "app", "app")
    given = tmp_path / "serving.yaml"
    given.write_text("image:\n  repository: vllm/vllm-openai\n  tag: v0.10.2\n")
    helm, notes = _run([chart, "--values", given], capsys)
    assert helm and notes == []
    helm, notes = _run([chart], capsys)
    assert helm == [] and len(notes) == 1 and notes[0].startswith("1 Helm chart not evaluated")
