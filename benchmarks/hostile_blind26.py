"""Hostile input, blind round 26 (issue 10): 40 hostile inputs of my own aimed at what the last two rounds added
and tested least: the Slurm walk and `sbatch` following (loops, 10,000 submissions, a job that is a FIFO, a link
out or a device, huge `--gres` counts, `--wrap`), systemd units a script writes with `tee <<EOF` (never closed,
EnvironmentFile= out of the tree, expansion bombs, 5,000 units), `docker exec` chains, Dockerfile_X names,
Terraform `data.template_file` / `==` conditions / local charts of helm_release in .tf files naming no vLLM (module
loops, deep module trees, a chart link to /), Ansible vars_files / group_vars / role defaults (huge, invalid, links
out, devices, import loops), compose override merging (extends cycles, a 4 MB override, a FIFO override), Ray
head/worker Services (10,000 workers), charts naming no vLLM with huge or looping subchart trees, extension-less
scripts named on the command line, vramlint's U+2983/U+2984 stand-ins written in a file; and the issue's own
categories (FIFOs, links to / and .., /proc/self/environ, alias bombs, huge integers, terminal escapes in names,
a planted token in each new reader's output path).

Each case's expectation was written before the first run (committed with this file, before it). The runner is
round 23's (benchmarks/hostile_blind23.py: its audit-hook child, its expectation matching, its audit of what was
opened, listed, written or started) with round 24's wall-clock limit, and this round's own token and sentinel.
A case passes when:

- exit status 0 or 1 as the case says (never 2);
- under 5 CPU-seconds and 300 MB peak resident memory;
- each expected finding is there, on its file and line;
- the planted HF_TOKEN and the outside sentinel appear in no output, report or cache file;
- nothing outside the tree is opened or listed, nothing written outside the reports and the cache, no process.

    python benchmarks/hostile_blind26.py [--root CHECKOUT] [--only NAME,...] [--keep DIR] [--json FILE]
"""

from __future__ import annotations

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
    chart,
    fifo,
    k8s_deployment,
    write,
)

TOKEN = "hf_bLiNd26PlantedTokenPlOkMiJnUhBgVy"
SENTINEL = "OUTSIDE-SENTINEL-b26-4d7b"
WALL_LIMIT_S = 60.0
QWEN = "Qwen/Qwen2.5-7B-Instruct"
TOO_LONG = "40960000"  # past Qwen2.5-7B's 32,768: vLLM refuses it (VRL005)


def plant_outside(outside: Path) -> None:
    write(outside / "secret.txt", f"token: {SENTINEL}\nHF_TOKEN={TOKEN}\n")
    write(outside / "secret.env", f"MODEL={SENTINEL}\nHF_TOKEN={TOKEN}\n")
    write(outside / "secret.yaml", f"vllm:\n  model: {SENTINEL}\n  maxLen: 1\nmodel: {SENTINEL}\n")
    write(outside / "secret.conf", f"MODEL={SENTINEL}\nHF_TOKEN={TOKEN}\n")
    write(outside / "chart" / "Chart.yaml", "apiVersion: v2\nname: stolen\nversion: 0.1.0\n")
    write(outside / "chart" / "values.yaml", f"vllm:\n  model: {SENTINEL}\n  maxLen: 1\n")
    write(outside / "chart" / "templates" / "d.yaml", DEPLOY_TEMPLATE, dedent=False)
    write(outside / "jobs" / "serve.sbatch", f"#!/bin/bash\n#SBATCH --gres=gpu:1\nvllm serve {SENTINEL}\n")
    write(outside / "tfmod" / "main.tf", 'resource "kubernetes_deployment" "stolen" {\n  spec {\n    template {\n'
          '      spec {\n        container {\n          image = "vllm/vllm-openai:v0.8.5"\n'
          f'          args  = ["--model", "{SENTINEL}"]\n        }}\n      }}\n    }}\n  }}\n}}\n')
    write(outside / "role" / "defaults" / "main.yml", f"vllm_model: {SENTINEL}\nhf_token: {TOKEN}\n")


