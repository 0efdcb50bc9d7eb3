"""Markdown summary for a CI step summary (``$GITHUB_STEP_SUMMARY``): one row per server with its budget and
findings, then the findings."""

from __future__ import annotations

from vramlint.report import Report, plural, server_label, verdict

_ICON = {"error": "❌", "warning": "⚠️", "note": "ℹ️"}


def cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _gib(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f}"


def render(report: Report, color: bool = False) -> str:
    from vramlint.report.text import summary

    out = ["## vramlint", "", summary(report), ""]
    by_server = report.findings_by_server()
    if report.assessments:
        out += [
            "| Server | Model | GPU | Weights GiB | KV cache GiB | Max concurrency | Verdict | Findings |",
            "|---|---|---|---:|---:|---:|---|---|",
        ]
        for a in report.assessments:
            server, budget = a.server, a.budget
            where = f"`{cell(server.file)}:{server.location.line}` {cell(server_label(a))}"
            gpu = "?"
            if budget is not None:
                gpu = f"{budget.gpus}× {budget.gpu}" if budget.gpus > 1 else budget.gpu
            elif a.gpu is not None:
                gpu = a.gpu.name
            concurrency = "?" if budget is None else f"{budget.max_concurrency:.2f}x @ {budget.max_model_len:,}"
            active = [f for f in by_server.get(server.key, []) if not f.suppressed]
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
                f"| `{cell(loc.file)}:{loc.line}:{loc.column}` | {cell(f.message)} |"
            )
        out.append("")
    if report.suppressed:
        out += [f"<details><summary>{plural(len(report.suppressed), 'suppressed finding')}</summary>", ""]
        out += ["| Rule | Location | Why |", "|---|---|---|"]
        for f in report.suppressed:
            why = f.suppression or ""
            if f.justification:
                why += f": {f.justification}"
            out.append(f"| {f.rule_id} | `{cell(f.location.file)}:{f.location.line}` | {cell(why)} |")
        out += ["", "</details>", ""]
    return "\n".join(out)
