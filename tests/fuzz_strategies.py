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


# ------------------------------------------------------------------------------------------------ kustomize trees

# paths a kustomization may name, relative to its own folder (in/kN/): its siblings (cycles, a base named twice),
# itself, out of the scanned folder (the planted secret), the process's environment, devices, remote bases
KUSTOMIZE_REFS = ["../k0", "../k1", "../k2", "../k3", ".", "./", "../k1/deploy.yaml", "deploy.yaml", "patch.yaml",
                  "../../secret.env", "..", "../..", "/proc/self/environ", "/dev/zero", "/etc", "missing",
                  "https://github.com/org/repo//base?ref=v1", "github.com/org/repo/base", "git@github.com:o/r.git",
                  "link", "../k0/kustomization.yaml"]


def _kustomize_patch(draw) -> list[str]:
    kind = draw(st.sampled_from(["strategic", "json", "path", "old", "bad"]))
    target = draw(st.sampled_from(["", "    target: {kind: Deployment}\n", "    target: {name: '(a+)+b'}\n",
                                   "    target: {kind: Deployment, name: vllm, labelSelector: 'a=b,c!=d,e'}\n",
                                   "    target: {group: apps, version: v1, kind: '.*', name: '.*'}\n"]))
    value = draw(st.one_of(scalar_text(), st.sampled_from(FLAG_VALUES + MODELS).map(json.dumps)))
    if kind == "strategic":
        return ["  - " + target.strip() if target else "  - patch: |-", *(["    patch: |-"] if target else []),
                "      apiVersion: apps/v1", "      kind: Deployment", "      metadata: {name: vllm}",
                "      spec:", "        template:", "          spec:", "            containers:",
                "              - name: vllm", f"                args: [--max-model-len, {value}]",
                f"                image: {draw(st.sampled_from(IMAGES + ['null', '{$patch: delete}']))}"]
    if kind == "json":
        op = draw(st.sampled_from(["add", "replace", "remove", "copy", "move", "test", "bogus"]))
        path = draw(st.sampled_from(["/spec/template/spec/containers/0/args/-", "/spec/replicas", "/",
                                     "/spec/template/spec/containers/9/image", "/metadata/labels/a~1b", "",
                                     "/spec/template/spec/containers/0/args/1"]))
        return [f"  - target: {{kind: Deployment, name: {draw(st.sampled_from(['vllm', '.*', 'x']))}}}",
                f"    patch: '[{{op: {op}, path: \"{path}\", from: \"/spec/replicas\", value: {json.dumps(value)}}}]'"]
    if kind == "path":
        return [f"  - path: {draw(st.sampled_from(KUSTOMIZE_REFS))}", target.rstrip("\n")] if target else \
            [f"  - path: {draw(st.sampled_from(KUSTOMIZE_REFS))}"]
    if kind == "old":
        return [f"  - {draw(st.sampled_from(KUSTOMIZE_REFS))}"]
    return [f"  - {draw(scalar_text())}"]


