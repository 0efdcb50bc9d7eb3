"""The command a launcher prefix runs, read with that program's own options (which take a value, how many operands
come first): `env -u NAME`, `nice -n N`, `stdbuf -o L`, `taskset MASK`, `numactl -N 0`, `sudo -u USER`, `srun`,
`mpirun`, `torchrun -m`, `ssh HOST "..."`, and the shells and variables before them (`bash -lc "$cmd"`, `eval`,
`exec $CMD`). Where the command starts cannot be told (an option the table does not know), nothing is guessed and
the script's one note says so."""

from __future__ import annotations

import pytest

from vramlint.scan import scan

MODEL = "facebook/opt-1.3b"
SERVE = f"vllm serve {MODEL} --max-model-len 3072"
API = f"python3 -m vllm.entrypoints.openai.api_server --model {MODEL} --max-model-len 3072"

READ = [
    f'cmd="{SERVE}"\nbash -lc "$cmd"',
    f'CMD="{SERVE}"\nsh -c "$CMD"',
    f'cmd="{SERVE}"\neval "$cmd"',
    f'CMD="{SERVE}"\nexec $CMD',
    f'exec -a vllm-engine {SERVE}',
    f'ssh gpu-node-3 "{SERVE}"',
    f'ssh -p 2222 -i ~/.ssh/key -o StrictHostKeyChecking=no ops@gpu-node-3 {SERVE}',
    f'srun --ntasks=1 -N 1 --gres gpu:1 --container-image vllm/vllm-openai:v0.9.2 {SERVE}',
    f'srun -n1 -c 8 --overlap --unbuffered {SERVE}',
    f'mpirun -np 1 -x CUDA_VISIBLE_DEVICES --mca btl tcp,self --allow-run-as-root {API}',
    f'mpiexec -n 2 -ppn 1 -genv NCCL_DEBUG INFO {SERVE}',
    f'torchrun --nproc-per-node 1 --master_port=29500 -m vllm.entrypoints.openai.api_server --model {MODEL} '
    '--max-model-len 3072',
    f'python3 -m torch.distributed.run --nnodes 1 -m vllm.entrypoints.openai.api_server --model {MODEL} '
    '--max-model-len 3072',
    f'torchrun --standalone --no-python {SERVE}',
    f'numactl -N 0 -m 0 {SERVE}',
    f'numactl --cpunodebind 1 --membind=1 {SERVE}',
    f'taskset 0xff {SERVE}',
    f'taskset -a -c 0-15 {SERVE}',
    f'nohup nice -n 5 ionice -c 2 -n 0 {SERVE} > engine.log 2>&1 &',
    f'stdbuf -o L -eL {SERVE} | tee engine.log',
    f'env -u CUDA_VISIBLE_DEVICES -C /srv VLLM_LOGGING_LEVEL=DEBUG {SERVE}',
    f'env -S "VLLM_LOGGING_LEVEL=DEBUG {SERVE}"',
    f'sudo -E -u vllm HF_HOME=/data {SERVE}',
    f'gosu vllm {SERVE}',
    f'chrt -r 10 {SERVE}',
    # the program after a prefix known only at run time: `-m` and vLLM's server module say it is an interpreter
    f'exec "$HOME/miniconda3/envs/llm/bin/python" -m vllm.entrypoints.openai.api_server --model {MODEL} '
    '--max-model-len 3072',
    f'PYTHON_BIN=$(command -v python3)\nexec "${{PYTHON_BIN}}" -m vllm.entrypoints.openai.api_server --model {MODEL} '
    '--max-model-len 3072',
    f'nice -n 5 "$VENV/bin/python" -m vllm.entrypoints.openai.api_server --model {MODEL} --max-model-len 3072',
]


@pytest.mark.parametrize("line", READ)
def test_the_command_after_a_launcher_prefix_is_read(tmp_path, line):
    path = tmp_path / "launch.sh"
    path.write_text(f"#!/bin/bash\n{line}\n")
    [server] = scan([str(path)]).servers
    assert server.model == MODEL and server.args["max_model_len"] == 3072


NOT_READ = [
    f"srun --frobnicate 3 {SERVE}",  # an srun option not in srun's table: it may take a value
    f"mpirun --not-an-option x {SERVE}",
    f"torchrun --nproc-per-node 1 serve.py {SERVE}",  # a Python script of its own, which vllm words follow as args
    f"taskset -p 1234 {SERVE}",  # -p: taskset sets a running process's affinity and runs nothing
    f"ionice -p 1234 {SERVE}",
    f"exec $LAUNCH_OPTS {SERVE}",  # an unknown word and no `-m` module after it: an option or the program
]


@pytest.mark.parametrize("line", NOT_READ)
def test_a_prefix_whose_command_cannot_be_told_is_said_once(tmp_path, line):
    path = tmp_path / "launch.sh"
    path.write_text(f"#!/bin/bash\n{line}\n")
    inv = scan([str(path)])
    assert inv.servers == []
    [note] = inv.problems
    assert note.level == "note" and "mentions vLLM" in note.message


def test_a_ssh_command_keeps_the_place_of_each_word(tmp_path):
    path = tmp_path / "launch.sh"
    path.write_text(f"#!/bin/bash\nssh -p 2222 gpu-node-3 {SERVE}\n")
    [server] = scan([str(path)]).servers
    where = server.arg_locations["max_model_len"]
    assert (where.line, where.column) == (2, 1 + len(f"ssh -p 2222 gpu-node-3 vllm serve {MODEL} "))


def test_a_container_command_through_a_launcher_is_read(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(f"""\
apiVersion: v1
kind: Pod
metadata: {{name: engine}}
spec:
  containers:
  - name: engine
    image: vllm/vllm-openai:v0.9.2
    command: [numactl, --cpunodebind, "0", --, stdbuf, -o, L, vllm, serve]
    args: [{MODEL}, --max-model-len, "3072"]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
""")
    [server] = scan([str(path)]).servers
    assert server.model == MODEL and server.args["max_model_len"] == 3072
    assert (server.model_location.line, server.arg_locations["max_model_len"].line) == (9, 9)


def test_a_server_started_over_ssh_does_not_get_this_shells_devices(tmp_path):
    path = tmp_path / "launch.sh"
    path.write_text(f'#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\nssh gpu-node-3 "{SERVE} --tensor-parallel-size 2"\n')
    [server] = scan([str(path)]).servers
    assert server.gpu is None or server.gpu.count is None
    assert [n for n in server.notes if "gpu-node-3" in n and "CUDA_VISIBLE_DEVICES" in n]
    local = tmp_path / "local.sh"
    local.write_text(f"#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\n{SERVE} --tensor-parallel-size 2\n")
    [server] = scan([str(local)]).servers
    assert server.gpu.count == 2


def test_srun_with_a_pyxis_container_image_gives_the_servers_image_and_version(tmp_path):
    path = tmp_path / "job.sh"
    path.write_text(f"#!/bin/bash\n#SBATCH --gres=gpu:2\nsrun --container-image=vllm/vllm-openai:v0.8.5 "
                    f"--container-mounts /data:/data {SERVE} --tensor-parallel-size 2\n")
    [server] = scan([str(path)]).servers
    assert server.image == "vllm/vllm-openai:v0.8.5" and server.vllm_version == "0.8.5"
    assert server.gpu.count == 2
    path.write_text(f"#!/bin/bash\nsrun --container-image /images/engine.sqsh {SERVE}\n")
    [server] = scan([str(path)]).servers
    assert server.image is None and server.vllm_version is None  # a squashfs file has no tag
