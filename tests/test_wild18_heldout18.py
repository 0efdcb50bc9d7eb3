"""Fixes made with the held-out-18 batch in view, each on fixtures of its own: a KServe LLMInferenceService serves
the weights of `spec.model.uri` (its `name` is the served name) and runs a second vLLM workload for `spec.prefill`;
an image named after vLLM but for a program beside it (a proxy, a UI, an operator), or published under a namespace
named vllm, runs no vLLM engine."""
from pathlib import Path

from vramlint.cmdline import is_vllm_image
from vramlint.scan import scan

LLMISVC = """apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata:
  name: chat
spec:
  model:
    uri: hf://mistralai/Mistral-7B-Instruct-v0.3
    name: chat-small
  replicas: 2
  template:
    containers:
      - name: main
        image: registry.example/llm-d/llm-d-cuda:v9
        resources:
          limits:
            nvidia.com/gpu: "1"
  prefill:
    replicas: 1
    parallelism:
      tensor: 2
    template:
      containers:
        - name: main
          image: registry.example/llm-d/llm-d-cuda:v9
          resources:
            limits:
              nvidia.com/gpu: "2"
"""


def _scan(tmp_path: Path, name: str, text: str):
    f = tmp_path / name
    f.write_text(text)
    return scan([str(f)])


def test_llmisvc_model_is_the_uri_not_the_served_name(tmp_path: Path):
    result = _scan(tmp_path, "llmisvc.yaml", LLMISVC)
    models = {s.name: s.model for s in result.servers}
    assert models["chat"] == "mistralai/Mistral-7B-Instruct-v0.3"
    assert models["chat-prefill"] == "mistralai/Mistral-7B-Instruct-v0.3"
    assert result.servers[0].model_location.yaml_path == "spec.model.uri"


def test_llmisvc_prefill_is_a_workload_of_its_own(tmp_path: Path):
    result = _scan(tmp_path, "llmisvc.yaml", LLMISVC)
    by_name = {s.name: s for s in result.servers}
    assert set(by_name) == {"chat", "chat-prefill"}
    decode, prefill = by_name["chat"], by_name["chat-prefill"]
    assert decode.gpu.count == 1 and prefill.gpu.count == 2
    # the prefill template's `--tensor-parallel-size {{ .Spec.Prefill.Parallelism.Tensor }}`
    assert prefill.args["tensor_parallel_size"] == 2
    assert decode.args.get("tensor_parallel_size") in (None, 1)
    assert prefill.replicas == 1 and decode.replicas == 2
    # the command KServe builds is one cause for both: said once
    notes = [n for s in result.servers for n in s.notes if "KServe builds" in n]
    assert len(notes) == 1 and "prefill" in notes[0]


def test_llmisvc_without_prefill_is_one_server(tmp_path: Path):
    text = LLMISVC.split("  prefill:")[0]
    result = _scan(tmp_path, "llmisvc.yaml", text)
    assert [s.name for s in result.servers] == ["chat"]


def test_llmisvc_modelcar_served_name_shaped_like_a_hub_id_is_still_only_a_name(tmp_path: Path):
    # KServe passes spec.model.name to vLLM as --served-model-name only; the weights are the modelcar's
    text = LLMISVC.replace("hf://mistralai/Mistral-7B-Instruct-v0.3", "oci://registry.example/models/m:1").replace(
        "chat-small", "mistralai/Mistral-7B-Instruct-v0.3")
    result = _scan(tmp_path, "llmisvc.yaml", text)
    assert {s.model for s in result.servers} == {"/mnt/models"}
    [said] = [n for s in result.servers for n in s.notes if "spec.model.uri" in n]
    assert "mistralai/Mistral-7B-Instruct-v0.3 has the shape of a Hub id" in said and "model-aliases" in said


