"""Ray installs a runtime_env's `vllm==X` (pip, uv, a conda environment's pip) over the image's vLLM: X is the
server's version, said with where it was pinned; a range or a bare name pins nothing and is said."""

from __future__ import annotations

import json

import pytest

from vramlint.cli import main
from vramlint.scan import scan
from vramlint.versions import pinned_vllm

SERVICE = """\
apiVersion: ray.io/v1
kind: RayService
metadata:
  name: chat
spec:
  serveConfigV2: |
    applications:
      - name: chat
        import_path: app.serve:deployment
        runtime_env:
          {runtime_env}
          env_vars:
            MODEL_ID: Qwen/Qwen2.5-7B-Instruct
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers:
            - name: head
              image: rayproject/ray:2.44.0-py311-gpu
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        template:
          spec:
            nodeSelector:
              node.kubernetes.io/instance-type: g5.xlarge
            containers:
              - name: worker
                image: rayproject/ray:2.44.0-py311-gpu
                resources:
                  limits:
                    nvidia.com/gpu: 1
"""

LLM_SERVICE = """\
apiVersion: ray.io/v1
kind: RayService
metadata:
  name: llm
spec:
  serveConfigV2: |
    applications:
      - name: llm
        import_path: ray.serve.llm:build_openai_app
        runtime_env:
          pip:
            packages: ["vllm==0.8.5"]
        args:
          llm_configs:
            - model_loading_config:
                model_id: Qwen/Qwen2.5-7B-Instruct
              runtime_env:
                uv: ["transformers==4.51.0", "vllm[audio] == 0.9.2"]
            - model_loading_config:
                model_id: Qwen/Qwen2.5-1.5B-Instruct
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers:
            - name: head
              image: rayproject/ray-llm:2.46.0-py311-cu124
"""

JOB = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: batch
spec:
  entrypoint: vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096
  runtimeEnvYAML: |
    conda:
      dependencies:
        - python=3.11
        - pip:
            - ray[serve]
            - vllm===0.7.3
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
            - name: head
              image: rayproject/ray:2.40.0-py311-gpu
"""


def servers_of(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return scan([str(path)]).servers


@pytest.mark.parametrize("requirement, version", [
    ("vllm==0.6.6.post1", "0.6.6.post1"), ("vllm[audio] == 0.8.5", "0.8.5"),
    ('vllm===0.7.3; python_version >= "3.9"', "0.7.3"), ("vllm>=0.6", None), ("vllm", None),
    ("vllm-flash-attn==2.6.1", None), ("vllm==nightly", None), ("torch==2.5.1", None)])
def test_only_an_exact_vllm_pin_names_a_release(requirement, version):
    assert pinned_vllm(requirement) == version


def test_application_pip_list_pins_the_custom_apps_version(tmp_path):
    (server,) = servers_of(tmp_path, "svc.yaml", SERVICE.format(runtime_env='pip: ["vllm==0.6.6.post1"]'))
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.vllm_version == "0.6.6.post1"
    assert "Ray runtime_env pip (vllm==0.6.6.post1" in server.vllm_version_source
    assert server.vllm_version_source.split(", ")[1].endswith("svc.yaml:11)")


def test_a_range_pins_nothing_and_is_said(tmp_path):
    (server,) = servers_of(tmp_path, "svc.yaml", SERVICE.format(runtime_env='pip: ["vllm>=0.6"]'))
    assert server.vllm_version is None and server.vllm_version_source is None
    assert any("'vllm>=0.6', which names no exact vLLM release" in n for n in server.notes)


def test_llm_configs_own_runtime_env_wins_over_the_applications(tmp_path):
    first, second = servers_of(tmp_path, "llm.yaml", LLM_SERVICE)
    assert (first.model, first.vllm_version) == ("Qwen/Qwen2.5-7B-Instruct", "0.9.2")
    assert "Ray runtime_env uv" in first.vllm_version_source
    assert (second.model, second.vllm_version) == ("Qwen/Qwen2.5-1.5B-Instruct", "0.8.5")  # `pip: {packages}`


def test_rayjob_runtime_env_yaml_conda_pip_pins_the_entrypoints_version(tmp_path):
    (server,) = servers_of(tmp_path, "job.yaml", JOB)
    assert server.vllm_version == "0.7.3"
    assert "conda pip" in server.vllm_version_source
    assert server.vllm_version_source.split(", ")[1].endswith("job.yaml:13)")


def test_the_pin_is_the_budgets_version_and_its_source(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "svc.yaml"
    # Ray Serve LLM's own application, whose engine arguments the file states (a custom application sets them in
    # code: no budget, see tests/test_unknowns_not_errors.py)
    llm_app = SERVICE.replace("import_path: app.serve:deployment", "import_path: ray.serve.llm:build_openai_app")
    llm_app = llm_app.replace("          env_vars:\n            MODEL_ID: Qwen/Qwen2.5-7B-Instruct\n",
                              "        args:\n          llm_configs:\n            - model_loading_config:\n"
                              "                model_id: Qwen/Qwen2.5-7B-Instruct\n")
    path.write_text(llm_app.format(runtime_env='pip: ["vllm==0.6.6.post1"]'))
    main(["check", str(path), "--offline", "--format", "json"])
    (server,) = json.loads(capsys.readouterr().out)["servers"]
    budget = server["budget"]
    assert budget["vllm_version"] == "0.6.6.post1" and budget["gpu"] == "A10G"
    assert budget["sources"]["vllm_version"].startswith("Ray runtime_env pip (vllm==0.6.6.post1")
