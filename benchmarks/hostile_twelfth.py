"""A ninth round of hostile inputs, of kinds the earlier rounds do not try, judged as `hostile_fresh.py` judges.

    python3 benchmarks/hostile_twelfth.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Kinds the earlier rounds (`hostile_*.py`) do not have: inputs shaped for the regular expressions vramlint applies
to scanned text (a line of a million blanks before `vllm`, a million-digit resource quantity, a version of a
million `-dev` parts in a pin, a `.vramlint.yaml` and a Dockerfile, a TOML table header holding a million
blanks, a million unclosed `{{` and `%{` on one line); one 4.8 MB shell line of 300,000 words; a million comment
lines before a Deployment and a million `:` lines before `vllm serve`; 60 files of 90 KB whose every ConfigMap
holds a `!!str` tag (each file cheap, all of them together not); compose `${V0:-${V1:-...}}` nested 10,000 deep
in the command itself and `${A}` written 400,000 times; a template of 90,000 documents, `fail` and `required`
with escape sequences and a 100,000-character message, `.Files.Glob` over 20,000 files, a chart of 20,000
templates, a 20,000-long field chain, `required` in a server's own args; a script named by an absolute path
through a mount of `..`, `source /dev/stdin`, `. /dev/fd/0`, `mapfile < /proc/self/environ`, `read -u 3` of a
file outside, a script with CR-only line ends (one comment to the shell); a suppression comment naming 500,000
rules; 5,000 unknown `.vramlint.yaml` keys holding OSC 8 links and `::stop-commands::`; a literal Hub token in
`--api-key`, in a URL's userinfo and in `HUGGING_FACE_HUB_TOKEN`; numbers in the forms Python reads and vLLM's
argparse refuses or accepts (`0x10`, `١٢٨`, `1_000`, `-0`, `+inf`); flag names written with an em dash, a
full-width hyphen, U+2010 and U+2212; NUL inside a flag value; typed YAML 1.1 values in a vLLM `--config` file
(`0x10000`); a file whose size changes while it is read; escapes in compose service and container names; and
a hostile Hub on 127.0.0.1 (an error answer that echoes the token it was sent, a Content-Length that lies,
4,096 shards of 8 MiB headers, a config.json with escape sequences and duplicate keys).

Each case runs `vramlint check . --offline` (the Hub cases: `vramlint check .` with HF_ENDPOINT on the case's own
server) with `hostile_fresh.run_case` (every output format, the planted secrets, the audit hook) and
`hostile_unseen.extra_problems`. Checks added here: `__literal__` (strings of the scanned files that are secrets
and must appear in no output), `__grow__` (a file rewritten by a thread of the harness, growing and shrunk, for
the whole run) and `__says__` (text the text report or stderr must hold). The cases and their expectations were
written and committed before their first run.

First run (`python3 benchmarks/hostile_twelfth.py --cpu-time`, at 15d070a): 23/34 within the limits. The 11 that
were not: a million-digit `nvidia.com/gpu` quantity (killed at 60 s: the quantity pattern ran before its length
check, and no finding says the API server refuses it), a version of 250,000 `-dev` parts (killed at 60 s), a TOML
table header holding a million blanks (killed at 60 s), 60 files of 90 KB with `!!str` tags (killed at 60 s,
37.7 CPU-s: each tagged document went to ruamel's pure-Python load), compose `${V0:-...}` nested 10,000 deep in
a command (exit 0 and nothing said), `${A}` written 400,000 times (7.4 CPU-s), a `fail` message whose newline
and `::error::` the GitHub runner decodes into a second workflow command, a script named by an absolute path
through a mount said on the service's line (2) rather than the entrypoint's (4), a suppression naming 500,000
rules (48 CPU-s, 488 MB), a literal Hub token and a URL password quoted in the text and JSON reports, and a Hub
config.json with escapes and duplicate keys after which the run does not say the model.

Two expectations were wrong, not vramlint (corrected below, each said where it is): the config.json with escapes
and duplicate keys is resolved as transformers reads it, so no model is left to name; and the 4,096 shards of
8 MiB headers leave the weights computed from the architecture (the run's 5 s for Hub requests), again with no
unresolved model to name. The case of the mention after a million blanks passed because YAML's indentation bound
refuses the line first; the same pattern was quadratic on a run of no-break spaces (found while reading it,
in-sample, fixed with a test). After the fixes (at e987531, the same command): 33/34, the one left
hub-4096-shards-8MiB-headers on its wrong `__says__` alone; with it corrected, 34/34 (that case rerun:
`--case hub-4096-shards-8MiB-headers`, 2.6 CPU-s, 119 MB). Closest to the limits after: chart-20k-templates 4.76
CPU-s (20,000 template files read and parsed before the chart's 2 s stop them), script-one-line-4.8MB 3.39 CPU-s
and 198 MB, files-60-tagged-90KB 3.18 CPU-s, script-1M-noop-lines 3.12 CPU-s.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fresh as f  # noqa: E402  (the harness of the third round)
import hostile_inputs as h  # noqa: E402
import hostile_unseen as u  # noqa: E402

QWEN = f.QWEN
deployment = h.deployment
expect = f.expect
line_of = f.line_of
chart = f.chart
CHART_TEMPLATE = h.CHART_TEMPLATE
COMPOSE_HEAD = h.COMPOSE_HEAD
GPU_RESERVATION = "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n"
SERVE_BAD = "vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999"
HUB_MODEL = "evil-org/hostile-model"  # not in the catalog: asked of the Hub
LITERAL = "hf_LiteralTokenWrittenInTheRepo0123456789"  # a token a careless repository holds in its own files
LITERAL_PASSWORD = "s3cr3t-Passw0rd-in-a-url-7c41"


def _bad() -> tuple[str, tuple[int, int]]:
    """A Deployment vLLM refuses (max-model-len over Qwen2.5-1.5B's 32,768) and the lines of its flag and value."""
    text = deployment(QWEN + ["--max-model-len", "999999"])
    at = line_of(text, '"999999"')
    return text, (at - 1, at)


def _arg_line(text: str, needle: str) -> tuple[int, int]:
    at = line_of(text, needle)
    return (at, at + 1)


def twelfth_cases() -> dict[str, dict[str, Any]]:  # noqa: C901  (one block per case)
    out: dict[str, dict[str, Any]] = {}
    bad, bad_lines = _bad()

    # ------------------------------------------------------------------ regular expressions on scanned text
    # extract/mentions.py reads each line of a file that names vLLM but gave no server with `^\s*-?\s*(image|...)`:
    # two runs of blanks side by side backtrack quadratically over a line of blanks
    notes = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  readme: first\n"
             + " " * 1_000_000 + "vllm serve later\n")
    out["regex-mentions-leading-blanks"] = {"notes.yaml": notes, "deploy.yaml": bad,
                                            "__expect__": expect(("deploy.yaml", bad_lines))}
    # k8s_required._quantity fullmatches `[0-9]+\.?[0-9]*` before it checks the length: quadratic on digits
    digits = "9" * 1_000_000 + "x"
    quant = deployment(QWEN).replace('              nvidia.com/gpu: "1"\n',
                                     f'              nvidia.com/gpu: "{digits}"\n            requests:\n'
                                     f'              nvidia.com/gpu: "{digits}"\n')
    # the API server cannot decode the quantity: the object is refused, on the limit's line (or the request's)
    out["regex-quantity-1M-digits"] = {"deploy.yaml": quant,
                                       "__expect__": expect(("deploy.yaml", (line_of(quant, "nvidia.com/gpu"),
                                                                             line_of(quant, "nvidia.com/gpu", 2))))}
    # versions._VERSION_RE: `(?:[.-]?(?:post|rc|dev|a|b)\d*)*` then `(?:-[\w.-]+)?$`: each split of the run is tried
    runs = "0.8.5" + "-dev" * 250_000 + "!"
    out["regex-version-runs-pin-config-dockerfile"] = {
        ".vramlint.yaml": f"vllm-version: '{runs}'\n",
        "Dockerfile": f"FROM python:3.12\nRUN pip install vllm=={runs}\nENTRYPOINT {SERVE_BAD}\n",
        "compose.yaml": "services:\n  vllm:\n    build: {context: ., dockerfile: Dockerfile}\n" + GPU_RESERVATION,
        "deploy.yaml": bad,
        # not a version vramlint knows: said on the configuration's line, which is then not applied
        "__expect__": expect((".vramlint.yaml", 1, "VRL102"), ("deploy.yaml", bad_lines))}
    # config._TOML_HEADER `^\s*(\[\[?)\s*(.+?)\s*(\]\]?)...`: the lazy name walks the blanks and `\s*` re-reads them
    out["regex-toml-header-blanks"] = {
        "pyproject.toml": '[tool.vramlint]\ngpu = "L4"\nnot-a-key = 1\n\n["a' + " " * 1_000_000 + 'b"]\nx = 1\n',
        "deploy.yaml": bad,
        # an unknown key is said on its line; the valid TOML table after it is not vramlint's
        "__expect__": expect(("pyproject.toml", 3), ("deploy.yaml", bad_lines))}
    # yamlload.neutralize_templates `\{\{.*?\}\}` and helm/templated `%\{.*?\}` from every opening on the line
    out["regex-template-open-runs"] = {
        "deploy.yaml": bad + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\ndata:\n  x: \"{{ .Values.x }}"
        + "{{" * 1_000_000 + "\"\n",
        "tf.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tf}\ndata:\n  x: \"${a} " + "%{" * 1_000_000
        + "\"\n  image: vllm/vllm-openai:v0.8.5\n",
        "__expect__": expect(("deploy.yaml", bad_lines))}

    # ------------------------------------------------------------------ sizes: long lines, many lines, many files
    words = " --enforce-eager" * 300_000
    out["script-one-line-4.8MB"] = {"__paths__": ("paths", ["serve.sh"]), "serve.sh": SERVE_BAD + words + "\n",
                                    "__expect__": expect(("serve.sh", 1))}
    comments = "#\n" * 1_000_000
    out["manifest-1M-comment-lines"] = {"deploy.yaml": comments + bad,
                                        "__expect__": expect(("deploy.yaml", tuple(n + 1_000_000 for n in bad_lines)))}
    out["script-1M-noop-lines"] = {"__paths__": ("paths", ["serve.sh"]),
                                   "serve.sh": "#!/bin/sh\n" + ":\n" * 1_000_000 + SERVE_BAD + "\n",
                                   "__expect__": expect(("serve.sh", 1_000_002))}
    tagged = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + "".join(
        f"  k{j}: !!str v{j}\n" for j in range(5000))
    many = {f"m{i:02d}.yaml": bad.replace("name: llm", f"name: llm-{i}") + tagged for i in range(60)}
    out["files-60-tagged-90KB"] = {**many, "__expect__": expect(("m00.yaml", bad_lines), ("m59.yaml", bad_lines))}
    nested = "".join(f"${{V{i}:-" for i in range(10_000)) + "Qwen/Qwen2.5-1.5B-Instruct" + "}" * 10_000
    out["compose-interp-nested-10k-in-command"] = {
        "compose.yaml": COMPOSE_HEAD + f"    command: --model {nested} --max-model-len 999999\n" + GPU_RESERVATION,
        "__expect__": expect(("compose.yaml", 4))}
    out["compose-interp-400k-references"] = {
        "compose.yaml": COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --served-model-name "
        + "${A}" * 400_000 + " --max-model-len 999999\n" + GPU_RESERVATION,
        ".env": "A=" + "x" * 100 + "\n", "__expect__": expect(("compose.yaml", 4))}

    # ------------------------------------------------------------------ Helm
    out["tpl-90k-documents"] = f.with_tpl("{{ range until 90000 }}---\nk: v\n{{ end }}", line=None)
    esc = r"\x1b]8;;http://evil.example\x07::stop-commands::tok\n::error::pwned\x1b[2J\x1b]8;;\x07"
    out["tpl-fail-required-escapes"] = chart({
        "deploy.yaml": CHART_TEMPLATE, "x.yaml": f'{{{{ fail "{esc}" }}}}\n',
        "y.yaml": '{{ required (printf "%s%s" (repeat 100000 "\\x1b[31m") "::error::x") .Values.nothing }}\n'},
        # Helm stops at the first template that fails: the chart is not installed; said on that line
        __expect__=expect(("chart/templates/x.yaml", 1)))
    out["tpl-files-glob-20k-files"] = chart(
        {"deploy.yaml": CHART_TEMPLATE, "x.yaml": '{{ range $p, $_ := .Files.Glob "files/**" }}{{ $.Files.Get $p }}'
         '{{ end }}{{ (.Files.Glob "**").AsConfig }}\n'},
        **{f"chart/files/f{i}.txt": f"{i}\n" for i in range(20_000)}, __expect__=expect(f.SERVER))
    out["chart-20k-templates"] = chart({"deploy.yaml": CHART_TEMPLATE,
                                        **{f"t{i:05d}.yaml": f"k{i}: {{{{ .Values.model }}}}\n" for i in range(20_000)}},
                                       __expect__=expect(f.SERVER))
    # Go: a field of a missing key's nil is "nil pointer evaluating interface {}.a": the chart fails on that line
    out["tpl-field-chain-20k"] = f.with_tpl("x: {{ .Values" + ".a" * 20_000 + " }}\n", line=1)
    req = CHART_TEMPLATE.replace('"{{ .Values.maxLen }}"', '"{{ required "set maxLen" .Values.missing }}"')
    out["tpl-required-in-server-args"] = chart({"deploy.yaml": req},
                                               __expect__=expect(("chart/templates/deploy.yaml", 11)))

    # ------------------------------------------------------------------ shell
    out["script-abs-path-through-mount"] = {
        "compose.yaml": COMPOSE_HEAD + "    entrypoint: [bash, /up/_outside/secret.env]\n    volumes: ['..:/up']\n"
        + GPU_RESERVATION + "  b:\n    image: vllm/vllm-openai:v0.8.5\n"
        "    entrypoint: [sh, -c, '. /up/_outside/secret.env && vllm serve $$MODEL --max-model-len 999999']\n"
        "    volumes: ['..:/up']\n" + GPU_RESERVATION,
        # the script is not read (outside the tree): what it runs is unknown, said on the line naming it
        "__expect__": expect(("compose.yaml", 4))}
    out["shell-source-stdin-fd-mapfile"] = {
        "__paths__": ("paths", ["serve.sh"]),
        "serve.sh": "#!/bin/bash\nsource /dev/stdin\n. /dev/fd/0\nmapfile -t A < /proc/self/environ\n"
        "exec 3< ../_outside/secret.env\nread -r -u 3 M\nsource <(cat ../_outside/secret.env)\n"
        "vllm serve \"$M\" --served-model-name \"${A[0]}\" --max-model-len 999999\n",
        "__expect__": expect(("serve.sh", None))}
    # the shell reads lines up to LF only: this file is one comment line, and runs nothing
    out["shell-cr-only-script"] = {"__paths__": ("paths", ["serve.sh"]),
                                   "serve.sh": f"#!/bin/sh\r{SERVE_BAD}\rexec {SERVE_BAD}\r",
                                   "__no_error__": True, "__expect__": expect()}

    # ------------------------------------------------------------------ suppressions and configuration
    ids = ",".join(f"ZZZ{i % 10_000:04d}" for i in range(500_000))
    sup = bad.replace('            - "--max-model-len"\n', f"            # vramlint: ignore[{ids}] reason\n"
                      '            - "--max-model-len"\n', 1)
    at = line_of(sup, "# vramlint:")
    out["suppress-500k-rule-list"] = {"deploy.yaml": sup,
                                      "__expect__": expect(("deploy.yaml", at), ("deploy.yaml", (at + 1, at + 2)))}
    keys = "".join(f"\"\\e]8;;http://evil.example/{i}\\a::error::k{i}\\e]8;;\\a\": 1\n\"::stop-commands::t{i}\": 2\n"
                   for i in range(2500))
    out["config-5000-unknown-keys-escapes"] = {".vramlint.yaml": keys, "deploy.yaml": bad,
                                               "__expect__": expect((".vramlint.yaml", 1), ("deploy.yaml", bad_lines))}

    # ------------------------------------------------------------------ secrets written in the scanned files
    out["secrets-literal-in-files"] = {
        "compose.yaml": COMPOSE_HEAD + f"    command: --model Qwen/Qwen2.5-1.5B-Instruct --api-key {LITERAL} "
        f"--tokenizer https://user:{LITERAL_PASSWORD}@example.com/t --max-model-len 999999\n"
        f"    environment: {{HUGGING_FACE_HUB_TOKEN: {LITERAL}, HF_TOKEN: '{LITERAL}'}}\n" + GPU_RESERVATION,
        "deploy.yaml": deployment(QWEN + ["--api-key=" + LITERAL, "--max-model-len", "999999",
                                          "--revision", f"https://user:{LITERAL_PASSWORD}@x/y"]),
        "__literal__": [LITERAL, LITERAL_PASSWORD],
        "__expect__": expect(("compose.yaml", 4))}

    # ------------------------------------------------------------------ numbers, confusables, NUL
    # vLLM 0.8.5's argparse (EngineArgs.add_cli_args): --block-size is type=int with choices; int("0x10") fails.
    # Python's int() reads Arabic-Indic digits and `1_000`; `-0` is 0: those are accepted
    edge = deployment(QWEN + ["--max-model-len", "\u0664\u0660\u0669\u0666", "--max-num-seqs", "1_000", "--seed", "-0",
                              "--block-size", "0x10"])
    out["numbers-edge-forms-first-refusal"] = {"deploy.yaml": edge,
                                               "__expect__": expect(("deploy.yaml", _arg_line(edge, '"--block-size"')))}
    fine = deployment(QWEN + ["--max-model-len", "\u0664\u0660\u0669\u0666", "--max-num-seqs", "1_000", "--seed", "-0",
                              "--swap-space", "+4", "--gpu-memory-utilization", "+0.5", "--tensor-parallel-size",
                              "\u0661"])
    out["numbers-edge-forms-accepted"] = {"deploy.yaml": fine, "__no_error__": True, "__expect__": expect()}
    conf = deployment(QWEN + ["\u2014max-model-len", "999999", "\uff0d\uff0dmax-num-seqs", "8",
                              "\u2010\u2010tensor-parallel-size", "1", "\u2212\u2212seed", "1"])
    # not options to argparse (no leading "-"): unrecognized arguments, vLLM does not start
    out["flags-confusable-dashes"] = {"deploy.yaml": conf,
                                      "__expect__": expect(("deploy.yaml", _arg_line(conf, '"\\u2014max-model-len"')))}
    nul = deployment(QWEN + ["--max-model-len", "4096\u0000", "--served-model-name", "a\u0000b"])
    out["nul-in-flag-value"] = {"deploy.yaml": nul,
                                "__expect__": expect(("deploy.yaml", (line_of(nul, '"--max-model-len"'),
                                                                      line_of(nul, '"4096\\u0000"'))))}
    # vLLM's --config reader: yaml.safe_load (YAML 1.1: 0x10000 is 65536), then str(value) as the flag's value
    out["vllm-config-yaml11-hex"] = {
        "vllm.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nmax-model-len: 0x10000\n",
        "compose.yaml": COMPOSE_HEAD + "    command: --config /cfg/vllm.yaml\n    volumes: ['./:/cfg']\n" + GPU_RESERVATION,
        "__expect__": expect(("vllm.yaml", 2))}

    # ------------------------------------------------------------------ files that move, names that escape
    stable = deployment(QWEN + ["--max-model-len", "4096"], name="big")
    out["file-changes-size-while-read"] = {"deploy.yaml": bad, "big.yaml": stable, "__grow__": ("big.yaml", stable),
                                           "__expect__": expect(("deploy.yaml", bad_lines))}
    svc = ("services:\n  \"\\e]8;;http://evil.example\\a::error::svc\\e]8;;\\a\":\n    image: vllm/vllm-openai:v0.8.5\n"
           "    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999\n"
           "    container_name: \"\\x9b2J::stop-commands::tok\"\n" + GPU_RESERVATION
           + "  \"::stop-commands::tok\":\n    image: vllm/vllm-openai:v0.8.5\n"
           "    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999 --port 9000\n" + GPU_RESERVATION)
    out["escapes-in-compose-service-names"] = {"compose.yaml": svc,
                                               "__expect__": expect(("compose.yaml", 4), ("compose.yaml", 9))}

    # ------------------------------------------------------------------ a hostile Hub (HF_ENDPOINT on 127.0.0.1)
    hub_deploy = deployment(["--model", HUB_MODEL, "--max-model-len", "4096"])
    for name in ("hub-error-echoes-token-and-escapes", "hub-content-length-lies", "hub-4096-shards-8MiB-headers",
                 "hub-config-escapes-duplicate-keys"):
        out[name] = {"deploy.yaml": hub_deploy, "__hub__": name, "__says__": HUB_MODEL, "__expect__": expect()}
    # (expectation corrected after the first run: vramlint was right to resolve this answer: Python's json reader,
    # as transformers' own, keeps the last of duplicate keys (16 layers, a sane number), and the escape sequences in
    # the names reached no report raw; so there is nothing unresolved for the run to say. That vLLM would refuse
    # a model_type transformers does not know is not modelled for any model, hostile or not)
    del out["hub-config-escapes-duplicate-keys"]["__says__"]
    # (and of hub-4096-shards-8MiB-headers after the run after the fixes, where it failed on `__says__` alone:
    # config.json comes, the 4,096 headers of 8 MiB cannot all come within the run's 5 s for Hub requests, and the
    # weights are then computed from the architecture and not cached, as docs/security.md says: the model is
    # resolved, so the run has no unresolved model to name; what is judged is the time, the memory and the cache)
    del out["hub-4096-shards-8MiB-headers"]["__says__"]
    return out


