"""Charts without Helm: evaluate a chart's templates against its values, extract, map findings to values lines.

`render_chart` returns, per template, the rendered text and an `OutputMap` that knows for each output
character which values key or template character produced it. `extract_chart` runs the normal Kubernetes
extraction on that text and rewrites every Location of every server to the values line (or template line).
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import field, fields, is_dataclass, replace
from typing import Any

from vramlint.discover import display_path
from vramlint.fsread import Refusal, is_inside, outside_reason, read_text
from vramlint.helm import gotmpl
from vramlint.helm.gotmpl import (
    UNKNOWN_MARKER,
    BudgetExceeded,
    Evaluator,
    TemplateError,
    TemplateSource,
    TStr,
)
from vramlint.helm.values import (
    Values,
    coalesce,
    load_values_file,
    subchart_values,
    was_not_read,
    was_refused,
)
from vramlint.lean_dataclass import dataclass
from vramlint.model import Location, Problem, Server, add_new_problems

RELEASE_NAME = "release-name"  # what `helm template` calls a release when none is given
NAMESPACE = "default"
_TEMPLATE_EXT = (".yaml", ".yml", ".tpl", ".txt", ".json")
MAX_TEMPLATE_BYTES = 1_000_000


@dataclass
class Chart:
    path: str  # on disk
    display: str  # as shown to users
    name: str
    meta: dict
    helm_name: str  # the name Helm gives its templates: "parent/charts/sub" for a subchart
    subcharts: list[Chart] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    meta_unread: bool = False  # its Chart.yaml was not read (outside the tree, not a regular file, too large)


def is_chart_dir(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "Chart.yaml"))


def chart_for_values_file(path: str) -> str | None:
    """The chart a values file belongs to: `Chart.yaml` in its directory or the parent directory."""
    d = os.path.dirname(os.path.abspath(path))
    for cand in (d, os.path.dirname(d)):
        if is_chart_dir(cand):
            return display_path(cand)
    return None


def _display(path: str) -> str:
    return display_path(path)


def _join_display(base: str, *parts: str) -> str:
    out = os.path.join(base, *parts)
    return out[2:] if out.startswith("./") else out


# Subcharts read below one chart, all levels together: a chart whose charts/ holds links back to itself (or a
# dozen links to one chart, each holding a dozen more) would otherwise be read 12**5 times.
MAX_SUBCHARTS = 200
MAX_SUBCHART_DEPTH = 5


def load_chart(path: str, display: str | None = None, helm_name: str | None = None, depth: int = 0,
               _above: tuple[str, ...] = (), _count: list[int] | None = None) -> Chart:
    """The chart at ``path`` with its subcharts (``_above``: the real paths of the charts holding it, a loop
    guard; ``_count``: subcharts read so far under the top chart)."""
    from vramlint.helm.values import load_values_text  # noqa: F401 - same module family

    count = _count if _count is not None else [0]
    above = (*_above, os.path.realpath(path))

    display = display if display is not None else _display(path)
    meta: dict = {}
    problems: list[Problem] = []
    chart_yaml = os.path.join(path, "Chart.yaml")
    data, _origins, probs = load_values_file(chart_yaml, _join_display(display, "Chart.yaml"), "chart file")
    problems.extend(probs)
    meta = data if isinstance(data, dict) else {}
    name = str(meta.get("name") or os.path.basename(os.path.abspath(path)))
    chart = Chart(path, display, name, meta, helm_name or name, problems=problems)
    chart.meta_unread = was_not_read(data, probs)
    if depth < MAX_SUBCHART_DEPTH:
        charts_dir = os.path.join(path, "charts")
        past_limit: list[str] = []
        outside = os.path.isdir(charts_dir) and outside_reason(charts_dir)
        if outside:
            # Helm's loader walks a linked charts/ folder (sympath.Walk follows links); vramlint lists nothing
            # outside the tree, so what those subcharts deploy goes unchecked: said on the chart (hostile24)
            chart.problems.append(Problem(_join_display(display, "Chart.yaml"), 1, 1, (
                f"{_join_display(display, 'charts')} leads {outside} (a symbolic link): not listed, so the subcharts "
                "Helm would find there are not checked"), level="warning"))
        elif os.path.isdir(charts_dir):
            for entry in sorted(os.listdir(charts_dir)):
                sub = os.path.join(charts_dir, entry)
                if os.path.islink(sub) and not is_inside(sub):
                    chart.notes.append(f"{_join_display(display, 'charts', entry)}: a symbolic link to a place "
                                       "outside the scanned tree: not read")
                    continue
                if os.path.isdir(sub) and is_chart_dir(sub):
                    if os.path.realpath(sub) in above:
                        chart.notes.append(f"{_join_display(display, 'charts', entry)}: a link back to a chart that "
                                           "holds it (a loop; Helm would recurse until it fails): not read")
                        continue
                    if count[0] >= MAX_SUBCHARTS:
                        past_limit.append(entry)
                        continue
                    count[0] += 1
                    chart.subcharts.append(
                        load_chart(sub, _join_display(display, "charts", entry), f"{chart.helm_name}/charts/{entry}",
                                   depth + 1, above, count)
                    )
                elif entry.endswith(".tgz"):
                    chart.notes.append(f"{_join_display(display, 'charts', entry)}: packaged subchart not read "
                                       "(unpack it, or render with --render-helm)")
        if past_limit:
            # a finding on this chart's Chart.yaml, not a run note (hostile22/23): what these subcharts deploy is
            # part of the release and goes unchecked
            chart.problems.append(Problem(_join_display(display, "Chart.yaml"), 1, 1, (
                f"more than {MAX_SUBCHARTS} subcharts under one chart (vramlint's limit): {len(past_limit)} in "
                f"{_join_display(display, 'charts')} not read ({', '.join(past_limit[:3])}"
                f"{', ...' if len(past_limit) > 3 else ''}), so what they deploy is not checked"), level="warning"))
    elif os.path.isdir(os.path.join(path, "charts")):
        # Helm itself has no depth limit, so what lies below is part of the release: said on this chart's
        # Chart.yaml (a finding, not a run note: hostile22's 120-deep chain)
        chart.problems.append(Problem(_join_display(display, "Chart.yaml"), 1, 1, (
            f"subcharts nested more than {MAX_SUBCHART_DEPTH} levels deep (vramlint's limit): those in "
            f"{_join_display(display, 'charts')} are not read, so what they deploy is not checked"), level="warning"))
    return chart


def chart_values(chart: Chart, overlays: list[str], defaults: bool = True) -> tuple[Values, list[Problem]]:
    """The chart's `values.yaml` coalesced with each overlay in order (Helm's `-f a -f b`); ``defaults`` False:
    the overlays alone (a Flux release's `valuesFiles`, which source-controller writes in place of values.yaml)."""
    import gc

    # The values live as long as the chart is evaluated: frozen once each file is merged, they are not walked again
    # by the collections that loading the next one starts (20 overlays of 12,000 nodes: 9.4 CPU-s -> 5.0); the
    # unfreeze puts them in the oldest generation, as the scan does with what each file leaves
    try:
        return _chart_values(chart, overlays, gc.freeze, defaults)
    finally:
        gc.unfreeze()


def _chart_values(chart: Chart, overlays: list[str], freeze: Any, defaults: bool = True) -> tuple[Values, list[Problem]]:
    problems: list[Problem] = []
    vals = Values()
    vpath = os.path.join(chart.path, "values.yaml")
    if defaults and os.path.isfile(vpath):
        data, origins, probs = load_values_file(vpath, _join_display(chart.display, "values.yaml"))
        problems.extend(probs)
        vals = Values(data, origins, [_join_display(chart.display, "values.yaml")])
        if was_not_read(data, probs):
            vals.unread.append(_join_display(chart.display, "values.yaml"))
        elif was_refused(data, probs):
            vals.refused.append(_join_display(chart.display, "values.yaml"))
        freeze()
    for ov in overlays:
        if isinstance(ov, str):
            shown = _display(ov)
            data, origins, probs = load_values_file(ov, shown)
        else:  # values a release writes in its own file (vramlint.helm.releases.InlineValues)
            shown, data, origins, probs = ov.display, ov.data, ov.origins, list(ov.problems)
        problems.extend(probs)
        coalesce(vals, data, origins, shown)
        if was_not_read(data, probs):
            vals.unread.append(shown)
        elif was_refused(data, probs):
            vals.refused.append(shown)
        del data, origins
        freeze()
    vals.data.setdefault("global", {})
    return vals, problems


# ---------------------------------------------------------------- rendering


@dataclass
class Rendered:
    template: TemplateSource
    output: TStr
    doc_offsets: list[int] = field(default_factory=list)


@dataclass
class ChartRender:
    chart: Chart
    sources: list[TemplateSource]
    rendered: list[Rendered]
    problems: list[Problem]
    reasons: list[str]


def _template_files(chart: Chart) -> list[tuple[str, str, str]]:
    out = []
    tdir = os.path.join(chart.path, "templates")
    if not os.path.isdir(tdir):
        return out
    if not is_inside(tdir):  # a `templates` link out of the tree is not walked (its files would be refused)
        chart.problems.append(Problem(_join_display(chart.display, "templates"), None, None,
                                      "templates is a symbolic link to a folder outside the scanned tree: not read",
                                      "warning"))
        return out
    prefix = os.path.join(chart.path, "")
    for root, dirs, files in os.walk(tdir):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(_TEMPLATE_EXT):
                continue
            full = os.path.join(root, f)
            # (os.walk's roots start with tdir, so with the chart's path: relpath cost 0.17 ms a file)
            rel = (full[len(prefix):] if full.startswith(prefix) else os.path.relpath(full, chart.path)).replace(
                os.sep, "/")
            out.append((full, _join_display(chart.display, rel), f"{chart.helm_name}/{rel}"))
    return out


def _chart_object(chart: Chart) -> dict:
    m = chart.meta
    return {
        "Name": chart.name,
        "Version": m.get("version"),
        "AppVersion": m.get("appVersion"),
        "Description": m.get("description"),
        "Type": m.get("type") or "application",
        "ApiVersion": m.get("apiVersion"),
        "Annotations": m.get("annotations") or {},
        "Keywords": m.get("keywords"),
        "Home": m.get("home"),
    }


def _root_extra(chart: Chart, release: str, namespace: str = NAMESPACE) -> dict:
    return {
        "Chart": gotmpl.to_go_number(_chart_object(chart)),
        "Release": {"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": True,
                    "IsUpgrade": False, "Revision": 1},
        "Capabilities": {"KubeVersion": {"Version": "v1.30.0", "Major": "1", "Minor": "30",
                                          "GitVersion": "v1.30.0"},
                         "HelmVersion": {"Version": "v3.16.0"}},
        "Files": gotmpl.UNKNOWN,
    }


def _all_charts(chart: Chart, vals: Values) -> list[tuple[Chart, Values]]:
    """The chart and each enabled subchart with the values it sees."""
    deps = chart.meta.get("dependencies") or []
    out = [(chart, _with_absent_dependencies(chart, deps, vals))]
    for sub in chart.subcharts:
        dep = next((d for d in deps if isinstance(d, dict) and d.get("name") == sub.name), None)
        key = str(dep.get("alias") or sub.name) if dep else sub.name
        if dep and isinstance(dep.get("condition"), str):
            enabled = _condition(vals.data, dep["condition"])
            if enabled is False:
                continue
        sub_defaults = Values()
        vpath = os.path.join(sub.path, "values.yaml")
        if os.path.isfile(vpath):
            data, origins, probs = load_values_file(vpath, _join_display(sub.display, "values.yaml"))
            sub.problems.extend(probs)
            sub_defaults = Values(data, origins, [_join_display(sub.display, "values.yaml")])
        out.extend(_all_charts(sub, subchart_values(vals, key, sub_defaults)))
    return out


def _with_absent_dependencies(chart: Chart, deps: list, vals: Values) -> Values:
    """``vals`` with the block of each dependency that Chart.yaml declares and charts/ does not hold (not
    vendored: `helm dependency build` fetches it at install) made open: Helm gives the chart that dependency's
    values under `.Values.<alias or name>`, which vramlint does not have, so what the chart reads there and its
    own values do not set is unknown, not nil."""
    present = {sub.name for sub in chart.subcharts}
    absent = []
    for dep in deps:
        if not isinstance(dep, dict) or not dep.get("name") or str(dep["name"]) in present:
            continue
        if isinstance(dep.get("condition"), str) and _condition(vals.data, dep["condition"]) is False:
            continue
        absent.append(str(dep.get("alias") or dep["name"]))
    if not absent:
        return vals
    data = dict(vals.data)
    for key in absent:
        data[key] = gotmpl.open_map(data.get(key))
    return Values(data, vals.origins, vals.files, list(vals.unread))


def _condition(data: dict, cond: str) -> bool | None:
    for path in cond.split(","):
        cur: Any = data
        for part in path.strip().split("."):
            if not isinstance(cur, dict) or part not in cur:
                cur = None
                break
            cur = cur[part]
        if isinstance(cur, bool):
            return cur
    return None


def render_chart(chart: Chart, vals: Values, release: str = RELEASE_NAME,
                 deadline: float | None = None, own_values_only: bool = False,
                 overlays_found: str | None = None, namespace: str = NAMESPACE,
                 release_unread: str | None = None) -> list[ChartRender]:
    """Evaluate every template of the chart (and its subcharts) with the bounded evaluator. ``own_values_only``:
    with the chart's values.yaml and no overlay (a value `required` asks for is then the installer's to give).
    ``overlays_found``: the names of the overlays when vramlint found them rather than the user naming them; a
    profile such as `values.production.yaml` may leave to the installer what `required` asks for, as the chart's
    defaults do. ``release_unread``: the values are a release's from the scanned tree, part of which vramlint
    could not read (said): what fails for want of values may be set there."""
    pairs = _all_charts(chart, vals)
    # a chart with no values.yaml has no defaults of its own: it is only ever installed with the values a release
    # gives (`helm install -f`, a Zarf or Argo CD values file), so what fails without any is not a release's defect
    no_defaults = own_values_only and not os.path.isfile(os.path.join(chart.path, "values.yaml"))
    # Helm shares `define`s across a chart and its subcharts.
    sources: list[TemplateSource] = []
    parsed: dict[int, list] = {}
    defines: dict[str, tuple[int, list]] = {}
    file_templates: set[str] = set()
    owners: dict[int, int] = {}
    problems_by_chart: dict[int, list[Problem]] = {i: [] for i in range(len(pairs))}
    for ci, (c, _v) in enumerate(pairs):
        for full, display, helm_name in _template_files(c):
            text = read_text(full, MAX_TEMPLATE_BYTES)
            if isinstance(text, Refusal):
                # a symlink out of the chart, a FIFO, a device: never read (vramlint.fsread)
                problems_by_chart[ci].append(Problem(display, None, None, f"template {display} is {text.reason}: "
                                                     "not evaluated", "warning"))
                continue
            tid = len(sources)
            src = TemplateSource(helm_name, display, text)
            sources.append(src)
            owners[tid] = ci
            try:
                nodes, defs = gotmpl.parse_template(text, tid)
            except TemplateError as exc:
                problems_by_chart[ci].append(_problem_at(sources, exc, own_values_only, no_defaults, overlays_found,
                                                         release_unread))
                continue
            except RecursionError:
                problems_by_chart[ci].append(Problem(display, 1, 1, "template not evaluated: its blocks are nested "
                                                     "too deeply for vramlint to read"))
                continue
            parsed[tid] = nodes
            for name, body in defs.items():
                defines[name] = (tid, body)
            # Helm names each file's template by its path, so `include (print $.Template.BasePath
            # "/configmap.yaml") .` (a checksum annotation) renders that file
            if helm_name not in defines:
                defines[helm_name] = (tid, nodes)
                file_templates.add(helm_name)
    out: list[ChartRender] = []
    chart_steps = 0
    stopped: list[str] = []  # templates left out once a limit of the whole chart was reached
    for ci, (c, v) in enumerate(pairs):
        ev = Evaluator(sources, defines, gotmpl.to_go_number(v.data), v.origins, _root_extra(c, release, namespace),
                       chart_steps=chart_steps, deadline=deadline, file_templates=frozenset(file_templates))
        rendered: list[Rendered] = []
        for tid, nodes in parsed.items():
            if owners[tid] != ci:
                continue
            base = os.path.basename(sources[tid].name)
            if base.startswith("_") or base == "NOTES.txt":
                continue
            if stopped:
                stopped.append(sources[tid].display)
                continue
            ev.start_template()
            try:
                output = ev.render(tid, nodes)
            except TemplateError as exc:
                problems_by_chart[ci].append(_problem_at(sources, exc, own_values_only, no_defaults, overlays_found,
                                                         release_unread))
                if isinstance(exc, gotmpl.ChartBudgetExceeded):
                    stopped.append(sources[tid].display)
                continue
            except (RecursionError, MemoryError) as exc:
                # a last resort: the evaluator's limits are meant to stop every template well before these
                what = "nested too deeply" if isinstance(exc, RecursionError) else "too large"
                problems_by_chart[ci].append(Problem(sources[tid].display, 1, 1,
                                                     f"template not evaluated: {what} for vramlint to evaluate"))
                continue
            if output.text.strip():
                rendered.append(Rendered(sources[tid], output))
        chart_steps = ev.chart_steps
        out.append(ChartRender(c, sources, rendered, _one_per_chart(problems_by_chart[ci]) + list(c.problems),
                               ev.reasons))
    if len(stopped) > 1 and out:
        more = f" (and {len(stopped) - 4} more)" if len(stopped) > 4 else ""
        out[-1].problems.append(Problem(stopped[1], 1, 1, "template not evaluated: the chart's evaluation limit "
                                        f"was reached at {stopped[0]}; also not evaluated: "
                                        f"{', '.join(stopped[1:4])}{more}"))
    return out


# one cause per chart: Helm stops at the release's first failure, and what fails for want of values fails alike
_RELEASE_VALUES = ("helm template fails without values:", "helm template would fail: nil pointer",
                   "helm template fails with the chart's own values: nil pointer",
                   "helm template fails with this release's values as vramlint read them: nil pointer")


def _one_per_chart(problems: list[Problem]) -> list[Problem]:
    """The templates that fail only for want of the values a release gives are one cause: the first is the
    finding, the others named in it (a warning per template was 27 identical warnings over five charts)."""
    first: dict[str, int] = {}
    more: dict[str, list[str]] = {}
    out: list[Problem] = []
    for p in problems:
        kind = next((k for k in _RELEASE_VALUES if p.message.startswith(k)), None)
        if kind is None:
            out.append(p)
        elif kind not in first:
            first[kind] = len(out)
            more[kind] = []
            out.append(p)
        else:
            where = f"{p.file}:{p.line}" if p.line else p.file
            if where not in more[kind]:
                more[kind].append(where)
    for kind, i in first.items():
        rest = more[kind]
        if rest:
            shown = ", ".join(rest[:5]) + (f" and {len(rest) - 5} more" if len(rest) > 5 else "")
            out[i] = replace(out[i], message=f"{out[i].message} (so do {len(rest)} more places of the chart, for "
                             f"want of values: {shown}; Helm stops at the first)")
    return out


def _problem_at(sources: list[TemplateSource], exc: TemplateError, own_values_only: bool = False,
                no_defaults: bool = False, overlays_found: str | None = None,
                release_unread: str | None = None) -> Problem:
    loc = sources[exc.origin[0]].location(exc.origin[1]) if exc.origin is not None else None
    unset_key = ".Values." + ".".join(str(p) for p in exc.path[:-1]) if isinstance(exc, gotmpl.UnsetValue) else ""
    if isinstance(exc, gotmpl.UnsetValue) and loc is not None and own_values_only and not no_defaults:
        # with the chart's values.yaml alone and no release in the tree, a key its defaults leave out is one the
        # chart expects from whoever installs it (`-f`, an Argo CD Application elsewhere): not certain to fail
        return Problem(loc.file, loc.line, loc.column,
                       f"helm template fails with the chart's own values: {exc}: {unset_key} is not set in its "
                       "values.yaml, so the chart expects this value from its release; give the values a release "
                       "uses (--values FILE, or `values:` in .vramlint.yaml) to check that release", level="warning")
    if release_unread and loc is not None and (
            isinstance(exc, (gotmpl.UnsetValue, gotmpl.RequiredMissing, gotmpl.ChartRefused))):
        what = f"{unset_key} is not set" if unset_key else "the chart asks for values at install time"
        return Problem(loc.file, loc.line, loc.column,
                       f"helm template fails with this release's values as vramlint read them: {exc}: {what}; the "
                       f"release gives more than vramlint could read ({release_unread}), which may set it",
                       level="warning")
    if no_defaults and loc is not None and type(exc) in (TemplateError, gotmpl.UnsetValue) \
            and str(exc).startswith("nil pointer"):
        return Problem(loc.file, loc.line, loc.column,
                       f"helm template fails without values: {exc}: the chart has no values.yaml, so it is installed "
                       "only with the values a release gives; give them (--values FILE, or `values:` in "
                       ".vramlint.yaml) to check that release", level="warning")
    if isinstance(exc, (gotmpl.RequiredMissing, gotmpl.ChartRefused)) and own_values_only and loc is not None:
        # a chart that leaves a value empty for `required`, or whose own `fail` refuses its defaults (`fail "token
        # is empty: pass it with --set-string"`), asks whoever installs it for values (a token, a model, a storage
        # class): with its own defaults alone that is the design, not a defect of the release
        how = "asks for this value at install time (`required`)" if isinstance(exc, gotmpl.RequiredMissing) \
            else "refuses its own defaults on purpose (`fail`): it asks for values at install time"
        return Problem(loc.file, loc.line, loc.column,
                       f"helm template fails with the chart's own values: {exc}: the chart {how}; give the values "
                       "a release uses (--values FILE, or `values:` in .vramlint.yaml) to check that release",
                       level="warning")
    if isinstance(exc, (gotmpl.RequiredMissing, gotmpl.ChartRefused)) and overlays_found and loc is not None:
        # an overlay vramlint picked up (values-prod.yaml beside the chart) is one set of values a release may
        # start from, completed with --set or another file at install; it was not named as a release's values
        how = "asks for this value at install time (`required`)" if isinstance(exc, gotmpl.RequiredMissing) \
            else "refuses these values on purpose (`fail`): it asks for more at install time"
        return Problem(loc.file, loc.line, loc.column,
                       f"helm template fails with {overlays_found}, found in the repository: {exc}: the chart {how}; "
                       "if that is all a release gives, helm refuses it; name the values a release uses "
                       "(--values FILE, or `values:` in .vramlint.yaml) to check that release", level="warning")
    if isinstance(exc, BudgetExceeded):
        # not Helm's error: vramlint stopped evaluating this template, so what it deploys is not checked
        where = loc.file if loc is not None else "the template"
        values_loc = exc.values_location
        if values_loc is not None:
            used = f" (used at {loc.file}:{loc.line})" if loc is not None else ""
            return Problem(values_loc.file, values_loc.line, values_loc.column,
                           f"template not evaluated: {exc}{used}; the servers {where} deploys are not checked")
        if loc is not None:
            return Problem(loc.file, loc.line, loc.column,
                           f"template not evaluated: {exc}; the servers {where} deploys are not checked")
    if isinstance(exc, gotmpl.UnsetValue) and loc is not None:
        # installed with these values, helm stops here; the key is named, as Helm's message does not
        return Problem(loc.file, loc.line, loc.column,
                       f"helm template would fail: {exc}: .Values.{'.'.join(str(p) for p in exc.path[:-1])} is not "
                       "set in the values" + (" (the chart's values.yaml; a release that gives it, with --values "
                                              "FILE or `values:` in .vramlint.yaml, is checked with it)"
                                              if own_values_only else ""))
    if isinstance(exc, gotmpl.UnsetGlobal):
        # the chart may be a parent's dependency, whose `global:` values Helm copies into it: not certain to fail
        where = (loc.file, loc.line, loc.column) if loc is not None else (sources[0].display if sources else "",
                                                                          None, None)
        return Problem(*where, f"helm template would fail with these values: {exc}: .Values."
                       f"{'.'.join(str(p) for p in exc.path[:-1])} is not set; global values are the ones a parent "
                       "chart passes to its subcharts, so installed as a dependency it may render",
                       level="warning")
    if loc is not None:
        return Problem(loc.file, loc.line, loc.column, f"helm template would fail: {exc}")
    return Problem(sources[0].display if sources else "", None, None, f"helm template would fail: {exc}")


# ---------------------------------------------------------------- mapping rendered positions back


class OutputMap:
    """Rendered text positions -> where the text came from (values Location or template Location)."""

    def __init__(self, output: TStr, sources: list[TemplateSource]):
        self.output = output
        self.sources = sources
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", output.text)]

    def offset(self, line: int, column: int) -> int:
        if line - 1 >= len(self.line_starts):
            return len(self.output.text)
        return min(self.line_starts[line - 1] + column - 1, len(self.output.text))

    def line_end(self, off: int) -> int:
        i = bisect.bisect_right(self.line_starts, off)
        return self.line_starts[i] - 1 if i < len(self.line_starts) else len(self.output.text)

    def origin_location(self, org: Any, yaml_path: str) -> Location | None:
        if isinstance(org, Location):
            return org
        if isinstance(org, tuple):
            loc = self.sources[org[0]].location(org[1])
            return replace(loc, yaml_path=yaml_path)
        return None

    def values_origins(self, start: int, end: int) -> list[Location]:
        seen: list[Location] = []
        for org in self.output.origins[start:end]:
            if isinstance(org, Location) and org not in seen:
                seen.append(org)
        return seen

    def map(self, loc: Location, *, prefer_after: str | None = None, follow_item: bool = False) -> Location:
        start = self.offset(loc.line, loc.column)
        if loc.end_line == loc.line and loc.end_column:
            end = self.offset(loc.line, loc.end_column)
        else:
            end = self.line_end(start)
        text = self.output.text[start:end]
        vals = self.values_origins(start, end)
        if prefer_after and prefer_after in text:
            cut = start + text.rindex(prefer_after) + len(prefer_after)
            tail = self.values_origins(cut, end)
            if len(tail) == 1:
                return tail[0]
        if len(vals) == 1:
            return vals[0]
        if not vals and follow_item and "=" not in text:
            nxt = self._next_item(end)
            if nxt is not None:
                return nxt
        if start < len(self.output.origins):
            org = self.output.origins[start]
            if isinstance(org, Location) and len(vals) > 1:
                # ambiguous: several keys built this text; the template line is the honest answer
                for org2 in self.output.origins[start:end]:
                    if isinstance(org2, tuple):
                        org = org2
                        break
            found = self.origin_location(org, loc.yaml_path)
            if found is not None:
                return found
        return loc

    def _next_item(self, end: int) -> Location | None:
        """`- "--max-model-len"` followed by `- {{ .Values.x | quote }}`: the value's key, when it is alone."""
        i = bisect.bisect_right(self.line_starts, end)
        while i < len(self.line_starts):
            s = self.line_starts[i]
            e = self.line_end(s)
            line = self.output.text[s:e]
            if line.strip():
                if not line.lstrip().startswith("- "):
                    return None
                vals = self.values_origins(s, e)
                return vals[0] if len(vals) == 1 else None
            i += 1
        return None


def _walk_locations(obj: Any, fn, depth: int = 0) -> Any:
    if depth > 6:
        return obj
    if isinstance(obj, Location):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: _walk_locations(v, fn, depth + 1) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_walk_locations(v, fn, depth + 1) for v in obj]
    if is_dataclass(obj) and not isinstance(obj, type):
        for f in fields(obj):
            setattr(obj, f.name, _walk_locations(getattr(obj, f.name), fn, depth + 1))
        return obj
    return obj


