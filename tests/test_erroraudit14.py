"""Fourteenth-round error audit: false errors seen on public files vramlint had not seen, each fixed at its cause.

The fixtures are written for these tests, shaped after what the audit met (not copies of those files)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _check(folder: Path) -> dict:
    out = folder / "report.json"
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", str(folder), "--offline", "--format", "json",
                           "--output-file", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(out.read_text())


def _levels(report: dict, rule: str) -> list[str]:
    return [f["level"] for f in report["findings"] if f["rule"] == rule]


def test_a_command_substitution_inside_double_quotes_is_read_as_its_own_script():
    from vramlint.cmdline import unterminated_quote

    # the awk program's double quotes are inside `$(...)`, which the shell reads as a script of its own
    script = 'S="$(curl -s "$U" | awk -v n="$N" \'/"id":"[^"]+"/{ print n }\')"\nexec vllm serve m\n'
    assert unterminated_quote(script) is None
    assert unterminated_quote('echo "$(echo \'x)"') == 13  # the single quote inside it is never closed
    assert unterminated_quote('X="$(( 1 + 2 ))"; echo "ok') == 23  # arithmetic inside, then a real open quote


def test_here_document_bodies_are_not_read_for_quotes():
    from vramlint.cmdline import unterminated_quote

    assert unterminated_quote("sqlite3 db <<'SQL'\nSELECT 'it''s' FROM t WHERE a = 'x;\nSQL\nexec vllm serve m\n") is None
    assert unterminated_quote("cat <<-EOF\nit's\n\tEOF\necho 'open") == 26
    assert unterminated_quote('echo a <<< "b') == 11  # a here-string is not a here-document


def test_a_shell_script_with_a_here_document_is_not_said_to_fail(tmp_path):
    (tmp_path / "job.yaml").write_text("""apiVersion: batch/v1
kind: Job
metadata: {name: seed}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: seed
          image: vllm/vllm-openai:v0.8.5
          command: ["/bin/sh", "-c"]
          args:
            - |
              sqlite3 /data/db <<'SQL'
              INSERT INTO keys VALUES ('k', datetime('now'));
              -- it's a comment in SQL, not in the shell
              SQL
              exec vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096
          resources: {limits: {nvidia.com/gpu: 1}}
""")
    report = _check(tmp_path)
    # the quotes in the body are SQL's, which the shell never tokenizes: no "the shell runs none of the script"
    assert not [f for f in report["findings"] if "Unterminated" in f["message"]]


def test_engines_sharing_a_gpu_only_within_a_profile_are_a_warning(tmp_path):
    service = """    profiles: ["models"]
    image: vllm/vllm-openai:v0.10.1
    command: ["--model", "{model}", "--gpu-memory-utilization", "0.8"]
    deploy: {{resources: {{reservations: {{devices: [{{driver: nvidia, count: all, capabilities: [gpu]}}]}}}}}}
"""
    (tmp_path / "compose.yaml").write_text("services:\n  a:\n" + service.format(model="Qwen/Qwen2.5-1.5B-Instruct")
                                           + "  b:\n" + service.format(model="Qwen/Qwen2.5-0.5B-Instruct"))
    report = _check(tmp_path)
    assert _levels(report, "VRL007") == ["warning"]
    text = next(f for f in report["findings"] if f["rule"] == "VRL007")
    assert "--profile models up" in text["detail"]
    # without the profile both start on `docker compose up`: certain, an error
    (tmp_path / "compose.yaml").write_text((tmp_path / "compose.yaml").read_text().replace('    profiles: ["models"]\n', ""))
    assert _levels(_check(tmp_path), "VRL007") == ["error"]


def test_a_flag_no_release_knows_on_an_image_of_unknown_version_is_a_warning(tmp_path):
    (tmp_path / "compose.yaml").write_text("""services:
  llm:
    image: my-vllm-build
    command: ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--fp4-kernel-pick", "cutlass", "--max-modle-len", "4096"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}
""")
    report = _check(tmp_path)
    levels = {f["message"].split(" does not know ")[1].split(":")[0]: f["level"]
              for f in report["findings"] if f["rule"] == "VRL009"}
    # a build from a fork or a later commit may have the new flag; a misspelling no build accepts stays an error
    assert levels == {"--fp4-kernel-pick": "warning", "--max-modle-len": "error"}


def test_nvidia_visible_devices_is_overridden_by_a_device_request(tmp_path):
    (tmp_path / "compose.yaml").write_text("""services:
  llm:
    image: vllm/vllm-openai:v0.10.1
    environment:
      - NVIDIA_VISIBLE_DEVICES=${GPUS:-1}
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--tensor-parallel-size", "4"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}
""")
    report = _check(tmp_path)
    assert not [f for f in report["findings"] if f["rule"] == "VRL006" and f["level"] == "error"]
    # with `runtime: nvidia` and no device request, the variable is what the toolkit reads
    (tmp_path / "compose.yaml").write_text("""services:
  llm:
    image: vllm/vllm-openai:v0.10.1
    runtime: nvidia
    environment:
      - NVIDIA_VISIBLE_DEVICES=0
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--tensor-parallel-size", "4"]
""")
    assert _levels(_check(tmp_path), "VRL006") == ["error"]


def test_a_file_named_as_a_template_has_its_placeholders_unknown(tmp_path):
    body = """apiVersion: apps/v1
kind: Deployment
metadata: {name: llm}
spec:
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--tensor-parallel-size", "${TP_SIZE}"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""
    (tmp_path / "vllm.yaml.tpl").write_text(body)
    report = _check(tmp_path)
    assert not [f for f in report["findings"] if f["level"] == "error"]
    assert [s["model"] for s in report["servers"]] == ["Qwen/Qwen2.5-1.5B-Instruct"]
    # the note names the syntax the file has (envsubst's `${ }`), not Go's
    [note] = [n for n in report["servers"][0]["notes"] if n.startswith("template syntax")]
    assert note.startswith("template syntax (${ }) replaced")
    # the same text as a manifest applied as written: the literal is refused
    (tmp_path / "vllm.yaml.tpl").rename(tmp_path / "vllm.yaml")
    assert _levels(_check(tmp_path), "VRL005") == ["error"]
