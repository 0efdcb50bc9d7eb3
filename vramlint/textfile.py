"""Read a scanned file's text: size-capped, UTF-8, with the reason a file is skipped.

Below `scan` and the extractors alike (compose reads `env_file`s, scripts a container runs are followed), so
that no extractor imports `scan`.
"""

from __future__ import annotations

import os

from vramlint.model import Skipped

MAX_FILE_BYTES = 5 * 1024 * 1024


def read_text(path: str, display: str) -> tuple[str | None, Skipped | None]:
    """The file's text, or why it is skipped (unreadable, too large, empty, binary, not UTF-8)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_FILE_BYTES:
                return None, Skipped(display, f"file too large ({size} bytes > {MAX_FILE_BYTES})")
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, Skipped(display, _reason(exc))
    return decode(raw, display)


def decode(raw: bytes, display: str) -> tuple[str | None, Skipped | None]:
    if len(raw) > MAX_FILE_BYTES:
        return None, Skipped(display, f"file too large (more than {MAX_FILE_BYTES} bytes)")
    if not raw.strip():
        return None, Skipped(display, "empty file")
    if b"\x00" in raw[:8192]:
        return None, Skipped(display, "binary file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, Skipped(display, f"not UTF-8 (invalid byte at offset {exc.start})")
    return text, None


def _reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == 40:
        return "symbolic link loop"
    return f"cannot read: {exc.strerror or exc}"