def _has_marker(v: Any) -> bool:
    from vramlint.yamlload import has_template_marker

    return isinstance(v, str) and (UNKNOWN_MARKER in v or has_template_marker(v))


def remap_server(server: Server, omap: OutputMap) -> None:
    """Point every Location of a server extracted from rendered text at its values or template origin."""
    arg_locs = dict(server.arg_locations)
    model_loc = server.model_location
    image_loc = server.image_location
    server.arg_locations = {}
    _walk_locations(server, lambda loc: omap.map(loc))
    server.arg_locations = {k: omap.map(v, follow_item=True) for k, v in arg_locs.items()}
    if model_loc is not None:
        server.model_location = omap.map(model_loc, follow_item=True)
    if image_loc is not None:
        server.image_location = omap.map(image_loc, prefer_after=":")
    for k, v in list(server.args.items()):
        if _has_marker(v):
            server.args[k] = None
    if _has_marker(server.model):
        server.model = None
    if _has_marker(server.image):
        server.image = None
        server.vllm_version = None
    for k, v in list(server.env.items()):
        if _has_marker(v):
            server.env[k] = None


# ---------------------------------------------------------------- extraction


@dataclass
class ChartResult:
    servers: list[Server] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # `--config` files of the servers and the ConfigMaps the chart renders, each with the OutputMap of its
    # template: joined once every template of the chart is rendered (`join_chart_configs`)
    config_refs: list[tuple[Any, OutputMap]] = field(default_factory=list)
    configmaps: list[tuple[Any, OutputMap]] = field(default_factory=list)
    node_pools: list[Any] = field(default_factory=list)  # Karpenter NodePools the chart renders
    device_claims: list[Any] = field(default_factory=list)  # DRA ResourceClaim(Template)s the chart renders


