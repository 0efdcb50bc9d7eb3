"""A small, bounded evaluator for the Go-template forms Helm charts use around container specs.

It is not a Go-template engine. It evaluates what deployment templates commonly do with values
(fields, `if`/`with`/`range`, `define`/`include`, pipelines through quote/default/toYaml/nindent/...),
and keeps, for every character of its output, where that character came from: a values key
(a `Location` in a values file) or a template character. Anything it cannot evaluate becomes an
UNKNOWN marker in the output, never a guess; the reasons are collected once per chart.

Numbers follow Helm: values are decoded as float64, so `{{ .Values.n }}` with 1000000 prints `1e+06`.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from dataclasses import field
from typing import Any

from vramlint.lean_dataclass import dataclass
from vramlint.model import Location

# The brackets of yamlload.TEMPLATE_OPEN and TEMPLATE_CLOSE (vramlint.helm.templated.neutralize writes them too),
# so the extractors read such words as unknown.
UNKNOWN_MARKER = "\u2983unknown\u2984"
# vramlint's own limits (Helm has none: a template that grows without bound runs Helm out of memory). They are
# far above what a real chart needs and keep one chart under about a second and 100 MB: every origin-tracked
# character costs about 9 bytes.
MAX_STRING_CHARS = 1_000_000  # one string value, and one template's output
MAX_OUTPUT_CHARS = MAX_STRING_CHARS
MAX_STEPS = 100_000  # nodes, range iterations (empty bodies too) and function calls of one template
MAX_CHART_STEPS = 400_000  # the same, for all the templates of one chart with one set of values
# A step costs from 2 to 30 microseconds; the time limit of a chart (all its sets of values together) is a
# backstop for what the step count does not weigh (`vramlint.helm.extract_charts` sets it).
CHART_SECONDS = 2.0
# ... and of all the charts of a run together: ten charts made to run out their 2 s would otherwise take 20 s. A
# real chart takes well under 0.1 s; a chart met after this is not evaluated, and says so.
RUN_CHART_SECONDS = 3.0


class RunDeadline(float):
    """A deadline (time.monotonic()) that is the run's, for all its charts (RUN_CHART_SECONDS), not the chart's
    own CHART_SECONDS: what the finding says when it passes."""
MAX_CHARS_MADE = 8_000_000  # characters made by functions and written out, in one template
MAX_LIST_ITEMS = 100_000  # one list (`until`, `concat`, ...)
MAX_FROM_YAML_CHARS = 200_000  # a document given to fromYaml
MAX_NODES = 200_000  # a structure walked by toYaml/toJson/%v/fromYaml/deepCopy (aliases expanded)
MAX_INCLUDE_DEPTH = 40
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


class TemplateError(Exception):
    """Helm itself would fail here (`required`, `fail`, nil pointer): reported with the template position."""

    def __init__(self, message: str, origin: tuple[int, int] | None = None):
        super().__init__(message)
        self.origin = origin


class UnsetValue(TemplateError):
    """A nil pointer under a `.Values` key the values leave unset (or null): Helm's "nil pointer evaluating
    interface {}.x". With the chart's own defaults alone it is the values a release must give, not certain to
    fail the release."""

    def __init__(self, message: str, origin: tuple[int, int] | None, path: tuple):
        super().__init__(message, origin)
        self.path = path


class UnsetGlobal(TemplateError):
    """A nil pointer under `.Values.global` the chart's own values leave unset. Global values are the ones Helm
    copies from a parent chart into each of its subcharts (chartutil's coalesceGlobals), so installed as a parent's
    dependency the chart may render; installed alone it fails. Which of the two is done, the chart does not say."""

    def __init__(self, message: str, origin: tuple[int, int] | None, path: tuple):
        super().__init__(message, origin)
        self.path = path


class RequiredMissing(TemplateError):
    """`required` met an empty value: the chart asks whoever installs it for this value (`--set`, `-f`)."""


class ChartRefused(TemplateError):
    """The chart's own `fail`: its author's check of the values refused them (`fail "token is empty ..."`), not an
    error of the template itself."""


class BudgetExceeded(TemplateError):
    """One of vramlint's limits above was reached: the template is not evaluated (Helm has no such limit)."""

    def __init__(self, message: str, origin: tuple[int, int] | None = None, values_location: Location | None = None):
        super().__init__(message, origin)
        self.values_location = values_location  # the values line that set the number or text that went over


class ChartBudgetExceeded(BudgetExceeded):
    """A limit of the whole chart (steps of all its templates, time): the templates after it are not evaluated."""


class Unevaluable(Exception):
    """The evaluator does not support this form; the action's output becomes UNKNOWN."""


class _Unknown:
    _inst = None

    def __new__(cls):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


class OpenMap(dict):
    """Values of which vramlint holds only part: a dependency chart's values that are not in the tree (Helm
    coalesces that chart's own values.yaml under its name once `helm dependency build` fetched it). A key it
    lacks is UNKNOWN, not absent: `.Values.grafana.ingress` of a wrapper chart is the dependency's default."""


def open_map(value: Any) -> OpenMap:
    """``value`` (a map, or nothing) as an OpenMap, its nested maps open too."""
    if not isinstance(value, dict):
        return OpenMap()
    return OpenMap({k: open_map(v) if isinstance(v, dict) else v for k, v in value.items()})


@dataclass
class Ref:
    """A node of the merged values, with its key path (for origins)."""

    value: Any
    path: tuple


class TStr:
    """A string whose every character carries its origin: a values Location or a (template id, offset)."""

    __slots__ = ("text", "origins")

    def __init__(self, text: str, origins: list):
        self.text = text
        self.origins = origins

    @classmethod
    def uniform(cls, text: str, origin: Any) -> TStr:
        return cls(text, [origin] * len(text))

    def __add__(self, other: TStr) -> TStr:
        return TStr(self.text + other.text, self.origins + other.origins)

    def first_origin(self) -> Any:
        return self.origins[0] if self.origins else None


@dataclass
class TemplateSource:
    name: str  # "chart/templates/x.yaml" as Helm names it
    display: str  # path shown to users
    text: str
    line_starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]

    def location(self, offset: int) -> Location:
        i = bisect.bisect_right(self.line_starts, offset) - 1
        return Location(self.display, i + 1, offset - self.line_starts[i] + 1)


# ---------------------------------------------------------------- lexing and parsing

_SPACE = " \t\r\n"


def _scan_actions(text: str, tid: int):
    """Each action as Go's lexer delimits it: (start, end, trim_left, body, trim_right); comments have body None.

    Quoted strings may hold `}}`; an action, string or comment that is not closed is Helm's parse error, raised
    here on the line where it starts."""
    n = len(text)
    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            return
        j = start + 2
        trim_left = text.startswith("-", j) and j + 1 < n and text[j + 1] in _SPACE
        if trim_left:
            j += 2
        lead = j
        while lead < n and text[lead] in _SPACE:
            lead += 1
        if text.startswith("/*", lead):
            close = text.find("*/", lead + 2)
            if close < 0:
                raise TemplateError("parse error: unclosed comment", (tid, start))
            k = close + 2
            trim_right = False
            m = re.compile(r"[ \t\r\n]+-\}\}").match(text, k)
            if m:
                trim_right, k = True, m.end() - 2
            if not text.startswith("}}", k):
                raise TemplateError("parse error: comment ends before closing delimiter", (tid, start))
            yield start, k + 2, trim_left, None, trim_right
            pos = k + 2
            continue
        k = j
        while True:
            if k >= n:
                raise TemplateError("parse error: unclosed action (`{{` without `}}`)", (tid, start))
            c = text[k]
            if c in "\"'":
                e = k + 1
                while e < n and text[e] != c and text[e] != "\n":
                    e += 2 if text[e] == "\\" else 1
                if e >= n or text[e] != c:
                    what = "quoted string" if c == '"' else "character constant"
                    raise TemplateError(f"parse error: unterminated {what}", (tid, k))
                k = e + 1
            elif c == "`":
                e = text.find("`", k + 1)
                if e < 0:
                    raise TemplateError("parse error: unterminated raw quoted string", (tid, k))
                k = e + 1
            elif text.startswith("}}", k):
                body_end = k
                trim_right = k - 2 >= j and text[k - 1] == "-" and text[k - 2] in _SPACE
                if trim_right:
                    body_end = k - 1
                yield start, k + 2, trim_left, text[j:body_end], trim_right
                pos = k + 2
                break
            elif text.startswith("{{", k):
                raise TemplateError("parse error: unclosed action (`{{` without `}}` before the next `{{`)",
                                    (tid, start))
            else:
                k += 1




@dataclass
class Node:
    kind: str  # text | action | if | with | range | template | define
    pos: int  # offset in the template
    tid: int = 0
    text: str = ""
    pipe: Any = None
    body: list = field(default_factory=list)
    else_body: list = field(default_factory=list)
    name: str = ""
    origins: list | None = None  # a text node's per-character origins, made once and shared by every render


_TOKEN = re.compile(
    r"""\s*(?:
    (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<raw>`[^`]*`)
  | (?P<char>'(?:[^'\\]|\\.)+')
  | (?P<decl>:=|=(?!=))
  | (?P<num>-?(?:0x[0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+))
  | (?P<var>\$[A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)
  | (?P<close_field>(?<=\))(?:\.[A-Za-z0-9_]+)+)
  | (?P<field>(?:\.[A-Za-z0-9_]+)+|\.)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[()|,])
)""",
    re.X,
)


def _tokenize(src: str) -> list[tuple[str, str]]:
    out = []
    i = 0
    n = len(src)
    while i < n:
        if src[i].isspace():
            i += 1
            continue
        m = _TOKEN.match(src, i)
        if not m or m.end() == i:
            raise Unevaluable(f"cannot read `{src.strip()}`")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        i = m.end()
    return out


@dataclass
class Pipe:
    decl: list[str]
    assign: bool
    cmds: list[list[Any]]  # each command: list of operands


