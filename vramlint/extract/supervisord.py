"""supervisord configuration files: the vLLM servers their `[program:NAME]` sections start (never running them).

Read with supervisord's own semantics (supervisor 4.x, `supervisor/options.py` and `datatypes.py`):

- the file is an INI file as Python's `RawConfigParser` reads it with supervisord's settings: `[section]`
  headers, `key=value` or `key: value` (keys in any case), a line indented deeper than its key continuing the
  value (joined with line breaks), full-line comments starting with `;` or `#`, and inline comments starting
  with `;` or `#` after whitespace (also inside quotes: the parser knows no quotes); a section written twice is
  one section, a key written twice keeps its last value;
- `command=` is expanded as a Python `%` format (`%(program_name)s`, `%(process_num)d`, `%(ENV_X)s` from
  supervisord's environment and the program's own `environment=`, `%%` a `%`), then split with
  `shlex.split` and run without a shell: a `vllm serve` in it is read as a container command in exec form,
  a `bash -c "..."` as the script it is;
- `environment=KEY="v",KEY2=v2` (and the `[supervisord]` section's, which every program inherits) is the
  process's environment, parsed as supervisord parses it (`shlex` words, `=` and `,`);
- `numprocs=N` starts N processes from the one section (process_num from `numprocs_start`), each a server.

A `%(ENV_X)s` that neither the program's environment nor what the file (or the image running it) sets names
is supervisord's own environment at run time: unknown, said once per server. Nothing here follows `[include]`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from vramlint.extract.unknowns import Names, said_names
from vramlint.model import Location, Problem, Server

MAX_NUMPROCS = 16  # processes read per section; more are said, not read
MAX_FORMAT_WIDTH = 1000  # a `%(name)Nd` wider than this is not built (unknown)
# Linux's execve takes at most ARG_MAX of arguments and environment together (a quarter of the default 8 MiB stack
# limit: 2 MiB), and no one string over MAX_ARG_STRLEN (128 KiB): a command= or environment= that expands past
# this is one supervisord cannot spawn (E2BIG, "Argument list too long"), and is not built further
MAX_EXPANDED = 2 * 1024 * 1024
_BREAK = re.compile(r"\r\n|\r|\n")  # Python's text mode (universal newlines), how configparser gets its lines
_SECTION = re.compile(r"\[(?P<header>.+)\]")  # RawConfigParser.SECTCRE
_OPTION = re.compile(r"(?P<option>.*?)\s*(?P<vi>=|:)\s*(?P<value>.*)$")  # RawConfigParser.OPTCRE
_FORMAT = re.compile(r"%(?:%|\((?P<name>[^)]*)\)(?P<spec>[#0\- +]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]))")


@dataclass
class Value:
    """An option's value as configparser gives it, and where each of its lines starts in the file."""

    key_line: int
    pieces: list[tuple[str, int, int]]  # (text of a line of the value, file line, 1-based column)

    @property
    def text(self) -> str:
        return "\n".join(p[0] for p in self.pieces).rstrip()


@dataclass
class Section:
    name: str
    line: int
    options: dict[str, Value] = field(default_factory=dict)


