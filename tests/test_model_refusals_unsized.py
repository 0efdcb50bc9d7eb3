"""A --max-model-len above the model's maximum is refused by vLLM's ModelConfig before any device is looked at:
an error on servers whose memory vramlint does not size (Gaudi, TPU, vLLM's CPU backend) too."""

import json
from pathlib import Path

import pytest

from vramlint.cli import main

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: llm}}
spec:
  template:
    spec:
      {node}
      containers:
        - name: vllm
          image: {image}
          args: ["--model", "meta-llama/Llama-2-7b-chat-hf", "--max-model-len", "{length}"]
          env: [{{name: HF_HOME, value: /cache}}{env}]
          resources: {{limits: {{{resource}: 1}}}}
"""

ACCELERATORS = {
    "gaudi": dict(image="vault.habana.ai/gaudi-docker/1.21.0/ubuntu22.04/habanalabs/vllm:0.8.5",
                  resource="habana.ai/gaudi", node="nodeSelector: {}"),
    "tpu": dict(image="vllm/vllm-tpu:v0.11.1", resource="google.com/tpu",
                node="nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice}"),
    "cpu": dict(image="public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.10.1", resource="cpu", node="nodeSelector: {}"),
}


def _vrl005(tmp_path: Path, capsys, accelerator: str, length: int, env: str = "") -> list[dict]:
    f = tmp_path / f"{accelerator}-{length}.yaml"
    f.write_text(DEPLOYMENT.format(length=length, env=env, **ACCELERATORS[accelerator]))
    out = tmp_path / "report.json"
    main(["check", str(f), "--offline", "--format", "json", "--output-file", str(out), "--fail-on", "never"])
    capsys.readouterr()
    report = json.loads(out.read_text())
    assert len(report["servers"]) == 1 and not report["servers"][0].get("budget")
    return [x for x in report["findings"] if x["rule"] == "VRL005"]


@pytest.mark.parametrize("accelerator", sorted(ACCELERATORS))
def test_a_max_model_len_above_the_models_is_refused_on_any_accelerator(tmp_path, capsys, accelerator):
    [finding] = _vrl005(tmp_path, capsys, accelerator, 8192)
    assert finding["level"] == "error" and finding["line"] == 11
    assert "--max-model-len 8192 is above the maximum of meta-llama/Llama-2-7b-chat-hf" in finding["message"]
    assert not _vrl005(tmp_path, capsys, accelerator, 4096)


def test_vllms_override_variable_lets_it_start(tmp_path, capsys):
    env = ", {name: VLLM_ALLOW_LONG_MAX_MODEL_LEN, value: '1'}"
    assert not _vrl005(tmp_path, capsys, "gaudi", 8192, env=env)
