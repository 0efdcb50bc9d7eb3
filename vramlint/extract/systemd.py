"""systemd service units (`*.service`): the vLLM servers their `ExecStart=` lines start (never running them).

Read with systemd's own rules (systemd.syntax(7), systemd.unit(5), systemd.service(5), systemd.exec(5)):

- `[Section]` headers, `Key=Value` lines (keys case-sensitive, whitespace around `=` dropped), lines whose first
  non-blank character is `#` or `;` are comments (also between continued lines), a line ending in `\\` continues
  on the next (the backslash read as a space); an empty value resets a list setting (`ExecStart=`,
  `Environment=`, `EnvironmentFile=`);
- `ExecStart=` may begin with the prefixes `-` (failure ignored), `@` (the second word is argv[0], not run),
  `:` (no environment variable substitution), `+`, `!`, `!!` (privileges); its words are split as systemd
  splits them (whitespace, single and double quotes anywhere in a word, C escapes), a lone `;` separating
  commands; the executable is run without a shell;
- specifiers are expanded first: `%%`, `%n` `%N` `%p` `%i` `%I` (a template, `name@.service` read as such,
  has its instance unknown), `%h` (`/root` for the system manager, not known for a user unit); any other is not
  known, and said;
- then variables: a word that is exactly `$NAME` becomes the value split on whitespace (zero or more words),
  `${NAME}` anywhere in a word the value as it is (one word), `$$` a `$`; the values are those of
  `Environment=` (several quoted `KEY=value` words a line, a later one winning) and `EnvironmentFile=` (read
  when it is a file of the scanned tree; its values win over `Environment=`'s), the process's environment;
- several `ExecStart=` lines are each read for `Type=oneshot`; for any other type systemd refuses the unit.

A script the unit runs (absolute, or relative to `WorkingDirectory=` as a shell's argument) that is in the
scanned tree is followed with the unit's environment (`launch_scripts.follow_repository_script`). Drop-in folders
(`NAME.service.d/*.conf`) are not merged.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from typing import Any

from vramlint.extract.unknowns import Names, said_names
from vramlint.model import Location, Problem, Server

_BREAK = re.compile(r"\r\n|\r|\n")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "s": " ",
            "\\": "\\", '"': '"', "'": "'"}
_RESET_LISTS = ("ExecStart", "Environment", "EnvironmentFile")


class Places:
    """Where each character of a setting's value was written, (line, 1-based column), indexed as a list of them is:
    kept as one run per line of the file (a tuple a character held five settings of 1 MB in 640 MB)."""

    __slots__ = ("starts", "runs", "length")

    def __init__(self) -> None:
        self.starts: list[int] = []  # index of the run's first character
        self.runs: list[tuple[int, int]] = []  # (line, column) of it
        self.length = 0

    def add(self, line: int, column: int, count: int) -> None:
        """``count`` characters written from (line, column) on."""
        if count > 0:
            self.starts.append(self.length)
            self.runs.append((line, column))
            self.length += count

    def extend(self, other: Places) -> None:
        if not other.starts:
            return  # nothing written (a blank line inside a continued setting)
        for start, (line, column), end in zip(other.starts, other.runs, [*other.starts[1:], other.length], strict=True):
            self.add(line, column, end - start)

    def cut(self, start: int, stop: int | None = None) -> Places:
        """The places of characters ``start`` to ``stop`` (as a slice)."""
        start, stop, _ = slice(start, stop).indices(self.length)
        out = Places()
        k = max(bisect.bisect_right(self.starts, start) - 1, 0)
        while k < len(self.starts) and self.starts[k] < stop:
            first = max(self.starts[k], start)
            end = min(self.starts[k + 1] if k + 1 < len(self.starts) else self.length, stop)
            line, column = self.runs[k]
            out.add(line, column + first - self.starts[k], end - first)
            k += 1
        return out

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: int) -> tuple[int, int]:
        if i < 0:
            i += self.length
        if not 0 <= i < self.length:
            raise IndexError(i)
        k = bisect.bisect_right(self.starts, i) - 1
        line, column = self.runs[k]
        return line, column + i - self.starts[k]


@dataclass
class Setting:
    """One `Key=Value` of a section: its value with where each character of it was written."""

    key: str
    value: str
    places: Places  # (line, 1-based column) of each character of ``value``
    line: int
    file: str | None = None  # a drop-in's, when it set the value (None: the unit's own file)


@dataclass
class Unit:
    sections: dict[str, list[Setting]] = field(default_factory=dict)

    def all(self, section: str, key: str) -> list[Setting]:
        """The settings ``key`` of ``section`` in order, after the last empty one (which resets a list)."""
        found = [s for s in self.sections.get(section, []) if s.key == key]
        if key in _RESET_LISTS:
            for k in range(len(found) - 1, -1, -1):
                if not found[k].value.strip():
                    return found[k + 1:]
        return found

    def last(self, section: str, key: str) -> Setting | None:
        found = [s for s in self.sections.get(section, []) if s.key == key]
        return found[-1] if found else None


MAX_CHECKOUT_LEVELS = 32  # folders looked in, from a unit's up, for the checkout its WorkingDirectory= runs from
LONG_LINE_MAX = 1024 * 1024  # systemd's src/basic/fileio.h: a line, continuations joined, past this is refused


def parse_unit(text: str) -> tuple[Unit, list[tuple[int, str]]]:
    """The sections of a unit file, and the lines systemd ignores with a warning (no `=`, before any section)."""
    unit = Unit()
    errors: list[tuple[int, str]] = []
    section: str | None = None
    # a setting continued over lines: its pieces, their places, its first line, its length (joined once at its end:
    # joining at every line was quadratic, 100,000 continued lines ran for minutes)
    pending: tuple[list[str], Places, int, int] | None = None
    for number, raw in enumerate(_BREAK.split(text), start=1):
        stripped = raw.strip()
        if stripped.startswith(("#", ";")):
            continue  # a comment, also between the lines of a continued setting
        if pending is None and not stripped:
            continue
        first = len(raw) - len(raw.lstrip())
        body = raw[first:].rstrip()
        if len(body) + (pending[3] if pending else 0) > LONG_LINE_MAX:
            # systemd's config_parse reads a line of at most LONG_LINE_MAX ("Line too long", or "Continuation line
            # too long" when continued) and does not load the unit
            return Unit(), [(pending[2] if pending else number, "a line (continuations joined) past 1 MiB, which "
                             "systemd refuses (Line too long): the unit is not loaded")]
        places = Places()
        places.add(number, first + 1, len(body))
        if body.endswith("\\"):
            if pending is None:
                pending = ([], Places(), number, 0)
            pending[0].append(body[:-1] + " ")
            pending[1].extend(places)  # the `\\`'s place is the blank's that replaces it
            pending = (pending[0], pending[1], pending[2], pending[3] + len(body))
            continue
        if pending is not None:
            pending[1].extend(places)
            body, places = "".join(pending[0]) + body, pending[1]
        start_line = pending[2] if pending else number
        pending = None
        if not body:
            continue
        if body.startswith("[") and body.endswith("]"):
            section = body[1:-1]
            unit.sections.setdefault(section, [])
            continue
        if section is None:
            errors.append((start_line, "a setting before any [Section] header"))
            continue
        if "=" not in body:
            errors.append((start_line, f"not a `Key=Value` line: {body[:60]}"))
            continue
        at = body.index("=")
        key = body[:at].strip()
        rest = body[at + 1:]
        lead = len(rest) - len(rest.lstrip())
        value = rest.strip()
        offset = at + 1 + lead
        unit.sections[section].append(Setting(key, value, places.cut(offset, offset + len(value)), start_line))
    if pending is not None and section is not None and "=" in "".join(pending[0]):
        body, places, start_line = "".join(pending[0]), pending[1], pending[2]
        at = body.index("=")
        rest = body[at + 1:]
        lead = len(rest) - len(rest.lstrip())
        unit.sections[section].append(Setting(body[:at].strip(), rest.strip(), places.cut(at + 1 + lead), start_line))
    return unit, errors


# --- Words --------------------------------------------------------------------------------------------------


@dataclass
class Word:
    text: str
    start: int  # index in the value where the word starts
    quoted: bool  # some of it was written in quotes
    content: int | None  # index of the first character inside the quotes, when it begins with one


def split_words(value: str, separators: str = " \t\n") -> list[Word] | str:
    """systemd's `extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE)` over the whole value: the words, or why
    systemd refuses it (an unclosed quote)."""
    out: list[Word] = []
    i, n = 0, len(value)
    while i < n:
        while i < n and value[i] in separators:
            i += 1
        if i >= n:
            break
        start, quoted, content = i, False, None
        buf: list[str] = []
        while i < n and value[i] not in separators:
            c = value[i]
            if c in "'\"":
                end = i + 1
                quoted = True
                if content is None and i == start:
                    content = i + 1
                while end < n and value[end] != c:
                    if value[end] == "\\" and end + 1 < n:
                        buf.append(_ESCAPES.get(value[end + 1], value[end + 1]))
                        end += 2
                    else:
                        buf.append(value[end])
                        end += 1
                if end >= n:
                    return "an unclosed quote"
                i = end + 1
            elif c == "\\" and i + 1 < n:
                buf.append(_ESCAPES.get(value[i + 1], value[i + 1]))
                i += 2
            else:
                buf.append(c)
                i += 1
        out.append(Word("".join(buf), start, quoted, content))
    return out


# --- Specifiers and variables -------------------------------------------------------------------------------


def specifiers(display: str, user_unit: bool) -> dict[str, str | None]:
    """The specifiers systemd expands in a unit named as ``display`` is; None: known only where it runs."""
    name = unit_name(display)
    stem = name[:-len(".service")] if name.endswith(".service") else name
    template = stem.endswith("@")
    prefix = stem.split("@", 1)[0]
    return {"%": "%", "n": None if template else name, "N": None if template else stem, "p": prefix,
            "P": prefix, "i": None if template else "", "I": None if template else "",
            "h": None if user_unit else "/root"}


def expand_specifiers(value: str, table: dict[str, str | None], unknown: Names) -> tuple[str, Any]:
    """``value`` with its `%x` specifiers expanded (UNKNOWN_MARK for one not known, named in ``unknown``), and
    where each character of the result was written (its index in ``value``)."""
    from vramlint.cmdline import UNKNOWN_MARK

    if "%" not in value:
        return value, range(len(value))  # each character where it is, without a list of them
    out: list[str] = []
    where: list[int] = []
    i = 0
    while i < len(value):
        c = value[i]
        if c == "%" and i + 1 < len(value):
            letter = value[i + 1]
            piece = table.get(letter)
            if piece is None:
                unknown.add(f"%{letter}")
                piece = UNKNOWN_MARK
            out.append(piece)
            where.extend([i] * len(piece))
            i += 2
            continue
        out.append(c)
        where.append(i)
        i += 1
    return "".join(out), where


def substitute(word: str, env: dict[str, str | None], unknown: Names) -> list[str]:
    """One word of an ExecStart after systemd's variable substitution: `$NAME` alone split on whitespace,
    `${NAME}` in place, `$$` a `$`; a variable whose value is not known becomes UNKNOWN_MARK (named in
    ``unknown``)."""
    from vramlint.cmdline import UNKNOWN_MARK

    def value_of(name: str) -> str:
        value = env.get(name)
        if value is None:
            unknown.add(name)
            return UNKNOWN_MARK
        return value

    if word.startswith("$") and _NAME.fullmatch(word[1:]):
        value = value_of(word[1:])
        return [value] if value == UNKNOWN_MARK else value.split()
    out: list[str] = []
    i = 0
    while i < len(word):
        if word.startswith("$$", i):
            out.append("$")
            i += 2
        elif word.startswith("${", i) and word.find("}", i) > 0 and _NAME.fullmatch(word[i + 2:word.find("}", i)]):
            end = word.find("}", i)
            out.append(value_of(word[i + 2:end]))
            i = end + 1
        else:
            out.append(word[i])
            i += 1
    return ["".join(out)]


def read_env_file(text: str) -> dict[str, str]:
    """The assignments of an `EnvironmentFile=` as systemd reads one (`load_env_file`): `KEY=value` lines, `#`
    and `;` comment lines, single or double quotes, backslash escapes and continuation; no expansion."""
    out: dict[str, str] = {}
    lines = _BREAK.split(text)
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + lines[i].strip()
            i += 1
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, raw = line.split("=", 1)
        key = key.strip()
        if not _NAME.fullmatch(key):
            continue
        raw = raw.strip()
        if raw[:1] in ("'", '"') and raw.endswith(raw[0]) and len(raw) > 1:
            inner = raw[1:-1]
            raw = inner if raw[0] == "'" else re.sub(r'\\(["\\`$])', r"\1", inner)
        else:
            raw = re.sub(r"\\(.)", r"\1", raw)
        out[key] = raw
    return out


# --- Commands -----------------------------------------------------------------------------------------------


@dataclass
class Command:
    """One command an `ExecStart=` runs."""

    words: list[Any]  # Tokens: what runs (the executable, then its arguments; an `@` argv[0] left out)
    location: Location
    index: int  # which ExecStart command of the unit (0 first)


@dataclass
class Service:
    name: str  # the unit's name (its file name without .service)
    commands: list[Command]
    env: dict[str, str | None]
    env_locations: dict[str, Location]
    working_directory: str | None
    working_directory_written: str | None  # as the unit writes it (specifiers expanded where known)
    unknown_specifiers: list[str]
    unknown_variables: list[str]
    notes: list[str]
    unread_files: list[str] = field(default_factory=list)  # `EnvironmentFile=X (line N)` of each not read
    # the ExecStart=, Environment=, EnvironmentFile= and Description= settings: a unit that names vLLM only in
    # its ordering (`After=vllm.service`) is no launcher of it
    launch_settings: list[Setting] = field(default_factory=list)


def read_service(text: str, display: str, path: str | None = None, rendered: Any = None,
                 drop_ins: list[tuple[str, str]] | None = None, unit_written: str | None = None
                 ) -> tuple[Service | None, list[Problem]]:
    """The `[Service]` of a unit: its commands and environment. ``path``: the file on disk; ``rendered``: the
    `jinja.Rendered` ``text`` is, when the unit is a template (its settings placed on the template's lines);
    ``drop_ins``: (display, text) of each drop-in, in systemd's order (by file name), parsed after the unit as
    systemd does, so that their settings follow its own (an empty `ExecStart=` resets the list); ``unit_written``:
    the unit's path when ``text`` is not the file at ``display`` (a script's here-document writes it)."""
    unit, errors = parse_unit(text)
    if rendered is not None:
        _place_on_template(unit, errors, rendered)
    problems: list[Problem] = []
    for shown, drop_text in drop_ins or ():
        drop, drop_errors = parse_unit(drop_text)
        if not drop.sections and drop_errors and drop_errors[0][1].endswith("the unit is not loaded"):
            problems.append(Problem(shown, drop_errors[0][0], 1, drop_errors[0][1], level="warning"))
            continue
        for section, settings in drop.sections.items():
            for setting in settings:
                setting.file = shown
            unit.sections.setdefault(section, []).extend(settings)
    if not unit.sections and errors and errors[0][1].endswith("the unit is not loaded"):
        return None, [Problem(display, errors[0][0], 1, errors[0][1] + "; a vLLM server it starts is not read",
                              level="warning")]
    unit_path = unit_written or display  # the unit's own path: its name, and whether it is a user unit
    name = unit_name(unit_path)
    stem = name[:-len(".service")] if name.endswith(".service") else name
    user_unit = "/user/" in "/" + unit_path.replace("\\", "/") or any(
        "default.target" in s.value for s in unit.all("Install", "WantedBy"))
    table = specifiers(unit_path, user_unit)
    unknown_specs = Names()
    notes: list[str] = []
    env: dict[str, str | None] = {}
    env_locs: dict[str, Location] = {}
    unread: list[str] = []
    unread_lines: list[str] = []
    for setting in unit.all("Service", "Environment"):
        value, where = expand_specifiers(setting.value, table, unknown_specs)
        words = split_words(value)
        if isinstance(words, str):
            problems.append(Problem(setting.file or display, setting.line, 1, f"Environment= is not read ({words}): systemd "
                                    "ignores the line", level="warning"))
            continue
        from vramlint.cmdline import UNKNOWN_MARK

        for word in words:
            if "=" not in word.text or not _NAME.fullmatch(word.text.split("=", 1)[0]):
                continue  # systemd ignores an invalid assignment (with a warning in its log)
            key, val = word.text.split("=", 1)
            env[key] = None if UNKNOWN_MARK in val else val
            line, column = setting.places[where[word.start]] if setting.places else (setting.line, 1)
            env_locs[key] = Location(setting.file or display, line, column)
    for setting in unit.all("Service", "EnvironmentFile"):
        value, _where = expand_specifiers(setting.value, table, unknown_specs)
        optional = value.startswith("-")
        target = value[1:] if optional else value
        if not target:
            continue
        from vramlint.cmdline import has_unknown_mark
        from vramlint.extract.scripts import read_script_file

        file_text, why = (None, "a specifier not known here") if has_unknown_mark(target) else (
            read_script_file(target) if target.startswith("/") else (None, "not an absolute path, which systemd "
                                                                      "refuses"))
        if file_text is None:
            if not unread:
                # said on the EnvironmentFile= line that names the file (issue 10: a file not read is a finding
                # on the line that referred to it), once for the unit; the others are counted on it below
                unread_said = (setting.file or display, setting.line,
                               f"EnvironmentFile={setting.value} is not read ({why}): the variables it sets are not "
                               "known here (set them with Environment= in the unit, or scan the tree that holds the "
                               "file)" + (" - systemd starts the service without it when it is absent (`-`)"
                                          if optional else ""))
            env["\ue001EnvironmentFile"] = None  # a source of variables not seen: any undefined one may be set
            unread.append(f"EnvironmentFile={setting.value} (line {setting.line}, {why})")
            unread_lines.append(str(setting.line))
            continue
        for key, val in read_env_file(file_text).items():
            env[key] = val  # systemd: the file's assignments override Environment='s
            env_locs[key] = Location(setting.file or display, setting.line, 1)
    if unread:
        file, line, message = unread_said
        if len(unread) > 1:
            # one finding for them all (30,000 unread files were 30,000 notes on the server, 55 MB of report)
            message += (f"; {len(unread) - 1:,} more EnvironmentFile= are not read either (lines "
                        f"{said_names(unread_lines[1:])})")
        problems.append(Problem(file, line, 1, message, level="note"))
    wd = unit.last("Service", "WorkingDirectory")
    working_directory = None
    wd_written = wd.value.lstrip("-").strip() if wd is not None and wd.value.strip() else None
    if wd is not None:
        value, _where = expand_specifiers(wd.value.lstrip("-"), table, unknown_specs)
        from vramlint.cmdline import has_unknown_mark

        working_directory = None if has_unknown_mark(value) or not value.startswith("/") else value
    exec_starts = unit.all("Service", "ExecStart")
    service_type = (unit.last("Service", "Type").value.strip() if unit.last("Service", "Type") else "simple")
    if len(exec_starts) > 1 and service_type != "oneshot":
        problems.append(Problem(exec_starts[1].file or display, exec_starts[1].line, 1, f"{len(exec_starts)} ExecStart= lines in a "
                                f"Type={service_type} service: systemd refuses the unit (\"Service has more than one "
                                "ExecStart= setting, which is only allowed for Type=oneshot services\"), so the server "
                                "it would start is not checked", level="warning"))
        return None, problems
    unknown_vars = Names()
    commands: list[Command] = []
    for setting in exec_starts:
        for words in _exec_commands(setting, display, table, env, unknown_specs, unknown_vars, problems):
            commands.append(Command(words, words[0].location if words else Location(setting.file or display,
                                                                                      setting.line, 1),
                                    len(commands)))
    launch = [s for s in unit.sections.get("Service", []) if s.key in _RESET_LISTS] + unit.all("Unit", "Description")
    return Service(stem, commands, env, env_locs, working_directory, wd_written, unknown_specs, unknown_vars, notes,
                   unread, launch), problems


def _place_on_template(unit: Unit, errors: list[tuple[int, str]], rendered: Any) -> None:
    """Each setting of a unit rendered from a template placed where the template wrote it."""
    for settings in unit.sections.values():
        for setting in settings:
            setting.places = [rendered.origin(line, column) for line, column in setting.places]
            setting.line = rendered.origin(setting.line, 1)[0]
    errors[:] = [(rendered.origin(line, 1)[0], why) for line, why in errors]


def _exec_commands(setting: Setting, display: str, table: dict[str, str | None], env: dict[str, str | None],
                   unknown_specs: Names, unknown_vars: Names, problems: list[Problem]) -> list[list[Any]]:
    from vramlint.cmdline import Token

    display = setting.file or display  # a drop-in's ExecStart= is placed in the drop-in
    value, where = expand_specifiers(setting.value, table, unknown_specs)
    split = split_words(value)
    if isinstance(split, str):
        problems.append(Problem(display, setting.line, 1, f"ExecStart= is not read ({split}): systemd refuses the "
                                "unit", level="warning"))
        return []
    groups: list[list[Word]] = [[]]
    for word in split:
        if word.text == ";" and not word.quoted:
            groups.append([])
        else:
            groups[-1].append(word)
    out: list[list[Any]] = []
    for group in groups:
        if not group:
            continue
        first = group[0]
        prefix = re.match(r"[-@:+!]*", first.text).group(0)
        if prefix and not first.quoted:
            rest = first.text[len(prefix):]
            group = ([Word(rest, first.start + len(prefix), False, None)] if rest else []) + group[1:]
        substituting = ":" not in prefix
        if "@" in prefix and len(group) >= 2:
            group = [group[0], *group[2:]]  # the second word is argv[0], a name, not run
        words: list[Any] = []
        for k, word in enumerate(group):
            at = where[min(word.start, len(where) - 1)] if where else 0
            line, column = setting.places[min(at, len(setting.places) - 1)] if setting.places else (setting.line, 1)
            texts = substitute(word.text, env, unknown_vars) if substituting else [word.text]
            if k == 0:
                raw = setting.value[at:]
                texts = [_keep_known_name(t, raw.split(None, 1)[0] if raw.strip() else t) for t in texts]
            for text in texts:
                if word.content is not None and any(c.isspace() for c in text):
                    c_at = where[min(word.content, len(where) - 1)]
                    c_line, c_col = setting.places[min(c_at, len(setting.places) - 1)]
                    words.append(Token(text, Location(display, c_line, c_col - 1), quoted=True))
                else:
                    words.append(Token(text, Location(display, line, column, line, column + len(word.text))))
        if words:
            out.append(words)
    return out


def _keep_known_name(text: str, written: str) -> str:
    """The executable's path with an unknown folder (`%h/venv/bin/vllm`): what runs is named by its last part,
    which is known, so the word is kept as written rather than made unknown whole (the unknown is said)."""
    from vramlint.cmdline import UNKNOWN_MARK

    if UNKNOWN_MARK in text and "/" in text and UNKNOWN_MARK not in text.rsplit("/", 1)[1]:
        # (a folder left unknown by a template is named so; a specifier's is kept as written, `%h/...`)
        return written.replace(UNKNOWN_MARK, "<unknown>")
    return text


# --- Servers --------------------------------------------------------------------------------------------------


def is_unit_name(display: str) -> bool:
    return display.replace("\\", "/").rsplit("/", 1)[-1].lower().endswith(".service")


TEMPLATE_SUFFIXES = (".j2", ".jinja2", ".jinja")


def unit_name(display: str) -> str:
    """The unit's file name (an Ansible role's template `vllm.service.j2` writes `vllm.service`)."""
    name = display.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in TEMPLATE_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[:-len(suffix)]
    return name


MAX_DROP_INS = 64


def drop_ins(path: str, display: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The drop-ins of the unit at ``path`` that the scanned tree holds beside it (`NAME.service.d/*.conf`, and a
    template instance's `NAME@.service.d/`), in systemd's order: by file name (systemd.unit(5): "all drop-in
    files are sorted by their filename"); and what was not read, said. Read with `vramlint.fsread` (inside the
    scanned tree, bounded)."""
    from vramlint.fsread import Refusal, outside_reason, read_text

    folder = path + ".d"
    shown_folder = display + ".d"
    found: dict[str, tuple[str, str]] = {}
    said: list[str] = []
    if not os.path.isdir(folder) or outside_reason(folder) is not None:
        return [], said
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".conf"))
    except OSError as exc:
        return [], [f"{shown_folder}: cannot list it ({exc.strerror or exc})"]
    for name in names[:MAX_DROP_INS]:
        file = os.path.join(folder, name)
        if not os.path.isfile(file):
            continue
        text = read_text(file)
        if isinstance(text, Refusal):
            said.append(f"{shown_folder}/{name} ({text})")
            continue
        found[name] = (f"{shown_folder}/{name}", text)
    if len(names) > MAX_DROP_INS:
        raise TooManyDropIns(f"{shown_folder}/{names[MAX_DROP_INS]}", len(names))
    return [found[n] for n in sorted(found)], said


