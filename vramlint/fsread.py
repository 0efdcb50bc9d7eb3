"""The one way vramlint reads a file: a regular file, inside the scanned paths, no larger than a cap.

vramlint runs in CI on pull requests the repository does not trust, and a file it reads can name another
(`env_file:`, `extends.file`, a `--config` on a bind mount, a values overlay, a symlink). Every read goes
through `read_bytes`/`read_text` here, which refuse, with a reason and without reading a byte:

- a path whose real location (symlinks resolved) is outside the *roots* of the run: the folders named on the
  command line, the folders of the files named there and of the `--values` files, and the folder of the
  configuration file. A named file that is a symbolic link is followed only into a root (pre-commit names
  the files a pull request changed, links included). Anything under /proc, /sys or /dev is refused unless
  the user named a place there (it is never a deployment file);
- anything that is not a regular file: a FIFO, a socket, a device (`/dev/zero`, `/dev/stdin`), a folder. The
  file is opened with O_NONBLOCK and O_NOFOLLOW and checked with fstat before reading, so a FIFO cannot block;
- a file larger than the cap (``MAX_FILE_BYTES`` unless the caller gives its own).

The roots are set for the duration of a run with `scanned_roots(...)`; without them (a library call outside a
run) only the second and third checks and the /proc-/sys-/dev guard apply. The reason a read was refused is a
short sentence for the report ("outside the scanned tree", "a FIFO, not a regular file"); the content of a
refused file is never read, so it can never be quoted.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from vramlint.lean_dataclass import dataclass
from vramlint.textsafe import without_own_marks

T = TypeVar("T")

MAX_FILE_BYTES = 5 * 1024 * 1024

# Kernel file systems: their "files" are process state (/proc/self/environ holds the environment, tokens
# included), devices and sysfs knobs, never a deployment. A repository that links to them is hostile.
_KERNEL_PREFIXES = ("/proc/", "/sys/", "/dev/")

_ROOTS: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar("vramlint_scanned_roots",
                                                                                 default=None)
# Real paths of the folders files were read from in this run: the files of one folder share its resolution
# (one system call per folder of the path), and only the file's own name is looked at again for each file.
# A fresh table for every run (`scanned_roots`, `set_run_roots`); none outside a run.
_REAL_DIRS: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("vramlint_real_dirs",
                                                                                    default=None)
_O_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)


@dataclass(frozen=True)
class Refusal:
    """Why a file was not read (a sentence fragment: "outside the scanned tree")."""

    reason: str
    missing: bool = False  # the path does not exist (callers word that case themselves)


def roots_for(paths: Iterable[str]) -> tuple[str, ...]:
    """Real paths of ``paths`` as roots: a folder is a root; a file makes its folder one.

    A file named on the command line that is a symbolic link is not a root itself: pre-commit names the files a
    pull request changed, and one of them may be a link to `/proc/self/environ` or to a file of the CI runner.
    It is read only when what it points to is inside a root."""
    out: list[str] = []
    for path in paths:
        if not path or path == "-":
            continue
        real = os.path.realpath(path)
        if os.path.isdir(real):
            out.append(real)
        else:
            out.append(os.path.realpath(os.path.dirname(os.path.abspath(path))))
    return tuple(dict.fromkeys(out))


def current_roots() -> tuple[str, ...] | None:
    return _ROOTS.get()


@contextlib.contextmanager
def scanned_roots(paths: Iterable[str], extend: bool = True) -> Iterator[tuple[str, ...]]:
    """Within this block, files are read only under ``paths`` (see `roots_for`).

    ``extend``: when roots are already set (the command set them, then `scan` is called), add to them rather
    than replace them."""
    roots = roots_for(paths)
    before = _ROOTS.get()
    if extend and before is not None:
        roots = tuple(dict.fromkeys(before + roots))
    token = _ROOTS.set(roots)
    dirs_token = _REAL_DIRS.set({})
    try:
        yield roots
    finally:
        _REAL_DIRS.reset(dirs_token)
        _ROOTS.reset(token)


def own_roots(run: Callable[..., T]) -> Callable[..., T]:
    """Decorate a command's run function: the roots it sets with `set_run_roots` end when it returns (also when
    it is called again in the same process, as tests do)."""

    @functools.wraps(run)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        return contextvars.copy_context().run(run, *args, **kwargs)

    return wrapper


def set_run_roots(paths: Iterable[str]) -> tuple[str, ...]:
    """The roots of a whole command (scan, then the model files the assessment reads), in a function decorated
    with `own_roots`."""
    roots = roots_for(paths)
    _ROOTS.set(roots)
    _REAL_DIRS.set({})
    return roots


def real_path(path: str) -> str:
    """``os.path.realpath(path)``; within a run, the folder's resolution is the one made for an earlier file of
    the same folder, and only the last part of the path is looked at (a symbolic link there is resolved)."""
    dirs = _REAL_DIRS.get()
    if dirs is None:
        return os.path.realpath(path)
    folder, name = os.path.split(path)
    if not name or name in (".", ".."):
        return os.path.realpath(path)
    # the key is absolute: a command that changes the working folder (diff reads BASE from a mirror) cannot
    # find another folder's resolution under a relative name
    key = folder if folder.startswith(os.sep) else os.path.join(os.getcwd(), folder)
    real_folder = dirs.get(key)
    if real_folder is None:
        real_folder = _real_folder(key, dirs)
    real = os.path.join(real_folder, name)
    try:
        if stat.S_ISLNK(os.lstat(real).st_mode):
            return os.path.realpath(real)
    except OSError:
        pass  # missing or unreadable: opening it says why, as it does for os.path.realpath's answer
    return real


def _real_folder(folder: str, dirs: dict[str, str]) -> str:
    """``os.path.realpath(folder)`` (absolute) from its parent's resolution, kept in ``dirs`` with it: one look at
    the folder's own name, not one at every folder above it (a tree of 1,000 folders, 6 deep)."""
    found = dirs.get(folder)
    if found is not None:
        return found
    parent, name = os.path.split(folder)
    if not name or name in (".", "..") or parent == folder:
        real = os.path.realpath(folder)
    else:
        candidate = os.path.join(_real_folder(parent, dirs), name)
        try:
            link = stat.S_ISLNK(os.lstat(candidate).st_mode)
        except OSError:
            link = True  # missing or unreadable: resolved as os.path.realpath resolves it
        real = os.path.realpath(candidate) if link else candidate
    dirs[folder] = real
    return real


