"""Kubernetes manifests and systemd units a shell script writes with here-documents (never running the script).

Deployment scripts often hold their manifests inline: `cat <<EOF | kubectl apply -f -`, `kubectl apply -f - <<'EOF'`,
or `cat > x.yaml <<EOF ... EOF` (several `cat >> x.yaml <<EOF` appending to one file) followed by
`kubectl apply -f x.yaml`, sometimes through `envsubst`. The body of such a here-document is read as the
manifest file it becomes: one text per file written (`>` starts it again, `>>` appends) or per here-document
applied from standard input, parsed by the same loader and extractors as a manifest file. That text is the
script's lines from the first body on, every line that is not part of those bodies blank, and its positions are
moved onto the script: every finding lands on the script's line (its column too, unless an expansion before it
changed the line's length).

A here-document written to a `*.service` file (`sudo tee /etc/systemd/system/vllm.service > /dev/null <<EOF`,
`cat > vllm.service <<EOF`) is the systemd unit the script installs: its text, expanded as below, is read by
`extract.systemd` on the script's lines (and, like a manifest's, not as commands of the script).

Expansions are the shell's: in a body whose delimiter is unquoted (`<<EOF`) `$VAR`, `${VAR}` and
`${VAR:-default}` expand, `$(...)` and backquotes are unknown; in a quoted one (`<<'EOF'`) nothing does, unless
the text goes through `envsubst`, which replaces `$VAR` and `${VAR}` by the environment's values. A value is
taken only from the last literal assignment of the script before the here-document (`VAR=value`,
`export VAR=value`, `VAR=${VAR:-default}`; for envsubst only exported ones); one made inside `if`/`case`/a loop or
after `&&`/`||` is unknown; so is anything the script reads from its environment, its arguments or a command.
An unknown value is replaced by a template marker (the extractors read it as unknown), and said once per script,
on the servers of the manifest it is written in (a variable of another manifest the script writes changes none).

Bounds: MAX_HEREDOCS here-documents a script, MAX_BODY_CHARS a body, MAX_EXPANSION_CHARS added by expansions
in a script, MAX_SPAN_LINES lines of the script covered by the texts read; past them the rest is not read, and
said.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vramlint.model import Problem

MAX_HEREDOCS = 256
MAX_BODY_CHARS = 1_000_000
MAX_EXPANSION_CHARS = 1_000_000
MAX_SPAN_LINES = 100_000  # lines of the script the manifests' texts cover, all here-documents together

_KUBECTLS = {"kubectl", "oc", "microk8s.kubectl", "kubectl.exe"}
_APPLYING = {"apply", "create", "replace"}
_PASSING = {"cat", "tee", "envsubst"}  # commands that pass the text on unchanged (envsubst: but for variables)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
_OPENERS = {"if", "case", "for", "while", "until", "select"}
_CLOSERS = {"fi", "esac", "done"}
_MANIFEST_LINE = re.compile(r"^\s*(?:apiVersion|kind)\s*:", re.M)


@dataclass
class _Heredoc:
    delimiter: str
    quoted: bool
    strip_tabs: bool
    line: int  # 0-based line of the operator
    body: list[str] = field(default_factory=list)  # the body's lines as written
    first: int = 0  # 0-based line of the body's first line
    # what happens to the text: None (not a manifest), "stdin" (applied from standard input), or a file path
    sink: str | None = None
    append: bool = False
    envsubst: tuple[bool, frozenset[str] | None] | None = None  # (applies, only these variables) when piped
    through: list[str] = field(default_factory=list)  # other commands the text is piped through
    terminated: bool = True


@dataclass
class _Group:
    """One text kubectl reads: a here-document applied from standard input, or the file several write."""

    docs: list[_Heredoc]
    sink: str
    envsubst_at: int | None = None  # line of a later `envsubst < FILE` that reads this file
    envsubst_only: frozenset[str] | None = None


def read_heredoc_manifests(text: str, display: str, read_manifest: Callable[[Any], Any | None],
                           read_unit: Callable[[str, str, str], tuple[list, list]] | None = None
                           ) -> tuple[Any, list[int]]:
    """The Records of the Kubernetes manifests (and systemd units) ``text`` writes with here-documents, and the
    0-based lines of their bodies (the shell reading of the script leaves them out: they are data, not commands).

    ``read_manifest(doc)``: the Records of one loaded document when it is a Kubernetes manifest, else None (the
    dispatcher's, given by the caller: extractors do not import it); ``read_unit(text, display, unit path)``: the
    servers and problems of a systemd unit's text (`extract.systemd`'s reader, given by the caller for the same
    reason), None to read no unit."""
    from vramlint.cmdline import heredoc_expand
    from vramlint.extract.records import Records

    records = Records()
    if "<<" not in text:
        return records, []
    lines = text.split("\n")
    heredocs, problems = _find_heredocs(lines, display)
    records.problems.extend(problems)
    if not heredocs:
        return records, []
    assignments = _assignments(lines, heredocs)
    groups = _groups(heredocs, lines)
    budget = [MAX_EXPANSION_CHARS]
    said_unknown: set[str] = set()
    said_defaulted: set[str] = set()
    body_lines: list[int] = []
    said_budget = False
    view = list(lines)  # the script's lines, each body line as the shell (and envsubst) writes it
    spans = 0
    for group in groups:
        group_unknown: dict[str, None] = {}
        group_defaulted: dict[str, None] = {}
        for doc in group.docs:
            shell_env = None if doc.quoted else assignments.env_at(doc.line, exported_only=False)
            envsubst = doc.envsubst if doc.envsubst is not None else (
                (True, group.envsubst_only) if group.envsubst_at is not None else None)
            subst_env = None
            if envsubst is not None:
                subst_env = assignments.env_at(group.envsubst_at if group.envsubst_at is not None else doc.line,
                                               exported_only=True)
            for k, raw in enumerate(doc.body):
                line = raw.lstrip("\t") if doc.strip_tabs else raw
                if shell_env is not None:
                    line = heredoc_expand(line, shell_env, budget, group_unknown, group_defaulted,
                                         assignments.defaulted)
                if subst_env is not None and envsubst is not None:
                    line = _envsubst(line, subst_env, envsubst[1], budget, group_unknown)
                view[doc.first + k] = line
        if budget[0] < 0 and not said_budget:
            said_budget = True
            records.problems.append(Problem(display, group.docs[0].line + 1, 1, (
                f"variables in the here-documents expand to more than {MAX_EXPANSION_CHARS:,} characters "
                "(expansion budget): the values past it are read as unknown"), level="warning"))
        # the text kubectl reads: from the group's first body line to its last, other lines blank
        first, last = group.docs[0].first, group.docs[-1].first + len(group.docs[-1].body)
        spans += last - first
        if spans > MAX_SPAN_LINES:
            records.problems.append(Problem(display, group.docs[0].line + 1, 1, (
                f"the here-documents' manifests span more than {MAX_SPAN_LINES:,} lines of the script: the rest "
                "are not read"), level="warning"))
            break
        virtual = [""] * (last - first)
        for doc in group.docs:
            virtual[doc.first - first:doc.first - first + len(doc.body)] = view[doc.first:doc.first + len(doc.body)]
        before = len(records.servers)
        if read_unit is not None and is_unit_name(group.sink):
            # a systemd unit the script installs: read by systemd's reader, never as a manifest nor as commands
            for doc in group.docs:
                body_lines.extend(range(doc.first, doc.first + len(doc.body)))
            _read_unit(virtual, first, group, display, records, assignments, read_unit)
            _say_variables(records.servers[before:], group_unknown, group_defaulted, said_unknown, said_defaulted)
            continue
        if _extract(virtual, first, view, group, display, read_manifest, records):
            for doc in group.docs:
                body_lines.extend(range(doc.first, doc.first + len(doc.body)))
            # said on the servers of the manifest the variables are written in, once per script: a variable of
            # another manifest (an Ingress the same script writes) changes nothing of these servers
            _say_variables(records.servers[before:], group_unknown, group_defaulted, said_unknown, said_defaulted)
            if len(records.servers) == before:
                _say_unread_containers(lines[first:last], first, group, group_unknown, assignments, text, display,
                                       records)
    return records, body_lines


_UNKNOWN_IMAGE = re.compile(r"^\s*(?:-\s+)?image\s*:\s*\S*\$\{?([A-Za-z_]\w*)", re.M)


def _say_unread_containers(written: list[str], offset: int, group: _Group, unknown: dict[str, None],
                           assignments: _Assignments, text: str, display: str, records: Any) -> None:
    """A manifest of a script that names vLLM, with no server read because a container's image is a variable
    whose value is not known before the here-document (set in a `case`/`if` branch, by a command, an argument):
    said, with the variable, rather than leaving the script as one that starts no vLLM."""
    if "vllm" not in text.lower():
        return
    for k, line in enumerate(written):  # the script's lines as written: the expanded text holds a marker
        m = _UNKNOWN_IMAGE.match(line)
        if m is None or "$" + m.group(1) not in unknown:
            continue
        name = m.group(1)
        how = ("assigned only in a branch (`case`, `if`), a loop or after `&&`/`||`, or from a command"
               if name in assignments.seen else "not assigned in the script (its environment or arguments set it)")
        where = group.docs[0].line + 1
        records.problems.append(Problem(display, offset + k + 1, 1, (
            f"the manifest the here-document at line {where} writes has a container whose image is ${{{name}}}, "
            f"{how}: which image it runs, and so whether it is a vLLM server, is known only when the script runs, "
            "so it is not checked; write the vLLM manifest in a file of its own (or assign the image once, before "
            "the here-document) to have it checked"), level="note"))
        return


def _say_variables(servers: list, unknown: dict[str, None], defaulted: dict[str, None], said_unknown: set[str],
                   said_defaulted: set[str]) -> None:
    """The unknown and defaulted variables of one manifest's text, on its first server (not said again)."""
    if not servers:
        return
    fresh = [n for n in unknown if n not in said_unknown]
    if fresh:
        said_unknown.update(fresh)
        names = ", ".join(fresh[:8]) + (" ..." if len(fresh) > 8 else "")
        servers[0].notes.append(
            f"{names} in the script's here-documents: not given a literal value earlier in the script (set by the "
            "environment, an argument or a command): what they write in the manifests is unknown")
    fresh = [n for n in defaulted if n not in said_defaulted]
    if fresh:
        said_defaulted.update(fresh)
        names = ", ".join(f"${{{n}}}" for n in fresh[:8])
        servers[0].notes.append(
            f"{names}: the default written in the script is taken (the variable is not assigned in it; where the "
            "script runs, its environment may set another value)")


