"""Which scanned files belong to a Helm chart, so `scan` lints them through the chart instead of one by one.

A chart's `templates/` files are not manifests on their own, and its values files only mean something
through the templates. `plan(entries)` says which charts to extract (with the overlays the user named) and
which file entries that covers; `scan` leaves those entries out of plain YAML extraction.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import field
from typing import Any

from vramlint.helm.chart import is_chart_dir
from vramlint.lean_dataclass import dataclass


@dataclass
class ChartPlan:
    charts: dict[str, list[str]] = field(default_factory=dict)  # chart dir -> overlays named by the user
    handled: dict[str, str] = field(default_factory=dict)  # file path -> chart dir that lints it
    values_files: dict[str, list[str]] = field(default_factory=dict)  # chart dir -> its values files scanned
    # chart dir -> values files away from it (`deploy/clusters/x/values/vllm.yaml`) whose shape is the chart's
    profiles: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[Any] = field(default_factory=list)
    # chart dir -> the releases of the scanned tree that install it (vramlint.helm.releases.Release)
    releases: dict[str, list[Any]] = field(default_factory=dict)


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
    # per chart, not per file: relpath (two abspaths and a getcwd) was a second of a chart of 20,000 templates
    shown: dict[str, str] = {}
    # and the overlays beside a chart listed once: listed per file at the chart's root, 5,000 files there made
    # 5,000 listings of 5,000 names (18 CPU-s)
    overlay_sets: dict[str, set[str]] = {}

    def overlays_of(chart: str) -> set[str]:
        if chart not in overlay_sets:
            overlay_sets[chart] = {os.path.abspath(p) for p in overlay_files(chart)}
        return overlay_sets[chart]

    for entry in entries:
        path = os.path.abspath(entry.path)
        d = os.path.dirname(path)
        chart = _outermost_chart(d)
        # an umbrella chart with no templates/ of its own still renders its subcharts (charts/), as Helm does:
        # their templates are the chart's, not plain YAML
        if chart is None or not (has_templates(chart) or os.path.isdir(os.path.join(chart, "charts"))):
            continue
        prefix = os.path.join(chart, "")
        rel = (path[len(prefix):] if path.startswith(prefix) else os.path.relpath(path, chart)).replace(os.sep, "/")
        name = os.path.basename(path)
        chart_key = shown.get(chart)
        if chart_key is None:
            chart_key = shown[chart] = _shown(chart)
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
        elif os.path.dirname(path) == chart and path in overlays_of(chart):
            out.charts.setdefault(chart_key, [])
            out.handled[entry.path] = chart_key
    if out.charts:
        try:
            _place_releases(entries, out, shown)
        except Exception as exc:  # noqa: BLE001 - releases are optional: the charts keep their own values
            from vramlint.model import internal_problem

            first = next(iter(out.charts))
            out.problems.append(internal_problem(_shown(os.path.join(first, "Chart.yaml")), None,
                                                 "reading the releases that install this chart", exc))
        try:
            _place_profiles(entries, out)
        except Exception as exc:  # noqa: BLE001 - placing profiles is optional: its failure must not stop the run
            from vramlint.model import internal_problem

            first = next(iter(out.charts))
            out.problems.append(internal_problem(_shown(os.path.join(first, "values.yaml")), None,
                                                 "comparing values files with this chart's values", exc))
        try:
            _say_unplaced_values(entries, out)
        except Exception as exc:  # noqa: BLE001 - a note only: its failure must not stop the run
            from vramlint.model import internal_problem

            first = next(iter(out.charts))
            out.problems.append(internal_problem(_shown(os.path.join(first, "values.yaml")), None,
                                                 "looking for values files of this chart that are not read", exc))
    return out


MAX_UNPLACED_SAID = 50  # values files in a chart's folder, naming vLLM, that the chart does not read: said at most


def _say_unplaced_values(entries: list[Any], out: ChartPlan) -> None:
    """A values file in a chart's own folder (`custom-values-qwen3-8b.yaml` beside an umbrella's Chart.yaml) that
    names vLLM, is none of the files Helm reads by itself and was not placed as a profile (`_place_profiles`: its
    keys are not, as a whole, the chart's) is read by nothing: one note per chart names them, so that no such file
    is silent (audit24: ThakiCloud/vllm-manifests-public, four model overlays of an umbrella with no values.yaml,
    which its docs give to the subchart with `helm install ./charts/vllm --values ...`)."""
    from vramlint.model import Problem

    by_chart: dict[str, list[tuple[str, int]]] = {}
    said = 0
    for entry in entries:
        path = entry.path
        if path in out.handled or not _is_values_name(os.path.basename(path)) or said >= MAX_UNPLACED_SAID:
            continue
        own = _outermost_chart(os.path.dirname(os.path.abspath(path)))
        if own is None or _shown(own) not in out.charts:
            continue
        text = _text(path)
        low = (text or "").lower()
        if "vllm" not in low or _TOP_KEY.search(text or "") is None or re.search(r"^kind\s*:", text or "", re.M):
            continue
        line = low[:low.index("vllm")].count("\n") + 1
        by_chart.setdefault(_shown(own), []).append((path, line))
        said += 1
    for chart, files in by_chart.items():
        (first, line), rest = files[0], files[1:]
        has_values = os.path.isfile(os.path.join(chart, "values.yaml"))
        why = ("its keys are not, as a whole, those of the chart's values.yaml" if has_values else
               "the chart has no values.yaml of its own to compare it with")
        others = f" (and {len(rest)} more like it: {', '.join(_shown(p) for p, _ in rest[:4])}" \
                 f"{', ...' if len(rest) > 4 else ''})" if rest else ""
        out.problems.append(Problem(_shown(first), line, 1, (
            f"values file in chart {chart}'s folder that Helm does not read by itself, and not read as the chart's "
            f"values here ({why}){others}: what it deploys is not checked; if it is this chart's, name it with "
            "`--values` to lint it through the chart, as Helm's `-f` applies it"), level="note"))


def _place_releases(entries: list[Any], out: ChartPlan, shown: dict[str, str]) -> None:
    """The Argo CD Applications and helmfile releases of the scan that install one of its charts. A template of a
    chart is read too (an app-of-apps chart's Application), as a release whose templated parts are unknown."""
    from vramlint.helm.releases import find_releases

    charts = {chart: key for chart, key in shown.items() if key in out.charts}
    paths = [e.path for e in entries if e.path not in out.handled or "/templates/" in e.path.replace(os.sep, "/")]
    found = find_releases(paths, charts)
    out.releases = found.by_chart
    out.problems.extend(found.problems)
    out.notes.extend(found.notes)


# Files outside the charts compared with the charts' values shapes per scan, at most (each is read a second time),
# and of them parsed as values (their top-level keys all the charts')
MAX_PROFILE_CANDIDATES = 2000
MAX_PROFILES_READ = 200
MIN_SHARED_PATHS = 4  # key paths a values file must share with a chart's values.yaml, beyond the common keys


def _place_profiles(entries: list[Any], out: ChartPlan) -> None:
    """Values files that sit away from their chart (a cluster profile in `deploy/clusters/<name>/values/`, applied
    with `helm -f`), or in its folder but not among the files Helm reads (`overrides/models/*.yaml`), but whose shape is, as a whole, that of one chart among the scanned ones: every top-level key
    they set is one of the chart's values.yaml keys (or a key every chart takes), their nested keys are the chart's
    (a key under an empty map or a list of the chart's is free), and they share at least MIN_SHARED_PATHS key paths
    with it. Never by one key: a file that more than one chart fits equally is left alone."""
    from vramlint.extract.helm_known import COMMON_KEYS
    from vramlint.helm.values import load_values_file

    shapes = {}
    for chart_key in out.charts:
        data, _origins, problems = load_values_file(os.path.join(chart_key, "values.yaml"), chart_key)
        if isinstance(data, dict) and data and not problems:
            shapes[chart_key] = data
    if not shapes:
        return
    tops = set().union(*(set(d) for d in shapes.values()))
    read = compared = 0
    for entry in entries:
        path = entry.path
        if path in out.handled or not path.lower().endswith((".yaml", ".yml")):
            continue
        own = _outermost_chart(os.path.dirname(os.path.abspath(path)))
        candidates = shapes
        if own is not None:
            # a file of the chart's own folder that is not one the chart reads (an `overrides/models/*.yaml` or a
            # chart-testing `ci/*-values.yaml` applied with `helm -f`): compared with that chart's values alone;
            # a file of a chart without templates, or of one not scanned, is read as it is
            own_key = _shown(own)
            if own_key not in shapes:
                continue
            candidates = {own_key: shapes[own_key]}
        compared += 1
        if compared > MAX_PROFILE_CANDIDATES or read >= MAX_PROFILES_READ:
            out.notes.append(f"values files outside the charts were compared with the charts' values shapes up to "
                             f"vramlint's limit ({MAX_PROFILE_CANDIDATES} files, {MAX_PROFILES_READ} parsed): the "
                             "others are read on their own; name a profile with --values to lint it through its chart")
            break
        text = _text(path)
        keys = set(_TOP_KEY.findall(text or ""))
        if not keys or keys & {"apiVersion", "kind", "services"} or not (keys - COMMON_KEYS) <= (
                tops if candidates is shapes else set(next(iter(candidates.values())))):
            continue
        read += 1
        data, _origins, problems = load_values_file(path, path)
        if not isinstance(data, dict) or problems:
            continue
        fits = []
        for chart_key, chart_data in candidates.items():
            shared = _shared_paths(data, chart_data, COMMON_KEYS, nested_free=own is not None)
            if shared is not None and shared >= MIN_SHARED_PATHS:
                fits.append((shared, chart_key))
        fits.sort(reverse=True)
        if not fits or (len(fits) > 1 and fits[0][0] == fits[1][0]):
            continue
        shared, chart_key = fits[0]
        out.profiles.setdefault(chart_key, []).append(path)
        out.handled[path] = chart_key
        out.notes.append(f"{_shown(path)}: read as values of chart {chart_key} (applied as `helm -f` would), whose "
                         f"values.yaml has every key it sets outside maps whose keys are the user's (labels, node "
                         f"selectors, env) ({shared} key paths in common)")


_TOP_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*:", re.MULTILINE)


def _text(path: str) -> str | None:
    from vramlint.fsread import Refusal, read_text

    text = read_text(path)
    return None if isinstance(text, Refusal) else text


# maps whose keys are the user's (labels, annotations, a node selector's labels, environment variables, resource
# names such as nvidia.com/gpu): the keys under them say nothing of which chart a values file is for
FREE_MAPS = frozenset({"nodeSelector", "labels", "annotations", "podLabels", "podAnnotations", "env", "extraEnv",
                       "resources", "limits", "requests", "commonLabels", "commonAnnotations"})


def _shared_paths(values: dict, chart: dict, common: frozenset[str], depth: int = 0,
                  nested_free: bool = False) -> int | None:
    """How many key paths ``values`` shares with the chart's ``chart`` values, or None when it sets one the chart
    does not have (at the top level a key every chart takes is free and not counted). ``nested_free``: below the
    top level a key the chart does not have is not counted but allowed (a file in the chart's own folder: an
    environment variable or a label the chart's defaults do not list)."""
    shared = 0
    for key, value in values.items():
        if depth == 0 and key in common:
            continue
        if key not in chart:
            if nested_free and depth > 0:
                continue
            return None
        if key in FREE_MAPS and isinstance(value, dict):
            # a map whose keys Kubernetes leaves to the user (a node selector's label, an annotation): a key the
            # chart's defaults do not list is the user's own, not a sign of another chart
            shared += 1
            continue
        shared += 1
        default = chart[key]
        if isinstance(value, dict) and isinstance(default, dict) and default and depth < 3:
            below = _shared_paths(value, default, common, depth + 1, nested_free)
            if below is None:
                return None
            shared += below
    return shared


def _shown(path: str) -> str:
    from vramlint.discover import display_path

    return display_path(path)


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
    problems: list[Any] = list(chart_plan.problems)
    notes: list[str] = list(chart_plan.notes)
    fallback: set[str] = set()
    # the run's time for all its charts goes to the charts that deploy vLLM first: taken in the scan's
    # (alphabetical) order, a repository's vLLM chart came after its grafana and prometheus charts and was starved
    vllm_first = _vllm_charts(chart_plan)
    order = sorted(chart_plan.charts, key=lambda c: c not in vllm_first)
    run_ends = time.monotonic() + RUN_CHART_SECONDS
    late: list[str] = []
    no_vllm: list[str] = []
    for chart in order:
        named = chart_plan.charts[chart]
        overlays = list(values_files) + [p for p in named if p not in values_files]
        chart_releases = chart_plan.releases.get(chart, []) if not overlays else []
        try:
            plain = not names_vllm(chart, overlays + list(chart_plan.profiles.get(chart, [])) +
                                   [v for r in chart_releases for v in r.values], any(r.unread for r in chart_releases))
        except Exception:  # noqa: BLE001 - not known to name no vLLM: evaluated as before
            plain = False
        if plain:
            # whatever its values, such a chart holds no vLLM server: what fails to render in it (a value its
            # Terraform release gives, audit24's 20 charts of yantong1775/groundx-on-prem) is none of vramlint's
            # findings, and evaluating it costs the run's time for charts
            no_vllm.append(chart)
            s, p, n = [], [], []
        elif not render and time.monotonic() >= run_ends:
            if chart in vllm_first:
                from vramlint.model import Problem

                problems.append(Problem(_shown(os.path.join(chart, "Chart.yaml")), 1, 1,
                                        f"chart not evaluated: other charts that deploy vLLM used up the "
                                        f"{RUN_CHART_SECONDS:g} s this run allows for all its Helm charts together, "
                                        "so the servers this chart deploys are not checked; lint this chart's folder "
                                        "on its own to check them", level="warning"))
            else:
                late.append(chart)
            s, p, n = [], [], []
        else:
            s, p, n = None, None, None
        try:
            if s is None:
                s, p, n = extract_charts([chart], overlays, render=render, timeout_s=timeout_s, run_ends=run_ends,
                                         profiles=chart_plan.profiles.get(chart, []), releases=chart_releases)
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
    if no_vllm:
        shown = ", ".join(_shown(c) for c in no_vllm[:8]) + (f" and {len(no_vllm) - 8} more" if len(no_vllm) > 8
                                                             else "")
        notes.append(f"{len(no_vllm)} Helm chart{'s' if len(no_vllm) > 1 else ''} not evaluated, as nothing in "
                     f"{'them' if len(no_vllm) > 1 else 'it'} names vLLM (templates, values, Chart.yaml, subcharts, "
                     f"the values a release gives): {shown}")
    if late:
        shown = ", ".join(_shown(c) for c in late[:8]) + (f" and {len(late) - 8} more" if len(late) > 8 else "")
        notes.append(f"{len(late)} Helm chart{'s' if len(late) > 1 else ''} that do not plainly name vLLM not evaluated: the "
                     f"{RUN_CHART_SECONDS:g} s this run allows for all its charts together ran out first ({shown}); "
                     "lint a chart's folder on its own to evaluate it")
    return servers, problems, notes, fallback


MAX_MENTION_BYTES = 4_000_000  # chart files read per run to find the charts that name vLLM
# per chart, to tell one that names nothing of vLLM: past these, the chart is evaluated as before
MAX_NAMING_FILES = 5000
MAX_NAMING_BYTES = 16_000_000


def names_vllm(chart_dir: str, values: list[Any] = (), unread: bool = False) -> bool:
    """Could this chart deploy a vLLM server? False only when no text of it passes the scan's prefilter (the union of
    every word a server is recognised by: `vllm`, KServe and KAITO kinds, vLLM's option names): no template, values
    file, `Chart.yaml` (its dependencies), file `.Files.Get` may read, no subchart (by its folder's name too), nor
    ``values`` (the files and inline values a release or `--values` gives). ``unread``: a release gives more than
    vramlint read, which may name it. A symbolic link, a packaged subchart or a tree past the limits is not looked
    into: such a chart counts as one that may name vLLM, and is evaluated as before."""
    from vramlint.fsread import Refusal, read_bytes
    from vramlint.prefilter import prefilter

    if unread or "vllm" in os.path.basename(os.path.abspath(chart_dir)).lower():
        return True
    for value in values:
        if isinstance(value, str):
            raw = read_bytes(value, MAX_NAMING_BYTES)
            if isinstance(raw, Refusal) or prefilter(raw.decode("utf-8", errors="replace")):
                return True
        elif prefilter(repr(getattr(value, "data", value))):
            return True
    # The chart's own files are the same whichever release installs it: walked once a run per folder (by its
    # real path, as every read resolves it). 200 Terraform releases of 20 charts walked each chart ten times, and
    # a chart of thousands of files installed by thousands of releases would be read that many times over.
    real = os.path.realpath(chart_dir)
    known = _CHART_FILES_NAME_VLLM.get(real)
    if known is None:
        known = _CHART_FILES_NAME_VLLM[real] = _chart_files_name_vllm(chart_dir)
    return known


# per scan (`clear_run_caches`): a chart folder's real path -> whether its files may name vLLM
_CHART_FILES_NAME_VLLM: dict[str, bool] = {}


def clear_run_caches() -> None:
    """What `names_vllm` keeps of the charts it walked, forgotten: another scan may see other files."""
    _CHART_FILES_NAME_VLLM.clear()


def _chart_files_name_vllm(chart_dir: str) -> bool:
    """`names_vllm` of the chart's own files (templates, values, Chart.yaml, subcharts), without a release."""
    from vramlint.fsread import Refusal, read_bytes
    from vramlint.prefilter import prefilter

    files = 0
    size = 0
    for root, dirs, names in os.walk(chart_dir):
        for name in dirs + names:
            full = os.path.join(root, name)
            if "vllm" in name.lower() or os.path.islink(full) or name.lower().endswith((".tgz", ".tar.gz")):
                return True
        dirs.sort()
        for name in sorted(names):
            files += 1
            raw = read_bytes(os.path.join(root, name), MAX_NAMING_BYTES)
            if files > MAX_NAMING_FILES or isinstance(raw, Refusal):
                return True
            size += len(raw)
            if size > MAX_NAMING_BYTES or prefilter(raw.decode("utf-8", errors="replace")):
                return True
    return False


def _vllm_charts(chart_plan: ChartPlan) -> set[str]:
    """The charts whose Chart.yaml, values or templates plainly mention vLLM (extract/mentions.py's test), or
    that a release of the tree gives values naming it."""
    from vramlint.extract.mentions import first_mention

    files: dict[str, list[str]] = {}
    for path, chart in chart_plan.handled.items():
        files.setdefault(chart, []).append(path)
    for chart, profiles in chart_plan.profiles.items():
        files.setdefault(chart, []).extend(profiles)
    for chart, rels in chart_plan.releases.items():
        files.setdefault(chart, []).extend(v for r in rels for v in r.values if isinstance(v, str))
    budget = MAX_MENTION_BYTES
    out: set[str] = set()
    for chart in chart_plan.charts:
        if len(chart_plan.charts) == 1:
            break
        if "vllm" in os.path.basename(chart).lower():
            out.add(chart)
            continue
        for path in sorted(files.get(chart, []), key=lambda p: "/templates/" in p.replace(os.sep, "/")):
            text = _text(path) if budget > 0 else None
            if text is None:
                continue
            budget -= len(text)
            if "vllm" in text.lower() and first_mention(text) is not None:
                out.add(chart)
                break
    return out
