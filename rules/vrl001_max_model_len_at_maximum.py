"""max_model_len is left at the model's maximum context, so few full-length requests fit in the KV cache.

When `--max-model-len` is not set, vLLM uses the longest context the model supports (131072 tokens for
Llama-3.1, for example); setting it to that maximum explicitly does the same. vLLM pre-allocates the KV
cache from the memory left after weights and activations, so the memory used does not change with
`max_model_len`; what changes is how many requests of that length fit at once (vLLM logs it as
"Maximum concurrency for N tokens per request"). A long context also lets one request take a large share
of the cache, which preempts the others.

The rule fires when the context is at the maximum and the KV cache holds fewer full-length requests than
`min-concurrency` (or than the traffic profile's `peak-concurrent-requests`, when configured). The message
gives the concurrency now and at a suggested value: the traffic profile's `p99-context-tokens` rounded up
to a multiple of `round-to`, else `suggested-max-model-len`. Requests longer than `max_model_len` are
rejected by vLLM, so choose a value above the longest request you must serve.
When the command line has a word known only at run time (`$EXTRA_ARGS`, a template) and no `--max-model-len`,
that word may set it: the finding is then a note saying so.

Fix (unsafe: a shorter context rejects longer requests): `--max-model-len` set to the suggested value,
where it is written, or added after the last argument when it is not (Kubernetes args, compose `command:`);
in Helm values that do not set it yet there is no edit, and the fix says so.

Failing example (the context is the model's 131072 tokens):

```yaml
containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.2
    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
    resources: {limits: {nvidia.com/gpu: 1}}
```

Passing example (a context sized to the traffic):

```yaml
containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.2
    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "16384"]
    resources: {limits: {nvidia.com/gpu: 1}}
```

What vramlint prints for `tests/rules/fixtures/vrl001/fail_unset.yaml`, and the edit of its fix (`--diff` --unsafe-fixes):

<!-- output: vramlint check tests/rules/fixtures/vrl001/fail_unset.yaml --select VRL001 -->
```text
VRL001 [warning] --max-model-len is not set: the model's maximum, 131,072 tokens, fits 3.40x in the KV cache, fewer than 8
  --> tests/rules/fixtures/vrl001/fail_unset.yaml:16:11
   |
16 |         - name: vllm
   |           ^^^^^^^^^^
   = note: The KV cache is 54.32 GiB (445,008 tokens): 3.40x requests of 131,072 tokens, fewer than 8. Set
           --max-model-len 8192 (or the longest request you serve; set p99-context-tokens under traffic in
           .vramlint.yaml for a value from your traffic): the cache then holds 54.32x requests of that length.
           vLLM pre-allocates the KV cache, so the memory used stays the same; requests longer than
           max_model_len are rejected
   = help: set --max-model-len 8192: the KV cache then holds 54.32x requests of that length; longer requests
           are rejected (unsafe fix: --fix --unsafe-fixes applies it)

Found 1 finding (1 warning) in 1 server, 1 file. 1 fixable with --fix --unsafe-fixes (--diff --unsafe-fixes shows them).
```

<!-- output: vramlint check tests/rules/fixtures/vrl001/fail_unset.yaml --select VRL001 --diff --unsafe-fixes -->
```text
--- a/tests/rules/fixtures/vrl001/fail_unset.yaml
+++ b/tests/rules/fixtures/vrl001/fail_unset.yaml
@@ -18,6 +18,8 @@
           args:
             - --model
             - "meta-llama/Llama-3.1-8B-Instruct"
+            - "--max-model-len"
+            - "8192"
           resources:
             limits:
               nvidia.com/gpu: 1
```
"""

from __future__ import annotations

import math

from vramlint.rule import arg_location, as_int, concurrency_at, gib, rebudget, times, tokens

ID = "VRL001"
NAME = "max-model-len-at-maximum"
LEVEL = "warning"
OPTIONS = {
    "min_concurrency": 8,  # fire when fewer full-length requests than this fit (no traffic profile)
    "suggested_max_model_len": 8192,  # the value suggested when no p99 context is configured
    "round_to": 1024,  # a suggestion from the p99 context is rounded up to a multiple of this
}


def check(assessment, ctx):
    server, model, budget = assessment.server, assessment.model, assessment.budget
    if model is None or budget is None or not budget.starts:
        return  # unresolved: VRL010; will not start: VRL005
    maximum = model.max_position_embeddings
    if not maximum:
        return
    if "max_model_len" in server.args:
        value = as_int(server.args["max_model_len"])
        if value is None or value < maximum:
            return  # unknown statically, auto-fit (-1), or tuned below the maximum
        head = f"--max-model-len {value:,} is the model's maximum"
    elif server.opaque_args is not None:
        # `$EXTRA_ARGS` may set it: said as what the written arguments leave, and only as a note
        at = f" (line {server.opaque_args.line})" if server.opaque_args.line else ""
        head = (f"--max-model-len is not among the arguments written (a word known only at run time{at} may set "
                f"it): the model's maximum, {maximum:,} tokens,")
    else:
        head = f"--max-model-len is not set: the model's maximum, {maximum:,} tokens,"
    current_len = budget.max_model_len
    current = budget.max_concurrency
    threshold = ctx.peak_concurrent_requests or ctx.options["min_concurrency"]
    if current >= threshold:
        return

    p99 = ctx.p99_context_tokens
    if p99:
        step = max(1, int(ctx.options["round_to"]))
        suggested = math.ceil(p99 / step) * step
        reason = f"your p99 context, {p99:,} tokens, rounded up"
    else:
        suggested = int(ctx.options["suggested_max_model_len"])
        reason = "or the longest request you serve; set p99-context-tokens under traffic in .vramlint.yaml for a " \
                 "value from your traffic"
    if suggested >= current_len:
        return  # the traffic needs the whole context: nothing better to suggest
    after = rebudget(assessment, max_model_len=suggested)
    if after is not None and after.starts:
        suggested_concurrency = after.max_concurrency
    else:
        suggested_concurrency = concurrency_at(budget, suggested)
    who = (
        f"your traffic profile's peak of {threshold} concurrent requests"
        if ctx.peak_concurrent_requests
        else f"{threshold}"
    )
    headline = (f"{head} fits {times(current)} in the KV cache, fewer than "
                + (f"the traffic peak of {threshold}" if ctx.peak_concurrent_requests else f"{threshold}"))
    detail = (
        f"the KV cache is {gib(budget.kv_cache_gib)} ({tokens(budget.kv_tokens)} tokens): {times(current)} requests "
        f"of {current_len:,} tokens, fewer than {who}. Set --max-model-len {suggested} ({reason}): the cache then "
        f"holds {times(suggested_concurrency)} requests of that length. vLLM pre-allocates the KV cache, so the "
        "memory used stays the same; requests longer than max_model_len are rejected"
    )
    location = arg_location(server, "max_model_len")
    from vramlint.fixes import advice, make_fix

    if after is not None and after.starts:
        fix = make_fix(f"set --max-model-len {suggested}: the KV cache then holds {times(suggested_concurrency)} "
                       "requests of that length; longer requests are rejected", False,
                       [(server, "max_model_len", suggested)])
    else:
        fix = advice(f"set --max-model-len {suggested}", "vramlint cannot compute the budget at that length")
    yield ctx.finding(assessment, headline, location, fix=fix, detail=detail,
                      level="note" if "max_model_len" not in server.args and server.opaque_args is not None else None)
