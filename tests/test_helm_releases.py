"""Charts evaluated as the releases of the scanned tree install them (Argo CD Applications, helmfile releases;
audit21 C3/C13), `tpl` of a template string (C10), the run's chart time given to vLLM charts first (C8), and values
profiles with keys of their own under maps Kubernetes leaves free (C18). Trees of our own, shaped after the
audited repositories."""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path

from vramlint.cli import main

CHART = "apiVersion: v2\nname: llama-stack\nversion: 0.1.0\n"
# the chart reads `providers.postgres`, which its own values.yaml leaves to the release
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-vllm
  namespace: {{ .Release.Namespace }}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          args: ["--model", "{{ .Values.vllm.model }}", "--max-model-len", "{{ .Values.vllm.maxLen }}"]
          env:
            - name: PG
              value: "{{ .Values.providers.postgres.enabled }}"
"""
VALUES = "vllm:\n  model: Qwen/Qwen2.5-7B-Instruct\n  maxLen: 8192\n"


def _tree(root: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(root)


def _check(capsys, root: str) -> dict:
    main(["check", root, "--offline", "--format", "json", "--gpu", "L4"])
    return json.loads(capsys.readouterr().out)


def _nil(report: dict) -> list[dict]:
    return [f for f in report["findings"] if "nil pointer" in f["message"]]


def test_no_release_in_the_tree_a_key_the_defaults_leave_out_is_a_warning(tmp_path, capsys):
    root = _tree(tmp_path, {"charts/llama-stack/Chart.yaml": CHART, "charts/llama-stack/values.yaml": VALUES,
                            "charts/llama-stack/templates/deployment.yaml": DEPLOYMENT})
    nil = _nil(_check(capsys, root))
    assert [f["level"] for f in nil] == ["warning"]
    assert "the chart expects this value from its release" in nil[0]["message"]


APPLICATION = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: llama-stack
spec:
  destination:
    namespace: ai
  source:
    repoURL: https://github.com/example/platform.git
    path: charts/llama-stack
    helm:
      valueFiles:
        - ../../gitops/llama-stack-values.yaml
      values: |
        vllm:
          maxLen: 4096
      parameters:
        - name: vllm.model
          value: Qwen/Qwen2.5-1.5B-Instruct
"""


def test_an_argo_cd_application_naming_the_chart_is_evaluated_with_its_values(tmp_path, capsys):
    root = _tree(tmp_path, {
        "charts/llama-stack/Chart.yaml": CHART, "charts/llama-stack/values.yaml": VALUES,
        "charts/llama-stack/templates/deployment.yaml": DEPLOYMENT,
        "gitops/llama-stack-values.yaml": "providers:\n  postgres:\n    enabled: true\n",
        "gitops/apps/llama-stack.yaml": APPLICATION,
    })
    report = _check(capsys, root)
    assert not _nil(report)
    [server] = report["servers"]
    # valueFiles, then values, then parameters (--set) win, as Argo CD's reposerver passes them to helm
    assert server["model"] == "Qwen/Qwen2.5-1.5B-Instruct"
    assert server["args"]["max_model_len"] == 4096
    assert server["name"] == "llama-stack-vllm"  # the release's name (the Application's)
    # what the release gives is on the lines of the Application that give it
    app = Path(root, "gitops/apps/llama-stack.yaml").read_text().splitlines()
    where = server["arg_locations"]["max_model_len"]
    assert where["file"].endswith("gitops/apps/llama-stack.yaml")
    assert app[where["line"] - 1].strip() == "maxLen: 4096"
    assert app[where["line"] - 1][where["column"] - 1:].startswith("4096")


def test_a_release_whose_values_still_leave_the_key_unset_is_an_error(tmp_path, capsys):
    root = _tree(tmp_path, {
        "charts/llama-stack/Chart.yaml": CHART, "charts/llama-stack/values.yaml": VALUES,
        "charts/llama-stack/templates/deployment.yaml": DEPLOYMENT,
        "gitops/llama-stack-values.yaml": "vllm:\n  maxLen: 2048\n",
        "gitops/apps/llama-stack.yaml": APPLICATION,
    })
    nil = _nil(_check(capsys, root))
    assert [f["level"] for f in nil] == ["error"]  # Argo CD renders with these values, and helm stops there


def test_a_release_value_known_only_when_argo_cd_builds_it_leaves_the_nil_pointer_a_warning(tmp_path, capsys):
    app = APPLICATION.replace("        - ../../gitops/llama-stack-values.yaml\n",
                              "        - ../../gitops/$ARGOCD_APP_NAME-values.yaml\n")
    root = _tree(tmp_path, {
        "charts/llama-stack/Chart.yaml": CHART, "charts/llama-stack/values.yaml": VALUES,
        "charts/llama-stack/templates/deployment.yaml": DEPLOYMENT,
        "gitops/apps/llama-stack.yaml": app,
    })
    nil = _nil(_check(capsys, root))
    assert [f["level"] for f in nil] == ["warning"]
    assert "more than vramlint could read" in nil[0]["message"]


