"""Helm charts in depth: lint a chart's values through its templates, with findings on the values lines.

Entry points used by `vramlint.scan`:

- `find_chart_dirs(paths)` / `chart_for_values_file(path)` / `is_chart_dir(path)`: which charts a scan covers.
- `extract_charts(chart_dirs, values_overlays, render)` -> `(servers, problems, notes)`: every vLLM server the
  charts deploy. Without `render` (or without Helm), templates are evaluated by a small bounded evaluator
  (`vramlint.helm.gotmpl`); with `render`, by `helm-python-sdk` or the `helm` binary when available. Either
  way every Location points at the values line that set the value, or at the template line that wrote it.
- `templated.load_templated_text(text, file)`: a plain manifest with `{{ }}`/`${var}` placeholders.

Nothing here imports more than the standard library and ruamel until a chart is actually read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from vramlint.helm.chart import chart_for_values_file, is_chart_dir
from vramlint.model import Problem, Server, add_new_problems

__all__ = [
    "chart_for_values_file",
    "extract_charts",
    "is_chart_dir",
    "overlay_files",
]

_OVERLAY_NAMES = ("values-", "values.", "values_")


def overlay_files(chart_dir: str) -> list[str]:
    """Values overlays kept beside a chart (`values-prod.yaml`, `values.gpu.yaml`, `prod-values.yaml`)."""
    out = []
    try:
        names = sorted(os.listdir(chart_dir))
    except OSError:
        return out
    for name in names:
        low = name.lower()
        if not low.endswith((".yaml", ".yml")) or low in ("values.yaml", "values.yml", "chart.yaml"):
            continue
        if low.startswith(_OVERLAY_NAMES) or low.endswith(("-values.yaml", "_values.yaml", "-values.yml")):
            out.append(os.path.join(chart_dir, name))
    return out


def extract_charts(
    chart_dirs: Iterable[str],
    values_overlays: Iterable[str] | Mapping[str, list[str]] = (),
    render: bool = False,
    timeout_s: float = 60.0,
    run_ends: float | None = None,
    profiles: Iterable[str] = (),
    releases: Iterable[object] = (),
) -> tuple[list[Server], list[Problem], list[str]]:
    """Servers deployed by each chart, problems (with file and line), and notes said once per chart.

    ``values_overlays``: `--values` files applied to every chart, in order, or a mapping chart_dir -> files.
    When a chart has no overlays given, it is linted with its `values.yaml` and, separately, with each
    overlay kept beside it (`values-prod.yaml` ...), as each is a deployment of its own.
    ``render``: render with Helm (helm-python-sdk, else the `helm` binary) when available.
    ``run_ends``: time.monotonic() past which no template is evaluated (the run's time for all its charts).
    ``profiles``: values files kept away from the chart that have its shape (`hook.plan`), each a deployment of
    its own like an overlay beside the chart.
    ``releases``: releases of the scanned tree that install the chart (`vramlint.helm.releases`): each is a
    deployment of its own, evaluated with the values it gives in place of the chart's values.yaml alone; the
    overlays and profiles no release names are still linted each on its own.
    """
    from vramlint.helm.chart import ChartResult, extract_chart

    servers: list[Server] = []
    problems: list[Problem] = []
    notes: list[str] = []
    said_skip = False
    for chart_dir in dict.fromkeys(chart_dirs):
        import time

        from vramlint.helm.gotmpl import CHART_SECONDS, RunDeadline

        deadline = time.monotonic() + CHART_SECONDS  # for all of this chart's sets of values together
        if run_ends is not None and run_ends < deadline:
            deadline = RunDeadline(run_ends)  # the run's time runs out first: the finding says so
        if isinstance(values_overlays, Mapping):
            given = list(values_overlays.get(chart_dir, []))
        else:
            given = list(values_overlays)
        variants: list[tuple[list, str | None, object]]
        chart_releases = list(releases)
        if given:
            variants = [(given, None, None)]
        elif chart_releases:
            used = {os.path.abspath(v) for r in chart_releases for v in r.values if isinstance(v, str)}
            variants = [(list(r.values), r.variant, r) for r in chart_releases]
            variants += [([ov], os.path.basename(ov), None) for ov in overlay_files(chart_dir) + list(profiles)
                         if os.path.abspath(ov) not in used]
            own = "its own values.yaml" if os.path.isfile(os.path.join(chart_dir, "values.yaml")) else \
                "no values (the chart has no values.yaml)"
            for r in chart_releases:
                gives = ", ".join(_shown(v) if isinstance(v, str) else v.display for v in r.values)
                notes.append(f"chart {_shown(chart_dir)} evaluated as the {r.label} installs it, with "
                             f"{'values ' + gives if gives else own}"
                             + ("" if getattr(r, "chart_defaults", True) else " in place of its values.yaml")
                             + (f"; not read: {'; '.join(r.unread[:3])}" if r.unread else ""))
        else:
            variants = [([], None, None)] + [([ov], os.path.basename(ov), None)
                                             for ov in overlay_files(chart_dir) + list(profiles)]
        for overlays, variant, release in variants:
            res: ChartResult | None = None
            # (Helm's own render reads the chart's values.yaml: not for a release whose files take its place)
            if render and all(isinstance(o, str) for o in overlays) and getattr(release, "chart_defaults", True):
                from vramlint.helm import render as helm_render

                res, why_not = helm_render.render_and_extract(chart_dir, overlays, variant, timeout_s)
                if res is None and not said_skip:
                    notes.append(f"Helm rendering skipped: {why_not}; charts were evaluated without Helm")
                    said_skip = True
            if res is None:
                res = extract_chart(chart_dir, overlays, variant, deadline=deadline,
                                    overlays_found=not given and release is None, release=release)
            servers.extend(res.servers)
            # a finding on a template line is the same for every set of values that renders it alike: said once
            add_new_problems(problems, res.problems)
            notes.extend(n for n in res.notes if n not in notes)
    return servers, problems, notes


def _shown(path: str) -> str:
    from vramlint.discover import display_path

    return display_path(path)
