"""Launch scripts (named on the command line, or a folder's that start vLLM: `cmdline.script_runs_vllm`): the vLLM
servers a shell script starts (never running it).

A file is read as a shell script when its name ends in `.sh` or `.bash`, or its first line is a `#!` naming a
shell; YAML it is not, so it is not parsed as YAML. Two shapes start a server:

- `vllm serve ...` or `python -m vllm.entrypoints.openai.api_server ...` run by the script itself (read by
  `cmdline.find_vllm_invocation` as `sh -c SCRIPT`, so variables the script assigns before are expanded); the
  devices it sees are the `CUDA_VISIBLE_DEVICES` the script sets (`export CUDA_VISIBLE_DEVICES=0,1` or a prefix
  assignment), when it sets them to a literal list;
- `docker run [OPTIONS] IMAGE [ARGS]` (also `podman run`, `nerdctl run`, `docker container run`) of a vLLM image:
  the image and its arguments are read as a container's (Docker's semantics: `--entrypoint` replaces the image's
  ENTRYPOINT, the words after the image its CMD), with the `-e/--env` variables and the `--gpus` devices.

The options of `docker run` that take a value are Docker's own (docker CLI reference, `docker container run`):
knowing them is what tells the image from an option's value.
"""

from __future__ import annotations

import os
import re
from typing import Any

from vramlint.cmdline import CONTAINER_CLIS
from vramlint.extract.gaudi import visible_gaudi
from vramlint.intparse import small_int
from vramlint.model import GpuRequest, Location, Problem, Server

SCRIPT_EXTENSIONS = (".sh", ".bash", ".sbatch", ".slurm")  # the last two: Slurm job scripts (discover)
_SHEBANG = re.compile(r"^#!\s*(?:/usr)?(?:/local)?/bin/(?:env\s+)?(?:ba|da|k|z|a)?sh\b")
_CONTAINER_CLIS = CONTAINER_CLIS
_ARG_DEFAULT = re.compile(r"\$\{[1-9]\d*:?-")
_PREFIX_WORDS = {"sudo", "exec", "nohup", "time", "setsid", "command"}
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)

# `docker container run` options that take a value (docker CLI reference); the others are flags.
_VALUE_OPTIONS = frozenset("""
--add-host --annotation --attach --blkio-weight --blkio-weight-device --cap-add --cap-drop --cgroup-parent
--cgroupns --cidfile --cpu-count --cpu-percent --cpu-period --cpu-quota --cpu-rt-period --cpu-rt-runtime
--cpu-shares --cpus --cpuset-cpus --cpuset-mems --detach-keys --device --device-cgroup-rule --device-read-bps
--device-read-iops --device-write-bps --device-write-iops --dns --dns-opt --dns-option --dns-search --domainname
--entrypoint --env --env-file --expose --gpus --group-add --health-cmd --health-interval --health-retries
--health-start-interval --health-start-period --health-timeout --hostname --io-maxbandwidth --io-maxiops --ip
--ip6 --ipc --isolation --kernel-memory --label --label-file --link --link-local-ip --log-driver --log-opt
--mac-address --memory --memory-reservation --memory-swap --memory-swappiness --mount --name --net --net-alias
--network --network-alias --oom-score-adj --pid --pids-limit --platform --publish --pull --restart --runtime
--security-opt --shm-size --stop-signal --stop-timeout --storage-opt --sysctl --tmpfs --ulimit --user --userns
--uts --volume --volume-driver --volumes-from --workdir --device-requests --chmod --requires
""".split())
_VALUE_SHORT = frozenset("acehlmpuvw")  # -a -c -e -h -l -m -p -u -v -w take a value; -d -i -t -P -q do not


# an extension-less file's first line of code that YAML would read as structure: a key, an item, a marker, a flow
_YAML_START = re.compile(r"^(?:[^\s#:][^:#]*:(?:\s|$)|-(?:\s|$)|---|\.\.\.|[{\[%&*!|>])")
# a line running one of the commands the script reader starts vLLM through (a container runtime, vLLM's own CLI,
# Python, Apptainer), maybe behind sudo/exec
_RUN_LINE = re.compile(r"^\s*(?:sudo\s+(?:-\S+\s+)*)?(?:exec\s+)?(?:docker|podman|nerdctl|vllm|python3?|uv|apptainer|"
                       r"singularity)\s", re.M)


def has_shell_shebang(text: str) -> bool:
    """Whether the text's first line is a `#!` naming a shell."""
    return _SHEBANG.match(text[:200]) is not None


def is_shell_script(display: str, text: str) -> bool:
    """A shell script by its name or its `#!` line (never YAML, whatever it holds); or a file without an extension
    (only read when named: the walk takes none) whose first line of code is no YAML structure and one of whose lines
    runs a container runtime, vLLM or Python (audit24 held out HM1: a `start-container` of `docker run ... vllm
    serve`, no `#!`, was read as YAML and said to be of no shape vramlint reads)."""
    if display.lower().endswith(SCRIPT_EXTENSIONS):
        return True
    if has_shell_shebang(text):
        return True
    name = os.path.basename(display)
    if "." in name or name.startswith("<") or _is_config_name(name):  # `<stdin>` is read as it was
        return False
    first = next((line for line in text.splitlines()[:200] if line.strip() and not line.lstrip().startswith("#")),
                 None)
    return first is not None and _YAML_START.match(first) is None and _RUN_LINE.search(text[:100_000]) is not None


def _is_config_name(name: str) -> bool:
    # extension-less names of files vramlint reads otherwise: Dockerfile/Containerfile, Kustomization, Makefiles
    from vramlint.discover import is_starter_name, kind_of

    return kind_of(name) is not None or is_starter_name(name)


def read_script_records(text: str, display: str, read_manifest: Any, read_unit: Any = None) -> Any:
    """Everything a script gives (`Records`): the servers it starts (`read_shell_script`) and the Kubernetes
    manifests and systemd units its here-documents write (`heredocs`, ``read_manifest`` reading each document,
    ``read_unit`` each unit); the note of a script that mentions vLLM but gives none."""
    from vramlint.extract import heredocs

    records, body_lines = heredocs.read_heredoc_manifests(text, display, read_manifest, read_unit)
    manifests = any((records.servers, records.runtimes, records.inference_services, records.configmaps,
                     records.llmaz, records.script_refs))
    # the bodies read as manifests are data kubectl reads, not commands the script runs
    servers, problems = read_shell_script(heredocs.blank_lines(text, body_lines), display,
                                          say_mention=not manifests)
    records.servers[:0] = servers
    records.problems[:0] = problems
    return records


