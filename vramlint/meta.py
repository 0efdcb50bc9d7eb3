"""vramlint's own findings: about the input and the suppressions, not about a deployment.

Ids at or above VRL100 are reserved for these; rule modules use VRL001-VRL099 (and VRL000 is the finding a
rule module that crashed leaves behind, from ``vramlint.rule``). They are selected, ignored, re-levelled and
suppressed like any rule, and appear in every output format (SARIF carries their descriptors like the others').
"""

from __future__ import annotations

import re

from vramlint.model import Finding, Location, Problem
from vramlint.rule import INTERNAL_RULE_ID, INTERNAL_RULE_NAME, Rule

UNUSED_SUPPRESSION = ("VRL100", "unused-suppression")
MALFORMED_SUPPRESSION = ("VRL101", "malformed-suppression")
INPUT_ERROR = ("VRL102", "input-error")
SERVER_NOTE = ("VRL103", "server-note")

# Server notes that only say where something was found (a ConfigMap that was read, the chart a server was
# rendered from), or only that the vLLM version comes from elsewhere (the budget's sources and VRL009/VRL005
# already say which version was assumed): nothing else is missing, so they are not reported.
_PROVENANCE = re.compile(
    r"^(--config \S+: settings read from (?:ConfigMap|the here-document)|from Helm chart |from kustomization |runtime: |/mnt/models holds "
    r"|KubeAI Model: the image \(and so the vLLM version\)|Ray Serve LLM application: the vLLM version"
    r"|a patch \(no image in this file\)|the vLLM command line is read from the script \S+: ConfigMap "
    r"|variables set from ConfigMaps of the scanned files: )"
    r"|^built from \S+(?: \(stages [^)]*\))?: FROM \S+$"
)

_DOCS = {
    INTERNAL_RULE_ID: (
        INTERNAL_RULE_NAME,
        "error",
        """A rule failed while checking a server, so its verdict on that server is missing.

This is a bug in the rule module (built-in or from `--rules-dir`): the message names the rule, the file and
line where it failed, and the exception. The other rules still ran. Please report it with the input file.
The same finding, without a rule, says that vramlint itself failed while computing a server's budget: the
memory rules did not check that server, the other servers were still checked.
""",
    ),
    UNUSED_SUPPRESSION[0]: (
        UNUSED_SUPPRESSION[1],
        "warning",
        """A suppression that suppresses nothing.

A `# vramlint: ignore[...]` comment, or a `vramlint.dev/ignore` annotation, names a rule that reports no
finding on that line (or the line below the comment), or on that object. Either the problem was fixed and the
suppression can go, or the comment sits on the wrong line and is not doing what it was written for.
Suppressions of rules that are not selected for the file are not reported.

Failing example (VRL001 reports on the `args` line, not on `image`):

```yaml
image: vllm/vllm-openai:v0.10.2  # vramlint: ignore[VRL001] long contexts are required
args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
```

Passing example:

```yaml
image: vllm/vllm-openai:v0.10.2
# vramlint: ignore[VRL001] long contexts are required
args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
```
""",
    ),
    MALFORMED_SUPPRESSION[0]: (
        MALFORMED_SUPPRESSION[1],
        "warning",
        """A `# vramlint:` comment or `vramlint.dev/ignore` annotation that cannot be read.

The form is `# vramlint: ignore[VRL001] reason` (several ids or rule names separated by commas) on the
line of the finding or on the line above it, and `vramlint.dev/ignore: "VRL001,VRL002"` in an object's
annotations. A comment with another shape, an empty list, or an id that names no rule suppresses nothing,
and is reported so that it is not mistaken for a working suppression.

Failing example:

```yaml
# vramlint: ignore VRL001
# vramlint: ignore[VRL1]
```

Passing example:

```yaml
# vramlint: ignore[VRL001,VRL002] capacity planned for 4 concurrent long requests
```
""",
    ),
    INPUT_ERROR[0]: (
        INPUT_ERROR[1],
        "error",
        """A file could not be read as intended, so the servers in it may be missing from the report.

Invalid YAML, a value of the wrong type, a `--config` file that cannot be found: the message says what and
where. So is what the Kubernetes API server refuses in a manifest beside a vLLM server: a required field missing,
an `envFrom` entry that names no source or two (`must specify one of: configMapRef or secretRef`, often a `name:`
written one level out of its `secretRef:`), a Secret whose `data` is not base64 (`$(echo ... | base64)` written into
the file; `$VAR` / `${VAR}` values an envsubst fills, and `<placeholder>` values, are not judged). A key written
twice in one mapping is a warning in a manifest (the API server keeps the last one) and an error in a compose file:
compose-go refuses the whole file at the first duplicate, at any depth (`mapping key "vllm" already defined at line
N`), so no server is read from it and the other duplicates are named in that one error. A file that git-crypt
left encrypted (it begins with git-crypt's `\\0GITCRYPT\\0` header: a checkout not unlocked) is an unknown by
design: a note, said once for all such files of the run with their count (`git-crypt unlock` first to check them).
The rest of the
input is still checked. Fix the file (or exclude it with `exclude` in the
configuration or `--exclude`).

A note of this rule says where vLLM is named but no server could be read. An image is vLLM's by one rule, the
same for this note, for "a custom entrypoint" on a container and for the servers read: `vllm` as a word of the
image's own name (`vllm-openai`, `acme/vllm:2`), not beside a companion's word (proxy, router, gateway, ui, webui,
dashboard, exporter, operator, client, bench...) nor a stand-in's (mock, simulator): a gateway, proxy or UI named
after the vLLM it fronts (`vllm-latency-proxy`, `vllm-manager-ui`) is another program, and gets no note. A shell script named on the command
line gets "the script mentions vLLM but starts no vLLM server vramlint can read" only when one of its commands may
start vLLM: `vllm serve` or `python -m vllm...` in a form vramlint does not read (after an option of a launcher,
`srun`, `mpirun`, `torchrun`, that its table of that launcher's options does not have; the launchers before a
command, `env`, `nice`, `ionice`, `stdbuf`, `taskset`, `chrt`, `numactl`, `sudo`, `gosu`, `srun`, `mpirun`,
`torchrun -m`, `ssh HOST CMD`, tmux's `new-session|new-window|split-window CMD` and `send-keys LINE C-m` (the
pane runs CMD, or LINE at the Enter key), Nsight Systems' `nsys profile|launch` (its options written as its CLI documents
them, `--opt=value` and `-x value`), are read with their own options), a shell string holding one, or a container run of a vLLM image or of an image in a variable, unless
its `--entrypoint` replaces the image's program by another (`python3 probe.py`, `vllm bench serve`, a shell given
a `-c` string without `vllm serve`). A helper that only installs, deploys, queries or benchmarks vLLM (`pip install
vllm`, `kubectl apply`, `helm upgrade`, `docker compose up`, `curl`, `echo`) says nothing: it launches nothing to
check, and the manifests it applies are checked where they are. A `docker run` of a vLLM image sent over ssh
(`ssh HOST "docker run ... IMAGE ..."`) is read as the remote host's server; an ssh command whose remote command
or options are built at run time (`ssh $OPTS HOST "$CMD"`) in a script that names vLLM gets a note on its line
that the remote command is not read.

A note of this rule with the same text at several places (twelve benchmark configs that each say `engine: vllm`, compose files without
their `.env`) is said once a run: on the first place, "said once for N files: ..." naming the others, which are its related
locations (JSON `related_locations`, SARIF `relatedLocations`); each file's reason stays in JSON's `problems`. A place suppressed in
source or in the baseline is neither said nor named.
""",
    ),
}


