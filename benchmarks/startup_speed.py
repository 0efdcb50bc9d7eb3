"""Start-up of vramlint on one small file, as pre-commit runs it on every commit (issue 14).

    python3 benchmarks/startup_speed.py [--repeat 10] [--instructions] [--file FILE]

Runs, as separate processes with bytecode caching on (as an installed package runs), after one warm-up each:
  * `python3 -c pass` (the interpreter's own start: the floor),
  * `vramlint --version`,
  * `vramlint inventory FILE`,
  * `vramlint check --offline FILE`,
on one small corpus Deployment (the one benchmarks/speed_trees.py times), and prints the median and minimum
wall time and the median CPU time (user + system) of each. On a machine shared with other work the wall times
say how busy it was; --instructions also counts the instructions of one run of each under valgrind (callgrind),
a figure that does not move with the load (about 50 times slower to take).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from speed_trees import (  # a sibling script
    CORPUS,
    SMALL_DEPLOYMENT,
    run_child,
    vramlint_env,
)


def instructions(cmd: list[str], cwd: str, env: dict[str, str]) -> float | None:
    """Millions of instructions one run executes (valgrind's callgrind), or None without valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    proc = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd], cwd=cwd, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    return int(found.group(1)) / 1e6 if found else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10, help="timed runs of each command (median)")
    ap.add_argument("--instructions", action="store_true", help="also count instructions under valgrind")
    ap.add_argument("--file", default=os.path.join(CORPUS, SMALL_DEPLOYMENT), help="the small file to check")
    opts = ap.parse_args()

    env = vramlint_env()
    vram = [sys.executable, "-m", "vramlint"]
    commands = (("python3 -c pass", [sys.executable, "-c", "pass"]),
                ("vramlint --version", vram + ["--version"]),
                ("vramlint inventory FILE", vram + ["inventory", opts.file]),
                ("vramlint check --offline FILE", vram + ["check", "--offline", opts.file]))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; file {os.path.basename(opts.file)}")
    print(f"median of {opts.repeat} runs after one warm-up:")
    with tempfile.TemporaryDirectory(prefix="vramlint-startup-") as work:
        for label, cmd in commands:
            run_child(cmd, work, env)  # warm-up: bytecode written, files in the page cache
            runs = [run_child(cmd, work, env) for _ in range(opts.repeat)]
            walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
            line = (f"  {label:32} {statistics.median(walls):6.3f} s wall (min {min(walls):.3f}), "
                    f"{statistics.median(cpus):6.3f} CPU-s")
            if opts.instructions:
                count = instructions(cmd, work, env)
                line += f", {count:6.1f} M instructions" if count is not None else ", valgrind not found"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
