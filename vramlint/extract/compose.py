"""docker compose files: every service that runs a vLLM server.

Interpolation policy: docker compose substitutes `${VAR}` from the shell environment and the `.env` file
beside the compose file. A linter in CI must give the same answer on every machine, so only `.env` (and the
`${VAR:-default}` defaults written in the file) are used; a variable set nowhere in the repository is
*unknown* (never empty, never taken from the CI runner's environment) and the server says so in its notes.
The devices a service gets are read with the same care: `NVIDIA_VISIBLE_DEVICES`, `CUDA_VISIBLE_DEVICES` or
`device_ids` written through a variable the repository does not set (a per-node `.env`, a scheduler, the shell
set it) are unknown devices, and with a `${VAR:-default}` they are the default's devices, said as assumed: engines
that share a GPU only through such defaults get a warning, never an error.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from vramlint.cmdline import (
    MAX_EXPANDED_CHARS,
    UNKNOWN_MARK,
    Token,
    find_vllm_invocation,
    has_unknown_mark,
    is_vllm_image,
    split_shell,
    split_token,
    yaml_token,
)
from vramlint.extract.dockerfile import BuiltImage
from vramlint.extract.gaudi import visible_gaudi
from vramlint.fsread import Refusal, is_inside, read_text
from vramlint.intparse import small_int
from vramlint.model import GpuRequest, Location, Problem, Server
from vramlint.versions import version_from_image
from vramlint.yamlload import join_path, key_location, value_location

_COMPOSE_KEYS = {"build", "image", "command", "entrypoint", "environment", "deploy", "ports", "volumes",
                 "container_name", "gpus", "runtime", "env_file", "extends", "depends_on", "restart", "networks"}


def is_compose(doc: Any) -> bool:
    """A compose file: a top-level `services` mapping whose entries look like containers."""
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict):
        return False
    services = data.get("services")
    if not isinstance(services, dict) or not services:
        return False
    if "apiVersion" in data or "kind" in data:
        return False
    return any(isinstance(s, dict) and (_COMPOSE_KEYS & set(s)) for s in services.values())


# ---------------------------------------------------------------------------------------------------------------
# .env files and interpolation


def read_env_file(path: Path | str, expand: bool = False,
                  problems: list[Problem] | None = None) -> dict[str, str] | Refusal:
    """A dotenv file as compose reads it: `KEY=VALUE`, `export KEY=VALUE`, quotes, `#` comments; or why it was
    not read (outside the scanned tree, not a regular file, too large: see `vramlint.fsread`). ``expand``: values
    are interpolated as compose does for the project's `.env` (`parse_env_text`)."""
    text = read_text(str(path), errors="replace")
    if isinstance(text, Refusal):
        return text
    return parse_env_text(text, expand=expand, file=_display(Path(path)), problems=problems)


def _expand_env_value(value: str, earlier: dict[str, str]) -> tuple[str, str | None]:
    """A `.env` value with `${VAR}` references interpolated from the variables set above it (compose-go's dotenv
    reader expands unquoted and double-quoted values; the shell's environment where compose runs is not known
    here, so a variable not set above is unknown), and why it is unknown when it is past what vramlint reads: a
    value past the expansion bound, or nested deeper than the interpolation reads, is unknown, not taken as
    written."""
    interp = Interpolator(earlier, "<.env>")
    expanded = interp(value)
    if interp.past_bound:
        return UNKNOWN_MARK, interp.past_bound
    if UNKNOWN_MARK in expanded and len(expanded) > len(UNKNOWN_MARK):
        return UNKNOWN_MARK, None  # unknown in part is unknown: one mark, said where it became unknown
    if len(expanded) > MAX_EXPANDED_CHARS:
        return UNKNOWN_MARK, f"expands past {MAX_EXPANDED_CHARS:,} characters (vramlint's bound)"
    if "${" in expanded:
        return UNKNOWN_MARK, "holds a `${` that is not closed, which vramlint does not read"
    return expanded, None


