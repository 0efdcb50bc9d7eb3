"""VRL011 gpu-requirement: what a server that names no GPU needs of one, through scan -> assess -> rules; and the
verdicts that hold on every GPU (VRL005) and on each GPU of a fleet."""

from __future__ import annotations

import re
from dataclasses import replace

from rules_harness import line_of

from vramlint import gpus
from vramlint.budget import compute_budget


def _min_total(message: str) -> float:
    return float(re.search(r"needs >= ([0-9.]+) GiB per GPU", message).group(1))


def test_the_requirement_is_the_total_at_which_the_budget_starts(lint):
    result = lint("vrl011/fail_full_context.yaml", rule="VRL011")
    [finding] = result.of("VRL011")
    assert finding.level == "note"
    assert finding.location.line == line_of("vrl011/fail_full_context.yaml", "nvidia.com/gpu: 1")
    assert "max_model_len 131072 (the model's maximum" in finding.message
    need = _min_total(finding.message)
    a = result.assessments[0]
    assert a.budget is None and a.gpu_requirement.min_total_gib == need
    # the same budget code on a GPU of exactly that size starts, and 0.3 GiB less does not
    l40s = gpus.lookup("L40S")
    args, env, image = a.server.args, a.server.env, a.server.image
    assert compute_budget(a.model, replace(l40s, total_gib=need), args, env, "0.10.2", 1, image=image).starts
    below = compute_budget(a.model, replace(l40s, total_gib=need - 0.3), args, env, "0.10.2", 1, image=image)
    assert not below.starts and below.errors[0]["code"] == "kv-cache-below-max-model-len"


def test_fits_and_does_not_fit_are_each_gpus_own_budget(lint):
    req = lint("vrl011/fail_full_context.yaml", rule="VRL011").assessments[0].gpu_requirement
    assert {"L40S", "A100-40GB", "H100-SXM"} <= set(req.fits)
    assert {"T4", "L4", "A10G"} <= set(req.does_not_fit)
    # an NVIDIA server: every NVIDIA GPU of the catalog, no AMD part
    assert set(req.fits) | set(req.does_not_fit) == {s.name for s in gpus.catalog_specs()}
    for name in ("L4", "A100-40GB"):
        budget = lint("vrl011/fail_full_context.yaml", rule="VRL011", gpu=name).budget
        assert budget.starts == (name in req.fits)
    assert req.to_json()["min_total_gib"] == req.min_total_gib
    message = lint("vrl011/fail_full_context.yaml", rule="VRL011").of("VRL011")[0].message
    assert "fits A100-40GB, L40S and larger; not A10G, A10, V100-32GB or smaller" in message


def test_a_shorter_context_needs_less(lint):
    long = lint("vrl011/fail_full_context.yaml", rule="VRL011").assessments[0].gpu_requirement
    short = lint("vrl010/fail_no_gpu_type.yaml", rule="VRL011").assessments[0].gpu_requirement  # 8192 tokens
    assert short.min_total_gib < long.min_total_gib
    assert "L4" in short.fits and "L4" not in long.fits


def test_a_failure_on_every_gpu_is_an_error_and_no_requirement_note(lint):
    result = lint("vrl011/fail_len_above_model.yaml")
    assert result.of("VRL011") == []
    [error] = result.of("VRL005")
    assert error.level == "error" and "will not start on any GPU" in error.message
    assert "greater than the derived max_model_len" in error.message
    assert error.location.line == line_of("vrl011/fail_len_above_model.yaml", "--max-model-len")


def test_weights_larger_than_the_largest_gpu_are_an_error(lint):
    result = lint("vrl011/fail_weights_above_largest.yaml")
    [error] = result.of("VRL005")
    assert "the weights do not fit on any GPU" in error.message and gpus.catalog_specs()[-1].name in error.message
    assert result.of("VRL011") == []


def test_kv_cache_above_every_gpu_is_a_warning(lint):
    [finding] = lint("vrl011/fail_kv_above_largest.yaml", rule="VRL011").of("VRL011")
    assert finding.level == "warning" and "more than any GPU in vramlint's catalog" in finding.message
    assert _min_total(finding.message) > gpus.catalog_specs()[-1].total_gib


