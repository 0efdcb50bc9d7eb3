"""A third round of hostile inputs, of kinds `hostile_inputs.py` does not have, judged more strictly.

    python3 benchmarks/hostile_fresh.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Written by reading vramlint's source and the 64 cases of `hostile_inputs.py` as an attacker would: Go-template
functions that are costly or grow (`genPrivateKey`, `bcrypt`, `randAlpha`, `repeat` of `repeat`, `untilStep` and
`seq` with huge or zero steps, `dict`/`set` growth, mutual `include` recursion, deep `with`/`range` and parenthesis
nesting, subcharts that are links back to their chart), YAML shapes (a 300,000-key mapping, a million-item flow line,
100,000 anchors, compact nested sequences, 1e400 and Unicode digits in typed slots), JSON arguments nested 100,000
deep (`--hf-overrides`, `--speculative-config`), `--hf-overrides` with inf and huge numbers, tensor- and
pipeline-parallel sizes of 2**62, thousands of compose services on one GPU, thousands of KServe runtimes, 50,000
empty files, 400 nested folders, hostile names in every output format, hostile `.vramlint.yaml` and `pyproject.toml`
values (TOML nested 10,000 deep), 100,000 suppression comments, shell here-documents, arithmetic, brace expansion,
`set -- "$@" "$@"`, recursive functions, and references to a planted secret outside the tree through `--model`,
`--chat-template`, compose `include:`, `secrets:` and `configs:`, and `--config` through a mount of `..`.

Each case runs `vramlint check . --offline` in its own process, as `hostile_inputs.py` does, with HF_TOKEN set to a
planted secret, a second secret in a file beside the case folder (outside the tree), XDG_CACHE_HOME and HOME in the
case's own scratch folders, and every output format written (text on stdout, json, github, sarif, markdown, gitlab,
junit). A Python audit hook (a sitecustomize on PYTHONPATH) records every file vramlint opens and every process it
starts. A case fails (BAD) when it takes 5 s (CPU time with --cpu-time) or 300 MB or more, exits with anything but 0
or 1, prints a traceback, lets either secret into any output or stderr, opens a file outside the tree (other than
Python's own, vramlint's package and its cache) or starts a process, writes into the tree, puts a raw control
character in text, markdown or stderr, writes a GitHub line that is not an annotation, writes invalid SARIF, GitLab
JSON or JUnit XML, or misses the finding the case expects on the file and line that cause it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_inputs as h  # noqa: E402  (the harness of the first two rounds: case writing, deployment helpers)

ROOT = os.path.join(HERE, "..")
LIMIT_SECONDS = h.LIMIT_SECONDS
LIMIT_MB = h.LIMIT_MB
SECRET = h.SECRET
OUTSIDE_SECRET = "OUTSIDE-secret-7f3e9a1c-do-not-print"  # in <base>/_outside/secret.*, beside every case folder
QWEN = ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
deployment = h.deployment
script_deployment = h.script_deployment
CHART = h.CHART
CHART_TEMPLATE = h.CHART_TEMPLATE
VALUES = "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 4096\n"
COMPOSE_HEAD = h.COMPOSE_HEAD

AUDIT_HOOK = r'''
import os, sys
_log = os.environ.get("VRAMLINT_AUDIT_LOG")
if _log:
    _fh = open(_log, "a", encoding="utf-8", errors="backslashreplace")
    def _hook(event, args, _fh=_fh):
        if event == "open":
            path = args[0]
            if isinstance(path, int):
                return
            if isinstance(path, bytes):
                path = path.decode("utf-8", "surrogateescape")
            mode = args[1] if len(args) > 1 else ""
            flags = args[2] if len(args) > 2 else 0
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            _fh.write(("W " if writing else "R ") + os.path.abspath(str(path)).replace("\n", "\\n") + "\n")
            _fh.flush()
        elif event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"):
            _fh.write("X " + repr(args)[:300].replace("\n", "\\n") + "\n")
            _fh.flush()
    sys.addaudithook(_hook)
'''


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth occurrence of needle in text."""
    at = -1
    for _ in range(nth):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1


def expect(*where: tuple) -> tuple:
    """The findings a case must have: (file, line) or (file, line, rule); line is a number, a tuple of the numbers
    any of which is right (a flag's line and its value's), or None (anywhere in the file)."""
    return ("expect", list(where))


SERVER = ("chart/templates/deploy.yaml", None)  # the chart's good template is still read: its server has findings
# A chart whose values file or overlay was not read (over the node bound, outside the tree) is not evaluated, and
# said on its Chart.yaml (since the eighth round: rendered with the values missing, its templates gave false errors)
CHART_NOT_EVALUATED = ("chart/Chart.yaml", 1, "VRL102")


def chart(templates: dict[str, str], values: str = VALUES, prefix: str = "chart", **extra: Any) -> dict[str, Any]:
    files: dict[str, Any] = {f"{prefix}/Chart.yaml": CHART, f"{prefix}/values.yaml": values}
    files.update({f"{prefix}/templates/{k}": v for k, v in templates.items()})
    files.update(extra)
    return files


def with_tpl(tpl: str, line: int | None = 1, name: str = "x.yaml") -> dict[str, Any]:
    """A chart whose deploy template is fine and whose other template is `tpl`: the bound is said on the hostile
    template's `line` (None: nothing to say, the functions are left unknown) and the deploy template still read."""
    where = [SERVER] + ([(f"chart/templates/{name}", line)] if line else [])
    return chart({"deploy.yaml": CHART_TEMPLATE, name: tpl}, __expect__=expect(*where))


def arg_case(*args: str, flag: str | None = None, extra: str = "") -> dict[str, Any]:
    """A Deployment with these extra args; the finding expected on the line of `flag`'s value (else none)."""
    text = deployment(QWEN + list(args), extra=extra)
    files: dict[str, Any] = {"deploy.yaml": text}
    if flag is not None:
        at = line_of(text, json.dumps(flag))
        files["__expect__"] = expect(("deploy.yaml", (at, at + 1)))
    return files


