"""Start-up: one small file or `--version` loads only what that run needs (pre-commit runs vramlint on every commit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: small
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"]
          resources:
            limits:
              nvidia.com/gpu: "1"
"""

# run the CLI in-process, then list the vramlint modules that run imported
PROBE = """\
import contextlib, io, json, sys
from vramlint.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(m for m in sys.modules if m.startswith("vramlint")),
                  "libraries": sorted(m for m in ("ruamel.yaml", "multiprocessing", "pydantic", "jsonschema")
                                      if m in sys.modules)}))
"""


def probe(*argv, cwd):
    env = {**os.environ, "PYTHONPATH": ROOT}
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, cwd=cwd, env=env,
                          check=True)
    return json.loads(proc.stdout.splitlines()[-1])


def test_version_needs_no_parser_and_no_command(tmp_path):
    from vramlint import __version__

    got = probe("--version", cwd=tmp_path)
    assert got["code"] == 0 and got["out"] == f"vramlint {__version__}\n"
    assert not any(m.startswith("vramlint.commands") for m in got["modules"])


def test_one_deployment_loads_only_its_command_and_no_join_it_does_not_need(tmp_path):
    (tmp_path / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    got = probe("check", "--offline", "--output-format", "json", "deploy.yaml", cwd=tmp_path)
    assert got["code"] in (0, 1)
    assert json.loads(got["out"])["findings"] is not None  # the check really ran
    loaded = set(got["modules"])
    assert "vramlint.commands.check" in loaded
    # other commands' modules and the KServe join are for other runs
    assert not loaded & {"vramlint.commands.explain", "vramlint.commands.inventory", "vramlint.commands.rules",
                         "vramlint.extract.kserve", "vramlint.extract.llmaz"}
    # libyaml reads the file: ruamel's round-trip loader is for --fix and what libyaml leaves to it; one file
    # starts no process pool; the configuration's validators are for a configuration file
    assert got["libraries"] == []


def test_each_command_parses_as_with_the_full_parser():
    from vramlint.cli import COMMANDS, build_parser

    full = build_parser()
    for argv in (["check", "--offline", "--gpu", "L4", "a.yaml"], ["inventory", "--values", "v.yaml", "x"],
                 ["explain", "--gpu", "T4", "--", "vllm", "serve", "m"], ["rules", "VRL001"]):
        assert argv[0] in COMMANDS
        assert vars(build_parser(argv[0]).parse_args(argv)) == vars(full.parse_args(argv))


NOT_FOR_ONE_CLEAN_FILE = {
    "vramlint.hub",  # the Hub client (sockets, threads): an offline run resolves from the catalog
    "vramlint.fixes",  # fixes are built for findings; a clean file has none
    "vramlint.report.json", "vramlint.report.sarif", "vramlint.report.github", "vramlint.report.gitlab",
    "vramlint.report.junit", "vramlint.report.markdown", "vramlint.report.concise",  # formats not asked for
    "vramlint.config_schema", "vramlint.helm.render", "vramlint.baseline", "vramlint.fixing",
}


def test_one_clean_file_in_text_loads_no_other_format_no_hub_client_and_no_fixes(tmp_path):
    on_l4 = DEPLOY.replace("    spec:\n      containers:", "    spec:\n      nodeSelector:\n"
                           "        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:")
    assert on_l4 != DEPLOY
    (tmp_path / "deploy.yaml").write_text(on_l4, encoding="utf-8")
    got = probe("check", "--offline", "deploy.yaml", cwd=tmp_path)
    assert got["code"] == 0 and got["out"].startswith("All checks passed"), got["out"]
    loaded = set(got["modules"])
    assert "vramlint.report.text" in loaded and "vramlint.assess" in loaded  # the run really checked the file
    assert not loaded & NOT_FOR_ONE_CLEAN_FILE
    assert got["libraries"] == []


def test_version_loads_no_model_yaml_or_dataclasses(tmp_path):
    code = ("import sys; from vramlint.cli import main; main(['--version']); "
            "print(sorted(m for m in ('dataclasses', 'yaml', 'json', 'vramlint.model', 'vramlint.textsafe') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": ROOT}, check=True)
    assert proc.stdout.splitlines()[-1] == "[]"
