"""Terraform files that deploy vLLM (audit21 C17): the Kubernetes objects and Helm releases of a module's resources,
read with the module's variables, locals and auto-loaded tfvars, positions on the .tf lines."""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from vramlint.discover import discover
from vramlint.extract import hcl
from vramlint.scan import scan


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


def _notes(inv):
    return [p for p in inv.problems if p.level == "note"]


# the hashicorp/kubernetes provider's block form: snake_case fields, one `container` block per container
_BLOCK_FORM = """\
    variable "served" {
      type    = string
      default = "Qwen/Qwen2.5-7B-Instruct"
    }

    locals {
      context = 16384
      labels  = { app = "chat" }
    }

    resource "kubernetes_deployment_v1" "chat" {
      metadata {
        name   = "chat"
        labels = local.labels
      }
      spec {
        replicas = 2
        selector {
          match_labels = local.labels
        }
        template {
          metadata {
            labels = local.labels
          }
          spec {
            node_selector = {
              "nvidia.com/gpu.product" = "NVIDIA-L4"
            }
            container {
              name  = "engine"
              image = "vllm/vllm-openai:v0.8.5"
              args = [
                "--model", var.served,
                "--max-model-len", tostring(local.context),
                "--gpu-memory-utilization", "0.9",
              ]
              env {
                name  = "HF_HOME"
                value = "/cache"
              }
              resources {
                limits = {
                  "nvidia.com/gpu" = 1
                }
              }
              volume_mount {
                name       = "dshm"
                mount_path = "/dev/shm"
              }
            }
            volume {
              name = "dshm"
              empty_dir {
                medium = "Memory"
              }
            }
          }
        }
      }
    }
    """


def test_kubernetes_deployment_block_form_is_read_as_the_object_the_provider_sends(tmp_path):
    root = _tree(tmp_path, {"infra/main.tf": _BLOCK_FORM})
    inv = scan([root])
    [server] = inv.servers
    assert server.kind == "Deployment" and server.name == "chat" and server.container == "engine"
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.model_location.line == 33
    assert server.args["max_model_len"] == 16384 and server.arg_locations["max_model_len"].line == 34
    assert server.vllm_version == "0.8.5" and server.replicas == 2
    assert server.gpu.type == "L4" and server.gpu.count == 1
    assert server.shm is True  # the Memory emptyDir volume at /dev/shm, from the blocks
    assert server.env["HF_HOME"] == "/cache"
    assert any("var.served from its default in" in n for n in server.notes)


_KUBECTL = """\
    resource "kubectl_manifest" "engine" {
      count = var.enabled ? 1 : 0
      yaml_body = <<-YAML
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: engine
          namespace: ${kubernetes_namespace.llm[0].metadata[0].name}
        spec:
          template:
            spec:
              containers:
              - name: engine
                image: ${var.image}
                args: ["--model", "${var.model_id}", "--max-model-len", "${var.context}"]
                resources:
                  limits:
                    nvidia.com/gpu: 1
        YAML
    }
    """

_VARIABLES = """\
    variable "enabled" {
      type    = bool
      default = false
    }
    variable "image" {
      default = "vllm/vllm-openai:v0.9.2"
    }
    variable "model_id" {
      default = "meta-llama/Llama-3.1-8B-Instruct"
    }
    variable "context" {
      type = number
    }
    """


def test_kubectl_manifest_heredoc_with_variables_from_another_file(tmp_path):
    root = _tree(tmp_path, {"gpu/engine.tf": _KUBECTL, "gpu/variables.tf": _VARIABLES})
    inv = scan([root])
    [server] = inv.servers
    assert server.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert server.vllm_version == "0.9.2"
    # placed on the .tf file's lines: the heredoc's lines, with `<<-`'s indentation removed
    assert server.file.endswith("gpu/engine.tf") and server.model_location.line == 15
    assert server.gpu.count == 1 and server.gpu.location.line == 18
    # var.context has no default: unknown, said once with the change that makes it known; the namespace's
    # unknown resource attribute reaches no setting of the server and is not said
    assert "max_model_len" not in server.args or server.args["max_model_len"] is None
    said = " ".join(server.notes)
    assert "var.context: variable context has no default" in said and "TF_VAR_context" in said
    assert "kubernetes_namespace" not in said
    assert "count is 0" in said


