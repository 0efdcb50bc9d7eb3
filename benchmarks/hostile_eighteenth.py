"""An eighteenth round of hostile inputs (partial: 14 cases, short of the 30 asked; see the report of hostile18).

    python3 benchmarks/hostile_eighteenth.py [--case NAME ...] [--timeout 60] [--cpu-time]

Kinds no earlier round (`hostile_*.py`) tried: Dockerfiles and Containerfiles (a huge RUN line, a `\\` continuation
run of 200,000 lines, heredoc RUNs, ARG/ENV self-doubling, FROM cycles across stages, `COPY --from` loops, a
Dockerfile that is a FIFO, one that is a symlink out of the tree), compose `build:` contexts and dockerfiles out of
the tree, GitHub Actions workflows with a huge matrix, a SkyPilot YAML with an alias bomb, `.env` files (huge, a
FIFO, self-referencing), and a `.vramlint.yaml` that is huge or an alias bomb.

Each case also holds `plain.yaml`, a Deployment whose --max-model-len 999999 is over the model's positions: that
error, on its lines, is the expectation (the hostile files may be said as unread or unknown, but must not hide it,
crash the run, leak, or go past 5 s and 300 MB). The harness is hostile_seventeenth's (its checks, its limits).
The expectations were written before the first run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fresh as f  # noqa: E402
import hostile_seventeenth as sev  # noqa: E402

MODEL = sev.MODEL
expect = f.expect
LIT = "hf_EighteenthLiteralToken0123456789abcd"


def _with_plain(files: dict[str, Any]) -> dict[str, Any]:
    bad = sev._bad()
    return {**files, "plain.yaml": bad, "__no_internal__": True,
            "__expect__": expect(("plain.yaml", sev._bad_lines(bad)))}


def _serve(extra: str = "") -> str:
    return f'ENTRYPOINT ["vllm", "serve", "{MODEL}"{extra}]\n'


def eighteenth_cases() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    base = "FROM vllm/vllm-openai:v0.8.5\n"
    out["dockerfile-huge-run-line"] = _with_plain({"Dockerfile": base + "RUN echo " + "x" * 3_000_000 + "\n" + _serve()})
    out["dockerfile-continuation-200k"] = _with_plain(
        {"Dockerfile": base + "RUN echo a \\\n" + "  && b \\\n" * 200_000 + "  && true\n" + _serve()})
    out["dockerfile-heredoc-runs-unterminated"] = _with_plain(
        {"Dockerfile": base + "RUN <<EOF\npip install vllm==0.9.2\n" * 5000 + "EOF\nRUN <<A <<B\na\nA\nb\n"
         + "RUN <<'NEVER'\n" + "vllm serve x\n" * 10000 + _serve()})
    out["dockerfile-arg-env-doubling"] = _with_plain(
        {"Dockerfile": "ARG X=ab\n" + base + "ARG X\n" + "ENV X=$X$X\n" * 60 + "ARG Y=${X}${X}\nENV M=${Y:-${X:-${Y}}}\n"
         + _serve(', "--served-model-name", "$X"')})
    out["dockerfile-from-cycle-across-stages"] = _with_plain(
        {"Dockerfile": "FROM c AS a\nFROM a AS b\nFROM b AS c\n" + _serve()
         + "".join(f"FROM s{i + 1} AS s{i}\n" for i in range(5000)) + "FROM s0 AS s5000\n" + _serve()})
    out["dockerfile-copy-from-loop"] = _with_plain(
        {"Dockerfile": "FROM vllm/vllm-openai:v0.8.5 AS a\nCOPY --from=b /x /y\nFROM a AS b\nCOPY --from=b /x /y\n"
         "COPY --from=a /x /y\nCOPY --from=999 /x /y\n" * 3000 + _serve()})
    out["dockerfile-fifo-and-link-out"] = _with_plain(
        {"Dockerfile": ("fifo",), "Containerfile": ("symlink", "../_outside/secret.txt"),
         "vllm.Dockerfile": ("symlink", "/proc/self/environ"), "sub/Dockerfile": ("symlink", "../../_outside")})
    out["compose-build-context-out-of-tree"] = _with_plain(
        {"compose.yaml": "services:\n"
         + "".join(f"  v{i}:\n    build: {{context: {c!r}, dockerfile: Dockerfile}}\n"
                   for i, c in enumerate(["..", "../_outside", "/proc/self", "/", "~", "file:///etc", "link"]))
         + "  w:\n    build: {context: ., dockerfile: ../_outside/secret.txt}\n"
           "  x:\n    build: {context: ., dockerfile: /proc/self/environ}\n"
           "  y:\n    build: {context: ., dockerfile_inline: \"" + "FROM x\\n" * 50_000 + "\"}\n",
         "link": ("symlink", "../_outside")})
    matrix = "jobs:\n  serve:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n" + "".join(
        f"        k{i}: [{', '.join(str(j) for j in range(40))}]\n" for i in range(12)) + (
        "    steps:\n      - run: pip install vllm==0.9.2\n      - run: vllm serve ${{ matrix.k0 }} --max-model-len ${{ matrix.k1 }}\n")
    out["gha-workflow-huge-matrix"] = _with_plain({".github/workflows/serve.yml": matrix})
    bomb = sev.h.alias_bomb(9, 9) if hasattr(sev.h, "alias_bomb") else None
    if bomb is None:
        lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [
            f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]"
            for i in range(1, 10)]
        bomb = "\n".join(lines) + "\n"
    out["skypilot-alias-bomb"] = _with_plain(
        {"sky.yaml": bomb + f"resources: {{accelerators: 'A100:1'}}\nrun: vllm serve {MODEL} --max-model-len *a9\n"})
    out["dotenv-huge-fifo-selfref"] = _with_plain(
        {"compose.yaml": f"services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n    env_file: [.env, fifo.env]\n"
         f"    command: [--model, {MODEL}, --max-num-seqs, '${{A}}']\n",
         ".env": "A=${A}${A}\n" * 20 + "B=" + "y" * 5_000_000 + f"\nHF_TOKEN={LIT}\n", "fifo.env": ("fifo",)})
    out["config-yaml-alias-bomb"] = _with_plain(
        {"cfg.yaml": bomb + "max-model-len: *a9\n",
         "run.yaml": sev.deployment(sev.QWEN + ["--config", "/c/cfg.yaml"], name="cfgbomb")})
    out["vramlint-yaml-huge"] = _with_plain(
        {".vramlint.yaml": "ignore:\n" + "".join(f"  - rule: VRL{i % 999:03d}\n    path: '{'*' * 50}{i}'\n"
                                                 for i in range(200_000))})
    out["vramlint-yaml-alias-bomb-and-fifo"] = _with_plain(
        {".vramlint.yaml": bomb + "ignore: *a9\nbaseline: .vramlint-baseline.json\n",
         ".vramlint-baseline.json": ("fifo",)})
    return out


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    sev.seventeenth_cases = eighteenth_cases
    return sev.run_case(name, base, timeout)


CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_eighteenth as e; "
         "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--cpu-time", action="store_true")
    args = parser.parse_args()
    names = args.case or list(eighteenth_cases())
    base = tempfile.mkdtemp(prefix="vramlint-eighteenth-")
    f._plant_outside(base)
    ok = 0
    try:
        for name in names:
            res = subprocess.run([sys.executable, "-c", CHILD, HERE, name, base, str(args.timeout)],
                                 capture_output=True, text=True, timeout=args.timeout * 3 + 120)
            if res.returncode != 0:
                r = {"seconds": 0.0, "cpu": 0.0, "peak": 0.0, "code": None, "first": "-",
                     "problems": [f"benchmark harness failed: {res.stderr.strip().splitlines()[-1:]}"]}
            else:
                r = json.loads(res.stdout.strip().splitlines()[-1])
            if (r["cpu"] if args.cpu_time else r["seconds"]) >= f.LIMIT_SECONDS:
                r["problems"].insert(0, f"over {f.LIMIT_SECONDS:g} s")
            if r["peak"] >= f.LIMIT_MB:
                r["problems"].insert(0, f"over {f.LIMIT_MB:g} MB")
            passed = not r["problems"]
            ok += passed
            print(f"{'PASS' if passed else 'FAIL'} {name:40s} {r['seconds']:6.2f} s {r['cpu']:6.2f} CPU-s "
                  f"{r['peak']:7.1f} MB  exit {r['code']}  {r['first']}", flush=True)
            for p in r["problems"]:
                print(f"{'':6s}- {p[:300]}", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{ok}/{len(names)} eighteenth cases PASS")
    return 0 if ok == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
