"""Text report, as a person reads it: per finding a one-line headline, the source line with a marker under
the value (a code frame, as ruff and rustc print), the rest of the message as a note and the fix as help; then
a summary line. ``--output-format concise`` prints ``path:line:col: VRL001 [warning] message`` per finding
instead, for scripts and editors' problem matchers. Suppressed findings are listed only with ``--show-suppressed``. File names and messages carry
data from the scanned files: their control characters are shown escaped and no line can start a CI workflow
command (`vramlint.textsafe`)."""

from __future__ import annotations

from collections.abc import Iterator

from vramlint.model import Finding, Location
from vramlint.report import Report, plural
from vramlint.textsafe import escape_controls, escape_name, mask_secrets, neutralise_commands, show_marks

_RESET = "\033[0m"
_BOLD = "\033[1m"
_DIM = "\033[2m"
_BLUE = "\033[1;34m"
_LEVEL_COLOR = {"error": "\033[1;31m", "warning": "\033[1;33m", "note": "\033[1;36m"}


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color else text


def render(report: Report, color: bool = False, concise: bool = False) -> str:
    """The findings, each as a headline, the source line with a marker under the value, the rest of the message
    and the fix (``concise``: one line each, ``path:line:col: CODE [level] message``), then the summary."""
    return "".join(render_parts(report, color, concise))


def render_parts(report: Report, color: bool = False, concise: bool = False) -> Iterator[str]:
    """`render`'s text in pieces of whole lines, one finding at a time: printed as they come, 10,000 findings
    are never all held as text at once."""
    if report.quiet:
        if report.active:
            yield neutralise_commands(summary(report, color) + "\n")
        return
    shown = report.findings if report.show_suppressed else report.active
    if report.statistics:
        yield _lines_text(statistics_lines(report, color))
        shown = []
    width = None if concise else wrap_width()
    # the commands neutralised piece by piece: each piece is whole lines, and both marks lie within one line
    for finding in shown:
        if concise:
            yield neutralise_commands(concise_line(finding, color) + "\n")
        else:
            yield _lines_text([*finding_lines(finding, report, color, width), ""])
    yield _lines_text([*unchecked_lines(report, color), summary(report, color)])


def _lines_text(lines: list[str]) -> str:
    return neutralise_commands("".join(line + "\n" for line in lines))


def wrap_width() -> int:
    """The terminal's width (COLUMNS when set), 100 when the output is not a terminal; 60 at least."""
    import shutil

    return max(60, shutil.get_terminal_size((100, 24)).columns)


def _suppressed_text(finding: Finding) -> str:
    why = f"suppressed by {finding.suppression}"
    if finding.justification:
        why += f": {escape_name(finding.justification)}"
    return why


def concise_line(finding: Finding, color: bool = False) -> str:
    """``path:line:col: VRL001 [warning] message`` on one line, as editors' problem matchers read it."""
    loc = finding.location
    where = _paint(escape_name(loc.file), _BOLD, color) + f":{loc.line}:{loc.column}:"
    level_color = _LEVEL_COLOR.get(finding.level, "")
    head = _paint(finding.rule_id, level_color, color) + " " + _paint(f"[{finding.level}]", level_color, color)
    message = escape_controls(finding.message.replace("\r\n", "\n"), keep="\n").replace("\n", "\n    ")
    line = f"{where} {head} {message}"
    if finding.suppressed:
        line += " " + _paint(f"({_suppressed_text(finding)})", _DIM, color)
    return line


