"""Compose `command:` and `entrypoint:` as compose joins them (compose-spec; docker's ENTRYPOINT + CMD): a folded
or literal block scalar, a string continued with backslashes (split by compose's shellwords, which keeps an
escaped line break as a character of the next word, so vLLM gets `\\n--max-model-len` as a positional), a shell
given its script by `entrypoint: [sh, -c]` + `command`, and `entrypoint: []` / `''`, which clears the image's
entrypoint so that `command` alone is the command line."""

from __future__ import annotations

import pytest

from vramlint.scan import scan

IMAGE = "vllm/vllm-openai:v0.9.2"
MODEL = "facebook/opt-1.3b"


def _scan(tmp_path, service: str):
    path = tmp_path / "compose.yaml"
    path.write_text(f"services:\n  engine:\n    image: {IMAGE}\n{service}")
    return scan([str(path)])


READ = {
    "folded": f"    command: >\n      --model {MODEL}\n      --max-model-len 3072\n",
    "literal one line per option": f"    command: |\n      --model {MODEL}\n      --max-model-len 3072\n",
    "entrypoint sh -c, command list": f'    entrypoint: ["/bin/sh", "-c"]\n    command: ["vllm serve {MODEL} '
                                      '--max-model-len 3072"]\n',
    "entrypoint string, command folded": f"    entrypoint: /bin/bash -c\n    command: >\n      'vllm serve {MODEL}\n"
                                         "      --max-model-len 3072'\n",
    "entrypoint list with a literal script": f"    entrypoint:\n      - bash\n      - -c\n      - |\n"
                                             f"        pip install -q hf_transfer\n        vllm serve {MODEL} \\\n"
                                             "          --max-model-len 3072\n",
    "entrypoint the api_server module": "    entrypoint: python3 -m vllm.entrypoints.openai.api_server\n"
                                        f"    command: --model {MODEL} --max-model-len 3072\n",
    "entrypoint vllm serve": f'    entrypoint: ["vllm", "serve"]\n    command: {MODEL} --max-model-len 3072\n',
    "entrypoint [] with a whole command": f"    entrypoint: []\n    command: vllm serve {MODEL} --max-model-len 3072\n",
    "entrypoint null keeps the image's": f"    entrypoint: null\n    command: [--model, {MODEL}, --max-model-len, '3072']\n",
}


@pytest.mark.parametrize("name", sorted(READ))
def test_the_command_compose_runs_is_read(tmp_path, name):
    inv = _scan(tmp_path, READ[name])
    [server] = inv.servers
    assert server.model == MODEL and server.args["max_model_len"] == 3072, name
    assert not server.startup_errors, name


def test_backslash_continuations_in_a_literal_block_reach_vllm_as_words_of_their_own(tmp_path):
    inv = _scan(tmp_path, f"    command: |\n      --model {MODEL} \\\n      --max-model-len 3072\n")
    [server] = inv.servers
    assert "max_model_len" not in server.args
    [error] = server.startup_errors
    assert "unrecognized arguments" in error["message"]


@pytest.mark.parametrize("entrypoint", ["[]", "''"])
def test_an_emptied_entrypoint_makes_command_the_program(tmp_path, entrypoint):
    inv = _scan(tmp_path, f"    entrypoint: {entrypoint}\n    command: --model {MODEL} --max-model-len 3072\n")
    [server] = inv.servers
    [error] = server.startup_errors
    assert error["code"] == "exec" and "'--model'" in error["message"]
    assert error["location"].line == 5
