"""The functions `dataclasses` writes for each class, compiled once and kept between runs as Python keeps bytecode.

The standard decorator writes each class's ``__init__`` (and, for a frozen class, ``__setattr__`` and
``__delattr__``) as Python source and compiles it with ``exec`` when the module is imported. A one-file check
imports about 60 dataclasses: their 106 compilations were 58 million of the run's 442 million instructions,
and pre-commit runs vramlint on every commit. The source depends only on the class's fields, so the compiled
code of an earlier run is the code this run would compile. While a run lasts (`vramlint.cli.main`), the
``exec`` that `dataclasses` calls is this module's: a source compiled by an earlier run by the same
interpreter comes from the file (``vramlint/__pycache__/dataclass-code.<cache tag>.marshal``, beside the
package's bytecode; nothing when Python itself writes no bytecode), anything else is compiled as ``exec`` would
compile it and added at the end of the run (up to MAX_SOURCES). The file names the interpreter build and its
bytecode's magic number: another interpreter's file, or one that does not read back whole, is ignored and
rewritten. tests/test_codecache.py checks that the classes made either way behave the same.
"""

from __future__ import annotations

import builtins
import os
import sys

FORMAT = 1
# Sources come from vramlint's own classes (and any a run imports): a bound, in case a caller makes classes
# from data, so the file cannot grow without end.
MAX_SOURCES = 400

_compiled: dict[str, object] = {}  # source -> code object, this run's
_loaded: dict[str, object] = {}  # what the file held at the start of the run


def _header() -> tuple:
    from importlib._bootstrap_external import MAGIC_NUMBER  # frozen into the interpreter: no import cost

    return (FORMAT, sys.version, sys.hexversion, sys.implementation.cache_tag, MAGIC_NUMBER)


def default_path() -> str | None:
    """Where this interpreter's file is, or None when Python writes no bytecode (so vramlint writes no file)."""
    tag = sys.implementation.cache_tag
    if sys.dont_write_bytecode or sys.pycache_prefix or tag is None:
        return None
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__", f"dataclass-code.{tag}.marshal")


def cached_exec(source, globals=None, locals=None, /):  # noqa: A002 - exec's own parameter names
    """``exec``, with a source text compiled at most once per interpreter build (in the file between runs)."""
    if type(source) is not str:
        return builtins.exec(source, globals, locals)
    code = _compiled.get(source)
    if code is None:
        # as exec compiles a string from `dataclasses`, which has no __future__ imports: none inherited here
        code = compile(source, "<string>", "exec", dont_inherit=True)
        _compiled[source] = code
    return builtins.exec(code, globals, locals)


def install(path: str | None) -> None:
    """Read the file into this run's cache and make `dataclasses` compile through it."""
    if path is not None:
        import marshal

        try:
            with open(path, "rb") as handle:
                header, entries = marshal.loads(handle.read())
            if header == _header() and isinstance(entries, dict):
                _loaded.update(entries)
                _compiled.update(entries)
        except Exception:  # noqa: BLE001 - no file, another format, a file cut short: compiled as usual
            pass
    import dataclasses

    dataclasses.exec = cached_exec  # a module global shadows the builtin for dataclasses' own calls


def uninstall(path: str | None) -> None:
    """Give `dataclasses` back the builtin ``exec`` and add to the file what this run compiled anew."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is cached_exec:
        del dataclasses.exec
    if path is None:
        return
    new = [source for source in _compiled if source not in _loaded]
    del new[max(0, MAX_SOURCES - len(_loaded)):]
    if not new:
        return
    entries = dict(_loaded)
    entries.update((source, _compiled[source]) for source in new)
    import marshal

    from vramlint.recache import write_beside_bytecode

    try:
        data = marshal.dumps((_header(), entries))
    except ValueError:
        return
    write_beside_bytecode(path, ".dataclass-code-", data)
