"""Hostile input, blind round 24 (issue 10): hostile inputs of my own aimed at what the last rounds changed and
tested least: shell `source` following (loops, sources of sources, 10,000 sources, a FIFO / link / device
sourced), Terraform functions (base64encode/base64decode of huge or invalid input, string-growing calls,
nested and recursive templatefile), Secret data holding vramlint's own unknown marker, KServe
LLMInferenceService baseRefs, KubeRay / LeaderWorkerSet groups with huge counts, Helm subchart bounds (a
`charts/` folder that is a link), Singularity/Apptainer exec, the default model, Hugging Face cache snapshot
paths with `..`, Argo CD / helmfile / Flux releases naming values outside the tree, and the issue's own
categories (FIFOs, links to / and .., /proc/self/environ, alias bombs, huge integers, terminal escapes, a
planted token).

Each case's expectation was written before the first run (committed with this file, before it). The runner is
round 23's (benchmarks/hostile_blind23.py: its audit-hook child, its expectation matching, its audit of what was
opened, listed, written or started), with a token and sentinel of this round's own and a wall-clock limit
(a run blocked on a FIFO is killed at 60 s and fails rather than hanging the harness). A case passes when:

- exit status 0 or 1 as the case says (never 2);
- under 5 CPU-seconds and 300 MB peak resident memory;
- each expected finding is there, on its file and line;
- the planted HF_TOKEN and the outside sentinel appear in no output, report or cache file;
- nothing outside the tree is opened or listed, nothing written outside the reports and the cache, no process.

    python benchmarks/hostile_blind24.py [--root CHECKOUT] [--only NAME,...] [--keep DIR] [--json FILE]
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hostile_blind23 as b23  # noqa: E402 - round 23's runner pieces, beside this file
from hostile_blind23 import (  # noqa: E402
    DEPLOY_TEMPLATE,
    Case,
    Expect,
    alias_bomb,
    application,
    chart,
    fifo,
    k8s_deployment,
    tf_deployment,
    write,
)

TOKEN = "hf_bLiNd24PlantedTokenZxCvBnMqWeRtYuIo"
SENTINEL = "OUTSIDE-SENTINEL-b24-c9e1"
WALL_LIMIT_S = 60.0


def plant_outside(outside: Path) -> None:
    write(outside / "secret.txt", f"token: {SENTINEL}\nHF_TOKEN={TOKEN}\n")
    write(outside / "secret.env", f"MODEL={SENTINEL}\nHF_TOKEN={TOKEN}\n")
    write(outside / "secret.yaml", f"vllm:\n  model: {SENTINEL}\n  maxLen: 1\n")
    write(outside / "chart" / "Chart.yaml", "apiVersion: v2\nname: stolen\nversion: 0.1.0\n")
    write(outside / "chart" / "values.yaml", f"vllm:\n  model: {SENTINEL}\n  maxLen: 1\n")
    write(outside / "chart" / "templates" / "d.yaml", DEPLOY_TEMPLATE, dedent=False)
    write(outside / "charts" / "stolen" / "Chart.yaml", "apiVersion: v2\nname: stolen\nversion: 0.1.0\n")
    write(outside / "charts" / "stolen" / "values.yaml", f"vllm:\n  model: {SENTINEL}\n  maxLen: 1\n")
    write(outside / "charts" / "stolen" / "templates" / "d.yaml", DEPLOY_TEMPLATE, dedent=False)
    write(outside / "model" / "config.json", json.dumps({
        "architectures": [SENTINEL], "model_type": SENTINEL, "hidden_size": 4096, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "intermediate_size": 14336,
        "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}))
    write(outside / "tpl" / "evil.tpl", f"{SENTINEL}\n")


CASES: list[Case] = []


def case(name, what, expect, exits=(0, 1), args=(), min_servers=0):
    def register(build):
        CASES.append(Case(name, what, build, expect, exits, tuple(args), min_servers))
        return build
    return register


def rel(target: Path, start: Path) -> str:
    return os.path.relpath(target, start)


# --- shell `source` following ---------------------------------------------------------------------------------

_LOOP = """\
#!/bin/bash
source ./a.sh
vllm serve "$MODEL" --max-model-len 40960000
"""


@case("sh-source-loop", "start.sh sources a.sh, a.sh sources b.sh, b.sh sources a.sh (a loop); MODEL set in b.sh",
      [Expect("start.sh", (3,))], args=("start.sh",), min_servers=1)
def _(repo, outside):
    write(repo / "start.sh", _LOOP)
    write(repo / "a.sh", "source ./b.sh\nLEN=1\n", dedent=False)
    write(repo / "b.sh", "source ./a.sh\nMODEL=Qwen/Qwen2.5-7B-Instruct\n", dedent=False)


@case("sh-source-10000", "10,000 `source ./env.sh` lines, then vllm serve (past the 16 sources followed)",
      [Expect("start.sh", (18,), text="16|limit|not followed|past"), Expect("start.sh", (10002,))],
      args=("start.sh",), min_servers=1)
def _(repo, outside):
    write(repo / "env.sh", "MODEL=Qwen/Qwen2.5-7B-Instruct\n", dedent=False)
    write(repo / "start.sh", "#!/bin/bash\n" + "source ./env.sh\n" * 10000
          + 'vllm serve "$MODEL" --max-model-len 40960000\n', dedent=False)


@case("sh-source-fifo", "`. ./pipe.env` where pipe.env is a FIFO", [Expect("start.sh", (2,), levels=("warning",))],
      args=("start.sh",))
def _(repo, outside):
    fifo(repo / "pipe.env")
    write(repo / "start.sh", "#!/bin/sh\n. ./pipe.env\nvllm serve Qwen/Qwen2.5-7B-Instruct\n", dedent=False)


@case("sh-source-link-root-and-outside", "`source ./root` (a link to /) and `source ./cfg.env` (a link to a file "
      "outside)", [Expect("start.sh", (2,)), Expect("start.sh", (3,), levels=("warning",))], args=("start.sh",))
def _(repo, outside):
    os.symlink("/", repo / "root")
    os.symlink(outside / "secret.env", repo / "cfg.env")
    write(repo / "start.sh", '#!/bin/sh\nsource ./root\nsource ./cfg.env\nvllm serve "$MODEL"\n', dedent=False)


@case("sh-source-devices", "`. /dev/stdin`, `source /dev/zero`, `source /proc/self/environ`",
      [Expect("start.sh", (2,)), Expect("start.sh", (3,)), Expect("start.sh", (4,))], args=("start.sh",))
def _(repo, outside):
    write(repo / "start.sh", '#!/bin/sh\n. /dev/stdin\nsource /dev/zero\nsource /proc/self/environ\n'
                             'vllm serve "$MODEL" --max-model-len 4096\n', dedent=False)


@case("sh-source-of-source-outside", "start.sh sources ./a.sh (in the tree), which sources /proc/self/environ and "
      "an outside file", [Expect("a.sh", (1, 2), alternatives=[Expect("start.sh", (2,))])], args=("start.sh",))
def _(repo, outside):
    write(repo / "a.sh", f". /proc/self/environ\nsource {outside / 'secret.env'}\nLEN=4096\n", dedent=False)
    write(repo / "start.sh", '#!/bin/sh\nsource ./a.sh\nvllm serve "$MODEL" --max-model-len "$LEN"\n', dedent=False)


# (corrected after the first run, my mistake: 200,000 of these lines are 5.9 MB, past the 5 MB read cap, which
# vramlint rightly said; 150,000 are 4.4 MB, the size the case meant)
@case("sh-source-150k-assignments", "a sourced env.sh of 150,000 assignments (4.4 MB), MODEL last; the length "
      "past the model", [Expect("start.sh", (3,), rule="VRL005", levels=("error",))], exits=(1,),
      args=("start.sh",), min_servers=1)
def _(repo, outside):
    body = "".join(f"export V{i}=\"{'x' * 12}\"\n" for i in range(150000))
    write(repo / "env.sh", body + "MODEL=Qwen/Qwen2.5-7B-Instruct\n", dedent=False)
    write(repo / "start.sh", "#!/bin/bash\n. ./env.sh\nvllm serve \"$MODEL\" --max-model-len 40960000\n",
          dedent=False)


@case("sh-source-6MB", "a sourced file of 6 MB (past the 5 MB read cap)", [Expect("start.sh", (2,),
                                                                                  levels=("warning", "note"))],
      args=("start.sh",))
def _(repo, outside):
    write(repo / "big.env", "# " + "p" * (6 * 1024 * 1024) + "\nMODEL=Qwen/Qwen2.5-7B-Instruct\n", dedent=False)
    write(repo / "start.sh", '#!/bin/sh\nsource ./big.env\nvllm serve "$MODEL"\n', dedent=False)


# --- Terraform functions -------------------------------------------------------------------------------------

def _locals(lines: list[str]) -> str:
    return "locals {\n" + "".join(f"  {x}\n" for x in lines) + "}\n"


@case("tf-base64encode-40-deep", "base64encode nested 40 deep over a 100,000-character local ((4/3)**40 growth)",
      [Expect("main.tf", (2, 3, 4 + 14))])
def _(repo, outside):
    inner = "local.seed"
    for _ in range(40):
        inner = f"base64encode({inner})"
    extra = _locals([f'seed = "{"s" * 100000}"', f"big  = {inner}"])
    write(repo / "main.tf", tf_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", '
                                          'local.big]', extra=extra), dedent=False)


@case("tf-base64decode-invalid", "--model from base64decode of text that is not base64, and of base64 whose bytes "
      "are not UTF-8", [Expect("main.tf", (14,))])
def _(repo, outside):
    bad_utf8 = base64.b64encode(b"\xff\xfe\xfd").decode()
    write(repo / "main.tf", tf_deployment(f'["--model", base64decode("!!not*base64!!"), "--served-model-name", '
                                          f'base64decode("{bad_utf8}")]'), dedent=False)


@case("tf-format-doubling-30", "30 locals each format(\"%s%s\", previous, previous) (2**30 characters)",
      [Expect("main.tf", tuple(range(2, 34)) + (33 + 14,))])
def _(repo, outside):
    lines = ['l0 = "ab"'] + [f'l{i} = format("%s%s", local.l{i - 1}, local.l{i - 1})' for i in range(1, 31)]
    write(repo / "main.tf", tf_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", '
                                          'local.l30]', extra=_locals(lines)), dedent=False)


@case("tf-replace-bomb", "replace(a, \"x\", a) three times over a 1,000-character local (10**12 characters)",
      [Expect("main.tf", (2, 3, 4, 5, 6 + 14))])
def _(repo, outside):
    lines = [f'a = "{"x" * 1000}"', 'b = replace(local.a, "x", local.a)', 'c = replace(local.b, "x", local.b)',
             'd = replace(local.c, "x", local.c)']
    write(repo / "main.tf", tf_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", '
                                          'local.d]', extra=_locals(lines)), dedent=False)


@case("tf-templatefile-recursive", "a template that calls templatefile() of itself twice (Terraform refuses a "
      "recursive templatefile)", [Expect("main.tf", (2,), alternatives=[Expect("a.tpl", (1,))])])
def _(repo, outside):
    write(repo / "a.tpl", '${templatefile("a.tpl", {})}${templatefile("a.tpl", {})}\n', dedent=False)
    write(repo / "main.tf", 'resource "kubectl_manifest" "vllm" {\n  yaml_body = templatefile("a.tpl", {})\n'
                            '  # vllm/vllm-openai\n}\n', dedent=False)


@case("tf-templatefile-nested-outside", "templatefile(a.tpl) whose a.tpl calls templatefile() of a file outside "
      "and file(\"/proc/self/environ\")", [Expect("main.tf", (2,), alternatives=[Expect("a.tpl", (1, 2))])])
def _(repo, outside):
    write(repo / "a.tpl", f'${{templatefile("{outside / "tpl" / "evil.tpl"}", {{}})}}\n'
                          '${file("/proc/self/environ")}\n', dedent=False)
    write(repo / "main.tf", 'resource "kubectl_manifest" "vllm" {\n  yaml_body = templatefile("a.tpl", {})\n'
                            '  # vllm/vllm-openai\n}\n', dedent=False)


@case("tf-base64decode-4MB-manifest", "yaml_body = base64decode(file(...)) of a 4 MB base64 Deployment whose "
      "--max-model-len is past the model", [Expect("main.tf", None, rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    body = k8s_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "40960000"]')
    body += "".join(f"# {'p' * 90}\n" for _ in range(32000))
    write(repo / "manifest.b64", base64.b64encode(body.encode()).decode() + "\n", dedent=False)
    write(repo / "main.tf", 'resource "kubectl_manifest" "vllm" {\n'
                            '  yaml_body = base64decode(trimspace(file("manifest.b64")))\n}\n', dedent=False)


# --- Secret data, KServe, groups -----------------------------------------------------------------------------

_SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: hf
type: Opaque
data:
  HF_TOKEN: "!!not base64 \u2983 at all!!"
"""


