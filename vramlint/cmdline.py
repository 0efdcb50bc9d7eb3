"""Command lines as vLLM receives them: shell splitting, variable expansion, argument parsing.

Kubernetes gives a container ``command`` (replaces the image ENTRYPOINT) and ``args`` (replace CMD); compose
gives ``entrypoint``/``command``. Either may be a list of words or a shell script run by ``sh -c``. This module
turns them into the argument list vLLM's own parser sees, keeping for every word the place it was written, and
then reads that list the way vLLM's ``FlexibleArgumentParser`` does for the vLLM version in use.

A value that cannot be known statically (a ``valueFrom`` env var, ``$(date)``, an unset variable) is ``None``;
it is never guessed.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import field, replace
from typing import Any

from vramlint import vllm_args
from vramlint.intparse import small_int
from vramlint.lean_dataclass import dataclass
from vramlint.model import Location, fast_frozen_init
from vramlint.textsafe import shortened
from vramlint.versions import (
    DEFAULT_VERSION,
    assumed_tag_source,
    assumed_version_from_tag,
    is_own_vllm_image,
    normalize_version,
    parse_version,
    runs_newest_release,
    version_from_image,
)

# --------------------------------------------------------------------------------------------------------------
# Tokens

# Marks the place of a value that cannot be known inside a string (an unset compose `${VAR}` in a command),
# so the word that ends up holding it becomes unknown while the other words stay readable.
UNKNOWN_MARK = "\ue000"
# The opening bracket of the marker a Helm/Go template expression is replaced by before parsing
# (vramlint.yamlload.TEMPLATE_OPEN): a word holding it is unknown until rendered, like UNKNOWN_MARK.
TEMPLATE_MARK = "\u2983"
TEMPLATE_CLOSE = "\u2984"  # its closing bracket (vramlint.yamlload.TEMPLATE_CLOSE)


# A key of the environment handed to `expand_k8s`: the container also takes variables from an envFrom source
# the files do not show, so a `$(NAME)` the file does not define may be defined there (unknown, not literal).
ENV_FROM_UNSEEN = "\ue001envFrom"


def has_unknown_mark(text: str | None) -> bool:
    return text is not None and (UNKNOWN_MARK in text or TEMPLATE_MARK in text)


def plain_words(tokens: list[Any]) -> bool:
    """No word holds `{{`, `$` or a mark: the template and variable passes (Go actions marked, `$(VAR)`
    expanded, marked words made unknown) would give every word back as it is, so they can be skipped. One scan
    in C of the words joined instead of a few calls a word (100,000 args)."""
    text = "\0".join([t.text for t in tokens if t.text is not None])
    return "{{" not in text and "$" not in text and UNKNOWN_MARK not in text and TEMPLATE_MARK not in text


# A Go text/template action as Helm and operators (KServe's LLMInferenceServiceConfig) write them inside
# command lines: `{{ .Values.x }}`, `{{- if ... }}`, `{{ include "x" . }}`, `{{ fn .Spec.X 15 }}`. Jinja chat
# templates (`{{ message.content }}`, `{{- bos_token }}`) do not match: no leading `.`/`$`, keyword or
# function applied to a `.Field`.
_GO_ACTION = re.compile(
    r"\{\{-?\s*(?:[.$]|(?:if|else|end|range|with|include|template|define|block)\b|[A-Za-z_]\w*\s+[.$\"(`])"
    r"[^{}]*?-?\}\}")
_GO_OPEN_BLOCK = re.compile(r"\{\{-?\s*(?:if|range|with)\b")
_GO_END = re.compile(r"\{\{-?\s*end\s*-?\}\}")


_KSERVE_NAME = re.compile(r"\{\{\s*\.Name\s*\}\}")


def mark_go_templates(text: str | None, keep_name: bool = False) -> str | None:
    """Replace Go template actions in a command-line string by TEMPLATE_MARK runs of the same width.

    A conditional (`{{ if }}...{{ end }}`, `range`, `with`) is marked whole, content included: whether the
    flags inside it are passed is not known until rendered. Line breaks (and a `\\` continuation before one)
    are kept, so every word after the template stays where it was written. ``keep_name`` leaves KServe's
    `{{.Name}}` for the runtime/InferenceService join to fill in.
    """
    if text is None or "{{" not in text:
        return text
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        m = _GO_ACTION.search(text, pos)
        if m is None:
            break
        start, end = m.start(), m.end()
        if keep_name and _KSERVE_NAME.fullmatch(m.group(0)):
            pos = end  # KServe substitutes the InferenceService's name for it (see extract/kserve.py)
            continue
        if _GO_OPEN_BLOCK.match(m.group(0)):
            depth = 1
            k = end
            while depth and k < len(text):
                nxt = _GO_ACTION.search(text, k)
                if nxt is None:
                    k = len(text)
                    break
                if _GO_OPEN_BLOCK.match(nxt.group(0)):
                    depth += 1
                elif _GO_END.match(nxt.group(0)):
                    depth -= 1
                k = nxt.end()
            end = k
        spans.append((start, end))
        pos = end
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        segment_start = True
        for k in range(start, end):
            if chars[k] == "\n" or (chars[k] == "\\" and k + 1 < end and text[k + 1] == "\n"):
                segment_start = True
                continue
            chars[k] = TEMPLATE_MARK if segment_start else "_"
            segment_start = False
    return "".join(chars)


@fast_frozen_init
@dataclass(frozen=True)
class Token:
    """One word of a command line, with where it was written.

    The extra fields (all defaulted) describe the YAML scalar a word came from, so a shell script inside it can
    be split with each word pointing at its own line: ``block`` is ``"|"`` or ``">"`` for block scalars,
    ``indent`` the 1-based column of the block's content, ``lines`` the file's text. ``op`` marks shell
    control operators (``&&``, ``;``, ...) produced by ``split_shell``.
    """

    text: str | None  # None = value cannot be known statically
    location: Location | None
    block: str | None = None
    indent: int | None = None
    lines: tuple[str, ...] | list[str] | None = field(default=None, compare=False, hash=False, repr=False)
    op: bool = False
    quoted: bool = False  # the scalar was written in quotes (its text starts one column after `location`)
    # where the word's value was set when a Kubernetes `$(NAME)` reference gave all of it (`$(N)`, `--flag=$(N)`):
    # the env entry's value, which is the line to change (an overlay's env file through a kustomize build)
    origin: Location | None = field(default=None, compare=False, hash=False, repr=False)


def yaml_token(file: str, node: Any, key: Any, yaml_path: str = "", lines: list[str] | None = None) -> Token:
    """The Token for scalar ``node[key]`` of a ruamel document, knowing its style (block, quoted).

    Scanners should build tokens with this so that words inside a block scalar script get their own lines.
    """
    from vramlint.yamlload import value_location

    value = node[key]
    loc = value_location(file, node, key, yaml_path)
    text = None if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
    block = None
    indent = None
    quoted = False
    cls = type(value).__name__
    if cls == "LiteralScalarString":
        block = "|"
    elif cls == "FoldedScalarString":
        block = ">"
    if loc is not None and lines is not None and 0 < loc.line <= len(lines):
        src = lines[loc.line - 1]
        ch = src[loc.column - 1 : loc.column] if loc.column - 1 < len(src) else ""
        if block is None and ch in ("'", '"'):
            quoted = True
        if block is None and ch in ("|", ">"):
            block = "|" if ch == "|" else ">"
        if block:
            for follow in lines[loc.line :]:
                if follow.strip():
                    indent = len(follow) - len(follow.lstrip(" ")) + 1
                    break
    if block and isinstance(text, str) and loc is not None:
        loc = Location(loc.file, loc.line, loc.column, yaml_path=loc.yaml_path)  # no one-line span for blocks
    return Token(text, loc, block=block, indent=indent, lines=lines, quoted=quoted)


# --------------------------------------------------------------------------------------------------------------
# Positions inside a scalar


_LAST_TABLE: list[Any] = [None, None, None]  # (key, table, the lines it was built from, kept alive for id())


class _Positions:
    """Maps an index in a scalar's text to the file line/column where that character was written."""

    def __init__(self, text: str, location: Location | None, block: str | None, indent: int | None,
                 lines: Any, quoted: bool = False):
        self.loc = location
        self.text = text
        self.table: list[tuple[int, int]] | None = None
        self.newlines: list[int] | None = None
        self.flow_newlines: list[int] | None = None
        if location is None:
            return
        if block == "|" and lines:
            # Literal block: the value's lines are the source lines, one for one, whatever was interpolated, so
            # a place is found from the line breaks before it (a table per character costs seconds on a
            # megabyte script)
            self.newlines = [m.start() for m in re.finditer("\n", text)]
            self.first = location.line + 1  # content starts on the line after the `|` indicator
            self.col0 = indent or location.column
        elif block:
            # a script is split up to three times (as written, with its own assignments, for eval): the table
            # of its positions is built once (tables are only read)
            key = (text, location.file, location.line, location.column, block, indent, id(lines))
            if _LAST_TABLE[0] != key:
                _LAST_TABLE[:] = [key, self._block_table(text, location, block, indent, lines), lines]
            self.table = _LAST_TABLE[1]
        else:
            # One-line flow scalar: columns follow the text. A multi-line flow scalar (YAML folds it into one
            # line) keeps the start line; escapes in double quotes shift columns slightly. Both approximate.
            self.offset = 1 if quoted else 0

    @staticmethod
    def _block_table(text, location, block, indent, lines) -> list[tuple[int, int]]:
        first = location.line + 1  # block content starts on the line after the `|`/`>` indicator
        table: list[tuple[int, int]] = []
        if lines:
            # Align each non-blank source line with where its text occurs in the scalar value. Exact for
            # literal `|` blocks; for folded `>` blocks (YAML joined lines with spaces) it is exact for every
            # word too, because folding only replaces line breaks, never the words themselves.
            pos = 0
            last = (first, indent or 1)
            for n in range(first - 1, len(lines)):
                src = lines[n]
                stripped = src.strip()
                if not stripped:
                    continue
                lead = len(src) - len(src.lstrip(" "))
                if indent is not None and lead < indent - 1:
                    break  # the block ended
                content = src[lead:].rstrip()
                at = text.find(content, pos)
                if at < 0:
                    # More-indented lines of a folded block keep their extra spaces; retry without them.
                    content = content.lstrip()
                    at = text.find(content, pos)
                    if at < 0:
                        continue
                while len(table) < at:
                    table.append(last)
                for i in range(len(content)):
                    table.append((n + 1, lead + 1 + i))
                last = (n + 1, lead + 1 + len(content))
                pos = at + len(content)
                if pos >= len(text.rstrip()):
                    break
            while len(table) < len(text) + 1:
                table.append(last)
            return table
        # No source text: literal lines follow the value's lines; a folded block is placed on its first line.
        col0 = indent or location.column
        line, col = first, col0
        for ch in text:
            table.append((line, col))
            if ch == "\n" and block == "|":
                line, col = line + 1, col0
            else:
                col += 1
        table.append((line, col))
        return table

    def _line_column(self, index: int) -> tuple[int, int]:
        if self.newlines is None:
            assert self.table is not None
            return self.table[min(index, len(self.table) - 1)]
        index = min(index, len(self.text))
        breaks = bisect.bisect_left(self.newlines, index)
        return self.first + breaks, self.col0 + index - (self.newlines[breaks - 1] + 1 if breaks else 0)

    def at(self, start: int, end: int, yaml_path: str | None = None) -> Location | None:
        if self.loc is None:
            return None
        path = self.loc.yaml_path if yaml_path is None else yaml_path
        newlines = self.newlines
        if newlines is not None:
            # _line_column for both ends, inlined: a megabyte script places a few hundred thousand words
            size = len(self.text)
            s = start if start < size else size
            e = end - 1 if end - 1 > start else start
            e = e if e < size else size
            breaks = bisect.bisect_left(newlines, s)
            line = self.first + breaks
            line_start = newlines[breaks - 1] + 1 if breaks else 0
            if breaks == len(newlines) or e <= newlines[breaks]:
                return Location(self.loc.file, line, self.col0 + s - line_start, line, self.col0 + e - line_start + 1,
                                yaml_path=path)
            return Location(self.loc.file, line, self.col0 + s - line_start, yaml_path=path)
        if self.table is not None:
            s = self._line_column(start)
            e = self._line_column(max(end - 1, start))
            if s[0] == e[0]:
                return Location(self.loc.file, s[0], s[1], s[0], e[1] + 1, yaml_path=path)
            return Location(self.loc.file, s[0], s[1], yaml_path=path)
        if self.flow_newlines is None:
            self.flow_newlines = [m.start() for m in re.finditer("\n", self.text)]
        breaks = bisect.bisect_left(self.flow_newlines, start)
        line = self.loc.line + breaks
        if breaks:
            col = start - self.flow_newlines[breaks - 1]
        else:
            col = self.loc.column + self.offset + start
        return Location(self.loc.file, line, col, line, col + (end - start), yaml_path=path)


# --------------------------------------------------------------------------------------------------------------
# Shell splitting

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Expansion budgets. A script that doubles a variable 40 times (`A=$A$A`) or a `$(VAR)` written 100,000 times
# would make terabytes; no real command line comes near these. Past them the value is unknown, and said.
MAX_EXPANDED_CHARS = 100_000  # one variable's value, one word, one Kubernetes `$(VAR)`-expanded item
MAX_EXPANSION_TOTAL = 5_000_000  # everything variables add to one script (a 1.4 MB script of 20,000 commands: 1 MB)
MAX_DECIDED_DEPTH = 64  # nested compound commands past this: whether one runs is not known
_UNDECIDED = (None, None)
MAX_SUBSHELL_DEPTH = 64  # nested `( ( ... ) )`: deeper ones share the innermost's scope
MAX_PARAM_NESTING = 16  # `${A:-${B:-...}}` inside one default
_OPERATORS = ("&&", "||", ";;", ";", "|", "&", "(", ")")
_UNKNOWN = object()  # a piece of a word whose value cannot be known


class _Word:
    __slots__ = ("pieces", "start", "end", "unknown", "started", "assign_ok")

    def __init__(self, start: int):
        self.pieces: list[str] = []
        self.start = start
        self.end = start
        self.unknown = False
        self.started = False  # quotes make a word even when empty ("")


def split_shell(text: str, location: Location | None, block: bool = False, *,
                env: dict[str, str | None] | None = None, indent: int | None = None,
                lines: Any = None, folded: bool = False, quoted: bool = False,
                problems: list[str] | None = None, keep_marks: bool = False,
                sources: list[str] | None = None) -> list[Token]:
    """Split a shell script into words (and control operators, as ``Token(op=True)``).

    ``block=True`` when ``text`` is a YAML block scalar whose content starts on the line after ``location``;
    every word then points at its own line. With ``env`` given, ``$VAR``/``${VAR}``/``${VAR:-default}`` are
    expanded (unquoted expansions are word-split, as the shell does); a variable that is unset or unknown makes
    the word ``None``. Without ``env`` variables are left as written. With ``sources`` given, each word's text
    as written (quotes included) is appended to it, one per token returned.
    """
    words, pos = _split_words(text, location, block, env=env, indent=indent, lines=lines, folded=folded,
                              quoted=quoted, problems=problems, keep_marks=keep_marks)
    if sources is not None:
        sources.extend(pos.text[start:end] for _value, start, end, _op in words)
    at = pos.at
    return [Token(value, at(start, end), op=op) for value, start, end, op in words]


def _split_words(text: str, location: Location | None, block: bool = False, *,
                 env: dict[str, str | None] | None = None, indent: int | None = None, lines: Any = None,
                 folded: bool = False, quoted: bool = False, problems: list[str] | None = None,
                 keep_marks: bool = False) -> tuple[list[tuple[str | None, int, int, bool]], _Positions]:
    """``split_shell``'s words as (text, start, end, operator), and what places them (``.at(start, end)``): a
    megabyte script has hundreds of thousands of words, and a reader that needs the place of a few of them
    makes a Token for those only."""
    pos, probs = _script_positions(text, location, block, indent=indent, lines=lines, folded=folded,
                                   quoted=quoted, problems=problems)
    return _lex_tuples(pos.text, env, probs, keep_marks), pos


# An unquoted brace expansion: `{a,b}` (two words or more) or a sequence `{1..9}`, `{a..z..2}`; not `${...}`, not
# an escaped `\{`, and not `{}` or `{a}` (bash leaves those as written)
_BRACE_EXPANSION = re.compile(r"(?<![$\\])\{(?:[^{}\s]*,[^{}\s]*"
                              r"|(?:-?\d+\.\.-?\d+|[A-Za-z]\.\.[A-Za-z])(?:\.\.-?\d+)?)\}")
_QUOTED_PART = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.")


def _brace_expansion(source: str) -> bool:
    """Whether a word, as written, holds a brace expansion outside its quotes. bash expands braces before any
    other expansion, one word into as many as the braces make (`{a,b}` written 32 times: 2**32 words); sh (dash,
    busybox) keeps them as written. Neither is known here: the word is unknown (nothing is expanded, a bound)."""
    return "{" in source and _BRACE_EXPANSION.search(_QUOTED_PART.sub("", source)) is not None


def _brace_problem(source: str) -> str:
    return (f"the word {shortened(source, 60)!r} holds a brace expansion, which bash expands into several words "
            "and sh keeps as written: not expanded here, so the arguments it makes are unknown; write the words "
            "out (or quote the braces) to have them checked")


def _script_positions(text: str, location: Location | None, block: bool, *, indent: int | None, lines: Any,
                      folded: bool, quoted: bool, problems: list[str] | None) -> tuple[_Positions, list[str]]:
    """What places a script's words (its ``.text`` is the text the shell reads), and the list of problems."""
    block_style = (">" if folded else "|") if block else None
    pos = _Positions(text, location, block_style, indent, lines, quoted)
    probs = problems if problems is not None else []
    if folded and re.search(r"\\ ", text):
        # YAML folding turned "\<newline>" into "\ ", which the shell reads as an escaped space glued to the
        # next word. Almost always meant as a line continuation; read it so, but say what the shell would do.
        probs.append("a folded (>) block scalar turns a trailing `\\` into an escaped space; use `|` for "
                     "shell line continuations")
        pos.text = re.sub(r"\\ +", " ", text)
    return pos, probs


def _command_words(text: str, env: dict[str, str | None] | None, problems: list[str]) -> Iterator[
        list[tuple[str | None, int, int, bool]]]:
    """The words of each simple command of ``text`` (as ``_lex_tuples`` splits them, operators left out), one
    command at a time. A script longer than _LEXED_MAX_TEXT is split as it is read and never held whole: the
    words of a 5 MB script, a million tuples, took more memory than the rest of the run together."""
    if len(text) <= _LEXED_MAX_TEXT:
        words = _lex_tuples(text, env, problems)
        for a, b in _command_spans(words):
            yield words[a:b]
        return
    for chunk in _lex_chunks(text, env, problems):
        if chunk[-1][3]:
            del chunk[-1]
        if chunk:
            yield chunk


def split_token(token: Token, env: dict[str, str | None] | None = None,
                problems: list[str] | None = None, sources: list[str] | None = None) -> list[Token]:
    """``split_shell`` for a Token made by ``yaml_token`` (its block style and indentation are used)."""
    if token.text is None:
        if sources is not None:
            sources.append("")
        return [token]
    return split_shell(token.text, token.location, block=bool(token.block), env=env, indent=token.indent,
                       lines=token.lines, folded=token.block == ">", quoted=token.quoted, problems=problems,
                       sources=sources)


# Splits of scripts seen before in this process (a copied manifest, the same entrypoint in many services, a
# script split as written and again with its own assignments): the words as (text, start, end, operator) and
# the messages, by everything the split reads (the text, the variables, keep_marks); where each word is in the
# file is found again for each caller. Bounded: scripts longer than _LEXED_MAX_TEXT are split every time.
_LEXED: dict[tuple[Any, ...], tuple[list[tuple[str | None, int, int, bool]], list[str]]] = {}
_LEXED_MAX_ENTRIES = 4096
_LEXED_MAX_TEXT = 16_384
_BUDGET_WORDS = "expansion budget"


def _lex(text: str, pos: _Positions, env: dict[str, str | None] | None, problems: list[str],
         keep_marks: bool = False, cached: bool = True) -> list[Token]:
    at = pos.at
    return [Token(value, at(start, end), op=op) for value, start, end, op in _lex_tuples(text, env, problems,
                                                                                        keep_marks, cached)]


# The last script longer than _LEXED_MAX_TEXT split, with what it was split with: the same long script is read
# as written and again with its own assignments, by the script reader and by the command search.
_LAST_LONG: list[Any] = [None, None]


def _lex_tuples(text: str, env: dict[str, str | None] | None, problems: list[str],
                keep_marks: bool = False, cached: bool = True) -> list[tuple[str | None, int, int, bool]]:
    if not cached and len(text) <= _LEXED_MAX_TEXT:
        found = _lex_words(text, env, [], keep_marks)
    elif len(text) > _LEXED_MAX_TEXT:
        key = (text, None if env is None else frozenset(env.items()), keep_marks)
        found = _LAST_LONG[1] if _LAST_LONG[0] == key else None
        if found is None:
            found = _lex_words(text, env, [], keep_marks)
            _LAST_LONG[:] = [key, found]
    else:
        key = (text, None if env is None else frozenset(env.items()), keep_marks)
        found = _LEXED.get(key)
        if found is None:
            found = _lex_words(text, env, [], keep_marks)
            if len(_LEXED) >= _LEXED_MAX_ENTRIES:
                del _LEXED[next(iter(_LEXED))]
            _LEXED[key] = found
    words, said = found
    for message in said:
        if _BUDGET_WORDS in message and _BUDGET_WORDS in " ".join(problems):
            continue  # said once for the script
        problems.append(message)
    return words


def _lex_words(text: str, env: dict[str, str | None] | None, problems: list[str],
               keep_marks: bool = False) -> tuple[list[tuple[str | None, int, int, bool]], list[str]]:
    """``text``'s words as (text, start, end, operator), and ``problems`` with what the split met."""
    words: list[tuple[str | None, int, int, bool]] = []
    for chunk in _lex_chunks(text, env, problems, keep_marks):
        words += chunk
    return words, problems


def _lex_chunks(text: str, env: dict[str, str | None] | None, problems: list[str],
                keep_marks: bool = False) -> Iterator[list[tuple[str | None, int, int, bool]]]:
    """``_lex_words``'s words a piece at a time, each piece ending with an operator (the last one may not): a
    reader that looks at one simple command at a time holds one command's words, not a megabyte script's."""
    out: list[tuple[str | None, int, int, bool]] = []
    n = len(text)
    i = 0
    word: _Word | None = None
    redirect_next = False
    pending: list[tuple[str, bool, bool]] = []  # here-documents (delimiter, <<-, quoted) whose bodies follow the line

    def finish() -> None:
        nonlocal word, redirect_next
        if word is not None and (word.pieces or word.started or word.unknown):
            if redirect_next:
                redirect_next = False  # a redirection target (`> /tmp/log`), not an argument
            else:
                value = "".join(word.pieces)
                if "{" in value and _brace_expansion(text[word.start:word.end]):
                    problems.append(_brace_problem(text[word.start:word.end]))
                    word.unknown = True
                if (word.unknown or has_unknown_mark(value)) and not keep_marks \
                        and not _option_with_unknown_value(value) and not _assignment_with_unknown_value(value):
                    value = None  # `--flag=${UNSET}` keeps its flag; the parser reads the value as unknown
                out.append((value, word.start, max(word.end, word.start + 1), False))
        word = None

    def piece(s: str, at: int, end: int) -> None:
        nonlocal word
        if word is None:
            word = _Word(at)
        word.pieces.append(s)
        word.end = end

    def op(s: str, at: int) -> None:
        finish()
        out.append((s, at, at + len(s), True))

    expanded = 0

    def expansion(value: Any, at: int, end: int, split: bool) -> None:
        nonlocal word, expanded
        if isinstance(value, (str, _Fields)):
            size = len(value) if isinstance(value, str) else sum(len(part) for part in value)
            expanded += size
            if expanded > MAX_EXPANSION_TOTAL or size > MAX_EXPANDED_CHARS:
                if _BUDGET_WORDS not in " ".join(problems):
                    problems.append(f"variables expand to more than {MAX_EXPANSION_TOTAL:,} characters in this "
                                    "script (expansion budget): the words they make are not read")
                value = _UNKNOWN
        if value is _UNKNOWN:
            if word is None:
                word = _Word(at)
            word.unknown = True
            word.pieces.append(UNKNOWN_MARK)
            word.end = end
            return
        if value is None:
            # left as written (no env given)
            return
        if isinstance(value, _QuotedFields):
            # `"${A[@]}"`: a word per element; none at all for an empty array written alone in its quotes
            if not value and word is not None and not word.pieces:
                word.started = False
            for k, part in enumerate(value):
                if k > 0:
                    finish()
                if word is None:
                    word = _Word(at)
                word.started = True
                if part is None:
                    word.unknown = True
                    part = UNKNOWN_MARK
                piece(part, at, end)
            return
        if not split:
            piece(value, at, end)
            return
        if isinstance(value, _Fields):
            # the words of a default: the first joins the text before it, the last the text after it
            for k, part in enumerate(value):
                if k > 0:
                    finish()
                if part:
                    piece(part, at, end)
                else:  # an empty word written in quotes (`${P:-""}`) is a word
                    if word is None:
                        word = _Word(at)
                    word.started = True
                    word.end = end
            return
        parts = re.split(r"[ \t\n]+", value)
        for k, part in enumerate(parts):
            if k > 0:
                finish()
            if part:
                piece(part, at, end)

    while i < n:
        c = text[i]
        if c not in _SPECIAL:
            j = _PLAIN_RUN.match(text, i).end()  # a run of ordinary characters at once (long scripts)
            if word is None and (j == n or text[j] in _WORD_ENDS) and not redirect_next:
                # a whole plain word (most words of a long script): made at once
                value = text[i:j]
                if "{" in value and _brace_expansion(value):
                    problems.append(_brace_problem(value))
                    value = UNKNOWN_MARK
                if has_unknown_mark(value) and not keep_marks and not _option_with_unknown_value(value) \
                        and not _assignment_with_unknown_value(value):
                    value = None
                out.append((value, i, j, False))
            else:
                piece(text[i:j], i, j)
            i = j
        elif c in " \t":
            if word is not None:
                finish()
            i += 1
        elif c == "\n":
            if word is not None:
                finish()
            out.append((";", i, i + 1, True))
            i += 1
            yield out
            out = []
            while pending:
                # each body in the order its operator was written, to a line that is its delimiter (`<<-`: leading
                # tabs stripped); one never found ends at the end of the text, as the shell does (with a warning)
                delimiter, strip_tabs, quoted = pending.pop(0)
                start = i
                end = n
                while i < n:
                    line_end = text.find("\n", i)
                    line = text[i:] if line_end < 0 else text[i:line_end]
                    if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                        end = i
                        i = n if line_end < 0 else line_end + 1
                        break
                    i = n if line_end < 0 else line_end + 1
                yield [(heredoc_op(quoted, strip_tabs), start, end, True)]
        elif c == "#" and word is None:
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif c == "\\":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2  # line continuation
            elif i + 1 < n:
                piece(text[i + 1], i, i + 2)
                i += 2
            else:
                i += 1
        elif c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            if word is None:
                word = _Word(i)
            word.started = True
            piece(text[i + 1 : j], i, j + 1)
            i = j + 1
        elif c == '"':
            if word is None:
                word = _Word(i)
            word.started = True
            j = i + 1
            while j < n and text[j] != '"':
                ch = text[j]
                if ch == "\\" and j + 1 < n and text[j + 1] in '$`"\\\n':
                    if text[j + 1] != "\n":
                        piece(text[j + 1], j, j + 2)
                    j += 2
                elif ch == "$" or ch == "`":
                    value, j2 = _expand(text, j, env, quoted=True)
                    if value is None and env is None:
                        piece(text[j:j2], j, j2)
                    else:
                        expansion(value, j, j2, split=False)
                    j = j2
                else:
                    j2 = _QUOTED_RUN.match(text, j).end()  # a run of literal characters at once (long scripts)
                    piece(text[j:j2], j, j2)
                    j = j2
            word.end = j + 1
            i = j + 1
        elif c == "$" or c == "`":
            value, j = _expand(text, i, env)
            if value is None and env is None:
                piece(text[i:j], i, j)
            else:
                expansion(value, i, j, split=True)
            i = j
        elif c in "<>" or (c == "&" and text[i + 1 : i + 2] == ">"):
            # Redirections: `2>&1`, `> log`, `>> log`, `&> log`, `< file`. A pure-digit word before is the fd.
            if word is not None and not word.unknown and "".join(word.pieces).isdigit() and not word.started:
                word = None
            j = i + 1
            while j < n and text[j] in "<>&":
                j += 1
            target = text[i:j]
            if target.endswith("&"):
                # `>&2`, `2>&1`: the fd follows directly
                while j < n and text[j].isdigit():
                    j += 1
                finish()
            else:
                finish()
                redirect_next = True
            if target.startswith("<<") and not target.startswith("<<<"):
                # a here-document: its delimiter word is taken here and its body, the lines after this one, is
                # data the command reads, not commands of this script (a here-string, `<<< word`, is one word)
                m = _HEREDOC_OPERATOR.match(text, i)
                if m is not None:
                    quoted = m.group(4) is None or text[m.start(4) - 1] == "\\"
                    pending.append((m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None
                                    else m.group(4), m.group(1) == "-", quoted))
                    redirect_next = False
                    j = m.end()
            i = j
        elif c in ";&|()":
            two = text[i : i + 2]
            s = two if two in _OPERATORS else c
            op(s, i)
            i += len(s)
            yield out
            out = []
        else:  # `#` inside a word
            piece(c, i, i + 1)
            i += 1
    finish()
    if out:
        yield out


