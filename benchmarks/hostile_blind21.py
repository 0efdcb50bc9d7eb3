"""Twenty-first round of hostile inputs (issue 10), written blind: none of the earlier rounds' cases or
harnesses were read before these were written, and each case's expectation is written next to it, before
its first run.

Every case builds a tree of its own in a temporary folder (``tree/``), with a folder beside it
(``outside/``) that holds a sentinel file: its text must reach no output. vramlint runs on the tree in a
child process with every output format written (text on stdout, json, sarif, github, markdown to files),
a planted ``HF_TOKEN`` in its environment, ``XDG_CACHE_HOME`` in a folder of the case's own, and a Python
audit hook (set up before vramlint is imported) that records:

- every file opened, listed or stat-walked outside the tree, the cache, the output folder and Python's own
  files (a read of ``outside/``, ``/proc/*/environ``, ``/dev/*``, ``/etc/passwd`` fails the case);
- every file opened for writing outside the cache and the output folder (fails the case);
- every process started (fails the case).

A case passes when: the exit status is one it expects (0 or 1 unless said), there is no traceback, the CPU
time (user + system, the child and any worker it waited for) is under 5 s and the peak RSS under 300 MB,
neither the token nor the sentinel appears in stdout, stderr, any report or any file of the cache, no line
of text, markdown, stderr or github output is a workflow command other than vramlint's own annotations,
no raw ESC reaches text, markdown or stderr, the markdown tables keep their columns, and the finding(s) the
case expects are in the JSON report on the file and line it names.

    python benchmarks/hostile_blind21.py            # every case
    python benchmarks/hostile_blind21.py -k hub     # the cases whose name holds "hub"
    python benchmarks/hostile_blind21.py --keep     # keep the temporary folders (printed)
"""
from __future__ import annotations

import argparse
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

TOKEN = "hf_PlantedBlind21TokenQwErTyUiOpAsDfGhJkL"
IN_TREE_TOKEN = "hf_InTreeBlind21SecretZxCvBnMqWeRtYuIoP"
CPU_LIMIT_S = 5.0
RSS_LIMIT_MB = 300.0
ROOT = Path(__file__).resolve().parent.parent

# Runs in the child before vramlint is imported. It writes what it saw to AUDIT_OUT at exit, with the
# recording turned off so that its own write is not recorded.
AUDIT_BOOT = r'''
import os, sys, atexit
_allowed_read = [p for p in os.environ["B21_ALLOWED_READ"].split(os.pathsep) if p]
_allowed_write = [p for p in os.environ["B21_ALLOWED_WRITE"].split(os.pathsep) if p]
_out = os.environ["B21_AUDIT_OUT"]
_seen = []
_on = [True]
def _under(path, roots):
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)
def _norm(p):
    if isinstance(p, int):
        return None
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    try:
        p = os.fspath(p)
    except TypeError:
        return None
    return os.path.abspath(p)
def _hook(event, args):
    if not _on[0]:
        return
    if event == "open":
        path = _norm(args[0])
        if path is None:
            return
        mode, flags = args[1], args[2]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if writing and not _under(path, _allowed_write):
            _seen.append("write " + path)
        elif not writing and not _under(path, _allowed_read):
            _seen.append("read " + path)
    elif event in ("os.listdir", "os.scandir"):
        path = _norm(args[0] if args else ".")
        if path is not None and not _under(path, _allowed_read):
            _seen.append("list " + path)
    elif event in ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system"):
        _seen.append("run " + repr(args)[:200])
def _dump():
    _on[0] = False
    with open(_out, "w") as f:
        f.write("\n".join(_seen))
atexit.register(_dump)
sys.addaudithook(_hook)
from vramlint.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else 2
_dump()
sys.stdout.flush(); sys.stderr.flush()
os._exit(code if isinstance(code, int) else 0)
'''


@dataclass
class Expect:
    exits: tuple = (0, 1)
    # (file relative to the tree or a suffix of it, line or None, rules or None)
    findings: list = field(default_factory=list)
    why: str = ""
    # (file, line, text): an entry of the summary's "unchecked" causes naming the server at file:line and holding
    # the text. vramlint says a server it could not check once per cause there, not as a finding per server
    # (added after the first run: the hub cases first asked for a VRL010 finding on the --model line)
    unchecked: list = field(default_factory=list)


@dataclass
class Ctx:
    tree: Path
    outside: Path
    cache: Path
    out: Path
    sentinel: str
    args: list = field(default_factory=list)
    env: dict = field(default_factory=dict)
    hub: object = None          # a function (handler, path) -> None answering a request, or None: offline
    hub_log: list = field(default_factory=list)
    extra_forbidden: list = field(default_factory=list)   # more strings that must reach no output
    checks: list = field(default_factory=list)            # more checks: fn(ctx, outputs) -> str | None
    allow_run: bool = False
    paths: list = field(default_factory=list)            # what is named on the command line (default: the tree)


CASES: list = []


def case(category: str, expect: Expect):
    def deco(fn):
        CASES.append((fn.__name__, category, expect, fn))
        return fn
    return deco


