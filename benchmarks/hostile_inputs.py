"""Time and memory of `vramlint check` on hostile and on large-but-legal inputs.

    python3 benchmarks/hostile_inputs.py [--case NAME ...] [--keep DIR] [--timeout 60]

Each case is written to its own folder in a temporary directory: alias bombs in manifests, values files and
compose files; a 5,000-digit number; inf/nan flags; a shell variable doubled 40 times; `$(VAR)` expanded
100,000 times; large but legal inputs (4.9 MB of Deployments, 100,000 tiny documents, 100,000 args, a 1.4 MB
script of 20,000 commands, a launch script of 200,000 lines); and a second round (`more_cases`): deep flow collections, `<<` merge chains, huge
anchors, 10 MB one-liners, base64 ConfigMaps, NUL bytes, invalid UTF-8, BOMs, CR line ends, UTF-16/32, symlink
loops, links to /proc/self/environ, FIFOs, sockets, unreadable files, hostile file names, Helm `tpl`/`include`
recursion and `.Files.Glob`, a 5 MB values overlay, compose `extends` cycles, a script that runs itself,
`$(VAR)` cycles, `--config` loops and escape sequences in values. Then `vramlint check . --offline` runs on it
in a separate process (working directory: the case folder, HF_TOKEN set to a planted secret), writing JSON,
GitHub annotations and text. Printed per case: wall seconds, CPU seconds, peak RSS of that process (MB, from getrusage of
the waited child), exit status, and the first finding of the highest level (rule, file:line, message), or
what went wrong: the planted token in any output or on stderr, a traceback, a raw escape character on the
terminal, a GitHub line that is not one of vramlint's annotations. The last line counts the cases that ended
within 5 s and 300 MB with exit status 0 or 1 and none of those; wall time is judged, or the process's CPU time
(user + system) with --cpu-time, which a machine shared with other work does not inflate.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from typing import Any

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
    # a launch script named on the command line: 200,000 lines of assignments, quoted expansions, tests and
    # comments before the one `vllm serve` (read as a script, not YAML)
    shapes = ('V{i}="value-{i}"', 'echo "step {i}: $V{i}"', "test -n \"$V{i}\" && export V{i}", "# note {i}")
    script = "\n".join(["#!/bin/sh", "set -e"] + [shapes[i % 4].format(i=i) for i in range(200_000)]
                       + ['exec vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096 --served-model-name "$V8"'])
    out["script-200k-lines"] = {"serve.sh": script + "\n", "__paths__": ("paths", ["serve.sh"])}
    out.update(more_cases())
    return out


QWEN = ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
COMPOSE_HEAD = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"


def more_cases() -> dict[str, dict[str, Any]]:
    """Hostile inputs of the second round. A file's value is its text, its bytes, or a special entry:
    ("symlink", target), ("fifo",), ("socket",), ("mode", octal, text), ("args", [extra check arguments]),
    ("paths", [more paths to check, beside the folder: a file that is not YAML is read only when named])."""
    out: dict[str, dict[str, Any]] = {}
    one = deployment(QWEN)
    # nesting and aliases
    out["deep-flow-maps"] = {"deploy.yaml": one + "---\nx: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n"}
    out["deep-flow-after-quotes"] = {"deploy.yaml": one + "---\nx: [\"a\\\"b\", don't, 'it''s', "
                                     + "[" * 3000 + "]" * 3001 + "\n"}
    out["deep-flow-in-args"] = {"deploy.yaml": one.replace('- "--model"', "- " + "[" * 2000 + "]" * 2000
                                                            + '\n            - "--model"')}
    merges = ["x-m0: &m0 {a: 1}"] + [f"x-m{i}: &m{i} {{<<: *m{i - 1}, k{i}: {i}}}" for i in range(1, 400)]
    out["merge-chain-400"] = {"compose.yaml": "\n".join(merges) + "\n" + COMPOSE_HEAD
                              + "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n    labels: *m399\n"}
    big = "x" * 3_000_000
    out["compose-huge-anchor-command"] = {"compose.yaml": f"x-big: &big \"--served-model-name {big}\"\n"
                                          + COMPOSE_HEAD + "    command: [--model, Qwen/Qwen2.5-1.5B-Instruct, *big]\n"
                                          + "".join(f"  s{i}:\n    image: vllm/vllm-openai:v0.8.5\n"
                                                    f"    command: [--model, Qwen/Qwen2.5-1.5B-Instruct, *big]\n"
                                                    for i in range(50))}
    words = " ".join(["--enforce-eager"] * 400_000)
    out["compose-anchor-400k-words"] = {"compose.yaml": f"x-w: &w \"--model Qwen/Qwen2.5-1.5B-Instruct {words}\"\n"
                                        + COMPOSE_HEAD + "    command: *w\n"}
    # long lines, big data, encodings
    out["one-line-4.5MB"] = {"deploy.yaml": deployment(QWEN + ["--served-model-name", "n" * 4_500_000])}
    out["one-line-10MB"] = {"deploy.yaml": deployment(QWEN + ["--served-model-name", "n" * 10_000_000])}
    import base64

    blob = base64.b64encode(os.urandom(3_000_000)).decode()
    out["configmap-base64-4MB"] = {"deploy.yaml": one + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"
                                   f"binaryData:\n  weights.bin: {blob}\n"}
    out["nul-bytes"] = {"deploy.yaml": one.encode().replace(b"name: llm", b"name: ll\0m")}
    out["invalid-utf8"] = {"deploy.yaml": one.encode().replace(b"name: llm", b"name: ll\xff\xfem")}
    out["bom-crlf"] = {"deploy.yaml": b"\xef\xbb\xbf" + one.replace("\n", "\r\n").encode()}
    out["cr-only"] = {"deploy.yaml": one.replace("\n", "\r").encode()}
    out["utf16-le"] = {"deploy.yaml": one.encode("utf-16")}
    out["utf32-be"] = {"deploy.yaml": b"\x00\x00\xfe\xff" + one.encode("utf-32-be")}
    out["utf16-no-bom"] = {"deploy.yaml": one.encode("utf-16-le")}
    # the file system
    out["symlink-loop"] = {"deploy.yaml": one, "a.yaml": ("symlink", "b.yaml"), "b.yaml": ("symlink", "a.yaml"),
                           "d/loop": ("symlink", ".."), "d/self": ("symlink", "."), "root": ("symlink", "/")}
    out["symlink-to-secret"] = {"deploy.yaml": one, "environ.yaml": ("symlink", "/proc/self/environ"),
                                "secret.env": ("symlink", "/proc/self/environ")}
    out["fifo-and-socket"] = {"deploy.yaml": one, "pipe.yaml": ("fifo",), "sock.yaml": ("socket",)}
    out["unreadable-file-and-dir"] = {"deploy.yaml": one, "locked.yaml": ("mode", 0o000, one),
                                      "locked/deploy.yaml": one, "locked": ("mode", 0o000, None)}
    out["hostile-file-names"] = {"ok\nerror::x.yaml": one, "\x1b[31mred\x1b[0m.yaml": one,
                                 "::warning file=x::y.yaml": one, "a%0A::error::b.yaml": one,
                                 "pipe|`tick`.yaml": one}
    # templates
    out["helm-tpl-recursion"] = {"chart/Chart.yaml": CHART, "chart/templates/deploy.yaml": CHART_TEMPLATE,
                                 "chart/templates/x.yaml": "{{ tpl .Values.loop . }}\n",
                                 "chart/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 4096\n"
                                 "loop: '{{ tpl .Values.loop . }}'\n"}
    out["helm-define-self-include"] = {"chart/Chart.yaml": CHART,
                                       "chart/templates/_h.tpl": '{{ define "a" }}x{{ include "a" . }}{{ include "a" . }}'
                                       "{{ end }}\n",
                                       "chart/templates/deploy.yaml": CHART_TEMPLATE.replace(
                                           "{{ .Release.Name }}", '{{ include "a" . | trunc 10 }}'),
                                       "chart/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 4096\n"}
    out["helm-files-glob"] = {"chart/Chart.yaml": CHART,
                              "chart/templates/deploy.yaml": CHART_TEMPLATE + "{{ range $p, $_ := .Files.Glob \"**\" }}"
                              "# {{ $p }}: {{ $.Files.Get $p }}\n{{ end }}",
                              "chart/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 4096\n",
                              "chart/secret": ("symlink", "/proc/self/environ")}
    overlay = "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 4096\nextra:\n" + "".join(
        f"  k{i}: {'v' * 40}\n" for i in range(100_000))
    out["helm-values-overlay-5MB"] = {"chart/Chart.yaml": CHART, "chart/templates/deploy.yaml": CHART_TEMPLATE,
                                      "chart/values.yaml": "model: x\nmaxLen: 1\n", "over.yaml": overlay,
                                      "__args__": ("args", ["--values", "over.yaml"])}
    slow = '{{ range until 100000 }}{{ range until 100000 }}{{ $x := printf "%s%s" "a" "b" }}{{ end }}{{ end }}\n'
    out["helm-10-slow-charts"] = {f"c{i}/{rel}": text for i in range(10) for rel, text in (
        ("Chart.yaml", CHART), ("values.yaml", "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 4096\n"),
        ("templates/deploy.yaml", CHART_TEMPLATE), *((f"templates/slow{t}.yaml", slow) for t in range(6)))}
    out["shell-eval-chain"] = {"deploy.yaml": script_deployment("eval " * 20_000 + "vllm serve Qwen/Qwen2.5-1.5B-Instruct")}
    out["shell-param-nesting"] = {"deploy.yaml": script_deployment(
        "vllm serve " + "${X:-" * 20_000 + "Qwen/Qwen2.5-1.5B-Instruct" + "}" * 20_000)}
    # references between files
    out["compose-extends-cycle"] = {"compose.yaml": COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n"
                                    "    extends: {file: other.yaml, service: b}\n",
                                    "other.yaml": "services:\n  b:\n    extends: {file: compose.yaml, service: vllm}\n"
                                    "  c:\n    extends: c\n"}
    out["compose-extends-self"] = {"compose.yaml": COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n"
                                   "    extends: vllm\n"}
    out["script-sources-itself"] = {"compose.yaml": COMPOSE_HEAD + "    entrypoint: [bash, ./start.sh]\n"
                                    "    volumes: [./start.sh:/start.sh]\n",
                                    "start.sh": ". ./start.sh\nsource $0\nbash ./start.sh\nexec ./start.sh\n"
                                    "exec vllm serve Qwen/Qwen2.5-1.5B-Instruct\n"}
    out["dependent-var-cycle"] = {"deploy.yaml": deployment(QWEN + ["--served-model-name", "$(A)"]).replace(
        "          resources:", "          env:\n            - {name: A, value: '$(B)'}\n"
        "            - {name: B, value: '$(A)$(A)'}\n          resources:", 1)}
    out["config-file-is-itself"] = {"compose.yaml": COMPOSE_HEAD + "    command: --config /cfg/c.yaml\n"
                                    "    volumes: [./c.yaml:/cfg/c.yaml, ./:/cfgdir]\n",
                                    "c.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nconfig: /cfg/c.yaml\n"}
    out["config-file-is-a-folder"] = {"compose.yaml": COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct "
                                      "--config /cfgdir\n    volumes: [./:/cfgdir]\n"}
    out["vllm-config-yaml-bomb"] = {"compose.yaml": COMPOSE_HEAD + "    command: --config /c.yaml\n"
                                    "    volumes: [./c.yaml:/c.yaml]\n",
                                    "c.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\n" + alias_bomb()}
    out["ansi-in-values"] = {"deploy.yaml": deployment(["--model", "\x1b]0;pwned\x07Qwen/\x1b[2J",
                                                        "--served-model-name", "\x1b[31m::error::x\r\n::warning::y",
                                                        "--max-model-len", "\x1b[1m4096"])}
    out["env-ansi-and-token"] = {"compose.yaml": COMPOSE_HEAD + "    command: --model $${M} --served-model-name ${N}\n"
                                 "    env_file: [.env, /proc/self/environ]\n",
                                 ".env": "M=\x1b[31mQwen/Qwen2.5-1.5B-Instruct\nN=${HF_TOKEN}\n"}
    return out


SECRET = "hf_plantedSECRETtoken0123456789abcdef"  # HF_TOKEN of every run: it must appear in no output


def write_case(folder: str, files: dict[str, Any]) -> list[str]:
    """Write a case's files (see `more_cases`); the extra `vramlint check` arguments it asks for."""
    extra: list[str] = []
    modes: list[tuple[str, int]] = []
    for rel, content in files.items():
        path = os.path.join(folder, rel)
        if isinstance(content, tuple) and content[0] == "args":
            extra += content[1]
            continue
        if isinstance(content, tuple) and content[0] == "paths":
            extra[:0] = content[1]  # first: the caller puts the extra arguments right after "."
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, tuple):
            kind = content[0]
            if kind == "symlink":
                os.symlink(content[1], path)
            elif kind == "fifo":
                os.mkfifo(path)
            elif kind == "socket":
                sock = socket.socket(socket.AF_UNIX)
                sock.bind(path)
                sock.close()
            elif kind == "mode":
                if content[2] is None:
                    os.makedirs(path, exist_ok=True)
                else:
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write(content[2])
                modes.append((path, content[1]))  # after the folder's files are written
            continue
        with open(path, "wb") as fh:
            fh.write(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    for path, mode in modes:
        os.chmod(path, mode)
    return extra


def _restore_modes(folder: str) -> None:
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)