# The operator a here-document's body is given as, (text, start, end, True) over the body's lines: `<<` for a body
# whose delimiter is unquoted (the shell expands `$VAR`, `${...}`, `$(...)` in it), `<<'` for a quoted one (taken
# literally), `-` when leading tabs are stripped (`<<-`). Commands split by it as by any operator.
HEREDOC_OPS = frozenset(("<<", "<<'", "<<-", "<<-'"))


def heredoc_op(quoted: bool, strip_tabs: bool) -> str:
    return "<<" + ("-" if strip_tabs else "") + ("'" if quoted else "")


# Characters with no special meaning at that point of a word: taken together, not one at a time.
_WORD_ENDS = frozenset(" \t\n;|()")
_SPECIAL = frozenset(" \t\n#\\'\"$`<>&;|()")  # what ends a plain word and is no part of the next (`<`, `>`, `&` may be)
_PLAIN_RUN = re.compile(r"[^ \t\n\\'\"$`<>&;|()]+|.", re.DOTALL)
_QUOTED_RUN = re.compile(r'[^"\\$`]+|.', re.DOTALL)


def _expand(text: str, i: int, env: dict[str, str | None] | None, quoted: bool = False) -> tuple[Any, int]:
    """Expand the `$...`/backquote expression at ``text[i]``: (value | _UNKNOWN | None-if-no-env, end). The value
    of a `${P:-word}` whose word is used, unquoted, is the word's own words (`_Fields`); ``quoted``: inside double
    quotes or a here-document, where it is one piece of text."""
    n = len(text)
    if text[i] == "`":
        j = text.find("`", i + 1)
        if j >= 0 and _runs_nothing(text[i + 1 : j]):
            return "", j + 1
        return _UNKNOWN if env is not None else None, (n if j < 0 else j + 1)
    if i + 1 >= n:
        return "$", i + 1
    nxt = text[i + 1]
    if nxt == "(":
        depth, j = 0, i + 1
        while j < n:
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j < n and not text.startswith("((", i + 1) and _runs_nothing(text[i + 2 : j]):
            return "", j + 1
        if env is None:
            return None, min(j + 1, n)
        if text.startswith("((", i + 1) and j < n and text[j - 1] == ")":
            return _arithmetic(text[i + 3 : j - 1], env), j + 1
        return _UNKNOWN, min(j + 1, n)
    if nxt == "{":
        j = _brace_end(text, i + 2)
        if j < 0:
            return "$", i + 1
        inner = text[i + 2 : j]
        end = j + 1
        if env is None:
            return None, end
        m = _NAME.match(inner)
        if not m:
            p = _POSITIONAL_NAME.match(inner)
            if p is not None and POSITIONAL not in env and ARGS_DEFAULTED in env and p.group(0) not in "@*#" \
                    and inner[p.end():].startswith((":-", "-")):
                # a script file read as run with no arguments: `${1:-default}` is its default (said by the caller)
                return _param("_", inner[p.end():], {}, quoted), end
            if p is None or POSITIONAL not in env:
                return _UNKNOWN, end
            rest = inner[p.end():]
            value = _positional(p.group(0), env, quoted)
            if not rest:
                return ("" if value is _UNSET else value), end
            if p.group(0) in "@*" or not isinstance(value, str) and value is not _UNSET:
                return _UNKNOWN, end  # `${@:2}`, or an operator on a parameter not known
            return _param("_", rest, {} if value is _UNSET else {"_": value}, quoted), end
        name = m.group(0)
        rest = inner[m.end() :]
        return _param(name, rest, env, quoted), end
    if nxt.isdigit() or nxt in "@*#?$!-":
        if env is not None and POSITIONAL in env and nxt in "123456789@*#":
            return _positional(nxt, env, quoted), i + 2
        return (_UNKNOWN if env is not None else None), i + 2
    m = _NAME.match(text, i + 1)
    if not m:
        return "$", i + 1
    if env is None:
        return None, m.end()
    return _param(m.group(0), "", env), m.end()


def _runs_nothing(command: str) -> bool:
    """A command substitution that runs nothing and so expands to nothing: blank, or one comment (`` `# why` ``,
    the idiom for a comment between the continued lines of a long command)."""
    stripped = command.strip()
    return not stripped or (stripped.startswith("#") and "\n" not in stripped)


# `$((...))`: integer arithmetic on decimal literals and on variables whose value is one, with + - * / % and
# parentheses, evaluated as the shell does (intmax_t: 64 bits; division truncates toward zero). Anything else
# (octal or hex constants, other operators, assignments, a result past 64 bits, a division by zero) is unknown.
_ARITH_TOKEN = re.compile(r"\s*(?:(\d+)|\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?|([-+*/%()]))")
_ARITH_MAX_CHARS = 200
_INT64 = 1 << 63


def _arithmetic(expression: str, env: dict[str, str | None]) -> Any:
    if len(expression) > _ARITH_MAX_CHARS:
        return _UNKNOWN
    tokens: list[Any] = []
    at, n = 0, len(expression)
    while at < n:
        if expression[at:].isspace():
            break
        m = _ARITH_TOKEN.match(expression, at)
        if m is None:
            return _UNKNOWN
        number, name, op = m.groups()
        if name is not None:
            if (m.group(0).lstrip().startswith("${")) != m.group(0).endswith("}"):
                return _UNKNOWN  # `${N` or `N}`: not a variable as written
            number = env.get(name)
            if number is None:
                return _UNKNOWN
            number = number.strip()
            if not number.isascii() or not number.isdigit():
                return _UNKNOWN  # a value that is itself an expression (a negative number too), or text
        if number is not None:
            if len(number) > 1 and number[0] == "0":
                return _UNKNOWN  # octal (010 is 8), or a 0x hexadecimal constant
            if len(number) > 19:
                return _UNKNOWN
            tokens.append(int(number))
        else:
            tokens.append(op)
        at = m.end()
    pos = [0]

    def peek() -> Any:
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def take() -> Any:
        pos[0] += 1
        return tokens[pos[0] - 1]

    def checked(value: int) -> int:
        if not -_INT64 <= value < _INT64:
            raise ValueError("past 64 bits")
        return value

    def unary(depth: int) -> int:
        if depth > 32:
            raise ValueError("nested too deeply")
        tok = take() if peek() is not None else None
        if tok in ("-", "+"):
            value = unary(depth + 1)
            return checked(-value) if tok == "-" else value
        if tok == "(":
            value = additive(depth + 1)
            if take() != ")":
                raise ValueError("unclosed")
            return value
        if isinstance(tok, int):
            return checked(tok)
        raise ValueError("no operand")

    def multiplicative(depth: int) -> int:
        value = unary(depth)
        while peek() in ("*", "/", "%"):
            op, right = take(), unary(depth)
            if op == "*":
                value = checked(value * right)
            elif right == 0:
                raise ValueError("division by zero")
            else:
                quotient = abs(value) // abs(right) * (1 if (value < 0) == (right < 0) else -1)
                value = checked(quotient) if op == "/" else checked(value - right * quotient)
        return value

    def additive(depth: int) -> int:
        value = multiplicative(depth)
        while peek() in ("+", "-"):
            op, right = take(), multiplicative(depth)
            value = checked(value + right if op == "+" else value - right)
        return value

    try:
        result = additive(0)
    except (ValueError, IndexError):
        return _UNKNOWN
    return str(result) if pos[0] == len(tokens) else _UNKNOWN


def shell_parameter(text: str, i: int, env: dict[str, str | None]) -> tuple[str | None, int, str | None]:
    """The shell's expansion of the `$...` at ``text[i]`` with these variables (a name absent is unset, a name
    mapped to None is unknown): (its value, or None when not known; where it ends; the variable it names)."""
    value, end = _expand(text, i, env, quoted=True)
    m = _NAME.match(text, i + 2 if text[i + 1:i + 2] == "{" else i + 1)
    name = m.group(0) if m else None
    return (value if isinstance(value, str) else None), end, name


def _brace_end(text: str, start: int) -> int:
    """Index of the `}` closing a `${` whose content starts at ``start`` (nested `${...}` and quotes inside,
    as in `${map["${key}"]}`), or -1."""
    depth = 1
    k = start
    n = len(text)
    while k < n:
        ch = text[k]
        if ch == "\\":
            k += 2
            continue
        if ch == "'":
            end = text.find("'", k + 1)
            k = n if end < 0 else end + 1
            continue
        if ch == '"':
            # `${P:-"{{ x }}"}`: a `}` in double quotes does not close the expansion (bash)
            k += 1
            while k < n and text[k] != '"':
                k += 2 if text[k] == "\\" else 1
            k += 1
            continue
        if ch == "$" and text[k + 1 : k + 2] == "{":
            depth += 1
            k += 2
            continue
        if ch == "}":
            depth -= 1
            if depth == 0:
                return k
        k += 1
    return -1


class _Fields(tuple):
    """The words an unquoted `${P:-word}` expands to: the shell splits what the word's unquoted expansions give,
    never what it quotes (`${P:-"a b"}` is one word, `${P:-x "a b" y}` three)."""


class _QuotedFields(tuple):
    """The words `"${A[@]}"` expands to: one per element of the array, even inside double quotes (None: a word
    not known, the elements a conditional `A+=(...)` may have added)."""


class _Array(tuple):
    """A bash array's elements (None: an element not known), kept under `NAME[]` in the variables (`$NAME` is
    its first element, kept under NAME as the shell reads it)."""


MAX_ARRAY_ELEMENTS = 1000  # a launcher's argument list is tens of words


def array_key(name: str) -> str:
    return name + "[]"


def _subscript(name: str, rest: str, env: dict[str, Any], quoted: bool) -> Any:
    """`${A[@]}`, `${A[*]}`, `${A[N]}` of an array (a plain variable is an array of one); _UNKNOWN for any other
    form (`${A[@]:1}`, `${#A[@]}`, a variable index) or an element not known."""
    m = _SUBSCRIPT.fullmatch(rest)
    if m is None:
        return _UNKNOWN
    array = env.get(array_key(name))
    if array is None:
        if array_key(name) in env:
            return _UNKNOWN
        if name in env:
            value = env[name]
            if value is None:
                return _UNKNOWN
            array = _Array((value,))
        else:
            array = _Array()
    index = m.group(1)
    known = array.index(None) if None in array else len(array)  # an unknown tail: what a branch may have added
    if index not in ("@", "*"):
        k = int(index)
        if k >= known:
            return "" if known == len(array) else _UNKNOWN
        return array[k]
    if known < len(array) and index == "*":
        return _UNKNOWN
    if index == "*" and quoted:
        return " ".join(array)
    if quoted:
        return _QuotedFields(array)
    if known < len(array):
        return _QuotedFields(tuple(part for e in array[:known] for part in re.split(r"[ \t\n]+", e) if part)
                             + (None,))
    return _Fields(part for e in array for part in re.split(r"[ \t\n]+", e) if part)


_SUBSCRIPT = re.compile(r"\[(@|\*|\d{1,4})\]")
# A function's arguments (`$1`, `"$@"`, `$#`), kept while its call is walked as the array `@[]` (absent: not
# known, as a script's own arguments are)
POSITIONAL = "@[]"
# In the environment of a script file read on its own (extract.shell_scripts): its arguments are not known, but
# `${1:-default}` is taken as its default, as a run without arguments has it
ARGS_DEFAULTED = "@defaulted[]"
_POSITIONAL_NAME = re.compile(r"\d{1,4}|[@*#]")
_UNSET = object()  # a positional parameter past the last argument: unset


def _positional(which: str, env: dict[str, Any], quoted: bool) -> Any:
    args = env.get(POSITIONAL)
    if args is None:
        return _UNKNOWN
    known = args.index(None) if None in args else len(args)
    if which == "#":
        return str(len(args)) if known == len(args) else _UNKNOWN
    if which in "@*":
        return _subscript("@", "[@]" if which == "@" else "[*]", env, quoted)
    k = int(which) - 1
    if k < 0:
        return _UNKNOWN  # $0: the script's own name
    if k < known:
        return args[k]
    return _UNSET if known == len(args) else _UNKNOWN


def _param(name: str, rest: str, env: dict[str, str | None], quoted: bool = False) -> Any:
    if rest[:1] == "[":
        return _subscript(name, rest, env, quoted)
    present = name in env
    value = env.get(name)
    if not rest:
        if not present or value is None:
            return _UNKNOWN
        return value
    for operator in (":-", ":=", "-", "="):
        if rest.startswith(operator):
            if present and value is None:
                return _UNKNOWN
            use_default = (not present) or (operator.startswith(":") and value == "")
            return _param_word(rest[len(operator):], env, quoted) if use_default else value
    if rest.startswith(":+") or rest.startswith("+"):
        alt = rest[2:] if rest.startswith(":+") else rest[1:]
        if present and value is None:
            return _UNKNOWN
        is_set = present and (value != "" or not rest.startswith(":"))
        return _param_word(alt, env, quoted) if is_set else ""
    if rest.startswith(":?") or rest.startswith("?"):
        return value if present and value is not None else _UNKNOWN
    return _UNKNOWN  # substring/pattern operators: not worth guessing


def _param_word(word: str, env: dict[str, str | None], quoted: bool) -> Any:
    """The value of the word of `${P:-word}` (or `:+word`) when it is used: expanded, its quotes removed, and
    (unquoted) split into its words as bash does; _UNKNOWN when a part of it is not known."""
    # the word may itself reference variables (a few levels deep in real scripts; each level is read again, so
    # thousands of nested `${X:-${X:-...}}` are not followed)
    if word.count("${") > MAX_PARAM_NESTING:
        return _UNKNOWN
    plain = not any(ch in word for ch in "'\"$`\\")  # the common case: nothing to expand or unquote
    if quoted:
        if plain or not any(ch in word for ch in "\"$`\\"):
            return word
        # inside double quotes (or a here-document) a `"` in the word only quotes, `'` is a character, and
        # nothing is split: read as one double-quoted string
        words, _ = _lex_words('"' + _without_double_quotes(word) + '"', env, [])
    elif plain:
        return _Fields(part for part in re.split(r"[ \t\n]+", word) if part)
    else:
        words, _ = _lex_words(word, env, [])
    if any(op or text is None or has_unknown_mark(text) for text, _, _, op in words):
        return _UNKNOWN  # `;`, `|` or `&` in a default are characters there, not operators: not guessed
    texts = [text for text, _, _, _ in words]
    return "".join(texts) if quoted else _Fields(texts)


def _without_double_quotes(word: str) -> str:
    """``word`` without its unescaped double quotes (what they quote stays, escapes too)."""
    out = []
    k, n = 0, len(word)
    while k < n:
        ch = word[k]
        if ch == "\\" and k + 1 < n:
            out.append(word[k:k + 2])
            k += 2
            continue
        if ch != '"':
            out.append(ch)
        k += 1
    return "".join(out)


# --------------------------------------------------------------------------------------------------------------
# Kubernetes $(VAR)