def read_shell_script(text: str, display: str, say_mention: bool = True, env: dict[str, str | None] | None = None,
                      script: Any = None, submission: Any = None, followed: set[str] | None = None, depth: int = 0
                      ) -> tuple[list[Server], list[Problem]]:
    """The vLLM servers ``text`` starts, and a note when it mentions vLLM but starts none vramlint can read.
    ``env``: the environment the script is started with, where it is known (a supervisord program's);
    ``script``: the Token ``text`` is, when its words are placed otherwise than on the lines of a file of its own
    (an Ansible task's command). ``submission``: the `sbatch` command line (`slurm.SbatchSubmission`) that
    submits this script as a Slurm job, whose options sbatch reads over the script's `#SBATCH` directives;
    ``followed`` and ``depth``: the job scripts already read by the `sbatch` commands of the scripts that led
    here (`_submitted_jobs`)."""
    from vramlint.cmdline import ARGS_DEFAULTED, Token, find_vllm_invocation
    from vramlint.extract import scripts

    own_text = script is None  # the words are placed on the lines of ``text``, as a substitution is read
    if script is None:
        script = scripts.script_token(text, display)
    servers: list[Server] = []
    problems: list[Problem] = []
    sourceable = "source" in text or ". " in text
    sourced_problems: list[Problem] = []
    sourced: dict[str, str | None] | None = None
    # a container run names its CLI (a name in a variable is not known, and not read); its words expand the
    # variables the script assigned before it runs, as the shell does (`model=X; docker run IMAGE --model
    # ${model}`), and a variable the script does not set is unknown (`${X:-default}` its default)
    # (`docker exec NAME COMMAND` runs COMMAND in the container NAME, whose image a `docker run --name NAME`
    # before it in the file says)
    if any(cli in text for cli in _CONTAINER_CLIS):
        servers.extend(container_commands(script, display, problems, env, {}))
        if not servers and own_text and _SUBSTITUTED_CONTAINER.search(text):
            servers.extend(_substituted_container_runs(text, display, problems, env or {}))
        if not servers and sourceable:
            # the image or the arguments may come from a file the script sources (`source config.env`)
            sourced = _sourced_variables(text, display, sourced_problems)
            if sourced:
                run_env = {**(env or {}), **sourced}
                found = container_commands(script, display, problems, run_env, {})
                if not found and own_text and _SUBSTITUTED_CONTAINER.search(text):
                    found = _substituted_container_runs(text, display, problems, run_env)
                if found:
                    servers.extend(found)
                    problems.extend(sourced_problems)
    if not servers and "ssh" in text and any(cli in text for cli in _CONTAINER_CLIS):
        servers.extend(_remote_container_runs(script, text, display, problems))
    if not servers:
        from vramlint.extract.slurm import read_sbatch

        start = Location(display, 1, 1)
        options = submission.options if submission is not None else ()
        sbatch = read_sbatch(text, display, options) if "#SBATCH" in text or options else None
        start_env = dict(sbatch.environment()) if sbatch is not None else {}
        if submission is not None:  # `--export=ALL,NAME=value`: the job starts with these
            start_env.update(submission.exported)
        if sourced is None:
            sourced = _sourced_variables(text, display, sourced_problems) if sourceable else {}
        problems.extend(sourced_problems)
        inv = find_vllm_invocation([Token("sh", start), Token("-c", start), script, Token(display, start)], [],
                                   None, {**start_env, **sourced, ARGS_DEFAULTED: None})
        if inv is not None:
            assigned, ray_start = _devices_assigned(script, inv)
            server = _script_server(inv, display, assigned)
            if _ARG_DEFAULT.search(text):
                server.notes.append("the script is read as run with no arguments: where it writes `${1:-default}` "
                                    "(`${2:-...}`, ...) its own default is taken (run with arguments, it uses those)")
            if ray_start is not None:
                server.notes.append(
                    f"the script starts or joins a Ray cluster (`ray start`, line {ray_start.line}) before vLLM: "
                    "the engine's GPUs are that cluster's, which the script does not say (its CUDA_VISIBLE_DEVICES "
                    "is one node's); set `gpus:` in .vramlint.yaml (or --gpus) to the cluster's GPU count")
            if sbatch is not None:
                _slurm_gpus(server, sbatch)
                if sbatch.count_past is not None:
                    said, where = sbatch.count_past
                    shown = said if len(said) <= 60 else f"{said[:50]}... ({len(said):,} characters)"
                    problems.append(Problem(where.file, where.line, where.column, (
                        f"`{shown}` asks for more GPUs on each node than vramlint takes (past 100,000): no "
                        "cluster's node has them, so Slurm cannot place the job; the GPUs of each node are not "
                        "known here"), level="warning"))
            if inv.remote and "CUDA_VISIBLE_DEVICES" in text:
                server.notes.append(f"the server runs on the host `ssh` reaches ({inv.remote}), which this "
                                    "script's CUDA_VISIBLE_DEVICES does not reach (ssh passes no variables): its GPUs "
                                    "are that host's")
            _say_later_servers(script, text, server)
            servers.append(server)
    if not servers and sourceable and own_text:
        servers.extend(_sourced_function_servers(script, display, problems))
    if "sbatch" in text:
        servers.extend(_submitted_jobs(text, display, problems, followed if followed is not None else set(), depth))
    launcher = unknown_launcher(script, text) if not servers and say_mention and own_text else None
    if launcher is not None:
        _say_unknown_launcher(launcher, problems)
    elif not servers and say_mention and "vllm" in text.lower() and _may_run_vllm(script):
        problems.append(Problem(display, 1, 1, "the script mentions vLLM but starts no vLLM server vramlint can read "
                                "(`vllm serve`, `python -m vllm.entrypoints.openai.api_server` or `docker run` "
                                "of a vLLM image)", level="note"))
    return servers, problems


MAX_JOB_DEPTH = 2  # a job script that submits another (a chain of dependent jobs) is followed this deep
MAX_SUBMISSIONS = 16  # `sbatch` commands of one script followed
# The idioms that name the script's own folder: `$(dirname "$0")`, `$(dirname "${BASH_SOURCE[0]}")`, the same
# inside `$(cd ... && pwd)` or `$(realpath ...)`. A job script named from it is the script's neighbour, as a
# relative path is (taken from the script's folder, as `_sourced_variables` takes it)
_SELF = r'(?:"?\$\{BASH_SOURCE(?:\[0\])?\}"?|"?\$\{?0\}?"?)'
_DIRNAME = rf'\$\(\s*dirname\s+(?:--\s+)?(?:{_SELF}|"?\$\((?:realpath|readlink\s+-f)\s+{_SELF}\s*\)"?)\s*\)'
# `$(cd "$(dirname "$0")/.." && pwd)`: a folder named from the script's own (its relative part in group 1)
_SCRIPT_DIR_BELOW = re.compile(rf'\$\(\s*cd\s+(?:--\s+)?"?{_DIRNAME}(/[^"\s;&|)$`]*)"?\s*(?:>\s*/dev/null\s*)?(?:2>&1\s*)?'
                               r'(?:&&|;)\s*pwd(?:\s+-P)?\s*\)')
_SCRIPT_DIR = re.compile(
    rf'\$\(\s*cd\s+(?:--\s+)?"?{_DIRNAME}"?\s*(?:>\s*/dev/null\s*)?(?:2>&1\s*)?(?:&&|;)\s*pwd(?:\s+-P)?\s*\)'
    rf'|\$\(\s*(?:realpath|readlink\s+-f)\s+"?{_DIRNAME}"?\s*\)|{_DIRNAME}')
_SUBSTITUTED_SBATCH = re.compile(r"\$\(\s*(?=sbatch\s)|`\s*(?=sbatch\s)")
_SUBSTITUTED_CONTAINER = re.compile(r"(?:\$\(|`)\s*(?=(?:sudo\s+)?(?:\S*/)?(?:docker|podman|nerdctl)\s)")


def _names_sbatch(texts: list[str | None]) -> bool:
    """A command naming sbatch; the walk asks again with the words expanded, where a substitution that runs it
    (`ID=$(sbatch job.sh)`) is a mark of what only the run knows (`_sbatch_commands` reads those as written)."""
    from vramlint.cmdline import has_unknown_mark

    return any(t is not None and ("sbatch" in t or has_unknown_mark(t)) for t in texts[:12])


def _sbatch_commands(text: str, display: str) -> Any:
    """(words from `sbatch` on, Tokens placed on the script's lines) of each `sbatch` command of the script, with
    the variables it sees: a command of its own, or one whose output a word takes (`ID=$(sbatch --parsable
    job.sh)`, the usual way to keep the job's id), read with the variables of the command it is in."""
    # the script's own folder, written as a path of the same length that means that folder (`./////`)
    text = _SCRIPT_DIR.sub(lambda m: "." + "/" * (len(m.group(0)) - 1), text)
    def is_sbatch(words: list[Any]) -> bool:
        return bool(words) and words[0].text is not None and os.path.basename(words[0].text) == "sbatch"

    for words, substituted in _commands_and_substituted(text, display, _names_sbatch, _SUBSTITUTED_SBATCH, {},
                                                        is_sbatch):
        if is_sbatch(words) and (not substituted or words[0].text == "sbatch"):
            yield words


def _commands_and_substituted(text: str, display: str, wanted: Any, opener: re.Pattern[str],
                              env: dict[str, str | None], own: Any) -> Any:
    """(words, whether inside a substitution) of each command of the script ``wanted`` picks, and then, unless
    ``own`` takes the command as one of those sought itself, of each command inside a command substitution of its
    words that ``opener`` finds (`ID=$(docker run -d ...)`: the shell runs it to take its output), read as
    written with the variables of the command it is in and placed on the script's own lines and columns. (The
    walk reads a substitution as a value only the run knows.)"""
    from vramlint.cmdline import script_commands_seen
    from vramlint.extract import scripts

    for words, seen, written, first in script_commands_seen(scripts.script_token(text, display), wanted, env):
        words = _words(words)
        yield words, False
        if first < 0 or own(words):
            continue
        offset = first
        for raw in written:
            offset = text.find(raw, offset)
            if offset < 0:
                break
            for m in opener.finditer(raw):
                end = _substitution_end(raw, m.end(), "`" if m.group(0).startswith("`") else ")")
                if end is None:
                    continue
                start = offset + m.end()
                # the substitution alone, on its own lines and columns (everything else blank)
                inner = "".join(c if c == "\n" or start <= k < offset + end else " " for k, c in enumerate(text))
                for sub_words, *_ in script_commands_seen(scripts.script_token(inner, display), wanted, seen):
                    yield _words(sub_words), True
            offset += len(raw)


