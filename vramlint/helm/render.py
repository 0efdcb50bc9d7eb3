"""Render a chart with Helm itself (helm-python-sdk, else the `helm` binary), then map back to values lines.

Helm's output says nothing about where a value came from, so each server found in it is matched with the
same server from the bounded evaluator (`vramlint.helm.chart`), whose every character is traced. A value
Helm rendered that the evaluator did not produce is looked up among the values leaves (a unique match wins),
and failing that the finding goes to the template line that writes the flag. Never to a temporary file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import replace
from typing import Any

from vramlint.fsread import scanned_roots
from vramlint.helm.chart import (
    NAMESPACE,
    RELEASE_NAME,
    ChartResult,
    _join_display,
    _walk_locations,
    chart_values,
    extract_chart,
    load_chart,
)
from vramlint.helm.gotmpl import go_str, to_go_number
from vramlint.helm.values import load_values_file
from vramlint.model import Location, Problem, Server

_HELM_POSITION = re.compile(r"([A-Za-z0-9_.-]+(?:/[^\s:()<>\"]+)+):(\d+)(?::(\d+))?")


def sdk_available() -> bool:
    try:
        import importlib.util

        return importlib.util.find_spec("helm_python") is not None
    except (ImportError, ValueError):
        return False


def helm_binary() -> str | None:
    return shutil.which("helm")


def backend() -> tuple[str | None, str]:
    """Which renderer this run would use: ("sdk" | "binary" | None, why)."""
    if sdk_available():
        return "sdk", "helm-python-sdk"
    if helm_binary():
        return "binary", "helm binary on PATH"
    return None, "neither helm-python-sdk (pip install 'vramlint[helm]') nor a `helm` binary on PATH is available"


def _user_values(overlays: list[str]) -> tuple[dict, list[Problem]]:
    """The `-f` files merged among themselves (nulls kept: Helm applies them as deletions)."""
    merged: dict = {}
    problems: list[Problem] = []

    def merge(dst: dict, src: dict) -> None:
        for k, v in src.items():
            if isinstance(v, dict) and isinstance(dst.get(k), dict):
                merge(dst[k], v)
            else:
                dst[k] = v

    for ov in overlays:
        data, _origins, probs = load_values_file(ov, ov)
        problems.extend(probs)
        merge(merged, data)
    return merged, problems


# Run in a child process so that a chart that renders forever is killed at the time limit, not left running
# on a thread for the rest of the run. The child only loads helm-python-sdk and renders; it reads the request
# (chart path, values) on stdin and writes the manifests as JSON.
_SDK_CHILD = """
import json, sys
import helm_python
req = json.load(sys.stdin)
with helm_python.Chart.load(req["chart"]) as chart:
    out = chart.render(req["values"], name=req["name"], namespace=req["namespace"])
json.dump({str(k): str(v) for k, v in dict(out).items()}, sys.stdout)
"""


def render_sdk(chart_dir: str, overlays: list[str], timeout_s: float) -> dict[str, str]:
    import json
    import sys

    values, _problems = _user_values(overlays)
    request = json.dumps({"chart": os.path.abspath(chart_dir), "values": values, "name": RELEASE_NAME,
                          "namespace": NAMESPACE}, default=str)
    try:
        proc = subprocess.run([sys.executable, "-c", _SDK_CHILD], input=request, capture_output=True, text=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"rendering took longer than {timeout_s:g} s") from None
    if proc.returncode != 0:
        crash = go_crash(proc.stderr)
        if crash:
            raise RuntimeError(crash)
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        last = lines[-1] if lines else f"helm-python-sdk exited with status {proc.returncode}"
        raise RuntimeError(last.split(": ", 1)[1] if ": " in last and last.split(": ", 1)[0].isidentifier() else last)
    return json.loads(proc.stdout or "{}")


def render_binary(chart_dir: str, overlays: list[str], timeout_s: float) -> dict[str, str]:
    helm = helm_binary()
    if helm is None:
        raise RuntimeError("no helm binary on PATH")
    cmd = [helm, "template", RELEASE_NAME, os.path.abspath(chart_dir), "--namespace", NAMESPACE]
    for ov in overlays:
        cmd += ["-f", os.path.abspath(ov)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise RuntimeError(go_crash(proc.stderr) or proc.stderr.strip() or f"helm exited with status {proc.returncode}")
    return split_helm_output(proc.stdout)


_GO_PANIC = re.compile(r"^(panic: .*|fatal error: .*|runtime: .*out of memory.*)$", re.M)


def go_crash(stderr: str) -> str | None:
    """Helm crashed (a Go panic or fatal error): its first line, without the goroutine stack that follows (whose
    paths are Helm's own source files, not the chart's)."""
    m = _GO_PANIC.search(stderr or "")
    if not m:
        return None
    return f"Helm crashed: {m.group(1).strip()[:300]}"


def split_helm_output(text: str) -> dict[str, str]:
    """`helm template` output -> {template name: its documents}, by the `# Source:` comments."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    buf: list[str] = []
    for line in text.split("\n"):
        if line.startswith("# Source: "):
            if current is not None:
                out.setdefault(current, []).append("\n".join(buf))
            current = line[len("# Source: "):].strip()
            buf = []
            continue
        if line.strip() == "---" and current is not None:
            out.setdefault(current, []).append("\n".join(buf))
            current, buf = None, []
            continue
        buf.append(line)
    if current is not None:
        out.setdefault(current, []).append("\n".join(buf))
    return {k: "\n---\n".join(v) for k, v in out.items()}


