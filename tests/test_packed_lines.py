"""`PackedLines`, the lines of documents the pool's workers send for the cross-file join, reads as the list."""

from __future__ import annotations

import pickle

import pytest

from vramlint.yamlload import PackedLines

TEXTS = ["", "a", "apiVersion: v1\nkind: ConfigMap\n\ndata:\n  k: |\n    x\n", "one\r\ntwo\u2028three\n\n\u00e9 \U0001f600\n"]


@pytest.mark.parametrize("text", TEXTS)
def test_reads_as_the_list(text):
    lines = text.splitlines()
    packed = PackedLines(lines)
    assert len(packed) == len(lines) and bool(packed) == bool(lines)
    assert list(packed) == lines and packed[:] == lines and packed == lines
    assert [packed[i] for i in range(-len(lines), len(lines))] == lines + lines
    for start in range(-3, 6):
        for stop in (None, -1, 0, 2, 9):
            assert packed[start:stop] == lines[start:stop]
    assert packed[::2] == lines[::2]
    assert "\n".join(packed) == "\n".join(lines)
    with pytest.raises(IndexError):
        packed[len(lines)]
    again = pickle.loads(pickle.dumps(packed))
    assert isinstance(again, PackedLines) and again == packed and list(again) == lines


def test_held_in_less_memory_than_the_list():
    import sys

    lines = [f"  - --arg-{i}=value-{i}" for i in range(2000)]
    packed = PackedLines(lines)
    as_list = sys.getsizeof(lines) + sum(sys.getsizeof(line) for line in lines)
    as_packed = sys.getsizeof(packed) + sys.getsizeof(packed._text) + sys.getsizeof(packed._starts)
    assert as_packed < as_list / 2