def _parse_pipe(src: str) -> Pipe:
    toks = _tokenize(src)
    decl: list[str] = []
    assign = False
    # `$a := ...`, `$i, $v := ...` (range)
    j = 0
    names = []
    while j < len(toks) and toks[j][0] == "var":
        names.append(toks[j][1])
        if j + 1 < len(toks) and toks[j + 1] == ("punct", ","):
            j += 2
            continue
        if j + 1 < len(toks) and toks[j + 1][0] == "decl":
            decl = names
            assign = toks[j + 1][1] == "="
            toks = toks[j + 2 :]
        break
    pos = [0]

    def parse_operand():
        kind, text = toks[pos[0]]
        pos[0] += 1
        if kind == "punct" and text == "(":
            inner = parse_cmds(")")
            node: Any = ("paren", inner)
            if pos[0] < len(toks) and toks[pos[0]][0] == "close_field":
                node = ("sub", node, toks[pos[0]][1])
                pos[0] += 1
            return node
        if kind == "punct":
            raise Unevaluable(f"unexpected `{text}` in `{src.strip()}`")
        return (kind, text)

    def parse_cmds(closer):
        cmds: list[list[Any]] = [[]]
        while pos[0] < len(toks):
            kind, text = toks[pos[0]]
            if kind == "punct" and text == closer:
                pos[0] += 1
                return cmds
            if kind == "punct" and text == "|":
                pos[0] += 1
                cmds.append([])
                continue
            cmds[-1].append(parse_operand())
        if closer is not None:
            raise Unevaluable(f"unbalanced parentheses in `{src.strip()}`")
        return cmds

    cmds = parse_cmds(None)
    if any(not c for c in cmds):
        raise Unevaluable(f"empty command in `{src.strip()}`")
    return Pipe(decl, assign, cmds)


def parse_template(text: str, tid: int) -> tuple[list[Node], dict[str, list[Node]]]:
    """Parse into a node tree; `define`s are returned separately. Raises TemplateError on bad nesting."""
    pieces: list[Node] = []
    last = 0
    pending_trim_left = False
    for a_start, a_end, trim_left, a_body, trim_right in _scan_actions(text, tid):
        chunk = text[last:a_start]
        chunk_pos = last
        if pending_trim_left:
            stripped = chunk.lstrip(" \t\r\n")
            chunk_pos += len(chunk) - len(stripped)
            chunk = stripped
        if trim_left:
            chunk = chunk.rstrip(" \t\r\n")
        if chunk:
            pieces.append(Node("text", chunk_pos, tid, text=chunk))
        pending_trim_left = trim_right
        last = a_end
        if a_body is None:
            continue
        pieces.append(Node("raw", a_start, tid, text=a_body.strip()))
    tail = text[last:]
    tail_pos = last
    if pending_trim_left:
        stripped = tail.lstrip(" \t\r\n")
        tail_pos += len(tail) - len(stripped)
        tail = stripped
    if tail:
        pieces.append(Node("text", tail_pos, tid, text=tail))

    defines: dict[str, list[Node]] = {}
    idx = [0]

    def block(stop_words: tuple[str, ...]) -> tuple[list[Node], str, Node | None]:
        out: list[Node] = []
        while idx[0] < len(pieces):
            p = pieces[idx[0]]
            idx[0] += 1
            if p.kind == "text":
                out.append(p)
                continue
            word, _, rest = p.text.partition(" ")
            rest = rest.strip()
            if word in stop_words:
                return out, word, p
            if word in ("if", "with", "range"):
                out.append(control(word, rest, p))
            elif word in ("define", "block"):
                name = _string_literal(rest.split()[0]) if rest else ""
                inner, _, _ = _expect_end(block, p)
                defines[name] = inner
                if word == "block":
                    pipe = rest[len(rest.split()[0]) :].strip() or "."
                    out.append(Node("template", p.pos, tid, name=name, pipe=_safe_pipe(pipe)))
            elif word == "template":
                parts = rest.split(None, 1)
                out.append(
                    Node("template", p.pos, tid, name=_string_literal(parts[0]),
                         pipe=_safe_pipe(parts[1] if len(parts) > 1 else "nil"))
                )
            elif word in ("break", "continue"):
                out.append(Node(word, p.pos, tid))
            else:
                out.append(Node("action", p.pos, tid, pipe=_safe_pipe(p.text)))
        return out, "", None

    def control(word: str, rest: str, p: Node) -> Node:
        node = Node(word, p.pos, tid, pipe=_safe_pipe(rest))
        inner, stop, stop_node = block(("end", "else"))
        node.body = inner
        if stop == "else":
            rest2 = stop_node.text[4:].strip()
            if rest2:  # else if / else with: a nested control that consumes the shared `end`
                w2, _, r2 = rest2.partition(" ")
                node.else_body = [control(w2, r2.strip(), stop_node)]
                return node
            inner2, stop2, _ = block(("end",))
            if stop2 != "end":
                raise TemplateError(f"unexpected EOF: `{word}` has no `end`", (tid, p.pos))
            node.else_body = inner2
        elif stop != "end":
            raise TemplateError(f"unexpected EOF: `{word}` has no `end`", (tid, p.pos))
        return node

    def _expect_end(blockfn, p):
        inner, stop, _ = blockfn(("end",))
        if stop != "end":
            raise TemplateError("unexpected EOF: `define` has no `end`", (tid, p.pos))
        return inner, stop, None

    nodes, stop, stop_node = block(())
    return nodes, defines


_GO_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
               '"': '"', "'": "'"}
_GO_ESCAPE = re.compile(r"\\(?:([abfnrtv\\\"'])|x([0-9a-fA-F]{2})|([0-7]{3})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.?))",
                        re.S)


def _go_unquote(body: str, origin: Any = None) -> str:
    """strconv.Unquote of a Go string literal's inside; a bad escape is Helm's parse error."""
    if "\\" not in body:
        return body

    def one(m) -> str:
        if m.group(1):
            return _GO_ESCAPES[m.group(1)]
        code = m.group(2) or m.group(4) or m.group(5)
        if code:
            n = int(code, 16)
        elif m.group(3):
            n = int(m.group(3), 8)
        else:
            raise TemplateError(f"parse error: invalid syntax in string escape \\{m.group(6)}", origin)
        if n > 0x10FFFF or 0xD800 <= n <= 0xDFFF:
            raise TemplateError("parse error: invalid syntax in string escape", origin)
        return chr(n)

    return _GO_ESCAPE.sub(one, body)


def _go_number(text: str, origin: Any) -> Any:
    """A number literal as text/template reads it (parse.newNumber, then state.idealConstant)."""
    body = text.lstrip("+-")
    looks_int = not re.search(r"[.eEpP]", body) or re.fullmatch(r"0[xX][0-9a-fA-F_]+", body) is not None
    if looks_int:
        n = _go_int_text(text)
        if n is not None:
            return n
        if len(body) <= 40 and re.fullmatch(r"[0-9]+|0[xX][0-9a-fA-F_]+", body):
            big = int(body.replace("_", ""), 0) if body.startswith(("0x", "0X")) else int(body)
            if not text.startswith("-") and big < (1 << 64):
                raise TemplateError(f"{text} overflows int", origin)
        raise TemplateError(f'parse error: integer overflow: "{text}"', origin)
    try:
        f = float(text) if len(text) < 400 else float("inf")
    except ValueError:
        raise TemplateError(f'parse error: illegal number syntax: "{text}"', origin) from None
    if f in (float("inf"), float("-inf")):
        raise TemplateError(f'parse error: illegal number syntax: "{text}"', origin)
    return f


def _string_literal(tok: str) -> str:
    tok = tok.strip()
    if tok.startswith('"'):
        try:
            return json.loads(tok)
        except ValueError:
            return tok.strip('"')
    return tok.strip("`")


def _safe_pipe(src: str) -> Any:
    try:
        return _parse_pipe(src)
    except Unevaluable as exc:
        return exc  # evaluated as UNKNOWN, with this reason


# ---------------------------------------------------------------- Go formatting


def go_float(f: float) -> str:
    """fmt %v of a float64, as Helm prints a number from values."""
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "0"
    from decimal import Decimal

    sign, digits, exp = Decimal(repr(float(f))).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    exp += len("".join(map(str, digits))) - len(ds)
    nd = len(ds)
    x = nd + exp - 1  # decimal exponent of the first digit
    neg = "-" if sign else ""
    if x < -4 or x >= 6:
        # strconv 'g' with shortest precision switches to %e at exponent 6 (Helm's 1e+06)
        mant = ds[0] + ("." + ds[1:] if nd > 1 else "")
        return f"{neg}{mant}e{'+' if x >= 0 else '-'}{abs(x):02d}"
    if exp >= 0:
        return neg + ds + "0" * exp
    point = nd + exp
    if point > 0:
        return neg + ds[:point] + "." + ds[point:]
    return neg + "0." + "0" * (-point) + ds


def go_str(v: Any) -> str:
    """fmt %v as text/template prints a value."""
    if isinstance(v, (dict, list)) or (isinstance(v, Ref) and isinstance(v.value, (dict, list))):
        _walk_budget(v, "printing")
    return _go_str(v)


def _go_str(v: Any) -> str:
    if isinstance(v, Ref):
        v = v.value
    elif isinstance(v, TStr):
        return v.text
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, int):
        return str(v)  # only ints made by functions (int, len, add) are Go ints; values are floats
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{_go_str(v[k])}" for k in sorted(v, key=str)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_go_str(x) for x in v) + "]"
    return str(v)


def to_go_number(v: Any) -> Any:
    """Values decode as float64 in Helm (YAML -> JSON -> interface{}), so ints become floats.

    An integer too long for 64 bits is not a number to Helm's YAML reader (go-yaml keeps it as a string)."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        if v.bit_length() > 64:
            return str(v) if v.bit_length() < 14_000 else UNKNOWN  # str() refuses more than 4,300 digits
        return float(v)
    if isinstance(v, dict):
        out = {k: to_go_number(x) for k, x in v.items()}
        return OpenMap(out) if isinstance(v, OpenMap) else out
    if isinstance(v, list):
        return [to_go_number(x) for x in v]
    return v


_YAML_PLAIN_UNSAFE = re.compile(
    r"""^(?:$|[-?:,\[\]{}#&*!|>'"%@`\s]|.*(?::\s|\s#|:$)|.*\s$|"""
    r"""(?i:y|n|yes|no|true|false|on|off|null|~)$|[-+]?(?:\d[\d_]*)?\.?\d+(?:[eE][-+]?\d+)?$|"""
    r"""[-+]?\.(?:inf|nan)$|0x[0-9a-fA-F]+$|0o?[0-7]+$|\d+:\d+)""",
)


# strings go-yaml writes in double quotes because, plain, they would read as a bool, null, a number (encode.go's
# stringv: the resolved tag differs)
_YAML_OTHER_TYPE = re.compile(
    r"""^(?:(?i:y|n|yes|no|true|false|on|off|null|~)$|[-+]?(?:\d[\d_]*)?\.?\d+(?:[eE][-+]?\d+)?$|"""
    r"""[-+]?\.(?:inf|nan)$|0x[0-9a-fA-F]+$|0o?[0-7]+$|\d+:\d+)""",
)


def _yaml_scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, int):
        return str(v)
    s = str(v)
    if "\n" in s or not s or _YAML_OTHER_TYPE.match(s) or not s.isprintable():
        return json.dumps(s, ensure_ascii=False)
    if _YAML_PLAIN_UNSAFE.match(s):
        # go-yaml's emitter falls back from plain to single quotes for text that is only unsafe as YAML syntax
        # (`{{ .x }}`, `a: b`); double quotes are for text that would read as another type. A `tpl` of the output
        # parses it again, where a `\"` written inside an action is no Go
        return "'" + s.replace("'", "''") + "'"
    return s


