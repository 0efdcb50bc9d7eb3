"""Compiled regular expressions cached between runs, the way Python caches the bytecode of modules.

Checking one small file compiles about 85 regular expressions (vramlint's own, PyYAML's, the standard
library's), most at import time: 107 of that run's 509 million instructions, 58 million for PyYAML's
printable-character class alone, and pre-commit runs vramlint on every commit. `re` compiles a pattern in
Python into a list of integers for its C engine, a list that depends only on the pattern, its flags and the
interpreter. A run writes the lists of the patterns it compiled next to the package's bytecode
(``vramlint/__pycache__/regexes.<cache tag>.marshal``; nothing when Python itself writes no bytecode); later
runs by the same interpreter build those patterns from the lists (``_sre.compile``, what ``re.compile`` ends
with; it validates the list) and put them in `re`'s own cache, where ``re.compile`` finds them. A pattern not
in the file is compiled as usual and added at the end of the run (up to MAX_PATTERNS). The file names the
interpreter build and the engine's version: another interpreter's file, or one that does not read back whole,
is ignored and rewritten. tests/test_recache.py checks that a pattern built from the file equals the one `re`
compiles (``==`` compares the compiled code).
"""

from __future__ import annotations

import os
import re
import sys

FORMAT = 1
# A bound on the file: patterns made from what a run reads (a scanned repository's .gitignore globs) vary from
# run to run; past this many, a new pattern is compiled at every run, as without the file.
MAX_PATTERNS = 400
_BAD_FLAGS = re.DEBUG | getattr(re, "TEMPLATE", 0)  # patterns `re` itself does not cache


def _internals():
    """(parse, code generator, engine constants) of this interpreter's `re`, or None if they are not known."""
    try:
        if sys.version_info >= (3, 11):
            from re import _compiler as compiler
            from re import _constants as constants
            from re import _parser as parser
        else:  # pragma: no cover - Python 3.10
            import sre_compile as compiler
            import sre_constants as constants
            import sre_parse as parser
        return parser.parse, compiler._code, constants
    except (ImportError, AttributeError):  # pragma: no cover - another implementation of `re`
        return None


def _header() -> tuple:
    import _sre

    return (FORMAT, sys.version, sys.hexversion, sys.implementation.cache_tag, _sre.MAGIC, _sre.CODESIZE,
            _sre.MAXREPEAT, _sre.MAXGROUPS)


def default_path() -> str | None:
    """Where this interpreter's file is, or None when Python writes no bytecode (so vramlint writes no file)."""
    tag = sys.implementation.cache_tag
    if sys.dont_write_bytecode or sys.pycache_prefix or tag is None or not isinstance(getattr(re, "_cache", None),
                                                                                       dict):
        return None
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__", f"regexes.{tag}.marshal")


def load(path: str | None) -> dict | None:
    """Put the patterns of the file into `re`'s cache; returns the entries read (None: none, or no file)."""
    if path is None:
        return None
    import marshal

    try:
        with open(path, "rb") as handle:
            header, entries = marshal.loads(handle.read())
        if header != _header() or not isinstance(entries, dict):
            return None
        import _sre

        built = {}
        for key, (flags, code, groups, groupindex, indexgroup) in entries.items():
            kind, pattern, asked = key
            built[(str if kind == "s" else bytes, pattern, asked)] = _sre.compile(pattern, flags, list(code),
                                                                                 groups, groupindex, indexgroup)
    except Exception:  # noqa: BLE001 - no file, another format, a file cut short: compiled as usual
        return None
    cache = re._cache
    for key, pattern in built.items():
        cache.setdefault(key, pattern)
    return entries


def save(path: str | None, entries: dict | None) -> None:
    """Add to the file the patterns in `re`'s cache that it does not hold (nothing when there are none)."""
    if path is None:
        return
    entries = dict(entries or {})
    new = [key for key in list(re._cache) if (_kind(key[0]), key[1], key[2]) not in entries]
    del new[max(0, MAX_PATTERNS - len(entries)):]
    if not new:
        return
    internals = _internals()
    if internals is None:
        return
    parse, generate, _constants = internals
    for kind, pattern, flags in new:
        if kind not in (str, bytes) or not isinstance(flags, int) or flags & _BAD_FLAGS:
            continue
        try:
            parsed = parse(pattern, flags)
            code = generate(parsed, flags)
            groupindex = dict(parsed.state.groupdict)
            indexgroup = [None] * parsed.state.groups
            for name, index in groupindex.items():
                indexgroup[index] = name
            # the code holds the engine's opcodes, int subclasses marshal does not write: plain ints
            entries[(_kind(kind), pattern, int(flags))] = (int(flags | parsed.state.flags), tuple(map(int, code)),
                                                           int(parsed.state.groups - 1), groupindex,
                                                           tuple(indexgroup))
        except Exception:  # noqa: BLE001 - a pattern this reading does not handle is compiled at every run
            continue
    import marshal

    try:
        data = marshal.dumps((_header(), entries))
    except ValueError:  # an unwritable value: every run compiles, as before
        return
    write_beside_bytecode(path, ".regexes-", data)


def write_beside_bytecode(path: str, prefix: str, data: bytes) -> None:
    """Write ``data`` to ``path`` in the package's __pycache__ as Python writes a bytecode file: whole or not at
    all (runs at the same time read one or the other), with the module's permissions; nothing on a read-only
    install (every run then compiles, as before)."""
    import tempfile

    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=prefix, dir=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(temporary, os.stat(__file__).st_mode & 0o666 | 0o200)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return


def _kind(kind: type) -> str:
    return "s" if kind is str else "b"