def test_an_image_for_a_program_beside_vllm_is_not_vllm():
    assert not is_vllm_image("ghcr.io/someone/vllm-proxy:1.0")
    assert not is_vllm_image("registry.example/team/vllm-chat-ui:2")
    assert not is_vllm_image("registry.example/vllm/kuberay-operator:1")  # vllm names only the namespace
    assert not is_vllm_image("ghcr.io/vllm-project/guidellm:v0.5.0")
    for image in ("vllm/vllm-openai:v0.9.2", "rocm/vllm:latest", "nvcr.io/nvidia/vllm:25.01-py3",
                  "registry.example/kube-ai/vllm:0.6", "quay.io/x/vllm-openai-cpu:v0.23.0", "example/nm-vllm:1"):
        assert is_vllm_image(image), image


APP = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve
spec:
  template:
    spec:
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.9.2
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
        - name: front
          image: ghcr.io/someone/vllm-proxy:2
          env:
            - {name: UPSTREAM, value: "http://127.0.0.1:8000"}
"""


def test_a_proxy_container_beside_the_engine_is_no_server(tmp_path: Path):
    result = _scan(tmp_path, "deploy.yaml", APP)
    assert [s.container for s in result.servers] == ["engine"]


SIDECAR_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: sweep
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers:
        - name: fetch
          image: vllm/vllm-openai:v0.10.1
          command: ["huggingface-cli", "download", "Qwen/Qwen2.5-1.5B-Instruct"]
        - name: engine
          image: vllm/vllm-openai:v0.10.1
          restartPolicy: Always
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "8192"]
          resources:
            limits:
              nvidia.com/gpu: "1"
      containers:
        - name: load
          image: python:3.12-slim
          command: ["python", "-c", "print('client')"]
"""


def test_a_sidecar_init_container_runs_for_the_pods_life_and_may_serve_vllm(tmp_path: Path):
    result = _scan(tmp_path, "job.yaml", SIDECAR_JOB)
    # `engine` has restartPolicy Always (a native sidecar); `fetch` is an ordinary init container, run to its end
    assert [s.container for s in result.servers] == ["engine"]
    server = result.servers[0]
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct" and server.gpu.count == 1
    assert server.location.yaml_path == "spec.template.spec.initContainers[1]"


def test_llmisvc_modelcar_leaves_the_model_unknown_not_the_served_name(tmp_path: Path):
    # audit21 C11: an OCI modelcar's served name is a label (`--served-model-name`), not a Hub id
    text = LLMISVC.replace("hf://mistralai/Mistral-7B-Instruct-v0.3",
                           "oci://registry.example/models/modelcar-granite-8b:1.2").replace("chat-small", "granite-8b")
    result = _scan(tmp_path, "llmisvc.yaml", text)
    assert {s.name: s.model for s in result.servers} == {"chat": "/mnt/models", "chat-prefill": "/mnt/models"}
    assert all(s.model_location.yaml_path == "spec.model.uri" for s in result.servers)
    said = [n for s in result.servers for n in s.notes if "spec.model.uri" in n]
    assert len(said) == 1 and "oci://registry.example/models/modelcar-granite-8b:1.2" in said[0]
    assert "model alias" in said[0]
    for scheme in ("s3://bucket/granite", "pvc://models-pvc/granite"):
        result = _scan(tmp_path, "llmisvc.yaml", text.replace("oci://registry.example/models/modelcar-granite-8b:1.2",
                                                              scheme))
        assert {s.model for s in result.servers} == {"/mnt/models"}


def test_llmisvc_dev_shm_comes_from_kserves_well_known_config(tmp_path):
    # audit23 D9: KServe merges the workload over config-llm-template / config-llm-prefill-template, which mount a
    # 1 GiB Memory emptyDir at /dev/shm in `main`: TP 2 there is not the 64 MB default
    inv = _scan(tmp_path, "llmisvc.yaml", LLMISVC)
    assert inv.servers and all(s.shm is True for s in inv.servers)
    # the user's own /dev/shm mount (here from a disk-backed volume) replaces it and is read as written
    own = LLMISVC.replace('            nvidia.com/gpu: "1"\n',
                          '            nvidia.com/gpu: "1"\n        volumeMounts:\n          - {name: scratch, mountPath: /dev/shm}\n'
                          '    volumes:\n      - {name: scratch, emptyDir: {}}\n', 1)
    main = [s for s in _scan(tmp_path, "own.yaml", own).servers if s.shm is not True]
    assert len(main) == 1 and main[0].shm is False
