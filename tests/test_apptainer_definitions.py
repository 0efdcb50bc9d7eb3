"""Apptainer / Singularity on an HPC cluster (audit22 D10, audit23 M4): the Slurm job's `apptainer exec --nv
IMAGE python -m vllm.entrypoints.openai.api_server ...` is a server (61cf082 made apptainer a launcher; the job is
now walked too, by its #SBATCH header), and the image's definition file named on the command line (`vramlint
check $(git ls-files)`) is said not read, with why, instead of a false "invalid YAML" error."""

from __future__ import annotations

import json

from vramlint.cli import main

JOB = """\
#!/bin/bash
#SBATCH --job-name=qwen-1gpu
#SBATCH --nodes=1
#SBATCH --gpus-per-node=1

SIF=/cluster/work/containers/vllm.sif
MODEL=/cluster/work/models/Qwen2-7B-Instruct
apptainer exec --nv \\
    --env NCCL_IB_DISABLE=1 \\
    --bind /cluster/work:/cluster/work \\
    ${SIF} \\
    python -m vllm.entrypoints.openai.api_server \\
        --model ${MODEL} --tensor-parallel-size 1 --max-model-len 8192
"""

# shaped after a site's image build: a CUDA base, vLLM pip-installed in %post, no %runscript
DEFINITION = """\
# vLLM for the cluster's GPU nodes
Bootstrap: docker
From: nvcr.io/nvidia/cuda:12.6.3-cudnn-devel-ubuntu24.04
%post
    apt-get update && apt-get install -y python3-pip
    pip install "vllm==0.19.1"
%environment
    export PATH=/opt/venv/bin:$PATH
"""


def _report(capsys, monkeypatch, folder, *paths):
    monkeypatch.chdir(folder)
    code = main(["check", *paths, "--offline", "--output-format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_the_definition_file_named_is_said_not_read_and_fails_nothing(tmp_path, capsys, monkeypatch):
    (tmp_path / "containers").mkdir()
    (tmp_path / "containers" / "vllm-x86_64.def").write_text(DEFINITION)
    code, report = _report(capsys, monkeypatch, tmp_path, "containers/vllm-x86_64.def")
    assert code == 0 and report["findings"] == []  # before: VRL102 error "invalid YAML" on line 5
    [skipped] = report["skipped"]
    assert skipped["file"] == "containers/vllm-x86_64.def"
    assert "Apptainer/Singularity definition file" in skipped["reason"] and "apptainer exec|run" in skipped["reason"]


def test_a_def_file_of_another_kind_is_read_as_before(tmp_path, capsys, monkeypatch):
    (tmp_path / "values.def").write_text("model: facebook/opt-125m\n")
    _, report = _report(capsys, monkeypatch, tmp_path, "values.def")
    assert report["skipped"] == []


def test_the_slurm_job_running_apptainer_is_a_server_when_walked(tmp_path, capsys, monkeypatch):
    (tmp_path / "slurm").mkdir()
    (tmp_path / "slurm" / "qwen2-7b-instruct-vllm.sh").write_text(JOB)
    (tmp_path / "vllm-x86_64.def").write_text(DEFINITION)  # not walked: no file of a kind the walk reads
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    [server] = report["servers"]
    assert (server["file"], server["line"]) == ("slurm/qwen2-7b-instruct-vllm.sh", 12)
    assert server["model"] == "/cluster/work/models/Qwen2-7B-Instruct" and server["gpu"]["count"] == 1
    assert report["skipped"] == []
