"""A folder's walk reads the shell scripts that start vLLM (issue 9, audit25: 30 of 62 deploying files were launch
scripts no folder scan reached): `*.sh`, `*.bash`, and extension-less files whose `#!` names a shell, when running
them starts vLLM by the strict rule of `cmdline._argv_names_vllm` (a word in command position, or an argument of a
launcher). Scripts that only mention vLLM (installers, benchmarks, health checks) and libraries of functions are
not read; a script another reading reaches (named, a Dockerfile's CMD, a compose entrypoint) is one server, that
reading's; `walk-scripts: false` turns it off."""

from __future__ import annotations

import json
import os

from vramlint.cli import main

# shaped after a repository's `scripts/serve.sh`: the model defaulted, two GPUs, a long context
SERVE = """\
#!/bin/bash
set -euo pipefail
MODEL=${MODEL:-Qwen/Qwen2.5-7B-Instruct}
export CUDA_VISIBLE_DEVICES=0,1
vllm serve "$MODEL" --tensor-parallel-size 2 --max-model-len 8192 --port 8000
"""

# a `start-server` without an extension, as an ops folder holds: docker run of vLLM's image
START_SERVER = """\
#!/usr/bin/env bash
docker run --gpus all --ipc=host -p 8000:8000 vllm/vllm-openai:v0.8.5 \\
    --model mistralai/Mistral-7B-Instruct-v0.3 --max-model-len 4096
"""

# what a folder's scripts more often are: they name vLLM, and start none
INSTALL = "#!/bin/bash\nset -e\npip install vllm==0.8.5\npython -c 'import vllm; print(vllm.__version__)'\n"
HEALTH = "#!/bin/bash\ncurl -sf http://localhost:8000/v1/models | grep -q vllm && echo 'vllm serve is up'\n"
BENCH = "#!/bin/bash\nvllm bench serve --model Qwen/Qwen2.5-7B-Instruct --num-prompts 100\n"
STOP = "#!/bin/bash\npkill -f 'vllm serve' || true\n"
# a library the launch scripts source: it defines functions and runs none
LIBRARY = """\
# sourced by the launch scripts
start_vllm() {
  vllm serve "$1" --port "${2:-8000}"
}
stop_vllm() { pkill -f "vllm serve"; }
"""


def _run(capsys, monkeypatch, folder, *paths):
    monkeypatch.chdir(folder)
    code = main(["check", *paths, "--offline", "--output-format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _servers(report):
    return sorted((s["file"], s["line"], s["model"]) for s in report["servers"])


def test_the_walk_reads_launch_scripts_that_start_vllm(tmp_path, capsys, monkeypatch):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "serve.sh").write_text(SERVE)
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "start-server").write_text(START_SERVER)
    # no `#!` naming a shell: an extension-less file the walk leaves alone (a Python tool, a text file)
    (tmp_path / "ops" / "serve-py").write_text("#!/usr/bin/env python3\nimport os\nos.system('vllm serve x')\n")
    (tmp_path / "ops" / "NOTES").write_text("run vllm serve facebook/opt-125m on the box\n")
    _, report = _run(capsys, monkeypatch, tmp_path, ".")
    # before: "No vLLM server found in 0 files"
    assert _servers(report) == [("ops/start-server", 2, "mistralai/Mistral-7B-Instruct-v0.3"),
                                ("scripts/serve.sh", 5, "Qwen/Qwen2.5-7B-Instruct")]
    serve = next(s for s in report["servers"] if s["file"] == "scripts/serve.sh")
    assert serve["gpu"]["count"] == 2  # CUDA_VISIBLE_DEVICES, as a named script is read


def test_scripts_that_only_mention_vllm_or_define_functions_are_not_read(tmp_path, capsys, monkeypatch):
    for name, text in (("install.sh", INSTALL), ("health.sh", HEALTH), ("bench.bash", BENCH), ("stop.sh", STOP),
                       ("lib.sh", LIBRARY)):
        (tmp_path / name).write_text(text)
    (tmp_path / "serve.sh").write_text(SERVE)
    _, report = _run(capsys, monkeypatch, tmp_path, ".")
    assert _servers(report) == [("serve.sh", 5, "Qwen/Qwen2.5-7B-Instruct")]  # before: none
    assert {f["file"] for f in report["findings"]} <= {"serve.sh"}  # no note on the others
    # a library named on the command line is read as before (its functions walked at the end)
    _, report = _run(capsys, monkeypatch, tmp_path, "lib.sh")
    assert [s["file"] for s in report["servers"]] == ["lib.sh"]


def test_a_script_named_and_walked_is_one_server(tmp_path, capsys, monkeypatch):
    (tmp_path / "serve.sh").write_text(SERVE)
    for order in ((".", "serve.sh"), ("serve.sh", ".")):
        _, report = _run(capsys, monkeypatch, tmp_path, *order)
        assert _servers(report) == [("serve.sh", 5, "Qwen/Qwen2.5-7B-Instruct")]