def test_auto_loaded_tfvars_win_over_defaults_and_other_tfvars_are_named_only(tmp_path):
    root = _tree(tmp_path, {
        "gpu/engine.tf": _KUBECTL, "gpu/variables.tf": _VARIABLES,
        "gpu/terraform.tfvars": 'context = 8192\nmodel_id = "Qwen/Qwen2.5-14B-Instruct"\n',
        "gpu/prod.tfvars": 'image = "vllm/vllm-openai:v0.10.0"\n',
    })
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-14B-Instruct" and server.args["max_model_len"] == 8192
    assert server.vllm_version == "0.9.2"  # prod.tfvars applies only with -var-file: the default is read
    said = " ".join(server.notes)
    assert "terraform.tfvars (which Terraform loads by itself)" in said and "prod.tfvars sets another" in said


_RELEASE = """\
    resource "helm_release" "stack" {
      name       = "vllm"
      repository = "https://vllm-project.github.io/production-stack"
      chart      = "vllm-stack"
      values = [yamlencode({
        servingEngineSpec = {
          modelSpec = [{
            name = "small"
          }]
        }
      })]
      set = [
        {
          name  = "servingEngineSpec.modelSpec[0].repository"
          value = "vllm/vllm-openai"
        },
        {
          name  = "servingEngineSpec.modelSpec[0].tag"
          value = local.tag
        },
        {
          name  = "servingEngineSpec.modelSpec[0].modelURL"
          value = local.model
        },
        {
          name  = "servingEngineSpec.modelSpec[0].vllmConfig.maxModelLen"
          value = local.context
        },
        {
          name  = "servingEngineSpec.modelSpec[0].requestGPU"
          value = 1
        },
      ]
    }
    """

_LOCALS = """\
    locals {
      tag     = "v0.11.0"
      model   = "meta-llama/Llama-3.2-3B-Instruct"
      context = 32768
    }
    """


def test_helm_release_of_a_known_chart_values_then_set_list(tmp_path):
    root = _tree(tmp_path, {"stack/release.tf": _RELEASE, "stack/locals.tf": _LOCALS})
    [server] = scan([root]).servers
    assert server.model == "meta-llama/Llama-3.2-3B-Instruct" and server.vllm_version == "0.11.0"
    # --set typing (strvals): the number written as text is an integer, placed on the set entry's value
    assert server.args["max_model_len"] == 32768 and server.arg_locations["max_model_len"].line == 27
    assert server.gpu.count == 1
    assert any("installs chart vllm-stack" in n for n in server.notes)


def test_helm_release_set_blocks_of_provider_2(tmp_path):
    text = _RELEASE.replace("""      set = [
        {
          name  = "servingEngineSpec.modelSpec[0].repository"
          value = "vllm/vllm-openai"
        },""", """      set {
        name  = "servingEngineSpec.modelSpec[0].repository"
        value = "vllm/vllm-openai"
      }
      set = [""")
    root = _tree(tmp_path, {"stack/release.tf": text, "stack/locals.tf": _LOCALS})
    [server] = scan([root]).servers
    assert server.image == "vllm/vllm-openai:v0.11.0"


