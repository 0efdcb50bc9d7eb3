"""`docker exec CONTAINER COMMAND` in a GitHub Actions step's `run:`: COMMAND is read as a command of its own, in
the container an earlier step of the job started (`docker run -d --name CONTAINER IMAGE ...`: its image, devices
and /dev/shm), else in a container this file does not start (said)."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan

WORKFLOW = """\
    name: serve
    on: push
    jobs:
      serve:
        runs-on: [self-hosted, gpu]
        steps:
    {start}      - name: start vLLM
            run: |
              docker exec -e VLLM_LOGGING_LEVEL=DEBUG engine vllm serve Qwen/Qwen2.5-7B-Instruct \\
                --tensor-parallel-size 2 --max-model-len 4096
    """
START = """\
      - name: start engine container
        run: docker run -d --name engine --gpus all --ipc=host vllm/vllm-openai:v0.9.2 sleep infinity
"""


def _scan(tmp_path, start):
    path = tmp_path / ".github" / "workflows" / "serve.yml"
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent(WORKFLOW).format(start=start))
    return scan([str(tmp_path)])


def test_docker_exec_in_a_step_runs_in_the_container_an_earlier_step_started(tmp_path):
    result = _scan(tmp_path, START)
    [server] = result.servers
    assert server.source_format == "github-actions" and server.kind == "GitHub Actions job (docker exec)"
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["tensor_parallel_size"] == 2
    assert server.image == "vllm/vllm-openai:v0.9.2" and server.vllm_version == "0.9.2"
    assert server.env["VLLM_LOGGING_LEVEL"] == "DEBUG"
    # placed on the step's own lines
    assert server.model_location.line == 11 and server.arg_locations["tensor_parallel_size"].line == 12
    assert not any("does not start" in n for n in server.notes)


def test_docker_exec_of_a_container_the_workflow_does_not_start_is_read_and_said(tmp_path):
    result = _scan(tmp_path, "      - run: pip install vllm==0.9.2\n")
    [server] = result.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.image is None
    assert any("the container engine" in n and "does not start" in n for n in server.notes)
    # the runner's pip install is not the container's vLLM: said, not taken
    assert server.vllm_version is None and any("installs vllm==0.9.2" in n and "may be another" in n
                                               for n in server.notes)
