"""vLLM-Omni: from vLLM 0.20.0 `vllm serve MODEL --omni` hands the command line to vLLM-Omni (vllm/entrypoints/cli/
main.py), whose serve command reads vLLM's serve options plus its own; `vllm-omni serve MODEL` (vLLM-Omni's console
script) takes the model as its first positional, and without --omni runs vLLM's own serve."""

from __future__ import annotations

import json
import subprocess
import sys

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.scan import scan
from vramlint.unchecked import causes

# shaped after vLLM-Omni's documented online-serving example, in a Deployment on its image
OMNI = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: omni}}
spec:
  template:
    spec:
      containers:
      - name: omni
        image: {image}
        command: {command}
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _server(tmp_path, command: str, image: str = "vllm/vllm-omni:v0.20.0"):
    path = tmp_path / "omni.yaml"
    path.write_text(OMNI.format(image=image, command=command))
    [server] = scan([str(path)]).servers
    return server


def test_vllm_omni_serve_takes_the_model_as_its_first_positional(tmp_path):
    server = _server(tmp_path, '[vllm-omni, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "8192"]')
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 8192
    # without --omni, vLLM-Omni's main runs vLLM's own serve: the budget is vLLM's
    [a] = assess([server], ResolveOptions(allow_network=False, default_gpu="L4"))
    assert a.budget is not None


def test_omni_flag_is_vllm_omnis_from_vllm_0_20(tmp_path):
    server = _server(tmp_path, '[vllm, serve, Qwen/Qwen2.5-Omni-7B, --omni, --port, "8091", '
                               '--stage-configs-path, /cfg/stages.yaml]')
    assert server.model == "Qwen/Qwen2.5-Omni-7B" and server.args["omni"] is True
    assert server.unknown_args == {}  # no VRL009 error: vLLM 0.20 delegates, vLLM-Omni's parser takes them
    assert any("--stage-configs-path" in u and "vLLM-Omni" in u for u in server.unchecked)
    [a] = assess([server], ResolveOptions(allow_network=False, default_gpu="L4"))
    assert a.budget is None and causes(a) == [("vllm-omni", "Qwen/Qwen2.5-Omni-7B")]


def test_vllm_before_0_20_does_not_know_omni(tmp_path):
    server = _server(tmp_path, "[vllm, serve, Qwen/Qwen2.5-Omni-7B, --omni]", image="vllm/vllm-openai:v0.19.1")
    assert "--omni" in server.unknown_args and "omni" not in server.args
    # vLLM-Omni's own executable reads --omni whatever vLLM it runs on
    server = _server(tmp_path, "[vllm-omni, serve, Qwen/Qwen2.5-Omni-7B, --omni]", image="vllm/vllm-openai:v0.19.1")
    assert server.args["omni"] is True and server.model == "Qwen/Qwen2.5-Omni-7B"


def test_compose_command_running_vllm_omni_serve_is_not_read_as_a_model(tmp_path):
    # compose's `command` that starts with the program: `vllm-omni` is the program, not the model
    path = tmp_path / "compose.yaml"
    path.write_text("""\
services:
  omni:
    image: vllm/vllm-omni:v0.20.0
    command: [vllm-omni, serve, Qwen/Qwen2.5-Omni-3B, --omni, --port, "8000", --max-model-len, "4096"]
    devices: [/dev/kfd, /dev/dri]
""")
    [server] = scan([str(path)]).servers
    assert server.model == "Qwen/Qwen2.5-Omni-3B" and server.args["omni"] is True
    assert server.args["max_model_len"] == 4096


def test_gpus_vllm_omni_spreads_its_stages_over_are_not_called_idle(tmp_path):
    # vLLM-Omni's own options (--num-gpus, --usp ...) use the GPUs vLLM's parallel sizes leave at 1 (audit22 D8)
    text = OMNI.format(image="vllm/vllm-omni:v0.20.0",
                       command='[vllm, serve, Qwen/Qwen-Image, --omni, --num-gpus, "8", --usp, "8"]')
    text = text.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 8")
    (tmp_path / "omni.yaml").write_text(text)
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", str(tmp_path), "--offline", "--output-format",
                           "json"], capture_output=True, text=True, timeout=60)
    report = json.loads(proc.stdout)
    assert not [f for f in report["findings"] if f["rule"] == "VRL006" and "idle" in f["message"]]
    # the same pod with vLLM's own serve does leave 7 of its 8 GPUs idle
    (tmp_path / "omni.yaml").write_text(text.replace(", --omni", "").replace(', --num-gpus, "8", --usp, "8"', ""))
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", str(tmp_path), "--offline", "--output-format",
                           "json"], capture_output=True, text=True, timeout=60)
    report = json.loads(proc.stdout)
    assert [f for f in report["findings"] if f["rule"] == "VRL006" and "idle" in f["message"]]
