"""The C-backed YAML load (libyaml) gives what ruamel's round-trip load gives: data, types, every position, the
same problems; files it does not decide itself are read by ruamel. And whole runs agree: every server, finding
and position of `check` on the project's fixtures and examples is the same with either load."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vramlint.yamlload as yamlload

pytest.importorskip("yaml._yaml")

ROOT = Path(__file__).resolve().parent.parent


def tree(node):
    """Data, types and every position of a loaded node, comparable across the two loads."""
    if isinstance(node, dict):
        lc = node.lc
        return ("map", lc.line, lc.col, {repr(k): list(v) for k, v in (lc.data or {}).items()},
                [(repr(k), tree(v)) for k, v in dict.items(node)], [tree(m) for m in yamlload._merged_maps(node)])
    if isinstance(node, list):
        lc = node.lc
        return ("seq", lc.line, lc.col, {k: list(v) for k, v in (lc.data or {}).items()}, [tree(v) for v in node])
    name = type(node).__name__
    if node is None:
        return ("null",)
    if isinstance(node, bool) or name == "ScalarBoolean":  # ruamel: an anchored boolean (see the test below)
        return ("bool", bool(node))
    if isinstance(node, int):
        return ("int", int(node), str(node))
    if isinstance(node, float):
        return ("float", "nan" if math.isnan(node) else repr(float(node)), str(node))
    if isinstance(node, str):
        return (name if name in ("LiteralScalarString", "FoldedScalarString") else "str", str(node))
    return (name, str(node))


def both(text: str, file: str = "f.yaml"):
    """(C load, ruamel load) of ``text``; the C load is None when it leaves the text to ruamel."""
    return yamlload._c_load(text, file), yamlload._ruamel_load(text, file)


# ruamel refuses a block scalar whose first line holds only spaces, fewer than the lines after it;
# libyaml and go-yaml (Kubernetes, Helm, compose) read it: the one error only ruamel gives
RUAMEL_ONLY_ERROR = "invalid YAML: more indented follow up line than first in a block scalar"


def assert_same(text: str, file: str = "f.yaml", must_decide: bool = False) -> bool:
    fast, slow = both(text, file)
    if fast is None:
        assert not must_decide, f"the C load left {file} to ruamel"
        return False
    if any(p.message == RUAMEL_ONLY_ERROR for p in slow[1]):
        assert not any(p.level == "error" for p in fast[1])
        return True
    assert [(d.index, tree(d.data)) for d in fast[0]] == [(d.index, tree(d.data)) for d in slow[0]], file
    assert fast[1] == slow[1], file
    return True


def yaml_files(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def test_fixtures_and_examples_load_the_same_through_libyaml_as_through_ruamel():
    decided = 0
    files = yaml_files(ROOT / "tests" / "fixtures", ROOT / "examples")
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if yamlload.nesting_problem(text, str(path)) is None:
            decided += assert_same(text, str(path))
    # what is left to ruamel are templates (invalid YAML until rendered) and hostile fixtures
    assert decided >= 0.8 * len(files), (decided, len(files))


def test_every_example_is_read_by_the_c_load():
    for path in yaml_files(ROOT / "examples"):
        assert_same(path.read_text(encoding="utf-8"), str(path), must_decide=True)


SNIPPETS = [
    # scalars of every YAML 1.2 kind, plain and quoted
    "a: x\nb: 'q # not a comment'\nc: \"d\\tq\"\nd: 1\ne: -1\nf: 0\ng: 017\nh: 1_000\ni: 0x1F\nj: 0x1f\nk: 0o17\n"
    "l: 0b101\nm: 1.5\nn: .5\no: 1e3\np: 1.0E+3\nq: .inf\nr: -.Inf\ns: .nan\nt: true\nu: False\nv: yes\nw: on\n"
    "x: null\ny: ~\nz: NULL\naa: 12:30\nab: +12\nac: 1.\nad: -0\n",
    # keys that are not strings
    "1: one\ntrue: t\nnull: n\n1.5: f\n'q': quoted\n",
    # block scalars
    "a: |\n  line 1\n  line 2\nb: >\n  folded\n  text\n\n  para\nc: |-\n  x\nd: >+\n  y\n\ne: 1\n",
    # empty values: before another key, with a comment, last of a mapping, at the end, in sequences
    "a:\nb: 1\nc: # comment\nd:\n  e:\n  f:  # c\n\n  # y\ng:\n",
    "a:\n  b: 1\n  c:",
    "a:\n  - b:\n  - c\n  -\n  - d\n",
    "x:\n  y:\n    z:\n\n\n# trailing comment\n",
    # flow collections
    "a: [1, 'two', {b: c}, []]\nd: {e: [f, g], h: {}}\n",
    # anchors, aliases, merge keys (a map and a list of maps), overridden merged keys
    "base: &b {x: 1, y: [1, 2]}\nother: &o\n  z: 3\nuse1: *b\nm:\n  <<: *b\n  x: 9\nn:\n  <<: [*b, *o]\n  w: 0\n",
    "anchored: &s text\nagain: *s\nnum: &n 5\nnum2: *n\nbool: &t true\nbool2: *t\n",
    # duplicate keys: the last is kept, said with the first's line
    "a: 1\nb: 2\na: 3\n",
    "m:\n  k: 1\n  k: 2\n  k: 3\n",
    # several documents, empty ones counted
    "---\na: 1\n---\n---\n# only a comment\n---\nb: 2\n...\n---\n- 1\n",
    "",
    "# only a comment\n",
    "just a scalar\n",
    "'quoted root'\n",
    # line ends and odd spacing
    "a: 1\r\nb:\r\n  - x\r\n  - y\r\n",
    "a:   spaced   \nb:  1\n",
    "- - - deep\n  - x\n-\n  - y\n",
    "? a\n: 1\n",
    "key with spaces: v\n\"quoted key\": v\n",
    # template placeholders read as YAML: `{{HF_TOKEN}}` is a flow mapping whose key is a mapping; flow keys
    # without a value; sequences and mappings of text as keys (ruamel's CommentedKeySeq / CommentedKeyMap)
    "token: {{HF_TOKEN}}\nb: {{ .Values.x }}\nb2: {{ .Values.x }}\nc: {x, y: 1}\nd: [{k}]\ne: {a , b}\n"
    "? [a, b]\n: v\n? {a: b}\n: w\n",
    "stringData:\n  t: {{HF_TOKEN}}\n  u: {{HF_TOKEN}, {HF_TOKEN}}  # said as a duplicate key\n",
    # plain decimal integers and booleans in a mapping as a key: plain int and bool in ruamel's CommentedKeyMap
    # too (a vLLM --config file of such keys and a 1 MB value went to ruamel whole, 3 CPU-s a reading)
    "? {a: 1}\n: v\n? {b: -2, c: true, d: +7}\n: w\n? {e: yes, f: ~, g: 99999999999999999999999}\n: x\n"
    "m: {? {x: 1} : 2}\n? x: 1\n  y: FALSE\n: block\n",
    "? {x: 1}\n: a\n? {x: 1}\n: b\n",  # a duplicate key: the last kept, said on its line
]


@pytest.mark.parametrize("text", SNIPPETS)
def test_snippets_load_the_same(text):
    assert_same(text, must_decide=True)


def test_a_large_file_loads_the_same():
    one = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n"
           "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
           "          args: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, '4096']\n"
           "      tolerations:\n        - {key: nvidia.com/gpu, operator: Exists}\n      x-empty:\n      x-after: 1\n"
           "      quoted: 'a # b'\n      folded: >\n        two\n        lines\n      yes-is-text: yes\n"
           "      octal-1-1: 0777\n      anchored: &a {k: [1, 2.5, .inf, null, true]}\n      alias: *a\n"
           "      merged:\n        <<: *a\n        own: 1\n")
    text = "---\n".join(one.replace("name: llm", f"name: llm-{i}") for i in range(200))
    assert len(text) >= 64 * 1024
    assert_same(text, must_decide=True)
    [first, *_], _ = yamlload.load_text(text, "f.yaml")
    assert first.data["spec"]["template"]["spec"]["yes-is-text"] == "yes"  # YAML 1.2, as ruamel reads it
    assert first.data["spec"]["template"]["spec"]["merged"]["k"][1] == 2.5


def test_an_anchored_boolean_is_a_boolean():
    # ruamel's round-trip load gives an anchored `true` as ScalarBoolean, an int that prints "1"; the C load a
    # plain bool, like every other boolean (the one place the two loads differ on purpose)
    (docs, _), _ = both("a: &t true\nb: *t\n")
    assert docs[0].data["a"] is True and docs[0].data["b"] is True


@pytest.mark.parametrize("text", [
    "a: 2024-01-01\nb: 2024-01-01T10:00:00Z\nc: [2001-12-14t21:59:43.10-05:00, 2001-12-14 21:59:43.10 -5]\n"
    "d: &t 2002-12-14\ne: *t\nf: {2024-02-29: leap}\n",
])
def test_dates_and_times_load_the_same(text):
    # one unquoted date sent a whole file to ruamel's pure-Python load (a 4.9 MB manifest: 43 s)
    assert assert_same(text, must_decide=True)


@pytest.mark.parametrize("text", [
    "n: " + "9" * 400 + "\n",
    "n: -" + "9" * 308 + "\nm: +" + "1_0" * 200 + "\n",  # 308 digits with a sign: a number; 400 with underscores: text
    "a: 1e999\nb: [-2e400, {c: 1.5e309}]\nd: {1e999: x}\n" + "9" * 500 + ": y\n",
    "deep:\n  - {a: [1e999, " + "7" * 5000 + "]}\n  - &x 1e999\n  - *x\n",
])
def test_numbers_too_large_for_a_number_are_kept_as_text_by_both_loads_with_the_same_warnings(text):
    # Go's YAML readers keep them as text; the C load decides these itself (it left whole files to ruamel's
    # pure-Python load for one such number: 4 s for a 50,000-item list with one `1e999`)
    assert assert_same(text, must_decide=True)
    _, problems = yamlload.load_text(text, "f.yaml")
    assert problems and all(p.level == "warning" for p in problems)
    assert [(p.line, p.column) for p in problems] == sorted((p.line, p.column) for p in problems) or \
        len({p.message.split(" ")[0] for p in problems}) > 1


@pytest.mark.parametrize("text", [
    "a: !!int 1\n",  # a tag written in the file (`!!str` with the `!!` handle is the C load's: test_hostile_twelfth)
    "a: !<tag:yaml.org,2002:str> 1\n", "a: &s !!str 1\n", "a: !!str\n",
    "a: !Ref x\n",
    "%YAML 1.1\n---\na: yes\n",  # a directive: YAML 1.1 scalars
    "a: &x 1\nb: &x 2\nc: *x\n",  # a reused anchor: ruamel's note, and its choice of node
    "- &ref:\n  k: v\n",  # an anchor named "ref:" in YAML 1.2
    "{{ .Values.x }}: 1\n",  # a mapping holding a mapping as a key
    # a number in a mapping as a key that ruamel makes its own scalar type (ScalarInt, HexInt, ScalarFloat,
    # ScalarBoolean when anchored), whose text is the key's
    "? {a: 0x1}\n: v\n", "? {a: 0}\n: v\n", "? {a: 1_000}\n: v\n", "? {a: 1.5}\n: v\n", "? {a: &n 1}\n: v\n",
    "? {a: &t true}\n: v\n",
    "a: {x: }\n",  # an empty flow value after a colon: ruamel places it after the colon, libyaml at the `}`
    "a: 2024-13-45\n",  # a date that is no date: ruamel says where
    "a: [1,\n",  # invalid YAML: ruamel's message and position
    "m:\n  <<: *undefined\n",
    "m:\n  <<: 1\n",  # not a mapping to merge: ruamel's message
    "a: b\u2028c\n",  # a line break only YAML 1.1 has
])
def test_what_the_c_load_does_not_decide_is_read_by_ruamel(text):
    assert yamlload._c_load(text, "f.yaml") is None
    (docs, problems), (ruamel_docs, ruamel_problems) = (yamlload.load_text(text, "f.yaml"),
                                                        yamlload._ruamel_load(text, "f.yaml"))
    assert [tree(d.data) for d in docs] == [tree(d.data) for d in ruamel_docs] and problems == ruamel_problems


def test_a_block_scalar_after_a_line_of_spaces_is_read_as_kubernetes_reads_it():
    text = "args: |\n  \n    --model m\n"
    fast, slow = both(text)
    assert fast[1] == [] and fast[0][0].data["args"] == "\n--model m\n"
    assert [p.message for p in slow[1]] == [RUAMEL_ONLY_ERROR]


def test_a_merge_gets_every_key_of_its_source_in_a_top_level_list():
    # ruamel builds the items of a top-level list late: a map merged before it is filled merges nothing (its
    # bug); the C load merges every key, as YAML and go-yaml do
    text = "- m:\n    d: &n0 {a: 1, b: 2}\n    <<: *n0\n- *n0\n"
    fast, slow = both(text)
    assert fast[0][0].data[0]["m"] == {"d": {"a": 1, "b": 2}, "a": 1, "b": 2}
    assert slow[0][0].data[0]["m"] == {"d": {"a": 1, "b": 2}}


def test_an_alias_bomb_is_cut_the_same_way():
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(6))
    fast, slow = both(laughs)
    assert fast is not None and fast[1] == slow[1] and any("alias" in p.message for p in fast[1])
    assert [tree(d.data) for d in fast[0]] == [tree(d.data) for d in slow[0]]


def test_round_trip_load_gives_ruamel_objects_for_editing():
    docs, _ = yamlload.load_text("args: [a, b]\n", "f.yaml", round_trip=True)
    assert type(docs[0].data).__name__ == "CommentedMap" and docs[0].data["args"].fa.flow_style()
    docs, _ = yamlload.load_text("args: [a, b]\n", "f.yaml")
    assert isinstance(docs[0].data, yamlload.YamlMap)


def test_both_loads_say_which_sequences_are_written_in_flow_style():
    # an edit adds a `- item` line only to a block sequence: a fix must see the same style through either load
    text = "a: [x, y]\nb:\n  - x\n  - [y, z]\nc: {k: [1]}\n"
    fast, slow = both(text)
    assert fast is not None
    styles = []
    for [doc] in (fast[0], slow[0]):
        data = doc.data
        styles.append([yamlload.is_flow(s) for s in (data["a"], data["b"], data["b"][1], data["c"]["k"])])
    assert styles[0] == styles[1] == [True, False, True, True]


def test_embedded_yaml_in_a_block_string_is_read_by_the_c_load():
    [outer], _ = yamlload.load_text("cfg: |\n  model: m\n  max-model-len: 4096\n", "f.yaml")
    value = outer.data["cfg"]
    assert type(value) is yamlload.LiteralScalarString
    loc = yamlload.value_location("f.yaml", outer.data, "cfg")
    [inner], problems = yamlload.load_embedded(value, "f.yaml", outer.lines, loc, block=True)
    assert problems == [] and isinstance(inner.data, yamlload.YamlMap)
    assert yamlload.value_location("f.yaml", inner.data, "max-model-len").line == 3


# --- generated documents ---------------------------------------------------------------------------------------

PLAIN = ["x", "two words", "--model=x", "1", "0", "-3", "017", "1_0", "0x1F", "0o7", "1.5", ".5", "1e3", ".inf",
         ".NaN", "true", "False", "yes", "off", "null", "~", "12:30", "a/b:c", "http://h:80/p", "#x", "x#y"]
QUOTED = ["''", '""', "'a # b'", '"c\\"d"', "'it''s'", '"\\u00e9"', "'1'", '"true"']
KEYS = ["a", "b", "c", "key", "1", "true", "null", "'q'", "on", "x y"]


@st.composite
def documents(draw):
    anchors: list[tuple[str, bool]] = []  # (name, is a mapping)

    def scalar() -> str:
        kind = draw(st.integers(0, 9))
        if kind < 5:
            return draw(st.sampled_from(PLAIN))
        if kind < 8:
            return draw(st.sampled_from(QUOTED))
        if kind == 8:
            return "[" + ", ".join(draw(st.lists(st.sampled_from(PLAIN[:12]), max_size=3))) + "]"
        return "{" + ", ".join(f"{k}: {v}" for k, v in draw(st.lists(
            st.tuples(st.sampled_from(KEYS[:4]), st.sampled_from(PLAIN[:8])), max_size=3))) + "}"

    def block(indent: int, depth: int, as_sequence: bool) -> list[str]:
        out = []
        pad = " " * indent
        merged = False
        for _ in range(draw(st.integers(1, 4))):
            if draw(st.integers(0, 9)) == 0:
                out.append(draw(st.sampled_from(["", pad + "# a comment"])))
            head = pad + "- " if as_sequence else pad + draw(st.sampled_from(KEYS)) + ":"
            if not as_sequence and not merged and draw(st.integers(0, 7)) == 0 and any(m for _, m in anchors):
                merged = True
                out.append(pad + "<<: *" + draw(st.sampled_from([n for n, m in anchors if m])))
                continue
            choice = draw(st.integers(0, 9))
            anchor = ""
            if draw(st.integers(0, 9)) == 0:
                anchor = f"&n{len(anchors)}"
            if choice < 4 or depth >= 3:
                value = scalar()
                if anchor:
                    anchors.append((anchor[1:], False))
                out.append(f"{head}{'' if as_sequence else ' '}{anchor + ' ' if anchor else ''}{value}"
                           + draw(st.sampled_from(["", "  # eol"])))
            elif choice == 4:
                out.append(head + draw(st.sampled_from(["", "  # empty"])))
            elif choice == 5 and anchors:
                out.append(f"{head}{'' if as_sequence else ' '}*{draw(st.sampled_from([n for n, _ in anchors]))}")
            elif choice == 6:
                style = draw(st.sampled_from(["|", ">", "|-", ">+"]))
                out.append(f"{head}{'' if as_sequence else ' '}{style}")
                out.extend(" " * (indent + 2) + line for line in draw(st.lists(st.sampled_from(
                    ["line", "two words", "", "  more"]), min_size=1, max_size=3)))
            else:
                nested_sequence = draw(st.booleans())
                out.append(head.rstrip() + (" " + anchor if anchor else ""))
                out.extend(block(indent + 2, depth + 1, nested_sequence))
                if anchor:  # usable once complete: a node holding an alias to itself is the hostile tests' case
                    anchors.append((anchor[1:], not nested_sequence))
        return out

    parts = []
    for _ in range(draw(st.integers(1, 2))):
        anchors.clear()
        # a top-level mapping: merges in a top-level list are the one place ruamel differs (the test above)
        parts.append("\n".join(block(0, 0, False)))
    end = draw(st.sampled_from(["\n", "", "\n\n"]))
    return "\n---\n".join(parts) + end


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_generated_documents_load_the_same(text):
    try:
        yamlload._ruamel_load(text, "f.yaml")
    except (TypeError, KeyError):
        return  # ruamel's own failures on duplicate keys with comments or merges (its bugs, not the C load's)
    assert_same(text)


# --- whole runs --------------------------------------------------------------------------------------------------

def _check_json(capsys, paths: list[str]) -> dict:
    from vramlint.cli import main

    main(["check", *paths, "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    report.pop("run", None)  # timing
    return report


def test_check_reports_the_same_servers_findings_and_positions_with_either_load(capsys, monkeypatch):
    paths = [str(ROOT / "examples"), *sorted(str(p) for p in (ROOT / "tests" / "fixtures").iterdir()
                                             if p.is_dir() and p.name not in ("check",))]
    fast = _check_json(capsys, paths)
    monkeypatch.setattr(yamlload, "_c_load", lambda *args, **kwargs: None)
    slow = _check_json(capsys, paths)
    assert fast == slow
    assert len(fast["servers"]) > 50


SEGMENT_DOC = "kind: Deployment\nmetadata: {name: d%d}\nspec:\n  x: [1, 2, {a: b}]\n  y: &a {k: v}\n  z: *a\n"


@pytest.mark.parametrize(("odd", "where"), [
    ("kind: ConfigMap\nx: !!int 1\n", "middle"),  # a tag written in the file
    ("kind: ConfigMap\nx: !Ref thing\ny: !!str 1\n", "middle"),  # `!!str` is the C load's, the other tag not
    ("kind: ConfigMap\nx: !Ref thing\n", "end"),
    ("kind: ConfigMap\nx: a\u2028b\n", "start"),  # a YAML 1.1 line break: refused by libyaml unread
    ("kind: ConfigMap\nx: &ref: 1\n", "middle"),  # an anchor name libyaml splits
    ("kind: ConfigMap\nx: [1,\n", "middle"),  # invalid YAML: nothing after it is read, as ruamel reads it
    ("kind: ConfigMap\nx: {y: }\n", "end"),
    ("kind: ConfigMap\nx: 2024-13-45\n", "middle"),
    ("", "middle"),  # an empty document
    ("kind: ConfigMap\nx: 1\ny: 2\nx: 3\n", "middle"),  # a duplicate key (decided by libyaml)
])
def test_a_stream_with_one_document_libyaml_does_not_decide_reads_as_ruamel_reads_it_whole(odd, where):
    # one such document sent the whole file to ruamel's pure-Python load (a 4.9 MB stream: 43 s); now only that
    # document is ruamel's, and the result is the same as ruamel's load of the whole file
    plain = [SEGMENT_DOC % i for i in range(6)]
    at = {"start": 0, "middle": 3, "end": 6}[where]
    text = "---\n".join(plain[:at] + [odd] + plain[at:])
    docs, problems = yamlload.load_text(text, "f.yaml")
    ruamel_docs, ruamel_problems = yamlload._ruamel_load(text, "f.yaml")
    assert [(d.index, tree(d.data)) for d in docs] == [(d.index, tree(d.data)) for d in ruamel_docs]
    assert sorted(problems, key=repr) == sorted(ruamel_problems, key=repr)
    assert all(d.lines == text.splitlines() for d in docs)
    plain_doc = docs[0] if where == "end" else docs[-1]
    assert type(plain_doc.data).__name__ == "YamlMap"  # read by the libyaml load, not ruamel's
    streamed: list = []
    each_problems = yamlload.load_each(text, "f.yaml", streamed.append, streamed.clear)
    assert [(d.index, tree(d.data)) for d in streamed] == [(d.index, tree(d.data)) for d in ruamel_docs]
    assert sorted(each_problems, key=repr) == sorted(ruamel_problems, key=repr)


def test_documents_that_only_ruamel_reads_past_the_bound_leave_the_file_to_ruamel_whole():
    text = "---\n".join(f"a: !!int {i}\n" for i in range(yamlload.MAX_SEGMENTS_TO_RUAMEL + 5))
    docs, problems = yamlload.load_text(text, "f.yaml")
    assert [tree(d.data) for d in docs] == [tree(d.data) for d in yamlload._ruamel_load(text, "f.yaml")[0]]


def test_a_large_document_only_ruamel_would_read_is_not_read_and_said_where_it_goes_over_the_bound():
    # ruamel's pure-Python load takes about 80 us a node: a 240,000-node values file with one tag took 24 s
    n = yamlload.MAX_RUAMEL_NODES
    text = "image: vllm/vllm-openai:v0.9.0\nx: !!int 1\n" + "".join(f"k{i}: v{i}\n" for i in range(n // 2 + 10))
    docs, problems = yamlload.load_text(text, "values.yaml")
    assert docs == []
    assert [p.level for p in problems] == ["warning"] and abs(problems[0].line - n // 2) <= 2  # k{n/2} is there
    assert "slower reader" in problems[0].message
    small = "image: vllm/vllm-openai:v0.9.0\nx: !!int 1\n" + "".join(f"k{i}: v{i}\n" for i in range(n // 4))
    docs, problems = yamlload.load_text(small, "values.yaml")
    assert problems == [] and str(docs[0].data["x"]) == "1"  # ruamel read it (its tagged int)
    # in a stream, only that document is not read
    stream = "a: 1\n---\n" + text + "---\nb: 2\n"
    docs, problems = yamlload.load_text(stream, "f.yaml")
    assert [d.data for d in docs] == [{"a": 1}, {"b": 2}] and [p.level for p in problems] == ["warning"]
