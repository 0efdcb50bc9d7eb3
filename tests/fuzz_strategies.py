"""Hypothesis strategies for hostile input, and the check that runs one input through vramlint's whole pipeline.

Shared by tests/test_fuzz_inputs.py (a small share in CI) and benchmarks/fuzz_inputs.py (>= 100,000 inputs).
An input is a small tree of files: {relative path: text}. `run_case` writes it into a fresh folder, runs
`vramlint check` on it in-process (scan -> assess offline -> rules -> JSON report), and says what went wrong:
an exception out of the entry point, an exit status other than 0/1, a rule crash (VRL000), an invalid report,
more than `TIME_LIMIT_S` seconds of CPU time, or more than `MEMORY_LIMIT_MB` of memory on top of what the process had
(the address-space limit is lowered around the run, so a blow-up ends in MemoryError instead of swapping).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass

from hypothesis import strategies as st

TIME_LIMIT_S = 5.0
MEMORY_LIMIT_MB = 300

# ------------------------------------------------------------------------------------------------ scalars

ODD_SCALARS = [
    "", "null", "~", ".inf", "-.inf", ".nan", ".NaN", "1e400", "-1e400", "9" * 5000, "-" + "9" * 400, "1_000",
    "0x1F", "0o17", "0b101", "010", "-1", "0", "-0", "1.5", "1e3", "true", "yes", "no", "on", "off", "Y",
    "2024-01-01", "2024-01-01T00:00:00Z", "12:30:45", "'single'", '"double"', "'unterminated", '"unterminated',
    "[1, 2]", "{a: 1}", "[]", "{}", "- item", "a: b", "*undefined", "&anchor value", "!!binary aGk=",
    "!!python/object/apply:os.system ['id']", "!Ref x", "!!int abc", "!!float x", "? complex", "|", ">-",
    "{{ .Values.model }}", "'{{ .Values.x | quote }}'", "${MODEL}", "${MODEL:-facebook/opt-125m}", "$(MODEL)",
    "\"$(echo hi)\"", "モデル/ünï-çødé", "\u202eevil", "'" + "x" * 3000 + "'", "%{ if x }", "<PLACEHOLDER>",
    "# comment", "'::workflow-command::'", "'|table|row|'", "\"a\\nb\"", "\"\\u0000\"", "\"\\x41\"",
]

MODELS = [
    "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "facebook/opt-125m",
    "mistralai/Mistral-7B-Instruct-v0.3", "deepseek-ai/DeepSeek-V3", "./model", "/models/llama", "model",
    "org/model@../../../x", "org/model@main", "hf://org/m", "s3://bucket/m", "", "x" * 300, "a/b/c/d",
    "..", "/", "~/m", "org/" + "m" * 200, "Org/Model:tag", "https://huggingface.co/org/m",
]

IMAGES = [
    "vllm/vllm-openai:v0.8.0", "vllm/vllm-openai:v0.10.2", "vllm/vllm-openai:latest", "vllm/vllm-openai",
    "vllm/vllm-openai:v99.0.0", "vllm/vllm-openai:v0.6.4.post1", "vllm/vllm-openai@sha256:" + "a" * 64,
    "docker.io/vllm/vllm-openai:nightly", "rocm/vllm:latest", "lmcache/vllm-openai:2025", "python:3.11",
    "vllm/vllm-openai:v" + "9" * 50, "vllm/vllm-openai:{{ .Values.tag }}", "",
]

FLAGS = [
    "--model", "--max-model-len", "--gpu-memory-utilization", "--tensor-parallel-size", "--pipeline-parallel-size",
    "--data-parallel-size", "--max-num-seqs", "--max-num-batched-tokens", "--dtype", "--kv-cache-dtype",
    "--quantization", "--block-size", "--swap-space", "--cpu-offload-gb", "--enable-prefix-caching",
    "--enforce-eager", "--served-model-name", "--config", "--speculative-config", "--trust-remote-code",
    "--enable-lora", "--max-lora-rank", "--max-loras", "--limit-mm-per-prompt", "--hf-overrides",
    "--rope-scaling", "--tokenizer", "--revision", "--load-format", "--port", "--host", "--kv-transfer-config",
    "--enable-expert-parallel", "--num-gpu-blocks-override", "--max-seq-len-to-capture", "--unknown-flag", "-tp",
]

FLAG_VALUES = [
    "4096", "131072", "0", "-1", "0.9", "0.95", "1.5", "2", "8", "-8", "auto", "bfloat16", "float16", "fp8",
    "fp8_e5m2", "awq", "gptq", "3", "16", "32", "9" * 30, "1e400", ".inf", "nan", "inf", "-inf", "true",
    '{"method": "ngram", "num_speculative_tokens": 5}', '{"model": "x", "num_speculative_tokens": -1}',
    '{"rope_type": "yarn", "factor": 1e308}', "{not json", "/etc/vllm/config.yaml", "$(MAX_LEN)", "${TP}",
]


def scalar_text() -> st.SearchStrategy[str]:
    """A YAML scalar as written in a file: odd plain forms, or any text JSON-quoted (valid YAML)."""
    return st.one_of(
        st.sampled_from(ODD_SCALARS),
        st.integers(min_value=-(2**80), max_value=2**80).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.text(max_size=40).map(lambda s: json.dumps(s)),
        st.sampled_from(MODELS + IMAGES + FLAG_VALUES).map(json.dumps),
    )


def flag_args() -> st.SearchStrategy[list[str]]:
    pair = st.tuples(st.sampled_from(FLAGS), st.one_of(st.sampled_from(FLAG_VALUES + MODELS), st.text(max_size=12)))
    joined = pair.map(lambda p: [f"{p[0]}={p[1]}"])
    split = pair.map(lambda p: [p[0], p[1]])
    alone = st.sampled_from(FLAGS).map(lambda f: [f])
    return st.lists(st.one_of(joined, split, alone), max_size=12).map(lambda xs: [a for x in xs for a in x])


def _flow_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


# ------------------------------------------------------------------------------------------------ YAML manifests

KINDS = [
    ("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"), ("v1", "Pod"), ("batch/v1", "Job"),
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"), ("serving.kserve.io/v1beta1", "InferenceService"),
    ("ray.io/v1", "RayService"), ("kubeai.org/v1", "Model"), ("kaito.sh/v1beta1", "Workspace"),
    ("inference.llmaz.io/v1alpha1", "Playground"),
]


def alias_bomb(levels: int, width: int, key: str = "bomb") -> str:
    lines = [f"{key}:", "  l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines)


@st.composite
def container_lines(draw, indent: str) -> list[str]:
    out = [f"{indent}- name: {draw(st.sampled_from(['vllm', 'server', 'main', 'x']))}",
           f"{indent}  image: {draw(st.one_of(st.sampled_from(IMAGES).map(json.dumps), scalar_text()))}"]
    style = draw(st.sampled_from(["args", "command", "shell", "none", "env"]))
    args = draw(flag_args())
    model = draw(st.sampled_from(MODELS))
    if style == "args":
        out.append(f"{indent}  args: {_flow_list(['--model', model] + args)}")
    elif style == "command":
        out.append(f"{indent}  command: {_flow_list(['vllm', 'serve', model] + args)}")
    elif style == "shell":
        script = draw(shell_script())
        out.append(f"{indent}  command: {_flow_list(['sh', '-c', script])}")
    elif style == "env":
        out.append(f"{indent}  command: [vllm, serve, $(MODEL)]")
        out.append(f"{indent}  env:")
        for name in draw(st.lists(st.sampled_from(["MODEL", "MAX_LEN", "TP", "VLLM_USE_V1", "HF_TOKEN"]),
                                  max_size=4)):
            out.append(f"{indent}    - name: {name}")
            out.append(f"{indent}      value: {draw(scalar_text())}")
    if draw(st.booleans()):
        out.append(f"{indent}  resources:")
        out.append(f"{indent}    limits:")
        out.append(f"{indent}      nvidia.com/gpu: {draw(scalar_text())}")
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(["args", "image", "resources", "volumeMounts", "ports", "workingDir"]))
        out.append(f"{indent}  {key}: {draw(scalar_text())}")
    return out


@st.composite
def k8s_manifest(draw) -> str:
    docs = []
    for _ in range(draw(st.integers(1, 3))):
        api, kind = draw(st.sampled_from(KINDS))
        lines = [f"apiVersion: {api}", f"kind: {kind}", "metadata:",
                 f"  name: {draw(st.one_of(st.just('vllm'), scalar_text()))}"]
        if draw(st.booleans()):
            lines.append(f"  annotations: {{vramlint.dev/ignore: {draw(scalar_text())}}}")
        lines += ["spec:", f"  replicas: {draw(scalar_text())}", "  template:", "    spec:"]
        if draw(st.booleans()):
            lines.append(f"      nodeSelector: {{nvidia.com/gpu.product: {draw(scalar_text())}}}")
        lines.append("      containers:")
        for _ in range(draw(st.integers(1, 2))):
            lines += draw(container_lines("        "))
        docs.append(lines)
    text = "\n---\n".join("\n".join(d) for d in docs)
    extra = draw(st.sampled_from(["none", "none", "anchors", "bomb", "duplicate", "deep", "tabs"]))
    if extra == "anchors":
        text = "x-defaults: &defaults [--max-model-len, '4096']\n" + text.replace(
            "args: [", "args: [*defaults, ", 1)
    elif extra == "bomb":
        text = alias_bomb(draw(st.integers(2, 9)), draw(st.integers(2, 9))) + "\n---\n" + text
    elif extra == "duplicate":
        text += "\n" + draw(st.sampled_from(["args: [--x]", "spec: {}", "kind: Pod"]))
    elif extra == "deep":
        depth = draw(st.integers(50, 3000))
        text += "\n---\nx: " + "[" * depth + "]" * depth
    elif extra == "tabs":
        text = text.replace("  ", "\t", draw(st.integers(1, 3)))
    return text


# ------------------------------------------------------------------------------------------------ shell scripts

SHELL_WORDS = [
    "vllm serve", "python3 -m vllm.entrypoints.openai.api_server", "exec", "--model", "$MODEL", "${MODEL}",
    "${MODEL:-facebook/opt-125m}", "${TP:=2}", "$(cat /etc/model)", "`hostname`", "&&", "||", ";", "|", "&",
    "'", '"', "\\", "\n", "export MODEL=meta-llama/Llama-3.1-8B-Instruct", "MAX=4096", "--max-model-len $MAX",
    "if [ -n \"$X\" ]; then", "fi", "for i in 1 2 3; do", "done", "eval", "set -e", "cat <<EOF", "EOF",
    "$((1 << 62))", "${#X}", "${X/a/b}", "~", "*", "?", "#", "2>&1", "> /dev/null", "$@", "$1", "--port=$PORT",
]


@st.composite
def shell_script(draw) -> str:
    words = draw(st.lists(st.one_of(st.sampled_from(SHELL_WORDS), st.sampled_from(FLAGS),
                                    st.sampled_from(FLAG_VALUES + MODELS)), max_size=25))
    script = " ".join(words)
    kind = draw(st.sampled_from(["plain", "plain", "doubling", "many", "quote"]))
    if kind == "doubling":
        n = draw(st.integers(1, 60))
        script = "X=ab; " + "X=$X$X; " * n + "vllm serve $X " + script
    elif kind == "many":
        script = ("echo a; " * draw(st.integers(1, 3000))) + script
    elif kind == "quote":
        script = "vllm serve 'org/m " + script
    return script


@st.composite
def shell_case(draw) -> dict[str, str]:
    script = draw(shell_script())
    manifest = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
                "    image: vllm/vllm-openai:v0.8.0\n    command: [sh, -c]\n    args: " + json.dumps([script]) + "\n")
    return {"pod.yaml": manifest}


# ------------------------------------------------------------------------------------------------ compose


@st.composite
def compose_case(draw) -> dict[str, str]:
    lines = ["services:"]
    files: dict[str, str] = {}
    for i in range(draw(st.integers(1, 3))):
        lines += [f"  svc{i}:", f"    image: {draw(st.one_of(st.sampled_from(IMAGES).map(json.dumps), scalar_text()))}"]
        cmd = draw(st.sampled_from(["list", "string", "none", "odd"]))
        args = ["--model", draw(st.sampled_from(MODELS))] + draw(flag_args())
        if cmd == "list":
            lines.append(f"    command: {_flow_list(args)}")
        elif cmd == "string":
            lines.append(f"    command: {json.dumps(' '.join(args))}")
        elif cmd == "odd":
            lines.append(f"    command: {draw(scalar_text())}")
        env = draw(st.sampled_from(["none", "map", "list", "file", "outside"]))
        if env == "map":
            lines.append("    environment:")
            lines.append(f"      MODEL: {draw(scalar_text())}")
        elif env == "list":
            lines.append(f"    environment: [{json.dumps('TP=' + draw(st.sampled_from(FLAG_VALUES)))}]")
        elif env == "file":
            lines.append("    env_file: .env")
            files[".env"] = f"MODEL={draw(st.sampled_from(MODELS))}\nTP={draw(st.sampled_from(FLAG_VALUES))}\n"
        elif env == "outside":
            lines.append(f"    env_file: {draw(st.sampled_from(['/proc/self/environ', '../x.env', '/dev/zero']))}")
        if draw(st.booleans()):
            lines += ["    deploy:", "      resources:", "        reservations:", "          devices:",
                      f"            - {{driver: nvidia, count: {draw(scalar_text())}, capabilities: [gpu]}}"]
        if draw(st.integers(0, 4)) == 0:
            lines.append(f"    extends: {{file: {draw(st.sampled_from(['base.yaml', '/etc/passwd', '../x.yml']))}, "
                         "service: base}")
            files["base.yaml"] = "services:\n  base:\n    image: vllm/vllm-openai:v0.8.0\n"
    text = "\n".join(lines)
    if draw(st.integers(0, 5)) == 0:
        text = alias_bomb(draw(st.integers(2, 9)), draw(st.integers(2, 9)), "x-bomb") + "\n" + text
    files["compose.yaml"] = text
    return files


# ------------------------------------------------------------------------------------------------ Helm charts

TEMPLATE_FUNCS = [
    "quote", "squote", "default", "toYaml", "toJson", "indent", "nindent", "printf", "print", "required", "fail",
    "index", "get", "dict", "list", "eq", "ne", "lt", "gt", "empty", "not", "hasKey", "len", "coalesce",
    "ternary", "kindIs", "add", "add1", "sub", "mul", "div", "mod", "max", "min", "int", "int64", "atoi",
    "float64", "toString", "trim", "trimSuffix", "lower", "upper", "replace", "repeat", "trunc", "nospace",
    "hasPrefix", "contains", "join", "splitList", "split", "first", "last", "keys", "until", "untilStep", "seq",
    "concat", "append", "uniq", "cat", "merge", "deepCopy", "fromYaml", "fromJson", "tpl", "lookup", "b64enc",
    "sha256sum", "regexMatch", "regexFind", "regexReplaceAll", "regexSplit", "ceil", "floor", "include",
    "and", "or", "nosuchfunction",
]

OPERANDS = [
    ".Values.model", ".Values.n", ".Values.s", ".Values.list", ".Values.map", ".Values.inf", ".Values.big",
    ".Values.missing", ".Values.missing.deeper", ".", "$", "$x", "$.Values", ".Release.Name", ".Chart.Name",
    ".Values.bomb", "nil", "true", "0", "1", "-1", "2", "100000000000", "9223372036854775807",
    "99999999999999999999", "1e400", "0.5", "'a'", '"a"', '"%s%s"', '"(a+)+$"', '"' + "a" * 40 + 'b"',
    '"\\n"', '"\\x41"', '"\\q"', "`raw`", '"a: &a [1]\\nb: [*a, *a]"', '"[1,"', '"{\\"a\\": 1}"',
]


@functools.cache
def _pipeline(depth: int) -> st.SearchStrategy[str]:
    operand = st.sampled_from(OPERANDS)
    if depth <= 0:
        return operand
    sub = _pipeline(depth - 1)
    call = st.tuples(st.sampled_from(TEMPLATE_FUNCS), st.lists(st.one_of(operand, sub.map(lambda s: f"({s})")),
                                                              max_size=3))
    call_text = call.map(lambda c: " ".join([c[0], *c[1]]))
    piped = st.tuples(st.one_of(operand, call_text), st.lists(call_text, max_size=2)).map(
        lambda p: " | ".join([p[0], *p[1]]))
    return st.one_of(operand, call_text, piped)


@st.composite
def template_text(draw, depth: int = 2) -> str:
    pipe = draw(_pipeline(2))
    kind = draw(st.sampled_from(["action", "action", "decl", "assign", "if", "range", "with", "define", "include",
                                 "text", "comment", "broken"]))
    if kind == "action":
        return "{{ " + pipe + " }}"
    if kind == "decl":
        return "{{- $x := " + pipe + " }}"
    if kind == "assign":
        return "{{ $x = " + pipe + " }}"
    body = draw(template_text(depth - 1)) if depth > 0 else "x"
    if kind == "if":
        return "{{ if " + pipe + " }}" + body + "{{ else }}y{{ end }}"
    if kind == "range":
        head = draw(st.sampled_from(["", "$i, $v := ", "$v := "]))
        return "{{ range " + head + pipe + " }}" + body + "{{ end }}"
    if kind == "with":
        return "{{ with " + pipe + " }}" + body + "{{ end }}"
    if kind == "define":
        return '{{ define "h" }}' + body + '{{ end }}{{ include "h" . }}'
    if kind == "include":
        return '{{ include "h" ' + draw(st.sampled_from(OPERANDS)) + " }}"
    if kind == "comment":
        return "{{/* " + pipe + " */}}"
    if kind == "broken":
        return draw(st.sampled_from(["{{ " + pipe, "{{ " + pipe + " }", "{{ end }}", "{{ else }}", "{{ if 1 }}",
                                     "{{ \"unterminated }}", "{{/* open", "}}", "{{ `raw", "{{- -}}"]))
    return draw(st.sampled_from(["a: 1", "- x", "\n", "  ", "{", "key: value\n"]))


@st.composite
def helm_case(draw) -> dict[str, str]:
    values = [
        f"model: {draw(st.one_of(st.sampled_from(MODELS).map(json.dumps), scalar_text()))}",
        f"n: {draw(scalar_text())}",
        f"s: {draw(scalar_text())}",
        f"list: [{draw(scalar_text())}, {draw(scalar_text())}]",
        f"map: {{a: {draw(scalar_text())}}}",
        f"big: {draw(st.sampled_from(['9' * 30, '9' * 5000, '1e400', '18446744073709551616']))}",
        "inf: .inf" if draw(st.integers(0, 4)) == 0 else "inf: 1",
        f"image: {{repository: vllm/vllm-openai, tag: {draw(scalar_text())}}}",
        f"gpus: {draw(scalar_text())}",
    ]
    if draw(st.integers(0, 4)) == 0:
        values.append(alias_bomb(draw(st.integers(2, 9)), draw(st.integers(2, 9))))
    if draw(st.integers(0, 5)) == 0:
        values.append(f"bomb_text: {json.dumps(alias_bomb(9, 9))}")
    lines = [
        "apiVersion: apps/v1", "kind: Deployment", "metadata:", "  name: {{ .Release.Name }}", "spec:",
        "  template:", "    spec:", "      containers:", "        - name: vllm",
        '          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"', "          args:",
        "            - --model", "            - {{ .Values.model | quote }}", "          resources:",
        "            limits:", "              nvidia.com/gpu: {{ .Values.gpus }}",
    ]
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines)))
        snippet = draw(template_text())
        where = draw(st.sampled_from(["line", "arg", "inline"]))
        if where == "arg":
            lines.insert(i, "            - " + snippet)
        elif where == "inline" and i < len(lines):
            lines[i] = lines[i] + " " + snippet
        else:
            lines.insert(i, snippet)
    files = {
        "chart/Chart.yaml": f"apiVersion: v2\nname: {draw(st.sampled_from(['chart', 'c', 'x']))}\nversion: 0.1.0\n",
        "chart/values.yaml": "\n".join(values) + "\n",
        "chart/templates/deployment.yaml": "\n".join(lines) + "\n",
    }
    if draw(st.booleans()):
        files["chart/templates/_helpers.tpl"] = '{{- define "h" -}}' + draw(template_text()) + "{{- end -}}\n"
    if draw(st.integers(0, 3)) == 0:
        files["chart/values-prod.yaml"] = f"model: {draw(scalar_text())}\nn: {draw(scalar_text())}\n"
    return files


# ------------------------------------------------------------------------------------------------ Hub answers

CONFIG_KEYS = [
    "architectures", "model_type", "hidden_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size", "max_position_embeddings",
    "torch_dtype", "dtype", "rope_scaling", "rope_theta", "sliding_window", "tie_word_embeddings",
    "quantization_config", "text_config", "vision_config", "num_experts", "num_local_experts",
    "n_routed_experts", "moe_intermediate_size", "kv_lora_rank", "layer_types", "model_max_length",
    "q_lora_rank", "qk_rope_head_dim", "num_experts_per_tok", "max_seq_len", "seq_length", "n_positions",
]


def _json_value(depth: int = 2) -> st.SearchStrategy:
    leaf = st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70), st.sampled_from([0, 1, 2, 4096, 10**400, -(10**30)]),
        st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1e308, 5e-324, -0.0]),
        st.text(max_size=20), st.sampled_from(["bfloat16", "float16", "fp8", "LlamaForCausalLM", "llama"]),
        st.booleans(), st.none(),
    )
    if depth <= 0:
        return leaf
    inner = _json_value(depth - 1)
    return st.one_of(leaf, st.lists(inner, max_size=4),
                     st.dictionaries(st.sampled_from(CONFIG_KEYS + ["quant_method", "bits", "factor",
                                                                     "rope_type", "weights"]), inner, max_size=5))


@st.composite
def hub_case(draw) -> dict[str, str]:
    cfg = draw(st.dictionaries(st.sampled_from(CONFIG_KEYS), _json_value(), max_size=14))
    kind = draw(st.sampled_from(["dict", "dict", "dict", "text", "deep", "nonobject"]))
    if kind == "dict":
        body = json.dumps(cfg)
    elif kind == "text":
        body = draw(st.sampled_from(["", "{", "null", "[]", '{"hidden_size": NaN}', '{"hidden_size": Infinity}',
                                     '{"num_hidden_layers": ' + "9" * 5000 + "}", "\ufeff{}", "\x00"]))
    elif kind == "deep":
        depth = draw(st.integers(100, 100000))
        body = '{"text_config": ' + "[" * depth + "]" * depth + "}"
    else:
        body = json.dumps(draw(_json_value()))
    manifest = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
                "    image: vllm/vllm-openai:v0.8.0\n    args: [--model, ./model]\n"
                "    resources: {limits: {nvidia.com/gpu: 1}}\n")
    return {"pod.yaml": manifest, "model/config.json": body}


# ------------------------------------------------------------------------------------------------ Dockerfiles

DOCKER_BASES = IMAGES + ["base", "stage0", "${BASE}", "${BASE:-vllm/vllm-openai:v0.8.5}", "$BASE", "scratch",
                         "${A:-${B:-${C:-x}}}", "nvidia/cuda:12.4.1-devel-ubuntu22.04", "--platform=$X base"]
DOCKER_RUNS = [
    "pip install vllm==0.9.2", "pip install 'vllm>=0.8'", "pip install vllm", "uv pip install --system vllm==0.8.5",
    "pip install -U vllm==0.10.1 && echo ok", "apt-get update && apt-get install -y git",
    "pip install vllm==$VLLM_VERSION", "pip install vllm==${V:-0.9.0}", "cat <<EOF > /x\nvllm==1\nEOF",
]


@st.composite
def dockerfile_text(draw) -> str:
    """A Dockerfile serving vLLM in some stage: FROM chains (stage names, cycles, ARGs in FROM), ARG/ENV
    (self-doubling, nested defaults), RUN pip pins, heredoc RUNs, `\\` continuations, COPY --from, and an
    ENTRYPOINT/CMD in exec or shell form carrying vLLM's flags."""
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append(f"ARG BASE={draw(st.sampled_from(IMAGES))}")
    stages = draw(st.integers(1, 4))
    names = [f"stage{i}" for i in range(stages)]
    for i in range(stages):
        base = draw(st.sampled_from(DOCKER_BASES + names[: i + 1] + names))  # a later or its own name: a cycle
        lines.append(f"FROM {base} AS {names[i]}" if draw(st.integers(0, 3)) else f"FROM {base}")
        for _ in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(["arg", "env", "envdouble", "run", "heredoc", "cont", "copy", "shell",
                                         "workdir"]))
            if kind == "arg":
                lines.append(f"ARG {draw(st.sampled_from(['MODEL', 'TP', 'V', 'BASE']))}={draw(scalar_text())}")
            elif kind == "env":
                lines.append(f"ENV {draw(st.sampled_from(['MODEL', 'TP', 'MAX_LEN', 'HF_TOKEN']))}="
                             f"{draw(st.sampled_from(MODELS + FLAG_VALUES))}")
            elif kind == "envdouble":
                lines.append("ENV X=ab")
                lines += ["ENV X=$X$X"] * draw(st.integers(1, 40))
            elif kind == "run":
                lines.append("RUN " + draw(st.sampled_from(DOCKER_RUNS)).replace("\\n", "\n"))
            elif kind == "heredoc":
                lines += ["RUN <<EOF", "pip install vllm==0.9.1", "vllm serve x --max-model-len 1", "EOF"]
            elif kind == "cont":
                lines.append("RUN echo a \\\n" + "  && echo b \\\n" * draw(st.integers(1, 500)) + "  && true")
            elif kind == "copy":
                lines.append(f"COPY --from={draw(st.sampled_from(names + ['0', '9', 'x']))} /a /b")
            elif kind == "shell":
                lines.append(draw(st.sampled_from(['SHELL ["/bin/bash", "-c"]', "SHELL [not json",
                                                   'SHELL ["cmd", "/S", "/C"]'])))
            else:
                lines.append(f"WORKDIR {draw(st.sampled_from(['/app', '$X', '..', '../../x']))}")
    args = ["--model", draw(st.sampled_from(MODELS + ["$MODEL", "${MODEL}"]))] + draw(flag_args())
    form = draw(st.sampled_from(["exec-entry", "exec-cmd", "shell-entry", "shell-cmd", "both", "odd"]))
    exec_words = json.dumps(["vllm", "serve", *args])
    shell_words = "vllm serve " + " ".join(args)
    if form == "exec-entry":
        lines.append("ENTRYPOINT " + exec_words)
    elif form == "exec-cmd":
        lines.append("CMD " + exec_words)
    elif form == "shell-entry":
        lines.append("ENTRYPOINT " + shell_words)
    elif form == "shell-cmd":
        lines.append("CMD " + shell_words)
    elif form == "both":
        lines += ['ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]', "CMD " + json.dumps(args)]
    else:
        lines.append(f"CMD {draw(scalar_text())}")
    return "\n".join(lines) + "\n"


