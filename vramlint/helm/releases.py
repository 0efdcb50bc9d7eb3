"""Releases kept in the scanned tree that install one of its charts, with the values they give.

A chart in a repository is often installed only through a release written beside it: an Argo CD `Application`
(or an `ApplicationSet`'s template) whose `source.path` / `sources[].path` is the chart's folder, or a
`helmfile.yaml` release with `chart: ./path`. Linted with its own values.yaml alone, such a chart fails where
it leaves to the release what only the release sets. Each release found here is evaluated as that release:

- Argo CD (reposerver's helmTemplate): `helm.valueFiles` (relative to the chart's folder; `$ref/...` of a
  `ref:` source in the same repository from its root), then `helm.valuesObject` or else `helm.values` as the
  last values file, then `helm.parameters` as `--set` (`forceString`: `--set-string`). The release is named
  `helm.releaseName` or else the Application's name, in `destination.namespace`.
- Flux (helm-controller over source-controller's chart build): a HelmRelease whose `spec.chart.spec.sourceRef` is
  a GitRepository of this repository and whose `chart` is a folder of it (from the repository's root, securejoin):
  `spec.chart.spec.valuesFiles` (from that root) merged in order take the place of the chart's values.yaml
  (OverwriteChartDefaultValues), then `valuesFrom` (not in the scanned files: said), then `spec.values`.
- helmfile: a release's `values:` (files relative to the helmfile, or inline maps) in order, then its `set:`.
  `environments.*.values` are helmfile's own template data, never a chart's values; a values path naming
  `{{ .Environment.Name }}` is one release per environment declared.

What a release gives that vramlint cannot read (an Argo CD build variable, a templated value, a `.gotmpl` file,
a values file of another repository) leaves the release incomplete: what fails for want of values there is then
not certain to fail. Nothing here imports more than the standard library until a candidate file is read.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from typing import Any

from vramlint.fsread import MAX_FILE_BYTES
from vramlint.lean_dataclass import dataclass
from vramlint.model import Location, Problem

MAX_RELEASE_FILES = 2000  # candidate files read per scan (each is read a second time, and parsed)
# the scan's own limit: a release file between 1 MB and it was left out silently, so the chart was evaluated with
# its defaults while the scan read the Application (hostile23: 4 MB of inline values, its maxLen not checked);
# one larger is said by the walk ("file too large")
MAX_RELEASE_FILE_BYTES = MAX_FILE_BYTES
MAX_PARAMETERS = 2000  # `--set` entries of one release
MAX_RELEASES_PER_CHART = 20  # each is an evaluation of the chart of its own


@dataclass
class InlineValues:
    """Values written in a release file (an Application's `helm.values`, a helmfile's inline map or `set:`),
    each key at the line of that file that sets it."""

    display: str
    data: dict
    origins: dict[tuple, Location]
    problems: list[Problem] = field(default_factory=list)


@dataclass
class Release:
    name: str | None  # the release name Helm is given (None: Helm's default for `helm template`)
    namespace: str | None
    file: str  # the release file, as displayed
    line: int
    kind: str  # "Argo CD Application", "helmfile release" ...
    values: list[Any] = field(default_factory=list)  # value file paths and InlineValues, in Helm's order
    unread: list[str] = field(default_factory=list)  # what the release gives that vramlint could not read
    # the chart's own values.yaml is under the release's values (Flux's valuesFiles take its place: False)
    chart_defaults: bool = True
    # lines of the release file whose values the chart's evaluation reads in place of extract/flux.py's own reading
    # of them as a known chart's values (first, last), or None
    values_span: tuple[int, int] | None = None

    @property
    def label(self) -> str:
        return f"{self.kind} {self.name or ''} ({self.file}:{self.line})".replace("  ", " ")

    @property
    def variant(self) -> str:
        return f"release:{self.file}:{self.line}"


@dataclass
class ReleasePlan:
    by_chart: dict[str, list[Release]] = field(default_factory=dict)  # chart key -> the releases installing it
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


_ARGO = re.compile(r"argoproj\.io/")
_KINDS = ("Application", "ApplicationSet")


def _is_helmfile(path: str) -> bool:
    base = os.path.basename(path).lower()
    return base.startswith("helmfile") or os.path.basename(os.path.dirname(path)).lower() == "helmfile.d"


def find_releases(paths: list[str], charts: dict[str, str]) -> ReleasePlan:
    """``paths``: scanned YAML files that are not a chart's own; ``charts``: chart folder (absolute) -> chart key."""
    from vramlint.fsread import Refusal, read_text

    plan = ReleasePlan()
    read = 0
    flux = _FluxIndex()
    for path in paths:
        if not path.lower().endswith((".yaml", ".yml")):
            continue
        helmfile = _is_helmfile(path)
        if read >= MAX_RELEASE_FILES:
            plan.notes.append(f"files that may hold Argo CD Applications or helmfile releases were read up to "
                              f"vramlint's limit ({MAX_RELEASE_FILES}); charts the others install are linted with "
                              "their own values")
            break
        text = read_text(path, MAX_RELEASE_FILE_BYTES)
        if isinstance(text, Refusal):
            continue
        is_flux = "fluxcd.io/" in text and ("HelmRelease" in text or "GitRepository" in text)
        if not helmfile and not is_flux and not (_ARGO.search(text) and (
                "kind: Application" in text or "kind: \"Application" in text or "kind: 'Application" in text)):
            continue
        read += 1
        try:
            docs, templated = _documents(text, _shown(path))
            for doc in docs:
                if helmfile:
                    _helmfile_releases(doc, docs, path, charts, plan)
                else:
                    if is_flux:
                        flux.add(doc, path)
                    _argo_releases(doc, path, text, charts, plan, templated)
        except Exception as exc:  # noqa: BLE001 - a release file vramlint cannot follow: its charts keep their values
            from vramlint.model import internal_problem

            plan.problems.append(internal_problem(_shown(path), None, "reading the Helm releases of this file", exc))
    for doc, path in flux.releases:
        try:
            _flux_release(doc, path, flux, charts, plan)
        except Exception as exc:  # noqa: BLE001 - a release vramlint cannot follow: its chart keeps its values
            from vramlint.model import internal_problem

            plan.problems.append(internal_problem(doc.file, None, "reading this Flux HelmRelease", exc))
    for chart, rels in plan.by_chart.items():
        if len(rels) > MAX_RELEASES_PER_CHART:
            rest = rels[MAX_RELEASES_PER_CHART:]
            del rels[MAX_RELEASES_PER_CHART:]
            # a finding where the cut falls (the first release left out), not a run note (hostile23's 5,000
            # helmfile releases): what those releases set goes unchecked
            first = rest[0]
            plan.problems.append(Problem(first.file, first.line, 1, (
                f"chart {chart}: {len(rest):,} more releases install it than vramlint evaluates "
                f"({MAX_RELEASES_PER_CHART}): this one and the later ones are not evaluated "
                f"({', '.join(r.label for r in rest[:3])}{' and others' if len(rest) > 3 else ''}), so the values "
                "they give the chart are not checked"), level="note"))
    return plan


