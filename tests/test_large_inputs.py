"""Large but legal inputs: work shared between servers that need the same (benchmarks/large_inputs.py times it)."""

from __future__ import annotations

import os

import pytest

from vramlint.assess import assess
from vramlint.budget import compute_budget
from vramlint.budget.common import FRONTEND_ONLY, sizing_args
from vramlint.model import ResolveOptions
from vramlint.scan import scan

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# odd values for every option no budget stage reads
FRONTEND_VALUES = {key: value for key, value in zip(sorted(FRONTEND_ONLY), [
    "0.0.0.0", 8001, "/tmp/s", "k", ["a", "b"], "trace", True, True, ["*"], ["GET"], ["x"], "/v1", "a.key",
    "a.crt", "ca.crt", 2, "assistant", "t.jinja", True, True, True, 10, ["m.x"], True, "hermes", True,
    "http://x:4317"] * 2, strict=False)}


def _assessments(paths: list[str]) -> list:
    inventory = scan(paths)
    return assess(inventory.servers, ResolveOptions(allow_network=False, default_gpu="L4"))


def test_every_frontend_option_has_a_test_value():
    assert set(FRONTEND_VALUES) == FRONTEND_ONLY


@pytest.mark.parametrize("folder", ["examples", "tests/fixtures/kubernetes", "tests/fixtures/compose"])
def test_budgets_do_not_depend_on_the_frontend_options(folder):
    """The budget of every sized server of the examples and fixtures is the same with each FRONTEND_ONLY option
    set to an odd value (what lets the budget caches leave them out of their keys)."""
    sized = [a for a in _assessments([os.path.join(ROOT, folder)]) if a.budget is not None and a.model is not None]
    assert len(sized) >= 3
    for a in sized:
        args = a.server.args
        with_frontend = {**args, **FRONTEND_VALUES}
        for spec in [a.gpu] if a.gpu is not None else []:
            plain = compute_budget(a.model, spec, args, a.server.env, a.vllm_version, a.gpu_count,
                                   image=a.server.image)
            odd = compute_budget(a.model, spec, with_frontend, a.server.env, a.vllm_version, a.gpu_count,
                                 image=a.server.image)
            assert odd.to_json() == plain.to_json(), (a.server.file, a.server.name)


def test_sizing_args_drops_only_the_frontend_options():
    args = {"max_model_len": 4096, "port": 8000, "served_model_name": ["x"], "tensor_parallel_size": 2}
    assert sizing_args(args) == {"max_model_len": 4096, "tensor_parallel_size": 2}
    plain = {"max_model_len": 4096}
    assert sizing_args(plain) is plain


COMPOSE_SERVICE = """\
  vllm-{i}:
    image: vllm/vllm-openai:v0.9.2
    command: --model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096 --port {port} --served-model-name s{i}
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["{i}"]
              capabilities: [gpu]
"""


def test_services_on_their_own_ports_share_one_gpu_requirement(tmp_path):
    """Compose services that differ only in their port and served name (no GPU type: a GPU requirement, 44
    budgets each) get one requirement, computed once."""
    (tmp_path / "compose.yaml").write_text("services:\n" + "".join(
        COMPOSE_SERVICE.format(i=i, port=8000 + i) for i in range(4)))
    inventory = scan([str(tmp_path)])
    assert len(inventory.servers) == 4
    out = assess(inventory.servers, ResolveOptions(allow_network=False))
    requirements = [a.gpu_requirement for a in out]
    assert requirements[0] is not None and requirements[0].fits
    assert all(r is requirements[0] for r in requirements)
    assert {a.server.args["port"] for a in out} == {8000, 8001, 8002, 8003}


def test_deployments_on_their_own_ports_share_one_budget(tmp_path):
    doc = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm-{i}
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.2
          args: [--model, Qwen/Qwen2.5-1.5B-Instruct, --max-model-len, "4096", --port, "{port}"]
          resources:
            limits:
              nvidia.com/gpu: "1"
"""
    (tmp_path / "d.yaml").write_text("---\n".join(doc.format(i=i, port=8000 + i) for i in range(3)))
    out = assess(scan([str(tmp_path)]).servers, ResolveOptions(allow_network=False))
    assert len(out) == 3 and out[0].budget is not None
    assert out[1].budget is out[0].budget and out[2].budget is out[0].budget


def test_the_fixes_of_one_file_split_its_text_once():
    """Every fix of a file's servers splits that file's one text: the lines are made once per text (a 2 MB Dynamo
    graph of 5,000 workers was split 10,000 times, 52 CPU-s), and a text that changed is split again."""
    from vramlint.fixes import forget_texts, split_lines

    text = "a: 1\r\nb: 2\nc: 3"
    lines = split_lines(text)
    assert lines == ["a: 1\r\n", "b: 2\n", "c: 3"]
    assert split_lines(text) is lines
    other = "a: 1\nb: 3\n"
    assert split_lines(other) == ["a: 1\n", "b: 3\n"]
    forget_texts()
    assert split_lines(text) == lines and split_lines(text) is not lines


DYNAMO_WORKER = """\
  - name: W{i}
    type: worker
    podTemplate:
      spec:
        containers:
        - name: main
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0
          command: [python3]
          args: [-m, dynamo.vllm, --model, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, '4']
          resources:
            limits: {{nvidia.com/gpu: '2'}}
