"""Configuration files: discovery, validation messages with file and line, overrides, flags."""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vramlint.config import (
    Config,
    apply_flags,
    find_config_file,
    format_problem,
    glob_match,
    load_config,
)

REPO = Path(__file__).resolve().parents[1]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def messages(problems) -> list[str]:
    return [format_problem(p) for p in problems]


# -- discovery ---------------------------------------------------------------------------------------------


def test_found_upward_and_stops_at_repository_root(tmp_path, monkeypatch):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    write(tmp_path / ".vramlint.yaml", "gpu: T4\n")  # above the repository: never used
    deploy = tmp_path / "repo" / "deploy" / "prod"
    deploy.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    assert find_config_file(["deploy/prod"]) is None
    write(tmp_path / "repo" / "pyproject.toml", "[project]\nname = 'x'\n")  # no [tool.vramlint]: passed over
    assert find_config_file(["deploy/prod"]) is None
    write(tmp_path / "repo" / "pyproject.toml", "[project]\nname = 'x'\n\n[tool.vramlint]\ngpu = 'L4'\n")
    assert Path(find_config_file(["deploy/prod"])).resolve() == (tmp_path / "repo" / "pyproject.toml").resolve()
    write(tmp_path / "repo" / "deploy" / ".vramlint.yaml", "gpu: A10G\n")
    config, problems = load_config(None, ["deploy/prod"])
    assert problems == []
    assert config.gpu == "A10G" and config.file == "deploy/.vramlint.yaml" and config.root == "deploy"


def test_yaml_file_wins_over_pyproject_in_the_same_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    write(tmp_path / "pyproject.toml", "[tool.vramlint]\ngpu = 'L4'\n")
    write(tmp_path / ".vramlint.yaml", "gpu: H100\n")
    config, _ = load_config(None, ["."])
    assert config.gpu == "H100"


def test_no_file_gives_defaults():
    config, problems = load_config(None, ["/"])  # the filesystem root holds no configuration
    assert problems == [] and config.file is None
    assert config.fail_on == "error" and config.select is None and config.ignore == []


def test_explicit_file_that_does_not_exist(tmp_path):
    _, problems = load_config(str(tmp_path / "missing.yaml"), ["."])
    assert "configuration file not found" in problems[0].message


# -- values ------------------------------------------------------------------------------------------------


