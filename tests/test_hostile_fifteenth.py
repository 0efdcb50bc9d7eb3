"""One test per cause the fifteenth hostile round (benchmarks/hostile_fifteenth.py) found, each on inputs of its
own: CUDA-graph capture sizes and speculative token counts that are no finite integers or number in the billions,
SkyPilot accelerator counts of `.inf`/`.nan`, refused joined flag words spliced in linear time, `--diff` and `vramlint
diff` output that cannot start a workflow command, a hand-made BASE tree holding a file and a folder of one name,
SARIF embedded links, Unicode's bidi marks, long suppression reasons, configuration overrides matched in one pass,
and a baseline file nested past Python's JSON reader."""

from __future__ import annotations

import json
import os
import subprocess
import time
import warnings
from pathlib import Path

import pytest

from vramlint.cli import main

MODEL = "Qwen/Qwen2.5-1.5B-Instruct"


def _deployment(args: list[str], name: str = "llm", image: str = "vllm/vllm-openai:v0.13.0") -> str:
    lines = "".join(f"            - {json.dumps(a)}\n" for a in ["--model", MODEL, *args])
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\nspec:\n  template:\n    spec:\n"
            "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
            f"        - name: vllm\n          image: {image}\n          args:\n{lines}"
            "          resources:\n            limits:\n              nvidia.com/gpu: \"1\"\n")


def _findings(tmp_path: Path, *argv: str) -> list[dict]:
    out = tmp_path / "_out.json"
    main(["check", *argv, "--offline", "--format", "json", "--output-file", str(out)])
    return json.loads(out.read_text())["findings"]


# ---------------------------------------------------------------------- budget inputs past what is sized


@pytest.mark.parametrize("image,args,flag", [
    # 0.12+: the grid up to min(max_cudagraph_capture_size, max_num_batched_tokens) is 6 billion sizes
    ("v0.13.0", ["--max-cudagraph-capture-size", "90000000000", "--max-num-batched-tokens", "90000000000"],
     "--max-cudagraph-capture-size"),
    ("v0.13.0", ["--compilation-config", '{"max_cudagraph_capture_size": 90000000000}',
                 "--max-num-batched-tokens", "90000000000"], "--compilation-config"),
    # 0.10: one --cuda-graph-sizes value N is [1, 2, 4] + range(8, N + 1, 8)
    ("v0.10.2", ["--cuda-graph-sizes", "90000000000", "--max-num-batched-tokens", "90000000000"],
     "--cuda-graph-sizes"),
    # JSON numbers that are no integer vLLM's config takes
    ("v0.13.0", ["--compilation-config", '{"max_cudagraph_capture_size": Infinity}'], "--compilation-config"),
    ("v0.13.0", ["--compilation-config", '{"cudagraph_capture_sizes": [8, 1e400]}'], "--compilation-config"),
    ("v0.13.0", ["--speculative-config", '{"method": "ngram", "num_speculative_tokens": NaN, "prompt_lookup_max": 4}'],
     "--speculative-config"),
])
def test_unsizable_graph_inputs_are_said_on_their_flag(tmp_path: Path, image: str, args: list[str], flag: str):
    text = _deployment(args, image=f"vllm/vllm-openai:{image}")
    (tmp_path / "d.yaml").write_text(text)
    began = time.process_time()
    findings = _findings(tmp_path, str(tmp_path))
    assert time.process_time() - began < 10
    assert not [f for f in findings if f["rule"] == "VRL000"], findings  # MemoryError / OverflowError before
    flag_line = text.splitlines().index(f"            - {json.dumps(flag)}") + 1
    said = [f for f in findings if f["rule"] == "VRL010" and f["level"] == "warning"]
    assert said and said[0]["line"] in (flag_line, flag_line + 1), said
    assert "not computed" in said[0]["message"]


def test_a_large_finite_capture_size_within_max_num_batched_tokens_is_still_sized(tmp_path: Path):
    # 1e300 is an integral float (pydantic takes it as an int); max_num_batched_tokens 8192 bounds the grid
    (tmp_path / "d.yaml").write_text(_deployment(["--compilation-config", '{"max_cudagraph_capture_size": 1e300}',
                                                  "--max-num-batched-tokens", "8192"]))
    findings = _findings(tmp_path, str(tmp_path))
    assert not [f for f in findings if f["rule"] in ("VRL000", "VRL010") and "not computed" in f["message"]]


