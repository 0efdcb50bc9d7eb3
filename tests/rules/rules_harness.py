"""Helpers for the rule tests: run fixture deployments through scan -> assess -> rules."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vramlint.model import Assessment, Finding, Inventory, ResolveOptions
from vramlint.rule import RuleContext, TrafficProfile, find_rule, load_rules, run_rules

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Linted:
    inventory: Inventory
    assessments: list[Assessment]
    findings: list[Finding]

    def of(self, rule_id: str) -> list[Finding]:
        return [f for f in self.findings if f.rule_id == rule_id]

    @property
    def budget(self):
        return self.assessments[0].budget


def lint_files(
    *files: str,
    rule: str | None = None,
    p99: int | None = None,
    peak: int | None = None,
    options: dict | None = None,
    gpu: str | None = None,
    version: str | None = None,
    fleet: list[str] | None = None,
) -> Linted:
    from vramlint.assess import assess
    from vramlint.scan import scan

    inventory = scan([str(FIXTURES / f) for f in files])
    resolve = ResolveOptions(default_gpu=gpu, vllm_version=version, allow_network=False, base_dir=str(FIXTURES),
                             default_gpu_fleet=list(fleet or []))
    assessments = assess(inventory.servers, resolve)
    rules = load_rules()
    if rule is not None:
        rules = [find_rule(rules, rule)]
    ctx = RuleContext(
        rule_options={rule: options} if rule and options else {},
        traffic=TrafficProfile(p99_context_tokens=p99, peak_concurrent_requests=peak),
    )
    return Linted(inventory, assessments, run_rules(assessments, rules, ctx))


def line_of(fixture: str, text: str) -> int:
    """1-based line of the first line of a fixture that contains ``text``."""
    for number, line in enumerate((FIXTURES / fixture).read_text().splitlines(), start=1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {fixture}")