def parse_ini(text: str) -> tuple[list[Section], list[tuple[int, str]]]:
    """The sections of ``text`` as supervisord's RawConfigParser reads them, and the lines it cannot read
    (which make supervisord refuse the file)."""
    sections: dict[str, Section] = {}
    errors: list[tuple[int, str]] = []
    current: Section | None = None
    option: str | None = None
    indent_level = 0
    for number, raw in enumerate(_BREAK.split(text), start=1):
        comment_start = None
        for prefix in (";", "#"):
            at = raw.find(prefix)
            while at >= 0:
                if at == 0 or raw[at - 1].isspace():
                    comment_start = at if comment_start is None else min(comment_start, at)
                    break
                at = raw.find(prefix, at + 1)
        if raw.strip().startswith((";", "#")):
            comment_start = 0
        value = raw[:comment_start].strip()
        if not value:
            if comment_start is None and current is not None and option is not None:
                current.options[option].pieces.append(("", number, 1))  # an empty line inside a value
            continue
        first = len(raw) - len(raw.lstrip())
        if current is not None and option is not None and first > indent_level:
            current.options[option].pieces.append((value, number, first + 1))
            continue
        indent_level = first
        header = _SECTION.match(value)
        if header:
            name = header.group("header")
            current = sections.setdefault(name, Section(name, number))  # strict=False: one section
            option = None
        elif current is None:
            errors.append((number, "a line before any [section] header"))
        else:
            m = _OPTION.match(value)
            if m is None or not m.group("option").strip():
                errors.append((number, f"not a `key=value` line: {value[:60]}"))
                continue
            option = m.group("option").rstrip().lower()
            column = raw.find(m.group("value"), first + m.end("vi")) + 1 if m.group("value") else first + 1
            current.options[option] = Value(number, [(m.group("value").strip(), number, max(column, 1))])
    return list(sections.values()), errors


@dataclass
class Program:
    """One process a `[program:NAME]` section starts."""

    name: str  # its process_name as expanded
    section: Section
    command: list[Any]  # Tokens: the argv supervisord executes, each word at its place
    command_location: Location
    env: dict[str, str | None]
    env_locations: dict[str, Location]
    unknown: list[str]  # names of expansions whose value is not known (`%(ENV_X)s`), in order
    notes: list[str]
    process_num: int
    yaml_path: str


def read_programs(text: str, display: str, environ: dict[str, str | None] | None = None,
                  environ_locations: dict[str, Location] | None = None, here: str | None = None
                  ) -> tuple[list[Program], list[Problem]]:
    """The processes of every `[program:*]` section. ``environ``: supervisord's own environment where it is known
    (the ENV of the image that runs it); any other `%(ENV_X)s` is unknown. ``here``: the folder the file is read
    from in the container (`%(here)s`), when known."""
    sections, errors = parse_ini(text)
    problems = [Problem(display, line, 1, f"supervisord cannot read this file ({why}): it refuses to start, so "
                        "the programs it would run are not checked", level="warning") for line, why in errors[:1]]
    if errors:
        return [], problems
    lines = text.splitlines()
    base_env: dict[str, str | None] = dict(environ or {})
    base_locs: dict[str, Location] = dict(environ_locations or {})
    top = next((s for s in sections if s.name == "supervisord"), None)
    if top is not None and "environment" in top.options:
        # the [supervisord] section's variables are put in supervisord's own environment, so every child has them
        pairs, why = _env_pairs(top.options["environment"], display, {})
        if pairs is not None:
            for key, (value, where) in pairs.items():
                base_env[key], base_locs[key] = value, where
    out: list[Program] = []
    for section in sections:
        if not section.name.startswith("program:"):
            continue
        program_name = section.name.split(":", 1)[1]
        command = section.options.get("command")
        if command is None:
            problems.append(Problem(display, section.line, 1, f"[{section.name}] has no command=: supervisord "
                                    "refuses the file (\"does not specify a command\")", level="warning"))
            continue
        numprocs = _integer(section, "numprocs", 1)
        start = _integer(section, "numprocs_start", 0)
        if numprocs is None or start is None:
            problems.append(Problem(display, section.line, 1, f"[{section.name}]: numprocs or numprocs_start is "
                                    "not an integer, which supervisord refuses", level="warning"))
            continue
        process_name = section.options["process_name"].text if "process_name" in section.options \
            else "%(program_name)s"
        if numprocs > 1 and "%(process_num)" not in process_name:
            problems.append(Problem(display, section.line, 1, f"[{section.name}] has numprocs={numprocs} but its "
                                    "process_name has no %(process_num): supervisord refuses the file ("
                                    "\"%(process_num) must be present within process_name when numprocs > 1\")",
                                    level="warning"))
            continue
        notes = []
        if numprocs > MAX_NUMPROCS:
            notes.append(f"numprocs={numprocs}: supervisord starts {numprocs} processes of this command; vramlint "
                         f"reads the first {MAX_NUMPROCS}")
        autostart = section.options.get("autostart")
        if autostart is not None and autostart.text.strip().lower() in ("false", "no", "off", "0"):
            notes.append(f"autostart={autostart.text.strip()}: supervisord starts this program only when told to "
                         "(`supervisorctl start`)")
        for process_num in range(start, start + min(numprocs, MAX_NUMPROCS)):
            expansions: dict[str, Any] = {"program_name": program_name, "group_name": program_name,
                                          "process_num": process_num, "numprocs": numprocs, "here": here}
            expansions.update({f"ENV_{k}": v for k, v in base_env.items()})
            env, env_locs = dict(base_env), dict(base_locs)
            if "environment" in section.options:
                pairs, why = _env_pairs(section.options["environment"], display, expansions)
                if pairs is None:
                    problems.append(Problem(display, section.options["environment"].key_line, 1,
                                            f"[{section.name}] environment= is not read ({why}): supervisord "
                                            "refuses it", level="warning"))
                    break
                for key, (value, where) in pairs.items():
                    env[key], env_locs[key] = value, where
                    expansions[f"ENV_{key}"] = value
            unknown = Names()
            words, why = _command_words(command, display, lines, expansions, unknown)
            if words is None:
                problems.append(Problem(display, command.key_line, 1, f"[{section.name}] command= is not read "
                                        f"({why}): supervisord cannot start it", level="warning"))
                break
            name = _expand_plain(process_name, expansions) or program_name
            path = f"program:{program_name}" + (f"/{process_num}" if numprocs > 1 else "")
            first_line, first_col = command.pieces[0][1], command.pieces[0][2]
            out.append(Program(name, section, words, Location(display, first_line, first_col, yaml_path=path),
                               env, env_locs, unknown, list(notes), process_num, path))
    return out, problems


