"""A compose service built from a Dockerfile whose ENTRYPOINT/CMD runs a launcher script: the script is read from
the build context through the COPY/ADD that put it in the image (WORKDIR applied), unless the service's bind mount
covers that path, or the last COPY to it is from another stage."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan

_COMPOSE = """\
    services:
      vllm-engine:
        build:
          context: ./engine
          dockerfile: Dockerfile.serve
        deploy:
          resources:
            reservations:
              devices:
                - driver: nvidia
                  count: 1
                  capabilities: [gpu]
    """

_LAUNCHER = """\
    #!/usr/bin/env bash
    set -euo pipefail
    echo "starting"
    exec vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192 --gpu-memory-utilization 0.85
    """


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path / "compose.yaml")


def test_a_relative_entrypoint_is_the_file_copied_into_the_workdir(tmp_path):
    path = _tree(tmp_path, {
        "compose.yaml": _COMPOSE,
        "engine/Dockerfile.serve": """\
            FROM vllm/vllm-openai:v0.10.1
            WORKDIR /srv
            COPY launch/run-server.sh bin/
            ENTRYPOINT ["./bin/run-server.sh"]
            """,
        "engine/launch/run-server.sh": _LAUNCHER})
    result = scan([path])
    [server] = result.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.vllm_version == "0.10.1"
    assert server.args["max_model_len"] == 8192 and server.args["gpu_memory_utilization"] == 0.85
    assert server.model_location.file.endswith("run-server.sh")
    assert any("COPY launch/run-server.sh (line 3" in n for n in server.notes)


def test_a_script_inside_a_copied_folder_is_found_under_it(tmp_path):
    path = _tree(tmp_path, {
        "compose.yaml": _COMPOSE,
        "engine/Dockerfile.serve": """\
            FROM vllm/vllm-openai:v0.10.1
            COPY . /opt/app
            CMD ["bash", "/opt/app/tools/start.sh"]
            """,
        "engine/tools/start.sh": _LAUNCHER})
    [server] = scan([path]).servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"


def test_the_last_copy_wins_and_one_from_another_stage_is_not_the_repository_file(tmp_path):
    path = _tree(tmp_path, {
        "compose.yaml": _COMPOSE,
        "engine/Dockerfile.serve": """\
            FROM python:3.12-slim AS gen
            RUN echo 'exec vllm serve other/model' > /start.sh
            FROM vllm/vllm-openai:v0.10.1
            COPY start.sh /start.sh
            COPY --from=gen /start.sh /start.sh
            ENTRYPOINT ["/start.sh"]
            """,
        "engine/start.sh": _LAUNCHER})
    result = scan([path])
    assert result.servers == []
    [note] = [p for p in result.problems if "service vllm-engine" in p.message]
    assert "no COPY/ADD of" in note.message and note.level == "note"


def test_a_bind_mount_over_the_path_is_what_the_container_runs(tmp_path):
    compose = _COMPOSE.replace("    deploy:", "    volumes:\n          - ./override:/srv/bin\n        deploy:")
    path = _tree(tmp_path, {
        "compose.yaml": compose,
        "engine/Dockerfile.serve": """\
            FROM vllm/vllm-openai:v0.10.1
            WORKDIR /srv
            COPY launch/run-server.sh bin/
            ENTRYPOINT ["./bin/run-server.sh"]
            """,
        "engine/launch/run-server.sh": _LAUNCHER,
        "override/run-server.sh": _LAUNCHER.replace("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct")})
    [server] = scan([path]).servers
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct"