_CHART = {
    "deploy/charts/engine/Chart.yaml": "apiVersion: v2\nname: engine\nversion: 0.1.0\n",
    "deploy/charts/engine/values.yaml": """\
        image: vllm/vllm-openai:v0.9.0
        command: "vllm serve __MODEL_AND_FLAGS__"
        resources: {}
        """,
    "deploy/charts/engine/templates/deployment.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: engine
        spec:
          template:
            spec:
              containers:
                - name: engine
                  image: {{ .Values.image }}
                  command: ["/bin/sh", "-c"]
                  args:
                    - {{ .Values.command }}
                  resources:
                    {{- toYaml .Values.resources | nindent 20 }}
        """,
    "deploy/terraform/main.tf": """\
        resource "helm_release" "engine" {
          name  = "engine"
          chart = "../charts/engine"
          values = [
            <<-EOT
            resources:
              limits:
                nvidia.com/gpu: "1"
            command: "vllm serve mistralai/Mistral-7B-Instruct-v0.3 --max-model-len 8192"
            EOT
          ]
        }
        """,
}


def test_helm_release_of_a_chart_in_the_tree_is_evaluated_with_the_release_values(tmp_path):
    root = _tree(tmp_path, _CHART)
    inv = scan([root])
    # one server: the release's, not the chart's own defaults (whose placeholder model no one deploys)
    [server] = inv.servers
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3" and server.args["max_model_len"] == 8192
    assert server.gpu.count == 1
    # the values the release gives are found on the .tf lines that wrote them
    assert server.gpu.location.file.endswith("deploy/terraform/main.tf") and server.gpu.location.line == 8
    assert not any("__MODEL_AND_FLAGS__" in p.message for p in inv.problems)


def test_a_tf_file_naming_vllm_with_no_server_says_why(tmp_path):
    root = _tree(tmp_path, {"vm/main.tf": """\
        resource "aws_sagemaker_model" "engine" {
          execution_role_arn = "arn:aws:iam::123456789012:role/sm"
          primary_container {
            image = "vllm/vllm-openai:v0.9.0"
          }
        }
        """, "other/remote.tf": """\
        resource "helm_release" "engine" {
          repository = "https://charts.example.com"
          chart      = "vllm-serving"
          values     = [file("missing.yaml")]
        }
        """, "vars/variables.tf": """\
        # vLLM settings
        variable "vllm_image" { default = "vllm/vllm-openai:v0.9.0" }
        """})
    inv = scan([root])
    assert not inv.servers
    by_file: dict = {}
    for p in inv.problems:
        by_file.setdefault(p.file.rsplit("/", 2)[-2], []).append(p)
    [vm] = by_file["vm"]
    assert "does not read aws_sagemaker_model resources" in vm.message and vm.line == 1
    # the release is not checked, said on the resource; the file() it could not read, on the call's line
    release, missing = sorted(by_file["other"], key=lambda p: p.line)
    assert "installs chart vllm-serving from https://charts.example.com" in release.message and release.line == 1
    assert "file() of" in missing.message and "missing.yaml" in missing.message and "not in the repository" in \
        missing.message and (missing.line, missing.level) == (4, "note")
    assert "vars" not in by_file  # a module's variables are read where a resource uses them


def test_tf_files_are_walked_and_tfvars_are_not_entries(tmp_path):
    root = _tree(tmp_path, {"a/main.tf": "locals {}\n", "a/terraform.tfvars": "x = 1\n", "a/x.tf.json": "{}"})
    names = sorted(e.display.rsplit("/", 1)[-1] for e in discover([root]).files)
    assert names == ["main.tf", "x.tf.json"]


def test_parser_positions_and_expressions():
    body = hcl.parse('resource "a" "b" {\n  x = [1, "two", { k = v.w }]\n  y = <<EOT\nhi ${var.z}\nEOT\n}\n')
    [block] = body
    assert block.labels == ["a", "b"] and block.line == 0 and block.end_line == 5
    x = block.attr("x")
    assert x.line == 1 and isinstance(x.expr, hcl.TupleExpr) and x.expr.items[1].col == 10
    y = block.attr("y").expr
    assert y.heredoc and y.body_line == 3 and isinstance(y.parts[1], hcl.Interp)


@pytest.mark.parametrize("text", [
    'resource "a" "b" {\n  x = 1\n',  # a block never closed
    'x = <<EOT\nno end\n',  # a heredoc never closed
    "x = " + "[" * 5000 + "]" * 5000 + "\n",  # deep nesting
    "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
    'x = "${' * 2000 + "1" + '}"' * 2000 + "\n",
    'x = "unterminated\n',
])
def test_hostile_hcl_is_refused_with_a_line_quickly(text):
    start = time.process_time()
    with pytest.raises(hcl.HclError):
        hcl.parse(text)
    assert time.process_time() - start < 1.0


def test_hostile_terraform_files_are_bounded(tmp_path):
    big = "x\n" * 600_000
    root = _tree(tmp_path, {
        "huge/main.tf": 'resource "kubectl_manifest" "vllm" {\n  yaml_body = <<EOT\n' + big + "EOT\n}\n",
        "deep/main.tf": 'resource "kubectl_manifest" "vllm" {\n  yaml_body = ' + "[" * 3000 + "\n}\n",
        "loop/main.tf": """\
            locals {
              a = local.b
              b = "${local.a}-vllm"
            }
            resource "kubectl_manifest" "vllm" {
              yaml_body = "image: ${local.a}"
            }
            """,
        "outside/main.tf": """\
            resource "kubectl_manifest" "engine" {
              yaml_body = templatefile("/etc/passwd", { image = "vllm/vllm-openai:v0.9.0" })
            }
            """,
    })
    start = time.process_time()
    inv = scan([root])
    assert time.process_time() - start < 10
    assert not inv.servers
    said: dict = {}
    for p in inv.problems:
        said.setdefault(p.file.rsplit("/", 2)[-2], []).append(p)
    assert "longer than 1,000,000 characters" in said["huge"][0].message
    assert "nested more than 64 levels" in said["deep"][0].message
    # a file outside the scanned tree is never read: a warning on the call's line, and the reason the manifest
    # is not checked
    outside = " ".join(p.message for p in said["outside"])
    assert "/etc/passwd is outside the scanned" in outside and "root:" not in outside
    assert [(p.line, p.level) for p in said["outside"] if p.message.startswith("templatefile() of /etc/passwd")] \
        == [(2, "warning")]
    # locals that refer to each other: Terraform's own refusal, on the first local as written
    [cycle] = [p for p in said["loop"] if "refer to each other" in p.message]
    assert cycle.line == 2 and cycle.level == "warning" and "Cycle: local.a, local.b" in cycle.message


def test_locals_that_fan_out_are_bounded(tmp_path):
    # each local names the next twice: 2**40 evaluations written out, bounded by the file's step budget
    lines = ["locals {"] + [f'  l{k} = "${{local.l{k + 1}}}${{local.l{k + 1}}}"' for k in range(40)] + \
        ['  l40 = "x"', "}"]
    resources = "\n".join(f'resource "kubectl_manifest" "vllm{k}" {{\n  yaml_body = "image: ${{local.l0}}"\n}}'
                          for k in range(50))
    root = _tree(tmp_path, {"fan/main.tf": "\n".join(lines) + "\n" + resources + "\n"})
    start = time.process_time()
    inv = scan([root])
    assert time.process_time() - start < 10
    assert not inv.servers


def test_a_module_folder_is_parsed_once_for_its_files(tmp_path):
    from vramlint.extract import terraform_eval

    files = {f"m/engine{k}.tf": _KUBECTL.replace('"engine"', f'"engine{k}"') for k in range(5)}
    files["m/variables.tf"] = _VARIABLES
    root = _tree(tmp_path, files)
    terraform_eval._MODULES.clear()
    assert len(scan([root]).servers) == 5
    # read once for its five files (the folder above it is read once too, for module blocks that call it)
    assert [k[0] for k in terraform_eval._MODULES].count(str(tmp_path / "m")) == 1


def test_a_configmap_of_the_module_named_through_its_resource_gives_the_container_its_variables(tmp_path):
    root = _tree(tmp_path, {"cm/config.tf": """\
        variable "context" { default = 12288 }
        resource "kubernetes_config_map" "engine" {
          metadata {
            name = "engine-settings"
          }
          data = {
            SERVED        = "Qwen/Qwen2.5-7B-Instruct"
            CONTEXT       = tostring(var.context)
          }
        }
        """, "cm/engine.tf": """\
        resource "kubernetes_deployment" "engine" {
          metadata {
            name = "engine"
          }
          spec {
            template {
              metadata {}
              spec {
                container {
                  name    = "engine"
                  image   = "vllm/vllm-openai:v0.9.2"
                  command = ["vllm", "serve", "$(SERVED)", "--max-model-len", "$(CONTEXT)"]
                  env_from {
                    config_map_ref {
                      name = kubernetes_config_map.engine.metadata.0.name
                    }
                  }
                  resources {
                    limits = { "nvidia.com/gpu" = 1 }
                  }
                }
              }
            }
          }
        }
        """})
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 12288


def test_a_module_called_from_a_folder_above_takes_the_arguments_of_its_call(tmp_path):
    root = _tree(tmp_path, {
        "live/main.tf": """\
            locals {
              served = "mistralai/Mistral-7B-Instruct-v0.3"
            }
            module "engine" {
              source   = "./modules/engine"
              model_id = local.served
              context  = 4096
            }
            """,
        "live/modules/engine/engine.tf": _KUBECTL, "live/modules/engine/variables.tf": _VARIABLES})
    [server] = scan([root]).servers
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3" and server.args["max_model_len"] == 4096
    assert server.vllm_version == "0.9.2"  # not given by the call: the variable's default
    said = " ".join(server.notes)
    assert "module engine in" in said and "live/main.tf, which calls this module" in said


_JSON = '{\n  "variable": {"model": {"default": "Qwen/Qwen2.5-7B-Instruct"}},\n  "resource": {\n    "kubernetes_deployment": {\n      "engine": {\n        "metadata": {"name": "engine"},\n        "spec": {\n          "template": {\n            "metadata": {"labels": {"app": "engine"}},\n            "spec": {\n              "node_selector": {"nvidia.com/gpu.product": "NVIDIA-L4"},\n              "container": [{\n                "name": "engine",\n                "image": "vllm/vllm-openai:v0.8.5",\n                "args": ["--model", "${var.model}", "--max-model-len", "8192"],\n                "resources": {"limits": {"nvidia.com/gpu": 1}}\n              }]\n            }\n          }\n        }\n      }\n    },\n    "kubectl_manifest": {\n      "other": {"yaml_body": "apiVersion: apps/v1\\nkind: Deployment\\nmetadata:\\n  name: other\\nspec:\\n  template:\\n    spec:\\n      containers:\\n      - name: x\\n        image: vllm/vllm-openai:v0.9.0\\n        args: [\\"--model\\", \\"${var.model}\\"]\\n"}\n    }\n  }\n}\n'


def test_terraform_json_syntax_reads_the_same_resources(tmp_path):
    (tmp_path / "main.tf.json").write_text(_JSON)
    servers = sorted(scan([str(tmp_path)]).servers, key=lambda s: s.location.line)
    assert [(s.kind, s.model, s.vllm_version) for s in servers] == [
        ("Deployment", "Qwen/Qwen2.5-7B-Instruct", "0.8.5"), ("Deployment", "Qwen/Qwen2.5-7B-Instruct", "0.9.0")]
    block, heredoc = servers
    assert block.gpu.type == "L4" and block.args["max_model_len"] == 8192 and block.location.line == 12
    assert heredoc.location.line == 24  # YAML in a JSON string: at the string


def test_release_values_with_an_unknown_variable_are_still_applied(tmp_path):
    files = dict(_CHART)
    files["deploy/terraform/main.tf"] = files["deploy/terraform/main.tf"].replace(
        "mistralai/Mistral-7B-Instruct-v0.3", "${var.served}")
    files["deploy/terraform/variables.tf"] = 'variable "served" { type = string }\n'
    inv = scan([_tree(tmp_path, files)])
    [server] = inv.servers
    # the heredoc's other values are the release's (its GPU, its --max-model-len); only the model is unknown
    assert server.model is None and server.args["max_model_len"] == 8192 and server.gpu.count == 1
    assert any("var.served: variable served has no default" in n for n in server.notes)
    assert not any("__MODEL_AND_FLAGS__" in " ".join(s.unchecked) for s in inv.servers)


def test_set_indexes_that_pad_lists_are_bounded(tmp_path):
    sets = "\n".join(f'  set {{\n    name  = "l{k}[999]"\n    value = "vllm/vllm-openai:v0.9.0"\n  }}'
                     for k in range(3000))
    root = _tree(tmp_path, {"pad/main.tf": f'resource "helm_release" "x" {{\n  chart = "c"\n{sets}\n}}\n'})
    start = time.process_time()
    scan([root])
    assert time.process_time() - start < 5


def test_a_client_endpoint_naming_vllm_is_no_mention(tmp_path):
    root = _tree(tmp_path, {"ui/main.tf": """\
        resource "helm_release" "webui" {
          repository = "https://helm.openwebui.com/"
          chart      = "open-webui"
          set {
            name  = "openaiBaseApiUrl"
            value = "http://vllm-router.genai.svc:8000"
          }
        }
        """})
    inv = scan([root])
    assert not inv.servers and not inv.problems


def test_for_each_over_a_known_map_reads_one_server_an_instance(tmp_path):
    root = _tree(tmp_path, {"fleet/main.tf": """\
        variable "models" {
          default = {
            small = { id = "Qwen/Qwen2.5-1.5B-Instruct", context = 8192 }
            large = { id = "Qwen/Qwen2.5-14B-Instruct", context = 16384 }
          }
        }
        resource "kubernetes_deployment" "engine" {
          for_each = var.models
          metadata {
            name = "engine-${each.key}"
          }
          spec {
            template {
              metadata {}
              spec {
                container {
                  name  = "engine"
                  image = "vllm/vllm-openai:v0.9.2"
                  args  = ["--model", each.value.id, "--max-model-len", tostring(each.value.context)]
                  resources {
                    limits = { "nvidia.com/gpu" = 1 }
                  }
                }
              }
            }
          }
        }
        """})
    servers = scan([root]).servers
    assert sorted((s.name, s.model, s.args["max_model_len"]) for s in servers) == [
        ("engine-large", "Qwen/Qwen2.5-14B-Instruct", 16384), ("engine-small", "Qwen/Qwen2.5-1.5B-Instruct", 8192)]
    assert all(any("one instance of the resource's for_each" in n for n in s.notes) for s in servers)


def test_template_directives_in_a_heredoc_are_left_out_and_said(tmp_path):
    root = _tree(tmp_path, {"d/main.tf": """\
        resource "kubectl_manifest" "engine" {
          yaml_body = <<-YAML
            apiVersion: v1
            kind: Pod
            metadata:
              name: engine
            spec:
              containers:
              - name: engine
                image: vllm/vllm-openai:v0.9.2
                args:
                - --model
                - Qwen/Qwen2.5-7B-Instruct
            %{ if var.long }
                - --max-model-len
                - "32768"
            %{ endif }
            YAML
        }
        """})
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 32768
    assert any("a template directive vramlint does not evaluate" in n for n in server.notes)


def test_what_terraform_or_the_reader_refuses_is_said_on_its_line(tmp_path):
    """hostile23: file() of a FIFO and of a link out of the tree, module sources outside the tree, a variable
    default that is no constant, a UTF-16 file, a 5,000-digit number, count and for_each not expanded."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.yaml").write_text("image: stolen\n")
    root = tmp_path / "repo"
    deploy = '["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", tostring(' + "7" * 5000 + ")]"
    files = {
        "infra/main.tf": _BLOCK_FORM,
        "files/main.tf": """\
            resource "kubectl_manifest" "a" {
              yaml_body = file("pipe.yaml")
            }
            resource "kubectl_manifest" "b" {
              yaml_body = file("link.yaml") # vllm serve
            }
            module "far" {
              source = "../../elsewhere"
            }
            module "near" {
              source = "../infra"
            }
            """,
        "defaults/main.tf": """\
            variable "model" {
              default = lower(var.other)
            }
            resource "kubectl_manifest" "engine" {
              count     = 40
              yaml_body = "image: vllm/vllm-openai:v0.9.0\\nargs: [--model, ${var.model}]"
            }
            """,
        "digits/main.tf": 'resource "kubernetes_pod" "p" {\n  spec {\n    container {\n'
                          '      image = "vllm/vllm-openai:v0.8.5"\n      args  = ' + deploy + "\n    }\n  }\n}\n",
    }
    _tree(root, files)
    os.mkfifo(root / "files" / "pipe.yaml")
    os.symlink(outside / "secret.yaml", root / "files" / "link.yaml")
    (root / "utf16").mkdir()
    (root / "utf16" / "main.tf").write_bytes(textwrap.dedent(_BLOCK_FORM).encode("utf-16"))
    inv = scan([str(root)])
    said = {(p.file.rsplit("/", 2)[-2], p.line): p for p in inv.problems}
    assert said[("files", 2)].level == "warning" and "FIFO" in said[("files", 2)].message
    assert said[("files", 5)].level == "warning" and "outside the scanned tree" in said[("files", 5)].message
    assert "module far: its source ../../elsewhere is outside the scanned tree" in said[("files", 8)].message
    assert ("files", 11) not in said  # a module inside the tree is scanned as a folder of its own
    assert "Function calls not allowed" in said[("defaults", 2)].message
    assert "count is 40; read as one instance" in said[("defaults", 5)].message
    assert "UTF-8" in said[("utf16", 1)].message and said[("utf16", 1)].level == "warning"
    assert not any("stolen" in p.message for p in inv.problems)
    # Terraform's numbers are arbitrary precision: the 5,000-digit number reaches the flag, which vLLM cannot take
    [pod] = [s for s in inv.servers if "digits" in s.file]
    assert pod.model == "Qwen/Qwen2.5-7B-Instruct"
    assert not any("failed while reading" in p.message for p in inv.problems)
    assert not any(s.file.endswith("utf16/main.tf") for s in inv.servers)


