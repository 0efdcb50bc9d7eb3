"""VRL005 will-not-start, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of


def test_default_context_too_long_for_the_kv_cache_is_on_the_container(lint):
    result = lint("vrl005/fail_unset_len.yaml", rule="VRL005")
    budget = result.budget
    assert not budget.starts
    [finding] = result.of("VRL005")
    error = budget.errors[0]
    assert error["arg"] == "max_model_len"
    assert finding.level == "error"
    assert finding.location.line == line_of("vrl005/fail_unset_len.yaml", "- name: vllm")
    assert error["message"] in finding.message  # vLLM's own words
    for number in (f"{budget.weights_gib:.2f} GiB", f"{budget.kv_cache_gib:.2f} GiB", f"{budget.usable_gib:.2f} GiB",
                   "(131072)", "L4"):
        assert number in finding.message, number


def test_too_long_explicit_context_is_on_its_line(lint):
    result = lint("vrl005/fail_long_len.yaml", rule="VRL005")
    [finding] = result.of("VRL005")
    assert finding.location.line == line_of("vrl005/fail_long_len.yaml", "--max-model-len")
    assert "(65536)" in finding.message


def test_utilization_above_one(lint):
    result = lint("vrl005/fail_utilization.yaml", rule="VRL005")
    findings = result.of("VRL005")
    assert findings and all(f.location.line == line_of("vrl005/fail_utilization.yaml", "--gpu-memory-utilization") for f in findings)
    assert any("1.2" in f.message for f in findings)


def test_quiet_when_it_starts(lint):
    result = lint("vrl005/pass.yaml", rule="VRL005")
    assert result.budget.starts and result.of("VRL005") == []


def test_weights_larger_than_the_gpu_is_one_finding_with_the_cache_error_folded_in(lint):
    result = lint("vrl005/fail_weights_exceed.yaml", rule="VRL005")
    codes = [e["code"] for e in result.budget.errors]
    # the budget fails both checks; vLLM stops at the first (loading the weights) and never sizes the cache
    assert "weights-exceed-gpu" in codes and "no-cache-memory" in codes
    [finding] = result.of("VRL005")
    assert finding.level == "error"
    assert finding.message.index("CUDA out of memory") < finding.message.index("No available memory for the cache blocks")
    assert "vLLM stops here" in finding.message


def test_errors_on_the_same_line_are_one_finding(lint):
    result = lint("vrl005/fail_len_above_model.yaml", rule="VRL005")
    codes = [e["code"] for e in result.budget.errors]
    assert "max-model-len-above-model" in codes and "kv-cache-below-max-model-len" in codes
    [finding] = result.of("VRL005")
    assert finding.location.line == line_of("vrl005/fail_len_above_model.yaml", "--max-model-len")
    assert "262144" in finding.message and "vLLM stops here" in finding.message


def test_root_causes_keeps_separate_lines_apart():
    import importlib.util

    from vramlint.model import Location, Server
    from vramlint.rule import builtin_rules_dir

    spec = importlib.util.spec_from_file_location("vrl005", builtin_rules_dir() / "vrl005_will_not_start.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    loc = Location("f.yaml", 3)
    server = Server(file="f.yaml", location=loc, source_format="kubernetes",
                    arg_locations={"dtype": Location("f.yaml", 5), "gpu_memory_utilization": Location("f.yaml", 6)})
    errors = [{"code": "no-cache-memory", "message": "a", "arg": "gpu_memory_utilization"},
              {"code": "bf16-unsupported", "message": "b", "arg": "dtype"},
              {"code": "kv-cache-below-max-model-len", "message": "c", "arg": "max_model_len"}]
    pairs = module.root_causes(errors, server)
    # the dtype error is its own cause on its own line; the two memory errors are one chain
    assert [(e["code"], [f["code"] for f in folded]) for e, folded in pairs] == [
        ("bf16-unsupported", []), ("no-cache-memory", ["kv-cache-below-max-model-len"])]


def _swap(tmp_path, name, pairs):
    from rules_harness import FIXTURES

    text = (FIXTURES / "vrl005/fail_v1_fp8_kv_cache.yaml").read_text()
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_v1_forced_with_fp8_kv_cache_on_0_8_is_an_error_without_a_model(lint):
    result = lint("vrl005/fail_v1_fp8_kv_cache.yaml", rule="VRL005")
    assert result.budget is None  # the model on the volume is not known: no budget, the check needs none
    [finding] = result.of("VRL005")
    assert finding.level == "error"
    assert finding.location.line == line_of("vrl005/fail_v1_fp8_kv_cache.yaml", "--kv-cache-dtype=fp8")
    assert "VLLM_USE_V1=1 is not supported with --kv-cache-dtype" in finding.message and "L4" in finding.message


def test_v1_fp8_kv_cache_is_accepted_on_hopper_and_without_the_forcing_variable(lint, tmp_path):
    hopper = _swap(tmp_path, "h100.yaml", [("nvidia-l4", "nvidia-h100-80gb")])
    assert lint(hopper, rule="VRL005").of("VRL005") == []
    fallback = _swap(tmp_path, "v0.yaml", [('value: "1"', 'value: "0"')])
    assert lint(fallback, rule="VRL005").of("VRL005") == []  # V0 takes fp8 KV caches
    newer = _swap(tmp_path, "v0102.yaml", [("v0.8.5", "v0.10.2")])
    assert lint(newer, rule="VRL005").of("VRL005") == []  # 0.10.2 no longer has the oracle


def test_v1_fp8_kv_cache_with_the_gpu_unknown(lint, tmp_path):
    # 0.8.5 accepts it on Hopper: without the GPU it is a warning that says so
    unknown = _swap(tmp_path, "unknown.yaml", [("cloud.google.com/gke-accelerator: nvidia-l4", "team: llm")])
    [finding] = lint(unknown, rule="VRL005").of("VRL005")
    assert finding.level == "warning" and "Hopper" in finding.message
    # 0.8.1 refuses any --kv-cache-dtype under VLLM_USE_V1=1, on every GPU
    old = _swap(tmp_path, "old.yaml", [("cloud.google.com/gke-accelerator: nvidia-l4", "team: llm"),
                                       ("v0.8.5", "v0.8.1")])
    [finding] = lint(old, rule="VRL005").of("VRL005")
    assert finding.level == "error" and "any GPU" in finding.message


def _connector(tmp_path, name, pairs):
    from rules_harness import FIXTURES

    text = (FIXTURES / "vrl005/fail_kv_connector_expandable_segments.yaml").read_text()
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_kv_connector_with_expandable_segments_is_refused_from_0_21(lint):
    """VllmConfig._verify_kv_transfer_compat (0.21+): the finding sits on the variable, with vLLM's text."""
    fixture = "vrl005/fail_kv_connector_expandable_segments.yaml"
    result = lint(fixture, rule="VRL005")
    assert result.budget is not None and not result.budget.starts
    [finding] = result.of("VRL005")
    assert finding.level == "error"
    assert finding.location.line == line_of(fixture, "expandable_segments:True,max_split_size_mb")
    assert "KV connector NixlConnector is incompatible with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True " \
           "unless enable_cumem_allocator is also enabled" in finding.message