def _extract(virtual: list[str], offset: int, view: list[str], group: _Group, display: str,
             read_manifest: Callable[[Any], Any | None], records: Any) -> bool:
    """Read one text (``virtual``, the script's lines from 0-based line ``offset`` on) as the manifest file it
    becomes, its positions moved onto the script's lines; True when it is a Kubernetes manifest."""
    from vramlint.yamlload import load_text, shift_positions

    text = "\n".join(virtual)
    if not _MANIFEST_LINE.search(text):
        return False
    docs, problems = load_text(text, display)
    for doc in docs:
        shift_positions(doc.data, offset, 0)
        doc.lines = view
    for p in problems:
        if p.line is not None:
            p.line += offset
    first = group.docs[0]
    errors = [p for p in problems if p.level == "error"]
    if errors:
        if re.search(r"^apiVersion\s*:", text, re.M) and re.search(r"^kind\s*:", text, re.M):
            e = errors[0]
            records.problems.append(Problem(display, first.line + 1, 1, (
                f"the here-document at line {first.line + 1} looks like a Kubernetes manifest but is not valid "
                f"YAML (line {e.line}: {e.message}): not read"), level="note"))
            return True
        return False
    read = [rec for rec in (read_manifest(doc) for doc in docs) if rec is not None]
    if not read:
        return False
    records.problems.extend(problems)
    for rec in read:
        for server in rec.servers:
            for through in dict.fromkeys(d for h in group.docs for d in h.through):
                server.notes.append(f"the here-document is piped through `{through}`, which may change it; read "
                                    "as written")
        _merge(records, rec)
    for doc in group.docs:
        if not doc.terminated:
            records.problems.append(Problem(display, doc.line + 1, 1, (
                f"here-document delimited by {doc.delimiter!r} is not closed: the shell reads it to the end of "
                "the script (and warns)"), level="warning"))
    return True


