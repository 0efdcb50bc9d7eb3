"""llmaz Playground + OpenModel + BackendRuntime, joined across the scanned files as llmaz's controller builds
the pod: the model from the OpenModel, the arguments from the runtime's chosen config with llmaz's
placeholders filled in, the Playground's own args appended, the GPUs from the model's flavor."""

from vramlint.scan import scan

RUNTIME = """\
apiVersion: inference.llmaz.io/v1alpha1
kind: BackendRuntime
metadata:
  name: vllm
spec:
  command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
  image: vllm/vllm-openai
  version: v0.8.2
  recommendedConfigs:
    - name: default
      args:
        - --model
        - "{{ .ModelPath }}"
        - --served-model-name
        - "{{ .ModelName }}"
        - --max-model-len
        - "8192"
      sharedMemorySize: 2Gi
    - name: speculative-decoding
      args:
        - --model
        - "{{ .ModelPath }}"
        - --speculative_model
        - "{{ .DraftModelPath }}"
        - --num_speculative_tokens
        - "5"
    - name: long
      args: ["--model", "{{ .ModelPath }}", "--max-model-len", "32768"]
"""

MODEL = """\
apiVersion: llmaz.io/v1alpha1
kind: OpenModel
metadata:
  name: qwen-7b
spec:
  familyName: qwen2
  source:
    modelHub:
      modelID: Qwen/Qwen2.5-7B-Instruct
  inferenceConfig:
    flavors:
      - name: a10
        limits:
          nvidia.com/gpu: 2
        nodeSelector:
          nvidia.com/gpu.product: NVIDIA-L4
"""

PLAYGROUND = """\
apiVersion: inference.llmaz.io/v1alpha1
kind: Playground
metadata:
  name: qwen
spec:
  replicas: 3
  modelClaim:
    modelName: qwen-7b
  backendRuntimeConfig:
    args:
      - --gpu-memory-utilization
      - "0.85"
"""

DRAFT = """\
apiVersion: llmaz.io/v1alpha1
kind: OpenModel
metadata:
  name: opt-6--7b
spec:
  familyName: opt
  source:
    modelHub:
      modelID: facebook/opt-6.7b
  inferenceConfig:
    flavors:
      - name: a10
        limits:
          nvidia.com/gpu: 1
---
apiVersion: llmaz.io/v1alpha1
kind: OpenModel
metadata:
  name: opt-125m
spec:
  familyName: opt
  source:
    modelHub:
      modelID: facebook/opt-125m
---
apiVersion: inference.llmaz.io/v1alpha1
kind: Playground
metadata:
  name: speculator
spec:
  modelClaims:
    models:
    - name: opt-125m
      role: draft
    - name: opt-6--7b
"""


def _write(tmp_path, **files):
    paths = []
    for name, text in files.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        paths.append(str(path))
    return paths


def _playgrounds(inv):
    return {s.name: s for s in inv.servers if s.kind == "Playground"}


def test_playground_and_openmodel_in_one_file_with_the_runtime(tmp_path):
    [path] = _write(tmp_path, all="---\n".join([MODEL, PLAYGROUND, RUNTIME]))
    inv = scan([path])
    s = _playgrounds(inv)["qwen"]
    assert s.model == "Qwen/Qwen2.5-7B-Instruct"
    assert s.model_location.file.endswith("all.yaml") and s.model_location.line == 9  # the OpenModel's modelID
    # the runtime's default config, placeholders filled in, the Playground's args appended
    assert s.args["max_model_len"] == 8192 and s.args["served_model_name"] == ["qwen-7b"]
    assert s.args["gpu_memory_utilization"] == 0.85
    assert s.arg_locations["max_model_len"].line == 46  # the runtime document's `- --max-model-len`
    assert s.arg_locations["gpu_memory_utilization"].line == 28  # the Playground's own
    assert s.image == "vllm/vllm-openai:v0.8.2" and s.vllm_version == "0.8.2"
    # GPUs: the flavor's count and node selector, not its name
    assert s.gpu.count == 2 and s.gpu.type == "L4" and "flavor 'a10'" in s.gpu.evidence
    assert s.gpu.count_location.line == 14 and s.gpu.count_location.yaml_path.endswith('.limits["nvidia.com/gpu"]')
    assert s.replicas == 3 and s.shm is True
    assert not s.unchecked
    # the config the Playground uses is reported through it; the others still on their own
    configs = sorted(x.container for x in inv.servers if x.kind == "BackendRuntime")
    assert configs == ["long", "speculative-decoding"]
    assert not inv.problems