def w(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def deployment(args: list[str], *, gpus: int = 1, extra_container: str = "", image: str = "vllm/vllm-openai:v0.9.2",
               env: str = "") -> str:
    arg_lines = "\n".join(f"        - {json.dumps(a)}" for a in args)
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-L4
      containers:
      - name: vllm
        image: {image}
        args:
{arg_lines}
        resources:
          limits:
            nvidia.com/gpu: {gpus}
{env}{extra_container}"""


# ---------------------------------------------------------------------------------------------------------
# integer and float extremes
# ---------------------------------------------------------------------------------------------------------

@case("numbers", Expect(findings=[("dep.yaml", 17, {"VRL005"})],
                        why="--max-model-len of 40 digits: vLLM's int() takes it and refuses it as over the "
                            "model's maximum; an error on the value's line (17), no crash"))
def k8s_forty_digit_max_model_len(ctx: Ctx):
    w(ctx.tree / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len",
                                         "1" + "0" * 39]))


@case("numbers", Expect(findings=[("dep.yaml", 17, None)],
                        why="--max-num-seqs of 6,000 digits (past Python's int-string limit): vLLM's argparse "
                            "int() raises, so vLLM refuses; a finding on line 17 (any rule), no exit 2"))
def k8s_six_thousand_digit_max_num_seqs(ctx: Ctx):
    w(ctx.tree / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-num-seqs",
                                         "9" * 6000]))


@case("numbers", Expect(findings=[("dep.yaml", 18, None)],
                        why="nvidia.com/gpu: 1e400 in the limits (a float past float64 as a quantity): "
                            "Kubernetes refuses the quantity; a finding on the limits line (18), no crash"))
def k8s_gpu_limit_1e400(ctx: Ctx):
    text = deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]).replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 1e400")
    w(ctx.tree / "dep.yaml", text)


@case("numbers", Expect(findings=[("compose.yaml", 9, None)],
                        why="compose device count: -.inf (YAML's negative infinity): compose-go refuses a count "
                            "that is no integer; a finding on the count line (9)"))
def compose_device_count_negative_inf(ctx: Ctx):
    w(ctx.tree / "compose.yaml", """services:
  llm:
    image: vllm/vllm-openai:v0.9.2
    command: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
    deploy:
      resources:
        reservations:
          devices:
          - count: -.inf
            driver: nvidia
            capabilities: [gpu]
""")


@case("numbers", Expect(findings=[("chart/templates/dep.yaml", None, None)],
                        exits=(0, 1),
                        why="Helm values maxLen: .nan and tp: 0x7fffffffffffffffff (past int64) piped through "
                            "int and mul in the template: no crash; the chart's server is reported or a "
                            "finding says why not, on the chart's files"))
def helm_values_nan_and_hex_overflow(ctx: Ctx):
    w(ctx.tree / "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    w(ctx.tree / "chart/values.yaml", "maxLen: .nan\ntp: 0x7fffffffffffffffff\nmodel: Qwen/Qwen2.5-7B-Instruct\n")
    w(ctx.tree / "chart/templates/dep.yaml", """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.9.2
        args:
        - --model
        - {{ .Values.model }}
        - --max-model-len
        - {{ .Values.maxLen | int | quote }}
        - --tensor-parallel-size
        - {{ mul (.Values.tp | int64) 1024 1024 | quote }}
        resources:
          limits:
            nvidia.com/gpu: 1
""")


def _hub_json(body: bytes, status: int = 200, headers: dict | None = None):
    def answer(h, path):
        if path.endswith("/config.json"):
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(body)
        else:
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
    return answer


HUB_MODEL = "blind21-org/tiny-hostile-model"


def _hub_case(ctx: Ctx, config: bytes, **kw):
    w(ctx.tree / "dep.yaml", deployment(["--model", HUB_MODEL, "--max-model-len", "4096"]))
    ctx.hub = _hub_json(config, **kw)


@case("hub", Expect(unchecked=[("dep.yaml", 11, "num_hidden_layers")],
                    why="Hub config.json with num_hidden_layers 1e308 and hidden_size 2**63: the model is "
                        "unresolved (VRL010 on the --model value, line 15) and nothing is cached"))
def hub_config_float_layers_and_int64_overflow(ctx: Ctx):
    _hub_case(ctx, json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                               "num_hidden_layers": 1e308, "hidden_size": 2 ** 63,
                               "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
                               "intermediate_size": 11008, "max_position_embeddings": 4096,
                               "torch_dtype": "bfloat16"}).encode())
    ctx.checks.append(_cache_has_no_model_answer)


@case("hub", Expect(unchecked=[("dep.yaml", 11, "digits")],
                    why="Hub config.json whose vocab_size is a 5,000-digit JSON integer (past the int-string "
                        "limit: json.loads raises ValueError, not JSONDecodeError): unresolved, VRL010 line 15"))
def hub_config_five_thousand_digit_vocab(ctx: Ctx):
    body = ('{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2, '
            '"hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 512, '
            '"max_position_embeddings": 4096, "torch_dtype": "float16", "vocab_size": ' + "7" * 5000 + "}")
    _hub_case(ctx, body.encode())
    ctx.checks.append(_cache_has_no_model_answer)


@case("hub", Expect(findings=[],
                    why="Hub config.json with ANSI/OSC escapes and '::error::' in model_type and architectures: "
                        "whatever is quoted is escaped (no ESC byte, no workflow-command line)"))
def hub_config_escape_sequences_in_strings(ctx: Ctx):
    _hub_case(ctx, json.dumps({"architectures": ["\x1b]0;owned\x07Llama\nForCausalLM"],
                               "model_type": "\x1b[2J\n::error file=x::injected-by-hub",
                               "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
                               "num_key_value_heads": 4, "intermediate_size": 512, "vocab_size": 1000,
                               "max_position_embeddings": 4096, "torch_dtype": "float16"}).encode())
    ctx.extra_forbidden.append("::error file=x::injected-by-hub")


@case("hub", Expect(unchecked=[("dep.yaml", 11, "redirect")],
                    why="Hub answers 302 to another host (127.0.0.2) on the same port: the redirect is refused "
                        "or followed without the token; the second host never sees HF_TOKEN"))
def hub_redirect_to_other_host_keeps_token(ctx: Ctx):
    w(ctx.tree / "dep.yaml", deployment(["--model", HUB_MODEL, "--max-model-len", "4096"]))

    def answer(h, path):
        host = h.headers.get("Host", "")
        if host.startswith("127.0.0.1"):
            port = h.server.server_address[1]
            h.send_response(302)
            h.send_header("Location", f"http://127.0.0.2:{port}{path}")
            h.send_header("Content-Length", "0")
            h.end_headers()
        else:
            body = b"{}"
            h.send_response(200)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)
    ctx.hub = answer

    def token_not_forwarded(ctx, outputs):
        for host, _path, auth in ctx.hub_log:
            if not host.startswith("127.0.0.1") and TOKEN in (auth or ""):
                return f"token sent to {host}"
        return None
    ctx.checks.append(token_not_forwarded)


@case("hub", Expect(unchecked=[("dep.yaml", 11, "cap")],
                    why="Hub config.json sent chunked with no Content-Length, endless whitespace then an "
                        "object: cut at the cap, unresolved on line 15, in under 5 CPU-s"))
def hub_endless_chunked_body(ctx: Ctx):
    w(ctx.tree / "dep.yaml", deployment(["--model", HUB_MODEL, "--max-model-len", "4096"]))

    def answer(h, path):
        if not path.endswith("/config.json"):
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        h.protocol_version = "HTTP/1.1"
        h.send_response(200)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        chunk = b" " * 65536
        try:
            for _ in range(4096):      # 256 MiB at most
                h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except (BrokenPipeError, ConnectionResetError):
            pass
    ctx.hub = answer


@case("hub", Expect(findings=[],
                    why="--revision ../../../../escaped with a Hub model: refused or asked URL-quoted; nothing "
                        "written outside the cache (the audit hook) and no file named 'escaped' appears"))
def hub_revision_traversal_flag(ctx: Ctx):
    w(ctx.tree / "dep.yaml", deployment(["--model", HUB_MODEL, "--revision", "../../../../escaped",
                                         "--max-model-len", "4096"]))
    ctx.hub = _hub_json(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                    "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
                                    "num_key_value_heads": 4, "intermediate_size": 512, "vocab_size": 1000,
                                    "max_position_embeddings": 4096, "torch_dtype": "float16"}).encode())

    def nothing_escaped(ctx, outputs):
        base = ctx.tree.parent
        found = [str(p) for p in base.rglob("escaped*")]
        return f"written: {found}" if found else None
    ctx.checks.append(nothing_escaped)


# ---------------------------------------------------------------------------------------------------------
# alias and template bombs
# ---------------------------------------------------------------------------------------------------------

def _alias_bomb(levels: int = 12, width: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * width)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


@case("bombs", Expect(findings=[("bomb.yaml", None, {"VRL102"})],
                      why="a kustomization whose resource is a 9**12 alias bomb: VRL102 on bomb.yaml, fast"))
def kustomize_resource_alias_bomb(ctx: Ctx):
    w(ctx.tree / "kustomization.yaml", "resources:\n- bomb.yaml\n- dep.yaml\n")
    w(ctx.tree / "bomb.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n" +
      "".join("  " + ln + "\n" for ln in _alias_bomb().splitlines()))
    w(ctx.tree / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]))


@case("bombs", Expect(findings=[(".vramlint.yaml", None, None)],
                      why="the repository's .vramlint.yaml is an alias bomb under an unknown key: a VRL102 "
                          "on it, defaults apply, the run goes on"))
def config_file_alias_bomb(ctx: Ctx):
    w(ctx.tree / ".vramlint.yaml", "gpu: L4\nx-junk:\n" + "".join("  " + ln + "\n" for ln in _alias_bomb().splitlines()))
    w(ctx.tree / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]))


def _chart(ctx: Ctx, template: str, values: str = "model: Qwen/Qwen2.5-7B-Instruct\n") -> None:
    w(ctx.tree / "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    w(ctx.tree / "chart/values.yaml", values)
    w(ctx.tree / "chart/templates/dep.yaml", template)


CHART_TAIL = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.9.2
        args: ["--model", {{ .Values.model | quote }}]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


@case("bombs", Expect(findings=[("chart/templates/dep.yaml", 1, None)],
                      why="tpl that evaluates itself (values t = '{{ tpl .Values.t . }}'): unbounded recursion; "
                          "bounded by the include/step limits, a finding on the template's line 1"))
def helm_tpl_self_recursion(ctx: Ctx):
    _chart(ctx, "{{ tpl .Values.t . }}\n" + CHART_TAIL,
           values='model: Qwen/Qwen2.5-7B-Instruct\nt: "{{ tpl .Values.t . }}"\n')


@case("bombs", Expect(findings=[("chart/templates/dep.yaml", 1, None)],
                      why="a dict nested 100,000 deep built in a range, then toJson: Python recursion in the "
                          "printer; a finding on line 1, no exit 2"))
def helm_deep_dict_to_json(ctx: Ctx):
    _chart(ctx, '{{- $d := dict }}{{- range until 100000 }}{{- $d = dict "a" $d }}{{- end }}'
                '{{- $j := toJson $d }}\n' + CHART_TAIL)


@case("bombs", Expect(findings=[("chart/templates/dep.yaml", 1, None)],
                      why="a list that holds itself twice, 60 times over (2**60 leaves shared), printed by "
                          "toYaml: bounded by the printed-structure limit, a finding on line 1"))
def helm_shared_list_dag_to_yaml(ctx: Ctx):
    _chart(ctx, '{{- $l := list 1 }}{{- range until 60 }}{{- $l = list $l $l }}{{- end }}'
                '# {{ toYaml $l | sha256sum }}\n' + CHART_TAIL)


@case("bombs", Expect(findings=[("chart/templates/dep.yaml", 1, None)],
                      why="b64enc applied 80 times (4/3 growth: ~10**10 characters): bounded by the string "
                          "limit, a finding on line 1"))
def helm_b64enc_growth(ctx: Ctx):
    _chart(ctx, '{{- $s := "seed-seed-seed" }}{{- range until 80 }}{{- $s = b64enc $s }}{{- end }}'
                '# {{ len $s }}\n' + CHART_TAIL)


@case("bombs", Expect(findings=[("start.sh", None, None)],
                      why="a script whose vllm serve line holds 32 brace expansions {a,b} (2**32 words): "
                          "bounded, a finding on the script, fast"))
def script_brace_expansion_bomb(ctx: Ctx):
    braces = "{a,b}" * 32
    w(ctx.tree / "start.sh", f"#!/bin/bash\nexec vllm serve Qwen/Qwen2.5-7B-Instruct --served-model-name x{braces}\n")
    w(ctx.tree / "compose.yaml", """services:
  llm:
    image: vllm/vllm-openai:v0.9.2
    entrypoint: ["/bin/bash", "/app/start.sh"]
    volumes: ["./start.sh:/app/start.sh"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}
""")


# ---------------------------------------------------------------------------------------------------------
# large but legal
# ---------------------------------------------------------------------------------------------------------

@case("large", Expect(findings=[("dep.yaml", None, None)],
                      why="one container with 120,000 env entries (4.6 MB): the server is checked, in under 5 s"))
def k8s_120k_env_entries(ctx: Ctx):
    env = "        env:\n" + "".join(f"        - {{name: E{i}, value: \"v\"}}\n" for i in range(120000))
    w(ctx.tree / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"], env=env))


@case("large", Expect(findings=[("list.json", 1, None)],
                      why="a minified kind: List JSON of 6,000 Deployments on one 4.5 MB line: each server "
                          "checked (findings on line 1), in under 5 s"))
def k8s_minified_list_one_line(ctx: Ctx):
    item = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "v"},
            "spec": {"template": {"spec": {"containers": [{
                "name": "vllm", "image": "vllm/vllm-openai:v0.9.2",
                "args": ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "32768",
                         "--gpu-memory-utilization", "0.95", "--padding-padding-padding", "x" * 400],
                "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
    items = []
    for i in range(6000):
        it = json.loads(json.dumps(item))
        it["metadata"]["name"] = f"v{i}"
        items.append(it)
    w(ctx.tree / "list.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": items},
                                         separators=(",", ":")))
    # a folder's walk reads *.yaml / *.yml only (kubectl -f DIR also reads *.json): named, after the first run
    ctx.paths = [str(ctx.tree / "list.json")]


@case("large", Expect(findings=[("big.yaml", 1, {"VRL102"})],
                      why="a 1 GiB sparse big.yaml (mostly NUL bytes): over the size cap, a VRL102 warning on "
                          "line 1, not read"))
def sparse_one_gib_manifest(ctx: Ctx):
    p = ctx.tree / "big.yaml"
    with open(p, "wb") as f:
        f.write(b"apiVersion: v1\nkind: ConfigMap\n# vllm serve\n")
        f.truncate(1 << 30)
    w(ctx.tree / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]))


# ---------------------------------------------------------------------------------------------------------
# non-regular files, links out of the tree, in every place a file can be named
# ---------------------------------------------------------------------------------------------------------

@case("outside", Expect(findings=[("compose.yaml", 6, {"VRL102"})],
                        why="compose env_file in the long syntax ({path: ..., required: false}) naming a link "
                            "to /proc/self/environ: a VRL102 warning on the path line (6), not read"))
def compose_env_file_long_syntax_proc_environ(ctx: Ctx):
    os.symlink("/proc/self/environ", ctx.tree / "runtime.env")
    w(ctx.tree / "compose.yaml", """services:
  llm:
    image: vllm/vllm-openai:v0.9.2
    command: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "${MAXLEN:-4096}"]
    env_file:
      - path: ./runtime.env
        required: false
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}
""")


@case("outside", Expect(findings=[("compose.yaml", 3, None), ("compose.yaml", 4, None)],
                        why="compose include (long syntax) whose path list holds a file outside and a FIFO: "
                            "a warning on the include lines, nothing read, no block"))
def compose_include_long_syntax_outside_and_fifo(ctx: Ctx):
    w(ctx.outside / "other.yaml", f"services:\n  x:\n    image: vllm/vllm-openai:v0.9.2\n    command: [\"--model\", \"{ctx.sentinel}\"]\n")
    os.mkfifo(ctx.tree / "pipe.yaml")
    w(ctx.tree / "compose.yaml", f"""include:
  - path:
      - {ctx.outside / 'other.yaml'}
      - ./pipe.yaml
