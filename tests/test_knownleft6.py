"""The known wrong places and misses of audit 22 (issue 9), each on fixtures of its own shaped after what the
audit saw: a vLLM command line that names no model serves the release's default model; servers that shell
scripts start behind `if !`, `exec $CMD`, Singularity/Apptainer, `${1:-default}`; a Hugging Face cache snapshot
as the model; the image of a here-document Job chosen in a `case`; a vLLM config file handed to another program."""

from __future__ import annotations

import json
from pathlib import Path

from vramlint.cli import main


def _check(capsys, tmp_path: Path, files: dict[str, str], *extra: str) -> dict:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    main(["check", *[str(tmp_path / n) for n in files], "--offline", "--format", "json", *extra])
    return json.loads(capsys.readouterr().out)


def _notes(report: dict) -> list[str]:
    return [f["message"] for f in report["findings"]]


# --- D2: no model argument -----------------------------------------------------------------------------------

GATEWAY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: router}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
      containers:
        - name: engine
          image: vllm/vllm-openai:TAG
          ports: [{containerPort: 8000}]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_image_entrypoint_without_model_serves_the_release_default(capsys, tmp_path):
    old = _check(capsys, tmp_path, {"old.yaml": GATEWAY.replace("TAG", "v0.9.2")})
    (server,) = old["servers"]
    assert server["model"] == "facebook/opt-125m"
    assert server["budget"] is not None
    assert any("vLLM 0.9.2 serves its default model, facebook/opt-125m" in n and "version is assumed" not in n
               for n in _notes(old))
    new = _check(capsys, tmp_path, {"new.yaml": GATEWAY.replace("TAG", "v0.10.0")})
    assert [s["model"] for s in new["servers"]] == ["Qwen/Qwen3-0.6B"]


def test_default_model_on_a_latest_tag_says_the_version_is_assumed(capsys, tmp_path):
    report = _check(capsys, tmp_path, {"latest.yaml": GATEWAY.replace("TAG", "latest")})
    assert [s["model"] for s in report["servers"]] == ["Qwen/Qwen3-0.6B"]
    note = next(n for n in _notes(report) if "serves its default model" in n)
    assert "the version is assumed too" in note
    assert report["summary"]["unchecked"] == []  # not "sets no command or args": the default is the model


def test_no_default_model_when_the_command_line_may_hold_one(capsys, tmp_path):
    report = _check(capsys, tmp_path, {
        "var.sh": "vllm serve $SERVED --port 8000\n",
        "cfg.sh": "vllm serve --config /etc/vllm/engine.yaml\n",
        "old.sh": "#!/bin/sh\nexec vllm serve --port 8000\n",
    }, "--vllm-version", "0.8.0")
    models = {Path(s["file"]).name: s["model"] for s in report["servers"]}
    assert models.get("var.sh") is None and models.get("cfg.sh") is None
    # `vllm serve` needs its positional model before 0.8.3: vLLM refuses it, no default is served
    assert models.get("old.sh") is None
    assert not any("serves its default model" in n for n in _notes(report))


def test_an_operator_resource_with_a_vllm_container_gets_no_default_model(capsys, tmp_path):
    # the operator's controller writes the pods, and may add the model it reads from spec.model itself
    report = _check(capsys, tmp_path, {"cr.yaml": """apiVersion: serving.example.org/v1
kind: EngineDeployment
metadata: {name: small}
spec:
  model: {name: org/some-model}
  containers:
    - name: vllm
      image: vllm/vllm-openai:v0.11.0
"""})
    assert [s["model"] for s in report["servers"]] == [None]
    assert not any("serves its default model" in n for n in _notes(report))


# --- D3: a here-document Job whose image a `case` chooses ----------------------------------------------------

CASE_JOB = """#!/usr/bin/env bash
set -euo pipefail
case "$1" in
  small) IMAGE="vllm/vllm-openai:v0.11.0"; TP=1; CMD="exec vllm serve Qwen/Qwen2.5-7B-Instruct" ;;
  other) IMAGE="lmsysorg/sglang:v0.5.2"; TP=2; CMD="exec python3 -m sglang.launch_server" ;;
esac
kubectl create -f - <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: engine}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: engine
          image: ${IMAGE}
          command: ["/bin/bash", "-c", "${CMD}"]
          resources: {limits: {nvidia.com/gpu: "${TP}"}}
YAML
"""


