"""max_num_seqs is left at its default, far above the number of requests the KV cache can hold.

vLLM admits up to `--max-num-seqs` requests into a batch (256 by default; 1024 on 70 GiB-class GPUs other
than A100 in vLLM 0.8.5+). Each running request keeps its tokens in the KV cache, and the cache holds a
fixed number of tokens. When the admitted requests grow past that, vLLM preempts some of them (it frees
their KV blocks and recomputes them later), which shows as latency spikes and the warning
"Sequence group ... is preempted by PreemptionMode.RECOMPUTE" (V0) or a rising `num_preemptions` metric (V1).

The default is above what the cache holds on most single-GPU deployments, and that is fine as long as the
traffic never gets there, so the rule fires only when it matters:

- with a traffic profile that gives `peak-concurrent-requests`: when that peak is more than the cache
  holds at the profile's `p99-context-tokens` (or `typical-context-tokens`);
- without one: when the cache holds fewer than `min-concurrency` (4) requests of typical length
  (`p99-context-tokens` when configured, else `typical-context-tokens`, 4096). Below about four
  concurrent requests the engine barely batches: any real traffic preempts, and the deployment is sized
  for the weights rather than for serving.

The fix is to set `--max-num-seqs` to what the cache holds, so that extra requests wait in the queue
instead of being preempted, or to give the engine more KV cache (quantized weights, more GPUs, a higher
`--gpu-memory-utilization`).

Fix (safe: only queueing changes, and the budget is recomputed with it): `--max-num-seqs` set to the number
of typical requests the cache holds, added after the last argument in the file's style.

Failing example (Llama-3.1-8B on a 24 GB L4 at gpu_memory_utilization 0.78: the KV cache holds about
three requests of 4096 tokens, and vLLM admits 256):

```yaml
args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "4096",
       "--gpu-memory-utilization", "0.78"]
nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
```

Passing example (bounded to what the cache holds):

```yaml
args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "4096",
       "--gpu-memory-utilization", "0.78", "--max-num-seqs", "3"]
nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
```

What vramlint prints for `tests/rules/fixtures/vrl002/fail_small_cache.yaml`, and the edit of its fix (`--diff`):

<!-- output: vramlint check tests/rules/fixtures/vrl002/fail_small_cache.yaml --select VRL002 -->
```text
VRL002 [warning] vLLM admits up to 256 requests at once (max_num_seqs not set), but the KV cache holds 3.37x 4,096-token requests
  --> tests/rules/fixtures/vrl002/fail_small_cache.yaml:16:11
   |
16 |         - name: vllm
   |           ^^^^^^^^^^
   = note: The KV cache is 1.69 GiB (13,808 tokens): fewer than 4 requests fit at once, and past 3 running
           requests vLLM 0.10.2 preempts and recomputes them, a latency spike for each. Set --max-num-seqs 3
           so the rest wait in the queue, or give the engine more KV cache (4,096 tokens is an assumed typical
           request: set p99-context-tokens under traffic in .vramlint.yaml for yours)
   = help: set --max-num-seqs 3: requests past it wait in the queue instead of being preempted (safe fix:
           --fix applies it)

Found 1 finding (1 warning) in 1 server, 1 file. 1 fixable with --fix (--diff shows them).
```

<!-- output: vramlint check tests/rules/fixtures/vrl002/fail_small_cache.yaml --select VRL002 --diff -->
```text
--- a/tests/rules/fixtures/vrl002/fail_small_cache.yaml
+++ b/tests/rules/fixtures/vrl002/fail_small_cache.yaml
@@ -22,6 +22,8 @@
             - "4096"
             - --gpu-memory-utilization
             - "0.78"
+            - "--max-num-seqs"
+            - "3"
           resources:
             limits:
               nvidia.com/gpu: 1
```
"""

from __future__ import annotations

from vramlint.rule import arg_location, gib, max_num_seqs_over_capacity, times, tokens

ID = "VRL002"
NAME = "max-num-seqs-over-kv-capacity"
LEVEL = "warning"
OPTIONS = {
    "typical_context_tokens": 4096,  # prompt + output tokens of a typical request, without a traffic profile
    "min_concurrency": 4,  # without a peak in the traffic profile: fire when fewer typical requests than this fit
}


def check(assessment, ctx):
    server, budget = assessment.server, assessment.budget
    if budget is None or not budget.starts or "max_num_seqs" in server.args:
        return
    p99 = ctx.p99_context_tokens
    typical = p99 or int(ctx.options["typical_context_tokens"])
    typical = min(typical, budget.max_model_len) if budget.max_model_len else typical
    peak = ctx.peak_concurrent_requests
    over = max_num_seqs_over_capacity(budget, typical, ctx.options["min_concurrency"], peak)
    if over is None:
        return
    limit, capacity = over
    if peak is not None:
        why = f"your traffic profile's peak of {peak} concurrent requests does not fit"
    else:
        why = f"fewer than {ctx.options['min_concurrency']} requests fit at once"
    message = (
        f"The KV cache is {gib(budget.kv_cache_gib)} ({tokens(budget.kv_tokens)} tokens): {why}, and past {limit} "
        f"running requests vLLM {budget.vllm_version} preempts and recomputes them, a latency spike for each. Set "
        f"--max-num-seqs {limit} so the rest wait in the queue, or give the engine more KV cache"
    )
    if not p99:
        message += f" ({typical:,} tokens is an assumed typical request: set p99-context-tokens under traffic in " \
                   ".vramlint.yaml for yours)"
    from vramlint.fixes import make_fix
    from vramlint.rule import rebudget

    after = rebudget(assessment, max_num_seqs=limit)
    fix = make_fix(f"set --max-num-seqs {limit}: requests past it wait in the queue instead of being preempted",
                   after is not None and after.starts, [(server, "max_num_seqs", limit)])
    headline = (f"vLLM admits up to {budget.max_num_seqs} requests at once (max_num_seqs not set), but the KV cache holds "
                f"{times(capacity)} {typical:,}-token requests" + (" (your p99 context)" if p99 else ""))
    yield ctx.finding(assessment, headline, arg_location(server, "max_num_seqs"), fix=fix, detail=message)