services:
  llm:
    image: vllm/vllm-openai:v0.9.2
    command: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
""")


@case("outside", Expect(findings=[("compose.yaml", None, None)],
                        why="compose extends.file naming a link to a folder link to / (root/etc/passwd): not "
                            "read, a finding on the extends, no walk of /"))
def compose_extends_through_dir_link_to_root(ctx: Ctx):
    os.symlink("/", ctx.tree / "root")
    w(ctx.tree / "compose.yaml", """services:
  llm:
    extends:
      file: root/etc/passwd
      service: base
    image: vllm/vllm-openai:v0.9.2
    command: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
""")


@case("outside", Expect(findings=[("compose.yaml", None, None)],
                        why="a --config file reached through a compose bind mount of a link to a file "
                            "outside (which holds the sentinel as the model): not read, a finding on the "
                            "service, the sentinel never quoted"))
def compose_config_bind_mount_link_outside(ctx: Ctx):
    w(ctx.outside / "vllm.yaml", f"model: {ctx.sentinel}\nmax-model-len: 777777\n")
    os.symlink(ctx.outside / "vllm.yaml", ctx.tree / "vllm.yaml")
    w(ctx.tree / "compose.yaml", """services:
  llm:
    image: vllm/vllm-openai:v0.9.2
    command: ["--config", "/etc/vllm/vllm.yaml"]
    volumes:
      - ./vllm.yaml:/etc/vllm/vllm.yaml:ro
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}
""")


@case("outside", Expect(findings=[(".vramlint.yaml", None, None)],
                        why=".vramlint.yaml's helm-values naming a file outside and /dev/zero: neither read, a "
                            "finding on the configuration's lines, the chart still checked"))
def config_helm_values_outside_and_dev_zero(ctx: Ctx):
    w(ctx.outside / "values.yaml", f"model: {ctx.sentinel}\n")
    w(ctx.tree / ".vramlint.yaml", f"helm-values:\n  - {ctx.outside / 'values.yaml'}\n  - /dev/zero\n")
    _chart(ctx, CHART_TAIL)


@case("outside", Expect(findings=[(".vramlint.yaml", None, None)],
                        why=".vramlint.yaml's model-aliases mapping a model to /proc/self/environ and to a "
                            "config.json outside: not read, a finding on the configuration"))
def config_model_aliases_outside(ctx: Ctx):
    w(ctx.outside / "config.json", json.dumps({"model_type": ctx.sentinel}))
    w(ctx.tree / ".vramlint.yaml", f"model-aliases:\n  served-a: /proc/self/environ\n  served-b: {ctx.outside / 'config.json'}\n")
    w(ctx.tree / "a.yaml", deployment(["--model", "served-a"]))
    w(ctx.tree / "b.yaml", deployment(["--model", "served-b"]))


@case("outside", Expect(findings=[(".vramlint.yaml", 1, None)],
                        unchecked=[("chart/templates/dep.yaml", 9, "names no model")],
                        why=".Files.Get of a link to the sentinel file outside, with render-helm turned on by "
                            "the repository's .vramlint.yaml: Helm not run (a note on the config), the "
                            "template's .Files.Get unknown, the sentinel never quoted"))
def helm_files_get_link_with_repo_render_helm(ctx: Ctx):
    w(ctx.tree / ".vramlint.yaml", "render-helm: true\n")
    _chart(ctx, CHART_TAIL.replace('{{ .Values.model | quote }}', '{{ .Files.Get "model.txt" | trim | quote }}'))
    os.symlink(ctx.outside / "sentinel.txt", ctx.tree / "chart/model.txt")


@case("outside", Expect(findings=[("chart/values.yaml", None, None)],
                        why="a chart whose values.yaml is a link out of the tree and whose templates/ folder "
                            "holds a FIFO: neither read, no block, a finding on each"))
def helm_values_link_out_and_template_fifo(ctx: Ctx):
    w(ctx.outside / "values.yaml", f"model: {ctx.sentinel}\n")
    w(ctx.tree / "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    os.symlink(ctx.outside / "values.yaml", ctx.tree / "chart/values.yaml")
    w(ctx.tree / "chart/templates/dep.yaml", CHART_TAIL)
    os.mkfifo(ctx.tree / "chart/templates/pipe.yaml")


@case("outside", Expect(findings=[("kustomization.yaml", 2, None)],
                        why="kustomize resources naming ../outside/dep.yaml (a real server whose model is the "
                            "sentinel) by a relative path that leaves the tree: a finding on line 2, not read"))
def kustomize_resource_relative_outside(ctx: Ctx):
    w(ctx.outside / "dep.yaml", deployment(["--model", ctx.sentinel]))
    w(ctx.tree / "kustomization.yaml", "resources:\n- ../outside/dep.yaml\n- local.yaml\n")
    w(ctx.tree / "local.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]))


@case("outside", Expect(findings=[("kustomization.yaml", None, None)],
                        why="kustomize resources naming a folder link to / and a patch that is /dev/zero: "
                            "not walked, not read, findings on the kustomization"))
def kustomize_dir_link_root_and_dev_zero_patch(ctx: Ctx):
    os.symlink("/", ctx.tree / "everything")
    w(ctx.tree / "kustomization.yaml", "resources:\n- everything\n- local.yaml\npatches:\n- path: /dev/zero\n")
    w(ctx.tree / "local.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]))


@case("outside", Expect(findings=[("vllm.service", 5, None)],
                        why="systemd EnvironmentFile= an absolute path in the tree that is a link to "
                            "/proc/self/environ: not read (a finding on its line), the token never shown"))
def systemd_environment_file_link_to_proc(ctx: Ctx):
    os.symlink("/proc/self/environ", ctx.tree / "vllm.env")
    w(ctx.tree / "vllm.service", f"""[Unit]
