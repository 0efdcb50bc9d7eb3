"""JSON report: the ``explain`` contract (each server with its budget) plus every finding.

Top level: ``version``, ``tool``, ``servers`` (``Assessment.to_json()`` each, with the keys of its
``findings``), ``findings`` (``Finding.to_json()``, suppressed ones included with their justification; ``fix``
when the rule computed one, ``help_url`` for vramlint's own rules),
``problems``, ``skipped``, ``summary``.
"""

from __future__ import annotations

import json
from typing import Any

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
    by_server = report.findings_of_servers()
    servers = []
    budgets: dict[int, Any] = {}  # one conversion of a budget that servers share, for this document
    for assessment in report.assessments:
        item = assessment.to_json(budgets)
        item["findings"] = [_finding(f, rules) for f in by_server.get(id(assessment.server), [])]
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
    doc = document(report)
    # Servers that share a budget (see assess._budget) share its JSON object: it is written once and copied into
    # place (json's indenting encoder is pure Python, and a budget is most of a server's entry). The placeholder
    # holds a nonce, so no text of the scanned files can stand for it.
    import secrets

    nonce = secrets.token_hex(8)
    written: dict[int, tuple[str, str]] = {}  # id(budget JSON) -> (placeholder as json writes it, budget text)
    servers = []
    for item in doc["servers"]:
        budget = item.get("budget")
        if isinstance(budget, dict):
            if id(budget) not in written:
                holder = json.dumps(f"\ue000vramlint-budget-{nonce}-{len(written)}\ue000")
                text = dumps_indented(budget).replace("\n", "\n" + " " * 6)  # at servers[i]
                written[id(budget)] = (holder, text)
            item = dict(item, budget=json.loads(written[id(budget)][0]))
        servers.append(item)
    out = dumps_indented(dict(doc, servers=servers))
    for holder, text in written.values():
        out = out.replace(holder, text)
    return out + "\n"


def dumps_indented(obj: Any) -> str:
    """``json.dumps(obj, indent=2, default=str)``, the same text, about twice as fast: the standard library's
    indenting encoder is pure Python (generators per value); this one joins strings and leaves scalars to the
    C functions json itself uses. Anything it does not know (a type ``default=str`` would convert, a float
    subclass) is handed to json.dumps as it is."""
    from json.encoder import encode_basestring_ascii as quote

    float_repr = float.__repr__
    int_repr = int.__repr__

    def scalar(o: Any) -> str:
        if o is None:
            return "null"
        if o is True:
            return "true"
        if o is False:
            return "false"
        if isinstance(o, int):
            return int_repr(o)
        if isinstance(o, float):
            if o != o:
                return "NaN"
            if o == float("inf"):
                return "Infinity"
            if o == -float("inf"):
                return "-Infinity"
            return float_repr(o)
        raise TypeError

    def key_text(k: Any) -> str:
        if isinstance(k, str):
            return quote(k)
        return quote(scalar(k))  # json writes int, float, bool and None keys as their JSON text, quoted

    def enc(o: Any, indent: str) -> str:
        if isinstance(o, str):
            return quote(o)
        if isinstance(o, dict):
            if not o:
                return "{}"
            inner = indent + "  "
            sep = ",\n" + inner
            return "{\n" + inner + sep.join(key_text(k) + ": " + enc(v, inner) for k, v in o.items()) + "\n" \
                + indent + "}"
        if isinstance(o, (list, tuple)):
            if not o:
                return "[]"
            inner = indent + "  "
            sep = ",\n" + inner
            return "[\n" + inner + sep.join(enc(v, inner) for v in o) + "\n" + indent + "]"
        try:
            return scalar(o)
        except TypeError:
            pass
        return _with_indent(json.dumps(o, indent=2, default=str), indent)

    return enc(obj, "")


def _with_indent(text: str, indent: str) -> str:
    return text.replace("\n", "\n" + indent) if indent else text
