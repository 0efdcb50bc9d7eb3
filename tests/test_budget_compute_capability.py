"""GPUs older than the architectures a vLLM release's CUDA kernels are built for do not start.

The official wheels carry cubins for sm_70 (Volta) and newer up to 0.19, for sm_75 (Turing) and newer from 0.20;
no release has code for Pascal (P100 6.0, P40 6.1).
"""

from __future__ import annotations

import pytest

from vramlint import gpus, versions
from vramlint.budget import compute_budget
from vramlint.model import Assessment, ModelInfo, ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, find_rule, load_rules, run_rules

# A 3B Llama in fp16 (6.4 GB of weights): fits every GPU of the test with room for its KV cache.
SMALL = dict(name="meta-llama/Llama-3.2-3B-Instruct", source="test", num_layers=28, hidden_size=3072,
             num_attention_heads=24, num_kv_heads=8, head_dim=128, vocab_size=128256, intermediate_size=8192,
             max_position_embeddings=131072, torch_dtype="bfloat16", weight_bytes=3212749824 * 2,
             max_len_key="max_position_embeddings")
ARGS = {"max_model_len": 4096, "dtype": "half"}
CODE = "compute-capability-unsupported"


def run(gpu: str, version: str):
    return compute_budget(ModelInfo(**SMALL), gpus.lookup(gpu), dict(ARGS), {}, version, 1)


def cc_errors(budget):
    return [e for e in budget.errors if e["code"] == CODE]


@pytest.mark.parametrize("version", ["0.4.3", "0.6.4", "0.10.1.1", "0.19.0", "0.20.0", "0.33.0"])
@pytest.mark.parametrize("gpu", ["P40", "P100-16GB"])
def test_pascal_never_starts(gpu, version):
    b = run(gpu, version)
    (err,) = cc_errors(b)
    assert not b.starts
    cc = "6.1" if gpu == "P40" else "6.0"
    floor = "7.5" if versions.at_least(versions.parse_version(version), 0, 20) else "7.0"
    assert err["message"].startswith("CUDA error: no kernel image is available for execution on the device.")
    assert f"vLLM {version} build has CUDA kernels for compute capability {floor} and newer" in err["message"]
    assert f"the {gpus.device_name(gpu)} has compute capability {cc}" in err["message"]
    assert err["arg"] is None
    assert f"no official vLLM build has CUDA kernels for compute capability {cc}" in err["fix"]


@pytest.mark.parametrize("version", ["0.4.3", "0.8.5", "0.10.1.1", "0.14.0", "0.19.0"])
def test_v100_starts_up_to_0_19(version):
    b = run("V100-16GB", version)
    assert b.starts, b.errors
    assert cc_errors(b) == []


@pytest.mark.parametrize("version", ["0.20.0", "0.21.0", "0.33.0"])
def test_v100_fails_from_0_20(version):
    b = run("V100-32GB", version)
    (err,) = cc_errors(b)
    assert not b.starts
    assert err["message"] == (
        "CUDA error: no kernel image is available for execution on the device. The official vLLM "
        f"{version} build has CUDA kernels for compute capability 7.5 and newer; the Tesla V100-SXM2-32GB has compute "
        "capability 7.0"
    )
    assert "vLLM 0.19 is the last release whose CUDA kernels are built for compute capability 7.0" in err["fix"]
    # the memory budget is still computed: only the kernels are missing
    assert b.kv_cache_gib > 0 and b.num_gpu_blocks > 0


@pytest.mark.parametrize("version", ["0.4.3", "0.19.0", "0.20.0", "0.33.0"])
@pytest.mark.parametrize("gpu", ["T4", "A10G", "H100"])
def test_turing_and_newer_start(gpu, version):
    b = run(gpu, version)
    assert cc_errors(b) == []
    assert b.starts, b.errors


