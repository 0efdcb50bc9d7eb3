"""vLLM will refuse to start with these settings.

Each start-up check vLLM performs that this deployment fails (no memory left for the KV cache, a
`max_model_len` the KV cache cannot hold even once, a `max_model_len` above the model's maximum,
attention heads that the tensor-parallel size does not divide, bf16 on a GPU without it, ...) is reported
with vLLM's own message and the numbers of the budget that lead to it. So is a command line vLLM's argument
parser rejects before it loads anything: a value outside a flag's choices (`--dtype float8`), a value of the
wrong type or malformed JSON (`--compilation-config '{level: 3}'`), a flag that takes no value given one,
a `sh -c` script with a quote that is never closed (the shell refuses it and runs nothing),
and `--model` with `vllm serve` in the versions that refuse it (0.5.5-0.8.2 when a positional model is also
given, 0.8.3-0.11.0 always; before 0.8.3 the positional model is required), and a GPU older than every
architecture the release's CUDA kernels are built for (a V100 from vLLM 0.20, Pascal cards always). One root
cause is one finding: vLLM stops at the first failure it meets (the free memory at start-up, then loading the
weights, then the KV cache), so weights larger than the GPU are reported once, with "no memory for cache
blocks", which vLLM never reaches, folded into that message; so is a second error on the same line. A memory
check resting on an argument whose value the parser refuses (`--max-model-len "64k tokens"`) is not made: vLLM
stops at the parser, and the budget could read that value only as unset. `VLLM_USE_V1=1` with a `--kv-cache-dtype` the V1 engine of 0.8.0 -
0.10.1.1 does not support (any value on 0.8.0-0.8.1; fp8 off Hopper from 0.8.2, and off B200 too from 0.10)
is vLLM's NotImplementedError, also when the model is not known; a warning when the GPU is not known and the
release accepts it on some GPUs. So is a container that cannot start vLLM at all: options written in
`command` (which replaces the image's entrypoint, so the runtime tries to execute `--model`), or vLLM's own image
with `readOnlyRootFilesystem: true` and no writable volume for the Hugging Face cache (the model download fails
with "Read-only file system"). So is a `--middleware` the API server cannot import once the engine has loaded: a
value with no dot (`build_app` splits it into module and attribute), or a module of vLLM's own package that the
release does not ship (listed whole for `vllm.X` and under `vllm.entrypoints`, from each release's wheel); a module
of another package is not checked. So is a `--quantization` method the release does not have (on the command
line, in a `--config` file or in values an operator turns into flags): argparse's "invalid choice" where the
parser lists the methods (0.4 - 0.8, and 0.9.0, 0.9.1, 0.10.x from the `QuantizationMethods` Literal; upper case
is refused too), `ModelConfig`'s "Unknown quantization method" where it takes any word (0.9.2, 0.11 and later,
which lowercase it), saying which release added or removed the method (each release's `QUANTIZATION_METHODS`, from
its wheel); a warning where only `ModelConfig` checks it and no release has the word, which is no misspelling of a
method either (a vLLM plugin may register it). So is a checkpoint whose architecture (`config.json`
`architectures`) the release's model registry lacks (each release's registry from 0.2.0, read from its wheel by
`tools/gen_vllm_architectures.py`): vLLM's "Model architectures [...] are not supported for now", saying which
release added or last had it, on the model's line; up to 0.6.2 vLLM meets it when it loads the model, after the
worker's bfloat16 check (on a fleet of GPUs each gets the failure it hits first), from 0.6.3 in `ModelConfig`,
before anything else. It is an error only where nothing else can run the architecture: up to 0.7.1, and from
0.5.5 only in vLLM's own images (a plugin in another image may register it); from 0.7.2 vLLM falls back to the
Transformers implementation, which depends on the image's transformers, so the budget says it in a note. With an
assumed version it is a warning. So is a `--quantization` that names another format than the checkpoint's own
`quantization_config` (an AWQ checkpoint with `--quantization gptq` or `fp8`): `ModelConfig._verify_quantization`'s
"Quantization method specified in the model config (awq) does not match ...", on the flag's line, unless one of
vLLM's overrides takes the checkpoint for that flag (`awq_marlin`, `gptq_marlin`, `marlin`, the BitBLAS,
MoE-WNA16, IPEX and Auto* variants; read in the 0.4.3 - 0.34.0 wheels); GPTQ, AWQ, FP8, compressed-tensors,
bitsandbytes and GGUF checkpoints are checked, ModelOpt and MXFP4 ones are not. So is a KV connector (`--kv-transfer-config`, or the one `--kv-offloading-size`
makes) with `PYTORCH_CUDA_ALLOC_CONF` holding `expandable_segments:True`, which `VllmConfig` refuses from 0.21
unless sleep mode (0.21) or the cumem allocator (0.22+: `--enable-cumem-allocator`, or `--enable-sleep-mode`) is
on; the finding sits on the variable, and needs no model. When a word of the command line is known only at run
time (`$EXTRA_ARGS`, a template, a placeholder a later step replaces), the memory failures are warnings ("may not
start"): the word may set --max-model-len, --gpu-memory-utilization or a quantization, and the budget is of the
arguments written. When the image tag does not say the vLLM version, the checks that depend on the
version are made against the newest version vramlint knows and reported as warnings; vLLM's own `:latest` runs
the newest release, so there they are errors. A `--max-model-len` below 1 is checked as each release
does: 0.13 refuses any (pydantic, `gt=0`), 0.14 and later refuse one below -1 and fit -1 (or `auto`) to the KV
cache, earlier releases refuse only `auto`; where a length of 0 (or, before 0.14, a negative one) is taken, it is
a warning, since a server that starts with it refuses every request. The finding sits on the argument the
error names (`--max-model-len`, `--gpu-memory-utilization`, ...), or on the container when that argument
was left at its default.

Why: the pod would crash-loop at start-up (`CrashLoopBackOff`), usually after minutes of downloading and
loading weights. Fixing it in review is cheaper.

Fix (unsafe): for a context the KV cache cannot hold (or above the model's maximum), the largest
`--max-model-len` that starts, in multiples of 1,024 tokens (the traffic profile's p99, rounded up, when that
fits), found by recomputing the budget; for weights that leave no memory for the cache, the smallest
`--gpu-memory-utilization` up to 0.95 that starts. When no single value does it, the fix is advice (more
GPUs, a larger GPU, a quantized model) with no edits.

Failing example (Llama-3.1-8B on a 24 GB A10G, vLLM 0.10.2: its full 131072-token context needs more KV
cache than the memory left after the weights):

```yaml
args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
resources: {limits: {nvidia.com/gpu: 1}}
nodeSelector: {node.kubernetes.io/instance-type: g5.xlarge}
```

Passing example (a context length the KV cache can hold):

```yaml
args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "16384"]
resources: {limits: {nvidia.com/gpu: 1}}
nodeSelector: {node.kubernetes.io/instance-type: g5.xlarge}
```

What vramlint prints for `tests/rules/fixtures/vrl005/fail_long_len.yaml`, and the edit of its fix (`--diff` --unsafe-fixes):

<!-- output: vramlint check tests/rules/fixtures/vrl005/fail_long_len.yaml --select VRL005 -->
```text
VRL005 [error] vLLM 0.10.2 will not start: the KV cache holds 35,456 tokens, fewer than one max_model_len of 65,536
  --> tests/rules/fixtures/vrl005/fail_long_len.yaml:21:15
   |
21 |             - --max-model-len
   |               ^^^^^^^^^^^^^^^
   = note: To serve at least one request with the models's max seq len (65536), (8.00 GiB KV cache is needed,
           which is larger than the available KV cache memory (4.33 GiB). Based on the available memory, the
           estimated maximum model length is 35456. Try increasing `gpu_memory_utilization` or decreasing
           `max_model_len` when initializing the engine. The budget on each L4 (22.03 GiB): 19.83 GiB usable
           at gpu_memory_utilization 0.9, weights 14.99 GiB, activations 0.46 GiB, non-torch 0.05 GiB, CUDA
           graphs 0.00 GiB, KV cache 4.33 GiB (35,456 tokens)
   = help: set --max-model-len 34816 (the KV cache then holds 35,456 tokens); longer requests are then
           rejected (unsafe fix: --fix --unsafe-fixes applies it)

Found 1 finding (1 error) in 1 server, 1 file. Failing: findings at or above error. 1 fixable with --fix --unsafe-fixes (--diff --unsafe-fixes shows them).
```

<!-- output: vramlint check tests/rules/fixtures/vrl005/fail_long_len.yaml --select VRL005 --diff --unsafe-fixes -->
```text
--- a/tests/rules/fixtures/vrl005/fail_long_len.yaml
+++ b/tests/rules/fixtures/vrl005/fail_long_len.yaml
@@ -19,7 +19,7 @@
             - --model
             - "meta-llama/Llama-3.1-8B-Instruct"
             - --max-model-len
-            - "65536"
+            - "34816"
           resources:
             limits:
               nvidia.com/gpu: 1
```
"""