def _under(real: str, root: str) -> bool:
    if real == root:
        return True
    return real.startswith(root if root.endswith(os.sep) else root + os.sep)


def outside_reason(path: str, roots: tuple[str, ...] | None = None, real: str | None = None) -> str | None:
    """Why ``path`` (symlinks resolved) may not be read as part of this run, or None when it may.
    ``roots``: these instead of the run's; ``real``: ``path`` resolved already (os.path.realpath)."""
    if "\x00" in path:
        return "not a valid path (it holds a NUL character)"  # no file has one: os.path.realpath raises on it
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        # a YAML "\ud800" escape: a surrogate no file name's bytes make (os.path.realpath raises on it)
        return "not a valid path (it holds a lone surrogate, which no file name's bytes give)"
    if real is None:
        real = os.path.realpath(path)
    if roots is None:
        roots = _ROOTS.get()
    if _is_kernel(real):
        # only when the user named a place in /proc, /sys or /dev themselves
        if roots is not None and any(_is_kernel(root) and _under(real, root) for root in roots):
            return None
        return "outside the scanned tree (a kernel file, not a deployment file)"
    if roots is None:
        return None
    if any(_under(real, root) for root in roots):
        return None
    return "outside the scanned tree"


def _is_kernel(real: str) -> bool:
    return real.startswith(_KERNEL_PREFIXES) or real in ("/proc", "/sys", "/dev")


def is_inside(path: str) -> bool:
    return outside_reason(path) is None


