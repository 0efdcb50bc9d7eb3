"""The image a compose `build:` makes, read from its Dockerfile (never building it).

Only what decides how the container starts is read, with Docker's semantics: the stage the build produces (the
`target`, else the last one), `FROM` an earlier stage of the same file followed back to the image it starts from,
`ARG` defaults and the compose `build.args` substituted in `FROM` and `ENV` (a variable set by neither is unknown,
and so is the image it names), `ENV` (the container's environment), `ENTRYPOINT` and `CMD` in exec (`["a", "b"]`)
and shell form (`/bin/sh -c` with the words as written, or the `SHELL` in force), a stage inheriting them from its
base and an `ENTRYPOINT` clearing the `CMD` it inherited; `WORKDIR` and `COPY`/`ADD` from the build context, so
that a launcher script the image runs can be found in the repository (`image_files.context_source`). `RUN` lines
are read only for the vLLM they install (a pinned `pip install vllm==X`, a build from a git checkout:
`extract.source_build`), a `RUN <<EOF` / `RUN bash <<EOF` here-document as the script it is; other here-documents
are data and skipped.

Bounds: the file is read through `vramlint.fsread` (a regular file inside the scanned tree) up to
MAX_DOCKERFILE_BYTES; at most MAX_STAGES stages and MAX_INSTRUCTIONS instructions; an `ARG`/`ENV` value past
MAX_VALUE_CHARS, or a `${A:-${B:-...}}` default nested past MAX_NESTING, is unknown. Each bound is said on the line
that goes over it (`BuiltImage.bounds`).
"""

from __future__ import annotations

import copy as _copy
import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from vramlint.model import Location

MAX_DOCKERFILE_BYTES = 512 * 1024
MAX_STAGES = 64
MAX_INSTRUCTIONS = 10_000
MAX_VALUE_CHARS = 4096
MAX_NESTING = 32  # `${A:-${B:-...}}`: BuildKit's shell lexer expands a default's word, variables in it included

_RUN_OPTIONS = re.compile(r"^(?:\s*--(?:mount|network|security|device)(?:=\S*)?)+\s*")
_HEREDOC = re.compile(r"<<-?\s*([\"']?)([A-Za-z_][\w.-]*)\1")


@dataclass
class Instruction:
    keyword: str  # upper case
    args: str  # the arguments, continuation lines joined as Docker joins them
    line: int  # 1-based line of the keyword
    column: int  # 1-based column where the arguments start
    last_line: int  # 1-based line the instruction ends on
    # a RUN's shell here-documents (`RUN <<EOF`, `RUN bash <<EOF`): the script BuildKit runs, its lines joined
    shell_body: str = ""


@dataclass
class _Stage:
    base: str  # FROM's image as written
    name: str | None
    instruction: Instruction
    parent: _Stage | None = None  # an earlier stage this one is FROM
    args: dict[str, str | None] = field(default_factory=dict)
    env: dict[str, str | None] = field(default_factory=dict)
    env_locations: dict[str, Location] = field(default_factory=dict)
    entrypoint: Instruction | None = None
    cmd: Instruction | None = None
    own_cmd: bool = False  # a CMD written in this stage (an ENTRYPOINT after it keeps it)
    cmd_cleared: bool = False  # an ENTRYPOINT cleared the CMD the base had
    shell: list[str] | None = None
    # the vLLM a RUN of this stage (or of the stage it is FROM) installs with pip: the release it pins (None when
    # it pins none, or two), and where
    vllm_pin: tuple[str | None, Location] | None = None
    # vLLM installed from a git checkout (extract.source_build), when that is the last vLLM install; and the vLLM
    # clones made so far (folder in the image -> clone), which a later RUN may install
    vllm_source: Any = None
    vllm_clones: dict[str, Any] = field(default_factory=dict)
    workdir: str = "/"
    copies: list[ContextCopy] = field(default_factory=list)
    # a RUN of this stage (or of the one it is FROM) builds a wheel from the build context it copied whole
    # (`COPY . .` then `setup.py bdist_wheel`): that RUN's line and the version SETUPTOOLS_SCM_PRETEND_VERSION
    # declares, if set
    context_wheel: tuple[int, str | None, str] | None = None  # (line, declared version, the wheel's folder)
    # `COPY --from=STAGE SRC DEST` of this stage: (stage, SRC, DEST), absolute
    copied_from: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass
class ContextCopy:
    """A COPY/ADD of the stages followed: what it puts where in the image. ``sources`` is None when they are not
    the build context's (`--from=`, a URL, a here-document): the files it writes are not in the repository."""

    sources: list[str] | None  # as written, relative to the build context
    dest: str  # absolute in the image (the WORKDIR in force joined)
    into_dir: bool  # the destination is a directory (ends in `/`, or several sources)
    line: int
    unpacks: bool = False  # ADD: a local tar archive (plain, gzip, bzip2, xz, zstd) is unpacked into the destination


