"""Kustomize overlays evaluated in-process: each kustomization no other one includes is built into its set of
objects, and the servers of that set are read with every Location on the line of the file that set the value
(the patch line when a patch set it, the base line otherwise).

What is evaluated follows kustomize's own semantics (sigs.k8s.io/kustomize/api, v5): `resources` (files and
folders with a kustomization; `bases` is their old name), `components`, `configMapGenerator` (`literals`, `envs`,
`env`, `files`, `behavior: merge|replace`), strategic-merge and JSON 6902 patches (`patches` with or without
`target`, `patchesStrategicMerge`, `patchesJson6902`), `images`, `namePrefix`/`nameSuffix`, `namespace`,
`commonLabels`/`labels`, `commonAnnotations`, `replicas` and `replacements`, applied in kustomize's order (its
builtin transformers run patches, then namespace, prefix/suffix, labels, JSON 6902 patches, replicas, images,
replacements). Kubernetes' own filling of `env[].valueFrom.configMapKeyRef` and `envFrom[].configMapRef` from a
ConfigMap of the same set is done too (kustomize renames those references with the ConfigMap, so the set's
ConfigMap is the one the pod gets).

Bounds: kustomizations nested at most MAX_DEPTH deep, at most MAX_RESOURCES objects a set, nothing read outside
the scanned tree (`vramlint.fsread`), no remote base fetched (a URL in `resources` is an unknown, said once), no
generator or transformer plugin run (said once per kustomization, with what to do).

A base that an overlay includes is judged through its overlays: its findings name the base's lines, and the
run's deduplication (`commands.check.dedupe_findings`) says a finding shared by the overlays once. A patch file
is never a server of its own.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any

from vramlint.intparse import small_int
from vramlint.model import Location, Problem, Server

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
MAX_DEPTH = 16
MAX_RESOURCES = 1000
MAX_ROOTS = 500
MAX_PATCH_OPS = 1000
# nodes of the objects one build copies (each overlay copies its base) and that its patches merge into them: a
# bound on the work of many overlays over large bases, and of patches fanned out over many objects, as each file's
# own size is bounded where it is read
MAX_BUILD_NODES = 400_000
# kustomizations evaluated for one root: bases that name the same bases (a diamond) are built once per path, as
# kustomize builds them, which grows as the product of the fan-outs (13 levels of 3: 1.6 million builds)
MAX_BUILDS = 2000

# Fields evaluated here; any other top-level field of a kustomization is said once, with what to do.
_EVALUATED = frozenset((
    "apiVersion", "kind", "metadata", "resources", "bases", "components", "configMapGenerator", "patches",
    "patchesStrategicMerge", "patchesJson6902", "images", "namePrefix", "nameSuffix", "namespace", "commonLabels",
    "labels", "commonAnnotations", "replicas", "replacements", "imageTags",
))
# Fields that change nothing a vLLM server's budget or flags depend on.
_HARMLESS = frozenset(("generatorOptions", "buildMetadata", "sortOptions", "secretGenerator", "openapi", "crds",
                       "configurations"))


@dataclass
class Org:
    """Where a node of a built object was written: file as displayed, 1-based line and column."""

    file: str
    line: int
    col: int


class KMap(dict):
    """A mapping of a built object, with where each key and each value was written."""

    __slots__ = ("at", "korg", "vorg")

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.at: Org | None = None
        self.korg: dict[Any, Org] = {}
        self.vorg: dict[Any, Org] = {}


class KSeq(list):
    """A sequence of a built object, with where each item was written."""

    __slots__ = ("at", "iorg")

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.at: Org | None = None
        self.iorg: list[Org | None] = []


class _Literal(str):
    """A block scalar (`|`): emitted as one, its lines mapped one to one onto the lines that wrote it."""

    __slots__ = ()


def annotate(node: Any, file: str, dline: int = 0, dcol: int = 0, depth: int = 0) -> Any:
    """A fresh copy of a loaded YAML node that knows where each part was written (``dline``/``dcol``: where the
    text it was parsed from starts, for a patch written inside a kustomization)."""
    from vramlint.yamlload import LiteralScalarString, _lc_entry

    if depth > 100:
        return None
    if isinstance(node, dict):
        out = KMap()
        lc = getattr(node, "lc", None)
        if lc is not None and getattr(lc, "line", None) is not None:
            out.at = Org(file, lc.line + 1 + dline, lc.col + 1 + dcol)
        for key, value in node.items():
            entry = _lc_entry(node, key)
            if entry is not None:
                out.korg[key] = Org(file, entry[0] + 1 + dline, entry[1] + 1 + dcol)
                if len(entry) >= 4:
                    out.vorg[key] = Org(file, entry[2] + 1 + dline, entry[3] + 1 + dcol)
            out[key] = annotate(value, file, dline, dcol, depth + 1)
        return out
    if isinstance(node, list):
        seq = KSeq()
        lc = getattr(node, "lc", None)
        if lc is not None and getattr(lc, "line", None) is not None:
            seq.at = Org(file, lc.line + 1 + dline, lc.col + 1 + dcol)
        for i, value in enumerate(node):
            entry = None
            if lc is not None and isinstance(getattr(lc, "data", None), (dict, list)):
                try:
                    entry = lc.data[i]
                except (KeyError, IndexError):
                    entry = None
            seq.iorg.append(Org(file, entry[0] + 1 + dline, entry[1] + 1 + dcol) if entry else None)
            seq.append(annotate(value, file, dline, dcol, depth + 1))
        return seq
    if isinstance(node, LiteralScalarString) or type(node).__name__ == "LiteralScalarString":
        return _Literal(node)
    return node


def _copy(node: Any, depth: int = 0) -> Any:
    if depth > 100:
        return None
    if isinstance(node, KMap):
        out = KMap({k: _copy(v, depth + 1) for k, v in node.items()})
        out.at, out.korg, out.vorg = node.at, dict(node.korg), dict(node.vorg)
        return out
    if isinstance(node, KSeq):
        seq = KSeq(_copy(v, depth + 1) for v in node)
        seq.at, seq.iorg = node.at, list(node.iorg)
        return seq
    return node


def _size(node: Any, depth: int = 0) -> int:
    """About the nodes ``node`` adds to a build where it is put: one a map, list or scalar, a string counted as a
    file of its length is (len // 8, as `_load` counts a file)."""
    if isinstance(node, str):
        return 1 + len(node) // 8
    if depth > 60:
        return 1
    if isinstance(node, dict):
        return 1 + sum(_size(k, depth + 1) + _size(v, depth + 1) for k, v in node.items())
    if isinstance(node, list):
        return 1 + sum(_size(v, depth + 1) for v in node)
    return 1


def _grow(run: _Run, kust: Kustomization, org: Org | None, nodes: int, what: str) -> None:
    """Count ``nodes`` a transformer adds to the build of the root; past MAX_BUILD_NODES the root is not built."""
    run.build_nodes += nodes
    if run.build_nodes > MAX_BUILD_NODES:
        run.say(kust.file, _lineno(org), f"{what}: the objects of this build pass vramlint's bound (about "
                f"{MAX_BUILD_NODES:,} nodes) once it is applied to each object it selects: the build is not evaluated "
                "and its files are read one by one. Run `kustomize build` and pipe it to `vramlint check -`",
                bound=True)
        raise _Unbuildable()


def _set(m: KMap, key: Any, value: Any, org: Org | None, key_org: Org | None = None) -> None:
    m[key] = value
    if org is not None:
        m.vorg[key] = org
    if key not in m.korg and (key_org or org) is not None:
        m.korg[key] = key_org or org  # type: ignore[assignment]


# --- the emitted text and its map back to the files ------------------------------------------------------------

_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_./@+-]*$")
_RESERVED = frozenset(("y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"))


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _RESERVED:
        return text
    return json.dumps(text, ensure_ascii=False)


def _key(key: Any) -> str:
    return _scalar(key if isinstance(key, str) else str(key))


