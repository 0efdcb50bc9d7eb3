"""Operator kinds read as their operators deploy them: production-stack VLLMRuntime, KAITO MultiRoleInference,
and KServe InferenceServices on KServe's Hugging Face runtime (vLLM inside)."""

from pathlib import Path

from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "operators"


def _by_name(paths):
    inv = scan([str(FIX / p) for p in paths])
    return {s.name: s for s in inv.servers}, inv


def test_vllmruntime_is_the_command_line_the_operator_builds():
    servers, _ = _by_name(["vllmruntime.yaml"])
    s = servers["qwen-runtime"]
    assert (s.kind, s.container, s.model) == ("VLLMRuntime", "vllm", "Qwen/Qwen2.5-7B-Instruct")
    assert s.model_location.line == 8
    assert s.args["max_model_len"] == 16384 and s.arg_locations["max_model_len"].line == 9
    assert s.args["tensor_parallel_size"] == 2 and s.args["max_num_seqs"] == 64
    assert s.args["gpu_memory_utilization"] == 0.85 and s.arg_locations["gpu_memory_utilization"].line == 16
    assert s.args["max_num_batched_tokens"] == 8192  # extraArgs, appended as written
    assert s.args["enable_chunked_prefill"] is True and s.args["enable_prefix_caching"] is False
    assert s.args["dtype"] == "bfloat16"
    assert s.env["VLLM_USE_V1"] == "1" and s.env["HF_HOME"] == "/data"
    assert s.image == "docker.io/vllm/vllm-openai:v0.10.1" and s.vllm_version == "0.10.1"
    assert s.replicas == 3 and s.shm is True
    assert s.gpu.count == 2 and s.gpu.type == "L40S" and s.gpu.count_location.line == 32
    assert not s.unknown_args


def test_vllmruntime_defaults_the_operator_applies(tmp_path):
    (tmp_path / "vr.yaml").write_text(
        "apiVersion: production-stack.vllm.ai/v1alpha1\nkind: VLLMRuntime\nmetadata:\n  name: min\nspec:\n"
        "  model:\n    modelURL: meta-llama/Llama-3.1-8B-Instruct\n  vllmConfig:\n    port: 8000\n"
        "  deploymentConfig:\n    resources:\n      gpu: \"1\"\n      gpuType: amd.com/gpu\n"
        "    image:\n      registry: docker.io\n      name: lmcache/vllm-openai:latest\n")
    [s] = scan([str(tmp_path / "vr.yaml")]).servers
    assert s.env["VLLM_USE_V1"] == "0"  # v1 unset: the operator writes VLLM_USE_V1=0
    assert s.args["enable_chunked_prefill"] is False and s.args["enable_prefix_caching"] is False
    assert s.replicas == 1 and s.shm is False  # no shmSize: no /dev/shm mount
    assert s.gpu.vendor == "amd" and s.gpu.count == 1


def test_multiroleinference_gives_one_server_per_role_with_its_runtime_config():
    servers, _ = _by_name(["multiroleinference.yaml"])
    assert set(servers) == {"coder-pd-prefill", "coder-pd-decode"}  # the Transformers one is not vLLM
    prefill, decode = servers["coder-pd-prefill"], servers["coder-pd-decode"]
    for s in (prefill, decode):
        assert s.kind == "MultiRoleInference" and s.model == "Qwen/Qwen2.5-Coder-7B-Instruct"
        assert s.model_location.line == 11
    assert prefill.replicas == 2 and prefill.gpu.type == "A100-80GB-PCIe" and prefill.gpu.location.line == 15
    # KAITO's own --tensor-parallel-size (the node's GPUs), then the runtime config's keys
    assert prefill.args == {"max_model_len": 32768, "gpu_memory_utilization": 0.9, "tensor_parallel_size": 1}
    assert prefill.arg_locations["max_model_len"].line == 28
    assert decode.replicas == 1 and decode.gpu.location.line == 19
    assert decode.args == {"max_model_len": "auto", "tensor_parallel_size": 1}  # KAITO's own flags only
    assert any("no runtimeConfig" in n for n in decode.notes)


def test_kserve_hf_runtime_named_but_not_scanned_is_read_as_the_hf_server():
    servers, _ = _by_name(["kserve-hf-isvc.yaml"])
    assert "bert-transformers" not in servers  # --backend=huggingface: Transformers, not vLLM
    named = servers["qwen-named-runtime"]
    assert named.model == "Qwen/Qwen2.5-1.5B-Instruct" and named.args == {"max_model_len": 4096}
    assert named.gpu.type == "L4"
    assert any("'kserve-huggingfaceserver' (not among the scanned files)" in n for n in named.notes)
    by_format = servers["mistral-hf"]
    assert by_format.model == "mistralai/Mistral-7B-Instruct-v0.3" and by_format.model_location.line == 14
    assert by_format.args == {"max_model_len": 8192, "gpu_memory_utilization": 0.9}  # --max_length is vLLM's
    # huggingfaceserver parses with parse_known_args: an unknown flag is dropped, never a start-up refusal
    assert by_format.unknown_args == {}
    assert any("--not-a-real-flag" in u and "parse_known_args" in u for u in by_format.unchecked)


