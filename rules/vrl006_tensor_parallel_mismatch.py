"""Tensor parallelism needs more GPUs than the deployment requests, or does not divide the attention heads.

vLLM starts `--tensor-parallel-size` x `--pipeline-parallel-size` (x `--data-parallel-size`) workers, one
per GPU. When the container requests fewer GPUs (`nvidia.com/gpu`, compose `count`/`device_ids`), vLLM
stops at start-up (multiprocessing: a CUDA "invalid device ordinal"; Ray over one node's GPUs: "The number of
required GPUs exceeds the total number of available GPUs in the placement group", a warning from 0.6.5 on, after
which vLLM waits up to 1800 s for the placement group and then stops). AWS Neuron devices
(`aws.amazon.com/neuron`) hold several NeuronCores each, which is what Neuron tensor parallelism counts, so
they are compared only when the pod requests `aws.amazon.com/neuroncore`. Requesting more GPUs than the engine
uses is reported too, as a warning, since the extra GPUs sit idle (`report-idle-gpus: false` turns that
off).

In a pod or a compose service whose environment picks among the devices the container gets
(`CUDA_VISIBLE_DEVICES=0,1` with `nvidia.com/gpu: 4`; ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES on ROCm,
ZE_AFFINITY_MASK on Intel GPUs), the comparison is with the devices vLLM sees (its CUDA platform counts
torch's CUDA devices: "World size (N) is larger than the number of available GPUs (M) in this node"), and the
devices it hides sit idle. A value the file does not say (set where the pod runs, empty) leaves the count unknown.

The tensor-parallel size must also divide the model's attention heads (vLLM: "Total number of attention
heads (N) must be divisible by tensor parallel size (T)"), and its KV heads must be a multiple or a divisor of
it (an AssertionError in the model code).

An engine that runs in a KubeRay cluster (RayCluster, RayService, RayJob, AIBrix RayClusterFleet) or a
LeaderWorkerSet group spreads its workers over the group's pods: vLLM uses Ray when the engine needs more GPUs
than its pod has. There the comparison is with the GPUs of the whole group (Ray head + worker groups'
replicas x GPUs per pod, LWS leader + size - 1 workers; see `vramlint.extract.groups` for the operator
versions), and it fails only when even the whole group is short. A KubeRay worker group that never joins the
cluster (`ray.io/overwrite-container-cmd: "true"` and no command: it runs its image's own entrypoint) does not
count; it is an error when the engine needs its GPUs and a warning otherwise. Other multi-node layouts
(`--nnodes`, the Ray executor with pipeline parallelism or an external `RAY_ADDRESS`, a pod that requests
exactly one pipeline stage's GPUs while pipeline parallelism is above 1) skip the per-pod comparison.

On AWS Neuron, `--tensor-parallel-size` counts NeuronCores: a pod requesting `aws.amazon.com/neuroncore`
is compared core for core, one requesting whole devices (`aws.amazon.com/neuron`, or the Neuron DRA driver's
`neuron.aws.com` devices) at 2 cores a device when the node's instance type says Inferentia2 or Trainium1 (inf2.*,
trn1.*), else only when it is short even at 8 cores a device (Trainium2 has 8). On Rebellions NPUs
(`rebellions.ai/ATOM`) the compiled model decides how many devices an engine takes: not compared.

On Google TPUs the parallel sizes count JAX devices while `google.com/tpu` requests chips: a TPU7x (Ironwood)
chip is two devices (two TensorCores and no megacore, JAX's `pallas.tpu.ChipVersion`), a v4, v5e, v5p or v6e
chip one; a chip type the node selector does not name is compared only when it is short even at two devices a
chip.

On vLLM's CPU backend (`vramlint/platforms.py`: vLLM's own CPU images even where the pod asks for a GPU) the
ranks are host processes: no GPU count is compared.

Fix (unsafe): too few GPUs requested: the GPU count where one values key says it (the production-stack
chart's `requestGPU`), else a tensor-parallel size that fits the GPUs requested when the heads allow it and
the budget starts with it, else the GPU request itself: a Kubernetes container's GPU resource in `limits` and
in `requests` (both, where both say it), a compose service's device reservation `count` (devices named by
id are a choice for a person: no edit, and the fix says so); idle GPUs: the tensor-parallel size that uses
them, else the request lowered to the GPUs the engine uses.

Failing example (TP 4 in a pod with 2 GPUs):

```yaml
args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
resources: {limits: {nvidia.com/gpu: 2}}
```

Passing example:

```yaml
args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
resources: {limits: {nvidia.com/gpu: 4}}
```

What vramlint prints for `tests/rules/fixtures/vrl006/fail_too_few_gpus.yaml`, and the edit of its fix (`--diff` --unsafe-fixes):

<!-- output: vramlint check tests/rules/fixtures/vrl006/fail_too_few_gpus.yaml --select VRL006 -->
```text
VRL006 [error] tensor-parallel-size 4 needs 4 GPUs, but the deployment requests 2 (line 27): vLLM stops at start-up
  --> tests/rules/fixtures/vrl006/fail_too_few_gpus.yaml:21:15
   |
21 |             - --tensor-parallel-size
   |               ^^^^^^^^^^^^^^^^^^^^^^
   = note: Request 4 GPUs, or lower the parallel size to 2
   = note: line 27: nvidia.com/gpu: 2
   = help: set --tensor-parallel-size 2 (fits the 2 GPU(s) requested; the budget starts with it) (unsafe fix:
           --fix --unsafe-fixes applies it)

Found 1 finding (1 error) in 1 server, 1 file. Failing: findings at or above error. 1 fixable with --fix --unsafe-fixes (--diff --unsafe-fixes shows them).
```

<!-- output: vramlint check tests/rules/fixtures/vrl006/fail_too_few_gpus.yaml --select VRL006 --diff --unsafe-fixes -->
```text
--- a/tests/rules/fixtures/vrl006/fail_too_few_gpus.yaml
+++ b/tests/rules/fixtures/vrl006/fail_too_few_gpus.yaml
@@ -19,7 +19,7 @@
             - --model
             - "meta-llama/Llama-3.1-70B-Instruct"
             - --tensor-parallel-size
-            - "4"
+            - "2"
             - --max-model-len
             - "8192"
           resources:
```
"""