class Emitter:
    """Block YAML of built objects; for each line written, where its key and its value came from."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        # per line: (origin of the key or item, column where the value starts, origin of the value)
        self.origins: list[tuple[Org | None, int, Org | None]] = []

    def _line(self, text: str, key_org: Org | None, value_col: int, value_org: Org | None) -> None:
        self.lines.append(text)
        self.origins.append((key_org, value_col, value_org))

    def document(self, node: Any) -> None:
        self._line("---", node.at if isinstance(node, KMap) else None, 0, None)
        if isinstance(node, KMap) and node:
            self._map(node, 0, "")

    def _value(self, head: str, value: Any, key_org: Org | None, value_org: Org | None, indent: int) -> None:
        if isinstance(value, KMap):
            if not value:
                self._line(head + " {}", key_org, len(head) + 2, value_org)
                return
            self._line(head, key_org, 0, None)
            self._map(value, indent + 2, "")
        elif isinstance(value, KSeq):
            if not value:
                self._line(head + " []", key_org, len(head) + 2, value_org)
                return
            self._line(head, key_org, 0, None)
            self._seq(value, indent + 2)
        elif isinstance(value, str) and "\n" in value and "\r" not in value and isinstance(value, _Literal):
            chomp = "-" if not value.endswith("\n") else ("" if not value.endswith("\n\n") else "+")
            body = value[:-1] if value.endswith("\n") and chomp == "" else value
            body = body.rstrip("\n") if chomp == "+" else body
            pieces = body.split("\n") if chomp != "+" else value.split("\n")[:-1]
            hint = "2" if pieces and pieces[0].startswith(" ") else ""
            self._line(f"{head} |{hint}{chomp}", key_org, len(head) + 2, value_org)
            pad = " " * (indent + 2)
            for i, piece in enumerate(pieces):
                org = Org(value_org.file, value_org.line + 1 + i, value_org.col) if value_org else None
                self._line(pad + piece if piece else "", org, 0, org)
        else:
            self._line(f"{head} {_scalar(value)}", key_org, len(head) + 2, value_org)

    def _map(self, node: KMap, indent: int, first: str) -> None:
        for i, (key, value) in enumerate(node.items()):
            lead = first if i == 0 and first else " " * indent
            self._value(f"{lead}{_key(key)}:", value, node.korg.get(key), node.vorg.get(key) or node.korg.get(key),
                        indent)

    def _seq(self, node: KSeq, indent: int) -> None:
        pad = " " * indent
        for i, item in enumerate(node):
            org = node.iorg[i] if i < len(node.iorg) else None
            if isinstance(item, KMap) and item:
                self._map(item, indent + 2, pad + "- ")
            elif isinstance(item, KSeq) and item:
                self._line(pad + "-", org, 0, None)
                self._seq(item, indent + 2)
            else:
                self._value(pad + "-", item, org, org, indent)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def map(self, loc: Location) -> Location:
        """The file, line and column that wrote what the emitted text has at ``loc``."""
        if not 1 <= loc.line <= len(self.origins):
            return loc
        key_org, value_col, value_org = self.origins[loc.line - 1]
        org = value_org if value_org is not None and value_col and loc.column >= value_col else key_org
        if org is None:
            org = value_org or key_org
        if org is None:
            return loc
        shift = loc.column - value_col if org is value_org and value_col and loc.column >= value_col else 0
        column = org.col + max(0, shift)
        end_line = end_col = None
        if loc.end_line == loc.line and loc.end_column is not None:
            end_line, end_col = org.line, column + (loc.end_column - loc.column)
        return Location(org.file, org.line, column, end_line, end_col, yaml_path=loc.yaml_path)


# --- reading the kustomizations -------------------------------------------------------------------------------

@dataclass
class Resource:
    node: KMap
    names: list[str]  # metadata.name as written and after each rename (patches match any of them)
    file: str  # the file it was read from, as displayed
    partial: bool = False  # some of its fields come from a file not read (an env file made before the build)


@dataclass
class Kustomization:
    dir: str  # path to open
    file: str  # its kustomization file, as displayed
    path: str  # its kustomization file, to open
    data: KMap
    kind: str


@dataclass
class _Run:
    notes: dict[tuple[str, int | None, str], Problem] = field(default_factory=dict)
    handled: set[str] = field(default_factory=set)  # real paths read as part of a kustomization
    cache: dict[str, Any] = field(default_factory=dict)  # real path -> loaded documents (or a Problem)
    mention_vllm: set[str] = field(default_factory=set)  # real paths whose text names vLLM
    not_scanned: set[str] = field(default_factory=set)  # real paths the scan's prefilter leaves out (read only here)
    touched: list[str] = field(default_factory=list)  # real paths the root being built read
    said: list[tuple[str, int | None, str]] = field(default_factory=list)  # what the root being built said
    sizes: dict[str, int] = field(default_factory=dict)  # real path -> nodes of its documents
    build_nodes: int = 0  # nodes the root being built has copied or merged
    builds: int = 0  # kustomizations the root being built has evaluated
    lines: dict[str, list[str]] = field(default_factory=dict)  # kustomization path -> its lines (block indents)
    bounds: set[tuple[str, int | None, str]] = field(default_factory=set)  # limits reached: said whatever the set
    custom_config: bool = False  # a kustomization of the root being built has `configurations` (field specs added)

    def say(self, file: str, line: int | None, message: str, level: str = "note", bound: bool = False) -> None:
        key = (file, line, message)
        self.said.append(key)
        if bound:
            self.bounds.add(key)
        if key not in self.notes:
            self.notes[key] = Problem(file, line, 1 if line else None, message, level=level)  # type: ignore[arg-type]


class _Unbuildable(Exception):
    """The root being built passes one of vramlint's bounds: its build stops, what stopped it is said (on the root's
    kustomization when the exception carries a message, else already where it was passed), and its files are read
    as files of their own."""


def _display(path: str) -> str:
    from vramlint.discover import display_path

    return display_path(path)


def kustomization_file(directory: str) -> str | None:
    for name in KUSTOMIZATION_NAMES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return None


def _load(run: _Run, path: str) -> list[Any] | Problem:
    real = os.path.realpath(path)
    run.touched.append(real)
    if real in run.cache:
        return run.cache[real]
    from vramlint.textfile import read_text
    from vramlint.yamlload import load_text

    display = _display(path)
    text, skipped = read_text(path, display)
    if skipped is not None or text is None:
        out: Any = Problem(display, None, None, skipped.reason if skipped else "not read")
    else:
        if "vllm" in text.lower():
            run.mention_vllm.add(real)
        from vramlint.prefilter import prefilter

        if not prefilter(text):
            run.not_scanned.add(real)
        docs, problems = load_text(text, display)
        errors = [p for p in problems if p.level == "error"]
        out = errors[0] if errors else [annotate(d.data, display) for d in docs if d.data is not None]
        run.sizes[real] = len(text) // 8  # about the nodes a manifest of that many characters holds
    run.cache[real] = out
    return out


def _load_kustomization(run: _Run, directory: str) -> Kustomization | Problem | None:
    path = kustomization_file(directory)
    if path is None:
        return None
    docs = _load(run, path)
    if isinstance(docs, Problem):
        return docs
    data = docs[0] if docs and isinstance(docs[0], KMap) else KMap()
    kind = data.get("kind") if isinstance(data.get("kind"), str) else "Kustomization"
    return Kustomization(directory, _display(path), path, data, kind)


def _is_remote(entry: str) -> bool:
    low = entry.lower()
    return "://" in low or low.startswith(("github.com/", "git@", "gitlab.com/", "bitbucket.org/")) or \
        ("?ref=" in low) or low.startswith("git::")


def _strings(kust: Kustomization, key: str) -> list[tuple[str, Org | None]]:
    value = kust.data.get(key)
    if not isinstance(value, KSeq):
        return []
    return [(item, value.iorg[i] if i < len(value.iorg) else None)
            for i, item in enumerate(value) if isinstance(item, str)]


def _lineno(org: Org | None) -> int | None:
    return org.line if org is not None else None


def _ok_path(run: _Run, kust: Kustomization, rel: str, org: Org | None, what: str) -> str | None:
    """The path ``rel`` of a kustomization names, when it may be read here; else said once, None."""
    from vramlint.fsread import outside_reason

    path = os.path.normpath(os.path.join(kust.dir, rel))
    reason = outside_reason(path)
    if reason is not None:
        # said whatever the build deploys: scanning one overlay's folder leaves its base out of the run
        run.say(kust.file, _lineno(org), f"{what} {rel} is {reason}: not read, so what it sets is unknown here; scan a "
                "folder that holds it, or `kustomize build` and pipe the output to `vramlint check -`", bound=True)
        return None
    if not os.path.exists(path):
        if "helmCharts" in kust.data:
            return None  # the chart's objects are the ones patched; its note (`extract.mentions`) says what to run
        # often made before the build by a script (an .env from a template) and kept out of the repository
        run.say(kust.file, _lineno(org), f"{what} {rel} is not in the repository (made before the build?): what it "
                "sets is unknown here; commit it, or `kustomize build` where it exists and pipe the output to "
                "`vramlint check -`")
        return None
    return path


# --- building ------------------------------------------------------------------------------------------------

def _meta(node: KMap) -> KMap:
    meta = node.get("metadata")
    if not isinstance(meta, KMap):
        meta = KMap()
        node["metadata"] = meta
    return meta


def _name(node: KMap) -> str | None:
    meta = node.get("metadata")
    name = meta.get("name") if isinstance(meta, KMap) else None
    return name if isinstance(name, str) else None


def _kind(node: KMap) -> str:
    kind = node.get("kind")
    return kind if isinstance(kind, str) else ""


def build(run: _Run, directory: str, depth: int = 0, stack: tuple[str, ...] = ()) -> list[Resource]:
    """The objects the kustomization in ``directory`` builds (kustomize build), or [] when it cannot be read."""
    real = os.path.realpath(directory)
    kust = _load_kustomization(run, directory)
    if kust is None:
        return []
    if isinstance(kust, Problem):
        run.say(kust.file, kust.line, f"kustomization not read: {kust.message}", level="warning")
        return []
    if "helmCharts" not in kust.data:
        run.handled.add(os.path.realpath(kust.path))
    # else: read on its own too, where `extract.mentions` says which chart kustomize inflates and how to check it
    if real in stack:
        run.say(kust.file, None, "kustomization includes itself (a cycle): kustomize build fails on it", "warning")
        return []
    if depth > MAX_DEPTH:
        run.say(kust.file, None, f"kustomizations nested more than {MAX_DEPTH} deep: not evaluated further",
                bound=True)
        return []
    run.builds += 1
    if run.builds > MAX_BUILDS:
        raise _Unbuildable(f"more than {MAX_BUILDS:,} kustomizations to evaluate for this build (bases that include the "
                           "same bases are built once for each path to them, as kustomize builds them): not evaluated, "
                           "its files are read one by one; run `kustomize build` on this folder and pipe it to "
                           "`vramlint check -`")
    stack = stack + (real,)
    resources: list[Resource] = []
    _accumulate(run, kust, resources, depth, stack)
    return resources


def _accumulate(run: _Run, kust: Kustomization, resources: list[Resource], depth: int,
                stack: tuple[str, ...]) -> None:
    """kustomize's accumulateTarget (api/internal/target/kusttarget.go): the resources, then the generators, then
    the components (each accumulated the same way onto the objects gathered so far), then the transformers. A
    component makes no set of its own: its directives act on the kustomization's objects."""
    for key in ("resources", "bases"):
        for entry, org in _strings(kust, key):
            _add_resource(run, kust, entry, org, resources, depth, stack)
    _generate_configmaps(run, kust, resources)
    for entry, org in _strings(kust, "components"):
        if _is_remote(entry):
            _say_remote(run, kust, entry, org)
            continue
        path = _ok_path(run, kust, entry, org, "component")
        if path is None:
            continue
        comp = _load_kustomization(run, path) if os.path.isdir(path) else None
        if isinstance(comp, Problem):
            # its file is there but cannot be read (an alias bomb, a syntax error, a FIFO): said where it fails,
            # and on the entry (hostile23: this was "has no kustomization file")
            run.say(comp.file, comp.line, f"{comp.message} (component {entry} of {kust.file}: not evaluated)",
                    "warning")
            run.say(kust.file, _lineno(org), f"component {entry}: its kustomization file {comp.file} cannot be "
                    "read: not evaluated", "warning")
            continue
        if not isinstance(comp, Kustomization):
            run.say(kust.file, _lineno(org), f"component {entry} has no kustomization file: not evaluated", "warning")
            continue
        run.handled.add(os.path.realpath(comp.path))
        if comp.kind != "Component":
            run.say(kust.file, _lineno(org), f"component {entry} is a {comp.kind}, not a Component: kustomize build "
                    "fails on this kustomization", "warning")
            continue
        comp_real = os.path.realpath(path)
        if comp_real in stack:
            # kustomize's loader refuses a root that one of its referrers already has (fileloader
            # errIfArgEqualOrHigher: "cycle detected"): the build fails; this went unsaid
            run.say(kust.file, _lineno(org), f"component {entry} includes a kustomization that includes it (a "
                    "cycle): kustomize build fails on it", "warning")
            continue
        if depth + 1 > MAX_DEPTH:
            run.say(kust.file, _lineno(org), f"kustomizations nested more than {MAX_DEPTH} deep: component {entry} "
                    "not evaluated", bound=True)
            continue
        _accumulate(run, comp, resources, depth + 1, stack + (comp_real,))
    _transform(run, kust, resources)


