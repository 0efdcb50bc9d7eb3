"""Slurm job scripts are found (audit23 M1, D4): a folder's walk reads `*.sbatch` / `*.slurm` files and the shell
scripts whose first lines are `#SBATCH` directives (other scripts only when they start vLLM: walk-scripts), and a
script's `sbatch [OPTIONS] JOB` is followed into JOB, read with the command line's options over its directives
(sbatch reads them so) and the variables `--export` gives the job. A job script is read once, inside the
scanned tree only: one outside it, or not a regular file, is said on the line and never read."""

from __future__ import annotations

import json
import os

import pytest

from vramlint.cli import main

# shaped after a university cluster's job: two A100 nodes asked for in the directives, Ray across them
JOB = """\
#!/bin/bash
#SBATCH -J vllm
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:2
#SBATCH --time=12:00:00

MODEL=${MODEL:-Qwen/Qwen2.5-1.5B-Instruct}
vllm serve "${MODEL}" --tensor-parallel-size 2 --max-model-len 8192
"""

# the login node's submit wrapper: the job's id kept from `$(sbatch --parsable ...)`, the job script named from
# the wrapper's own folder, GPUs and model given on the command line
SUBMIT = """\
#!/bin/bash
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
JOB_FILE="${HERE}/jobs/serve.sbatch"
NODES=1
GRES="gpu:a100:4"

echo "submitting ${JOB_FILE}"
ID=$(sbatch --parsable \\
    --nodes="${NODES}" \\
    --gres="${GRES}" \\
    --export="ALL,MODEL=Qwen/Qwen2.5-7B-Instruct" \\
    "${JOB_FILE}")
echo "job ${ID}"
"""


