"""NVIDIA Dynamo: a DynamoGraphDeployment worker running `python3 -m dynamo.vllm` is a vLLM server (its engine
arguments are vLLM's, after Dynamo's own); Dynamo's runtime images start no server by themselves, and their tags
count Dynamo's releases, not vLLM's."""

from vramlint.scan import scan
from vramlint.versions import version_from_image

GRAPH = """\
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: chat}
spec:
  components:
  - name: Frontend
    type: frontend
    podTemplate:
      spec:
        containers:
        - name: main
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0
  - name: Planner
    podTemplate:
      spec:
        containers:
        - name: main
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0
          command: [python3, -m, dynamo.planner]
  - name: VllmDecodeWorker
    type: worker
    podTemplate:
      spec:
        containers:
        - name: main
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0
          command: [python3]
          args: [-m, dynamo.vllm, --model, Qwen/Qwen2.5-7B-Instruct, --is-decode-worker, --max-model-len, "16384",
                 --tensor-parallel-size, "2"]
          resources:
            limits: {nvidia.com/gpu: "2"}
"""


def test_the_vllm_worker_is_a_server_and_the_frontend_is_not(tmp_path):
    (tmp_path / "graph.yaml").write_text(GRAPH)
    inv = scan([str(tmp_path / "graph.yaml")])
    [server] = inv.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.location.line == 25
    assert server.args["max_model_len"] == 16384 and server.args["tensor_parallel_size"] == 2
    assert server.gpu.count == 2
    # Dynamo's own option: not vLLM's, but no refusal either (its parser reads it first)
    assert server.unknown_args == {}
    assert any("--is-decode-worker is not a vLLM engine argument" in u for u in server.unchecked)
    assert any("NVIDIA Dynamo's vLLM worker" in n for n in server.notes)
    assert server.vllm_version is None  # 0.7.0 is Dynamo's release
    # the frontend (no command) and dynamo.planner on a Dynamo image are no vLLM server and need no note
    assert [p for p in inv.problems if "custom" in p.message] == []


def test_dynamo_tags_are_not_vllm_versions_and_a_positional_is_refused():
    assert version_from_image("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0") is None
    from vramlint.cmdline import Token, find_vllm_invocation

    words = [Token(w, None) for w in ("python3", "-m", "dynamo.vllm", "Qwen/Qwen2.5-7B-Instruct")]
    inv = find_vllm_invocation(words, [], "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0", {})
    # no positional model: vLLM's engine parser has none, so the word is refused
    assert inv.model is None and any("unrecognized arguments" in e["message"] for e in inv.startup_errors)
