"""A twelfth round of hostile inputs (the fifteenth file of them), aimed at code the earlier rounds did not reach.

    python3 benchmarks/hostile_fifteenth.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Kinds the earlier rounds (`hostile_*.py`) did not try: CUDA-graph capture sizes read from the command line and
`--compilation-config` (a largest size of 10**11, `Infinity`, `1e300`, 200,000 listed sizes; 0.10's
`--cuda-graph-sizes`), `num_speculative_tokens` of `Infinity` and 10**20; SkyPilot accelerators of `.inf`, `.nan`
and 5,000 digits, and 18,000 alternatives read as a fleet; `ray start` with 400-digit GPU counts ahead of `vllm
serve`, an interpreter path doubled 40 times, 2,000 interpreters known at run time; `.env`/`.toml` files named on
the command line that are FIFOs, links to `/proc/self/environ` and out of the tree, 10,000 levels deep or over the
size cap; Helm templates included by their own path (a template that includes itself twice, paths out of the
chart, a template that is a link out of it), `toPrettyJson` of a self-referencing and of a 5,000-deep dict, 300
templates that `fail` or `required` with 900 KB messages holding workflow commands; a command-line word of
100,000 joined flags; `--fix` beside links in and out of the tree, `--diff` of a file whose name holds a newline
and `::error::` and whose context lines hold workflow commands; `vramlint diff` over file names that forge workflow
commands, a BASE holding links out of the tree, a gitlink and a 6 MB blob, a hand-made BASE tree holding a file
and a folder of one name; SARIF embedded links (`[text](url)`) and bidi marks (LRM, RLM, ALM) from scanned values;
a 1 MB suppression reason over one line of 2,000 servers; 5,000 configuration overrides x 2,000 files; a hostile
Hub's quantization configs; accelerator quantities of other vendors (`2Ei`, `0x10`, `1e400`, `.inf`); 1,000 compose
services whose NVIDIA_VISIBLE_DEVICES and device_ids are 5,000 GPUs through anchors; a JSON List of 2,000
Deployments on one line; a baseline file in the repository nested 100,000 deep; a vLLM `--config` file with JSON
arguments 140 levels deep and 200,000 capture sizes; template-syntax detection over a million openers.

Each `check` case runs `vramlint check . --offline` (the Hub case: with HF_ENDPOINT on the case's own server) with
`hostile_fresh.run_case`'s checks (time, memory, exit status, tracebacks, both planted secrets in every output
format and stderr, an audit hook that fails a case which opens a file outside the tree or starts a process, writes
into the tree, raw control characters, workflow-command lines, valid SARIF/GitLab/JUnit, the finding expected on
its file and line), `hostile_unseen.extra_problems` (GitHub's decoding, markdown), and the checks of
`hostile_fourteenth` (`__no_internal__`, `__any__`, `__max_report_mb__`, `__says__`). Checks added here:
`__sarif_no_links__` (no SARIF message text holds an embedded link `[..](..)` that the spec would render),
`__no_chars__` (these characters appear raw in no text, markdown, stderr or github output), `__exit__` (the exit
statuses allowed, with `__stderr_says__`: a usage error naming the file), and the modes `fix` (`check --fix
--unsafe-fixes`: only the files named may change, nothing outside the tree is read or written), `fixdiff` (`check
--diff --unsafe-fixes`: the patch printed cannot start a workflow command) and `gitdiff` (`vramlint diff HEAD` in
a git repository made by the case, text/json/markdown; git is the only process allowed).
The cases and their expectations were written and committed before their first run (3cab3f7; 98897e2 after the rebase onto main).

First run (`python3 benchmarks/hostile_fifteenth.py --cpu-time --timeout 30`, at 3cab3f7): 14/31. Three cases were
of the benchmark's own making, corrected in b8339ed (f3d5e13 after the rebase; then 16/31, before any fix): graph-sizes-010-huge wrote
200,000 sizes, a file over the 5 MiB cap (now 50,000); the two launch scripts were not named on the command line
(vramlint reads a script only when named or run by a scanned file); the Ray case's line was looked up by
`999999`, which its 400-digit counts hold first. vramlint's failures: CUDA-graph capture sizes of 10**11 (MemoryError,
VRL000, in 0.12+ and 0.10 code), `Infinity`/`1e400` in `--compilation-config` and `num_speculative_tokens`
(OverflowError, VRL000; also through a vLLM `--config` file), SkyPilot `.inf`/`.nan` counts (OverflowError, the task
"vramlint failed"), a word of 100,000 joined flags next to 20,000 refused joined words (7 CPU-s: the word list rebuilt
per refused word), `--diff` printing a context line `::error ...` and a `##[` (workflow commands), `vramlint diff
--format markdown` printing `##[group]` from a file name, a hand-made BASE tree with a file and a folder of one name
(IsADirectoryError, exit 2), SARIF message texts holding `[click here](https://evil...)` (an embedded link), raw
LRM/RLM/ALM in text and markdown, a 1 MB suppression reason over 2,000 servers on one line (a 2 GB JSON report,
killed at 30 s, 3.9 GB), 5,000 overrides x 2,000 files (killed at 30 s: 20 million glob matches), and a baseline
nested 100,000 deep (RecursionError traceback). One check of the harness was wrong, not vramlint: hostile_unseen's
`</details` needle matches vramlint's own closing tag of the suppressed findings (as hostile_thirteenth said), so it
is not applied here. After the fixes (the same command): 31/31; the closest to the limits: args-joined-word-100k-flags
3.96 CPU-s and 270 MB (4.15 CPU-s on the rebased branch; 20,002 findings, one per refused word, in 7 formats),
helm-fail-900KB-300-templates 3.6 - 4.1 CPU-s (the 2 s chart budget, then 300 findings of 900 KB messages cut).
On the branch rebased onto main (160f2a0): 31/31 again, corpus JSON identical to main's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fresh as f  # noqa: E402  (the harness of the third round)
import hostile_inputs as h  # noqa: E402
import hostile_twelfth as t  # noqa: E402
import hostile_unseen as u  # noqa: E402

QWEN = f.QWEN
MODEL = "Qwen/Qwen2.5-1.5B-Instruct"  # in the catalog: max_position_embeddings 32,768
deployment = h.deployment
expect = f.expect
line_of = f.line_of
SERVER = f.SERVER
GPU_RESERVATION = t.GPU_RESERVATION
HUB_MODEL = t.HUB_MODEL
BIDI_MARKS = "\u200e\u200f\u061c"  # LRM, RLM, ALM: Unicode's bidi formatting marks besides the embeddings/isolates

# ---------------------------------------------------------------------- helpers


def _bad(name: str = "bad", image: str = "vllm/vllm-openai:v0.8.5") -> str:
    return deployment(QWEN + ["--max-model-len", "999999"], name=name, image=image)


def _bad_lines(text: str, nth: int = 1) -> tuple[int, int]:
    at = line_of(text, '"999999"', nth)
    return at - 1, at


def _docs(*docs: str) -> str:
    return "---\n".join(docs)


def _sky(accelerators: str, run: str, extra: str = "") -> str:
    return ("name: task\nresources:\n  accelerators: " + accelerators + "\n" + extra + "setup: pip install vllm==0.8.5\n"
            "run: |\n  " + run.replace("\n", "\n  ") + "\n")


def _chart(templates: dict[str, Any], values: str = f.VALUES, **extra: Any) -> dict[str, Any]:
    return f.chart(templates, values=values, **extra)


SERVE_BAD = f"vllm serve {MODEL} --max-model-len 999999"


def fifteenth_cases() -> dict[str, dict[str, Any]]:  # noqa: C901  (one block per case)
    out: dict[str, dict[str, Any]] = {}
    bad = _bad()

    # ------------------------------------------------------------------ CUDA-graph capture sizes (0.10 - 0.13+)
    img13 = "vllm/vllm-openai:v0.13.0"
    g1 = _docs(deployment(QWEN + ["--max-cudagraph-capture-size", "99999999999", "--max-num-batched-tokens",
                                  "99999999999"], name="g1", image=img13),
               deployment(QWEN + ["--compilation-config", '{"max_cudagraph_capture_size": 99999999999}',
                                  "--max-num-batched-tokens", "99999999999"], name="g2", image=img13),
               _bad(image=img13))
    out["graph-capture-size-1e11"] = {"deploy.yaml": g1, "__no_internal__": True,
                                      "__expect__": expect(("deploy.yaml", _bad_lines(g1)))}

    forms = ['{"max_cudagraph_capture_size": Infinity}', '{"max_cudagraph_capture_size": 1e300}',
             '{"cudagraph_capture_sizes": [1e400, 8]}', '{"cudagraph_capture_sizes": [Infinity, -Infinity]}',
             '{"cudagraph_capture_sizes": "1e400"}', '{"max_cudagraph_capture_size": -1e400, "cudagraph_mode": 7}']
    g2 = _docs(*[deployment(QWEN + ["--compilation-config", c, "--max-num-batched-tokens", "8192"], name=f"c{i}",
                            image=img13) for i, c in enumerate(forms)], _bad(image=img13))
    out["graph-compilation-config-inf"] = {"deploy.yaml": g2, "__no_internal__": True,
                                           "__expect__": expect(("deploy.yaml", _bad_lines(g2)))}

    img10 = "vllm/vllm-openai:v0.10.2"
    g3 = _docs(deployment(QWEN + ["--cuda-graph-sizes", "99999999999", "--max-num-batched-tokens", "99999999999"],
                          name="o1", image=img10),
               deployment(QWEN + ["--cuda-graph-sizes", *[str(8 * i) for i in range(1, 50_001)]], name="o2",
                          image=img10),
               deployment(QWEN + ["--compilation-config", json.dumps({"cudagraph_capture_sizes": list(range(1, 200_001))}),
                                  "--max-num-batched-tokens", "99999999999"], name="o3", image=img10),
               _bad(image=img10))
    out["graph-sizes-010-huge"] = {"deploy.yaml": g3, "__no_internal__": True,
                                   "__expect__": expect(("deploy.yaml", _bad_lines(g3)))}

    specs = ['{"method": "ngram", "num_speculative_tokens": Infinity, "prompt_lookup_max": 4}',
             '{"method": "ngram", "num_speculative_tokens": 1e300, "prompt_lookup_max": 4}',
             '{"method": "ngram", "num_speculative_tokens": 99999999999999999999, "prompt_lookup_max": 4}',
             '{"method": "ngram", "num_speculative_tokens": NaN}']
    g4 = _docs(*[deployment(QWEN + ["--speculative-config", s], name=f"s{i}", image=img13)
                 for i, s in enumerate(specs)], _bad(image=img13))
    out["spec-tokens-inf-huge"] = {"deploy.yaml": g4, "__no_internal__": True,
                                   "__expect__": expect(("deploy.yaml", _bad_lines(g4)))}

    # ------------------------------------------------------------------ SkyPilot
    sky_bad = _sky("L4:1", SERVE_BAD)
    out["skypilot-accelerators-inf-nan"] = {
        "sky1.yaml": _sky("{A100: .inf}", SERVE_BAD), "sky2.yaml": _sky("{H100: .nan, L4: .nan}", SERVE_BAD),
        "sky3.yaml": _sky("'H100:" + "9" * 5000 + "'", SERVE_BAD),
        "sky4.yaml": _sky("['L4:" + "9" * 400 + ".5', 'A10G:1']", SERVE_BAD),
        "sky5.yaml": sky_bad, "__no_internal__": True,
        "__expect__": expect(("sky5.yaml", line_of(sky_bad, "999999")))}

    names = ["L4", "A10G", "T4", "V100", "A100", "A100-80GB", "H100", "H200", "L40S"]
    alts = "[" + ", ".join(f"'{n}:8'" for _ in range(2000) for n in names) + "]"
    fleet = _sky(alts, f"vllm serve {MODEL} --tensor-parallel-size 8 --pipeline-parallel-size 10000 "
                 "--max-model-len 999999", extra="num_nodes: 10000\n")
    out["skypilot-fleet-18k-alternatives"] = {"sky.yaml": fleet, "__no_internal__": True, "__max_report_mb__": 32,
                                              "__expect__": expect(("sky.yaml", None))}

    # ------------------------------------------------------------------ scripts: Ray, interpreters
    devices = ",".join(str(i) for i in range(200_000))
    ray = ("#!/bin/bash\nset -e\nexport CUDA_VISIBLE_DEVICES=" + devices + "\n"
           + "".join(f"ray start --head --num-gpus={'9' * 400} --resources='{{\"x{i}\": 1e400}}' --port={6379 + i}\n"
                     for i in range(2_000))
           + "ray start --address=$HEAD --num-gpus=$((2**70))\n"
           + f"vllm serve {MODEL} --tensor-parallel-size 2 --max-model-len 999999\n")
    out["script-ray-start-hostile"] = {"launch.sh": ray, "__paths__": ("paths", ["launch.sh"]), "__no_internal__": True,
                                       "__expect__": expect(("launch.sh", line_of(ray, "--max-model-len 999999")))}

    interp = ("#!/bin/bash\nP=/opt/venv\n" + 'P="$P$P"\n' * 40
              + f'"$P/bin/python" -m vllm.entrypoints.openai.api_server --model {MODEL} --max-model-len 999999\n'
              + "".join(f'"$VENV{i}/bin/python" -m vllm.entrypoints.openai.api_server --model {MODEL} --port {i}\n'
                        for i in range(2000)))
    out["script-interpreter-runtime-paths"] = {"run.sh": interp, "__paths__": ("paths", ["run.sh"]),
                                               "__no_internal__": True,
                                               "__expect__": expect(("run.sh", line_of(interp, "999999")))}

    out["named-dotenv-toml-special"] = {
        "a.env": ("fifo",), "b.toml": ("symlink", "/proc/self/environ"), "c.env": ("symlink", "../_outside/secret.env"),
        "d.toml": "x = '" + "a" * (5 * 1024 * 1024) + "'\n", "deep.toml": "a = " + "{b = " * 10_000 + "1"
        + "}" * 10_000 + "\n", "big.env": "".join(f"K{i}=v{i}\n" for i in range(100_000)),
        "e.env": ("symlink", "/dev/zero"), "deploy.yaml": bad,
        "__paths__": ("paths", ["a.env", "b.toml", "c.env", "d.toml", "deep.toml", "big.env", "e.env"]),
        "__no_internal__": True, "__expect__": expect(("deploy.yaml", _bad_lines(bad)))}

    # ------------------------------------------------------------------ Helm: templates included by path
    self_inc = 'x: {{ include (print $.Template.BasePath "/x.yaml") . }}{{ include (print $.Template.BasePath "/x.yaml") . }}\n'
    out["tpl-include-by-path-self-fanout"] = {**f.with_tpl(self_inc, line=1), "__no_internal__": True}

    outside = ('a: {{ include "../../_outside/secret.yaml" . }}\n'
               'b: {{ include (print $.Template.BasePath "/../../../_outside/secret.yaml") . }}\n'
               'c: {{ include "/proc/self/environ" . }}\n'
               'd: {{ include (print $.Template.BasePath "/link.yaml") . }}\n'
               'e: {{ tpl (include (print $.Template.BasePath "/link.yaml") .) . }}\n')
    out["tpl-include-by-path-outside"] = _chart(
        {"deploy.yaml": h.CHART_TEMPLATE, "x.yaml": outside},
        **{"chart/templates/link.yaml": ("symlink", "../../../_outside/secret.yaml"), "__no_internal__": True,
           "__expect__": expect(SERVER)})

    pretty = ('{{ $d := dict "a" 1 }}{{ $_ := set $d "self" $d }}a: {{ toPrettyJson $d | len }}\n'
              '{{ $n := dict }}{{ $cur := $n }}{{ range until 5000 }}{{ $next := dict }}{{ $_ := set $cur "k" $next }}'
              '{{ $cur = $next }}{{ end }}b: {{ toPrettyJson $n | len }}\nc: {{ mustToPrettyJson $n | len }}\n'
              'd: {{ toRawJson $n | len }}\ne: {{ $l := list $d $d }}{{ toPrettyJson (dict "l" $l "d" $d) | len }}\n')
    out["tpl-toprettyjson-self-and-deep"] = {**f.with_tpl(pretty, line=None), "__no_internal__": True}

    fail = '{{ fail (printf "%s\\n::error file=forged.yaml,line=1::forged\\u202e %s" (repeat 900000 "F") "x") }}\n'
    out["helm-fail-900KB-300-templates"] = _chart(
        {"deploy.yaml": h.CHART_TEMPLATE, **{f"f{i}.yaml": fail for i in range(300)}},
        __no_internal__=True, __max_report_mb__=64, __expect__=expect(SERVER))

    req = ('{{ required (printf "%s\\n::warning::forged ##[group]x %s" (repeat 900000 "R") "y") .Values.missing }}\n')
    out["helm-required-900KB-300-templates"] = _chart(
        {"deploy.yaml": h.CHART_TEMPLATE, **{f"r{i}.yaml": req for i in range(300)}},
        __no_internal__=True, __max_report_mb__=64, __expect__=expect(SERVER))

    # ------------------------------------------------------------------ joined flag words
    word = "--max-model-len 999999 " + " ".join(f"--x{i} {i}" for i in range(100_000))
    joined = deployment(QWEN + [word] + ["--tensor-parallel-size 1"] * 20_000, name="joined")
    out["args-joined-word-100k-flags"] = {"deploy.yaml": joined, "__no_internal__": True,
                                          "__expect__": expect(("deploy.yaml", line_of(joined, "--max-model-len 999999")))}

    # ------------------------------------------------------------------ --fix and --diff
    out["fix-links-in-and-out-of-tree"] = {
        "deploy.yaml": bad, "link.yaml": ("symlink", "deploy.yaml"), "out.yaml": ("symlink", "../_outside/compose.yaml"),
        "sub/out-dir": ("symlink", "../../_outside"), "env.yaml": ("symlink", "/proc/self/environ"),
        "__mode__": "fix", "__may_change__": ["deploy.yaml"], "__must_change__": ["deploy.yaml"]}

    hostile_ctx = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: forged\nspec:\n  template:\n    spec:\n"
                   "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
                   "        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n          env:\n"
                   "            - name: NOTE\n              value: |\n                ##[group]forged group\n"
                   "                ::error file=forged.yaml,line=1::forged by a context line\n"
                   "          args:\n            - \"--max-model-len\"\n"
                   "            - \"999999\"  # ##[warning]forged on the changed line\n"
                   f"            - \"--model\"\n            - \"{MODEL}\"\n"
                   "          resources:\n            limits:\n              nvidia.com/gpu: \"1\"\n")
    out["fixdiff-names-and-context-commands"] = {
        "x\n::error file=a.yaml,line=1::forged by a name.yaml": hostile_ctx, "plain.yaml": hostile_ctx,
        "__mode__": "fixdiff"}

    # ------------------------------------------------------------------ vramlint diff (git)
    dep = deployment(QWEN + ["--max-model-len", "4096"])
    dep2 = deployment(QWEN + ["--max-model-len", "999999"])
    names_d = ["x\n::error file=a.yaml,line=1::forged.yaml", "##[group]b.yaml", "\u202ec.yaml", "d|e`f.yaml",
               "g\u200fh.yaml"]
    out["gitdiff-hostile-names"] = {"__mode__": "gitdiff", "__base__": {n: dep for n in names_d},
                                    "__head__": {n: dep2 for n in names_d}}

    out["gitdiff-base-links-gitlink-big"] = {
        "__mode__": "gitdiff",
        "__base__": {"deploy.yaml": dep, "s.yaml": ("symlink", "/proc/self/environ"),
                     "o.yaml": ("symlink", "../_outside/secret.yaml"), ".vramlint.yaml": ("symlink", "../_outside/secret.yaml"),
                     "sub": ("gitlink",), "big.yaml": dep + "#" + "p" * (6 * 1024 * 1024) + "\n"},
        "__head__": {"deploy.yaml": dep2}}

    out["gitdiff-base-tree-file-and-folder"] = {
        "__mode__": "gitdiff", "__crafted__": True, "__head__": {"c.yaml": dep2, "deploy.yaml": dep2}}

    # ------------------------------------------------------------------ SARIF, bidi marks
    links = deployment(QWEN + ["--max-model-len", "[click here](https://evil.example/phish)", "--max-num-seqs",
                               "[0](0)", "--served-model-name", "![badge](https://evil.example/b.svg)"], name="links")
    out["sarif-embedded-links-in-values"] = {
        "deploy.yaml": links, "__no_internal__": True, "__sarif_no_links__": True,
        "__expect__": expect(("deploy.yaml", (line_of(links, "[click"), line_of(links, "[click") - 1)))}

    marks = deployment(QWEN + ["--max-model-len", "9\u200f99999", "--served-model-name", "a\u200eb\u061cc"], name="m")
    out["names-and-values-bidi-marks"] = {
        "a\u200fb.yaml": marks, "c\u061cd.yaml": bad, "e\u200ef.yaml": bad, "__no_internal__": True,
        "__no_chars__": BIDI_MARKS,
        "__expect__": expect(("a\u200fb.yaml", (line_of(marks, '"--max-model-len"'), line_of(marks, '"--max-model-len"') + 1)))}

    # ------------------------------------------------------------------ suppressions, configuration
    item = json.loads(json.dumps({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "n"},
                                  "spec": {"template": {"spec": {
                                      "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
                                      "containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.8.5",
                                                      "args": QWEN + ["--max-model-len", "999999"],
                                                      "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}))
    items = []
    for i in range(2000):
        item["metadata"]["name"] = f"n{i}"
        items.append(json.dumps(item, separators=(",", ":")))
    one_line = '{"apiVersion":"v1","kind":"List","items":[' + ",".join(items) + "]}\n"
    reason = "::error::forged \u202e [x](https://evil.example) " + "r" * 1_000_000
    out["suppress-1MB-reason-one-line-2000-servers"] = {
        "list.yaml": "# vramlint: ignore[VRL005] " + reason + "\n" + one_line, "__no_internal__": True,
        "__max_report_mb__": 64, "__expect__": expect()}
    out["kubectl-list-one-line-2000-items"] = {
        "list.yaml": one_line, "__no_internal__": True, "__max_report_mb__": 64,
        "__expect__": expect(("list.yaml", 1, "VRL005"))}

    overrides = "overrides:\n" + "".join(f"  - files: ['d/f{i}.yaml', '**/x{i}/**']\n    gpu: L4\n"
                                         for i in range(5000))
    files_o = {f"d/f{i}.yaml": deployment(QWEN + ["--max-model-len", "4096"], name=f"f{i}") for i in range(2000)}
    out["config-5000-overrides-2000-files"] = {
        ".vramlint.yaml": overrides, **files_o, "d/zz-bad.yaml": bad, "__no_internal__": True,
        "__expect__": expect(("d/zz-bad.yaml", _bad_lines(bad)))}

    deep_baseline = '{"version": 1, "findings": ' + "[" * 100_000 + "]" * 100_000 + "}"
    out["baseline-in-repo-deep-json"] = {
        "baseline.json": deep_baseline, "deploy.yaml": bad, "__args__": ("args", ["--baseline", "baseline.json"]),
        "__exit__": (2,), "__stderr_says__": "baseline.json", "__expect__": expect()}

    # ------------------------------------------------------------------ a hostile Hub: quantization configs
    out["hub-quant-configs-hostile"] = {"deploy.yaml": deployment(["--model", HUB_MODEL, "--max-model-len", "4096"]),
                                        "__hub__": "quant", "__no_internal__": True, "__expect__": expect()}

    # ------------------------------------------------------------------ accelerator quantities, GPUs shared
    vendors = [("habana.ai/gaudi", "2Ei"), ("amd.com/gpu", "'0x10'"), ("gpu.intel.com/i915", "1e400"),
               ("aws.amazon.com/neuron", "'" + "9" * 400 + "'"), ("google.com/tpu", "'-0'"),
               ("nvidia.com/mig-1g.10gb", ".inf"), ("nvidia.com/gpu.shared", "1e-400"), ("amd.com/gpu", ".nan")]
    acc = _docs(*[deployment(QWEN + ["--max-model-len", "4096"], name=f"v{i}").replace(
        'nvidia.com/gpu: "1"', f"{key}: {q}") for i, (key, q) in enumerate(vendors)], bad)
    out["accelerator-quantities-other-vendors"] = {"deploy.yaml": acc, "__no_internal__": True,
                                                   "__expect__": expect(("deploy.yaml", _bad_lines(acc)))}

    ids = "[" + ", ".join(f"'{i}'" for i in range(5000)) + "]"
    vis = ",".join(str(i) for i in reversed(range(5000)))
    comp = (f"x-ids: &ids {ids}\nx-vis: &vis '{vis}'\nservices:\n"
            + "".join(f"  s{i}:\n    image: vllm/vllm-openai:v0.8.5\n    command: [--model, {MODEL}, --port, '{8000 + i}']\n"
                      "    environment: {NVIDIA_VISIBLE_DEVICES: *vis}\n"
                      "    deploy: {resources: {reservations: {devices: [{driver: nvidia, device_ids: *ids, "
                      "capabilities: [gpu]}]}}}\n" for i in range(1000)))
    out["compose-1000-services-5000-gpus-anchored"] = {"compose.yaml": comp, "__no_internal__": True,
                                                       "__max_report_mb__": 64,
                                                       "__expect__": expect(("compose.yaml", None))}

    # ------------------------------------------------------------------ vLLM --config file, template detection
    deep_map = "".join("  " * i + f"k{i}:\n" for i in range(140)) + "  " * 140 + "v: 1\n"
    cfg = ("model: " + MODEL + "\nhf-overrides:\n" + "".join("  " + line + "\n" for line in deep_map.splitlines())
           + "compilation-config: " + json.dumps({"cudagraph_capture_sizes": list(range(1, 200_001))}) + "\n"
           + "speculative-config:\n  method: ngram\n  num_speculative_tokens: .inf\n" + "max-model-len: 999999\n")
    compose_cfg = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.13.0\n    command: [--config, /etc/vllm/cfg.yaml]\n"
                   "    volumes: ['./cfg:/etc/vllm:ro']\n" + GPU_RESERVATION)
    out["vllm-config-file-deep-json-values"] = {
        "compose.yaml": compose_cfg, "cfg/cfg.yaml": cfg, "__no_internal__": True,
        "__expect__": expect(("cfg/cfg.yaml", line_of(cfg, "max-model-len: 999999")))}

    openers = ("# runs vllm serve\n" + "${" * 500_000 + "%{" * 500_000 + "{{" * 200_000 + "\n")
    out["template-syntax-detection-1M-openers"] = {
        "a.yaml.tpl": openers, "b.yaml.j2": openers, "c.tmpl.yaml": openers, "deploy.yaml": bad,
        "__no_internal__": True, "__expect__": expect(("deploy.yaml", _bad_lines(bad)))}
    return out


# ---------------------------------------------------------------------- the hostile Hub


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

        def do_GET(self) -> None:
            state.setdefault("requests", []).append((self.path, dict(self.headers)))
            name = urllib.parse.urlsplit(self.path).path.rsplit("/", 1)[-1]
            if name == "config.json":
                cfg = dict(t._CONFIG)
                cfg["quantization_config"] = {"quant_method": "gptq", "bits": 1e308, "group_size": -1,
                                              "desc_act": "x", "modules_to_not_convert": {"a": [1] * 1000},
                                              "weight_block_size": [0, -1], "checkpoint_format": ["gptq"]}
                body = json.dumps(cfg).replace("1e+308", "1e400").encode()
                self._send(200, body, {"Content-Type": "application/json"})
                return
            if name == "hf_quant_config.json":
                q = {"producer": {"name": "modelopt"}, "quantization": {
                    "quant_algo": ["NVFP4"], "group_size": 0, "kv_cache_quant_algo": {"a": 1},
                    "exclude_modules": "x" * 1_000_000, "quantized_layers": {f"l{i}": {"quant_algo": 7}
                                                                          for i in range(20_000)}}}
                self._send(200, json.dumps(q).encode(), {"Content-Type": "application/json"})
                return
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
        self.server = Server(("127.0.0.1", 0), _hub_handler(kind, self.state))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------- checks

OWN = ("__no_internal__", "__any__", "__max_report_mb__", "__says__", "__sarif_no_links__", "__no_chars__",
       "__exit__", "__stderr_says__", "__hub__", "__mode__", "__may_change__", "__must_change__", "__base__",
       "__head__", "__crafted__")
_SARIF_LINK = re.compile(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\(")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _output_problems(outputs: dict[str, str], chars: str = "") -> list[str]:
    """Raw control/bidi characters and workflow-command lines in what reaches a terminal or a CI log."""
    problems: list[str] = []
    for k, text in outputs.items():
        bad = sorted({c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) < 0xa0
                      or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" or c in chars})
        if bad:
            problems.append(f"raw control character(s) {[hex(ord(c)) for c in bad][:5]} in {k}")
        for line in text.splitlines():
            if line.lstrip().startswith("::") or "##[" in line:
                problems.append(f"{k} has a line the runner reads as a workflow command: {line[:80]!r}")
                break
    for s, what in ((h.SECRET, "the planted HF_TOKEN"), (f.OUTSIDE_SECRET, "the secret file outside the tree")):
        leaks = [k for k, v in outputs.items() if s in v]
        if leaks:
            problems.append(f"LEAK: {what} is in {', '.join(leaks)}")
    return problems


def run_check_case(name: str, files: dict[str, Any], base: str, timeout: float) -> dict[str, Any]:
    kind = files.get("__hub__")
    hub = _Hub(kind) if kind else None
    inner = {k: v for k, v in files.items() if k not in OWN}
    try:
        result = f.run_case(name, inner, base, timeout, hub=hub.url if hub else None)
    finally:
        if hub:
            hub.close()
    problems = result["problems"]
    scratch = os.path.join(base, f"_scratch-{name}")
    allowed = files.get("__exit__")
    if allowed and result["code"] in allowed:
        problems[:] = [p for p in problems if not p.startswith(f"exit {result['code']}:")]
        stderr = _read(os.path.join(scratch, "report.stderr"))
        if files.get("__stderr_says__") and files["__stderr_says__"] not in stderr:
            problems.append(f"stderr does not name {files['__stderr_says__']!r}: {stderr.strip()[:120]!r}")
    elif allowed:
        problems.append(f"exit {result['code']}, expected one of {allowed}")
    else:
        # (corrected after the first run: hostile_unseen's `</details` needle also matches vramlint's own closing tag
        # of the suppressed findings' section, as hostile_thirteenth's docstring says; a value's `</details` is
        # escaped as `\</details`, which the needle does not match either way)
        problems.extend(p for p in u.extra_problems(files, scratch) if "</details" not in p)
    reports = {k: _read(os.path.join(scratch, f"report.{k}")) for k in ("text", "stderr", "json", "sarif", "github",
                                                                          "markdown")}
    findings: list[dict] = []
    try:
        findings = json.loads(reports["json"]).get("findings") or []
    except (ValueError, AttributeError):
        pass
    if "__says__" in files and files["__says__"] not in reports["text"] + reports["stderr"]:
        problems.append(f"the text report does not say {files['__says__']!r}")
    if "__max_report_mb__" in files:
        for key in ("text", "stderr", *f.FORMATS):
            path = os.path.join(scratch, f"report.{key}")
            size = os.path.getsize(path) if os.path.exists(path) else 0
            if size > files["__max_report_mb__"] * 1e6:
                problems.append(f"the {key} report is {size / 1e6:.0f} MB (over {files['__max_report_mb__']} MB)")
    if files.get("__no_internal__"):
        failed = [x for x in findings if "vramlint failed while" in (x.get("message") or "")]
        if failed:
            x = failed[0]
            problems.append(f"internal failure: {x.get('rule')} {x.get('file')}:{x.get('line')} "
                            f"{(x.get('message') or '')[:160]}".encode("unicode_escape").decode("ascii"))
    if files.get("__sarif_no_links__"):
        try:
            runs = json.loads(reports["sarif"]).get("runs") or []
        except (ValueError, AttributeError):
            runs = []
        for run in runs:
            for res in run.get("results") or []:
                text = (res.get("message") or {}).get("text") or ""
                m = _SARIF_LINK.search(text)
                if m:
                    problems.append(f"a SARIF message holds an embedded link: {text[max(0, m.start() - 20):m.end() + 30]!r}")
                    break
    if files.get("__no_chars__"):
        for key in ("text", "stderr", "markdown"):  # (github: percent-encoding only, as the runner decodes it)
            raw = sorted({c for c in reports[key] if c in files["__no_chars__"]})
            if raw:
                problems.append(f"raw bidi mark(s) {[hex(ord(c)) for c in raw]} in {key}")
    return result


# ---------------------------------------------------------------------- --fix, --diff and vramlint diff


def _env(scratch: str, audit_log: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(scratch, "hook"), os.path.abspath(f.ROOT)]),
               HF_HUB_OFFLINE="1", HF_TOKEN=h.SECRET, XDG_CACHE_HOME=os.path.join(scratch, "cache"),
               HOME=os.path.join(scratch, "home"), VRAMLINT_AUDIT_LOG=audit_log, NO_COLOR="1",
               TMPDIR=os.path.join(scratch, "tmp"))
    for k in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_BASE_REF"):
        env.pop(k, None)
    return env


def _git(folder: str, *args: str, stdin: bytes | None = None) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="h", GIT_AUTHOR_EMAIL="h@example.com", GIT_COMMITTER_NAME="h",
               GIT_COMMITTER_EMAIL="h@example.com", GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    done = subprocess.run(["git", "-C", folder, *args], input=stdin, capture_output=True, env=env, check=True)
    return done.stdout.decode("utf-8", "surrogateescape").strip()


def _write_tree(folder: str, files: dict[str, Any]) -> None:
    for rel, content in files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.remove(path)
        if isinstance(content, tuple) and content[0] == "symlink":
            os.symlink(content[1], path)
        elif isinstance(content, tuple) and content[0] == "gitlink":
            continue
        else:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(content)


def _make_repo(folder: str, files: dict[str, Any]) -> None:
    _git(folder, "init", "-q", ".")
    _git(folder, "config", "core.hooksPath", "/dev/null")
    if files.get("__crafted__"):
        dep = deployment(QWEN + ["--max-model-len", "4096"])
        blob = _git(folder, "hash-object", "-w", "--stdin", stdin=dep.encode())
        sub = _git(folder, "mktree", stdin=f"100644 blob {blob}\td.yaml\n".encode())
        tree = _git(folder, "mktree", stdin=(f"100644 blob {blob}\t..\n100644 blob {blob}\tc.yaml\n"
                                             f"040000 tree {sub}\tc.yaml\n100644 blob {blob}\tdeploy.yaml\n"
                                             f"100644 blob {blob}\t.GIT\n").encode())
        commit = _git(folder, "commit-tree", tree, "-m", "crafted")
        _git(folder, "update-ref", "HEAD", commit)
        _write_tree(folder, files["__head__"])
        return
    _write_tree(folder, files["__base__"])
    _git(folder, "add", "-A")
    for rel, content in files["__base__"].items():
        if isinstance(content, tuple) and content[0] == "gitlink":
            _git(folder, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{rel}")
    _git(folder, "commit", "-q", "-m", "base")
    _write_tree(folder, files["__head__"])


def run_special_case(name: str, files: dict[str, Any], base: str, timeout: float) -> dict[str, Any]:
    mode = files["__mode__"]
    folder = os.path.join(base, name)
    os.makedirs(folder, exist_ok=True)
    scratch = os.path.join(base, f"_scratch-{name}")
    for sub in ("cache", "home", "hook", "tmp"):
        os.makedirs(os.path.join(scratch, sub), exist_ok=True)
    with open(os.path.join(scratch, "hook", "sitecustomize.py"), "w", encoding="utf-8") as fh:
        fh.write(f.AUDIT_HOOK)
    audit_log = os.path.join(scratch, "audit.log")
    env = _env(scratch, audit_log)
    problems: list[str] = []
    if mode == "gitdiff":
        _make_repo(folder, files)
        runs = [[sys.executable, "-m", "vramlint", "diff", "HEAD", "--offline", "--format", fmt]
                for fmt in ("text", "markdown", "json")]
        codes_ok: tuple[int, ...] = (0, 1)
    else:
        h.write_case(folder, {k: v for k, v in files.items() if k not in OWN})
        flag = ["--fix", "--unsafe-fixes"] if mode == "fix" else ["--diff", "--unsafe-fixes"]
        runs = [[sys.executable, "-m", "vramlint", "check", ".", "--offline", *flag]]
        codes_ok = (0, 1)
    before = f._snapshot(folder)
    contents = {}
    for p in before:
        if os.path.isfile(p) and not os.path.islink(p):
            with open(p, "rb") as fh:
                contents[p] = fh.read()
    start = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = 0.0
    code = None
    outputs: dict[str, str] = {}
    for i, cmd in enumerate(runs):
        out, err, code, secs = h.run_timed(cmd, folder, env, timeout)
        seconds = max(seconds, secs)
        outputs[f"stdout{i}"] = out
        outputs[f"stderr{i}"] = err
        if "Traceback" in err:
            problems.append(f"traceback: {err.strip().splitlines()[-1][:160]}")
        elif code not in codes_ok:
            problems.append(f"exit {code}: {(err.strip().splitlines() or ['-'])[-1][:160]}")
        if mode == "gitdiff" and cmd[-1] == "json" and code in codes_ok:
            try:
                json.loads(out)
            except ValueError as exc:
                problems.append(f"diff json is not JSON: {exc}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result: dict[str, Any] = {"seconds": seconds, "cpu": (usage.ru_utime + usage.ru_stime) - (start.ru_utime + start.ru_stime),
                              "peak": usage.ru_maxrss / 1024, "code": code, "problems": problems}
    problems.extend(_output_problems(outputs))
    after = f._snapshot(folder)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p) and not os.path.isdir(p)
                     and "/.git/" not in p)
    may = {os.path.join(folder, m) for m in files.get("__may_change__", [])}
    wrong = [p for p in changed if p not in may]
    if wrong:
        problems.append(f"wrote into the tree: {[os.path.relpath(p, folder) for p in wrong][:3]}")
    for m in files.get("__must_change__", []):
        p = os.path.join(folder, m)
        with open(p, "rb") as fh:
            if fh.read() == contents.get(p):
                problems.append(f"--fix did not change {m}")
    for p in f._audit(audit_log, folder, scratch, base):
        if mode == "gitdiff" and p.startswith("started a process:") and "'git'" in p:
            continue
        if mode == "fix" and p.startswith("opened for writing inside the tree:") and \
                p.split(": ", 1)[1] in may:
            continue
        problems.append(p)
    # the outside folder is untouched
    outside = os.path.join(base, "_outside")
    for n in os.listdir(outside):
        if n.endswith(".yaml") and f.OUTSIDE_SECRET not in _read(os.path.join(outside, n)):
            problems.append(f"the file outside the tree was changed: {n}")
    first = (outputs.get("stderr0") or "").strip().splitlines()
    result["first"] = (first[-1] if first else "(no stderr)")[:150].encode("unicode_escape").decode("ascii")
    return result


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = fifteenth_cases()[name]
    if files.get("__mode__"):
        return run_special_case(name, files, base, timeout)
    # (write_case reads a ("paths", [...]) / ("args", [...]) value under any key, "__paths__" / "__args__" here)
    return run_check_case(name, files, base, timeout)


CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_fifteenth as e; "
         "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="run only these cases")
    parser.add_argument("--keep", metavar="DIR", help="write the cases into DIR and keep them")
    parser.add_argument("--timeout", type=float, default=60.0, help="kill a case after this many seconds")
    parser.add_argument("--cpu-time", action="store_true",
                        help="judge the 5 s limit on the case's CPU time, not wall time (on a loaded machine)")
    args = parser.parse_args()
    names = args.case or list(fifteenth_cases())
    base = os.path.abspath(args.keep or tempfile.mkdtemp(prefix="vramlint-fifteenth-"))
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
    print(f"{ok}/{len(names)} fifteenth cases PASS: under {f.LIMIT_SECONDS:g} s "
          f"({'CPU' if args.cpu_time else 'wall'} time) and {f.LIMIT_MB:g} MB, exit 0 or 1 (or the usage error "
          "asked for), no leak, nothing read outside the tree or written outside the cache, the expected finding")
    return 0 if ok == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
