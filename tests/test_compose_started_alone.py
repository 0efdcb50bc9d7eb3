"""VRL007 on a compose file that the repository starts one service at a time (issue 9, audit19 H1): the engines'
sum is certain only for a plain `docker compose up`; a llama-swap config or a script in the scanned paths that runs
`docker compose -f FILE up SERVICE` makes it a warning "if they are started together". Nothing outside the scanned
paths is read."""

from __future__ import annotations

import json

from vramlint.cli import main

CATALOG = "services:\n" + "".join(f"""  {name}:
    image: vllm/vllm-openai:v0.10.1
    command: ["--model", "facebook/opt-125m", "--gpu-memory-utilization", "0.6"]
    deploy:
      resources:
        reservations:
          devices:
            - {{driver: nvidia, count: all, capabilities: [gpu]}}
""" for name in ("chat", "coder", "embed"))


def _vrl007(paths, capsys, *extra):
    main(["check", *map(str, paths), "--offline", "--output-format", "json", "--select", "VRL007", *extra])
    report = json.loads(capsys.readouterr().out)
    return [(f["level"], f["line"], f["message"]) for f in report["findings"] if f["rule"] == "VRL007"]


def _tree(tmp_path, starter_name=None, starter=None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "models.yml").write_text(CATALOG)
    if starter_name:
        path = tmp_path / starter_name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(starter)
    return tmp_path


def test_without_evidence_of_single_starts_the_sum_is_an_error(tmp_path, capsys):
    found = _vrl007([_tree(tmp_path)], capsys)
    assert [(level, "started together" in msg) for level, _, msg in found] == [("error", False)]


def test_a_script_that_starts_one_service_makes_it_a_warning_said_once(tmp_path, capsys):
    tree = _tree(tmp_path, "scripts/serve.sh", "#!/bin/sh\nset -e\ndocker compose -f ../models.yml up -d coder\n")
    found = _vrl007([tree], capsys)
    assert len(found) == 1
    level, line, message = found[0]
    assert level == "warning" and "adds up to 1.80 if they are started together" in message
    assert "scripts/serve.sh:3" in message
    # the same line as the error it replaces
    assert line == _vrl007([_tree(tmp_path / "plain")], capsys)[0][1]


def test_a_llama_swap_config_with_macros_is_evidence(tmp_path, capsys):
    config = """macros:
  up: "docker compose --env-file /srv/models.env -f /srv/models.yml up --force-recreate"
  down: "docker compose -f /srv/models.yml down"
models:
  chat:
    cmd: ${up} chat
    cmdStop: ${down} chat
  coder:
    cmd: ${up} coder
    cmdStop: ${down} coder
"""
    found = _vrl007([_tree(tmp_path, "config/swap.yaml", config)], capsys)
    assert [level for level, _, _ in found] == ["warning"]
    assert "config/swap.yaml:6 (and 1 more place)" in found[0][2]


def test_a_makefile_target_taking_the_service_as_a_variable_is_evidence(tmp_path, capsys):
    tree = _tree(tmp_path, "Makefile", "up-%:\n\tdocker-compose -f models.yml up -d $*\n")
    assert [level for level, _, _ in _vrl007([tree], capsys)] == ["warning"]


def test_starting_them_all_or_another_file_is_no_evidence(tmp_path, capsys):
    tree = _tree(tmp_path, "run.sh", "docker compose -f models.yml up -d\n"
                                      "docker compose -f other.yml up -d chat\n"
                                      "docker compose -f models.yml up -d chat coder\n")
    assert [level for level, _, _ in _vrl007([tree], capsys)] == ["error"]


def test_scripts_outside_the_scanned_paths_are_not_read(tmp_path, capsys):
    tree = _tree(tmp_path, "run.sh", "docker compose -f models.yml up -d chat\n")
    # the compose file named alone: its folder's script is not among the scanned paths
    assert [level for level, _, _ in _vrl007([tree / "models.yml"], capsys)] == ["error"]
    # an excluded script is not read either
    assert [level for level, _, _ in _vrl007([tree], capsys, "--exclude", "run.sh")] == ["error"]


def test_a_macro_written_in_itself_is_no_command_and_costs_little(tmp_path, capsys):
    import time

    config = "macros:\n  a: '" + "${a}" * 50 + "'\nmodels:\n" + "".join(
        f"  m{i}:\n    cmd: '${{a}} docker compose -f models.yml up chat'\n" for i in range(300))
    tree = _tree(tmp_path, "swap.yaml", config)
    started = time.process_time()
    found = _vrl007([tree], capsys)
    assert time.process_time() - started < 5
    # the command written after the macro is still read as written (the expansion, past its bound, is dropped)
    assert [level for level, _, _ in found] == ["warning"]