def _say_remote(run: _Run, kust: Kustomization, entry: str, org: Org | None) -> None:
    run.say(kust.file, _lineno(org), f"remote base {entry} is not fetched: the objects it deploys (and the patches "
            "on them) are not checked here; run `kustomize build` on this folder and pipe it to `vramlint check -`")


def _add_resource(run: _Run, kust: Kustomization, entry: str, org: Org | None, out: list[Resource], depth: int,
                  stack: tuple[str, ...]) -> None:
    if _is_remote(entry):
        _say_remote(run, kust, entry, org)
        return
    path = _ok_path(run, kust, entry, org, "resource")
    if path is None:
        return
    if os.path.isdir(path):
        if kustomization_file(path) is None:
            run.say(kust.file, _lineno(org), f"resource {entry} is a folder without a kustomization file: kustomize "
                    "build fails on this kustomization", level="warning")
            return
        sub = _load_kustomization(run, path)
        if isinstance(sub, Kustomization) and sub.kind == "Component":
            run.say(kust.file, _lineno(org), f"resource {entry} is a Component, which only `components` may name: "
                    "kustomize build fails on this kustomization", level="warning")
            return
        found = build(run, path, depth + 1, stack)
    else:
        docs = _load(run, path)
        if isinstance(docs, Problem):
            if docs.line is not None and os.path.realpath(path) in run.not_scanned:
                # a file the scan does not read on its own (no word of vLLM in it): what is wrong with it is
                # said on its own line, where it is (blind21: an alias bomb said on the `resources:` entry)
                run.say(docs.file, docs.line, f"{docs.message} (a resource of {kust.file}, line {_lineno(org)}): "
                        "what it deploys is not in this build")
                return
            # left to be read as a file of its own too, where its own finding says what is wrong with it
            run.say(kust.file, _lineno(org), f"resource {entry} not read ({docs.message}): what it deploys is not "
                    "in this build")
            return
        run.handled.add(os.path.realpath(path))
        size = run.sizes.get(os.path.realpath(path), 0)
        if run.build_nodes + size > MAX_BUILD_NODES:
            run.say(kust.file, _lineno(org), f"resource {entry}: the objects of this build pass vramlint's bound "
                    f"(about {MAX_BUILD_NODES:,} nodes): it is not in this build", bound=True)
            return
        run.build_nodes += size
        found = []
        for doc in docs:
            if isinstance(doc, KMap) and isinstance(doc.get("kind"), str):
                if doc["kind"].endswith("List") and isinstance(doc.get("items"), KSeq):
                    found.extend(Resource(_copy(i), [_name(i) or ""], _display(path)) for i in doc["items"]
                                 if isinstance(i, KMap))
                else:
                    found.append(Resource(_copy(doc), [_name(doc) or ""], _display(path)))
    room = MAX_RESOURCES - len(out)
    if len(found) > room:
        run.say(kust.file, _lineno(org), f"more than {MAX_RESOURCES} objects in one kustomization: the rest are not "
                "checked", bound=True)
        found = found[:max(0, room)]
    out.extend(found)


def _transform(run: _Run, kust: Kustomization, resources: list[Resource]) -> None:
    data = kust.data
    if "configurations" in data:
        run.custom_config = True
    for key in data:
        if key not in _EVALUATED and key not in _HARMLESS and key != "helmCharts":
            what = ("a plugin vramlint does not run" if key in ("generators", "transformers", "validators") else
                    "a field vramlint does not evaluate")
            run.say(kust.file, _lineno(data.korg.get(key)),
                    f"kustomize `{key}` is {what}: the objects are checked without it; if it changes a vLLM "
                    "server, run `kustomize build` on this folder and pipe it to `vramlint check -`")
    for entry, org in _strings(kust, "patchesStrategicMerge"):
        _patch_entry(run, kust, KMap({"path": entry}) if not entry.lstrip().startswith(("apiVersion", "kind"))
                     else KMap({"patch": entry}), org, resources, strategic_only=True)
    patches = data.get("patches")
    if isinstance(patches, KSeq):
        for i, entry in enumerate(patches):
            if isinstance(entry, KMap):
                _patch_entry(run, kust, entry, patches.iorg[i] if i < len(patches.iorg) else None, resources)
    _namespace(kust, resources)
    _prefix_suffix(kust, resources)
    _labels(kust, resources)
    json_patches = data.get("patchesJson6902")
    if isinstance(json_patches, KSeq):
        for i, entry in enumerate(json_patches):
            if isinstance(entry, KMap):
                _patch_entry(run, kust, entry, json_patches.iorg[i] if i < len(json_patches.iorg) else None,
                             resources, json_only=True)
    _replicas(run, kust, resources)
    _images(kust, resources)
    _replacements(run, kust, resources)


# --- generators -------------------------------------------------------------------------------------------------

def _env_file(run: _Run, kust: Kustomization, rel: str, org: Org | None) -> list[tuple[str, str, Org]] | None:
    from vramlint.textfile import read_text

    path = _ok_path(run, kust, rel, org, "env file")
    if path is None:
        return None  # not read (said): what it sets is unknown
    display = _display(path)
    text, skipped = read_text(path, display)
    if text is None:
        if skipped is not None and skipped.reason == "empty file":
            return []
        run.say(kust.file, _lineno(org), f"env file {rel} not read ({skipped.reason if skipped else 'unreadable'})")
        return None
    out = []
    # api/kv/kv.go keyValuesFromLine: leading white space trimmed, `#` lines and blank lines skipped, the key up
    # to the first `=` as written and the value after it as written; a bare name is an empty value (kustomize
    # v5; v4 read it from its own environment)
    for number, raw in enumerate(text.split("\n"), 1):
        raw = raw[:-1] if raw.endswith("\r") else raw
        raw = raw.removeprefix("\ufeff") if number == 1 else raw
        line = raw.lstrip()
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.partition("=")
        col = len(raw) - len(line) + len(name) + 2 if eq else len(raw) + 1
        out.append((name, value, Org(display, number, col)))
    return out