class TooManyDropIns(Exception):
    """More drop-ins than vramlint reads: systemd applies them all, and a later one can reset ExecStart= or set
    Environment=, so the unit read from the first ones is not the one systemd starts."""

    def __init__(self, first_unread: str, count: int) -> None:
        super().__init__(first_unread)
        self.first_unread = first_unread
        self.count = count


def read_drop_in_servers(text: str, display: str, path: str | None = None) -> tuple[list[Server], list[Problem]]:
    """A drop-in (`NAME.service.d/x.conf`) whose unit is not in the scanned tree (a packaged unit it overrides):
    what it sets read on its own, said so; nothing when its unit is beside it (read with the unit)."""
    folder = os.path.dirname(path) if path is not None else None
    if folder is not None and os.path.isfile(folder[:-len(".d")]):
        return [], []
    unit_display = display.rsplit("/", 1)[0][:-len(".d")] if "/" in display else display
    servers, problems = read_systemd_servers("", unit_display, None, [(display, text)])
    unit = unit_display.rsplit("/", 1)[-1]
    for server in servers:
        server.file = display
        server.notes.append(f"a drop-in of {unit}, which is not in the scanned tree: read on its own, so what the "
                            "unit itself sets (an ExecStart= this drop-in does not reset, its Environment=) is not "
                            "known here; scan the unit with its drop-ins to check them together")
    return servers, [p if p.file != unit_display else Problem(display, p.line, p.column, p.message, p.level)
                     for p in problems]