from __future__ import annotations

from vramlint.platforms import cpu_backend
from vramlint.rule import arg_location, int_arg

ID = "VRL006"
NAME = "tensor-parallel-mismatch"
LEVEL = "error"
OPTIONS = {
    "report_idle_gpus": True,  # a warning when the deployment requests more GPUs than the engine uses
}

MULTI_NODE_KINDS = {"LeaderWorkerSet", "RayCluster", "RayService", "RayJob", "RayClusterFleet"}


# NeuronCores per Neuron device, by chip (AWS Neuron architecture guide): Inferentia2 and Trainium have two
# NeuronCore-v2; a Trainium2 has eight NeuronCore-v3, shown as four logical cores at the default LNC=2 and as
# eight at LNC=1, so it stays at the at-most-8 comparison
NEURON_CORES_PER_DEVICE = {"Inferentia2": 2, "Trainium": 2}

# vLLM on TPU sizes its parallelism in JAX devices, and `google.com/tpu` requests chips. A chip is one device,
# except a chip with two TensorCores and no megacore, where each TensorCore is a device of its own: TPU7x (Ironwood),
# as JAX's table of chips says (jax.experimental.pallas.tpu.ChipVersion: 7x, 2 physical TensorCores per chip,
# megacore not supported). v4 and v5p join their two cores as one megacore device; v5e and v6e have one core.
_TWO_DEVICE_TPU_CHIPS = ("tpu7x",)
_ONE_DEVICE_TPU_CHIPS = ("tpu-v4", "tpu-v5", "tpu-v6")


def _tpu_devices(tpu_type, chips, world):
    """(devices the requested chips give, unit to say them in); devices None when the chip is not named and the
    parallel size fits two devices per chip (nothing certain to say)."""
    name = (tpu_type or "").strip().lower()
    if name.startswith(_TWO_DEVICE_TPU_CHIPS):
        return chips * 2, "TPU devices (two TensorCores, each a device, per TPU7x chip)"
    if name.startswith(_ONE_DEVICE_TPU_CHIPS):
        return chips, "TPU chips"
    if world <= chips * 2:
        return None, "TPU devices"
    return chips * 2, "TPU devices (at most 2 per chip)"


def _budget_error_codes(assessment) -> set[str]:
    if assessment.budget is None:
        return set()
    return {str(e.get("code")) for e in assessment.budget.errors}


# vLLM's Ray executor (executor/ray_utils.py `initialize_ray_cluster`, v1/executor/ray_utils.py from 0.19) asks
# the cluster for a placement group of one GPU bundle per rank. Up to 0.6.4 a cluster with fewer GPUs than that
# was refused at once (ValueError "The number of required GPUs exceeds the total number of available GPUs in the
# placement group", "... in the cluster" in 0.5); from 0.6.5 that text is a logger.warning ("Avoid immediate
# rejection to allow user-initiated placement group created and wait cluster to be ready") and
# `_wait_until_pg_ready` waits up to PG_WAIT_TIMEOUT = 1800 s before its ValueError (checked in the 0.5.0,
# 0.6.3, 0.6.4.post1, 0.6.5, 0.6.6.post1, 0.7.0, 0.7.3, 0.8.5, 0.10.1, 0.11.0, 0.19.0, 0.27.1, 0.33.0 and 0.34.0
# wheels).
_RAY_WAITS_FROM = (0, 6, 5)
PG_WAIT_TIMEOUT = 1800