CASES: list[Case] = []


def case(name, what, expect, exits=(0, 1), args=(), min_servers=0):
    def register(build):
        CASES.append(Case(name, what, build, expect, exits, tuple(args), min_servers))
        return build
    return register


def rel(target: Path, start: Path) -> str:
    return os.path.relpath(target, start)


# --- Slurm: the walk and `sbatch` following ------------------------------------------------------------------

_JOB = """\
#!/bin/bash
#SBATCH -J vllm
#SBATCH --gres=gpu:1
{extra}vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 40960000
"""


@case("slurm-sbatch-loop", "a.sbatch submits b.sbatch, b.sbatch submits a.sbatch (a loop); a.sbatch's length is "
      "past the model", [Expect("a.sbatch", (5,), rule="VRL005", levels=("error",))], exits=(1,), min_servers=1)
def _(repo, outside):
    write(repo / "jobs" / "a.sbatch", _JOB.format(extra="sbatch ./b.sbatch\n"), dedent=False)
    write(repo / "jobs" / "b.sbatch", "#!/bin/bash\n#SBATCH --gres=gpu:1\nsbatch ./a.sbatch\necho b\n",
          dedent=False)


@case("slurm-10000-submissions", "submit.sh with 10,000 `sbatch --export=ALL,HF_TOKEN=<token> job.sbatch` lines "
      "(past the 16 sbatch commands followed)",
      [Expect("submit.sh", (18,), text="16|limit|past|not followed"), Expect("job.sbatch", (5,), rule="VRL005")],
      exits=(1,), args=("submit.sh",), min_servers=1)
def _(repo, outside):
    write(repo / "job.sbatch", _JOB.format(extra="\n"), dedent=False)
    write(repo / "submit.sh", "#!/bin/bash\n" + f"sbatch --export=ALL,HF_TOKEN={TOKEN} job.sbatch\n" * 10000,
          dedent=False)


@case("slurm-job-devices", "sbatch of a job linked to /proc/self/environ, of /dev/zero, and of a FIFO job",
      [Expect("submit.sh", (2,), levels=("warning",)), Expect("submit.sh", (3,), levels=("warning",)),
       Expect("submit.sh", (4,), levels=("warning",))], args=("submit.sh",))
def _(repo, outside):
    os.symlink("/proc/self/environ", repo / "env.sbatch")
    fifo(repo / "pipe.sbatch")
    write(repo / "submit.sh", "#!/bin/bash\nsbatch env.sbatch\nsbatch /dev/zero\nsbatch pipe.sbatch\n"
                              "# vllm job\n", dedent=False)


@case("slurm-jobs-dir-link-outside", "sbatch jobs/serve.sbatch where jobs/ is a link to an outside folder of jobs, "
      "and a folder link to / named *.sbatch", [Expect("submit.sh", (2,), levels=("warning",))], args=("submit.sh",))
def _(repo, outside):
    os.symlink(outside / "jobs", repo / "jobs")
    os.symlink("/", repo / "root.sbatch")
    write(repo / "submit.sh", "#!/bin/bash\nsbatch jobs/serve.sbatch\nsbatch root.sbatch\n", dedent=False)


@case("slurm-gres-23-digits", "#SBATCH --gres=gpu:a100:<23 digits> (past Slurm's 64-bit count: sbatch refuses it)",
      [Expect("serve.sbatch", (3,))])
def _(repo, outside):
    write(repo / "serve.sbatch", "#!/bin/bash\n#SBATCH -J vllm\n#SBATCH --gres=gpu:a100:" + "9" * 23 + "\n"
          "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2\n", dedent=False)


@case("slurm-gres-5000-digits-cmdline", "sbatch --gres=gpu:<5,000 digits> job.sbatch on the command line",
      [Expect("submit.sh", (2,), alternatives=[Expect("job.sbatch", (3, 5))])], args=("submit.sh",))
def _(repo, outside):
    write(repo / "job.sbatch", _JOB.format(extra="\n"), dedent=False)
    write(repo / "submit.sh", "#!/bin/bash\nsbatch --gres=gpu:" + "7" * 5000 + " job.sbatch\n", dedent=False)


