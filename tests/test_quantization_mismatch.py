"""--quantization against the checkpoint's own quantization_config (ModelConfig._verify_quantization): a method no
override maps the checkpoint to is refused, on the flag's line; the Marlin, BitBLAS, MoE-WNA16... variants that
take such a checkpoint are not."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vramlint import gpus
from vramlint.budget import compute_budget
from vramlint.cli import main
from vramlint.model import ModelInfo

HERE = Path(__file__).parent
FIXTURE = os.path.relpath(HERE / "fixtures" / "quantization_mismatch" / "awq-checkpoint.yaml")

AWQ_7B = dict(name="example/qwen-7b-awq", source="test", architecture="Qwen2ForCausalLM", num_layers=28,
              hidden_size=3584, num_attention_heads=28, num_kv_heads=4, head_dim=128, vocab_size=152064,
              intermediate_size=18944, max_position_embeddings=32768, torch_dtype="float16", quantization="awq",
              quant_bits=4, param_count=7615616512, max_len_key="max_position_embeddings")


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def errors(flag, quantization="awq", version="0.19.0", gpu="L4"):
    model = ModelInfo(**{**AWQ_7B, "quantization": quantization})
    args = {"max_model_len": 8192, **({"quantization": flag} if flag else {})}
    return compute_budget(model, gpus.lookup(gpu), args, {}, version, 1).errors


def test_a_method_of_another_format_is_refused_with_vllms_sentence():
    (err,) = [e for e in errors("gptq") if e["code"] == "quantization-mismatch"]
    assert err["message"] == ("Quantization method specified in the model config (awq) does not match the "
                              "quantization method specified in the `quantization` argument (gptq).")
    assert err["arg"] == "quantization"
    assert [e["code"] for e in errors("fp8")][0] == "quantization-mismatch"
    assert "quantization-mismatch" in [e["code"] for e in errors("gptq_marlin")]  # the GPTQ Marlin kernels need GPTQ
    assert "quantization-mismatch" in [e["code"] for e in errors("awq", quantization="gptq")]


def test_overrides_that_take_the_checkpoint_are_not():
    for flag in ("awq", "AWQ_Marlin", "awq_marlin", "moe_wna16", None):
        assert "quantization-mismatch" not in [e["code"] for e in errors(flag)], flag
    for flag in ("gptq_marlin", "marlin", "gptq_bitblas"):
        assert "quantization-mismatch" not in [e["code"] for e in errors(flag, quantization="gptq")], flag
    # an unquantized checkpoint takes --quantization fp8 (quantized while loading): nothing to compare
    assert "quantization-mismatch" not in [e["code"] for e in errors("fp8", quantization=None)]
    # a checkpoint format whose overrides are not all read (ModelOpt) is not checked
    assert "quantization-mismatch" not in [e["code"] for e in errors("fp8", quantization="modelopt")]


def test_a_word_the_release_does_not_have_is_left_to_the_argument_check():
    assert "quantization-mismatch" not in [e["code"] for e in errors("not_a_method")]
    assert "quantization-mismatch" not in [e["code"] for e in errors("humming", version="0.19.0")]


def test_finding_on_the_flag_line(capsys):
    main(["check", FIXTURE, "--offline", "--format", "json", "--select", "VRL005"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    lines = Path(FIXTURE).read_text().splitlines()
    flag_line = next(i for i, text in enumerate(lines, 1) if "--quantization" in text)
    (finding,) = findings
    assert finding["line"] == flag_line and finding["level"] == "error"
    assert "--quantization gptq, but Qwen/Qwen2.5-7B-Instruct-AWQ is quantized with awq" in finding["message"]