class _FileMaps:
    """The OutputMap of each rendered template by its display name: a server KServe builds from a runtime and an
    InferenceService of two templates has locations in both."""

    def __init__(self, default: OutputMap, by_file: dict[str, OutputMap]) -> None:
        self.default = default
        self.by_file = by_file

    def map(self, loc: Location, **kw: Any) -> Location:
        return self.by_file.get(loc.file, self.default).map(loc, **kw)


def extract_rendered(cr: ChartRender, variant: str | None, values_files: list[str]) -> ChartResult:
    from vramlint.extract import clear_template_values, extract_document_records
    from vramlint.yamlload import load_text

    res = ChartResult()
    omaps: dict[str, OutputMap] = {}
    multi_files: set[str] = set()
    runtimes: list[Any] = []
    isvcs: list[Any] = []

    def add_problems(probs: list[Problem], omap: Any) -> None:
        for p in probs:
            if p.line is not None:
                loc = omap.map(Location(p.file, p.line, p.column or 1))
                if UNKNOWN_MARKER in p.message:
                    continue
                res.problems.append(Problem(loc.file, loc.line, loc.column, p.message, level=p.level))
            else:
                res.problems.append(p)

    def add_server(s: Server, omap: Any, display: str, doc_index: int | None) -> None:
        ypath = s.location.yaml_path
        remap_server(s, omap)
        s.file = display
        suffix = f"[doc{doc_index}]" if doc_index is not None else ""
        if variant:
            suffix += f"?values={variant}"
        s.location = replace(s.location, yaml_path=ypath + suffix)
        s.notes.append(f"from Helm chart {cr.chart.display} ({display}) with values "
                       f"{', '.join(values_files) or '(none)'}, evaluated without Helm")
        res.servers.append(s)

    for r in cr.rendered:
        omap = OutputMap(r.output, cr.sources)
        omaps[r.template.display] = omap
        docs, problems = load_text(r.output.text, r.template.display)
        for p in problems:
            if p.line is not None and p.message.startswith("invalid YAML") and "vllm" in r.output.text.lower():
                # the documents from there on are not read, so a server in them would be gone with a line on stderr
                # only (an unknown part at the start of a line, such as an unevaluated tpl): said in the reports
                loc = omap.map(Location(p.file, p.line, p.column or 1))
                res.problems.append(Problem(
                    loc.file, loc.line, loc.column,
                    f"the template as vramlint evaluated it is not valid YAML here ({p.message}): any vLLM server "
                    "it deploys is not checked; render with --render-helm for an exact result", level="note"))
            elif p.line is not None:
                loc = omap.map(Location(p.file, p.line, p.column or 1))
                res.notes.append(f"{loc.file}:{loc.line}: the evaluated template is not valid YAML ({p.message}); "
                                 "render with --render-helm for an exact result")
        multi = len(docs) > 1
        if multi:
            multi_files.add(r.template.display)
        for doc in docs:
            # KServe's objects are joined once every template is rendered: a chart may render the ServingRuntime
            # and the InferenceService that names it in two templates (KServe finds the runtime by name)
            records = extract_document_records(doc, join_kserve=False)
            runtimes.extend(records.runtimes)
            isvcs.extend(records.inference_services)
            res.config_refs.extend((ref, omap) for ref in records.config_refs)
            res.configmaps.extend((cm, omap) for cm in records.configmaps)
            for pool in records.node_pools:  # its requirements on the values lines that set them
                res.node_pools.append(_walk_locations(pool, lambda loc, omap=omap: omap.map(loc)))
            for claim in records.device_claims:
                res.device_claims.append(_walk_locations(claim, lambda loc, omap=omap: omap.map(loc)))
            add_problems(records.problems, omap)
            for s in records.servers:
                add_server(s, omap, r.template.display, doc.index if multi else None)
    if runtimes or isvcs:
        from vramlint.extract import kserve

        joined, probs, refs = kserve.join(runtimes, isvcs)
        # the document each server stands on: an InferenceService's, or an unused runtime's own
        doc_of = {(i.doc.file, "InferenceService", i.name): i.doc for i in isvcs}
        doc_of.update({(rt.doc.file, rt.kind, rt.name): rt.doc for rt in runtimes})
        for s in joined:
            clear_template_values(s)
            omap = omaps.get(s.file)
            if omap is None:
                continue
            maps = _FileMaps(omap, omaps)
            doc = doc_of.get((s.file, s.kind, s.name))
            add_server(s, maps, s.file, doc.index if doc is not None and s.file in multi_files else None)
        add_problems(probs, _FileMaps(next(iter(omaps.values())), omaps) if omaps else None)
        res.config_refs.extend((ref, omaps.get(ref.server.file) or next(iter(omaps.values()))) for ref in refs)
    return res