def helm_error_problem(message: str, chart_display: str, chart_name: str) -> Problem:
    """A Helm error as a Problem on the chart's template file and line it names; on the chart's Chart.yaml when it
    names none of the chart's files (a Go stack trace names Helm's own source files: never reported as a place)."""
    crash = go_crash(message)
    msg = crash or " ".join(message.split())
    if len(msg) > 2000:
        msg = msg[:2000] + " ..."
    for m in _HELM_POSITION.finditer(msg if not crash else ""):
        file = _chart_file(m.group(1), chart_display, chart_name)
        if file is not None:
            return Problem(file, int(m.group(2)), int(m.group(3)) if m.group(3) else None,
                           f"helm template failed: {msg}")
    return Problem(_join_display(chart_display, "Chart.yaml"), None, None, f"helm template failed: {msg}")


def _chart_file(helm_name: str, chart_display: str, chart_name: str) -> str | None:
    """The chart's own file Helm names (`chart/templates/x.yaml`), or None for any other path."""
    head, _, rest = helm_name.partition("/")
    if head != chart_name or not rest or rest.startswith("/") or ".." in rest.split("/"):
        return None
    path = _join_display(chart_display, rest)
    return path if os.path.isfile(path) else None


def _template_display(helm_name: str, chart_display: str, chart_name: str) -> str:
    head, _, rest = helm_name.partition("/")
    if head == chart_name and rest:
        return _join_display(chart_display, rest)
    return helm_name


def render_and_extract(chart_dir: str, overlays: list[str], variant: str | None,
                       timeout_s: float) -> tuple[ChartResult | None, str]:
    """Render with Helm and extract; (None, why) when no renderer is available."""
    kind, why = backend()
    if kind is None:
        return None, why
    chart = load_chart(chart_dir)
    traced = extract_chart(chart_dir, overlays, variant)  # the evaluator's view, with origins
    res = ChartResult(notes=[n for n in traced.notes if "not evaluated" not in n])
    import tempfile

    # Helm follows symlinks and reads any file a template names (`.Files.Get`): it renders a copy of the chart
    # holding only what vramlint's reader accepts (regular files inside the scanned tree, size-capped).
    with tempfile.TemporaryDirectory(prefix="vramlint-chart-") as scratch:
        copy, copied_overlays, left_out = copy_for_helm(chart_dir, overlays, scratch)
        if left_out:
            shown = ", ".join(left_out[:3]) + (f" (and {len(left_out) - 3} more)" if len(left_out) > 3 else "")
            res.notes.append(f"chart {chart.display}: rendered without {shown}: outside the scanned tree or "
                             "not a regular file, so Helm was not given it")
        error: Exception | None = None
        try:
            with scanned_roots([scratch]):  # the copies are read back (the SDK gets the values as data)
                manifests = (render_sdk if kind == "sdk" else render_binary)(copy, copied_overlays, timeout_s)
        except Exception as exc:  # noqa: BLE001 - helm's errors are reported, and the run goes on
            error = exc
            message = str(exc).replace(copy + os.sep, "").replace(copy, chart.display).replace(scratch, ".")
    if isinstance(error, (TimeoutError, subprocess.TimeoutExpired)):
        said = message if isinstance(error, TimeoutError) else f"took longer than {timeout_s:g} s"
        res.problems.append(Problem(chart.display, None, None, f"helm template of {chart.display}: {said}"))
        return res, why
    if error is not None:
        res.problems.append(helm_error_problem(message, chart.display, chart.name))
        return res, why
    vals, _probs = chart_values(chart, overlays)
    res.servers = servers_from_manifests(manifests, chart, traced.servers, vals, variant, why)
    res.problems.extend(p for p in traced.problems if not p.message.startswith("helm template would fail"))
    return res, why


# Bounds of the copy Helm renders: a chart is a few hundred kilobytes; a tree far larger is not a chart.
COPY_MAX_FILES = 5000
COPY_MAX_BYTES = 64 * 1024 * 1024