_K8S_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
# an item whose value is one reference: `$(N)`, or an option with it attached (`--max-model-len=$(N)`)
_K8S_WHOLE_VALUE = re.compile(r"(?:--?[A-Za-z0-9][A-Za-z0-9_.-]*=)?\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand_k8s(token: Token, env: dict[str, str | None], problems: list[str] | None = None,
               origins: dict[str, Location] | None = None) -> Token:
    """Kubernetes ``$(VAR)`` expansion of one command/args item (``$$`` escapes; unset names stay as written).

    A variable whose value is not known (``valueFrom``, a template expression) leaves UNKNOWN_MARK in the
    text, so only the word holding it becomes unknown (the value of ``--model=$(MODEL_ID)``, one word of a
    script), not the option or the whole item.
    """
    text = token.text
    if text is None or "$" not in text:
        return token

    def sub(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        if name not in env:
            return UNKNOWN_MARK if ENV_FROM_UNSEEN in env else m.group(0)
        if env[name] is None or has_unknown_mark(env[name]):
            return UNKNOWN_MARK
        return env[name]

    grown = 0
    for m in _K8S_VAR.finditer(text):
        value = env.get(m.group(1) or "")
        grown += len(value) if isinstance(value, str) else 0
        if grown > MAX_EXPANDED_CHARS:
            # past the budget the item is unknown: vramlint does not build megabytes of argument
            if problems is not None:
                problems.append(f"{_where(token)}$(VAR) references expand this item past {MAX_EXPANDED_CHARS:,} "
                                "characters (expansion budget): it is not read")
            return Token(UNKNOWN_MARK, token.location, token.block, token.indent, token.lines, token.op, token.quoted)
    new = _K8S_VAR.sub(sub, text)
    if new == text:
        return token
    origin = None
    if origins:
        whole = _K8S_WHOLE_VALUE.fullmatch(text)
        name = whole.group(1) if whole else None
        if name is not None and isinstance(env.get(name), str) and not has_unknown_mark(env[name]):
            origin = origins.get(name)
    # Positions inside a script after expansion are approximate when the expansion changed lengths.
    return Token(new, token.location, token.block, token.indent, token.lines, token.op, token.quoted, origin)


# --------------------------------------------------------------------------------------------------------------
# Recognising vLLM


@dataclass
class VllmInvocation:
    """The vLLM argument list found in a command line, read as vLLM's parser reads it."""

    model: str | None = None
    model_location: Location | None = None
    args: dict[str, Any] = field(default_factory=dict)  # dest names (snake_case), typed as vLLM types them
    arg_locations: dict[str, Location] = field(default_factory=dict)
    unknown_args: dict[str, Location] = field(default_factory=dict)  # flag as written -> where
    config_files: list[tuple[str, Location | None]] = field(default_factory=list)  # --config paths
    problems: list[str] = field(default_factory=list)
    # Beyond the fields above (all with defaults, so an invocation can be built from the first ones alone):
    entrypoint: str = "serve"  # serve | openai.api_server | api_server | implied (image entrypoint)
    env: dict[str, str | None] = field(default_factory=dict)  # `FOO=1 vllm serve` assignments
    env_locations: dict[str, Location] = field(default_factory=dict)
    version_table: str | None = None  # the vLLM version whose argument table was used
    location: Location | None = None  # where the vLLM command starts
    # What vLLM's own parser rejects at start-up: {"code", "message" (vLLM's text), "location", "arg", "fix"}.
    startup_errors: list[dict[str, Any]] = field(default_factory=list)
    # What could not be read statically (a word known only at run time, no command at all): not input errors.
    unchecked: list[str] = field(default_factory=list)
    opaque_args: Location | None = None  # the first word known only at run time (vramlint.model.Server)
    # Which argument table was used when the version is unknown or older than the tables (said by the budget's
    # sources and by VRL009, so not reported on its own).
    version_note: str | None = None
    remote: str | None = None  # the host an `ssh` runs the server on
    image: str | None = None  # the image a launcher runs the server in (`srun --container-image`)
    # files the script wrote with a here-document before the server's command (path -> WrittenFile): a --config
    # among them is read by vramlint.extract.vllm_config.read_written_configs
    written: dict[str, Any] | None = None
    # The command line is all known and names no model (no positional, no --model, no --config that may): vLLM
    # then serves ModelConfig.model's default, which depends on the release (vramlint.assess takes it per version)
    model_default: bool = False


_VLLM_IMAGE_EXCLUDE = ("nim", "tgi", "text-generation-inference", "sglang", "tensorrt", "triton")
# Words of an image name that say it stands in for vLLM (llm-d's vllm-sim, a test's mock-vllm): it serves vLLM's
# API without loading a model, so it has no vLLM command line and no GPU budget
_STAND_IN_WORDS = frozenset(("mock", "sim", "simulator", "fake", "stub", "emulator", "dummy"))
# Words of an image's own name that say it is a program beside vLLM (a proxy or router in front of it, its UI or
# web frontend, a benchmark or evaluation client, an operator), named after the engine it serves: it runs no vLLM
# engine itself (audit24: `vllm-eval-public-evalchemy`, a Job whose args are `--endpoint URL --config FILE`)
_COMPANION_WORDS = frozenset(("proxy", "router", "gateway", "ui", "webui", "gui", "gradio", "dashboard", "exporter",
                              "operator", "client", "bench", "benchmark", "frontend", "eval", "evals", "evaluation",
                              "evaluator"))


# llm-d's vLLM images (ghcr.io/llm-d/...): llm-d/llm-d's docker/Dockerfile.cuda (llm-d-cuda, llm-d-cuda-gb200),
# .aws, .rocm, .xpu, .hpu and .cpu, and the first releases' single image (ghcr.io/llm-d/llm-d, the repository's
# Dockerfile), all end with ENTRYPOINT ["python", "-m", "vllm.entrypoints.openai.api_server"]: the container's
# args are that server's arguments. llm-d's other images (routing sidecar, scheduler, simulator) run no vLLM.
_LLM_D_VLLM_IMAGES = frozenset(("llm-d", "llm-d-cuda", "llm-d-cuda-gb200", "llm-d-aws", "llm-d-rocm", "llm-d-xpu",
                                "llm-d-hpu", "llm-d-cpu"))


def is_llm_d_vllm_image(image: str | None) -> bool:
    """One of llm-d's vLLM images (ghcr.io/llm-d/llm-d-cuda, a mirror's .../llm-d/llm-d-rocm, ...)."""
    if not image:
        return False
    name = image.lower().split("@", 1)[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    parts = repo.split("/")
    return len(parts) >= 2 and parts[-2] == "llm-d" and parts[-1] in _LLM_D_VLLM_IMAGES


def is_vllm_image(image: str | None) -> bool:
    """An image that runs vLLM: vllm/vllm-openai, rocm/vllm, nvcr.io/nvidia/vllm, llm-d's, any name with `vllm`.

    NVIDIA NIM images (nvcr.io/nim/...) may embed vLLM but have their own launcher and flags: not vLLM here.
    """
    if not image:
        return False
    known = _VLLM_IMAGES.get(image)
    if known is None:
        if len(_VLLM_IMAGES) >= 4096:
            _VLLM_IMAGES.clear()
        known = _VLLM_IMAGES[image] = _is_vllm_image(image)
    return known


# is_vllm_image by image name: a fleet of Deployments names a few images thousands of times, and the answer
# depends on the name alone
_VLLM_IMAGES: dict[str, bool] = {}


def _is_vllm_image(image: str) -> bool:
    if is_llm_d_vllm_image(image):
        return True
    name = image.lower().split("@", 1)[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    parts = repo.split("/")
    if "nim" in parts or any(p.startswith("nim-") for p in parts):
        return False
    # `vllm` as a word of the image's own name (vllm-openai, nm-vllm, kube-ai/vllm), not inside another word (an
    # emulator named vllme runs no vLLM), and not only in the namespace above it: vllm-project publishes GuideLLM
    # and the semantic router, and a registry project named vllm holds a deployment's UI and operator images
    last = parts[-1]
    words = re.split(r"[^a-z0-9]+", last)
    if not any(re.fullmatch(r"vllm\d*", w) for w in words):
        return False
    if is_stand_in_image(image) or _COMPANION_WORDS.intersection(words):
        return False
    return not any(x in last for x in ("sglang", "tgi", "text-generation"))


def is_stand_in_image(image: str | None) -> bool:
    """An image whose name says it stands in for vLLM (mock, simulator, stub), not vLLM itself."""
    name = (image or "").lower().split("@", 1)[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    return bool(_STAND_IN_WORDS & set(re.split(r"[-_.]", repo.rsplit("/", 1)[-1])))


def is_kserve_hf_image(image: str | None) -> bool:
    """KServe's Hugging Face server image (kserve/huggingfaceserver[-gpu]): its ENTRYPOINT is
    `python3 -m huggingfaceserver` (python/huggingface_server*.Dockerfile), which serves with vLLM by default."""
    if not image:
        return False
    name = image.lower().split("@", 1)[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    return repo.rsplit("/", 1)[-1] in ("huggingfaceserver", "huggingfaceserver-gpu")


def is_dynamo_image(image: str | None) -> bool:
    """NVIDIA Dynamo's runtime images (nvcr.io/nvidia/ai-dynamo/vllm-runtime, ...): vLLM is inside, but their
    ENTRYPOINT is nvidia_entrypoint.sh with an empty CMD (container/Dockerfile*), so they start no vLLM server
    by themselves: the DynamoGraphDeployment's component command does (`python3 -m dynamo.vllm` for a worker)."""
    return "ai-dynamo/" in (image or "").lower()


def is_vllm_project_image(image: str | None) -> bool:
    """An image whose entrypoint is vLLM's: its name is `vllm` or `vllm-*` (vllm/vllm-openai, rocm/vllm-dev,
    nvcr.io/nvidia/vllm), not a custom image that merely has vLLM in its name (acme/civo-vllm-docker)."""
    if not image:
        return False
    name = image.lower().split("@", 1)[0]
    repo = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    last = repo.rsplit("/", 1)[-1]
    return last == "vllm" or last.startswith(("vllm-", "vllm_"))


# The words of the note hidden_vllm_command writes (an extractor that knows better drops it by them)
ENTRYPOINT_NOT_SEEN = "its vLLM command line is not visible, so it is not checked"


def _word_in_message(word: str, width: int = 40) -> str:
    """A command word as a one-line message shows it: a `sh -c` script is its first line, shortened; the whole
    script quoted would bury the note (the location says where it is)."""
    lines = word.strip().splitlines() or [""]
    first = lines[0].strip()
    if len(first) > width:
        return first[:width].rstrip() + " ..."
    return first + (" ..." if len(lines) > 1 else "")


# What in a command word names vLLM without being a command: a service URL (`http://qwen-vllm-lb:8000/v1`, a
# benchmark's target), a variable reference (`$(VLLM_ENDPOINT)`, which the kubelet replaces by its value), or one
# of vLLM's Prometheus metric names (`vllm:kv_cache_usage_perc`, an argument of llm-d's inference scheduler)
# (a scheme is tried only where a run of its characters starts: tried at every letter of a 200,000-letter word,
# it backtracked quadratically, 60 CPU-s; fuzz seed 2626)
_NOT_A_COMMAND_PART = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://\S*|\$\(\w+\)|\$\{\w+\}|\$\w+"
                                 r"|(?<![\w/.-])vllm:[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _names_vllm_as_command(word: str) -> bool:
    """A command word that names vLLM as something it runs (`vllm`, `python -m vllm.entrypoints...`, a launcher
    `serve_vllm.sh`): not an option (`--vllm-port=8001` of llm-d's routing proxy), and not only in a URL or a
    variable's name."""
    return not word.startswith("-") and "vllm" in _NOT_A_COMMAND_PART.sub("", word).lower()


# Programs that run what their arguments name (a module, a script, an image, a command): a word naming vLLM among
# their arguments names what they run. Any other program given such a word only reads it (`echo vllm`, `pip show
# vllm`, `grep vllm`, `curl .../vllm-distill-*`, an index name): it runs no vLLM.
_ARGUMENT_LAUNCHERS = frozenset((
    "uv", "uvx", "poetry", "pipenv", "pdm", "hatch", "rye", "conda", "micromamba", "mamba", "pixi",
    "torchrun", "deepspeed", "accelerate", "mpirun", "mpiexec", "ray", "supervisord", "runuser", "su",
    "watchmedo", "parallel", "timeout", "flock", "unbuffer", "script", "xvfb-run", "docker", "podman", "nerdctl"))
_PYTHON_NAME = re.compile(r"python(?:[23](?:\.\d+)?)?$")
MAX_SHELL_DEPTH = 3  # `sh -c` scripts inside `sh -c` scripts read for what they run


def _argv_names_vllm(words: list[str], depth: int = 0) -> bool:
    """Does this command line run something that names vLLM? Only a word in command position (after the
    assignments, shell keywords and wrappers before it: `X=1 exec env vllm serve`), or an argument of a program
    that runs its arguments (`python -m vllm...`, `python serve_vllm.py`, `bash run_vllm.sh`, `uv run vllm`,
    `docker run IMAGE`), names it; a `sh -c` script's commands are read each so, as the shell runs them."""
    i = 0
    while i < len(words) and (_ASSIGNMENT_NAME.match(words[i]) or words[i] in _SHELL_KEYWORDS):
        i += 1
    while i < len(words) and _basename(words[i]) in _WRAPPERS | {"env"}:
        program = _basename(words[i])
        i += 1
        table = _GETOPT_WRAPPERS.get(program)
        while i < len(words) and (words[i].startswith("-") or _ASSIGNMENT_NAME.match(words[i])):
            word = words[i]
            i += 1
            if word == "--":
                break
            if table is not None and (word in table[1] or len(word) == 2 and word[1:] in table[0]):
                i += 1  # the option's value
        i += table[3] if table is not None else 0
    if i >= len(words):
        return False
    first, rest = words[i], words[i + 1:]
    if first.startswith("-"):
        # arguments of an entrypoint not seen (the image's): a `-c SCRIPT` is its shell's script, anything else
        # is read as before, every word
        for k, word in enumerate(words[i:-1]):
            if word.startswith("-") and not word.startswith("--") and "c" in word[1:] and depth < MAX_SHELL_DEPTH:
                return _script_names_vllm(words[i + k + 1], depth + 1)
        return any(_names_vllm_as_command(w) for w in words[i:])
    if _names_vllm_as_command(first):
        return True
    name = _basename(first).lower()
    if name in _SHELLS:
        for k, word in enumerate(rest):
            if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
                return k + 1 < len(rest) and depth < MAX_SHELL_DEPTH and _script_names_vllm(rest[k + 1], depth + 1)
            if not word.startswith("-"):
                return _names_vllm_as_command(word)  # the script it runs
        return False
    if _PYTHON_NAME.match(name):
        for k, word in enumerate(rest):
            if word in ("-m", "-c"):
                return k + 1 < len(rest) and "vllm" in _NOT_A_COMMAND_PART.sub("", rest[k + 1]).lower()
            if word in ("-W", "-X", "--check-hash-based-pycs"):
                continue
            if not word.startswith("-") and (k == 0 or rest[k - 1] not in ("-W", "-X", "--check-hash-based-pycs")):
                return _names_vllm_as_command(word)
        return False
    if name in _ARGUMENT_LAUNCHERS:
        return any(_names_vllm_as_command(w) for w in rest)
    return False


def _script_names_vllm(script: str, depth: int = 0) -> bool:
    """Does a shell script run something that names vLLM (`_argv_names_vllm` on each of its commands)?"""
    if "vllm" not in script.lower():
        return False
    try:
        tokens = split_shell(script, None)
    except (ValueError, RecursionError):
        return True  # not split: read as before, every word
    command: list[str] = []
    for token in [*tokens, Token(";", None, op=True)]:
        if token.op:
            if command and _argv_names_vllm(command, depth):
                return True
            command = []
        elif token.text is not None:
            command.append(token.text)
    return False


_VLLM_CLIENT_COMMANDS = frozenset(("bench", "chat", "complete", "collect-env"))
_SHELL_STRING_RUNNERS = frozenset(("tmux", "screen", "ssh"))
# a container run inside a command substitution (`ID=$(docker run -d ... IMAGE ...)`): the walk does not reach it
# as a command, the script reader does (shell_scripts._substituted_container_runs)
_SUBSTITUTED_RUN = re.compile(r"(?:\$\(|`)\s*(?:sudo\s+)?(?:\S*/)?(?:docker|podman|nerdctl)\s+(?:container\s+)?run\s")


def script_runs_vllm(text: str) -> bool:
    """Does running this script start something that names vLLM by `_argv_names_vllm`'s rule (a word in command
    position, or an argument of a launcher: `vllm serve`, `python -m vllm.entrypoints...`, `docker run` of a vLLM
    image, `bash run_vllm.sh`)? Its commands are walked as the shell runs them (`ScriptWalk`, variables expanded),
    a function's body where it is called: a file that only defines functions (a library other scripts source)
    runs none, and a script that only mentions vLLM (`pip install vllm`, `grep`, `curl`, `echo`) neither."""
    if "vllm" not in text.lower():
        return False

    def names_vllm(texts: list[str | None]) -> bool:
        words = [t if t is not None else "" for t in texts]
        if not any("vllm" in w.lower() for w in words):
            return False  # most commands of a script: decided without the rule's reading of each word
        # vLLM's CLI clients (vllm/entrypoints/cli: `bench`, `chat`, `complete`, `collect-env`) start no server
        if any(_basename(w) == "vllm" and words[k + 1:k + 2] and words[k + 1] in _VLLM_CLIENT_COMMANDS
               for k, w in enumerate(words)):
            return False
        # `python -c CODE`: code that imports vllm (a version check) starts no server; one that names the package
        # of vLLM's servers (vllm.entrypoints) may
        if any(_PYTHON_NAME.match(_basename(w).lower()) and words[k + 1:k + 2] == ["-c"]
               and "vllm.entrypoints" not in " ".join(words[k + 2:k + 3]) for k, w in enumerate(words)):
            return False
        if _argv_names_vllm(words):
            return True
        # programs that hand a string argument to a shell, which the script reader follows (`tmux send-keys -t S
        # "vllm serve ..." C-m`, `ssh HOST "vllm serve ..."`)
        at = next((k for k, w in enumerate(words) if _basename(w) in _SHELL_STRING_RUNNERS), None)
        return at is not None and any(_script_names_vllm(w) for w in words[at + 1:])

    walk = ScriptWalk(text, {}, names_vllm, None, lambda first: "", [])
    try:
        # the walk's run() ends with the functions never called; the commands the script itself reaches come first
        for steps in (walk._walk(_Items(_items(text))), walk._close_all()):
            if any(isinstance(reached, Command) for reached in steps):
                return True
    except (ValueError, RecursionError):
        return True  # not split: read as a named script is, and said there
    return _SUBSTITUTED_RUN.search(text) is not None


# The words of the note said of a container of Triton Inference Server running its vLLM backend (said once a file)
TRITON_VLLM_BACKEND = "Triton Inference Server with its vLLM backend"


def is_triton_vllm_image(image: str | None) -> bool:
    """NGC's Triton Inference Server image with the vLLM backend (nvcr.io/nvidia/tritonserver:<yy.mm>-vllm-python-py3):
    the repository `tritonserver` with `vllm` in its tag."""
    if not image:
        return False
    name = image.lower().split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    repo, _, tag = last.partition(":")
    return repo == "tritonserver" and "vllm" in tag


def triton_vllm_backend(image: str | None, words: list[str | None]) -> str | None:
    """The note for a container that runs Triton's vLLM backend (its vLLM-backend image, or `tritonserver` given a
    `--backend-config=vllm,...`), or None. Triton's vllm_backend (triton-inference-server/vllm_backend, model.py)
    builds vLLM's AsyncEngineArgs from each model's model.json in the model repository, so no command line holds
    them."""
    texts = [w for w in words if w]
    program = next((_basename(w) for w in texts if not _ASSIGNMENT_NAME.match(w) and _basename(w) not in _WRAPPERS
                    and _basename(w) not in _SHELLS and not w.startswith("-")), None)
    backend_config = any(w.startswith("--backend-config=vllm,") or w.startswith("vllm,") for w in texts)
    if not (is_triton_vllm_image(image) or (program == "tritonserver" and backend_config)):
        return None
    if not is_triton_vllm_image(image) and any("vllm serve" in w or "vllm.entrypoints" in w for w in texts):
        return None
    shown = image if is_triton_vllm_image(image) else "tritonserver --backend-config=vllm,..."
    return (f"{TRITON_VLLM_BACKEND} ({shown}): the engine's arguments (model, tensor_parallel_size, "
            "gpu_memory_utilization, max_model_len, ...) are in each model's model.json in the model repository "
            "(config.pbtxt `backend: \"vllm\"`), which vramlint does not read, so this server is not checked")


def hidden_vllm_command(image: str | None, words: list[str | None], env: dict[str, Any]) -> str | None:
    """What to say about a container that clearly relates to vLLM (its image or command names it) but shows no
    vLLM command line (a custom image's entrypoint, a launcher script): None when it is not such a container."""
    triton = triton_vllm_backend(image, words)
    if triton is not None:
        return triton
    texts = [w for w in words if w]
    # the image is vLLM's by is_vllm_image's rule alone: a name that only contains "vllm" beside a companion word
    # (`vllm-latency-proxy`, `...-vllm-...-gateway`, `vllm-manager-ui`) or a stand-in's word is another program
    # that talks to vLLM; an option that names vLLM (`--vllm-port=8001` of llm-d's routing proxy) is another
    # program's way to reach it, not a vLLM command
    if not (is_vllm_image(image) or _argv_names_vllm(texts)):
        return None
    if is_dynamo_image(image) and (not texts or any(
            texts[k] == "-m" and texts[k + 1].startswith("dynamo.") for k in range(len(texts) - 1))):
        return None  # Dynamo's frontend, planner or another engine's worker on its image: no vLLM server
    if "vllm" in (image or "").lower() and is_stand_in_image(image):
        return None  # a simulator's own command names vLLM's flags: still no vLLM
    if texts and _basename(texts[0]) in _LOOKALIKE_EXES:
        return None  # `sleep infinity` and the like: deliberately not a server
    if any(w in ("--backend=huggingface", "huggingface") for w in texts):
        return None
    if joins_ray_cluster(texts):
        return None  # a Ray worker: it runs no server, its GPUs serve the engine its leader starts
    if texts:
        shown = " ".join(_word_in_message(w) for w in texts[:3])
        what = f"vLLM image or launcher with a custom command ({shown}{' ...' if len(texts) > 3 else ''})"
    else:
        what = "vLLM image with a custom entrypoint"
    message = f"{what}: {ENTRYPOINT_NOT_SEEN}"
    read = _launcher_settings(env)
    if read:
        message += f"; the image's launcher may build it from {', '.join(read[:6])}"
    return message + " (vramlint does not guess what a launcher does)"


def _launcher_settings(env: dict[str, Any]) -> list[str]:
    """The environment variables a custom image's launcher may build a vLLM command line from."""
    return sorted(k for k in env if "MODEL" in k.upper() or k.upper().startswith("VLLM_"))


_SHELL_SEPARATORS = re.compile(r"\s*(?:&&|\|\||;|&|\n)\s*")


def joins_ray_cluster(words: list[str]) -> bool:
    """A command that only joins a Ray cluster as a worker, so the container runs no vLLM server: vLLM's own
    examples/online_serving/multi-node-serving.sh with its `worker` subcommand (the script runs
    `ray start --address=<leader>:<port> --block` until that returns, nothing else), or `ray start` with
    `--address` and without `--head`. Any other command in the same line (a `vllm serve` after it, a launcher)
    makes it something else."""
    steps = [part.split() for text in [" ".join(w for w in words if w)]
             for part in _SHELL_SEPARATORS.split(text) if part.strip()]
    joined = False
    for step in steps:
        while step and (_basename(step[0]) in _SHELLS or step[0] in ("-c", "-lc", "exec")):
            step = step[1:]  # `sh -c "..."` and `bash script.sh`: the words after the shell
        if not step:
            continue
        if _basename(step[0]) == "multi-node-serving.sh" and step[1:2] == ["worker"]:
            joined = True
        elif step[:2] == ["ray", "start"] and "--head" not in step and any(
                w == "--address" or w.startswith("--address=") for w in step):
            joined = True
        elif step[0] not in ("echo", "sleep", "set", "export", "true", "cd"):
            return False
    return joined


_ASSIGNMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SHELLS = {"sh", "bash", "dash", "zsh", "ash", "ksh"}
_WRAPPERS = {"exec", "nohup", "time", "command", "builtin", "stdbuf", "nice", "ionice", "taskset", "numactl",
             "tini", "dumb-init", "setsid", "gosu", "su-exec", "xargs", "sudo", "srun", "chrt"}
# Programs that run the command after their options (getopt: `-xVALUE` or `-x VALUE`, `--long=VALUE` or `--long
# VALUE`, `--` ends the options), by each one's own option table: the short options that take a value, the long
# ones that do, and how many operands come before the command. A long option of a table with ``long_flags`` that is
# in neither set is not known, so where the command starts is not either.
_GETOPT_WRAPPERS: dict[str, tuple[str, frozenset[str], frozenset[str] | None, int]] = {
    # GNU coreutils env(1): -u NAME, -C DIR, -S STRING (split into the command's words)
    "env": ("uCS", frozenset(("--unset", "--chdir", "--split-string")), None, 0),
    "nice": ("n", frozenset(("--adjustment",)), None, 0),  # coreutils nice(1)
    "stdbuf": ("ioe", frozenset(("--input", "--output", "--error")), None, 0),  # coreutils stdbuf(1)
    # util-linux ionice(1) (-p/-P/-u name processes, not a command: see _NO_COMMAND_OPTIONS)
    "ionice": ("cnpPu", frozenset(("--class", "--classdata", "--pid", "--pgid", "--uid")), None, 0),
    "taskset": ("", frozenset(), None, 1),  # util-linux taskset(1): [options] MASK|LIST COMMAND (no option takes a value)
    "chrt": ("TPD", frozenset(("--sched-runtime", "--sched-period", "--sched-deadline")), None, 1),  # [opts] PRIO CMD
    # numactl(8) (numactl.c `opts`: every option with has_arg)
    "numactl": ("ipcNCmSfoLMIwP", frozenset((
        "--interleave", "--preferred", "--cpubind", "--cpunodebind", "--physcpubind", "--membind", "--shm", "--file",
        "--offset", "--length", "--shmmode", "--shmid", "--weighted-interleave", "--preferred-many")), None, 0),
    # sudo(8); `sudo VAR=value command` assignments are read as a command's own
    "sudo": ("ugCDhprtTU", frozenset(("--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role",
                                      "--type", "--command-timeout", "--other-user")), None, 0),
    "time": ("fo", frozenset(("--format", "--output")), None, 0),  # GNU time(1); bash's `time -p` takes none
    "exec": ("a", frozenset(), None, 0),  # bash's exec [-cl] [-a name]
    "tini": ("pe", frozenset(), None, 0),  # tini: -p SIGNAL, -e EXIT_CODE
    "dumb-init": ("r", frozenset(("--rewrite",)), None, 0),
    "gosu": ("", frozenset(), None, 1),  # gosu USER COMMAND
    "su-exec": ("", frozenset(), None, 1),  # su-exec USER COMMAND
    # Slurm srun(1): its short options with a value, and its long ones (with Pyxis' --container-*); a long option
    # not listed is not known (srun has many), so the command is not read after it
    "srun": ("AbcdDeiJLmMnNopqrStTwWxGCB", frozenset((
        "--account", "--acctg-freq", "--bcast", "--begin", "--cpus-per-task", "--comment", "--constraint",
        "--container", "--container-id", "--cpu-bind", "--cpu-freq", "--cpus-per-gpu", "--deadline", "--delay-boot",
        "--dependency", "--chdir", "--distribution", "--error", "--epilog", "--export", "--extra-node-info",
        "--gpu-bind", "--gpu-freq", "--gpus", "--gpus-per-node", "--gpus-per-socket", "--gpus-per-task", "--gres",
        "--gres-flags", "--het-group", "--hint", "--input", "--job-name", "--jobid", "--licenses", "--mail-type",
        "--mail-user", "--mcs-label", "--mem", "--mem-bind", "--mem-per-cpu", "--mem-per-gpu", "--mincpus", "--mpi",
        "--network", "--nodefile", "--nodelist", "--nodes", "--ntasks", "--ntasks-per-core", "--ntasks-per-gpu",
        "--ntasks-per-node", "--ntasks-per-socket", "--output", "--open-mode", "--partition", "--power", "--prolog",
        "--qos", "--reservation", "--signal", "--slurmd-debug", "--sockets-per-node", "--task-epilog",
        "--task-prolog", "--thread-spec", "--threads-per-core", "--time", "--time-min", "--tmp", "--uid", "--gid",
        "--wait", "--wckey", "--exclude", "--clusters", "--core-spec", "--cores-per-socket", "--threads",
        "--relative", "--switches", "--container-image", "--container-mounts", "--container-name",
        "--container-workdir", "--container-env")), frozenset((
        "--exclusive", "--overlap", "--label", "--unbuffered", "--pty", "--verbose", "--quiet", "--hold", "--no-kill",
        "--overcommit", "--contiguous", "--preserve-env", "--disable-status", "--oversubscribe", "--spread-job",
        "--test-only", "--use-min-nodes", "--exact", "--whole", "--immediate", "--kill-on-bad-exit", "--x11",
        "--container-mount-home", "--no-container-mount-home", "--container-remap-root",
        "--no-container-remap-root", "--container-writable", "--container-readonly", "--no-container-entrypoint",
        "--container-entrypoint")), 0),
}
# options after which the program runs no command of its own (it acts on running processes or reads a file)
_NO_COMMAND_OPTIONS = {"ionice": ("-p", "-P", "-u", "--pid", "--pgid", "--uid"), "taskset": ("-p", "--pid"),
                       "chrt": ("-p", "--pid"), "srun": ("--multi-prog",), "sudo": ("-l", "-v", "-k", "-K", "-e",
                                                                                    "--list", "--validate", "--edit")}
_SHELL_KEYWORDS = {"then", "do", "else", "elif", "{", "!", "if", "while", "until"}
_VLLM_MODULES = {
    "vllm.entrypoints.openai.api_server": "openai.api_server",
    "vllm.entrypoints.api_server": "api_server",
    # NVIDIA Dynamo's vLLM worker (ai-dynamo/dynamo components/src/dynamo/vllm/args.py): Dynamo's own argparse
    # takes its options (parse_known_args), then a FlexibleArgumentParser with AsyncEngineArgs.add_cli_args parses
    # the rest, so vLLM's engine arguments, `--model` a flag (no positional model)
    "dynamo.vllm": "dynamo.vllm",
}
_LOOKALIKE_EXES = {"text-generation-launcher", "sglang", "trtllm-serve", "tritonserver", "ollama", "lmdeploy",
                   "llama-server", "sleep", "tail", "infinity_emb"}


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _getopt_command_start(argv: list[Any], i: int, program: str) -> tuple[list[Any], int] | None:
    """Where the command a wrapper (``argv[i]``, one of ``_GETOPT_WRAPPERS``) runs starts, read with its own
    option table; with `env -S STRING` its words spliced in as env splits them. None when it cannot be told (an
    option or operand known only at run time, an option not in the table) or the wrapper runs no command."""
    short_values, long_values, long_flags, operands = _GETOPT_WRAPPERS[program]
    no_command = _NO_COMMAND_OPTIONS.get(program, ())
    i += 1
    while i < len(argv):
        text = argv[i].text
        if text is None:
            # a word known only at run time: an option, or the program (`exec "$VENV/bin/python" -m vllm...`);
            # `-m` and vLLM's server module after it say it is the interpreter, as _search_argv reads it
            return (argv, i) if _names_vllm_module(argv[i + 1:]) else None
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            if text == "-" and program == "env":
                i += 1  # `env -`: -i
                continue
            break
        name = text.split("=", 1)[0]
        if name in no_command or text in no_command:
            return None
        if text.startswith("--"):
            if "=" in text:
                value = text.split("=", 1)[1]
                i += 1
            elif name in long_values:
                if i + 1 >= len(argv):
                    return None
                value = argv[i + 1].text
                i += 2
            elif long_flags is None or name in long_flags:
                value = None
                i += 1
            else:
                return None
            if program == "env" and name == "--split-string":
                return _env_split(argv, i, argv[i - 1], value)
            continue
        # a cluster of short options: the first that takes a value takes the rest of the word, or the next word
        k = 1
        value = None
        taken = None
        while k < len(text):
            if text[k] in short_values:
                taken = text[k]
                if k + 1 < len(text):
                    value = text[k + 1:]
                    i += 1
                else:
                    if i + 1 >= len(argv):
                        return None
                    value = argv[i + 1].text
                    i += 2
                break
            if f"-{text[k]}" in no_command:
                return None
            k += 1
        else:
            i += 1
        if program == "env" and taken == "S":
            return _env_split(argv, i, argv[i - 1], value)
    for _ in range(operands):  # taskset's MASK, chrt's PRIORITY, gosu's USER
        if i >= len(argv) or argv[i].text is None:
            return None
        i += 1
    return (argv, i) if i < len(argv) else None


# ssh(1): the options that take a value; the others (-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X
# -x -Y -y) do not
_SSH_VALUES = "BbcDEeFIiJLlmOoPpQRSWw"


def ssh_remote(argv: list[Token], i: int) -> tuple[str | None, list[Token]] | None:
    """For `ssh [OPTIONS] DESTINATION COMMAND...` with `ssh` at ``argv[i]``: (the destination, the command's
    words), or None when the options cannot be told apart (a word known only at run time) or no destination."""
    at = _ssh_destination_index([t.text for t in argv], i)
    if at is None:
        return None
    return argv[at].text, list(argv[at + 1:])


def _ssh_destination_index(texts: list[str | None], i: int) -> int | None:
    """The index of the destination of `ssh [OPTIONS] DESTINATION ...` with `ssh` at ``texts[i]`` (None: the
    options cannot be told apart, or no destination)."""
    i += 1
    while i < len(texts):
        text = texts[i]
        if text is None:
            return None
        if has_unknown_mark(text):
            # `"$HOST"`: taken as the destination (were it an option, the words after it would name the host,
            # not a command that starts a server, and nothing is read)
            break
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        k = 1
        while k < len(text) and text[k] not in _SSH_VALUES:
            k += 1
        i += 2 if k == len(text) - 1 else 1  # `-p 2222` takes the next word; `-p2222` and flags do not
    return i if i < len(texts) else None


def _ssh_command_indexes(texts: list[str | None]) -> range:
    """The indexes of the destination and the remote command's words of `[wrappers] ssh [OPTIONS] DESTINATION
    COMMAND...` (empty when the command is no ssh): ssh joins the command's words with spaces for the remote
    shell, which splits the line again, so a word holding a value unknown here is only that part unknown there
    (`ssh host "vllm serve $M --port 8000"`); an unknown destination names only the host."""
    i = 0
    while i < len(texts) and texts[i] is not None and (
            _basename(texts[i]) in _WRAPPERS or _ASSIGNMENT_NAME.match(texts[i])):
        i += 1
    if i >= len(texts) or texts[i] is None or _basename(texts[i]) != "ssh":
        return range(0)
    at = _ssh_destination_index(texts, i)
    return range(0) if at is None else range(at, len(texts))  # (the destination's, which names only the host)


def _search_ssh(argv: list[Token], i: int, env: dict[str, str | None], depth: int) -> _Found | None:
    """`ssh [OPTIONS] DESTINATION COMMAND...`: ssh joins the command's words with spaces and the remote user's
    shell runs that line (`sh -c LINE`), so one word is read as the script it is, and several words, when none
    holds what that shell would split or expand again, as the command they make (each keeps its place). The words
    were expanded by the local shell; the remote host's environment is not known."""
    remote = ssh_remote(argv, i)
    if remote is None:
        return None
    host, words = remote
    if not words or any(t.text is None for t in words):
        return None
    if len(words) == 1:
        found = _search_shell([Token("sh", words[0].location), Token("-c", words[0].location), words[0]], {},
                              depth + 1)
    elif any(re.search(r"[\s'\"\\$`;&|<>(){}*?\[\]#~]", t.text or "") or has_unknown_mark(t.text) for t in words):
        line = Token(" ".join(t.text or "" for t in words), words[0].location)
        found = _search_shell([Token("sh", line.location), Token("-c", line.location), line], {}, depth + 1)
    else:
        found = _search_argv(list(words), {}, depth + 1)
    if found is not None and found.remote is None:
        found.remote = host if not has_unknown_mark(host) else "a host known only at run time"
    return found


# tmux(1): the options of tmux itself that take a value, and those of the commands that start a program or type
# into a pane (new-session, new-window, split-window, respawn-pane, send-keys) that take one
_TMUX_VALUE_OPTIONS = frozenset("fLST")
_TMUX_RUN_COMMANDS = frozenset(("new-session", "new", "new-window", "neww", "split-window", "splitw",
                                "respawn-pane", "respawnp", "respawn-window", "respawnw"))
_TMUX_COMMAND_VALUE_OPTIONS = frozenset("ceFflnpstxyN")
_TMUX_ENTER_KEYS = frozenset(("C-m", "Enter", "KPEnter", "C-j"))
_TMUX_SEND = frozenset(("send-keys", "send"))
_TMUX_KEY_NAME = re.compile(r"^(?:[CMS]-.+|[A-Z][A-Za-z0-9]*|F\d+)$")


def _tmux_command(texts: list[str | None]) -> tuple[str, int, int] | None:
    """Of `tmux [OPTIONS] COMMAND [FLAGS] WORDS...` (its words' texts, tmux first): (COMMAND, its index, where
    WORDS start), for the commands that start a program in a pane or type into one; None for any other, for
    `tmux -c`, `send-keys -l|-H|-X|-K|-M` (literal keys: no Enter; hex; copy-mode; client keys; mouse) and
    chained commands (`\\;`), which vramlint does not read."""
    j = 1
    while j < len(texts) and (texts[j] or "").startswith("-") and texts[j] != "-":
        flag = texts[j] or ""
        if len(flag) == 2 and flag[1] == "c":
            return None  # `tmux -c COMMAND`: tmux as a login shell's stand-in
        j += 2 if len(flag) == 2 and flag[1] in _TMUX_VALUE_OPTIONS else 1
    if j >= len(texts) or texts[j] is None:
        return None
    command = texts[j]
    if command not in _TMUX_RUN_COMMANDS and command not in _TMUX_SEND:
        return None
    if any(t == ";" or (t or "").endswith("\\;") for t in texts[j + 1:]):
        return None
    k = j + 1
    while k < len(texts) and (texts[k] or "").startswith("-") and texts[k] not in ("-", "--"):
        letters = (texts[k] or "")[1:]
        if command in _TMUX_SEND and any(c in letters for c in "lHXKM"):
            return None
        k += 2 if letters and letters[-1] in _TMUX_COMMAND_VALUE_OPTIONS else 1
    if k < len(texts) and texts[k] == "--":
        k += 1
    return (command, j, k) if k < len(texts) else None


def _tmux_shell_lines(texts: list[str | None]) -> set[int]:
    """The indexes of the words of a tmux command that a shell reads as a line of its own (see `_search_tmux`):
    the one shell-command of `new-session` and the others, each word typed by `send-keys` just before an Enter
    key. Like a shell's `-c` script, such a word is split again there, so a variable in it leaves only its own
    words unknown (`_unknown_but_script`)."""
    i = 0
    while i < len(texts) and texts[i] is not None and (
            _basename(texts[i]) in _WRAPPERS or _ASSIGNMENT_NAME.match(texts[i])):
        i += 1
    if i >= len(texts) or texts[i] is None or _basename(texts[i]) != "tmux":
        return set()
    read = _tmux_command(texts[i:])
    if read is None:
        return set()
    command, _, start = read
    start += i
    if command not in _TMUX_SEND:
        return {start} if start == len(texts) - 1 else set()
    return {k for k in range(start, len(texts) - 1)
            if texts[k + 1] in _TMUX_ENTER_KEYS and (k == start or texts[k - 1] in _TMUX_ENTER_KEYS)}


def _search_tmux(argv: list[Token], i: int, depth: int) -> _Found | None:
    """`tmux new-session|new-window|split-window|respawn-pane [OPTIONS] [COMMAND...]` runs COMMAND in the pane it
    opens (one word through the shell, `sh -c`, several as the program and its arguments, with `-e NAME=VALUE`
    in its environment); `tmux send-keys [-t PANE] LINE C-m` types LINE into a pane whose shell runs it at the
    Enter key (`C-m`, `Enter`). The words were expanded by the shell running tmux; the pane's own environment
    is the tmux server's, not known here. Other tmux commands, and those `_tmux_command` leaves, start nothing
    vramlint reads."""
    argv = argv[i:]
    read = _tmux_command([t.text for t in argv])
    if read is None:
        return None
    command, j, k = read
    # `-e NAME=VALUE`: set in the pane's environment, as an assignment before the command sets it
    assigned = [value for flag, value in zip(argv[j + 1:k], argv[j + 2:k], strict=False)
                if flag.text == "-e" and value.text is not None and _ASSIGNMENT_NAME.match(value.text)]
    words = argv[k:]
    if command not in _TMUX_SEND:
        if len(words) == 1:
            words = [Token("sh", words[0].location), Token("-c", words[0].location), words[0]]
        return _search_argv([*assigned, *words], {}, depth + 1)
    typed: list[Token] = []
    for word in words:
        if word.text in _TMUX_ENTER_KEYS:
            # what was typed since the last Enter is one line of the pane's shell
            if len(typed) == 1 and typed[0].text is not None:
                found = _search_shell([Token("sh", typed[0].location), Token("-c", typed[0].location), typed[0]],
                                      {}, depth + 1)
                if found is not None:
                    return found
            typed = []
            continue
        if word.text is None or _TMUX_KEY_NAME.match(word.text):
            return None  # a key name (Space, Tab, C-c) or a word known only at run time among the typed words
        typed.append(word)
    return None  # a line typed with no Enter after it is not run


# torchrun (torch/distributed/run.py): argparse, so every option takes a value but these (store_true and the
# -m/--no-python switches); `-r` and `-t` are the short forms of --redirects and --tee
_TORCHRUN_FLAGS = frozenset(("--standalone", "-m", "--module", "--no-python", "--no_python", "--run-path",
                             "--run_path", "--virtual-local-rank", "--virtual_local_rank", "-h", "--help"))


def _torchrun_command(argv: list[Any], i: int) -> tuple[list[Any], int] | None:
    """The command torchrun starts in each worker process: `-m MODULE ARGS` runs ``python -m MODULE ARGS``,
    `--no-python PROGRAM ARGS` the program itself, a script path a Python script (not vLLM's server)."""
    module = no_python = False
    while i < len(argv):
        text = argv[i].text
        if text is None:
            return None
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        name = text.split("=", 1)[0]
        if name in ("-m", "--module"):
            module = True
        elif name in ("--no-python", "--no_python"):
            no_python = True
        if "=" in text or name in _TORCHRUN_FLAGS or (len(name) > 2 and not name.startswith("--")):
            i += 1  # `--nproc-per-node=2`, a flag, `-r3`
        else:
            i += 2
    if i >= len(argv):
        return None
    if no_python:
        return argv, i
    if module:
        where = argv[i].location
        return list(argv[:i]) + [Token("python3", where), Token("-m", where)] + list(argv[i:]), i
    return None


# mpirun / mpiexec (Open MPI's and MPICH's Hydra): the options that take one value, and those that take two; either
# with one dash or two. An option in no set is not known, so where the command starts is not known either.
_MPI_ONE_VALUE = frozenset((
    "np", "n", "c", "H", "host", "hosts", "hostfile", "machinefile", "default-hostfile", "x", "map-by", "bind-to",
    "rank-by", "npernode", "N", "npersocket", "prefix", "wdir", "wd", "path", "output-filename", "ppn", "f",
    "launcher", "bootstrap", "iface", "genvlist", "envlist", "configfile", "output", "report-bindings-file",
    "personality", "runtime-options", "am", "tune", "preload-files", "hostlist", "cpu-set", "rf", "rankfile"))
_MPI_TWO_VALUES = frozenset(("mca", "gmca", "genv", "env", "prtemca", "pmixmca"))
_MPI_FLAGS = frozenset((
    "allow-run-as-root", "oversubscribe", "nooversubscribe", "tag-output", "timestamp-output", "display-map",
    "display-allocation", "report-bindings", "v", "verbose", "q", "quiet", "bind-to-core", "bind-to-socket",
    "noprefix", "show-progress", "genvall", "envall", "genvnone", "envnone", "merge-stderr-to-stdout", "enable-recovery",
    "disable-recovery", "use-hwthread-cpus", "display-devel-map", "nolocal", "l", "prepend-rank", "print-rank-map",
    "stdin", "report-pid", "report-uri", "d", "debug", "use-regexp", "no-use-regexp"))


def _mpirun_command_start(argv: list[Any], i: int) -> int | None:
    while i < len(argv):
        text = argv[i].text
        if text is None:
            return None
        if text == "--":
            return i + 1
        if not text.startswith("-") or text == "-":
            return i
        name = text.lstrip("-").split("=", 1)[0]
        if "=" in text or name in _MPI_FLAGS:
            i += 1
        elif name in _MPI_ONE_VALUE:
            i += 2
        elif name in _MPI_TWO_VALUES:
            i += 3
        else:
            return None
    return None


def _env_split(argv: list[Any], i: int, where: Any, value: str | None) -> tuple[list[Any], int] | None:
    """`env -S STRING ARGS...`: STRING split into words (with quotes, as env does) before ARGS; the command starts
    with the first of them that is not an assignment or option, read from there on as env's own words."""
    if value is None:
        return None
    words = [Token(t.text, where.location) for t in split_shell(value, None)]
    spliced = [Token("env", where.location)] + words + list(argv[i:])
    return spliced, 0


def timeout_command_start(words: list[Any], i: int) -> int | None:
    """Where the command `timeout [OPTION] DURATION COMMAND...` (GNU coreutils) runs starts, for ``words[i]`` the
    `timeout`; None when it cannot be told (an option or the duration known only at run time)."""
    i += 1
    while i < len(words):
        text = words[i].text
        if text is None:
            return None
        if text in ("-s", "-k", "--signal", "--kill-after"):
            i += 2
        elif text.startswith("-") and text != "-":
            i += 1  # --preserve-status, --foreground, -v, --signal=KILL, -k5
        else:
            return i + 1  # the duration, then the command
    return None


# Nsight Systems' subcommands that start the application named after their options (`nsys profile [options]
# APP [args]`, `nsys launch ...`); its other subcommands (start, stop, stats, export, ...) and its global options
# (--version, --help) run none
_NSYS_LAUNCHING = ("profile", "launch")


def nsys_command_start(words: list[Any], i: int) -> int | None:
    """Where the application of `nsys profile|launch [options] APP ...` (NVIDIA Nsight Systems' CLI) starts, for
    ``words[i]`` the `nsys`; None when it runs none or cannot be told. By the CLI's documented syntax (User Guide,
    "Command Line Options") a long option carries its parameter after `=` (`--trace=cuda,nvtx`) and a short one
    in the next word (`-t cuda`); a long option without `=` (`--help`, or one written another way) is not read."""
    if i + 1 >= len(words) or words[i + 1].text not in _NSYS_LAUNCHING:
        return None
    i += 2
    while i < len(words):
        text = words[i].text
        if text is None:
            return None
        if not text.startswith("-") or text == "-":
            return i
        if text.startswith("--"):
            if "=" not in text:
                return None
            i += 1
        elif text == "-h" or len(text) != 2:
            return None
        else:
            i += 2
    return None


def _is_python(word: str) -> bool:
    b = _basename(word)
    return b == "python" or b.startswith("python3") or b == "python2" or b.startswith("pypy")


@dataclass
class _Found:
    entry: str
    args: list[Token]
    env: dict[str, str | None]
    env_tokens: dict[str, Token]
    start: Location | None
    problems: list[str]
    program: str = "vllm"  # the executable of `<program> serve`: vllm, or vllm-omni
    # files the script wrote with a here-document before this command ran: path -> WrittenFile
    written: Any = None
    remote: str | None = None  # the host `ssh` runs the command on (not this shell's, nor its devices)
    image: str | None = None  # the container image the launcher runs the command in (`srun --container-image`)


def _third_party_subcommand(image: str | None, args: list[Token]) -> bool:
    """`PROGRAM SUBCOMMAND --opt ...` in an image that is not vLLM's own (`paddleocr genai_server --backend vllm`):
    a launcher's own command line, not words for an assumed `vllm serve` entrypoint. vLLM's `serve` takes one
    positional word, so a second bare word cannot be vLLM's; the first, a plain name with no `/`, is no Hub id or
    path either (audit22 D7: four false warnings and the model "paddleocr")."""
    from vramlint.versions import is_own_vllm_image

    if is_own_vllm_image(image) or len(args) < 2:
        return False
    first, second = args[0].text, args[1].text
    return bool(first and second and re.fullmatch(r"[A-Za-z][\w.-]*", first) and
                re.fullmatch(r"[A-Za-z][\w-]*", second) and "/" not in first and first != "serve")


def find_vllm_invocation(command: list[Token], args: list[Token], image: str | None,
                         env: dict[str, str | None], *, version: str | None = None,
                         env_locations: dict[str, Location] | None = None) -> VllmInvocation | None:
    """Find and read the vLLM server command in a container's ``command`` + ``args`` (Kubernetes semantics).

    ``command`` replaces the image ENTRYPOINT and ``args`` its CMD. For a vLLM image with no ``command`` the
    image's entrypoint (``vllm serve`` in recent tags, ``python3 -m vllm.entrypoints.openai.api_server`` in
    old ones) makes ``args`` alone the vLLM argument list. Returns None when no vLLM server runs (lookalikes:
    NIM, TGI, SGLang, KServe's huggingface backend, `sleep infinity`).
    """
    over_budget: list[str] = []
    if not plain_words(command):
        command = [_marked_unknown(expand_k8s(t, env, over_budget, env_locations)) for t in command]
    if not plain_words(args):
        args = [_marked_unknown(expand_k8s(t, env, over_budget, env_locations)) for t in args]
    version = version or version_from_image(image)
    # a third-party image whose plain tag looks like a vLLM release: its arguments are read with that release's
    # table, and what that release refuses is marked as holding for an assumed version (a warning, see VRL005)
    # (a version configured for the file wins, as in assess.resolve_version)
    tag_assumed = None if version or configured_version_for(command + args) else assumed_version_from_tag(image)
    version = version or tag_assumed
    found: _Found | None = None
    not_a_program = None
    # the image's own entrypoint runs vLLM's server: not for Dynamo's images, whose entrypoint runs nothing
    own_entrypoint = is_vllm_image(image) and not is_dynamo_image(image)
    api_server_image = is_llm_d_vllm_image(image)  # its entrypoint is the api_server module, not `vllm serve`
    if command and command[0].text and command[0].text.startswith("-") and own_entrypoint:
        # `command` replaces the image's ENTRYPOINT, so its first word is what the runtime executes: an option
        # written there (vLLM's arguments put in `command` instead of `args`) is no program, and the container
        # never starts; the words still say what the author meant vLLM to read
        not_a_program = command[0]
        found = _Found("implied", list(command + args), {}, {}, command[0].location, [])
    elif command:
        found = _search_argv(command + args, dict(env), depth=0)
    elif args:
        first = args[0].text
        if first == "serve" and own_entrypoint and not api_server_image:
            found = _Found("serve", list(args[1:]), {}, {}, args[0].location, [])
        elif first is not None and not first.startswith("-") and _looks_like_command(first):
            found = _search_argv(args, dict(env), depth=0)
        if found is None and is_kserve_hf_image(image) and (first is None or first.startswith("-")):
            found = _Found("huggingfaceserver", list(args), {}, {}, args[0].location, [])
        if found is None and own_entrypoint and _third_party_subcommand(image, args):
            return None  # the caller says the image's command line is not read
        if found is None and own_entrypoint:
            if first is not None and (first.startswith("-") or not _looks_like_command(first)):
                found = _Found("implied", list(args), {}, {}, args[0].location, [])
            elif first is None and any(t.text and t.text.startswith("--") for t in args[1:]):
                # `command: [${MODEL_PATH}, --max-model-len, ...]` for the image's `vllm serve` entrypoint: an
                # unknown first word followed by options is the model, unknown, not an unknown program
                found = _Found("implied", list(args), {}, {}, args[0].location, [])
    elif is_kserve_hf_image(image):
        found = _Found("huggingfaceserver", [], {}, {}, None, [])
    elif own_entrypoint and (is_own_vllm_image(image) or api_server_image or _launcher_settings(env)):
        # vLLM's own images run `vllm serve` (the api_server in old tags) with nothing else; another image with
        # vLLM in its name and nothing written (vLLM Warden's manager and UI) may run anything: only settings
        # its launcher could read (a model, VLLM_*) say it serves vLLM (the caller says the rest as a note)
        found = _Found("implied", [], {}, {}, None, [])
    if found is None:
        return None
    if found.image is not None and not version:
        version = version_from_image(found.image)  # the image the launcher runs the server in
    if found.entry == "implied" and api_server_image:
        found.entry = "openai.api_server"
    if found.entry == "shell-deep":
        inv = VllmInvocation(version_table=None)
        inv.unchecked.append(found.problems[0])
        inv.location = found.start
        return inv
    if found.entry == "shell-error":
        inv = VllmInvocation(version_table=None)
        inv.startup_errors.append({"code": "shell", "message": found.problems[0], "location": found.start,
                                   "arg": None, "fix": "close the quote", "version": None, "version_known": True,
                                   "shell": True})
        inv.unchecked.append("the shell script: the shell refuses it, so the command line it would run is not read")
        inv.location = found.start
        return inv
    if any(t.text == "--backend=huggingface" for t in found.args):
        return None
    for i, t in enumerate(found.args):
        if t.text == "--backend" and i + 1 < len(found.args) and found.args[i + 1].text == "huggingface":
            return None
    model_from_hf: tuple[str | None, Location | None] | None = None
    if found.entry == "huggingfaceserver":
        hf = _huggingfaceserver_args(found.args)
        if hf is None:
            return None
        found.args, model_from_hf = hf
        found.entry = "openai.api_server"
    inv = parse_vllm_args(found.args, version=version, entry=found.entry,
                          newest_release=not version and runs_newest_release(image))
    inv.written = found.written or None
    plugin_methods = platform_plugin_quantization(found.image or image)
    if plugin_methods:
        inv.startup_errors = [e for e in inv.startup_errors
                              if not (e.get("code") == "quantization-unknown" and e.get("method") in plugin_methods)]
    if found.entry in ("api_server", "openai.api_server") and found.start is not None:
        _check_entry_module(inv, f"vllm.entrypoints.{found.entry}", found.start)
    if not_a_program is not None:
        inv.startup_errors.insert(0, {
            "code": "exec", "location": not_a_program.location, "arg": None, "version": None, "version_known": True,
            "shell": True,
            "message": f"the command (which replaces the image's entrypoint) starts with {not_a_program.text!r}, "
                       f"which is no program: the runtime fails with 'exec: \"{not_a_program.text}\": executable "
                       "file not found in $PATH'",
            "fix": "put these words in `args` (Kubernetes) or compose's `command`, which follow the image's "
                   "entrypoint, and drop `command` (compose: `entrypoint`)"})
    if tag_assumed and image:
        source = assumed_tag_source(image)
        for error in inv.startup_errors:
            if error.get("version_known", True) and not error.get("shell"):
                error["version_known"] = False
                error["assumed_by"] = source
    if found.entry == "serve" and (found.program == "vllm-omni" or "--omni" in inv.unknown_args):
        _read_omni(inv, found.program, version)
    if found.entry == "dynamo.vllm":
        # Dynamo's parser takes its own options before vLLM's sees the rest, and they change from release to
        # release: an option vLLM does not know may be one of them
        for flag, where in inv.unknown_args.items():
            line = f"line {where.line}: " if where is not None and where.line else ""
            inv.unchecked.append(f"{line}{flag} is not a vLLM engine argument: it may be one of Dynamo's own "
                                 "(its worker reads those first), which vramlint does not check")
        inv.unknown_args = {}
    if model_from_hf is not None:
        inv.model, inv.model_location = model_from_hf
        inv.entrypoint = "huggingfaceserver"
        # huggingfaceserver reads its command line with parse_known_args: an argument vLLM does not know is
        # dropped, not refused, so the server starts without it.
        for flag, where in inv.unknown_args.items():
            line = f"line {where.line}: " if where is not None and where.line else ""
            inv.unchecked.append(f"{line}{flag} is not an argument of vLLM or of KServe's Hugging Face server, "
                                 "which ignores arguments it does not know (parse_known_args): it has no effect")
        inv.unknown_args = {}
    # parts of a shell script that are not read (here-documents); a budget exceeded is an input problem
    budget = over_budget + [p for p in found.problems if "(expansion budget)" in p]
    inv.unchecked[:0] = [p for p in found.problems if "(expansion budget)" not in p]
    inv.problems.extend(budget)
    inv.env = dict(found.env)
    inv.env_locations = {k: t.location for k, t in found.env_tokens.items() if t.location is not None}
    inv.location = found.start
    inv.remote = found.remote
    inv.image = found.image
    if found.entry == "implied" and not (is_own_vllm_image(image) or api_server_image):
        inv.model_default = False  # another image's entrypoint (a launcher) may take the model from elsewhere
    if (found.entry == "implied" or api_server_image) and not found.args:
        inv.unchecked.append("the container sets no command or args (a chart or an operator sets them elsewhere, "
                             "or vLLM serves its default model)")
    return inv


# `vllm serve ... --omni` hands the whole command line to vLLM-Omni from vLLM 0.20.0 on (vllm/entrypoints/cli/
# main.py: "--omni" in sys.argv -> vllm_omni.entrypoints.cli.main.main, or exit when vllm-omni is not installed);
# 0.19 and older have no such option. vLLM-Omni's `vllm-omni serve` (its console script, the same main) runs
# vLLM's own `vllm serve` without --omni, and with it its serve command, whose parser is vLLM's serve parser
# (make_arg_parser: the model positional, vLLM's engine options) plus its OmniConfig group.
OMNI_FIRST_VERSION = (0, 20, 0)


class WrittenFile:
    """A file a script writes with a here-document (`cat > /tmp/cfg.yaml <<EOF`): its text as the shell writes
    it, where that text starts, and the line of the command that writes it."""

    __slots__ = ("text", "start", "line", "why")

    def __init__(self, text: str | None, start: Location | None, line: int | None, why: str | None = None):
        self.text = text  # None: not known (``why`` says why)
        self.start = start
        self.line = line
        self.why = why


def _read_omni(inv: VllmInvocation, program: str, version: str | None) -> None:
    """A `vllm serve --omni` / `vllm-omni serve` command line: --omni is vLLM-Omni's (args["omni"]), and an option
    vLLM does not know may be one of vLLM-Omni's own, which vramlint does not check."""
    where = inv.unknown_args.get("--omni")
    if where is None:
        return  # `vllm-omni serve` without --omni: vLLM's serve, read as such
    parsed = _version_tuple(version) if version else None
    if program == "vllm" and parsed is not None and parsed < OMNI_FIRST_VERSION:
        return  # unknown to that vLLM: it stops with "unrecognized arguments", as VRL009 says
    del inv.unknown_args["--omni"]
    inv.args["omni"] = True
    inv.arg_locations["omni"] = where
    for flag, at in inv.unknown_args.items():
        line = f"line {at.line}: " if at is not None and at.line else ""
        inv.unchecked.append(f"{line}{flag} is not a vLLM engine argument: it may be one of vLLM-Omni's own "
                             "(its serve command adds them to vLLM's), which vramlint does not check")
    inv.unknown_args = {}
    inv.startup_errors = [e for e in inv.startup_errors if e.get("arg") != "--omni"]


def _version_tuple(version: str) -> tuple[int, ...] | None:
    parts = re.findall(r"\d+", version)[:3]
    return tuple(int(p) for p in parts) if parts else None


# KServe's Hugging Face server (`python -m huggingfaceserver`, python/huggingfaceserver/__main__.py): its own
# flags, besides vLLM's which it adds with vLLM's make_arg_parser. Value-taking ones map to True.
_HF_SERVER_FLAGS = {"--model_dir": True, "--model_id": True, "--model_revision": True, "--tokenizer_revision": True,
                    "--model_name": True, "--backend": True, "--task": True, "--max_length": True,
                    "--tensor_input_names": True, "--max_log_len": True, "--http_port": True, "--grpc_port": True,
                    "--workers": True, "--predictor_host": True, "--predictor_protocol": True,
                    "--disable_lower_case": False, "--disable_special_tokens": False, "--return_token_type_ids": False,
                    "--return_probabilities": False, "--disable_log_requests": False, "--enable_docs_url": False}
MODEL_MOUNT = "/mnt/models"  # KServe's storage mount, the server's default --model_dir


def _huggingfaceserver_args(args: list[Token]) -> tuple[list[Token], tuple[str | None, Location | None]] | None:
    """(the vLLM arguments, the model) of a huggingfaceserver command line; None when it does not use vLLM.

    The server loads the model with vLLM when `--backend` is `vllm`, or `auto` (the default) and vLLM supports
    the model's architecture; `--backend=huggingface` / `triton` are not vLLM. The model is `--model_id`, else
    `--model_dir` (default /mnt/models). Flags of its own are taken out; `--max_length` is `--max_model_len`."""
    out: list[Token] = []
    model_id = model_dir = None
    unknown_word = False
    i = 0
    while i < len(args):
        tok = args[i]
        text = tok.text
        if text is None:
            unknown_word = True
            out.append(tok)
            i += 1
            continue
        flag, eq, attached = text.partition("=")
        key = flag.replace("-", "_") if flag.startswith("--") else flag
        key = "--" + key[2:] if key.startswith("__") else key
        if key not in _HF_SERVER_FLAGS:
            out.append(tok)
            i += 1
            continue
        value_tok = tok if eq else (args[i + 1] if _HF_SERVER_FLAGS[key] and i + 1 < len(args) else None)
        value = attached if eq else (value_tok.text if value_tok is not None else None)
        i += 1 if eq or not _HF_SERVER_FLAGS[key] else 2
        if key == "--backend" and value in ("huggingface", "hf", "triton"):
            return None
        if key == "--max_length":
            out += [Token("--max-model-len", tok.location), Token(value, tok.location)]
        elif key == "--model_id":
            model_id = (value, value_tok.location if value_tok is not None else tok.location)
        elif key == "--model_dir":
            model_dir = (value, value_tok.location if value_tok is not None else tok.location)
    model = model_id or model_dir or ((None, None) if unknown_word else (MODEL_MOUNT, None))
    return out, model


def _marked_unknown(t: Token) -> Token:
    if has_unknown_mark(t.text) and not _is_script_text(t.text) and not _option_with_unknown_value(t.text):
        return Token(None, t.location, t.block, t.indent, t.lines, t.op, t.quoted)
    return t


def _option_with_unknown_value(text: str) -> bool:
    # `--max-model-len={{ .Values.x }}`: the option is set, only its value is unknown (the parser says so)
    flag, eq, _ = text.partition("=")
    return bool(eq) and flag.startswith("-") and not has_unknown_mark(flag)


def _assignment_with_unknown_value(text: str) -> bool:
    # `ADDR="http://$HOST:8265" ray job submit ...`: a variable is set for the command, only its value is unknown;
    # the word stays an assignment so that the command after it is still read
    m = _ASSIGNMENT_NAME.match(text)
    return m is not None and not has_unknown_mark(m.group(0))


def _unknown_but_script(words: list[tuple[str | None, int, int, bool]]) -> list[tuple[str | None, int, int, bool]]:
    """A command's words (lexed keeping unknown marks) with each word that holds an unknown value made None, as
    the lexer makes it, but the script of a shell's `-c` (`CMD="vllm serve $M --tensor-parallel-size $1"; bash -c
    "$CMD"`): the shell it starts splits that text again, and only the words holding an unknown value are
    unknown there, so the command it runs is still read."""
    texts = [w[0] for w in words]
    script = _shell_script_index(texts)
    lines = _tmux_shell_lines(texts) if "tmux" in " ".join(t for t in texts[:4] if t) else set()
    if "ssh" in " ".join(t for t in texts[:4] if t):
        lines = {*lines, *_ssh_command_indexes(texts)}
    return [(None if v is not None and k != script and k not in lines and has_unknown_mark(v) and not _option_with_unknown_value(v)
             and not _assignment_with_unknown_value(v) else v, a, b, o) for k, (v, a, b, o) in enumerate(words)]


# `docker container exec` options (Docker's CLI reference): those that take a value, and the flags; podman's exec
# adds --preserve-fd(s) N and -l/--latest (the latest container, named by no word); nerdctl's are Docker's.
_EXEC_VALUE_OPTIONS = frozenset(("--detach-keys", "--env", "--env-file", "--user", "--workdir", "--preserve-fds",
                                 "--preserve-fd"))
_EXEC_VALUE_SHORT = frozenset("euw")
_EXEC_FLAGS = frozenset(("--detach", "--interactive", "--tty", "--privileged", "--latest", "--help"))
_EXEC_SHORT_FLAGS = frozenset("ditlh")
CONTAINER_CLIS = frozenset(("docker", "podman", "nerdctl"))


def container_exec_options(texts: list[str | None]) -> tuple[list[tuple[str, int]], int | None, int] | None:
    """Of the words after `docker exec` (`[OPTIONS] CONTAINER COMMAND...`): the `-e/--env` values, each with the
    index of the word holding it; the index of the container's word (None for podman's --latest, which names none);
    where COMMAND starts. None when an option is not one of exec's or is known only at run time (where the
    container's name ends is then not known)."""
    values: list[tuple[str, int]] = []
    latest = False
    i = 0
    while i < len(texts):
        text = texts[i]
        if text is None:
            return None
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        value, taken, option = None, 1, text
        if text.startswith("--"):
            option = text.split("=", 1)[0]
            if option in _EXEC_VALUE_OPTIONS:
                if "=" in text:
                    value = text.split("=", 1)[1]
                else:
                    value, taken = (texts[i + 1] if i + 1 < len(texts) else None), 2
            elif option not in _EXEC_FLAGS or "=" in text:
                return None
            latest = latest or option == "--latest"
        else:
            for j, letter in enumerate(text[1:], start=1):
                if letter in _EXEC_VALUE_SHORT:
                    option = "-" + letter
                    if j + 1 < len(text):
                        value = text[j + 1:]
                    else:
                        value, taken = (texts[i + 1] if i + 1 < len(texts) else None), 2
                    break
                if letter not in _EXEC_SHORT_FLAGS:
                    return None
                latest = latest or letter == "l"
        if option in ("--env", "-e") and value is not None:
            values.append((value, i + taken - 1))
        i += taken
    if latest:
        return values, None, i
    if i >= len(texts) or texts[i] is None:
        return None
    return values, i, i + 1


def _container_exec_command(texts: list[str | None], i: int) -> int | None:
    """Where the command of `docker|podman|nerdctl [container] exec [OPTIONS] CONTAINER COMMAND...` at ``i``
    starts, or None when ``texts[i]`` starts no such command or its options cannot be read."""
    if i + 1 >= len(texts) or texts[i] is None or _basename(texts[i]) not in CONTAINER_CLIS:
        return None
    j = i + 1
    if texts[j] == "container":
        j += 1
    if j >= len(texts) or texts[j] != "exec":
        return None
    read = container_exec_options(texts[j + 1:])
    return None if read is None else j + 1 + read[2]


def _shell_script_index(texts: list[str | None]) -> int | None:
    """The index of the script word of `[wrappers] sh [options] -c SCRIPT ...`, or None (as `_search_shell` reads
    a shell's options); also run in a container by `docker exec [OPTIONS] CONTAINER sh -c SCRIPT`."""
    i = 0
    while i < len(texts) and texts[i] is not None and (
            _basename(texts[i]) in _WRAPPERS or _ASSIGNMENT_NAME.match(texts[i])):
        i += 1
    exec_start = _container_exec_command(texts, i)
    if exec_start is not None:
        i = exec_start
    if i >= len(texts) or texts[i] is None or _basename(texts[i]) not in _SHELLS:
        return None
    j, has_c = i + 1, False
    while j < len(texts):
        t = texts[j]
        if t is None or has_unknown_mark(t):
            break
        if t == "--":
            j += 1
            break
        if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            j += 2
            continue
        if t.startswith("--"):
            j += 1
            continue
        if t[:1] in ("-", "+") and len(t) > 1:
            has_c = has_c or (t[0] == "-" and "c" in t[1:])
            j += 1
            continue
        break
    return j if has_c and j < len(texts) else None


def _is_script_text(text: str) -> bool:
    # a `sh -c` script keeps its unknown marks: they make only the words holding them unknown
    return " " in text or "\n" in text or "\t" in text


def _looks_like_command(word: str) -> bool:
    """A first word that is a program rather than a vLLM argument or model id (for `args`-only containers)."""
    b = _basename(word)
    # `ray` is Ray's CLI (`ray start --head`, `ray job submit -- vllm serve ...`), which images built for
    # multi-node vLLM run in their head and worker containers: a program, never a model id
    if b in _SHELLS or b in _WRAPPERS or b in _LOOKALIKE_EXES or b in (
            "vllm", "vllm-omni", "env", "uv", "conda", "true", "opentelemetry-instrument", "ray", "torchrun", "mpirun",
            "mpiexec", "ssh", "nsys", "supervisord"):
        return True
    if _is_python(word) or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
        return True
    # an absolute path to a script (`/entrypoint.sh`, `/usr/bin/python3`) is a program; `org/model` is not; nor is
    # a script named relative to the working directory (`./launch_server.sh`, a Dockerfile's `CMD`): a model
    # directory is no shell script
    if word.startswith(("./", "../")) and word.endswith(".sh"):
        return True
    return word.startswith("/") and not word.startswith("/models") and (word.endswith(".sh") or "/bin/" in word)


def _simple_commands(tokens: list[Token]) -> list[list[Token]]:
    cmds: list[list[Token]] = [[]]
    for t in tokens:
        if t.op:
            if cmds[-1]:
                cmds.append([])
        else:
            cmds[-1].append(t)
    return [c for c in cmds if c]


def _too_deep(argv: list[Token]) -> _Found | None:
    """Past the nesting vramlint reads: a shell's `-c` script that names vLLM is a server whose command is not
    read, said on the script's line (hostile22/23: only a note on the image, or nothing); anything else, None."""
    shell = (argv[0].text or "").rsplit("/", 1)[-1]
    if shell not in ("sh", "bash", "dash", "ash", "zsh", "ksh"):
        return None
    script = next((argv[k + 1] for k in range(1, len(argv) - 1) if (argv[k].text or "").startswith("-") and
                   "c" in (argv[k].text or "")[1:] and not (argv[k].text or "").startswith("--")), None)
    if script is None or not script.text or not _NAMES_VLLM.search(script.text):
        return None
    return _Found("shell-deep", [], {}, {}, script.location, [
        "the vLLM command here runs inside more than 4 nested shells (`sh -c` in `sh -c` ...), deeper than vramlint "
        "reads: its command line is not checked"])


def _search_argv(argv: list[Token], env: dict[str, str | None], depth: int) -> _Found | None:
    """Search one simple command (a list of words) for a vLLM server start."""
    if depth > 4 or not argv:
        return _too_deep(argv) if argv else None
    i = 0
    local_env: dict[str, str | None] = {}
    env_tokens: dict[str, Token] = {}
    container_image: str | None = None
    while i < len(argv):
        w = argv[i].text
        if w is None:
            if _names_vllm_module(argv[i + 1:]):
                # the interpreter's path is known only at run time (`"$VENV/bin/python" -m vllm.entrypoints...`):
                # `-m` and vLLM's server module say what runs, whichever python it is
                break
            return None
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", w, re.S)
        if m:
            local_env[m.group(1)] = None if has_unknown_mark(m.group(2)) else m.group(2)
            env_tokens[m.group(1)] = argv[i]
            i += 1
            continue
        b = _basename(w)
        if b in _SHELL_KEYWORDS:
            i += 1
            continue
        if b in _GETOPT_WRAPPERS:
            started = _getopt_command_start(argv, i, b)
            if started is None:
                return None
            if b == "srun":
                container_image = _pyxis_image(argv[i + 1:started[1]]) or container_image
            argv, i = started
            continue
        if b in _WRAPPERS:
            i += 1
            continue
        if b == "ssh":
            return _search_ssh(argv, i, env, depth)
        if b == "tmux":
            return _search_tmux(argv, i, depth)
        if b in ("singularity", "apptainer") and i + 1 < len(argv) and argv[i + 1].text in ("exec", "run"):
            started = _apptainer_command_start(argv, i + 2)
            if started is None:
                return None
            container_image, i = started
            continue
        if b == "torchrun" or (_is_python(b) and [t.text for t in argv[i + 1:i + 3]] == ["-m", "torch.distributed.run"]):
            started = _torchrun_command(argv, i + (1 if b == "torchrun" else 3))
            if started is None:
                return None
            argv, i = started
            continue
        if b in ("mpirun", "mpiexec", "orterun", "prterun"):
            j = _mpirun_command_start(argv, i + 1)
            if j is None:
                return None
            i = j
            continue
        if b == "timeout":
            i = timeout_command_start(argv, i)
            if i is None:
                return None
            continue
        if b == "nsys":
            i = nsys_command_start(argv, i)
            if i is None:
                return None
            continue
        if b == "opentelemetry-instrument":
            # OpenTelemetry's launcher (opentelemetry-instrumentation, auto_instrumentation.run): every option it
            # has but --help and --version is one OTEL_* variable and takes a value; then it execs the command
            # with the words after it (argparse REMAINDER)
            i += 1
            while i < len(argv) and argv[i].text is not None and argv[i].text.startswith("-"):
                if argv[i].text == "--":
                    i += 1  # argparse's end of options: the command is the next word ('--' is dropped)
                    break
                i += 1 if "=" in argv[i].text or argv[i].text in ("-h", "--help", "--version") else 2
            continue
        if b == "ray" and [t.text for t in argv[i + 1 : i + 3]] == ["job", "submit"]:
            # Ray's CLI runs the words after `--` as the job's entrypoint on the cluster (a shell command; the
            # submitting shell has already expanded them). Without `--` an option's value cannot be told from
            # the entrypoint's first word, so nothing is read.
            end = next((k for k in range(i + 3, len(argv)) if argv[k].text == "--"), None)
            if end is None:
                return None
            i = end + 1
            continue
        if b in ("uv", "conda", "micromamba", "poetry", "pipenv") and i + 1 < len(argv) and argv[i + 1].text == "run":
            i += 2
            while i < len(argv) and argv[i].text is not None and argv[i].text.startswith("-"):
                i += 2 if argv[i].text in ("-n", "--name", "-p", "--prefix", "--with") else 1
            continue
        if b == "hatch":
            started = _hatch_run_command(argv, i)
            if started is None:
                return None
            argv, i = started
            continue
        break
    found = _start_at(argv[i:], env, local_env, env_tokens, depth)
    if found is not None and container_image is not None and found.image is None:
        found.image = container_image
    return found


def _hatch_run_command(argv: list[Any], i: int) -> tuple[list[Any], int] | None:
    """Where the command of `hatch [-e ENV] run [--] [+VAR|-VAR ...] [ENV:]COMMAND ARGS` starts (hatch's
    cli/run: click drops `--`, leading `+`/`-` words select matrix variables, and the first word's text up to its
    last colon names the environment, not the program). None for other hatch commands and unknown words."""
    j = i + 1
    while j < len(argv) and argv[j].text in ("-e", "--env"):
        j += 2
    if j >= len(argv) or argv[j].text != "run":
        return None
    j += 1
    if j < len(argv) and argv[j].text == "--":
        j += 1
    while j < len(argv) and argv[j].text is not None and argv[j].text[:1] in ("+", "-"):
        j += 1
    if j >= len(argv) or argv[j].text is None:
        return None
    first = argv[j]
    if ":" in first.text:
        first = replace(first, text=first.text.rpartition(":")[2])
    return argv[:j] + [first] + list(argv[j + 1:]), j


# Singularity / Apptainer `exec` and `run` options that take a value (apptainer's cmd/internal/cli action_flags.go);
# the others (`--nv`, `--rocm`, `--cleanenv`, `--contain`, `--writable`, `--fakeroot`, ...) take none. `--nv` binds
# the host's NVIDIA driver and devices into the container: all of the host's GPUs, no count.
_APPTAINER_VALUE_OPTIONS = frozenset((
    "-B", "--bind", "--mount", "-H", "--home", "-o", "--overlay", "-S", "--scratch", "-W", "--workdir", "--pwd",
    "--cwd", "--env", "--env-file", "--app", "--security", "--network", "--network-args", "--hostname", "--dns",
    "--apply-cgroups", "--cpus", "--cpu-shares", "--cpuset-cpus", "--cpuset-mems", "--memory",
    "--memory-reservation", "--memory-swap", "--oom-kill-disable", "--pids-limit", "--blkio-weight", "--fusemount",
    "--no-mount", "--add-caps", "--drop-caps", "--config", "--passphrase", "--pem-path", "--docker-login",
    "--authfile", "--keep-privs"))


def _apptainer_command_start(argv: list[Any], j: int) -> tuple[str | None, int] | None:
    """(the Docker image a `singularity|apptainer exec|run [options] IMAGE COMMAND...` runs when its URI names one,
    where COMMAND starts): `exec` runs the command in the image, `run` hands the words to its runscript (for an
    image built from Docker's, its ENTRYPOINT), read here as a command when they are one. None when an option or
    the image is not known."""
    while j < len(argv):
        text = argv[j].text
        if text is None:
            return None
        if not text.startswith("-"):
            break
        j += 1 if "=" in text or text not in _APPTAINER_VALUE_OPTIONS else 2
    if j >= len(argv):
        return None
    uri = argv[j].text or ""
    image = None
    if uri.startswith("docker://") and not has_unknown_mark(uri):
        image = uri[len("docker://"):]
    return image, j + 1


def _pyxis_image(options: list[Any]) -> str | None:
    """The image of `srun --container-image IMAGE` (NVIDIA's Pyxis plugin: the step runs in that container);
    Pyxis writes a registry as `REGISTRY#IMAGE`, and a path (`/images/vllm.sqsh`) is a squashfs file, no tag."""
    for k, t in enumerate(options):
        text = t.text or ""
        value = text.split("=", 1)[1] if text.startswith("--container-image=") else \
            (options[k + 1].text if text == "--container-image" and k + 1 < len(options) else None)
        if value and not value.startswith(("/", ".")) and not has_unknown_mark(value):
            return value.replace("#", "/", 1)
    return None


def _start_at(rest: list[Token], env: dict[str, str | None], local_env: dict[str, str | None],
              env_tokens: dict[str, Token], depth: int) -> _Found | None:
    """The server start at the first word of ``rest`` (past the wrappers and assignments)."""
    if not rest:
        return None
    w = rest[0].text or ""
    b = _basename(w)
    if b in _SHELLS:
        # merged only here: a script's own assignments make `env` large, and most commands are not shells
        return _search_shell(rest, {**env, **local_env} if local_env else env, depth)
    if b in ("vllm", "vllm-omni"):
        if len(rest) > 1 and rest[1].text == "serve":
            return _Found("serve", rest[2:], local_env, env_tokens, rest[0].location, [], program=b)
        return None
    if _is_python(w) or (rest[0].text is None and _names_vllm_module(rest[1:])):
        j = 1
        while j < len(rest) and rest[j].text is not None and rest[j].text.startswith("-") and rest[j].text != "-m":
            j += 1
        if j + 1 < len(rest) and rest[j].text == "-m":
            mod = rest[j + 1].text or ""
            if mod in _VLLM_MODULES:
                return _Found(_VLLM_MODULES[mod], rest[j + 2 :], local_env, env_tokens, rest[0].location, [])
            if mod in ("vllm.entrypoints.cli.main", "vllm") and j + 2 < len(rest) and rest[j + 2].text == "serve":
                return _Found("serve", rest[j + 3 :], local_env, env_tokens, rest[0].location, [])
            if mod == "huggingfaceserver":
                return _Found("huggingfaceserver", rest[j + 2 :], local_env, env_tokens, rest[0].location, [])
        return None
    return None


def _names_vllm_module(words: list[Token]) -> bool:
    """``-m`` and one of vLLM's server modules: the words python takes to run vLLM's server."""
    if len(words) < 2 or words[0].text != "-m":
        return False
    mod = words[1].text
    return mod in _VLLM_MODULES or (mod in ("vllm.entrypoints.cli.main", "vllm") and len(words) > 2
                                    and words[2].text == "serve")


def _search_shell(argv: list[Token], env: dict[str, str | None], depth: int) -> _Found | None:
    """`sh -c SCRIPT [name args...]`: split the script and look at each of its simple commands."""
    if depth > 4:
        return _too_deep(argv)  # `eval eval eval ...` or shells in shells: no real start command nests deeper
    j = 1
    has_c = False
    while j < len(argv):
        t = argv[j].text
        if t is None:
            return None
        if t == "--":  # end of options: the script is the next word (`bash -lc -- "..."`)
            j += 1
            break
        if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            j += 2  # options taking a value (`bash -o pipefail -c ...`)
            continue
        if t.startswith("--"):
            j += 1  # --login, --norc, ...
            continue
        if (t.startswith("-") or t.startswith("+")) and len(t) > 1:
            has_c = has_c or (t[0] == "-" and "c" in t[1:])
            j += 1
            continue
        break
    if not has_c:
        return None  # `bash start.sh`: a script file we cannot see
    script: Token | None = argv[j] if j < len(argv) else None
    if script is None:
        return None
    if script.text is None:
        return None
    quote_at = unterminated_quote(script.text)
    if quote_at is not None:
        # bash and dash parse and run a script one complete command at a time (bash's reader_loop /
        # parse_and_execute, dash's cmdloop / evalstring): the lines before the open quote run, and the shell stops
        # with its syntax error where the quote opens. A vLLM command before that line starts; one inside or after
        # the quote never does; a script that names vLLM only before the quote, or nowhere, has no error of vLLM's
        cut = script.text.rfind("\n", 0, quote_at)
        if cut > 0:
            found = _search_shell([*argv[:j], replace(script, text=script.text[:cut]), *argv[j + 1:]], env, depth)
            if found is not None:
                return found
        if not _NAMES_VLLM.search(script.text, cut + 1):
            return None
        pos = _Positions(script.text, script.location, (">" if script.block == ">" else "|") if script.block
                         else None, script.indent, script.lines, script.quoted)
        quote = script.text[quote_at]
        return _Found("shell-error", [], {}, {}, pos.at(quote_at, quote_at + 1),
                      [f"{_basename(argv[0].text or 'sh')}: Syntax error: Unterminated quoted string (the {quote} "
                       "here is never closed), so the shell stops there and runs nothing from that line on"])
    problems: list[str] = []
    params = argv[j + 2:]
    walk_env = env
    if params and len(params) <= MAX_ARRAY_ELEMENTS and not _SPREADS_PARAMS.search(script.text):
        # `sh -c 'vllm serve "$1"' sh MODEL`: the words after the script's name are its $1, $2 ...; a script
        # that spreads them (`"$@"`, `$*`) is left as it was read: those words are read with their own lines
        # (a wrapper that runs them, below), which the script's `"$@"` would take the place of
        walk_env = {**env, POSITIONAL: _Array(t.text for t in params)}
    # Variables assigned in the script itself (`MODEL=x; vllm serve $MODEL`) are known to later commands.
    found, assigned = _search_script_with_assignments(script, walk_env, depth, problems)
    if found is not None:
        return found
    if assigned != walk_env:  # else the script was read with just these variables already
        tokens = split_shell(script.text, script.location, block=bool(script.block), env=env,
                             indent=script.indent, lines=script.lines, folded=script.block == ">",
                             quoted=script.quoted, problems=problems)
        for cmd in _simple_commands(tokens):
            found = _search_argv(cmd, env, depth + 1)
            if found is not None:
                found.problems[:0] = problems
                return found
    if re.search(r"(^|[\s;&|(])eval\s", script.text):
        found = _search_eval(script, env, depth, problems)
        if found is not None:
            return found
    # `sh -c SCRIPT NAME ARGS...`: ARGS are the script's positional parameters ($1 ...). A wrapper that runs them
    # as a command (`exec "$@"`, or `A=("$@")` ... `exec "${A[@]}"`: a launcher that prepares something and then
    # starts what it was given) starts the command line its caller wrote, with that line's own positions.
    # What reading the wrapper's own commands met (a here-document it writes) is not about that command line.
    if params and runs_its_arguments(script.text):
        return _search_argv(params, env, depth + 1)
    return None


_NAMES_VLLM = re.compile(r"vllm", re.IGNORECASE)
_SPREADS_PARAMS = re.compile(r"\$(?:\{[#!]?)?[@*0]")


# A simple command that runs the script's positional parameters as a command: `"$@"` / `"${@}"` (after exec or
# another wrapper word), or an array copied from them (`ARGS=("$@")`, later `"${ARGS[@]}"`).
_RUN_PARAMS = re.compile(r'(?m)^[ \t]*(?:(?:exec|command|nohup|time)[ \t]+)*"\$(?:@|\{@\})"[ \t]*(?:[;&#]|$)')
_PARAMS_ARRAY = re.compile(r'(?m)^[ \t]*(?:(?:local|declare|readonly)(?:[ \t]+-a)?[ \t]+)?([A-Za-z_]\w*)=\([ \t]*"\$(?:@|\{@\})"[ \t]*\)')


def runs_its_arguments(text: str | None) -> bool:
    """Whether a script runs its positional parameters as a command (see ``_RUN_PARAMS``): a wrapper whose
    arguments are the command line it starts."""
    if not text or "$" not in text or "@" not in text:
        return False
    if _RUN_PARAMS.search(text):
        return True
    for name in set(_PARAMS_ARRAY.findall(text)):
        if re.search(r'(?m)^[ \t]*(?:(?:exec|command|nohup|time)[ \t]+)*"\$\{' + re.escape(name)
                     + r'\[@\]\}"[ \t]*(?:[;&#]|$)', text):
            return True
    return False


_QUOTE_SCAN = re.compile(r"[\\'\"#$()`<]")
_HEREDOC_OPERATOR = re.compile(r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\"|\\?([^\s;&|<>()'\"]+))")
_DOUBLE_QUOTED_SCAN = re.compile(r'[\\"$`]')


class _Unsure(Exception):
    """The scan met shell syntax it does not follow to the end (a `case` pattern's `)` inside `$(...)`, an
    unclosed `$(`): whether a quote is left open is not known, so none is reported."""


def unterminated_quote(text: str) -> int | None:
    """Index of a quote the shell never finds the end of (it then refuses the whole script), or None.

    Read as the POSIX shell tokenizer reads quotes: backslash escapes outside single quotes, `#` comments at
    the start of a word, and a command substitution `$(...)` (inside double quotes too) read as a script of its
    own, as the shell reads it: `"$(awk '/"x"/')"` holds balanced quotes. Backquotes are skipped to their
    closing backquote. Where the scan is not sure (a `)` it cannot place), nothing is reported: an error here
    says the shell runs none of the script, so it must be certain."""
    try:
        return _scan_quotes(text, 0, nested=False)[1]
    except _Unsure:
        return None


def _scan_quotes(text: str, i: int, nested: bool) -> tuple[int, int | None]:
    """Scan from ``i`` to the end of the text (or, when ``nested``, past the `)` closing a `$(`): (where the
    scan stopped, index of an unclosed quote or None)."""
    n = len(text)
    word_start = True
    depth = 0  # `(` opened inside this level (subshells, `$((`): their `)` is not the one closing `$(`
    pending: list[tuple[str, bool]] = []  # here-documents whose bodies start after this line
    while i < n:
        # the characters up to the next special one only decide whether that one starts a word
        m = _QUOTE_SCAN.search(text, i)
        if pending:
            newline = text.find("\n", i)
            if newline >= 0 and (m is None or newline < m.start()):
                i = _heredoc_bodies(text, newline + 1, pending)
                word_start = True
                continue
        if m is None:
            if nested:
                raise _Unsure
            return n, None
        if m.start() > i:
            word_start = text[m.start() - 1] in " \t\n;&|()"
            i = m.start()
        c = text[i]
        if c == "\\":
            i += 2
            word_start = False
        elif c == "#" and word_start:
            end = text.find("\n", i)
            if end < 0:
                if nested:
                    raise _Unsure
                return n, None
            i = end
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                return n, i
            i = end + 1
            word_start = False
        elif c == '"':
            i, bad = _scan_double_quoted(text, i)
            if bad is not None:
                return n, bad
            word_start = False
        elif c == "`":
            i = _skip_backquoted(text, i)
            word_start = False
        elif c == "$" and text.startswith("$(", i):
            i, bad = _scan_quotes(text, i + 2, nested=True)
            if bad is not None:
                return n, bad
            word_start = False
        elif c == "(":
            depth += 1
            i += 1
            word_start = True
        elif c == ")":
            if nested and depth == 0:
                return i + 1, None
            if depth == 0:
                raise _Unsure  # a `case` pattern or a stray `)`: the shell's reading is not followed here
            depth -= 1
            i += 1
            word_start = True
        elif c == "<":
            i = _skip_heredoc(text, i, pending)
            word_start = True
        else:  # a `$` not opening `$(`
            i += 1
            word_start = False
    if nested:
        raise _Unsure
    return n, None


def _skip_heredoc(text: str, i: int, pending: list[tuple[str, bool]]) -> int:
    """At a `<`: a here-document operator (`<<EOF`, `<<-'EOF'`) queues its delimiter, whose body starts after
    the line ends; a `<<<` here-string or a plain redirection is passed over."""
    if text.startswith("<<<", i):
        return i + 3
    m = _HEREDOC_OPERATOR.match(text, i)
    if m is None:
        return i + 1
    pending.append((next(g for g in m.groups()[1:] if g is not None), m.group(1) == "-"))
    return m.end()


def _heredoc_bodies(text: str, i: int, pending: list[tuple[str, bool]]) -> int:
    """From the start of the line after a here-document operator: past the bodies of the queued here-documents
    (each up to a line that is its delimiter; `<<-` strips leading tabs), which the shell does not tokenize. A
    delimiter never found ends the body at the end of the text, as the shell does (with a warning)."""
    while pending:
        word, strip_tabs = pending.pop(0)
        while i < len(text):
            end = text.find("\n", i)
            line = text[i:] if end < 0 else text[i:end]
            i = len(text) if end < 0 else end + 1
            if (line.lstrip("\t") if strip_tabs else line) == word:
                break
    return i


def _scan_double_quoted(text: str, i: int) -> tuple[int, int | None]:
    """From the `"` at ``i``: (index past its closing `"`, None), or (end, i) when it is never closed."""
    n = len(text)
    j = i + 1
    while True:
        m = _DOUBLE_QUOTED_SCAN.search(text, j)
        if m is None:
            return n, i
        j = m.start()
        c = text[j]
        if c == "\\":
            j += 2
        elif c == '"':
            return j + 1, None
        elif c == "`":
            j = _skip_backquoted(text, j)
        elif text.startswith("$(", j):
            j, bad = _scan_quotes(text, j + 2, nested=True)
            if bad is not None:
                return n, bad
        else:
            j += 1


def _skip_backquoted(text: str, i: int) -> int:
    """Past the backquote closing the one at ``i`` (backslash escapes skipped)."""
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == "`":
            return j + 1
        else:
            j += 1
    raise _Unsure  # an unclosed backquote: the shell refuses it too, but that is not the quote said here


def _search_eval(script: Token, env: dict[str, str | None], depth: int, problems: list[str]) -> _Found | None:
    """`eval "exec vllm serve ... $ARGS"`: eval joins its words and the shell reads them again, so the words
    are taken as written (variables unexpanded, template markers kept) and searched as a script of their own,
    with the variables the script assigned. Positions inside it are those of the `eval` word."""
    text = script.text or ""
    # words, not Tokens (`split_shell`): only an `eval` word, and a command whose assignment is said, is placed
    raw, pos = _split_words(text, script.location, block=bool(script.block), env=None, indent=script.indent,
                            lines=script.lines, folded=script.block == ">", quoted=script.quoted, keep_marks=True)
    commands = [[word[0] for word in raw[first:end]] + [raw[first]] for first, end in _command_spans(raw)]
    assigned = _assignments(((cmd[:-1], cmd[-1]) for cmd in commands), env, problems,
                            lambda first: _where(Token(None, pos.at(first[1], first[2]))))
    for cmd in commands:
        first = cmd.pop()
        if cmd[0] != "eval" or len(cmd) < 2:
            continue
        nested = next((i for i, t in enumerate(cmd[1:]) if t != "eval"), len(cmd) - 1)
        if depth + 1 + nested > 4:
            # each `eval` of `eval eval ... X` is one more shell level, and _search_shell stops past level 4:
            # known now, without reading the whole text again at every level (linear, not one copy a level)
            continue
        eval_text = " ".join(t for t in cmd[1:] if t is not None)
        found = _search_shell([Token("sh", None), Token("-c", None), Token(eval_text, pos.at(first[1], first[2]))],
                              assigned, depth + 1)
        if found is not None:
            found.problems[:0] = problems
            return found
    return None


def _script_assignments(raw: list[Token], env: dict[str, str | None],
                        problems: list[str] | None = None) -> dict[str, str | None]:
    """``env`` with the plain variable assignments of a script (its words as written) applied in order.

    A value past MAX_EXPANDED_CHARS (a variable doubled again and again) is unknown from there on, and said once
    in ``problems``."""
    return _assignments((([t.text for t in cmd], cmd[0]) for cmd in _simple_commands(raw)), env, problems, _where)


def _assignments(commands: Iterable[tuple[list[str | None], Any]], env: dict[str, str | None],
                 problems: list[str] | None, where: Callable[[Any], str]) -> dict[str, str | None]:
    """`_script_assignments` on the words' texts of each simple command, each with what ``where`` places
    (``where(place)`` says where that command is; asked only for a problem)."""
    variables = ShellVariables(env, problems, where)
    depth = 0  # inside if/while/for/case: whether an assignment runs is not known
    for ws, place in commands:
        while ws and ws[0] in ("then", "do", "else", "elif", "{", "}", "fi", "done", "esac", "if", "while", "until",
                               "for", "case"):
            if ws[0] in ("if", "while", "until", "for", "case"):
                depth += 1
            elif ws[0] in ("fi", "done", "esac"):
                depth = max(0, depth - 1)
            ws = ws[1:]
        variables.assign_command(ws, place, conditional=bool(depth))
    return variables.values


def _appends_to(name: str, value: str) -> bool:
    """Whether an assignment's value as written starts with the variable's own value and a space (`"$CMD ..."`,
    `${CMD}" ..."`): it adds words to it."""
    m = re.match(r'"?\$(?:\{' + re.escape(name) + r'\}|' + re.escape(name) + r'(?![A-Za-z0-9_]))"?[ \t]', value)
    return m is not None


class ShellVariables:
    """The variables of a script as its plain assignments (`NAME=value`, `export NAME=value`) set them, one
    command at a time: ``values`` maps a name to its value, or to None when it is assigned but not known.

    A value past MAX_EXPANDED_CHARS (a variable doubled again and again) is unknown from there on, and said once
    in ``problems`` (``where(place)`` says where)."""

    __slots__ = ("values", "problems", "where", "total", "subshells", "cached")

    def __init__(self, env: dict[str, str | None], problems: list[str] | None, where: Callable[[Any], str]):
        self.values: dict[str, str | None] = dict(env)
        self.problems = problems
        self.where = where
        self.total = 0
        # per open `( ... )`, innermost last: what each name assigned in it was before (set?, value), put back
        # when it closes (a subshell's assignments do not reach its parent)
        self.subshells: list[dict[str, tuple[bool, str | None]]] = []
        self.cached = True  # whether splits of values go to the shared split cache (see ScriptWalk)

    def open_subshell(self) -> bool:
        """Whether a scope was opened (past MAX_SUBSHELL_DEPTH the innermost one takes the deeper ones in)."""
        if len(self.subshells) >= MAX_SUBSHELL_DEPTH:
            return False
        self.subshells.append({})
        return True

    def close_subshell(self) -> None:
        if not self.subshells:
            return
        values = self.values
        for name, (present, value) in self.subshells.pop().items():
            if present:
                values[name] = value
            else:
                values.pop(name, None)

    def assign_command(self, ws: list[str | None], place: Any, conditional: bool) -> list[str]:
        """Apply one simple command (its words, compound keywords taken off) when it only assigns; the names it
        assigns. ``conditional``: whether it runs is not known (a branch, a loop), so its values are not."""
        if ws and ws[0] in ("export", "declare", "readonly", "local"):
            ws = ws[1:]
        if not ws or not all(w is not None and _ASSIGNED.match(w) for w in ws):
            return []
        names = []
        for w in ws:
            name, _, val = w.partition("=")
            names.append(name)
            current = self.values.get(name)
            if conditional and current is not None and _appends_to(name, val):
                # `if ...; then CMD="$CMD --quantization $Q"; fi`: whether it runs or not, the value starts with
                # what it was; the words it may add are known only at run time (one unknown word stands for them)
                self.assign(name, current if current.endswith(UNKNOWN_MARK) else f"{current} {UNKNOWN_MARK}", place)
                continue
            self.assign(name, None if conditional else val, place, raw=True)
        return names

    def assign(self, name: str, val: str | None, place: Any, raw: bool = False) -> None:
        """``name`` set to ``val`` (None: unknown); ``raw``: ``val`` as written, its expansions still to make."""
        assigned = self.values
        if self.subshells:
            before = self.subshells[-1]
            if name not in before:
                before[name] = (name in assigned, assigned.get(name))
        if raw and val is not None and ("$" in val or has_unknown_mark(val)):
            # the value is split with the variables it names only: the split is cached by its variables,
            # and the whole table made each of 100,000 chained assignments cost its size (quadratic: 4.9 GB)
            # (`${!X}` names a variable through another's value: the whole table then)
            scope = assigned if "!" in val else {
                n: assigned[n] for n in dict.fromkeys(_NAME_WORD.findall(val)) if n in assigned}
            if POSITIONAL in assigned and scope is not assigned:
                scope[POSITIONAL] = assigned[POSITIONAL]
            if ARGS_DEFAULTED in assigned and scope is not assigned:
                scope[ARGS_DEFAULTED] = None
            if "[" in val and scope is not assigned:
                scope.update((array_key(n), assigned[array_key(n)]) for n in list(scope) + _NAME_WORD.findall(val)
                             if array_key(n) in assigned)
            toks = _lex(val, _Positions(val, None, None, None, None), scope, [], cached=self.cached)
            # a value of several words some of which are not known (`CMD="vllm serve $M --tensor-parallel-size
            # $1"`) keeps the known ones, each unknown word a marker: the command it holds is still read when it
            # is run (`bash -c "$CMD"`, `$CMD`), with those words unknown; a value wholly unknown is None
            val = None if toks and all(t.text is None for t in toks) else " ".join(
                UNKNOWN_MARK if t.text is None else t.text for t in toks)
            self.total += len(val or "")
            if val is not None and (len(val) > MAX_EXPANDED_CHARS or self.total > MAX_EXPANSION_TOTAL):
                problems = self.problems
                if problems is not None and not any("grows past" in p for p in problems):
                    problems.append(f"{self.where(place)}variable {name} grows past {MAX_EXPANDED_CHARS:,} "
                                    "characters when expanded (expansion budget): its value is not "
                                    "followed from here on")
                val = None
        assigned[name] = val


# JSON argument texts of this size or more, parsed once and shared (read only) by the servers that pass the same
# text: a 1 MB --kv-transfer-config one YAML anchor gives 300 services was parsed 300 times (287 MB of copies)
_JSON_SHARED_MIN = 4096
_JSON_SHARED: dict[str, Any] = {}


def _json_argument(text: str) -> Any:
    if len(text) < _JSON_SHARED_MIN:
        return json.loads(text)
    if text not in _JSON_SHARED:
        if len(_JSON_SHARED) >= 64:
            del _JSON_SHARED[next(iter(_JSON_SHARED))]
        _JSON_SHARED[text] = json.loads(text)
    return _JSON_SHARED[text]


_ASSIGNED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_NAME_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # every name a value may look up, arithmetic too


def _command_spans(words: list[tuple[str | None, int, int, bool]]) -> list[tuple[int, int]]:
    """(first, end) indexes of each simple command in split words (`_simple_commands` without the Tokens)."""
    spans = []
    first = 0
    for k, word in enumerate(words):
        if word[3]:
            if k > first:
                spans.append((first, k))
            first = k + 1
    if len(words) > first:
        spans.append((first, len(words)))
    return spans


def _may_start_a_server(texts: list[str | None]) -> bool:
    """Whether a simple command may be one `_search_argv` reads as a server start: every start runs vllm, a
    Python, a shell (each name holds one of these) or tmux (which runs a command in a pane), whatever wrappers
    come before."""
    joined = " ".join([t for t in texts if t])
    return "vllm" in joined or "python" in joined or "pypy" in joined or "sh" in joined or "tmux" in joined


def script_commands(script: Token, wanted: Callable[[list[str | None]], bool],
                    env: dict[str, str | None] | None = None) -> Iterator[list[Token]]:
    """The commands of a script that ``wanted`` picks (from their words), in the order the shell runs them,
    each with the variables it sees then (those the script assigned before it, over ``env``; see
    ``ScriptWalk``)."""
    at, _ = _script_positions(script.text or "", script.location, bool(script.block), indent=script.indent,
                              lines=script.lines, folded=script.block == ">", quoted=script.quoted, problems=[])
    for reached in ScriptWalk(at.text, env or {}, wanted, None, lambda first: "", []).run():
        if isinstance(reached, Command):
            yield [Token(value, at.at(start, end)) for value, start, end, _ in reached.words]


def script_commands_seen(script: Token, wanted: Callable[[list[str | None]], bool],
                         env: dict[str, str | None] | None = None
                         ) -> Iterator[tuple[list[Token], dict[str, str | None], list[str], int]]:
    """As `script_commands`, with what each command sees and how it is written: (its words, the variables then,
    its words as written, the offset of its first in the script's text, when that text is the one read: else
    -1). A command inside a word's substitution (`ID=$(sbatch job.sh)`) is not among them: its caller reads the
    words as written."""
    at, _ = _script_positions(script.text or "", script.location, bool(script.block), indent=script.indent,
                              lines=script.lines, folded=script.block == ">", quoted=script.quoted, problems=[])
    same = at.text == script.text
    for reached in ScriptWalk(at.text, env or {}, wanted, None, lambda first: "", []).run():
        if isinstance(reached, Command):
            written = [at.text[start:end] for _, start, end, _ in reached.words]
            first = reached.words[0][1] if same and reached.words else -1
            yield ([Token(value, at.at(start, end)) for value, start, end, _ in reached.words], reached.env,
                   written, first)


def _search_script_with_assignments(script: Token, env: dict[str, str | None], depth: int,
                                    problems: list[str]) -> tuple[_Found | None, dict[str, str | None]]:
    """The script read as the shell runs it (``ScriptWalk``): each command that may start the server with the
    variables it sees when it runs (those the script assigned before it, and ``env``); then the scripts its
    here-documents write (`cat > run.sh <<EOF`), as they are written. Returns what was found and the variables
    the script ends with."""
    read_problems: list[str] = []
    # Words, not Tokens: placing every word costs more than splitting; a word is placed only to say where a
    # variable grows too large, or when its command may start the server.
    at, _ = _script_positions(script.text or "", script.location, bool(script.block), indent=script.indent,
                              lines=script.lines, folded=script.block == ">", quoted=script.quoted,
                              problems=read_problems)
    walk = ScriptWalk(at.text, env, _may_start_a_server, problems,
                      lambda first: _where(Token(None, at.at(first[1], first[2]))), read_problems)
    bodies: list[Any] = []
    written: dict[str, WrittenFile] = {}
    for reached in walk.run():
        if isinstance(reached, HereDoc):
            bodies.append(reached)
            _note_written(at, reached, written)
            continue
        cmd = [Token(value, at.at(start, end)) for value, start, end, _ in reached.words]
        env = reached.env
        if any(key.endswith("]") for key in env):
            # arrays and a function's arguments are the script's own: a `bash -c` or a script it runs sees neither
            env = {key: value for key, value in env.items() if not key.endswith("]")}
        found = _search_argv(cmd, env, depth + 1)
        if found is not None:
            found.problems[:0] = problems + read_problems
            if written and found.written is None:
                found.written = dict(written)
            return found, walk.variables
    for body in bodies:
        found = _search_heredoc(script, at, body, depth)
        if found is not None:
            found.problems[:0] = problems + read_problems
            return found, walk.variables
    if walk.variables == env:
        problems.extend(read_problems)  # no second reading: what this one met is all there is to say
    return None, walk.variables


def _search_heredoc(script: Token, at: _Positions, body: Any, depth: int) -> _Found | None:
    """The server a here-document's body starts when the text it writes is run as a script (a launcher the
    script writes: `cat > /opt/run.sh <<EOF ... EOF`, or `bash <<EOF`): its text as the shell writes it (an
    unquoted delimiter: `$VAR`, `${VAR...}` with the variables of that moment, `\\$` an escaped `$`, `$(...)` and
    what is unknown a marker of the same width, so its words are unknown; quotes are plain characters there and
    only become quotes when the written script runs; a quoted delimiter: as written), read as a script of its
    own (its `$VAR` are the written script's)."""
    text = at.text[body.start:body.end]
    if not _may_start_a_server([text]) or not _body_runs_or_is_written(at.text, body.start):
        return None
    written = _body_as_written(text, body)
    if unterminated_quote(written) is not None:
        return None  # a text that is no script the shell runs (prose, a program of another language)
    if script.block == "|" and script.location is not None:
        # the same lines of the same block: every word of the body on its own line, columns moved by what an
        # expansion before it changed on that line; the location moved down by the lines before the body,
        # rather than those lines written blank before it (5,000 units one script writes were 5,000 walks of up
        # to 20,000 blank lines: 30 CPU-s and 2.3 GB)
        loc = script.location
        token = Token(written, Location(loc.file, loc.line + at.text.count("\n", 0, body.start), loc.column),
                      block="|", indent=script.indent, lines=script.lines)
    else:
        token = Token(written, at.at(body.start, body.start + 1))
    return _search_shell([Token("sh", token.location), Token("-c", token.location), token], {}, depth + 1)


def _body_as_written(text: str, body: HereDoc) -> str:
    """A here-document's body as the shell writes it (see ``_search_heredoc``)."""
    lines = text.split("\n")
    if body.strip_tabs:
        lines = [line.lstrip("\t") for line in lines]
    if body.env is not None:
        budget = [MAX_EXPANSION_TOTAL]
        lines = [heredoc_expand(line, body.env, budget, {}, {}, set()) for line in lines]
    return "\n".join(lines)


def heredoc_command_line(text: str, body_start: int) -> str:
    """The line of the command whose here-document body starts at ``body_start`` (the line above it)."""
    end = body_start - 1 if body_start > 0 and text[body_start - 1] == "\n" else body_start
    return text[text.rfind("\n", 0, end) + 1:end]


# where a command line sends its output: `> FILE`, `>> FILE` (not `2>&1`, `&>`), or `tee [-a] FILE`
_WRITE_TARGET = re.compile(r"(?<![0-9&>])(>>?)[ \t]*(\"[^\"\n]*\"|'[^'\n]*'|[^\s;&|<>()]+)"
                           r"|(?:^|[\s|;&(])tee((?:[ \t]+-[A-Za-z-]+)*)[ \t]+(\"[^\"\n]*\"|'[^'\n]*'|[^\s;&|<>()-][^\s;&|<>()]*)")


def _note_written(at: _Positions, body: HereDoc, written: dict[str, WrittenFile]) -> None:
    """Record the YAML file a here-document is written to (`cat > FILE <<EOF`, `cat <<EOF > FILE`, `tee FILE
    <<EOF`), as the shell writes it: `>` and `tee` replace the file, `>>` and `tee -a` append to it. A command line with
    more than one here-document, or a target known only at run time, records nothing."""
    line = heredoc_command_line(at.text, body.start)
    if line.count("<<") - line.count("<<<") != 1:
        return
    m = _WRITE_TARGET.search(_HEREDOC_OPERATOR.sub(" ", line))
    if m is None:
        return
    raw = m.group(2) if m.group(1) else m.group(4)
    append = m.group(1) == ">>" or (m.group(3) is not None and re.search(r"-\w*a|--append", m.group(3)) is not None)
    words, _ = _lex_words(raw, body.line_env or {}, [])
    if len(words) != 1 or words[0][0] is None or has_unknown_mark(words[0][0]):
        return
    path = words[0][0]
    if path.split(".")[-1] not in ("yaml", "yml") or body.runs is False:
        return  # vLLM's config loader takes only these (FlexibleArgumentParser._load_config_file)
    start = at.at(body.start, body.start + 1)
    line_no = start.line - 1 if start is not None and start.line else None
    if body.runs is None:
        # written or not as the environment decides (`if [ ! -f FILE ]`, a loop): what vLLM reads is not known
        written[path] = WrittenFile(None, start, line_no, "is written only when a condition the script tests holds")
        return
    text = _body_as_written(at.text[body.start:body.end], body)
    if not text.endswith("\n") and body.end > body.start:
        text += "\n"
    if append:
        before = written.get(path)
        if before is None or before.text is None:
            why = before.why if before is not None else "is appended to a file the script did not write before (it " \
                "may come with the image)"
            written[path] = WrittenFile(None, start, line_no, why)
        else:
            written[path] = WrittenFile(before.text + text, before.start, line_no)
    else:
        written[path] = WrittenFile(text, start, line_no)


_REDIRECT_TO_FILE = re.compile(r"(?<![0-9&>])>>?\s*[^&\s>]")
_RUNS_ITS_INPUT = frozenset(("sh", "bash", "dash", "zsh", "ksh", "ash", "ssh"))


def _body_runs_or_is_written(text: str, body_start: int) -> bool:
    """Whether the command a here-document's body is given to writes it to a file (`cat > run.sh <<EOF`, `tee`)
    or runs it as shell commands (`bash <<EOF`, `... | sh`, `ssh host <<EOF`, `kubectl exec -i pod -- bash <<EOF`).
    A body printed (`cat <<'EOF'` of a usage text), piped to another program or fed to another language
    (`python3 <<EOF`) is no script of the shell's."""
    line = heredoc_command_line(text, body_start)
    if "<<" not in line:
        return True  # the command is not on the line above the body: said as before
    if _REDIRECT_TO_FILE.search(line.replace("<<", "  ")):
        return True
    words = re.split(r"[\s|;&()]+", line)
    return any(_basename(w.strip("\"'")) in _RUNS_ITS_INPUT or w == "tee" for w in words)


# --------------------------------------------------------------------------------------------------------------
# Reading vLLM arguments


def _is_number(s: str) -> bool:
    if s[1:2].isalpha() and s[1:2] not in "iInN" and s[:1] in "+-":
        return False  # `--flag`, `-tp`: no float() (and its exception) per word of a long argument list
    try:
        float(s)
        return True
    except ValueError:
        return False


def _option_like(t: Token) -> bool:
    text = t.text
    return text is not None and text[:1] == "-" and len(text) > 1 and (text[1] == "-" or not _is_number(text))


# The vLLM version the user configured (`vllm-version`, per-path `overrides`, `--vllm-version`) for command lines
# whose image tag does not say one, as a function of the file the command line was written in. `vramlint.scan`
# sets it for the duration of a scan, so every extractor reads command lines with it without passing it along.
_CONFIGURED_VERSION: ContextVar[Callable[[str | None], str | None] | None] = ContextVar(
    "vramlint_configured_vllm_version", default=None)


@contextmanager
def configured_vllm_version(version: str | Callable[[str | None], str | None] | None) -> Iterator[None]:
    """Within the block, argument lists with no version of their own are read as ``version`` (a version, or a
    function from the file a command line is in to the version configured for it; None: the newest table)."""
    if version is None:
        yield
        return
    resolver = version if callable(version) else (lambda _file: version)
    token = _CONFIGURED_VERSION.set(resolver)
    try:
        yield
    finally:
        _CONFIGURED_VERSION.reset(token)


def configured_version_for(tokens: list[Token]) -> str | None:
    """The configured vLLM version for the file ``tokens`` were written in (None when nothing is configured)."""
    resolver = _CONFIGURED_VERSION.get()
    if resolver is None:
        return None
    file = next((t.location.file for t in tokens if t.location is not None and t.location.file), None)
    return normalize_version(resolver(file))


_O_LEVEL = re.compile(r"-O=?(\d+|[a-z]+)?")


# A fill-in word (`__MODEL_NAME__`, `__ARGS__`): upper-case letters, digits and underscores between double underscores
_FILL_IN = re.compile(r"^__[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*__$")


def parse_vllm_args(tokens: list[Token], version: str | None = None, entry: str = "serve",
                    newest_release: bool = False) -> VllmInvocation:
    """Read a vLLM argument list (what follows `vllm serve`) as the vLLM version's parser would.

    ``version`` is the one the image tag (or the extractor) says; without it, the version configured for the
    file (:func:`configured_vllm_version`), else the newest argument table: an exact reading when
    ``newest_release`` says the image runs the newest release (vLLM's own `:latest`), else an assumption.
    """

    version = version or configured_version_for(tokens)
    table_version, table_note = vllm_args.table_version(version)
    if not version and newest_release and table_version == DEFAULT_VERSION:
        table_note = None
    inv = VllmInvocation(entrypoint=entry, version_table=table_version, version_note=table_note)
    feats = vllm_args.features(table_version)
    normalised_flag = vllm_args.normalise
    # The official image's ENTRYPOINT is `vllm serve` in recent tags (positional model allowed) and the
    # api_server module in old ones (no positional); with the entrypoint implied, accept a positional.
    positional_ok = entry in ("serve", "implied") and vllm_args.has_positional_model(table_version)
    i = 0
    n = len(tokens)
    only_positional = False
    model_flag_tok: Token | None = None
    model_flag_value: Any = None
    api_positional_taken = False
    reread: set[int] = set()  # locations of refused words read again as the fix writes them
    while i < n:
        tok = tokens[i]
        text = tok.text
        if text is not None and len(text) > MAX_EXPANDED_CHARS:
            # no vLLM argument is this long (a chat template is a few KB); a hostile file's megabyte word would be
            # quoted by every finding about it
            inv.problems.append(f"{_where(tok)}an argument of {len(text):,} characters, more than "
                                f"{MAX_EXPANDED_CHARS:,} (expansion budget): not read")
            tok = Token(None, tok.location)
            text = None
        if text is None:
            inv.unchecked.append(_where(tok) + "a word of the command line is known only at run time (a variable "
                                 "or template), so the arguments it holds are not checked")
            inv.opaque_args = inv.opaque_args or tok.location or inv.location
            i += 1
            continue
        if text[:2] == "__" and _FILL_IN.match(text):
            # `vllm serve __MODEL_NAME_AND_PARAMETERS__`: a word a setup step (sed, Terraform, a CI job) replaces
            # before the file is applied; vLLM never sees it, so it is neither the model nor an argument
            inv.opaque_args = inv.opaque_args or tok.location or inv.location
            inv.unchecked.append(f"{_where(tok)}{text} is a placeholder that a step before deployment replaces, so "
                                 "the model or arguments it stands for are not known and not checked")
            i += 1
            continue
        if not only_positional and _option_like(tok) and " " in text and (
                "=" not in text or vllm_args.resolve_flag(text.partition("=")[0], table_version)[0] is None):
            # argparse reads an argument with a space that is not `--known-flag=value` as a positional
            # ("if it contains a space, it was meant to be a positional"): `"--quantization awq"` written as one
            # list item never sets --quantization.
            split = text.split(None, 1)
            fix = f"write {split[0]!r} and {split[1]!r} as two arguments (or {split[0]}={split[1]})"
            refused = True
            if positional_ok and inv.model is None and "model_tag" not in inv.args:
                _rejected(inv, tok, f"{text!r} is one argument, which argparse reads as the positional model "
                          "tag: vLLM takes it as the model to serve and cannot load it", arg="model", fix=fix)
            elif entry in ("openai.api_server", "api_server") and not api_positional_taken:
                refused = False
                inv.startup_errors.append({
                    "code": "argparse", "location": tok.location, "arg": None, "fix": fix,
                    "version": inv.version_table, "version_known": inv.version_note is None, "level": "warning",
                    "message": f"{text!r} is one argument, which argparse reads as a positional: the api_server "
                               "either ignores it (the optional model tag its parser has in some releases) or stops "
                               "with 'unrecognized arguments'; either way the flag is not applied"})
                api_positional_taken = True  # the one optional positional, where the parser has it
            else:
                _rejected(inv, tok, f"unrecognized arguments: {text}", fix=fix)
            if refused and tok.location is not None and vllm_args.resolve_flag(split[0], table_version)[0] is not None:
                # vLLM stops at this word, so whatever it would hit next is known only for a command line that
                # gets past it: the rest is read as the fix writes it (`--tensor-parallel-size 2` as two words),
                # so that the budget is that of the engine the author asked for, not one without the flag
                if not reread:
                    tokens = list(tokens)  # the caller's list stays as it was
                # spliced in place (a move of the rest in C): 20,000 such words rebuilt the list 20,000 times
                tokens[i:i + 1] = [Token(split[0], tok.location), Token(split[1], tok.location)]
                n = len(tokens)
                reread.add(id(tok.location))
                continue
            i += 1
            continue
        if only_positional or not _option_like(tok):
            if text == "--" and not only_positional:
                only_positional = True
                i += 1
                continue
            if positional_ok and inv.model is None and "model_tag" not in inv.args:
                inv.model, inv.model_location = text, tok.location
                inv.arg_locations["model_tag"] = tok.location
                inv.args["model_tag"] = text
            elif positional_ok and "model_tag" not in inv.args and i > 0 and _option_like(tokens[i - 1]) and (
                    entry == "serve" or feats.get("serve_model_flag") == "moved"):
                # `--enforce-eager false`: the flag takes no value, so the word is the free positional model tag,
                # which `vllm serve` copies over --model
                inv.args["model_tag"] = None
                _rejected(inv, tok, f"{text!r} follows {tokens[i - 1].text}, which takes no value, so argparse reads "
                          f"it as the positional model tag, which replaces --model: vLLM looks for a model named "
                          f"{text!r}", arg="model", fix=f"remove {text!r}")
            elif entry == "openai.api_server" and not api_positional_taken \
                    and (parse_version(table_version) or (0,)) >= API_PARSER_MODEL_TAG_FROM:
                # the OpenAI server's parser has an optional model tag from 0.10 (make_arg_parser), which its
                # __main__ never reads: the first free word lands there and is dropped, and vLLM starts
                api_positional_taken = True
                prev = tokens[i - 1].text if i > 0 else None
                spec = vllm_args.resolve_flag(prev, table_version)[0] if prev and _option_like(tokens[i - 1]) \
                    else None
                same = spec is not None and not spec.takes_value and _to_bool(text) is (spec.action != "store_false")
                if not same:
                    inv.startup_errors.append({
                        "code": "argparse", "location": tok.location, "arg": None, "version": inv.version_table,
                        "version_known": inv.version_note is None, "level": "warning",
                        "fix": f"remove {text!r}" + (f" (write {prev} alone, or leave it out)" if spec else ""),
                        "message": f"{text!r} is no option's value, so the api_server's parser takes it as its "
                                   "optional model tag, which it ignores: vLLM starts without it"
                                   + (f" ({prev} takes no value: it is on)" if spec is not None else "")})
            else:
                _rejected(inv, tok, f"unrecognized arguments: {text}", fix=f"remove {text!r} or give it a flag")
            if entry == "serve" and inv.startup_errors and inv.startup_errors[-1]["location"] is tok.location:
                # `vllm serve` has one positional, the model: a second word for it replaces the model or is
                # unrecognized, in every release; only the api_server module's parser ignored one in some
                inv.startup_errors[-1]["version_known"] = True
            i += 1
            continue
        o_level = _O_LEVEL.fullmatch(text) if text[:2] == "-O" else None
        if o_level and feats.get("O"):
            # `-O3`, `-O 3`, `-O=3`: FlexibleArgumentParser rewrites these before argparse sees them.
            level_text = o_level.group(1)
            level_tok = tok
            if level_text is None and i + 1 < n and tokens[i + 1].text in ("0", "1", "2", "3"):
                level_tok = tokens[i + 1]
                level_text = level_tok.text
                i += 1
            if level_text is not None:
                level: Any = small_int(level_text) if small_int(level_text) is not None else level_text
                if feats["O"] == "optimization_level":
                    inv.args["optimization_level"] = level
                    inv.arg_locations["optimization_level"] = tok.location or Location("", 0)
                else:
                    current = inv.args.get("compilation_config")
                    current = current if isinstance(current, dict) else {}
                    current["level"] = level
                    inv.args["compilation_config"] = current
                    inv.arg_locations["compilation_config"] = tok.location or Location("", 0)
                i += 1
                continue
        flag, has_eq, attached = text.partition("=")
        if entry == "serve" and text == "--model" and feats.get("serve_model_flag") == "error":
            # 0.8.3-0.11.0: FlexibleArgumentParser.parse_args looks for the exact word `--model` (not `--model=X`)
            _rejected(inv, tok, "With `vllm serve`, you should provide the model as a positional argument or in a "
                      "config file instead of via the `--model` option.", code="serve-model-flag", arg="model",
                      fix="write the model right after `vllm serve` (vllm serve MODEL ...)")
        if entry == "serve" and normalised_flag(flag) == "--model":
            model_flag_tok = tok
        spec, sub_key, implied_value = vllm_args.resolve_flag(flag, table_version)
        if spec is None and not has_eq and flag.startswith("-") and not flag.startswith("--") and len(flag) > 2:
            # single-dash option with its value attached: `-O3`, `-tp2`
            for cut in range(len(flag) - 1, 1, -1):
                s2, k2, v2 = vllm_args.resolve_flag(flag[:cut], table_version)
                if s2 is not None and s2.takes_value:
                    spec, sub_key, implied_value = s2, k2, v2
                    has_eq, attached = True, flag[cut:]
                    flag = flag[:cut]
                    break
        if spec is None:
            inv.unknown_args[flag] = tok.location or Location("", 0)
            # An unknown flag's value (if any) is the next word that is not an option; the last word is the
            # positional model only while no model is given (`--model $VAR` gives one, known at run time)
            if not has_eq and i + 1 < n and not _option_like(tokens[i + 1]) and tokens[i + 1].text is not None \
                    and not (positional_ok and inv.model is None and "model" not in inv.arg_locations
                             and i + 2 >= n):
                i += 1
            i += 1
            continue
        values: list[Token] = []
        value_origin: Location | None = None
        if implied_value is not None:
            value: Any = implied_value
            if has_eq:
                _rejected(inv, tok, f"argument {flag}: ignored explicit argument {attached!r}", arg=spec.dest,
                          fix=f"write {flag} without a value")
        elif not spec.takes_value:
            value = True if spec.action != "store_false" else False
            if has_eq:
                if spec.action == "bool_optional" or spec.type == "bool":
                    value = _to_bool(attached)
                else:
                    _rejected(inv, tok, f"argument {flag}: ignored explicit argument {attached!r}", arg=spec.dest,
                              fix=f"write {flag} without a value")
        else:
            if has_eq:
                value_origin = tok.origin
                values = [Token(None if has_unknown_mark(attached) else attached, value_origin or tok.location)]
            elif spec.nargs in ("+", "*"):
                j = i + 1
                while j < n and not _option_like(tokens[j]):
                    values.append(tokens[j])
                    j += 1
                i = j - 1
            elif spec.nargs == "?":
                if i + 1 < n and not _option_like(tokens[i + 1]):
                    values = [tokens[i + 1]]
                    i += 1
            else:
                if i + 1 < n and (tokens[i + 1].text is None or not _option_like(tokens[i + 1])
                                  or _is_number(tokens[i + 1].text or "")):
                    value_origin = tokens[i + 1].origin
                    values = [Token(tokens[i + 1].text, value_origin) if value_origin else tokens[i + 1]]
                    i += 1
                else:
                    _rejected(inv, tok, f"argument {flag}: expected one argument", arg=spec.dest,
                              fix=f"give {flag} a value")
                    i += 1
                    continue
            if any(v.text is None for v in values):
                value = None
                # said, not guessed: the budget must not read `--max-model-len $N` as no --max-model-len
                unknown = next(v for v in values if v.text is None)
                if spec.dest not in _SAID_ELSEWHERE:
                    inv.unchecked.append(_where(unknown if unknown.location else tok) + f"the value of {flag} is known "
                                         "only at run time (a variable or template), so it is not checked")
            elif spec.nargs in ("+", "*"):
                value = [_typed(spec, v.text, inv, v) for v in values]
            elif values:
                value = _typed(spec, values[0].text, inv, values[0])
            else:
                value = spec.const
        loc = tok.location
        if value_origin is not None:
            # the value was set by the `$(NAME)` reference's env entry (an overlay's env file, a patch): that
            # line is the one to change, not the item naming it
            loc = values[0].location
        elif loc is not None and values and values[0].location is not None and values[0].location.line == loc.line \
                and values[0] is not tok and values[0].location.end_column:
            loc = Location(loc.file, loc.line, loc.column, loc.line, values[0].location.end_column, yaml_path=loc.yaml_path)
        dest = spec.dest
        if dest == "config":
            if value is not None:
                inv.config_files.append((str(value), tok.location))
            else:
                inv.config_files.append(("", tok.location))
            i += 1
            continue
        if sub_key:
            current = inv.args.get(dest)
            if not isinstance(current, dict):
                current = {} if current is None or dest not in inv.args else current
            if isinstance(current, dict):
                _set_dotted(current, sub_key, _json_scalar(values[0].text) if values and values[0].text else value)
                inv.args[dest] = current
        elif spec.action == "append":
            inv.args.setdefault(dest, [])
            if isinstance(inv.args[dest], list):
                inv.args[dest].append(value)
        else:
            inv.args[dest] = value
        inv.arg_locations[dest] = loc or Location("", 0)
        if dest == "model":
            model_flag_value = value
            if "model_tag" not in inv.args:
                where = values[0].location if values and values[0] is not tok and values[0].location else tok.location
                inv.model, inv.model_location = (None if value is None else str(value)), where
            inv.args.pop("model", None)
        i += 1
    if reread:
        # one finding per refused word: the words read again after it are what its fix gives, not more refusals
        kept, seen = [], set()
        for error in inv.startup_errors:
            at = id(error.get("location"))
            if at in reread and at in seen:
                continue
            seen.add(at)
            kept.append(error)
        inv.startup_errors[:] = kept
    _one_unrecognized_error(inv)
    _check_serve_model(inv, entry, table_version, model_flag_tok, model_flag_value)
    inv.model_default = (entry in ("serve", "implied", "openai.api_server", "api_server") and inv.model is None
                         and "model" not in inv.arg_locations and "model_tag" not in inv.args and inv.opaque_args is None
                         and not inv.config_files and not any(e.get("arg") == "model" for e in inv.startup_errors))
    _check_parallel_sizes(inv, table_version)
    _check_scheduler_sizes(inv, table_version)
    _check_max_model_len(inv, table_version)
    if "model_tag" in inv.args:
        # `vllm serve MODEL`: the positional wins over --model (vLLM copies model_tag into model)
        inv.args.pop("model_tag")
        inv.arg_locations.pop("model_tag", None)
    inv.arg_locations.pop("model", None)
    return inv



def _check_entry_module(inv: VllmInvocation, module: str, where: Location) -> None:
    """`python -m vllm.entrypoints.X` on a release that no longer ships the module: runpy stops with
    ModuleNotFoundError before vLLM parses a word, so that is the one failure; what the arguments would have met
    is never reached, and is folded into it (one root cause, one finding)."""
    from vramlint.vllm_modules import last_release_with, missing_module

    missing = missing_module(module, inv.version_table)
    if missing is None:
        return
    unreached = [e for e in inv.startup_errors if not e.get("shell")] + list(inv.unknown_args)
    inv.startup_errors[:] = [e for e in inv.startup_errors if e.get("shell")]
    inv.unknown_args = {}  # argparse never sees them: VRL009 has nothing to say
    last = last_release_with(module)
    message = (f"python -m {module}: ModuleNotFoundError: No module named {missing!r} (vLLM {inv.version_table} "
               f"does not ship it{f'; {last} is the last release that does' if last else ''})")
    if unreached:
        message += (f"; the {len(unreached)} argument error{'s' if len(unreached) > 1 else ''} after it "
                    f"{'are' if len(unreached) > 1 else 'is'} never reached")
    fix = ("start the server with `vllm serve MODEL ...` (or `python -m vllm.entrypoints.openai.api_server`), or "
           f"install a release that ships {module}")
    inv.startup_errors.insert(0, {"code": "import", "message": message, "location": where, "arg": None,
                                  "fix": fix, "version": inv.version_table,
                                  "version_known": inv.version_note is None})

# vllm/entrypoints/openai/cli_args.py make_arg_parser adds the optional positional `model_tag` from this release
# on (read in the 0.10.0 wheel; 0.9.2 has it only in `vllm serve`'s own parser).
API_PARSER_MODEL_TAG_FROM = (0, 10)


# ParallelConfig declares `tensor_parallel_size: int = Field(default=1, ge=1)` (and the same for
# pipeline_parallel_size) from this release on (read in the 0.23.0 wheel, vllm/config/parallel.py; 0.22.0 has a
# plain `int = 1`); before it nothing checks the sign, and a size below 1 makes a world size no engine can use.
PARALLEL_SIZE_CHECKED_FROM = (0, 23)


def _check_parallel_sizes(inv: VllmInvocation, table_version: str | None) -> None:
    _check_at_least_one(inv, table_version, ("tensor_parallel_size", "pipeline_parallel_size"), "ParallelConfig",
                        PARALLEL_SIZE_CHECKED_FROM, "parallel-size",
                        lambda dest: f"a {dest.split('_', 1)[0]}-parallel size below 1 makes a world size no engine "
                        "can start with")


# SchedulerConfig declares `max_num_seqs: int = Field(default=DEFAULT_MAX_NUM_SEQS, ge=1)` and the same for
# max_num_batched_tokens from this release on (read in the 0.12.0 wheel, vllm/config/scheduler.py; 0.10.0 - 0.11.0
# declare both `SkipValidation[int]`). Before it nothing checks the sign, and the scheduler then admits no
# request: V0's and V1's schedulers take a request only while the running count or the token budget stays within
# the bound, which a bound below 1 never allows.
SCHEDULER_SIZES_CHECKED_FROM = (0, 12)


def _check_scheduler_sizes(inv: VllmInvocation, table_version: str | None) -> None:
    _check_at_least_one(inv, table_version, ("max_num_seqs", "max_num_batched_tokens"), "SchedulerConfig",
                        SCHEDULER_SIZES_CHECKED_FROM, "scheduler-size",
                        lambda dest: "a scheduler bound below 1 admits no request (a server that starts with it "
                        "serves nothing)")


def _check_at_least_one(inv: VllmInvocation, table_version: str | None, dests: tuple[str, ...], config: str,
                        checked_from: tuple[int, int], code: str, unchecked: Any) -> None:
    """A size below 1: the pydantic refusal of ``config``'s `Field(ge=1)` from ``checked_from``, before it a
    warning saying what an unchecked value does (``unchecked(dest)``), since which failure follows is not read."""
    version = (parse_version(table_version) or ())[:2]
    for dest in dests:
        value = inv.args.get(dest)
        if not isinstance(value, int) or isinstance(value, bool) or value >= 1:
            continue
        where = inv.arg_locations.get(dest)
        tok = Token(str(value), where if where is not None and where.line else None)
        flag = "--" + dest.replace("_", "-")
        if version and version >= checked_from:
            _rejected(inv, tok, f"1 validation error for {config}\n{dest}\n  Input should be greater than or "
                      f"equal to 1 [type=greater_than_equal, input_value={value}, input_type=int]", code="pydantic",
                      arg=dest, fix=f"give {flag} 1 or more")
        else:
            _rejected(inv, tok, f"{flag} {value}: vLLM {table_version or ''} does not check the sign, and "
                      f"{unchecked(dest)}", code=code, arg=dest, fix=f"give {flag} 1 or more")
            inv.startup_errors[-1]["level"] = "warning"


# --max-model-len below 1, read in the wheels: up to 0.12 nothing checks it (0.8.5 `human_readable_int` then
# `_get_and_verify_max_len` returns it as given; 0.11/0.12 declare it `SkipValidation[int]`); 0.13.0 declares
# `Field(default=None, gt=0)`; from 0.14.0 `Field(default=None, ge=-1)`, and -1 or `auto` (`human_readable_int_or_auto`)
# fits the length to the KV cache. A length of 0 that starts serves nothing: every prompt is longer than 0 tokens.
MAX_MODEL_LEN_POSITIVE_FROM = (0, 13)
MAX_MODEL_LEN_AUTO_FROM = (0, 14)


def _check_max_model_len(inv: VllmInvocation, table_version: str | None) -> None:
    value = inv.args.get("max_model_len")
    if value is None or isinstance(value, bool) or not (value == "auto" or isinstance(value, int) and value < 1):
        return
    version = (parse_version(table_version) or ())[:2]
    where = inv.arg_locations.get("max_model_len")
    tok = Token(str(value), where if where is not None and where.line else None)
    if value == "auto" or value == -1:
        if not version or version >= MAX_MODEL_LEN_AUTO_FROM:
            return  # auto-fit (the newest vLLM when the version is not known)
        if value == "auto":
            _rejected(inv, tok, "argument --max-model-len: invalid human_readable_int value: 'auto'",
                      arg="max_model_len", fix="give --max-model-len a number of tokens (`auto` needs vLLM 0.14.0 "
                      "or later)")
            return
    if version and version >= MAX_MODEL_LEN_AUTO_FROM and value < -1:
        _rejected(inv, tok, f"1 validation error for ModelConfig\nmax_model_len\n  Input should be greater than or "
                  f"equal to -1 [type=greater_than_equal, input_value={value}, input_type=int]", code="pydantic",
                  arg="max_model_len", fix="give --max-model-len a number of tokens, or -1 to fit it to the KV cache")
    elif version and MAX_MODEL_LEN_POSITIVE_FROM <= version < MAX_MODEL_LEN_AUTO_FROM:
        _rejected(inv, tok, f"1 validation error for ModelConfig\nmax_model_len\n  Input should be greater than 0 "
                  f"[type=greater_than, input_value={value}, input_type=int]", code="pydantic", arg="max_model_len",
                  fix="give --max-model-len a number of tokens (1 or more)")
    else:
        _rejected(inv, tok, f"--max-model-len {value} is not refused in this version, but a server that starts with it "
                  f"refuses every request (every prompt is longer than {value} tokens)", code="max-model-len", arg="max_model_len",
                  fix="give --max-model-len a number of tokens (1 or more)"
                  + (", or -1 to fit it to the KV cache" if version and version >= MAX_MODEL_LEN_AUTO_FROM else ""))
        inv.startup_errors[-1]["level"] = "warning"  # whether it starts at all is not checked


def _rejected(inv: VllmInvocation, tok: Token | None, message: str, code: str = "argparse", arg: str | None = None,
              fix: str | None = None) -> None:
    """Something vLLM's argument parsing rejects at start-up, with vLLM's (or argparse's) own message."""
    inv.startup_errors.append({"code": code, "message": message, "location": tok.location if tok else None,
                               "arg": arg, "fix": fix, "version": inv.version_table,
                               "version_known": inv.version_note is None})


_UNRECOGNIZED = "unrecognized arguments: "
_UNRECOGNIZED_QUOTED = 300  # characters of the refused words quoted in the one error


def _one_unrecognized_error(inv: VllmInvocation) -> None:
    """argparse collects every word it cannot place and stops once, with one message naming them all
    (``parser.error('unrecognized arguments: %s' % ' '.join(argv))`` in ``ArgumentParser.parse_args``): one root
    cause, one error, on the first word, however many words there are (20,000 joined `"--flag value"` items were
    20,000 findings in every report)."""
    refused = [e for e in inv.startup_errors if e.get("code") == "argparse" and not e.get("level")
               and str(e.get("message") or "").startswith(_UNRECOGNIZED)]
    if len(refused) < 2:
        return
    first = refused[0]
    words = " ".join(str(e["message"])[len(_UNRECOGNIZED):] for e in refused)
    if len(words) > _UNRECOGNIZED_QUOTED:
        words = words[:_UNRECOGNIZED_QUOTED].rstrip() + " ..."
    lines = sorted({e["location"].line for e in refused if e.get("location") is not None and e["location"].line})
    where = f", on lines {lines[0]} to {lines[-1]}" if len(lines) > 1 else ""
    merged = dict(first, message=f"{_UNRECOGNIZED}{words} ({len(refused):,} words{where})",
                  version_known=any(e.get("version_known") for e in refused))
    fixes = list(dict.fromkeys(str(e["fix"]) for e in refused if e.get("fix")))
    if fixes:
        merged["fix"] = fixes[0] + (f"; and so for the other {len(refused) - 1:,} words" if len(refused) > 1 else "")
    drop = {id(e) for e in refused[1:]}
    inv.startup_errors[:] = [merged if e is first else e for e in inv.startup_errors if id(e) not in drop]


def _check_serve_model(inv: VllmInvocation, entry: str, table_version: str | None, model_flag_tok: Token | None,
                       model_flag_value: Any) -> None:
    """`vllm serve` before 0.8.3 requires the positional model (vllm/scripts.py, vllm/entrypoints/cli/serve.py)."""

    version = (parse_version(table_version) or ())[:3]
    if entry != "serve" or not version or not (0, 5, 3) <= version < (0, 8, 3) \
            or not vllm_args.has_positional_model(table_version):
        return
    if "model_tag" not in inv.args:
        _rejected(inv, model_flag_tok, "the following arguments are required: model_tag", arg="model",
                  fix="write the model right after `vllm serve` (vllm serve MODEL ...)")
    elif model_flag_tok is not None and version >= (0, 5, 5) and model_flag_value not in (None, "facebook/opt-125m"):
        # ServeSubcommand.cmd / scripts.serve: `args.model != EngineArgs.model` raises
        _rejected(inv, model_flag_tok, "With `vllm serve`, you should provide the model as a positional argument "
                  "instead of via the `--model` option.", code="serve-model-flag", arg="model",
                  fix="remove --model; the model after `vllm serve` is the one served")


# A value known only at run time that another finding already says: an unknown model is said where the model is
# resolved (the variable's or template's own note, the run's summary of servers whose model is not read), and the
# served name, host and port size nothing and no rule reads them. Said once per cause, not again as 'partly checked'.
_SAID_ELSEWHERE = frozenset({"model", "served_model_name", "host", "port"})


def _where(tok: Token) -> str:
    loc = tok.location
    return f"line {loc.line}: " if loc is not None and loc.line else ""


def _set_dotted(target: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    for p in parts[:-1]:
        nxt = target.get(p)
        if not isinstance(nxt, dict):
            nxt = {}
            target[p] = nxt
        target = nxt
    target[parts[-1]] = value


def _json_scalar(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _to_bool(text: str) -> bool | None:
    low = text.strip().lower()
    if low in ("true", "1", "yes", "on"):
        return True
    if low in ("false", "0", "no", "off"):
        return False
    return None


_HUMAN = {"k": 1000, "m": 1000**2, "g": 1000**3, "K": 1024, "M": 1024**2, "G": 1024**3}


# vLLM's parser keeps any Python int, but every size it then computes with goes through float64 or int64
# (torch, CUDA): no setting can be larger.
MAX_ARG_INT = 2**63
MAX_COMPARED_LEN = 10**300  # a --max-model-len vLLM compares with the model's maximum (and a float holds)


def _sane_int(value: int, spec: Any, inv: VllmInvocation, tok: Token) -> int | None:
    """``value``, or None (unknown) and an input problem when it is beyond any size vLLM can use."""
    if abs(value) < MAX_ARG_INT:
        return value
    if spec.dest == "max_model_len" and 0 < value < MAX_COMPARED_LEN:
        # vLLM's ModelConfig compares it with the model's own maximum first (_get_and_verify_max_len: "User-specified
        # max_model_len (...) is greater than the derived max_model_len"), in Python ints: that is vLLM's message,
        # kept for the budget to give (round 23's 40-digit case); past a float's range it is not read
        return value
    digits = len(str(abs(value))) if abs(value) < 10**4000 else 4000
    inv.problems.append(f"{_where(tok)}{spec.flags[0]} is a {digits}-digit number, beyond any size vLLM can use "
                        "(int64): its value is not read")
    return None


def _typed(spec: Any, text: str | None, inv: VllmInvocation, tok: Token) -> Any:
    """Convert a value the way the argument's argparse ``type`` does; a bad value is a problem, kept as text."""
    if text is None:
        return None
    from vramlint.yamlload import has_deploy_time_marker

    if has_deploy_time_marker(text):
        return None  # filled in when the package is deployed (Zarf): vLLM sees that value, unknown here
    kind = spec.type
    raw = text
    if kind in ("int", "float", "human_int") and text.strip().lower() in ("none", "null"):
        if spec.optional:
            return None
    try:
        if kind == "int":
            number = _sane_int(int(text), spec, inv, tok)
            if spec.choices and number is not None and str(number) not in spec.choices:
                # argparse converts with `type` first, then tests the choices (vLLM's are ints: `[8, 16, 32]`)
                choices = ", ".join(spec.choices)
                _rejected(inv, tok, f"argument {spec.flags[0]}: invalid choice: {number} (choose from {choices})",
                          arg=spec.dest, fix=f"use one of {choices}")
            return number
        if kind == "float":
            return float(text)
        if kind == "human_int":
            t = text.strip()
            if t and t[-1] in _HUMAN:
                return _sane_int(int(float(t[:-1]) * _HUMAN[t[-1]]), spec, inv, tok)
            if t.lower() == "auto" or t == "-1":
                return -1 if t == "-1" else "auto"
            return _sane_int(int(t), spec, inv, tok)
        if kind == "bool":
            b = _to_bool(text)
            if b is None:
                raise ValueError(text)
            return b
        if kind == "json":
            stripped = text.strip()
            if stripped.startswith("{") or stripped.startswith("["):
                return _json_argument(stripped)
            if spec.dest in ("compilation_config",) and stripped.isdigit():
                return {"level": int(stripped)} if not spec.dotted_level_name else {spec.dotted_level_name: int(stripped)}
            if stripped.lower() in ("none", "null"):
                return None
            return stripped
        if kind == "str_or_int":
            return int(text) if re.fullmatch(r"-?\d+", text.strip()) else text
    except RecursionError:
        # json.loads of arrays or objects nested past Python's recursion limit: not a ValueError, so neither
        # argparse nor vLLM's parse_type turns it into a usage error; vLLM stops with the traceback
        what = "array" if text.lstrip()[:1] == "[" else "object"
        _rejected(inv, tok, f"argument {spec.flags[0]}: RecursionError: maximum recursion depth exceeded while "
                  f"decoding a JSON {what} from a unicode string", arg=spec.dest,
                  fix=f"give {spec.flags[0]} JSON nested a few levels deep")
        return None
    except OverflowError as exc:
        # int(float(...) * multiplier) of a number past float64 in vLLM's human_readable_int: argparse does not
        # catch OverflowError, so vLLM stops with it
        _rejected(inv, tok, f"argument {spec.flags[0]}: OverflowError: {exc}", arg=spec.dest,
                  fix=f"give {spec.flags[0]} a number of sane size")
        return None  # refused at start-up: the budget must not read the raw text as a number
    except (ValueError, json.JSONDecodeError) as exc:
        if kind == "json":
            # vLLM's config-dataclass arguments raise ArgumentTypeError(repr(e)) (engine/arg_utils.py)
            detail = f"{type(exc).__name__}({str(exc)!r})"
        else:
            detail = f"invalid {'int' if kind == 'human_int' else kind} value: {raw!r}"
        _rejected(inv, tok, f"argument {spec.flags[0]}: {detail}", arg=spec.dest,
                  fix=f"give {spec.flags[0]} a valid {'JSON' if kind == 'json' else kind.replace('human_', '')} value")
        unset = [m.group(1) for m in _K8S_VAR.finditer(raw) if m.group(1)]
        if unset:
            # Kubernetes passes `$(NAME)` on as written only when nothing defines NAME: an overlay or patch that
            # adds the variable, or an envFrom source, is not in the file
            inv.startup_errors[-1]["level"] = "warning"
            inv.startup_errors[-1]["message"] += (
                f" (as written: the file does not define {', '.join(dict.fromkeys(unset))}; an overlay, patch or "
                "envFrom that does gives vLLM its value instead)")
        # vLLM stops on it; for the budget the value is unknown (never the raw text where a number belongs)
        return raw if kind == "json" else None
    if spec.choices and text not in spec.choices and kind == "str":
        choices = ", ".join(repr(c) for c in spec.choices)
        _rejected(inv, tok, f"argument {spec.flags[0]}: invalid choice: {text!r} (choose from {choices})",
                  arg=spec.dest, fix=f"use one of {choices}")
    if spec.dest == "quantization" and text.strip().lower() not in ("", "none"):
        _check_quantization(text, spec, inv, tok)
    if spec.dest == "middleware" and (_DOTTED_NAME.fullmatch(text) or _EMPTY_PART.fullmatch(text)):
        _check_middleware(text, inv, tok)  # not `$(VAR)`, a template or unknown
    return text


def platform_plugin_quantization(image: str | None) -> frozenset[str]:
    """The --quantization methods a platform plugin in ``image`` registers beside vLLM's own: vllm-ascend's images
    (`.../vllm-ascend:TAG`) carry the Ascend platform plugin, whose `AscendQuantConfig` / `AscendModelSlimConfig`
    is registered as "ascend" (`@register_quantization_config(ASCEND_QUANTIZATION_METHOD)`), which ModelConfig
    then accepts in the releases that check the word there (0.9.2, 0.11+)."""
    if not image:
        return frozenset()
    repository = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return frozenset({"ascend"}) if repository.startswith("vllm-ascend") else frozenset()


def _check_quantization(text: str, spec: Any, inv: VllmInvocation, tok: Token) -> None:
    """A --quantization method the release does not have: argparse's "invalid choice" (0.4 - 0.10.x but 0.9.2) or
    ModelConfig's "Unknown quantization method" (0.9.2, 0.11+), from each release's QUANTIZATION_METHODS
    (vramlint.vllm_quantization). With the version assumed it is a warning, as the other choices are, even for a
    word no release has (a nightly past the newest release may have it); so is one a plugin could register (no
    release has it, it is no misspelling of one, and only ModelConfig checks it)."""
    from vramlint.vllm_quantization import refusal

    refused = refusal(text, inv.version_table, tuple(spec.flags))
    if refused is None:
        return
    _rejected(inv, tok, refused["message"], code=refused["code"], arg=spec.dest, fix=refused["fix"])
    error = inv.startup_errors[-1]
    error["method"] = text.strip().lower()
    if not refused["certain"]:
        error["level"] = "warning"
        error["message"] += (" - unless a vLLM plugin in the image registers this method "
                             "(register_quantization_config)")


_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# dotted names with an empty part ("vllm..x", ".x", "."): what importlib refuses before looking for a module
_EMPTY_PART = re.compile(r"\.*(?:[A-Za-z_]\w*)?(?:\.+[A-Za-z_]\w*)*\.*")
_FOLDED_SUFFIX = re.compile(r" \(and \d+ later --middleware values? that would fail too\)$")


def _check_middleware(text: str, inv: VllmInvocation, tok: Token) -> None:
    """`build_app` imports each --middleware in order as `module, name = value.rsplit(".", 1)` and
    `importlib.import_module(module)`: a value with no dot, an empty or relative module path, or a module of vLLM's
    own package that the release does not ship stops the server once the engine has loaded. Only the first failure
    is reached; later failing values are folded into its message (one root cause, one finding)."""
    module = text.rsplit(".", 1)[0] if "." in text else None
    if module is None:
        why = f"--middleware {text!r}: ValueError: not enough values to unpack (expected 2, got 1)"
        fix = "name the middleware as module.attribute"
    elif not module:
        why, fix = f"--middleware {text!r}: ValueError: Empty module name", "name the middleware as module.attribute"
    elif module.startswith("."):
        why = (f"--middleware {text!r}: TypeError: the 'package' argument is required to perform a relative import "
               f"for {module!r}")
        fix = "name the middleware by its absolute module path"
    else:
        parts = module.split(".")
        missing = None
        if parts[0] == "vllm" and "" in parts:
            # importlib looks each prefix up in turn; the one that ends in the empty part is no module
            missing = ".".join(parts[:parts.index("") + 1])
        elif "" not in parts:
            from vramlint.vllm_modules import missing_module

            missing = missing_module(module, inv.version_table)
        if missing is None:
            return
        why = (f"--middleware {text}: ModuleNotFoundError: No module named {missing!r} (vLLM {inv.version_table} "
               "has no such module)")
        fix = f"remove --middleware {text}, or install the module it names in the image"
    first = next((e for e in inv.startup_errors if e.get("code") == "import" and e.get("arg") == "middleware"), None)
    if first is not None:
        # build_app stops at the first middleware it cannot import: this one is never reached
        first["folded"] = n = first.get("folded", 0) + 1
        head = _FOLDED_SUFFIX.sub("", first["message"])
        first["message"] = f"{head} (and {n} later --middleware value{'s' if n > 1 else ''} that would fail too)"
        return
    _rejected(inv, tok, why, code="import", arg="middleware", fix=fix)


def heredoc_expand(line: str, env: dict[str, str | None], budget: list[int], unknown: dict[str, None],
                  defaulted: dict[str, None], assigned_defaults: set[str]) -> str:
    """A line of an unquoted here-document as the shell writes it: `\\$`, `\\\\` and `` \\` `` escapes, `$VAR`,
    `${VAR...}` expansions; command substitutions and what is not known become a marker of the same width."""
    if "$" not in line and "`" not in line and "\\" not in line:
        return line
    from vramlint.helm.templated import width_marker

    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\" and i + 1 < n and line[i + 1] in "$`\\":
            out.append(line[i + 1])
            i += 2
        elif c == "`":
            j = line.find("`", i + 1)
            j = n - 1 if j < 0 else j
            out.append(width_marker(j + 1 - i))
            unknown.setdefault(line[i:j + 1][:40], None)
            i = j + 1
        elif c == "$":
            value, j, name = shell_parameter(line, i, env)
            if value is None:
                out.append(width_marker(j - i))
                unknown.setdefault(f"${name}" if name else line[i:j][:40], None)
            else:
                budget[0] -= len(value)
                if budget[0] < 0:
                    out.append(width_marker(j - i))
                else:
                    out.append(value)
                    if name and (name in assigned_defaults or (name not in env and line[i + 1:i + 2] == "{")):
                        defaulted.setdefault(name, None)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)

# --------------------------------------------------------------------------------------------------------------
# A script in the order the shell runs it
#
# A script's commands in the order the shell runs them, each with the variables it sees when it runs.
#
# The shell expands a command's words when it reaches the command, with the values its variables hold then:
# `MODEL=a; vllm serve $MODEL; MODEL=b` serves a. This walk follows that order (never running anything):
#
# - top-level commands in the order written, plain assignments applied as they come (`ShellVariables`);
# - a function's body (`name() { ... }`, `function name { ... }`) runs where the function is called, with the
#   variables of that moment, and its assignments hold after the call (`local` ones end with it); a function the
#   script defines but never calls is walked at the end, with the variables the script ends with (what a script
#   that sources this one and calls it would see);
# - inside `if`/`case`/a loop an assignment may or may not run: its variable is unknown from there on; a loop
#   runs its body again, so a variable its body assigns is unknown in the whole body, commands before that
#   assignment included (`while true; do vllm serve $M; M=next; done`); a loop's variable (`for M in ...`) too;
# - an assignment after `||`, or after `&&` that follows a test (`[ -n "$X" ] && LEN=...`), runs only as that
#   command ends: unknown (after a chain of commands meant to succeed, `cd /app && MODEL=x`, it is taken);
# - a here-document's body (`cat > run.sh <<EOF`) is data, not a command of this script: it is given with the
#   variables of the moment its command runs (an unquoted delimiter: the shell expands them in it) or with none
#   (a quoted one: written as it is).
#
# Only the commands ``wanted`` picks are expanded (a command's words are split again with the variables it
# names): the rest of a long script costs one split.

_SH_OPENERS = frozenset(("if", "case", "for", "while", "until", "select"))
_SH_LOOPS = frozenset(("for", "while", "until", "select"))
_SH_CLOSERS = frozenset(("fi", "esac", "done"))
_SH_KEYWORDS = frozenset(("then", "do", "else", "elif", "{", "}", "!")) | _SH_OPENERS | _SH_CLOSERS
_SH_TESTS = frozenset(("[", "[[", "test", "!"))
_SH_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:")
MAX_CALL_DEPTH = 8  # functions calling functions; deeper calls are not followed
MAX_FUNCTION_WORDS = 50_000  # a body larger than this (a whole script in `main() {...}`) is walked where written

_Words = list[tuple[Any, int, int, bool]]
_Item = tuple[_Words, Any]  # a simple command's words and the operator after it (None at the end)


class Command:
    """A command the walk reached: its words (text, start, end, operator) split with ``env``, the variables it
    names as they were when it ran (None: assigned but not known; absent: unset)."""

    __slots__ = ("words", "env")

    def __init__(self, words: _Words, env: dict[str, str | None]):
        self.words = words
        self.env = env


class HereDoc:
    """A here-document's body, ``text[start:end]``: ``env`` the variables of the moment its command ran (that
    the body names), or None for a quoted delimiter, whose body is written as it is."""

    __slots__ = ("start", "end", "strip_tabs", "env", "line_env", "runs")

    def __init__(self, start: int, end: int, strip_tabs: bool, env: dict[str, str | None] | None,
                 line_env: dict[str, str | None] | None = None, runs: bool | None = True):
        self.start = start
        self.end = end
        self.strip_tabs = strip_tabs
        self.env = env
        # the variables the command line that takes the body sees (`cat > "$CFG" <<'EOF'`: where it is written)
        self.line_env = line_env
        # whether its command runs: False in a branch that certainly does not, None where it may or may not (a
        # branch whose test is not known, a loop)
        self.runs = runs


class _Loop:
    __slots__ = ("names", "pending")

    def __init__(self) -> None:
        self.names: set[str] = set()  # assigned in the body (the next round sees them)
        self.pending: list[tuple[str, Any, dict[str, str | None] | None, frozenset[str]]] = []


class ScriptWalk:
    """Walk ``text`` (see the module docstring) over ``env``; ``run()`` yields each wanted `Command` and every
    `HereDoc` in the order the shell reaches them. ``variables`` are the values at the point reached."""

    def __init__(self, text: str, env: dict[str, str | None], wanted: Callable[[list[Any]], bool],
                 problems: list[str] | None, where: Callable[[Any], str], read_problems: list[str]):
        self.text = text
        self.vars = ShellVariables(env, problems, where)
        # a long script's commands are split once each: kept in the shared split cache they would hold every
        # word of the script (cmdline._LEXED keeps up to 4,096 splits)
        self.cached = self.vars.cached = len(text) <= _LEXED_MAX_TEXT
        self.wanted = wanted
        self.read_problems = read_problems
        self.functions: dict[str, list[_Item]] = {}
        self.called: set[str] = set()
        self.calls: list[str] = []
        self.locals: list[dict[str, tuple[bool, str | None]]] = []
        self.open: list[str] = []  # compound commands open (if, case, loops), innermost last
        # per open `if` (its index in self.open): [whether the branch being walked runs (None: not known),
        # whether an earlier branch ran (None: not known)]
        self.branches: dict[int, list[bool | None]] = {}
        self.cases: dict[int, _Case] = {}  # per open `case` (its index in self.open)
        self.loops: list[_Loop] = []
        # per open `(`: len(self.open) when it opened, and whether it has a scope of its own
        self.subshell_opened: list[tuple[int, bool]] = []

    @property
    def variables(self) -> dict[str, str | None]:
        return self.vars.values

    def run(self) -> Iterator[Command | HereDoc]:
        yield from self._walk(_Items(_items(self.text)))
        yield from self._close_all()
        for name, body in list(self.functions.items()):
            if name not in self.called:
                self.called.add(name)
                yield from self._call(name, body)
                yield from self._close_all()

    def _close_all(self) -> Iterator[Command | HereDoc]:
        while self.open:
            yield from self._close()
        while self.loops:  # loops a mismatched closer left open
            self.open.append("while")
            yield from self._close()

    # --- the walk ---------------------------------------------------------------------------------------------

    def _walk(self, items: _Items) -> Iterator[Command | HereDoc]:
        after_and_or = False
        while True:
            item = items.next()
            if item is None:
                return
            words, op = item
            texts = [w[0] for w in words]
            defined = self._definition(texts, op, words, items)
            if defined:
                after_and_or = False
                continue
            if op is not None and not words and op[0] in HEREDOC_OPS:
                yield from self._heredoc(op)
                continue
            case = self.cases.get(len(self.open) - 1) if self.open and self.open[-1] == "case" else None
            if case is not None and case.patterns is not None and (not texts or texts[0] != "esac"):
                self._case_patterns(case, words, op)  # `a|b)`: this clause's patterns, not a command
                continue
            k = 0
            while k < len(texts) and texts[k] in _SH_KEYWORDS:
                word = texts[k]
                k += 1
                if word in _SH_OPENERS:
                    self.open.append(word)
                    if word == "if":
                        self.branches[len(self.open) - 1] = [self._condition(words[k:], op), False]
                    if word in _SH_LOOPS:
                        self.loops.append(_Loop())
                    if word in ("for", "select") and k < len(texts) and texts[k] is not None:
                        self._assign(texts[k], None, words[k])  # the loop's variable: each round's own value
                        k += 1
                    if word == "case":
                        self._open_case(words[k:], op)
                        k = len(texts)
                    if word in ("for", "select", "case"):
                        break
                elif word in _SH_CLOSERS:
                    yield from self._close()
                elif word in ("elif", "else"):
                    self._next_branch(word, words[k:], op)
            rest = texts[k:]
            skip = self._not_run()
            conditional = self._conditional(after_and_or)
            if op is not None and op[0] == "(" and rest and self._array(rest, words[k:], items, conditional, skip):
                after_and_or = False
                continue
            if words and not skip:
                self._assign_defaults(words, conditional=conditional)
            if words and (self.wanted([t for t in texts]) or _expands(texts)):
                refs, scope = self._scope(self.text[words[0][1]:words[-1][2]])
                yield from self._reached("command", words, scope, refs)
            if rest and rest[0] is not None and rest[0] in self.functions and rest[0] not in self.calls \
                    and len(self.calls) < MAX_CALL_DEPTH:
                self.called.add(rest[0])
                yield from self._call(rest[0], self.functions[rest[0]], self._arguments(words[k + 1:]))
            elif rest and rest[0] == "shift" and self.calls:
                if not skip:
                    self._shift(rest, conditional=conditional)
            elif rest and not skip:
                self._assign_command(rest, words[k], conditional=conditional)
            # `cmd || X=...` runs on a failure, `[ test ] && X=...` as the environment makes the test come out;
            # `pip install ... && X=...` is a chain meant to go on (under `set -e` a failure stops it anyway)
            after_and_or = op is not None and (op[0] == "||" or (op[0] == "&&" and bool(rest) and rest[0] in _SH_TESTS))
            if op is not None and op[0] == ";;" and self.open and self.open[-1] == "case":
                self._end_clause()
            if op is not None:
                if op[0] == "(":
                    # `NAME=(` opens an array, whose `)` must not end a subshell around it
                    self.subshell_opened.append((len(self.open), not words and self.vars.open_subshell()))
                elif op[0] == ")" and self.subshell_opened and self.subshell_opened[-1][0] == len(self.open):
                    # (a `)` of a case pattern opened inside the subshell is not its end: `case` is open then)
                    if self.subshell_opened.pop()[1]:
                        self.vars.close_subshell()

    def _definition(self, texts: list[Any], op: Any, words: _Words, items: _Items) -> bool:
        """`name() {`, `function name {`, `function name() {`: the body is kept for the calls (True), or it is
        too large and walked where it is written (False, nothing consumed but the header)."""
        name = None
        opens = None
        if len(texts) == 1 and _is_name(texts[0]) and op is not None and op[0] == "(":
            name = texts[0]
        elif len(texts) == 2 and texts[0] == "function" and _is_name(texts[1]) and op is not None and op[0] == "(":
            name = texts[1]
        elif len(texts) >= 3 and texts[0] == "function" and _is_name(texts[1]) and texts[2] == "{":
            name, opens = texts[1], (words[2:], op)
        if name is None:
            return False
        if opens is None:
            close = items.next()
            if close is None or close[0] or close[1] is None or close[1][0] != ")":
                items.push(close)
                return False
            opens = items.next()
            if opens is None or not opens[0] or opens[0][0][0] != "{":
                items.push(opens)  # `f() ( ... )` or a `(`/`)` pair that is not a definition: read as it comes
                return True
        body = self._body(opens, items)
        if body is None:
            return True
        self.functions[name] = body
        return True

    def _body(self, opens: _Item, items: _Items) -> list[_Item] | None:
        """The items of a body from its `{` to the matching `}` (that brace's item left out); None when the body
        is larger than MAX_FUNCTION_WORDS (what was taken is given back to be walked where it stands)."""
        body: list[_Item] = []
        depth = 0
        size = 0
        item: _Item | None = opens
        first = True
        while item is not None:
            words, op = item
            k = 0
            closed = False
            while k < len(words) and words[k][0] in _SH_KEYWORDS:
                if words[k][0] == "{":
                    depth += 1
                elif words[k][0] == "}":
                    depth -= 1
                    if depth == 0:
                        closed = True
                        break
                k += 1
            part = words[:k] if closed else words
            if first:
                part = part[1:]  # the `{` that opens the body
                first = False
            if part or not closed:
                body.append((part, op))
            if closed:
                return body
            size += len(words) + 1
            if size > MAX_FUNCTION_WORDS:
                items.push_all(body)
                return None
            item = items.next()
        return body  # a body never closed: the shell refuses the script, which is not this walk's to say

    # --- branches whose test is known ----------------------------------------------------------------------------

    def _conditional(self, after_and_or: bool) -> bool:
        """Whether a command here may or may not run (a loop, a branch whose test is not known, `a || b`)."""
        n = len(self.open)
        if after_and_or or n > MAX_DECIDED_DEPTH:
            return after_and_or or n > 0
        return any(self.branches.get(i, _UNDECIDED)[0] is not True for i in range(n))

    def _not_run(self) -> bool:
        """Whether a command here is in a branch that certainly does not run (its assignments are not made)."""
        n = len(self.open)
        return 0 < n <= MAX_DECIDED_DEPTH and any(self.branches.get(i, _UNDECIDED)[0] is False for i in range(n))

    def _next_branch(self, word: str, condition: _Words, op: Any) -> None:
        branch = self.branches.get(len(self.open) - 1)
        if branch is None or not self.open or self.open[-1] != "if":
            return
        state, taken = branch
        taken = True if state is True or taken is True else None if state is None or taken is None else False
        if word == "else":
            state = False if taken is True else True if taken is False else None
        else:
            test = self._condition(condition, op)
            state = False if taken is True else test if taken is False else False if test is False else None
        branch[0], branch[1] = state, taken

    def _open_case(self, words: _Words, op: Any) -> None:
        """`case WORD in`: the word as the shell expands it (a variable nothing sets is unset, as in tests), and
        the first clause's patterns when they are on the same line."""
        index = len(self.open) - 1
        self.branches[index] = [False, False]  # nothing of the case runs before a clause's pattern matches
        subject: str | None = None
        if len(words) >= 2 and words[1][0] == "in":
            span = self.text[words[0][1]:words[0][2]]
            refs, scope = self._scope(span)
            for name in refs:
                scope.setdefault(name, "")
            found = [v for v, _, _, o in _lex_tuples(span, scope, [], cached=self.cached) if not o]
            subject = found[0] if len(found) == 1 else None
        case = self.cases[index] = _Case(subject)
        if len(words) > 2:
            self._case_patterns(case, words[2:], op)

    def _case_patterns(self, case: _Case, words: _Words, op: Any) -> None:
        if op is None or op[0] not in ("|", ")"):
            return  # a blank line, or the `(` a pattern may start with
        for value, start, end, _ in words:
            if value is None or not words:
                case.patterns.append(None)
                continue
            span = self.text[start:end]
            _, scope = self._scope(span)
            found = [v for v, _, _, o in _lex_tuples(span, scope, [], cached=self.cached) if not o]
            case.patterns.append(found[0] if len(found) == 1 else None)
        if op[0] == "|":
            return
        branch = self.branches[len(self.open) - 1]
        patterns, case.patterns = case.patterns, None
        if case.subject is None or any(p is None for p in patterns):
            matched = None
        else:
            import fnmatch

            matched = any(fnmatch.fnmatchcase(case.subject, p) for p in patterns)
        taken = branch[1]
        branch[0] = False if taken is True else matched if taken is False else False if matched is False else None

    def _end_clause(self) -> None:
        """`;;`: what the clause did is done; the next clause runs only if its pattern matches."""
        index = len(self.open) - 1
        branch = self.branches.get(index)
        case = self.cases.get(index)
        if branch is None or case is None:
            return
        state, taken = branch
        branch[1] = True if state is True or taken is True else None if state is None or taken is None else False
        branch[0] = False
        case.patterns = []

    def _condition(self, words: _Words, op: Any) -> bool | None:
        """The outcome of an `if`/`elif` test the shell decides from the variables alone: `[ -z "$X" ]`,
        `[ -n ... ]`, `[ "$X" = v ]`, `!=`, `[[ ... == v ]]` without a pattern, `test ...`, `!`; None for any
        other test (a command, a file test, `&&`). A variable the script and its environment do not set is
        unset there, as `${X:-default}` reads it."""
        if op is None or op[0] != ";" or not words or len(words) > 8:
            return None
        span = self.text[words[0][1]:words[-1][2]]
        refs, scope = self._scope(span)
        for name in refs:
            scope.setdefault(name, "")
        values = [v for v, _, _, o in _lex_tuples(span, scope, [], cached=self.cached) if not o]
        negate = False
        while values and values[0] == "!":
            negate = not negate
            values = values[1:]
        if len(values) >= 2 and values[0] == "[" and values[-1] == "]":
            inner, double = values[1:-1], False
        elif len(values) >= 2 and values[0] == "[[" and values[-1] == "]]":
            inner, double = values[1:-1], True
        elif values and values[0] == "test":
            inner, double = values[1:], False
        else:
            return None
        if any(v is None for v in inner):
            return None
        if len(inner) == 1:
            result = inner[0] != ""
        elif len(inner) == 2 and inner[0] in ("-z", "-n"):
            result = (inner[1] == "") == (inner[0] == "-z")
        elif len(inner) == 3 and inner[1] in ("=", "==", "!="):
            if double and any(ch in inner[2] for ch in "*?["):
                return None  # a pattern in [[ ]]
            result = (inner[0] == inner[2]) == (inner[1] != "!=")
        else:
            return None
        return result != negate

    def _arguments(self, words: _Words) -> _Array:
        """A call's arguments as the function sees them (`$1`..., `"$@"`): expanded, None for a word not known
        (and what follows it: an unquoted unknown may be any number of words)."""
        if not words:
            return _Array()
        span = self.text[words[0][1]:words[-1][2]]
        _, scope = self._scope(span)
        out = []
        for value, _, _, op in _lex_tuples(span, scope, self.read_problems, cached=self.cached):
            if op:
                continue
            out.append(value)
            if value is None or len(out) >= MAX_ARRAY_ELEMENTS:
                out.append(None)
                break
        return _Array(out)

    def _shift(self, rest: list[Any], conditional: bool) -> None:
        values = self.vars.values
        args = values.get(POSITIONAL)
        if self.vars.subshells and POSITIONAL not in self.vars.subshells[-1]:
            self.vars.subshells[-1][POSITIONAL] = (POSITIONAL in values, args)
        count = rest[1] if len(rest) > 1 else "1"
        if args is None or conditional or len(rest) > 2 or count is None or not count.isdigit():
            values[POSITIONAL] = None
            return
        n = int(count)
        known = args.index(None) if None in args else len(args)
        if n > known and known < len(args):
            values[POSITIONAL] = None
        elif n <= len(args):  # `shift` past the last argument fails and shifts nothing
            values[POSITIONAL] = _Array(args[n:])

    def _call(self, name: str, body: list[_Item], args: _Array | None = None) -> Iterator[Command | HereDoc]:
        self.calls.append(name)
        self.locals.append({POSITIONAL: (POSITIONAL in self.vars.values, self.vars.values.get(POSITIONAL))})
        self.vars.values[POSITIONAL] = args  # None (a function walked though never called): not known
        open_before = len(self.open)
        yield from self._walk(_Items(iter(body)))
        while len(self.open) > open_before:
            yield from self._close()  # a compound command the body left open ends with the call
        for var, (present, value) in self.locals.pop().items():
            if present:
                self.vars.values[var] = value
            else:
                self.vars.values.pop(var, None)
        self.calls.pop()

    def _close(self) -> Iterator[Command | HereDoc]:
        if not self.open:
            return
        word = self.open.pop()
        self.branches.pop(len(self.open), None)
        self.cases.pop(len(self.open), None)
        if word not in _SH_LOOPS or not self.loops:
            return
        loop = self.loops.pop()
        if self.loops:
            self.loops[-1].names |= loop.names
        for kind, what, scope, refs in loop.pending:
            if scope is not None:
                for var in loop.names & refs:
                    scope[var] = None  # the round after the first sees what the body assigned
                for var in loop.names:
                    if var.endswith("[]") and var[:-2] in refs:
                        scope[var] = None
            yield from self._reached(kind, what, scope, refs)

    def _reached(self, kind: str, what: Any, scope: dict[str, str | None] | None,
                 refs: frozenset[str]) -> Iterator[Command | HereDoc]:
        if self.loops:
            self.loops[-1].pending.append((kind, what, scope, refs))
            return
        if kind == "heredoc":
            yield HereDoc(what[0], what[1], what[2], scope, what[3], what[4])
            return
        start = what[0][1]
        span = self.text[start:what[-1][2]]
        if _SPLIT_AS_WRITTEN.search(span) is None:
            # nothing in it expands, nor is unknown (no `$`, backquote, brace or mark): split over the variables
            # and keeping marks, it gives the words it was split into as written (the second split was a sixth of
            # the shell reading of 20,000 Ansible shell tasks)
            split = _unknown_but_script(what)
        else:
            split = _unknown_but_script([(v, a + start, b + start, o) for v, a, b, o
                                         in _lex_tuples(span, scope, self.read_problems, keep_marks=True,
                                                        cached=self.cached) if not o])
        if split and self.wanted([w[0] for w in split]):
            yield Command(split, scope if scope is not None else {})

    def _heredoc(self, op: Any) -> Iterator[Command | HereDoc]:
        quoted = op[0].endswith("'")
        if quoted:
            refs: frozenset[str] = frozenset()
            scope = None
        else:
            refs, scope = self._scope(self.text[op[1]:op[2]])
        _, line_scope = self._scope(heredoc_command_line(self.text, op[1]))
        runs = False if self._not_run() else None if self._conditional(False) else True
        yield from self._reached("heredoc", (op[1], op[2], "-" in op[0], line_scope, runs), scope, refs)

    def _scope(self, span: str) -> tuple[frozenset[str], dict[str, str | None]]:
        values = self.vars.values
        if "!" in span:
            return frozenset(values), dict(values)  # `${!X}`: a variable named by another's value
        refs = frozenset(_NAME_WORD.findall(span))
        scope = {n: values[n] for n in refs if n in values}
        if POSITIONAL in values and "$" in span:
            scope[POSITIONAL] = values[POSITIONAL]
        if ARGS_DEFAULTED in values and "${" in span:
            scope[ARGS_DEFAULTED] = None
        if "[" in span:
            for n in refs:
                key = array_key(n)
                if key in values:
                    scope[key] = values[key]
        return refs, scope

    def _assign_command(self, ws: list[Any], place: Any, conditional: bool) -> None:
        if ws and ws[0] == "local" and self.locals:
            saved = self.locals[-1]
            for w in ws[1:]:
                if w is not None and not w.startswith("-"):
                    var = w.partition("=")[0]
                    if var not in saved:
                        saved[var] = (var in self.vars.values, self.vars.values.get(var))
        for var in self.vars.assign_command(ws, place, conditional):
            for loop in self.loops:
                loop.names.add(var)

    def _array(self, texts: list[Any], words: _Words, items: _Items, conditional: bool, skip: bool = False) -> bool:
        """`NAME=(...)`, `NAME+=(...)` (after `declare -a`, `local`, ...): the elements up to the closing `)`
        assigned as the shell would (True), the items taken; False when this is not an array assignment."""
        k = 0
        if texts[0] in ("declare", "typeset", "local", "readonly", "export"):
            k = 1
            while k < len(texts) - 1 and texts[k] is not None and texts[k].startswith("-"):
                k += 1
        if k != len(texts) - 1 or texts[k] is None:
            return False
        m = _ARRAY_ASSIGNMENT.fullmatch(texts[k])
        if m is None:
            return False
        if texts[0] == "local" and self.locals:
            saved = self.locals[-1]
            for key in (m.group(1), array_key(m.group(1))):
                if key not in saved:
                    saved[key] = (key in self.vars.values, self.vars.values.get(key))
        elements: _Words = []
        closed = False
        while not closed:
            item = items.next()
            if item is None:
                break  # never closed: the shell refuses the script
            more, op = item
            elements.extend(more)
            closed = op is not None and op[0] == ")"
            if len(elements) > MAX_ARRAY_ELEMENTS:
                elements = []
                conditional = True  # past the bound: not read, so not known
                while not closed and (item := items.next()) is not None:
                    closed = item[1] is not None and item[1][0] == ")"
                break
        name = m.group(1)
        key = array_key(name)
        if skip:
            return True  # in a branch that does not run
        if not closed:
            values: tuple | None = None
        else:
            span = self.text[elements[0][1]:elements[-1][2]] if elements else ""
            _, scope = self._scope(span)
            values = tuple(v for v, _, _, o in _lex_tuples(span, scope, self.read_problems, cached=self.cached) if not o) if span else ()
            if m.group(2):  # `+=`: after what the array (or the plain variable) holds
                before = self.vars.values.get(array_key(name))
                if before is None and array_key(name) in self.vars.values:
                    values = None
                elif before is None:
                    plain = self.vars.values.get(name)
                    values = None if name in self.vars.values and plain is None else \
                        ((plain,) if name in self.vars.values else ()) + values
                else:
                    values = tuple(before) + values
            if values is not None and (len(values) > MAX_ARRAY_ELEMENTS
                                       or sum(len(v or "") for v in values) > MAX_EXPANDED_CHARS):
                values = None  # past the bounds (an array doubled again and again): not followed
            if conditional:
                # a branch may or may not run it: `A+=(...)` leaves what A held, then words not known
                before = self.vars.values.get(key)
                if m.group(2) and before is not None:
                    values = tuple(before) if before[-1:] == (None,) else tuple(before) + (None,)
                elif m.group(2) and key not in self.vars.values and name not in self.vars.values:
                    values = (None,)  # nothing before it: empty, or the words the branch adds
                else:
                    values = None
        if self.vars.subshells and key not in self.vars.subshells[-1]:
            self.vars.subshells[-1][key] = (key in self.vars.values, self.vars.values.get(key))
        self._assign(name, None if values is None else (values[0] if values else ""), words[k])
        self.vars.values[key] = None if values is None else _Array(values)
        for loop in self.loops:
            loop.names.add(array_key(name))
        return True

    def _assign_defaults(self, words: _Words, conditional: bool) -> None:
        """`${NAME:=word}` / `${NAME=word}` in a command assign NAME when the default is used (`: ${MODEL:=x}`
        is how many launchers set their defaults), before the command's later words and the next commands
        read it. ``conditional``: whether the command runs is not known, so neither is the value."""
        span = self.text[words[0][1]:words[-1][2]]
        if "=" not in span or "${" not in span:
            return
        values = self.vars.values
        for name, colon, word in _default_assignments(span):
            present = name in values
            value = values.get(name)
            if present and (value is None or (value != "" or not colon)):
                continue  # set (or unknown): the default is not used, or not known to be
            if conditional:
                self._assign(name, None, words[0])
                continue
            refs, scope = self._scope(word)
            default = _param_word(word, scope, quoted=True)
            self._assign(name, default if isinstance(default, str) else None, words[0])

    def _assign(self, var: str, value: str | None, place: Any) -> None:
        if not _is_name(var):
            return
        self.vars.assign(var, value, place)
        for loop in self.loops:
            loop.names.add(var)


class _Case:
    """An open `case`: its word as expanded (None: not known) and the patterns of the clause being read (None:
    the clause's body is being walked)."""

    __slots__ = ("subject", "patterns")

    def __init__(self, subject: str | None):
        self.subject = subject
        self.patterns: list[str | None] | None = []


class _Items:
    """An iterator of items that takes some back (the look-ahead of a function definition)."""

    __slots__ = ("source", "back")

    def __init__(self, source: Iterator[_Item]):
        self.source = source
        self.back: list[_Item | None] = []

    def next(self) -> _Item | None:
        if self.back:
            return self.back.pop()
        return next(self.source, None)

    def push(self, item: _Item | None) -> None:
        if item is not None:
            self.back.append(item)

    def push_all(self, items: list[_Item]) -> None:
        self.back.extend(reversed(items))


# What makes a command's words, split over its variables with the marks kept, differ from its words as written:
# an expansion (`$`, a backquote), a brace expansion, an unknown mark (cmdline.has_unknown_mark)
_SPLIT_AS_WRITTEN = re.compile("[$`{" + UNKNOWN_MARK + TEMPLATE_MARK + "]")


def _items(text: str) -> Iterator[_Item]:
    """The simple commands of ``text`` as written (variables not expanded), each with the operator after it."""
    source = [_lex_tuples(text, None, [])] if len(text) <= _LEXED_MAX_TEXT else _lex_chunks(text, None, [])
    words: _Words = []
    for chunk in source:
        for word in chunk:
            if word[3]:
                yield words, word
                words = []
            else:
                words.append(word)
    if words:
        yield words, None


def _is_name(text: Any) -> bool:
    return isinstance(text, str) and bool(text) and not text[0].isdigit() and set(text) <= _SH_NAME_CHARS \
        and "=" not in text


_ARRAY_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_DEFAULT_ASSIGNMENT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:?)=")
MAX_DEFAULT_ASSIGNMENTS = 64  # per command: more is not a launcher's defaults


def _default_assignments(span: str) -> list[tuple[str, bool, str]]:
    """The `${NAME:=word}` / `${NAME=word}` expansions of a command's text outside single quotes (where the
    shell expands them): (NAME, whether `:=`, word). One nested in another's word is not taken: it is made only
    when the outer default is used."""
    out: list[tuple[str, bool, str]] = []
    i = 0
    n = len(span)
    double = False
    while i < n and len(out) < MAX_DEFAULT_ASSIGNMENTS:
        ch = span[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'" and not double:
            end = span.find("'", i + 1)
            i = n if end < 0 else end + 1
            continue
        if ch == '"':
            double = not double
        elif ch == "$" and span.startswith("${", i):
            m = _DEFAULT_ASSIGNMENT.match(span, i)
            end = _brace_end(span, i + 2)
            if end < 0:
                return out
            if m is not None:
                out.append((m.group(1), m.group(2) == ":", span[m.end():end]))
            i = end + 1
            continue
        i += 1
    return out


def _expands(texts: list[Any]) -> bool:
    return any(t is not None and ("$" in t or "`" in t) for t in texts)