"""


def test_each_worker_of_a_large_graph_gets_its_own_fix(tmp_path, capsys):
    import json

    from vramlint.cli import main

    (tmp_path / "graph.yaml").write_text("apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: "
                                         "{name: g}\nspec:\n  components:\n"
                                         + "".join(DYNAMO_WORKER.format(i=i) for i in range(40)))
    main(["check", str(tmp_path), "--offline", "--output-format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    fixed = [f for f in findings if f["rule"] == "VRL006" and f.get("fix") and f["fix"].get("edits")]
    lines = sorted(e["line"] for f in fixed for e in f["fix"]["edits"])
    # each worker's own GPU limit line (11 lines a worker, the first limit on line 16)
    assert lines == [16 + 11 * i for i in range(40)]


def test_numbers_too_large_past_twenty_are_said_once_with_where_they_end(tmp_path):
    """Each of the first 20 numbers past float64 (or too long to be an integer) of a file is a warning on its line;
    the others are one warning on the first of them that counts them and says the last line (50,000 `1e999`
    counts were 25,000 warnings)."""
    from vramlint.yamlload import MAX_NUMBER_PROBLEMS

    rows = "".join(f"  g{i}: 1e999\n" for i in range(60)) + "".join(f"  n{i}: {'9' * 400}\n" for i in range(25))
    (tmp_path / "x.yaml").write_text("kind: ConfigMap\nvllm: 1\ndata:\n" + rows)
    problems = [p for p in scan([str(tmp_path)]).problems if p.file.endswith("x.yaml")]
    floats = [p for p in problems if "float64" in p.message]
    ints = [p for p in problems if "digits" in p.message]
    assert len(floats) == MAX_NUMBER_PROBLEMS + 1 and len(ints) == MAX_NUMBER_PROBLEMS + 1
    assert [p.line for p in floats[:MAX_NUMBER_PROBLEMS]] == list(range(4, 4 + MAX_NUMBER_PROBLEMS))
    assert floats[-1].line == 4 + MAX_NUMBER_PROBLEMS and "the 39 more numbers beyond float64" in floats[-1].message
    assert "the last on line 63" in floats[-1].message
    assert ints[-1].line == 64 + MAX_NUMBER_PROBLEMS and "the 4 more integers too large" in ints[-1].message
    assert all(p.level == "warning" for p in floats + ints)


def test_a_shared_gpu_requirement_is_written_whole_for_each_server(tmp_path, capsys):
    """The JSON of a GPU requirement that servers share is made once and its text reused (as a shared budget's):
    each server still carries all of it, and the report is json.dumps(indent=2)'s text of its document."""
    import json

    from vramlint.cli import main

    (tmp_path / "compose.yaml").write_text("services:\n" + "".join(
        COMPOSE_SERVICE.format(i=i, port=8000 + i) for i in range(3)))
    main(["check", str(tmp_path), "--offline", "--output-format", "json"])
    out = capsys.readouterr().out
    report = json.loads(out)
    requirements = [s["gpu_requirement"] for s in report["servers"]]
    assert len(requirements) == 3 and requirements[0]["fits"] and requirements.count(requirements[0]) == 3
    assert out == json.dumps(report, indent=2) + "\n"


def test_a_checkout_of_a_few_hundred_distinct_settings_is_sized_whole(tmp_path, capsys):
    """A scan of a large checkout meets a few hundred distinct server settings (the wild benchmark's 587 files
    have more than 128): each gets its GPU requirement, and no warning says some were not computed."""
    import json

    from vramlint.cli import main

    lens = [2048 + 16 * i for i in range(200)]
    services = [COMPOSE_SERVICE.format(i=i, port=8000 + i).replace("--max-model-len 4096", f"--max-model-len {n}")
                for i, n in enumerate(lens)]
    (tmp_path / "compose.yaml").write_text("services:\n" + "".join(services))
    assert main(["check", str(tmp_path), "--offline", "--output-format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [s.get("gpu_requirement") is not None for s in report["servers"]] == [True] * len(lens)
    assert not [f for f in report["findings"] if f["rule"] == "VRL011" and f["level"] == "warning"]


def test_gpu_requirements_past_the_bound_are_one_warning(tmp_path, capsys):
    """A run computes `MAX_REQUIREMENTS` distinct GPU requirements (each a budget on every catalog GPU): the
    servers past them are not sized and VRL011 says so once, on the first of them, naming the others; a server
    whose settings repeat one already computed still gets it."""
    import json

    from vramlint.cli import main
    from vramlint.requirement import MAX_REQUIREMENTS

    lens = [1024 + i for i in range(MAX_REQUIREMENTS + 2)] + [1024]  # 2 past the bound, then the first again
    services = [COMPOSE_SERVICE.format(i=i, port=8000 + i).replace("--max-model-len 4096", f"--max-model-len {n}")
                for i, n in enumerate(lens)]
    (tmp_path / "compose.yaml").write_text("services:\n" + "".join(services))
    assert main(["check", str(tmp_path), "--offline", "--output-format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    servers = report["servers"]
    assert len(servers) == len(lens)
    sized = [s.get("gpu_requirement") is not None for s in servers]
    assert sized == [True] * MAX_REQUIREMENTS + [False, False, True]
    assert servers[-1]["gpu_requirement"] == servers[0]["gpu_requirement"]
    warnings = [f for f in report["findings"] if f["rule"] == "VRL011" and f["level"] == "warning"]
    assert len(warnings) == 1
    gpu_line = lambda s: s["line"] + 7  # noqa: E731 - the service's `- driver: nvidia` line
    assert warnings[0]["line"] == gpu_line(servers[MAX_REQUIREMENTS])
    assert warnings[0]["summary"].startswith("what 2 more servers need of a GPU was not computed")
    assert f"compose.yaml:{gpu_line(servers[MAX_REQUIREMENTS + 1])}" in warnings[0]["message"]
    notes = [f for f in report["findings"] if f["rule"] == "VRL011" and f["level"] == "note"]
    assert len(notes) == MAX_REQUIREMENTS  # one per computed requirement; the repeat is named in the first's


def test_a_large_document_the_scan_read_is_not_parsed_again():
    """The documents of a text of one document too large for the shared parses (over 64 K) are kept, once, for
    the next reader of an equal text (the fixes read the file again: a 2 MB Dynamo graph was parsed twice), with
    its problems said on the new reader's file; a stream of several documents is not held, nor a text dropped."""
    from vramlint.yamlload import forget_shared, load_each, load_shared

    body = "kind: ConfigMap\ndata:\n" + "".join(f"  k{i}: v{i}\n" for i in range(8000)) + "  k1: again\n"
    assert len(body) > 64 << 10
    forget_shared()
    handed: list = []
    problems = load_each(body, "a.yaml", handed.append, handed.clear)
    assert len(handed) == 1 and any("duplicate key" in p.message for p in problems)
    copy = "".join(list(body))  # equal, not the same object: what the fixes read of the file again
    assert copy is not body
    docs, again = load_shared(copy, "b.yaml")
    assert docs[0].data is handed[0].data and docs[0].file == "b.yaml"
    assert [(p.line, p.message) for p in again] == [(p.line, p.message) for p in problems]
    assert {p.file for p in again} == {"b.yaml"}
    assert load_shared(copy, "b.yaml", quick_refusal=True)[0][0].data is not handed[0].data  # another reading
    two = body + "---\nkind: ConfigMap\n"
    handed.clear()
    load_each(two, "a.yaml", handed.append, handed.clear)
    assert len(handed) == 2
    assert load_shared(two, "a.yaml")[0][0].data is not handed[0].data
    # load_shared's own reading of one large document is kept too, until forget_shared
    first = load_shared(body + "\n", "c.yaml")[0][0].data
    assert load_shared(body + "\n", "c.yaml")[0][0].data is first
    forget_shared()
    assert load_shared(body + "\n", "c.yaml")[0][0].data is not first


def test_a_large_config_file_a_compose_service_merges_is_parsed_once(tmp_path):
    """The compose `--config` merge reads the file through load_shared, whose parse of one large document the
    scan's own reading of the file then takes (load_each too): a config that only ruamel reads (a tag) and a
    1 MB value was read twice, ~3 CPU-s each. The service and the config file each still get its settings."""
    from vramlint.yamlload import forget_shared, load_each, load_shared

    names = ", ".join(f"n{i}" for i in range(12_000))
    config = (f"model: Qwen/Qwen2.5-1.5B-Instruct\nmax-model-len: !!int 2048\nserved-model-name: [{names}]\n"
              "max-model-len: 3072\n")
    assert len(config) > 64 << 10
    forget_shared()
    first = load_shared(config, "a.yaml")[0][0].data
    handed: list = []
    problems = load_each("".join(list(config)), "b.yaml", handed.append, handed.clear)
    assert [d.data for d in handed] == [first] and handed[0].data is first and handed[0].file == "b.yaml"
    assert [(p.file, p.line) for p in problems if "duplicate key" in p.message] == [("b.yaml", 4)]
    forget_shared()

    (tmp_path / "vllm-config.yaml").write_text(config)
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.9.2\n    command: --config /cfg/vllm-config.yaml\n"
        "    volumes: ['./:/cfg']\n")
    inventory = scan([str(tmp_path)])
    by_file = {os.path.basename(s.file): s for s in inventory.servers}
    assert by_file["compose.yaml"].args["max_model_len"] == 3072 == by_file["vllm-config.yaml"].args["max_model_len"]
    assert by_file["compose.yaml"].model == "Qwen/Qwen2.5-1.5B-Instruct"
    duplicates = {(os.path.basename(p.file), p.line) for p in inventory.problems if "duplicate key" in p.message}
    assert duplicates == {("vllm-config.yaml", 4)}