def _notes_of_tree(chart: Chart) -> list[str]:
    """The notes of the chart and of every subchart under it: a subchart's own left-out parts (a link out of the
    tree, a packaged chart, the depth limit) are the release's too."""
    notes: list[str] = []
    stack = [chart]
    while stack:
        c = stack.pop()
        notes.extend(c.notes)
        stack.extend(reversed(c.subcharts))
    return notes


def extract_chart(chart_dir: str, overlays: list[Any], variant: str | None = None,
                  deadline: float | None = None, overlays_found: bool = False, release: Any = None) -> ChartResult:
    """``overlays_found``: the overlays are files vramlint found beside the chart or shaped like its values, not
    ones the user named as a release's values (``--values``, `values:`). ``release``: the release of the scanned
    tree (vramlint.helm.releases.Release) whose values ``overlays`` are: the chart is evaluated as that release
    (its name and namespace), and judged as Helm judges the values it gives."""
    chart = load_chart(chart_dir)
    vals, problems = chart_values(chart, overlays, getattr(release, "chart_defaults", True))
    res = ChartResult(problems=list(problems), notes=_notes_of_tree(chart))
    if chart.meta_unread:
        # Helm reads Chart.yaml first and stops where it cannot: nothing of this chart is rendered (its Chart.yaml's
        # own finding says why); its templates, when they are files of another chart too, are checked there
        res.problems.append(Problem(_join_display(chart.display, "Chart.yaml"), 1, 1, "chart not evaluated: its "
                                    "Chart.yaml was not read, and Helm renders no chart without it", level="warning"))
        return res
    if vals.unread:
        # rendered without them, the templates would see empty values and vramlint would report what the values
        # files may well set (an empty --max-model-len): unknown, so not evaluated
        res.problems.append(Problem(_join_display(chart.display, "Chart.yaml"), 1, 1,
                                    f"chart not evaluated: {', '.join(vals.unread)} was not read, so the values its "
                                    "templates use are unknown and the servers this chart deploys are not checked "
                                    "(the values file's finding says why)", level="warning"))
        return res
    refused = vals.refused if not overlays_found else vals.refused[:1] if vals.refused and vals.refused[0] == \
        _join_display(chart.display, "values.yaml") else []
    if refused:
        # Helm loads the values before any template and stops on a file it cannot parse: nothing is rendered, and
        # the values file's own error is the one finding (rendered with empty values, every `.Values.x.y` was a
        # nil-pointer error of its own: 14 of them on one chart whose values.yaml held a merge conflict)
        res.problems.append(Problem(_join_display(chart.display, "Chart.yaml"), 1, 1,
                                    f"chart not evaluated: Helm refuses {', '.join(refused)} (its finding says why) "
                                    "and renders none of the chart's templates", level="note"))
        return res
    if deadline is None:
        import time

        deadline = time.monotonic() + gotmpl.CHART_SECONDS
    try:
        found = ", ".join(os.path.basename(o) for o in overlays) if overlays_found and overlays and \
            release is None else None
        extra: dict[str, Any] = {}
        if release is not None:
            extra = {"release": release.name or RELEASE_NAME, "namespace": release.namespace or NAMESPACE,
                     "release_unread": "; ".join(release.unread[:3]) if release.unread else None}
        # a release that gives no values of its own to a chart without a values.yaml is no evidence of the values
        # it is installed with (helmfile's environment values are its templates' data, not the chart's)
        own_only = not overlays and (release is None or not os.path.isfile(os.path.join(chart.path, "values.yaml")))
        renders = render_chart(chart, vals, deadline=deadline, own_values_only=own_only,
                               overlays_found=found, **extra)
    except RecursionError:
        res.problems.append(Problem(chart.display, None, None, "chart nested too deeply to evaluate"))
        return res
    reasons: list[str] = []
    for cr in renders:
        res.problems.extend(cr.problems)
        part = extract_rendered(cr, variant, vals.files)
        res.servers.extend(part.servers)
        res.notes.extend(part.notes)
        res.config_refs.extend(part.config_refs)
        res.configmaps.extend(part.configmaps)
        res.node_pools.extend(part.node_pools)
        res.device_claims.extend(part.device_claims)
        # what reading the rendered documents found (a vLLM image with a launcher command vramlint does not
        # follow, a field it cannot read), on the template or values lines, at the level it was found at
        add_new_problems(res.problems, part.problems)
        reasons.extend(cr.reasons)
    join_chart_configs(res, chart.display)
    if any(s.device_claims for s in res.servers):
        from vramlint.extract.resource_claims import join_device_claims

        join_device_claims(res.servers, res.device_claims)
    if res.node_pools:
        from vramlint.extract.node_pools import join_node_pools

        join_node_pools(res.servers, res.node_pools)
    if reasons:
        uniq = list(dict.fromkeys(reasons))
        more = f" (and {len(uniq) - 3} more)" if len(uniq) > 3 else ""
        res.notes.append(f"chart {chart.display}: some template expressions were not evaluated and are unknown: "
                         + "; ".join(uniq[:3]) + more)
    return res


