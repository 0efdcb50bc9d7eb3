"""AMD Instinct GPUs: the catalog's parts, the AMD node labels, and the budget on vLLM's ROCm platform (the same V1
GPU worker as CUDA, with ROCm's sampler and all-reduce), from a compose service with /dev/kfd and a Kubernetes
Deployment with amd.com/gpu."""

from __future__ import annotations

from dataclasses import replace

import pytest

from vramlint import gpus, versions
from vramlint.assess import assess
from vramlint.budget import compute_budget
from vramlint.budget.profile_comm import communication_memory, custom_all_reduce, symmetric_memory_bytes
from vramlint.model import ResolveOptions
from vramlint.scan import scan

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      nodeSelector: {{{label}}}
      containers:
        - name: vllm
          image: rocm/vllm:rocm6.4.1_vllm_0.10.1_20250909
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"{extra}]
          resources: {{limits: {{amd.com/gpu: {count}}}}}
"""

COMPOSE = """\
services:
  chat:
    image: rocm/vllm:rocm6.4.1_vllm_0.10.1_20250909
    command: vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192
    devices: [/dev/kfd, /dev/dri]
    environment:
      ROCR_VISIBLE_DEVICES: "3"
"""


def _assessed(path, text: str, **options):
    path.write_text(text)
    [server] = scan([str(path)]).servers
    [a] = assess([server], ResolveOptions(allow_network=False, **options))
    return a


def _amd_names() -> set[str]:
    return {s.name for s in gpus.catalog_specs("amd")}


def test_catalog_amd_parts_are_amd_and_apart_from_nvidia():
    amd = _amd_names()
    assert {"MI210", "MI250-GCD", "MI250X-GCD", "MI300X", "MI325X", "MI355X"} <= amd
    assert not amd & {s.name for s in gpus.catalog_specs()}  # the default list is NVIDIA's, as before
    mi300x = gpus.lookup("AMD Instinct MI300X")
    assert mi300x.vendor == "amd" and mi300x.fp8 and mi300x.bf16
    assert gpus.lookup("MI210").fp8 is False  # gfx90a: no fp8 (RocmPlatform.supports_fp8, 0.11)
    # the memory PyTorch on ROCm reports is just under the nominal size, never above it
    for spec in gpus.catalog_specs("amd"):
        assert spec.marketing_gb - 0.5 < spec.total_gib < spec.marketing_gb
    assert gpus.ambiguity("MI300") and gpus.lookup("MI300") is None  # MI300X or the MI300A APU


@pytest.mark.parametrize(("label", "gpu"), [
    ("amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM", "MI300X"),
    ("beta.amd.com/gpu.product-name: AMD_Instinct_MI325X", "MI325X"),
    ("amd.com/gpu.device-id: 74a1", "MI300X"),
    ("node.kubernetes.io/instance-type: Standard_ND96isr_MI300X_v5", "MI300X"),
])
def test_amd_node_labels_name_the_gpu_and_the_budget_runs(tmp_path, label, gpu):
    a = _assessed(tmp_path / "deploy.yaml", DEPLOYMENT.format(label=label, extra="", count=1))
    assert a.server.gpu.vendor == "amd"
    assert a.gpu is not None and a.gpu.name == gpu
    b = a.budget
    assert b is not None and b.gpu == gpu
    spec = gpus.lookup(gpu)
    # the V1 worker's arithmetic: requested = total x utilisation; KV = requested - weights - non-torch -
    # activation - CUDA (HIP) graphs
    assert b.usable_gib == pytest.approx(spec.total_gib * b.gpu_memory_utilization, abs=0.01)
    rest = b.usable_gib - b.weights_gib - b.non_torch_gib - b.activation_gib - b.cudagraph_gib
    assert b.kv_cache_gib == pytest.approx(rest, abs=0.03)
    assert b.kv_tokens == b.num_gpu_blocks * b.block_size
    assert "ROCm" in b.sources["platform"]
    assert not any("NVIDIA GPUs only" in u for u in a.unresolved)


def test_rocm_sampler_is_pytorch_where_cuda_would_take_flashinfer(monkeypatch):
    """vLLM 0.21+ on CUDA samples with FlashInfer in the profile run; TopKTopPSampler takes it only on CUDA, so the
    same engine on an AMD GPU samples as CUDA does with the FlashInfer sampler off: PyTorch-native, its top-k/top-p
    masked by the Triton kernel from 8 rows on (apply_top_k_top_p, 0.28.0), by the full sort below that."""
    from vramlint.models import resolve_model

    model, _ = resolve_model("Qwen/Qwen2.5-7B-Instruct", ResolveOptions(allow_network=False))
    amd = gpus.lookup("MI300X")
    twin = replace(amd, vendor="nvidia", name="twin")
    # the twin launches as many Triton programs as the MI300X has compute units (the kernel's row buffer)
    assert twin.compute_units == amd.compute_units == 304
    args = {"max_model_len": 8192}
    v1 = {"VLLM_USE_V2_MODEL_RUNNER": "0"}  # the V2 runner samples its dummy batch greedily on either vendor
    on_amd = compute_budget(model, amd, args, v1, "0.28.0", 1)
    cuda_default = compute_budget(model, twin, args, v1, "0.28.0", 1)
    cuda_torch = compute_budget(model, twin, args, {**v1, "VLLM_USE_FLASHINFER_SAMPLER": "0"}, "0.28.0", 1)
    assert on_amd.activation_gib == cuda_torch.activation_gib
    assert "Triton top-k/top-p" in on_amd.sources["activation"]
    assert cuda_default.sources["activation"].startswith("estimate: FlashInfer sampler")
    # the FlashInfer switch does not turn it on for ROCm either
    forced = compute_budget(model, amd, args, {**v1, "VLLM_USE_FLASHINFER_SAMPLER": "1"}, "0.28.0", 1)
    assert forced.activation_gib == on_amd.activation_gib


def test_rocm_all_reduce_follows_use_custom_allreduce():
    beh = versions.behavior("0.28.0", gpus.lookup("MI300X"), {}, {}, None, 8192)
    mi300x, mi210 = gpus.lookup("MI300X"), gpus.lookup("MI210")
    assert custom_all_reduce(mi300x, 8, {}) and custom_all_reduce(mi300x, 2, {})
    assert not custom_all_reduce(mi300x, 3, {})  # _SUPPORTED_WORLD_SIZES
    assert not custom_all_reduce(mi300x, 8, {"disable_custom_all_reduce": True})
    assert not custom_all_reduce(mi210, 2, {})  # gfx90a: RocmPlatform.use_custom_allreduce is False
    assert symmetric_memory_bytes(beh, mi300x, 8, {}) == 0  # CUDA only
    assert communication_memory(beh, mi210, 2, 1, 1, {}, {}).nccl_in_graphs
    assert not communication_memory(beh, mi300x, 2, 1, 1, {}, {}).nccl_in_graphs


def test_compose_kfd_service_gets_an_amd_requirement(tmp_path):
    a = _assessed(tmp_path / "compose.yaml", COMPOSE)
    assert a.server.gpu.vendor == "amd" and a.budget is None
    req = a.gpu_requirement
    assert req is not None
    listed = set(req.fits) | set(req.does_not_fit)
    assert listed == _amd_names()
    # every AMD part has more memory than the need: all fit
    assert req.min_total_gib is not None
    assert set(req.fits) == {s.name for s in gpus.catalog_specs("amd") if s.total_gib >= req.min_total_gib}
    assert any("AMD GPU type not known" in u for u in a.unresolved)


def test_compose_kfd_service_with_gpu_option_of_the_other_vendor_is_not_sized_on_it(tmp_path):
    a = _assessed(tmp_path / "compose.yaml", COMPOSE, default_gpu="L4")
    assert a.budget is None  # --gpu L4 is an NVIDIA GPU; this service runs on an AMD one
    a = _assessed(tmp_path / "compose.yaml", COMPOSE, default_gpu="MI210")
    assert a.budget is not None and a.budget.gpu == "MI210"
    assert a.budget.usable_gib == pytest.approx(gpus.lookup("MI210").total_gib * 0.9, abs=0.01)


def test_nvidia_requirement_lists_no_amd_part(tmp_path):
    text = COMPOSE.replace("devices: [/dev/kfd, /dev/dri]", "deploy: {resources: {reservations: {devices: "
                           "[{driver: nvidia, count: 1, capabilities: [gpu]}]}}}")
    text = text.replace('      ROCR_VISIBLE_DEVICES: "3"\n', "      X: y\n")
    a = _assessed(tmp_path / "compose.yaml", text)
    assert a.gpu_requirement is not None
    listed = set(a.gpu_requirement.fits) | set(a.gpu_requirement.does_not_fit)
    assert listed and not listed & _amd_names()


def test_tensor_parallel_on_mi300x_counts_the_custom_all_reduce(tmp_path):
    a = _assessed(tmp_path / "deploy.yaml", DEPLOYMENT.format(
        label="amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM", extra=', "--tensor-parallel-size", "2"', count=2))
    assert a.budget is not None and a.budget.gpus == 2
    assert "custom all-reduce 2 x 8 MiB" in a.budget.sources["non_torch"]
    assert "custom all-reduce on" in a.budget.sources["platform"]


def test_summary_advice_for_an_amd_server_without_its_model_names_the_amd_label(tmp_path, monkeypatch, capsys):
    import json

    from vramlint.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "amd.yaml").write_text(DEPLOYMENT.format(label="kubernetes.io/os: linux", extra="", count=1))
    (tmp_path / "nvidia.yaml").write_text(DEPLOYMENT.format(label="kubernetes.io/os: linux", extra="", count=1)
                                          .replace("amd.com/gpu", "nvidia.com/gpu").replace("name: chat", "name: b")
                                          .replace("rocm/vllm:rocm6.4.1_vllm_0.10.1_20250909",
                                                   "vllm/vllm-openai:v0.10.1"))
    main(["check", str(tmp_path), "--offline", "--format", "json"])
    groups = {g["cause"]: g for g in json.loads(capsys.readouterr().out)["summary"]["unchecked"]}
    assert set(groups) == {"amd-gpu-not-said", "gpu-not-said"}
    amd, nvidia = groups["amd-gpu-not-said"], groups["gpu-not-said"]
    assert amd["servers"][0].endswith("amd.yaml:9") and nvidia["servers"][0].endswith("nvidia.yaml:9")
    assert "amd.com/gpu.product-name" in amd["fix"] and "nvidia.com/gpu.product" not in amd["fix"]
    assert "nvidia.com/gpu.product" in nvidia["fix"]
    assert amd["message"].startswith("1 server runs on AMD GPUs and does not say which AMD GPU")
