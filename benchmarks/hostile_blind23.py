"""Hostile input, blind round 23 (issue 10): hostile inputs of my own aimed at the readers of round 21 (Terraform
HCL reading and evaluation, Helm releases from Argo CD Applications / helmfile / Flux HelmRelease, Sprig tpl /
mergeOverwrite / fromYaml, the architecture and --quantization checks against a checkpoint's config.json, systemd
drop-ins and EnvironmentFile=, kustomize components) and every category of the issue.

Each case was written with its expectation before the first run (committed before it). Every case is run as
`vramlint check` in a process of its own, from the checkout given with --root, with every report format written,
under a Python audit hook that logs the files it opens, the folders it lists and the processes it starts. A case
passes when all of these hold:

- exit status 0 or 1 as the case says (never 2: an internal error or a crash);
- under 5 CPU-seconds (user + system of the process) and 300 MB peak resident memory;
- each finding it expects is there, on its file and line (alternatives where the case names more than one place);
- the planted HF_TOKEN (in vramlint's environment, and in /proc/self/environ) and the sentinel written in the
  files outside the scanned tree appear nowhere: stdout, stderr, every report file, the cache;
- nothing outside the tree is opened or listed (other than Python's own files and vramlint's), nothing is written
  outside the report folder and the cache, and no process is started.

    python benchmarks/hostile_blind23.py [--root CHECKOUT] [--only NAME,...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

TOKEN = "hf_bLiNd23PlantedTokenQwErTyUiOpAsDfGh"
SENTINEL = "OUTSIDE-SENTINEL-b23-7f3a"
CPU_LIMIT_S = 5.0
RSS_LIMIT_MB = 300.0
HERE = Path(__file__).resolve().parent


@dataclass
class Expect:
    """A finding on `file` (path relative to the repository, or a suffix of it) at one of `lines` (None: any line),
    of `rule` (None: any), with a message matching `text` (a regex, case-insensitive; None: any), of one of
    `levels` (None: any). `alternatives` are other places that satisfy the same expectation."""
    file: str
    lines: tuple[int, ...] | None = None
    rule: str | None = None
    text: str | None = None
    levels: tuple[str, ...] | None = None
    alternatives: list[Expect] = field(default_factory=list)


@dataclass
class Case:
    name: str
    what: str
    build: object  # callable(repo: Path, outside: Path) -> None
    expect: list[Expect]
    exits: tuple[int, ...] = (0, 1)
    args: tuple[str, ...] = ()
    min_servers: int = 0
    raw_free: bool = True  # no raw ESC / no line starting with a planted workflow command in text/github output


def write(path: Path, text: str, dedent: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text) if dedent else text)


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line holding needle, in the dedented text (the expectation names the line that
    wrote the hostile reference, found here rather than counted by hand)."""
    seen = 0
    for number, line in enumerate(textwrap.dedent(text).split("\n"), 1):
        if needle in line:
            seen += 1
            if seen == nth:
                return number
    raise ValueError(f"{needle!r} not in the case's text")


def fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def plant_outside(outside: Path) -> None:
    write(outside / "secret.txt", f"token: {SENTINEL}\nHF_TOKEN={TOKEN}\n")
    write(outside / "secret.env", f"MODEL={SENTINEL}\nHF_TOKEN={TOKEN}\n")
    write(outside / "secret.yaml", f"vllm:\n  model: {SENTINEL}\n  maxLen: 1\n")
    write(outside / "tfmod" / "main.tf", f'''\
        resource "kubernetes_deployment" "stolen" {{
          spec {{
            template {{
              spec {{
                container {{
                  image = "vllm/vllm-openai:v0.8.5"
                  args  = ["--model", "{SENTINEL}"]
                }}
              }}
            }}
          }}
        }}
        ''')
    write(outside / "chart" / "Chart.yaml", "apiVersion: v2\nname: stolen\nversion: 0.1.0\n")
    write(outside / "chart" / "values.yaml", f"model: {SENTINEL}\n")
    write(outside / "chart" / "templates" / "d.yaml", DEPLOY_TEMPLATE)
    write(outside / "comp" / "kustomization.yaml",
          f"apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels:\n  s: {SENTINEL}\n")
    write(outside / "secret.conf", f"[Service]\nEnvironment=MODEL={SENTINEL}\n")
    write(outside / "helmfile.yaml", f"releases:\n- name: x\n  chart: ./chart\n  values:\n  - model: {SENTINEL}\n")


# ----------------------------------------------------------------------------------------------------------------
# shared pieces

DEPLOY_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "{{ .Values.vllm.model }}", "--max-model-len", "{{ .Values.vllm.maxLen }}"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def chart(repo: Path, where: str = "charts/vllm", template: str = DEPLOY_TEMPLATE,
          values: str = "vllm:\n  model: Qwen/Qwen2.5-7B-Instruct\n  maxLen: 8192\n") -> None:
    write(repo / where / "Chart.yaml", "apiVersion: v2\nname: vllm\nversion: 0.1.0\n", dedent=False)
    write(repo / where / "values.yaml", values, dedent=False)
    write(repo / where / "templates" / "deployment.yaml", template, dedent=False)


