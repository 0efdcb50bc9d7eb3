"""A bounded reader of HashiCorp's configuration language (HCL2 native syntax) for Terraform files, with positions.

Only what vramlint reads of a Terraform module is needed: the blocks and attributes of a body, and expressions as
a tree whose literal parts (numbers, strings, heredocs, tuples, objects) can be evaluated, every node with the
0-based line and column it is written at. Whatever else an expression may be (operators, conditionals, `for`
expressions, splats) is parsed only to find where it ends and stays an `Opaque` node: unknown, never guessed.

Why not python-hcl2: its import takes 63 ms and its first parse of a 7 KB file 0.08 CPU-s (1.5 s before lark's
grammar cache is written); its output keeps no position of an attribute or value (only blocks' first and last
lines), and its expressions come back as text to parse again.

Bounds: MAX_DEPTH nested blocks, brackets and templates together; MAX_NODES nodes a file; MAX_HEREDOC_CHARS a
heredoc. Past one, `HclError` (with the line) ends the reading of the file, which the caller says.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_HEREDOC_CHARS = 1_000_000


class HclError(Exception):
    def __init__(self, message: str, line: int) -> None:  # line: 0-based
        super().__init__(message)
        self.line = line


@dataclass
class Expr:
    line: int
    col: int
    end: int = 0  # offset just past the expression in the text


@dataclass
class Literal(Expr):
    value: Any = None  # int, float, bool, None


class BigNumber(str):
    """An integer literal longer than Python's int() converts (4,300 digits): Terraform's numbers are arbitrary
    precision, so the file is valid; its digits are kept as text, which tostring() and interpolation write as
    Terraform does and a vLLM flag then reads as the number it is."""


MAX_INT_DIGITS = 4000  # past it an integer literal is a BigNumber (under sys.get_int_max_str_digits' 4,300)


@dataclass
class Interp:
    expr: Expr
    start: int  # offsets of `${` and of just past `}` in the text
    stop: int


@dataclass
class Template(Expr):
    """A quoted string or a heredoc: literal text and `${ }` interpolations; `%{ }` directives kept as `Directive`."""

    parts: list[Any] = field(default_factory=list)  # str | Interp | Directive
    heredoc: bool = False
    flush: bool = False  # `<<-`: the smallest indentation of its lines is removed
    body_line: int = 0  # 0-based line of a heredoc's first body line
    flat: bool = False  # a JSON string: its text's lines are not the file's (its values all sit at its place)


@dataclass
class Directive:
    text: str
    start: int
    stop: int


@dataclass
class TupleExpr(Expr):
    items: list[Expr] = field(default_factory=list)


@dataclass
class ObjectItem:
    key: Expr  # a Template or Ref (a bare name is the key's text), or any expression in parentheses
    value: Expr
    bare: str | None = None  # the key written as a bare identifier


@dataclass
class ObjectExpr(Expr):
    items: list[ObjectItem] = field(default_factory=list)


@dataclass
class Ref(Expr):
    """A traversal: `var.model`, `local.x["a"]`, `each.value`, `module.eks.cluster_name`: its root name and steps
    (a str attribute, or an Expr index)."""

    root: str = ""
    steps: list[Any] = field(default_factory=list)
    text: str = ""


@dataclass
class Call(Expr):
    name: str = ""
    args: list[Expr] = field(default_factory=list)
    text: str = ""


@dataclass
class Opaque(Expr):
    """An expression vramlint does not evaluate (an operator, a conditional, a `for` expression): its text."""

    text: str = ""
    refs: list[Ref] = field(default_factory=list)  # the references it holds (said when it stays unknown)
    cond: Any = None  # a conditional's (condition, true, false) expressions
    compare: Any = None  # `A == B` / `A != B` alone: (operator, A, B)


def _comparison(parts: list[Expr], ops: list[str], line: int, col: int, text: str, end: int) -> Opaque | None:
    """`A == B` or `A != B` with no other operator beside it (whose precedence would matter): an expression whose
    value is known when both sides are (`var.inference_hardware == "gpu" ? ... : ...`); None otherwise."""
    if len(parts) != 2 or len(ops) != 1 or ops[0] not in ("==", "!="):
        return None
    return Opaque(line, col, end, text, _refs(parts), None, (ops[0], parts[0], parts[1]))


@dataclass
class Attribute:
    name: str
    expr: Expr
    line: int
    col: int


@dataclass
class Block:
    type: str
    labels: list[str]
    body: list[Any]  # Attribute | Block
    line: int
    col: int
    end_line: int = 0  # 0-based line of its closing brace

    def attr(self, name: str) -> Attribute | None:
        return next((a for a in self.body if isinstance(a, Attribute) and a.name == name), None)

    def blocks(self, name: str) -> list[Block]:
        return [b for b in self.body if isinstance(b, Block) and b.type == name]


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SPACE = re.compile(r"(?:[ \t\r]+|\\\n|#[^\n]*|//[^\n]*|/\*.*?\*/)*", re.S)  # a body's spaces and comments
_ALL_SPACE = re.compile(r"(?:\s+|#[^\n]*|//[^\n]*|/\*.*?\*/)*", re.S)  # inside brackets: newlines too
_HEREDOC = re.compile(r"<<(-?)([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n")
_BINARY = ("==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "<", ">")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.nodes = 0
        self.depth = 0

    # --- positions and errors
    def pos(self, i: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, i) - 1
        return line, i - self.starts[line]

    def fail(self, message: str, i: int) -> HclError:
        return HclError(message, self.pos(min(i, self.n))[0])

    def count(self, i: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.fail(f"more than {MAX_NODES:,} values in this file (vramlint's limit)", i)

    def enter(self, i: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"nested more than {MAX_DEPTH} levels deep (vramlint's limit)", i)

    def skip(self, i: int, newlines: bool) -> int:
        return (_ALL_SPACE if newlines else _SPACE).match(self.text, i).end()

    # --- bodies
    def body(self, i: int, closing: str | None) -> tuple[list[Any], int]:
        items: list[Any] = []
        while True:
            i = self.skip(i, True)
            if i >= self.n:
                if closing is not None:
                    raise self.fail("a block is not closed before the end of the file", i)
                return items, i
            if closing is not None and self.text[i] == closing:
                return items, i + 1
            m = _IDENT.match(self.text, i)
            if m is None:
                raise self.fail(f"unexpected {self.text[i]!r} where an attribute or block was expected", i)
            name, start = m.group(0), i
            self.count(i)
            i = self.skip(m.end(), False)
            if i < self.n and self.text[i] == "=" and self.text[i + 1:i + 2] != "=":
                expr, i = self.expr(self.skip(i + 1, False), False)
                line, col = self.pos(start)
                items.append(Attribute(name, expr, line, col))
                i = self.skip(i, False)
                if i < self.n and self.text[i] not in "\n}":
                    raise self.fail(f"unexpected {self.text[i]!r} after the attribute {name}", i)
                continue
            labels: list[str] = []
            while i < self.n and self.text[i] != "{":
                if self.text[i] == '"':
                    label, i = self.template(i)
                    labels.append("".join(p for p in label.parts if isinstance(p, str)))
                else:
                    lm = _IDENT.match(self.text, i)
                    if lm is None:
                        raise self.fail(f"unexpected {self.text[i]!r} in the header of block {name}", i)
                    labels.append(lm.group(0))
                    i = lm.end()
                i = self.skip(i, False)
            if i >= self.n:
                raise self.fail(f"block {name} has no body", start)
            self.enter(i)
            inner, i = self.body(i + 1, "}")
            self.depth -= 1
            line, col = self.pos(start)
            items.append(Block(name, labels, inner, line, col, self.pos(i - 1)[0]))

    # --- expressions
    def expr(self, i: int, newlines: bool) -> tuple[Expr, int]:
        start = i
        first, i = self.unary(i, newlines)
        parts = [first]
        ops = False
        seen: list[str] = []
        while True:
            j = self.skip(i, newlines)
            if j >= self.n:
                break
            op = next((o for o in _BINARY if self.text.startswith(o, j)), None)
            if op is not None and not self.text.startswith("=>", j):
                nxt, i = self.unary(self.skip(j + len(op), True), newlines)
                parts.append(nxt)
                seen.append(op)
                ops = True
                continue
            if self.text[j] == "?":
                self.enter(j)
                yes, k = self.expr(self.skip(j + 1, True), True)
                k = self.skip(k, True)
                if k >= self.n or self.text[k] != ":":
                    raise self.fail("a conditional expression without its `:`", k)
                no, i = self.expr(self.skip(k + 1, True), newlines)
                self.depth -= 1
                line, col = self.pos(start)
                cond = first if not ops else _comparison(parts, seen, line, col, self.text[start:j].rstrip(), j)
                return Opaque(line, col, i, self.text[start:i], _refs(parts + [yes, no]),
                              (cond, yes, no) if cond is not None else None), i
            break
        if not ops:
            return first, i
        line, col = self.pos(start)
        return _comparison(parts, seen, line, col, self.text[start:i], i) or Opaque(
            line, col, i, self.text[start:i], _refs(parts)), i

    def unary(self, i: int, newlines: bool) -> tuple[Expr, int]:
        if i < self.n and (self.text[i] == "!" or (self.text[i] == "-" and not self.text[i + 1:i + 2].isdigit())):
            inner, j = self.unary(self.skip(i + 1, newlines), newlines)
            line, col = self.pos(i)
            return Opaque(line, col, j, self.text[i:j], _refs([inner])), j
        return self.postfix(i, newlines)

    def postfix(self, i: int, newlines: bool) -> tuple[Expr, int]:
        start = i
        node, i = self.primary(i)
        while i < self.n:
            c = self.text[i]
            if c == "." and i + 1 < self.n:
                m = _IDENT.match(self.text, i + 1)
                if m is not None and isinstance(node, Ref):
                    node.steps.append(m.group(0))
                    i = m.end()
                elif m is None and self.text[i + 1:i + 2].isdigit() and isinstance(node, Ref):
                    j = i + 1  # `.0`: the legacy index syntax, `[0]`
                    while j < self.n and self.text[j].isdigit():
                        j += 1
                    line, col = self.pos(i + 1)
                    if j - i - 1 > MAX_INT_DIGITS:
                        raise self.fail(f"an index of {j - i - 1:,} digits", i)
                    node.steps.append(Literal(line, col, j, int(self.text[i + 1:j])))
                    i = j
                elif self.text[i + 1] == "*" or (m is None and self.text[i + 1:i + 2].isdigit()):
                    j = i + 2
                    while j < self.n and self.text[j].isdigit():
                        j += 1
                    node = self._opaque_from(node, start, j)
                    i = j
                elif m is not None:
                    node = self._opaque_from(node, start, m.end())
                    i = m.end()
                else:
                    break
            elif c == "[":
                self.enter(i)
                j = self.skip(i + 1, True)
                if self.text.startswith("*", j):
                    j = self.skip(j + 1, True)
                    if j >= self.n or self.text[j] != "]":
                        raise self.fail("a splat without its `]`", j)
                    node = self._opaque_from(node, start, j + 1)
                    i = j + 1
                else:
                    index, j = self.expr(j, True)
                    j = self.skip(j, True)
                    if j >= self.n or self.text[j] != "]":
                        raise self.fail("an index without its `]`", j)
                    if isinstance(node, Ref):
                        node.steps.append(index)
                    else:
                        node = self._opaque_from(node, start, j + 1)
                    i = j + 1
                self.depth -= 1
            else:
                break
        if isinstance(node, Ref):
            node.end = i
            node.text = self.text[start:i]
        return node, i

    def _opaque_from(self, node: Expr, start: int, end: int) -> Opaque:
        line, col = self.pos(start)
        return Opaque(line, col, end, self.text[start:end], _refs([node]))

    def primary(self, i: int) -> tuple[Expr, int]:
        if i >= self.n:
            raise self.fail("an expression is missing at the end of the file", i)
        self.count(i)
        c = self.text[i]
        line, col = self.pos(i)
        if c == '"':
            return self.template(i)
        if c == "<" and self.text.startswith("<<", i):
            return self.heredoc(i)
        if c == "[":
            return self.collection(i, "]")
        if c == "{":
            return self.collection(i, "}")
        if c == "(":
            self.enter(i)
            inner, j = self.expr(self.skip(i + 1, True), True)
            j = self.skip(j, True)
            if j >= self.n or self.text[j] != ")":
                raise self.fail("a parenthesis is not closed", i)
            self.depth -= 1
            inner.end = j + 1
            return inner, j + 1
        m = _NUMBER.match(self.text, i + 1 if c == "-" else i) if c == "-" or c.isdigit() else None
        if m is not None:
            text = self.text[i:m.end()]
            value: Any = float(text) if any(ch in text for ch in ".eE") else \
                BigNumber(text) if len(text) > MAX_INT_DIGITS else int(text)
            return Literal(line, col, m.end(), value), m.end()
        m = _IDENT.match(self.text, i)
        if m is None:
            raise self.fail(f"unexpected {c!r} where an expression was expected", i)
        name, j = m.group(0), m.end()
        if name in ("true", "false", "null"):
            return Literal(line, col, j, {"true": True, "false": False, "null": None}[name]), j
        k = self.skip(j, False)
        if k < self.n and self.text[k] == "(" or (self.text.startswith("::", j)):
            while self.text.startswith("::", j):  # provider::NAME::function
                m2 = _IDENT.match(self.text, j + 2)
                if m2 is None:
                    break
                name, j = name + "::" + m2.group(0), m2.end()
            k = self.skip(j, False)
            if k < self.n and self.text[k] == "(":
                return self.call(i, name, k)
        return Ref(line, col, j, name, [], name), j

    def call(self, start: int, name: str, i: int) -> tuple[Expr, int]:
        self.enter(i)
        args: list[Expr] = []
        i = self.skip(i + 1, True)
        while i < self.n and self.text[i] != ")":
            arg, i = self.expr(i, True)
            args.append(arg)
            i = self.skip(i, True)
            if self.text.startswith("...", i):
                i = self.skip(i + 3, True)
            if i < self.n and self.text[i] == ",":
                i = self.skip(i + 1, True)
            elif i < self.n and self.text[i] != ")":
                raise self.fail(f"unexpected {self.text[i]!r} in the arguments of {name}()", i)
        if i >= self.n:
            raise self.fail(f"the call of {name}() is not closed", start)
        self.depth -= 1
        line, col = self.pos(start)
        return Call(line, col, i + 1, name, args, self.text[start:i + 1]), i + 1

    def collection(self, i: int, closing: str) -> tuple[Expr, int]:
        start = i
        self.enter(i)
        line, col = self.pos(i)
        i = self.skip(i + 1, True)
        if _IDENT.match(self.text, i) and _IDENT.match(self.text, i).group(0) == "for" and \
                self.text[i + 3:i + 4] in (" ", "\t", "\n"):
            j = self._balanced(start, closing)
            self.depth -= 1
            return Opaque(line, col, j, self.text[start:j]), j
        if closing == "]":
            items: list[Expr] = []
            while i < self.n and self.text[i] != "]":
                item, i = self.expr(i, True)
                items.append(item)
                i = self.skip(i, True)
                if i < self.n and self.text[i] == ",":
                    i = self.skip(i + 1, True)
                elif i < self.n and self.text[i] != "]":
                    raise self.fail(f"unexpected {self.text[i]!r} in a list", i)
            if i >= self.n:
                raise self.fail("a list is not closed", start)
            self.depth -= 1
            return TupleExpr(line, col, i + 1, items), i + 1
        entries: list[ObjectItem] = []
        while i < self.n and self.text[i] != "}":
            bare = None
            m = _IDENT.match(self.text, i)
            if m is not None and self.text[self.skip(m.end(), False):][:1] in ("=", ":") and \
                    not self.text.startswith("==", self.skip(m.end(), False)):
                kl, kc = self.pos(i)
                bare = m.group(0)
                key: Expr = Template(kl, kc, m.end(), [bare])
                i = m.end()
            else:
                key, i = self.expr(i, False)
            i = self.skip(i, False)
            if i >= self.n or self.text[i] not in "=:":
                raise self.fail("an object's key without `=` or `:`", i)
            value, i = self.expr(self.skip(i + 1, True), False)
            entries.append(ObjectItem(key, value, bare))
            i = self.skip(i, False)
            if i < self.n and self.text[i] in ",\n":
                i = self.skip(i + 1, True)
            elif i < self.n and self.text[i] != "}":
                raise self.fail(f"unexpected {self.text[i]!r} in an object", i)
        if i >= self.n:
            raise self.fail("an object is not closed", start)
        self.depth -= 1
        return ObjectExpr(line, col, i + 1, entries), i + 1

    def _balanced(self, i: int, closing: str) -> int:
        """Past the bracket opened at ``i`` (strings and nested brackets skipped): a `for` expression's text."""
        pairs = {"[": "]", "{": "}", "(": ")"}
        stack = [closing]
        j = i + 1
        while j < self.n:
            c = self.text[j]
            if c == '"':
                _t, j = self.template(j)
                continue
            if c in pairs:
                stack.append(pairs[c])
                if len(stack) > MAX_DEPTH:
                    raise self.fail(f"nested more than {MAX_DEPTH} levels deep (vramlint's limit)", j)
            elif c in ")]}":
                if c != stack[-1]:
                    raise self.fail(f"unexpected {c!r}", j)
                stack.pop()
                if not stack:
                    return j + 1
            j += 1
        raise self.fail("a bracket is not closed", i)

    # --- templates
    def template(self, i: int) -> tuple[Template, int]:
        line, col = self.pos(i)
        parts, j = self.template_parts(i + 1, '"')
        return Template(line, col, j, parts), j

    def template_parts(self, i: int, until: str | None, end: int | None = None) -> tuple[list[Any], int]:
        """Literal text and interpolations from ``i`` to the closing quote (``until``) or to ``end``."""
        stop = self.n if end is None else end
        parts: list[Any] = []
        buf: list[str] = []
        self.enter(i)
        while True:
            if i >= stop:
                if until is not None:
                    raise self.fail("a string is not closed", i)
                break
            c = self.text[i]
            if until is not None and c == until:
                i += 1
                break
            if until is not None and c == "\n":
                raise self.fail("a quoted string is not closed on its line", i)
            if c == "\\" and until is not None:
                esc = self.text[i + 1:i + 2]
                buf.append({"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}.get(esc, esc))
                if esc in ("u", "U"):
                    width = 4 if esc == "u" else 8
                    digits = self.text[i + 2:i + 2 + width]
                    try:
                        buf[-1] = chr(int(digits, 16))
                        i += width
                    except ValueError:
                        buf[-1] = "\\" + esc
                i += 2
                continue
            if c in "$%" and self.text.startswith(c + c + "{", i):
                buf.append(c + "{")  # `$${` / `%%{`: the literal text `${` / `%{`
                i += 3
                continue
            if c in "$%" and self.text.startswith("{", i + 1):
                if buf:
                    parts.append("".join(buf))
                    buf = []
                j = self.skip(i + 2, True)
                if j < self.n and self.text[j] == "~":
                    j = self.skip(j + 1, True)
                if c == "$":
                    inner, j = self.expr(j, True)
                    j = self.skip(j, True)
                    if j < self.n and self.text[j] == "~":
                        j = self.skip(j + 1, True)
                    if j >= self.n or self.text[j] != "}":
                        raise self.fail("an interpolation `${` is not closed", i)
                    parts.append(Interp(inner, i, j + 1))
                else:
                    close = self.text.find("}", j)
                    if close < 0 or (end is not None and close >= end):
                        raise self.fail("a template directive `%{` is not closed", i)
                    parts.append(Directive(self.text[j:close].strip(" ~"), i, close + 1))
                    j = close
                i = j + 1
                continue
            buf.append(c)
            i += 1
        if buf:
            parts.append("".join(buf))
        self.depth -= 1
        return _join_escapes(parts), i

    def heredoc(self, i: int) -> tuple[Template, int]:
        m = _HEREDOC.match(self.text, i)
        if m is None:
            raise self.fail("`<<` without a heredoc marker on its line", i)
        flush, marker = bool(m.group(1)), m.group(2)
        body_start = m.end()
        close = re.compile(r"^[ \t]*" + re.escape(marker) + r"[ \t]*\r?$", re.M)
        found = close.search(self.text, body_start)
        if found is None:
            raise self.fail(f"the heredoc <<{marker} is not closed before the end of the file", i)
        if found.start() - body_start > MAX_HEREDOC_CHARS:
            raise self.fail(f"the heredoc <<{marker} is longer than {MAX_HEREDOC_CHARS:,} characters "
                            "(vramlint's limit)", i)
        parts, _j = self.template_parts(body_start, None, found.start())
        line, col = self.pos(i)
        body_line = self.pos(body_start)[0]
        return Template(line, col, found.end(), parts, True, flush, body_line), found.end()


def _join_escapes(parts: list[Any]) -> list[Any]:
    """Adjacent literal pieces as one string (the escapes above split them)."""
    out: list[Any] = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        else:
            out.append(p)
    return out


def _refs(exprs: list[Any]) -> list[Ref]:
    """The references an expression holds, for saying what left it unknown (a few levels down)."""
    out: list[Ref] = []
    stack = list(exprs)
    while stack and len(out) < 32:
        e = stack.pop()
        if isinstance(e, Ref):
            out.append(e)
        elif isinstance(e, Opaque):
            out.extend(e.refs)
        elif isinstance(e, Call):
            stack.extend(e.args)
        elif isinstance(e, Template):
            stack.extend(p.expr for p in e.parts if isinstance(p, Interp))
        elif isinstance(e, TupleExpr):
            stack.extend(e.items)
        elif isinstance(e, ObjectExpr):
            stack.extend(item.value for item in e.items)
    return out


def parse_template(text: str) -> Template:
    """A whole file read as a template (templatefile()): its text and `${ }` interpolations."""
    p = _Parser(text)
    try:
        parts, _i = p.template_parts(0, None)
    except RecursionError:
        raise HclError("nested too deeply to read", 0) from None
    return Template(0, 0, len(text), parts, True, False, 0)


def parse(text: str) -> list[Any]:
    """The top-level body of a Terraform file: Attribute and Block items. HclError where it cannot be read."""
    p = _Parser(text)
    try:
        items, _i = p.body(0, None)
    except RecursionError:
        raise HclError("nested too deeply to read", 0) from None
    return items


# --- Terraform's JSON syntax (developer.hashicorp.com/terraform/language/syntax/json) ----------------------------

# Attributes whose value is an object in the resources vramlint reads: their keys are data, not nested blocks
_JSON_MAP_ATTRIBUTES = frozenset({"labels", "annotations", "node_selector", "limits", "requests", "match_labels",
                                  "data", "binary_data", "selector", "manifest", "default", "tags"})
# Top-level block types and how many labels each takes (the nesting of their objects)
_JSON_LABELS = {"resource": 2, "data": 2, "variable": 1, "module": 1, "output": 1, "provider": 1, "locals": 0,
                "terraform": 0}


def parse_json(text: str) -> list[Any]:
    """A `.tf.json` file as the body `parse` gives: its blocks and attributes, each string read as a template (as
    Terraform reads them), every node at the position of its JSON value."""
    from vramlint.yamlload import load_text

    docs, problems = load_text(text, "<tf.json>")
    errors = [p for p in problems if p.level == "error"]
    if errors or not docs or not isinstance(docs[0].data, dict):
        line = (errors[0].line or 1) - 1 if errors else 0
        raise HclError(errors[0].message if errors else "not a JSON object", line)
    budget = [MAX_NODES]
    root = docs[0].data
    items: list[Any] = []
    for kind, value in root.items():
        labels = _JSON_LABELS.get(str(kind))
        if labels is None or not isinstance(value, (dict, list)):
            continue
        for where, body in _labelled(value, labels, root, kind):
            line, col = where
            items.append(Block(str(kind), body[1], _json_body(body[0], budget, 0), line, col,
                               _last_line(body[0], line)))
    return items


def _labelled(value: Any, depth: int, parent: Any, key: Any) -> list[tuple[tuple[int, int], tuple[Any, list[str]]]]:
    """The bodies under ``depth`` levels of label objects, with their labels."""
    out: list[tuple[tuple[int, int], tuple[Any, list[str]]]] = []

    def walk(node: Any, labels: list[str], at: tuple[int, int], level: int) -> None:
        if level == depth:
            for body in (node if isinstance(node, list) else [node]):
                if isinstance(body, dict):
                    out.append((_node_pos(body, at), (body, labels)))
            return
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, labels + [str(k)], _key_pos(node, k, at), level + 1)

    walk(value, [], _key_pos(parent, key, (0, 0)), 0)
    return out


def _key_pos(node: Any, key: Any, default: tuple[int, int]) -> tuple[int, int]:
    entry = getattr(getattr(node, "lc", None), "data", None) or {}
    e = entry.get(key)
    return (e[0], e[1]) if e else default


def _value_pos(node: Any, key: Any, default: tuple[int, int]) -> tuple[int, int]:
    entry = getattr(getattr(node, "lc", None), "data", None) or {}
    e = entry.get(key)
    if not e:
        return default
    return (e[2], e[3]) if len(e) >= 4 else (e[0], e[1])


def _node_pos(node: Any, default: tuple[int, int]) -> tuple[int, int]:
    lc = getattr(node, "lc", None)
    return (lc.line, lc.col) if lc is not None and lc.line is not None else default


def _last_line(node: Any, line: int) -> int:
    last = line
    stack = [node]
    while stack and len(stack) < 100_000:
        n = stack.pop()
        for e in (getattr(getattr(n, "lc", None), "data", None) or {}).values():
            last = max(last, e[-2] if len(e) >= 2 else last)
        if isinstance(n, dict):
            stack.extend(v for v in n.values() if isinstance(v, (dict, list)))
        elif isinstance(n, list):
            stack.extend(v for v in n if isinstance(v, (dict, list)))
    return last


def _json_body(body: Any, budget: list[int], depth: int) -> list[Any]:
    if depth > MAX_DEPTH:
        raise HclError(f"nested more than {MAX_DEPTH} levels deep (vramlint's limit)", _node_pos(body, (0, 0))[0])
    items: list[Any] = []
    for key, value in body.items():
        name = str(key)
        kl, kc = _key_pos(body, key, _node_pos(body, (0, 0)))
        vl, vc = _value_pos(body, key, (kl, kc))
        blocks = value if isinstance(value, list) and value and all(isinstance(v, dict) for v in value) else \
            [value] if isinstance(value, dict) else None
        if blocks is not None and name not in _JSON_MAP_ATTRIBUTES and name not in ("values", "set_list"):
            for k, item in enumerate(blocks):
                at = _value_pos(value, k, (vl, vc)) if isinstance(value, list) else (vl, vc)
                items.append(Block(name, [], _json_body(item, budget, depth + 1), at[0], at[1],
                                   _last_line(item, at[0])))
            continue
        items.append(Attribute(name, _json_expr(value, (vl, vc), budget, depth + 1), kl, kc))
    return items


def _json_expr(value: Any, at: tuple[int, int], budget: list[int], depth: int) -> Expr:
    budget[0] -= 1
    if budget[0] < 0:
        raise HclError(f"more than {MAX_NODES:,} values in this file (vramlint's limit)", at[0])
    if depth > MAX_DEPTH:
        raise HclError(f"nested more than {MAX_DEPTH} levels deep (vramlint's limit)", at[0])
    line, col = at
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            kat = _key_pos(value, k, at)
            items.append(ObjectItem(Template(kat[0], kat[1], 0, [str(k)]), _json_expr(v, _value_pos(value, k, kat),
                                                                                      budget, depth + 1), str(k)))
        return ObjectExpr(line, col, 0, items)
    if isinstance(value, list):
        return TupleExpr(line, col, 0, [_json_expr(v, _value_pos(value, k, at), budget, depth + 1)
                                        for k, v in enumerate(value)])
    if isinstance(value, str):
        template = parse_template(value)
        template.heredoc = "\n" in value  # a multi-line string: read as text, not as its one interpolation
        template.flat = True
        _place(template, line, col)
        return template
    return Literal(line, col, 0, value if isinstance(value, (bool, int, float)) or value is None else str(value))


def _place(expr: Any, line: int, col: int, depth: int = 0) -> None:
    """Every node of an expression read from a JSON string at the string's place (its text's own offsets are not
    the file's)."""
    if depth > MAX_DEPTH * 4:
        return
    if isinstance(expr, Expr):
        expr.line, expr.col = line, col
        if isinstance(expr, Template):
            expr.body_line = line
    children: list[Any] = []
    if isinstance(expr, Template):
        children = [p.expr for p in expr.parts if isinstance(p, Interp)]
    elif isinstance(expr, (TupleExpr,)):
        children = expr.items
    elif isinstance(expr, ObjectExpr):
        children = [i.key for i in expr.items] + [i.value for i in expr.items]
    elif isinstance(expr, Call):
        children = expr.args
    elif isinstance(expr, Ref):
        children = [s for s in expr.steps if isinstance(s, Expr)]
    elif isinstance(expr, Opaque):
        children = list(expr.refs) + ([c for c in expr.cond if c is not None] if expr.cond else [])
    for child in children:
        _place(child, line, col, depth + 1)