_ENV_WORD = "__vramlint_environment_name__"


def _documents(text: str, display: str) -> tuple[list[Any], bool]:
    # helmfile's `{{ .Environment.Name }}` in a values path is kept as a word of its own (one release per
    # environment), not made unknown with the rest of the template text
    text = _ENV_NAME.sub(_ENV_WORD, text)
    if "{{" in text:
        from vramlint.helm.templated import load_templated_text

        docs, _problems, _note = load_templated_text(text, display)
        return docs, True
    from vramlint.yamlload import load_text

    docs, _problems = load_text(text, display)
    return docs, False


def _shown(path: str) -> str:
    from vramlint.discover import display_path

    return display_path(path)


def _unknown_text(v: Any) -> bool:
    from vramlint.helm.templated import OPEN

    return isinstance(v, str) and (OPEN in v or "{{" in v)


def _line_of(file: str, node: Any, key: Any) -> int:
    from vramlint.yamlload import key_location

    loc = key_location(file, node, key)
    return loc.line if loc is not None else 1


# ---------------------------------------------------------------- Argo CD


def _argo_releases(doc: Any, path: str, text: str, charts: dict[str, str], plan: ReleasePlan,
                   templated: bool) -> None:
    data = doc.data
    if not isinstance(data, dict) or not str(data.get("apiVersion", "")).startswith("argoproj.io/"):
        return
    kind = data.get("kind")
    if kind not in _KINDS:
        return
    spec = data.get("spec")
    meta = data.get("metadata")
    if kind == "ApplicationSet":
        template = spec.get("template") if isinstance(spec, dict) else None
        spec = template.get("spec") if isinstance(template, dict) else None
        meta = template.get("metadata") if isinstance(template, dict) else None
    if not isinstance(spec, dict):
        return
    display = doc.file
    name = meta.get("name") if isinstance(meta, dict) else None
    dest = spec.get("destination")
    namespace = dest.get("namespace") if isinstance(dest, dict) else None
    sources: list[Any] = []
    if isinstance(spec.get("sources"), list):
        sources = [s for s in spec["sources"] if isinstance(s, dict)]
    elif isinstance(spec.get("source"), dict):
        sources = [spec["source"]]
    refs = {str(s["ref"]): s for s in sources if isinstance(s.get("ref"), str)}
    for source in sources:
        src_path = source.get("path")
        if not isinstance(src_path, str) or source.get("chart") or _unknown_text(src_path):
            continue
        refused = _argo_path_refusal(src_path)
        if refused is not None:
            problem = Problem(display, _line_of(display, source, "path"), 1, (
                f"source.path {src_path!r}: Argo CD's repo server refuses it (\"{src_path}: {refused}\": util/app/"
                "path.Path), so this Application generates no manifests; the path is relative to the root of the "
                "repository and stays inside it"), level="warning")
            if problem not in plan.problems:
                plan.problems.append(problem)
        found = _chart_by_suffix(src_path, charts, path)
        if found is None:
            continue
        chart_abs, repo_root = found
        helm = source.get("helm") if isinstance(source.get("helm"), dict) else {}
        rel_name = helm.get("releaseName") or name
        rel = Release(None if _unknown_text(rel_name) or not rel_name else str(rel_name),
                      None if _unknown_text(namespace) or not namespace else str(namespace), display,
                      _line_of(display, source, "path"), f"Argo CD {kind}")
        if templated and "/templates/" in path.replace(os.sep, "/"):
            # an app-of-apps chart's template: what it renders (an `if` around it, values it writes) is known only
            # when that chart is rendered
            rel.unread.append("the Application is a chart's template, known only once that chart is rendered")
        _argo_value_files(helm, source, refs, chart_abs, repo_root, display, rel, plan)
        _argo_inline_values(helm, display, text, rel, plan)
        _argo_parameters(helm, display, rel)
        plan.by_chart.setdefault(charts[chart_abs], []).append(rel)