def test_a_values_file_the_application_names_that_is_missing_is_said_on_its_line(tmp_path, capsys):
    root = _tree(tmp_path, {
        "charts/llama-stack/Chart.yaml": CHART, "charts/llama-stack/values.yaml": VALUES,
        "charts/llama-stack/templates/deployment.yaml": DEPLOYMENT,
        "gitops/apps/llama-stack.yaml": APPLICATION,
    })
    report = _check(capsys, root)
    missing = [f for f in report["findings"] if "is not in the scanned tree" in f["message"]]
    assert [(f["level"], f["line"]) for f in missing] == [("warning", 13)]
    assert [f["level"] for f in _nil(report)] == ["warning"]  # the release is incomplete: not certain to fail


HELMFILE = """\
environments:
  staging: {}
  production: {}
---
releases:
  - name: vllm
    namespace: aiops
    chart: ./charts/vllm
    values:
      - values/{{ .Environment.Name }}/vllm.yaml
      - vllm:
          maxLen: 2048
    set:
      - name: providers.postgres.enabled
        value: false
"""


def test_a_helmfile_release_is_evaluated_once_per_environment_its_values_name(tmp_path, capsys):
    root = _tree(tmp_path, {
        "charts/vllm/Chart.yaml": "apiVersion: v2\nname: vllm\nversion: 0.1.0\n",
        "charts/vllm/templates/deployment.yaml": DEPLOYMENT,
        "values/staging/vllm.yaml": "vllm:\n  model: Qwen/Qwen2.5-0.5B-Instruct\n",
        "values/production/vllm.yaml": "vllm:\n  model: Qwen/Qwen2.5-7B-Instruct\n",
        "helmfile.yaml": HELMFILE,
    })
    report = _check(capsys, root)
    assert not _nil(report)
    models = sorted(s["model"] for s in report["servers"])
    assert models == ["Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-7B-Instruct"]
    assert {s["args"]["max_model_len"] for s in report["servers"]} == {2048}


def test_set_entries_are_typed_and_placed_as_helm_reads_them():
    from vramlint.helm.releases import Release, set_values
    from vramlint.model import Location

    rel = Release(None, None, "f.yaml", 1, "test")
    at = Location("f.yaml", 3, 5)
    got = set_values([("a.b[1].c", "10", False, at), (r"x\.y", "true", False, at), ("l", "{1,b}", False, at),
                      ("s", "007", False, at), ("t", "true", True, at), ("bad..key", "1", False, at)], "f", rel)
    assert got.data == {"a": {"b": [None, {"c": 10}]}, "x.y": True, "l": [1, "b"], "s": "007", "t": "true"}
    assert got.origins[("a", "b", 1, "c")] == at
    assert any("bad..key" in u for u in rel.unread)


