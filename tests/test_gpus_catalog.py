import json

import pytest

from vramlint import gpus
from vramlint.cli import main


@pytest.mark.parametrize(
    "written, canonical",
    [
        ("T4", "T4"),
        ("Tesla-T4", "T4"),
        ("nvidia-tesla-t4", "T4"),
        ("NVIDIA-A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA-A100-80GB-PCIe", "A100-80GB-PCIe"),
        ("nvidia-tesla-a100", "A100-40GB"),
        ("nvidia-a100-80gb", "A100-80GB"),
        ("NVIDIA-H100-80GB-HBM3", "H100-SXM"),
        ("nvidia-h100-80gb", "H100-SXM"),
        ("nvidia-h100-mega-80gb", "H100-SXM"),
        ("nvidia-h200-141gb", "H200"),
        ("nvidia-b200", "B200"),
        ("NVIDIA-L4", "L4"),
        ("nvidia-l4", "L4"),
        ("l4", "L4"),
        ("a10g", "A10G"),
        ("l40s", "L40S"),
        ("L40S", "L40S"),
        ("nvidia-gpu-l4", "L4"),
        ("nvidia-gpu-h100", "H100-SXM"),
        ("nvidia-gpu-l4:2", "L4"),
        ("NVIDIA GeForce RTX 4090", "RTX-4090"),
        ("NVIDIA-RTX-6000-Ada-Generation", "RTX-6000-Ada"),
        ("NVIDIA-A100-SXM4-80GB-MIG-3g.40gb", "A100-80GB"),
        ("NVIDIA-L4-SHARED", "L4"),
        # consumer and smaller data-centre / workstation cards
        ("NVIDIA GeForce RTX 4070", "RTX-4070"),
        ("NVIDIA-GeForce-RTX-4070", "RTX-4070"),
        ("RTX-4070", "RTX-4070"),
        ("NVIDIA GeForce RTX 4070 Ti SUPER", "RTX-4070-Ti-Super"),
        ("NVIDIA-GeForce-RTX-4080-SUPER", "RTX-4080-Super"),
        ("nvidia-gpu-rtx4070-8gb", "RTX-4070-Laptop"),  # KubeAI's profile: the only 8 GB RTX 4070
        ("nvidia-gpu-rtx4070-8gb:1", "RTX-4070-Laptop"),
        ("NVIDIA GeForce RTX 2080 Ti", "RTX-2080-Ti"),
        ("RTX 3080 12GB", "RTX-3080-12GB"),
        ("rtx3080-10gb", "RTX-3080-10GB"),
        ("RTX 4060 Ti 16GB", "RTX-4060-Ti-16GB"),
        ("NVIDIA-GeForce-RTX-5080", "RTX-5080"),
        ("NVIDIA-GeForce-RTX-3090-Ti", "RTX-3090-Ti"),
        ("nvidia-gpu-a16", "A16"),
        ("NVIDIA-L20", "L20"),
        ("NVIDIA RTX A2000 12GB", "RTX-A2000-12GB"),
        ("NVIDIA-RTX-4000-Ada-Generation", "RTX-4000-Ada"),
        ("Tesla P40", "P40"),
        ("Tesla-P100-PCIE-16GB", "P100-16GB"),
        ("nvidia-tesla-p100", "P100-16GB"),  # GKE's P100 is the 16 GB one
    ],
)
def test_aliases_resolve(written, canonical):
    assert gpus.resolve_hint(written) == canonical
    assert gpus.lookup(written).name == canonical


@pytest.mark.parametrize("written", ["a100", "A100", "V100", "nvidia-gpu-a100", "MI300A", "", "sleep",
                                     # one product name, two memory sizes
                                     "NVIDIA GeForce RTX 3080", "NVIDIA-GeForce-RTX-3080", "RTX 3080", "3080",
                                     "NVIDIA-GeForce-RTX-3060", "NVIDIA GeForce RTX 4060 Ti", "RTX 5060 Ti",
                                     "NVIDIA RTX A2000", "Tesla P100", "P100",
                                     "Tesla P100-PCIE-12GB", "2080 Ti 22G"])
