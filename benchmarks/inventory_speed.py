"""Speed of `vramlint inventory` on a 10,000-file tree, against yamllint on the same tree.

    python3 benchmarks/inventory_speed.py [--files 10000] [--keep DIR]

Builds a temporary tree of YAML files, about 1% vLLM Deployments and the rest ordinary Kubernetes objects
and CI workflows, then times (wall clock, separate processes, as a user runs them):
  * `vramlint inventory TREE --format json` (files/second),
  * `yamllint -d relaxed TREE` on the same tree,
  * a single small file from process start to exit (median of several runs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

VLLM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm-{i}
spec:
  replicas: 1
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args:
            - --model
            - Qwen/Qwen2.5-1.5B-Instruct
            - --max-model-len
            - "{len}"
            - --gpu-memory-utilization
            - "0.9"
          resources:
            limits:
              nvidia.com/gpu: "1"
"""

WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i}
  labels:
    app: web-{i}
    tier: frontend
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web-{i}
  template:
    metadata:
      labels:
        app: web-{i}
    spec:
      containers:
        - name: web
          image: nginx:1.27
          ports:
            - containerPort: 80
          env:
            - name: MODE
              value: production
          resources:
            limits:
              cpu: 500m
              memory: 256Mi
---
apiVersion: v1
kind: Service
metadata:
  name: web-{i}
spec:
  selector:
    app: web-{i}
  ports:
    - port: 80
      targetPort: 80
"""

CI = """\
name: ci-{i}
on:
  push:
    branches: [main]
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.10", "3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{{{ matrix.python }}}}
      - run: pip install -e '.[test]'
      - run: pytest -q
"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-{i}
data:
  LOG_LEVEL: info
  FEATURE_FLAGS: "a,b,c"
  config.json: |
    {{"retries": 3, "timeout": 30}}
"""


def build_tree(root: str, n: int) -> int:
    vllm = 0
    for i in range(n):
        sub = os.path.join(root, f"team{i % 50:02d}", f"app{i % 7}")
        os.makedirs(sub, exist_ok=True)
        if i % 100 == 0:
            text, name = VLLM.format(i=i, len=4096 + i), f"llm-{i}.yaml"
            vllm += 1
        elif i % 3 == 0:
            text, name = CI.format(i=i), f"ci-{i}.yml"
        elif i % 3 == 1:
            text, name = WEB.format(i=i), f"web-{i}.yaml"
        else:
            text, name = CONFIGMAP.format(i=i), f"cm-{i}.yaml"
        with open(os.path.join(sub, name), "w") as fh:
            fh.write(text)
    return vllm


def timed(cmd: list[str], cwd: str, env: dict | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t0, proc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=7, help="runs for the single-file start-up median")
    ap.add_argument("--keep", help="build the tree here and keep it")
    opts = ap.parse_args()
    tmp = opts.keep or tempfile.mkdtemp(prefix="vramlint-speed-")
    tree = os.path.join(tmp, "tree")
    try:
        expected = build_tree(tree, opts.files)
        # An installed vramlint has its bytecode compiled at install time; from the source tree, let Python write
        # and reuse it too (an environment that sets PYTHONDONTWRITEBYTECODE would otherwise time the compiler).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = ROOT
        subprocess.run([sys.executable, "-m", "vramlint", "--version"], env=env, capture_output=True, check=True)
        vramlint = [sys.executable, "-m", "vramlint"]
        secs, proc = timed(vramlint + ["inventory", tree, "--format", "json"], tmp, env)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 2
        found = len(json.loads(proc.stdout)["servers"])
        print(f"tree: {opts.files} files, {expected} vLLM deployments")
        print(f"vramlint inventory: {secs:.2f} s, {opts.files / secs:,.0f} files/s, {found} servers found")
        yamllint = shutil.which("yamllint")
        if yamllint:
            ysecs, yproc = timed([yamllint, "-d", "relaxed", "-f", "parsable", tree], tmp)
            print(f"yamllint -d relaxed: {ysecs:.2f} s, {opts.files / ysecs:,.0f} files/s "
                  f"(exit {yproc.returncode}); vramlint is {ysecs / secs:.1f}x faster")
        else:
            print("yamllint: not installed (pip install '.[test]')")
        small = os.path.join(tree, "team00", "app0", "llm-0.yaml")
        times = []
        for _ in range(opts.runs):
            t, p = timed(vramlint + ["inventory", small, "--format", "json"], tmp, env)
            assert p.returncode == 0, p.stderr
            times.append(t)
        print(f"single small file, process start to exit: median {statistics.median(times) * 1000:.0f} ms "
              f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}, {opts.runs} runs)")
        base = []
        for _ in range(opts.runs):
            t, _p = timed([sys.executable, "-c", "pass"], tmp)
            base.append(t)
        print(f"  (python3 -c pass on this machine: median {statistics.median(base) * 1000:.0f} ms)")
    finally:
        if not opts.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
