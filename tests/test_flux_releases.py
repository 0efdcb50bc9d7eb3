"""A Flux HelmRelease whose chart is a folder of a GitRepository that is this repository: the chart of the scanned
tree is evaluated as helm-controller installs it (issue 9). The fixture is our own, shaped after Flux's bootstrap
layout (clusters/<name>/flux-system/gotk-sync.yaml, a chart under charts/)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from vramlint.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "flux_local_chart"


def _check(capsys, root: str) -> dict:
    main(["check", root, "--offline", "--format", "json"])
    return json.loads(capsys.readouterr().out)


def test_the_release_overrides_the_charts_max_model_len_and_gpu(capsys):
    report = _check(capsys, str(FIXTURE))
    [server] = report["servers"]
    # spec.values over the chart's values.yaml (8192 on an A100), as helm-controller merges them
    assert server["args"]["max_model_len"] == 65536
    assert server["gpu"]["type"] == "L4" and server["gpu"]["count"] == 1
    assert server["name"] == "inference-qwen"  # GetReleaseName: <targetNamespace>-<name>
    where = server["arg_locations"]["max_model_len"]
    assert where["file"].endswith("clusters/prod/apps/qwen.yaml") and where["line"] == 16
    errors = [f for f in report["findings"] if f["level"] == "error"]
    assert [(f["rule"], f["file"].rsplit("/", 1)[-1], f["line"]) for f in errors] == [("VRL005", "qwen.yaml", 16)]


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    return root


def test_a_git_repository_of_another_repository_leaves_the_chart_on_its_own_values(tmp_path, capsys):
    root = _copy(tmp_path)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = https://ci-bot:ghp_s3cr3tT0ken@github.com/example/other-repo.git\n')
    report = _check(capsys, str(root))
    assert "ghp_s3cr3tT0ken" not in json.dumps(report)  # a remote's token is never printed
    [server] = report["servers"]
    assert server["args"]["max_model_len"] == 8192
    [note] = [f for f in report["findings"] if "GitRepository flux-system fetches" in f["message"]]
    assert note["level"] == "note" and note["file"].endswith("qwen.yaml") and note["line"] == 11
    assert not [f for f in report["findings"] if f["level"] == "error"]


def test_a_git_repository_whose_url_is_this_repositorys_remote_is_paired(tmp_path, capsys):
    root = _copy(tmp_path)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/example/ml-platform.git\n')
    [server] = _check(capsys, str(root))["servers"]
    assert server["args"]["max_model_len"] == 65536


def test_a_git_repository_not_in_the_scanned_files_stays_a_note(tmp_path, capsys):
    root = _copy(tmp_path)
    (root / "clusters/prod/flux-system/gotk-sync.yaml").unlink()
    report = _check(capsys, str(root))
    [server] = report["servers"]
    assert server["args"]["max_model_len"] == 8192
    assert any("GitRepository flux-system is not in the scanned files" in f["message"] and f["level"] == "note"
               for f in report["findings"])


def test_values_files_take_the_place_of_the_charts_values_yaml(tmp_path, capsys):
    root = _copy(tmp_path)
    (root / "clusters/prod/apps/qwen-values.yaml").write_text(
        "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxModelLen: 4096\ngpuProduct: NVIDIA-L4\n")
    release = root / "clusters/prod/apps/qwen.yaml"
    text = release.read_text().replace("        name: flux-system\n", (
        "        name: flux-system\n      valuesFiles:\n        - ./clusters/prod/apps/qwen-values.yaml\n"))
    release.write_text(text.replace("    maxModelLen: 65536\n", "    maxModelLen: 2048\n"))
    [server] = _check(capsys, str(root))["servers"]
    assert server["model"] == "Qwen/Qwen2.5-1.5B-Instruct"  # from the values file, from the repository's root
    assert server["args"]["max_model_len"] == 2048  # spec.values over it
    assert server["gpu"]["type"] == "L4"
    # `gpus: 1` is only in the chart's values.yaml, which the values file replaced: no GPU limit renders
    assert "nvidia.com/gpu: 1" not in server["gpu"]["evidence"]


def test_values_of_a_known_chart_shape_are_one_server_the_charts(tmp_path, capsys):
    root = _copy(tmp_path)
    release = root / "clusters/prod/apps/qwen.yaml"
    # values vramlint also reads by their shape (extract/flux.py): the chart's evaluation is the one server
    release.write_text(release.read_text() + (
        "    containerPort: 8000\n    image:\n      repository: vllm/vllm-openai\n      tag: v0.10.2\n"
        "      command: [\"vllm\", \"serve\", \"Qwen/Qwen2.5-7B-Instruct\"]\n"))
    [server] = _check(capsys, str(root))["servers"]
    assert server["file"].endswith("charts/vllm/templates/deployment.yaml")
    assert server["args"]["max_model_len"] == 65536


def test_a_chart_path_leading_out_of_the_repository_is_not_paired(tmp_path, capsys):
    root = _copy(tmp_path)
    release = root / "clusters/prod/apps/qwen.yaml"
    release.write_text(release.read_text().replace("chart: ./charts/vllm", "chart: ../../charts/vllm"))
    report = _check(capsys, str(root))
    [server] = report["servers"]
    assert server["args"]["max_model_len"] == 8192
    assert any("leads out of the GitRepository flux-system" in f["message"] for f in report["findings"])


def test_a_chart_ref_to_a_helm_chart_of_this_repository_is_paired(tmp_path, capsys):
    root = _copy(tmp_path)
    (root / "clusters/prod/apps/qwen-chart.yaml").write_text(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata:\n  name: vllm\n  namespace: flux-system\n"
        "spec:\n  chart: ./charts/vllm\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
        "  valuesFiles:\n    - charts/vllm/values.yaml\n    - clusters/prod/apps/qwen-values.yaml\n")
    (root / "clusters/prod/apps/qwen-values.yaml").write_text("maxModelLen: 4096\n")
    release = root / "clusters/prod/apps/qwen.yaml"
    text = release.read_text()
    start, end = text.index("  chart:\n"), text.index("  values:\n")
    release.write_text(text[:start] + "  chartRef:\n    kind: HelmChart\n    name: vllm\n" + text[end:].replace(
        "    maxModelLen: 65536\n", ""))
    [server] = _check(capsys, str(root))["servers"]
    assert server["args"]["max_model_len"] == 4096  # the HelmChart's second values file over its first
    assert server["gpu"]["type"] == "L4" and server["gpu"]["count"] == 1  # spec.values; gpus from values.yaml


def test_a_values_file_missing_from_the_repository_is_said_on_its_line(tmp_path, capsys):
    root = _copy(tmp_path)
    release = root / "clusters/prod/apps/qwen.yaml"
    release.write_text(release.read_text().replace("        name: flux-system\n", (
        "        name: flux-system\n      valuesFiles:\n        - ./clusters/prod/apps/gone.yaml\n")))
    report = _check(capsys, str(root))
    [warning] = [f for f in report["findings"] if "gone.yaml of this release is not in the scanned tree" in
                 f["message"]]
    assert warning["level"] == "warning" and warning["line"] == 16 and warning["file"].endswith("qwen.yaml")
    # the release's other values still apply; values.yaml is replaced by the (missing) file, as source-controller
    [server] = report["servers"]
    assert server["args"]["max_model_len"] == 65536