def parse_env_text(text: str, expand: bool = False, file: str = ".env",
                   problems: list[Problem] | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    # compose-go's dotenv reader ends a value at LF only: a U+2028, NEL or form feed inside one is part of it
    # (str.splitlines would start a new variable there)
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[7:].lstrip()
        key, eq, value = line.partition("=")
        key = key.strip()
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", key):
            continue
        value = value.strip()
        quote = value[:1] if value[:1] in ("'", '"') and value[-1:] == value[:1] and len(value) >= 2 else ""
        if quote:
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if expand and quote != "'" and "$" in value:
            value, why = _expand_env_value(value, out)
            if why is not None and problems is not None:
                problems.append(Problem(file, number, None, f"{key}: its value {why}: unknown", level="warning"))
        out[key] = value
    return out


_NAME_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# compose-go reads `${A:-${B:-...}}` nested to any depth; vramlint reads this many levels and says it stops there
MAX_INTERPOLATION_DEPTH = 32


def _closing_brace(text: str, at: int) -> int:
    """The index of the `}` that closes the `{` at ``at`` (braces counted, as compose-go's template reads a
    braced expression with its nested ones), or -1."""
    depth = 0
    i = at
    while True:
        j = min((k for k in (text.find("{", i), text.find("}", i)) if k >= 0), default=-1)
        if j < 0:
            return -1
        depth += 1 if text[j] == "{" else -1
        if depth == 0:
            return j
        i = j + 1


class Interpolator:
    """Compose `${VAR}` interpolation with unknown values marked (UNKNOWN_MARK), errors collected."""

    def __init__(self, variables: dict[str, str], file: str, said: set[str] | None = None):
        self.vars = variables
        self.file = file
        self.unknown_used: set[str] = set()
        # variables unset in the repository whose `${VAR:-default}` default was taken: the value is the file's
        # assumption, which the deployment may override where compose runs
        self.defaulted: set[str] = set()
        self.problems: list[Problem] = []
        # `${VAR:?}` notes already given in this file (by any service): one per variable
        self.said = said if said is not None else set()
        self.depth = 0
        self.past_bound: str | None = None  # why the last text was left unknown (nesting, length), if it was

    def __call__(self, text: str, loc: Location | None = None) -> str:
        if "$" not in text:
            return text
        if self.depth == 0:
            self.past_bound = None
        out: list[str] = []
        size = 0
        i, n = 0, len(text)
        while i < n:
            j = text.find("$", i)
            if j < 0:
                out.append(text[i:])
                break
            out.append(text[i:j])
            nxt = text[j + 1:j + 2]
            if nxt == "$":
                out.append("$")  # `$$` is a literal dollar (passed on to the container's shell)
                i = j + 2
            elif nxt == "{":
                end = _closing_brace(text, j + 1)
                if end < 0:
                    out.append("$")  # not an interpolation: kept as written
                    i = j + 1
                    continue
                out.append(self._braced(text[j + 2:end], loc))
                i = end + 1
            else:
                m = _NAME_START.match(text, j + 1)
                out.append(self._var(m.group(0), "", loc) if m else "$")
                i = m.end() if m else j + 1
            size += len(out[-1])
            if size > MAX_EXPANDED_CHARS:
                # compose makes it; vramlint reads no word that long (a 400,000-fold `${A}` made 40 MB)
                return self._unknown(loc, f"expands past {MAX_EXPANDED_CHARS:,} characters (vramlint's bound)")
        return "".join(out)

    def _braced(self, inner: str, loc: Location | None) -> str:
        nm = _NAME_START.match(inner)
        if not nm:
            self._problem(loc, f"invalid interpolation `${{{inner[:200]}}}`")
            return UNKNOWN_MARK
        if self.depth >= MAX_INTERPOLATION_DEPTH:
            return self._unknown(loc, f"nests `${{...}}` deeper than vramlint reads ({MAX_INTERPOLATION_DEPTH} "
                                      "levels; compose reads them all)")
        self.depth += 1
        try:
            return self._var(nm.group(0), inner[nm.end():], loc)
        finally:
            self.depth -= 1

    def _unknown(self, loc: Location | None, why: str) -> str:
        if self.past_bound is None:
            self.past_bound = why
            if self.file != "<.env>":  # (a .env value's bound is said on its own line by its reader)
                self._problem(loc, f"this value {why}: unknown", level="warning")
        return UNKNOWN_MARK

    def _var(self, name: str, rest: str, loc: Location | None) -> str:
        present = name in self.vars
        value = self.vars.get(name)
        if not rest:
            if present:
                return value or ""
            self.unknown_used.add(name)
            return UNKNOWN_MARK
        for op in (":-", "-"):
            if rest.startswith(op):
                default = self(rest[len(op):], loc)
                if not present or (op == ":-" and value == ""):
                    if not present:
                        self.defaulted.add(name)
                    return default
                return value or ""
        for op in (":?", "?"):
            if rest.startswith(op):
                if not present or (op == ":?" and value == ""):
                    msg = rest[len(op):] or f"{name} is required"
                    # Compose stops with this message only when the variable is unset where compose runs: a
                    # required variable (a token, a host path) is normally set there or in a .env that is not
                    # committed, so the repository cannot say it fails. The value is unknown, said once.
                    if f"?{name}" not in self.said:
                        self.said.add(f"?{name}")
                        self._problem(loc, f"${{{name}{op}...}}: {name} is not set in the repository's .env, so "
                                           f"its value is unknown (compose stops with '{msg}' when it is not set "
                                           "where compose runs either)", level="note")
                    self.unknown_used.add(name)
                    return UNKNOWN_MARK
                return value or ""
        for op in (":+", "+"):
            if rest.startswith(op):
                if not present:
                    self.unknown_used.add(name)
                    return UNKNOWN_MARK
                is_set = value != "" or op == "+"
                return self(rest[len(op):], loc) if is_set else ""
        self._problem(loc, f"unsupported interpolation `${{{name}{rest}}}`")
        return UNKNOWN_MARK

    def _problem(self, loc: Location | None, message: str, level: str = "error") -> None:
        self.problems.append(Problem(self.file, loc.line if loc else None, loc.column if loc else None, message,
                                     level=level))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------------
# Service layering (extends, merge keys)


class _Layer:
    """One mapping that contributes keys to a service: the service itself or what it extends."""

    def __init__(self, node: dict, file: str, lines: list[str], path: str):
        self.node, self.file, self.lines, self.path = node, file, lines, path


# compose follows an `extends` chain of any length; vramlint reads this many services of one chain (each service's
# keys are looked up through its whole chain) and says where it stops, once per file
MAX_EXTENDS_DEPTH = 32


def _layers(services: dict, name: str, file: str, lines: list[str], base_dir: str | None,
            problems: list[Problem], depth: int = 0, seen: tuple = (), said: set[str] | None = None) -> list[_Layer]:
    """The service's own mapping first, then what it extends (nearest first)."""
    node = services.get(name)
    if not isinstance(node, dict):
        return []
    layers = [_Layer(node, file, lines, join_path("services", name))]
    ext = node.get("extends")
    if ext is None:
        return layers
    here = (os.path.realpath(file), name)
    seen = (*seen, here)
    if isinstance(ext, str):
        base_name, base_file = ext, None
    elif isinstance(ext, dict):
        base_name, base_file = ext.get("service"), ext.get("file")
    else:
        return layers
    if not isinstance(base_name, str):
        return layers
    if depth + 1 >= MAX_EXTENDS_DEPTH:
        # (before 0.1: cut after 9 services without a word, and the services made from the chain went unreported)
        if said is None or "extends-depth" not in said:
            if said is not None:
                said.add("extends-depth")
            loc = key_location(file, node, "extends")
            problems.append(Problem(
                file, loc.line if loc else None, loc.column if loc else None,
                f"the extends chain of service {seen[0][1]} is longer than {MAX_EXTENDS_DEPTH} services: vramlint "
                f"stops at {name}, which extends {base_name}{' in ' + str(base_file) if base_file else ''} (compose "
                "follows it), so what the services further down set (image, command, devices) is unknown for the "
                "services that extend it; a vLLM server among them may go unchecked (said once a file)",
                level="warning"))
        return layers
    if base_file:
        if base_dir is None:
            problems.append(Problem(file, None, None, f"service {name} extends {base_file}, which was not read"))
            return layers
        path = Path(base_dir) / str(base_file)
        text = read_text(str(path))
        if isinstance(text, Refusal):
            loc = value_location(file, ext, "file") if isinstance(ext, dict) else None
            loc = loc or key_location(file, node, "extends")
            if text.missing:
                message, level = f"service {name} extends {base_file}: no such file", "error"
            else:
                # compose would read it; vramlint does not (see vramlint.fsread), so the base is unknown
                message = f"service {name} extends {base_file}, which is {text.reason}: not read"
                level = "warning"
            problems.append(Problem(file, loc.line if loc else None, loc.column if loc else None, message, level))
            return layers
        from vramlint.yamlload import load_shared

        # read, never changed: the file every service extends is parsed once
        docs, probs = load_shared(text, _display(path))
        problems.extend(probs)
        if not docs or not isinstance(docs[0].data, dict) or not isinstance(docs[0].data.get("services"), dict):
            return layers
        target = (os.path.realpath(docs[0].file), base_name)
        if target in seen:
            _say_extends_cycle(file, node, ext, name, seen, target, problems)
            return layers
        return layers + _layers(docs[0].data["services"], base_name, docs[0].file, docs[0].lines,
                                str(path.parent), problems, depth + 1, seen, said)
    if (here[0], base_name) in seen:
        _say_extends_cycle(file, node, ext, name, seen, (here[0], base_name), problems)
        return layers
    return layers + _layers(services, base_name, file, lines, base_dir, problems, depth + 1, seen, said)


def _say_extends_cycle(file: str, node: dict, ext: Any, name: str, seen: tuple, target: tuple,
                       problems: list[Problem]) -> None:
    """compose refuses an `extends` chain that comes back to a service already in it (compose-go's loader
    reports the circular reference and loads nothing): an error on the `extends` that closes the cycle."""
    loc = (value_location(file, ext, "service") if isinstance(ext, dict) else None) or \
        key_location(file, node, "extends")
    chain = [f"{_display(Path(f))}:{n}" for f, n in seen[seen.index(target):]] + [f"{_display(Path(target[0]))}:"
                                                                                 f"{target[1]}"]
    problems.append(Problem(file, loc.line if loc else None, loc.column if loc else None,
                            f"service {name}: its extends chain comes back to a service already in it "
                            f"({' -> '.join(chain)}); compose refuses a circular extends"))


def _display(path: Path) -> str:
    """Relative to the current folder, or absolute when that climbs out of it (`/proc/self/environ`, not
    `../../proc/self/environ`), as every path of a run is said (vramlint.discover.display_path)."""
    from vramlint.discover import display_path

    rel = display_path(path)
    if os.path.isabs(rel):
        return rel
    if os.path.islink(path):
        real = os.path.realpath(path)
        if is_inside(real):
            # a link to a file of the tree: said under the file's own name, as the walk reads it (vramlint.discover),
            # from the folder the link is in as the scan names it (a tree scanned through a linked folder keeps it)
            folder = os.path.dirname(path)
            target = os.path.relpath(real, os.path.realpath(folder or "."))
            shown = os.path.normpath(os.path.join(os.path.dirname(rel), target))
            if not shown.startswith(".."):
                return shown
    return rel


def _first(layers: list[_Layer], key: str) -> tuple[Any, _Layer | None]:
    for layer in layers:
        if key in layer.node:
            return layer.node[key], layer
    return None, None


# ---------------------------------------------------------------------------------------------------------------
# Extraction

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.I)
_NCCL_SHM_MIN = 1 << 30  # below ~1 GiB NCCL's shared-memory transport fails with several ranks


def parse_size(text: Any) -> int | None:
    """Compose byte sizes: 16gb, 8G, 1024m, 2g, plain bytes."""
    if isinstance(text, int):
        return text
    m = _SIZE.match(str(text))
    if not m:
        return None
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    size = float(m.group(1)) * mult
    # docker/go-units parseSize: strconv.ParseFloat's range error for a number past float64 is compose's refusal
    return int(size) if size < float("inf") else None


def extract_compose(doc: Any, env_files_dir: str | None, built: list[str] | None = None
                    ) -> tuple[list[Server], list[Problem]]:
    """Every vLLM server among the services of a compose document.

    ``env_files_dir`` is the compose file's directory (for `.env`, `env_file:` and `extends: file:`); None
    (standard input) reads none of them. ``built`` gets the real path of each Dockerfile a service builds
    (whatever the service runs), so that the Dockerfile is not read as a server of its own as well.
    """
    data = doc.data
    file = doc.file
    lines = doc.lines
    problems: list[Problem] = []
    servers: list[Server] = []
    if not isinstance(data, dict) or not isinstance(data.get("services"), dict):
        return servers, problems
    variables: dict[str, str] = {}
    dotenv_read = False
    if env_files_dir is not None:
        dotenv = Path(env_files_dir) / ".env"
        if os.path.lexists(dotenv):
            read = read_env_file(dotenv, expand=True, problems=problems)
            if isinstance(read, Refusal):
                problems.append(Problem(_display(dotenv), None, None, f".env is {read.reason}: not read; the "
                                        "variables it sets are unknown", level="warning"))
            else:
                variables = read
                dotenv_read = True
    if env_files_dir is not None:
        problems.extend(_include_problems(data, file, env_files_dir))
    services = data["services"]
    said: set[str] = set()  # env_file problems said once per file and path, whichever services name them
    read: set[str] = set()
    override = _default_override(file, env_files_dir, problems) if env_files_dir is not None else None
    for name in list(services):
        try:
            server = _service(services, str(name), file, lines, env_files_dir, variables, dotenv_read, problems,
                              said, project=data, built=built, override=override)
        except (TypeError, ValueError, AttributeError) as exc:  # malformed service: say so, keep going
            loc = key_location(file, services, name)
            problems.append(Problem(file, loc.line if loc else None, loc.column if loc else None,
                                    f"service {name}: could not be read ({exc})"))
            continue
        if server is not None:
            servers.append(server)
            read.add(str(name))
    _say_override_services(services, read, file, env_files_dir, problems)
    _share_source_builds(servers, services)
    _mark_shared_gpus(servers)
    return servers, problems


# compose-go's cli/options.go DefaultFileNames and DefaultOverrideFileNames, in its order of preference: with no
# `-f`, `docker compose` reads the first base file of the folder, then the first override file beside it over it
BASE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
OVERRIDE_NAMES = ("compose.override.yml", "compose.override.yaml", "docker-compose.override.yml",
                  "docker-compose.override.yaml")


def _first_named(folder: str, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if os.path.isfile(os.path.join(folder, n))), None)