def fresh_cases() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    one = deployment(QWEN + ["--max-model-len", "999999"])  # an error on the value's line, wherever it is read
    bad_line = (line_of(one, '"999999"') - 1, line_of(one, '"999999"'))  # the flag's line or its value's
    model_line = line_of(one, '"Qwen/Qwen2.5-1.5B-Instruct"')

    # ---------------------------------------------------------------- Go templates
    out["tpl-crypto-functions"] = with_tpl("".join(
        f"k{i}: {{{{ genPrivateKey \"rsa\" | b64enc }}}} {{{{ genCA \"x\" 36500 }}}} {{{{ bcrypt \"p\" }}}} "
        f"{{{{ htpasswd \"u\" \"p\" }}}} {{{{ genSignedCert \"a\" nil nil 365 (genCA \"b\" 365) }}}}\n"
        for i in range(300)), line=None)
    out["tpl-randAlpha-1e8"] = with_tpl('x: {{ randAlpha 100000000 }}{{ randAscii 100000000 }}'
                                        '{{ randNumeric 100000000 }}{{ uuidv4 }}\n', line=None)
    out["tpl-repeat-of-repeat"] = with_tpl('x: {{ repeat 100000 (repeat 100000 "ab") }}\n')
    out["tpl-repeat-values-count"] = chart({"deploy.yaml": CHART_TEMPLATE, "x.yaml": "x: {{ repeat .Values.n \"ab\" }}\n"},
                                           values=VALUES + "n: 900000000\n",
                                           __expect__=expect(("chart/values.yaml", 3)))
    out["tpl-sha-of-huge"] = with_tpl('{{ $s := repeat 999999 "a" }}{{ range until 5000 }}'
                                      '{{ $s | sha256sum | trunc 3 }}{{ $s | b64enc | trunc 2 }}{{ end }}\n')
    out["tpl-b64dec-json-bomb"] = with_tpl(
        '{{ $j := repeat 50000 "[" }}{{ $x := fromJson (printf "%s1%s" $j (repeat 50000 "]")) }}'
        '{{ $y := fromJsonArray (printf "%s%s" $j (repeat 50000 "]")) }}'
        '{{ $z := fromYamlArray (printf "%s%s" $j (repeat 50000 "]")) }}'
        '{{ $w := "W1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tb" | b64dec | fromJson }}x: 1\n')
    out["tpl-untilstep-huge"] = with_tpl(
        '{{ range untilStep 0 9223372036854775807 1 }}{{ end }}{{ range untilStep 0 10 0 }}{{ end }}'
        '{{ range untilStep 10 -9223372036854775807 -1 }}{{ end }}{{ range seq 1 -1 -100000000 }}{{ end }}'
        '{{ range seq 100000000 }}{{ end }}\n')
    out["tpl-until-negative"] = with_tpl('{{ range until -100000000 }}x{{ end }}{{ range untilStep 5 0 1 }}y{{ end }}'
                                         '{{ range seq 0 0 }}{{ end }}{{ range seq 5 0 1 }}{{ end }}ok: 1\n')
    out["tpl-dict-set-growth"] = with_tpl(
        '{{ $d := dict }}{{ range $i := until 90000 }}{{ $_ := set $d (toString $i) (repeat 10 "x") }}{{ end }}'
        '{{ range until 90000 }}{{ $_ := set $d (randAlpha 8) $d }}{{ end }}'
        'x: {{ toYaml $d | nindent 2 }}\n')
    out["tpl-dict-self-reference"] = with_tpl(
        '{{ $d := dict "a" 1 }}{{ $_ := set $d "self" $d }}{{ $l := list $d $d }}{{ $_ := set $d "l" $l }}'
        'x: {{ toYaml $d }}\ny: {{ toJson $d }}\nz: {{ printf "%v" $d }}\nw: {{ deepCopy $d | len }}\n', line=None)
    out["tpl-mutual-include"] = chart({
        "_h.tpl": '{{ define "a" }}{{ include "b" . }}{{ include "b" . }}{{ end }}'
                  '{{ define "b" }}{{ include "a" . }}{{ include "a" . }}{{ end }}',
        "deploy.yaml": CHART_TEMPLATE, "x.yaml": 'x: {{ include "a" . }}\n'},
        __expect__=expect(SERVER, ("chart/templates/_h.tpl", 1)))
    out["tpl-include-fanout"] = chart({
        "_h.tpl": "".join(f'{{{{ define "d{i}" }}}}{{{{ include "d{i + 1}" . }}}}{{{{ include "d{i + 1}" . }}}}'
                          f'{{{{ include "d{i + 1}" . }}}}{{{{ end }}}}' for i in range(30))
        + '{{ define "d30" }}xxxxxxxxxx{{ end }}',
        "deploy.yaml": CHART_TEMPLATE, "x.yaml": 'x: {{ include "d0" . }}\n'},
        __expect__=expect(SERVER, ("chart/templates/_h.tpl", 1)))
    out["tpl-tpl-growth"] = chart({"deploy.yaml": CHART_TEMPLATE, "x.yaml": "x: {{ tpl .Values.t . }}\n"},
                                  values=VALUES + "t: '{{ tpl .Values.t . }}{{ tpl .Values.t . }}'\n",
                                  __expect__=expect(SERVER))
    out["tpl-deep-with"] = with_tpl("{{ with . }}" * 20_000 + "x: 1\n" + "{{ end }}" * 20_000)
    out["tpl-deep-range"] = with_tpl("{{ range until 2 }}" * 3_000 + "x\n" + "{{ end }}" * 3_000)
    out["tpl-deep-parens"] = with_tpl("x: {{ " + "(" * 50_000 + "1" + ")" * 50_000 + " }}\n")
    out["tpl-deep-if-else"] = with_tpl("{{ if false }}" + "{{ else if false }}" * 30_000 + "{{ else }}x: 1{{ end }}\n")
    out["tpl-long-pipeline"] = with_tpl('x: {{ "a" ' + "| quote " * 50_000 + "}}\n")
    out["tpl-200k-actions"] = with_tpl("{{ .Values.model }}" * 50_000 + "\n")
    out["tpl-printf-width"] = with_tpl('x: {{ printf "%0999999999d" 1 }}{{ printf "%*d" 999999999 1 }}'
                                       '{{ printf "%.999999999f" 1.0 }}{{ printf "%999999999s" "a" }}\n', line=None)
    out["tpl-int-edge-arith"] = with_tpl(
        'a: {{ div 1 0 }}\nb: {{ mod 1 0 }}\nc: {{ add1 9223372036854775807 }}\nd: {{ div -9223372036854775808 -1 }}\n'
        'e: {{ mul 1e308 1e308 }}\nf: {{ float64 "1e400" }}\ng: {{ int "99999999999999999999" }}\n'
        'h: {{ atoi "１２３" }}\ni: {{ sub 0 -9223372036854775808 }}\nj: {{ round 1e400 2 }}\n')
    out["tpl-regex-huge-output"] = with_tpl('x: {{ regexReplaceAll "" (repeat 400000 "a") (repeat 20 "b") | len }}\n'
                                            'y: {{ regexFindAll "a*" (repeat 900000 "a") -1 | len }}\n'
                                            'z: {{ regexSplit "" (repeat 900000 "a") -1 | len }}\n')
    out["tpl-split-join-growth"] = with_tpl(
        '{{ $s := repeat 900000 "a" }}x: {{ splitList "" $s | join (repeat 100 "b") | len }}\n'
        'y: {{ $s | replace "a" (repeat 100 "b") | len }}\nz: {{ splitList "" $s | toJson | len }}\n', line=(1, 2))
    # (line 1 since sprig's splitList on "" splits characters as Go's strings.Split does: 900,000 items, over the
    # list bound, before line 2's growth)
    out["tpl-values-huge-tree"] = chart({"deploy.yaml": CHART_TEMPLATE, "x.yaml": "x: {{ toYaml .Values | len }}\n"},
                                        values=VALUES + "big:\n" + "".join(f"  k{i}: [1, 2, 3]\n" for i in range(200_000)),
                                        __expect__=expect(CHART_NOT_EVALUATED))
    out["tpl-files-and-lookup"] = with_tpl(
        '{{ range $p, $_ := .Files.Glob "**" }}{{ $.Files.Get $p }}{{ end }}{{ .Files.Get "../../_outside/secret.txt" }}'
        '{{ (.Files.Glob "../**").AsConfig }}{{ lookup "v1" "Secret" "default" "" }}{{ .Files.Lines "/etc/passwd" }}'
        '{{ readFile "/etc/passwd" }}{{ env "HF_TOKEN" }}{{ expandenv "$HF_TOKEN" }}{{ getHostByName "x" }}\n',
        line=None)
    out["subchart-self-links"] = {
        **chart({"deploy.yaml": CHART_TEMPLATE}),
        **{f"chart/charts/s{i}": ("symlink", "..") for i in range(8)},
        **{f"chart/charts/u{i}": ("symlink", "../../chart") for i in range(4)},
        "__expect__": expect(SERVER)}
    dag: dict[str, Any] = {}
    for level in range(7):  # chart c0 has 12 links to c1, which has 12 links to c2, ...: 12**6 paths, 7 charts
        dag.update({f"c{level}/Chart.yaml": CHART.replace("name: bomb", f"name: c{level}"),
                    f"c{level}/values.yaml": VALUES, f"c{level}/templates/deploy.yaml": CHART_TEMPLATE})
        if level < 6:
            dag.update({f"c{level}/charts/s{i}": ("symlink", f"../../c{level + 1}") for i in range(12)})
    out["subchart-fanout-dag"] = {**dag, "__expect__": expect(("c0/templates/deploy.yaml", None))}
    out["subchart-tgz-bomb"] = {
        **chart({"deploy.yaml": CHART_TEMPLATE}),
        "chart/charts/bomb.tgz": _gzip_bomb(),
        "__expect__": expect(SERVER)}
    out["chart-deps-outside"] = {
        "chart/Chart.yaml": CHART + "dependencies:\n  - name: x\n    repository: file://../../_outside\n"
        "    version: 0.1.0\n  - name: y\n    repository: file:///etc\n",
        "chart/values.yaml": VALUES, "chart/templates/deploy.yaml": CHART_TEMPLATE,
        "__expect__": expect(SERVER)}
    out["helm-values-1M-keys-flow"] = chart({"deploy.yaml": CHART_TEMPLATE},
                                            values=VALUES + "x: {" + ", ".join(f"k{i}: {i}" for i in range(400_000))
                                            + "}\n",
                                            __expect__=expect(CHART_NOT_EVALUATED))

    # ---------------------------------------------------------------- YAML shapes
    out["yaml-300k-keys-mapping"] = {"deploy.yaml": one + "---\nkind: ConfigMap\ndata:\n"
                                     + "".join(f"  k{i}: v\n" for i in range(300_000)),
                                     "__expect__": expect(("deploy.yaml", bad_line))}
    out["yaml-1M-flow-items"] = {"deploy.yaml": one + "---\nkind: ConfigMap\nx: [" + ",".join(["1"] * 1_000_000) + "]\n",
                                 "__expect__": expect(("deploy.yaml", bad_line))}
    anchors = "".join(f"  a{i}: &a{i} v{i}\n  b{i}: *a{i}\n" for i in range(100_000))
    out["yaml-100k-anchors-once"] = {"deploy.yaml": one + "---\nkind: ConfigMap\ndata:\n" + anchors,
                                     "__expect__": expect(("deploy.yaml", bad_line))}
    out["yaml-merge-list-wide"] = {"compose.yaml": "".join(f"x-a{i}: &a{i} {{k{i}: {i}}}\n" for i in range(3000))
                                   + COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n"
                                   + "".join(f"  s{j}:\n    image: busybox\n    labels:\n      <<: ["
                                             + ", ".join(f"*a{i}" for i in range(3000)) + "]\n" for j in range(30))}
    out["yaml-compact-nested-seq"] = {"deploy.yaml": one + "---\nx:\n" + "- " * 20_000 + "x\n",
                                      "__expect__": expect(("deploy.yaml", line_of(one, "nvidia.com/gpu") + 3))}
    out["yaml-deep-block-maps"] = {"deploy.yaml": one + "---\n" + "".join(" " * i + "a:\n" for i in range(3000)),
                                   "__expect__": expect(("deploy.yaml", bad_line))}
    out["yaml-deep-explicit-keys"] = {"deploy.yaml": one + "---\n" + "? " * 5_000 + "x\n",
                                      "__expect__": expect(("deploy.yaml", bad_line))}
    out["yaml-tags-and-directives"] = {"deploy.yaml": "%YAML 1.1\n%TAG !x! tag:evil.com,2000:\n---\n"
                                       + one.replace("name: llm", "name: !!python/object/apply:os.system [\"id\"]")
                                       .replace("nvidia.com/gpu: \"1\"", "nvidia.com/gpu: !!binary aGVsbG8=")
                                       + "---\n!x!foo {a: !!python/name:os.system , b: !!set {a, b}, c: !!omap [a: 1]}\n",
                                       "__expect__": expect(("deploy.yaml", tuple(n + 3 for n in bad_line)))}
    # typed slots
    out["arg-max-len-1e400"] = arg_case("--max-model-len", "1e400", flag="--max-model-len")
    out["arg-max-len-23-digits"] = arg_case("--max-model-len", "99999999999999999999999", flag="--max-model-len")
    out["arg-max-len-hex"] = arg_case("--max-model-len", "0x10", flag="--max-model-len")
    out["arg-max-len-fullwidth"] = arg_case("--max-model-len", "\uff14\uff10\uff19\uff16", "--max-num-seqs",
                                            "\u0664", flag="--max-model-len")
    out["arg-max-len-minus-zero"] = arg_case("--max-model-len", "-0", flag="--max-model-len")
    out["arg-max-len-1k-forms"] = arg_case("--max-model-len", "1e308k", "--max-num-batched-tokens", "9" * 400 + "K",
                                           flag="--max-model-len")
    out["arg-util-negative"] = arg_case("--gpu-memory-utilization", "-0.5", flag="--gpu-memory-utilization")
    out["arg-util-over-one"] = arg_case("--gpu-memory-utilization", "1.5", flag="--gpu-memory-utilization")
    out["arg-util-tiny"] = arg_case("--gpu-memory-utilization", "1e-320", flag="--gpu-memory-utilization")
    out["arg-util-nan-word"] = arg_case("--gpu-memory-utilization", "nan", flag="--gpu-memory-utilization")
    out["arg-many-numbers-inf"] = arg_case("--swap-space", "1e400", "--cpu-offload-gb", "-1e308",
                                           "--num-gpu-blocks-override", "9" * 30, "--max-num-seqs", "0",
                                           "--max-num-batched-tokens", "-1", "--seed", "9" * 4000,
                                           "--max-logprobs", "-99999999999999999999", flag="--swap-space")
    out["arg-tp-2pow62"] = arg_case("--tensor-parallel-size", str(2**62), flag="--tensor-parallel-size")
    out["arg-pp-2pow62"] = arg_case("--pipeline-parallel-size", str(2**62), flag="--pipeline-parallel-size")
    out["arg-dp-2pow62"] = arg_case("--data-parallel-size", str(2**62), "--tensor-parallel-size", "4",
                                    flag="--data-parallel-size")
    out["arg-pp-many-gpus"] = {"deploy.yaml": deployment(QWEN + ["--pipeline-parallel-size", "1000000",
                                                                 "--tensor-parallel-size", "1000"])
                               .replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "1000000000"'),
                               "__expect__": expect(("deploy.yaml", line_of(one, '"--model"') + 3))}
    out["gpu-count-huge"] = {"deploy.yaml": one.replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "9' + "9" * 40 + '"')
                             .replace("spec:\n  template", "spec:\n  replicas: 1e400\n  template"),
                             "__expect__": expect(("deploy.yaml", line_of(one, "nvidia.com/gpu")))}
    out["gpu-count-quantity-forms"] = {"deploy.yaml": "---\n".join(
        one.replace("name: llm", f"name: llm{i}").replace('nvidia.com/gpu: "1"', f"nvidia.com/gpu: {q}")
        for i, q in enumerate(["1e3", "-1", "0.5", "1Ki", "1E18", "'0x10'", "'１'", ".inf", "1e400", "2Ei"])),
        "__expect__": expect(("deploy.yaml", line_of(one, "nvidia.com/gpu")))}
    deep_json = "[" * 100_000 + "]" * 100_000
    out["arg-json-deep"] = arg_case("--hf-overrides", deep_json, "--speculative-config", "{\"a\":" * 100_000 + "1"
                                    + "}" * 100_000, "--compilation-config", deep_json,
                                    "--kv-transfer-config", deep_json, "--limit-mm-per-prompt", deep_json,
                                    "--override-generation-config", deep_json, flag="--hf-overrides")
    out["arg-hf-overrides-inf"] = arg_case("--hf-overrides", json.dumps({
        "num_hidden_layers": 1e300, "hidden_size": -1, "vocab_size": 0, "num_attention_heads": 0,
        "max_position_embeddings": 10**30, "num_key_value_heads": "x"}).replace("1e+300", "1e400"),
        flag="--hf-overrides")
    out["arg-hf-overrides-nan"] = arg_case("--hf-overrides", '{"num_hidden_layers": NaN, "intermediate_size": '
                                           'Infinity, "rope_scaling": {"factor": -Infinity}}', flag="--hf-overrides")
    out["arg-speculative-hostile"] = arg_case("--speculative-config", json.dumps({
        "model": "../../_outside", "num_speculative_tokens": 10**18, "draft_tensor_parallel_size": -5,
        "method": "\x1b[31m::error::x"}), flag="--speculative-config")
    out["arg-model-outside"] = {"deploy.yaml": deployment(["--model", "../_outside", "--tokenizer", "/etc",
                                                           "--chat-template", "../_outside/secret.txt",
                                                           "--download-dir", "/proc/self"]),
                                "__expect__": expect(("deploy.yaml", model_line))}
    out["arg-model-proc"] = {"deploy.yaml": deployment(["--model", "/proc/self/cwd/../_outside"]) + "---\n"
                             + deployment(["--model", "/proc/self/root/etc"], name="b") + "---\n"
                             + deployment(["--model", "/dev/stdin"], name="c") + "---\n"
                             + deployment(["--model", "~/../../etc"], name="d"),
                             "__expect__": expect(("deploy.yaml", model_line))}
    out["arg-model-local-link-out"] = {"deploy.yaml": deployment(["--model", "./m"]), "m/config.json":
                                       ("symlink", "../../_outside/config.json"), "n": ("symlink", "../_outside"),
                                       "deploy2.yaml": deployment(["--model", "./n"], name="b"),
                                       "__expect__": expect(("deploy.yaml", model_line),
                                                            ("deploy2.yaml", model_line))}
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "intermediate_size": 14336, "vocab_size": 128256, "torch_dtype": "bfloat16",
           "max_position_embeddings": 8192}
    deep_cfg = json.dumps(cfg)[:-1] + ', "text_config": ' + '{"a": ' * 50_000 + "1" + "}" * 50_001
    out["local-config-deep"] = {"m/config.json": deep_cfg, "deploy.yaml": deployment(["--model", "./m"]),
                                "__expect__": expect(("deploy.yaml", model_line))}
    out["local-config-hostile-numbers"] = {
        "m/config.json": json.dumps(dict(cfg, hidden_size=1e300, num_hidden_layers=2**62, vocab_size=-5,
                                         head_dim=0)).replace("1e+300", "1e400"),
        "m2/config.json": json.dumps(dict(cfg, num_attention_heads=0, num_key_value_heads=0)),
        "m3/config.json": json.dumps(dict(cfg, rope_scaling={"factor": 1e308, "type": "linear"},
                                          sliding_window=-1, max_position_embeddings=2**63 - 1)),
        "deploy.yaml": deployment(["--model", "./m"]) + "---\n" + deployment(["--model", "./m2"], name="b")
        + "---\n" + deployment(["--model", "./m3"], name="c"),
        "__expect__": expect(("deploy.yaml", model_line))}
    out["local-safetensors-hostile"] = {
        "m/config.json": json.dumps(cfg), "m/model.safetensors": (2**62).to_bytes(8, "little") + b"{}",
        "m/model-00001-of-00002.safetensors": (40).to_bytes(8, "little") + b'{"a": {"shape": [99999999999999]}}',
        "m/model.safetensors.index.json": json.dumps({"weight_map": {f"w{i}": "../../_outside/secret.txt"
                                                                     for i in range(10)}}),
        "deploy.yaml": deployment(["--model", "./m"]),
        "__expect__": expect(("deploy.yaml", model_line))}

    # ---------------------------------------------------------------- many things at once (quadratic rules?)
    out["compose-3000-services-one-gpu"] = {
        "compose.yaml": "services:\n" + "".join(
            f"  s{i}:\n    image: vllm/vllm-openai:v0.8.5\n    command: --model Qwen/Qwen2.5-1.5B-Instruct\n"
            "    deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: ['0'], "
            "capabilities: [gpu]}]}}}\n" for i in range(3000)),
        "__expect__": expect(("compose.yaml", 3))}
    rt = ("apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata: {{name: rt{i}}}\nspec:\n"
          "  supportedModelFormats: [{{name: huggingface, autoSelect: true}}]\n  containers:\n"
          "    - name: kserve-container\n      image: kserve/huggingfaceserver:v0.15.0-gpu\n"
          "      args: [--model_name={{{{.Name}}}}, --backend=vllm]\n"
          "      resources: {{limits: {{nvidia.com/gpu: '1'}}}}\n")
    isvc = ("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {{name: m{i}}}\nspec:\n"
            "  predictor:\n    model:\n      modelFormat: {{name: huggingface}}\n      runtime: missing{i}\n"
            "      storageUri: hf://Qwen/Qwen2.5-1.5B-Instruct\n      args: [--max-model-len=4096]\n")
    out["kserve-3000-runtimes-3000-isvc"] = {"kserve.yaml": "---\n".join(
        [rt.format(i=i) for i in range(3000)] + [isvc.format(i=i) for i in range(3000)]),
        "__expect__": expect(("kserve.yaml", 3000 * 10 + 8))}
    out["env-10k-vars"] = {"deploy.yaml": one.replace("          resources:", "          env:\n" + "".join(
        f"            - {{name: V{i}, value: '$(V{i - 1})x'}}\n" for i in range(1, 10_000))
        + "          resources:", 1), "__expect__": expect(("deploy.yaml", bad_line))}
    out["suppressions-100k"] = {"deploy.yaml": one.replace("spec:\n  template", "spec:\n"
                                                           + "  # vramlint: ignore[VRL001] because\n" * 100_000
                                                           + "  template"),
                                "x.yaml": "# vramlint: ignore[\n" * 50_000 + "# vramlint: ignore[VRL" + "9" * 5000
                                + "] " + "x" * 100_000 + "\n" + one,
                                "__expect__": expect(("deploy.yaml", 5))}

    # ---------------------------------------------------------------- the file system
    out["files-50k-empty"] = {**{f"d{i // 1000}/f{i}.yaml": "" for i in range(50_000)}, "deploy.yaml": one,
                              "__expect__": expect(("deploy.yaml", bad_line))}
    deep_dir = "/".join(["d"] * 400)
    out["dirs-400-deep"] = {f"{deep_dir}/deploy.yaml": one, "deploy.yaml": one,
                            "__expect__": expect(("deploy.yaml", bad_line))}
    out["symlink-chain-and-dir-cycle"] = {
        "deploy.yaml": one, "l0.yaml": ("symlink", "deploy.yaml"),
        **{f"l{i}.yaml": ("symlink", f"l{i - 1}.yaml") for i in range(1, 60)},
        "a/b/up": ("symlink", "../../a"), "a/b/c/up2": ("symlink", "../.."), "a/x.yaml": one,
        "a/b/deep": ("symlink", "/proc/self/cwd"), "a/b/fd": ("symlink", "/proc/self/fd/0"),
        "__expect__": expect(("deploy.yaml", bad_line))}
    out["gitignore-hostile-patterns"] = {
        ".git/HEAD": "ref: refs/heads/main\n", "deploy.yaml": one,
        ".gitignore": "".join(f"*a*a*a*a*a*a*a*a*a*a*b{i}/**/x\n" for i in range(2000)),
        **{f"{'a' * 200}/{i}/x.yaml": "a: 1\n" for i in range(20)}, "__expect__": expect(("deploy.yaml", bad_line))}
    out["gitignore-50k-patterns"] = {
        ".git/HEAD": "ref: refs/heads/main\n", "deploy.yaml": one,
        ".gitignore": "".join(f"build{i}/\n" for i in range(50_000)) + "vendored/\n",
        "vendored/x.yaml": one, "__expect__": expect(("deploy.yaml", bad_line))}
    names = ["\u202eevil\u202c.yaml", "a\rb.yaml", "tab\there.yaml", "::error file=a.yaml::pwned.yaml",
             "##[error]x.yaml", "%0A::set-output name=x::y.yaml", "<script>.yaml", "]]>&amp;.yaml",
             "\x01\x02\x7f.yaml", "x" * 240 + ".yaml", "-rf.yaml", "--output-file.yaml"]
    out["hostile-names-every-format"] = {
        **{f"n{i}/{n}": deployment(["--model", "Org/\x1b[2Jno-such\u202e", "--served-model-name",
                                    "::error::x\n##[warning]y|`z`</testcase>]]>"], name=f"n{i}")
           for i, n in enumerate(names)},
        "\x1b[31mdir\n::error::/deploy.yaml": one,
        "__expect__": expect((f"n0/{names[0]}", model_line))}
    # ---------------------------------------------------------------- configuration from the repository
    out["config-hostile-values"] = {
        ".vramlint.yaml": "render-helm: true\nexclude: [" + ", ".join(["'**/*a*a*a*a*a*a*a*a*a*a*b'"] * 2000)
        + ", '../_outside/**', '/etc/**']\nhelm-values: [../_outside/secret.yaml, /proc/self/environ]\n"
        "hub-cache-max-age-days: 1e300\nmodel-aliases:\n" + "".join(f"  m{i}: ../_outside/config.json\n"
                                                                      for i in range(2000))
        + "overrides:\n" + "".join(f"  - files: ['{'*' * 50}{i}']\n    ignore: [VRL001]\n" for i in range(2000)),
        "deploy.yaml": one, "a" * 200 + "b.yaml": one, "m0.yaml": deployment(["--model", "m0"], name="m0"),
        "__expect__": expect((".vramlint.yaml", 1), ("deploy.yaml", bad_line))}
    out["config-helm-values-outside"] = {
        ".vramlint.yaml": "fail-on: error\nhelm-values: [../_outside/secret.yaml, /proc/self/environ, /dev/zero]\n",
        **chart({"deploy.yaml": CHART_TEMPLATE}),
        "__expect__": expect((".vramlint.yaml", 2), CHART_NOT_EVALUATED)}
    out["config-custom-gpu-absurd"] = {
        ".vramlint.yaml": "gpu: X\ncustom-gpus:\n  - {name: X, memory-gib: 1e300, compute-capability: '9.0'}\n",
        "deploy.yaml": one.replace("nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      ", ""),
        "__expect__": expect(("config-error", ".vramlint.yaml", 3))}
    out["config-custom-gpu-nan"] = {
        ".vramlint.yaml": "gpu: X\ncustom-gpus:\n  - {name: X, memory-gib: .nan}\n  - {name: Y, memory-gib: -1}\n",
        "deploy.yaml": one, "__expect__": expect(("config-error", ".vramlint.yaml", 3))}
    out["config-escape-values"] = {
        ".vramlint.yaml": "gpu: \"\\e[31m::error::x\\u202e\"\nvllm-version: \"\\e]0;t\\a99999.1\"\n",
        "deploy.yaml": one, "__expect__": expect(("config-error", ".vramlint.yaml", 1))}
    out["pyproject-toml-deep"] = {"pyproject.toml": "[tool.vramlint]\nexclude = " + "[" * 10_000 + "]" * 10_000 + "\n",
                                  "deploy.yaml": one, "__expect__": expect(("config-error", "pyproject.toml", 2))}
    out["pyproject-toml-inline-deep"] = {"pyproject.toml": "[tool.vramlint]\nx = " + "{a = " * 10_000 + "1"
                                         + "}" * 10_000 + "\n", "deploy.yaml": one,
                                         "__expect__": expect(("config-error", "pyproject.toml", 2))}
    out["config-yaml-bomb"] = {".vramlint.yaml": h.alias_bomb() + "exclude: *a9\n", "deploy.yaml": one,
                               "__expect__": expect(("config-error", ".vramlint.yaml", 10))}
    out["config-json-bomb"] = {".vramlint.yaml": "exclude: " + "[" * 100_000 + "]" * 100_000 + "\n",
                               "deploy.yaml": one, "__expect__": expect(("config-error", ".vramlint.yaml", 1))}
    # ---------------------------------------------------------------- shell
    out["shell-heredoc-huge"] = {"deploy.yaml": script_deployment(
        "cat <<'EOF' > /tmp/x\n" + "line $(vllm serve Org/in-heredoc)\n" * 20_000 + "EOF\n"
        "cat <<EOF2\nunterminated\n" + "vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096\n"),
        "__expect__": expect(("deploy.yaml", 14))}
    out["shell-arith-exponent"] = {"deploy.yaml": script_deployment(
        "N=$(( 2 ** 99999999 ))\nM=$(( 9 ** 9 ** 9 ** 9 ))\nL=$(( (1<<62) * 1000 ))\nZ=$(( 1 / 0 ))\n"
        "vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len $N --max-num-seqs $M --seed $L --swap-space $Z"),
        "__expect__": expect(("deploy.yaml", 18))}
    out["shell-brace-expansion"] = {"deploy.yaml": script_deployment(
        "A=$(echo {1..100000000})\nB={a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"
        "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}\n"
        "vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name {1..100000000} $B --max-model-len 4096"),
        "__expect__": expect(("deploy.yaml", 16))}
    out["shell-printf-star"] = {"deploy.yaml": script_deployment(
        "P=$(printf '%*s' 100000000 x)\nprintf -v Q '%0999999999d' 1\n"
        "vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name \"$P$Q\" --max-model-len 4096"),
        "__expect__": expect(("deploy.yaml", 15))}
    out["shell-nested-substitution"] = {"deploy.yaml": script_deployment(
        "X=" + "$(echo " * 5_000 + "a" + ")" * 5_000 + "\nY=" + "`echo " + "\\`echo " * 30 + "b" + "\\`" * 30
        + "`\nvllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name $X$Y"),
        "__expect__": expect(("deploy.yaml", 15))}
    out["shell-positional-doubling"] = {"deploy.yaml": script_deployment(
        "set -- a\n" + 'set -- "$@" "$@"\n' * 40 + 'vllm serve Qwen/Qwen2.5-1.5B-Instruct "$@"'),
        "__expect__": expect(("deploy.yaml", 14))}
    out["shell-recursive-function"] = {"deploy.yaml": script_deployment(
        "f() { f; f; vllm serve Org/x; }\nf\ng() { h; }\nh() { g; }\ng\nalias vllm='vllm vllm vllm'\n"
        + "A=${A//x/xxxxxxxxxx}\n" * 30 + "vllm serve Qwen/Qwen2.5-1.5B-Instruct ${A:0:99999999999999999999}"),
        "__expect__": expect(("deploy.yaml", 14))}
    out["shell-replace-growth"] = {"deploy.yaml": script_deployment(
        "A=xx\n" + 'A="${A//x/$A}"\n' * 30 + 'B=${#A}\nC=${A:-$A$A}${A:+$A$A}\n'
        'vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name "$C" --max-model-len $B'),
        "__expect__": expect(("deploy.yaml", 14))}
    out["shell-many-vllm-lines"] = {"deploy.yaml": script_deployment(
        "\n".join(f"vllm serve Qwen/Qwen2.5-1.5B-Instruct --port {i} &" for i in range(20_000)) + "\nwait"),
        "__expect__": expect(("deploy.yaml", 14))}
    # ---------------------------------------------------------------- references out of the tree
    out["compose-include-secrets-configs"] = {
        "compose.yaml": "include:\n  - ../_outside/compose.yaml\n  - path: /proc/self/environ\n"
        "    env_file: ../_outside/secret.env\n" + COMPOSE_HEAD
        + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --config /run/secrets/s\n"
        "    secrets: [s]\n    configs: [c]\n    env_file:\n      - path: ../_outside/secret.env\n        required: false\n"
        "      - path: /proc/self/environ\n        format: raw\n"
        "    label_file: ../_outside/secret.env\n"
        "secrets:\n  s: {file: ../_outside/secret.yaml}\nconfigs:\n  c: {file: /proc/self/environ}\n",
        "__expect__": expect(("compose.yaml", 9))}
    out["compose-config-via-parent-mount"] = {
        "compose.yaml": COMPOSE_HEAD + "    command: --config /up/_outside/secret.yaml --model Qwen/Qwen2.5-1.5B-Instruct\n"
        "    volumes: ['..:/up', '/:/host', '~/.cache/huggingface:/root/.cache/huggingface']\n"
        "  b:\n    image: vllm/vllm-openai:v0.8.5\n    command: --config /host/proc/self/environ --model x/y\n"
        "    volumes: ['/:/host']\n",
        "__expect__": expect(("compose.yaml", 4))}
    out["compose-env-interpolation-token"] = {
        "compose.yaml": COMPOSE_HEAD + "    command: --model ${HF_TOKEN} --served-model-name ${HF_TOKEN:?x} "
        "--tokenizer ${HOME}/x ${HF_TOKEN-d} $${HF_TOKEN}\n"
        "    environment: {A: '${HF_TOKEN:+set}', B: \"$HF_TOKEN\"}\n",
        ".env": "X=${HF_TOKEN}\nMODEL=${X}\n",
        "__expect__": expect(("compose.yaml", 4))}
    # What the right finding is, set after reading vLLM's behaviour for each (not fitted to vramlint's output):
    # none is certain where vLLM accepts the value (Python's int() reads fullwidth digits, and -0 is 0) or where
    # vramlint does not model the flag (--hf-overrides, --speculative-config's numbers, --swap-space); a model
    # that cannot be read (outside the tree, nested too deeply, absurd numbers) is in the run's summary of
    # servers without a budget, by cause, not a finding per server.
    corrected = {
        "subchart-fanout-dag": expect(), "arg-max-len-fullwidth": expect(), "arg-max-len-minus-zero": expect(),
        "arg-hf-overrides-inf": expect(), "arg-hf-overrides-nan": expect(), "arg-speculative-hostile": expect(),
        "arg-model-outside": expect(), "arg-model-proc": expect(), "local-config-deep": expect(),
        "local-config-hostile-numbers": expect(),
        "arg-many-numbers-inf": expect(("deploy.yaml", 21)),
        "arg-dp-2pow62": expect(("deploy.yaml", (16, 17, 18, 19))),
        "arg-pp-many-gpus": expect(("deploy.yaml", 16)),
        "gpu-count-huge": expect(("deploy.yaml", line_of(out["gpu-count-huge"]["deploy.yaml"], "nvidia.com/gpu"))),
        "arg-model-local-link-out": expect(("n", 1)),
        "compose-3000-services-one-gpu": expect(("compose.yaml", 5)),
        "kserve-3000-runtimes-3000-isvc": expect(("kserve.yaml", 7)),
        "suppressions-100k": expect(("deploy.yaml", 6), ("deploy.yaml", 206), ("x.yaml", 201)),
        "hostile-names-every-format": expect(("\x1b[31mdir\n::error::/deploy.yaml", bad_line)),
        "compose-include-secrets-configs": expect(("compose.yaml", 12), ("compose.yaml", 14)),
    }
    for name in ("shell-arith-exponent", "shell-brace-expansion", "shell-printf-star", "shell-nested-substitution",
                 "shell-positional-doubling", "shell-replace-growth",
                 "shell-heredoc-huge", "shell-many-vllm-lines"):
        corrected[name] = expect(("deploy.yaml", 9))  # the server's line: what of its command line is not read
    # a function that calls itself first never returns (the shell dies of it): nothing after it is certain
    corrected["shell-recursive-function"] = expect()
    for name, want in corrected.items():
        out[name]["__expect__"] = want
    return out