def run_timed(cmd: list[str], folder: str, env: dict[str, str], timeout: float) -> tuple[str, str, int | None, float]:
    """(stdout, stderr, exit status or None when killed at ``timeout``, wall seconds) of one vramlint process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="backslashreplace")
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        code = None
    return out, err, code, time.perf_counter() - start


def run_case(name: str, files: dict[str, Any], base: str, timeout: float) -> tuple[float, float, int | None, str,
                                                                                  float]:
    folder = os.path.join(base, name)
    os.makedirs(folder, exist_ok=True)
    extra = write_case(folder, files)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(ROOT), HF_HUB_OFFLINE="1", HF_TOKEN=SECRET)
    cmd = [sys.executable, "-m", "vramlint", "check", ".", *extra, "--offline", "--output-format", "json",
           "--output-file", os.path.join(base, f"{name}.json"), "--output-format", "text",
           "--output-format", "github", "--output-file", os.path.join(base, f"{name}.github")]
    out, err, code, seconds = run_timed(cmd, folder, env, timeout)
    _restore_modes(folder)
    # ru_maxrss of the children is the largest of any child waited for so far: each case runs alone, in order,
    # and the figure is kept only if this child raised it (else it is at most the previous maximum).
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_mb = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime  # the only child of this process: this case's CPU time
    outputs = {"text": out, "stderr": err}
    for kind in ("json", "github"):
        try:
            with open(os.path.join(base, f"{name}.{kind}"), encoding="utf-8", errors="backslashreplace") as fh:
                outputs[kind] = fh.read()
        except OSError:
            outputs[kind] = ""
    leaks = [k for k, v in outputs.items() if SECRET in v]
    if leaks:
        return seconds, peak_mb, code, f"LEAK: the planted HF_TOKEN is in {', '.join(leaks)}", cpu
    if "Traceback" in err:
        return seconds, peak_mb, 2, f"traceback on stderr: {err.strip().splitlines()[-1][:120]}", cpu
    if "\x1b" in out or "\x1b" in err or "\x07" in out:
        return seconds, peak_mb, code, "a raw escape character reached the terminal", cpu
    if any(line.startswith("::") and not line.startswith(("::error ", "::warning ", "::notice ", "::group::",
                                                           "::endgroup::"))
           for line in outputs["github"].splitlines()):
        return seconds, peak_mb, code, "a github output line that is not vramlint's own annotation", cpu
    first = "-"
    try:
        findings = json.loads(outputs["json"]).get("findings") or []
        if findings:
            # the first finding of the highest level: what the case is about, not a note about the GPU
            rank = {"error": 0, "warning": 1, "note": 2}
            f = min(findings, key=lambda x: rank.get(x.get("level"), 3))
            first = f"{f.get('rule')} {f.get('file')}:{f.get('line')} {f.get('message', '')[:110]}"
            first = first.encode("unicode_escape").decode("ascii")
        else:
            first = "(no finding)"
    except (ValueError, AttributeError):
        tail = (err.strip().splitlines() or ["(no output)"])[-1]
        first = f"no JSON output; stderr: {tail[:120]}"
    return seconds, peak_mb, code, first, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="run only these cases")
    parser.add_argument("--keep", metavar="DIR", help="write the cases into DIR and keep them")
    parser.add_argument("--timeout", type=float, default=60.0, help="kill a case after this many seconds")
    parser.add_argument("--cpu-time", action="store_true",
                        help="judge the 5 s limit on the case's CPU time, not wall time (on a loaded machine)")
    args = parser.parse_args()
    all_cases = cases()
    names = args.case or list(all_cases)
    base = args.keep or tempfile.mkdtemp(prefix="vramlint-hostile-")
    ok = 0
    try:
        for name in names:
            # a fresh interpreter per case keeps ru_maxrss per case: run each through a small wrapper process
            seconds, peak, code, first, cpu = _isolated(name, all_cases[name], base, args.timeout)
            judged = cpu if args.cpu_time else seconds
            within = code in (0, 1) and judged < LIMIT_SECONDS and peak < LIMIT_MB and not first.startswith(
                ("LEAK", "traceback", "a raw escape", "a github output"))
            ok += within
            print(f"{name:28s} {seconds:6.2f} s {cpu:6.2f} CPU-s {peak:7.1f} MB  exit {code}  "
                  f"{'ok ' if within else 'BAD'}  {first}", flush=True)
            if hasattr(os, "geteuid") and os.geteuid() == 0 and any(
                    isinstance(v, tuple) and v[0] == "mode" for v in all_cases[name].values()):
                print(f"{'':28s} (running as root, which reads files whatever their mode: this case tests nothing "
                      "here; tests/test_scan_inputs.py and test_cli_errors.py skip theirs for the same reason)",
                      flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"{ok}/{len(names)} cases within {LIMIT_SECONDS:g} s ({'CPU' if args.cpu_time else 'wall'} time) and "
          f"{LIMIT_MB:g} MB with exit 0 or 1")
    return 0 if ok == len(names) else 1


def _isolated(name: str, files: dict[str, str], base: str, timeout: float) -> tuple[float, float, int | None, str,
                                                                                     float]:
    """run_case in a child interpreter, so that RUSAGE_CHILDREN there measures this case's vramlint alone."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_inputs as h; "
            "print(json.dumps(h.run_case(sys.argv[2], h.cases()[sys.argv[2]], sys.argv[3], float(sys.argv[4]))))")
    del files  # regenerated in the child (cheaper than passing megabytes through argv)
    res = subprocess.run([sys.executable, "-c", code, os.path.dirname(os.path.abspath(__file__)), name, base,
                          str(timeout)], capture_output=True, text=True, timeout=timeout + 60)
    if res.returncode != 0:
        return 0.0, 0.0, None, f"benchmark harness failed: {res.stderr.strip().splitlines()[-1:]}", 0.0
    seconds, peak, code_, first, cpu = json.loads(res.stdout.strip().splitlines()[-1])
    return seconds, peak, code_, first, cpu


if __name__ == "__main__":
    sys.exit(main())
