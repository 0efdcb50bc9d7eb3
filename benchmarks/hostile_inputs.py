"""Time and memory of `vramlint check` on hostile and on large-but-legal inputs.

    python3 benchmarks/hostile_inputs.py [--case NAME ...] [--keep DIR] [--timeout 60]

Each case is written to its own folder in a temporary directory (alias bombs in manifests, values files and
compose files; a 5,000-digit number; inf/nan flags; a shell variable doubled 40 times; `$(VAR)` expanded
100,000 times; 4.9 MB of Deployments; 100,000 tiny documents; 100,000 args; a 1.4 MB script of 20,000
commands; ...), then `vramlint check FOLDER --offline --output-format json` runs on it in a separate process
(working directory: the case folder). Printed per case: wall seconds, peak RSS of that process (MB, from
getrusage of the waited child), exit status, and the first finding of the highest level (rule, file:line, message). The last line
counts the cases that ended within 5 s and 300 MB with exit status 0 or 1.
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
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LIMIT_SECONDS = 5.0
LIMIT_MB = 300.0


def deployment(args: list[str], name: str = "llm", image: str = "vllm/vllm-openai:v0.8.5", extra: str = "") -> str:
    arg_lines = "".join(f"            - {json.dumps(a)}\n" for a in args)
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: {image}
          args:
{arg_lines}          resources:
            limits:
              nvidia.com/gpu: "1"
{extra}"""


def script_deployment(script: str) -> str:
    body = "".join(f"              {line}\n" for line in script.split("\n"))
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: scripted
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          command: ["sh", "-c"]
          args:
            - |
{body}"""


def alias_bomb(levels: int = 9, width: int = 9, indent: str = "") -> str:
    lines = [f'{indent}a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        refs = ", ".join(f"*a{i - 1}" for _ in range(width))
        lines.append(f"{indent}a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


CHART = """\
apiVersion: v2
name: bomb
version: 0.1.0
"""
CHART_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "{{ .Values.model }}", "--max-model-len", "{{ .Values.maxLen }}"]
"""


def cases() -> dict[str, dict[str, str]]:
    """case name -> {relative path: file text}."""
    out: dict[str, dict[str, str]] = {}
    out["alias-bomb-manifest"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]) + "---\n"
                                  + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vllm-cfg}\ndata:\n"
                                  + alias_bomb(indent="  ")}
    out["alias-bomb-args"] = {"deploy.yaml": "x: &x [--max-model-len, '1']\n" + alias_bomb().replace('["lol"]', "*x")
                              .replace("a0: &a0 *x", "a0: &a0 [*x]") + "---\n"
                              + deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"])}
    out["alias-bomb-values"] = {"chart/Chart.yaml": CHART, "chart/templates/deploy.yaml": CHART_TEMPLATE,
                                "chart/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 4096\nunused:\n"
                                + alias_bomb(indent="  ")}
    compose_bomb = ["x-a0: &a0 {k: lol}"] + [
        f"x-a{i}: &a{i} {{{', '.join(f'k{j}: *a{i - 1}' for j in range(9))}}}" for i in range(1, 10)]
    out["alias-bomb-compose"] = {"compose.yaml": "\n".join(compose_bomb) + "\n"
                                 + "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
                                 "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n    labels:\n      <<: *a9\n"}
    merge = ["m0: &m0 {k: v}"]
    for i in range(1, 25):
        merge.append(f"m{i}: &m{i} {{<<: [*m{i - 1}], k{i}a: *m{i - 1}, k{i}b: *m{i - 1}}}")
    out["merge-key-bomb-compose"] = {"compose.yaml": "\n".join(f"x-{line}" for line in merge) + "\n"
                                     + "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
                                     "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n    labels: *m24\n"}
    digits = "9" * 5000
    out["int-5000-digits-manifest"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"])
                                       .replace("spec:\n  template", f"spec:\n  replicas: {digits}\n  template")}
    out["int-5000-digits-arg"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct",
                                                             "--max-model-len", digits])}
    out["int-5000-digits-values"] = {"chart/Chart.yaml": CHART, "chart/templates/deploy.yaml": CHART_TEMPLATE,
                                     "chart/values.yaml": f"model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: {digits}\n"}
    local_config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                    "intermediate_size": 14336, "vocab_size": 128256, "torch_dtype": "bfloat16"}
    config_text = json.dumps(local_config).replace('"max_position_embeddings"', '"x"')
    config_text = config_text[:-1] + ', "max_position_embeddings": ' + "9" * 400 + "}"
    out["int-400-digits-config-json"] = {"models/llama/config.json": config_text,
                                         "deploy.yaml": deployment(["--model", "./models/llama"])}
    out["gpu-util-inf"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct",
                                                      "--gpu-memory-utilization", ".inf"])}
    out["gpu-util-nan"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct",
                                                      "--gpu-memory-utilization", ".nan"])}
    out["max-len-1e999"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct",
                                                       "--max-model-len", "1e999"])}
    out["yaml-inf-values"] = {"values.yaml": "servingEngineSpec:\n  modelSpec:\n    - name: m\n"
                              "      repository: vllm/vllm-openai\n      tag: v0.8.5\n"
                              "      modelURL: Qwen/Qwen2.5-1.5B-Instruct\n      requestGPU: .inf\n"
                              "      vllmConfig:\n        gpuMemoryUtilization: .nan\n        maxModelLen: 1e999\n"}
    doubling = "A=x\n" + "A=$A$A\n" * 40 + "vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name $A\n"
    out["shell-doubling-40"] = {"deploy.yaml": script_deployment(doubling)}
    out["dependent-var-100k"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct",
                                                            "--served-model-name", "$(A)" * 100_000])
                                 .replace("          resources:", "          env:\n            - name: A\n"
                                          "              value: abcdefgh\n          resources:", 1)}
    out["dependent-var-chain"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct",
                                                             "--served-model-name", "$(V30)"])
                                  .replace("          resources:", "          env:\n            - name: V0\n"
                                           "              value: ab\n" + "".join(
                                               f"            - name: V{i}\n              value: $(V{i - 1})$(V{i - 1})\n"
                                               for i in range(1, 31)) + "          resources:", 1)}
    out["duplicate-args-key"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]).replace(
        "          resources:", "          args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '1000000']\n"
        "          resources:")}
    out["block-size-3"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--block-size", "3"])}
    out["negative-tp"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct",
                                                     "--tensor-parallel-size", "-2"])}
    out["zero-pp"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct",
                                                 "--pipeline-parallel-size", "0"])}
    out["unterminated-quote"] = {"deploy.yaml": script_deployment(
        "vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name 'abc\nexec sleep 1\n")}
    deep = "a:\n" + "".join("  " * i + "- \n" for i in range(1, 300))
    out["nested-too-deep-flow"] = {"deploy.yaml": deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct"]) + "---\n"
                                   + "x: " + "[" * 5000 + "]" * 5000 + "\n"}
    out["nested-too-deep-block"] = {"deploy.yaml": "kind: ConfigMap\nvllm: 1\n" + deep}
    one = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"])
    out["manifests-4.9MB"] = {"deploy.yaml": "---\n".join(one.replace("name: llm", f"name: llm-{i}")
                                                          for i in range(int(4.9e6 / len(one))))}
    out["tiny-docs-100k"] = {"docs.yaml": "vllm: 1\n" + "---\na: 1\n" * 100_000}
    many = ["--model", "Qwen/Qwen2.5-1.5B-Instruct"] + [f"--served-model-name=n{i}" for i in range(100_000)]
    out["args-100k"] = {"deploy.yaml": deployment(many)}
    cmds = "\n".join(f"echo step {i} && export V{i}=\"value-{i}-{'x' * 40}\" && test -n \"$V{i}\""
                     for i in range(20_000))
    out["script-1.4MB-20k-commands"] = {"deploy.yaml": script_deployment(
        cmds + "\nexec vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096")}
    return out


