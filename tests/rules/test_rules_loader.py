"""The rule loader and runner: built-in and user rule directories, broken modules, crashing rules."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from vramlint.model import Assessment, Location, Server
from vramlint.rule import (
    INTERNAL_RULE_ID,
    RuleContext,
    RuleLoadError,
    RuleOptionError,
    TrafficProfile,
    builtin_rules_dir,
    find_rule,
    load_rules,
    run_rules,
)

USER_RULE = '''
"""Servers must say which model they serve.

Failing example:

```yaml
args: ["--port", "8000"]
```

Passing example:

```yaml
args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
```
"""
ID = "ACME001"
NAME = "model-required"
LEVEL = "warning"
OPTIONS = {"message": "no model"}


def check(assessment, ctx):
    if assessment.server.model is None:
        yield ctx.finding(assessment, ctx.options["message"])
'''


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def server(name: str = "vllm", model: str | None = None) -> Server:
    loc = Location(file="deploy.yaml", line=12, column=9, yaml_path="spec.template.spec.containers[0]")
    return Server(file="deploy.yaml", location=loc, source_format="kubernetes", name=name, model=model)


def test_builtin_rules_load_with_unique_ids_and_names():
    rules = load_rules()
    ids = [r.id for r in rules]
    assert ids == sorted(ids)
    assert len(rules) >= 10
    assert len(set(ids)) == len(ids)
    assert len({r.name for r in rules}) == len(rules)
    assert all(r.builtin and Path(r.path).parent == builtin_rules_dir() for r in rules)
    assert builtin_rules_dir().name == "rules"
    for rule in rules:
        assert rule.id.startswith("VRL") and rule.summary and rule.summary == rule.doc.splitlines()[0]


def test_user_rule_directory_loads_and_runs(tmp_path):
    write(tmp_path / "mine", "acme_model_required.py", USER_RULE)
    write(tmp_path / "mine", "_helpers.py", "raise RuntimeError('private modules are not rules')\n")
    rules = load_rules([str(tmp_path / "mine")])
    rule = find_rule(rules, "ACME001")
    assert rule is not None and not rule.builtin and rule.name == "model-required"
    assert find_rule(rules, "model-required") is rule
    findings = run_rules([Assessment(server=server())], [rule], RuleContext())
    assert [(f.rule_id, f.level, f.message, f.location.line) for f in findings] == [
        ("ACME001", "warning", "no model", 12)
    ]
    assert findings[0].server_key == "deploy.yaml#spec.template.spec.containers[0]"
    # options from the configuration, by name, with kebab-case keys
    ctx = RuleContext(rule_options={"model-required": {"message": "say the model"}})
    assert run_rules([Assessment(server=server())], [rule], ctx)[0].message == "say the model"
    # nothing when the server is fine
    assert run_rules([Assessment(server=server(model="Qwen/Qwen2.5-7B-Instruct"))], [rule], ctx) == []


def test_user_rules_are_not_loaded_unless_asked(tmp_path):
    write(tmp_path / "mine", "acme_model_required.py", USER_RULE)
    assert find_rule(load_rules(), "ACME001") is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("def check(:\n", r"broken\.py:1: syntax error"),
        ('"""Doc."""\nimport nonexistent_module_xyz\n', r"broken\.py:2: importing the rule failed: ModuleNotFoundError"),
        (USER_RULE.replace('ID = "ACME001"', 'ID = "acme-1"'), r"broken\.py: ID must be .* got 'acme-1'"),
        (USER_RULE.replace('NAME = "model-required"', 'NAME = "Model_Required"'), r"broken\.py: NAME must be a kebab-case string"),
        (USER_RULE.replace('LEVEL = "warning"', 'LEVEL = "fatal"'), r"broken\.py: LEVEL must be one of note, warning, error"),
        (USER_RULE.split("ID =", 1)[1].join(["ID =", ""]), r"broken\.py: the module docstring .* must not be empty"),
        (USER_RULE.replace("def check(", "def other("), r"broken\.py: defines neither check"),
        (USER_RULE.replace('ID = "ACME001"', 'ID = "VRL001"'), r"broken\.py: rule id VRL001 is already used by .*vrl001_"),
    ],
)
def test_broken_rule_module_is_a_clear_error_naming_the_file(tmp_path, text, expected):
    write(tmp_path / "bad", "broken.py", text)
    with pytest.raises(RuleLoadError, match=expected) as info:
        load_rules([str(tmp_path / "bad")])
    assert "Traceback" not in str(info.value)


def test_all_problems_are_reported_together_and_missing_dir(tmp_path):
    write(tmp_path / "bad", "a.py", "x = (\n")
    write(tmp_path / "bad", "b.py", USER_RULE.replace('LEVEL = "warning"', 'LEVEL = "loud"'))
    with pytest.raises(RuleLoadError) as info:
        load_rules([str(tmp_path / "bad"), str(tmp_path / "missing")])
    text = str(info.value)
    assert "a.py:1: syntax error" in text and "b.py: LEVEL" in text
    assert "missing: rules directory not found" in text


def test_broken_user_rule_through_the_cli_exits_2(tmp_path, capsys):
    from vramlint.cli import UsageError
    from vramlint.commands import rules as rules_command

    write(tmp_path / "bad", "broken.py", "def check(:\n")
    parser = __import__("argparse").ArgumentParser()
    rules_command.add_arguments(parser)
    with pytest.raises(UsageError, match="broken.py:1: syntax error"):
        rules_command.run(parser.parse_args(["--rules-dir", str(tmp_path / "bad")]))


def test_a_rule_that_raises_becomes_an_internal_finding_and_the_run_goes_on(tmp_path):
    write(
        tmp_path / "mine",
        "crashy.py",
        USER_RULE.replace('ID = "ACME001"', 'ID = "ACME002"')
        .replace('NAME = "model-required"', 'NAME = "crashy"')
        .replace("    if assessment.server.model is None:", "    1 / 0\n    if False:"),
    )
    write(tmp_path / "mine", "acme_model_required.py", USER_RULE)
    rules = load_rules([str(tmp_path / "mine")], builtin=False)
    findings = run_rules([Assessment(server=server("a")), Assessment(server=server("b"))], rules)
    internal = [f for f in findings if f.rule_id == INTERNAL_RULE_ID]
    assert len(internal) == 2
    assert all("rule ACME002 (crashy) failed" in f.message and "ZeroDivisionError" in f.message for f in internal)
    assert all("crashy.py:" in f.message and f.level == "error" for f in internal)
    assert len([f for f in findings if f.rule_id == "ACME001"]) == 2


def test_options_are_validated_and_severity_overrides_applied(tmp_path):
    write(tmp_path / "mine", "acme_model_required.py", USER_RULE)
    rules = load_rules([str(tmp_path / "mine")], builtin=False)
    a = [Assessment(server=server())]
    with pytest.raises(RuleOptionError, match="has no option 'mesage'; its options: message"):
        run_rules(a, rules, RuleContext(rule_options={"ACME001": {"mesage": "x"}}))
    with pytest.raises(RuleOptionError, match="option 'message' must be a string"):
        run_rules(a, rules, RuleContext(rule_options={"ACME001": {"message": 3}}))
    assert run_rules(a, rules, RuleContext(severity={"ACME001": "error"}))[0].level == "error"
    assert run_rules(a, rules, RuleContext(severity={"model-required": "off"})) == []


def test_builtin_option_types_are_checked():
    rule = find_rule(load_rules(), "VRL001")
    assert rule.merge_options({"min-concurrency": 4})["min_concurrency"] == 4
    with pytest.raises(RuleOptionError, match="must be an integer"):
        rule.merge_options({"min_concurrency": "four"})
    with pytest.raises(RuleOptionError, match="must be an integer"):
        rule.merge_options({"min_concurrency": True})


def test_context_from_a_configuration_object():
    class Traffic:
        p99_context_tokens = 6000
        peak_concurrent_requests = None

    class Config:
        rules = {"VRL001": {"min_concurrency": 2}}
        severity = {"VRL003": "warning"}
        traffic = Traffic()

    ctx = RuleContext.from_config(Config())
    assert ctx.traffic == TrafficProfile(p99_context_tokens=6000)
    assert ctx.for_rule(find_rule(load_rules(), "VRL001")).options["min_concurrency"] == 2
    assert ctx.severity == {"VRL003": "warning"}
