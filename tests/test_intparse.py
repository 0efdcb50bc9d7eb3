"""Numbers in scanned files that `str.isdigit()` accepts but `int()` refuses: digits past Python's 4,300-digit
int-string limit, and digits that are no decimal ('²'). Each was "vramlint failed while reading this file"
(or "service could not be read") in the reader named; now the value is unknown and the server is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from vramlint.intparse import small_int
from vramlint.scan import scan

HUGE = "9" * 5000


def test_small_int():
    assert small_int(" 42 ") == 42 and small_int("0") == 0
    assert small_int(HUGE) is None and small_int("²") is None and small_int("-1") is None
    assert small_int("1" * 18) == int("1" * 18) and small_int("1" * 19) is None and small_int(7) is None


CASES = {
    "docker run --gpus": ("run.sh", f"#!/bin/sh\ndocker run --gpus {HUGE} vllm/vllm-openai:v0.10.2 "
                                    "--model meta-llama/Llama-3.1-8B-Instruct\n"),
    "image tag major": ("compose.yaml", f"services:\n  v:\n    image: vllm/vllm-openai:v{HUGE}.0.0\n"
                                        "    command: --model meta-llama/Llama-3.1-8B-Instruct\n"),
    "dstack gpu count": (".dstack.yml", "type: service\nimage: vllm/vllm-openai:v0.10.2\ncommands:\n"
                                        "  - vllm serve meta-llama/Llama-3.1-8B-Instruct\nport: 8000\n"
                                        f"resources:\n  gpu: 24GB:{HUGE}\n"),
    "CUDA_VISIBLE_DEVICES superscript": (
        "compose.yaml", "services:\n  v:\n    image: vllm/vllm-openai:v0.10.2\n"
                        "    command: --model meta-llama/Llama-3.1-8B-Instruct\n"
                        "    environment:\n      CUDA_VISIBLE_DEVICES: \"²,3\"\n    deploy:\n      resources:\n"
                        "        reservations:\n          devices:\n            - driver: nvidia\n"
                        "              device_ids: [\"0\", \"1\"]\n              capabilities: [gpu]\n"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_number_int_refuses_is_unknown_not_a_failed_file(tmp_path: Path, case: str):
    name, text = CASES[case]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    inventory = scan([str(path)])
    assert [s.model for s in inventory.servers] == ["meta-llama/Llama-3.1-8B-Instruct"]
    failed = [p.message for p in inventory.problems if "failed" in p.message or "could not be read" in p.message]
    assert failed == []


def test_a_third_party_tag_older_than_every_tabled_release_is_no_assumed_version():
    import json

    from vramlint import versions

    table = json.loads((Path(versions.__file__).parent / "data" / "vllm_args.json").read_text())
    assert versions.parse_version(table["versions"][0])[:3] == versions.OLDEST_TABLED_RELEASE
    # audit21 C16: a builder image tagged 0.1.0 whose container installs vLLM from source
    assert versions.assumed_version_from_tag("ghcr.io/acme/vllm-dev-pplx:0.1.0") is None
    assert versions.assumed_version_from_tag("substratusai/vllm-gh200:v0.8.3") == "0.8.3"
