"""A shell script that starts more than one vLLM server: vramlint reads the first and says, once, which lines hold
the others (it used to drop them without a word). Scripts are written to tmp_path and checked in a fresh process."""

from __future__ import annotations

import json

from tests._check_util import run_cli

MODEL = "Qwen/Qwen2.5-1.5B-Instruct"


def _findings(tmp_path, text: str) -> list[dict]:
    _, out = run_cli(tmp_path, text, "check", "--output-format", "json", name="run.sh")
    return json.loads(out)["findings"]


def test_a_second_server_is_said_once_with_its_line(tmp_path):
    text = (f"#!/bin/bash\nset -e\nvllm serve {MODEL} --max-num-seqs 8 --port 8001 &\n"
            f"exec vllm serve {MODEL} --max-model-len 999999\n")
    said = [x for x in _findings(tmp_path, text) if "commands that may start vLLM" in x["message"]]
    assert len(said) == 1
    assert said[0]["line"] == 3 and "lines 3, 4" in said[0]["message"]


def test_one_server_and_mentions_say_nothing(tmp_path):
    text = (f"#!/bin/bash\necho 'starting vllm'\npip show vllm\nexec vllm serve {MODEL} --max-num-seqs 8\n")
    assert not any("commands that may start vLLM" in x["message"] for x in _findings(tmp_path, text))


def test_a_process_search_in_an_if_is_no_start(tmp_path):
    # `if pgrep -f "vllm.entrypoints..."` tests whether a server runs; it starts nothing (audit20 C7)
    text = ("#!/bin/bash\nif pgrep -f \"vllm.entrypoints.openai.api_server\" > /dev/null; then\n  exit 0\nfi\n"
            f"exec python3 -m vllm.entrypoints.openai.api_server --model {MODEL} --max-num-seqs 8\n")
    assert not any("commands that may start vLLM" in x["message"] for x in _findings(tmp_path, text))