def copy_for_helm(chart_dir: str, overlays: list[str], scratch: str) -> tuple[str, list[str], list[str]]:
    """Copy the chart and the overlays into ``scratch`` through `vramlint.fsread`: (chart copy, overlay copies,
    what was left out, as displayed). Symlinks inside the tree are copied as the files they name (Helm would
    follow them); symlinks out of it, FIFOs and devices are left out, so Helm can never read them."""
    from vramlint.fsread import Refusal, outside_reason, read_bytes

    left_out: list[str] = []
    budget = {"files": COPY_MAX_FILES, "bytes": COPY_MAX_BYTES}
    dest_root = os.path.join(scratch, os.path.basename(os.path.abspath(chart_dir)) or "chart")
    visited: set[tuple[int, int]] = set()

    def copy_dir(src: str, dest: str, shown: str) -> None:
        try:
            st = os.stat(src)
            if (st.st_dev, st.st_ino) in visited:
                return
            visited.add((st.st_dev, st.st_ino))
            os.makedirs(dest, exist_ok=True)
            with os.scandir(src) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            left_out.append(shown)
            return
        for entry in entries:
            name_shown = f"{shown}/{entry.name}"
            if entry.is_symlink() and outside_reason(entry.path) is not None:
                left_out.append(name_shown)
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                left_out.append(name_shown)
                continue
            if is_dir:
                copy_dir(entry.path, os.path.join(dest, entry.name), name_shown)
                continue
            raw = read_bytes(entry.path)
            if isinstance(raw, Refusal) or budget["files"] <= 0 or budget["bytes"] < len(raw):
                left_out.append(name_shown)
                continue
            budget["files"] -= 1
            budget["bytes"] -= len(raw)
            with open(os.path.join(dest, entry.name), "wb") as fh:
                fh.write(raw)

    from vramlint.helm.chart import _display

    copy_dir(chart_dir, dest_root, _display(chart_dir))
    copied: list[str] = []
    for i, ov in enumerate(overlays):
        raw = read_bytes(ov)
        target = os.path.join(scratch, f"values-{i}.yaml")
        with open(target, "wb") as fh:
            fh.write(b"" if isinstance(raw, Refusal) else raw)  # refused: said by the values loader already
        copied.append(target)
    return dest_root, copied, left_out


def servers_from_manifests(manifests: dict[str, str], chart: Any, traced: list[Server], vals: Any,
                           variant: str | None, backend_name: str) -> list[Server]:
    from vramlint.extract import extract_document_records
    from vramlint.extract.config_join import join_config_refs
    from vramlint.textsafe import without_own_marks
    from vramlint.yamlload import load_text

    by_key: dict[tuple, Server] = {}
    for s in traced:
        by_key[(s.file, _strip_variant(s.location.yaml_path))] = s
    leaves = _leaves(vals)
    found: list[tuple[Server, str, str, str]] = []  # server, yaml path, template display, template text
    refs: list[Any] = []
    configmaps: dict[str, list[Any]] = {}
    pools: list[Any] = []  # Karpenter NodePools / GKE ComputeClasses the chart renders
    runtimes: list[Any] = []  # KServe ServingRuntimes and InferenceServices of all the templates
    isvcs: list[Any] = []
    multi_files: set[str] = set()
    texts: dict[str, str] = {}
    for name, text in sorted(manifests.items()):
        if name.endswith("NOTES.txt") or not text.strip():
            continue
        display = _template_display(name, chart.display, chart.name)
        template_text = _read(display)
        # helm rendered all of it: a U+2983 there is the chart's own character, never vramlint's unknown mark
        docs, _problems = load_text(without_own_marks(text), display)
        multi = len(docs) > 1
        if multi:
            multi_files.add(display)
        texts[display] = template_text
        for doc in docs:
            # KServe's runtime and InferenceService may be two templates: joined below, once all are read
            records = extract_document_records(doc, join_kserve=False)
            runtimes.extend(records.runtimes)
            isvcs.extend(records.inference_services)
            refs.extend(records.config_refs)
            for cm in records.configmaps:
                configmaps.setdefault(cm.name, []).append(cm)
            pools.extend(records.node_pools)
            for s in records.servers:
                found.append((s, s.location.yaml_path + (f"[doc{doc.index}]" if multi else ""), display,
                              template_text))
    if runtimes or isvcs:
        from vramlint.extract import clear_template_values, kserve

        joined, _problems, joined_refs = kserve.join(runtimes, isvcs)
        refs.extend(joined_refs)
        doc_of = {(i.doc.file, "InferenceService", i.name): i.doc for i in isvcs}
        doc_of.update({(rt.doc.file, rt.kind, rt.name): rt.doc for rt in runtimes})
        for s in joined:
            clear_template_values(s)
            doc = doc_of.get((s.file, s.kind, s.name))
            index = f"[doc{doc.index}]" if doc is not None and s.file in multi_files else ""
            found.append((s, s.location.yaml_path + index, s.file, texts.get(s.file, "")))
    # `--config` files from the ConfigMaps the chart renders, before positions are mapped back to the chart
    join_config_refs(refs, configmaps, [], absent=f"is not rendered by chart {chart.display} with these values; "
                     "its settings are not included")
    if pools:  # the GPU of the chart's own node pools; positions taken from the evaluator's twin below
        from vramlint.extract.node_pools import join_node_pools

        join_node_pools([s for s, *_rest in found], pools)
    out: list[Server] = []
    for s, ypath, display, template_text in found:
        twin = by_key.get((display, ypath))
        _map_rendered(s, twin, leaves, display, template_text)
        s.file = display
        full = ypath + (f"?values={variant}" if variant else "")
        s.location = replace(s.location, yaml_path=full)
        s.notes.append(f"from Helm chart {chart.display} rendered by {backend_name} with values "
                       f"{', '.join(vals.files) or '(none)'}")
        out.append(s)
    return out


