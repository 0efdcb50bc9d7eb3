"""What a server needs of a GPU it does not name: the smallest GPU memory with which it starts, and which GPUs have it.

Most deployments ask for `nvidia.com/gpu: 1` and let the cluster choose the node. vramlint then computes the
start-up budget vLLM would compute on every GPU of its catalog, with the server's own settings, and reports
once per server the smallest total memory per GPU with which vLLM starts: the weights one rank loads, the
non-torch memory, the activation peak of the profile run, CUDA graphs and the KV cache of one request of
`max_model_len` tokens (vLLM refuses to start when not even one fits; with `--max-model-len auto` it fits the
context to the cache left instead, so any KV cache will do), over `gpu_memory_utilization`. The
GPUs whose own budget starts, and the ones where it does not (too little memory, no bfloat16, a compute
capability the release or the quantization kernels do not support), are named by memory, cloud GPUs first;
`vramlint explain --format json` lists them all under `gpu_requirement`.

Servers with the same model and settings (replicas of one chart, one manifest per cluster) get one note, on
the first, naming where else it applies. The note is a warning when no GPU in the catalog is large enough (more tensor parallelism or a shorter
`max_model_len` is needed). Failures that hold on every GPU (weights larger than the largest GPU at this
tensor-parallel size, a `max_model_len` above the model's, a flag the release refuses) are VRL005 errors,
and this rule then says nothing. Once the GPU is known (a node selector on `nvidia.com/gpu.product`, an
instance type, or `gpu:` in the configuration) the server gets its full budget and the other rules instead.
A run computes 256 distinct requirements (each is a budget on every catalog GPU, about 3 ms); what the servers
past them need is not computed, and one warning on the first of them says so and names the others.

Failing example (the GPU is not named: Llama-3.1-8B at its full 131072-token context needs about 36 GiB per
GPU, which L4 and A10G do not have):

```yaml
containers:
  - name: vllm
    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
    resources: {limits: {nvidia.com/gpu: 1}}
```

Passing example (the GPU is named, so the budget is checked on it):

```yaml
nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}
containers:
  - name: vllm
    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
    resources: {limits: {nvidia.com/gpu: 1}}
```
"""

from __future__ import annotations

from vramlint.rule import arg_location

ID = "VRL011"
NAME = "gpu-requirement"
LEVEL = "note"
OPTIONS: dict = {}


def check_all(assessments, ctx):
    """One note per distinct requirement: servers with the same model and settings (replicas of one chart, the
    same file for several clusters) need the same, said once with where else it applies."""
    groups: dict[tuple, list] = {}
    not_computed = [a for a in assessments if a.requirement_not_computed]
    if not_computed:
        yield _not_computed(not_computed, ctx)
    described: dict[int, str] = {}  # a requirement's GPUs in words, once: servers of one setting share it
    for assessment in assessments:
        said = _requirement(assessment, described)
        if said is not None:
            groups.setdefault(said, []).append(assessment)
    for (headline, detail, level), members in groups.items():
        first = members[0]
        others = [f"{a.server.file}:{_location(a).line}" for a in members[1:]]
        if others:
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
            detail += f" (the same for {len(others)} more server{'s' if len(others) > 1 else ''} with these settings: {shown})"
        yield ctx.finding(first, headline, _location(first), level=level, detail=detail)


def _not_computed(members, ctx):
    """One warning for the servers whose requirement the run did not compute (past `MAX_REQUIREMENTS` distinct
    settings), on the first of them, naming the others."""
    from vramlint.requirement import MAX_REQUIREMENTS

    first, n = members[0], len(members)
    where = [f"{a.server.file}:{_location(a).line}" for a in members]
    shown = ", ".join(where[:5]) + (f" and {n - 5} more" if n > 5 else "")
    headline = (f"what {n:,} more server{'s' if n != 1 else ''} need{'s' if n == 1 else ''} of a GPU was not computed "
                f"(vramlint computes {MAX_REQUIREMENTS} distinct GPU requirements a run)")
    detail = (f"Each is the start-up budget on every GPU of the catalog; the {MAX_REQUIREMENTS} computed are those of "
              f"the first settings met, and servers with the same settings as one of them got it. For these "
              f"({shown}) neither the memory they need nor the failures that hold on every GPU (VRL005) were "
              "checked. Name the GPU (--gpu NAME, `gpu:` in .vramlint.yaml, or a node selector on "
              "`nvidia.com/gpu.product`) to check each one's budget on it")
    return ctx.finding(first, headline, _location(first), level="warning", detail=detail)


def _location(assessment):
    return arg_location(assessment.server, "gpu")


def _requirement(assessment, described: dict[int, str]) -> tuple[str, str, str] | None:
    """(headline, detail, level) of the server's requirement, or None when there is nothing to say."""
    req = assessment.gpu_requirement
    if req is None or req.min_total_gib is None or req.errors:
        return None  # nothing to size, or VRL005 reports what fails on every GPU
    from vramlint import gpus
    from vramlint.requirement import describe

    server = assessment.server
    if str(server.args.get("max_model_len")).strip().lower() in ("auto", "-1"):
        at = "--max-model-len auto (vLLM fits the context to the KV cache left)"
    elif "max_model_len" in server.arg_locations and server.args.get("max_model_len") is not None:
        at = f"--max-model-len {req.max_model_len}"
    elif "max_model_len" in server.arg_locations:
        # `--max-model-len $LEN` with LEN not known: sized at the model's maximum, which the value may lower
        at = f"max_model_len {req.max_model_len} (the model's maximum; the --max-model-len value is known only at run time)"
    else:
        at = f"max_model_len {req.max_model_len} (the model's maximum, no --max-model-len)"
    if req.gpus_per_engine > 1:
        at += f" on {req.gpus_per_engine} GPUs per engine"
    if "gpu_memory_utilization" in server.args:
        at += f" and --gpu-memory-utilization {req.gpu_memory_utilization:g}"
    message = f"{server.model}: needs >= {req.min_total_gib:.1f} GiB per GPU to start at max_model_len {req.max_model_len}"
    if not req.fits:
        largest = gpus.catalog_specs("amd" if server.gpu is not None and server.gpu.vendor == "amd" else "nvidia")[-1]
        return (f"{message}, more than any GPU in vramlint's catalog", f"At {at}; the largest GPU, {largest.name}, "
                f"has {largest.total_gib:.2f} GiB. Raise --tensor-parallel-size or lower --max-model-len", "warning")
    words = described.get(id(req))
    if words is None:
        words = described[id(req)] = describe(req.fits, req.does_not_fit, req.why_not)
    return message, f"At {at}, it {words}", "note"
