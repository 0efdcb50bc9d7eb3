"""Charts written for the project: each value-to-argument form lands on the values line that set it."""

from __future__ import annotations

import os
import shutil

import pytest

from vramlint.helm import extract_charts, overlay_files
from vramlint.helm.chart import chart_for_values_file
from vramlint.scan import scan

HERE = os.path.dirname(__file__)
FIX = os.path.relpath(os.path.join(HERE, "fixtures", "helm"))


def chart(name: str) -> str:
    return os.path.join(FIX, name)


def arg_loc(server, dest: str):
    """Where an argument was set, whether or not the vLLM argument table knows the flag."""
    if dest in server.arg_locations:
        return server.arg_locations[dest]
    return server.unknown_args["--" + dest.replace("_", "-")]


def line_of(path: str, needle: str) -> int:
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if needle in line:
                return i
    raise AssertionError(f"{needle!r} not in {path}")


def only(servers, **match):
    """The one server matching, from the chart's own values.yaml (overlay variants say `?values=`)."""
    found = [s for s in servers if all(getattr(s, k) == v for k, v in match.items())
             and "?values=" not in s.location.yaml_path]
    assert len(found) == 1, [(s.file, s.location.yaml_path) for s in servers]
    return found[0]


def test_inline_quote_range_toyaml_with_forms_map_to_values_lines():
    servers, problems, notes = extract_charts([chart("basic")])
    assert problems == []
    s = only(servers, file=os.path.join(chart("basic"), "templates", "deployment.yaml"))
    values = os.path.join(chart("basic"), "values.yaml")
    # `- --max-model-len={{ .Values.engine.maxModelLen }}`
    loc = arg_loc(s, "max_model_len")
    assert (loc.file, loc.line) == (values, line_of(values, "maxModelLen"))
    assert loc.yaml_path == "engine.maxModelLen"
    # `{{ default 256 .Values.engine.maxNumSeqs }}` with the key set: the values line
    loc = arg_loc(s, "max_num_seqs")
    assert (loc.file, loc.line) == (values, line_of(values, "maxNumSeqs"))
    # `{{- range .Values.extraArgs }} - {{ . | quote }}`: each item's own line
    assert arg_loc(s, "enable_prefix_caching").line == line_of(values, "--enable-prefix-caching")
    assert arg_loc(s, "swap_space").line == line_of(values, "--swap-space")
    # `{{- if .Values.engine.dtype }}` with dtype "" leaves the flag out, as Helm does
    assert "dtype" not in s.args and "--dtype" not in s.unknown_args
    # resources via toYaml, nodeSelector via `with` + toYaml
    assert s.gpu.count == 1
    assert s.gpu.location.file == values
    assert s.gpu.location.line in (line_of(values, "nvidia.com/gpu"), line_of(values, "gke-accelerator"))
    # image tag from `default .Chart.AppVersion`
    assert s.image == "vllm/vllm-openai:v0.6.4"
    assert s.vllm_version == "0.6.4"
    assert s.image_location.file == values


def test_separate_flag_and_quoted_value_item_maps_to_values_line():
    servers, _, _ = extract_charts([chart("basic")])
    s = only(servers)
    values = os.path.join(chart("basic"), "values.yaml")
    loc = s.arg_locations.get("gpu_memory_utilization")
    if loc is None:  # the table does not know the flag: the flag token itself is where it was written
        loc = s.unknown_args["--gpu-memory-utilization"]
        assert loc.file.endswith("deployment.yaml")
    else:
        assert (loc.file, loc.line) == (values, line_of(values, "gpuMemoryUtilization"))


def test_with_block_printf_default_int_and_toyaml_args():
    servers, problems, _ = extract_charts([chart("forms")])
    assert problems == []
    s = servers[0]
    values = os.path.join(chart("forms"), "values.yaml")
    template = os.path.join(chart("forms"), "templates", "statefulset.yaml")
    # `{{- with .Values.vllm }} - {{ .model }}` (positional model after `vllm serve`)
    assert s.model == "Qwen/Qwen2.5-7B-Instruct"
    assert (s.model_location.file, s.model_location.line) == (values, line_of(values, "model:"))
    # Helm decodes values as float64: 1048576 renders as 1.048576e+06, which vLLM cannot read as an int
    mml = arg_loc(s, "max_model_len")
    assert mml.file == values and mml.line == line_of(values, "maxModelLen")
    if "max_model_len" in s.args:
        assert s.args["max_model_len"] != 1048576
    # `{{ default 0.85 .Values.gpuMemoryUtilization }}` with the key null: the default, from the template
    gmu = arg_loc(s, "gpu_memory_utilization")
    assert (gmu.file, gmu.line) == (template, line_of(template, "default 0.85"))
    if "gpu_memory_utilization" in s.args:
        assert s.args["gpu_memory_utilization"] == pytest.approx(0.85)
    # `{{- toYaml .Values.args | nindent 12 }}`
    assert arg_loc(s, "kv_cache_dtype").line == line_of(values, "--kv-cache-dtype")
    assert arg_loc(s, "max_num_seqs").line == line_of(values, "--max-num-seqs")
    # `{{- range $name, $value := .Values.env }}`
    assert s.env == {"VLLM_ATTENTION_BACKEND": "FLASH_ATTN"}
    assert s.env_locations["VLLM_ATTENTION_BACKEND"].line == line_of(values, "VLLM_ATTENTION_BACKEND")
    # `nvidia.com/gpu: {{ .Values.gpu }}` and a product label from values
    assert s.gpu.count == 2 and s.gpu.type == "A100-80GB"
    assert s.gpu.location.file == values
    assert s.image == "vllm/vllm-openai:v0.8.5"
    assert s.replicas == 2


