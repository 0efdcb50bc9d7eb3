"""Triton Inference Server's vLLM backend (NGC's `tritonserver:<yy.mm>-vllm-python-py3`, or `tritonserver` given a
`--backend-config=vllm,...`) builds vLLM's engine from each model's model.json in the model repository
(triton-inference-server/vllm_backend src/model.py), so no command line holds the engine's arguments: one note on
the image's line says so (folded once for a file's several containers), instead of silence (audit23 D6)."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan

TRITON_VLLM_BACKEND = "Triton Inference Server with its vLLM backend"

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
        - name: triton
          image: nvcr.io/nvidia/tritonserver:24.02-vllm-python-py3
          args: ["tritonserver", "--model-store=gs://bucket/model_repository"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def test_a_triton_vllm_deployment_is_said_on_its_image_line(tmp_path):
    path = tmp_path / "triton.yaml"
    path.write_text(DEPLOYMENT.format(name="triton-a") + "---\n" + DEPLOYMENT.format(name="triton-b"))
    result = scan([str(path)])
    assert result.servers == []
    notes = [p for p in result.problems if TRITON_VLLM_BACKEND in p.message]
    assert [p.line for p in notes] == [14, 33]
    assert all(p.level == "note" and "model.json" in p.message for p in notes)


def test_a_compose_triton_service_is_said_on_its_image_line(tmp_path):
    path = tmp_path / "compose.yaml"
    path.write_text(textwrap.dedent("""\
        services:
          triton:
            image: nvcr.io/nvidia/tritonserver:24.08-vllm-python-py3
            command: tritonserver --model-repository=/models
        """))
    [note] = [p for p in scan([str(path)]).problems if TRITON_VLLM_BACKEND in p.message]
    assert note.line == 3 and note.level == "note"


def test_only_triton_with_the_vllm_backend_is_said():
    from vramlint.cmdline import hidden_vllm_command, is_triton_vllm_image

    assert is_triton_vllm_image("nvcr.io/nvidia/tritonserver:24.02-vllm-python-py3")
    assert not is_triton_vllm_image("nvcr.io/nvidia/tritonserver:24.02-trtllm-python-py3")
    assert not is_triton_vllm_image("nvcr.io/nvidia/tritonserver:24.02-py3")
    assert hidden_vllm_command("nvcr.io/nvidia/tritonserver:24.02-py3", ["tritonserver", "--model-repository=/m"],
                               {}) is None
    said = hidden_vllm_command("nvcr.io/nvidia/tritonserver:24.02-py3",
                               ["tritonserver", "--model-repository=/m", "--backend-config=vllm,foo=1"], {})
    assert said is not None and said.startswith(TRITON_VLLM_BACKEND)
