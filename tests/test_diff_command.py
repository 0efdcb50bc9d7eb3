"""`vramlint diff BASE [PATH...]` on real git repositories made in a temporary folder: servers changed, moved,
added and removed between two branches, the budget figures before and after, BASE read from git without
touching the working tree, and git run without anything from the repository's configuration that runs code."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from vramlint.cli import main

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


def deployment(name: str, instance_type: str = "g5.xlarge", extra_args: tuple[str, ...] = (),
               model: str = "meta-llama/Llama-3.1-8B-Instruct") -> str:
    args = "".join(f"\n            - {json.dumps(a)}" for a in ("--model", model, *extra_args))
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: {instance_type}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args:{args}
          resources:
            limits:
              nvidia.com/gpu: 1
"""


COMPOSE = """services:
  new:
    image: vllm/vllm-openai:v0.10.1
    command: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len", "2048"]
    environment:
      NVIDIA_VISIBLE_DEVICES: "0"
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
"""


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """main: llama (8k context), a file of two servers, a server to remove; branch pr: the changes."""
    repo = tmp_path / "repo"
    (repo / "deploy").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "deploy" / "llama.yaml").write_text(deployment("llama", extra_args=("--max-model-len", "8192")))
    (repo / "deploy" / "pair.yaml").write_text(deployment("first") + "---\n" + deployment("second"))
    (repo / "deploy" / "old.yaml").write_text(deployment("old", extra_args=("--max-model-len", "4096")))
    (repo / "deploy" / "gpu.yaml").write_text(deployment("gpu", extra_args=("--max-model-len", "4096")))
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "deploy" / "llama.yaml").write_text(deployment("llama", extra_args=("--max-model-len", "32768")))
    (repo / "moved").mkdir()
    git(repo, "mv", "deploy/pair.yaml", "moved/pair.yaml")
    git(repo, "rm", "-q", "deploy/old.yaml")
    (repo / "deploy" / "gpu.yaml").write_text(deployment("gpu", "g4dn.xlarge", ("--max-model-len", "4096")))
    (repo / "deploy" / "compose.yaml").write_text(COMPOSE)
    commit_all(repo, "the pull request")
    monkeypatch.chdir(repo)
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)
    return repo


def run_diff(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv, "--offline"])
    out = capsys.readouterr()
    return code, out.out, out.err


def diff_json(capsys, *argv: str) -> dict:
    code, out, err = run_diff(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def by_name(doc: dict) -> dict[str, dict]:
    return {e["name"]: e for e in doc["servers"]}


def test_changed_moved_added_removed(repo, capsys):
    doc = diff_json(capsys, "main")
    assert doc["base"] == "main"
    assert doc["base_commit"] == git(repo, "rev-parse", "main").strip()
    servers = by_name(doc)
    assert set(servers) == {"llama", "first", "second", "old", "gpu", "new"}

    llama = servers["llama"]
    assert llama["status"] == "changed"
    assert llama["key"] == "deploy/llama.yaml#spec.template.spec.containers[0]"
    assert llama["inputs_changed"] == ["args.max_model_len"]
    before, after = llama["before"], llama["after"]
    assert (before["max_model_len"], after["max_model_len"]) == (8192, 32768)
    # the KV cache is the same memory; four times the length is a quarter of the concurrency
    assert before["kv_cache_gib"] == after["kv_cache_gib"] and before["kv_tokens"] == after["kv_tokens"]
    assert after["max_concurrency"] == pytest.approx(before["max_concurrency"] / 4, rel=0.01)
    assert before["gpu"] == after["gpu"] == "A10G"

    for name in ("first", "second"):
        moved = servers[name]
        assert moved["status"] == "renamed"
        assert moved["file"] == "moved/pair.yaml" and moved["previous_file"] == "deploy/pair.yaml"
        assert moved["before"] == moved["after"]

    assert servers["old"]["status"] == "removed" and servers["old"]["after"] is None
    assert servers["old"]["before"]["max_model_len"] == 4096
    assert servers["new"]["status"] == "added" and servers["new"]["before"] is None
    assert servers["new"]["file"] == "deploy/compose.yaml"


def test_gpu_change_that_stops_the_server(repo, capsys):
    gpu = by_name(diff_json(capsys, "main", "deploy/gpu.yaml"))["gpu"]
    assert gpu["inputs_changed"] == ["gpu"]
    assert (gpu["before"]["gpu"], gpu["after"]["gpu"]) == ("A10G", "T4")
    assert (gpu["before"]["verdict"], gpu["after"]["verdict"]) == ("starts", "will not start")
    assert any(f["level"] == "error" for f in gpu["findings_added"])
    assert gpu["findings_gone"] == [] or all(f["level"] != "error" for f in gpu["findings_gone"])


def test_unchanged_servers_are_left_out(repo, capsys):
    (repo / "deploy" / "same.yaml").write_text(deployment("same", extra_args=("--max-model-len", "1024")))
    commit_all(repo, "a server")
    (repo / "deploy" / "same.yaml").write_text("# a comment only\n"
                                                + deployment("same", extra_args=("--max-model-len", "1024")))
    commit_all(repo, "a comment")
    assert diff_json(capsys, "HEAD~1")["servers"] == []
    code, out, _ = run_diff(capsys, "HEAD~1")
    assert code == 0 and "no server's inputs, budget or findings changed" in out


def test_working_tree_is_read_and_never_touched(repo, capsys):
    # an uncommitted edit is the "after" side; the checkout stays exactly as it was
    (repo / "deploy" / "llama.yaml").write_text(deployment("llama", extra_args=("--max-model-len", "16384")))
    status = git(repo, "status", "--porcelain")
    head = git(repo, "rev-parse", "HEAD")
    llama = by_name(diff_json(capsys, "main", "deploy"))["llama"]
    assert llama["after"]["max_model_len"] == 16384
    assert git(repo, "status", "--porcelain") == status and git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "stash", "list") == ""