# (corrected after the first run, my mistake: a file that never mentions vLLM is not read at all, by design; the
# Secret now sits beside the vLLM Deployment that reads it)
@case("secret-planted-marker", "Secret data that is not base64 and holds vramlint's own unknown marker (U+2983) "
      "as written text (kubectl refuses it)", [Expect("secret.yaml", (7,), levels=("error",))], exits=(1,))
def _(repo, outside):
    write(repo / "secret.yaml", _SECRET + "---\n" + k8s_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct"]'),
          dedent=False)


_LLMISVC = """\
apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata:
  name: qwen
spec:
  baseRefs:
{refs}  model:
    uri: hf://Qwen/Qwen2.5-7B-Instruct
    name: Qwen/Qwen2.5-7B-Instruct
  replicas: 1
  template:
    containers:
      - name: main
        resources:
          limits:
            nvidia.com/gpu: "1"
"""


@case("llmisvc-baserefs-10000", "an LLMInferenceService with 10,000 baseRefs (configs not in the tree)",
      [Expect("llmisvc.yaml", (6, 7))], min_servers=1)
def _(repo, outside):
    refs = "".join(f"    - name: cfg-{i}\n" for i in range(10000))
    write(repo / "llmisvc.yaml", _LLMISVC.format(refs=refs), dedent=False)