def _substituted_container_runs(text: str, display: str, problems: list[Problem], env: dict[str, str | None]
                                ) -> list[Server]:
    """The vLLM servers of the container runs inside command substitutions (`CID=$(docker run -d IMAGE ...)`,
    the usual way to keep the container's id): the shell runs the command to take its output, so the container
    starts as a `docker run` of its own does."""
    from vramlint.cmdline import has_unknown_mark

    def wanted(texts: list[str | None]) -> bool:
        return _names_container_cli(texts) or any(t is not None and has_unknown_mark(t) for t in texts[:12])

    def is_run(words: list[Any]) -> bool:
        return _container_run(words) is not None

    servers: list[Server] = []
    for words, substituted in _commands_and_substituted(text, display, wanted, _SUBSTITUTED_CONTAINER, env,
                                                        is_run):
        run = _container_run(words) if substituted else None
        if run is not None:
            server = _docker_run_server(run, display, problems)
            if server is not None:
                servers.append(server)
    return servers


def _substitution_end(raw: str, i: int, closer: str) -> int | None:
    """Where the substitution opened before ``raw[i]`` ends (its `)` or closing backquote), quotes and nested
    `$(` read as the shell reads them; None when it does not end in the word."""
    depth = 0
    quote = None
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            i += 2
            continue
        if quote is not None:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif closer == ")" and c == "(":
            depth += 1
        elif c == closer:
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return None


def _submitted_jobs(text: str, display: str, problems: list[Problem], followed: set[str], depth: int
                    ) -> list[Server]:
    """The vLLM servers of the job scripts the script submits (`sbatch [OPTIONS] SCRIPT`), read as that script
    with the command line's options over its `#SBATCH` directives (sbatch reads them so) and the variables
    `--export` gives it. A script is read once (``followed``), through `vramlint.fsread` (a regular file inside
    the scanned tree; one outside it, or not regular, is said on the line, never read), at most MAX_JOB_DEPTH
    submissions deep; a relative path is taken from the script's folder (sbatch takes it from where it is run,
    which a script run from its folder shares)."""
    from vramlint.cmdline import has_unknown_mark
    from vramlint.discover import display_path
    from vramlint.extract.scripts import MAX_SCRIPT_BYTES
    from vramlint.extract.slurm import sbatch_submission
    from vramlint.fsread import Refusal, read_text, real_path

    servers: list[Server] = []
    names_vllm = "vllm" in text.lower()
    for k, words in enumerate(_sbatch_commands(text, display)):
        where = words[0].location or Location(display, 1, 1)
        if k >= MAX_SUBMISSIONS:
            # said where following stops (hostile26: the 17th of 10,000 `sbatch` lines on was silent)
            problems.append(Problem(display, where.line, where.column, (
                f"line {where.line} is past vramlint's limit of {MAX_SUBMISSIONS} `sbatch` commands a script: this "
                "and the later ones are not followed, so a vLLM server their jobs start is not checked; name those "
                "job scripts on the command line to have them checked"), level="note"))
            break
        submission = sbatch_submission(words[1:])
        if submission is None:
            continue  # `--help`, `--version`: no job
        if submission.script is None and (submission.wrap is not None or submission.unknown is not None
                                          and "stdin" in submission.unknown):
            found = _job_without_script(text, display, where, submission, followed, depth)
            if found is not None:
                servers.extend(found[0])
                problems.extend(found[1])
                continue
        name = submission.script.text if submission.script is not None else None
        if name is None or has_unknown_mark(name) or "$" in name or "`" in name:
            if names_vllm:
                why = submission.unknown or "the job script is named at run time"
                problems.append(Problem(display, where.line, where.column, (
                    f"line {where.line} submits a Slurm job (`sbatch`) whose script vramlint cannot tell ({why}): "
                    "not read, so a vLLM server it starts is not checked; name the job script on the command line "
                    "to have it checked"), level="note"))
            continue
        at = submission.script.location or where
        name = os.path.normpath(name)  # (`./////job.sh`: the script's own folder, see _SCRIPT_DIR)
        path = os.path.normpath(name if os.path.isabs(name) else os.path.join(os.path.dirname(display), name))
        key = real_path(os.path.abspath(path))
        if key in followed:
            continue
        followed.add(key)
        if depth >= MAX_JOB_DEPTH:
            problems.append(Problem(display, at.line, at.column, (
                f"`sbatch {name}`: a job submitted by a job {depth} submissions deep is not followed; name {name} "
                "on the command line to have it checked"), level="note"))
            continue
        got = read_text(path, limit=MAX_SCRIPT_BYTES)
        if isinstance(got, Refusal):
            what = "not in the repository" if got.missing else got.reason
            problems.append(Problem(display, at.line, at.column, (
                f"`sbatch {name}`: the job script {name} is {what}: not read, so a vLLM server it starts is not "
                "checked"), level="note" if got.missing else "warning"))
            continue
        shown = display_path(path)
        found, found_problems = read_shell_script(got, shown, submission=submission, followed=followed,
                                                  depth=depth + 1)
        given = sorted({option for option, _, _ in submission.options})
        for server in found:
            server.kind = "Slurm job"
            server.notes.append(
                f"read from the Slurm job script {shown} as `sbatch` submits it at {display}:{where.line}"
                + (f" (the command line's {', '.join(given)} over the script's #SBATCH directives, as sbatch reads "
                   "them)" if given else "")
                + (f", with {', '.join(sorted(submission.exported))} from --export" if submission.exported else ""))
        servers.extend(found)
        problems.extend(found_problems)
    return servers


def _job_without_script(text: str, display: str, where: Location, submission: Any, followed: set[str], depth: int
                        ) -> tuple[list[Server], list[Problem]] | None:
    """The servers of a job whose script is no file: `sbatch --wrap "CMD"` (sbatch writes `#!/bin/sh` and CMD as
    its script) or `sbatch <<EOF ... EOF` (the script read from standard input: the here-document as the
    submitting shell writes it), read as that script with the command line's options; None when there is
    neither (the stdin is not a here-document of this script)."""
    from vramlint.cmdline import has_unknown_mark
    from vramlint.extract.heredocs import stdin_text

    unknown: list[str] = []
    if submission.wrap is not None:
        wrap = submission.wrap
        if wrap.text is None or has_unknown_mark(wrap.text):
            return None
        found, found_problems = read_shell_script(wrap.text, display, say_mention=False, script=wrap,
                                                  submission=submission, followed=followed, depth=depth + 1)
        how = "`sbatch --wrap` (its command is the job's script)"
    else:
        got = stdin_text(text, where.line - 1)
        if got is None:
            return None
        body, unknown = got
        found, found_problems = read_shell_script(body, display, say_mention=False, submission=submission,
                                                  followed=followed, depth=depth + 1)
        how = "the here-document `sbatch` reads as its job script (from standard input)"
    for server in found:
        server.kind = "Slurm job"
        server.notes.append(f"read from {how} at {display}:{where.line}" + (
            f"; {', '.join(unknown[:4])} in it are the submitting shell's, not known here" if unknown else ""))
    return found, found_problems


# (the second form: the script's own folder in double quotes that hold quotes, `source "$(dirname "$0")/lib.sh"`)
_SOURCE_LINE = re.compile(r"^[ \t]*(?:source|\.)[ \t]+(\"[^\"\n]*\"|\"" + _DIRNAME + r"[^\"\n]*\"|'[^'\n]*'|[^\s;&|]+)"
                          r"[ \t]*(?:#.*)?$", re.M)
_ASSIGNMENT = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.M)
# `cd DIR` as the line's only command (`|| exit 1` after it): the folder a later relative `source` is taken from
# (`cd build && make && cd ..` is not read: the folder it leaves is the line's last `cd`)
_CD_LINE = re.compile(r"^[ \t]*cd(?:[ \t]+(?:--[ \t]+)?(\"[^\"\n]*\"|\"" + _DIRNAME + r"[^\"\n]*\"|'[^'\n]*'|[^\s;&|#]+))?"
                      r"[ \t]*(?:;[ \t]*)?(?:\|\|[ \t]*(?:exit|return)\b[^\n;&|]*)?[ \t]*(?:#.*)?$", re.M)
MAX_SOURCED = 16  # `source` / `.` lines followed for one script, those of the files it sources included
MAX_SOURCE_DEPTH = 4  # files sourced within sourced files


