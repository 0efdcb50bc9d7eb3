"""Hostile input through the real CLI: expansion budgets (YAML aliases, integers, shell variables, `$(VAR)`),
per-file isolation, and the findings vLLM's / the shell's own behaviour calls for.

Every case is written to tmp_path and run in a separate process with a timeout, as CI runs vramlint on a
pull request: the run must end, with exit status 0 or 1 (never 2), and the finding on the right line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def deployment(args: list[str], *, image: str = "vllm/vllm-openai:v0.8.5", env: str = "", head: str = "") -> str:
    arg_lines = "".join(f"            - {json.dumps(a)}\n" for a in args)
    return (f"{head}apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n"
            "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
            f"        - name: vllm\n          image: {image}\n{env}          args:\n{arg_lines}"
            "          resources:\n            limits:\n              nvidia.com/gpu: \"1\"\n")


def script_deployment(script: str) -> str:
    body = "".join(f"              {line}\n" for line in script.split("\n"))
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: scripted\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
            f"          command: [\"sh\", \"-c\"]\n          args:\n            - |\n{body}")


def run_cli(folder: Path, *extra: str, timeout: float = 60) -> tuple[int, dict, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline", "--output-format", "json",
                           *extra], cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def findings(report: dict, rule: str) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == rule]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def billion_laughs(indent: str = "") -> str:
    lines = [f'{indent}a0: &a0 ["lol"]']
    for i in range(1, 10):
        lines.append(f"{indent}a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


# --- YAML aliases ------------------------------------------------------------------------------------------

def test_alias_bomb_in_a_manifest_is_one_finding_on_the_alias_line(tmp_path):
    text = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]) + "---\napiVersion: v1\nkind: ConfigMap\n" \
        "metadata: {name: x}\ndata:\n" + billion_laughs("  ")
    write(tmp_path, {"deploy.yaml": text})
    code, report, _ = run_cli(tmp_path, timeout=30)
    bombs = [f for f in findings(report, "VRL102") if "alias" in f["message"]]
    assert code == 1 and len(bombs) == 1
    assert "*a" in text.splitlines()[bombs[0]["line"] - 1]
    assert report["servers"] and report["servers"][0]["model"] == "Qwen/Qwen2.5-1.5B-Instruct"  # the rest is read


def test_alias_bomb_in_an_unused_values_key_does_not_stop_the_chart(tmp_path):
    chart = {
        "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        "chart/templates/deploy.yaml": deployment(["--model", "{{ .Values.model }}"]),
        "chart/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nunused:\n" + billion_laughs("  "),
    }
    write(tmp_path, chart)
    code, report, _ = run_cli(tmp_path, timeout=30)
    bombs = [f for f in findings(report, "VRL102") if "alias" in f["message"]]
    assert code == 1 and bombs and bombs[0]["file"] == "chart/values.yaml"
    assert "*a" in chart["chart/values.yaml"].splitlines()[bombs[0]["line"] - 1]
    assert [s["model"] for s in report["servers"]] == ["Qwen/Qwen2.5-1.5B-Instruct"]


def test_merge_key_bomb_in_compose_x_anchors(tmp_path):
    merge = ["x-m0: &m0 {k: v}"] + [f"x-m{i}: &m{i} {{<<: [*m{i - 1}], a{i}: *m{i - 1}, b{i}: *m{i - 1}}}"
                                    for i in range(1, 30)]
    text = "\n".join(merge) + "\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n" \
        "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n    labels: *m29\n"
    write(tmp_path, {"compose.yaml": text})
    code, report, _ = run_cli(tmp_path, timeout=30)
    bombs = [f for f in findings(report, "VRL102") if "alias" in f["message"]]
    assert code == 1 and len(bombs) == 1 and bombs[0]["line"] <= 30
    assert [s["model"] for s in report["servers"]] == ["Qwen/Qwen2.5-1.5B-Instruct"]


def test_recursive_alias_is_not_a_hang(tmp_path):
    text = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]).replace(
        "metadata:\n  name: llm\n", "metadata:\n  name: llm\n  labels: &loop\n    self: *loop\n")
    write(tmp_path, {"deploy.yaml": text})
    code, report, _ = run_cli(tmp_path, timeout=30)
    loops = [f for f in findings(report, "VRL102") if "recursive" in f["message"]]
    # ruamel breaks the cycle itself; whatever it leaves, the walk ends and the server is read
    assert all(f["line"] == line_of(text, "self: *loop") for f in loops)
    assert [s["model"] for s in report["servers"]] == ["Qwen/Qwen2.5-1.5B-Instruct"]


def test_bound_aliases_keeps_legal_aliases_and_cuts_past_the_budget():
    from vramlint.yamlload import bound_aliases, load_text

    docs, problems = load_text("base: &b {x: 1, y: [1, 2]}\nuse1: *b\nuse2: *b\n", "f.yaml")
    assert problems == [] and docs[0].data["use2"]["y"] == [1, 2]
    docs, _ = load_text(billion_laughs(), "f.yaml")
    assert docs[0].data["a9"] is None or None in docs[0].data["a9"]
    again = bound_aliases(docs[0].data, "f.yaml")
    assert again == []  # what is left is within the budget


# --- integers and inf/nan ----------------------------------------------------------------------------------

def test_5000_digit_integers_in_manifest_and_values(tmp_path):
    digits = "9" * 5000
    text = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]).replace("spec:\n  template", f"spec:\n  replicas: "
                                                                         f"{digits}\n  template")
    write(tmp_path, {
        "deploy.yaml": text,
        "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        "chart/templates/deploy.yaml": deployment(["--model", "{{ .Values.model }}", "--max-model-len",
                                                   "{{ .Values.len }}"]),
        "chart/values.yaml": f"model: Qwen/Qwen2.5-1.5B-Instruct\nlen: {digits}\n",
    })
    code, report, _ = run_cli(tmp_path, timeout=30)
    long_ints = [(f["file"], f["line"]) for f in findings(report, "VRL102") if "5000 digits" in f["message"]]
    assert ("deploy.yaml", line_of(text, "replicas:")) in long_ints
    assert ("chart/values.yaml", 2) in long_ints
    assert code == 1  # the values file's length reaches --max-model-len: vLLM's "invalid int value"
    assert any(f["file"] == "chart/values.yaml" and "invalid int value" in f["message"]
               for f in findings(report, "VRL005"))


def test_400_digit_number_in_a_local_config_json(tmp_path):
    config = ('{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, '
              '"num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 128256, '
              '"max_position_embeddings": ' + "7" * 400 + "}")
    write(tmp_path, {"models/m/config.json": config, "deploy.yaml": deployment(["--model", "./models/m"])})
    code, report, _ = run_cli(tmp_path, timeout=30)
    # the model is unresolved with the reason (said in the run's summary of unchecked servers), not a crash
    unresolved = report["servers"][0]["unresolved"]
    assert any("400 digits" in m and "max_position_embeddings" in m for m in unresolved), unresolved
    assert report["summary"]["unchecked"][0]["cause"] == "model-unresolved"
    assert not findings(report, "VRL000")


# --- shell and $(VAR) expansion ----------------------------------------------------------------------------

def test_shell_variable_doubled_40_times(tmp_path):
    script = "A=x\n" + "A=$A$A\n" * 40 + "exec vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name $A"
    text = script_deployment(script)
    write(tmp_path, {"deploy.yaml": text})
    code, report, _ = run_cli(tmp_path, timeout=30)
    budget = [f for f in findings(report, "VRL102") if "expansion budget" in f["message"]]
    assert code == 1 and len(budget) == 1
    # 2**17 characters is the first value past 100,000: the 17th doubling, on the script's 18th line
    assert budget[0]["line"] == line_of(text, 'A=x') + 17
    assert report["servers"][0]["model"] == "Qwen/Qwen2.5-1.5B-Instruct"


def test_kubernetes_dependent_variable_expanded_100000_times(tmp_path):
    env = "          env:\n            - name: A\n              value: abcdefgh\n"
    text = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--served-model-name", "$(A)" * 100_000], env=env)
    write(tmp_path, {"deploy.yaml": text})
    code, report, _ = run_cli(tmp_path, timeout=30)
    budget = [f for f in findings(report, "VRL102") if "expansion budget" in f["message"]]
    assert code == 1 and len(budget) == 1
    assert budget[0]["line"] == line_of(text, '$(A)$(A)')


def test_unterminated_quote_in_sh_c_is_the_shell_error_and_no_model(tmp_path):
    text = script_deployment("vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name 'abc\nexec sleep 1")
    write(tmp_path, {"deploy.yaml": text})
    code, report, _ = run_cli(tmp_path, timeout=30)
    errors = [f for f in findings(report, "VRL005") if "Unterminated quoted string" in f["message"]]
    assert code == 1 and len(errors) == 1
    line = line_of(text, "'abc")
    assert (errors[0]["line"], errors[0]["column"]) == (line, text.splitlines()[line - 1].index("'") + 1)
    assert report["servers"][0]["model"] is None


def test_unterminated_quote_after_the_vllm_command_leaves_the_command_running(tmp_path):
    # bash and dash run each complete command before parsing the next: the open quote on the last line stops the
    # shell there, after vLLM has been started (audit22 H1's health-check script had no vLLM at all)
    text = script_deployment("vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999\necho \"==== done")
    write(tmp_path, {"deploy.yaml": text})
    code, report, _ = run_cli(tmp_path, timeout=30)
    assert not [f for f in report["findings"] if "Unterminated" in f["message"]]
    assert report["servers"][0]["model"] == "Qwen/Qwen2.5-1.5B-Instruct"
    assert code == 1  # the over-long --max-model-len, which vLLM does refuse


def test_unterminated_quote_in_a_script_without_vllm_is_no_vllm_error(tmp_path):
    (tmp_path / "check.sh").write_text("#!/bin/bash\npython -c 'import vllm; print(vllm.__version__)'\n"
                                      "nvidia-smi\necho \"==== end of checks")
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", "check.sh", "--offline", "--output-format",
                           "json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and not [f for f in report["findings"] if f["level"] == "error"]


def test_unterminated_quote_detection():
    from vramlint.cmdline import unterminated_quote

    assert unterminated_quote("vllm serve m --x 'abc") == 17
    assert unterminated_quote('echo "a \\" b') == 5
    assert unterminated_quote("echo 'a' \"b\" c\\'d # it's a comment\nexec vllm serve m") is None
    assert unterminated_quote("echo don\\'t") is None


# --- per-file isolation ------------------------------------------------------------------------------------

def test_a_crash_while_extracting_one_file_is_a_finding_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    import vramlint.extract as extract
    from vramlint.cli import main

    good = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"])
    write(tmp_path, {"a-bad.yaml": good.replace("name: llm", "name: boom"), "b-good.yaml": good})
    real = extract.extract_records

    def failing(doc, *args, **kwargs):
        if doc.file.endswith("a-bad.yaml"):
            raise KeyError("synthetic failure")
        return real(doc, *args, **kwargs)

    monkeypatch.setattr(extract, "extract_records", failing)
    monkeypatch.chdir(tmp_path)
    code = main(["check", ".", "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    crash = [f for f in findings(report, "VRL102") if f["file"] == "a-bad.yaml"]
    assert len(crash) == 1 and "KeyError" in crash[0]["message"] and "Traceback" not in crash[0]["message"]
    assert crash[0]["line"] == 1
    assert [s["file"] for s in report["servers"]] == ["b-good.yaml"]


def test_a_crash_while_assessing_one_server_is_vrl000_on_it(tmp_path, monkeypatch, capsys):
    import vramlint.assess as assess
    from vramlint.cli import main

    write(tmp_path, {"a.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]),
                     "b.yaml": deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"])})
    real = assess.resolve_gpu

    def failing(server, options):
        if server.file == "a.yaml":
            raise ZeroDivisionError("synthetic")
        return real(server, options)

    monkeypatch.setattr(assess, "resolve_gpu", failing)
    monkeypatch.chdir(tmp_path)
    code = main(["check", ".", "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    crashed = findings(report, "VRL000")
    assert [(f["file"], "ZeroDivisionError" in f["message"]) for f in crashed] == [("a.yaml", True)]
    assert not [f for f in findings(report, "VRL010") if "ZeroDivisionError" in f["message"]]
    budgets = {s["file"]: s.get("budget") for s in report["servers"]}
    assert budgets["b.yaml"] is not None


@pytest.mark.parametrize("flag, value", [("--gpu-memory-utilization", "inf"), ("--max-model-len", "1e999")])
def test_inf_in_numeric_flags_is_never_an_internal_error(tmp_path, flag, value):
    write(tmp_path, {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct", flag, value],
                                               image="vllm/vllm-openai:v0.10.2")})
    code, report, _ = run_cli(tmp_path, timeout=30)
    assert code == 1
    assert not findings(report, "VRL000")
    assert any(f["line"] in (16, 17) for f in findings(report, "VRL005"))  # the flag or its value


# --- what vLLM itself refuses ------------------------------------------------------------------------------

def _compose(command: str, image: str) -> str:
    return f"services:\n  vllm:\n    image: {image}\n    command: {command}\n"


@pytest.mark.parametrize("image, refused", [("vllm/vllm-openai:v0.10.2", True), ("vllm/vllm-openai:v0.16.0", True),
                                            ("vllm/vllm-openai:v0.24.0", False)])
def test_block_size_outside_the_choices_of_the_version(tmp_path, image, refused):
    # 0.10.2 and 0.16.0 give --block-size argparse choices (1, 8, 16, ...); 0.24.0 takes any int > 0
    write(tmp_path, {"compose.yaml": _compose("--model Qwen/Qwen2.5-1.5B-Instruct --block-size 3", image)})
    code, report, _ = run_cli(tmp_path, "--gpu", "L4", timeout=30)
    choice = [f for f in findings(report, "VRL005") if "invalid choice: 3 (choose from" in f["message"]]
    assert bool(choice) == refused
    if refused:
        assert code == 1 and choice[0]["line"] == 4 and choice[0]["level"] == "error"


@pytest.mark.parametrize("flag, value", [("--tensor-parallel-size", "-2"), ("--pipeline-parallel-size", "0")])
def test_parallel_size_below_one(tmp_path, flag, value):
    command = f"--model Qwen/Qwen2.5-1.5B-Instruct {flag} {value}"
    write(tmp_path, {"new/compose.yaml": _compose(command, "vllm/vllm-openai:v0.24.0"),
                     "old/compose.yaml": _compose(command, "vllm/vllm-openai:v0.10.2")})
    code, report, _ = run_cli(tmp_path, "--gpu", "L4", timeout=30)
    dest = flag[2:].replace("-", "_")
    new = [f for f in findings(report, "VRL005") if f["file"] == "new/compose.yaml" and dest in f["message"]]
    old = [f for f in findings(report, "VRL005") if f["file"] == "old/compose.yaml" and flag in f["message"]]
    assert code == 1
    assert [f["level"] for f in new] == ["error"]
    assert f"Input should be greater than or equal to 1 [type=greater_than_equal, input_value={value}" \
        in new[0]["message"]
    assert [f["level"] for f in old] == ["warning"]  # 0.10.2 does not check it: what fails is not known


@pytest.mark.parametrize("flag, value", [("--max-num-seqs", "-1"), ("--max-num-batched-tokens", "0")])
def test_scheduler_size_below_one(tmp_path, flag, value):
    # 0.12.0 declares both `Field(ge=1)` on SchedulerConfig; 0.10.2 takes them unchecked (SkipValidation)
    command = f"--model Qwen/Qwen2.5-1.5B-Instruct {flag} {value}"
    write(tmp_path, {"new/compose.yaml": _compose(command, "vllm/vllm-openai:v0.12.0"),
                     "old/compose.yaml": _compose(command, "vllm/vllm-openai:v0.10.2")})
    code, report, _ = run_cli(tmp_path, "--gpu", "L4", timeout=30)
    dest = flag[2:].replace("-", "_")
    new = [f for f in findings(report, "VRL005") if f["file"] == "new/compose.yaml"]
    old = [f for f in findings(report, "VRL005") if f["file"] == "old/compose.yaml"]
    assert code == 1
    # one finding: the budget's own check of the two bounds rests on the refused value and is not a second one
    assert [f["level"] for f in new] == ["error"]
    assert f"SchedulerConfig.{dest}: Input should be greater than or equal to 1" in new[0]["message"]
    assert f"[type=greater_than_equal, input_value={value}" in new[0]["message"]
    assert [f["level"] for f in old] == ["warning"] and "admits no request" in old[0]["message"]


def test_duplicate_args_key_the_last_wins_with_a_warning_on_it(tmp_path):
    text = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]).replace(
        "          resources:", "          args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '4096']\n"
        "          resources:")
    write(tmp_path, {"deploy.yaml": text})
    code, report, _ = run_cli(tmp_path, timeout=30)
    server = report["servers"][0]
    assert server["model"] == "Qwen/Qwen2.5-7B-Instruct" and server["args"]["max_model_len"] == 4096
    dup = [f for f in findings(report, "VRL102") if "duplicate key 'args'" in f["message"]]
    assert len(dup) == 1 and dup[0]["level"] == "warning"
    assert dup[0]["line"] == line_of(text, "args: [--model") and f"first at line {line_of(text, 'args:')}" \
        in dup[0]["message"]
    assert server["arg_locations"]["max_model_len"]["line"] == line_of(text, "args: [--model")


@pytest.mark.parametrize("text, line, column", [
    # 1-space indented mappings: level 151 is the key on line 152, at column 151
    ("vllm: 1\nx:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 300)), 152, 151),
    # a compact nested sequence on one line: the 151st `- ` is at column 301
    ("vllm: 1\n---\n" + "- " * 200 + "v\n", 3, 301),
    # flow collections: the 101st `[`
    ("vllm: 1\nx: " + "[" * 150 + "]" * 150 + "\n", 2, 104),
])
def test_nested_too_deeply_is_reported_where_the_limit_is_crossed(tmp_path, text, line, column):
    write(tmp_path, {"deep.yaml": text})
    code, report, _ = run_cli(tmp_path, timeout=30)
    deep = [f for f in findings(report, "VRL102") if "nested" in f["message"]]
    assert code == 1 and [(f["line"], f["column"]) for f in deep] == [(line, column)]


# --- second round: values a tag cannot hold, megabyte words, escapes, NUL bytes, process-wide state ----------

def test_a_scalar_its_tag_cannot_hold_is_invalid_yaml_on_its_line(tmp_path):
    text = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]).replace(
        '- "4096"', "- !!int abc")
    write(tmp_path, {"deploy.yaml": text, "b.yaml": "vllm: 1\nx: !!bool maybe\n"})
    code, report, _ = run_cli(tmp_path, timeout=30)
    bad = {f["file"]: f for f in findings(report, "VRL102")}
    assert code == 1 and "'abc' is not a valid !!int value" in bad["deploy.yaml"]["message"]
    assert bad["deploy.yaml"]["line"] == line_of(text, "!!int abc")
    assert bad["b.yaml"]["line"] == 2 and "!!bool" in bad["b.yaml"]["message"]


@pytest.mark.parametrize("value, tag", [('!!float ""', "!!float"), ("!!int 0x", "!!int"), ("!!int _", "!!int"),
                                        ("!!omap", "!!omap"), ("!!set", "!!set")])
def test_a_scalar_ruamel_fails_on_is_invalid_yaml_in_a_chart_and_the_run_goes_on(tmp_path, value, tag):
    # ruamel's constructors index the empty digits of these (IndexError) or read a scalar as a collection
    # (AttributeError); in a chart's values.yaml the failure stopped the whole run (found by the fuzz run, seed 2029)
    write(tmp_path, {
        "chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
        "chart/values.yaml": f"gpus: 1\nmodel: {value}\n",
        "chart/templates/deployment.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]),
        "other.yaml": f"vllm: 1\nx: {value}\n",
    })
    code, report, _ = run_cli(tmp_path, timeout=60)
    bad = {f["file"]: f for f in findings(report, "VRL102") if "is not a valid" in f["message"]}
    assert code == 1, report
    assert bad["chart/values.yaml"]["line"] == 2 and tag in bad["chart/values.yaml"]["message"]
    assert bad["other.yaml"]["line"] == 2
    assert not [f for f in findings(report, "VRL102") if "failed while" in f["message"]]


def test_a_chart_whose_values_file_was_not_read_is_not_evaluated_with_empty_values(tmp_path):
    # over vramlint's node limit the values file is not read (Helm would read it): rendering the templates with
    # empty values made `--max-model-len {{ .Values.maxLen }}` an empty argument, a false VRL005 error
    values = "maxLen: 4096\n" + "".join(f"k{i}: v\n" for i in range(60_000))
    template = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]).replace(
        '- "4096"', '- "{{ .Values.maxLen }}"')
    write(tmp_path, {"chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
                     "chart/values.yaml": values, "chart/templates/deployment.yaml": template})
    code, report, _ = run_cli(tmp_path, timeout=60)
    assert code == 0, report
    assert not [f for f in report["findings"] if f["level"] == "error"]
    skipped = [f for f in findings(report, "VRL102") if f["file"] == "chart/Chart.yaml"]
    assert skipped and "chart/values.yaml was not read" in skipped[0]["message"]


def test_a_megabyte_argument_aliased_into_many_services_is_not_read_and_not_echoed(tmp_path):
    big = "x" * 3_000_000
    services = "".join(f"  s{i}:\n    image: vllm/vllm-openai:v0.8.5\n"
                       "    command: [--model, Qwen/Qwen2.5-1.5B-Instruct, *big]\n" for i in range(20))
    write(tmp_path, {"compose.yaml": f"x-big: &big \"--served-model-name {big}\"\nservices:\n{services}"})
    code, report, _ = run_cli(tmp_path, timeout=60)
    budget = [f for f in findings(report, "VRL102") if "3,000,020 characters" in f["message"]]
    assert len(budget) == 20 and {f["line"] for f in budget} == {1}  # on the anchor's line, where it is written
    assert len(json.dumps(report)) < 1_000_000  # no finding quotes the 3 MB word


def test_escape_sequences_in_values_do_not_reach_the_terminal(tmp_path):
    write(tmp_path, {"deploy.yaml": deployment(["--model", "\x1b]0;pwned\x07Qwen/\x1b[2J"])})
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=30)
    assert "\\x1b" in proc.stdout  # the value is shown, escaped
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("raw", [b"apiVersion: v1\nkind: Pod\nvllm: x\x00y\n", "kind: Pod\n".encode("utf-16-le")],
                         ids=["nul", "utf16-without-bom"])
def test_a_yaml_file_with_nul_bytes_is_a_warning_on_that_line(tmp_path, raw):
    (tmp_path / "deploy.yaml").write_bytes(raw)
    code, report, _ = run_cli(tmp_path, timeout=30)
    (problem,) = findings(report, "VRL102")
    assert problem["level"] == "warning" and "NUL byte" in problem["message"]
    assert problem["line"] == raw.count(b"\n", 0, raw.index(b"\x00")) + 1


def test_flow_nesting_guard_is_not_fooled_by_quotes(tmp_path):
    from vramlint.yamlload import MAX_FLOW_DEPTH, nesting_problem

    deep = "[" * (MAX_FLOW_DEPTH + 50) + "]" * (MAX_FLOW_DEPTH + 50)
    for head in ('x: ["a\\"b", ', "x: [don't, ", "x: ['it''s', ", 'x: ["\\\\", '):
        problem = nesting_problem(head + deep + "]\n", "f.yaml")
        assert problem is not None and problem.line == 1, head
    assert nesting_problem('x: ["' + "[" * 500 + '"]\n', "f.yaml") is None  # brackets inside a string


@pytest.mark.parametrize("text", [
    "chat: |\n  " + "{" * 300 + "\n  {%- for m in messages %}{{ m }}\n",  # a chat template in a block scalar
    "cmd: >-\n  echo " + "[" * 300 + "\nnext: 1\n",
    "# " + "{" * 300 + "\nx: 1\n",  # a comment
    "a:\n  - echo " + "{" * 300 + "\n",  # a plain scalar of the block context
    "x: '" + "[" * 150 + "\n  " + "{" * 150 + "'\n",  # a quoted scalar over two lines
    "x: [a, # " + "[" * 300 + "\n  b]\n",  # a comment inside a flow collection
])
def test_flow_nesting_guard_counts_only_flow_collections(text):
    from vramlint.yamlload import nesting_problem

    assert nesting_problem(text, "f.yaml") is None


def test_flow_nesting_guard_finds_deep_flow_after_a_block_scalar():
    from vramlint.yamlload import MAX_FLOW_DEPTH, nesting_problem

    deep = "[" * (MAX_FLOW_DEPTH + 1) + "]" * (MAX_FLOW_DEPTH + 1)
    for text, line, column in [("- k: |\n    " + "{" * 300 + "\n  j: " + deep + "\n", 3, 6 + MAX_FLOW_DEPTH),
                               ("x: |-\n  " + "{" * 300 + "\ny:\n  - " + deep + "\n", 4, 5 + MAX_FLOW_DEPTH)]:
        problem = nesting_problem(text, "f.yaml")
        assert problem is not None and (problem.line, problem.column) == (line, column), text


def test_a_chat_template_full_of_braces_does_not_hide_the_server(tmp_path):
    template = "{%- if m %}{ " * 120  # text to YAML: unbalanced braces in a block scalar
    (tmp_path / "deploy.yaml").write_text(
        deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]) + "---\napiVersion: v1\nkind: ConfigMap\n"
        "metadata: {name: tpl}\ndata:\n  chat.jinja: |\n    " + template + "\n")
    code, report, _ = run_cli(tmp_path, timeout=60)
    assert code in (0, 1) and not findings(report, "VRL102")
    assert [s["model"] for s in report["servers"]] == ["Qwen/Qwen2.5-1.5B-Instruct"]


def test_an_earlier_run_in_the_same_process_leaves_nothing_behind(tmp_path, monkeypatch):
    # the fuzz benchmark and library callers run `check` many times in one process on files of the same name:
    # fixes must be computed on this run's text (a stale text once made a rule crash on another input's YAML)
    from vramlint.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    text = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--tensor-parallel-size", "2"])
    (tmp_path / "a" / "deploy.yaml").write_text(text)
    assert main(["check", "a", "--offline", "--output-format", "json", "--output-file", "r1.json"]) in (0, 1)
    (tmp_path / "a" / "deploy.yaml").write_text("# a\n# b\n# c\n" + text)
    assert main(["check", "a", "--offline", "--output-format", "json", "--output-file", "r2.json"]) in (0, 1)
    _, fresh, _ = run_cli(tmp_path, timeout=30)

    def fixes(report: dict) -> list:
        return [f["fix"] for f in report["findings"] if f.get("fix")]

    in_process = fixes(json.loads((tmp_path / "r2.json").read_text()))
    assert in_process and in_process == fixes(fresh)


@pytest.mark.parametrize("script", ["eval " * 20_000 + "vllm serve m",
                                    "vllm serve " + "${X:-" * 20_000 + "m" + "}" * 20_000],
                         ids=["eval-chain", "nested-defaults"])
def test_shell_nesting_is_bounded(script):
    import time

    from vramlint.cmdline import Token, _search_shell
    from vramlint.model import Location

    started = time.process_time()
    _search_shell([Token("sh", Location("f", 1)), Token("-c", Location("f", 1)), Token(script, Location("f", 1))],
                  {}, 0)  # no RecursionError
    assert time.process_time() - started < 5


def test_a_chart_cut_by_the_runs_helm_time_says_so_not_its_own_limit(tmp_path, monkeypatch):
    # three charts that never finish: the first runs out its own time, the second the rest of the run's, the
    # third is not started; each finding names the limit that stopped it
    from vramlint.helm import gotmpl
    from vramlint.scan import scan

    monkeypatch.setattr(gotmpl, "MAX_STEPS", 10**12)  # time alone stops these templates, on any machine
    monkeypatch.setattr(gotmpl, "MAX_CHART_STEPS", 10**12)
    monkeypatch.setattr(gotmpl, "CHART_SECONDS", 1.0)
    monkeypatch.setattr(gotmpl, "RUN_CHART_SECONDS", 1.6)  # the second chart starts with 0.6 s of the run's left
    slow = "{{ range until 100000 }}{{ range until 100000 }}{{ $x := printf \"%s\" \"a\" }}{{ end }}{{ end }}\n"
    # c0 and c1 name vLLM's image; c2 only a vLLM option's name (a chart naming nothing of vLLM is not evaluated)
    for name, named in (("c0", "image: vllm/vllm-openai:v0.10.2\n"), ("c1", "image: vllm/vllm-openai:v0.10.2\n"),
                        ("c2", "maxModelLen: 4096\n")):
        (tmp_path / name / "templates").mkdir(parents=True)
        (tmp_path / name / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
        (tmp_path / name / "values.yaml").write_text("model: Qwen/Qwen2.5-1.5B-Instruct\n" + named)
        (tmp_path / name / "templates" / "slow.yaml").write_text(slow)
    found = scan([str(tmp_path)])
    messages = {p.file.split("/")[-3] if "templates" in p.file else p.file.split("/")[-2]: p.message
                for p in found.problems}
    assert "limit of 1 s" in messages["c0"]
    assert "the 1.6 s this run allows for all its Helm charts together ran out" in messages["c1"]
    # c2 does not plainly name vLLM: the charts left unevaluated that name none are one note, not a warning each
    assert "c2" not in messages
    assert any("1 Helm chart that do not plainly name vLLM not evaluated" in n and "c2" in n for n in found.notes)


def test_a_megabyte_source_line_is_shown_as_a_window_in_the_text_report(tmp_path):
    # one 1 MB anchor used by 20 services: each finding quoted the whole line (a 300 MB report, 900 MB of memory
    # for a 3 MB line and 50 services)
    big = "x" * 1_000_000
    write(tmp_path, {"compose.yaml": f"x-big: &big \"--served-model-name {big}\"\nservices:\n" + "".join(
        f"  s{i}:\n    image: vllm/vllm-openai:v0.8.5\n    command: [--model, Qwen/Qwen2.5-1.5B-Instruct, *big]\n"
        for i in range(20))})
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline", "--output-format", "text"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert proc.stdout.count("an argument of 1,000,020 characters") == 20
    assert len(proc.stdout) < 50_000
    shown = [line for line in proc.stdout.splitlines() if line.startswith("1 | x-big: &big")]
    assert shown and all(line.endswith("...") and len(line) < 300 for line in shown)


def test_a_short_source_line_is_shown_whole():
    from vramlint.model import Location
    from vramlint.report.text import _marked

    line = "          args: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, '1000000'] # " + "c" * 150
    text, start, length = _marked(line, Location("f", 1, 72, 1, 81))
    assert text == line and line[start:start + length] == "'1000000'"


def _marked_by_slices(source, loc):
    """The source window as the text report first cut it: the line and what is before and after the value
    copied whole (linear in the line for each finding), kept here as the reference `_marked` must equal."""
    from vramlint.report import text as t

    body = source.rstrip("\r\n")
    col0 = min(max(loc.column - 1, 0), len(body))
    if loc.end_line == loc.line and loc.end_column is not None and loc.end_column > loc.column:
        end = min(loc.end_column - 1, len(body))
    elif col0 < len(body) and body[col0] in "\"'" and body.find(body[col0], col0 + 1) > 0:
        end = body.find(body[col0], col0 + 1) + 1
    else:
        end = col0
        while end < len(body) and body[end] not in t._WORD_END:
            end += 1
        if body[col0:end].endswith(":"):
            end += len(body[end:].split(" #", 1)[0].rstrip())
    before, span, after = body[:col0], body[col0:end], body[end:]
    if len(body) > t.MAX_SHOWN_LINE:
        if len(before) > t._SHOWN_BEFORE:
            before = "..." + before[-t._SHOWN_BEFORE:]
        if len(span) > t._SHOWN_SPAN:
            span = span[:t._SHOWN_SPAN] + "..."
        if len(after) > t._SHOWN_AFTER:
            after = after[:t._SHOWN_AFTER] + "..."
    shown_before = t.escape_name(before.replace("\t", "    "))
    marked = t.escape_name(span.replace("\t", "    "))
    text = shown_before + marked + t.escape_name(after.replace("\t", "    "))
    return text.rstrip(), len(shown_before), max(1, len(marked))


def test_the_source_window_is_the_same_cut_from_positions_as_from_copies():
    import random

    from vramlint.model import Location
    from vramlint.report.text import _marked

    rng = random.Random(21)
    pieces = ["key:", " ", "\t", "'q'", '"dq"', "x" * 50, "a,b", "]", "}", " #c", "\x1b", "\u3000", ":", "-", "é"]
    for _ in range(3000):
        line = "".join(rng.choice(pieces) for _ in range(rng.choice((3, 20, 80, 200))))
        line += rng.choice(("", "\n", "\r\n", "  \n", "\n\r\n"))
        column = rng.choice((-2, 0, 1, 2, len(line) // 2, len(line), len(line) + 5, rng.randint(1, len(line) + 1)))
        end = rng.choice((None, None, column + rng.randint(-3, 400)))
        loc = Location("f", 1, column, rng.choice((1, 2)) if end is not None else None, end)
        assert _marked(line, loc) == _marked_by_slices(line, loc), (line, loc)