def _short_group_outcome(assessment, world):
    """What vLLM does when the group has fewer GPUs than its ranks, for the version in use."""
    from vramlint.versions import parse_version

    server = assessment.server
    if server.args.get("distributed_executor_backend") == "mp":
        return "the ranks the group has no GPUs for never start, so the engine never comes up"
    key = parse_version(assessment.vllm_version)
    if key is not None and key[:3] < _RAY_WAITS_FROM:
        return ("vLLM stops at start-up (Ray: \"The number of required GPUs exceeds the total number of available "
                "GPUs ...\")")
    return (f"vLLM {assessment.vllm_version or ''} waits for a Ray placement group of {world} GPUs that the cluster "
            "cannot give (it logs \"The number of required GPUs exceeds the total number of available GPUs in the "
            f"placement group\" as a warning) and stops after {PG_WAIT_TIMEOUT} s (PG_WAIT_TIMEOUT: \"Cannot "
            f"provide a placement group of placement_group_specs=... within {PG_WAIT_TIMEOUT} seconds\")").replace(
        "vLLM  ", "vLLM ")


def _group_check(assessment, ctx, group, world, needed, where):
    """The engine spans a Ray cluster / LWS group: only a group that is short even as a whole fails."""
    total = group.gpus
    absent = [m for m in group.members if not m.joins]
    why = f" {absent[0].why[0].upper()}{absent[0].why[1:]}." if absent else ""
    if total and world > total:  # 0: no pod of the group asks for a GPU at all, nothing to compare
        yield ctx.finding(
            assessment,
            f"{needed} needs {world} GPUs, but the {group.kind} gives the engine {total} ({group.describe()}): "
            f"{_short_group_outcome(assessment, world)}.{why} "
            + (f"Fix: {group.fix}" if group.fix else
               f"Give the group {world} GPUs (more workers or GPUs per pod), or lower the parallel size"),
            where,
            fix=_advice(group.fix or f"give the group {world} GPUs (more workers or GPUs per pod), or lower the "
                        "parallel size", f"the {group.kind}'s GPUs are set across several of its objects"),
        )
    elif absent:
        yield ctx.finding(assessment, f"{absent[0].label} of the {group.kind} never joins it: {absent[0].why}",
                          absent[0].location or where, level="warning")


