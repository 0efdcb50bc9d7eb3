"""Load YAML with source positions, and point at any node's key or item.

Every mapping key, value and sequence item keeps its line and column, which is what lets a finding land on the
line that set a value. Files are parsed by libyaml (PyYAML's C parser) into `YamlMap`/`YamlSeq` objects that
carry those positions the way ruamel's round-trip objects do (``.lc``); ruamel's round-trip loader reads what
that path does not decide itself (explicit tags, `%` directives, reused anchors, invalid YAML: its messages
and positions are the ones reported), and every file that is to be edited (`--fix`). Positions here are
converted to 1-based.
"""

from __future__ import annotations

import bisect
import re
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
    data: Any  # YamlMap / YamlSeq / scalar (ruamel's CommentedMap / CommentedSeq when it read the file)
    lines: list[str]  # the file's text, for comments and suppressions on a line


class PackedLines:
    """A file's lines held as one string and where each line starts: the list's uses (``len``, ``lines[i]``,
    slices, iteration, truth) at about a third of the memory of one string object per line. Documents the
    cross-file join keeps are sent from the pool's workers this way (`vramlint.scan`): thousands of files'
    lines are alive until the join."""

    __slots__ = ("_starts", "_text")

    def __init__(self, lines: list[str]) -> None:
        from array import array

        starts = [0]
        at = 0
        for line in lines:
            at += len(line) + 1
            starts.append(at)
        self._text = "\n".join(lines)
        self._starts = array("I" if at < 1 << 32 else "Q", starts)

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, index: Any) -> Any:
        starts = self._starts
        if isinstance(index, slice):
            return [self._text[starts[i]:starts[i + 1] - 1] for i in range(*index.indices(len(starts) - 1))]
        i = range(len(starts) - 1)[index]  # negative indexes, and IndexError, as a list gives them
        return self._text[starts[i]:starts[i + 1] - 1]

    def __iter__(self) -> Any:
        # one line at a time: a list of them all was the memory the packing saves (suppressions iterate the lines)
        text, starts = self._text, self._starts
        return (text[starts[i]:starts[i + 1] - 1] for i in range(len(starts) - 1))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedLines):
            return self._text == other._text and len(self) == len(other)
        return isinstance(other, list) and self[:] == other

    __hash__ = None  # type: ignore[assignment] - compared by value, as a list

    def __reduce__(self) -> Any:
        return _unpack, (self._text, self._starts)


def _unpack(text: str, starts: Any) -> PackedLines:
    out = PackedLines.__new__(PackedLines)
    out._text, out._starts = text, starts
    return out


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
            self.huge_floats: list[tuple[int, int, str]] = []  # (line, column, text) of floats past float64
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

        def construct_object(self, node: Any, deep: bool = False) -> Any:
            try:
                return super().construct_object(node, deep=deep)
            except (ValueError, OverflowError, KeyError, IndexError, AttributeError):
                # a scalar its tag cannot hold (`!!int abc`, `!!float x`, `!!bool maybe`): said on its line, as a
                # parse error is (Kubernetes refuses these too). ruamel's own constructors fail on some of them
                # with IndexError (`!!float ""`, `!!int 0x`: they index the empty digits) or AttributeError (a
                # scalar tagged `!!omap`/`!!set`); only a scalar's failure is turned into this finding
                if not isinstance(node.value, str):
                    raise
                from ruamel.yaml.constructor import ConstructorError

                tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
                raise ConstructorError(None, None, f"{node.value[:80]!r} is not a valid {tag} value", node.start_mark) \
                    from None

        def construct_yaml_int(self, node: Any) -> Any:
            text = node.value if isinstance(node.value, str) else ""
            digits = sum(ch.isalnum() for ch in text)
            if digits > MAX_INT_DIGITS:
                self.long_ints.append((node.start_mark.line, node.start_mark.column, digits))
                return text
            return super().construct_yaml_int(node)

        def construct_yaml_float(self, node: Any) -> Any:
            value = super().construct_yaml_float(node)
            text = node.value if isinstance(node.value, str) else ""
            if isinstance(value, float) and value in (_INF, -_INF) and "inf" not in text.lower():
                # Go's YAML readers (yaml.v2/v3 resolve: strconv.ParseFloat's range error) keep a number past
                # float64 as its text; PyYAML's YAML 1.1 reads `1e999` (no dot) as text too
                self.huge_floats.append((node.start_mark.line, node.start_mark.column, text))
                return text
            return value

    BoundedConstructor.add_constructor("tag:yaml.org,2002:int", BoundedConstructor.construct_yaml_int)
    BoundedConstructor.add_constructor("tag:yaml.org,2002:float", BoundedConstructor.construct_yaml_float)
    return BoundedConstructor


_CONSTRUCTOR: Any = None


def _linear_tag_suffix() -> None:
    """ruamel's ``Tag.uri_decoded_suffix`` (0.18, 0.19) decodes a tag's `%XX` escapes by appending one character at
    a time to a string, which costs quadratic time in the tag's length: a 1 MB `!<tag:...>` took 13 CPU-s. The same
    decoding (each `%` and the two characters after it are one character, the rest as written; the scanner has
    checked the escapes) done in one pass."""
    try:
        from ruamel.yaml.tag import Tag
    except ImportError:  # an older ruamel keeps tags as strings
        return
    if getattr(Tag, "_vramlint_linear", False) or not isinstance(Tag.__dict__.get("uri_decoded_suffix"), property):
        return
    escape = re.compile(r"%(..)", re.DOTALL)

    def uri_decoded_suffix(self: Any) -> str | None:
        try:
            return self._uri_decoded_suffix
        except AttributeError:
            pass
        suffix = self.suffix
        decoded = None if suffix is None else (escape.sub(lambda m: chr(int(m.group(1), 16)), suffix)
                                               if "%" in suffix else suffix)
        self._uri_decoded_suffix = decoded
        return decoded

    Tag.uri_decoded_suffix = property(uri_decoded_suffix)
    Tag._vramlint_linear = True


def _yaml():
    from ruamel.yaml import YAML

    global _CONSTRUCTOR
    if _CONSTRUCTOR is None:
        _linear_tag_suffix()
        _CONSTRUCTOR = _constructor_class()
    yaml = YAML(typ="rt")
    yaml.Constructor = _CONSTRUCTOR
    yaml.allow_duplicate_keys = True  # BoundedConstructor.check_mapping_key: the last wins, and is said
    return yaml


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def load_text(text: str, file: str, round_trip: bool = False, quick_refusal: bool = False,
              max_nodes: int | None = None) -> tuple[list[Document], list[Problem]]:
    """Parse every document of ``text``. Invalid YAML is a Problem with its line and column, never a crash.

    Documents before the error are kept: a broken third document still lets the first two be linted.
    ``round_trip``: ruamel's round-trip objects (flow styles, comments), for a file that is to be edited.
    ``quick_refusal``: text libyaml refuses is one error with libyaml's words and no document, instead of
    ruamel's reading of it (for a template, whose plain reading is replaced when it reads as a template).
    ``max_nodes``: a document with more nodes is not read (MAX_DOCUMENT_NODES by default), and said.
    """
    text, too_many = _bounded(text, file, MAX_DOCUMENT_NODES if max_nodes is None else max_nodes)
    if text is None:
        return [], too_many
    if _LONE_SURROGATE.search(text):
        # text made here, not read from a file (a file that is not UTF-8 is refused before): a chart's render or a
        # kustomize build holding a file name's surrogate escapes. Go, which renders these for real, writes U+FFFD
        # for a rune that is not valid; libyaml cannot take the text at all (UnicodeEncodeError)
        text = _LONE_SURROGATE.sub("\ufffd", text)
    if not round_trip:
        failure: list = []
        loaded = _c_load(text, file, quick_refusal, failure=failure)
        if loaded is None:
            loaded = _segmented_load(text, file, None, failure)
        if loaded is not None:
            return (loaded[0], too_many + loaded[1]) if too_many else loaded
        docs, problems = _ruamel_load_bounded(text, file)
        return docs, too_many + problems
    _COMPOSED[:] = [None, None]  # (what `_bounded` composed is libyaml's, not ruamel's)
    docs, problems = _ruamel_load(text, file)  # a file to edit (--fix): ruamel's round-trip objects
    return docs, too_many + problems


# The last large text `_bounded` found within every bound, as (text, max_nodes): the fixes parse a file the scan
# read again, and its nesting and node counts were a second or more of a 2 MB file's second parse
_LAST_WITHIN: list[Any] = [None, 0]
_REMEMBER_WITHIN_CHARS = 64 << 10


def _bounded(text: str, file: str, max_nodes: int) -> tuple[str | None, list[Problem]]:
    """``text`` with the documents too deep or of too many nodes to read blanked out, and a problem for each;
    None for the text when nothing is left to read."""
    if _LAST_WITHIN[0] is text and max_nodes >= _LAST_WITHIN[1]:  # within a bound: within any larger one
        return text, []
    checked = _bounded_unremembered(text, file, max_nodes)
    if len(text) > _REMEMBER_WITHIN_CHARS and checked[0] is text and not checked[1]:
        _LAST_WITHIN[:] = [text, max_nodes]
    return checked