def read_systemd_servers(text: str, display: str, path: str | None = None,
                         given_drop_ins: list[tuple[str, str]] | None = None, unit: str | None = None
                         ) -> tuple[list[Server], list[Problem]]:
    """The vLLM servers a systemd service unit starts, read on its own: its version and GPUs are those of the host
    it runs on (CUDA_VISIBLE_DEVICES in its environment gives the count). ``given_drop_ins``: the drop-ins to
    apply, instead of those found beside ``path``; ``unit``: the unit's path when ``text`` is not the file at
    ``display`` (a script's here-document writes it: its name and specifiers are the unit's)."""
    from vramlint.cmdline import find_vllm_invocation
    from vramlint.extract.launch_scripts import follow_repository_script

    rendered = None
    template_notes: list[str] = []
    if unit is None and unit_name(display) != display.replace("\\", "/").rsplit("/", 1)[-1]:
        from vramlint.extract.ansible import render_role_unit

        got = render_role_unit(text, display, path)
        if isinstance(got, Problem):
            return [], [got]
        rendered, template_notes = got
        template, text = text, rendered.text
    try:
        applied, unread_drop_ins = (given_drop_ins, []) if given_drop_ins is not None else \
            drop_ins(path, display) if path is not None else ([], [])
    except TooManyDropIns as many:
        # reading the first MAX_DROP_INS only (as before) judged a command systemd never runs when a later
        # drop-in resets ExecStart= (hostile22: 10,001 drop-ins, the last one's ExecStart= the one run)
        return [], [Problem(many.first_unread, 1, 1, f"{display} has {many.count:,} drop-ins, more than the "
                            f"{MAX_DROP_INS} vramlint reads: systemd applies all of them in file-name order, and one "
                            "from here on may reset ExecStart= or set Environment=, so the vLLM server the unit "
                            "starts is not known and not checked", level="warning")]
    service, problems = read_service(text, display, path, rendered, applied, unit_written=unit)
    if service is None:
        return [], problems
    if rendered is not None and rendered.trimmed:
        template_notes.extend(_joined_by_trim_blocks(service, rendered, template))
    if applied:
        template_notes.append(f"drop-ins applied over the unit, in systemd's order: "
                              f"{', '.join(shown for shown, _ in applied)}")
    if unread_drop_ins:
        template_notes.append(f"drop-ins not read: {'; '.join(unread_drop_ins)} (their settings are not known here)")
    service.notes[:0] = template_notes
    servers: list[Server] = []
    unread: list[tuple[Command, str]] = []
    runs = f"{service.name}.service runs the script {{shown}} with the unit's Environment="
    for command in service.commands:
        inv = find_vllm_invocation(command.words, [], None, dict(service.env))
        note = None
        if inv is None:
            from vramlint.extract.shell_scripts import container_run_server

            container = container_run_server(command.words, display, problems)
            if container is not None:
                # the unit runs vLLM's image itself: the container's settings are those of its `docker run`
                container.source_format, container.name = "systemd", service.name
                container.location = Location(container.location.file, container.location.line,
                                              container.location.column, yaml_path=_path(command))
                _add_unit_notes(container, service)
                servers.append(container)
                continue
            if rendered is not None and path is not None:
                scripted = _role_template_script(path, command, service)
                if scripted is not None:
                    launched_servers, script_problems = scripted
                    problems.extend(script_problems)
                    servers.extend(launched_servers)
                    if launched_servers or script_problems:
                        continue
            inv, note, why, launched = follow_repository_script(command.words, service.working_directory,
                                                                dict(service.env), "WorkingDirectory=", runs)
            if inv is None and not launched and why is not None and path is not None:
                checkout = _checkout_script(command, service, path)
                if checkout is not None:
                    words, folder, said = checkout
                    # the checkout's copy is read: what it says replaces "not read"
                    inv, note, why, launched = follow_repository_script(words, folder, dict(service.env),
                                                                        "WorkingDirectory=", runs + said)
            for server in launched:
                _add_unit_notes(server, service)
            servers.extend(launched)
            if inv is None:
                if why is not None and not launched:
                    unread.append((command, why))
                continue
        server = _make_server(service, command, inv, display)
        if note is not None:
            server.notes.append(note)
        servers.append(server)
    if not servers and not problems and _names_vllm_launch(service):
        if unread:
            command, why = unread[0]
            problems.append(Problem(display, command.location.line, command.location.column,
                                    f"ExecStart= {why}", level="note"))
        else:
            # on the ExecStart= that names vLLM when one does (hostile23: vLLM's words past a `sh -c` script
            # systemd's unquoting cut short, said on the Description= line above it), else the first mention
            # (vLLM's own command or module, not a path that holds the name: /opt/vllm-gateway/bin/gateway)
            named = next((c for c in service.commands if _VLLM_COMMAND.search(" ".join(w.text or "" for w in c.words))),
                         None)
            line, col = (named.location.line, named.location.column) if named is not None and \
                named.location.file == display else \
                (next((n for n, raw in enumerate(text.splitlines(), start=1) if "vllm" in raw.lower()), 1), 1)
            problems.append(Problem(display, line, col, "this unit mentions vLLM but no ExecStart= starts a vLLM server "
                                    "vramlint can read (`vllm serve`, `python -m vllm.entrypoints.openai.api_server`"
                                    ", or a script of the scanned tree that runs one): not checked", level="note"))
    return servers, problems