_SECRET_TF = """\
    variable "token" {
      type      = string
      sensitive = true
    }

    variable "user" {
      type    = string
      default = "admin"
    }

    resource "kubectl_manifest" "hub_secret" {
      yaml_body = <<-EOT
        apiVersion: v1
        kind: Secret
        metadata:
          name: vllm-hub
        data:
          token: ${base64encode(var.token)}
          user: ${base64encode(var.user)}
          %s
      EOT
    }
"""


def _secret_errors(inv):
    return [p for p in inv.problems if p.level == "error" and "not base64" in p.message]


def test_secret_data_from_base64encode_is_not_refused(tmp_path):
    # audit23 D1: base64encode(var.token) of a variable with no default is unknown until applied, and of one
    # with a default is its base64 text: neither is "not base64", which the API server would refuse
    root = _tree(tmp_path, {"infra/secret.tf": _SECRET_TF % ""})
    assert _secret_errors(scan([root])) == []


def test_secret_data_not_base64_in_the_same_manifest_is_still_refused(tmp_path):
    root = _tree(tmp_path, {"infra/secret.tf": _SECRET_TF % "plain: not-base64!"})
    [error] = _secret_errors(scan([root]))
    assert "data.plain" in error.message and error.file.endswith("secret.tf") and error.line == 20


