"""A server whose memory budget could not be checked: unknown model, GPU, or a non-NVIDIA accelerator.

vramlint needs the model's architecture (its `config.json`) and the GPU to compute the budget vLLM will
compute. When either cannot be resolved from the deployment files (a local model path, a private model
without Hub access, a GPU named nowhere in the manifest), the memory rules skip the server. This note
says so, and what to add so that the server is checked: a model alias (`model-aliases` in the
configuration, mapping the served path or name to a Hub id or a local config.json), the GPU (a
`nodeSelector` such as `nvidia.com/gpu.product`, `--gpu` on the command line, or `gpu` in the
configuration), or the vLLM version (`vllm-version`).

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


def _location_for(server, text: str):
    lowered = text.lower()
    if lowered.startswith("model") or "config.json" in lowered:
        return arg_location(server, "model")
    if lowered.startswith("gpu") or "accelerator" in lowered:
        return arg_location(server, "gpu")
    return server.location


def check(assessment, ctx):
    server = assessment.server
    gpu = server.gpu
    vendor = gpu.vendor if gpu is not None else "nvidia"
    if vendor != "nvidia":
        what = VENDOR_NAMES.get(vendor, f"{vendor} accelerator")
        evidence = f" ({gpu.evidence})" if gpu.evidence else ""
        yield ctx.finding(
            assessment,
            f"not checked: this server runs on {'an' if what[0] in 'AEIOU' else 'a'} {what}{evidence}, and vramlint budgets only NVIDIA GPUs "
            "(vLLM's CUDA path), so its memory, context length and concurrency are not checked. Rules that do "
            "not need the budget (unknown arguments, parallel sizes, shared memory) still apply",
            arg_location(server, "gpu"),
        )
    for item in assessment.unresolved:
        if vendor != "nvidia" and item.startswith("GPU vendor"):
            continue  # said above, with what it means
        yield ctx.finding(assessment, f"not checked: {item}", _location_for(server, item))
