"""GitHub Actions workflows and composite actions: a step's `run:` is a shell script the runner runs.

A workflow (`.github/workflows/*.yml`: `on:` and `jobs.<id>.steps`) and a composite action (`action.yml`: `runs:`
with `using: composite` and `runs.steps`) run each step's `run:` with the job's shell (bash on Linux runners), after
GitHub has replaced every `${{ <expression> }}` in it by the expression's value, as text (GitHub's "Contexts" and
"Expressions" documentation). Of those values the file gives: an input's `default` (a composite action's `inputs`,
a workflow's `on.workflow_dispatch` / `on.workflow_call` inputs), a variable of `env:` (the workflow's, the job's,
the step's, the nearer one winning) and a matrix variable with a single value; any other expression (a matrix of
several values, a secret, a step's output) is known only when the job runs. A step's `env:` is also the script's
environment.

The vLLM a job runs is the one it installs: `pip install vllm==X`, or vLLM's repository checked out at a release tag
(`actions/checkout` of vllm-project/vllm with `ref: vX.Y.Z`) and built; a build with `VLLM_TARGET_DEVICE=cpu` is
vLLM's CPU build (setup.py builds the CPU backend for that target). A `docker exec CONTAINER COMMAND` in a step runs
COMMAND in a container an earlier step of the job started (`docker run -d --name CONTAINER IMAGE sleep infinity`: a
detached container keeps running after its step), with that container's image, devices and /dev/shm; else in a
container the file does not start (said). A step run only `if:` a condition holds (a retry after a failed start)
restarts the server an unconditional step of the job starts, so it is one server: a job's servers are those of its
unconditional steps, or the first conditional one when it has no other.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from vramlint.model import Location, Problem, Server
from vramlint.versions import pip_installed_vllm
from vramlint.yamlload import join_path, key_location

_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_CONTEXT_NAME = re.compile(r"^\s*(inputs|github\.event\.inputs|env|matrix)\.([A-Za-z_][\w-]*)\s*$")
_RELEASE_TAG = re.compile(r"^v?(\d+\.\d+\.\d+(?:\.post\d+|\.\d+)?)$")
_CPU_TARGET = re.compile(r"\bVLLM_TARGET_DEVICE=[\"']?cpu\b")


def is_github_actions(doc: Any) -> bool:
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict):
        return False
    runs = data.get("runs")
    if isinstance(runs, dict) and str(runs.get("using")) == "composite" and isinstance(runs.get("steps"), list):
        return True
    jobs = data.get("jobs")
    if not isinstance(jobs, dict) or not jobs or not ("on" in data or True in data):  # YAML 1.1 reads `on` as true
        return False
    return any(isinstance(job, dict) and isinstance(job.get("steps"), list) for job in jobs.values())


def extract_github_actions(doc: Any) -> tuple[list[Server], list[Problem]]:
    data = doc.data
    servers: list[Server] = []
    problems: list[Problem] = []
    runs = data.get("runs")
    if isinstance(runs, dict) and isinstance(runs.get("steps"), list):
        name = data.get("name")
        jobs = [(str(name) if isinstance(name, str) and name else "action", runs, "runs", "GitHub composite action")]
        inputs = data.get("inputs")
    else:
        jobs = [(str(job_id), job, join_path("jobs", str(job_id)), "GitHub Actions job")
                for job_id, job in data["jobs"].items() if isinstance(job, dict)]
        on = data.get("on", data.get(True))
        inputs = {}
        if isinstance(on, dict):
            for trigger in ("workflow_dispatch", "workflow_call"):
                event = on.get(trigger)
                if isinstance(event, dict) and isinstance(event.get("inputs"), dict):
                    inputs.update(event["inputs"])
    defaults = {str(k): _scalar(v.get("default")) for k, v in (inputs or {}).items() if isinstance(v, dict)}
    workflow_env = _env_map(data.get("env"), {"inputs": defaults, "env": {}, "matrix": {}})
    for job_name, job, path, kind in jobs:
        servers += _job_servers(doc, job_name, job, path, kind, defaults, workflow_env, problems)
    return servers, problems


def _job_servers(doc: Any, job_name: str, job: dict, path: str, kind: str, defaults: dict[str, str | None],
                 workflow_env: dict[str, str | None], problems: list[Problem]) -> list[Server]:
    from vramlint.cmdline import Token, find_vllm_invocation, yaml_token
    from vramlint.extract.podspec import apply_invocation

    file = doc.file
    strategy = job.get("strategy")
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    contexts: dict[str, dict[str, str | None]] = {
        "inputs": defaults, "env": dict(workflow_env), "matrix": _matrix_values(matrix)}
    contexts["env"].update(_env_map(job.get("env"), contexts))
    version: tuple[str, str] | None = None
    cpu_build: str | None = None
    unconditional: list[Server] = []
    conditional: list[Server] = []
    spath = join_path(path, "steps")
    started: dict[str, list[Any]] = {}  # container name -> the words of the `docker run` that started it
    for k, step in enumerate(job.get("steps") or []):
        if not isinstance(step, dict):
            continue
        step_path = join_path(spath, k)
        env = dict(contexts["env"])
        env.update(_env_map(step.get("env"), contexts))
        step_contexts = dict(contexts, env=env)
        checked_out = _checked_out_release(step, step_contexts)
        if checked_out is not None:
            version = (checked_out, f"the job checks out vllm-project/vllm at {checked_out} and builds it "
                                    f"({file}:{_line(file, step, step_path)})")
        run = step.get("run")
        if not isinstance(run, str):
            continue
        if _CPU_TARGET.search(run) or env.get("VLLM_TARGET_DEVICE") == "cpu":
            cpu_build = f"vLLM built with VLLM_TARGET_DEVICE=cpu ({file}:{_line(file, step, step_path)})"
        pin = pip_installed_vllm(run)
        if pin is not None:
            version = (pin, f"the job installs vllm=={pin} ({file}:{_line(file, step, step_path)})")
        token = yaml_token(file, step, "run", join_path(step_path, "run"), doc.lines)
        script = dataclasses.replace(token, text=_substitute(run, step_contexts))
        start = key_location(file, step, "run", join_path(step_path, "run")) or Location(file, 1, 1)
        invocation = find_vllm_invocation([Token("bash", start), Token("-c", start), script], [], None,
                                          {n: v for n, v in env.items()})
        # the containers the job's steps start (`docker run -d --name NAME IMAGE sleep infinity`) run on the
        # runner for the rest of the job: a later step's `docker exec NAME vllm serve ...` runs in them
        execs, exec_problems = _container_exec_servers(script, file, env, started) \
            if any(cli in run for cli in ("docker", "podman", "nerdctl")) else ([], [])
        if invocation is None:
            problems.extend(exec_problems)
            for server in execs:
                server.source_format, server.kind = "github-actions", f"{kind} (docker exec)"
                if version is not None and server.image is None:
                    server.notes.append(f"{version[1]}: the vLLM in the container may be another")
                (conditional if "if" in step else unconditional).append(server)
            continue
        location = Location(file, start.line, start.column, yaml_path=join_path(step_path, "run"))
        server = Server(file=file, location=location, source_format="github-actions", kind=kind, name=job_name)
        server.env = {n: v for n, v in env.items()}
        apply_invocation(server, invocation)
        problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
        if version is not None:
            server.vllm_version, server.vllm_version_source = version
        server.cpu_build = cpu_build
        (conditional if "if" in step else unconditional).append(server)
    return unconditional or conditional[:1]


def _container_exec_servers(script: Any, file: str, env: dict[str, str | None], started: dict[str, list[Any]]
                            ) -> tuple[list[Server], list[Problem]]:
    """The servers a step's `docker exec` commands start (its `docker run`s are read by find_vllm_invocation)
    and what their reading says, ``started`` updated with the containers the step names."""
    from vramlint.extract.shell_scripts import container_commands

    found: list[Problem] = []
    servers = [s for s in container_commands(script, file, found, env, started) if s.kind == "docker exec"]
    return servers, (found if servers else [])


def _substitute(text: str, contexts: dict[str, dict[str, str | None]]) -> str:
    """``text`` with each `${{ }}` replaced as GitHub does, by its value when the file gives it; otherwise by an
    unknown marker as wide as the expression (its words are unknown, the positions after it stay)."""
    from vramlint.cmdline import UNKNOWN_MARK

    def value(m: re.Match) -> str:
        known = _expression_value(m.group(1), contexts)
        return known if known is not None else UNKNOWN_MARK * len(m.group(0))

    return _EXPRESSION.sub(value, text) if "${{" in text else text


def _expression_value(expression: str, contexts: dict[str, dict[str, str | None]]) -> str | None:
    m = _CONTEXT_NAME.match(expression)
    if m is None:
        return None
    context = "inputs" if m.group(1) == "github.event.inputs" else m.group(1)
    return contexts.get(context, {}).get(m.group(2))


def _env_map(env: Any, contexts: dict[str, dict[str, str | None]]) -> dict[str, str | None]:
    from vramlint.cmdline import UNKNOWN_MARK

    if not isinstance(env, dict):
        return {}
    out: dict[str, str | None] = {}
    for name, raw in env.items():
        text = _scalar(raw)
        if text is not None and "${{" in text:
            text = _substitute(text, contexts)
            text = None if UNKNOWN_MARK in text else text
        out[str(name)] = text
    return out


def _matrix_values(matrix: Any) -> dict[str, str | None]:
    """A matrix variable with a single value is known; one of several values is each job's own."""
    if not isinstance(matrix, dict):
        return {}
    out: dict[str, str | None] = {}
    for name, values in matrix.items():
        if name in ("include", "exclude"):
            continue
        if isinstance(values, list) and len(values) == 1:
            out[str(name)] = _scalar(values[0])
        elif not isinstance(values, (list, dict)):
            out[str(name)] = None  # an expression (`${{ fromJSON(...) }}`): known when the workflow runs
    return out


def _checked_out_release(step: dict, contexts: dict[str, dict[str, str | None]]) -> str | None:
    """The vLLM release a step checks out (`actions/checkout` of vllm-project/vllm at a release tag), or None."""
    uses = step.get("uses")
    with_ = step.get("with")
    if not isinstance(uses, str) or not uses.startswith("actions/checkout@") or not isinstance(with_, dict):
        return None
    repository = _scalar(with_.get("repository"))
    ref = _scalar(with_.get("ref"))
    if repository is None or repository.strip().lower() != "vllm-project/vllm" or ref is None:
        return None
    ref = _substitute(ref, contexts).strip()
    m = _RELEASE_TAG.match(ref)
    return m.group(1) if m else None


def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _line(file: str, step: dict, path: str) -> int:
    from vramlint.yamlload import node_location

    loc = node_location(file, step, path)
    return loc.line if loc is not None else 1
