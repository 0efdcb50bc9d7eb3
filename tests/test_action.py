"""The composite action (action.yml): its metadata, its security rules, and its steps run as a runner runs them.

A small runner stands in for GitHub's: it evaluates the `${{ }}` expressions that appear in `env:`, `if:`,
`with:` and `outputs:` (contexts inputs, github, runner, steps; the status functions; ==, !=, &&, ||, !),
runs each `run:` step with bash as GitHub's `shell: bash` does (`bash --noprofile --norc -eo pipefail`),
with its own GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and records the `uses:` steps it cannot run
(setup-python, upload-sarif) with their evaluated condition and inputs. Composite actions get no INPUT_*
variables on a real runner, so none are set here either: inputs reach the scripts through `env:` only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
ACTION_FILE = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def load_action() -> dict:
    return YAML(typ="safe").load(ACTION_FILE.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------------------------
# Expression evaluator (the subset of GitHub's expression language that action.yml uses)

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||<=|>=|[!<>().\[\],])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


class ExpressionError(ValueError):
    pass


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExpressionError(f"cannot read expression at {text[pos:]!r}")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _truthy(value: Any) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value == value and value != 0  # NaN is falsy
    if isinstance(value, str):
        return value != ""
    return True


def _to_number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        if value.strip() == "":
            return 0.0
        try:
            return float(value)
        except ValueError:
            return float("nan")
    return float("nan")


def _equal(a: Any, b: Any) -> bool:
    # GitHub: same type compares directly (strings ignoring case); different types are compared as numbers.
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    if type(a) is type(b):
        return a == b
    return _to_number(a) == _to_number(b)


def to_string(value: Any) -> str:
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


class _Parser:
    def __init__(self, text: str, context: dict, status: dict):
        self.toks = _tokens(text)
        self.i = 0
        self.context = context
        self.status = status

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise ExpressionError(f"expected {value!r}, got {tok!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise ExpressionError(f"unexpected {self.peek()!r}")
        return value

    def or_(self) -> Any:
        left = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            left = left if _truthy(left) else right
        return left

    def and_(self) -> Any:
        left = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.cmp()
            left = right if _truthy(left) else left
        return left

    def cmp(self) -> Any:
        left = self.unary()
        tok = self.peek()
        if tok in (("op", "=="), ("op", "!=")):
            self.take()
            right = self.unary()
            same = _equal(left, right)
            return same if tok[1] == "==" else not same
        return left

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not _truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text)
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind != "name":
            raise ExpressionError(f"unexpected {text!r}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == ("op", "("):
            self.take("(")
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take(",")
            self.take(")")
            return self.call(text, args)
        if text not in self.context:
            raise ExpressionError(f"unknown context {text!r}")
        value: Any = self.context[text]
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == ".":
                key = self.take()[1]
            else:
                key = to_string(self.or_())
                self.take("]")
            value = _property(value, key)
        return value

    def call(self, name: str, args: list) -> Any:
        failed = self.status["failed"]
        if name == "always":
            return True
        if name == "success":
            return not failed
        if name == "failure":
            return failed
        if name == "cancelled":
            return False
        if name == "contains":
            hay, needle = args
            if isinstance(hay, list):
                return any(_equal(x, needle) for x in hay)
            return to_string(needle).lower() in to_string(hay).lower()
        raise ExpressionError(f"function {name}() is not supported by this test runner")


def _property(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        for k, v in value.items():
            if k.lower() == key.lower():  # contexts are case-insensitive
                return v
    return None


def evaluate(expression: str, context: dict, status: dict | None = None) -> Any:
    return _Parser(expression, context, status or {"failed": False}).parse()


def interpolate(text: Any, context: dict, status: dict | None = None) -> str:
    """A YAML value with `${{ }}` parts: each part evaluated and turned into its string form."""
    if not isinstance(text, str):
        return to_string(text)
    return EXPRESSION.sub(lambda m: to_string(evaluate(m.group(1), context, status)), text)


def condition(text: Any, context: dict, status: dict) -> bool:
    """A step's `if:`: an expression with or without `${{ }}`; success() is implied without a status function."""
    if text is None:
        return not status["failed"]
    if isinstance(text, bool):
        return text and not status["failed"]
    body = text.strip()
    m = re.fullmatch(r"\$\{\{(.*)\}\}", body, re.S)
    if m:
        body = m.group(1)
    if not re.search(r"\b(always|success|failure|cancelled)\s*\(", body):
        body = f"success() && ({body})"
    return _truthy(evaluate(body, context, status))


