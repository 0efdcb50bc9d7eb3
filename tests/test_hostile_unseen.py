"""The fourth round of hostile inputs (benchmarks/hostile_unseen.py), the cheap ones as tests: each crashed,
read outside the tree, missed its finding or put the wrong one before the fix it holds.

Each case is written to tmp_path and run through the real CLI in its own process, as CI runs vramlint.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.test_hostile_bounds import ROOT, deployment, findings, line_of, run_cli, write

QWEN = ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]
FORMATS = ("json", "github", "sarif", "markdown", "gitlab", "junit", "text")


def run_formats(folder: Path) -> dict[str, str]:
    """Every output format of one run, each written with --output-file; the run must end as a run (0 or 1)."""
    cmd = [sys.executable, "-m", "vramlint", "check", ".", "--offline"]
    for fmt in FORMATS:
        cmd += ["--output-format", fmt, "--output-file", str(folder.parent / f"out.{fmt}")]
    proc = subprocess.run(cmd, cwd=folder, env=dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1"),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return {fmt: (folder.parent / f"out.{fmt}").read_text(encoding="utf-8") for fmt in FORMATS}


def test_a_file_name_that_is_not_utf8_is_reported_escaped_in_every_format(tmp_path):
    # os.fsdecode gives such a name as surrogate escapes, which no UTF-8 writer accepts: the run used to stop
    # with an internal error writing the report (and in SARIF's and GitLab's fingerprints)
    tree = tmp_path / "tree"
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    (tree / os.fsdecode(b"d\xff")).mkdir(parents=True)
    (tree / os.fsdecode(b"d\xff") / os.fsdecode(b"x\xe9.yaml")).write_text(bad)
    out = run_formats(tree)
    assert "d\\udcff/x\\udce9.yaml" in out["text"] and "d\\udcff/x\\udce9.yaml" in out["github"]
    sarif = json.loads(out["sarif"])
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert uris == {"d%FF/x%E9.yaml"}  # the name's bytes, percent-encoded as on disk
    assert json.loads(out["gitlab"])[0]["fingerprint"]
    assert [f["rule"] for f in json.loads(out["json"])["findings"]] == ["VRL005"]


def test_a_gitignore_that_links_out_of_the_tree_is_not_read(tmp_path):
    # git (2.32+) does not follow a .gitignore link; vramlint read /etc/passwd or a runner's file through one
    secret = tmp_path / "secret.txt"
    secret.write_text("deploy.yaml\n")  # would hide the deployment if it were read as patterns
    tree = tmp_path / "tree"
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    write(tree, {".git/HEAD": "ref: refs/heads/main\n", "deploy.yaml": bad, "sub/x.yaml": bad})
    (tree / ".gitignore").symlink_to(secret)
    (tree / ".git" / "info").mkdir()
    (tree / ".git" / "info" / "exclude").symlink_to(secret)
    (tree / "sub" / ".gitignore").symlink_to(secret)
    _, report, err = run_cli(tree)
    assert {f["file"] for f in findings(report, "VRL005")} == {"deploy.yaml", "sub/x.yaml"}
    assert "a symbolic link: not followed" in err


def test_an_info_exclude_link_inside_the_repository_is_still_applied(tmp_path):
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    write(tmp_path, {".git/HEAD": "ref: refs/heads/main\n", "ignores.txt": "skipped.yaml\n", "deploy.yaml": bad,
                     "skipped.yaml": bad})
    (tmp_path / ".git" / "info").mkdir()
    (tmp_path / ".git" / "info" / "exclude").symlink_to(tmp_path / "ignores.txt")
    _, report, _ = run_cli(tmp_path)
    assert {f["file"] for f in findings(report, "VRL005")} == {"deploy.yaml"}


def test_a_configuration_file_that_is_a_fifo_or_a_folder_is_said_not_passed_over(tmp_path):
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    for kind in ("fifo", "folder", "dangling"):
        tree = tmp_path / kind
        write(tree, {"deploy.yaml": bad})
        config = tree / ".vramlint.yaml"
        if kind == "fifo":
            os.mkfifo(config)
        elif kind == "folder":
            config.mkdir()
        else:
            config.symlink_to(tree / "gone.yaml")
        code, report, _ = run_cli(tree, timeout=20)
        said = [(f["file"], f["level"]) for f in findings(report, "VRL102")]
        assert said == [(".vramlint.yaml", "warning")], (kind, said)
        assert code == 1 and findings(report, "VRL005")  # the defaults apply, the run goes on


def test_max_model_len_below_one_as_each_vllm_release_reads_it(tmp_path):
    # read in the wheels: 0.8.5 and 0.12 do not check it, 0.13.0 declares gt=0, 0.14.0 ge=-1 with -1/auto to fit
    cases = {("v0.8.5", "0"): "warning", ("v0.8.5", "auto"): "error", ("v0.13.0", "-1"): "error",
             ("v0.14.0", "-1"): None, ("v0.14.0", "auto"): None, ("v0.14.0", "0"): "warning",
             ("v0.14.0", "-2"): "error"}
    files = {f"d{i}.yaml": deployment(QWEN + ["--max-model-len", value], image=f"vllm/vllm-openai:{image}")
             for i, (image, value) in enumerate(cases)}
    write(tmp_path, files)
    _, report, _ = run_cli(tmp_path)
    got = {f["file"]: (f["level"], f["line"]) for f in findings(report, "VRL005")}
    for i, want in enumerate(cases.values()):
        assert (got.get(f"d{i}.yaml") or (None,))[0] == want, (list(cases)[i], got.get(f"d{i}.yaml"))
        if want:
            assert got[f"d{i}.yaml"][1] == 16  # the value's line


COMPOSE_HEAD = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n"


def test_compose_include_outside_the_tree_or_missing_is_said_on_its_line(tmp_path):
    tree = tmp_path / "tree"
    (tmp_path / "outside.yaml").write_text("services:\n  x:\n    image: vllm/vllm-openai:v0.8.5\n")
    write(tree, {"compose.yaml": "include:\n  - ../outside.yaml\n  - path: [inside.yaml, gone.yaml]\n"
                 "    env_file: /etc/passwd\n" + COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n",
                 "inside.yaml": "services:\n  y:\n    image: busybox\n"})
    _, report, _ = run_cli(tree)
    got = {(f["line"], f["level"], f["message"].split(":")[0]) for f in findings(report, "VRL102")}
    assert got == {(2, "warning", "include ../outside.yaml is outside the scanned tree"),
                   (3, "note", "include gone.yaml is not in the repository (compose fails without it)"),
                   (4, "warning", "include /etc/passwd is outside the scanned tree")}, got
    assert "outside.yaml" not in json.dumps(report["servers"])


def test_a_vllm_config_from_a_compose_secret_or_config_is_read_from_its_file(tmp_path):
    compose = (COMPOSE_HEAD + "    command: --model Qwen/Qwen2.5-1.5B-Instruct --config /run/secrets/vllm\n"
               "    secrets: [vllm]\n"
               "  other:\n    image: vllm/vllm-openai:v0.8.5\n"
               "    command: --model Qwen/Qwen2.5-1.5B-Instruct --config /etc/vllm.yaml\n"
               "    configs: [{source: c, target: /etc/vllm.yaml}]\n"
               "  leak:\n    image: vllm/vllm-openai:v0.8.5\n"
               "    command: --model Qwen/Qwen2.5-1.5B-Instruct --config /run/secrets/p\n    secrets: [p]\n"
               "secrets:\n  vllm: {file: ./vllm.yaml}\n  p: {file: /etc/passwd}\nconfigs:\n  c: {file: ./vllm.yaml}\n")
    write(tmp_path, {"compose.yaml": compose, "vllm.yaml": "max-model-len: 999999\n"})
    _, report, _ = run_cli(tmp_path)
    errors = {(f["file"], f["line"]) for f in findings(report, "VRL005")}
    assert errors == {("vllm.yaml", 1)} or {f["file"] for f in findings(report, "VRL005")} == {"vllm.yaml"}, errors
    servers = {s["name"]: s for s in report["servers"]}
    assert servers["vllm"]["args"].get("max_model_len") == 999999
    assert servers["other"]["args"].get("max_model_len") == 999999
    notes = [f["message"] for f in report["findings"] if f["line"] == 12 and f["file"] == "compose.yaml"]
    assert any("/etc/passwd not read (outside the scanned tree)" in m for m in notes), notes
    assert "root:" not in json.dumps(report)


def test_inventory_puts_the_configurations_problems_in_its_output(tmp_path):
    write(tmp_path, {".vramlint.yaml": "render-helm: true\nexclude: 5\n", "d.yaml": deployment(QWEN)})
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    table = subprocess.run([sys.executable, "-m", "vramlint", "inventory", "."], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert table.returncode == 0 and "Traceback" not in table.stderr
    assert "problem: .vramlint.yaml:2:10: 'exclude': expected an array" in table.stdout
    assert "exclude" not in table.stderr  # said once, in the output
    doc = json.loads(subprocess.run([sys.executable, "-m", "vramlint", "inventory", ".", "--format", "json"],
                                    cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60).stdout)
    # render-helm is said on its own line though nothing of the file applies (hostile26)
    assert [(p["file"], p["line"], p["level"]) for p in doc["problems"]] == [(".vramlint.yaml", 2, "error"),
                                                                             (".vramlint.yaml", 1, "note")]


def test_a_compose_extends_cycle_across_files_is_an_error_on_each_extends(tmp_path):
    write(tmp_path, {
        "a.yaml": "services:\n  x:\n    extends: {file: b.yaml, service: y}\n    image: vllm/vllm-openai:v0.8.5\n",
        "b.yaml": "services:\n  y:\n    extends: {file: c.yaml, service: z}\n    image: vllm/vllm-openai:v0.8.5\n",
        "c.yaml": "services:\n  z:\n    extends: {file: a.yaml, service: x}\n"
                  "    command: --model Qwen/Qwen2.5-1.5B-Instruct\n    image: vllm/vllm-openai:v0.8.5\n",
        "d.yaml": "services:\n  p:\n    extends: q\n  q:\n    extends: p\n    image: vllm/vllm-openai:v0.8.5\n"})
    _, report, _ = run_cli(tmp_path, timeout=30)
    cycles = {(f["file"], f["line"], f["level"]) for f in findings(report, "VRL102") if "circular" in f["message"]}
    assert cycles == {("a.yaml", 3, "error"), ("b.yaml", 3, "error"), ("c.yaml", 3, "error"), ("d.yaml", 3, "error"),
                      ("d.yaml", 5, "error")}, cycles


def test_dotenv_values_are_interpolated_as_compose_does_and_bounded(tmp_path):
    compose = COMPOSE_HEAD + "    command: --model ${M} --max-model-len 999999 --served-model-name ${D} ${Q}\n"
    env = ("A=Qwen\nB=${A}/Qwen2.5-1.5B-Instruct\nM=${UNSET:-${B}}\nQ='${A}'\nD0=xx\n"
           + "".join(f"D{i}=${{D{i - 1}}}${{D{i - 1}}}\n" for i in range(1, 40)) + "D=${D39}\n"
           + "N=" + "".join(f"${{V{i}:-" for i in range(50)) + "x" + "}" * 50 + "\n")
    write(tmp_path, {"compose.yaml": compose, ".env": env})
    _, report, _ = run_cli(tmp_path, timeout=30)
    assert report["servers"][0]["model"] == "Qwen/Qwen2.5-1.5B-Instruct"  # through two .env lines and a default
    assert [(f["file"], f["line"]) for f in findings(report, "VRL005")] == [("compose.yaml", 4)]
    bounded = {(f["line"], f["message"]) for f in findings(report, "VRL102")}
    assert bounded == {(21, "D16: its value expands past 100,000 characters (vramlint's bound): unknown"),
                       (46, "N: its value nests `${...}` deeper than vramlint reads (32 levels; compose reads them all): unknown")}, bounded


def test_command_args_and_env_of_the_wrong_type_are_refused_on_their_line(tmp_path):
    text = deployment(QWEN).replace("          args:\n", "          command: 5\n          env: 'x'\n          args:\n")
    text += "---\n" + deployment(["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--port"]).replace(
        '            - "--port"\n', "            - 8000\n            - true\n            -\n")
    write(tmp_path, {"d.yaml": text})
    _, report, _ = run_cli(tmp_path)
    got = {(f["line"], f["message"].split(": ")[2].split(" must")[0]) for f in findings(report, "VRL102")
           if "rejects this object" in f["message"]}
    assert got == {(line_of(text, "command: 5"), "spec.template.spec.containers[0].command"),
                   (line_of(text, "env: 'x'"), "spec.template.spec.containers[0].env"),
                   (line_of(text, "- 8000"), "spec.template.spec.containers[0].args[2]"),
                   (line_of(text, "- true"), "spec.template.spec.containers[0].args[3]")}, got


def test_gitignore_negations_pick_the_files_git_itself_picks(tmp_path):
    # `*` then `!*/` re-includes every folder for git; pathspec's GitIgnoreSpec let the file pattern win on them
    bad = deployment(QWEN + ["--max-model-len", "999999"])
    files = {"a.yaml": bad, "sub/x.yaml": bad, "sub/deeper/y.yaml": bad, "build/z.yaml": bad, "sub/n.txt": "x"}
    write(tmp_path, {**files, ".gitignore": "*\n!*/\n!*.yaml\nbuild/\n"})
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env=env)
    listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=tmp_path, check=True,
                            env=env, capture_output=True, text=True).stdout.split()
    _, report, _ = run_cli(tmp_path)
    assert {f["file"] for f in findings(report, "VRL005")} == {p for p in listed if p.endswith(".yaml")} \
        == {"a.yaml", "sub/x.yaml", "sub/deeper/y.yaml"}
