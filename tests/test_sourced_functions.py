"""A launch script that calls a function a file it sources defines (issue 9, walkfollow27): `source lib.sh;
start_vllm MODEL` where lib.sh holds `start_vllm() { vllm serve "$1" ...; }`. The body is read where lib.sh writes
it, with the call's arguments as `$1..$N`; the file is read only inside the scanned tree, as a sourced file's
variables are."""

from __future__ import annotations

import json

from vramlint.cli import main

# shaped after a repository's `scripts/common.sh` that its per-model launchers share
COMMON = """\
#!/usr/bin/env bash
# shared helpers: source this file
log() { echo "[$(date +%T)] $*"; }

start_vllm() {
  local model="$1"
  log "starting $model"
  vllm serve "$model" \\
    --port "${2:-8000}" \\
    --max-model-len 16384 \\
    --gpu-memory-utilization 0.85
}
"""

SERVE_QWEN = """\
#!/usr/bin/env bash
set -euo pipefail
source "$(dirname "$0")/common.sh"
start_vllm Qwen/Qwen2.5-7B-Instruct 8001
"""


def _report(capsys, monkeypatch, folder, *paths):
    monkeypatch.chdir(folder)
    main(["check", *paths, "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)


def test_a_called_function_of_a_sourced_file_is_the_server(tmp_path, capsys, monkeypatch):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "common.sh").write_text(COMMON)
    (tmp_path / "scripts" / "serve-qwen.sh").write_text(SERVE_QWEN)
    for paths in ((), ("scripts/serve-qwen.sh",)):  # the folder's walk, and the script named
        servers = _report(capsys, monkeypatch, tmp_path, *paths)["servers"]
        assert [(s["file"], s["line"], s["model"]) for s in servers] == [
            ("scripts/common.sh", 8, "Qwen/Qwen2.5-7B-Instruct")], paths
        assert servers[0]["args"]["port"] == 8001 and servers[0]["args"]["max_model_len"] == 16384
        assert any("serve-qwen.sh calls on line 4" in note for note in servers[0]["notes"])


def test_a_sourced_library_outside_the_tree_is_not_read(tmp_path, capsys, monkeypatch):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "common.sh").write_text(COMMON)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "serve.sh").write_text(SERVE_QWEN.replace('"$(dirname "$0")/common.sh"', "../lib/common.sh"))
    report = _report(capsys, monkeypatch, tmp_path / "app", ".")
    assert report["servers"] == []
