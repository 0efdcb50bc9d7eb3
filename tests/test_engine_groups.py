"""Tensor/pipeline parallelism over a whole KubeRay cluster or LeaderWorkerSet group (VRL006), and KubeRay
workers that never join the cluster."""

from __future__ import annotations

import os

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, find_rule, load_rules, run_rules
from vramlint.scan import scan

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "groups")


def _vrl006(path: str):
    inventory = scan([path])
    assessments = assess(inventory.servers, ResolveOptions(allow_network=False))
    rules = [find_rule(load_rules(), "VRL006")]
    ctx = RuleContext(rule_options={}, traffic=TrafficProfile())
    return inventory, run_rules(assessments, rules, ctx)


def _variant(tmp_path, fixture: str, *pairs: tuple[str, str]) -> str:
    text = open(os.path.join(HERE, fixture), encoding="utf-8").read()
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / fixture
    path.write_text(text)
    return str(path)


def _line(path: str, needle: str) -> int:
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def test_tp_over_a_ray_head_and_worker_with_one_gpu_each_is_fine():
    inventory, findings = _vrl006(os.path.join(HERE, "raycluster-tp2.yaml"))
    [server] = [s for s in inventory.servers if s.args.get("tensor_parallel_size") == 2]
    assert server.engine_group is not None and server.engine_group.gpus == 2
    assert [f for f in findings if f.level == "error"] == []


def test_a_ray_cluster_short_even_as_a_whole_is_an_error(tmp_path):
    path = _variant(tmp_path, "raycluster-tp2.yaml", ("--tensor-parallel-size 2", "--tensor-parallel-size 4"))
    _inventory, findings = _vrl006(path)
    [error] = [f for f in findings if f.level == "error"]
    assert "needs 4 GPUs" in error.message and "Ray cluster gives the engine 2" in error.message
    assert error.location.line == _line(path, "--tensor-parallel-size 4")


def test_worker_replicas_and_rayStartParams_count(tmp_path):
    # three workers: 1 + 3 GPUs; the head's num-gpus 0 hides its GPU from Ray
    path = _variant(tmp_path, "raycluster-tp2.yaml", ("  - replicas: 1\n    minReplicas: 1\n    maxReplicas: 1",
                                                     "  - replicas: 3\n    minReplicas: 1\n    maxReplicas: 5"),
                    ("--tensor-parallel-size 2", "--tensor-parallel-size 4"),
                    ("      block: 'false'", "      block: 'false'\n      num-gpus: '0'"))
    inventory, findings = _vrl006(path)
    group = next(s.engine_group for s in inventory.servers if s.engine_group is not None)
    assert group.gpus == 3
    [error] = [f for f in findings if f.level == "error"]
    assert "gives the engine 3" in error.message


def test_worker_without_command_under_overwrite_annotation_never_joins(tmp_path):
    path = _variant(tmp_path, "raycluster-tp2.yaml",
                    ('          command: ["/bin/bash", "-lc", "--"]\n          args: ["ulimit -n 65536; '
                     '$KUBERAY_GEN_RAY_START_CMD;"]\n', ""))
    _inventory, findings = _vrl006(path)
    [error] = [f for f in findings if f.level == "error"]
    assert "needs 2 GPUs" in error.message and "gives the engine 1" in error.message
    assert "never joins" in error.message and "vllm/vllm-openai:v0.8.5" in error.message
    # with TP 1 the engine does not need the worker: a warning on the worker's container
    path = _variant(tmp_path, "raycluster-tp2.yaml",
                    ('          command: ["/bin/bash", "-lc", "--"]\n          args: ["ulimit -n 65536; '
                     '$KUBERAY_GEN_RAY_START_CMD;"]\n', ""),
                    ("--tensor-parallel-size 2", "--tensor-parallel-size 1"))
    _inventory, findings = _vrl006(path)
    [warning] = findings
    assert warning.level == "warning" and "never joins" in warning.message
    assert warning.location.line == _line(path, "- name: ray-worker")


def test_worker_without_command_joins_when_kuberay_writes_the_command(tmp_path):
    # no annotation: KubeRay writes `ray start` for the worker itself
    path = _variant(tmp_path, "raycluster-tp2.yaml",
                    ('  annotations:\n    ray.io/overwrite-container-cmd: "true"\n', ""),
                    ('          command: ["/bin/bash", "-lc", "--"]\n          args: ["ulimit -n 65536; '
                     '$KUBERAY_GEN_RAY_START_CMD;"]\n', ""))
    _inventory, findings = _vrl006(path)
    assert findings == []


