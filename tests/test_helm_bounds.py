"""Hostile chart templates and values: every one ends quickly, in bounded memory, with a finding on its line.

Each case is a chart made in a temporary folder with the hostile template beside an ordinary one: the hostile
template's finding names its file and line, and the ordinary template's server is still extracted. Helm's own
behaviour for the non-limit cases was checked with helm-python-sdk (Helm 3's engine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from vramlint.helm import extract_charts, gotmpl

OK_TEMPLATE = """apiVersion: v1
kind: Pod
spec:
  containers:
    - name: vllm
      image: vllm/vllm-openai:v0.8.0
      args: [--model, facebook/opt-125m]
"""

BOMB = "\n".join(
    ["bomb: |", "  a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"  {c}: &{c} [{', '.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
)

# (template, where the finding is: "t" = the template's line 2, "v" = a values line; a word of the message)
CASES = {
    "printf doubling": ('{{ $s := "xx" }}{{ range until 60 }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ $s }}',
                        "t", "limit"),
    "cat doubling": ('{{ $s := "xx" }}{{ range until 60 }}{{ $s = cat $s $s }}{{ end }}{{ $s }}', "t", "limit"),
    "replace doubling": ('{{ $s := "xx" }}{{ range until 60 }}{{ $s = replace "x" "xx" $s }}{{ end }}', "t", "limit"),
    "indent huge width": ('{{ "a\\nb" | indent 1000000000 }}', "t", "limit"),
    "nindent width from values": ('{{ "a\\nb" | nindent .Values.width }}', "v", "limit"),
    "repeat": ('{{ repeat 1000000000 "ab" }}', "t", "limit"),
    "range over a huge integer": ("{{ range 100000000000 }}{{ end }}", "t", "limit"),
    "until from values": ("{{ range until (int .Values.n) }}x{{ end }}", "v", "limit"),
    "untilStep": ("{{ range untilStep 0 100000000000 1 }}x{{ end }}", "t", "limit"),
    "seq": ("{{ seq 1 100000000000 }}", "t", "limit"),
    "nested empty ranges": ("{{ range until 1000 }}{{ range until 1000 }}{{ range until 1000 }}{{ end }}{{ end }}"
                            "{{ end }}", "t", "steps"),
    "include fan-out": ('{{ define "a" }}{{ range until 1000 }}{{ end }}{{ end }}{{ range until 1000 }}'
                        '{{ include "a" . }}{{ end }}', "t", "steps"),
    "list doubling": ("{{ $l := list 1 }}{{ range until 60 }}{{ $l = concat $l $l }}{{ end }}{{ len $l }}", "t",
                      "limit"),
    "nested list printed": ("{{ $l := list 1 }}{{ range until 60 }}{{ $l = list $l $l }}{{ end }}{{ $l }}", "t",
                            "limit"),
    "fromYaml alias bomb": ("{{ fromYaml .Values.bomb | toYaml }}", "v", "limit"),
    "fromJson nested deep": ('{{ fromJson "' + "[" * 50000 + "]" * 50000 + '" }}', "t", "nested"),
    "printf precision": ('{{ printf "%.100000000f" 1.0 }}', None, None),
    "catastrophic regexMatch": ('{{ regexMatch "(a+)+$" "' + "a" * 5000 + 'b" }}', None, None),
    "catastrophic regexReplaceAll": ('{{ regexReplaceAll "(a|aa)*c" "' + "a" * 5000 + '" "x" }}', None, None),
    "unclosed action": ("a: 1\nb: {{ .Values.x \nc: 2\n", "t", "unclosed action"),
    "unclosed action before the next": ("a: 1\nb: {{ .Values.x \nc: {{ .Values.y }}\n", "t", "unclosed action"),
    "unterminated string": ('a: 1\nb: {{ "abc }}\n', "t", "unterminated quoted string"),
    "integer literal overflow": ("a: 1\nb: {{ add 99999999999999999999 1 }}\n", "t", "integer overflow"),
    "float literal overflow": ("a: 1\nb: {{ int 1e400 }}\n", "t", "illegal number syntax"),
    "deep parentheses": ("a: 1\n{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", "t1", "nested too deeply"),
    "deep ifs": ("{{ if 1 }}" * 3000 + "x" + "{{ end }}" * 3000, "t1", "nested too deeply"),
}

VALUES = f"width: 1000000000\nn: 100000000000\nbig: {'9' * 30}\n{BOMB}\n"


def _chart(tmp_path, template: str, values: str = VALUES):
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(values)
    (chart / "templates" / "hostile.yaml").write_text("a: 1\n" + template if not template.startswith("a: 1")
                                                      else template)
    (chart / "templates" / "ok.yaml").write_text(OK_TEMPLATE)
    return chart


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_template_is_bounded_and_reported_on_its_line(tmp_path, monkeypatch, name):
    template, where, word = CASES[name]
    chart = _chart(tmp_path, template)
    monkeypatch.chdir(tmp_path)
    start = time.process_time()  # CPU time: on a shared machine wall time measures the neighbours
    servers, problems, _notes = extract_charts(["c"])
    assert time.process_time() - start < 5
    assert [s.file for s in servers] == ["c/templates/ok.yaml"], (servers, problems)  # the rest of the chart goes on
    hostile = [p for p in problems if p.file != "c/templates/ok.yaml"]
    if where is None:
        assert not hostile, hostile
        return
    assert len(hostile) == 1, hostile
    (p,) = hostile
    assert word in p.message, p.message
    if where == "v":
        assert p.file == "c/values.yaml" and p.line is not None and "used at c/templates/hostile.yaml:2" in p.message
    else:
        assert (p.file, p.line) == ("c/templates/hostile.yaml", 1 if where == "t1" else 2), p
    assert chart.exists()


def _render(template: str, values: dict | None = None) -> str:
    src = gotmpl.TemplateSource("c/templates/t.yaml", "t.yaml", template)
    nodes, defines = gotmpl.parse_template(template, 0)
    ev = gotmpl.Evaluator([src], {k: (0, v) for k, v in defines.items()}, gotmpl.to_go_number(values or {}), {}, {})
    return ev.render(0, nodes).text


def test_integers_behave_like_helms_int64():
    # what Helm 3 prints for each (helm-python-sdk): sprig's arithmetic wraps around like Go's int64
    assert _render("{{ mul 9223372036854775807 2 }} {{ add 9223372036854775807 1 }}") == \
        "-2 -9223372036854775808"
    assert _render("{{ div -9223372036854775808 -1 }} {{ div -7 2 }} {{ mod -7 2 }}") == \
        "-9223372036854775808 -3 -1"
    assert _render('{{ int "99999999999999999999" }} {{ atoi "99999999999999999999" }} {{ int "1.5" }} '
                   '{{ int "010" }}') == "0 9223372036854775807 0 8"
    assert _render("{{ until -3 }} {{ untilStep 0 10 3 }} {{ seq 1 3 }} {{ repeat 3 \"ab\" }}") == \
        "[0 -1 -2] [0 3 6 9] 1 2 3 ababab"
    with pytest.raises(gotmpl.TemplateError, match="overflows int"):
        _render("{{ 18446744073709551615 }}")
    n = 2
    for _ in range(40):
        n = gotmpl._wrap64(n * n)
    assert _render('{{ $n := 2 }}{{ range until 40 }}{{ $n = mul $n $n }}{{ end }}{{ $n }}') == str(n)


def test_inf_and_nan_reaching_integer_conversion_are_unknown_not_guessed():
    # Go's int64(+Inf) is whatever the CPU gives (amd64 and arm64 differ): unknown, with the reason
    src = gotmpl.TemplateSource("c/templates/t.yaml", "t.yaml", "x")
    for template in ("{{ int .Values.inf }}", "{{ add .Values.nan 1 }}", '{{ int (float64 "inf") }}',
                     "{{ until (int .Values.inf) }}", "{{ ceil .Values.inf | int }}"):
        nodes, _ = gotmpl.parse_template(template, 0)
        ev = gotmpl.Evaluator([src], {}, {"inf": float("inf"), "nan": float("nan")}, {}, {})
        assert ev.render(0, nodes).text == gotmpl.UNKNOWN_MARKER, template
        assert any("depends on the CPU" in r for r in ev.reasons), ev.reasons
    assert _render('{{ float64 "1e400" }} {{ toJson .Values.f }}|', {"f": [float("inf")]}) == "0 |"


def test_from_yaml_and_from_json_return_helms_error_map():
    assert _render('{{ fromYaml "[1, 2]" | keys }}') == "[Error]"
    assert _render('{{ (fromJson "[1").Error }}') == "unexpected end of JSON input" or \
        "Error" in _render('{{ fromJson "[1" }}')
    assert "cannot unmarshal number" in _render('{{ (fromJson "{\\"a\\": 1e400}").Error }}')
    small_bomb = "a: &a [1, 2]\nb: [*a, *a]"
    assert _render("{{ fromYaml .Values.y }}", {"y": small_bomb}) == "map[a:[1 2] b:[[1 2] [1 2]]]"


def test_regex_functions_use_go_syntax_and_linear_time():
    pytest.importorskip("re2")
    assert _render('{{ regexMatch "(a)\\\\1" "aa" }}') == "false"  # not RE2 syntax: sprig ignores the error
    with pytest.raises(gotmpl.TemplateError, match="error parsing regexp"):
        _render('{{ regexFind "(a" "aa" }}')
    assert _render('{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}') == "-W-xxW-"
    assert _render('{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "$1W" }}') == "---"  # Go reads `$1W` as a name
    assert _render('{{ regexReplaceAllLiteral "a(x*)b" "-ab-axxb-" "${1}" }}') == "-${1}-${1}-"
    start = time.process_time()
    assert _render('{{ regexMatch "(a+)+$" "' + "a" * 100000 + 'b" }}') == "false"
    assert time.process_time() - start < 1


def test_values_with_inf_or_nan_are_refused_as_helm_refuses_them(tmp_path, monkeypatch):
    chart = _chart(tmp_path, "x: {{ .Values.a }}\n", "a: 1\nlimits:\n  gpu: .inf\n")
    monkeypatch.chdir(tmp_path)
    _servers, problems, _notes = extract_charts(["c"])
    found = [p for p in problems if p.file == "c/values.yaml"]
    assert [(p.line, p.column) for p in found] == [(3, 8)]
    assert "json: unsupported value: +Inf" in found[0].message
    assert chart.exists()


_PEAK_CHILD = """
import json, os, sys
from vramlint.helm import extract_charts
found = {}
peaks = {}
for name in json.load(sys.stdin):
    os.chdir(os.path.join(sys.argv[1], str(len(found))))
    _servers, problems, _notes = extract_charts(["c"])
    found[name] = [p.message for p in problems]
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the (possibly large) pytest process that started us
    with open("/proc/self/status") as fh:
        peaks[name] = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