def _argo_path_refusal(src_path: str) -> str | None:
    """Argo CD's own check of a source path (util/app/path.Path, v2.x-v3.x): absolute, or leading out of the
    repository once cleaned (filepath.Join)."""
    if os.path.isabs(src_path):
        return "app path is absolute"
    norm = os.path.normpath(src_path)
    if norm == ".." or norm.startswith(".." + os.sep):
        return "app path outside root"
    return None


def _chart_by_suffix(src_path: str, charts: dict[str, str], release_file: str) -> tuple[str, str] | None:
    """The scanned chart whose folder is ``src_path`` from the root of a repository (Argo CD's `path` is relative
    to the repository's root, which the scan need not start at): (chart folder, that root)."""
    norm = os.path.normpath(src_path.strip().strip("/"))
    if norm in (".", "") or norm.startswith(".."):
        return None
    tail = os.sep + norm
    fits = [c for c in charts if c.endswith(tail)]
    if not fits:
        return None
    # several charts at that path under different roots: the one nearest the release file
    here = os.path.abspath(release_file)
    fits.sort(key=lambda c: -len(os.path.commonpath([c, here])))
    chart = fits[0]
    return chart, chart[: -len(tail)] or os.sep


def _argo_value_files(helm: dict, source: dict, refs: dict, chart_abs: str, repo_root: str, display: str,
                      rel: Release, plan: ReleasePlan) -> None:
    files = helm.get("valueFiles")
    if not isinstance(files, list):
        return
    ignore_missing = helm.get("ignoreMissingValueFiles") is True
    for i, vf in enumerate(files):
        if not isinstance(vf, str) or not vf.strip():
            continue
        if _unknown_text(vf) or "$ARGOCD" in vf or "${ARGOCD" in vf:
            rel.unread.append(f"values file {vf} (known when Argo CD builds the Application)")
            continue
        if vf.startswith(("http://", "https://")):
            rel.unread.append(f"values file {vf} (fetched by Argo CD)")
            continue
        if vf.startswith("$"):
            ref, _, rest = vf[1:].partition("/")
            ref_src = refs.get(ref)
            same_repo = ref_src is not None and _same_repo(ref_src.get("repoURL"), source.get("repoURL"))
            if not same_repo or not rest:
                rel.unread.append(f"values file {vf} (of the `{ref}` source, another repository)")
                continue
            full = os.path.normpath(os.path.join(repo_root, rest))
        elif vf.startswith("/"):
            full = os.path.normpath(os.path.join(repo_root, vf.lstrip("/")))
        else:
            full = os.path.normpath(os.path.join(chart_abs, vf))
        _add_values_file(full, vf, (display, files, i), rel, plan, None if ignore_missing else (
            "Argo CD stops generating the Application's manifests when a values file is missing (unless "
            "`ignoreMissingValueFiles: true`)"))


def _add_values_file(full: str, vf: str, at: tuple[str, Any, int], rel: Release, plan: ReleasePlan,
                     missing: str | None) -> None:
    """The release's values file ``vf`` (at ``full``) added to its values; one refused or missing is said on its
    line (``at``: file, list, index) instead. ``missing``: what the release's tool does without the file, or None
    where it skips a missing one."""
    from vramlint.yamlload import value_location

    refused = _refused_values_file(full)
    if refused is None and os.path.isfile(full):
        rel.values.append(full)
        return
    if refused is None and missing is None:
        return
    loc = value_location(*at) or Location(at[0], rel.line, 1)
    if refused is not None:
        plan.problems.append(Problem(loc.file, loc.line, loc.column, (
            f"values file {vf} of this release is {refused}: not read, so what it sets is unknown; the chart is "
            "evaluated without it"), level="warning"))
        rel.unread.append(f"values file {vf} ({refused})")
        return
    plan.problems.append(Problem(loc.file, loc.line, loc.column, (
        f"values file {vf} of this release is not in the scanned tree ({_shown(full)}): {missing}; the chart is "
        "evaluated without it"), level="warning"))
    rel.unread.append(f"values file {vf} (not in the scanned tree)")


