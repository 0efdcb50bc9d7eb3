"""A sixth round of hostile inputs, aimed at code added since the fifth and at the slow paths left behind the fast
ones, judged as `hostile_fresh.py` judges.

    python3 benchmarks/hostile_ninth.py [--case NAME ...] [--keep DIR] [--timeout 60] [--cpu-time]

20,000 `--middleware` values vLLM cannot import (one root cause: build_app stops at the first), dotted names with
empty parts; 300,000 indices in CUDA_VISIBLE_DEVICES (a pod's and a compose service's); 3,000 Karpenter NodePools
joined with 3,000 Deployments that each select 60 of them; a dstack service whose GPU list has 50,000 names and a
count of `1e999`; 4.9 MB of Deployments with one document that the libyaml reader does not decide (a tagged scalar,
a tab, an unquoted date, a syntax error at the end); a values file of 240,000 nodes with one tag; a Dockerfile
whose stages name each other and whose ENV doubles 60 times; a LeaderWorkerSet of 2**62 pods and TP 2**40; a Ray
serveConfigV2 holding an alias bomb; a Kustomization that names /proc/self/environ, /etc and a URL everywhere a
file goes; a `.vramlint.yaml` fleet of 41,000 GPU names.

Each case runs `vramlint check . --offline` with `hostile_fresh.run_case` (every output format, the planted secrets,
the audit hook) and `hostile_unseen.extra_problems` (GitHub lines decoded as the runner decodes them, markdown).
These cases were made while the fixes they led to were written (this file's round): in-sample for those fixes.
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
COMPOSE_HEAD = h.COMPOSE_HEAD


def _bomb_lines(indent: str) -> str:
    rows = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]" for i in range(8)]
    return "".join(indent + row + "\n" for row in rows)


def ninth_cases() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    one = deployment(QWEN + ["--max-model-len", "4096"])
    # --- --middleware (VRL005 since the eighth round) ---
    many = QWEN + [x for i in range(20_000) for x in ("--middleware", f"vllm.x{i}.y")]
    text = deployment(many).replace("vllm/vllm-openai:v0.8.5", "vllm/vllm-openai:v0.9.0")
    out["middleware-20k-unimportable"] = {"deploy.yaml": text,
                                          "__expect__": expect(("deploy.yaml", None, "VRL005"))}
    odd = QWEN + ["--middleware", "vllm..x", "--middleware", ".", "--middleware", "..y", "--middleware", "\x00.a"]
    text = deployment(odd).replace("vllm/vllm-openai:v0.8.5", "vllm/vllm-openai:v0.9.0")
    out["middleware-empty-parts"] = {"deploy.yaml": text, "__expect__": expect(("deploy.yaml", None, "VRL005"))}
    # --- visible devices (podspec.narrow_to_visible_devices) ---
    devices = ",".join(map(str, range(300_000)))
    text = deployment(QWEN + ["-tp", "2"]).replace(
        "          resources:", f"          env:\n            - name: CUDA_VISIBLE_DEVICES\n              value: \"{devices}\"\n"
        "          resources:", 1)
    out["visible-devices-300k-pod"] = {"deploy.yaml": text, "__expect__": expect(("deploy.yaml", None))}
    compose = (COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct -tp 2\n    environment:\n"
               f"      CUDA_VISIBLE_DEVICES: \"{devices}\"\n      NVIDIA_VISIBLE_DEVICES: \"0,0,-1,{'9' * 400},GPU-\"\n")
    out["visible-devices-300k-compose"] = {"compose.yaml": compose}
    # --- the NodePool join ---
    docs = [f"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: p{i}\nspec:\n  template:\n    metadata:\n"
            f"      labels: {{team: t{i % 50}}}\n    spec:\n      requirements:\n"
            "        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6, p4d]}\n"
            for i in range(3000)]
    docs += [one.replace("name: llm", f"name: llm-{i}").replace("cloud.google.com/gke-accelerator: nvidia-l4",
                                                               f"team: t{i % 50}", 1)
             .replace('"4096"', f'"{1000 + i}"') for i in range(3000)]
    out["nodepools-3000-deployments-3000"] = {"all.yaml": "---\n".join(docs)}
    # --- dstack ---
    names = ", ".join(f"G{i}" for i in range(50_000))
    out["dstack-50k-gpu-names-1e999"] = {
        "b.dstack.yml": "type: task\nimage: vllm/vllm-openai:v0.9.0\ncommands:\n"
        + "".join(f"  - export X{i}=$X{i - 1}$X{i - 1}\n" for i in range(1, 50))
        + "  - vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name $X49\n"
        f"resources:\n  gpu: {{name: [H100, A100, {names}], count: 1e999}}\n",
        "__expect__": expect(("b.dstack.yml", None))}
    # --- one odd document in 4.9 MB of Deployments ---
    big = "---\n".join(one.replace("name: llm", f"name: llm-{i}") for i in range(int(4.9e6 / len(one))))
    for label, odd_doc, at_start in (("tag", "kind: ConfigMap\nx: !!str 1\n", False),
                                     ("date", "kind: ConfigMap\nx: 2024-01-01\n", False),
                                     ("tab", "kind: ConfigMap\nx: \"a\tb\"\n", True),
                                     ("syntax-error-at-end", "kind: ConfigMap\nx: [1,\n", False)):
        text = odd_doc + "---\n" + big if at_start else big + "---\n" + odd_doc
        case: dict[str, Any] = {"deploy.yaml": text}  # every Deployment is fine: nothing to say but the error
        if label == "syntax-error-at-end":
            case["__expect__"] = expect(("deploy.yaml", text.count("\n"), "VRL102"))
        out[f"manifests-4.9MB-one-{label}"] = case
    values = "image: vllm/vllm-openai:v0.9.0\nx: !!str 1\n" + "".join(f"k{i}: v{i}\n" for i in range(120_000))
    # (expectation changed in the thirteenth round: `!!str` is read by the C-backed load since then, so the file is
    # read whole in about a second, and no bound is passed to say; before, the tag sent it to ruamel's load, whose
    # 40,000-node bound refused it, said as VRL102)
    out["values-240k-nodes-one-tag"] = {"values.yaml": values, "__expect__": expect()}
    # --- Dockerfile, LWS, Ray, Kustomize, configuration ---
    out["dockerfile-stage-loop-env-doubling"] = {
        "compose.yaml": "services:\n  vllm:\n    build: {context: ., dockerfile: Dockerfile}\n"
        "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n",
        "Dockerfile": "FROM b AS a\nFROM a AS b\nENV V0=abcdefgh\n" + "".join(f"ENV V{i}=$V{i - 1}$V{i - 1}\n"
                                                                         for i in range(1, 60))
        + 'ENTRYPOINT ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--served-model-name", "$V59"]\n'
        'CMD ["--max-model-len", "${V59}"]\n'}
    lws = ("apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: vllm\nspec:\n"
           f"  replicas: {2 ** 62}\n  leaderWorkerTemplate:\n    size: {2 ** 62}\n    leaderTemplate:\n      spec:\n"
           "        containers:\n          - name: vllm-leader\n            image: vllm/vllm-openai:v0.9.0\n"
           "            command: [\"sh\", \"-c\", \"python3 -m vllm.entrypoints.openai.api_server --model "
           f"Qwen/Qwen2.5-1.5B-Instruct --tensor-parallel-size {2 ** 40} --pipeline-parallel-size {2 ** 40}\"]\n"
           f"            resources: {{limits: {{nvidia.com/gpu: \"{2 ** 40}\"}}}}\n")
    out["lws-2pow62-pods-tp-2pow40"] = {"lws.yaml": lws, "__expect__": expect(("lws.yaml", None, "VRL006"))}
    ray = ("apiVersion: ray.io/v1\nkind: RayService\nmetadata:\n  name: r\nspec:\n  serveConfigV2: |\n"
           + _bomb_lines("    ") + "    applications:\n      - name: llm\n        import_path: ray.serve.llm:build_openai_app\n"
           "        args:\n          llm_configs:\n            - model_loading_config: {model_id: *i}\n")
    out["ray-serve-config-alias-bomb"] = {"ray.yaml": ray, "__expect__": expect(("ray.yaml", None, "VRL102"))}
    out["kustomize-paths-everywhere"] = {
        "kustomization.yaml": "resources:\n  - /etc\n  - ../../../../etc/passwd\n  - https://example.com/x.yaml\n"
        "patches:\n  - path: /proc/self/environ\n  - path: ../../outside.yaml\npatchesStrategicMerge:\n"
        "  - /proc/self/environ\nconfigMapGenerator:\n  - name: x\n    files: [/proc/self/environ]\nhelmCharts:\n"
        "  - name: vllm\n    repo: https://example.com\n    valuesFile: /proc/self/environ\n",
        "deploy.yaml": one}
    out["config-fleet-41k-gpu-names"] = {
        ".vramlint.yaml": "gpu:\n" + "".join(f"  - H100-{i}\n" for i in range(1000))
        + "  - A100-80GB\n  - L4\n" * 20_000, "deploy.yaml": one,
        "__expect__": expect((".vramlint.yaml", None, "VRL102"))}
    return out


def run_case(name: str, base: str, timeout: float) -> dict[str, Any]:
    files = ninth_cases()[name]
    result = f.run_case(name, files, base, timeout)
    result["problems"].extend(u.extra_problems(files, os.path.join(base, f"_scratch-{name}")))
    return result


NINTH_CHILD = ("import json, sys; sys.path.insert(0, sys.argv[1]); import hostile_ninth as e; "
               "print(json.dumps(e.run_case(sys.argv[2], sys.argv[3], float(sys.argv[4]))))")


def main() -> int:
    return f.run_cli(__doc__.split("\n\n")[0], ninth_cases, "ninth", NINTH_CHILD)


if __name__ == "__main__":
    sys.exit(main())