def _strip_variant(ypath: str) -> str:
    return ypath.split("?values=", 1)[0]


def _read(path: str) -> str:
    from vramlint.fsread import Refusal, read_text

    text = read_text(path)
    return "" if isinstance(text, Refusal) else text


def _leaves(vals: Any) -> dict[str, list[Location]]:
    """Text of each values leaf as Helm prints it -> where it was written."""
    out: dict[str, list[Location]] = {}

    def walk(v: Any, path: tuple) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, path + (k,))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, path + (i,))
        elif path in vals.origins and v is not None:
            out.setdefault(go_str(to_go_number(v)), []).append(vals.origins[path])

    walk(vals.data, ())
    return out


def _template_line(template_text: str, display: str, needle: str | None, yaml_path: str) -> Location:
    if needle:
        for i, line in enumerate(template_text.split("\n")):
            col = line.find(needle)
            if col >= 0:
                return Location(display, i + 1, col + 1, yaml_path=yaml_path)
    return Location(display, 1, 1, yaml_path=yaml_path)


def _map_rendered(s: Server, twin: Server | None, leaves: dict[str, list[Location]], display: str,
                  template_text: str) -> None:
    def by_value(value: Any, needle: str | None, loc: Location) -> Location:
        if value is not None:
            found = leaves.get(go_str(value) if not isinstance(value, float) else go_str(value), [])
            if len(found) == 1:
                return found[0]
        return _template_line(template_text, display, needle, loc.yaml_path)

    arg_locs = dict(s.arg_locations)
    model_loc, image_loc = s.model_location, s.image_location
    env_locs = dict(s.env_locations)
    unknown = dict(s.unknown_args)
    gpu_loc = s.gpu.location if s.gpu else None
    server_loc = s.location
    _walk_locations(s, lambda loc: _template_line(template_text, display, None, loc.yaml_path))
    s.location = twin.location if twin else _template_line(template_text, display, "containers", server_loc.yaml_path)
    s.arg_locations = {}
    for dest, loc in arg_locs.items():
        if twin and dest in twin.arg_locations and twin.args.get(dest) in (s.args.get(dest), None):
            s.arg_locations[dest] = twin.arg_locations[dest]
        else:
            s.arg_locations[dest] = by_value(s.args.get(dest), "--" + dest.replace("_", "-"), loc)
    if model_loc is not None:
        if twin and twin.model_location and twin.model in (s.model, None):
            s.model_location = twin.model_location
        else:
            s.model_location = by_value(s.model, "model", model_loc)
    if image_loc is not None:
        if twin and twin.image_location and twin.image in (s.image, None):
            s.image_location = twin.image_location
        else:
            s.image_location = _template_line(template_text, display, "image:", image_loc.yaml_path)
    if gpu_loc is not None and s.gpu is not None:
        if twin and twin.gpu and twin.gpu.location and (twin.gpu.count, twin.gpu.type) == (s.gpu.count, s.gpu.type):
            s.gpu.location = twin.gpu.location
        else:
            s.gpu.location = _template_line(template_text, display, "nvidia.com/gpu", gpu_loc.yaml_path)
    s.env_locations = {}
    for k, loc in env_locs.items():
        if twin and k in twin.env_locations and twin.env.get(k) in (s.env.get(k), None):
            s.env_locations[k] = twin.env_locations[k]
        else:
            s.env_locations[k] = by_value(s.env.get(k), k, loc)
    s.unknown_args = {}
    for flag, loc in unknown.items():
        if twin and flag in twin.unknown_args:
            s.unknown_args[flag] = twin.unknown_args[flag]
        else:
            s.unknown_args[flag] = _template_line(template_text, display, flag, loc.yaml_path)
