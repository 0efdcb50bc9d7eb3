"""dstack service configurations: the vLLM command in `commands:`, `env:` and DSTACK_GPUS_NUM from resources.gpu."""

from pathlib import Path

from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "extract_more" / "dstack"


def test_dstack_service_with_vllm_command():
    [s] = scan([str(FIX / "llama.dstack.yml")]).servers
    assert s.source_format == "dstack" and s.name == "llama-70b"
    assert s.model == "meta-llama/Llama-3.3-70B-Instruct" and s.vllm_version == "0.10.2"
    assert s.args["tensor_parallel_size"] == 8  # $DSTACK_GPUS_NUM from `gpu: H100:8`
    assert s.args["max_model_len"] == 16384
    assert s.args["enable_prefix_caching"] is False
    assert s.arg_locations["max_model_len"].line == 17
    assert s.gpu.type == "H100-SXM" and s.gpu.count == 8 and s.gpu.location.line == 22
    assert s.env["HF_TOKEN"] is None and s.shm is True
    assert s.location.yaml_path == "commands[1]"


def test_dstack_task_without_vllm_is_not_a_server():
    inv = scan([str(FIX / "train.dstack.yml")])
    assert inv.servers == [] and inv.problems == []
