"""OME's ServingRuntime / ClusterServingRuntime (ome.io/v1beta1): the engine's `runner` is the vLLM container,
beside the component's own pod spec fields (OME pkg/apis/ome/v1beta1, components/engine.go reconcilePodSpec).
OME's kinds share KServe's names, not their shape: they were taken for KServe runtimes without `containers`, which
left the file with no server and no word."""

from vramlint.scan import scan

RUNTIME = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: vllm-qwen-14b
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors}
      modelArchitecture: Qwen2ForCausalLM
      autoSelect: true
  engineConfig:
    nodeSelector:
      nvidia.com/gpu.product: NVIDIA-L40S
    volumes:
      - name: shm
        emptyDir: {medium: Memory}
    runner:
      name: ome-container
      image: docker.io/vllm/vllm-openai:v0.10.1
      command: [vllm, serve]
      args:
        - $(MODEL_PATH)
        - --tensor-parallel-size=2
        - --max-model-len=16384
      volumeMounts:
        - {name: shm, mountPath: /dev/shm}
      resources:
        limits:
          nvidia.com/gpu: 2
  decoderConfig:
    runner:
      name: ome-container
      image: docker.io/vllm/vllm-openai:v0.10.1
      command: [python3, -m, vllm.entrypoints.openai.api_server]
      args: [--model, $(MODEL_PATH), --max-num-seqs, "128"]
      resources:
        limits:
          nvidia.com/gpu: 1
  routerConfig:
    runner:
      name: router
      image: docker.io/example/router:1.0
"""


def test_ome_runtime_engine_and_decoder_runners_are_vllm_servers(tmp_path):
    (tmp_path / "rt.yaml").write_text(RUNTIME)
    inv = scan([str(tmp_path / "rt.yaml")])
    engine, decoder = sorted(inv.servers, key=lambda s: s.location.line)
    for s in (engine, decoder):
        assert (s.kind, s.name, s.container) == ("ClusterServingRuntime", "vllm-qwen-14b", "ome-container")
        assert s.vllm_version == "0.10.1"
        assert any("runtime template" in n for n in s.notes)
    assert engine.location.line == 17 and engine.location.yaml_path == "spec.engineConfig.runner"
    assert engine.args["tensor_parallel_size"] == 2 and engine.arg_locations["max_model_len"].line == 23
    assert engine.gpu.count == 2 and engine.gpu.type == "L40S"  # the component's own nodeSelector
    assert engine.shm is True  # the component's volumes, the runner's mount
    assert decoder.location.yaml_path == "spec.decoderConfig.runner"
    assert decoder.args["max_num_seqs"] == 128 and decoder.gpu.count == 1
    assert not any("ome.io" in p.message for p in inv.problems)  # the router is no engine, and nothing is unread


def test_ome_multi_node_engine_is_said_not_read(tmp_path):
    (tmp_path / "mn.yaml").write_text(
        "apiVersion: ome.io/v1beta1\nkind: ServingRuntime\nmetadata:\n  name: big\nspec:\n  engineConfig:\n"
        "    leader:\n      runner:\n        image: vllm/vllm-openai:v0.10.1\n        command: [vllm, serve]\n"
        "        args: [$(MODEL_PATH), --tensor-parallel-size=8, --pipeline-parallel-size=2]\n"
        "        resources: {limits: {nvidia.com/gpu: 8}}\n"
        "    worker:\n      size: 1\n      runner:\n        image: vllm/vllm-openai:v0.10.1\n")
    inv = scan([str(tmp_path / "mn.yaml")])
    assert inv.servers == []  # TP 8 x PP 2 spans the leader and its worker: not checked against one pod's GPUs
    [note] = [p for p in inv.problems if "multi-node" in p.message]
    assert note.level == "note" and note.line == 7 and "ServingRuntime 'big'" in note.message


def test_kserve_runtime_of_the_same_kind_name_is_still_kserve(tmp_path):
    (tmp_path / "ks.yaml").write_text(
        "apiVersion: serving.kserve.io/v1alpha1\nkind: ClusterServingRuntime\nmetadata:\n  name: kserve-vllm\n"
        "spec:\n  supportedModelFormats:\n    - {name: vllm, autoSelect: true}\n  containers:\n"
        "    - name: kserve-container\n      image: vllm/vllm-openai:v0.10.1\n"
        "      args: [--model=/mnt/models, --max-model-len=8192]\n")
    [s] = scan([str(tmp_path / "ks.yaml")]).servers
    assert s.model == "/mnt/models" and s.args["max_model_len"] == 8192
    assert any("no InferenceService using it" in n for n in s.notes)  # KServe's reading of a lone runtime
