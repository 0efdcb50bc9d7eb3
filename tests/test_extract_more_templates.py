"""Values written as template expressions are unknown (None), never a model name or an argument value."""

from pathlib import Path

from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "extract_more"


def test_template_expressions_are_unknown_not_names():
    inv = scan([str(FIX / "templated-deployment.yaml")])
    [server] = inv.servers
    assert server.model is None  # `--model=$(MODEL_ID)` with MODEL_ID a template expression
    assert server.env["MODEL_ID"] is None
    assert server.name is None and server.container is None
    # the options are set (key present), their values unknown
    assert "tensor_parallel_size" in server.args and server.args["tensor_parallel_size"] is None
    assert "max_model_len" in server.args and server.args["max_model_len"] is None
    assert server.args["gpu_memory_utilization"] == 0.9
    assert server.args.get("served_model_name") in (None, [None])
    assert server.arg_locations["max_model_len"].line == 17
    text = repr(server.to_json()["args"]) + repr(server.model) + repr(server.env)
    assert "\u2983" not in text


def test_template_in_gpu_evidence_is_not_printed_as_marker(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
                    "      containers:\n      - name: v\n        image: vllm/vllm-openai:v0.10.2\n"
                    "        args: [\"--model\", \"Qwen/Qwen3-8B\"]\n        resources:\n          limits:\n"
                    "            nvidia.com/gpu: {{ .Values.gpus }}\n")
    [server] = scan([str(path)]).servers
    assert server.gpu is not None and "\u2983" not in (server.gpu.evidence or "")
