"""A seventh round of hostile inputs, aimed at the readers added in the latest rounds, judged as `hostile_fresh.py`
judges.

    python3 benchmarks/hostile_tenth.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

Kinds the earlier rounds do not have: a Dockerfile of 3,000 stages each `FROM` the one before, an `ARG` doubled 60
times into a `FROM` tag and a `${A:-${B:-...}}` default nested 5,000 deep in `FROM`; here-documents writing 3,000
Deployments to `kubectl apply`, one never terminated holding `${HF_TOKEN}` and `$(cat /etc/passwd)`, and 20,000
of them in one script; Slurm `#SBATCH` directives with 30-digit, negative, `1e999` and 20,000 repeated counts; DRA
ResourceClaimTemplates with a count of 2**70, a 200,000-character CEL selector and 5,000 claims on one pod;
Karpenter NodePools listing 100,000 instance types and `Gt` a 400-digit GPU count; KAITO, llmaz and
production-stack objects with negative, 2**63 and `1e999` counts (and 5,000 model specs); a Dynamo graph of 5,000
components with 2**62 replicas and TP -1; dstack GPU ranges `H100:-1..1e30` and 2**62 nodes; SkyPilot
accelerators as a 50,000-entry mapping with `1e999`; a Beaker spec of 20,000 tasks whose `$(MODEL)` names itself;
a `.vramlint.yaml` whose custom GPU has `1e999` GiB and 20,000 aliases, with 5,000 overrides of backtracking
globs; a chart whose `templates` is a link to another chart's, whose `Chart.yaml` links to /proc/self/environ and
whose subchart is a link to its parent; compose `include:` and `extends` that reach each other in a cycle
through a link; one file mixing a BOM, CRLF, NUL and a UTF-16 part; object and model names holding C1 control
characters (CSI 0x9b), bidirectional overrides and U+2028; a CPU image with TP 2**62 and VLLM_CPU_KVCACHE_SPACE
1e999; `semverCompare` with a 100,000-clause constraint; sprig `split ""` of a 200,000-character string; 2,000
KServe InferenceServices in a chart each naming its own ServingRuntime.

Each case runs `vramlint check . --offline` with `hostile_fresh.run_case` (every output format, the planted secrets,
the audit hook) and `hostile_unseen.extra_problems` (GitHub lines decoded as the runner decodes them, markdown,
`__no_error__`). The cases and their expectations were written before they were first run (corrected after it: a
folder's walk reads no script, so the here-document and Slurm scripts are named on the command line, as a
pre-commit hook or a CI step names a launch script).
"""

from __future__ import annotations

import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import hostile_fresh as f  # noqa: E402  (the harness of the third round)
import hostile_inputs as h  # noqa: E402
import hostile_unseen as u  # noqa: E402

QWEN = f.QWEN
deployment = h.deployment
expect = f.expect
line_of = f.line_of
chart = f.chart
CHART = h.CHART
CHART_TEMPLATE = h.CHART_TEMPLATE
GPU_RESERVATION = "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n"
BUILD = "services:\n  vllm:\n    build: {context: ., dockerfile: Dockerfile}\n" + GPU_RESERVATION
SERVE = "vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096"


def _pod(name: str, body: str = "", args: str = "[--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, '4096']",
         image: str = "vllm/vllm-openai:v0.10.2", resources: str = "limits: {nvidia.com/gpu: 1}",
         pod_extra: str = "") -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n"
            f"{pod_extra}      containers:\n        - name: vllm\n          image: {image}\n          args: {args}\n"
            f"          resources:\n            {resources}\n{body}")


