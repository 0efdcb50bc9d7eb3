"""Rendering with Helm itself: helm-python-sdk (the `helm` extra) and the `helm` binary, mapped to values lines."""

from __future__ import annotations

import os
import shutil

import pytest

from vramlint.helm import extract_charts
from vramlint.helm import render as helm_render
from vramlint.helm.render import helm_error_problem, split_helm_output

HERE = os.path.dirname(__file__)
FIX = os.path.relpath(os.path.join(HERE, "fixtures", "helm"))

needs_sdk = pytest.mark.skipif(not helm_render.sdk_available(),
                               reason="helm-python-sdk not installed (pip install 'vramlint[helm]')")
needs_binary = pytest.mark.skipif(shutil.which("helm") is None,
                                  reason="no `helm` binary on PATH: the helm-binary rendering path was not run")


def arg_loc(server, dest):
    if dest in server.arg_locations:
        return server.arg_locations[dest]
    return server.unknown_args["--" + dest.replace("_", "-")]


def line_of(path, needle):
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if needle in line:
                return i
    raise AssertionError(needle)


def _check_forms(servers, backend_word):
    [s] = servers
    values = os.path.join(FIX, "forms", "values.yaml")
    assert any(backend_word in n for n in s.notes)
    assert s.model == "Qwen/Qwen2.5-7B-Instruct"
    assert (s.model_location.file, s.model_location.line) == (values, line_of(values, "model:"))
    assert arg_loc(s, "max_model_len").file == values
    assert arg_loc(s, "kv_cache_dtype").line == line_of(values, "--kv-cache-dtype")
    assert s.gpu.count == 2 and s.gpu.location.file == values
    for loc in list(s.arg_locations.values()) + list(s.unknown_args.values()) + [s.location, s.image_location]:
        assert loc.file.startswith(FIX), loc  # never a temporary file


@needs_sdk
def test_sdk_render_maps_to_values_lines():
    servers, problems, notes = extract_charts([os.path.join(FIX, "forms")], render=True)
    assert problems == []
    assert not any("skipped" in n for n in notes)
    _check_forms(servers, "helm-python-sdk")


@needs_sdk
def test_sdk_render_with_overlay_and_null_deletion():
    base = os.path.join(FIX, "basic")
    prod = os.path.join(base, "values-prod.yaml")
    servers, problems, _ = extract_charts([base], [prod], render=True)
    assert problems == []
    [s] = servers
    assert arg_loc(s, "max_model_len").file == prod
    assert s.gpu.count == 2 and s.gpu.type is None  # Helm deleted the nodeSelector too


@needs_sdk
def test_sdk_render_error_is_a_problem_on_the_template_line():
    servers, problems, _ = extract_charts([os.path.join(FIX, "broken"), os.path.join(FIX, "forms")], render=True)
    tpl = os.path.join(FIX, "broken", "templates", "deployment.yaml")
    [p] = [p for p in problems if p.file == tpl]
    assert p.line == line_of(tpl, "required")
    assert "model is required" in p.message
    assert len(servers) == 1  # the other chart still rendered


@needs_sdk
def test_sdk_subchart_render():
    servers, problems, _ = extract_charts([os.path.join(FIX, "umbrella")], render=True)
    assert problems == []
    [s] = servers
    parent = os.path.join(FIX, "umbrella", "values.yaml")
    assert arg_loc(s, "max_model_len").file == parent
    assert s.gpu.count == 1


@needs_binary
def test_helm_binary_render_maps_to_values_lines(monkeypatch):
    monkeypatch.setattr(helm_render, "sdk_available", lambda: False)
    servers, problems, _ = extract_charts([os.path.join(FIX, "forms")], render=True)
    assert problems == []
    _check_forms(servers, "helm binary")


def test_without_any_helm_rendering_is_skipped_once_and_values_still_linted(monkeypatch):
    monkeypatch.setattr(helm_render, "sdk_available", lambda: False)
    monkeypatch.setenv("PATH", "")
    servers, problems, notes = extract_charts([os.path.join(FIX, "forms"), os.path.join(FIX, "umbrella")],
                                              render=True)
    assert len([n for n in notes if "rendering skipped" in n]) == 1
    assert len(servers) == 2
    assert arg_loc(servers[0], "max_model_len").file.endswith("values.yaml")


def test_split_helm_output_by_source_comments():
    text = ("---\n# Source: c/templates/a.yaml\nkind: A\n---\n# Source: c/templates/b.yaml\nkind: B\n"
            "---\nkind: B2\n")
    out = split_helm_output(text)
    assert set(out) == {"c/templates/a.yaml", "c/templates/b.yaml"}
    assert "kind: A" in out["c/templates/a.yaml"]


def test_helm_error_messages_point_at_template_file_and_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for path in ("deploy/mychart/templates/req.yaml", "c/charts/sub/templates/d.yaml", "c/Chart.yaml"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x: 1\n")
    p = helm_error_problem('Error: template: mychart/templates/req.yaml:8:12: executing "mychart/templates/'
                           'req.yaml" at <required "x" .Values.x>: error calling required: x', "deploy/mychart",
                           "mychart")
    assert (p.file, p.line, p.column) == ("deploy/mychart/templates/req.yaml", 8, 12)
    p = helm_error_problem("execution error at (mychart/charts/sub/templates/d.yaml:3:1): boom", "c", "mychart")
    assert (p.file, p.line) == ("c/charts/sub/templates/d.yaml", 3)
    # a template Helm names that is not a file of the chart (inside a packaged subchart), or a path that leaves it
    for message in ("execution error at (mychart/charts/pkg/templates/x.yaml:3:1): boom",
                    "execution error at (mychart/../../etc/passwd:3:1): boom"):
        p = helm_error_problem(message, "c", "mychart")
        assert (p.file, p.line) == ("c/Chart.yaml", None), message


def test_a_helm_crash_is_reported_on_the_chart_not_on_helms_source_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "Chart.yaml").write_text("name: mychart\n")
    stderr = ("panic: runtime error: invalid memory address or nil pointer dereference\n"
              "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1a2b3c]\n\n"
              "goroutine 1 [running]:\n"
              "helm.sh/helm/v3/pkg/engine.(*Engine).render(0xc000123)\n"
              "\t/home/runner/work/helm/helm/pkg/engine/engine.go:345 +0x1d\n"
              "main.main()\n\t/home/runner/work/helm/helm/cmd/helm/helm.go:83 +0x2f\n")
    p = helm_error_problem(stderr, "c", "mychart")
    assert (p.file, p.line) == ("c/Chart.yaml", None)
    assert "panic: runtime error: invalid memory address" in p.message
    assert "engine.go" not in p.message and "goroutine" not in p.message


@pytest.mark.skipif(not helm_render.sdk_available() and shutil.which("helm") is None,
                    reason="neither helm-python-sdk nor a `helm` binary: Helm's own rendering was not run")
def test_helm_rendered_config_map_of_the_same_chart_joins_its_server():
    chart = os.path.join(FIX, "config-file")
    servers, _problems, _notes = extract_charts([chart], render=True)
    [s] = servers
    values = os.path.join(chart, "values.yaml")
    assert s.model == "Qwen/Qwen2.5-7B-Instruct" and s.args["gpu_memory_utilization"] == 0.85
    assert s.args["max_model_len"] == 4096  # the command line wins
    assert arg_loc(s, "max_num_seqs").line == line_of(values, "max-num-seqs:")
