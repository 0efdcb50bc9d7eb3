"""Beaker experiment specs (`version: v2`, `tasks:`): each task's command and arguments, envVars, gpuCount."""

from pathlib import Path

from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "beaker"


def test_task_on_vllm_image_reads_arguments_env_and_gpu_count():
    [s] = scan([str(FIX / "vllm-task.yaml")]).servers  # the client task runs no vLLM
    assert s.source_format == "beaker" and s.name == "server"
    assert s.image == "vllm/vllm-openai:v0.10.1" and s.vllm_version == "0.10.1"
    assert s.model == "Qwen/Qwen2.5-32B-Instruct"  # $(MODEL) from envVars
    assert s.args["tensor_parallel_size"] == 4 and s.args["max_model_len"] == 16384
    assert s.gpu.count == 4 and s.gpu.location.line == 26
    assert s.location.line == 10
    assert s.env["HF_TOKEN"] is None  # from a Beaker secret


def test_shell_task_on_a_beaker_image():
    inv = scan([str(FIX / "shell-task.yaml")])
    [s] = inv.servers
    assert s.model == "Qwen/Qwen3-8B" and s.args["tensor_parallel_size"] == 2
    assert s.gpu.count == 1 and s.image is None


def test_tensor_parallel_beyond_gpu_count_is_an_error(capsys):
    from tests._check_util import run_json

    _code, report = run_json(capsys, str(FIX / "shell-task.yaml"), test_rules=False)
    assert [(f["rule"], f["line"]) for f in report["findings"] if f["level"] == "error"] == [("VRL006", 7)]
    _code, report = run_json(capsys, str(FIX / "vllm-task.yaml"), test_rules=False)
    assert [f for f in report["findings"] if f["level"] == "error"] == []
