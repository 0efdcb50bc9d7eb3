"""Fixes made with the held-out-22 batch in view, each on fixtures of its own: a server started through
`hatch run` (hatch's own command syntax) is read; Akash SDL services are read as the Akash provider builds their
containers (command, args, env, and the GPU units and models of the service's compute profile); a Baseten Truss
config's `docker_server.start_command` is read in its base image with the accelerator it asks for."""

from __future__ import annotations

from pathlib import Path

import pytest

from vramlint.scan import scan


def _scan(tmp_path: Path, name: str, text: str):
    f = tmp_path / name
    f.write_text(text)
    return scan([str(f)])


CI_WORKFLOW = """name: integration
on: [push]
env:
  SERVED: "Qwen/Qwen2.5-0.5B-Instruct"
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Serve
        run: |
          nohup hatch run -- vllm serve ${{ env.SERVED }} --port 9000 --max-model-len 2048 &
          sleep 60
      - name: Matrix and environment prefix
        run: hatch -e bench run +py=3.11 bench:vllm serve facebook/opt-125m --port 9001
      - name: A hatch script, not a program
        run: hatch run test:unit
"""


def test_servers_started_through_hatch_run_are_read(tmp_path: Path):
    result = _scan(tmp_path, "ci.yml", CI_WORKFLOW)
    by_model = {s.model: s for s in result.servers}
    assert set(by_model) == {"Qwen/Qwen2.5-0.5B-Instruct", "facebook/opt-125m"}
    assert by_model["Qwen/Qwen2.5-0.5B-Instruct"].args["max_model_len"] == 2048
    assert by_model["facebook/opt-125m"].args["port"] == 9001


def test_hatch_commands_other_than_run_start_nothing(tmp_path: Path):
    script = "#!/bin/sh\nhatch env create vllm\nhatch build\n"
    assert _scan(tmp_path, "build.sh", script).servers == []


SDL = """---
version: "2.0"
services:
  engine:
    image: vllm/vllm-openai:v0.8.5
    expose:
      - port: 8000
        as: 80
        to:
          - global: true
    command:
      - bash
      - "-c"
    args:
      - >-
        vllm serve mistralai/Mistral-7B-Instruct-v0.3
        --tensor-parallel-size 2 --max-model-len 16384
    env:
      - "HF_TOKEN="
      - "VLLM_LOGGING_LEVEL=DEBUG"
  entry:
    image: nginx:1.27
    expose:
      - port: 80
        to:
          - global: true
profiles:
  compute:
    gpu-box:
      resources:
        cpu:
          units: 16
        memory:
          size: 64Gi
        storage:
          size: 80Gi
        gpu:
          units: 2
          attributes:
            vendor:
              nvidia:
                - model: l40s
                  ram: 48Gi
                - model: a100
                  ram: 80Gi
    small:
      resources:
        cpu:
          units: 1
        memory:
          size: 1Gi
        storage:
          size: 1Gi
  placement:
    anywhere:
      pricing:
        gpu-box:
          denom: uakt
          amount: 100000
deployment:
  engine:
    anywhere:
      profile: gpu-box
      count: 3
  entry:
    anywhere:
      profile: small
      count: 1
"""


def test_an_akash_sdl_service_is_read_with_its_profile_gpus(tmp_path: Path):
    result = _scan(tmp_path, "deploy.yaml", SDL)
    [server] = result.servers  # the nginx service is no vLLM server
    assert server.name == "engine" and server.source_format == "akash"
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert server.args["tensor_parallel_size"] == 2 and server.args["max_model_len"] == 16384
    assert server.vllm_version == "0.8.5"
    assert server.replicas == 3
    assert server.gpu.count == 2
    # two acceptable models: the provider may pick either, so each is budgeted (a fleet), no single type
    assert server.gpu.type is None and server.gpu.fleet == ["L40S", "A100-80GB"]
    assert not any("not visible" in p.message for p in result.problems)


def test_an_akash_service_without_command_runs_the_images_entrypoint_with_args(tmp_path: Path):
    sdl = SDL.replace('    command:\n      - bash\n      - "-c"\n', "").replace(
        "      - >-\n        vllm serve mistralai/Mistral-7B-Instruct-v0.3\n        --tensor-parallel-size 2 "
        "--max-model-len 16384\n",
        "      - --model\n      - mistralai/Mistral-7B-Instruct-v0.3\n      - --tensor-parallel-size\n      - '4'\n")
    sdl = sdl.replace("                - model: l40s\n                  ram: 48Gi\n", "")
    [server] = _scan(tmp_path, "deploy.yaml", sdl).servers
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3" and server.args["tensor_parallel_size"] == 4
    assert server.gpu.type == "A100-80GB" and server.gpu.count == 2  # one model named: that is the GPU


TRUSS = """base_image:
  image: vllm/vllm-openai:v0.9.2
model_metadata:
  repo_id: Qwen/Qwen2.5-7B-Instruct
docker_server:
  start_command: sh -c "HF_TOKEN=$(cat /secrets/hf_access_token) vllm serve Qwen/Qwen2.5-7B-Instruct --served-model-name qwen --max-model-len 8192 --tensor-parallel-size 2"
  readiness_endpoint: /health
  liveness_endpoint: /health
  predict_endpoint: /v1/chat/completions
  server_port: 8000
environment_variables:
  hf_access_token: null
resources:
  accelerator: A100:2
  use_gpu: true
model_name: Qwen 2.5 7B on vLLM
"""


