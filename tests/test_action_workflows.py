"""The repository's own workflows: valid against the GitHub workflow schema, and doing what the project needs."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def _load(path: Path) -> dict:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_valid(path):
    schema = json.loads(files("check_jsonschema.builtin_schemas.vendor").joinpath("github-workflows.json").read_text())
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(_load(path)))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_pins_actions_and_keeps_a_read_only_token(path):
    wf = _load(path)
    assert wf["permissions"] == {"contents": "read"}
    for job in wf["jobs"].values():
        assert job.get("timeout-minutes")
        for step in job["steps"]:
            uses = step.get("uses", "")
            if uses and not uses.startswith("./"):
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), uses
            assert "${{" not in step.get("run", ""), f"{path.name}: expression spliced into a script"


def test_tests_workflow_covers_python_310_to_313_with_the_ci_script():
    job = _load(ROOT / ".github" / "workflows" / "tests.yml")["jobs"]["tests"]
    assert job["strategy"]["matrix"]["python-version"] == ["3.10", "3.11", "3.12", "3.13"]
    assert any(step.get("run", "").strip() == "bash .ci/run" for step in job["steps"])


def test_tests_workflow_runs_the_action_itself_on_the_examples():
    action = YAML(typ="safe").load((ROOT / "action.yml").read_text(encoding="utf-8"))
    jobs = _load(ROOT / ".github" / "workflows" / "tests.yml")["jobs"]
    local = [s for job in jobs.values() for s in job["steps"] if s.get("uses") == "./"]
    assert len(local) >= 2
    for step in local:
        assert step["with"]["paths"] == "examples/"
        assert set(step["with"]) <= set(action["inputs"])
        assert step["with"].get("upload-sarif") == "false"  # the examples' findings are not the repository's alerts
    assert any(s["with"].get("fail-on") == "error" and s.get("continue-on-error") for s in local)


def test_release_workflow_builds_the_wheel_on_tags():
    wf = _load(ROOT / ".github" / "workflows" / "release.yml")
    assert wf["on"]["push"]["tags"] == ["v*"]
    runs = "\n".join(s.get("run", "") for job in wf["jobs"].values() for s in job["steps"])
    assert "python3 -m build" in runs
    assert any("upload-artifact" in s.get("uses", "") for job in wf["jobs"].values() for s in job["steps"])
