"""``dataclasses.dataclass`` with ``__repr__`` and ``__eq__`` made from shared functions, not compiled per class.

The standard decorator writes each generated method as Python source and compiles it when the module is
imported. vramlint defines about 60 dataclasses, all imported by a one-file check, and compiling their methods
was a quarter of that run's instructions (pre-commit runs vramlint on every commit); ``__repr__`` and
``__eq__`` were 40% of that source and are rarely called. Here they are closures over the field names, with
the standard behaviour: the same text (``Name(a=1, b='x')``, ``...`` for a recursive reference, fields with
``repr=False`` left out), equality only between instances of the very same class over the fields with
``compare=True``, and ``__hash__`` set to None as the standard decorator does for a mutable class with
``eq``. ``__init__`` is still compiled: it runs for every object made. A frozen class, or one asking for
``order`` or ``unsafe_hash``, is left to the standard decorator whole. tests/test_lean_dataclass.py compares
both on the same classes.
"""

from __future__ import annotations

import dataclasses
from reprlib import recursive_repr
from typing import Any


def dataclass(cls: type | None = None, /, **options: Any) -> Any:
    """Use as ``@dataclass`` or ``@dataclass(kw_only=True)``; the options are ``dataclasses.dataclass``'s."""

    def wrap(cls: type) -> type:
        return _process(cls, **options)

    return wrap if cls is None else wrap(cls)


def _process(cls: type, *, repr: bool = True, eq: bool = True, **options: Any) -> type:  # noqa: A002 - the standard names
    if options.get("frozen") or options.get("order") or options.get("unsafe_hash") or options.get("slots"):
        return dataclasses.dataclass(cls, repr=repr, eq=eq, **options)
    # Read before the class changes: the standard decorator keeps a __hash__ the class body defines itself.
    own_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (own_hash is dataclasses.MISSING or (own_hash is None and "__eq__" in cls.__dict__))
    cls = dataclasses.dataclass(cls, repr=False, eq=False, **options)
    fields = dataclasses.fields(cls)
    if repr and "__repr__" not in cls.__dict__:
        _set_method(cls, "__repr__", _repr_function(tuple(f.name for f in fields if f.repr)))
    if eq:
        if "__eq__" not in cls.__dict__:
            _set_method(cls, "__eq__", _eq_function(tuple(f.name for f in fields if f.compare)))
        if not explicit_hash:
            cls.__hash__ = None  # type: ignore[assignment] - mutable and compared by value: unhashable
    return cls


def _set_method(cls: type, name: str, function: Any) -> None:
    function.__qualname__ = f"{cls.__qualname__}.{name}"
    function.__module__ = cls.__module__
    setattr(cls, name, function)


def _repr_function(names: tuple[str, ...]) -> Any:
    @recursive_repr()
    def __repr__(self: Any) -> str:
        return self.__class__.__qualname__ + "(" + ", ".join([f"{name}={getattr(self, name)!r}" for name in names]) + ")"

    return __repr__


def _eq_function(names: tuple[str, ...]) -> Any:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return tuple([getattr(self, name) for name in names]) == tuple([getattr(other, name) for name in names])
        return NotImplemented

    return __eq__