def _gzip_bomb() -> bytes:
    """A .tgz whose one member is a 1 GB tar entry of zeros: 1,024 gzip members of 1 MB of zeros each (about 1 MB
    in all; a multi-member gzip stream is one file to every reader)."""
    import gzip
    import tarfile

    info = tarfile.TarInfo("bomb/Chart.yaml")
    info.size = 1 << 30
    return gzip.compress(info.tobuf(), 9) + gzip.compress(b"\0" * (1 << 20), 9) * 1024


def _snapshot(folder: str) -> dict[str, tuple[int, float]]:
    seen: dict[str, tuple[int, float]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            seen[p] = (st.st_size, st.st_mtime)
    return seen


FORMATS = ("json", "github", "sarif", "markdown", "gitlab", "junit")


def run_case(name: str, files: dict[str, Any], base: str, timeout: float, hub: str | None = None,
             moving: tuple[str, ...] = ()) -> dict[str, Any]:
    """One case's run and judgement. ``hub``: the URL of a Hub to ask (HF_ENDPOINT; the run is then not offline);
    ``moving``: paths in the tree that the caller changes during the run (not writes of vramlint's)."""
    folder = os.path.join(base, name)
    os.makedirs(folder, exist_ok=True)
    expected = files.get("__expect__", ("expect", []))[1]
    files = {k: v for k, v in files.items() if k != "__expect__"}
    extra = h.write_case(folder, files)
    scratch = os.path.join(base, f"_scratch-{name}")
    for sub in ("cache", "home", "hook"):
        os.makedirs(os.path.join(scratch, sub), exist_ok=True)
    with open(os.path.join(scratch, "hook", "sitecustomize.py"), "w", encoding="utf-8") as fh:
        fh.write(AUDIT_HOOK)
    audit_log = os.path.join(scratch, "audit.log")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(scratch, "hook"), os.path.abspath(ROOT)]),
               HF_HUB_OFFLINE="1", HF_TOKEN=SECRET, XDG_CACHE_HOME=os.path.join(scratch, "cache"),
               HOME=os.path.join(scratch, "home"), VRAMLINT_AUDIT_LOG=audit_log, NO_COLOR="1")
    env.pop("GITHUB_ACTIONS", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    if hub:
        env.pop("HF_HUB_OFFLINE")
        env["HF_ENDPOINT"] = hub
    reports = {fmt: os.path.join(scratch, f"report.{fmt}") for fmt in FORMATS}
    cmd = [sys.executable, "-m", "vramlint", "check", ".", *extra, *([] if hub else ["--offline"]),
           "--output-format", "text"]
    for fmt in FORMATS:
        cmd += ["--output-format", fmt, "--output-file", reports[fmt]]
    before = _snapshot(folder)
    out, err, code, seconds = h.run_timed(cmd, folder, env, timeout)
    h._restore_modes(folder)
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result: dict[str, Any] = {"seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime,
                              "peak": usage.ru_maxrss / 1024, "code": code, "problems": [], "first": "-"}
    problems = result["problems"]
    outputs = {"text": out, "stderr": err}
    for key in ("text", "stderr"):  # kept beside the other reports, for the rounds' own checks
        with open(os.path.join(scratch, f"report.{key}"), "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(outputs[key])
    for fmt, path in reports.items():
        try:
            with open(path, encoding="utf-8", errors="backslashreplace") as fh:
                outputs[fmt] = fh.read()
        except OSError:
            outputs[fmt] = ""
    for secret, what in ((SECRET, "the planted HF_TOKEN"), (OUTSIDE_SECRET, "the secret file outside the tree")):
        leaks = [k for k, v in outputs.items() if secret in v]
        if leaks:
            problems.append(f"LEAK: {what} is in {', '.join(leaks)}")
    # vramlint's contract: a configuration file found in the tree that cannot be used is a VRL102 error finding on
    # its line (checked with the others below) and the run goes on, exit 0 or 1; never exit 2
    code_ok = False
    if "Traceback" in err:
        problems.append(f"traceback: {err.strip().splitlines()[-1][:160]}")
    elif code not in (0, 1) and not code_ok:
        problems.append(f"exit {code}: {(err.strip().splitlines() or ['-'])[-1][:160]}")
    for k in ("text", "stderr", "markdown"):
        bad = sorted({c for c in outputs[k] if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) < 0xa0
                      or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"})
        if bad:
            problems.append(f"raw control character(s) {[hex(ord(c)) for c in bad][:5]} in {k}")
    if any(line.startswith("::") and not line.startswith(("::error ", "::warning ", "::notice ", "::group::",
                                                           "::endgroup::"))
           for line in outputs["github"].splitlines()):
        problems.append("a github output line that is not vramlint's own annotation")
    for k in ("text", "stderr"):
        for line in outputs[k].splitlines():
            if line.lstrip().startswith("::") or "##[" in line:
                problems.append(f"{k} has a line the runner reads as a workflow command: {line[:80]!r}")
                break
    for fmt in ("sarif", "gitlab"):
        if code in (0, 1) and not code_ok:
            try:
                json.loads(outputs[fmt])
            except ValueError as exc:
                problems.append(f"{fmt} is not JSON: {exc}")
    if code in (0, 1) and not code_ok:
        try:
            ET.fromstring(outputs["junit"])
        except ET.ParseError as exc:
            problems.append(f"junit is not XML: {exc}")
    after = _snapshot(folder)
    moved = tuple(os.path.join(folder, m) for m in moving)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p)
                     and not os.path.isdir(p) and not p.startswith(moved or ("\0",)))
    if changed:
        problems.append(f"wrote into the tree: {changed[:3]}")
    problems.extend(_audit(audit_log, folder, scratch, base))
    findings: list[dict] = []
    try:
        findings = json.loads(outputs["json"]).get("findings") or []
    except (ValueError, AttributeError):
        pass
    for want in expected:
        if want[0] == "config-error":
            want = (want[1], want[2], "VRL102")
        file, line = want[0], want[1]
        rule = want[2] if len(want) > 2 else None
        lines = line if isinstance(line, tuple) else (line,)
        if not any(f.get("file") == file and (line is None or f.get("line") in lines)
                   and (rule is None or f.get("rule") == rule) for f in findings):
            near = [f"{f.get('rule')} {f.get('file')}:{f.get('line')}" for f in findings][:4]
            problems.append(f"no finding on {file}:{line}{' ' + rule if rule else ''} (has {near})"
                            .encode("unicode_escape").decode("ascii"))
    if findings:
        rank = {"error": 0, "warning": 1, "note": 2}
        f = min(findings, key=lambda x: rank.get(x.get("level"), 3))
        result["first"] = (f"{f.get('rule')} {f.get('file')}:{f.get('line')} {f.get('message', '')[:110]}"
                           .encode("unicode_escape").decode("ascii"))
    elif code in (0, 1):
        result["first"] = "(no finding)"
    elif code_ok:
        result["first"] = (err.strip().splitlines() or ["-"])[0][:150].encode("unicode_escape").decode("ascii")
    return result


def _audit(log: str, folder: str, scratch: str, base: str) -> list[str]:
    """Files opened outside the tree (and not Python's, vramlint's or the cache), writes, processes started."""
    import sysconfig

    try:
        with open(log, encoding="utf-8", errors="replace") as fh:
            entries = fh.read().splitlines()
    except OSError:
        return ["the audit hook wrote nothing (not loaded?)"]
    real_folder = os.path.realpath(folder)
    allowed = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, ROOT, scratch,
                                             sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"])}
    allowed |= {os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)}
    system = ("/usr/lib/", "/usr/local/lib/", "/usr/share/zoneinfo", "/etc/localtime", "/dev/null", "/dev/urandom",
              "/etc/ld.so", "/lib/", "/lib64/", "/usr/lib64/", "/opt/")
    problems: list[str] = []
    outside: list[str] = []
    for entry in entries:
        kind, _, path = entry.partition(" ")
        if kind == "X":
            problems.append(f"started a process: {path[:120]}")
            continue
        real = os.path.realpath(path)
        if real == real_folder or real.startswith(real_folder + os.sep) or path.startswith(folder + os.sep):
            if kind == "W":
                problems.append(f"opened for writing inside the tree: {path[:120]}")
            continue
        if any(real == a or real.startswith(a + os.sep) for a in allowed) or real.startswith(system) \
                or path.startswith(system):
            if kind == "W" and not real.startswith(os.path.realpath(scratch)) and real != "/dev/null":
                problems.append(f"opened for writing outside the cache: {path[:120]}")
            continue
        outside.append(path)
    if outside:
        problems.append(f"opened {len(outside)} file(s) outside the tree: "
                        + ", ".join(sorted(set(outside))[:4]).encode("unicode_escape").decode("ascii"))
    return problems