def _sourced_variables(text: str, display: str, problems: list[Problem], depth: int = 0, folder: str | None = None,
                       chain: tuple[str, ...] = (), followed: list[int] | None = None,
                       files: list[tuple[str, str]] | None = None) -> dict[str, str | None]:
    """The variables the files a script sources (`source FILE`, `. FILE`, on a line of their own) assign, read
    through `vramlint.fsread` when they are inside the scanned tree: `NAME=value` / `export NAME=value` lines, a
    value with an expansion unknown, in the order the shell runs them (a file a sourced file sources, up to
    MAX_SOURCE_DEPTH deep, sets its variables where it is sourced). A sourced file outside the tree (or
    `/proc/self/environ`, a FIFO) is a warning on the line that sources it, never read; a relative path is looked
    for beside the script (the shell looks in its working folder, which a script run as `./start.sh` shares).
    Past MAX_SOURCED `source` lines, or a file sourcing one that sources it back, the rest is unknown and said on
    the line where following stops. ``files``, when given, takes (path, text) of each file read, in that order
    (the functions they define: `_sourced_function_servers`)."""
    from vramlint.fsread import Refusal, read_text

    out: dict[str, str | None] = {}
    followed = followed if followed is not None else [0]
    folder = folder if folder is not None else os.path.dirname(display)
    chain = chain or (os.path.realpath(display),)
    steps = sorted([(m.start(), "source", m) for m in _SOURCE_LINE.finditer(text)]
                   + ([(a.start(), "set", a) for a in _ASSIGNMENT.finditer(text)] if depth else [])
                   + ([(c.start(), "cd", c) for c in _CD_LINE.finditer(text)] if not depth and "cd" in text else []),
                   key=lambda step: step[0])
    cd_unknown: tuple[str, int] | None = None  # a `cd` to a folder known only at run time: (as written, its line)
    for _at, what, m in steps:
        if what == "cd":
            folder, cd_unknown = _folder_after_cd(m, text, display, folder, cd_unknown)
            continue
        if what == "set":
            value = m.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            out[m.group(1)] = _expanded(value, out)
            continue
        name = m.group(1).strip("\"'")
        line = text.count("\n", 0, m.start()) + 1
        column = m.start(1) - m.start() + 1
        own_folder = False
        if not depth and "$" in name:
            written, name = name, _from_own_folder(name, text)
            own_folder = name != written and "$" not in name
        if "$" in name or "`" in name or not name:
            continue  # a path known only at run time: what it sets is unknown, said where it is used
        if cd_unknown is not None and not os.path.isabs(name) and not own_folder:
            _say(problems, Problem(display, line, column, (
                f"`{m.group(0).strip()}`: the folder `{cd_unknown[0]}` (line {cd_unknown[1]}) leaves is known only "
                f"at run time, so which {name} is sourced is not known: not read, and the variables it sets are "
                "unknown"), level="note"))
            continue
        if followed[0] >= MAX_SOURCED:
            if followed[0] == MAX_SOURCED:  # said once, where following stops
                _say(problems, Problem(display, line, column, (
                    f"`{m.group(0).strip()}`: past vramlint's limit of {MAX_SOURCED} sourced files a script: this "
                    "and the later `source` lines are not followed, so the variables they set are unknown"),
                    level="note"))
                followed[0] += 1
            break
        followed[0] += 1
        path = os.path.normpath(name if os.path.isabs(name) else os.path.join(
            os.path.dirname(display) if own_folder else folder, name))
        got = read_text(path)
        if isinstance(got, Refusal):
            what_is = "not in the repository" if got.missing else got.reason
            _say(problems, Problem(display, line, column, (
                f"`{m.group(0).strip()}`: {name} is {what_is}: not read, so the variables it sets are unknown"),
                level="note" if got.missing else "warning"))
            continue
        real = os.path.realpath(path)
        if real in chain or depth + 1 > MAX_SOURCE_DEPTH:
            why = ("sources a file that sources it (a loop the shell never leaves)" if real in chain else
                   f"is past vramlint's limit of {MAX_SOURCE_DEPTH} files sourced within each other")
            _say(problems, Problem(display, line, column, (
                f"`{m.group(0).strip()}` {why}: not followed, so the variables it sets are unknown"), level="note"))
            continue
        if files is not None:
            files.append((path, got))
        out.update(_sourced_variables(got, path, problems, depth + 1, folder, (*chain, real), followed, files))
    return out


# `name() {`, `name () (`, `function name {`, `function name() {` at a line's start: a function a sourced file defines
_FUNCTION_HEADER = re.compile(r"^[ \t]*(?:function[ \t]+([A-Za-z_][\w.:-]*)(?:[ \t]*\(\))?|([A-Za-z_][\w.:-]*)[ \t]*"
                              r"\(\))[ \t]*(?:[{(]|$)", re.M)
MAX_SOURCED_CALLS = 8  # calls of sourced files' functions read for one script


def _defined_functions(text: str) -> set[str]:
    return {m.group(1) or m.group(2) for m in _FUNCTION_HEADER.finditer(text)}


def sourced_functions(text: str, display: str, problems: list[Problem] | None = None
                      ) -> tuple[dict[str, tuple[str, str]], dict[str, str | None]]:
    """The functions the files ``text`` sources define that the script does not define itself ({name: (the
    sourced file's path, its text)}; a name defined in two, the one sourced last, as the shell keeps), and the
    variables those files set (`_sourced_variables`, whose bounds and refusals these are)."""
    files: list[tuple[str, str]] = []
    variables = _sourced_variables(text, display, problems if problems is not None else [], files=files)
    own = _defined_functions(text)
    functions: dict[str, tuple[str, str]] = {}
    for path, body in files:
        for name in _defined_functions(body) - own:
            functions[name] = (path, body)
    return functions, variables


def _called_body(name: str, body: str) -> str:
    """A sourced file's text with a call of ``name`` after its last line, which passes on the arguments the walk
    is given (its `$@`): the function's body is walked on the sourced file's own lines."""
    return f'{body}{"" if body.endswith(chr(10)) else chr(10)}{name} "$@"\n'


def calls_sourced_vllm_function(text: str, display: str) -> bool:
    """Whether the script calls a function a file it sources defines whose body starts vLLM
    (`cmdline.script_runs_vllm` of that function called): `source lib.sh; start_vllm MODEL` (the walk's rule
    for such a script)."""
    from vramlint.cmdline import script_runs_vllm

    if "source" not in text and ". " not in text:
        return False
    functions, _ = sourced_functions(text, display)
    return any(name in text and script_runs_vllm(_called_body(name, body)) for name, (_, body) in functions.items())


def _sourced_function_servers(script: Any, display: str, problems: list[Problem]) -> list[Server]:
    """The servers the script starts by calling a function defined in a file it sources (`source lib.sh;
    start_vllm Qwen/Qwen3-8B` where lib.sh defines `start_vllm() { vllm serve "$1" ...; }`): the body is read
    where the file defines it, with the call's arguments as its `$1..$N` and the variables the call sees and the
    sourced files set, and the server is placed on the sourced file's lines (the call said in a note)."""
    from vramlint.cmdline import (
        ARGS_DEFAULTED,
        POSITIONAL,
        Token,
        _Array,
        find_vllm_invocation,
        script_commands_seen,
        script_runs_vllm,
    )

    text = script.text or ""
    sourced_problems: list[Problem] = []
    functions, variables = sourced_functions(text, display, sourced_problems)
    launching = {name for name, (_, body) in functions.items()
                 if name in text and script_runs_vllm(_called_body(name, body))}
    if not launching:
        return []
    servers: list[Server] = []
    calls = 0
    wanted = lambda texts: any(t in launching for t in texts[:8] if t is not None)  # noqa: E731
    for words, seen, _written, _first in script_commands_seen(script, wanted, variables):
        words = _words(words)
        if not words or words[0].text not in launching:
            continue
        calls += 1
        if calls > MAX_SOURCED_CALLS:
            break
        name, call = words[0].text, words[0].location
        path, body = functions[name]
        start = Location(path, 1, 1)
        args = [w.text for w in words[1:]]
        if None in args:  # an unknown word: the arguments from it on are not known
            args = [*args[:args.index(None)], None]
        env = {**variables, **seen, POSITIONAL: _Array(args), ARGS_DEFAULTED: None}
        inv = find_vllm_invocation([Token("sh", start), Token("-c", start), Token(_called_body(name, body), start),
                                    Token(path, start)], [], None, env)
        if inv is None:
            continue
        assigned, _ = _devices_assigned(Token(_called_body(name, body), start), inv)
        server = _script_server(inv, path, assigned)
        server.notes.append(f"started by `{name}`, which {display} calls on line {call.line} (a function {path} "
                            "defines, which the script sources): read with that call's arguments")
        servers.append(server)
    if servers:
        problems.extend(p for p in sourced_problems if p not in problems)
    return servers


