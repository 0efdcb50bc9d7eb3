"""Time, CPU time and peak memory of `vramlint check . --offline` on large but legal inputs (issue 10: under 2 s each).

    python3 benchmarks/large_inputs.py [--case NAME ...] [--repeat N] [--json-dir DIR] [--profile DIR]

The inputs: 5 MB of Deployments (each a vLLM server with its own name and --max-model-len), 100,000 documents in
one file, 100,000 args in one Deployment, 5 MB of compose services (each with a GPU reservation) and 5 MB of KServe
InferenceServices (each with the vLLM runtime, a Hub model and a GPU), a production-stack values file of 20,000
models, and a vLLM config file of 100,000 unknown keys in a ConfigMap that a Deployment's --config names. Each case is written to its own folder and
checked in a fresh process (working directory: that folder; HOME and XDG_CACHE_HOME in a scratch folder, so no
earlier cache helps); printed per case: the file's size, the number of servers in the JSON report, the wall time
(what the 2 s are of: a large stream is read by every core), CPU seconds (user + system of that process and of
the workers it waited for, from wait4), peak resident memory (MB) and the exit status; with --repeat, the run of
the smallest wall time of N. Wall times depend on what else the machine runs: the load average is printed. --json-dir keeps each JSON report (DIR/NAME.json), to compare two versions' findings;
--profile writes a cProfile of each run (DIR/NAME.prof).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = 5_000_000
LIMIT_SECONDS = 2.0


def _deployment(i: int) -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm-{i}
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args:
            - "--model"
            - "Qwen/Qwen2.5-1.5B-Instruct"
            - "--max-model-len"
            - "{1024 + i % 4096}"
          resources:
            limits:
              nvidia.com/gpu: "1"
"""


def _service(i: int) -> str:
    return f"""\
  vllm-{i}:
    image: vllm/vllm-openai:v0.9.2
    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len {1024 + i % 4096} --port {8000 + i % 1000}
    environment:
      HF_TOKEN: ${{HF_TOKEN:-}}
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["{i % 8}"]
              capabilities: [gpu]
"""


def _isvc(i: int) -> str:
    return f"""\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: granite-{i}
spec:
  predictor:
    minReplicas: 1
    nodeSelector:
      nvidia.com/gpu.product: NVIDIA-L4
    model:
      modelFormat:
        name: huggingface
      args:
        - --model_name=granite-{i}
        - --max-model-len={1024 + i % 4096}
      storageUri: hf://Qwen/Qwen2.5-1.5B-Instruct
      resources:
        limits:
          nvidia.com/gpu: "1"
"""


def _fill(make, sep: str, target: int = TARGET) -> str:
    parts: list[str] = []
    size = i = 0
    while size < target:
        part = make(i)
        parts.append(part)
        size += len(part) + len(sep)
        i += 1
    return sep.join(parts)


def _args_100k() -> str:
    many = ["--model", "Qwen/Qwen2.5-1.5B-Instruct"] + [f"--served-model-name=n{i}" for i in range(100_000)]
    return _deployment(0).replace('            - "--model"\n            - "Qwen/Qwen2.5-1.5B-Instruct"\n',
                                  "".join(f"            - {json.dumps(a)}\n" for a in many))


def _values_models() -> str:
    # a production-stack values file whose modelSpec lists 20,000 models (2 MB)
    return "servingEngineSpec:\n  modelSpec:\n" + "".join(
        f"    - name: m{i}\n      modelURL: Qwen/Qwen2.5-1.5B-Instruct\n      requestGPU: 1\n      vllmConfig:\n"
        f"        maxModelLen: {1024 + i}\n" for i in range(20_000))


def _config_map_config() -> str:
    # a vLLM config file of 100,000 keys no release knows, in a ConfigMap a Deployment's --config names (1.8 MB)
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  config.yaml: |\n"
            "    model: Qwen/Qwen2.5-1.5B-Instruct\n" + "".join(f"    k{i}: {i}\n" for i in range(100_000))
            + "---\n" + _deployment(0).replace(
                '            - "--model"\n            - "Qwen/Qwen2.5-1.5B-Instruct"\n            - "--max-model-len"\n'
                '            - "1024"\n', '            - "--config"\n            - "/etc/cfg/config.yaml"\n')
            .replace("      containers:\n", "      volumes:\n        - name: c\n          configMap: {name: cfg}\n"
                     "      containers:\n")
            .replace("          resources:\n", "          volumeMounts:\n            - {name: c, mountPath: /etc/cfg}\n"
                     "          resources:\n"))