# in the command's words joined: `vllm` as a word of its own (after a path or the quotes systemd's unquoting left
# on it), `vllm serve`, or vLLM's server module
_VLLM_COMMAND = re.compile(r"""\bvllm\s+serve\b|\bvllm\.entrypoints\b|(?:^|[\s/'"])vllm(?=\s|$)""")


def _role_template_script(path: str, command: Command, service: Service) -> tuple[list[Server], list[Problem]] | None:
    """The servers of the script an Ansible role's unit template runs, when a `template:` task of the role writes
    it (vramlint.extract.ansible.role_template_script), read with the unit's environment; None when no task does."""
    from vramlint.extract.ansible import role_template_script
    from vramlint.extract.shell_scripts import read_shell_script

    found = role_template_script(path, command.words)
    if found is None:
        return None
    from vramlint.extract.launch_scripts import visible_devices_gpu

    display, text, said = found
    servers, problems = read_shell_script(text, display, env=dict(service.env))
    for server in servers:
        # the script runs with the unit's environment, under what it sets itself
        for key, value in service.env.items():
            if not key.startswith("\ue001") and key not in server.env:
                server.env[key] = value
                if key in service.env_locations:
                    server.env_locations[key] = service.env_locations[key]
        if server.gpu is None:
            visible_devices_gpu(server)
        server.notes.append(said)
        _add_unit_notes(server, service)
    return servers, problems


