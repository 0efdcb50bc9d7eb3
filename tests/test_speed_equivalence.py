"""What this round's speed changes must leave as it was: plain scalars resolved from a table keep saying what
is said per place (numbers past float64, integers too long), folders resolved from their parents resolve as
os.path.realpath does (symbolic links included), the JSON encoder writes json.dumps(indent=2)'s text, and a
stream none of whose documents can hold the node bound is read whole."""

from __future__ import annotations

import json
import math
import os

from hypothesis import example, given, settings
from hypothesis import strategies as st

import vramlint.yamlload as yamlload
from vramlint import fsread
from vramlint.report.json import dumps_indented


def test_a_number_past_float64_is_said_at_each_place_even_when_its_text_repeats():
    text = "a: 1e999\nb: 1e999\nc: [1e999, 2]\n"
    for _ in range(2):  # the second load finds the table filled by the first
        docs, problems = yamlload.load_text(text, "f.yaml")
        assert docs[0].data["a"] == "1e999" and docs[0].data["c"] == ["1e999", 2]
        assert [(p.line, p.column) for p in problems] == [(1, 4), (2, 4), (3, 5)]


def test_an_integer_too_long_is_said_at_each_place_and_a_nan_is_not_shared():
    long = "9" * 400
    docs, problems = yamlload.load_text(f"a: {long}\nb: {long}\nc: .nan\nd: .nan\n", "f.yaml")
    data = docs[0].data
    assert data["a"] == long and [p.line for p in problems] == [1, 2]
    assert math.isnan(data["c"]) and math.isnan(data["d"])
    assert data["c"] is not data["d"]  # NaN equals nothing, itself included only by identity: each its own


def test_plain_scalars_resolve_the_same_the_first_and_the_second_time():
    text = "a: true\nb: 'true'\nc: 010\nd: 0x1F\ne: null\nf: ~\ng: 1_000\nh: -.inf\ni: 2024-01-02\nj: x\n"
    first = yamlload.load_text(text, "f.yaml")[0][0].data
    second = yamlload.load_text(text, "f.yaml")[0][0].data
    ruamel = yamlload._ruamel_load(text, "f.yaml")[0][0].data
    for key in "abcdefghij":
        assert first[key] == second[key] == ruamel[key], key
        assert type(first[key]).__name__ == type(second[key]).__name__
    assert first["i"] is not second["i"]  # a date is a mutable object of ruamel's: never shared


def test_folders_resolve_from_their_parents_as_realpath_resolves_them(tmp_path):
    base = str(tmp_path)
    os.makedirs(f"{base}/a/b/c")
    os.makedirs(f"{base}/x/y")
    os.symlink(f"{base}/x", f"{base}/a/lx")
    os.symlink("..", f"{base}/a/b/up")
    os.symlink("/", f"{base}/a/root")
    os.symlink(f"{base}/a/loop2", f"{base}/a/loop1")
    os.symlink(f"{base}/a/loop1", f"{base}/a/loop2")
    folders = [f"{base}/a/b/c", f"{base}/a/lx/y", f"{base}/a/b/up/b/c", f"{base}/a/root/tmp", f"{base}/a/missing/q",
               f"{base}/a/loop1/z", f"{base}/a/b/../lx", f"{base}/a/./b", "/", f"{base}/a/b/up/up/x/y"]
    dirs: dict[str, str] = {}
    for folder in folders + folders:  # the second time from what the first kept
        assert fsread._real_folder(folder, dirs) == os.path.realpath(folder), folder


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(st.one_of(st.text(max_size=4), st.integers(), st.booleans(), st.none()), inner, max_size=4)),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_the_json_encoder_writes_what_json_dumps_writes(value):
    assert dumps_indented(value) == json.dumps(value, indent=2, default=str)


def test_a_long_stream_of_small_documents_is_read_whole_and_a_large_one_among_them_is_said():
    small = "".join(f"---\nkind: Pod\nmetadata:\n  name: p{i}\n" for i in range(20_000))
    assert yamlload._bound_nodes(small, "f.yaml", 250_000) == (small, [])
    big = "---\nitems:\n" + "  - x\n" * 3_000
    text, problems = yamlload._bound_nodes(small + big + small, "f.yaml", 2_000)
    before = small.count("\n")
    assert len(problems) == 1 and before + 3 < problems[0].line <= before + 2 + 3_000  # where it goes over
    assert text.count("\n") == (small + big + small).count("\n")


