"""A document that may be over the node bound is counted by composing it when every node passes through the
composer's resolve (vramlint.yamlload._counted_by_composing): the count must be the events' count, the place
said when over must be the events' place, and the load must read the composition it kept as it reads the text."""

from __future__ import annotations

import pytest

from vramlint import yamlload
from vramlint.yamlload import _COMPOSED, _node_count_over, load_text


def _events_over(text: str, max_nodes: int) -> int | None:
    """What the events' count says (the path `_node_count_over` takes for text that has an alias or a tag)."""
    from yaml._yaml import CParser
    from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent

    parser = CParser(text)
    n = 0
    try:
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, (ScalarEvent, SequenceStartEvent, MappingStartEvent, AliasEvent)):
                n += 1
                if n > max_nodes:
                    return event.start_mark.line + 1
    except Exception:  # noqa: BLE001
        return None
    finally:
        parser.dispose()
    return None


def _services(count: int) -> str:
    return "services:\n" + "".join(f"  s{i}:\n    image: vllm/vllm-openai:v0.9.2\n    command: --max-model-len {i}\n"
                                   for i in range(count))


@pytest.mark.parametrize("bound", [46, 50, 51, 52, 60])
def test_the_composed_count_says_what_the_events_say(bound):
    text = _services(8)  # 1 + 1 + 1 + 8 x (1 + 1 + 2 + 2) = 51 nodes (67 at most, by the colons)
    assert _node_count_over(text, bound) == _events_over(text, bound)
    _COMPOSED[:] = [None, None]


def test_a_document_within_the_bound_is_composed_once_and_read_as_the_text_says():
    text = _services(300)
    expected, _ = load_text(text, "c.yaml", max_nodes=10**6)  # no count: the text is read as it always was
    calls = []
    real = yamlload._counted_by_composing

    def spy(chunk, max_nodes, keep, most=None):
        counted = real(chunk, max_nodes, keep, most)
        calls.append((keep, counted, _COMPOSED[0] is chunk))
        return counted

    yamlload._counted_by_composing = spy
    try:
        docs, problems = load_text(text, "c.yaml", max_nodes=1803)  # 1,803 in fact, 2,403 at most: counted
    finally:
        yamlload._counted_by_composing = real
    assert calls == [(True, True, True)]  # counted, and the composition kept for the load
    assert problems == []
    assert [d.data for d in docs] == [d.data for d in expected]
    for made, read in ((docs[0].data, expected[0].data), (docs[0].data["services"]["s299"],
                                                          expected[0].data["services"]["s299"])):
        assert (made.lc.line, made.lc.col, made.lc.data) == (read.lc.line, read.lc.col, read.lc.data)
    assert _COMPOSED == [None, None]  # taken by the load


def test_a_document_just_over_the_bound_is_said_where_the_events_go_over():
    text = "a: 1\n---\n" + _services(300)
    docs, problems = load_text(text, "c.yaml", max_nodes=1700)
    assert [d.data for d in docs] == [{"a": 1}]
    assert len(problems) == 1 and "more than 1,700 nodes" in problems[0].message
    assert problems[0].line == 2 + _events_over(_services(300), 1700)
    assert _COMPOSED == [None, None]  # nothing kept for a document that was not read


def test_a_round_trip_load_keeps_nothing_composed():
    text = _services(300)
    load_text(text, "c.yaml", round_trip=True, max_nodes=1500)
    assert _COMPOSED == [None, None]


def _minified_list(count: int) -> str:
    import json

    items = [{"kind": "Deployment", "metadata": {"name": f"v{i}"}, "spec": {"args": ["--model", "m", "-tp", 2]}}
             for i in range(count)]
    return json.dumps({"kind": "List", "items": items}, separators=(",", ":"))


@pytest.mark.parametrize("over", [-1, 0, 1])
def test_a_minified_json_list_is_counted_by_composing_and_said_where_the_events_say(over):
    # in flow style commas count 3 and colons 2: such a text holds fewer than half the nodes it may hold
    text = _minified_list(40)
    nodes = _events_count(text)
    bound = nodes + over
    most = yamlload._most_nodes(text, 0, len(text))
    assert bound * 3 // 2 < most <= bound * 3  # counted by composing only since the bound is 3 x
    assert _node_count_over(text, bound, keep=True) == _events_over(text, bound)
    assert (_COMPOSED[0] is text) == (over >= 0)  # composed once, for the load too, when within the bound
    _COMPOSED[:] = [None, None]
    docs, problems = load_text(text, "l.json", max_nodes=bound)
    if over < 0:
        assert docs == [] and len(problems) == 1 and problems[0].line == _events_over(text, bound)
    else:
        expected, _ = load_text(text, "l.json", max_nodes=10**6)
        assert problems == [] and [d.data for d in docs] == [d.data for d in expected]
        assert docs[0].data["items"][39].lc.data == expected[0].data["items"][39].lc.data
    assert _COMPOSED == [None, None]


def _events_count(text: str) -> int:
    from yaml._yaml import CParser
    from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent

    parser = CParser(text)
    n = 0
    while parser.check_event():
        n += isinstance(parser.get_event(), (ScalarEvent, SequenceStartEvent, MappingStartEvent, AliasEvent))
    parser.dispose()
    return n
