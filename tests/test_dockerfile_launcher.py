"""A Dockerfile read alone (no compose service builds it) whose ENTRYPOINT/CMD runs a launcher script it COPYs
from the build context: the script is read from the Dockerfile's own folder, the context of the usual
`docker build .`, and the note says that context is assumed."""

from __future__ import annotations

import os
import textwrap

from vramlint.scan import scan

_LAUNCHER = """\
    #!/bin/sh
    set -e
    MODEL="${MODEL:-Qwen/Qwen2.5-3B-Instruct}"
    exec python3 -m vllm.entrypoints.openai.api_server --model "$MODEL" --max-model-len 6144 --enforce-eager
    """


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


def test_the_copied_launcher_is_read_from_the_dockerfiles_folder(tmp_path):
    root = _tree(tmp_path, {
        "serving/Dockerfile.gpu": """\
            FROM vllm/vllm-openai:v0.9.2
            WORKDIR /workspace
            COPY bin/serve.sh .
            ENTRYPOINT ["./serve.sh"]
            """,
        "serving/bin/serve.sh": _LAUNCHER})
    [server] = scan([root]).servers
    assert server.source_format == "dockerfile" and server.file.endswith("serving/Dockerfile.gpu")
    assert server.location.file == server.file and server.location.line == 4  # the ENTRYPOINT it runs
    assert server.model == "Qwen/Qwen2.5-3B-Instruct" and server.vllm_version == "0.9.2"
    assert server.model_location.file.endswith("serving/bin/serve.sh")
    assert server.args["max_model_len"] == 6144 and server.args["enforce_eager"] is True
    [note] = [n for n in server.notes if "serve.sh" in n]
    assert "COPY bin/serve.sh (line 3" in note and "build context" in note and "docker build" in note


def test_a_launcher_no_copy_puts_in_the_image_is_said_not_guessed(tmp_path):
    root = _tree(tmp_path, {
        "Dockerfile": """\
            FROM vllm/vllm-openai:v0.9.2
            RUN printf 'vllm serve other/model\\n' > /serve.sh && chmod +x /serve.sh
            ENTRYPOINT ["/serve.sh"]
            """,
        "serve.sh": _LAUNCHER})
    result = scan([root])
    # the image gives no server; the folder's serve.sh, which the image does not hold, is one of its own (the walk
    # reads the scripts that start vLLM), never the image's
    assert [(os.path.basename(s.file), s.kind) for s in result.servers] == [("serve.sh", "script")]
    [note] = [p for p in result.problems if p.file.endswith("Dockerfile")]
    assert note.level == "note" and "/serve.sh" in note.message and "COPY" in note.message
    assert note.line == 3


def test_a_dockerfile_a_compose_service_builds_is_read_once_through_it(tmp_path):
    root = _tree(tmp_path, {
        "compose.yaml": """\
            services:
              engine:
                build: .
                gpus: all
            """,
        "Dockerfile": """\
            FROM vllm/vllm-openai:v0.9.2
            COPY bin/serve.sh /serve.sh
            ENTRYPOINT ["/serve.sh"]
            """,
        "bin/serve.sh": _LAUNCHER})
    [server] = scan([root]).servers
    assert server.source_format == "compose" and server.model == "Qwen/Qwen2.5-3B-Instruct"


def test_a_cmd_on_vllms_own_entrypoint_says_docker_passes_it_as_arguments(tmp_path):
    root = _tree(tmp_path, {
        "Dockerfile": """\
            FROM vllm/vllm-openai:v0.9.2
            COPY bin/serve.sh /serve.sh
            CMD ["/serve.sh"]
            """,
        "bin/serve.sh": _LAUNCHER})
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-3B-Instruct"
    assert any("sets no ENTRYPOINT" in n and "as arguments" in n for n in server.notes)
