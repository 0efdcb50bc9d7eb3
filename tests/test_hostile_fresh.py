"""The third round of hostile inputs (benchmarks/hostile_fresh.py), the cheap ones as tests: each ran over its
time or memory, crashed, or reported on the wrong line before the fix it holds.

Every case is written to tmp_path and run through the real CLI in its own process (with a timeout), as CI runs
vramlint on a pull request.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.test_hostile_bounds import deployment, findings, line_of, run_cli, script_deployment, write

QWEN = ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
CHART = "apiVersion: v2\nname: c\nversion: 0.1.0\n"
TEMPLATE = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
            "          args: [\"--model\", \"{{ .Values.model }}\"]\n")


def test_servers_of_one_file_list_only_their_own_findings(tmp_path):
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    write(tmp_path, {"d.yaml": bad + "---\n" + deployment(QWEN).replace("name: llm", "name: ok")})
    _, report, _ = run_cli(tmp_path)
    first, second = report["servers"]
    assert first["yaml_path"] == second["yaml_path"]  # the same key: file and YAML path
    assert [f["rule"] for f in first["findings"]] == ["VRL005"]
    assert second["findings"] == []


def test_thousands_of_runtimes_in_one_templated_file_stay_linear(tmp_path):
    runtime = ("apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata: {{name: rt{i}}}\nspec:\n"
               "  supportedModelFormats: [{{name: huggingface, autoSelect: true}}]\n  containers:\n"
               "    - name: kserve-container\n      image: kserve/huggingfaceserver:v0.15.0-gpu\n"
               "      args: [--model_name={{{{.Name}}}}, --backend=vllm]\n")
    write(tmp_path, {"k.yaml": "---\n".join(runtime.format(i=i) for i in range(1500))})
    start = time.process_time()
    _, report, _ = run_cli(tmp_path)
    assert len(report["servers"]) == 1500
    assert all(len(s["findings"]) == 1 for s in report["servers"])  # its own note, not all 1,500
    assert time.process_time() - start < 5


def test_many_suppression_comments_are_folded_past_200_per_file(tmp_path):
    comments = "  # vramlint: ignore[VRL001] not used\n" * 1000 + "  # vramlint: ignore[NOPE]\n" * 300
    write(tmp_path, {"d.yaml": deployment(QWEN).replace("spec:\n  template", "spec:\n" + comments + "  template")})
    _, report, _ = run_cli(tmp_path)
    unused, malformed = findings(report, "VRL100"), findings(report, "VRL101")
    assert len(unused) == 201 and len(malformed) == 201
    last = unused[-1]
    assert last["line"] == 206 and "800 more unused suppression comments in this file, from line 206 to line 1005" \
        in last["message"]
    assert "100 more unreadable vramlint comments" in malformed[-1]["message"]


def test_a_comment_on_the_line_above_still_suppresses(tmp_path):
    text = deployment(QWEN + ["--max-model-len", "999999"])
    at = line_of(text, '"--max-model-len"')
    lines = text.splitlines(keepends=True)
    lines.insert(at - 1, "            # vramlint: ignore[VRL005] on purpose\n")
    write(tmp_path, {"d.yaml": "".join(lines)})
    code, report, _ = run_cli(tmp_path)
    assert code == 0 and [f["rule"] for f in report["findings"] if not f["suppressed"]] == []


@pytest.mark.parametrize("tp,pp", [(1, 2**62), (1000, 10**6)])
def test_an_engine_wider_than_vramlint_sizes_is_said_on_the_flag_not_computed(tmp_path, tp, pp):
    text = deployment(QWEN + ["--tensor-parallel-size", str(tp), "--pipeline-parallel-size", str(pp)])
    write(tmp_path, {"d.yaml": text})
    start = time.process_time()
    _, report, _ = run_cli(tmp_path, timeout=30)
    assert time.process_time() - start < 5
    assert not findings(report, "VRL000")
    said = [f for f in findings(report, "VRL010") if "GPUs in one engine" in f["message"]]
    assert len(said) == 1 and said[0]["level"] == "warning"
    assert said[0]["line"] == line_of(text, '"--pipeline-parallel-size"')
    assert report["servers"][0]["budget"] is None


def test_subcharts_linked_back_to_their_chart_are_not_read_again(tmp_path):
    write(tmp_path, {"c/Chart.yaml": CHART, "c/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\n",
                     "c/templates/d.yaml": TEMPLATE})
    for i in range(10):
        (tmp_path / "c" / "charts").mkdir(exist_ok=True)
        (tmp_path / "c" / "charts" / f"s{i}").symlink_to("..")
    _, report, err = run_cli(tmp_path, timeout=30)
    assert [s["file"] for s in report["servers"]] == ["c/templates/d.yaml"]
    assert "c/charts/s0: a link back to a chart that holds it" in err


def test_subcharts_under_one_chart_are_bounded(tmp_path):
    files = {}
    for level in range(6):  # c0 has 12 links to c1, which has 12 to c2...: 12**5 paths to 6 charts
        files.update({f"c{level}/Chart.yaml": CHART.replace("name: c", f"name: c{level}"),
                      f"c{level}/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\n",
                      f"c{level}/templates/d.yaml": TEMPLATE})
    write(tmp_path, files)
    for level in range(5):
        (tmp_path / f"c{level}" / "charts").mkdir()
        for i in range(12):
            (tmp_path / f"c{level}" / "charts" / f"s{i}").symlink_to(f"../../c{level + 1}")
    start = time.process_time()
    _, report, err = run_cli(tmp_path, timeout=60)
    assert time.process_time() - start < 5
    # a finding on the Chart.yaml of the chart whose subcharts were left out (it was a run note on stderr)
    said = [f for f in report["findings"] if "more than 200 subcharts under one chart (vramlint's limit)" in
            f["message"]]
    assert said and all(f["file"].endswith("Chart.yaml") and f["level"] == "warning" for f in said)


def test_a_yaml_document_of_too_many_nodes_is_said_where_and_the_others_are_read(tmp_path):
    text = deployment(QWEN + ["--max-model-len", "999999"]) + "---\nkind: ConfigMap\nx: [" + ",".join(
        ["1"] * 300_000) + "]\n"
    write(tmp_path, {"d.yaml": text})
    _, report, _ = run_cli(tmp_path)
    assert [f["line"] for f in findings(report, "VRL005")] == [line_of(text, '"--max-model-len"')]
    bound = [f for f in findings(report, "VRL102") if "250,000 nodes" in f["message"]]
    assert len(bound) == 1 and bound[0]["line"] == line_of(text, "x: [")


def test_node_bound_keeps_line_numbers_and_separators():
    from vramlint.yamlload import load_text

    text = "a: 1\n---\nb: [" + ",".join(["2"] * 50) + "]\n---\nc: 3\n"
    docs, problems = load_text(text, "f.yaml", max_nodes=20)
    assert [d.data for d in docs] == [{"a": 1}, {"c": 3}]
    assert [(p.line, p.level) for p in problems] == [(3, "warning")]
    assert docs[1].index == 2


def test_a_values_file_of_too_many_nodes_is_refused_before_it_is_built(tmp_path):
    values = "model: Qwen/Qwen2.5-1.5B-Instruct\nbig:\n" + "".join(f"  k{i}: [1, 2]\n" for i in range(60_000))
    write(tmp_path, {"c/Chart.yaml": CHART, "c/values.yaml": values, "c/templates/d.yaml": TEMPLATE})
    start = time.process_time()
    _, report, _ = run_cli(tmp_path)
    assert time.process_time() - start < 5
    said = [f for f in findings(report, "VRL102") if f["file"] == "c/values.yaml"]
    assert len(said) == 1 and "100,002 nodes" in said[0]["message"] and said[0]["line"] > 2


def test_json_arguments_nested_past_the_recursion_limit_are_vllms_own_error(tmp_path):
    text = deployment(QWEN + ["--hf-overrides", "[" * 50_000 + "]" * 50_000])
    write(tmp_path, {"d.yaml": text})
    _, report, _ = run_cli(tmp_path)
    (f,) = findings(report, "VRL005")
    assert "RecursionError" in f["message"] and f["line"] == line_of(text, '"--hf-overrides"') + 1


def test_nested_explicit_keys_are_said_on_their_line_and_the_other_document_read(tmp_path):
    text = deployment(QWEN + ["--max-model-len", "999999"]) + "---\n" + "? " * 2000 + "x\n"
    write(tmp_path, {"d.yaml": text})
    _, report, _ = run_cli(tmp_path)
    assert findings(report, "VRL005")
    (deep,) = findings(report, "VRL102")
    assert deep["line"] == line_of(text, "? ? ?") and "nested more than 150 levels" in deep["message"]


def test_a_flag_value_known_only_at_run_time_is_said_not_guessed(tmp_path):
    text = script_deployment("N=$(( 2 ** 99999999 ))\nvllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len $N")
    write(tmp_path, {"d.yaml": text})
    _, report, _ = run_cli(tmp_path)
    (said,) = findings(report, "VRL010")
    assert "the value of --max-model-len is known only at run time" in said["message"]


def test_an_unknown_model_or_port_is_not_said_again_as_partly_checked(tmp_path):
    # the unknown model is said where the model is resolved (the run's summary), the port sizes nothing: only the
    # unknown --max-model-len, which the budget reads, is a 'partly checked' note
    text = script_deployment("vllm serve $MODEL --port $PORT --max-model-len $N")
    write(tmp_path, {"d.yaml": text})
    _, report, _ = run_cli(tmp_path)
    messages = " ".join(f["message"] for f in findings(report, "VRL010"))
    assert "the value of --max-model-len is known only at run time" in messages
    assert "the value of --model" not in messages and "the value of --port" not in messages


def _run_config_error(tmp_path):
    import os
    import subprocess
    import sys

    from tests.test_hostile_bounds import ROOT

    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("text,where", [
    ("[tool.vramlint]\nexclude = " + "[" * 10_000 + "]" * 10_000 + "\n", "pyproject.toml:2:111:"),
    ("[tool.vramlint]\nx = " + "{a = " * 10_000 + "1" + "}" * 10_000 + "\n", "pyproject.toml:2:505:"),
])
def test_toml_nested_past_the_recursion_limit_is_a_configuration_error_on_its_line(tmp_path, text, where):
    write(tmp_path, {"pyproject.toml": text, "d.yaml": deployment(QWEN)})
    proc = _run_config_error(tmp_path)
    # a found configuration file that cannot be used is a VRL102 finding on its line; the run goes on (exit 1)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert f"--> {where[:-1]}\n" in proc.stdout and "TOML nested more than 100 levels deep" in proc.stdout


def test_an_unknown_gpu_in_the_configuration_file_is_said_on_its_line(tmp_path):
    write(tmp_path, {".vramlint.yaml": "fail-on: error\ngpu: NOPE-9000\n", "d.yaml": deployment(QWEN)})
    proc = _run_config_error(tmp_path)
    assert proc.returncode == 1 and "--> .vramlint.yaml:2:" in proc.stdout
    assert "'gpu': unknown GPU 'NOPE-9000'" in proc.stdout


def test_pathological_override_globs_match_in_linear_time(tmp_path):
    overrides = "".join(f"  - files: ['{'*' * 40}a*a*a*a*a*a*a*a*a*a*b{i}']\n    ignore: [VRL001]\n"
                        for i in range(300))
    write(tmp_path, {".vramlint.yaml": "overrides:\n" + overrides, "a" * 200 + ".yaml": deployment(QWEN)})
    start = time.process_time()
    run_cli(tmp_path, timeout=60)
    assert time.process_time() - start < 5


def test_glob_semantics_are_unchanged_by_the_linear_engine():
    from vramlint.config import glob_match

    assert glob_match("**/*.yaml", "a/b/c.yaml") and glob_match("deploy/*", "deploy/x.yaml")
    assert not glob_match("deploy/*.yaml", "deploy/sub/x.yaml") and glob_match("a***b", "axxb")
    assert glob_match("x?[0-9].yaml", "xa1.yaml") and not glob_match("x?[!0-9].yaml", "xa1.yaml")
    assert json.dumps(glob_match("c.yml", "c.yaml")) == "false"


def test_a_local_config_with_no_attention_heads_is_not_sized(tmp_path):
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "num_hidden_layers": 32, "num_attention_heads": 0, "num_key_value_heads": 0,
              "intermediate_size": 14336, "vocab_size": 128256, "torch_dtype": "bfloat16"}
    write(tmp_path, {"m/config.json": json.dumps(config), "d.yaml": deployment(["--model", "./m"])})
    _, report, _ = run_cli(tmp_path)
    assert report["servers"][0]["budget"] is None
    assert "field num_attention_heads is 0: a model has at least one attention head" in json.dumps(
        report["summary"]["unchecked"])


def test_a_gitignore_too_large_for_one_re2_set_is_still_applied(tmp_path):
    # 3,000 plain patterns are more than pathspec's RE2 set can hold ("failed to compile Set": an internal error)
    gitignore = "".join(f"build{i}/\n" for i in range(3000)) + "vendored/\n"
    write(tmp_path, {".gitignore": gitignore, "d.yaml": deployment(QWEN), "vendored/x.yaml": deployment(QWEN)})
    (tmp_path / ".git").mkdir()
    _, report, _ = run_cli(tmp_path)
    assert [s["file"] for s in report["servers"]] == ["d.yaml"]


def test_hostile_gitignore_patterns_cost_a_bounded_time_and_print_nothing(tmp_path):
    gitignore = "".join(f"*a*a*a*a*a*a*a*a*a*a*b{i}/**/x\n" for i in range(2000))
    write(tmp_path, {".gitignore": gitignore, "a" * 200 + "/x.yaml": deployment(QWEN)})
    (tmp_path / ".git").mkdir()
    start = time.process_time()
    _, report, err = run_cli(tmp_path)
    assert time.process_time() - start < 5
    assert len(report["servers"]) == 1 and "CoalesceWalker" not in err


def test_a_400_digit_gpu_request_is_no_rule_crash(tmp_path):
    # found by benchmarks/fuzz_inputs.py --seed 41: VRL006's fix compared the request through float()
    text = deployment(QWEN + ["--tensor-parallel-size", "2"]).replace('nvidia.com/gpu: "1"', "nvidia.com/gpu: -" + "9" * 400)
    write(tmp_path, {"d.yaml": text})
    _, report, _ = run_cli(tmp_path)
    assert not findings(report, "VRL000") and findings(report, "VRL006")


def test_helm_values_of_the_configuration_out_of_the_tree_are_said_on_its_line(tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text("model: secret-model\n")
    repo = tmp_path / "repo"
    write(repo, {".vramlint.yaml": f"fail-on: error\nhelm-values: [{outside}, /proc/self/environ]\n",
                 "c/Chart.yaml": CHART, "c/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\n",
                 "c/templates/d.yaml": TEMPLATE})
    _, report, _ = run_cli(repo)
    said = [f for f in findings(report, "VRL102") if "outside the scanned tree" in f["message"]]
    assert [(f["file"], f["line"]) for f in said] == [(".vramlint.yaml", 2), (".vramlint.yaml", 2)]
    assert "secret-model" not in json.dumps(report)


def test_zero_kv_heads_and_a_zero_hidden_size_are_refused_not_sized_as_another_model():
    from vramlint.modelconfig import config_problem

    base = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
            "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
            "intermediate_size": 14336, "vocab_size": 128256, "torch_dtype": "bfloat16"}
    assert config_problem(base) is None
    # 0 KV heads was read as "not given" and sized as 32 KV heads (MHA); vLLM divides by it
    assert "num_key_value_heads is 0" in config_problem(dict(base, num_key_value_heads=0))
    assert "n_head_kv is 0" in config_problem(dict(base, n_head_kv=0))
    assert "hidden_size is 0" in config_problem(dict(base, hidden_size=-0.0))
    assert "hidden_size is 0" in config_problem(dict(base, hidden_size=0))


def test_subcharts_nested_deeper_than_vramlint_reads_are_said_not_dropped(tmp_path):
    files = {}
    path = "c"
    for level in range(8):  # c/charts/s1/charts/s2/...: Helm renders every level
        name = "c" if level == 0 else f"s{level}"
        files.update({f"{path}/Chart.yaml": CHART.replace("name: c", f"name: {name}"),
                      f"{path}/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\n"})
        path = f"{path}/charts/s{level + 1}"
    files["c/templates/d.yaml"] = TEMPLATE
    write(tmp_path, files)
    _, report, err = run_cli(tmp_path, timeout=30)
    assert [s["file"] for s in report["servers"]] == ["c/templates/d.yaml"]
    deep = "c" + "".join(f"/charts/s{i}" for i in range(1, 6)) + "/charts"
    [said] = [f for f in report["findings"] if "subcharts nested more than 5 levels deep" in f["message"]]
    assert said["file"] == deep[:-len("/charts")] + "/Chart.yaml" and said["line"] == 1 and f"those in {deep}" in \
        said["message"] and said["level"] == "warning"