def test_heredoc_job_whose_image_a_case_sets_is_said(capsys, tmp_path):
    report = _check(capsys, tmp_path, {"launch.sh": CASE_JOB})
    (note,) = [f for f in report["findings"] if "${IMAGE}" in f["message"]]
    assert note["level"] == "note" and note["line"] == 17
    assert "assigned only in a branch" in note["message"]
    # the same manifest with the image assigned once is a server, and nothing is said of the image
    once = CASE_JOB.replace('case "$1" in', 'IMAGE="vllm/vllm-openai:v0.11.0"\nCMD="vllm serve org/m"\ncase "$1" in')
    once = once.replace('IMAGE="vllm/vllm-openai:v0.11.0"; TP=1; CMD="exec vllm serve Qwen/Qwen2.5-7B-Instruct"',
                        'TP=1').replace('IMAGE="lmsysorg/sglang:v0.5.2"; TP=2; CMD="exec python3 -m sglang.launch_server"',
                                        'TP=2')
    report = _check(capsys, tmp_path, {"once.sh": once})
    assert [s["image"] for s in report["servers"]] == ["vllm/vllm-openai:v0.11.0"]
    assert not any("${IMAGE}" in f["message"] for f in report["findings"])


# --- D4: reserved words before `docker run` ------------------------------------------------------------------

def test_docker_run_after_the_shells_reserved_words_is_a_server(capsys, tmp_path):
    run = 'docker run -d --gpus all "$IMG" --model Qwen/Qwen2.5-7B-Instruct --max-model-len 4096'
    shapes = {"if.sh": f"if ! {run}; then\n  echo failed\nfi\n",
              "while.sh": f"while ! {run}; do\n  sleep 5\ndone\n",
              "until.sh": f"until {run}; do sleep 5; done\n",
              "time.sh": f"time nohup {run}\n",
              "bang.sh": f"! exec {run}\n"}
    files = {name: '#!/bin/bash\nIMG="vllm/vllm-openai:v0.11.0"\n' + body for name, body in shapes.items()}
    report = _check(capsys, tmp_path, files)
    read = {Path(s["file"]).name: (s["image"], s["model"], s["args"].get("max_model_len")) for s in report["servers"]}
    assert read == {name: ("vllm/vllm-openai:v0.11.0", "Qwen/Qwen2.5-7B-Instruct", 4096) for name in shapes}
    assert not any("starts no vLLM server" in n for n in _notes(report))


# --- D11: `${1:-default}` in a script file read on its own ---------------------------------------------------

def test_positional_defaults_of_a_script_are_taken_and_said(capsys, tmp_path):
    report = _check(capsys, tmp_path, {
        "serve.sh": '#!/bin/bash\nMODEL="${1:-Qwen/Qwen2.5-7B-Instruct}"\nLEN=${2:-8192}\n'
                    'exec vllm serve "$MODEL" --max-model-len "$LEN" --gpu-memory-utilization ${3:-0.85}\n',
        "bare.sh": "#!/bin/bash\nexec vllm serve $1 --max-model-len 4096\n"})
    servers = {Path(s["file"]).name: s for s in report["servers"]}
    read = servers["serve.sh"]
    assert (read["model"], read["args"]["max_model_len"], read["args"]["gpu_memory_utilization"]) == \
        ("Qwen/Qwen2.5-7B-Instruct", 8192, 0.85)
    assert any("read as run with no arguments" in n for n in _notes(report))
    # a bare `$1` has no default: the argument the user passes is the model, not known here
    assert servers["bare.sh"]["model"] is None
    assert not any("serves its default model" in n for n in _notes(report))


# --- D12: a Hugging Face cache snapshot as the model ---------------------------------------------------------