def finding_lines(finding: Finding, report: Report, color: bool = False, width: int | None = None) -> list[str]:
    """One finding as a person reads it: the headline; `--> path:line:col` and the source line with `^^^`
    under the value (no source line when the file cannot be read again, as standard input that was not
    kept); the rest of the message as a note; the fix as help (what it changes, whether `--fix` applies it,
    or why vramlint cannot write it)."""
    loc = finding.location
    level_color = _LEVEL_COLOR.get(finding.level, "")
    headline, detail = finding.headline()
    head = _paint(f"{finding.rule_id} [{finding.level}]", level_color, color)
    out = [f"{head} {_paint(_one_line(headline), _BOLD, color)}"]
    source = _source_line(report, loc.file, loc.line)
    digits = len(str(loc.line)) if source is not None else 1
    gutter = " " * (digits + 1)
    bar = _paint("|", _BLUE, color)
    out.append(f"{' ' * digits}{_paint('-->', _BLUE, color)} {escape_name(loc.file)}:{loc.line}:{loc.column}")
    if source is not None:
        text, start, length = _marked(source, loc)
        out.append(f"{gutter}{bar}")
        out.append(_paint(f"{loc.line} |", _BLUE, color) + (f" {text}" if text else ""))
        out.append(f"{gutter}{bar} {' ' * start}{_paint('^' * length, level_color, color)}")
    notes = []
    if detail:
        notes.append(("note", detail))
    if source is None and loc.line >= 1:
        why = (getattr(report.read_lines, "unquoted", None) or {}).get(loc.file)
        if why:
            notes.append(("note", f"line {loc.line} is not shown: {why}"))
    for other in finding.related:
        if other.file != loc.file or other.line != loc.line:
            where = f"line {other.line}" if other.file == loc.file else f"{escape_name(other.file)}:{other.line}"
            related = _source_line(report, other.file, other.line)
            related = related.strip() if related else related
            if related and len(related) > MAX_SHOWN_LINE:
                related = related[:MAX_SHOWN_LINE] + "..."
            notes.append(("note", f"{where}: {related}" if related else f"see {where}"))
    if finding.suppressed:
        notes.append(("note", _suppressed_text(finding)))
    help_text = fix_help(finding)
    if help_text:
        notes.append(("help", help_text))
    for label, text in notes:
        first = f"{gutter}= {label}: "
        for i, row in enumerate(_wrap(_one_line(text), width, len(first))):
            prefix = f"{gutter}= " + _paint(f"{label}:", _BOLD, color) + " " if i == 0 else " " * len(first)
            out.append(prefix + row)
    return out


def fix_help(finding: Finding) -> str:
    """The fix as the `help:` line says it: what it changes and which option applies it, or why vramlint writes
    no edit; '' when the finding has no fix."""
    fix = finding.fix
    if fix is None:
        return ""
    text = fix.description.strip().rstrip(".")
    if fix.edits and fix.safe:
        return f"{text} (safe fix: --fix applies it)"
    if fix.edits:
        return f"{text} (unsafe fix: --fix --unsafe-fixes applies it)"
    return f"{text} (no automatic fix: {fix.reason.rstrip('.')})" if fix.reason else f"{text} (no automatic fix)"


def _one_line(text: str) -> str:
    return escape_controls(text.replace("\r\n", "\n"), keep="\n").replace("\n", " ")


# Notes wrapped in this run, by (text, width): a tree of similar deployments repeats the same notes and advice
# for thousands of findings, and textwrap was a tenth of the text report's time. Bounded; the oldest half out.
_WRAPPED: dict[tuple[str, int], list[str]] = {}
_WRAPPED_MAX = 4096


