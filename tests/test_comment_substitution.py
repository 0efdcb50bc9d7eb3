"""A command substitution that holds only a comment (`` `# why` `` or `$(# why)`, the idiom for commenting the
continued lines of a long `docker run`) runs nothing and expands to nothing: the words around it are the
command's, and the launch is read. A substitution that runs a command is still unknown."""

from __future__ import annotations

from vramlint.scan import scan

SCRIPT = """\
#!/usr/bin/env bash
IMAGE="vllm/vllm-openai:v0.9.2"
docker run -d --name bench --gpus all \\
  `# the pair has no NVLink: keep peer-to-peer off` \\
  -e NCCL_P2P_DISABLE=1 \\
  --ipc=host \\
  "$IMAGE" --model Qwen/Qwen2.5-7B-Instruct \\
    $(# two GPUs, one engine) \\
    --tensor-parallel-size 2 \\
    --max-model-len {LEN}
"""


def _server(tmp_path, text):
    path = tmp_path / "serve.sh"
    path.write_text(text)
    return scan([str(path)]).servers


def test_a_commented_docker_run_is_read_whole(tmp_path):
    [server] = _server(tmp_path, SCRIPT.replace("{LEN}", "8192"))
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.args["tensor_parallel_size"] == 2 and server.args["max_model_len"] == 8192
    assert server.env["NCCL_P2P_DISABLE"] == "1"


def test_a_substitution_that_runs_a_command_is_unknown(tmp_path):
    [server] = _server(tmp_path, SCRIPT.replace("{LEN}", "`cat max_len.txt`"))
    assert server.args.get("max_model_len") is None  # known only at run time
    assert server.args["tensor_parallel_size"] == 2