from __future__ import annotations

from vramlint import versions
from vramlint.rule import arg_location, gib, tokens
from vramlint.versions import assumed_caveat, built_from_commit, why_no_version

ID = "VRL005"
NAME = "will-not-start"
LEVEL = "error"
OPTIONS: dict = {}


def check(assessment, ctx):
    yield from _rejected_arguments(assessment, ctx)
    yield from _on_every_gpu(assessment, ctx)
    if assessment.fleet:
        yield from _fleet(assessment, ctx)
        return
    yield from _of_budget(assessment, ctx, assessment.budget)


def verdict(assessment, ctx, budget):
    """This rule's findings on ``budget`` (the server's own, or one of a fleet's): `vramlint explain` says
    "starts" only when there is none, so that it never disagrees with `check`."""
    return [*_rejected_arguments(assessment, ctx), *_on_every_gpu(assessment, ctx),
            *_of_budget(assessment, ctx, budget)]


def _of_budget(assessment, ctx, budget):
    if budget is None:
        yield from _engine_refusals(assessment, ctx)
        yield from _config_refusals(assessment, ctx)
    if budget is None or not budget.errors:
        return
    yield from _budget_errors(assessment, ctx, budget)


def _on_every_gpu(assessment, ctx):
    """What fails whatever GPU the pods land on (the GPU is not named): vLLM's text, from the largest GPU."""
    req = assessment.gpu_requirement
    if req is None or not req.errors:
        return
    server = assessment.server
    refused = _refused_args(server)
    if refused & _BUDGET_INPUTS:
        return  # the requirement rests on a value vLLM refuses before it sizes anything (see _budget_errors)
    for error in req.errors:
        if error.get("code") in ("tp-heads", "tp-kv-heads", "v1-unsupported"):
            continue  # VRL006 reports the heads; _engine_refusals the V1 engine's refusals
        if error.get("arg") in refused:
            continue  # vLLM refuses the value written before it sizes anything (see _budget_errors)
        text = str(error.get("message") or "").strip()
        if text and text[-1] not in ".!?":
            text += "."
        if error.get("code") == "weights-exceed-gpu":
            from vramlint.gpus import catalog_specs

            per_engine = f"{req.gpus_per_engine} GPUs" if req.gpus_per_engine > 1 else "one GPU"
            vendor = "amd" if assessment.server.gpu is not None and assessment.server.gpu.vendor == "amd" else "nvidia"
            text += (f" That is the largest GPU in vramlint's catalog ({catalog_specs(vendor)[-1].name}): the weights do not "
                     f"fit on any GPU at {per_engine} per engine.")
        fix = error.get("fix")
        prefix = f"vLLM {req.vllm_version} will not start on any GPU: "
        headline = _parser_headline(prefix, text.rstrip("."))
        message = prefix + text
        if fix:
            message += f" Fix: {fix.rstrip('.')}."
        arg = error.get("arg")
        where = arg_location(server, arg) if arg else server.location
        if headline == prefix + text.rstrip("."):
            yield ctx.finding(assessment, message, where, fix=_advice(error))
        else:
            yield ctx.finding(assessment, headline, where, fix=_advice(error),
                              detail="It stops with: " + message[len(prefix):])


