"""The shipped JSON Schema is the one generated from the pydantic model, and the three views agree."""

from __future__ import annotations

import dataclasses
import json

import pytest
from jsonschema import Draft202012Validator

from vramlint import config as cfg
from vramlint import config_schema


def test_shipped_schema_is_up_to_date():
    shipped = cfg.shipped_schema()
    assert shipped == config_schema.generate_schema(), (
        "vramlint/schema/vramlint-config.schema.json is stale: run `python -m vramlint.config_schema --write-schema`"
    )


def test_schema_is_a_valid_draft_2020_12_schema():
    Draft202012Validator.check_schema(cfg.shipped_schema())


def test_dataclass_fields_and_defaults_match_the_pydantic_model():
    model = config_schema.config_model()
    keys = {f.name for f in dataclasses.fields(cfg.Config) if f.name not in (
        "file", "root", "rules_dirs", "positions", "from_flags", "values_from_flags", "notices", "nested")}
    assert keys == set(model.model_fields)
    default_model = model().model_dump()
    default_dataclass = dataclasses.asdict(cfg.Config())
    for key in keys:
        assert default_dataclass[key] == default_model[key], key
    override_keys = {f.name for f in dataclasses.fields(cfg.Override)}
    assert override_keys == set(config_schema._MODELS["Override"].model_fields)


VALID = [
    {},
    {"select": ["VRL001", "VRL0", "ALL"], "ignore": ["max-num-seqs-over-kv-capacity"], "fail-on": "never"},
    {"severity": {"VRL003": "error", "VRL004": "off"}, "gpu": "T4", "gpus": 2, "gpu-memory-gib": 22.5},
    {"model-aliases": {"/models/x": "org/x"}, "traffic": {"p99-context-tokens": 4096}, "offline": True},
    {"rules": {"VRL003": {"max-weights-share": 0.5}}, "exclude": ["charts/**"]},
    {"gpu": ["L4", "A10G"], "overrides": [{"files": ["a/**"], "gpu": ["L40S"]}]},
    {"overrides": [{"files": ["a/**"], "gpu": "L4", "rules": {"VRL001": {"min-concurrency": 2}},
                    "traffic": {"peak-concurrent-requests": 3}, "fail-on": "warning"}]},
    {"respect-gitignore": False, "custom-gpus": [
        {"name": "Lab-GPU", "memory-gib": 22.5, "compute-capability": 8.9},
        {"name": "Other", "memory-gib": 40, "compute-capability": "10.0", "aliases": ["NVIDIA Other"],
         "node-labels": {"example.com/gpu": "other", "nvidia.com/gpu.product": ["Other-A", "Other-B"]}}]},
]
INVALID = [
    {"selct": []},
    {"fail-on": "fatal"},
    {"gpus": 0},
    {"gpus": "2"},
    {"severity": {"VRL003": "critical"}},
    {"severity": {"bad key!": "error"}},
    {"traffic": {"p99": 1}},
    {"overrides": [{"gpu": "T4"}]},
    {"overrides": [{"files": []}]},
    {"gpu": []},
    {"gpu": ["L4", ""]},
    {"gpu": [4]},
    {"rules": {"VRL003": {"Bad Option": 1}}},
    {"custom-gpus": [{"name": "X", "memory-gib": 20}]},
    {"custom-gpus": [{"name": "X", "memory-gib": 0, "compute-capability": 8.0}]},
    {"custom-gpus": [{"name": "X", "memory-gib": 20, "compute-capability": "8"}]},
    {"custom-gpus": [{"name": "X", "memory-gib": 20, "compute-capability": 8.0, "node-labels": {"k": []}}]},
    {"custom-gpus": [{"name": "", "memory-gib": 20, "compute-capability": 8.0}]},
    {"respect-gitignore": "no"},
]


@pytest.mark.parametrize("data", VALID, ids=lambda d: json.dumps(d)[:40])
def test_valid_configurations_pass_schema_model_and_dataclass_alike(data):
    assert list(Draft202012Validator(cfg.shipped_schema()).iter_errors(data)) == []
    model = config_schema.config_model().model_validate(data)
    mine = dataclasses.asdict(cfg.config_from_data(data))
    theirs = model.model_dump()
    for key, value in theirs.items():
        if key == "rules":  # the dataclass normalises option names to snake_case, as rules declare them
            value = {r: {k.replace("-", "_"): v for k, v in o.items()} for r, o in value.items()}
        if key == "overrides":
            continue
        assert mine[key] == value, key


@pytest.mark.parametrize("data", INVALID, ids=lambda d: json.dumps(d)[:40])
def test_invalid_configurations_fail_schema_and_model_alike(data):
    from pydantic import ValidationError

    assert list(Draft202012Validator(cfg.shipped_schema()).iter_errors(data)) != []
    with pytest.raises(ValidationError):
        config_schema.config_model().model_validate(data)