Description=vLLM server

[Service]
EnvironmentFile={ctx.tree / 'vllm.env'}
ExecStart=/usr/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len ${{MAXLEN}}
Environment=CUDA_VISIBLE_DEVICES=0

[Install]
WantedBy=multi-user.target
""")


@case("outside", Expect(findings=[("Dockerfile", None, None)],
                        why="a Dockerfile COPYing a launcher that is a link to a script outside (whose model "
                            "is the sentinel) and running it: the script not read, a note on the Dockerfile"))
def dockerfile_copy_script_link_outside(ctx: Ctx):
    w(ctx.outside / "start.sh", f"#!/bin/sh\nexec vllm serve {ctx.sentinel} --max-model-len 99\n")
    os.symlink(ctx.outside / "start.sh", ctx.tree / "start.sh")
    w(ctx.tree / "Dockerfile", "FROM vllm/vllm-openai:v0.9.2\nCOPY start.sh /start.sh\nENTRYPOINT [\"/bin/sh\", \"/start.sh\"]\n")


@case("outside", Expect(findings=[("compose.yaml", None, None)],
                        why="a compose service running a script bind-mounted from a FIFO in the tree: no "
                            "block, a finding on the service"))
def compose_script_is_fifo(ctx: Ctx):
    os.mkfifo(ctx.tree / "run.sh")
    w(ctx.tree / "compose.yaml", """services:
  llm:
    image: vllm/vllm-openai:v0.9.2
    entrypoint: ["/bin/bash", "/srv/run.sh"]
    volumes: ["./run.sh:/srv/run.sh"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}