def cases() -> dict[str, tuple[str, Callable[[], str]]]:
    """Each case's one file: its name and a function that makes its text."""
    return {
        "manifests-5MB": ("deploy.yaml", lambda: _fill(_deployment, "---\n")),
        "documents-100k": ("docs.yaml", lambda: "vllm: 1\n" + "---\na: 1\n" * 100_000),
        "args-100k": ("deploy.yaml", _args_100k),
        "compose-5MB": ("compose.yaml", lambda: "services:\n" + _fill(_service, "")),
        # as many services as one YAML document may hold (vramlint reads no document of over 250,000 nodes)
        "compose-2.8MB": ("compose.yaml", lambda: "services:\n" + _fill(_service, "", 2_800_000)),
        "kserve-5MB": ("isvc.yaml", lambda: _fill(_isvc, "---\n")),
        "values-20k-models": ("values.yaml", _values_models),
        "configmap-100k-config-keys": ("deploy.yaml", _config_map_config),
    }


def write(name: str, folder: str) -> None:
    """Write case ``name`` into ``folder`` (run in its own process: see `main`)."""
    rel, make = cases()[name]
    with open(os.path.join(folder, rel), "w", encoding="utf-8") as fh:
        fh.write(make())


def run_one(folder: str, scratch: str, json_out: str, profile: str | None) -> tuple[float, float, int, float]:
    """(CPU seconds, peak MB, exit status, wall seconds) of one `vramlint check . --offline` process in ``folder``
    (CPU: user + system of it and of the workers it forked and waited for)."""
    env = dict(os.environ, PYTHONPATH=ROOT, HF_HUB_OFFLINE="1", HOME=scratch, XDG_CACHE_HOME=scratch)
    env.pop("HF_TOKEN", None)
    # an installed package has its bytecode cached: time that, not compiling every module on every run (as
    # speed_trees.py does; with PYTHONDONTWRITEBYTECODE set, a changed checkout was compiled again each run)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    head = [sys.executable]
    if profile:
        head += ["-m", "cProfile", "-o", profile]
    cmd = head + ["-m", "vramlint", "check", ".", "--offline", "--output-format", "json", "--output-file", json_out]
    with open(os.devnull, "wb") as null:
        began = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=null, stderr=null)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - began
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="run only these cases")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (the smallest CPU time is printed)")
    parser.add_argument("--json-dir", help="keep each JSON report as DIR/NAME.json")
    parser.add_argument("--profile", metavar="DIR", help="write a cProfile of each run as DIR/NAME.prof")
    parser.add_argument("--write", nargs=2, metavar=("NAME", "DIR"), help=argparse.SUPPRESS)
    parser.add_argument("--count", metavar="JSON", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        write(*args.write)
        return 0
    if args.count:
        try:
            with open(args.count, encoding="utf-8") as fh:
                report = json.load(fh)
            print(len(report.get("servers") or []), len(report.get("findings") or []))
        except (OSError, ValueError):
            print(-1, -1)
        return 0
    names = args.case or list(cases())
    base = tempfile.mkdtemp(prefix="vramlint-large-")
    within = 0
    try:
        for name in names:
            folder = os.path.join(base, name)
            os.makedirs(folder)
            # written by another process: a child's peak RSS starts from its parent's size when it forks, and
            # this process stays small if it never holds the megabytes of a case
            subprocess.run([sys.executable, __file__, "--write", name, folder], check=True)
            size = sum(os.path.getsize(os.path.join(folder, rel)) for rel in os.listdir(folder))
            json_out = os.path.join(args.json_dir or base, f"{name}.json")
            if args.json_dir:
                os.makedirs(args.json_dir, exist_ok=True)
            profile = os.path.join(args.profile, f"{name}.prof") if args.profile else None
            if args.profile:
                os.makedirs(args.profile, exist_ok=True)
            best = None
            for _ in range(max(1, args.repeat)):
                scratch = tempfile.mkdtemp(dir=base)
                cpu, peak, code, wall = run_one(folder, scratch, json_out, profile)
                shutil.rmtree(scratch, ignore_errors=True)
                best = (cpu, peak, code, wall) if best is None or wall < best[3] else best
            cpu, peak, code, wall = best
            # counted by another process too (a loaded report of 10,000 servers is 100 MB of this one's)
            count = subprocess.run([sys.executable, __file__, "--count", json_out], capture_output=True, text=True)
            servers, findings = (int(x) for x in (count.stdout.split() or ["-1", "-1"]))
            ok = code in (0, 1) and wall < LIMIT_SECONDS
            within += ok
            print(f"{name:16s} {size / 1e6:5.2f} MB  {servers:6d} servers {findings:6d} findings  {wall:6.2f} s  "
                  f"{cpu:6.2f} CPU-s  {peak:7.1f} MB peak  exit {code}  "
                  f"{'ok' if ok else 'SLOW' if code in (0, 1) else 'BAD'}", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{within}/{len(names)} cases under {LIMIT_SECONDS:g} s with exit 0 or 1 (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end)")
    return 0 if within == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
