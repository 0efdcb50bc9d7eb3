"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per active finding.

Escaping follows the runner's rules (actions/toolkit ``command.ts``): ``%``, CR and LF in the message;
additionally ``:`` and ``,`` in properties, which would otherwise end a property.
"""

from __future__ import annotations

import re

from vramlint.report import Report
from vramlint.textsafe import escape_controls

_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


# A line of a message (after the CR or LF the runner decodes) that starts with `::`: shown with a backslash, as the
# text report shows one, so a quoted value (a template's `fail "...\n::error::x"`) reads as no second command
_DECODED_COMMAND = re.compile(r"([\r\n][ \t]*)(::)")


def escape_data(text: str) -> str:
    # other control characters (an escape sequence from a file name) are shown escaped, not sent to the log
    text = escape_controls(text, keep="\r\n")
    if "::" in text:
        text = _DECODED_COMMAND.sub(r"\1\\\2", text)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report, color: bool = False) -> str:
    lines = []
    for finding in report.active:
        loc = finding.location
        props = [
            ("file", loc.file),
            ("line", str(loc.line)),
            ("endLine", str(loc.end_line if loc.end_line is not None else loc.line)),
            ("col", str(loc.column)),
        ]
        if loc.end_column is not None:
            props.append(("endColumn", str(loc.end_column)))
        props.append(("title", f"{finding.rule_id} {finding.rule_name}"))
        prop_text = ",".join(f"{k}={escape_property(v)}" for k, v in props)
        lines.append(f"::{_COMMAND.get(finding.level, 'warning')} {prop_text}::{escape_data(finding.message)}")
    for group in report.unchecked:  # once per cause, not on every server
        lines.append(f"::notice title={escape_property('vramlint: memory not checked')}::{escape_data(group.text())}")
    from vramlint.report.text import fixable_text

    fixable = fixable_text(report)
    if fixable:  # said once, as ruff says how many `--fix` fixes
        lines.append(f"::notice title={escape_property('vramlint: fixes')}::{escape_data('vramlint check ' + fixable)}")
    return "\n".join(lines) + ("\n" if lines else "")
