"""A KAITO Workspace with a custom pod template (`inference.template`, in place of a preset): KAITO's
GenerateDeploymentManifestWithPodTemplate copies the template into its Deployment as written (labels, node affinity
and tolerations aside), so its vLLM container is a server like any pod spec's (audit24: sebassem/vllm-aks's
gpt-oss Workspace was said to be "not a kind vramlint reads"). Shaped after a kaito.sh/v1alpha1 Workspace."""

from __future__ import annotations

from vramlint.scan import scan

WORKSPACE = """\
apiVersion: kaito.sh/v1alpha1
kind: Workspace
metadata:
  name: workspace-custom-vllm
resource:
  labelSelector:
    matchLabels:
      app: llm-inference
inference:
  template:
    spec:
      containers:
        - name: vllm-openai
          image: vllm/vllm-openai:v0.10.1
          args:
            - --model
            - Qwen/Qwen2.5-7B-Instruct
            - --max-model-len
            - "16384"
            - --port
            - "5000"
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def test_custom_template_container_is_read_as_written(tmp_path):
    path = tmp_path / "workspace.yaml"
    path.write_text(WORKSPACE)
    inventory = scan([str(path)])
    [server] = inventory.servers
    assert (server.kind, server.name, server.container) == ("Workspace", "workspace-custom-vllm", "vllm-openai")
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.vllm_version == "0.10.1"
    assert server.args["max_model_len"] == 16384 and server.gpu.count == 1
    assert server.location.line == 13  # the container, not the workspace
    # no preset note, and no "not a kind vramlint reads"
    assert not [p for p in inventory.problems if "not a kind vramlint reads" in p.message]
    assert not [n for n in server.notes if "preset" in n]


def test_a_template_with_no_vllm_is_no_server(tmp_path):
    path = tmp_path / "workspace.yaml"
    path.write_text(WORKSPACE.replace("vllm/vllm-openai:v0.10.1", "ghcr.io/acme/tgi-server:2.0")
                    .replace("name: vllm-openai", "name: tgi"))
    assert scan([str(path)]).servers == []
