"""Evidence in the scanned tree that a compose file's services are started one at a time.

`docker compose up` starts every service of a file (those without `profiles:`); `docker compose -f FILE up
SERVICE` (or `run SERVICE`) starts that one and its dependencies. A file whose services share one GPU may be a
catalog that a starter brings up one by one (llama-swap's `cmd: docker compose -f models.yml up <service>`, a
Makefile target per model, a script taking the service as `$1`): the repository then says how it runs.

Read, never run: the scanned files and the scripts, Makefiles and configs found by the same walk (discover's
`starters`: the scanned paths only, their exclusions and .gitignore applied), each through vramlint.fsread (a
regular file inside the scanned tree, at most MAX_READ_BYTES), at most MAX_READ_FILES of them and MAX_TOTAL_BYTES
in all, and only when a
compose file has engines sharing a GPU. A command is `docker compose` or `docker-compose` up to the shell operator
or line end that ends it; its `-f`/`--file` names the compose file (relative to the starter's folder, or by name
alone: a starter's working folder is often not its own), none the default names in the starter's folder.
"""

from __future__ import annotations

import os
import re
import shlex
from functools import lru_cache
from typing import Any

MAX_READ_FILES = 2000
MAX_READ_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 64 * 1024 * 1024  # all starters read in one run
MAX_COMMANDS = 20_000  # `docker compose` commands read in one run (each distinct one parsed once)
MAX_EXPANDED = 10_000  # a llama-swap `cmd` with its macros expanded: a longer one is not a command line

_COMMAND = re.compile(r"\bdocker(?:-compose|\s+compose)\b([^\n;&|`\"')]*)")
# compose's global options that take a value (docker compose --help)
_GLOBAL_VALUED = {"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory",
                  "--ansi", "--progress", "--parallel"}
# `up` / `run` options that take a value
_SUB_VALUED = {"--pull", "--scale", "-t", "--timeout", "--wait-timeout", "--exit-code-from", "--attach", "--no-attach",
               "-e", "--env", "-l", "--label", "-p", "--publish", "-v", "--volume", "-w", "--workdir", "-u", "--user",
               "--name", "--entrypoint", "--cap-add", "--cap-drop"}
_DEFAULT_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
ANY_SERVICE = "*"  # a service named by a variable (`up -d "$1"`): any one service of the file


def one_at_a_time(compose_files: dict[str, set[str]], starters: list[str]) -> dict[str, dict[str, str]]:
    """For each compose file (real path -> its service names), the services a starter brings up alone, each with
    where that is written (`config/llama-swap.yaml:14`); ANY_SERVICE when a command names the service by a
    variable."""
    from vramlint.discover import display_path
    from vramlint.fsread import Refusal, read_text

    found: dict[str, dict[str, str]] = {}
    by_name: dict[str, list[str]] = {}
    for compose in compose_files:
        by_name.setdefault(os.path.basename(compose), []).append(compose)
    budget = MAX_TOTAL_BYTES
    commands_left = MAX_COMMANDS
    for path in dict.fromkeys(starters[:MAX_READ_FILES]):
        if budget <= 0:
            break
        text = read_text(path, limit=min(MAX_READ_BYTES, budget), errors="replace")
        if isinstance(text, Refusal):
            continue
        budget -= len(text)
        if "compose" not in text:
            continue
        folder = os.path.dirname(os.path.realpath(path))
        commands = []
        line, at = 1, 0
        for m in _COMMAND.finditer(text):
            if len(commands) >= commands_left:
                break
            line, at = line + text.count("\n", at, m.start()), m.start()  # counted once over the text
            commands.append((line, m.group(1)))
        if path.lower().endswith((".yaml", ".yml")) and "macros" in text and "models" in text:
            commands += _llama_swap_commands(text, path)
        commands_left -= len(commands)
        for line, command in commands[:max(commands_left, 0)]:
            started = _started(command)
            if started is None:
                continue
            files, service = started
            # the compose files the command names, looked up (each of 20,000 commands was compared with each of 300
            # compose files, a realpath every time: minutes)
            for compose in _named_files(tuple(files), folder, compose_files, by_name):
                if service != ANY_SERVICE and service not in compose_files[compose]:
                    continue
                found.setdefault(compose, {}).setdefault(service, f"{display_path(path)}:{line}")
    return found


def _named_files(files: tuple[str, ...], folder: str, compose_files: dict[str, set[str]],
                 by_name: dict[str, list[str]]) -> list[str]:
    """The compose files (of ``compose_files``, real paths) that `-f` ``files`` name from ``folder``; none given:
    the default names in ``folder``. A file named from another working folder (llama-swap runs its commands
    where it was started) is taken by its name when no file by that path exists."""
    if not files:
        return [c for c in (os.path.join(folder, n) for n in _DEFAULT_NAMES) if c in compose_files]
    out: list[str] = []
    for f in files:
        if "$" in f or "{{" in f:
            continue
        candidate, exists = _resolved(folder, f)
        if candidate in compose_files:
            out.append(candidate)
        elif not exists:
            out.extend(by_name.get(os.path.basename(f), ()))
    return out