@st.composite
def kustomization_text(draw, index: int) -> str:
    lines = ["apiVersion: kustomize.config.k8s.io/v1beta1",
             f"kind: {draw(st.sampled_from(['Kustomization', 'Kustomization', 'Component', 'x']))}"]
    for key in draw(st.lists(st.sampled_from(["resources", "bases", "components"]), max_size=2, unique=True)):
        lines.append(f"{key}:")
        lines += [f"  - {r}" for r in draw(st.lists(st.sampled_from(KUSTOMIZE_REFS), min_size=1, max_size=4))]
    if draw(st.booleans()):
        lines.append(f"patches{draw(st.sampled_from(['', '', 'StrategicMerge', 'Json6902']))}:")
        for _ in range(draw(st.integers(1, 3))):
            lines += _kustomize_patch(draw)
    if draw(st.booleans()):
        lines += ["configMapGenerator:", f"  - name: {draw(st.sampled_from(['cfg', 'vllm', 'x']))}",
                  f"    behavior: {draw(st.sampled_from(['create', 'merge', 'replace', 'bogus']))}",
                  "    literals:", f"      - MAXLEN={draw(st.sampled_from(FLAG_VALUES))}",
                  f"      - MODEL={draw(st.sampled_from(MODELS))}",
                  f"    envs: [{draw(st.sampled_from(['../../secret.env', '/proc/self/environ', 'a.env', 'link']))}]",
                  f"    files: [{draw(st.sampled_from(['k=../../secret.env', '/proc/self/environ', 'a.env', 'link']))}]"]
    if draw(st.booleans()):
        lines += ["images:", f"  - name: {draw(st.sampled_from(['vllm/vllm-openai', 'x', '']))}",
                  f"    newTag: {draw(scalar_text())}", f"    newName: {draw(st.sampled_from(IMAGES))}"]
    if draw(st.booleans()):
        lines += ["replacements:", "  - source: {kind: ConfigMap, name: cfg, fieldPath: data.MAXLEN}",
                  "    targets:", f"      - select: {{kind: {draw(st.sampled_from(['Deployment', '.*', '(a|a)+']))}}}",
                  f"        options: {{create: {draw(st.sampled_from(['true', 'false']))}, delimiter: '=', index: "
                  f"{draw(st.integers(-2, 3))}}}",
                  f"        fieldPaths: [{draw(st.sampled_from(['spec.template.spec.containers.[name=vllm].args.1', 'metadata.name', 'spec.replicas', 'a.b.c.d.e', '[', '.']))}]"]
    for key in draw(st.lists(st.sampled_from(["namespace", "namePrefix", "nameSuffix", "commonLabels", "replicas",
                                               "helmCharts", "generators", "vars"]), max_size=3, unique=True)):
        value = {"commonLabels": "{a: b}", "replicas": f"[{{name: vllm, count: {draw(scalar_text())}}}]",
                 "helmCharts": "[{name: x, valuesFile: ../../secret.env}]", "generators": "[gen.yaml]",
                 "vars": "[{name: V, objref: {kind: Deployment, name: vllm}}]"}.get(key, draw(scalar_text()))
        lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n"


@st.composite
def kustomize_case(draw) -> dict[str, object]:
    """A tree of kustomizations k0..k3 naming each other (cycles, diamonds), files out of the folder, remote bases,
    patches of every form, generators fed from outside files, images, replacements with odd field paths."""
    files: dict[str, object] = {}
    for i in range(draw(st.integers(1, 4))):
        files[f"k{i}/kustomization.yaml"] = draw(kustomization_text(i))
        if draw(st.booleans()):
            files[f"k{i}/deploy.yaml"] = draw(k8s_manifest())
        if draw(st.integers(0, 3)) == 0:
            files[f"k{i}/patch.yaml"] = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\n"
                                         f"spec: {{replicas: {draw(scalar_text())}}}\n")
        if draw(st.integers(0, 3)) == 0:
            files[f"k{i}/a.env"] = f"MAXLEN={draw(st.sampled_from(FLAG_VALUES))}\nHF_TOKEN\n=x\n"
        if draw(st.integers(0, 4)) == 0:
            files[f"k{i}/link"] = ("symlink", draw(st.sampled_from(["../../secret.env", "..", "/proc/self/environ",
                                                                     "../k0", "/"])))
    if draw(st.integers(0, 5)) == 0:
        # a chain deeper than the depth bound
        depth = draw(st.integers(10, 40))
        for i in range(depth):
            files[f"c{i}/kustomization.yaml"] = f"resources: [../c{i + 1}]\n"
        files[f"c{depth}/kustomization.yaml"] = "resources: [../k0]\n"
    return files


# ------------------------------------------------------------------------------------------------ systemd units

SYSTEMD_LINES = [
    "Environment=MODEL=Qwen/Qwen2.5-7B-Instruct", 'Environment="TP=2" "MAX=4096"', "Environment=", "Environment='a b",
    "Environment=HF_TOKEN=%h", "EnvironmentFile=/proc/self/environ", "EnvironmentFile=-/etc/vllm.env",
    "EnvironmentFile=../../secret.env", "EnvironmentFile=%h/../secret.env", "EnvironmentFile=", "WorkingDirectory=%h/x",
    "WorkingDirectory=/srv/app", "WorkingDirectory=-..", "Type=oneshot", "Type=simple", "User=%i", "ExecStart=",
    "ExecStartPre=/bin/true", "[Unit]", "[Install]", "[Service]", "Description=vLLM %n", "# comment", "; comment",
    "not a setting", "ExecStart=/srv/app/serve.sh", "ExecStart=bash -c 'exec vllm serve $MODEL'",
]