# ---------------------------------------------------------------------- the hostile Hub's answers

_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16,
           "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, "vocab_size": 128256,
           "torch_dtype": "bfloat16", "max_position_embeddings": 8192}
SHARDS = 4096
HEADER_BYTES = 8 * 2**20 - 64


def _shard_file() -> bytes:
    head = '{"w":{"dtype":"BF16","shape":[1,1],"data_offsets":[0,2]},"__metadata__":{"p":"'
    tail = '"}}'
    body = head + "a" * (HEADER_BYTES - len(head) - len(tail)) + tail
    return HEADER_BYTES.to_bytes(8, "little") + body.encode() + b"\0\0"


def _hub_handler(kind: str, state: dict[str, Any]):
    from http.server import BaseHTTPRequestHandler

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self.do_GET()

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: C901  (one answer per case)
            name = self.path.rsplit("/", 1)[-1]
            if kind == "hub-error-echoes-token-and-escapes":
                sent = self.headers.get("Authorization", "")
                msg = f"Invalid credentials in Authorization header: {sent} \x1b]8;;http://evil\x07::error::pwned\n" \
                      "::stop-commands::tok\r\n##[error]x"
                self._send(400, json.dumps({"error": msg}).encode(), {"Content-Type": "application/json",
                                                                      "X-Error-Message": msg.replace("\n", " ")
                                                                      .replace("\r", " "),
                                                                      "X-Error-Code": "\x1b[2J" + sent})
            elif kind == "hub-content-length-lies":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "4000000")
                self.end_headers()
                self.wfile.write(b'{"model_type": "llama", ')
                self.wfile.flush()
                for _ in range(300):  # then nothing for 30 s, the connection kept open
                    time.sleep(0.1)
            elif kind == "hub-4096-shards-8MiB-headers":
                if name == "config.json":
                    self._send(200, json.dumps(_CONFIG).encode(), {"Content-Type": "application/json"})
                elif name == "model.safetensors.index.json":
                    shards = {f"w{i}": f"model-{i:05d}-of-{SHARDS:05d}.safetensors" for i in range(SHARDS)}
                    self._send(200, json.dumps({"metadata": {}, "weight_map": shards}).encode())
                elif name.startswith("model-") and name.endswith(".safetensors"):
                    data = state["shard"]
                    rng = self.headers.get("Range", "")
                    if rng.startswith("bytes="):
                        a, _, b = rng[6:].partition("-")
                        lo, hi = int(a), min(int(b or len(data) - 1), len(data) - 1)
                        part = data[lo:hi + 1]
                        self.send_response(206)
                        self.send_header("Content-Range", f"bytes {lo}-{hi}/{len(data)}")
                        self.send_header("Content-Length", str(len(part)))
                        self.end_headers()
                        try:
                            self.wfile.write(part)
                        except OSError:
                            pass
                    else:
                        self._send(200, data)
                else:
                    self._send(404, b"{}", {"X-Error-Code": "EntryNotFound"})
            elif kind == "hub-config-escapes-duplicate-keys":
                if name == "config.json":
                    text = json.dumps(_CONFIG)[:-1] + (
                        ', "architectures": ["\\u001b]8;;http://evil\\u0007LlamaForCausalLM\\u001b]8;;\\u0007"], '
                        '"model_type": "llama\\u009b2J::error::x", "num_hidden_layers": 1000000, '
                        '"torch_dtype": "::stop-commands::tok\\n::error::y", "num_hidden_layers": 16}')
                    self._send(200, text.encode(), {"Content-Type": "application/json"})
                else:
                    self._send(404, b"{}", {"X-Error-Code": "EntryNotFound"})

    return Handler


