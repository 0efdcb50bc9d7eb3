"""Manifests with template text that are not part of a chart: extract what is certain, mark the rest unknown.

Go templates (`{{ .Name }}`), Terraform `templatefile` (`${var}`, `%{ if x ~}` directives) and
`<PLACEHOLDER>` words make a file invalid YAML or give it values that are not real. Each expression is
replaced by a marker of the same width (so every line and column after it stays where it was), a line
holding only directives becomes blank, and the file is parsed again. Markers use the brackets
`vramlint.yamlload.TEMPLATE_OPEN` and `TEMPLATE_CLOSE`, so the extractors read such values as unknown (None).
"""

from __future__ import annotations

import re
from dataclasses import field
from functools import lru_cache

from vramlint.lean_dataclass import dataclass
from vramlint.model import Problem

OPEN = "\u2983"
CLOSE = "\u2984"


class _Actions:
    """The spans ``open ... close`` (the nearest close after the open) of one line, and their replacement, as
    ``re.sub`` of the lazy pattern ``open.*?close`` gives them, found with ``str.find``: linear in the line,
    where the pattern, tried again from every opening of a line that never closes, is quadratic (a line of a
    million unclosed ``{{`` took hours). ``raw_strings``: `{{ `{{ .X }}` }}` (a raw string holding a
    second-stage template) is one action, not two."""

    __slots__ = ("open", "close", "raw_strings")

    def __init__(self, open_: str, close: str, raw_strings: bool = False) -> None:
        self.open, self.close, self.raw_strings = open_, close, raw_strings

    def spans(self, line: str):
        last_close = line.rfind(self.close)
        pos = 0
        while True:
            start = line.find(self.open, pos)
            if start < 0 or last_close < start + len(self.open):
                return  # no close after this opening, so none after any later one either
            end = self._raw_string_end(line, start) if self.raw_strings else None
            if end is None:
                end = line.find(self.close, start + len(self.open)) + len(self.close)
            yield start, end
            pos = end

    def _raw_string_end(self, line: str, start: int) -> int | None:
        """The end of `{{-? `...` -?}}` at ``start`` (the pattern's first alternative), or None."""
        k, n = start + 2, len(line)
        if line.startswith("-", k):
            k += 1
        while k < n and line[k].isspace():
            k += 1
        if not line.startswith("`", k):
            return None
        tick = line.find("`", k + 1)
        if tick < 0:
            return None
        k = tick + 1
        while k < n and line[k].isspace():
            k += 1
        if line.startswith("-}}", k):
            return k + 3
        return k + 2 if line.startswith("}}", k) else None

    def sub(self, repl, line: str) -> str:
        """``line`` with each span replaced by ``repl`` (a string, or a function of the span's text)."""
        parts: list[str] = []
        last = 0
        for a, b in self.spans(line):
            parts.append(line[last:a])
            parts.append(repl(line[a:b]) if callable(repl) else repl)
            last = b
        if not parts:
            return line
        parts.append(line[last:])
        return "".join(parts)


_GO_ACTION = _Actions("{{", "}}", raw_strings=True)
_TF_DIRECTIVE = _Actions("%{", "}")
_TF_INTERP = re.compile(r"(?<!\$)\$\{[^{}\n]*\}")
_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_\-]*>")


def width_marker(width: int) -> str:
    """A template marker as wide as the text it stands for (positions after it stay where they were)."""
    return OPEN + "_" * max(0, width - 2) + CLOSE if width >= 2 else OPEN