def _run(capsys, monkeypatch, folder, *paths):
    monkeypatch.chdir(folder)
    code = main(["check", *paths, "--offline", "--output-format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["serve.sbatch", "serve.slurm", "serve_job.sh"])
def test_a_folder_walk_reads_a_slurm_job_script(tmp_path, capsys, monkeypatch, name):
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / name).write_text(JOB)
    _, report = _run(capsys, monkeypatch, tmp_path, ".")
    [server] = report["servers"]  # before: "No vLLM server found in 0 files"
    assert (server["file"], server["line"], server["model"]) == (f"jobs/{name}", 8, "Qwen/Qwen2.5-1.5B-Instruct")
    assert server["gpu"]["count"] == 2 and server["gpu"]["evidence"].startswith("#SBATCH --gres=gpu:a100:2")


def test_the_walk_reads_no_other_script_as_a_slurm_job(tmp_path, capsys, monkeypatch):
    # a launch script with no #SBATCH header is no job: with walk-scripts off it is read only when named, as
    # before; a #SBATCH after the first command is no directive (sbatch stops at the first command), so no Slurm
    # job either (with walk-scripts on, both are read as the launch scripts they are: tests/test_walk_scripts.py)
    (tmp_path / "start.sh").write_text("#!/bin/bash\nvllm serve facebook/opt-125m\n")
    (tmp_path / "late.sh").write_text("#!/bin/bash\necho hi\n#SBATCH --gres=gpu:1\nvllm serve facebook/opt-125m\n")
    (tmp_path / "other.sbatch").write_text("#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py\n")
    _, report = _run(capsys, monkeypatch, tmp_path, ".")
    assert sorted((s["file"], s["kind"]) for s in report["servers"]) == [("late.sh", "script"), ("start.sh", "script")]
    (tmp_path / ".vramlint.yaml").write_text("walk-scripts: false\n")
    _, report = _run(capsys, monkeypatch, tmp_path, ".")
    assert report["servers"] == [] and report["findings"] == []
    _, report = _run(capsys, monkeypatch, tmp_path, ".", "start.sh")
    assert [s["file"] for s in report["servers"]] == ["start.sh"]


def _submit_tree(root):
    (root / "jobs").mkdir()
    (root / "jobs" / "serve.sbatch").write_text(JOB)
    (root / "submit.sh").write_text(SUBMIT)


def test_sbatch_in_a_script_is_followed_with_its_options_over_the_directives(tmp_path, capsys, monkeypatch):
    _submit_tree(tmp_path)
    _, report = _run(capsys, monkeypatch, tmp_path, "submit.sh")
    [server] = report["servers"]  # before: "No vLLM server found in 1 file", no note
    assert (server["file"], server["line"]) == ("jobs/serve.sbatch", 8)
    assert server["model"] == "Qwen/Qwen2.5-7B-Instruct"  # --export's MODEL over the script's default
    # the command line's --gres (line 12 of submit.sh) over the #SBATCH --gres=gpu:a100:2 of the job
    assert (server["gpu"]["count"], server["gpu"]["evidence"]) == (4, "sbatch --gres=gpu:a100:4 (Slurm: GPUs of "
                                                                      "each node)")
    [idle] = [f for f in report["findings"] if f["rule"] == "VRL006"]
    assert (idle["file"], idle["line"]) == ("submit.sh", 12)  # 4 GPUs asked, TP 2 uses 2
    assert any("as `sbatch` submits it at submit.sh:10" in note for note in server["notes"])


def test_a_job_read_alone_and_as_submitted_is_one_server(tmp_path, capsys, monkeypatch):
    _submit_tree(tmp_path)
    _, report = _run(capsys, monkeypatch, tmp_path, ".", "submit.sh")
    [server] = report["servers"]
    assert server["gpu"]["count"] == 4


def test_a_job_script_outside_the_tree_is_said_on_its_line_and_not_read(tmp_path, capsys, monkeypatch):
    (tmp_path / "repo").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "serve.sbatch").write_text(JOB)
    (tmp_path / "repo" / "submit.sh").write_text("#!/bin/bash\n# submits the vLLM job\n"
                                                 "sbatch --gres=gpu:4 ../elsewhere/serve.sbatch\n")
    _, report = _run(capsys, monkeypatch, tmp_path / "repo", "submit.sh")
    assert report["servers"] == []
    [said] = [f for f in report["findings"] if "job script" in f["message"]]
    assert (said["file"], said["line"], said["column"]) == ("submit.sh", 3, 21)
    assert "outside" in said["message"] and "not read" in said["message"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_job_script_that_is_a_fifo_is_never_opened(tmp_path, capsys, monkeypatch):
    os.mkfifo(tmp_path / "serve.sbatch")
    (tmp_path / "submit.sh").write_text("#!/bin/bash\nsbatch serve.sbatch  # vllm\n")
    _, report = _run(capsys, monkeypatch, tmp_path, "submit.sh")  # a read would block: the test would hang
    [said] = [f for f in report["findings"] if "job script" in f["message"]]
    assert said["level"] == "warning" and "not read" in said["message"]


def test_jobs_that_submit_each_other_are_read_once_each(tmp_path, capsys, monkeypatch):
    (tmp_path / "a.sbatch").write_text("#!/bin/bash\n#SBATCH --gres=gpu:1\nsbatch b.sbatch\n"
                                       "vllm serve facebook/opt-125m\n")
    (tmp_path / "b.sbatch").write_text("#!/bin/bash\n#SBATCH --gres=gpu:1\nsbatch --dependency=afterok:1 a.sbatch\n"
                                       "vllm serve facebook/opt-350m\n")
    _, report = _run(capsys, monkeypatch, tmp_path, "a.sbatch")
    assert sorted((s["file"], s["model"]) for s in report["servers"]) == [
        ("a.sbatch", "facebook/opt-125m"), ("b.sbatch", "facebook/opt-350m")]


def test_a_job_named_at_run_time_is_said_when_the_script_names_vllm(tmp_path, capsys, monkeypatch):
    (tmp_path / "submit.sh").write_text("#!/bin/bash\n# vLLM server\nsbatch --nodes=2 \"$1\"\n")
    _, report = _run(capsys, monkeypatch, tmp_path, "submit.sh")
    [said] = [f for f in report["findings"] if "Slurm job" in f["message"]]
    assert (said["level"], said["line"]) == ("note", 3) and "not read" in said["message"]


def test_wrap_and_unknown_options_are_not_taken_for_the_script():
    from vramlint.cmdline import Token
    from vramlint.extract.slurm import sbatch_submission

    def words(*texts):
        return [Token(t, None) for t in texts]

    wrapped = sbatch_submission(words("--wrap", "vllm serve m", "-N", "1"))
    assert (wrapped.script, wrapped.wrap.text, wrapped.options[0][:2]) == (None, "vllm serve m", ("-N", "1"))
    sub = sbatch_submission(words("-p", "gpu", "--parsable", "-N2", "--mail-type", "END", "job.sh", "x"))
    assert (sub.script.text, [a.text for a in sub.args], sub.options[0][:2]) == ("job.sh", ["x"], ("-N", "2"))
    assert sbatch_submission(words("-Y", "job.sh")).script is None  # no option of sbatch's: the script unknown


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_scripts_the_walk_cannot_look_into_are_left_alone_as_before(tmp_path, capsys, monkeypatch):
    # a script is no file of a kind the walk reads unless its head says Slurm job: a FIFO or a link out of the
    # tree named `.sh` is neither opened nor reported, as before
    (tmp_path / "repo").mkdir()
    os.mkfifo(tmp_path / "repo" / "pipe.sh")
    (tmp_path / "job.sh").write_text(JOB)
    os.symlink(tmp_path / "job.sh", tmp_path / "repo" / "linked.sh")
    _, report = _run(capsys, monkeypatch, tmp_path / "repo", ".")
    assert report["servers"] == [] and report["skipped"] == []


# a login-node helper that submits its job from a here-document and a one-line `--wrap`, options abbreviated as
# getopt_long lets sbatch take them
STDIN_SUBMIT = """\
#!/bin/bash
MODEL=Qwen/Qwen2.5-14B-Instruct
sbatch --job-name=vllm-serve -N 1 --gpus-per-n=2 <<EOF
#!/bin/bash
#SBATCH --time=04:00:00
#SBATCH --partition=gpu
module load cuda/12.4
vllm serve $MODEL --tensor-parallel-size \\$SLURM_GPUS_PER_NODE --port 8000
EOF
sbatch --gres=gpu:4 --wr "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 4"
"""


def test_a_job_script_on_stdin_and_a_wrapped_command_are_servers(tmp_path, capsys, monkeypatch):
    (tmp_path / "submit.sh").write_text(STDIN_SUBMIT)
    _, report = _run(capsys, monkeypatch, tmp_path, "submit.sh")
    by_model = {s["model"]: s for s in report["servers"]}  # before: no server, a note on each sbatch
    heredoc, wrapped = by_model["Qwen/Qwen2.5-14B-Instruct"], by_model["meta-llama/Llama-3.1-8B-Instruct"]
    # the unquoted here-document: $MODEL is the submitting shell's; \$SLURM_GPUS_PER_NODE the job's, which the
    # (abbreviated) --gpus-per-n=2 sets
    assert (heredoc["file"], heredoc["line"]) == ("submit.sh", 8)
    assert heredoc["args"]["tensor_parallel_size"] == 2 and heredoc["gpu"]["count"] == 2
    assert (wrapped["file"], wrapped["line"]) == ("submit.sh", 10)
    assert wrapped["args"]["tensor_parallel_size"] == 4 and wrapped["gpu"]["count"] == 4
    assert not [f for f in report["findings"] if "cannot tell" in f["message"]]


def test_sbatch_takes_a_unique_prefix_of_a_long_option_and_refuses_an_ambiguous_one():
    from vramlint.cmdline import Token
    from vramlint.extract.slurm import read_sbatch, sbatch_submission

    def words(*texts):
        return [Token(t, None) for t in texts]

    sub = sbatch_submission(words("--node", "2", "job.sh"))  # --nodefile, --nodelist, --nodes
    assert sub.script is None and "ambiguous" in sub.unknown
    sub = sbatch_submission(words("--gpus-per-no=8", "--nodes", "2", "job.sh"))
    assert [o[:2] for o in sub.options] == [("--gpus-per-node", "8"), ("--nodes", "2")]
    request = read_sbatch("#!/bin/bash\n#SBATCH --gpus-per-n 4\n#SBATCH -N2\nvllm serve m\n", "job.sh")
    assert (request.gpus_per_node, request.nodes) == (4, 2)
