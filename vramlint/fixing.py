"""`vramlint check --fix / --diff`: apply the findings' fixes to the files (or print them as a diff).

Only the edited spans change; the rest of each file stays byte for byte (the text is decoded without newline
translation and written back as UTF-8, so comments, quoting, indentation and CRLF endings are kept). Fixes are
taken in the order of the findings; a fix whose edits overlap an edit already taken in that file is skipped,
and said (the re-check after ``--fix`` reports its finding again, with its fix). An edit identical to one
already taken is the same change (two engines' findings of VRL007 both set both utilisations): taken once.
"""

from __future__ import annotations

import difflib
from dataclasses import field

from vramlint.fixes import edit_range, file_text
from vramlint.lean_dataclass import dataclass
from vramlint.textsafe import eprint, escape_name, safe_output


@dataclass
class FixRun:
    """What applying the fixes did."""

    fixes_applied: int = 0  # findings whose fix was applied
    skipped_unsafe: int = 0  # findings whose fix is unsafe, without --unsafe-fixes
    skipped_overlap: list[str] = field(default_factory=list)  # why a fix was not applied (overlapping edits)
    without_edits: int = 0  # findings whose fix has no edits (advice, or vramlint cannot write it exactly)
    files: list[str] = field(default_factory=list)  # files changed (or that would change)
    diff: str = ""
    escaped_lines: int = 0  # lines of the diff shown escaped (control characters, workflow commands)

    def summary(self, dry_run: bool) -> str:
        verb = "would fix" if dry_run else "fixed"
        text = (f"vramlint: {verb} {self.fixes_applied} finding(s) in {len(self.files)} file(s)")
        extra = []
        if self.skipped_unsafe:
            extra.append(f"{self.skipped_unsafe} more with --unsafe-fixes")
        if self.without_edits:
            extra.append(f"{self.without_edits} with a fix vramlint cannot write (see each finding's fix)")
        if self.skipped_overlap:
            extra.append(f"{len(self.skipped_overlap)} skipped because their edits overlap another fix")
        if self.escaped_lines:
            extra.append(f"{self.escaped_lines} line(s) of the diff shown escaped (control characters, or text a CI "
                         "runner reads as a workflow command): the patch does not apply as printed at those lines")
        return text + (f"; {', '.join(extra)}" if extra else "")


def apply_fixes(findings, unsafe: bool = False, write: bool = True, skip: set[str] | frozenset = frozenset()) -> FixRun:
    """Apply (``write``) or diff the fixes of the unsuppressed findings; returns what was done."""
    from vramlint.fixes import apply_edits

    run = FixRun()
    taken: dict[str, list[tuple[int, int, str]]] = {}  # file -> accepted (start, end, text)
    chosen: dict[str, list] = {}
    for finding in findings:
        fix = finding.fix
        if fix is None or finding.suppressed:
            continue
        if not fix.edits:
            run.without_edits += 1
            continue
        if not fix.safe and not unsafe:
            run.skipped_unsafe += 1
            continue
        if any(e.file in skip for e in fix.edits):
            continue
        new: list[tuple[str, tuple[int, int, str], object]] = []
        clash = None
        for edit in fix.edits:
            text = file_text(edit.file)
            if text is None:
                clash = f"{edit.file} cannot be read as UTF-8 text"
                break
            start, end = edit_range(text, edit)
            span = (start, end, edit.text)
            if span in taken.get(edit.file, []) or any(span == s for _, s, _ in new):
                continue
            for other in taken.get(edit.file, []) + [s for f, s, _ in new if f == edit.file]:
                if _overlap(span, other):
                    clash = f"{edit.file}:{edit.line}: overlaps another fix in this file"
                    break
            if clash:
                break
            new.append((edit.file, span, edit))
        if clash:
            run.skipped_overlap.append(f"{finding.rule_id} at {finding.location.file}:{finding.location.line}: {clash}")
            continue
        for file, span, edit in new:
            taken.setdefault(file, []).append(span)
            chosen.setdefault(file, []).append(edit)
        run.fixes_applied += 1
    for why in run.skipped_overlap:
        eprint(f"vramlint: fix not applied: {why}")
    for file, edits in chosen.items():
        before = file_text(file)
        if before is None:
            continue
        after = apply_edits(before, edits)
        if after == before:
            continue
        run.files.append(file)
        if write:
            with open(file, "wb") as fh:
                fh.write(after.encode("utf-8"))
        else:
            # the name shown as every report shows it: a newline in it cannot make a line of its own
            shown = escape_name(file)
            run.diff += "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                                     fromfile=f"a/{shown}", tofile=f"b/{shown}"))
    if run.diff:
        # the diff is printed to a terminal or a CI log: the file's own text in it (context lines, the lines
        # changed) cannot colour the terminal or start a workflow command; such lines are shown escaped, and then
        # the patch does not apply as printed there, which stderr says
        safe = safe_output(run.diff)
        if safe != run.diff:
            run.escaped_lines = sum(a != b for a, b in zip(run.diff.split("\n"), safe.split("\n"), strict=True))
            run.diff = safe
    return run


def _overlap(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    """Two spans overlap; two insertions at the same point do too (their order would be a guess)."""
    if a[0] == a[1] and b[0] == b[1]:
        return a[0] == b[0]
    return a[0] < b[1] and b[0] < a[1] or (a[0] == a[1] and b[0] < a[0] < b[1]) or (b[0] == b[1] and a[0] < b[0] < a[1])
