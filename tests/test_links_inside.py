"""Files and folders that are both in the tree and behind a link inside it are read, and reported, under their own
path; a chart whose Chart.yaml is not read is not evaluated; each link out of the tree is said once."""

from __future__ import annotations

import os

from vramlint.discover import discover
from vramlint.scan import scan

CHART = "apiVersion: v2\nname: real\nversion: 0.1.0\n"
TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.2
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "{{ .Values.maxLen }}"]
"""


def test_a_link_sorted_before_the_file_it_names_does_not_take_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b-real.yaml").write_text("a: 1\n")
    os.symlink("b-real.yaml", tmp_path / "a-link.yaml")
    (tmp_path / "z").mkdir()
    (tmp_path / "z" / "x.yaml").write_text("b: 1\n")
    os.symlink("z", tmp_path / "y")
    found = discover(["."])
    assert sorted(f.display for f in found.files) == ["b-real.yaml", "z/x.yaml"]
    assert [s.file for s in found.skipped] == ["y"]
    assert "already scanned" in found.skipped[0].reason and "loop" in found.skipped[0].reason


def test_a_chart_whose_chart_yaml_is_outside_is_not_evaluated_and_the_real_one_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    real = tmp_path / "real"
    (real / "templates").mkdir(parents=True)
    (real / "Chart.yaml").write_text(CHART)
    (real / "values.yaml").write_text("maxLen: 4096\n")
    (real / "templates" / "deploy.yaml").write_text(TEMPLATE)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "values.yaml").write_text("maxLen: 8192\n")
    os.symlink("/proc/self/environ", linked / "Chart.yaml")
    os.symlink("../real/templates", linked / "templates")
    inventory = scan(["."])
    [server] = inventory.servers
    assert server.file == "real/templates/deploy.yaml" and server.args["max_model_len"] == 4096
    said = [p for p in inventory.problems if p.file == "linked/Chart.yaml"]
    assert any("chart not evaluated" in p.message and p.level == "warning" for p in said)
    assert not any("values file" in p.message for p in said)


def test_a_compose_file_behind_a_link_is_said_under_its_own_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    extends: {file: other.yaml, service: base}\n    gpus: all\n")
    (tmp_path / "other.yaml").write_text(
        "services:\n  base:\n    image: vllm/vllm-openai:v0.9.2\n    extends: {file: again.yaml, service: vllm}\n"
        "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n")
    os.symlink("compose.yaml", tmp_path / "again.yaml")
    inventory = scan(["."])
    cycles = [p for p in inventory.problems if "extends chain comes back" in p.message]
    assert {p.file for p in cycles} == {"compose.yaml", "other.yaml"}
    assert all(s.file != "again.yaml" for s in inventory.servers)


def test_a_link_out_of_the_tree_is_said_once(tmp_path, monkeypatch):
    from vramlint.cli import main

    monkeypatch.chdir(tmp_path)
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "values.yaml").write_text("maxLen: 4096\n")
    (chart / "templates" / "deploy.yaml").write_text(TEMPLATE)
    os.symlink("/proc/self/environ", chart / "Chart.yaml")
    out = tmp_path.parent / f"{tmp_path.name}.json"
    main(["check", ".", "--offline", "--output-format", "json", "--output-file", str(out)])
    import json

    findings = [f for f in json.loads(out.read_text())["findings"] if f["file"] == "c/Chart.yaml"]
    assert len([f for f in findings if "outside the scanned tree" in f["message"]]) == 1


def test_a_tree_scanned_through_a_linked_folder_keeps_its_name(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "compose.yaml").write_text("services:\n  vllm:\n    extends: {file: base.yaml, service: base}\n"
                                       "    gpus: all\n")
    (repo / "base.yaml").write_text("services:\n  base:\n    image: vllm/vllm-openai:v0.9.2\n"
                                    "    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096 --bad-flag 1\n")
    os.symlink("compose.yaml", repo / "again.yaml")
    os.symlink("repo", tmp_path / "link")
    monkeypatch.chdir(tmp_path)
    inventory = scan(["link"])
    assert {s.file for s in inventory.servers} <= {"link/compose.yaml", "link/base.yaml"}
    assert all(p.file.startswith("link/") for p in inventory.problems if p.file)
    assert any(loc.file == "link/base.yaml" for s in inventory.servers for loc in s.arg_locations.values())