def tf_deployment(args_hcl: str, extra: str = "", resource_extra: str = "") -> str:
    """A kubernetes_deployment in the provider's block form whose container args are `args_hcl`."""
    return f'''\
{extra}resource "kubernetes_deployment" "vllm" {{
{resource_extra}  metadata {{
    name = "vllm"
  }}
  spec {{
    template {{
      metadata {{
        labels = {{ app = "vllm" }}
      }}
      spec {{
        container {{
          name  = "vllm"
          image = "vllm/vllm-openai:v0.8.5"
          args  = {args_hcl}
          resources {{
            limits = {{
              "nvidia.com/gpu" = 1
            }}
          }}
        }}
      }}
    }}
  }}
}}
'''


def k8s_deployment(args: str, image: str = "vllm/vllm-openai:v0.8.5") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: {image}
          args: {args}
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def application(valuefiles: list[str], path: str = "charts/vllm", extra: str = "") -> str:
    files = "".join(f"        - {v}\n" for v in valuefiles)
    return (f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: vllm\n  namespace: argocd\n"
            f"spec:\n  destination:\n    namespace: ai\n  source:\n    repoURL: https://example.invalid/x.git\n"
            f"    path: {path}\n{extra}    helm:\n      valueFiles:\n{files}")


def alias_bomb(levels: int = 9, width: int = 9, indent: str = "") -> str:
    out = [f"{indent}a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        out.append(f"{indent}a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------------------------
# the cases: each builds its tree and says what must come out


CASES: list[Case] = []


def case(name, what, expect, exits=(0, 1), args=(), min_servers=0):
    def register(build):
        CASES.append(Case(name, what, build, expect, exits, tuple(args), min_servers))
        return build
    return register


# --- Terraform ---------------------------------------------------------------------------------------------------

_HEREDOC_HEAD = 'resource "kubectl_manifest" "vllm" {\n  yaml_body = <<-YAML\n'


@case("tf-heredoc-1.2MB", "a kubectl_manifest heredoc of 1.2 million characters (past the 1,000,000 bound)",
      [Expect("main.tf", (2,))])
def _(repo, outside):
    body = k8s_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct"]')
    pad = "".join(f"    # {'p' * 90}\n" for _ in range(13000))
    text = _HEREDOC_HEAD + textwrap.indent(body, "    ") + pad + "  YAML\n}\n"
    write(repo / "main.tf", text, dedent=False)


@case("tf-parens-5000", "an args element inside 5,000 parentheses", [Expect("main.tf", (14,))])
def _(repo, outside):
    deep = "(" * 5000 + '"Qwen/Qwen2.5-7B-Instruct"' + ")" * 5000
    write(repo / "main.tf", tf_deployment(f'["--model", {deep}]'), dedent=False)


_FOR_LOCALS = """\
locals {
  a     = [for i in range(1024) : i]
  b     = [for x in local.a : [for y in local.a : [for z in local.a : "${x}-${y}-${z}"]]]
  flags = join(",", flatten(local.b))
}
"""


@case("tf-for-cubed", "nested for-expressions over range(1024) three deep (10**9 values) reaching an arg",
      [Expect("main.tf", (3, 4, 5 + 14))])
def _(repo, outside):
    write(repo / "main.tf", tf_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", '
                                          'local.flags]', extra=_FOR_LOCALS), dedent=False)


@case("tf-count-1e12", "count = 1000000000000 on the Deployment", [Expect("main.tf", (2,))])
def _(repo, outside):
    write(repo / "main.tf", tf_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct"]',
                                          resource_extra="  count = 1000000000000\n"), dedent=False)


@case("tf-for-each-100k", "for_each over a map of 100,000 keys built by a for-expression", [Expect("main.tf", (2,))])
def _(repo, outside):
    write(repo / "main.tf", tf_deployment(
        '["--model", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", each.key]',
        resource_extra="  for_each = { for i in range(100000) : tostring(i) => i }\n"), dedent=False)


@case("tf-number-5000-digits", "--max-model-len from an HCL number literal of 5,000 digits",
      [Expect("main.tf", (14,))])
def _(repo, outside):
    write(repo / "main.tf", tf_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", '
                                          f'tostring({"9" * 5000})]'), dedent=False)


@case("tf-number-1e400", "--gpu-memory-utilization from 1e400 in a variable default",
      [Expect("main.tf", (2, 14 + 3))])
def _(repo, outside):
    write(repo / "main.tf", tf_deployment(
        '["--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu-memory-utilization", tostring(var.util)]',
        extra='variable "util" {\n  default = 1e400\n}\n'), dedent=False)