def _integer(section: Section, key: str, default: int) -> int | None:
    if key not in section.options:
        return default
    try:
        return int(section.options[key].text.strip())
    except ValueError:
        return None


class _TooLong(Exception):
    """An expansion past MAX_EXPANDED characters."""


_TOO_LONG = (f"it expands past {MAX_EXPANDED // (1024 * 1024)} MiB, more than Linux's execve takes (E2BIG, \"Argument "
             "list too long\"), so supervisord cannot spawn it")


def _expand(text: str, expansions: dict[str, Any], unknown: list[str]) -> tuple[str, list[int]] | None:
    """supervisord's `text % expansions`, with where each character of the result was written (its index in
    ``text``): a name not known becomes UNKNOWN_MARK (named in ``unknown``, once: a `Names` keeps that O(1)). None
    when supervisord's format fails (a lone `%`); _TooLong past MAX_EXPANDED characters (a 100 KB value named
    5,000 times made 500 MB, and a list of as many places)."""
    from vramlint.cmdline import UNKNOWN_MARK

    out: list[str] = []
    where: list[int] = []
    size = 0
    i = 0
    while i < len(text):
        at = text.find("%", i)
        if at < 0:
            at = len(text)
        out.append(text[i:at])
        where.extend(range(i, at))
        if at >= len(text):
            break
        m = _FORMAT.match(text, at)
        if m is None:
            return None
        if m.group(0) == "%%":
            piece = "%"
        else:
            name = m.group("name")
            value = expansions.get(name)
            if value is None:
                if isinstance(unknown, Names):
                    unknown.add(name)
                elif name not in unknown:
                    unknown.append(name)
                piece = UNKNOWN_MARK
            elif any(int(d) > MAX_FORMAT_WIDTH for d in re.findall(r"\d+", m.group("spec"))):
                piece = UNKNOWN_MARK  # `%(process_num)999999999d`: a value past any command line, not built
            else:
                try:
                    piece = ("%" + m.group("spec")) % value
                except (TypeError, ValueError):
                    return None
        size += at - i + len(piece)
        if size > MAX_EXPANDED:
            raise _TooLong()
        out.append(piece)
        where.extend([at] * len(piece))
        i = m.end()
    return "".join(out), where