def _bounded_unremembered(text: str, file: str, max_nodes: int) -> tuple[str | None, list[Problem]]:
    too_deep = nesting_problem(text, file)
    deep: list[Problem] = []
    while too_deep is not None:
        # the document that nests too deeply is not read; the file's other documents are
        deep.append(too_deep)
        blanked = _blank_document(text, too_deep.line) if too_deep.line and len(deep) <= 20 else None
        if blanked is None:
            return None, deep
        text = blanked
        too_deep = nesting_problem(text, file)
    text, too_many = _bound_nodes(text, file, max_nodes)
    return text, deep + too_many


def load_each(text: str, file: str, each: Any, restart: Any) -> list[Problem]:
    """``load_text``'s documents handed to ``each`` one at a time, as soon as each is built, and then dropped: a
    stream of 10,000 documents is never held whole. The problems are returned. When the file is one that
    ruamel's load reads (see `_c_load`), ``restart()`` is called (forget the documents handed so far) and
    ruamel's documents are handed over in turn (that load holds them all, as `load_text` does)."""
    given = text
    hit = _LAST_LARGE[1] if _LAST_LARGE[0] is not None and _LAST_LARGE[0] == (text, False) else None
    if hit is not None:  # the one document another reader just parsed (load_shared)
        entries, lines, kept = hit
        for index, data in entries:
            each(Document(file, index, data, lines))
        return [_relabel(p, file) for p in kept]
    text, too_many = _bounded(text, file, MAX_DOCUMENT_NODES)
    if text is None:
        return too_many
    return _load_each_within(given, text, file, each, restart, too_many)


def load_each_unbounded(text: str, file: str, each: Any, restart: Any) -> list[Problem]:
    """`load_each` of a text already found within the bounds on nesting and nodes (a piece of a stream whose
    whole `_bounded` checked: `vramlint.scan._read_pieces`)."""
    return _load_each_within(None, text, file, each, restart, [])


def _load_each_within(given: str | None, text: str, file: str, each: Any, restart: Any, too_many: list[Problem]
                      ) -> list[Problem]:
    handed: list = []  # the first document and how many there were: a stream of one is kept for load_shared

    def counted(doc: Any) -> None:
        if not handed:
            handed[:] = [doc, 0]
        handed[1] += 1
        each(doc)

    failure: list = []
    loaded = _c_load(text, file, each=counted, failure=failure)
    if loaded is None:
        loaded = _segmented_load(text, file, counted, failure)
    if loaded is not None:
        problems = too_many + loaded[1]
    else:
        restart()
        handed.clear()
        docs, problems = _ruamel_load_bounded(text, file)
        for doc in docs:
            counted(doc)
        problems = too_many + problems
    if handed and handed[1] == 1 and given is not None:
        _remember_large(given, False, file, handed[0], problems)
    return problems


# A line that starts or ends a document: YAML forbids it inside any content ("c-forbidden"), so the text between
# two of them holds at most one document, read the same alone as in its stream (anchors do not cross documents).
_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.M)
# Documents read by ruamel one at a time before the rest of the file is left to it whole: after each, libyaml
# reads the rest of the file again from there (a copy of it, padded to keep its line numbers)
MAX_SEGMENTS_TO_RUAMEL = 32


def _segmented_load(text: str, file: str, each: Any, failure: list
                    ) -> tuple[list[Document], list[Problem]] | None:
    """The documents of a file the libyaml load does not decide whole: those it decides by it, each other one by
    ruamel's load on its own, instead of the whole file by ruamel's pure-Python load (a 4.9 MB stream with one
    tagged scalar, one tab or one syntax error at its end took 43 s). ``failure``: what `_c_load` said of where it
    stopped (empty when it refused the whole text before reading it). As with ruamel's load of the whole file,
    nothing after a document ruamel cannot read is read. None: left to ruamel whole (a directive, or too many
    documents that only ruamel reads)."""
    if text.startswith("%") or "\n%" in text:
        return None  # a directive applies to the document after it: the stream is read whole
    starts = [0] + [m.start() for m in _DOCUMENT_MARKER.finditer(text) if m.start() > 0]
    if len(starts) < 2:
        return None  # one document: nothing to split
    ends = starts[1:] + [len(text)]
    line_at = [0]
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        line_at.append(line_at[-1] + text.count("\n", a, b))
    lines = text.splitlines()

    def segment_of(line: int, refused: bool) -> int:
        # libyaml marks a document left open (an unclosed `[`) on the marker line that ends it: that document is
        # the previous segment's (a document it does not decide is placed where its root starts)
        found = bisect.bisect_right(line_at, line) - 1
        return found - 1 if refused and found > 0 and line_at[found] == line else found

    docs: list[Document] = []
    problems: list[Problem] = []
    segment, index = 0, 0  # the first segment not read yet, the index of its first document
    ruamel_next = False  # whether that segment is one libyaml stopped in (or refuses unread)
    if failure and isinstance(failure[0], tuple):
        at_line, index, before, said, refused = failure[0]
        docs.extend(before)
        segment = segment_of(at_line, refused)
        # what libyaml said of the documents before that segment (ruamel reads the segment again)
        problems.extend(p for p in said if p.line is None or p.line <= line_at[segment])
        ruamel_next = True
    to_ruamel = 0
    while segment < len(starts):
        if not ruamel_next:
            # libyaml reads up to the next segment it refuses unread (a line break only YAML 1.1 has, an anchor
            # name it splits)
            last = next((i for i in range(segment, len(starts)) if _refused_unread(text, starts[i], ends[i])),
                        len(starts))
            if last > segment:
                stopped: list = []
                loaded = _c_load("\n" * line_at[segment] + text[starts[segment]:ends[last - 1]], file, each=each,
                                 lines_of=lines, failure=stopped, first_index=index)
                if loaded is not None:
                    docs.extend(loaded[0])
                    problems.extend(loaded[1])
                    index = stopped[0] if stopped and isinstance(stopped[0], int) else index
                    segment = last
                    ruamel_next = True  # the next segment, if any, is one libyaml refuses unread
                    continue
                if not stopped or not isinstance(stopped[0], tuple):
                    return None
                at_line, index, before, said, refused = stopped[0]
                docs.extend(before)
                segment = segment_of(at_line, refused)
                # what libyaml said of the documents before that segment (ruamel reads the segment again)
                problems.extend(p for p in said if p.line is None or p.line <= line_at[segment])
        if segment >= len(starts):
            break
        to_ruamel += 1
        if to_ruamel > MAX_SEGMENTS_TO_RUAMEL:
            return None
        counted: list = []
        seg_docs, seg_problems = _ruamel_load_bounded(text[starts[segment]:ends[segment]], file, lines_of=lines,
                                                      counted=counted, first_line=line_at[segment])
        for doc in seg_docs:
            doc.index += index
            if each is not None:
                each(doc)
        if each is None:
            docs.extend(seg_docs)
        if any(p.level == "error" for p in seg_problems):
            if segment + 1 < len(starts):
                # read with the marker line after it, as in the whole stream, for ruamel's own words ("found
                # '<document start>'" on that line, not "'<stream end>'")
                marker_end = text.find("\n", ends[segment])
                marker_end = len(text) if marker_end < 0 else marker_end + 1
                _, seg_problems = _ruamel_load_bounded(text[starts[segment]:marker_end], file, lines_of=lines,
                                                       first_line=line_at[segment])
            problems.extend(seg_problems)
            return docs, problems  # ruamel stops at what it cannot read: nothing after it is read
        problems.extend(seg_problems)
        index += counted[0] if counted else 0
        segment += 1
        ruamel_next = False  # go on with libyaml
    return docs, problems


# Nodes of a text left to ruamel's pure-Python load (about 80 microseconds a node here, against a few for
# libyaml's): past this, the text is not read, and said (a 240,000-node values file with one tag took 24 s).
MAX_RUAMEL_NODES = 40_000


# ruamel's scanner checks every open flow level at each token (stale_possible_simple_keys), so its time grows with
# the square of the nesting: 3,000 nested `[` in a 3 KB file took 7.6 CPU-s (fuzz seed 2828). No deployment file
# nests flow collections past a few levels.
MAX_RUAMEL_FLOW_NESTING = 500