def _generate_configmaps(run: _Run, kust: Kustomization, resources: list[Resource]) -> None:
    gens = kust.data.get("configMapGenerator")
    if not isinstance(gens, KSeq):
        return
    for gen in gens:
        if not isinstance(gen, KMap) or not isinstance(gen.get("name"), str):
            continue
        # api/kv/kv.go Load: the env files' pairs, then the literals', then the files'
        entries: list[tuple[str, Any, Org | None]] = []
        envs: list[tuple[str, Org | None]] = []
        if isinstance(gen.get("envs"), KSeq):
            envs.extend((e, gen["envs"].iorg[i] if i < len(gen["envs"].iorg) else None)
                        for i, e in enumerate(gen["envs"]) if isinstance(e, str))
        if isinstance(gen.get("env"), str):
            envs.append((gen["env"], gen.vorg.get("env")))
        partial = False
        for rel, org in envs:
            pairs = _env_file(run, kust, rel, org)
            partial = partial or pairs is None
            entries.extend(pairs or [])
        literals = gen.get("literals")
        if isinstance(literals, KSeq):
            for i, lit in enumerate(literals):
                if isinstance(lit, str) and "=" in lit and not lit.startswith("="):
                    name, value = lit.split("=", 1)
                    org = literals.iorg[i] if i < len(literals.iorg) else None
                    quoted = len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"
                    vorg = Org(org.file, org.line, org.col + len(name) + 1 + (1 if quoted else 0)) if org else None
                    entries.append((name, value[1:-1] if quoted else value, vorg))  # parseLiteralSource
        files = gen.get("files")
        if isinstance(files, KSeq):
            for i, item in enumerate(files):
                if isinstance(item, str):
                    key, _, rel = item.partition("=") if "=" in item else (os.path.basename(item), "", item)
                    org = files.iorg[i] if i < len(files.iorg) else None
                    path = _ok_path(run, kust, rel, org, "file")
                    partial = partial or path is None
                    if path is not None:
                        from vramlint.textfile import read_text

                        run.handled.add(os.path.realpath(path))
                        text, _skipped = read_text(path, _display(path))
                        if text is not None:
                            entries.append((key, _Literal(text) if "\n" in text else text,
                                            Org(_display(path), 0, 1)))
        name = gen["name"]
        behavior = gen.get("behavior") if isinstance(gen.get("behavior"), str) else "create"
        existing = next((r for r in resources if _kind(r.node) == "ConfigMap" and name in r.names), None)
        # resWrangler.appendReplaceOrMerge: merge and replace need the ConfigMap, create must not find one
        if existing is None and behavior in ("merge", "replace"):
            if not _has_remote(run, kust):
                run.say(kust.file, _lineno(gen.at), f"configMapGenerator {name} has behavior: {behavior}, but no "
                        f"ConfigMap {name} comes before it: kustomize build fails on it (\"cannot merge or "
                        "replace\")", "warning")
            continue
        if existing is not None and behavior not in ("merge", "replace"):
            run.say(kust.file, _lineno(gen.at), f"configMapGenerator {name} makes a ConfigMap that already exists: "
                    "kustomize build fails on it (\"behavior must be merge or replace\")", "warning")
            continue
        if existing is not None:
            existing.partial = existing.partial or partial
            data = existing.node.get("data")
            if behavior == "replace" or not isinstance(data, KMap):
                data = KMap()
                existing.node["data"] = data
            for key, value, org in entries:
                _set(data, key, value, org)
            continue
        node = KMap({"apiVersion": "v1", "kind": "ConfigMap"})
        node.at = gen.at
        meta = KMap({"name": name})
        meta.korg["name"] = meta.vorg["name"] = gen.vorg.get("name") or gen.at  # type: ignore[assignment]
        if isinstance(gen.get("namespace"), str):
            _set(meta, "namespace", gen["namespace"], gen.vorg.get("namespace"))
        _set(node, "metadata", meta, gen.at)
        data = KMap()
        for key, value, org in entries:
            _set(data, key, value, org)
        _set(node, "data", data, gen.at)
        for k in ("apiVersion", "kind"):
            node.korg[k] = node.vorg[k] = gen.at  # type: ignore[assignment]
        resources.append(Resource(node, [name], kust.file, partial))


# --- patches ----------------------------------------------------------------------------------------------------

def _patch_entry(run: _Run, kust: Kustomization, entry: KMap, org: Org | None, resources: list[Resource],
                 strategic_only: bool = False, json_only: bool = False) -> None:
    from vramlint.yamlload import load_text

    target = entry.get("target") if isinstance(entry.get("target"), KMap) else None
    docs: list[Any] = []
    where = kust.file
    if isinstance(entry.get("path"), str):
        path = _ok_path(run, kust, entry["path"], entry.vorg.get("path") or org, "patch")
        if path is None:
            return
        loaded = _load(run, path)
        if isinstance(loaded, Problem):
            run.say(kust.file, _lineno(entry.vorg.get("path") or org), f"patch {entry['path']} not read "
                    f"({loaded.message}): the build is checked without it")
            return
        run.handled.add(os.path.realpath(path))
        docs = [_copy(d) for d in loaded]
        where = _display(path)
    elif isinstance(entry.get("patch"), str):
        text = entry["patch"]
        vorg = entry.vorg.get("patch") or org
        block = isinstance(text, _Literal)
        loaded_docs, problems = load_text(text, kust.file)
        if any(p.level == "error" for p in problems):
            run.say(kust.file, _lineno(vorg), "inline patch is not valid YAML: kustomize build fails on it", "warning")
            return
        dline = vorg.line if vorg is not None and block else (vorg.line - 1 if vorg else 0)
        indent = _block_indent(run, kust, vorg) if block else 0
        docs = [annotate(d.data, kust.file, dline, indent) for d in loaded_docs if d.data is not None]
    else:
        return
    for doc in docs:
        if isinstance(doc, KSeq) and not strategic_only:
            chosen = _select(resources, target)
            if target is None:
                run.say(kust.file, _lineno(org), "a JSON 6902 patch without `target`: kustomize build fails on it",
                        "warning")
                continue
            size = _size(doc)
            for res in chosen:
                _grow(run, kust, org, size, "a JSON patch")
                _json_patch(run, where, doc, res)
        elif isinstance(doc, KMap) and not json_only:
            chosen = _select(resources, target) if target is not None else _by_patch_id(resources, doc)
            if not chosen and target is None and not _has_remote(run, kust):
                run.say(kust.file, _lineno(org), f"the patch for {_kind(doc)} {_name(doc)} matches no object read here "
                        "(kustomize build fails when none exists): it is not applied")
            options = entry.get("options") if isinstance(entry.get("options"), KMap) else KMap()
            size = _size(doc)
            for res in chosen:
                _grow(run, kust, org, size, f"the patch for {_kind(doc)} {_name(doc)}")
                if doc.get("$patch") == "delete":
                    # the merge gives no object, and kustomize drops it from the set (resWrangler.ApplySmPatch)
                    resources.remove(res)
                    continue
                kept = _identity(res.node)
                _strategic_merge(res.node, doc, _builtin(res.node), 0)
                # Resource.ApplySmPatch puts back the kind and name unless the patch's options allow a change,
                # and the namespace always
                _restore_identity(res.node, kept, name=options.get("allowNameChange") is not True,
                                  kind=options.get("allowKindChange") is not True)
                if _name(res.node) and _name(res.node) not in res.names:
                    res.names.append(_name(res.node) or "")


def _identity(node: KMap) -> dict[str, tuple[bool, Any, Org | None]]:
    meta = node.get("metadata") if isinstance(node.get("metadata"), KMap) else KMap()
    out = {"kind": ("kind" in node, node.get("kind"), node.vorg.get("kind"))}
    for key in ("name", "namespace"):
        out[key] = (key in meta, meta.get(key), meta.vorg.get(key))
    return out


def _restore_identity(node: KMap, kept: dict[str, tuple[bool, Any, Org | None]], name: bool, kind: bool) -> None:
    for key, (present, value, org) in kept.items():
        if (key == "name" and not name) or (key == "kind" and not kind):
            continue
        holder = node if key == "kind" else _meta(node)
        if present:
            _set(holder, key, value, org)
        else:
            holder.pop(key, None)


def _has_remote(run: _Run, kust: Kustomization) -> bool:
    return any(_is_remote(e) for key in ("resources", "bases") for e, _o in _strings(kust, key))


def _block_indent(run: _Run, kust: Kustomization, vorg: Org | None) -> int:
    """The column (0-based) where a block scalar's content starts: the next non-empty line's indentation."""
    if vorg is None:
        return 0
    from vramlint.textfile import read_text

    lines = run.lines.get(kust.path)
    if lines is None:
        # once a kustomization: read again for each inline patch, 3,000 patches of a 4 MB file took 15 CPU-s
        text, _ = read_text(kust.path, kust.file)
        lines = text.splitlines() if text is not None else []
        run.lines[kust.path] = lines
    for raw in lines[vorg.line:vorg.line + 50]:
        if raw.strip():
            return len(raw) - len(raw.lstrip(" "))
    return 0


def _by_patch_id(resources: list[Resource], doc: KMap) -> list[Resource]:
    """The object a strategic-merge patch without `target` names (PatchTransformer: ResMap.GetById of the patch's
    id): its kind and one of its names, exactly (a target's names are regular expressions, a patch's are not)."""
    name = _name(doc)
    return [r for r in resources if _kind(r.node) == _kind(doc) and (name is None or name in r.names)]


def _select(resources: list[Resource], target: KMap | None) -> list[Resource]:
    if target is None:
        return list(resources)
    out = []
    for res in resources:
        node = res.node
        api = node.get("apiVersion") if isinstance(node.get("apiVersion"), str) else ""
        group, _, version = api.rpartition("/")
        checks = (("kind", _kind(node)), ("group", group), ("version", version))
        if any(isinstance(target.get(k), str) and target[k] and not _full_match(target[k], v) for k, v in checks):
            continue
        name = target.get("name")
        if isinstance(name, str) and name and not any(_full_match(name, n) for n in res.names):
            continue
        ns = target.get("namespace")
        meta = node.get("metadata") if isinstance(node.get("metadata"), KMap) else KMap()
        if isinstance(ns, str) and ns and not _full_match(ns, str(meta.get("namespace") or "default")):
            continue
        labels = target.get("labelSelector")
        if isinstance(labels, str) and labels and not _labels_match(labels, meta.get("labels")):
            continue
        out.append(res)
    return out


