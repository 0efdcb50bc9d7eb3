"""`ssh HOST "vllm serve $MODEL ..."` in a launch script (issue 9, walkfollow27): the local shell expands the
double-quoted variables, ssh joins the command's words for the remote shell, which splits the line again; a value
not known here leaves only its own part unknown there (it was the whole command silent). Single-quoted, the
variables are the remote host's: not the local values."""

from __future__ import annotations

import json

from vramlint.cli import main

# shaped after a repository's `launch_remote.sh` that starts the server on a GPU node it reaches by ssh
LAUNCH_REMOTE = """\
#!/usr/bin/env bash
set -e
MODEL=Qwen/Qwen2.5-14B-Instruct
HOST=${1:?usage: launch_remote.sh HOST}
ssh -o StrictHostKeyChecking=no "$HOST" "vllm serve $MODEL --tensor-parallel-size 2 --port $PORT"
"""
REMOTE_VARIABLES = """\
#!/usr/bin/env bash
MODEL=Qwen/Qwen2.5-14B-Instruct
ssh gpu-node-1 'vllm serve $MODEL --tensor-parallel-size 2'
"""


def _report(capsys, monkeypatch, folder):
    monkeypatch.chdir(folder)
    main(["check", ".", "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)


def test_an_ssh_command_with_a_variable_unknown_here_is_still_read(tmp_path, capsys, monkeypatch):
    (tmp_path / "launch_remote.sh").write_text(LAUNCH_REMOTE)
    servers = _report(capsys, monkeypatch, tmp_path)["servers"]
    assert [(s["file"], s["line"], s["model"]) for s in servers] == [
        ("launch_remote.sh", 5, "Qwen/Qwen2.5-14B-Instruct")]
    assert servers[0]["args"]["tensor_parallel_size"] == 2
    assert servers[0]["args"]["port"] is None  # $PORT: not known here, and said as such


def test_single_quoted_variables_are_the_remote_hosts(tmp_path, capsys, monkeypatch):
    (tmp_path / "remote.sh").write_text(REMOTE_VARIABLES)
    servers = _report(capsys, monkeypatch, tmp_path)["servers"]
    assert [(s["file"], s["model"]) for s in servers] == [("remote.sh", None)]
    assert servers[0]["args"]["tensor_parallel_size"] == 2


def test_a_destination_known_only_at_run_time_names_only_the_host(tmp_path, capsys, monkeypatch):
    # (tests/test_script_mention_note.py held this as a launch not read before)
    (tmp_path / "run.sh").write_text('#!/usr/bin/env bash\nssh "$1" "vllm serve facebook/opt-125m --port 8000"\n')
    servers = _report(capsys, monkeypatch, tmp_path)["servers"]
    assert [(s["file"], s["model"], s["args"]["port"]) for s in servers] == [("run.sh", "facebook/opt-125m", 8000)]
