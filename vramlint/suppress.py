"""Suppressions written in the scanned files: comments and Kubernetes annotations.

- A comment ``# vramlint: ignore[VRL001] reason`` (several ids or rule names, comma-separated) suppresses those
  rules' findings on its own line and on the line below it. It is read wherever it sits on the line, also inside
  a block scalar (a ``sh -c`` script), since that is where vLLM flags are often written.
- An annotation ``vramlint.dev/ignore: "VRL001,VRL002"`` on an object suppresses those rules on the servers
  of that object (the extractor puts it in ``Server.ignore_rules``).

A suppressed finding is kept, with ``suppressed=True``, its justification (the comment's reason) and how it was
suppressed; reports decide whether to show it, and it never counts for the exit status. A suppression that
suppresses nothing is reported as VRL100 unused-suppression, one that cannot be read as VRL101
malformed-suppression (see ``vramlint.meta``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable
from dataclasses import field

from vramlint.lean_dataclass import dataclass
from vramlint.meta import MALFORMED_SUPPRESSION, UNUSED_SUPPRESSION
from vramlint.model import Finding, Location, Server
from vramlint.textsafe import shortened

# `#` starts a comment at the start of a line or after white space (YAML's rule; also the shell's).
_DIRECTIVE = re.compile(r"(?:^|(?<=\s))#\s*vramlint\s*:\s*(?P<body>.*)$", re.IGNORECASE)
_IGNORE = re.compile(r"^ignore\s*\[(?P<ids>[^\]]*)\]\s*(?P<reason>.*)$")
FORM = "# vramlint: ignore[VRL001] reason"
META_IDS = {UNUSED_SUPPRESSION[0], MALFORMED_SUPPRESSION[0]}


@dataclass
class Suppression:
    kind: str  # "comment" | "annotation"
    rule_ids: list[str]
    reason: str | None
    location: Location
    written: dict[str, str] = field(default_factory=dict)  # rule id -> as written
    server_key: str | None = None  # annotations: the server they apply to
    used: set[str] = field(default_factory=set)

    def covers_line(self, line: int) -> bool:
        return self.location.line in (line, line - 1)


class RuleNames:
    """Resolves what a user writes (an id in any case, or a rule name) to a rule id."""

    def __init__(self, rules: Iterable) -> None:
        self.by_key: dict[str, str] = {}
        for rule in rules:
            self.by_key[rule.id.lower()] = rule.id
            self.by_key[rule.name.lower()] = rule.id

    def resolve(self, written: str) -> str | None:
        return self.by_key.get(written.strip().lower())

    def suggestion(self, written: str) -> str | None:
        import difflib  # only for a suppression naming no rule

        close = difflib.get_close_matches(written.strip().lower(), list(self.by_key), n=1, cutoff=0.6)
        return self.by_key[close[0]] if close else None


def _meta_finding(rule: tuple[str, str], message: str, location: Location, server_key: str | None = None) -> Finding:
    return Finding(
        rule_id=rule[0], rule_name=rule[1], level="warning", message=message, location=location,
        server_key=server_key,
    )


def _parse_ids(text: str, names: RuleNames) -> tuple[dict[str, str], list[str]]:
    """(rule id -> as written, errors) for a comma-separated list of ids or names."""
    ids: dict[str, str] = {}
    errors: list[str] = []
    parts = [p.strip() for p in re.split(r"[,\s]+", text) if p.strip()]
    if not parts:
        errors.append("names no rule")
    unknown: dict[str, None] = {}
    for part in parts:
        rule_id = names.resolve(part)
        if rule_id is None:
            unknown.setdefault(part)
        else:
            ids.setdefault(rule_id, part)
    # the first few are named (each with the closest rule, a difflib search), the rest counted: a comment naming
    # 500,000 rules made one message of them all and 500,000 searches (48 s, 490 MB)
    for part in list(unknown)[:MAX_NAMED_ERRORS]:
        hint = names.suggestion(part[:80])
        errors.append(f"'{shortened(part)}' is not a rule id or name" + (f"; did you mean {hint}?" if hint else ""))
    if len(unknown) > MAX_NAMED_ERRORS:
        errors.append(f"{len(unknown) - MAX_NAMED_ERRORS:,} more names are not rule ids or names either")
    return ids, errors


MAX_NAMED_ERRORS = 10


def comment_suppressions(file: str, lines: list[str], names: RuleNames) -> tuple[list[Suppression], list[Finding]]:
    """The ``# vramlint:`` comments of one file, and a VRL101 finding for each one that cannot be read."""
    out: list[Suppression] = []
    if "vramlint" not in "\n".join(lines).lower():
        return out, []  # most files have no vramlint comment: one search of the whole text, not one per line
    malformed = _Capped()
    for number, text in enumerate(lines, start=1):
        if "vramlint" not in text.lower():
            continue
        m = _DIRECTIVE.search(text)
        if m is None:
            continue
        column = m.start() + 1 if text[m.start()] == "#" else m.start() + 2
        location = Location(file, number, column, number, len(text.rstrip()) + 1)
        body = m.group("body").strip()
        ignore = _IGNORE.match(body)
        if ignore is None:
            malformed.add(
                MALFORMED_SUPPRESSION,
                f"cannot read this vramlint comment ('# vramlint: {shortened(body, 200)}'); the form is '{FORM}'",
                location,
            )
            continue
        ids, errors = _parse_ids(ignore.group("ids"), names)
        if errors:
            malformed.add(
                MALFORMED_SUPPRESSION,
                f"suppression comment {'; '.join(errors)}; the form is '{FORM}'",
                location,
            )
        if ids:
            reason = _reason(ignore.group("reason"))
            out.append(Suppression("comment", list(ids), reason, location, written=ids))
    return out, malformed.findings()