@dataclass
class BuiltImage:
    """What the build gives the container: the image it starts from, its command and environment."""

    dockerfile: str  # as displayed
    base: str | None  # the image the produced stage starts from (stages followed); None when not known
    base_written: str  # as written in its FROM
    base_location: Location
    stages: list[str]  # names of the stages followed, the produced one first
    unknown_args: list[str]  # variables FROM needs that nothing sets
    entrypoint: list[Any] | None  # Tokens, None when the Dockerfile leaves the base image's
    cmd: list[Any] | None
    env: dict[str, str | None]
    env_locations: dict[str, Location]
    problems: list[str]
    mentions_vllm: bool = False  # the Dockerfile names vLLM somewhere (a base-image ARG, a pip install)
    bounds: list[tuple[Location, str]] = field(default_factory=list)  # vramlint's limits the file went over, where
    # `RUN pip install vllm==X` in the stages followed: pip puts that release over whatever the base image held
    # (None for the release when the RUN pins none)
    vllm_pin: tuple[str | None, Location] | None = None
    # a RUN that installs vLLM from a git checkout (extract.source_build.SourceBuild): vllm_pin then holds the release
    # that checkout is (vllm-project at a release tag) or None
    vllm_source: Any = None
    workdir: str = "/"  # the WORKDIR the container starts in (a relative ENTRYPOINT path is taken from it)
    copies: list[ContextCopy] = field(default_factory=list)  # in build order


def is_dockerfile_name(display: str) -> bool:
    """A Dockerfile by its name (`discover.is_build_file_name`: `Dockerfile`, `Containerfile`, `Dockerfile.dev`,
    `dev.Dockerfile`, `Dockerfile_dev`, `Dockerfile-dev`); a name ending in a YAML extension is YAML."""
    from vramlint.discover import TEMPLATE_EXTENSIONS, YAML_EXTENSIONS, is_build_file_name

    name = display.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if name.endswith(YAML_EXTENSIONS + TEMPLATE_EXTENSIONS):
        return False
    return is_build_file_name(name)


_UNTERMINATED = "<<unterminated>>"  # the keyword of the `Instruction` that says a here-document is not closed
_CUT = "<<past the instruction limit>>"  # the keyword of the `Instruction` that says the rest was not read


def instructions(text: str) -> tuple[list[Instruction], str]:
    """The instructions of a Dockerfile, and its escape character (`# escape=` parser directive)."""
    lines = text.split("\n")
    escape = "\\"
    for raw in lines[:10]:
        m = re.match(r"^#\s*escape\s*=\s*([\\`])\s*$", raw.strip())
        if m:
            escape = m.group(1)
            break
        if not raw.startswith("#"):
            break
    out: list[Instruction] = []
    i, n = 0, len(lines)
    while i < n:
        raw = lines[i].rstrip("\r")
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        if len(out) >= MAX_INSTRUCTIONS:
            # the rest is not read, and that is said (`read_built_image`): an ENTRYPOINT after the bound was
            # dropped without a word (hostile round 19: 10,000 COPY layers, then the ENTRYPOINT)
            out.append(Instruction(_CUT, "", i + 1, 1, i + 1))
            return out, escape
        m = re.match(r"^\s*([A-Za-z]+)(\s+|$)", raw)
        if not m:
            i += 1
            continue
        start = i
        column = m.end() + 1
        parts = [raw[m.end():]]
        while parts[-1].rstrip().endswith(escape) and i + 1 < n:
            parts[-1] = parts[-1].rstrip()[:-1]
            i += 1
            nxt = lines[i].rstrip("\r")
            while (not nxt.strip() or nxt.strip().startswith("#")) and i + 1 < n:
                i += 1  # comments and empty lines inside a continued instruction are dropped
                nxt = lines[i].rstrip("\r")
            parts.append(nxt)
        args = "".join(parts).strip()
        keyword = m.group(1).upper()
        out.append(Instruction(keyword, args, start + 1, column, i + 1))
        i += 1
        if keyword in ("RUN", "COPY", "ADD"):
            # BuildKit runs a RUN's here-document as a script when it is the command itself (`RUN <<EOF`) or a
            # shell's standard input (`RUN bash <<EOF`); other programs' (`python3 <<EOF`) and COPY's are data
            shell = keyword == "RUN" and re.match(r"^(?:(?:/usr)?/bin/)?(?:ba|da)?sh\s*(?:-\S+\s+)*<<|^<<",
                                                   _RUN_OPTIONS.sub("", args).lstrip()) is not None
            body: list[str] = []
            for h in _HEREDOC.finditer(args):
                while i < n and lines[i].rstrip("\r").lstrip("\t") != h.group(2):
                    if shell and len(body) < MAX_INSTRUCTIONS:
                        body.append(lines[i].rstrip("\r"))
                    i += 1  # a here-document's body: data of the instruction, not instructions
                if i >= n:
                    # BuildKit's parser refuses a here-document its delimiter never closes ("unterminated
                    # heredoc"): what follows is not instructions of a build that runs
                    out.append(Instruction(_UNTERMINATED, h.group(2), start + 1, column, n))
                    return out, escape
                i += 1
                shell = False  # only the first here-document is the script; the others are its data
            if body:
                out[-1].shell_body = "\n".join(body)
    return out, escape