def _names_vllm_launch(service: Service) -> bool:
    """Whether the unit says it launches vLLM: its Description=/Environment= name it, or an ExecStart= may run it
    (`vllm serve`, a vLLM module, a container of vLLM's, an executable or script named for it); a word of another
    program's arguments that holds the name (node_exporter's `--collector.systemd.unit-include=vllm-.*`) is not."""
    from vramlint.extract.shell_scripts import _command_may_run_vllm

    if any("vllm" in s.value.lower() for s in service.launch_settings if s.key != "ExecStart"):
        return True
    for command in service.commands:
        texts = [w.text for w in command.words]
        if texts and ("vllm" in os.path.basename(texts[0] or "").lower() or _command_may_run_vllm(texts)):
            return True
        if any(t is not None and t.endswith(".sh") and "vllm" in os.path.basename(t).lower() for t in texts):
            return True
    return False


def _joined_by_trim_blocks(service: Service, rendered: Any, template: str) -> list[str]:
    """What is said of an ExecStart= that runs on past a line of its template whose line break a block tag took
    (Ansible's template module renders with trim_blocks: `...{% endfor %}` then `Restart=always` is one line). A
    line that holds only block tags (`{% if x %}` between continued lines) is the template's layout, not said."""
    lines = template.split("\n")
    out = []
    for setting in service.launch_settings:
        if setting.key != "ExecStart" or setting.file is not None or not setting.places:
            continue
        first, last = setting.places[0][0], setting.places[-1][0]
        for line in rendered.trimmed:
            if not first <= line < last or line > len(lines):
                continue
            if not re.sub(r"\{%.*?%\}", "", lines[line - 1]).strip():
                continue
            out.append(f"line {line} of the template ends with a block tag, whose line break Ansible's template module "
                       f"removes (trim_blocks), so line {line + 1} is part of this ExecStart= value; end the tag "
                       "with `+%}` to keep the line break")
            break
    return out