@st.composite
def systemd_case(draw) -> dict[str, object]:
    """A `*.service` unit: sections, Environment=/EnvironmentFile= (out of the folder, the process's environment),
    ExecStart= prefixes, quoting, `;` separators, specifiers (`%%`, unknown ones, floods), `$VAR`/`${VAR}`,
    `\\` continuations (long runs), and sometimes a launcher script it names."""
    prefix = draw(st.sampled_from(["", "-", "@", ":", "+", "!", "!!", "-@", ":-"]))
    exe = draw(st.sampled_from(["/usr/bin/vllm serve", "/opt/venv/bin/python -m vllm.entrypoints.openai.api_server",
                                "%h/venv/bin/vllm serve", "vllm serve", "/usr/bin/docker run --gpus all "
                                "vllm/vllm-openai:v0.8.5", "./serve.sh", "/bin/sh -c 'vllm serve x'", "${VLLM} serve"]))
    args = " ".join(draw(flag_args()))
    model = draw(st.sampled_from(MODELS + ["$MODEL", "${MODEL}", "%i", "%I", "'a b'", '"$MODEL"']))
    tail = draw(st.sampled_from(["", " ; /bin/true", " \\\n  --port 8000", " %%%%", " %Z%Y", " $$X", " ${}",
                                 " \\\n" * 3 + " x", " '" + "q" * 50]))
    lines = ["[Unit]", f"Description={draw(st.sampled_from(['vLLM', 'vllm server %n', 'x']))}", "[Service]"]
    lines += draw(st.lists(st.sampled_from(SYSTEMD_LINES), max_size=6))
    lines.append(f"ExecStart={prefix}{exe} --model {model} {args}{tail}")
    kind = draw(st.sampled_from(["plain", "plain", "continued", "specifiers", "variables", "many-env", "twice"]))
    if kind == "continued":
        lines.insert(3, "Environment=A=1 \\\n" + "  B=2 \\\n" * draw(st.integers(1, 3000)) + "  C=3")
    elif kind == "specifiers":
        lines.insert(3, "Environment=S=" + "%%" * draw(st.integers(1, 50_000)) + "".join(
            f"%{chr(0x4E00 + k)}" for k in range(draw(st.integers(0, 3000)))))
    elif kind == "variables":
        lines[-1] += " " + " ".join(f"${{V{k}}}" for k in range(draw(st.integers(1, 5000))))
    elif kind == "many-env":
        lines[3:3] = [f"Environment=K{k}=v{k}" for k in range(draw(st.integers(1, 5000)))]
    elif kind == "twice":
        lines.append(lines[-1])
    name = draw(st.sampled_from(["vllm.service", "vllm@.service", "vllm@a.service", "user/vllm.service",
                                 "deploy/systemd/llm.service"]))
    files: dict[str, object] = {name: "\n".join(lines) + "\n"}
    if draw(st.booleans()):
        files["serve.sh"] = draw(st.sampled_from([f"#!/bin/sh\nexec vllm serve {draw(st.sampled_from(MODELS))} "
                                                  f"{args}\n", "#!/bin/sh\nexec ./serve.sh\n", "#!/bin/sh\n. /proc/self/environ\n"]))
    return files


# ------------------------------------------------------------------------------------------------ supervisord

