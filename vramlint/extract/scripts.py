"""Follow a container's command into a shell script that is in the scanned files, and read the vLLM server it
starts (never running it).

A command runs a script when it is `bash|sh [options] PATH [ARGS]`, a path ending in `.sh` or starting with
`./`, or such a command inside `bash -c "..."`. The script's text comes from:

- a ConfigMap key mounted at the script's path (`podspec.configmap_mounts`), when the ConfigMap is among the
  scanned files (joined after every file is read: `script_refs.resolve_script_refs`);
- for compose, the file the path names beside the compose file (or through a bind mount), when `vramlint.fsread`
  reads it (a regular file inside the scanned tree; `read_script_file`, the one place a script is read).

The script is then read like a `sh -c SCRIPT PATH ARGS...` command line (cmdline's shell reading), so `vllm
serve ...` and `python -m vllm.entrypoints.openai.api_server ...` in it are found with positions in the script.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Any

from vramlint.lean_dataclass import dataclass
from vramlint.model import Location

MAX_SCRIPT_BYTES = 256 * 1024  # a launcher script; anything larger is not one
_SHELLS = {"sh", "bash", "dash", "zsh", "ash", "ksh"}
_SKIP_WORDS = {"exec", "nohup", "tini", "dumb-init", "--", "time", "setsid", "gosu", "su-exec", "env", "/usr/bin/env"}
_SCRIPT_PATH = re.compile(r"^(?:\.{1,2}/|/)?[\w.@+-]+(?:/[\w.@+-]+)*$")

UNKNOWN_DIR = "\0unknown"  # `cd` to a folder known only at run time (`cd $DIR`, `cd ~`, `cd -`, `cd` alone)


@dataclass
class ScriptCall:
    path: Any  # Token naming the script
    args: list[Any]  # the words after it ($1, $2, ...)
    # the folder the `cd`s before it in the same `sh -c` script moved to (several joined; None: none ran), which a
    # relative path is opened from; UNKNOWN_DIR when one of them goes to a folder known only at run time
    cwd: str | None = None

    def path_in_container(self, working_dir: str | None) -> str | None:
        """The absolute path the shell opens for the script: a relative one from the `cd` before it, else from
        the container's working directory ``working_dir`` (Kubernetes' `workingDir`: the image's WORKDIR when
        None). None when that folder is not known from the files."""
        path = self.path.text or ""
        if not path.startswith("/"):
            base = self.cwd or ""
            if base == UNKNOWN_DIR:
                return None
            if not base.startswith("/"):
                if not working_dir or not working_dir.startswith("/"):
                    return None
                base = posixpath.join(working_dir, base)
            path = posixpath.join(base, path)
        return posixpath.normpath(path)


def script_call(words: list[Any], depth: int = 0) -> ScriptCall | None:
    """The script a command line runs (see the module docstring), or None."""
    i = 0
    while i < len(words) and words[i].text is not None and (
            words[i].text in _SKIP_WORDS or re.match(r"^[A-Za-z_]\w*=", words[i].text)):
        i += 1
    if i >= len(words) or words[i].text is None or depth > 2:
        return None
    first = words[i].text
    if os.path.basename(first) in _SHELLS:
        j = i + 1
        while j < len(words) and words[j].text is not None and words[j].text.startswith(("-", "+")):
            flag = words[j].text
            if flag[0] == "-" and not flag.startswith("--") and "c" in flag[1:]:
                script = words[j + 1] if j + 1 < len(words) else None
                return _inline_script_call(script, depth) if script is not None else None
            j += 2 if flag in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file") else 1
        if j < len(words) and words[j].text is not None and _SCRIPT_PATH.match(words[j].text):
            return ScriptCall(words[j], list(words[j + 1:]))
        return None
    if _SCRIPT_PATH.match(first) and (first.endswith(".sh") or first.startswith("./")):
        return ScriptCall(words[i], list(words[i + 1:]))
    return None


def _inline_script_call(script: Any, depth: int) -> ScriptCall | None:
    """A script run from inside `sh -c "..."`: the first simple command of it that runs one."""
    from vramlint.cmdline import split_token

    if script.text is None:
        return None
    command: list[Any] = []
    cwd: str | None = None
    piped = False  # the command is a stage of a pipeline: a subshell, whose `cd` the next command does not see
    for word in split_token(script) + [None]:
        if word is None or word.op:
            found = script_call(command, depth + 1) if command else None
            if found is not None:
                found.cwd = cwd if found.cwd is None else _joined_dir(cwd, found.cwd)
                return found
            ends_pipe = word is not None and word.text == "|"
            if command and command[0].text == "cd" and not piped and not ends_pipe:
                cwd = _joined_dir(cwd, _cd_target(command[1:]))
            piped = ends_pipe
            command = []
        else:
            command.append(word)
    return None


def _cd_target(words: list[Any]) -> str:
    """The folder `cd WORDS` moves to, as written (UNKNOWN_DIR when only the run knows it)."""
    words = [w for w in words if w.text not in ("-L", "-P", "-e", "--")]
    if len(words) != 1 or words[0].text is None or words[0].text in ("-", "") or words[0].text.startswith("~") \
            or "$" in words[0].text or "`" in words[0].text:
        return UNKNOWN_DIR
    return words[0].text


def _joined_dir(cwd: str | None, target: str) -> str:
    if target == UNKNOWN_DIR or target.startswith("/") or cwd is None:
        return target
    if cwd == UNKNOWN_DIR:
        return cwd
    return posixpath.join(cwd, target)


def script_token(text: str, file: str) -> Any:
    """The whole text of a script file as one Token whose words point at their own lines of ``file``."""
    from vramlint.cmdline import Token

    # a literal block whose content starts on line 1, column 1 (see cmdline._Positions)
    return Token(text, Location(file, 0, 1), block="|", indent=1, lines=text.splitlines())


def script_command(call: ScriptCall, script: Any) -> list[Any]:
    """The command line that reads like running ``script``: `sh -c SCRIPT PATH ARGS...` ($0 is the path)."""
    from vramlint.cmdline import Token

    return [Token("sh", call.path.location), Token("-c", call.path.location), script, call.path, *call.args]


def read_script_file(host_path: str) -> tuple[str | None, str | None]:
    """(text, None) of a script in the repository, or (None, why it is not read): through `vramlint.fsread`
    (a regular file inside the scanned tree), at most MAX_SCRIPT_BYTES. The one place a followed script is
    read from disk."""
    from vramlint.fsread import Refusal, read_text

    text = read_text(host_path, limit=MAX_SCRIPT_BYTES)
    if isinstance(text, Refusal):
        return None, text.reason
    return text, None


# --- Kubernetes: scripts mounted from ConfigMaps, joined after every file is read -----------------------------


@dataclass
class ScriptRef:
    """A container that runs a script, to be read once the ConfigMaps of every scanned file are known."""

    doc: Any
    ctx: Any  # podspec.ObjectContext
    hit: Any  # podspec.PodSpecHit
    index: int
    container: Any
    call: ScriptCall
    location: Location  # the container
    shm_known: bool
    hidden: str | None  # what to say if the script cannot be read (the container mentions vLLM), else None
    container_path: str | None = None  # where the container is when it is not containers[index] (a sidecar)


# --- Launchers an image runs, read from the repository (compose services and Dockerfiles read alone) -----------


def launcher_invocation(call: ScriptCall, text: str, display: str, image: str | None, env: dict[str, str | None],
                        copied: str | None, context_note: str = "") -> tuple[Any, str | None, str | None]:
    """(invocation, note, None) of the vLLM server the script ``text`` (the file at ``display``) starts when run
    as ``call``; else (None, None, why it reads no server), `why` None when the script does not mention vLLM.
    ``copied``: the COPY/ADD that put it in the image (None: the container runs the image's copy, taken to be
    this file); ``context_note`` is added to the note (an assumed build context)."""
    from vramlint.cmdline import find_vllm_invocation, runs_its_arguments

    path = call.path.text
    inv = find_vllm_invocation(script_command(call, script_token(text, display)), [], image, env)
    if inv is None:
        if "vllm" not in text.lower():
            return None, None, None
        return None, None, (f"the script {path} ({display}) mentions vLLM but starts no vLLM server vramlint can "
                            "read (a launcher that builds the command at run time); not checked")
    where = inv.location or inv.model_location
    if runs_its_arguments(text) and where is not None and where.file != display:
        return inv, (f"the script {path} ({display}) runs the command line it is given (`exec \"$@\"`): the vLLM "
                     "command line is the service's own; the container runs the image's copy of the script, taken "
                     "to be this file"), None
    if copied is not None:
        return inv, (f"the vLLM command line is read from the script {path} ({display}), which the image has from "
                     f"{copied}{context_note}"), None
    return inv, (f"the vLLM command line is read from the script {path} ({display}); the container runs the "
                 "image's copy of it, taken to be this file"), None
