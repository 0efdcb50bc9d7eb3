"""max_num_seqs is left at its default, above the number of typical requests the KV cache can hold.

vLLM admits up to `--max-num-seqs` requests into a batch (256 by default; 1024 on 70 GiB-class GPUs other
than A100 in vLLM 0.8.5+). Each running request keeps its tokens in the KV cache, and the cache holds a
fixed number of tokens. When the admitted requests grow past that, vLLM preempts some of them (it frees
their KV blocks and recomputes them later), which shows as latency spikes and the warning
"Sequence group ... is preempted by PreemptionMode.RECOMPUTE" (V0) or a rising `num_preemptions` metric (V1).

The rule fires when `--max-num-seqs` is not set and the KV cache holds fewer requests of typical length
than the default admits. Typical length is the traffic profile's `p99-context-tokens` when configured,
else the `typical-context-tokens` option. With the traffic profile's `peak-concurrent-requests`, it fires
when that peak does not fit in the cache (and stays quiet when it does, since the default is then never
reached); without it, when the default admits at least `overcommit-ratio` times as many requests as the
cache holds. The fix is to set
`--max-num-seqs` to what the cache holds (or to give the engine more KV cache).

Failing example (default max_num_seqs, 256, on a 24 GB GPU whose KV cache holds far fewer requests):

```yaml
args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
```

Passing example (bounded to what the cache holds):

```yaml
args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192", "--max-num-seqs", "16"]
```
"""

from __future__ import annotations

import math

from vramlint.rule import arg_location, concurrency_at, gib, times, tokens

ID = "VRL002"
NAME = "max-num-seqs-over-kv-capacity"
LEVEL = "warning"
OPTIONS = {
    "typical_context_tokens": 4096,  # prompt + output tokens of a typical request, without a traffic profile
    "overcommit_ratio": 2.0,  # without a peak in the traffic profile: fire when the default admits this many
    # times more requests than the cache holds
}


def check(assessment, ctx):
    server, budget = assessment.server, assessment.budget
    if budget is None or not budget.starts or "max_num_seqs" in server.args:
        return
    p99 = ctx.p99_context_tokens
    typical = p99 or int(ctx.options["typical_context_tokens"])
    typical = min(typical, budget.max_model_len) if budget.max_model_len else typical
    if typical <= 0:
        return
    capacity = concurrency_at(budget, typical)
    held = math.floor(capacity)
    if budget.max_num_seqs <= held:
        return
    peak = ctx.peak_concurrent_requests
    if peak is not None:
        if peak <= held:
            return
    elif budget.max_num_seqs < ctx.options["overcommit_ratio"] * max(capacity, 1e-9):
        return
    source = (
        f"the traffic profile's p99 context, {typical:,} tokens"
        if p99
        else f"typical-context-tokens {typical:,} (set traffic p99-context-tokens for your traffic)"
    )
    peak_text = f" (the traffic profile's peak is {peak} concurrent requests)" if peak else ""
    message = (
        f"max_num_seqs is not set, so vLLM {budget.vllm_version} admits up to {budget.max_num_seqs} "
        f"requests at once{peak_text}, but the KV cache ({gib(budget.kv_cache_gib)}, "
        f"{tokens(budget.kv_tokens)} tokens) holds {times(capacity)} requests of {source}: past "
        f"{max(held, 1)} running requests vLLM preempts and recomputes them, a latency spike for each. "
        f"Set --max-num-seqs {max(held, 1)}, or give the engine more KV cache"
    )
    yield ctx.finding(assessment, message, arg_location(server, "max_num_seqs"))