def test_base64_functions_evaluate_as_terraform_does():
    from vramlint.extract.terraform_eval import _pure

    assert _pure("base64encode", ["Hello, é"]) == "SGVsbG8sIMOp"
    assert _pure("base64decode", ["SGVsbG8sIMOp"]) == "Hello, é"
    with pytest.raises(ValueError):
        _pure("base64decode", ["not base64!"])


_GROWING_LOCALS = {
    "base64": f'seed = "{"s" * 100_000}"\n  big = ' + "base64encode(" * 40 + "local.seed" + ")" * 40,
    "replace": f'a = "{"x" * 1000}"\n  b = replace(local.a, "x", local.a)\n  c = replace(local.b, "x", local.b)\n'
               '  big = replace(local.c, "x", local.c)',
}


@pytest.mark.parametrize("kind", sorted(_GROWING_LOCALS))
def test_a_call_whose_value_would_pass_the_text_bound_is_said_on_its_line_not_made(tmp_path, kind):
    # hostile24: base64encode nested 40 deep over 100,000 characters took 15 CPU-s and 2.6 GB, replace() three
    # times over 1,000 characters ended in a MemoryError; the value's size is bounded before it is made
    main = "locals {\n  " + _GROWING_LOCALS[kind] + "\n}\n" + textwrap.dedent("""\
        resource "kubernetes_deployment" "vllm" {
          spec {
            template {
              spec {
                container {
                  image = "vllm/vllm-openai:v0.8.5"
                  args  = ["--model", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name", local.big]
                }
              }
            }
          }
        }
        """)
    root = _tree(tmp_path, {"main.tf": main})
    start = time.process_time()
    inv = scan([root])
    assert time.process_time() - start < 3
    [server] = inv.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    said = [p for p in inv.problems if "past vramlint's limit of 2,000,000 characters" in p.message]
    assert said and said[0].file.endswith("main.tf") and said[0].line in (2, 3, 4, 5), inv.problems


