"""docs/security.md is true: the caps it quotes are the code's, the message it shows is what vramlint prints,
the files it points to exist, and the switches it says only the command line can turn on have no
configuration key."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._check_util import concise_view

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")


def test_quoted_caps_are_the_codes():
    import inspect

    from vramlint import baseline, fsread
    from vramlint.helm import chart, extract_charts, render

    assert fsread.MAX_FILE_BYTES == 5 * 2**20 and "up to 5 MiB (`MAX_FILE_BYTES`)" in DOC
    assert chart.MAX_TEMPLATE_BYTES == 1_000_000 and "chart template is read up to 1 MB" in DOC
    assert baseline.MAX_BASELINE_BYTES == 64 * 2**20 and "baseline file is read up to 64 MiB" in DOC
    assert (render.COPY_MAX_FILES, render.COPY_MAX_BYTES) == (5000, 64 * 2**20)
    assert "at most 5,000 files and 64 MiB in all" in " ".join(DOC.split())
    assert inspect.signature(extract_charts).parameters["timeout_s"].default == 60.0 and "(60 s per chart)" in DOC
    from vramlint.report import text

    assert text.MAX_SHOWN_LINE == 300 and "a source line longer than 300 characters is shown as a window" in DOC


def test_quoted_hub_limits_are_the_codes():
    from vramlint import hub
    from vramlint.model import ResolveOptions
    from vramlint.models import DEFAULT_HUB_CACHE_MAX_AGE_DAYS

    text = " ".join(DOC.split())
    assert hub.CONFIG_CAP == 4 * 2**20 and "`config.json` is read up to 4 MiB" in text
    assert hub.SAFETENSORS_HEADER_CAP == 8 * 2**20 and "a safetensors header up to 8 MiB" in text
    assert hub.RUN_BUDGET_S == 5.0 and "end within 5 s of the first (`RUN_BUDGET_S`)" in text
    assert ResolveOptions().hub_timeout_s == 10.0 and "each request has a deadline (10 s)" in text
    assert (hub.CONNECT_TIMEOUT_S, hub.ANSWER_TIMEOUT_S) == (3.0, 4.0)
    assert "(3 s to connect, 4 s for the answer to begin)" in text
    assert hub.MAX_REDIRECTS == 5 and "followed at most 5 times" in text
    assert DEFAULT_HUB_CACHE_MAX_AGE_DAYS == 30 and "asked again after 30 days" in text


def test_files_it_points_to_exist():
    for path in set(re.findall(r"`(vramlint/[\w/]+\.py)`", DOC)):
        assert (ROOT / path).is_file(), path


def test_switches_only_the_command_line_turns_on():
    from vramlint.config import shipped_schema

    keys = shipped_schema()["properties"]
    assert "rules-dir" not in keys and "rules_dir" not in keys
    assert "cannot make vramlint run Helm" in keys["render-helm"]["description"]
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert "  render-helm:\n" in action and "--render-helm" in action


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="needs Linux /proc")
def test_the_refusal_it_shows_is_what_vramlint_prints(tmp_path):
    shown = re.search(r"`(compose\.yaml:4:15: VRL102 \[warning\] env_file /proc/self/environ is\s+outside the "
                      r"scanned tree) \.\.\.", DOC)
    assert shown, "the example finding is missing from docs/security.md"
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n    env_file: /proc/self/environ\n"
        '    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]\n')
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline", "--gpu", "L4"],
                          cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                          text=True, timeout=60, check=False)
    assert " ".join(shown.group(1).split()) in concise_view(proc.stdout)  # the line `--output-format concise` prints


def test_the_third_rounds_bounds_are_the_codes():
    from vramlint import assess, config, suppress, yamlload
    from vramlint.helm import chart, values

    text = " ".join(DOC.split())
    assert yamlload.MAX_DOCUMENT_NODES == 250_000 and "A document of more than 250,000 nodes" in text
    assert 2 * values.MAX_VALUES_NODES + 2 == 100_002 and "(a values file: 100,002, twice its limit of 50,000" in text
    assert chart.MAX_SUBCHARTS == 200 and "at most 200 subcharts are read under one chart" in text
    assert assess.MAX_SIZED_GPUS == 4096 and "An engine of more than 4,096 GPUs" in text
    assert suppress.MAX_META_PER_FILE == 200 and "VRL100/VRL101 findings past 200 per file" in text
    assert config._TOML_MAX_DEPTH == 100 and "TOML nested more than 100 levels deep" in text
