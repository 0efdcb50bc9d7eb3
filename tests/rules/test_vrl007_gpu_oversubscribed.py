"""VRL007 gpu-oversubscribed, through scan -> assess -> rules (a cross-server rule: check_all)."""

from __future__ import annotations

from rules_harness import line_of

FAIL = "vrl007/fail_same_device.yaml"


def test_two_engines_on_one_device_adding_up_above_one(lint):
    result = lint(FAIL, rule="VRL007", gpu="L4")
    servers = result.inventory.servers
    assert len(servers) == 2 and servers[0].gpu.shared_key and servers[0].gpu.shared_key == servers[1].gpu.shared_key
    # one root cause, one finding: on the last engine of the group, naming the other
    [draft] = result.of("VRL007")
    assert draft.level == "error"
    default_util = result.assessments[0].budget.gpu_memory_utilization
    assert draft.location.line == line_of(FAIL, '"0.3"')
    total = default_util + 0.3
    assert f"adds up to {total:.2f}" in draft.message and "22.03 GiB" in draft.message
    assert f"{total * 22.03:.2f}" in draft.message or f"{total * result.assessments[0].gpu.total_gib:.2f}" in draft.message
    assert "this one to 0.10 at most" in draft.message or "give the engines separate GPUs" in draft.message
    assert "chat (line " in draft.message


def test_old_v1_counts_the_other_engine_even_below_one(lint):
    result = lint("vrl007/fail_old_v1.yaml", rule="VRL007", gpu="L4")
    assert {a.budget.engine for a in result.assessments} == {"v1"}
    [finding] = result.of("VRL007")
    assert finding.location.line == line_of("vrl007/fail_old_v1.yaml", '"0.3"')
    assert "vLLM 0.8.5" in finding.message and "0.9.2+" in finding.message


def test_quiet_when_shares_fit_or_devices_differ(lint):
    assert lint("vrl007/pass_split.yaml", rule="VRL007", gpu="L4").of("VRL007") == []
    assert lint("vrl007/pass_separate_devices.yaml", rule="VRL007", gpu="L4").of("VRL007") == []


def test_compose_profiles_decide_which_engines_run_together(lint):
    exclusive = lint("vrl007/pass_exclusive_profiles.yaml", rule="VRL007", gpu="L4")
    assert [s.profiles for s in exclusive.inventory.servers] == [["chat"], ["draft"]]
    assert exclusive.of("VRL007") == []
    findings = lint("vrl007/fail_profile_with_always_on.yaml", rule="VRL007", gpu="L4").of("VRL007")
    assert len(findings) == 1
    assert all("when compose profile 'speculative' is active" in f.message for f in findings)


def test_devices_from_the_default_of_an_unset_variable_are_shared_only_as_assumed(lint, tmp_path):
    # shaped after boanlab/KloudChat-LLM docker-compose.vllm.yml: a scheduler writes VLLM_<MODEL>_DEVICES into a
    # per-node .env, so `${VLLM_A_DEVICES:-all}` is "all" only where nothing sets it
    text = """\
services:
  a:
    image: vllm/vllm-openai:v0.10.2
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--gpu-memory-utilization", "0.6"]
    environment:
      NVIDIA_VISIBLE_DEVICES: ${VLLM_A_DEVICES:-all}
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}
  b:
    image: vllm/vllm-openai:v0.10.2
    command: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--gpu-memory-utilization", "0.6"]
    environment:
      NVIDIA_VISIBLE_DEVICES: ${VLLM_B_DEVICES:-all}
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}
"""
    path = tmp_path / "docker-compose.yml"
    path.write_text(text)
    # the defaults place both on all GPUs, as device_ids defaults do: a warning that says the assumption
    [finding] = lint(str(path), rule="VRL007").of("VRL007")
    assert finding.level == "warning" and "${VLLM_A_DEVICES}" in finding.message
    # written out, both on device 0: 1.2 of one GPU
    path.write_text(text.replace("${VLLM_A_DEVICES:-all}", '"0"').replace("${VLLM_B_DEVICES:-all}", '"0"'))
    findings = lint(str(path), rule="VRL007").of("VRL007")
    assert findings and all(f.level == "error" for f in findings)


