"""Fixes made with the held-out-19 batch in view, each on fixtures of its own: a `bash -c` script (or a variable
holding a command) with one unknown word is still read; GitHub Actions `run:` steps start servers; a v1beta1
DynamoGraphDeployment's servers are named after their components; a name a template reading replaced is said as
written; Kubernetes refuses an `envFrom` entry with no source and a Secret whose data is not base64."""

from __future__ import annotations

import json
from pathlib import Path

from tests._check_util import run_cli
from vramlint.scan import scan


def _scan(tmp_path: Path, name: str, text: str):
    f = tmp_path / name
    f.write_text(text)
    return scan([str(f)])


# ---- shell: a `-c` script with an unknown word, a variable of several words some unknown


def test_a_command_held_in_a_variable_is_read_when_one_of_its_words_is_unknown(tmp_path: Path):
    script = ('PORT=9001\nWEIGHTS=/srv/ckpt/mistral-7b\nLAUNCH="\n  vllm serve \\\n    ${WEIGHTS} \\\n'
              '    --port ${PORT} \\\n    --tensor-parallel-size $2 \\\n    --max-model-len 8192\n  "\n'
              'bash -c "$LAUNCH" & python client.py\n')
    [server] = _scan(tmp_path, "launch.sh", script).servers
    assert server.model == "/srv/ckpt/mistral-7b"
    assert server.args["max_model_len"] == 8192 and server.args["port"] == 9001
    assert server.args["tensor_parallel_size"] is None  # `$2` is the caller's: unknown, not guessed


def test_a_bash_c_string_with_an_unset_variable_still_starts_its_server(tmp_path: Path):
    script = ('bash -c "python3 -m vllm.entrypoints.openai.api_server --model ${CHECKPOINT} --port 8001" &\n'
              'bash -c "python3 ui.py" &\nwait -n\n')
    result = _scan(tmp_path, "start.sh", script)
    [server] = result.servers
    assert server.model is None and server.args["port"] == 8001
    assert not any("starts no vLLM server" in p.message for p in result.problems)


def test_a_variable_of_options_keeps_its_known_words(tmp_path: Path):
    script = 'OPTS="--max-model-len 2048 --tensor-parallel-size $NGPU"\nvllm serve Qwen/Qwen2.5-0.5B-Instruct $OPTS\n'
    [server] = _scan(tmp_path, "opts.sh", script).servers
    assert server.args["max_model_len"] == 2048
    assert server.args["tensor_parallel_size"] is None


def test_a_wholly_unknown_variable_is_still_unknown(tmp_path: Path):
    script = 'M=$1\nvllm serve $M --max-model-len 1024\n'
    [server] = _scan(tmp_path, "one.sh", script).servers
    assert server.model is None and server.args["max_model_len"] == 1024


# ---- GitHub Actions

COMPOSITE = """name: smoke-llm
description: serve a model on the runner
inputs:
  model:
    description: which model
    default: Qwen/Qwen2.5-0.5B-Instruct
  tag:
    default: v0.8.5
runs:
  using: composite
  steps:
    - uses: actions/checkout@v4
      with:
        repository: vllm-project/vllm
        ref: ${{ inputs.tag }}
    - shell: bash
      run: |
        pip install -r requirements/cpu.txt
        VLLM_TARGET_DEVICE=cpu python setup.py install
    - name: start
      shell: bash
      run: vllm serve "${{ inputs.model }}" --port 8123 > server.log 2>&1 &
    - name: start again shorter
      if: failure()
      shell: bash
      run: vllm serve "${{ inputs.model }}" --max-model-len 2048 &
"""


def test_a_composite_action_runs_the_server_of_its_run_step(tmp_path: Path):
    [server] = _scan(tmp_path, "action.yml", COMPOSITE).servers
    assert server.source_format == "github-actions" and server.name == "smoke-llm"
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["port"] == 8123
    assert server.vllm_version == "0.8.5" and "vllm-project/vllm at 0.8.5" in server.vllm_version_source
    assert server.location.line == COMPOSITE.splitlines().index(
        '      run: vllm serve "${{ inputs.model }}" --port 8123 > server.log 2>&1 &') + 1


