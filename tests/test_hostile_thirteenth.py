"""What the thirteenth hostile round (benchmarks/hostile_thirteenth.py) found, each fixed at its cause: inputs of
the same kinds, made here, not the round's own."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.test_hub_hostile import SECRET, body, config, env, hub, options  # noqa: F401  (pytest fixtures)
from vramlint.cli import main
from vramlint.extract import heredocs
from vramlint.extract.compose import parse_env_text
from vramlint.extract.dockerfile import read_built_image
from vramlint.hub import _holds_token
from vramlint.models import resolve_model
from vramlint.report.markdown import cell
from vramlint.scan import _only_candidate_documents, scan
from vramlint.textfile import source_lines


def _check_json(capsys, *paths: str) -> dict:
    main(["check", *paths, "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)


# --- Flux: valuesFrom read once per release ------------------------------------------------------------------

def _stack_release(models: int, sources: int, targeted: str = "") -> str:
    entries = "".join(f"        - name: e{i}\n          repository: vllm/vllm-openai\n          tag: v0.10.0\n"
                      f"          modelURL: Qwen/Qwen2.5-7B-Instruct\n          requestGPU: 1\n" for i in range(models))
    froms = "".join(f"    - kind: Secret\n      name: s{i}\n" for i in range(sources)) + targeted
    return ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: r}\nspec:\n"
            "  chart: {spec: {chart: vllm-stack, sourceRef: {kind: HelmRepository, name: v}}}\n"
            f"  valuesFrom:\n{froms}  values:\n    servingEngineSpec:\n      modelSpec:\n{entries}")


def test_a_release_of_many_sources_names_ten_and_counts_the_rest(tmp_path: Path):
    f = tmp_path / "release.yaml"
    f.write_text(_stack_release(3, 40, "    - kind: ConfigMap\n      name: only\n"
                                       "      targetPath: servingEngineSpec.modelSpec[2].vllmConfig.maxModelLen\n"))
    servers = sorted(scan([str(f)]).servers, key=lambda s: s.name)
    notes = [[n for n in s.notes if "valuesFrom" in n] for s in servers]
    assert all(len(n) == 1 for n in notes)
    assert "Secret s0" in notes[0][0] and "Secret s9," not in notes[0][0] and "and 30 more" in notes[0][0]
    # the targeted source reaches the third entry only, and is counted there
    assert "and 31 more" in notes[2][0] and "and 30 more" in notes[1][0]


def test_a_release_of_2000_entries_and_20000_sources_is_read_in_seconds(tmp_path: Path):
    f = tmp_path / "release.yaml"
    f.write_text(_stack_release(1000, 10_000))
    started = time.process_time()
    servers = scan([str(f)]).servers
    assert len(servers) == 1000 and time.process_time() - started < 10
    assert max(len(n) for s in servers for n in s.notes) < 1000


# --- OpenShift Template: parameters filled in as `oc process` fills them ---------------------------------------

TEMPLATE = """\
apiVersion: template.openshift.io/v1
kind: Template
metadata: {name: t}
parameters:
- {name: LEN, value: '2048'}
- {name: COUNT, value: '3'}
- {name: RANDOM, generate: expression, from: '[a-z]{8}'}
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: '${RANDOM}'}
  spec:
    replicas: '${{COUNT}}'
    template:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.0
          args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '${LEN}', --served-model-name, '${RANDOM}']
