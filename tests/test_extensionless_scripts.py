"""A launch script with no extension and no `#!` line (`start-container`), named on the command line: read as the
shell script it is. audit24 held out HM1: such a file of `export` lines and a `docker run ... vllm serve` was read as
YAML (an "invalid YAML" error); a folder's walk still takes no extension-less file."""

from __future__ import annotations

import json

from vramlint.cli import main

SCRIPT = """\
export VLLM_IMAGE=nvcr.io/nvidia/vllm:25.09-py3

# the model of the week
export MODEL=Qwen/Qwen2.5-7B-Instruct

docker run --rm -it --gpus all --ipc=host -p 8000:8000 \\
  -v $HOME/.cache/huggingface:/root/.cache/huggingface \\
  ${VLLM_IMAGE} \\
  vllm serve ${MODEL} --max-model-len 8192
"""


def _report(args, capsys):
    main(["check", *map(str, args), "--offline", "--format", "json"])
    return json.loads(capsys.readouterr().out)


def test_a_named_script_without_extension_or_shebang_is_read_as_shell(tmp_path, capsys):
    (tmp_path / "start-container").write_text(SCRIPT)
    report = _report([tmp_path / "start-container"], capsys)
    [server] = report["servers"]
    assert server["image"] == "nvcr.io/nvidia/vllm:25.09-py3" and server["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert server["args"]["max_model_len"] == 8192
    assert not [f for f in report["findings"] if "invalid YAML" in f["message"]]


def test_the_walk_still_reads_no_extensionless_file(tmp_path, capsys):
    (tmp_path / "start-container").write_text(SCRIPT)
    assert _report([tmp_path], capsys)["servers"] == []


def test_an_extensionless_yaml_file_is_still_yaml(tmp_path, capsys):
    (tmp_path / "deploy").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.2\n"
                                     "    command: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\"]\n"
                                     "    # docker run is how we used to start it\n")
    [server] = _report([tmp_path / "deploy"], capsys)["servers"]
    assert server["source_format"] == "compose"