def _expand_plain(text: str, expansions: dict[str, Any]) -> str | None:
    try:
        done = _expand(text, expansions, [])
    except _TooLong:
        return None
    return done[0] if done is not None else None


def _env_pairs(value: Value, display: str, expansions: dict[str, Any]
               ) -> tuple[dict[str, tuple[str | None, Location]] | None, str | None]:
    """supervisord's `dict_of_key_value_pairs` of an expanded `environment=`: shlex words (quotes kept, then
    stripped), `KEY = VALUE` separated by commas."""
    import shlex

    from vramlint.cmdline import UNKNOWN_MARK

    unknown = Names()
    try:
        done = _expand(value.text, expansions, unknown)
    except _TooLong:
        return None, _TOO_LONG
    if done is None:
        return None, "a `%` that is not a %(name)s expansion"
    lexer = shlex.shlex(done[0])
    lexer.wordchars += "/.+-():" + UNKNOWN_MARK
    try:
        tokens = list(lexer)
    except ValueError as exc:
        return None, str(exc)
    out: dict[str, tuple[str | None, Location]] = {}
    cursor = [0, 0]  # the keys come in the order written: each is looked for after the one before (linear)
    i = 0
    while i < len(tokens):
        triple = tokens[i:i + 3]
        if len(triple) != 3 or triple[1] != "=":
            return None, "unexpected end of key/value pairs"
        key, raw = triple[0], triple[2].strip("'\"")
        out[key] = (None if UNKNOWN_MARK in raw else raw, _find_key(value, key, display, cursor))
        i += 4
    return out, None


def _find_key(value: Value, key: str, display: str, cursor: list[int]) -> Location:
    """Where ``key`` is written, from ``cursor`` (piece, offset) on; the cursor moves past it."""
    for k in range(cursor[0], len(value.pieces)):
        text, line, column = value.pieces[k]
        start = cursor[1] if k == cursor[0] else 0
        at = text.find(key + "=", start)
        if at < 0:
            at = text.find(key, start)
        if at >= 0:
            cursor[:] = [k, at + len(key)]
            return Location(display, line, column + at)
    return Location(display, value.key_line, 1)


def _command_words(value: Value, display: str, lines: list[str], expansions: dict[str, Any],
                   unknown: list[str]) -> tuple[list[Any] | None, str | None]:
    """The argv of `command=` as supervisord makes it (expanded, then `shlex.split`), each word a Token at the
    place it was written; a word holding spaces (a `bash -c` script) is placed so that its own words are too."""
    from vramlint.cmdline import Token

    raw = value.text
    try:
        done = _expand(raw, expansions, unknown)
    except _TooLong:
        return None, _TOO_LONG
    if done is None:
        return None, "a `%` that is not a %(name)s expansion"
    text, where = done
    # where each character of the value was written: the value's lines joined by "\n", as configparser joins them
    places: list[tuple[int, int]] = []
    for k, (piece, line, column) in enumerate(value.pieces):
        places.extend((line, column + c) for c in range(len(piece)))
        if k + 1 < len(value.pieces):
            places.append((line, column + len(piece)))
    split = _shlex_split(text)
    if isinstance(split, str):
        return None, split
    words = []
    for word, start, content in split:
        line, column = places[min(where[min(start, len(where) - 1)], len(places) - 1)] if places else (
            value.key_line, 1)
        if any(c.isspace() for c in word) and content is not None:
            # a script string: placed as a literal block whose first line is the one it starts on
            c_line, c_col = places[min(where[min(content, len(where) - 1)], len(places) - 1)]
            words.append(Token(word, Location(display, c_line - 1, 1), block="|", indent=c_col, lines=lines))
        else:
            words.append(Token(word, Location(display, line, column, line, column + len(word))))
    return words, None