def _default_override(file: str, base_dir: str, problems: list[Problem]) -> tuple[dict, str, list[str]] | None:
    """The override file `docker compose` applies over this file by default (its services, file, lines), when this
    file is the folder's base file by compose-go's order and an override file is beside it; else None."""
    this = os.path.basename(file)
    if _first_named(base_dir, BASE_NAMES) != this:
        return None
    name = _first_named(base_dir, OVERRIDE_NAMES)
    if name is None:
        return None
    path = Path(base_dir) / name
    text = read_text(str(path))
    if isinstance(text, Refusal):
        problems.append(Problem(file, None, None, f"{name}, which `docker compose` applies over this file by "
                                f"default, is {text.reason}: not read; what it sets is unknown", level="warning"))
        return None
    from vramlint.yamlload import load_shared

    docs, _probs = load_shared(text, _display(path))  # its own problems are said where it is read itself
    if not docs or not isinstance(docs[0].data, dict) or not isinstance(docs[0].data.get("services"), dict):
        return None
    return docs[0].data["services"], docs[0].file, docs[0].lines


def _say_override_services(services: dict, read: set[str], file: str, base_dir: str | None,
                           problems: list[Problem]) -> None:
    """Services naming vLLM with neither `image`, `build` nor `extends` are an override file's: Compose refuses such
    a service on its own, and merges it over a base file's service of that name (merge.md: `command` replaced,
    `environment` merged). vramlint reads each compose file alone, so one note says that what it sets is not
    checked (audit24 held out HM3: 13 `docker-compose.<variant>.yml` files of apnex/k8s-vllm, silent)."""
    from vramlint.prefilter import prefilter

    names = [str(n) for n, svc in services.items() if str(n) not in read and isinstance(svc, dict)
             and not {"image", "build", "extends"} & set(svc) and prefilter(repr(svc))]
    if not names:
        return
    this = os.path.basename(file)
    folder = base_dir if base_dir is not None else os.path.dirname(file)
    base = next((b for b in BASE_NAMES if b != this and os.path.isfile(os.path.join(folder, b))), None)
    if base is not None and _first_named(folder, OVERRIDE_NAMES) == this and _first_named(folder, BASE_NAMES) == base:
        return  # `docker compose` applies it over its base by default, and it is read with that base's services
    if base is not None:
        how = f"Compose applies it over a base file named with `-f` (`docker compose -f {base} -f {this}`)"
    else:
        how = (f"Compose applies it over a base file named with `-f` (`docker compose -f BASE -f {this}`); no "
               "compose file of a default name is beside it")
    loc = key_location(file, services, names[0])
    more = f" (and {len(names) - 1} more: {', '.join(names[1:4])}{', ...' if len(names) > 4 else ''})" \
        if len(names) > 1 else ""
    problems.append(Problem(file, loc.line if loc else None, loc.column if loc else None, (
        f"service {names[0]}{more} has neither image nor build: this is a compose override file; {how}. vramlint "
        "reads each compose file alone, so what it sets is not checked with its base"), level="note"))


def _share_source_builds(servers: list[Server], services: dict) -> None:
    """A service that runs, without a `build:` of its own, the image another service of the file builds (compose
    tags a build with the service's `image:`) runs the vLLM that build installs from source. The tag as written is
    compared, not the server's image, which for a build FROM a vLLM image is that base."""
    tags = {str(name): svc["image"] for name, svc in services.items()
            if isinstance(svc, dict) and svc.get("build") is not None and isinstance(svc.get("image"), str)}
    built = {tags[s.name]: s.vllm_source_build for s in servers
             if s.vllm_source_build is not None and s.name in tags}
    for server in servers if built else ():
        source = built.get(server.image)
        if source is not None and server.name not in tags and server.vllm_source_build is None \
                and server.vllm_version is None:
            server.vllm_source_build = source


def _include_problems(data: dict, file: str, base_dir: str) -> list[Problem]:
    """What compose's `include:` names that vramlint does not read, each on its line. An included file inside the
    tree is scanned as a file of its own (its services are checked there); one outside the tree, or not a regular
    file, is not read, and the services it would add are not checked. compose (compose-spec `include`: a path,
    or `path:` (one or a list), `env_file:` and `project_directory:`) resolves the paths from the including file's
    folder, and fails when an included file does not exist."""
    from vramlint.fsread import outside_reason

    include = data.get("include")
    if not isinstance(include, list):
        return []
    out: list[Problem] = []
    for i, item in enumerate(include[:1000]):
        refs: list[tuple[Any, Any, Any, str]] = []  # (container, key, path, what it holds)
        if isinstance(item, str):
            refs.append((include, i, item, "services it defines are not checked"))
        elif isinstance(item, dict):
            for key, what in (("path", "services it defines are not checked"),
                              ("env_file", "variables it sets are unknown")):
                value = item.get(key)
                if isinstance(value, str):
                    refs.append((item, key, value, what))
                elif isinstance(value, list):
                    refs.extend((value, j, v, what) for j, v in enumerate(value[:1000]) if isinstance(v, str))
        for node, key, path, what in refs:
            if UNKNOWN_MARK in path or "$" in path:
                continue  # named by a variable: the interpolation says what is unknown
            host = os.path.join(base_dir, os.path.expanduser(path) if path.startswith("~") else path)
            loc = value_location(file, node, key)
            line, column = (loc.line, loc.column) if loc else (None, None)
            why = outside_reason(host)
            if why is None and not os.path.lexists(host):
                out.append(Problem(file, line, column, f"include {path} is not in the repository (compose fails "
                                   f"without it): the {what}", level="note"))
                continue
            if why is None and not os.path.isfile(host):
                why = "not a regular file"
            if why is not None:
                out.append(Problem(file, line, column, f"include {path} is {why}: not read; the {what}",
                                   level="warning"))
    return out