def _run_text(ins: Instruction) -> str:
    """A RUN's shell text: its arguments, then the lines of the here-document it runs as a script, if any."""
    return f"{ins.args}\n{ins.shell_body}" if ins.shell_body else ins.args


class Unread(str):
    """Why a Dockerfile's image cannot be told, said on ``line`` of the Dockerfile (where the cause is written)."""

    line: int

    def __new__(cls, text: str, line: int) -> Unread:
        out = super().__new__(cls, text)
        out.line = line
        return out


def read_built_image(text: str, display: str, target: str | None, build_args: dict[str, str | None]) -> BuiltImage | str:
    """The image the build produces (see the module docstring), or why it cannot be told."""
    items, _escape = instructions(text)
    lines = text.split("\n")
    global_args: dict[str, str | None] = {}
    stages: list[_Stage] = []
    bounds: list[tuple[Location, str]] = []

    def bounded(value: str, scope: dict[str, str | None], ins: Instruction, what: str) -> str | None:
        over: list[str] = []
        out = _substitute(value, scope, over=over)
        if over and len(bounds) < 20:
            bounds.append((Location(display, ins.line, ins.column), f"{what}: {over[0]}, past vramlint's limit: "
                           "its value is not known"))
        return out

    for ins in items:
        if ins.keyword == _CUT:
            return (f"{display} has more than {MAX_INSTRUCTIONS:,} instructions (vramlint's limit; the next is on line "
                    f"{ins.line}): not read")
        if ins.keyword == _UNTERMINATED:
            return Unread(f"the here-document <<{ins.args} opened on line {ins.line} of {display} is never closed, "
                          "which BuildKit refuses (unterminated heredoc): the image is not built", ins.line)
        if ins.keyword == "FROM":
            if len(stages) >= MAX_STAGES:
                return (f"{display} has more than {MAX_STAGES} stages (vramlint's limit; the next FROM is on line "
                        f"{ins.line}): not read")
            words = [w for w in ins.args.split() if not w.startswith("--")]
            if not words:
                continue
            name = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
            stage = _Stage(base=words[0], name=name, instruction=ins)
            expanded = _substitute(words[0], global_args)
            parent = next((s for s in reversed(stages) if expanded is not None and s.name
                           and s.name.lower() == expanded.lower()), None)
            if parent is not None:
                stage.parent = parent
                stage.env, stage.env_locations = dict(parent.env), dict(parent.env_locations)
                stage.entrypoint, stage.cmd, stage.shell = parent.entrypoint, parent.cmd, parent.shell
                stage.cmd_cleared = parent.cmd_cleared
                stage.vllm_pin, stage.vllm_source = parent.vllm_pin, parent.vllm_source
                stage.vllm_clones = {k: _copy.copy(v) for k, v in parent.vllm_clones.items()}
                stage.workdir, stage.copies = parent.workdir, list(parent.copies)
                stage.context_wheel, stage.copied_from = parent.context_wheel, list(parent.copied_from)
            stages.append(stage)
            continue
        if ins.keyword == "ARG":
            # an ARG without a default that compose does not pass is unset (absent); one compose passes from
            # its environment (`args: [NAME]`) is unknown (None)
            for name, default in _arg_pairs(ins.args):
                scope = stages[-1].args if stages else global_args
                if name in build_args:
                    scope[name] = build_args[name]
                elif default is not None:
                    scope[name] = bounded(default, _scope(global_args, stages[-1] if stages else None), ins,
                                          f"ARG {name}")
                elif stages and name in global_args:
                    scope[name] = global_args[name]  # a global ARG declared again takes its value into the stage
            continue
        if not stages:
            continue
        stage = stages[-1]
        if ins.keyword == "ENV":
            cursor = ins.line - 1
            for name, raw, column in _env_pairs(ins.args, ins.column):
                stage.env[name] = bounded(raw, _scope(global_args, stage), ins, f"ENV {name}")
                where = Location(display, ins.line, column)
                for k in range(cursor, min(ins.last_line, len(lines))):
                    col = lines[k].find(name + ("=" if "=" in ins.args.split(None, 1)[0] else ""))
                    if col >= 0 and (k > ins.line - 1 or col >= ins.column - 1):
                        where, cursor = Location(display, k + 1, col + 1), k
                        break
                stage.env_locations[name] = where
        elif ins.keyword == "ENTRYPOINT":
            stage.entrypoint = ins
            if not stage.own_cmd:
                stage.cmd, stage.cmd_cleared = None, True  # Docker: ENTRYPOINT clears an inherited CMD
        elif ins.keyword == "CMD":
            stage.cmd, stage.own_cmd, stage.cmd_cleared = ins, True, False
        elif ins.keyword == "RUN" and (wheel := _context_wheel_step(ins, stage, stages, _scope(global_args, stage),
                                                                   display)) is not None:
            if isinstance(wheel, tuple):
                stage.context_wheel = wheel
            else:  # the wheel a stage built from the context, installed over whatever the base image held
                stage.vllm_pin, stage.vllm_source = (None, wheel.installed), wheel
        elif ins.keyword == "RUN" and ("vllm" in (lowered := (run_text := _run_text(ins)).lower())
                                       or "git" in lowered or stage.vllm_clones):
            from vramlint.versions import pip_installed_vllm, pip_installs_vllm

            where = Location(display, ins.line, ins.column)
            if pip_installs_vllm(run_text):  # over the base image's vLLM: the release pinned, or not known
                stage.vllm_pin, stage.vllm_source = (pip_installed_vllm(run_text), where), None
            from vramlint.extract.source_build import read_run

            scope = _scope(global_args, stage)
            # RUN's own options (`--mount=type=cache,...`) come before the shell text
            script = _RUN_OPTIONS.sub("", run_text)
            past: list[str] = []
            built_from = read_run(script, stage.workdir, stage.vllm_clones, lambda w, scope=scope: _substitute(w, scope),
                                  where, past)
            if past and len(bounds) < 20:
                bounds.append((where, past[0]))
            if built_from is not None:  # the checkout's code, over whatever the base image held
                stage.vllm_pin, stage.vllm_source = (built_from.release, where), built_from
        elif ins.keyword == "WORKDIR":
            path = _substitute(ins.args.strip(), _scope(global_args, stage))
            stage.workdir = posixpath.normpath(posixpath.join(stage.workdir, path)) if path else stage.workdir
        elif ins.keyword in ("COPY", "ADD"):
            copy = _context_copy(ins, _scope(global_args, stage), stage.workdir)
            if copy is not None:
                stage.copies.append(copy)
            other = re.search(r"--from=(\S+)", ins.args)
            words = [w for w in (_json_words(ins.args) or _words(ins.args)) if not w.startswith("--")]
            if other and ins.keyword == "COPY" and len(words) == 2:
                src, dest = (_substitute(w, _scope(global_args, stage)) for w in words)
                if src and dest:
                    stage.copied_from.append((other.group(1).lower(), posixpath.normpath(posixpath.join("/", src)),
                                              posixpath.normpath(posixpath.join(stage.workdir, dest))))
        elif ins.keyword == "SHELL":
            form = _json_words(ins.args)
            if form:
                stage.shell = form
    if not stages:
        return f"{display} has no FROM"
    if target:
        chosen = next((s for s in stages if s.name and s.name.lower() == target.lower()), None)
        if chosen is None:
            return f"{display} has no stage named {target!r} (build.target)"
    else:
        chosen = stages[-1]
    followed = [chosen]
    root = chosen
    while root.parent is not None:
        root = root.parent
        followed.append(root)
    unknown: list[str] = []
    over: list[str] = []
    base = _substitute(root.base, global_args, unknown, over)
    if over:
        bounds.append((Location(display, root.instruction.line, root.instruction.column),
                       f"FROM {root.base[:60]}{'...' if len(root.base) > 60 else ''}: {over[0]}, past vramlint's "
                       "limit: the image it starts from is not known"))
    # a variable FROM needs whose own value went over a limit: not "unset"
    overlong = {m.split(":", 1)[0].split(" ", 1)[1] for _, m in bounds if m.startswith(("ARG ", "ENV "))}
    unknown = [u for u in unknown if u not in overlong]
    entrypoint = _command_tokens(chosen.entrypoint, chosen.shell, display, lines) if chosen.entrypoint else None
    cmd = _command_tokens(chosen.cmd, chosen.shell, display, lines) if chosen.cmd else None
    return BuiltImage(
        dockerfile=display, base=base, base_written=root.base,
        base_location=Location(display, root.instruction.line, root.instruction.column),
        stages=[s.name or f"#{stages.index(s)}" for s in followed], unknown_args=unknown,
        entrypoint=entrypoint, cmd=cmd if cmd is not None else ([] if chosen.cmd_cleared else None),
        env=dict(chosen.env), env_locations=dict(chosen.env_locations), problems=[],
        mentions_vllm="vllm" in text.lower(), bounds=bounds, vllm_pin=chosen.vllm_pin,
        vllm_source=chosen.vllm_source, workdir=chosen.workdir,
        copies=list(chosen.copies))


