"""A launch script that starts vLLM's container on another host over ssh (`ssh HOST "docker run ... IMAGE ..."`):
the remote shell runs the string ssh sends, so its `docker run` is read as a local one is, its GPUs the host's.
A remote command built at run time (`ssh HOST "$CMD"`) is not read, and that is said, never left silent."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan


def _script(tmp_path, text):
    path = tmp_path / "deploy_remote.sh"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_a_docker_run_in_an_ssh_string_is_the_remote_hosts_server(tmp_path):
    path = _script(tmp_path, """\
        #!/usr/bin/env bash
        set -euo pipefail
        TARGET=ops@10.0.0.7
        echo "deploying vLLM"
        ssh -p 2222 "$TARGET" 'docker run -d --gpus "device=0,1" --ipc=host vllm/vllm-openai:v0.8.5 --model mistralai/Mistral-7B-Instruct-v0.3 -tp 2 --max-model-len 12000'
        """)
    [server] = scan([path]).servers
    assert server.kind == "docker run" and server.image == "vllm/vllm-openai:v0.8.5"
    assert server.vllm_version == "0.8.5" and server.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert server.args["tensor_parallel_size"] == 2 and server.args["max_model_len"] == 12000
    assert server.gpu is not None and server.gpu.count == 2
    assert server.model_location.line == 5
    assert any("ops@10.0.0.7" in n for n in server.notes)


def test_a_remote_command_built_at_run_time_is_said(tmp_path):
    path = _script(tmp_path, """\
        #!/usr/bin/env bash
        IMAGE=vllm/vllm-openai:latest
        RUN_CMD=$(cat <<EOF
        docker run -d --gpus all $IMAGE --model Qwen/Qwen2.5-7B-Instruct
        EOF
        )
        ssh -o BatchMode=yes gpu-host "$RUN_CMD"
        """)
    result = scan([path])
    assert result.servers == []
    [note] = result.problems
    assert note.level == "note" and note.line == 7 and "remote command is not read" in note.message


def test_an_ssh_command_that_starts_no_container_says_nothing(tmp_path):
    path = _script(tmp_path, """\
        #!/usr/bin/env bash
        echo "the vLLM box"
        docker ps
        ssh gpu-host "nvidia-smi"
        ssh $SSH_FLAGS gpu-host "docker logs --tail 20 vllm-engine"
        """)
    result = scan([path])
    assert result.servers == [] and result.problems == []