def _service(services: dict, name: str, file: str, lines: list[str], base_dir: str | None,
             variables: dict[str, str], dotenv_read: bool, problems: list[Problem],
             said: set[str] | None = None, project: dict | None = None, built: list[str] | None = None,
             override: tuple[dict, str, list[str]] | None = None) -> Server | None:
    said = said if said is not None else set()
    read_through = built  # the files the service is read through (its Dockerfile, a supervisord configuration)
    launcher_notes: list[str] = []
    layers = _layers(services, name, file, lines, base_dir, problems, said=said)
    if not layers:
        return None
    if override is not None and isinstance(override[0].get(name), dict):
        # the default override's service of this name, merged over it as compose-spec's merge.md says: its keys
        # first (a `command` replaces the base's), its `environment` over the base's
        layers.insert(0, _Layer(override[0][name], override[1], override[2], join_path("services", name)))
    interp = Interpolator(variables, file, said)
    if built is not None and base_dir is not None:
        # its own interpolator: what the service's reading says of unset variables is said there, not here
        host = _build_dockerfile(layers, base_dir, Interpolator(variables, file, set()))
        if host is not None:
            built.append(os.path.realpath(host))
    top = layers[0]

    # Environment: base layers first so the extending service overrides.
    env: dict[str, str | None] = {}
    env_locs: dict[str, Location] = {}
    env_file_problems: list[tuple[str, Problem]] = []  # said below: notes only for a vLLM server
    for layer in reversed(layers):
        for values in _env_files(layer, base_dir, interp, env_file_problems):
            for k, v in values.items():
                env[k] = v
                env_locs[k] = key_location(layer.file, layer.node, "env_file", join_path(layer.path, "env_file")) \
                    or Location(layer.file, 1)
        environment = layer.node.get("environment")
        epath = join_path(layer.path, "environment")
        if isinstance(environment, dict):
            for k, v in environment.items():
                loc = value_location(layer.file, environment, k, join_path(epath, str(k))) or \
                    key_location(layer.file, environment, k, join_path(epath, str(k)))
                env[str(k)] = _env_value(v, interp, loc, str(k))
                if loc:
                    env_locs[str(k)] = loc
        elif isinstance(environment, list):
            for i, item in enumerate(environment):
                if not isinstance(item, str):
                    continue
                loc = value_location(layer.file, environment, i, join_path(epath, i))
                k, eq, v = item.partition("=")
                k = k.strip()
                # `- NAME` without `=` passes the variable from the shell running compose: unknown here.
                env[k] = _env_value(v, interp, loc, k) if eq else None
                if loc:
                    env_locs[k] = loc

    image, image_layer = _first(layers, "image")
    image_text = None
    image_loc = None
    if image is not None:
        image_loc = value_location(image_layer.file, image_layer.node, "image", join_path(image_layer.path, "image"))
        image_text = interp(str(image), image_loc)
        if UNKNOWN_MARK in image_text:
            image_text = image_text.replace(UNKNOWN_MARK, "")  # keeps the repository name for recognition

    entry_tokens = _command_tokens(layers, "entrypoint", interp)
    cmd_tokens = _command_tokens(layers, "command", interp)
    # A service built from a Dockerfile in the repository runs the image that Dockerfile makes: its FROM (the
    # version, the vLLM entrypoint), its ENTRYPOINT/CMD where compose sets no entrypoint/command, its ENV.
    built = _built_image(layers, base_dir, interp, file) if image_text is None or not is_vllm_image(image_text) \
        else None
    built_used = None
    named = None  # the build of a service whose `image:` only names what it is tagged (`image: vllm-fork:dev`)
    if built is None and image_text is not None and version_from_image(image_text) is None:
        # the vLLM in it is what the Dockerfile installs, when it says (compose pulls such a name only when a
        # registry has it; a release repository's tag is read as that release instead)
        # read with its own interpolation: what the build leaves unknown is said only when the build is used
        named = _built_image(layers, base_dir, Interpolator(interp.vars, file), file)
        named = named if isinstance(named, BuiltImage) and named.vllm_pin is not None else None
    if isinstance(built, BuiltImage):
        for where, message in built.bounds:
            key = f"{where.file}:{where.line}:{message}"  # a Dockerfile several services build is said once
            if key not in said:
                said.add(key)
                problems.append(Problem(where.file, where.line, where.column, message, level="warning"))
        run_image = built.base if built.base and is_vllm_image(built.base) else image_text
        run_entry, run_cmd = entry_tokens, cmd_tokens
        if run_entry is None:
            run_entry = built.entrypoint
            if run_cmd is None:
                run_cmd = built.cmd  # compose's `entrypoint` clears the image's CMD; its `command` replaces it
        run_env = {**built.env, **env}
        inv = _find_invocation(run_entry, run_cmd, run_image, run_env, built.vllm_pin[0] if built.vllm_pin else None)
        if inv is not None:
            built_used = built
            image_text, entry_tokens, cmd_tokens = run_image, run_entry, run_cmd
            _built_env_under(env, env_locs, built)
            if run_image is not None and run_image == built.base:
                image_loc = built.base_location
    else:
        # Docker semantics: `entrypoint` replaces the image ENTRYPOINT (k8s `command`), `command` its CMD.
        # Lines like `serve MODEL ...` for an image whose ENTRYPOINT is `vllm` start with the sub-command.
        inv = _find_invocation(entry_tokens, cmd_tokens, image_text, env, named.vllm_pin[0] if named else None)
    script_note = None
    if inv is None:
        from vramlint.cmdline import TRITON_VLLM_BACKEND, hidden_vllm_command

        words = [t.text for t in (entry_tokens or []) + (cmd_tokens or [])]
        hidden = hidden_vllm_command(image_text, words, env)
        if read_through is not None:
            _note_handed_configs(words, layers, base_dir, interp, project, read_through)
        # what the container runs: the service's entrypoint/command, else the built image's ENTRYPOINT/CMD
        runs = (entry_tokens or []) + (cmd_tokens or [])
        if isinstance(built, BuiltImage):
            runs = (run_entry or []) + (run_cmd or [])
        inv, script_note, why, launched = _script_invocation(
            runs, layers, base_dir, interp, file, run_image if isinstance(built, BuiltImage) else image_text,
            run_env if isinstance(built, BuiltImage) else env, built if isinstance(built, BuiltImage) else None,
            {**built.env_locations, **env_locs} if isinstance(built, BuiltImage) else env_locs, read_through)
        if launched is not None:
            # supervisord's program: its environment= over the container's, and what was said of its command
            for key, value in launched["env"].items():
                env[key] = value
                if key in launched["env_locations"]:
                    env_locs[key] = launched["env_locations"][key]
            launcher_notes = launched["notes"]
        if inv is not None and isinstance(built, BuiltImage):
            # the built image's launcher runs: its FROM (version) and ENV are the server's, as for its own command
            built_used = built
            image_text = run_image
            _built_env_under(env, env_locs, built)
            if run_image is not None and run_image == built.base:
                image_loc = built.base_location
        if inv is None and (hidden is None or isinstance(built, BuiltImage)) and image is None:
            hidden = _built_vllm_image(layers, built) or hidden
        if inv is None:
            # a script that mentions vLLM is said even when the service itself does not
            if hidden is not None or (why is not None and "mentions vLLM" in why):
                at = key_location(file, services, name, top.path) or Location(file, 1, yaml_path=top.path)
                if why is not None:
                    # a script that was not read is said where the command names it (`entrypoint: [bash, x.sh]`)
                    named = next((t for t in (entry_tokens or []) + (cmd_tokens or []) if t.text and len(t.text) > 1
                                  and t.text in why and t.location is not None and (t.location.line or 0) >= 1), None)
                    if named is not None and named.location.file == file:
                        at = named.location
                elif hidden is not None and hidden.startswith(TRITON_VLLM_BACKEND) and image_loc is not None \
                        and image_loc.file == file:
                    at = image_loc  # Triton's vLLM backend is told by its image: said on the image's line
                text = "; ".join(x for x in (hidden, why) if x)
                problems.append(Problem(file, at.line, at.column, f"service {name}: {text}", level="note"))
            # an env_file missing from the repository is no news for a service that is not vLLM; one that
            # was refused (outside the tree, a FIFO) is, whatever the service
            _say_env_file_problems([p for p in env_file_problems if p[1].level != "note"], said, problems)
            return None
    _say_env_file_problems(env_file_problems, said, problems)
    loc = key_location(file, services, name, top.path) or Location(file, 1, yaml_path=top.path)
    server = Server(file=file, location=loc, source_format="compose", kind="compose service", name=name,
                    image=image_text or None, image_location=image_loc,
                    vllm_version=version_from_image(image_text))
    cname, _ = _first(layers, "container_name")
    server.container = interp(str(cname)) if cname is not None else name
    server.model, server.model_location = inv.model, inv.model_location
    server.model_default = inv.model_default
    server.args, server.arg_locations, server.unknown_args = inv.args, inv.arg_locations, inv.unknown_args
    env.update(inv.env)
    env_locs.update(inv.env_locations)
    server.env, server.env_locations = env, env_locs
    if script_note:
        server.notes.append(script_note)
    server.notes.extend(launcher_notes)
    if built_used is not None:
        via = f" (stages {' <- '.join(built_used.stages)})" if len(built_used.stages) > 1 else ""
        written = built_used.base_written if len(built_used.base_written) <= 80 else built_used.base_written[:80] + "..."
        if built_used.base is None and built_used.bounds:
            server.notes.append(f"built from {built_used.dockerfile}{via}: FROM {written} (line "
                                f"{built_used.base_location.line}) is not known, past one of vramlint's limits (said "
                                "on the Dockerfile's line): the vLLM version is not known")
        elif built_used.vllm_pin is not None:
            _take_built_version(server, built_used, f"built from {built_used.dockerfile}{via}",
                                built_used.base or written)
        else:
            server.notes.append(f"built from {built_used.dockerfile}{via}: FROM {built_used.base or written}"
                                + ("" if built_used.base and is_vllm_image(built_used.base) else
                                   ", not a vLLM image vramlint knows: the vLLM version is not known"))
    elif named is not None:
        _take_built_version(server, named, f"built from {named.dockerfile}", named.base or named.base_written)
    for path, where in inv.config_files:
        if where is not None:
            server.arg_locations.setdefault("config", where)
        server.args.setdefault("config", path or None)
        body = (inv.written or {}).get(path) if path else None
        if body is not None:  # written by the service's own script before vLLM reads it
            from vramlint.extract.vllm_config import read_written_config

            server.notes.append(read_written_config(server, path, body)[1])
            continue
        host = _config_on_host(path, layers, base_dir, interp, project)
        if host is None or not os.path.lexists(host):
            server.notes.append(f"--config {path or '(unknown)'}: vLLM reads more arguments from this file, "
                                "which is not beside the compose file (its settings are not included)")
        else:
            _merge_config_file(server, host, path, problems)
    server.startup_errors.extend(inv.startup_errors)
    server.unchecked.extend(inv.unchecked)
    server.opaque_args = server.opaque_args or inv.opaque_args
    for msg in inv.problems:
        # a message that starts by naming its line keeps it first: the problem is placed there (model.Problem)
        own_line = re.match(r"line \d+: ", msg)
        head = own_line.group(0) if own_line else ""
        problems.append(Problem(file, loc.line, loc.column, f"{head}service {name}: {msg[len(head):]}"))
    # an unset variable is said once per file, on the first service that uses it (the same note on every
    # service would repeat one fact)
    fresh = sorted(v for v in interp.unknown_used if f"${v}" not in said)
    if fresh:
        said.update(f"${v}" for v in fresh)
        where = ".env" if dotenv_read else "a .env file beside the compose file"
        server.notes.append(f"${{{', '.join(fresh)}}} not set in {where} and without a default: treated as unknown "
                            "(the shell environment is not read, so results do not depend on the machine)")
    server.gpu = _gpu(layers, env, env_locs, interp)
    server.shm = _shm(layers, server.args, interp)
    problems.extend(interp.problems)
    profiles, _ = _first(layers, "profiles")
    if isinstance(profiles, list):
        server.profiles = [str(p) for p in profiles if p is not None]
    replicas = None
    for layer in layers:
        deploy = layer.node.get("deploy")
        if isinstance(deploy, dict) and "replicas" in deploy:
            replicas = deploy["replicas"]
            break
    if replicas is not None:
        try:
            server.replicas = int(interp(str(replicas)))
        except ValueError:
            server.replicas = None
    return server


# Environment variables whose value the budget or the rules read; an unset `${VAR}` elsewhere in `environment`
# (a token, a log level) changes nothing vramlint says, so it is not worth a note.
_ENV_READ_PREFIXES = ("VLLM_", "CUDA_", "NVIDIA_", "HABANA_", "RAY_", "HF_MODEL", "HF_HUB_OFFLINE", "PYTORCH_")


def _env_value(v: Any, interp: Interpolator, loc: Location | None, key: str = "") -> str | None:
    if v is None:
        return None  # `KEY:` with no value: taken from the shell running compose, unknown here
    if isinstance(v, bool):
        v = "true" if v else "false"
    before = set(interp.unknown_used)
    text = interp(str(v), loc)
    if not key.startswith(_ENV_READ_PREFIXES):
        interp.unknown_used = before
    return None if UNKNOWN_MARK in text else text


def _note_handed_configs(words: list[str | None], layers: list[_Layer], base_dir: str | None, interp: Interpolator,
                         project: dict | None, read_through: list[str]) -> None:
    """The files of the project this service's own program is given by path (`--backend_config
    /tmp/vllm_config.yaml`, mounted from `./vllm_config.yaml`): read through the service, so a vLLM config file
    among them is that program's input, not a server of its own (vramlint.scan drops its standalone reading)."""
    for word in words:
        if not word or not word.startswith("/") or not word.endswith((".yaml", ".yml", ".json")):
            continue
        host = _config_on_host(word, layers, base_dir, interp, project)
        if host is not None and host.is_file():
            read_through.append(os.path.realpath(host))