def _plant_outside(base: str) -> None:
    outside = os.path.join(base, "_outside")
    os.makedirs(outside, exist_ok=True)
    for name, text in (("secret.txt", OUTSIDE_SECRET), ("secret.env", f"HF_TOKEN={OUTSIDE_SECRET}\n"
                                                       f"MODEL={OUTSIDE_SECRET}\n"),
                       ("secret.yaml", f"model: {OUTSIDE_SECRET}\nserved-model-name: {OUTSIDE_SECRET}\n"),
                       ("compose.yaml", f"services:\n  s:\n    image: vllm/vllm-openai:v0.8.5\n    command: --model "
                                        f"{OUTSIDE_SECRET}/x\n"),
                       ("config.json", json.dumps({"architectures": [OUTSIDE_SECRET], "model_type": OUTSIDE_SECRET})),
                       ("Chart.yaml", f"apiVersion: v2\nname: {OUTSIDE_SECRET}\nversion: 0.1.0\n")):
        with open(os.path.join(outside, name), "w", encoding="utf-8") as fh:
            fh.write(text)


def main() -> int:
    return run_cli(__doc__.split("\n\n")[0], fresh_cases, "fresh", FRESH_CHILD)


# One case's run in a child interpreter (argv: benchmarks folder, case, base, timeout), so that RUSAGE_CHILDREN
# there measures this case's vramlint alone
FRESH_CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_fresh as f; "
               "print(json.dumps(f.run_case(sys.argv[2], f.fresh_cases()[sys.argv[2]], sys.argv[3], "
               "float(sys.argv[4]))))")


