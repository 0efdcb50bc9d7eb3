"""Baselines: accept today's findings, report only new ones.

``--write-baseline FILE`` records the active findings; ``--baseline FILE`` marks the findings it records as
suppressed (kind "baseline"). A finding is identified by its rule, its file and its YAML path -- never its line,
so edits elsewhere in a file do not bring old findings back. Paths are stored relative to the baseline file's
folder, so the same baseline works from any working directory. When several findings share an identity (one
rule on one key of several servers), the baseline records how many, and only that many are matched.

The file is JSON::

    {"version": 1, "tool": "vramlint", "findings": [
        {"rule": "VRL001", "name": "...", "file": "deploy/vllm.yaml", "yaml_path": "spec...args[1]",
         "count": 1, "message": "..."}]}

(``message`` is for people reading the file; it is not matched, since numbers in messages change with
versions of the budget engine.)
"""

from __future__ import annotations

import json
import os
from collections import Counter

from vramlint.lean_dataclass import dataclass
from vramlint.model import Finding

BASELINE_VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read (exit status 2)."""


@dataclass(frozen=True)
class Identity:
    rule: str
    file: str  # relative to the baseline's folder, forward slashes
    yaml_path: str  # or, for findings without one (input errors), "message:" + the message


def _relative(file: str, base_dir: str) -> str:
    if file.startswith("<"):  # <stdin>
        return file
    try:
        rel = os.path.relpath(os.path.abspath(file), os.path.abspath(base_dir))
    except ValueError:
        rel = os.path.abspath(file)
    return rel.replace(os.sep, "/")


def identity(finding: Finding, base_dir: str) -> Identity:
    path = finding.location.yaml_path or f"message:{finding.message}"
    return Identity(finding.rule_id, _relative(finding.location.file, base_dir), path)


def write_baseline(path: str, findings: list[Finding]) -> int:
    """Write the findings that are not suppressed in source (comments, annotations); returns how many."""
    base_dir = os.path.dirname(os.path.abspath(path))
    counts: Counter[Identity] = Counter()
    sample: dict[Identity, Finding] = {}
    for finding in findings:
        if finding.suppressed and finding.suppression != "baseline":
            continue
        key = identity(finding, base_dir)
        counts[key] += 1
        sample.setdefault(key, finding)
    entries = []
    for key in sorted(counts, key=lambda k: (k.file, k.yaml_path, k.rule)):
        entry = {"rule": key.rule, "name": sample[key].rule_name, "file": key.file}
        if key.yaml_path.startswith("message:"):
            entry["message"] = key.yaml_path[len("message:") :]
        else:
            entry["yaml_path"] = key.yaml_path
            entry["message"] = sample[key].message
        entry["count"] = counts[key]
        entries.append(entry)
    document = {"version": BASELINE_VERSION, "tool": "vramlint", "findings": entries}
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(document, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)
    return sum(counts.values())


MAX_BASELINE_BYTES = 64 * 2**20  # a baseline of a very large repository is a few megabytes


def read_baseline(path: str) -> Counter[Identity]:
    """The identities recorded in a baseline file, with their counts."""
    from vramlint.fsread import Refusal, read_text

    # named by the user, so not confined to the scanned paths; but a regular file of bounded size
    text = read_text(path, limit=MAX_BASELINE_BYTES, check_inside=False)
    if isinstance(text, Refusal):
        if text.missing:
            raise BaselineError(f"{path}: baseline file not found (create it with --write-baseline {path})")
        raise BaselineError(f"{path}: cannot read baseline: {text.reason}")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}:{exc.colno}: not a JSON baseline: {exc.msg}") from exc
    except RecursionError:
        # a baseline is two levels deep; one in the repository a pull request changes can be 100,000
        raise BaselineError(f"{path}: not a JSON baseline: nested deeper than Python's JSON reader goes") from None
    if not isinstance(document, dict) or "version" not in document:
        raise BaselineError(f"{path}: not a vramlint baseline (no \"version\" key)")
    if document["version"] != BASELINE_VERSION:
        raise BaselineError(
            f"{path}: baseline version {repr(document['version'])[:40]} is not supported (this vramlint reads version "
            f"{BASELINE_VERSION}); write it again with --write-baseline"
        )
    entries = document.get("findings")
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: \"findings\" must be a list")
    out: Counter[Identity] = Counter()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("rule"), str) or not isinstance(
            entry.get("file"), str
        ):
            raise BaselineError(f"{path}: findings[{index}] needs \"rule\" and \"file\" strings")
        if isinstance(entry.get("yaml_path"), str):
            yaml_path = entry["yaml_path"]
        elif isinstance(entry.get("message"), str):
            yaml_path = "message:" + entry["message"]
        else:
            raise BaselineError(f"{path}: findings[{index}] needs \"yaml_path\" (or \"message\")")
        count = entry.get("count", 1)
        if not isinstance(count, int) or count < 1:
            raise BaselineError(f"{path}: findings[{index}].count must be a positive integer")
        out[Identity(entry["rule"], entry["file"], yaml_path)] += count
    return out


def apply_baseline(path: str, findings: list[Finding]) -> int:
    """Mark the findings recorded in the baseline ``path`` as suppressed; returns how many were matched."""
    recorded = read_baseline(path)
    base_dir = os.path.dirname(os.path.abspath(path))
    shown = path.replace(os.sep, "/")
    matched = 0
    for finding in findings:
        if finding.suppressed:
            continue
        key = identity(finding, base_dir)
        if recorded.get(key, 0) > 0:
            recorded[key] -= 1
            finding.suppressed = True
            finding.suppression = "baseline"
            finding.justification = f"in baseline {shown}"
            matched += 1
    return matched