def _refused_values_file(full: str) -> str | None:
    """Why a release's values file that exists is not read (a link out of the tree, a FIFO, a folder, a device:
    `vramlint.fsread`'s rules, said here on the release's line rather than on the file), or None."""
    import stat

    from vramlint.fsread import outside_reason, special_file_reason

    if not os.path.lexists(full):
        return None  # missing: said by the caller in the release tool's words
    why = outside_reason(full)
    if why is not None:
        return why if not os.path.islink(full) else f"a symbolic link to a path {why}"
    try:
        mode = os.stat(full).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return "a folder, not a file"
    return None if stat.S_ISREG(mode) else special_file_reason(mode)


def _same_repo(a: Any, b: Any) -> bool:
    def norm(u: Any) -> str:
        u = str(u or "").strip().lower().rstrip("/")
        return u[:-4] if u.endswith(".git") else u

    return bool(norm(a)) and norm(a) == norm(b)


def _argo_inline_values(helm: dict, display: str, text: str, rel: Release, plan: ReleasePlan) -> None:
    from vramlint.helm.values import _to_plain, load_values_text

    obj = helm.get("valuesObject")
    if isinstance(obj, dict) and obj:
        origins: dict[tuple, Location] = {}
        data = _to_plain(obj, (), "spec.source.helm.valuesObject", display, origins)
        rel.values.append(InlineValues(f"{display} (helm.valuesObject)", _known(data, rel, "helm.valuesObject"),
                                       origins))
        return
    values = helm.get("values")
    if not isinstance(values, str) or not values.strip():
        return
    data, origins, problems = load_values_text(values, display)
    origins = _shift_block(origins, helm, "values", values, display, text)
    if problems:
        # a finding on the `values:` line, not only a run note on standard error: the chart is evaluated without
        # them, so what they set (a --max-model-len) goes unchecked (hostile23: 100,000 keys past the node limit)
        from vramlint.yamlload import key_location

        first = problems[0]
        loc = key_location(display, helm, "values") or Location(display, rel.line, 1)
        # (the block's line 1 is the line after `values: |`)
        why = first.message.replace(" here:", f" at line {loc.line + first.line}:") if first.line else first.message
        plan.problems.append(Problem(loc.file, loc.line, loc.column, (
            f"helm.values of this release not read: {why}; the chart is evaluated without them, so what they set "
            "is not checked"), level="warning"))
        rel.unread.append("helm.values (" + ("over vramlint's limit)" if "limit" in first.message
                                             else "not valid YAML as vramlint reads it)"))
        return
    rel.values.append(InlineValues(f"{display} (helm.values)", _known(data, rel, "helm.values"), origins))


def _shift_block(origins: dict[tuple, Location], node: dict, key: str, value: str, display: str,
                 text: str) -> dict[tuple, Location]:
    """Origins read from a block scalar's own text, moved to the lines of the file that hold it (a literal block
    keeps its lines one for one); where its lines cannot be matched, every key is at the block's key."""
    from vramlint.yamlload import key_location

    key_loc = key_location(display, node, key)
    if key_loc is None:
        return origins
    lines = text.splitlines()
    first = key_loc.line  # 0-based index of the line after the key
    body = value.split("\n")
    indent = None
    for i, vline in enumerate(body):
        if not vline.strip():
            continue
        if first + i >= len(lines):
            break
        fline = lines[first + i]
        stripped = fline.lstrip(" ")
        if stripped.rstrip() != vline.strip() and stripped != vline:
            indent = None
            break
        width = len(fline) - len(stripped) - (len(vline) - len(vline.lstrip(" ")))
        if indent is None:
            indent = width
        elif indent != width:
            indent = None
            break
    if indent is None:
        return {k: Location(display, key_loc.line, key_loc.column, yaml_path=key) for k in origins}
    return {k: Location(display, loc.line + first, loc.column + indent, yaml_path=loc.yaml_path)
            for k, loc in origins.items()}


def _known(data: Any, rel: Release, where: str) -> Any:
    """``data`` with template text (a value Argo CD or a chart above fills in) as unknown values."""
    from vramlint.helm import gotmpl

    said = [False]

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if _unknown_text(v) or isinstance(v, str) and ("$ARGOCD_" in v or "${ARGOCD_" in v):
            if not said[0]:
                rel.unread.append(f"{where}: values written as template text or Argo CD build variables")
                said[0] = True
            return gotmpl.UNKNOWN
        return v

    return walk(data)


