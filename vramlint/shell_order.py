"""A script's commands in the order the shell runs them, each with the variables it sees when it runs.

The shell expands a command's words when it reaches the command, with the values its variables hold then:
`MODEL=a; vllm serve $MODEL; MODEL=b` serves a. This walk follows that order (never running anything):

- top-level commands in the order written, plain assignments applied as they come (`ShellVariables`);
- a function's body (`name() { ... }`, `function name { ... }`) runs where the function is called, with the
  variables of that moment, and its assignments hold after the call (`local` ones end with it); a function the
  script defines but never calls is walked at the end, with the variables the script ends with (what a script
  that sources this one and calls it would see);
- inside `if`/`case`/a loop an assignment may or may not run: its variable is unknown from there on; a loop
  runs its body again, so a variable its body assigns is unknown in the whole body, commands before that
  assignment included (`while true; do vllm serve $M; M=next; done`); a loop's variable (`for M in ...`) too;
- an assignment after `||`, or after `&&` that follows a test (`[ -n "$X" ] && LEN=...`), runs only as that
  command ends: unknown (after a chain of commands meant to succeed, `cd /app && MODEL=x`, it is taken);
- a here-document's body (`cat > run.sh <<EOF`) is data, not a command of this script: it is given with the
  variables of the moment its command runs (an unquoted delimiter: the shell expands them in it) or with none
  (a quoted one: written as it is).

Only the commands ``wanted`` picks are expanded (a command's words are split again with the variables it
names): the rest of a long script costs one split.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from vramlint.cmdline import (
    _LEXED_MAX_TEXT,
    _NAME_WORD,
    HEREDOC_OPS,
    ShellVariables,
    _lex_chunks,
    _lex_tuples,
)

_OPENERS = frozenset(("if", "case", "for", "while", "until", "select"))
_LOOPS = frozenset(("for", "while", "until", "select"))
_CLOSERS = frozenset(("fi", "esac", "done"))
_KEYWORDS = frozenset(("then", "do", "else", "elif", "{", "}", "!")) | _OPENERS | _CLOSERS
_TESTS = frozenset(("[", "[[", "test", "!"))
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:")
MAX_CALL_DEPTH = 8  # functions calling functions; deeper calls are not followed
MAX_FUNCTION_WORDS = 50_000  # a body larger than this (a whole script in `main() {...}`) is walked where written

Words = list[tuple[Any, int, int, bool]]
Item = tuple[Words, Any]  # a simple command's words and the operator after it (None at the end)


class Command:
    """A command the walk reached: its words (text, start, end, operator) split with ``env``, the variables it
    names as they were when it ran (None: assigned but not known; absent: unset)."""

    __slots__ = ("words", "env")

    def __init__(self, words: Words, env: dict[str, str | None]):
        self.words = words
        self.env = env


class HereDoc:
    """A here-document's body, ``text[start:end]``: ``env`` the variables of the moment its command ran (that
    the body names), or None for a quoted delimiter, whose body is written as it is."""

    __slots__ = ("start", "end", "strip_tabs", "env")

    def __init__(self, start: int, end: int, strip_tabs: bool, env: dict[str, str | None] | None):
        self.start = start
        self.end = end
        self.strip_tabs = strip_tabs
        self.env = env


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
        self.wanted = wanted
        self.read_problems = read_problems
        self.functions: dict[str, list[Item]] = {}
        self.called: set[str] = set()
        self.calls: list[str] = []
        self.locals: list[dict[str, tuple[bool, str | None]]] = []
        self.open: list[str] = []  # compound commands open (if, case, loops), innermost last
        self.loops: list[_Loop] = []

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
            k = 0
            while k < len(texts) and texts[k] in _KEYWORDS:
                word = texts[k]
                k += 1
                if word in _OPENERS:
                    self.open.append(word)
                    if word in _LOOPS:
                        self.loops.append(_Loop())
                    if word in ("for", "select") and k < len(texts) and texts[k] is not None:
                        self._assign(texts[k], None, words[k])  # the loop's variable: each round's own value
                        k += 1
                    if word in ("for", "select", "case"):
                        break
                elif word in _CLOSERS:
                    yield from self._close()
            rest = texts[k:]
            if words and (self.wanted([t for t in texts]) or _expands(texts)):
                refs, scope = self._scope(self.text[words[0][1]:words[-1][2]])
                yield from self._reached("command", words, scope, refs)
            if rest and rest[0] is not None and rest[0] in self.functions and rest[0] not in self.calls \
                    and len(self.calls) < MAX_CALL_DEPTH:
                self.called.add(rest[0])
                yield from self._call(rest[0], self.functions[rest[0]])
            elif rest:
                self._assign_command(rest, words[k], conditional=bool(self.open) or after_and_or)
            # `cmd || X=...` runs on a failure, `[ test ] && X=...` as the environment makes the test come out;
            # `pip install ... && X=...` is a chain meant to go on (under `set -e` a failure stops it anyway)
            after_and_or = op is not None and (op[0] == "||" or (op[0] == "&&" and bool(rest) and rest[0] in _TESTS))

    def _definition(self, texts: list[Any], op: Any, words: Words, items: _Items) -> bool:
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

    def _body(self, opens: Item, items: _Items) -> list[Item] | None:
        """The items of a body from its `{` to the matching `}` (that brace's item left out); None when the body
        is larger than MAX_FUNCTION_WORDS (what was taken is given back to be walked where it stands)."""
        body: list[Item] = []
        depth = 0
        size = 0
        item: Item | None = opens
        first = True
        while item is not None:
            words, op = item
            k = 0
            closed = False
            while k < len(words) and words[k][0] in _KEYWORDS:
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

    def _call(self, name: str, body: list[Item]) -> Iterator[Command | HereDoc]:
        self.calls.append(name)
        self.locals.append({})
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
        if word not in _LOOPS or not self.loops:
            return
        loop = self.loops.pop()
        if self.loops:
            self.loops[-1].names |= loop.names
        for kind, what, scope, refs in loop.pending:
            if scope is not None:
                for var in loop.names & refs:
                    scope[var] = None  # the round after the first sees what the body assigned
            yield from self._reached(kind, what, scope, refs)

    def _reached(self, kind: str, what: Any, scope: dict[str, str | None] | None,
                 refs: frozenset[str]) -> Iterator[Command | HereDoc]:
        if self.loops:
            self.loops[-1].pending.append((kind, what, scope, refs))
            return
        if kind == "heredoc":
            yield HereDoc(what[0], what[1], what[2], scope)
            return
        start = what[0][1]
        span = self.text[start:what[-1][2]]
        split = [(v, a + start, b + start, o) for v, a, b, o in _lex_tuples(span, scope, self.read_problems)
                 if not o]
        if split and self.wanted([w[0] for w in split]):
            yield Command(split, scope if scope is not None else {})

    def _heredoc(self, op: Any) -> Iterator[Command | HereDoc]:
        quoted = op[0].endswith("'")
        if quoted:
            refs: frozenset[str] = frozenset()
            scope = None
        else:
            refs, scope = self._scope(self.text[op[1]:op[2]])
        yield from self._reached("heredoc", (op[1], op[2], "-" in op[0]), scope, refs)

    def _scope(self, span: str) -> tuple[frozenset[str], dict[str, str | None]]:
        values = self.vars.values
        if "!" in span:
            return frozenset(values), dict(values)  # `${!X}`: a variable named by another's value
        refs = frozenset(_NAME_WORD.findall(span))
        return refs, {n: values[n] for n in refs if n in values}

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

    def _assign(self, var: str, value: str | None, place: Any) -> None:
        if not _is_name(var):
            return
        self.vars.assign(var, value, place)
        for loop in self.loops:
            loop.names.add(var)


class _Items:
    """An iterator of items that takes some back (the look-ahead of a function definition)."""

    __slots__ = ("source", "back")

    def __init__(self, source: Iterator[Item]):
        self.source = source
        self.back: list[Item | None] = []

    def next(self) -> Item | None:
        if self.back:
            return self.back.pop()
        return next(self.source, None)

    def push(self, item: Item | None) -> None:
        if item is not None:
            self.back.append(item)

    def push_all(self, items: list[Item]) -> None:
        self.back.extend(reversed(items))


def _items(text: str) -> Iterator[Item]:
    """The simple commands of ``text`` as written (variables not expanded), each with the operator after it."""
    source = [_lex_tuples(text, None, [])] if len(text) <= _LEXED_MAX_TEXT else _lex_chunks(text, None, [])
    words: Words = []
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
    return isinstance(text, str) and bool(text) and not text[0].isdigit() and set(text) <= _NAME_CHARS \
        and "=" not in text


def _expands(texts: list[Any]) -> bool:
    return any(t is not None and ("$" in t or "`" in t) for t in texts)