def to_yaml(value: Any, path: tuple | None, origins_of, fallback: Any) -> TStr:
    """sigs.k8s.io/yaml output (keys sorted, lists not indented under keys), each line tracked to its key."""
    _walk_budget(value, "toYaml")
    lines: list[tuple[str, Any]] = []

    def origin(p):
        if p is None:
            return fallback
        found = origins_of(p)
        return found if found is not None else fallback

    def emit(v: Any, p, indent: int, first_prefix: str | None = None) -> None:
        pad = " " * indent
        if isinstance(v, dict) and v:
            first = True
            for k in sorted(v, key=str):
                child = v[k]
                cpath = p + (k,) if p is not None else None
                prefix = first_prefix if (first and first_prefix is not None) else pad
                first = False
                key = _yaml_scalar(str(k))
                if isinstance(child, dict) and child:
                    lines.append((f"{prefix}{key}:", origin(cpath)))
                    emit(child, cpath, indent + 2)
                elif isinstance(child, list) and child:
                    lines.append((f"{prefix}{key}:", origin(cpath)))
                    emit(child, cpath, indent)
                else:
                    lines.append((f"{prefix}{key}: {_scalar_or_empty(child)}", origin(cpath)))
        elif isinstance(v, list) and v:
            for i, item in enumerate(v):
                ipath = p + (i,) if p is not None else None
                if isinstance(item, dict) and item:
                    emit(item, ipath, indent + 2, first_prefix=pad + "- ")
                elif isinstance(item, list) and item:
                    lines.append((f"{pad}-", origin(ipath)))
                    emit(item, ipath, indent + 2)
                else:
                    lines.append((f"{pad}- {_scalar_or_empty(item)}", origin(ipath)))
        else:
            lines.append((pad + _scalar_or_empty(v), origin(p)))

    emit(value, path, 0)
    text_parts: list[str] = []
    origins: list = []
    for i, (text, org) in enumerate(lines):
        if i:
            text_parts.append("\n")
            origins.append(org)
        text_parts.append(text)
        origins.extend([org] * len(text))
    return TStr("".join(text_parts), origins)


def _scalar_or_empty(v: Any) -> str:
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return _yaml_scalar(v)


# ---------------------------------------------------------------- evaluation


def plain(x: Any) -> Any:
    if isinstance(x, Ref):
        return x.value
    if isinstance(x, TStr):
        return x.text
    return x


def truthy(x: Any) -> Any:
    v = plain(x)
    if v is UNKNOWN:
        return UNKNOWN
    if v is None or v is False:
        return False
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v != 0
    if isinstance(v, (str, list, dict)):
        return len(v) > 0
    return True


class _Out(list):
    """The parts a render writes, with their total length (the output limit)."""

    size = 0


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


