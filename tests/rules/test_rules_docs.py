"""Every rule is documented and tested, and docs/rules.md is the documentation the modules generate."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from vramlint.rule import load_rules, rule_markdown, rules_markdown

ROOT = Path(__file__).resolve().parents[2]
RULES = load_rules()
EXAMPLE_RE = re.compile(r"^(Failing|Passing) example[^`]*?:\n\n```yaml\n(.*?)\n```", re.MULTILINE | re.DOTALL)


def test_docs_rules_md_is_up_to_date():
    from vramlint.meta import meta_rules

    path = ROOT / "docs" / "rules.md"
    assert path.exists(), "docs/rules.md is missing: run `python -m vramlint rules --markdown > docs/rules.md`"
    assert path.read_text() == rules_markdown(sorted(RULES + meta_rules(), key=lambda r: r.id)), (
        "docs/rules.md is stale: run `python -m vramlint rules --markdown > docs/rules.md`"
    )


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_has_documentation_with_a_failing_and_a_passing_example(rule):
    from ruamel.yaml import YAML

    assert len(rule.summary) <= 120, "the first docstring line is the one-line summary"
    assert rule.summary.endswith("."), "the summary is a sentence"
    examples = {kind: text for kind, text in EXAMPLE_RE.findall(rule.doc)}
    assert set(examples) == {"Failing", "Passing"}, f"{rule.path}: needs a 'Failing example' and a 'Passing example'"
    for kind, text in examples.items():
        assert YAML(typ="safe").load(io.StringIO(text)) is not None, f"{rule.id} {kind} example is not YAML"
    assert examples["Failing"] != examples["Passing"]
    for option in rule.options:
        assert option in rule.doc or option.replace("_", "-") in rule.doc, f"{rule.id}: option {option} undocumented"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_has_a_test_module(rule):
    stem = Path(rule.path).stem
    assert (ROOT / "tests" / "rules" / f"test_{stem}.py").exists(), f"tests/rules/test_{stem}.py is missing"


def test_rules_command_lists_and_documents(capsys):
    from vramlint.commands import rules as rules_command

    parser = __import__("argparse").ArgumentParser()
    rules_command.add_arguments(parser)
    assert rules_command.run(parser.parse_args([])) == 0
    from vramlint.meta import meta_rules

    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(RULES) + len(meta_rules())  # vramlint's own ids (VRL000, VRL100+) are listed too
    assert lines[0].split()[:3] == ["VRL000", "rule-failed", "error"]
    assert [line.split()[0] for line in lines] == sorted(line.split()[0] for line in lines)
    assert any(line.split()[:3] == ["VRL103", "server-note", "note"] for line in lines)
    assert rules_command.run(parser.parse_args(["VRL103"])) == 0
    assert capsys.readouterr().out.startswith("# VRL103 server-note")
    assert rules_command.run(parser.parse_args(["vrl003"])) == 0
    out = capsys.readouterr().out
    assert out == rule_markdown(RULES[2], heading="#") and "max-weight-share" in out
    assert rules_command.run(parser.parse_args(["non-fused-attention"])) == 0
    assert capsys.readouterr().out.startswith("# VRL004 non-fused-attention")
    assert rules_command.run(parser.parse_args(["--markdown"])) == 0
    assert capsys.readouterr().out == rules_markdown(sorted(RULES + meta_rules(), key=lambda r: r.id))


def test_rules_command_through_the_cli(capsys, tmp_path):
    from vramlint.cli import main

    assert main(["rules", "VRL001"]) == 0
    assert capsys.readouterr().out.startswith("# VRL001 max-model-len-at-maximum")
    assert main(["rules", "VRL999"]) == 2
    assert "no rule 'VRL999'" in capsys.readouterr().err
    broken = tmp_path / "broken.py"
    broken.write_text('"""Doc."""\nID = "X1"\n')
    assert main(["rules", "--rules-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "broken.py: ID must be" in err and "Traceback" not in err