@lru_cache(maxsize=8192)
def _resolved(folder: str, name: str) -> tuple[str, bool]:
    try:
        candidate = os.path.realpath(os.path.join(folder, name))
    except ValueError:  # a NUL character: no file's name
        return "", False
    return candidate, os.path.exists(candidate)


_MACRO = re.compile(r"\$\{([A-Za-z0-9_.-]+)\}")


def _llama_swap_commands(text: str, path: str) -> list[tuple[int, str]]:
    """The `cmd` of each model of a llama-swap config (`models:` entries, each started on demand, one group at a
    time), its `${macro}` references replaced by the `macros:` values as llama-swap does, as (line, the words after
    `docker compose`)."""
    from vramlint.yamlload import key_location, load_text

    docs, _ = load_text(text, path)
    out: list[tuple[int, str]] = []
    for doc in docs[:1]:
        data = doc.data
        models = data.get("models") if isinstance(data, dict) else None
        macros = data.get("macros") if isinstance(data, dict) else None
        if not isinstance(models, dict) or not isinstance(macros, dict):
            continue
        for name, model in list(models.items())[:1000]:
            cmd = model.get("cmd") if isinstance(model, dict) else None
            if not isinstance(cmd, str):
                continue
            for _ in range(4):  # a macro may use another; llama-swap's own depth is small
                if "${" not in cmd or len(cmd) > MAX_EXPANDED:
                    break
                cmd = _expand_macros(cmd, macros)
            if len(cmd) > MAX_EXPANDED:
                continue  # a macro written in itself grows without end
            where = key_location(path, model, "cmd") or key_location(path, models, name)
            line = where.line if where is not None else 1
            out.extend((line, m.group(1)) for m in _COMMAND.finditer(cmd.replace("\n", " ")))
    return out


def _expand_macros(cmd: str, macros: dict) -> str:
    """One pass of llama-swap's `${macro}` replacement, stopped once past MAX_EXPANDED (a 9,000-character macro named
    1,500 times made 13.5 MB a model before its length was looked at)."""
    pieces: list[str] = []
    size, last = 0, 0
    for m in _MACRO.finditer(cmd):
        value = macros.get(m.group(1))
        piece = m.group(0) if value is None else str(value)
        size += m.start() - last + len(piece)
        if size > MAX_EXPANDED:
            return cmd + " " * (MAX_EXPANDED + 1 - len(cmd))  # past the bound: longer than any command line read
        pieces += (cmd[last:m.start()], piece)
        last = m.end()
    pieces.append(cmd[last:])
    return "".join(pieces)


@lru_cache(maxsize=4096)
def _started(rest: str) -> tuple[list[str], str] | None:
    """(the -f files, the one service) of `docker compose [opts] up|run [opts] SERVICE`; None when it starts no
    service or several (a plain `up` starts them all)."""
    try:
        words = shlex.split(rest)
    except ValueError:
        words = rest.split()
    files: list[str] = []
    i = 0
    while i < len(words) and words[i].startswith("-"):
        w = words[i]
        if w in ("-f", "--file") and i + 1 < len(words):
            files.append(words[i + 1])
        elif w.startswith("--file="):
            files.append(w.split("=", 1)[1])
        i += 2 if w in _GLOBAL_VALUED else 1
    if i >= len(words) or words[i] not in ("up", "run"):
        return None
    sub = words[i]
    services: list[str] = []
    i += 1
    while i < len(words):
        w = words[i]
        if w.startswith("-"):
            i += 2 if w in _SUB_VALUED else 1
            continue
        services.append(w)
        if sub == "run":
            break  # `run SERVICE CMD...`: the words after the service are its command
        i += 1
    if len(services) != 1:
        return None
    service = services[0]
    if "$" in service or "{{" in service or "%" in service:
        service = ANY_SERVICE
    return files, service


def mark_started_alone(servers: list[Any], starters: list[str]) -> None:
    """Set ``started_alone`` on the compose servers of files whose engines share a GPU when the tree shows their
    services started one at a time (VRL007 then says the sum holds only if they are started together)."""
    by_file: dict[str, list[Any]] = {}
    for s in servers:
        if s.source_format == "compose" and s.gpu is not None and s.gpu.shared_key:
            by_file.setdefault(os.path.realpath(s.file), []).append(s)
    wanted = {f: {s.name for s in group} for f, group in by_file.items() if len(group) >= 2}
    if not wanted or not starters:
        return
    found = one_at_a_time(wanted, starters)
    for compose, services in found.items():
        anyone = services.get(ANY_SERVICE)
        for s in by_file[compose]:
            where = services.get(s.name) or anyone
            if where is not None:
                s.started_alone = where