def test_aliases_are_still_bounded_where_a_document_shares_a_collection():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(6))
    _docs, problems = yamlload.load_text(bomb, "f.yaml")
    assert any("alias bomb" in p.message for p in problems)
    merged = "base: &b {x: 1}\nitem:\n  <<: *b\n  y: 2\n"
    docs, problems = yamlload.load_text(merged, "f.yaml")
    assert dict(docs[0].data["item"]) == {"y": 2, "x": 1} and not problems
    # an asterisk that is no alias (in a value) in a document of more than MAX_ALIAS_NODES nodes: nothing said
    big = "glob: '*.json'\nitems:\n" + "".join(f"  - {i}\n" for i in range(yamlload.MAX_ALIAS_NODES + 10))
    docs, problems = yamlload.load_text(big, "f.yaml")
    assert len(docs[0].data["items"]) == yamlload.MAX_ALIAS_NODES + 10 and not problems


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=16), st.booleans())
def test_text_is_decoded_as_the_utf_8_sig_codec_decodes_it(raw, bom):
    raw = (b"\xef\xbb\xbf" if bom else b"") + raw
    if raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        return  # UTF-16/32 by their marks: another codec
    try:
        expected = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        expected = None
    assert fsread.decode_text(raw) == expected


_TEMPLATED = """\
{{- if .Values.enabled }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Values.name }}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "{{ .Values.len }}"]
          resources:
            limits:
              nvidia.com/gpu: "1"
{{- end }}
"""


def test_copies_of_a_templated_manifest_read_alike_each_under_its_own_name(tmp_path, capsys, monkeypatch):
    from tests._check_util import run

    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "deploy.yaml").write_text(_TEMPLATED)
    monkeypatch.chdir(tmp_path)
    _code, out, err = run(capsys, ".", "--output-format", "json", test_rules=False)
    servers = json.loads(out)["servers"]
    assert [s["file"] for s in servers] == ["a/deploy.yaml", "b/deploy.yaml", "c/deploy.yaml"]
    alike = [{k: v for k, v in s.items() if k not in ("file", "arg_locations", "budget", "findings", "gpu")}
             for s in servers]
    # the template's name as written (unknown until rendered; said, not dropped)
    assert alike[0] == alike[1] == alike[2] and alike[0]["name"] == "{{ .Values.name }}"
    assert all(loc["file"] == s["file"] for s in servers for loc in s["arg_locations"].values())
    for name in ("a", "b", "c"):  # the template's note, said for each file
        assert f"{name}/deploy.yaml: template text (Go template {{{{ }}}})" in err


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \n\r\x85\u2028\u2029\x0b\x0c\x1c", max_size=40),
       st.sampled_from(["x.yaml", "run.sh", ".env", "Dockerfile"]))
def test_source_lines_of_a_text_with_lf_breaks_only_are_its_reader_s_lines(text, name):
    # split on LF when no other break is in the text: the lines a YAML reader (and a shell) counts
    import re

    from vramlint.textfile import _counts_lf_only, source_lines

    expected = text.split("\n") if _counts_lf_only(name, text) else re.split("\r\n|[\r\n\x85\u2028\u2029]", text)
    if expected and expected[-1] == "":
        expected.pop()
    if _counts_lf_only(name, text):
        expected = [line[:-1] if line.endswith("\r") else line for line in expected]
    assert source_lines(text, name) == expected


def test_locations_sent_by_a_worker_are_equal_and_share_their_yaml_path():
    import pickle

    from vramlint.model import Location

    # each path a string of its own, as the extractors build them
    made = [Location(f"f{i}.yaml", i + 1, 3, i + 1, 9, f"spec.template.spec.containers[{i - i}].args[3]")
            for i in range(3)]
    made.append(Location("g.yaml", 1))
    back = pickle.loads(pickle.dumps(made))
    assert back == made and [b.to_json() for b in back] == [m.to_json() for m in made]
    assert len({id(b.yaml_path) for b in back[:3]}) == 1  # one string, not one per Location
    assert len({id(m.yaml_path) for m in made[:3]}) == 3


_TEMPLATE_LINES = st.lists(st.sampled_from(["{{", "}}", "{", "}", "%{", "${", "`", "-", " ", "\t", "\u3000", "a", "#",
                                             "<A>", "<", ">"]), max_size=10).map("".join)