_HELD_PROGRAM = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def unknown_launcher(script: Any, text: str) -> tuple[Location, str, str | None] | None:
    """A command `"$VLLM_BIN" serve ...` whose program is a variable not known before the run (unset in the
    script, `${VLLM_BIN:-$(which vllm)}`), in a script that names vLLM: (where, the word as written, the variable's
    name). vLLM's own CLI is `vllm serve`; which program the variable holds only the run knows, so no server is
    read from it (a known value is read as that program)."""
    from vramlint.cmdline import has_unknown_mark, script_commands_seen

    if "serve" not in text or "vllm" not in text.lower():
        return None

    def wanted(texts: list[str | None]) -> bool:
        return "serve" in texts[:8]

    for words, _seen, written, _first in script_commands_seen(script, wanted, {}):
        at = len(written) - len(_words(words))
        words = words[at:]
        if len(words) >= 2 and words[1].text == "serve" and "$" in written[at] \
                and (words[0].text is None or has_unknown_mark(words[0].text)):
            held = _HELD_PROGRAM.search(written[at])
            return words[0].location, written[at], held.group(1) if held else None
    return None


def _say_unknown_launcher(found: tuple[Location, str, str | None], problems: list[Problem]) -> None:
    where, word, name = found
    held = f"{name}, which" if name else "a word that"
    problems.append(Problem(where.file, where.line, where.column, (
        f"`{word} serve`: the program is held in {held} the script does not set (or sets from what only the run "
        "knows), so whether it is vLLM's CLI is known only at run time: no server is read from it; write the "
        f"program in the script (`{name or 'VLLM_BIN'}=/path/to/vllm`, or `vllm serve` itself) to have it "
        "checked"), level="note"))


_PLAIN_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
MAX_SOURCED_VALUE = 4096  # characters of a value a sourced file builds from others (`DIR=$ROOT/models`)


def _expanded(value: str, known: dict[str, str | None]) -> str | None:
    """A sourced file's value with its plain references (`$NAME`, `${NAME}`) to the variables set before it in
    the files sourced, as the shell expands them (`MODEL_PATH="${MODEL_ROOT}/Qwen3-8B"`); None (unknown) when it
    names one not set there or not known, or holds any other expansion (`${X:-d}`, `$(cmd)`, a backquote)."""
    if "`" in value:
        return None
    missing = False

    def known_value(m: re.Match[str]) -> str:
        nonlocal missing
        got = known.get(m.group(1) or m.group(2))
        if got is None:
            missing = True
            return ""
        return got

    out = _PLAIN_REFERENCE.sub(known_value, value)
    if missing or "$" in out or len(out) > MAX_SOURCED_VALUE:
        return None
    return out


def _folder_after_cd(m: re.Match[str], text: str, display: str, folder: str, unknown: tuple[str, int] | None
                     ) -> tuple[str, tuple[str, int] | None]:
    """The folder a relative `source` is taken from after the `cd` line ``m`` of the script ``display`` (from
    ``folder``, or from a folder known only at run time: ``unknown``), and whether it is now known only at run
    time: (`cd "$WORK"`, a bare `cd`, `cd -`: as written, its line). `cd "$(dirname "$0")/.."` and a variable
    assigned once to the script's folder start from the script's own folder, whatever the folder was before."""
    written = (m.group(1) or "").strip("\"'")
    name = _from_own_folder(written, text) if "$" in written else written
    if name != written and "$" not in name:
        return os.path.normpath(os.path.join(os.path.dirname(display), name)), None
    if not name or name == "-" or "$" in name or "`" in name or name.startswith("~"):
        return folder, (f"cd {m.group(1) or ''}".strip(), text.count("\n", 0, m.start()) + 1)
    if os.path.isabs(name):
        return os.path.normpath(name), None
    if unknown is not None:
        return folder, unknown
    return os.path.normpath(os.path.join(folder, name)), None


def _from_own_folder(name: str, text: str) -> str:
    """``name`` (a sourced path) with the script's own folder written as `.` where it is named so: the idiom
    itself (`$(dirname "$0")/env.sh`) or a variable the script assigns it to once (`DIR="$(cd "$(dirname
    "${BASH_SOURCE[0]}")" && pwd)"`, then `source "$DIR/env.sh"`); `_sourced_variables` takes a relative path
    from that folder. A variable assigned more than once is left as it is (which value the line sees is not
    known here)."""
    name = _SCRIPT_DIR.sub(".", _SCRIPT_DIR_BELOW.sub(lambda below: "." + below.group(1), name))
    m = re.match(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))(?=/|$)", name)
    if m is None:
        return name
    variable = m.group(1) or m.group(2)
    assigned = re.findall(rf"^[ \t]*(?:export[ \t]+|readonly[ \t]+|declare[ \t]+-r[ \t]+)?{variable}=(.*)$", text, re.M)
    if len(assigned) == 1:
        value = assigned[0].strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        if _SCRIPT_DIR.fullmatch(value):
            return os.path.normpath("." + name[m.end():])
        below = _SCRIPT_DIR_BELOW.fullmatch(value)
        if below is not None:  # `ROOT="$(cd "$(dirname "$0")/.." && pwd)"`: a folder from the script's own
            return os.path.normpath("." + below.group(1) + name[m.end():])
    return name


def _say(problems: list[Problem], problem: Problem) -> None:
    if problem not in problems:  # (a file sourced on several lines refuses the same file each time)
        problems.append(problem)


def _names_ssh(texts: list[str | None]) -> bool:
    return any(t is not None and os.path.basename(t) == "ssh" for t in texts[:8])


def _remote_container_runs(script: Any, text: str, display: str, problems: list[Problem]) -> list[Server]:
    """`ssh HOST "docker run ... IMAGE ARGS"`: the container the remote host's shell runs (ssh joins the command's
    words and the remote shell reads them), read as a local `docker run` is, with its GPUs the host's. A remote
    command built at run time (`ssh HOST "$CMD"`) is not read, and that is said when the script names vLLM."""
    from vramlint.cmdline import Token, has_unknown_mark, script_commands, ssh_remote

    lines = text.split("\n")
    servers: list[Server] = []
    for command in script_commands(script, _names_ssh):
        words = _words(command)
        if not words or words[0].text is None or os.path.basename(words[0].text) != "ssh":
            continue
        remote = ssh_remote(words, 0)
        if remote is None and any(w.text is None for w in words):
            last = words[-1]
            if last.text is not None and not has_unknown_mark(last.text) and not _may_run_vllm(
                    Token(last.text, last.location)):
                continue  # options known only at run time, but the command it ends with starts no vLLM (`docker ps`)
            remote = (None, [w for w in words[1:] if w.text is None][:1])  # its options are not known: nor its command
        if remote is None or not remote[1]:
            continue
        host, rest = remote
        first = rest[0].location or words[0].location
        if any(w.text is None or has_unknown_mark(w.text) for w in rest):
            if "vllm" in text.lower() and first is not None:
                problems.append(Problem(display, first.line, first.column, f"line {first.line} runs a command on "
                                        f"{host or 'a remote host'} over ssh whose text is built at run time: a "
                                        "remote command is not read, so a vLLM server it starts there (a `docker "
                                        "run` of a vLLM image) is not checked; put that command in a script of its "
                                        "own to have it checked", level="note"))
            continue
        if len(rest) == 1:
            loc = rest[0].location
            quoted = loc is not None and 0 < loc.line <= len(lines) and \
                lines[loc.line - 1][loc.column - 1:loc.column] in ("'", '"')
            line = Token(rest[0].text, loc, quoted=quoted)
        else:
            line = Token(" ".join(w.text or "" for w in rest), first)
        for remote_command in script_commands(line, _names_container_cli):
            run = _container_run(remote_command)
            server = _docker_run_server(run, display, problems) if run is not None else None
            if server is not None:
                server.notes.append(f"the container runs on the host `ssh` reaches ({host}): its GPUs are that "
                                    "host's, which this script does not say")
                servers.append(server)
    return servers


def _say_later_servers(script: Any, text: str, server: Server) -> None:
    """A note on ``server`` (the script's first vLLM command, the one read) when the script has more commands
    that may start vLLM: a second `vllm serve` (in the background, or run when the first exits) is not read, which
    is said once, with its lines, rather than left out without a word."""
    if text.count("vllm") < 2:
        return
    from vramlint.cmdline import script_commands

    lines = []
    for command in script_commands(script, _command_may_run_vllm):
        first = next((w.location for w in command if w.location is not None), None)
        if first is not None:
            lines.append(first.line)
        if len(lines) > 20:
            break
    if len(lines) < 2:
        return
    shown = ", ".join(str(n) for n in lines[:10]) + (" and more" if len(lines) > 10 else "")
    read = server.location.line if server.location is not None and server.location.line else lines[0]
    which = "the first" if read == lines[0] else "one"
    server.notes.append(f"the script has {len(lines) if len(lines) <= 20 else 'over 20'} commands that may start "
                        f"vLLM (lines {shown}): vramlint reads {which}, line {read}, and not the others; "
                        "put each server in a script of its own to have it checked")


