"""VRL010 unresolved-server, through scan -> assess -> rules; the end-of-run summary by cause (vramlint.unchecked)."""

from __future__ import annotations

from rules_harness import line_of

from vramlint.unchecked import summarise


def test_a_word_known_only_at_run_time_is_said_once_with_its_lines(lint):
    [finding] = lint("vrl010/partly_checked.yaml", rule="VRL010").of("VRL010")
    assert finding.level == "note" and finding.message.startswith("partly checked: ")
    assert finding.message.count("known only at run time") == 1  # two such words, one statement
    assert f"(line {line_of('vrl010/partly_checked.yaml', '$EXTRA_ARGS')})" in finding.message


def test_no_note_per_server_for_causes_many_servers_share(lint):
    files = ["vrl010/fail_no_gpu_type.yaml", "vrl010/fail_model_and_gpu.yaml", "vrl010/fail_amd.yaml",
             "vrl010/fail_local_model.yaml"]
    assert lint(*files, rule="VRL010").of("VRL010") == []


def test_quiet_when_resolved(lint):
    assert lint("vrl010/pass.yaml", rule="VRL010").of("VRL010") == []


def test_summary_groups_unchecked_servers_by_cause_with_one_fix_each(lint):
    files = ["vrl010/fail_no_gpu_type.yaml", "vrl010/fail_model_and_gpu.yaml", "vrl010/fail_model_and_gpu_second.yaml",
             "vrl010/fail_amd.yaml", "vrl010/pass.yaml"]
    result = lint(*files, rule="VRL010")
    groups = {g.cause: g for g in summarise(result.assessments)}
    # an AMD GPU (amd.com/gpu) is sized like an NVIDIA one: it does not say which AMD GPU, so it is a server that
    # does not say its GPU, not an accelerator vramlint leaves out; its fix names the AMD node labeller's label
    assert set(groups) == {"gpu-not-said", "amd-gpu-not-said", "model-path"}
    gpu, amd = groups["gpu-not-said"], groups["amd-gpu-not-said"]
    assert len(gpu.servers) == 3 and "gpu:" in gpu.fix and "nvidia.com/gpu.product" in gpu.fix
    assert [w.split(":")[0].rsplit("/", 1)[-1] for w in amd.servers] == ["fail_amd.yaml"]
    assert "amd.com/gpu.product-name" in amd.fix and "nvidia.com" not in amd.fix
    # the servers whose model is known get what they need of a GPU (VRL011) instead of a budget
    assert gpu.sized + amd.sized == 2 and "VRL011" in gpu.text()
    assert gpu.text().startswith("3 servers do not say their GPU")
    model = groups["model-path"]
    assert model.items == ["/models/my-finetune"] and len(model.servers) == 2 and "model-aliases" in model.fix
    assert not any("pass.yaml" in where for g in groups.values() for where in g.servers)


def test_summary_is_empty_once_the_gpu_and_model_are_known(lint):
    result = lint("vrl010/fail_no_gpu_type.yaml", rule="VRL010", gpu="L4")
    assert summarise(result.assessments) == []
    # a file where VRL010 is turned off is left out of the summary
    result = lint("vrl010/fail_no_gpu_type.yaml", rule="VRL010")
    assert summarise(result.assessments, enabled=lambda file: False) == []