# a group holding a quantifier that is itself quantified (`(a+)+`, `(x*)*`, `(a|aa)+`): Go's RE2, which kustomize
# uses, matches it in linear time, Python's backtracking engine in exponential time on a failing subject
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*(?:[+*}|]|\?(?!:))(?:[^()\\]|\\.)*\)\s*[+*{]")
MAX_PATTERN = 1000  # characters of a selector's regular expression (a name is at most 253)


def _regex(pattern: str, wrap: str = "{}") -> re.Pattern | None:
    """A kustomize selector's regular expression, compiled; None when Python cannot match it as RE2 does in
    bounded time (nested quantifiers, past MAX_PATTERN) or it does not compile: the caller compares text."""
    if len(pattern) > MAX_PATTERN or _NESTED_QUANTIFIER.search(pattern):
        return None
    try:
        return re.compile(wrap.format(pattern))
    except re.error:
        return None


def _full_match(pattern: str, value: str) -> bool:
    # kustomize's selectors are anchored regular expressions
    regex = _regex(pattern)
    return regex.fullmatch(value) is not None if regex is not None else pattern == value


def _labels_match(selector: str, labels: Any) -> bool:
    labels = labels if isinstance(labels, KMap) else {}
    for part in selector.split(","):
        part = part.strip()
        if "!=" in part:
            k, v = part.split("!=", 1)
            if str(labels.get(k.strip())) == v.strip():
                return False
        elif "=" in part:
            k, v = part.replace("==", "=").split("=", 1)
            if str(labels.get(k.strip())) != v.strip():
                return False
        elif part and part not in labels:
            return False
    return True


_BUILTIN_GROUPS = ("", "apps", "batch", "core")
# Strategic-merge keys of the Kubernetes types a vLLM pod spec is made of (k8s.io/api `patchMergeKey` tags).
_MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
               "volumes": "name", "volumeMounts": "mountPath", "ports": "containerPort", "imagePullSecrets": "name",
               "hostAliases": "ip", "volumeDevices": "devicePath", "resourceClaims": "name"}


def _builtin(node: KMap) -> bool:
    """Kustomize knows the schema of Kubernetes' own kinds; an operator's custom resource has no merge keys, so
    its lists are replaced as a whole."""
    api = node.get("apiVersion") if isinstance(node.get("apiVersion"), str) else ""
    group = api.rpartition("/")[0]
    return group in _BUILTIN_GROUPS or group.endswith(".k8s.io")


def _strategic_merge(base: KMap, patch: KMap, builtin: bool, depth: int) -> None:
    if depth > 60:
        return
    if patch.get("$patch") == "replace":
        base.clear()
        base.korg.clear()
        base.vorg.clear()
    for key, value in patch.items():
        if isinstance(key, str) and key.startswith("$"):
            continue
        if isinstance(key, str) and key.startswith("$setElementOrder/"):
            continue
        korg, vorg = patch.korg.get(key), patch.vorg.get(key)
        if value is None:
            base.pop(key, None)
            continue
        old = base.get(key)
        if isinstance(value, KMap) and isinstance(old, KMap) and value.get("$patch") != "replace":
            if value.get("$patch") == "delete":
                base.pop(key, None)
                continue
            _strategic_merge(old, value, builtin, depth + 1)
            continue
        if isinstance(value, KSeq) and isinstance(old, KSeq) and builtin and key in _MERGE_KEYS:
            _merge_list(old, value, _MERGE_KEYS[key], builtin, depth)
            continue
        if isinstance(value, KMap):
            value = _without_directives(value)
        base[key] = value
        if korg is not None and key not in base.korg:
            base.korg[key] = korg
        if vorg is not None:
            base.vorg[key] = vorg


def _without_directives(node: KMap) -> KMap:
    for key in [k for k in node if isinstance(k, str) and k.startswith("$")]:
        node.pop(key)
    return node


def _merge_list(old: KSeq, new: KSeq, merge_key: str, builtin: bool, depth: int) -> None:
    """An associative list merged as kyaml's walker does with the ListPrepend option kustomize's strategic merge
    uses (api/filters/patchstrategicmerge, kyaml/yaml/walk/associative_sequence.go): the patch's items first, in
    the patch's order (merged into the item of the same key, or new), then the other items as they were; an item
    `$patch: delete` is dropped. (Kustomize issue #5904: a patch naming one container moves it first.)"""
    front: list[tuple[Any, Org | None]] = []
    taken: set[int] = set()
    tail: list[tuple[Any, Org | None]] = []
    by_key: dict[str, list[int]] = {}  # the items of each key, in order (one pass: a scan per patch item was quadratic)
    for j, o in enumerate(old):
        if isinstance(o, KMap) and merge_key in o:
            by_key.setdefault(repr(o[merge_key]), []).append(j)
    for i, item in enumerate(new):
        org = new.iorg[i] if i < len(new.iorg) else None
        if not isinstance(item, KMap) or merge_key not in item:
            tail.append((item, org))
            continue
        waiting = by_key.get(repr(item[merge_key]))
        while waiting and waiting[0] in taken:
            waiting.pop(0)
        at = waiting[0] if waiting else None
        if item.get("$patch") == "delete":
            if at is not None:
                taken.add(at)
            continue
        if at is None:
            front.append((_without_directives(item), org))
        else:
            taken.add(at)
            _strategic_merge(old[at], item, builtin, depth + 1)
            front.append((old[at], old.iorg[at] if at < len(old.iorg) else None))
    rest = [(o, old.iorg[j] if j < len(old.iorg) else None) for j, o in enumerate(old)
            if j not in taken]
    merged = front + rest + tail
    old[:] = [item for item, _org in merged]
    old.iorg[:] = [org for _item, org in merged]


def _pointer(path: str) -> list[str]:
    if not path.startswith("/"):
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _json_patch(run: _Run, where: str, ops: KSeq, res: Resource) -> None:
    for i, op in enumerate(ops[:MAX_PATCH_OPS]):
        if not isinstance(op, KMap) or not isinstance(op.get("op"), str) or not isinstance(op.get("path"), str):
            continue
        org = ops.iorg[i] if i < len(ops.iorg) else None
        kind, parts = op["op"], _pointer(op["path"])
        value, vorg = op.get("value"), op.vorg.get("value") or org
        if kind in ("copy", "move") and isinstance(op.get("from"), str):
            found = _get(res.node, _pointer(op["from"]))
            if found is None:
                continue
            value, vorg = _copy(found[0]), found[1]
            if kind == "move":
                _remove(res.node, _pointer(op["from"]))
            kind = "add"
        if kind == "test" or not parts:
            continue
        ok = _remove(res.node, parts) if kind == "remove" else _put(res.node, parts, value, vorg, kind == "add")
        if not ok:
            run.say(where, _lineno(org), f"JSON patch `{op['op']} {op['path']}` does not apply to {_kind(res.node)} "
                    f"{res.names[-1]} as read here (kustomize build fails when it does not): not applied")
    if _name(res.node) and _name(res.node) not in res.names:
        res.names.append(_name(res.node) or "")


def _walk_to(node: Any, parts: list[str]) -> Any:
    for part in parts:
        if isinstance(node, KMap):
            node = node.get(part)
        elif isinstance(node, KSeq) and small_int(part) is not None and small_int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _get(node: Any, parts: list[str]) -> tuple[Any, Org | None] | None:
    parent = _walk_to(node, parts[:-1])
    last = parts[-1] if parts else ""
    if isinstance(parent, KMap) and last in parent:
        return parent[last], parent.vorg.get(last)
    if isinstance(parent, KSeq) and small_int(last) is not None and small_int(last) < len(parent):
        return parent[int(last)], parent.iorg[int(last)] if int(last) < len(parent.iorg) else None
    return None


def _remove(node: Any, parts: list[str]) -> bool:
    parent = _walk_to(node, parts[:-1])
    last = parts[-1]
    if isinstance(parent, KMap) and last in parent:
        del parent[last]
        return True
    if isinstance(parent, KSeq) and small_int(last) is not None and small_int(last) < len(parent):
        del parent[int(last)]
        if int(last) < len(parent.iorg):
            del parent.iorg[int(last)]
        return True
    return False


def _put(node: Any, parts: list[str], value: Any, org: Org | None, add: bool) -> bool:
    parent = _walk_to(node, parts[:-1])
    last = parts[-1]
    if isinstance(parent, KMap):
        if not add and last not in parent:
            return False
        _set(parent, last, value, org, org)
        return True
    if isinstance(parent, KSeq):
        if last == "-" and add:
            parent.append(value)
            parent.iorg.append(org)
            return True
        if not last.isdigit():
            return False
        index = int(last)
        if add and index <= len(parent):
            parent.insert(index, value)
            parent.iorg.insert(index, org)
            return True
        if not add and index < len(parent):
            parent[index] = value
            while len(parent.iorg) <= index:
                parent.iorg.append(None)
            parent.iorg[index] = org
            return True
    return False


