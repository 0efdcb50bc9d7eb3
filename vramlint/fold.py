"""Identical advice is said once a run: one finding naming every place it applies to, not one copy per file.

Twelve benchmark configs that each say `engine: vllm` in a shape vramlint does not read got twelve VRL102 notes
with the same text; five compose files without their `.env` five more; the same operator note (KubeAI's chart
picks the image) repeated on every Model. Such a note says nothing particular to its line, so it is said once: the
first place carries it with the count, and the other places are its related locations (listed in the message, in
JSON's `related_locations`, in SARIF's `relatedLocations`), so every file is still named with the reason.

Only advice is folded: notes of VRL102 (input read with a caveat) and VRL103 (what a server's files leave to the
cluster or an operator). A defect on a line (a flag the version refuses, a /dev/shm too small) stays on its line
however many files have it: each is a line to change. Folding runs after suppressions and the baseline, so a
place suppressed in source or in the baseline is neither said nor named.
"""

from __future__ import annotations

from vramlint.model import Finding

FOLDED_RULES = ("VRL102", "VRL103")
SHOWN_PLACES = 10  # places written out in the message; all of them are related locations


def fold_repeated(findings: list[Finding]) -> list[Finding]:
    """``findings`` with each advice text said at two or more places kept once, on its first place (in the order
    given, which is by file and line), naming the others; everything else as it was, in the same order."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        if _foldable(finding):
            groups.setdefault((finding.rule_id, finding.advice or finding.message), []).append(finding)
    dropped: set[int] = set()
    for (_rule, advice), group in groups.items():
        if len(group) < 2:
            continue
        carrier, others = group[0], group[1:]
        places = [f.location for f in group]
        shown = ", ".join(f"{p.file}:{p.line}" if p.line else p.file for p in places[:SHOWN_PLACES])
        more = f" and {len(places) - SHOWN_PLACES} more" if len(places) > SHOWN_PLACES else ""
        files = len({p.file for p in places})
        counted = f"{len(places)} places in {files} files" if files != len(places) else f"{len(places)} files"
        carrier.message = f"{advice} (said once for {counted}: {shown}{more})"
        carrier.summary = None
        carrier.related = [*carrier.related, *(f.location for f in others)]
        dropped.update(id(f) for f in others)
    if not dropped:
        return findings
    return [f for f in findings if id(f) not in dropped]


def _foldable(finding: Finding) -> bool:
    return (finding.rule_id in FOLDED_RULES and finding.level == "note" and not finding.suppressed
            and finding.fix is None)