def _config_on_host(path: str | None, layers: list[_Layer], base_dir: str | None, interp: Interpolator,
                    project: dict | None = None) -> Path | None:
    """Where a `--config` path of the container is on the host: through the service's bind mounts
    (`./conf:/etc/vllm`), its `secrets:` and `configs:` backed by a `file:` of the project, else a relative path
    taken from the compose file's directory."""
    if not path or base_dir is None:
        return None
    mounted = _secret_or_config_file(path, layers, project)
    if mounted is not None:
        return Path(base_dir) / os.path.expanduser(interp(mounted))
    volumes, _ = _first(layers, "volumes")
    for item in volumes if isinstance(volumes, list) else []:
        if isinstance(item, dict):
            source, target = item.get("source"), item.get("target")
        elif isinstance(item, str):
            parts = interp(item).split(":")
            source, target = (parts[0], parts[1]) if len(parts) >= 2 else (None, None)
        else:
            continue
        if not source or not target or not str(source).startswith((".", "/", "~")):
            continue  # a named volume: its content is not in the repository
        target = str(target).rstrip("/")
        if path == target or path.startswith(target + "/"):
            inner = path[len(target):].lstrip("/")
            host = Path(base_dir) / str(source)
            return host / inner if inner else host
    return None if path.startswith("/") else Path(base_dir) / path


def _build_spec(layers: list[_Layer], interp: Interpolator) -> tuple[str, str, str | None, dict[str, str | None]] | None:
    """(context, dockerfile, target, build args) of the service's `build:` as written (interpolated)."""
    build, _ = _first(layers, "build")
    if build is None:
        return None
    if not isinstance(build, dict):
        return interp(str(build)), "Dockerfile", None, {}
    args: dict[str, str | None] = {}
    raw = build.get("args")
    items = raw.items() if isinstance(raw, dict) else (
        (str(a).partition("=")[0], str(a).partition("=")[2] if "=" in str(a) else None) for a in raw
    ) if isinstance(raw, list) else ()
    for key, value in items:
        # `args: [NAME]` (or `NAME:` with no value) passes compose's environment: unknown here
        text = None if value is None else interp(str(value))
        args[str(key)] = None if text is None or UNKNOWN_MARK in text else text
    target = build.get("target")
    return (interp(str(build.get("context") or ".")), interp(str(build.get("dockerfile") or "Dockerfile")),
            interp(str(target)) if target is not None else None, args)


def _build_dockerfile(layers: list[_Layer], base_dir: str, interp: Interpolator) -> str | None:
    """The Dockerfile on disk the service's `build:` names, when it is in the repository."""
    spec = _build_spec(layers, interp)
    if spec is None:
        return None
    context, dockerfile, _target, _args = spec
    if UNKNOWN_MARK in context + dockerfile or re.match(r"^[a-z][\w+.-]*://|^git@", context):
        return None
    return dockerfile if os.path.isabs(dockerfile) else os.path.join(base_dir, context, dockerfile)


def _built_env_under(env: dict, env_locs: dict, built: BuiltImage) -> None:
    """The built image's ENV under the service's own `environment` (which wins), with where each was set."""
    for key, value in built.env.items():
        if key not in env:
            env[key] = value
            env_locs[key] = built.env_locations[key]


def _take_built_version(server: Server, built: BuiltImage, built_from: str, base: str) -> None:
    """The vLLM the build's RUN lines install becomes the server's, said on it (a source build of no release is
    said once per build by VRL009 instead, however many services run it)."""
    from vramlint.extract.dockerfile import set_built_version

    note = set_built_version(server, built)
    if server.vllm_source_build is not None:
        return
    version, where = built.vllm_pin
    if version:
        how = (f"its git checkout at {built.vllm_source.ref}" if built.vllm_source is not None
               else "its RUN pip install")
        server.notes.append(f"{built_from}: FROM {base}, vLLM {version} from {how} (line {where.line})")
    else:
        server.notes.append(f"{built_from}: {note}")


def _built_image(layers: list[_Layer], base_dir: str | None, interp: Interpolator, file: str) -> BuiltImage | str | None:
    """The image the service's `build:` makes, read from its Dockerfile; or why it is not read (a sentence); None
    without a `build:`."""
    from vramlint.extract.dockerfile import MAX_DOCKERFILE_BYTES, read_built_image

    spec = _build_spec(layers, interp)
    if spec is None:
        return None
    context, dockerfile, target, args = spec
    shown = f"{context.rstrip('/')}/{dockerfile}"
    written, _ = _first(layers, "build")
    if isinstance(written, dict) and written.get("dockerfile_inline") is not None:
        return "its Dockerfile is written inline (dockerfile_inline), which vramlint does not read"
    if base_dir is None or UNKNOWN_MARK in context + dockerfile:
        return f"{shown} is not known here"
    if re.match(r"^[a-z][\w+.-]*://|^git@", context):
        return f"its build context {context} is not in the repository"
    host = Path(dockerfile) if os.path.isabs(dockerfile) else Path(base_dir) / context / dockerfile
    display = _display(host)
    text = read_text(str(host), limit=MAX_DOCKERFILE_BYTES, errors="replace")
    if isinstance(text, Refusal):
        if text.missing:
            return f"{shown} is not among the scanned files"
        return f"{display} is {text.reason}: not read"
    built = read_built_image(text, display, target, args)
    if isinstance(built, str) and "vllm" in text.lower():
        return _NamesVllm(built)  # not read, past a bound: said, as the Dockerfile names vLLM
    return built


class _NamesVllm(str):
    """Why a Dockerfile that names vLLM was not read."""


def _secret_or_config_file(path: str, layers: list[_Layer], project: dict | None) -> str | None:
    """The project's `file:` behind a container path that a service's `secrets:` or `configs:` mounts (compose-spec:
    a secret is mounted at /run/secrets/<target>, target defaulting to its name; a config at its `target`, else
    /<name>), or None."""
    if not isinstance(project, dict):
        return None
    for section, default_dir in (("secrets", "/run/secrets/"), ("configs", "/")):
        granted, _ = _first(layers, section)
        declared = project.get(section)
        if not isinstance(granted, list) or not isinstance(declared, dict):
            continue
        for item in granted[:1000]:
            if isinstance(item, str):
                source, target = item, None
            elif isinstance(item, dict):
                source, target = item.get("source"), item.get("target")
            else:
                continue
            if not isinstance(source, str):
                continue
            target = str(target) if target is not None else source
            mount = target if target.startswith("/") else default_dir + target
            spec = declared.get(source)
            if mount == path and isinstance(spec, dict) and isinstance(spec.get("file"), str):
                return spec["file"]
    return None


def _built_vllm_image(layers: list[_Layer], built: BuiltImage | str | None) -> str | None:
    """What to say about a service built from a Dockerfile that vramlint could not read as a vLLM image, when its
    build names vLLM (context, Dockerfile, build args) or its Dockerfile was read: the change that lets it be read."""
    build, _ = _first(layers, "build")
    if build is None:
        return None
    if isinstance(build, dict):
        parts = [str(build.get("context") or "."), str(build.get("dockerfile") or "Dockerfile")]
        args = build.get("args")
        words = parts + ([f"{k} {v}" for k, v in args.items()] if isinstance(args, dict) else
                         [str(a) for a in args] if isinstance(args, list) else [])
    else:
        parts = [str(build), "Dockerfile"]
        words = parts
    shown = f"{parts[0].rstrip('/')}/{parts[1]}"
    if isinstance(built, BuiltImage):
        if not built.mentions_vllm and not any("vllm" in w.lower() for w in words):
            return None  # nothing says this image is vLLM's
        if built.base is None and built.bounds:
            return (f"built from {built.dockerfile}, whose FROM (line {built.base_location.line}) is not known, past "
                    "one of vramlint's limits (said on the Dockerfile's line): the image it starts from is not known, "
                    "so its vLLM command line is not checked")
        if built.base is None:
            unset = ", ".join(built.unknown_args)
            return (f"built from {built.dockerfile}, whose FROM {built.base_written} (line "
                    f"{built.base_location.line}) needs {unset}, which neither an ARG default nor build.args sets "
                    "here: the image it starts from is not known, so its vLLM command line is not checked (give "
                    f"{unset} a value in build.args or an ARG default)")
        from vramlint.cmdline import is_vllm_image

        runs = [t for t in (built.entrypoint or []) + (built.cmd or []) if getattr(t, "text", None)]
        if is_vllm_image(built.base) and runs:
            # vLLM is in the base, but what the container runs is the Dockerfile's own launcher
            first = runs[0]
            line = f" (line {first.location.line})" if getattr(first, "location", None) and first.location.line else ""
            return (f"built from {built.dockerfile} FROM {built.base} (line {built.base_location.line}), whose "
                    f"ENTRYPOINT/CMD runs {first.text}{line}, a launcher in which vramlint reads no vLLM command "
                    "line, and the service's command starts none, so its vLLM command line is not checked (a "
                    "`vllm serve` command in the service or the Dockerfile lets it be read)")
        return (f"built from {built.dockerfile} FROM {built.base} (line {built.base_location.line}), which is not "
                "a vLLM image vramlint knows, and neither its ENTRYPOINT/CMD nor the service's command starts a "
                "vLLM server vramlint can read, so its vLLM command line is not checked (FROM a vllm/vllm-openai "
                "image, or a `vllm serve` command, lets it be read)")
    if not any("vllm" in w.lower() for w in words) and not isinstance(built, _NamesVllm):
        return None
    why = built if isinstance(built, str) else f"{shown} is not read"
    names = "build names" if any("vllm" in w.lower() for w in words) else "Dockerfile names"
    return (f"built from {shown}, whose {names} vLLM, but {why}: the image it starts from and its ENTRYPOINT "
            "are not known, so its vLLM command line is not checked (scan the build context with the compose "
            "file, or set `image:` to the vLLM image it builds FROM)")