class _Hub:
    def __init__(self, kind: str) -> None:
        from http.server import ThreadingHTTPServer

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.state: dict[str, Any] = {}
        if kind == "hub-4096-shards-8MiB-headers":
            self.state["shard"] = _shard_file()
        self.server = Server(("127.0.0.1", 0), _hub_handler(kind, self.state))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _grow(path: str, initial: str, stop: threading.Event) -> None:
    """Append to ``path`` until it is past 12 MB, cut it back to ``initial``, again, until ``stop``: a file that
    another job on the runner writes while vramlint reads it."""
    pad = ("#" + "p" * 254 + "\n") * 1024  # 256 KiB of comment lines
    while not stop.is_set():
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(initial)
            with open(path, "a", encoding="utf-8") as fh:
                for _ in range(48):
                    if stop.is_set():
                        return
                    fh.write(pad)
                    fh.flush()
                    time.sleep(0.002)
        except OSError:
            time.sleep(0.01)


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = twelfth_cases()[name]
    passed = {k: v for k, v in files.items()
              if k not in ("__no_error__", "__says__", "__hub__", "__literal__", "__grow__")}
    hub = _Hub(files["__hub__"]) if "__hub__" in files else None
    stop = threading.Event()
    grower = None
    if "__grow__" in files:
        rel, initial = files["__grow__"]
        grower = threading.Thread(target=_grow, args=(os.path.join(base, name, rel), initial, stop), daemon=True)
        # started once the case is written: f.run_case writes it, so start just before, on a file written here
        os.makedirs(os.path.join(base, name), exist_ok=True)
        with open(os.path.join(base, name, rel), "w", encoding="utf-8") as fh:
            fh.write(initial)
        passed = {k: v for k, v in passed.items() if k != rel}
        grower.start()
    try:
        result = f.run_case(name, passed, base, timeout, hub=hub.url if hub else None,
                            moving=(files["__grow__"][0],) if "__grow__" in files else ())
    finally:
        stop.set()
        if grower:
            grower.join()
        if hub:
            hub.close()
    scratch = os.path.join(base, f"_scratch-{name}")
    result["problems"].extend(u.extra_problems(files, scratch))
    reports: dict[str, str] = {}
    for key in ("text", "stderr", *f.FORMATS):
        try:
            with open(os.path.join(scratch, f"report.{key}"), encoding="utf-8", errors="replace") as fh:
                reports[key] = fh.read()
        except OSError:
            reports[key] = ""
    for secret in files.get("__literal__", ()):
        leaks = [k for k, v in reports.items() if secret in v]
        if leaks:
            result["problems"].append(f"LEAK: the secret {secret[:6]}... written in the scanned files is in "
                                      f"{', '.join(leaks)}")
    if "__says__" in files and files["__says__"] not in reports["text"] + reports["stderr"]:
        result["problems"].append(f"the text report does not say {files['__says__']!r}")
    if hub and os.path.isdir(os.path.join(scratch, "cache")):
        for dirpath, _, names in os.walk(os.path.join(scratch, "cache")):
            for n in names:
                with open(os.path.join(dirpath, n), "rb") as fh:
                    if h.SECRET.encode() in fh.read():
                        result["problems"].append(f"LEAK: the planted HF_TOKEN is in the cache ({n})")
    return result


TWELFTH_CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_twelfth as e; "
                 "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    return f.run_cli(__doc__.split("\n\n")[0], twelfth_cases, "twelfth", TWELFTH_CHILD)


if __name__ == "__main__":
    sys.exit(main())
