"""What a server needs of a GPU it does not name: its budget on every catalog GPU.

Most deployments ask for ``nvidia.com/gpu: 1`` and let the cluster choose. The start-up budget still decides
where such a server can run, so it is computed with the same code (:func:`vramlint.budget.compute_budget`) on
each GPU of the catalog: which GPUs it starts on, why it does not start on the others (memory, compute
capability, bf16 support, quantization kernels), and the smallest total memory per GPU with which it starts.
That total is vLLM's own start-up condition solved for the total: the budget is linear in it, so

    total x gpu_memory_utilization >= weights + non-torch + activation peak + CUDA graphs + KV of one request

with the terms of the GPU's own budget (activation peak and weight layout may differ between GPU
generations; the smallest total over the GPUs whose other checks pass is reported). Start-up failures that
hold on every catalog GPU (a max_model_len above the model's, weights larger than the largest GPU, a flag the
release refuses) are errors whatever GPU the pods land on.
"""

from __future__ import annotations

import math
from dataclasses import replace

from vramlint import gpus as gpu_catalog
from vramlint import versions
from vramlint.budget import compute_budget
from vramlint.budget.common import sizing_args
from vramlint.model import Budget, GpuRequirement, ModelInfo, Server

# Distinct GPU requirements computed in one run (each is a budget on every catalog GPU, ~3 ms): a run past this
# (8,215 compose services with 4,096 distinct --max-model-len: 31.8 CPU-s) says which servers were not sized
# instead (VRL011). Servers whose settings repeat one already computed still get it. 128 left 9 servers of the
# 587 wild benchmark files, scanned in one run as a checkout is, unsized (they need fewer than 256); 512 made the
# large values and compose cases of benchmarks/large_inputs.py (about 530 distinct requirements) cost 7.7 and 5.5
# CPU-s, 256 5.2 and 3.8.
MAX_REQUIREMENTS = 256

# Start-up failures that more memory per GPU removes.
MEMORY_CODES = frozenset({"weights-exceed-gpu", "no-cache-memory", "kv-cache-below-max-model-len",
                          "free-below-requested"})
# What a GPU lacks, said in a few words (the budget's errors carry vLLM's full text).
_WHY_NOT = {
    "weights-exceed-gpu": "the weights do not fit",
    "no-cache-memory": "no memory left for the KV cache",
    "kv-cache-below-max-model-len": "one max_model_len request does not fit in the KV cache",
    "free-below-requested": "gpu_memory_utilization leaves less than the CUDA context needs",
    "bf16-unsupported": "no bfloat16",
    "quantization-unsupported": "quantization kernels need a newer GPU",
    "quantization-dtype": "the quantization kernels need float16",
}


def gpu_requirement(model: ModelInfo, server: Server, version: str, gpu_count: int,
                    sources: dict[str, str] | None = None,
                    draft: tuple[ModelInfo | None, str | None] | None = None,
                    cache: dict[str, GpuRequirement] | None = None) -> GpuRequirement | None:
    """The budget of ``server`` on every catalog GPU, summarised (see the module docstring). ``cache``: one
    run's requirements, by model and settings (replicas of one chart and values overlays need the same); with
    it, None once it holds `MAX_REQUIREMENTS` and these settings are not among them (not computed)."""
    vendor = _vendor(server)
    key = requirement_key(model, server, version, gpu_count, draft)
    if cache is not None and key is not None and key in cache:
        return cache[key]
    if cache is not None and len(cache) >= MAX_REQUIREMENTS:
        return None
    budgets: list[Budget] = []
    # GPUs alike in everything the budget reads get the same budget: memory, compute capability, bf16 / fp8,
    # SM count and L2 (profile buffers), and what vLLM's scheduler defaults read from the name (an A800 is not
    # an A100 there, although it has the A100's memory)
    same: dict[tuple, Budget] = {}
    for spec in gpu_catalog.catalog_specs(vendor):
        kind = (spec.total_gib, spec.compute_capability, spec.bf16, spec.fp8, spec.vendor, spec.compute_units,
                spec.l2_cache_mib, versions.device_name_traits(spec.name))
        if kind in same:
            budgets.append(replace(same[kind], gpu=spec.name))
            continue
        same[kind] = compute_budget(model, spec, server.args, server.env, version, gpu_count,
                                   image=server.image, sources=dict(sources or {}), draft=draft)
        budgets.append(same[kind])
    auto_fit = str(server.args.get("max_model_len")).strip().lower() in ("auto", "-1")
    requirement = summarise(budgets, auto_fit=auto_fit)
    if cache is not None and key is not None:
        cache[key] = requirement
    return requirement


