"""A dotenv or TOML file named on the command line (`vramlint check $(git ls-files)`) is no YAML: it is passed
over with the reason instead of an "invalid YAML" error, and a compose file's `env_file:` still reads it."""

from __future__ import annotations

import json

import pytest

from vramlint.cli import main

# a second `KEY=value` line after a comment is where a YAML reading of a dotenv file fails
_DOTENV = "# served model\nVLLM_MODEL=Qwen/Qwen2.5-7B-Instruct\n# context\nMAX_MODEL_LEN=16384\nGPU_UTIL=0.9\n"
_TOML = '[server]\nmodel = "Qwen/Qwen2.5-7B-Instruct"\n\n[server.vllm]\nmax_model_len = 16384\n'


def _run(capsys, *paths):
    code = main(["check", *map(str, paths), "--offline", "--output-format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name,text,reason", [
    (".env", _DOTENV, "a dotenv file"),
    (".env.example", _DOTENV, "a dotenv file"),
    ("default.env", _DOTENV, "a dotenv file"),
    ("vllm.env.example", _DOTENV, "a dotenv file"),
    ("config.example.toml", _TOML, "a TOML file"),
])
def test_a_named_dotenv_or_toml_file_is_skipped_not_an_invalid_yaml_error(tmp_path, capsys, name, text, reason):
    path = tmp_path / name
    path.write_text(text)
    code, report = _run(capsys, path)
    assert code == 0
    assert report["findings"] == []
    assert [s["reason"].split(":")[0] for s in report["skipped"]] == [reason]


@pytest.mark.parametrize("name", ["values.env.yaml", "prod.env.yml", "start.env.sh"])
def test_yaml_and_scripts_with_env_in_their_name_are_still_read(tmp_path, capsys, name):
    path = tmp_path / name
    if name.endswith(".sh"):
        path.write_text("#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size abc\n")
    else:
        path.write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.9.2\n"
                        "    command: --model Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size abc\n")
    code, report = _run(capsys, path)
    assert report["skipped"] == []
    assert report["summary"]["files_scanned"] == 1
    assert any(f["rule"] == "VRL005" for f in report["findings"])


def test_the_compose_env_file_still_reads_the_dotenv_named_beside_it(tmp_path, capsys):
    (tmp_path / "vllm.env").write_text("VLLM_TP=abc\n")
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.9.2\n    env_file: vllm.env\n"
        "    command: --model Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size ${VLLM_TP}\n")
    _, with_dotenv = _run(capsys, tmp_path / "compose.yaml", tmp_path / "vllm.env")
    _, alone = _run(capsys, tmp_path / "compose.yaml")
    assert with_dotenv["findings"] == alone["findings"]
    assert [s["reason"].split(":")[0] for s in with_dotenv["skipped"]] == ["a dotenv file"]