def run_cli(description: str, cases: Any, label: str, child: str) -> int:
    """The command line of a hostile round: each case of ``cases()`` run by ``child``, judged and printed."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--case", action="append", help="run only these cases")
    parser.add_argument("--keep", metavar="DIR", help="write the cases into DIR and keep them")
    parser.add_argument("--timeout", type=float, default=60.0, help="kill a case after this many seconds")
    parser.add_argument("--cpu-time", action="store_true",
                        help="judge the 5 s limit on the case's CPU time, not wall time (on a loaded machine)")
    args = parser.parse_args()
    names = args.case or list(cases())
    base = os.path.abspath(args.keep or tempfile.mkdtemp(prefix=f"vramlint-{label}-"))
    os.makedirs(base, exist_ok=True)
    _plant_outside(base)
    ok = 0
    try:
        for name in names:
            r = _isolated(child, name, base, args.timeout)
            judged = r["cpu"] if args.cpu_time else r["seconds"]
            if judged >= LIMIT_SECONDS:
                r["problems"].insert(0, f"over {LIMIT_SECONDS:g} s")
            if r["peak"] >= LIMIT_MB:
                r["problems"].insert(0, f"over {LIMIT_MB:g} MB")
            within = not r["problems"]
            ok += within
            print(f"{name:32s} {r['seconds']:6.2f} s {r['cpu']:6.2f} CPU-s {r['peak']:7.1f} MB  exit {r['code']}  "
                  f"{'ok ' if within else 'BAD'}  {r['first']}", flush=True)
            for p in r["problems"]:
                print(f"{'':34s}- {p}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"{ok}/{len(names)} {label} cases within {LIMIT_SECONDS:g} s ({'CPU' if args.cpu_time else 'wall'} time) "
          f"and {LIMIT_MB:g} MB with exit 0 or 1, no leak, nothing read outside the tree, the expected finding's line")
    return 0 if ok == len(names) else 1


def _isolated(child: str, name: str, base: str, timeout: float) -> dict[str, Any]:
    res = subprocess.run([sys.executable, "-c", child, HERE, name, base, str(timeout)], capture_output=True,
                         text=True, timeout=timeout + 120)
    if res.returncode != 0:
        return {"seconds": 0.0, "cpu": 0.0, "peak": 0.0, "code": None, "first": "-",
                "problems": [f"benchmark harness failed: {res.stderr.strip().splitlines()[-1:]}"]}
    return json.loads(res.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.exit(main())
