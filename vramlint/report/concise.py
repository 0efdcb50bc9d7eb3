"""Concise text report: one line per finding, ``path:line:col: VRL001 [warning] message`` (the whole message),
then the summary line; for scripts, editors' problem matchers and grep. ``vramlint.report.text`` renders it."""

from __future__ import annotations

from vramlint.report import Report


def render(report: Report, color: bool = False) -> str:
    from vramlint.report.text import render as render_text

    return render_text(report, color=color, concise=True)
