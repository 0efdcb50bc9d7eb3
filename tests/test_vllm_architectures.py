"""A checkpoint's architecture against the model registry of the vLLM release that serves it
(vramlint/data/vllm_architectures.json): vLLM's refusal where nothing but the registry can run it, a note where a
plugin or the Transformers backend may; in vLLM's order next to the worker's dtype check; and the generator's
reading of the registry source."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from vramlint import gpus
from vramlint.budget import compute_budget
from vramlint.cli import main
from vramlint.model import ModelInfo
from vramlint.vllm_architectures import refusal

HERE = Path(__file__).parent
ROOT = HERE.parent
FIXTURE = os.path.relpath(HERE / "fixtures" / "architectures" / "phi3-old-release.yaml")
sys.path.insert(0, str(ROOT / "tools"))

PHI3 = dict(name="example/phi3-mini", source="test", architecture="Phi3ForCausalLM", num_layers=32, hidden_size=3072,
            num_attention_heads=32, num_kv_heads=32, head_dim=96, vocab_size=32064, intermediate_size=8192,
            max_position_embeddings=4096, torch_dtype="bfloat16", weight_bytes=7642159104,
            max_len_key="max_position_embeddings")


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def table() -> dict:
    return json.loads((ROOT / "vramlint" / "data" / "vllm_architectures.json").read_text())


def releases_with(arch: str) -> list[str]:
    t = table()
    return [t["versions"][i] for first, last in t["archs"].get(arch, []) for i in range(first, last + 1)]


def test_table_is_generated_and_covers_the_argument_tables_releases():
    t = table()
    assert t["generated_by"] == "tools/gen_vllm_architectures.py"
    args_versions = json.loads((ROOT / "vramlint" / "data" / "vllm_args.json").read_text())["versions"]
    assert set(args_versions) <= set(t["versions"])
    # every release's form is stated once, the runs cover the table without gaps
    covered = [i for row in t["forms"] for i in range(row["v"][0], row["v"][1] + 1)]
    assert covered == list(range(len(t["versions"])))
    assert "are not supported for now" in t["forms"][0]["message"]


def test_refusal_where_only_the_registry_decides():
    first = releases_with("Phi3ForCausalLM")[0]
    older = [v for v in table()["versions"] if v not in releases_with("Phi3ForCausalLM")]
    assert older and older[-1] != first
    r = refusal("Phi3ForCausalLM", "0.2.7", "vllm/vllm-openai:v0.2.7")
    assert r["certain"] and r["code"] == "architecture-unsupported" and r["arg"] == "model"
    assert r["message"].startswith("Model architectures ['Phi3ForCausalLM'] are not supported for now.")
    assert r["short"] == f"it does not support Phi3ForCausalLM (added in {first})"
    assert refusal("Phi3ForCausalLM", first) is None
    assert refusal("PhiForCausalLM", "0.2.7") is None


def test_plugins_and_the_transformers_backend_leave_it_uncertain():
    # 0.6.0 loads vllm.general_plugins entry points: only vLLM's own image certainly has none
    own = refusal("NoSuchModelForCausalLM", "0.6.0", "vllm/vllm-openai:v0.6.0")
    custom = refusal("NoSuchModelForCausalLM", "0.6.0", "registry.example.com/team/vllm:0.6.0")
    assert own["certain"] and not custom["certain"] and "plugin" in custom["why"]
    # 0.7.2+ fall back to the Transformers implementation, even of an architecture removed from the registry
    removed = [a for a in ("QWenLMHeadModel",) if releases_with(a) and releases_with(a)[-1] != table()["versions"][-1]]
    assert removed
    last = releases_with("QWenLMHeadModel")[-1]
    after = table()["versions"][table()["versions"].index(last) + 1]
    r = refusal("QWenLMHeadModel", after, "vllm/vllm-openai:v" + after)
    assert not r["certain"] and "Transformers backend" in r["why"] and f"supported up to {last}" in r["message"]


def test_versions_the_table_does_not_hold_say_nothing():
    assert refusal("Phi3ForCausalLM", "0.1.7") is None  # before the table
    assert refusal("SomeFutureForCausalLM", "9.0.0") is None  # newer than its newest release
    assert refusal(None, "0.2.7") is None
    assert refusal("Phi3ForCausalLM", "latest") is None


def test_budget_orders_it_as_vllm_meets_it():
    # 0.2.x - 0.6.2 meet the architecture in get_model, after the worker's bfloat16 check
    t4 = compute_budget(ModelInfo(**PHI3), gpus.lookup("T4"), {"max_model_len": 4096}, {}, "0.2.7", 1,
                        image="vllm/vllm-openai:v0.2.7")
    codes = [e["code"] for e in t4.errors]
    assert codes.index("bf16-unsupported") < codes.index("architecture-unsupported")
    bf16 = t4.errors[codes.index("bf16-unsupported")]["message"]
    assert bf16.endswith("Your Tesla T4 GPU has compute capability 7.5.")  # 0.2.x has no float16 advice yet
    a100 = compute_budget(ModelInfo(**PHI3), gpus.lookup("A100-80GB"), {"max_model_len": 4096}, {}, "0.2.7", 1,
                          image="vllm/vllm-openai:v0.2.7")
    assert [e["code"] for e in a100.errors] == ["architecture-unsupported"] and not a100.starts
    # from 0.6.3 ModelConfig inspects it first (a release before the Transformers fallback)
    unknown = dict(PHI3, architecture="NoSuchModelForCausalLM")
    t4_063 = compute_budget(ModelInfo(**unknown), gpus.lookup("T4"), {"max_model_len": 4096}, {}, "0.6.3", 1,
                            image="vllm/vllm-openai:v0.6.3")
    assert t4_063.errors[0]["code"] == "architecture-unsupported"
    # a release that may run it through Transformers: a note, the budget stands
    newer = compute_budget(ModelInfo(**unknown), gpus.lookup("A100-80GB"), {"max_model_len": 4096}, {}, "0.11.0", 1,
                           image="vllm/vllm-openai:v0.11.0")
    assert "architecture-unsupported" not in [e["code"] for e in newer.errors]
    assert any("NoSuchModelForCausalLM" in n and "Transformers backend" in n for n in newer.notes)


def test_finding_on_the_model_line_per_gpu_of_the_fleet(capsys):
    main(["check", FIXTURE, "--offline", "--format", "json", "--select", "VRL005"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    lines = Path(FIXTURE).read_text().splitlines()
    model_line = next(i for i, text in enumerate(lines, 1) if "Phi-3-mini" in text)
    arch = [f for f in findings if "Phi3ForCausalLM" in f["message"]]
    assert len(arch) == 1 and arch[0]["line"] == model_line and arch[0]["level"] == "error"
    assert "vLLM 0.3.3 will not start: it does not support Phi3ForCausalLM (added in" in arch[0]["message"]
    assert any("Bfloat16" in f["message"] and "T4" in f["message"] for f in findings)
    # the same checkpoint on 0.4.2, which has it: no refusal of the architecture
    assert all("vLLM 0.4.2 " not in f["message"] for f in findings)


def test_generator_reads_registry_merges():
    from gen_vllm_architectures import architectures

    source = '''
_TEXT = {"AModel": ("a", "A"), "BForCausalLM": ("b", "B")}
_EMBED = {"CModel": ("c", "C"), **{k: v for k, v in _TEXT.items() if v[1] == "A"}}
_VLLM_MODELS = {**_TEXT, **_EMBED}
'''
    assert architectures(source) == ["AModel", "BForCausalLM", "CModel"]
    with pytest.raises(SystemExit):
        architectures('_MODELS = {**make_models()}')
    with pytest.raises(SystemExit):  # a filtered subset of a dict the final one does not hold
        architectures('_X = {"A": 1}\n_VLLM_MODELS = {**{k: v for k, v in _X.items() if v}}')


def test_an_assumed_release_makes_it_a_warning(tmp_path, capsys):
    # a third-party image's tag names the release only by assumption: what holds only for it is a warning
    text = (Path(FIXTURE).read_text().split("---")[1]
            .replace("vllm/vllm-openai:v0.4.2", "registry.example.com/ml/vllm-server:v0.4.3")
            .replace("microsoft/Phi-3-mini-128k-instruct", "google/gemma-2-9b-it"))
    (tmp_path / "d.yaml").write_text(text)
    main(["check", str(tmp_path / "d.yaml"), "--offline", "--format", "json", "--select", "VRL005"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    arch = [f for f in findings if "Gemma2ForCausalLM" in f["message"]]
    first = releases_with("Gemma2ForCausalLM")[0]
    assert len(arch) == 1 and arch[0]["level"] == "warning"
    assert f"vLLM 0.4.3 (assumed) will not start: it does not support Gemma2ForCausalLM (added in {first})" in \
        arch[0]["message"]
