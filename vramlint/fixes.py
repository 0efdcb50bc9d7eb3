"""Fixes: the text edits that remove a finding, written where vramlint read the value.

A rule computes the value that removes its finding (from the budget) and asks :func:`set_arg` for the edits
that write it: the value is replaced where it was written (an args list item, a word of a shell string or a
compose ``command:``, a Helm values line, a ``--config`` file key), and a flag not written yet is added next to
the server's last argument in the file's own style (a list item with the same indentation and quoting, or
`` --flag value`` inside the string). Every edit is checked against the text it replaces: when the file does not
hold, at the recorded place, the value vramlint read, there is no edit, and the fix says why (``Fix.reason``).

:func:`apply_edits` applies edits to a file's text: everything outside the edited spans stays byte for byte
(comments, quoting, indentation, CRLF line endings).
"""

from __future__ import annotations

import re
from typing import Any

from vramlint.lean_dataclass import dataclass
from vramlint.model import Edit, Fix, Location, Server

# The repository (README: the pre-commit hook and the action come from it); help URLs are its docs/rules.md
# plus the rule's anchor, as the README's rule table links them.
REPOSITORY_URL = "https://github.com/vramlint/vramlint"
DOCS_BASE_URL = f"{REPOSITORY_URL}/blob/main/docs/rules.md"

_FLAG_RE = re.compile(r"--?[A-Za-z0-9][A-Za-z0-9_.\-]*")
_WORD_END = set(" \t\"',]}\\;)&|")


def help_url(rule) -> str | None:  # noqa: ANN001 - a vramlint.rule.Rule
    """The docs/rules.md anchor of a built-in rule or meta finding, None for a user's own rule."""
    if rule is None or not getattr(rule, "builtin", False) or not rule.name:
        return None
    return f"{DOCS_BASE_URL}#{rule.id.lower()}-{rule.name}"


# --------------------------------------------------------------------------------------------------------
# Reading the file text as the locations count it


# Texts a run's fixes were made on. `check --fix`/`--diff` keeps every one: the edits are applied to the very text
# they were computed on. A plain check keeps the last ~1 MB of them (its fixes are only reported): the rules look
# at a file once per rule, one rule after another, and at 10,000 files all of them were 6.4 MB of a 150 MB peak.
_TEXT_CACHE: dict[str, str | None] = {}
_TEXT_CHARS = [0]
TEXT_CACHE_MAX_CHARS = 1 << 20
_KEEP_ALL_TEXTS = [False]


def keep_all_texts(keep: bool) -> None:
    """Keep every text read from now on (fixes about to be applied), or only the most recent ones."""
    _KEEP_ALL_TEXTS[0] = keep


def file_text(path: str) -> str | None:
    """The file's text (UTF-8 only: the encoding fixes are written back in), None when it cannot be read.

    Read by the run's one file reader: a regular file inside the scanned paths, within the size cap (a file a
    finding points at outside them is neither read nor rewritten)."""
    if path in _TEXT_CACHE:
        text = _TEXT_CACHE.pop(path)
        _TEXT_CACHE[path] = text  # the most recent last: the oldest goes first
        return text
    from vramlint.fsread import read_bytes

    text: str | None = None
    raw = read_bytes(path)
    if isinstance(raw, bytes) and not raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    _TEXT_CACHE[path] = text
    _TEXT_CHARS[0] += len(text or "")
    if not _KEEP_ALL_TEXTS[0]:
        while len(_TEXT_CACHE) > 1 and _TEXT_CHARS[0] > TEXT_CACHE_MAX_CHARS:
            oldest = next(iter(_TEXT_CACHE))
            _TEXT_CHARS[0] -= len(_TEXT_CACHE.pop(oldest) or "")
    return text


def forget_texts() -> None:
    """Drop the cached file texts (after fixes were written)."""
    _TEXT_CACHE.clear()
    _TEXT_CHARS[0] = 0
    _LAST_LOADED[:] = [None, None, None]
    _LAST_SPLIT[:] = [None, None]


_LAST_SPLIT: list[Any] = [None, None]  # the text last split and its lines (which no caller changes)


def split_lines(text: str) -> EndedLines:
    """Lines with their endings kept; only ``\n`` ends a line (a CRLF line keeps its ``\r``), as YAML counts.
    The lines of the text last split are kept: the fixes of one file's servers split its one text, and a file
    of 5,000 servers was split 10,000 times (a 2 MB Dynamo graph: 52 CPU-s)."""
    if _LAST_SPLIT[0] is text:
        return _LAST_SPLIT[1]
    lines = EndedLines(text)
    _LAST_SPLIT[:] = [text, lines]
    return lines


