"""Round 27: the failing cases of the earlier blind rounds (benchmarks/hostile_blind2x.py), each as a test."""

from __future__ import annotations

import json
import os

from vramlint.cli import main


def _report(capsys, monkeypatch, folder, *paths):
    monkeypatch.chdir(folder)
    code = main(["check", *paths, "--offline", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_release_chart_or_module_source_through_a_link_to_root_is_one_finding(tmp_path, capsys, monkeypatch):
    # one root cause (the link out of the tree): said on the `chart` / `source` line, and the walk's own note on
    # the link was said besides it before
    os.symlink("/", tmp_path / "root")
    (tmp_path / "main.tf").write_text('resource "helm_release" "vllm" {\n  name  = "vllm"\n  chart = "./root"\n}\n'
                                      'module "m" {\n  source = "./root/opt"\n}\n')
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    said = sorted((f["file"], f["line"], f["level"]) for f in report["findings"])
    assert said == [("main.tf", 3, "warning"), ("main.tf", 6, "note")]


CHART_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "{{ .Values.vllm.model }}", "--max-model-len", "{{ .Values.vllm.maxLen }}"]
"""


def test_inline_application_values_past_the_limit_are_a_finding_on_the_values_line(tmp_path, capsys, monkeypatch):
    # 60,000 keys (1.5 MB): the file was past the release reader's 1 MB and left out silently, and under it the
    # values past the node limit were only a run note on standard error; the chart was checked with its defaults
    chart = tmp_path / "charts" / "vllm"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: vllm\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("vllm:\n  model: Qwen/Qwen2.5-7B-Instruct\n  maxLen: 8192\n")
    (chart / "templates" / "deployment.yaml").write_text(CHART_TEMPLATE)
    (tmp_path / "gitops").mkdir()
    keys = "".join(f"        key{i}: value-{i}\n" for i in range(60000))
    (tmp_path / "gitops" / "app.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: vllm\nspec:\n  source:\n"
        "    repoURL: https://git.example.com/infra.git\n    path: charts/vllm\n    helm:\n      values: |\n"
        "        vllm:\n          maxLen: 999999999\n" + keys)
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    said = [(f["file"], f["line"], f["level"]) for f in report["findings"] if f["file"] == "gitops/app.yaml"]
    assert said == [("gitops/app.yaml", 10, "warning")]


def _nested_sh(depth: int, inner: str) -> str:
    for _ in range(depth):
        inner = "sh -c '" + inner.replace("'", "'\\''") + "'"
    return inner


def test_a_unit_whose_vllm_words_systemd_unquoting_cuts_off_is_said_on_its_exec_start(tmp_path, capsys, monkeypatch):
    # systemd unescapes `\'` inside single quotes, so the shell's '\'' idiom nested 4 to 7 deep leaves vLLM's
    # words outside the `sh -c` script (at 7, `vllm` with the quotes left on it): said on the Description= line
    # (the first mention of vLLM) before
    for depth in (4, 5, 7):
        command = _nested_sh(depth, "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192")
        (tmp_path / "vllm.service").write_text(f"[Unit]\nDescription=vLLM\n\n[Service]\nExecStart=/bin/{command}\n")
        _, report = _report(capsys, monkeypatch, tmp_path, "vllm.service")
        assert [(f["file"], f["line"]) for f in report["findings"]] == [("vllm.service", 5)], depth


def test_an_alias_bomb_a_kustomization_lists_is_said_in_the_bomb(tmp_path, capsys, monkeypatch):
    # a ConfigMap naming no vLLM is read only by the build: its alias bomb was said on the `resources:` entry
    bomb = ["  a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [
        f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    (tmp_path / "kustomization.yaml").write_text("resources:\n- bomb.yaml\n- deploy.yaml\n")
    (tmp_path / "bomb.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n"
                                        + "\n".join(bomb) + "\n")
    (tmp_path / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.9.2\n"
        "          args: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\", \"--max-model-len\", \"4096\"]\n")
    _, report = _report(capsys, monkeypatch, tmp_path, ".")
    said = [(f["file"], f["line"]) for f in report["findings"] if f["rule"] == "VRL102"]
    assert said == [("bomb.yaml", 8)]
