"""Tensor or pipeline parallelism without enough shared memory (/dev/shm).

With more than one GPU per engine, vLLM's workers exchange tensors through NCCL, which uses `/dev/shm`.
Containers get a 64 MB `/dev/shm` by default (Docker, and Kubernetes without a memory-backed volume),
which NCCL outgrows: the engine fails at start-up or on the first requests with
`NCCL error: unhandled system error` or a `Bus error`. vLLM's own deployment docs mount a memory-backed
`/dev/shm` for this reason.

Only NVIDIA GPUs are checked (NCCL). Where the engine spans the pods of a KubeRay cluster or LeaderWorkerSet
group, or of a Ray cluster of plain workloads (worker pods that `ray start --address` a Service selecting the
head's pod), only the ranks of one pod share its `/dev/shm` (between pods NCCL uses the network): a group with one
GPU per pod is not warned, and the message counts the ranks in this pod. Fix it in Kubernetes with an `emptyDir: {medium: Memory}` volume mounted at `/dev/shm`; in docker
compose with `ipc: host` or a `shm_size` (e.g. `shm_size: 16gb`).

Fix (safe: it only adds the shared memory, and changes nothing of the budget): Kubernetes: a volume `dshm`
(`emptyDir` with `medium: Memory`) in the pod's volumes and its mount at `/dev/shm` in the container, each
inserted before the first item of the list (or as a new key) in the file's indentation; compose:
`shm_size: "16gb"` in the service. Other sources, or a `/dev/shm` mount from another kind of volume, get the
advice and why there is no edit.

Failing example (TP 2, no /dev/shm volume):

```yaml
containers:
  - name: vllm
    args: ["--model", "Qwen/Qwen2.5-32B-Instruct", "--tensor-parallel-size", "2"]
    resources: {limits: {nvidia.com/gpu: 2}}
```

Passing example:

```yaml
containers:
  - name: vllm
    args: ["--model", "Qwen/Qwen2.5-32B-Instruct", "--tensor-parallel-size", "2"]
    resources: {limits: {nvidia.com/gpu: 2}}
    volumeMounts: [{name: dshm, mountPath: /dev/shm}]
volumes:
  - {name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}}
```

What vramlint prints for `tests/rules/fixtures/vrl008/fail_k8s.yaml`, and the edit of its fix (`--diff`):

<!-- output: vramlint check tests/rules/fixtures/vrl008/fail_k8s.yaml --select VRL008 -->
```text
VRL008 [warning] tensor-parallel-size 2 runs 2 workers that talk through NCCL over /dev/shm, but /dev/shm is the default 64 MB
  --> tests/rules/fixtures/vrl008/fail_k8s.yaml:21:15
   |
21 |             - --tensor-parallel-size
   |               ^^^^^^^^^^^^^^^^^^^^^^
   = note: Expect `NCCL error: unhandled system error` or a bus error. Fix: mount an emptyDir with medium:
           Memory at /dev/shm
   = help: mount an emptyDir with medium: Memory at /dev/shm (safe fix: --fix applies it)

Found 1 finding (1 warning) in 1 server, 1 file. 1 fixable with --fix (--diff shows them).
```

<!-- output: vramlint check tests/rules/fixtures/vrl008/fail_k8s.yaml --select VRL008 --diff -->
```text
--- a/tests/rules/fixtures/vrl008/fail_k8s.yaml
+++ b/tests/rules/fixtures/vrl008/fail_k8s.yaml
@@ -10,10 +10,17 @@
     metadata:
       labels: {app: chat}
     spec:
+      volumes:
+        - name: dshm
+          emptyDir:
+            medium: Memory
       nodeSelector:
         nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
       containers:
         - name: vllm
+          volumeMounts:
+            - name: dshm
+              mountPath: /dev/shm
           image: vllm/vllm-openai:v0.10.2
           args:
             - --model
```
"""

from __future__ import annotations

from vramlint.platforms import cpu_backend
from vramlint.rule import arg_location, int_arg

ID = "VRL008"
NAME = "tensor-parallel-without-shm"
LEVEL = "warning"
OPTIONS: dict = {}

FIXES = {
    "kubernetes": "mount an emptyDir with medium: Memory at /dev/shm",
    "helm-values": "mount an emptyDir with medium: Memory at /dev/shm (the chart's shm / dshm setting)",
    "compose": "add `ipc: host` or `shm_size: 16gb` to the service",
}


def check(assessment, ctx):
    server = assessment.server
    if server.shm is not False:
        return  # True: mounted; None: cannot tell from this file
    if server.gpu is not None and server.gpu.vendor != "nvidia":
        return  # NCCL is NVIDIA's; other accelerators' collectives are not modelled here
    if cpu_backend(server):
        return  # vLLM's CPU backend (also a CPU build given a GPU): no NCCL (its collectives are not modelled here)
    tp = int_arg(server, "tensor_parallel_size", 1)
    pp = int_arg(server, "pipeline_parallel_size", 1)
    if tp is None or pp is None or tp * pp <= 1:
        return
    workers = tp * pp
    sharing = f"{workers} workers that talk"
    group = server.engine_group
    if group is not None:
        # the ranks spread over the group's pods, and only the ranks of one pod share its /dev/shm (NCCL's SHM
        # transport and vLLM's shared-memory broadcast are for local ranks; across pods NCCL uses the network)
        per_pod = [m.gpus_per_pod for m in group.members if m.joins]
        if per_pod and all(g is not None and g <= 1 for g in per_pod):
            return
        here = server.gpu.count if server.gpu is not None else None
        if here is not None and here <= 1:
            return  # this pod holds one rank: its /dev/shm is shared with no other (other pods' are their own)
        if here is not None and here < workers:
            sharing = f"{workers} workers over the {group.kind}'s pods, {here} of them in this pod, that talk"
    fix = server.shm_fix or FIXES.get(server.source_format, "give the container a shared-memory /dev/shm larger than 64 MB")
    what = f"tensor-parallel-size {tp}" + (f" x pipeline-parallel-size {pp}" if pp > 1 else "")
    yield ctx.finding(
        assessment,
        f"{what} runs {sharing} through NCCL over /dev/shm, but /dev/shm is the default 64 MB",
        arg_location(server, "tensor_parallel_size", "pipeline_parallel_size"),
        detail=f"expect `NCCL error: unhandled system error` or a bus error. Fix: {fix}",
        fix=_shm_fix(server, fix),
    )


def _shm_fix(server, text):
    from vramlint.fixes import add_shm
    from vramlint.model import Fix

    if server.shm_fix:  # the source makes the pod's volumes itself (a chart's values): advice, no edit
        return Fix(text, True, [], "the chart makes this pod's volumes from its own values: set them there")
    edits, why = add_shm(server)
    return Fix(text, True, edits, why)