@dataclass
class Evaluator:
    """Renders one chart's templates against merged values, tracking origins."""

    sources: list[TemplateSource]
    defines: dict[str, tuple[int, list[Node]]]
    values: Any
    origins: dict[tuple, Location]
    root_extra: dict[str, Any]
    reasons: list[str] = field(default_factory=list)  # why parts stayed unknown (deduplicated by caller)
    steps: int = 0  # of the template being rendered
    chart_steps: int = 0  # of every template rendered by this evaluator
    chars_made: int = 0  # of the template being rendered
    depth: int = 0
    deadline: float | None = None  # time.monotonic() past which the chart is not evaluated further
    file_templates: frozenset = frozenset()  # the names of whole template files (Helm names them by their path)
    # strings given to `tpl`, parsed once per evaluator: (nodes, the templates they define)
    _tpl_parsed: dict = field(default_factory=dict)

    def start_template(self) -> None:
        self.steps = 0
        self.chars_made = 0

    def step(self, origin: Any) -> None:
        self.steps += 1
        self.chart_steps += 1
        if self.steps > MAX_STEPS:
            raise BudgetExceeded(f"evaluation took more than vramlint's limit of {MAX_STEPS:,} steps "
                                 "(actions, loop iterations and function calls)", origin)
        if self.chart_steps > MAX_CHART_STEPS:
            raise ChartBudgetExceeded(f"the chart's templates together took more than vramlint's limit of "
                                      f"{MAX_CHART_STEPS:,} steps", origin)
        if self.deadline is not None and not self.chart_steps & 1023:
            import time

            if time.monotonic() > self.deadline:
                if isinstance(self.deadline, RunDeadline):
                    raise ChartBudgetExceeded(f"evaluation stopped here: the {RUN_CHART_SECONDS:g} s this run "
                                              "allows for all its Helm charts together ran out (other charts used "
                                              "part of it); lint this chart's folder on its own to evaluate it "
                                              "whole", origin)
                raise ChartBudgetExceeded(f"evaluating the chart took more than vramlint's limit of "
                                          f"{CHART_SECONDS:g} s", origin)

    def charge(self, chars: int, origin: Any) -> None:
        self.chars_made += chars
        if self.chars_made > MAX_CHARS_MADE:
            raise BudgetExceeded(f"evaluation made more than vramlint's limit of {MAX_CHARS_MADE:,} characters",
                                 origin)

    def write(self, out: _Out, part: TStr, origin: Any) -> None:
        out.append(part)
        out.size += len(part.text)
        self.charge(len(part.text), origin)
        if out.size > MAX_OUTPUT_CHARS:
            raise BudgetExceeded(f"template output is over vramlint's limit of {MAX_OUTPUT_CHARS:,} characters",
                                 origin)

    def origin_of(self, path: tuple) -> Location | None:
        return self.origins.get(path)

    def root(self, tid: int) -> dict:
        src = self.sources[tid]
        out = {"Values": Ref(self.values, ())}
        out.update(self.root_extra)
        out["Template"] = {"Name": src.name, "BasePath": src.name.rsplit("/templates/", 1)[0] + "/templates"}
        return out

    def unknown(self, why: str, origin: Any) -> _Unknown:
        where = self._where(origin)
        self.reasons.append(f"{where}: {why}" if where else why)
        return UNKNOWN

    def _where(self, origin: Any) -> str:
        if isinstance(origin, tuple):
            loc = self.sources[origin[0]].location(origin[1])
            return f"{loc.file}:{loc.line}"
        return ""

    # -- nodes

    def render(self, tid: int, nodes: list[Node]) -> TStr:
        root = self.root(tid)
        parts = _Out()
        self._nodes(nodes, root, [{"$": root}], parts)
        return _join(parts)

    def _nodes(self, nodes: list[Node], dot: Any, scopes: list[dict], out: _Out) -> None:
        for node in nodes:
            try:
                self._node(node, dot, scopes, out)
            except BudgetExceeded as exc:
                if exc.origin is None:
                    exc.origin = (node.tid, node.pos)
                raise

    def _node(self, node: Node, dot: Any, scopes: list[dict], out: _Out) -> None:
        origin = (node.tid, node.pos)
        self.step(origin)
        kind = node.kind
        if kind == "text":
            if node.origins is None:
                node.origins = [(node.tid, node.pos + i) for i in range(len(node.text))]
            self.write(out, TStr(node.text, node.origins), origin)
        elif kind == "action":
            val = self._pipe(node.pipe, dot, scopes, origin)
            if not (isinstance(node.pipe, Pipe) and node.pipe.decl):
                self.write(out, self.to_tstr(val, origin), origin)
        elif kind in ("if", "with"):
            self._cond(node, dot, scopes, out)
        elif kind == "range":
            self._range(node, dot, scopes, out)
        elif kind == "template":
            data = self._pipe(node.pipe, dot, scopes, origin)
            self.write(out, self.to_tstr(self.include(node.name, data, origin), origin), origin)
        elif kind == "break":
            raise _Break()
        elif kind == "continue":
            raise _Continue()

    def _cond(self, node: Node, dot: Any, scopes: list[dict], out: _Out) -> None:
        origin = (node.tid, node.pos)
        scopes = scopes + [{}]
        val = self._pipe(node.pipe, dot, scopes, origin)
        t = truthy(val)
        if t is UNKNOWN:
            self.unknown(f"`{node.kind}` condition could not be evaluated; its content was left out", origin)
            return
        if t:
            self._nodes(node.body, val if node.kind == "with" else dot, scopes, out)
        elif node.else_body:
            self._nodes(node.else_body, dot, scopes, out)

    def _range(self, node: Node, dot: Any, scopes: list[dict], out: _Out) -> None:
        origin = (node.tid, node.pos)
        pipe = node.pipe
        val = self._pipe(pipe, dot, scopes + [{}], origin, declare=False)
        v = plain(val)
        if v is UNKNOWN:
            self.unknown("`range` over a value that could not be evaluated; its content was left out", origin)
            return
        path = val.path if isinstance(val, Ref) else None
        items: Any
        if isinstance(v, list):
            items = ((i, Ref(item, path + (i,)) if path is not None else item) for i, item in enumerate(v))
            count = len(v)
        elif isinstance(v, dict):
            items = ((k, Ref(v[k], path + (k,)) if path is not None else v[k]) for k in sorted(v, key=str))
            count = len(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            # Go 1.22+ ranges over an integer; counted one step per iteration below, never built as a list
            items = ((i, i) for i in range(max(v, 0)))
            count = max(v, 0)
            if count > MAX_STEPS:
                raise BudgetExceeded(f"`range` over {v:,} is over vramlint's limit of {MAX_STEPS:,} steps", origin,
                                     self.origin_of(path) if path is not None else None)
        elif v is None:
            items, count = (), 0
        else:
            raise TemplateError(f"range can't iterate over {go_str(v)}", origin)
        if not count:
            if node.else_body:
                self._nodes(node.else_body, dot, scopes, out)
            return
        decl = pipe.decl if isinstance(pipe, Pipe) else []
        for k, item in items:
            self.step(origin)  # an iteration is a step even when its body is empty
            scope: dict[str, Any] = {}
            if len(decl) == 1:
                scope[decl[0]] = item
            elif len(decl) == 2:
                scope[decl[0]] = k
                scope[decl[1]] = item
            try:
                self._nodes(node.body, item, scopes + [scope], out)
            except _Continue:
                continue
            except _Break:
                break

    # -- pipelines

    def _pipe(self, pipe: Any, dot: Any, scopes: list[dict], origin: Any, declare: bool = True) -> Any:
        if isinstance(pipe, Exception):
            return self.unknown(str(pipe), origin)
        result: Any = None
        have_input = False
        for cmd in pipe.cmds:
            try:
                result = self._cmd(cmd, dot, scopes, origin, result if have_input else _NOARG)
            except Unevaluable as exc:
                result = self.unknown(str(exc), origin)
            have_input = True
        if pipe.decl and declare:
            name = pipe.decl[0]
            if pipe.assign:
                for scope in reversed(scopes):
                    if name in scope:
                        scope[name] = result
                        break
                else:
                    scopes[-1][name] = result
            else:
                scopes[-1][name] = result
        return result

    def _cmd(self, cmd: list, dot: Any, scopes: list[dict], origin: Any, piped: Any) -> Any:
        head = cmd[0]
        if head[0] == "ident" and head[1] not in ("true", "false", "nil"):
            fname = head[1]
            if fname in ("and", "or"):
                return self._andor(fname, cmd[1:], dot, scopes, origin, piped)
            args = [self._operand(op, dot, scopes, origin) for op in cmd[1:]]
            if piped is not _NOARG:
                args.append(piped)
            return self.call(fname, args, origin)
        if len(cmd) > 1 or piped is not _NOARG:
            raise Unevaluable("a value cannot take arguments (method calls are not evaluated)")
        return self._operand(head, dot, scopes, origin)

    def _andor(self, fname, ops, dot, scopes, origin, piped):
        vals_iter = [lambda op=op: self._operand(op, dot, scopes, origin) for op in ops]
        if piped is not _NOARG:
            vals_iter.append(lambda: piped)
        last: Any = None
        for get in vals_iter:
            last = get()
            t = truthy(last)
            if t is UNKNOWN:
                return UNKNOWN
            if fname == "and" and not t:
                return last
            if fname == "or" and t:
                return last
        return last

    def _operand(self, op: Any, dot: Any, scopes: list[dict], origin: Any) -> Any:
        kind = op[0]
        if kind == "str":
            return _go_unquote(op[1][1:-1], origin)
        if kind == "raw":
            return op[1][1:-1]
        if kind == "char":
            text = _go_unquote(op[1][1:-1], origin)
            if len(text) != 1:
                raise TemplateError(f"parse error: malformed character constant: {op[1]}", origin)
            return ord(text)
        if kind == "num":
            return _go_number(op[1], origin)
        if kind == "ident":
            if op[1] == "true":
                return True
            if op[1] == "false":
                return False
            if op[1] == "nil":
                return None
            return self.call(op[1], [], origin)
        if kind == "field":
            if op[1] == ".":
                return dot
            return self._fields(dot, op[1][1:].split("."), origin)
        if kind == "var":
            name, *fields = op[1].split(".")
            for scope in reversed(scopes):
                if name in scope:
                    base = scope[name]
                    break
            else:
                raise Unevaluable(f"undefined variable {name}")
            return self._fields(base, fields, origin) if fields else base
        if kind == "paren":
            result: Any = _NOARG
            for cmd in op[1]:
                result = self._cmd(cmd, dot, scopes, origin, result)
            return result
        if kind == "sub":
            base = self._operand(op[1], dot, scopes, origin)
            if base is None or isinstance(base, Ref) and base.value is None:
                # Go's evalPipeline digs a nil interface{} result down to an invalid value, and evalField of an
                # invalid receiver gives the zero value (Helm renders with missingkey=zero): `(.Values.a).b` with
                # no `a` is empty, where `.Values.a.b` is the "nil pointer evaluating interface {}.b" error
                return None
            return self._fields(base, op[2][1:].split("."), origin)
        raise Unevaluable(f"unsupported operand {op[1]!r}")

    def _fields(self, base: Any, names: list[str], origin: Any) -> Any:
        cur = base
        walked = []
        unset: tuple | None = None  # the values path of a key the values do not have
        for name in names:
            walked.append(name)
            if cur is UNKNOWN:
                return UNKNOWN
            if isinstance(cur, Ref):
                v = cur.value
                if v is UNKNOWN:  # a value a release gives that vramlint does not know (an Argo CD variable)
                    return UNKNOWN
                if isinstance(v, dict):
                    if name not in v and isinstance(v, OpenMap):
                        return UNKNOWN
                    if name not in v:
                        unset = cur.path + (name,)
                    cur = Ref(v[name], cur.path + (name,)) if name in v else None
                    continue
                if v is None:
                    raise self._nil(name, origin, cur.path)
                raise TemplateError(f"can't evaluate field {name} in type {type(v).__name__}", origin)
            if isinstance(cur, dict):
                if name not in cur and isinstance(cur, OpenMap):
                    return UNKNOWN
                cur = cur.get(name)
                continue
            if cur is None:
                raise self._nil(name, origin, unset)
            raise Unevaluable(f"field .{'.'.join(walked)} is not known")
        return cur

    def _nil(self, name: str, origin: Any, path: tuple | None) -> TemplateError:
        message = f"nil pointer evaluating interface {{}}.{name}"
        if path and path[0] == "global":  # a Ref's path starts at .Values
            return UnsetGlobal(message, origin, path + (name,))
        if path:
            return UnsetValue(message, origin, path + (name,))
        return TemplateError(message, origin)

    # -- output

    def to_tstr(self, val: Any, origin: Any) -> TStr:
        if isinstance(val, TStr):
            return val
        if val is UNKNOWN:
            return TStr.uniform(UNKNOWN_MARKER, origin)
        if isinstance(val, Ref):
            loc = self.origin_of(val.path)
            if val.value is UNKNOWN:
                return TStr.uniform(UNKNOWN_MARKER, loc if loc is not None else origin)
            return TStr.uniform(go_str(val.value), loc if loc is not None else origin)
        if val is _NOARG:
            return TStr("", [])
        return TStr.uniform(go_str(val), origin)

    def include(self, name: Any, data: Any, origin: Any) -> Any:
        name = plain(name)
        if name is UNKNOWN or name not in self.defines:
            # Helm fails here; but a library chart that is not vendored (`common.labels`) is the usual cause,
            # and the rest of the template still says what is deployed.
            return self.unknown(f'template "{name}" is not defined in the chart (library chart not vendored?)',
                                origin)
        if self.depth >= MAX_INCLUDE_DEPTH:
            raise TemplateError("include nested too deeply (recursion?)", origin)
        tid, nodes = self.defines[name]
        parts = _Out()
        self.depth += 1
        try:
            # Go's walkTemplate sets `$` to the data the template is called with, not to the chart's root
            self._nodes(nodes, data, [{"$": None if data is _NOARG else data}], parts)
        except BudgetExceeded:
            raise
        except TemplateError as exc:
            if name not in self.file_templates:
                raise
            # a whole file included for its checksum: that file is rendered on its own, where Helm's error is
            # said once; here only its text is unknown, and the template that includes it still says what it deploys
            return self.unknown(f'template "{name}" fails on its own ({exc}), so what includes it is unknown', origin)
        finally:
            self.depth -= 1
        return _join(parts)

    def tpl(self, src: Any, text: str, data: Any, origin: Any) -> TStr:
        """Helm's `tpl`: ``text`` parsed as a template named after the calling one, with the chart's defined
        templates (and those ``text`` defines) available, and run with ``data`` as `.` and `$`. Its characters keep
        the origins of the string (the values line that wrote it); what fails in it is said at the call."""
        if self.depth >= MAX_INCLUDE_DEPTH:
            raise TemplateError("tpl nested too deeply (recursion?)", origin)
        # the text's origins are the string's: a values key's line (a Ref) or each character's (a TStr)
        key = (text, self.origin_of(src.path) if isinstance(src, Ref) else tuple(src.origins) if isinstance(
            src, TStr) else origin)
        parsed = self._tpl_parsed.get(key)
        if parsed is None:
            if len(self._tpl_parsed) >= MAX_TPL_STRINGS:
                raise Unevaluable(f"tpl of more than vramlint's limit of {MAX_TPL_STRINGS:,} distinct strings")
            self.charge(len(text), origin)
            caller = self.sources[origin[0]] if isinstance(origin, tuple) else None
            at = caller.location(origin[1]) if caller is not None else Location("", 1, 1)
            tid = len(self.sources)
            self.sources.append(_TplSource(caller.name if caller is not None else "tpl", at.file, text, at))
            try:
                nodes, defs = parse_template(text, tid)
            except TemplateError as exc:
                raise TemplateError(f"error calling tpl: {exc}", origin) from None
            except RecursionError:
                raise Unevaluable("tpl of a template nested too deeply for vramlint to read") from None
            values_loc = self.origin_of(src.path) if isinstance(src, Ref) else None
            _tpl_text_origins(nodes, src, values_loc or origin)
            for body in defs.values():
                _tpl_text_origins(body, src, values_loc or origin)
            parsed = self._tpl_parsed[key] = (nodes, {name: (tid, body) for name, body in defs.items()})
        nodes, defs = parsed
        saved = self.defines
        if defs:
            self.defines = {**saved, **defs}
        parts = _Out()
        self.depth += 1
        try:
            self._nodes(nodes, data, [{"$": data}], parts)
        except BudgetExceeded:
            raise
        except TemplateError as exc:
            if exc.origin is not None and isinstance(self.sources[exc.origin[0]], _TplSource):
                exc.origin = origin  # said where tpl is called (the string's own lines are in a values file)
            raise
        finally:
            self.depth -= 1
            self.defines = saved
        return _join(parts)

    # -- functions

    def call(self, name: str, args: list, origin: Any) -> Any:
        fn = _FUNCS.get(name)
        if fn is None:
            if name in ("include",):
                if len(args) != 2:
                    raise Unevaluable("include takes a name and a value")
                return self.include(args[0], args[1], origin)
            raise Unevaluable(f"function `{name}` is not evaluated by vramlint")
        if name not in _UNKNOWN_AWARE and any(plain(a) is UNKNOWN for a in args):
            return UNKNOWN
        self.step(origin)
        _WALKED[0] = 0
        try:
            result = fn(self, args, origin)
        except BudgetExceeded as exc:
            if exc.origin is None:
                exc.origin = origin
            if exc.values_location is None:
                # the count or text that went over, when a values key gave it
                exc.values_location = next((self.origin_of(a.path) for a in args if isinstance(a, Ref)
                                            and self.origin_of(a.path) is not None
                                            and isinstance(a.value, (int, float, str))), None)
            raise
        except (ValueError, TypeError, OverflowError, IndexError, KeyError, AttributeError) as exc:
            # a form or type this evaluator does not model (Helm's own error or result would differ): unknown
            raise Unevaluable(f"`{name}` could not be evaluated: {exc}") from exc
        size = _result_size(result) + _WALKED[0]
        if size:
            self.charge(size, origin)
        return result


_NOARG = object()
MAX_TPL_STRINGS = 2_000  # distinct strings one chart's evaluation gives to `tpl`


class _TplSource:
    """A string given to `tpl`, as a template source: every position in it is said at the `tpl` call."""

    def __init__(self, name: str, display: str, text: str, at: Location) -> None:
        self.name, self.display, self.text, self.at = name, display, text, at

    def location(self, offset: int) -> Location:
        return self.at


def _tpl_text_origins(nodes: list[Node], src: Any, origin: Any, depth: int = 0) -> None:
    """The text of a `tpl` string written out carries the string's origins: each character's own (a TStr), else
    ``origin`` (the values line that set the string, or the call)."""
    if depth > 200:
        return
    for node in nodes:
        if node.kind == "text":
            n = len(node.text)
            if isinstance(src, TStr) and len(src.origins) >= node.pos + n:
                node.origins = src.origins[node.pos:node.pos + n]
            else:
                node.origins = [origin] * n
        if node.body:
            _tpl_text_origins(node.body, src, origin, depth + 1)
        if node.else_body:
            _tpl_text_origins(node.else_body, src, origin, depth + 1)



def _result_size(result: Any) -> int:
    """A function result's size, for the characters-made budget; over a limit is BudgetExceeded."""
    if isinstance(result, (Ref, TStr)):
        result = plain(result)
    if isinstance(result, str):
        if len(result) > MAX_STRING_CHARS:
            raise BudgetExceeded(f"a string of {len(result):,} characters is over vramlint's limit of "
                                 f"{MAX_STRING_CHARS:,}")
        return len(result)
    if isinstance(result, (list, dict)):
        if len(result) > MAX_LIST_ITEMS:
            raise BudgetExceeded(f"a list of {len(result):,} items is over vramlint's limit of {MAX_LIST_ITEMS:,}")
        return len(result)
    return 0


def _need_chars(n: int, what: str) -> None:
    """Refuse, before building it, a string that would be over the limit."""
    if n > MAX_STRING_CHARS:
        raise BudgetExceeded(f"{what} would make {n:,} characters, over vramlint's limit of {MAX_STRING_CHARS:,}")


def _need_items(n: int, what: str) -> None:
    if n > MAX_LIST_ITEMS:
        raise BudgetExceeded(f"{what} would make {n:,} items, over vramlint's limit of {MAX_LIST_ITEMS:,}")


_WALKED = [0]  # nodes walked by the function being called, charged to the evaluator's budget after it


def _walk_budget(v: Any, what: str, limit: int = MAX_NODES) -> int:
    """Nodes and characters of a structure as printed, aliases (shared lists and maps) expanded each time;
    BudgetExceeded past the limit. Iterative, so a deep structure cannot exhaust the stack."""
    count = 0
    chars = 0
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, Ref):
            x = x.value
        count += 1
        if isinstance(x, dict):
            stack.extend(x.values())
            chars += sum(len(str(k)) for k in x)
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, (str, TStr)):
            chars += len(plain(x))
        if count > limit or chars > MAX_STRING_CHARS:
            raise BudgetExceeded(f"{what} of a structure over vramlint's limit of {limit:,} nodes or "
                                 f"{MAX_STRING_CHARS:,} characters (shared YAML anchors count each time)")
    _WALKED[0] += count
    return count


