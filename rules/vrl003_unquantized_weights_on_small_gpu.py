"""16-bit weights take most of a small GPU; a quantized model would leave room for the KV cache.

A bf16/fp16 model spends 2 bytes per parameter on weights. When those weights take more than
`max-weight-share` of the memory vLLM may use on each GPU (`gpu_memory_utilization` x total), little is
left for the KV cache, so few requests run at once. The rule says how much memory a quantized version
would free and how many KV-cache tokens that buys, by re-running the memory budget with the quantized
weights, and offers only the methods the GPU runs (minimum compute capability, from vLLM's
`get_min_capability()` of each method):

- AWQ 4-bit (a pre-quantized checkpoint, e.g. `...-AWQ`): compute capability 7.5+ (T4 and newer), run
  with the faster Marlin kernels from 8.0.
- GPTQ 4-bit (a pre-quantized checkpoint): compute capability 6.0+.
- FP8 8-bit (`--quantization fp8` quantizes the bf16 checkpoint at load time, or an `-FP8` checkpoint):
  native W8A8 from compute capability 8.9 (L4, L40S, RTX 40, H100); weight-only through the Marlin
  kernel from 8.0 (A100, A10G, RTX 30); on 7.5 (T4) only from vLLM 0.15.

Quantization changes the model's outputs slightly; evaluate the quantized model before switching. The
rule is quiet for a model that is already quantized or started with `--quantization`.

Failing example (Llama-3.1-8B in bf16 on one 24 GB L4):

```yaml
args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
```

Passing example (an FP8 checkpoint of the same model):

```yaml
args: ["--model", "RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8", "--max-model-len", "8192"]
nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
```
"""

from __future__ import annotations

from vramlint.rule import arg_location, gib, rebudget, tokens, version_tuple

ID = "VRL003"
NAME = "unquantized-weights-on-small-gpu"
LEVEL = "note"
OPTIONS = {
    "max_weight_share": 0.5,  # fire when weights take more than this share of gpu_memory_utilization x total
}

SIXTEEN_BIT = {"bfloat16", "float16", "half", "bf16", "fp16", "auto", "none"}


AWQ = {"method": "awq", "bits": 4, "group": 128, "zero_point": True}
GPTQ = {"method": "gptq", "bits": 4, "group": 128}
FP8 = {"method": "fp8", "bits": 8}  # per-tensor scales, as --quantization fp8 makes them


def methods_for(gpu, version: str | None) -> list[tuple[str, int, str, dict]]:
    """(name, bits, how, quantization facts) for each quantization the GPU runs in this vLLM version."""
    cc = tuple(gpu.compute_capability)
    ver = version_tuple(version) or (0, 0, 0)
    out: list[tuple[str, int, str, dict]] = []
    if cc >= (8, 9):
        out.append(("FP8", 8, "--quantization fp8 or an FP8 checkpoint", FP8))
    elif cc >= (8, 0) or (cc >= (7, 5) and ver >= (0, 15)):
        out.append(("FP8", 8, "--quantization fp8 or an FP8 checkpoint; weight-only on this GPU", FP8))
    if cc >= (7, 5):
        out.append(("AWQ/GPTQ", 4, "a pre-quantized AWQ or GPTQ checkpoint", AWQ))
    elif cc >= (6, 0):
        out.append(("GPTQ", 4, "a pre-quantized GPTQ checkpoint", GPTQ))
    return out


def load_dtype(arg, checkpoint, gpu) -> str:
    """The dtype vLLM loads the weights in: --dtype, else the checkpoint's (bf16 becomes fp16 below CC 8.0)."""
    names = {"half": "float16", "fp16": "float16", "float16": "float16", "bf16": "bfloat16", "bfloat16": "bfloat16"}
    if isinstance(arg, str) and arg.lower() in names:
        return names[arg.lower()]
    if checkpoint == "bfloat16" and not gpu.bf16:
        return "float16"
    return checkpoint or "16-bit"


def quantized_variant(model, quant: dict):
    """The same model with its linear layers quantized as ``quant`` says (embeddings stay 16-bit)."""
    facts = model.extra.get("facts")
    if facts is None:
        return None
    from vramlint.modelconfig import model_info_from_facts

    changed = {k: v for k, v in facts.items() if k not in ("weight_bytes", "weight_bytes_source", "params")}
    changed["quant"] = dict(quant)
    return model_info_from_facts(changed, model.name, model.source)


def check(assessment, ctx):
    server, model, budget, gpu = assessment.server, assessment.model, assessment.budget, assessment.gpu
    if model is None or budget is None or gpu is None:
        return
    if model.quantization or server.args.get("quantization"):
        return
    if "quantization" in server.args and server.args["quantization"] is None:
        return  # set, but unknown statically
    dtype = server.args.get("dtype", model.torch_dtype)
    if str(dtype).lower() not in SIXTEEN_BIT:
        return  # float32 weights are another story (and rare in serving)
    dtype_name = load_dtype(server.args.get("dtype"), model.torch_dtype, gpu)
    if budget.usable_gib <= 0:
        return
    share = budget.weights_gib / budget.usable_gib
    if share <= ctx.options["max_weight_share"]:
        return
    options = []
    seen: dict[str, tuple[float, int]] = {}
    for name, bits, how, quant in methods_for(gpu, budget.vllm_version):
        if name not in seen:
            variant = quantized_variant(model, quant)
            after = rebudget(assessment, model=variant) if variant is not None else None
            if after is None:
                continue
            seen[name] = (budget.weights_gib - after.weights_gib, after.kv_tokens)
        freed, kv_after = seen[name]
        if freed <= 0:
            continue
        if kv_after <= 0:
            # "0 KV-cache tokens instead of 0" read as advice; saying it does not suffice is the fact
            options.append(f"{name} ({bits}-bit) frees {gib(freed)} per GPU, still too little for any KV cache "
                           f"({how})")
        else:
            options.append(
                f"{name} ({bits}-bit) frees {gib(freed)} per GPU, {tokens(kv_after)} KV-cache tokens instead of "
                f"{tokens(budget.kv_tokens)} ({how})"
            )
    if not options:
        return
    message = (
        (f"the KV cache gets {gib(budget.kv_cache_gib)}. " if budget.kv_cache_gib > 0 else
         "no memory is left for the KV cache. ")
        + "Quantized weights leave more for it: "
        + "; ".join(options)
        + ". Check the quantized model's quality before switching"
    )
    headline = (f"{dtype_name} weights take {gib(budget.weights_gib)} of the {gib(budget.usable_gib)} usable on each "
                f"{gpu.name} ({share:.0%}), leaving {tokens(budget.kv_tokens)} KV-cache tokens")
    yield ctx.finding(assessment, headline, arg_location(server, "model"), detail=message)