@st.composite
def supervisord_case(draw) -> dict[str, object]:
    """A supervisord configuration: [supervisord] environment=, [program:*] with `%(ENV_X)s`, `%(process_num)Nd`
    widths, numprocs, process_name, directory=, environment= pairs (quotes, commas, many keys), and [include]
    globs out of the folder."""
    lines = ["[supervisord]", "nodaemon=true"]
    if draw(st.booleans()):
        lines.append(f"environment=MODEL=\"{draw(st.sampled_from(MODELS))}\",A=\"{'w' * draw(st.integers(0, 3000))}\"")
    if draw(st.booleans()):
        lines += ["[include]", f"files = {draw(st.sampled_from(['/etc/supervisor/conf.d/*.conf', '../*', '../secret.env', '/proc/self/environ', '*.conf']))}"]
    for p in range(draw(st.integers(1, 3))):
        lines.append(f"[program:{draw(st.sampled_from(['vllm', 'llm', 'x', 'a b']))}{p}]")
        model = draw(st.sampled_from(MODELS + ["%(ENV_MODEL)s", "%(ENV_NOPE)s", "%(program_name)s"]))
        args = " ".join(draw(flag_args()))
        expand = draw(st.sampled_from(["", " %(ENV_A)s" * draw(st.integers(0, 300)), " %(process_num)05d",
                                       " %(process_num)9999d", " %(here)s", " %", " %(x", " %(ENV_HF_TOKEN)s",
                                       "".join(f" %(ENV_X{k})s" for k in range(draw(st.integers(0, 3000))))]))
        program = draw(st.sampled_from(["vllm serve", "python -m vllm.entrypoints.openai.api_server",
                                        'bash -c "vllm serve', "./serve.sh", "%(here)s/serve.sh"]))
        lines.append(f"command={program} --model {model} {args}{expand}")
        if draw(st.booleans()):
            lines += [f"numprocs={draw(st.sampled_from(['1', '2', '16', '100000', '-1', 'x', '9' * 30]))}",
                      f"process_name={draw(st.sampled_from(['%(program_name)s_%(process_num)d', '%(program_name)s', '%(process_num)999d']))}"]
        if draw(st.booleans()):
            pairs = ",".join(f"K{k}=\"{draw(st.sampled_from(FLAG_VALUES))}\"" for k in range(draw(st.integers(1, 50))))
            lines.append(f"environment={pairs}" + draw(st.sampled_from(["", ",", ",X", ",Y='unterminated"])))
        if draw(st.booleans()):
            lines.append(f"directory={draw(st.sampled_from(['%(here)s', '%(here)s/../..', '/proc', '..', '.']))}")
        if draw(st.integers(0, 3)) == 0:
            lines.append("  continued " * draw(st.integers(1, 3)))
    name = draw(st.sampled_from(["supervisord.conf", "supervisor/conf.d/vllm.conf", "conf.d/llm.conf"]))
    files: dict[str, object] = {name: "\n".join(lines) + "\n"}
    if draw(st.booleans()):
        files[os.path.join(os.path.dirname(name), "serve.sh")] = f"#!/bin/sh\nexec vllm serve {draw(st.sampled_from(MODELS))}\n"
    return files


# ------------------------------------------------------------------------------------------------ Ansible roles

@st.composite
def ansible_case(draw) -> dict[str, object]:
    """An Ansible role: a docker_container/podman_container task (under block:, with vars), defaults/vars/group_vars
    whose values name each other (chains, fan-out, cycles, alias bombs), and a role template with `{{ }}`,
    `{% %}` statements (loops, includes of itself)."""
    module = draw(st.sampled_from(["community.docker.docker_container", "docker_container",
                                   "containers.podman.podman_container", "podman_container"]))
    words = ["--model", draw(st.sampled_from(MODELS + ["{{ model }}", "{{ model | default('x') }}", "{{ nope }}"]))]
    words += draw(flag_args()) + draw(st.sampled_from([[], ["--served-model-name", "{{ v9 }}"], ["{{ tp | quote }}"],
                                                       ["{% if a %}x{% endif %}"], ["{{ model }" * 3]]))
    command = draw(st.sampled_from([json.dumps(" ".join(words)), _flow_list(words)]))
    task = [f"- name: {draw(st.sampled_from(['run vllm', 'x']))}", f"  {module}:", "    name: vllm",
            f"    image: {draw(st.sampled_from(IMAGES + ['{{ image }}', '{{ repo }}:{{ tag }}']))}",
            f"    command: {command}"]
    if draw(st.booleans()):
        task += ["    device_requests:", f"      - {{driver: nvidia, count: {draw(scalar_text())}, capabilities: [[gpu]]}}"]
    if draw(st.booleans()):
        token = draw(st.sampled_from(["{{ hf_token }}", '{{ lookup("env", "HF_TOKEN") }}']))
        task += ["    env:", f"      HF_TOKEN: {json.dumps(token)}"]
    if draw(st.booleans()):
        task += ["  vars:", f"    tp: {draw(scalar_text())}"]
    if draw(st.integers(0, 3)) == 0:
        task = ["- block:"] + ["  " + t for t in task]
    files: dict[str, object] = {"roles/vllm/tasks/main.yml": "\n".join(task) + "\n"}
    shape = draw(st.sampled_from(["chain", "fanout", "cycle", "bomb", "plain"]))
    if shape == "chain":
        defaults = "v0: x\n" + "".join(f"v{k}: \"{{{{ v{k - 1} }}}}-\"\n" for k in range(1, draw(st.integers(2, 30))))
    elif shape == "fanout":
        width = draw(st.integers(2, 12))
        defaults = "v0: ab\n" + "".join(f"v{k}: \"" + f"{{{{ v{k - 1} }}}}" * width + "\"\n" for k in range(1, 12))
    elif shape == "cycle":
        defaults = "a: \"{{ b }}\"\nb: \"{{ a }}\"\nmodel: \"{{ model }}\"\nv9: \"{{ v9 }}{{ v9 }}\"\n"
    elif shape == "bomb":
        defaults = alias_bomb(draw(st.integers(2, 9)), draw(st.integers(2, 9)), "v9")
    else:
        defaults = f"model: {draw(st.one_of(st.sampled_from(MODELS).map(json.dumps), scalar_text()))}\n"
    files["roles/vllm/defaults/main.yml"] = defaults + f"image: {json.dumps(draw(st.sampled_from(IMAGES)))}\n"
    if draw(st.booleans()):
        files["roles/vllm/vars/main.yml"] = draw(st.sampled_from(
            [("symlink", "/proc/self/environ"), ("symlink", "../../../../secret.env"), f"tp: {draw(scalar_text())}\n"]))
    if draw(st.booleans()):
        files["group_vars/all.yml"] = draw(st.sampled_from([("symlink", "../../secret.env"), "model: x\n",
                                                            "model: \"{{ model }}\"\n"]))
    if draw(st.booleans()):
        loop = draw(st.sampled_from(["{% for i in range(1000000000) %}{% include 'deploy.yaml.j2' %}{% endfor %}\n",
                                     "{# comment #}\n", "{% raw %}{{ x }}{% endraw %}\n", ""]))
        files["roles/vllm/templates/deploy.yaml.j2"] = loop + draw(k8s_manifest()).replace(
            "meta-llama/Llama-3.1-8B-Instruct", "{{ model }}")
    return files