def _vendor(server: Server) -> str:
    # an AMD server is sized on AMD GPUs, any other on NVIDIA's (the catalog's only other vendor)
    return "amd" if server.gpu is not None and server.gpu.vendor == "amd" else "nvidia"


def requirement_key(model: ModelInfo, server: Server, version: str, gpu_count: int,
                    draft: tuple[ModelInfo | None, str | None] | None = None) -> str | None:
    """What `gpu_requirement` caches a requirement by: everything its budgets read (None: not to be cached)."""
    return _settings_key([model.name, model.source, sizing_args(server.args), server.env, version, gpu_count,
                          server.image, draft[0].name if draft and draft[0] else None, _vendor(server)])


# json's C encoder for `_settings_key`, made once: json.dumps makes one for every call (most of its 8 us on a
# server's settings, asked once per server: 20,000 model entries of a values file)
_KEY_ENCODER: list = []


def _settings_key(settings: list) -> str | None:
    """``json.dumps(settings, sort_keys=True, default=str)``, the same text; None for what it refuses."""
    import json

    if not _KEY_ENCODER:
        from json.encoder import c_make_encoder, encode_basestring_ascii

        _KEY_ENCODER.append(None if c_make_encoder is None else lambda: c_make_encoder(
            {}, str, encode_basestring_ascii, None, ": ", ", ", True, False, True))
        _KEY_ENCODER.append(_KEY_ENCODER[0]() if _KEY_ENCODER[0] else None)
    encode = _KEY_ENCODER[1]
    try:
        if encode is None:
            return json.dumps(settings, sort_keys=True, default=str)
        return "".join(encode(settings, 0))
    except (TypeError, ValueError):
        if encode is not None:
            _KEY_ENCODER[1] = _KEY_ENCODER[0]()  # its marks of the values being written are left set
        return None
    except RecursionError:
        if encode is not None:
            _KEY_ENCODER[1] = _KEY_ENCODER[0]()
        raise


def summarise(budgets: list[Budget], auto_fit: bool = False) -> GpuRequirement:
    """A :class:`GpuRequirement` from the budgets of one server on GPUs in ascending memory order. ``auto_fit``:
    `--max-model-len auto`, with which vLLM fits the context to the KV cache left instead of refusing to start."""
    codes = [{str(e.get("code")) for e in b.errors} for b in budgets]
    everywhere = set.intersection(*codes) if codes else set()
    largest = budgets[-1]
    # what fails whatever the GPU: not memory, or weights larger than the largest GPU there is
    errors = [e for e in largest.errors if e.get("code") in everywhere
              and (e.get("code") not in MEMORY_CODES or e.get("code") == "weights-exceed-gpu")]
    fits = [b.gpu for b in budgets if b.starts]
    does_not_fit = [b.gpu for b in budgets if not b.starts]
    why_not = {b.gpu: _why_not(b) for b in budgets if not b.starts}
    # the memory need, on GPUs whose other checks (compute capability, dtype, kernels) pass
    usable = [b for b, c in zip(budgets, codes, strict=True) if c <= MEMORY_CODES | everywhere] or budgets
    smallest = min(usable, key=lambda b: _memory_need(b, auto_fit))  # its terms add up to the requirement
    need = _memory_need(smallest, auto_fit)
    impossible = any(e.get("code") not in MEMORY_CODES for e in errors)
    reference = next((b for b in budgets if b.starts), None) or smallest
    return GpuRequirement(
        min_total_gib=None if impossible else math.ceil(need * 10 - 1e-6) / 10,
        fits=fits,
        does_not_fit=does_not_fit,
        why_not=why_not,
        max_model_len=reference.max_model_len,
        gpus_per_engine=reference.gpus,
        gpu_memory_utilization=reference.gpu_memory_utilization,
        vllm_version=reference.vllm_version,
        needs={"weights": smallest.weights_gib, "non_torch": smallest.non_torch_gib,
               "activation": smallest.activation_gib, "cudagraph": smallest.cudagraph_gib,
               "runner_state": smallest.runner_state_gib,
               "one_request_kv": round(smallest.one_request_kv_gib, 2)},
        errors=errors,
        reference=reference,
    )