def stdin_text(text: str, line: int) -> tuple[str, list[str]] | None:
    """The text a command on 0-based ``line`` reads from a here-document on its standard input (`sbatch <<EOF`):
    the script's lines, all blank but the body's, as the shell writes the body (an unquoted delimiter: the
    script's own literal variables expanded, what it does not know a marker of the same width), and the
    expansions left unknown; None when no here-document starts on that command line."""
    from vramlint.cmdline import heredoc_expand

    if "<<" not in text:
        return None
    lines = text.split("\n")
    heredocs, _problems = _find_heredocs(lines, "")
    # (the operator's line is the first of its logical line: `\`-continued lines joined)
    doc = next((d for d in reversed(heredocs) if d.line <= line < d.first and d.terminated), None)
    if doc is None:
        return None
    shell_env = None if doc.quoted else _assignments(lines, heredocs).env_at(doc.line, exported_only=False)
    unknown: dict[str, None] = {}
    budget = [MAX_EXPANSION_CHARS]
    view = [""] * len(lines)
    for k, raw in enumerate(doc.body):
        body_line = raw.lstrip("\t") if doc.strip_tabs else raw
        if shell_env is not None:
            body_line = heredoc_expand(body_line, shell_env, budget, unknown, {}, set())
        view[doc.first + k] = body_line
    return "\n".join(view), list(unknown)


