"""Read a scanned file's text: size-capped, UTF-8, with the reason a file is skipped.

Below `scan` and the extractors alike (compose reads `env_file`s, scripts a container runs are followed), so
that no extractor imports `scan`.
"""

from __future__ import annotations

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


def decode(raw: bytes, display: str) -> tuple[str | None, Skipped | None]:
    from vramlint.fsread import decode_text, has_unicode_bom

    if len(raw) > MAX_FILE_BYTES:
        return None, Skipped(display, f"file too large (more than {MAX_FILE_BYTES} bytes)")
    if not raw.strip():
        return None, Skipped(display, "empty file")
    bom = has_unicode_bom(raw)  # UTF-16/32 text has NUL bytes: its byte-order mark says it is text
    if not bom and b"\x00" in raw[:8192]:
        line = raw.count(b"\n", 0, raw.index(b"\x00")) + 1
        return None, Skipped(display, f"binary file (a NUL byte on line {line})")
    text = decode_text(raw)
    if text is None:
        if bom:
            return None, Skipped(display, "not UTF-8 (invalid text after its byte-order mark)")
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, Skipped(display, f"not UTF-8 (invalid byte at offset {exc.start})")
    if text is not None and not text.strip():
        return None, Skipped(display, "empty file")
    return text, None