def test_kv_connector_with_expandable_segments_where_vllm_starts(lint, tmp_path):
    fine = [
        [("v0.27.1", "v0.20.2")],  # the check came with 0.21
        [("value: \"expandable_segments:True,", "value: \"expandable_segments:False,")],
        [("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")],  # vLLM reads only the CUDA-named variable
        [("- --max-model-len=16384", "- --max-model-len=16384\n            - --enable-cumem-allocator")],
        [("- --max-model-len=16384", "- --max-model-len=16384\n            - --enable-sleep-mode")],
        [("'--kv-transfer-config={\"kv_connector\": \"NixlConnector\", \"kv_role\": \"kv_both\"}'",
          "--enable-prefix-caching")],
    ]
    for i, pairs in enumerate(fine):
        assert lint(_connector(tmp_path, f"fine{i}.yaml", pairs), rule="VRL005").of("VRL005") == [], pairs


def test_kv_connector_with_expandable_segments_on_0_21_and_from_kv_offloading(lint, tmp_path):
    # 0.21 exempts sleep mode only (no cumem allocator flag yet), with its own wording
    old = _connector(tmp_path, "v021.yaml", [("v0.27.1", "v0.21.0")])
    [finding] = lint(old, rule="VRL005").of("VRL005")
    assert "unless enable_sleep_mode is also enabled" in finding.message
    # --kv-offloading-size makes the OffloadingConnector, which the same check refuses
    offload = _connector(tmp_path, "offload.yaml", [
        ("'--kv-transfer-config={\"kv_connector\": \"NixlConnector\", \"kv_role\": \"kv_both\"}'",
         "--kv-offloading-size=64")])
    [finding] = lint(offload, rule="VRL005").of("VRL005")
    assert "KV connector OffloadingConnector is incompatible" in finding.message


