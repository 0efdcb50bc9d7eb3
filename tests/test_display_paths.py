"""Every path a run prints has one form: relative below the current folder, absolute outside it (as ruff does).

Plain files were said as `../../tmp/...` while chart files of the same run were said absolute, so one run
printed one tree in two forms.
"""

import json
import os
import shutil

from vramlint.cli import main

HERE = os.path.dirname(__file__)
CHART = os.path.join(HERE, "fixtures", "helm", "basic")
COMPOSE = os.path.join(HERE, "..", "examples", "compose")


def _tree(tmp_path):
    tree = tmp_path / "deploy"
    shutil.copytree(CHART, tree / "chart")
    shutil.copytree(COMPOSE, tree / "compose")
    return tree


def _files(argv, capsys):
    main(["check", *argv, "--offline", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    return {f["file"] for f in report["findings"]}


def test_a_tree_outside_the_current_folder_is_said_absolute(tmp_path, monkeypatch, capsys):
    tree = _tree(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    files = _files([str(tree)], capsys)
    assert any("/chart/" in f for f in files) and any("/compose/" in f for f in files)
    assert all(f.startswith(str(tree) + "/") for f in files), files


def test_a_tree_reached_through_dot_dot_is_said_absolute_too(tmp_path, monkeypatch, capsys):
    tree = _tree(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    files = _files(["../deploy"], capsys)
    assert files and all(f.startswith(str(tree) + "/") for f in files), files


def test_a_tree_below_the_current_folder_is_said_relative(tmp_path, monkeypatch, capsys):
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    files = _files(["deploy"], capsys)
    assert any(f.startswith("deploy/chart/") for f in files) and any(f.startswith("deploy/compose/") for f in files)
    assert not any(f.startswith(("/", "..")) for f in files), files