# ---------------------------------------------------------------------------------------------------------------
# Runner


@dataclass
class ActionRun:
    outputs: dict[str, str]
    steps: dict[str, dict]
    summary: str
    log: str
    failed: bool
    not_run_uses: list[dict] = field(default_factory=list)  # `uses:` steps: what a runner would have run
    executed: list[str] = field(default_factory=list)


def parse_output_file(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT syntax: `name=value` lines and `name<<DELIM` ... `DELIM` blocks."""
    out: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            i += 1
            while lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            out[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        elif line.strip():
            raise AssertionError(f"invalid GITHUB_OUTPUT line: {line!r}")
        i += 1
    return out


def run_action(
    inputs: dict[str, str],
    *,
    workspace: Path,
    runner_temp: Path,
    action_path: Path,
    github: dict | None = None,
    reuse_steps: dict[str, dict] | None = None,
    extra_env: dict[str, str] | None = None,
) -> ActionRun:
    action = load_action()
    declared = action.get("inputs", {})
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs not declared by action.yml: {unknown}"
    input_values = {name: to_string(spec.get("default", "")) for name, spec in declared.items()}
    input_values.update(inputs)
    github_ctx = {
        "action_path": str(action_path),
        "workspace": str(workspace),
        "event_name": "push",
        "repository": "example/deployments",
        "event": {},
        "token": "",
    }
    github_ctx.update(github or {})
    context: dict[str, Any] = {
        "inputs": input_values,
        "github": github_ctx,
        "runner": {"temp": str(runner_temp), "os": "Linux"},
        "steps": {},
        "env": {},
    }
    status = {"failed": False}
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "RUNNER_"))}
    # The runner's Python before setup-python: this test's interpreter first on PATH.
    base_env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + base_env.get("PATH", "")
    base_env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_ACTION_PATH": str(action_path),
            "GITHUB_EVENT_NAME": github_ctx["event_name"],
            "GITHUB_REPOSITORY": github_ctx["repository"],
            "RUNNER_TEMP": str(runner_temp),
            "RUNNER_OS": "Linux",
            "CI": "true",
        }
    )
    base_env.update(extra_env or {})
    result = ActionRun(outputs={}, steps=context["steps"], summary="", log="", failed=False)
    files = runner_temp / "_runner_files"
    files.mkdir(parents=True, exist_ok=True)
    for index, step in enumerate(action["runs"]["steps"]):
        step_id = step.get("id") or f"__step{index}"
        if reuse_steps and step_id in reuse_steps:
            context["steps"][step_id] = reuse_steps[step_id]
            continue
        runs = condition(step.get("if"), context, status)
        if "uses" in step:
            with_values = {k: interpolate(v, context, status) for k, v in (step.get("with") or {}).items()}
            result.not_run_uses.append({"id": step_id, "uses": step["uses"], "would_run": runs, "with": with_values})
            context["steps"][step_id] = {"outputs": {}, "outcome": "success" if runs else "skipped"}
            continue
        if not runs:
            context["steps"][step_id] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
            continue
        assert step.get("shell") == "bash", f"step {step_id}: this runner only runs bash steps"
        env = dict(base_env)
        for key, value in (step.get("env") or {}).items():
            env[key] = interpolate(value, context, status)
        output_file = files / f"output-{index}"
        summary_file = files / f"summary-{index}"
        output_file.write_text("")
        summary_file.write_text("")
        env["GITHUB_OUTPUT"] = str(output_file)
        env["GITHUB_STEP_SUMMARY"] = str(summary_file)
        script = files / f"step-{index}.sh"
        script.write_text(step["run"], encoding="utf-8")
        cwd = workspace / step["working-directory"] if step.get("working-directory") else workspace
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
        )
        result.executed.append(step_id)
        result.log += f"--- {step.get('name', step_id)} (exit {proc.returncode})\n{proc.stdout}{proc.stderr}"
        outcome = "success" if proc.returncode == 0 else "failure"
        context["steps"][step_id] = {"outputs": parse_output_file(output_file), "outcome": outcome}
        result.summary += summary_file.read_text(encoding="utf-8")
        if proc.returncode != 0 and not step.get("continue-on-error"):
            status["failed"] = True
    for name, spec in (action.get("outputs") or {}).items():
        result.outputs[name] = interpolate(spec["value"], context, status)
    result.failed = status["failed"]
    return result


# ---------------------------------------------------------------------------------------------------------------
# Static checks


def _vendored_schema(name: str) -> dict:
    from importlib.resources import files

    return json.loads(files("check_jsonschema.builtin_schemas.vendor").joinpath(name).read_text(encoding="utf-8"))


def test_action_yml_is_valid_against_the_github_action_schema():
    import jsonschema

    schema = _vendored_schema("github-actions.json")
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(load_action()), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def test_schema_check_is_not_vacuous():
    import jsonschema

    schema = _vendored_schema("github-actions.json")
    broken = load_action()
    broken["runs"]["steps"][1].pop("shell")
    assert list(jsonschema.validators.validator_for(schema)(schema).iter_errors(broken))


def test_no_expression_is_spliced_into_a_script():
    for step in load_action()["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], f"step {step.get('name')!r} splices an expression into its script"
            assert "INPUT_" not in step["run"], "composite actions get no INPUT_* variables"


def test_every_run_step_names_its_shell_and_every_input_is_used():
    action = load_action()
    steps = action["runs"]["steps"]
    for step in steps:
        if "run" in step:
            assert step.get("shell") in ("bash", "sh", "pwsh", "python")
    text = ACTION_FILE.read_text(encoding="utf-8")
    for name in action["inputs"]:
        assert f"inputs.{name} " in text or f"inputs.{name}}}" in text, f"input {name} is declared but never used"
    for spec in action["outputs"].values():
        assert EXPRESSION.fullmatch(spec["value"].strip())


def test_third_party_actions_are_pinned_by_commit():
    for step in load_action()["runs"]["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
    names = [s["uses"].split("@")[0] for s in load_action()["runs"]["steps"] if "uses" in s]
    assert names == ["actions/setup-python", "actions/cache/restore", "actions/cache/save", "actions/cache/restore",
                     "actions/cache/save", "github/codeql-action/upload-sarif"]
    setup = next(s for s in load_action()["runs"]["steps"] if "setup-python" in s.get("uses", ""))
    assert str(setup["with"]["python-version"]) == "3.12"


def test_hf_token_is_only_given_to_the_vramlint_step():
    steps = load_action()["runs"]["steps"]
    holders = [s.get("id") for s in steps if "inputs.hf-token" in json.dumps(s.get("env", {}))]
    assert holders == ["check", "diff"]  # the diff resolves the same models on both sides


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("inputs.upload-sarif == 'true'", True),
        ("inputs.upload-sarif == 'TRUE'", True),
        ("inputs.upload-sarif != 'true'", False),
        ("!inputs.missing", True),
        ("steps.check.outputs.upload == 'true' && inputs.category", "vramlint"),
        ("steps.nothing.outputs.x == ''", True),
        ("always() || false", True),
        ("(1 == 2) || 'x'", "x"),
    ],
)
def test_the_test_runners_expression_evaluator(expression, expected):
    ctx = {"inputs": {"upload-sarif": "true", "category": "vramlint"}, "steps": {"check": {"outputs": {"upload": "true"}}}}
    assert evaluate(expression, ctx) == expected


def test_the_test_runner_rejects_what_it_does_not_understand():
    with pytest.raises(ExpressionError):
        evaluate("fromJSON(inputs.x)", {"inputs": {}})
    with pytest.raises(ExpressionError):
        evaluate("secrets.TOKEN", {"inputs": {}})


def test_parse_output_file_reads_both_syntaxes(tmp_path):
    f = tmp_path / "out"
    f.write_text("a=1\nb<<EOF\nline one\nline=two\nEOF\nc=x=y\n")
    assert parse_output_file(f) == {"a": "1", "b": "line one\nline=two", "c": "x=y"}


# ---------------------------------------------------------------------------------------------------------------
# The action's steps, run


def _copy_checkout(dest: Path) -> Path:
    """The action's checkout as a runner has it: the repository's files, no build leftovers."""
    ignore = shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache", ".venv", "benchmarks"
    )
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


@pytest.fixture(scope="session")
def action_env(tmp_path_factory):
    """One installation of the action per test session: the install step really runs (pip builds the checkout)."""
    base = tmp_path_factory.mktemp("action")
    action_path = _copy_checkout(base / "action-checkout")
    runner_temp = base / "runner-temp"
    runner_temp.mkdir()
    workspace = base / "workspace"
    shutil.copytree(ROOT / "examples", workspace / "examples")
    run = run_action(
        {"paths": "examples/", "fail-on": "error", "offline": "true"},
        workspace=workspace,
        runner_temp=runner_temp,
        action_path=action_path,
        extra_env={"HF_HUB_OFFLINE": "1"},
    )
    if "install" not in run.executed or run.steps["install"]["outcome"] != "success":
        pytest.fail(f"the install step failed:\n{run.log}")
    return {"action_path": action_path, "runner_temp": runner_temp, "workspace": workspace, "first_run": run}


def _again(action_env, tmp_path, inputs, **kwargs) -> ActionRun:
    """Run the action again in a new workspace and temporary folder, reusing the session's installation."""
    workspace = tmp_path / "workspace"
    if not workspace.exists():
        shutil.copytree(ROOT / "examples", workspace / "examples")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    first = action_env["first_run"]
    return run_action(
        inputs,
        workspace=workspace,
        runner_temp=runner_temp,
        action_path=action_env["action_path"],
        reuse_steps={"install": first.steps["install"]},
        extra_env={"HF_HUB_OFFLINE": "1", **kwargs.pop("extra_env", {})},
        **kwargs,
    )


def _sarif_results(path: str) -> list[dict]:
    log = json.loads(Path(path).read_text(encoding="utf-8"))
    assert log["version"] == "2.1.0"
    return [r for run in log["runs"] for r in run["results"]]


def test_action_on_the_examples_reports_fails_and_still_uploads(action_env):
    run = action_env["first_run"]
    # The uses: steps this runner cannot run, and what a real runner would have done with them.
    assert [u["uses"].split("@")[0] for u in run.not_run_uses] == [
        "actions/setup-python",
        "actions/cache/restore",
        "actions/cache/save",
        "actions/cache/restore",
        "actions/cache/save",
        "github/codeql-action/upload-sarif",
    ]
    upload = run.not_run_uses[-1]
    assert upload["would_run"], run.log
    assert upload["with"]["sarif_file"] == run.outputs["sarif-file"]
    assert upload["with"]["category"] == "vramlint"
    # pip's downloads are cached under a key of the pinned versions; Hub answers are not cached when offline
    pip_restore, pip_save, hub_restore, hub_save = run.not_run_uses[1:5]
    assert pip_restore["would_run"] and pip_save["would_run"]
    assert pip_restore["with"]["key"] == pip_save["with"]["key"]
    assert re.fullmatch(r"vramlint-pip-Linux--[0-9a-f]{32}", pip_restore["with"]["key"]), pip_restore["with"]["key"]
    assert not hub_restore["would_run"] and not hub_save["would_run"]  # the session's run is offline
    # The examples contain errors on purpose: fail-on error fails the action, after the upload.
    assert run.failed
    assert run.executed == ["keys", "install", "check", "gate"]
    assert int(run.outputs["errors"]) > 0
    assert int(run.outputs["warnings"]) >= 0 and int(run.outputs["notes"]) >= 0
    assert run.outputs["exit-code"] == "1"

    results = _sarif_results(run.outputs["sarif-file"])
    unsuppressed = [r for r in results if not r.get("suppressions")]
    assert sum(r.get("level", "warning") == "error" for r in unsuppressed) == int(run.outputs["errors"])
    assert sum(r.get("level", "warning") == "warning" for r in unsuppressed) == int(run.outputs["warnings"])
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert all(u.startswith("examples/") for u in uris), uris  # repository-relative, as code scanning wants
    assert "examples/kubernetes/llama-3.1-8b-will-not-start.yaml" in uris

    # Annotations in the log, one per finding, on the same lines as the SARIF results.
    annotations = re.findall(r"^::(error|warning|notice) file=([^,]+),line=(\d+)", run.log, re.M)
    assert len(annotations) == len(unsuppressed)
    sarif_lines = sorted(
        (r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
        for r in unsuppressed
    )
    assert sorted((f, int(line)) for _, f, line in annotations) == sarif_lines
    # The budget summary went to the job summary and names every example server's file.
    assert run.summary.strip()
    for name in ("llama-3.2-3b-t4.yaml", "compose.yaml", "production-stack-values.yaml", "inferenceservice.yaml"):
        assert name in run.summary, name


def test_fail_on_never_passes_and_upload_can_be_turned_off(action_env, tmp_path):
    run = _again(action_env, tmp_path, {"paths": "examples/kubernetes", "fail-on": "never", "upload-sarif": "false"})
    assert not run.failed, run.log
    assert run.outputs["exit-code"] == "0"
    assert int(run.outputs["errors"]) > 0  # still counted and reported
    assert not run.not_run_uses[-1]["would_run"]
    assert Path(run.outputs["sarif-file"]).is_file()


def test_sarif_file_input_annotations_off_and_summary_off(action_env, tmp_path):
    run = _again(
        action_env,
        tmp_path,
        {"paths": "examples/compose", "sarif-file": "reports/vramlint.sarif", "annotations": "false", "summary": "false"},
    )
    sarif = tmp_path / "workspace" / "reports" / "vramlint.sarif"
    assert run.outputs["sarif-file"] == "reports/vramlint.sarif"
    assert sarif.is_file()
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("examples/compose/") for r in _sarif_results(str(sarif)))
    assert not re.search(r"^::(error|warning|notice) file=", run.log, re.M)
    assert "examples/compose/compose.yaml:" in run.log  # text format instead
    assert run.summary == ""


def test_hostile_paths_and_inputs_are_data_not_code(action_env, tmp_path):
    marker = tmp_path / "pwned"
    hostile = f'examples/kubernetes $(touch {marker}) `touch {marker}` ; touch {marker}'
    run = _again(action_env, tmp_path, {"paths": hostile, "gpu": f"T4'; touch {marker}; '", "fail-on": "never"})
    assert not marker.exists()
    # The odd words are taken as paths that do not exist; the run still completes or reports a usage error.
    assert "install" not in run.executed
    assert run.steps["check"]["outcome"] in ("success", "failure")


def test_hf_token_is_masked_and_never_printed(action_env, tmp_path):
    token = "hf_TESTtokenNEVERprinted123"
    run = _again(action_env, tmp_path, {"paths": "examples/kubernetes", "fail-on": "never", "hf-token": token})
    masks = [line for line in run.log.splitlines() if line.startswith("::add-mask::")]
    assert masks == [f"::add-mask::{token}"]
    assert run.log.count(token) == 1  # only inside the add-mask command, which the runner hides


def test_workspace_code_is_never_imported(action_env, tmp_path):
    """A pull request could add a `vramlint/` or `pip/` package at the repository root; it must not run."""
    workspace = tmp_path / "workspace"
    shutil.copytree(ROOT / "examples", workspace / "examples")
    marker = tmp_path / "imported"
    for package in ("vramlint", "pip", "json", "ruamel"):
        (workspace / package).mkdir()
        (workspace / package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write({package!r})\n")
    run = _again(action_env, tmp_path, {"paths": "examples/kubernetes", "fail-on": "never"})
    assert run.steps["check"]["outcome"] == "success", run.log
    assert not marker.exists(), marker.read_text()


def test_fork_pull_requests_skip_the_upload_with_a_notice(action_env, tmp_path):
    run = _again(
        action_env,
        tmp_path,
        {"paths": "examples/kubernetes", "fail-on": "never"},
        github={
            "event_name": "pull_request",
            "repository": "example/deployments",
            "event": {"pull_request": {"head": {"repo": {"full_name": "someone/deployments"}}}},
        },
    )
    assert not run.not_run_uses[-1]["would_run"]
    assert "::notice title=vramlint::SARIF not uploaded" in run.log
    same_repo = _again(
        action_env,
        tmp_path / "same",
        {"paths": "examples/kubernetes", "fail-on": "never"},
        github={
            "event_name": "pull_request",
            "repository": "example/deployments",
            "event": {"pull_request": {"head": {"repo": {"full_name": "example/deployments"}}}},
        },
    )
    assert same_repo.not_run_uses[-1]["would_run"]


def test_a_bad_fail_on_value_is_a_usage_error(action_env, tmp_path):
    run = _again(action_env, tmp_path, {"paths": "examples/kubernetes", "fail-on": "sometimes"})
    assert run.failed
    assert run.steps["check"]["outcome"] == "failure"
    assert "fail-on must be error, warning, note or never" in run.log
    assert not run.not_run_uses[-1]["would_run"]


def test_args_input_passes_extra_flags_to_vramlint(action_env, tmp_path):
    run = _again(action_env, tmp_path, {"paths": "examples", "fail-on": "never",
                                        "args": "--select 'VRL005' \n --exclude \"examples/compose/**\""})
    assert run.steps["check"]["outcome"] == "success", run.log
    rules = {r["ruleId"] for r in _sarif_results(run.outputs["sarif-file"])}
    assert rules == {"VRL005"}, rules


@pytest.mark.parametrize("args", [
    "$(touch {marker}) `touch {marker}` ; touch {marker} && touch {marker} | touch {marker}",
    "--gpu \"T4; touch {marker}\" --select '$(touch {marker})'",
    "--ignore VRL003 'unbalanced",
    "--output-file=/tmp/elsewhere.sarif",
    "-- examples/kubernetes",
    "--fix",
])
def test_hostile_or_refused_args_are_words_never_run(action_env, tmp_path, args):
    marker = tmp_path / "pwned"
    run = _again(action_env, tmp_path, {"paths": "examples/kubernetes", "fail-on": "never",
                                        "args": args.format(marker=marker)})
    assert not marker.exists()
    assert run.failed  # a word vramlint does not take, or one the action refuses, is a usage error
    assert run.steps["check"]["outcome"] == "failure"
    if "unbalanced" in args:
        assert "the args input cannot be split into words: No closing quotation" in run.log
    elif args.startswith(("--output", "--fix", "-- ")):
        assert "::error title=vramlint::the args input may not hold" in run.log


def test_findings_over_githubs_annotation_limit_are_counted_in_the_summary(action_env, tmp_path):
    """GitHub shows 10 annotations of each level per step: 12 errors and 12 notes leave 2 of each unshown."""
    workspace = tmp_path / "workspace"
    (workspace / "many").mkdir(parents=True)
    text = (ROOT / "examples" / "kubernetes" / "llama-3.1-8b-will-not-start.yaml").read_text(encoding="utf-8")
    for i in range(12):
        (workspace / "many" / f"server-{i:02}.yaml").write_text(text, encoding="utf-8")
    run = _again(action_env, tmp_path, {"paths": "many", "fail-on": "never"})
    assert (run.outputs["errors"], run.outputs["notes"]) == ("12", "12"), run.log
    assert len(re.findall(r"^::error file=", run.log, re.M)) == 12  # all printed; GitHub shows 10
    expected = "2 error(s), 2 note(s) of this run are not shown as annotations"
    assert expected in run.summary
    assert f"::notice title=vramlint::{expected}" in run.log
    quiet = _again(action_env, tmp_path / "off", {"paths": "many", "fail-on": "never", "annotations": "false"},
                   extra_env={})
    assert "not shown as annotations" not in quiet.summary


# ---------------------------------------------------------------------------------------------------------------
# The pull-request diff step and its sticky comment, against a local stand-in for the GitHub REST API


class _FakeGitHub:
    """Issue comments of one pull request, served on 127.0.0.1 as the REST API serves them."""

    def __init__(self, token: str):
        import http.server
        import threading

        self.comments: list[dict] = [{"id": 1, "body": "a reviewer's comment"}]
        self.requests: list[tuple[str, str]] = []
        self.auth: set[str] = set()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # noqa: ANN002 - quiet
                pass

            def _send(self, code: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> dict:
                return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")

            def _handle(self, method: str) -> None:
                fake.requests.append((method, self.path.split("?")[0]))
                fake.auth.add(self.headers.get("Authorization", ""))
                if self.headers.get("Authorization") != f"Bearer {token}":
                    return self._send(401, {"message": "Bad credentials"})
                path = self.path.split("?")[0]
                if method == "GET" and path == "/repos/example/deployments/issues/7/comments":
                    return self._send(200, fake.comments)
                if method == "POST" and path == "/repos/example/deployments/issues/7/comments":
                    comment = {"id": 100 + len(fake.comments), "body": self._body()["body"]}
                    fake.comments.append(comment)
                    return self._send(201, comment)
                if method == "PATCH" and path.startswith("/repos/example/deployments/issues/comments/"):
                    wanted = int(path.rsplit("/", 1)[1])
                    for comment in fake.comments:
                        if comment["id"] == wanted:
                            comment["body"] = self._body()["body"]
                            return self._send(200, comment)
                return self._send(404, {"message": "Not Found"})

            def do_GET(self):  # noqa: N802
                self._handle("GET")

            def do_POST(self):  # noqa: N802
                self._handle("POST")

            def do_PATCH(self):  # noqa: N802
                self._handle("PATCH")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **_GIT_ENV}).stdout.strip()


def _pr_workspace(tmp_path: Path) -> tuple[Path, str]:
    """A clone of a repository whose pull request raises --max-model-len; (the workspace, the base commit)."""
    from tests.test_diff_command import deployment

    origin = tmp_path / "origin"
    (origin / "deploy").mkdir(parents=True)
    _git(origin, "init", "-q", "-b", "main")
    (origin / "deploy" / "llama.yaml").write_text(deployment("llama", extra_args=("--max-model-len", "8192")))
    (origin / "README.md").write_text("deployments\n")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "base")
    base = _git(origin, "rev-parse", "HEAD")
    _git(origin, "checkout", "-q", "-b", "pr")
    (origin / "deploy" / "llama.yaml").write_text(deployment("llama", extra_args=("--max-model-len", "32768")))
    _git(origin, "commit", "-q", "-am", "longer context")
    # as actions/checkout leaves it with the default fetch-depth 1: the base commit is not in the clone
    workspace = tmp_path / "workspace"
    subprocess.run(["git", "clone", "-q", "--depth=1", "--branch", "pr", f"file://{origin}", str(workspace)],
                   check=True, env={**os.environ, **_GIT_ENV})
    return workspace, base


