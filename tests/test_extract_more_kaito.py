"""KAITO Workspace / InferenceSet: preset model, GPU from the VM size or MIG slice, vLLM settings from the
inference ConfigMap (also in another file), and the Transformers runtime left out."""

from pathlib import Path

from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "extract_more" / "kaito"


def _by_name(inv):
    return {s.name: s for s in inv.servers}


def test_workspace_joined_with_configmap_in_another_file():
    servers = _by_name(scan([str(FIX / "workspace.yaml"), str(FIX / "params.yaml")]))
    assert "ws-transformers" not in servers  # kaito.sh/runtime: transformers is not vLLM
    ws = servers["ws-phi"]
    assert ws.kind == "Workspace" and ws.model == "microsoft/phi-4"
    assert ws.model_location.line == 13
    assert ws.gpu.type == "A100-80GB-PCIe" and ws.gpu.count == 4 and ws.gpu.location.line == 7
    assert ws.args == {"max_model_len": 8192, "tensor_parallel_size": 4, "gpu_memory_utilization": 0.9}
    loc = ws.arg_locations["tensor_parallel_size"]
    assert loc.file.endswith("params.yaml") and loc.line == 10
    unknown = servers["ws-unknown-preset"]
    assert unknown.model is None and any("some-future-model" in n for n in unknown.notes)


def test_configmap_not_scanned_is_said():
    ws = _by_name(scan([str(FIX / "workspace.yaml")]))["ws-phi"]
    assert ws.args == {"max_model_len": "auto", "tensor_parallel_size": 4}  # KAITO's own flags, none of the config
    assert any("phi-params" in n and "not among the scanned files" in n for n in ws.notes)


def test_inferenceset_mig_slice_and_replicas():
    [s] = scan([str(FIX / "inferenceset.yaml")]).servers
    assert s.kind == "InferenceSet" and s.model == "Qwen/Qwen2.5-Coder-7B-Instruct" and s.replicas == 3
    assert s.gpu.mig_profile == "3g.40gb" and s.gpu.memory_gib is not None and s.gpu.count == 1


def test_the_runner_appends_booleans_as_words_read_with_the_vllm_kaito_pins():
    # KAITO's runner writes `--KEY str(VALUE)`: `true` reaches vLLM as "True" after a flag that takes no value.
    # vLLM's OpenAI parser (0.10 on) takes the first such word as its unused model tag; a second is refused.
    [ws] = scan([str(FIX / "bool-config.yaml")]).servers
    assert ws.assumed_version == "0.25.1" and "requirements.txt" in ws.assumed_version_source
    assert ws.args["enable_chunked_prefill"] is True
    [refused] = ws.startup_errors
    assert refused["message"] == "unrecognized arguments: False" and refused["assumed_by"]
    assert not refused["version_known"]  # the KAITO release installed may pin another vLLM
