"""The bound on a YAML document's nodes, computed before anything is parsed (vramlint.yamlload._most_nodes): it
is never below the nodes libyaml reads, so no document over the limit is built, and it is tight enough that a
long plain list (100,000 args) is not parsed twice."""

from __future__ import annotations

import pytest

from vramlint.yamlload import _most_nodes, load_text


def _libyaml_nodes(text: str) -> int:
    from yaml._yaml import CParser
    from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent

    parser = CParser(text)
    n = 0
    try:
        while parser.check_event():
            n += isinstance(parser.get_event(), (ScalarEvent, SequenceStartEvent, MappingStartEvent, AliasEvent))
    finally:
        parser.dispose()
    return n


SHAPES = [
    "- - - - a\n",  # block sequences nested on one line
    "a: {b: {c: d}}\n",
    "[[[[a]]]]\n",
    "{a, b, c}\n",  # flow keys with no `:`
    "? a\n? b\n",  # explicit keys
    "a:\nb:\n",  # empty values
    "- \n-\n-",  # empty entries, the last with no line break
    "x: [a: b, c: d]\n",  # single-pair mappings in a flow sequence
    "a: &x [1, 2]\nb: *x\n",
    "--- a\n--- b\n...\n",
    '{"a":1,"b":[1,2]}\n',  # JSON: `:` with no blank after it
    "k: |\n  - not: [an, entry]\n",  # indicators inside a block scalar: counted, more than there are
    "apiVersion: apps/v1\nkind: Deployment\nspec:\n  containers:\n    - name: vllm\n      args: [--model, x]\n",
]


@pytest.mark.parametrize("text", SHAPES)
def test_the_bound_is_never_below_what_libyaml_reads(text):
    assert _most_nodes(text, 0, len(text)) >= _libyaml_nodes(text)


def test_a_long_block_list_is_bounded_by_its_entries_not_three_per_line():
    text = "args:\n" + "".join(f'  - "--served-model-name=n{i}"\n' for i in range(100_000))
    nodes = _libyaml_nodes(text)
    assert nodes == 100_003  # the root mapping, its key, the list, 100,000 items
    assert _most_nodes(text, 0, len(text)) < nodes + 10  # under the 250,000 limit: no counting parse of it


def test_flow_collections_nested_on_every_line_are_refused_past_the_limit():
    # 11 nodes a line and no comma: three a line or comma would be 300 here, under the limit of 500, and the
    # document of 1,102 nodes would be built
    text = "a:\n" + "- [[[[[[[[[[x]]]]]]]]]]\n" * 100 + "---\nb: 1\n"
    docs, problems = load_text(text, "f.yaml", max_nodes=500)
    assert [d.data for d in docs] == [{"b": 1}]
    assert [(p.line, p.level) for p in problems] == [(47, "warning")]
    assert "more than 500 nodes" in problems[0].message


def test_documents_under_the_limit_among_many_are_read_and_the_one_over_is_said_on_its_line():
    small = "kind: ConfigMap\ndata: {a: '1'}\n"
    big = "kind: ConfigMap\nx: [" + ",".join(["1"] * 400) + "]\n"
    text = "---\n".join([small] * 300 + [big] + [small] * 300)
    docs, problems = load_text(text, "f.yaml", max_nodes=300)
    assert len(docs) == 600 and all(d.data["kind"] == "ConfigMap" for d in docs)
    assert docs[300].index == 301  # the documents after the blanked one keep their index
    assert [p.line for p in problems] == [300 * 3 + 2]
