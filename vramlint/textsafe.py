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

# C0 and C1 control characters, DEL, the Unicode bidirectional formatting characters that reorder what a reader
# sees (the embeddings, overrides and isolates, and the marks LRM, RLM and ALM: Unicode's Bidi_Control set), and
# lone surrogates: a file name that is not UTF-8 reaches Python as surrogate escapes, which no UTF-8 output can hold.
# And U+2028/U+2029, Unicode's line and paragraph separators: Python's splitlines, JavaScript log viewers and some
# terminals break a line there, so a value `a\u2028::error::x` would show a line of its own starting with `::`.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ud800-\udfff]")
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
    kept), command lines neutralised; a file's own U+2983/U+2984 as written (`show_marks`)."""
    return neutralise_commands(escape_controls(show_marks(text), keep="\n\t"))


def json_safe(text: str) -> str:
    """Serialised JSON whose strings cannot hold `##[` as written (the runner finds it anywhere in a line):
    the `#` is written as the escape `\\u0023`, which every JSON reader decodes back to the same string.

    Nor a lone surrogate, escaped (`\\ud800`, json's ASCII encoder) or raw (its UTF-8 one, then written with
    backslashreplace): JSON's grammar takes the escape, but strict readers (Rust's serde_json, Go's decoder makes it
    U+FFFD) refuse or change it, and a SARIF upload or a JSON consumer fails on one value of a scanned file (a YAML
    `"\\ud800"`, a file name that is not UTF-8). It is written as the text the other reports show, `\\ud800`.
    A file's own U+2983/U+2984 as written (`show_marks`)."""
    text = show_marks(text)
    # (an ASCII text holds no surrogate, and an escaped one starts with `\\u`: both asked in C before the patterns
    # search, which took 0.31 of the 0.40 CPU-s json_safe spent on a 100 MB report of 20,000 servers)
    if ("\\u" in text and _SURROGATE_ESCAPE.search(text)) or (not text.isascii() and _SURROGATE.search(text)):
        text = _JSON_STRING.sub(_string_without_lone_surrogates, text)
    return text.replace("##[", "#\\u0023[")


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def _string_without_lone_surrogates(match: re.Match) -> str:
    literal = match.group(0)
    if not (_SURROGATE_ESCAPE.search(literal) or _SURROGATE.search(literal)):
        return literal
    import json

    try:
        value = json.loads(literal)  # an escaped pair is one character again; what is left over is lone
    except ValueError:
        return literal
    if not isinstance(value, str) or not _SURROGATE.search(value):
        return literal
    shown = _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", value)
    return json.dumps(shown, ensure_ascii=literal.isascii())


# Secrets a repository writes in its own files (a Hub token, a URL's password, vLLM's --api-key): masked, character
# for character (columns and carets stay where they were), wherever vramlint shows a source line or a server's
# arguments and environment. A CI log or an uploaded SARIF/JSON report is read by more people than the file.
_SECRET_TEXT = re.compile(r"(\bhf_)([A-Za-z0-9]{20,})|(://[^/\s:@]{0,256}:)([^/\s@]{1,256})(?=@)"
                          r"|(--api-key(?:=|[ \t]+)[\"']?)([^\s\"',]+)")
# a name whose last part says secret: HF_TOKEN, --hf-token, VLLM_API_KEY, DB_PASSWORD, AWS_SECRET_ACCESS_KEY (not
# max_num_batched_tokens, tokenizer or AWS_ACCESS_KEY_ID)
_SECRET_NAME = re.compile(r"(?:^|[_-])(?:token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|private[_-]?key"
                          r"|credentials?)$", re.IGNORECASE)


def _mask(match: re.Match) -> str:
    for i in (1, 3, 5):
        if match.group(i) is not None:
            return match.group(i) + "*" * len(match.group(i + 1))
    return match.group(0)


def mask_secrets(text: str) -> str:
    """``text`` with each secret it shows (see _SECRET_TEXT) masked, at the same length."""
    if "hf_" not in text and "://" not in text and "--api-key" not in text:
        return text
    if "\n" not in text:
        return _SECRET_TEXT.sub(_mask, text)
    # No secret spans a line break (each branch's classes exclude it), so only the lines holding one of the three
    # literals are searched: a whole report (25 MB of JSON for 3,000 files) took 1.0 s through the one regex, 0.2 s so
    return "\n".join(_SECRET_TEXT.sub(_mask, line) if "hf_" in line or "://" in line or "--api-key" in line else line
                     for line in text.split("\n"))


def mask_named(name: object, value: object) -> object:
    """A setting's value as reports show it: masked whole when its name says it is a secret (`--api-key`,
    `HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, `*_PASSWORD`), else with the secrets it holds masked."""
    if not isinstance(value, str) or not value:
        return value
    if _SECRET_NAME.search(str(name)) and not value.startswith("$"):  # (`$(HF_TOKEN)`: a reference, not a secret)
        return "*" * min(len(value), 8)
    return mask_secrets(value)


def shortened(text: str, width: int = 80) -> str:
    """``text`` as a message quotes a value from a scanned file: cut at ``width`` characters, saying how long it
    was (a hostile file's megabyte key or value is not quoted whole in every report)."""
    return text if len(text) <= width else f"{text[:width]}... ({len(text):,} characters)"


def eprint(message: str) -> None:
    """A line on standard error, made safe (`safe_output`), its secrets masked (`mask_secrets`)."""
    print(mask_secrets(safe_output(message)), file=sys.stderr)


# vramlint writes U+2983 ... U+2984 (yamlload.TEMPLATE_OPEN, TEMPLATE_CLOSE) where its own rendering of a template
# left a value unknown. A file's own brackets must never read as that mark (hostile round 25: one in a plain
# Secret turned off every check of the file), so the text of a file holds each as a private-use character of the
# same width, which every check takes for the plain character it is (not base64, not in a name). `show_marks`
# gives the user's characters back in every message (model.short_message), where it quotes what the file says.
_OWN_MARKS = str.maketrans({"\u2983": "\ue983", "\u2984": "\ue984"})
_SHOWN_MARKS = str.maketrans({"\ue983": "\u2983", "\ue984": "\u2984"})


def without_own_marks(text: str) -> str:
    """File text with U+2983/U+2984 kept apart from vramlint's unknown mark (see _OWN_MARKS)."""
    return text.translate(_OWN_MARKS) if "\u2983" in text or "\u2984" in text else text


def show_marks(text: str) -> str:
    """The file's own brackets back in ``text`` (a message or a source line), also where a message escaped them
    (`repr`, `unicode_escape`: a private-use character is not printable, U+2983 is, so `\\u2983` says it)."""
    if "\ue983" in text or "\ue984" in text:
        text = text.translate(_SHOWN_MARKS)
    if "\\ue98" in text:
        text = text.replace("\\ue983", "\\u2983").replace("\\ue984", "\\u2984")
    return text