def _shlex_split(text: str) -> list[tuple[str, int, int | None]] | str:
    """`shlex.split(text)` (POSIX mode, no comments) with, for each word, the index where it starts and the
    index its quoted content starts at (None when it has no quotes); or shlex's error."""
    out: list[tuple[str, int, int | None]] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        start, content = i, None
        buf: list[str] = []
        while i < n and text[i] not in " \t\r\n":
            c = text[i]
            if c == "'":
                end = text.find("'", i + 1)
                if end < 0:
                    return "No closing quotation"
                content = i + 1 if content is None else content
                buf.append(text[i + 1:end])
                i = end + 1
            elif c == '"':
                content = i + 1 if content is None else content
                i += 1
                while i < n and text[i] != '"':
                    if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\':
                        buf.append(text[i + 1])
                        i += 2
                    else:
                        buf.append(text[i])
                        i += 1
                if i >= n:
                    return "No closing quotation"
                i += 1
            elif c == "\\":
                if i + 1 >= n:
                    return "No escaped character"
                buf.append(text[i + 1])
                i += 2
            else:
                buf.append(c)
                i += 1
        out.append(("".join(buf), start, content))
    return out


# --- Where supervisord is run, and which file it reads ------------------------------------------------------

# supervisord's search when no -c is given (options.py `searchpaths`: beside the program's folder first, which for
# an installed /usr/bin/supervisord is /usr/etc/ and /usr/, then relative ones taken from the working directory),
# and the Debian/Ubuntu package's /etc/supervisor/supervisord.conf `[include] files =
# /etc/supervisor/conf.d/*.conf`, which is what an image that apt-installs supervisor runs
DEFAULT_CONFS = ("/usr/etc/supervisord.conf", "/usr/supervisord.conf", "supervisord.conf", "etc/supervisord.conf",
                 "/etc/supervisord.conf", "/etc/supervisor/supervisord.conf")
DEBIAN_INCLUDE = "/etc/supervisor/conf.d/"


@dataclass
class SupervisordCall:
    conf: str | None  # the -c file as written; None: supervisord's own search
    location: Location | None


def supervisord_call(words: list[Any]) -> SupervisordCall | None:
    """`supervisord [-c FILE] ...` (also after `exec`, `tini --`, `/usr/bin/supervisord`, `python -m
    supervisor.supervisord`, or inside `sh -c "..."`), or None."""
    from vramlint.cmdline import split_token

    i = 0
    texts = [w.text for w in words]
    while i < len(texts) and texts[i] in ("exec", "tini", "dumb-init", "--", "nohup", "gosu", "sudo"):
        i += 1
    if i >= len(texts) or texts[i] is None:
        return None
    program = os.path.basename(texts[i])
    if program in ("sh", "bash", "dash") and i + 2 < len(texts) and texts[i + 1] == "-c" and texts[i + 2]:
        for command in _simple_commands(split_token(words[i + 2])):
            found = supervisord_call(command)
            if found is not None:
                return found
        return None
    if program.startswith("python") and texts[i + 1:i + 3] == ["-m", "supervisor.supervisord"]:
        i += 2
    elif program != "supervisord":
        return None
    rest = words[i + 1:]
    for k, word in enumerate(rest):
        text = word.text or ""
        if text in ("-c", "--configuration") and k + 1 < len(rest):
            return SupervisordCall(rest[k + 1].text, rest[k + 1].location)
        if text.startswith("--configuration="):
            return SupervisordCall(text.split("=", 1)[1], word.location)
        if text.startswith("-c") and len(text) > 2:
            return SupervisordCall(text[2:], word.location)
    return SupervisordCall(None, words[i].location)


