"""The bundled examples give the findings they are written to show, through the real pipeline.

Each example's comment header says what it demonstrates; docs/examples.md quotes what it gives (and
tests/test_readme.py holds that page to these findings). The expectations below are the findings each example exists for (rule and line); other notes may
come and go as rules improve, but no example may grow an unexpected error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# (file, rule, line, level): the findings each example is meant to give. VRL002 is meant to stay quiet on all of
# them: without a traffic profile it fires only when the KV cache holds fewer than 4 typical requests (the
# examples hold 13 to 59), so the default max_num_seqs is not worth a warning there.
EXPECTED = {
    "examples/kubernetes/llama-3.2-3b-t4.yaml": {
        ("VRL004", 25, "note"),  # T4 cannot run FlashAttention: XFORMERS, expected on this GPU
    },
    "examples/kubernetes/llama-3.1-8b-will-not-start.yaml": {
        ("VRL005", 30, "error"),  # KV cache smaller than one 131072-token sequence: vLLM stops
        ("VRL003", 29, "note"),  # bf16 weights take most of the A10G: what FP8 / AWQ would free
    },
    "examples/compose/compose.yaml": {
        ("VRL007", 31, "error"),  # 0.60 + 0.45 of one GPU: one finding, on the second engine
    },
    "examples/helm/production-stack-values.yaml": {
        ("VRL001", 9, "warning"),  # maxModelLen unset: 131072, about one request of that length fits
        ("VRL006", 43, "error"),  # tensorParallelSize 2 with requestGPU 1
    },
    "examples/kserve/inferenceservice.yaml": {
        ("VRL008", 20, "warning"),  # TP 2 without a memory-backed /dev/shm
    },
    "examples/kserve/servingruntime.yaml": {
        ("VRL004", 21, "warning"),  # XFORMERS forced on an A10G
    },
}


def _vramlint(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", NO_COLOR="1", PYTHONPATH=str(ROOT))
    env.pop("HF_TOKEN", None)
    return subprocess.run(
        [sys.executable, "-m", "vramlint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def report() -> dict:
    proc = _vramlint("check", "examples/", "--output-format", "json")
    assert proc.returncode == 1, proc.stderr  # errors on purpose
    return json.loads(proc.stdout)


def test_every_example_file_is_covered():
    files = {p.relative_to(ROOT).as_posix() for p in EXAMPLES.rglob("*.yaml") if p.name != ".vramlint.yaml"}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("file", sorted(EXPECTED))
def test_example_gives_the_findings_it_is_meant_to(report, file):
    got = {(f["rule"], f["line"], f["level"]) for f in report["findings"] if f["file"] == file and not f["suppressed"]}
    missing = EXPECTED[file] - got
    assert not missing, f"{file}: missing {sorted(missing)}; got {sorted(got)}"
    unexpected_errors = {g for g in got if g[2] == "error"} - EXPECTED[file]
    assert not unexpected_errors, f"{file}: unexpected errors {sorted(unexpected_errors)}"


def test_every_server_in_the_examples_is_found_and_sized(report):
    servers = report["servers"]
    by_file: dict[str, list] = {}
    for s in servers:
        by_file.setdefault(s["file"], []).append(s)
    assert len(by_file["examples/compose/compose.yaml"]) == 2
    assert len(by_file["examples/helm/production-stack-values.yaml"]) == 2
    # Every server resolved (model, GPU, version): the examples use catalog models, so nothing needs the Hub.
    assert all(s["budget"] is not None for s in servers), [(s["file"], s.get("unresolved")) for s in servers]
    assert not report["problems"], report["problems"]


def test_the_will_not_start_example_is_reported_as_not_starting(report):
    (server,) = [s for s in report["servers"] if s["file"].endswith("llama-3.1-8b-will-not-start.yaml")]
    budget = server["budget"]
    assert budget["starts"] is False
    assert budget["max_model_len"] == 131072
    assert budget["kv_tokens"] < 131072
    assert budget["gpu"] == "A10G"


def test_the_compose_example_takes_its_gpu_from_the_examples_configuration(report):
    servers = [s for s in report["servers"] if s["file"] == "examples/compose/compose.yaml"]
    assert {s["budget"]["gpu"] for s in servers} == {"L4"}
    assert sum(s["budget"]["gpu_memory_utilization"] for s in servers) == pytest.approx(1.05)


def test_forum_case_memory_does_not_shrink_with_max_model_len(tmp_path):
    """The T4 example at 4096, 8192 and 16384 tokens: same memory, different concurrency (issue #3's log)."""
    text = (EXAMPLES / "kubernetes" / "llama-3.2-3b-t4.yaml").read_text(encoding="utf-8")
    assert '- "8192"' in text
    budgets = {}
    for length in (4096, 8192, 16384):
        path = tmp_path / f"t4-{length}.yaml"
        path.write_text(text.replace('- "8192"', f'- "{length}"'), encoding="utf-8")
        proc = _vramlint("explain", str(path), "--format", "json", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        (server,) = json.loads(proc.stdout)["servers"]
        budgets[length] = server["budget"]
    usable = {b["usable_gib"] for b in budgets.values()}
    weights = {b["weights_gib"] for b in budgets.values()}
    assert len(usable) == 1 and len(weights) == 1
    kv = [budgets[n]["kv_cache_gib"] for n in (4096, 8192, 16384)]
    assert max(kv) - min(kv) < 0.1  # the KV cache takes what is left, whatever max_model_len is
    conc = [budgets[n]["max_concurrency"] for n in (4096, 8192, 16384)]
    assert conc[0] > conc[1] > conc[2]
    assert conc[0] == pytest.approx(2 * conc[1], rel=0.02) and conc[1] == pytest.approx(2 * conc[2], rel=0.02)
    # vLLM's own log for this case: 13.11 GiB usable, 6.02 GiB weights, 6.66x at 8192 tokens.
    assert budgets[8192]["usable_gib"] == pytest.approx(13.11, abs=0.05)
    assert budgets[8192]["weights_gib"] == pytest.approx(6.02, abs=0.05)
    assert budgets[8192]["max_concurrency"] == pytest.approx(6.66, rel=0.05)


def test_compose_example_is_valid_compose():
    from importlib.resources import files

    import jsonschema
    from ruamel.yaml import YAML

    schema = json.loads(files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text())
    doc = YAML(typ="safe").load((EXAMPLES / "compose" / "compose.yaml").read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    assert not errors, [e.message for e in errors]


@pytest.mark.parametrize("path", sorted(p.relative_to(ROOT).as_posix() for p in EXAMPLES.rglob("*.yaml")))
def test_each_example_opens_with_a_comment_saying_what_it_shows(path):
    first = (ROOT / path).read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# ") and len(first) > 20, first