@case("tf-module-outside", "a module block whose source is a folder outside the tree (with a vLLM module in it)",
      [Expect("main.tf", (2,), text="outside")])
def _(repo, outside):
    write(repo / "main.tf", f'module "llm" {{\n  source = "{os.path.relpath(outside / "tfmod", repo)}"\n'
                            '  model  = "Qwen/Qwen2.5-7B-Instruct"\n}\n\n' + tf_deployment('["--model", "x/y"]'),
          dedent=False)


@case("tf-module-root", "module sources `/` and a long ../ chain to /etc", [Expect("main.tf", (2,)),
                                                                            Expect("main.tf", (5,))])
def _(repo, outside):
    write(repo / "main.tf", 'module "root" {\n  source = "/"\n}\nmodule "etc" {\n'
                            '  source = "../../../../../../../../../../etc"\n}\n\n'
          + tf_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct"]'), dedent=False)


@case("tf-cycles", "variable defaults naming each other and locals in a cycle, used as the model and a length",
      [Expect("main.tf", (2, 5, 8, 9, 10 + 14))])
def _(repo, outside):
    extra = ('variable "m" {\n  default = var.n\n}\nvariable "n" {\n  default = var.m\n}\nlocals {\n'
             '  a = local.b\n  b = "${local.a}0"\n}\n')
    write(repo / "main.tf", tf_deployment('["--model", var.m, "--max-model-len", local.a]', extra=extra),
          dedent=False)


@case("tf-templatefile-environ", "yaml_body = templatefile(\"/proc/self/environ\", {})",
      [Expect("main.tf", (2,))])
def _(repo, outside):
    write(repo / "main.tf", 'resource "kubectl_manifest" "vllm" {\n  yaml_body = templatefile("/proc/self/environ",'
                            ' { model = "vllm/vllm-openai" })\n}\n', dedent=False)


@case("tf-file-outside", "file() of a path going out of the module with ../", [Expect("main.tf", (2,))])
def _(repo, outside):
    write(repo / "main.tf", 'resource "kubectl_manifest" "vllm" {\n  yaml_body = file("${path.module}/'
                            f'{os.path.relpath(outside / "secret.txt", repo)}")\n  # vllm serve\n}}\n', dedent=False)


@case("tf-file-link-fifo-devzero", "file() of a link out of the tree, of a FIFO and of /dev/zero",
      [Expect("main.tf", (2,)), Expect("main.tf", (5,)), Expect("main.tf", (8,))])
def _(repo, outside):
    (repo / "manifests").mkdir(parents=True)
    os.symlink(outside / "secret.txt", repo / "manifests" / "link.yaml")
    fifo(repo / "manifests" / "pipe.yaml")
    write(repo / "main.tf", 'resource "kubectl_manifest" "a" {\n  yaml_body = file("manifests/link.yaml")\n}\n'
                            'resource "kubectl_manifest" "b" {\n  yaml_body = file("manifests/pipe.yaml")\n}\n'
                            'resource "helm_release" "vllm" {\n  values = [file("/dev/zero")]\n'
                            '  chart = "vllm-stack"\n  repository = "https://vllm-project.github.io/production-stack"'
                            '\n}\n', dedent=False)


@case("tf-json-nested-100k", "a .tf.json resource holding 100,000 nested arrays", [Expect("main.tf.json", (1,))])
def _(repo, outside):
    write(repo / "main.tf.json", '{"resource": {"kubernetes_deployment": {"vllm": {"spec": '
          + "[" * 100000 + '"vllm/vllm-openai"' + "]" * 100000 + "}}}}\n", dedent=False)


@case("tf-3000-deployments", "3,000 vLLM Deployments in one 2.4 MB .tf (past 2,000 resources a file)",
      [Expect("main.tf", None, text="2,000|2000")])
def _(repo, outside):
    one = tf_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "4096"]')
    write(repo / "main.tf", "".join(one.replace('"vllm" {', f'"vllm{i}" {{', 1) for i in range(3000)),
          dedent=False)


# --- Helm releases -----------------------------------------------------------------------------------------------

@case("argo-valuefiles-outside-environ", "Application valueFiles: a ../ path out of the tree and /proc/self/environ",
      [Expect("gitops/app.yaml", (14,)), Expect("gitops/app.yaml", (15,))])
def _(repo, outside):
    chart(repo)
    write(repo / "gitops" / "app.yaml",
          application([os.path.relpath(outside / "secret.yaml", repo / "charts" / "vllm"), "/proc/self/environ"]),
          dedent=False)


@case("argo-valuefiles-fifo-link-devzero", "Application valueFiles: a FIFO, a link out of the tree, /dev/zero",
      [Expect("gitops/app.yaml", (14,)), Expect("gitops/app.yaml", (15,)), Expect("gitops/app.yaml", (16,))])