def _pr_run(action_env, tmp_path, workspace, base, api_url, head_repo="example/deployments", **inputs):
    return run_action(
        {"paths": "deploy", "fail-on": "never", "offline": "true", "upload-sarif": "false", **inputs},
        workspace=workspace,
        runner_temp=tmp_path / "runner-temp",
        action_path=action_env["action_path"],
        reuse_steps={"install": action_env["first_run"].steps["install"]},
        extra_env={"HF_HUB_OFFLINE": "1"},
        github={
            "event_name": "pull_request",
            "repository": "example/deployments",
            "api_url": api_url,
            "token": "ghs_secret_workflow_token",
            "event": {"pull_request": {"number": 7, "base": {"sha": base},
                                       "head": {"repo": {"full_name": head_repo}}}},
        },
    )


def test_pull_request_diff_summary_and_sticky_comment(action_env, tmp_path):
    workspace, base = _pr_workspace(tmp_path)
    (tmp_path / "runner-temp").mkdir()
    github = _FakeGitHub("ghs_secret_workflow_token")
    try:
        run = _pr_run(action_env, tmp_path, workspace, base, github.url, comment="true")
        assert run.steps["diff"]["outcome"] == "success", run.log
        assert "diff" in run.executed and not run.failed
        # the base commit was fetched into the shallow clone, and the table went to the job summary
        assert "<!-- vramlint-diff -->" in run.summary
        row = next(line for line in run.summary.splitlines() if line.startswith("| `deploy/llama.yaml`"))
        assert "8192 → 32768 (+300.0%)" in row
        assert github.requests == [("GET", "/repos/example/deployments/issues/7/comments"),
                                   ("POST", "/repos/example/deployments/issues/7/comments")]
        (posted,) = [c for c in github.comments if "<!-- vramlint-diff -->" in c["body"]]
        assert "8192 → 32768" in posted["body"]

        # the next push: the same comment is updated, no second one
        (workspace / "deploy" / "llama.yaml").write_text(
            (workspace / "deploy" / "llama.yaml").read_text().replace('"32768"', '"16384"'))
        _git(workspace, "commit", "-q", "-am", "a shorter context")
        github.requests.clear()
        again = _pr_run(action_env, tmp_path, workspace, base, github.url, comment="true")
        assert again.steps["diff"]["outcome"] == "success", again.log
        assert github.requests == [("GET", "/repos/example/deployments/issues/7/comments"),
                                   ("PATCH", f"/repos/example/deployments/issues/comments/{posted['id']}")]
        assert len(github.comments) == 2 and github.comments[0]["body"] == "a reviewer's comment"
        assert "8192 → 16384 (+100.0%)" in github.comments[1]["body"]
        assert github.auth == {"Bearer ghs_secret_workflow_token"}
        logs = (run.log + again.log).replace("::add-mask::ghs_secret_workflow_token", "")
        assert "ghs_secret_workflow_token" not in logs  # masked before anything could print it
        assert "budget diff skipped" not in logs
    finally:
        github.close()