_DOCS[SERVER_NOTE[0]] = (
    SERVER_NOTE[1],
    "note",
    """Something about a server that the files scanned do not say, so part of it was not checked.

The extractors record what they could not follow: a `--config` file whose ConfigMap is not among the scanned
files, a KServe runtime that is not among them, a model loaded from storage, a value set by a chart that is
not in this file, an environment variable left unset. The note sits on the server's line (or on `--config`)
and says what is missing; scan the other file too (or accept that part as unchecked). Notes that only say
where something was found (a ConfigMap that was read) are not reported. A note that several servers share word for word
(the same operator default on every KubeAI Model) is said once, on the first of them, naming the others as VRL102's notes are;
each server's JSON `notes` still hold it.

Failing example (the ConfigMap holding `config.yaml` is in another file that was not scanned):

```yaml
args: ["--config", "/etc/vllm/config.yaml"]
volumeMounts: [{name: cfg, mountPath: /etc/vllm}]
volumes: [{name: cfg, configMap: {name: vllm-config}}]
```

Passing example: scan the ConfigMap's file as well (`vramlint deploy/`), so its settings are checked.

A server whose model is named only there is summarised once as reading its settings from a `--config` file
that was not read, not as a server that names no model.
""",
)


def meta_rules() -> list[Rule]:
    """Descriptors of vramlint's own findings, shaped like rule modules (with no check function)."""
    out = []
    for rule_id, (name, level, doc) in _DOCS.items():
        text = doc.strip()
        out.append(
            Rule(
                id=rule_id,
                name=name,
                level=level,  # type: ignore[arg-type]
                options={},
                doc=text,
                summary=text.splitlines()[0],
                check=None,
                check_all=None,
                path=__file__,
                builtin=True,
            )
        )
    return out


def input_error(problem: Problem) -> Finding:
    """A scanning problem (invalid YAML, ...) as a finding, so every output format carries it."""
    location = Location(problem.file, problem.line or 1, problem.column or 1)
    return Finding(
        rule_id=INPUT_ERROR[0],
        rule_name=INPUT_ERROR[1],
        level=getattr(problem, "level", None) or "error",
        message=problem.message,
        location=location,
        advice=getattr(problem, "advice", None),
    )


def assessment_failures(assessments) -> list[Finding]:
    """A VRL000 error on each server vramlint failed to assess (its budget is missing, the run went on)."""
    return [
        Finding(
            rule_id=INTERNAL_RULE_ID,
            rule_name=INTERNAL_RULE_NAME,
            level="error",
            message=f"{a.failure}; the memory rules did not check this server (a bug in vramlint, please report "
            "it with this file)",
            location=a.server.location,
            server_key=a.server.key,
            server_id=id(a.server),
        )
        for a in assessments
        if getattr(a, "failure", None)
    ]


def server_notes(servers) -> list[Finding]:
    """Each server's notes (what the files do not say) as one note-level finding on the server's line."""
    out = []
    for server in servers:
        notes = [n for n in server.notes if not _PROVENANCE.match(n)]
        if not notes:
            continue
        location = server.location
        if any(n.startswith("--config") for n in notes) and "config" in server.arg_locations:
            location = server.arg_locations["config"]
        out.append(
            Finding(
                rule_id=SERVER_NOTE[0],
                rule_name=SERVER_NOTE[1],
                level="note",
                message="; ".join(notes),
                location=location,
                server_key=server.key,
                server_id=id(server),
            )
        )
    return out