def join_chart_configs(res: ChartResult, chart_display: str) -> None:
    """`vllm serve --config FILE` where FILE is mounted from a ConfigMap the same chart renders (a
    `config.yaml: {{ toYaml .Values.vllm.config | nindent 4 }}`): the file's keys join the server as vLLM reads
    them, each at the values line that set it (or the template line that wrote it). A ConfigMap the chart does
    not render is said once on the server (`Server.unread_config`)."""
    if not res.config_refs:
        return
    from vramlint.extract.config_join import join_config_refs

    by_name: dict[str, list[Any]] = {}
    omaps: dict[int, OutputMap] = {}
    for cm, omap in res.configmaps:
        by_name.setdefault(cm.name, []).append(cm)
        omaps[id(cm)] = omap
    found: list[Problem] = []

    def relocate(server: Server, before: Any, cm: Any) -> None:
        omap = omaps[id(cm)]
        for dest in [d for d in server.args if d not in before.args]:
            if dest in server.arg_locations:
                server.arg_locations[dest] = omap.map(server.arg_locations[dest], follow_item=True)
            if _has_marker(server.args[dest]):
                server.args[dest] = None
        if server.model_location is not before.model_location and server.model_location is not None:
            server.model_location = omap.map(server.model_location, follow_item=True)
        if _has_marker(server.model):
            server.model = None
        for flag in [f for f in server.unknown_args if f not in before.unknown]:
            server.unknown_args[flag] = omap.map(server.unknown_args[flag])
        for error in server.startup_errors[before.errors:]:
            if isinstance(error.get("location"), Location):
                error["location"] = omap.map(error["location"])
        prefix = f"{cm.file}:"
        for i in range(before.notes, len(server.notes)):  # "FILE:LINE: ..." of the config's own problems
            note = server.notes[i]
            head, _, rest = note[len(prefix):].partition(": ")
            if note.startswith(prefix) and head.isdigit():
                loc = omap.map(Location(cm.file, int(head), 1))
                server.notes[i] = f"{loc.file}:{loc.line}: {rest}"

    join_config_refs([ref for ref, _omap in res.config_refs], by_name, found, relocate,
                     absent=f"is not rendered by chart {chart_display} with these values; its settings are not "
                     "included (a template that failed is said where it failed)")
    cm_omaps = {cm.file: omap for cm, omap in res.configmaps}
    for p in found:  # the evaluated config text is not valid YAML: perhaps the evaluator's, so a note
        omap = cm_omaps.get(p.file)
        loc = omap.map(Location(p.file, p.line, p.column or 1)) if omap is not None and p.line else None
        where = f"{loc.file}:{loc.line}: " if loc is not None else ""
        res.notes.append(f"{where}the config file the chart renders into a ConfigMap is not valid YAML "
                         f"({p.message}); render with --render-helm for an exact result")
