"""A compose `command:` written as one string: compose interpolates the whole string, then splits it into words
(compose-go types.ShellCommand: go-shellwords after interpolation), so what the variables hold decides the words."""

import json

from vramlint.cli import main
from vramlint.scan import scan

SERVICES = """\
services:
  opts:
    image: vllm/vllm-openai:v0.10.2
    command: >-
      --model Qwen/Qwen2.5-0.5B-Instruct --max-model-len ${MAX_LEN:-4096}
      ${ENGINE_ARGS:-}
  tail:
    image: vllm/vllm-openai:v0.10.2
    command: --model Qwen/Qwen2.5-0.5B-Instruct ${EXTRA_ARGS}
  grouped:
    image: vllm/vllm-openai:v0.10.2
    command: --model Qwen/Qwen2.5-0.5B-Instruct ${EXTRA:---served-model-name "chat bot" --max-model-len 2048}
  kept:
    image: vllm/vllm-openai:v0.10.2
    command: --model Qwen/Qwen2.5-0.5B-Instruct --served-model-name "${NAME:-my chat}"
"""


def _servers(tmp_path, env=""):
    (tmp_path / "compose.yaml").write_text(SERVICES)
    (tmp_path / ".env").write_text(env)
    return {s.name: s for s in scan([str(tmp_path / "compose.yaml")]).servers}


def _errors(tmp_path, capsys):
    code = main(["check", str(tmp_path / "compose.yaml"), "--offline", "--output-format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    return code, [(f["rule"], f["message"]) for f in findings if f["level"] == "error"]


def test_an_unquoted_variable_empty_by_default_is_no_argument(tmp_path, capsys):
    servers = _servers(tmp_path, "EXTRA_ARGS=--enforce-eager\n")
    assert servers["opts"].args == {"max_model_len": 4096}
    assert _errors(tmp_path, capsys) == (0, [])


def test_a_variable_set_empty_in_dotenv_is_no_argument_either(tmp_path, capsys):
    servers = _servers(tmp_path, "EXTRA_ARGS=\nENGINE_ARGS=--enforce-eager\n")
    assert servers["tail"].args == {}
    assert servers["opts"].args == {"max_model_len": 4096, "enforce_eager": True}
    assert _errors(tmp_path, capsys) == (0, [])


def test_quotes_in_a_value_group_words_after_interpolation(tmp_path):
    servers = _servers(tmp_path)
    assert servers["grouped"].args == {"served_model_name": ["chat bot"], "max_model_len": 2048}
    # quotes written around the variable keep its value one word, spaces and all
    assert servers["kept"].args == {"served_model_name": ["my chat"]}
