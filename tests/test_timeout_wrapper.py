"""`timeout [OPTION] DURATION COMMAND` (GNU coreutils) runs COMMAND: a `vllm serve` or a `docker run` of a vLLM
image under it is read as it would be without it; a duration known only at run time leaves the command unknown."""

from __future__ import annotations

from vramlint.scan import scan


def _servers(tmp_path, line):
    path = tmp_path / "serve.sh"
    path.write_text(f"#!/usr/bin/env bash\n{line}\n")
    return scan([str(path)]).servers


def test_a_server_under_timeout_is_read(tmp_path):
    for line in ("timeout 3600 vllm serve facebook/opt-125m --max-model-len 2048",
                 "timeout -k 10 --preserve-status 1h vllm serve facebook/opt-125m --max-model-len 2048",
                 "timeout --signal=INT 600 docker run --gpus all vllm/vllm-openai:v0.9.2 "
                 "--model facebook/opt-125m --max-model-len 2048"):
        [server] = _servers(tmp_path, line)
        assert server.model == "facebook/opt-125m" and server.args["max_model_len"] == 2048, line


def test_a_duration_known_only_at_run_time_is_not_guessed(tmp_path):
    assert _servers(tmp_path, 'timeout "$T" vllm serve facebook/opt-125m') == []
