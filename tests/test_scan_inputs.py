"""Discovery and bad input: nothing crashes, nothing is dropped silently, hostile YAML is bounded."""

from __future__ import annotations

import io
import json
import os
import sys
import time

import pytest

from vramlint.scan import MAX_FILE_BYTES, prefilter, scan

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.4
          command: ["vllm", "serve", "org/{name}"]
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


def test_directory_walk_skips_vcs_vendor_and_excluded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("deploy/a.yaml", DEPLOY.format(name="a"))
    write("deploy/nested/b.yml", DEPLOY.format(name="b"))
    write("deploy/.git/c.yaml", DEPLOY.format(name="c"))
    write("deploy/node_modules/d.yaml", DEPLOY.format(name="d"))
    write("deploy/vendor/e.yaml", DEPLOY.format(name="e"))
    write("deploy/old/f.yaml", DEPLOY.format(name="f"))
    write("deploy/notes.txt", DEPLOY.format(name="g"))
    inv = scan(["deploy"], exclude=["deploy/old"])
    assert sorted(s.file for s in inv.servers) == ["deploy/a.yaml", "deploy/nested/b.yml"]
    inv = scan(["deploy"], exclude=["*.yml"])
    assert [s.file for s in inv.servers] == ["deploy/a.yaml", "deploy/old/f.yaml"]
    # A file named explicitly is read whatever its extension.
    inv = scan(["deploy/notes.txt"])
    assert [s.name for s in inv.servers] == ["g"]


def test_paths_are_relative_to_the_current_directory(tmp_path, monkeypatch):
    write(str(tmp_path / "repo" / "k8s" / "a.yaml"), DEPLOY.format(name="a"))
    monkeypatch.chdir(tmp_path / "repo")
    inv = scan([str(tmp_path / "repo" / "k8s")])
    assert inv.servers[0].file == "k8s/a.yaml"
    assert inv.servers[0].model_location.file == "k8s/a.yaml"


def test_stdin(tmp_path):
    inv = scan(["-"], stdin_text=DEPLOY.format(name="piped"))
    assert [(s.file, s.name) for s in inv.servers] == [("<stdin>", "piped")]
    inv = scan(["-"], stdin_text="   \n")
    assert inv.skipped[0].reason == "empty input"


def test_invalid_yaml_is_a_problem_with_line_and_column_and_earlier_documents_survive(tmp_path):
    text = DEPLOY.format(name="ok") + "---\nkind: Deployment\nspec: [unclosed\n  x: : y\n"
    write(str(tmp_path / "bad.yaml"), text)
    inv = scan([str(tmp_path / "bad.yaml")])
    assert [s.name for s in inv.servers] == ["ok"]
    (problem,) = [p for p in inv.problems if "YAML" in p.message]
    assert problem.line is not None and problem.line >= 13 and problem.column is not None
    assert "invalid YAML" in problem.message