def neutralize(text: str, placeholders: bool = True) -> tuple[str, list[str]]:
    """The text with template expressions replaced, line for line; and which syntaxes were seen."""
    seen: list[str] = []
    out_lines = []
    for line in text.split("\n"):
        original = line
        kinds = []
        if "{{" in line:
            kinds.append("Go template {{ }}")
        if "%{" in line:
            kinds.append("Terraform %{ } directives")
        if "${" in line:
            kinds.append("${var} interpolation")
        if placeholders and "<" in line and _PLACEHOLDER.search(line):
            kinds.append("<PLACEHOLDER> words")
        if not kinds:
            out_lines.append(line)
            continue
        for k in kinds:
            if k not in seen:
                seen.append(k)
        stripped = original.strip()
        # (a line of actions only starts with one's `{{` or `%{` and ends with one's `}`: most lines are not, and
        # are known to keep text without taking every action out)
        bare = stripped if stripped[:1] not in ("{", "%") or stripped[-1:] != "}" else \
            _TF_DIRECTIVE.sub("", _GO_ACTION.sub("", original)).strip()
        if not bare:
            out_lines.append("")  # a line of control actions only: `{{- if }}`, `%{ endif ~}`
            continue
        line = _GO_ACTION.sub(lambda t: width_marker(len(t)), line)
        line = _TF_DIRECTIVE.sub(lambda t: " " * len(t), line)
        line = _TF_INTERP.sub(lambda m: width_marker(len(m.group(0))), line)
        if placeholders:
            line = _PLACEHOLDER.sub(lambda m: width_marker(len(m.group(0))), line)
        out_lines.append(line)
    # A multi-line `{{ ... }}` spans lines; blank what is left of it rather than guess.
    return "\n".join(out_lines), seen


# Control actions that open, split and close a Go template block, alone on their line.
_CONTROL = re.compile(r"\{\{-?\s*(if|range|with|define|block|else|end)\b(.*?)-?\}\}", re.S)
_STRUCTURE = re.compile(r"^(\s*(?:-\s+)?(?:[A-Za-z_][\w.\-/]*:(?:\s+|$))?)(.*)$")
_ITEM = re.compile(r"^\s*-\s+(.*)$")
_NAMED_ITEM = re.compile(r"^\s*-\s+name:\s")
_ENV_VALUE = re.compile(r"^(\s*(?:-\s+)?value:\s+)(.*)$")
_SMALL_BRANCH = 6
_BARE_KEY = re.compile(r"^\s*(?:-\s+)?[A-Za-z_][\w.\-/]*:\s*(?:#.*)?$")


@dataclass
class _Block:
    kind: str  # if | range | with | define | block
    header: str  # the opening action's expression, for notes
    line: int  # 0-based line of the opening action
    end: int = -1  # 0-based line of `{{ end }}`
    branches: list[list[int]] = field(default_factory=list)  # content line numbers of each branch
    children: list[_Block] = field(default_factory=list)


def _control_only(line: str) -> bool:
    if "{{" not in line:
        return False
    stripped = line.strip()
    # every character left is in an action: the line starts with one's `{{` and ends with one's `}}`
    return stripped.startswith("{{") and stripped.endswith("}}") and not _GO_ACTION.sub("", line).strip()


def _blocks(lines: list[str]) -> list[_Block]:
    """The `if`/`range`/`with` blocks of a template, from control actions written alone on their lines."""
    root = _Block("root", "", -1)
    root.branches.append([])
    stack = [root]
    for n, line in enumerate(lines):
        if not _control_only(line):
            stack[-1].branches[-1].append(n)
            continue
        for m in _CONTROL.finditer(line):
            word, rest = m.group(1), m.group(2).strip()
            if word in ("if", "range", "with", "define", "block"):
                block = _Block(word, f"{word} {rest}".strip(), n)
                block.branches.append([])
                stack[-1].children.append(block)
                stack.append(block)
            elif word == "else" and len(stack) > 1:
                stack[-1].branches.append([])
            elif word == "end" and len(stack) > 1:
                stack.pop().end = n
    return root.children


@lru_cache(maxsize=4096)  # a line inside nested blocks is asked once for each block around it
def _unknown_item(line: str) -> bool:
    """`- {{ . | quote }}`: a list item that is one template expression."""
    m = _ITEM.match(line)
    return bool(m) and "{{" in m.group(1) and not _GO_ACTION.sub("", m.group(1)).strip(" \t\"'")


def _all_lines(block: _Block) -> list[int]:
    out = [n for branch in block.branches for n in branch]
    for child in block.children:
        out.extend(_all_lines(child))
    return sorted(out)


