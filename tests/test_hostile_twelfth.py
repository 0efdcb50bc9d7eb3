"""The ninth round of hostile inputs (benchmarks/hostile_twelfth.py), the cheap ones as tests: each hung, missed its
finding, put it on the wrong line or echoed what it should not before the fix it holds.

Each case is written to tmp_path and run through the real CLI in its own process, as CI runs vramlint; the
hangs are caught by the run's timeout (the inputs are sized so that the old code takes minutes).
"""

from __future__ import annotations

import random
import re
import time

from tests.test_hostile_bounds import deployment, findings, line_of, run_cli, write

QWEN = ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
BAD = deployment(QWEN + ["--max-model-len", "999999"])
COMPOSE_HEAD = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"
GPU = "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n"


def test_a_million_digit_quantity_is_refused_on_its_line_in_linear_time(tmp_path):
    # the quantity pattern (`[0-9]+\.?[0-9]*`) ran before the length check: hours on a million digits and a
    # letter; and the API server's refusal of a quantity it cannot read was not said at all
    digits = "9" * 1_000_000 + "x"
    text = BAD.replace('nvidia.com/gpu: "1"', f'nvidia.com/gpu: "{digits}"')
    write(tmp_path, {"deploy.yaml": text, "short.yaml": BAD.replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "2x"')})
    started = time.monotonic()
    _, report, _ = run_cli(tmp_path, timeout=30)
    assert time.monotonic() - started < 30
    refused = {(f["file"], f["line"]) for f in findings(report, "VRL102") if "quantities must match" in f["message"]}
    assert refused == {("deploy.yaml", line_of(text, "nvidia.com/gpu")), ("short.yaml", line_of(text, "nvidia.com/gpu"))}
    assert all(len(f["message"]) < 1000 for f in report["findings"])


def test_a_valid_quantity_form_is_not_refused(tmp_path):
    docs = "---\n".join(BAD.replace("name: llm", f"name: llm{i}").replace('nvidia.com/gpu: "1"', f"nvidia.com/gpu: {q}")
                        for i, q in enumerate(["'1'", "1", "' 1 '", "'1e0'", "'1000m'", "'.5'", "'1.'", "'+1'"]))
    write(tmp_path, {"deploy.yaml": docs})
    _, report, _ = run_cli(tmp_path)
    assert not [f for f in report["findings"] if "quantities must match" in f["message"]]


def test_a_version_of_a_million_dev_parts_is_not_a_version_and_costs_no_time(tmp_path):
    # versions._VERSION_RE's repeated suffix group and its final `-[\w.-]+` read `-dev-dev...` in every split
    runs = "0.8.5" + "-dev" * 250_000 + "!"
    write(tmp_path, {".vramlint.yaml": f"vllm-version: '{runs}'\n", "deploy.yaml": BAD,
                     "Dockerfile": f"FROM python:3.12\nRUN pip install vllm=={runs}\nENTRYPOINT vllm serve x/y\n",
                     "compose.yaml": "services:\n  v:\n    build: .\n" + GPU})
    _, report, _ = run_cli(tmp_path, timeout=30)
    assert [(f["file"], f["line"]) for f in findings(report, "VRL102") if f["file"] == ".vramlint.yaml"] == \
        [(".vramlint.yaml", 1)]
    assert findings(report, "VRL005")  # the deployment is still checked, with the defaults


def test_a_toml_table_name_of_a_million_blanks_is_read_in_linear_time(tmp_path):
    # config._TOML_HEADER's `\s*(.+?)\s*` re-read the blanks at every step of the lazy name
    write(tmp_path, {"pyproject.toml": '[tool.vramlint]\ngpu = "L4"\nnot-a-key = 1\n\n["a' + " " * 1_000_000
                     + 'b"]\nx = 1\n', "deploy.yaml": BAD})
    _, report, _ = run_cli(tmp_path, timeout=30)
    assert any(f["file"] == "pyproject.toml" and f["line"] == 3 for f in report["findings"])
    assert findings(report, "VRL005")


def test_a_templated_manifest_line_of_a_million_unclosed_actions_is_read_in_linear_time(tmp_path):
    # helm/templated: `\{\{.*?\}\}` and `%\{.*?\}` tried again from every opening of a line that never closes
    text = BAD.replace("metadata:\n  name: llm", "metadata:\n  name: {{ .Values.name }}\n  labels: {a: "
                       + "{{" * 300_000 + "}\n  annotations: {b: " + "%{" * 300_000 + "}")
    write(tmp_path, {"deploy.yaml": text})
    started = time.monotonic()
    run_cli(tmp_path, timeout=30)
    assert time.monotonic() - started < 30


def test_template_spans_are_those_of_the_patterns_they_replace():
    from vramlint.helm import templated

    go = re.compile(r"\{\{-?\s*`[^`]*`\s*-?\}\}|\{\{.*?\}\}", re.S)
    tf = re.compile(r"%\{.*?\}")
    rng = random.Random(7)
    for _ in range(50_000):
        s = "".join(rng.choice("{}`- %ab\t") for _ in range(rng.randint(0, 16)))
        assert go.sub(lambda m: f"<{m.group(0)}>", s) == templated._GO_ACTION.sub(lambda t: f"<{t}>", s), s
        assert tf.sub(lambda m: f"<{m.group(0)}>", s) == templated._TF_DIRECTIVE.sub(lambda t: f"<{t}>", s), s


def test_a_document_with_str_tags_is_read_by_the_c_load_as_ruamel_reads_it(monkeypatch):
    # a tag sent the document to ruamel's pure-Python load: 60 files of 90 KB with `!!str` took 38 s
    from vramlint import yamlload

    text = ("a: !!str v1\nb: !!str 1\nc: !!str |\n  x\nd: !!str \"q\"\nf: !!str >\n  y\ng: [!!str 0x10, é, !!str 2]\n"
            "h: !!str 'z'\nl:\n  - !!str a\n  - {m: !!str b}\n")

    def shape(v):
        if isinstance(v, dict):
            lc = getattr(getattr(v, "lc", None), "data", None) or {}
            return {str(k): shape(x) for k, x in v.items()} | {"@": {str(k): list(x) for k, x in lc.items()}}
        if isinstance(v, list):
            return [shape(x) for x in v]
        return type(v).__name__, str(v), getattr(v, "style", None), str(getattr(v, "tag", "")) if hasattr(v, "tag") else ""

    ruamel_docs, _ = yamlload._ruamel_load(text, "x.yaml")
    calls = []
    monkeypatch.setattr(yamlload, "_ruamel_load", lambda *a, **k: calls.append(a) or ([], []))
    monkeypatch.setattr(yamlload, "_ruamel_load_bounded", lambda *a, **k: calls.append(a) or ([], []))
    docs, problems = yamlload.load_text(text, "x.yaml")
    assert not calls and not problems
    assert [shape(d.data) for d in docs] == [shape(d.data) for d in ruamel_docs]
    # what it does not decide the same way stays with ruamel: an anchor, a verbatim tag, an empty value, a key
    for other in ("a: &x !!str v\n", "a: !<tag:yaml.org,2002:str> v\n", "a: !!str\nb: 1\n", "!!str k: v\n"):
        calls.clear()
        yamlload.load_text(other, "x.yaml")
        assert calls, other


def test_compose_interpolation_nested_10000_deep_is_said_and_unknown(tmp_path):
    # `${V0:-${V1:-...}}` in the command itself: one level was read, the rest taken as the model's name, and
    # nothing said (compose reads it to the end)
    nested = "".join(f"${{V{i}:-" for i in range(10_000)) + "Qwen/Qwen2.5-1.5B-Instruct" + "}" * 10_000
    write(tmp_path, {"compose.yaml": COMPOSE_HEAD + f"    command: --model {nested} --max-model-len 999999\n" + GPU})
    _, report, _ = run_cli(tmp_path)
    said = [f for f in findings(report, "VRL102") if "deeper than vramlint reads (32 levels" in f["message"]]
    assert [(f["file"], f["line"], f["level"]) for f in said] == [("compose.yaml", 4, "warning")]


def test_compose_interpolation_nested_a_few_levels_is_read_as_compose_reads_it(tmp_path):
    nested = "${A:-${B:-${C:-${D:-Qwen/Qwen2.5-1.5B-Instruct}}}}"
    write(tmp_path, {"compose.yaml": COMPOSE_HEAD + f"    command: --model {nested} --max-model-len 999999\n" + GPU,
                     ".env": "C=\n"})
    _, report, _ = run_cli(tmp_path)
    assert [(f["file"], f["line"]) for f in findings(report, "VRL005")] == [("compose.yaml", 4)]


def test_compose_interpolation_past_the_expansion_bound_is_unknown_and_said(tmp_path):
    write(tmp_path, {"compose.yaml": COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --served-model-name "
                     + "${A}" * 400_000 + " --max-model-len 999999\n" + GPU, ".env": "A=" + "x" * 100 + "\n"})
    _, report, _ = run_cli(tmp_path, timeout=30)
    assert any("expands past 100,000 characters" in f["message"] and f["line"] == 4 for f in report["findings"])


def test_a_suppression_naming_500000_rules_is_one_bounded_finding(tmp_path):
    ids = ",".join(f"ZZZ{i % 10_000:04d}" for i in range(500_000))
    text = BAD.replace('            - "--max-model-len"\n', f"            # vramlint: ignore[{ids}] reason\n"
                       '            - "--max-model-len"\n', 1)
    write(tmp_path, {"deploy.yaml": text})
    started = time.monotonic()
    _, report, _ = run_cli(tmp_path, timeout=30)
    assert time.monotonic() - started < 30
    malformed = findings(report, "VRL101")
    assert [f["line"] for f in malformed] == [line_of(text, "# vramlint:")]
    assert "9,990 more names" in malformed[0]["message"] and len(malformed[0]["message"]) < 2000
    assert findings(report, "VRL005")


def test_a_vllm_mention_after_a_million_no_break_spaces_is_found_in_linear_time(tmp_path):
    # mentions._IMAGE and its siblings began `^\s*-?\s*`: two runs of blanks side by side, quadratic on a line of
    # them; YAML indents only with spaces, so a run of U+00A0 (blank to `\s`) reached them (20,000 took 69 s)
    write(tmp_path, {"notes.yaml": "apiVersion: x/v1\nkind: Runbook\nmetadata: {name: notes}\nspec:\n  readme: |\n    "
                     + "\u00a0" * 1_000_000 + "vllm serve later\n"})
    _, report, _ = run_cli(tmp_path, timeout=30)
    assert [(f["file"], f["line"]) for f in report["findings"]] == [("notes.yaml", 6)]


def test_a_template_fail_message_cannot_start_a_second_command_once_the_runner_decodes_it(tmp_path):
    import subprocess
    import sys

    from tests.test_hostile_bounds import ROOT

    write(tmp_path, {"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
                     "chart/values.yaml": "image: vllm/vllm-openai:v0.10.2\nmodel: Qwen/Qwen2.5-1.5B-Instruct\n",
                     "chart/templates/x.yaml": '{{ fail "boom\\n::error::pwned\\r  ::stop-commands::tok" }}\n'})
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline", "--output-format", "github"],
                          cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60)
    lines = [line for line in proc.stdout.splitlines() if "boom" in line]
    assert len(lines) == 1
    decoded = lines[0].replace("%0A", "\n").replace("%0D", "\r")
    assert not [part for part in re.split(r"[\r\n]", decoded)[1:] if part.lstrip().startswith("::")]
    assert "\\::error::pwned" in decoded


def test_secrets_written_in_the_scanned_files_are_masked_in_every_report(tmp_path):
    import json as json_
    import subprocess
    import sys

    from tests.test_hostile_bounds import ROOT

    token, password = "hf_LiteralTokenWrittenInTheRepo0123456789", "s3cr3t-Passw0rd-in-a-url-7c41"
    write(tmp_path, {"compose.yaml": COMPOSE_HEAD + f"    command: --model Qwen/Qwen2.5-1.5B-Instruct --api-key {token} "
                     f"--tokenizer https://user:{password}@example.com/t --max-num-batched-tokens 8192 --max-model-len 999999\n"
                     f"    environment: {{HUGGING_FACE_HUB_TOKEN: {token}, DB_PASSWORD: plain, MODE: keep-me}}\n" + GPU})
    outs = {}
    for fmt in ("text", "json", "github", "sarif", "markdown", "gitlab", "junit"):
        proc = subprocess.run([sys.executable, "-m", "vramlint", "check", ".", "--offline", "--output-format", fmt],
                              cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1, proc.stderr[-1000:]
        outs[fmt] = proc.stdout + proc.stderr
    assert not [fmt for fmt, out in outs.items() if token in out or password in out]
    text_line = next(line for line in outs["text"].splitlines() if line.startswith("4 |"))
    assert "--api-key " + "*" * len(token) + " " in text_line and "user:" + "*" * len(password) + "@" in text_line
    server = json_.loads(outs["json"])["servers"][0]
    assert server["env"]["MODE"] == "keep-me" and server["env"]["DB_PASSWORD"] == "*****"
    assert str(server["args"]["max_model_len"]) == "999999" and str(server["args"]["max_num_batched_tokens"]) == "8192"


def test_a_script_outside_the_tree_is_said_on_the_entrypoint_that_names_it(tmp_path):
    tree = tmp_path / "tree"
    write(tree, {"compose.yaml": COMPOSE_HEAD + "    entrypoint: [bash, /up/outside.sh]\n    volumes: ['..:/up']\n" + GPU})
    (tmp_path / "outside.sh").write_text("vllm serve Qwen/Qwen2.5-1.5B-Instruct\n")
    _, report, _ = run_cli(tree)
    said = [f for f in findings(report, "VRL102") if "is not read" in f["message"]]
    assert [(f["line"], f["column"]) for f in said] == [(4, 24)]


def test_a_chart_of_many_templates_is_planned_and_listed_without_a_relpath_per_file(tmp_path, monkeypatch):
    # os.path.relpath (two abspaths and a getcwd) per template was a second of a chart of 20,000 templates
    import os

    from vramlint.helm import chart as chart_mod
    from vramlint.helm import hook

    files = {"c/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n", "c/values.yaml": "a: 1\n"}
    files.update({f"c/templates/t{i}.yaml": f"k{i}: {{{{ .Values.a }}}}\n" for i in range(500)})
    write(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    calls = []
    real = os.path.relpath
    monkeypatch.setattr(os.path, "relpath", lambda *a: calls.append(a) or real(*a))

    class Entry:
        def __init__(self, path):
            self.path, self.explicit = path, False

    hook._outermost_chart.cache_clear()
    planned = hook.plan([Entry(str(p.relative_to(tmp_path))) for p in sorted((tmp_path / "c").rglob("*.yaml"))])
    assert list(planned.charts) == ["c"] and len(planned.handled) == 502
    listed = chart_mod._template_files(chart_mod.load_chart("c"))
    assert len(calls) < 20, len(calls)
    assert len(listed) == 500 and listed[1][1:] == ("c/templates/t1.yaml", "c/templates/t1.yaml")


def test_a_configuration_of_20000_unknown_keys_says_200_and_counts_the_rest(tmp_path):
    # each unknown key's closest name was a difflib search and a finding of its own: 20,000 took 4 CPU-s
    keys = "k" * 1000 + ": 0\n" + "".join(f"unknown-key-{i}: 1\n" for i in range(20_000))
    write(tmp_path, {".vramlint.yaml": keys, "deploy.yaml": BAD})
    started = time.monotonic()
    _, report, _ = run_cli(tmp_path, timeout=30)
    assert time.monotonic() - started < 30
    said = [f for f in report["findings"] if f["file"] == ".vramlint.yaml"]
    assert len(said) == 201 and said[0]["line"] == 1 and "'kkkk" in said[0]["message"]
    assert "... (1,000 characters)" in said[0]["message"] and "unknown key 'unknown-key-0'" in said[1]["message"]
    assert said[-1]["line"] == 201 and "19,801 more unknown keys" in said[-1]["message"]
    assert "from line 201 to line 20001" in said[-1]["message"]
    assert all(len(f["message"]) < 2000 for f in said)