# a wheel built from the folder the command runs in: `setup.py bdist_wheel`, `pip wheel .`, `uv build --wheel`,
# `python -m build --wheel`; and the folder it is written to (their option, else their default)
_WHEEL_BUILD = re.compile(r"\bsetup\.py\b[^\n;&|]*\bbdist_wheel\b|\bpip3?\s+wheel\b[^\n;&|]*\s\.(?=[\s;&|]|$)"
                          r"|\buv\s+build\b|\bpython3?\s+-m\s+build\b")
_WHEEL_DIR = re.compile(r"(?:--dist-dir|--out-dir|--outdir|--wheel-dir|-[dwo])[=\s]+[\"']?([^\s;&|\"']+)")
_PRETEND = re.compile(r"\bSETUPTOOLS_SCM_PRETEND_VERSION(?:_FOR_VLLM)?=[\"']?([^\s;&|\"']+)")
_DECLARED = re.compile(r"v?\d+\.\d+[\w.+-]*")
_WHEEL_INSTALL = re.compile(r"\bpip3?\s+install\b[^\n;&|]*?\s(\S*\.whl)\b")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _context_wheel_step(ins: Instruction, stage: _Stage, stages: list[_Stage], scope: dict[str, str | None],
                        display: str) -> Any:
    """A RUN of vLLM's own image build (docker/Dockerfile in vllm-project/vllm): building a wheel from the whole
    build context the stage copied (-> (line, the version SETUPTOOLS_SCM_PRETEND_VERSION declares or None, the
    wheel's folder)), or installing a wheel from that folder, through `--mount=type=bind,from=STAGE,src=...` or
    a `COPY --from=STAGE` (-> a SourceBuild: the checkout's code, whose version setuptools-scm takes from git).
    None for any other RUN."""
    text = _run_text(ins)
    build = _WHEEL_BUILD.search(text)
    if build and any(c.sources is not None and any(src.rstrip("/") in (".", "") for src in c.sources)
                     for c in stage.copies):
        m = _PRETEND.search(text)
        declared = _substitute(m.group(1), scope) if m else (scope.get("SETUPTOOLS_SCM_PRETEND_VERSION")
                                                             or scope.get("SETUPTOOLS_SCM_PRETEND_VERSION_FOR_VLLM"))
        end = re.compile(r"&&|\|\||[;|]").search(text, build.end())
        out = _WHEEL_DIR.search(text, build.end(), end.start() if end else len(text))  # that command's own option
        folder = _substitute(out.group(1), scope) if out else None
        folder = posixpath.normpath(posixpath.join(stage.workdir, folder or "dist"))
        # a version written out (or an ARG default that is one); a variable nothing sets declares nothing known
        return ins.line, declared if declared and _DECLARED.fullmatch(declared) else None, folder
    named = {s.name.lower(): s for s in stages if s.name and s.context_wheel}
    mounts = []  # (the stage's wheel folder as this RUN sees it, the stage)
    for m in re.finditer(r"--mount=(\S+)", ins.args):
        opts = dict(kv.partition("=")[::2] for kv in m.group(1).split(","))
        builder = named.get(opts.get("from", "").lower())
        src = posixpath.normpath(posixpath.join("/", opts.get("source") or opts.get("src") or "/"))
        target = opts.get("target") or opts.get("dst") or opts.get("destination")
        if builder is not None and target and _under(builder.context_wheel[2], src):
            mounts.append((posixpath.normpath(posixpath.join(target if target.startswith("/") else
                                                             posixpath.join(stage.workdir, target),
                                                             posixpath.relpath(builder.context_wheel[2], src))),
                           builder))
    for name, src, dest in stage.copied_from:
        builder = named.get(name)
        if builder is not None and _under(builder.context_wheel[2], src):
            mounts.append((posixpath.normpath(posixpath.join(dest, posixpath.relpath(builder.context_wheel[2], src))),
                           builder))
    if stage.context_wheel is not None:  # the wheel was built in this very image (a stage FROM the build stage)
        mounts.append((stage.context_wheel[2], stage))
    for wheel in _WHEEL_INSTALL.finditer(text):
        path = posixpath.normpath(posixpath.join(stage.workdir, wheel.group(1)))
        builder = next((b for folder, b in mounts if _under(posixpath.dirname(path), folder)), None)
        if builder is not None:
            from vramlint.extract.source_build import SourceBuild

            line, declared, _folder = builder.context_wheel
            return SourceBuild("the build context", None, None, Location(display, ins.line, ins.column), None,
                               builder.name or "(unnamed)", line, declared)
    return None