def test_a_truss_docker_server_start_command_is_read(tmp_path: Path):
    result = _scan(tmp_path, "config.yaml", TRUSS)
    [server] = result.servers
    assert server.source_format == "truss" and server.name == "Qwen 2.5 7B on vLLM"
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.args["tensor_parallel_size"] == 2 and server.args["max_model_len"] == 8192
    assert server.vllm_version == "0.9.2"
    # Truss's `A100` is the 80 GB card (its Accelerator names `A100_40GB` apart)
    assert server.gpu.type == "A100-80GB" and server.gpu.count == 2


def test_a_truss_accelerator_written_as_a_mapping_and_a_40gb_share(tmp_path: Path):
    text = TRUSS.replace("  accelerator: A100:2\n", "  accelerator:\n    accelerator: A100_40GB\n    count: 2\n")
    [server] = _scan(tmp_path, "config.yaml", text).servers
    assert server.gpu.type == "A100-40GB" and server.gpu.count == 2


def test_a_truss_config_whose_server_is_not_vllm_yields_no_server(tmp_path: Path):
    text = TRUSS.replace("base_image:\n  image: vllm/vllm-openai:v0.9.2",
                         "base_image:\n  image: ghcr.io/huggingface/text-generation-inference:3.0")
    text = text.replace('sh -c "HF_TOKEN=$(cat /secrets/hf_access_token) vllm serve Qwen/Qwen2.5-7B-Instruct '
                        '--served-model-name qwen --max-model-len 8192 --tensor-parallel-size 2"',
                        "text-generation-launcher --model-id Qwen/Qwen2.5-7B-Instruct --port 8000")
    assert _scan(tmp_path, "config.yaml", text).servers == []


TORCHSERVE = """minWorkers: 1
maxWorkers: 1
deviceType: "gpu"
asyncCommunication: true
handler:
    model_path: "weights/snapshots/0123abcd"
    vllm_engine_config:
        max_model_len: 4096
        tensor_parallel_size: 2
        served_model_name:
            - "phi"
        preload_everything: true
"""


def test_a_torchserve_vllm_handler_config_is_read_as_its_engine_arguments(tmp_path: Path):
    result = _scan(tmp_path, "model-config.yaml", TORCHSERVE)
    [server] = result.servers
    assert server.source_format == "torchserve" and server.name == "phi"
    # no `model` among the engine arguments: the handler loads model_path (under the model archive's directory)
    assert server.model == "weights/snapshots/0123abcd"
    assert server.args["tensor_parallel_size"] == 2 and server.args["max_model_len"] == 4096
    # the handler sets only the engine's attributes and skips other keys: no unknown-argument finding
    assert not server.unknown_args
    assert any("preload_everything" in note for note in server.notes)


def test_a_model_among_the_torchserve_engine_arguments_wins_over_model_path(tmp_path: Path):
    text = TORCHSERVE.replace("        max_model_len: 4096\n",
                              "        model: microsoft/Phi-3-mini-4k-instruct\n        max_model_len: 4096\n")
    [server] = _scan(tmp_path, "model-config.yaml", text).servers
    assert server.model == "microsoft/Phi-3-mini-4k-instruct"


def test_an_akash_model_without_ram_is_each_of_its_memory_sizes(tmp_path: Path):
    # the provider matches any node of that model then: A100 comes with 40 GB or 80 GB, each is budgeted
    sdl = SDL.replace("                - model: l40s\n                  ram: 48Gi\n", "").replace(
        "                - model: a100\n                  ram: 80Gi\n", "                - model: a100\n")
    [server] = _scan(tmp_path, "deploy.yaml", sdl).servers
    assert server.gpu.type is None and server.gpu.fleet == ["A100-40GB", "A100-80GB"]


def test_gpu_counts_past_the_int_string_limit_are_no_count_not_a_failed_file(tmp_path: Path):
    # Python refuses int() of more than 4,300 digits (ValueError): both readers failed the whole file
    huge = "9" * 5000
    truss = _scan(tmp_path, "config.yaml", TRUSS.replace("accelerator: A100:2", f"accelerator: A100:{huge}"))
    [server] = truss.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.gpu is None  # no count read: the GPU not known
    assert not any("failed" in p.message for p in truss.problems)
    (tmp_path / "config.yaml").unlink()
    sdl = _scan(tmp_path, "deploy.yaml", SDL.replace("          units: 2\n", f'          units: "{huge}"\n'))
    [engine] = sdl.servers
    assert engine.gpu is None or engine.gpu.count is None
    assert not any("failed" in p.message for p in sdl.problems)


@pytest.mark.parametrize("spec", ["A100:-3", "H100:1e999", "A100:0"])
def test_a_truss_accelerator_count_that_is_no_count_is_a_warning_on_its_line(tmp_path: Path, spec):
    text = TRUSS.replace("  accelerator: A100:2\n", f"  accelerator: {spec}\n")
    result = _scan(tmp_path, "config.yaml", text)
    [server] = result.servers
    assert server.gpu is None
    [problem] = [p for p in result.problems if "resources.accelerator" in p.message]
    assert problem.level == "warning" and problem.line == text.splitlines().index(f"  accelerator: {spec}") + 1
