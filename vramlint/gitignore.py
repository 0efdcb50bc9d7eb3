"""What `.gitignore` leaves out of a walk (rendered output, vendored charts), as ruff and zizmor respect it.

Read only inside a git work tree (a folder holding `.git` at or above the walked folder), as git does: the
`.gitignore` of every folder from the repository root down, and `.git/info/exclude`. Patterns are matched with
`pathspec` (GitIgnoreSpec: git's own rules, negations and the last-match-wins order included); git itself is
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


def _spec(path: str) -> Any:
    if not os.path.isfile(path):
        return None
    # bounded and never a FIFO (fsread); above the scanned folder too, as git reads the root's .gitignore
    text = read_text(path, check_inside=False, errors="replace")
    if not isinstance(text, str) or not text.strip():
        return None
    import pathspec  # only when a .gitignore exists

    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


class Ignored:
    """Answers "does git ignore this path?" for the paths of one walk, reading each `.gitignore` once."""

    def __init__(self, top: str) -> None:
        self.root = repository_root(top)
        self._specs: dict[str, Any] = {}  # absolute folder -> its .gitignore's spec (None: none)
        if self.root is not None:
            self._specs[os.path.join(self.root, ".git", "info")] = _spec(
                os.path.join(self.root, ".git", "info", "exclude"))

    def _folder_spec(self, folder: str) -> Any:
        if folder not in self._specs:
            self._specs[folder] = _spec(os.path.join(folder, GITIGNORE))
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