def test_unknown_condition_is_said_once_and_not_guessed(tmp_path):
    dst = tmp_path / "c"
    shutil.copytree(chart("forms"), dst)
    tpl = dst / "templates" / "statefulset.yaml"
    tpl.write_text(tpl.read_text().replace("{{ .Values.gpu }}", "{{ .Values.gpu | someUnknownFunc }}"))
    servers, problems, notes = extract_charts([str(dst)])
    s = servers[0]
    assert s.gpu is None or s.gpu.count is None
    assert len([n for n in notes if "not evaluated" in n]) == 1
    assert "someUnknownFunc" in " ".join(notes)


def test_overlay_merges_in_helm_order_and_null_deletes(tmp_path):
    base = chart("basic")
    prod = os.path.join(base, "values-prod.yaml")
    values = os.path.join(base, "values.yaml")
    servers, problems, _ = extract_charts([base], [prod])
    assert problems == []
    s = only(servers, file=os.path.join(base, "templates", "deployment.yaml"))
    assert arg_loc(s, "max_model_len").file == prod
    assert arg_loc(s, "max_model_len").line == line_of(prod, "maxModelLen")
    # lists replace: the overlay's extraArgs only
    assert arg_loc(s, "enable_chunked_prefill").file == prod
    assert "enable_prefix_caching" not in s.args and "--enable-prefix-caching" not in s.unknown_args
    # dtype now set by the overlay turns the `if` on
    assert arg_loc(s, "dtype").line == line_of(prod, "dtype")
    # keys the overlay leaves alone keep their own line in values.yaml
    assert arg_loc(s, "max_num_seqs").file == values
    # `nodeSelector: null` deletes the chart default: no GPU type any more, two GPUs from the overlay
    assert s.gpu.count == 2 and s.gpu.type is None
    assert s.gpu.location.file == prod
    # a later overlay wins over an earlier one
    later = tmp_path / "later.yaml"
    later.write_text("engine:\n  maxModelLen: 4096\n")
    servers, _, _ = extract_charts([base], [prod, str(later)])
    assert arg_loc(servers[0], "max_model_len").file == os.path.relpath(str(later)) or str(later)
    assert arg_loc(servers[0], "max_model_len").line == 2


def test_chart_directory_lints_default_and_each_overlay_beside_it():
    base = chart("basic")
    assert [os.path.basename(p) for p in overlay_files(base)] == ["values-prod.yaml"]
    servers, _, _ = extract_charts([base])
    assert len(servers) == 2
    keys = {s.key for s in servers}
    assert len(keys) == 2  # distinct identities for baselines
    files = {arg_loc(s, "max_model_len").file for s in servers}
    assert files == {os.path.join(base, "values.yaml"), os.path.join(base, "values-prod.yaml")}


def test_subchart_gets_its_block_and_globals():
    servers, problems, _ = extract_charts([chart("umbrella")])
    assert problems == []
    s = only(servers, name="release-name-engine")
    parent_values = os.path.join(chart("umbrella"), "values.yaml")
    sub_values = os.path.join(chart("umbrella"), "charts", "engine", "values.yaml")
    assert s.file == os.path.join(chart("umbrella"), "charts", "engine", "templates", "deployment.yaml")
    # parent's `engine.maxModelLen` overrides the subchart default
    assert (arg_loc(s, "max_model_len").file, arg_loc(s, "max_model_len").line) == (
        parent_values, line_of(parent_values, "maxModelLen"))
    # `global.model` reaches the subchart
    mloc = s.model_location or arg_loc(s, "model")
    assert (mloc.file, mloc.line) == (parent_values, line_of(parent_values, "model:"))
    # gpus from the parent (1, not the subchart's 4); GPU type from the subchart default
    assert s.gpu.count == 1 and s.gpu.type == "L4"
    assert s.gpu.location.file in (parent_values, sub_values)
    assert s.vllm_version == "0.7.3"  # .Chart.AppVersion of the subchart