def test_ambiguous_or_unknown_names_stay_unresolved(written):
    assert gpus.lookup(written) is None


def test_ambiguity_is_explained():
    assert "A100-80GB" in gpus.ambiguity("a100")
    assert gpus.ambiguity("T4") is None
    assert "RTX-3080-12GB" in gpus.ambiguity("NVIDIA-GeForce-RTX-3080")
    assert "RTX-4060-Ti-16GB" in gpus.ambiguity("NVIDIA GeForce RTX 4060 Ti")
    assert "P100-16GB" in gpus.ambiguity("Tesla P100")
    assert gpus.ambiguity("RTX 4070") is None


def test_catalog_facts():
    t4 = gpus.lookup("T4")
    assert 14.5 <= t4.total_gib <= 14.8
    assert t4.compute_capability == (7, 5) and not t4.bf16 and not t4.fp8
    assert gpus.lookup("RTX 3090").total_gib == 23.58
    assert 79.1 <= gpus.lookup("A100-80GB").total_gib <= 79.3
    assert 79.1 <= gpus.lookup("H100").total_gib <= 79.25
    assert gpus.lookup("L4").fp8 and gpus.lookup("L4").bf16
    assert gpus.lookup("A100-40GB").bf16 and not gpus.lookup("A100-40GB").fp8
    required = ["T4", "V100-16GB", "V100-32GB", "A10", "A10G", "A30", "A40", "A100-40GB", "A100-80GB", "L4", "L40",
                "L40S", "H100-PCIe", "H100-SXM", "H100-NVL", "H200", "H20", "GH200", "B200", "RTX-3090", "RTX-4090",
                "RTX-5090", "RTX-A4000", "RTX-A5000", "RTX-A6000", "RTX-6000-Ada", "RTX-PRO-6000"]
    assert set(required) <= set(gpus.names())
    # compute capabilities (NVIDIA's CUDA GPUs table): Pascal has no bf16; fp8 from Ada
    assert gpus.lookup("P40").compute_capability == (6, 1) and not gpus.lookup("P40").bf16
    assert gpus.lookup("P100-16GB").compute_capability == (6, 0)
    assert gpus.lookup("RTX 2080 Ti").compute_capability == (7, 5)
    assert gpus.lookup("RTX 3070").bf16 and not gpus.lookup("RTX 3070").fp8
    assert gpus.lookup("RTX 4070").fp8 and gpus.lookup("L20").fp8
    assert gpus.lookup("RTX 5080").compute_capability == (12, 0)
    assert gpus.lookup("RTX-4070-Laptop").total_gib < 8 < gpus.lookup("RTX-4070").total_gib
    for name in gpus.names():
        spec = gpus.lookup(name)
        assert spec.total_gib < spec.marketing_gb, name  # CUDA's total is below the marketing size
        assert gpus.total_source(name)


@pytest.mark.parametrize(
    "instance, expected",
    [
        ("g4dn.xlarge", ("T4", 1)),
        ("g4dn.12xlarge", ("T4", 4)),
        ("g5.12xlarge", ("A10G", 4)),
        ("g5.48xlarge", ("A10G", 8)),
        ("g6.xlarge", ("L4", 1)),
        ("g6e.12xlarge", ("L40S", 4)),
        ("p4d.24xlarge", ("A100-40GB", 8)),
        ("p4de.24xlarge", ("A100-80GB", 8)),
        ("p5.48xlarge", ("H100-SXM", 8)),
        ("p5e.48xlarge", ("H200", 8)),
        ("p5en.48xlarge", ("H200", 8)),
        ("a2-highgpu-4g", ("A100-40GB", 4)),
        ("a2-ultragpu-8g", ("A100-80GB", 8)),
        ("a3-highgpu-8g", ("H100-SXM", 8)),
        ("a3-megagpu-8g", ("H100-SXM", 8)),
        ("g2-standard-24", ("L4", 2)),
        ("Standard_NC4as_T4_v3", ("T4", 1)),
        ("Standard_NC24ads_A100_v4", ("A100-80GB-PCIe", 1)),
        ("Standard_ND96asr_v4", ("A100-40GB", 8)),
        ("Standard_ND96isr_H100_v5", ("H100-SXM", 8)),
        ("Standard_NV36ads_A10_v5", ("A10", 1)),
    ],
)
def test_instance_types(instance, expected):
    assert gpus.instance_type(instance) == expected
    assert gpus.lookup(expected[0]) is not None


