"""What vramlint may send to the Hugging Face Hub: repository ids, revisions and file names, checked before any
request (no ``..``, no absolute paths, no control characters) and before the Hub cache on disk is read."""

from __future__ import annotations

import re

_HUB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_REVISION = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9._+-]{0,127}|refs/pr/[0-9]{1,9}|refs/convert/[A-Za-z0-9_-]{1,64})$")
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$")


def repo_id_problem(repo_id: str) -> str | None:
    """Why ``repo_id`` is not a Hub model id (``org/name``) that may be sent in a URL, or None."""
    parts = repo_id.split("/")
    if len(parts) != 2:
        return "a Hub model id is org/name"
    for part in parts:
        if not _HUB_NAME.match(part) or ".." in part or "--" in part or part.endswith((".", "-")):
            return f"{part!r} is not a valid Hub name (letters, digits, '-', '_', '.'; no '..' or '--')"
    return None


def revision_problem(revision: str) -> str | None:
    """Why ``revision`` is not a branch, tag, commit or ``refs/pr/N`` that may be sent to the Hub, or None."""
    if ".." in revision or not _REVISION.match(revision) or revision.endswith((".", ".lock")):
        return ("not a Hub revision (a branch or tag of letters, digits, '.', '_', '-'; a commit hash; "
                "or refs/pr/N): not asked")
    return None


def file_name_problem(name: str) -> str | None:
    if ".." in name or not _FILE_NAME.match(name):
        return "not a plain file name"
    return None


def is_commit_hash(revision: str | None) -> bool:
    return bool(revision) and re.fullmatch(r"[0-9a-f]{40}", revision) is not None
