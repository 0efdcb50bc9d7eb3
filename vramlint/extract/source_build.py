"""vLLM built from a git checkout in a Dockerfile's RUN lines: `git clone <a repository named vllm>` and then an
install of that folder (`pip install -e .`, `uv pip install .`, `python setup.py install|develop`), or pip's VCS
form of such a repository (`pip install git+https://github.com/<fork>/vllm@<ref>`).

What that installs is the checkout's code, not a release: a fork's arguments (its purpose, often) and a commit's
arguments past or before any release. Only vllm-project's own repository checked out at a release tag
(`git clone --branch v0.9.2 ...`, `git checkout v0.9.2`) is that release.

The shell text is read, never run: the commands of one RUN in order, split at `&&`, `||`, `;`, `|` and the
keywords of `if`/`for`, with `cd` followed from the WORKDIR in force. Both branches of an `if` are read as if
run one after the other; a folder or repository known only at run time (`$REPO` no ARG/ENV sets) is not
recognised.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

from vramlint.lean_dataclass import dataclass
from vramlint.model import Location

# Linux's PATH_MAX: a longer folder is one `cd` cannot enter (ENAMETOOLONG), so it is not followed
MAX_PATH = 4096
# vLLM clones remembered per stage: a real build makes one or two; past this many the rest are not recorded
MAX_CLONES = 64
# commands read in one RUN (a real one has tens): past it the rest are not read, and that is said
MAX_COMMANDS = 10_000

_OPERATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "|&"}
# words that start a compound command or prefix another: the command follows them
_PREFIXES = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done", "time", "exec",
             "sudo", "command", "nohup"}
# git clone options that take a value (git-clone(1)); `--opt=value` forms are one word
_CLONE_VALUED = {"-b", "--branch", "-o", "--origin", "-c", "--config", "--depth", "--reference", "--reference-if-able",
                 "--filter", "-j", "--jobs", "--separate-git-dir", "--template", "-u", "--upload-pack",
                 "--shallow-since", "--shallow-exclude", "--server-option", "--bundle-uri", "--revision"}
# pip / uv pip install options that take a value: their value is no requirement
_PIP_VALUED = {"-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root", "-i",
               "--index-url", "--extra-index-url", "-f", "--find-links", "--python", "-p", "--cache-dir", "--src",
               "--config-settings", "-C", "--trusted-host", "--platform", "--python-version", "--implementation",
               "--abi", "--progress-bar", "--index-strategy", "--torch-backend", "--upgrade-strategy",
               "--only-binary", "--no-binary", "--report", "--override", "--build-constraint", "--extra",
               "--group", "--resolution", "--prerelease", "--keyring-provider", "--link-mode", "--exclude-newer"}


@dataclass
class SourceBuild:
    """vLLM installed from a git checkout: which repository, at which ref (None: its default branch, or not known),
    the release that is (vllm-project at a release tag) or None, and the RUN that installs it."""

    url: str
    ref: str | None
    release: str | None
    installed: Location
    cloned_line: int | None = None  # the RUN line of the `git clone` (None for pip's VCS form)
    # a wheel another stage builds from the build context (vLLM's own docker/Dockerfile: `COPY . .`, then
    # `setup.py bdist_wheel`): that stage's name and RUN line, and the version SETUPTOOLS_SCM_PRETEND_VERSION
    # declares for it, if set
    wheel_stage: str | None = None
    wheel_line: int | None = None
    declared: str | None = None

    def label(self) -> str:
        """What was built, short: the checkout's repository (and ref), or this repository's own checkout."""
        if self.wheel_stage is not None:
            return "this repository's checkout"
        # `https://github.com/owner/vllm.git` -> `owner/vllm`; a commit as git abbreviates it (12 hex digits)
        parts = self.url.split("://", 1)[-1].split(":", 1)[-1].rstrip("/").removesuffix(".git").split("/")
        short = "/".join(parts[-2:]) if len(parts) >= 2 else self.url
        ref = self.ref[:12] if self.ref and len(self.ref) > 12 and all(
            c in "0123456789abcdefABCDEF" for c in self.ref) else self.ref
        return short + (f" at {ref}" if ref else "")

    def describe(self) -> str:
        if self.wheel_stage is not None:
            version = (f"SETUPTOOLS_SCM_PRETEND_VERSION declares {self.declared}" if self.declared else
                       "setuptools-scm gives it the checkout's git tag and commit, which the files do not hold")
            return (f"{self.installed.file} line {self.installed.line} installs the wheel that stage "
                    f"{self.wheel_stage} builds on line {self.wheel_line} from the build context, this repository's "
                    f"own checkout ({version})")
        at = f" at {self.ref}" if self.ref else ""
        cloned = f", cloned on line {self.cloned_line}" if self.cloned_line and self.cloned_line != \
            self.installed.line else ""
        return (f"{self.installed.file} line {self.installed.line} installs vLLM from a git checkout of "
                f"{self.url}{at}{cloned}")


@dataclass
class _Clone:
    url: str
    ref: str | None
    line: int


def read_run(script: str, workdir: str, clones: dict[str, _Clone], expand: Callable[[str], str | None],
             where: Location, over: list[str] | None = None) -> SourceBuild | None:
    """Follow one RUN's commands: record the vLLM clones it makes in ``clones`` (folder in the image -> clone,
    kept across RUN lines by the caller) and return the source install it runs, the last one if several. Past
    MAX_COMMANDS the rest is not read, said in ``over``."""
    from vramlint.versions import pip_vllm_source, release_of_checkout

    if not clones and "clone" not in script and "git+" not in script:
        return None  # no checkout made here or before: nothing to install from source
    found: SourceBuild | None = None
    cwd = workdir or "/"
    fetched: str | None = None
    for count, words in enumerate(_commands(script, expand)):
        if count >= MAX_COMMANDS:
            if over is not None:
                over.append(f"RUN: more than {MAX_COMMANDS:,} commands, past vramlint's limit: the rest are not read "
                            "for a vLLM built from source")
            break
        if not words:
            continue
        if words[0] in ("cd", "pushd") and len(words) >= 2 and words[1] != "-":
            cwd = _join(cwd, words[1])
            continue
        if words[0] == "git" or words[0].endswith("/git"):
            here, rest = _git_words(words[1:], cwd)
            if not rest:
                continue
            sub, args = rest[0], rest[1:]
            if sub == "clone":
                clone = _clone(args, here, where.line)
                if clone is not None and (len(clones) < MAX_CLONES or clone[0] in clones):
                    clones[clone[0]] = clone[1]
            elif sub == "fetch":
                positional = [a for a in args if not a.startswith("-")]
                fetched = positional[1] if len(positional) >= 2 else None
            elif sub in ("checkout", "switch", "reset") and (clone := _clone_at(clones, here)) is not None:
                positional = [a for a in args if not a.startswith("-")]
                if positional:
                    ref = positional[0]
                    clone.ref = fetched if ref == "FETCH_HEAD" else ref
            continue
        install = _pip_install_args(words)
        if install is not None:
            from vramlint.versions import _VCS_ANY_VLLM_RE

            for path in install:
                if _VCS_ANY_VLLM_RE.match(path):
                    vcs = pip_vllm_source("pip install " + path)
                    if vcs is not None:
                        found = SourceBuild(vcs[0], vcs[1], None, where)
                    continue
                clone = _clone_at(clones, _join(cwd, path), exact=True)
                if clone is not None:
                    found = SourceBuild(clone.url, clone.ref, release_of_checkout(clone.url, clone.ref), where,
                                        clone.line)
            continue
        if _setup_py_install(words):
            clone = _clone_at(clones, cwd, exact=True)
            if clone is not None:
                found = SourceBuild(clone.url, clone.ref, release_of_checkout(clone.url, clone.ref), where, clone.line)
    return found


# a shell word's pieces: a line continuation, a quoted string, an operator or newline, blanks, or a run of other characters (a `\\x` escape kept in it)
# (each repeated group takes a run of plain characters at a time: a group repeated once per character keeps a
# backtracking record per character, about 160 MB for one 1 MB word)
_PIECE = re.compile(r"\\\n|'[^']*'?|\"(?:[^\"\\]+|\\.)*\"?|&&|\|\||;;|\|&|[;&|()\n]|[^\S\n]+|(?:[^\s;&|()'\"\\]+|\\.)+|\\")


def _commands(script: str, expand: Callable[[str], str | None]):
    """The simple commands of a shell text, as lists of words (variables expanded where known, else as written);
    quotes are removed as the shell removes them (linear in the text, unlike shlex)."""
    words: list[str] = []
    word: list[str] | None = None

    def finish() -> None:
        nonlocal word
        if word is None:
            return
        token = "".join(word)
        word = None
        if not words and (token in _PREFIXES or ("=" in token and token.split("=", 1)[0].isidentifier())):
            return
        if "$" in token:
            value = expand(token)
            token = value if value is not None else token
        words.append(token)

    for m in _PIECE.finditer(script):
        piece = m.group(0)
        if piece == "\n" or piece in _OPERATORS:  # a newline ends a command (a here-document RUN's lines)
            finish()
            yield words
            words = []
        elif piece[0].isspace() or piece == "\\\n":  # blanks, or a line continued by a backslash
            finish()
        else:
            if piece[0] == "'":
                piece = piece[1:-1] if len(piece) > 1 and piece.endswith("'") else piece[1:]
            elif piece[0] == '"':
                piece = re.sub(r'\\(["\\$`])', r"\1", piece[1:-1] if len(piece) > 1 and piece.endswith('"')
                               else piece[1:])
            else:
                piece = re.sub(r"\\(.)", r"\1", piece) if "\\" in piece else piece
            word = (word or []) + [piece]
    finish()
    yield words


def _join(cwd: str, path: str) -> str:
    joined = posixpath.normpath(posixpath.join(cwd, path))
    return joined if len(joined) <= MAX_PATH else cwd


def _git_words(words: list[str], cwd: str) -> tuple[str, list[str]]:
    """The folder git works in (`-C dir`) and the words from its sub-command on."""
    i = 0
    while i < len(words) and words[i].startswith("-"):
        if words[i] == "-C" and i + 1 < len(words):
            cwd = _join(cwd, words[i + 1])
            i += 2
        elif words[i] == "-c":
            i += 2
        else:
            i += 1
    return cwd, words[i:]


def _clone(args: list[str], cwd: str, line: int) -> tuple[str, _Clone] | None:
    from vramlint.versions import is_vllm_repository

    positional: list[str] = []
    branch = None
    i = 0
    while i < len(args):
        a = args[i]
        if a in _CLONE_VALUED:
            if a in ("-b", "--branch", "--revision") and i + 1 < len(args):
                branch = args[i + 1]
            i += 2
            continue
        if a.startswith(("--branch=", "--revision=")):
            branch = a.split("=", 1)[1]
        elif not a.startswith("-"):
            positional.append(a)
        i += 1
    if not positional or not is_vllm_repository(positional[0]):
        return None
    url = positional[0]
    folder = positional[1] if len(positional) > 1 else url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    folder = folder[:-4] if folder.endswith(".git") and len(positional) == 1 else folder
    return _join(cwd, folder), _Clone(url, branch, line)


def _clone_at(clones: dict[str, _Clone], path: str, exact: bool = False) -> _Clone | None:
    """The clone whose folder is ``path`` (or, unless ``exact``, holds it: git works in any sub-folder)."""
    if path in clones:
        return clones[path]
    if exact:
        return None
    return next((c for folder, c in clones.items() if path.startswith(folder.rstrip("/") + "/")), None)


def _pip_install_args(words: list[str]) -> list[str] | None:
    """The paths and VCS URLs of a `pip install` / `python -m pip install` / `uv pip install` command (editable
    paths included, extras removed: `.[all]` is `.`), or None for another command."""
    i = 0
    name = words[0].rsplit("/", 1)[-1]
    if name.startswith("python"):
        if len(words) < 3 or words[1] != "-m":
            return None
        name, i = words[2], 2
    if name == "uv" and len(words) > i + 1:
        name, i = words[i + 1], i + 1
    if not (name == "pip" or (name.startswith("pip") and name[3:].replace(".", "").isdigit())):
        return None
    if len(words) <= i + 1 or words[i + 1] != "install":
        return None
    out: list[str] = []
    args = words[i + 2:]
    k = 0
    while k < len(args):
        a = args[k]
        if a in ("-e", "--editable") and k + 1 < len(args):
            out.append(_path_part(args[k + 1]))
            k += 2
            continue
        if a.startswith("--editable="):
            out.append(_path_part(a.split("=", 1)[1]))
        elif a in _PIP_VALUED:
            k += 2
            continue
        elif not a.startswith("-") and (a.startswith((".", "git+")) or "/" in a):
            out.append(_path_part(a))  # pip reads a word as a path only if it looks like one; `vllm` is a name
        k += 1
    return [p for p in out if p]


def _path_part(word: str) -> str:
    """A requirement word without its extras (`.[all]` -> `.`); a VCS URL as written."""
    if word.startswith("git+"):
        return word
    return word.split("[", 1)[0]


def _setup_py_install(words: list[str]) -> bool:
    return (len(words) >= 3 and words[0].rsplit("/", 1)[-1].startswith("python") and words[1] == "setup.py"
            and any(w in ("install", "develop") for w in words[2:]))
