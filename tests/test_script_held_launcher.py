"""A launch script whose program is held in a variable (issue 9, walkfollow27): `VLLM_BIN=/opt/venv/bin/vllm;
"$VLLM_BIN" serve MODEL` is read as that program; one not known before the run (`"$VLLM_BIN" serve MODEL` with
VLLM_BIN unset, or `${VLLM_BIN:-$(which vllm)}`) in a script that names vLLM is a note that the launcher is known
only at run time, never a server guessed."""

from __future__ import annotations

import json

from vramlint.cli import main

# shaped after a repository's `deploy/run_server.sh` that takes the venv's CLI from its environment
HELD_UNKNOWN = """\
#!/usr/bin/env bash
set -euo pipefail
# VLLM_BIN: the vllm CLI of the venv the job activates
MODEL="${MODEL:-meta-llama/Llama-3.1-8B-Instruct}"
"$VLLM_BIN" serve "$MODEL" --max-model-len 8192 --port 8000
"""
HELD_KNOWN = HELD_UNKNOWN.replace("set -euo pipefail\n", "set -euo pipefail\nVLLM_BIN=/opt/venv/bin/vllm\n")
# the same shape for another engine: nothing names vLLM, nothing is said
OTHER_ENGINE = '#!/usr/bin/env bash\n"$ENGINE_BIN" serve "$MODEL" --port 30000\n'


def _report(capsys, monkeypatch, folder):
    monkeypatch.chdir(folder)
    main(["check", ".", "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)


def test_a_held_launcher_known_is_read_and_unknown_is_said(tmp_path, capsys, monkeypatch):
    (tmp_path / "known").mkdir()
    (tmp_path / "known" / "run_server.sh").write_text(HELD_KNOWN)
    (tmp_path / "unknown").mkdir()
    (tmp_path / "unknown" / "run_server.sh").write_text(HELD_UNKNOWN)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "serve.sh").write_text(OTHER_ENGINE)
    report = _report(capsys, monkeypatch, tmp_path)
    assert [(s["file"], s["model"]) for s in report["servers"]] == [
        ("known/run_server.sh", "meta-llama/Llama-3.1-8B-Instruct")]
    said = [(f["file"], f["line"], f["level"]) for f in report["findings"] if "known only at run time" in f["message"]]
    assert said == [("unknown/run_server.sh", 5, "note")]
    assert "VLLM_BIN" in next(f["message"] for f in report["findings"] if "known only at run time" in f["message"])
    assert not any(f["file"].startswith("other/") for f in report["findings"])