def _simple_commands(words: list[Any]) -> list[list[Any]]:
    out: list[list[Any]] = [[]]
    for word in words:
        if word.op:
            out.append([])
        else:
            out[-1].append(word)
    return [c for c in out if c]


def conf_in_image(call: SupervisordCall, built: Any, context: str) -> list[tuple[str, str, int]]:
    """The files of the build context (the folder ``context``) that supervisord reads in the image ``built``
    makes: (image path, context path, COPY line) each, through the COPY/ADD that put them there
    (`image_files.context_source`)."""
    import posixpath

    from vramlint.extract.image_files import context_source

    def is_dir(rel: str) -> bool:
        return os.path.isdir(os.path.join(context, rel))

    def in_image(path: str) -> str:
        return posixpath.normpath(posixpath.join(built.workdir, path))  # a relative one from the WORKDIR

    if call.conf is not None:
        found = context_source(built, call.conf, is_dir)
        return [(in_image(call.conf), found[0], found[1])] if found is not None else []
    for candidate in DEFAULT_CONFS:
        found = context_source(built, candidate, is_dir)
        if found is not None:
            return [(in_image(candidate), found[0], found[1])]
    out: list[tuple[str, str, int]] = []
    include = DEBIAN_INCLUDE.rstrip("/")
    for copy in built.copies:  # the Debian package's own supervisord.conf, which includes conf.d/*.conf
        if copy.sources is None or not (copy.dest == include or copy.dest.startswith(DEBIAN_INCLUDE)):
            continue
        for src in copy.sources:
            rel = posixpath.normpath(src.lstrip("/"))
            if is_dir(rel):
                names = sorted(n for n in os.listdir(os.path.join(context, rel)) if n.endswith(".conf"))
                targets = [posixpath.join(copy.dest, n) for n in names]
            elif copy.into_dir or copy.dest == include:
                targets = [posixpath.join(copy.dest, posixpath.basename(rel))]
            else:
                targets = [copy.dest]
            for target in targets:
                found = context_source(built, target, is_dir) if target.endswith(".conf") else None
                if found is not None and (target, found[0], found[1]) not in out:
                    out.append((target, found[0], found[1]))
    return out


# --- Servers ---------------------------------------------------------------------------------------------------

_NAMES = re.compile(r"(?m)^[ \t]*\[program:[^\]\n]+\]")


def is_supervisord_file(display: str, text: str) -> bool:
    """A supervisord configuration by its content: a `[program:NAME]` section (in a file that is not YAML)."""
    from vramlint.discover import TEMPLATE_EXTENSIONS, YAML_EXTENSIONS

    if display.lower().endswith(YAML_EXTENSIONS + TEMPLATE_EXTENSIONS):
        return False
    return _NAMES.search(text) is not None


def program_servers(text: str, display: str, image: str | None = None,
                    environ: dict[str, str | None] | None = None,
                    environ_locations: dict[str, Location] | None = None, here: str | None = None
                    ) -> tuple[list[tuple[Program, Any]], list[Problem]]:
    """Each program that starts a vLLM server, with its invocation (`cmdline.find_vllm_invocation`)."""
    from vramlint.cmdline import find_vllm_invocation

    programs, problems = read_programs(text, display, environ, environ_locations, here)
    out = []
    for program in programs:
        inv = find_vllm_invocation(program.command, [], image, dict(program.env))
        if inv is not None:
            _name_unknowns(program, inv)
            out.append((program, inv))
    return out, problems


def _name_unknowns(program: Program, inv: Any) -> None:
    """What the invocation says of a word known only at run time names the expansion that made it unknown, with
    the change that removes it: said there once, not again in a note of its own (``program.unknown`` emptied)."""
    if not program.unknown:
        return
    names = said_names(program.unknown, "%(", ")s")
    said = f"(supervisord expands {names} from its environment at run time: set it in the program's environment=)"
    rewritten = [u.replace("(a variable or template)", said) for u in inv.unchecked]
    if rewritten != inv.unchecked:
        inv.unchecked[:] = rewritten
        program.unknown = []