@st.composite
def dockerfile_case(draw) -> dict[str, str]:
    """A Dockerfile alone (its own server), or built by a compose service (`build:` with args and a target)."""
    name = draw(st.sampled_from(["Dockerfile", "Containerfile", "Dockerfile.vllm", "vllm.Dockerfile"]))
    files = {name: draw(dockerfile_text())}
    if draw(st.booleans()):
        context = draw(st.sampled_from([".", "./", "..", "../..", "/", "/proc/self", "sub/../.."]))
        files["compose.yaml"] = (
            "services:\n  vllm:\n    build:\n"
            f"      context: {json.dumps(context)}\n      dockerfile: {json.dumps(name)}\n"
            f"      args: {{BASE: {draw(scalar_text())}, V: {json.dumps(draw(st.sampled_from(FLAG_VALUES)))}}}\n"
            f"      target: {draw(st.sampled_from(['stage0', 'stage1', 'stage9', 'x']))}\n")
    return files


def yaml_case() -> st.SearchStrategy[dict[str, str]]:
    return k8s_manifest().map(lambda text: {"deploy.yaml": text})


FAMILIES = {
    "yaml": yaml_case,
    "compose": compose_case,
    "helm": helm_case,
    "shell": shell_case,
    "hub": hub_case,
    "dockerfile": dockerfile_case,
}


