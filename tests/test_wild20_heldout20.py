"""Fixes made with the held-out-20 batch in view, each on fixtures of its own: a server started under NVIDIA
Nsight Systems (`nsys profile [options] APP`) is read, its profiler's options set aside as the CLI's documented
syntax writes them; a note about a launcher it cannot read quotes a `sh -c` script by its first line only."""

from __future__ import annotations

from pathlib import Path

from vramlint.scan import scan


def _scan(tmp_path: Path, name: str, text: str):
    f = tmp_path / name
    f.write_text(text)
    return scan([str(f)])


PROFILED_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: kernel-trace
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: traced
          image: vllm/vllm-openai:v0.10.2
          command: ["bash", "-c"]
          args:
            - |
              PROFILER=/usr/local/nsight/bin/nsys
              $PROFILER --version
              $PROFILER profile -t cuda,osrt --output=/out/trace --sample=none \\
                  python3 -m vllm.entrypoints.openai.api_server \\
                      --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 3072 &
              sleep 600
          resources:
            limits: {nvidia.com/gpu: 1}
"""


def test_a_server_started_under_nsys_profile_is_read(tmp_path: Path):
    result = _scan(tmp_path, "trace-job.yaml", PROFILED_JOB)
    [server] = result.servers
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct"
    assert server.args["max_model_len"] == 3072
    assert not any("not visible" in p.message for p in result.problems)


def test_nsys_launch_in_a_script_starts_the_server_after_its_short_options(tmp_path: Path):
    script = "#!/bin/sh\nnsys launch -w true -e CUDA_LAUNCH_BLOCKING=1 vllm serve facebook/opt-125m --port 8100\n"
    [server] = _scan(tmp_path, "launch.sh", script).servers
    assert server.model == "facebook/opt-125m" and server.args["port"] == 8100


def test_nsys_subcommands_that_launch_nothing_start_no_server(tmp_path: Path):
    # `nsys stats` reads a report; a long option without `=` is not how the CLI takes a parameter, so where the
    # application starts cannot be told and nothing is guessed
    script = ("#!/bin/sh\nnsys stats --report=cuda_gpu_trace vllm-run.nsys-rep\n"
              "nsys profile --trace cuda vllm serve facebook/opt-125m\n")
    assert _scan(tmp_path, "stats.sh", script).servers == []


def test_a_launcher_note_quotes_a_script_by_its_first_line(tmp_path: Path):
    pod = """apiVersion: v1
kind: Pod
metadata:
  name: launcher
spec:
  containers:
    - name: main
      image: vllm/vllm-openai:v0.10.2
      command: ["/bin/sh", "-c"]
      args:
        - |
          echo "preparing the weights and the configuration for the server that runs below"
          /opt/site/bin/start-engine --config /etc/engine.json
"""
    result = _scan(tmp_path, "pod.yaml", pod)
    [note] = [p for p in result.problems if "not visible" in p.message]
    assert "start-engine" not in note.message  # only the script's first line, shortened
    assert "(/bin/sh -c echo \"preparing the weights and the conf ...)" in note.message
