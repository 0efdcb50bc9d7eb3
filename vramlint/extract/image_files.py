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
            src_norm = posixpath.normpath(src.lstrip("/"))
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
