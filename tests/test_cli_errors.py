"""What a user sees when a command line or an input goes wrong: the file named, the fix said, the exit status
(2 for a usage error, 130 when interrupted), and nothing passing silently."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vramlint.cli import main

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "kubernetes" / "llama-3.2-3b-t4.yaml"


@pytest.fixture
def work(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()  # the configuration search stops here
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "llama.yaml").write_text(EXAMPLE.read_text())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _env() -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.parametrize("command", [[], ["check"], ["inventory"], ["explain"]])
def test_a_path_that_does_not_exist_is_an_error_with_a_suggestion(work, capsys, command):
    code, out, err = run(capsys, *command, "deplyo/", "--offline" if command != ["inventory"] else "--exclude=x")
    assert code == 2 and out == ""
    assert err == "vramlint: error: deplyo/: no such file or directory (did you mean deploy/?)\n"
    code, _, err = run(capsys, *command, "deploy/llama.yaml", "nowhere.yaml")
    assert code == 2 and "nowhere.yaml: no such file or directory" in err and "did you mean" not in err


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks on this platform")
def test_a_broken_symbolic_link_named_explicitly_is_an_error(work, capsys):
    os.symlink("gone.yaml", "deploy/link.yaml")
    code, _, err = run(capsys, "deploy/link.yaml")
    assert code == 2 and "deploy/link.yaml: broken symbolic link (it points to gone.yaml" in err
    # found while walking a folder, it is said and skipped: the folder's other files are still linted
    code, out, err = run(capsys, "deploy", "--offline")
    assert code == 0 and "deploy/link.yaml: skipped (broken symbolic link)" in err and "1 path skipped" in out


def test_a_folder_without_yaml_says_so_and_passes(work, capsys):
    (work / "empty").mkdir()
    (work / "empty" / "notes.txt").write_text("vllm serve x\n")
    code, out, err = run(capsys, "empty")
    assert code == 0 and out == "No vLLM server found in 0 files.\n"
    assert "vramlint: note: empty: no YAML file in this folder or below it" in err
    code, out, _ = run(capsys, "inventory", "empty")
    assert code == 0 and "note: empty: no YAML file" in out
    # a folder with YAML (even without a server) is not said to be empty
    code, _, err = run(capsys, "deploy", "--offline")
    assert "no YAML file" not in err


def test_a_file_that_cannot_be_read_is_an_input_error_naming_it(work, capsys):
    (work / "deploy" / "latin1.yaml").write_bytes(b"# caf\xe9\nkind: Deployment\n")
    code, out, _ = run(capsys, "deploy", "--offline", "--output-format", "json")
    doc = json.loads(out)
    errors = [f for f in doc["findings"] if f["rule"] == "VRL102"]
    assert code == 1 and len(errors) == 1
    assert errors[0]["file"] == "deploy/latin1.yaml" and errors[0]["level"] == "error"
    assert errors[0]["message"].startswith("not UTF-8 (invalid byte at offset 5)")
    assert doc["skipped"] == []
    # the other file was still linted
    assert any(s["file"] == "deploy/llama.yaml" for s in doc["servers"])


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux /proc")
def test_a_file_named_explicitly_that_fails_to_read_is_reported(work, capsys):
    # /proc/self/mem opens but cannot be read at offset 0 (EIO), whoever runs the test (root included)
    code, out, _ = run(capsys, "/proc/self/mem", "deploy/llama.yaml", "--offline", "--output-format", "concise")
    assert code == 1
    assert "proc/self/mem:1:1: VRL102 [error] cannot read: Input/output error: the file was not read" in out


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_without_read_permission_is_reported(work, capsys):
    secret = work / "deploy" / "secret.yaml"
    secret.write_text(EXAMPLE.read_text())
    secret.chmod(0)
    try:
        code, out, _ = run(capsys, "deploy/secret.yaml", "--offline", "--output-format", "concise")
    finally:
        secret.chmod(0o644)
    assert code == 1 and "deploy/secret.yaml:1:1: VRL102 [error] permission denied" in out


def test_output_files(work, capsys):
    # a missing folder is created (as ruff does); the format follows the extension when none is given
    code, out, err = run(capsys, "deploy", "--offline", "--output-file", "reports/ci/vramlint.sarif")
    assert code == 0 and out == "" and err == ""
    assert json.loads((work / "reports" / "ci" / "vramlint.sarif").read_text())["version"] == "2.1.0"
    # a path that cannot be written: the error names it, the other reports are still written, exit 2
    (work / "afile").write_text("")
    code, out, err = run(capsys, "deploy", "--offline", "--output-format", "sarif", "--output-file",
                         "afile/x.sarif", "--output-format", "json", "--output-file", "out.json",
                         "--output-format", "text")
    assert code == 2
    assert "vramlint: error: --output-file afile/x.sarif: cannot write the sarif report: afile is a file" in err
    assert json.loads((work / "out.json").read_text())["summary"]["servers"] == 1
    assert "Found 1 finding" in out
    # a folder given as the file is a usage error before anything runs
    code, out, err = run(capsys, "deploy", "--output-file", "reports")
    assert code == 2 and out == "" and "--output-file reports: is a folder" in err


def test_two_formats_to_standard_output(work, capsys):
    code, _, err = run(capsys, "deploy", "--output-format", "sarif", "--output-format", "json")
    assert code == 2
    assert "only one output format can go to standard output (got sarif, json); give the others an --output-file" in err


def test_missing_configuration_and_baseline_files(work, capsys):
    code, _, err = run(capsys, "deploy", "--config", "nope.yaml")
    assert code == 2 and "nope.yaml: configuration file not found" in err
    code, _, err = run(capsys, "deploy", "--offline", "--baseline", "base.json")
    assert code == 2 and "base.json: baseline file not found (create it with --write-baseline base.json)" in err


def test_unknown_rules_on_the_command_line(work, capsys):
    code, _, err = run(capsys, "deploy", "--select", "VRL99")
    assert code == 2 and err == "vramlint: error: --select 'VRL99' matches no rule; did you mean VRL009?\n"
    code, _, err = run(capsys, "deploy", "--ignore", "max-model-len")
    assert code == 2 and "--ignore 'max-model-len' matches no rule; did you mean max-model-len-at-maximum?" in err
    code, _, err = run(capsys, "deploy", "--select", "zzz")
    assert code == 2 and "--select 'zzz' matches no rule; `vramlint rules` lists them" in err
    code, out, err = run(capsys, "rules", "VRL999")
    assert code == 2 and out == "" and "no rule 'VRL999'; did you mean VRL009?" in err
    code, _, err = run(capsys, "rules", "will-not-stat")
    assert code == 2 and "did you mean will-not-start?" in err


def test_explain_command_line_mistakes(work, capsys):
    code, out, err = run(capsys, "explain", "--")
    assert code == 2 and out == "" and "nothing after '--'" in err
    code, _, err = run(capsys, "explain", "--", "serve", "meta-llama/Llama-3.2-3B-Instruct")
    assert code == 2 and "does not run a vLLM server" in err
    code, _, err = run(capsys, "explain", "--gpu", "NOPE", "--", "vllm", "serve", "x")
    assert code == 2 and "unknown GPU 'NOPE'; the catalog has T4, " in err and "--gpu-memory-gib" in err
    code, _, err = run(capsys, "explain", "--gpu", "A100", "--offline", "--", "vllm", "serve", "x")
    assert code == 2 and "unknown GPU 'A100'; did you mean A100-40GB, A100-80GB" in err
    # with its memory given, a GPU outside the catalog is fine
    code, out, _ = run(capsys, "explain", "--gpu", "NOPE", "--gpu-memory-gib", "40", "--offline", "--",
                       "vllm", "serve", "meta-llama/Llama-3.2-3B-Instruct")
    assert code == 0 and "on 1 x NOPE" in out


def test_empty_standard_input_is_an_error():
    for command in (["-"], ["inventory", "-"], ["explain", "-", "--offline"]):
        proc = subprocess.run([sys.executable, "-m", "vramlint", *command], input="", capture_output=True,
                              text=True, env=_env(), timeout=60)
        assert proc.returncode == 2, (command, proc.stderr)
        assert "standard input ('-') is empty" in proc.stderr and "helm template" in proc.stderr


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery")
def test_ctrl_c_exits_130_without_a_traceback():
    # `vramlint -` waits on standard input, which gives the signal a place to land
    proc = subprocess.Popen([sys.executable, "-m", "vramlint", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err == "vramlint: interrupted\n"


@pytest.mark.parametrize("command", [[], ["check"], ["inventory"], ["explain"], ["rules"]])
def test_help_has_examples_and_exit_statuses(capsys, command):
    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert "examples:\n  vramlint " in out and "exit status: 0" in out
