"""Identical advice is said once a run: one finding naming every place it applies to, not one copy per file.

Twelve benchmark configs that each say `engine: vllm` in a shape vramlint does not read got twelve VRL102 notes
with the same text; five compose files without their `.env` five more; the same operator note (KubeAI's chart
picks the image) repeated on every Model. Such a note says nothing particular to its line, so it is said once: the
first place carries it with the count, and the other places are its related locations (listed in the message, in
JSON's `related_locations`, in SARIF's `relatedLocations`), so every file is still named with the reason.

Only advice is folded: notes of VRL102 (input read with a caveat) and VRL103 (what a server's files leave to the
cluster or an operator), and the findings a rule marks ``shared``: an unknown several servers share word for word
(a flag the assumed vLLM version does not know, VRL009's warning that ends "set vllm-version"; what a command line
leaves to run time, VRL010) or advice about their GPU (VRL004's note that it cannot run FlashAttention). Those are
said on the first server with "and N more servers: ..." naming the others, and their fixes (one edit per place)
are joined into one. A defect on a line (a flag the version refuses, a /dev/shm too small) stays on its line
however many files have it: each is a line to change. Folding runs after suppressions, the baseline and `--fix`,
so a place suppressed in source or in the baseline is neither said nor named, and each place is fixed on its own.
"""

from __future__ import annotations

from vramlint.model import Finding, Fix

FOLDED_RULES = ("VRL102", "VRL103")
SHOWN_PLACES = 10  # places written out in the message; all of them are related locations


def fold_repeated(findings: list[Finding]) -> list[Finding]:
    """``findings`` with each advice text said at two or more places kept once, on its first place (in the order
    given, which is by file and line), naming the others; everything else as it was, in the same order."""
    groups: dict[tuple[str, str, str, bool], list[Finding]] = {}
    for finding in findings:
        if _foldable(finding):
            key = (finding.rule_id, finding.level, finding.advice or finding.message, finding.shared)
            groups.setdefault(key, []).append(finding)
    dropped: set[int] = set()
    for (_rule, _level, advice, shared), group in groups.items():
        if len(group) < 2:
            continue
        carrier, others = group[0], group[1:]
        places = [f.location for f in group]
        if shared:
            _fold_shared(carrier, others)
            dropped.update(id(f) for f in others)
            continue
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


def _fold_shared(carrier: Finding, others: list[Finding]) -> None:
    """``carrier`` said for the other servers too: named in its message and as related locations, their edits
    joined to its fix."""
    places = [f.location for f in others]
    shown = ", ".join(f"{p.file}:{p.line}" for p in places[:SHOWN_PLACES])
    more = f", ... ({len(places) - SHOWN_PLACES} not shown)" if len(places) > SHOWN_PLACES else ""
    carrier.message = f"{carrier.message} (and {len(places)} more server{'s' if len(places) > 1 else ''}: " \
                      f"{shown}{more})"
    carrier.related = [*carrier.related, *places]
    fixes = [f.fix for f in (carrier, *others) if f.fix is not None]
    if fixes and carrier.fix is not None:
        edits = [e for fix in fixes for e in fix.edits]
        carrier.fix = Fix(carrier.fix.description, all(fix.safe for fix in fixes), edits,
                          None if edits else carrier.fix.reason)


def _foldable(finding: Finding) -> bool:
    if finding.suppressed:
        return False
    if finding.shared:
        return True
    return finding.rule_id in FOLDED_RULES and finding.level == "note" and finding.fix is None