def _reason(text: str) -> str | None:
    # "-- reason", ": reason" and "because ..." all read as the reason.
    text = text.strip().lstrip(":-—–").strip()
    return text or None


def annotation_suppressions(servers: Iterable[Server], names: RuleNames) -> tuple[list[Suppression], list[Finding]]:
    """The ``vramlint.dev/ignore`` annotations of the servers (one suppression per annotated rule)."""
    out: list[Suppression] = []
    malformed: list[Finding] = []
    reported: set[tuple[str, int, int, str]] = set()
    for server in servers:
        for written, location in (server.ignore_rules or {}).items():
            rule_id = names.resolve(written)
            if rule_id is None:
                key = (location.file, location.line, location.column, written)
                if key not in reported:  # one object (several containers) reports its annotation once
                    reported.add(key)
                    hint = names.suggestion(written)
                    malformed.append(_meta_finding(
                        MALFORMED_SUPPRESSION,
                        f"vramlint.dev/ignore names '{written}', which is not a rule id or name"
                        + (f"; did you mean {hint}?" if hint else ""),
                        location,
                        server.key,
                    ))
                continue
            out.append(Suppression(
                "annotation", [rule_id], None, location, written={rule_id: written}, server_key=server.key,
            ))
    return out, malformed


def apply_suppressions(
    findings: list[Finding],
    servers: list[Server],
    read_lines: Callable[[str], list[str] | None],
    rules: Iterable,
    is_enabled: Callable[[str, str], bool] = lambda rule_id, file: True,
    files: Iterable[str] = (),
    uncommented: Container[str] = (),
) -> list[Finding]:
    """``findings`` with suppressed ones marked, plus VRL100/VRL101 findings about the suppressions.

    ``read_lines(file)`` gives a scanned file's lines (None when it cannot be read); comments are read in the
    files of ``findings``, of ``servers`` and in ``files``. ``is_enabled(rule_id, file)`` tells whether a rule
    runs for a file: a suppression of a rule that does not run is not "unused". ``uncommented``: files known to
    hold no "vramlint" (the scan read them): not read for comments.
    """
    names = RuleNames(rules)
    suppressions: list[Suppression] = []
    meta: list[Finding] = []
    wanted_files = list(dict.fromkeys([*(s.file for s in servers), *(f.location.file for f in findings), *files]))
    # comments by the line they sit on: a finding looks at its own line and the one above, not at every comment of
    # its file (a file of 100,000 comments and as many findings was 10**10 comparisons)
    by_line: dict[tuple[str, int], list[Suppression]] = {}
    for file in wanted_files:
        if file in uncommented:
            continue
        lines = read_lines(file)
        if not lines:
            continue
        found, malformed = comment_suppressions(file, lines, names)
        meta.extend(malformed)
        suppressions.extend(found)
        for s in found:
            by_line.setdefault((file, s.location.line), []).append(s)
    annotations, malformed = annotation_suppressions(servers, names)
    meta.extend(malformed)
    by_server: dict[str, list[Suppression]] = {}
    for s in annotations:
        by_server.setdefault(s.server_key or "", []).append(s)

    def suppress(finding: Finding) -> None:
        if finding.suppressed:
            return
        file, line = finding.location.file, finding.location.line
        for s in (*by_line.get((file, line - 1), ()), *by_line.get((file, line), ())):
            if finding.rule_id in s.rule_ids and s.covers_line(line):
                s.used.add(finding.rule_id)
                _mark(finding, "comment", s.reason)
                return
        for s in by_server.get(finding.server_key or "", ()) if finding.server_key else ():
            if finding.rule_id in s.rule_ids:
                s.used.add(finding.rule_id)
                _mark(finding, "annotation", f"vramlint.dev/ignore annotation at {s.location.file}:{s.location.line}")
                return

    for finding in findings:
        suppress(finding)
    for finding in meta:
        suppress(finding)

    # A rule suppressed by one annotation on a Deployment applies to each of its containers: the annotation is
    # unused only when no server it covers had the finding.
    used_annotations = {(s.location.file, s.location.line, s.location.column, s.rule_ids[0])
                        for s in annotations if s.used}
    capped = _Capped()
    seen_annotations: set[tuple] = set()
    for s in suppressions + annotations:
        for rule_id in s.rule_ids:
            if rule_id in s.used or rule_id in META_IDS:
                continue
            if not is_enabled(rule_id, s.location.file):
                continue
            if s.kind == "annotation":
                key = (s.location.file, s.location.line, s.location.column, rule_id)
                if key in used_annotations or key in seen_annotations:
                    continue
                seen_annotations.add(key)
                message = (f"vramlint.dev/ignore names {s.written.get(rule_id, rule_id)}, but {rule_id} reports "
                           "nothing on this object; remove it from the annotation")
            else:
                message = (f"'{s.written.get(rule_id, rule_id)}' suppresses nothing: {rule_id} reports nothing on "
                           "this line or the line below; remove it or move the comment to the finding's line")
            capped.add(UNUSED_SUPPRESSION, message, s.location, s.server_key)
    unused = capped.findings()
    for finding in unused:
        suppress(finding)
    return findings + meta + unused