def any_case() -> st.SearchStrategy[tuple[str, dict[str, str]]]:
    return st.one_of(*[f().map(lambda files, name=name: (name, files)) for name, f in FAMILIES.items()])


# ------------------------------------------------------------------------------------------------ mutations

# A file outside the scanned folder holding this secret is planted next to every input (run_case), and the
# process's HF_TOKEN is OUTSIDE_SECRET too when the benchmark sets it: neither may reach any output.
OUTSIDE_SECRET = "hf_fuzzPLANTEDoutsideSECRET0123456789"
# Lines that point outside the scanned folder (the planted file, the process's environment, devices), written at
# the indentation of the line they are put after: compose, Kubernetes args, --config, Helm's .Files.
OUTSIDE_REFS = [
    "env_file: ../secret.env", "env_file: [/proc/self/environ]", "env_file: /dev/zero",
    "extends: {file: ../secret.env, service: x}", "extends: {file: /proc/self/environ, service: x}",
    "volumes: [../secret.env:/cfg/c.yaml]", "command: --config /cfg/c.yaml --model $${HF_TOKEN}",
    "- --config=../secret.env", "- --config", "- /proc/self/environ", "- --served-model-name=$(HF_TOKEN)",
    "- --chat-template=../secret.env", "args: [--config, ../secret.env]", "model: ${HF_TOKEN}",
    '{{ .Files.Get "../secret.env" }}', '{{ .Files.Get "/proc/self/environ" }}', '{{ (.Files.Glob "**").AsConfig }}',
    "value: {{ env \"HF_TOKEN\" }}", "- name: HF_TOKEN\n  valueFrom: {secretKeyRef: {name: hf, key: token}}",
]
# Symlinks an input may hold (run_case creates them): out of the folder, to the planted file, to the environment.
SYMLINK_TARGETS = ["../secret.env", "/proc/self/environ", "..", "/", "/dev/zero", "missing.yaml", "."]
NOISE = ["\t", "\r", "\x00", "\x1b[31m", "\u202e", "\ufeff", "{{", "}}", "${", "$(", "&a ", "*a", "<<: *a", "'",
         '"', "#", ": ", "- ", "[", "{", "|", ">", "\\", "%", "@", "`", "\n---\n", "::error::x"]
