"""The twenty-first round of hostile inputs (benchmarks/hostile_blind21.py, written blind), the cases that
failed there as tests: each fails without the fix it holds.

Every case is written to tmp_path and run through the real CLI in its own process, as CI runs vramlint.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.test_hostile_bounds import write

ROOT = Path(__file__).resolve().parent.parent
CHART = "apiVersion: v2\nname: c\nversion: 0.1.0\n"
TEMPLATE = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
            "          args: [\"--model\", \"{{ .Values.model }}\"]\n")


def check(cwd: Path, *argv: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", *argv, "--offline", "--output-format", "json"],
                          cwd=str(cwd), env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def test_a_helm_values_file_outside_the_tree_but_under_the_working_folder_is_said_on_the_configuration(tmp_path):
    # run from the folder above the repository: the outside file's path is shown relative, not as written
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "values.yaml").write_text("model: secret-model\n")
    write(tmp_path / "repo", {".vramlint.yaml": f"helm-values:\n  - {tmp_path / 'outside' / 'values.yaml'}\n",
                              "c/Chart.yaml": CHART, "c/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\n",
                              "c/templates/d.yaml": TEMPLATE})
    report = check(tmp_path, "repo")
    said = [(f["file"], f["line"]) for f in report["findings"] if "outside the scanned tree" in f["message"]]
    assert said == [("repo/.vramlint.yaml", 2)]
    assert "secret-model" not in json.dumps(report)


COMPOSE_COUNT = """services:
  llm:
    image: vllm/vllm-openai:v0.9.2
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
    deploy:
      resources:
        reservations:
          devices:
          - count: COUNT
            driver: nvidia
            capabilities: [gpu]
"""


def test_a_compose_device_count_compose_go_refuses_is_an_error_on_its_line(tmp_path):
    # compose-go's DeviceCount: 'all' (any case) or what strconv.ParseInt reads as an int64; nothing else
    refused = {"-.inf": "'-inf'", "1.5": "'1.5'", "true": "'true'", "two": "'two'",
               "99999999999999999999": "'99999999999999999999'"}
    for i, (count, shown) in enumerate(refused.items()):
        write(tmp_path / f"r{i}", {"compose.yaml": COMPOSE_COUNT.replace("COUNT", count)})
        report = check(tmp_path / f"r{i}", ".", "--gpu", "L4")
        said = [(f["line"], f["level"]) for f in report["findings"] if f["rule"] == "VRL102"]
        assert said == [(9, "error")], count
        assert any(f"device count {shown} is neither 'all' nor an integer" in f["message"]
                   for f in report["findings"]), count
    for i, (count, expected) in enumerate({"ALL": None, '"${N:-2}"': 2, '"${N}"': None, "3": 3}.items()):
        write(tmp_path / f"a{i}", {"compose.yaml": COMPOSE_COUNT.replace("COUNT", count)})
        report = check(tmp_path / f"a{i}", ".", "--gpu", "L4")
        assert not [f for f in report["findings"] if f["rule"] == "VRL102"], count
        assert report["servers"][0]["gpu"]["count"] == expected, count


def test_a_configuration_version_that_is_none_is_said_beside_an_unknown_key(tmp_path):
    deploy = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
              "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.9.2\n"
              "        args: [--model, Qwen/Qwen2.5-1.5B-Instruct]\n")
    write(tmp_path, {".vramlint.yaml": "gpu: L4\nno-such-key: 1\nvllm-version: banana\n", "d.yaml": deploy})
    report = check(tmp_path, ".")
    said = [(f["line"], f["message"].split(";")[0]) for f in report["findings"] if f["file"] == ".vramlint.yaml"]
    assert [line for line, _ in said] == [2, 3]
    assert "'banana' is not a vLLM version" in said[1][1]


def test_a_hub_config_whose_model_type_or_architecture_holds_control_characters_is_refused():
    from vramlint.modelconfig import config_problem

    base = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
            "intermediate_size": 512, "vocab_size": 1000, "torch_dtype": "float16"}
    assert config_problem(base) is None
    for name in ("gpt_oss", "xlm-roberta", "qwen2.5_vl"):
        assert config_problem(dict(base, model_type=name)) is None
    assert "field model_type is no model name" in config_problem(dict(base, model_type="\x1b[2J\n::error::x"))
    assert "field architectures[1] is no model name" in config_problem(
        dict(base, architectures=["LlamaForCausalLM", "Llama ForCausalLM"]))
    assert "field text_config.model_type" in config_problem(dict(base, text_config={"model_type": "a\x07"}))


def test_a_template_made_invalid_yaml_by_an_unevaluated_part_is_said_in_the_reports(tmp_path):
    # a function vramlint's evaluator does not evaluate, at a line's start, breaks the YAML after it, and the server
    # below was gone with a line on stderr only
    template = '{{ set (dict) "a" "b" }}\n' + TEMPLATE
    write(tmp_path, {"c/Chart.yaml": CHART, "c/values.yaml": 'model: Qwen/Qwen2.5-1.5B-Instruct\n',
                     "c/templates/d.yaml": template})
    report = check(tmp_path, ".", "--gpu", "L4")
    said = [(f["file"], f["line"], f["level"]) for f in report["findings"] if f["rule"] == "VRL102"]
    assert said == [("c/templates/d.yaml", 2, "note")]
    assert "not valid YAML" in report["findings"][0]["message"]


def test_a_self_evaluating_tpl_stops_at_the_depth_limit_on_its_line(tmp_path):
    # tpl of a values string that calls tpl of itself: Helm never ends it (each tpl is a new execution, so Go's
    # depth limit does not stop it); vramlint's evaluator stops at its include depth, on the calling line
    template = "{{ tpl .Values.t . }}\n" + TEMPLATE
    write(tmp_path, {"c/Chart.yaml": CHART, "c/values.yaml": 'model: Qwen/Qwen2.5-1.5B-Instruct\nt: "{{ tpl .Values.t . }}"\n',
                     "c/templates/d.yaml": template})
    report = check(tmp_path, ".", "--gpu", "L4")
    said = [(f["file"], f["line"], f["message"]) for f in report["findings"] if f["rule"] == "VRL102"]
    assert [(file, line) for file, line, _ in said] == [("c/templates/d.yaml", 1)]
    assert "tpl nested too deeply" in said[0][2]


def test_fixes_on_a_megabyte_minified_line_cost_each_server_its_words_not_the_line(tmp_path):
    # a kind: List on one 4.4 MB line (json.dumps without indent), each server with a flag vLLM does not know: every
    # VRL009 fix sliced and regex-searched the whole line (these 3,000 servers: 20.6 CPU-s, 8.0 user + 12.6
    # system, now 1.7)
    import resource

    item = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "v"},
            "spec": {"template": {"spec": {"containers": [{
                "name": "vllm", "image": "vllm/vllm-openai:v0.9.2",
                "args": ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--no-such-flag", "x" * 1200],
                "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
    items = [json.loads(json.dumps(item).replace('"name": "v"', f'"name": "v{i}"')) for i in range(3000)]
    (tmp_path / "list.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items},
                                                   separators=(",", ":")))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = check(tmp_path, "list.json", "--gpu", "L4")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    fixed = [f for f in report["findings"] if f["rule"] == "VRL009" and f["fix"]["edits"]]
    assert len(fixed) == 3000 and {f["line"] for f in fixed} == {1}
    assert (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime) < 6
