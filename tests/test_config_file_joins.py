"""`vllm serve --config FILE` whose FILE is a ConfigMap: of another scanned file, or rendered by the same Helm chart
(`config.yaml: {{ toYaml .Values.x | nindent 4 }}`); and what is said when the file cannot be read."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from vramlint.cli import main
from vramlint.helm import extract_charts

HERE = os.path.dirname(__file__)
CHART = os.path.relpath(os.path.join(HERE, "fixtures", "helm", "config-file"))


def line_of(path: str, needle: str) -> int:
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if needle in line:
                return i
    raise AssertionError(f"{needle!r} not in {path}")


@pytest.fixture
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    return tmp_path


def run_json(capsys, *args: str) -> dict:
    main(["check", *args, "--offline", "--format", "json"])
    return json.loads(capsys.readouterr().out)


def test_chart_config_map_keys_become_the_servers_arguments_on_their_values_lines():
    servers, problems, _notes = extract_charts([CHART])
    assert not problems
    (server,) = servers
    values = os.path.join(CHART, "values.yaml")
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert (server.model_location.file, server.model_location.line) == (values, line_of(values, "model: Qwen"))
    assert server.args["gpu_memory_utilization"] == 0.85
    assert server.args["max_num_seqs"] == 64  # a key written with dashes is the same option
    for dest, needle in (("gpu_memory_utilization", "gpu_memory_utilization:"), ("max_num_seqs", "max-num-seqs:"),
                         ("enable_prefix_caching", "enable_prefix_caching:")):
        loc = server.arg_locations[dest]
        assert (loc.file, loc.line) == (values, line_of(values, needle)), dest
    # the command line wins over the file: vLLM puts the file's words before the command line's
    assert server.args["max_model_len"] == 4096
    assert server.arg_locations["max_model_len"].line == line_of(values, "maxModelLen:")
    assert server.unread_config is None
    assert any("settings read from ConfigMap 'release-name-engine-settings' key 'engine.yaml'" in n
               for n in server.notes)


def test_chart_config_is_budgeted(offline, capsys):
    out = run_json(capsys, CHART)
    (server,) = out["servers"]
    assert server["budget"]["gpu"] == "L40S"
    assert server["budget"]["gpu_memory_utilization"] == 0.85
    assert out["summary"]["unchecked"] == []


def test_config_map_the_chart_does_not_render_is_said_once_not_as_no_model(offline, capsys, tmp_path):
    chart = tmp_path / "engine"
    shutil.copytree(CHART, chart)
    off = tmp_path / "off.yaml"
    off.write_text("engine:\n  configEnabled: false\n")
    servers, _problems, _notes = extract_charts([str(chart)], [str(off)])
    (server,) = servers
    assert server.model is None
    assert server.unread_config == "--config /opt/engine/serve.yaml"
    said = [n for n in server.notes if "release-name-engine-settings" in n]
    assert len(said) == 1 and "is not rendered by chart" in said[0]
    out = run_json(capsys, str(chart), "--values", str(off))
    (unchecked,) = [g for g in out["summary"]["unchecked"] if g["cause"] != "gpu-not-said"]
    assert unchecked["cause"] == "config-unread"
    assert not any("names no model" in u for u in out["servers"][0].get("unresolved", []))


MOUNTED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: engine}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          command: ["vllm", "serve", "--config", "/etc/engine/serve.yaml"]
          volumeMounts:
            - {name: settings, mountPath: /etc/engine/serve.yaml, subPath: serve.yaml}
      volumes:
        - name: settings
          configMap: {name: engine-settings}
"""

SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: engine-settings}
data:
  serve.yaml: |
    model: Qwen/Qwen2.5-7B-Instruct
    max-model-len: 8192
"""


def test_plain_config_map_of_another_file_joins_and_its_absence_is_said_as_an_unread_file(offline, capsys):
    deploy = offline / "deploy"
    deploy.mkdir()
    (deploy / "engine.yaml").write_text(MOUNTED)
    alone = run_json(capsys, str(deploy))
    causes = {g["cause"] for g in alone["summary"]["unchecked"]}
    assert "config-unread" in causes and "no-model" not in causes
    (deploy / "settings.yaml").write_text(SETTINGS)
    joined = run_json(capsys, str(deploy))
    (server,) = joined["servers"]
    assert server["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert server["arg_locations"]["max_model_len"]["file"].endswith("settings.yaml")
    assert server["arg_locations"]["max_model_len"]["line"] == 7
    assert "config-unread" not in {g["cause"] for g in joined["summary"]["unchecked"]}


def test_a_value_vllm_refuses_in_the_charts_config_is_an_error_on_its_values_line(offline, capsys, tmp_path):
    chart = tmp_path / "engine"
    shutil.copytree(CHART, chart)
    values = chart / "values.yaml"
    values.write_text(values.read_text() + "    dtype: floaty\n")
    out = run_json(capsys, str(chart))
    (error,) = [f for f in out["findings"] if f["level"] == "error"]
    assert error["rule"] == "VRL005" and "invalid choice: 'floaty'" in error["message"]
    assert error["file"].endswith("engine/values.yaml") and error["line"] == line_of(str(values), "dtype: floaty")
