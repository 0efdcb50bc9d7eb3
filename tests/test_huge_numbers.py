"""Numbers past float64 in YAML (`1e999`, a 400-digit size) in every slot: read as Go's YAML readers read them (text,
with a warning on the line), never an internal error, never a refusal that Helm or compose does not make
(benchmarks/hostile_eighth.py's numbers-* cases)."""

from __future__ import annotations

import pytest

from tests.test_hostile_bounds import deployment, findings, line_of, run_cli, write
from vramlint.yamlload import load_text

QWEN = ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
COMPOSE = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n    command: --model Qwen/Qwen2.5-1.5B-Instruct\n"


@pytest.mark.parametrize("text", ["a: 1e999\n", "a: -1.5e+400\n", "a: [x, 1e999]\n", "%YAML 1.2\n---\na: 1e999\n"])
def test_a_float_past_float64_is_its_text_with_a_warning_on_its_line(text):
    # yaml.v2/v3 resolve: strconv.ParseFloat's range error makes the scalar a string (Kubernetes, Helm, compose)
    docs, problems = load_text(text, "f.yaml")
    data = docs[0].data["a"]
    assert (data[1] if isinstance(data, list) else data) in ("1e999", "-1.5e+400")
    line = text.count("\n", 0, text.index("a:")) + 1
    assert [(p.line, p.level) for p in problems] == [(line, "warning")]
    assert "beyond any float64" in problems[0].message


def test_infinity_written_as_such_and_a_tiny_float_are_numbers():
    docs, problems = load_text("a: .inf\nb: -.Inf\nc: 1e-999\n", "f.yaml")
    assert docs[0].data == {"a": float("inf"), "b": -float("inf"), "c": 0.0} and problems == []


def test_helm_loads_a_values_file_with_1e999_which_is_text_to_it(tmp_path):
    # Helm converts values with sigs.k8s.io/yaml (yaml.v2 underneath): 1e999 is the string "1e999", which JSON holds;
    # only `.inf` is a number JSON cannot hold ("Helm cannot load", said before for both)
    chart = {"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
             "c/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 1e999\n",
             "c/templates/d.yaml": deployment(["--model", "{{ .Values.model }}", "--max-model-len",
                                               "{{ .Values.maxLen }}"])}
    write(tmp_path, chart)
    _, report, _ = run_cli(tmp_path)
    assert not [f for f in report["findings"] if "Helm cannot load" in f["message"]]
    refused = findings(report, "VRL005")
    assert refused and "invalid int value: '1e999'" in refused[0]["message"]  # vLLM's argparse on the rendered text
    assert (refused[0]["file"], refused[0]["line"]) == ("c/values.yaml", 2)  # where the value is written


def test_a_compose_shm_size_past_float64_is_no_internal_error(tmp_path):
    # one `command` (a second would make compose refuse the file: a duplicate key)
    text = COMPOSE.replace("    command: --model Qwen/Qwen2.5-1.5B-Instruct\n", "") + (
        f"    shm_size: {'9' * 400}g\n    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999\n")
    write(tmp_path, {"compose.yaml": text})
    _, report, _ = run_cli(tmp_path)
    assert not [f for f in report["findings"] if "vramlint failed" in f["message"]]
    assert [f["line"] for f in findings(report, "VRL005")] == [line_of(text, "--max-model-len")]


def test_replicas_and_gpu_count_of_1e999_are_said_where_written(tmp_path):
    text = deployment(QWEN).replace("spec:\n  template:", "spec:\n  replicas: 1e999\n  template:", 1).replace(
        'nvidia.com/gpu: "1"', "nvidia.com/gpu: 1e999")
    write(tmp_path, {"d.yaml": text})
    _, report, _ = run_cli(tmp_path)
    said = sorted(f["line"] for f in findings(report, "VRL102") if "beyond any float64" in f["message"])
    assert said == [line_of(text, "replicas:"), line_of(text, "nvidia.com/gpu")]
    assert len(report["servers"]) == 1


def test_a_gpu_memory_label_past_float64_is_no_gpu():
    from vramlint.gpus import _from_memory_label

    assert _from_memory_label("1e999", None)[1] is None  # OverflowError (int of infinity) before
