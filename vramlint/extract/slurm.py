"""What a Slurm batch script asks of the cluster: its `#SBATCH` directives (never running sbatch).

sbatch(1) reads options from lines that begin with `#SBATCH` before the first command of the script (blank lines
and other comments may come between them; the first other line ends them) and, in the job's environment, sets
SLURM_JOB_NUM_NODES (and its older name SLURM_NNODES) to the number of nodes allocated, SLURM_GPUS_PER_NODE to the
`--gpus-per-node` value when that option is given, and SLURM_GPUS_ON_NODE to the GPUs allocated on the node. A
script's `vllm serve --tensor-parallel-size $SLURM_GPUS_PER_NODE` is read with them. GPUs come from
`--gpus-per-node=[type:]N`, `--gres=gpu[:type]:N` (per node), or `--gpus=[type:]N` / `-G` (for the whole job: per
node only on one node); a node count given as a range (`--nodes=2-4`) is decided when the job starts, so unknown.
sbatch reads long options with getopt_long, so a unique prefix (`--gpus-per-n=2`) is the option; a prefix of
several (`--node`) is refused. A job whose script is no file is read too: `sbatch --wrap "CMD"` (sbatch writes
`#!/bin/sh` and CMD as the script) and `sbatch <<EOF ... EOF` (the script on standard input).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from vramlint.model import Location

# sbatch reads directives only before the first command; no real script has more than a few dozen of them
_MAX_DIRECTIVE_LINES = 2000
_MAX_COUNT = 100_000  # nodes or GPUs per node past this are no cluster's: unknown
_COUNT = re.compile(r"^(?:([A-Za-z][\w.-]*):)?(\d{1,7})$")


@dataclass
class SbatchRequest:
    """The nodes and GPUs per node a batch script's directives ask for (None: not said, or not known)."""

    nodes: int | None = None
    nodes_location: Location | None = None
    gpus_per_node: int | None = None
    gpu_type: str | None = None  # the site's GRES type name (`h100`), as written
    gpus_location: Location | None = None
    evidence: str = ""  # the directives that say the GPUs
    gpus_per_node_option: str | None = None  # the --gpus-per-node value as written (SLURM_GPUS_PER_NODE)
    # a GPU count written in digits but past _MAX_COUNT (`--gres=gpu:<23 digits>`): the option as said, and where
    count_past: tuple[str, Location] | None = None

    def environment(self) -> dict[str, str]:
        """The variables sbatch sets from these directives in the job's environment."""
        env: dict[str, str] = {}
        if self.nodes is not None:
            env["SLURM_JOB_NUM_NODES"] = env["SLURM_NNODES"] = str(self.nodes)
        if self.gpus_per_node_option is not None:
            env["SLURM_GPUS_PER_NODE"] = self.gpus_per_node_option
        if self.gpus_per_node is not None:
            env["SLURM_GPUS_ON_NODE"] = str(self.gpus_per_node)
        return env


def read_sbatch(text: str, display: str, command_line: tuple[tuple[str, str, Location], ...] = ()
                ) -> SbatchRequest | None:
    """The `#SBATCH` directives of ``text``, then the options of the `sbatch` command line that submits it
    (``command_line``: name, value, where; `sbatch_submission`), or None when there are neither. sbatch reads
    the script's directives first and the command line's options over them: an option given on both is the
    command line's."""
    request = SbatchRequest()
    found = False
    total: list[Any] = []  # the last --gpus / -G: (count, type, where, evidence)
    for number, line in enumerate(text.splitlines()[:_MAX_DIRECTIVE_LINES], 1):
        stripped = line.strip()
        if not stripped or (stripped.startswith("#") and not stripped.startswith("#SBATCH")):
            continue
        if not stripped.startswith("#SBATCH"):
            break
        found = True
        words = stripped[len("#SBATCH"):].split("#", 1)[0].split()
        i = 0
        while i < len(words):
            word = words[i]
            name, eq, value = word.partition("=")
            if name.startswith("--"):
                name = long_option(name)[0] or name  # (getopt_long: a unique prefix; an ambiguous one is refused)
            if not eq and name in ("-N", "--nodes", "--gpus-per-node", "--gres", "-G", "--gpus") \
                    and i + 1 < len(words):
                value, i = words[i + 1], i + 1
            elif not eq and re.fullmatch(r"-[NG]\S+", word):
                name, value = word[:2], word[2:]
            i += 1
            _apply(request, total, name, value, Location(display, number, max(line.find(word), 0) + 1), "#SBATCH ")
    for name, value, where in command_line:
        found = True
        _apply(request, total, name, value, where, "sbatch ")
    if not found:
        return None
    if request.gpus_location is None and total:
        count, kind, where, said = total[-1]
        request.evidence = _joined(request.evidence, said)
        request.gpus_location = where
        # --gpus counts the job's GPUs: per node only when the job has one node
        request.gpus_per_node = count if request.nodes == 1 else None
        request.gpu_type = kind
    return request


