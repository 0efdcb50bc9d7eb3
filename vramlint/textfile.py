"""Read a scanned file's text: size-capped, UTF-8, with the reason a file is skipped.

Below `scan` and the extractors alike (compose reads `env_file`s, scripts a container runs are followed), so
that no extractor imports `scan`.
"""

from __future__ import annotations

from typing import Any

from vramlint.fsread import MAX_FILE_BYTES  # noqa: F401 - part of this module's API
from vramlint.model import Skipped


def read_text(path: str, display: str, check_inside: bool = True) -> tuple[str | None, Skipped | None]:
    """The file's text, or why it is skipped (outside the scanned tree, not a regular file, too large, empty,
    binary, not text). The bytes come through `vramlint.fsread`, the one reader of every file."""
    from vramlint.fsread import Refusal, read_bytes

    raw = read_bytes(path, MAX_FILE_BYTES, check_inside=check_inside)
    if isinstance(raw, Refusal):
        reason = raw.reason
        if reason.startswith("too large"):
            reason = "file " + reason
        elif raw.missing:
            reason = "cannot read: no such file"
        return None, Skipped(display, reason)
    return decode(raw, display)


# git-crypt's clean filter writes every encrypted blob as this header, a 12-byte nonce and the ciphertext: a
# checkout that was not unlocked (`git-crypt unlock`) holds these bytes where the file's text would be
GIT_CRYPT_HEADER = b"\x00GITCRYPT\x00"
GIT_CRYPT_REASON = "encrypted with git-crypt"


def decode(raw: bytes, display: str) -> tuple[str | None, Skipped | None]:
    from vramlint.fsread import decode_text, has_unicode_bom

    if len(raw) > MAX_FILE_BYTES:
        return None, Skipped(display, f"file too large (more than {MAX_FILE_BYTES} bytes)")
    if raw.startswith(GIT_CRYPT_HEADER):
        return None, Skipped(display, GIT_CRYPT_REASON)
    if not raw.strip():
        return None, Skipped(display, "empty file")
    bom = has_unicode_bom(raw)  # UTF-16/32 text has NUL bytes: its byte-order mark says what it is
    if not bom and b"\x00" in raw[:8192]:
        line = raw.count(b"\n", 0, raw.index(b"\x00")) + 1
        return None, Skipped(display, f"binary file (a NUL byte on line {line})")
    text = decode_text(raw)
    if text is None:
        from vramlint.fsread import is_utf32

        if is_utf32(raw):
            return None, Skipped(display, "not UTF-8 (UTF-32 by its byte-order mark, which kubectl, Helm and compose "
                                          "do not read: they take UTF-8 or UTF-16 only, and refuse the file)")
        if bom:
            return None, Skipped(display, "not UTF-8 (invalid text after its byte-order mark)")
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, Skipped(display, f"not UTF-8 (invalid byte at offset {exc.start})")
    if text is not None and not text.strip():
        return None, Skipped(display, "empty file")
    return text, None


# Line breaks as the file's own reader counts them. YAML (libyaml, go-yaml) ends a line at LF, CR LF, a lone CR,
# NEL, LS and PS; a shell, Docker's Dockerfile parser, compose's .env reader and TOML at LF (CR LF) only.
# str.splitlines also breaks at VT, FF and FS/GS/RS, which no reader of these files counts.
_YAML_BREAKS = None


def line_starts(text: str) -> Any:
    """Where each line of ``text`` starts after an LF (0 first), as an array of ints: found in the text, with no
    string per line even for a moment."""
    from array import array

    starts = array("I" if len(text) < 1 << 31 else "Q", [0])
    find, add = text.find, starts.append
    at = find("\n")
    while at >= 0:
        add(at + 1)
        at = find("\n", at + 1)
    return starts


def packed_source_lines(text: str, display: str) -> Any:
    """`source_lines` as a `PackedLines` (the text and where each line starts), made from the text without a
    string per line where LF is the only break: the report keeps the lines of the files it quotes, and a 5 MB file
    of 1.7 million short lines was 100 MB or more of line strings for each of them (hostile round 19)."""
    from vramlint.yamlload import PackedLines

    if not text or "\r" in text or "\x85" in text or "\u2028" in text or "\u2029" in text:
        return PackedLines(source_lines(text, display))
    body = text[:-1] if text.endswith("\n") else text
    starts = line_starts(body)
    starts.append(len(body) + 1)
    packed = PackedLines.__new__(PackedLines)
    packed._text, packed._starts = body, starts
    return packed


def source_lines(text: str, display: str) -> list[str]:
    """``text``'s lines as its reader numbers them, so that line N of a finding is the line N a suppression
    comment sits on and the one the report quotes."""
    import re

    global _YAML_BREAKS
    if "\r" not in text and "\x85" not in text and "\u2028" not in text and "\u2029" not in text:
        # LF the only break either reader counts: split on it, as both would (the report reads the files of its
        # findings again: the 1,802 of 3,000 corpus files took 0.10 CPU-s split by the expression below, 0.015 so)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines
    if _counts_lf_only(display, text):
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return [line[:-1] if line.endswith("\r") else line for line in lines]
    if _YAML_BREAKS is None:
        _YAML_BREAKS = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
    lines = _YAML_BREAKS.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _counts_lf_only(display: str, text: str) -> bool:
    from vramlint.extract.shell_scripts import is_shell_script

    name = display.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return (name.endswith((".toml", ".env", ".dockerfile", ".containerfile")) or name.startswith((
        "dockerfile", "containerfile", ".env")) or is_shell_script(display, text))