def _join(parts: list[TStr]) -> TStr:
    text = "".join(p.text for p in parts)
    origins: list = []
    for p in parts:
        origins.extend(p.origins)
    return TStr(text, origins)


# ---- function table. Each takes (evaluator, args, origin). Args may be Ref / TStr / plain values.


def _rewrap(src: Any, result: Any, ev: Evaluator, origin: Any) -> Any:
    """Keep a scalar transform's origin: a Ref stays a Ref of the same key; a TStr keeps its first origin."""
    if isinstance(src, Ref):
        return Ref(result, src.path)
    if isinstance(src, TStr) and isinstance(result, str):
        return TStr.uniform(result, src.first_origin() if src.origins else origin)
    return result


def _scalar(fn, nargs: int | None = None):
    def wrapped(ev, args, origin):
        if nargs is not None and len(args) != nargs:
            raise Unevaluable(f"wrong number of arguments ({len(args)})")
        src = args[-1] if args else None
        res = fn(*[plain(a) for a in args])
        return _rewrap(src, res, ev, origin)

    return wrapped


def _wrap64(n: int) -> int:
    """Go's int64 arithmetic wraps around (sprig's add/mul/... do no overflow check): Helm prints the wrapped value."""
    return ((n - INT64_MIN) & 0xFFFF_FFFF_FFFF_FFFF) + INT64_MIN


def _until_step(start: int, stop: int, step: int, name: str = "") -> list[int]:
    """sprig's untilStep: [start, stop) by step; nothing when the step does not lead to stop."""
    if step == 0 or (step > 0 and start >= stop) or (step < 0 and start <= stop):
        return []
    n = (abs(stop - start) + abs(step) - 1) // abs(step)
    _need_items(n, name or f"untilStep {start} {stop} {step}")
    return list(range(start, stop, step))


def _until(n: int) -> list[int]:
    return _until_step(0, n, 1 if n >= 0 else -1, f"until {n}")


def _seq(*params: int) -> str:
    """sprig's seq (like GNU seq): a string of numbers, not a list."""
    p = list(params)
    if not p or len(p) > 3:
        return ""
    first, step, last = (1, 1, p[0]) if len(p) == 1 else (p[0], 1 if p[1] >= p[0] else -1, p[1]) if len(p) == 2 \
        else (p[0], p[1], p[2])
    if step == 0 or (step > 0 and first > last) or (step < 0 and first < last):
        return ""
    n = abs(last - first) // abs(step) + 1
    _need_items(n, "seq")
    return " ".join(str(i) for i in range(first, last + (1 if step > 0 else -1), step))


def _go_int_text(s: str) -> int | None:
    """strconv.ParseInt(s, 0, 64): Go's prefixes (0x, 0o, 0b, and a bare leading 0 for octal), underscores
    only with a prefix; None when it does not parse or does not fit in int64."""
    t = s.strip()
    if not t or len(t) > 80:
        return None
    sign = -1 if t[0] == "-" else 1
    body = t[1:] if t[0] in "+-" else t
    try:
        if re.fullmatch(r"0[0-7_]+", body):
            n = int(body[1:], 8)
        elif re.fullmatch(r"[0-9]+|0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+", body):
            n = int(body, 0)
        else:
            return None
    except ValueError:
        return None
    n *= sign
    return n if INT64_MIN <= n <= INT64_MAX else None


def _float_to_int(f: float) -> int:
    if f != f or f in (float("inf"), float("-inf")) or not -9.223372036854776e18 <= f < 9.223372036854776e18:
        # Go's int64(f) for these is whatever the CPU's conversion gives (amd64 and arm64 differ): not guessed
        raise Unevaluable(f"converting {go_float(f)} to an integer: Go's result depends on the CPU")
    return int(f)


def _to_int(v: Any) -> int:
    """spf13/cast ToInt64 as sprig uses it: strings that do not parse are 0."""
    if v is None or v == "":
        return 0
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return _wrap64(v)
    if isinstance(v, float):
        return _float_to_int(v)
    if isinstance(v, str):
        t = v.strip()
        if t.endswith(".0") or t.endswith(".00"):
            t = t.rstrip("0").rstrip(".") or "0"  # cast trims a zero decimal part ("8.0" is 8)
        n = _go_int_text(t)
        return n if n is not None else 0
    return 0


def _atoi(v: Any) -> int:
    """strconv.Atoi, error ignored: out of range gives the nearest int64, anything else 0."""
    s = _strval(v).strip()
    if re.fullmatch(r"[+-]?\d+", s):
        if len(s.lstrip("+-").lstrip("0")) > 19:
            return INT64_MIN if s.startswith("-") else INT64_MAX
        return max(INT64_MIN, min(INT64_MAX, int(s)))
    return 0