def test_skypilot_accelerator_counts_that_are_no_numbers(tmp_path: Path):
    from vramlint.scan import scan

    for i, acc in enumerate(["{A100: .inf}", "{H100: .nan, L4: .nan}", "'H100:" + "9" * 1000 + "'"]):
        (tmp_path / f"sky{i}.yaml").write_text(f"resources:\n  accelerators: {acc}\nrun: vllm serve {MODEL}\n")
    inventory = scan([str(tmp_path)])
    assert not [p for p in inventory.problems if "failed" in p.message], inventory.problems
    assert len(inventory.servers) == 3
    assert all(s.gpu is not None and s.gpu.count is None for s in inventory.servers)


# ---------------------------------------------------------------------- joined flag words


def test_refused_joined_words_are_spliced_in_linear_time():
    from vramlint.cmdline import Token, parse_vllm_args
    from vramlint.model import Location

    tokens = [Token("--model", Location("f", 1, 1)), Token(MODEL, Location("f", 2, 1))]
    tokens += [Token("--tensor-parallel-size 1", Location("f", 3 + i, 1)) for i in range(40_000)]
    before = list(tokens)
    began = time.process_time()
    inv = parse_vllm_args(tokens, "0.8.5")
    took = time.process_time() - began
    assert tokens == before  # the caller's list is not changed
    # argparse stops once, naming every word it could not place: one error (hostile_sixteenth)
    refused = [e for e in inv.startup_errors if "unrecognized arguments" in e["message"]]
    assert len(refused) == 1 and "(40,000 words, on lines 3 to 40002)" in refused[0]["message"]
    assert inv.args.get("tensor_parallel_size") in ("1", 1)
    assert took < 3, took  # the list was rebuilt for each refused word: 14 CPU-s for 40,000 (0.4 now)


# ---------------------------------------------------------------------- what reaches a CI log


def _is_command(line: str) -> bool:
    return line.lstrip().startswith("::") or "##[" in line