def test_hf_cache_snapshot_path_is_its_hub_model(capsys, tmp_path):
    snap = "/shared/hf/hub/models--Qwen--Qwen2.5-7B-Instruct/snapshots/0123456789abcdef0123456789abcdef01234567"
    report = _check(capsys, tmp_path, {
        "snap.sh": f"vllm serve {snap} --max-model-len 8192\n",
        "plain.sh": "vllm serve /shared/models/Qwen2.5-7B-Instruct --max-model-len 8192\n"}, "--gpu", "L4")
    servers = {Path(s["file"]).name: s for s in report["servers"]}
    assert servers["snap.sh"]["budget"] is not None
    assert servers["plain.sh"]["budget"] is None  # any other local path is still not known here
    assert any("Hugging Face cache snapshot of Qwen/Qwen2.5-7B-Instruct (revision 0123456789ab" in n
               for n in _notes(report))


# --- D10: Singularity / Apptainer as the launcher ------------------------------------------------------------

def test_singularity_and_apptainer_run_the_command_after_the_image(capsys, tmp_path):
    report = _check(capsys, tmp_path, {
        "sif.sh": "#!/bin/bash\nSIF=/shared/images/engine.sif\n"
                  "singularity exec --nv --env-file .env -B /data:/data $SIF python3 -m "
                  "vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct --max-model-len 4096\n",
        "uri.sh": "apptainer exec --nv --cleanenv docker://vllm/vllm-openai:v0.11.0 vllm serve "
                  "Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"})
    servers = {Path(s["file"]).name: s for s in report["servers"]}
    assert servers["sif.sh"]["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert servers["sif.sh"]["args"]["max_model_len"] == 4096
    assert servers["sif.sh"]["image"] is None  # a .sif file says no release
    uri = servers["uri.sh"]
    assert (uri["image"], uri["vllm_version"], uri["args"]["max_model_len"]) == \
        ("vllm/vllm-openai:v0.11.0", "0.11.0", 8192)
    assert uri["gpu"] is None  # --nv binds the host's GPUs: no count, no type


# --- D9: `exec $CMD` after an `if` that adds to CMD ----------------------------------------------------------

def test_command_variable_extended_in_an_undecided_branch_keeps_its_known_start(capsys, tmp_path):
    report = _check(capsys, tmp_path, {"start.sh": """#!/bin/bash
QUANT=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --awq) QUANT="awq"; shift ;;
        *) shift ;;
    esac
done
CMD="python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct --max-model-len 8192"
if [ -n "$QUANT" ]; then
    CMD="$CMD --quantization $QUANT"
fi
exec $CMD
"""})
    (server,) = report["servers"]
    assert (server["model"], server["args"]["max_model_len"]) == ("Qwen/Qwen2.5-7B-Instruct", 8192)
    # what the branch may add is not known: said, and nothing resting on --quantization being absent is certain
    assert any("known only at run time" in n for n in _notes(report))
    assert "quantization" not in server["args"]


# --- R1: a vLLM config file handed to another program --------------------------------------------------------

ENGINE_CONFIG = "gpu_memory_utilization: 0.55\nmax_num_seqs: 64\nmax_model_len: 32768\nenable_chunked_prefill: true\n"
OCR_COMPOSE = """services:
  ocr:
    image: registry.example.com/acme/ocr-vllm-server:1.0
    command: ocrtool genai_server --model_name OCR-1B --backend vllm --backend_config /cfg/vllm_config.yaml
    volumes:
      - ./vllm_config.yaml:/cfg/vllm_config.yaml:ro
"""


def test_vllm_config_file_handed_to_a_launcher_is_not_a_server_of_its_own(capsys, tmp_path):
    alone = _check(capsys, tmp_path / "alone", {"vllm_config.yaml": ENGINE_CONFIG})
    assert [s["source_format"] for s in alone["servers"]] == ["vllm-config"]
    both = _check(capsys, tmp_path / "both", {"vllm_config.yaml": ENGINE_CONFIG, "compose.yaml": OCR_COMPOSE})
    assert both["servers"] == []
    assert any("given by path to the program of a compose service" in n for n in _notes(both))