def is_unit_name(sink: str) -> bool:
    """Whether a here-document's file is a systemd service unit (`/etc/systemd/system/NAME.service`)."""
    return sink not in ("stdin", "stdout") and sink.strip("\"'").lower().endswith(".service")


def _read_unit(virtual: list[str], offset: int, group: _Group, display: str, records: Any,
               assignments: _Assignments, read_unit: Callable[[str, str, str], tuple[list, list]]) -> None:
    """Read the text a script writes to a systemd unit (``virtual``, the script's lines from 0-based line
    ``offset`` on, as the shell writes them) with `extract.systemd`'s reader, on the script's lines: the unit's own
    `$X` / `${X}` (written `\\$X` in an unquoted here-document, or as they are in a quoted one) are systemd's, from
    its Environment= lines."""
    from vramlint.cmdline import has_unknown_mark, heredoc_expand

    first = group.docs[0]
    unit = group.sink.strip("\"'")
    if "$" in unit:
        expanded = heredoc_expand(unit, assignments.env_at(first.line, exported_only=False), [4096], {}, {}, set())
        unit = unit if has_unknown_mark(expanded) else expanded
    text = "\n" * offset + "\n".join(virtual)
    servers, problems = read_unit(text, display, unit)
    for server in servers:
        server.notes.append(f"the systemd unit {unit} is read as the script writes it (the here-document at line "
                            f"{first.line + 1}), on the script's lines")
        for through in dict.fromkeys(d for h in group.docs for d in h.through):
            server.notes.append(f"the here-document is piped through `{through}`, which may change it; read as "
                                "written")
    records.servers.extend(servers)
    records.problems.extend(problems)


def _merge(into: Any, rec: Any) -> None:
    for name in ("servers", "problems", "runtimes", "inference_services", "configmaps", "config_refs", "llmaz",
                 "script_refs", "env_refs"):
        getattr(into, name).extend(getattr(rec, name))


# --- finding the here-documents ------------------------------------------------------------------------------


def _find_heredocs(lines: list[str], display: str) -> tuple[list[_Heredoc], list[Problem]]:
    out: list[_Heredoc] = []
    problems: list[Problem] = []
    i = 0
    n = len(lines)
    while i < n:
        # a logical command line: `\`-continued lines joined
        start = i
        logical = lines[i]
        while logical.endswith("\\") and i + 1 < n:
            i += 1
            logical = logical[:-1] + lines[i]
        i += 1
        if "<<" not in logical:
            continue
        tokens = _tokens(logical)
        pending = _heredocs_of(tokens, start)
        for doc in pending:
            if len(out) >= MAX_HEREDOCS:
                problems.append(Problem(display, start + 1, 1, (
                    f"more than {MAX_HEREDOCS} here-documents in this script: the rest are not read"),
                    level="warning"))
                return out, problems
            doc.first = i
            size = 0
            while i < n:
                body_line = lines[i]
                check = body_line.lstrip("\t") if doc.strip_tabs else body_line
                if check == doc.delimiter:
                    i += 1
                    break
                size += len(body_line) + 1
                if size > MAX_BODY_CHARS:
                    problems.append(Problem(display, doc.line + 1, 1, (
                        f"the here-document at line {doc.line + 1} is longer than {MAX_BODY_CHARS:,} characters: "
                        "not read"), level="warning"))
                    doc.sink = None
                    while i < n and (lines[i].lstrip("\t") if doc.strip_tabs else lines[i]) != doc.delimiter:
                        i += 1
                    i += 1
                    doc.body = []
                    break
                doc.body.append(body_line)
                i += 1
            else:
                doc.terminated = False
            out.append(doc)
    return out, problems


