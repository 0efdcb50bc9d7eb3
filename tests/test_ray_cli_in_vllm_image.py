"""Ray's CLI as the command of a container whose image carries vLLM (`ray start --head`, `ray start --address`)
starts a Ray node, not vLLM: its words are not vLLM's arguments and `ray` is not a model. The container that
runs `vllm serve` on that cluster is still read."""

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, load_rules, run_rules
from vramlint.scan import scan

COMPOSE = """\
services:
  head:
    image: example/cluster-vllm-node:3.2
    command: >
      ray start --head
      --port=6379
      --dashboard-host=0.0.0.0
      --block
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["0"], capabilities: [gpu]}]
  worker:
    image: example/cluster-vllm-node:3.2
    command: ["ray", "start", "--address=head:6379", "--num-gpus=1", "--block"]
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["1"], capabilities: [gpu]}]
  api:
    image: example/cluster-vllm-node:3.2
    command: >
      vllm serve Qwen/Qwen2.5-1.5B-Instruct --pipeline-parallel-size 2
      --distributed-executor-backend ray --max-model-len 4096
"""


def test_ray_nodes_are_not_read_as_vllm_and_the_server_on_them_is(tmp_path):
    (tmp_path / "docker-compose.yml").write_text(COMPOSE)
    inventory = scan([str(tmp_path)])
    assert [(s.model, s.location.line) for s in inventory.servers] == [("Qwen/Qwen2.5-1.5B-Instruct", 20)]
    assessments = assess(inventory.servers, ResolveOptions(allow_network=False, base_dir=str(tmp_path)))
    ctx = RuleContext(rule_options={}, traffic=TrafficProfile(p99_context_tokens=None, peak_concurrent_requests=None))
    findings = run_rules(assessments, load_rules(), ctx)
    assert not [f for f in findings if f.location.line < 20 and f.rule_id in ("VRL005", "VRL009")]
