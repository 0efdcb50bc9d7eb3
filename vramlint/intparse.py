"""Integers read from scanned text, bounded.

`str.isdigit()` is true for superscripts and other digits `int()` refuses ('²'), and `int()` of more than 4,300
digits raises (Python's int-string limit, there because the conversion is quadratic): a check-then-convert of a
value from a pull request fails the file on either. A count, an index or a version number has a few digits.
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[0-9]{1,18}")


def small_int(text: object) -> int | None:
    """The value of ``text`` when it is a plain decimal of at most 18 ASCII digits (surrounding spaces allowed),
    else None."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    return int(text) if _PLAIN.fullmatch(text) else None
