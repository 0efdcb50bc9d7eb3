"""A reranker whose config.json vramlint has read (data/unmodelled_models.json) is said offline as a model the budget
does not model, with nothing to change, not as a model outside the catalog to ask the Hub for: the Hub's answer
would be the same encoder-only config, which gives no budget either."""

from __future__ import annotations

import json

from vramlint.model import ResolveOptions
from vramlint.models import NOT_MODELLED, UNMODELLED_INDEX, catalog_entry, resolve_model


def test_bge_reranker_v2_m3_resolves_offline_to_its_reason():
    info, why = resolve_model("BAAI/bge-reranker-v2-m3", ResolveOptions(), network=False)
    assert info is None
    assert NOT_MODELLED in why and "encoder-only" in why and "XLMRobertaForSequenceClassification" in why
    assert "--offline" not in why
    entry = json.loads(UNMODELLED_INDEX.read_text(encoding="utf-8"))["models"]["BAAI/bge-reranker-v2-m3"]
    assert entry["source"].startswith("https://huggingface.co/BAAI/bge-reranker-v2-m3/")
    assert catalog_entry("BAAI/bge-reranker-v2-m3") is None


def test_a_reranker_server_is_the_not_modelled_cause_in_the_summary(tmp_path, capsys):
    from vramlint.cli import main

    (tmp_path / "docker-compose.yml").write_text(
        "services:\n"
        "  rerank:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    command: [\"--model\", \"BAAI/bge-reranker-v2-m3\", \"--task\", \"score\"]\n")
    main(["check", str(tmp_path), "--offline", "--gpu", "L4", "--output-format", "json", "--fail-on", "never"])
    groups = {g["cause"]: g for g in json.loads(capsys.readouterr().out)["summary"]["unchecked"]}
    assert set(groups) == {"model-not-modelled"}
    assert groups["model-not-modelled"]["fix"].startswith("nothing to change")
