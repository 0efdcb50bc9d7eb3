"""vLLM YAML config files (`vllm serve --config file.yaml`): standalone, or merged into the server using them.

vLLM turns each key into command-line words (`key: value` -> `--key value`, `true` -> `--key`, a list ->
`--key a b`) and inserts them right after the sub-command and model, before the real command-line
arguments, so a value given on the command line wins (FlexibleArgumentParser._pull_args_from_config).
The same words are read here by the same argument reader as command lines.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vramlint.cmdline import Token, has_unknown_mark, parse_vllm_args
from vramlint.model import Location, Problem, Server
from vramlint.yamlload import _lc_entry, join_path, key_location, to_plain, value_location

_NAME_HINT = re.compile(r"vllm[-_.]?(serve[-_.]?)?(config|args)|serve[-_]config", re.I)
# Keys that mark a file as something else even when a few vLLM-like keys appear (training, TRL, lm-eval).
_FOREIGN_KEYS = {"use_vllm", "vllm_mode", "learning_rate", "per_device_train_batch_size", "num_train_epochs",
                 "output_dir", "vllm_gpu_memory_utilization", "apiVersion", "kind", "services", "trainer",
                 "optimizer", "dataset", "datasets", "tasks"}


def _known_dests() -> set[str]:
    from vramlint import vllm_args

    return vllm_args.all_dests()


def _norm(key: Any) -> str:
    return str(key).strip().replace("-", "_")


def is_vllm_config(doc: Any) -> bool:
    """A top-level mapping whose keys are mostly vLLM arguments (a file named like vllm_config.yaml needs fewer)."""
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict) or not data:
        return False
    keys = [_norm(k) for k in data]
    if set(keys) & _FOREIGN_KEYS:
        return False
    known = _known_dests() | {"model"}
    hits = sum(1 for k in keys if k in known)
    name = str(getattr(doc, "file", "") or "")
    named = bool(_NAME_HINT.search(name.rsplit("/", 1)[-1]))
    if named:
        return hits >= 1 and hits >= 0.6 * len(keys)
    return "model" in keys and hits >= 3 and hits >= 0.8 * len(keys)


def _bool_words(key: str, value: bool, version: str | None) -> tuple[list[str], str | None]:
    """The words vLLM's config loader makes of `key: true|false`, and a note when `false` is dropped.

    It changed over time (vllm/utils `FlexibleArgumentParser._load_config_file` / `load_config_file`):
    before 0.6.4 every key became `--key str(value)`; from 0.6.4 to 0.11.0 a boolean became `--key` (true) or
    nothing (false), except for `StoreBoolean` options named by their dest (snake_case), which got
    `--key True|False`; from 0.11.1 `false` gives nothing; from 0.28.0 `false` gives `--no-key` when the
    parser has that option (a BooleanOptionalAction, written with dashes as the option is).
    """
    from vramlint import vllm_args

    table, _ = vllm_args.table_version(version)
    vkey = vllm_args._vkey(table) if table else (99,)
    flag = "--" + key
    if vkey < (0, 6, 4):
        return [flag, str(value)], None
    if vkey < (0, 11, 1):
        spec = vllm_args.lookup(flag, version)
        store_boolean = spec is not None and spec.type == "bool" and spec.action == "store" and spec.nargs == "?"
        if store_boolean and key == spec.dest:
            return [flag, str(value)], None
    if value:
        return [flag], None
    if vkey >= (0, 28, 0) and ("--no-" + key) in vllm_args.known_flags(version):
        return ["--no-" + key], None
    # Nothing is passed for `false`, so the default applies, which for some options (prefix caching on V1)
    # is `true`.
    return [], f"{key}: false in a vLLM config file is dropped by vLLM {table}; the default applies"


def _tokens(mapping: dict, file: str, base: Location | None, path: str,
            notes: list[str], version: str | None = None) -> list[Token]:
    """The command-line words vLLM makes of a config mapping, each pointing at its key."""
    out: list[Token] = []
    for key, value in mapping.items():
        kpath = join_path(path, str(key))
        if base is None:
            loc = key_location(file, mapping, key, kpath)
            vloc = value_location(file, mapping, key, kpath) or loc
        else:
            loc, vloc = _shifted_locations(mapping, key, kpath, base)
        flag = "--" + str(key)
        if isinstance(value, bool):
            words, note = _bool_words(str(key), value, version)
            out.extend(Token(w, loc if i == 0 else vloc) for i, w in enumerate(words))
            if note:
                notes.append(note)
            continue
        if isinstance(value, list):
            if value:
                out.append(Token(flag, loc))
                for i, item in enumerate(value):
                    out.append(Token(_word(item), _shift(value_location(file, value, i), base) or vloc))
            continue
        if value is None:
            out.append(Token(flag, loc))
            out.append(Token(None, vloc))
            continue
        out.append(Token(flag, loc))
        out.append(Token(_word(value), vloc))
    return out


def _word(value: Any) -> str:
    if isinstance(value, dict):
        return json.dumps(to_plain(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _shifted_locations(mapping: Any, key: Any, kpath: str, base: Location) -> tuple[Location | None, Location | None]:
    """(``_shift(key_location(...), base)``, ``_shift(value_location(...), base)`` or the first): the same two
    locations, from one read of the key's positions and without the unshifted ones made first (a config file
    of 100,000 keys in a ConfigMap made 400,000 locations to keep 200,000)."""
    entry = _lc_entry(mapping, key)
    if entry is None:
        return None, None
    path = f"{base.yaml_path}:{kpath}" if base.yaml_path else kpath
    lines, cols = base.line - 1, base.column - 1
    loc = Location(base.file, entry[0] + 1 + lines, entry[1] + 1 + cols, None, None, yaml_path=path)
    line, col = (entry[2] + 1, entry[3] + 1) if len(entry) >= 4 else (entry[0] + 1, entry[1] + 1)
    try:
        value = mapping[key]
    except (KeyError, IndexError, TypeError):
        value = None
    end_line = end_col = None
    if isinstance(value, (str, int, float, bool)) and "\n" not in str(value):  # (as value_location spans it)
        width = len(str(value))
        style = getattr(value, "style", None) if hasattr(value, "style") else None
        if style in ("'", '"'):
            width += 2
        end_line, end_col = line + lines, col + width + cols
    return loc, Location(base.file, line + lines, col + cols, end_line, end_col, yaml_path=path)


def _shift(loc: Location | None, base: Location | None) -> Location | None:
    """A location inside a config text that is itself a YAML block (a ConfigMap data key) -> file location."""
    if loc is None or base is None:
        return loc
    line = base.line + loc.line - 1
    col = loc.column + base.column - 1
    end_col = loc.end_column + base.column - 1 if loc.end_column is not None else None
    end_line = base.line + loc.end_line - 1 if loc.end_line is not None else None
    path = f"{base.yaml_path}:{loc.yaml_path}" if base.yaml_path else loc.yaml_path
    return Location(base.file, line, col, end_line, end_col, yaml_path=path)


def extract_vllm_config(doc: Any) -> tuple[list[Server], list[Problem]]:
    """A standalone vLLM config file as a Server (no GPU or image information: those live elsewhere)."""
    data = doc.data
    file = doc.file
    problems: list[Problem] = []
    if not isinstance(data, dict):
        return [], problems
    loc = Location(file, 1, 1)
    first = next(iter(data), None)
    if first is not None:
        loc = key_location(file, data, first) or loc
        loc = Location(file, loc.line, loc.column)
    server = Server(file=file, location=loc, source_format="vllm-config", kind="vLLM config file",
                    name=file.rsplit("/", 1)[-1])
    _merge(server, data, file, None, problems, overwrite=True)
    if server.model is None and "model" not in data:
        server.notes.append("no model in this config file: it is given on the command line that uses it")
    return [server], problems


def apply_config_file(server: Server, doc: Any, location_base: Location | None = None) -> None:
    """Merge a `--config` file's keys into ``server``; values already set on the command line win.

    ``doc`` is a Document or a plain mapping. ``location_base`` is where the config text starts when it is a
    block scalar inside another file (a ConfigMap data key): line 1 column 1 of the config maps to it. Without
    it, locations point into ``doc.file``.
    """
    data = getattr(doc, "data", doc)
    file = getattr(doc, "file", None) or (location_base.file if location_base else server.file)
    if not isinstance(data, dict):
        server.notes.append(f"--config {file}: not a mapping of vLLM arguments")
        return
    problems: list[Problem] = []
    _merge(server, data, file, location_base, problems, overwrite=False)
    for p in problems:
        server.notes.append(f"{p.file}:{p.line}: {p.message}")


def _merge(server: Server, data: dict, file: str, base: Location | None, problems: list[Problem],
           overwrite: bool) -> None:
    said: list[str] = []
    version = server.vllm_version
    tokens = _tokens(data, file, base, "", said, version)
    # a value the script's variables leave unknown (`max-model-len: $LEN` with LEN unset) is unknown, not text
    tokens = [Token(None, t.location) if has_unknown_mark(t.text) else t for t in tokens]
    # the config file's words follow the sub-command and model: no positional model in them
    inv = parse_vllm_args(tokens, version=version, entry="config")
    for msg in inv.problems:
        if "vLLM version unknown" in msg or "argument table" in msg:
            continue
        line = None
        m = re.match(r"line (\d+): ", msg)
        if m:
            line = int(m.group(1))
            msg = msg[m.end():]
        problems.append(Problem(base.file if base else file, line, None, msg))
    server.startup_errors.extend(inv.startup_errors)  # vLLM parses the config file's values as arguments too
    server.unchecked.extend(inv.unchecked)
    server.opaque_args = server.opaque_args or inv.opaque_args
    for dest, value in inv.args.items():
        if overwrite or dest not in server.args:
            server.args[dest] = value
            if dest in inv.arg_locations:
                server.arg_locations[dest] = inv.arg_locations[dest]
    for flag, where in inv.unknown_args.items():
        server.unknown_args.setdefault(flag, where)
    if inv.model is not None and (overwrite or server.model is None):
        server.model, server.model_location = inv.model, inv.model_location
    server.notes.extend(said)


def read_written_config(server: Server, path: str, body: Any) -> tuple[bool, str]:
    """`vllm serve --config PATH` where the launcher itself wrote PATH with a here-document before (``body``, a
    cmdline.WrittenFile): vLLM reads that text, so its keys are merged into ``server`` as a config file's are
    (the command line winning). Returns whether it was read, and the note that says where from or why not."""
    from vramlint.yamlload import load_text

    wrote = f"the here-document the script writes to it (line {body.line})" if body.line else \
        "the here-document the script writes to it"
    if body.text is None:
        return False, f"--config {path}: {wrote} {body.why}; its settings are not included"
    file = body.start.file if body.start is not None else server.file
    docs, problems = load_text(body.text, file)
    if problems or len(docs) != 1 or not isinstance(docs[0].data, dict):
        return False, f"--config {path}: {wrote} is not a YAML mapping of vLLM arguments; its settings are not included"
    found: list[Problem] = []
    _merge(server, docs[0].data, file, body.start, found, overwrite=False)
    server.notes.extend(f"{p.file}:{p.line}: {p.message}" if p.line else p.message for p in found)
    return True, f"--config {path}: settings read from {wrote}"
