"""A server whose model word is known only where it runs (`vllm serve "$MODEL_ID"`, the variable set by the pod
or the caller) is said as such, not as a server that names no model."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main


def _report(tmp_path, monkeypatch, capsys, *args: str) -> dict:
    """The JSON report of `vramlint check ARGS --offline`, with the Hub's caches kept inside ``tmp_path``."""
    for name, folder in (("XDG_CACHE_HOME", "cache"), ("HF_HOME", "hf")):
        monkeypatch.setenv(name, str(tmp_path / folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    main(["check", *args, "--offline", "--format", "json"])
    return json.loads(capsys.readouterr().out)


def test_model_from_a_variable_the_script_does_not_set(tmp_path, monkeypatch, capsys):
    script = tmp_path / "start-vllm.sh"
    script.write_text(textwrap.dedent("""\
        #!/usr/bin/env bash
        set -euo pipefail
        MODEL_ID="${MODEL_ID:?set MODEL_ID to the Hub id of the model}"
        args=("$MODEL_ID" --max-model-len 32768 --gpu-memory-utilization 0.92)
        exec vllm serve "${args[@]}"
        """))
    out = _report(tmp_path, monkeypatch, capsys, str(script))
    [server] = out["servers"]
    [reason] = [u for u in server["unresolved"] if u.startswith("model")]
    assert "known only at run time (line 5)" in reason and "names no model" not in reason
    causes = {g["cause"] for g in out["summary"]["unchecked"]}
    assert "model-at-run-time" in causes and "no-model" not in causes


def test_a_command_line_all_known_without_a_model_still_names_none(tmp_path, monkeypatch, capsys):
    script = tmp_path / "start.sh"
    script.write_text("#!/bin/sh\npython3 -m vllm.entrypoints.openai.api_server --port 8000 --served-model-name x\n")
    out = _report(tmp_path, monkeypatch, capsys, str(script), "--vllm-version", "0.10.0")
    causes = {g["cause"] for g in out["summary"]["unchecked"]}
    assert "model-at-run-time" not in causes