class EndedLines:
    """``text``'s lines with their endings, as a list gives them (``len``, ``lines[i]``, slices, iteration), made
    when asked from the text and where each line starts: a 5 MB file of 1.7 million short lines was 200 MB as
    one string per line (hostile round 19), and a fix on any of its findings split it whole."""

    __slots__ = ("_last", "_starts", "_text")

    def __init__(self, text: str) -> None:
        from vramlint.textfile import line_starts

        starts = line_starts(text)
        if starts[-1] != len(text):
            starts.append(len(text))
        self._text, self._starts = text, starts
        # the line asked for last: the fixes of one line's servers ask for it again and again, and a slice of a
        # megabyte minified line is a megabyte copied each time (6,000 servers on one line: quadratic)
        self._last: tuple[int, str] | None = None

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, index: Any) -> Any:
        starts = self._starts
        if isinstance(index, slice):
            return [self._text[starts[i]:starts[i + 1]] for i in range(*index.indices(len(starts) - 1))]
        i = range(len(starts) - 1)[index]  # negative indexes, and IndexError, as a list gives them
        last = self._last
        if last is not None and last[0] == i:
            return last[1]
        line = self._text[starts[i]:starts[i + 1]]
        self._last = (i, line)
        return line

    def __iter__(self) -> Any:
        text, starts = self._text, self._starts
        return (text[starts[i]:starts[i + 1]] for i in range(len(starts) - 1))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EndedLines):
            return self._text == other._text
        return isinstance(other, list) and self[:] == other

    __hash__ = None  # type: ignore[assignment] - compared by value, as a list

    def start(self, index: int) -> int:
        """Where line ``index`` (0-based) starts in the text; past the last line, the text's end."""
        starts = self._starts
        return starts[max(0, min(index, len(starts) - 1))]


_LAST_BODY: list = [None, None]  # (line, its body): the same line's body is asked for by every fix on it


def _body(line: str) -> str:
    if _LAST_BODY[0] is line:
        return _LAST_BODY[1]
    body = line.rstrip("\r\n")
    _LAST_BODY[:] = [line, body]
    return body


# The scans below look only at the blanks next to a word, never slice the line around it: a line may be a
# megabyte (a minified List of thousands of servers), and each of its servers' fixes looks at it.

def _blank_back(body: str, at: int, blanks: str | None = None) -> int:
    """Where the run of blanks (whitespace, or the characters ``blanks``) that ends at ``at`` starts."""
    while at > 0 and (body[at - 1] in blanks if blanks is not None else body[at - 1].isspace()):
        at -= 1
    return at


def _blank_forward(body: str, at: int, blanks: str | None = None) -> int:
    """Where the run of blanks that starts at ``at`` ends."""
    n = len(body)
    while at < n and (body[at] in blanks if blanks is not None else body[at].isspace()):
        at += 1
    return at


# --------------------------------------------------------------------------------------------------------
# Spans of values as written


@dataclass
class _Span:
    line: int  # 1-based
    start: int  # 0-based column of the first character
    end: int  # 0-based, exclusive
    text: str
    list_item: bool = False  # the word is a whole YAML block-sequence item (`- "--flag"`)
    quote: str = ""  # the quote around the word, when it is a list item or a flow-sequence element
    flow: bool = False  # the word is an element of a flow sequence (`["--a", "1"]`)


def _word_at(lines: list[str], line: int, col0: int) -> _Span | None:
    """The shell/YAML word starting at 0-based ``col0`` of ``line``."""
    if line < 1 or line > len(lines):
        return None
    body = _body(lines[line - 1])
    if col0 < 0 or col0 >= len(body):
        return None
    quote = ""
    if body[col0] in "\"'":
        quote = body[col0]
        close = body.find(quote, col0 + 1)
        if close < 0:
            return None
        return _decorate(body, _Span(line, col0 + 1, close, body[col0 + 1:close], quote=quote))
    end = col0
    while end < len(body) and body[end] not in _WORD_END:
        end += 1
    if end == col0:
        return None
    span = _Span(line, col0, end, body[col0:end])
    if col0 > 0 and body[col0 - 1] in "\"'":
        span.quote = body[col0 - 1]
    return _decorate(body, span)


def _decorate(body: str, span: _Span) -> _Span:
    before_end = _blank_back(body, span.start - (1 if span.quote else 0))  # the text before, its blanks left out
    after_start = _blank_forward(body, span.end + (1 if span.quote else 0))
    after_first = body[after_start] if after_start < len(body) else ""
    only_dash_before = before_end >= 1 and body[before_end - 1] == "-" and _blank_back(body, before_end - 1) == 0
    if only_dash_before and after_first in ("", "#"):
        span.list_item = True
    elif ((before_end >= 1 and body[before_end - 1] in "[,") or (before_end == 0 and span.quote)) \
            and after_first in (",", "]"):
        span.flow = True  # an element of a flow sequence, maybe the first on a continuation line
    return span


