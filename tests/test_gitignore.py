"""`.gitignore` is respected by default (rendered output, vendored charts are not scanned), as ruff and zizmor
do; `--no-respect-gitignore` turns it off. Real git repositories made in a temporary folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WILL_NOT_START = REPO / "examples" / "kubernetes" / "llama-3.1-8b-will-not-start.yaml"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to check against git itself")


def vramlint(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", NO_COLOR="1")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "vramlint", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def files_with_findings(result) -> set[str]:
    return {f["file"] for f in json.loads(result.stdout)["findings"]}


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    text = WILL_NOT_START.read_text()
    for rel in ("deploy/app.yaml", "rendered/out.yaml", "charts/vendor-x/templates/d.yaml", "deploy/tmp/x.yaml",
                "deploy/keep/generated.yaml", "deploy/keep/other.yaml", "sub/local.yaml", "sub/kept.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / ".gitignore").write_text("rendered/\n/charts/vendor-*\ntmp/\n*generated.yaml\n")
    (tmp_path / "deploy" / ".gitignore").write_text("!keep/generated.yaml\n")  # a deeper file re-includes
    (tmp_path / "sub" / ".gitignore").write_text("local.yaml\n")
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("sub/kept.yaml\n")
    return tmp_path


def git_ignored(root: Path, files: list[str]) -> set[str]:
    # git itself, with nothing the repository configures run
    result = subprocess.run(["git", "-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null", "check-ignore",
                             "--stdin"], cwd=root, input="\n".join(files), capture_output=True, text=True)
    return set(result.stdout.split())


ALL = {"deploy/app.yaml", "rendered/out.yaml", "charts/vendor-x/templates/d.yaml", "deploy/tmp/x.yaml",
       "deploy/keep/generated.yaml", "deploy/keep/other.yaml", "sub/local.yaml", "sub/kept.yaml"}


def test_gitignored_files_are_not_scanned_and_agree_with_git(repo):
    result = vramlint("check", ".", "--offline", "--output-format", "json", cwd=repo)
    scanned = files_with_findings(result)
    assert scanned == ALL - git_ignored(repo, sorted(ALL))
    assert scanned == {"deploy/app.yaml", "deploy/keep/generated.yaml", "deploy/keep/other.yaml"}
    assert json.loads(result.stdout)["summary"]["files_scanned"] == 3
    # from a subfolder, the root's .gitignore still applies
    sub = vramlint("check", "deploy", "--offline", "--output-format", "json", cwd=repo)
    assert files_with_findings(sub) == {"deploy/app.yaml", "deploy/keep/generated.yaml", "deploy/keep/other.yaml"}


def test_no_respect_gitignore_scans_everything(repo):
    result = vramlint("check", ".", "--offline", "--no-respect-gitignore", "--output-format", "json", cwd=repo)
    assert files_with_findings(result) == ALL
    listed = vramlint("inventory", ".", "--no-respect-gitignore", "--output-format", "json", cwd=repo)
    assert {s["file"] for s in json.loads(listed.stdout)["servers"]} == ALL


def test_respect_gitignore_configuration_key_and_the_flag_over_it(repo):
    (repo / ".vramlint.yaml").write_text("respect-gitignore: false\n")
    for command in ("check", "explain"):
        result = vramlint(command, ".", "--offline", "--output-format", "json", cwd=repo)
        if command == "check":
            assert files_with_findings(result) == ALL
        else:
            assert {s["file"] for s in json.loads(result.stdout)["servers"]} == ALL
    listed = vramlint("inventory", ".", "--output-format", "json", cwd=repo)
    assert {s["file"] for s in json.loads(listed.stdout)["servers"]} == ALL
    flagged = vramlint("check", ".", "--offline", "--respect-gitignore", "--output-format", "json", cwd=repo)
    assert files_with_findings(flagged) == {"deploy/app.yaml", "deploy/keep/generated.yaml", "deploy/keep/other.yaml"}


def test_a_path_named_explicitly_is_read_even_if_ignored(repo):
    result = vramlint("check", "rendered/out.yaml", "--offline", "--output-format", "json", cwd=repo)
    assert files_with_findings(result) == {"rendered/out.yaml"}


def test_outside_a_git_work_tree_gitignore_is_not_read(tmp_path):
    (tmp_path / "rendered").mkdir()
    (tmp_path / "rendered" / "out.yaml").write_text(WILL_NOT_START.read_text())
    (tmp_path / ".gitignore").write_text("rendered/\n")
    os.makedirs(tmp_path / "stop" / ".git")  # not above tmp_path: the search finds no repository
    result = vramlint("check", ".", "--offline", "--output-format", "json", cwd=tmp_path)
    assert files_with_findings(result) == {"rendered/out.yaml"}