def _memory_need(b: Budget, auto_fit: bool = False) -> float:
    """The smallest total (GiB) with which this budget's memory checks pass: vLLM's start-up condition solved
    for the total (the other terms do not depend on it). With ``auto_fit`` any KV cache starts (vLLM shortens
    the context to what it holds), so one full-length request is not part of the need."""
    util = b.gpu_memory_utilization or 1.0
    fixed = b.weights_gib + b.non_torch_gib + b.activation_gib + b.cudagraph_gib + b.runner_state_gib
    if "kv_cache_memory_bytes" in (b.sources.get("kv_cache") or "") or "--kv-cache-memory-bytes" in (
            b.sources.get("kv_cache") or ""):
        # the KV cache is given in bytes: utilisation is not used; the weights and the cache must fit in the total
        need = fixed + b.kv_cache_gib
    else:
        need = (fixed + (0.01 if auto_fit else max(b.one_request_kv_gib, 0.01))) / util
    if b.measured_kv:
        # vLLM 0.34+'s extensible KV cache (measure_kv_cache_bytes): min(total x utilisation - resident, total -
        # uncounted - resident - margin) - reserve must hold one request and the null block
        m = b.measured_kv
        one = (0.01 if auto_fit else max(b.one_request_kv_gib, 0.01)) + b.kv_bytes_per_token * b.block_size / 2**30
        need = max(need, (m["resident"] + m["reserve"] + one) / util,
                   m["uncounted"] + m["resident"] + m["margin"] + m["reserve"] + one)
    need = max(need, b.weights_gib)
    if any(e.get("code") == "free-below-requested" for e in b.errors) and util < 1:
        need = max(need, 0.25 / (1 - util) + 0.01)  # the CUDA context must fit beside the requested share
    return need


def _why_not(b: Budget) -> str:
    first = b.errors[0] if b.errors else {}
    code = str(first.get("code"))
    if code == "compute-capability-unsupported":
        return f"compute capability too old for vLLM {b.vllm_version}"
    return _WHY_NOT.get(code) or str(first.get("message") or "does not start").split(". ")[0][:120]


def describe(fits: list[str], does_not_fit: list[str], why_not: dict[str, str] | None = None) -> str:
    """A few names for a message, cloud GPUs first, grouped by memory: "fits L40S, A100-40GB and larger; not T4,
    L4, A10G"; GPUs that fail for another reason than memory (compute capability, bf16) are said apart."""
    specs = gpu_catalog.catalog_specs(None)
    total = {s.name: s.total_gib for s in specs}
    amd = {s.name for s in specs if s.vendor == "amd"}
    # NVIDIA GPUs of cloud instance types are named first; AMD's few parts are all named
    cloud = gpu_catalog.cloud_names() if not set(fits + does_not_fit) <= amd else frozenset(fits + does_not_fit)
    why_not = why_not or {}
    memory_reasons = {_WHY_NOT[c] for c in MEMORY_CODES}

    def pick(names: list[str]) -> list[str]:
        return sorted((n for n in names if n in cloud), key=lambda n: (total.get(n, 0), n)) or \
            sorted(names, key=lambda n: (total.get(n, 0), n))

    short = [n for n in does_not_fit if why_not.get(n, next(iter(memory_reasons))) in memory_reasons]
    other: dict[str, list[str]] = {}
    for name in does_not_fit:
        if name not in short:
            other.setdefault(why_not[name], []).append(name)
    fit, unfit = pick(fits), [n for n in pick(short) if n in cloud]
    parts = []
    if fit:
        if len(fit) <= 2:
            parts.append("fits " + ", ".join(fit))
        else:
            larger_unfit = [n for n in unfit if total.get(n, 0) > total.get(fit[1], 0)]
            tail = " and larger" if not larger_unfit else f" and {len(fit) - 2} more"
            parts.append("fits " + ", ".join(fit[:2]) + tail)
    else:
        parts.append("fits no GPU in vramlint's catalog")
    if unfit:
        if len(unfit) <= 3:
            parts.append("not " + ", ".join(unfit))
        else:
            smaller_fit = [n for n in fit if total.get(n, 0) < total.get(unfit[-3], 0)]
            tail = " or smaller" if not smaller_fit else f" and {len(unfit) - 3} more"
            parts.append("not " + ", ".join(unfit[-3:]) + tail)
    for reason, names in other.items():
        shown = [n for n in pick(names) if n in cloud]  # the JSON lists them all; a message names cloud GPUs
        if shown:
            parts.append(f"not {', '.join(shown)} ({reason})")
    return "; ".join(parts)
