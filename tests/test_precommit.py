"""The pre-commit hook, run by the real pre-commit against a snapshot of this checkout.

pre-commit clones the hook repository at a commit and builds a virtual environment with `pip install .`
(the package index is used at that point only, as for any user). The snapshot is a throw-away git
repository holding the working tree as it is now, so the test covers uncommitted changes too. One
PRE_COMMIT_HOME per test session keeps the hook environment built once. vramlint itself runs with
HF_HUB_OFFLINE=1 and a Hub endpoint that refuses connections, on deployments of catalog models.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._check_util import concise_view

ROOT = Path(__file__).resolve().parent.parent

GIT_ENV = {
    "GIT_AUTHOR_NAME": "vramlint tests",
    "GIT_AUTHOR_EMAIL": "tests@vramlint.invalid",
    "GIT_COMMITTER_NAME": "vramlint tests",
    "GIT_COMMITTER_EMAIL": "tests@vramlint.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}

BAD_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-8b
spec:
  selector:
    matchLabels: {app: llama-8b}
  template:
    metadata:
      labels: {app: llama-8b}
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: g5.xlarge
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          args:
            - --model=meta-llama/Llama-3.1-8B-Instruct
            - --max-model-len=131072
          resources:
            limits:
              nvidia.com/gpu: "1"
"""
BAD_LINE = 19  # --max-model-len=131072

GOOD_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-3b
spec:
  selector:
    matchLabels: {app: llama-3b}
  template:
    metadata:
      labels: {app: llama-3b}
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.2
          args:
            - --model=meta-llama/Llama-3.2-3B-Instruct
            - --max-model-len=8192
            - --max-num-seqs=32
          resources:
            limits:
              nvidia.com/gpu: "1"
"""

COMPOSE_ALONE = """\
services:
  a:
    image: vllm/vllm-openai:v0.9.2
    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 8192 --gpu-memory-utilization 0.7
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]
  b:
    image: vllm/vllm-openai:v0.9.2
    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 8192 --gpu-memory-utilization 0.7
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]
"""

HELM_VALUES = """\
servingEngineSpec:
  modelSpec:
    - name: qwen
      repository: vllm/vllm-openai
      tag: v0.9.2
      modelURL: Qwen/Qwen2.5-7B-Instruct
      requestGPU: 1
      nodeSelectorTerms:
        - matchExpressions:
            - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L40S]}
      vllmConfig:
        maxModelLen: 16384
        tensorParallelSize: 2
"""
HELM_TP_LINE = 13
BASIC_CHART = ROOT / "tests" / "fixtures" / "helm" / "basic"  # Chart.yaml, values.yaml, templates/_helpers.tpl

CONFIGMAP_CONSUMER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
spec:
  selector:
    matchLabels: {app: qwen}
  template:
    metadata:
      labels: {app: qwen}
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.2
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--config", "/etc/vllm/config.yaml"]
          volumeMounts:
            - {name: vllm-config, mountPath: /etc/vllm}
          resources:
            limits:
              nvidia.com/gpu: "1"
      volumes:
        - name: vllm-config
          configMap:
            name: qwen-vllm-config
"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: qwen-vllm-config
data:
  config.yaml: |
    max-model-len: 8192
    gpu-memory-utilization: 0.9
"""


def _git(*args: str, cwd: Path) -> str:
    env = dict(os.environ, **GIT_ENV)
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory) -> tuple[Path, str]:
    """This checkout's working tree committed into a throw-away repository: (path, commit)."""
    dest = tmp_path_factory.mktemp("hook-repo") / "vramlint"
    ignore = shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache", ".venv", "benchmarks"
    )
    shutil.copytree(ROOT, dest, ignore=ignore)
    _git("init", "-q", "-b", "main", cwd=dest)
    _git("add", "-A", cwd=dest)
    _git("commit", "-q", "-m", "snapshot", cwd=dest)
    return dest, _git("rev-parse", "HEAD", cwd=dest)


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, **GIT_ENV)
    env.update(
        {
            "PRE_COMMIT_HOME": str(home),
            "HF_HUB_OFFLINE": "1",
            "HF_ENDPOINT": "http://127.0.0.1:9",  # discard port: any Hub request fails at once
            "NO_COLOR": "1",
            "PRE_COMMIT_COLOR": "never",
        }
    )
    env.pop("HF_TOKEN", None)
    return env