def run_case(name: str, files: dict[str, str], base: str, timeout: float) -> tuple[float, float, int | None, str]:
    folder = os.path.join(base, name)
    for rel, text in files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(ROOT), HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "-m", "vramlint", "check", ".", "--offline", "--output-format", "json"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        code = None
    seconds = time.perf_counter() - start
    # ru_maxrss of the children is the largest of any child waited for so far: each case runs alone, in order,
    # and the figure is kept only if this child raised it (else it is at most the previous maximum).
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    first = "-"
    try:
        findings = json.loads(out).get("findings") or []
        if findings:
            # the first finding of the highest level: what the case is about, not a note about the GPU
            rank = {"error": 0, "warning": 1, "note": 2}
            f = min(findings, key=lambda x: rank.get(x.get("level"), 3))
            first = f"{f.get('rule')} {f.get('file')}:{f.get('line')} {f.get('message', '')[:110]}"
        else:
            first = "(no finding)"
    except (ValueError, AttributeError):
        tail = (err.strip().splitlines() or ["(no output)"])[-1]
        first = f"no JSON output; stderr: {tail[:120]}"
    return seconds, peak_mb, code, first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="run only these cases")
    parser.add_argument("--keep", metavar="DIR", help="write the cases into DIR and keep them")
    parser.add_argument("--timeout", type=float, default=60.0, help="kill a case after this many seconds")
    args = parser.parse_args()
    all_cases = cases()
    names = args.case or list(all_cases)
    base = args.keep or tempfile.mkdtemp(prefix="vramlint-hostile-")
    ok = 0
    try:
        for name in names:
            # a fresh interpreter per case keeps ru_maxrss per case: run each through a small wrapper process
            seconds, peak, code, first = _isolated(name, all_cases[name], base, args.timeout)
            within = code in (0, 1) and seconds < LIMIT_SECONDS and peak < LIMIT_MB
            ok += within
            print(f"{name:28s} {seconds:6.2f} s {peak:7.1f} MB  exit {code}  {'ok ' if within else 'BAD'}  {first}",
                  flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"{ok}/{len(names)} cases within {LIMIT_SECONDS:g} s and {LIMIT_MB:g} MB with exit 0 or 1")
    return 0 if ok == len(names) else 1


def _isolated(name: str, files: dict[str, str], base: str, timeout: float) -> tuple[float, float, int | None, str]:
    """run_case in a child interpreter, so that RUSAGE_CHILDREN there measures this case's vramlint alone."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_inputs as h; "
            "print(json.dumps(h.run_case(sys.argv[2], h.cases()[sys.argv[2]], sys.argv[3], float(sys.argv[4]))))")
    del files  # regenerated in the child (cheaper than passing megabytes through argv)
    res = subprocess.run([sys.executable, "-c", code, os.path.dirname(os.path.abspath(__file__)), name, base,
                          str(timeout)], capture_output=True, text=True, timeout=timeout + 60)
    if res.returncode != 0:
        return 0.0, 0.0, None, f"benchmark harness failed: {res.stderr.strip().splitlines()[-1:]}"
    seconds, peak, code_, first = json.loads(res.stdout.strip().splitlines()[-1])
    return seconds, peak, code_, first


if __name__ == "__main__":
    sys.exit(main())
