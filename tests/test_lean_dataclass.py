"""vramlint.lean_dataclass behaves as dataclasses.dataclass: the same repr, equality, hashing and fields."""

from __future__ import annotations

import dataclasses
from dataclasses import field

import pytest

from vramlint.lean_dataclass import dataclass as lean


def _pair(**options):
    """The same class body decorated both ways."""

    def body():
        class Thing:
            name: str
            size: int = 0
            tags: list = field(default_factory=list)
            hidden: object = field(default=None, repr=False)
            ignored: float = field(default=0.0, compare=False)

            def __post_init__(self):
                self.made = True

        return Thing

    return dataclasses.dataclass(**options)(body()), lean(**options)(body())


@pytest.mark.parametrize("options", [{}, {"kw_only": True}])
def test_repr_eq_hash_fields_as_the_standard_decorator(options):
    standard, ours = _pair(**options)
    for values in ({"name": "a"}, {"name": "b", "size": 3, "tags": ["x", 1.5], "hidden": "h", "ignored": 2.0},
                   {"name": "it's \"quoted\"\n", "tags": [None]}):
        s, o = standard(**values), ours(**values)
        assert repr(o) == repr(s)
        assert o.made and s.made  # __post_init__ ran
        assert [f.name for f in dataclasses.fields(o)] == [f.name for f in dataclasses.fields(s)]
        assert dataclasses.asdict(o) == dataclasses.asdict(s)
        assert repr(dataclasses.replace(o, size=9)) == repr(dataclasses.replace(s, size=9))
    assert ours(name="a", ignored=1.0) == ours(name="a", ignored=2.0)  # compare=False is not compared
    assert ours(name="a") != ours(name="a", size=1)
    assert ours(name="a") != standard(name="a")  # another class, as the standard one: NotImplemented both ways
    assert (ours(name="a") == "a") is False
    assert ours.__hash__ is None and standard.__hash__ is None
    with pytest.raises(TypeError):
        hash(ours(name="a"))
    assert ours.__repr__.__qualname__ == standard.__repr__.__qualname__
    assert ours.__eq__.__qualname__ == standard.__eq__.__qualname__
    assert dataclasses.is_dataclass(ours)
    assert ours.__match_args__ == standard.__match_args__


def test_recursive_repr_and_subclass_fields():
    @lean
    class Node:
        value: int
        children: list = field(default_factory=list)

    @dataclasses.dataclass
    class StdNode:
        value: int
        children: list = field(default_factory=list)

    node, std = Node(1), StdNode(1)
    node.children.append(node)
    std.children.append(std)
    assert repr(node) == "test_recursive_repr_and_subclass_fields.<locals>.Node(value=1, children=[...])"
    assert repr(node).replace("Node", "StdNode") == repr(std)

    @lean
    class Child(Node):
        extra: str = "e"

    assert repr(Child(2)) == "test_recursive_repr_and_subclass_fields.<locals>.Child(value=2, children=[], extra='e')"
    assert Child(2) == Child(2) and Child(2) != Node(2)


def test_what_the_class_defines_is_kept():
    @lean
    class Own:
        a: int

        def __repr__(self):
            return "own"

        def __eq__(self, other):
            return True

    @lean
    class Hashable:
        a: int

        def __hash__(self):
            return 7

    assert repr(Own(1)) == "own" and Own(1) == Own(2) and Own.__hash__ is None
    assert hash(Hashable(1)) == 7 and Hashable(1) == Hashable(1) and Hashable(1) != Hashable(2)


def test_frozen_is_the_standard_decorator():
    @lean(frozen=True)
    class Point:
        x: int
        y: int = 0

    assert hash(Point(1)) == hash(Point(1)) and Point(1) == Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point(1).x = 2
    assert repr(Point(1, 2)).endswith("Point(x=1, y=2)")
