"""Virtual machines a Terraform file creates whose start-up script starts vLLM (audit24 HM2: a
`google_compute_instance` whose `metadata_startup_script = templatefile("startup.sh.tpl", {...})` runs
`docker run ... ${vllm_image} $${VLLM_ARGS}` on an L4): the script is read as a shell script, its GPUs are the VM's
(`guest_accelerator`, or the machine / instance type), its words on the lines where they are written."""

from __future__ import annotations

import base64
import textwrap

from vramlint.scan import scan

GCE = textwrap.dedent("""\
    variable "vllm_image" {
      type    = string
      default = "vllm/vllm-openai:v0.10.2"
    }

    variable "model" {
      type    = string
      default = "Qwen/Qwen2.5-7B-Instruct"
    }

    resource "google_compute_instance" "vllm" {
      name         = "vllm-l4"
      machine_type = "g2-standard-8"
      zone         = "us-central1-a"

      guest_accelerator {
        type  = "nvidia-l4"
        count = 1
      }

      scheduling {
        on_host_maintenance = "TERMINATE"
      }

      metadata_startup_script = templatefile("${path.module}/startup.sh.tpl", {
        vllm_image = var.vllm_image
        model      = var.model
        max_len    = 8192
      })
    }
    """)

STARTUP = """\
#!/bin/bash
set -euo pipefail
VLLM_ARGS="--gpu-memory-utilization 0.90"
docker pull ${vllm_image}
docker run -d --name vllm --gpus all -p 8000:8000 --ipc=host \\
  ${vllm_image} \\
  --model ${model} --max-model-len ${max_len} $${VLLM_ARGS}
"""


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / "vm" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if name.endswith(".tf") else text)
    return str(tmp_path)


def test_gce_startup_templatefile_is_a_server_on_the_vms_gpu(tmp_path):
    root = _tree(tmp_path, {"main.tf": GCE, "startup.sh.tpl": STARTUP})
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.vllm_version == "0.10.2"
    assert server.args["max_model_len"] == 8192
    # `$${VLLM_ARGS}` is the shell's `${VLLM_ARGS}`, which the script sets before
    assert server.args["gpu_memory_utilization"] == 0.9
    assert server.gpu.type == "L4" and server.gpu.count == 1
    assert server.gpu.location.file.endswith("main.tf") and server.gpu.location.line == 17
    # the model's words are on the template's line
    assert server.model_location.file.endswith("startup.sh.tpl") and server.model_location.line == 7
    assert "google_compute_instance" in server.kind


def test_gce_machine_type_gives_the_gpus_without_guest_accelerator(tmp_path):
    text = GCE.replace('  guest_accelerator {\n    type  = "nvidia-l4"\n    count = 1\n  }\n', "").replace(
        "g2-standard-8", "a2-highgpu-2g")
    assert "guest_accelerator" not in text
    root = _tree(tmp_path, {"main.tf": text, "startup.sh.tpl": STARTUP})
    [server] = scan([root]).servers
    assert server.gpu.type == "A100-40GB" and server.gpu.count == 2


def test_gce_metadata_startup_script_heredoc_on_the_tf_lines(tmp_path):
    text = """\
        resource "google_compute_instance" "vllm" {
          name         = "vllm-a3"
          machine_type = "a3-highgpu-8g"
          metadata = {
            enable-oslogin = "TRUE"
            startup-script = <<-EOT
              #!/bin/bash
              docker run --gpus all vllm/vllm-openai:v0.9.2 \\
                --model meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 8
            EOT
          }
        }
        """
    root = _tree(tmp_path, {"main.tf": text})
    [server] = scan([root]).servers
    assert server.model == "meta-llama/Llama-3.1-70B-Instruct"
    assert server.gpu.type == "H100-SXM" and server.gpu.count == 8
    assert server.model_location.file.endswith("main.tf") and server.model_location.line == 9


AWS = """\
    resource "aws_instance" "vllm" {
      ami           = "ami-0123456789abcdef0"
      instance_type = "g5.12xlarge"
      user_data     = base64encode(file("${path.module}/scripts/serve.sh"))
    }
    """

SERVE = """\
#!/bin/bash
pip install vllm==0.8.5
vllm serve mistralai/Mistral-7B-Instruct-v0.3 --tensor-parallel-size 4
"""