def _apply(request: SbatchRequest, total: list[Any], name: str, value: str | None, where: Location, said: str
           ) -> None:
    """One option of a directive or of the command line (``said``: how the evidence names where it is from; a
    ``value`` None or holding what the shell left unknown replaces the option's value with an unknown one)."""
    from vramlint.cmdline import has_unknown_mark

    if value is None or has_unknown_mark(value):
        if name in ("-N", "--nodes"):
            request.nodes, request.nodes_location = None, where
        elif name in ("--gpus-per-node", "--gres") and (name == "--gpus-per-node" or request.gpus_per_node_option
                                                        is None):
            request.gpus_per_node, request.gpu_type, request.gpus_location = None, None, where
            request.gpus_per_node_option = None
            request.evidence = _joined(_without(request.evidence, name + "="), f"{said}{name}=(known at run time)")
        elif name in ("-G", "--gpus"):
            total[:] = [(None, None, where, f"{said}--gpus=(known at run time)")]
        return
    if name in ("-N", "--nodes"):
        request.nodes = _count(value)
        request.nodes_location = where
    elif name == "--gpus-per-node":
        count, kind = _typed_count(value)
        if _past_count(value.split(":")[-1]):
            request.count_past = (f"{said}--gpus-per-node={value}", where)
        request.gpus_per_node, request.gpu_type, request.gpus_location = count, kind, where
        request.gpus_per_node_option = value
        request.evidence = _joined(_without(request.evidence, "--gpus-per-node="), f"{said}--gpus-per-node={value}")
    elif name == "--gres":
        gres = _gres_gpus(value)
        if any(_past_count(item.split(":")[-1]) for item in value.split(",") if item.split(":")[0] == "gpu"):
            request.count_past = (f"{said}--gres={value}", where)
        if gres is not None and request.gpus_per_node_option is None:
            request.gpus_per_node, request.gpu_type = gres
            request.gpus_location = where
            request.evidence = _joined(_without(request.evidence, "--gres="), f"{said}--gres={value}")
    elif name in ("-G", "--gpus"):
        count, kind = _typed_count(value)
        total[:] = [(count, kind, where, f"{said}--gpus={value}")]


def _without(evidence: str, option: str) -> str:
    """The evidence without what an option given again replaces (the command line's over a directive)."""
    return "; ".join(part for part in evidence.split("; ") if part and option not in part)


# --- sbatch's command line (sbatch [OPTIONS] SCRIPT [ARGS]) ----------------------------------------------------

# Slurm's options that take no value, or one only as `--name=value` (src/common/slurm_opt.c: `no_argument` and
# `optional_argument`); getopt_long gives every other long option the next word when it has no `=`.
_FLAG_LONG = frozenset("""
async bcast bell compress consolidate-segments contiguous debugger-test disable-status exact exclusive external
external-launcher get-user-env help hold ignore-pbs immediate interactive kill-command kill-on-bad-exit label
multi-prog nice no-allocate no-bell no-kill no-requeue no-shell oom-kill-step overcommit overlap oversubscribe
parsable preserve-env propagate pty quiet quit-on-interrupt reboot requeue resv-ports send-libs spread-job
spread-segments stepmgr test-only unbuffered use-min-nodes usage verbose version wait wait-for-children whole x11
""".split())
# sbatch's short options that take a value (the rest: -h -H -I -k -K -O -Q -s -v -V -W take none)
_VALUE_SHORT = frozenset("AaBbCcDdeFGiJLMmNnopqSTtwx")
_FLAG_SHORT = frozenset("hHIkKOQsvVWEuXlZ")
_READ = ("-N", "--nodes", "--gpus-per-node", "--gres", "-G", "--gpus")


