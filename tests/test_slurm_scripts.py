"""Slurm batch scripts: the `#SBATCH` directives give each node's GPUs and the node count, and the variables sbatch
sets from them (SLURM_GPUS_PER_NODE, SLURM_JOB_NUM_NODES) are known when the script's `vllm serve` uses them. An
engine on Ray across the nodes is checked against the whole allocation."""

from __future__ import annotations

from vramlint.assess import assess
from vramlint.extract.slurm import read_sbatch
from vramlint.model import ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, find_rule, load_rules, run_rules
from vramlint.scan import scan

RAY_JOB = """#!/bin/bash
#SBATCH --job-name=serve
#SBATCH --nodes={nodes}
#SBATCH --exclusive
#SBATCH --gpus-per-node=8   # one Hopper box each

# start Ray on every node first
srun --nodes=1 --ntasks=1 ray start --head --block &
sleep 30
RAY_ADDRESS="http://127.0.0.1:8265" ray job submit --no-wait -- vllm serve meta-llama/Llama-3.1-8B-Instruct \\
    --tensor-parallel-size $SLURM_GPUS_PER_NODE --pipeline-parallel-size {pp} \\
    --distributed-executor-backend ray --max-model-len 8192
"""


def _vrl006(path: str):
    inventory = scan([path])
    assessments = assess(inventory.servers, ResolveOptions(allow_network=False))
    ctx = RuleContext(rule_options={}, traffic=TrafficProfile())
    return inventory, list(run_rules(assessments, [find_rule(load_rules(), "VRL006")], ctx))


def test_directives_give_gpus_per_node_and_the_variables(tmp_path):
    path = tmp_path / "serve.slurm"
    path.write_text(RAY_JOB.format(nodes=2, pp=2))
    inventory, findings = _vrl006(str(path))
    [server] = inventory.servers
    assert server.args["tensor_parallel_size"] == 8
    assert (server.gpu.count, server.gpu.location.line) == (8, 5)
    assert server.engine_group.gpus == 16
    assert findings == []  # TP 8 x PP 2 = the 16 GPUs of two nodes


def test_an_engine_larger_than_the_allocation_fails_on_its_line(tmp_path):
    path = tmp_path / "serve.slurm"
    path.write_text(RAY_JOB.format(nodes=2, pp=4))
    _, findings = _vrl006(str(path))
    [finding] = findings
    assert finding.level == "error" and "Slurm allocation" in finding.message and "16" in finding.message
    assert finding.location.line == 11


def test_directives_end_at_the_first_command(tmp_path):
    text = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --gres=gpu:a100:4,shard:2\necho hi\n#SBATCH --gpus-per-node=8\n"
    request = read_sbatch(text, "job.sh")
    assert (request.nodes, request.gpus_per_node, request.gpu_type) == (2, 4, "a100")
    assert request.environment() == {"SLURM_JOB_NUM_NODES": "2", "SLURM_NNODES": "2", "SLURM_GPUS_ON_NODE": "4"}


def test_unknown_counts_stay_unknown():
    request = read_sbatch("#SBATCH --nodes=2-4\n#SBATCH --gpus=16\n#SBATCH --gpus-per-node=99999999999\n", "j")
    assert request.nodes is None and request.gpus_per_node is None
    job = read_sbatch("#SBATCH --nodes=1 --gpus=h100:2\n", "j")
    assert (job.nodes, job.gpus_per_node, job.gpu_type) == (1, 2, "h100")
    assert read_sbatch("#!/bin/sh\nvllm serve m\n", "j") is None


def test_without_ray_each_node_is_its_own_engine(tmp_path):
    path = tmp_path / "serve.slurm"
    path.write_text("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=4\n"
                    "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 8 --max-model-len 8192\n")
    inventory, findings = _vrl006(str(path))
    assert inventory.servers[0].engine_group is None
    [finding] = findings
    assert "needs 8 GPUs, but the deployment requests 4 (line 3)" in finding.message