def test_lws_group_gpus_are_leader_plus_workers(tmp_path):
    path = os.path.join(HERE, "lws-tp8-pp2.yaml")
    inventory, findings = _vrl006(path)
    [server] = [s for s in inventory.servers if s.args.get("tensor_parallel_size") == 8]
    assert server.engine_group.gpus == 16
    assert [f for f in findings if f.level == "error"] == []
    short = _variant(tmp_path, "lws-tp8-pp2.yaml", ("--pipeline-parallel-size 2", "--pipeline-parallel-size 3"))
    _inventory, findings = _vrl006(short)
    [error] = [f for f in findings if f.level == "error"]
    assert "needs 24 GPUs" in error.message and "LeaderWorkerSet group gives the engine 16" in error.message
    grown = _variant(tmp_path, "lws-tp8-pp2.yaml", ("--pipeline-parallel-size 2", "--pipeline-parallel-size 3"),
                     ("    size: 2", "    size: 3"))
    assert [f for f in _vrl006(grown)[1] if f.level == "error"] == []


def _custom_command_notes(path: str) -> list:
    inventory = scan([path])
    return [p for p in inventory.problems if "custom command" in p.message]


def test_a_worker_that_only_joins_the_leaders_ray_cluster_is_not_an_unchecked_server(tmp_path):
    # vLLM's multi-node-serving.sh `worker` runs `ray start --address=<leader> --block` and nothing else: the pod
    # gives its GPUs to the leader's engine (VRL006 counts them), it has no vLLM command line of its own to check
    path = os.path.join(HERE, "lws-tp8-pp2.yaml")
    assert _custom_command_notes(path) == []
    worker = "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)"
    direct = _variant(tmp_path, "lws-tp8-pp2.yaml", (worker, "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"))
    assert _custom_command_notes(direct) == []


def test_a_worker_that_runs_something_besides_joining_ray_is_still_said(tmp_path):
    worker = "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)"
    for command in (worker + "; python3 /app/launch.py", "bash /opt/start-vllm.sh",
                    "ray start --head --port=6379 --block"):
        path = _variant(tmp_path, "lws-tp8-pp2.yaml", (worker, command))
        [note] = _custom_command_notes(path)
        assert note.level == "note" and note.line == _line(path, "name: vllm-worker")


_NO_WORKER_COMMAND = ('          command: ["/bin/bash", "-lc", "--"]\n          args: ["ulimit -n 65536; '
                      '$KUBERAY_GEN_RAY_START_CMD;"]\n', "")


def test_a_short_ray_cluster_is_worded_as_the_version_behaves(tmp_path):
    # vLLM 0.6.5+ (ray_utils.initialize_ray_cluster) only warns that the placement group is short, then
    # `_wait_until_pg_ready` waits PG_WAIT_TIMEOUT (1800 s) before it raises; up to 0.6.4 it raised at once
    path = _variant(tmp_path, "raycluster-tp2.yaml", _NO_WORKER_COMMAND)
    [error] = [f for f in _vrl006(path)[1] if f.level == "error"]
    assert "waits for a Ray placement group of 2 GPUs" in error.message and "after 1800 s" in error.message
    assert "as a warning" in error.message and "stops at start-up" not in error.message
    path = _variant(tmp_path, "raycluster-tp2.yaml", _NO_WORKER_COMMAND,
                    ("vllm/vllm-openai:v0.8.5", "vllm/vllm-openai:v0.6.3"))
    [error] = [f for f in _vrl006(path)[1] if f.level == "error"]
    assert "stops at start-up" in error.message and "1800" not in error.message


_NO_SHM = [("          volumeMounts:\n          - mountPath: /dev/shm\n            name: dshm\n", ""),
           ("        volumes:\n        - name: dshm\n          emptyDir:\n            medium: Memory", "        volumes: []")]


def _vrl008(path: str):
    inventory = scan([path])
    assessments = assess(inventory.servers, ResolveOptions(allow_network=False))
    ctx = RuleContext(rule_options={}, traffic=TrafficProfile())
    return inventory, run_rules(assessments, [find_rule(load_rules(), "VRL008")], ctx)


def test_shm_not_needed_when_each_ray_pod_holds_one_rank(tmp_path):
    # audit23 D3: TP 2 over a head and a worker of one GPU each: no two ranks share a pod's /dev/shm (NCCL goes
    # over the network between pods), so the 64 MB default breaks nothing
    inventory, findings = _vrl008(_variant(tmp_path, "raycluster-tp2.yaml", *_NO_SHM))
    [server] = inventory.servers
    assert server.shm is False and server.engine_group is not None
    assert findings == []


def test_shm_warning_counts_the_ranks_of_one_pod(tmp_path):
    path = _variant(tmp_path, "raycluster-tp2.yaml", *_NO_SHM, ("--tensor-parallel-size 2", "--tensor-parallel-size 4"),
                    ('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "2"'))
    _, findings = _vrl008(path)
    [finding] = findings
    assert "runs 4 workers over the Ray cluster's pods, 2 of them in this pod" in finding.message
    assert finding.location.line == _line(path, "--tensor-parallel-size 4")
