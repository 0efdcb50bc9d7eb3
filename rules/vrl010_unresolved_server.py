"""A server that vramlint could not fully check: what of it could not be read or computed.

vramlint needs the model's architecture (its `config.json`) and the GPU to compute the budget vLLM will
compute. Servers left without a budget for a cause that many servers share (no GPU named, where the fix for
an AMD server names the AMD GPU node labeller's `amd.com/gpu.product-name`; a model loaded from a volume; a
model outside the catalog while the Hub is not asked; no command line; settings in a `--config` file that was
not read; another vendor's accelerator) are summarised once at the end of the run, by cause, with the one change that fixes each
(text report; `summary.unchecked` in JSON; run-level notifications in SARIF; a section in markdown; one
notice in GitHub annotations), instead of the same note on every server. What a server without a named GPU
needs of one is VRL011's note on that server.

This rule reports what is particular to one server: words of its command line known only at run time (a
variable expanded by the shell, `$(VAR)` from the environment), whose settings are therefore not checked, and
a budget that could not be computed. A Kubernetes variable set from a ConfigMap (`env[].valueFrom.configMapKeyRef`,
`envFrom[].configMapRef` without a prefix) is known when that ConfigMap is among the scanned files, in the
workload's file or folder and not in another namespace: the kubelet fills it before `$(VAR)` is expanded, so
`--model=$(MODEL_ID)` is checked with the ConfigMap's value (`vramlint explain` names where each came from). Caveats about vramlint's own knowledge are not reported here: the vLLM
version assumed when the image tag does not say it is in the budget's sources (`vramlint explain`), and
VRL009 and VRL005 lower their level for it. Turning this rule off (`ignore: [VRL010]`) also leaves the
servers of those files out of the end-of-run summary.

Failing example (the model is a shell variable set at run time):

```yaml
containers:
  - name: vllm
    command: ["sh", "-c", "vllm serve $MODEL --max-model-len 8192"]
    resources: {limits: {nvidia.com/gpu: 1}}
```

Passing example:

```yaml
containers:
  - name: vllm
    args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
    resources: {limits: {nvidia.com/gpu: 1}}
```
"""

from __future__ import annotations

ID = "VRL010"
NAME = "unresolved-server"
LEVEL = "note"
OPTIONS: dict = {}


def check(assessment, ctx):
    server = assessment.server
    # "no command or args" is a cause shared by many servers: the end-of-run summary says it
    unread = [u for u in server.unchecked if "no command or args" not in u]
    # a budget vramlint failed to compute is its own finding (VRL000, vramlint.meta.assessment_failures)
    if unread:
        yield ctx.finding(assessment, "partly checked: " + "; ".join(_grouped(unread)), server.location,
                          shared=True)  # an unknown: servers saying the same are said once (vramlint.fold)
    unsized = getattr(assessment, "unsized", None)
    if unsized:
        yield ctx.finding(assessment, unsized[1], unsized[0], level="warning")


def _grouped(items: list[str]) -> list[str]:
    """"line 41: X", "line 52: X" -> "X (lines 41, 52)": one statement per kind of gap."""
    import re

    lines: dict[str, list[str]] = {}
    for item in items:
        m = re.match(r"^line (\d+): (.*)$", item, re.DOTALL)
        text, line = (m.group(2), m.group(1)) if m else (item, None)
        seen = lines.setdefault(text, [])
        if line and line not in seen:
            seen.append(line)
    out = []
    for text, numbers in lines.items():
        if numbers:
            text += f" (line{'s' if len(numbers) > 1 else ''} {', '.join(numbers)})"
        out.append(text)
    return out