def _may_run_vllm(script: Any) -> bool:
    """Whether a command of the script may start vLLM's server: one that runs `vllm serve` or `-m vllm...`, passes
    a shell string that does (`sh -c`, `eval`, `ssh host "..."`), or runs a container of a vLLM image or of one
    the script does not name. A script whose other commands only mention vLLM (an echo, a URL, `curl`,
    `pip install vllm`, `kubectl apply`, `helm upgrade`, `docker compose up`) launches nothing to check."""
    from vramlint.cmdline import script_commands

    return next(iter(script_commands(script, _command_may_run_vllm)), None) is not None


_SHELL_RESERVED = {"if", "then", "elif", "else", "while", "until", "do", "!", "{", "time"}
_SAYS_ONLY = {"echo", "printf", "log", "info", "warn", "die", "fail", ":", "true", "grep", "pkill", "pgrep"}


def _command_may_run_vllm(texts: list[str | None]) -> bool:
    i = 0
    # `if pgrep -f "vllm.entrypoints..."`: the shell's keywords come before the command they test or run
    while i < len(texts) and texts[i] is not None and (
            texts[i] in _PREFIX_WORDS or texts[i] in _SHELL_RESERVED or texts[i] == "env"
            or _ASSIGNMENT.match(texts[i] or "")):
        i += 1
    program = texts[i] if i < len(texts) else None
    if program is not None and os.path.basename(program) in _SAYS_ONLY:
        return False
    for k, word in enumerate(texts[i:], i):
        if word is None:
            continue
        following = texts[k + 1] if k + 1 < len(texts) else None
        if os.path.basename(word) in ("vllm", "vllm-omni") and following == "serve":
            return True
        if word == "-m" and following is not None and (following == "vllm" or following.startswith("vllm.")):
            return True
        if "vllm serve" in word or "vllm.entrypoints" in word:
            return True
    # the container CLI after the wrappers (`timeout 600 docker run ...` too)
    cli = next((k for k in range(i, min(i + 8, len(texts)))
                if texts[k] is not None and os.path.basename(texts[k]) in _CONTAINER_CLIS), None)
    if cli is not None:
        rest = texts[cli + 1:]
        if rest[:1] == ["run"] or rest[:2] == ["container", "run"]:
            entrypoint = _entrypoint_given(rest)
            program = os.path.basename(entrypoint) if entrypoint is not None else None
            if program is not None and program.startswith("vllm"):
                # vLLM's CLI: a server only with `serve` (`vllm bench serve` is the benchmark client)
                return any(w == "serve" and rest[k - 1] != "bench" for k, w in enumerate(rest))
            if program is not None and (program not in _SHELL_PROGRAMS or "-c" in rest):
                # the image's own program replaced by another (`--entrypoint python3 IMAGE probe.py`), or a shell
                # given a command string that runs no `vllm serve` (checked above)
                return False
            return any(w is None or "vllm" in w.lower() for w in rest)
    return False


_SHELL_PROGRAMS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "ash"))


def _entrypoint_given(words: list[str | None]) -> str | None:
    """The program a container run's `--entrypoint` names, when it names one."""
    for k, word in enumerate(words):
        if word == "--entrypoint" and k + 1 < len(words):
            return words[k + 1]
        if word is not None and word.startswith("--entrypoint="):
            return word.split("=", 1)[1]
    return None


def _names_container_cli(texts: list[str | None]) -> bool:
    return any(t is not None and os.path.basename(t) in _CONTAINER_CLIS for t in texts[:8])


def _commands(words: list[Any]) -> list[list[Any]]:
    commands: list[list[Any]] = [[]]
    for word in words:
        if word.op:
            commands.append([])
        else:
            commands[-1].append(word)
    return [c for c in commands if c]


def _words(command: list[Any]) -> list[Any]:
    """The words of a simple command after its leading assignments and wrappers (`sudo`, `nohup`, `exec`), and
    the shell's reserved words before it (`if ! docker run ...`, `while`, `until`, `time`): the command they test
    or run is the container's."""
    from vramlint.cmdline import timeout_command_start

    i = 0
    while i < len(command) and command[i].text is not None:
        if command[i].text in _PREFIX_WORDS or (i == 0 or command[i - 1].text in _SHELL_RESERVED) \
                and command[i].text in _SHELL_RESERVED or _ASSIGNMENT.match(command[i].text):
            i += 1
        elif os.path.basename(command[i].text) == "timeout":
            start = timeout_command_start(command, i)
            if start is None:
                return []
            i = start
        else:
            break
    return command[i:]


def _devices_assigned(script: Any, inv: Any) -> tuple[dict[str, tuple[str | None, Location | None]],
                                                     Location | None]:
    """CUDA_VISIBLE_DEVICES as the script assigns it before the server's command, when that command does not
    (`_script_server` reads the devices from it): the assignments as written, a value from the environment (a
    default included) is not known. An assignment after the command is for a later one, not seen by this
    server. With a `ray start` before the command (the location of which is returned), the engine runs on the
    Ray cluster that command joins or starts (vLLM's Ray executor places a worker on each of its GPUs), so what
    this shell's CUDA_VISIBLE_DEVICES says is one node's share, not the engine's GPUs: none are returned."""
    from vramlint.cmdline import split_token

    assigned: dict[str, tuple[str | None, Location | None]] = {}
    if "CUDA_VISIBLE_DEVICES" in inv.env or "CUDA_VISIBLE_DEVICES" not in (script.text or "") or inv.remote:
        return assigned, None  # (ssh does not pass this shell's variables to the host it runs the server on)
    start = inv.location
    for command in _commands(split_token(script, None)):
        first = next((w.location for w in command if w.location is not None), None)
        if start is not None and first is not None and (first.line, first.column) >= (start.line, start.column):
            break
        words = [w.text for w in _words(command)[:2]]
        if words == ["ray", "start"]:
            return {}, first
        _note_assignments(command, assigned)
    return assigned, None


def _note_assignments(command: list[Any], assigned: dict[str, tuple[str | None, Location | None]]) -> None:
    """`export NAME=VALUE` and bare `NAME=VALUE` commands: the variables later commands of the script see (a
    value from the environment, `${NAME:-default}` included, is not known here)."""
    from vramlint.cmdline import UNKNOWN_MARK

    words = [w for w in command if w.text is not None]
    if words and words[0].text in ("export", "declare", "readonly"):
        words = [w for w in words[1:] if not w.text.startswith("-")]
    if not words or not all(_ASSIGNMENT.match(w.text) for w in words):
        return
    for w in words:
        name, value = _ASSIGNMENT.match(w.text).groups()
        assigned[name] = (None if "$" in value or "`" in value or UNKNOWN_MARK in value else value, w.location)


def container_commands(script: Any, display: str, problems: list[Problem], env: dict[str, str | None] | None,
                       started: dict[str, list[Any]]) -> list[Server]:
    """The vLLM servers the `docker run` and `docker exec` commands of ``script`` (a Token) start. ``started``:
    the containers named by a `docker run --name` (its words), before this script and by it (a GitHub Actions
    job's earlier steps run on the same host), updated here."""
    from vramlint.cmdline import script_commands

    servers: list[Server] = []
    for command in script_commands(script, _names_container_cli, env):
        run = _container_run(command)
        if run is not None:
            server = _docker_run_server(run, display, problems)
            if server is not None:
                servers.append(server)
            opts = _run_options(run)
            if opts is not None and opts.name:
                started[opts.name] = run
            continue
        exec_words = _container_exec(command)
        if exec_words is not None:
            server = _docker_exec_server(exec_words, display, problems, started)
            if server is not None:
                servers.append(server)
    return servers


def _container_run(command: list[Any]) -> list[Any] | None:
    """The words after `docker run` (or `docker container run`, podman, nerdctl), or None."""
    return _container_subcommand(command, "run")


def _container_exec(command: list[Any]) -> list[Any] | None:
    """The words after `docker exec` (or `docker container exec`, podman, nerdctl), or None."""
    return _container_subcommand(command, "exec")


