"""Helm values with the position of every key, merged in Helm's order.

Helm coalesces the chart's `values.yaml` with each `-f` file in turn: maps merge deeply, any other value
(lists included) replaces, and `null` in a later file deletes the key. Each leaf keeps the Location of
the file and line that gave it its final value, so a finding can land on that line.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from vramlint.lean_dataclass import dataclass
from vramlint.model import Location, Problem
from vramlint.yamlload import join_path, key_location, load_text, value_location


@dataclass
class Values:
    data: dict = field(default_factory=dict)
    origins: dict[tuple, Location] = field(default_factory=dict)  # key path -> where its value was written
    files: list[str] = field(default_factory=list)
    # values files vramlint did not read (over its size limits, refused as not regular or outside the tree): Helm
    # would read them, so what the templates take from the values is unknown
    unread: list[str] = field(default_factory=list)
    # values files Helm itself refuses (invalid YAML, a key twice...): `helm install` stops there and renders nothing
    refused: list[str] = field(default_factory=list)
    # (origins, its length, its prefix index) as coalesce left them: the next merge over these values reuses the
    # index when nothing else changed the origins since
    prefix_index: tuple | None = field(default=None, repr=False, compare=False)


class _TooManyAliases(Exception):
    def __init__(self, message: str, path: tuple, own_limit: bool = False):
        super().__init__(message)
        self.path = path
        self.own_limit = own_limit  # vramlint's size limit, not go-yaml's alias guard: Helm would read the file


MAX_VALUES_NODES = 50_000  # vramlint's limit on a values file's nodes with its aliases expanded


def _count(node: Any, path: tuple, counts: dict | None) -> None:
    """go-yaml's guard against alias bombs, which Helm's values reader applies: refuse a document whose alias
    expansions outnumber its nodes (the ratio allowed shrinks as the document grows)."""
    if counts is None:
        return
    from vramlint.helm.gotmpl import _alias_limit

    counts["decoded"] += 1
    if isinstance(node, (dict, list)):
        if id(node) in counts["seen"]:
            counts["aliases"] += 1
        counts["seen"].add(id(node))
    decoded, aliases = counts["decoded"], counts["aliases"]
    if aliases > 100 and decoded > 1000 and aliases / decoded > _alias_limit(decoded):
        raise _TooManyAliases("yaml: document contains excessive aliasing", path)
    if decoded > MAX_VALUES_NODES:
        raise _TooManyAliases(f"more than vramlint's limit of {MAX_VALUES_NODES:,} values with YAML aliases "
                              "expanded", path, own_limit=True)


def _expanded_size(root: Any) -> int:
    """The values' node count with every alias expanded, from each distinct node once (so linear in the file):
    _TooManyAliases (with the path of the largest key) past go-yaml's alias guard or vramlint's limit. Returns
    the number of aliases expanded (collections reached again)."""
    from vramlint.helm.gotmpl import _alias_limit

    memo: dict[int, tuple[int, int]] = {}  # id -> (nodes, containers) expanded
    distinct = 0

    def size(node: Any, depth: int) -> tuple[int, int]:
        nonlocal distinct
        if not isinstance(node, (dict, list)) or depth > 100:
            return 1, 0
        key = id(node)
        if key in memo:
            return memo[key]
        distinct += 1
        nodes, containers = 1, 1
        for child in (node.values() if isinstance(node, dict) else node):
            n, c = size(child, depth + 1)
            nodes += n
            containers += c
            if nodes > 100 * MAX_VALUES_NODES:
                break  # already far past the limit: no need to count the rest
        memo[key] = (nodes, containers)
        return nodes, containers

    nodes, containers = size(root, 0)
    aliases = containers - distinct
    path: tuple = ()
    if isinstance(root, dict) and root:
        path = (str(max(root, key=lambda k: size(root[k], 1)[0])),)
    if aliases > 100 and nodes > 1000 and aliases / nodes > _alias_limit(nodes):
        raise _TooManyAliases("yaml: document contains excessive aliasing", path)
    if nodes > MAX_VALUES_NODES:
        raise _TooManyAliases(f"{nodes:,} values with YAML aliases expanded, more than vramlint's limit of "
                              f"{MAX_VALUES_NODES:,}", path, own_limit=True)
    return aliases


def _to_plain(node: Any, path: tuple, ypath: str, file: str, origins: dict, depth: int = 0,
              not_json: list | None = None, counts: dict | None = None) -> Any:
    if depth > 100:
        return None
    _count(node, path, counts)
    if isinstance(node, dict):
        out = {}
        for k in node:
            kp = join_path(ypath, k)
            child = node[k]
            loc = value_location(file, node, k, kp) if not isinstance(child, (dict, list)) else key_location(
                file, node, k, kp
            )
            if loc is not None:
                origins[path + (str(k),)] = loc
            out[str(k)] = _to_plain(child, path + (str(k),), kp, file, origins, depth + 1, not_json, counts)
        return out
    if isinstance(node, list):
        out_list = []
        for i, item in enumerate(node):
            kp = join_path(ypath, i)
            loc = value_location(file, node, i, kp)
            if loc is not None:
                origins[path + (i,)] = loc
            out_list.append(_to_plain(item, path + (i,), kp, file, origins, depth + 1, not_json, counts))
        return out_list
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        if node != node or node in (float("inf"), float("-inf")):
            if not_json is not None:
                not_json.append((origins.get(path), node))
        return float(node)
    if isinstance(node, str):
        return str(node)
    return str(node)  # timestamps and other YAML types: Helm sees their text


def load_values_text(text: str, file: str) -> tuple[dict, dict[tuple, Location], list[Problem]]:
    # a value is at most two nodes of the file (a key and its value): a file of more nodes than twice the limit
    # is over it without building anything (800,000 nodes took 4.5 s and 600 MB to be refused after the load)
    docs, problems = load_text(text, file, max_nodes=2 * MAX_VALUES_NODES + 2)
    origins: dict[tuple, Location] = {}
    if not docs:
        return {}, origins, problems
    data = docs[0].data
    if not isinstance(data, dict):
        problems.append(Problem(file, 1, 1, "values file is not a mapping; it was ignored"))
        return {}, origins, problems
    not_json: list = []
    try:
        cut = any("alias" in p.message for p in problems)  # the YAML reader already cut a bomb and said so
        # before expanding anything: an alias bomb is refused in milliseconds. With no collection reached twice,
        # the guard counted while expanding (go-yaml's ratio, checked as it decodes) has no alias to count and the
        # node limit was just checked on the same nodes, so it is not run
        aliases = None if cut else _expanded_size(data)
        plain = _to_plain(data, (), "", file, origins, not_json=not_json,
                          counts=None if cut or aliases == 0 else {"decoded": 0, "aliases": 0, "seen": set()})
    except _TooManyAliases as exc:
        # Helm refuses the whole file; so is it here, on the key where the expansion went over
        loc = next((origins[exc.path[:n]] for n in range(len(exc.path), 0, -1) if exc.path[:n] in origins), None)
        if loc is None and exc.path and isinstance(data, dict) and exc.path[0] in data:
            from vramlint.yamlload import key_location

            loc = key_location(file, data, exc.path[0], exc.path[0])
        if exc.own_limit:
            problems.append(Problem(file, loc.line if loc else 1, loc.column if loc else 1,
                                    f"{file} has {exc}: vramlint did not read it, so the values it sets are unknown",
                                    level="warning"))
        else:
            problems.append(Problem(file, loc.line if loc else 1, loc.column if loc else 1,
                                    f"Helm cannot load {file}: {exc} (YAML anchors and aliases); the file was not "
                                    "read"))
        return {}, {}, problems
    for loc, value in not_json[:1]:  # Helm stops at the first
        word = "NaN" if value != value else "+Inf" if value > 0 else "-Inf"
        problems.append(Problem(file, loc.line if loc else 1, loc.column if loc else 1,
                                f"Helm cannot load {file}: {'.nan' if value != value else ('.inf' if value > 0 else '-.inf')} is not a number "
                                f"JSON can hold (error converting YAML to JSON: json: unsupported value: {word})"))
    return plain, origins, problems


def load_values_file(path: str, display: str, what: str = "values file"
                     ) -> tuple[dict, dict[tuple, Location], list[Problem]]:
    from vramlint.fsread import Refusal, read_text

    text = read_text(path)
    if isinstance(text, Refusal):
        # outside the scanned tree, a FIFO, too large: never read (vramlint.fsread), so its values are unknown
        level = "error" if text.missing else "warning"
        return {}, {}, [Problem(display, None, None, f"{what} {display} is {text.reason}: not read", level)]
    return load_values_text(text, display)


def was_refused(data: dict, problems: list[Problem]) -> bool:
    """A values file Helm refuses as vramlint does (an error, no values)."""
    return not data and any(p.level == "error" for p in problems)


def was_not_read(data: dict, problems: list[Problem]) -> bool:
    """A values file that vramlint did not read although Helm would (a warning and no values): not one that Helm
    refuses too (an error) nor one that is empty."""
    return not data and any(p.level == "warning" for p in problems)


def _prefix_index(origins: dict[tuple, Location]) -> dict[tuple, list[tuple]]:
    """Each key path's prefixes (itself included) -> the paths under them, in the dict's order."""
    index: dict[tuple, list[tuple]] = {}
    for k in origins:
        for i in range(1, len(k) + 1):
            index.setdefault(k[:i], []).append(k)
    return index


def coalesce(base: Values, data: dict, origins: dict[tuple, Location], file: str | None = None) -> None:
    """Merge ``data`` (a later values file) over ``base`` in place, as `helm -f` does.

    The origins under a replaced or deleted key are found through prefix indexes made once per merge, not by a
    scan of every origin for each key (20 overlays of 2,000 keys: 38 CPU-s, killed, before)."""
    src: dict[tuple, list[tuple]] | None = None
    kept = base.prefix_index
    dst: dict[tuple, list[tuple]] | None = (
        kept[2] if kept is not None and kept[0] is base.origins and kept[1] == len(base.origins) else None)

    def drop(p: tuple) -> None:
        nonlocal dst
        if dst is None:
            dst = _prefix_index(base.origins)
        for k in dst.pop(p, ()):  # a path may be listed after it went: only those still there are deleted
            base.origins.pop(k, None)

    def add(k: tuple, loc: Location) -> None:
        base.origins[k] = loc
        if dst is not None:
            for i in range(1, len(k) + 1):
                dst.setdefault(k[:i], []).append(k)

    def merge(dst_map: dict, src_map: dict, path: tuple) -> None:
        nonlocal src
        for k, v in src_map.items():
            p = path + (k,)
            if v is None:
                # null deletes the key (and what the chart's defaults had under it)
                dst_map.pop(k, None)
                drop(p)
                continue
            if isinstance(v, dict) and isinstance(dst_map.get(k), dict):
                if p in origins and p not in base.origins:
                    add(p, origins[p])
                merge(dst_map[k], v, p)
                continue
            dst_map[k] = _copy(v)
            drop(p)
            if src is None:
                src = _prefix_index(origins)
            for ok in src.get(p, ()):
                add(ok, origins[ok])

    merge(base.data, data, ())
    base.prefix_index = (base.origins, len(base.origins), dst) if dst is not None else None
    if file:
        base.files.append(file)


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def subchart_values(parent: Values, sub_name: str, sub_defaults: Values) -> Values:
    """The values a subchart sees: its defaults, under the parent's `<sub_name>:` block and `global:`."""
    out = Values(_copy(sub_defaults.data), dict(sub_defaults.origins), list(sub_defaults.files))
    block = parent.data.get(sub_name)
    if isinstance(block, dict):
        n = 1
        sub_origins = {k[n:]: v for k, v in parent.origins.items() if k[:1] == (sub_name,) and len(k) > 1}
        coalesce(out, block, sub_origins)
    glob = parent.data.get("global")
    if isinstance(glob, dict):
        g_origins = {k: v for k, v in parent.origins.items() if k[:1] == ("global",)}
        coalesce(out, {"global": glob}, g_origins)
    out.data.setdefault("global", {})
    return out
