"""An interpreter whose path is known only at run time (`"$ENV_DIR/bin/python" -m vllm.entrypoints.openai.api_server`,
a virtual environment made by the setup step) still runs vLLM's server: `-m` and vLLM's module say so. The same
unknown program with another module is not a vLLM server."""

from vramlint.scan import scan

TASK = """\
name: chat
resources:
  accelerators: L40S:1
envs:
  SERVED: Qwen/Qwen2.5-3B-Instruct
setup: |
  python3 -m venv ~/envs/serve && ~/envs/serve/bin/pip install vllm==0.9.2
run: |
  ENV_DIR="$HOME/envs/serve"
  OMP_NUM_THREADS=4 nohup "$ENV_DIR/bin/python" -m {module} \\
    --model "$SERVED" --max-model-len 16384 --port 8000 > serve.log 2>&1 &
  wait
"""


def test_a_run_time_interpreter_path_with_vllms_module_is_read(tmp_path):
    (tmp_path / "chat.sky.yaml").write_text(TASK.format(module="vllm.entrypoints.openai.api_server"))
    [server] = scan([str(tmp_path)]).servers
    assert server.model == "Qwen/Qwen2.5-3B-Instruct"
    assert server.args.get("max_model_len") == 16384
    assert server.gpu is not None and (server.gpu.type, server.gpu.count) == ("L40S", 1)


def test_the_same_interpreter_with_another_module_is_no_server(tmp_path):
    (tmp_path / "chat.sky.yaml").write_text(TASK.format(module="my_app.server"))
    assert scan([str(tmp_path)]).servers == []
