"""Which file of the build context a path in a built image is: the COPY/ADD instructions of the stages followed
(`dockerfile.BuiltImage.copies`) read back to front, as the image's layers stack them. A module of its own so
that the readers of launchers (compose, Dockerfiles read alone, supervisord) use it without importing each other.
"""

from __future__ import annotations

import posixpath
from typing import Any


def context_source(built: Any, image_path: str, is_dir: Any) -> tuple[str, int] | None:
    """(the build-context path, the COPY/ADD line) of the file at ``image_path`` in the image, when the last
    COPY/ADD that writes that path takes it from the build context; ``is_dir(path)`` says whether a context path
    is a directory (whose contents Docker copies into the destination). None when no COPY writes it, or the last
    one that does takes it from elsewhere."""
    import fnmatch

    image_path = posixpath.normpath(posixpath.join(built.workdir, image_path))
    for copy in reversed(built.copies):
        dest = copy.dest
        under = image_path == dest or image_path.startswith(dest.rstrip("/") + "/")
        if copy.sources is None:
            if under:
                return None
            continue
        for src in reversed(copy.sources):
            # BuildKit resolves a source inside the context, `..` stopping at its root (`COPY ../x` copies the
            # context's x, "/x": not found when there is none): never a file beside or above the context
            src_norm = posixpath.normpath("/" + src).lstrip("/") or "."
            if any(c in src_norm for c in "*?["):
                folder, pattern = posixpath.split(src_norm)
                parent, name = posixpath.split(image_path)
                if parent == dest and fnmatch.fnmatchcase(name, pattern):
                    return posixpath.normpath(posixpath.join(folder, name)), copy.line
                continue
            if is_dir(src_norm):
                if under:
                    rel = posixpath.relpath(image_path, dest)
                    return posixpath.normpath(posixpath.join(src_norm, rel)), copy.line
                continue
            # a file: to the destination path, or into it when the destination is a folder (in the image, a
            # destination without a trailing `/` may already be one)
            if (image_path == dest and not copy.into_dir) or \
                    image_path == posixpath.join(dest, posixpath.basename(src_norm)):
                return src_norm, copy.line
    return None


# Docker's ADD unpacks a local file whose first bytes say it is a tar archive, plain or compressed
# (archive.DetectCompression: gzip, bzip2, xz, zstd; then a tar header): the image holds its members, not it
_ARCHIVE_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")


def is_archive(head: bytes) -> bool:
    """Whether a file beginning with ``head`` (its first 512 bytes or more) is one ADD unpacks."""
    return head.startswith(_ARCHIVE_MAGIC) or head[257:262] == b"ustar"


def unpacked_by_add(built: Any, line: int, host: str) -> bool:
    """Whether the COPY/ADD on ``line`` is an ADD that unpacks ``host`` (a local tar archive, by its first bytes):
    then the image holds the archive's members, and the file's own bytes are no script (hostile round 19: a tar
    holding a `vllm serve` line was read as the launcher)."""
    if not any(copy.line == line and getattr(copy, "unpacks", False) for copy in built.copies):
        return False
    from vramlint.fsread import Refusal, read_bytes

    raw = read_bytes(host)
    return not isinstance(raw, Refusal) and is_archive(raw[:512])