@case("llmisvc-baseref-cycle", "an LLMInferenceServiceConfig whose baseRefs name itself, used by a service",
      [Expect("llmisvc.yaml", (7, 14, 24, 25))], min_servers=1)
def _(repo, outside):
    cfg = ("---\napiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceServiceConfig\nmetadata:\n  name: loop\n"
           "spec:\n  baseRefs:\n    - name: loop\n  template:\n    containers:\n      - name: main\n"
           "        args: [\"--max-model-len\", \"40960000\"]\n")
    write(repo / "llmisvc.yaml", _LLMISVC.format(refs="    - name: loop\n") + cfg, dedent=False)


_LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: {size}
    workerTemplate:
      spec:
        containers:
          - name: vllm
            image: vllm/vllm-openai:v0.8.5
            command: ["sh", "-c", "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 8 --pipeline-parallel-size 4 --distributed-executor-backend ray"]
            resources:
              limits:
                nvidia.com/gpu: 8
"""


@case("lws-size-10e30", "a LeaderWorkerSet whose size is 10**30 (LWS's size is an int32)",
      [Expect("lws.yaml", (8,))])
def _(repo, outside):
    write(repo / "lws.yaml", _LWS.format(size="1" + "0" * 30), dedent=False)


@case("lws-size-5000-digits", "a LeaderWorkerSet whose size has 5,000 digits", [Expect("lws.yaml", (8,))])
def _(repo, outside):
    write(repo / "lws.yaml", _LWS.format(size="9" * 5000), dedent=False)


_RAY = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: vllm
spec:
  headGroupSpec:
    rayStartParams: {{}}
    template:
      spec:
        containers:
          - name: head
            image: vllm/vllm-openai:v0.8.5
            command: ["sh", "-c", "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 64 --distributed-executor-backend ray"]
            resources:
              limits:
                nvidia.com/gpu: 1
  workerGroupSpecs:
    - groupName: gpu
      replicas: {replicas}
      minReplicas: 1
      maxReplicas: {replicas}
      numOfHosts: {hosts}
      rayStartParams: {{}}
      template:
        spec:
          containers:
            - name: worker
              image: vllm/vllm-openai:v0.8.5
              resources:
                limits:
                  nvidia.com/gpu: 1
"""