def test_a_job_that_builds_vllm_for_cpu_runs_the_cpu_backend(tmp_path: Path):
    _, out = run_cli(tmp_path, COMPOSITE, "explain", "--format", "json", name="action.yml")
    data = json.loads(out)
    [server] = data["servers"] if isinstance(data, dict) else data
    assert server.get("budget") is None and server.get("gpu_requirement") is None
    assert any(u.startswith("vLLM's CPU backend") and "VLLM_TARGET_DEVICE=cpu" in u for u in server["unresolved"])


WORKFLOW = """name: serve
on:
  push:
env:
  LEN: "4096"
jobs:
  many:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        model: [Qwen/Qwen2.5-0.5B-Instruct, Qwen/Qwen2.5-1.5B-Instruct]
    steps:
      - run: pip install vllm==0.9.2
      - run: vllm serve ${{ matrix.model }} --max-model-len ${{ env.LEN }} &
  one:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        model: [facebook/opt-125m]
    steps:
      - run: |
          vllm serve ${{ matrix.model }} --api-key ${{ secrets.KEY }} &
          sleep 30
  client:
    runs-on: ubuntu-latest
    steps:
      - uses: example/vllm-action@v1
        with:
          model: facebook/opt-125m
"""


def test_a_workflow_job_with_a_matrix_of_models_leaves_the_model_to_each_job(tmp_path: Path):
    servers = {s.name: s for s in _scan(tmp_path, "ci.yml", WORKFLOW).servers}
    assert set(servers) == {"many", "one"}
    many, one = servers["many"], servers["one"]
    assert many.model is None and many.args["max_model_len"] == 4096 and many.vllm_version == "0.9.2"
    assert one.model == "facebook/opt-125m" and one.vllm_version is None


def test_a_workflow_that_only_uses_an_action_says_where_the_server_is(tmp_path: Path):
    text = WORKFLOW.split("  many:")[0] + WORKFLOW[WORKFLOW.index("  client:"):]
    result = _scan(tmp_path, "uses.yml", text.replace("example/vllm-action", "example/vllm-runner"))
    assert result.servers == []


# ---- Dynamo v1beta1

DGD = """apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: graph
spec:
  backendFramework: vllm
  components:
    - name: Frontend
      type: frontend
      podTemplate:
        spec:
          containers:
            - name: main
              image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0
              command: ["python3", "-m", "dynamo.frontend"]
    - name: Decoder
      type: worker
      multinode:
        nodeCount: 2
      podTemplate:
        spec:
          containers:
            - name: main
              image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.0
              command: ["python3", "-m", "dynamo.vllm"]
              args: ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "4", "--pipeline-parallel-size", "2"]
              resources:
                limits:
                  nvidia.com/gpu: "4"
"""


def test_a_v1beta1_graph_names_its_workers_after_their_components(tmp_path: Path):
    [server] = _scan(tmp_path, "dgd.yaml", DGD).servers
    assert server.name == "Decoder" and server.model == "Qwen/Qwen3-8B" and server.gpu.count == 4
    # multinode.nodeCount 2: the engine spans two pods of 4 GPUs (TP 4 x PP 2)
    [member] = server.engine_group.members
    assert member.pods == 2 and member.gpus_per_pod == 4


def test_a_name_the_template_reading_replaced_is_said_as_written(tmp_path: Path):
    text = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${STACK}-engine
spec:
  template:
    spec:
      nodeSelector: { node.kubernetes.io/instance-type: ${NODE_TYPE} }
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
"""
    [server] = _scan(tmp_path, "engine.yaml", text).servers
    assert server.name == "${STACK}-engine"


# ---- Kubernetes refusals

def _deployment(env_from: str) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: engine
spec:
  template:
    spec:
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
          envFrom:
{env_from}"""


def _refusals(result):
    return [p for p in result.problems if "API server rejects" in p.message]


def test_an_env_from_entry_whose_ref_has_its_name_one_level_out_is_refused(tmp_path: Path):
    text = _deployment("            - configMapRef:\n              name: engine-settings\n")
    [problem] = _refusals(_scan(tmp_path, "d.yaml", text))
    assert problem.level == "error" and problem.line == text.splitlines().index("            - configMapRef:") + 1
    assert "envFrom: Invalid value" in problem.message and "configMapRef` or `secretRef`" in problem.message
    assert "name is no field of an envFrom source" in problem.message


