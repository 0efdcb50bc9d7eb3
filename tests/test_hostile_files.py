"""Hostile files made on the spot: FIFOs, links out of the tree, kernel files, odd encodings and file names.

Each case runs the real CLI in a subprocess with a timeout (a FIFO that is opened blocks forever) and checks
that the run ends with exit 0 or 1, that what was refused is said on the line that named it, and that nothing
from outside the scanned tree (a planted secret) reaches any report format or standard error.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SECRET = "planted-secret-7f3a9c"
FORMATS = ("text", "json", "sarif", "github", "markdown")

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="needs Linux /proc")

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]
          resources: {limits: {nvidia.com/gpu: 1}}
"""

COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.8.5
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]
"""


def run(cwd: Path, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", NO_COLOR="1",
               HF_TOKEN=SECRET, HOSTILE_MARK=SECRET)
    proc = subprocess.run([sys.executable, "-m", "vramlint", *argv], cwd=str(cwd), env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


def findings(proc: subprocess.CompletedProcess) -> list[dict]:
    return json.loads(proc.stdout)["findings"]


def outside_file(tmp_path: Path, name: str, text: str) -> Path:
    """A file next to the repository (not under it), holding the secret."""
    out = tmp_path / "outside"
    out.mkdir(exist_ok=True)
    path = out / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------ kernel files and the planted secret


@needs_proc
@pytest.mark.parametrize("fmt", FORMATS)
def test_env_file_proc_self_environ_is_never_read_in_any_format(tmp_path, fmt):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "compose.yaml").write_text(COMPOSE.replace("    command:", "    env_file: /proc/self/environ\n    command:"))
    proc = run(repo, "check", ".", "--offline", "--gpu", "L4", "--output-format", fmt)
    assert SECRET not in proc.stdout and SECRET not in proc.stderr
    assert "env_file /proc/self/environ is outside the scanned tree" in proc.stdout.replace("%0A", "\n")
    if fmt == "json":
        (hit,) = [f for f in findings(proc) if f["rule"] == "VRL102"]
        assert (hit["file"], hit["line"], hit["level"]) == ("compose.yaml", 4, "warning")


@needs_proc
def test_dotenv_and_extends_linked_to_kernel_files_are_not_read(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink("/proc/self/environ", repo / ".env")
    os.symlink("/proc/self/environ", repo / "base.yaml")
    (repo / "compose.yaml").write_text(COMPOSE + "    extends: {file: base.yaml, service: x}\n")
    proc = run(repo, "check", ".", "--offline", "--gpu", "L4", "--output-format", "json")
    assert SECRET not in proc.stdout + proc.stderr
    messages = {f["message"]: f for f in findings(proc) if f["rule"] == "VRL102"}
    assert any(m.startswith(".env is outside the scanned tree") for m in messages)
    extends = next(f for m, f in messages.items() if "extends base.yaml" in m)
    assert extends["line"] == 5 and extends["level"] == "warning"


# ------------------------------------------------------------------ FIFOs and devices


@needs_fifo
def test_fifos_named_by_compose_helm_and_the_walk_never_block(tmp_path):
    repo = tmp_path / "repo"
    (repo / "chart" / "templates").mkdir(parents=True)
    os.mkfifo(repo / "base.yaml")
    os.mkfifo(repo / "vars.env")
    (repo / "compose.yaml").write_text(COMPOSE.replace("    command:", "    env_file: vars.env\n    extends: {file: base.yaml, service: b}\n    command:"))
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (repo / "chart" / "values.yaml").write_text("model: Qwen/Qwen2.5-1.5B-Instruct\n")
    os.mkfifo(repo / "chart" / "values-prod.yaml")
    os.mkfifo(repo / "chart" / "templates" / "deployment.yaml")
    os.mkfifo(repo / "walked.yaml")
    proc = run(repo, "check", ".", "--offline", "--gpu", "L4", "--output-format", "json", timeout=60)
    by_file: dict[str, list[str]] = {}
    for f in findings(proc):
        by_file.setdefault(f["file"], []).append(f["message"])
    compose = " ".join(by_file["compose.yaml"])
    assert "env_file vars.env is a FIFO (named pipe), not a regular file: not read" in compose
    assert "extends base.yaml, which is a FIFO (named pipe), not a regular file" in compose
    assert any("FIFO" in m for m in by_file["chart/templates/deployment.yaml"])
    assert any("FIFO" in m for m in by_file["chart/values-prod.yaml"])
    assert any("FIFO" in m for m in by_file["walked.yaml"])


@needs_fifo
def test_values_overlay_given_as_fifo_or_device_is_refused(tmp_path):
    repo = tmp_path / "repo"
    (repo / "chart" / "templates").mkdir(parents=True)
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (repo / "chart" / "templates" / "d.yaml").write_text(DEPLOY.replace("NAME", "d"))
    os.mkfifo(repo / "pipe.yaml")
    for overlay in ("pipe.yaml", "/dev/zero"):
        proc = subprocess.run([sys.executable, "-m", "vramlint", "check", "chart", "--offline", "--values", overlay],
                              cwd=str(repo), env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                              text=True, timeout=30, check=False)
        assert proc.returncode == 2 and "not a regular file" in proc.stderr, proc.stderr


# ------------------------------------------------------------------ symlinks out of the tree


def test_directory_links_to_root_and_parent_are_not_walked(tmp_path):
    repo = tmp_path / "repo"
    (repo / "deploy").mkdir(parents=True)
    (repo / "deploy" / "d.yaml").write_text(DEPLOY.replace("NAME", "d"))
    outside_file(tmp_path, "o.yaml", DEPLOY.replace("NAME", SECRET))
    os.symlink("/", repo / "deploy" / "root")
    os.symlink("..", repo / "deploy" / "up")
    os.symlink(str(tmp_path), repo / "deploy" / "parent")
    proc = run(repo, "check", "deploy", "--offline", "--gpu", "L4", "--output-format", "json", timeout=30)
    doc = json.loads(proc.stdout)
    assert [s["name"] for s in doc["servers"]] == ["d"]
    assert SECRET not in proc.stdout + proc.stderr
    # each link is named, on a finding of its own or as a place of one said once for both (vramlint.fold)
    refused = {place["file"]: f for f in doc["findings"] if f["rule"] == "VRL102"
               for place in [f, *f.get("related_locations", [])]}
    assert {"deploy/root", "deploy/parent"} <= set(refused)
    assert "outside the scanned tree" in refused["deploy/root"]["message"]


def test_links_out_of_the_tree_from_compose_helm_and_config(tmp_path):
    repo = tmp_path / "repo"
    (repo / "chart" / "templates").mkdir(parents=True)
    (repo / "conf").mkdir()
    secret_env = outside_file(tmp_path, "secret.env", f"TOKEN={SECRET}\n")
    secret_cfg = outside_file(tmp_path, "vllm.yaml", f"served-model-name: {SECRET}\nmax-model-len: 1234\n")
    outside_file(tmp_path, "base.yaml", f"services:\n  b:\n    image: {SECRET}\n")
    os.symlink(secret_env, repo / "linked.env")
    os.symlink(secret_cfg, repo / "conf" / "vllm.yaml")
    (repo / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
        "    env_file: [linked.env, ../outside/secret.env]\n"
        "    extends: {file: ../outside/base.yaml, service: b}\n"
        "    volumes: ['./conf:/etc/vllm', '../outside:/etc/out']\n"
        '    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--config", "/etc/vllm/vllm.yaml"]\n')
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (repo / "chart" / "values.yaml").write_text("maxModelLen: 4096\n")
    (repo / "chart" / "templates" / "d.yaml").write_text(
        DEPLOY.replace("NAME", "d").replace('"4096"', '"{{ .Values.maxModelLen }}"'))
    os.symlink(outside_file(tmp_path, "values-prod.yaml", f"maxModelLen: 777\nx: {SECRET}\n"),
               repo / "chart" / "values-prod.yaml")
    os.symlink(outside_file(tmp_path, "t.yaml", DEPLOY.replace("NAME", SECRET)), repo / "chart" / "templates" / "t.yaml")
    for fmt in FORMATS:
        proc = run(repo, "check", ".", "--offline", "--gpu", "L4", "--output-format", fmt)
        assert SECRET not in proc.stdout + proc.stderr, fmt
        # the out-of-tree values as values: a SARIF fingerprint is 64 hex digits, which may hold "777" by chance
        assert not re.search(r"(?<![0-9A-Za-z])(?:777|1234)(?![0-9A-Za-z])", proc.stdout), fmt
    doc = json.loads(run(repo, "check", ".", "--offline", "--gpu", "L4", "--output-format", "json").stdout)
    text = json.dumps(doc)
    assert "env_file linked.env is outside the scanned tree" in text
    assert "env_file ../outside/secret.env is outside the scanned tree" in text
    assert "extends ../outside/base.yaml, which is outside the scanned tree" in text
    assert "--config /etc/vllm/vllm.yaml: conf/vllm.yaml not read (outside the scanned tree)" in text
    assert "values file chart/values-prod.yaml is outside the scanned tree" in text
    assert "template chart/templates/t.yaml is outside the scanned tree" in text


def test_explicit_paths_are_roots_but_what_they_name_is_not(tmp_path):
    # a compose file named on the command line is read wherever it is; its env_file beside it too, but not one
    # that climbs out of its folder
    work = tmp_path / "work"
    work.mkdir()
    (work / "ok.env").write_text("A=1\n")
    outside_file(tmp_path, "far.env", f"B={SECRET}\n")
    (work / "compose.yaml").write_text(COMPOSE.replace("    command:", "    env_file: [ok.env, ../outside/far.env]\n    command:"))
    proc = run(tmp_path, "inventory", "work/compose.yaml", "--format", "json")
    env = json.loads(proc.stdout)["servers"][0]["env"]
    assert env == {"A": "1"}
    assert SECRET not in proc.stdout + proc.stderr


# ------------------------------------------------------------------ the repository's configuration is data


def test_render_helm_from_the_repository_configuration_is_not_applied(tmp_path):
    repo = tmp_path / "repo"
    (repo / "chart" / "templates").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".vramlint.yaml").write_text("gpu: L4\nrender-helm: true\n")
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (repo / "chart" / "templates" / "d.yaml").write_text(DEPLOY.replace("NAME", "d"))
    doc = json.loads(run(repo, "check", ".", "--offline", "--output-format", "json").stdout)
    (note,) = [f for f in doc["findings"] if f["file"] == ".vramlint.yaml"]
    assert (note["rule"], note["level"], note["line"]) == ("VRL102", "note", 2)
    assert "pass --render-helm" in note["message"]
    assert all("rendered by" not in " ".join(s["notes"]) for s in doc["servers"])
    proc = run(repo, "inventory", ".")
    # in inventory's output, as check's findings hold it (no longer only on stderr)
    assert "problem: .vramlint.yaml:2:1: render-helm in a configuration file is not applied" in proc.stdout


def test_helm_renders_a_copy_without_links_out_of_the_tree(tmp_path):
    from vramlint import fsread
    from vramlint.helm.render import copy_for_helm

    chart = tmp_path / "repo" / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "files").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "files" / "ok.txt").write_text("fine\n")
    os.symlink("ok.txt", chart / "files" / "inside.txt")
    os.symlink(outside_file(tmp_path, "s.txt", SECRET), chart / "files" / "secret.txt")
    os.symlink("/", chart / "files" / "root")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with fsread.scanned_roots([str(tmp_path / "repo")]):
        copy, _overlays, left_out = copy_for_helm(str(chart), [], str(scratch))
    copied = {str(p.relative_to(copy)) for p in Path(copy).rglob("*") if p.is_file()}
    assert copied == {"Chart.yaml", "files/ok.txt", "files/inside.txt"}
    assert not any(p.is_symlink() for p in Path(copy).rglob("*"))
    assert sorted(x.rsplit("/", 1)[-1] for x in left_out) == ["root", "secret.txt"]


# ------------------------------------------------------------------ encodings and names


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_utf16_manifests_with_a_bom_are_read(tmp_path, codec):
    text = DEPLOY.replace("NAME", "wide")
    bom = {"utf-16": b"", "utf-16-be": b"\xfe\xff"}[codec]
    (tmp_path / "d.yaml").write_bytes(bom + text.encode(codec))
    doc = json.loads(run(tmp_path, "inventory", ".", "--format", "json").stdout)
    assert [(s["name"], s["args"]["max_model_len"], s["line"]) for s in doc["servers"]] == [("wide", 4096, 8)]


@pytest.mark.parametrize("codec", ["utf-32", "utf-32-be"])
def test_utf32_manifests_are_refused_as_kubectl_refuses_them(tmp_path, codec):
    # kubectl's BOMOverride and go-yaml know UTF-8 and UTF-16 marks only: UTF-32 is NULs to them
    text = DEPLOY.replace("NAME", "wide").replace("4096", "999999")
    bom = {"utf-32": b"", "utf-32-be": b"\x00\x00\xfe\xff"}[codec]
    (tmp_path / "d.yaml").write_bytes(bom + text.encode(codec))
    doc = json.loads(run(tmp_path, "check", ".", "--offline", "--gpu", "L4", "--format", "json").stdout)
    assert doc["servers"] == []
    assert [(f["file"], f["line"], f["rule"], f["level"]) for f in doc["findings"]] == [
        ("d.yaml", 1, "VRL102", "warning")]
    assert "UTF-32" in doc["findings"][0]["message"]


def test_a_file_name_with_a_newline_cannot_start_a_workflow_command(tmp_path):
    name = "x\n::error file=a.yaml::pwned\n##[error]also.yaml"
    (tmp_path / name).write_text(DEPLOY.replace("NAME", "n").replace("4096", "999999"))
    (tmp_path / "\x1b[31mred.yaml").write_text(DEPLOY.replace("NAME", "r"))
    for fmt in FORMATS:
        proc = run(tmp_path, "check", ".", "--offline", "--gpu", "L4", "--output-format", fmt)
        for line in (proc.stdout + proc.stderr).splitlines():
            stripped = line.lstrip(" ")
            if fmt == "github" and stripped.startswith(("::error ", "::warning ", "::notice ")):
                assert "\n" not in line and "pwned" not in line.split("::", 2)[1].replace("%3A", ":").split("file=")[0]
                continue
            assert not stripped.startswith("::"), (fmt, line)
            assert "##[" not in line, (fmt, line)
            assert "\x1b" not in line, (fmt, line)
        if fmt == "markdown":
            lines = proc.stdout.splitlines()
            start = lines.index("| Level | Rule | Location | Message |")
            rows = [r for r in lines[start + 2:] if r.startswith("| ")]
            assert len(rows) >= 1 and all(r.endswith(" |") and r.replace("\\|", "").count(" | ") == 3 for r in rows)


@needs_proc
def test_a_symlink_named_on_the_command_line_is_followed_only_into_the_tree(tmp_path):
    # pre-commit passes the files a pull request changed by name, links included
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "d.yaml").write_text(DEPLOY.replace("NAME", "d"))
    os.symlink("/proc/self/environ", repo / "environ.yaml")
    os.symlink(outside_file(tmp_path, "far.yaml", DEPLOY.replace("NAME", SECRET)), repo / "far.yaml")
    os.symlink("d.yaml", repo / "same.yaml")
    proc = run(repo, "check", "environ.yaml", "far.yaml", "same.yaml", "--offline", "--gpu", "L4",
               "--output-format", "json")
    doc = json.loads(proc.stdout)
    assert SECRET not in proc.stdout + proc.stderr
    assert [s["name"] for s in doc["servers"]] == ["d"]
    refused = {f["file"]: f["message"] for f in doc["findings"] if f["rule"] == "VRL102"}
    assert "outside the scanned tree" in refused["environ.yaml"] and "outside the scanned tree" in refused["far.yaml"]


@needs_proc
def test_repository_config_linked_out_and_templates_folder_linked_out_are_not_read(tmp_path):
    repo = tmp_path / "repo"
    (repo / "chart").mkdir(parents=True)
    (repo / ".git").mkdir()
    os.symlink("/proc/self/environ", repo / ".vramlint.yaml")
    outside = tmp_path / "outside" / "templates"
    outside.mkdir(parents=True)
    (outside / "d.yaml").write_text(DEPLOY.replace("NAME", SECRET))
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    os.symlink(outside, repo / "chart" / "templates")
    (repo / "big.yaml").write_text("# vllm\n" + "x: 1\n" * (1_100_000))
    proc = run(repo, "check", ".", "--offline", "--gpu", "L4", "--output-format", "json")
    assert SECRET not in proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["servers"] == []
    by_file = {f["file"]: f for f in doc["findings"] if f["rule"] == "VRL102"}
    assert by_file[".vramlint.yaml"]["level"] == "warning"
    assert "the defaults apply" in by_file[".vramlint.yaml"]["message"]
    assert "outside the scanned tree" in by_file["chart/templates"]["message"]
    assert by_file["big.yaml"]["level"] == "warning" and "too large" in by_file["big.yaml"]["message"]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_endless_standard_input_is_read_up_to_the_cap(tmp_path):
    with open("/dev/zero", "rb") as endless:
        proc = subprocess.run([sys.executable, "-m", "vramlint", "check", "-", "--offline"], stdin=endless,
                              cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                              text=True, timeout=30, check=False)
    assert proc.returncode == 2 and "standard input ('-') is longer than 5242880 characters" in proc.stderr
