"""--quantization against the methods each vLLM release has (vramlint/data/vllm_quantization.json): argparse's
"invalid choice" where the parser lists them, ModelConfig's "Unknown quantization method" where it takes any word,
on the line that sets it, wherever the argument comes from; and the generator's reading of vLLM's source."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vramlint.cli import main

HERE = Path(__file__).parent
FIXTURES = os.path.relpath(HERE / "fixtures" / "quantization")
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tools"))


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def vrl005(capsys, name: str) -> dict[int, dict]:
    main(["check", os.path.join(FIXTURES, name), "--offline", "--format", "json", "--select", "VRL005"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    return {f["line"]: f for f in findings}


def line_of(name: str, needle: str) -> int:
    lines = (Path(FIXTURES) / name).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if needle in text)


def test_a_misspelt_method_on_a_pinned_release_is_argparses_refusal_on_its_line(capsys):
    found = vrl005(capsys, "pinned_awq4.yaml")
    finding = found[line_of("pinned_awq4.yaml", "- awq4")]
    assert finding["level"] == "error"
    assert "vLLM 0.10.2 will not start" in finding["message"]
    # 0.10.2 builds the choices from the QuantizationMethods Literal: sorted, with "None" last
    assert "argument --quantization/-q: invalid choice: 'awq4' (choose from 'auto-round', 'awq'," in finding["message"]
    assert "'tpu_int8', 'None')" in finding["message"]
    assert "use --quantization awq" in finding["message"]


def test_each_release_family_refuses_with_its_own_message(capsys):
    name = "compose_methods.yaml"
    found = vrl005(capsys, name)
    old = found[line_of(name, '"mxfp4"')]
    # 0.8.5: choices=[*QUANTIZATION_METHODS, None], in the list's order; the method came with a later release
    assert old["level"] == "error"
    assert "invalid choice: 'mxfp4' (choose from 'aqlm', 'awq', 'deepspeedfp'," in old["message"]
    assert "'torchao', None)" in old["message"]
    assert "vLLM 0.10.1 added it" in old["message"]
    assert "an image of vLLM 0.10.1 or later" in old["message"]
    # argparse tests the word as written; ModelConfig lowercases it only where the parser takes any word
    upper_old = found[line_of(name, '"AWQ"')]
    assert upper_old["level"] == "error" and "invalid choice: 'AWQ'" in upper_old["message"]
    assert line_of(name, "upper-case-new") + 2 not in found
    removed = found[line_of(name, '"bitsandbytes"')]
    assert removed["level"] == "error"
    # the first line names the refused word, vLLM's whole message follows
    assert removed["message"].startswith("vLLM 0.34.0 will not start: Unknown quantization method: bitsandbytes")
    assert "Unknown quantization method: bitsandbytes. Must be one of ['awq'," in removed["message"]
    assert "it was removed after 0.27.0" in removed["message"]
    assert line_of(name, '"awq_marlin"') not in found


def test_a_word_a_plugin_may_register_or_an_assumed_version_is_a_warning(capsys):
    name = "compose_methods.yaml"
    found = vrl005(capsys, name)
    plugin = found[line_of(name, '"acme_w4"')]
    assert plugin["level"] == "warning"
    assert "Unknown quantization method: acme_w4" in plugin["message"]
    assert "register_quantization_config" in plugin["message"]
    assumed = found[line_of(name, '"awq4"')]
    assert assumed["level"] == "warning"
    assert "the newest vramlint knows" in assumed["message"]
    assert "no vLLM release from 0.4.3 to 0.34.0 has it" in assumed["message"]


def test_the_method_in_a_config_file_is_refused_on_the_config_files_line(capsys):
    found = vrl005(capsys, "config_file.yaml")
    finding = found[line_of("config_file.yaml", "quantization: gptq_marln")]
    assert finding["level"] == "error"
    assert "vLLM 0.20.0 will not start: Unknown quantization method: gptq_marln" in finding["message"]
    assert "use --quantization gptq_marlin" in finding["message"]


def test_the_table_covers_the_argument_tables_releases():
    quant = json.loads((ROOT / "vramlint" / "data" / "vllm_quantization.json").read_text())
    args = json.loads((ROOT / "vramlint" / "data" / "vllm_args.json").read_text())
    assert quant["versions"] == args["versions"]
    covered = [i for row in quant["forms"] for i in range(row["v"][0], row["v"][1] + 1)]
    assert covered == list(range(len(quant["versions"])))


def test_a_run_without_quantization_does_not_load_the_table(tmp_path):
    deployment = tmp_path / "d.yaml"
    text = (Path(FIXTURES) / "pinned_awq4.yaml").read_text()
    deployment.write_text(text.replace("            - --quantization\n            - awq4\n", ""))
    code = ("import sys; from vramlint.cli import main; main(['check', sys.argv[1], '--offline']); "
            "print('LOADED' if 'vramlint.vllm_quantization' in sys.modules else 'NOT LOADED', file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, str(deployment)], capture_output=True, text=True,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=False)
    assert "NOT LOADED" in out.stderr


def test_the_generator_reads_each_form_of_vllms_source():
    import gen_vllm_quantization as gen

    assert gen.methods('QUANTIZATION_METHODS = {"awq": AWQConfig, "gptq": GPTQConfig}\n') == ["awq", "gptq"]
    assert gen.methods('QUANTIZATION_METHODS: List[str] = ["fp8", "awq"]\n') == ["fp8", "awq"]
    assert gen.methods('QuantizationMethods = Literal["awq", "fp8"]\n'
                       'QUANTIZATION_METHODS: list[str] = list(get_args(QuantizationMethods))\n') == ["awq", "fp8"]
    listed = "parser.add_argument('--quantization',\n    '-q',\n    choices=[*QUANTIZATION_METHODS, None],\n)\n"
    assert gen.parser_form(listed, []) == "listed"
    kwargs = 'model_group.add_argument("--quantization", "-q",\n    **model_kwargs["quantization"])\n'
    runtime = ("from vllm.model_executor.layers.quantization import QuantizationMethods\n"
               "class ModelConfig:\n    quantization: SkipValidation[Optional[QuantizationMethods]] = None\n")
    assert gen.parser_form(kwargs, [runtime]) == "literal"
    type_checking = ("if TYPE_CHECKING:\n    from vllm.model_executor.layers.quantization import QuantizationMethods\n"
                     "else:\n    QuantizationMethods = Any\n"
                     "class ModelConfig:\n    quantization: SkipValidation[Optional[QuantizationMethods]] = None\n")
    assert gen.parser_form(kwargs, [type_checking]) == "free"
    with_str = "class ModelConfig:\n    quantization: QuantizationMethods | str | None = None\n"
    assert gen.parser_form(kwargs, [with_str]) == "free"
    with pytest.raises(SystemExit):
        gen.parser_form(kwargs, ["class ModelConfig:\n    quantization: Optional[Foo] = None\n"])


def test_the_method_in_helm_values_extra_args_is_refused_on_the_values_line(capsys):
    name = "production_stack_values.yaml"
    found = vrl005(capsys, name)
    finding = found[line_of(name, "extraArgs:")]
    assert finding["level"] == "error"
    assert "vLLM 0.10.2 will not start: argument --quantization/-q: invalid choice: 'awq4'" in finding["message"]