@settings(max_examples=1000, deadline=None)
@given(_TEMPLATE_LINES)
def test_a_line_of_template_actions_only_is_told_as_before(line):
    from vramlint.helm import templated

    # what the reading of control-only lines and neutralize's blank lines computed before their shortcut
    assert templated._control_only(line) == ("{{" in line and not templated._GO_ACTION.sub("", line).strip())
    templated_words = "{{" in line or "%{" in line or "${" in line or templated._PLACEHOLDER.search(line)
    bare = templated._TF_DIRECTIVE.sub("", templated._GO_ACTION.sub("", line)).strip()
    if templated_words:
        assert (templated.neutralize(line)[0] == "") == (not bare)


def test_an_eval_start_is_placed_on_its_eval_line_and_a_doubled_variable_where_it_grows_too_large():
    from vramlint.cmdline import MAX_EXPANDED_CHARS, Token, _search_shell, yaml_token

    doublings = 18
    text = ("c:\n  args:\n    - |\n      A=x\n" + "      A=$A$A\n" * doublings
            + '      CMD="vllm serve org/m --max-model-len 4096"\n      eval "exec $CMD"\n')
    doc = yamlload.load_text(text, "f.yaml")[0][0]
    lines = text.split("\n")
    script = yaml_token("f.yaml", doc.data["c"]["args"], 0, "c.args[0]", lines)
    found = _search_shell([Token("sh", None), Token("-c", None), script], {}, 0)
    assert found is not None and found.entry == "serve"
    assert [t.text for t in found.args] == ["org/m", "--max-model-len", "4096"]
    eval_line = next(i for i, line in enumerate(lines, 1) if line.strip().startswith("eval"))
    assert found.start.line == eval_line
    too_large_at = next(k for k in range(1, doublings + 1) if 2 ** k > MAX_EXPANDED_CHARS)
    first_doubling_line = next(i for i, line in enumerate(lines, 1) if "A=$A$A" in line)
    assert found.problems and found.problems[0].startswith(f"line {first_doubling_line + too_large_at - 1}: variable A")


def test_v0_capture_sizes_are_the_grid_up_to_the_first_size_at_least_max_num_seqs():
    from vramlint import gpus, versions
    from vramlint.budget.profile_graphs import capture_sizes

    a100 = next(spec for spec in gpus.catalog_specs("nvidia") if spec.name == "A100-80GB")
    beh = versions.behavior("0.6.3", a100, {}, {}, None, 4096)
    assert beh.engine == "v0"
    grid = [1, 2, 4] + [8 * i for i in range(1, 1025)]  # vLLM 0.6's _BATCH_SIZES_TO_CAPTURE
    for max_num_seqs in [*range(-2, 8300, 13), 0.5, 8191.5, float("nan"), float("inf")]:
        largest = next((s for s in grid if s >= max_num_seqs), grid[-1])
        assert capture_sizes(beh, max_num_seqs, 10**6, False) == ([], [s for s in grid if s <= largest])


_SHELL_PIECES = ["vllm", "serve", "--port", "8000", " ", " ", "  ", "\n", ";", "&&", "|", "'a b'", '"x y"', '"$M"',
                 "$M", "${M:-d}", "`id`", "{a,b}", "\\\n", "\\ ", "> log", "2>&1", "<<EOF\nbody\nEOF\n", "# c\n",
                 "M=q", "if", "then", "fi", "for", "x", "in", "do", "done", "(", ")", "=", "\ue000", "'", '"',
                 "bash -c", "\"vllm serve \ue000\"", "--x=\ue000", "\u2983a\u2984"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_SHELL_PIECES), max_size=24))
@example(["bash -c", "\"vllm serve \ue000\""])  # a shell's script keeps its marks: only its own words are unknown
@example(["bash -c", "\"vllm serve \u2983a\u2984\""])
@example(["vllm", "serve", "{a,b}", "--port", "$M"])
def test_a_command_with_nothing_to_expand_is_walked_as_when_it_was_split_again(pieces):
    # cmdline.ScriptWalk takes a command's words as written when its text has no `$`, backquote, brace or mark,
    # instead of splitting it again over the variables: the commands, their variables and what is said are those
    # of the second split
    from vramlint import cmdline

    text = "M=org/m\n" + " ".join(pieces)

    def walked():
        said: list[str] = []
        walk = cmdline.ScriptWalk(text, {}, lambda words: True, [], lambda first: "", said)
        out = [(r.words, dict(r.env)) if isinstance(r, cmdline.Command) else (r.start, r.end) for r in walk.run()]
        return out, said, walk.variables

    fast = walked()
    saved = cmdline._SPLIT_AS_WRITTEN
    cmdline._SPLIT_AS_WRITTEN = cmdline.re.compile("")  # matches every text: every command split again
    try:
        assert walked() == fast
    finally:
        cmdline._SPLIT_AS_WRITTEN = saved
