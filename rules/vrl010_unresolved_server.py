"""A server whose memory budget could not be checked: unknown model, GPU, or a non-NVIDIA accelerator.

vramlint needs the model's architecture (its `config.json`) and the GPU to compute the budget vLLM will
compute. When either cannot be resolved from the deployment files (a local model path, a private model
without Hub access, a GPU named nowhere in the manifest), the memory rules skip the server. This note
says so, once per server, with everything that is missing in one message and what to add so that the
server is checked: a model alias (`model-aliases` in the configuration, mapping the served path or name to
a Hub id or a local config.json) and the GPU (`gpu: L4` in the configuration or `--gpu L4` on the command
line, or a `nodeSelector` such as `nvidia.com/gpu.product` in the manifest). With `--gpu` (or `gpu` in the
configuration) every server has a GPU, so only models can be missing.

When many servers of one run lack the same thing (a repository whose manifests never name the GPU type),
each still gets its note, on its own line, but a short one: the fix is the same for all of them.

Parts of a command line that cannot be known statically (a word that is a variable expanded at run time, a
container with no command or args because a chart or operator sets them) are added to the same note: the
settings they hold are not checked. Caveats about vramlint's own knowledge are not reported here: the vLLM
version assumed when the image tag does not say it is in the budget's sources (`vramlint explain`), and
VRL009 and VRL005 lower their level for it.

Accelerators other than NVIDIA GPUs (AMD `amd.com/gpu`, Intel Gaudi, Google TPU, AWS Neuron) are reported
the same way: vramlint's budget follows vLLM's CUDA code path only, so their memory is not checked.

Failing example (the GPU is not named anywhere):

```yaml
containers:
  - name: vllm
    args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
    resources: {limits: {nvidia.com/gpu: 1}}
```

Passing example:

```yaml
nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
containers:
  - name: vllm
    args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
    resources: {limits: {nvidia.com/gpu: 1}}
```
"""

from __future__ import annotations

from vramlint.rule import arg_location

ID = "VRL010"
NAME = "unresolved-server"
LEVEL = "note"
OPTIONS: dict = {}

VENDOR_NAMES = {
    "amd": "AMD GPU",
    "intel-gaudi": "Intel Gaudi accelerator",
    "google-tpu": "Google TPU",
    "aws-neuron": "AWS Neuron device",
    "huawei-ascend": "Huawei Ascend NPU",
}

GPU_FIX = "`gpu: L4` (your GPU type)"
SHORT_FROM = 3  # servers in one run lacking the GPU type: from this many on, the note is short


def _model_reason(name: str, reason: str) -> tuple[str, list[str], list[str]]:
    """(what is wrong, configuration to add, other ways) for a model that did not resolve.

    The resolver writes "what; how to fix"; the fix is rewritten here so that a note with the GPU too reads
    as one sentence.
    """
    what, _, fix = reason.partition("; ")
    what = what.strip()
    what = what.replace(f"local model path {name!r} does not exist here (it lives on the serving machine)",
                        "is a local path on the serving machine")
    if what.startswith(f"{name!r} "):
        what = what[len(repr(name)) + 1:]
    adds, others = [], []
    if "model-aliases" in fix:
        adds.append(f"`model-aliases: {{{name!r}: 'org/model'}}` (its Hub id or a config.json path)")
        if "network access" in fix:
            others.append("run without --offline")
    elif fix:
        others.append(fix.strip())
    return what, adds, others


def _gpu_unknown(assessment) -> bool:
    """No GPU type anywhere (not one outside the catalog, not another vendor's accelerator)."""
    gpu = assessment.server.gpu
    return assessment.gpu is None and (gpu is None or (gpu.vendor == "nvidia" and not gpu.type))


def check_all(assessments, ctx):
    short = sum(1 for a in assessments if _gpu_unknown(a)) >= SHORT_FROM
    for assessment in assessments:
        finding = _note(assessment, ctx, short)
        if finding is not None:
            yield finding


def _note(assessment, ctx, short: bool):
    server = assessment.server
    gpu = server.gpu
    vendor = gpu.vendor if gpu is not None else "nvidia"
    unchecked = list(server.unchecked)
    also = (" Not read either: " + "; ".join(unchecked)) if unchecked else ""
    if vendor != "nvidia":
        what = VENDOR_NAMES.get(vendor, f"{vendor} accelerator")
        evidence = f" ({gpu.evidence})" if gpu.evidence else ""
        return ctx.finding(
            assessment,
            f"memory not checked: this server runs on {'an' if what[0] in 'AEIOU' else 'a'} {what}{evidence}, and "
            "vramlint budgets NVIDIA GPUs only (vLLM's CUDA path). Rules that need no budget (unknown arguments, "
            "parallel sizes, shared memory) still apply." + also,
            arg_location(server, "gpu"),
        )
    missing: list[str] = []
    adds: list[str] = []  # what to add to the configuration
    ways: list[str] = []  # other ways to fix it
    location = None
    others = list(assessment.unresolved)
    if not server.model:
        no_args = next((u for u in unchecked if "no command or args" in u), None)
        if no_args is not None:
            unchecked.remove(no_args)
            also = (" Not read either: " + "; ".join(unchecked)) if unchecked else ""
            missing.append(no_args)
        else:
            missing.append("the server names no model (`vllm serve MODEL` or --model)")
        others = [u for u in others if not u.startswith("model")]
        location = server.location
    elif assessment.model is None:
        item = next((u for u in others if u.startswith("model")), None)
        others = [u for u in others if u is not item]
        what, model_adds, model_ways = _model_reason(server.model, (item or "").split(": ", 1)[-1] or "not resolved")
        missing.append(f"model {server.model!r} {what}")
        adds += model_adds
        ways += model_ways
        location = arg_location(server, "model")
    if assessment.gpu is None:
        item = next((u for u in others if u.startswith("GPU")), None)
        others = [u for u in others if u is not item]
        if _gpu_unknown(assessment):
            missing.append("the GPU type is unknown" if short else
                           "the GPU type is unknown (no node selector, affinity, instance type or GPU product label)")
            adds.append(GPU_FIX)
            ways.append("pass --gpu L4")
        elif item:
            what, _, fix = item.partition("; ")
            missing.append(what)
            if fix:
                ways.append(fix)
        location = location or arg_location(server, "gpu")
    missing.extend(others)  # a budget that could not be computed, ...
    if not missing:
        if not unchecked:
            return None
        return ctx.finding(assessment, "partly checked: " + "; ".join(unchecked), server.location)
    message = "memory not checked: " + (", and ".join(missing) if len(missing) <= 2 else "; ".join(missing))
    fix = f"add {' and '.join(adds)} to .vramlint.yaml" if adds else ""
    if ways:
        fix = f"{fix}, or {' or '.join(ways)}" if fix else " or ".join(ways)
    if fix:
        message += f". To check it, {fix}"
    return ctx.finding(assessment, message + "." + also, location or server.location)
