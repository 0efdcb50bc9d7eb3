"""KAITO sets tensor/pipeline parallelism and the context length itself; only what then fails is an error."""

from __future__ import annotations

import os

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, load_rules, run_rules
from vramlint.scan import scan

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "kaito_parallel")


def _lint(path: str):
    inventory = scan([path])
    assessments = assess(inventory.servers, ResolveOptions(allow_network=False))
    findings = run_rules(assessments, load_rules(), RuleContext(rule_options={}, traffic=TrafficProfile()))
    return inventory, assessments, findings


def _variant(tmp_path, fixture: str, *pairs: tuple[str, str]) -> str:
    text = open(os.path.join(HERE, fixture), encoding="utf-8").read()
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / fixture
    path.write_text(text)
    return str(path)


def test_config_tensor_parallel_size_beyond_the_node_fails_with_kaito_advice():
    path = os.path.join(HERE, "workspace-config-tp2.yaml")
    inventory, _assessments, findings = _lint(path)
    [server] = inventory.servers
    assert server.args["tensor_parallel_size"] == 2  # the config's value, appended after KAITO's own 1
    [error] = [f for f in findings if f.rule_id == "VRL006" and f.level == "error"]
    assert "KAITO workspace gives the engine 1" in error.message
    assert "instanceType" in error.message and "inference config" in error.message


def test_kaito_sets_tensor_parallelism_to_the_nodes_gpus(tmp_path):
    # no tensor-parallel-size in the config, a 2-GPU node: KAITO passes --tensor-parallel-size 2 itself
    path = _variant(tmp_path, "workspace-config-tp2.yaml", ("      tensor-parallel-size: 2\n", ""),
                    ("Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4"))
    inventory, _assessments, findings = _lint(path)
    [server] = inventory.servers
    assert server.args["tensor_parallel_size"] == 2
    assert [f for f in findings if f.rule_id == "VRL006"] == []  # no "set --tensor-parallel-size" advice


def test_multi_node_workspace_spans_its_nodes(tmp_path):
    path = _variant(tmp_path, "workspace-config-tp2.yaml", ("      tensor-parallel-size: 2\n", ""),
                    ('  instanceType: "Standard_NC24ads_A100_v4"', '  count: 2\n  instanceType: "Standard_NC24ads_A100_v4"'))
    inventory, _assessments, findings = _lint(path)
    [server] = inventory.servers
    assert server.args["pipeline_parallel_size"] == 2 and server.engine_group.gpus == 2
    assert [f for f in findings if f.rule_id == "VRL006" and f.level == "error"] == []


def test_context_is_fitted_not_refused_without_a_config():
    path = os.path.join(HERE, "inferenceset-mig.yaml")
    _inventory, assessments, findings = _lint(path)
    [assessment] = assessments
    assert assessment.server.args["max_model_len"] == "auto"
    assert assessment.budget is not None and assessment.budget.starts
    # the MIG slice holds less than the model's 131072-token context: vLLM fits it instead of failing
    assert assessment.budget.max_model_len < 131072
    assert [f for f in findings if f.level == "error"] == []
