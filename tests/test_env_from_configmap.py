"""`$(NAME)` in a container's args expands from variables the kubelet sets from ConfigMaps (env valueFrom
configMapKeyRef, envFrom configMapRef): a ConfigMap of the scanned files, beside the workload and not in another
namespace, gives their values, so the command line is checked as it will run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from vramlint.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "env_from_configmap" / "manifests"


def _check(path, capsys):
    main(["check", str(path), "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)


def test_the_configmaps_values_reach_the_command_line(capsys):
    report = _check(FIXTURE, capsys)
    [server] = report["servers"]
    assert server["model"] == "meta-llama/Llama-3.1-70B-Instruct"
    # 70B in bf16 at tensor-parallel-size 1 on one 48 GB GPU: the weights alone do not fit
    errors = [f for f in report["findings"] if f["level"] == "error"]
    assert [f["rule"] for f in errors] == ["VRL005"]
    assert not [f for f in report["findings"] if "known only at run time" in f["message"]]


def test_a_configmap_of_another_namespace_or_folder_is_not_the_pods(tmp_path, capsys):
    apart = tmp_path / "apart"
    shutil.copytree(FIXTURE, apart)
    config = apart / "10-config.yaml"
    config.write_text(config.read_text().replace("namespace: llm-chat", "namespace: other", 1))
    report = _check(apart, capsys)
    assert report["servers"][0]["model"] is None
    assert not [f for f in report["findings"] if f["level"] == "error"]

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "app").mkdir(parents=True)
    (elsewhere / "config").mkdir()
    shutil.copy(FIXTURE / "20-deployment.yaml", elsewhere / "app")
    shutil.copy(FIXTURE / "10-config.yaml", elsewhere / "config")
    report = _check(elsewhere, capsys)
    assert report["servers"][0]["model"] is None


def test_a_value_a_configmap_gives_is_reported_on_the_configmaps_line(capsys):
    # `--tensor-parallel-size=$(TP_SIZE)`: the ConfigMap's TP_SIZE line is the one that sets the value (and the one
    # to change), not the argument naming the variable
    report = _check(FIXTURE, capsys)
    [server] = report["servers"]
    where = server["arg_locations"]["max_model_len"]
    assert (where["file"].rsplit("/", 1)[-1], where["line"]) == ("10-config.yaml", 9)
    [error] = [f for f in report["findings"] if f["level"] == "error"]
    assert (error["file"].rsplit("/", 1)[-1], error["line"]) == ("10-config.yaml", 8)