@case("kuberay-replicas-huge", "a KubeRay worker group of 10**18 replicas x 10**18 hosts (int32 fields)",
      [Expect("ray.yaml", (19, 21, 22))])
def _(repo, outside):
    write(repo / "ray.yaml", _RAY.format(replicas="1" + "0" * 18, hosts="1" + "0" * 18), dedent=False)


# --- Helm subcharts ------------------------------------------------------------------------------------------

@case("helm-charts-dir-link-root", "a chart whose charts/ folder is a symbolic link to /",
      [Expect("charts/vllm/Chart.yaml", None, alternatives=[Expect("charts/vllm/templates/deployment.yaml", None)])])
def _(repo, outside):
    chart(repo)
    os.symlink("/", repo / "charts" / "vllm" / "charts")


@case("helm-charts-dir-link-outside", "a chart whose charts/ folder is a link to an outside folder of charts",
      [Expect("charts/vllm/Chart.yaml", None, text="outside|link")])
def _(repo, outside):
    chart(repo)
    os.symlink(outside / "charts", repo / "charts" / "vllm" / "charts")


@case("helm-subchart-chartyaml-bomb", "a subchart whose Chart.yaml is a billion-laughs document",
      [Expect("charts/vllm/charts/bomb/Chart.yaml", None)])