""")


@case("outside", Expect(findings=[("start.sh", None, None)],
                        why="a launcher script that sources a link to /proc/self/environ and a file outside "
                            "by ../ before vllm serve $MODEL: neither read, MODEL unknown, said on the script"))
def script_sources_proc_environ(ctx: Ctx):
    w(ctx.outside / "model.env", f"MODEL={ctx.sentinel}\n")
    os.symlink("/proc/self/environ", ctx.tree / "secrets.env")
    w(ctx.tree / "start.sh", "#!/bin/bash\nset -e\n. ./secrets.env\nsource ../outside/model.env\n"
                             "exec vllm serve \"$MODEL\" --max-model-len 4096\n")
    w(ctx.tree / "compose.yaml", """services:
  llm:
    image: vllm/vllm-openai:v0.9.2
    entrypoint: ["/bin/bash", "/app/start.sh"]
    volumes: ["./start.sh:/app/start.sh"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}
""")


@case("outside", Expect(findings=[("dep.yaml", None, None)],
                        why="the scanned tree holds a folder link to .. (the case folder, with outside/): "
                            "not walked, the sentinel's server never reported"))
def tree_dir_link_to_parent(ctx: Ctx):
    w(ctx.outside / "dep.yaml", deployment(["--model", ctx.sentinel]))
    os.symlink("..", ctx.tree / "up")
    w(ctx.tree / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]))


# ---------------------------------------------------------------------------------------------------------
# secrets
# ---------------------------------------------------------------------------------------------------------

@case("secrets", Expect(findings=[(".vramlint.yaml", 2, None), (".vramlint.yaml", 3, None)],
                        why="the repository's .vramlint.yaml has an unknown key that is a Hub token, and a "
                            "gpu: value that is a token: said on their lines, the token masked everywhere"))
def config_key_is_a_token(ctx: Ctx):
    w(ctx.tree / ".vramlint.yaml", f"gpu: L4\n{IN_TREE_TOKEN}: 1\nvllm-version: {IN_TREE_TOKEN}x\n")
    w(ctx.tree / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]))
    ctx.extra_forbidden.append(IN_TREE_TOKEN)


@case("secrets", Expect(findings=[("dep.yaml", 18, {"VRL009"})],
                        why="a token written as the model name and as a served-model-name in args: whatever "
                            "quotes them masks them, in every format"))
def token_as_model_name(ctx: Ctx):
    w(ctx.tree / "dep.yaml", deployment(["--model", IN_TREE_TOKEN, "--served-model-name", f"x-{IN_TREE_TOKEN}",
                                         "--bogus-flag", IN_TREE_TOKEN]))
    ctx.extra_forbidden.append(IN_TREE_TOKEN)


# ---------------------------------------------------------------------------------------------------------
# file names
# ---------------------------------------------------------------------------------------------------------

@case("names", Expect(findings=[("pwned.yaml", 16, {"VRL009"})],
                      why="a manifest named 'x\\n::error file=a,line=1::owned|c\\x1b[31m pwned.yaml' with an "
                          "unknown flag: the finding is on it, no injected workflow command, no ESC, tables "
                          "intact"))
def file_name_newline_workflow_ansi_pipe(ctx: Ctx):
    name = "x\n::error file=a,line=1::owned|c\x1b[31m pwned.yaml"
    w(ctx.tree / name, deployment(["--model", "Qwen/Qwen2.5-7B-Instruct", "--no-such-flag-b21"]))


@case("names", Expect(findings=[("dep.yaml", 16, {"VRL009"})],
                      why="a folder name holding '##[' and a bidi override (U+202E) above the manifest: "
                          "escaped in every format, the finding on the file"))
def folder_name_runner_command_bidi(ctx: Ctx):
    d = ctx.tree / "##[group]evil\u202e"
    w(d / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct", "--no-such-flag-b21"]))


# ---------------------------------------------------------------------------------------------------------
# the repository's configuration
# ---------------------------------------------------------------------------------------------------------

@case("config", Expect(findings=[("pyproject.toml", 2, None), ("pyproject.toml", 3, None)],
                       why="pyproject.toml [tool.vramlint] with rules-dir and render-helm, the rules folder "
                           "holding a rule that writes a marker: never imported, said on the lines"))
def pyproject_rules_dir_and_render_helm(ctx: Ctx):
    w(ctx.tree / "evil/evil_rule.py", f"open({str(ctx.tree.parent / 'PWNED')!r}, 'w').write('x')\n")
    w(ctx.tree / "pyproject.toml", "[tool.vramlint]\nrender-helm = true\nrules-dir = \"evil\"\n")
    w(ctx.tree / "dep.yaml", deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]))

    def not_imported(ctx, outputs):
        return "the repository's rule ran" if (ctx.tree.parent / "PWNED").exists() else None
    ctx.checks.append(not_imported)


# ---------------------------------------------------------------------------------------------------------
# nesting, encodings, duplicate keys, line breaks
# ---------------------------------------------------------------------------------------------------------

@case("encoding", Expect(findings=[("compose.yaml", 6, None)],
                         why="a compose file with an x- extension nested 50,000 flow sequences deep on line 6: "
                             "a finding on line 6 (where it goes too deep), not 1:1"))
def compose_deep_flow_nesting(ctx: Ctx):
    w(ctx.tree / "compose.yaml", "services:\n  llm:\n    image: vllm/vllm-openai:v0.9.2\n"
      "    command: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\"]\n\nx-deep: " + "[" * 50000 + "]" * 50000 + "\n")


@case("encoding", Expect(findings=[("dep.yaml", None, {"VRL102"})],
                         why="a manifest in UTF-32 LE with a BOM (FF FE 00 00, which begins with UTF-16 LE's "
                             "FF FE): go-yaml reads UTF-8 and UTF-16 only, so kubectl decodes it as UTF-16 and "
                             "meets NULs; a VRL102 on the file, not skipped silently as binary"))
def utf32_manifest(ctx: Ctx):
    text = deployment(["--model", "Qwen/Qwen2.5-7B-Instruct", "--no-such-flag-b21"])
    w(ctx.tree / "dep.yaml", "\ufeff".encode("utf-32-le") + text.encode("utf-32-le"))


@case("encoding", Expect(findings=[("dep.yaml", 15, None)],
                         why="a raw NUL byte inside a double-quoted arg on line 15: YAML forbids it there, "
                             "a finding on line 15 (not 1, not skipped as binary)"))
def nul_byte_in_quoted_arg(ctx: Ctx):
    text = deployment(["--model", "Qwen/Qwen2.5-7B-Instruct"]).replace('"Qwen/Qwen2.5-7B-Instruct"',
                                                                          '"Qwen/Qwen2.5-7B\x00-Instruct"')
    w(ctx.tree / "dep.yaml", text)


@case("encoding", Expect(findings=[("dep.yaml", 21, None)],
                         why="nvidia.com/gpu written twice under limits (8 on line 20, then 1 on line 21) with "
                             "TP 8: kubectl's strict decoding refuses the duplicate, a lax reader keeps the "
                             "last (1 GPU for TP 8); either way a finding on line 21, never a clean pass on 8"))
def duplicate_gpu_limit_keys(ctx: Ctx):
    text = deployment(["--model", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "8"], gpus=8)
    text = text.replace("nvidia.com/gpu: 8\n", "nvidia.com/gpu: 8\n            nvidia.com/gpu: 1\n")
    w(ctx.tree / "dep.yaml", text)


@case("encoding", Expect(findings=[("dep.yaml", 16, {"VRL009"})],
                         why="a manifest with CR-only line ends (old Mac): YAML reads CR as a line break, so "
                             "the unknown flag is on line 16"))
def cr_only_line_ends(ctx: Ctx):
    text = deployment(["--model", "Qwen/Qwen2.5-7B-Instruct", "--no-such-flag-b21"])
    w(ctx.tree / "dep.yaml", text.replace("\n", "\r").encode())


# ---------------------------------------------------------------------------------------------------------
# the harness
# ---------------------------------------------------------------------------------------------------------

class _HubServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def _start_hub(ctx: Ctx):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ctx.hub_log.append((self.headers.get("Host", ""), self.path, self.headers.get("Authorization")))
            try:
                ctx.hub(self, self.path.split("?")[0])
            except (BrokenPipeError, ConnectionResetError):
                pass
        do_HEAD = do_GET

        def log_message(self, *a):
            pass
    server = _HubServer(("0.0.0.0", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _cache_has_no_model_answer(ctx: Ctx, outputs):
    for p in ctx.cache.rglob("*"):
        if p.is_file() and b"tiny-hostile-model" in p.read_bytes() and b"LlamaForCausalLM" in p.read_bytes():
            return f"the refused answer was cached: {p}"
    return None


WORKFLOW_LINE = re.compile(r"^\s*(::|.*##\[)")
OWN_ANNOTATION = re.compile(r"^::(error|warning|notice) (file|title)=")


def _check_outputs(name: str, ctx: Ctx, expect: Expect, code: int, stdout: str, stderr: str) -> list[str]:
    problems = []
    if code not in expect.exits:
        problems.append(f"exit {code}, expected {expect.exits}")
    if "Traceback" in stderr:
        problems.append("traceback on stderr")
    outputs = {"stdout(text)": stdout, "stderr": stderr}
    for fmt, fname in (("json", "r.json"), ("sarif", "r.sarif"), ("github", "r.github"), ("markdown", "r.md"),
                       ("text-file", "r.txt")):
        p = ctx.out / fname
        outputs[fmt] = p.read_text(errors="replace") if p.exists() else ""
    cache_text = ""
    for p in ctx.cache.rglob("*"):
        if p.is_file():
            cache_text += p.read_bytes().decode("utf-8", "replace")
    outputs["cache"] = cache_text
    forbidden = [TOKEN, ctx.sentinel] + ctx.extra_forbidden
    for where, text in outputs.items():
        for s in forbidden:
            if s in text:
                problems.append(f"{s[:30]!r} in {where}")
    for where in ("stdout(text)", "stderr", "markdown", "text-file"):
        text = outputs[where]
        if "\x1b" in text:
            problems.append(f"raw ESC in {where}")
        for line in text.splitlines():
            if WORKFLOW_LINE.match(line):
                problems.append(f"workflow-command line in {where}: {line[:80]!r}")
                break
    for line in outputs["github"].splitlines():
        if line.startswith("::") and not OWN_ANNOTATION.match(line):
            problems.append(f"foreign workflow command in github output: {line[:80]!r}")
            break
    md = outputs["markdown"]
    for block in re.split(r"\n(?!\|)", md):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        if rows:
            cols = {len(re.findall(r"(?<!\\)\|", r)) for r in rows}
            if len(cols) > 1:
                problems.append(f"markdown table broken: rows with {sorted(cols)} cell separators")
                break
    findings = []
    if outputs["json"]:
        try:
            findings = json.loads(outputs["json"]).get("findings", [])
        except ValueError as e:
            problems.append(f"json report unreadable: {e}")
    elif code in (0, 1):
        problems.append("no json report")
    for file, line, rules in expect.findings:
        hit = [f for f in findings if str(f.get("file", "")).endswith(file)
               and (line is None or f.get("line") == line) and (rules is None or f.get("rule") in rules)]
        if not hit:
            near = [(f.get("file"), f.get("line"), f.get("rule")) for f in findings][:4]
            problems.append(f"no finding on {file}:{line or '*'} {sorted(rules) if rules else ''} (got {near})")
    unchecked = []
    if outputs["json"]:
        try:
            unchecked = json.loads(outputs["json"]).get("summary", {}).get("unchecked", [])
        except ValueError:
            pass
    for file, line, text in expect.unchecked:
        if not any(any(s.endswith(f"{file}:{line}") for s in u.get("servers", [])) and text in u.get("message", "")
                   for u in unchecked):
            problems.append(f"no unchecked cause for {file}:{line} saying {text!r}")
    for check in ctx.checks:
        msg = check(ctx, outputs)
        if msg:
            problems.append(msg)
    return problems


def run_case(name, category, expect, build, keep: bool) -> dict:
    base = Path(tempfile.mkdtemp(prefix=f"b21-{name[:20]}-"))
    ctx = Ctx(tree=base / "tree", outside=base / "outside", cache=base / "cache", out=base / "out",
              sentinel=f"SENTINEL-B21-{name}-OUTSIDE-TEXT")
    for d in (ctx.tree, ctx.outside, ctx.cache, ctx.out, base / "home"):
        d.mkdir()
    w(ctx.outside / "sentinel.txt", ctx.sentinel + "\n")
    build(ctx)
    server = _start_hub(ctx) if ctx.hub else None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "VRAMLINT", "XDG_", "GITHUB_"))}
    env.update({"HF_TOKEN": TOKEN, "XDG_CACHE_HOME": str(ctx.cache), "HOME": str(base / "home"),
                "B21_AUDIT_OUT": str(ctx.out / "audit.txt"), "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    if server:
        env["HF_ENDPOINT"] = f"http://127.0.0.1:{server.server_address[1]}"
    else:
        env["HF_HUB_OFFLINE"] = "1"
    import vramlint
    py_roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                str(Path(vramlint.__file__).resolve().parent.parent)}
    py_roots |= {p for p in sys.path if p and p.startswith("/usr")}
    allowed_read = [str(ctx.tree), str(ctx.cache), str(ctx.out), str(base / "home"), *sorted(py_roots),
                    "/etc/localtime", "/usr/share/zoneinfo", "/etc/ssl", "/usr/lib/ssl", "/etc/os-release",
                    "/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf",
                    "/sys/fs/cgroup", "/proc/self/cgroup", "/proc/cpuinfo", "/proc/self/status",
                    "/proc/self/statm", "/proc/meminfo", "/sys/devices/system/cpu", "/proc/stat",
                    "/proc/self/mountinfo", "/proc/self/stat", tempfile.gettempdir() + "/" + "tmp-b21-none"]
    env["B21_ALLOWED_READ"] = os.pathsep.join(allowed_read)
    env["B21_ALLOWED_WRITE"] = os.pathsep.join([str(ctx.cache), str(ctx.out),
                                                str(Path(vramlint.__file__).resolve().parent / "__pycache__")])
    cmd = [sys.executable, "-c", AUDIT_BOOT, "check", *(ctx.paths or [str(ctx.tree)]), *ctx.args,
           "--output-format", "json", "--output-file", str(ctx.out / "r.json"),
           "--output-format", "sarif", "--output-file", str(ctx.out / "r.sarif"),
           "--output-format", "github", "--output-file", str(ctx.out / "r.github"),
           "--output-format", "markdown", "--output-file", str(ctx.out / "r.md"),
           "--output-format", "text", "--output-file", str(ctx.out / "r.txt"),
           "--output-format", "text"]

    def limits():
        import resource
        resource.setrlimit(resource.RLIMIT_CPU, (40, 45))
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        proc = subprocess.Popen(cmd, stdout=so, stderr=se, env=env, cwd=str(base), preexec_fn=limits)
        deadline = t0 + 120
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - t0
        so.seek(0)
        se.seek(0)
        stdout = so.read().decode("utf-8", "replace")
        stderr = se.read().decode("utf-8", "replace")
    if server:
        server.shutdown()
    cpu = ru.ru_utime + ru.ru_stime
    rss_mb = ru.ru_maxrss / 1024
    problems = _check_outputs(name, ctx, expect, proc.returncode, stdout, stderr)
    if cpu > CPU_LIMIT_S:
        problems.append(f"{cpu:.1f} CPU-s")
    if rss_mb > RSS_LIMIT_MB:
        problems.append(f"{rss_mb:.0f} MB")
    audit = (ctx.out / "audit.txt").read_text().splitlines() if (ctx.out / "audit.txt").exists() else []
    # the configuration is searched from the scanned folder upward (docs/security.md): listing an ancestor of
    # the tree is that search, not a read (allowed after the first run, where every case was failed for it)
    ancestors = {str(p) for p in ctx.tree.parents}
    audit = [a for a in audit if not (a.startswith("list ") and a[5:] in ancestors)]
    bad = [a for a in audit if a.startswith(("write ", "run ")) or
           any(s in a for s in (str(ctx.outside), "/environ", "/dev/", "/etc/passwd", str(base / "PWNED")))
           or (a.startswith(("read ", "list ")) and not ctx.allow_run)]
    if bad:
        more = f" +{len(bad) - 3}" if len(bad) > 3 else ""
        problems.append(f"audit: {bad[:3]}{more}")
    try:
        first = json.loads((ctx.out / "r.json").read_text())["findings"][0]
        first = f"{first['file'][-30:]}:{first['line']} {first['rule']} {first['message'][:70]}"
    except (OSError, ValueError, KeyError, IndexError):
        first = (stderr.strip().splitlines() or ["-"])[-1][:100]
    if not keep:
        shutil.rmtree(base, ignore_errors=True)
    return {"name": name, "category": category, "exit": proc.returncode, "cpu": cpu, "rss": rss_mb, "wall": wall,
            "problems": problems, "first": first, "dir": str(base) if keep else ""}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", default="", help="run only the cases whose name holds this")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--list", action="store_true", help="list the cases and their expectations")
    opts = ap.parse_args()
    selected = [c for c in CASES if opts.k in c[0]]
    if opts.list:
        for name, cat, exp, _ in selected:
            print(f"{cat:9} {name}\n          {exp.why}")
        return 0
    results = []
    for name, cat, exp, build in selected:
        r = run_case(name, cat, exp, build, opts.keep)
        results.append(r)
        mark = "PASS" if not r["problems"] else "FAIL"
        print(f"{mark} {cat:8} {name:48} exit {r['exit']} {r['cpu']:5.2f} CPU-s {r['rss']:5.0f} MB  {r['first']}")
        for p in r["problems"]:
            print(f"       - {p}")
        if r["dir"]:
            print(f"       {r['dir']}")
        sys.stdout.flush()
    passed = sum(1 for r in results if not r["problems"])
    print(f"\n{passed} passed / {len(results)}; max {max(r['cpu'] for r in results):.2f} CPU-s, "
          f"max {max(r['rss'] for r in results):.0f} MB; load {os.getloadavg()[0]:.1f}")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
