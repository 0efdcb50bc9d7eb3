"""Helm values of the vLLM production-stack chart and of vLLM's example chart."""

from __future__ import annotations

import os

from vramlint.scan import scan

HV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "helm_values")


def by_name(path):
    return {s.name: s for s in scan([os.path.join(HV, path)]).servers}


def test_production_stack_model_specs():
    servers = by_name("production-stack.yaml")
    assert set(servers) == {"qwen", "mig"}  # `enabled: false` renders nothing
    s = servers["qwen"]
    assert s.source_format == "helm-values" and s.kind == "modelSpec"
    assert s.location.yaml_path == "servingEngineSpec.modelSpec[0]" and s.location.line == 4
    assert s.model == "Qwen/Qwen2.5-7B-Instruct" and s.model_location.line == 7
    assert s.image == "vllm/vllm-openai:v0.8.5" and s.vllm_version == "0.8.5"
    assert s.replicas == 2
    assert s.gpu.count == 2 and s.gpu.type == "V100-16GB" and s.gpu.location.line == 9
    assert "Tesla-V100-SXM2-16GB" in s.gpu.evidence
    assert s.env["VLLM_LOGGING_LEVEL"] == "DEBUG"
    assert s.shm is True  # the chart mounts a memory /dev/shm when tensorParallelSize is set
    mig = servers["mig"]
    assert mig.gpu.mig_profile == "3g.40gb" and mig.gpu.count == 1
    assert mig.vllm_version is None  # tag latest
    assert mig.shm is False


def test_production_stack_flags_point_at_values_lines():
    from vramlint.cmdline import Token, find_vllm_invocation

    probe = find_vllm_invocation([], [Token("--max-model-len", None), Token("1", None)], "vllm/vllm-openai", {})
    if probe is None or "max_model_len" not in probe.args:
        import pytest

        pytest.skip("vLLM argument table (EA) not present yet")
    s = by_name("production-stack.yaml")["qwen"]
    assert s.args["max_model_len"] == 8192 and s.arg_locations["max_model_len"].line == 12
    assert s.args["tensor_parallel_size"] == 2 and s.arg_locations["tensor_parallel_size"].line == 11
    assert s.args["gpu_memory_utilization"] == 0.9 and s.arg_locations["gpu_memory_utilization"].line == 13
    assert s.args["dtype"] == "half"
    assert s.args["enforce_eager"] is True and s.arg_locations["enforce_eager"].line == 15
    # The template writes --no-enable-prefix-caching when vllmConfig does not enable it; it points at vllmConfig.
    assert "enable_prefix_caching" in s.args and s.arg_locations["enable_prefix_caching"].line == 10


def test_example_chart_values():
    (s,) = scan([os.path.join(HV, "example-chart.yaml")]).servers
    assert s.model == "facebook/opt-125m" and s.model_location.line == 4
    assert s.image == "vllm/vllm-openai:v0.6.3" and s.vllm_version == "0.6.3"
    assert s.gpu.count == 1 and s.replicas == 1 and s.shm is True


def test_ordinary_values_file_is_not_a_server(tmp_path):
    path = tmp_path / "values.yaml"
    path.write_text("image:\n  repository: nginx\n  tag: '1.27'\nreplicaCount: 2\nservice:\n  port: 80\n"
                    "# vllm is mentioned in a comment only\n")
    inv = scan([str(path)])
    assert inv.servers == [] and inv.problems == []


def test_production_stack_values_under_an_umbrella_dependency_key(tmp_path):
    """Helm gives a dependency the values under its name: an umbrella chart's `vllm-stack:` block is the
    production-stack chart's values, read with its paths; a block the dependency condition turns off is not."""
    text = open(os.path.join(HV, "production-stack.yaml"), encoding="utf-8").read()
    nested = "".join(f"  {line}\n" if line.strip() else "\n" for line in text.splitlines())
    (tmp_path / "values.yaml").write_text("vllm-stack:\n" + nested + "other-stack:\n  enabled: false\n"
                                          + nested.replace("name: \"qwen\"", "name: \"off\"").replace(
                                              "name: qwen", "name: off"))
    servers = {s.name: s for s in scan([str(tmp_path / "values.yaml")]).servers}
    assert set(servers) == {"qwen", "mig"}
    s = servers["qwen"]
    assert s.location.yaml_path == "vllm-stack.servingEngineSpec.modelSpec[0]" and s.location.line == 5
    assert s.model == "Qwen/Qwen2.5-7B-Instruct" and s.model_location.line == 8
    assert s.gpu.count == 2 and s.gpu.location.line == 10