def _(repo, outside):
    chart(repo)
    write(repo / "charts" / "vllm" / "charts" / "bomb" / "Chart.yaml",
          "apiVersion: v2\nname: bomb\nversion: 0.1.0\n" + alias_bomb(), dedent=False)


# --- Singularity / Apptainer, default model, HF cache paths --------------------------------------------------

@case("apptainer-env-file-environ", "apptainer exec --env-file /proc/self/environ --bind /:/host ... vllm serve "
      "with a length past the model", [Expect("run.sh", (2,), rule="VRL005")], exits=(1,), args=("run.sh",),
      min_servers=1)
def _(repo, outside):
    write(repo / "run.sh", "#!/bin/bash\napptainer exec --nv --env-file /proc/self/environ --bind /:/host "
                           "docker://vllm/vllm-openai:v0.8.5 vllm serve Qwen/Qwen2.5-7B-Instruct "
                           "--max-model-len 40960000\n", dedent=False)


@case("singularity-exec-200-deep", "singularity exec nested 200 times before vllm serve",
      [Expect("run.sh", (2,))], args=("run.sh",))
def _(repo, outside):
    write(repo / "run.sh", "#!/bin/bash\n" + "singularity exec --nv vllm.sif " * 200
          + "vllm serve Qwen/Qwen2.5-7B-Instruct\n", dedent=False)


@case("default-model-huge-len", "vLLM 0.8.5 image, no model named, --max-model-len 99999999 (past the default "
      "model facebook/opt-125m's 2,048)", [Expect("deploy.yaml", (11,), rule="VRL005", levels=("error",))],
      exits=(1,), min_servers=1)
def _(repo, outside):
    write(repo / "deploy.yaml", k8s_deployment('["--max-model-len", "99999999"]'), dedent=False)


@case("model-path-outside", "--model ../outside/model (a folder outside the tree with a config.json) and "
      "--model /proc/self", [Expect("deploy.yaml", (11,)), Expect("deploy2.yaml", (11,))], min_servers=2)
def _(repo, outside):
    write(repo / "deploy.yaml", k8s_deployment(f'["--model", "{outside / "model"}"]'), dedent=False)
    write(repo / "deploy2.yaml", k8s_deployment('["--model", "/proc/self"]'), dedent=False)


