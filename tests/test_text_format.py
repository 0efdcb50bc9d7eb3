"""The text report a person reads: a one-line headline, the source line with `^` under the value, the rest of the
message as a note, the fix as help; `--output-format concise` keeps one line per finding; `explain` wraps at
the terminal width with one input a line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from vramlint.fixes import forget_texts
from vramlint.model import split_message

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
WILL_NOT_START = "examples/kubernetes/llama-3.1-8b-will-not-start.yaml"


def _run(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    environ.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", **env)
    return subprocess.run([sys.executable, "-m", "vramlint", *args], cwd=REPO, env=environ, input=stdin,
                          capture_output=True, text=True, timeout=300)


def _json(*args: str) -> list[dict]:
    return json.loads(_run(*args, "--offline", "--output-format", "json").stdout)["findings"]


def test_every_value_rule_headline_on_the_examples_fits_one_line():
    findings = _json("check", "examples")
    value_rules = {"VRL001", "VRL002", "VRL005", "VRL006", "VRL007", "VRL008", "VRL009"}
    checked = [f for f in findings if f["rule"] in value_rules]
    assert len(checked) >= 5
    for f in checked:
        assert len(f["summary"]) <= 120, f["summary"]
        # the whole text stays in `message`: the headline, then the detail
        assert f["message"].startswith(f["summary"]) and f["detail"] in f["message"]
        assert any(ch.isdigit() for ch in f["summary"]), f["summary"]  # the number that proves it


def test_the_frame_marks_the_value_and_the_help_says_which_option_applies_the_fix():
    out = _run("check", WILL_NOT_START, "--offline", NO_COLOR="1").stdout
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("VRL005 [error] "))
    assert "33,456 tokens" in lines[head] and "131,072" in lines[head] and len(lines[head]) <= 120 + 15
    assert lines[head + 1].strip() == f"--> {WILL_NOT_START}:30:15"
    source = lines[head + 3]
    assert source.startswith("30 |") and source.endswith("- --max-model-len=131072")
    marker = lines[head + 4]
    start = marker.index("^")
    # the marker sits under the value as written in the file, column 15 of line 30
    assert source[start:start + marker.count("^")] == "--max-model-len=131072"
    assert start - len("30 | ") == 15 - 1
    body = "\n".join(lines[head:])
    assert "= note: The model's max seq len (131072)" in body
    help_line = next(line for line in lines[head:] if "= help:" in line)
    help_text = " ".join(line.strip() for line in lines[lines.index(help_line):]
                         if line.startswith("   ")).split("= help: ", 1)[1]
    assert help_text.startswith("set --max-model-len 22528")
    assert "(unsafe fix: --fix --unsafe-fixes applies it)" in help_text


def test_a_fix_vramlint_cannot_write_says_why_in_the_help_line():
    out = _run("check", "examples/helm/production-stack-values.yaml", "--offline", NO_COLOR="1",
               COLUMNS="400").stdout
    help_lines = [line for line in out.splitlines() if "= help:" in line]
    assert any("(no automatic fix:" in line for line in help_lines) or any("(safe fix" in line or "(unsafe fix" in line
                                                                           for line in help_lines)
    for finding in _json("check", "examples/helm/production-stack-values.yaml"):
        fix = finding.get("fix")
        if fix and not fix["edits"]:
            assert f"(no automatic fix: {fix['reason'].rstrip('.')})" in out


def test_concise_is_todays_single_line():
    out = _run("check", "examples", "--offline", "--output-format", "concise", NO_COLOR="1").stdout
    findings = _json("check", "examples")
    lines = out.splitlines()
    assert len(lines) == len(findings) + 1  # one per finding, then the summary
    for line, finding in zip(lines, findings, strict=False):
        assert line == (f"{finding['file']}:{finding['line']}:{finding['column']}: {finding['rule']} "
                        f"[{finding['level']}] {finding['message']}")
    assert lines[-1].startswith("Found ")


def test_quiet_and_statistics_are_the_same_in_both_formats():
    for flag in ("--quiet", "--statistics"):
        text = _run("check", "examples", "--offline", flag, NO_COLOR="1").stdout
        concise = _run("check", "examples", "--offline", flag, "--output-format", "concise", NO_COLOR="1").stdout
        assert text == concise and "-->" not in text


def test_standard_input_gets_its_frame_under_the_stdin_filename():
    text = (REPO / WILL_NOT_START).read_text()
    out = _run("check", "-", "--offline", "--stdin-filename", "deploy/llama.yaml", stdin=text, NO_COLOR="1").stdout
    assert " --> deploy/llama.yaml:30:15" in out
    assert "30 |             - --max-model-len=131072" in out


def test_colour_only_when_asked_or_on_a_terminal():
    plain = _run("check", WILL_NOT_START, "--offline").stdout  # a pipe: no colour
    assert "\033[" not in plain
    forced = _run("check", WILL_NOT_START, "--offline", FORCE_COLOR="1").stdout
    assert "\033[1;31mVRL005 [error]\033[0m" in forced and "\033[1;31m^^^^" in forced
    assert "\033[" not in _run("check", WILL_NOT_START, "--offline", FORCE_COLOR="1", NO_COLOR="1").stdout


def test_notes_wrap_at_the_terminal_width():
    narrow = _run("check", WILL_NOT_START, "--offline", NO_COLOR="1", COLUMNS="70").stdout
    wide = _run("check", WILL_NOT_START, "--offline", NO_COLOR="1", COLUMNS="300").stdout
    for line in narrow.splitlines():
        if line.startswith("   "):  # note and help lines; headlines and source lines are never wrapped
            assert len(line) <= 70 or " " not in line.strip(), line
    assert max(len(line) for line in wide.splitlines() if "= note:" in line) > 100

    def words(out: str) -> list[str]:
        return [w for line in out.splitlines() if line.startswith("   ") for w in line.split()]

    assert words(narrow) == words(wide)  # wrapping moves words, never loses one


def test_explain_wraps_and_lists_one_input_a_line():
    out = _run("explain", "examples/kubernetes/llama-3.2-3b-t4.yaml", "--offline", COLUMNS="80").stdout
    lines = out.splitlines()
    for line in lines:
        assert len(line) <= 80 or " " not in line.strip(), line
    start = lines.index("  inputs:")
    inputs = [line for line in lines[start + 1:] if line.startswith("    ") and not line.startswith("        ")]
    keys = [line.split(":", 1)[0].strip() for line in inputs]
    assert {"vllm_version", "model", "gpu", "gpu_count", "block_size", "max_num_seqs"} <= set(keys)
    # a budget row's continuation sits under its source column
    total = next(i for i, line in enumerate(lines) if line.lstrip().startswith("total "))
    column = lines[total].index("GiB  ") + len("GiB  ")
    assert lines[total + 1].startswith(" " * column) and lines[total + 1][column] != " "


def test_split_message_keeps_every_word():
    message = ("vLLM 0.8.5 (image tag) does not know the argument --foo: it stops at start-up with "
               "\"unrecognized arguments: --foo\". The image tag does not say the version, so set vllm-version")
    head, rest = split_message(message)
    assert len(head) <= 120 and f"{head}. {rest}" == message  # split at the sentence's end, nothing lost
    assert split_message("short", None) == ("short", "")
    assert split_message("A headline. The rest of it", "A headline") == ("A headline", "The rest of it")


def test_a_long_message_without_a_break_gets_a_short_headline_and_keeps_its_words():
    aside = ("env_file .env is not in the repository (compose needs it when the service starts; it is usually made "
             "at deploy time, e.g. from a .env.example): the variables it sets are unknown")
    head, rest = split_message(aside)
    assert head == "env_file .env is not in the repository" and f"{head} {rest}" == aside
    clause = "the model path /models/m is filled by init container 'model-download' from the Hub repository " + "x" * 80
    head, rest = split_message(clause)
    assert len(head) <= 120 and head.endswith(" ...") and rest.startswith("... ")
    assert f"{head[:-4]} {rest[4:]}" == clause


def test_vrl005_queue_limit_follows_vrl002s_configured_options(tmp_path, capsys):
    """The --max-num-seqs VRL005's fix adds is what VRL002 would ask for, with VRL002's options as configured."""
    from vramlint.cli import main

    deploy = tmp_path / "d.yaml"
    deploy.write_text((REPO / WILL_NOT_START).read_text())

    def queue(config: str) -> int | None:
        (tmp_path / ".vramlint.yaml").write_text(config)
        forget_texts()
        main(["check", str(tmp_path), "--offline", "--output-format", "json"])
        [vrl005] = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "VRL005"]
        m = re.search(r"--max-num-seqs (\d+)", vrl005["fix"]["description"])
        return int(m.group(1)) if m else None

    default = queue("fail-on: error\n")
    shorter = queue("rules:\n  max-num-seqs-over-kv-capacity:\n    typical-context-tokens: 1024\n"
                    "    min-concurrency: 64\n")
    assert shorter is not None and (default is None or shorter > default)
