"""Intel GPUs (vLLM's XPU platform): a compose service that passes /dev/dri without /dev/kfd, narrowed by Level
Zero's ZE_AFFINITY_MASK or by the render nodes it passes, and a pod asking Intel's GPU device plugin for them.
Counted as Intel GPUs, never as NVIDIA ones (vramlint's budget follows vLLM's CUDA path)."""

from vramlint.scan import scan

TWO_ON_ONE_HOST = """\
services:
  llm_a:
    image: intel/vllm:0.10.2-xpu
    privileged: true
    devices:
      - "/dev/dri:/dev/dri"
    entrypoint: >
      bash -lc "source /opt/intel/oneapi/setvars.sh --force &&
      vllm serve --model /models/Qwen2.5-7B-Instruct --port 8001 -tp=1"
    environment:
      ZE_AFFINITY_MASK: "0"
  llm_b:
    image: intel/vllm:0.10.2-xpu
    devices: ["/dev/dri:/dev/dri"]
    command: vllm serve /models/Qwen2.5-7B-Instruct --port 8002 --tensor-parallel-size 2
    environment:
      - ZE_AFFINITY_MASK=1,2
"""


def _servers(tmp_path, text, name="compose.yaml"):
    (tmp_path / name).write_text(text)
    inv = scan([str(tmp_path / name)])
    return {s.name.split("/")[0]: s for s in inv.servers}, inv


def test_the_affinity_mask_says_how_many_intel_gpus_each_service_sees(tmp_path):
    servers, _ = _servers(tmp_path, TWO_ON_ONE_HOST)
    a, b = servers["llm_a"].gpu, servers["llm_b"].gpu
    assert (a.vendor, a.count, b.vendor, b.count) == ("intel-gpu", 1, "intel-gpu", 2)
    assert a.location.line == 11 and "ZE_AFFINITY_MASK=0" in a.evidence and "/dev/dri" in a.evidence
    assert a.shared_key != b.shared_key  # GPU 0 and GPUs 1,2: nothing shared


def test_the_same_mask_on_two_services_shares_a_gpu_and_a_mask_from_the_shell_is_unknown(tmp_path):
    servers, _ = _servers(tmp_path, TWO_ON_ONE_HOST.replace("ZE_AFFINITY_MASK=1,2", "ZE_AFFINITY_MASK=0"))
    assert servers["llm_a"].gpu.shared_key == servers["llm_b"].gpu.shared_key
    # the whole /dev/dri with no mask: every GPU of the machine, how many not known
    servers, _ = _servers(tmp_path, TWO_ON_ONE_HOST.replace('      ZE_AFFINITY_MASK: "0"\n', "      X: y\n"))
    assert servers["llm_a"].gpu.count is None and servers["llm_a"].gpu.shared_key.endswith("gpus=all")
    # set from the environment where compose runs (`environment: [ZE_AFFINITY_MASK]`): which GPUs, not known
    servers, _ = _servers(tmp_path, TWO_ON_ONE_HOST.replace("- ZE_AFFINITY_MASK=1,2", "- ZE_AFFINITY_MASK"))
    assert servers["llm_b"].gpu.count is None and servers["llm_b"].gpu.device_ids is None


def test_render_nodes_passed_one_by_one_are_one_gpu_each_and_tiles_of_one_device_are_one(tmp_path):
    text = TWO_ON_ONE_HOST.replace('devices: ["/dev/dri:/dev/dri"]', "devices:\n      - /dev/dri/card1\n"
                                   "      - /dev/dri/renderD128\n      - /dev/dri/renderD129:/dev/dri/renderD129")
    text = text.replace("      - ZE_AFFINITY_MASK=1,2\n", "      - OTHER=1\n")
    servers, _ = _servers(tmp_path, text)
    assert servers["llm_b"].gpu.count == 2 and servers["llm_b"].gpu.device_ids == ["renderD128", "renderD129"]
    servers, _ = _servers(tmp_path, TWO_ON_ONE_HOST.replace("ZE_AFFINITY_MASK=1,2", "ZE_AFFINITY_MASK=0.0,0.1"))
    assert servers["llm_b"].gpu.count == 1


def test_dev_dri_beside_kfd_or_an_nvidia_reservation_is_not_intel(tmp_path):
    amd = TWO_ON_ONE_HOST.replace('devices: ["/dev/dri:/dev/dri"]', "devices: [/dev/kfd, /dev/dri]")
    servers, _ = _servers(tmp_path, amd)
    assert servers["llm_b"].gpu.vendor == "amd"
    nvidia = TWO_ON_ONE_HOST.replace('devices: ["/dev/dri:/dev/dri"]', 'devices: ["/dev/dri:/dev/dri"]\n'
                                     "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2, "
                                     "capabilities: [gpu]}]}}}")
    servers, _ = _servers(tmp_path, nvidia)
    assert servers["llm_b"].gpu.vendor == "nvidia" and servers["llm_b"].gpu.count == 2


def test_a_pod_asking_intels_device_plugin_runs_on_intel_gpus(tmp_path):
    (tmp_path / "d.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: arc}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: intel/vllm:0.10.2-xpu\n"
        "        args: [--model, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, '2']\n"
        "        resources:\n          limits:\n            gpu.intel.com/xe: 2\n")
    [server] = scan([str(tmp_path / "d.yaml")]).servers
    assert (server.gpu.vendor, server.gpu.count) == ("intel-gpu", 2)
