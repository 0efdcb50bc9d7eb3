"""Load YAML with source positions, and point at any node's key or item.

ruamel's round-trip loader keeps line/column of every mapping key and sequence item, which is what lets a
finding land on the line that set a value. Positions here are converted to 1-based.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vramlint.model import Location, Problem

# Guards against hostile input: the round-trip loader shares aliased nodes (no copy), so an alias bomb
# costs nothing to load; it is walking it that explodes. Walkers use `Budget`-style node counters with these.
MAX_NODES_WALKED = 200_000
MAX_DEPTH = 200


@dataclass
class Document:
    """One YAML document of a file (a multi-document stream gives several)."""

    file: str  # path as displayed (relative to the current directory)
    index: int  # position in the stream, 0-based
    data: Any  # CommentedMap / CommentedSeq / scalar, as ruamel loaded it
    lines: list[str]  # the file's text, for comments and suppressions on a line


def _yaml():
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = True  # a duplicate key is the user's bug; later keys win, as in kubectl
    return yaml


def load_text(text: str, file: str) -> tuple[list[Document], list[Problem]]:
    """Parse every document of ``text``. Invalid YAML is a Problem with its line and column, never a crash.

    Documents before the error are kept: a broken third document still lets the first two be linted.
    """
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    lines = text.splitlines()
    docs: list[Document] = []
    problems: list[Problem] = []
    try:
        for i, data in enumerate(_yaml().load_all(text)):
            if data is not None:
                docs.append(Document(file=file, index=i, data=data, lines=lines))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        what = exc.problem or exc.context or "invalid YAML"
        problems.append(Problem(file, line, col, f"invalid YAML: {what}"))
    except YAMLError as exc:
        problems.append(Problem(file, None, None, f"invalid YAML: {exc}"))
    except RecursionError:
        problems.append(Problem(file, None, None, "YAML nested too deeply to read"))
    return docs, problems


def _lc_entry(node: Any, key: Any) -> list[int] | None:
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    entry = lc.data.get(key) if isinstance(lc.data, dict) else None
    if entry is not None:
        return entry
    # A key brought in by a merge key (`<<: *defaults`) is positioned in the anchored map it came from.
    for merged in _merged_maps(node):
        found = _lc_entry(merged, key)
        if found is not None:
            return found
    return None


def _merged_maps(node: Any) -> list[Any]:
    # ruamel has kept merge sources as (index, map) pairs in older releases and as a MergeValue of maps since 0.18.
    out = []
    for item in getattr(node, "merge", None) or []:
        out.append(item[1] if isinstance(item, tuple) else item)
    return out


def key_location(file: str, node: Any, key: Any, yaml_path: str = "") -> Location | None:
    """Location of the *key* ``key`` in mapping ``node`` (or of item ``key`` in a sequence)."""
    entry = _lc_entry(node, key)
    if entry is None:
        return None
    return Location(file, entry[0] + 1, entry[1] + 1, yaml_path=yaml_path)


def value_location(file: str, node: Any, key: Any, yaml_path: str = "") -> Location | None:
    """Location of the *value* at ``node[key]`` (mapping) or of item ``key`` (sequence).

    For a scalar value the span covers its text when it sits on one line, so SARIF regions underline it.
    """
    entry = _lc_entry(node, key)
    if entry is None:
        return None
    if len(entry) >= 4:
        line, col = entry[2] + 1, entry[3] + 1
    else:
        line, col = entry[0] + 1, entry[1] + 1
    try:
        value = node[key]
    except (KeyError, IndexError, TypeError):
        value = None
    end_line = end_col = None
    if isinstance(value, (str, int, float, bool)) and "\n" not in str(value):
        width = len(str(value))
        style = getattr(value, "style", None) if hasattr(value, "style") else None
        if style in ("'", '"'):
            width += 2
        end_line, end_col = line, col + width
    return Location(file, line, col, end_line, end_col, yaml_path=yaml_path)


def node_location(file: str, node: Any, yaml_path: str = "") -> Location | None:
    """Where a mapping or sequence node starts (its first key or item)."""
    lc = getattr(node, "lc", None)
    if lc is None or lc.line is None:
        return None
    return Location(file, lc.line + 1, lc.col + 1, yaml_path=yaml_path)


def join_path(base: str, key: Any) -> str:
    """YAML path as the JSON contract writes it: ``spec.template.spec.containers[0].args[3]``."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    key = str(key)
    if key and all(c.isalnum() or c in "_-" for c in key):
        return f"{base}.{key}" if base else key
    return f'{base}["{key}"]' if base else f'["{key}"]'