def _script_invocation(words: list[Any], layers: list[_Layer], base_dir: str | None, interp: Interpolator,
                       file: str, image: str | None, env: dict[str, str | None],
                       built: BuiltImage | None = None, env_locations: dict[str, Location] | None = None,
                       read_through: list[str] | None = None) -> tuple[Any, str | None, str | None, dict | None]:
    """(invocation, note, None, extra) when the service runs a script in the repository that starts vLLM, or
    supervisord with a configuration whose program does (``extra``: that program's environment and notes, else
    None); else (None, None, why it is not read or reads no server, None) - `why` None when the service runs no
    launcher. The real path of a supervisord configuration read goes to ``read_through`` (it is no server of its
    own then).

    The launcher is found through the service's bind mounts (what the container sees at run time), else, for a
    service built from a Dockerfile, through the COPY/ADD that put it in the image from the build context."""
    import os

    from vramlint.extract import launchers, scripts
    from vramlint.extract.supervisord import supervisord_call

    sv = supervisord_call(words)
    if sv is not None:
        import posixpath

        workdir = built.workdir if built is not None else "/"
        mounted = _config_on_host(posixpath.normpath(posixpath.join(workdir, sv.conf)), layers, base_dir,
                                  interp) if sv.conf else None
        if mounted is not None and mounted.is_file():
            text, why_not = scripts.read_script_file(str(mounted))
            display = os.path.normpath(os.path.join(os.path.dirname(file), os.path.relpath(mounted, base_dir or ".")))
            if text is None:
                return None, None, f"supervisord's configuration {sv.conf} ({display}) is not read: {why_not}", None
            inv, note, why, extra = launchers.supervisord_invocation(sv.conf, text, display, image, env,
                                                                   env_locations or {}, None)
            if inv is not None and read_through is not None:
                read_through.append(os.path.realpath(mounted))
            return inv, note, why, extra
        spec = _build_spec(layers, interp) if built is not None else None
        if spec is None or base_dir is None or UNKNOWN_MARK in spec[0]:
            return None, None, None, None
        context = Path(base_dir) / spec[0]
        shown = os.path.normpath(os.path.join(os.path.dirname(file), spec[0]))
        inv, note, why, extra, path = launchers.follow_image_launcher(words, built, str(context), shown, image, env,
                                                                    env_locations or {})
        if path is not None and read_through is not None:
            read_through.append(path)
        return inv, note, why, extra
    call = scripts.script_call(words)
    if call is None or not call.path.text:
        return None, None, None, None
    path = call.path.text
    copied = None
    if built is not None:
        import posixpath

        from vramlint.extract.image_files import context_source, unpacked_by_add

        in_image = posixpath.normpath(posixpath.join(built.workdir, path))
        host = _config_on_host(in_image, layers, base_dir, interp)
        spec = _build_spec(layers, interp)
        if host is None and spec is not None and base_dir is not None and UNKNOWN_MARK not in spec[0]:
            context = Path(base_dir) / spec[0]
            found = context_source(built, in_image, lambda rel: _is_dir(context / rel))
            if found is not None:
                host, copied = context / found[0], f"COPY {found[0]} (line {found[1]} of {built.dockerfile})"
                if _is_file(host) and unpacked_by_add(built, found[1], str(host)):
                    return None, None, (f"the script {path} it runs is in the archive {found[0]}, which ADD (line "
                                        f"{found[1]} of {built.dockerfile}) unpacks into the image: not read"), None
        if host is None:
            return None, None, (f"the script {path} it runs is in the image, and no COPY/ADD of {built.dockerfile} "
                                "puts it there from the build context"), None
    else:
        host = _config_on_host(path, layers, base_dir, interp)
    if host is None:
        return None, None, f"the script {path} it runs is in the image, not in the repository", None
    if not _is_file(host):
        return None, None, f"the script {path} it runs is not in the repository beside the compose file", None
    text, why_not = scripts.read_script_file(str(host))
    display = os.path.normpath(os.path.join(os.path.dirname(file), os.path.relpath(host, base_dir or ".")))
    if text is None:
        return None, None, f"the script {path} ({display}) is not read: {why_not}", None
    inv, note, why = scripts.launcher_invocation(call, text, display, image, env, copied)
    return inv, note, why, None


def _is_dir(path: Path) -> bool:
    # a path the repository writes may be longer than the system takes (a WORKDIR of 500,000 folders): not there
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _merge_config_file(server: Server, host: Path, path: str, problems: list[Problem]) -> None:
    from vramlint.extract.vllm_config import apply_config_file
    from vramlint.textfile import read_text as read_scanned
    from vramlint.yamlload import load_shared

    display = _display(host)
    text, skipped = read_scanned(str(host), display)
    if text is None:
        server.notes.append(f"--config {path}: {display} not read ({skipped.reason if skipped else 'unreadable'}); "
                            "its settings are not included")
        return
    # read only (apply_config_file changes nothing in it): the scan of the same file shares this parse
    docs, errors = load_shared(text, display)
    problems.extend(errors)
    if not docs:
        return
    apply_config_file(server, docs[0])
    server.notes.append(f"--config {path}: settings read from {display}")


def _say_env_file_problems(pending: list[tuple[str, Problem]], said: set[str], problems: list[Problem]) -> None:
    for key, problem in pending:
        if key not in said:
            said.add(key)
            problems.append(problem)


def _env_files(layer: _Layer, base_dir: str | None, interp: Interpolator,
               pending: list[tuple[str, Problem]]) -> list[dict[str, str]]:
    """The variables of each `env_file` of a layer, in order. What is not read goes to ``pending`` (keyed by
    file and path, said once), on the line that names it: a file not in the repository (a `.env` made from
    `.env.example` at deploy time is the usual practice) is an unknown, a note; one outside the scanned tree
    or not a regular file is never read (see `vramlint.fsread`), a warning; a folder is what compose itself
    refuses, an error."""
    spec = layer.node.get("env_file")
    if spec is None or base_dir is None:
        return []
    items = spec if isinstance(spec, list) else [spec]
    out = []
    for i, item in enumerate(items):
        required = True
        if isinstance(item, dict):  # long form: {path: ..., required: false}
            required = item.get("required", True) not in (False, "false", "False")
            item = item.get("path")
        if not isinstance(item, str):
            continue
        written = interp(item)
        path = Path(base_dir) / written
        read = read_env_file(path) if UNKNOWN_MARK not in written else Refusal("named by an unset variable",
                                                                              missing=True)
        if not isinstance(read, Refusal):
            out.append(read)
            continue
        if read.missing and not required:
            continue  # compose skips it too
        key = f"{layer.file}\0{written}"
        node = spec if isinstance(spec, list) else layer.node
        loc = value_location(layer.file, node, i if isinstance(spec, list) else "env_file")
        shown = item if UNKNOWN_MARK in written else written
        if read.missing:
            level = "note"
            message = (f"env_file {shown} is not in the repository (compose needs it when the service starts; "
                       "it is usually made at deploy time, e.g. from a .env.example): the variables it sets "
                       "are unknown")
        elif read.reason.startswith("a folder"):
            level = "error"
            message = f"env_file {shown} is a folder: compose fails to read it"
        else:
            level = "warning"
            message = f"env_file {shown} is {read.reason}: not read; the variables it sets are unknown"
        pending.append((key, Problem(layer.file, loc.line if loc else None, loc.column if loc else None, message,
                                     level)))
    return out


def _find_invocation(entry: list[Token] | None, cmd: list[Token] | None, image: str | None,
                     env: dict[str, Any], version: str | None = None) -> Any:
    """The vLLM server the container runs. `entrypoint: []` or `entrypoint: ''` is not "unset": compose
    (compose-spec, `entrypoint`) overrides the image's ENTRYPOINT with nothing, so the `command` words are the
    whole command line, their first word the program the runtime executes (`--model` there is no program, and
    the container fails to start); unset (or null) keeps the image's."""
    if entry is not None and not entry and cmd:
        return find_vllm_invocation(list(cmd), [], image, env, version=version)
    return find_vllm_invocation(entry or [], cmd or [], image, env, version=version)


def _command_tokens(layers: list[_Layer], key: str, interp: Interpolator) -> list[Token] | None:
    value, layer = _first(layers, key)
    if value is None or layer is None:
        return None
    path = join_path(layer.path, key)
    if isinstance(value, list):
        out = []
        for i, item in enumerate(value):
            if item is None:
                continue
            tok = yaml_token(layer.file, value, i, join_path(path, i), layer.lines)
            out.append(_interp_token(tok, interp))
        return out
    tok = yaml_token(layer.file, layer.node, key, path, layer.lines)
    # A string command is split by compose (shellwords) with shell-like quoting but no shell: operators stay
    # words and line breaks are plain spaces (same length, so positions hold). Compose interpolates the whole
    # string, then splits it (compose-go types.ShellCommand); here words are split first, so each keeps the
    # place it was written, and what that order changes is done after: a word written without quotes whose
    # value is empty is no word (`${ENGINE_ARGS:-}`), one whose value has spaces or quotes is split again.
    if tok.text is not None:
        tok = Token(tok.text.replace("\n", " "), tok.location, tok.block, tok.indent, tok.lines, tok.op, tok.quoted)
    out = []
    sources: list[str] = []
    words = split_token(tok, sources=sources)
    for word, source in zip(words, sources, strict=True):
        quoted = _written_quoted(source)
        expanded = _interp_token(Token(word.text, word.location), interp)
        text = expanded.text
        if quoted or text is None or text == word.text or UNKNOWN_MARK in text:
            out.append(expanded)
        elif not text.strip():
            continue
        elif any(c.isspace() or c in "\"'\\" for c in text):
            out.extend(Token(part.text, expanded.location) for part in split_shell(text, None))
        else:
            out.append(expanded)
    return out