def _container_subcommand(command: list[Any], subcommand: str) -> list[Any] | None:
    words = _words(command)
    texts = [w.text for w in words[:3]]
    if len(texts) < 2 or texts[0] is None or os.path.basename(texts[0]) not in _CONTAINER_CLIS:
        return None
    if texts[1] == subcommand:
        return words[2:]
    if texts[1] == "container" and len(texts) > 2 and texts[2] == subcommand:
        return words[3:]
    return None


def _exec_options(words: list[Any]) -> tuple[dict[str, str | None], dict[str, Location], Any, int] | None:
    """(the `-e` variables, where each is set, the container's word (None for podman's --latest), where the
    command starts) of `docker exec [OPTIONS] CONTAINER COMMAND...` (`cmdline.container_exec_options`)."""
    from vramlint.cmdline import container_exec_options

    read = container_exec_options([w.text for w in words])
    if read is None:
        return None
    values, container, start = read
    env: dict[str, str | None] = {}
    env_locs: dict[str, Location] = {}
    for value, at in values:
        key, eq, val = value.partition("=")
        env[key] = val if eq else None  # `-e NAME` passes the variable of the shell running docker
        env_locs[key] = words[at].location
    return env, env_locs, (words[container] if container is not None else None), start


def _docker_exec_server(words: list[Any], display: str, problems: list[Problem],
                        started: dict[str, list[Any]]) -> Server | None:
    """The vLLM server `docker exec [OPTIONS] CONTAINER COMMAND...` starts: COMMAND is a command of its own, run
    in a container already running (no entrypoint of the image is involved). Its image, environment and devices
    are those of the container: known when the same file started it (`docker run --name CONTAINER IMAGE`,
    ``started``), else not."""
    from vramlint.cmdline import find_vllm_invocation
    from vramlint.versions import version_from_image

    read = _exec_options(words)
    if read is None:
        return None
    exec_env, exec_locs, container, start = read
    command = list(words[start:])
    if not command:
        return None
    name = container.text if container is not None else None
    run = started.get(name) if name is not None else None
    opts = _run_options(run) if run is not None else None
    image_word = run[opts.image_index] if opts is not None and run is not None else None
    # the container's own environment (docker run -e), over which exec's -e is set for this command
    env = {**(opts.env if opts is not None else {}), **exec_env}
    env_locs = {**(opts.env_locs if opts is not None else {}), **exec_locs}
    image = image_word.text if image_word is not None else None
    inv = find_vllm_invocation(command, [], image, env)
    if inv is None:
        from vramlint.cmdline import _SHELLS, Token

        first = command[0]
        if len(command) > 2 and first.text is not None and os.path.basename(first.text) in _SHELLS and \
                command[1].text in ("-c", "-lc") and command[2].text is not None:
            shown = (command[2].text.split() or [""])[0]  # `docker exec c sh -c "docker exec c ..."`
            if shown in _CONTAINER_CLIS:
                first = Token(shown, first.location)
        if first.text is not None and os.path.basename(first.text) in _CONTAINER_CLIS and first.location is not None \
                and any(w.text is not None and "vllm" in w.text for w in command[1:]):
            # `docker exec c docker exec c ... vllm serve`: the container runs a container CLI of its own, which
            # reaches whatever daemon the container's socket is (if any); nothing this file says (hostile26: 200
            # such levels were silent)
            problems.append(Problem(display, first.location.line, first.location.column, (
                f"`docker exec {name or ''}` runs `{os.path.basename(first.text)}` inside the container: the "
                "container CLI run there reaches a daemon this file does not say, so the vLLM command it passes "
                "on is not read; run vLLM with one `docker exec` to have it checked"), level="note"))
        return None
    location = inv.location or command[0].location
    server = Server(file=display, location=location, source_format="script", kind="docker exec",
                    name=name or os.path.basename(display), image=image,
                    image_location=image_word.location if image_word is not None else None,
                    vllm_version=version_from_image(image))
    fill_from_invocation(server, inv)
    server.env.update(env)
    server.env_locations.update(env_locs)
    if opts is not None:
        server.gpu = _container_gpus(opts, env, env_locs)
        server.shm = opts.shm
    else:
        which = f"the container {name}" if name is not None else "the latest container (podman exec --latest)"
        server.notes.append(f"the command runs in {which} (`docker exec`), which this file does not start: its "
                            "image (so vLLM's version), its /dev/shm and its devices are not known here; scan the "
                            "file that starts it with this one, or set `version:` and `gpus:` in .vramlint.yaml")
    for message in inv.problems:
        problems.append(Problem(display, location.line, location.column, message))
    return server


def container_run_server(command: list[Any], display: str, problems: list[Problem]) -> Server | None:
    """The vLLM server a `docker run` (podman, nerdctl) command line starts, its words Tokens, or None: for a
    launcher that runs the container itself (a systemd unit's ExecStart=)."""
    words = _container_run(command)
    return _docker_run_server(words, display, problems) if words is not None else None


class _RunOptions:
    """What the options of a `docker run` say (before its image word, ``words[image_index]``)."""

    def __init__(self) -> None:
        self.env: dict[str, str | None] = {}
        self.env_locs: dict[str, Location] = {}
        self.gpus: tuple[str | None, Location | None] | None = None
        self.kfd: Location | None = None
        self.habana: Location | None = None
        self.entrypoint: list[Any] = []
        self.name: str | None = None
        self.shm = False
        self.image_index = 0


def _run_options(words: list[Any]) -> _RunOptions | None:
    """The options of `docker run [OPTIONS] IMAGE ...`, or None when which word is the image is not known (an
    option known only at run time, no image word)."""
    opts = _RunOptions()
    i = 0
    while i < len(words):
        word = words[i]
        text = word.text
        if text is None:
            return None  # an option known only at run time: which word is the image is not known
        if not text.startswith("-") or text == "-":
            break
        if text == "--":
            i += 1
            break
        value, taken = _option_value(words, i)
        option = _option_name(text)
        if option in ("--env", "-e") and value is not None:
            key, eq, val = value.partition("=")
            opts.env[key] = val if eq else None  # `-e NAME` passes the variable of the shell running docker
            opts.env_locs[key] = words[i + taken - 1].location if taken else word.location
        elif option == "--gpus":
            opts.gpus = (value, word.location)
        elif option == "--device" and value is not None and value.split(":", 1)[0] == "/dev/kfd":
            opts.kfd = word.location  # ROCm's kernel driver: the container sees the host's AMD GPUs
        elif option == "--runtime" and value is not None and "habana" in value:
            opts.habana = word.location  # Habana's runtime mounts the Gaudi devices HABANA_VISIBLE_DEVICES lists
        elif option == "--entrypoint" and value is not None:
            opts.entrypoint = [_with_text(words[i + taken - 1] if taken > 1 else word, value)]
        elif option == "--name":
            opts.name = value
        elif option in ("--ipc", "--shm-size"):
            opts.shm = True
        i += taken
    if i >= len(words) or words[i].text is None:
        return None
    opts.image_index = i
    return opts


def _container_gpus(opts: _RunOptions, env: dict[str, str | None], env_locs: dict[str, Location]) -> GpuRequest | None:
    """The devices a container started with these `docker run` options sees, with ``env`` its environment."""
    gaudi = visible_gaudi(env)
    if opts.kfd is not None and opts.gpus is None:
        return _rocm_devices(opts.kfd, env, env_locs)
    if opts.gpus is None and (opts.habana is not None or gaudi is not None):
        return _gaudi_devices(opts.habana, gaudi, env_locs)
    return _docker_gpus(opts.gpus, env.get("CUDA_VISIBLE_DEVICES"), env_locs.get("CUDA_VISIBLE_DEVICES"))


def _docker_run_server(words: list[Any], display: str, problems: list[Problem]) -> Server | None:
    from vramlint.cmdline import find_vllm_invocation, is_vllm_image
    from vramlint.versions import version_from_image

    opts = _run_options(words)
    if opts is None:
        return None
    image_word, rest = words[opts.image_index], list(words[opts.image_index + 1:])
    image = image_word.text
    if not is_vllm_image(image):
        return None
    inv = find_vllm_invocation(opts.entrypoint, rest, image, opts.env)
    if inv is None:
        return None
    server = Server(file=display, location=image_word.location, source_format="script", kind="docker run",
                    name=opts.name or os.path.basename(display), image=image, image_location=image_word.location,
                    vllm_version=version_from_image(image))
    fill_from_invocation(server, inv)
    server.env.update(opts.env)
    server.env_locations.update(opts.env_locs)
    server.gpu = _container_gpus(opts, opts.env, opts.env_locs)
    server.shm = opts.shm
    for message in inv.problems:
        problems.append(Problem(display, image_word.location.line, image_word.location.column, message))
    return server