@case("hf-snapshot-dotdot", "--model .../models--a--b/snapshots/../../x and models--Qwen--..--..--etc/snapshots/"
      "0123abc", [Expect("deploy.yaml", (11,)), Expect("deploy2.yaml", (11,))], min_servers=2)
def _(repo, outside):
    write(repo / "deploy.yaml", k8s_deployment(
        '["--model", "/root/.cache/huggingface/hub/models--a--b/snapshots/../../x"]'), dedent=False)
    write(repo / "deploy2.yaml", k8s_deployment(
        '["--model", "/root/.cache/huggingface/hub/models--Qwen--..--..--etc/snapshots/0123abc"]'), dedent=False)


@case("hf-snapshot-in-repo-link", "--model ./models--Qwen--Qwen2.5-7B-Instruct/snapshots/0123abcd, a folder of the"
      " repository that is a link to the outside model", [Expect("deploy.yaml", (11,))], min_servers=1)
def _(repo, outside):
    snap = repo / "models--Qwen--Qwen2.5-7B-Instruct" / "snapshots"
    snap.mkdir(parents=True)
    os.symlink(outside / "model", snap / "0123abcd")
    write(repo / "deploy.yaml", k8s_deployment('["--model", "./models--Qwen--Qwen2.5-7B-Instruct/snapshots/'
                                               '0123abcd"]'), dedent=False)


# --- Argo CD, helmfile, Flux values outside the tree ---------------------------------------------------------

_REF_LINE = 20  # the `$values/..` entry


@case("argo-valuefiles-ref-dotdot", "a multi-source Application: `$values/../../outside/secret.yaml` through a "
      "ref source", [Expect("gitops/app.yaml", (_REF_LINE,))])
def _(repo, outside):
    chart(repo)
    text = ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: vllm\n  namespace: argocd\n"
            "spec:\n  destination:\n    namespace: ai\n  sources:\n"
            "    - repoURL: https://example.invalid/x.git\n      ref: values\n"
            "    - repoURL: https://example.invalid/x.git\n      path: charts/vllm\n      helm:\n"
            "        valueFiles:\n          - values.yaml\n          - values.yaml\n          - values.yaml\n"
            "          - values.yaml\n"
            f"          - $values/../../{rel(outside / 'secret.yaml', repo)}\n")
    assert text.split("\n")[_REF_LINE - 1].strip().startswith("- $values"), "case text moved"
    write(repo / "gitops" / "app.yaml", text, dedent=False)


@case("helmfile-values-absolute-outside", "helmfile release values: /etc/hostname and an absolute outside file",
      [Expect("helmfile.yaml", (5,)), Expect("helmfile.yaml", (6,))])
def _(repo, outside):
    chart(repo)
    write(repo / "helmfile.yaml", "releases:\n  - name: vllm\n    chart: ./charts/vllm\n    values:\n"
                                  f"      - /etc/hostname\n      - {outside / 'secret.yaml'}\n", dedent=False)


_FLUX_GIT = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: vllm
spec:
  interval: 5m
  chart:
    spec:
      chart: ./charts/vllm
      sourceRef:
        kind: GitRepository
        name: self
      valuesFiles:
        - ./charts/vllm/values.yaml
        - {outside_values}
  values:
    vllm:
      maxLen: 4096
"""


@case("flux-valuesfiles-outside", "a Flux HelmRelease whose chart.spec.valuesFiles names a file outside the tree",
      [Expect("release.yaml", (15,))])
def _(repo, outside):
    chart(repo)
    write(repo / "release.yaml", _FLUX_GIT.format(outside_values=rel(outside / "secret.yaml", repo)), dedent=False)


@case("argo-path-absolute-dotdot", "an Application whose source.path is /../../outside/chart",
      [Expect("gitops/app.yaml", (11,))])
def _(repo, outside):
    chart(repo)
    write(repo / "gitops" / "app.yaml", application(["values.yaml"], path="/../../outside/chart"), dedent=False)


# --- the categories ----------------------------------------------------------------------------------

@case("dir-links-root-and-up", "folders linking to / and to .. beside a Deployment whose length is past the model",
      [Expect("deploy.yaml", (11,), rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    os.symlink("/", repo / "rootlink")
    (repo / "sub").mkdir()
    os.symlink("..", repo / "sub" / "up")
    os.symlink(outside, repo / "sub" / "out")
    write(repo / "deploy.yaml", k8s_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", '
                                               '"40960000"]'), dedent=False)


_KUBEAI = """\
apiVersion: kubeai.org/v1
kind: Model
metadata:
  name: qwen
