"""KubeAI's operator builds the vLLM container's command itself (internal/modelcontroller/engine_vllm.go,
`vLLMPodForModel`): `python3 -m vllm.entrypoints.openai.api_server --model=<url ref> --served-model-name=<name>`
followed by the Model's args, so what `vllm serve` alone requires (the positional model before 0.8.3) does not
apply to a Model."""

from __future__ import annotations

import os

from vramlint.assess import assess
from vramlint.model import ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, load_rules, run_rules
from vramlint.scan import scan

CPU_MODEL = os.path.join(os.path.dirname(__file__), "fixtures", "kubeai_command", "qwen-cpu-model.yaml")


def _lint(*paths: str):
    inventory = scan(list(paths))
    assessments = assess(inventory.servers, ResolveOptions(allow_network=False))
    findings = run_rules(assessments, load_rules(), RuleContext(rule_options={}, traffic=TrafficProfile()))
    return assessments, findings


def test_a_model_on_a_release_whose_vllm_serve_needs_a_positional_model_starts():
    [assessment], findings = _lint(CPU_MODEL)
    # the CPU profile's pinned image runs 0.6.3, where `vllm serve` without a model would be refused
    assert assessment.vllm_version.startswith("0.6.3")
    assert not [f for f in findings if f.level in ("error", "warning")], [f.message for f in findings]


def test_the_operator_arguments_reach_the_server():
    [assessment], _ = _lint(CPU_MODEL)
    server = assessment.server
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct"
    assert server.args["served_model_name"] == ["qwen2-5-1-5b-cpu"]
    assert server.args["max_model_len"] == 8192


def test_a_model_flag_in_the_models_args_is_the_last_one_argparse_reads(tmp_path):
    # the operator's --model comes first; a Model that passes its own --model overrides it, as argparse does
    text = open(CPU_MODEL, encoding="utf-8").read().replace("    - --max-model-len=8192\n",
                                                            "    - --max-model-len=8192\n    - --model=/mnt/qwen\n")
    path = tmp_path / "model.yaml"
    path.write_text(text)
    [assessment], findings = _lint(str(path))
    assert not [f for f in findings if f.level == "error"]


def test_the_charts_cpu_profile_asks_for_no_gpu_whatever_its_count(tmp_path):
    # KubeAI's chart: resourceProfiles.cpu requests CPU and memory; `cpu:2` is two such shares, on the CPU image
    text = open(CPU_MODEL, encoding="utf-8").read().replace("resourceProfile: cpu:1", "resourceProfile: cpu:2")
    path = tmp_path / "model.yaml"
    path.write_text(text)
    [assessment], findings = _lint(str(path))
    assert assessment.server.gpu is None
    assert any(u.startswith("vLLM's CPU backend") for u in assessment.unresolved)
    assert not [f for f in findings if f.rule_id in ("VRL006", "VRL011")], [f.message for f in findings]