def test_an_env_from_entry_with_two_sources_is_refused_and_one_source_is_not(tmp_path: Path):
    both = _deployment("            - configMapRef: {name: a}\n              secretRef: {name: b}\n")
    [problem] = _refusals(_scan(tmp_path, "both.yaml", both))
    assert "may not have more than one field specified" in problem.message
    good = _deployment("            - secretRef:\n                name: hf\n              prefix: HF_\n")
    assert _refusals(_scan(tmp_path, "good.yaml", good)) == []


def _secret(value: str) -> str:
    # beside the vLLM server that reads it (a file that never mentions vLLM is not read)
    return (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: hf\ndata:\n  token: {value}\n---\n"
            + _deployment("            - secretRef:\n                name: hf\n"))


def test_a_secret_whose_data_is_not_base64_is_refused(tmp_path: Path):
    [problem] = _refusals(_scan(tmp_path, "s.yaml", _secret("$(printf tok | base64)")))
    assert problem.level == "error" and problem.line == 6 and "data.token is not base64" in problem.message
    [plain] = _refusals(_scan(tmp_path, "p.yaml", _secret("hf_abcdefghij")))  # 13 characters: not base64
    assert "stringData" in plain.message


def test_secret_data_that_is_base64_or_filled_in_later_is_not_judged(tmp_path: Path):
    for i, value in enumerate(("aGZfdG9rZW4=", "${HF_TOKEN_B64}", "$HF_TOKEN_B64", "<base64-encoded-token>", '""')):
        assert _refusals(_scan(tmp_path, f"ok{i}.yaml", _secret(value))) == [], value
    text = _secret('""').replace("data:\n  token: \"\"", "stringData:\n  token: hf_plain token")
    assert _refusals(_scan(tmp_path, "sd.yaml", text)) == []


def test_a_workflow_whose_steps_start_no_server_says_so_as_github_actions(tmp_path: Path):
    text = ("name: images\non: [push]\njobs:\n  pull:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: example/serve@v1\n        with:\n          image: vllm/vllm-openai:v0.9.2\n")
    result = _scan(tmp_path, "pull.yml", text)
    assert result.servers == []
    [note] = [p for p in result.problems if p.level == "note"]
    assert "GitHub Actions" in note.message and "`uses:`" in note.message and "not read as deployments" not in note.message


# ---- app-template's values, under a dependency's alias

ALIASED = """nameOverride: chat
engine:
  defaultPodOptions:
    nodeSelector:
      nvidia.com/gpu.product: NVIDIA-L4
  controllers:
    serve:
      type: statefulset
      containers:
        vllm:
          image:
            repository: vllm/vllm-openai
            tag: v0.10.1
          args: ["--config", "/etc/vllm/serve.yaml"]
          resources:
            limits:
              nvidia.com/gpu: 1
  persistence:
    settings:
      type: configMap
      name: serve-config
      globalMounts:
        - path: /etc/vllm
"""

SETTINGS = """apiVersion: v1
kind: ConfigMap
metadata:
  name: serve-config
data:
  serve.yaml: |
    model: Qwen/Qwen2.5-1.5B-Instruct
    max-model-len: 4096
"""


def test_app_template_values_under_an_alias_are_read_with_their_config_map(tmp_path: Path):
    (tmp_path / "values.yaml").write_text(ALIASED)
    (tmp_path / "settings.yaml").write_text(SETTINGS)
    [server] = scan([str(tmp_path / "values.yaml"), str(tmp_path / "settings.yaml")]).servers
    assert server.name == "serve" and server.kind == "statefulset" and server.vllm_version == "0.10.1"
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct" and server.args["max_model_len"] == 4096
    assert server.gpu.count == 1 and server.gpu.type == "L4"


def test_a_mapping_with_keys_app_template_does_not_have_is_not_read_as_its_values(tmp_path: Path):
    other = ALIASED.replace("  persistence:", "  modelName: x\n  persistence:")
    assert _scan(tmp_path, "values.yaml", other).servers == []
    # without the ConfigMap the server says its settings are in a file not read, not that it names no model
    [server] = _scan(tmp_path, "alone.yaml", ALIASED).servers
    assert server.model is None and server.unread_config is not None