def test_text_and_markdown(repo, capsys):
    code, out, _ = run_diff(capsys, "main", "deploy/llama.yaml")
    assert code == 0
    assert "max_model_len:" in out and "8192 -> 32768 (+300.0%)" in out
    assert "(-75.0%)" in out  # concurrency
    code, out, _ = run_diff(capsys, "main", "--format", "markdown")
    assert out.startswith("<!-- vramlint-diff -->\n")
    rows = [line for line in out.splitlines() if line.startswith("| `")]
    assert len(rows) == 6
    llama = next(r for r in rows if "llama.yaml" in r)
    assert "8192 → 32768 (+300.0%)" in llama
    assert any("moved from `deploy/pair.yaml`" in r for r in rows)


def test_paths_from_a_subfolder_and_absolute(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo / "deploy")
    rel = by_name(diff_json(capsys, "main", "."))
    assert rel["llama"]["file"] == "llama.yaml"
    assert rel["old"]["status"] == "removed" and rel["old"]["file"] == "old.yaml"
    # an absolute path: BASE's files are shown as the working tree's are, so each server is matched
    absolute = by_name(diff_json(capsys, "main", str(repo / "deploy")))
    assert absolute["llama"]["status"] == "changed" and absolute["llama"]["before"]["max_model_len"] == 8192
    assert absolute["old"]["file"] == absolute["llama"]["file"].replace("llama", "old")
    monkeypatch.chdir(repo.parent)  # outside the repository
    outside = by_name(diff_json(capsys, "main", str(repo / "deploy")))
    assert {e["status"] for e in outside.values()} == {"changed", "removed", "added"}
    assert outside["llama"]["before"]["max_model_len"] == 8192


def test_default_base_is_the_merge_base_in_a_pull_request(repo, capsys, monkeypatch):
    # main moves on after the branch: its change is not the pull request's
    git(repo, "checkout", "-q", "main")
    (repo / "deploy" / "later.yaml").write_text(deployment("later"))
    commit_all(repo, "later on main")
    git(repo, "checkout", "-q", "pr")
    monkeypatch.setenv("GITHUB_BASE_REF", "main")
    doc = diff_json(capsys)
    assert doc["base_commit"] == git(repo, "rev-parse", "main~1").strip()
    assert "later" not in by_name(doc)
    monkeypatch.delenv("GITHUB_BASE_REF")
    code, _, err = run_diff(capsys)
    assert code == 2 and "give BASE" in err


def test_errors_are_usage_errors(repo, capsys, tmp_path, monkeypatch):
    code, _, err = run_diff(capsys, "no-such-branch")
    assert code == 2 and "'no-such-branch' is not a commit" in err
    code, _, err = run_diff(capsys, "--", "--output=x")
    assert code == 2 and not (repo / "x").exists()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.yaml").write_text(deployment("a"))
    monkeypatch.chdir(plain)
    code, _, err = run_diff(capsys, "HEAD~1", ".")
    assert code == 2 and "not in a git repository" in err