# sbatch's long options (SchedMD/slurm src/common/slurm_opt.c, 284c3b9: the `common_options` with a `set_func` or
# `set_func_sbatch`). sbatch parses them (directives and command line) with getopt_long, which takes any unique
# prefix of one (`--gpus-per-n=2`, `--nodel`); a prefix of several is refused ("option is ambiguous").
_SBATCH_LONG = frozenset("""
account acctg-freq array autocomplete batch bb bbf begin chdir cluster cluster-constraint clusters comment
consolidate-segments constraint container container-id context contiguous core-spec cores-per-socket cpu-freq cpus-
per-gpu cpus-per-task deadline delay-boot dependency distribution error exclude exclusive export export-file external
extra extra-node-info get-user-env gid gpu-bind gpu-freq gpus gpus-per-node gpus-per-socket gpus-per-task gres gres-
flags help hint hold ignore-pbs input job-name kill-on-invalid-dep licenses mail-type mail-user mcs-label mem mem-bind
mem-per-cpu mem-per-gpu mem-update mincpus network nice no-kill no-requeue nodefile nodelist nodes ntasks ntasks-per-
core ntasks-per-gpu ntasks-per-node ntasks-per-socket ntasks-per-tres oom-kill-step open-mode output overcommit
oversubscribe parsable partition prefer priority profile propagate qos quiet reboot requeue reservation resources
resv-ports runtime segment signal sockets-per-node spread-job spread-segments stepmgr switches tasks-per-node test-
only thread-spec threads-per-core time time-min tmp tres-bind tres-per-task uid usage use-min-nodes verbose version
wait wait-all-nodes wckey wrap
""".split())


def long_option(name: str) -> tuple[str | None, bool]:
    """The sbatch long option ``name`` (with its `--`) stands for, as getopt_long reads it, and whether it is
    ambiguous (a prefix of several: sbatch refuses it). (None, False): no option of sbatch's."""
    bare = name[2:]
    if bare in _SBATCH_LONG:
        return name, False
    hits = [o for o in _SBATCH_LONG if o.startswith(bare)] if bare else []
    if len(hits) == 1:
        return "--" + hits[0], False
    return None, len(hits) > 1


@dataclass
class SbatchSubmission:
    """An `sbatch` command line: the options that decide the job's GPUs and nodes (name, value, where), the
    variables `--export` gives the job, and the job script it names (None: `--wrap`, stdin, or not known)."""

    options: tuple[tuple[str, str, Location], ...]
    exported: dict[str, str | None]
    script: Any  # the Token naming the script
    args: list[Any]
    unknown: str | None = None  # why the script is not known: an option known only at run time, or not Slurm's
    wrap: Any = None  # the Token of `--wrap CMD`: sbatch's job script is `#!/bin/sh` and CMD (sbatch.c _script_wrap)


