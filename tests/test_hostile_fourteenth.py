"""One test per cause the fourteenth hostile round (benchmarks/hostile_fourteenth.py) found, each on inputs of its
own: app-template persistence read once per release (and its advancedMounts keys as strings), the overlays beside
a chart listed once, a script's assignments split with the variables they name, opentelemetry-instrument's `--`,
KV connector names that are no strings, JSON arguments nested deep or shared by many servers, a YAML key pattern
bounded as YAML bounds implicit keys, and OpenShift Template parameters filled in within a budget."""

import json
import time
import tracemalloc
from pathlib import Path

from vramlint.scan import scan

MODEL = "Qwen/Qwen2.5-1.5B-Instruct"


def _findings(tmp_path: Path, *paths: str) -> list[dict]:
    from vramlint.cli import main

    out = tmp_path / "_out.json"
    main(["check", *paths, "--offline", "--format", "json", "--output-file", str(out)])
    return json.loads(out.read_text())["findings"]


def _app_release(controllers: str, persistence: str) -> str:
    return ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: r\nspec:\n"
            "  chartRef: {kind: OCIRepository, name: app-template}\n  values:\n    controllers:\n" + controllers
            + persistence)


def _controller(cid: str) -> str:
    return (f"      {cid}:\n        containers:\n          main:\n"
            "            image: {repository: vllm/vllm-openai, tag: v0.10.0}\n"
            f"            args: [--model, {MODEL}, --tensor-parallel-size, '2']\n"
            "            resources: {limits: {nvidia.com/gpu: 2}}\n")


def test_app_template_persistence_is_read_once_per_release(tmp_path: Path):
    controllers = "".join(_controller(f"c{i}") for i in range(1500))
    items = "".join(f"      v{i}: {{type: emptyDir, globalMounts: [{{path: /v{i}}}]}}\n" for i in range(15_000))
    items += "      shm: {type: emptyDir, medium: Memory, advancedMounts: {c7: {main: [{path: /dev/shm}]}}}\n"
    f = tmp_path / "release.yaml"
    f.write_text(_app_release(controllers, "    persistence:\n" + items))
    began = time.process_time()
    servers = scan([str(f)]).servers
    took = time.process_time() - began
    assert len(servers) == 1500
    assert [s.name for s in servers if s.shm] == ["r-c7"]  # the memory volume is c7's only
    assert took < 8, took  # 1,500 x 15,000 items walked per container took minutes


def test_app_template_advanced_mounts_keys_are_strings_as_in_helm(tmp_path: Path):
    # Helm's values are JSON: the controller key 1 and advancedMounts' 1 are both "1"
    persistence = ("    persistence:\n      shm:\n        type: emptyDir\n        medium: Memory\n"
                   "        advancedMounts:\n          1:\n            main:\n              - path: /dev/shm\n")
    f = tmp_path / "release.yaml"
    f.write_text(_app_release(_controller("1"), persistence))
    (server,) = scan([str(f)]).servers
    assert server.shm is True
    assert not [x for x in _findings(tmp_path, str(f)) if x["rule"] == "VRL008"]


def test_the_overlays_beside_a_chart_are_listed_once(tmp_path: Path, monkeypatch):
    import vramlint.helm as helm

    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(f"model: {MODEL}\n")
    (chart / "templates" / "d.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    for i in range(300):
        (chart / f"cm{i}.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n")
    listed: list[str] = []
    real = helm.overlay_files

    def counting(chart_dir: str) -> list[str]:
        listed.append(chart_dir)
        return real(chart_dir)

    monkeypatch.setattr(helm, "overlay_files", counting)
    from vramlint.helm import hook

    class Entry:
        def __init__(self, path: Path) -> None:
            self.path = str(path)
            self.explicit = False

    hook.plan([Entry(p) for p in sorted(chart.rglob("*.yaml"))])
    assert len(listed) == 1  # once per chart, not once per file at its root (300 listings of 300 names)


def test_a_docker_run_script_of_many_chained_assignments_is_linear(tmp_path: Path):
    script = "#!/bin/bash\nv0=" + MODEL + "\n" + "".join(f"v{i}=$v{i - 1}\n" for i in range(1, 30_000))
    script += "docker run --gpus all vllm/vllm-openai:v0.8.5 --model $v29999 --max-model-len 999999\n"
    f = tmp_path / "serve.sh"
    f.write_text(script)
    began = time.process_time()
    findings = _findings(tmp_path, str(f))
    took = time.process_time() - began
    # every assignment's value was split with the whole table as its cache key: 5,000 took 4.6 s, 100,000 4.9 GB
    assert took < 10, took
    assert any(x["rule"] == "VRL005" and x["line"] == 30_002 for x in findings)


def test_opentelemetry_instrument_runs_the_word_after_double_dash(tmp_path: Path):
    f = tmp_path / "d.yaml"
    f.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: o}\nspec:\n  template:\n    spec:\n"
                 "      containers:\n      - name: c\n        image: vllm/vllm-openai:v0.8.5\n"
                 f"        command: [opentelemetry-instrument, --service_name, x, --, vllm, serve, {MODEL}]\n")
    (server,) = scan([str(f)]).servers
    assert server.model == MODEL  # argparse: `--` ends the options, `vllm` is the command