def test_kv_connector_with_expandable_segments_needs_no_model(lint, tmp_path):
    """A model vramlint cannot size: no budget, the refusal is still certain (it is VllmConfig's)."""
    unknown = _connector(tmp_path, "unknown.yaml", [("--model=Qwen/Qwen3-8B", "--model=/models/acme-chat")])
    result = lint(unknown, rule="VRL005")
    assert result.budget is None
    [finding] = result.of("VRL005")
    assert finding.level == "error" and "NixlConnector" in finding.message


def test_a_word_known_only_at_run_time_makes_a_memory_failure_a_warning(lint):
    # `$EXTRA_ARGS` may hold --max-model-len: the budget of the arguments written fails, but that is not certain
    result = lint("vrl005/warn_unset_len_with_extra_args.yaml",
                  rule="VRL005")
    assert not result.budget.starts
    [finding] = result.of("VRL005")
    assert finding.level == "warning" and "may not start" in finding.message
    assert "known only at run time" in finding.message and "(131072)" in finding.message


def test_a_length_the_parser_refuses_is_the_one_error_not_a_budget_at_the_model_maximum(lint):
    # vLLM's parser stops on "64k tokens" before it sizes anything; the budget can only read the length as unset
    # (the model's 131072), and a KV-cache error resting on that would be a second error of a value never taken
    result = lint("vrl005/fail_unreadable_len.yaml", rule="VRL005")
    assert any(e["code"] == "kv-cache-below-max-model-len" for e in result.budget.errors)
    [finding] = result.of("VRL005")
    assert finding.level == "error"
    assert "invalid" in finding.message and "'64k tokens'" in finding.message
    assert finding.location.line == line_of("vrl005/fail_unreadable_len.yaml", "64k tokens")


def test_a_refused_choice_keeps_the_refused_value_on_the_first_line(lint):
    # argparse's message is too long for a headline: the first line is the part before "(choose from ...)", not
    # a bare "will not start"; the whole message, with vLLM's words, follows
    result = lint("vrl005/fail_bad_dtype_choice.yaml", rule="VRL005")
    [finding] = result.of("VRL005")
    headline, detail = finding.headline()
    assert headline.endswith("will not start: argument --dtype: invalid choice: 'bf16'")
    assert "invalid choice: 'bf16' (choose from 'auto', 'half'" in detail


def test_a_refused_quantization_is_the_one_error_not_a_budget_of_unquantized_weights(lint):
    # `awq4` is no method of 0.10.2 (argparse's choices): the budget could only size the weights unquantized, and
    # a KV-cache error at the model's maximum on those weights would be a second error of a configuration that
    # never runs
    result = lint("vrl005/fail_unknown_quantization.yaml", rule="VRL005")
    assert result.budget is not None and not result.budget.starts
    [finding] = result.of("VRL005")
    assert "awq4" in finding.headline()[0] and finding.level == "error"
