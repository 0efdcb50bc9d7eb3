"""SkyPilot task YAML: the vLLM server in `run`, GPUs from resources.accelerators, SKYPILOT_* variables, the image
or the `setup` pip pin as the release, and the nodes of a multi-node task as its engine group."""

from pathlib import Path

from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "skypilot"


def test_multinode_task_reads_skypilot_variables_and_nodes():
    [s] = scan([str(FIX / "multinode.sky.yaml")]).servers
    assert s.source_format == "skypilot" and s.name == "qwen-multinode"
    assert s.model == "Qwen/Qwen2.5-72B-Instruct"
    assert s.args["tensor_parallel_size"] == 4 and s.args["pipeline_parallel_size"] == 2
    assert s.args["max_model_len"] == 8192
    assert s.gpu.type == "A100-80GB" and s.gpu.count == 4 and s.gpu.location.line == 10
    assert s.vllm_version == "0.9.2" and "setup" in s.vllm_version_source
    assert s.engine_group is not None and s.engine_group.gpus == 8
    assert s.env["HF_TOKEN"] is None


def test_alternatives_give_the_count_not_the_type_and_pip_normal_form():
    [s] = scan([str(FIX / "choices.yaml")]).servers
    assert s.gpu.type is None and s.gpu.count == 2 and "alternatives" in s.gpu.evidence
    assert s.args["tensor_parallel_size"] == 2
    assert s.vllm_version == "0.4.3.post1"  # `0.4.3post1` as pip normalises it


def test_docker_image_is_the_release_and_a_list_of_choices():
    [s] = scan([str(FIX / "docker-image.yaml")]).servers
    assert s.image == "vllm/vllm-openai:v0.10.1" and s.vllm_version == "0.10.1"
    assert s.gpu.type is None and s.gpu.count == 1
    assert s.args["max_model_len"] == 16384


def test_local_build_label_is_no_release_and_a100_is_skypilots_40gb():
    inv = scan([str(FIX / "local-build.yaml")])
    [s] = inv.servers
    assert s.vllm_version is None
    assert any("local label" in n for n in s.notes)
    assert s.gpu.type == "A100-40GB" and s.gpu.count == 1


def test_task_without_vllm_is_not_a_server():
    inv = scan([str(FIX / "no-vllm.yaml")])
    assert inv.servers == []