def _argo_parameters(helm: dict, display: str, rel: Release) -> None:
    params = helm.get("parameters")
    if not isinstance(params, list) or not params:
        return
    from vramlint.yamlload import value_location

    sets = []
    for p in params[:MAX_PARAMETERS]:
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            continue
        loc = value_location(display, p, "value") or value_location(display, p, "name")
        raw = p.get("value")
        value = "" if raw is None else raw if isinstance(raw, str) else str(raw).lower() if isinstance(
            raw, bool) else str(raw)
        sets.append((p["name"], value, p.get("forceString") is True, loc))
    if len(params) > MAX_PARAMETERS:
        rel.unread.append(f"parameters past the first {MAX_PARAMETERS}")
    inline = set_values(sets, f"{display} (helm.parameters)", rel)
    if inline.data:
        rel.values.append(inline)


# ---------------------------------------------------------------- --set


def set_values(sets: list[tuple[str, str, bool, Location | None]], display: str, rel: Release) -> InlineValues:
    """``--set name=value`` (or `--set-string` when forced) entries as one values layer: Helm's strvals, for the
    forms releases write (dotted keys, `\\.` in a key, `name[0]`, `{a,b}` lists); a value is typed as Helm types
    it (true/false, null, an integer not starting with 0), other text a string."""
    from vramlint.helm import gotmpl

    data: dict = {}
    origins: dict[tuple, Location] = {}
    for name, value, force, loc in sets:
        keys = _set_path(name)
        if keys is None:
            rel.unread.append(f"parameter {name} (a form of --set vramlint does not read)")
            continue
        typed: Any
        if _unknown_text(value) or "$ARGOCD_" in value or "${ARGOCD_" in value:
            typed = gotmpl.UNKNOWN
        elif not force and value.startswith("{") and value.endswith("}"):
            typed = [_typed(x) for x in _split_commas(value[1:-1])] if value[1:-1] else []
        else:
            typed = value if force else _typed(value)
        cur: Any = data
        for i, k in enumerate(keys):
            last = i == len(keys) - 1
            if isinstance(k, int):
                if not isinstance(cur, list) or k > 10_000:
                    cur = None
                    break
                while len(cur) <= k:
                    cur.append(None)
                if last:
                    cur[k] = typed
                else:
                    nxt = keys[i + 1]
                    if not isinstance(cur[k], (dict, list)):
                        cur[k] = [] if isinstance(nxt, int) else {}
                    cur = cur[k]
                continue
            if not isinstance(cur, dict):
                cur = None
                break
            if last:
                cur[k] = typed
            else:
                nxt = keys[i + 1]
                if not isinstance(cur.get(k), (dict, list)) or isinstance(nxt, int) != isinstance(cur[k], list):
                    cur[k] = [] if isinstance(nxt, int) else {}
                cur = cur[k]
        if cur is None:
            rel.unread.append(f"parameter {name} (its path mixes lists and maps)")
            continue
        if loc is not None:
            for n in range(1, len(keys) + 1):
                origins[tuple(keys[:n])] = loc
    return InlineValues(display, data, origins)


def _set_path(name: str) -> list[Any] | None:
    keys: list[Any] = []
    cur = ""
    i = 0
    while i < len(name):
        c = name[i]
        if c == "\\" and i + 1 < len(name):
            cur += name[i + 1]
            i += 2
            continue
        if c == ".":
            if not cur:
                return None
            keys.append(cur)
            cur = ""
        elif c == "[":
            end = name.find("]", i)
            if end < 0 or not name[i + 1:end].isdigit():
                return None
            if cur:
                keys.append(cur)
                cur = ""
            keys.append(int(name[i + 1:end]))
            i = end + 1
            if i < len(name) and name[i] == ".":
                i += 1
            continue
        elif c in "=,":
            return None
        else:
            cur += c
        i += 1
    if cur:
        keys.append(cur)
    if not keys or isinstance(keys[0], int):
        return None
    return keys


def _split_commas(text: str) -> list[str]:
    out, cur, i = [], "", 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            cur += text[i + 1]
            i += 2
            continue
        if text[i] == ",":
            out.append(cur)
            cur = ""
        else:
            cur += text[i]
        i += 1
    out.append(cur)
    return out


def _typed(value: str) -> Any:
    """strvals' typedVal: how `--set` types a value."""
    low = value.lower()
    if low == "true":
        return True
    if low == "false":
        return False
    if low == "null":
        return None
    if value == "0":
        return 0
    if value and value[0] != "0" and re.fullmatch(r"[+-]?\d+", value):
        n = int(value)
        if -(1 << 63) <= n < (1 << 63):
            return n
    return value


# ---------------------------------------------------------------- helmfile

_ENV_NAME = re.compile(r"\{\{-?\s*\.Environment\.Name\s*-?\}\}")