def test_recursive_templatefile_and_bad_base64decode_are_said_on_their_call(tmp_path):
    # hostile24: Terraform refuses templatefile() inside a template and base64decode() of text that is not Base64
    # (or not UTF-8 once decoded); the first was said nowhere, the second only in a note on the container
    root = _tree(tmp_path, {
        "a.tpl": '${templatefile("a.tpl", {})}\n',
        "main.tf": textwrap.dedent("""\
            resource "kubectl_manifest" "vllm" {
              yaml_body = templatefile("a.tpl", {})
              # vllm/vllm-openai
            }
            resource "kubernetes_deployment" "vllm" {
              spec {
                template {
                  spec {
                    container {
                      image = "vllm/vllm-openai:v0.8.5"
                      args  = ["--model", "Qwen/Qwen2.5-7B-Instruct", "--served-model-name",
                               base64decode("!!not*base64!!")]
                    }
                  }
                }
              }
            }
            """)})
    inv = scan([root])
    said = {p.line: p for p in inv.problems if p.file.endswith("main.tf") and p.level == "warning"}
    assert "cannot recursively call templatefile" in said[2].message and "a.tpl (line 1)" in said[2].message
    assert "base64decode" in said[12].message and "Terraform refuses it" in said[12].message


# groundx-on-prem's shape (audit24 D-H1): operator/app/*/*.tf install modules/*/helm_chart with a helm_release whose
# `chart` is built from a local and whose values name no vLLM; the chart (no values.yaml) runs vLLM
_RELEASE_NAMING_NO_VLLM = {
    "modules/layout/inference/helm_chart/Chart.yaml": "apiVersion: v2\nname: layout-inference\nversion: 0.1.0\n",
    "modules/layout/inference/helm_chart/templates/deployment.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ .Values.service.name }}
        spec:
          replicas: {{ .Values.replicas }}
          selector:
            matchLabels:
              app: {{ .Values.service.name }}
          template:
            metadata:
              labels:
                app: {{ .Values.service.name }}
            spec:
              containers:
                - name: inference
                  image: vllm/vllm-openai:v0.8.5
                  args: [--model, "{{ .Values.model.name }}", --max-model-len, "{{ .Values.model.maxLen }}"]
                  resources:
                    limits:
                      nvidia.com/gpu: {{ .Values.gpus }}
        """,
    "modules/queue/helm_chart/Chart.yaml": "apiVersion: v2\nname: queue\nversion: 0.1.0\n",
    "modules/queue/helm_chart/templates/deployment.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ .Values.service.name }}
        spec:
          template:
            spec:
              containers:
                - name: queue
                  image: redis:7
        """,
    "operator/app/layout/common.tf": """\
        locals {
          module_path = "${path.module}/../../../modules"
        }

        variable "layout" {
          default = { model = "Qwen/Qwen2.5-7B-Instruct" }
        }
        """,
    "operator/app/layout/layout-inference.tf": """\
        resource "helm_release" "layout_inference_service" {
          name      = "layout-inference"
          namespace = "eyelevel"
          chart     = "${local.module_path}/layout/inference/helm_chart"

          values = [
            yamlencode({
              service  = { name = "layout-inference" }
              model    = { name = var.layout.model, maxLen = 8192 }
              replicas = 1
            })
          ]

          set {
            name  = "gpus"
            value = "1"
          }
        }

        resource "helm_release" "layout_queue" {
          name   = "layout-queue"
          chart  = "${local.module_path}/queue/helm_chart"
          values = [file("${path.module}/queue-values.yaml")]
        }
        """,
    "operator/app/queue/queue.tf": """\
        resource "helm_release" "queue" {
          name   = "queue"
          chart  = "${path.module}/../../../modules/queue/helm_chart"
          values = [file("${path.module}/missing-values.yaml")]
        }

        resource "helm_release" "ingress" {
          repository = "https://kubernetes.github.io/ingress-nginx"
          chart      = "ingress-nginx"
          values     = [file("missing.yaml")]
        }
        """,
}