def test_objects_in_separate_files(tmp_path):
    paths = _write(tmp_path, model=MODEL, playground=PLAYGROUND, runtime=RUNTIME)
    inv = scan(paths[::-1])
    s = _playgrounds(inv)["qwen"]
    assert s.file.endswith("playground.yaml") and s.location.line == 6
    assert s.model == "Qwen/Qwen2.5-7B-Instruct" and s.model_location.file.endswith("model.yaml")
    assert s.arg_locations["max_model_len"].file.endswith("runtime.yaml")
    assert s.arg_locations["gpu_memory_utilization"].file.endswith("playground.yaml")
    assert s.gpu.count == 2 and s.gpu.location.file.endswith("model.yaml")
    assert any(n.startswith("runtime: llmaz BackendRuntime 'vllm' config 'default'") for n in s.notes)


def test_without_the_runtime_the_arguments_are_unknown(tmp_path):
    paths = _write(tmp_path, model=MODEL, playground=PLAYGROUND)
    [s] = scan(paths).servers  # the Playground file does not say "vllm" anywhere: still read
    assert s.kind == "Playground" and s.model == "Qwen/Qwen2.5-7B-Instruct"
    assert s.args == {"gpu_memory_utilization": 0.85}  # only what the Playground itself passes
    assert s.image is None and s.vllm_version is None
    assert any("BackendRuntime 'vllm'" in n and "not among the scanned files" in n for n in s.notes)
    assert s.unchecked and s.gpu.count == 2


def test_draft_model_picks_the_speculative_decoding_config(tmp_path):
    draft, runtime = _write(tmp_path, draft=DRAFT, runtime=RUNTIME)
    inv = scan([draft, runtime])
    s = _playgrounds(inv)["speculator"]
    assert s.model == "facebook/opt-6.7b"  # the main model, whatever its position in the list
    assert s.model_location.line == 9
    assert s.gpu.count == 1 and s.gpu.type is None  # `a10` is a flavor name, not a GPU type
    assert any("config 'speculative-decoding'" in n for n in s.notes)
    assert "max_model_len" not in s.args  # not the default config
    assert not s.unknown_args  # vLLM 0.8.2 still has --speculative_model
    assert s.args["speculative_model"] == "/workspace/models/models--facebook--opt-125m"  # llmaz's loader path
    assert s.args["num_speculative_tokens"] == 5
    assert any("facebook/opt-125m" in n and "draft" in n for n in s.notes)
    assert s.replicas == 1  # the CRD's default
    configs = sorted(x.container for x in inv.servers if x.kind == "BackendRuntime")
    assert configs == ["default", "long"]


def test_openmodel_not_scanned(tmp_path):
    paths = _write(tmp_path, playground=PLAYGROUND, runtime=RUNTIME)
    s = _playgrounds(scan(paths))["qwen"]
    assert s.model is None and s.model_location is None
    assert "served_model_name" in s.args and s.args["served_model_name"] in (None, [None])
    assert any("OpenModel 'qwen-7b'" in n and "not among the scanned files" in n for n in s.notes)
    assert s.args["max_model_len"] == 8192 and s.gpu is None


def test_config_name_and_skip_model_loader(tmp_path):
    playground = PLAYGROUND.replace("  name: qwen\n", "  name: qwen\n  annotations:\n"
                                    "    llmaz.io/skip-model-loader: \"true\"\n")
    playground = playground.replace("    args:\n", "    configName: long\n    args:\n")
    paths = _write(tmp_path, model=MODEL, playground=playground, runtime=RUNTIME)
    s = _playgrounds(scan(paths))["qwen"]
    assert s.args["max_model_len"] == 32768
    assert s.model == "Qwen/Qwen2.5-7B-Instruct"  # vLLM loads it from the Hub itself
    assert not any("llmaz passes the model as" in n for n in s.notes)