@case("slurm-sbatch-wrap", "sbatch --gres=gpu:1 --wrap=\"vllm serve ... --max-model-len 40960000\" (a job with no "
      "script)", [Expect("submit.sh", (2,))], args=("submit.sh",))
def _(repo, outside):
    write(repo / "submit.sh", f'#!/bin/bash\nsbatch --gres=gpu:1 --wrap="vllm serve {QWEN} --max-model-len '
                              f'{TOO_LONG}"\n', dedent=False)


@case("slurm-160k-directives", "a 4.2 MB .sbatch of 160,000 #SBATCH lines before its vllm serve (length past the "
      "model)", [Expect("big.sbatch", (160003,), rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    write(repo / "big.sbatch", "#!/bin/bash\n" + "#SBATCH --gres=gpu:1 -J v\n" * 160000 + "#SBATCH -t 1\n"
          f"vllm serve {QWEN} --max-model-len {TOO_LONG}\n", dedent=False)


# --- systemd units written with `tee <<EOF` -------------------------------------------------------------------

_UNIT_HEAD = "#!/bin/bash\nsudo tee /etc/systemd/system/vllm.service > /dev/null <<EOF\n[Service]\n"


@case("heredoc-unit-never-closed", "a tee <<EOF unit whose EOF never comes (bash reads to the end of the script, "
      "with a warning)", [Expect("install.sh", (2, 4))], args=("install.sh",))
def _(repo, outside):
    write(repo / "install.sh", _UNIT_HEAD + f"ExecStart=/usr/bin/vllm serve {QWEN} --max-model-len {TOO_LONG}\n"
          + "Restart=always\n" * 1000, dedent=False)


@case("heredoc-unit-envfile-out", "a tee <<EOF unit with EnvironmentFile=/proc/self/environ, an outside one, and "
      "Environment=HF_TOKEN=<token>", [Expect("install.sh", (4,)), Expect("install.sh", (5,))],
      args=("install.sh",))
def _(repo, outside):
    write(repo / "install.sh", _UNIT_HEAD + f"EnvironmentFile=/proc/self/environ\nEnvironmentFile="
          f"{outside / 'secret.conf'}\nEnvironment=HF_TOKEN={TOKEN}\nExecStart=/usr/bin/vllm serve $MODEL\nEOF\n",
          dedent=False)


@case("heredoc-unit-doubling-40", "X doubled 40 times in the script, then Environment=M=$X in a tee <<EOF unit",
      [Expect("install.sh", None)], args=("install.sh",))
def _(repo, outside):
    write(repo / "install.sh", "#!/bin/bash\nX=ab\n" + 'X="$X$X"\n' * 40
          + "sudo tee /etc/systemd/system/vllm.service > /dev/null <<EOF\n[Service]\nEnvironment=M=$X\n"
          f"ExecStart=/usr/bin/vllm serve {QWEN} --served-model-name $X\nEOF\n", dedent=False)


@case("heredoc-units-5000", "one script writing 5,000 units with tee <<EOF, each a vllm serve past the model",
      [Expect("install.sh", (4,), rule="VRL005")], exits=(1,), args=("install.sh",), min_servers=1)
def _(repo, outside):
    one = ("sudo tee /etc/systemd/system/vllm{i}.service > /dev/null <<EOF\n[Service]\n"
           f"ExecStart=/usr/bin/vllm serve {QWEN} --max-model-len {TOO_LONG}\nEOF\n")
    write(repo / "install.sh", "#!/bin/bash\n" + "".join(one.format(i=i) for i in range(5000)), dedent=False)


# --- docker exec chains ---------------------------------------------------------------------------------------

@case("docker-exec-200-deep", "docker exec c nested 200 times before vllm serve",
      [Expect("run.sh", (3,))], args=("run.sh",))
def _(repo, outside):
    write(repo / "run.sh", "#!/bin/bash\ndocker run -d --name c --gpus all vllm/vllm-openai:v0.8.5\n"
          + "docker exec c " * 200 + f"vllm serve {QWEN}\n", dedent=False)


# (corrected after the first run, my mistake: 30 levels of json.dumps double the escapes into a 2 GB run.sh, which
# vramlint rightly refused as too large on its line 1; 12 levels are 120 KB, the nesting the case meant)
@case("docker-exec-sh-c-12-deep", "docker exec c sh -c '...' nested 12 deep, escapes doubling each level",
      [Expect("run.sh", (3,))], args=("run.sh",))
def _(repo, outside):
    inner = f"vllm serve {QWEN} --max-model-len {TOO_LONG}"
    for _ in range(12):
        inner = "docker exec c sh -c " + json.dumps(inner)
    write(repo / "run.sh", "#!/bin/bash\ndocker run -d --name c --gpus all vllm/vllm-openai:v0.8.5\n" + inner
          + "\n", dedent=False)


@case("docker-exec-env-file-environ", "docker exec --env-file /proc/self/environ -e HF_TOKEN=<token> c vllm serve "
      "past the model", [Expect("run.sh", (3,), rule="VRL005")], exits=(1,), args=("run.sh",), min_servers=1)
def _(repo, outside):
    write(repo / "run.sh", "#!/bin/bash\ndocker run -d --name c --gpus all vllm/vllm-openai:v0.8.5 sleep inf\n"
          f"docker exec --env-file /proc/self/environ -e HF_TOKEN={TOKEN} c vllm serve {QWEN} --max-model-len "
          f"{TOO_LONG}\n", dedent=False)


# --- Dockerfile_X names ---------------------------------------------------------------------------------------

_NASTY = "Dockerfile_x\n::error file=x,line=1::pwned\x1b[31m|`y`"


@case("dockerfile-name-escapes", "a Dockerfile_<newline ::error:: ESC | backtick> whose CMD's length is past the "
      "model", [Expect(_NASTY, (2,), rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    write(repo / _NASTY, f'FROM vllm/vllm-openai:v0.8.5\nCMD ["--model", "{QWEN}", "--max-model-len", '
                         f'"{TOO_LONG}"]\n', dedent=False)


@case("dockerfile-copy-link-out-and-fifo", "Dockerfile-vllm COPYs start.sh (a link to an outside script) and runs "
      "it; Dockerfile_pipe is a FIFO", [Expect("Dockerfile-vllm", (2, 3), text="outside|not read|link")])
def _(repo, outside):
    write(outside / "start.sh", f"#!/bin/sh\nexec vllm serve {SENTINEL}\n", dedent=False)
    os.symlink(outside / "start.sh", repo / "start.sh")
    fifo(repo / "Dockerfile_pipe")
    write(repo / "Dockerfile-vllm", 'FROM vllm/vllm-openai:v0.8.5\nCOPY start.sh /start.sh\n'
                                    'ENTRYPOINT ["/start.sh"]\n', dedent=False)


# --- Terraform: template_file, ==, local charts ----------------------------------------------------------------

_STACK = """\
resource "helm_release" "stack" {{
  name       = "vllm"
  repository = "https://vllm-project.github.io/production-stack"
  chart      = "vllm-stack"
  values     = [{values}]
}}
"""


@case("tf-template-file-cycle", "data.template_file a's template is b's rendered, b's is a's (Terraform: cycle)",
      [Expect("main.tf", (1, 2, 3, 4, 5, 6, 7))])
def _(repo, outside):
    write(repo / "main.tf", 'data "template_file" "a" {\n  template = data.template_file.b.rendered\n}\n'
                            'data "template_file" "b" {\n  template = data.template_file.a.rendered\n}\n'
          + _STACK.format(values="data.template_file.a.rendered"), dedent=False)


@case("tf-template-file-vars-bomb", "a template_file of 10,000 `${x}` over a 100,000-character var (1 GB rendered)",
      [Expect("main.tf", (1, 2, 3, 4, 5, 6, 7, 8, 9, 14))])
def _(repo, outside):
    write(repo / "t.tpl", "servingEngineSpec:\n  x: \"" + "${x}" * 10000 + "\"\n", dedent=False)
    write(repo / "main.tf", 'locals {\n  big = "' + "q" * 100000 + '"\n}\n'
                            'data "template_file" "v" {\n  template = file("t.tpl")\n  vars = {\n'
                            '    x = local.big\n  }\n}\n' + _STACK.format(values="data.template_file.v.rendered"),
          dedent=False)


@case("tf-eq-5000-digits", "var.n == <5,000-digit number> ? model : other, in a template_file's vars",
      [Expect("main.tf", None)])
def _(repo, outside):
    write(repo / "t.tpl", "servingEngineSpec:\n  modelSpec:\n  - name: a\n    repository: vllm/vllm-openai\n"
                          "    tag: v0.10.1\n    modelURL: ${m}\n    requestGPU: 1\n    vllmConfig:\n"
                          "      maxModelLen: 40960000\n", dedent=False)
    big = "9" * 5000
    write(repo / "main.tf", f'variable "n" {{\n  default = {big}\n}}\n'
                            'data "template_file" "v" {\n  template = file("t.tpl")\n  vars = {\n'
                            f'    m = var.n == {big}1 ? "x/y" : "{QWEN}"\n  }}\n}}\n'
          + _STACK.format(values="data.template_file.v.rendered"), dedent=False)


@case("tf-local-chart-link-root", "a .tf naming no vLLM: helm_release of ./chart, a link to /",
      [Expect("main.tf", (3,), alternatives=[Expect("main.tf", (1,))])])
def _(repo, outside):
    os.symlink("/", repo / "chart")
    write(repo / "main.tf", 'resource "helm_release" "svc" {\n  name  = "svc"\n  chart = "./chart"\n}\n',
          dedent=False)


@case("tf-module-tree-60-deep", "a module chain 60 deep (each ./m) plus 1,000 empty .tf files; the deepest "
      "deploys vLLM past the model", [Expect("main.tf", None, rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    here = repo
    for _ in range(60):
        write(here / "main.tf", 'module "m" {\n  source = "./m"\n}\n', dedent=False)
        here = here / "m"
    write(here / "main.tf", 'resource "kubernetes_deployment" "vllm" {\n  spec {\n    template {\n      spec {\n'
                            '        container {\n          image = "vllm/vllm-openai:v0.8.5"\n'
                            f'          args  = ["--model", "{QWEN}", "--max-model-len", "{TOO_LONG}"]\n'
                            '        }\n      }\n    }\n  }\n}\n', dedent=False)
    for i in range(1000):
        write(repo / "many" / f"f{i}.tf", f'locals {{\n  v{i} = {i}\n}}\n', dedent=False)


@case("tf-module-loop-and-out", "module a -> ../b -> ../a (a loop), a module from / and one from the outside tfmod "
      "folder", [Expect("b/main.tf", (5,)), Expect("b/main.tf", (8,))])
def _(repo, outside):
    write(repo / "a" / "main.tf", 'module "b" {\n  source = "../b"\n}\n# vllm/vllm-openai\n', dedent=False)
    write(repo / "b" / "main.tf", 'module "a" {\n  source = "../a"\n}\nmodule "root" {\n  source = "/"\n}\n'
                                  f'module "out" {{\n  source = "{rel(outside / "tfmod", repo / "b")}"\n}}\n'
                                  '# vllm/vllm-openai\n', dedent=False)


@case("tf-release-chart-outside-values-environ", "a .tf naming no vLLM: helm_release of a chart outside the tree, "
      "another with values = [file(\"/proc/self/environ\")] of a local chart",
      [Expect("main.tf", (3,)), Expect("main.tf", (8,))])
def _(repo, outside):
    chart(repo, where="svc")
    write(repo / "main.tf", f'resource "helm_release" "out" {{\n  name  = "out"\n  chart = "${{path.module}}/'
                            f'{rel(outside / "chart", repo)}"\n}}\n'
                            'resource "helm_release" "svc" {\n  name   = "svc"\n  chart  = "./svc"\n'
                            '  values = [file("/proc/self/environ")]\n}\n', dedent=False)


# --- Ansible: vars_files, group_vars, role defaults -----------------------------------------------------------

_PLAY = """\
---
- name: serve
  hosts: gpu
{vars_files}  tasks:
    - name: start vLLM
      shell: "vllm serve {{{{ model }}}} --max-model-len 40960000 --tensor-parallel-size {{{{ tp | default(1) }}}}"
"""


def _play(entries: list[str]) -> str:
    if not entries:
        return _PLAY.format(vars_files="")
    return _PLAY.format(vars_files="  vars_files:\n" + "".join(f"    - {e}\n" for e in entries))


@case("ansible-import-playbook-loop", "site.yml imports other.yml, which imports site.yml; a play of site.yml runs "
      "vllm serve past the model", [Expect("site.yml", (9,), rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    write(repo / "site.yml", "---\n- import_playbook: other.yml\n"
          + _play(["vars.yml"]).replace("---\n", "", 1), dedent=False)
    write(repo / "other.yml", "---\n- import_playbook: site.yml\n", dedent=False)
    write(repo / "vars.yml", f"model: {QWEN}\n", dedent=False)


@case("ansible-vars-files-4MB", "vars_files: [big.yml] of 4 MB (past the 1 MiB read), then the model file",
      [Expect("play.yml", (5,))])
def _(repo, outside):
    write(repo / "big.yml", "".join(f"k{i}: {'v' * 30}\n" for i in range(120000)), dedent=False)
    write(repo / "model.yml", f"model: {QWEN}\n", dedent=False)
    write(repo / "play.yml", _play(["big.yml", "model.yml"]), dedent=False)


@case("ansible-group-vars-alias-bomb", "group_vars/all.yml a billion-laughs document; the task's model from it",
      [Expect("play.yml", (6,), alternatives=[Expect("group_vars/all.yml", None)])])
def _(repo, outside):
    write(repo / "group_vars" / "all.yml", f"model: {QWEN}\n" + alias_bomb(), dedent=False)
    write(repo / "play.yml", _play([]), dedent=False)


@case("ansible-role-defaults-link-out", "roles/vllm/defaults/main.yml a link to an outside file (model = sentinel, "
      "hf_token = token)", [Expect("roles/vllm/tasks/main.yml", None, text="outside|not read|link")])
def _(repo, outside):
    (repo / "roles" / "vllm" / "defaults").mkdir(parents=True)
    os.symlink(outside / "role" / "defaults" / "main.yml", repo / "roles" / "vllm" / "defaults" / "main.yml")
    write(repo / "roles" / "vllm" / "tasks" / "main.yml", "---\n- name: start vLLM\n  shell: >-\n"
          "    docker run --gpus all -e HF_TOKEN={{ hf_token }} vllm/vllm-openai:v0.8.5\n"
          "    --model {{ vllm_model }}\n", dedent=False)
    write(repo / "site.yml", "---\n- hosts: gpu\n  roles:\n    - vllm\n", dedent=False)


@case("ansible-vars-files-devices", "vars_files: /proc/self/environ, /dev/zero, a FIFO, an outside file",
      [Expect("play.yml", (5,)), Expect("play.yml", (6,)), Expect("play.yml", (7,)), Expect("play.yml", (8,))])
def _(repo, outside):
    fifo(repo / "pipe.yml")
    write(repo / "play.yml", _play(["/proc/self/environ", "/dev/zero", "pipe.yml",
                                    rel(outside / "secret.yaml", repo)]), dedent=False)


@case("ansible-group-vars-tp-5000-digits", "group_vars/all.yml: tp of 5,000 digits, hf token planted, model given",
      [Expect("play.yml", (6,))])
def _(repo, outside):
    write(repo / "group_vars" / "all.yml", f"model: {QWEN}\ntp: {'8' * 5000}\nhf_token: {TOKEN}\n", dedent=False)
    write(repo / "play.yml", _play([]), dedent=False)


# --- compose: override merge, extends ------------------------------------------------------------------------

_BASE = f"""\
services:
  vllm:
    image: vllm/vllm-openai:v0.8.5
    command: ["--model", "{QWEN}", "--max-model-len", "{TOO_LONG}"]
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
"""


@case("compose-extends-cycle-200", "200 services each extending the next, the last extending the first (Compose "
      "refuses the cycle)", [Expect("compose.yaml", None)])
def _(repo, outside):
    body = "services:\n"
    for i in range(200):
        body += f"  s{i}:\n    image: vllm/vllm-openai:v0.8.5\n    extends:\n      service: s{(i + 1) % 200}\n"
    write(repo / "compose.yaml", body, dedent=False)


# (corrected after the first run, my mistake: the runner matches a file by its name's end, which "docker-compose"
# is not; vramlint gave the VRL005 on docker-compose.yml:4, where the base's command is)
@case("compose-override-4MB", "docker-compose.override.yml of 4 MB (100,000 environment entries, HF token among "
      "them) over a base whose length is past the model",
      [Expect("docker-compose.yml", (4,), rule="VRL005", alternatives=[Expect("docker-compose.override.yml", None,
                                                                              rule="VRL005")])],
      exits=(1,), min_servers=1)
def _(repo, outside):
    write(repo / "docker-compose.yml", _BASE, dedent=False)
    env = "".join(f"      V{i}: \"{'e' * 20}\"\n" for i in range(100000))
    write(repo / "docker-compose.override.yml", f"services:\n  vllm:\n    environment:\n      HF_TOKEN: {TOKEN}\n"
          + env, dedent=False)


@case("compose-override-fifo-and-link", "a docker-compose.override.yml that is a FIFO; another folder's is a link "
      "to an outside file", [Expect("a/docker-compose.yml", (4,), rule="VRL005"),
                             Expect("b/docker-compose.yml", (4,), rule="VRL005")], exits=(1,), min_servers=2)
def _(repo, outside):
    write(repo / "a" / "docker-compose.yml", _BASE, dedent=False)
    fifo(repo / "a" / "docker-compose.override.yml")
    write(repo / "b" / "docker-compose.yml", _BASE, dedent=False)
    os.symlink(outside / "secret.yaml", repo / "b" / "docker-compose.override.yml")


# --- Ray head/worker Services -----------------------------------------------------------------------------------

_HEAD = f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: head
spec:
  selector:
    matchLabels: {{app: head}}
  template:
    metadata:
      labels: {{app: head}}
    spec:
      containers:
        - name: head
          image: vllm/vllm-openai:v0.9.2
          command: ["/bin/bash", "-c"]
          args: ["ray start --head --port=6379 && vllm serve {QWEN} --max-model-len {TOO_LONG} --tensor-parallel-size 2"]
          resources:
            limits:
              nvidia.com/gpu: 1
---
apiVersion: v1
kind: Service
metadata:
  name: head-svc
spec:
  selector: {{app: head}}
  ports: [{{name: gcs, port: 6379}}]
"""

_WORKER = """\
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: w{i}
spec:
  selector:
    matchLabels: {{app: w{i}}}
  template:
    metadata:
      labels: {{app: w{i}}}
    spec:
      containers:
        - name: w
          image: vllm/vllm-openai:v0.9.2
          args: ["ray start --address={address}:6379 --block"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


@case("ray-10000-workers", "a Ray head Deployment and Service, 10,000 worker Deployments joining it (4 files)",
      [Expect("head.yaml", (16,), rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    write(repo / "head.yaml", _HEAD, dedent=False)
    for part in range(4):
        write(repo / f"workers{part}.yaml",
              "".join(_WORKER.format(i=part * 2500 + i, address="head-svc") for i in range(2500)), dedent=False)


@case("ray-worker-address-bomb", "a worker whose address is $(A) with A = $(B)$(B) ... 30 levels (2**30), and one "
      "of 100,000 characters", [Expect("head.yaml", (16,), rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    env = "          env:\n" + "".join(f"            - name: A{i}\n              value: \"$(A{i + 1})$(A{i + 1})\"\n"
                                        for i in range(30)) + "            - name: A30\n              value: h\n"
    worker = _WORKER.format(i=0, address="$(A0)") + env
    worker += _WORKER.format(i=1, address="x" * 100000)
    write(repo / "head.yaml", _HEAD + worker, dedent=False)


# --- charts naming no vLLM ------------------------------------------------------------------------------------

_PLAIN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.n }}\n"


@case("chart-no-vllm-2000-subcharts", "a chart naming no vLLM with 2,000 subcharts, beside a Deployment past the "
      "model", [Expect("deploy.yaml", (11,), rule="VRL005")], exits=(1,), min_servers=1)
def _(repo, outside):
    chart(repo, where="big", template=_PLAIN, values="n: x\n")
    for i in range(2000):
        chart(repo, where=f"big/charts/s{i}", template=_PLAIN, values="n: y\n")
    write(repo / "deploy.yaml", k8s_deployment(f'["--model", "{QWEN}", "--max-model-len", "{TOO_LONG}"]'),
          dedent=False)


@case("chart-no-vllm-deep-and-loop", "a chart naming no vLLM whose subcharts nest 60 deep, one a link to .., one "
      "to /; a Deployment past the model beside", [Expect("deploy.yaml", (11,), rule="VRL005")], exits=(1,),
      min_servers=1)
def _(repo, outside):
    where = "deep"
    for _ in range(60):
        chart(repo, where=where, template=_PLAIN, values="n: x\n")
        where += "/charts/c"
    os.symlink("..", repo / "deep" / "charts" / "up")
    os.symlink("/", repo / "deep" / "charts" / "root")
    write(repo / "deploy.yaml", k8s_deployment(f'["--model", "{QWEN}", "--max-model-len", "{TOO_LONG}"]'),
          dedent=False)


# --- extension-less scripts named on the command line -----------------------------------------------------------

@case("extless-nul-and-doubling", "`serve` (no extension, no shebang) with a NUL byte; `launch` doubling X 40 "
      "times before vllm serve --served-model-name $X", [Expect("serve", (1, 2)), Expect("launch", None)],
      args=("serve", "launch"))
def _(repo, outside):
    (repo / "serve").write_bytes(b"MODEL=Qwen/Qwen2.5-7B\x00-Instruct\nvllm serve $MODEL\n")
    write(repo / "launch", "X=ab\n" + 'X="$X$X"\n' * 40 + f"vllm serve {QWEN} --served-model-name \"$X\"\n",
          dedent=False)


@case("extless-fifo-and-environ-named", "`start` (a FIFO) and `run` (a link to /proc/self/environ) named on the "
      "command line beside `ok`, a script past the model", [Expect("ok", (1,), rule="VRL005")], exits=(1,),
      args=("start", "run", "ok"), min_servers=1)
def _(repo, outside):
    fifo(repo / "start")
    os.symlink("/proc/self/environ", repo / "run")
    write(repo / "ok", f"vllm serve {QWEN} --max-model-len {TOO_LONG}\n", dedent=False)


# --- vramlint's stand-ins written in a file ---------------------------------------------------------------------

@case("stand-ins-in-values", "--max-model-len \"\u29834096\u2984\" (not an integer: vLLM's argparse refuses it) and "
      "a served name of stand-ins", [Expect("deploy.yaml", (11,), levels=("error",))], exits=(1,))
def _(repo, outside):
    write(repo / "deploy.yaml", k8s_deployment(f'["--model", "{QWEN}", "--max-model-len", "\u29834096\u2984", '
                                               '"--served-model-name", "\u2983unknown\u2984"]'), dedent=False)


# ----------------------------------------------------------------------------------------------------------------
# the runner: round 23's checks, this round's secrets, round 24's wall-clock limit


def run_case(c: Case, checkout: Path, work: Path) -> dict:
    b23.TOKEN, b23.SENTINEL, b23.plant_outside = TOKEN, SENTINEL, plant_outside
    return b23.run_case(c, checkout, work, wall_limit=WALL_LIMIT_S)


def main() -> int:
    return b23.main(CASES, run_case, "blind26-", __doc__)


if __name__ == "__main__":
    sys.exit(main())