def _checkout_script(command: Command, service: Service, unit_path: str
                     ) -> tuple[list[Any], str, str] | None:
    """The script an ExecStart runs from the unit's `WorkingDirectory=` (an absolute path under it, or a shell's
    relative argument), found in the scanned repository: a unit kept in a repository and run from the folder
    it is checked out to (`WorkingDirectory=/home/me/llm-serve`, `ExecStart=/home/me/llm-serve/start.sh`) runs
    that checkout's copy. (the command with the script's path made relative, the repository folder holding it,
    what is said of it), or None. Looked up from the unit's folder up to the scanned root."""
    from vramlint.cmdline import Token, has_unknown_mark
    from vramlint.discover import display_path
    from vramlint.extract import scripts
    from vramlint.fsread import outside_reason

    call = scripts.script_call(command.words)
    written = service.working_directory_written
    if call is None or not call.path.text or written is None:
        return None
    target = call.path.text
    if target.startswith("/"):
        known = service.working_directory
        if known is None or not target.startswith(known.rstrip("/") + "/"):
            return None
        rel = target[len(known.rstrip("/")) + 1:]
    elif has_unknown_mark(target):
        return None
    else:
        rel = target
    # real from the start, so each folder up is real too and is judged without resolving it again (a realpath at
    # each level of a unit 300 folders deep cost 0.8 CPU-s a unit)
    from vramlint.fsread import real_path

    folder = os.path.dirname(real_path(os.path.abspath(unit_path)))
    # and at most MAX_CHECKOUT_LEVELS up: a unit is kept near its repository's root (each level is a stat of a path
    # as deep as the unit; 1,000 units 300 folders deep took 12 CPU-s)
    for _ in range(MAX_CHECKOUT_LEVELS):
        if outside_reason(folder, real=folder) is not None:
            break
        candidate = os.path.normpath(os.path.join(folder, rel))
        if os.path.isfile(candidate) and outside_reason(candidate) is None:
            words = [Token(rel, w.location) if w is call.path else w for w in command.words]
            said = (f" (WorkingDirectory={written} taken to be the checkout of this repository, "
                    f"{display_path(folder)}: the unit runs its copy of the script)")
            return words, folder, said
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


