"""Which scanned files belong to a Helm chart, so `scan` lints them through the chart instead of one by one.

A chart's `templates/` files are not manifests on their own, and its values files only mean something
through the templates. `plan(entries)` says which charts to extract (with the overlays the user named) and
which file entries that covers; `scan` leaves those entries out of plain YAML extraction.
"""

from __future__ import annotations

import functools
import os
from dataclasses import field
from typing import Any

from vramlint.helm.chart import is_chart_dir
from vramlint.lean_dataclass import dataclass


@dataclass
class ChartPlan:
    charts: dict[str, list[str]] = field(default_factory=dict)  # chart dir -> overlays named by the user
    handled: dict[str, str] = field(default_factory=dict)  # file path -> chart dir that lints it
    values_files: dict[str, list[str]] = field(default_factory=dict)  # chart dir -> its values files scanned


@functools.lru_cache(maxsize=4096)
def _outermost_chart(start: str) -> str | None:
    """The chart a path is in: the nearest `Chart.yaml` upward, then up through `charts/` to the parent."""
    d = start
    found = None
    for _ in range(12):
        if is_chart_dir(d):
            found = d
            parent = os.path.dirname(d)
            if os.path.basename(parent) == "charts" and is_chart_dir(os.path.dirname(parent)):
                d = os.path.dirname(parent)
                continue
            return found
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return found


def has_templates(chart_dir: str) -> bool:
    return os.path.isdir(os.path.join(chart_dir, "templates"))


def _is_values_name(name: str) -> bool:
    low = name.lower()
    return low.endswith((".yaml", ".yml")) and "values" in low


def plan(entries: list[Any]) -> ChartPlan:
    """``entries``: discovered files with ``path`` and ``explicit`` (named on the command line) attributes."""
    from vramlint.helm import overlay_files

    out = ChartPlan()
    for entry in entries:
        path = os.path.abspath(entry.path)
        d = os.path.dirname(path)
        chart = _outermost_chart(d)
        if chart is None or not has_templates(chart):
            continue
        rel = os.path.relpath(path, chart).replace(os.sep, "/")
        name = os.path.basename(path)
        chart_key = _shown(chart)
        if rel.startswith("templates/") or "/templates/" in rel and rel.startswith("charts/"):
            out.charts.setdefault(chart_key, [])
            out.handled[entry.path] = chart_key
        elif rel in ("Chart.yaml", "values.yaml", "values.yml", "Chart.lock"):
            out.charts.setdefault(chart_key, [])
            out.handled[entry.path] = chart_key
        elif rel.startswith("charts/") and rel.endswith("/values.yaml"):
            out.charts.setdefault(chart_key, [])
            out.handled[entry.path] = chart_key
        elif getattr(entry, "explicit", False) and _is_values_name(name) and (
            os.path.dirname(path) in (chart, os.path.dirname(chart)) or rel.count("/") <= 1
        ):
            # pre-commit passes the one values file that changed: lint it through its chart
            out.charts.setdefault(chart_key, []).append(entry.path)
            out.handled[entry.path] = chart_key
        elif os.path.dirname(path) == chart and path in {os.path.abspath(p) for p in overlay_files(chart)}:
            out.charts.setdefault(chart_key, [])
            out.handled[entry.path] = chart_key
    return out


def _shown(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def run(chart_plan: ChartPlan, values_files: list[str] | tuple[str, ...] = (), render: bool = False,
        timeout_s: float = 60.0) -> tuple[list[Any], list[Any], list[str], set[str]]:
    """Extract every planned chart: (servers, problems, notes, paths to extract as plain files after all).

    A chart in which no server is found (templates the evaluator cannot follow, a values-only layout) gives
    its values files back to plain extraction, which knows the common charts by their values shape.
    """
    import time

    from vramlint.helm import extract_charts
    from vramlint.helm.gotmpl import RUN_CHART_SECONDS

    servers: list[Any] = []
    problems: list[Any] = []
    notes: list[str] = []
    fallback: set[str] = set()
    run_ends = time.monotonic() + RUN_CHART_SECONDS
    for chart, named in chart_plan.charts.items():
        overlays = list(values_files) + [p for p in named if p not in values_files]
        if not render and time.monotonic() >= run_ends:
            from vramlint.model import Problem

            problems.append(Problem(_shown(os.path.join(chart, "Chart.yaml")), 1, 1,
                                    f"chart not evaluated: other charts used up the {RUN_CHART_SECONDS:g} s this "
                                    "run allows for all its Helm charts together, so the servers this chart deploys "
                                    "are not checked; lint this chart's folder on its own to check them",
                                    level="warning"))
            s, p, n = [], [], []
        else:
            s, p, n = None, None, None
        try:
            if s is None:
                s, p, n = extract_charts([chart], overlays, render=render, timeout_s=timeout_s, run_ends=run_ends)
        except Exception as exc:  # noqa: BLE001 - one chart's failure is a finding on it; the other charts go on
            from vramlint.model import internal_problem

            s, p, n = [], [internal_problem(f"{chart}/Chart.yaml", None, "linting this chart", exc)], []
        servers.extend(s)
        problems.extend(p)
        notes.extend(x for x in n if x not in notes)
        if not s:
            for path, owner in chart_plan.handled.items():
                if owner == chart and "templates" not in path.replace(os.sep, "/").split("/"):
                    fallback.add(path)
    return servers, problems, notes, fallback
