"""Fixes made with the held-out-17 batch in view, each on fixtures of its own: a `docker run` in a script reads the
variables the script assigns, Habana's container runtime gives the Gaudi devices HABANA_VISIBLE_DEVICES lists,
`opentelemetry-instrument` runs the command after its options, a file named `x.tmpl.yaml` is a template, and an
unset `.Values.global` key may come from a parent chart."""
from pathlib import Path

from vramlint.scan import scan

RUN = """#!/bin/bash
NAME=llm
WEIGHTS="Qwen/Qwen2.5-7B-Instruct"
if [ -n "$BIG" ]; then
  LEN=32768
fi
docker run -d --gpus all --name "$NAME" vllm/vllm-openai:v0.9.2 --model ${WEIGHTS} --max-model-len $LEN --port 8000
"""


def _one(tmp_path: Path, name: str, text: str):
    f = tmp_path / name
    f.write_text(text)
    result = scan([str(f)])
    assert len(result.servers) == 1, result.problems
    return result.servers[0], result


def test_docker_run_in_a_script_expands_what_the_script_assigns(tmp_path: Path):
    server, _ = _one(tmp_path, "serve.sh", RUN)
    assert server.kind == "docker run"
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.name == "llm"  # `--name "$NAME"`: the container's name as the script sets it
    # assigned only under `if`: whether it runs is not known, so the value is not taken
    assert server.args["max_model_len"] is None


def test_docker_run_leaves_a_variable_the_script_does_not_set_unknown(tmp_path: Path):
    server, _ = _one(tmp_path, "serve.sh", RUN.replace('WEIGHTS="Qwen/Qwen2.5-7B-Instruct"\n', ""))
    assert server.model is None


def test_habana_runtime_gives_the_gaudi_devices_the_variable_lists(tmp_path: Path):
    text = ("model=meta-llama/Llama-3.1-8B-Instruct\n"
            "docker run --runtime=habana -e HABANA_VISIBLE_DEVICES=4,5 --ipc=host vllm/vllm-openai:v0.9.2 "
            "--model $model --tensor-parallel-size 2\n")
    server, _ = _one(tmp_path, "gaudi.sh", text)
    assert server.gpu.vendor == "intel-gaudi" and server.gpu.count == 2
    everything, _ = _one(tmp_path, "all.sh", text.replace("=4,5", "=all"))
    assert everything.gpu.vendor == "intel-gaudi" and everything.gpu.count is None  # the host's: not said
    by_module, _ = _one(tmp_path, "mod.sh", text.replace("HABANA_VISIBLE_DEVICES=4,5", "HABANA_VISIBLE_MODULES=0,1,2"))
    assert by_module.gpu.count == 3


def test_compose_on_habanas_runtime_counts_the_listed_gaudi_devices(tmp_path: Path):
    text = ("services:\n  llm:\n    image: vllm/vllm-openai:v0.9.2\n    runtime: habana\n    environment:\n"
            "      HABANA_VISIBLE_DEVICES: '0,1,2,3'\n    command: --model meta-llama/Llama-3.1-8B-Instruct\n")
    server, _ = _one(tmp_path, "compose.yaml", text)
    assert server.gpu.vendor == "intel-gaudi" and server.gpu.count == 4
    unset, _ = _one(tmp_path, "compose2.yaml", text.replace("'0,1,2,3'", "${CARDS}"))
    assert unset.gpu.vendor == "intel-gaudi" and unset.gpu.count is None  # set where compose runs


def test_opentelemetry_instrument_runs_the_command_after_its_options(tmp_path: Path):
    text = ("services:\n  llm:\n    image: vllm/vllm-openai:v0.9.2\n    command: /bin/bash -c \"pip install x && "
            "opentelemetry-instrument --traces_exporter otlp --service_name=chat python3 -m "
            "vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct --port 80\"\n")
    server, _ = _one(tmp_path, "compose.yaml", text)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args.get("port") == 80


BROKEN = ("{{ define \"sidecar\" }} name: x-{{ .Suffix }}\n  image: {{ .Image }}\n{{ end }}\n"
          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: vllm\n")


def test_a_file_named_as_a_template_before_its_yaml_extension_is_read_as_one(tmp_path: Path):
    for name in ("deployment.tmpl.yaml", "model.template.yml"):
        f = tmp_path / name
        f.write_text(BROKEN)
        problems = [p for p in scan([str(f)]).problems if p.message.startswith("invalid YAML")]
        assert problems and all(p.level == "note" for p in problems), name
    plain = tmp_path / "deployment.yaml"
    plain.write_text(BROKEN)
    assert any(p.level == "error" and p.message.startswith("invalid YAML") for p in scan([str(plain)]).problems)


CHART = "apiVersion: v2\nname: engine\nversion: 0.1.0\n"
TEMPLATE = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: engine\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.9.2\n"
            "          args: [--model, Qwen/Qwen2.5-7B-Instruct]\n"
            "          env:\n            - name: CACHE\n              value: {{{{ .Values.{path} | quote }}}}\n")


def _chart(tmp_path: Path, path: str, values: str) -> list:
    (tmp_path / "templates").mkdir(parents=True, exist_ok=True)
    (tmp_path / "Chart.yaml").write_text(CHART)
    (tmp_path / "values.yaml").write_text(values)
    (tmp_path / "templates" / "deployment.yaml").write_text(TEMPLATE.format(path=path))
    return [p for p in scan([str(tmp_path)]).problems if "nil pointer" in p.message]


def test_an_unset_global_a_parent_chart_may_pass_is_a_warning(tmp_path: Path):
    problems = _chart(tmp_path, "global.cache.size", "global:\n  proxy: {}\n")
    assert len(problems) == 1 and problems[0].level == "warning"
    assert ".Values.global.cache is not set" in problems[0].message


def test_an_unset_value_of_the_chart_itself_is_one_the_release_gives(tmp_path: Path):
    # with no release in the tree the chart expects the key from its release: a warning (audit21 C3); a release
    # whose values still leave it out is an error (tests/test_helm_releases.py)
    problems = _chart(tmp_path, "cache.size", "global:\n  proxy: {}\n")
    assert len(problems) == 1 and problems[0].level == "warning"
    assert "expects this value from its release" in problems[0].message