def test_other_backends_are_not_vllm(tmp_path):
    sglang = PLAYGROUND.replace("  backendRuntimeConfig:\n", "  backendRuntimeConfig:\n    backendName: sglang\n")
    sglang_runtime = ("apiVersion: inference.llmaz.io/v1alpha1\nkind: BackendRuntime\nmetadata:\n  name: sglang\n"
                      "spec:\n  command: [python3, -m, sglang.launch_server]\n  image: lmsysorg/sglang\n"
                      "  version: v0.4.0\n  recommendedConfigs:\n    - name: default\n"
                      "      args: [--model-path, \"{{ .ModelPath }}\"]\n")
    paths = _write(tmp_path, model=MODEL, playground=sglang)
    inv = scan(paths)
    assert inv.servers == [] and inv.problems == []
    paths = _write(tmp_path, model=MODEL, playground=sglang, runtime=sglang_runtime)
    assert scan(paths).servers == []
    # a runtime name that is neither llmaz's vLLM nor another known engine: said, not guessed
    custom = PLAYGROUND.replace("  backendRuntimeConfig:\n", "  backendRuntimeConfig:\n    backendName: in-house\n")
    paths = _write(tmp_path, model=MODEL, playground=custom)
    inv = scan(paths)
    assert inv.servers == []
    [problem] = inv.problems
    assert problem.level == "note" and "'in-house'" in problem.message and "not among the scanned files" in problem.message


def test_single_document_extraction(tmp_path):
    from vramlint.extract import extract_document
    from vramlint.yamlload import load_text

    [doc] = load_text(PLAYGROUND, "p.yaml")[0]
    [s] = extract_document(doc)[0]
    assert s.kind == "Playground" and s.model is None
    assert any("OpenModel 'qwen-7b'" in n for n in s.notes)


LLMAZ_SERVICE = """\
apiVersion: inference.llmaz.io/v1alpha1
kind: Service
metadata:
  name: deepseek-r1
spec:
  modelClaims:
    models:
      - name: deepseek-r1
  workloadTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
          - name: model-runner
            image: vllm/vllm-openai:v0.7.3
            command: ["sh", "-c", "vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8 --pipeline-parallel-size 2"]
            resources: {limits: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Service
metadata: {name: vllm}
spec:
  selector: {app: vllm}
  ports: [{port: 8000}]
"""


def test_llmaz_service_is_read_like_a_leaderworkerset_and_a_core_service_is_not(tmp_path):
    path = tmp_path / "service.yaml"
    path.write_text(LLMAZ_SERVICE)
    [server] = scan([str(path)]).servers
    assert server.kind == "Service" and server.model == "deepseek-ai/DeepSeek-R1"
    assert server.args["tensor_parallel_size"] == 8 and server.args["pipeline_parallel_size"] == 2
    assert server.gpu.count == 8 and server.location.line == 14  # the `- name: model-runner` line
    assert any("each group spans 2 pods" in n for n in server.notes)


def test_without_the_runtime_the_version_is_the_playgrounds_or_llmaz_charts_pin(tmp_path):
    from vramlint.assess import assess
    from vramlint.model import ResolveOptions

    # backendRuntimeConfig.version is the tag of llmaz's vllm BackendRuntime image: stated, so known
    stated = PLAYGROUND.replace("  backendRuntimeConfig:\n", "  backendRuntimeConfig:\n    version: v0.8.5\n")
    [s] = scan(_write(tmp_path, model=MODEL, playground=stated)).servers
    assert s.image == "vllm/vllm-openai:v0.8.5" and s.vllm_version == "0.8.5"
    assert s.image_location.line == stated.splitlines().index("    version: v0.8.5") + 1
    # no version: the image llmaz's chart pins is assumed (the llmaz release installed is not known)
    other = tmp_path / "other"
    other.mkdir()
    [s] = scan(_write(other, model=MODEL, playground=PLAYGROUND)).servers
    assert s.vllm_version is None and s.assumed_version == "0.7.3"
    [a] = assess([s], ResolveOptions(allow_network=False))
    assert a.vllm_version == "0.7.3" and a.version_source == "operator"