def _(repo, outside):
    chart(repo)
    fifo(repo / "charts" / "vllm" / "pipe.yaml")
    os.symlink(outside / "secret.yaml", repo / "charts" / "vllm" / "link.yaml")
    write(repo / "gitops" / "app.yaml", application(["pipe.yaml", "link.yaml", "/dev/zero"]), dedent=False)


@case("argo-path-dotdot", "an Application whose source.path climbs out of the repository to a chart",
      [Expect("gitops/app.yaml", (11,))])
def _(repo, outside):
    chart(repo)
    write(repo / "gitops" / "app.yaml", application(["values.yaml"], path="../outside/chart"), dedent=False)


@case("argo-duplicate-path", "an Application with `path:` written twice in its source",
      [Expect("gitops/app.yaml", (12,))])
def _(repo, outside):
    chart(repo)
    chart(repo, "charts/other", values="vllm:\n  model: Qwen/Qwen2.5-1.5B-Instruct\n  maxLen: 2048\n")
    write(repo / "gitops" / "app.yaml", application(["values.yaml"], extra="    path: charts/other\n"),
          dedent=False)


_HELMFILE_CYCLE = """\
helmfiles:
  - path: helmfile.yaml
  - path: ../outside/helmfile.yaml
releases:
  - name: vllm
    chart: ./charts/vllm
    values:
      - values/root-link.yaml
      - values/ok.yaml
"""


@case("helmfile-cycle-rootlink", "a helmfile including itself and one outside, a values file that links to /",
      [Expect("helmfile.yaml", (8,))])
def _(repo, outside):
    chart(repo)
    write(repo / "helmfile.yaml", _HELMFILE_CYCLE)
    write(repo / "values" / "ok.yaml", "vllm:\n  maxLen: 4096\n", dedent=False)
    os.symlink("/", repo / "values" / "root-link.yaml")


@case("helmfile-5000-releases", "5,000 releases of one chart, each with an inline map",
      [Expect("helmfile.yaml", None)])
def _(repo, outside):
    chart(repo)
    rel = "".join(f"  - name: r{i}\n    chart: ./charts/vllm\n    values:\n      - vllm:\n          maxLen: {i + 1}\n"
                  for i in range(5000))
    write(repo / "helmfile.yaml", "releases:\n" + rel, dedent=False)


_FLUX = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: vllm
spec:
  interval: 5m
  chart:
    spec:
      chart: ../outside/chart
      sourceRef:
        kind: GitRepository
        name: self
  values:
    vllm:
      model: Qwen/Qwen2.5-7B-Instruct
"""


@case("flux-chart-outside", "a Flux HelmRelease whose GitRepository chart path climbs out of the tree",
      [Expect("release.yaml", (9,))])
def _(repo, outside):
    write(repo / "release.yaml", _FLUX)


# --- Sprig / Go templates ----------------------------------------------------------------------------------------

_TPL_VALUES = 'vllm:\n  model: Qwen/Qwen2.5-7B-Instruct\n  maxLen: 8192\ns: "{{ tpl $.Values.s $ }}{{ tpl $.Values.s $ }}"\n'
_TPL_TEMPLATE = DEPLOY_TEMPLATE.replace('"{{ .Values.vllm.model }}"', '{{ tpl .Values.s . | quote }}')


@case("tpl-self-doubling", "a values string that tpl's itself twice (2**40 at include depth 40)",
      [Expect("charts/vllm/templates/deployment.yaml", (11,),
              alternatives=[Expect("charts/vllm/values.yaml", (4,))])])
def _(repo, outside):
    chart(repo, template=_TPL_TEMPLATE, values=_TPL_VALUES)


_MERGE_TEMPLATE = ('{{- $d := dict "a" "x" }}\n{{- range $i := until 64 }}\n'
                   '{{- $d = mergeOverwrite (dict) (dict "l" $d "r" $d) }}\n{{- end }}\n'
                   'data: {{ toYaml $d | quote }}\n---\n' + DEPLOY_TEMPLATE)


@case("merge-overwrite-64", "mergeOverwrite building a 2**64-leaf tree, then toYaml of it",
      [Expect("charts/vllm/templates/deployment.yaml", (3, 5))])
def _(repo, outside):
    chart(repo, template=_MERGE_TEMPLATE)


@case("fromyaml-alias-bomb", "fromYaml of a values string holding a billion-laughs document",
      [Expect("charts/vllm/templates/deployment.yaml", (1,), alternatives=[Expect("charts/vllm/values.yaml", None)])])
def _(repo, outside):
    blob = textwrap.indent(alias_bomb(), "  ")
    values = "vllm:\n  model: Qwen/Qwen2.5-7B-Instruct\n  maxLen: 8192\nblob: |\n" + blob
    chart(repo, template="{{- $x := fromYaml .Values.blob }}\nx: {{ toJson $x | quote }}\n---\n" + DEPLOY_TEMPLATE,
          values=values)


# --- checkpoint config.json --------------------------------------------------------------------------------------

_ALIAS_CONFIG = "model-aliases:\n  /models/m: ./model\n"


@case("config-architectures-absurd", "a local config.json: 5,000 architectures with ESC and ::error::, layers 1e999,"
      " 400-digit max_position_embeddings",
      [Expect("deploy.yaml", (11,))], args=("--vllm-version", "0.6.0"))
def _(repo, outside):
    write(repo / ".vramlint.yaml", _ALIAS_CONFIG, dedent=False)
    archs = [f"\x1b]0;pwn\x07\n::error file=x::Arch{i}" + "A" * 300 for i in range(5000)]
    cfg = (json.dumps({"architectures": archs, "model_type": "llama", "hidden_size": 4096,
                       "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
                       "intermediate_size": 14336, "torch_dtype": "bfloat16"})[:-1]
           + ', "num_hidden_layers": 1e999, "max_position_embeddings": ' + "7" * 400 + "}")
    write(repo / "model" / "config.json", cfg, dedent=False)
    write(repo / "deploy.yaml", k8s_deployment('["--model", "/models/m"]'), dedent=False)


@case("config-quantization-absurd", "a checkpoint whose quant_method holds ESC and ::error::, bits 1e999, with"
      " --quantization awq", [Expect("deploy.yaml", (11,))])
def _(repo, outside):
    write(repo / ".vramlint.yaml", _ALIAS_CONFIG, dedent=False)
    cfg = ('{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, '
           '"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, '
           '"intermediate_size": 14336, "max_position_embeddings": 8192, "torch_dtype": "float16", '
           '"quantization_config": {"quant_method": "gptq\\u001b[2J\\n::error::pwned", "bits": 1e999, '
           '"group_size": ' + "1" * 60 + "}}")
    write(repo / "model" / "config.json", cfg, dedent=False)
    write(repo / "deploy.yaml", k8s_deployment('["--model", "/models/m", "--quantization", "awq"]'), dedent=False)


# --- systemd -----------------------------------------------------------------------------------------------------

_UNIT = """\
[Unit]
Description=vLLM