# ------------------------------------------------------------------------------------------------ here-documents

@st.composite
def heredoc_case(draw) -> dict[str, object]:
    """A Dockerfile whose RUN/COPY here-documents (`<<EOF`, `<<-EOF`, `<<'EOF'`, several on a line, never closed,
    a delimiter inside the body, huge bodies) hold pip pins, vLLM source builds and `vllm serve` lines."""
    lines = [f"FROM {draw(st.sampled_from(DOCKER_BASES))}"]
    bodies = ["pip install vllm==0.9.2", "git clone https://github.com/vllm-project/vllm.git", "cd vllm",
              "pip install -e .", "git checkout v0.8.5", "vllm serve x --max-model-len 1", "EOFX", "  EOF",
              "\tEOF", "exec vllm serve $MODEL", "pip install git+https://github.com/vllm-project/vllm@main",
              "cat <<INNER", "INNER", "set -e", "python3 setup.py develop"]
    for _ in range(draw(st.integers(1, 4))):
        opener = draw(st.sampled_from(["RUN <<EOF", "RUN bash <<EOF", "RUN <<-EOF", "RUN <<'EOF'", 'RUN <<"EOF"',
                                       "RUN <<EOF <<B", "COPY <<EOF /serve.sh", "RUN python3 <<EOF",
                                       "RUN --mount=type=cache,target=/root/.cache <<EOF", "RUN /bin/sh -e <<EOF"]))
        lines.append(opener)
        body = draw(st.lists(st.sampled_from(bodies), max_size=8))
        repeat = draw(st.sampled_from([1, 1, 1, 100, 5000]))
        lines += body * repeat
        close = draw(st.sampled_from(["EOF", "EOF", "EOF\nB", "", "\tEOF", "EOF "]))
        if close:
            lines.append(close)
    args = ["--model", draw(st.sampled_from(MODELS + ["$MODEL"]))] + draw(flag_args())
    lines.append(draw(st.sampled_from(["ENTRYPOINT " + json.dumps(["vllm", "serve", *args]),
                                       'ENTRYPOINT ["/serve.sh"]', "CMD vllm serve " + " ".join(args)])))
    return {draw(st.sampled_from(["Dockerfile", "Containerfile", "docker/vllm.Dockerfile"])): "\n".join(lines) + "\n"}


# ------------------------------------------------------------------------------------------------ Terraform

TF_VALUES = ['"Qwen/Qwen2.5-7B-Instruct"', "null", '""', "8192", "-1", "1e400", '"${var.model}"', "[]", "{}",
             '["a", null, ""]', '{ a = 1, b = null }', "var.model", "local.x", "var.missing", "true",
             '"%{ if var.x }a%{ endif }"', '"' + "x" * 300 + '"', "99999999999999999999999999999999999999"]