def _context_copy(ins: Instruction, scope: dict[str, str | None], workdir: str) -> ContextCopy | None:
    words = _json_words(ins.args) or _words(ins.args)
    flags = [w for w in words if w.startswith("--")]
    paths = [_substitute(w, scope) for w in words if not w.startswith("--")]
    if len(paths) < 2 or any(p is None for p in paths):
        return None  # a variable nothing sets: where it writes is not known, so nothing is taken from it
    *sources, dest = paths
    dest_abs = posixpath.normpath(posixpath.join(workdir, dest))
    foreign = (any(f.startswith("--from") for f in flags) or _HEREDOC.search(ins.args) is not None
               or any(re.match(r"^[a-z][\w+.-]*://|^git@", src) for src in sources))
    return ContextCopy(None if foreign else sources, dest_abs, dest.endswith("/") or len(sources) > 1, ins.line,
                       unpacks=ins.keyword == "ADD")


def _scope(global_args: dict[str, str | None], stage: _Stage | None) -> dict[str, str | None]:
    if stage is None:
        return global_args
    return {**stage.args, **stage.env}


def _arg_pairs(args: str) -> list[tuple[str, str | None]]:
    out = []
    for word in _words(args):
        name, eq, default = word.partition("=")
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            out.append((name, default if eq else None))
    return out


