"""A seventeenth round of hostile inputs, in forms the earlier rounds (`hostile_*.py`) did not try.

    python3 benchmarks/hostile_seventeenth.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Out-of-tree reads in new forms: a `--config` reached through a bind mount whose source is a link to a folder out of
the tree, compose `configs:` files under a linked folder, `..` inside `${VAR:-default}` paths, Windows-style,
`file://` and `~/` paths, a Kubernetes `subPath` with `..`, and hard links (a hard link is a file of the tree as
far as any reader can tell, so what it holds is read like any file: the case hard-links a FIFO, which must still be
refused as a FIFO). Expansion bombs: Helm `tpl` that renders itself, `include` recursion that doubles, `toYaml` of a
dict that holds itself, `b64enc` growth, `untilStep`/`seq` over 2**63, YAML merge-key chains of 3,000 anchors,
compose `extends` chains of 3,000 services and cycles (in a file and across files), shell brace expansion of 2**30
words, `printf '%*s'` widths of 10**9, `$(( ))` with 10**100000 and 2**64, `eval` that re-evaluates itself and a
function that calls itself twice. A hostile Hub on 127.0.0.1 (HF_ENDPOINT): `config.json` fields negative, float,
boolean, strings and 1e300; `config.json` nested 100,000 deep (Python's JSON reader recurses); a million
architectures; safetensors answers that lie (shorter than the 8-byte length, a length of 2**63, a Range ignored
with a 200 of 40 MB); redirects to another host (which must not get the token), to `file://`, in a loop, and with
the token in the Location; gzip and deflate bombs. Terminal and CI-log escapes in model names (OSC 8 hyperlinks),
ConfigMap keys, flag values, JUnit (characters XML 1.0 cannot hold) and U+2028/U+2029/U+0085 line breaks. Tokens
written in the scanned files that must never be echoed: compose `environment` in list form, in `${HF_TOKEN:-...}`
defaults and in an anchor; a Secret's `stringData` and `data` (its base64 too); `--hf-token` in every form,
misspelt (an unknown flag's finding must not quote its value); `https://user:token@` in `--model`, `HF_ENDPOINT`
and `--hf-overrides`; a `--config` from a ConfigMap holding `hf-token`.

Each case runs `vramlint check . --offline` (a Hub case: not offline, HF_ENDPOINT on the case's server) through
`hostile_sixteenth`'s harness (RLIMIT_CPU, a 4 GiB address-space guard; the 300 MB limit judged on the peak
resident size; every check of `hostile_fifteenth.run_check_case`), with these added: `__literal__` (secrets written
in the scanned files appear in no output), `__no_chars__` (U+2028/U+2029 too), `__other_host__` (a redirect target
on another host name got no request carrying the token), and `__hardlinks__` (hard links made after the files).
The cases and their expectations were written and committed before their first run.

First run (`python3 benchmarks/hostile_seventeenth.py --cpu-time --timeout 30`, on main a0bd245): 17/31. Failed:
four token cases (a token written in the files quoted by finding messages into every format: a compose
`${NOPE:?token}`, a Secret's undecodable `data`, `--hf-tokn=token` and `'--hf-token token'` as one word, a
`--model https://user:token@...`, a password in a `--hf-overrides` URL in the JSON report's args),
escapes-unicode-line-separators (U+2028 raw in text and markdown, and a text line starting `::error::` after it),
hub-redirects-other-host-loop-token (a Location of `http://[::1:::...` made urljoin raise: exit 2, the run lost),
script-arithmetic-huge (a second `vllm serve` in the script dropped without a word). Seven were expectations of
mine, corrected with the reason in the case (not counted as fixes): an unread `--config` is VRL103 on its line
(bind-source-linked-dir-config, compose-configs-under-linked-dir); an unresolved Hub model is said once for all in
the text report, not in each file (the four hub-config cases); vLLM's parser stops at an invalid `--max-num-seqs`
before it checks max_model_len (escapes-osc8-model-and-values). token-hf-token-flag-forms also failed on the
dropped second server.

After the fixes (the same command, on branch hostile17; in-sample: the cases are mine and the fixes were made on
them): 31/31. The closest to the limits: yaml-merge-chain-3000-anchors 4.3 CPU-s and 269 MB (3,000 merge keys
each copying the chain before it, 4.5 million keys; below vramlint's node bound), every other case under 1.5 CPU-s.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import zlib
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fifteenth as e  # noqa: E402
import hostile_fresh as f  # noqa: E402
import hostile_inputs as h  # noqa: E402
import hostile_sixteenth as s  # noqa: E402
import hostile_twelfth as t  # noqa: E402

QWEN = f.QWEN
MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
deployment = h.deployment
expect = f.expect
line_of = f.line_of
SERVER = f.SERVER
GPU_RESERVATION = t.GPU_RESERVATION
LIT = "hf_SeventeenthLiteralToken0123456789abcd"  # a token a careless repository holds in its own files
LIT_B64 = base64.b64encode(LIT.encode()).decode()
PASSWORD = "Pa55-seventeenth-userinfo-9d1e"
_bad = s._bad
_bad_lines = s._bad_lines
COMPOSE_BAD_SVC = (f"  bad:\n    image: vllm/vllm-openai:v0.8.5\n    command: [--model, {MODEL}, --max-model-len, '999999']\n"
                   + GPU_RESERVATION)


def _compose(services: str, tail: str = "") -> str:
    return "services:\n" + services + COMPOSE_BAD_SVC + tail


def _bad_compose_line(text: str) -> int:
    return line_of(text, "'999999'")


def _script(body: str) -> str:
    return "#!/bin/bash\n" + body + f"exec vllm serve {MODEL} --max-model-len 999999\n"


def _script_case(body: str, **extra: Any) -> dict[str, Any]:
    text = _script(body)
    # a script with a second vLLM server before the last line: vramlint reads the first and says the others once
    # (on the first's line, VRL103; added after the first run, which found them dropped without a word)
    first = text.find("\nvllm serve ")
    where = ("run.sh", line_of(text, "\nvllm serve ") + 1, "VRL103") if first >= 0 else \
        ("run.sh", line_of(text, "--max-model-len 999999"))
    return {"run.sh": text, "__paths__": ("paths", ["run.sh"]), "__no_internal__": True,
            "__expect__": expect(where), **extra}


def _tpl_case(tpl: str, values: str = f.VALUES) -> dict[str, Any]:
    # the hostile template may be left unknown (its functions bounded) or said on a line: the good template's server
    # must still be read and checked
    return f.chart({"deploy.yaml": h.CHART_TEMPLATE, "x.yaml": tpl}, values=values, __no_internal__=True,
                   __max_report_mb__=16, __expect__=expect(SERVER))


def seventeenth_cases() -> dict[str, dict[str, Any]]:  # noqa: C901  (one block per case)
    out: dict[str, dict[str, Any]] = {}
    bad = _bad()
    bad_at = ("deploy.yaml", _bad_lines(bad))

    # ------------------------------------------------------------------ out-of-tree reads, new forms
    comp = _compose("  vllm:\n    image: vllm/vllm-openai:v0.8.5\n    volumes: ['./cfglink:/etc/vllm', "
                    "{type: bind, source: ./cfglink/.., target: /up}]\n"
                    "    command: [--config, /etc/vllm/secret.yaml]\n" + GPU_RESERVATION
                    + "  vllm2:\n    image: vllm/vllm-openai:v0.8.5\n    volumes: ['./inner:/cfg']\n"
                      "    command: [--config, /cfg/../up/_outside/secret.yaml]\n" + GPU_RESERVATION)
    out["bind-source-linked-dir-config"] = {
        "compose.yaml": comp, "cfglink": ("symlink", "../_outside"), "inner/keep.yaml": "a: 1\n",
        "__no_internal__": True,
        # the --config line of the first service: its bind source is a link out of the tree (not read, said there)
        # (corrected after the first run: an unread --config is vramlint's VRL103 on its line, not VRL102)
        "__expect__": expect(("compose.yaml", _bad_compose_line(comp)),
                             ("compose.yaml", (line_of(comp, "./cfglink:/etc/vllm"),
                                               line_of(comp, "[--config, /etc/vllm")), "VRL103"))}

    comp = _compose("  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
                    "    env_file: ['${ENV_DIR:-..}/_outside/secret.env', '${NOPE-.}/../_outside/secret.env']\n"
                    "    extends: {file: '${X:-./sub/../..}/_outside/compose.yaml', service: s}\n"
                    "    volumes: ['${CFG:-./cfg/../../_outside}:/cfg']\n    command: [--config, /cfg/secret.yaml]\n"
                    + GPU_RESERVATION)
    out["compose-dotdot-inside-templated-paths"] = {
        "compose.yaml": comp, "cfg/c.yaml": "max-num-seqs: 8\n", "sub/x": "", "__no_internal__": True,
        "__expect__": expect(("compose.yaml", _bad_compose_line(comp)),
                             ("compose.yaml", line_of(comp, "env_file"), "VRL102"),
                             ("compose.yaml", line_of(comp, "extends"), "VRL102"))}

    comp = _compose("  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
                    "    env_file: ['..\\_outside\\secret.env', 'C:\\Users\\x\\secret.env', '\\\\srv\\share\\x.env', "
                    "'file:///proc/self/environ', 'file://../_outside/secret.env', '~/../../_outside/secret.env', "
                    "'~root/.bashrc']\n"
                    "    command: [--config, 'file:///proc/self/environ', --chat-template, '..\\..\\_outside\\secret.txt']\n"
                    + GPU_RESERVATION)
    out["windows-fileurl-tilde-paths"] = {
        "compose.yaml": comp, "__no_internal__": True,
        "__expect__": expect(("compose.yaml", _bad_compose_line(comp)),
                             ("compose.yaml", line_of(comp, "env_file"), "VRL102"))}

    sub = deployment(QWEN + ["--config", "/cfg/secret.yaml"], name="subpath").replace(
        "          resources:", "          volumeMounts:\n            - {name: c, mountPath: /cfg, subPath: ../../_outside}\n"
        "            - {name: d, mountPath: /d, subPathExpr: '$(POD)/../../..'}\n          resources:") + (
        "      volumes:\n        - {name: c, configMap: {name: cm}}\n        - {name: d, hostPath: {path: /proc/self}}\n")
    cm = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata:\n  secret.yaml: 'max-num-seqs: 8'\n"
    k8s_url = deployment(QWEN + ["--config", "file:///proc/self/environ", "--max-model-len", "999999"], name="url")
    out["k8s-subpath-dotdot-hostpath-fileurl"] = {
        "sub.yaml": sub + cm, "deploy.yaml": k8s_url, "__no_internal__": True,
        "__expect__": expect(("deploy.yaml", _bad_lines(k8s_url)))}

    comp = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n    configs: [{source: c, target: /c.yaml}]\n"
            "    secrets: [s]\n    command: [--config, /c.yaml, --hf-config-path, /run/secrets/s]\n" + GPU_RESERVATION
            + COMPOSE_BAD_SVC + "configs:\n  c: {file: ./linked/secret.yaml}\nsecrets:\n  s: {file: ./linked/../linked/secret.txt}\n")
    out["compose-configs-under-linked-dir"] = {
        "compose.yaml": comp, "linked": ("symlink", "../_outside"), "__no_internal__": True,
        # (corrected after the first run: VRL103, as above)
        "__expect__": expect(("compose.yaml", _bad_compose_line(comp)),
                             ("compose.yaml", (line_of(comp, "configs: [{"), line_of(comp, "[--config, /c.yaml"),
                                               line_of(comp, "c: {file")), "VRL103"))}

    comp = _compose("  vllm:\n    image: vllm/vllm-openai:v0.8.5\n    env_file: [hard.env]\n"
                    "    volumes: ['./cfg:/cfg']\n    command: [--config, /cfg/hard.yaml]\n" + GPU_RESERVATION)
    out["hardlinks-to-fifo"] = {
        "compose.yaml": comp, "fifo.env": ("fifo",), "cfg/fifo.yaml": ("fifo",), "__no_internal__": True,
        "__hardlinks__": [("fifo.env", "hard.env"), ("cfg/fifo.yaml", "cfg/hard.yaml")],
        # a hard link to a FIFO is a FIFO: refused unread (a warning on the line naming it)
        "__expect__": expect(("compose.yaml", _bad_compose_line(comp)),
                             ("compose.yaml", line_of(comp, "env_file"), "VRL102"))}

    # ------------------------------------------------------------------ expansion bombs: Helm
    out["helm-tpl-renders-itself"] = _tpl_case(
        "a: {{ tpl .Values.t . }}\nb: {{ tpl (printf \"%s%s\" .Values.t .Values.t) . }}\n",
        values=f.VALUES + "t: '{{ tpl .Values.t . }}{{ tpl .Values.t . }}'\n")
    out["helm-include-mutual-doubling"] = _tpl_case(
        '{{- define "a" }}{{ include "b" . }}{{ include "b" . }}{{ end }}'
        '{{- define "b" }}{{ include "a" . }}{{ printf "%s" (include "a" .) }}{{ end }}'
        'x: {{ include "a" . | quote }}\n')
    out["helm-toyaml-self-holding-dict"] = _tpl_case(
        "{{- $d := dict }}{{- $l := list $d }}{{- $_ := set $d \"self\" $d }}{{- $_ := set $d \"l\" $l }}"
        "{{- range until 30 }}{{ $_ := set $d (toString .) (list $d $d) }}{{ end }}"
        "x: {{ toYaml $d | indent 2 }}\ny: {{ toJson $d }}\nz: {{ toPrettyJson (list $d) }}\n")
    out["helm-b64enc-growth"] = _tpl_case(
        "{{- $s := .Values.big }}{{- range until 60 }}{{ $s = b64enc (print $s $s) }}{{ end }}x: {{ $s | b64dec | len }}\n"
        "y: {{ .Values.big | b64dec | b64dec | b64dec }}\n",
        values=f.VALUES + "big: " + json.dumps(base64.b64encode(b"A" * 3_000_000).decode()) + "\n")
    out["helm-untilstep-seq-huge"] = _tpl_case(
        "{{- range untilStep 0 9223372036854775807 1 }}a{{ end }}\n{{- range seq 1 2 1000000000000 }}b{{ end }}\n"
        "{{- range seq -9223372036854775808 }}c{{ end }}\n{{- range until (int \"9e18\") }}d{{ end }}\n"
        "{{- range untilStep 9223372036854775807 0 -1 }}e{{ end }}\n{{- range seq \"1\" \"1e18\" }}f{{ end }}\n")

    # ------------------------------------------------------------------ expansion bombs: YAML merge chains, extends
    chain = "x-a0: &a0 {k0: 0}\n" + "".join(f"x-a{i}: &a{i}\n  <<: *a{i - 1}\n  k{i}: {i}\n" for i in range(1, 3000))
    comp = chain + _compose("  vllm:\n    <<: *a2999\n    image: vllm/vllm-openai:v0.8.5\n"
                            f"    command: [--model, {MODEL}]\n" + GPU_RESERVATION)
    out["yaml-merge-chain-3000-anchors"] = {
        "compose.yaml": comp, "k8s.yaml": chain.replace("x-a", "a") + "---\n" + bad, "deploy.yaml": bad,
        "__no_internal__": True, "__expect__": expect(("compose.yaml", _bad_compose_line(comp)), bad_at)}

    ext = ("services:\n  s0:\n    image: vllm/vllm-openai:v0.8.5\n"
           f"    command: [--model, {MODEL}, --max-model-len, '999999']\n" + GPU_RESERVATION
           + "".join(f"  s{i}:\n    extends: s{i - 1}\n" if i % 2 else f"  s{i}:\n    extends: {{service: s{i - 1}}}\n"
                     for i in range(1, 3000))
           + "  c1:\n    extends: c2\n  c2:\n    extends: {service: c1}\n  me:\n    extends: me\n"
             "  x1:\n    extends: {file: other.yaml, service: y1}\n")
    other = "services:\n  y1:\n    extends: {file: compose.yaml, service: x1}\n  y2:\n    extends: {file: other.yaml, service: y2}\n"
    out["compose-extends-chain-3000-and-cycles"] = {
        "compose.yaml": ext, "other.yaml": other, "__no_internal__": True, "__max_report_mb__": 40,
        "__expect__": expect(("compose.yaml", line_of(ext, "'999999'")),
                             ("compose.yaml", line_of(ext, "  c1:\n") + 1))}

    # ------------------------------------------------------------------ expansion bombs: shell
    out["script-brace-and-printf-width"] = _script_case(
        "W=$(echo " + "{a,b}" * 30 + ")\nfor i in {1..1000000000}; do :; done\nX=$(printf '%*s' 1000000000 x)\n"
        "printf -v Y '%0*d' 999999999 0\nZ=$(printf '%.1000000000f' 1)\nV=$(printf \"%${W}s\" y)\n"
        "echo {1..9223372036854775807..1} {z..a..-1}\n")
    out["script-arithmetic-huge"] = _script_case(
        "A=$(( 10**100000 ))\nB=$(( 2**64 + 999999 ))\nC=$(( 1 << 4096 ))\nD=$(( 9" + "9" * 5000 + " ))\n"
        "E=$(( (1<<62) * (1<<62) ))\nlet 'F = 7 ** 7 ** 7'\nG=$(( A / 0 ))\nH=$(( --1 ))\n"
        # (corrected after the first run: in the foreground this server kept the script from reaching the next;
        # started in the background, both are servers)
        "vllm serve " + MODEL + " --max-num-seqs $(( 2**63 )) --max-model-len $((D)) &\n")
    out["script-eval-self-and-recursive-function"] = _script_case(
        "a='eval \"$a\"'\neval \"$a\"\nb='b=$b$b$b$b'\nfor i in $(seq 1 40); do eval \"$b\"; done\n"
        "f() { f; f; }\nf\ng() { eval \"g; g\"; }\ng\nalias x='x x'\nx\nc='$(eval \"$c\")'\nd=$(eval \"$c\")\n")

    # ------------------------------------------------------------------ a hostile Hub
    out["hub-config-wrong-number-types"] = _hub_case("cfgtypes", [f"evil-org/num{i}" for i in range(12)])
    out["hub-config-nested-100k"] = _hub_case("deep", [f"evil-org/deep{i}" for i in range(3)])
    out["hub-config-million-architectures"] = _hub_case("wide", [f"evil-org/wide{i}" for i in range(3)])
    out["hub-st-answers-that-lie"] = _hub_case("stlies", [f"evil-org/lie{i}" for i in range(5)], config_ok=True)
    out["hub-redirects-other-host-loop-token"] = {**_hub_case("redirect", [f"evil-org/redir{i}" for i in range(5)]),
                                                  "__other_host__": True}
    out["hub-gzip-deflate-bombs"] = _hub_case("bomb", [f"evil-org/bomb{i}" for i in range(3)])

    # ------------------------------------------------------------------ terminal and CI-log escapes
    osc = deployment(["--model", "\x1b]8;;https://evil.example/\x07Qwen/Qwen2.5-1.5B-Instruct\x1b]8;;\x07",
                      "--served-model-name", "\x1b]0;title\x07\x1b[2J\x1bc", "--max-model-len", "999999",
                      "--max-num-seqs", "8\x1b[1A\x1b[2K::error::forged"], name="osc")
    # (corrected after the first run: vLLM's argument parser stops at the invalid --max-num-seqs before it checks
    # max_model_len, so that is the one error, on its line)
    out["escapes-osc8-model-and-values"] = {
        "deploy.yaml": osc, "__no_internal__": True,
        "__expect__": expect(("deploy.yaml", (line_of(osc, '"--max-num-seqs"'), line_of(osc, '"--max-num-seqs"') + 1)))}

    keys = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"cm\\e[31m\"}\ndata:\n"
            "  \"c\\e[2J::error file=x::forged.yaml\": \"max-model-len: 999999\"\n"
            "  \"d\\r::warning::x\\u2028::notice::y\": 'x'\n")
    kdep = deployment(QWEN + ["--config", "/cfg/c\x1b[2J::error file=x::forged.yaml"], name="keys").replace(
        "          resources:", "          volumeMounts: [{name: c, mountPath: /cfg}]\n          resources:") + (
        "      volumes: [{name: c, configMap: {name: \"cm\\e[31m\"}}]\n")
    out["escapes-configmap-keys-and-names"] = {
        "cm.yaml": keys, "deploy.yaml": kdep, "plain.yaml": bad, "__no_internal__": True,
        "__no_chars__": "\u2028\u2029",
        "__expect__": expect(("plain.yaml", _bad_lines(bad)))}

    junit = deployment(QWEN + ["--max-model-len", "999999", "--served-model-name", "a\x01b\x0bc]]>&<d\ufffe\uffff",
                               "--bogus-\x02flag", "]]><x/>"], name="junit")
    out["junit-xml-invalid-characters"] = {
        "deploy.yaml": junit, "a\x01]]>&.yaml": bad, "__no_internal__": True,
        "__expect__": expect(("deploy.yaml", _bad_lines(junit)), ("a\x01]]>&.yaml", _bad_lines(bad)))}

    seps = deployment(QWEN + ["--max-model-len", "999999", "--served-model-name",
                              "a\u2028::error::x\u2029::warning::y\u0085::notice::z\x0c::error::w"], name="seps")
    out["escapes-unicode-line-separators"] = {
        "deploy.yaml": seps, "b\u2028::error::x.yaml": bad, "__no_internal__": True, "__no_chars__": "\u2028\u2029",
        "__expect__": expect(("deploy.yaml", _bad_lines(seps)))}

    # ------------------------------------------------------------------ tokens written in the scanned files
    comp = ("x-env: &env {HF_TOKEN: " + LIT + "}\nservices:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
            "    environment:\n      - HF_TOKEN=" + LIT + "\n      - HUGGING_FACE_HUB_TOKEN=${HF_TOKEN:-" + LIT + "}\n"
            "      - \"VLLM_API_KEY=${NOPE:?" + LIT + "}\"\n"
            f"    command: [--model, {MODEL}, --max-model-len, '999999', --api-key, '${{HF_TOKEN:-{LIT}}}']\n"
            + GPU_RESERVATION + "  other:\n    image: vllm/vllm-openai:v0.8.5\n    environment:\n      <<: *env\n"
            "      HF_TOKEN2: ${UNSET-" + LIT + "}\n    command: --model " + MODEL + " --hf-token $HF_TOKEN --bogus=$HF_TOKEN\n"
            + GPU_RESERVATION)
    out["token-compose-env-list-defaults-anchor"] = {
        "compose.yaml": comp, "__no_internal__": True, "__literal__": [LIT],
        "__expect__": expect(("compose.yaml", line_of(comp, "'999999'")))}

    secret = ("apiVersion: v1\nkind: Secret\nmetadata: {name: hf}\nstringData:\n  token: " + LIT + "\n"
              "  config.yaml: |\n    hf-token: " + LIT + "\n    max-model-len: 999999\n    bogus-key: " + LIT + "\n"
              "data:\n  b64: " + LIT_B64 + "\n  broken: '" + LIT + "!!'\n")
    sdep = deployment(QWEN + ["--config", "/s/config.yaml", "--hf-token", "$(TOK)"], name="sdep").replace(
        "          resources:", "          env:\n            - name: TOK\n              valueFrom: {secretKeyRef: {name: hf, key: token}}\n"
        "          envFrom: [{secretRef: {name: hf}}]\n          volumeMounts: [{name: s, mountPath: /s}]\n"
        "          resources:") + "      volumes: [{name: s, secret: {secretName: hf}}]\n"
    out["token-secret-stringdata-and-data"] = {
        "secret.yaml": secret, "deploy.yaml": sdep, "plain.yaml": bad, "__no_internal__": True,
        "__literal__": [LIT, LIT_B64],
        "__expect__": expect(("plain.yaml", _bad_lines(bad)))}

    flags = deployment(QWEN + ["--hf-token", LIT, "--hf-token=" + LIT, "--hf_token=" + LIT, "--hf-tokn=" + LIT,
                               "--hf-token", "--max-model-len", "999999", "--hf-token " + LIT, "--HF-TOKEN=" + LIT],
                       name="flags")
    # (corrected after the first run: in the background, as in script-arithmetic-huge)
    script = _script(f"TOK={LIT}\nvllm serve {MODEL} --hf-token \"$TOK\" --hf-tokenn $TOK --max-num-seqs $TOK &\n")
    out["token-hf-token-flag-forms"] = {
        "deploy.yaml": flags, "run.sh": script, "__paths__": ("paths", ["run.sh"]), "__no_internal__": True,
        "__literal__": [LIT],
        "__expect__": expect(("deploy.yaml", (line_of(flags, '"999999"') - 1, line_of(flags, '"999999"'))),
                             ("run.sh", line_of(script, "\nvllm serve ") + 1, "VRL103"))}

    url = deployment(["--model", f"https://user:{LIT}@huggingface.co/Qwen/Qwen2.5-1.5B-Instruct",
                      "--hf-overrides", json.dumps({"x": f"https://a:{PASSWORD}@b.example/"}),
                      "--max-model-len", "999999", "--download-dir", f"s3://key:{PASSWORD}@bucket/p"],
                     name="url").replace("          resources:",
                                         f"          env:\n            - {{name: HF_ENDPOINT, value: 'https://u:{LIT}@mirror.example'}}\n"
                                         "          resources:")
    out["token-url-userinfo-model-endpoint"] = {
        "deploy.yaml": url, "plain.yaml": bad, "__no_internal__": True, "__literal__": [LIT, PASSWORD],
        "__expect__": expect(("plain.yaml", _bad_lines(bad)))}

    cmcfg = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vcfg}\ndata:\n  cfg.yaml: |\n    hf-token: " + LIT + "\n"
             "    max-model-len: 999999\n    hf_token: " + LIT + "\n    hf-tokenx: " + LIT + "\n")
    cdep = deployment(QWEN + ["--config", "/c/cfg.yaml"], name="cdep").replace(
        "          resources:", "          volumeMounts: [{name: c, mountPath: /c}]\n          resources:") + (
        "      volumes: [{name: c, configMap: {name: vcfg}}]\n")
    out["token-configmap-config-file"] = {
        "cm.yaml": cmcfg, "deploy.yaml": cdep, "plain.yaml": bad, "__no_internal__": True, "__literal__": [LIT],
        "__expect__": expect(("plain.yaml", _bad_lines(bad)))}
    return out


# ---------------------------------------------------------------------- the hostile Hub

_CONFIG = t._CONFIG  # a Llama of 2,048 hidden, 16 layers, 8,192 positions


def _hub_dep(model: str, name: str) -> str:
    return deployment(["--model", model, "--max-model-len", "999999"], name=name)


def _hub_case(kind: str, models: list[str], config_ok: bool = False) -> dict[str, Any]:
    files: dict[str, Any] = {}
    where = []
    for i, m in enumerate(models):
        text = _hub_dep(m, name=f"hub{i}")
        files[f"hub{i}.yaml"] = text
        # a good config.json: 999999 is over its 8,192 positions whatever the weights; a hostile one: the model is
        # unresolved (corrected after the first run: said once for all such servers, in the text report's
        # "Servers without a memory budget", not as a finding in each file)
        if config_ok:
            where.append((f"hub{i}.yaml", _bad_lines(text)))
    bad = _bad()
    files["deploy.yaml"] = bad
    where.append(("deploy.yaml", _bad_lines(bad)))
    return {**files, "__hub__": kind, "__hub_models__": models, "__no_internal__": True, "__expect__": expect(*where),
            **({} if config_ok else {"__says__": "Hugging Face Hub did not give"})}


def _config_answer(kind: str, n: int, state: dict[str, Any]) -> tuple[int, bytes, dict[str, str]]:  # noqa: C901
    cfg = dict(_CONFIG)
    if kind == "cfgtypes":
        field, value = [("num_hidden_layers", -16), ("hidden_size", 2048.5), ("num_attention_heads", True),
                        ("max_position_embeddings", 1e300), ("num_key_value_heads", 0), ("vocab_size", "128256"),
                        ("torch_dtype", {"a": 1}), ("hidden_size", -0.0), ("intermediate_size", [8192]),
                        ("rope_scaling", {"factor": -4.0, "rope_type": "linear"}), ("num_hidden_layers", 2**70),
                        ("architectures", [None, 3])][n]
        cfg[field] = value
        return 200, json.dumps(cfg).encode(), {"Content-Type": "application/json"}
    if kind == "deep":
        nest = [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
                b'{"text_config": ' * 50_000 + b"{}" + b"}" * 50_000][n]
        body = json.dumps(cfg)[:-1].encode() + b', "x": ' + nest + b"}"
        return 200, body, {"Content-Type": "application/json"}
    if kind == "wide":
        if n == 0:
            cfg["architectures"] = ["LlamaForCausalLM"] * 1_000_000
        elif n == 1:
            cfg.update({f"k{i}": i for i in range(300_000)})
        else:
            cfg["layer_types"] = ["full_attention"] * 1_000_000
        return 200, json.dumps(cfg).encode(), {"Content-Type": "application/json"}
    if kind == "redirect":
        port = state["port"]
        where = [f"http://localhost:{state['other_port']}/x/config.json", "file:///etc/passwd",
                 f"http://127.0.0.1:{port}/evil-org/redir2/resolve/main/config.json",
                 f"http://user:{h.SECRET}@127.0.0.1:{state['other_port']}/t?token={h.SECRET}",
                 "http://[::1" + ":" * 5000 + "/x"][n]
        return 302, b"", {"Location": where}
    if kind == "bomb":
        raw = json.dumps(cfg).encode() + b" " * (100 * 2**20)
        if n == 0:
            return 200, gzip.compress(raw, 9), {"Content-Encoding": "gzip", "Content-Type": "application/json"}
        if n == 1:
            return 200, zlib.compress(raw, 9), {"Content-Encoding": "deflate"}
        return 200, gzip.compress(gzip.compress(raw, 9), 9), {"Content-Encoding": "gzip, gzip"}
    return 200, json.dumps(cfg).encode(), {"Content-Type": "application/json"}


def _weights_answer(kind: str, n: int, rng: str) -> tuple[int, bytes, dict[str, str]] | None:
    if kind != "stlies":
        return None
    head = json.dumps({"w": {"dtype": "BF16", "shape": [2048, 2048], "data_offsets": [0, 8 * 2**20]}}).encode()
    if n == 0:
        return 206, b"\x10\x00\x00\x00", {"Content-Range": "bytes 0-3/4"}
    if n == 1:
        body = (2**63).to_bytes(8, "little") + head
        return 206, body[:8], {"Content-Range": f"bytes 0-7/{len(body)}"}
    if n == 2:
        body = len(head).to_bytes(8, "little") + head
        return 206, body, {"Content-Range": "bytes 0-9/10"}
    if n == 3:
        return 200, len(head).to_bytes(8, "little") + head + b"\0" * (40 * 2**20), {}
    body = len(head).to_bytes(8, "little") + head
    return 206, body, {"Content-Range": f"bytes 0-{len(body) - 1}/-5"}


class _Hub:
    def __init__(self, kind: str, models: list[str]) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        state: dict[str, Any] = {"paths": [], "other": []}
        self.state = state
        answers: dict[str, tuple[int, bytes, dict[str, str]]] = {}

        class Other(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:
                state["other"].append((self.path, dict(self.headers)))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self.do_GET()

            def do_GET(self) -> None:
                state["paths"].append(self.path)
                path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
                parts = path.lstrip("/").split("/", 4)
                status, body, headers = 404, b"{}", {"X-Error-Code": "EntryNotFound"}
                if len(parts) == 5 and parts[2] == "resolve":
                    n = int("".join(c for c in parts[1] if c.isdigit()) or 0)
                    if parts[4] == "config.json":
                        key = parts[1]
                        if key not in answers:
                            answers[key] = _config_answer(kind, n, state)
                        status, body, headers = answers[key]
                    else:
                        got = _weights_answer(kind, n, self.headers.get("Range", "")) if parts[4] == "model.safetensors" \
                            else None
                        if got:
                            status, body, headers = got
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

        self.other = Server(("127.0.0.1", 0), Other)
        state["other_port"] = self.other.server_address[1]
        self.server = Server(("127.0.0.1", 0), Handler)
        state["port"] = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{state['port']}"
        # the answers are made before vramlint asks (a bomb takes seconds to compress, past its 4 s for an answer)
        for m in models:
            n = int("".join(c for c in m.split("/")[1] if c.isdigit()) or 0)
            answers[m.split("/")[1]] = _config_answer(kind, n, state)
        for srv in (self.server, self.other):
            threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        for srv in (self.server, self.other):
            srv.shutdown()
            srv.server_close()


# ---------------------------------------------------------------------- the run and the checks added here

OWN = ("__literal__", "__other_host__", "__hardlinks__", "__hub_models__")


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = seventeenth_cases()[name]
    h.run_timed = s._limited_run_timed
    kind = files.get("__hub__")
    hub = _Hub(kind, files.get("__hub_models__") or []) if kind else None
    e._Hub = lambda _kind: hub
    links = files.get("__hardlinks__") or []
    if links:
        write = h.write_case

        def write_then_link(folder: str, case_files: dict[str, Any]) -> list[str]:
            extra = write(folder, case_files)
            for src, dst in links:
                os.link(os.path.join(folder, src), os.path.join(folder, dst))
            return extra

        h.write_case = write_then_link
    inner = {k: v for k, v in files.items() if k not in OWN}
    result = e.run_check_case(name, inner, base, timeout)
    problems = result["problems"]
    scratch = os.path.join(base, f"_scratch-{name}")
    reports = {k: e._read(os.path.join(scratch, f"report.{k}")) for k in ("text", "stderr", *f.FORMATS)}
    for secret in files.get("__literal__", ()):
        leaks = [k for k, v in reports.items() if secret in v]
        if leaks:
            problems.append(f"LEAK: the secret {secret[:8]}... written in the scanned files is in {', '.join(leaks)}")
    if hub is not None and files.get("__other_host__"):
        for path, headers in hub.state["other"]:
            if any(h.SECRET in str(v) for v in headers.values()):
                problems.append(f"the token was sent to another host on a redirect: {path[:60]!r}")
                break
    if hub is not None:
        for dirpath, _, names in os.walk(os.path.join(scratch, "cache")):
            for n in names:
                try:
                    with open(os.path.join(dirpath, n), "rb") as fh:
                        if h.SECRET.encode() in fh.read():
                            problems.append(f"the token is in the cache: {n}")
                except OSError:
                    pass
    return result


CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_seventeenth as e; "
         "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="run only these cases")
    parser.add_argument("--keep", metavar="DIR", help="write the cases into DIR and keep them")
    parser.add_argument("--timeout", type=float, default=60.0, help="kill a case after this many seconds")
    parser.add_argument("--cpu-time", action="store_true",
                        help="judge the 5 s limit on the case's CPU time, not wall time (on a loaded machine)")
    args = parser.parse_args()
    names = args.case or list(seventeenth_cases())
    base = os.path.abspath(args.keep or tempfile.mkdtemp(prefix="vramlint-seventeenth-"))
    os.makedirs(base, exist_ok=True)
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
            judged = r["cpu"] if args.cpu_time else r["seconds"]
            if judged >= f.LIMIT_SECONDS:
                r["problems"].insert(0, f"over {f.LIMIT_SECONDS:g} s")
            if r["peak"] >= f.LIMIT_MB:
                r["problems"].insert(0, f"over {f.LIMIT_MB:g} MB")
            passed = not r["problems"]
            ok += passed
            print(f"{'PASS' if passed else 'FAIL'} {name:42s} {r['seconds']:6.2f} s {r['cpu']:6.2f} CPU-s "
                  f"{r['peak']:7.1f} MB  exit {r['code']}  {r['first']}", flush=True)
            for p in r["problems"]:
                print(f"{'':6s}- {p}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"{ok}/{len(names)} seventeenth cases PASS: under {f.LIMIT_SECONDS:g} s "
          f"({'CPU' if args.cpu_time else 'wall'} time) and {f.LIMIT_MB:g} MB, exit 0 or 1, no leak (the planted "
          "HF_TOKEN, the outside secret, the tokens written in the files), nothing read outside the tree or written "
          "outside the cache, the expected finding")
    return 0 if ok == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
