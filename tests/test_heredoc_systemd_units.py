"""A systemd unit a shell script installs with a here-document (`sudo tee /etc/systemd/system/X.service >
/dev/null <<EOF`, `cat > X.service <<EOF`) is read by the systemd reader, on the script's lines (audit23 HM1, D10).
The shell's expansions come first (an unquoted delimiter expands `$X`, `\\$X` stays `$X`; a quoted one expands
nothing); what is left of `$X` / `${X}` is systemd's, from the unit's Environment= lines."""

from __future__ import annotations

import json

from vramlint.cli import main

# shaped after a DGX-cluster installer: the image and model in the script's variables, the unit's ExecStart= a
# `docker run` of the NGC vLLM image, its model from the unit's own Environment=
INSTALL = """\
#!/bin/bash
# Install the vLLM coder service on the master node.
set -e
VLLM_IMAGE="nvcr.io/nvidia/vllm:25.12-py3"
VLLM_MODEL="Qwen/Qwen2.5-Coder-7B-Instruct"

docker pull "$VLLM_IMAGE"

sudo tee /etc/systemd/system/vllm-coder.service > /dev/null << SCRIPT
[Unit]
Description=vLLM coder server

[Service]
Environment=SERVED=$VLLM_MODEL
ExecStart=/usr/bin/docker run --rm --name vllm-coder --gpus all --ipc=host -p 8000:8000 \\
    $VLLM_IMAGE vllm serve \\$SERVED --tensor-parallel-size 2 \\
    --gpu-memory-utilization 0.80 --max-model-len 16384
Restart=always

[Install]
WantedBy=multi-user.target
SCRIPT

sudo systemctl daemon-reload
sudo systemctl enable --now vllm-coder
"""


def _only_server(capsys, monkeypatch, folder, name, text):
    (folder / name).write_text(text)
    monkeypatch.chdir(folder)
    main(["check", name, "--offline", "--output-format", "json"])
    [server] = json.loads(capsys.readouterr().out)["servers"]
    return server


def test_a_unit_written_with_sudo_tee_is_read_on_the_script_lines(tmp_path, capsys, monkeypatch):
    server = _only_server(capsys, monkeypatch, tmp_path, "deploy-master.sh", INSTALL)  # before: no server
    assert (server["file"], server["line"], server["name"]) == ("deploy-master.sh", 16, "vllm-coder")
    assert server["image"] == "nvcr.io/nvidia/vllm:25.12-py3"  # the script's $VLLM_IMAGE, expanded by the shell
    assert server["model"] == "Qwen/Qwen2.5-Coder-7B-Instruct"  # `\$SERVED`: systemd's, from Environment=
    assert server["args"]["tensor_parallel_size"] == 2 and server["args"]["max_model_len"] == 16384
    assert any("/etc/systemd/system/vllm-coder.service" in note for note in server["notes"])


def test_a_quoted_delimiter_leaves_every_variable_to_systemd(tmp_path, capsys, monkeypatch):
    # the script's own MODEL is not the unit's: `<<'EOF'` writes `${MODEL}` as it is, systemd substitutes its own
    server = _only_server(capsys, monkeypatch, tmp_path, "install.sh", (
        "#!/bin/sh\nMODEL=facebook/opt-125m\ncat > vllm.service <<'EOF'\n[Service]\nEnvironment=MODEL=facebook/opt-350m\n"
        "Environment=CUDA_VISIBLE_DEVICES=0,1\nExecStart=/opt/venv/bin/vllm serve ${MODEL} --tensor-parallel-size 2\n"
        "EOF\nsystemctl enable --now vllm\n"))
    assert (server["line"], server["model"], server["name"]) == (7, "facebook/opt-350m", "vllm")
    assert server["gpu"]["count"] == 2  # the unit's CUDA_VISIBLE_DEVICES


def test_an_unknown_shell_variable_in_the_unit_stays_unknown(tmp_path, capsys, monkeypatch):
    server = _only_server(capsys, monkeypatch, tmp_path, "install.sh", (
        "#!/bin/sh\ncat > /etc/systemd/system/vllm.service <<EOF\n[Service]\n"
        "ExecStart=/usr/local/bin/vllm serve $1 --max-model-len 4096\nEOF\n"))
    assert server["model"] is None and server["args"]["max_model_len"] == 4096


def test_tee_writes_its_file_whatever_its_output_does(tmp_path, capsys, monkeypatch):
    # `tee FILE > /dev/null`: the text is the file's; a manifest written so is read as before it was
    server = _only_server(capsys, monkeypatch, tmp_path, "apply.sh", (
        "#!/bin/sh\ntee vllm.yaml > /dev/null <<EOF\napiVersion: v1\nkind: Pod\nmetadata:\n  name: vllm\nspec:\n"
        "  containers:\n    - name: vllm\n      image: vllm/vllm-openai:v0.9.2\n"
        "      args: [--model, facebook/opt-125m]\nEOF\nkubectl apply -f vllm.yaml\n"))
    assert (server["model"], server["line"]) == ("facebook/opt-125m", 9)  # the container
