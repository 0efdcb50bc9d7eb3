"""Find the files to scan: walk directories, skip VCS and vendor folders, honour --exclude, survive loops.

A file named explicitly on the command line is always read (whatever its extension); files found by walking
a directory are read when their extension says YAML, their name says Dockerfile (`is_build_file_name`) or Slurm
job script (`*.sbatch`, `*.slurm`; a `*.sh` whose first lines are `#SBATCH` directives, `FileEntry.sbatch_only`), a
shell script that starts vLLM (`*.sh`, `*.bash`, an extension-less file whose `#!` names a shell: `FileEntry.starts_only`,
unless walk-scripts is off), or their name and folder say supervisord configuration (`supervisord.conf`, `supervisor/*.conf`, `conf.d/*.conf`). Nothing found here is dropped silently: a broken link, a
symlink loop or an unreadable directory becomes a `Skipped` entry with the reason.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any

from vramlint.fsread import current_roots, outside_reason, roots_for, special_file_reason
from vramlint.model import Skipped

# Folders that hold other people's code or tool state, never the deployments a repository owns.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "_darcs",
        "CVS",
        "node_modules",
        "vendor",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".terraform",
        ".cache",
        ".idea",
        ".vscode",
        "site-packages",
    }
)

YAML_EXTENSIONS = (".yaml", ".yml")
# vramlint's own configuration files are read as configuration (`vramlint.config`), not linted as deployments
CONFIG_NAMES = frozenset({".vramlint.yaml", ".vramlint.yml"})
# Template files that are often YAML with a few placeholders (Terraform templatefile, Helm partials); they are
# read only when their text looks like YAML (see scan.looks_like_yaml).
# Terraform's configuration files, in its native syntax and in JSON: the Kubernetes objects and Helm releases a
# module creates (`vramlint.extract.terraform`)
TERRAFORM_EXTENSIONS = (".tf", ".tf.json")
# Slurm job scripts by their names (the shell scripts sbatch(1) is given); a `*.sh` is one when its first lines
# are `#SBATCH` directives (read by the walk only then: `FileEntry.sbatch_only`)
SLURM_EXTENSIONS = (".sbatch", ".slurm")
SHELL_EXTENSIONS = (".sh", ".bash")  # the shell scripts of shell_scripts.SCRIPT_EXTENSIONS that are not Slurm's
TEMPLATE_EXTENSIONS = (".tftpl", ".tpl", ".yaml.tmpl", ".yml.tmpl", ".yaml.j2", ".yml.j2")


@dataclass
class FileEntry:
    display: str  # path as printed: relative to the current directory
    path: str  # path to open
    explicit: bool  # named on the command line (read whatever its extension)
    template: bool = False  # a template extension: read only if the text looks like YAML
    # a shell script of the walk: read only when its first lines are a Slurm job's `#SBATCH` directives
    # (slurm.has_directives), or, with ``starts_only``, when running it starts vLLM (scan._walked_script_text)
    sbatch_only: bool = False
    starts_only: bool = False  # (walk-scripts) also read when the script starts vLLM
    shebang_only: bool = False  # an extension-less file: a script of the walk only when its `#!` names a shell


@dataclass
class Discovery:
    files: list[FileEntry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    # scripts, Makefiles and other configs of the walk, not linted: read only for evidence of how the scanned
    # compose files are started (extract.compose_starts), and only when that is asked (paths, at most MAX_STARTERS)
    starters: list[str] = field(default_factory=list)


MAX_STARTERS = 5000
# what may start compose services one at a time: shell scripts, Makefiles and justfiles, configs of starters
STARTER_EXTENSIONS = (".sh", ".bash", ".zsh", ".mk", ".toml", ".json", ".conf", ".cfg", ".ini", ".service", ".ps1")
STARTER_NAMES = frozenset(("makefile", "gnumakefile", "justfile", "procfile", "taskfile"))


def is_starter_name(name: str) -> bool:
    lower = name.lower()
    return lower in STARTER_NAMES or lower.endswith(STARTER_EXTENSIONS)


def display_path(path: str) -> str:
    """Relative to the current directory when below it, else absolute (as ruff prints), with forward slashes.

    One form for every path a run prints: a `../../x` for a folder outside the current one was longer than the
    absolute path and differed from the chart paths, which were already printed absolute.
    """
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if absolute == cwd:
        return "."
    prefix = os.path.join(cwd, "")
    shown = absolute[len(prefix):] if absolute.startswith(prefix) else absolute
    return shown.replace(os.sep, "/")


def excluded(rel: str, name: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        pat = pattern.rstrip("/")
        if pat.startswith("./"):
            pat = pat[2:]
        if fnmatch.fnmatchcase(name, pat) or fnmatch.fnmatchcase(rel, pat):
            return True
        # `deploy/old` excludes everything under it; `**/x` is written by people used to gitignore.
        if rel.startswith(pat + "/"):
            return True
        if pat.startswith("**/") and (fnmatch.fnmatchcase(name, pat[3:]) or fnmatch.fnmatchcase(rel, pat[3:])):
            return True
    return False


def kind_of(name: str) -> str | None:
    """"yaml", "template", "dockerfile" or "terraform" for a file a folder's walk reads, else None (read only
    when named)."""
    lower = name.lower()
    if lower.endswith(YAML_EXTENSIONS) or name == "Kustomization":  # kustomize's third file name, no extension
        return "yaml"
    if lower.endswith(TEMPLATE_EXTENSIONS):
        return "template"
    if lower.endswith(TERRAFORM_EXTENSIONS):
        return "terraform"  # read when its text names vLLM, or for a helm_release of a local chart (scan)
    if lower.endswith(SLURM_EXTENSIONS):
        return "script"  # a Slurm job script (`sbatch job.sbatch`), read when its text names vLLM
    # the image a folder's deployment may run as built, its ENTRYPOINT/CMD starting vLLM (read only when its text
    # names vLLM)
    if "erfile" in lower and is_build_file_name(lower):
        return "dockerfile"
    return None


_BUILD_FILE_BASES = ("dockerfile", "containerfile")  # Docker's default name, and Podman/Buildah's
# an extension after `Dockerfile_X` / `Dockerfile-X` says another kind of file (`-notes.md`, `_test.go`, BuildKit's
# `<Dockerfile name>.dockerignore`); a dot before a digit is a version (`Dockerfile-cuda12.4`)
_OTHER_EXTENSION = re.compile(r"\.[a-z][a-z0-9]*$")


def is_build_file_name(lower: str) -> bool:
    """Whether a lower-case file name is a Dockerfile's (or Podman's Containerfile): `dockerfile`, the
    conventions for more than one in a folder, `dockerfile.vllm` and `vllm.dockerfile`, and the spellings
    `dockerfile_vllm` / `dockerfile-vllm` (`docker build -f` takes any name; these are common). A name of the
    last two kinds with an extension (`dockerfile-notes.md`, `dockerfile_test.go`) is not one."""
    for base in _BUILD_FILE_BASES:
        if lower == base or lower.startswith(base + ".") or lower.endswith("." + base):
            return True
        if lower.startswith((base + "_", base + "-")) and len(lower) > len(base) + 1:
            return _OTHER_EXTENSION.search(lower, len(base)) is None
    return False


# Folders whose `*.conf` files are supervisord's program configurations by convention (the Debian/Ubuntu
# package includes /etc/supervisor/conf.d/*.conf; images COPY them from a `supervisor/` or `conf.d/` folder)
SUPERVISOR_DIRS = frozenset({"supervisor", "supervisord", "supervisor.d", "conf.d"})


def supervisord_kind(rel: str) -> str | None:
    """"supervisord" for `supervisord.conf`, or a `*.conf` in a folder named as supervisord's, else None: read only
    when its text names vLLM and holds a `[program:NAME]` section (an nginx `conf.d/*.conf` is neither)."""
    parts = rel.replace("\\", "/").lower().split("/")
    name = parts[-1]
    if name == "supervisord.conf" or (name.endswith(".conf") and any(p in SUPERVISOR_DIRS for p in parts[:-1])):
        return "supervisord"
    return None


def systemd_kind(name: str) -> str | None:
    """"systemd" for a service unit (`*.service`, or an Ansible role's template of one, `*.service.j2`): read only
    when its text names vLLM."""
    lower = name.lower()
    return "systemd" if lower.endswith(".service") or lower.endswith((".service.j2", ".service.jinja2")) else None


def systemd_drop_in_kind(rel: str) -> str | None:
    """"systemd-drop-in" for `NAME.service.d/*.conf`: read with its unit when the unit is beside it, else on its
    own (only when its text names vLLM)."""
    parts = rel.replace("\\", "/").lower().split("/")
    return "systemd-drop-in" if len(parts) >= 2 and parts[-1].endswith(".conf") and \
        parts[-2].endswith(".service.d") else None


def discover(paths: list[str], exclude: list[str] | tuple[str, ...] = (), respect_gitignore: bool = True,
             walk_scripts: bool = True) -> Discovery:
    """Files to scan under ``paths`` (files or directories), in a stable order. With ``respect_gitignore``, what
    the git work tree's `.gitignore` files ignore is not walked into (`vramlint.gitignore`); a path named in
    ``paths`` is read even so. With ``walk_scripts``, a folder's shell scripts (`*.sh`, `*.bash`, extension-less
    files whose `#!` names a shell) are read when they start vLLM; without, only its Slurm jobs."""
    out = Discovery()
    patterns = list(exclude)
    seen_files: set[tuple[int, int]] = set()
    # the scripts a folder's walk took as Slurm jobs if they are ones, by file: one also named is read as named
    maybe_jobs: dict[tuple[int, int], FileEntry] = {}
    roots = current_roots() or roots_for(paths)
    for path in paths:
        shown = display_path(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            if os.path.islink(path):
                out.skipped.append(Skipped(shown, "broken symbolic link"))
            else:
                out.skipped.append(Skipped(shown, "no such file or directory"))
            continue
        except OSError as exc:
            out.skipped.append(Skipped(shown, _os_reason(exc)))
            continue
        if stat.S_ISDIR(st.st_mode):
            ignored = None
            if respect_gitignore:
                from vramlint.gitignore import Ignored

                ignored = Ignored(path)
                if ignored.root is None:
                    ignored = None
            _walk(path, patterns, out, seen_files, roots, ignored, maybe_jobs, walk_scripts)
            for ignore_file, why in ignored.unread if ignored is not None else ():
                out.skipped.append(Skipped(display_path(ignore_file), why))
        elif stat.S_ISREG(st.st_mode):
            key = (st.st_dev, st.st_ino)
            if key in seen_files:
                walked = maybe_jobs.pop(key, None)
                if walked is not None:  # a script a folder's walk took if it is a job or starts vLLM: named, read
                    walked.explicit, walked.sbatch_only, walked.starts_only = True, False, False
                continue
            seen_files.add(key)
            out.files.append(FileEntry(shown, path, explicit=True, template=kind_of(path) == "template"))
        else:
            out.skipped.append(Skipped(shown, "not a regular file"))
    return out


def _os_reason(exc: OSError) -> str:
    if exc.errno is not None and exc.errno == 40:  # ELOOP
        return "symbolic link loop"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or str(exc)


def _walk(root: str, patterns: list[str], out: Discovery, seen_files: set[tuple[int, int]],
          roots: tuple[str, ...], ignored=None,  # noqa: ANN001 - a vramlint.gitignore.Ignored
          maybe_jobs: dict[tuple[int, int], FileEntry] | None = None, walk_scripts: bool = True) -> None:
    # Directories are identified by (device, inode): a symlink back up the tree is reported once and not
    # entered, so a loop costs one stat, not forever. A symlink (to a folder or a file) that leads out of the
    # scanned paths is not followed: a link to `..` or `/` would walk the file system, one to a file would
    # read something that is not the repository's.
    visited_dirs: set[tuple[int, int]] = set()
    try:
        st = os.stat(root)
        visited_dirs.add((st.st_dev, st.st_ino))
    except OSError:
        pass
    # A link is followed after every real file and folder of the walk: a file or folder that is both in the tree
    # and behind a link inside it is read, and reported, under its own path (first seen wins).
    stack = [root]
    deferred: list[tuple[Any, str]] = []

    def handle(entry: Any, rel: str, subdirs: list[str]) -> None:
        name = entry.name
        if patterns and excluded(rel, name, patterns):
            return
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError as exc:
            out.skipped.append(Skipped(rel, _os_reason(exc)))
            return
        if is_dir:
            if name in SKIP_DIRS or (ignored is not None and ignored(entry.path, is_dir=True)):
                return
            if is_link and outside_reason(entry.path, roots) is not None:
                out.skipped.append(Skipped(rel, "symbolic link to a folder outside the scanned tree: not followed"))
                return
            try:
                st = entry.stat(follow_symlinks=True)
            except OSError as exc:
                out.skipped.append(Skipped(rel, _os_reason(exc)))
                return
            key = (st.st_dev, st.st_ino)
            if key in visited_dirs:
                if is_link:
                    out.skipped.append(Skipped(rel, "symbolic link to a folder already scanned (a loop, or a second path to it): not read again"))
                return
            visited_dirs.add(key)
            subdirs.append(entry.path)
            return
        kind = kind_of(name) or supervisord_kind(rel) or systemd_kind(name) or systemd_drop_in_kind(rel)
        if kind is None and is_starter_name(name) and len(out.starters) < MAX_STARTERS and not (
                ignored is not None and ignored(entry.path, is_dir=False)):
            out.starters.append(entry.path)  # checked when read (a regular file inside the scanned tree)
        if kind is None and name.lower().endswith(SHELL_EXTENSIONS):
            kind = "sbatch-only"
        elif kind is None and walk_scripts and "." not in name and not is_starter_name(name):
            kind = "shebang-only"  # a launch script without an extension (`start-server`), told by its `#!` (scan)
        if kind is None or name in CONFIG_NAMES or (ignored is not None and ignored(entry.path, is_dir=False)):
            return
        # a script the walk reads only if its head says Slurm job: one it cannot look at (a FIFO, a link out of
        # the tree) is no file of a kind the walk reads, and is left alone as every other script is
        quiet = kind in ("sbatch-only", "shebang-only")
        try:
            if not entry.is_file(follow_symlinks=True):
                try:
                    reason = special_file_reason(os.stat(entry.path).st_mode)
                except OSError as exc:
                    reason = "broken symbolic link" if exc.errno == 2 else _os_reason(exc)
                if not quiet:
                    out.skipped.append(Skipped(rel, reason))  # a FIFO would block a reader: never opened
                return
            st = entry.stat(follow_symlinks=True)
        except OSError as exc:
            if not quiet:
                out.skipped.append(Skipped(rel, _os_reason(exc)))
            return
        if is_link and outside_reason(entry.path, roots) is not None:
            if not quiet:
                out.skipped.append(Skipped(rel, "symbolic link to a file outside the scanned tree: not read"))
            return
        key = (st.st_dev, st.st_ino)
        if key in seen_files:
            return
        seen_files.add(key)
        out.files.append(FileEntry(rel, entry.path, explicit=False, template=kind == "template",
                                   sbatch_only=quiet, starts_only=quiet and walk_scripts,
                                   shebang_only=kind == "shebang-only"))
        if quiet and maybe_jobs is not None:
            maybe_jobs[key] = out.files[-1]

    next_link = 0  # deferred links are taken in order, by index: a pop from the front is linear in the list
    while stack or next_link < len(deferred):
        if not stack:
            entry, rel = deferred[next_link]
            next_link += 1
            found: list[str] = []
            handle(entry, rel, found)
            stack.extend(found)
            continue
        directory = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            out.skipped.append(Skipped(display_path(directory), f"cannot list directory: {_os_reason(exc)}"))
            continue
        subdirs = []
        # One relpath per directory, not per file: it dominates the walk of a large tree otherwise.
        shown_dir = display_path(directory)
        prefix = "" if shown_dir == "." else shown_dir + "/"
        for entry in entries:
            rel = prefix + entry.name
            try:
                link = entry.is_symlink()
            except OSError:
                link = False
            if link:
                deferred.append((entry, rel))
                continue
            handle(entry, rel, subdirs)
        stack.extend(reversed(subdirs))
