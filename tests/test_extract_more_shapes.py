"""Command-line shapes: `bash -lc -- SCRIPT`, `--flag=${UNSET}` in a script, vLLM args on a vendor image."""

from pathlib import Path

from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "extract_more"


def test_bash_login_c_double_dash_script():
    [s] = scan([str(FIX / "raycluster-fleet.yaml")]).servers
    assert s.kind == "RayClusterFleet" and s.model == "Qwen/Qwen2.5-7B-Instruct"
    assert s.args["tensor_parallel_size"] == 2
    assert s.args["distributed_executor_backend"] == "ray"
    # an unset variable as the value: the option is set, its value unknown
    assert "max_model_len" in s.args and s.args["max_model_len"] is None
    assert s.gpu.count == 2


def test_vendor_image_with_vllm_args_only():
    inv = scan([str(FIX / "vendor-image-args.yaml")])
    [s] = inv.servers  # the TGI-shaped one is not read as vLLM
    assert s.name == "gaudi" and s.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert s.args["max_model_len"] == 6144 and s.args["dtype"] == "bfloat16"
    assert s.gpu.vendor == "intel-gaudi" and s.gpu.count == 1
    assert any("not named like a vLLM image" in n for n in s.notes)


def test_local_model_path_filled_by_init_container():
    servers = {s.name: s for s in scan([str(FIX / "init-download.yaml")]).servers}
    s = servers["downloaded"]
    assert s.model == "Qwen/Qwen3-0.6B" and s.model_location.line == 12
    assert any("init container 'fetch'" in n for n in s.notes)
    # a download into another directory says nothing about this model path
    assert servers["elsewhere"].model == "/cache/mine"


def test_kserve_huggingfaceserver_and_eval_templates():
    servers = {s.name: s for s in scan([str(FIX / "kserve-templates.yaml")]).servers}
    assert "hf-transformers" not in servers  # --backend=huggingface: not vLLM
    hf = servers["hf-multinode"]
    assert hf.model is None  # ${MODEL_DIR_ARG} is known only at run time
    assert "tensor_parallel_size" in hf.args and hf.args["tensor_parallel_size"] is None
    assert hf.args["max_model_len"] == 4096  # huggingfaceserver's --max_length is vLLM's max_model_len
    assert not hf.unknown_args  # its own flags are not vLLM's unknown flags
    assert any("Hugging Face server" in n for n in hf.notes)
    ev = servers["template"]
    assert ev.model == "/mnt/models"
    assert ev.args["max_model_len"] == 8192  # assigned before eval, expanded when eval reads the words again
    assert "enforce_eager" not in ev.args  # assigned inside `if`: not known, not guessed
    assert "tensor_parallel_size" not in ev.args  # inside a template conditional: not known
    assert ev.args["served_model_name"] in (None, [None])


def test_vllm_related_container_without_visible_command_is_said():
    inv = scan([str(FIX / "hidden-command.yaml")])
    notes = [p for p in inv.problems if p.level == "note" and "not visible" in p.message]
    assert [p.line for p in notes] == [10, 21]  # the launcher script, the custom image; not `sleep infinity`
    assert "MAX_MODEL_LEN, MODEL" in notes[0].message
    # the custom image is still listed (its entrypoint may be vLLM's), with nothing guessed
    [custom] = inv.servers
    assert custom.container == "custom" and custom.model is None


def test_compose_launcher_without_visible_command_is_said():
    inv = scan([str(FIX / "compose-launcher" / "docker-compose.yml")])
    assert inv.servers == []
    [note] = inv.problems
    assert note.level == "note" and note.line == 2 and "vllm_launcher.py" in note.message
    assert "VLLM_MAX_MODEL_LEN" in note.message


def test_example_chart_model_synced_from_s3_is_said_not_guessed():
    [s] = scan([str(FIX / "s3-chart" / "values.yaml")]).servers
    assert s.model == "/data/" and s.args["max_model_len"] == 2048
    assert any("extraInit.s3modelpath models/small-llm" in n for n in s.notes)


def test_compose_config_file_merged_through_bind_mount():
    servers = {s.name: s for s in scan([str(FIX / "compose-config" / "docker-compose.yml")]).servers}
    engine = servers["engine"]
    assert engine.args["max_model_len"] == 4096  # the command line wins over the config file
    assert engine.args["gpu_memory_utilization"] == 0.8 and engine.args["tensor_parallel_size"] == 2
    loc = engine.arg_locations["tensor_parallel_size"]
    assert loc.file.endswith("serve.yaml") and loc.line == 3
    assert servers["relative"].args["max_model_len"] == 16384
    missing = servers["missing"]
    assert "gpu_memory_utilization" not in missing.args
    assert any("/opt/elsewhere.yaml" in n and "not included" in n for n in missing.notes)