def _helmfile_releases(doc: Any, docs: list[Any], path: str, charts: dict[str, str], plan: ReleasePlan) -> None:
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("releases"), list):
        return
    envs: list[str] = []
    env_values = False
    for d in docs:
        if isinstance(d.data, dict) and isinstance(d.data.get("environments"), dict):
            envs.extend(str(e) for e in d.data["environments"] if not _unknown_text(str(e)))
            env_values = env_values or any(isinstance(e, dict) and e.get("values")
                                           for e in d.data["environments"].values())
    base = os.path.dirname(os.path.abspath(path))
    display = doc.file
    for release in data["releases"]:
        if not isinstance(release, dict) or not isinstance(release.get("chart"), str):
            continue
        chart = release["chart"]
        if _unknown_text(chart):
            continue
        chart_abs = os.path.normpath(os.path.join(base, chart))
        if chart_abs not in charts:
            continue
        values = release.get("values") if isinstance(release.get("values"), list) else []
        if not values and not release.get("set") and env_values:
            plan.notes.append(f"{display}:{_line_of(display, release, 'chart')}: release {release.get('name')} gives "
                              f"chart {chart} no values: `environments.*.values` are helmfile's own template data "
                              "(`.Values` in helmfile.yaml and *.gotmpl files), never a chart's values; name the "
                              "chart's values files under the release's `values:`")
        per_env = any(isinstance(v, str) and _ENV_WORD in v for v in values)
        for env in (envs or ["default"]) if per_env else [None]:
            name = release.get("name")
            ns = release.get("namespace")
            rel = Release(None if _unknown_text(name) or not name else str(name),
                          None if _unknown_text(ns) or not ns else str(ns), display,
                          _line_of(display, release, "chart"),
                          "helmfile release" + (f" (environment {env})" if env else ""))
            for k, v in enumerate(values):
                if isinstance(v, dict):
                    from vramlint.helm.values import _to_plain

                    origins: dict[tuple, Location] = {}
                    plain = _to_plain(v, (), "", display, origins)
                    rel.values.append(InlineValues(f"{display} (release values)", _known(plain, rel, "values"),
                                                   origins))
                elif isinstance(v, str):
                    text = v.replace(_ENV_WORD, env) if env else v
                    if _unknown_text(text):
                        rel.unread.append(f"values file {v} (named by template text)")
                        continue
                    full = os.path.normpath(os.path.join(base, text))
                    if full.endswith(".gotmpl"):
                        rel.unread.append(f"values file {text} (a template helmfile renders)")
                        continue
                    refused = _refused_values_file(full)
                    if refused is not None:
                        from vramlint.yamlload import value_location

                        loc = value_location(display, values, k) or Location(display, rel.line, 1)
                        problem = Problem(loc.file, loc.line, loc.column, (
                            f"values file {text} of this release is {refused}: not read, so what it sets is "
                            "unknown; the chart is evaluated without it"), level="warning")
                        if problem not in plan.problems:  # (one release per environment names it again)
                            plan.problems.append(problem)
                        rel.unread.append(f"values file {text} ({refused})")
                        continue
                    if not os.path.isfile(full):
                        rel.unread.append(f"values file {text} (not in the scanned tree)")
                        continue
                    rel.values.append(full)
            sets = []
            for s in release.get("set") or []:
                if isinstance(s, dict) and isinstance(s.get("name"), str) and "value" in s:
                    from vramlint.yamlload import value_location

                    raw = s["value"]
                    value = raw if isinstance(raw, str) else str(raw).lower() if isinstance(raw, bool) else str(raw)
                    sets.append((s["name"], value, False, value_location(display, s, "value")))
            if sets:
                inline = set_values(sets, f"{display} (release set)", rel)
                if inline.data:
                    rel.values.append(inline)
            plan.by_chart.setdefault(charts[chart_abs], []).append(rel)


# ---------------------------------------------------------------- Flux

_FLUX_HELM = "helm.toolkit.fluxcd.io/"
_FLUX_SOURCE = "source.toolkit.fluxcd.io/"


