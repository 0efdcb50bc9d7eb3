"""The import graph of vramlint's own modules, built from the source: no cycles, and the extractor layering
(operators read pods through `extract.podspec`, never through `extract.kubernetes` or the dispatching package).

Every `import` statement counts, at module level or inside a function: a lazy import is still an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "vramlint"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The vramlint modules ``name`` imports (``from pkg import sub`` is an edge to ``pkg.sub`` when ``sub`` is
    a module, else to ``pkg``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            edges.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    edges.add(f"{base}.{alias.name}")
                elif base in modules:
                    edges.add(base)
    edges.discard(name)
    return edges


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path (first node repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_graph_sees_the_real_imports():
    graph = import_graph()
    assert "vramlint.extract.podspec" in graph["vramlint.extract.kserve"]  # module level
    assert "vramlint.extract.kaito" in graph["vramlint.extract.registry"]  # inside a function
    assert "vramlint.yamlload" in graph["vramlint.scan"]


def test_cycle_finder_reports_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle_among_vramlint_modules():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_operators_read_pods_through_podspec_only():
    graph = import_graph()
    assert graph["vramlint.extract.podspec"] <= {"vramlint.extract.records", "vramlint.model", "vramlint.versions",
                                                 "vramlint.yamlload", "vramlint.cmdline", "vramlint.vllm_args",
                                                 "vramlint.gpus", "vramlint.extract.scripts",
                                                 "vramlint.lean_dataclass"}  # a leaf: the standard library only
    dispatchers = {"vramlint.extract", "vramlint.extract.kubernetes", "vramlint.extract.registry"}
    for name, edges in graph.items():
        if name.startswith("vramlint.extract.") and name not in dispatchers:
            assert not edges & dispatchers, f"{name} imports {sorted(edges & dispatchers)}"
