"""SkyPilot's `accelerators` alternatives ({L4: 1, A10G: 1} or a list): the task lands on one of them, so the
budget is computed on each, and a start-up failure on any is an error naming the GPUs it fails on."""

import json
from pathlib import Path

from vramlint.cli import main

TASK = """\
resources:
  accelerators: {accelerators}
  image_id: docker:vllm/vllm-openai:v0.10.1
run: |
  vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len {length}
"""


def _report(tmp_path: Path, capsys, accelerators: str, length: int) -> dict:
    f = tmp_path / "serve.sky.yaml"
    f.write_text(TASK.format(accelerators=accelerators, length=length))
    out = tmp_path / "report.json"
    main(["check", str(f), "--offline", "--format", "json", "--output-file", str(out), "--fail-on", "never"])
    capsys.readouterr()
    return json.loads(out.read_text())


def test_alternatives_are_a_fleet_and_a_failure_on_one_names_it(tmp_path, capsys):
    report = _report(tmp_path, capsys, "{L4: 1, A100-80GB: 1, RTXA5000: 1}", 131072)
    [server] = report["servers"]
    assert server["gpu"]["fleet"] == ["L4", "A100-80GB", "RTX-A5000"]
    errors = [f for f in report["findings"] if f["rule"] == "VRL005" and f["level"] == "error"]
    assert errors and all("L4" in f["message"] and "A100-80GB" not in f["message"].split("(")[0] for f in errors)
    # a length every alternative holds: no error
    report = _report(tmp_path, capsys, "[L4, A100-80GB]", 8192)
    assert not [f for f in report["findings"] if f["level"] == "error"]


def test_alternatives_with_a_gpu_vramlint_does_not_know_stay_unknown(tmp_path, capsys):
    report = _report(tmp_path, capsys, "{L4: 1, SomeNewGPU: 1}", 8192)
    [server] = report["servers"]
    assert server["gpu"]["type"] is None and not server["gpu"].get("fleet")