def test_pull_request_diff_without_comment_fork_and_no_server_change(action_env, tmp_path):
    workspace, base = _pr_workspace(tmp_path)
    (tmp_path / "runner-temp").mkdir()
    github = _FakeGitHub("ghs_secret_workflow_token")
    try:
        # comment off (the default): the summary only
        run = _pr_run(action_env, tmp_path, workspace, base, github.url)
        assert "<!-- vramlint-diff -->" in run.summary and github.requests == []
        # a fork's pull request: no request, the summary says why
        fork = _pr_run(action_env, tmp_path, workspace, base, github.url, head_repo="someone/deployments",
                       comment="true")
        assert github.requests == [] and "it comes from a fork" in fork.summary
        # a pull request that touches no vLLM server: nothing in the summary, nothing posted
        head = _git(workspace, "rev-parse", "HEAD")
        readme_only = _pr_run(action_env, tmp_path, workspace, head, github.url, comment="true")
        assert readme_only.steps["diff"]["outcome"] == "success", readme_only.log
        assert "<!-- vramlint-diff -->" not in readme_only.summary
        assert [m for m, _ in github.requests] == ["GET"]  # looked for an earlier comment to update; none
        assert len(github.comments) == 1
        # diff: false turns the step's work off
        off = _pr_run(action_env, tmp_path, workspace, base, github.url, diff="false", comment="true")
        assert "<!-- vramlint-diff -->" not in off.summary and len(github.requests) == 1
    finally:
        github.close()