class _FluxIndex:
    """The scan's Flux HelmReleases, and its GitRepositories by name (the URL each fetches)."""

    def __init__(self) -> None:
        self.releases: list[tuple[Any, str]] = []
        self.git: dict[str, list[tuple[str | None, Any]]] = {}  # name -> [(namespace, url)]
        self.helm_charts: dict[str, list[tuple[str | None, str, dict]]] = {}  # name -> [(namespace, file, spec)]

    def add(self, doc: Any, path: str) -> None:
        data = doc.data
        if not isinstance(data, dict):
            return
        api, kind = str(data.get("apiVersion", "")), data.get("kind")
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        if api.startswith(_FLUX_HELM) and kind == "HelmRelease":
            self.releases.append((doc, path))
        elif api.startswith(_FLUX_SOURCE) and kind == "HelmChart" and isinstance(meta.get("name"), str) and \
                isinstance(data.get("spec"), dict):
            ns = meta.get("namespace")
            self.helm_charts.setdefault(meta["name"], []).append((ns if isinstance(ns, str) else None, doc.file,
                                                                 data["spec"]))
        elif api.startswith(_FLUX_SOURCE) and kind == "GitRepository" and isinstance(meta.get("name"), str):
            spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
            ns = meta.get("namespace")
            self.git.setdefault(meta["name"], []).append((ns if isinstance(ns, str) else None, spec.get("url")))

    def url_of(self, name: str, namespace: str | None) -> tuple[str | None, str]:
        """The URL of the GitRepository ``name`` (in ``namespace`` when both are known), and why none if so."""
        found = [url for ns, url in self.git.get(name, []) if ns is None or namespace is None or ns == namespace]
        urls = {str(u) for u in found if isinstance(u, str) and u.strip() and not _unknown_text(u)}
        if not found:
            return None, f"the GitRepository {name} is not in the scanned files"
        if len(urls) != 1:
            return None, f"the GitRepository {name}'s URL is " + ("not one plain URL" if not urls else
                                                                 f"ambiguous ({', '.join(sorted(map(_shown_url, urls)))})")
        return urls.pop(), ""


def _repo_root(path: str) -> str | None:
    """The root of the repository that holds ``path``, as far as the scan can tell: the nearest folder holding
    `.git`, up to the scanned root that holds the file; without one, that scanned root."""
    from vramlint.fsread import current_roots

    here = os.path.dirname(os.path.realpath(path))
    roots = [r for r in (current_roots() or ()) if here == r or here.startswith(r.rstrip(os.sep) + os.sep)]
    top = max(roots, key=len) if roots else None
    d = here
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if d == top or parent == d:
            break
        d = parent
    return top


def _git_remotes(root: str) -> list[str]:
    """The remote URLs `.git/config` of ``root`` names, when it is a regular file the scan may read."""
    from vramlint.fsread import Refusal, read_text

    config = os.path.join(root, ".git", "config")
    if not os.path.isfile(config):
        return []
    text = read_text(config, 100_000)
    if isinstance(text, Refusal):
        return []
    return re.findall(r"^\s*url\s*=\s*(\S+)\s*$", text, re.M)[:50]


def _shown_url(url: str) -> str:
    """A URL as said in a finding: without the user and password a `https://user:token@host/...` remote holds."""
    return re.sub(r"^([a-zA-Z+]+://)[^/@]*@", r"\1", url.strip())


def _git_url_key(url: str) -> str:
    """A git URL as host/path (`git@host:org/repo.git`, `ssh://git@host/org/repo`, `https://host/org/repo`)."""
    u = url.strip().lower()
    u = re.sub(r"^[a-z+]+://", "", u)
    u = re.sub(r"^[^@/]+@", "", u)
    u = re.sub(r"^([^/:]+):(?!\d+/)", r"\1/", u)  # scp form host:org/repo
    u = re.sub(r"^([^/:]+):\d+/", r"\1/", u)  # a port
    u = u.rstrip("/")
    return u[:-4] if u.endswith(".git") else u


