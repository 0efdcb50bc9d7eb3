"""Container runs a script starts inside a command substitution (`CID=$(docker run -d ...)`), and the values a
container run takes from a file the script sources through its own folder (`source "$DIR/serving.env"`)."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_docker_run_whose_output_an_assignment_takes_is_a_server(tmp_path):
    path = _write(tmp_path / "start.sh", """\
        #!/usr/bin/env bash
        set -euo pipefail
        MODEL=Qwen/Qwen3-8B
        CONTAINER_ID=$(docker run -d \\
            --name qwen \\
            --gpus all \\
            -p 8000:8000 \\
            vllm/vllm-openai:v0.24.0 \\
            --model "${MODEL}" --max-model-len 8192)
        echo "${CONTAINER_ID}" > container.id
        """)
    inv = scan([path])
    [server] = inv.servers
    assert server.kind == "docker run" and server.image == "vllm/vllm-openai:v0.24.0"
    assert server.model == "Qwen/Qwen3-8B" and server.args["max_model_len"] == 8192
    assert server.location.line == 8  # the image's word, on the script's own line
    assert server.gpu is not None and server.gpu.evidence == "--gpus all"


def test_backquoted_docker_run_is_a_server(tmp_path):
    path = _write(tmp_path / "start.sh", """\
        #!/bin/sh
        cid=`docker run -d --gpus all vllm/vllm-openai:v0.24.0 --model Qwen/Qwen3-8B`
        """)
    [server] = scan([path]).servers
    assert server.model == "Qwen/Qwen3-8B" and server.location.line == 2


def test_image_and_model_from_a_file_sourced_through_the_scripts_folder(tmp_path):
    _write(tmp_path / "config" / "serving.env", """\
        # shared settings
        MODEL_ROOT="/mnt/models"
        MODEL_PATH="${MODEL_ROOT}/Qwen3-8B"
        VLLM_IMAGE="vllm/vllm-openai:v0.24.0"
        MAX_LEN=16384
        """)
    path = _write(tmp_path / "scripts" / "start.sh", """\
        #!/usr/bin/env bash
        SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
        source "${SCRIPT_DIR}/../config/serving.env"
        ARGS=(--model "${MODEL_PATH}" --max-model-len "${MAX_LEN}")
        CID=$(docker run -d --gpus all "${VLLM_IMAGE}" "${ARGS[@]}")
        """)
    inv = scan([path, str(tmp_path / "config")])
    [server] = inv.servers
    assert server.image == "vllm/vllm-openai:v0.24.0" and server.vllm_version == "0.24.0"
    assert server.model == "/mnt/models/Qwen3-8B"  # the sourced file's own reference expanded
    assert server.args["max_model_len"] == 16384


def test_a_sourced_file_outside_the_scanned_paths_is_said_not_read(tmp_path):
    _write(tmp_path / "config" / "serving.env", 'VLLM_IMAGE="vllm/vllm-openai:v0.24.0"\n')
    path = _write(tmp_path / "scripts" / "start.sh", """\
        #!/usr/bin/env bash
        SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
        source "${SCRIPT_DIR}/../config/serving.env"
        CID=$(docker run -d --gpus all "${VLLM_IMAGE}" --model Qwen/Qwen3-8B)
        """)
    inv = scan([path])
    assert inv.servers == []
    [problem] = inv.problems
    assert problem.line == 3 and "../config/serving.env is outside the scanned tree" in problem.message


def test_a_folder_variable_assigned_twice_is_not_taken_for_the_scripts_folder(tmp_path):
    _write(tmp_path / "serving.env", 'VLLM_IMAGE="vllm/vllm-openai:v0.24.0"\n')
    path = _write(tmp_path / "start.sh", """\
        #!/usr/bin/env bash
        DIR="$(cd "$(dirname "$0")" && pwd)"
        DIR=/opt/deploy
        source "$DIR/serving.env"
        docker run -d --gpus all "${VLLM_IMAGE}" --model Qwen/Qwen3-8B
        """)
    assert scan([path]).servers == []  # /opt/deploy/serving.env is not the neighbour read here