def _option_name(text: str) -> str:
    if text.startswith("--"):
        return text.split("=", 1)[0]
    return text[:2]


def _option_value(words: list[Any], i: int) -> tuple[str | None, int]:
    """(the option's value, how many words the option takes) for the option at ``words[i]``."""
    text = words[i].text
    if text.startswith("--"):
        if "=" in text:
            return text.split("=", 1)[1], 1
        if text in _VALUE_OPTIONS:
            nxt = words[i + 1].text if i + 1 < len(words) else None
            return nxt, 2
        return None, 1
    # short options cluster (`-it`, `-dit`); the first that takes a value takes the rest of the word or the next
    for j, letter in enumerate(text[1:], start=1):
        if letter in _VALUE_SHORT:
            if j + 1 < len(text):
                return text[j + 1:], 1
            nxt = words[i + 1].text if i + 1 < len(words) else None
            return nxt, 2
    return None, 1


def _with_text(word: Any, text: str) -> Any:
    from vramlint.cmdline import Token

    return Token(text, word.location)


def _docker_gpus(gpus: tuple[str | None, Location | None] | None, cuda_visible: str | None,
                 cuda_location: Location | None) -> GpuRequest | None:
    """The devices `--gpus` gives the container (`all`, a count, `device=0,1`), narrowed by CUDA_VISIBLE_DEVICES."""
    if gpus is None:
        return None
    value, location = gpus
    count: int | None = None
    ids: list[str] | None = None
    raw = (value or "").strip().strip("'\"")
    if raw.isdigit():
        count = small_int(raw)
    elif "device=" in raw:
        ids = [d for d in raw.split("device=", 1)[1].strip("'\"").split(",") if d]
        count = len(ids)
    evidence = [f"--gpus {value}"]
    visible = _ids(cuda_visible)
    if visible is not None:
        evidence.append(f"CUDA_VISIBLE_DEVICES={cuda_visible}")
        count = len(visible) if count is None or len(visible) <= count else count
    return GpuRequest(type=None, count=count, evidence="; ".join(evidence), location=location or cuda_location,
                      device_ids=ids)


def _rocm_devices(kfd: Location, env: dict[str, str | None], env_locs: dict[str, Location]) -> GpuRequest:
    """AMD GPUs passed in with `--device /dev/kfd` (and /dev/dri): every GPU of the host, narrowed as the ROCm
    runtime narrows them: ROCR_VISIBLE_DEVICES lists the host's devices the process sees, HIP_VISIBLE_DEVICES (or
    CUDA_VISIBLE_DEVICES, which vLLM's platforms/rocm.py keeps equal to it) picks among those, numbered from 0."""
    evidence = ["--device /dev/kfd"]
    visible: list[str] | None = None
    unknown = False
    location = kfd
    for name in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        if name not in env:
            continue
        if name == "CUDA_VISIBLE_DEVICES" and "HIP_VISIBLE_DEVICES" in env:
            continue  # the same devices (vLLM refuses the two when they differ)
        ids = _ids(env[name])
        if ids is None:
            unknown = True  # `-e NAME` from the shell running docker, or a value not a device list
            continue
        evidence.append(f"{name}={env[name]}")
        location = env_locs.get(name) or location
        if visible is not None and name != "ROCR_VISIBLE_DEVICES" and all(
                small_int(x) is not None and small_int(x) < len(visible) for x in ids):
            visible = [visible[int(x)] for x in ids]
        else:
            visible = ids
    count = None if unknown or visible is None else len(visible)
    return GpuRequest(type=None, count=count, evidence="; ".join(evidence), location=location, vendor="amd",
                      device_ids=None if unknown else visible)


def _gaudi_devices(runtime: Location | None, gaudi: tuple[str, list[str] | None, bool] | None,
                   env_locs: dict[str, Location]) -> GpuRequest:
    """Gaudi devices of `--runtime habana` / `-e HABANA_VISIBLE_DEVICES=0,1` (``extract.gaudi``): as many as the
    variable lists; "all", or a value set where docker runs, does not say how many."""
    evidence = ["--runtime habana"] if runtime is not None else []
    count = None
    location = runtime
    if gaudi is not None:
        name, ids, known = gaudi
        location = env_locs.get(name) or location
        evidence.append(f"{name}={','.join(ids)}" if ids is not None else
                        f"{name}={'all' if known else '(set where docker runs)'}")
        count = len(ids) if ids is not None else None
    return GpuRequest(type=None, count=count, evidence="; ".join(evidence), location=location,
                      vendor="intel-gaudi", device_ids=gaudi[1] if gaudi is not None else None)


def _ids(value: str | None) -> list[str] | None:
    if value is None or not re.fullmatch(r"[\w-]+(,[\w-]+)*", value.strip()):
        return None
    return value.strip().split(",")


def _script_server(inv: Any, display: str, assigned: dict[str, tuple[str | None, Location | None]]) -> Server:
    location = inv.location or Location(display, 1, 1)
    server = Server(file=display, location=location, source_format="script", kind="script",
                    name=os.path.basename(display))
    if inv.image is not None:  # `srun --container-image IMAGE vllm serve ...`
        from vramlint.versions import version_from_image

        server.image, server.image_location = inv.image, inv.location
        server.vllm_version = version_from_image(inv.image)
    fill_from_invocation(server, inv)
    cuda = inv.env.get("CUDA_VISIBLE_DEVICES") if "CUDA_VISIBLE_DEVICES" in inv.env else None
    cuda_location = inv.env_locations.get("CUDA_VISIBLE_DEVICES")
    if "CUDA_VISIBLE_DEVICES" not in inv.env and "CUDA_VISIBLE_DEVICES" in assigned:
        cuda, cuda_location = assigned["CUDA_VISIBLE_DEVICES"]
        server.env["CUDA_VISIBLE_DEVICES"] = cuda
    ids = _ids(cuda)
    if ids is not None:
        server.gpu = GpuRequest(type=None, count=len(ids), evidence=f"CUDA_VISIBLE_DEVICES={cuda}",
                                location=cuda_location, device_ids=ids)
    return server


def _slurm_gpus(server: Server, sbatch: Any) -> None:
    """The GPUs of a Slurm batch job: each node's from its directives, and, when the engine runs on Ray across
    several nodes (the Ray executor, or a Ray cluster address), the whole allocation as its engine group."""
    from vramlint.model import EngineGroup, GroupMember

    server.env.update({k: v for k, v in sbatch.environment().items() if k not in server.env})
    if server.gpu is None and sbatch.gpus_location is not None:
        server.gpu = GpuRequest(type=None, count=sbatch.gpus_per_node, evidence=f"{sbatch.evidence} (Slurm: "
                                "GPUs of each node)", location=sbatch.gpus_location)
        if sbatch.gpu_type:
            server.notes.append(f"the Slurm GRES type {sbatch.gpu_type!r} is the cluster's own name for a GPU: "
                                "set `gpu:` in .vramlint.yaml (or --gpu) to say which GPU it is")
    on_ray = server.args.get("distributed_executor_backend") == "ray" or bool(server.env.get("RAY_ADDRESS"))
    if sbatch.nodes is not None and sbatch.nodes > 1 and on_ray and server.engine_group is None:
        server.engine_group = EngineGroup(
            kind="Slurm allocation", source="sbatch(1): --nodes x --gpus-per-node",
            members=[GroupMember("nodes", sbatch.nodes, sbatch.gpus_per_node, location=sbatch.nodes_location)],
            fix="ask for more nodes (--nodes) or GPUs per node (--gpus-per-node), or lower the parallel size")


def fill_from_invocation(server: Server, inv: Any) -> None:
    server.model, server.model_location = inv.model, inv.model_location
    server.model_default = inv.model_default
    server.args, server.arg_locations, server.unknown_args = inv.args, inv.arg_locations, inv.unknown_args
    server.env.update(inv.env)
    server.env_locations.update(inv.env_locations)
    server.startup_errors.extend(inv.startup_errors)
    server.unchecked.extend(inv.unchecked)
    server.opaque_args = server.opaque_args or inv.opaque_args
    for path, where in inv.config_files:
        if where is not None:
            server.arg_locations.setdefault("config", where)
        server.args.setdefault("config", path or None)
        body = (inv.written or {}).get(path) if path else None
        if body is not None:
            from vramlint.extract.vllm_config import read_written_config

            server.notes.append(read_written_config(server, path, body)[1])
            continue
        server.notes.append(f"--config {path or '(unknown)'}: vLLM reads more arguments from this file, which "
                            "the script names (its settings are not included)")