spec:
  features: [TextGeneration]
  url: !Ref hf://Qwen/Qwen2.5-7B-Instruct
  engine: VLLM
  resourceProfile: nvidia-gpu-l4:1
  minReplicas: {replicas}
  maxReplicas: {replicas}
  args:
    - --max-model-len=40960000
"""


@case("kubeai-ref-tag-huge-replicas", "a KubeAI Model with a `!Ref` tag on its url and replicas of 4,000 digits "
      "(the fuzz timeout's shape)", [Expect("kubeai.yaml", (7, 10, 11, 13))])
def _(repo, outside):
    write(repo / "kubeai.yaml", _KUBEAI.format(replicas="7" * 4000), dedent=False)


_ESC = "\x1b]8;;http://x\x07\x1b[2J::error file=x,line=1::pwned"


@case("terminal-escapes-in-args", "a --served-model-name and an unknown flag holding ESC sequences and ::error::, "
      "on a new line of the YAML string", [Expect("deploy.yaml", (11,))])
def _(repo, outside):
    args = json.dumps(["--model", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", "\n" + _ESC,
                       "--" + _ESC.replace("\x1b", "\\x1b") + "-flag\x1b[0m", "1"], ensure_ascii=True)
    write(repo / "deploy.yaml", k8s_deployment(args), dedent=False)


@case("planted-token-in-manifest", "the planted HF token written as an env value, a --hf-token arg and a served "
      "name", [Expect("deploy.yaml", (11,))])
def _(repo, outside):
    text = k8s_deployment(f'["--model", "Qwen/Qwen2.5-7B-Instruct", "--hf-token", "{TOKEN}", '
                          f'"--served-model-name", "{TOKEN}", "--bogus-flag", "{TOKEN}"]')
    text += f"          env:\n            - name: HF_TOKEN\n              value: {TOKEN}\n"
    write(repo / "deploy.yaml", text, dedent=False)


@case("tp-5000-digits-and-config-environ", "--tensor-parallel-size of 5,000 digits; --config /proc/self/environ",
      [Expect("deploy.yaml", (11,)), Expect("deploy2.yaml", (11,))])
def _(repo, outside):
    write(repo / "deploy.yaml", k8s_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "'
                                               + "8" * 5000 + '"]'), dedent=False)
    write(repo / "deploy2.yaml", k8s_deployment('["--config", "/proc/self/environ"]'), dedent=False)


@case("fifo-and-link-manifests", "a manifest that is a FIFO, one that links to /proc/self/environ, one to outside",
      [Expect("deploy.yaml", (11,), rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    fifo(repo / "pipe.yaml")
    os.symlink("/proc/self/environ", repo / "environ.yaml")
    os.symlink(outside / "secret.yaml", repo / "outside.yaml")
    write(repo / "deploy.yaml", k8s_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", '
                                               '"40960000"]'), dedent=False)


# ----------------------------------------------------------------------------------------------------------------
# the runner: round 23's checks, this round's secrets, a wall-clock limit


def run_case(c: Case, checkout: Path, work: Path) -> dict:
    b23.TOKEN, b23.SENTINEL, b23.plant_outside = TOKEN, SENTINEL, plant_outside
    return b23.run_case(c, checkout, work, wall_limit=WALL_LIMIT_S)


def main() -> int:
    return b23.main(CASES, run_case, "blind24-", __doc__)


if __name__ == "__main__":
    sys.exit(main())
