"""VRL001 max-model-len-at-maximum, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of

from vramlint.rule import rebudget


def test_unset_max_model_len_reports_concurrency_now_and_at_the_suggestion(lint):
    result = lint("vrl001/fail_unset.yaml", rule="VRL001")
    [finding] = result.of("VRL001")
    budget = result.budget
    assert finding.level == "warning" and finding.rule_name == "max-model-len-at-maximum"
    assert finding.location.line == line_of("vrl001/fail_unset.yaml", "- name: vllm")  # the container: nothing set
    assert budget.max_model_len == 131072 and budget.max_concurrency < 8
    after = rebudget(result.assessments[0], max_model_len=8192)
    assert after.max_concurrency > budget.max_concurrency * 10  # same memory, many more full-length requests
    for number in ("131,072 tokens", f"{budget.kv_cache_gib:.2f} GiB", f"{budget.kv_tokens:,} tokens",
                   f"{budget.max_concurrency:.2f}x", "--max-model-len 8192", f"{after.max_concurrency:.2f}x"):
        assert number in finding.message, number
    assert after.kv_cache_gib == budget.kv_cache_gib  # the claim in the message: memory does not change


def test_explicit_maximum_points_at_the_value_and_uses_the_traffic_profile(lint):
    result = lint("vrl001/fail_explicit.yaml", rule="VRL001", p99=6000)
    [finding] = result.of("VRL001")
    assert finding.location.line == line_of("vrl001/fail_explicit.yaml", "--max-model-len")
    assert "--max-model-len 131,072 is the model's maximum" in finding.message
    after = rebudget(result.assessments[0], max_model_len=6144)
    assert "--max-model-len 6144" in finding.message and "6,000 tokens" in finding.message
    assert f"{after.max_concurrency:.2f}x" in finding.message


def test_peak_concurrency_from_the_traffic_profile_sets_the_threshold(lint):
    quiet = lint("vrl001/fail_unset.yaml", rule="VRL001", peak=2)  # 3.4 full-length requests fit: enough
    assert quiet.of("VRL001") == []
    loud = lint("vrl001/fail_unset.yaml", rule="VRL001", peak=64)
    assert "your traffic profile's peak of 64 concurrent requests" in loud.of("VRL001")[0].message


def test_a_p99_context_as_long_as_the_model_maximum_gets_no_suggestion(lint):
    assert lint("vrl001/fail_unset.yaml", rule="VRL001", p99=131072).of("VRL001") == []


def test_quiet_when_tuned_or_when_the_maximum_fits_many_requests(lint):
    assert lint("vrl001/pass_tuned.yaml", rule="VRL001").of("VRL001") == []
    short = lint("vrl001/pass_short_model.yaml", rule="VRL001")  # Qwen2.5-7B: 32768 maximum, not set
    assert short.budget.max_model_len == 32768 and short.budget.max_concurrency >= 8
    assert short.of("VRL001") == []


def test_min_concurrency_option(lint):
    result = lint("vrl001/pass_short_model.yaml", rule="VRL001", options={"min-concurrency": 64})
    [finding] = result.of("VRL001")
    assert "fewer than 64." in finding.message


def test_a_word_known_only_at_run_time_may_set_it_so_a_note(lint, tmp_path):
    path = tmp_path / "extra.yaml"
    path.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          command: ["/bin/sh", "-c"]
          args: ["vllm serve Qwen/Qwen2.5-7B-Instruct $EXTRA_ARGS"]
          resources: {limits: {nvidia.com/gpu: 1}}
""")
    result = lint(str(path), rule="VRL001")
    [finding] = result.of("VRL001")
    assert finding.level == "note" and "not among the arguments written" in finding.message
    assert "line 12" in finding.message
