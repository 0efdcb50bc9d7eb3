"""A launch script's CUDA_VISIBLE_DEVICES is the server's GPU count only when assigned before its command and
when no `ray start` comes first: after `ray start` the engine runs on the Ray cluster (one node's devices are
not its count), and an assignment after the command belongs to a later command."""

from __future__ import annotations

import json

from vramlint.cli import main


def _findings(tmp_path, capsys, text):
    path = tmp_path / "serve.sh"
    path.write_text(text)
    main(["check", str(path), "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)["findings"]


def _errors(findings, rule):
    return [f for f in findings if f["rule"] == rule and f["level"] == "error"]


def test_devices_assigned_before_the_command_still_bound_it(tmp_path, capsys):
    findings = _findings(tmp_path, capsys, "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\n"
                                           "vllm serve facebook/opt-125m --tensor-parallel-size 4\n")
    assert len(_errors(findings, "VRL006")) == 1


def test_an_assignment_after_the_command_is_not_its_devices(tmp_path, capsys):
    findings = _findings(tmp_path, capsys, "#!/bin/bash\nvllm serve facebook/opt-125m --tensor-parallel-size 4\n\n"
                                           "export CUDA_VISIBLE_DEVICES=0,1\npython eval.py\n")
    assert not [f for f in findings if f["rule"] == "VRL006"]


def test_after_ray_start_the_shells_devices_are_one_nodes_not_the_engines(tmp_path, capsys):
    # the head's node and a second node's join, written in one notes file, then the engine over both
    findings = _findings(tmp_path, capsys, "export CUDA_VISIBLE_DEVICES=0,1,2,3\nray start --head --port 6379\n\n"
                                           "export CUDA_VISIBLE_DEVICES=0,1\nray start --address=10.0.0.1:6379\n\n"
                                           "vllm serve facebook/opt-125m --tensor-parallel-size 4 "
                                           "--pipeline-parallel-size 2\n")
    assert not [f for f in findings if f["rule"] == "VRL006"]
    notes = [f["message"] for f in findings if "Ray cluster" in f["message"]]
    assert len(notes) == 1 and "line 2" in notes[0]