def tenth_cases() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    # --- Dockerfile (extract/dockerfile.py): FROM chains and ARG expansion ---
    stages = "FROM vllm/vllm-openai:v0.9.2 AS s0\n" + "".join(f"FROM s{i - 1} AS s{i}\n" for i in range(1, 3000))
    out["dockerfile-3000-stage-from-chain"] = {
        "compose.yaml": BUILD, "Dockerfile": stages + f"ENTRYPOINT {SERVE}\n",
        "__expect__": expect(("compose.yaml", None))}
    args = "ARG A0=abcdefgh\n" + "".join(f"ARG A{i}=${{A{i - 1}}}${{A{i - 1}}}\n" for i in range(1, 60))
    out["dockerfile-arg-doubling-into-from"] = {
        "compose.yaml": BUILD, "Dockerfile": args + "FROM vllm/vllm-openai:${A59}\n" + f"ENTRYPOINT {SERVE}\n",
        "__expect__": expect(("Dockerfile", None))}
    nested = "${A:-" * 5000 + "v0.9.2" + "}" * 5000
    out["dockerfile-from-default-nested-5000"] = {
        "compose.yaml": BUILD, "Dockerfile": f"ARG B=1\nFROM vllm/vllm-openai:{nested}\nENTRYPOINT {SERVE}\n",
        "__expect__": expect(("Dockerfile", 2))}
    # --- here-documents writing manifests (extract/heredocs.py) ---
    many = "---\n".join(_pod(f"llm-{i}") for i in range(3000))
    out["heredoc-3000-deployments-applied"] = {
        "__paths__": ("paths", ["deploy.sh"]),
        "deploy.sh": "#!/bin/sh\nset -e\ncat <<EOF | kubectl apply -f -\n" + many + "EOF\n",
        "__expect__": expect(("deploy.sh", None))}
    out["heredoc-unterminated-secrets"] = {
        "__paths__": ("paths", ["deploy.sh"]),
        "deploy.sh": "#!/bin/sh\nMODEL=Qwen/Qwen2.5-1.5B-Instruct\nkubectl apply -f - <<EOF\n"
        + _pod("leak", args='[--model, "$MODEL", --api-key, "${HF_TOKEN}", --served-model-name, "$(cat /etc/passwd)",'
               ' --chat-template, "$(cat ../_outside/secret.txt)"]'),
        "__expect__": expect(("deploy.sh", None))}
    out["heredoc-20000-in-one-script"] = {
        "__paths__": ("paths", ["deploy.sh"]),
        "deploy.sh": "#!/bin/sh\n" + "".join(f"kubectl apply -f - <<E{i}\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n"
                                            f"E{i}\n" for i in range(20_000))
        + "kubectl apply -f - <<EOF\n" + _pod("last") + "EOF\n",
        "__expect__": expect(("deploy.sh", None))}
    # --- Slurm #SBATCH (extract/slurm.py) ---
    out["slurm-huge-negative-counts"] = {
        "__paths__": ("paths", ["serve.slurm"]),
        "serve.slurm": "#!/bin/bash\n#SBATCH --nodes=" + "9" * 30 + "\n#SBATCH --gpus-per-node=h100:-4\n"
        "#SBATCH --gres=gpu:a100:1e999\n#SBATCH --gpus=" + "7" * 400 + "\n#SBATCH -N -2\n"
        f"{SERVE} --tensor-parallel-size $SLURM_GPUS_PER_NODE --pipeline-parallel-size $SLURM_JOB_NUM_NODES\n",
        "__expect__": expect(("serve.slurm", None))}
    out["slurm-20000-directives"] = {
        "__paths__": ("paths", ["serve.slurm"]),
        "serve.slurm": "#!/bin/bash\n" + "#SBATCH --gpus-per-node=8\n#SBATCH --nodes=2\n" * 10_000
        + f"{SERVE} --tensor-parallel-size $SLURM_GPUS_PER_NODE\n",
        "__expect__": expect(("serve.slurm", None))}
    # --- DRA (extract/resource_claims.py) ---
    cel = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4' && " * 3000 + "true"
    claim = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpus}\nspec:\n  spec:\n"
             "    devices:\n      requests:\n      - name: gpu\n        exactly:\n          deviceClassName: gpu.nvidia.com\n"
             f"          count: {2 ** 70}\n          selectors:\n          - cel:\n              expression: \"{cel}\"\n")
    claimed = _pod("claimed", resources="claims: [{name: gpus}]",
                   body="      resourceClaims:\n      - {name: gpus, resourceClaimTemplateName: gpus}\n")
    # (expectation corrected after the first run: the count the API server cannot decode is written in claim.yaml)
    out["dra-count-2pow70-long-cel"] = {"claim.yaml": claim, "deploy.yaml": claimed,
                                        "__expect__": expect(("claim.yaml", 11, "VRL102"))}
    refs = "".join(f"      - {{name: g{i}, resourceClaimTemplateName: t{i}}}\n" for i in range(5000))
    uses = "[" + ", ".join(f"{{name: g{i}}}" for i in range(5000)) + "]"
    templates = "---\n".join(claim.replace("name: gpus", f"name: t{i}").replace(f"count: {2 ** 70}", "count: 1")
                             .replace(cel, "true") for i in range(5000))
    out["dra-5000-claims-on-one-pod"] = {"claims.yaml": templates,
                                         "deploy.yaml": _pod("many", resources=f"claims: {uses}",
                                                             body="      resourceClaims:\n" + refs),
                                         "__expect__": expect(("deploy.yaml", None))}
    # --- Karpenter (extract/node_pools.py) ---
    types = ", ".join(f"g{i}.xlarge" for i in range(100_000))
    pool = ("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    metadata:\n"
            "      labels: {team: a}\n    spec:\n      requirements:\n"
            f"        - {{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}\n"
            f"        - {{key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: [\"{'9' * 400}\"]}}\n"
            "        - {key: karpenter.k8s.aws/instance-gpu-memory, operator: Lt, values: [\"-1e999\"]}\n"
            "  limits: {nvidia.com/gpu: -5}\n")
    out["karpenter-100k-types-400-digit-gt"] = {
        "pool.yaml": pool, "deploy.yaml": _pod("chat", pod_extra="      nodeSelector: {team: a}\n"),
        "__expect__": expect(("deploy.yaml", None))}
    # --- KAITO, llmaz, production-stack ---
    out["kaito-negative-and-huge-counts"] = {
        "kaito.yaml": "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {name: ws}\nresource:\n"
        f"  count: -3\n  instanceType: Standard_NC24ads_A100_v4\ninference:\n  preset: {{name: phi-4}}\n---\n"
        "apiVersion: kaito.sh/v1beta1\nkind: InferenceSet\nmetadata: {name: set}\nspec:\n"
        f"  replicas: {2 ** 63}\n  template:\n    inference:\n      preset: {{name: qwen2.5-coder-7b-instruct}}\n"
        "    resource:\n      count: 1e999\n      instanceType: Standard_NC96ads_A100_v4\n",
        "__expect__": expect(("kaito.yaml", None))}
    flavors = "".join(f"      - name: f{i}\n        limits: {{nvidia.com/gpu: {(-1) ** i * 10 ** 30}}}\n"
                      for i in range(2000))
    out["llmaz-2000-flavors-huge-gpus"] = {
        "llmaz.yaml": "apiVersion: llmaz.io/v1alpha1\nkind: OpenModel\nmetadata: {name: qwen}\nspec:\n"
        "  familyName: qwen2\n  source: {modelHub: {modelID: Qwen/Qwen2.5-7B-Instruct}}\n  inferenceConfig:\n"
        "    flavors:\n" + flavors + "---\napiVersion: inference.llmaz.io/v1alpha1\nkind: Playground\n"
        f"metadata: {{name: qwen}}\nspec:\n  replicas: {2 ** 64}\n  modelClaims:\n    models: [{{name: qwen}}]\n"
        "  backendRuntimeConfig:\n    backendName: vllm\n    args: [--max-num-seqs, '-1']\n",
        "__expect__": expect(("llmaz.yaml", None))}
    spec = ("    - name: m{i}\n      repository: vllm/vllm-openai\n      tag: v0.8.5\n      modelURL: Qwen/Qwen2.5-7B-Instruct\n"
            "      replicaCount: {rc}\n      requestGPU: {gpu}\n      vllmConfig:\n        tensorParallelSize: {tp}\n"
            "        maxModelLen: 8192\n")
    specs = "".join(spec.format(i=i, rc=(-1, 2 ** 63, 1)[i % 3], gpu=("1e999", -2, 2 ** 62)[i % 3],
                                tp=(2 ** 62, -1, "1e999")[i % 3]) for i in range(5000))
    out["production-stack-5000-specs-odd-counts"] = {
        "values.yaml": "servingEngineSpec:\n  runtimeClassName: nvidia\n  modelSpec:\n" + specs,
        "__expect__": expect(("values.yaml", None))}
    # --- Dynamo ---
    comp = ("  - name: W{i}\n    type: worker\n    replicas: {r}\n    podTemplate:\n      spec:\n        containers:\n"
            "        - name: main\n          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0\n"
            "          command: [python3]\n          args: [-m, dynamo.vllm, --model, Qwen/Qwen2.5-7B-Instruct, "
            "--tensor-parallel-size, '{tp}']\n          resources:\n            limits: {{nvidia.com/gpu: '2'}}\n")
    out["dynamo-5000-components-huge-replicas"] = {
        "graph.yaml": "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: g}\nspec:\n"
        "  components:\n" + "".join(comp.format(i=i, r=2 ** 62 if i % 2 else -7, tp=-1 if i % 2 else 2 ** 40)
                                    for i in range(5000)),
        "__expect__": expect(("graph.yaml", None))}
    # --- dstack, SkyPilot, Beaker ---
    out["dstack-negative-gpu-range-huge-nodes"] = {
        "serve.dstack.yml": "type: task\nimage: vllm/vllm-openai:v0.10.2\n"
        f"nodes: {2 ** 62}\ncommands:\n  - {SERVE} --tensor-parallel-size $DSTACK_GPUS_PER_NODE\n"
        "resources:\n  gpu: H100:-1..1e30\n  shm_size: -24GB\n",
        "__expect__": expect(("serve.dstack.yml", None))}
    accel = "".join(f"    G{i}: {'1e999' if i % 2 else -1}\n" for i in range(50_000))
    out["skypilot-50k-accelerators-mapping"] = {
        "serve.sky.yaml": f"name: s\nnum_nodes: {2 ** 62}\nresources:\n  image_id: docker:vllm/vllm-openai:v0.10.2\n"
        "  accelerators:\n    H100: 1e999\n" + accel
        + f"run: |\n  {SERVE} -tp $SKYPILOT_NUM_GPUS_PER_NODE -pp $SKYPILOT_NUM_NODES\n",
        "__expect__": expect(("serve.sky.yaml", None))}
    task = ("  - name: t{i}\n    image: {{docker: vllm/vllm-openai:v0.10.1}}\n    arguments: [--model, $(MODEL), "
            "--tensor-parallel-size, '{tp}']\n    envVars:\n      - {{name: MODEL, value: $(MODEL)$(MODEL)}}\n"
            "    resources: {{gpuCount: {g}}}\n")
    out["beaker-20000-tasks-self-naming-env"] = {
        "beaker.yaml": "version: v2\ntasks:\n" + "".join(task.format(i=i, tp=2 ** 62, g=-1 if i % 2 else 2 ** 62)
                                                       for i in range(20_000)),
        "__expect__": expect(("beaker.yaml", None))}
    # --- configuration from the scanned repository ---
    aliases = "[" + ", ".join(f"X{i}" for i in range(20_000)) + "]"
    overrides = "".join(f"  - files: ['{'*a' * 40}*b{i}']\n    gpu: L4\n" for i in range(5000))
    cfg = ("custom-gpus:\n  - name: MEGA\n    memory-gib: 1e999\n    compute-capability: '99999.99999'\n"
           f"    aliases: {aliases}\n    node-labels: {{vendor.example/gpu: [MEGA]}}\ngpu: MEGA\noverrides:\n" + overrides)
    out["config-custom-gpu-1e999-glob-overrides"] = {
        ".vramlint.yaml": cfg, "a" * 200 + ".yaml": _pod("chat"),
        "__expect__": expect((".vramlint.yaml", None, "VRL102"))}
    # --- chart links ---
    out["chart-links-templates-chart-subchart"] = {
        **chart({"deploy.yaml": CHART_TEMPLATE}, prefix="real"),
        "linked/values.yaml": "model: Qwen/Qwen2.5-1.5B-Instruct\nmaxLen: 4096\n",
        "linked/Chart.yaml": ("symlink", "/proc/self/environ"),
        "linked/templates": ("symlink", "../real/templates"),
        "real/charts/parent": ("symlink", ".."),
        "real/charts/env": ("symlink", "/proc/self"),
        "__expect__": expect(("real/templates/deploy.yaml", None))}
    # --- compose include / extends through a link ---
    out["compose-include-extends-link-cycle"] = {
        "compose.yaml": "include:\n  - other.yaml\n  - again.yaml\nservices:\n  vllm:\n    extends: {file: other.yaml, "
        "service: base}\n" + GPU_RESERVATION,
        "other.yaml": "include: [compose.yaml]\nservices:\n  base:\n    image: vllm/vllm-openai:v0.9.2\n"
        "    extends: {file: again.yaml, service: vllm}\n    command: --model Qwen/Qwen2.5-1.5B-Instruct\n",
        "again.yaml": ("symlink", "compose.yaml"),
        "__expect__": expect(("compose.yaml", None))}
    # --- encodings and names ---
    mixed = ("\ufeff" + deployment(QWEN + ["--max-model-len", "4096"]).replace("\n", "\r\n")).encode("utf-8") \
        + b"\x00---\r\n" + "kind: ConfigMap\nx: 1\n".encode("utf-16-le")
    out["encoding-bom-crlf-nul-utf16"] = {"deploy.yaml": mixed, "__expect__": expect(("deploy.yaml", None))}
    odd = deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct\u009b31m", "--served-model-name", "a\u202eb\u2028c",
                      "--max-model-len", "4096\u0085"], name='"llm\\x9b2J\\u2066x\\x85y"')
    out["names-c1-controls-bidi"] = {"deploy.yaml": odd, "__expect__": expect(("deploy.yaml", None))}
    # --- CPU backend (tenth round) ---
    cpu = deployment(QWEN + ["-tp", str(2 ** 62), "--max-model-len", "4096"], image="vllm/vllm-openai-cpu:v0.23.0")
    cpu = cpu.replace("          resources:", "          env:\n            - {name: VLLM_CPU_KVCACHE_SPACE, value: '1e999'}"
                      "\n          resources:", 1).replace('nvidia.com/gpu: "1"', f'nvidia.com/gpu: "{2 ** 62}"')
    out["cpu-image-tp-2pow62-kvcache-1e999"] = {"deploy.yaml": cpu, "__expect__": expect(("deploy.yaml", None))}
    # --- Helm: semverCompare, split, KServe joins ---
    clauses = " || ".join(f">= 0.{i}.0" for i in range(100_000))
    semver = CHART_TEMPLATE.replace('{{ .Values.maxLen }}',
                                    '{{ if semverCompare "' + clauses + '" "0.9.2" }}4096{{ else }}8192{{ end }}')
    out["helm-semvercompare-100k-clauses"] = {**chart({"deploy.yaml": semver}),
                                              "__expect__": expect(("chart/templates/deploy.yaml", None))}
    split = '{{ $p := split "" (repeat 200000 "a") }}{{ $q := splitList "" (repeat 200000 "b") }}\n'
    out["helm-split-empty-200k"] = {**chart({"deploy.yaml": CHART_TEMPLATE, "x.yaml": split}),
                                    "__expect__": expect(f.SERVER, ("chart/templates/x.yaml", 1))}
    runtime = ("apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata: {{name: rt{i}}}\nspec:\n"
               "  supportedModelFormats: [{{name: vLLM}}]\n  containers:\n    - name: kserve-container\n"
               "      image: vllm/vllm-openai:v0.9.2\n      command: [python3, -m, vllm.entrypoints.openai.api_server]\n"
               "      args: [--model, /mnt/models, --max-model-len, '{{{{ .Values.maxLen }}}}']\n")
    isvc = ("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {{name: m{i}}}\nspec:\n"
            "  predictor:\n    model:\n      runtime: rt{i}\n      modelFormat: {{name: vLLM}}\n"
            "      storageUri: hf://Qwen/Qwen2.5-1.5B-Instruct\n      resources: {{limits: {{nvidia.com/gpu: '1'}}}}\n")
    out["helm-kserve-2000-runtime-joins"] = {
        **chart({"runtimes.yaml": "---\n".join(runtime.format(i=i) for i in range(2000)),
                 "isvcs.yaml": "---\n".join(isvc.format(i=i) for i in range(2000))}),
        "__expect__": expect(("chart/templates/isvcs.yaml", None))}
    return out


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = tenth_cases()[name]
    result = f.run_case(name, {k: v for k, v in files.items() if k != "__no_error__"}, base, timeout)
    result["problems"].extend(u.extra_problems(files, os.path.join(base, f"_scratch-{name}")))
    return result


TENTH_CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_tenth as e; "
               "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    return f.run_cli(__doc__.split("\n\n")[0], tenth_cases, "tenth", TENTH_CHILD)


if __name__ == "__main__":
    sys.exit(main())
