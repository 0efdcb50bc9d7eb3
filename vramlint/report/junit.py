"""JUnit XML report, for CI systems that show test results (GitLab, Jenkins, Azure DevOps, CircleCI).

One ``<testsuite>`` per scanned file that has a server or a finding; in it one ``<testcase>`` per active
finding (a ``<failure>`` when the finding reaches ``--fail-on``, else its text in ``<system-out>``; the text
ends with a ``help:`` line with the fix, as the text report says it) and one
passing ``<testcase>`` per server with no finding, so a clean run still lists what was checked. Built with
xml.etree, which escapes text and attributes; control characters XML cannot carry are shown escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from vramlint.report import Report

LEVEL_RANK = {"note": 0, "warning": 1, "error": 2}
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: object) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def _fails(level: str, fail_on: str) -> bool:
    return fail_on != "never" and LEVEL_RANK.get(level, 0) >= LEVEL_RANK.get(fail_on, 2)


def render(report: Report, color: bool = False) -> str:
    from vramlint.report.text import fix_help

    files: dict[str, list] = {}
    for finding in report.active:
        files.setdefault(finding.location.file, []).append(("finding", finding))
    with_findings = {f.server_key for f in report.active if f.server_key}
    for assessment in report.assessments:
        server = assessment.server
        if server.key not in with_findings:
            files.setdefault(server.file, []).append(("server", server))
    root = ET.Element("testsuites", name="vramlint")
    total = failed = 0
    for file in sorted(files):
        suite = ET.SubElement(root, "testsuite", name=_text(file))
        suite_failures = 0
        for kind, item in files[file]:
            case = ET.SubElement(suite, "testcase", classname=_text(file))
            if kind == "server":
                loc = item.location
                case.set("name", _text(f"{loc.yaml_path or 'server'} (line {loc.line}): all checks passed"))
            else:
                loc = item.location
                case.set("name", _text(f"{item.rule_id} {item.rule_name} at {file}:{loc.line}:{loc.column}"))
                case.set("file", _text(file))
                case.set("line", str(loc.line or 1))
                text = f"{file}:{loc.line}:{loc.column}: {item.rule_id} [{item.level}] {item.message}"
                help_text = fix_help(item)
                text = _text(text + (f"\nhelp: {help_text}" if help_text else ""))
                if _fails(item.level, report.fail_on):
                    failure = ET.SubElement(case, "failure", message=_text(item.message), type=item.rule_id)
                    failure.text = text
                    suite_failures += 1
                else:
                    ET.SubElement(case, "system-out").text = text
        suite.set("tests", str(len(files[file])))
        suite.set("failures", str(suite_failures))
        suite.set("errors", "0")
        total += len(files[file])
        failed += suite_failures
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("errors", "0")
    if report.elapsed_s is not None:
        root.set("time", f"{report.elapsed_s:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
