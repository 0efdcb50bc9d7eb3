"""The bounded evaluator, values merging, and templated plain files."""

from __future__ import annotations

import os

from vramlint.helm import gotmpl
from vramlint.helm.templated import load_templated_text, neutralize
from vramlint.helm.values import Values, coalesce, load_values_text
from vramlint.model import Location

FIX = os.path.relpath(os.path.join(os.path.dirname(__file__), "fixtures", "helm"))


def render(template: str, values_text: str):
    data, origins, problems = load_values_text(values_text, "values.yaml")
    assert problems == []
    src = gotmpl.TemplateSource("c/templates/t.yaml", "t.yaml", template)
    nodes, defines = gotmpl.parse_template(template, 0)
    ev = gotmpl.Evaluator([src], {k: (0, v) for k, v in defines.items()}, gotmpl.to_go_number(data), origins,
                          {"Chart": {"Name": "c", "AppVersion": "1.0"}, "Release": {"Name": "r"}})
    return ev.render(0, nodes), ev


def test_numbers_print_as_helm_prints_float64():
    assert gotmpl.go_float(8192.0) == "8192"
    assert gotmpl.go_float(1000000.0) == "1e+06"
    assert gotmpl.go_float(1048576.0) == "1.048576e+06"
    assert gotmpl.go_float(0.9) == "0.9"
    assert gotmpl.go_float(0.00001) == "1e-05"
    out, _ = render("a: {{ .Values.n }} b: {{ .Values.n | int }} c: {{ printf \"%d\" .Values.n }}", "n: 1000000\n")
    assert out.text == "a: 1e+06 b: 1000000 c: %!d(float64=1e+06)"


def test_every_output_character_knows_its_origin():
    out, _ = render("x: --len={{ .Values.a.b }}\n", "a:\n  b: 4096\n")
    start = out.text.index("4096")
    assert all(o == Location("values.yaml", 2, 6, 2, 10, "a.b") for o in out.origins[start:start + 4])
    assert out.origins[0] == (0, 0)  # template text: (template id, offset)


def test_toyaml_sorts_keys_and_tracks_each_leaf_line():
    out, _ = render("r:\n  {{- toYaml .Values.r | nindent 2 }}", "r:\n  z: 1\n  a:\n    - x\n    - '2'\n")
    assert out.text == 'r:\n  a:\n  - x\n  - "2"\n  z: 1'
    line_z = out.text.split("\n").index("  z: 1")
    off = sum(len(x) + 1 for x in out.text.split("\n")[:line_z]) + 2
    assert out.origins[off].line == 2


def test_define_include_if_else_range_with_and_variables():
    tpl = ('{{- define "n" -}}{{ .Release.Name }}-{{ .Chart.Name }}{{- end -}}\n'
           'name: {{ include "n" . }}\n'
           '{{- $x := .Values.x }}\n'
           'x: {{ if gt (int $x) 5 }}big{{ else }}small{{ end }}\n'
           '{{- with .Values.m }}\nm: {{ .k | default "d" | upper }}{{ end }}\n'
           'l: {{ range $i, $v := .Values.l }}{{ $i }}={{ $v }},{{ end }}\n'
           'e: {{ .Values.missing | default 7 }}\n')
    out, ev = render(tpl, "x: 7\nm:\n  k: v\nl: [a, b]\n")
    assert out.text == "name: r-c\nx: big\nm: V\nl: 0=a,1=b,\ne: 7\n"
    assert ev.reasons == []


def test_unknown_stays_unknown_and_is_explained():
    out, ev = render("a: {{ .Values.x | someFunc }}\n{{ if .Files.Get \"x\" }}b: 1{{ end }}\n", "x: 1\n")
    assert gotmpl.UNKNOWN_MARKER in out.text
    assert "b: 1" not in out.text
    assert any("someFunc" in r for r in ev.reasons)
    assert any("condition" in r for r in ev.reasons)


def test_required_and_nil_pointer_are_template_errors():
    import pytest

    with pytest.raises(gotmpl.TemplateError, match="need it"):
        render('{{ required "need it" .Values.x }}', "y: 1\n")
    with pytest.raises(gotmpl.TemplateError, match="nil pointer"):
        render("{{ .Values.a.b.c }}", "y: 1\n")


