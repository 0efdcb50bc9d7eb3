"""A launch script that changes folder before it sources a relative path (issue 9, audit25): `cd "$ROOT_DIR"` or
`cd "$(dirname "$0")/.."`, then `source .env.example`. The shell looks the file up in the folder the `cd` leaves,
not the script's; a folder known only at run time (`cd "$WORKDIR"`) leaves the file unknown, said once."""

from __future__ import annotations

import json

from vramlint.cli import main

# shaped after a repository's `scripts/start_server.sh` that reads the settings kept at the repository's root
ROOT_ENV = "MODEL=Qwen/Qwen2.5-7B-Instruct\nMAX_MODEL_LEN=12288\n"
BY_VARIABLE = """\
#!/usr/bin/env bash
set -euo pipefail
ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT_DIR"
source .env.example
vllm serve "$MODEL" --max-model-len "$MAX_MODEL_LEN"
"""
BY_IDIOM = BY_VARIABLE.replace('ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"\ncd "$ROOT_DIR"',
                               'cd "$(dirname "$0")/.."')
AT_RUN_TIME = BY_VARIABLE.replace('cd "$ROOT_DIR"', 'cd "$WORKDIR"')


def _report(capsys, monkeypatch, folder):
    monkeypatch.chdir(folder)
    main(["check", ".", "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)


def _tree(tmp_path, script):
    (tmp_path / ".env.example").write_text(ROOT_ENV)
    (tmp_path / "scripts").mkdir()
    # the script's own folder holds another settings file, which the `cd` leaves behind
    (tmp_path / "scripts" / ".env.example").write_text("MODEL=facebook/opt-125m\nMAX_MODEL_LEN=2048\n")
    (tmp_path / "scripts" / "start_server.sh").write_text(script)


def test_a_relative_source_is_taken_from_the_folder_cd_leaves(tmp_path, capsys, monkeypatch):
    for script in (BY_VARIABLE, BY_IDIOM):
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        root.mkdir()
        _tree(root, script)
        servers = _report(capsys, monkeypatch, root)["servers"]
        assert [(s["file"], s["model"], s["args"]["max_model_len"]) for s in servers] == [
            ("scripts/start_server.sh", "Qwen/Qwen2.5-7B-Instruct", 12288)], script


def test_a_folder_known_only_at_run_time_leaves_the_file_unknown(tmp_path, capsys, monkeypatch):
    _tree(tmp_path, AT_RUN_TIME)
    report = _report(capsys, monkeypatch, tmp_path)
    assert [(s["file"], s["model"]) for s in report["servers"]] == [("scripts/start_server.sh", None)]
    said = [(f["line"], f["level"]) for f in report["findings"] if "known only at run time, so which" in f["message"]]
    assert said == [(5, "note")]