def check(assessment, ctx):
    server, model = assessment.server, assessment.model
    tp = int_arg(server, "tensor_parallel_size", 1)
    pp = int_arg(server, "pipeline_parallel_size", 1)
    dp = int_arg(server, "data_parallel_size_local", None) or int_arg(server, "data_parallel_size", 1)
    if tp is None or pp is None or dp is None or tp < 1 or pp < 1 or dp < 1:
        return  # unknown statically, or vLLM rejects the value itself
    where = arg_location(server, "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")
    world = tp * pp * dp
    # vLLM-Omni spreads its stages over GPUs by options of its own (--num-gpus, --usp, --ring, stage configs), which
    # vramlint does not read: the GPUs vLLM's parallel sizes leave over are not known to sit idle (audit22 D8)
    omni = server.args.get("omni") is True
    parts = [f"tensor-parallel-size {tp}"]
    if pp > 1:
        parts.append(f"pipeline-parallel-size {pp}")
    if dp > 1:
        parts.append(f"data-parallel-size {dp}")
    needed = " x ".join(parts)

    if cpu_backend(server):
        return  # vLLM's CPU backend: its ranks are host processes, whatever GPUs the pod asks for
    gpu = server.gpu
    count = gpu.count if gpu is not None else None
    group = server.engine_group
    spans_group = group is not None and not (
        server.args.get("distributed_executor_backend") == "mp" and server.args.get("nnodes") in (None, 1))
    if spans_group:
        yield from _group_check(assessment, ctx, group, world, needed, where)
    multi_node = spans_group or (
        server.kind in MULTI_NODE_KINDS
        or any(server.args.get(k) not in (None, 1) for k in ("nnodes", "data_parallel_address"))
        or (server.args.get("distributed_executor_backend") == "ray" and (pp > 1 or server.env.get("RAY_ADDRESS")))
        # one pipeline stage's GPUs per pod is the multi-node layout (Ray / LWS workers hold the other stages)
        or (pp > 1 and count is not None and count == tp * dp)
    )
    unit = "GPUs"
    if count is not None and gpu.vendor == "aws-neuron":
        # vLLM on AWS Neuron counts NeuronCores in --tensor-parallel-size; `aws.amazon.com/neuroncore` requests
        # cores, `aws.amazon.com/neuron` (or neurondevice) whole devices of 2 (Inferentia2, Trainium1) up to 8
        # (Trainium2) cores, which the manifest does not say: only more than 8 per device is certainly short.
        cores = NEURON_CORES_PER_DEVICE.get(gpu.type or "")
        if "neuroncore" in (gpu.evidence or ""):
            unit = "NeuronCores"
        elif cores is not None:
            count, unit = count * cores, f"NeuronCores ({cores} per {gpu.type} device)"
        elif world <= count * 8:
            count = None
        else:
            count, unit = count * 8, "NeuronCores (at most 8 per Neuron device)"
    elif count is not None and gpu.vendor == "rebellions":
        # vllm-rbln runs a model compiled for its NPUs (optimum-rbln's rbln_tensor_parallel_size): how many
        # ATOMs an engine takes is the compiled model's, not a vLLM parallel size
        count = None
    elif count is not None and gpu.vendor == "google-tpu":
        count, unit = _tpu_devices(gpu.type, count, world)
    if count is not None and not multi_node and gpu.mig_profile is None:
        gpu_where = gpu.count_location or gpu.location or server.location
        gpu_line = f" (line {gpu_where.line})" if gpu_where.file == where.file else f" ({gpu_where.file}:{gpu_where.line})"
        visible = gpu.visible_from if unit == "GPUs" else None
        if world > count and visible is not None:
            variable, given = visible
            yield ctx.finding(
                assessment,
                f"{needed} needs {world} GPUs, but {variable} shows vLLM {count} of the {given} GPUs the "
                f"container gets{gpu_line}: vLLM stops at start-up. Let {variable} list {world} devices (the "
                f"container must have them), or lower the parallel size to {count}",
                where,
                fix=_tp_fix(assessment, count // (pp * dp), f"fits the {count} GPU(s) vLLM sees")
                or _advice(f"let {variable} list {world} devices (line {gpu_where.line})",
                           f"{variable} picks which of the container's GPUs vLLM sees: which to show it is a "
                           "choice for a person"),
                related=[gpu_where],
            )
        elif world > count:
            yield ctx.finding(
                assessment,
                f"{needed} needs {world} {unit.split(' (')[0]}, but the deployment requests {count}"
                f"{'' if unit == 'GPUs' else ' ' + unit}{gpu_line}: vLLM stops at start-up. Request "
                f"{world} {unit.split(' (')[0]}, or lower the parallel size to {count}",
                where,
                fix=_advice(f"lower the parallel size to {count} {unit.split(' (')[0]}, or request more chips",
                            "a TPU request counts chips, which are not the devices vLLM counts on every TPU")
                if unit.startswith("TPU") else
                (_tp_fix(assessment, count // (pp * dp), f"fits the {count} NeuronCores requested")
                 or _advice(f"request {-(-world // (count // gpu.count))} Neuron devices",
                            "the request counts Neuron devices, the parallel size NeuronCores"))
                if unit.startswith("NeuronCores (") and gpu.count else
                _short_fix(assessment, world, count, tp, pp * dp, gpu_where),
                related=[gpu_where],
            )
        elif world == count and visible is not None and visible[1] > count and ctx.options["report_idle_gpus"] \
                and gpu.shared_key is None and not omni:
            variable, given = visible
            asked = gpu.location or server.location
            asked_line = f" (line {asked.line})" if asked.file == where.file else f" ({asked.file}:{asked.line})"
            yield ctx.finding(
                assessment,
                f"{given - count} of the {given} GPUs the deployment requests sit idle: {variable} shows vLLM "
                f"{count}{gpu_line}, which {needed} uses. Request {count}{asked_line}, or let {variable} list "
                f"all {given} and raise the parallel size",
                asked,
                level="warning",
                fix=_advice(f"request {count} GPUs and drop {variable}",
                            f"{variable} picks which of the container's GPUs vLLM sees: which to keep is a choice "
                            "for a person"),
                related=[gpu_where, where],
            )
        elif world < count and ctx.options["report_idle_gpus"] and gpu.shared_key is None and unit == "GPUs" \
                and not omni:
            yield ctx.finding(
                assessment,
                f"the deployment requests {count} GPUs{gpu_line} but {needed} uses {world}: "
                f"{count - world} GPU(s) sit idle. Set --tensor-parallel-size {count // (pp * dp) or 1} "
                f"to use them, or request {world}",
                gpu_where,
                level="warning",
                fix=_tp_fix(assessment, count // (pp * dp) or 1, f"use the {count} GPUs the deployment requests")
                or _request_fix(assessment, world, f"request {world} GPUs, the {needed} uses (a parallel size "
                                "that uses every GPU does not divide the model's heads or does not start)"),
                related=[where],
            )

    if model is None or tp == 1:
        return
    codes = _budget_error_codes(assessment)
    heads = model.num_attention_heads
    if heads and heads % tp != 0 and "tp-heads" not in codes:
        divisors = [d for d in range(1, heads + 1) if heads % d == 0 and d <= max(tp * 2, 8)]
        yield ctx.finding(
            assessment,
            f"{model.name} has {heads} attention heads, which tensor-parallel-size {tp} does not divide: vLLM "
            f"stops with \"Total number of attention heads ({heads}) must be divisible by tensor parallel size "
            f"({tp}).\" Use one of {', '.join(map(str, divisors))}",
            arg_location(server, "tensor_parallel_size"),
            fix=_heads_fix(),
        )
        return
    kv = model.num_kv_heads
    if kv and heads % tp == 0 and kv % tp != 0 and tp % kv != 0 and "tp-kv-heads" not in codes:
        yield ctx.finding(
            assessment,
            f"{model.name} has {kv} KV heads; tensor-parallel-size {tp} neither divides nor is a multiple of it, "
            "which fails an assertion in vLLM's model code at start-up. Use a size that divides "
            f"{kv} or is a multiple of it",
            arg_location(server, "tensor_parallel_size"),
            fix=_heads_fix(),
        )


def _heads_fix():
    return _advice("use a tensor-parallel size that divides the heads (and the GPUs to match)",
                   "a different parallel size needs a different GPU request too")


def _tp_fix(assessment, new_tp, why):
    """--tensor-parallel-size ``new_tp``, when the heads allow it and the budget starts with it (unsafe: it
    changes how the engine runs), else None."""
    from vramlint.fixes import make_fix
    from vramlint.rule import rebudget

    model = assessment.model
    if new_tp < 1 or model is None or assessment.budget is None:
        return None
    if model.num_attention_heads and model.num_attention_heads % new_tp:
        return None
    kv = model.num_kv_heads
    if kv and kv % new_tp and new_tp % kv:
        return None
    after = rebudget(assessment, tensor_parallel_size=new_tp)
    if after is None or not after.starts:
        return None
    return make_fix(f"set --tensor-parallel-size {new_tp} ({why}; the budget starts with it)", False,
                    [(assessment.server, "tensor_parallel_size", new_tp)])


def _short_fix(assessment, world, count, tp, others, gpu_where):
    """The deployment requests too few GPUs: request ``world`` where one value says the count (a Helm values
    key such as production-stack's requestGPU), else a tensor-parallel size that fits, else advice."""
    from vramlint.fixes import Fix, set_arg

    server = assessment.server
    if server.source_format == "helm-values" and gpu_where.file.endswith((".yaml", ".yml")):
        probe = type(server)(file=server.file, location=server.location, source_format=server.source_format,
                             args={"gpu_count": server.gpu.count}, arg_locations={"gpu_count": gpu_where})
        edits, _why = set_arg(probe, "gpu_count", world)
        if edits:
            return Fix(f"request {world} GPUs (line {gpu_where.line}); more GPUs per replica", False, edits)
    fix = _tp_fix(assessment, count // others if others else 0, f"fits the {count} GPU(s) requested")
    if fix is not None:
        return fix
    return _request_fix(assessment, world, f"request {world} GPUs (line {gpu_where.line}); more GPUs per replica")


def _request_fix(assessment, count, text):
    """The GPU request rewritten to ``count`` where the container or compose service writes it (unsafe: more
    GPUs per replica, which the nodes must have), else the same as advice, with why."""
    from vramlint.fixes import set_gpu_request
    from vramlint.model import Fix

    if assessment.server.source_format not in ("kubernetes", "compose"):
        return _advice(text, f"vramlint rewrites GPU requests only in Kubernetes containers and compose services "
                             f"(this server is read from {assessment.server.source_format})")
    edits, why = set_gpu_request(assessment.server, count)
    return Fix(text, False, edits, why)


def _advice(text, reason):
    from vramlint.fixes import advice

    return advice(text, reason)