def test_devices_from_an_unset_variable_are_not_a_placement(lint, tmp_path):
    """`device_ids: ["${GPU_ID:?error}"]` may name several devices, and a `${VAR:-all}` default is what the
    file assumes when the deployment's .env (not committed) says nothing: neither is a certain shared GPU."""
    unset_ids = tmp_path / "compose.yaml"
    unset_ids.write_text(
        "services:\n"
        + "".join(
            f"  {name}:\n    image: vllm/vllm-openai:v0.9.2\n"
            f"    command: [\"--model\", \"Qwen/Qwen2.5-1.5B-Instruct\"]\n"
            "    deploy: {resources: {reservations: {devices: [{driver: nvidia, capabilities: [gpu], "
            f"device_ids: [\"${{GPU_{name.upper()}:?set it}}\"]}}]}}}}}}\n"
            for name in ("chat", "embed")
        )
    )
    result = lint(str(unset_ids), rule="VRL007", gpu="L4")
    assert [s.gpu.count for s in result.inventory.servers] == [None, None]
    assert result.of("VRL007") == []
    # `${VAR:?}` unset in the repository is an unknown said once, not an error
    requireds = [p for p in result.inventory.problems if ":?" in p.message]
    assert len(requireds) == 2 and {p.level for p in requireds} == {"note"}

    defaulted = tmp_path / "defaulted" / "compose.yaml"
    defaulted.parent.mkdir()
    defaulted.write_text(
        "services:\n"
        + "".join(
            f"  {name}:\n    image: vllm/vllm-openai:v0.9.2\n"
            f"    command: [\"--model\", \"Qwen/Qwen2.5-1.5B-Instruct\", \"--gpu-memory-utilization\", \"0.6\"]\n"
            "    deploy: {resources: {reservations: {devices: [{driver: nvidia, capabilities: [gpu], "
            f"device_ids: [\"${{{name.upper()}_DEVICES:-0}}\"]}}]}}}}}}\n"
            for name in ("chat", "embed")
        )
    )
    [finding] = lint(str(defaulted), rule="VRL007", gpu="L4").of("VRL007")
    assert finding.level == "warning" and "${EMBED_DEVICES}" in finding.message
    # the same file with the variables set in a committed .env: the placement is the deployment's, an error
    (defaulted.parent / ".env").write_text("CHAT_DEVICES=0\nEMBED_DEVICES=0\n")
    [finding] = lint(str(defaulted), rule="VRL007", gpu="L4").of("VRL007")
    assert finding.level == "error"


def test_a_visible_devices_variable_beside_a_device_request_is_contested_unless_both_start_alike(lint, tmp_path):
    # moby's NVIDIA driver sets NVIDIA_VISIBLE_DEVICES from the request after the service's own value: which one
    # the toolkit uses decides the devices. Both "0" (env) and all (the request) put the engine's first rank on
    # GPU 0; "1" and all do not agree, so where the engines run is not known
    text = """\
services:
  a:
    image: vllm/vllm-openai:v0.10.2
    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--gpu-memory-utilization", "0.6"]
    environment: {NVIDIA_VISIBLE_DEVICES: "@IDS@"}
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}
  b:
    image: vllm/vllm-openai:v0.10.2
    command: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--gpu-memory-utilization", "0.6"]
    environment: {NVIDIA_VISIBLE_DEVICES: "@IDS@"}
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}
"""
    path = tmp_path / "docker-compose.yml"
    path.write_text(text.replace("@IDS@", "1"))
    assert not lint(str(path), rule="VRL007").of("VRL007")
    path.write_text(text.replace("@IDS@", "0,1"))
    [finding] = lint(str(path), rule="VRL007").of("VRL007")
    assert finding.level == "error"


def test_an_engine_whose_command_line_may_set_its_share_makes_the_sum_a_warning(lint):
    # `${CHAT_ARGS}` may hold --gpu-memory-utilization for the engine that otherwise takes the default 0.9
    path = "vrl007/warn_extra_args_default_share.yaml"
    result = lint(path, rule="VRL007", gpu="L4")
    assert result.inventory.servers[0].opaque_args is not None
    [finding] = result.of("VRL007")
    assert finding.level == "warning" and "keeps the default gpu_memory_utilization" in finding.message
    assert finding.location.line == line_of(path, '"0.3"')
