"""A flag and its value written as one list item (`- --tensor-parallel-size 2 # two GPUs`) is refused by argparse
(a word with a space is a positional): one error on that line. What vLLM would hit once that is fixed is computed
on the command line the fix writes, never on one without the flag: the budget is at the tensor-parallel size and
context length the author asked for, and no other finding blames the missing flag."""

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, load_rules, run_rules
from vramlint.scan import scan

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coder
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: server
          image: vllm/vllm-openai:v0.8.5
          args:
            - --model=Qwen/Qwen2.5-7B-Instruct
            - {joined}  # the one item
            - --gpu-memory-utilization=0.9
          resources:
            limits:
              nvidia.com/gpu: {gpus}
"""


def _lint(tmp_path, joined: str, gpus: int):
    path = tmp_path / "coder.yaml"
    path.write_text(DEPLOYMENT.format(joined=joined, gpus=gpus))
    [assessment] = assess(scan([str(path)]).servers, ResolveOptions(allow_network=False, base_dir=str(tmp_path)))
    ctx = RuleContext(rule_options={}, traffic=TrafficProfile(p99_context_tokens=None, peak_concurrent_requests=None))
    return assessment, run_rules([assessment], load_rules(), ctx)


def test_a_joined_tensor_parallel_size_is_one_error_and_the_budget_is_at_the_size_asked(tmp_path):
    assessment, findings = _lint(tmp_path, "--tensor-parallel-size 2", 2)
    errors = [f for f in findings if f.level == "error"]
    assert [(f.rule_id, f.location.line) for f in errors] == [("VRL005", 15)]
    assert "unrecognized arguments: --tensor-parallel-size 2" in errors[0].message
    assert assessment.budget is not None and assessment.budget.gpus == 2
    # the two GPUs the pod asks for are the two the fixed command line uses: no "1 GPU sits idle"
    assert not [f for f in findings if f.rule_id == "VRL006"]


def test_a_joined_max_model_len_sets_the_length_the_budget_checks(tmp_path):
    assessment, findings = _lint(tmp_path, "--max-model-len 16384", 1)
    assert [f.location.line for f in findings if f.level == "error"] == [15]
    assert assessment.server.args.get("max_model_len") == 16384
    assert assessment.budget is not None and assessment.budget.max_model_len == 16384
    # Qwen2.5-7B's own 32768 is not what the file asks, so nothing is said of it
    assert not [f for f in findings if "32,768" in f.message or "32768" in f.message]


def test_an_unknown_joined_flag_is_not_read_again(tmp_path):
    assessment, findings = _lint(tmp_path, "--no-such-flag 3", 1)
    assert [(f.rule_id, f.location.line) for f in findings if f.level == "error"] == [("VRL005", 15)]
    assert "no_such_flag" not in assessment.server.args
