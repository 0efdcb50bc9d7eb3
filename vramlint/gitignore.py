"""What `.gitignore` leaves out of a walk (rendered output, vendored charts), as ruff and zizmor respect it.

Read only inside a git work tree (a folder holding `.git` at or above the walked folder), as git does: the
`.gitignore` of every folder from the repository root down, and `.git/info/exclude`. Patterns are matched with
`pathspec` (gitwildmatch patterns, negations and the last-match-wins order included); git itself is
never run, so nothing the repository configures (hooks, fsmonitor) can execute. A folder git ignores is not
entered, as git does not re-include files below an ignored folder. The global excludes file
(`core.excludesFile`) is the user's, not the repository's, and is not read.
"""

from __future__ import annotations

import os
from typing import Any

from vramlint.fsread import read_text

GITIGNORE = ".gitignore"


def repository_root(folder: str) -> str | None:
    """The folder holding `.git` at or above ``folder``, or None outside a git work tree."""
    current = os.path.abspath(folder)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


# Patterns of one ignore file vramlint applies. pathspec compiles them into one RE2 set: a thousand patterns
# such as `*a*a*a*a*a*a*a*a*a*a*b/**/x` exceed RE2's memory budget ("failed to compile Set") after seconds.
MAX_PATTERNS = 10_000


def _spec(path: str, unread: list[tuple[str, str]] | None = None, root: str | None = None) -> Any:
    if os.path.islink(path):
        # git (2.32 and later) does not follow a `.gitignore` that is a symbolic link; `info/exclude` is followed
        # only into the repository. Either may point out of the tree (to /etc/passwd, a runner's secret file).
        real = os.path.realpath(path)
        inside = root is not None and (real == root or real.startswith(root + os.sep))
        if os.path.basename(path) == GITIGNORE or not inside:
            if unread is not None and os.path.lexists(path):
                unread.append((path, "a symbolic link: not followed (git does not follow a .gitignore link), its "
                                     "patterns are not applied"))
            return None
    if not os.path.isfile(path):
        return None
    # bounded and never a FIFO (fsread); above the scanned folder too, as git reads the root's .gitignore
    text = read_text(path, check_inside=False, errors="replace")
    if not isinstance(text, str) or not text.strip():
        return None
    lines = text.splitlines()
    patterns = sum(1 for line in lines if line.strip() and not line.lstrip().startswith("#"))
    if patterns > MAX_PATTERNS:
        if unread is not None:
            unread.append((path, f"{patterns:,} patterns, more than vramlint applies ({MAX_PATTERNS:,}): not "
                                 "applied, the files it ignores are scanned"))
        return None
    import pathspec  # only when a .gitignore exists

    try:
        with _quiet_stderr():  # RE2 logs to the process's stderr while it simplifies some patterns
            return _compiled(pathspec, lines)
    except Exception as exc:  # noqa: BLE001 - pathspec or RE2 refusing the patterns must not stop the walk
        if unread is not None:
            detail = (str(exc).splitlines() or [type(exc).__name__])[0][:100]
            unread.append((path, f"its patterns could not be compiled ({detail}): not applied, the files it "
                                 "ignores are scanned"))
        return None


def _pattern_name(pathspec: Any) -> str:
    """pathspec 1.x names git's patterns `gitignore` and deprecates `gitwildmatch` (the only name in 0.12, same
    patterns): the name this pathspec has, so that a newer release that drops the old one keeps working."""
    try:
        pathspec.util.lookup_pattern("gitignore")
    except KeyError:
        return "gitwildmatch"
    return "gitignore"


def _compiled(pathspec: Any, lines: list[str]) -> Any:
    """One spec, or (when RE2 cannot hold them in one set: 3,000 plain patterns already fail) the lines cut in
    halves, in order, down to 64 lines a part; an error when even those fail."""
    try:
        # plain last-match-wins: GitIgnoreSpec lets a file pattern (`*`) outrank a later directory pattern
        # (`!*/`) on a folder, which git does not (the walk checks folders and files apart, and does not enter an
        # ignored folder, as git does not)
        return pathspec.PathSpec.from_lines(_pattern_name(pathspec), lines)
    except Exception:  # noqa: BLE001 - re2.error "failed to compile Set"
        if len(lines) <= 64:
            raise
    half = len(lines) // 2
    return _Parts([_compiled(pathspec, lines[:half]), _compiled(pathspec, lines[half:])])


class _Parts:
    """Specs of consecutive parts of one ignore file: the last part whose patterns match decides, as the last
    matching pattern of the whole file does for git."""

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts

    def check_file(self, rel: str) -> Any:
        decided = None
        for part in self.parts:
            result = part.check_file(rel)
            if result.include is not None:
                decided = result
        return decided if decided is not None else result


class _quiet_stderr:
    """File descriptor 2 sent to /dev/null for the duration (C++ logging that Python cannot turn off)."""

    def __enter__(self) -> None:
        self.saved = None
        try:
            import sys

            sys.stderr.flush()
            self.saved = os.dup(2)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)
            os.close(null)
        except (OSError, ValueError, AttributeError):
            self.saved = None

    def __exit__(self, *exc: Any) -> None:
        if self.saved is not None:
            os.dup2(self.saved, 2)
            os.close(self.saved)


class Ignored:
    """Answers "does git ignore this path?" for the paths of one walk, reading each `.gitignore` once."""

    def __init__(self, top: str) -> None:
        self.root = repository_root(top)
        self._specs: dict[str, Any] = {}  # absolute folder -> its .gitignore's spec (None: none)
        self.unread: list[tuple[str, str]] = []  # (ignore file, why it is not applied)
        if self.root is not None:
            self._specs[os.path.join(self.root, ".git", "info")] = _spec(
                os.path.join(self.root, ".git", "info", "exclude"), self.unread, os.path.realpath(self.root))

    def _folder_spec(self, folder: str) -> Any:
        if folder not in self._specs:
            self._specs[folder] = _spec(os.path.join(folder, GITIGNORE), self.unread)
        return self._specs[folder]

    def __call__(self, path: str, is_dir: bool) -> bool:
        if self.root is None:
            return False
        absolute = os.path.abspath(path)
        if not absolute.startswith(self.root + os.sep):
            return False
        # from the repository root down: a deeper .gitignore that matches (either way) decides
        verdict = None
        exclude = self._specs.get(os.path.join(self.root, ".git", "info"))
        folders = [self.root]
        rel_parts = os.path.relpath(absolute, self.root).split(os.sep)
        for part in rel_parts[:-1]:
            folders.append(os.path.join(folders[-1], part))
        specs = [(self.root, exclude)] + [(folder, self._folder_spec(folder)) for folder in folders]
        for folder, spec in specs:
            if spec is None:
                continue
            rel = os.path.relpath(absolute, folder).replace(os.sep, "/") + ("/" if is_dir else "")
            result = spec.check_file(rel)
            if result.include is not None:
                verdict = result.include
        return bool(verdict)
