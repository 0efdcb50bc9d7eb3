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
