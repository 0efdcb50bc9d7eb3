"""A fifth round of hostile inputs, of shapes the first four rounds do not have, judged as `hostile_fresh.py` judges.

    python3 benchmarks/hostile_eighth.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

`1e999` (infinity to a float reader, too large to be an int) and a 400-digit integer in every numeric slot vramlint
reads: vLLM's flags in a Deployment's args, a compose `command:`, a launch script (`-tp`, `--flag=value`), a
KServe ServingRuntime, a production-stack values file, a chart's values used by its template (`| int`), a
`$(VAR)` from the container's env; and in the objects around them (replicas, `nvidia.com/gpu`, an emptyDir's
`sizeLimit`, compose `deploy.replicas`, device `count` and `shm_size`). Brace expansions that would make a
hundred million words, with a step, with zero padding, nested 5,000 deep or 30 in a row. Flow collections nested
on each of 30,000 lines (330,000 nodes that three-a-line counted as 90,000), one anchor aliased 100,000 times, a
1 MB anchor name, a values file of 600,000 keys (block) and of 400,000 keys on one flow line. Folder and file
names holding ANSI escapes, `::error::`, `::add-mask::`, `::stop-commands::` and a carriage return, in a file
with an error (so the name is in every output format); links inside the tree that loop by absolute path.

Each case runs `vramlint check . --offline` with `hostile_fresh.run_case` (every output format, the planted secrets,
the audit hook) and `hostile_unseen.extra_problems` (GitHub lines decoded as the runner decodes them, markdown).
"""

from __future__ import annotations

import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fresh as f  # noqa: E402  (the harness of the third round)
import hostile_inputs as h  # noqa: E402
import hostile_unseen as u  # noqa: E402

QWEN = f.QWEN
deployment = h.deployment
script_deployment = h.script_deployment
expect = f.expect
line_of = f.line_of
COMPOSE_HEAD = h.COMPOSE_HEAD
HUGE = "1e999"  # a float's infinity; no int
LONG = "9" * 400  # an int no float holds
# vLLM's numeric engine flags of 0.8.5 (vllm/engine/arg_utils.py EngineArgs.add_cli_args: type=int or float)
NUMERIC_FLAGS = ("--max-model-len", "--tensor-parallel-size", "--pipeline-parallel-size", "--gpu-memory-utilization",
                 "--max-num-seqs", "--max-num-batched-tokens", "--block-size", "--swap-space", "--cpu-offload-gb",
                 "--num-gpu-blocks-override", "--max-seq-len-to-capture", "--seed", "--max-logprobs")


def _numbers(value: str) -> list[str]:
    out: list[str] = []
    for flag in NUMERIC_FLAGS:
        out += [flag, value]
    return out