BIG = ["9" * 5000, "x" * 200_000, "[" * 3000, "{a: " * 500, "$(A)" * 30_000, "'" + "a" * 100_000, "-" * 150]
_VALUE_AT = re.compile(r"^(\s*(?:- )?(?:[^#:\n]+:\s)?)(.+)$")


def _mutate_text(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(["delete", "duplicate", "swap", "indent", "scalar", "scalar", "scalar", "reference",
                         "reference", "noise", "truncate", "big", "crlf", "flag"])
        i = rng.randrange(len(lines)) if lines else 0
        if not lines:
            lines = [""]
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "indent":
            lines[i] = rng.choice(["  ", "\t", " "]) + lines[i] if rng.random() < 0.6 else lines[i][2:]
        elif op in ("scalar", "big"):
            m = _VALUE_AT.match(lines[i])
            if m:
                pool = BIG if op == "big" else ODD_SCALARS + FLAG_VALUES + MODELS + IMAGES
                value = rng.choice(pool)
                value = json.dumps(value) if op == "scalar" and rng.random() < 0.3 else value
                lines[i] = m.group(1) + value
        elif op == "reference":
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            ref = rng.choice(OUTSIDE_REFS).replace("\n", "\n" + indent)
            lines.insert(i + 1, indent + ref)
        elif op == "noise":
            at = rng.randint(0, len(lines[i]))
            lines[i] = lines[i][:at] + rng.choice(NOISE) + lines[i][at:]
        elif op == "truncate":
            joined = "\n".join(lines)
            lines = joined[: rng.randint(0, len(joined))].split("\n")
        elif op == "crlf":
            lines = ["\r\n".join(lines)]
        elif op == "flag":
            lines.insert(i + 1, lines[i][: len(lines[i]) - len(lines[i].lstrip())] + "- "
                         + rng.choice(FLAGS) + rng.choice(["", "=", " "]) + rng.choice(FLAG_VALUES))
    return "\n".join(lines)


def mutate(files: dict, rng: random.Random) -> dict:
    """A hostile variant of an input: one to four edits to some of its files (lines deleted, duplicated, swapped or
    re-indented, scalars replaced by odd or huge ones, references to files outside the folder, control characters,
    truncation), sometimes a symlink out of the folder or a file renamed to a name a terminal or a CI log reads."""
    out = dict(files)
    texts = [k for k, v in out.items() if isinstance(v, str)]
    for name in rng.sample(texts, rng.randint(1, len(texts))) if texts else []:
        out[name] = _mutate_text(out[name], rng)
    roll = rng.random()
    if roll < 0.08:
        folder = os.path.dirname(rng.choice(list(out) or ["x"]))
        out[os.path.join(folder, rng.choice(["link.yaml", "values-link.yaml", ".env", "templates/l.yaml"]))] = \
            ("symlink", rng.choice(SYMLINK_TARGETS))
    elif roll < 0.12 and texts:
        name = rng.choice(texts)
        out[os.path.join(os.path.dirname(name), rng.choice(["a\nb.yaml", "::error::x.yaml", "\x1b[2Jc.yaml",
                                                          "p|q.yaml"]))] = out.pop(name)
    return out


# ------------------------------------------------------------------------------------------------ running one


@dataclass
class Outcome:
    failure: str | None  # None: the input was handled
    seconds: float  # CPU time of the run (the limit): on a shared machine wall time says more about the others
    timed_out: bool = False
    wall_seconds: float = 0.0


class _TimeUp(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` in vramlint swallows it."""


def _alarm(signum, frame):  # SIGPROF: the run's CPU time is up  # noqa: ANN001 - signal handler signature
    raise _TimeUp()


def _vm_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


@functools.lru_cache(maxsize=1)
def _cache_rule_loading() -> None:  # noqa: D401
    """Rules are read from their files on every run; a worker reads them once (not part of the input's cost)."""
    from vramlint import rule

    original = rule.load_rules
    cache: dict[tuple, list] = {}

    def load_rules(dirs=()):  # noqa: ANN001 - same signature as vramlint.rule.load_rules
        key = tuple(dirs or ())
        if key not in cache:
            cache[key] = original(dirs)
        return cache[key]

    rule.load_rules = load_rules


def run_case(files: dict[str, str], workdir: str | None = None, time_limit_s: float = TIME_LIMIT_S,
             memory_limit_mb: int = MEMORY_LIMIT_MB, secrets: tuple[str, ...] = (OUTSIDE_SECRET,)) -> Outcome:
    """Write the files, run `vramlint check --offline` on them in-process with the limits, judge the result.

    A file holding OUTSIDE_SECRET is planted outside the scanned folder; a case fails when any of ``secrets``
    reaches standard output, standard error or the JSON report, or when the run writes anything but its report."""
    from vramlint.cli import main

    _cache_rule_loading()
    root = tempfile.mkdtemp(prefix="fuzz-", dir=workdir)
    cwd = os.getcwd()
    old_handler = signal.signal(signal.SIGPROF, _alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    start = time.monotonic()
    cpu_start = time.process_time()
    failure: str | None = None
    timed_out = False
    try:
        os.makedirs(os.path.join(root, ".git"))
        with open(os.path.join(root, "secret.env"), "w", encoding="utf-8") as fh:
            fh.write(f"HF_TOKEN={OUTSIDE_SECRET}\nMODEL={OUTSIDE_SECRET}\n")  # outside the scanned folder `in`
        for rel, text in files.items():
            path = os.path.join(root, "in", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if isinstance(text, tuple):  # ("symlink", target)
                with contextlib.suppress(OSError):
                    os.symlink(text[1], path)
                continue
            with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
                fh.write(text)
        os.chdir(root)
        out, err = io.StringIO(), io.StringIO()
        limit = _vm_bytes() + memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
        signal.setitimer(signal.ITIMER_PROF, time_limit_s)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["check", "in", "--offline", "--output-format", "json", "--output-file", "r.json",
                             "--output-format", "text"])
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        errors = err.getvalue()
        written = sorted(set(os.listdir(root)) - {".git", "in", "r.json", "secret.env"})
        report_text = ""
        with contextlib.suppress(OSError):
            with open("r.json", encoding="utf-8", errors="replace") as fh:
                report_text = fh.read()
        leaked = [where for where, text in (("stdout", out.getvalue()), ("stderr", errors), ("r.json", report_text))
                  if any(secret in text for secret in secrets)]
        if leaked:
            failure = f"a planted secret is in {', '.join(leaked)}"
        elif written:
            failure = f"wrote outside its report: {written}"
        elif code not in (0, 1):
            failure = f"exit status {code}: {errors[-2000:]}"
        elif "Traceback" in errors or "internal error" in errors:
            failure = f"traceback on stderr: {errors[-2000:]}"
        else:
            doc = json.loads(report_text)
            for finding in doc["findings"]:
                if finding["rule"] == "VRL000":
                    failure = f"a rule crashed: {finding['message'][:1000]}"
                    break
                if "too large for vramlint" in finding["message"]:
                    failure = f"ran out of memory: {finding['message'][:300]}"
                    break
                if not finding["file"] or finding["line"] < 1:
                    failure = f"finding without a place: {finding}"
                    break
    except _TimeUp:
        timed_out = True
        failure = f"took more than {time_limit_s:g} s of CPU time"
    except MemoryError:
        failure = f"more than {memory_limit_mb} MB of memory"
    except SystemExit as exc:
        failure = f"SystemExit({exc.code}) out of the entry point"
    except Exception as exc:  # noqa: BLE001 - any exception out of the entry point is the failure reported
        import traceback

        failure = "exception: " + "".join(traceback.format_exception(exc))[-3000:]
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old_handler)
        os.chdir(cwd)
        shutil.rmtree(root, ignore_errors=True)
    return Outcome(failure, time.process_time() - cpu_start, timed_out, time.monotonic() - start)