def test_a_release_in_a_tf_naming_no_vllm_gives_a_chart_of_the_tree_its_values(tmp_path):
    root = _tree(tmp_path, _RELEASE_NAMING_NO_VLLM)
    inv = scan([root])
    # the chart is evaluated as the release installs it: values, then `set` over them (before: no server, and
    # "helm template fails without values" on the chart)
    [server] = inv.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 8192
    assert server.gpu.count == 1
    assert server.gpu.location.file.endswith("operator/app/layout/layout-inference.tf")
    assert server.gpu.location.line == 16  # the `set` block's value
    assert not any("fails without values" in p.message for p in inv.problems)
    # a release of a chart that names no vLLM, and one from a repository, in files that name none: nothing said
    assert not any("queue" in p.file or "queue" in p.message for p in inv.problems), [p.message for p in inv.problems]


def test_the_local_release_test_is_a_cheap_text_test():
    from vramlint.extract.terraform import may_release_local_chart

    assert may_release_local_chart('resource "helm_release" "a" {\n  chart = "./charts/a"\n}\n')
    assert may_release_local_chart('resource "helm_release" "a" {\n  chart = "${path.module}/c"\n}\n')
    assert may_release_local_chart('resource "helm_release" "a" {\n  chart = local.chart_dir\n}\n')
    assert not may_release_local_chart('resource "helm_release" "a" {\n  repository = "https://x"\n'
                                       '  chart = "nginx"\n}\n')
    assert not may_release_local_chart('resource "helm_release" "a" {\n  chart = "oci://r.example/c/x"\n}\n')
    assert not may_release_local_chart('resource "aws_instance" "a" {\n  chart = "./x"\n}\n')
    # Terraform's JSON syntax
    assert may_release_local_chart('{"resource": {"helm_release": {"a": {\n  "chart": "${path.module}/c"}}}}')
    assert not may_release_local_chart('{"resource": {"helm_release": {"a": {\n  "chart": "nginx"}}}}')


def test_a_chart_walked_for_its_releases_is_walked_again_by_the_next_scan(tmp_path):
    # `helm.hook.names_vllm` keeps, for the scan, whether a chart's own files may name vLLM (each of many releases
    # of a chart walked it again): a second scan in the same process sees the files as they are then
    root = _tree(tmp_path, _RELEASE_NAMING_NO_VLLM)
    assert [s.model for s in scan([root]).servers] == ["Qwen/Qwen2.5-7B-Instruct"]
    queue = tmp_path / "modules/queue/helm_chart/templates/deployment.yaml"
    queue.write_text(queue.read_text().replace("{{ .Values.service.name }}", "queue").replace(
        "image: redis:7", "image: vllm/vllm-openai:v0.8.5\n          args: [--model, Qwen/Qwen2.5-1.5B-Instruct]"))
    models = [s.model for s in scan([root]).servers]
    assert "Qwen/Qwen2.5-1.5B-Instruct" in models and "Qwen/Qwen2.5-7B-Instruct" in models, models
