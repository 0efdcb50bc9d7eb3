"""Text that reaches a terminal or a CI log, made safe: data from the scanned files (file names, quoted values)
cannot move the cursor, colour the terminal, or start a GitHub Actions workflow command.

GitHub's runner reads every line a step prints, on standard output and standard error, as a possible
command: a line that starts with `::` (after spaces) or holds `##[`. A file name with a newline followed by
`::error::` would otherwise print such a line. Here control characters in data are shown escaped (`\\n`,
`\\x1b`), and a line that would read as a command gets a backslash in front of it. The `github` format does
its own escaping (percent-encoding, `vramlint.report.github`); JSON and SARIF are escaped by their encoders.
"""

from __future__ import annotations

import re
import sys

# C0 and C1 control characters, DEL, the Unicode bidirectional overrides that reorder what a reader sees, and
# lone surrogates: a file name that is not UTF-8 reaches Python as surrogate escapes, which no UTF-8 output can hold.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_COMMAND_LINE = re.compile(r"^([ \t]*)(::)", re.M)


def _escape(match: re.Match) -> str:
    ch = match.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, keep: str = "") -> str:
    """``text`` with every control character (except those in ``keep``) shown escaped."""
    if keep:
        return _CONTROL.sub(lambda m: m.group(0) if m.group(0) in keep else _escape(m), text)
    return _CONTROL.sub(_escape, text)


def escape_name(text: object) -> str:
    """A file name or a value on one line: every control character escaped, newlines included."""
    return escape_controls(str(text))


def neutralise_commands(text: str) -> str:
    """Lines of ``text`` that a CI runner would read as workflow commands, made plain text."""
    if "::" in text:
        text = _COMMAND_LINE.sub(r"\1\\\2", text)
    return text.replace("##[", "##\\[")


def safe_output(text: str) -> str:
    """Text for a terminal or a log, built by vramlint from data: controls escaped (line breaks and tabs
    kept), command lines neutralised."""
    return neutralise_commands(escape_controls(text, keep="\n\t"))


def json_safe(text: str) -> str:
    """Serialised JSON whose strings cannot hold `##[` as written (the runner finds it anywhere in a line):
    the `#` is written as the escape `\\u0023`, which every JSON reader decodes back to the same string."""
    return text.replace("##[", "#\\u0023[")


def eprint(message: str) -> None:
    """A line on standard error, made safe (`safe_output`)."""
    print(safe_output(message), file=sys.stderr)