_INTERPOLATION = re.compile(r"\$\{[^{}]*\}")


def _written_quoted(source: str) -> bool:
    """Whether a word of a string command has quotes of its own: those inside a `${VAR:-default}` are text
    that compose's shellwords split reads only once the default is in place."""
    for _ in range(MAX_INTERPOLATION_DEPTH + 1):  # the nesting compose interpolates, as far as vramlint reads it
        source, changed = _INTERPOLATION.subn("", source)
        if not changed:
            break
    return '"' in source or "'" in source


def _interp_token(tok: Token, interp: Interpolator) -> Token:
    if tok.text is None:
        return tok
    text = interp(tok.text, tok.location)
    if text == tok.text:
        return tok
    return Token(text, tok.location, tok.block, tok.indent, tok.lines, tok.op, tok.quoted)


def _ids(text: str | None) -> list[str] | None:
    if text is None:
        return None
    t = text.strip()
    if not t or t.lower() in ("all", "none", "void"):
        return None
    return [p.strip() for p in t.split(",") if p.strip()]


def _is_int64(text: str) -> bool:
    """What Go's strconv.ParseInt(text, 10, 64) accepts."""
    if not re.fullmatch(r"[+-]?[0-9]+", text, flags=re.ASCII):
        return False
    return -(1 << 63) <= int(text.lstrip("+-")[:20] or "0") * (-1 if text.startswith("-") else 1) < 1 << 63


# Devices a `count:` is turned into, listed to find services sharing one: no machine has more GPUs than this,
# and a hostile `count: 10000000000` must not become a list of ten billion names.
_MAX_LISTED_DEVICES = 1024


def _gpu(layers: list[_Layer], env: dict[str, str | None], env_locs: dict[str, Location],
         interp: Interpolator) -> GpuRequest | None:
    count: int | None = None
    device_ids: list[str] | None = None
    evidence: list[str] = []
    location: Location | None = None
    has_gpu = False
    all_gpus = False
    reserved = False  # a GPU device request (`gpus:`, deploy devices), which Docker's NVIDIA driver turns into env
    ids_unknown = False
    assumed: list[str] = []  # unset variables whose default placed the devices
    vendor = "nvidia"
    dri: list[str] = []  # /dev/dri paths passed in (the GPUs' DRM nodes)
    dri_location: Location | None = None
    for layer in layers:
        deploy = layer.node.get("deploy")
        devices = None
        if isinstance(deploy, dict):
            res = deploy.get("resources")
            if isinstance(res, dict) and isinstance(res.get("reservations"), dict):
                devices = res["reservations"].get("devices")
                dev_path = layer.path
                for part in ("deploy", "resources", "reservations", "devices"):
                    dev_path = join_path(dev_path, part)
        gpus = layer.node.get("gpus")
        if devices is None and gpus is not None:
            if isinstance(gpus, str) and interp(gpus).strip() == "all":
                has_gpu = all_gpus = reserved = True
                evidence.append("gpus: all")
                location = location or value_location(layer.file, layer.node, "gpus", join_path(layer.path, "gpus"))
                break
            devices = gpus if isinstance(gpus, list) else None
            dev_path = join_path(layer.path, "gpus")
        if isinstance(devices, list):
            for i, dev in enumerate(devices):
                if not isinstance(dev, dict):
                    continue
                caps = dev.get("capabilities") or []
                driver = str(dev.get("driver") or "")
                if driver and driver != "nvidia" and "gpu" not in [str(c) for c in caps]:
                    continue
                has_gpu = reserved = True
                location = location or value_location(layer.file, devices, i, join_path(dev_path, i)) \
                    or key_location(layer.file, devices, i, join_path(dev_path, i))
                if "device_ids" in dev and isinstance(dev["device_ids"], list):
                    defaults_before = set(interp.defaulted)
                    device_ids = [interp(str(x)) for x in dev["device_ids"]]
                    assumed.extend(sorted(interp.defaulted - defaults_before))
                    if any(has_unknown_mark(d) for d in device_ids):
                        # one unset variable may name several devices ("0,1"): neither count nor ids known
                        ids_unknown = True
                        device_ids = None
                        evidence.append("device_ids from a variable not set in the repository")
                    else:
                        device_ids = [p.strip() for d in device_ids for p in d.split(",") if p.strip()]
                        evidence.append(f"device_ids: {device_ids}")
                elif "count" in dev:
                    raw_count = dev["count"]
                    # compose-go's DeviceCount: "all" in any case, or an integer that strconv.ParseInt reads as an
                    # int64; a YAML float or boolean, or any other string, is "the only value allowed is 'all' or a
                    # number" and the whole file is refused
                    c = None if isinstance(raw_count, (bool, float)) else interp(str(raw_count)).strip()
                    if c is not None and (c.lower() == "all" or c == "-1"):
                        all_gpus = True
                        evidence.append("count: all")
                    elif c is not None and c.isdigit() and len(c) <= 18:  # an int64, as compose reads it
                        count = int(c)
                        evidence.append(f"count: {count}")
                    elif c is None or not (has_unknown_mark(c) or _is_int64(c)):
                        at = value_location(layer.file, dev, "count", join_path(join_path(dev_path, i), "count"))
                        shown = (str(raw_count).lower() if isinstance(raw_count, bool) else str(raw_count)) \
                            if c is None else c
                        interp.problems.append(Problem(
                            layer.file, at.line if at else None, at.column if at else None,
                            f"device count {shown[:40]!r} is neither 'all' nor an integer: compose refuses the file "
                            "(\"the only value allowed is 'all' or a number\"), so none of its services start"))
                else:
                    all_gpus = True  # no count and no device_ids: docker reserves all GPUs
                    evidence.append(f"{'gpus' if devices is gpus else 'deploy devices'} without count")
            if has_gpu:
                break
        runtime = layer.node.get("runtime")
        if runtime is not None and str(runtime) == "nvidia":
            has_gpu = True
            evidence.append("runtime: nvidia")
            location = location or value_location(layer.file, layer.node, "runtime", join_path(layer.path, "runtime"))
        elif runtime is not None and "habana" in str(runtime):
            has_gpu, vendor = True, "intel-gaudi"
            evidence.append(f"runtime: {runtime}")
        raw_devices = layer.node.get("devices")
        if isinstance(raw_devices, list):
            for item in raw_devices:
                s = str(item)
                if s.startswith("nvidia.com/gpu="):  # CDI device names
                    has_gpu = True
                    sel = s.split("=", 1)[1]
                    if sel == "all":
                        all_gpus = True
                    else:
                        device_ids = (device_ids or []) + [sel]
                    evidence.append(f"devices: {s}")
                elif "/dev/kfd" in s:
                    has_gpu, vendor = True, "amd"
                    evidence.append(f"devices: {s}")
                elif s.split(":", 1)[0].rstrip("/").startswith("/dev/dri"):
                    dri.append(s.split(":", 1)[0].rstrip("/"))
                    dri_location = dri_location or value_location(
                        layer.file, raw_devices, raw_devices.index(item), join_path(layer.path, "devices"))
    nvidia_visible = env.get("NVIDIA_VISIBLE_DEVICES")
    # moby's NVIDIA device driver (daemon/nvidia_linux.go, setNvidiaGPUs) appends NVIDIA_VISIBLE_DEVICES from the
    # device request (its ids, `0..count-1`, or `all`) after the service's environment, and the NVIDIA container
    # toolkit keeps the last value of a repeated variable; CDI-mode injection reads neither. Which of the two
    # decides where the service runs is not known: the devices are unknown, never a count to compare with
    contested = reserved and vendor == "nvidia" and "NVIDIA_VISIBLE_DEVICES" in env
    agreed_first: str | None = None  # the first device under either value, when both give the same one
    if contested:
        # When the two values (the service's, and the request's ids, 0..count-1 or all) name the same devices,
        # nothing is contested; when they differ but start with the same device, the engine's first rank is on
        # that one either way (vLLM starts on visible device 0), so engines sharing it share a GPU
        env_all = nvidia_visible is not None and nvidia_visible.strip().lower() == "all"
        env_list = ["all"] if env_all else _ids(nvidia_visible)
        req_list = ["all"] if all_gpus else device_ids if device_ids is not None else (
            [str(i) for i in range(count)] if count is not None and count <= _MAX_LISTED_DEVICES else None)
        if env_list is not None and env_list == req_list:
            contested = False
        elif env_list and req_list:
            firsts = {"0" if x[0] == "all" else x[0] for x in (env_list, req_list)}
            agreed_first = firsts.pop() if len(firsts) == 1 else None
    if contested:
        evidence.append("NVIDIA_VISIBLE_DEVICES beside a device request, which sets it too: the devices are not known")
    cuda_visible = env.get("CUDA_VISIBLE_DEVICES")
    # A device list from `${VAR:-default}` whose variable the repository does not set is placed by its default,
    # as `device_ids` are: the default holds only when nothing sets the variable where compose runs (a per-node
    # .env, the shell), so a GPU shared through it is said as assumed (VRL007 a warning), not as certain.
    for name in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        if name not in env or (contested and name == "NVIDIA_VISIBLE_DEVICES"):
            continue
        unset = _unset_defaulted(_raw_env(layers, name), interp)
        if unset:
            assumed.extend(unset)
            evidence.append(f"{name} from the default of {', '.join(f'${{{v}}}' for v in unset)}, "
                            "a variable the repository does not set")
    if "HABANA_VISIBLE_DEVICES" in env:
        has_gpu, vendor = True, "intel-gaudi"
    if dri and not has_gpu and vendor == "nvidia" and "NVIDIA_VISIBLE_DEVICES" not in env:
        # /dev/dri without /dev/kfd (which ROCm needs) and without an NVIDIA device: Intel GPUs, which vLLM's XPU
        # platform reaches through Level Zero over these DRM nodes. Each renderD node is one GPU; /dev/dri whole
        # passes every GPU of the machine.
        has_gpu, vendor = True, "intel-gpu"
        evidence.append(f"devices: {', '.join(dict.fromkeys(dri))}")
        location = location or dri_location
        nodes = sorted({p.rsplit("/", 1)[-1] for p in dri if re.fullmatch(r"renderD\d+", p.rsplit("/", 1)[-1])})
        if nodes:
            device_ids = nodes
        else:
            all_gpus = True
    if not has_gpu and "NVIDIA_VISIBLE_DEVICES" not in env:
        return None
    if count is not None and device_ids is None and count <= _MAX_LISTED_DEVICES:
        # Docker turns `count: N` into devices 0..N-1 (moby's countToDevices): two services with `count: 1`
        # both get GPU 0.
        physical = [str(i) for i in range(count)]
    elif count is not None and device_ids is None:
        physical = None  # more devices than any machine has: not listed one by one (the count still says it)
    else:
        physical = device_ids
    nv_ids = _ids(nvidia_visible)
    if nv_ids is not None and (physical is None or all_gpus):
        physical = nv_ids
        evidence.append(f"NVIDIA_VISIBLE_DEVICES={nvidia_visible}")
        location = location or env_locs.get("NVIDIA_VISIBLE_DEVICES")
    visible = physical
    # ROCm: the ROCr runtime shows the process only the devices ROCR_VISIBLE_DEVICES lists (host indices or
    # UUIDs), numbered from 0 for HIP; HIP_VISIBLE_DEVICES then picks among those, as CUDA_VISIBLE_DEVICES does
    # (vLLM's platforms/rocm.py keeps the two equal and refuses them when they differ).
    visible_unknown = False
    visible_name = "CUDA_VISIBLE_DEVICES"
    if vendor == "amd":
        rocr = env.get("ROCR_VISIBLE_DEVICES")
        rocr_ids = _ids(rocr)
        if "ROCR_VISIBLE_DEVICES" in env and rocr is None:
            visible_unknown = True  # set where it runs (an env_file not in the repository, the shell)
        elif rocr_ids is not None:
            evidence.append(f"ROCR_VISIBLE_DEVICES={rocr}")
            visible = physical = rocr_ids
            location = location or env_locs.get("ROCR_VISIBLE_DEVICES")
        if "CUDA_VISIBLE_DEVICES" not in env and "HIP_VISIBLE_DEVICES" in env:
            cuda_visible, visible_name = env.get("HIP_VISIBLE_DEVICES"), "HIP_VISIBLE_DEVICES"
            visible_unknown = visible_unknown or cuda_visible is None
    if vendor == "intel-gpu":
        masked = _ze_affinity(env, evidence, physical)
        if masked is None:
            visible_unknown = True  # set where it runs: which of the GPUs it picks is not known
        elif masked:
            visible = physical = masked
            all_gpus = False
            location = env_locs.get("ZE_AFFINITY_MASK") or location  # the line that says how many
    if vendor == "intel-gaudi":
        gaudi = visible_gaudi(env)  # the devices Habana's container runtime mounts
        if gaudi is not None and gaudi[1] is not None:
            visible = physical = gaudi[1]
            all_gpus = False
            evidence.append(f"{gaudi[0]}={','.join(gaudi[1])}")
            location = env_locs.get(gaudi[0]) or location
        elif gaudi is not None and not gaudi[2]:
            visible_unknown = True
    cv_ids = _ids(cuda_visible)
    given = len(visible) if visible is not None else None
    if cv_ids is not None:
        evidence.append(f"{visible_name}={cuda_visible}")
        if visible is not None and all(small_int(x) is not None and small_int(x) < len(visible) for x in cv_ids):
            visible = [visible[int(x)] for x in cv_ids]
        elif visible is None:
            visible = cv_ids  # all host GPUs visible: indices are host indices
        physical = visible
    # an empty CUDA_VISIBLE_DEVICES (`${GPUS}` where the shell has it empty, a blank .env line) is not "all
    # devices": CUDA then shows none, or the value meant is set elsewhere; which it is, the file does not say
    blank = visible_name in env and cuda_visible is not None and not cuda_visible.strip()
    n = len(visible) if visible is not None else (count if not all_gpus else None)
    if "NVIDIA_VISIBLE_DEVICES" in env and nvidia_visible is None and cv_ids is None:
        n = None  # visible devices come from somewhere we cannot see
    # CUDA_VISIBLE_DEVICES set where it runs: which of the visible devices the engine uses is not known
    cuda_unknown = ("CUDA_VISIBLE_DEVICES" in env and cuda_visible is None) or blank
    if blank:
        evidence.append(f"{visible_name} empty: which devices vLLM sees is not known")
    if cuda_unknown or visible_unknown or contested or (ids_unknown and physical is None):
        n = None
    gpu = GpuRequest(type=None, count=n, evidence="; ".join(evidence) or None, location=location, vendor=vendor,
                     device_ids=physical)
    if cv_ids is not None and n is not None and given is not None and n < given:
        gpu.visible_from = (visible_name, given)  # the variable, not the reservation, says how many vLLM gets
        gpu.count_location = env_locs.get(visible_name) or gpu.count_location
    if assumed:
        gpu.placement_assumed = ", ".join(f"${{{v}}}" for v in dict.fromkeys(assumed))
    if contested and agreed_first is not None and not (cuda_unknown or visible_unknown) and cv_ids is None:
        gpu.device_ids = [agreed_first]  # the engine's first rank, whichever value Docker's driver leaves
        gpu.shared_key = agreed_first
    elif cuda_unknown or visible_unknown or contested or ("NVIDIA_VISIBLE_DEVICES" in env and nvidia_visible is None
                                                          and cv_ids is None
                          and (physical is None or all_gpus)):
        gpu.device_ids = None  # the devices are set where it runs: not known to be shared with anything
    elif ids_unknown and physical is None:
        pass  # which devices is not known: shared with nothing we can name
    elif all_gpus and physical is None:
        gpu.device_ids = None
        gpu.shared_key = "all"
    elif physical is not None:
        gpu.shared_key = ",".join(sorted(physical, key=lambda x: (len(x), x)))
    return gpu