def _tokens(line: str) -> list[tuple[str, str, bool]]:
    """A command line as (kind, text, quoted) tokens: kind "w" for a word (quotes removed), "op" for `|`,
    `||`, `&&`, `;`, `&`, `(`, `)`, "redir" for a redirection operator (`>`, `>>`, `<`, `<<`, `<<-`, `<<<`,
    `2>`, `&>`, `>&`); a `#` comment ends it. `$(...)` is kept in its word as written."""
    out: list[tuple[str, str, bool]] = []
    word: list[str] = []
    quoted = False
    started = False
    i, n = 0, len(line)

    def finish() -> None:
        nonlocal word, quoted, started
        if started:
            out.append(("w", "".join(word), quoted))
        word, quoted, started = [], False, False

    while i < n:
        c = line[i]
        if c in " \t":
            finish()
            i += 1
        elif c == "#" and not started:
            break
        elif c == "\\":
            word.append(line[i + 1] if i + 1 < n else "")
            quoted = started = True
            i += 2
        elif c in "'\"":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if c == '"' and line[j] == "\\" else 1
            word.append(line[i + 1:j])
            quoted = started = True
            i = j + 1
        elif c == "$" and line[i + 1:i + 2] in ("(", "{"):
            close = ")" if line[i + 1] == "(" else "}"
            depth, j = 0, i + 1
            while j < n:
                if line[j] == line[i + 1]:
                    depth += 1
                elif line[j] == close:
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            word.append(line[i:j + 1])
            started = True
            i = j + 1
        elif c in "<>" or (c == "&" and line[i + 1:i + 2] == ">"):
            fd = "".join(word) if started and not quoted and "".join(word).isdigit() else ""
            if fd:
                word, started = [], False
            finish()
            j = i + 1
            while j < n and line[j] in "<>&-|" and j - i < 3:
                if line[j] == "-" and line[i:j] != "<<":
                    break
                j += 1
            out.append(("redir", fd + line[i:j], False))
            i = j
        elif c in "|&;()":
            finish()
            two = line[i:i + 2]
            op = two if two in ("||", "&&", ";;") else c
            out.append(("op", op, False))
            i += len(op)
        else:
            word.append(c)
            started = True
            i += 1
    finish()
    return out


def _heredocs_of(tokens: list[tuple[str, str, bool]], line: int) -> list[_Heredoc]:
    """The here-documents a command line opens, each with where its text goes."""
    # pipelines: runs of commands joined by `|`; each command's words and redirections
    pipelines: list[list[dict]] = [[{"words": [], "redirs": []}]]
    k = 0
    while k < len(tokens):
        kind, text, quoted = tokens[k]
        if kind == "op":
            if text == "|":
                pipelines[-1].append({"words": [], "redirs": []})
            else:
                pipelines.append([{"words": [], "redirs": []}])
        elif kind == "redir":
            target = tokens[k + 1] if k + 1 < len(tokens) and tokens[k + 1][0] == "w" else None
            pipelines[-1][-1]["redirs"].append((text, target))
            if target is not None:
                k += 1
        else:
            pipelines[-1][-1]["words"].append(text)
        k += 1
    out: list[_Heredoc] = []
    for pipeline in pipelines:
        for index, command in enumerate(pipeline):
            # each `<`, `<<`, `<<<` replaces the command's standard input (bash reads every here-document's
            # text, in order, but the command reads only the last one's): `cat <<A <<B` prints B
            last_input = max((j for j, (op, _) in enumerate(command["redirs"]) if op.startswith(("<", "0<"))),
                             default=None)
            for j, (op, target) in enumerate(command["redirs"]):
                if op not in ("<<", "<<-") or target is None:
                    continue
                doc = _Heredoc(delimiter=target[1], quoted=target[2], strip_tabs=op == "<<-", line=line)
                if j == last_input:
                    _where_it_goes(doc, pipeline, index)
                out.append(doc)
    return out


