"""GitLab Code Quality report (`artifacts: reports: codequality:`): a JSON array, one object per active finding
with the fields GitLab reads (docs.gitlab.com/ci/testing/code_quality, "Code Quality report format"):
``description`` (the message, then the fix: what it changes and whether `--fix` applies it, or why vramlint
writes none), ``check_name``, ``fingerprint`` (unique per finding, stable when lines move: rule, file and
YAML path, as the baseline identifies findings), ``severity`` (info, minor, major, critical or blocker),
``location.path`` (relative to the repository root) and ``location.lines.begin``."""

from __future__ import annotations

import hashlib
import json

from vramlint.report import Report

# vramlint's error is a server that will not start: critical; a warning, major; a note, info.
SEVERITY = {"error": "critical", "warning": "major", "note": "info"}


def document(report: Report) -> list[dict]:
    from vramlint.baseline import identity
    from vramlint.report.text import fix_help

    out = []
    seen: dict[str, int] = {}
    for finding in report.active:
        ident = identity(finding, report.source_root)
        base = f"{ident.rule}\0{ident.file}\0{ident.yaml_path}"
        # two findings of one rule on one YAML path (different messages) still need different fingerprints
        count = seen.get(base, 0)
        seen[base] = count + 1
        fingerprint = hashlib.sha256(f"{base}\0{count}".encode("utf-8", "surrogatepass")).hexdigest()
        help_text = fix_help(finding)
        out.append({
            "type": "issue",
            # GitLab shows only the description: the fix (or why there is none) goes in it
            "description": f"{finding.rule_id} {finding.message}" + (f" Fix: {help_text}" if help_text else ""),
            "check_name": f"{finding.rule_id} {finding.rule_name}",
            "fingerprint": fingerprint,
            "severity": SEVERITY.get(finding.level, "info"),
            "location": {"path": ident.file, "lines": {"begin": max(1, finding.location.line or 1)}},
        })
    return out


def render(report: Report, color: bool = False) -> str:
    return json.dumps(document(report), indent=2, ensure_ascii=False) + "\n"
