"""The fourth round of hostile inputs (benchmarks/hostile_unseen.py), the cheap ones as tests: each crashed,
read outside the tree, missed its finding or put the wrong one before the fix it holds.

Each case is written to tmp_path and run through the real CLI in its own process, as CI runs vramlint.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.test_hostile_bounds import ROOT, deployment, findings, run_cli, write

QWEN = ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
FORMATS = ("json", "github", "sarif", "markdown", "gitlab", "junit", "text")


def run_formats(folder: Path) -> dict[str, str]:
    """Every output format of one run, each written with --output-file; the run must end as a run (0 or 1)."""
    cmd = [sys.executable, "-m", "vramlint", "check", ".", "--offline"]
    for fmt in FORMATS:
        cmd += ["--output-format", fmt, "--output-file", str(folder.parent / f"out.{fmt}")]
    proc = subprocess.run(cmd, cwd=folder, env=dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1"),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return {fmt: (folder.parent / f"out.{fmt}").read_text(encoding="utf-8") for fmt in FORMATS}


def test_a_file_name_that_is_not_utf8_is_reported_escaped_in_every_format(tmp_path):
    # os.fsdecode gives such a name as surrogate escapes, which no UTF-8 writer accepts: the run used to stop
    # with an internal error writing the report (and in SARIF's and GitLab's fingerprints)
    tree = tmp_path / "tree"
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    (tree / os.fsdecode(b"d\xff")).mkdir(parents=True)
    (tree / os.fsdecode(b"d\xff") / os.fsdecode(b"x\xe9.yaml")).write_text(bad)
    out = run_formats(tree)
    assert "d\\udcff/x\\udce9.yaml" in out["text"] and "d\\udcff/x\\udce9.yaml" in out["github"]
    sarif = json.loads(out["sarif"])
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert uris == {"d%FF/x%E9.yaml"}  # the name's bytes, percent-encoded as on disk
    assert json.loads(out["gitlab"])[0]["fingerprint"]
    assert [f["rule"] for f in json.loads(out["json"])["findings"]] == ["VRL005"]


def test_a_gitignore_that_links_out_of_the_tree_is_not_read(tmp_path):
    # git (2.32+) does not follow a .gitignore link; vramlint read /etc/passwd or a runner's file through one
    secret = tmp_path / "secret.txt"
    secret.write_text("deploy.yaml\n")  # would hide the deployment if it were read as patterns
    tree = tmp_path / "tree"
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    write(tree, {".git/HEAD": "ref: refs/heads/main\n", "deploy.yaml": bad, "sub/x.yaml": bad})
    (tree / ".gitignore").symlink_to(secret)
    (tree / ".git" / "info").mkdir()
    (tree / ".git" / "info" / "exclude").symlink_to(secret)
    (tree / "sub" / ".gitignore").symlink_to(secret)
    _, report, err = run_cli(tree)
    assert {f["file"] for f in findings(report, "VRL005")} == {"deploy.yaml", "sub/x.yaml"}
    assert "a symbolic link: not followed" in err


def test_an_info_exclude_link_inside_the_repository_is_still_applied(tmp_path):
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    write(tmp_path, {".git/HEAD": "ref: refs/heads/main\n", "ignores.txt": "skipped.yaml\n", "deploy.yaml": bad,
                     "skipped.yaml": bad})
    (tmp_path / ".git" / "info").mkdir()
    (tmp_path / ".git" / "info" / "exclude").symlink_to(tmp_path / "ignores.txt")
    _, report, _ = run_cli(tmp_path)
    assert {f["file"] for f in findings(report, "VRL005")} == {"deploy.yaml"}


def test_a_configuration_file_that_is_a_fifo_or_a_folder_is_said_not_passed_over(tmp_path):
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    for kind in ("fifo", "folder", "dangling"):
        tree = tmp_path / kind
        write(tree, {"deploy.yaml": bad})
        config = tree / ".vramlint.yaml"
        if kind == "fifo":
            os.mkfifo(config)
        elif kind == "folder":
            config.mkdir()
        else:
            config.symlink_to(tree / "gone.yaml")
        code, report, _ = run_cli(tree, timeout=20)
        said = [(f["file"], f["level"]) for f in findings(report, "VRL102")]
        assert said == [(".vramlint.yaml", "warning")], (kind, said)
        assert code == 1 and findings(report, "VRL005")  # the defaults apply, the run goes on