"""


def test_template_parameters_are_filled_in_and_the_document_is_left_as_written(tmp_path: Path):
    f = tmp_path / "template.yaml"
    f.write_text(TEMPLATE)
    servers = scan([str(f)]).servers
    assert len(servers) == 1
    server = servers[0]
    assert server.args.get("max_model_len") == 2048 and server.replicas == 3
    assert server.location.line == 17  # positions are the Template's own lines


def test_a_template_parameter_over_the_model_is_an_error_on_its_argument(tmp_path: Path, capsys):
    f = tmp_path / "template.yaml"
    f.write_text(TEMPLATE.replace("value: '2048'", "value: '999999'"))
    errors = [x for x in _check_json(capsys, str(f))["findings"] if x["level"] == "error"]
    assert [x["line"] for x in errors] == [19] and "999999" in errors[0]["message"]


# --- compose .env: values end at LF only -----------------------------------------------------------------------

def test_dotenv_values_hold_line_separators_as_compose_go_reads_them():
    values = parse_env_text("A=1\nB=x\u2028A=2\nC=y\x85A=3\nD=z\x0cA=4\r\nE=5\n")
    assert values["A"] == "1" and values["B"] == "x\u2028A=2" and values["C"] == "y\x85A=3" and values["E"] == "5"


# --- source lines as the file's reader counts them ------------------------------------------------------------

def test_source_lines_break_where_the_files_reader_breaks():
    text = "a\x0cb\nc\u2028d\r\ne\x1cf\n"
    assert source_lines(text, "run.sh") == ["a\x0cb", "c\u2028d", "e\x1cf"]
    assert source_lines(text, "Dockerfile") == ["a\x0cb", "c\u2028d", "e\x1cf"]
    assert source_lines("a: 1\u2028b: 2\rc: 3\n", "x.yaml") == ["a: 1", "b: 2", "c: 3"]


def test_a_form_feed_does_not_move_a_suppression_onto_a_command(tmp_path: Path, capsys):
    f = tmp_path / "serve.sh"
    f.write_text("#!/bin/sh\nX=1\x0b2\n# vramlint: ignore[VRL005] meant for nothing\n:\n"
                 "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 999999\n")
    findings = _check_json(capsys, str(f))["findings"]
    errors = [x for x in findings if x["rule"] == "VRL005"]
    assert len(errors) == 1 and errors[0]["line"] == 5 and not errors[0]["suppressed"]
    assert any(x["rule"] == "VRL100" and x["line"] == 3 for x in findings)


# --- markdown: brackets are text ---------------------------------------------------------------------------------

def test_markdown_cells_make_no_link_or_image_of_a_value():
    shown = cell("Org/![ok](https://example.invalid/p.png) [x](https://example.invalid)")
    assert "](" not in shown.replace("\\](", "") and "\\[" in shown and "\\]" in shown


# --- the Hub: the token written as JSON escapes --------------------------------------------------------------

def test_the_token_is_found_behind_json_escapes():
    escaped = "".join(f"\\u{ord(c):04x}" for c in SECRET[:5]) + SECRET[5:]
    assert _holds_token(f'{{"model_type": "{escaped}"}}'.encode(), SECRET)
    assert not _holds_token(b'{"model_type": "llama", "x": "\\u0041\\"\\\\"}', SECRET)


def test_a_hub_that_echoes_the_token_escaped_is_refused(hub, monkeypatch):  # noqa: F811
    monkeypatch.setenv("HF_TOKEN", SECRET)
    escaped = "".join(f"\\u{ord(c):04x}" for c in SECRET)
    raw = config(model_type="llama").decode()[:-1] + f', "architectures": ["{escaped}"]}}'
    hub.file("acme/escaped", "config.json", body(raw.encode()))
    info, reason = resolve_model("acme/escaped", options())
    assert info is None and "token" in reason and SECRET not in reason


# --- here-documents: a command reads its last standard input ----------------------------------------------------

def test_only_the_last_here_document_of_a_command_is_its_input():
    script = "kubectl apply -f - <<A <<B\nfirst\nA\nsecond\nB\n"
    found, problems = heredocs._find_heredocs(script.split("\n"), "apply.sh")
    assert problems == [] and [d.delimiter for d in found] == ["A", "B"]  # both bodies are read past
    assert [d.delimiter for d in found if d.sink == "stdin"] == ["B"]


def test_thousands_of_here_documents_on_one_line_are_read_in_linear_time(tmp_path: Path, capsys):
    n = 20_000
    f = tmp_path / "serve.sh"
    f.write_text("#!/bin/bash\ncat " + " ".join(f"<<E{i}" for i in range(n)) + "\n"
                 + "".join(f"x\nE{i}\n" for i in range(n)) + "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 999999\n")
    started = time.process_time()
    findings = _check_json(capsys, str(f))["findings"]
    assert time.process_time() - started < 10
    assert any(x["rule"] == "VRL005" and x["line"] == 3 + 2 * n for x in findings)


# --- prefiltered streams keep their document markers -----------------------------------------------------------

def test_a_left_out_document_keeps_its_marker_and_its_lines():
    text = "kind: ConfigMap\ndata: {a: 1,\n---\nkind: Service\nx: 1\n---\nvllm: 1\n"
    out = _only_candidate_documents(text)
    assert out.count("\n") == text.count("\n") and out.splitlines()[2] == "---" and "Service" not in out


# --- a model name no path or Hub id can be -----------------------------------------------------------------------

def test_a_megabyte_model_name_is_quoted_short_in_every_report(tmp_path: Path, capsys):
    name = "Org/" + "m" * 200_000
    f = tmp_path / "compose.yaml"
    f.write_text(f"x: &m \"{name}\"\nservices:\n" + "".join(
        f"  s{i}:\n    image: vllm/vllm-openai:v0.10.0\n    command: [--model, *m, --port, '{9000 + i}']\n"
        for i in range(20)))
    main(["check", str(f), "--offline", "--output-format", "json"])
    out = capsys.readouterr().out
    assert len(out) < 200_000
    servers = json.loads(out)["servers"]
    assert len(servers) == 20 and all("200,004 characters" in s["model"] for s in servers)


# --- Dockerfile: a here-document never closed -----------------------------------------------------------------

def test_a_dockerfile_whose_here_document_is_never_closed_is_not_built():
    text = "FROM vllm/vllm-openai:v0.10.0\nRUN <<END\necho open\nENTRYPOINT [\"vllm\", \"serve\", \"x/y\"]\n"
    why = read_built_image(text, "Dockerfile", None, {})
    assert isinstance(why, str) and "<<END opened on line 2" in why and "unterminated heredoc" in why
    closed = read_built_image(text.replace("echo open\n", "echo open\nEND\n"), "Dockerfile", None, {})
    assert not isinstance(closed, str)