def _plain_word(value: str) -> str:
    return value.strip().strip("\"'")


def _merge_alternatives(lines: list[str], block: _Block) -> bool:
    """`{{ if }} A {{ else }} B {{ end }}` written line for line alike (same keys, same list shape): read as one
    entry, the first branch's lines with each differing value unknown. False when the branches differ in shape."""
    kept = [[n for n in branch if lines[n].strip()] for branch in block.branches]
    if len({len(b) for b in kept}) != 1:
        return False
    rows = list(zip(*kept, strict=True))  # equal lengths, checked above
    for row in rows:
        shapes = {_STRUCTURE.match(lines[n]).group(1) for n in row}
        if len(shapes) != 1:
            return False
        if _NAMED_ITEM.match(lines[row[0]]) and len({lines[n] for n in row}) > 1:
            return False  # `- name: A` / `- name: B`: different entries (env vars, volumes), not one value
    for row in rows:
        first = row[0]
        prefix, value = _STRUCTURE.match(lines[first]).groups()
        values = [_STRUCTURE.match(lines[n]).group(2) for n in row]
        words = {_plain_word(v) for v in values}
        same_program = len({w.rsplit("/", 1)[-1] for w in words}) == 1 and all(" " not in w for w in words)
        if len(set(values)) > 1 and not same_program and value:
            # `/opt/venv/bin/vllm` or `vllm`: the same program either way; otherwise the value is unknown
            lines[first] = prefix + width_marker(len(value))
        for n in row[1:]:
            lines[n] = ""
    return True


def _optional_switches(lines: list[str], branch: list[int]) -> None:
    """`{{ if .Values.lora }} - "--enable-lora" {{ end }}`: whether the switch is passed is not known, so it is
    written `--enable-lora=<unknown>` (the option named, its value unknown). Only the line's end moves."""
    content = [n for n in branch if lines[n].strip()]
    for i, n in enumerate(content):
        item = _ITEM.match(lines[n])
        word = _plain_word(item.group(1)) if item else ""
        if not word.startswith("--") or "=" in word or " " in word or "{{" in word:
            continue
        nxt = _ITEM.match(lines[content[i + 1]]) if i + 1 < len(content) else None
        if nxt is not None and not _plain_word(nxt.group(1)).startswith("-"):
            continue  # `- "--max-model-len"` then its value: the value says it
        quote = item.group(1).strip()[0] if item.group(1).strip()[0] in "\"'" else ""
        lines[n] = lines[n][: item.start(1)] + f"{quote}{word}={width_marker(2)}{quote}"


def _resolve(lines: list[str], blocks: list[_Block], said: list[str]) -> None:
    for block in blocks:
        if block.kind in ("define", "block") or block.end < 0:
            continue
        content = [lines[n] for n in _all_lines(block) if lines[n].strip()] if len(block.branches) == 1 else ()
        if content and any(_unknown_item(x) for x in content) and all(
                _unknown_item(x) or _BARE_KEY.match(x) for x in content):
            # list items a loop or a condition adds from values: how many, and which, is known only when rendered
            for n in range(block.line + 1, block.end):
                lines[n] = ""
            said.append(f"`{{{{ {block.header} }}}}` (line {block.line + 1})")
            continue
        _resolve(lines, block.children, said)
        if len(block.branches) == 1 and block.kind in ("if", "with"):
            _optional_switches(lines, block.branches[0])
        if len(block.branches) > 1 and block.kind in ("if", "with"):
            if not _merge_alternatives(lines, block) and all(len(b) <= _SMALL_BRANCH for b in block.branches):
                # short alternatives of different shapes (a flag or two, an env entry): each may be written,
                # its values unknown; long ones (whole containers) are kept as written
                for n in _all_lines(block):
                    item = _ITEM.match(lines[n])
                    value = _ENV_VALUE.match(lines[n])
                    if item and item.group(1).strip() and ": " not in item.group(1):
                        lines[n] = lines[n][: len(lines[n]) - len(item.group(1))] + width_marker(len(item.group(1)))
                    elif value and value.group(2).strip():
                        lines[n] = value.group(1) + width_marker(len(value.group(2)))