def test_subchart_disabled_by_condition(tmp_path):
    off = tmp_path / "off.yaml"
    off.write_text("engine:\n  enabled: false\n")
    servers, _, _ = extract_charts([chart("umbrella")], [str(off)])
    assert servers == []


def test_template_error_is_a_problem_with_template_line_and_run_goes_on():
    servers, problems, _ = extract_charts([chart("broken"), chart("basic")], [])
    tpl = os.path.join(chart("broken"), "templates", "deployment.yaml")
    [p] = [p for p in problems if p.file == tpl]
    assert p.line == line_of(tpl, "required") and "model is required" in p.message
    assert any(s.file.startswith(chart("basic")) for s in servers)


def test_values_file_alone_is_linted_through_its_chart():
    prod = os.path.join(chart("basic"), "values-prod.yaml")
    assert chart_for_values_file(prod) == chart("basic")
    inv = scan([prod])
    assert len(inv.servers) == 1
    s = inv.servers[0]
    assert arg_loc(s, "max_model_len").file == prod
    assert s.gpu.count == 2


def test_scan_of_chart_directory_uses_chart_not_templates_one_by_one():
    inv = scan([chart("forms")])
    assert [p for p in inv.problems if "invalid YAML" in p.message] == []
    assert len(inv.servers) == 1
    assert inv.servers[0].model == "Qwen/Qwen2.5-7B-Instruct"


def test_scan_of_whole_fixture_tree_reports_broken_chart_and_keeps_going():
    inv = scan([FIX])
    assert any("model is required" in p.message for p in inv.problems)
    names = {s.name for s in inv.servers}
    assert {"release-name-basic", "release-name-forms", "release-name-engine"} <= names


def _write_chart(root, templates: dict[str, str], values: str, overlays: dict[str, str] | None = None) -> str:
    root.mkdir()
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: launcher\nversion: 0.1.0\n")
    (root / "values.yaml").write_text(values)
    (root / "templates").mkdir()
    for name, text in templates.items():
        (root / "templates" / name).write_text(text)
    for name, text in (overlays or {}).items():
        (root / name).write_text(text)
    return str(root)


def test_what_reading_a_rendered_document_finds_is_said_on_its_template_at_its_level(tmp_path):
    # an operator's own kind (pods under spec.server / spec.worker) whose container runs a vLLM image through the
    # image's launcher: said as a plain file would say it (a note on the container's template line), not dropped;
    # a values overlay beside the chart renders the same template again: said once
    template = (
        "apiVersion: example.net/v1\n"
        "kind: ServerWorkerSet\n"
        "metadata:\n"
        "  name: {{ .Release.Name }}-llm\n"
        "spec:\n"
        "  server:\n"
        "    spec:\n"
        "      containers:\n"
        "      - name: leader\n"
        "        image: ghcr.io/example/vllm-{{ .Values.backend }}:{{ .Values.tag }}\n"
        "        command: [sh, -c, \"/workspace/run_model.sh --model_id={{ .Values.modelId }}\"]\n"
        "        resources:\n"
        "          limits: {nvidia.com/gpu: {{ .Values.gpus }}}\n")
    path = _write_chart(tmp_path / "c", {"sws.yaml": template},
                        "backend: cuda\ntag: v1.0.0\nmodelId: org/model\ngpus: 1\n",
                        {"values-big.yaml": "gpus: 4\n"})
    servers, problems, _notes = extract_charts([path])
    assert servers == []
    said = [p for p in problems if "custom command" in p.message]
    assert len(said) == 1, [(p.file, p.line, p.message) for p in problems]
    [p] = said
    assert p.level == "note" and p.file.endswith("templates/sws.yaml") and p.line == 9
    inv = scan([path])
    assert any("custom command" in p.message and p.level == "note" for p in inv.problems)


def test_problems_said_for_several_values_sets_are_kept_once_in_order():
    from vramlint.model import Problem, add_new_problems

    problems = [Problem("t.yaml", 3, 1, "a", level="note")]
    more = [Problem("t.yaml", 3, 1, "a", level="note"), Problem("t.yaml", 3, 1, "a", level="warning"),
            Problem("t.yaml", 4, 1, "b", level="note"), Problem("t.yaml", 4, 1, "b", level="note")]
    add_new_problems(problems, more)
    assert [(p.line, p.message, p.level) for p in problems] == [(3, "a", "note"), (3, "a", "warning"), (4, "b", "note")]
    many = [Problem("t.yaml", n, 1, "c", level="note") for n in range(20000)]
    add_new_problems(problems, many)
    add_new_problems(problems, many)  # 20,000 against 20,003: a set, not a scan of the list for each
    assert len(problems) == 20003