def _user_repo(path: Path, files: dict[str, str], config: str | None = None) -> Path:
    path.mkdir(parents=True)
    _git("init", "-q", "-b", "main", cwd=path)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text, encoding="utf-8")
    if config is not None:
        (path / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    _git("add", "-A", cwd=path)
    return path


def _pre_commit(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        env=_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="session")
def configured(hook_repo, pre_commit_home, tmp_path_factory):
    """A user repository whose .pre-commit-config.yaml points at the snapshot; runs `pre-commit run --files`."""
    repo_path, rev = hook_repo
    config = textwrap.dedent(
        f"""\
        repos:
          - repo: {repo_path}
            rev: {rev}
            hooks:
              - id: vramlint
        """
    )
    user = _user_repo(
        tmp_path_factory.mktemp("user") / "deployments",
        {
            "deploy/bad.yaml": BAD_DEPLOYMENT,
            "deploy/good.yaml": GOOD_DEPLOYMENT,
            "compose/compose.yaml": COMPOSE_ALONE,
            "chart/values.yaml": HELM_VALUES,
            **{f"basic/{p.relative_to(BASIC_CHART)}": p.read_text() for p in BASIC_CHART.rglob("*") if p.is_file()},
            "pyproject.toml": '[tool.vramlint]\nfail-on = "error"\n',
            "k8s/qwen.yaml": CONFIGMAP_CONSUMER,
            "k8s/qwen-config.yaml": CONFIGMAP,
            ".vramlint.yaml": 'overrides:\n  - files: ["compose/*.yaml"]\n    gpu: L4\n',
        },
        config,
    )

    def run(*files: str) -> subprocess.CompletedProcess:
        return _pre_commit(["run", "vramlint", "--files", *files], user, pre_commit_home)

    return run


def test_manifest_is_valid_for_pre_commit():
    from pre_commit.clientlib import load_manifest

    (hook,) = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "vramlint"
    assert hook["language"] == "python"
    assert hook["types"] == ["file"] and not hook["verbose"]
    files = re.compile(hook["files"])
    for name in ("deploy/x.yaml", "a.yml", "chart/templates/_helpers.tpl", "pyproject.toml", "sub/pyproject.toml",
                 ".vramlint.yaml", "main.yaml.j2"):
        assert files.search(name), name
    for name in ("README.md", "x.toml", "notpyproject.toml", "script.py"):
        assert not files.search(name), name
    assert hook["pass_filenames"] is True
    assert hook["require_serial"] is True
    assert hook["entry"].split()[0] == "vramlint"


def test_bad_deployment_fails_with_the_finding_on_its_line(configured):
    proc = configured("deploy/bad.yaml")
    out = concise_view(proc.stdout + proc.stderr)
    assert proc.returncode == 1, out
    assert "vramlint (vLLM GPU memory budget)" in out and "Failed" in out
    assert re.search(rf"^deploy/bad\.yaml:{BAD_LINE}:\d+: VRL005 \[error\]", out, re.M), out


def test_good_deployment_passes(configured):
    proc = configured("deploy/good.yaml")
    out = concise_view(proc.stdout + proc.stderr)
    assert proc.returncode == 0, out
    assert "Passed" in out
    # a passing commit prints the hook's status line only, no notes or summary
    assert "vramlint:" not in out and "Found " not in out and "No vLLM" not in out and "All checks" not in out, out


def test_a_chart_partial_or_the_configuration_alone_lints_what_it_governs(configured):
    partial = configured("basic/templates/_helpers.tpl")
    out = concise_view(partial.stdout + partial.stderr)
    # the chart is linted through its values and templates (alone, a partial holds no server)
    assert partial.returncode == 1, out
    assert re.search(r"^basic/values\.yaml:6:\d+: VRL005 \[error\]", out, re.M), out
    assert "in 2 servers, 5 files" in out, out
    config = configured("pyproject.toml")
    out = concise_view(config.stdout + config.stderr)
    assert config.returncode == 1, out  # its folder, the repository, is linted: the bad deployment fails
    assert re.search(rf"^deploy/bad\.yaml:{BAD_LINE}:\d+: VRL005 \[error\]", out, re.M), out


def test_a_compose_file_alone_is_linted_whole(configured):
    proc = configured("compose/compose.yaml")
    out = concise_view(proc.stdout + proc.stderr)
    assert re.search(r"^compose/compose\.yaml:\d+:\d+: VRL007 ", out, re.M), out


def test_a_helm_values_file_alone_is_linted(configured):
    proc = configured("chart/values.yaml")
    out = concise_view(proc.stdout + proc.stderr)
    assert proc.returncode == 1, out
    assert re.search(rf"^chart/values\.yaml:{HELM_TP_LINE}:\d+: VRL006 \[error\]", out, re.M), out


def test_a_manifest_without_its_configmap_gets_a_note_not_a_guess(configured):
    # the hook passes (a note): its output is seen with pre-commit's --verbose (or `verbose: true` in the config)
    alone = configured("k8s/qwen.yaml", "--verbose")
    out = concise_view(alone.stdout + alone.stderr)
    assert "qwen-vllm-config" in out or "config.yaml" in out, out
    assert re.search(r"^k8s/qwen\.yaml:\d+:\d+: VRL\d+ \[note\]", out, re.M), out
    together = configured("k8s/qwen.yaml", "k8s/qwen-config.yaml", "--verbose")
    both = concise_view(together.stdout + together.stderr)
    assert not re.search(r"^k8s/qwen\.yaml:\d+:\d+: VRL\d+ \[note\].*config", both, re.M), both


def test_try_repo_against_this_checkout(hook_repo, tmp_path):
    """`pre-commit try-repo` as the README suggests for trying the hook before pinning it."""
    repo_path, rev = hook_repo
    user = _user_repo(tmp_path / "deployments", {"deploy/bad.yaml": BAD_DEPLOYMENT, "deploy/good.yaml": GOOD_DEPLOYMENT})
    proc = _pre_commit(
        ["try-repo", str(repo_path), "vramlint", "--ref", rev, "--files", "deploy/bad.yaml", "deploy/good.yaml"],
        user,
        tmp_path / "home",
    )
    out = concise_view(proc.stdout + proc.stderr)
    assert proc.returncode == 1, out
    assert re.search(rf"^deploy/bad\.yaml:{BAD_LINE}:\d+: VRL005 \[error\]", out, re.M), out
    assert not re.search(r"^deploy/good\.yaml:\d+:\d+: VRL\d+ \[error\]", out, re.M), out