def special_file_reason(mode: int) -> str:
    """Why a file of this mode is not read: "a FIFO (named pipe), not a regular file"."""
    kind = _kind(mode)
    return kind if kind == "not a regular file" else f"{kind}, not a regular file"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def read_head(path: str, size: int) -> bytes | Refusal:
    """The first ``size`` bytes of a regular file inside the scanned tree (what a walk looks at to tell a file's
    kind by its first lines, as a Slurm job script's `#SBATCH` header), or why it was not read."""
    return read_bytes(path, size, head=True)


def read_bytes(path: str, limit: int = MAX_FILE_BYTES, check_inside: bool = True, head: bool = False
               ) -> bytes | Refusal:
    """The file's bytes, or why it was not read. ``check_inside=False`` only for paths the user named; ``head``:
    the first ``limit`` bytes of a larger file, not a refusal."""
    try:
        real = real_path(path)  # resolved once: a path of many folders costs a system call each
        if check_inside:
            why = outside_reason(path, real=real)
            if why is not None:
                return Refusal(why)
        try:
            fd = os.open(real, _O_FLAGS)
        except FileNotFoundError:
            return Refusal("no such file", missing=True)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return Refusal(special_file_reason(st.st_mode))
            if st.st_size > limit and not head:
                return Refusal(f"too large ({st.st_size} bytes, the limit is {limit})")
            chunks = []
            left = limit + (0 if head else 1)
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            raw = b"".join(chunks)
        finally:
            os.close(fd)
    except OSError as exc:
        return Refusal(os_reason(exc))
    except ValueError:  # a NUL byte in the path
        return Refusal("not a valid path")
    if len(raw) > limit:
        return Refusal(f"too large (more than {limit} bytes, the limit)")
    return raw


def os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if exc.errno == 40:  # ELOOP: also what O_NOFOLLOW gives for a symlink swapped in after realpath
        return "symbolic link loop"
    if isinstance(exc, IsADirectoryError):
        return "a folder, not a regular file"
    return f"cannot read: {exc.strerror or exc}"


def is_utf32(raw: bytes) -> bool:
    return raw.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"))


def decode_text(raw: bytes) -> str | None:
    """Text of a file as the tools that read these files would take it: UTF-8 (a BOM dropped), or UTF-16 when a
    byte-order mark says so. None: not text to them. kubectl decodes a file with golang.org/x/text's
    BOMOverride, which knows the marks of UTF-8 and UTF-16 only (cli-runtime's FileVisitor), and go-yaml (Helm,
    compose) the same three: UTF-32's little-endian mark reads as UTF-16's followed by NULs, its big-endian one
    as NUL bytes, and both are refused, so UTF-32 is not decoded here either. A U+2983/U+2984 of the file is kept
    apart from vramlint's own unknown mark (textsafe.without_own_marks)."""
    text = _decoded(raw)
    return None if text is None else without_own_marks(text)


def _decoded(raw: bytes) -> str | None:
    if is_utf32(raw):
        return None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        codec = "utf-16"
    else:
        # UTF-8 with its byte-order mark dropped, as the "utf-8-sig" codec reads it (whose decoder is Python code)
        try:
            return (raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw).decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        return raw.decode(codec)
    except UnicodeDecodeError:
        return None


def has_unicode_bom(raw: bytes) -> bool:
    return raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff", b"\xef\xbb\xbf"))


def read_text(path: str, limit: int = MAX_FILE_BYTES, check_inside: bool = True,
              errors: str = "strict") -> str | Refusal:
    """The file's text (see `decode_text`), or why it was not read. ``errors="replace"``: undecodable bytes
    become U+FFFD instead of a refusal."""
    raw = read_bytes(path, limit, check_inside)
    if isinstance(raw, Refusal):
        return raw
    text = decode_text(raw)
    if text is None:
        if errors == "replace":
            return without_own_marks(raw.decode("utf-8", errors="replace"))
        return Refusal("not UTF-8 text")
    return text
