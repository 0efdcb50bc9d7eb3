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


# An integer with more digits than this is no number anything downstream can use (float64, which Helm, Go's
# YAML readers and JSON clients convert to, ends near 1.8e308; Python refuses to convert more than 4300
# digits): Go's YAML readers (yaml.v2/v3, used by Kubernetes, Helm and compose) fall back to a string for it,
# and so does vramlint, with a warning on its line.
MAX_INT_DIGITS = 308
# Nodes a document may reach through aliases (beyond its own nodes). A billion-laughs document reaches 10^9
# from a few lines; go-yaml (Kubernetes, Helm, compose) refuses "excessive aliasing" past a few 100,000 decodes.
# Real files reach a few hundred (compose `x-` anchors); every node reached is walked again by extractors and
# the Helm evaluator, so the budget is kept well below go-yaml's.
MAX_ALIAS_NODES = 10_000


def _constructor_class():
    from ruamel.yaml.constructor import RoundTripConstructor

    class BoundedConstructor(RoundTripConstructor):
        """The round-trip constructor, with integers too long to be numbers kept as their text."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.long_ints: list[tuple[int, int, int]] = []  # (line, column, digits), 0-based positions
            self.duplicate_keys: list[tuple[int, int, str, int | None]] = []  # (line, column, key, first line)

        def check_mapping_key(self, node: Any, key_node: Any, mapping: Any, key: Any, value: Any) -> bool:
            # ruamel keeps the first of duplicate keys; the API server (JSON decoding) keeps the last: drop the
            # first so the last is set, and say it on the duplicate's line
            if key in mapping:
                first = mapping.lc.data.get(key) if hasattr(mapping, "lc") else None
                self.duplicate_keys.append((key_node.start_mark.line, key_node.start_mark.column, str(key),
                                            first[0] + 1 if first else None))
                del mapping[key]
            return True

        def construct_yaml_int(self, node: Any) -> Any:
            text = node.value if isinstance(node.value, str) else ""
            digits = sum(ch.isalnum() for ch in text)
            if digits > MAX_INT_DIGITS:
                self.long_ints.append((node.start_mark.line, node.start_mark.column, digits))
                return text
            return super().construct_yaml_int(node)

    BoundedConstructor.add_constructor("tag:yaml.org,2002:int", BoundedConstructor.construct_yaml_int)
    return BoundedConstructor


_CONSTRUCTOR: Any = None


def _yaml():
    from ruamel.yaml import YAML

    global _CONSTRUCTOR
    if _CONSTRUCTOR is None:
        _CONSTRUCTOR = _constructor_class()
    yaml = YAML(typ="rt")
    yaml.Constructor = _CONSTRUCTOR
    yaml.allow_duplicate_keys = True  # BoundedConstructor.check_mapping_key: the last wins, and is said
    return yaml


def load_text(text: str, file: str) -> tuple[list[Document], list[Problem]]:
    """Parse every document of ``text``. Invalid YAML is a Problem with its line and column, never a crash.

    Documents before the error are kept: a broken third document still lets the first two be linted.
    """
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    lines = text.splitlines()
    docs: list[Document] = []
    problems: list[Problem] = []
    too_deep = nesting_problem(text, file)
    if too_deep is not None:
        return docs, [too_deep]
    import warnings

    has_aliases = "*" in text
    try:
        # ruamel reports a reused anchor as a Python warning, which would reach the user's terminal as a raw
        # library message about "<unicode string>": it becomes a note on this file's line instead.
        yaml = _yaml()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loaded = _fast_load_all(text, yaml) if len(text) >= FAST_LOAD_FROM else None
            for i, data in enumerate(yaml.load_all(text) if loaded is None else loaded):
                if data is not None:
                    if has_aliases:
                        problems.extend(bound_aliases(data, file))
                    docs.append(Document(file=file, index=i, data=data, lines=lines))
        problems.extend(_warning_problem(w.message, file) for w in caught)
        problems.extend(_long_int_problems(yaml, file))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        if line is not None and line > max(len(lines), 1):
            # "unexpected end of stream" is marked after the last newline, on a line editors and SARIF
            # viewers do not have: report it at the end of the last line
            line = max(len(lines), 1)
            col = len(lines[-1]) + 1 if lines else 1
        what = exc.problem or exc.context or "invalid YAML"
        problems.append(Problem(file, line, col, f"invalid YAML: {what}"))
    except YAMLError as exc:
        problems.append(Problem(file, None, None, f"invalid YAML: {exc}"))
    except RecursionError:
        problems.append(Problem(file, None, None, "YAML nested too deeply to read"))
    except (ValueError, OverflowError) as exc:
        # a scalar the constructor cannot turn into its tag's type (`!!int abc`); Kubernetes refuses it too
        problems.append(Problem(file, None, None, f"invalid YAML: a value is not what its tag says ({exc})"))
    return docs, problems


# From this size on, YAML is parsed by libyaml (PyYAML's C parser, when installed) and the nodes are built into
# the same round-trip objects by ruamel's own constructor: ruamel's pure-Python scanner and parser take ~6 s per
# MB, libyaml a tenth of that. Smaller files, and anything libyaml refuses, go through ruamel alone.
FAST_LOAD_FROM = 64 * 1024


def _fast_load_all(text: str, yaml: Any) -> list[Any] | None:
    """Every document of ``text`` as ruamel's round-trip loader builds it (positions included), parsed by
    libyaml; None when libyaml is not available or refuses the text (ruamel then reads it and says why)."""
    try:
        import yaml as pyyaml

        loader_class = pyyaml.CSafeLoader
    except (ImportError, AttributeError):
        return None
    from ruamel.yaml import nodes
    from ruamel.yaml.error import StreamMark
    from ruamel.yaml.tag import Tag

    shared_tags: dict[str, Any] = {}  # one Tag per tag name: a Tag decodes its URI on first use, then keeps it

    def tag_of(name: Any) -> Any:
        if not isinstance(name, str):
            return name  # ruamel's resolver gives a Tag already
        found = shared_tags.get(name)
        if found is None:
            found = shared_tags[name] = Tag(suffix=name)
        return found

    constructor = yaml.constructor
    resolver = yaml.resolver
    lines = text.split("\n")
    memo: dict[int, Any] = {}

    def mark(m: Any) -> Any:
        return StreamMark("", m.index, m.line, m.column)

    def convert(n: Any) -> Any:
        got = memo.get(id(n))
        if got is not None:
            return got  # an alias: the same node, as ruamel's composer shares it
        if isinstance(n, pyyaml.ScalarNode):
            # plain scalars are resolved by ruamel's YAML 1.2 rules (libyaml's PyYAML resolver is YAML 1.1: yes/no)
            tag = resolver.resolve(nodes.ScalarNode, n.value, (True, False)) if not n.style else n.tag
            out = nodes.ScalarNode(tag_of(tag), n.value, mark(n.start_mark), mark(n.end_mark), style=n.style or None)
            memo[id(n)] = out
            return out
        if isinstance(n, pyyaml.SequenceNode):
            out = nodes.SequenceNode(tag_of(n.tag), [], mark(n.start_mark), mark(n.end_mark), flow_style=n.flow_style)
            memo[id(n)] = out
            out.value = [convert(c) for c in n.value]
            return out
        out = nodes.MappingNode(tag_of(n.tag), [], mark(n.start_mark), mark(n.end_mark), flow_style=n.flow_style)
        memo[id(n)] = out
        pairs = [(convert(k), convert(v)) for k, v in n.value]
        for i, (_key, value) in enumerate(pairs):
            # an empty value: ruamel places it where the next key starts, libyaml right after the colon
            if isinstance(value, nodes.ScalarNode) and value.value == "" and not value.style and i + 1 < len(pairs):
                line = lines[value.start_mark.line] if value.start_mark.line < len(lines) else ""
                if not line[value.start_mark.column:].lstrip().startswith("#"):
                    value.start_mark = pairs[i + 1][0].start_mark
        out.value = pairs
        return out

    loader = loader_class(text)
    out: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            memo.clear()
            out.append(constructor.construct_document(convert(node)))
    except Exception:  # noqa: BLE001 - anything libyaml or the conversion refuses is read by ruamel instead
        return None
    finally:
        loader.dispose()
    return out


def _long_int_problems(yaml: Any, file: str) -> list[Problem]:
    constructor = getattr(yaml, "_constructor", None)  # created by the load; absent when nothing was loaded
    out = []
    for line, col, key, first in getattr(constructor, "duplicate_keys", ()):
        shown = key if len(key) <= 60 else key[:60] + "..."
        out.append(Problem(file, line + 1, col + 1, f"duplicate key {shown!r}{f' (first at line {first})' if first else ''}"
                           ": the last one is used, as the Kubernetes API server keeps it (kubectl apply with its "
                           "default --validate=strict, and docker compose, refuse the file)", level="warning"))
    for line, col, digits in getattr(constructor, "long_ints", ()):
        out.append(Problem(file, line + 1, col + 1, f"integer of {digits} digits: too large to be a number (Go's "
                           "YAML readers in Kubernetes, Helm and compose read it as a string), read as text",
                           level="warning"))
    return out


def _children(node: Any) -> list[tuple[Any, Any]]:
    if isinstance(node, dict):
        return list(dict.items(node))
    if isinstance(node, list):
        return list(enumerate(node))
    return []


def _edge_location(file: str, parent: Any, key: Any) -> tuple[int | None, int | None]:
    entry = _lc_entry(parent, key)
    if entry is not None:
        if len(entry) >= 4:
            return entry[2] + 1, entry[3] + 1
        return entry[0] + 1, entry[1] + 1
    loc = node_location(file, parent)  # a key brought in by a merge key (`<<: *x`) has no position of its own
    return (loc.line, loc.column) if loc else (None, None)


def _cut(parent: Any, key: Any) -> None:
    if isinstance(parent, dict):
        dict.__setitem__(parent, key, None)
    else:
        list.__setitem__(parent, key, None)


def bound_aliases(root: Any, file: str, limit: int = MAX_ALIAS_NODES) -> list[Problem]:
    """Cut what aliases make ``root`` reach beyond ``limit`` nodes, and recursive aliases: a Problem on the alias
    that crossed the limit (once per document) and on each recursive one. Linear in the document's own nodes.

    The round-trip loader shares an aliased node instead of copying it, so a billion-laughs document loads in
    microseconds and explodes only when something walks or copies it. The aliased value that crosses the limit
    (and every one after it) is replaced by null, so the rest of the document can still be read.
    """
    if not isinstance(root, (dict, list)):
        return []
    problems: list[Problem] = []
    # 1. expanded size of every container, once each (post-order, iterative: no recursion limit)
    size: dict[int, int] = {}
    on_path: set[int] = {id(root)}
    stack: list[list[Any]] = [[root, _children(root), 0, 1]]  # node, its children, next child, size so far
    while stack:
        frame = stack[-1]
        node, kids, i = frame[0], frame[1], frame[2]
        if i == len(kids):
            stack.pop()
            on_path.discard(id(node))
            size[id(node)] = frame[3]
            if stack:
                stack[-1][3] += frame[3]
            continue
        frame[2] = i + 1
        key, child = kids[i]
        if not isinstance(child, (dict, list)):
            frame[3] += 1
        elif id(child) in size:
            frame[3] += size[id(child)]
        elif id(child) in on_path:
            line, col = _edge_location(file, node, key)
            problems.append(Problem(file, line, col, "this alias refers to a node that contains it (a recursive "
                                    "alias, which Kubernetes, Helm and compose refuse): not read"))
            _cut(node, key)
            frame[3] += 1
        else:
            on_path.add(id(child))
            stack.append([child, _children(child), 0, 1])
    if size[id(root)] <= limit:
        return problems
    # 2. in document order, add up what each alias reaches; cut the aliases past the limit
    through_aliases = 0
    crossed = False
    seen: set[int] = {id(root)}
    walk = [root]
    while walk:
        node = walk.pop()
        for key, child in reversed(_children(node)):
            if not isinstance(child, (dict, list)):
                continue
            if id(child) not in seen:
                seen.add(id(child))
                walk.append(child)
                continue
            added = size.get(id(child), 1)
            if through_aliases + added <= limit:
                through_aliases += added
                continue
            if not crossed:
                crossed = True
                line, col = _edge_location(file, node, key)
                problems.append(Problem(file, line, col, f"YAML aliases here make the document reach more than "
                                        f"{limit:,} nodes (an alias bomb?): the aliased value is not read"))
            _cut(node, key)
    return problems


def _warning_problem(message: Warning | str, file: str) -> Problem:
    """A note for a warning the YAML parser gave while reading ``file`` (a reused anchor, most often)."""
    import re

    text = str(message)
    anchor = re.search(r"found duplicate anchor '([^']*)'", text)
    places = re.findall(r"line (\d+), column (\d+)", text)
    if anchor and len(places) >= 2:
        (first, _), (line, col) = places[0], places[1]
        return Problem(file, int(line), int(col), f"anchor &{anchor.group(1)} is defined again here (first at line "
                       f"{first}): the aliases after this line refer to this one", level="note")
    summary = next((ln.strip() for ln in text.splitlines() if ln.strip()), "a YAML warning")
    return Problem(file, int(places[0][0]) if places else None, int(places[0][1]) if places else None,
                   f"YAML: {summary}", level="note")


# The parser recurses per nesting level and a RecursionError unwinds slowly (seconds for thousands of levels),
# so depth is measured on the text first. Real manifests stay under ~20 levels; ruamel's round-trip parser hits
# Python's recursion limit between 200 and 250 block levels.
MAX_FLOW_DEPTH = 100
MAX_BLOCK_DEPTH = 150
MAX_INDENT = 400


def nesting_problem(text: str, file: str) -> Problem | None:
    """A Problem where ``text`` first nests deeper than the parser can read quickly, else None (linear, cheap)."""
    import re

    if text.count("[") + text.count("{") > MAX_FLOW_DEPTH:
        depth = 0
        line = 1
        line_start = 0
        quote = None
        for m in re.finditer(r"[\[\]{}\n\"']", text):
            ch = m.group(0)
            if ch == "\n":
                line += 1
                line_start = m.end()
                continue
            if quote:
                if ch == quote:
                    quote = None
                continue
            if ch in "[{":
                depth += 1
                if depth > MAX_FLOW_DEPTH:
                    return Problem(file, line, m.start() - line_start + 1, f"YAML nested more than {MAX_FLOW_DEPTH} "
                                   "levels deep here (flow collections): not read")
            elif ch in "]}":
                depth = max(0, depth - 1)
            elif depth > 0:
                quote = ch
    if re.search(rf"^[ \t-]{{{MAX_BLOCK_DEPTH},}}", text, re.MULTILINE):
        return _block_nesting_problem(text, file)
    return None


def _block_nesting_problem(text: str, file: str) -> Problem | None:
    """Block nesting measured by indentation: each deeper indentation, and each `- ` of a compact nested
    sequence (`- - - x`), opens a level."""
    levels: list[int] = []
    for i, raw in enumerate(text.split("\n"), start=1):
        body = raw.lstrip(" ")
        if not body.strip() or body.startswith("#"):
            continue
        indent = len(raw) - len(body)
        if indent > MAX_INDENT:
            return Problem(file, i, MAX_INDENT + 1, f"YAML indented more than {MAX_INDENT} columns: nested too deeply, "
                           "not read")
        while levels and levels[-1] >= indent:
            levels.pop()
        levels.append(indent)
        column = indent
        while body[:2] in ("- ", "-\t") or body == "-":
            column += 2
            body = body[2:].lstrip(" \t")
            levels.append(column)
            if len(levels) > MAX_BLOCK_DEPTH:
                break
        if len(levels) > MAX_BLOCK_DEPTH:
            return Problem(file, i, column + 1,
                           f"YAML nested more than {MAX_BLOCK_DEPTH} levels deep here: not read")
    return None


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


# --- templates and YAML embedded in strings ---------------------------------------------------------------

# A Helm/Go template expression replaced by this marker (padded to the expression's width, so columns after
# it stay right) reads as "unknown until rendered". The brackets are printable, so YAML accepts them in plain
# scalars, and no real deployment value contains them.
TEMPLATE_OPEN = "\u2983"
TEMPLATE_CLOSE = "\u2984"


def has_template_marker(text: Any) -> bool:
    return isinstance(text, str) and TEMPLATE_OPEN in text


def neutralize_templates(text: str) -> str:
    """Make a Helm/Go-templated manifest parseable, line for line.

    A line holding only template actions (`{{- if .Values.x }}`, `{{- end }}`, `{{ include ... | nindent 4 }}`)
    becomes blank; an expression inside a line becomes a marker of the same width.
    """
    import re

    action = re.compile(r"\{\{.*?\}\}")
    out = []
    for line in text.split("\n"):
        if "{{" not in line:
            out.append(line)
            continue
        stripped = action.sub("", line).strip()
        if not stripped:
            out.append("")
            continue
        out.append(action.sub(lambda m: TEMPLATE_OPEN + "_" * max(0, len(m.group(0)) - 2) + TEMPLATE_CLOSE, line))
    return "\n".join(out)


def shift_positions(root: Any, line_offset: int, col_offset: int, budget: int = MAX_NODES_WALKED) -> None:
    """Move every position under ``root`` (0-based ruamel positions) by the given offsets, in place.

    Used for YAML parsed out of a string (a Ray Serve config, a ConfigMap data key) so that the location
    helpers above point into the outer file.
    """
    seen: set[int] = set()
    stack = [root]
    while stack and budget > 0:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        budget -= 1
        lc = getattr(node, "lc", None)
        if lc is None:
            continue
        if lc.line is not None:
            lc.line += line_offset
            lc.col = (lc.col or 0) + col_offset
        data = lc.data if isinstance(lc.data, dict) else {}
        for entry in data.values():
            if isinstance(entry, list):
                for j in range(0, len(entry), 2):
                    entry[j] += line_offset
                    if j + 1 < len(entry):
                        entry[j + 1] += col_offset
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append(child)


def load_embedded(text: str, file: str, outer_lines: list[str], value_loc: Location | None,
                  block: bool) -> tuple[list[Document], list[Problem]]:
    """Parse YAML held in a string of an outer YAML file; positions point into the outer file.

    ``value_loc`` is where the string value starts (for a block scalar: the `|` indicator line). Positions
    are exact for block scalars; for quoted or plain strings they are anchored on the value's first line.
    """
    docs, problems = load_text(text, file)
    if value_loc is None:
        return docs, problems
    if block:
        line_offset = value_loc.line  # 0-based inner line 0 is the line after the indicator (1-based L+1)
        indent = 0
        for raw in outer_lines[value_loc.line: value_loc.line + 50]:
            if raw.strip():
                indent = len(raw) - len(raw.lstrip(" "))
                break
        col_offset = indent
    else:
        line_offset = value_loc.line - 1
        col_offset = value_loc.column
    for doc in docs:
        shift_positions(doc.data, line_offset, col_offset)
        doc.lines = outer_lines
    for p in problems:
        if p.line is not None:
            p.line += line_offset
            if p.column is not None:
                p.column += col_offset
    return docs, problems


def to_plain(node: Any) -> Any:
    """Builtin dicts, lists and scalars for a ruamel node.

    ruamel's CommentedMap, ScalarFloat and friends behave like builtins but carry position and style state;
    JSON dumps, jsonschema and typed argument values want plain ones. Keys become strings (JSON has no
    other), and scalars YAML types otherwise (timestamps) become their text, as vLLM's own loader sees them.
    """
    if isinstance(node, dict):
        return {str(k): to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [to_plain(v) for v in node]
    if node is None or isinstance(node, bool):
        return None if node is None else bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return str(node)
