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
    servers, _budgets = _server_items(report)
    return _document(report, list(servers))


def _server_items(report: Report) -> tuple[Any, dict[Any, Any]]:
    """Each server's JSON (``Assessment.to_json()`` with its findings), made when asked for; the budgets they
    share, by id (filled as the servers are made)."""
    rules = {r.id: r for r in report.rules}
    by_server = report.findings_of_servers()
    budgets: dict[Any, Any] = {}  # one conversion of a budget (or GPU requirement) servers share, for this document

    def items() -> Any:
        for assessment in report.assessments:
            item = assessment.to_json(budgets)
            item["findings"] = [_finding(f, rules) for f in by_server.get(id(assessment.server), [])]
            yield item

    return items(), budgets


def _document(report: Report, servers: Any) -> dict:
    rules = {r.id: r for r in report.rules}
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
    """``dumps_indented(document(report))``, the same text."""
    return "".join(render_parts(report))


def render_parts(report: Report) -> Any:
    """`render`'s text in pieces, each server's as soon as it is made, its dict then dropped: a report of 10,000
    servers is never held whole, neither as dicts nor as text. A budget that servers share (see assess._budget)
    is written once and its text reused. Every piece is whole JSON values and separators (no string is cut)."""
    servers, budgets = _server_items(report)
    shared: set[int] = set()  # ids of the budgets' JSON objects, alive in ``budgets`` while this runs
    encode = _encoder(shared)
    server_indent = " " * 4  # servers[i] in the top-level object
    yield "{\n"
    for i, (key, value) in enumerate(_document(report, None).items()):
        yield ("  " if not i else ",\n  ") + _quote(key) + ": "
        if key != "servers":
            yield encode(value, "  ")
            continue
        empty = True
        for item in servers:
            for key in ("budget", "gpu_requirement"):
                part = item.get(key)
                if isinstance(part, dict):
                    shared.add(id(part))
            # a shared budget's text is a piece of its own (`SharedText`, the same object each time): the writer
            # makes it safe for a CI log once, not once per server
            pieces = encode.pieces(item, server_indent)
            pieces[0] = ("[\n" if empty else ",\n") + server_indent + pieces[0]
            yield from pieces
            empty = False
        yield "[]" if empty else "\n  ]"
    yield "\n}\n"
    del budgets


def dumps_indented(obj: Any) -> str:
    """``json.dumps(obj, indent=2, default=str)``, the same text, about twice as fast: the standard library's
    indenting encoder is pure Python (generators per value); this one joins strings and leaves scalars to the
    C functions json itself uses. Anything it does not know (a type ``default=str`` would convert, a float
    subclass) is handed to json.dumps as it is."""
    return _encoder()(obj, "")


def _quote(text: str) -> str:
    from json.encoder import encode_basestring_ascii

    return encode_basestring_ascii(text)


class SharedText(str):
    """The text of a dict that stands in many places of a report (a budget servers share), written once by
    `_encoder` and handed out as this same object wherever it stands."""


def _encoder(shared: set[int] | None = None) -> Any:
    """The function writing a value at an indentation (`dumps_indented`'s). ``shared``: ids of dicts that stand
    in many places (a budget's JSON, alive while the encoder is used): each is written once per indentation and
    its text reused."""
    from json.encoder import encode_basestring_ascii as quote

    float_repr = float.__repr__
    int_repr = int.__repr__
    written: dict[tuple[int, str], str] = {}

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
            if shared and id(o) in shared:
                text = written.get((id(o), indent))
                if text is not None:
                    return text
            inner = indent + "  "
            parts = []
            add = parts.append
            for k, v in o.items():
                # the most common values written here, as `enc` writes them, without a call for each
                cls = v.__class__
                if cls is str:
                    v = quote(v)
                elif v is None:
                    v = "null"
                elif cls is int:
                    v = int_repr(v)
                elif v is True:
                    v = "true"
                elif v is False:
                    v = "false"
                else:
                    v = enc(v, inner)
                add((quote(k) if k.__class__ is str else key_text(k)) + ": " + v)
            text = "{\n" + inner + (",\n" + inner).join(parts) + "\n" + indent + "}"
            if shared and id(o) in shared:
                text = written[(id(o), indent)] = SharedText(text)
            return text
        if isinstance(o, (list, tuple)):
            if not o:
                return "[]"
            inner = indent + "  "
            sep = ",\n" + inner
            return "[\n" + inner + sep.join(quote(v) if v.__class__ is str else enc(v, inner) for v in o) + "\n" \
                + indent + "]"
        try:
            return scalar(o)
        except TypeError:
            pass
        return _with_indent(json.dumps(o, indent=2, default=str), indent)

    def pieces(o: dict, indent: str) -> list[str]:
        """``enc(o, indent)`` (a dict with keys) as pieces whose concatenation it is: each shared dict among its
        values is a piece of its own, its `SharedText`."""
        inner = indent + "  "
        out = ["{\n" + inner]
        for i, (k, v) in enumerate(o.items()):
            head = ("" if not i else ",\n" + inner) + (quote(k) if k.__class__ is str else key_text(k)) + ": "
            text = enc(v, inner)
            if text.__class__ is SharedText:
                out[-1] += head
                out += [text, ""]
            else:
                out[-1] += head + text
        out[-1] += "\n" + indent + "}"
        return [piece for piece in out if piece]

    enc.pieces = pieces  # type: ignore[attr-defined]
    return enc


def _with_indent(text: str, indent: str) -> str:
    return text.replace("\n", "\n" + indent) if indent else text
