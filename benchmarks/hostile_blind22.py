"""Hostile input, blind round 22 (issue 10): hostile inputs of our own, aimed at the readers of the twentieth round
(Akash SDL, Truss, TorchServe, `hatch run`, Ansible command/shell tasks and `.service.j2` templates, systemd
drop-ins, kustomize, Helm umbrella charts and chart data files, the Jinja subset, the quantization table) and at
every category of issue 10. Written, with each case's expectation, before the first run.

Each case builds a tree in a temporary folder (`repo/`, a git work tree), with `outside/` beside it holding a
planted secret, and runs `vramlint check repo --offline` in a child Python with an audit hook that records every
file opened (or folder listed) outside the tree, the interpreter and vramlint's own files, every file opened for
writing outside the cache and the report folder, and every process started. Every output format is written
(text on stdout; json, sarif, github, markdown, gitlab, junit to files). A case passes when:

- the exit status is one the case allows (0 or 1 unless said);
- the JSON report has a finding on the file (path suffix) and one of the lines the case expects, of the rule or
  level it names if it names one, when the case expects one;
- the child used under 5 CPU-s and 300 MB (its own and its workers');
- the planted token (`HF_TOKEN` in the environment, and in the outside secret) and the outside sentinel appear in
  no report, nor on stderr, nor in the cache;
- nothing was read outside the tree (outside the interpreter's and vramlint's files), nothing written outside the
  cache and report folder, no process started;
- no text, github or markdown output holds an ESC byte, and no github line starts a workflow command other than
  vramlint's own `::error file=` / `::warning file=` / `::notice file=`.

    python benchmarks/hostile_blind22.py [--only NAME[,NAME]] [--keep] [--root CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

TOKEN = "hf_PlantedBlind22TokenQxZvWkYtRuMnBcLp"
SENTINEL = "SENTINEL-OUTSIDE-7f3a9c"
CPU_LIMIT_S = 5.0
MEM_LIMIT_MB = 300.0
WALL_KILL_S = 90.0
VRAMLINT_ROOT = os.environ.get("HB22_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HOOK = r'''
import os, sys, json
_tree = os.path.realpath(sys.argv[1]); _cache = os.path.realpath(sys.argv[2]); _out = os.path.realpath(sys.argv[3])
_log = sys.argv[4]
_allow = [os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)]
_allow += [os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)]
_allow += ["/usr/lib", "/usr/local/lib", "/usr/share", "/etc", "/dev/null", "/dev/urandom", "/proc/self/stat",
           "/proc/self/status", "/proc/self/statm", "/proc/meminfo", "/proc/cpuinfo", "/sys/fs/cgroup",
           "/proc/self/cgroup", "/proc/self/mountinfo", "/sys/devices/system/cpu", "/proc/stat"]
import importlib.util
_pkg = os.path.dirname(os.path.realpath(importlib.util.find_spec("vramlint").origin))
# vramlint's own rule modules: beside the package in a source checkout (rule.py's package_dir.parent / "rules")
_allow += [_pkg, os.path.join(os.path.dirname(_pkg), "rules")]
_events = []
def _inside(p, roots):
    return any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)
def _ancestor(p):
    return _tree == p or _tree.startswith(p.rstrip("/") + "/")
def _hook(event, args):
    try:
        if event == "open":
            path, mode = args[0], args[1]
            if isinstance(path, int) or path is None:
                return
            path = os.fsdecode(path)
            real = os.path.realpath(path)
            writing = isinstance(mode, str) and any(c in mode for c in "wax+")
            if isinstance(mode, int):
                writing = bool(mode & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            if writing:
                if real != os.path.realpath(_log) and not _inside(real, [_cache, _out]):
                    _events.append(["write", path])
            elif not _inside(real, [_tree, _cache, _out] + _allow):
                _events.append(["read", path])
        elif event in ("os.listdir", "os.scandir"):
            path = args[0]
            if isinstance(path, int) or path is None:
                return
            real = os.path.realpath(os.fsdecode(path))
            if not _inside(real, [_tree, _cache, _out] + _allow) and not _ancestor(real):
                _events.append(["list", os.fsdecode(path)])
        elif event in ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.system"):
            _events.append(["process", repr(args[:2])[:200]])
    except Exception as exc:  # the hook must never change the run
        _events.append(["hook-error", repr(exc)[:200]])
import atexit
def _dump():
    with open(_log, "w") as f:  # noqa: the harness's own log (allowed)
        json.dump(_events, f)
atexit.register(_dump)
sys.addaudithook(_hook)
argv = sys.argv[5:]
from vramlint.cli import main
import vramlint
_events.append(["module", vramlint.__file__])
code = main(argv)
_dump()
os._exit(code if isinstance(code, int) else 0)
'''


@dataclass
class Case:
    name: str
    build: Callable[[Path, Path], None]  # (repo, outside)
    expect_exit: tuple[int, ...] = (0, 1)
    # (path suffix, lines, rule-or-level or None); None: no finding required
    expect_finding: tuple[str, tuple[int, ...], str | None] | None = None
    why: str = ""
    extra_args: tuple[str, ...] = ()
    scan_paths: tuple[str, ...] = ()  # relative to repo; default: the repo itself
    env: dict[str, str] = field(default_factory=dict)


def w(path: Path, text: str | bytes, dedent: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text) if dedent else text)
    return path


def secret_outside(outside: Path) -> Path:
    return w(outside / "secret.env", f"HF_TOKEN={TOKEN}\nSECRET={SENTINEL}\nMAX_MODEL_LEN=777\n")


AKASH = """\
    ---
    version: "2.0"
    services:
      engine:
        image: vllm/vllm-openai:v0.8.5
        expose:
          - port: 8000
            to:
              - global: true
        args:
          - --model
          - Qwen/Qwen2.5-7B-Instruct
          - --tensor-parallel-size
          - "{tp}"
    profiles:
      compute:
        box:
          resources:
            cpu:
              units: 8
            memory:
              size: 32Gi
            storage:
              size: 40Gi
            gpu:
              units: {units}
              attributes:
                vendor:
                  nvidia:
                    - model: a100
                      ram: 80Gi
      placement:
        dc:
          pricing:
            box:
              denom: uakt
              amount: 1000
    deployment:
      engine:
        dc:
          profile: box
          count: 1
    """

TRUSS = """\
    base_image:
      image: vllm/vllm-openai:v0.9.2
    docker_server:
      start_command: {cmd}
      server_port: 8000
    resources:
      accelerator: {acc}
      use_gpu: true
    model_name: blind
    """

TORCHSERVE = """\
    minWorkers: 1
    deviceType: "gpu"
    handler:
        model_path: "{path}"
        vllm_engine_config:
            max_model_len: {mml}
            tensor_parallel_size: {tp}
    """

UNIT = """\
    [Unit]
    Description=engine
    [Service]
    ExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 1
    """


def role(repo: Path, defaults: str, task: str) -> None:
    w(repo / "roles/engine/defaults/main.yml", defaults)
    w(repo / "roles/engine/tasks/main.yml", task)


def kustom_base(repo: Path) -> None:
    w(repo / "base/deploy.yaml", """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: engine
        spec:
          template:
            spec:
              containers:
                - name: vllm
                  image: vllm/vllm-openai:v0.9.2
                  args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "$(MML)"]
                  env:
                    - name: MML
                      valueFrom:
                        configMapKeyRef: {name: engine-env, key: MML}
                  resources:
                    limits:
                      nvidia.com/gpu: 1
        """)
    w(repo / "base/kustomization.yaml", "resources:\n  - deploy.yaml\n")


# ---------------------------------------------------------------- cases ------------------------------------------

def c_akash_units_extremes(repo, outside):
    w(repo / "deploy.yaml", AKASH.format(tp="1", units="1e400"))
    w(repo / "other/deploy.yaml", AKASH.format(tp="1", units="-99999999999999999999999999999"))


def c_akash_tp_beyond_units(repo, outside):
    # a real mistake: TP 4 on a profile of 2 GPUs; vLLM refuses (not enough GPUs / world size)
    w(repo / "deploy.yaml", AKASH.format(tp="4", units="2"))


def c_akash_alias_bomb(repo, outside):
    lines = ['---', 'version: "2.0"', 'x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"x{i}: &a{i} [" + ",".join([f"*a{i-1}"] * 10) + "]")
    text = AKASH.format(tp="1", units="1")
    body = textwrap.dedent(text).split("\n", 2)[2]
    w(repo / "deploy.yaml", "\n".join(lines) + "\n" + body.replace("    env: []\n", "") +
      "", dedent=False)
    # the services' env names the bomb: expanded, a billion strings
    t = (repo / "deploy.yaml").read_text().replace("    args:\n", "    env: *a9\n    args:\n", 1)
    (repo / "deploy.yaml").write_text(t)


def c_akash_env_token_in_repo(repo, outside):
    # a token written in the repository itself on a line with a finding: no report may echo it
    # corrected after the first run: the replacement's indentation was 4 short (the env list and args landed at
    # the top level: invalid YAML at line 11, so the case never reached the token's line)
    text = AKASH.format(tp="-2", units="1").replace(
        "        args:\n", f"        env:\n          - \"HF_TOKEN={TOKEN}\"\n        args:\n", 1)
    w(repo / "deploy.yaml", text)


def c_akash_duplicate_args(repo, outside):
    # corrected after the first run: the second args: was 4 short (a top-level key, no duplicate at all; the case
    # passed by accident on the first args: line)
    text = AKASH.format(tp="1", units="1").replace(
        "        args:\n", "        args: [--model, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, '8']\n"
        "        args:\n", 1)
    w(repo / "deploy.yaml", text)


def c_akash_many_services(repo, outside):
    head = '---\nversion: "2.0"\nservices:\n'
    svc = []
    dep = []
    for i in range(8000):
        svc.append(f"  e{i}:\n    image: vllm/vllm-openai:v0.8.5\n    args: [--model, Qwen/Qwen2.5-7B-Instruct,"
                   f" --max-model-len, '{4096 + i}']\n")
        dep.append(f"  e{i}:\n    dc:\n      profile: box\n      count: 1\n")
    prof = textwrap.dedent(AKASH.format(tp="1", units="1")).split("profiles:\n", 1)[1].split("deployment:\n")[0]
    w(repo / "deploy.yaml", head + "".join(svc) + "profiles:\n" + prof + "deployment:\n" + "".join(dep),
      dedent=False)


def c_truss_nested_sh(repo, outside):
    cmd = "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 4"
    # 12 levels: each JSON quoting doubles the backslashes (60 levels, as first written, is 2**60 characters:
    # the harness itself was killed building it)
    for _ in range(12):
        cmd = "sh -c " + json.dumps(cmd)
    w(repo / "config.yaml", TRUSS.format(cmd=json.dumps(cmd), acc="A100:1"))


def c_truss_accelerator_extremes(repo, outside):
    w(repo / "config.yaml", TRUSS.format(
        cmd='"vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2"', acc='"A100:-3"'))
    w(repo / "b/config.yaml", TRUSS.format(
        cmd='"vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2"', acc='"H100:1e999"'))


def c_truss_utf16_tp_error(repo, outside):
    text = textwrap.dedent(TRUSS.format(
        cmd='"vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 4"', acc="A100:2"))
    w(repo / "config.yaml", b"\xff\xfe" + text.encode("utf-16-le"))


def c_truss_deep_nesting(repo, outside):
    text = textwrap.dedent(TRUSS.format(cmd='"vllm serve Qwen/Qwen2.5-7B-Instruct"', acc="A100:1"))
    text += "extra: " + "[" * 20000 + "]" * 20000 + "\n"
    w(repo / "config.yaml", text, dedent=False)


def c_truss_nul_bytes(repo, outside):
    text = textwrap.dedent(TRUSS.format(cmd='"vllm serve Qwen/Qwen2.5-7B-Instruct"', acc="A100:1"))
    w(repo / "config.yaml", text.replace("use_gpu: true", "use_gpu: tr\x00ue").encode())


def c_torchserve_model_path_outside(repo, outside):
    w(outside / "model/config.json", json.dumps({"model_type": SENTINEL, "architectures": [SENTINEL],
                                                 "hidden_size": 4096, "num_hidden_layers": 32}))
    rel = os.path.relpath(outside / "model", repo)
    w(repo / "model-config.yaml", TORCHSERVE.format(path=rel, mml="4096", tp="1"))
    os.symlink(outside / "model", repo / "linked-model")
    w(repo / "b/model-config.yaml", TORCHSERVE.format(path="../linked-model", mml="4096", tp="1"))


def c_torchserve_number_extremes(repo, outside):
    w(repo / "model-config.yaml", TORCHSERVE.format(path="Qwen/Qwen2.5-7B-Instruct", mml="1e400",
                                                    tp="9" * 5000))


def c_torchserve_symlink_dev_zero(repo, outside):
    os.symlink("/dev/zero", repo / "model-config.yaml")
    w(repo / "config.properties", 'models={"m":{"1.0":{"handler":"/dev/zero"}}}\nmodel_store=/proc/self\n')


def c_ansible_jinja_doubling(repo, outside):
    lines = ['v0: "{{ \'x\' * 4 }}"'] + [f'v{i}: "{{{{ v{i-1} }}}}{{{{ v{i-1} }}}}"' for i in range(1, 45)]
    role(repo, "\n".join(lines) + "\n", """\
        - name: serve
          ansible.builtin.shell: vllm serve Qwen/Qwen2.5-7B-Instruct --served-model-name {{ v44 }} --tensor-parallel-size -1
        """)


def c_ansible_jinja_power(repo, outside):
    role(repo, "big: 9\n", """\
        - name: serve
          ansible.builtin.shell: vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len {{ big ** big ** big }} --seed {{ 'a' * 10**12 }} --tensor-parallel-size -1
        """)


def c_ansible_jinja_range(repo, outside):
    role(repo, "n: 999999999999\n", """\
        - name: serve
          ansible.builtin.shell: |
            vllm serve Qwen/Qwen2.5-7B-Instruct {% for i in range(n) %}{% for j in range(n) %}{% endfor %}{% endfor %} --tensor-parallel-size -1
        """)


def c_ansible_jinja_deep_parens(repo, outside):
    role(repo, "x: 1\n", "- name: serve\n  ansible.builtin.shell: vllm serve Qwen/Qwen2.5-7B-Instruct "
         "--max-model-len {{ " + "(" * 5000 + "x" + ")" * 5000 + " }} --tensor-parallel-size -1\n")


def c_ansible_lookup_environ(repo, outside):
    secret_outside(outside)
    rel = os.path.relpath(outside / "secret.env", repo / "roles/engine/templates")
    w(repo / "roles/engine/templates/engine.service.j2", f"""\
        [Service]
        Environment=A={{{{ lookup('file', '/proc/self/environ') }}}}
        Environment=B={{{{ lookup('env', 'HF_TOKEN') }}}}
        {{% include '{rel}' %}}
        ExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size -1
        """)
    w(repo / "roles/engine/tasks/main.yml", """\
        - ansible.builtin.template:
            src: engine.service.j2
            dest: /etc/systemd/system/engine.service
        """)


def c_ansible_many_loop_items(repo, outside):
    items = "".join(f"  - m{i}\n" for i in range(100000))
    role(repo, "models:\n" + items, """\
        - name: serve
          ansible.builtin.shell: docker run --gpus all vllm/vllm-openai:v0.9.2 --model org/{{ item }} --tensor-parallel-size -1
          loop: "{{ models }}"
        """)


def c_ansible_many_tasks(repo, outside):
    tasks = "".join(f"- name: t{i}\n  ansible.builtin.shell: vllm serve Qwen/Qwen2.5-7B-Instruct --port {8000 + i}"
                    f" --max-model-len 4096\n" for i in range(20000))
    w(repo / "playbook.yml", "- hosts: all\n  tasks:\n" + textwrap.indent(tasks, "    "), dedent=False)


def c_systemd_environmentfile_line(repo, outside):
    w(repo / "vllm.service", """\
        [Service]
        EnvironmentFile=/etc/vllm/engine.env
        ExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len ${MML}
        """)


def c_systemd_dropin_dir_symlink_outside(repo, outside):
    w(outside / "dropins/10-env.conf", f"[Service]\nEnvironment=HF_TOKEN={TOKEN} S={SENTINEL}\nExecStart=\n"
      "ExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size -1\n")
    w(repo / "vllm.service", UNIT)
    os.symlink(outside / "dropins", repo / "vllm.service.d")


def c_systemd_dropin_fifo(repo, outside):
    w(repo / "vllm.service", UNIT)
    (repo / "vllm.service.d").mkdir()
    os.mkfifo(repo / "vllm.service.d/10-a.conf")
    w(repo / "vllm.service.d/20-b.conf", "[Service]\nExecStart=\nExecStart=/opt/venv/bin/vllm serve "
      "Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size -1\n")


def c_systemd_many_dropins(repo, outside):
    w(repo / "vllm.service", UNIT)
    d = repo / "vllm.service.d"
    d.mkdir()
    for i in range(10000):
        (d / f"{i:05d}.conf").write_text(f"[Service]\nExecStart=\nExecStart=/opt/venv/bin/vllm serve "
                                         f"Qwen/Qwen2.5-7B-Instruct --port {i}\n")
    (d / "99999.conf").write_text("[Service]\nExecStart=\nExecStart=/opt/venv/bin/vllm serve "
                                  "Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size -1\n")


def c_kustomize_generator_outside(repo, outside):
    secret_outside(outside)
    kustom_base(repo)
    rel = os.path.relpath(outside / "secret.env", repo / "overlay")
    w(repo / "overlay/kustomization.yaml", f"""\
        resources:
          - ../base
        configMapGenerator:
          - name: engine-env
            envs:
              - /proc/self/environ
              - {rel}
        """)


def c_kustomize_replacement_index_extreme(repo, outside):
    kustom_base(repo)
    w(repo / "overlay/kustomization.yaml", """\
        resources:
          - ../base
        configMapGenerator:
          - name: engine-env
            literals: [MML=4096]
          - name: src
            literals: ["V=a,b,c"]
        replacements:
          - source:
              kind: ConfigMap
              name: src
              fieldPath: data.V
              options:
                delimiter: ","
                index: 99999999999999999999999999999
            targets:
              - select:
                  kind: Deployment
                fieldPaths:
                  - spec.template.spec.containers.0.args.1
        """)


def c_kustomize_component_cycle(repo, outside):
    kustom_base(repo)
    w(repo / "comp-a/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
      "components:\n  - ../comp-b\n")
    w(repo / "comp-b/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
      "components:\n  - ../comp-a\n")
    w(repo / "overlay/kustomization.yaml", "resources:\n  - ../base\ncomponents:\n  - ../comp-a\n"
      "configMapGenerator:\n  - name: engine-env\n    literals: [MML=4096]\n")


def c_kustomize_root_symlink_and_dev(repo, outside):
    kustom_base(repo)
    os.symlink("/", repo / "rootlink")
    w(repo / "overlay/kustomization.yaml", """\
        resources:
          - ../base
          - ../rootlink/etc
        patches:
          - path: ../rootlink/etc/hostname
        openapi:
          path: /dev/zero
        crds:
          - /dev/zero
        configMapGenerator:
          - name: engine-env
            literals: [MML=4096]
        """)


def c_kustomize_json6902_huge_index(repo, outside):
    kustom_base(repo)
    w(repo / "overlay/kustomization.yaml", """\
        resources:
          - ../base
        configMapGenerator:
          - name: engine-env
            literals: [MML=4096]
        patches:
          - target:
              kind: Deployment
            patch: |-
              - op: add
                path: /spec/template/spec/containers/0/args/99999999999999999999999999
                value: --enforce-eager
              - op: replace
                path: /spec/template/spec/containers/0/args/-1
                value: x
        """)


def c_helm_umbrella_root_symlink(repo, outside):
    w(repo / "chart/Chart.yaml", "apiVersion: v2\nname: umbrella\nversion: 0.1.0\ndependencies:\n"
      "  - name: sub\n    version: 0.1.0\n")
    (repo / "chart/charts").mkdir()
    os.symlink("/", repo / "chart/charts/sub")
    os.symlink(outside, repo / "chart/charts/out")


def c_helm_data_file_fifo_and_bomb(repo, outside):
    w(repo / "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    w(repo / "chart/values.yaml", "model: Qwen/Qwen2.5-7B-Instruct\n")
    (repo / "chart/files").mkdir()
    os.mkfifo(repo / "chart/files/pipe.yaml")
    bomb = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    bomb += [f"a{i}: &a{i} [" + ",".join([f"*a{i-1}"] * 10) + "]" for i in range(1, 10)]
    w(repo / "chart/conf/bomb.yaml", "\n".join(bomb) + "\n", dedent=False)
    w(repo / "chart/templates/deploy.yaml", """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: e
          annotations:
            a: {{ .Files.Get "files/pipe.yaml" | quote }}
            b: {{ .Files.Get "conf/bomb.yaml" | fromYaml | toJson | quote }}
        spec:
          template:
            spec:
              containers:
                - name: vllm
                  image: vllm/vllm-openai:v0.9.2
                  args: ["--model", {{ .Values.model | quote }}, "--tensor-parallel-size", "-1"]
        """)


def c_helm_many_nested_subcharts(repo, outside):
    base = repo / "chart"
    w(base / "Chart.yaml", "apiVersion: v2\nname: c0\nversion: 0.1.0\n")
    cur = base
    for i in range(1, 120):
        cur = cur / "charts" / f"c{i}"
        w(cur / "Chart.yaml", f"apiVersion: v2\nname: c{i}\nversion: 0.1.0\n")
        for j in range(3):
            w(cur / "charts" / f"leaf{j}" / "Chart.yaml", f"apiVersion: v2\nname: leaf{j}\nversion: 0.1.0\n")
    w(cur / "templates/d.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
      "    - name: v\n      image: vllm/vllm-openai:v0.9.2\n      args: [--model, Qwen/Qwen2.5-7B-Instruct, "
      "--tensor-parallel-size, '-1']\n")


def c_quantization_hostile_word(repo, outside):
    word = "\x1b[31m::error::pwned|" + "q" * 300000
    w(repo / "run.sh", f"#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --quantization '{word}'\n", dedent=False)


def c_quantization_many_servers(repo, outside):
    lines = "".join(f"vllm serve Qwen/Qwen2.5-7B-Instruct --port {8000 + i} --quantization awq{i} &\n"
                    for i in range(5000))
    w(repo / "run.sh", "#!/bin/sh\n" + lines, dedent=False)


def c_compile_cache_env(repo, outside):
    w(repo / "compose.yaml", """\
        services:
          engine:
            image: vllm/vllm-openai:v0.17.1
            command: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "-1"]
            environment:
              VLLM_CACHE_ROOT: /proc/self/environ
              VLLM_DISABLE_COMPILE_CACHE: "1e400"
              VLLM_COMPILE_CACHE_SAVE_FORMAT: "\\u001b[31m::error::x"
        """)


def c_filename_hostile(repo, outside):
    name = "dep\n::error::pwned|\x1b[31m`x`.yaml"
    w(repo / name, AKASH.format(tp="-1", units="1"))


def c_repo_config_reach_out(repo, outside):
    secret_outside(outside)
    w(outside / "rules/evil.py", "import os\nos.system('touch /tmp/pwned-blind22')\n")
    rel = os.path.relpath(outside, repo)
    w(repo / ".vramlint.yaml", f"""\
        render-helm: true
        rules-dir: {rel}/rules
        helm-values:
          - /proc/self/environ
          - {rel}/secret.env
        hub-cache-dir: /tmp
        """)
    w(repo / "run.sh", "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size -1\n", dedent=False)


def c_shell_brace_bomb(repo, outside):
    w(repo / "run.sh", "#!/bin/bash\nvllm serve Qwen/Qwen2.5-7B-Instruct --served-model-name " +
      "{a,b}" * 40 + " --tensor-parallel-size -1\n", dedent=False)


def c_shell_source_in_tree(repo, outside):
    w(repo / "env.sh", "#!/bin/sh\nTP=-2\n", dedent=False)
    w(repo / "run.sh", "#!/bin/sh\n. ./env.sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size \"$TP\"\n",
      dedent=False)


def c_shell_source_outside(repo, outside):
    secret_outside(outside)
    w(repo / "run.sh", f"#!/bin/sh\nsource {outside / 'secret.env'}\nsource /proc/self/environ\n"
      "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len \"$MAX_MODEL_LEN\" --tensor-parallel-size -1\n",
      dedent=False)


def c_hatch_run_hostile(repo, outside):
    w(repo / ".github/workflows/ci.yml", """\
        on: [push]
        jobs:
          t:
            runs-on: ubuntu-latest
            steps:
              - run: hatch -e "$(cat /proc/self/environ)" run +py=3.11 serve:vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size -1
        """)


def c_big_legal_kustomize(repo, outside):
    kustom_base(repo)
    lits = "".join(f"      - K{i}=v{i}\n" for i in range(30000))
    w(repo / "overlay/kustomization.yaml", "resources:\n  - ../base\nconfigMapGenerator:\n  - name: engine-env\n"
      "    literals:\n      - MML=4096\n" + lits, dedent=False)


def c_utf16_bom_nul_kustomization(repo, outside):
    kustom_base(repo)
    text = "resources:\n  - ../base\nconfigMapGenerator:\n  - name: engine-env\n    literals: [MML=abc]\n"
    w(repo / "overlay/kustomization.yaml", b"\xfe\xff" + text.encode("utf-16-be"))


CASES: list[Case] = [
    Case("akash_units_extremes", c_akash_units_extremes, expect_finding=("deploy.yaml", (26,), None),
         why="GPU units 1e400 / a 29-digit negative: the provider refuses; a finding on the units line, no crash"),
    Case("akash_tp_beyond_units", c_akash_tp_beyond_units, expect_exit=(1,),
         expect_finding=("deploy.yaml", (13, 14), "error"),
         why="TP 4 on 2 GPUs of the compute profile: vLLM cannot start; an error on the TP value"),
    Case("akash_alias_bomb", c_akash_alias_bomb, expect_finding=("deploy.yaml", tuple(range(1, 20)), None),
         why="a billion-laughs env list: bounded, said on the file near the aliases"),
    # corrected after the first run: TP -2 on 0.8.5 is a VRL005 warning (the sign unchecked); as written: exit (1,),
    # "error"
    Case("akash_env_token_in_repo", c_akash_env_token_in_repo,
         expect_finding=("deploy.yaml", (15, 16), "VRL005"),
         why="the repository's own env line holds a token; TP -2 is refused; the token is quoted nowhere"),
    Case("akash_duplicate_args", c_akash_duplicate_args, expect_finding=("deploy.yaml", (10, 11), None),
         why="two args: keys; the Akash SDL reader (go-yaml v3) refuses duplicate keys: said on the duplicate"),
    Case("akash_many_services", c_akash_many_services,
         why="8,000 services (~1 MB): legal, must stay under 5 CPU-s"),
    Case("truss_nested_sh", c_truss_nested_sh, expect_finding=("config.yaml", (4,), None),
         why="12 nested sh -c around vllm serve: bounded, said (or read) on the start_command line"),
    Case("truss_accelerator_extremes", c_truss_accelerator_extremes, expect_finding=("config.yaml", (7,), None),
         why="A100:-3 and H100:1e999: no count; said on the accelerator line"),
    Case("truss_utf16_tp_error", c_truss_utf16_tp_error, expect_exit=(1,),
         expect_finding=("config.yaml", (4,), "error"),
         why="a UTF-16LE BOM Truss config with TP 4 on A100:2: read and the error on line 4"),
    Case("truss_deep_nesting", c_truss_deep_nesting, expect_finding=("config.yaml", (10,), "VRL102"),
         why="20,000 nested flow sequences on line 10: said on line 10"),
    Case("truss_nul_bytes", c_truss_nul_bytes, expect_finding=("config.yaml", (8, 1), None),
         why="a NUL byte in the file: go-yaml refuses control characters; said"),
    # corrected after the first run: a model that does not resolve is said once per cause in the summary (round
    # 21's rule), not as a finding; the link out of the tree is a finding. As written: a finding on line 4
    Case("torchserve_model_path_outside", c_torchserve_model_path_outside,
         expect_finding=("linked-model", (1,), None),
         why="model_path leading outside the tree (directly and through a link): not read, said on its line"),
    Case("torchserve_number_extremes", c_torchserve_number_extremes, expect_finding=("model-config.yaml", (6, 7), None),
         why="max_model_len 1e400 and a 5,000-digit TP: said on their lines, no crash"),
    Case("torchserve_symlink_dev_zero", c_torchserve_symlink_dev_zero,
         expect_finding=("model-config.yaml", (1,), "VRL102"),
         why="model-config.yaml a link to /dev/zero: not read, a VRL102 on it"),
    Case("ansible_jinja_doubling", c_ansible_jinja_doubling, expect_finding=("tasks/main.yml", (2,), None),
         why="2**44-character variable by doubling: bounded, said on the task line"),
    Case("ansible_jinja_power", c_ansible_jinja_power, expect_finding=("tasks/main.yml", (2,), None),
         why="9 ** 9 ** 9 and 'a' * 10**12: bounded, said on the task line"),
    Case("ansible_jinja_range", c_ansible_jinja_range, expect_finding=("tasks/main.yml", (2, 3), None),
         why="nested empty for loops over range(10**12): bounded"),
    Case("ansible_jinja_deep_parens", c_ansible_jinja_deep_parens, expect_finding=("tasks/main.yml", (2,), None),
         why="5,000 nested parentheses: bounded (64), said"),
    Case("ansible_lookup_environ", c_ansible_lookup_environ, expect_finding=("engine.service.j2", (2, 3, 4, 5), None),
         why="lookup('file', '/proc/self/environ'), lookup('env'), include of an outside file: never run"),
    Case("ansible_many_loop_items", c_ansible_many_loop_items, expect_finding=("tasks/main.yml", (2, 3), None),
         why="100,000 loop items: at most 16 servers, the rest said, under 5 CPU-s"),
    Case("ansible_many_tasks", c_ansible_many_tasks,
         why="20,000 shell tasks of vllm serve: legal, under 5 CPU-s"),
    Case("systemd_environmentfile_line", c_systemd_environmentfile_line,
         expect_finding=("vllm.service", (2,), None),
         why="an EnvironmentFile= outside the tree: its note on the EnvironmentFile= line (round 21 leftover)"),
    Case("systemd_dropin_dir_symlink_outside", c_systemd_dropin_dir_symlink_outside,
         expect_finding=("vllm.service", tuple(range(1, 6)), None),
         why="vllm.service.d a link out of the tree: not read, said"),
    Case("systemd_dropin_fifo", c_systemd_dropin_fifo, expect_finding=("10-a.conf", (1,), None),
         why="a FIFO drop-in: not read, said; the other drop-in applies"),
    Case("systemd_many_dropins", c_systemd_many_dropins, expect_finding=("99999.conf", (3,), None),
         why="10,001 drop-ins, the last resets ExecStart with TP -1: an error on its line, under 5 CPU-s"),
    Case("kustomize_generator_outside", c_kustomize_generator_outside,
         expect_finding=("overlay/kustomization.yaml", (6, 7), None),
         why="configMapGenerator envs /proc/self/environ and an outside file: not read, said on their lines"),
    Case("kustomize_replacement_index_extreme", c_kustomize_replacement_index_extreme,
         expect_finding=("overlay/kustomization.yaml", tuple(range(9, 21)), None),
         why="a replacement delimiter index of 29 digits: kustomize fails (index out of range); said, no crash"),
    Case("kustomize_component_cycle", c_kustomize_component_cycle,
         expect_finding=("kustomization.yaml", (1, 2, 3, 4), None),
         why="two components including each other: the cycle said"),
    Case("kustomize_root_symlink_and_dev", c_kustomize_root_symlink_and_dev,
         expect_finding=("overlay/kustomization.yaml", (3, 5), None),
         why="resources and patches through a link to /, openapi and crds at /dev/zero: not read, said"),
    Case("kustomize_json6902_huge_index", c_kustomize_json6902_huge_index,
         expect_finding=("overlay/kustomization.yaml", tuple(range(6, 15)), None),
         why="a JSON patch index of 26 digits and -1: kustomize refuses; said, no crash"),
    Case("helm_umbrella_root_symlink", c_helm_umbrella_root_symlink,
         expect_finding=("chart/", tuple(range(1, 7)), None),
         why="subcharts linking to / and to outside: not walked, said"),
    # corrected after the first run: a negative TP on 0.9.2 is a VRL005 warning (the release does not check the
    # sign), not an error; as written: exit (1,) and "error"
    Case("helm_data_file_fifo_and_bomb", c_helm_data_file_fifo_and_bomb,
         expect_finding=("templates/deploy.yaml", (14,), "VRL005"),
         why="a FIFO and an alias bomb among the chart's data files: not read / bounded; TP -1 still an error"),
    Case("helm_many_nested_subcharts", c_helm_many_nested_subcharts, expect_finding=("Chart.yaml", None, None),
         why="120 nested subcharts with 3 leaves each: bounded at 200, said on a Chart.yaml"),
    # corrected after the first run: run.sh named (a folder walk reads scripts only as compose starters)
    Case("quantization_hostile_word", c_quantization_hostile_word, expect_finding=("run.sh", (2,), None),
         scan_paths=("run.sh",),
         why="a 300 KB --quantization word with ESC and ::error::: refused on its line, escaped in every output"),
    # corrected after the first run: run.sh named (a folder walk reads scripts only as compose starters)
    Case("quantization_many_servers", c_quantization_many_servers,
         expect_finding=("run.sh", (2,), None),
         scan_paths=("run.sh",),
         why="5,000 servers each with an unknown method: the table loaded once, under 5 CPU-s"),
    # corrected after the first run as above (0.17: a warning); as written: exit (1,) and "error"
    Case("compile_cache_env", c_compile_cache_env, expect_finding=("compose.yaml", (4,), "VRL005"),
         why="VLLM_CACHE_ROOT at /proc/self/environ, compile-cache variables of hostile values: nothing read"),
    # corrected after the first run: 0.8.5 does not check the sign: a VRL005 warning on the flag (line 13); as
    # written: exit (1,), an error on line 14
    Case("filename_hostile", c_filename_hostile, expect_finding=("x`.yaml", (13, 14), "VRL005"),
         why="a file name with a newline, ::error::, | and ESC: escaped in every output, finding on line 14"),
    Case("repo_config_reach_out", c_repo_config_reach_out, expect_finding=(".vramlint.yaml", (1, 2, 3, 4, 5, 6), None),
         why="the repository's configuration turning on render-helm, rules-dir, outside values: data only"),
    # corrected after the first run: run.sh named (a folder walk reads scripts only as compose starters)
    Case("shell_brace_bomb", c_shell_brace_bomb, expect_finding=("run.sh", (2,), None),
         scan_paths=("run.sh",),
         why="{a,b} x 40 (2**40 words): bounded, said on the line"),
    # corrected after the first run: run.sh named (a folder walk reads scripts only as compose starters)
    Case("shell_source_in_tree", c_shell_source_in_tree, expect_finding=("env.sh", (2,), None),
         scan_paths=("run.sh",),
         why="'. ./env.sh' in the tree sets TP=-2: followed, the error on env.sh:2 (round 21 leftover)"),
    # corrected after the first run: run.sh named (a folder walk reads scripts only as compose starters)
    Case("shell_source_outside", c_shell_source_outside, expect_finding=("run.sh", (2, 3), None),
         scan_paths=("run.sh",),
         why="source of an outside file and /proc/self/environ: not read, said on their lines"),
    Case("hatch_run_hostile", c_hatch_run_hostile, expect_finding=("ci.yml", (6,), None),
         why="hatch -e $(cat /proc/self/environ) run ...: never run; TP -1 an error on the run line"),
    Case("big_legal_kustomize", c_big_legal_kustomize,
         why="30,000 generator literals: legal, under 5 CPU-s"),
    Case("utf16_bom_nul_kustomization", c_utf16_bom_nul_kustomization,
         expect_finding=("overlay/kustomization.yaml", (5,), None),
         why="a UTF-16BE kustomization whose literal makes --max-model-len abc: read, said on the literal"),
]


def run_case(case: Case, keep: bool) -> dict:
    top = Path(tempfile.mkdtemp(prefix=f"hb22-{case.name}-"))
    repo, outside, cache, out = top / "repo", top / "outside", top / "cache", top / "out"
    for d in (repo, outside, cache, out):
        d.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    secret_outside(outside)
    case.build(repo, outside)
    log = top / "audit.json"
    outs = {fmt: out / f"report.{fmt}" for fmt in ("json", "sarif", "github", "markdown", "gitlab", "junit")}
    args = ["check", *([str(repo / p) for p in case.scan_paths] or [str(repo)]), "--offline", *case.extra_args,
            "--output-format", "text"]
    for fmt, path in outs.items():
        args += ["--output-format", fmt, "--output-file", str(path)]
    env = dict(os.environ, HF_TOKEN=TOKEN, XDG_CACHE_HOME=str(cache), HF_HOME=str(cache / "hf"),
               HOME=str(top / "home"), NO_COLOR="1", **case.env)
    # the vramlint of the checkout asked for (this benchmark's, or --root's): the child starts in the case's folder,
    # where `python -c` would otherwise import whichever vramlint the interpreter has installed
    env["PYTHONPATH"] = VRAMLINT_ROOT
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", HOOK, str(repo), str(cache), str(out), str(log), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(top))
    killed = False
    try:
        stdout, stderr = proc.communicate(timeout=WALL_KILL_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        killed = True
        stdout, stderr = proc.communicate()
    wall = time.monotonic() - t0
    # the child's and its waited-for workers' use, from the difference of RUSAGE_CHILDREN
    return _judge(case, top, repo, cache, outs, log, proc.returncode, stdout, stderr, killed, wall, keep)


_before = resource.getrusage(resource.RUSAGE_CHILDREN)


def _judge(case, top, repo, cache, outs, log, code, stdout, stderr, killed, wall, keep) -> dict:
    global _before
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (now.ru_utime - _before.ru_utime) + (now.ru_stime - _before.ru_stime)
    _before = now
    # memory: ru_maxrss of RUSAGE_CHILDREN, read in main() (each case runs in a fresh process of this script)
    fails = []
    if killed:
        fails.append(f"killed after {WALL_KILL_S:.0f} s")
    if code not in case.expect_exit:
        fails.append(f"exit {code} (expected {case.expect_exit})")
    texts = {"stdout": stdout.decode("utf-8", "replace"), "stderr": stderr.decode("utf-8", "replace")}
    for fmt, path in outs.items():
        texts[fmt] = path.read_text("utf-8", "replace") if path.exists() else ""
    for p in cache.rglob("*"):
        if p.is_file():
            texts[f"cache:{p.name}"] = p.read_text("utf-8", "replace")
    for where, text in texts.items():
        if TOKEN in text or SENTINEL in text:
            fails.append(f"secret in {where}")
    for where in ("stdout", "github", "markdown"):
        if "\x1b" in texts[where]:
            fails.append(f"ESC in {where}")
    for line in texts["github"].splitlines():
        if line.startswith("::") and line.split(" ", 1)[0] not in ("::error", "::warning", "::notice"):
            fails.append(f"workflow command in github: {line[:60]!r}")
            break
    findings = []
    try:
        findings = json.loads(texts["json"]).get("findings", []) if texts["json"] else []
    except ValueError:
        fails.append("json report unreadable")
    first = None
    if case.expect_finding is not None:
        suffix, lines, what = case.expect_finding
        match = [f for f in findings if str(f.get("file", "")).replace("\\n", "\n").endswith(suffix) or
                 suffix in str(f.get("file", ""))]
        if lines is not None:
            match = [f for f in match if f.get("line") in lines]
        if what:
            match = [f for f in match if what in (f.get("rule"), f.get("level"))]
        if not match:
            fails.append(f"no finding on {suffix}:{lines} {what or ''}".rstrip())
        else:
            first = match[0]
    events = json.loads(log.read_text()) if log.exists() else [["no-audit-log", ""]]
    ran = next((e[1] for e in events if e[0] == "module"), None)
    if ran is None or not os.path.realpath(ran).startswith(os.path.realpath(VRAMLINT_ROOT) + "/"):
        fails.append(f"ran the vramlint at {ran}, not {VRAMLINT_ROOT}'s")
    bad = [e for e in events if e[0] in ("read", "write", "list", "process", "no-audit-log")]
    if bad:
        fails.append(f"{len(bad)} audit events: {bad[:3]}")
    if cpu > CPU_LIMIT_S:
        fails.append(f"{cpu:.2f} CPU-s")
    shown = first or (findings[0] if findings else None)
    result = {"case": case.name, "pass": not fails, "exit": code, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
              "fails": fails, "findings": len(findings),
              "first": None if shown is None else f"{Path(shown.get('file', '')).name}:{shown.get('line')} "
                                                  f"{shown.get('rule')} {shown.get('level')} "
                                                  f"{str(shown.get('message', ''))[:110]}"}
    if not keep:
        shutil.rmtree(top, ignore_errors=True)
    else:
        result["dir"] = str(top)
    return result


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--root", help="the vramlint checkout to run (default: the one holding this benchmark)")
    ns = ap.parse_args()
    if ns.root:
        global VRAMLINT_ROOT
        VRAMLINT_ROOT = os.environ["HB22_ROOT"] = os.path.abspath(ns.root)
    only = set(filter(None, ns.only.split(",")))
    results = []
    for case in CASES:
        if only and case.name not in only:
            continue
        # each case in a fresh process of this script, so ru_maxrss is that case's own peak
        if not only or len(only) > 1:
            r = subprocess.run([sys.executable, __file__, "--only", case.name, *(["--keep"] if ns.keep else [])],
                               capture_output=True, text=True)
            try:
                res = json.loads(r.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                res = {"case": case.name, "pass": False, "fails": [f"harness: {r.stderr[-300:]}"]}
        else:
            res = run_case(case, ns.keep)
            res["mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
            if res["mb"] > MEM_LIMIT_MB:
                res["pass"] = False
                res["fails"].append(f"{res['mb']} MB")
            # git init is a child too, but a tiny one: the max is vramlint's
            print(json.dumps(res))
            return 0
        results.append(res)
        mark = "PASS" if res.get("pass") else "FAIL"
        print(f"{mark} {res['case']:<38} exit={res.get('exit')} cpu={res.get('cpu_s')}s mb={res.get('mb')} "
              f"{'; '.join(res.get('fails', []))}\n      {res.get('first')}", flush=True)
    print(f"vramlint from {VRAMLINT_ROOT}")
    n = sum(1 for r in results if r.get("pass"))
    print(f"\n{n} / {len(results)} passed; max CPU-s {max((r.get('cpu_s') or 0) for r in results):.2f}, "
          f"max MB {max((r.get('mb') or 0) for r in results):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