def resolve_blocks(text: str) -> tuple[str, list[str]]:
    """Go template blocks whose control actions stand on their own lines, read as one rendering:

    - a `range`/`if`/`with` body is kept once (loop values unknown), except a body of list items that are each one
      template expression (`- {{ . | quote }}` over `.Values.extraArgs`): how many there are is not known, so they
      are left out and said;
    - `if`/`else` branches written alike (`- "--enable-x"` / `- "--no-enable-x"`) become one entry whose differing
      values are unknown; branches of different shapes keep their lines, their list items unknown.
    Lines keep their number and width. Returns the text and what was left out (for the file's note).
    """
    if "{{" not in text:
        return text, []
    lines = text.split("\n")
    said: list[str] = []
    _resolve(lines, _blocks(lines), said)
    return "\n".join(lines), said


_DEFAULT = re.compile(r"\bdefault\s+(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[\w.:/-]+)")


def template_default(lines: list[str] | None, line: int | None, column: int | None) -> str | None:
    """The literal a template expression falls back to (`{{ .Values.x | default "hf://org/m" }}`), read from the
    original text at a value's 1-based position; None when there is no literal default there."""
    if not lines or not line or not column or line > len(lines):
        return None
    text = lines[line - 1]
    start = text.find("{{", max(0, column - 1))
    if start < 0:
        return None
    end = text.find("}}", start)
    action = text[start: end if end >= 0 else len(text)]
    found = [m.group(1) for m in _DEFAULT.finditer(action)]
    literals = [f for f in found if f[0] in "\"'" or not f.startswith((".", "$"))]
    if not literals:
        return None
    value = literals[-1]
    return value[1:-1] if value[0] in "\"'" else value


# A template's text with its template syntax set aside (`resolve_blocks`, `neutralize`), by the template's text: a
# repository of copies (one chart template per environment) reads each once. Bounded by the texts' size, oldest
# first out (the same bounds as yamlload's parses of shared texts).
_CLEANED: dict[str, tuple[str, list[str], list[str]]] = {}
_CLEANED_SIZE = [0]
_CLEANED_MAX_CHARS = 1 << 20
_CLEANED_MAX_TEXT = 64 << 10


def load_templated_text(text: str, file: str) -> tuple[list, list[Problem], str | None]:
    """Parse a templated manifest: (documents, problems, the note to say once for this file, or None).

    Problems are only what is still invalid once the template text is set aside (real YAML errors).
    """
    from vramlint.yamlload import load_shared, load_text

    made = _CLEANED.get(text)
    if made is None:
        resolved, left_out = resolve_blocks(text)
        cleaned, seen = neutralize(resolved)
        made = (cleaned, seen, left_out)
        if len(text) <= _CLEANED_MAX_TEXT:
            while _CLEANED and _CLEANED_SIZE[0] + len(text) > _CLEANED_MAX_CHARS:
                oldest = next(iter(_CLEANED))
                del _CLEANED[oldest]
                _CLEANED_SIZE[0] -= len(oldest)
            _CLEANED[text] = made
            _CLEANED_SIZE[0] += len(text)
    cleaned, seen, left_out = made
    if not seen:
        docs, problems = load_text(text, file)
        return docs, problems, None
    # the scan changes nothing in what it reads: a copied template is parsed once (yamlload.load_shared)
    docs, problems = load_shared(cleaned, file)
    lines = text.splitlines()  # one list for all the documents (a file of 6,000 of them: once, not 6,000 times)
    for doc in docs:
        doc.lines = lines  # suppressions and comments are read from the real text
    note = (f"{file}: template text ({', '.join(seen)}) is not part of a Helm chart here; values written as "
            "template expressions are unknown until rendered")
    if left_out:
        note += (f"; list items added by {', '.join(left_out[:3])}{' and others' if len(left_out) > 3 else ''} "
                 "are known only when rendered and are read as absent")
    return docs, problems, note