def _flux_release(doc: Any, path: str, flux: _FluxIndex, charts: dict[str, str], plan: ReleasePlan) -> None:
    """A HelmRelease whose chart is a folder of a GitRepository that is this repository, as helm-controller
    installs it: source-controller joins the chart path and each `valuesFiles` entry with the repository's root
    (securejoin: never outside it) and the merged files replace the chart's values.yaml; helm-controller then
    merges `valuesFrom` in order and `spec.values` over them."""
    data = doc.data
    spec = data.get("spec")
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    if not isinstance(spec, dict):
        return
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    chart = spec.get("chart")
    inner = chart.get("spec") if isinstance(chart, dict) else None
    display = doc.file
    source_file = display  # the file of the chart's spec: the release's, or a HelmChart's that spec.chartRef names
    chart_ref = spec.get("chartRef")
    if not isinstance(inner, dict) and isinstance(chart_ref, dict) and chart_ref.get("kind") == "HelmChart":
        # helm-controller installs the chart that HelmChart object builds (its chart path, sourceRef, valuesFiles)
        ref_ns = chart_ref.get("namespace") if isinstance(chart_ref.get("namespace"), str) else namespace
        found = [(ns, f, sp) for ns, f, sp in flux.helm_charts.get(str(chart_ref.get("name")), [])
                 if ns is None or ref_ns is None or ns == ref_ns]
        if len(found) != 1:
            return  # not in the scanned files (or not one): nothing to pair the release with
        chart_ns, source_file, inner = found[0]
        source_default_ns = chart_ns or ref_ns  # a HelmChart's sourceRef is in the HelmChart's own namespace
    else:
        source_default_ns = namespace
    ref = inner.get("sourceRef") if isinstance(inner, dict) else None
    if not isinstance(ref, dict) or ref.get("kind") != "GitRepository" or not isinstance(inner.get("chart"), str):
        return
    written = inner["chart"]
    if _unknown_text(written) or "\x00" in written or not isinstance(ref.get("name"), str) or _leads_out(written):
        return  # (a path leading out of the repository is said on its line by extract/flux.py, and not read)
    root = _repo_root(path)
    if root is None:
        return
    chart_abs = os.path.normpath(os.path.join(root, os.path.normpath("/" + written).lstrip("/")))
    if chart_abs not in charts:
        return  # not a chart of the scanned tree: the release's values are read on their own (extract/flux.py)
    line = _line_of(display, inner, "chart") if source_file == display else _line_of(display, spec, "chartRef")
    source_ns = ref.get("namespace") if isinstance(ref.get("namespace"), str) else source_default_ns
    url, why = flux.url_of(ref["name"], source_ns)
    remotes = _git_remotes(root)
    if url is not None and remotes and _git_url_key(url) not in {_git_url_key(r) for r in remotes}:
        why = (f"the GitRepository {ref['name']} fetches {_shown_url(url)}, not this repository "
               f"({_shown_url(remotes[0])})")
        url = None
    if url is None:
        plan.problems.append(Problem(display, line, 1, (
            f"this HelmRelease installs the chart {written} of a GitRepository, and {why}: the chart "
            f"{_shown(chart_abs)} of the scanned tree is linted with its own values, not with this release's; "
            "scan the repository the GitRepository fetches, or with the GitRepository of this one"), level="note"))
        return
    target_ns = spec.get("targetNamespace") if isinstance(spec.get("targetNamespace"), str) else None
    name = spec.get("releaseName") if isinstance(spec.get("releaseName"), str) else None
    if name is None and isinstance(meta.get("name"), str):
        # helm-controller's GetReleaseName: <targetNamespace>-<name>, shortened with a hash past 53 characters
        name = f"{target_ns}-{meta['name']}" if target_ns else meta["name"]
    if name is not None and (len(name) > 53 or _unknown_text(name)):
        name = None
    ns = target_ns or namespace
    rel = Release(name, None if ns is None or _unknown_text(ns) else ns, display, line, "Flux HelmRelease")
    if not remotes:
        rel.unread.append(f"whether the GitRepository {ref['name']} ({_shown_url(url)}) is this repository (no git "
                          "remote to compare it with)")
    _flux_values_files(inner, root, source_file, rel, plan)
    _flux_values_from(spec.get("valuesFrom"), rel)
    values = spec.get("values")
    if isinstance(values, dict) and values:
        from vramlint.helm.values import _to_plain

        origins: dict[tuple, Location] = {}
        plain = _to_plain(values, (), "spec.values", display, origins)
        rel.values.append(InlineValues(f"{display} (spec.values)", _known(plain, rel, "spec.values"), origins))
        lines = [loc.line for loc in origins.values() if loc.line is not None]
        if lines:
            rel.values_span = (min(lines), max(lines))
    plan.by_chart.setdefault(charts[chart_abs], []).append(rel)


def _leads_out(written: str) -> bool:
    """A repository path that is absolute or leads out with `..` (source-controller reads it inside the root)."""
    return written.startswith("/") or os.path.normpath(written).startswith("..")


def _flux_values_files(inner: dict, root: str, display: str, rel: Release, plan: ReleasePlan) -> None:
    files = inner.get("valuesFiles")
    if not isinstance(files, list) or not files:
        return
    rel.chart_defaults = False  # OverwriteChartDefaultValues: the merged files are the chart's values now
    ignore_missing = inner.get("ignoreMissingValuesFiles") is True
    for i, vf in enumerate(files[:MAX_PARAMETERS]):
        if not isinstance(vf, str) or not vf.strip() or "\x00" in vf:
            continue
        if _unknown_text(vf):
            rel.unread.append(f"values file {vf} (named by template text)")
            continue
        if _leads_out(vf):
            rel.unread.append(f"values file {vf} (leads out of the repository)")
            continue
        full = os.path.normpath(os.path.join(root, os.path.normpath("/" + vf).lstrip("/")))
        _add_values_file(full, vf, (display, files, i), rel, plan, None if ignore_missing else (
            "source-controller builds no chart when a values file is missing (mergeFileValues; unless "
            "`ignoreMissingValuesFiles: true`)"))


def _flux_values_from(written: Any, rel: Release) -> None:
    if not isinstance(written, list):
        return
    for source in written[:MAX_PARAMETERS]:
        if isinstance(source, dict):
            what = f"{source.get('kind') or 'object'} {source.get('name') or '?'}"
            target = source.get("targetPath")
            rel.unread.append(f"valuesFrom {what}" + (f" ({target})" if isinstance(target, str) else ""))