def test_aws_user_data_file_gives_a_server_on_the_instance_types_gpus(tmp_path):
    root = _tree(tmp_path, {"main.tf": AWS, "scripts/serve.sh": SERVE})
    inventory = scan([root])
    [server] = inventory.servers  # the script is read once, as the VM's (not again as a file of its own)
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert server.gpu.type == "A10G" and server.gpu.count == 4
    assert server.model_location.file.endswith("serve.sh") and server.model_location.line == 3


def test_launch_template_user_data_is_base64_decoded(tmp_path):
    encoded = base64.b64encode(SERVE.encode()).decode()
    text = f"""\
        resource "aws_launch_template" "vllm" {{
          name_prefix   = "vllm-"
          instance_type = "p4d.24xlarge"
          user_data     = "{encoded}"
        }}
        """
    root = _tree(tmp_path, {"main.tf": text})
    [server] = scan([root]).servers
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3"
    assert server.gpu.type == "A100-40GB" and server.gpu.count == 8


def test_unknown_script_is_said_and_gives_no_server(tmp_path):
    text = """\
        variable "startup" {
          type = string
        }

        resource "google_compute_instance" "vllm" {
          name                    = "vllm-server"
          machine_type            = "g2-standard-4"
          metadata_startup_script = var.startup
        }
        """
    root = _tree(tmp_path, {"main.tf": text})
    inventory = scan([root])
    assert inventory.servers == []
    [note] = [p for p in inventory.problems if "start-up script" in p.message]
    assert "var.startup" in note.message and note.line == 5


def test_azure_custom_data_with_an_unknown_template_value_keeps_it_unknown(tmp_path):
    text = """\
        variable "hf_model" {
          type = string
        }

        resource "azurerm_linux_virtual_machine" "vllm" {
          name        = "vllm-vm"
          size        = "Standard_NC24ads_A100_v4"
          custom_data = base64encode(templatefile("${path.module}/cloud.sh", { model = var.hf_model }))
        }
        """
    script = "#!/bin/bash\ndocker run --gpus all vllm/vllm-openai:v0.10.0 --model ${model}\n"
    root = _tree(tmp_path, {"main.tf": text, "cloud.sh": script})
    [server] = scan([root]).servers
    assert server.model is None
    assert server.gpu.type == "A100-80GB-PCIe" and server.gpu.count == 1


def test_a_tf_naming_no_vllm_whose_script_file_does_is_read(tmp_path):
    text = AWS.replace('"vllm"', '"inference"')
    assert "vllm" not in text.lower()
    root = _tree(tmp_path, {"main.tf": text, "scripts/serve.sh": SERVE})
    [server] = scan([root]).servers
    assert server.model == "mistralai/Mistral-7B-Instruct-v0.3" and server.gpu.count == 4


def test_a_coalesce_of_nothing_in_the_templatefile_values_is_unknown_not_a_crash(tmp_path):
    # audit24 HM2's own shape: `extra = coalesce(var.extra, lookup(local.preset, "extra", ""))` with neither set.
    # Terraform stops on it unless a -var gives one (go-cty CoalesceFunc: "no non-null, non-empty-string
    # arguments"); vramlint raised StopIteration and dropped the whole file as its own bug (a VRL102 error)
    head = 'variable "extra" {\n  default = null\n}\n\nlocals {\n  extra = coalesce(var.extra, lookup({}, "extra", ""))\n}\n\n'
    text = GCE.replace('resource "google_compute_instance"', head + 'resource "google_compute_instance"').replace(
        "max_len    = 8192", "max_len    = 8192\n    extra      = local.extra")
    assert "coalesce" in text and "local.extra" in text
    root = _tree(tmp_path, {"main.tf": text, "startup.sh.tpl": STARTUP.replace("$${VLLM_ARGS}", "$${VLLM_ARGS} ${extra}")})
    result = scan([root])
    assert not [p for p in result.problems if "failed while" in p.message]
    [server] = result.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.gpu.type == "L4"


def test_a_format_with_too_few_arguments_is_unknown_not_a_crash(tmp_path):
    # found by the fuzz's Terraform family: `format("%s %d", "")` (Terraform refuses it: not enough arguments)
    # raised StopIteration, and the file was dropped as vramlint's own bug
    text = GCE.replace("max_len    = 8192", 'max_len    = 8192\n    extra      = format("%s %d", "")')
    root = _tree(tmp_path, {"main.tf": text, "startup.sh.tpl": STARTUP.replace("$${VLLM_ARGS}", "$${VLLM_ARGS} ${extra}")})
    result = scan([root])
    assert not [p for p in result.problems if "failed while" in p.message]
    [server] = result.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