def sbatch_submission(words: list[Any]) -> SbatchSubmission | None:
    """``words`` after `sbatch` (Tokens): the submission they make, or None for `--help` / `--version` /
    `--usage` (no job). `--wrap CMD` is the job's command: no script follows (sbatch refuses both)."""
    options: list[tuple[str, str, Location]] = []
    exported: dict[str, str | None] = {}
    wrap = None
    i = 0
    while i < len(words):
        word = words[i]
        text = word.text
        if text is None:
            return SbatchSubmission(tuple(options), exported, None, [], "an option known only at run time")
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        value: str | None = None
        if text.startswith("--"):
            name, eq, value = text.partition("=")
            full, ambiguous = long_option(name)
            if ambiguous:
                return SbatchSubmission(tuple(options), exported, None, [], (
                    f"`{name}` is a prefix of several of sbatch's options, which sbatch refuses (\"option is "
                    "ambiguous\")"))
            name = full or name
            if name in ("--help", "--usage", "--version"):
                return None
            if name == "--wrap":
                if not eq and i + 1 >= len(words):
                    return None  # sbatch refuses `--wrap` with no command
                wrap = _wrap_token(word, value) if eq else words[i + 1]
                i += 1 if eq else 2
                continue
            if not eq:
                value = None
                if name[2:] not in _FLAG_LONG:
                    value = words[i + 1].text if i + 1 < len(words) else None
                    i += 1
        else:
            name = text[:2]
            if text[1] in _VALUE_SHORT:
                if len(text) > 2:
                    value = text[2:]
                else:
                    value = words[i + 1].text if i + 1 < len(words) else None
                    i += 1
            elif text[1] not in _FLAG_SHORT:
                return SbatchSubmission(tuple(options), exported, None, [], f"`{text}` is no option of sbatch's")
            elif name in ("-h", "-V"):
                return None
        i += 1
        if name in _READ:
            options.append((name, value, word.location))  # a value None: known only at run time
        elif name == "--export" and value is not None:
            exported.update(_exported(value))
    if wrap is not None:
        return SbatchSubmission(tuple(options), exported, None, list(words[i:]), wrap=wrap)
    if i >= len(words):
        return SbatchSubmission(tuple(options), exported, None, [], "no script named (sbatch reads it from stdin)")
    return SbatchSubmission(tuple(options), exported, words[i], list(words[i + 1:]))


def _wrap_token(word: Any, value: str) -> Any:
    """The command of `--wrap=CMD` as a Token of its own, placed after the `=`."""
    from dataclasses import replace

    loc = word.location
    if loc is None:
        return replace(word, text=value)
    return replace(word, text=value, location=Location(loc.file, loc.line, loc.column + len("--wrap="),
                                                       yaml_path=loc.yaml_path))


def _exported(value: str) -> dict[str, str | None]:
    """The variables `--export=[ALL|NONE,]NAME=value,...` sets in the job (a bare NAME passes the submitting
    shell's, not known here; so is a value holding what the shell left unknown)."""
    from vramlint.cmdline import has_unknown_mark

    out: dict[str, str | None] = {}
    for item in value.split(","):
        name, eq, val = item.partition("=")
        if eq and re.fullmatch(r"[A-Za-z_]\w*", name):
            out[name] = None if has_unknown_mark(val) else val
    return out


def _joined(evidence: str, more: str) -> str:
    return f"{evidence}; {more}" if evidence else more


def _count(value: str) -> int | None:
    if not re.fullmatch(r"\d{1,7}", value or ""):
        return None  # a range (2-4) or anything else: the allocation decides
    number = int(value)
    return number if 0 < number <= _MAX_COUNT else None


def _past_count(value: str) -> bool:
    """A count written in digits that is past any cluster's (more digits than _COUNT reads, or over _MAX_COUNT)."""
    return value.isdigit() and value.isascii() and (len(value) > 7 or int(value) > _MAX_COUNT)


def _typed_count(value: str) -> tuple[int | None, str | None]:
    m = _COUNT.match(value or "")
    if m is None:
        return None, None
    number = int(m.group(2))
    return (number if 0 < number <= _MAX_COUNT else None), m.group(1)


def _gres_gpus(value: str) -> tuple[int | None, str | None] | None:
    """The GPUs of a `--gres` list (`gpu:2`, `gpu:a100:4`, `gpu`, with other resources beside), or None."""
    for item in (value or "").split(","):
        parts = item.split(":")
        if parts[0] != "gpu":
            continue
        if len(parts) == 1:
            return 1, None
        count = _count(parts[-1])
        kind = parts[1] if len(parts) == 3 else None
        if len(parts) == 2 and count is None and not (parts[1].isdigit() and parts[1].isascii()):
            return 1, parts[1]  # gpu:TYPE alone is one GPU of that type (digits are a count, not a type)
        return count, kind
    return None
