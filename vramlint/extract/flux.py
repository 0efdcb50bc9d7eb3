"""Flux's HelmRelease (helm.toolkit.fluxcd.io): a chart installed with the values written in ``spec.values``.

helm-controller renders the chart (``spec.chart.spec.chart`` from a HelmRepository, or ``spec.chartRef``) with
the values of ``spec.valuesFrom`` (ConfigMaps and Secrets) merged in order and ``spec.values`` merged last, over
them all (fluxcd.io/flux/components/helm/helmreleases/#values-overrides). ``spec.values`` is therefore read as a
values file of the chart it installs, with the same recognition as a values file (the values shape of a chart
vramlint knows, never one key): the servers and findings land on the HelmRelease's own lines, and their YAML
paths start at ``spec.values`` so that fixes edit that mapping. Values from ``valuesFrom`` are not in the file;
a server whose release takes some is said to have keys it does not show. Values of a chart vramlint does not know
give no server here (the file's vLLM mention says so), except bjw-s's app-template (`app_template`), named by the
release and recognised by its values shape, whose containers are read as the pods it makes. A release of a chart
folder of this repository's GitRepository is evaluated with that chart of the tree (`vramlint.helm.releases`), and
its values' reading here is then dropped in the scan's join.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from vramlint.extract import app_template
from vramlint.extract.podspec import is_map, is_seq, scalar_text
from vramlint.extract.records import Records
from vramlint.yamlload import Document, join_path


def _chart_name(spec: Any) -> str | None:
    """The chart a release installs: spec.chart.spec.chart, or the name of the source spec.chartRef points at."""
    chart = spec.get("chart")
    inner = chart.get("spec") if is_map(chart) else None
    if is_map(inner) and inner.get("chart") is not None:
        return scalar_text(inner.get("chart"))
    ref = spec.get("chartRef")
    return scalar_text(ref.get("name")) if is_map(ref) and ref.get("name") is not None else None


def _under(base: str, path: str) -> str:
    if not path:
        return base
    return f"{base}{path}" if path.startswith("[") else f"{base}.{path}"


# a server's note names this many of the valuesFrom sources that reach it, and counts the others: a release of
# 2,000 model entries and 20,000 sources made 2,000 notes of 20,000 names each (1.2 GB, a minute)
_SOURCES_NAMED = 10


def _value_sources(written: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """The release's valuesFrom entries read once: what the whole-document ones are ("values from ConfigMap x"),
    and the targeted ones as (targetPath, what it says), sorted by path so that a server finds its own by
    bisection rather than by reading them all."""
    whole: list[str] = []
    targeted: list[tuple[str, str]] = []
    if not is_seq(written):
        return whole, targeted
    for source in written:
        if not is_map(source):
            continue
        target = scalar_text(source.get("targetPath"))
        what = f"{scalar_text(source.get('kind')) or 'object'} {scalar_text(source.get('name')) or '?'}"
        if target is None:
            whole.append(f"values from {what}")
        else:
            targeted.append((target, f"{target} from {what}"))
    targeted.sort()
    return list(dict.fromkeys(whole)), targeted


def _targeting(targeted: list[tuple[str, str]], own: str) -> list[str]:
    """The targeted sources that set ``own`` or a key under it (in their path order)."""
    import bisect

    found: list[str] = []
    for prefix, exact in ((own, True), (own + ".", False), (own + "[", False)):
        i = bisect.bisect_left(targeted, (prefix, ""))
        while i < len(targeted) and (targeted[i][0] == prefix if exact else targeted[i][0].startswith(prefix)):
            found.append(targeted[i][1])
            i += 1
    return found


def _git_paths_leading_out(doc: Any, spec: Any, records: Records) -> None:
    """A chart from a GitRepository names its chart folder and `valuesFiles` as paths in that repository.
    source-controller joins each with the artifact's root by securejoin (internal/helm/chart/builder_local.go:
    the chart path and mergeFileValues, "paths may not traverse outside baseDir"): one that is absolute or leads
    out with `..` is read inside the repository, as the path left once the `..` past its root are dropped, never
    outside it. Said on its line, as vramlint reads neither (hostile24/26 leftover: silent)."""
    import posixpath

    from vramlint.model import Problem
    from vramlint.yamlload import value_location

    chart = spec.get("chart")
    inner = chart.get("spec") if is_map(chart) else None
    ref = inner.get("sourceRef") if is_map(inner) else None
    if not is_map(ref) or scalar_text(ref.get("kind")) != "GitRepository":
        return
    repo = scalar_text(ref.get("name")) or "?"
    places: list[tuple[Any, Any, str]] = [(inner, "chart", "the chart folder")]
    files = inner.get("valuesFiles")
    if is_seq(files):
        places += [(files, i, "the values file") for i in range(min(len(files), 1000))]
    for node, key, what in places:
        written = scalar_text(node[key])
        if not written or "\x00" in written:
            continue
        cleaned = posixpath.normpath("/" + written)  # securejoin: no `..` past the root, no leading `/`
        if not (written.startswith("/") or posixpath.normpath(written).startswith("..")):
            continue
        loc = value_location(doc.file, node, key)
        if loc is None:
            continue
        records.problems.append(Problem(doc.file, loc.line, loc.column, (
            f"{what} {written} leads out of the GitRepository {repo}: Flux's source-controller joins it inside "
            f"the repository (securejoin), as {cleaned.lstrip('/') or '.'}, never outside; vramlint does not read "
            "it, so what it sets is not checked"), level="note"))


def extract_helm_release(doc: Any, obj: Any, path: str, records: Records) -> bool:
    from vramlint.extract.helm_values import extract_helm_values, is_helm_values

    spec = obj.get("spec")
    if is_map(spec):
        _git_paths_leading_out(doc, spec, records)
    values = spec.get("values") if is_map(spec) else None
    vpath = join_path(join_path(path, "spec"), "values")
    if is_map(values) and _chart_name(spec) == app_template.CHART and app_template.is_app_template_values(values):
        app_template.read_app_template(doc, obj, values, vpath, records)
        return True
    if not is_map(values) or not is_helm_values(values, None) or app_template.values_blocks(values):
        # another chart's values, or none written here: no pod spec to read (app-template's shape under a chart
        # that is not app-template is that chart's own values, which its templates use as they like)
        return True
    servers, problems = extract_helm_values(Document(doc.file, doc.index, values, doc.lines))
    whole, targeted = _value_sources(spec.get("valuesFrom"))
    whole_set = set(whole)
    for server in servers:
        own = server.location.yaml_path
        server.location = dataclasses.replace(server.location, yaml_path=_under(vpath, own))
        server.values_keys = {dest: (_under(vpath, slot[0]), slot[1]) if isinstance(slot, tuple) else slot
                              for dest, slot in server.values_keys.items()}
        # a valuesFrom entry with a targetPath sets that one key; one without merges a whole values document
        own_sources = [x for x in dict.fromkeys(_targeting(targeted, own)) if x not in whole_set]
        count = len(whole) + len(own_sources)
        if count:
            shown = ", ".join((whole[:_SOURCES_NAMED] + own_sources)[:_SOURCES_NAMED])
            if count > _SOURCES_NAMED:
                shown += f" and {count - _SOURCES_NAMED:,} more"
            server.notes.append(f"spec.valuesFrom sets {shown} (not in the scanned files; spec.values overrides "
                                "what both set)")
    records.servers.extend(servers)
    records.problems.extend(problems)
    return True
