"""Reports: one module per output format, each with ``render(report, color=False) -> str``.

Formats are imported only when asked for. Every format receives the same :class:`Report`, built once by
``vramlint check``; none of them decides anything (what is suppressed, the exit status) on its own.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import field
from typing import Any

from vramlint.lean_dataclass import dataclass
from vramlint.model import LEVELS, Assessment, Finding, Problem, Skipped

FORMATS = ("text", "concise", "json", "sarif", "github", "markdown", "gitlab", "junit")
TOOL_NAME = "vramlint"
INFORMATION_URI = "https://pypi.org/project/vramlint/"


@dataclass
class Report:
    """Everything a run produced, as the reports see it."""

    findings: list[Finding]  # all of them, suppressed ones included, sorted by file and line
    assessments: list[Assessment] = field(default_factory=list)
    rules: list[Any] = field(default_factory=list)  # every rule that could report (vramlint.rule.Rule)
    problems: list[Problem] = field(default_factory=list)  # input problems (also present as VRL102 findings)
    skipped: list[Skipped] = field(default_factory=list)
    files_scanned: int = 0
    fail_on: str = "error"
    exit_status: int = 0
    show_suppressed: bool = False
    quiet: bool = False  # text: the summary line only, nothing when clean (--quiet)
    statistics: bool = False  # text: findings counted per rule instead of listed (--statistics)
    config_file: str | None = None
    baseline_file: str | None = None
    elapsed_s: float | None = None
    source_root: str = "."  # what SARIF URIs are relative to (%SRCROOT%): the repository root
    read_lines: Callable[[str], list[str] | None] = field(default=lambda file: None, repr=False)
    # servers left without a budget, by cause, each with the one change that fixes it (vramlint.unchecked)
    unchecked: list[Any] = field(default_factory=list)

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if not f.suppressed]

    @property
    def suppressed(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed]

    def counts(self) -> dict[str, int]:
        out = {level: 0 for level in reversed(LEVELS)}
        for finding in self.active:
            out[finding.level] = out.get(finding.level, 0) + 1
        return out

    def findings_by_server(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {}
        for finding in self.findings:
            if finding.server_key:
                out.setdefault(finding.server_key, []).append(finding)
        return out

    def findings_of_servers(self) -> dict[int, list[Finding]]:
        """id(server) -> its findings. A finding made for a server object goes to that server only (the servers of
        one multi-document file can share a key: 3,000 of them got each other's findings, a 98 MB report); one
        that names only a key goes to every server with that key."""
        out: dict[int, list[Finding]] = {}
        by_key: dict[str, list[int]] = {}
        for a in self.assessments:
            by_key.setdefault(a.server.key, []).append(id(a.server))
        ids = {sid for sids in by_key.values() for sid in sids}
        for finding in self.findings:
            if finding.server_id in ids:
                out.setdefault(finding.server_id, []).append(finding)
            elif finding.server_key:
                for sid in by_key.get(finding.server_key, ()):
                    out.setdefault(sid, []).append(finding)
        return out


def render(fmt: str, report: Report, color: bool = False) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    from vramlint.textsafe import mask_secrets

    module = importlib.import_module(f"vramlint.report.{fmt}")
    text = module.render(report, color=color)
    if fmt in ("json", "sarif", "gitlab"):
        from vramlint.textsafe import json_safe

        text = json_safe(text)  # printed to a CI log, a string must not read as a `##[` command
    # Messages quote values of the scanned files (an unknown flag's word, a model id that is a URL, a compose
    # `${VAR:?message}`), and a secret the repository wrote there would be echoed into a CI log or an uploaded
    # report: masked here, where every format passes, rather than in each of the hundreds of messages.
    return mask_secrets(text)


def write(fmt: str, report: Report, stream: Any, color: bool = False) -> None:
    """`render`'s text written to ``stream``; the text formats and SARIF a finding at a time and JSON a server at
    a time (memory: 10,000 findings or servers)."""
    from vramlint.textsafe import mask_secrets  # (as `render` masks: no part ends inside a value)

    if fmt in ("json", "sarif"):
        from vramlint.textsafe import json_safe

        module = importlib.import_module(f"vramlint.report.{fmt}")  # as `render` loads a format
        shared_type = getattr(module, "SharedText", None)
        made_safe: dict[int, tuple[str, str]] = {}  # a shared text (kept alive, so its id is its own) -> safe
        for part in module.render_parts(report):
            # no part ends inside a string: a `##[` is never cut in two
            if part.__class__ is shared_type:
                safe = made_safe.get(id(part))
                if safe is None or safe[0] is not part:
                    safe = made_safe[id(part)] = (part, mask_secrets(json_safe(part)))
                stream.write(safe[1])
            else:
                stream.write(mask_secrets(json_safe(part)))
        return
    if fmt not in ("text", "concise"):
        stream.write(render(fmt, report, color=color))
        return
    text = importlib.import_module("vramlint.report.text")  # as `render` loads a format
    for part in text.render_parts(report, color=color, concise=fmt == "concise"):
        stream.write(mask_secrets(part))


def repository_root(start: str = ".") -> str:
    """The folder holding ``.git`` above ``start`` (SARIF URIs are relative to it for GitHub), else ``start``."""
    current = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return os.path.abspath(start)
        current = parent


def plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count} {word if count == 1 else (words or word + 's')}"


def use_color(choice: str, stream: Any) -> bool:
    """``--color auto|always|never``; auto means a terminal, and NO_COLOR (any value) turns it off."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR", "") != "":
        return False
    if os.environ.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def server_label(assessment: Assessment) -> str:
    server = assessment.server
    name = server.name or server.kind or "server"
    if server.container and server.container != server.name:
        name += f"/{server.container}"
    return name


def verdict(assessment: Assessment) -> str:
    budget = assessment.budget
    if budget is None:
        return "unknown"
    return "starts" if budget.starts else "will not start"
