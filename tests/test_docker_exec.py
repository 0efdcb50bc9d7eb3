"""`docker exec [OPTIONS] CONTAINER COMMAND...` (podman, nerdctl): COMMAND runs in a container already running, a
command of its own. Its image is the one the same file started that container from (`docker run --name CONTAINER
IMAGE`), else not known (said). Read in shell scripts and in Ansible `shell:` / `command:` tasks. A file whose
server is not read is said on the line that starts it, not on a `pkill -f vllm...` before it."""

from __future__ import annotations

import textwrap

from vramlint.extract.mentions import first_mention
from vramlint.scan import scan


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_a_command_run_in_a_container_the_script_started_has_that_containers_image(tmp_path):
    path = _write(tmp_path, "start_cluster.sh", """\
        #!/bin/bash
        docker run -d --name ray-head --gpus '"device=0,1"' --ipc=host -e HF_HOME=/cache \\
            vllm/vllm-openai:v0.8.5 ray start --head --block
        pkill -f "vllm serve" || true
        docker exec -it -e VLLM_LOGGING_LEVEL=DEBUG -w /work -u 0 ray-head \\
            vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 --max-model-len 8192
        """)
    [server] = scan([path]).servers
    assert server.kind == "docker exec" and server.name == "ray-head"
    assert server.image == "vllm/vllm-openai:v0.8.5" and server.vllm_version == "0.8.5"
    assert server.image_location.line == 3
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["tensor_parallel_size"] == 2
    assert server.gpu is not None and server.gpu.count == 2 and server.shm
    assert server.env["HF_HOME"] == "/cache" and server.env["VLLM_LOGGING_LEVEL"] == "DEBUG"
    assert server.location.line == 6


def test_a_container_the_file_does_not_start_has_no_known_image(tmp_path):
    path = _write(tmp_path, "serve.sh", """\
        #!/bin/sh
        podman exec --detach --env=CUDA_VISIBLE_DEVICES=0 vllm-box python3 -m vllm.entrypoints.openai.api_server \\
            --model mistralai/Mistral-7B-Instruct-v0.3 --max-model-len 4096
        """)
    [server] = scan([path]).servers
    assert server.kind == "docker exec" and server.image is None and server.gpu is None
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3" and server.args["max_model_len"] == 4096
    assert any("vllm-box" in n and "not known" in n for n in server.notes)


def test_an_ansible_shell_task_running_docker_exec_is_read(tmp_path):
    _write(tmp_path, "run_model.yml", """\
        - hosts: head
          become: true
          vars:
            head_container: ray-head
            model_dir: /models/Qwen2.5-7B-Instruct
            tp: 2
          tasks:
            - name: Stop an old server
              shell: pkill -f vllm.entrypoints.openai.api_server || true
            - name: Start the vLLM server in the Ray head container
              shell: docker exec {{ head_container }} bash -lc "nohup python3 -m vllm.entrypoints.openai.api_server --model {{ model_dir }} --tensor-parallel-size {{ tp }} --max-model-len 2048 > /tmp/vllm.log 2>&1 &"
        """)
    result = scan([str(tmp_path)])
    [server] = result.servers
    assert server.kind == "Ansible shell task" and server.image is None
    assert server.model == "/models/Qwen2.5-7B-Instruct" and server.args["tensor_parallel_size"] == 2
    assert server.args["max_model_len"] == 2048 and server.location.line == 11
    assert not [p for p in result.problems if "no vLLM server could be read" in p.message]


def test_an_exec_option_not_of_docker_exec_is_not_guessed(tmp_path):
    path = _write(tmp_path, "serve.sh", """\
        #!/bin/bash
        docker exec --gpus all vllm-box vllm serve Qwen/Qwen2.5-7B-Instruct
        docker exec $EXEC_FLAGS vllm-box vllm serve Qwen/Qwen2.5-7B-Instruct
        """)
    result = scan([path])
    assert result.servers == []
    assert [p.level for p in result.problems] == ["note"]


def test_the_note_points_at_the_line_that_starts_the_server_not_a_pkill(tmp_path):
    _write(tmp_path, "run_model.yml", """\
        - hosts: head
          tasks:
            - name: Stop an old server
              shell: pkill -f vllm.entrypoints.openai.api_server || true
            - name: Start the vLLM server in the Ray head container
              shell: docker exec $EXEC_OPTS ray-head python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct
        """)
    [note] = [p for p in scan([str(tmp_path)]).problems if "no vLLM server could be read" in p.message]
    assert note.line == 6


def test_a_file_that_only_stops_or_prints_vllm_mentions_no_server(tmp_path):
    assert first_mention('#!/bin/sh\npgrep -f "vllm serve" && echo up\necho "run: vllm serve MODEL"\n') is None
    _write(tmp_path, "stop_model.yml", """\
        - hosts: head
          tasks:
            - name: Stop the server
              shell: docker exec ray-head pkill -f vllm.entrypoints.openai.api_server || true
        """)
    result = scan([str(tmp_path)])
    assert result.servers == [] and result.problems == []


def test_a_shell_string_run_by_docker_exec_keeps_its_known_words_beside_an_unknown_value(tmp_path):
    # an unrenderable Jinja2 value (Ansible's `groups`) makes only its words unknown, as in `sh -c` run directly
    _write(tmp_path, "run_model.yml", """\
        - hosts: bastion
          vars:
            head: ray-head
            tensor_parallel: "{{ groups['workers'] | length + 1 }}"
          tasks:
            - name: Start vLLM server with logging
              shell: |
                docker exec {{ head }} bash -lc " nohup python3 -m vllm.entrypoints.openai.api_server \\
                --model Qwen/Qwen2.5-7B-Instruct \\
                --tensor-parallel-size {{ tensor_parallel }} \\
                --distributed-executor-backend ray \\
                --max-model-len 2048 > /var/log/vllm.log 2>&1 & "
        """)
    [server] = scan([str(tmp_path)]).servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 2048
    assert server.args["distributed_executor_backend"] == "ray" and server.args["tensor_parallel_size"] is None