def test_quiet_when_the_gpu_is_named(lint):
    assert lint("vrl010/pass.yaml", rule="VRL011").of("VRL011") == []
    result = lint("vrl011/fail_full_context.yaml", rule="VRL011", gpu="L40S")
    assert result.of("VRL011") == [] and result.assessments[0].gpu_requirement is None


def test_a_fleet_fails_on_the_gpu_where_it_does_not_start(lint):
    result = lint("vrl011/fail_full_context.yaml", fleet=["L4", "L40S"])
    a = result.assessments[0]
    assert [b.gpu for b in a.fleet] == ["L4", "L40S"] and a.budget.gpu == "L4" and a.gpu_requirement is None
    [error] = result.of("VRL005")
    assert error.level == "error" and error.message.startswith("on L4 (the pods may land on any of L4, L40S)")
    assert result.of("VRL011") == []


def test_a_fleet_that_starts_everywhere_has_no_error(lint):
    result = lint("vrl011/fail_full_context.yaml", fleet=["L40S", "A100-80GB"])
    assert result.of("VRL005") == []
    assert result.assessments[0].budget.gpu == "L40S"  # the one with the least KV cache decides the warnings


def test_node_affinity_with_several_gpu_products_is_a_fleet(lint):
    result = lint("vrl011/fleet_affinity.yaml")
    a = result.assessments[0]
    assert [b.gpu for b in a.fleet] == ["L4", "L40S"]
    assert "nvidia.com/gpu.product" in a.server.gpu.evidence
    [error] = result.of("VRL005")
    assert error.message.startswith("on L4 ")


def test_servers_with_the_same_settings_get_one_note(lint):
    [finding] = lint("vrl011/two_alike.yaml", rule="VRL011").of("VRL011")
    second = line_of("vrl011/two_alike.yaml", "name: green") + 8  # its nvidia.com/gpu line
    assert finding.message.startswith("Qwen/Qwen2.5-7B-Instruct: needs >= ")
    assert finding.message.endswith(f"(the same for 1 more server with these settings: "
                                    f"{finding.location.file}:{second})")


def test_the_terms_explain_shows_add_up_to_the_requirement(lint):
    req = lint("vrl011/fail_full_context.yaml", rule="VRL011").assessments[0].gpu_requirement
    total = sum(req.needs.values()) / req.gpu_memory_utilization
    assert req.min_total_gib - 0.1 <= total <= req.min_total_gib + 0.02


def test_max_model_len_auto_needs_only_room_for_some_kv_cache(lint, tmp_path):
    """With `--max-model-len auto` vLLM fits the context to the KV cache left instead of refusing to start, so
    the requirement is the weights and the rest with any KV cache, not one model-maximum request."""
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:latest
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"{extra}]
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
    full, auto = tmp_path / "full.yaml", tmp_path / "auto.yaml"
    full.write_text(text.format(extra=""))
    auto.write_text(text.format(extra=', "--max-model-len", "auto"'))
    [full_finding] = lint(str(full), rule="VRL011").of("VRL011")
    result = lint(str(auto), rule="VRL011")
    [auto_finding] = result.of("VRL011")
    assert "--max-model-len auto" in auto_finding.message
    need = _min_total(auto_finding.message)
    assert need < _min_total(full_finding.message) - 5  # no 131072-token request in it
    # a GPU of that size starts (vLLM fits a shorter context); a GPU below the weights does not. The need is the
    # smallest over the catalog: the cold compile's L2 flush buffer grows with the L2 size (L40S 96 MiB against
    # 24 - 48 MiB on the smallest cards; under 0.2 GiB apart)
    a = result.assessments[0]
    l40s = gpus.lookup("L40S")
    args, env = a.server.args, a.server.env
    version = a.gpu_requirement.vllm_version
    assert any(compute_budget(a.model, replace(spec, total_gib=need), args, env, version, 1).starts
               for spec in gpus.catalog_specs("nvidia"))
    assert compute_budget(a.model, replace(l40s, total_gib=need + 0.2), args, env, version, 1).starts
    assert not compute_budget(a.model, replace(l40s, total_gib=need * 0.8), args, env,
                              a.gpu_requirement.vllm_version, 1).starts