# --- the other transformers ---------------------------------------------------------------------------------------

_CLUSTER_SCOPED = frozenset(("Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
                             "PersistentVolume", "StorageClass", "PriorityClass", "NodePool", "EC2NodeClass",
                             "DeviceClass", "ClusterServingRuntime", "ValidatingWebhookConfiguration",
                             "MutatingWebhookConfiguration", "APIService"))


def _namespace(kust: Kustomization, resources: list[Resource]) -> None:
    ns = kust.data.get("namespace")
    if not isinstance(ns, str) or not ns:
        return
    org = kust.data.vorg.get("namespace")
    for res in resources:
        if _kind(res.node) not in _CLUSTER_SCOPED:
            _set(_meta(res.node), "namespace", ns, org)


def _prefix_suffix(kust: Kustomization, resources: list[Resource]) -> None:
    prefix = kust.data.get("namePrefix") if isinstance(kust.data.get("namePrefix"), str) else ""
    suffix = kust.data.get("nameSuffix") if isinstance(kust.data.get("nameSuffix"), str) else ""
    if not prefix and not suffix:
        return
    for res in resources:
        if _kind(res.node) in ("Namespace", "CustomResourceDefinition", "APIService"):
            continue  # PrefixTransformer's and SuffixTransformer's skip lists
        meta = _meta(res.node)
        name = meta.get("name")
        if isinstance(name, str):
            meta["name"] = f"{prefix}{name}{suffix}"
            res.names.append(meta["name"])


def _labels(kust: Kustomization, resources: list[Resource]) -> None:
    sets: list[tuple[Any, Org | None]] = []
    if isinstance(kust.data.get("commonLabels"), KMap):
        sets.append((kust.data["commonLabels"], None))
    labels = kust.data.get("labels")
    if isinstance(labels, KSeq):
        sets.extend((entry.get("pairs"), None) for entry in labels if isinstance(entry, KMap))
    annotations = kust.data.get("commonAnnotations")
    for res in resources:
        meta = _meta(res.node)
        for pairs, _ in sets:
            if isinstance(pairs, KMap):
                target = meta.get("labels") if isinstance(meta.get("labels"), KMap) else KMap()
                meta["labels"] = target
                for k, v in pairs.items():
                    _set(target, k, v, pairs.vorg.get(k), pairs.korg.get(k))
        if isinstance(annotations, KMap):
            target = meta.get("annotations") if isinstance(meta.get("annotations"), KMap) else KMap()
            meta["annotations"] = target
            for k, v in annotations.items():
                _set(target, k, v, annotations.vorg.get(k), annotations.korg.get(k))


# builtinpluginconsts/replicas.go: the kinds the replicas transformer knows (a `configurations` file may add more)
_REPLICA_KINDS = frozenset(("Deployment", "ReplicationController", "ReplicaSet", "StatefulSet"))


def _replicas(run: _Run, kust: Kustomization, resources: list[Resource]) -> None:
    entries = kust.data.get("replicas")
    if not isinstance(entries, KSeq):
        return
    for i, entry in enumerate(entries):
        if not isinstance(entry, KMap) or not isinstance(entry.get("name"), str):
            continue
        count = entry.get("count")
        found = False
        for res in resources:
            spec = res.node.get("spec")
            if entry["name"] in res.names and _kind(res.node) in _REPLICA_KINDS:
                found = True
                if not isinstance(spec, KMap):
                    spec = KMap()
                    _set(res.node, "spec", spec, entry.vorg.get("count"))
                _set(spec, "replicas", count, entry.vorg.get("count"))
        if not found and not run.custom_config and not _has_remote(run, kust):
            # ReplicaCountTransformer: "resource with name ... does not match a config with the following GVK"
            org = entries.iorg[i] if i < len(entries.iorg) else None
            run.say(kust.file, _lineno(org), f"replicas names {entry['name']}, which is no Deployment, StatefulSet, "
                    "ReplicaSet or ReplicationController read here: kustomize build fails on it (its replicas "
                    "transformer knows only those kinds unless `configurations` adds one)", "warning")


def _each_container(node: Any, fn: Any, depth: int = 0) -> None:
    """``fn`` on every container (and init container) map of a resource, wherever its pod template sits (a
    Deployment's, a JobSet's replicated jobs', a custom resource's): bounded in depth."""
    if depth > 40:
        return
    if isinstance(node, KMap):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, KSeq):
                for c in value:
                    if isinstance(c, KMap):
                        fn(c)
            else:
                _each_container(value, fn, depth + 1)
    elif isinstance(node, KSeq):
        for item in node:
            _each_container(item, fn, depth + 1)


_IMAGE_SUFFIX = r"(:[a-zA-Z0-9_.{}-]*)?(@[a-zA-Z0-9]+([.+_-][a-zA-Z0-9]+)*:[a-zA-Z0-9_.{}-]*)?"
# where the field-spec pass of the images transformer looks (builtinpluginconsts/images.go), after the legacy pass
# over every `containers`/`initContainers` list
_IMAGE_FIELD_PATHS = (("spec", "containers"), ("spec", "initContainers"), ("spec", "template", "spec", "containers"),
                      ("spec", "template", "spec", "initContainers"))


def _image_split(image: str) -> tuple[str, str, str]:
    """kustomize's image.Split: (name, tag, digest), the tag after the first `:` past the first `/`."""
    slash = image.find("/")
    search = image[slash:] if slash > 0 else image
    base = slash if slash > 0 else 0
    at, colon = search.find("@"), search.find(":")
    if colon < 0 and at < 0:
        return image, "", ""
    if at >= 0 and (at < colon or colon < 0):
        return image[:base + at], "", image[base + at + 1:]
    if at >= 0 and colon >= 0:
        return image[:base + colon], image[base + colon + 1:base + at], image[base + at + 1:]
    return image[:base + colon], image[base + colon + 1:], ""


def _image_rule_text(rule: KMap, key: str) -> str:
    value = rule.get(key)
    return "" if value is None or isinstance(value, (KMap, KSeq)) else str(value)


@dataclass
class _Retag:
    """One `images` entry, as imagetag/updater.go's SetImageValue writes it on a matching image."""

    pattern: re.Pattern
    new_name: str
    new_tag: str
    digest: str
    suffix: str
    org: Org | None

    def __call__(self, container: KMap) -> None:
        image = container.get("image")
        if not isinstance(image, str) or not self.pattern.match(image):
            return
        name, tag, digest = _image_split(image)
        name = self.new_name or name
        if self.new_tag and self.digest:
            tag, digest = self.new_tag, self.digest
        elif self.new_tag:
            tag, digest = self.new_tag, ""
        elif self.digest:
            tag, digest = "", self.digest
        elif self.suffix:
            tag, digest = tag + self.suffix, ""
        _set(container, "image", name + (":" + tag if tag else "") + ("@" + digest if digest else ""), self.org)


def _images(kust: Kustomization, resources: list[Resource]) -> None:
    """The ImageTagTransformer, one per `images` entry in order (a later entry sees what an earlier one wrote): the
    name is matched as kustomize's IsImageMatched does (the entry's name a regular expression, then an optional
    tag and digest); newName, newTag, digest, tagSuffix as imagetag/updater.go sets them. Each entry runs the
    legacy filter over every container list, then the field-spec filter over the pod spec's own lists, so a
    tagSuffix is added twice there, as kustomize does (issue #4814)."""
    entries = kust.data.get("images")
    entries = entries if isinstance(entries, KSeq) else KSeq()
    legacy = kust.data.get("imageTags")  # FixKustomization appends the old name's entries to `images`
    rules = [e for e in list(entries) + (list(legacy) if isinstance(legacy, KSeq) else [])
             if isinstance(e, KMap) and isinstance(e.get("name"), str)]
    for rule in rules:
        pattern = _regex(rule["name"], "^{}" + _IMAGE_SUFFIX.replace("{", "{{").replace("}", "}}") + "$")
        if pattern is None:
            # an invalid expression matches nothing (image.IsImageMatched); one Python cannot match in bounded
            # time is taken as the plain name it almost always is
            pattern = re.compile("^" + re.escape(rule["name"]) + _IMAGE_SUFFIX + "$")
        new_name, new_tag = _image_rule_text(rule, "newName"), _image_rule_text(rule, "newTag")
        digest, suffix = _image_rule_text(rule, "digest"), _image_rule_text(rule, "tagSuffix")
        # the field that wrote the tag (the version is read from it), else the new name
        org = rule.vorg.get("newTag" if new_tag else "digest" if digest else "tagSuffix" if suffix else
                            "newName") or rule.at

        retag = _Retag(pattern, new_name, new_tag, digest, suffix, org)
        for res in resources:
            if _kind(res.node) == "CustomResourceDefinition":
                continue
            _each_container(res.node, retag)
            for path in _IMAGE_FIELD_PATHS:
                containers = _walk_to(res.node, list(path))
                for c in containers if isinstance(containers, KSeq) else []:
                    if isinstance(c, KMap):
                        retag(c)


def _field_path(path: str) -> list[str]:
    """kustomize's field paths: `spec.template.spec.containers.[name=vllm].image`, `metadata.labels.[a.b/c]`."""
    parts, buf, depth = [], "", 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "." and depth == 0:
            parts.append(buf)
            buf = ""
        else:
            buf += ch
    parts.append(buf)
    out = []
    for part in parts:
        if part.startswith("[") and part.endswith("]") and "=" not in part:
            out.append(part[1:-1])
        elif "[" in part and not part.startswith("["):  # `containers[name=x]`
            head, _, rest = part.partition("[")
            out.extend([head, "[" + rest])
        else:
            out.append(part)
    return [p for p in out if p != ""]


