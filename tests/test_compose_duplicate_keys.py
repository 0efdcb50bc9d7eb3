"""A key written twice in a compose file: compose-go's loader refuses the whole file at the first one (any depth),
so one error there and no server read from it; a Kubernetes manifest keeps the API server's last-wins reading
(audit21 C12)."""

import json
from pathlib import Path

from vramlint.cli import main
from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "compose_duplicate"


def test_compose_file_with_a_duplicate_service_is_one_error_and_no_server():
    inv = scan([str(FIX / "docker-compose.yml")])
    assert inv.servers == []
    dup = [p for p in inv.problems if "duplicate key" in p.message]
    assert [(p.level, p.line) for p in dup] == [("error", 20)]
    message = dup[0].message
    assert 'mapping key "vllm" already defined at line 8' in message and "line 20" in message
    assert "line 24" in message  # the nested HF_HOME duplicate, folded: compose stops at the first
    assert "the last one is used" not in message


def test_kubernetes_duplicate_key_stays_a_last_wins_warning():
    inv = scan([str(FIX / "deployment.yaml")])
    [server] = inv.servers
    assert server.args["max_model_len"] == 4096  # the second `args`, as the API server keeps it
    assert [(p.level, p.line) for p in inv.problems if "duplicate key" in p.message] == [("warning", 16)]


def test_the_compose_error_fails_the_run(tmp_path):
    out = tmp_path / "r.json"
    assert main(["check", str(FIX), "--offline", "--format", "json", "--output-file", str(out)]) == 1
    report = json.loads(out.read_text())
    assert [s["file"].rsplit("/", 1)[-1] for s in report["servers"]] == ["deployment.yaml"]
    assert report["summary"]["by_level"]["error"] == 1


def test_a_nested_duplicate_alone_refuses_the_compose_file_too(tmp_path):
    text = (FIX / "docker-compose.yml").read_text()
    # only the environment's HF_HOME twice: compose-go checks the keys of every mapping
    first, second = text.split("  redis:", 1)
    (tmp_path / "compose.yaml").write_text(first.replace(
        '"8192"]', '"8192"]\n    environment:\n      HF_TOKEN: a\n      HF_TOKEN: b'))
    inv = scan([str(tmp_path / "compose.yaml")])
    assert inv.servers == []
    [error] = [p for p in inv.problems if p.level == "error"]
    assert 'mapping key "HF_TOKEN" already defined at line' in error.message
