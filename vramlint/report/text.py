"""Text report: ``path:line:col: VRL001 [warning] message`` per finding (as ruff and compilers print), then a
summary line. Suppressed findings are listed only with ``--show-suppressed``. File names and messages carry
data from the scanned files: their control characters are shown escaped and no line can start a CI workflow
command (`vramlint.textsafe`)."""

from __future__ import annotations

from vramlint.report import Report, plural
from vramlint.textsafe import escape_controls, escape_name, neutralise_commands

_RESET = "\033[0m"
_BOLD = "\033[1m"
_DIM = "\033[2m"
_LEVEL_COLOR = {"error": "\033[1;31m", "warning": "\033[1;33m", "note": "\033[1;36m"}


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color else text


def render(report: Report, color: bool = False) -> str:
    if report.quiet:
        if not report.active:
            return ""
        return neutralise_commands(summary(report, color) + "\n")
    lines: list[str] = []
    shown = report.findings if report.show_suppressed else report.active
    if report.statistics:
        lines.extend(statistics_lines(report, color))
        shown = []
    for finding in shown:
        loc = finding.location
        where = _paint(escape_name(loc.file), _BOLD, color) + f":{loc.line}:{loc.column}:"
        level_color = _LEVEL_COLOR.get(finding.level, "")
        head = _paint(finding.rule_id, level_color, color) + " " + _paint(f"[{finding.level}]", level_color, color)
        message = escape_controls(finding.message.replace("\r\n", "\n"), keep="\n").replace("\n", "\n    ")
        line = f"{where} {head} {message}"
        if finding.suppressed:
            why = f"suppressed by {finding.suppression}"
            if finding.justification:
                why += f": {escape_name(finding.justification)}"
            line += " " + _paint(f"({why})", _DIM, color)
        lines.append(line)
    lines.extend(unchecked_lines(report, color))
    lines.append(summary(report, color))
    return neutralise_commands("\n".join(lines) + "\n")


def statistics_lines(report: Report, color: bool = False) -> list[str]:
    """`--statistics`: one line per rule, most frequent first: count, rule id, name, level(s)."""
    names = {rule.id: rule.name for rule in report.rules}
    counts: dict[str, list] = {}
    for finding in report.active:
        entry = counts.setdefault(finding.rule_id, [0, set()])
        entry[0] += 1
        entry[1].add(finding.level)
    rows = sorted(counts.items(), key=lambda item: (-item[1][0], item[0]))
    width = max((len(str(n)) for n, _ in counts.values()), default=1)
    out = []
    for rule_id, (count, levels) in rows:
        level_text = "/".join(level for level in ("error", "warning", "note") if level in levels)
        colour = _LEVEL_COLOR.get(level_text.split("/")[0], "")
        out.append(f"{count:>{width}}  {_paint(rule_id, colour, color)}  {names.get(rule_id, '')} [{level_text}]")
    return out


def unchecked_lines(report: Report, color: bool = False) -> list[str]:
    """The servers left without a budget, one line per cause with its fix (said once for all of them)."""
    if not report.unchecked:
        return []
    count = len({where for g in report.unchecked for where in g.servers})
    out = [_paint(f"Servers without a memory budget ({count}), by cause:", _BOLD, color)]
    for group in report.unchecked:
        out.append(f"  - {escape_name(group.text())}")
    return out


def summary(report: Report, color: bool = False) -> str:
    counts = report.counts()
    active = sum(counts.values())
    servers = plural(len(report.assessments), "server")
    files = plural(report.files_scanned, "file")
    extra = []
    if report.suppressed:
        extra.append(f"{len(report.suppressed)} suppressed")
    if report.skipped:
        extra.append(f"{plural(len(report.skipped), 'path')} skipped")
    tail = f" ({', '.join(extra)})" if extra else ""
    if active == 0:
        if not report.assessments:
            text = f"No vLLM server found in {files}{tail}."
        else:
            text = f"All checks passed: {servers} in {files}{tail}."
        return _paint(text, "\033[1;32m", color)
    parts = [plural(n, level) for level, n in counts.items() if n]
    text = f"Found {plural(active, 'finding')} ({', '.join(parts)}) in {servers}, {files}{tail}."
    if report.fail_on != "never" and report.exit_status == 1:
        text += f" Failing: findings at or above {report.fail_on}."
    fixable = fixable_text(report)
    if fixable:
        text += f" {fixable}."
    return _paint(text, _BOLD, color)


def fixable_text(report: Report) -> str:
    """How many active findings `check --fix` would fix (and `--unsafe-fixes` besides), or ''."""
    active = [f for f in report.findings if not f.suppressed and f.fix is not None and f.fix.edits]
    safe = sum(1 for f in active if f.fix.safe)
    unsafe = len(active) - safe
    if not active:
        return ""
    if safe and unsafe:
        return f"{safe} fixable with --fix, {unsafe} more with --fix --unsafe-fixes (--diff shows them)"
    if safe:
        return f"{safe} fixable with --fix (--diff shows them)"
    return f"{unsafe} fixable with --fix --unsafe-fixes (--diff --unsafe-fixes shows them)"