# VRL100/VRL101 findings of one file said one by one; past that, one finding says how many more and where: a file
# of 100,000 suppression comments would otherwise put 100,000 findings in every report.
MAX_META_PER_FILE = 200


class _Capped:
    """Meta findings of a run, MAX_META_PER_FILE per file and rule; the rest counted, said in one finding."""

    def __init__(self) -> None:
        self.items: list[Finding] = []
        self._count: dict[tuple[str, str], int] = {}
        self._rest: dict[tuple[str, str], list] = {}

    def add(self, rule: tuple[str, str], message: str, location: Location, server_key: str | None = None) -> None:
        key = (location.file, rule[0])
        n = self._count.get(key, 0)
        self._count[key] = n + 1
        if n < MAX_META_PER_FILE:
            self.items.append(_meta_finding(rule, message, location, server_key))
        elif n == MAX_META_PER_FILE:
            self._rest[key] = [rule, message, location, server_key, location.line]
        else:
            self._rest[key][4] = location.line

    def findings(self) -> list[Finding]:
        out = list(self.items)
        for key, (rule, message, location, server_key, last) in self._rest.items():
            what = "unused suppression comments" if rule == UNUSED_SUPPRESSION else "unreadable vramlint comments"
            out.append(_meta_finding(
                rule, f"{self._count[key] - MAX_META_PER_FILE:,} more {what} in this file, from line {location.line} "
                f"to line {last}, are not listed one by one (the first {MAX_META_PER_FILE} are); the first of them: "
                f"{message}", location, server_key))
        return out


# A suppression's reason is a sentence or two; it is repeated in every report for every finding it suppresses, and
# one comment above a line of 2,000 servers (a minified List) suppresses 2,000 of them: a 1 MB reason made a 2 GB
# JSON report. Past this many characters it is quoted cut, saying how long it was.
MAX_REASON_CHARS = 1000


def _mark(finding: Finding, how: str, justification: str | None) -> None:
    finding.suppressed = True
    finding.suppression = how
    if justification is not None and len(justification) > MAX_REASON_CHARS:
        justification = f"{justification[:MAX_REASON_CHARS]}... ({len(justification):,} characters)"
    finding.justification = justification
