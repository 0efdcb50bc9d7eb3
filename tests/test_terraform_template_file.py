"""`data "template_file"` (the hashicorp/template provider) and `A == B ? x : y` in Terraform (audit24: a
production-stack release whose values are `data.template_file.vllm_values[0].rendered`, the template a `file()` of
`var.inference_hardware == "gpu" ? GPU_TEMPLATE : CPU_TEMPLATE`). The rendered text is the template with its
`vars`, as templatefile() renders it; the comparison picks the branch the variables' values pick."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan

RELEASE = """\
    variable "inference_hardware" {
      type    = string
      default = "gpu"
    }

    variable "gpu_values" {
      type    = string
      default = "helm/gpu.tpl"
    }

    data "template_file" "vllm_values" {
      count    = 1
      template = file(
        var.inference_hardware == "gpu"
        ? "${path.module}/${var.gpu_values}"
        : "${path.module}/helm/cpu.tpl"
      )
      vars = {
        context = 16384
      }
    }

    resource "helm_release" "vllm_stack" {
      count      = 1
      name       = "vllm-gpu"
      repository = "https://vllm-project.github.io/production-stack"
      chart      = "vllm-stack"
      values     = [data.template_file.vllm_values[0].rendered]
    }
    """

GPU_TEMPLATE = """\
servingEngineSpec:
  modelSpec:
  - name: "small-gpu"
    repository: "vllm/vllm-openai"
    tag: "v0.10.1"
    modelURL: "Qwen/Qwen2.5-1.5B-Instruct"
    replicaCount: 1
    requestGPU: 1
    vllmConfig:
      maxModelLen: ${context}
"""

CPU_TEMPLATE = GPU_TEMPLATE.replace("small-gpu", "small-cpu").replace("requestGPU: 1", "requestGPU: 0")


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / "stack" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


def test_template_file_rendered_is_the_template_with_its_vars(tmp_path):
    root = _tree(tmp_path, {"release.tf": RELEASE, "helm/gpu.tpl": GPU_TEMPLATE, "helm/cpu.tpl": CPU_TEMPLATE})
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct" and server.vllm_version == "0.10.1"
    assert server.name.startswith("small-gpu") or "small-gpu" in str(server.name)
    assert server.args["max_model_len"] == 16384 and server.gpu.count == 1
    # placed on the release's `values` line, as a templatefile() of the same file is
    for where in (server.arg_locations["max_model_len"], server.model_location):
        assert where.file.endswith("release.tf") and where.line == 28


def test_the_comparison_picks_the_branch_of_the_variables_values(tmp_path):
    root = _tree(tmp_path, {"release.tf": RELEASE.replace('default = "gpu"', 'default = "cpu"'),
                            "helm/gpu.tpl": GPU_TEMPLATE, "helm/cpu.tpl": CPU_TEMPLATE})
    [server] = scan([root]).servers
    assert "small-cpu" in str(server.name)


def test_an_unknown_side_leaves_the_values_unknown_and_says_so(tmp_path):
    text = RELEASE.replace('      default = "gpu"\n', "")  # no default: known only at `terraform apply`
    root = _tree(tmp_path, {"release.tf": text, "helm/gpu.tpl": GPU_TEMPLATE, "helm/cpu.tpl": CPU_TEMPLATE})
    inventory = scan([root])
    assert inventory.servers == []
    assert any("vramlint does not know" in p.message for p in inventory.problems)
