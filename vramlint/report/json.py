"""JSON report: the ``explain`` contract (each server with its budget) plus every finding.

Top level: ``version``, ``tool``, ``servers`` (``Assessment.to_json()`` each, with the keys of its
``findings``), ``findings`` (``Finding.to_json()``, suppressed ones included with their justification; ``fix``
when the rule computed one, ``help_url`` for vramlint's own rules),
``problems``, ``skipped``, ``summary``.
"""

from __future__ import annotations

import json

from vramlint import __version__
from vramlint.report import TOOL_NAME, Report

JSON_VERSION = 1


def _finding(finding, rules: dict) -> dict:
    from vramlint.fixes import help_url

    out = finding.to_json()
    url = help_url(rules.get(finding.rule_id))
    if url:
        out["help_url"] = url
    return out


def document(report: Report) -> dict:
    rules = {r.id: r for r in report.rules}
    by_server = report.findings_by_server()
    servers = []
    for assessment in report.assessments:
        item = assessment.to_json()
        item["findings"] = [_finding(f, rules) for f in by_server.get(assessment.server.key, [])]
        servers.append(item)
    counts = report.counts()
    return {
        "version": JSON_VERSION,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "servers": servers,
        "findings": [_finding(f, rules) for f in report.findings],
        "problems": [p.to_json() for p in report.problems],
        "skipped": [s.to_json() for s in report.skipped],
        "summary": {
            "files_scanned": report.files_scanned,
            "servers": len(report.assessments),
            "findings": sum(counts.values()),
            "by_level": counts,
            "suppressed": len(report.suppressed),
            "fail_on": report.fail_on,
            "exit_status": report.exit_status,
            "config_file": report.config_file,
            "baseline_file": report.baseline_file,
            # servers without a budget, by cause, each with the one change that fixes it (said once, not per server)
            "unchecked": [group.to_json() for group in report.unchecked],
        },
    }


def render(report: Report, color: bool = False) -> str:
    return json.dumps(document(report), indent=2, default=str) + "\n"
