"""Secrets written in the scanned files do not reach any report through a finding's message (which quotes values:
an unknown flag's word, a model id that is a URL, a compose `${VAR:?message}`), and Unicode's line separators in a
value or a file name cannot start a line of their own in the text report. The files are made in tmp_path and
vramlint runs in a fresh process, as CI runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "hf_WrittenInTheRepoNotAnEnvToken0123456789"
PASSWORD = "userinfo-Passw0rd-in-a-json-value-55"
FORMATS = ("text", "json", "sarif", "github", "markdown", "gitlab", "junit")
GPU = "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n"


def _run(tmp_path: Path) -> dict[str, str]:
    out_dir = tmp_path.parent / (tmp_path.name + "-reports")
    out_dir.mkdir()
    cmd = [sys.executable, "-m", "vramlint", "check", ".", "--offline"]
    for fmt in FORMATS:
        cmd += ["--output-format", fmt, "--output-file", str(out_dir / f"r.{fmt}")]
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", NO_COLOR="1")
    env.pop("GITHUB_ACTIONS", None)
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    reports = {fmt: (out_dir / f"r.{fmt}").read_text(encoding="utf-8") for fmt in FORMATS}
    reports["stderr"] = done.stderr
    return reports


def test_tokens_quoted_by_messages_are_masked_in_every_format(tmp_path):
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
        f"    environment: ['VLLM_API_KEY=${{NOPE:?{TOKEN}}}']\n"
        "    command: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, '999999']\n" + GPU, encoding="utf-8")
    (tmp_path / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
        f"          args: ['--model', 'https://user:{TOKEN}@huggingface.co/Qwen/Qwen2.5-1.5B-Instruct',\n"
        f"                 '--hf-tokn={TOKEN}', '--hf-token {TOKEN}',\n"
        f"                 '--hf-overrides', '{{\"x\": \"https://a:{PASSWORD}@b.example/\"}}']\n", encoding="utf-8")
    reports = _run(tmp_path)
    findings = json.loads(reports["json"])["findings"]
    # the messages that quoted the token are still there, masked at the same length
    assert any("hf_" + "*" * (len(TOKEN) - 3) in x["message"] for x in findings)
    for fmt, text in reports.items():
        assert TOKEN not in text, fmt
        assert PASSWORD not in text, fmt


@pytest.mark.parametrize("sep", ["\u2028", "\u2029"])
def test_unicode_line_separators_are_escaped_in_the_text_report(tmp_path, sep):
    name = f"a{sep}::error::x.yaml"
    (tmp_path / name).write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
        f"          args: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, '999999', --served-model-name, 'b{sep}::warning::y']\n",
        encoding="utf-8")
    reports = _run(tmp_path)
    for fmt in ("text", "markdown", "stderr"):
        assert sep not in reports[fmt], fmt
        assert not any(line.lstrip().startswith("::") for line in reports[fmt].splitlines()), fmt
    assert f"\\u{ord(sep):04x}" in reports["text"]