def test_git_runs_nothing_from_the_repository(repo, capsys, tmp_path):
    """Hooks, fsmonitor, filters and textconv named in the repository's config never run; a link committed at
    BASE is not written as a link."""
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    script.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "filter.evil.smudge", str(script))
    git(repo, "config", "filter.evil.clean", str(script))
    git(repo, "config", "diff.evil.textconv", str(script))
    (repo / ".gitattributes").write_text("*.yaml filter=evil diff=evil\n")
    git(repo, "checkout", "-q", "main")
    os.symlink("/etc/passwd", repo / "deploy" / "link.yaml")
    git(repo, "add", "deploy/link.yaml", ".gitattributes")
    git(repo, "-c", "core.fsmonitor=", "commit", "-q", "-m", "a link")
    marker.unlink(missing_ok=True)
    (repo / "deploy" / "llama.yaml").write_text(deployment("llama", extra_args=("--max-model-len", "1024")))
    llama = by_name(diff_json(capsys, "HEAD"))["llama"]
    assert (llama["before"]["max_model_len"], llama["after"]["max_model_len"]) == (8192, 1024)
    assert not marker.exists()


def test_file_over_the_cap_is_said_the_same_on_both_sides(repo, capsys):
    from vramlint.fsread import MAX_FILE_BYTES

    (repo / "deploy" / "huge.yaml").write_text("# vllm\n" + "x" * (MAX_FILE_BYTES + 10) + "\n")
    commit_all(repo, "a huge file")
    doc = diff_json(capsys, "HEAD~1", "deploy/huge.yaml")
    # new in this commit: its "too large" warning is added, and only once
    assert [f["rule"] for f in doc["findings_added"]] == ["VRL102"]
    (repo / "deploy" / "huge.yaml").write_text("# vllm\n" + "y" * (MAX_FILE_BYTES + 10) + "\n")
    doc = diff_json(capsys, "HEAD", "deploy/huge.yaml")
    assert doc["findings_added"] == [] and doc["findings_gone"] == []


def test_fail_on_applies_to_findings_added(repo, capsys):
    code, _, _ = run_diff(capsys, "main", "deploy/gpu.yaml", "--fail-on", "error")
    assert code == 1
    code, _, _ = run_diff(capsys, "main", "deploy/llama.yaml", "--fail-on", "error")
    assert code == 0


def test_readme_documents_the_json_contract(repo, capsys):
    """docs/diff.md's example has exactly the fields the command writes."""
    import re

    page = (Path(__file__).resolve().parents[1] / "docs" / "diff.md").read_text(encoding="utf-8")
    section = page[page.index("`vramlint diff`"):]
    example = json.loads(re.search(r"```json\n(.*?)```", section, re.S).group(1))
    doc = diff_json(capsys, "main")
    assert set(example) == set(doc)
    entry = by_name(doc)["llama"]
    assert set(example["servers"][0]) == set(entry)
    assert set(example["servers"][0]["before"]) == set(entry["before"]) == set(example["servers"][0]["after"])
    assert set(example["servers"][0]["findings_added"][0]) <= {"rule", "name", "level", "message", "line",
                                                              "yaml_path"}