def _to_float(v: Any) -> float:
    """spf13/cast ToFloat64: a string that does not parse (or is out of range) is 0."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        t = v.strip()
        if len(t) > 400:
            return 0.0
        try:
            f = float(t)
        except ValueError:
            return 0.0
        if f in (float("inf"), float("-inf")) and "inf" not in t.lower():
            return 0.0  # ParseFloat's range error: cast returns 0
        return f
    return 0.0


def _go_round(fn):
    import math

    def f(ev, a, o):
        x = _to_float(plain(a[0]))
        return float(fn(x)) if math.isfinite(x) else x

    return f


def _strval(v: Any) -> str:
    return go_str(v)


def _go_quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def f_quote(ev, args, origin):
    _need_chars(sum(len(go_str(plain(a))) + 3 for a in args), "quote")
    parts = []
    for a in args:
        if plain(a) is None:
            continue
        t = ev.to_tstr(a, origin)
        q = _go_quote(t.text)
        org = t.first_origin() if t.origins else origin
        parts.append(TStr.uniform(q, org))
    out = TStr("", [])
    for i, p in enumerate(parts):
        if i:
            out = out + TStr.uniform(" ", origin)
        out = out + p
    return out


def f_squote(ev, args, origin):
    _need_chars(sum(len(go_str(plain(a))) + 3 for a in args), "squote")
    parts = []
    for a in args:
        if plain(a) is None:
            continue
        t = ev.to_tstr(a, origin)
        parts.append(TStr.uniform("'" + t.text + "'", t.first_origin() if t.origins else origin))
    return _join([p if i == 0 else TStr.uniform(" ", origin) + p for i, p in enumerate(parts)])


def f_default(ev, args, origin):
    if not args:
        raise Unevaluable("default needs an argument")
    d = args[0]
    if len(args) == 1:
        return d
    given = args[1]
    t = truthy(given)
    if t is UNKNOWN:
        return UNKNOWN
    return given if t else d


def f_toyaml(ev, args, origin):
    (a,) = args
    if isinstance(a, Ref):
        return to_yaml(a.value, a.path, ev.origin_of, origin)
    if isinstance(a, TStr):
        return TStr.uniform(_yaml_scalar(a.text), a.first_origin() or origin)
    return to_yaml(a, None, ev.origin_of, origin)


def f_tojson(ev, args, origin, indent: int | None = None):
    (a,) = args
    _walk_budget(a, "toJson")
    try:
        # toPrettyJson is Go's json.MarshalIndent(v, "", "  ")
        text = json.dumps(_json_ready(a), separators=(",", ": ") if indent else (",", ":"), indent=indent,
                          ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = ""  # Go's json.Marshal refuses NaN and Inf; Helm's toJson then writes nothing
    return _rewrap(a, text, ev, origin) if not isinstance(a, Ref) else TStr.uniform(
        text, ev.origin_of(a.path) or origin
    )


def _json_ready(v: Any) -> Any:
    # `dict "theme" .Values.theme` holds the values it was given as they are carried here (with their origin)
    v = plain(v)
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return int(v)
    if isinstance(v, dict):
        return {str(k): _json_ready(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_ready(x) for x in v]
    return v


def _indent_tstr(t: TStr, n: int, origin: Any, lead_newline: bool) -> TStr:
    if t.text == UNKNOWN_MARKER:
        # an unknown block (an include of a missing helper, toYaml of an unknown): a comment, so the YAML
        # around it still parses and the key it belongs to reads as not set
        t = TStr.uniform("# " + UNKNOWN_MARKER, origin)
    pad = " " * n
    text: list[str] = []
    origins: list = []
    first_org = t.first_origin() or origin
    if lead_newline:
        text.append("\n")
        origins.append(first_org)
    text.append(pad)
    origins.extend([first_org] * n)
    for ch, org in zip(t.text, t.origins, strict=False):
        text.append(ch)
        origins.append(org)
        if ch == "\n":
            text.append(pad)
            origins.extend([org] * n)
    return TStr("".join(text), origins)


def _indent_width(n: Any, t: TStr, name: str) -> int:
    width = _to_int(plain(n))
    if width < 0:
        raise TemplateError(f"error calling {name}: strings: negative Repeat count")
    _need_chars(len(t.text) + width * (t.text.count("\n") + 1), f"{name} {width}")
    return width


def f_indent(ev, args, origin):
    n, s = args
    if plain(n) is UNKNOWN:
        return UNKNOWN
    t = ev.to_tstr(s, origin)
    return _indent_tstr(t, _indent_width(n, t, "indent"), origin, False)


def f_nindent(ev, args, origin):
    n, s = args
    if plain(n) is UNKNOWN:
        return UNKNOWN
    t = ev.to_tstr(s, origin)
    return _indent_tstr(t, _indent_width(n, t, "nindent"), origin, True)


def f_printf(ev, args, origin):
    if not args:
        raise Unevaluable("printf needs a format")
    _need_chars(sum(len(go_str(plain(a))) for a in args), "printf")
    fmt = plain(args[0])
    rest = list(args[1:])
    parts: list[TStr] = []
    i = 0
    lit: list[str] = []
    for m in re.finditer(r"%([-+# 0]*\d*(?:\.\d+)?)([a-zA-Z%])", fmt):
        lit.append(fmt[i : m.start()])
        i = m.end()
        verb = m.group(2)
        if verb == "%":
            lit.append("%")
            continue
        parts.append(TStr.uniform("".join(lit), origin))
        lit = []
        if not rest:
            parts.append(TStr.uniform(f"%!{verb}(MISSING)", origin))
            continue
        a = rest.pop(0)
        v = plain(a)
        if verb in ("s", "v"):
            text = go_str(v)
        elif verb == "q":
            text = _go_quote(go_str(v))
        elif verb == "d":
            if isinstance(v, int) and not isinstance(v, bool):
                text = str(v)
            else:
                kind = "float64" if isinstance(v, float) else "string" if isinstance(v, str) else "bool"
                text = f"%!d({kind}={go_str(v)})"
        elif verb in ("f", "g", "e"):
            prec = m.group(1)
            digits = re.findall(r"\d+", prec or "")
            if any(len(d) > 6 or int(d) > 1_000_000 for d in digits):
                raise Unevaluable(f"printf %{prec}{verb}: a width or precision over 1e6 (Go prints %!(BADPREC))")
            try:
                text = format(float(v), (prec or ".6") + verb) if verb == "f" else go_float(float(v))
            except (TypeError, ValueError):
                text = f"%!{verb}({go_str(v)})"
        elif verb == "t":
            text = go_str(v)
        else:
            raise Unevaluable(f"printf verb %{verb} is not evaluated")
        if isinstance(a, Ref):
            parts.append(TStr.uniform(text, ev.origin_of(a.path) or origin))
        elif isinstance(a, TStr):
            parts.append(TStr.uniform(text, a.first_origin() or origin))
        else:
            parts.append(TStr.uniform(text, origin))
    lit.append(fmt[i:])
    parts.append(TStr.uniform("".join(lit), origin))
    return _join(parts)


def f_print(ev, args, origin):
    _need_chars(sum(len(go_str(plain(a))) for a in args), "print")
    parts: list[TStr] = []
    prev_str = True
    for i, a in enumerate(args):
        is_str = isinstance(plain(a), str)
        if i and not is_str and not prev_str:
            parts.append(TStr.uniform(" ", origin))
        parts.append(ev.to_tstr(a, origin))
        prev_str = is_str
    return _join(parts)


def f_required(ev, args, origin):
    msg, val = args
    v = plain(val)
    if v is None or v == "":
        raise RequiredMissing(f"execution error: {plain(msg)}", origin)
    return val


def f_fail(ev, args, origin):
    raise ChartRefused(f"execution error: {plain(args[0]) if args else ''}", origin)


def f_index(ev, args, origin):
    cur = args[0]
    for k in args[1:]:
        key = plain(k)
        v = plain(cur)
        if v is None:
            raise TemplateError("index of untyped nil", origin)
        if isinstance(v, dict):
            if isinstance(v, OpenMap) and not isinstance(key, float) and key not in v:
                return UNKNOWN
            if isinstance(key, float) or key not in v:
                cur = None
                continue
            cur = Ref(v[key], cur.path + (key,)) if isinstance(cur, Ref) else v[key]
        elif isinstance(v, list):
            idx = _to_int(key)
            if not 0 <= idx < len(v):
                raise TemplateError(f"index out of range: {idx}", origin)
            cur = Ref(v[idx], cur.path + (idx,)) if isinstance(cur, Ref) else v[idx]
        else:
            raise TemplateError(f"can't index item of type {type(v).__name__}", origin)
    return cur


def f_get(ev, args, origin):
    d, k = args
    v = plain(d)
    key = plain(k)
    if isinstance(v, dict) and key in v:
        return Ref(v[key], d.path + (key,)) if isinstance(d, Ref) else v[key]
    if isinstance(v, OpenMap):
        return UNKNOWN
    return ""


def f_dict(ev, args, origin):
    out = {}
    for i in range(0, len(args) - 1, 2):
        out[go_str(plain(args[i]))] = args[i + 1]
    return {k: (v if not isinstance(v, TStr) else v.text) for k, v in out.items()}  # Refs kept: origins survive


def _cmp(op):
    def f(ev, args, origin):
        a, *others = [plain(x) for x in args]
        if op == "eq":
            return any(_eqv(a, b) for b in others)
        b = others[0]
        if op == "ne":
            return not _eqv(a, b)
        try:
            return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]
        except TypeError as exc:
            raise TemplateError(f"incompatible types for comparison: {op}", origin) from exc

    return f


def _eqv(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return float(a) == float(b)
    return a == b


def f_empty(ev, args, origin):
    t = truthy(args[0])
    return UNKNOWN if t is UNKNOWN else not t


def f_not(ev, args, origin):
    t = truthy(args[0])
    return UNKNOWN if t is UNKNOWN else not t


def f_haskey(ev, args, origin):
    d, k = (plain(a) for a in args)
    if isinstance(d, OpenMap) and k not in d:
        return UNKNOWN
    return isinstance(d, dict) and k in d


def f_len(ev, args, origin):
    v = plain(args[0])
    if v is None:
        raise TemplateError("len of nil pointer", origin)
    if isinstance(v, (str, list, dict)):
        return len(v)
    raise TemplateError(f"len of type {type(v).__name__}", origin)


def f_coalesce(ev, args, origin):
    for a in args:
        t = truthy(a)
        if t is UNKNOWN:
            return UNKNOWN
        if t:
            return a
    return None


def f_ternary(ev, args, origin):
    a, b, c = args
    t = truthy(c)
    if t is UNKNOWN:
        return UNKNOWN
    return a if t else b


def f_kindis(ev, args, origin):
    kind, v = (plain(a) for a in args)
    return _kind(v) == kind


def _kind(v: Any) -> str:
    if v is None:
        return "invalid"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "slice"
    if isinstance(v, dict):
        return "map"
    return "invalid"


def f_list(ev, args, origin):
    return [plain(a) for a in args]


def _go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return _wrap64(q if (a < 0) == (b < 0) else -q)  # Go truncates toward zero; MinInt64 / -1 wraps


def f_arith(op):
    """sprig's int64 arithmetic: operands through cast.ToInt64, results wrap around like Go's."""

    def f(ev, args, origin):
        vals = [_to_int(plain(a)) for a in args]
        if op == "add":
            return _wrap64(sum(vals))
        acc = vals[0]
        for v in vals[1:]:
            if op == "sub":
                acc = _wrap64(acc - v)
            elif op == "mul":
                acc = _wrap64(acc * v)
            elif op in ("div", "mod"):
                if v == 0:
                    raise TemplateError("integer divide by zero", origin)
                acc = _go_div(acc, v) if op == "div" else _wrap64(acc - v * _go_div(acc, v))
            elif op == "max":
                acc = max(acc, v)
            elif op == "min":
                acc = min(acc, v)
        return acc

    return f


def _alias_limit(decoded: int) -> float:
    """go-yaml's allowed ratio of alias expansions to decoded nodes (its guard against alias bombs)."""
    if decoded <= 400_000:
        return 0.99
    if decoded >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * (decoded - 400_000) / 3_600_000


