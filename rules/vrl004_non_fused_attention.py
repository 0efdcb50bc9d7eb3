"""An attention backend is forced to a slow path, or the GPU cannot run FlashAttention.

vLLM picks the fastest attention kernel the GPU runs: FlashAttention (FLASH_ATTN) from compute capability
8.0 (A100, A10G, L4, RTX 30/40, H100), FlashInfer on Blackwell. Forcing another backend with the
`VLLM_ATTENTION_BACKEND` environment variable (read up to vLLM 0.14; ignored from 0.15) or
`--attention-backend` (vLLM 0.13+) to one in `slow-backends` makes every request slower; TORCH_SDPA is
a CPU path, and XFORMERS / FLEX_ATTENTION are fallbacks meant for GPUs that lack FlashAttention
(TRITON_ATTN is left out of the defaults: vLLM itself picks it for models with attention sinks, such as
gpt-oss, on non-Hopper GPUs). That is a warning on a GPU that runs FlashAttention.

Forcing FLASH_ATTN on a GPU below compute capability 8.0 (T4, V100) is also reported: vLLM 0.11+
refuses to start ("Selected backend FLASH_ATTN is not valid for this configuration"), older versions
silently fall back.

On a GPU below compute capability 8.0 the rule adds a note saying which backend vLLM uses there instead
(XFORMERS with the V0 engine; FLEX_ATTENTION in V1 0.10.2; FlashInfer when installed, else TRITON_ATTN,
in 0.11+), so that slower prefill on T4/V100 is expected rather than a surprise. Set `note-unfused-gpu`
to false to silence that note.

Failing example (forcing XFORMERS on an H100):

```yaml
env:
  - {name: VLLM_ATTENTION_BACKEND, value: XFORMERS}
nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
```

Passing example (vLLM's own choice, FLASH_ATTN on an H100):

```yaml
env:
  - {name: HF_HOME, value: /models}
nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
```
"""

from __future__ import annotations

import json

from vramlint.rule import arg_location, version_tuple

ID = "VRL004"
NAME = "non-fused-attention"
LEVEL = "warning"
OPTIONS = {
    "slow_backends": [
        "TORCH_SDPA",
        "XFORMERS",
        "XFORMERS_VLLM_V1",
        "FLEX_ATTENTION",
    ],
    "note_unfused_gpu": True,
}

ENV = "VLLM_ATTENTION_BACKEND"
FLASH_ATTENTION_MIN_CC = (8, 0)


def forced_backend(server, version: tuple[int, ...] | None):
    """(backend, where it was set, how it was set) or None. The flag wins over the environment variable."""
    for dest in ("attention_backend",):
        value = server.args.get(dest)
        if isinstance(value, str) and value:
            return value.upper(), arg_location(server, dest), "--attention-backend"
    config = server.args.get("attention_config")
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            config = None
    if isinstance(config, dict) and isinstance(config.get("backend"), str):
        return config["backend"].upper(), arg_location(server, "attention_config"), "--attention-config"
    value = server.env.get(ENV)
    if isinstance(value, str) and value:
        if version is not None and version >= (0, 15):
            return None  # vLLM 0.15+ no longer reads the variable
        return value.upper(), arg_location(server, ENV), ENV
    return None


def fallback_backend(engine: str | None, version: tuple[int, ...] | None, cc: tuple[int, int]) -> str:
    if engine == "v0" or (version is not None and version < (0, 10, 2)):
        return "XFORMERS"
    if version is not None and version < (0, 11):
        return "FLEX_ATTENTION"
    if cc < (7, 5) or (version is not None and version >= (0, 33)):
        return "TRITON_ATTN"
    return "FLASHINFER when installed, else TRITON_ATTN"


def check(assessment, ctx):
    server, gpu = assessment.server, assessment.gpu
    if gpu is None or gpu.vendor != "nvidia":
        return
    version_text = assessment.vllm_version or (assessment.budget.vllm_version if assessment.budget else None)
    version = version_tuple(version_text)
    cc = tuple(gpu.compute_capability)
    runs_flash = cc >= FLASH_ATTENTION_MIN_CC
    forced = forced_backend(server, version)
    slow = {b.upper() for b in ctx.options["slow_backends"]}
    if forced is not None:
        backend, location, how = forced
        if runs_flash and backend in slow:
            yield ctx.finding(
                assessment,
                f"{how}={backend} forces a non-fused attention backend on {gpu.name}, which runs FlashAttention",
                location,
                detail=f"{gpu.name} has compute capability {cc[0]}.{cc[1]}: every prefill and decode step is slower. "
                f"Remove {how} to let vLLM choose FLASH_ATTN",
            )
        elif not runs_flash and backend.startswith("FLASH_ATTN"):
            consequence = (
                "vLLM 0.11+ refuses to start (Selected backend FLASH_ATTN is not valid for this configuration)"
                if version is None or version >= (0, 11)
                else f"vLLM {version_text} falls back to {fallback_backend(assessment.engine, version, cc)}"
            )
            yield ctx.finding(
                assessment,
                f"{how}={backend} on {gpu.name} (compute capability {cc[0]}.{cc[1]}): FlashAttention needs "
                f"compute capability 8.0 or newer, so {consequence}. Remove {how}",
                location,
            )
        return
    if not runs_flash and ctx.options["note_unfused_gpu"]:
        used = fallback_backend(assessment.engine, version, cc)
        yield ctx.finding(
            assessment,
            f"{gpu.name} (compute capability {cc[0]}.{cc[1]}) cannot run FlashAttention (8.0+), so vLLM "
            f"{version_text or ''} uses {used}: prefill is slower than on an Ampere or newer GPU. Expected on "
            "this GPU; an A10G/L4 or newer runs the fused path",
            arg_location(server, "gpu"),
            level="note",
            shared=True,  # about the GPU, not the line: said once for the servers on it (vramlint.fold)
        )