def test_runaway_template_is_bounded():
    import pytest

    with pytest.raises(gotmpl.TemplateError, match="limit|deeply"):
        render('{{- define "loop" }}{{ include "loop" . }}{{ end }}{{ include "loop" . }}', "a: 1\n")


def test_coalesce_maps_merge_lists_replace_null_deletes():
    base_data, base_origins, _ = load_values_text("a:\n  b: 1\n  c: 2\nl: [1, 2]\nd:\n  e: 1\n", "v.yaml")
    vals = Values(base_data, base_origins, ["v.yaml"])
    data, origins, _ = load_values_text("a:\n  b: 10\nl: [3]\nd: null\n", "o.yaml")
    coalesce(vals, data, origins, "o.yaml")
    assert vals.data == {"a": {"b": 10, "c": 2}, "l": [3]}
    assert vals.origins[("a", "b")].file == "o.yaml"
    assert vals.origins[("a", "c")].file == "v.yaml"
    assert vals.origins[("l", 0)].file == "o.yaml" and ("l", 1) not in vals.origins
    assert not any(k[0] == "d" for k in vals.origins)


def test_templated_plain_files_keep_columns_and_mark_unknown():
    text = "a: {{ .X }}\nb: ${var}\n%{ if x ~}\nc: <MODEL_ID>\nd: 1\n"
    cleaned, seen = neutralize(text)
    lines = cleaned.split("\n")
    assert [len(x) for x in lines[:2]] == [len("a: {{ .X }}"), len("b: ${var}")]
    assert lines[2] == ""
    assert len(seen) == 4
    docs, problems, note = load_templated_text(text, "f.yaml")
    assert problems == [] and note and "unknown" in note
    assert docs[0].data["d"] == 1


def test_templated_manifests_through_scan():
    from vramlint.scan import scan

    inv = scan([os.path.join(FIX, "plain")])
    by_file = {os.path.basename(s.file): s for s in inv.servers}
    assert {"templated-deployment.yaml", "terraform.yaml.tftpl", "placeholders.yaml"} <= set(by_file)
    assert not [p for p in inv.problems if "invalid YAML" in p.message]
    tf = by_file["terraform.yaml.tftpl"]
    assert tf.gpu is None or tf.gpu.count is None  # `nvidia.com/gpu: ${gpus}` is unknown, not guessed
    assert tf.image == "vllm/vllm-openai:v0.7.3"


def test_sprig_split_gives_parts_keyed_by_index_and_empty_separator_splits_characters():
    # sprig: split "/" "org/model" is map[_0:org _1:model]; (split ...)._1 is the part after the first "/"
    out, _ = render('name: {{ printf "--served-model-name=%s" ((split "/" .Values.model)._1) }}\n'
                    'n: {{ len (splitList "" "abc") }}\n', "model: ibm-granite/granite-3.3-8b-instruct\n")
    assert out.text == "name: --served-model-name=granite-3.3-8b-instruct\nn: 3\n"


def test_sprig_semver_compare_as_masterminds_semver_reads_constraints():
    # a chart writing `--model` only for images older than a release (`semverCompare "<v0.13.0" .Values.tag`)
    tpl = ('{{- if semverCompare "<v0.13.0" .Values.tag }}old{{ else }}new{{ end }}\n'
           '{{ semverCompare "~1.2" .Values.k }} {{ semverCompare "^0.2.3" "0.3.0" }} '
           '{{ semverCompare ">1.0, <2.0 || >=3" "3.1" }} {{ semverCompare "1.1 - 1.3" "1.3.0" }} '
           '{{ semverCompare "1.2.x" "1.3.0" }}\n')
    out, _ = render(tpl, "tag: v0.11.0\nk: 1.2.9\n")
    assert out.text == "old\ntrue false true true false\n"
    out, _ = render(tpl, "tag: v0.13.0\nk: 1.3.0\n")
    assert out.text.startswith("new\nfalse ")
    # a prerelease (`>=1.21-0`, common against the cluster version) is not modelled: unknown, and said
    out, ev = render('{{ if semverCompare ">=1.21-0" .Values.v }}a{{ else }}b{{ end }}\n', "v: 1.25.0\n")
    assert "a" not in out.text and "b" not in out.text
    assert any("semverCompare" in str(r) for r in ev.reasons)