def _path(command: Command) -> str:
    return "ExecStart" + (f"[{command.index}]" if command.index else "")


def _make_server(service: Service, command: Command, inv: Any, display: str) -> Server:
    from vramlint.extract.launch_scripts import visible_devices_gpu
    from vramlint.extract.shell_scripts import fill_from_invocation

    location = inv.location or command.location
    location = Location(location.file, location.line, location.column, location.end_line, location.end_column,
                        yaml_path=_path(command))
    server = Server(file=display, location=location, source_format="systemd", kind="systemd service",
                    name=service.name)
    server.container = service.name
    server.env = {k: v for k, v in service.env.items() if not k.startswith("\ue001")}
    server.env_locations = dict(service.env_locations)
    fill_from_invocation(server, inv)
    visible_devices_gpu(server)
    _add_unit_notes(server, service, inv)
    return server


def _add_unit_notes(server: Server, service: Service, inv: Any = None) -> None:  # noqa: ANN401
    """What the unit leaves unknown, said once: in what the invocation says of the words it made unknown when it
    says them (as the supervisord reader does), else in a note of its own."""
    causes = []
    if service.unknown_variables:
        names = said_names(service.unknown_variables, "$")
        causes.append(f"ExecStart= uses {names}, which " + (
            f"{said_names(service.unread_files, limit=3)} may set: not read here (set them with Environment=, or scan the "
            "tree that holds the file)" if service.unread_files else
            "this unit's Environment= does not set: systemd takes them from its manager's environment "
            "(DefaultEnvironment=) or substitutes an empty string (set them with Environment=)"))
    if service.unknown_specifiers:
        causes.append(f"the unit's specifiers {said_names(service.unknown_specifiers)} are known only where systemd "
                      "starts it (a template's instance, a user manager's home): write the values, or check the unit "
                      "as instantiated")
    folded = False
    if inv is not None and causes:
        said = f"({'; '.join(causes)})"
        marked = [k for k, u in enumerate(server.unchecked) if "(a variable or template)" in u]
        for k in marked:
            # once: the first mention names the cause, the others point back at it
            server.unchecked[k] = server.unchecked[k].replace(
                "(a variable or template)", said if k == marked[0] else "(as said above)", 1)
        folded = bool(marked)
    server.notes.extend(service.notes)
    if not folded:
        server.notes.extend(causes)
