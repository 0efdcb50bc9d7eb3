"""Wall time of `vramlint check` when the Hub cannot be reached, with 1 and with 10 models outside the catalog.

Two kinds of unreachable endpoint on 127.0.0.1, set as HF_ENDPOINT:
  closed     a port nobody listens on (connection refused at once, as without a route or DNS)
  blackhole  a socket that listens and never accepts or answers (the connection completes in the kernel;
             no HTTP answer ever comes, as behind a proxy or firewall that swallows requests)

Each case runs vramlint in a fresh process with the shipped timeouts (vramlint.hub.CONNECT_TIMEOUT_S and
ANSWER_TIMEOUT_S); the figure is the median of --repeat runs. With one connection attempt per run, 10 models
must cost the same wait as 1.

    python benchmarks/hub_unreachable.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: m{i}}}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.2
        args: ["--model", "acme-bench/unknown-model-{i}"]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def run_once(folder: Path, endpoint: str, cache: Path) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING", "TRANSFORMERS_OFFLINE"))}
    env.update(HF_ENDPOINT=endpoint, XDG_CACHE_HOME=str(cache), HF_HOME=str(cache / "hf"), PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", str(folder)], capture_output=True, text=True,
                          env=env, timeout=600)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"vramlint failed ({proc.returncode}): {proc.stderr}")
    return elapsed, proc.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from vramlint import hub

    blackhole = socket.socket()
    blackhole.bind(("127.0.0.1", 0))
    blackhole.listen(64)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    endpoints = {"closed": f"http://127.0.0.1:{closed_port}",
                 "blackhole": f"http://127.0.0.1:{blackhole.getsockname()[1]}"}
    print(f"timeouts: connect {hub.CONNECT_TIMEOUT_S:g} s, answer {hub.ANSWER_TIMEOUT_S:g} s; "
          f"median of {args.repeat} runs")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, endpoint in endpoints.items():
            for count in (1, 10):
                folder = Path(tmp) / f"{kind}-{count}"
                folder.mkdir()
                for i in range(count):
                    (folder / f"d{i}.yaml").write_text(MANIFEST.format(i=i))
                times = []
                notes = 0
                for r in range(args.repeat):
                    elapsed, stderr = run_once(folder, endpoint, Path(tmp) / f"cache-{kind}-{count}-{r}")
                    times.append(elapsed)
                    notes = stderr.count("could not be reached")
                print(f"{kind:9s} {count:2d} unknown model(s): {statistics.median(times):5.2f} s "
                      f"(Hub notes on stderr: {notes})")
    blackhole.close()


if __name__ == "__main__":
    main()