def _command_name(words: list[str]) -> tuple[str | None, list[str]]:
    i = 0
    while i < len(words) and (words[i] in ("sudo", "exec", "command", "time", "env") or _ASSIGNMENT.match(words[i])):
        i += 1
    if i >= len(words):
        return None, []
    return os.path.basename(words[i]), words[i + 1:]


def _kubectl_verb(args: list[str]) -> tuple[str | None, bool]:
    """(subcommand, reads standard input with `-f -`) of kubectl's arguments."""
    verb = None
    stdin = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server"):
            i += 2
            continue
        if verb is None and not a.startswith("-"):
            verb = a
        if a in ("-f", "--filename") and i + 1 < len(args) and args[i + 1] == "-":
            stdin = True
        if a in ("-f-", "--filename=-"):
            stdin = True
        i += 1
    return verb, stdin


def _where_it_goes(doc: _Heredoc, pipeline: list[dict], index: int) -> None:
    """Follow the here-document's text down its pipeline: to kubectl (applied or not), a file, or nowhere."""
    for position in range(index, len(pipeline)):
        command = pipeline[position]
        name, args = _command_name(command["words"])
        if name in _KUBECTLS or (name == "k3s" and args[:1] == ["kubectl"]):
            verb, stdin = _kubectl_verb(args[1:] if name == "k3s" else args)
            doc.sink = "stdin" if verb in _APPLYING and stdin else None
            return
        if name == "envsubst":
            formats = [a for a in args if not a.startswith("-")]
            only = frozenset(m.group(1) or m.group(2) for f in formats
                             for m in re.finditer(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))", f)) if formats else None
            doc.envsubst = (True, only)
        elif name == "tee":
            files = [a for a in args if not a.startswith("-")]
            if files:
                # tee writes the file whatever its own output does (`sudo tee FILE > /dev/null`, the usual way
                # to write a root-owned file): the text is the file's
                doc.sink, doc.append = files[0], "-a" in args or "--append" in args
                return
        elif name is not None and name not in _PASSING:
            doc.through.append(" ".join([name, *args])[:60])
        for op, target in command["redirs"]:
            if op.lstrip("1") in (">", ">>", ">|") and target is not None:
                doc.sink, doc.append = target[1], op.endswith(">>")
                return  # the text goes to the file, not down the pipe
    if doc.sink is None and pipeline[-1] is pipeline[index] and _command_name(pipeline[index]["words"])[0] == "cat":
        doc.sink = "stdout"  # printed by the script: a manifest it emits (`./gen.sh | kubectl apply -f -`)


def _groups(heredocs: list[_Heredoc], lines: list[str]) -> list[_Group]:
    """One text per here-document applied from standard input, and per file the here-documents write (`>`
    starts the file again, `>>` appends)."""
    groups: list[_Group] = []
    files: dict[str, _Group] = {}
    for doc in heredocs:
        if doc.sink is None or not doc.body:
            continue
        if doc.sink in ("stdin", "stdout") or "$" in doc.sink:
            groups.append(_Group([doc], doc.sink))
            continue
        group = files.get(doc.sink)
        if group is None or not doc.append:
            group = _Group([doc], doc.sink)
            files[doc.sink] = group
            groups.append(group)
        else:
            group.docs.append(doc)
    # `envsubst < FILE` (or `cat FILE | envsubst`) after the file is written expands its variables then
    for i, raw in enumerate(lines):
        if "envsubst" not in raw:
            continue
        tokens = _tokens(raw)
        words = [t[1] for t in tokens if t[0] == "w"]
        inputs = [tokens[k + 1][1] for k, t in enumerate(tokens[:-1]) if t == ("redir", "<", False)]
        if "envsubst" in words and words.index("envsubst") > 0 and os.path.basename(words[0]) == "cat":
            inputs.append(words[1])
        for path in inputs:
            group = files.get(path)
            if group is not None and group.docs[0].line < i and group.envsubst_at is None:
                group.envsubst_at = i
                formats = [w for w in words[words.index("envsubst") + 1:] if w.startswith("$")]
                if formats:
                    group.envsubst_only = frozenset(m.group(1) or m.group(2) for f in formats for m in
                                                    re.finditer(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))", f))
    return groups


# --- the script's variables ----------------------------------------------------------------------------------