def test_instance_fraction_and_unknown():
    assert gpus.instance_fraction("Standard_NV18ads_A10_v5") == 0.5
    assert gpus.instance_fraction("g5.xlarge") == 1.0
    assert gpus.instance_type("m5.large") is None


def test_mig_profiles():
    gpu, gib = gpus.mig_profile("nvidia.com/mig-3g.40gb")
    assert gpu is None  # A100-80GB and H100 both have it
    assert 39.0 < gib < 40.0
    assert gpus.mig_profile("nvidia.com/mig-1g.5gb")[0] == "A100-40GB"
    assert gpus.mig_profile("1g.23gb") == ("B200", 22.0)
    assert gpus.mig_profile("nvidia.com/mig-1g.10gb")[1] < 10
    assert gpus.mig_profile("nvidia.com/gpu") is None
    # a profile no catalog GPU has: nominal GB as GiB, never more memory than the name says
    assert gpus.mig_profile("nvidia.com/mig-9g.77gb") == (None, round(77e9 / 2**30, 2))
    assert gpus.lookup("A100-80GB").mig_profiles["7g.80gb"] == gpus.lookup("A100-80GB").total_gib


def test_explain_on_a_consumer_gpu(capsys):
    code = main(["explain", "--offline", "--format", "json", "--gpu", "RTX-4070", "--", "vllm", "serve",
                 "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"])
    assert code == 0
    b = json.loads(capsys.readouterr().out)["servers"][0]["budget"]
    assert b["gpu"] == "RTX-4070" and b["total_gib"] == gpus.lookup("RTX-4070").total_gib
    assert b["starts"] and b["kv_cache_gib"] > 0 and b["max_model_len"] == 4096


def test_kubeai_consumer_profile_is_budgeted(tmp_path, capsys):
    model = tmp_path / "model.yaml"
    model.write_text(
        "apiVersion: kubeai.org/v1\nkind: Model\nmetadata:\n  name: qwen-rtx4070\nspec:\n"
        "  url: hf://Qwen/Qwen2.5-1.5B-Instruct\n  engine: VLLM\n  args:\n    - --max-model-len=2048\n"
        "  resourceProfile: nvidia-gpu-rtx4070-8gb:1\n", encoding="utf-8")
    code = main(["explain", str(model), "--offline", "--format", "json"])
    assert code == 0
    b = json.loads(capsys.readouterr().out)["servers"][0]["budget"]
    assert b["gpu"] == "RTX-4070-Laptop" and b["total_gib"] < 8


def test_device_names_are_read_from_the_catalog_once(monkeypatch):
    # a GPU requirement computes a budget on every catalog GPU, and a refusal names the device: the name CUDA
    # prints comes from the table read once, not from the file at every call
    from vramlint import gpus

    written = {e["name"]: e.get("aliases", []) for e in reversed(gpus._catalog_json()["gpus"])}  # first entry wins
    gpus.device_name("T4")

    def unread():
        raise AssertionError("gpus.json read again")

    monkeypatch.setattr(gpus, "_catalog_json", unread)
    for name, aliases in written.items():
        assert gpus.device_name(name) == next((a for a in aliases if " " in a), name)
    assert gpus.device_name("T4") == "Tesla T4"
    assert gpus.device_name("no such GPU") == "no such GPU"