print(json.dumps({"peak_kb": max(peaks.values()), "peaks": peaks, "problems": found}))
"""


def test_all_hostile_templates_stay_under_300_mb(tmp_path):
    # one process evaluates every case: its peak resident memory bounds each of them
    for i, (template, _where, _word) in enumerate(CASES.values()):
        (tmp_path / str(i)).mkdir()
        _chart(tmp_path / str(i), template)
    root = os.path.dirname(os.path.dirname(os.path.abspath(gotmpl.__file__)))
    env = {**os.environ, "PYTHONPATH": root}
    proc = subprocess.run([sys.executable, "-c", _PEAK_CHILD, str(tmp_path)], input=json.dumps(list(CASES)),
                          capture_output=True, text=True, env=env, timeout=300, check=True)
    result = json.loads(proc.stdout)
    assert result["peak_kb"] < 300_000, result["peaks"]  # the peak after each case, in order
    assert not any("too large for vramlint" in m for ms in result["problems"].values() for m in ms), result


def test_a_values_alias_bomb_is_refused_on_its_line_even_when_no_template_uses_it(tmp_path, monkeypatch):
    values = "model: facebook/opt-125m\n" + alias_bomb_text(9, 9)
    _chart(tmp_path, "x: {{ .Values.model }}\n", values)
    monkeypatch.chdir(tmp_path)
    start = time.process_time()
    servers, problems, _notes = extract_charts(["c"])
    assert time.process_time() - start < 5
    found = [p for p in problems if p.file == "c/values.yaml"]
    assert len(found) == 1 and "aliases" in found[0].message and found[0].line > 2, found
    assert [s.file for s in servers] == ["c/templates/ok.yaml"]


def alias_bomb_text(levels: int, width: int) -> str:
    lines = ["bomb:", "  l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"
