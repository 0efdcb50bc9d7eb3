"""`python -m vllm.entrypoints.X` on a release that does not ship the module: runpy stops with ModuleNotFoundError
before vLLM parses an argument, so that is the one finding, on the command, and what the arguments would have met
(unknown flags) is folded into it (audit20 C4: a launcher after an unpinned `pip install vllm` was said to stop on
--ray-address, the second failure)."""

from __future__ import annotations

from vramlint.scan import scan

COMPOSE = """\
services:
  llm:
    image: vllm/vllm-openai:{tag}
    entrypoint: ["python3", "-m", "vllm.entrypoints.{module}"]
    command: ["--model", "facebook/opt-125m", "--no-such-flag"]
"""


def _errors(server):
    return [(e["code"], e["message"], e["location"].line) for e in server.startup_errors]


def test_a_removed_module_is_the_one_failure_and_folds_the_flags(tmp_path):
    path = tmp_path / "compose.yaml"
    path.write_text(COMPOSE.format(tag="v0.30.0", module="api_server"))
    [server] = scan([str(path)]).servers
    [(code, message, line)] = _errors(server)
    assert code == "import" and line == 4
    assert "No module named 'vllm.entrypoints.api_server'" in message and "vLLM 0.30.0" in message
    assert "the 1 argument error after it is never reached" in message
    assert not server.unknown_args  # VRL009 says nothing of --no-such-flag: argparse never runs


def test_a_release_that_ships_the_module_parses_the_arguments(tmp_path):
    path = tmp_path / "compose.yaml"
    path.write_text(COMPOSE.format(tag="v0.9.2", module="api_server"))
    [server] = scan([str(path)]).servers
    assert all(code != "import" for code, _, _ in _errors(server))
    assert "--no-such-flag" in server.unknown_args


def test_the_openai_server_module_is_shipped_by_every_release(tmp_path):
    path = tmp_path / "compose.yaml"
    path.write_text(COMPOSE.format(tag="v0.30.0", module="openai.api_server"))
    [server] = scan([str(path)]).servers
    assert all(code != "import" for code, _, _ in _errors(server))


def test_an_assumed_newest_release_makes_it_a_warning(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("#!/bin/bash\npip install -U vllm\n"
                    "exec python3 -m vllm.entrypoints.api_server --model facebook/opt-125m --ray-address head:6379\n")
    [server] = scan([str(path)]).servers
    [error] = server.startup_errors
    assert error["code"] == "import" and error["version_known"] is False and error["location"].line == 3