def _fleet(assessment, ctx):
    """The pods may land on any of several GPUs: each start-up failure once, naming the GPUs it happens on."""
    seen: dict[str, tuple] = {}
    for budget in assessment.fleet:
        for error, _behind in root_causes(budget.errors, assessment.server):
            code = str(error.get("code"))
            if code in seen:
                seen[code][1].append(budget.gpu)
            else:
                seen[code] = (budget, [budget.gpu], error)
    every = [b.gpu for b in assessment.fleet]
    for budget, names, error in seen.values():
        where = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        if len(names) < len(every):
            prefix = f"on {where} (the pods may land on any of {', '.join(every)}): "
        else:
            prefix = f"on every GPU the pods may land on ({where}): "
        yield from _budget_errors(assessment, ctx, budget, errors=[error], prefix=prefix)


def _budget_errors(assessment, ctx, budget, errors=None, prefix=""):
    server = assessment.server
    per_engine = f", {budget.gpus} per engine" if budget.gpus > 1 else ""
    numbers = (
        f"The budget on each {budget.gpu} ({gib(budget.total_gib)}{per_engine}): "
        f"{gib(budget.usable_gib)} usable at gpu_memory_utilization {budget.gpu_memory_utilization:g}, "
        f"weights {gib(budget.weights_gib)}, activations {gib(budget.activation_gib)}, "
        f"non-torch {gib(budget.non_torch_gib)}, CUDA graphs {gib(budget.cudagraph_gib)}, "
        + (f"runner state {gib(budget.runner_state_gib)}, " if budget.runner_state_gib else "")
        + f"KV cache {gib(budget.kv_cache_gib)} ({tokens(budget.kv_tokens)} tokens)"
    )
    refused = _refused_args(server)
    if refused & _BUDGET_INPUTS:
        # vLLM refuses the value written for an argument the budget rests on (the weights' quantization or dtype,
        # the length, the utilization...) before it sizes anything, and the budget could only read that value as
        # unset: its memory checks are of a configuration that never runs, and the refusal is the finding
        return
    for error, behind in root_causes(budget.errors if errors is None else errors, server):
        if error.get("arg") in refused:
            # the budget read this argument as unset, but vLLM's parser refuses the value written and stops
            # there (that refusal is the finding); what the memory checks would say rests on a value never taken
            continue
        location = _error_location(server, error)
        text = _sentence(error.get("message"))
        fix = error.get("fix")
        will_not = f"vLLM {budget.vllm_version} will not start"
        if error.get("version_dependent") and assessment.version_source in ("default", "operator"):
            # the image may run an older release, on which this GPU works
            why = (f"{server.assumed_version_source}; {assumed_caveat(server.assumed_version_source)}"
                   if assessment.version_source == "operator"
                   else f"vramlint's default version; {why_no_version(server.image)}")
            will_not = f"vLLM {budget.vllm_version} (assumed) will not start"
        headline = f"{prefix}{will_not}: {_short(error, budget) or text}"
        detail = [] if headline.endswith(text) else [text]
        if "(assumed)" in will_not:
            detail.insert(0, f"vLLM {budget.vllm_version} is {why}.")
        if fix:
            detail.append(f"Fix: {fix.rstrip('.')}.")
        if behind:
            # vLLM stops at the first failure; what it would hit next is said here, not as findings of its own
            detail.append("vLLM stops here, before its later checks, which these numbers fail too: " + " / ".join(
                _sentence(e.get("message")) for e in behind))
        detail.append(numbers)
        fix_ = (None if errors is not None else memory_fix(assessment, ctx, error)) or _advice(error)
        opaque = server.opaque_args
        if opaque is not None:
            # `$EXTRA_ARGS` may set --max-model-len, --gpu-memory-utilization, a quantization...: the budget is
            # of what is written, and an error must be certain
            at = f" (line {opaque.line})" if opaque.line else ""
            yield ctx.finding(assessment, headline.rstrip(".").replace("will not start", "may not start", 1),
                              location, level="warning", fix=fix_,
                              detail=f"A word of the command line{at} is known only at run time and may set the "
                              "arguments this budget rests on (its numbers are those of the arguments written). "
                              + " ".join(detail))
            continue
        if error.get("version_dependent") and assessment.version_source in ("default", "operator"):
            yield ctx.finding(assessment, headline.rstrip("."), location, level="warning", fix=fix_,
                              detail=" ".join(detail) + ". Set vllm-version in the configuration to check against "
                              "yours")
            continue
        yield ctx.finding(assessment, headline.rstrip("."), location, fix=fix_, detail=" ".join(detail))