def _ze_affinity(env: dict[str, str | None], evidence: list[str], physical: list[str] | None) -> list[str] | None:
    """The Intel GPUs Level Zero shows the process under ZE_AFFINITY_MASK (`2`, `0,1`, or `0.0,0.1` for tiles
    of one device): [] when it is not set (all of them), None when it is set where the service runs. A tile list
    (the mask's sub-device form, meaningful in the COMPOSITE hierarchy) still exposes each root device once."""
    if "ZE_AFFINITY_MASK" not in env:
        return []
    if env.get("ZE_AFFINITY_MASK") is None:
        return None
    mask = _ids(env.get("ZE_AFFINITY_MASK"))
    if not mask:
        return []
    evidence.append(f"ZE_AFFINITY_MASK={env['ZE_AFFINITY_MASK']}")
    roots = list(dict.fromkeys(entry.split(".", 1)[0] for entry in mask))
    if physical is not None and all(small_int(r) is not None and small_int(r) < len(physical) for r in roots):
        return [physical[int(r)] for r in roots]  # indices among the render nodes passed in
    return roots


_DEFAULTED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?-")


def _raw_env(layers: list[_Layer], name: str) -> str | None:
    """The text an `environment` entry is written with, before interpolation (the last layer wins)."""
    raw = None
    for layer in layers:
        environment = layer.node.get("environment")
        if isinstance(environment, dict) and name in environment:
            raw = None if environment[name] is None else str(environment[name])
        elif isinstance(environment, list):
            for item in environment:
                text = str(item)
                if text.split("=", 1)[0] == name and "=" in text:
                    raw = text.split("=", 1)[1]
    return raw


def _unset_defaulted(raw: str | None, interp: Interpolator) -> list[str]:
    """The variables of ``raw`` written as `${VAR:-default}` that the repository does not set."""
    return [m.group(1) for m in _DEFAULTED.finditer(raw or "") if m.group(1) not in interp.vars]


def _mark_shared_gpus(servers: list[Server]) -> None:
    """Engines of one compose file naming the same devices share them; key them by file and devices."""
    for s in servers:
        if s.gpu is not None and s.gpu.shared_key is not None and not s.gpu.shared_key.startswith(s.file + "#"):
            s.gpu.shared_key = f"{s.file}#gpus={s.gpu.shared_key}"


def _shm(layers: list[_Layer], args: dict, interp: Interpolator) -> bool | None:
    ipc, _ = _first(layers, "ipc")
    if ipc is not None and str(ipc) == "host":
        return True
    size, _ = _first(layers, "shm_size")
    if size is not None:
        n = parse_size(interp(str(size)))
        if n is not None:
            return n >= _NCCL_SHM_MIN
    tp = args.get("tensor_parallel_size")
    pp = args.get("pipeline_parallel_size")
    if (isinstance(tp, int) and tp > 1) or (isinstance(pp, int) and pp > 1):
        return False  # docker's default /dev/shm is 64 MB: NCCL between ranks fails or falls back
    return None