def test_binary_non_utf8_empty_oversized_are_skipped_with_reasons(tmp_path):
    (tmp_path / "bin.yaml").write_bytes(b"apiVersion: v1\x00\x01\x02vllm")
    (tmp_path / "latin1.yaml").write_bytes("image: vllm/vllm-openai  # caf\u00e9".encode("latin-1"))
    (tmp_path / "empty.yaml").write_bytes(b"  \n\n")
    with open(tmp_path / "huge.yaml", "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    inv = scan([str(tmp_path)])
    reasons = {os.path.basename(s.file): s.reason for s in inv.skipped}
    assert reasons["bin.yaml"] == "binary file (a NUL byte on line 1)"
    assert reasons["latin1.yaml"].startswith("not UTF-8")
    assert reasons["empty.yaml"] == "empty file"
    assert reasons["huge.yaml"].startswith("file too large")
    assert inv.servers == [] and inv.problems == []


def test_billion_laughs_finishes_fast(tmp_path):
    lines = ['a0: &a0 ["vllm", "vllm", "vllm", "vllm", "vllm", "vllm", "vllm", "vllm", "vllm"]']
    for i in range(1, 10):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    bomb = "apiVersion: v1\nkind: Bomb\nmetadata: {name: lol}\nspec:\n" + "\n".join("  " + x for x in lines) + "\n"
    bomb += "  containers: [*a9]\n"
    write(str(tmp_path / "bomb.yaml"), bomb)
    t0 = time.perf_counter()
    inv = scan([str(tmp_path / "bomb.yaml")])
    assert time.perf_counter() - t0 < 5.0
    assert inv.servers == []


def test_deep_nesting_finishes_fast_and_is_reported_not_crashing(tmp_path):
    depth = 10_000
    text = "image: vllm/vllm-openai\nx: " + "[" * depth + "]" * depth + "\n"
    write(str(tmp_path / "deep.yaml"), text)
    text2 = "kind: Deployment\napiVersion: v1\nspec:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(400))
    write(str(tmp_path / "deepmap.yaml"), text2 + "  " * 401 + "containers: [{image: vllm/vllm-openai}]\n")
    t0 = time.perf_counter()
    inv = scan([str(tmp_path)])
    assert time.perf_counter() - t0 < 10.0
    files = {p.file.rsplit("/", 1)[-1] for p in inv.problems} | {s.file.rsplit("/", 1)[-1] for s in inv.skipped}
    assert "deep.yaml" in files  # said, not silently dropped


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks on this platform")
def test_symlink_loop_and_broken_link_are_reported(tmp_path):
    root = tmp_path / "tree"
    write(str(root / "a" / "x.yaml"), DEPLOY.format(name="x"))
    os.symlink(str(root), str(root / "a" / "loop"))
    os.symlink(str(root / "nowhere.yaml"), str(root / "broken.yaml"))
    os.symlink("self.yaml", str(root / "self.yaml"))
    t0 = time.perf_counter()
    inv = scan([str(root)])
    assert time.perf_counter() - t0 < 5.0
    assert [s.name for s in inv.servers] == ["x"]
    reasons = {os.path.basename(s.file): s.reason for s in inv.skipped}
    assert "loop" in reasons["loop"]
    assert reasons["broken.yaml"] == "broken symbolic link"
    assert "loop" in reasons["self.yaml"]


def test_unreadable_file_is_skipped(tmp_path):
    path = tmp_path / "secret.yaml"
    write(str(path), DEPLOY.format(name="s"))
    os.chmod(path, 0)
    try:
        if os.access(path, os.R_OK):
            # root reads any file whatever its mode: simulate the failure at the same place instead.
            pytest.skip("running as root: file permissions do not stop reads (see test_unreadable_via_fifo)")
        inv = scan([str(tmp_path)])
        assert inv.skipped[0].reason == "permission denied"
    finally:
        os.chmod(path, 0o644)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_special_files_are_skipped_not_read(tmp_path):
    # A FIFO would block a reader forever; named explicitly it is reported, in a walk it is passed over.
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    inv = scan([str(fifo)])
    assert inv.skipped[0].reason == "not a regular file"
    inv = scan([str(tmp_path)])
    assert inv.servers == []


def test_unlistable_directory_is_reported(tmp_path, monkeypatch):
    write(str(tmp_path / "d" / "a.yaml"), DEPLOY.format(name="a"))
    real_scandir = os.scandir

    def failing(path):
        if str(path).endswith("/d"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", failing)
    inv = scan([str(tmp_path)])
    assert any(s.reason.startswith("cannot list directory") for s in inv.skipped)


def test_missing_path_is_reported():
    inv = scan(["/nonexistent/vramlint-test"])
    assert inv.skipped[0].reason == "no such file or directory"


def test_prefilter_passes_every_recognised_shape_and_drops_plain_yaml():
    assert prefilter("image: vllm/vllm-openai:v0.6.4")
    assert prefilter("kind: InferenceService")
    assert prefilter("max-model-len: 4096\n")  # a --config file that never says vllm
    assert prefilter("llm_configs:\n")
    assert prefilter("servingEngineSpec:\n")
    assert not prefilter("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n")
    assert not prefilter("jobs:\n  build:\n    runs-on: ubuntu-latest\n")


def test_prefilter_does_not_change_results_on_fixtures():
    fixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "kubernetes")
    with_pf = {s.key for s in scan([fixtures]).servers}
    without = {s.key for s in scan([fixtures], use_prefilter=False).servers}
    assert with_pf == without and with_pf


def test_inventory_command_json_and_table(tmp_path, monkeypatch, capsys):
    from vramlint.commands import inventory

    monkeypatch.chdir(tmp_path)
    write("k8s/a.yaml", DEPLOY.format(name="a"))
    import argparse

    parser = argparse.ArgumentParser()
    inventory.add_arguments(parser)
    assert inventory.run(parser.parse_args(["k8s", "--format", "json"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"servers", "skipped", "problems"}
    (server,) = out["servers"]
    assert server["file"] == "k8s/a.yaml" and server["line"] == 9 and server["column"] == 11
    assert server["yaml_path"] == "spec.template.spec.containers[0]"
    assert server["vllm_version"] == "0.6.4" and server["model"] == "org/a"
    assert inventory.run(parser.parse_args(["k8s"])) == 0
    table = capsys.readouterr().out
    assert "k8s/a.yaml:9" in table and "org/a" in table
    monkeypatch.setattr(sys, "stdin", io.StringIO(DEPLOY.format(name="piped")))
    assert inventory.run(parser.parse_args(["-", "--format", "json"])) == 0
    assert json.loads(capsys.readouterr().out)["servers"][0]["file"] == "<stdin>"


def test_a_reused_anchor_is_a_note_on_its_line_not_a_library_warning(tmp_path, monkeypatch, capfd):
    """YAML lets an anchor be defined again; ruamel says so with a Python warning about "<unicode string>".
    vramlint reports it as a note on the second definition, in the scanned file, and prints no raw warning."""
    from vramlint.cli import main

    (tmp_path / "compose.yaml").write_text(
        "x-gpu: &gpu\n  a: 1\nx-gpu2: &gpu\n  b: 2\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.9.2\n"
        "    command: [\"--model\", \"Qwen/Qwen2.5-1.5B-Instruct\"]\n    <<: *gpu\n")
    monkeypatch.chdir(tmp_path)
    inventory = scan(["compose.yaml"])
    [problem] = inventory.problems
    assert (problem.line, problem.column, problem.level) == (3, 9, "note")
    assert problem.message == "anchor &gpu is defined again here (first at line 1): the aliases after this line refer to this one"
    assert len(inventory.servers) == 1
    assert main(["check", "compose.yaml", "--offline"]) == 0
    err = capfd.readouterr().err
    assert "ReusedAnchorWarning" not in err and "<unicode string>" not in err