def _env_pairs(args: str, column: int) -> list[tuple[str, str, int]]:
    """`ENV a=1 b="x y"`, or the legacy `ENV name value with spaces`: (name, raw value, column)."""
    first = args.split(None, 1)
    if not first:
        return []
    if "=" not in first[0]:
        value = first[1] if len(first) > 1 else ""
        return [(first[0], value, column)]
    out = []
    pos = 0
    for word in _words(args):
        name, eq, value = word.partition("=")
        at = args.find(name + "=", pos)
        pos = max(pos, at + 1)
        if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name):
            out.append((name, value, column + max(0, at)))
    return out


def _words(text: str) -> list[str]:
    """Words as Docker's ARG/ENV read them: whitespace-separated, quotes removed, `\\` escaping."""
    out: list[str] = []
    word: list[str] = []
    started = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            if started:
                out.append("".join(word))
            word, started = [], False
        elif c in "'\"":
            j = text.find(c, i + 1)
            j = n if j < 0 else j
            word.append(text[i + 1:j])
            started = True
            i = j
        elif c == "\\" and i + 1 < n:
            word.append(text[i + 1])
            started = True
            i += 1
        else:
            word.append(c)
            started = True
        i += 1
    if started:
        out.append("".join(word))
    return out


class _Bound(Exception):
    """An expansion past one of vramlint's limits (MAX_VALUE_CHARS, MAX_NESTING): the value is unknown."""


def _substitute(text: str, scope: dict[str, str | None], unknown: list[str] | None = None,
                over: list[str] | None = None) -> str | None:
    """Docker's build-time `$VAR`, `${VAR}`, `${VAR:-word}`, `${VAR:+word}` (a word may hold variables, expanded
    when it is used) with these variables; None when a variable it needs is not known (named in ``unknown``), or
    the value goes past MAX_VALUE_CHARS or MAX_NESTING (said in ``over``)."""
    if "$" not in text:
        return text
    missing: list[str] = []
    try:
        out = _expand(text, scope, missing, 0)
    except _Bound as exc:
        return _over(over, str(exc))
    if missing:
        if unknown is not None:
            unknown.extend(dict.fromkeys(missing))
        return None
    return out if len(out) <= MAX_VALUE_CHARS else _over(over, f"a value longer than {MAX_VALUE_CHARS:,} characters")


def _over(over: list[str] | None, why: str) -> None:
    if over is not None:
        over.append(why)
    return None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACES = re.compile(r"\$\{|\}")


def _expand(text: str, scope: dict[str, str | None], missing: list[str], depth: int) -> str:
    if depth > MAX_NESTING:
        raise _Bound(f"a ${{...}} default nested more than {MAX_NESTING} deep")
    out: list[str] = []
    size = 0
    i, n = 0, len(text)
    while i < n:
        at = text.find("$", i)
        if at < 0:
            out.append(text[i:])
            break
        out.append(text[i:at])
        size += at - i
        i = at
        piece, i = _one_variable(text, i, scope, missing, depth)
        out.append(piece)
        size += len(piece)
        if size > MAX_VALUE_CHARS:
            raise _Bound(f"a value longer than {MAX_VALUE_CHARS:,} characters")
    return "".join(out)


def _one_variable(text: str, i: int, scope: dict[str, str | None], missing: list[str], depth: int
                  ) -> tuple[str, int]:
    """The expansion of the `$...` at ``i`` and where the text after it starts (a `$` that starts none is itself)."""
    plain = _NAME.match(text, i + 1)
    if plain:
        return _value(plain.group(0), scope, missing), plain.end()
    if not text.startswith("{", i + 1):
        return "$", i + 1
    named = _NAME.match(text, i + 2)
    if not named:
        return "$", i + 1
    name, j = named.group(0), named.end()
    if text.startswith("}", j):
        return _value(name, scope, missing), j + 1
    op = next((o for o in (":-", ":+", "-", "+") if text.startswith(o, j)), None)
    if op is None:
        return "$", i + 1  # another form (`${A:?x}`, `${A#x}`): left as written, as before
    j += len(op)
    level, close = 0, -1
    for m in _BRACES.finditer(text, j):
        if m.group(0) == "}":
            if level == 0:
                close = m.start()
                break
            level -= 1
        else:
            level += 1
    if close < 0:
        return "$", i + 1
    word = text[j:close]
    present, value = name in scope, scope.get(name)
    if present and value is None:
        missing.append(name)
        return "", close + 1
    if op in (":-", "-"):
        used = not present or (op == ":-" and value == "")
    else:
        used = present and (value != "" or op == "+")
    if op in (":-", "-") and not used:
        return str(value), close + 1
    if not used:
        return "", close + 1
    return (_expand(word, scope, missing, depth + 1) if "$" in word else word), close + 1


