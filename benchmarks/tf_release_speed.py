"""What reading the Terraform files that name no vLLM for their releases of local charts costs (issue 9, D-H1).

    python3 benchmarks/tf_release_speed.py [--files 500] [--repeat 3]

Writes a tree (in a temporary folder) of ``--files`` `.tf` files that name no vLLM, shaped after
groundx-on-prem's operator/: two in five hold AWS resources, variables and locals only; one in five a
`helm_release` of a repository's chart (`chart = "ingress-nginx"` or `"bitnami/redis"`); two in five a
`helm_release` of one of 20 charts of the tree (`modules/*/helm_chart`, no values.yaml) that name no vLLM, with
`yamlencode` values and `set` blocks. Prints the CPU time (user + system, of this process and of the scan's worker
processes: from 200 files on, a pool reads them; best of ``--repeat``) of one `scan` of the tree, and its servers
and findings. Run it with the previous code on PYTHONPATH for the figure before.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))

CHARTS = 20

_CHART_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Values.service.name }}
spec:
  replicas: {{ .Values.replicas }}
  template:
    spec:
      containers:
        - name: app
          image: {{ .Values.image }}
"""

_PLAIN = """\
variable "cluster_{k}" {{
  type    = string
  default = "eks-{k}"
}}

locals {{
  tags_{k} = {{ team = "platform", index = {k} }}
}}

resource "aws_s3_bucket" "data_{k}" {{
  bucket = "groundx-data-{k}"
  tags   = local.tags_{k}
}}
"""

_REMOTE = """\
resource "helm_release" "ingress_{k}" {{
  name       = "ingress-{k}"
  repository = "https://kubernetes.github.io/ingress-nginx"
  chart      = "{chart}"
  values = [
    yamlencode({{ controller = {{ replicaCount = 2 }} }})
  ]
  set {{
    name  = "controller.service.type"
    value = "LoadBalancer"
  }}
}}
"""

_LOCAL = """\
resource "helm_release" "service_{k}" {{
  name      = "service-{k}"
  namespace = "eyelevel"
  chart     = "${{path.module}}/../../modules/svc{c}/helm_chart"
  values = [
    yamlencode({{
      service  = {{ name = "service-{k}", namespace = "eyelevel" }}
      image    = "registry.example.com/groundx/svc{c}:1.0.{k}"
      replicas = 1
    }})
  ]
  set {{
    name  = "service.port"
    value = "8080"
  }}
}}
"""


def build(root: str, files: int) -> None:
    for c in range(CHARTS):
        chart = os.path.join(root, "modules", f"svc{c}", "helm_chart")
        os.makedirs(os.path.join(chart, "templates"))
        with open(os.path.join(chart, "Chart.yaml"), "w") as fh:
            fh.write(f"apiVersion: v2\nname: svc{c}\nversion: 0.1.0\n")
        with open(os.path.join(chart, "templates", "deployment.yaml"), "w") as fh:
            fh.write(_CHART_TEMPLATE)
    for k in range(files):
        folder = os.path.join(root, "operator", f"app{k // 10}")
        os.makedirs(folder, exist_ok=True)
        kind = k % 5
        if kind in (0, 1):
            text = _PLAIN.format(k=k)
        elif kind == 2:
            text = _REMOTE.format(k=k, chart="ingress-nginx" if k % 2 else "bitnami/redis")
        else:
            text = _LOCAL.format(k=k, c=k % CHARTS)
        with open(os.path.join(folder, f"f{k}.tf"), "w") as fh:
            fh.write(text)


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=500, help=".tf files in the tree")
    ap.add_argument("--repeat", type=int, default=3, help="scans timed (the best is printed)")
    opts = ap.parse_args()
    from vramlint.scan import scan

    with tempfile.TemporaryDirectory(prefix="tf-release-speed-") as root:
        build(root, opts.files)
        best = None
        for _ in range(opts.repeat):
            start = _cpu()
            inv = scan([root])
            spent = _cpu() - start
            best = spent if best is None else min(best, spent)
        print(f"{opts.files} .tf files naming no vLLM ({CHARTS} local charts): scan {best:.2f} CPU-s (best of "
              f"{opts.repeat}); {len(inv.servers)} servers, {len(inv.problems)} findings")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
