"""vLLM's own image with a read-only root filesystem: the model download needs a writable Hugging Face cache."""

from __future__ import annotations

from vramlint.scan import scan

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: {image}
          args: ["--model", "{model}"]
          securityContext:
            readOnlyRootFilesystem: true
{extra}          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _errors(tmp_path, image="vllm/vllm-openai:v0.9.2", model="Qwen/Qwen2.5-0.5B-Instruct", extra=""):
    path = tmp_path / "deploy.yaml"
    path.write_text(POD.format(image=image, model=model, extra=extra))
    [server] = scan([str(path)]).servers
    return [e for e in server.startup_errors if e["code"] == "read-only-fs"]


def test_a_hub_model_with_nothing_writable_cannot_be_downloaded(tmp_path):
    [error] = _errors(tmp_path)
    assert error["version_known"] and "Read-only file system" in error["message"] and error["location"].line == 12


def test_a_writable_volume_at_the_cache_or_a_local_model_or_a_custom_image_is_fine(tmp_path):
    cache = "          volumeMounts: [{name: hf, mountPath: /root/.cache/huggingface}]\n"
    assert _errors(tmp_path, extra=cache) == []
    home = ("          env: [{name: HF_HOME, value: /data/hf}]\n"
            "          volumeMounts: [{name: data, mountPath: /data}]\n")
    assert _errors(tmp_path, extra=home) == []
    assert _errors(tmp_path, model="/models/qwen") == []  # a path: where it comes from is not vLLM's download
    assert _errors(tmp_path, image="registry.example.com/vllm-with-weights:1") == []


def test_a_writable_volume_elsewhere_does_not_hold_the_default_cache(tmp_path):
    other = "          volumeMounts: [{name: data, mountPath: /data}]\n"
    [error] = _errors(tmp_path, extra=other)
    assert "/root/.cache/huggingface" in error["message"]
    read_only = "          volumeMounts: [{name: hf, mountPath: /root/.cache/huggingface, readOnly: true}]\n"
    assert _errors(tmp_path, extra=read_only)
