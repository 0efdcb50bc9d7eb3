"""README.md and the pages of docs/ are true: every snippet in them is exercised, and every output in them is
what the tool prints now. Each rule applies to every page (README.md first, then docs/*.md), except that YAML
snippets of docs/rules.md (failing and passing deployments: tests/rules) and docs/security.md (tests/
test_security_doc.py) are checked by their own tests.

- `<!-- output: CMD -->` before a fenced block: the block is CMD's standard output (run from the repository
  root, offline, no colour). `<!-- begin generated: NAME -->` ... `<!-- end generated -->`: a region built from
  the rule modules, action.yml or the configuration schema. Regenerate both with
  `python tests/test_readme.py --update` after a change to the tool's output.
- `sh` blocks are run line by line in a scratch folder laid out as the lines expect (deploy/ etc.); the Quick
  start's first command is run as written in a fresh virtual environment.
- Links lead to files that exist and to headings that exist in them; every page of docs/ is linked from the
  README; every long option of every command is documented on some page; what docs/examples.md says each example
  gives is what `vramlint check examples/` finds.
- `yaml` / `toml` blocks are checked by what reads them: pre-commit's own config schema (pre_commit.clientlib),
  the GitHub workflow schema vendored by check-jsonschema plus action.yml's inputs, vramlint's configuration
  loader.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
OUTPUT_MARKER = re.compile(r"<!-- output: (?P<cmd>.+?) -->\n```text\n(?P<body>.*?)^```", re.M | re.S)
REGION = re.compile(r"(<!-- begin generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)

QUICK_START = ["pip install . && vramlint examples/", "pip install '.[test]' && pytest"]


def readme() -> str:
    return README.read_text(encoding="utf-8")


def pages() -> list[Path]:
    """README.md, then every page of docs/."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def texts() -> list[tuple[Path, str]]:
    return [(path, path.read_text(encoding="utf-8")) for path in pages()]


# Pages whose YAML snippets are deployments checked by their own tests, not snippets of vramlint's own files.
OWN_TESTS = {"rules.md": "tests/rules (each rule's failing and passing example)",
             "security.md": "tests/test_security_doc.py"}


def blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, body, line number of the opening fence) of every fenced block."""
    return [(m["lang"], m["body"], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def section(text: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"README has no '## {heading}' section"
    return m.group(1)


# ---------------------------------------------------------------------------------------------------------------
# Generators


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", NO_COLOR="1", PYTHONPATH=str(ROOT), COLUMNS="110")
    env.pop("HF_TOKEN", None)
    env.pop("FORCE_COLOR", None)
    return env


def command_output(cmd: str) -> str:
    argv = shlex.split(cmd)
    assert argv[0] == "vramlint", cmd
    proc = subprocess.run(
        [sys.executable, "-m", "vramlint", *argv[1:]], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode in (0, 1), f"{cmd}: exit {proc.returncode}\n{proc.stderr}"
    return proc.stdout


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def rules_table() -> str:
    from vramlint.rule import load_rules, rules_markdown

    rows = [line for line in rules_markdown(load_rules()).splitlines() if line.startswith("| [VRL")]
    assert rows
    rows = [line.replace("](#", "](docs/rules.md#", 1) for line in rows]
    return "\n".join(["| id | name | level | what it finds |", "|---|---|---|---|", *rows]) + "\n"


def action_inputs() -> str:
    from ruamel.yaml import YAML

    action = YAML(typ="safe").load((ROOT / "action.yml").read_text(encoding="utf-8"))
    lines = ["| input | default | what it does |", "|---|---|---|"]
    for name, spec in action["inputs"].items():
        default = spec.get("default", "")
        lines.append(f"| `{name}` | {f'`{default}`' if default != '' else ''} | {_cell(spec['description'])} |")
    lines += ["", "| output | what it holds |", "|---|---|"]
    for name, spec in action["outputs"].items():
        lines.append(f"| `{name}` | {_cell(spec['description'])} |")
    return "\n".join(lines) + "\n"


def config_keys() -> str:
    schema = json.loads((ROOT / "vramlint" / "schema" / "vramlint-config.schema.json").read_text(encoding="utf-8"))
    lines = ["| key | type | what it sets |", "|---|---|---|"]
    for name, spec in schema["properties"].items():
        if "$ref" in spec:
            ref = spec["$ref"].rsplit("/", 1)[-1]
            sub = schema["$defs"][ref]
            kind = "table: " + ", ".join(f"`{k}`" for k in sub.get("properties", {}))
        elif "enum" in spec:
            kind = " \\| ".join(f"`{v}`" for v in spec["enum"])
        elif spec.get("type") == "array" and spec.get("items", {}).get("$ref"):
            ref = spec["items"]["$ref"].rsplit("/", 1)[-1]
            kind = "list of tables: " + ", ".join(f"`{k}`" for k in schema["$defs"][ref].get("properties", {}))
        elif "anyOf" in spec:
            kind = " or ".join(s.get("type", "") if s.get("type") != "array" else
                               f"list of {s.get('items', {}).get('type', '')}s" for s in spec["anyOf"])
        else:
            kind = spec.get("type", "")
        default = f" Default: `{json.dumps(spec['default'])}`." if "default" in spec else ""
        lines.append(f"| `{name}` | {kind} | {_cell(spec.get('description', ''))}{default} |")
    return "\n".join(lines) + "\n"


GENERATORS = {"rules-table": rules_table, "action-inputs": action_inputs, "config-keys": config_keys}


def regenerate(text: str) -> str:
    text = REGION.sub(lambda m: m.group(1) + GENERATORS[m["name"]]() + m.group(4), text)
    return OUTPUT_MARKER.sub(lambda m: f"<!-- output: {m['cmd']} -->\n```text\n{command_output(m['cmd'])}```", text)


# ---------------------------------------------------------------------------------------------------------------
# Generated content is current


def test_every_generated_region_is_current():
    names = [m["name"] for _, text in texts() for m in REGION.finditer(text)]
    assert sorted(names) == sorted(GENERATORS), names  # each region on exactly one page
    for path, text in texts():
        for m in REGION.finditer(text):
            assert m["body"] == GENERATORS[m["name"]](), (
                f"{path.name} region {m['name']} is stale: python tests/test_readme.py --update")


def test_every_output_block_is_what_the_command_prints():
    matches = [(path, m) for path, text in texts() for m in OUTPUT_MARKER.finditer(text)]
    assert len(matches) >= 3
    assert any(path == README for path, _ in matches)  # the README's sample output
    for path, m in matches:
        assert m["body"] == command_output(m["cmd"]), (
            f"{path.name}: output of `{m['cmd']}` changed: python tests/test_readme.py --update")


def test_accuracy_table_is_filled_from_the_benchmark():
    found = [m for _, text in texts() if (m := ACCURACY.search(text))]
    assert len(found) == 1, "accuracy table markers missing (or on several pages)"
    m = found[0]
    assert m["body"].count("\n| ") >= 5, "the accuracy table is empty: python tests/test_readme.py --update-accuracy"
    assert re.search(r"^- verdicts: \d+/\d+ right", m["body"], re.M)


# ---------------------------------------------------------------------------------------------------------------
# Quick start


def test_quick_start_block_has_exactly_the_two_commands():
    quick = section(readme(), "Quick start")
    lang, body, _ = blocks(quick)[0]
    assert lang in ("sh", "bash", "shell", "console")
    commands = [line.strip() for line in body.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert commands == QUICK_START


def test_quick_start_first_command_works_in_a_fresh_environment(tmp_path):
    """`pip install . && vramlint examples/` as written, from a copy of the checkout, in a new virtual environment.

    The environment sees this one's site-packages so that dependencies need no download; vramlint itself is
    installed by the command (asserted below). The README says the command exits 1: the examples have errors.
    """
    source = tmp_path / "vramlint"
    shutil.copytree(
        ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache")
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update({"PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}", "VIRTUAL_ENV": str(venv), "HF_HUB_OFFLINE": "1"})
    env["NO_COLOR"] = "1"
    proc = subprocess.run(["bash", "-c", QUICK_START[0]], cwd=source, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"^ *--> examples/\S+\.yaml:\d+:\d+$", proc.stdout, re.M), proc.stdout
    assert re.search(r"^VRL005 \[error\] ", proc.stdout, re.M), proc.stdout
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import vramlint; print(vramlint.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert Path(where).resolve().is_relative_to(venv.resolve()), where
    assert "exits 1" in section(readme(), "Quick start")


# ---------------------------------------------------------------------------------------------------------------
# Shell snippets

# Lines that cannot run here, with the reason. Everything else in a `sh` block outside Quick start runs.
NOT_RUN = {
    "helm": "needs the helm binary and a chart",
    "pip": "installs packages (the Quick start install is tested in a fresh environment above)",
    "pre-commit": "covered by tests/test_precommit.py with the real pre-commit",
    "pytest": "is this test suite",
}


def _scratch(tmp_path: Path) -> Path:
    """A folder with what the usage snippets name: deploy/ holding the Kubernetes examples, deploy/llama.yaml."""
    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples" / "kubernetes", work / "deploy")
    shutil.copy(ROOT / "examples" / "kubernetes" / "llama-3.2-3b-t4.yaml", work / "deploy" / "llama.yaml")
    (work / ".git").mkdir()  # the configuration search stops at the repository root, as in a user's repository
    shim = tmp_path / "bin" / "vramlint"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m vramlint "$@"\n')
    shim.chmod(0o755)
    return work


def _snippet_lines() -> list[tuple[str, str]]:
    """(page, line) of every `sh` block line to run: the README's after Quick start, and every page's."""
    out = []
    for path, text in texts():
        if path == README:
            text = text[text.index("## Quick start") :]
            text = text[text.index("\n## ", 1) :]  # after Quick start
        for lang, body, _ in blocks(text):
            if lang in ("sh", "bash", "shell"):
                out += [(path.name, line.strip()) for line in body.splitlines()
                        if line.strip() and not line.strip().startswith("#")]
    return out


def test_shell_snippets_run(tmp_path):
    lines = _snippet_lines()
    assert len(lines) >= 5
    work = _scratch(tmp_path)
    env = _env()
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}"
    ran = 0
    for page, line in lines:
        words = shlex.split(line)
        if words[0] in NOT_RUN:
            continue
        proc = subprocess.run(["bash", "-c", line], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1), f"{page}: `{line}` exited {proc.returncode}:\n{proc.stderr}"
        written = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--output-file"]
        assert proc.stdout.strip() or (written and all(Path(work, f).exists() for f in written)), (
            f"{page}: `{line}` printed and wrote nothing")
        ran += 1
    assert ran >= 5
    sarif = json.loads((work / "vramlint.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"


def test_inline_commands_in_prose_are_runnable_or_known():
    """`vramlint ...` commands quoted inside sentences use real subcommands and flags."""
    from vramlint.cli import build_parser

    parser = build_parser()
    for cmd in re.findall(r"`(vramlint [^`]+)`", "\n".join(text for _, text in texts())):
        argv = shlex.split(cmd.split("|")[0])[1:]
        if not argv or argv[0] not in ("check", "explain", "inventory", "rules", "diff"):
            argv = ["check", *argv]
        try:
            parser.parse_args([a for a in argv if a != "-"] + (["-"] if "-" in argv else []))
        except SystemExit as exc:
            raise AssertionError(f"README command `{cmd}` does not parse") from exc


# ---------------------------------------------------------------------------------------------------------------
# YAML and TOML snippets


def _yaml(body: str):
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(body)


def _classify(body: str) -> str:
    doc = _yaml(body)
    if isinstance(doc, dict) and "repos" in doc:
        return "pre-commit-config"
    if isinstance(doc, dict) and "jobs" in doc:
        return "workflow"
    if body.lstrip().startswith("# .vramlint.yaml"):
        return "vramlint-config"
    raise AssertionError(f"README YAML snippet of unknown kind:\n{body}")


def _yaml_blocks() -> list[tuple[str, str, int]]:
    return [(_classify(body), body, line) for path, text in texts() if path.name not in OWN_TESTS
            for lang, body, line in blocks(text) if lang in ("yaml", "yml")]


def test_every_yaml_snippet_is_of_a_known_kind():
    kinds = [kind for kind, _, _ in _yaml_blocks()]
    assert sorted(set(kinds)) == ["pre-commit-config", "vramlint-config", "workflow"], kinds


def test_pre_commit_snippet_is_valid_for_pre_commit(tmp_path):
    from pre_commit.clientlib import load_config, load_manifest

    (hook,) = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    for kind, body, line in _yaml_blocks():
        if kind != "pre-commit-config":
            continue
        path = tmp_path / f"pre-commit-{line}.yaml"
        path.write_text(body, encoding="utf-8")
        config = load_config(str(path))  # raises InvalidConfigError on a schema error
        (repo,) = config["repos"]
        assert re.fullmatch(r"v\d+\.\d+\.\d+", repo["rev"])
        assert [h["id"] for h in repo["hooks"]] == [hook["id"]]


def test_workflow_snippet_is_valid_and_uses_the_action_correctly():
    from importlib.resources import files

    import jsonschema

    schema = json.loads(files("check_jsonschema.builtin_schemas.vendor").joinpath("github-workflows.json").read_text())
    action = _yaml((ROOT / "action.yml").read_text(encoding="utf-8"))
    workflows = [_yaml(body) for kind, body, _ in _yaml_blocks() if kind == "workflow"]
    assert workflows
    for wf in workflows:
        errors = list(jsonschema.Draft7Validator(schema).iter_errors(wf))
        assert not errors, [e.message for e in errors]
        # ruamel (YAML 1.2) keeps `on` a string key; the snippet filters pull requests by deploy paths.
        assert wf["on"]["pull_request"]["paths"]
        steps = [s for job in wf["jobs"].values() for s in job["steps"]]
        uses_action = [s for s in steps if s.get("uses", "").startswith("vramlint/vramlint@")]
        assert len(uses_action) == 1
        inputs = uses_action[0].get("with", {})
        unknown = set(inputs) - set(action["inputs"])
        assert not unknown, unknown
        # least privilege: what the snippet's inputs need, nothing more
        wanted = {"contents": "read", "security-events": "write"}
        if str(inputs.get("comment", "")).lower() == "true":
            wanted["pull-requests"] = "write"
        assert wf["permissions"] == wanted
        for step in steps:
            if step.get("uses", "").startswith("actions/"):
                assert re.search(r"@[0-9a-f]{40}$", step["uses"]), step["uses"]


def test_vramlint_config_snippets_load_without_problems(tmp_path):
    from vramlint.config import load_config

    configs = [body for kind, body, _ in _yaml_blocks() if kind == "vramlint-config"]
    tomls = [body for _, text in texts() for lang, body, _ in blocks(text) if lang == "toml"]
    assert configs and tomls
    for i, body in enumerate(configs):
        folder = tmp_path / f"yaml{i}"
        folder.mkdir()
        (folder / ".vramlint.yaml").write_text(body, encoding="utf-8")
        config, problems = load_config(str(folder / ".vramlint.yaml"), [str(folder)])
        assert not problems, problems
        assert config.file
    for i, body in enumerate(tomls):
        folder = tmp_path / f"toml{i}"
        folder.mkdir()
        (folder / "pyproject.toml").write_text(body, encoding="utf-8")
        config, problems = load_config(None, [str(folder)])
        assert not problems, problems
        assert config.file and config.file.endswith("pyproject.toml")


def test_config_snippet_mistake_would_be_caught(tmp_path):
    """The loader used above does report a bad key, so the check on the snippets is not vacuous."""
    from vramlint.config import load_config

    (tmp_path / ".vramlint.yaml").write_text("gpus-typo: 2\n", encoding="utf-8")
    _, problems = load_config(str(tmp_path / ".vramlint.yaml"), [str(tmp_path)])
    assert problems


def _anchors(text: str) -> set[str]:
    """GitHub's ids of a page's headings: lower case, punctuation dropped, spaces as '-'."""
    out = set()
    fence = False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        m = re.match(r"^#{1,6} (.+)$", line) if not fence else None
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def test_links_lead_to_files_and_headings_that_exist():
    for path, text in texts():
        for target, anchor in re.findall(r"\]\(([^)#:\s]*)(?:#([^)\s]*))?\)", text):
            file = (path.parent / target).resolve() if target else path
            assert file.exists(), f"{path.name}: link to {target} (no such file)"
            if anchor and file.suffix == ".md":
                assert anchor in _anchors(file.read_text(encoding="utf-8")), f"{path.name}: no #{anchor} in {target}"


def test_anchor_ids_follow_github():
    assert _anchors("## Budget changes in a pull request: `vramlint diff`\n## VRL001 max-model-len-at-maximum\n") == {
        "budget-changes-in-a-pull-request-vramlint-diff", "vrl001-max-model-len-at-maximum"}


def test_every_docs_page_is_linked_from_the_readme():
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)", readme()))
    assert linked == {path.name for path in pages()[1:]}


def test_readme_is_what_a_new_user_reads_in_five_minutes():
    text = readme()
    assert len(text) < 14_000, len(text)  # the rest lives in docs/
    for heading in ("Quick start", "Using vramlint", "Sample output", "Rules", "Documentation"):
        section(text, heading)
    for way in ("### On the command line", "### As a pre-commit hook", "### As a GitHub Action"):
        assert way in text


def test_every_option_of_every_command_is_documented():
    import argparse

    from vramlint.cli import build_parser

    everything = "\n".join(text for _, text in texts())
    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    missing = set()
    for name, parser in commands.choices.items():
        for action in parser._actions:
            longs = [o for o in action.option_strings if o.startswith("--") and o != "--help"]
            if longs and not any(re.search(rf"`[^`]*{re.escape(o)}\b", everything) for o in longs):
                missing.add(f"{name} {longs[0]}")
    assert not missing, sorted(missing)


def test_what_the_examples_page_says_each_example_gives_is_found():
    """docs/examples.md names, per example, the rules it triggers and those that stay quiet."""
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", "examples/", "--output-format", "json"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    found: dict[str, set[str]] = {}
    for f in json.loads(proc.stdout)["findings"]:
        found.setdefault(f["file"].removeprefix("examples/"), set()).add(f["rule"])
    text = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    bullets = re.findall(r"^- (.+?)(?=^- |^$|\Z)", text, re.M | re.S)
    checked = 0
    for bullet in bullets:
        files = re.findall(r"`([\w./-]+\.yaml)`", bullet)
        rules = set(re.findall(r"\bVRL\d{3}\b", bullet))
        if not files or not rules:
            continue
        quiet = set(re.findall(r"\b(VRL\d{3}) to stay quiet", bullet))
        there = set().union(*(found.get(f, set()) for f in files))
        assert rules - quiet <= there, (files, rules - quiet - there)
        assert not quiet & there, (files, quiet & there)
        checked += 1
    assert checked >= 5


ACCURACY = re.compile(r"(<!-- begin accuracy-table: (?P<cmd>.+?) -->\n)(?P<body>.*?)(<!-- end accuracy-table -->)", re.S)
BENCH_ROW = re.compile(
    r"^(?P<case>row \d+|extra|public P\d+): (?P<what>.+?)\s{2,}(?P<weights>[\d.]+%|-)\s+(?P<kv>[\d.]+%|-)\s*(?P<unit>GiB|blocks|tokens)?\s+"
    r"(?P<verdict>right|WRONG|-)\s*$"
)


# The per-category lines of the benchmark's summary: name, cases, weights, KV, verdicts.
CATEGORY_ROW = re.compile(r"^(.+?)\s+(\d+) \| (.+?)\s+\| (.+?)\s+\| (\S+)\s*$")


def accuracy_table(output: str) -> str:
    """The benchmark's per-case lines and its summary as markdown (the benchmark reads ../shared, so the
    README table is refreshed by hand with `python tests/test_readme.py --update-accuracy`, not by the tests)."""
    lines = ["| case | model, GPU, max_model_len | weights error | KV cache error | verdict |", "|---|---|---:|---:|---|"]
    for line in output.splitlines():
        m = BENCH_ROW.match(line)
        if m:
            kv = f"{m['kv']} ({m['unit']})" if m["unit"] else m["kv"]
            lines.append(f"| {m['case']} | {_cell(m['what'])} | {m['weights']} | {kv} | {m['verdict']} |")
    summary = [line.strip() for line in output.splitlines() if re.match(r"^(cases run|weights|KV cache|verdicts):", line)]
    table = "\n".join(lines) + "\n\n" + "".join(f"- {line}\n" for line in summary)
    categories = [m.groups() for m in map(CATEGORY_ROW.match, output.splitlines()) if m]
    if categories:
        table += ("\n| rows | cases | weights: compared / median / max / within 2% | KV cache: compared / median / max / "
                  "above 10% / share within 10% | verdicts right |\n|---|---:|---|---|---|\n")
        table += "".join(f"| {name.strip()} | {n} | {w} | {kv} | {v} |\n" for name, n, w, kv, v in categories)
    return table


def regenerate_accuracy(text: str) -> str:
    def fill(m: re.Match) -> str:
        proc = subprocess.run(shlex.split(m["cmd"]), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return m.group(1) + accuracy_table(proc.stdout) + m.group(4)

    return ACCURACY.sub(fill, text)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1:] in (["--update"], ["--update-accuracy"]):
        fill = regenerate if sys.argv[1] == "--update" else regenerate_accuracy
        for path, text in texts():
            updated = fill(text)
            if updated != text:
                path.write_text(updated, encoding="utf-8")
                print(f"{path.relative_to(ROOT)} regenerated")
    else:
        print(__doc__)