def _parser_headline(prefix: str, text: str) -> str:
    """The finding's first line: the parser's message when it fits, else the message up to the last clause break
    outside parentheses and quotes that fits (argparse's "argument --dtype: invalid choice: 'bf16'" without
    "(choose from ...)"), so that the refused word is on the first line and not only "will not start"."""
    from vramlint.model import HEADLINE_WIDTH

    room = HEADLINE_WIDTH - len(prefix)
    lines = text.split("\n")
    if len(lines) >= 3 and "validation error" in lines[0]:
        # pydantic's "1 validation error for SchedulerConfig / max_num_seqs / Input should be ... [type=...]"
        short = f"{lines[0].split(' for ')[-1].strip()}.{lines[1].strip()}: {lines[2].split(' [')[0].strip()}"
        if len(short) <= room:
            return prefix + short
    if len(text) <= room:
        return prefix + text
    depth, quote, cut = 0, None, 0
    for i, ch in enumerate(text[:room + 1]):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"" and (i == 0 or not text[i - 1].isalnum()):
            quote = ch
        elif ch in "([{":
            if ch == "(" and depth == 0 and i and text[i - 1] == " ":
                cut = i - 1
                break  # what follows is an aside: the headline ends before it
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and ch == "." and text[i + 1:i + 2] == " " and text[i + 2:i + 3].isupper():
            cut = i
            break  # the first sentence
        elif depth == 0 and ch in ",;" and text[i + 1:i + 2] == " ":
            cut = i
    if cut >= 40:
        return prefix + text[:cut]
    # no clause break late enough to say what is refused: the first words that fit, and the whole message follows
    space = text.rfind(" ", 0, room - 4)
    return prefix + text[:space].rstrip(" ,;:") + " ..." if space > 0 else prefix + text