def _flow_nesting_over(text: str, limit: int) -> int | None:
    """The 0-based line where `[`/`{` (counted outside nothing: brackets in strings count too, an upper bound) first
    nest deeper than ``limit``, or None. Cheap: texts with fewer brackets than the limit are not walked."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for m in _FLOW_BRACKET.finditer(text):
        if m.group(0) in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, m.start())
        elif depth:
            depth -= 1
    return None


_FLOW_BRACKET = re.compile(r"[\[\]{}]")


def _ruamel_load_bounded(text: str, file: str, lines_of: list[str] | None = None, counted: list | None = None,
                         first_line: int = 0) -> tuple[list[Document], list[Problem]]:
    """`_ruamel_load`, unless ``text`` has more than MAX_RUAMEL_NODES nodes (counted by libyaml's parser): then
    no document and a warning on the line where it goes over. ``first_line``: the 0-based line of the file where
    ``text`` starts (a document of a stream, read alone): positions are moved by it, as if the lines before were
    there (ruamel scans blank lines in Python: padding a document deep in a file cost a pass over every line
    before it)."""
    if len(text) * 4 + 1 > MAX_RUAMEL_NODES and _most_nodes(text, 0, len(text)) > MAX_RUAMEL_NODES:
        over = _node_count_over(text, MAX_RUAMEL_NODES)
        if over is not None:
            return [], [Problem(file, over + first_line, 1, "YAML that vramlint reads only with its slower reader "
                                "(a tag, a directive, a YAML 1.1 line break or an anchor name libyaml reads "
                                f"otherwise) and of more than {MAX_RUAMEL_NODES:,} nodes reaches that bound here: "
                                "not read", level="warning")]
    deep = _flow_nesting_over(text, MAX_RUAMEL_FLOW_NESTING)
    if deep is not None:
        return [], [Problem(file, deep + 1 + first_line, 1, "YAML that vramlint reads only with its slower reader "
                            "(a tag, a directive, a YAML 1.1 line break or an anchor name libyaml reads otherwise) "
                            f"with flow collections (`[`, `{{`) nested more than {MAX_RUAMEL_FLOW_NESTING:,} deep "
                            "here: not read", level="warning")]
    docs, problems = _ruamel_load(text, file, lines_of=lines_of, counted=counted)
    if first_line:
        seen: set[int] = set()
        for doc in docs:
            _shift_positions(doc.data, first_line, seen)
        for problem in problems:
            if problem.line is not None:
                problem.line += first_line
    return docs, problems


def _shift_positions(node: Any, lines: int, seen: set[int]) -> None:
    """Move every position ruamel recorded in ``node`` (its ``lc``: line, and each key's, value's or item's line)
    down by ``lines``; an aliased collection once."""
    stack = [node]
    while stack:
        item = stack.pop()
        if not isinstance(item, (dict, list)) or id(item) in seen:
            continue
        seen.add(id(item))
        lc = getattr(item, "lc", None)
        if lc is not None:
            if lc.line is not None:
                lc.line += lines
            for entry in (lc.data or {}).values():
                entry[0] += lines
                if len(entry) > 2:
                    entry[2] += lines
        stack.extend(dict.values(item) if isinstance(item, dict) else item)
        if isinstance(item, dict):
            stack.extend(k for k in dict.keys(item) if isinstance(k, (dict, list)))
            stack.extend(_merged_maps(item))


def _refused_unread(text: str, begin: int, end: int) -> bool:
    """Whether `_c_load` refuses this part of the text before reading it: a character libyaml and ruamel read
    otherwise (NEL, a Unicode line or paragraph separator), or an anchor name libyaml splits."""
    part = text[begin:end] if begin or end < len(text) else text
    return any(ch in part for ch in _LEFT_TO_RUAMEL) or (
        ("&" in part or "*" in part) and _ANCHOR_THEN_INDICATOR.search(part) is not None)


# Nodes (scalars, collections, aliases as written) of one YAML document vramlint builds: each costs about 400
# bytes while it is read, so a 2 MB line of a million flow items would take 500 MB. A real manifest, even a large
# CRD, has a few tens of thousands.
MAX_DOCUMENT_NODES = 250_000


def _bound_nodes(text: str, file: str, max_nodes: int) -> tuple[str, list[Problem]]:
    """``text`` with each document of more than ``max_nodes`` nodes blanked out (its lines kept, so the other
    documents keep their line numbers), and a problem on the line where each went over. Only documents that may
    have that many nodes by `_most_nodes` (counted in C) are parsed here: the whole text, then halves of its run
    of documents, down to the documents that may be over on their own."""
    if len(text) * 4 + 1 <= max_nodes:
        return text, []  # (`_most_nodes` is at most 4 a character, plus one: a small text is not counted)
    starts = [0]
    at = text.find("\n---", 0)
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n---", at + 4)
    starts.append(len(text))
    if max(b - a for a, b in zip(starts, starts[1:], strict=False)) * 4 + 1 <= max_nodes or \
            _most_nodes(text, 0, len(text)) <= max_nodes:
        return text, []  # no document is long enough to hold that many, or the whole text has fewer
    over_at: list[tuple[int, int, int]] = []  # (begin, end, 1-based line in the document) of each document over
    runs = [(0, len(starts) - 1)]  # documents [first, last) of ``starts`` that may hold one over the bound
    while runs:
        first, last = runs.pop()
        most = _most_nodes(text, starts[first], starts[last])
        if most <= max_nodes:
            continue
        if last - first > 1:
            middle = (first + last) // 2
            runs += [(middle, last), (first, middle)]  # the first half first: documents in order
            continue
        begin, end = starts[first], starts[last]
        over = _node_count_over(text[begin:end], max_nodes, keep=begin == 0 and end == len(text), most=most)
        if over is not None:
            over_at.append((begin, end, over))
    if not over_at:
        return text, []
    problems: list[Problem] = []
    pieces: list[str] = []
    done = 0
    for begin, end, over in over_at:
        line = text.count("\n", 0, begin) + over
        problems.append(Problem(file, line, 1, f"a YAML document of more than {max_nodes:,} nodes (vramlint's limit) "
                                               "reaches it here: the document is not read", level="warning"))
        keep = "---\n" if text.startswith("---", begin) else "\n"  # the separator stays: the documents stay apart
        pieces.append(text[done:begin])
        pieces.append(keep + "\n" * (text.count("\n", begin, end) - 1))
        done = end
    pieces.append(text[done:])
    return "".join(pieces), problems


# What may follow a block sequence's `-` indicator (a blank or a line break; YAML 1.1's line breaks too)
_AFTER_DASH = ("- ", "-\t", "-\n", "-\r", "-\x85", "-\u2028", "-\u2029")


def _most_nodes(text: str, begin: int, end: int) -> int:
    """At most how many nodes ``text[begin:end]`` has, counted in C. Every node stands in one place: a document's
    root, a sequence entry (a block entry's `-` indicator before a blank or a line break; a flow entry after `[`
    or `,`), a mapping key (before its `:` indicator, after `?`, or after `{` or `,` in a flow mapping) or the
    value of a key (one a key, written or empty). So: roots + entries + 2 x keys. Indicators counted inside
    scalars and comments make it larger, never smaller. Each counted indicator is a character of its own, so the
    count is at most 4 x the characters, plus one."""
    count = text.count
    roots = count("---", begin, end) + count("...", begin, end) + 1
    entries = sum(count(dash, begin, end) for dash in _AFTER_DASH) + (text.endswith("-", begin, end))
    flow = count("[", begin, end) + count("{", begin, end) + count(",", begin, end)
    keys = count(":", begin, end) + count("?", begin, end) + flow
    return roots + entries + flow + 2 * keys


def _blank_document(text: str, line: int) -> str | None:
    """``text`` with the document holding 1-based ``line`` made empty (its `---` and its line breaks kept);
    None when that leaves nothing to read."""
    at = 0
    for _ in range(line - 1):
        at = text.find("\n", at) + 1
        if at == 0:
            return None
    begin = text.rfind("\n---", 0, at + 1)
    begin = 0 if begin < 0 else begin + 1
    end = text.find("\n---", at)
    end = len(text) if end < 0 else end + 1
    keep = "---\n" if text.startswith("---", begin) else "\n"
    blank = keep + "\n" * (text.count("\n", begin, end) - 1)
    out = text[:begin] + blank + text[end:]
    return out if out.strip(" \n-") else None


def _node_count_over(chunk: str, max_nodes: int, keep: bool = False, most: int | None = None) -> int | None:
    """The 1-based line (in ``chunk``) of the node past ``max_nodes`` in one document, by libyaml's events (no
    node is built); None when it has fewer, or when libyaml is missing or refuses the text (the load says why).
    ``keep``: ``chunk`` is the whole text the load reads next, which may then reuse its composition (see
    `_counted_by_composing`); ``most``: `_most_nodes` of ``chunk``, when the caller has it."""
    if _counted_by_composing(chunk, max_nodes, keep, most):
        return None
    try:
        from yaml._yaml import CParser
        from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent
    except ImportError:
        return None
    counted = (ScalarEvent, SequenceStartEvent, MappingStartEvent, AliasEvent)
    parser = CParser(chunk)
    n = 0
    try:
        while parser.check_event():
            event = parser.get_event()
            if isinstance(event, counted):
                n += 1
                if n > max_nodes:
                    return event.start_mark.line + 1
    except Exception:  # noqa: BLE001 - invalid YAML: the load reports it, on its line
        return None
    finally:
        parser.dispose()
    return None


# The one document `_counted_by_composing` composed, kept for the load of the same text that follows (`_c_load`):
# [the text, its root node]; taken (and cleared) by the next `_c_load`, whatever it reads.
_COMPOSED: list[Any] = [None, None]


class _OverBound(Exception):
    """More nodes than the bound being counted."""


def _counted_by_composing(chunk: str, max_nodes: int, keep: bool, most: int | None = None) -> bool:
    """Whether ``chunk`` was found to hold at most ``max_nodes`` nodes by composing it, as `_c_load` does. A large
    document just within the bound (8,215 compose services in one file) was parsed twice, once for its events
    and once for its nodes: composed once, the load takes the composition (``keep``, a text of one document).
    Counted so only where each node passes through the composer's `resolve` (no alias, which makes no call, nor an
    explicit tag, which skips it), so that the count is the events' count; and only where `_most_nodes` says at
    most 3 x the bound, since the composer holds up to ``max_nodes`` nodes before it knows it is over (composed in
    vain, 250,000 nodes took 0.31 CPU-s, and the events are counted after it). 3 x: in flow style, a comma counts
    3 and a colon 2, so a minified JSON List of 6,000 Deployments (228,007 nodes) is 612,016 at most; over 1.5 x
    its events were counted (0.25 CPU-s) and the load composed it again. False: not counted so, or over the bound
    (the events say where)."""
    if (_most_nodes(chunk, 0, len(chunk)) if most is None else most) > max_nodes * 3:
        return False  # (first: a 5 MB document well over the bound is not searched for `*` and `!` too)
    composer_class = _composer_class()
    if composer_class is None or "*" in chunk or "!" in chunk:
        return False
    plain, quoted, seq, mapping = _PLAIN, _QUOTED, _SEQ, _MAP
    scalar_node, sequence_node, _ = composer_class.node_classes

    class Counting(composer_class):
        nodes = 0

        def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
            self.nodes += 1
            if self.nodes > max_nodes:
                raise _OverBound
            if kind is scalar_node:
                return plain if implicit[0] else quoted
            return seq if kind is sequence_node else mapping

    loader = Counting(chunk)
    roots = []
    try:
        while loader.check_node():
            roots.append(loader.get_node())
    except _OverBound:
        return False
    except Exception:  # noqa: BLE001 - invalid YAML: the load reports it, on its line (as the events' count)
        return True
    finally:
        loader.dispose()
    if keep and len(roots) == 1:
        _COMPOSED[:] = [chunk, roots[0]]
    return True


# Parses of texts this process may read again, for readers that change nothing they are given (`load_shared`):
# text -> (the documents' (index, data), their lines, the problems). A repository of copies (one manifest per
# environment, vendored examples) or a compose file that every service `extends` is parsed once. Bounded by the
# texts' size, oldest first out; larger texts are not kept.
_SHARED: dict[tuple[str, bool], tuple[list[tuple[int, Any]], list[str], list[Problem]]] = {}
_SHARED_SIZE = [0]
SHARED_MAX_CHARS = 1 << 20
SHARED_MAX_TEXT = 64 << 10


def load_shared(text: str, file: str, quick_refusal: bool = False, max_chars: int | None = None
                ) -> tuple[list[Document], list[Problem]]:
    """``load_text`` for a reader that changes nothing in what it gets: the documents' contents (the mappings
    and sequences) are shared with every other reader of the same text in this process; each reader gets its
    own `Document` and `Problem` objects, for its own ``file``. ``max_chars``: keep the kept texts within this
    (``SHARED_MAX_CHARS`` when not given), oldest out first."""
    limit = SHARED_MAX_CHARS if max_chars is None else max_chars
    key = (text, quick_refusal)
    hit = _SHARED.get(key)
    if hit is None and _LAST_LARGE[0] is not None and _LAST_LARGE[0][1] == quick_refusal and \
            _LAST_LARGE[0][0] == text:
        hit = _LAST_LARGE[1]
    if hit is None:
        docs, problems = load_text(text, file, quick_refusal=quick_refusal)
        if len(text) > SHARED_MAX_TEXT and len(docs) == 1:
            _remember_large(text, quick_refusal, file, docs[0], problems)
        if len(text) <= min(SHARED_MAX_TEXT, limit) and not any(file in p.message for p in problems):
            while _SHARED and _SHARED_SIZE[0] + len(text) > limit:
                oldest = next(iter(_SHARED))
                _SHARED_SIZE[0] -= len(oldest[0])
                del _SHARED[oldest]
            _SHARED[key] = ([(d.index, d.data) for d in docs], docs[0].lines if docs else [],
                            [_relabel(p, "") for p in problems])
            _SHARED_SIZE[0] += len(text)
        return docs, problems
    entries, lines, problems = hit
    return [Document(file, index, data, lines) for index, data in entries], [_relabel(p, file) for p in problems]


# The parse of the last text of one document too large for `_SHARED` (keyed and kept as there): the fixes look
# again at a file the scan read (a 2 MB Dynamo graph of 5,000 workers was parsed a second time, ~1.5 CPU-s). One
# document, held while it is read anyway, replaced by the next.
_LAST_LARGE: list[Any] = [None, None]


def _remember_large(text: str, quick_refusal: bool, file: str, doc: Document, problems: list[Problem]) -> None:
    if len(text) <= SHARED_MAX_TEXT or any(file in p.message for p in problems):
        return
    _LAST_LARGE[:] = [(text, quick_refusal), ([(doc.index, doc.data)], doc.lines, [_relabel(p, "") for p in problems])]


def _relabel(problem: Problem, file: str) -> Problem:
    import copy

    out = copy.copy(problem)
    out.file = file
    return out


def forget_shared() -> None:
    _SHARED.clear()
    _SHARED_SIZE[0] = 0
    _LAST_LARGE[:] = [None, None]


def _ruamel_load(text: str, file: str, lines_of: list[str] | None = None, counted: list | None = None
                 ) -> tuple[list[Document], list[Problem]]:
    import warnings

    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    lines = text.splitlines() if lines_of is None else lines_of
    docs: list[Document] = []
    problems: list[Problem] = []
    has_aliases = "*" in text
    try:
        # ruamel reports a reused anchor as a Python warning, which would reach the user's terminal as a raw
        # library message about "<unicode string>": it becomes a note on this file's line instead.
        yaml = _yaml()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i, data in enumerate(yaml.load_all(text)):
                if counted is not None:
                    counted[:] = [i + 1]
                if data is not None:
                    if has_aliases:
                        problems.extend(bound_aliases(data, file))
                    docs.append(Document(file=file, index=i, data=data, lines=lines))
        problems.extend(_warning_problem(w.message, file) for w in caught)
        constructor = getattr(yaml, "_constructor", None)  # created by the load; absent when nothing was loaded
        problems.extend(_duplicate_key_problems(file, getattr(constructor, "duplicate_keys", ())))
        problems.extend(_long_int_problems(file, getattr(constructor, "long_ints", ())))
        problems.extend(_huge_float_problems(file, getattr(constructor, "huge_floats", ())))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        col = mark.column + 1 if mark is not None else None
        own = lines if lines_of is None else text.splitlines()  # a segment of a file: its own end
        if line is not None and line > max(len(own), 1):
            # "unexpected end of stream" is marked after the last newline, on a line editors and SARIF
            # viewers do not have: report it at the end of the last line
            line = max(len(own), 1)
            col = len(own[-1]) + 1 if own else 1
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


# --- the C-backed load ------------------------------------------------------------------------------------------

class LineCol:
    """Positions in a mapping or sequence, 0-based, kept as ruamel's ``lc`` keeps them: ``line``/``col`` where
    the collection starts, ``data[key] = [key line, key column, value line, value column]`` for a mapping and
    ``data[index] = [line, column]`` for a sequence (None when the collection is empty)."""

    __slots__ = ("line", "col", "data")

    def __init__(self, line: int, col: int) -> None:
        self.line = line
        self.col = col
        self.data: dict[Any, list[int]] | None = None

    def key(self, key: Any) -> tuple[int, int] | None:
        if self.data is None:
            return None
        entry = self.data[key]
        return entry[0], entry[1]

    def value(self, key: Any) -> tuple[int, int] | None:
        if self.data is None:
            return None
        entry = self.data[key]
        return entry[2], entry[3]

    def item(self, index: int) -> tuple[int, int] | None:
        if self.data is None:
            return None
        entry = self.data[index]
        return entry[0], entry[1]


class YamlMap(dict):
    """A YAML mapping: a dict with the positions of its keys and values (``lc``) and, when it has a merge key
    (`<<: *x`), the maps merged into it (``merge``; their keys are in the dict too, after its own)."""

    __slots__ = ("lc", "merge")


class YamlSeq(list):
    """A YAML sequence: a list with the positions of its items (``lc``); ``flow`` is set on one written in flow
    style (`[a, b]`), which an edit cannot extend by adding a `- item` line."""

    __slots__ = ("lc", "flow")


def is_flow(node: Any) -> bool:
    """Whether a loaded sequence is written in flow style (`[a, b]`), whichever load read it."""
    if isinstance(node, YamlSeq):
        return getattr(node, "flow", False)
    fa = getattr(node, "fa", None)  # ruamel's round-trip objects keep their style there
    return bool(fa is not None and fa.flow_style())


# Block scalars keep their style, as ruamel's classes of the same names do: a `|` script is read line by line.
class LiteralScalarString(str):
    __slots__ = ()


class FoldedScalarString(str):
    __slots__ = ()


class _NotDecided(Exception):
    """Something the C-backed load leaves to ruamel (which then reads the whole file as it always has)."""


# Tags the composer gives nodes that carry none of their own (what a tag written in the file cannot be)
_PLAIN, _QUOTED, _SEQ, _MAP = "?plain", "?quoted", "?seq", "?map"
# A key's item ruamel's round-trip load makes a plain int (not its ScalarInt): decimal digits, no leading zero
_PLAIN_DECIMAL = re.compile(r"[-+]?[1-9][0-9]*")


def _key_item_as_ruamel(value: Any) -> bool:
    """A mapping key's value (`? {x: 1}`) of a type this load makes as ruamel does, int or bool (the text of an
    int is checked against _PLAIN_DECIMAL where the key is built)."""
    return type(value) is bool or type(value) is int


# Scalar resolution of YAML 1.2 (the core schema), as ruamel resolves plain scalars without a %YAML directive
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_NUMBER_START = frozenset("-+0123456789.")
_INF = float("inf")
_FLOAT = r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$"""
_INT = r"""^(?:[-+]?0b[0-1_]+
    |[-+]?0o?[0-7_]+
    |[-+]?[0-9_]+
    |[-+]?0x[0-9a-fA-F_]+)$"""