def _value(name: str, scope: dict[str, str | None], missing: list[str]) -> str:
    if name not in scope or scope[name] is None:
        missing.append(name)  # unset: Docker makes it empty, an image name it cannot be; None: not known
        return ""
    return str(scope[name])


def _json_words(args: str) -> list[str] | None:
    if not args.startswith("["):
        return None
    try:
        value = json.loads(args)
    except ValueError:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def _command_tokens(ins: Instruction, shell: list[str] | None, display: str, lines: list[str]) -> list[Any]:
    """ENTRYPOINT/CMD as the words the container runs, each at the line it was written on."""
    from vramlint.cmdline import Token

    exec_form = _json_words(ins.args)
    if exec_form is not None:
        out = []
        cursor = ins.line - 1
        for word in exec_form:
            located = Location(display, ins.line, ins.column)
            quoted = json.dumps(word)
            for k in range(cursor, min(ins.last_line, len(lines))):
                col = lines[k].find(quoted)
                if col >= 0:
                    located, cursor = Location(display, k + 1, col + 2), k
                    break
            out.append(Token(word, located))
        return out
    # shell form: the instruction's own lines with the keyword blanked, so each word keeps its line and column
    # (the shell reads the `\` line continuations as Docker does)
    raw = lines[ins.line - 1:ins.last_line]
    body = [" " * (ins.column - 1) + raw[0][ins.column - 1:]] + [
        " \\" if not r.strip() or r.strip().startswith("#") else r for r in raw[1:]]
    script = Token("\n".join(body), Location(display, ins.line - 1, 1), block="|", indent=1, lines=lines)
    start = Location(display, ins.line, ins.column)
    words = shell or ["/bin/sh", "-c"]
    return [Token(w, start) for w in words] + [script]


@dataclass
class DockerfileRecord:
    """What a scanned Dockerfile gives on its own: the server its final stage starts, and what is said about it.
    Kept apart until the join: a Dockerfile that a scanned compose service builds is read through that service,
    whose `entrypoint`/`command` replace the image's ENTRYPOINT/CMD (Docker's rules), so it is no second server."""

    path: str  # real path on disk, compared with the Dockerfiles compose services build
    servers: list[Any]
    problems: list[Any]
    # real paths of the launcher files its servers were read through (a supervisord configuration): no servers of
    # their own while this record's servers count
    followed: list[str] = field(default_factory=list)


def pin_source(built: BuiltImage) -> str | None:
    """How reports name where a built image's pinned vLLM comes from (None when the RUN pins no release)."""
    version, where = built.vllm_pin
    if version and built.vllm_source is not None:
        return f"a git checkout of {built.vllm_source.url} at its release tag {built.vllm_source.ref} " \
               f"({where.file}:{where.line})"
    return f"RUN pip install vllm=={version} ({where.file}:{where.line})" if version else None


def source_build_of(built: BuiltImage) -> Any:
    """The SourceBuild of vLLM of no release that a built image holds (a fork, a branch, a commit), or None."""
    source = built.vllm_source
    return source if source is not None and source.release is None else None


def set_built_version(server: Any, built: BuiltImage) -> str | None:
    """Give ``server`` the vLLM a built image's RUN lines install (a pinned release, a release tag's checkout, or
    a source build of no release) and return the note that says it, if any (None when nothing is installed)."""
    if built.vllm_pin is None:
        return None
    source = source_build_of(built)
    server.vllm_version, server.vllm_version_source = built.vllm_pin[0], pin_source(built)
    if source is not None:
        # said once per source build by VRL009, whatever the number of servers that run it
        server.vllm_source_build = source
        return None
    if built.vllm_pin[0] is None:
        return unpinned_note(built)
    return None


def unpinned_note(built: BuiltImage) -> str:
    where = built.vllm_pin[1]
    return (f"{where.file} line {where.line} installs vLLM with pip without pinning one release, over the base "
            "image's: the vLLM version is not known (pin it: vllm==X)")