def _field_node(node: Any, parts: list[str], create: bool = False) -> tuple[Any, Any] | None:
    """(parent, key) of the field at ``parts``."""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part.startswith("[") and part.endswith("]") and "=" in part:
            k, _, v = part[1:-1].partition("=")
            if not isinstance(node, KSeq):
                return None
            index = next((j for j, o in enumerate(node) if isinstance(o, KMap) and str(o.get(k)) == v), None)
            if index is None:
                return None
            if last:
                return node, index
            node = node[index]
            continue
        if isinstance(node, KSeq) and part.isdigit():
            if int(part) >= len(node):
                return None
            if last:
                return node, int(part)
            node = node[int(part)]
            continue
        if not isinstance(node, KMap):
            return None
        if last:
            return (node, part) if part in node or create else None
        if part not in node:
            if not create:
                return None
            node[part] = KMap()
        node = node[part]
    return None


def _replacements(run: _Run, kust: Kustomization, resources: list[Resource]) -> None:
    entries = kust.data.get("replacements")
    if not isinstance(entries, KSeq):
        return
    for entry in entries:
        if isinstance(entry, KMap) and isinstance(entry.get("path"), str):
            path = _ok_path(run, kust, entry["path"], entry.vorg.get("path"), "replacement")
            loaded = _load(run, path) if path else None
            if path:
                run.handled.add(os.path.realpath(path))
            for doc in loaded if isinstance(loaded, list) else []:
                for item in doc if isinstance(doc, KSeq) else [doc]:
                    if isinstance(item, KMap):
                        _replacement(run, kust, item, resources)
        elif isinstance(entry, KMap):
            _replacement(run, kust, entry, resources)


def _replacement(run: _Run, kust: Kustomization, entry: KMap, resources: list[Resource]) -> None:
    """One replacement as api/filters/replacement/replacement.go applies it: the value of `sourceValue`, or of the
    source's field (the one object the selector picks; `options.delimiter`/`index` cut it), written into each
    target's field paths (kyaml's PathMatcher: keys, indexes, `*`, `[key=regexp]`, `[=regexp]`; `options.create`
    makes what is missing), a target scalar keeping its own type."""
    where = _lineno(entry.at)
    targets = entry.get("targets")
    if "sourceValue" in entry and not isinstance(entry.get("source"), KMap):
        value, org = entry["sourceValue"], entry.vorg.get("sourceValue")
    else:
        source = entry.get("source")
        if not isinstance(source, KMap) or not isinstance(targets, KSeq):
            return
        chosen = _select(resources, source)
        if not chosen:
            run.say(kust.file, where, f"replacement source {source.get('kind')} {source.get('name')} is not "
                    "among the objects read here: the fields it sets are unknown")
            return
        if len(chosen) > 1 and not _has_remote(run, kust):
            run.say(kust.file, where, f"replacement source {source.get('kind')} {source.get('name')} selects "
                    f"{len(chosen)} objects: kustomize build fails on it (\"multiple matches for selector\")", "warning")
            return
        field_path = source.get("fieldPath") if isinstance(source.get("fieldPath"), str) else "metadata.name"
        found = _field_node(chosen[0].node, _field_path(field_path))
        if found is None:
            if chosen[0].partial:
                return  # the file that would set it is not read, which is said where it is named
            run.say(kust.file, where, f"replacement source field {field_path} is not in {_kind(chosen[0].node)} "
                    f"{chosen[0].names[-1]} as read here (kustomize build fails when it is missing): not applied")
            return
        parent, key = found
        value = parent[key]
        org = parent.vorg.get(key) if isinstance(parent, KMap) else (
            parent.iorg[key] if key < len(parent.iorg) else None)
        options = source.get("options") if isinstance(source.get("options"), KMap) else None
        if options is not None and isinstance(options.get("delimiter"), str) and options["delimiter"]:
            if isinstance(value, (KMap, KSeq)):
                return
            pieces = _scalar_text(value).split(options["delimiter"])
            index = options.get("index") if isinstance(options.get("index"), int) else 0
            if not 0 <= index < len(pieces):
                run.say(kust.file, where, f"replacement source options.index {index} is out of bounds for "
                        f"{_scalar_text(value)!r}: kustomize build fails on it", "warning")
                return
            value = pieces[index]
    for target in targets if isinstance(targets, KSeq) else []:
        if not isinstance(target, KMap) or not isinstance(target.get("select"), KMap):
            continue
        rejected = set()
        for reject in target.get("reject") if isinstance(target.get("reject"), KSeq) else []:
            if isinstance(reject, KMap):
                rejected.update(id(r) for r in _select(resources, reject))
        topts = target.get("options") if isinstance(target.get("options"), KMap) else KMap()
        paths = [fp for fp in target.get("fieldPaths") or [] if isinstance(fp, str)] \
            if isinstance(target.get("fieldPaths"), KSeq) else []
        for res in _select(resources, target["select"]):
            if id(res) in rejected:
                continue
            for fp in paths or ["metadata.name"]:
                spots = _field_spots(res.node, _field_path(fp), bool(topts.get("create")), value)
                if not spots:
                    if res.partial:
                        continue
                    run.say(kust.file, where, f"replacement target field {fp} is not in {_kind(res.node)} "
                            f"{res.names[-1]} as read here (kustomize build fails on it unless options.create): "
                            "not applied")
                    continue
                for tparent, tkey in spots:
                    _grow(run, kust, entry.at, _size(value), "a replacement")
                    _write_replacement(tparent, tkey, value, org, topts)
                if fp == "metadata.name" and isinstance(_name(res.node), str):
                    res.names.append(_name(res.node) or "")