# the arguments the budget stages read (a refusal of --model's form, or of an import, leaves the budget's inputs
# as written: its findings are another root cause)
_BUDGET_INPUTS = frozenset((
    "quantization", "dtype", "kv_cache_dtype", "max_model_len", "gpu_memory_utilization", "tensor_parallel_size",
    "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel", "max_num_seqs",
    "max_num_batched_tokens", "block_size", "cpu_offload_gb", "enforce_eager", "compilation_config",
    "optimization_level", "cuda_graph_sizes", "cudagraph_capture_sizes", "max_cudagraph_capture_size",
    "enable_lora", "max_loras", "max_lora_rank", "speculative_config", "kv_offloading_size", "limit_mm_per_prompt",
    "num_gpu_blocks_override", "enable_chunked_prefill", "language_model_only", "skip_mm_profiling",
))


def _refused_args(server) -> set[str]:
    """The arguments whose written value vLLM's parser refuses, or may refuse (``_rejected_arguments`` says which
    and how sure it is): the budget has no value of them it can rest a verdict on."""
    return {str(e["arg"]) for e in server.startup_errors if e.get("arg") and not e.get("shell")}


def _short(error, budget):
    """The failure in a clause with the numbers that prove it, for the finding's headline (None: vLLM's own
    sentence is short enough, or vramlint has no shorter one)."""
    code = error.get("code")
    if code == "kv-cache-below-max-model-len":
        return (f"the KV cache holds {tokens(budget.kv_tokens)} tokens, fewer than one "
                f"max_model_len of {budget.max_model_len:,}")
    if code == "no-cache-memory":
        return (f"no memory left for the KV cache (weights {gib(budget.weights_gib)}, activations "
                f"{gib(budget.activation_gib)}, usable {gib(budget.usable_gib)})")
    if code in ("cudagraph-capture-oom", "sampler-warmup-oom"):
        return error.get("short")
    if code == "weights-exceed-gpu":
        return f"the weights take {gib(budget.weights_gib)} per GPU, more than the {budget.gpu}'s {gib(budget.total_gib)}"
    return error.get("short")


LENGTH_ERRORS = ("kv-cache-below-max-model-len", "max-model-len-above-model")
MEMORY_ERRORS = ("no-cache-memory", "weights-exceed-gpu", "free-below-requested")
STEP = 1024  # a suggested max_model_len is a multiple of this