def test_kserve_hf_runtime_image_runs_huggingfaceserver():
    servers, _ = _by_name(["kserve-hf-isvc.yaml", "kserve-hf-runtime.yaml"])
    assert set(servers) == {"mistral-hf", "qwen-named-runtime"}
    s = servers["qwen-named-runtime"]
    assert s.image == "kserve/huggingfaceserver:v0.15.2" and s.shm is True
    assert s.model == "Qwen/Qwen2.5-1.5B-Instruct" and s.args == {"max_model_len": 4096}
    runtime_only, _ = _by_name(["kserve-hf-runtime.yaml"])
    [template] = runtime_only.values()
    assert template.kind == "ClusterServingRuntime" and template.image == "kserve/huggingfaceserver:v0.15.2"


MODEL_DEPLOYMENT = """\
apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: chat
spec:
  model:
    id: Qwen/Qwen2.5-7B-Instruct
  engine:
    type: vllm
    contextLength: 16384
    args:
      max-num-seqs: "32"
      enforce-eager: ""
  nodeSelector:
    nvidia.com/gpu.product: NVIDIA-L4
  scaling:
    replicas: 2
  resources:
    gpu:
      count: 1
---
apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: pd
spec:
  model:
    id: Qwen/Qwen2.5-7B-Instruct
  engine:
    type: vllm
  serving:
    mode: disaggregated
  scaling:
    prefill:
      replicas: 1
      gpu:
        count: 2
    decode:
      replicas: 3
      gpu:
        count: 1
---
apiVersion: airunway.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: cpu
spec:
  model:
    id: google/gemma-3-1b-it
  engine:
    type: llamacpp
"""


def test_ai_runway_model_deployment_is_read_as_its_provider_builds_it(tmp_path):
    (tmp_path / "md.yaml").write_text(MODEL_DEPLOYMENT)
    servers = {s.name: s for s in scan([str(tmp_path / "md.yaml")]).servers}
    assert set(servers) == {"chat", "pd/prefill", "pd/decode"}  # the llama.cpp engine is not vLLM
    chat = servers["chat"]
    assert (chat.kind, chat.model, chat.model_location.line) == ("ModelDeployment", "Qwen/Qwen2.5-7B-Instruct", 7)
    # contextLength is --max-model-len; engine.args are --KEY VALUE (--KEY alone when empty)
    assert chat.args["max_model_len"] == 16384 and chat.arg_locations["max_model_len"].line == 10
    assert chat.args["max_num_seqs"] == 32 and chat.args["enforce_eager"] is True
    assert (chat.gpu.type, chat.gpu.count, chat.replicas) == ("L4", 1, 2)
    assert not chat.unknown_args
    assert (servers["pd/prefill"].gpu.count, servers["pd/prefill"].replicas) == (2, 1)
    assert (servers["pd/decode"].gpu.count, servers["pd/decode"].replicas) == (1, 3)


def test_role_based_group_role_templates_are_not_servers(tmp_path):
    (tmp_path / "rbg.yaml").write_text("""\
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata:
  name: pd
spec:
  roleTemplates:
    - name: base
      template:
        spec:
          containers:
            - name: vllm
              image: vllm/vllm-openai:v0.10.2
  roles:
    - name: decode
      replicas: 1
      standalonePattern:
        templateRef:
          name: base
          patch:
            spec:
              containers:
                - name: vllm
                  command: ["vllm", "serve", "Qwen/Qwen3-0.6B"]
                  resources: {limits: {nvidia.com/gpu: 1}}
""")
    [s] = scan([str(tmp_path / "rbg.yaml")]).servers
    assert s.model == "Qwen/Qwen3-0.6B" and "roles" in s.location.yaml_path


def test_an_image_that_stands_in_for_vllm_is_not_a_server(tmp_path):
    (tmp_path / "compose.yaml").write_text(
        "services:\n  mock-vllm:\n    build: {context: ./mock-vllm}\n    image: platform-mock-vllm:0.1.0\n"
        "  sim:\n    image: ghcr.io/llm-d/vllm-sim:v0.3.0\n    command: [\"--model\", \"Qwen/Qwen3-0.6B\"]\n")
    inv = scan([str(tmp_path / "compose.yaml")])
    assert inv.servers == [] and not [p for p in inv.problems if "vLLM" in p.message]
