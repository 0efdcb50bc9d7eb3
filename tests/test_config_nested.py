"""A monorepo with a configuration file per team: `vramlint check .` from the root checks each file with its
closest configuration, as ruff does; a configuration file is not itself counted as a scanned file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
T4 = REPO / "examples" / "kubernetes" / "llama-3.2-3b-t4.yaml"  # VRL004 (note) on a T4
WILL_NOT_START = REPO / "examples" / "kubernetes" / "llama-3.1-8b-will-not-start.yaml"  # VRL005 (error)


def vramlint(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", NO_COLOR="1")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "vramlint", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def findings(result) -> list[tuple[str, str, str]]:
    return sorted((f["file"], f["rule"], f["level"]) for f in json.loads(result.stdout)["findings"]
                  if not f["suppressed"])


def monorepo(root: Path) -> Path:
    (root / ".git").mkdir()
    for team in ("teamA", "teamB", "teamC"):
        (root / team / "deploy").mkdir(parents=True)
        (root / team / "deploy" / "t4.yaml").write_text(T4.read_text())
        (root / team / "deploy" / "big.yaml").write_text(WILL_NOT_START.read_text())
    (root / ".vramlint.yaml").write_text("severity:\n  VRL004: warning\n")
    # teamA: no VRL005; teamB: VRL004 off in its deploy folder only (an override relative to teamB/)
    (root / "teamA" / ".vramlint.yaml").write_text("ignore: [VRL005]\n")
    (root / "teamB" / ".vramlint.yaml").write_text(
        "severity:\n  VRL005: warning\noverrides:\n  - files: ['deploy/t4.yaml']\n    ignore: [VRL004]\n")
    return root


def test_each_file_is_checked_with_its_closest_configuration(tmp_path):
    root = monorepo(tmp_path)
    result = vramlint("check", ".", "--offline", "--output-format", "json", cwd=root)
    got = findings(result)
    assert ("teamA/deploy/big.yaml", "VRL005", "error") not in got
    assert ("teamA/deploy/t4.yaml", "VRL004", "note") in got  # teamA's file does not inherit the root's severity
    assert ("teamB/deploy/big.yaml", "VRL005", "warning") in got
    assert not any(f == "teamB/deploy/t4.yaml" and r == "VRL004" for f, r, _ in got)
    assert ("teamC/deploy/big.yaml", "VRL005", "error") in got  # no configuration of its own: the root's
    assert ("teamC/deploy/t4.yaml", "VRL004", "warning") in got
    assert result.returncode == 1  # teamC's error
    # a team's folder alone gives the same answer for its files
    alone = vramlint("check", "teamB", "--offline", "--output-format", "json", cwd=root)
    assert findings(alone) == [f for f in got if f[0].startswith("teamB/")]
    assert alone.returncode == 0


def test_a_mistake_in_a_nested_configuration_is_a_finding_and_the_root_applies_there(tmp_path):
    root = monorepo(tmp_path)
    (root / "teamB" / ".vramlint.yaml").write_text("ignore: [VRL0055]\nfail-onn: warning\n")
    result = vramlint("check", ".", "--offline", cwd=root)
    assert result.returncode == 1, result.stderr
    assert "--> teamB/.vramlint.yaml:2:1" in result.stdout and "fail-onn" in result.stdout
    assert "this configuration file is not applied" in result.stdout
    (root / "teamB" / ".vramlint.yaml").write_text("ignore: [VRL0055]\n")
    result = vramlint("check", ".", "--offline", cwd=root)
    assert result.returncode == 1 and "--> teamB/.vramlint.yaml:1" in result.stdout and "VRL0055" in result.stdout


def test_explicit_config_applies_to_every_file(tmp_path):
    root = monorepo(tmp_path)
    result = vramlint("check", ".", "--offline", "--config", ".vramlint.yaml", "--output-format", "json", cwd=root)
    got = findings(result)
    assert ("teamA/deploy/big.yaml", "VRL005", "error") in got
    assert ("teamA/deploy/t4.yaml", "VRL004", "warning") in got


def test_flags_win_over_nested_configurations(tmp_path):
    root = monorepo(tmp_path)
    result = vramlint("check", ".", "--offline", "--select", "VRL005", "--output-format", "json", cwd=root)
    assert {r for _, r, _ in findings(result)} == {"VRL005"}


def test_configuration_files_are_not_counted_as_scanned(tmp_path):
    root = monorepo(tmp_path)
    result = vramlint("check", "teamA", "--offline", "--output-format", "json", cwd=root)
    assert json.loads(result.stdout)["summary"]["files_scanned"] == 2
