"""The part of Jinja2 that Ansible roles' templates and task values use, evaluated over the variables the
repository gives (never running anything): `{{ expression }}`, `{% if %}` / `{% elif %}` / `{% else %}`,
`{% for x in list %}` (and `for k, v in dict.items()`), `{% set x = ... %}`, `{# comments #}`, the `-` whitespace
control, and Ansible's template defaults (`trim_blocks`: the newline after a block tag is removed;
`lstrip_blocks` off).

Expressions: literals, names, `.attr` and `[key]`, `not` / `and` / `or`, comparisons, `in`, `~` and `+`,
`x if c else y`, the tests `defined` / `undefined` / `none` / `string` / `number`, and the filters Ansible roles
use for values (default, bool, int, float, string, lower, upper, trim, length, join, ternary, quote, replace,
regex_replace with a pattern that cannot backtrack without bound, comment, first, last, list, sort, unique). A name the repository does not give is undefined (as where nothing
overrides the role's values: `| default()` and `is defined` act on it as Jinja2 does); a value vramlint cannot
compute (another filter, a lookup, a fact) is Unknown, and so is everything computed from it. An `{% if %}` whose
condition is Unknown has neither branch rendered (said, with its line); a `{{ }}` that is Unknown writes
UNKNOWN_MARK.

Bounded: a loop over at most MAX_LOOP items, at most MAX_OUTPUT characters rendered, variables that name other
variables resolved MAX_DEPTH levels deep.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

MAX_LOOP = 256
MAX_OUTPUT = 1_000_000
MAX_DEPTH = 10
MAX_NESTING = 64  # blocks inside blocks, and brackets inside an expression (deeper: not rendered, said)
MAX_STEPS = 100_000  # loop iterations in all (nested loops multiply)
# items and characters the filters and operators go through in all: a loop's steps are bounded, but each step can
# join, sort or concatenate a value of a million characters (1,600 joins of a 60,000-item list took 12.6 CPU-s)
MAX_WORK = 5_000_000
MAX_DIGITS = 4_000  # a number longer than this is not computed with (Python's int-string limit is 4,300)
_MAX_BITS = int(MAX_DIGITS * 3.33)


class _UnknownType:
    _instance = None

    def __new__(cls) -> _UnknownType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "Unknown"


UNKNOWN: Any = _UnknownType()


class _Undefined:
    """A name the repository does not give (Jinja2's Undefined: `default()` and `is defined` see it)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class _Failed(Exception):
    """The template cannot be read on (a syntax vramlint does not know, a bound passed); ``line``: the template's
    line it is about, where one is (a finding goes there, not on the file's first line)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class Rendered:
    text: str
    where: list[tuple[int, int]]  # (1-based line, 1-based column) in the template of each character of ``text``
    unknown: dict[str, str] = field(default_factory=dict)  # what is unknown -> why
    skipped: list[str] = field(default_factory=list)  # blocks left out, said ("the {% if %} at line 12 ...")
    used: dict[str, Any] = field(default_factory=dict)  # the repository's variables a value was rendered with
    failed: str | None = None  # why the template could not be rendered at all
    failed_line: int | None = None  # the template's line that made it fail, where one is known
    trimmed: list[int] = field(default_factory=list)  # lines whose line break a block tag took (trim_blocks)

    def origin(self, line: int, column: int) -> tuple[int, int]:
        """Where the character at ``line``:``column`` of the rendered text was written in the template."""
        at = _index(self.text, line, column)
        if not self.where:
            return line, column
        return self.where[min(max(at, 0), len(self.where) - 1)]


def laid_out(rendered: Rendered) -> str:
    """The rendered text with each line on the line of the template it was written on, where the lines before
    leave room (blank lines where an `{% if %}` left lines out, lone `\\` lines inside a continued command; a line
    a loop wrote again right after the one before): what a reader that places words by their line sees."""
    out: list[str] = []
    at = 0
    for piece in rendered.text.split("\n"):
        source_line = rendered.where[at][0] if at < len(rendered.where) else None
        at += len(piece) + 1
        slot = source_line - 1 if source_line is not None else len(out)
        slot = max(slot, len(out))
        # a gap after a `\\` continuation is filled with lone `\\` lines, which the shell joins away: a blank
        # line there would end the command
        filler = "\\" if out and out[-1].rstrip().endswith("\\") else ""
        while len(out) < slot:
            out.append(filler)
        out.append(piece)
    return "\n".join(out)


def _index(text: str, line: int, column: int) -> int:
    at = 0
    for _ in range(line - 1):
        nl = text.find("\n", at)
        if nl < 0:
            return len(text)
        at = nl + 1
    return at + column - 1


_TAG = re.compile(r"\{\{|\{%|\{#")


def render(template: str, variables: dict[str, Any], resolve: Any = None, keep_unknown: bool = False) -> Rendered:
    """``template`` rendered with ``variables`` (name -> value). ``resolve(name, value)`` is called for each
    variable a value is taken from (to say where it came from). ``keep_unknown``: an expression whose value is not
    known is written as it was (`{{ x }}`, for a reader of templates), not as UNKNOWN_MARK."""
    engine = _Engine(template, variables, resolve)
    engine.keep_unknown = keep_unknown
    try:
        nodes = engine.parse()
        engine.run(nodes, {})
    except _Failed as exc:
        return Rendered("", [], engine.unknown, engine.skipped, engine.used, str(exc), failed_line=exc.line)
    return Rendered("".join(engine.out), engine.where, engine.unknown, engine.skipped, engine.used,
                    trimmed=engine.trimmed)


def evaluate(expression: str, variables: dict[str, Any]) -> Any:
    """One expression's value (UNKNOWN when it cannot be computed; an undefined name as None)."""
    engine = _Engine("", variables, None)
    try:
        value = engine.expression(expression, 1, {})
    except _Failed:
        return UNKNOWN
    return None if isinstance(value, _Undefined) else value


# --- Parsing the template into nodes -------------------------------------------------------------------------


def _position(text: str, index: int, starts: list[int]) -> tuple[int, int]:
    import bisect

    line = bisect.bisect_right(starts, index)
    return line, index - starts[line - 1] + 1


class _Engine:
    def __init__(self, template: str, variables: dict[str, Any], resolve: Any):
        self.template = template
        self.variables = variables
        self.resolve = resolve
        self.out: list[str] = []
        self.where: list[tuple[int, int]] = []
        self.size = 0
        self.unknown: dict[str, str] = {}
        self.skipped: list[str] = []
        self.used: dict[str, Any] = {}
        self.starts = [0] + [m.end() for m in re.finditer("\n", template)]
        self.resolving: list[str] = []
        self.trimmed: list[int] = []
        self.keep_unknown = False
        self.steps = 0
        self.work = 0
        self.cache: dict[str, Any] = {}  # a variable's value once rendered (shared with the values' own renders)

    # nodes: ("text", str, index) | ("expr", source, line) | ("if", [(cond, line, nodes)...], else_nodes|None)
    #        | ("for", targets, iterable, line, nodes) | ("set", name, source, line)
    def parse(self) -> list[Any]:
        pieces = self._lex()
        nodes, rest = self._block(pieces, 0, ())
        if rest < len(pieces):
            raise _Failed(f"`{{% {pieces[rest][1]} %}}` at line {pieces[rest][3]} closes no block", line=pieces[rest][3])
        return nodes

    def _lex(self) -> list[tuple[str, str, int, int]]:
        """(kind text|expr|stmt, content, index, line) of each piece, whitespace control applied."""
        text = self.template
        pieces: list[tuple[str, str, int, int]] = []
        i, n = 0, len(text)
        strip_next = False
        while i < n:
            m = _TAG.search(text, i)
            end = m.start() if m else n
            chunk_start = i
            chunk = text[i:end]
            if strip_next:
                stripped = chunk.lstrip()
                chunk_start += len(chunk) - len(stripped)
                chunk = stripped
                strip_next = False
            if m is None:
                if chunk:
                    pieces.append(("text", chunk, chunk_start, 0))
                break
            opener = m.group(0)
            closer = {"{{": "}}", "{%": "%}", "{#": "#}"}[opener]
            close = text.find(closer, m.end())
            if close < 0:
                at = _position(text, m.start(), self.starts)[0]
                raise _Failed(f"an unclosed `{opener}` at line {at}", line=at)
            inner = text[m.end():close]
            if opener == "{%" and re.fullmatch(r"-?\s*raw\s*-?", inner):
                # `{% raw %}...{% endraw %}`: the text between is written as it is (`{{.Names}}` for docker)
                end = re.compile(r"\{%-?\s*endraw\s*-?%\}").search(text, close + 2)
                if end is None:
                    at = _position(text, m.start(), self.starts)[0]
                    raise _Failed(f"the `{{% raw %}}` at line {at} has no `{{% endraw %}}`", line=at)
                if inner.startswith("-"):
                    chunk = chunk.rstrip()
                if chunk:
                    pieces.append(("text", chunk, chunk_start, 0))
                body_start = close + 2
                if text.startswith("\n", body_start):
                    body_start += 1  # trim_blocks
                if end.start() > body_start:
                    pieces.append(("text", text[body_start:end.start()], body_start, 0))
                i = end.end()
                if text.startswith("\n", i):
                    i += 1
                continue
            if inner.startswith("-"):
                chunk = chunk.rstrip()
                inner = inner[1:]
            if chunk:
                pieces.append(("text", chunk, chunk_start, 0))
            after = close + 2
            if inner.endswith("-"):
                inner = inner[:-1]
                strip_next = True
            line = _position(text, m.start(), self.starts)[0]
            if opener == "{{":
                pieces.append(("expr", inner.strip(), m.start(), line))
            elif opener == "{%":
                pieces.append(("stmt", inner.strip(), m.start(), line))
                if inner.endswith("+"):
                    pieces[-1] = ("stmt", inner[:-1].strip(), m.start(), line)  # `+%}`: the line break is kept
                elif not strip_next and text.startswith("\n", after):
                    after += 1  # trim_blocks (Ansible's template module default)
                    self.trimmed.append(_position(text, after - 1, self.starts)[0])
            i = after
        return pieces

    def _block(self, pieces: list[Any], i: int, ends: tuple[str, ...], depth: int = 0) -> tuple[list[Any], int]:
        if depth > MAX_NESTING:
            raise _Failed(f"blocks nested deeper than {MAX_NESTING}")
        nodes: list[Any] = []
        while i < len(pieces):
            kind, content, index, line = pieces[i]
            if kind == "text":
                nodes.append(("text", content, index))
                i += 1
                continue
            if kind == "expr":
                nodes.append(("expr", content, line, index))
                i += 1
                continue
            word = content.split(None, 1)[0] if content else ""
            if word in ends:
                return nodes, i
            if word == "if":
                branches = []
                cond, cline = content[2:].strip(), line
                else_nodes = None
                i += 1
                while True:
                    body, i = self._block(pieces, i, ("elif", "else", "endif"), depth + 1)
                    if i >= len(pieces):
                        raise _Failed(f"the `{{% if %}}` at line {cline} has no `{{% endif %}}`", line=cline)
                    branches.append((cond, cline, body))
                    end_word = pieces[i][1].split(None, 1)[0]
                    if end_word == "elif":
                        cond, cline = pieces[i][1][4:].strip(), pieces[i][3]
                        i += 1
                        continue
                    if end_word == "else":
                        else_nodes, i = self._block(pieces, i + 1, ("endif",), depth + 1)
                        if i >= len(pieces):
                            raise _Failed(f"the `{{% if %}}` at line {line} has no `{{% endif %}}`", line=line)
                    i += 1
                    break
                nodes.append(("if", branches, else_nodes, line))
                continue
            if word == "for":
                m = re.fullmatch(r"for\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s+in\s+(.+?)"
                                 r"(?:\s+if\s+(.+))?", content, re.S)
                if m is None:
                    raise _Failed(f"a `{{% {content} %}}` at line {line} vramlint does not read", line=line)
                body, i = self._block(pieces, i + 1, ("endfor", "else"), depth + 1)
                if i >= len(pieces):
                    raise _Failed(f"the `{{% for %}}` at line {line} has no `{{% endfor %}}`", line=line)
                empty = None
                if pieces[i][1].split(None, 1)[0] == "else":
                    empty, i = self._block(pieces, i + 1, ("endfor",), depth + 1)
                    if i >= len(pieces):
                        raise _Failed(f"the `{{% for %}}` at line {line} has no `{{% endfor %}}`", line=line)
                targets = [t.strip() for t in m.group(1).split(",")]
                nodes.append(("for", targets, m.group(2), m.group(3), line, body, empty))
                i += 1
                continue
            if word == "set":
                m = re.fullmatch(r"set\s+([A-Za-z_]\w*)\s*=\s*(.+)", content, re.S)
                if m is None:
                    raise _Failed(f"a `{{% {content} %}}` at line {line} vramlint does not read (a block set)", line=line)
                nodes.append(("set", m.group(1), m.group(2), line))
                i += 1
                continue
            raise _Failed(f"a `{{% {word} %}}` statement at line {line}, which vramlint does not render", line=line)
        return nodes, i

    # --- Running ------------------------------------------------------------------------------------------

    def _emit(self, text: str, where: Any) -> None:
        """``where``: the template index of each character (an int: the same place for all)."""
        self.size += len(text)
        if self.size > MAX_OUTPUT:
            raise _Failed(f"renders to more than {MAX_OUTPUT:,} characters")
        self.out.append(text)
        if isinstance(where, int):
            self.where.extend([_position(self.template, where, self.starts)] * len(text))
        else:
            self.where.extend(where)

    def charge(self, value: Any) -> None:
        """Count the items or characters an operation goes through against MAX_WORK."""
        if isinstance(value, (str, list, dict, tuple)):
            self.work += len(value)
            if self.work > MAX_WORK:
                raise _Failed(f"its filters and operators go through more than {MAX_WORK:,} items and characters")

    def run(self, nodes: list[Any], local: dict[str, Any]) -> None:
        from vramlint.cmdline import UNKNOWN_MARK

        for node in nodes:
            kind = node[0]
            if kind == "text":
                _, text, index = node
                # each character's (line, column), a line at a time: a loop per character was a third of the
                # reading of 20,000 shell tasks in one playbook
                places: list[tuple[int, int]] = []
                line, column = _position(self.template, index, self.starts)
                pieces = text.split("\n")
                last = len(pieces) - 1
                for k, piece in enumerate(pieces):
                    places.extend(zip(repeat(line), range(column, column + len(piece))))
                    if k < last:
                        places.append((line, column + len(piece)))  # the line break itself
                        line, column = line + 1, 1
                self._emit(text, places)
            elif kind == "expr":
                _, source, line, index = node
                value = self.expression(source, line, local)
                if value is UNKNOWN or isinstance(value, _Undefined):
                    if isinstance(value, _Undefined):
                        self.unknown.setdefault(value.name, "not set")
                    self._emit("{{ " + source + " }}" if self.keep_unknown else UNKNOWN_MARK, index)
                else:
                    self._emit(_text(value), index)
            elif kind == "if":
                _, branches, else_nodes, line = node
                taken = None
                for cond, cline, body in branches:
                    value = self.expression(cond, cline, local)
                    if isinstance(value, _Undefined):
                        # Ansible's undefined variables fail a test of them (AnsibleUndefined): where the play
                        # runs something else sets it, or the task fails - which branch is not known here
                        self.unknown.setdefault(value.name, "not set")
                        value = UNKNOWN
                    if value is UNKNOWN:
                        self.skipped.append(f"the `{{% if {_short(cond)} %}}` at line {cline} (its condition is not "
                                            "known here: neither branch read)")
                        taken = False
                        break
                    if _truth(value):
                        taken = body
                        break
                if taken is None and else_nodes is not None:
                    taken = else_nodes
                if taken:
                    self.run(taken, local)
            elif kind == "for":
                _, targets, source, condition, line, body, empty = node
                seq = self.expression(source, line, local)
                if seq is UNKNOWN or isinstance(seq, _Undefined):
                    why = "not known here" if seq is UNKNOWN else f"{seq.name} is not set"
                    self.skipped.append(f"the `{{% for %}}` at line {line} ({why}: its body is not read)")
                    continue
                items = _iterate(seq)
                if items is None:
                    self.skipped.append(f"the `{{% for %}}` at line {line} (not a list: its body is not read)")
                    continue
                if len(items) > MAX_LOOP:
                    raise _Failed(f"the `{{% for %}}` at line {line} runs over more than {MAX_LOOP} items", line=line)
                ran = False
                for item in items:
                    self.steps += 1
                    if self.steps > MAX_STEPS:
                        raise _Failed(f"loops run more than {MAX_STEPS:,} times")
                    scope = dict(local)
                    if len(targets) == 1:
                        scope[targets[0]] = item
                    else:
                        parts = list(item) if isinstance(item, (list, tuple)) else None
                        if parts is None or len(parts) != len(targets):
                            raise _Failed(f"the `{{% for %}}` at line {line} unpacks a value of another shape", line=line)
                        scope.update(zip(targets, parts, strict=True))
                    if condition is not None:
                        keep = self.expression(condition, line, scope)
                        if keep is UNKNOWN:
                            self.skipped.append(f"the `{{% for %}}` at line {line} (its filter is not known here)")
                            break
                        if not _truth(keep):
                            continue
                    ran = True
                    self.run(body, scope)
                if not ran and empty:
                    self.run(empty, local)
            elif kind == "set":
                _, name, source, line = node
                local[name] = self.expression(source, line, local)

    # --- Expressions --------------------------------------------------------------------------------------

    def expression(self, source: str, line: int, local: dict[str, Any]) -> Any:
        try:
            return _Parser(source, self, local, line).parse()
        except _Failed:
            self.unknown.setdefault("{{ " + _short(source) + " }}", "an expression vramlint does not read")
            return UNKNOWN

    def lookup(self, name: str, local: dict[str, Any]) -> Any:
        if name in local:
            return local[name]
        if name in ("true", "True"):
            return True
        if name in ("false", "False"):
            return False
        if name in ("none", "None"):
            return None
        if name not in self.variables:
            return _Undefined(name)
        if name in self.cache:
            return self.cache[name]
        if name in self.resolving or len(self.resolving) >= MAX_DEPTH:
            self.unknown.setdefault(name, "names itself, or other variables too deep")
            return UNKNOWN
        raw = self.variables[name]
        if self.resolve is not None:
            raw = self.resolve(name, raw)
        self.resolving.append(name)
        try:
            value = self._lazy(raw, local)
        finally:
            self.resolving.pop()
        if value is UNKNOWN:
            self.unknown.setdefault(name, "its value is not known here")
        else:
            self.used.setdefault(name, raw)
        self.cache[name] = value
        return value

    def _lazy(self, value: Any, local: dict[str, Any]) -> Any:
        """A variable's value with the templates in its strings rendered (Ansible templates values lazily)."""
        if isinstance(value, str):
            if "{{" not in value and "{%" not in value:
                return str(value)
            inner = re.fullmatch(r"\s*\{\{(.*?)\}\}\s*", value, re.S)
            if inner is not None and "{{" not in inner.group(1):
                return self.expression(inner.group(1), 0, {})  # a single expression keeps its type (a list)
            sub = _Engine(value, self.variables, self.resolve)
            sub.resolving, sub.cache = list(self.resolving), self.cache
            try:
                sub.run(sub.parse(), {})
            except _Failed:
                return UNKNOWN
            self.used.update(sub.used)
            text = "".join(sub.out)
            from vramlint.cmdline import UNKNOWN_MARK

            if UNKNOWN_MARK in text or sub.skipped:
                self.unknown.update((k, v) for k, v in sub.unknown.items() if k not in self.unknown)
                return UNKNOWN
            return text
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                out[str(k)] = self._lazy(v, local)
            return out
        if isinstance(value, list):
            return [self._lazy(v, local) for v in value]
        return value


def _short(text: str, limit: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _truth(value: Any) -> bool:
    if isinstance(value, _Undefined):
        return False
    return bool(value)


def _text(value: Any) -> str:
    """What `{{ value }}` writes (Jinja2's str())."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int) and value.bit_length() > _MAX_BITS:
        raise _Failed(f"a number past {MAX_DIGITS:,} digits")
    return str(value)


def _iterate(value: Any) -> list[Any] | None:
    if isinstance(value, dict):
        return list(value.keys())
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        return list(value)
    return None


def _ansible_bool(value: Any) -> Any:
    """Ansible's `bool` filter (to_bool): yes/on/1/true (any case) and 1 are True, others False."""
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, _Undefined) or value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.lower() in ("yes", "on", "1", "true")
    return value == 1


# --- The expression parser (precedence as Jinja2's: or, and, not, comparisons, ~ and +, filters, postfix) ---


MAX_PATTERN_CHARS = 256  # a regex_replace pattern longer than this is not run
MAX_REPLACED_CHARS = 256  # nor one over a longer value (a model id, an image tag, a path: shorter)
MAX_OPEN_QUANTIFIERS = 2  # `*`, `+`, `{n,}` in one pattern: k of them can take ~n**(k+1) steps on n characters
# a quantified group holding a quantifier or alternatives (`(a+)+`, `(.*)*`, `(x|xy){2,}`), or a backreference:
# patterns whose matching can take exponential time on a short value (catastrophic backtracking)
_BACKTRACKING = re.compile(r"\([^()]*(?:[+*]|\{\d*,\d*\}|\|)[^()]*\)\s*(?:[+*]|\{\d*,\d*\})|\\[1-9]")


def _open_quantifiers(pattern: str) -> int:
    """The unbounded quantifiers of a regular expression (`*`, `+`, `{n,}`), escapes and character classes aside."""
    bare = re.sub(r"\[(?:\\.|[^\]\\])*\]", "", re.sub(r"\\.", "", pattern))
    return len(re.findall(r"[*+]|\{\d*,\}", bare))


def _string_literal(body: str, line: int) -> str:
    """A string literal's value as Jinja2's lexer reads it (lexer.py: the text between the quotes,
    `.encode("ascii", "backslashreplace").decode("unicode-escape")`: `\\\\1` is `\\1`, `\\d` stays `\\d`, `\\n` a
    newline); an escape Python's codec refuses (`\\x` without hex digits) is a template Jinja2 refuses too."""
    if "\\" not in body:
        return body
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (an unknown escape such as `\\d` is kept, with a DeprecationWarning)
        try:
            return body.encode("ascii", "backslashreplace").decode("unicode-escape")
        except UnicodeDecodeError as exc:
            raise _Failed(f"a string literal Jinja2 cannot read at line {line} ({exc.reason})", line=line) from None


_TOKEN = re.compile(r"""\s*(?:
    (?P<num>\d+\.\d+|\d+)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op>==|!=|>=|<=|//|\*\*|[-+*/%~|.,:()\[\]{}<>])
)""", re.X | re.S)


class _Parser:
    def __init__(self, source: str, engine: _Engine, local: dict[str, Any], line: int):
        self.engine, self.local, self.line, self.source = engine, local, line, source
        self.tokens: list[tuple[str, Any]] = []
        i = 0
        while i < len(source):
            m = _TOKEN.match(source, i)
            if m is None:
                if source[i:].strip() == "":
                    break
                raise _Failed(f"an expression vramlint does not read at line {line}: {_short(source)}", line=line)
            i = m.end()
            kind = m.lastgroup
            value = m.group(kind)
            if kind == "num":
                if len(value) > MAX_DIGITS:
                    raise _Failed(f"a number of {len(value):,} digits at line {line}", line=line)
                self.tokens.append(("lit", float(value) if "." in value else int(value)))
            elif kind == "str":
                self.tokens.append(("lit", _string_literal(value[1:-1], line)))
            elif kind == "name":
                self.tokens.append(("name", value))
            else:
                self.tokens.append(("op", value))
        self.i = 0
        self.depth = 0

    def parse(self) -> Any:
        if not self.tokens:
            return UNKNOWN
        value = self._conditional()
        if self.i < len(self.tokens):
            return self._unknown_expression()
        return value

    def _unknown_expression(self) -> Any:
        self.engine.unknown.setdefault("{{ " + _short(self.source) + " }}", "an expression vramlint does not evaluate")
        return UNKNOWN

    def _peek(self, kind: str | None = None, value: Any = None) -> bool:
        if self.i >= len(self.tokens):
            return False
        k, v = self.tokens[self.i]
        return (kind is None or k == kind) and (value is None or v == value)

    def _take(self, kind: str, value: Any = None) -> Any:
        if not self._peek(kind, value):
            raise _Failed(f"an expression vramlint does not read at line {self.line}: {_short(self.source)}", line=self.line)
        self.i += 1
        return self.tokens[self.i - 1][1]

    def _word(self, word: str) -> bool:
        if self._peek("name", word):
            self.i += 1
            return True
        return False

    def _conditional(self) -> Any:
        value = self._or()
        if self._word("if"):
            cond = self._or()
            other = self._or() if self._word("else") else _Undefined("(else)")
            if cond is UNKNOWN:
                return UNKNOWN
            return value if _truth(cond) else other
        return value

    def _or(self) -> Any:
        value = self._and()
        while self._word("or"):
            right = self._and()
            if value is not UNKNOWN and _truth(value):
                continue
            value = right if value is not UNKNOWN else (UNKNOWN if right is UNKNOWN or not _truth(right) else right)
        return value

    def _and(self) -> Any:
        value = self._not()
        while self._word("and"):
            right = self._not()
            if value is not UNKNOWN and not _truth(value):
                continue
            value = right if value is not UNKNOWN else (right if right is not UNKNOWN and not _truth(right)
                                                        else UNKNOWN)
        return value

    def _not(self) -> Any:
        if self._word("not"):
            value = self._not()
            return UNKNOWN if value is UNKNOWN else not _truth(value)
        return self._compare()

    def _compare(self) -> Any:
        value = self._concat()
        while True:
            if self._peek("op") and self.tokens[self.i][1] in ("==", "!=", ">", "<", ">=", "<="):
                op = self._take("op")
                right = self._concat()
                value = _compare(op, value, right)
            elif self._peek("name", "in") or (self._peek("name", "not") and self.i + 1 < len(self.tokens)
                                               and self.tokens[self.i + 1] == ("name", "in")):
                negate = self._word("not")
                self._take("name", "in")
                right = self._concat()
                if value is UNKNOWN or right is UNKNOWN or isinstance(right, _Undefined):
                    value = UNKNOWN
                else:
                    try:
                        value = (value in right) != negate
                    except TypeError:
                        value = UNKNOWN
            elif self._peek("name", "is"):
                self.i += 1
                negate = self._word("not")
                test = self._take("name")
                value = _test(test, value)
                if value is not UNKNOWN and negate:
                    value = not value
            else:
                return value

    def _concat(self) -> Any:
        value = self._sum()
        while self._peek("op", "~"):
            self.i += 1
            right = self._sum()
            value = UNKNOWN if UNKNOWN in (value, right) or any(isinstance(v, _Undefined) for v in (value, right)) \
                else _text(value) + _text(right)
            if isinstance(value, str) and len(value) > MAX_OUTPUT:
                raise _Failed("a value past the output bound")
            self.engine.charge(value)
        return value

    def _sum(self) -> Any:
        value = self._filtered()
        while self._peek("op") and self.tokens[self.i][1] in ("+", "-", "*", "/", "//", "%"):
            op = self._take("op")
            right = self._filtered()
            if value is UNKNOWN or right is UNKNOWN or isinstance(value, _Undefined) or isinstance(right, _Undefined):
                value = UNKNOWN
                continue
            if op == "*" and any(isinstance(v, (str, list)) for v in (value, right)):
                count = right if isinstance(value, (str, list)) else value
                length = len(value) if isinstance(value, (str, list)) else len(right)
                if not isinstance(count, int) or count * length > MAX_OUTPUT:
                    value = UNKNOWN
                    continue
            try:
                value = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                         "/": lambda a, b: a / b, "//": lambda a, b: a // b, "%": lambda a, b: a % b}[op](value, right)
            except (TypeError, ZeroDivisionError, ValueError, OverflowError):
                value = UNKNOWN
            if isinstance(value, str) and len(value) > MAX_OUTPUT:
                raise _Failed("a value past the output bound")
            if isinstance(value, int) and value.bit_length() > _MAX_BITS:
                raise _Failed(f"a number past {MAX_DIGITS:,} digits")
            self.engine.charge(value)
        return value

    def _filtered(self) -> Any:
        value = self._unary()
        while self._peek("op", "|"):
            self.i += 1
            name = self._take("name")
            args: list[Any] = []
            kwargs: dict[str, Any] = {}
            if self._peek("op", "("):
                args = self._arguments(kwargs)
            value = self._filter(name, value, args, kwargs)
        return value

    def _arguments(self, kwargs: dict[str, Any] | None = None) -> list[Any]:
        """The positional arguments of a call; keyword ones go to ``kwargs`` when given (else taken as positional
        values, which the filters that ignore their keywords read alike)."""
        self._take("op", "(")
        args: list[Any] = []
        while not self._peek("op", ")"):
            if self._peek("name") and self.i + 1 < len(self.tokens) and self.tokens[self.i + 1] == ("op", "="):
                keyword = self.tokens[self.i][1]
                self.i += 2
                if kwargs is not None:
                    kwargs[keyword] = self._conditional()
                    if not self._peek("op", ","):
                        break
                    self.i += 1
                    continue
            args.append(self._conditional())
            if not self._peek("op", ","):
                break
            self.i += 1
        self._take("op", ")")
        return args

    def _regex_replace(self, value: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Ansible's regex_replace (plugins/filter/core.py): Python's re.sub of every match (`count` of them when
        given), `ignorecase` / `multiline` its flags, in that positional order after the pattern and replacement.
        A pattern that is invalid (the task fails), may backtrack without bound or is past the bounds is not run:
        Unknown, said."""
        names = ("pattern", "replacement", "ignorecase", "multiline", "count")
        given = dict(zip(names, args, strict=False))
        given.update((k, v) for k, v in kwargs.items() if k in names)
        pattern, replacement = given.get("pattern", ""), given.get("replacement", "")
        count = given.get("count", 0)
        if not isinstance(pattern, str) or not isinstance(replacement, str) or \
                not isinstance(count, int) or isinstance(count, bool) or count < 0:
            return UNKNOWN
        why = None
        if len(pattern) > MAX_PATTERN_CHARS or len(value) > MAX_REPLACED_CHARS:
            why = (f"past vramlint's bounds for it ({MAX_PATTERN_CHARS} characters of pattern, "
                   f"{MAX_REPLACED_CHARS:,} of value)")
        elif _BACKTRACKING.search(pattern) or _open_quantifiers(pattern) > MAX_OPEN_QUANTIFIERS:
            why = "its pattern may backtrack without bound (a quantified group holding a quantifier or alternatives, " \
                  f"a backreference, or more than {MAX_OPEN_QUANTIFIERS} open quantifiers): not run"
        else:
            flags = (re.I if _truth(given.get("ignorecase", False)) else 0) | \
                (re.M if _truth(given.get("multiline", False)) else 0)
            try:
                return re.sub(pattern, replacement, value, count=count, flags=flags)
            except (re.error, IndexError) as exc:
                why = f"it fails ({exc}), so does the task where it runs"
        self.engine.unknown.setdefault(f"| regex_replace('{_short(pattern)}', ...)", why)
        return UNKNOWN

    def _filter(self, name: str, value: Any, args: list[Any], kwargs: dict[str, Any] | None = None) -> Any:
        if name in ("default", "d"):
            fallback = args[0] if args else ""
            if isinstance(value, _Undefined) or (len(args) > 1 and args[1] is True and value is not UNKNOWN
                                                 and not _truth(value)):
                return fallback
            return value
        if value is UNKNOWN or any(a is UNKNOWN for a in args):
            return UNKNOWN
        if name == "mandatory":
            return UNKNOWN if isinstance(value, _Undefined) else value
        if isinstance(value, _Undefined):
            self.engine.unknown.setdefault(value.name, "not set")
            return UNKNOWN
        self.engine.charge(value)
        try:
            if name == "bool":
                return _ansible_bool(value)
            if name == "int":
                try:
                    return int(float(value)) if not isinstance(value, bool) else int(value)
                except (TypeError, ValueError):
                    return args[0] if args else 0
            if name == "float":
                try:
                    return float(value)
                except (TypeError, ValueError):
                    return 0.0
            if name == "string":
                return _text(value)
            if name == "lower":
                return _text(value).lower()
            if name == "upper":
                return _text(value).upper()
            if name == "trim":
                return _text(value).strip()
            if name in ("length", "count"):
                return len(value)
            if name == "join":
                sep = args[0] if args else ""
                return str(sep).join(_text(v) for v in value)
            if name == "ternary":
                if len(args) < 2:
                    return UNKNOWN
                if value is None and len(args) > 2:
                    return args[2]
                return args[0] if _truth(value) else args[1]
            if name in ("to_json", "tojson"):
                import json

                return json.dumps(value)
            if name == "quote":
                return shlex.quote(_text(value))
            if name == "replace" and len(args) >= 2:
                return _text(value).replace(_text(args[0]), _text(args[1]))
            if name == "regex_replace":
                return self._regex_replace(_text(value), args, kwargs or {})
            if name == "comment":
                return "\n".join("# " + line if line else "#" for line in _text(value).split("\n"))
            if name == "first":
                return list(value)[0] if value else UNKNOWN
            if name == "last":
                return list(value)[-1] if value else UNKNOWN
            if name == "list":
                return list(value)
            if name == "sort":
                return sorted(value)
            if name == "unique":
                # first occurrences in order; a set for what hashes (a list membership test per item was
                # quadratic: 60,000 role-default items took 13 CPU-s)
                out: list[Any] = []
                seen: set[Any] = set()
                for v in value:
                    try:
                        if v in seen:
                            continue
                        seen.add(v)
                    except TypeError:
                        if v in out:
                            continue
                    out.append(v)
                return out
        except (TypeError, ValueError, IndexError, KeyError):
            return UNKNOWN
        self.engine.unknown.setdefault(f"| {name}", "a filter vramlint does not evaluate")
        return UNKNOWN

    def _unary(self) -> Any:
        if self._peek("op", "-"):
            self.i += 1
            value = self._unary()
            return -value if isinstance(value, (int, float)) and not isinstance(value, bool) else UNKNOWN
        return self._postfix(self._primary())

    def _primary(self) -> Any:
        if self._peek("op") and self.tokens[self.i][1] in "([{":
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise _Failed(f"brackets nested deeper than {MAX_NESTING}")
        if self._peek("lit"):
            return self._take("lit")
        if self._peek("op", "("):
            self.i += 1
            value = self._conditional()
            self._take("op", ")")
            return value
        if self._peek("op", "["):
            self.i += 1
            items = []
            while not self._peek("op", "]"):
                items.append(self._conditional())
                if not self._peek("op", ","):
                    break
                self.i += 1
            self._take("op", "]")
            return UNKNOWN if any(v is UNKNOWN for v in items) else items
        if self._peek("op", "{"):
            self.i += 1
            out: dict[Any, Any] = {}
            while not self._peek("op", "}"):
                key = self._conditional()
                self._take("op", ":")
                out[key] = self._conditional()
                if not self._peek("op", ","):
                    break
                self.i += 1
            self._take("op", "}")
            return out
        name = self._take("name")
        if self._peek("op", "("):  # a function call (lookup, query, range): not evaluated
            self._arguments()
            self.engine.unknown.setdefault(f"{name}(...)", "a function vramlint does not call")
            return UNKNOWN
        return self.engine.lookup(name, self.local)

    def _postfix(self, value: Any) -> Any:
        while True:
            if self._peek("op", "."):
                self.i += 1
                attr = self._take("name")
                if self._peek("op", "("):
                    args = self._arguments()
                    value = _method(value, attr, args)
                else:
                    value = _item(value, attr)
            elif self._peek("op", "["):
                self.i += 1
                key = self._conditional()
                self._take("op", "]")
                value = UNKNOWN if key is UNKNOWN else _item(value, key)
            else:
                return value


def _item(value: Any, key: Any) -> Any:
    if value is UNKNOWN:
        return UNKNOWN
    if isinstance(value, _Undefined):
        return _Undefined(f"{value.name}.{key}")
    try:
        if isinstance(value, dict):
            if key in value:
                return value[key]
            return _Undefined(str(key)) if str(key) not in value else value[str(key)]
        if isinstance(value, (list, tuple, str)) and isinstance(key, int):
            return value[key]
    except (IndexError, KeyError, TypeError):
        pass
    return _Undefined(str(key))


def _method(value: Any, name: str, args: list[Any]) -> Any:
    if value is UNKNOWN or any(a is UNKNOWN for a in args):
        return UNKNOWN
    if isinstance(value, dict) and name in ("items", "keys", "values") and not args:
        return [list(p) for p in value.items()] if name == "items" else list(getattr(value, name)())
    if isinstance(value, dict) and name == "get" and args:
        return value.get(args[0], args[1] if len(args) > 1 else None)
    if isinstance(value, str) and name in ("lower", "upper", "strip") and not args:
        return getattr(value, name)()
    if isinstance(value, str) and name in ("startswith", "endswith") and args:
        return getattr(value, name)(str(args[0]))
    return UNKNOWN


def _compare(op: str, a: Any, b: Any) -> Any:
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    a = None if isinstance(a, _Undefined) else a
    b = None if isinstance(b, _Undefined) else b
    try:
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        return a > b if op == ">" else a < b if op == "<" else a >= b if op == ">=" else a <= b
    except TypeError:
        return UNKNOWN


def _test(name: str, value: Any) -> Any:
    if name == "defined":
        return UNKNOWN if value is UNKNOWN else not isinstance(value, _Undefined)
    if name == "undefined":
        return UNKNOWN if value is UNKNOWN else isinstance(value, _Undefined)
    if value is UNKNOWN:
        return UNKNOWN
    if name == "none":
        return value is None
    if name == "string":
        return isinstance(value, str)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name in ("true", "false"):
        return value is (name == "true")
    return UNKNOWN