[Service]
ExecStart=/opt/venv/bin/vllm serve ${MODEL} --max-model-len 8192
Restart=always
"""


@case("systemd-dropin-envfiles", "a drop-in with EnvironmentFile=/proc/self/environ and an absolute path outside",
      [Expect("systemd/vllm.service.d/10-env.conf", (2,))])
def _(repo, outside):
    write(repo / "systemd" / "vllm.service", _UNIT, dedent=False)
    write(repo / "systemd" / "vllm.service.d" / "10-env.conf",
          f"[Service]\nEnvironmentFile=/proc/self/environ\nEnvironmentFile=-{outside / 'secret.env'}\n", dedent=False)


@case("systemd-dropin-link-fifo", "drop-ins that are a link out of the tree and a FIFO",
      [Expect("systemd/vllm.service.d/20-link.conf", None,
              alternatives=[Expect("systemd/vllm.service", None, text="20-link")]),
       Expect("systemd/vllm.service.d/30-pipe.conf", None,
              alternatives=[Expect("systemd/vllm.service", None, text="30-pipe")])])
def _(repo, outside):
    write(repo / "systemd" / "vllm.service", _UNIT.replace("${MODEL}", "Qwen/Qwen2.5-7B-Instruct"), dedent=False)
    (repo / "systemd" / "vllm.service.d").mkdir(parents=True)
    os.symlink(outside / "secret.conf", repo / "systemd" / "vllm.service.d" / "20-link.conf")
    fifo(repo / "systemd" / "vllm.service.d" / "30-pipe.conf")


def _nested_sh(depth: int, inner: str) -> str:
    for _ in range(depth):
        inner = "sh -c " + "'" + inner.replace("'", "'\\''") + "'"
    return inner


@case("systemd-sh-c-7-deep", "ExecStart= of seven nested sh -c around vllm serve with a 40-digit --max-model-len",
      [Expect("systemd/vllm.service", (5,))])
def _(repo, outside):
    inner = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len " + "1" * 40
    write(repo / "systemd" / "vllm.service", f"[Unit]\nDescription=vLLM\n\n[Service]\nExecStart=/bin/{_nested_sh(7, inner)}\n",
          dedent=False)


# --- kustomize ---------------------------------------------------------------------------------------------------

@case("kustomize-component-outside-root", "components: a folder outside the tree and `/`",
      [Expect("kustomization.yaml", (6,)), Expect("kustomization.yaml", (7,))])
def _(repo, outside):
    write(repo / "deploy.yaml", k8s_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct"]'), dedent=False)
    write(repo / "kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                                       "resources:\n  - deploy.yaml\ncomponents:\n  - ../outside/comp\n  - /\n",
          dedent=False)


@case("kustomize-component-alias-bomb", "a component whose inline patch is a billion-laughs document",
      [Expect("comp/kustomization.yaml", None, levels=("warning", "error"))])
def _(repo, outside):
    write(repo / "deploy.yaml", k8s_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct"]'), dedent=False)
    write(repo / "kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                                       "resources:\n  - deploy.yaml\ncomponents:\n  - comp\n", dedent=False)
    write(repo / "comp" / "kustomization.yaml",
          "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nbomb:\n" + alias_bomb(indent="  ")
          + "patches:\n  - target:\n      kind: Deployment\n    patch: |\n      - op: add\n"
            "        path: /metadata/labels/x\n        value: y\n", dedent=False)


# --- configuration, names, encodings, duplicates, numbers, shell -------------------------------------------------

@case("repo-config-reaches-out", ".vramlint.yaml turning on render-helm, a rules-dir outside, values from environ",
      [Expect(".vramlint.yaml", (1,)), Expect(".vramlint.yaml", (2,))])
def _(repo, outside):
    write(repo / ".vramlint.yaml", f"render-helm: true\nrules-dir: {outside}\nvalues:\n  - /proc/self/environ\n",
          dedent=False)
    chart(repo, template=DEPLOY_TEMPLATE + '          env:\n            - name: X\n'
                                           '              value: {{ .Files.Get "link.txt" | quote }}\n')
    os.symlink(outside / "secret.txt", repo / "charts" / "vllm" / "link.txt")
    write(outside / "evil_rule.py", f"print('{SENTINEL}')\n", dedent=False)


_NASTY = "app\n::error file=x,line=1::pwned|\x1b[31m`x`.yaml"


@case("filename-newline-escape-pipe", "an Application file named with a newline, ::error::, |, ESC and backticks, "
      "with a values file outside", [Expect(_NASTY, (14,))])
def _(repo, outside):
    chart(repo)
    write(repo / "gitops" / _NASTY, application([os.path.relpath(outside / "secret.yaml", repo / "charts/vllm")]),
          dedent=False)


@case("tf-utf16", "a main.tf in UTF-16 with its BOM", [Expect("main.tf", (1,))])
def _(repo, outside):
    (repo / "main.tf").write_bytes(tf_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct"]').encode("utf-16"))


@case("helmfile-nul", "a helmfile.yaml with a NUL byte on line 6", [Expect("helmfile.yaml", (1, 6))])
def _(repo, outside):
    chart(repo)
    (repo / "helmfile.yaml").write_bytes(b"releases:\n  - name: vllm\n    chart: ./charts/vllm\n    values:\n"
                                         b"      - vllm:\n          model: Qwen\x00/Qwen2.5-7B-Instruct\n")


@case("max-model-len-40-digits", "a Deployment with --max-model-len of 40 digits (int() takes it; past the model)",
      [Expect("deploy.yaml", (11,), rule="VRL005", levels=("error",))], exits=(1,))
def _(repo, outside):
    write(repo / "deploy.yaml", k8s_deployment('["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "'
                                               + "1234567890" * 4 + '"]'), dedent=False)


@case("shell-brace-bomb", "vllm serve with a --served-model-name of {a,b} x 40 (2**40 words)",
      [Expect("launch.sh", (3,))], args=("launch.sh",))  # (named: a walk does not read scripts; fixed after run 1)
def _(repo, outside):
    write(repo / "launch.sh", "#!/bin/bash\nset -e\nvllm serve Qwen/Qwen2.5-7B-Instruct --served-model-name "
          + "{a,b}" * 40 + "\n", dedent=False)


_SOURCES = """\
#!/bin/bash
. /proc/self/environ
source {outside_env}
source ./env.sh
vllm serve "$MODEL" --max-model-len 40960000
"""


@case("shell-source-in-and-out", "a script sourcing /proc/self/environ, an outside file and an env.sh in the tree",
      [Expect("start.sh", (2,)), Expect("start.sh", (3,)), Expect("start.sh", (5,), rule="VRL005")], exits=(1,),
      args=("start.sh",))  # (named: a walk does not read scripts; my mistake, corrected after the first run)
def _(repo, outside):
    write(repo / "start.sh", _SOURCES.format(outside_env=os.path.relpath(outside / "secret.env", repo)))
    write(repo / "env.sh", "MODEL=Qwen/Qwen2.5-7B-Instruct\n", dedent=False)


@case("argo-inline-values-4MB", "an Application with 4 MB of inline values (huge but legal)",
      [Expect("gitops/app.yaml", None)], min_servers=1)
def _(repo, outside):
    chart(repo)
    keys = "".join(f"        k{i}: {'v' * 30}\n" for i in range(100000))
    write(repo / "gitops" / "app.yaml",
          application(["values.yaml"]) + "      values: |\n        vllm:\n          maxLen: 999999999\n" + keys,
          dedent=False)


# ----------------------------------------------------------------------------------------------------------------
# the runner


def _python_dirs() -> list[str]:
    import site
    import sysconfig
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    dirs.update(p for p in sysconfig.get_paths().values())
    dirs.update(site.getsitepackages())
    return sorted(os.path.realpath(d) for d in dirs if d)


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


_ALLOWED_DEVICES = {"/dev/null", "/dev/urandom", "/dev/random", "/dev/tty"}


def run_case(c: Case, checkout: Path, work: Path, wall_limit: float | None = None) -> dict:
    """``wall_limit``: kill the run after this many seconds of wall time (a read blocked on a FIFO uses no CPU)."""
    base = work / c.name
    repo, outside, cache, out, home = (base / "repo", base / "outside", base / "cache", base / "out", base / "home")
    for d in (repo, outside, cache, out, home):
        d.mkdir(parents=True, exist_ok=True)
    plant_outside(outside)
    c.build(repo, outside)
    log = base / "audit.jsonl"
    fmt = []
    for name, suffix in (("json", "r.json"), ("sarif", "r.sarif"), ("github", "r.github"), ("markdown", "r.md"),
                         ("gitlab", "r.gitlab.json"), ("junit", "r.xml"), ("concise", "r.concise")):
        fmt += ["--format", name, "--output-file", str(out / suffix)]
    argv = [sys.executable, str(HERE / "_blind23_child.py"), str(checkout), str(log), "check", str(repo), *c.args,
            "--offline", "--gpu", "L4", "--format", "text", *fmt]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "XDG_CACHE_HOME": str(cache),
           "HF_HOME": str(home / "hf"), "HF_TOKEN": TOKEN, "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8",
           "TMPDIR": str(cache / "tmp")}
    (cache / "tmp").mkdir(exist_ok=True)

    def limits():
        import resource
        resource.setrlimit(resource.RLIMIT_CPU, (30, 31))
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    t0 = time.monotonic()
    with open(base / "stdout", "wb") as so, open(base / "stderr", "wb") as se:
        proc = subprocess.Popen(argv, cwd=str(repo), env=env, stdout=so, stderr=se, preexec_fn=limits)
        timer = None
        if wall_limit is not None:
            import threading
            timer = threading.Timer(wall_limit, proc.kill)
            timer.start()
        # reaped here, not by Popen, for this child's own rusage (CPU and peak resident memory)
        _, status, usage = os.wait4(proc.pid, 0)
        if timer is not None:
            timer.cancel()
    proc.returncode = rc = os.waitstatus_to_exitcode(status)
    stdout, stderr = (base / "stdout").read_bytes(), (base / "stderr").read_bytes()
    wall = time.monotonic() - t0
    result = {"name": c.name, "exit": rc, "wall": round(wall, 2), "problems": [],
              "cpu": round(usage.ru_utime + usage.ru_stime, 2), "mb": round(usage.ru_maxrss / 1024, 1)}
    problems = result["problems"]
    if wall_limit is not None and wall >= wall_limit:
        problems.append(f"killed after {wall_limit:.0f} s of wall time (blocked)")
    if rc not in c.exits:
        problems.append(f"exit {rc}, expected {c.exits}")
    if result["cpu"] > CPU_LIMIT_S:
        problems.append(f"{result['cpu']:.2f} CPU-s > {CPU_LIMIT_S}")
    if result["mb"] > RSS_LIMIT_MB:
        problems.append(f"{result['mb']:.0f} MB > {RSS_LIMIT_MB}")
    texts = {"stdout": stdout.decode("utf-8", "replace"), "stderr": stderr.decode("utf-8", "replace")}
    for path in sorted(out.rglob("*")) + sorted(cache.rglob("*")):
        if path.is_file():
            texts[str(path.relative_to(base))] = path.read_bytes().decode("utf-8", "replace")
    for where, text in texts.items():
        for secret, what in ((TOKEN, "planted HF_TOKEN"), (SENTINEL, "outside sentinel")):
            if secret in text:
                problems.append(f"{what} in {where}")
    if c.raw_free:
        for where in ("stdout", "stderr", "out/r.github", "out/r.md", "out/r.concise"):
            text = texts.get(where, "")
            if "\x1b" in text:
                problems.append(f"raw ESC in {where}")
            for line in text.split("\n"):
                if "pwned" in line and (line.startswith("::error file=x") or line.startswith("::error::pwned")):
                    problems.append(f"a workflow command from the input starts a line of {where}")
                    break
    report = None
    try:
        report = json.loads(texts.get("out/r.json", ""))
    except ValueError:
        problems.append("no JSON report")
    if report is not None:
        findings = report.get("findings", [])
        result["findings"] = len(findings)
        result["servers"] = len(report.get("servers", []))
        result["first"] = [f"{_rel(f.get('file', ''), repo)}:{f.get('line')} {f.get('rule')} {f.get('level')} "
                           f"{(f.get('message') or '')[:150]}" for f in findings[:6]]
        if result["servers"] < c.min_servers:
            problems.append(f"{result['servers']} servers, expected at least {c.min_servers}")
        for e in c.expect:
            if not any(_matches(f, alt, repo) for alt in [e, *e.alternatives] for f in findings):
                problems.append(f"no finding on {e.file!r}:{e.lines or 'any'}"
                                + (f" {e.rule}" if e.rule else "") + (f" /{e.text}/" if e.text else "")
                                + (f" {e.levels}" if e.levels else ""))
    problems.extend(_audit(log, repo, cache, out, checkout))
    if rc == 2 or (stderr and b"Traceback" in stderr):
        problems.append("stderr: " + texts["stderr"].strip().splitlines()[-1][:200] if texts["stderr"].strip()
                        else "exit 2")
    result["pass"] = not problems
    return result


def _rel(name: str, repo: Path) -> str:
    real = str(repo)
    return name[len(real) + 1:] if name.startswith(real + "/") else name


def _matches(f: dict, e: Expect, repo: Path) -> bool:
    name = _rel(f.get("file", ""), repo)
    if not (name == e.file or name.endswith("/" + e.file) or name.endswith(e.file)):
        return False
    if e.lines is not None and f.get("line") not in e.lines:
        return False
    if e.rule and f.get("rule") != e.rule:
        return False
    if e.levels and f.get("level") not in e.levels:
        return False
    return not (e.text and not re.search(e.text, f.get("message", ""), re.I))


def _audit(log: Path, repo: Path, cache: Path, out: Path, checkout: Path) -> list[str]:
    problems = []
    if not log.exists():
        return ["no audit log"]
    allowed_read = [str(repo.resolve()), str(cache.resolve()), str(out.resolve()), str(checkout.resolve()),
                    *_python_dirs(), "/etc/localtime", "/usr/share/zoneinfo", "/etc/ld.so.cache"]
    allowed_write = [str(cache.resolve()), str(out.resolve())]
    seen = set()
    for raw in log.read_text().splitlines():
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        event, path, mode = rec["event"], rec["path"], rec["mode"]
        if event == "vramlint":
            if not _under(os.path.realpath(path), [str(checkout.resolve())]):
                problems.append(f"vramlint imported from {path}, not the checkout")
            continue
        if event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"):
            problems.append(f"process started: {path[:120]}")
            continue
        absolute = path if os.path.isabs(path) else os.path.join(str(repo), path)
        real = os.path.realpath(absolute)
        writing = event in ("os.symlink", "os.rename", "os.remove", "os.mkdir", "shutil.copyfile", "os.chmod") or (
            event == "open" and any(m in mode for m in ("w", "a", "x", "+write")))
        if writing:
            if not _under(real, allowed_write) and (event, real) not in seen:
                seen.add((event, real))
                problems.append(f"{event} (write) outside the cache and reports: {real}")
            continue
        if real in _ALLOWED_DEVICES or _under(real, allowed_read):
            continue
        if (event, real) in seen:
            continue
        seen.add((event, real))
        problems.append(f"{event} outside the tree: {real}")
    return problems


def main(cases: list[Case] | None = None, runner=None, prefix: str = "blind23-", doc: str | None = None) -> int:
    """Run ``cases`` (this round's by default) with ``runner`` (`run_case`), printing a line each and the total
    (round 24's harness runs its own cases through this)."""
    cases = CASES if cases is None else cases
    runner = run_case if runner is None else runner
    parser = argparse.ArgumentParser(description=doc or __doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=str(HERE.parent), help="the vramlint checkout to run (default: this one)")
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--keep", default="", help="build the cases here and keep them")
    parser.add_argument("--json", default="", help="write the results here")
    ns = parser.parse_args()
    checkout = Path(ns.root).resolve()
    only = {n for n in ns.only.split(",") if n}
    work = Path(ns.keep) if ns.keep else Path(tempfile.mkdtemp(prefix=prefix))
    if ns.keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for c in cases:
            if only and c.name not in only:
                continue
            r = runner(c, checkout, work)
            results.append(r)
            flag = "PASS" if r["pass"] else "FAIL"
            print(f"{flag} {c.name:36} exit={r['exit']} cpu={r['cpu']:.2f}s rss<={r['mb']:.0f}MB "
                  f"servers={r.get('servers')} findings={r.get('findings')}", flush=True)
            for p in r["problems"]:
                print(f"     - {p}", flush=True)
    finally:
        if not ns.keep:
            shutil.rmtree(work, ignore_errors=True)
    passed = sum(r["pass"] for r in results)
    print(f"{passed} / {len(results)} passed; max {max((r['cpu'] for r in results), default=0):.2f} CPU-s, "
          f"peak {max((r['mb'] for r in results), default=0):.0f} MB; checkout {checkout}")
    if ns.json:
        Path(ns.json).write_text(json.dumps(results, indent=1, default=str))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