def _next_word(lines: list[str], span: _Span) -> _Span | None:
    """The word after ``span``: on the same line, or the next YAML list item when ``span`` is one."""
    body = _body(lines[span.line - 1])
    pos = span.end + (1 if span.quote else 0)
    if span.list_item:
        for n in range(span.line + 1, len(lines) + 1):
            text = _body(lines[n - 1])
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if not stripped.startswith("- "):
                return None
            col = text.index("- ") + 2
            while col < len(text) and text[col] == " ":
                col += 1
            word = _word_at(lines, n, col)
            return word if word is not None and word.list_item else None
        return None
    if span.flow:
        m = re.compile(r"\s*,\s*").match(body, pos)
        if not m:
            return None
        if m.end() >= len(body) and span.line < len(lines):  # the next element is on the next line
            following = _body(lines[span.line])
            word = _word_at(lines, span.line + 1, len(following) - len(following.lstrip()))
        else:
            word = _word_at(lines, span.line, m.end())
        return word if word is not None and word.flow else None
    m = re.compile(r"[ \t]+").match(body, pos)
    if not m or m.end() >= len(body):
        return None
    return _word_at(lines, span.line, m.end())


def _same_value(written: str, value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return written.lower() in (("true", "1", "yes") if value else ("false", "0", "no"))
    if isinstance(value, (int, float)):
        try:
            if isinstance(value, int) and written.strip().lstrip("+-").isdigit():
                return int(written) == value  # exact, and no float overflow for a 400-digit GPU count
            return float(written) == float(value)
        except OverflowError:
            return False  # a number past float64 is not the number a fix writes
        except ValueError:
            from vramlint.rule import as_int

            return as_int(written) == value
    return written == str(value)


def _flag_of(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _flag_names(word: str) -> tuple[str, str | None]:
    """(normalised flag, attached value or None) of a word such as `--max_model_len=4096`."""
    from vramlint.vllm_args import normalise

    flag, eq, attached = word.partition("=")
    return normalise(flag), (attached if eq else None)


@dataclass
class _Written:
    """How one argument is written: its flag word and its value word (None for a boolean flag / a YAML key)."""

    flag: _Span | None
    value: _Span | None
    attached: bool = False  # `--flag=value` in one word


def _find_written(lines: list[str], server: Server, dest: str, loc: Location) -> _Written | str:
    """The spans of ``dest`` as written at ``loc``, or why they cannot be found exactly."""
    word = _word_at(lines, loc.line, loc.column - 1)
    if word is None:
        return f"line {loc.line} of {loc.file} does not hold the value where vramlint read it"
    value = server.args.get(dest)
    if word.text.startswith("-"):
        flag, attached = _flag_names(word.text)
        if flag != _flag_of(dest) and not _flag_of(dest).startswith(flag):
            return f"{word.text} at {loc.file}:{loc.line} is not how vramlint expects --{dest.replace('_', '-')}"
        if attached is not None:
            eq = word.text.index("=")
            span = _Span(word.line, word.start + eq + 1, word.end, attached, word.list_item, word.quote, word.flow)
            return _Written(word, span, attached=True) if _same_value(attached, value) else \
                f"{word.text} at {loc.file}:{loc.line} does not say the value vramlint read"
        if isinstance(value, bool):
            return _Written(word, None)
        nxt = _next_word(lines, word)
        if nxt is None or not _same_value(nxt.text, value):
            return f"the value of {word.text} at {loc.file}:{loc.line} is not written where vramlint can rewrite it"
        return _Written(word, nxt)
    # a YAML scalar (Helm values, a --config file, an operator's field): maybe `key: value`
    key = re.match(r"([A-Za-z0-9_.\-\"']+)\s*:\s+", _body(lines[loc.line - 1])[loc.column - 1:])
    if key and not _same_value(word.text, value):
        word = _word_at(lines, loc.line, loc.column - 1 + key.end())
        if word is None:
            return f"line {loc.line} of {loc.file} does not hold the value where vramlint read it"
    if not _same_value(word.text, value):
        return f"{loc.file}:{loc.line} does not say the value vramlint read ({value!r}), so it cannot be rewritten there"
    rest = _body(lines[loc.line - 1])[word.end + (1 if word.quote else 0):].strip()
    if rest and not rest.startswith("#"):
        return f"the value at {loc.file}:{loc.line} is part of a larger expression"
    return _Written(None, word)


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".")
    return str(value)


# --------------------------------------------------------------------------------------------------------
# Edits for a change of one argument


def set_arg(server: Server, dest: str, value: Any) -> tuple[list[Edit], str | None]:
    """The edits that make ``dest`` (a vLLM dest name) ``value`` on ``server``, or ([], why not)."""
    new = format_value(value)
    loc = server.arg_locations.get(dest)
    if loc is not None and loc.file and loc.line >= 1:
        text = file_text(loc.file)
        if text is None:
            return [], f"{loc.file} cannot be rewritten (outside the scanned paths, or not plain UTF-8 text)"
        lines = split_lines(text)
        written = _find_written(lines, server, dest, loc)
        if isinstance(written, str):
            return [], written
        if written.value is None:
            return [], f"{_flag_of(dest)} is written without a value at {loc.file}:{loc.line}"
        span = written.value
        return [Edit(loc.file, span.line, span.start + 1, span.line, span.end + 1, new)], None
    if dest in server.args:
        return [], f"vramlint does not know where {_flag_of(dest)} is written"
    return _add_arg(server, _flag_of(dest), new)


def remove_flag(server: Server, flag: str, loc: Location) -> tuple[list[Edit], str | None]:
    """The edits that delete ``flag`` (and the value vLLM would have read with it), written at ``loc``."""
    text = file_text(loc.file) if loc.file else None
    if text is None:
        return [], f"{loc.file or 'the file'} cannot be rewritten (outside the scanned paths, or not plain UTF-8 text)"
    lines = split_lines(text)
    word = _word_at(lines, loc.line, loc.column - 1)
    key = _config_key_line(lines, loc)
    if key is not None and key == _flag_names(flag)[0]:
        # a --config file's `key: value` (or a KAITO/ConfigMap block of one): the line goes
        return [Edit(loc.file, loc.line, 1, loc.line + 1, 1, "")], None
    if word is None or word.text.split("=", 1)[0] != flag.split("=", 1)[0]:
        return [], f"{flag} is not written at {loc.file}:{loc.line} where vramlint read it"
    words = [word]
    if "=" not in word.text:
        nxt = _next_word(lines, word)
        if nxt is not None and not nxt.text.startswith("-"):
            # vLLM's parser takes the next word that is not an option as the unknown flag's value
            words.append(nxt)
    return _delete_words(lines, loc.file, words)


def _config_key_line(lines: list[str], loc: Location) -> str | None:
    """The flag a `key: scalar` line at ``loc`` sets (a vLLM config file key), else None."""
    if loc.line < 1 or loc.line > len(lines):
        return None
    body = _body(lines[loc.line - 1])
    m = re.fullmatch(r"\s*([A-Za-z][A-Za-z0-9_\-]*)\s*:\s*([^\s#{}\[\]|>&*!][^#]*?)?\s*(#.*)?", body)
    if not m or m.group(2) is None or body[: loc.column - 1].strip():
        return None
    return _flag_names("--" + m.group(1))[0]


def rename_flag(server: Server, flag: str, new_flag: str, loc: Location) -> tuple[list[Edit], str | None]:
    """The edit that writes ``new_flag`` instead of ``flag`` (a value attached with `=` is kept)."""
    text = file_text(loc.file) if loc.file else None
    if text is None:
        return [], f"{loc.file or 'the file'} cannot be rewritten (outside the scanned paths, or not plain UTF-8 text)"
    lines = split_lines(text)
    word = _word_at(lines, loc.line, loc.column - 1)
    if word is None or word.text.split("=", 1)[0] != flag.split("=", 1)[0]:
        return [], f"{flag} is not written at {loc.file}:{loc.line} where vramlint read it"
    name_end = word.start + len(word.text.split("=", 1)[0])
    return [Edit(loc.file, word.line, word.start + 1, word.line, name_end + 1, new_flag.split("=", 1)[0])], None


def _delete_words(lines: list[str], file: str, words: list[_Span]) -> tuple[list[Edit], str | None]:
    edits: list[Edit] = []
    if all(w.list_item for w in words):
        for w in words:
            edits.append(Edit(file, w.line, 1, w.line + 1, 1, ""))
        return edits, None
    if len({w.line for w in words}) != 1:
        return [], "the flag and its value are written in a way vramlint cannot delete exactly"
    body = _body(lines[words[0].line - 1])
    first, last = words[0], words[-1]
    start = first.start - (1 if first.quote else 0)
    end = last.end + (1 if last.quote else 0)
    if first.flow:
        # `["--a", "--bad", "1"]`: the elements and the comma before them
        comma = _blank_back(body, start) - 1
        if comma >= 0 and body[comma] == ",":
            start = comma
        else:
            after = _blank_forward(body, end)
            if after < len(body) and body[after] == ",":
                end = _blank_forward(body, after + 1)
    elif _blank_back(body, start) > 0:  # something before the word on its line
        start = _blank_back(body, start, " \t")
    else:
        # first word on its line (a shell continuation line): keep the indentation, take the blank after it
        end = _blank_forward(body, end, " \t")
        previous = _body(lines[first.line - 2]).rstrip() if first.line >= 2 else ""
        rest = body[end:].strip()
        if rest == "\\" or (not rest and not previous.endswith("\\")):
            return [Edit(file, first.line, 1, first.line + 1, 1, "")], None  # the whole line goes
    line = first.line
    if _blank_back(body, start) == 0 and _blank_forward(body, end) == len(body):
        return [Edit(file, line, 1, line + 1, 1, "")], None  # nothing else on the line: the line goes
    return [Edit(file, line, start + 1, line, end + 1, "")], None


def _add_arg(server: Server, flag: str, value: str) -> tuple[list[Edit], str | None]:
    """A flag the file does not write yet: after the server's last argument, in that argument's style (Helm
    values: the key the chart renders as the flag)."""
    if server.source_format == "helm-values":
        return add_values_key(server, flag[2:].replace("-", "_"), value)
    if server.source_format not in ("kubernetes", "compose", "vllm-config"):
        return [], (f"{flag} is not set, and vramlint adds flags only to Kubernetes args, compose commands and "
                    f"vLLM config files (this server is read from {server.source_format})")
    from difflib import SequenceMatcher

    for unknown in server.unknown_args:
        if SequenceMatcher(None, unknown.split("=", 1)[0].lstrip("-"), flag.lstrip("-")).ratio() >= 0.8:
            return [], (f"{flag} is not set, but {unknown} (which vLLM does not know) looks like it: fix that "
                        "first (VRL009), then check again")
    anchors = [loc for loc in [*server.arg_locations.values(), *server.unknown_args.values()]
               if loc is not None and loc.file == server.file and loc.line >= 1]
    if server.model_location is not None and server.model_location.file == server.file:
        anchors.append(server.model_location)
    text = file_text(server.file)
    if not anchors or text is None:
        return [], f"{flag} is not set, and vramlint does not know where this server's arguments are written"
    lines = split_lines(text)
    # (first word, last word) of the argument written last: of the flags written on a command line when there are
    # some, else of the `key: value` lines of a config file or block (a KAITO workspace's inference config, whose
    # own keys such as the preset name are anchors too, but no place for a flag)
    last: dict[str, tuple[_Span, _Span]] = {}
    for loc in anchors:
        word = _word_at(lines, loc.line, loc.column - 1)
        if word is None:
            continue
        end_word = word
        if word.text.startswith("-") and "=" not in word.text:
            nxt = _next_word(lines, word)
            if nxt is not None and not (nxt.text.startswith("-") and not _is_number(nxt.text)):
                end_word = nxt
        kind = "flag" if word.text.startswith("-") else "key" if _is_config_key(server, lines, word) else "other"
        if kind not in last or (end_word.line, end_word.end) > (last[kind][1].line, last[kind][1].end):
            last[kind] = (word, end_word)
    chosen = last.get("flag") or last.get("key") or last.get("other")
    if chosen is None:
        return [], f"{flag} is not set, and vramlint cannot find this server's arguments in {server.file}"
    first, end_word = chosen
    if chosen is last.get("key") and chosen is not last.get("flag"):
        # a `--config` file or a KAITO inference config (`key: value` lines): a key line below the last one
        line_text = lines[first.line - 1]
        indent = line_text[: len(line_text) - len(line_text.lstrip())]
        newline = "\r\n" if line_text.endswith("\r\n") else "\n"
        name = _body(line_text).strip().split(":", 1)[0]
        written = flag[2:].replace("-", "_") if "_" in name and "-" not in name else flag[2:]
        insert = f"{indent}{written}: {value}{newline}"
        if not line_text.endswith("\n"):
            return [Edit(server.file, first.line, len(line_text) + 1, first.line, len(line_text) + 1,
                         newline + insert.rstrip("\r\n"))], None
        return [Edit(server.file, first.line + 1, 1, first.line + 1, 1, insert)], None
    if server.source_format == "vllm-config":
        return [], f"{flag} is not set, and the config file's keys are not written one `key: value` a line"
    if end_word.list_item:
        line_text = lines[end_word.line - 1]
        indent = line_text[: len(line_text) - len(line_text.lstrip())]
        newline = "\r\n" if line_text.endswith("\r\n") else "\n"
        q = end_word.quote
        if "=" in first.text and first.list_item and first is end_word:
            items = [f"{flag}={value}"]
        else:
            items = [flag, value]
        insert = "".join(f"{indent}- {q}{item}{q}{newline}" for item in items)
        if not line_text.endswith(("\n", "\r")):
            insert = newline + insert.rstrip("\r\n")
            body_len = len(_body(line_text))
            return [Edit(server.file, end_word.line, body_len + 1, end_word.line, body_len + 1, insert)], None
        return [Edit(server.file, end_word.line + 1, 1, end_word.line + 1, 1, insert)], None
    at = end_word.end + (1 if end_word.quote else 0)
    if end_word.flow:
        q = end_word.quote or '"'
        insert = f", {q}{flag}{q}, {q}{value}{q}"
    elif end_word.quote:
        return [], f"{flag} is not set, and the last argument is quoted inside a string vramlint will not rewrite"
    else:
        insert = f" {flag} {value}"
    return [Edit(server.file, end_word.line, at + 1, end_word.line, at + 1, insert)], None


def _is_config_key(server: Server, lines: list[str], word: _Span) -> bool:
    """``word`` starts a `key: value` line that sets one of the server's arguments (a vLLM config key)."""
    key = _config_key_line(lines, Location(server.file, word.line, word.start + 1))
    if key is None:
        return False
    here = {_flag_of(d) for d, loc in server.arg_locations.items() if loc is not None and loc.line == word.line}
    here |= {_flag_names(f)[0] for f, loc in server.unknown_args.items() if loc is not None and loc.line == word.line}
    return key in here


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------------------------------------
# Building fixes and applying them


def make_fix(description: str, safe: bool, changes: list[tuple[Server, str, Any]]) -> Fix:
    """A fix that sets each (server, dest, value); no edits (and the reason) when any of them cannot be written."""
    edits: list[Edit] = []
    for server, dest, value in changes:
        got, why = set_arg(server, dest, value)
        if why:
            return Fix(description, safe, [], why)
        edits.extend(got)
    return Fix(description, safe, edits)


def advice(description: str, reason: str) -> Fix:
    """A fix no single edit makes: said, never applied."""
    return Fix(description, False, [], reason)


def _offset(lines: EndedLines | list[str], line: int, column: int) -> int:
    if isinstance(lines, EndedLines):
        return lines.start(line - 1) + column - 1
    return sum(len(x) for x in lines[: line - 1]) + column - 1


def apply_edits(text: str, edits: list[Edit]) -> str:
    """``text`` with ``edits`` (which must not overlap) applied."""
    lines = split_lines(text)
    spans = sorted(((_offset(lines, e.line, e.column), _offset(lines, e.end_line, e.end_column), e.text)
                    for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edit_range(text: str, edit: Edit) -> tuple[int, int]:
    lines = split_lines(text)
    return _offset(lines, edit.line, edit.column), _offset(lines, edit.end_line, edit.end_column)


# --------------------------------------------------------------------------------------------------------
# /dev/shm (VRL008): a multi-line insertion in the file's indentation


def _path_keys(path: str) -> list[Any]:
    keys: list[Any] = []
    for quoted, index, plain in re.findall(r'\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|([^.\[\]]+)', path):
        keys.append(int(index) if index else (quoted or plain))
    return keys


def _walk(node: Any, keys: list[Any]) -> Any:
    for key in keys:
        if isinstance(key, int):
            if not isinstance(node, list) or key >= len(node):
                return None
            node = node[key]
        else:
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
    return node


# The documents of the file a fix was last computed in: a server's fixes look at its file several times
# (container, pod, GPU request), and one file's servers come one after another.
_LAST_LOADED: list[Any] = [None, None, None]  # file, text, documents
FIX_PARSES_MAX_CHARS = 256 << 10


def _documents(file: str, text: str) -> list[Any]:
    if _LAST_LOADED[0] != file or _LAST_LOADED[1] is not text:
        from vramlint.yamlload import load_shared

        # only read: a copied file is parsed once. Kept within 256 K of text, not the scan's 1 M: after the scan
        # (or in the parent of its workers) these parses are only for the fixes, and 1 M of text is ~15 MB of
        # documents (6 of a 150 MB peak at 10,000 files)
        _LAST_LOADED[:] = [file, text, load_shared(text, file, max_chars=FIX_PARSES_MAX_CHARS)[0]]
    return _LAST_LOADED[2]


def _node_at(server: Server, keys: list[Any], lines: list[str], text: str) -> Any:
    """The node at ``keys`` of the document holding the server (the one whose node starts on its line)."""
    docs = _documents(server.file, text)
    found = None
    for doc in docs:
        node = _walk(doc.data, _path_keys(server.location.yaml_path))
        if node is None or not hasattr(node, "lc"):
            continue
        if node.lc.line + 1 == server.location.line or found is None:
            found = (doc, node)
    if found is None:
        return None
    return _walk(found[0].data, keys)


def _own_line_key(node: Any, lines: list[str]) -> tuple[int, int] | None:
    """(0-based line, column) of the first key of ``node`` written at the start of its own line."""
    for key in node:
        try:
            line, col = node.lc.key(key)
        except (KeyError, AttributeError, TypeError):
            continue
        if line < len(lines) and not _body(lines[line])[:col].strip():
            return line, col
    return None


def _list_head(seq: Any, lines: list[str]) -> tuple[int, int] | None:
    """(0-based line, dash column) of the first item of a block sequence written `- ...` at a line start."""
    from vramlint.yamlload import is_flow

    if not seq or is_flow(seq):
        return None
    try:
        line, col = seq.lc.item(0)
    except (KeyError, AttributeError, TypeError, IndexError):
        return None
    body = _body(lines[line]) if line < len(lines) else ""
    dash = body.rfind("-", 0, col)
    if dash < 0 or body[:dash].strip() or body[dash:col].strip() != "-":
        return None
    return line, dash


def _block(indent: int, text: str, newline: str) -> str:
    return "".join(" " * indent + row + newline for row in text.split("\n"))


def add_shm(server: Server) -> tuple[list[Edit], str | None]:
    """Kubernetes: a memory-backed emptyDir volume `dshm` mounted at /dev/shm; compose: `shm_size`."""
    text = file_text(server.file)
    if text is None or not server.location.yaml_path:
        return [], "vramlint cannot read this server's file as UTF-8 YAML to add the volume"
    lines = split_lines(text)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    keys = _path_keys(server.location.yaml_path)
    if server.source_format == "compose":
        service = _node_at(server, keys, lines, text)
        if not isinstance(service, dict) or "shm_size" in service or "ipc" in service:
            return [], "the service sets shm_size or ipc in a way vramlint does not rewrite"
        anchor = _own_line_key(service, lines)
        if anchor is None:
            return [], "the service's keys are not written one per line"
        return [Edit(server.file, anchor[0] + 1, 1, anchor[0] + 1, 1,
                     _block(anchor[1], 'shm_size: "16gb"', newline))], None
    if "?overlay=" in server.location.yaml_path:
        return [], ("the pod is built by kustomize (vramlint.kustomize): mount an emptyDir with medium: Memory at "
                    "/dev/shm in the overlay's patch of this Deployment, or in its base")
    if server.source_format != "kubernetes":
        return [], f"vramlint adds the /dev/shm volume only to Kubernetes manifests and compose files (this server " \
                   f"is read from {server.source_format}): mount an emptyDir with medium: Memory at /dev/shm"
    container = _node_at(server, keys, lines, text)
    pod_keys = keys[:-2] if len(keys) >= 2 and isinstance(keys[-1], int) else keys[:-1]
    pod = _node_at(server, pod_keys, lines, text)
    if not isinstance(container, dict) or not isinstance(pod, dict):
        return [], "vramlint cannot find the container and its pod spec in the file"
    mounts, volumes = container.get("volumeMounts"), pod.get("volumes")
    if not isinstance(mounts, (list, type(None))) or not isinstance(volumes, (list, type(None))):
        return [], "the container's volumeMounts or the pod's volumes are not lists"
    if any(isinstance(m, dict) and str(m.get("mountPath", "")).rstrip("/") == "/dev/shm" for m in mounts or []):
        return [], "/dev/shm is mounted from a volume that is not a memory emptyDir: set its emptyDir medium: Memory"
    if any(isinstance(v, dict) and v.get("name") == "dshm" for v in volumes or []):
        return [], "the pod already has a volume named dshm that is not mounted at /dev/shm"
    edits = []
    head = _list_head(mounts, lines) if mounts else None
    if head is not None:
        edits.append(Edit(server.file, head[0] + 1, 1, head[0] + 1, 1,
                          _block(head[1], "- name: dshm\n  mountPath: /dev/shm", newline)))
    elif mounts is None:
        anchor = _own_line_key(container, lines)
        if anchor is None:
            return [], "the container's keys are not written one per line"
        edits.append(Edit(server.file, anchor[0] + 1, 1, anchor[0] + 1, 1,
                          _block(anchor[1], "volumeMounts:\n  - name: dshm\n    mountPath: /dev/shm", newline)))
    else:
        return [], "the container's volumeMounts are written in a form vramlint does not extend"
    head = _list_head(volumes, lines) if volumes else None
    if head is not None:
        edit = Edit(server.file, head[0] + 1, 1, head[0] + 1, 1,
                    _block(head[1], "- name: dshm\n  emptyDir:\n    medium: Memory", newline))
    elif volumes is None:
        anchor = _own_line_key(pod, lines)
        if anchor is None:
            return [], "the pod spec's keys are not written one per line"
        edit = Edit(server.file, anchor[0] + 1, 1, anchor[0] + 1, 1,
                    _block(anchor[1], "volumes:\n  - name: dshm\n    emptyDir:\n      medium: Memory", newline))
    else:
        return [], "the pod's volumes are written in a form vramlint does not extend"
    if (edit.line, edit.column) == (edits[0].line, edits[0].column):
        return [], "the volume and its mount would go on the same line"
    return [*edits, edit], None


# --------------------------------------------------------------------------------------------------------
# The GPU request (VRL006): every place the container's or service's GPU count is written


def _scalar_edit(file: str, lines: list[str], node: Any, key: Any, old: Any, new: Any) -> Edit | None:
    """The edit that writes ``new`` over the scalar ``node[key]`` (which must read ``old``), or None."""
    from vramlint.yamlload import value_location

    loc = value_location(file, node, key)
    if loc is None:
        return None
    word = _word_at(lines, loc.line, loc.column - 1)
    if word is None or not _same_value(word.text, old):
        return None
    return Edit(file, word.line, word.start + 1, word.line, word.end + 1, format_value(new))


def set_gpu_request(server: Server, count: int) -> tuple[list[Edit], str | None]:
    """Edits that make the GPUs requested ``count``: a Kubernetes container's GPU resource in `limits` and in
    `requests` (both, when both say it: the API server refuses a request above its limit), a compose service's
    device reservation `count`. Devices named by id, `count: all` and requests written elsewhere are not
    rewritten: which devices to take is a person's choice."""
    gpu = server.gpu
    text = file_text(server.file)
    if gpu is None or gpu.count is None or text is None or not server.location.yaml_path:
        return [], "vramlint cannot read where this server's GPU request is written"
    if "?overlay=" in server.location.yaml_path:
        where = gpu.count_location.file if gpu.count_location is not None else "the overlay's patch or its base"
        return [], (f"the pod is built by kustomize (vramlint.kustomize): change the GPU count in {where}, where "
                    "this overlay's request is written")
    lines = split_lines(text)
    node = _node_at(server, _path_keys(server.location.yaml_path), lines, text)
    if not isinstance(node, dict):
        return [], "vramlint cannot find the container or service in the file"
    edits: list[Edit] = []
    if server.source_format == "compose":
        devices = _walk(node, ["deploy", "resources", "reservations", "devices"])
        named = [d for d in (devices if isinstance(devices, list) else []) if isinstance(d, dict) and "device_ids" in d]
        if named or any(v in server.env for v in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")):
            return [], "the service names its GPUs by device id: which devices to add is a choice for a person"
        for device in devices if isinstance(devices, list) else []:
            if isinstance(device, dict) and "count" in device:
                edit = _scalar_edit(server.file, lines, device, "count", gpu.count, count)
                if edit is None:
                    return [], "the device reservation's count is not written as a number vramlint can rewrite"
                edits.append(edit)
    elif server.source_format == "kubernetes":
        evidence = gpu.evidence or ""
        if gpu.visible_from is not None:
            return [], (f"{gpu.visible_from[0]} picks which of the container's GPUs vLLM sees: which devices to "
                        "show it is a choice for a person")
        name = evidence.split(" ", 2)[1].rstrip(":") if evidence.startswith("resources.") else None
        resources = node.get("resources")
        for section in ("limits", "requests"):
            block = resources.get(section) if isinstance(resources, dict) else None
            if isinstance(block, dict) and name in block:
                edit = _scalar_edit(server.file, lines, block, name, block[name], count)
                if edit is None or not _same_value(str(block[name]), gpu.count):
                    return [], f"resources.{section} {name} is not written as the count vramlint read"
                edits.append(edit)
    if not edits:
        return [], "the GPU request is not written in the container's resources or the service's device reservation"
    return edits, None


# --------------------------------------------------------------------------------------------------------
# A values key not written yet (Helm values of a chart whose templates map the key to the flag)


def add_values_key(server: Server, dest: str, value: Any) -> tuple[list[Edit], str | None]:
    """The edit that adds the values key the chart renders as ``dest`` (``Server.values_keys``): a line
    `key: value` at the top of the mapping that holds the chart's other keys of that kind, in its indentation;
    when that mapping is missing too, the mapping with the key, at the top of its parent. A slot that is a
    sentence says why the key is not added."""
    slot = server.values_keys.get(dest)
    if slot is None:
        return [], (f"{_flag_of(dest)} is not set, and vramlint does not know which values key this chart renders "
                    "as it")
    if isinstance(slot, str):
        return [], slot  # the key exists, but adding it changes more than the flag
    parent_path, key = slot
    text = file_text(server.file)
    if text is None:
        return [], f"{server.file} cannot be rewritten (not plain UTF-8 text)"
    lines = split_lines(text)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    keys = _path_keys(parent_path)
    parts = key.split(".")
    node = _node_at(server, keys, lines, text)
    while parts[:-1] and isinstance(node, dict) and parts[0] in node:
        node = node[parts[0]]
        parts = parts[1:]
    if not isinstance(node, dict):
        return [], f"the values at {parent_path} are not a mapping vramlint can add {key} to"
    missing = parts[:-1]
    anchor = _own_line_key(node, lines)
    if anchor is None:
        return [], f"the keys of {parent_path} are not written one per line"
    block = ""
    for depth, name in enumerate(missing):
        block += "  " * depth + f"{name}:\n"
    block += "  " * len(missing) + f"{parts[-1]}: {format_value(value)}"
    return [Edit(server.file, anchor[0] + 1, 1, anchor[0] + 1, 1, _block(anchor[1], block, newline))], None