def memory_fix(assessment, ctx, error):
    """The change that makes the engine start, from its budget (None for errors this rule has no fix for).

    A context that does not fit: the largest multiple of 1,024 tokens that starts (the traffic profile's p99,
    rounded up, when that fits too), unsafe since longer requests are then rejected. No memory left at all: the
    gpu_memory_utilization that starts, up to 0.95, else advice.
    """
    from vramlint.fixes import advice, make_fix
    from vramlint.rule import rebudget

    server, budget, model = assessment.server, assessment.budget, assessment.model
    code = error.get("code")
    if budget is None or model is None:
        return None
    if code in LENGTH_ERRORS:
        limit = budget.kv_tokens if code == "kv-cache-below-max-model-len" else budget.max_model_len
        if code == "max-model-len-above-model" and model.max_position_embeddings:
            limit = min(model.max_position_embeddings, budget.kv_tokens or model.max_position_embeddings)
        length = (limit // STEP) * STEP
        p99 = ctx.p99_context_tokens
        if p99:
            wanted = -(-p99 // STEP) * STEP
            if wanted <= length:
                length = wanted
        # the activation peak (V0: max_num_batched_tokens follows max_model_len) and whole blocks move the KV
        # cache with the length: the largest multiple of STEP that starts, by bisection (starting is monotone)
        best, best_budget = None, None
        low, high = 1, length // STEP
        while low <= high:
            mid = (low + high) // 2
            after = rebudget(assessment, max_model_len=mid * STEP)
            if after is not None and after.starts:
                best, best_budget, low = mid * STEP, after, mid + 1
            else:
                high = mid - 1
        if best is not None:
            changes = [(server, "max_model_len", best)]
            text = f"set --max-model-len {best} (the KV cache then holds {tokens(best_budget.kv_tokens)} tokens)"
            queue = _queue_limit(server, best_budget, ctx)
            if queue:
                changes.append((server, "max_num_seqs", queue))
                text += f" and --max-num-seqs {queue} (what that cache holds, as VRL002 checks)"
            return make_fix(text + "; longer requests are then rejected", False, changes)
        return advice("the KV cache cannot hold even 1,024 tokens: free memory for it (a larger "
                      "gpu_memory_utilization, more GPUs or quantized weights)",
                      "no single value of --max-model-len makes the engine start")
    if code in MEMORY_ERRORS:
        current = budget.gpu_memory_utilization
        for step in range(1, 20):
            util = round(current + 0.01 * step, 2)
            if util > 0.95:
                break
            after = rebudget(assessment, gpu_memory_utilization=util)
            if after is not None and after.starts:
                return make_fix(f"set --gpu-memory-utilization {util:g}: the budget then leaves "
                                f"{gib(after.kv_cache_gib)} for the KV cache; other processes on the GPU get less",
                                False, [(server, "gpu_memory_utilization", util)])
        return advice("the weights and activations do not fit at any gpu_memory_utilization up to 0.95: use more "
                      "GPUs (tensor parallelism), a larger GPU or a quantized model",
                      "no single edit makes this engine start")
    return None


# The memory checks in the order vLLM meets them: the free memory at device start-up (V1 0.9.2+, before
# loading), loading the weights (torch.OutOfMemoryError), then profiling (no memory for cache blocks, then a KV
# cache too small for one max_model_len sequence). vLLM stops at the first, so the later ones are one cause.
MEMORY_CHAIN = ("free-below-requested", "weights-exceed-gpu", "no-cache-memory", "kv-cache-below-max-model-len")


def root_causes(errors, server):
    """``(error, folded)`` pairs: one per root cause, the first failure vLLM would hit, in vLLM's order.

    The memory checks form one chain (see ``MEMORY_CHAIN``): only the first that fails is its own finding. An
    error on the same line as one already reported (a `--max-model-len` above the model's maximum, and a KV
    cache too small for that length) is folded into it too: one line, one finding.
    """
    memory = sorted((e for e in errors if e.get("code") in MEMORY_CHAIN), key=lambda e: MEMORY_CHAIN.index(e["code"]))
    ordered = [e for e in errors if e.get("code") not in MEMORY_CHAIN] + memory[:1]
    out: list[tuple[dict, list[dict]]] = []
    by_line: dict[tuple[str, int], int] = {}
    for error in ordered:
        loc = _error_location(server, error)
        key = (loc.file, loc.line)
        chain = memory[1:] if memory and error is memory[0] else []
        if key in by_line:
            out[by_line[key]][1].extend([error, *chain])
            continue
        by_line[key] = len(out)
        out.append((error, list(chain)))
    return out


def _error_location(server, error):
    """The line an error names: its ``arg`` (a vLLM dest or an environment variable), else the first of ``also``
    the file sets, else the container."""
    names = [n for n in (error.get("arg"), *(error.get("also") or ())) if n]
    return arg_location(server, *names) if names else server.location


def _config_refusals(assessment, ctx):
    """What ``VllmConfig`` refuses from the arguments and environment alone (no model or GPU needed): checked when
    the budget could not be computed (the configuration stage makes the same check when it is)."""
    server = assessment.server
    key = versions.parse_version(assessment.vllm_version)
    if key is None:
        return
    said = list(_model_refusals(assessment, ctx))
    if said:
        yield from said  # ModelConfig is built, and refuses, before VllmConfig's checks run
        return
    error = versions.kv_connector_expandable_segments_refusal(key, server.args, server.env)
    if error is None:
        return
    text = _sentence(error["message"])
    fix = f" Fix: {error['fix'].rstrip('.')}."
    if assessment.version_source in ("default", "operator"):
        why = (f"{server.assumed_version_source}; {assumed_caveat(server.assumed_version_source)}"
               if assessment.version_source == "operator" else
               f"vramlint's default version; {why_no_version(server.image)}")
        yield ctx.finding(assessment, f"vLLM {assessment.vllm_version} (assumed) will not start: {error['short']}",
                          _error_location(server, error), level="warning", fix=_advice(error),
                          detail=f"vLLM {assessment.vllm_version} is {why}. {text}{fix} Set vllm-version in the "
                          "configuration to check against yours")
        return
    yield ctx.finding(assessment, f"vLLM {assessment.vllm_version} will not start: {error['short']}",
                      _error_location(server, error), fix=_advice(error), detail=text + fix)


def _model_refusals(assessment, ctx):
    """The model's own limits (a --max-model-len above its maximum) for a server neither sized on a GPU nor given
    a GPU requirement (an accelerator whose memory vramlint does not model, vLLM's CPU backend): vLLM's ModelConfig
    refuses them before it looks at a device."""
    from vramlint.budget.configuration import model_refusals

    if assessment.model is None or assessment.gpu_requirement is not None or assessment.fleet:
        return
    server = assessment.server
    model = assessment.model
    for error in model_refusals(model, server.args, server.env, assessment.vllm_version):
        # (the refusal is in every release: an assumed version changes only the words of vLLM's message)
        short = (f"--max-model-len {server.args.get('max_model_len')} is above the maximum of {model.name} "
                 f"({model.max_len_key or 'max_position_embeddings'} {model.max_position_embeddings or 2048})")
        yield ctx.finding(assessment, f"vLLM {assessment.vllm_version} will not start: {short}",
                          _error_location(server, error), fix=_advice(error),
                          detail=f"{_sentence(error['message'])} This check is vLLM's model configuration, the "
                          "same on every accelerator; the memory budget is not computed for this one")


# VRL002's defaults (rules/vrl002_max_num_seqs_over_kv_capacity.py): a cache shrunk to fit would raise it
TYPICAL_CONTEXT_TOKENS = 4096
MIN_CONCURRENCY = 4


def _queue_limit(server, budget, ctx):
    """The --max-num-seqs a fix must set too, so that the engine it makes start is not over its cache (VRL002)."""
    from vramlint.rule import max_num_seqs_over_capacity

    if "max_num_seqs" in server.args:
        return None
    options = _vrl002_options(ctx)
    over = max_num_seqs_over_capacity(budget, ctx.p99_context_tokens or options["typical_context_tokens"],
                                      options["min_concurrency"], ctx.peak_concurrent_requests)
    return over[0] if over else None


def _vrl002_options(ctx):
    """VRL002's options as the configuration sets them (by its id or name, `-` or `_`), else its defaults."""
    options = {"typical_context_tokens": TYPICAL_CONTEXT_TOKENS, "min_concurrency": MIN_CONCURRENCY}
    for key in ("max-num-seqs-over-kv-capacity", "VRL002"):  # the id wins, as RuleContext.for_rule reads them
        for name, value in (ctx.rule_options.get(key) or {}).items():
            name = name.replace("-", "_")
            if name in options and isinstance(value, (int, float)) and not isinstance(value, bool):
                options[name] = value
    return options


def _advice(error):
    """What vLLM's refusal says to change, as a fix without edits: which of several changes is for a person."""
    from vramlint.fixes import advice

    text = str(error.get("fix") or "").strip().rstrip(".")
    if not text:
        text = "change the setting vLLM's message names"
    return advice(text, "vramlint does not write this change: it is a choice among several, or a restructuring "
                  "of the command")


def _sentence(text) -> str:
    text = str(text or "").strip()
    if text and text[-1] not in ".!?":
        text += "."
    return text


def _engine_refusals(assessment, ctx):
    """The V1 engine's refusals of 0.8.0 - 0.10.1.1 under VLLM_USE_V1=1, which need no model: checked when the
    budget could not be computed (it makes the same check when it is)."""
    server = assessment.server
    if server.gpu is not None and server.gpu.vendor != "nvidia":
        return
    key = versions.parse_version(assessment.vllm_version)
    if key is None:
        return
    version = assessment.vllm_version
    # an operator's pin, the release installed not known: what holds only for that version is a warning
    pinned = "warning" if assessment.version_source == "operator" else None
    if assessment.gpu is not None:
        _engine, _reason, errors = versions.select_engine(key, tuple(assessment.gpu.compute_capability),
                                                          server.args, server.env)
        for error in errors:
            yield ctx.finding(assessment, f"vLLM {version} will not start on {assessment.gpu.name}: "
                              f"NotImplementedError: {_sentence(error['message'])} Fix: unset VLLM_USE_V1 (vLLM "
                              "then falls back to the V0 engine), or remove the setting it names",
                              arg_location(server, error.get("arg") or ""), level=pinned,
                              fix=_advice({"fix": "unset VLLM_USE_V1, or remove the setting it names"}))
        return
    refusal = versions.v1_forced_kv_cache_refusal(key, server.args, server.env)
    if refusal is None:
        return
    location = arg_location(server, "kv_cache_dtype")
    fix = "Fix: unset VLLM_USE_V1 (vLLM then falls back to the V0 engine), or remove --kv-cache-dtype"
    if not refusal["accepted_on"]:
        yield ctx.finding(assessment, f"vLLM {version} will not start on any GPU: {refusal['message']} {fix}",
                          location, level=pinned, fix=_advice({"fix": fix[len("Fix: "):]}))
    else:
        yield ctx.finding(assessment, f"vLLM {version} will not start unless the pod lands on a "
                          f"{' or a '.join(refusal['accepted_on'])}: {refusal['message']} The file does not say "
                          f"the GPU. {fix}, or pin the pod to such a GPU", location, level="warning",
                          fix=_advice({"fix": fix[len("Fix: "):] + ", or pin the pod to such a GPU"}))


def _rejected_arguments(assessment, ctx):
    """What vLLM's own argument parsing rejects (read by the extractors into ``Server.startup_errors``)."""
    server = assessment.server
    for error in server.startup_errors:
        location = error.get("location") or arg_location(server, error.get("arg") or "")
        advice_ = _advice(error)
        version = error.get("version")
        text = str(error.get("message") or "").strip().rstrip(".")
        fix = f". Fix: {error['fix']}" if error.get("fix") else ""
        if error.get("shell"):
            # the shell refuses the script before vLLM is ever started
            yield ctx.finding(assessment, f"the container will not start: {text}{fix}", location, fix=advice_)
            continue
        if error.get("level") == "warning":
            # what vLLM does depends on something the file does not say; the message says both outcomes
            yield ctx.finding(assessment, f"vLLM {version}: {text}{fix}", location, level="warning",
                              fix=advice_)
        elif error.get("version_known", True) and error.get("code") in ("argparse", "import", "quantization-unknown") \
                and assessment.version_source == "image tag" and built_from_commit(assessment.server.image):
            # a build from a commit past the release (the tag names the commit): its parser may differ
            yield ctx.finding(
                assessment,
                f"vLLM {version} (the tag of {assessment.server.image} names a build from a commit) will not "
                f"start: {text}{fix}. vLLM {version} itself refuses it; a build from a later commit may not",
                location, level="warning", fix=advice_)
        elif error.get("version_known", True):
            headline = _parser_headline(f"vLLM {version} will not start: ", text)
            if headline.endswith(text):
                yield ctx.finding(assessment, f"{headline}{fix}", location, fix=advice_)
            else:
                yield ctx.finding(assessment, headline, location, fix=advice_, detail=f"It stops with: {text}{fix}")
        elif error.get("assumed_by"):
            # checked against the version an operator pins: the release installed may pin another one
            yield ctx.finding(
                assessment,
                f"vLLM {version} ({error['assumed_by']}; {assumed_caveat(error['assumed_by'])}) will not "
                f"start: {text}{fix}. Set vllm-version in the configuration to check against yours",
                location, level="warning", fix=advice_)
        else:
            # checked against the newest version vramlint knows: the image may run another one
            yield ctx.finding(
                assessment,
                f"vLLM {version} (the newest vramlint knows; {why_no_version(assessment.server.image)}) will not start: "
                f"{text}{fix}. Set vllm-version in the configuration to check against yours",
                location,
                level="warning",
                fix=advice_,
            )
