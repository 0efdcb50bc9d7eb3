"""The command line as a new user meets it, run as a subprocess of the real CLI: one name for the output format,
readable usage lines, suggestions for mistyped commands and options, and -V, --quiet, --statistics,
--exit-zero, --stdin-filename."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._check_util import concise_view

REPO = Path(__file__).resolve().parents[1]
WILL_NOT_START = REPO / "examples" / "kubernetes" / "llama-3.1-8b-will-not-start.yaml"
T4 = REPO / "examples" / "kubernetes" / "llama-3.2-3b-t4.yaml"


def vramlint(*argv: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", NO_COLOR="1")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "vramlint", *argv], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()  # the configuration search stops here
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "bad.yaml").write_text(WILL_NOT_START.read_text())
    (tmp_path / "clean").mkdir()
    (tmp_path / "clean" / "notes.yaml").write_text("kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\n")
    return tmp_path


def test_output_format_is_the_name_on_every_command_and_format_an_alias(repo):
    for command in ("check", "explain", "inventory"):
        for flag in ("--output-format", "--format"):
            result = vramlint(command, "deploy", "--offline" if command != "inventory" else "--exclude=x",
                              flag, "json", cwd=repo)
            assert result.returncode in (0, 1), result.stderr
            json.loads(result.stdout)  # JSON whichever name was used
        assert "--output-format" in vramlint(command, "-h", cwd=repo).stdout
    assert "--output-format" in vramlint("diff", "-h", cwd=repo).stdout


def test_subcommand_usage_line_names_only_the_subcommand(repo):
    for command in ("check", "explain", "inventory", "rules", "diff"):
        usage = vramlint(command, "-h", cwd=repo).stdout.splitlines()[0]
        assert usage.startswith(f"usage: vramlint {command} [-h]"), usage
        assert "[COMMAND]" not in usage


def test_a_mistyped_command_is_answered_with_the_command(repo):
    result = vramlint("chek", cwd=repo)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "vramlint: error: unknown command 'chek'; did you mean 'check'?\n"
    assert "did you mean 'explain'" in vramlint("explian", "deploy", cwd=repo).stderr
    # a folder of that name is a path to lint, as before
    (repo / "chek").mkdir()
    (repo / "chek" / "bad.yaml").write_text(WILL_NOT_START.read_text())
    result = vramlint("chek", "--offline", cwd=repo)
    assert result.returncode == 1 and "chek/bad.yaml" in result.stdout


def test_a_mistyped_option_is_answered_with_the_option(repo):
    result = vramlint("check", "deploy", "--outptu-format", "json", cwd=repo)
    assert result.returncode == 2
    assert "unrecognized arguments: --outptu-format" in result.stderr
    assert "did you mean --output-format?" in result.stderr
    result = vramlint("explain", "deploy", "--ofline", cwd=repo)
    assert result.returncode == 2 and "did you mean --offline?" in result.stderr
    result = vramlint("check", "deploy", "--zzzzzz", cwd=repo)
    assert result.returncode == 2 and "did you mean" not in result.stderr


def test_short_version_flag(repo):
    from vramlint import __version__

    for flag in ("-V", "--version"):
        result = vramlint(flag, cwd=repo)
        assert result.returncode == 0 and result.stdout.strip() == f"vramlint {__version__}"


def test_quiet_prints_the_summary_line_only_and_nothing_when_clean(repo):
    loud = vramlint("check", "deploy", "--offline", cwd=repo)
    quiet = vramlint("check", "deploy", "--offline", "--quiet", cwd=repo)
    assert loud.returncode == quiet.returncode == 1
    assert len(loud.stdout.splitlines()) > 1
    assert quiet.stdout.splitlines() == [loud.stdout.splitlines()[-1]]
    assert quiet.stdout.startswith("Found ")
    clean = vramlint("check", "clean", "--offline", "-q", cwd=repo)
    assert clean.returncode == 0 and clean.stdout == "" and clean.stderr == ""


def test_statistics_counts_findings_per_rule(repo):
    (repo / "deploy" / "t4.yaml").write_text(T4.read_text())
    full = vramlint("check", "deploy", "--offline", "--output-format", "json", cwd=repo)
    expected: dict[str, int] = {}
    for finding in json.loads(full.stdout)["findings"]:
        if not finding.get("suppressed"):
            expected[finding["rule"]] = expected.get(finding["rule"], 0) + 1
    assert expected
    stats = vramlint("check", "deploy", "--offline", "--statistics", cwd=repo)
    assert stats.returncode == full.returncode
    lines = stats.stdout.splitlines()
    got = {}
    for line in lines[:-1]:
        count, rule_id, *_ = line.split()
        got[rule_id] = int(count)
    assert got == expected
    assert lines[-1].startswith("Found ")
    assert not any(": VRL" in line for line in lines)  # counted, not listed


def test_exit_zero_keeps_findings_but_exits_zero(repo):
    failing = vramlint("check", "deploy", "--offline", cwd=repo)
    assert failing.returncode == 1
    zero = vramlint("check", "deploy", "--offline", "--exit-zero", cwd=repo)
    assert zero.returncode == 0 and "VRL005 [error]" in zero.stdout
    # a usage error is still 2
    assert vramlint("check", "nowhere", "--exit-zero", cwd=repo).returncode == 2


def test_stdin_filename_names_the_findings_from_standard_input(repo):
    text = WILL_NOT_START.read_text()
    plain = vramlint("check", "-", "--offline", cwd=repo, stdin=text)
    assert "<stdin>:" in plain.stdout
    named = vramlint("check", "-", "--offline", "--stdin-filename", "charts/llm/rendered.yaml", cwd=repo,
                     stdin=text)
    assert named.returncode == 1
    assert "charts/llm/rendered.yaml:30:15: VRL005" in concise_view(named.stdout)
    assert "<stdin>" not in named.stdout
    # the path's overrides apply to it
    (repo / ".vramlint.yaml").write_text("overrides:\n  - files: ['charts/**']\n    ignore: [VRL005]\n")
    named = vramlint("check", "-", "--offline", "--stdin-filename", "charts/llm/rendered.yaml", cwd=repo,
                     stdin=text)
    assert "VRL005" not in named.stdout
    result = vramlint("check", "deploy", "--stdin-filename", "x.yaml", cwd=repo)
    assert result.returncode == 2 and "give '-'" in result.stderr