TPL_CHART = {
    "chart/Chart.yaml": "apiVersion: v2\nname: vllm\nversion: 0.1.0\n",
    "chart/templates/_helpers.tpl": '{{- define "vllm.args" -}}\n{{- range .Values.vllm.args }}\n'
                                    '- {{ tpl . $ | quote }}\n{{- end }}\n{{- end }}\n',
    "chart/templates/deployment.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: vllm
        spec:
          template:
            spec:
              containers:
                - name: vllm
                  image: vllm/vllm-openai:v0.10.2
                  args:
                    {{- include "vllm.args" . | nindent 12 }}
        """,
}


def test_tpl_of_a_values_string_is_rendered_with_the_chart_values(tmp_path, capsys):
    root = _tree(tmp_path, {**TPL_CHART, "chart/values.yaml": (
        'vllm:\n  model: Qwen/Qwen2.5-7B-Instruct\n  args:\n    - "--model={{ .Values.vllm.model }}"\n'
        '    - "--max-model-len={{ .Values.vllm.len }}"\n  len: 4096\n')})
    report = _check(capsys, root)
    [server] = report["servers"]
    assert server["model"] == "Qwen/Qwen2.5-7B-Instruct" and server["args"]["max_model_len"] == 4096
    # the flag's text is the values string's: its finding lands on the values line that wrote it
    where = server["arg_locations"]["max_model_len"]
    assert where["file"].endswith("chart/values.yaml") and where["line"] == 5


def test_tpl_recursion_and_doubling_stop_at_the_limits(tmp_path, capsys):
    for i, arg in enumerate(['"{{ tpl (index .Values.vllm.args 0) $ }}"',
                             '"{{ tpl (index .Values.vllm.args 0) $ }}{{ tpl (index .Values.vllm.args 0) $ }}"']):
        root = _tree(tmp_path / str(i), {**TPL_CHART, "chart/values.yaml": f"vllm:\n  args:\n    - {arg}\n"})
        started = time.process_time()
        report = _check(capsys, root)
        assert time.process_time() - started < 10
        messages = [f["message"] for f in report["findings"]]
        assert any("nested too deeply" in m or "limit" in m for m in messages), messages


def test_the_run_time_for_charts_goes_to_the_vllm_chart_first(tmp_path, capsys, monkeypatch):
    from vramlint.discover import discover
    from vramlint.helm import gotmpl, hook

    files = {"charts/vllm-serving/Chart.yaml": "apiVersion: v2\nname: serving\nversion: 0.1.0\n",
             "charts/vllm-serving/values.yaml": VALUES + "providers:\n  postgres:\n    enabled: false\n",
             "charts/vllm-serving/templates/deployment.yaml": DEPLOYMENT,
             "charts/zz-llm/Chart.yaml": "apiVersion: v2\nname: llm\nversion: 0.1.0\n",
             "charts/zz-llm/values.yaml": "image:\n  repository: vllm/vllm-openai\n  tag: v0.10.2\n",
             "charts/zz-llm/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"}
    for name in ("alertmanager", "grafana", "prometheus"):
        files[f"charts/{name}/Chart.yaml"] = f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n"
        files[f"charts/{name}/values.yaml"] = "replicas: 1\n"
        files[f"charts/{name}/templates/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
    # a vLLM option's name, never vLLM's: may be a vLLM server's, so evaluated when there is time
    files["charts/tuning/Chart.yaml"] = "apiVersion: v2\nname: tuning\nversion: 0.1.0\n"
    files["charts/tuning/templates/cm.yaml"] = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
                                                "data:\n  ARGS: --max-model-len 4096\n")
    root = _tree(tmp_path, files)
    plan = hook.plan(discover([root]).files)
    assert {Path(c).name for c in hook._vllm_charts(plan)} == {"vllm-serving", "zz-llm"}
    # no time at all: the charts that name no vLLM are one note (not evaluated whatever the time, as they deploy no
    # vLLM server), each vLLM chart its own warning
    monkeypatch.setattr(gotmpl, "RUN_CHART_SECONDS", 0.0)
    main(["check", root, "--offline", "--format", "json", "--gpu", "L4"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    late = [n for n in report.get("notes", []) + captured.err.splitlines() if "nothing in them names vLLM" in n]
    assert len(late) == 1 and "3 Helm charts" in late[0] and "grafana" in late[0]
    late = [n for n in report.get("notes", []) + captured.err.splitlines() if "not plainly name vLLM" in n]
    assert len(late) == 1 and "1 Helm chart " in late[0] and "tuning" in late[0]
    skipped = [f for f in report["findings"] if "chart not evaluated" in f["message"]]
    assert sorted(Path(f["file"]).parent.name for f in skipped) == ["vllm-serving", "zz-llm"]


def test_a_profile_with_its_own_node_selector_label_is_read_through_its_chart(tmp_path, capsys):
    values = ("engine:\n  image: vllm/vllm-openai:v0.10.2\n  model: Qwen/Qwen2.5-7B-Instruct\n  maxLen: 4096\n"
              "  gpus: 1\n  nodeSelector:\n    accelerator: nvidia\n")
    template = """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: vllm
        spec:
          template:
            spec:
              nodeSelector: {{- toYaml .Values.engine.nodeSelector | nindent 8 }}
              containers:
                - name: vllm
                  image: {{ .Values.engine.image }}
                  args: ["--model", "{{ .Values.engine.model }}", "--max-model-len", "{{ .Values.engine.maxLen }}"]
                  resources:
                    limits:
                      nvidia.com/gpu: {{ .Values.engine.gpus }}
        """
    prod = values.replace("accelerator: nvidia\n", "accelerator: nvidia\n    nvidia.com/gpu.product: "
                          "NVIDIA-A100-SXM4-80GB\n").replace("4096", "16384")
    root = _tree(tmp_path, {"helm/vllm-stack/Chart.yaml": "apiVersion: v2\nname: vllm-stack\nversion: 0.1.0\n",
                            "helm/vllm-stack/values.yaml": values,
                            "helm/vllm-stack/templates/deployment.yaml": template,
                            "environments/prod/values.yaml": prod})
    main(["check", root, "--offline", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    lens = sorted(s["args"]["max_model_len"] for s in report["servers"])
    assert lens == [4096, 16384]
    prod_server = next(s for s in report["servers"] if s["args"]["max_model_len"] == 16384)
    assert prod_server["gpu"]["type"] == "A100-80GB"


def test_a_multi_source_application_takes_values_of_its_ref_source_in_the_same_repository(tmp_path, capsys):
    app = """\
        apiVersion: argoproj.io/v1alpha1
        kind: Application
        metadata:
          name: serving
        spec:
          sources:
            - repoURL: https://github.com/example/platform.git
              path: charts/llama-stack
              helm:
                valueFiles:
                  - $values/envs/prod/llama-stack.yaml
                  - $other/prod.yaml
                valuesObject:
                  vllm:
                    maxLen: 1024
            - repoURL: https://github.com/example/platform
              ref: values
            - repoURL: https://github.com/example/secrets.git
              ref: other
        """
    root = _tree(tmp_path, {
        "charts/llama-stack/Chart.yaml": CHART, "charts/llama-stack/values.yaml": VALUES,
        "charts/llama-stack/templates/deployment.yaml": DEPLOYMENT,
        "envs/prod/llama-stack.yaml": "providers:\n  postgres:\n    enabled: true\n",
        "argocd/serving.yaml": app,
    })
    main(["check", root, "--offline", "--format", "json", "--gpu", "L4"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    [server] = report["servers"]
    assert server["args"]["max_model_len"] == 1024
    where = server["arg_locations"]["max_model_len"]
    assert where["file"].endswith("argocd/serving.yaml") and where["line"] == 15
    assert not _nil(report)
    # the other repository's file is said as not read, on the release's note
    assert "$other/prod.yaml (of the `other` source, another repository)" in captured.err


def test_releases_of_one_chart_are_evaluated_up_to_the_limit_and_the_rest_said(tmp_path, capsys):
    from vramlint.helm.releases import MAX_RELEASES_PER_CHART

    files = {"charts/llama-stack/Chart.yaml": CHART,
             "charts/llama-stack/values.yaml": VALUES + "providers:\n  postgres:\n    enabled: false\n",
             "charts/llama-stack/templates/deployment.yaml": DEPLOYMENT}
    for n in range(MAX_RELEASES_PER_CHART + 5):
        files[f"apps/app{n:02}.yaml"] = (f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: a{n}\n"
                                         "spec:\n  source:\n    path: charts/llama-stack\n    helm:\n      parameters:\n"
                                         f"        - name: vllm.maxLen\n          value: \"{1024 + n}\"\n")
    root = _tree(tmp_path, files)
    main(["check", root, "--offline", "--format", "json", "--gpu", "L4"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert len(report["servers"]) == MAX_RELEASES_PER_CHART
    # said where the cut falls, as a finding (it was a run note: hostile23's 5,000 helmfile releases)
    [cut] = [f for f in report["findings"] if "5 more releases install it than vramlint evaluates" in f["message"]]
    assert cut["file"].endswith(f"apps/app{MAX_RELEASES_PER_CHART:02}.yaml") and cut["line"] == 7


def test_values_files_a_release_names_that_are_not_read_are_said_on_its_lines(tmp_path, capsys):
    """hostile23: an Application's valueFiles that are a FIFO and a link out of the tree, a helmfile's values file
    that is a link to /: each a warning on the line that names it, nothing of them read."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "planted.yaml").write_text("vllm:\n  model: planted/outside-model\n")
    root = Path(_tree(tmp_path / "repo", {
        "charts/llama-stack/Chart.yaml": CHART, "charts/llama-stack/values.yaml": VALUES,
        "charts/llama-stack/templates/deployment.yaml": DEPLOYMENT,
        "gitops/app.yaml": APPLICATION.replace("        - ../../gitops/llama-stack-values.yaml\n",
                                               "        - fifo.yaml\n        - planted.yaml\n"),
        "helmfile.yaml": "releases:\n  - name: x\n    chart: ./charts/llama-stack\n    values:\n"
                         "      - root.yaml\n",
    }))
    os.mkfifo(root / "charts/llama-stack/fifo.yaml")
    os.symlink(outside / "planted.yaml", root / "charts/llama-stack/planted.yaml")
    os.symlink("/", root / "root.yaml")
    report = _check(capsys, str(root))
    said = {(Path(f["file"]).name, f["line"]): f for f in report["findings"]}
    assert "FIFO" in said[("app.yaml", 13)]["message"] and said[("app.yaml", 13)]["level"] == "warning"
    assert "symbolic link to a path outside" in said[("app.yaml", 14)]["message"]
    assert "symbolic link to a path outside" in said[("helmfile.yaml", 5)]["message"]
    assert "planted/outside-model" not in json.dumps(report)
