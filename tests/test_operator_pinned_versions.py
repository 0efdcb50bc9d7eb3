"""The vLLM version an operator pins when the manifest names no image (KubeAI's chart)."""

from __future__ import annotations

import os
import shutil

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, load_rules, run_rules
from vramlint.scan import scan

MODEL = os.path.join(os.path.dirname(__file__), "fixtures", "kubeai_pin", "deepseek-r1-distill-qwen-1.5b-rtx4070.yaml")


def _lint(*paths: str):
    inventory = scan(list(paths))
    assessments = assess(inventory.servers, ResolveOptions(allow_network=False))
    findings = run_rules(assessments, load_rules(), RuleContext(rule_options={}, traffic=TrafficProfile()))
    return assessments, findings


def test_kubeai_model_without_image_is_checked_against_the_charts_pin_as_warnings():
    [assessment], findings = _lint(MODEL)
    assert assessment.vllm_version == "0.8.3" and assessment.version_source == "operator"
    # 0.8.3 still accepts --disable-log-requests: no finding judged against the newest vLLM
    assert not any(f.rule_id == "VRL009" for f in findings)
    [refusal] = [f for f in findings if f.rule_id == "VRL005"]
    # VLLM_USE_V1=1 + fp8 KV cache on an RTX 4070 fails on 0.8.3, not on the newest release: the KubeAI release
    # installed is not known, so it is a warning that names the pin it assumed
    assert refusal.level == "warning"
    assert "KubeAI's chart pins" in refusal.message and "VLLM_USE_V1=1 is not supported with --kv-cache-dtype" \
        in refusal.message


def test_the_repositorys_own_kubeai_chart_makes_the_version_known(tmp_path):
    models = tmp_path / "manifests" / "models"
    models.mkdir(parents=True)
    shutil.copy(MODEL, models / "model.yaml")
    chart = tmp_path / "charts" / "kubeai"
    chart.mkdir(parents=True)
    (chart / "values.yaml").write_text(
        "modelServers:\n  VLLM:\n    images:\n      default: \"vllm/vllm-openai:v0.8.3\"\n"
        "      nvidia-gpu: \"vllm/vllm-openai:v0.8.3\"\n")
    [assessment], findings = _lint(str(tmp_path))
    assert assessment.server.image == "vllm/vllm-openai:v0.8.3" and assessment.version_source == "image tag"
    [refusal] = [f for f in findings if f.rule_id == "VRL005"]
    assert refusal.level == "error" and "VLLM_USE_V1=1 is not supported" in refusal.message


def test_an_explicit_image_is_used(tmp_path):
    text = open(MODEL, encoding="utf-8").read().replace("  engine: VLLM\n",
                                                        "  engine: VLLM\n  image: vllm/vllm-openai:v0.10.2\n")
    path = tmp_path / "model.yaml"
    path.write_text(text)
    [assessment], findings = _lint(str(path))
    assert assessment.vllm_version == "0.10.2"
    # 0.10.2 has no V1 oracle: the fp8 KV cache starts
    assert not any(f.rule_id == "VRL005" for f in findings)