_TIMESTAMP = r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
    (?:[Tt]|[ \t]+)[0-9][0-9]?
    :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
    (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$"""
# Files holding these are read by ruamel, as before: libyaml (YAML 1.1) breaks lines at them. A tab is not one of
# them: libyaml skips a tab between tokens wherever no simple key may start (after a key's `:`, after a value, in
# flow context) and refuses it elsewhere (indentation), as go-yaml does (scannerc.go, yaml_parser_scan_to_next_token,
# a port of libyaml's scanner), and go-yaml is what reads manifests for kubectl, Helm and Compose; ruamel refuses
# `key:<tab>value` and a tab after a value, which those tools apply
_LEFT_TO_RUAMEL = ("\x85", "\u2028", "\u2029")
# An anchor or alias name runs up to a blank or flow indicator in YAML 1.2 (ruamel: `&ref:` is the anchor
# "ref:"), but stops at these in libyaml (the anchor "ref" on an empty key): such files are read by ruamel.
_ANCHOR_THEN_INDICATOR = re.compile(r"[&*][0-9A-Za-z_-]+[:?%@`]")

_STR_TAG = "tag:yaml.org,2002:str"
_TAGGED_SCALAR: Any = None


def _tagged_scalar_class() -> Any:
    global _TAGGED_SCALAR
    if _TAGGED_SCALAR is None:
        from ruamel.yaml.comments import TaggedScalar

        _TAGGED_SCALAR = TaggedScalar
    return _TAGGED_SCALAR


_STR_TAG_OBJECT: Any = None


def _str_tag() -> Any:
    """The tag ruamel's parser gives `!!str`, as its RoundTripParser makes it (ruamel makes one per node; one is
    shared here, as nothing changes a loaded value's tag)."""
    global _STR_TAG_OBJECT
    if _STR_TAG_OBJECT is None:
        from ruamel.yaml.tag import Tag

        tag = Tag(handle="!!", suffix="str", handles={"!": "!", "!!": "tag:yaml.org,2002:"})
        tag.select_transform(True)
        _STR_TAG_OBJECT = tag
    return _STR_TAG_OBJECT


_COMPOSER: Any = None
_NUMBER_PATTERNS: Any = None
# What untagged plain scalars resolve to, by their text (`scalar` in `_c_load`): for this process's every file
_PLAIN_SCALARS: dict[str, Any] = {"": None}
_PLAIN_SCALARS_MAX = 50_000
_PLAIN_TEXT_MAX = 200
_MISSING = object()


def _composer_class() -> Any:
    """libyaml's parser and PyYAML's C composer (nodes with marks), tagging untagged nodes with the markers
    above instead of resolving them by PyYAML's YAML 1.1 rules; None without PyYAML's C extension."""
    global _COMPOSER
    if _COMPOSER is None:
        try:
            from yaml import MappingNode, ScalarNode, SequenceNode
            from yaml._yaml import CParser
        except ImportError:
            _COMPOSER = False
            return None

        class Composer(CParser):
            def descend_resolver(self, parent: Any, index: Any) -> None:
                pass

            def ascend_resolver(self) -> None:
                pass

            def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
                if kind is ScalarNode:
                    return _PLAIN if implicit[0] else _QUOTED
                return _SEQ if kind is SequenceNode else _MAP

        Composer.node_classes = (ScalarNode, SequenceNode, MappingNode)
        _COMPOSER = Composer
    return _COMPOSER or None


def _number_patterns() -> Any:
    global _NUMBER_PATTERNS
    if _NUMBER_PATTERNS is None:
        import re

        _NUMBER_PATTERNS = tuple(re.compile(p, re.X).match for p in (_FLOAT, _INT, _TIMESTAMP))
    return _NUMBER_PATTERNS


_TIMESTAMP_CONSTRUCTOR: Any = None


def _timestamp(value: str) -> Any:
    """An unquoted date or time as ruamel's round-trip load constructs it (``datetime.date`` or its TimeStamp): one
    such value no longer sends a whole file to ruamel's pure-Python load (a 4.9 MB manifest with one date took
    43 s). A value ruamel's constructor refuses (`2024-13-45`) is left to ruamel's load, which says where."""
    global _TIMESTAMP_CONSTRUCTOR
    from ruamel.yaml.nodes import ScalarNode

    if _TIMESTAMP_CONSTRUCTOR is None:
        from ruamel.yaml.constructor import RoundTripConstructor

        _TIMESTAMP_CONSTRUCTOR = RoundTripConstructor()
    try:
        return _TIMESTAMP_CONSTRUCTOR.construct_yaml_timestamp(ScalarNode("tag:yaml.org,2002:timestamp", value))
    except Exception:  # noqa: BLE001 - ruamel's load reports it on its line
        raise _NotDecided from None


def _c_load(text: str, file: str, quick_refusal: bool = False, each: Any = None,
            lines_of: list[str] | None = None, failure: list | None = None, first_index: int = 0
            ) -> tuple[list[Document], list[Problem]] | None:
    """``load_text`` through libyaml; None when PyYAML's C extension is missing or the file holds something
    this load leaves to ruamel (see `_NotDecided`), or libyaml refuses it (ruamel then says why, and where).
    ``each``: each document is handed to it as soon as it is built, and not kept (the list returned is empty)."""
    composed = _COMPOSED[1] if _COMPOSED[0] is text else None  # (see `_counted_by_composing`)
    _COMPOSED[:] = [None, None]
    composer_class = _composer_class()
    if composer_class is None or _refused_unread(text, 0, len(text)):
        return None
    if text.startswith("%") or "\n%" in text:
        return None  # a %YAML or %TAG directive
    if type(text) is not str:
        text = str(text)  # a block string of an outer file (YAML held in a ConfigMap): libyaml takes exact str only
    scalar_node, sequence_node, _mapping_node = composer_class.node_classes
    is_float, is_int, is_timestamp = _number_patterns()
    lines = text.splitlines() if lines_of is None else lines_of
    raw_lines: list[str] | None = None  # split on "\n" only, as marks count lines; made when needed
    duplicates: list[tuple[int, int, str, int | None]] = []
    huge_floats: list[tuple[int, int, str]] = []
    long_ints: list[tuple[int, int, int]] = []
    built: dict[int, Any] = {}  # id(node) -> object: an alias gives the very object its anchor built
    reached_again = [False]  # whether the document being built reached a collection twice (through an alias)
    plain_get = _PLAIN_SCALARS.get

    def scalar(node: Any) -> Any:
        tag = node.tag
        value = node.value
        if tag == _PLAIN:
            found = plain_get(value, _MISSING)
            if found is not _MISSING:
                return found
            return plain(value, node)
        if tag == _QUOTED:
            style = node.style
            if style == "|":
                return LiteralScalarString(value)
            if style == ">":
                return FoldedScalarString(value)
            return value
        if tag == _STR_TAG:
            return tagged_str(node)
        raise _NotDecided  # a tag written in the file: ruamel's constructors decide what it makes

    def tagged_str(node: Any) -> Any:
        # `!!str 1`, written with the `!!` handle and no anchor: ruamel's round-trip load makes it a TaggedScalar
        # (construct_unknown, for any tag with a handle), built here the same way, so a file whose ConfigMaps
        # quote their numbers with `!!str` is not read by ruamel's pure-Python load (60 such files of 90 KB took
        # 38 s); a verbatim `!<tag:yaml.org,2002:str>` (a plain str to ruamel), an anchored one and an empty one
        # (ruamel places it where the next token starts) are left to it. Marks count characters of ``text``.
        at = node.start_mark.index
        after = text[at + 5:at + 6]
        if not text.startswith("!!str", at) or (after and not after.isspace()) or not (node.value or node.style):
            raise _NotDecided
        return _tagged_scalar_class()(node.value, node.style or None, _str_tag())

    def plain(value: str, node: Any) -> Any:
        # an untagged plain scalar, resolved as YAML 1.2's core schema does; what depends on the text alone is
        # kept for the next scalar of the same text (keys and values repeat: `name`, `image`, `true`, `"1"`)
        if not value:
            return None
        first = value[0]
        if first in "tTfF":
            made = _BOOLS.get(value, value)
        elif first in "~nN":
            made = None if value in _NULLS else value
        elif first in _NUMBER_START:
            said = len(huge_floats) + len(long_ints)
            made = number(value, first, node.start_mark)
            if said != len(huge_floats) + len(long_ints) or not (made.__class__ in (str, int) or (
                    made.__class__ is float and made == made)):
                return made  # said on its own line, a date (a mutable object) or NaN (equal to no other): not kept
        elif first in "<=" and value in ("<<", "="):
            raise _NotDecided  # a merge key where a value is, or YAML's `=` value key
        else:
            made = value
        if len(value) <= _PLAIN_TEXT_MAX and len(_PLAIN_SCALARS) < _PLAIN_SCALARS_MAX:
            _PLAIN_SCALARS[value] = made
        return made

    def number(value: str, first: str, mark: Any) -> Any:
        if is_float(value):
            digits = value.replace("_", "").lower()
            sign = -1 if first == "-" else 1
            if first in "+-":
                digits = digits[1:]
            if digits == ".inf":
                return sign * float("inf")
            if digits == ".nan":
                return float("nan")
            number = sign * float(digits)
            if number in (_INF, -_INF):
                # past float64: kept as text, with a warning, as ruamel's load does (BoundedConstructor)
                huge_floats.append((mark.line, mark.column, value))
                return value
            return number
        if first != "." and is_int(value):
            if len(value) > MAX_INT_DIGITS:
                digits_count = sum(ch.isalnum() for ch in value)  # as BoundedConstructor.construct_yaml_int counts
                if digits_count > MAX_INT_DIGITS:
                    long_ints.append((mark.line, mark.column, digits_count))
                    return value
            digits = value.replace("_", "")
            sign = -1 if first == "-" else 1
            if first in "+-":
                digits = digits[1:]
            base = {"0b": 2, "0x": 16, "0o": 8}.get(digits[:2])
            return sign * (int(digits[2:], base) if base else int(digits))
        if first.isdigit() and is_timestamp(value):
            return _timestamp(value)  # a date or time: the object ruamel's round-trip load makes
        return value

    def build(node: Any) -> Any:
        cls = node.__class__
        if cls is scalar_node:
            return scalar(node)
        found = built.get(id(node))
        if found is not None:
            reached_again[0] = True  # an alias (a merge key's source too): the document shares a collection
            return found
        start = node.start_mark
        if cls is sequence_node:
            if node.tag != _SEQ:
                raise _NotDecided
            seq = YamlSeq()
            seq.lc = LineCol(start.line, start.column)
            if node.flow_style:
                seq.flow = True
            built[id(node)] = seq
            if node.value:
                positions = {}
                add = seq.append
                for i, item in enumerate(node.value):
                    if item.__class__ is not scalar_node:
                        add(build(item))
                    elif item.tag == _PLAIN:
                        made = plain_get(item.value, _MISSING)
                        add(plain(item.value, item) if made is _MISSING else made)
                    else:
                        add(scalar(item))
                    mark = item.start_mark
                    positions[i] = [mark.line, mark.column]
                seq.lc.data = positions
            return seq
        if node.tag != _MAP:
            raise _NotDecided
        mapping = YamlMap()
        mapping.lc = LineCol(start.line, start.column)
        mapping.merge = None
        built[id(node)] = mapping
        pairs = node.value
        merged = None
        positions = {}
        # (a scalar value is read by `scalar` here, not through `build`: one call less for most nodes of a file)
        for i, (key_node, value_node) in enumerate(pairs):
            if key_node.__class__ is not scalar_node:
                key = collection_key(key_node)  # (a collection key's value is a list, never "<<")
            elif key_node.tag == _PLAIN:
                text_ = key_node.value
                key = plain_get(text_, _MISSING)
                if key is _MISSING:
                    if text_ == "<<":
                        if merged is not None:
                            raise _NotDecided  # a second merge key: ruamel refuses it
                        merged = merge_sources(value_node)
                        continue
                    key = plain(text_, key_node)
            elif key_node.tag == _STR_TAG:
                raise _NotDecided  # a tagged key: ruamel's load decides whether it can be one
            else:
                key = scalar(key_node)
            key_mark, value_mark = key_node.start_mark, value_node.start_mark
            if value_node.__class__ is scalar_node:
                if value_node.tag == _PLAIN:
                    text_ = value_node.value
                    value = plain_get(text_, _MISSING)
                    if value is _MISSING:
                        value = plain(text_, value_node)
                else:
                    value = scalar(value_node)
                if not value_node.value and not value_node.style:
                    value_at = empty_value_place([value_mark.line, value_mark.column], pairs, i, node)
                    at = [key_mark.line, key_mark.column, value_at[0], value_at[1]]
                else:
                    at = [key_mark.line, key_mark.column, value_mark.line, value_mark.column]
            else:
                value = build(value_node)
                at = [key_mark.line, key_mark.column, value_mark.line, value_mark.column]
            if key in mapping:
                # the API server (JSON decoding) keeps the last of duplicate keys: the first is dropped, and the
                # duplicate said on its line
                first = positions.get(key)
                duplicates.append((key_mark.line, key_mark.column, str(key), first[0] + 1 if first else None))
                del mapping[key]
            mapping[key] = value
            positions[key] = at
        if positions:
            mapping.lc.data = positions
        if merged:
            mapping.merge = merged
            for source in merged:
                for key, value in dict.items(source):
                    if key not in mapping:
                        dict.__setitem__(mapping, key, value)
        return mapping

    def collection_key(key_node: Any) -> Any:
        # A mapping or sequence as a key, most often a template placeholder read as YAML: `{{HF_TOKEN}}` is a
        # flow mapping whose one key is the mapping {HF_TOKEN: null}. ruamel makes such a key a CommentedKeyMap
        # (CommentedKeySeq), whose text ("ordereddict([('HF_TOKEN', None)])") is what a path or message shows:
        # the same classes are made here, from the same items, when those are plain text or null (other scalars
        # are ruamel's own types, which this load does not make).
        made = build(key_node)
        items = list(dict.items(made)) if isinstance(made, YamlMap) else [(item, None) for item in made]
        if (isinstance(made, YamlMap) and made.merge) or not all(
                type(k) is str and (v is None or type(v) is str or _key_item_as_ruamel(v)) for k, v in items):
            raise _NotDecided
        for _, item in key_node.value if isinstance(made, YamlMap) else ():
            if type(scalar(item)) in (int, bool) and ("&" in text or (
                    type(scalar(item)) is int and not _PLAIN_DECIMAL.fullmatch(item.value))):
                # 0, 0x1, 1_000, 01 or an anchored number or boolean: ruamel's ScalarInt, HexInt, ScalarBoolean
                # (whose text is not a bool's), which this load does not make
                raise _NotDecided
        from ruamel.yaml.comments import CommentedKeyMap, CommentedKeySeq

        key = CommentedKeyMap(made) if isinstance(made, YamlMap) else CommentedKeySeq(made)
        if key_node.flow_style:
            key.fa.set_flow_style()
        else:
            key.fa.set_block_style()
        key._yaml_set_line_col(made.lc.line, made.lc.col)
        return key

    def merge_sources(value_node: Any) -> list[Any]:
        if value_node.__class__ is sequence_node:
            build(value_node)
            sources = list(value_node.value)
        else:
            sources = [value_node]
        out = []
        for source in sources:
            made = build(source)
            if not isinstance(made, YamlMap):
                raise _NotDecided  # ruamel refuses to merge what is not a mapping, and says where
            out.append(made)
        return out

    def empty_value_place(value_at: list[int], pairs: list[Any], i: int, mapping_node: Any) -> list[int]:
        # An empty value: libyaml places it right after the colon, ruamel where the next token starts: the next
        # key, unless a comment follows the colon; after a mapping's last key, whatever follows the mapping.
        nonlocal raw_lines
        if raw_lines is None:
            raw_lines = text.split("\n")
        if mapping_node.flow_style:
            # `{a}` or `{a, b: c}`: a key with no colon; both place its empty value where the next token starts.
            # After a colon (`{a: }`) ruamel places it right after the colon, libyaml at the next token: left to ruamel.
            end = pairs[i][0].end_mark
            after = raw_lines[end.line][end.column:].lstrip(" ") if end.line < len(raw_lines) else ""
            if after[:1] not in (",", "}", "]"):
                raise _NotDecided
            return value_at
        line, col = value_at
        rest = raw_lines[line][col:] if line < len(raw_lines) else ""
        if rest.startswith("&"):
            return value_at  # an anchored empty value: both place it at its anchor
        if i + 1 < len(pairs):
            if rest.lstrip().startswith("#"):
                return value_at
            mark = pairs[i + 1][0].start_mark
            return [mark.line, mark.column]
        mark = mapping_node.end_mark
        if mark.line >= len(raw_lines):  # the end of a text without a final line break
            return [len(raw_lines) - 1, len(raw_lines[-1])]
        return [mark.line, mark.column]

    docs: list[Document] = []
    problems: list[Problem] = []
    has_aliases = "*" in text
    # the document `_counted_by_composing` composed from this very text, if it did
    pending = [composed] if composed is not None else None
    composed = None
    loader = composer_class(text) if pending is None else None
    root = None
    try:
        index = first_index
        while pending if pending is not None else loader.check_node():
            root = pending.pop() if pending is not None else loader.get_node()
            built.clear()
            reached_again[0] = False
            data = build(root)
            root = None  # libyaml's nodes of this document: freed before the next is read (or ``each`` reads this)
            built.clear()
            if data is not None:
                if has_aliases and reached_again[0]:
                    # (a document that shares no collection is a tree of its own nodes: nothing to bound)
                    problems.extend(bound_aliases(data, file))
                if each is None:
                    docs.append(Document(file=file, index=index, data=data, lines=lines))
                else:
                    each(Document(file=file, index=index, data=data, lines=lines))
                    data = None
            index += 1
    except Exception as exc:  # noqa: BLE001 - what libyaml refuses or this load does not decide is read by ruamel
        mark = getattr(exc, "problem_mark", None)
        if quick_refusal and mark is not None:
            return [], [Problem(file, mark.line + 1, mark.column + 1, f"invalid YAML: {exc.problem}")]
        if failure is not None:
            # where it stopped (the document this load does not decide, or where libyaml refused the text), what
            # it built before that, and how many documents came before: `_segmented_load` goes on from there
            at = root.start_mark.line if root is not None and isinstance(exc, _NotDecided) else \
                mark.line if mark is not None else None
            if at is not None and not isinstance(exc, RecursionError):
                # what the documents before it said (the one it stopped in is read again, by ruamel)
                failure.append((at, index, docs, problems
                                + _duplicate_key_problems(file, [d for d in duplicates if d[0] < at])
                                + _long_int_problems(file, [n for n in long_ints if n[0] < at])
                                + _huge_float_problems(file, [f for f in huge_floats if f[0] < at]),
                                not isinstance(exc, _NotDecided)))
        return None
    finally:
        if loader is not None:
            loader.dispose()
        # The nested functions refer to each other through their closure: a reference cycle, which would keep
        # this load's objects (and ``built``, every collection of the file) alive until the cyclic garbage
        # collector finds it, and make each of its passes longer. Broken here, they are freed at once.
        built.clear()
        scalar = plain = number = build = merge_sources = empty_value_place = None  # noqa: F841
    problems.extend(_duplicate_key_problems(file, duplicates))
    problems.extend(_long_int_problems(file, long_ints))
    problems.extend(_huge_float_problems(file, huge_floats))
    if failure is not None:
        failure.append(index)  # no failure: the number of documents read
    return docs, problems


def _duplicate_key_problems(file: str, duplicates: Any) -> list[Problem]:
    out = []
    for line, col, key, first in sorted(duplicates):  # in file order (ruamel builds nested mappings late)
        shown = key if len(key) <= 60 else key[:60] + "..."
        out.append(Problem(file, line + 1, col + 1, f"duplicate key {shown!r}{f' (first at line {first})' if first else ''}"
                           ": the last one is used, as the Kubernetes API server keeps it (kubectl apply with its "
                           "default --validate=strict, and docker compose, refuse the file)", level="warning"))
    return out


# Numbers of one file said on their own lines; the others are said once, on the first of them, with how many
# there are and where they end: 50,000 `1e999` counts in one file were 25,000 warnings (and 7.6 CPU-s).
MAX_NUMBER_PROBLEMS = 20


def _folded(file: str, found: list[tuple[int, int, str]], what: str) -> list[Problem]:
    """A warning per entry of ``found`` ((0-based line, column, message) in file order), the ones past
    `MAX_NUMBER_PROBLEMS` folded into one on the first of them."""
    out = [Problem(file, line + 1, col + 1, message, level="warning")
           for line, col, message in found[:MAX_NUMBER_PROBLEMS]]
    rest = found[MAX_NUMBER_PROBLEMS:]
    if rest:
        line, col, message = rest[0]
        out.append(Problem(file, line + 1, col + 1, f"{message} (so are the {len(rest) - 1:,} more {what} after it "
                           f"in this file, the last on line {rest[-1][0] + 1})" if len(rest) > 1 else message,
                           level="warning"))
    return out


def _huge_float_problems(file: str, huge_floats: Any) -> list[Problem]:
    found = []
    for line, col, text in sorted(set(huge_floats)):  # in file order, an aliased one once (at its anchor)
        shown = text if len(text) <= 40 else text[:40] + "..."
        found.append((line, col, f"{shown} is beyond any float64 (about 1.8e308 at most): Go's YAML readers in "
                      "Kubernetes, Helm and compose read it as a string, and so does vramlint"))
    return _folded(file, found, "numbers beyond float64")


def _long_int_problems(file: str, long_ints: Any) -> list[Problem]:
    return _folded(file, [(line, col, f"integer of {digits} digits: too large to be a number (Go's YAML readers in "
                           "Kubernetes, Helm and compose read it as a string), read as text")
                          for line, col, digits in sorted(set(long_ints))], "integers too large")


def _children(node: Any) -> list[tuple[Any, Any]]:
    if isinstance(node, dict):
        return list(dict.items(node))
    if isinstance(node, list):
        return list(enumerate(node))
    return []


def _edge_location(file: str, parent: Any, key: Any) -> tuple[int | None, int | None]:
    # the key whose value is the alias: an alias's own value position is where its anchor is (the node it
    # names); a sequence item has only that
    entry = _lc_entry(parent, key)
    if entry is not None:
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


# A line that starts with MAX_BLOCK_DEPTH blanks or indicators (`^` of a multi-line search, written as the line
# break before it: a search for a literal character first is several times faster over a large text)
_BLOCK_LEAD = frozenset(" \t?-")
_BLOCK_DEEP_FIRST = re.compile(rf"[ \t?-]{{{MAX_BLOCK_DEPTH}}}")
_BLOCK_DEEP = re.compile(rf"\n[ \t?-]{{{MAX_BLOCK_DEPTH}}}")


def nesting_problem(text: str, file: str) -> Problem | None:
    """A Problem where ``text`` first nests deeper than the parser can read quickly, else None (linear, cheap)."""
    if text.count("[") + text.count("{") > MAX_FLOW_DEPTH:
        problem = _flow_nesting_problem(text, file)
        if problem is not None:
            return problem
    if text[:1] in _BLOCK_LEAD and _BLOCK_DEEP_FIRST.match(text) or _BLOCK_DEEP.search(text):
        return _block_nesting_problem(text, file)
    return None


# Where a block-context line's value starts: after the indentation, `- `/`? ` entries, a key (or none: `: [[[`
# is the value of an empty key, whose flow collection went uncounted and ruamel's scanner, quadratic in the flow
# depth, read 3,000 brackets for 90 s) and its `: `
# (a plain key, or a quoted one), and an anchor or tag. What stands there decides how the rest is read: a
# flow collection (counted), a quoted scalar, a block scalar indicator, a comment, or a plain scalar (whose
# `[`, `{` and quotes are text, as are those of a comment and of a block scalar's lines).
# (an implicit key is at most 1,024 characters, as YAML 1.2 and libyaml have it: bounded, so that a megabyte
# quoted scalar full of escapes is not tried as a key, which kept a backtracking point per character: 560 MB)
_VALUE_START = re.compile(
    r"""(?P<lead>[ \t]*(?:[-?](?:[ \t]+|$))*)"""
    r"""(?:(?P<key>"(?:[^"\\\n]|\\.){0,1024}"|'(?:[^'\n]|''){0,1024}'|[^\s#'"\[\]{}&!|>,][^\n]{0,1023}?)?"""
    r"""[ \t]*:(?:[ \t]+|$)"""
    r"""(?:[-?](?:[ \t]+|$))*)?"""
    r"""(?:[&!][^\s]*[ \t]+)*""")
_FLOW_OR_SCALAR_START = re.compile(r"[\[{\"'|>]")
_BLOCK_INDICATOR = re.compile(r"[|>][-+0-9]*[ \t]*(?:#.*)?$")


def _flow_nesting_problem(text: str, file: str) -> Problem | None:
    """Flow collections (`[`, `{`) nested deeper than MAX_FLOW_DEPTH, counted where YAML reads them: not inside
    quoted or block scalars, comments, or plain scalars of the block context (a chat template or a script with
    braces in a `|` block is text)."""
    lines = text.split("\n")
    n_lines = len(lines)
    block_owner: int | None = None  # inside a block scalar: the indentation its lines must exceed
    i = 0
    while i < n_lines:
        line = lines[i]
        if block_owner is not None:
            body = line.lstrip(" ")
            if not body or len(line) - len(body) > block_owner:
                i += 1
                continue
            block_owner = None
        if not line or line.startswith(("#", "---", "...")) and (line[:3] != "---" or line[3:4] in ("", " ", "\t")):
            i += 1
            continue
        if not _FLOW_OR_SCALAR_START.search(line):
            i += 1
            continue
        m = _VALUE_START.match(line)
        at = m.end()
        ch = line[at:at + 1]
        if ch in ("[", "{"):
            found, i = _scan_flow(lines, i, at, file)
            if found is not None:
                return found
            continue
        if ch in ('"', "'"):
            i = _skip_quoted(lines, i, at)
            continue
        if ch in ("|", ">") and _BLOCK_INDICATOR.match(line, at):
            key_column = m.start("key") if m.group("key") is not None else None
            lead = m.group("lead")
            if key_column is not None:
                block_owner = key_column
            elif lead.strip():
                block_owner = len(lead.rstrip()) - 1  # the last `- ` entry's dash
            else:
                block_owner = len(line) - len(line.lstrip(" ")) - 1  # a block scalar on a line of its own
            i += 1
            continue
        i += 1
    return None


def _skip_quoted(lines: list[str], i: int, at: int) -> int:
    """The index of the line after the one where the quoted scalar starting at ``lines[i][at]`` ends."""
    quote = lines[i][at]
    pos = at + 1
    first = i
    while i < len(lines):
        line = lines[i]
        while pos < len(line):
            end = line.find(quote, pos)
            if quote == '"':
                escape = line.find("\\", pos, end if end >= 0 else len(line))
                if escape >= 0:
                    pos = escape + 2  # an escaped character (a quote too) does not end the scalar
                    continue
            if end < 0:
                break
            if quote == "'" and line[end + 1:end + 2] == "'":
                pos = end + 2  # '' is a quote inside single quotes
                continue
            return i + 1
        i += 1
        pos = 0
    # never closed: the file does not load, and the lines after the quote are still counted (skipped, they hid a
    # flow collection 3,000 deep from this check, and ruamel's scanner, quadratic in the depth, took 5 CPU-s on it)
    return first + 1


_FLOW_TOKEN = re.compile(r"\\.|[\[\]{}\"'#]")
_BRACKET = re.compile(r"[\[\]{}]")
_NOT_ONLY_BRACKETS = ('"', "'", "#", "\\")  # what `_scan_flow` reads otherwise than as brackets and text


def _scan_flow(lines: list[str], i: int, at: int, file: str) -> tuple[Problem | None, int]:
    """Count the flow collection opening at ``lines[i][at]`` to its end: (a Problem where it goes too deep, the
    index of the line after it)."""
    depth = 0
    quote: str | None = None
    pos = at
    while i < len(lines):
        line = lines[i]
        if quote is None:
            rest = line[pos:] if pos else line
            if not any(c in rest for c in _NOT_ONLY_BRACKETS) and \
                    depth + rest.count("[") + rest.count("{") <= MAX_FLOW_DEPTH:
                # the common line (`image: {{ .Values.image }}`): brackets only, and too few to go too deep
                for ch in _BRACKET.findall(rest):
                    if ch in "[{":
                        depth += 1
                    else:
                        depth -= 1
                        if depth <= 0:
                            return None, i + 1
                i += 1
                pos = 0
                continue
        for m in _FLOW_TOKEN.finditer(line, pos):
            ch = m.group(0)
            start = m.start()
            if ch[0] == "\\":
                # an escape inside a double-quoted scalar (`"\"7"`) does not end it; elsewhere a backslash is
                # plain text and the character after it counts as itself
                if quote == '"' or ch[1] not in "[]{}\"'#":
                    continue
                ch = ch[1]
                start += 1
            if quote:
                if ch == quote:
                    quote = None
                continue
            if ch == "#":
                if start == 0 or line[start - 1] in " \t":
                    break  # a comment, to the end of the line
                continue
            if ch in "[{":
                depth += 1
                if depth > MAX_FLOW_DEPTH:
                    return Problem(file, i + 1, start + 1, f"YAML nested more than {MAX_FLOW_DEPTH} levels deep "
                                   "here (flow collections): not read"), i + 1
            elif ch in "]}":
                depth -= 1
                if depth <= 0:
                    return None, i + 1
            elif start == 0 or line[start - 1] in " \t[{,:":
                # a quote opens a quoted scalar only where a scalar starts: in `[don't, [[[` it is plain text
                quote = ch
        i += 1
        pos = 0
    return None, i


def _block_nesting_problem(text: str, file: str) -> Problem | None:
    """Block nesting measured by indentation: each deeper indentation, and each `- ` of a compact nested
    sequence (`- - - x`) or `? ` of a nested explicit key (`? ? ? x`), opens a level."""
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
        while body[:2] in ("- ", "-\t", "? ", "?\t") or body in ("-", "?"):
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
    if type(key) is str:
        plain = _PLAIN_KEYS.get(key)
        if plain is None:
            letters = key.replace("_", "").replace("-", "")  # a plain name: letters, digits, "_" and "-" only
            plain = bool(key) and (letters.isalnum() or not letters)
            if len(_PLAIN_KEYS) < 4096:  # the keys of manifests are few (a bound for a file of random ones)
                _PLAIN_KEYS[key] = plain
    elif isinstance(key, int):
        return f"{base}[{key}]"
    else:
        key = str(key)
        letters = key.replace("_", "").replace("-", "")
        plain = bool(key) and (letters.isalnum() or not letters)
    if plain:
        return f"{base}.{key}" if base else key
    return f'{base}["{key}"]' if base else f'["{key}"]'


_PLAIN_KEYS: dict[str, bool] = {}


def lines_mention(lines: list[str] | None, word: str) -> bool:
    """Whether ``word`` is written anywhere in a file's ``lines`` (True when they are not known). Every document
    of a file shares its list of lines: the answer is kept for the last file, so a stream of thousands of
    documents is searched once per word, not once per document."""
    if lines is None:
        return True
    if _MENTIONS[0] is not lines:
        _MENTIONS[:] = [lines, {}]
    found = _MENTIONS[1].get(word)
    if found is None:
        found = _MENTIONS[1][word] = word in lines_text(lines) if "\n" not in word else \
            any(word in line for line in lines)
    return found


_MENTIONS: list[Any] = [None, {}]  # (the lines last asked about, word -> whether they hold it)


def lines_text(lines: Any) -> str:
    """A file's ``lines`` joined by line breaks, for searches of what no line break is part of (one search in C,
    not one a line: a 5 MB stream has 250,000 lines). Kept for the last lines asked about, as `lines_mention`
    keeps its answers."""
    if _LINES_TEXT[0] is not lines:
        text = lines._text if isinstance(lines, PackedLines) else "\n".join(lines)
        _LINES_TEXT[:] = [lines, text]
    return _LINES_TEXT[1]


_LINES_TEXT: list[Any] = [None, ""]


# --- templates and YAML embedded in strings ---------------------------------------------------------------

# A Helm/Go template expression replaced by this marker (padded to the expression's width, so columns after
# it stay right) reads as "unknown until rendered". The brackets are printable, so YAML accepts them in plain
# scalars, and no real deployment value contains them.
TEMPLATE_OPEN = "\u2983"
TEMPLATE_CLOSE = "\u2984"


def has_template_marker(text: Any) -> bool:
    return isinstance(text, str) and TEMPLATE_OPEN in text


# Zarf's deploy-time markers: `zarf package deploy` replaces `###ZARF_VAR_NAME###` (a package variable),
# `###ZARF_CONST_NAME###` (a constant) and `###ZARF_PKG_TMPL_NAME###` / `###ZARF_PKG_VAR_NAME###` (set when the
# package is created) in the manifests and Helm values files it applies, so Kubernetes and vLLM only ever see
# the value given for each (a value holding one is unknown here, never the marker's own text).
_ZARF_MARKER = re.compile(r"###ZARF_(?:VAR|CONST|PKG_TMPL|PKG_VAR)_[A-Z0-9_]+###")


def has_deploy_time_marker(text: Any) -> bool:
    """A value a deployment tool fills in when it deploys (a Zarf `###ZARF_VAR_X###` marker)."""
    return isinstance(text, str) and "###ZARF_" in text and _ZARF_MARKER.search(text) is not None


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