def unknown_note(program: Program) -> str | None:
    if not program.unknown:
        return None
    names = said_names(program.unknown, "%(", ")s")
    return (f"[program:{program.section.name.split(':', 1)[1]}] command= expands {names}, which supervisord fills "
            "from its own environment at run time (not in this file): those words are not known (set them in the "
            "program's environment=, or write the values)")


def read_supervisord_servers(text: str, display: str, path: str | None = None) -> tuple[list[Server], list[Problem]]:
    """The vLLM servers a supervisord configuration starts, read on its own (no image known: its version and GPUs
    are those of wherever it runs). ``path``: the file on disk, whose folder is taken as `%(here)s` (supervisord's
    folder of the file it reads: a configuration that names it is written to be used where it is), so that a
    program running a launcher script of the repository (`command=%(here)s/../bin/serve.sh`) is followed into it."""
    from vramlint.cmdline import find_vllm_invocation

    here = os.path.dirname(os.path.abspath(path)) if path else None
    programs, problems = read_programs(text, display, here=here)
    servers: list[Server] = []
    unread: list[tuple[Program, str]] = []
    for program in programs:
        inv = find_vllm_invocation(program.command, [], None, dict(program.env))
        note = None
        if inv is None:
            inv, note, why, launched = _program_script(program, here)
            servers.extend(launched)
            if inv is None:
                if why is not None and not launched:
                    unread.append((program, why))
                continue
        _name_unknowns(program, inv)
        server = make_server(program, inv, display)
        if note is not None:
            server.notes.append(note)
        servers.append(server)
    if not servers and "vllm" in text.lower() and not problems:
        said = next(((p, why) for p, why in unread), None)
        place = next((s for s in parse_ini(text)[0] if s.name.startswith("program:")
                      and "vllm" in " ".join(v.text for v in s.options.values()).lower()), None)
        if said is not None:
            problems.append(Problem(display, said[0].command_location.line, said[0].command_location.column,
                                    f"[{said[0].section.name}] {said[1]}", level="note"))
        elif place is not None:
            problems.append(Problem(display, place.line, 1, f"[{place.name}] mentions vLLM but its command= starts "
                                    "no vLLM server vramlint can read (`vllm serve`, `python -m "
                                    "vllm.entrypoints.openai.api_server`): not checked", level="note"))
    return servers, problems


def _program_script(program: Program, here: str | None) -> tuple[Any, str | None, str | None, list[Server]]:
    """`launchers.follow_repository_script` for a program: a relative script is taken from its `directory=`."""
    from vramlint.extract.launch_scripts import follow_repository_script

    directory = program.section.options.get("directory")
    folder = _expand_plain(directory.text, {"here": here, "program_name": program.name}) if directory else None
    return follow_repository_script(
        program.command, folder, dict(program.env), "directory=",
        f"[{program.section.name}] runs the script {{shown}} with the program's environment= (%(here)s taken as "
        "this file's folder)")


def make_server(program: Program, inv: Any, display: str) -> Server:
    from vramlint.extract.shell_scripts import fill_from_invocation

    location = inv.location or program.command_location
    location = Location(location.file, location.line, location.column, location.end_line, location.end_column,
                        yaml_path=program.yaml_path)
    server = Server(file=display, location=location, source_format="supervisord", kind="supervisord program",
                    name=program.name)
    server.container = program.name
    server.env, server.env_locations = dict(program.env), dict(program.env_locations)
    fill_from_invocation(server, inv)
    from vramlint.extract.launch_scripts import visible_devices_gpu

    visible_devices_gpu(server)
    server.notes.extend(program.notes)
    note = unknown_note(program)
    if note is not None:
        server.notes.append(note)
    return server