def test_a_script_an_image_or_a_compose_service_runs_is_their_server(tmp_path, capsys, monkeypatch):
    # the walk reads each script; the Dockerfile's ENTRYPOINT (the script COPYd) and the compose service's
    # entrypoint (the script mounted) read it with the image's context: one server each, theirs
    (tmp_path / "image").mkdir()
    (tmp_path / "image" / "serve.sh").write_text(SERVE)
    (tmp_path / "image" / "Dockerfile").write_text(
        "FROM vllm/vllm-openai:v0.8.5\nCOPY serve.sh /app/serve.sh\nENTRYPOINT [\"/bin/bash\", \"/app/serve.sh\"]\n")
    (tmp_path / "compose").mkdir()
    (tmp_path / "compose" / "start.sh").write_text("#!/bin/bash\nvllm serve facebook/opt-125m --max-model-len 2048\n")
    (tmp_path / "compose" / "docker-compose.yml").write_text(
        "services:\n  llm:\n    image: vllm/vllm-openai:v0.8.5\n    entrypoint: [\"/bin/bash\", \"/scripts/start.sh\"]\n"
        "    volumes:\n      - ./start.sh:/scripts/start.sh\n")
    _, report = _run(capsys, monkeypatch, tmp_path, ".")
    assert sorted((s["file"], s["kind"]) for s in report["servers"]) == [
        ("compose/docker-compose.yml", "compose service"), ("image/Dockerfile", "Dockerfile")]
    # the script's own reading said nothing that is kept: every finding is on a line the servers were read from
    versions = {s["vllm_version"] for s in report["servers"]}
    assert versions == {"0.8.5"}


def test_walk_scripts_false_reads_only_slurm_jobs(tmp_path, capsys, monkeypatch):
    (tmp_path / "serve.sh").write_text(SERVE)
    (tmp_path / "start-server").write_text(START_SERVER)
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --gres=gpu:1\nvllm serve facebook/opt-125m\n")
    (tmp_path / ".vramlint.yaml").write_text("walk-scripts: false\n")
    _, report = _run(capsys, monkeypatch, tmp_path, ".")
    assert [s["file"] for s in report["servers"]] == ["job.sh"]  # the Slurm job, walked as before
    _, report = _run(capsys, monkeypatch, tmp_path, ".", "serve.sh")  # named: read whatever the setting
    assert sorted(s["file"] for s in report["servers"]) == ["job.sh", "serve.sh"]


def test_a_script_the_walk_cannot_open_is_left_alone(tmp_path, capsys, monkeypatch):
    # a FIFO named as a script, and a link out of the tree: neither opened nor reported, as before
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "serve.sh").write_text(SERVE)
    tree = tmp_path / "tree"
    tree.mkdir()
    os.mkfifo(tree / "fifo-server")
    os.symlink(outside / "serve.sh", tree / "linked.sh")
    os.symlink(outside / "serve.sh", tree / "linked-server")
    _, report = _run(capsys, monkeypatch, tree, ".")
    assert report["servers"] == [] and report["findings"] == []


def test_which_scripts_start_vllm_by_the_walk_rule():
    from vramlint.cmdline import script_runs_vllm

    starts = [
        'X=vllm\n$X serve m\n',  # the command word after the script's own assignment
        'nohup python3 -m vllm.entrypoints.openai.api_server --model m > log 2>&1 &\n',
        'IMG=vllm/vllm-openai:v0.8.5\ndocker run --gpus all "$IMG" --model m\n',
        'serve() { exec vllm serve "$1"; }\nserve m\n',  # a function the script calls
        'tmux send-keys -t s:0.0 "vllm serve $MODEL --port 8000" C-m\n',  # a pane's shell runs it
        'ID=$(docker run -d --gpus all ${VLLM_IMAGE:-vllm/vllm-openai} --model m)\n',  # a substituted run
    ]
    mentions = [
        LIBRARY, INSTALL, HEALTH, BENCH, STOP,
        'echo "start vllm serve by hand"\n',
        'ssh gpu-1 "pip install -U vllm"\n',
        'kubectl apply -f vllm-deployment.yaml\n',
    ]
    assert [script_runs_vllm(t) for t in starts] == [True] * len(starts)
    assert [script_runs_vllm(t) for t in mentions] == [False] * len(mentions)


def test_a_script_not_read_is_said_only_when_it_names_vllm(tmp_path, capsys, monkeypatch):
    # one of the folder's other scripts that cannot be read (not UTF-8, empty) is left alone, as before the walk
    # read scripts; one whose first bytes name vLLM may start a server nobody checks: said, as a named one is
    (tmp_path / "notes.sh").write_bytes(b"#!/bin/bash\necho caf\xe9\n")
    (tmp_path / "empty.sh").write_bytes(b"")
    (tmp_path / "serve.sh").write_bytes(b"#!/bin/bash\n# caf\xe9\nvllm serve facebook/opt-125m\n")
    _, report = _run(capsys, monkeypatch, tmp_path, ".")
    assert [(f["file"], f["rule"]) for f in report["findings"]] == [("serve.sh", "VRL102")]
    assert "not UTF-8" in report["findings"][0]["message"]
    # bash runs a script with a Latin-1 comment: vramlint's not reading it is an unknown, not a refusal that fails
    # CI (a YAML file that is not UTF-8 is refused by kubectl and Helm, and stays an error)
    assert report["findings"][0]["level"] == "warning"
    assert "bash runs it" in report["findings"][0]["message"]


def test_a_folder_of_extensionless_files_that_are_no_scripts_is_still_said_empty(tmp_path, capsys, monkeypatch):
    # the walk looks at extension-less files for a `#!`: a folder holding only a README and a LICENSE is still the
    # likely wrong folder it was before
    (tmp_path / "README").write_text("how to run vllm serve\n")
    (tmp_path / "LICENSE").write_text("MIT\n")
    monkeypatch.chdir(tmp_path)
    main(["check", ".", "--offline"])
    assert "no YAML file in this folder" in capsys.readouterr().err