def test_kv_connector_names_that_are_no_strings_name_no_connector():
    from vramlint import versions

    key = versions.parse_version("0.26.0")
    transfer = {"kv_connector": "MultiConnector", "kv_connector_extra_config": {
        "connectors": [{"kv_connector": ["NixlConnector"]}, {"kv_connector": {"a": 1}}]}}
    on, why, _ = versions.hybrid_kv_cache_manager(key, "v1", {"kv_transfer_config": transfer}, {}, None)
    assert on is False and "MultiConnector" in why  # a list is unhashable: a TypeError before
    on, why, _ = versions.hybrid_kv_cache_manager(key, "v1", {"kv_transfer_config": {"kv_connector": ["x"]}}, {},
                                                  None)
    assert on is False and why == "off: a KV connector (--kv-transfer-config) (not a SupportsHMA connector)"
    nested: dict = {"kv_connector": "NixlConnector"}
    for _ in range(400):
        nested = {"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": [nested]}}
    on, _, _ = versions.hybrid_kv_cache_manager(key, "v1", {"kv_transfer_config": nested}, {}, None)
    assert on is False  # not followed past 32 levels, no RecursionError


def test_a_deeply_nested_json_argument_is_read_and_reported(tmp_path: Path):
    inner: dict = {"kv_connector": "NixlConnector"}
    for _ in range(250):  # 750 JSON levels: vLLM's json.loads takes them
        inner = {"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": [inner]}}
    f = tmp_path / "d.yaml"
    f.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
                 "      containers:\n      - name: c\n        image: vllm/vllm-openai:v0.26.0\n"
                 f"        args: [--model, {MODEL}, --max-model-len, '999999', --kv-transfer-config, "
                 f"{json.dumps(json.dumps(inner))}]\n")
    findings = _findings(tmp_path, str(f))  # the JSON report's encoder recursed per level: an internal error
    assert [x["line"] for x in findings if x["rule"] == "VRL005"] == [10]
    assert not [x for x in findings if "vramlint failed" in x["message"]]
    report = json.loads((tmp_path / "_out.json").read_text())
    assert "not shown" in json.dumps(report["servers"][0]["args"]["kv_transfer_config"])


def test_a_long_json_argument_many_servers_share_is_parsed_once_and_reported_short(tmp_path: Path):
    big = json.dumps({"kv_connector": "C" * 300_000})
    f = tmp_path / "compose.yaml"
    f.write_text(f"x-kv: &kv '{big}'\nservices:\n" + "".join(
        f"  s{i}:\n    image: vllm/vllm-openai:v0.26.0\n    command: [--model, {MODEL}, --kv-transfer-config, *kv]\n"
        for i in range(40)))
    servers = scan([str(f)]).servers
    assert len(servers) == 40
    assert all(s.args["kv_transfer_config"] is servers[0].args["kv_transfer_config"] for s in servers)
    _findings(tmp_path, str(f))
    assert (tmp_path / "_out.json").stat().st_size < 2_000_000  # 40 x 300 KB before


def test_a_megabyte_quoted_scalar_of_escapes_is_not_tried_as_a_key():
    from vramlint.yamlload import _flow_nesting_problem

    line = '            - "' + '{\\"k\\": \\"v\\", ' * 100_000 + '"\n'
    tracemalloc.start()
    try:
        assert _flow_nesting_problem("args:\n" + line, "x.yaml") is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60e6, peak  # a backtracking point per character of the would-be key: 560 MB for 2.4 MB


def _template(params: str, args: str) -> str:
    return ("apiVersion: template.openshift.io/v1\nkind: Template\nmetadata: {name: t}\nparameters:\n" + params
            + "objects:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d}\n  spec:\n    template:\n"
            "      spec:\n        containers:\n        - name: c\n          image: vllm/vllm-openai:v0.8.5\n"
            "          args:\n" + args)


def test_openshift_parameters_are_filled_within_a_budget(tmp_path: Path):
    f = tmp_path / "t.yaml"
    f.write_text(_template("- name: BIG\n  value: '" + "w" * 500_000 + "'\n",
                           f"          - --model\n          - {MODEL}\n"
                           + "          - --served-model-name\n          - ${BIG}${BIG}\n" * 400))
    began = time.process_time()
    findings = _findings(tmp_path, str(f))
    assert time.process_time() - began < 10
    said = [x for x in findings if "expansion budget" in x["message"]]
    assert len(said) == 1 and said[0]["level"] == "warning" and said[0]["line"] == 8  # the object's first line


def test_every_openshift_parameter_is_filled_in(tmp_path: Path):
    params = "".join(f"- name: P{i}\n  value: 'v{i}'\n" for i in range(12_000)) + "- name: LEN\n  value: '999999'\n"
    f = tmp_path / "t.yaml"
    f.write_text(_template(params, f"          - --model\n          - {MODEL}\n          - --max-model-len\n"
                                   "          - ${LEN}\n"))
    findings = _findings(tmp_path, str(f))
    # the 12,001st parameter was not read: `${LEN}` stayed as text ("invalid int value")
    assert not [x for x in findings if "invalid int value" in x["message"]]
    assert any("999999" in x["message"] and x["rule"] == "VRL005" for x in findings)