def _from_yaml_data(data: Any) -> Any:
    """ruamel's result as Helm sees it, aliases expanded with go-yaml's budget: ("Error", message) on a bomb."""
    decoded = 0
    aliases = 0
    seen: set[int] = set()

    def conv(x: Any, depth: int) -> Any:
        nonlocal decoded, aliases
        decoded += 1
        if isinstance(x, (dict, list)):
            if id(x) in seen:
                aliases += 1
            seen.add(id(x))
            if aliases > 100 and decoded > 1000 and aliases / decoded > _alias_limit(decoded):
                raise _YamlRefused("yaml: document contains excessive aliasing")
            if decoded > MAX_NODES:
                raise BudgetExceeded(f"fromYaml of a document over vramlint's limit of {MAX_NODES:,} nodes")
            if depth > 500:
                raise _YamlRefused("yaml: exceeded max depth")
            if isinstance(x, dict):
                return {str(k) if not isinstance(k, str) else k: conv(v, depth + 1) for k, v in x.items()}
            return [conv(v, depth + 1) for v in x]
        return to_go_number(x)

    return conv(data, 0)


class _YamlRefused(Exception):
    pass


def _yaml_safe_load():
    """libyaml through PyYAML when it is there (a hundred times faster than pure-Python ruamel, and YAML 1.1 like
    Helm's go-yaml); ruamel otherwise, with a tighter size limit. Returns (load function, size limit)."""
    try:
        import yaml

        if getattr(yaml, "__with_libyaml__", False):
            return (lambda text: yaml.load(text, Loader=yaml.CSafeLoader)), MAX_FROM_YAML_CHARS
    except ImportError:
        pass
    from ruamel.yaml import YAML

    return YAML(typ="safe").load, MAX_FROM_YAML_CHARS // 10


def f_fromyaml(ev, args, origin):
    """Helm's fromYaml: a map, or a map holding "Error" when the text is not a YAML map."""
    text = _strval(plain(args[0]))
    if UNKNOWN_MARKER in text:
        return UNKNOWN  # the text an unevaluated part of an `include` left: its keys are unknown, not missing
    load, limit = _yaml_safe_load()
    if len(text) > limit:
        raise BudgetExceeded(f"fromYaml of {len(text):,} characters is over vramlint's limit of {limit:,}")
    try:
        data = load(text or "")
        data = _from_yaml_data(data if data is not None else {})
    except _YamlRefused as exc:
        return {"Error": str(exc)}
    except BudgetExceeded:
        raise
    except Exception:  # noqa: BLE001 - fromYaml returns an error map in Helm rather than failing
        return {"Error": "invalid YAML"}
    if not isinstance(data, dict):
        return {"Error": "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal into Go value of "
                         "type map[string]interface {}"}
    return data


def _json_number(text: str) -> float:
    f = float(text) if len(text) < 400 else float("inf")
    if f in (float("inf"), float("-inf")):
        raise ValueError(f"json: cannot unmarshal number {text[:40]} into Go value of type float64")
    return f


def _json_constant(text: str) -> Any:
    raise ValueError(f"invalid character '{text[0]}' looking for beginning of value")


def f_fromjson(ev, args, origin):
    """Helm's fromJson: a map, or a map holding "Error" (numbers are float64; NaN/Infinity are not JSON)."""
    text = _strval(plain(args[0]))
    if UNKNOWN_MARKER in text:
        return UNKNOWN
    try:
        data = json.loads(text or "{}", parse_int=_json_number, parse_float=_json_number,
                          parse_constant=_json_constant)
    except RecursionError:
        raise BudgetExceeded("fromJson of a document nested too deeply for vramlint") from None
    except ValueError as exc:
        return {"Error": str(exc)}
    if not isinstance(data, dict):
        return {"Error": "json: cannot unmarshal into Go value of type map[string]interface {}"}
    _walk_budget(data, "fromJson")
    return data


def f_merge(ev, args, origin):
    for a in args:
        _walk_budget(a, "merge")
    dst = _deep_copy(plain(args[0])) or {}
    for src in args[1:]:
        _merge_missing(dst, plain(src) or {})
    return dst


def f_merge_overwrite(ev, args, origin):
    """Sprig's mergeOverwrite: the right-most dict wins, through mergo's WithOverride, which keeps the left value
    where the right one is empty (false, 0, "", nil, an empty list or map: Go's zero values)."""
    for a in args:
        _walk_budget(a, "mergeOverwrite")
    dst = _deep_copy(plain(args[0])) or {}
    for src in args[1:]:
        _merge_over(dst, plain(src) or {})
    return dst


def _merge_over(dst: dict, src: dict) -> None:
    for k, v in src.items():
        if isinstance(dst.get(k), dict) and isinstance(v, dict):
            _merge_over(dst[k], v)
        elif k not in dst or truthy(v):
            dst[k] = _deep_copy(v)


def _merge_missing(dst: dict, src: dict) -> None:
    for k, v in src.items():
        if k not in dst:
            dst[k] = _deep_copy(v)
        elif isinstance(dst[k], dict) and isinstance(v, dict):
            _merge_missing(dst[k], v)


def _deep_copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _deep_copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_deep_copy(x) for x in v]
    return v


def f_tpl(ev, args, origin):
    if len(args) != 2:
        raise Unevaluable("tpl takes a template string and a value")
    text = plain(args[0])
    if isinstance(text, str) and "{{" not in text:
        return _rewrap(args[0], text, ev, origin)
    if not isinstance(text, str):
        raise Unevaluable("tpl of a value that is not a string")
    return ev.tpl(args[0], text, args[1], origin)


def f_lookup(ev, args, origin):
    return {}  # what `helm template` returns too: no cluster is contacted


_NO_RE2 = "regular expressions are not evaluated without google-re2 (Go's linear-time engine is RE2)"


def _re2(pattern: Any):
    """Go's regexp is RE2 (linear time); Python's re backtracks, so a hostile pattern could run for hours."""
    return _re2_compiled(_strval(pattern))


def _re2_compiled(pattern: str):
    cache = _RE2_CACHE
    if pattern in cache:
        return cache[pattern]
    try:
        import re2
    except ImportError:
        raise Unevaluable(_NO_RE2) from None
    opts = re2.Options()
    opts.log_errors = False  # RE2 would print parse errors on stderr
    try:
        compiled = re2.compile(pattern, opts)
    except re2.error as exc:
        msg = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        compiled = RegexError(f"regexp: Compile({pattern!r}): error parsing regexp: {msg}")
    if len(cache) > 256:
        cache.clear()
    cache[pattern] = compiled
    return compiled


_RE2_CACHE: dict[str, Any] = {}


class RegexError(Exception):
    pass


def _must(compiled: Any) -> Any:
    if isinstance(compiled, RegexError):
        raise TemplateError(str(compiled))  # sprig's regexp.MustCompile panics: Helm fails here
    return compiled


def _go_expand(template: str):
    """Go's Regexp.Expand ($1, ${1}, $name, ${name}, $$) as a replacement function."""

    def repl(m) -> str:
        out: list[str] = []
        i = 0
        n = len(template)
        while i < n:
            c = template[i]
            if c != "$" or i + 1 >= n:
                out.append(c)
                i += 1
                continue
            if template[i + 1] == "$":
                out.append("$")
                i += 2
                continue
            braced = template[i + 1] == "{"
            mm = re.compile(r"\{([A-Za-z0-9_]+)\}" if braced else r"([A-Za-z0-9_]+)").match(template, i + 1)
            if not mm:
                out.append(c)
                i += 1
                continue
            name = mm.group(1)
            try:
                val = m.group(int(name)) if name.isdigit() else m.group(name)
            except (IndexError, KeyError, ValueError, TypeError):
                val = None
            out.append(val or "")
            i = mm.end()
        return "".join(out)

    return repl


def _regex_match(p, s):
    compiled = _re2(p)
    if isinstance(compiled, RegexError):
        return False  # sprig's regexMatch ignores the compile error
    return compiled.search(_strval(s)) is not None


def _regex_find(p, s):
    m = _must(_re2(p)).search(_strval(s))
    return m.group(0) if m else ""


def _regex_find_all(p, s, n):
    found = [m.group(0) for m in _must(_re2(p)).finditer(_strval(s))]
    k = _to_int(n)
    return found if k < 0 else found[:k]


def _regex_replace(p, s, r, literal: bool = False):
    text = _strval(s)
    rtext = _strval(r)
    compiled = _must(_re2(p))
    matches = sum(1 for _ in compiled.finditer(text))
    _need_chars(len(text) + matches * len(rtext), "regexReplaceAll")
    return compiled.sub((lambda m: rtext) if literal else _go_expand(rtext), text)


def _regex_split(p, s, n):
    parts = _must(_re2(p)).split(_strval(s))
    k = _to_int(n)
    return parts if k < 0 else parts[:k]


def _repeat(count, s):
    n = _to_int(count)
    text = _strval(s)
    if n < 0:
        raise TemplateError("error calling repeat: strings: negative Repeat count")
    _need_chars(n * len(text), f"repeat {n}")
    return text * n


def _replace(old, new, s):
    text, o, w = _strval(s), _strval(old), _strval(new)
    if o and o not in text:
        return text
    _need_chars(len(text) + text.count(o) * (len(w) - len(o)), "replace")
    return text.replace(o, w)


def _join_strings(sep, items):
    v = items if isinstance(items, list) else [] if items is None else [items]
    _walk_budget(v, "join")
    strs = [_strval(x) for x in v]
    _need_chars(sum(map(len, strs)) + len(_strval(sep)) * len(strs), "join")
    return _strval(sep).join(strs)


def _concat(lists):
    vals = [plain(x) or [] for x in lists]
    _need_items(sum(len(v) for v in vals if isinstance(v, list)), "concat")
    return [x for v in vals for x in v]


# sprig's semverCompare (Masterminds/semver v3, as Helm 3 vendors it): `semverCompare "<v0.13.0" .Values.tag`.
# A version is `v?MAJOR[.MINOR[.PATCH]][-pre][+meta]` (missing parts are 0); a constraint is `||`-separated groups
# of comma- or space-separated comparisons (=, !=, >, <, >=, <=, =<, =>, ~, ~>, ^, `A - B`, x/* wildcards). Forms
# whose outcome this does not model (prereleases, wildcards beside an operator) are unknown, never a guess.
_SEMVER_RE = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_SEMVER_OP_RE = re.compile(r"^(=>|=<|>=|<=|!=|~>|[=<>~^])?\s*(.+)$")


