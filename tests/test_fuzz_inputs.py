"""Hostile input: the project's own fixtures, mutated, through scan -> assess (offline) -> rules -> every report.

Mutations are what a bad edit or a bad template render leaves behind: lines deleted, duplicated or swapped,
indentation changed, scalars replaced by lists, maps, null, huge or negative numbers, `.nan`, template and
shell expressions, unicode, very long strings, and truncated files. Whatever the input, vramlint must not
crash (no exception escapes, no rule crashes into VRL000) and every problem must name its file and, when it
has one, a real line of it.

Then generated hostile input, family by family (strategies in tests/fuzz_strategies.py): Kubernetes manifests with
vLLM containers (anchors, alias bombs, odd scalars), compose files, Helm charts (values and templates), `sh -c`
scripts, Hub config.json answers, Dockerfiles, and round 19's readers (kustomization trees, systemd units,
supervisord configurations, Ansible roles, Dockerfile here-documents). Each runs through `vramlint check --offline` in-process with a 5 s CPU-time alarm and
its address space capped 300 MB above the process's own; a crash, more than 5 s of CPU time or a MemoryError
fails.

Bounded for CI (derandomized: 40 mutated fixtures and 30 inputs per family, under a minute);
VRAMLINT_FUZZ_EXAMPLES=2000 runs a longer random search of each, and benchmarks/fuzz_inputs.py runs >= 100,000.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests import fuzz_strategies as fz
from vramlint.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
# (folder copied as is, file in it that is mutated): a chart is linted through its chart, a compose file
# with its .env, the others alone
CASES = [
    ("kubernetes", "deployment.yaml"),
    ("kubernetes", "kserve-isvc.yaml"),
    ("kubernetes", "configmap-config.yaml"),
    ("kubernetes", "rayservice.yaml"),
    ("kubernetes", "lws.yaml"),
    ("kubernetes", "kubeai.yaml"),
    ("compose/shared", "compose.yaml"),
    ("compose/basic", "docker-compose.yml"),
    ("helm_values", "production-stack.yaml"),
    ("helm/basic", "values.yaml"),
    ("helm/basic", "templates/deployment.yaml"),
    ("vllm_config", "vllm_config.yaml"),
    ("extract_more/kaito", "workspace.yaml"),
    ("extract_more/dstack", "llama.dstack.yml"),
    ("extract_more/llmaz", "playground.yaml"),
    ("extract_more/speculative", "deployment.yaml"),
    ("templates_nochart", "booster-templated.yaml"),
    ("check", "two-servers.yaml"),
]

HOSTILE_SCALARS = [
    "[1, 2]", "{a: 1, b: [x]}", "null", "~", "", "99999999999999999999999999", "-5", "-0.5", "0", ".nan",
    "-.inf", "1e400", "0x1F", "true", "'{{ .Values.model }}'", "{{ .Values.x | quote }}", "${MODEL}",
    "${MODEL:-}", "$(MODEL)", "\"$(echo hi)\"", "モデル/ünï-çødé", "'" + "x" * 5000 + "'", "!!binary aGk=",
    "*undefined_alias", "&anchor value", "|\n  block\n  text", "'--max-model-len'", "\"--gpu-memory-utilization=2\"",
    "vllm serve", "'0.9.2'", "2024-01-01", "!Ref x",
]

_SCALAR_LINE = re.compile(r"^(\s*(?:- )?[^#:\n]+:\s)(.+)$|^(\s*- )(.+)$")


@st.composite
def mutations(draw, lines: list[str]) -> list[str]:
    out = list(lines)
    for _ in range(draw(st.integers(1, 4))):
        if not out:
            break
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "indent", "scalar", "scalar", "truncate"]))
        i = draw(st.integers(0, len(out) - 1))
        if op == "delete":
            del out[i]
        elif op == "duplicate":
            out.insert(i, out[i])
        elif op == "swap":
            j = draw(st.integers(0, len(out) - 1))
            out[i], out[j] = out[j], out[i]
        elif op == "indent":
            change = draw(st.sampled_from(["  ", "    ", "\t", "-1", "-2", "0"]))
            stripped = out[i].lstrip(" ")
            depth = len(out[i]) - len(stripped)
            if change == "0":
                out[i] = stripped
            elif change.startswith("-"):
                out[i] = " " * max(0, depth - int(change[1:])) + stripped
            else:
                out[i] = change + out[i]
        elif op == "scalar":
            candidates = [k for k, line in enumerate(out) if _SCALAR_LINE.match(line)]
            if candidates:
                k = draw(st.sampled_from(candidates))
                m = _SCALAR_LINE.match(out[k])
                head = m.group(1) or m.group(3)
                out[k] = head + draw(st.sampled_from(HOSTILE_SCALARS))
        else:
            text = "\n".join(out)
            cut = draw(st.integers(0, len(text)))
            out = text[:cut].split("\n")
    return out


@st.composite
def mutated_case(draw) -> tuple[str, str, str]:
    folder, name = draw(st.sampled_from(CASES))
    original = (FIXTURES / folder / name).read_text()
    lines = draw(mutations(original.split("\n")))
    return folder, name, "\n".join(lines)


def _check_locations(doc: dict, root: Path) -> None:
    line_counts: dict[str, int] = {}
    for finding in doc["findings"]:
        assert finding["rule"] != "VRL000", finding["message"]  # a rule crashed on this input
        assert finding["file"], finding
        path = root / finding["file"]
        if finding["file"].startswith("<"):
            continue
        assert path.is_file(), finding
        if finding["file"] not in line_counts:
            line_counts[finding["file"]] = len(path.read_text(encoding="utf-8", errors="replace").splitlines()) or 1
        assert 1 <= finding["line"] <= line_counts[finding["file"]], finding
        assert finding["column"] >= 1, finding
    for problem in doc["problems"]:
        assert problem["file"], problem
        if problem["line"] is not None:
            assert problem["line"] >= 1, problem


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


_EXAMPLES = int(os.environ.get("VRAMLINT_FUZZ_EXAMPLES", "0"))


# no shrinking: a mutated manifest shrinks slowly (minutes), and the failing text is printed as it is
@settings(max_examples=_EXAMPLES or 40, deadline=None, derandomize=not _EXAMPLES, database=None,
          phases=(Phase.explicit, Phase.generate), suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=mutated_case())
def test_mutated_fixtures_never_crash(tmp_path_factory, case):
    folder, name, text = case
    root = tmp_path_factory.mktemp("fuzz")
    (root / ".git").mkdir()
    shutil.copytree(FIXTURES / folder, root / "in")
    (root / "in" / name).write_text(text, encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        formats = []
        for fmt, file in (("json", "r.json"), ("sarif", "r.sarif"), ("github", "r.gh"), ("markdown", "r.md")):
            formats += ["--output-format", fmt, "--output-file", file]
        code, out, err = _run(["check", "in", "--offline", "--show-suppressed", *formats, "--output-format", "text"])
        assert code in (0, 1), err
        assert "internal error" not in err and "Traceback" not in err, err
        assert out.rstrip().splitlines()[-1].startswith(("Found", "All checks passed", "No vLLM server")), out
        doc = json.loads((root / "r.json").read_text())
        _check_locations(doc, root)
        assert json.loads((root / "r.sarif").read_text())["runs"][0]["tool"]["driver"]["name"] == "vramlint"
        for command in (["explain", "in", "--offline"], ["explain", "in", "--offline", "--format", "json"],
                        ["inventory", "in"], ["inventory", "in", "--format", "json"]):
            code, out, err = _run(command)
            assert code == 0, (command, err)
            assert "Traceback" not in err, err
    finally:
        os.chdir(cwd)


# ----------------------------------------------------------------------------------------------------------
# Generated hostile input, one test per family


def _family_test(family: str, examples: int = 30):
    @settings(max_examples=_EXAMPLES or examples, deadline=None, derandomize=not _EXAMPLES, database=None,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
    @given(files=fz.FAMILIES[family]())
    def test(files, tmp_path_factory):
        outcome = fz.run_case(files, str(tmp_path_factory.getbasetemp()))
        assert outcome.failure is None, (outcome.failure, files)

    test.__name__ = f"test_generated_{family}_input_is_handled_in_time_and_memory"
    return test


test_generated_yaml_input_is_handled_in_time_and_memory = _family_test("yaml")
test_generated_compose_input_is_handled_in_time_and_memory = _family_test("compose")
test_generated_helm_input_is_handled_in_time_and_memory = _family_test("helm")
test_generated_shell_input_is_handled_in_time_and_memory = _family_test("shell")
test_generated_hub_input_is_handled_in_time_and_memory = _family_test("hub")
test_generated_dockerfile_input_is_handled_in_time_and_memory = _family_test("dockerfile")
# round 19's readers, a few inputs each in CI (about a second a family); benchmarks/fuzz_inputs.py runs them by the
# ten thousand
test_generated_kustomize_input_is_handled_in_time_and_memory = _family_test("kustomize", 8)
test_generated_systemd_input_is_handled_in_time_and_memory = _family_test("systemd", 8)
test_generated_supervisord_input_is_handled_in_time_and_memory = _family_test("supervisord", 8)
test_generated_ansible_input_is_handled_in_time_and_memory = _family_test("ansible", 8)
test_generated_heredoc_input_is_handled_in_time_and_memory = _family_test("heredoc", 8)
test_generated_terraform_input_is_handled_in_time_and_memory = _family_test("terraform")


def test_the_fuzz_check_catches_what_it_is_for(tmp_path, monkeypatch):
    # the harness itself: a crash, a timeout and a memory blow-up out of the pipeline are each reported
    import vramlint.scan

    files = {"pod.yaml": "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: v, image: vllm/vllm-openai}]}\n"}
    assert fz.run_case(files, str(tmp_path)).failure is None

    def crash(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(vramlint.scan, "scan", crash)
    assert "boom" in (fz.run_case(files, str(tmp_path)).failure or "")

    def hang(*args, **kwargs):
        while True:
            pass

    monkeypatch.setattr(vramlint.scan, "scan", hang)
    outcome = fz.run_case(files, str(tmp_path), time_limit_s=0.5)
    assert outcome.timed_out and outcome.seconds < 3

    def hog(*args, **kwargs):
        return [bytearray(50_000_000) for _ in range(20)]

    monkeypatch.setattr(vramlint.scan, "scan", hog)
    failure = fz.run_case(files, str(tmp_path)).failure or ""
    assert "memory" in failure or "MemoryError" in failure, failure


def test_the_fuzz_check_catches_a_leak_and_a_stray_file(tmp_path, monkeypatch):
    # a value that reaches the report counts as a leak when it is one of the planted secrets; a file the run
    # leaves next to its report is a write outside it
    import vramlint.scan

    files = {"pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
             "    image: vllm/vllm-openai:v0.8.0\n    args: [--model, org/planted-model-name]\n"}
    assert fz.run_case(files, str(tmp_path)).failure is None
    failure = fz.run_case(files, str(tmp_path), secrets=("org/planted-model-name",)).failure or ""
    assert "planted secret is in" in failure and "r.json" in failure
    real_scan = vramlint.scan.scan

    def scan_and_write(*args, **kwargs):
        with open("stray.txt", "w") as fh:
            fh.write("x")
        return real_scan(*args, **kwargs)

    monkeypatch.setattr(vramlint.scan, "scan", scan_and_write)
    assert "stray.txt" in (fz.run_case(files, str(tmp_path)).failure or "")


@settings(max_examples=_EXAMPLES or 40, deadline=None, derandomize=not _EXAMPLES, database=None,
          phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
@given(case=fz.any_case(), seed=st.integers(0, 2**32 - 1))
def test_mutants_of_generated_input_are_handled_and_leak_nothing(case, seed, tmp_path_factory):
    # what benchmarks/fuzz_inputs.py runs by the hundred thousand: a drawn input's variants with references to a
    # planted file outside the folder, /proc/self/environ, symlinks out of it and hostile file names
    import random

    family, files = case
    mutant = fz.mutate(files, random.Random(seed))
    outcome = fz.run_case(mutant, str(tmp_path_factory.getbasetemp()))
    assert outcome.failure is None, (family, outcome.failure, mutant)


# ----------------------------------------------------------------------------------------------------------
# What the fuzzer found, each fixed at its root


def test_yaml_error_at_end_of_file_is_on_the_last_line():
    # ruamel marks "unexpected end of stream" after the final newline: a line that does not exist
    from vramlint.yamlload import load_text

    _, problems = load_text('kind: Deployment\nargs: [--model, "x\n', "f.yaml")
    assert [(p.line, p.column) for p in problems] == [(2, 19)]
    _, problems = load_text("a: [1,\n", "f.yaml")
    assert problems[0].line == 1


def test_a_model_name_too_long_for_a_path_is_unresolved_not_a_crash():
    from vramlint.model import ResolveOptions
    from vramlint.models import resolve_model

    for name in ("x" * 5000, "org/" + "m" * 300, "a\x00b"):
        info, why = resolve_model(name, ResolveOptions(allow_network=False))
        assert info is None and why


def test_a_volume_name_written_as_a_map_is_read_not_a_crash():
    from vramlint.scan import scan

    text = (FIXTURES / "kubernetes" / "deployment.yaml").read_text()
    broken = text.replace("- name: dshm\n", "- name: {{ .Values.x | quote }}\n", 1)
    assert broken != text
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "d.yaml"
        path.write_text(broken)
        inventory = scan([str(path)])
    assert [s.shm for s in inventory.servers if s.container == "vllm"] == [None]  # unknown, not guessed