def test_base_files_are_checked_with_bases_own_configuration(repo, capsys, tmp_path):
    """A pull request that changes only `.vramlint.yaml` (the GPU of the compose file, a custom GPU's memory) shows
    what that does to the servers: BASE's configuration is read from git, not the working tree's."""
    custom = "custom-gpus:\n  - {name: Lab-GPU, memory-gib: %s, compute-capability: 8.9}\n"
    (repo / ".vramlint.yaml").write_text("gpu: L4\n" + custom % 22, encoding="utf-8")
    (repo / "lab").mkdir()
    (repo / "lab" / ".vramlint.yaml").write_text("gpu: Lab-GPU\n", encoding="utf-8")
    (repo / "lab" / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    commit_all(repo, "configuration")
    git(repo, "tag", "before")
    (repo / ".vramlint.yaml").write_text("gpu: A10G\n" + custom % 44, encoding="utf-8")
    commit_all(repo, "another GPU for the compose file, a bigger lab GPU")
    doc = diff_json(capsys, "before")
    entries = {e["file"]: e for e in doc["servers"]}
    assert set(entries) == {"deploy/compose.yaml", "lab/compose.yaml"}
    top, lab = entries["deploy/compose.yaml"], entries["lab/compose.yaml"]
    assert (top["before"]["gpu"], top["after"]["gpu"]) == ("L4", "A10G")
    assert (lab["before"]["gpu"], lab["after"]["gpu"]) == ("Lab-GPU", "Lab-GPU")
    assert lab["after"]["kv_cache_gib"] > lab["before"]["kv_cache_gib"] + 15
    assert top["inputs_changed"] == lab["inputs_changed"] == []  # no deployment file changed

    # --config names one file for both sides: nothing changes then
    (tmp_path / "one.yaml").write_text("gpu: L4\n", encoding="utf-8")
    assert diff_json(capsys, "before", "deploy", "--config", str(tmp_path / "one.yaml"))["servers"] == []


def test_a_base_configuration_with_problems_falls_back_to_the_working_trees(repo, capsys):
    (repo / ".vramlint.yaml").write_text("gpu: L4\nfail-onn: error\n", encoding="utf-8")
    commit_all(repo, "a typo")
    (repo / ".vramlint.yaml").write_text("gpu: L4\n", encoding="utf-8")
    commit_all(repo, "fixed")
    code, out, err = run_diff(capsys, "HEAD~1", "--format", "json")
    assert code == 0, err
    assert "the configuration at HEAD~1 has problems (.vramlint.yaml:2:1: unknown key 'fail-onn'" in err
    assert "checked with the working tree's configuration" in err
    assert json.loads(out)["servers"] == []


def test_an_unusable_configuration_in_the_working_tree_is_a_finding_on_its_line(repo, capsys):
    # as `check` reads it: the repository's own file is data; one that cannot be used is not applied, and its
    # problem is a VRL102 error on its line among the working tree's findings (exit 1 with --fail-on error)
    (repo / ".vramlint.yaml").write_text("fail-on: error\ngpu: NoSuchGPU-9000\n")
    code, out, err = run_diff(capsys, "HEAD", "--format", "json", "--fail-on", "error")
    assert "Traceback" not in err
    assert code == 1, err
    doc = json.loads(out)
    added = [f for f in doc["findings_added"] if f["rule"] == "VRL102"]
    assert [(f["file"], f["line"], f["level"]) for f in added] == [(".vramlint.yaml", 2, "error")], added
    assert "NoSuchGPU-9000" in added[0]["message"]


def test_a_broken_configuration_named_with_config_stays_a_usage_error(repo, capsys):
    (repo / "cfg.yaml").write_text("gpu: [unclosed\n")
    code, _, err = run_diff(capsys, "HEAD", "--config", "cfg.yaml")
    assert code == 2 and "cfg.yaml" in err and "Traceback" not in err


V1_FP8 = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: fp8
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.1
          args: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--kv-cache-dtype", "fp8"]
          env:
            - name: VLLM_USE_V1
              value: "{v1}"
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def test_verdict_is_vrl005s_where_the_gpu_is_not_named(tmp_path, monkeypatch, capsys):
    """The GPU is not named, so there is no budget; VLLM_USE_V1=1 with an fp8 KV cache on 0.8.1 is refused on
    every GPU (NotImplementedError). `diff` says "will not start" because VRL005 does, as `explain` does."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "fp8.yaml").write_text(V1_FP8.format(v1="0"))
    commit_all(repo, "base")
    (repo / "fp8.yaml").write_text(V1_FP8.format(v1="1"))
    monkeypatch.chdir(repo)
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)
    fp8 = by_name(diff_json(capsys, "main"))["fp8"]
    assert (fp8["before"]["verdict"], fp8["after"]["verdict"]) == ("unknown", "will not start")
    assert main(["explain", "fp8.yaml", "--offline", "--format", "json"]) in (0, 1)
    explained = json.loads(capsys.readouterr().out)["servers"][0]["verdict"]
    assert explained["starts"] is False and explained["refusals"][0]["level"] == "error"


def test_refusal_of_an_assumed_version_is_not_a_verdict(tmp_path, monkeypatch, capsys):
    """The image does not say its vLLM version, so `--dtype float8` is checked against the newest release, and
    VRL005 says so as a warning: `diff` says "starts" with it, as `check` and `explain` do, not "will not start"."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    custom = deployment("custom", model="Qwen/Qwen2.5-0.5B-Instruct", extra_args=("--max-model-len", "4096")).replace(
        "vllm/vllm-openai:v0.10.1", "registry.example.com/team/vllm:custom")
    (repo / "custom.yaml").write_text(custom)
    commit_all(repo, "base")
    (repo / "custom.yaml").write_text(custom.replace('"4096"', '"4096"\n            - "--dtype"\n            - "float8"'))
    monkeypatch.chdir(repo)
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)
    entry = by_name(diff_json(capsys, "main"))["custom"]
    assert [f["level"] for f in entry["findings_added"] if f["rule"] == "VRL005"] == ["warning"]
    assert (entry["before"]["verdict"], entry["after"]["verdict"]) == ("starts", "starts"), entry