def _semver(text: str) -> tuple[tuple[int, int, int], int]:
    """(major, minor, patch) and how many parts were written; a prerelease is not modelled."""
    m = _SEMVER_RE.match(text.strip())
    if m is None:
        raise ValueError(f"{text!r} is not a semantic version")
    if m.group(4):
        raise ValueError(f"prerelease {text!r}: not modelled")
    parts = [m.group(i) for i in (1, 2, 3)]
    written = sum(p is not None for p in parts)
    return (int(parts[0]), int(parts[1] or 0), int(parts[2] or 0)), written


def _semver_wild(text: str) -> tuple[tuple[int, int, int], int]:
    """A constraint version: `1.2.x`, `1.*`, `*` end at the first wildcard (written parts before it)."""
    parts = text.strip().lstrip("v").split(".")
    if parts and parts[0] in ("x", "X", "*", ""):
        return (0, 0, 0), 0
    for i, part in enumerate(parts):
        if part in ("x", "X", "*"):
            return _semver(".".join(parts[:i]))[0], i
    return _semver(text)


def _semver_bump(v: tuple[int, int, int], written: int) -> tuple[int, int, int]:
    """The first version past `v` at the precision written (1.2 -> 1.3.0, 1 -> 2.0.0)."""
    if written <= 1:
        return (v[0] + 1, 0, 0)
    if written == 2:
        return (v[0], v[1] + 1, 0)
    return (v[0], v[1], v[2] + 1)


def _semver_check(op: str, target: str, v: tuple[int, int, int]) -> bool:
    c, written = _semver_wild(target)
    wild = written < 3 and not _SEMVER_RE.match(target.strip())
    if wild and op not in ("", "="):
        raise ValueError(f"wildcard with {op}: not modelled")
    if op in ("", "=") or (op == "!=" and not wild):
        inside = c <= v < _semver_bump(c, written) if written < 3 else v == c
        return inside if op != "!=" else not inside
    if op == "!=":
        raise ValueError("wildcard with !=: not modelled")
    if op == ">":
        return v > c
    if op == "<":
        return v < c
    if op in (">=", "=>"):
        return v >= c
    if op in ("<=", "=<"):
        return v <= c
    if op in ("~", "~>"):
        return c <= v < _semver_bump(c, 1 if written == 1 else 2)  # ~1 is 1.x, ~1.2 and ~1.2.3 are 1.2.x
    if op == "^":
        if c[0] > 0 or written == 1:
            upper = (c[0] + 1, 0, 0)
        elif c[1] > 0 or written == 2:
            upper = (0, c[1] + 1, 0)
        else:
            upper = (0, 0, c[2] + 1)
        return c <= v < upper
    raise ValueError(f"operator {op!r}: not modelled")


def _semver_compare(constraint: Any, version: Any) -> bool:
    v, _ = _semver(_strval(version))
    text = _strval(constraint).strip()
    if not text:
        raise ValueError("empty constraint")
    for group in text.split("||"):
        group = re.sub(r"\s+-\s+", " - ", group.strip())
        words = [w for w in re.split(r"[\s,]+", group) if w]
        # `A - B` is >=A <=B; an operator written apart from its version (`>= 1.2`) joins it
        joined: list[str] = []
        i = 0
        while i < len(words):
            if i + 2 < len(words) and words[i + 1] == "-":
                joined += [">=" + words[i], "<=" + words[i + 2]]
                i += 3
            elif words[i] in ("=", "!=", ">", "<", ">=", "<=", "=<", "=>", "~", "~>", "^") and i + 1 < len(words):
                joined.append(words[i] + words[i + 1])
                i += 2
            else:
                joined.append(words[i])
                i += 1
        if not joined:
            raise ValueError("empty constraint group")
        ok = True
        for word in joined:
            m = _SEMVER_OP_RE.match(word)
            if m is None:
                raise ValueError(f"constraint {word!r}")
            if not _semver_check(m.group(1) or "", m.group(2), v):
                ok = False
        if ok:
            return True
    return False


def _go_split(sep: str, text: str) -> list[str]:
    """Go's strings.Split: an empty separator splits after each character (Python's str.split refuses it)."""
    return list(text) if sep == "" else text.split(sep)


def _cat(args):
    strs = [go_str(plain(x)) for x in args if plain(x) is not None]
    _need_chars(sum(map(len, strs)) + len(strs), "cat")
    return " ".join(strs)


_FUNCS = {
    "quote": f_quote,
    "squote": f_squote,
    "default": f_default,
    "toYaml": f_toyaml,
    "mustToYaml": f_toyaml,
    "toJson": f_tojson,
    "mustToJson": f_tojson,
    "toPrettyJson": lambda ev, args, origin: f_tojson(ev, args, origin, indent=2),
    "indent": f_indent,
    "nindent": f_nindent,
    "printf": f_printf,
    "print": f_print,
    "required": f_required,
    "fail": f_fail,
    "index": f_index,
    "get": f_get,
    "dict": f_dict,
    "list": f_list,
    "tuple": f_list,
    "eq": _cmp("eq"),
    "ne": _cmp("ne"),
    "lt": _cmp("lt"),
    "le": _cmp("le"),
    "gt": _cmp("gt"),
    "ge": _cmp("ge"),
    "empty": f_empty,
    "not": f_not,
    "hasKey": f_haskey,
    "len": f_len,
    "coalesce": f_coalesce,
    "ternary": f_ternary,
    "kindIs": f_kindis,
    "kindOf": lambda ev, a, o: _kind(plain(a[0])),
    "typeOf": lambda ev, a, o: _kind(plain(a[0])),
    "add": f_arith("add"),
    "add1": lambda ev, a, o: _wrap64(_to_int(plain(a[0])) + 1),
    "sub": f_arith("sub"),
    "mul": f_arith("mul"),
    "div": f_arith("div"),
    "mod": f_arith("mod"),
    "max": f_arith("max"),
    "min": f_arith("min"),
    "int": _scalar(_to_int, 1),
    "int64": _scalar(_to_int, 1),
    "atoi": _scalar(_atoi, 1),
    "float64": _scalar(_to_float, 1),
    "toString": _scalar(_strval, 1),
    "trim": _scalar(lambda s: _strval(s).strip(), 1),
    "trimAll": _scalar(lambda c, s: _strval(s).strip(_strval(c)), 2),
    "trimSuffix": _scalar(lambda suf, s: _strval(s)[: -len(suf)] if suf and _strval(s).endswith(suf) else _strval(s), 2),
    "trimPrefix": _scalar(lambda pre, s: _strval(s)[len(pre):] if _strval(s).startswith(pre) else _strval(s), 2),
    "lower": _scalar(lambda s: _strval(s).lower(), 1),
    "upper": _scalar(lambda s: _strval(s).upper(), 1),
    "title": _scalar(lambda s: _strval(s).title(), 1),
    "replace": _scalar(_replace, 3),
    "repeat": _scalar(_repeat, 2),
    "trunc": _scalar(lambda n, s: _strval(s)[: _to_int(n)] if _to_int(n) >= 0 else _strval(s)[_to_int(n):], 2),
    "nospace": _scalar(lambda s: re.sub(r"\s", "", _strval(s)), 1),
    "semverCompare": lambda ev, a, o: _semver_compare(plain(a[0]), plain(a[1])),
    "hasPrefix": lambda ev, a, o: _strval(plain(a[1])).startswith(_strval(plain(a[0]))),
    "hasSuffix": lambda ev, a, o: _strval(plain(a[1])).endswith(_strval(plain(a[0]))),
    "contains": lambda ev, a, o: _strval(plain(a[0])) in _strval(plain(a[1])),
    "has": lambda ev, a, o: plain(a[0]) in (plain(a[1]) or []),
    "join": lambda ev, a, o: _join_strings(plain(a[0]), plain(a[1])),
    "splitList": lambda ev, a, o: _go_split(_strval(plain(a[0])), _strval(plain(a[1]))),
    # sprig's split: a dict of the parts keyed _0, _1, ... (`(split "/" .Values.model)._1`)
    "split": lambda ev, a, o: {f"_{i}": part for i, part in
                               enumerate(_go_split(_strval(plain(a[0])), _strval(plain(a[1]))))},
    "first": lambda ev, a, o: (plain(a[0]) or [None])[0],
    "last": lambda ev, a, o: (plain(a[0]) or [None])[-1],
    "keys": lambda ev, a, o: sorted((plain(a[0]) or {}).keys()),
    "sortAlpha": lambda ev, a, o: sorted(_strval(x) for x in (plain(a[0]) or [])),
    "toStrings": lambda ev, a, o: [_strval(x) for x in (plain(a[0]) or [])],
    "until": lambda ev, a, o: _until(_to_int(plain(a[0]))),
    "untilStep": lambda ev, a, o: _until_step(*(_to_int(plain(x)) for x in a)),
    "seq": lambda ev, a, o: _seq(*(_to_int(plain(x)) for x in a)),
    "concat": lambda ev, a, o: _concat(a),
    "append": lambda ev, a, o: list(plain(a[0]) or []) + [plain(a[1])],
    "uniq": lambda ev, a, o: list(dict.fromkeys(plain(a[0]) or [])),
    "compact": lambda ev, a, o: [x for x in (plain(a[0]) or []) if truthy(x)],
    "cat": lambda ev, a, o: _cat(a),
    "merge": f_merge,
    "mustMerge": f_merge,
    "mergeOverwrite": f_merge_overwrite,
    "mustMergeOverwrite": f_merge_overwrite,
    "deepCopy": lambda ev, a, o: _walk_budget(a[0], "deepCopy") and _deep_copy(plain(a[0])),
    "fromYaml": f_fromyaml,
    "fromJson": f_fromjson,
    "tpl": f_tpl,
    "lookup": f_lookup,
    "b64enc": lambda ev, a, o: __import__("base64").b64encode(_strval(plain(a[0])).encode()).decode(),
    "sha256sum": lambda ev, a, o: hashlib.sha256(_strval(plain(a[0])).encode()).hexdigest(),
    "regexMatch": _scalar(_regex_match, 2),
    "regexFind": _scalar(_regex_find, 2),
    "regexFindAll": _scalar(_regex_find_all, 3),
    "regexReplaceAll": _scalar(_regex_replace, 3),
    "regexReplaceAllLiteral": _scalar(lambda p, s, r: _regex_replace(p, s, r, literal=True), 3),
    "regexSplit": _scalar(_regex_split, 3),
    "ceil": _go_round(__import__("math").ceil),
    "floor": _go_round(__import__("math").floor),
}
_UNKNOWN_AWARE = {"default", "coalesce", "ternary", "empty", "not", "nindent", "indent"}