def _scalar_text(value: Any) -> str:
    """A YAML scalar's text as kyaml holds it (`true`, `5`, `null`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _write_replacement(parent: Any, key: Any, value: Any, org: Org | None, options: KMap) -> None:
    old = parent[key]
    new = value
    delimiter = options.get("delimiter")
    if isinstance(delimiter, str) and delimiter and not isinstance(old, (KMap, KSeq)):
        pieces = _scalar_text(old).split(delimiter)
        index = options.get("index") if isinstance(options.get("index"), int) else 0
        text = _scalar_text(value)
        if index < 0:
            pieces.insert(0, text)  # setFieldValue: a negative index is a prefix, one past the end a suffix
        elif index >= len(pieces):
            pieces.append(text)
        else:
            pieces[index] = text
        new = delimiter.join(pieces)
    if not isinstance(old, (KMap, KSeq)) and old is not None and not isinstance(new, (KMap, KSeq)):
        # a scalar target takes the text and keeps its own type (an env value stays a string)
        text = _scalar_text(new)
        if isinstance(old, bool):
            new = text == "true" if text in ("true", "false") else text
        elif isinstance(old, int):
            new = int(text) if re.fullmatch(r"[+-]?\d+", text) else text
        elif isinstance(old, float):
            try:
                new = float(text)
            except ValueError:
                new = text
        else:
            new = text
    new = _copy(new)
    if isinstance(parent, KMap):
        _set(parent, key, new, org)
    else:
        parent[key] = new
        while len(parent.iorg) <= key:
            parent.iorg.append(None)
        parent.iorg[key] = org


def _field_spots(node: Any, parts: list[str], create: bool, value: Any) -> list[tuple[Any, Any]]:
    """(parent, key) of every field kyaml's PathMatcher matches for ``parts``; missing parts made when ``create``
    (a map key, an `[key=value]` element, the leaf)."""
    if not parts:
        return []
    part, rest = parts[0], parts[1:]
    out: list[tuple[Any, Any]] = []
    if isinstance(node, KSeq):
        if part == "*":
            indexes = list(range(len(node)))
        elif part.isdigit():
            indexes = [int(part)] if int(part) < len(node) else []
        elif part.startswith("[") and part.endswith("]") and "=" in part:
            k, _, pattern = part[1:-1].partition("=")
            regex = _regex(pattern) or re.compile(re.escape(pattern))
            indexes = [i for i, item in enumerate(node)
                       if (not k and not isinstance(item, (KMap, KSeq)) and regex.search(_scalar_text(item)))
                       or (k and isinstance(item, KMap) and k in item and item[k] is not None
                           and not isinstance(item[k], (KMap, KSeq)) and regex.search(_scalar_text(item[k])))]
            if not indexes and create:
                node.append(pattern if not k else KMap({k: pattern}))
                node.iorg.append(None)
                indexes = [len(node) - 1]
        else:
            return []
        for i in indexes:
            if rest:
                out.extend(_field_spots(node[i], rest, create, value))
            else:
                out.append((node, i))
        return out
    if not isinstance(node, KMap):
        return []
    if part not in node:
        if not create:
            return []
        if not rest:
            node[part] = None
            return [(node, part)]
        nxt = rest[0]
        node[part] = KSeq() if nxt == "*" or nxt.isdigit() or nxt.startswith("[") else KMap()
    if not rest:
        return [(node, part)]
    return _field_spots(node[part], rest, create, value)


# --- Kubernetes' filling of variables from the set's ConfigMaps ---------------------------------------------------

def _inline_configmaps(resources: list[Resource]) -> None:
    """`env[].valueFrom.configMapKeyRef` and `envFrom[].configMapRef` naming a ConfigMap of this set: the value the
    kubelet gives the container, on the line that wrote it (kustomize renames the reference with the ConfigMap, so
    the set's ConfigMap is the one the pod gets, by any of its names)."""
    by_name: dict[str, KMap] = {}
    for res in resources:
        if _kind(res.node) == "ConfigMap" and isinstance(res.node.get("data"), KMap):
            for name in res.names:
                by_name.setdefault(name, res.node["data"])
    if not by_name:
        return

    def fill(container: KMap) -> None:
        env = container.get("env") if isinstance(container.get("env"), KSeq) else None
        if env is not None:
            for item in env:
                if not isinstance(item, KMap) or not isinstance(item.get("valueFrom"), KMap):
                    continue
                ref = item["valueFrom"].get("configMapKeyRef")
                if not isinstance(ref, KMap):
                    continue
                data = by_name.get(str(ref.get("name")))
                key = ref.get("key")
                if data is None or key not in data:
                    continue
                value_org = data.vorg.get(key)
                del item["valueFrom"]
                _set(item, "value", str(data[key]) if not isinstance(data[key], str) else data[key], value_org,
                     value_org)
        env_from = container.get("envFrom") if isinstance(container.get("envFrom"), KSeq) else None
        if env_from is None:
            return
        written = {i.get("name") for i in env or [] if isinstance(i, KMap)}
        added = KSeq()
        keep = KSeq()
        for i, source in enumerate(env_from):
            ref = source.get("configMapRef") if isinstance(source, KMap) else None
            data = by_name.get(str(ref.get("name"))) if isinstance(ref, KMap) else None
            if data is None:
                keep.append(source)
                keep.iorg.append(env_from.iorg[i] if i < len(env_from.iorg) else None)
                continue
            prefix = source.get("prefix") if isinstance(source.get("prefix"), str) else ""
            for key, value in data.items():
                name = f"{prefix}{key}"
                if name in written:
                    continue  # an `env` entry of the same name wins over envFrom
                written.add(name)
                item = KMap()
                _set(item, "name", name, data.korg.get(key))
                _set(item, "value", value if isinstance(value, str) else str(value), data.vorg.get(key))
                item.at = data.korg.get(key)
                added.append(item)
                added.iorg.append(data.korg.get(key))
        if added:
            merged = KSeq(list(added) + list(env or []))
            merged.iorg = list(added.iorg) + list(env.iorg if env is not None else [])
            merged.at = env.at if env is not None else env_from.at
            _set(container, "env", merged, None, container.korg.get("envFrom"))
            if keep:
                keep.at = env_from.at
                container["envFrom"] = keep
            else:
                del container["envFrom"]

    for res in resources:
        if _kind(res.node) != "ConfigMap":
            _each_container(res.node, fill)


# --- which kustomizations a scan builds, and their servers ----------------------------------------------------------

@dataclass
class KustomizePlan:
    roots: list[str] = field(default_factory=list)  # folders of the kustomizations no other one includes
    handled: set[str] = field(default_factory=set)  # paths of files read through a kustomization


def plan(entries: list[Any]) -> KustomizePlan:
    """Kustomizations among the discovered files, and the roots to build: a kustomization another one of the scan
    includes (a base, a component) is judged through the ones including it."""
    out = KustomizePlan()
    dirs = []
    for entry in entries:
        if os.path.basename(entry.path) in KUSTOMIZATION_NAMES:
            dirs.append(os.path.dirname(entry.path) or ".")
    if not dirs:
        return out
    included: set[str] = set()
    edges: dict[str, list[str]] = {}
    run = _Run()
    for directory in dirs:
        kust = _load_kustomization(run, directory)
        if not isinstance(kust, Kustomization):
            continue
        names = edges.setdefault(os.path.realpath(directory), [])
        for key in ("resources", "bases", "components"):
            for entry, _org in _strings(kust, key):
                if not _is_remote(entry) and "\x00" not in entry:  # (a NUL is no path: said where it is built)
                    names.append(os.path.realpath(os.path.join(directory, entry)))
                    included.add(names[-1])
    reached: set[str] = set()

    def reach(start: str) -> None:
        todo = [start]
        while todo:
            here = todo.pop()
            if here not in reached:
                reached.add(here)
                todo.extend(edges.get(here, ()))

    components = set()
    for directory in dirs:
        kust = _load_kustomization(run, directory)
        if isinstance(kust, Kustomization) and kust.kind == "Component":
            components.add(os.path.realpath(directory))
            continue  # a component is only ever applied by the kustomizations that name it
        if os.path.realpath(directory) not in included:
            out.roots.append(directory)
            reach(os.path.realpath(directory))
    for directory in dirs:
        # kustomizations that include each other and that no root reaches (A -> B -> A): every one is included, so
        # none was a root and the cycle went unsaid; its first is built, where the cycle is said
        real = os.path.realpath(directory)
        if real not in reached and real not in components and real in edges:
            out.roots.append(directory)
            reach(real)
    return out


def extract(roots: list[str]) -> tuple[list[Server], list[Problem], set[str]]:
    """Build each root kustomization and read its servers: (servers, problems, real paths of the files read
    through a kustomization, which are not read again as files of their own)."""
    servers: list[Server] = []
    problems: list[Problem] = []
    run = _Run()
    kept: set[tuple[str, int | None, str]] = set()
    for directory in roots[:MAX_ROOTS]:
        handled_before = set(run.handled)
        try:
            run.touched, run.said, run.build_nodes, run.custom_config = [], [], 0, False
            resources = build(run, directory)
            # what a kustomization leaves unknown is said when it deploys vLLM (a file it reads names vLLM): the
            # kustomizations of a platform repository's other services are no concern of this run
            if any(path in run.mention_vllm for path in run.touched):
                kept.update(run.said)
            if not resources:
                continue
            _inline_configmaps(resources)
            emitter = Emitter()
            for res in resources:
                emitter.document(res.node)
            shown = _display(directory)
            kust_file = _display(kustomization_file(directory) or directory)
            got, probs = _servers_of(emitter, kust_file)
            for s in got:
                _walk_locations(s, emitter.map)
                s.file = s.location.file
                if os.path.dirname(s.location.file) != shown and not (shown == "." and "/" not in s.location.file):
                    s.location = replace(s.location, yaml_path=f"{s.location.yaml_path}?overlay={shown}")
                s.notes.append(f"from kustomization {kust_file}, evaluated without kustomize")
            probs_mapped: list[Problem] = []
            for p in probs:
                if p.line is not None:
                    loc = emitter.map(Location(p.file, p.line, p.column or 1))
                    p = Problem(loc.file, loc.line, loc.column, p.message, level=p.level, advice=p.advice)
                probs_mapped.append(p)
            servers.extend(got)  # only when the whole kustomization was read
            problems.extend(probs_mapped)
        except _Unbuildable as stop:
            run.handled = handled_before
            if stop.args:
                run.say(_display(kustomization_file(directory) or directory), None, stop.args[0], bound=True)
        except Exception as exc:  # noqa: BLE001 - one kustomization vramlint cannot build: the others still are,
            # and the files only it read are read as files of their own
            from vramlint.model import internal_problem

            run.handled = handled_before
            problems.append(internal_problem(_display(kustomization_file(directory) or directory), None,
                                             "building this kustomization", exc))
    if len(roots) > MAX_ROOTS:
        problems.append(Problem(_display(roots[MAX_ROOTS]), None, None, f"more than {MAX_ROOTS} kustomizations: "
                                "the rest are not evaluated", level="note"))
    from vramlint.model import add_new_problems

    add_new_problems(problems, [p for key, p in run.notes.items() if key in kept or key in run.bounds])
    return servers, problems, run.handled


def _walk_locations(obj: Any, fn: Any, depth: int = 0) -> Any:
    """Every Location held by a server (its fields, dicts and lists of them) passed through ``fn``."""
    from dataclasses import fields, is_dataclass

    if depth > 6:
        return obj
    if isinstance(obj, Location):
        return fn(obj)
    if isinstance(obj, dict):
        for key in list(obj):
            obj[key] = _walk_locations(obj[key], fn, depth + 1)
        return obj
    if isinstance(obj, list):
        obj[:] = [_walk_locations(v, fn, depth + 1) for v in obj]
        return obj
    if is_dataclass(obj) and not isinstance(obj, type):
        for f in fields(obj):
            setattr(obj, f.name, _walk_locations(getattr(obj, f.name), fn, depth + 1))
    return obj


def _servers_of(emitter: Emitter, display: str) -> tuple[list[Server], list[Problem]]:
    from vramlint.extract import extract_document_records
    from vramlint.yamlload import load_text

    docs, problems = load_text(emitter.text(), display)
    servers: list[Server] = []
    runtimes: list[Any] = []
    isvcs: list[Any] = []
    for doc in docs:
        if doc.data is None:
            continue
        records = extract_document_records(doc, join_kserve=False)
        servers.extend(records.servers)
        problems.extend(records.problems)
        runtimes.extend(records.runtimes)
        isvcs.extend(records.inference_services)
    if runtimes or isvcs:
        from vramlint.extract import kserve

        joined, probs, _refs = kserve.join(runtimes, isvcs)
        servers.extend(joined)
        problems.extend(probs)
    return servers, problems