def test_boundary_is_0_20():
    assert versions.min_compute_capability(versions.parse_version("0.19.0")) == (7, 0)
    assert versions.min_compute_capability(versions.parse_version("0.19.1")) == (7, 0)
    assert versions.min_compute_capability(versions.parse_version("0.20.0rc1")) == (7, 5)
    assert versions.min_compute_capability(versions.parse_version("0.20.0")) == (7, 5)


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  replicas: 1
  selector:
    matchLabels: {{app: chat}}
  template:
    metadata:
      labels: {{app: chat}}
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: {accelerator}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v{version}
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096", "--dtype", "half"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def lint(tmp_path, accelerator: str, version: str) -> tuple[Assessment, list]:
    from vramlint.assess import assess
    from vramlint.scan import scan

    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOYMENT.format(accelerator=accelerator, version=version))
    inventory = scan([str(path)])
    [assessment] = assess(inventory.servers, ResolveOptions(allow_network=False, base_dir=str(tmp_path)))
    rule = find_rule(load_rules(), "VRL005")
    ctx = RuleContext(rule_options={}, traffic=TrafficProfile(p99_context_tokens=None, peak_concurrent_requests=None))
    return assessment, run_rules([assessment], [rule], ctx)


def test_will_not_start_reports_it(tmp_path):
    assessment, findings = lint(tmp_path, "nvidia-tesla-v100", "0.20.0")
    assert assessment.budget is not None and not assessment.budget.starts
    [finding] = findings
    assert finding.message.startswith(
        "vLLM 0.20.0 will not start: CUDA error: no kernel image is available for execution on the device. The "
        "official vLLM 0.20.0 build has CUDA kernels for compute capability 7.5 and newer; the Tesla V100-SXM2-16GB "
        "has compute capability 7.0. Fix: run it on a GPU of compute capability 7.5 or newer"
    )
    assert finding.location == assessment.server.location  # the GPU, not an argument, is the cause
    _, before = lint(tmp_path, "nvidia-tesla-v100", "0.19.0")
    assert before == []
    _, pascal = lint(tmp_path, "nvidia-tesla-p40", "0.10.2")
    assert len(pascal) == 1 and "the Tesla P40 has compute capability 6.1" in pascal[0].message


def test_an_assumed_version_gives_a_warning_on_a_gpu_older_releases_support(tmp_path):
    """A custom image's tag does not say the version: V100 fails on the default (newest) release but runs on 0.19
    and older, so it is a warning; a Pascal card fails on every release, so it stays an error."""
    path = tmp_path / "deploy.yaml"
    for accelerator, level in (("nvidia-tesla-v100", "warning"), ("nvidia-tesla-p40", "error")):
        path.write_text(DEPLOYMENT.format(accelerator=accelerator, version="0")
                        .replace("vllm/vllm-openai:v0", "registry.example.com/ml/vllm-server:prod"))
        from vramlint.assess import assess
        from vramlint.scan import scan

        [assessment] = assess(scan([str(path)]).servers, ResolveOptions(allow_network=False, base_dir=str(tmp_path)))
        assert assessment.version_source == "default"
        rule = find_rule(load_rules(), "VRL005")
        ctx = RuleContext(rule_options={}, traffic=TrafficProfile(p99_context_tokens=None, peak_concurrent_requests=None))
        [finding] = run_rules([assessment], [rule], ctx)
        assert finding.level == level, finding.message
        assert ("the image tag does not say the version" in finding.message) == (level == "warning")


def test_latest_of_vllms_own_image_is_the_newest_release_so_a_v100_is_an_error(tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOYMENT.format(accelerator="nvidia-tesla-v100", version="0").replace(":v0", ":latest"))
    from vramlint.assess import assess
    from vramlint.scan import scan

    [assessment] = assess(scan([str(path)]).servers, ResolveOptions(allow_network=False, base_dir=str(tmp_path)))
    assert assessment.version_source == "latest tag"
    rule = find_rule(load_rules(), "VRL005")
    ctx = RuleContext(rule_options={}, traffic=TrafficProfile(p99_context_tokens=None, peak_concurrent_requests=None))
    [finding] = run_rules([assessment], [rule], ctx)
    assert finding.level == "error", finding.message