def test_full_pyproject_is_read_into_snake_case(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pyproject.toml", """
        [tool.vramlint]
        select = ["VRL0", "unresolved"]
        ignore = ["VRL004"]
        fail-on = "warning"
        gpu = "A10G"
        gpus = 2
        vllm-version = "0.10.1"
        offline = true
        exclude = ["charts/**", "*.tmpl.yaml"]
        severity = { VRL003 = "error", max-num-seqs-over-kv-capacity = "off" }

        [tool.vramlint.model-aliases]
        "/models/llama" = "meta-llama/Llama-3.1-8B-Instruct"
        "local" = "./configs/local.json"

        [tool.vramlint.traffic]
        p99-context-tokens = 6000
        peak-concurrent-requests = 32

        [tool.vramlint.rules.VRL003]
        max-weights-share = 0.5

        [[tool.vramlint.overrides]]
        files = ["deploy/t4/**"]
        gpu = "T4"
        ignore = ["VRL001"]
        traffic = { p99-context-tokens = 2048 }
        rules = { VRL003 = { max-weights-share = 0.3 } }
    """)
    config, problems = load_config(None, ["."])
    assert problems == []
    assert config.select == ["VRL0", "unresolved"]
    assert config.fail_on == "warning" and config.gpus == 2 and config.offline is True
    assert config.severity == {"VRL003": "error", "max-num-seqs-over-kv-capacity": "off"}
    assert config.traffic.p99_context_tokens == 6000 and config.traffic.peak_concurrent_requests == 32
    assert config.rules == {"VRL003": {"max_weights_share": 0.5}}

    t4 = config.for_file("deploy/t4/vllm.yaml")
    assert t4.gpu == "T4" and t4.ignore == ["VRL004", "VRL001"]
    assert t4.traffic.p99_context_tokens == 2048 and t4.traffic.peak_concurrent_requests == 32
    assert t4.rules["VRL003"]["max_weights_share"] == 0.3
    other = config.for_file("deploy/h100/vllm.yaml")
    assert other is config and other.gpu == "A10G"

    options = config.resolve_options("deploy/h100/vllm.yaml")
    assert options.default_gpu == "A10G" and options.default_gpu_count == 2 and options.vllm_version == "0.10.1"
    assert options.allow_network is False
    assert options.model_aliases["/models/llama"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert options.model_aliases["local"] == "configs/local.json"  # relative to the configuration file


def test_overrides_and_aliases_are_relative_to_the_config_folder(tmp_path, monkeypatch):
    write(tmp_path / "infra" / ".vramlint.yaml", """
        model-aliases: {mine: ./models/mine/config.json}
        exclude: [legacy/old, old/, "*.j2"]
        overrides:
          - files: [k8s/small/*.yaml]
            gpu: T4
    """)
    monkeypatch.chdir(tmp_path)
    config, problems = load_config(None, ["infra/k8s"])
    assert problems == [] and config.root == "infra"
    assert config.for_file("infra/k8s/small/a.yaml").gpu == "T4"
    assert config.for_file("k8s/small/a.yaml").gpu is None  # not under the configuration's folder
    assert config.resolve_options().model_aliases["mine"] == "infra/models/mine/config.json"
    assert config.exclude_patterns() == ["infra/legacy/old", "old/", "*.j2"]  # no slash inside: any depth


def test_globs():
    assert glob_match("deploy/**", "deploy/a/b.yaml")
    assert glob_match("**/values.yaml", "charts/x/values.yaml")
    assert glob_match("**/values.yaml", "values.yaml")
    assert glob_match("*.tmpl.yaml", "a/b/c.tmpl.yaml")  # no slash: any depth
    assert glob_match("deploy/old", "deploy/old/x.yaml")  # a folder covers what is below it
    assert not glob_match("deploy/*.yaml", "deploy/a/b.yaml")
    assert not glob_match("deploy/**", "other/deploy.yaml")


def test_flags_win_over_the_file():
    config = Config(select=["VRL001"], ignore=["VRL002"], fail_on="warning", gpu="T4", exclude=["a/**"])
    args = argparse.Namespace(select=["VRL003,VRL004"], ignore=["VRL005"], fail_on="never", gpu="H100", gpus=4,
                              gpu_memory_gib=None, vllm_version="0.9.2", offline=True, exclude=["b/**"],
                              rules_dir=["my-rules"])
    out = apply_flags(config, args)
    assert out.select == ["VRL003", "VRL004"] and out.ignore == ["VRL002", "VRL005"]
    assert (out.fail_on, out.gpu, out.gpus, out.vllm_version, out.offline) == ("never", "H100", 4, "0.9.2", True)
    assert out.exclude == ["a/**", "b/**"] and out.rules_dirs == ["my-rules"]
    assert config.select == ["VRL001"]  # the loaded configuration is not changed


# -- errors with file and line -----------------------------------------------------------------------------


def test_pyproject_errors_name_file_line_and_fix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pyproject.toml", """
        [project]
        name = "x"

        [tool.vramlint]
        selct = ["VRL001"]
        fail-on = "fatal"
        gpus = "two"
        ignore = [
          "VRL002",
          "bad id!",
        ]
        traffic = { p99-context-tokens = 0 }

        [tool.vramlint.rules.VRL003]
        max-weights-share = 0.5

        [[tool.vramlint.overrides]]
        files = ["a/**"]

        [[tool.vramlint.overrides]]
        fils = ["b/**"]
    """)
    _, problems = load_config(None, ["."])
    assert messages(problems) == [
        "pyproject.toml:5:1: unknown key 'selct' in [tool.vramlint]; did you mean 'select'?",
        "pyproject.toml:6:11: 'fail-on': 'fatal' is not one of: error, warning, note, never",
        "pyproject.toml:7:8: 'gpus': expected an integer, got string 'two'",
        "pyproject.toml:10:3: 'ignore[1]': 'bad id!' is not a valid name (letters, digits, '-' and '_')",
        "pyproject.toml:12:13: 'traffic.p99-context-tokens': 0 is less than the minimum of 1",
        "pyproject.toml:20:1: 'overrides[1]': 'files' is required",
        "pyproject.toml:21:1: unknown key 'fils' in 'overrides[1]'; did you mean 'files'?",
    ]


def test_yaml_errors_name_file_line_and_fix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / ".vramlint.yaml", """
        select: [VRL001]
        severity:
          VRL003: fatal
        overrides:
          - files: ["b/*.yaml"]
            gpus: 0
            trafic: {}
        fail_on: warning
        traffic:
          p99-context-tokens: lots
    """)
    _, problems = load_config(None, ["."])
    assert messages(problems) == [
        ".vramlint.yaml:3:11: 'severity.VRL003': 'fatal' is not one of: error, warning, note, off",
        ".vramlint.yaml:6:11: 'overrides[0].gpus': 0 is less than the minimum of 1",
        ".vramlint.yaml:7:5: unknown key 'trafic' in 'overrides[0]'; did you mean 'traffic'?",
        ".vramlint.yaml:8:1: unknown key 'fail_on' in the configuration; did you mean 'fail-on'?",
        ".vramlint.yaml:10:23: 'traffic.p99-context-tokens': expected an integer, got string 'lots'",
    ]


def test_unparseable_files(tmp_path):
    bad_yaml = write(tmp_path / "a.yaml", "select: [VRL001\n")
    _, problems = load_config(str(bad_yaml), ["."])
    assert (problems[0].line, problems[0].column) == (1, 16) and "invalid YAML" in problems[0].message
    bad_toml = write(tmp_path / "pyproject.toml", "[tool.vramlint]\ngpu = \n")
    _, problems = load_config(str(bad_toml), ["."])
    assert problems[0].line == 2 and problems[0].message.startswith("invalid TOML")
    not_a_map = write(tmp_path / "b.yaml", "- VRL001\n")
    _, problems = load_config(str(not_a_map), ["."])
    assert "expected a object" in problems[0].message or "object" in problems[0].message


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory-utilization", "1.5"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def _check_reports(tmp_path, *extra):
    import json

    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline", *extra,
                           "--output-format", "json", "--output-file", "out.json",
                           "--output-format", "sarif", "--output-file", "out.sarif"],
                          cwd=tmp_path, capture_output=True, text=True, env=_env())
    findings = json.loads((tmp_path / "out.json").read_text())["findings"]
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    results = [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"], r["message"]["text"])
               for run in sarif["runs"] for r in run["results"]]
    return proc, findings, results


def test_an_invalid_found_configuration_is_a_finding_on_its_line_and_the_run_goes_on(tmp_path):
    # a pull request can hold the configuration file: its mistake is a finding (exit 1), not a failed run (exit 2)
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".vramlint.yaml", "gpu: L4\nfail-on: errors\n")
    write(tmp_path / "deploy.yaml", DEPLOYMENT)
    proc, findings, results = _check_reports(tmp_path)
    assert proc.returncode == 1, proc.stderr
    config = [f for f in findings if f["file"] == ".vramlint.yaml"]
    assert [(f["rule"], f["level"], f["line"], f["column"]) for f in config] == [("VRL102", "error", 2, 10)]
    assert config[0]["message"].startswith("'fail-on': 'errors' is not one of: error, warning, note, never")
    assert "not applied: the files it covers are checked with the defaults" in config[0]["message"]
    assert ("VRL102", ".vramlint.yaml", 2) in [r[:3] for r in results]
    # the manifest is still checked, with the defaults (the file's `gpu: L4` is not used: no budget on L4)
    assert any(f["rule"] == "VRL005" and f["file"] == "deploy.yaml" and f["line"] == 10 for f in findings)
    assert not any("on each L4" in f["message"] for f in findings)


@pytest.mark.parametrize("text, line", [
    ("select: [VRL001\n", 1),                                  # invalid YAML
    ("gpu: NOPE-9000\n", None),                                # nested gpu: said where the server is resolved
    ("select: [VRL001, VRL999]\n", 1),                         # a rule that does not exist
])
def test_an_invalid_nested_configuration_gives_way_to_the_parent(tmp_path, text, line):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".vramlint.yaml", "gpu: L4\n")
    write(tmp_path / "team" / ".vramlint.yaml", text)
    write(tmp_path / "team" / "deploy.yaml", DEPLOYMENT)
    proc, findings, results = _check_reports(tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert any(f["rule"] == "VRL005" and f["file"] == "team/deploy.yaml" for f in findings)
    if line is not None:
        config = [f for f in findings if f["file"] == "team/.vramlint.yaml"]
        assert [(f["rule"], f["line"]) for f in config] == [("VRL102", line)]
        assert config[0]["message"].endswith("this configuration file is not applied: the files under team/ are "
                                             "checked with the settings of .vramlint.yaml")
        assert ("VRL102", "team/.vramlint.yaml", line) in [r[:3] for r in results]
        # the parent's `gpu: L4` applies in team/: the budget is computed on L4
        assert any("on each L4" in f["message"] for f in findings if f["file"] == "team/deploy.yaml")


def test_an_explicit_config_with_a_mistake_still_exits_2(tmp_path):
    # --config names the user's own file: its mistake is a usage error, as a mistyped flag is
    write(tmp_path / "mine.yaml", "fail-on: errors\n")
    write(tmp_path / "deploy.yaml", DEPLOYMENT)
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline", "--config", "mine.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert proc.returncode == 2
    assert "configuration error: mine.yaml:1:10: 'fail-on': 'errors' is not one of" in proc.stderr


def test_unknown_rule_ids_and_options_in_a_found_config_are_findings_with_lines(tmp_path):
    import json

    (tmp_path / ".git").mkdir()
    write(tmp_path / ".vramlint.yaml", """
        select: [VRL001, VRL999, unresolved-servr]
        severity: {max-model-len-at-maximun: note}
        rules:
          VRL001:
            min-concurency: 4
    """)
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--output-format", "json"],
                          cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert proc.returncode == 1, proc.stderr
    got = sorted((f["line"], f["column"], f["message"]) for f in json.loads(proc.stdout)["findings"]
                 if f["rule"] == "VRL102")
    wanted = [
        (1, 18, "select: 'VRL999' matches no rule"),
        (1, 26, "select: 'unresolved-servr' matches no rule; did you mean unresolved-server?"),
        (2, 12, "severity: 'max-model-len-at-maximun' matches no rule; did you mean max-model-len-at-maximum?"),
        (5, 5, "rule VRL001 (max-model-len-at-maximum) has no option 'min_concurency'"),
    ]
    assert [g[:2] for g in got] == [w[:2] for w in wanted]
    for (_, _, message), (_, _, start) in zip(got, wanted, strict=True):
        assert message.startswith(start) and "this configuration file is not applied" in message


def _env() -> dict:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["HF_HUB_OFFLINE"] = "1"
    return env


def test_no_pydantic_or_jsonschema_without_a_config_file(tmp_path):
    (tmp_path / ".git").mkdir()
    code = (
        "import sys\nfrom vramlint.cli import main\nrc = main(['check', '.', '--offline'])\n"
        "print(sorted(m for m in ('pydantic', 'jsonschema') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout + proc.stderr


def test_a_configuration_once_valid_is_not_validated_again(tmp_path):
    # jsonschema's import is the dearest part of a one-file run; an unchanged, valid configuration skips it.
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".vramlint.yaml", "gpu: L4\n")
    code = (
        "import sys\nfrom vramlint.cli import main\nrc = main(['check', '.', '--offline'])\n"
        "print('jsonschema' in sys.modules)"
    )
    env = _env() | {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
            for _ in range(2)]
    assert [r.stdout.strip().splitlines()[-1] for r in runs] == ["True", "False"], runs
    write(tmp_path / ".vramlint.yaml", "gpu: L4\nbogus-key: 1\n")
    bad = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert bad.returncode == 0 and "bogus-key" in bad.stdout  # a finding (VRL102) of the run, which goes on


@pytest.mark.parametrize("name", [".vramlint.yaml", "pyproject.toml"])
def test_gpu_from_config_reaches_the_resolve_options(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    text = "gpu: L4\nvllm-version: 0.9.2\n" if name.endswith("yaml") else "[tool.vramlint]\ngpu='L4'\nvllm-version='0.9.2'\n"
    write(tmp_path / name, text)
    config, problems = load_config(None, ["."])
    assert problems == []
    options = config.resolve_options("x.yaml")
    assert (options.default_gpu, options.vllm_version) == ("L4", "0.9.2")


@pytest.mark.parametrize("name", [".vramlint.yaml", "pyproject.toml"])
def test_a_list_of_gpus_is_a_fleet(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    text = "gpu: [L4, L40S]\n" if name.endswith("yaml") else "[tool.vramlint]\ngpu=['L4', 'L40S']\n"
    write(tmp_path / name, text)
    config, problems = load_config(None, ["."])
    assert problems == []
    options = config.resolve_options("x.yaml")
    assert (options.default_gpu, options.default_gpu_fleet) == (None, ["L4", "L40S"])


def test_gpu_flag_with_commas_is_a_fleet_and_each_name_is_checked(tmp_path, capsys):
    from vramlint.cli import main

    manifest = tmp_path / "deploy.yaml"
    write(manifest, """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
          resources: {limits: {nvidia.com/gpu: 1}}
""")
    assert main(["check", str(manifest), "--offline", "--gpu", "L4,L40S"]) == 1
    out = capsys.readouterr().out
    assert "VRL005" in out and "on L4 (the pods may land on any of L4, L40S)" in out
    assert main(["check", str(manifest), "--offline", "--gpu", "L40S,A100-80GB"]) == 0
    capsys.readouterr()
    assert main(["check", str(manifest), "--offline", "--gpu", "L40S,NOPE-9"]) == 2
    assert "unknown GPU 'NOPE-9' in the list of GPUs" in capsys.readouterr().err