def _wrap(text: str, width: int | None, indent: int) -> list[str]:
    if width is None or len(text) + indent <= width:
        return [text]
    width = max(30, width - indent)
    rows = _WRAPPED.get((text, width))
    if rows is None:
        import textwrap

        rows = textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [text]
        if len(_WRAPPED) >= _WRAPPED_MAX:
            for key in list(_WRAPPED)[:_WRAPPED_MAX // 2]:
                del _WRAPPED[key]
        _WRAPPED[(text, width)] = rows
    return rows


def _source_line(report: Report, file: str, line: int) -> str | None:
    if not file or line < 1:
        return None
    try:
        lines = report.read_lines(file)
    except (OSError, ValueError, MemoryError):
        return None
    if not lines or line > len(lines):
        return None
    raw = lines[line - 1]
    if len(raw) < _LONG_LINE:
        return show_marks(mask_secrets(raw))  # the file's own U+2983/U+2984 as written (textsafe.without_own_marks)
    # a long line masked once for all the findings on it: 2,000 servers of one minified List are on one 4 MB line,
    # and masking it again for each was half the run
    key = (file, line)
    hit = _MASKED_LONG_LINES.get(key)
    if hit is not None and hit[0] is raw:
        return hit[1]
    masked = show_marks(mask_secrets(raw))
    if len(_MASKED_LONG_LINES) >= 8:
        _MASKED_LONG_LINES.clear()
    _MASKED_LONG_LINES[key] = (raw, masked)
    return masked


_LONG_LINE = 10_000
_MASKED_LONG_LINES: dict[tuple[str, int], tuple[str, str]] = {}


_WORD_END = set(" \t,]}")
# A source line longer than this is shown as a window around the value: so much before it, of it, after it.
MAX_SHOWN_LINE = 300
_SHOWN_BEFORE, _SHOWN_SPAN, _SHOWN_AFTER = 60, 160, 40


def _marked(source: str, loc: Location) -> tuple[str, int, int]:
    """(the source line as printed, the marker's start column in it, the marker's length): under the value's
    span when the location has one on this line, else under the word (or quoted string, or `key: value`)
    that starts at the column. Tabs are shown as four spaces, control characters escaped."""
    # Positions in ``source`` itself, and only the shown pieces sliced: a minified List puts 6,000 findings on
    # one 4.5 MB line, and copying the line (or what is before and after the value) for each was 1 of 2.9 CPU-s.
    size = len(source)
    while size and source[size - 1] in "\r\n":
        size -= 1
    col0 = min(max(loc.column - 1, 0), size)
    if loc.end_line == loc.line and loc.end_column is not None and loc.end_column > loc.column:
        end = min(loc.end_column - 1, size)
    elif col0 < size and source[col0] in "\"'" and source.find(source[col0], col0 + 1, size) > 0:
        end = source.find(source[col0], col0 + 1, size) + 1
    else:
        end = col0
        while end < size and source[end] not in _WORD_END:
            end += 1
        if end > col0 and source[end - 1] == ":":  # a YAML key: the value after it too, up to a comment
            stop = source.find(" #", end, size)
            stop = size if stop < 0 else stop
            while stop > end and source[stop - 1].isspace():
                stop -= 1
            end = stop
    if size > MAX_SHOWN_LINE and end >= col0:
        # a megabyte line (a huge anchor, a minified file) printed once per finding made a 300 MB report: a
        # window around the value, cut ends marked
        before = "..." + source[col0 - _SHOWN_BEFORE:col0] if col0 > _SHOWN_BEFORE else source[:col0]
        span = source[col0:col0 + _SHOWN_SPAN] + "..." if end - col0 > _SHOWN_SPAN else source[col0:end]
        after = source[end:end + _SHOWN_AFTER] + "..." if size - end > _SHOWN_AFTER else source[end:size]
    else:
        body = source[:size]
        before, span, after = body[:col0], body[col0:end], body[end:]
        if size > MAX_SHOWN_LINE:  # (an end before the start: a location of negative columns)
            before = "..." + before[-_SHOWN_BEFORE:] if len(before) > _SHOWN_BEFORE else before
            span = span[:_SHOWN_SPAN] + "..." if len(span) > _SHOWN_SPAN else span
            after = after[:_SHOWN_AFTER] + "..." if len(after) > _SHOWN_AFTER else after
    shown_before = escape_name(before.replace("\t", "    "))
    marked = escape_name(span.replace("\t", "    "))
    text = shown_before + marked + escape_name(after.replace("\t", "    "))
    return text.rstrip(), len(shown_before), max(1, len(marked))


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
