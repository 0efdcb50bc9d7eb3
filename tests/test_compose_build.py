"""A compose service built from a Dockerfile of the repository runs the image that Dockerfile makes: its FROM (the
vLLM image and version), its ENTRYPOINT/CMD where compose sets none, its ENV; never built."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main
from vramlint.scan import scan


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path / "compose.yaml")


def _check(capsys, path):
    code = main(["check", path, "--offline", "--output-format", "json", "--fail-on", "error"])
    return code, json.loads(capsys.readouterr().out)


_COMPOSE_COMMAND = """\
    services:
      vllm:
        build: ./vllm-server
        command:
          - "--model"
          - "facebook/opt-125m"
          - "--max-model-length"
          - "2048"
        deploy:
          resources:
            reservations:
              devices:
                - driver: nvidia
                  count: 1
                  capabilities: [gpu]
    """


def test_the_compose_command_runs_on_the_vllm_image_the_dockerfile_starts_from(tmp_path, capsys):
    path = _tree(tmp_path, {
        "compose.yaml": _COMPOSE_COMMAND,
        "vllm-server/Dockerfile": """\
            ARG VLLM_TAG=v0.9.2
            FROM vllm/vllm-openai:${VLLM_TAG}
            RUN pip install --no-cache-dir opentelemetry-sdk
            ENV VLLM_LOGGING_LEVEL=DEBUG \\
                HF_HOME=/models
            """})
    [server] = scan([path]).servers
    assert server.model == "facebook/opt-125m" and server.vllm_version == "0.9.2"
    assert server.image == "vllm/vllm-openai:v0.9.2" and server.gpu.count == 1
    assert server.model_location.file.endswith("compose.yaml") and server.model_location.line == 6
    # ENV lines of the Dockerfile are the container's environment, at their own line
    assert server.env["HF_HOME"] == "/models"
    assert server.env_locations["HF_HOME"].file.endswith("Dockerfile") and server.env_locations["HF_HOME"].line == 5
    assert server.image_location.file.endswith("Dockerfile") and server.image_location.line == 2
    code, report = _check(capsys, path)
    [error] = [f for f in report["findings"] if f["level"] == "error"]
    # set by compose: said on the compose line
    assert error["file"].endswith("compose.yaml") and error["line"] == 7 and "--max-model-length" in error["message"]
    assert not any("not checked" in f["message"] or "built from" in f["message"] for f in report["findings"])


def test_target_stage_chain_build_args_and_the_dockerfiles_own_command(tmp_path, capsys):
    path = _tree(tmp_path, {
        "compose.yaml": """\
            services:
              chat:
                build:
                  context: ./images
                  dockerfile: serve.Dockerfile
                  target: serve
                  args:
                    VLLM_VERSION: v0.8.5
                gpus: all
            """,
        "images/serve.Dockerfile": """\
            # syntax=docker/dockerfile:1
            ARG VLLM_VERSION=v0.10.0
            FROM vllm/vllm-openai:${VLLM_VERSION} AS base
            ENV VLLM_USE_V1=1
            RUN <<EOF
            pip install flashinfer
            FROM python:3.12
            EOF

            FROM base AS serve
            ENTRYPOINT vllm serve Qwen/Qwen2.5-1.5B-Instruct \\
                --max-model-len 8192 \\
                # comment lines inside a continued instruction are dropped by Docker
                --gpu-memory-utilisation 0.8

            FROM python:3.12-slim AS client
            CMD ["python", "client.py"]
            """})
    [server] = scan([path]).servers
    # the target stage, FROM the base stage, FROM the vLLM image whose tag the compose build arg sets
    assert server.vllm_version == "0.8.5" and server.model == "Qwen/Qwen2.5-1.5B-Instruct"
    assert server.args["max_model_len"] == 8192 and server.env["VLLM_USE_V1"] == "1"
    assert server.model_location.file.endswith("serve.Dockerfile") and server.model_location.line == 11
    assert server.arg_locations["max_model_len"].line == 12
    code, report = _check(capsys, path)
    [error] = [f for f in report["findings"] if f["level"] == "error"]
    # only in the Dockerfile: said on the Dockerfile's line
    assert error["file"].endswith("serve.Dockerfile") and error["line"] == 14 and code == 1


def test_compose_entrypoint_clears_the_dockerfile_cmd_and_exec_form_is_read(tmp_path):
    files = {
        "Dockerfile": """\
            FROM vllm/vllm-openai:v0.9.1
            ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]
            CMD ["--model", "facebook/opt-125m"]
            """,
        "compose.yaml": """\
            services:
              own:
                build: .
              replaced:
                build: .
                entrypoint: ["vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct"]
            """}
    path = _tree(tmp_path, files)
    servers = {s.name: s for s in scan([path]).servers}
    assert servers["own"].model == "facebook/opt-125m" and servers["own"].model_location.line == 3
    assert servers["own"].model_location.file.endswith("Dockerfile")
    # compose's entrypoint replaces the ENTRYPOINT and clears the image's CMD
    assert servers["replaced"].model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert servers["replaced"].model_location.file.endswith("compose.yaml")


def test_an_unset_argument_in_from_is_said_once_with_what_sets_it(tmp_path):
    path = _tree(tmp_path, {
        "compose.yaml": _COMPOSE_COMMAND,
        "vllm-server/Dockerfile": """\
            ARG BASE_IMAGE
            FROM ${BASE_IMAGE}
            """})
    inv = scan([path])
    assert inv.servers == []
    [note] = [p for p in inv.problems if "BASE_IMAGE" in p.message]
    assert note.level == "note" and note.line == 2 and "build.args" in note.message
    # a build that names vLLM nowhere is no vLLM server left unchecked: nothing to say
    quiet = _tree(tmp_path / "app", {
        "compose.yaml": "services:\n  web:\n    build: ./web\n  llm:\n    image: vllm/vllm-openai:v0.9.2\n",
        "web/Dockerfile": "ARG PY\nFROM ${PY}\nCMD [\"gunicorn\", \"app\"]\n"})
    inv = scan([quiet])
    assert [s.name for s in inv.servers] == ["llm"] and not any("built from" in p.message for p in inv.problems)


def test_a_dockerfile_outside_the_tree_or_missing_keeps_the_note(tmp_path):
    (tmp_path / "vllm-image").mkdir()
    (tmp_path / "vllm-image" / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.9.2\n")
    repo = tmp_path / "repo"
    compose = _COMPOSE_COMMAND.replace("build: ./vllm-server", "build: ../vllm-image")
    path = _tree(repo, {"compose.yaml": compose})
    inv = scan([path])
    assert inv.servers == []
    [note] = [p for p in inv.problems if "built from" in p.message]
    assert "outside the scanned tree" in note.message and "not checked" in note.message
    missing = _tree(tmp_path / "other", {"compose.yaml": _COMPOSE_COMMAND})
    inv = scan([missing])
    [note] = [p for p in inv.problems if "built from" in p.message]
    assert "not among the scanned files" in note.message and "image:" in note.message


def test_a_base_that_is_not_vllm_runs_what_the_dockerfile_says(tmp_path):
    path = _tree(tmp_path, {
        "compose.yaml": """\
            services:
              api:
                build: ./app
              pip-vllm:
                build: ./serve
            """,
        "app/Dockerfile": """\
            FROM python:3.12-slim
            CMD ["uvicorn", "app:api"]
            """,
        "serve/Dockerfile": """\
            FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
            RUN pip install vllm==0.9.2
            CMD ["vllm", "serve", "facebook/opt-125m"]
            """})
    inv = scan([path])
    [server] = inv.servers
    # the command is the Dockerfile's own; the image it starts from does not say the vLLM version, the RUN that
    # pins it does
    assert server.name == "pip-vllm" and server.model == "facebook/opt-125m" and server.vllm_version == "0.9.2"
    assert not any("api" in p.message for p in inv.problems)


def test_bounds_of_a_dockerfile_are_said(tmp_path):
    stages = "".join(f"FROM vllm/vllm-openai:v0.9.2 AS s{i}\n" for i in range(70))
    path = _tree(tmp_path, {"compose.yaml": _COMPOSE_COMMAND, "vllm-server/Dockerfile": stages})
    inv = scan([path])
    assert inv.servers == []
    [note] = [p for p in inv.problems if "built from" in p.message]
    assert "more than 64 stages" in note.message


def test_a_dockerfile_cmd_running_a_relative_launcher_is_a_program_not_the_model(tmp_path):
    # `CMD ["./launch_server.sh"]` on an image with vLLM in it: the container runs the script (which builds its
    # own `vllm serve` line), so "./launch_server.sh" is no model; what vramlint does not read is said, naming the
    # launcher, not as if the base were no vLLM image
    path = _tree(tmp_path, {
        "compose.yaml": """\
            services:
              vllm:
                build:
                  context: ./server
                environment:
                  - VLLM_MODEL=org/model
            """,
        "server/Dockerfile": """\
            FROM nvcr.io/nvidia/vllm:25.11-py3
            WORKDIR /app
            COPY launch_server.sh .
            CMD ["./launch_server.sh"]
            """})
    inv = scan([path])
    assert not any(s.model == "./launch_server.sh" for s in inv.servers), [(s.name, s.model) for s in inv.servers]
    [note] = [p for p in inv.problems if "built from" in p.message]
    assert "./launch_server.sh (line 4)" in note.message and "not a vLLM image" not in note.message
    assert note.level == "note"


def test_a_relative_script_is_a_program_and_a_relative_model_directory_is_not():
    from vramlint.cmdline import _looks_like_command

    assert _looks_like_command("./launch_server.sh") and _looks_like_command("../bin/start.sh")
    assert not _looks_like_command("./models/qwen") and not _looks_like_command("Qwen/Qwen2.5-7B-Instruct")

_BUILD_ONLY = """\
    services:
      vllm:
        build: {context: ., dockerfile: Dockerfile}
        gpus: all
    """
_SERVE = 'ENTRYPOINT ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]\n'


def test_a_default_holding_variables_is_expanded_as_buildkit_does(tmp_path):
    dockerfile = ("ARG TAG\nARG REPO=vllm/vllm-openai\nFROM ${REPO}:${TAG:-${FALLBACK:-v0.9.2}}\n" + _SERVE)
    path = _tree(tmp_path, {"compose.yaml": _BUILD_ONLY, "Dockerfile": dockerfile})
    [server] = scan([path]).servers
    assert server.image == "vllm/vllm-openai:v0.9.2" and server.vllm_version == "0.9.2"


def test_expansions_past_the_limits_are_said_on_the_dockerfile_line(tmp_path):
    nested = "${A:-" * 40 + "v0.9.2" + "}" * 40
    doubling = "ARG A0=abcdefgh\n" + "".join(f"ARG A{i}=${{A{i - 1}}}${{A{i - 1}}}\n" for i in range(1, 12))
    for dockerfile, line, words in ((f"ARG B=1\nFROM vllm/vllm-openai:{nested}\n" + _SERVE, 2, "nested more than 32"),
                                    (doubling + "FROM vllm/vllm-openai:${A11}\n" + _SERVE, 11, "ARG A10: a value longer")):
        path = _tree(tmp_path, {"compose.yaml": _BUILD_ONLY, "Dockerfile": dockerfile})
        inv = scan([path])
        [server] = inv.servers  # the ENTRYPOINT still starts vLLM: the server is read, its version unknown
        [bound] = [p for p in inv.problems if "vramlint's limit" in p.message]
        assert bound.file.endswith("Dockerfile") and bound.line == line and words in bound.message
        assert bound.level == "warning"
        assert any("past one of vramlint's limits" in n for n in server.notes)


def test_a_dockerfile_past_the_stage_bound_that_names_vllm_is_said(tmp_path):
    stages = "FROM vllm/vllm-openai:v0.9.2 AS s0\n" + "".join(f"FROM s{i - 1} AS s{i}\n" for i in range(1, 100))
    path = _tree(tmp_path, {"compose.yaml": _BUILD_ONLY, "Dockerfile": stages + _SERVE})
    inv = scan([path])
    [note] = [p for p in inv.problems if "built from" in p.message]
    assert "more than 64 stages" in note.message and "line 65" in note.message
    assert "Dockerfile names vLLM" in note.message
