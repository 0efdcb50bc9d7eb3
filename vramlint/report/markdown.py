"""Markdown summary for a CI step summary (``$GITHUB_STEP_SUMMARY``): one row per server with its budget and
findings, then the findings."""

from __future__ import annotations

import re

from vramlint.report import Report, plural, server_label, verdict
from vramlint.textsafe import escape_controls, escape_name, neutralise_commands

_ICON = {"error": "❌", "warning": "⚠️", "note": "ℹ️"}


def cell(text: object) -> str:
    """Text for a table cell: a `|` or a line break cannot end the cell or the row, HTML is shown as text, and
    brackets as brackets: a model name or a suppression's reason written `[text](url)` or `![alt](url)` would
    otherwise be a link or an image (a fake badge) in the step summary or the pull-request comment."""
    text = escape_controls(str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    return (text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "\\<").replace(">", "\\>")
            .replace("[", "\\[").replace("]", "\\]"))


def code(text: object) -> str:
    """A code span in a table cell: fenced with more backticks than it holds, so a backtick cannot end it."""
    text = escape_name(text).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _gib(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f}"


def render(report: Report, color: bool = False) -> str:
    from vramlint.report.text import summary

    out = ["## vramlint", "", summary(report), ""]
    by_server = report.findings_of_servers()
    if report.assessments:
        out += [
            "| Server | Model | GPU | Weights GiB | KV cache GiB | Max concurrency | Verdict | Findings |",
            "|---|---|---|---:|---:|---:|---|---|",
        ]
        for a in report.assessments:
            server, budget = a.server, a.budget
            where = f"{code(f'{server.file}:{server.location.line}')} {cell(server_label(a))}"
            gpu = "?"
            if budget is not None:
                gpu = f"{budget.gpus}× {budget.gpu}" if budget.gpus > 1 else budget.gpu
            elif a.gpu is not None:
                gpu = a.gpu.name
            elif a.gpu_requirement is not None and a.gpu_requirement.min_total_gib is not None:
                gpu = f"not named (needs ≥ {a.gpu_requirement.min_total_gib:.1f} GiB)"
            if a.fleet:
                gpu = " / ".join(b.gpu for b in a.fleet)
            concurrency = "?" if budget is None else f"{budget.max_concurrency:.2f}x @ {budget.max_model_len:,}"
            active = [f for f in by_server.get(id(server), []) if not f.suppressed]
            found = ", ".join(f"{_ICON.get(f.level, '')} {f.rule_id}" for f in active) or "none"
            state = verdict(a)
            state = {"starts": "✅ starts", "will not start": "❌ will not start"}.get(state, "❔ unknown")
            out.append(
                f"| {where} | {cell(server.model or '?')} | {cell(gpu)} "
                f"| {_gib(budget.weights_gib if budget else None)} | {_gib(budget.kv_cache_gib if budget else None)} "
                f"| {concurrency} | {state} | {found} |"
            )
        out.append("")
    if report.active:
        out += ["### Findings", "", "| Level | Rule | Location | Message |", "|---|---|---|---|"]
        for f in report.active:
            loc = f.location
            out.append(
                f"| {_ICON.get(f.level, '')} {f.level} | {f.rule_id} {cell(f.rule_name)} "
                f"| {code(f'{loc.file}:{loc.line}:{loc.column}')} | {cell(f.message)} |"
            )
        out.append("")
    if report.unchecked:
        out += ["### Servers without a memory budget, by cause", ""]
        out += [f"- {cell(group.text())}" for group in report.unchecked]
        out.append("")
    if report.suppressed:
        out += [f"<details><summary>{plural(len(report.suppressed), 'suppressed finding')}</summary>", ""]
        out += ["| Rule | Location | Why |", "|---|---|---|"]
        for f in report.suppressed:
            why = f.suppression or ""
            if f.justification:
                why += f": {f.justification}"
            out.append(f"| {f.rule_id} | {code(f'{f.location.file}:{f.location.line}')} | {cell(why)} |")
        out += ["", "</details>", ""]
    return neutralise_commands("\n".join(out))