def test_fix_diff_cannot_start_a_workflow_command(tmp_path: Path, capsys, monkeypatch):
    text = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
            "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
            "        - name: vllm\n          image: vllm/vllm-openai:v0.8.5\n          env:\n"
            "            - name: NOTE\n              value: |\n                ::error file=a.yaml::from the file\n"
            "          args:\n            - --max-model-len\n            - '999999'  # ##[group]x\n"
            f"            - --model\n            - {MODEL}\n")
    (tmp_path / "n\n::warning::name.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    code = main(["check", ".", "--offline", "--diff", "--unsafe-fixes"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "+            - '32768'" in out  # the fix is still shown
    assert not [line for line in out.splitlines() if _is_command(line)], out
    assert "n\\n::warning::name.yaml" in out  # the name on one line, as every report shows it
    assert "shown escaped" in err


GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout.strip()


def test_diff_markdown_cannot_start_a_workflow_command(tmp_path: Path, capsys, monkeypatch):
    _git(tmp_path, "init", "-q")
    (tmp_path / "##[group]a.yaml").write_text(_deployment(["--max-model-len", "4096"]))
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "base")
    (tmp_path / "##[group]a.yaml").write_text(_deployment(["--max-model-len", "8192"]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)
    assert main(["diff", "HEAD", "--offline", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "a.yaml" in out and "changed" in out
    assert not [line for line in out.splitlines() if _is_command(line)], out


def test_diff_base_tree_with_a_file_and_a_folder_of_one_name(tmp_path: Path, capsys, monkeypatch):
    # git mktree writes such a tree; no checkout can: the clash is said and left out, the rest compared
    _git(tmp_path, "init", "-q")
    blob = _git(tmp_path, "hash-object", "-w", "--stdin", stdin=_deployment(["--max-model-len", "4096"]))
    sub = _git(tmp_path, "mktree", stdin=f"100644 blob {blob}\tinner.yaml\n")
    tree = _git(tmp_path, "mktree", stdin=f"100644 blob {blob}\tc.yaml\n040000 tree {sub}\tc.yaml\n"
                                           f"100644 blob {blob}\tdeploy.yaml\n")
    _git(tmp_path, "update-ref", "HEAD", _git(tmp_path, "commit-tree", tree, "-m", "crafted"))
    (tmp_path / "deploy.yaml").write_text(_deployment(["--max-model-len", "8192"]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)
    assert main(["diff", "HEAD", "--offline", "--format", "json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    changed = [e for e in doc["servers"] if e["file"] == "deploy.yaml"]
    assert changed and changed[0]["status"] == "changed"
    assert "both a file and a folder (c.yaml)" in captured.err


def test_sarif_messages_escape_the_brackets_of_embedded_links(tmp_path: Path):
    from vramlint.report.sarif import plain_message

    assert plain_message("no brackets") == "no brackets"
    assert plain_message("[a](https://x)") == "\\[a\\](https://x)"
    assert plain_message("\\[b]") == "\\\\\\[b\\]"  # a backslash before a bracket is escaped too
    (tmp_path / "d.yaml").write_text(_deployment(["--max-model-len", "[click](https://evil.example)"]))
    out = tmp_path / "r.sarif"
    main(["check", str(tmp_path), "--offline", "--format", "sarif", "--output-file", str(out)])
    texts = [r["message"]["text"] for r in json.loads(out.read_text())["runs"][0]["results"]]
    assert any("\\[click\\](https://evil.example)" in t for t in texts), texts
    assert not any("'[click]" in t for t in texts)


def test_bidi_marks_are_shown_escaped():
    from vramlint.textsafe import escape_name, safe_output

    assert escape_name("a\u200eb\u200fc\u061cd") == "a\\u200eb\\u200fc\\u061cd"
    assert safe_output("x\u200fy\n") == "x\\u200fy\n"


def test_a_long_suppression_reason_is_quoted_cut(tmp_path: Path):
    from vramlint.suppress import MAX_REASON_CHARS

    text = _deployment(["--max-model-len", "999999"], image="vllm/vllm-openai:v0.8.5")
    comment = "  # vramlint: ignore[VRL005] " + "q" * 50_000 + "\n"
    (tmp_path / "d.yaml").write_text(text.replace('            - "--max-model-len"\n',
                                                  '            - "--max-model-len"' + comment).replace(
        '            - "999999"\n', '            - "999999"' + comment))
    findings = _findings(tmp_path, str(tmp_path))
    suppressed = [f for f in findings if f.get("suppressed")]
    assert suppressed
    for f in suppressed:
        reason = f.get("justification") or ""
        assert len(reason) < MAX_REASON_CHARS + 40 and reason.endswith("(50,000 characters)"), reason[-60:]


def test_findings_on_one_long_line_mask_it_once(tmp_path: Path):
    from vramlint.commands.check import FileReader
    from vramlint.model import Finding, Location
    from vramlint.report import Report
    from vramlint.report.text import render

    line = '{"args":["--api-key","hf_' + "0" * 30 + '"]},' + ",".join(f'{{"args":["--model","m{i}"]}}' for i in range(40_000))
    (tmp_path / "list.yaml").write_text("[" + line + "]\n")  # one 1 MB line
    findings = [Finding("VRL005", "will-not-start", "error", "m", Location(str(tmp_path / "list.yaml"), 1, 2 + 25 * i))
                for i in range(1000)]
    began = time.process_time()
    text = "".join(render(Report(findings=findings, files_scanned=1, read_lines=FileReader("-", None))))
    took = time.process_time() - began
    assert text.count("-->") == 1000
    assert "hf_000" not in text and "hf_***" in text  # the token on the line shown is masked
    assert took < 1.5, took  # the line was masked again for each finding: 4.5 CPU-s at main


# ---------------------------------------------------------------------- configuration overrides


def test_overrides_are_matched_in_one_pass_with_glob_match_s_answers(tmp_path: Path):
    from vramlint.config import Override, _override_matcher, glob_match

    globs = ["deploy/*.yaml", "**/prod/**", "a.yaml", "x/[ab]*.yml", "[[:alpha:]]x", "**", "d/f1?.yaml", "*.json"]
    overrides = [Override(files=[g, f"extra/{i}/**"]) for i, g in enumerate(globs)]
    paths = ["deploy/a.yaml", "deploy/sub/a.yaml", "srv/prod/x.yaml", "z/a.yaml", "x/bc.yml", "ax", "d/f12.yaml",
             "extra/3/q", "m.json", "./deploy/b.yaml"]
    match = _override_matcher(overrides)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # `[[:alpha:]]`: RE2 refuses it, Python's re reads it (warning)
        for path in paths:
            expected = [i for i, o in enumerate(overrides) if any(glob_match(p, path) for p in o.files)]
            assert match(path) == expected, path
    many = [Override(files=[f"d/f{i}.yaml", f"**/x{i}/**"]) for i in range(5000)]
    began = time.process_time()
    match = _override_matcher(many)
    hits = [match(f"d/f{i}.yaml") for i in range(2000)]
    assert time.process_time() - began < 5  # 20 million regex matches before: over 30 s
    assert hits[7] == [7] and hits[1999] == [1999]


# ---------------------------------------------------------------------- a baseline in the repository


def test_a_baseline_nested_past_the_json_reader_is_a_usage_error(tmp_path: Path, capsys):
    (tmp_path / "d.yaml").write_text(_deployment(["--max-model-len", "4096"]))
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"version": 1, "findings": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code = main(["check", str(tmp_path / "d.yaml"), "--offline", "--baseline", str(baseline)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and "internal error" not in err
    assert "baseline.json" in err and "nested deeper" in err
