"""SARIF 2.1.0, shaped for GitHub code scanning.

One run; ``tool.driver`` lists every rule (built-in, ``--rules-dir`` and vramlint's own VRL0xx/VRL1xx meta
rules) with its documentation as help text and markdown. Results point at repository-relative URIs under
``%SRCROOT%`` with full regions; ``partialFingerprints`` are keyed on rule, file and YAML path (not the line),
so an alert survives edits that move it. Suppressed findings are kept with ``suppressions`` (``inSource`` for
comments and annotations, ``external`` for the baseline).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from vramlint import __version__
from vramlint.report import INFORMATION_URI, TOOL_NAME, Report

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "vramlint/v1"
_PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}


def _artifact(file: str, root: str) -> dict:
    # a fresh dict each time (the caller may add to it), from the file's URI worked out once: every server and
    # finding of a file names it again (20,000 servers of one playbook: 20,000 abspath/relpath/quote of one name)
    key = (file, root, os.getcwd())  # a relative name is relative to the working folder of that moment
    found = _ARTIFACTS.get(key)
    if found is None:
        if len(_ARTIFACTS) >= 4096:
            _ARTIFACTS.clear()
        found = _ARTIFACTS[key] = _artifact_uri(file, root)
    uri, base = found
    return {"uri": uri, "uriBaseId": base} if base else {"uri": uri}


_ARTIFACTS: dict[tuple[str, str, str], tuple[str, str | None]] = {}


def _artifact_uri(file: str, root: str) -> tuple[str, str | None]:
    if file.startswith("<"):  # <stdin>: no file to point at; keep the name, relative to the root
        return quote(file.strip("<>")), SRCROOT
    absolute = os.path.abspath(file)
    rel = os.path.relpath(absolute, root)
    if rel == ".." or rel.startswith(".." + os.sep):
        return Path(absolute).as_uri(), None
    # the name's bytes: one that is not UTF-8 (surrogate escapes) is percent-encoded as it is on disk, as as_uri does
    return quote(os.fsencode(rel.replace(os.sep, "/"))), SRCROOT


def _paragraphs(doc: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", doc) if p.strip()]


def _descriptor(rule) -> dict:
    from vramlint.rule import rule_markdown

    paragraphs = _paragraphs(rule.doc)
    summary = rule.summary or (paragraphs[0] if paragraphs else rule.name)
    full = " ".join(paragraphs[1].split()) if len(paragraphs) > 1 and not paragraphs[1].startswith("```") else summary
    tags = ["vllm", "gpu-memory"]
    if rule.id >= "VRL100" and rule.id.startswith("VRL") or rule.id == "VRL000":
        tags = ["vramlint"]
    from vramlint.fixes import help_url

    url = help_url(rule)
    return {
        "id": rule.id,
        "name": rule.name,
        **({"helpUri": url} if url else {}),
        "shortDescription": {"text": summary[:1024]},
        "fullDescription": {"text": full[:1024]},
        "help": {"text": rule.doc, "markdown": rule_markdown(rule, heading="#")},
        "defaultConfiguration": {"level": rule.level},
        "properties": {
            "tags": tags,
            "precision": "high",
            "problem.severity": _PROBLEM_SEVERITY.get(rule.level, "warning"),
        },
    }


def _fix(fix, root: str) -> dict:
    """A SARIF fix: the edits grouped by file, each a deleted region and the text put in its place."""
    changes: dict[str, list] = {}
    for edit in fix.edits:
        changes.setdefault(edit.file, []).append({
            "deletedRegion": {"startLine": edit.line, "startColumn": edit.column, "endLine": edit.end_line,
                              "endColumn": edit.end_column},
            "insertedContent": {"text": edit.text},
        })
    return {
        "description": {"text": plain_message(fix.description
                                              + ("" if fix.safe else " (unsafe: applied with --unsafe-fixes)"))},
        "artifactChanges": [{"artifactLocation": _artifact(file, root), "replacements": replacements}
                            for file, replacements in changes.items()],
    }


def _region(finding, report: Report) -> dict:
    loc = finding.location
    start_line = max(1, loc.line)
    start_col = max(1, loc.column)
    if loc.end_line is not None and loc.end_column is not None:
        end_line, end_col = loc.end_line, loc.end_column
    else:
        # No span known: the rest of the line, so the annotation underlines what is written there.
        end_line = start_line
        lines = report.read_lines(loc.file) or []
        text = lines[start_line - 1] if 0 < start_line <= len(lines) else ""
        end_col = max(start_col + 1, len(text.rstrip()) + 1)
    if (end_line, end_col) < (start_line, start_col):
        end_line, end_col = start_line, start_col + 1
    return {"startLine": start_line, "startColumn": start_col, "endLine": end_line, "endColumn": end_col}


def _fingerprint(finding, root: str) -> str:
    file = finding.location.file
    rel = file if file.startswith("<") else os.path.relpath(os.path.abspath(file), root).replace(os.sep, "/")
    anchor = finding.location.yaml_path or f"message:{finding.message}"
    return hashlib.sha256(f"{finding.rule_id}\0{rel}\0{anchor}".encode("utf-8", "surrogatepass")).hexdigest()


def _server_location(where: str, root: str) -> dict:
    file, _, line = where.rpartition(":")
    region = {"startLine": int(line)} if line.isdigit() and int(line) > 0 else {}
    location = {"artifactLocation": _artifact(file or where, root)}
    if region:
        location["region"] = region
    return {"physicalLocation": location}


_BRACKET_OR_ITS_ESCAPE = re.compile(r"\\*[\[\]]")


def plain_message(text: str) -> str:
    """A message's text as SARIF's plain text: ``[text](target)`` there is an embedded link (SARIF 2.1.0, 3.11.6,
    "Messages with embedded links"; viewers such as GitHub code scanning render it), so the literal brackets a
    message quotes from a scanned file (a model name written as a markdown link) are escaped with a backslash, and
    a backslash written before one is escaped too."""
    if "[" not in text and "]" not in text:
        return text
    return _BRACKET_OR_ITS_ESCAPE.sub(lambda m: "\\" * (2 * len(m.group(0)) - 1) + m.group(0)[-1], text)


def _results(report: Report, root: str, index: dict[str, int]) -> Any:
    """The SARIF results, one at a time (a run of 17,500 findings is never held whole as dicts)."""
    occurrences: dict[str, int] = {}
    for finding in report.findings:
        digest = _fingerprint(finding, root)
        occurrences[digest] = occurrences.get(digest, 0) + 1
        n = occurrences[digest]
        result = {
            "ruleId": finding.rule_id,
            "ruleIndex": index[finding.rule_id],
            "level": finding.level,
            "message": {"text": plain_message(finding.message)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _artifact(finding.location.file, root),
                        "region": _region(finding, report),
                    }
                }
            ],
            "partialFingerprints": {
                FINGERPRINT_KEY: f"{digest}:{n}",
                # GitHub matches alerts on this key only; ours ignores line numbers on purpose.
                "primaryLocationLineHash": f"{digest[:16]}:{n}",
            },
        }
        if finding.location.yaml_path:
            result["locations"][0]["logicalLocations"] = [
                {"fullyQualifiedName": finding.location.yaml_path, "kind": "object"}
            ]
        if finding.suppressed:
            suppression = {"kind": "external" if finding.suppression == "baseline" else "inSource"}
            if finding.justification:
                suppression["justification"] = finding.justification
            result["suppressions"] = [suppression]
        if finding.fix is not None and finding.fix.edits:
            result["fixes"] = [_fix(finding.fix, root)]
        if finding.related:
            result["relatedLocations"] = [
                {"id": i, "physicalLocation": {"artifactLocation": _artifact(r.file, root),
                                               "region": {"startLine": r.line, "startColumn": r.column}}}
                for i, r in enumerate(finding.related, 1)
            ]
        props = {}
        if finding.server_key:
            props["server"] = finding.server_key
        if props:
            result["properties"] = props
        yield result


def document(report: Report, _streamed: bool = False) -> dict:
    root = os.path.abspath(report.source_root)
    rules = list(report.rules)
    known = {r.id for r in rules}
    # A finding of a rule missing from the list (should not happen) still gets a descriptor.
    for finding in report.findings:
        if finding.rule_id not in known:
            from vramlint.rule import Rule

            rules.append(Rule(finding.rule_id, finding.rule_name, finding.level, {}, finding.rule_name,
                              finding.rule_name, None, None, ""))
            known.add(finding.rule_id)
    rules.sort(key=lambda r: r.id)
    index = {r.id: i for i, r in enumerate(rules)}
    results = _RESULTS_MARK if _streamed else list(_results(report, root, index))
    notifications = [
        {
            "level": "note",
            "message": {"text": plain_message(f"skipped: {s.reason}")},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(s.file, root)}}],
        }
        for s in report.skipped
    ]
    for group in report.unchecked:  # said once per cause, with the servers it concerns
        notifications.append({
            "level": "note",
            "message": {"text": plain_message(group.text())},
            "associatedRule": {"id": "VRL010"},
            "locations": [_server_location(where, root) for where in group.servers],
        })
    invocation = {
        "executionSuccessful": report.exit_status in (0, 1),
        "workingDirectory": {"uri": Path(os.getcwd()).as_uri() + "/"},
    }
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": [_descriptor(r) for r in rules],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path(root).as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [invocation],
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(report: Report, color: bool = False) -> str:
    return "".join(render_parts(report))


# Where the results go in the document that render_parts writes around them: a string no result holds (NUL).
_RESULTS_MARK = "\0results\0"
_RESULTS_INDENT = " " * 8  # runs[0].results[i]


def render_parts(report: Report) -> Any:
    """The document's text (json.dumps(indent=2)'s), a result at a time: the document around the results is
    written first, then each result as soon as it is made, its dict then dropped."""
    # json.dumps(indent=2)'s text, without the standard library's Python generators (17,500 results: 10 s)
    from vramlint.report.json import _encoder

    encode = _encoder()
    around = document(report, _streamed=True)
    root = os.path.abspath(report.source_root)
    index = {r["id"]: i for i, r in enumerate(around["runs"][0]["tool"]["driver"]["rules"])}
    head, tail = encode(around, "").split(encode(_RESULTS_MARK, _RESULTS_INDENT), 1)
    yield head
    empty = True
    for result in _results(report, root, index):
        yield ("[\n" if empty else ",\n") + _RESULTS_INDENT + encode(result, _RESULTS_INDENT)
        empty = False
    yield ("[]" if empty else "\n" + " " * 6 + "]") + tail + "\n"
