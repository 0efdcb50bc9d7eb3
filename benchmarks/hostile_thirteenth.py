"""A tenth round of hostile inputs (the thirteenth file of them), of kinds the earlier rounds do not try, judged as
`hostile_fresh.py` judges.

    python3 benchmarks/hostile_thirteenth.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Kinds the earlier rounds (`hostile_*.py`) do not have: the newer extractors under load or abuse (a Flux HelmRelease
of vllm-stack whose 2,000 model entries each meet 20,000 `valuesFrom` entries; bjw-s app-template releases of 3,000
controllers named with escape sequences, and of numbers past Python's int-string limit; OpenShift Templates whose
`${PARAMETERS}` `oc process` fills in, one with a generated value of 99,999,999 characters; a KServe
LLMInferenceService whose VLLM_ADDITIONAL_ARGS is 1 MB of words with an unclosed quote and whose parallelism is a
5,000-digit number); streams of 1 MB or more read in pieces by forked workers (a `---` at the start of a line in
a block scalar, one 3 MB document after 2,000 small ones, a flow collection left open across a cut, an alias to an
anchor of an earlier document, duplicate `args` keys in the last piece, a BOM with CR LF line ends and `---<TAB>`);
a Dockerfile whose `COPY <<EOF` heredoc writes the entrypoint script and whose `RUN <<EOF` holds 100,000 lines;
50,000 here-documents opened on one shell line; compose `include:`/`extends:`/`env_file:`/`build:` naming URLs of
a local HTTP server that must get no request, `build.args` passed from the environment holding HF_TOKEN, a `.env`
whose values hold U+2028, NEL and form feeds (compose splits lines at LF only); a 1 MB model name reached through
one anchor by 500 servers (every report repeats it); a suppression comment that Python's `str.splitlines` moves
down by a form feed; a repository `.vramlint.yaml` naming a Hub endpoint, a cache folder and a rules folder; model
names and suppression reasons that are markdown links and images; file names that forge GitHub annotation
properties (`,line=`, a pre-encoded `%2C`); lone UTF-16 surrogates written as escapes in YAML, JSON arguments and a
local config.json; Go templates printing a surrogate rune and invalid UTF-8; FIFOs as `.git/HEAD`, `.gitignore`,
`.git/info/exclude`, a Dockerfile and a `.env`; kustomize `helmCharts` with values outside the tree; and a hostile
Hub on 127.0.0.1 (the token echoed back as JSON `\\u` escapes, a redirect to another port of the same host, a
gzip body sent to a client that asked for identity with 429 Retry-After of a day, a chunk size of 2**63-1, model
ids and revisions holding percent-encoded `..`, `?` and `#`, lone surrogates in config.json, a config.json nested
200,000 deep).

Each case runs `vramlint check . --offline` (the Hub cases: `vramlint check .` with HF_ENDPOINT on the case's own
server) with `hostile_twelfth.run_case`'s checks (every output format, the planted secrets, the audit hook, the
GitHub runner's decoding, `__no_error__`, `__says__`, `__literal__`). Checks added here: `__any__` (at least one
of these findings), `__unsuppressed__` (a finding on this line that is not suppressed), `__md_absent__` (text the
markdown summary may not hold raw), `__max_report_mb__` (no report file larger), `__github_files__` (every
annotation's `file=` property, decoded as the runner decodes it, is a file of the case and its `line=` a number)
and the Hub server's own record (`no-request`: it got no request at all; `no-traversal`: no request path that
decodes to a `..` segment, a query or a fragment; `other-origin`: the second server got no token).
The cases and their expectations were written and committed before their first run.

First run (`python3 benchmarks/hostile_thirteenth.py --cpu-time`, at 31a3071): 23/34 within the limits. The 11 that
were not: the Flux release of 2,000 entries and 20,000 valuesFrom sources (killed at 60 s, 54 CPU-s, 1.2 GB: each
server walked every source and its note named all 20,000); an OpenShift Template whose `${MAX_LEN}` `oc process`
fills with 4096 (a false VRL005, "invalid int value: '${MAX_LEN}'"); a flow mapping left open before a `---` in a
stream of 1,000+ documents (its YAML error said two lines late, on the next marker the prefilter kept); a
Dockerfile whose unclosed `RUN <<NEVER` swallowed its ENTRYPOINT (no finding: a server that "sets no command");
50,000 here-documents on one line (killed at 60 s: each walked the command's 50,000 redirections); a `.env` value
holding U+2028/NEL/FF (a false VRL005: `str.splitlines` started a variable inside the value); a 1 MB model name
one anchor gives 500 servers, in compose and in a List (killed at 60 s, 3.8 and 2.7 GB: a 2.5 GB JSON report); a
suppression comment a form feed moved onto the command below it (the VRL005 suppressed); a model name that was a
live markdown link; and a Hub echoing the token as JSON `\\u` escapes (the token in the cache).

One expectation was wrong, not vramlint (corrected below, where it is): the markdown needle `](https://evil` is
also found inside `\\](https://evil`, which GitHub shows as text. The inherited `</details` check of
`hostile_unseen.extra_problems` also matches vramlint's own closing tag when a finding is suppressed (seen in
suppress-formfeed-moves-comment's first run, where the suppression was the bug); left as it is. After the fixes (at
b1df90d, the same command): 34/34; the closest to the limits: flux-stack-2000-models-20k-valuesfrom 1.30 CPU-s and
108 MB, k8s-list-1MB-model-alias-500-items 1.63 CPU-s, pieces-flow-open-across-cut 1.39 CPU-s; hub-chunk-size-2pow63
takes 4.2 s of wall time (the Hub request's deadline) for 0.17 CPU-s.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import threading
import time
import urllib.parse
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fresh as f  # noqa: E402  (the harness of the third round)
import hostile_inputs as h  # noqa: E402
import hostile_twelfth as t  # noqa: E402  (the twelfth round's hostile Hub and checks)
import hostile_unseen as u  # noqa: E402

QWEN = f.QWEN
deployment = h.deployment
expect = f.expect
line_of = f.line_of
chart = f.chart
CHART_TEMPLATE = h.CHART_TEMPLATE
COMPOSE_HEAD = h.COMPOSE_HEAD
GPU_RESERVATION = t.GPU_RESERVATION
HUB_MODEL = t.HUB_MODEL
SERVE_BAD = t.SERVE_BAD


def _bad(name: str = "llm") -> tuple[str, tuple[int, int]]:
    text = deployment(QWEN + ["--max-model-len", "999999"], name=name)
    at = line_of(text, '"999999"')
    return text, (at - 1, at)


def _shift(lines: tuple[int, int], by: int) -> tuple[int, int]:
    return (lines[0] + by, lines[1] + by)


def _release(chart_name: str, body: str, name: str = "stack") -> str:
    return (f"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\nspec:\n"
            f"  chart:\n    spec:\n      chart: {chart_name}\n      sourceRef: {{kind: HelmRepository, name: r}}\n"
            + body)


def _stack_model(i: int, max_len: int) -> str:
    return (f"        - name: m{i}\n          repository: vllm/vllm-openai\n          tag: v0.8.5\n"
            f"          modelURL: Qwen/Qwen2.5-1.5B-Instruct\n          requestGPU: 1\n"
            f"          vllmConfig:\n            maxModelLen: {max_len}\n")


def _app_controller(cid: str, max_len: str, replicas: str = "1", tp: str | None = None) -> str:
    args = ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", max_len]
    if tp is not None:
        args += ["--tensor-parallel-size", tp]
    arg_lines = "".join(f"              - {json.dumps(a)}\n" for a in args)
    return (f"      {cid}:\n        replicas: {replicas}\n        containers:\n          app:\n"
            "            image: {repository: vllm/vllm-openai, tag: v0.8.5}\n            args:\n" + arg_lines
            + "            resources: {limits: {nvidia.com/gpu: 1}}\n")


def _template(params: str, max_len_arg: str, name: str = "rt") -> str:
    return (f"apiVersion: template.openshift.io/v1\nkind: Template\nmetadata:\n  name: {name}\nparameters:\n{params}"
            "objects:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: ${NAME}\n  spec:\n"
            "    replicas: ${{REPLICAS}}\n    template:\n      spec:\n        nodeSelector:\n"
            "          cloud.google.com/gke-accelerator: nvidia-l4\n        containers:\n        - name: vllm\n"
            "          image: vllm/vllm-openai:v0.8.5\n          args:\n          - --model\n"
            "          - Qwen/Qwen2.5-1.5B-Instruct\n          - --served-model-name\n          - ${NAME}\n"
            f"          - --max-model-len\n          - {max_len_arg}\n"
            "          resources:\n            limits:\n              nvidia.com/gpu: '1'\n")


def thirteenth_cases() -> dict[str, dict[str, Any]]:  # noqa: C901  (one block per case)
    out: dict[str, dict[str, Any]] = {}
    bad, bad_lines = _bad()

    # ------------------------------------------------------------------ Flux, app-template, OpenShift, KServe
    # flux.extract_helm_release walks every valuesFrom entry for every server of spec.values, and each server's
    # note names every whole-document source: 2,000 entries x 20,000 sources
    models = _stack_model(0, 999999) + "".join(_stack_model(i, 4096) for i in range(1, 2000))
    sources = "".join(f"    - {{kind: ConfigMap, name: v{i}}}\n" for i in range(20_000))
    rel = _release("vllm-stack", "  valuesFrom:\n" + sources + "  values:\n    servingEngineSpec:\n      modelSpec:\n"
                   + models)
    out["flux-stack-2000-models-20k-valuesfrom"] = {
        "release.yaml": rel, "__max_report_mb__": 64,
        # vllm-stack passes maxModelLen as --max-model-len: 999,999 is over Qwen2.5-1.5B's 32,768
        "__expect__": expect(("release.yaml", (line_of(rel, "maxModelLen: 999999"),
                                               line_of(rel, "- name: m0"))))}
    esc = "\\e]8;;http://evil.example\\a::error::c{i}\\e]8;;\\a\\u202e"
    ctl = _app_controller(f'"{esc.format(i=0)}"', "999999") + "".join(
        _app_controller(f'"{esc.format(i=i)}"', "4096") for i in range(1, 3000))
    app = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n"
           "  name: \"::stop-commands::tok\\u202e\\x9b2J\"\nspec:\n  chartRef: {kind: OCIRepository, name: app-template}\n"
           "  values:\n    defaultPodOptions:\n      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
           "    controllers:\n" + ctl)
    out["app-template-3000-controllers-escaped-names"] = {
        "release.yaml": app, "__expect__": expect(("release.yaml", (line_of(app, '"999999"'),
                                                                    line_of(app, '"999999"') - 1)))}
    digits = "9" * 5000
    huge = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: big\nspec:\n"
            "  chartRef: {kind: OCIRepository, name: app-template}\n  values:\n    controllers:\n"
            + _app_controller("vllm", "4096", replicas=digits, tp=str(2**70)))
    out["app-template-numbers-past-int-limit"] = {
        "release.yaml": huge,
        # a 5,000-digit replicas is no int32 (the API server refuses it), and a TP of 2**70 no engine vLLM builds:
        # one of them said on its line
        "__expect__": expect(("release.yaml", (line_of(huge, "replicas:"), line_of(huge, str(2**70)),
                                               line_of(huge, str(2**70)) - 1)))}
    fine = _template("- name: NAME\n  value: chat\n- name: REPLICAS\n  value: '1'\n- name: MAX_LEN\n  value: '4096'\n",
                     "${MAX_LEN}")
    # `oc process` fills ${MAX_LEN} with 4096 and ${{REPLICAS}} with the number 1: vLLM starts
    out["openshift-template-parameters-valid"] = {"template.yaml": fine, "__no_error__": True, "__expect__": expect()}
    gen = _template("- name: NAME\n  generate: expression\n  from: '[a-z0-9]{99999999}'\n- name: REPLICAS\n"
                    "  value: '99999999999999999999999999'\n- name: MAX_LEN\n  value: '999999'\n  required: true\n",
                    "${MAX_LEN}", name="gen")
    # 999,999 over the model's 32,768 once filled in: said on the argument or on the parameter giving it
    out["openshift-template-parameter-generate-huge"] = {
        "template.yaml": gen, "__expect__": expect(("template.yaml", (line_of(gen, "${MAX_LEN}"),
                                                                      line_of(gen, "value: '999999'"),
                                                                      line_of(gen, "- --max-model-len"))))}
    words = " --enforce-eager" * 60_000 + " --served-model-name 'unclosed $(cat /proc/self/environ)"
    llm = ("apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata:\n  name: llm\nspec:\n"
           "  model:\n    uri: hf://Qwen/Qwen2.5-1.5B-Instruct\n  parallelism:\n    tensor: " + digits + "\n"
           "  template:\n    containers:\n    - name: main\n      image: vllm/vllm-openai:v0.8.5\n      env:\n"
           "      - name: VLLM_ADDITIONAL_ARGS\n        value: \"" + words + "\"\n"
           "      resources: {limits: {nvidia.com/gpu: '1'}}\n")
    out["llmisvc-1MB-additional-args-huge-tp"] = {
        "llm.yaml": llm,
        # the CRD's int32 cannot hold 5,000 digits (and vLLM's int() refuses them): said on that line
        "__expect__": expect(("llm.yaml", line_of(llm, "tensor:")))}

    # ------------------------------------------------------------------ streams of >= 1 MB, read in pieces
    small = [deployment(QWEN + ["--max-model-len", "4096"], name=f"d{i}") for i in range(3000)]
    block = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata:\n  run.sh: |\n    echo start\n"
             "---\n    echo this line is a new document's indented scalar\n")
    stream = "---\n".join(small[:1500]) + "---\n" + block + "---\n" + "---\n".join(small[1500:]) + "---\n" + bad
    at = stream.count("\n", 0, stream.rindex(bad))
    out["pieces-dashes-in-block-scalar-error-last"] = {"stream.yaml": stream,
                                                       "__expect__": expect(("stream.yaml", _shift(bad_lines, at)))}
    big_cm = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n"
              + "".join(f"  k{i}: {'v' * 60}\n" for i in range(45_000)))
    stream2 = "---\n".join(small[:2000]) + "---\n" + big_cm + "---\n" + bad
    at2 = stream2.count("\n", 0, stream2.rindex(bad))
    out["pieces-3MB-document-after-2000-small"] = {"stream.yaml": stream2,
                                                   "__expect__": expect(("stream.yaml", _shift(bad_lines, at2)))}
    open_flow = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: open}\ndata: {a: '1',\n  b: '2',\n---\n"
                 "  c: '3'}\n")
    stream3 = bad + "---\n" + "---\n".join(small[:1500]) + "---\n" + open_flow + "---\n" + "---\n".join(small[1500:])
    o = stream3.count("\n", 0, stream3.index(open_flow))
    # libyaml stops at the `---` inside the open flow mapping: a YAML error there; the Deployment before it read
    out["pieces-flow-open-across-cut"] = {"stream.yaml": stream3,
                                          "__expect__": expect(("stream.yaml", bad_lines),
                                                               ("stream.yaml", (o + 4, o + 5, o + 6, o + 7),
                                                                "VRL102"))}
    anchored = deployment(QWEN + ["--max-model-len", "4096"], name="anchored").replace(
        "name: vllm", "name: &c vllm")
    alias_doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: *c}\ndata: {a: b}\n"
    stream4 = anchored + "---\n" + "---\n".join(small) + "---\n" + alias_doc + "---\n" + bad
    a4 = stream4.count("\n", 0, stream4.index(alias_doc))
    # an alias names an anchor of its own document only: "found undefined alias", on its line
    out["pieces-alias-to-earlier-document"] = {"stream.yaml": stream4,
                                               "__expect__": expect(("stream.yaml", a4 + 3, "VRL102"))}
    dup = deployment(QWEN + ["--max-model-len", "4096"], name="dup").replace(
        "          resources:", "          args:\n            - --model\n            - Qwen/Qwen2.5-1.5B-Instruct\n"
        "            - --max-model-len\n            - '999999'\n          resources:")
    stream5 = "---\n".join(small) + "---\n" + dup
    d5 = stream5.count("\n", 0, stream5.index(dup))
    # kubectl keeps the last of duplicate keys: its 999,999 is what vLLM gets
    out["pieces-duplicate-args-last-piece"] = {"stream.yaml": stream5,
                                               "__expect__": expect(("stream.yaml", (d5 + line_of(dup, "'999999'"),
                                                                                     d5 + line_of(dup, "'999999'") - 1)))}
    pre = "---\t\n".join(small) + "---\t\n"
    crlf = ("\ufeff" + pre + bad).replace("\n", "\r\n")
    out["pieces-bom-crlf-tab-after-dashes"] = {"stream.yaml": crlf.encode("utf-8"),
                                               "__expect__": expect(("stream.yaml",
                                                                     _shift(bad_lines, pre.count("\n"))))}

    # ------------------------------------------------------------------ Dockerfile and shell heredocs
    docker = ("FROM vllm/vllm-openai:v0.8.5\nCOPY <<EOF /start.sh\n#!/bin/sh\nexec " + SERVE_BAD + "\nEOF\n"
              "RUN <<BIG\n" + "echo x\n" * 60_000 + "BIG\n" "RUN <<NEVER\necho never closed\n"
              "ENTRYPOINT [\"/bin/sh\", \"/start.sh\"]\n")
    out["dockerfile-copy-heredoc-entrypoint"] = {
        "Dockerfile": docker,
        "compose.yaml": "services:\n  vllm:\n    build: {context: ., dockerfile: Dockerfile}\n" + GPU_RESERVATION,
        # what the image runs is the heredoc's script (or unknown, and said on the service or the Dockerfile)
        "__any__": [("Dockerfile", 4), ("Dockerfile", None), ("compose.yaml", 3), ("compose.yaml", 2)],
        "__expect__": expect()}
    opens = " ".join(f"<<E{i}" for i in range(50_000))
    bodies = "".join(f"body {i}\nE{i}\n" for i in range(50_000))
    script = "#!/bin/bash\ncat " + opens + "\n" + bodies + SERVE_BAD + "\n"
    out["shell-50k-heredocs-one-line"] = {"__paths__": ("paths", ["serve.sh"]), "serve.sh": script,
                                          "__expect__": expect(("serve.sh", 3 + 100_000))}

    # ------------------------------------------------------------------ compose
    out["compose-remote-include-extends-build"] = {
        "compose.yaml": "include:\n  - __HUB__/inc.yaml\n  - oci://127.0.0.1/evil/compose:1\n"
        "  - path: __HUB__/path.yaml\n" + COMPOSE_HEAD
        + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999\n"
        "    env_file: __HUB__/env\n" + GPU_RESERVATION
        + "  b:\n    extends: {file: __HUB__/base.yaml, service: x}\n    build: {context: '__HUB__/ctx.git#main'}\n",
        "__hub__": "no-request",
        "__expect__": expect(("compose.yaml", 8), ("compose.yaml", 2))}
    out["compose-build-args-from-environment"] = {
        "compose.yaml": "services:\n  vllm:\n    build:\n      context: .\n      args: [HF_TOKEN, MODEL=Qwen/Qwen2.5-1.5B-Instruct]\n"
        + GPU_RESERVATION,
        "Dockerfile": "FROM vllm/vllm-openai:v0.8.5\nARG HF_TOKEN\nARG MODEL\nENV HF_TOKEN=${HF_TOKEN}\n"
        "ENTRYPOINT vllm serve ${MODEL} --api-key ${HF_TOKEN} --served-model-name ${HF_TOKEN} --max-model-len 999999\n",
        "__any__": [("Dockerfile", 5), ("compose.yaml", 2), ("compose.yaml", 3)], "__expect__": expect()}
    out["compose-dotenv-line-separators-in-values"] = {
        "compose.yaml": COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len ${MAXLEN}\n"
        + GPU_RESERVATION,
        # compose-go's dotenv reader splits at LF: NOTE's value holds the rest, and MAXLEN stays 4096
        ".env": "MAXLEN=4096\nNOTE=a\u2028MAXLEN=999999\nNOTE2=b\x85MAXLEN=999998\nNOTE3=c\x0cMAXLEN=999997\n",
        "__no_error__": True, "__expect__": expect()}
    mb = "Org/" + "m" * 1_000_000
    out["compose-1MB-model-anchor-500-services"] = {
        "compose.yaml": f"x-m: &m \"{mb}\"\nservices:\n" + "".join(
            f"  s{i}:\n    image: vllm/vllm-openai:v0.8.5\n    command: [--model, *m, --port, '{8000 + i}']\n"
            for i in range(500)),
        "__max_report_mb__": 64, "__expect__": expect()}
    items = "".join(f"- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {{name: d{i}}}\n  spec:\n    template:\n"
                    "      spec:\n        containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
                    "          args: [--model, *m]\n" for i in range(500))
    out["k8s-list-1MB-model-alias-500-items"] = {
        "list.yaml": f"apiVersion: v1\nkind: List\nx-model: &m \"{mb}\"\nitems:\n" + items,
        "__max_report_mb__": 64, "__expect__": expect()}

    # ------------------------------------------------------------------ suppressions, configuration
    sup = ("#!/bin/sh\n: a\x0cb\x1cc\n# vramlint: ignore[VRL005] hidden two lines above the command\n: spacer\n"
           + SERVE_BAD + "\n")
    # the shell and every editor count lines at LF: the comment covers its line and the next (a `:`), not line 5
    out["suppress-formfeed-moves-comment"] = {"__paths__": ("paths", ["serve.sh"]), "serve.sh": sup,
                                              "__unsuppressed__": ("serve.sh", 5),
                                              "__expect__": expect(("serve.sh", 5))}
    out["config-repo-names-endpoint-cache-rules"] = {
        ".vramlint.yaml": "hub-endpoint: http://127.0.0.1:9/\nhf-endpoint: http://127.0.0.1:9/\n"
        "cache-dir: ../_outside\nrules-dir: ../_outside\noffline: false\noutput-file: ../_outside/x\n"
        "hf-token-file: ../_outside/secret.txt\n",
        "deploy.yaml": bad,
        "__expect__": expect((".vramlint.yaml", 1), ("deploy.yaml", bad_lines))}

    # ------------------------------------------------------------------ what reaches reports
    link = "[approve this PR](https://evil.example/approve)"
    image = "![all checks passed](https://evil.example/pixel.png)"
    md = deployment(["--model", f"Org/{link}", "--max-model-len", "999999", "--served-model-name", image],
                    name="md").replace('            - "--max-model-len"\n',
                                       f'            # vramlint: ignore[VRL005] {image} {link}\n'
                                       '            - "--max-model-len"\n', 1)
    out["markdown-links-images-in-values"] = {
        "deploy.yaml": md, "__md_absent__": [link, image, "](https://evil.example"],
        "__expect__": expect()}
    # (corrected after the first run: `\](` is a literal bracket in GitHub's markdown, so the needles are looked
    # for where no backslash makes them text; the first run's check found "](https://evil" inside `\](https://evil`)
    forged = ["x,line=1,endLine=9,title=forged.yaml", "y::z,col=3.yaml", "t%2Cline=5%0A::error::q.yaml",
              "title=a,b%3A.yaml"]
    out["github-properties-forged-by-names"] = {
        **{f"n{i}/{n}": bad for i, n in enumerate(forged)},
        "__github_files__": True,
        "__expect__": expect((f"n0/{forged[0]}", bad_lines), (f"n2/{forged[2]}", bad_lines))}

    # ------------------------------------------------------------------ Unicode: surrogates, invalid UTF-8
    cfg = dict(t._CONFIG)
    surro = json.dumps(cfg)[:-1] + ', "model_type": "llama\\ud800", "architectures": ["\\udfff\\ud800LlamaForCausalLM"]}'
    lone = deployment(["--model", "./m", "--hf-overrides", '{"architectures": ["\\ud83d"], "x": "\\udcff"}',
                      "--max-model-len", "999999"], name="lone")
    yaml_esc = bad.replace("name: llm", 'name: "llm\\ud800x"')
    out["unicode-lone-surrogate-escapes"] = {
        "m/config.json": surro, "deploy.yaml": lone, "yaml.yaml": yaml_esc,
        "__any__": [("deploy.yaml", None), ("yaml.yaml", None)], "__expect__": expect()}
    tpl = CHART_TEMPLATE.replace('"{{ .Values.maxLen }}"', '"{{ .Values.maxLen }}", "--served-model-name", '
                                 '"{{ printf "%c%c" 55296 1114112 }}{{ "\\xff\\xfe" }}{{ "\\xed\\xa0\\x80" | b64enc }}"')
    out["tpl-surrogate-rune-invalid-utf8"] = chart({"deploy.yaml": tpl}, __expect__=expect(f.SERVER))

    # ------------------------------------------------------------------ the file system
    out["fs-fifos-git-files-dockerfile-env"] = {
        ".git/HEAD": ("fifo",), ".git/info/exclude": ("fifo",), ".gitignore": ("fifo",),
        "sub/.gitignore": ("symlink", "/dev/zero"), "sub/deploy.yaml": bad,
        "compose.yaml": "services:\n  vllm:\n    build: {context: ., dockerfile: Dockerfile}\n    env_file: .env\n"
        + GPU_RESERVATION, "Dockerfile": ("fifo",), ".env": ("fifo",),
        "__expect__": expect(("sub/deploy.yaml", bad_lines), ("compose.yaml", (3, 4)))}
    out["kustomize-helmcharts-values-outside"] = {
        "kustomization.yaml": "helmGlobals:\n  chartHome: ../_outside\nhelmCharts:\n- name: vllm-stack\n"
        "  repo: https://vllm-project.github.io/production-stack\n  valuesFile: ../_outside/secret.yaml\n"
        "  additionalValuesFiles: [/proc/self/environ, /dev/zero]\n  valuesInline:\n    servingEngineSpec:\n"
        "      modelSpec:\n" + _stack_model(0, 999999),
        "deploy.yaml": bad,
        "__expect__": expect(("deploy.yaml", bad_lines), ("kustomization.yaml", None))}

    # ------------------------------------------------------------------ a hostile Hub (HF_ENDPOINT on 127.0.0.1)
    hub_deploy = deployment(["--model", HUB_MODEL, "--max-model-len", "4096"])
    for name in ("hub-token-echoed-as-json-escapes", "hub-redirect-other-port-same-host", "hub-gzip-and-retry-after",
                 "hub-chunk-size-2pow63", "hub-config-lone-surrogates", "hub-config-200k-deep"):
        out[name] = {"deploy.yaml": hub_deploy, "__hub__": name, "__expect__": expect()}
    for name in ("hub-gzip-and-retry-after", "hub-chunk-size-2pow63", "hub-config-200k-deep"):
        out[name]["__says__"] = HUB_MODEL  # no usable config.json: the model unresolved, by name
    ids = ["evil-org/x%2F..%2F..%2Fetc", "evil-org/x?token=1", "evil-org/x#frag", "evil-org/%2e%2e",
           "evil-org/x\\..\\..\\y"]
    trav = "---\n".join(deployment(["--model", m, "--max-model-len", "4096"], name=f"t{i}") for i, m in enumerate(ids))
    trav += "---\n" + deployment(["--model", HUB_MODEL, "--revision", "main%2F..%2F..%2Fx", "--max-model-len", "4096"],
                                 name="r1")
    trav += "---\n" + deployment(["--model", HUB_MODEL + "2", "--revision", "..%2f..", "--code-revision", "a?b#c"],
                                 name="r2")
    out["hub-ids-percent-traversal"] = {"deploy.yaml": trav, "__hub__": "no-traversal", "__expect__": expect()}
    return out


# ---------------------------------------------------------------------- the hostile Hub's answers

_CONFIG = t._CONFIG


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


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
            state.setdefault("requests", []).append((self.path, dict(self.headers)))
            name = urllib.parse.urlsplit(self.path).path.rsplit("/", 1)[-1]
            if kind in ("no-request", "no-traversal", "other-origin"):
                self._send(404, b"{}", {"X-Error-Code": "RepoNotFound"})
            elif kind == "hub-token-echoed-as-json-escapes":
                sent = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if name == "config.json":
                    body = json.dumps(_CONFIG)[:-1] + (
                        f', "architectures": ["{_escaped(sent)}"], "model_type": "{_escaped(sent)}", '
                        f'"torch_dtype": "{_escaped(sent)}", "quantization_config": {{"quant_method": '
                        f'"{_escaped(sent)}"}}, "_name_or_path": "{_escaped(sent)}"}}')
                    self._send(200, body.encode(), {"Content-Type": "application/json"})
                else:
                    self._send(404, json.dumps({"error": _escaped(sent)}).encode(),
                               {"X-Error-Code": "EntryNotFound", "X-Error-Message": sent[::-1]})
            elif kind == "hub-redirect-other-port-same-host":
                other = state["other"]
                if name == "config.json":
                    self._send(302, b"", {"Location": f"{other}/moved/config.json"})
                elif name == "model.safetensors.index.json":
                    port = self.server.server_address[1]
                    self._send(307, b"", {"Location": f"http://localhost:{port}/elsewhere/{name}"})
                else:
                    self._send(302, b"", {"Location": f"{other}/{name}"})
            elif kind == "hub-gzip-and-retry-after":
                if name == "config.json":
                    self._send(200, gzip.compress(json.dumps(_CONFIG).encode() + b" " * 50_000_000, 9),
                               {"Content-Type": "application/json", "Content-Encoding": "gzip"})
                else:
                    self._send(429, b"{}", {"Retry-After": "86400"})
            elif kind == "hub-chunk-size-2pow63":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"7fffffffffffffff\r\n{\"model_type\": ")
                self.wfile.flush()
                for _ in range(300):
                    time.sleep(0.1)
            elif kind == "hub-config-lone-surrogates":
                if name == "config.json":
                    body = json.dumps(_CONFIG)[:-1] + (
                        ', "model_type": "llama\\ud800", "architectures": ["\\udfffLlamaForCausalLM\\ud83d"], '
                        '"torch_dtype": "\\udcff"}')
                    self._send(200, body.encode(), {"Content-Type": "application/json"})
                else:
                    self._send(404, b"{}", {"X-Error-Code": "EntryNotFound"})
            elif kind == "hub-config-200k-deep":
                if name == "config.json":
                    body = json.dumps(_CONFIG)[:-1] + ', "text_config": ' + "[" * 200_000 + "]" * 200_000 + "}"
                    self._send(200, body.encode(), {"Content-Type": "application/json"})
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
        self.other: _Hub | None = None
        if kind == "hub-redirect-other-port-same-host":
            self.other = _Hub("other-origin")
            self.state["other"] = self.other.url
        self.server = Server(("127.0.0.1", 0), _hub_handler(kind, self.state))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self.other:
            self.other.close()


def _hub_problems(kind: str, hub: _Hub) -> list[str]:
    problems: list[str] = []
    requests = hub.state.get("requests", [])
    if kind == "no-request" and requests:
        problems.append(f"the server named in the compose file got {len(requests)} request(s): {requests[0][0][:80]}")
    if kind == "no-traversal":
        for path, _ in requests:
            parts = urllib.parse.urlsplit(path)
            decoded = urllib.parse.unquote(urllib.parse.unquote(parts.path))
            if ".." in decoded.replace("\\", "/").split("/") or parts.query or parts.fragment or "#" in decoded \
                    or "?" in decoded:
                problems.append(f"a request path that decodes to a traversal, query or fragment: {path[:100]!r}")
                break
    if hub.other is not None:
        for path, headers in hub.other.state.get("requests", []):
            if h.SECRET in json.dumps(headers):
                problems.append(f"LEAK: the token was sent to another origin (port) of the same host: {path[:60]}")
                break
    for _path, headers in requests:
        if headers.get("Host", "").startswith("localhost") and h.SECRET in json.dumps(headers):
            problems.append("LEAK: the token was sent to another host name (localhost) after a redirect")
            break
    return problems


# ---------------------------------------------------------------------- checks of this round

def _decode_property(value: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(code, char)
    return value


def _github_file_problems(github: str, files: set[str]) -> list[str]:
    problems: list[str] = []
    for line in github.splitlines():
        if not line.startswith(("::error ", "::warning ", "::notice ")):
            continue
        props, sep, _ = line.partition("::")[2].partition("::")
        if not sep:
            problems.append(f"a github annotation without its message part: {line[:80]!r}")
            break
        head, _, rest = props.partition(" ")
        fields: dict[str, str] = {}
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            if not eq or key in fields:
                problems.append(f"a github annotation whose properties do not parse as written: {line[:100]!r}")
                return problems
            fields[key] = _decode_property(value)
        if "file" in fields and fields["file"] not in files:
            problems.append(f"a github annotation on a file the case does not have: {fields['file'][:80]!r}")
            break
        if "line" in fields and not fields["line"].isdigit():
            problems.append(f"a github annotation whose line is not a number: {fields['line'][:40]!r}")
            break
    return problems


def _case_files(files: dict[str, Any]) -> set[str]:
    return {k for k in files if not k.startswith("__")} | {".vramlint.yaml", "."}


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:  # noqa: C901
    files = thirteenth_cases()[name]
    own = ("__no_error__", "__says__", "__hub__", "__literal__", "__any__", "__unsuppressed__", "__md_absent__",
           "__max_report_mb__", "__github_files__")
    kind = files.get("__hub__")
    hub = _Hub(kind) if kind else None
    passed = {k: v for k, v in files.items() if k not in own}
    if hub:
        passed = {k: v.replace("__HUB__", hub.url) if isinstance(v, str) else v for k, v in passed.items()}
    try:
        result = f.run_case(name, passed, base, timeout, hub=hub.url if hub else None)
    finally:
        if hub:
            hub.close()
    problems = result["problems"]
    scratch = os.path.join(base, f"_scratch-{name}")
    problems.extend(u.extra_problems(files, scratch))
    reports: dict[str, str] = {}
    for key in ("text", "stderr", *f.FORMATS):
        try:
            with open(os.path.join(scratch, f"report.{key}"), encoding="utf-8", errors="replace") as fh:
                reports[key] = fh.read()
        except OSError:
            reports[key] = ""
    findings: list[dict] = []
    try:
        findings = json.loads(reports["json"]).get("findings") or []
    except (ValueError, AttributeError):
        pass
    if "__says__" in files and files["__says__"] not in reports["text"] + reports["stderr"]:
        problems.append(f"the text report does not say {files['__says__']!r}")
    if "__any__" in files:
        if not any(x.get("file") == file and (line is None or x.get("line") == line)
                   for file, line in files["__any__"] for x in findings):
            near = [f"{x.get('rule')} {x.get('file')}:{x.get('line')}" for x in findings][:4]
            problems.append(f"none of the findings {files['__any__']} (has {near})")
    if "__unsuppressed__" in files:
        file, line = files["__unsuppressed__"]
        if not any(x.get("file") == file and x.get("line") == line and not x.get("suppressed") for x in findings):
            problems.append(f"no unsuppressed finding on {file}:{line} (a suppression comment moved by a line break "
                            "the shell does not count)")
    import re

    for needle in files.get("__md_absent__", ()):
        live = "".join(rf"(?<!\\){re.escape(c)}" if c in "[]" else re.escape(c) for c in needle)
        if re.search(live, reports["markdown"]):
            problems.append(f"markdown carries {needle[:50]!r} from a scanned value as a live link or image")
    if "__max_report_mb__" in files:
        for key, text in reports.items():
            if len(text) > files["__max_report_mb__"] * 1e6:
                problems.append(f"the {key} report is {len(text) / 1e6:.0f} MB (over {files['__max_report_mb__']} MB): "
                                "a value repeated by every server")
    if files.get("__github_files__"):
        problems.extend(_github_file_problems(reports["github"], _case_files(files)))
    if hub:
        problems.extend(_hub_problems(kind, hub))
        if os.path.isdir(os.path.join(scratch, "cache")):
            for dirpath, _, names in os.walk(os.path.join(scratch, "cache")):
                for n in names:
                    with open(os.path.join(dirpath, n), "rb") as fh:
                        if h.SECRET.encode() in fh.read():
                            problems.append(f"LEAK: the planted HF_TOKEN is in the cache ({n})")
    return result


THIRTEENTH_CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_thirteenth as e; "
                    "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    return f.run_cli(__doc__.split("\n\n")[0], thirteenth_cases, "thirteenth", THIRTEENTH_CHILD)


if __name__ == "__main__":
    sys.exit(main())