def eighth_cases() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    # --- numbers in every numeric slot ---
    for label, value in (("1e999", HUGE), ("400-digits", LONG)):
        text = deployment(QWEN + _numbers(value))
        at = line_of(text, '"--max-model-len"')
        out[f"numbers-{label}-every-flag"] = {"deploy.yaml": text, "__expect__": expect(("deploy.yaml", (at, at + 1)))}
        compose = (COMPOSE_HEAD + f"    command: --model Qwen/Qwen2.5-1.5B-Instruct {' '.join(_numbers(value))}\n"
                   f"    shm_size: {value}g\n    deploy:\n      replicas: {value}\n      resources:\n"
                   f"        reservations:\n          devices: [{{driver: nvidia, count: {value}, capabilities: [gpu]}}]\n")
        out[f"numbers-{label}-compose"] = {"compose.yaml": compose,
                                           "__expect__": expect(("compose.yaml", line_of(compose, "command:")))}
        script = ["#!/bin/sh", f"N={value}", "exec vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len $N "
                  f"-tp {value} --gpu-memory-utilization={value} --max-num-seqs \"{value}\""]
        out[f"numbers-{label}-script"] = {"serve.sh": "\n".join(script) + "\n", "__paths__": ("paths", ["serve.sh"]),
                                          "__expect__": expect(("serve.sh", 3))}
    objects = deployment(QWEN + ["--max-model-len", "4096"]).replace("spec:\n  template:", f"spec:\n  replicas: {HUGE}\n"
                                                                     "  template:", 1)
    objects = objects.replace('nvidia.com/gpu: "1"', f"nvidia.com/gpu: {HUGE}").replace(
        "      containers:", f"      volumes:\n        - name: shm\n          emptyDir: {{medium: Memory, sizeLimit: "
        f"{LONG}Gi}}\n      containers:")
    out["numbers-k8s-object-fields"] = {"deploy.yaml": objects,
                                        "__expect__": expect(("deploy.yaml", line_of(objects, "nvidia.com/gpu")))}
    env = deployment(QWEN + ["--max-model-len", "$(MAX)", "--tensor-parallel-size", "$(TP)"]).replace(
        "          resources:", f"          env:\n            - {{name: MAX, value: '{HUGE}'}}\n"
        f"            - {{name: TP, value: '{LONG}'}}\n          resources:", 1)
    at = line_of(env, '"--max-model-len"')
    out["numbers-from-env-vars"] = {"deploy.yaml": env, "__expect__": expect(("deploy.yaml", (at, at + 1)))}
    runtime = ("apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata: {name: rt}\nspec:\n"
               "  supportedModelFormats: [{name: huggingface, autoSelect: true}]\n  containers:\n"
               "    - name: kserve-container\n      image: vllm/vllm-openai:v0.8.5\n"
               f"      args: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, '{HUGE}', --tensor-parallel-size,"
               f" '{LONG}']\n      resources: {{limits: {{nvidia.com/gpu: {HUGE}}}}}\n")
    out["numbers-kserve-runtime"] = {"rt.yaml": runtime, "__expect__": expect(("rt.yaml", line_of(runtime, "args:")))}
    values = ("servingEngineSpec:\n  modelSpec:\n    - name: m\n      repository: vllm/vllm-openai\n      tag: v0.8.5\n"
              f"      modelURL: Qwen/Qwen2.5-1.5B-Instruct\n      replicaCount: {HUGE}\n      requestGPU: {LONG}\n"
              f"      vllmConfig:\n        maxModelLen: {HUGE}\n        tensorParallelSize: {LONG}\n"
              f"        gpuMemoryUtilization: {HUGE}\n")
    out["numbers-production-stack-values"] = {"values.yaml": values,
                                              "__expect__": expect(("values.yaml", line_of(values, "maxModelLen")))}
    template = h.CHART_TEMPLATE.replace('"{{ .Values.maxLen }}"', '"{{ .Values.maxLen | int }}", "--tensor-parallel-'
                                        'size", "{{ .Values.tp }}", "--gpu-memory-utilization", "{{ .Values.util | '
                                        'float64 }}"')
    out["numbers-chart-values-in-template"] = f.chart({"deploy.yaml": template},
                                                      f"model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: {HUGE}\ntp: {LONG}\n"
                                                      f"util: {HUGE}\n", __expect__=expect(f.SERVER))
    # --- shell brace expansion ---
    for label, brace in (("step", "{1..99999999..1}"), ("zero-padded", "{00000001..99999999}"),
                         ("negative", "{-99999999..99999999}"), ("alpha-step", "{a..z..1}{a..z..1}{a..z..1}{a..z..1}"
                                                                                 "{a..z..1}{a..z..1}"),
                         ("nested-5000", "{a," * 5000 + "b" + "}" * 5000),
                         ("thirty-pairs", "{x,y}" * 30), ("prefix-suffix", "pre{1..99999999}post{1..9}")):
        out[f"brace-{label}"] = u.script_case([f"M=model{brace}", "vllm serve Qwen/Qwen2.5-1.5B-Instruct "
                                               f"--served-model-name {brace} --max-model-len 999999"], 1)
    # --- YAML shapes ---
    one = deployment(QWEN + ["--max-model-len", "999999"])
    flag_at = line_of(one, '"--max-model-len"')
    flag = ("deploy.yaml", (flag_at, flag_at + 1))  # the flag's line or its value's
    nested = one + "---\nkind: ConfigMap\nx:\n" + "- [[[[[[[[[[x]]]]]]]]]]\n" * 30_000
    out["yaml-flow-nested-every-line"] = {"deploy.yaml": nested, "__expect__": expect(flag, ("deploy.yaml", None, "VRL102"))}
    aliased = one + "---\nkind: ConfigMap\nbase: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nuses:\n" + "  - *a\n" * 100_000
    out["yaml-one-anchor-100k-aliases"] = {"deploy.yaml": aliased, "__expect__": expect(flag, ("deploy.yaml", None, "VRL102"))}
    name = "n" * 1_000_000
    out["yaml-anchor-name-1MB"] = {"deploy.yaml": one + f"---\nkind: ConfigMap\na: &{name} x\nb: *{name}\n",
                                   "__expect__": expect(flag)}
    block = "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 999999\nbig:\n" + "".join(f" k{i}: 1\n" for i in range(600_000))
    out["values-600k-keys-block"] = f.chart({"deploy.yaml": h.CHART_TEMPLATE}, block[:5_000_000].rsplit("\n", 1)[0] + "\n",
                                            __expect__=expect(("chart/values.yaml", None, "VRL102")))
    flow = "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 999999\nbig: {" + ", ".join(f"k{i}: 1" for i in range(400_000)) \
        + "}\n"
    out["values-400k-keys-one-line"] = f.chart({"deploy.yaml": h.CHART_TEMPLATE}, flow,
                                               __expect__=expect(("chart/values.yaml", 3, "VRL102")))
    # --- names and links ---
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    at = line_of(bad, '"--max-model-len"')
    names = {"\x1b]0;title\x07dir/\x1b[31m::error::x.yaml": bad, "::add-mask::x/::stop-commands::end.yaml": bad,
             "cr\rname/%0D%0A::warning::z.yaml": bad, "tab\tand\x7fdel.yaml": bad}
    out["names-in-folders-with-errors"] = dict(names, __expect__=expect(*((n, (at, at + 1)) for n in names)))
    out["links-loop-by-absolute-path"] = {"deploy.yaml": bad, "d/e/deploy.yaml": bad,
                                          "d/e/up": ("abslink", "d"), "d/self": ("abslink", "d"),
                                          "d/e/again": ("symlink", "../../d"),
                                          "__expect__": expect(("deploy.yaml", (at, at + 1)),
                                                               ("d/e/deploy.yaml", (at, at + 1)))}
    return out


def write_absolute_links(folder: str, files: dict[str, Any]) -> dict[str, Any]:
    """("abslink", rel): a symbolic link to the case folder's ``rel`` by its absolute path (known only here)."""
    out = {}
    for rel, content in files.items():
        if isinstance(content, tuple) and content[0] == "abslink":
            out[rel] = ("symlink", os.path.join(os.path.abspath(folder), content[1]))
        else:
            out[rel] = content
    return out


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = write_absolute_links(os.path.join(base, name), eighth_cases()[name])
    result = f.run_case(name, files, base, timeout)
    result["problems"].extend(u.extra_problems(files, os.path.join(base, f"_scratch-{name}")))
    return result


EIGHTH_CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_eighth as e; "
                "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    return f.run_cli(__doc__.split("\n\n")[0], eighth_cases, "eighth", EIGHTH_CHILD)


if __name__ == "__main__":
    sys.exit(main())