TF_CALLS = ["coalesce({a}, {b})", "coalesce({a})", "coalesce()", "lookup({a}, {b})", "lookup({a}, {b}, {a})",
            "merge({a}, {b})", "concat({a}, {b})", "join({a}, {b})", "format({a}, {b})", "format(\"%s %d\", {a})",
            "replace({a}, {b}, {a})", "base64encode({a})", "base64decode({a})", "tostring({a})", "tonumber({a})",
            "lower({a})", "try({a}, {b})", "yamlencode({a})", "jsonencode({a})", "trimspace({a})", "chomp({a})",
            "file({a})", "file(\"../secret.env\")", "templatefile(\"start.sh.tpl\", {{ m = {a} }})",
            "templatefile({a}, {b})", "{a} == {b} ? {a} : {b}", "{a}[0]", "{a}.b", "element({a}, 1)"]


@st.composite
def terraform_case(draw) -> dict[str, object]:
    """A Terraform module: variables (null, empty, huge, wrongly typed defaults), locals built with the functions
    the evaluator knows and some it does not, called with missing, null, empty and wrong-typed arguments, and a
    resource vramlint reads (a VM whose start-up script is a templatefile, a helm_release, a kubernetes
    Deployment) that uses them."""
    value = st.sampled_from(TF_VALUES)
    lines = []
    for k in range(draw(st.integers(0, 3))):
        lines.append(f'variable "v{k}" {{\n  default = {draw(value)}\n}}')
    lines.append('variable "model" {\n  default = ' + draw(value) + "\n}")
    local_lines = []
    for k in range(draw(st.integers(1, 6))):
        call = draw(st.sampled_from(TF_CALLS)).format(a=draw(value), b=draw(value))
        local_lines.append(f"  l{k} = {call}")
    lines.append("locals {\n  x = " + draw(value) + "\n" + "\n".join(local_lines) + "\n}")
    used = f"local.l{draw(st.integers(0, len(local_lines) - 1))}"
    kind = draw(st.sampled_from(["vm", "aws", "helm", "deployment"]))
    files: dict[str, object] = {}
    if kind == "vm":
        lines.append(f"""resource "google_compute_instance" "vm" {{
  machine_type = "g2-standard-8"
  guest_accelerator {{
    type  = "nvidia-l4"
    count = {draw(st.sampled_from(["1", "0", "-1", "99999999999", "var.v0", used]))}
  }}
  metadata_startup_script = templatefile("start.sh.tpl", {{ model = var.model, extra = {used} }})
}}""")
        files["start.sh.tpl"] = draw(st.sampled_from([
            "#!/bin/bash\ndocker run --gpus all vllm/vllm-openai:v0.10.2 --model ${model} ${extra}\n",
            "#!/bin/bash\nvllm serve ${model} --max-model-len ${extra} $${X}\n",
            "%{ for x in extra }vllm serve ${x}\n%{ endfor }", "${" * 50, "#cloud-config\nruncmd:\n - vllm serve x\n"]))
    elif kind == "aws":
        lines.append(f"""resource "aws_instance" "vm" {{
  instance_type = "g5.xlarge"
  user_data = base64encode(<<-EOT
    #!/bin/bash
    vllm serve ${{var.model}} ${{{used}}}
  EOT
  )
}}""")
    elif kind == "helm":
        lines.append(f"""resource "helm_release" "vllm" {{
  name  = "vllm"
  chart = "vllm"
  values = [yamlencode({{ model = var.model, extra = {used} }})]
  set {{
    name  = "servingEngineSpec.modelSpec[0].maxModelLen"
    value = {used}
  }}
}}""")
    else:
        lines.append(f"""resource "kubernetes_deployment_v1" "vllm" {{
  metadata {{ name = "vllm" }}
  spec {{
    template {{
      metadata {{ labels = {{ app = "vllm" }} }}
      spec {{
        container {{
          name  = "vllm"
          image = "vllm/vllm-openai:v0.10.2"
          args  = ["--model", var.model, "--max-model-len", {used}]
          resources {{ limits = {{ "nvidia.com/gpu" = {used} }} }}
        }}
      }}
    }}
  }}
}}""")
    files[draw(st.sampled_from(["main.tf", "infra/main.tf"]))] = "\n\n".join(lines) + "\n"
    if "infra/main.tf" in files and "start.sh.tpl" in files:
        files["infra/start.sh.tpl"] = files.pop("start.sh.tpl")
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
    "kustomize": kustomize_case,
    "systemd": systemd_case,
    "supervisord": supervisord_case,
    "ansible": ansible_case,
    "heredoc": heredoc_case,
    "terraform": terraform_case,
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
                if "a bug in vramlint" in finding["message"]:
                    # a reader's exception, caught so the run goes on (model.internal_problem): still a crash
                    failure = f"a reader crashed: {finding['message'][:1000]}"
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