def read_dockerfile_servers(text: str, display: str, path: str) -> DockerfileRecord:
    """The vLLM server a Dockerfile's final stage starts when run as built (`docker run IMAGE` with no arguments):
    its ENTRYPOINT (or the base image's, for a vLLM image) with its CMD, its ENV, the image and version of the
    FROM the stage starts from (ARG defaults only: no build arguments are known here). A Dockerfile that only
    builds an image (no ENTRYPOINT/CMD of its own) starts no server by itself."""
    import os

    from vramlint.cmdline import find_vllm_invocation, is_vllm_image
    from vramlint.model import Problem, Server
    from vramlint.versions import version_from_image

    record = DockerfileRecord(os.path.realpath(path), [], [])
    built = read_built_image(text, display, None, {})
    if isinstance(built, str):
        # on the line of its cause when it has one (an unclosed here-document was said on line 1)
        record.problems.append(Problem(display, getattr(built, "line", 1), 1,
                                       f"{built}: the vLLM server it may start is not checked", level="note"))
        return record
    for where, message in built.bounds:
        record.problems.append(Problem(where.file, where.line, where.column, message, level="warning"))
    entry, cmd = built.entrypoint, built.cmd
    if entry is None and cmd is None:
        return record  # an image for others to run with their arguments: the manifests that run it are the servers
    image = built.base
    # Docker: an exec-form ENTRYPOINT gets the CMD words as its arguments; a shell-form one (`/bin/sh -c script`)
    # gets them after the script, as $0 $1 ..., which the script ignores unless it names them
    # the arguments are read as the release the RUN lines install, when they pin one, reads them
    inv = find_vllm_invocation(list(entry or []), list(cmd or []), image, dict(built.env),
                               version=built.vllm_pin[0] if built.vllm_pin else None)
    words = list(entry or []) + list(cmd or [])
    launcher_note, launched = None, None
    if inv is None:
        from vramlint.extract import launchers, scripts

        # the launcher the image runs, from the folder `docker build` is usually run in: the Dockerfile's own
        folder = display.replace("\\", "/").rsplit("/", 1)[0] if "/" in display.replace("\\", "/") else "."
        inv, launcher_note, followed_why, launched, read = launchers.follow_image_launcher(
            words, built, os.path.dirname(path) or ".", folder, image, dict(built.env), dict(built.env_locations),
            f", taking the Dockerfile's folder ({folder}) as the build context, as `docker build {folder}` does "
            "(a build run from elsewhere copies other files)")
        if read is not None and launched is not None:
            record.followed.append(read)
    if inv is None:
        call = scripts.script_call(words)
        if followed_why is not None:
            why = f"what its ENTRYPOINT/CMD runs is not read: {followed_why}"
        elif call is not None and call.path.text:
            why = (f"runs the script {call.path.text}, which is in the image: no COPY/ADD of this Dockerfile puts it "
                   "there from its folder")
        elif image is None and built.unknown_args:
            why = (f"its FROM {built.base_written} needs {', '.join(built.unknown_args)}, which no ARG default sets: "
                   "the image and its entrypoint are not known")
        else:
            # what the container runs, as written: another program (a benchmark client on vLLM's image) or a
            # command line vramlint cannot read
            shown = " ".join(t.text for t in words[:3] if getattr(t, "text", None)) or "(unknown)"
            why = (f"its ENTRYPOINT/CMD runs `{shown[:80]}`, in which vramlint finds no vLLM server: if it starts "
                   "one, that server is not checked")
        first = next((t.location for t in words if getattr(t, "location", None) is not None), built.base_location)
        tail = "" if why.endswith("not checked") else "; the server it may start is not checked"
        record.problems.append(Problem(display, first.line, first.column, f"this Dockerfile mentions vLLM but {why}"
                                       f"{tail}", level="note"))
        return record
    location = inv.location if inv.location is not None and inv.location.file == display else None
    location = location or next((t.location for t in (entry or []) + (cmd or [])
                                 if getattr(t, "location", None) is not None), built.base_location)
    server = Server(file=display, location=location, source_format="dockerfile", kind="Dockerfile",
                    name=display.replace("\\", "/").rsplit("/", 1)[-1])
    server.container = server.name
    if image is not None:
        server.image, server.image_location = image, built.base_location
        server.vllm_version = version_from_image(image)
    if built.vllm_pin is not None and (note := set_built_version(server, built)):
        server.notes.append(note)
    from vramlint.extract.shell_scripts import fill_from_invocation

    server.env, server.env_locations = dict(built.env), dict(built.env_locations)
    if launched is not None:  # a supervisord program's environment= over the image's ENV
        server.env.update(launched["env"])
        server.env_locations.update(launched["env_locations"])
        server.notes.extend(launched["notes"])
    if launcher_note is not None:
        server.notes.append(launcher_note)
        if entry is None and is_vllm_image(image):
            server.notes.append(f"the Dockerfile sets no ENTRYPOINT, so Docker keeps the one of {image} (vLLM's "
                                "server) and passes the CMD to it as arguments: read here as the command it names, "
                                "which it runs only where the ENTRYPOINT is replaced (`ENTRYPOINT []` in the "
                                "Dockerfile, `docker run --entrypoint`, a pod's `command`)")
    fill_from_invocation(server, inv)
    # an image is run with the words `docker run IMAGE ...` (a pod's args, a service's command) add to its CMD:
    # a Dockerfile that names no model leaves it to them, not to vLLM's default
    server.model_default = False
    via = f" (stages {' <- '.join(built.stages)})" if len(built.stages) > 1 else ""
    if image is None:
        server.notes.append(f"FROM {built.base_written}{via} (line {built.base_location.line}) is not known"
                            + (f": it needs {', '.join(built.unknown_args)}, which no ARG default sets"
                               if built.unknown_args else "") + ": the vLLM version is not known")
    elif not is_vllm_image(image) and built.vllm_pin is None:
        server.notes.append(f"FROM {image}{via} is not a vLLM image vramlint knows: the vLLM version is not known")
    record.servers.append(server)
    return record