@dataclass
class _Assignments:
    # per variable: (0-based line, value or None when unknown, exported) in the script's order
    seen: dict[str, list[tuple[int, str | None, bool]]]
    defaulted: set[str]  # variables whose literal value came from a `${VAR:-default}` of an unset variable

    def env_at(self, line: int, exported_only: bool) -> dict[str, str | None]:
        """The variables known before ``line``: a value, or None when assigned but unknown."""
        env: dict[str, str | None] = {}
        for name, history in self.seen.items():
            before = [h for h in history if h[0] < line]
            if not before:
                continue
            if exported_only and not any(h[2] for h in before):
                continue
            # the last assignment before the line: a conditional one was recorded as unknown
            env[name] = before[-1][1]
        return env


def _assignments(lines: list[str], heredocs: list[_Heredoc]) -> _Assignments:
    """Literal assignments of the script, outside here-document bodies, in order."""
    from vramlint.cmdline import split_shell

    skip = {d.first + k for d in heredocs for k in range(len(d.body) + 1)}
    seen: dict[str, list[tuple[int, str | None, bool]]] = {}
    defaulted: set[str] = set()
    exported_names: set[str] = set()
    depth = 0
    for i, raw in enumerate(lines):
        if i in skip or not raw.strip() or raw.lstrip().startswith("#"):
            continue
        tokens = _tokens(raw)
        commands: list[tuple[list[str], bool]] = [([], False)]
        for kind, text, _quoted in tokens:
            if kind == "op":
                commands.append(([], text in ("&&", "||")))  # run or not as the command before ends
            elif kind == "w":
                commands[-1][0].append(text)
        for words, conditional in commands:
            if not words:
                continue
            if words[0] in _OPENERS:
                depth += 1
            if words[0] in _CLOSERS or (words[0] in ("then", "do") and len(words) > 1 and words[1] in _CLOSERS):
                depth = max(0, depth - 1)
            if words[0] in ("then", "do", "else") and len(words) > 1:
                words = words[1:]
            exported = False
            if words[0] in ("export", "declare", "typeset", "readonly", "local"):
                exported = words[0] == "export" or any(w.startswith("-") and "x" in w for w in words[1:])
                words = [w for w in words[1:] if not w.startswith("-")]
                if exported:
                    exported_names.update(w for w in words if _NAME.fullmatch(w))
            if not words or not all(_ASSIGNMENT.match(w) for w in words):
                continue
            for w in words:
                name, value = _ASSIGNMENT.match(w).groups()
                known: str | None = value
                if depth > 0 or conditional:
                    known = None  # made only when a branch or loop runs it
                elif "$" in value or "`" in value:
                    env = _Assignments(seen, defaulted).env_at(i, exported_only=False)
                    unset = [m.group(1) for m in re.finditer(r"\$\{([A-Za-z_]\w*):?-", value) if m.group(1) not in env]
                    parts = split_shell(value, None, env=env)
                    if any(p.text is None or p.op for p in parts):
                        known = None
                    else:
                        known = " ".join(p.text for p in parts)
                        if unset:
                            defaulted.add(name)
                seen.setdefault(name, []).append((i, known, exported or name in exported_names))
    return _Assignments(seen, defaulted)


# --- expansions ----------------------------------------------------------------------------------------------


def _envsubst(line: str, env: dict[str, str | None], only: frozenset[str] | None, budget: list[int],
              unknown: dict[str, None]) -> str:
    """envsubst: `$VAR` and `${VAR}` (only those; listed ones when it is given a SHELL-FORMAT) replaced by the
    environment's value; a variable the script does not export a literal value for is unknown here."""
    from vramlint.helm.templated import width_marker

    def sub(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if only is not None and name not in only:
            return m.group(0)
        value = env.get(name)
        if value is None:
            unknown.setdefault(f"${name}", None)
            return width_marker(len(m.group(0)))
        budget[0] -= len(value)
        return value if budget[0] >= 0 else width_marker(len(m.group(0)))

    return re.sub(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))", sub, line) if "$" in line else line


def blank_lines(text: str, lines_to_blank: list[int]) -> str:
    """``text`` with these 0-based lines emptied (the line count, so every other line's number, kept)."""
    if not lines_to_blank:
        return text
    lines = text.split("\n")
    for i in lines_to_blank:
        if 0 <= i < len(lines):
            lines[i] = ""
    return "\n".join(lines)
