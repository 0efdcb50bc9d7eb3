"""Generate vramlint/data/vllm_architectures.json: the model architectures each vLLM release's registry has, and
what the release does with an architecture it does not have.

vLLM looks a checkpoint's ``config.json`` ``architectures`` up in its registry: the ``_MODELS`` dict of
``vllm/model_executor/models/__init__.py`` (0.2 - 0.6.0) or the ``_VLLM_MODELS`` dict of
``vllm/model_executor/models/registry.py`` (0.6.1+), each built from literal dicts merged with ``**``. An
architecture it does not have raises ``ValueError: Model architectures [...] are not supported for now`` unless
the release can run it some other way, which this script records per release:

- ``fallback``: the release falls back to the Transformers implementation of an architecture its registry lacks
  (``resolve_transformers_fallback`` / ``resolve_transformers_arch`` in ``model_loader/utils.py``, 0.7.2+, and
  ``_try_resolve_transformers`` in ``registry.py`` later): whether that works depends on the transformers the image
  holds, not on the release;
- ``plugins``: the release loads ``vllm.general_plugins`` entry points (``vllm/plugins/__init__.py``), which can
  register an architecture (``ModelRegistry.register_model``) in an image that installs a plugin;
- ``message``: the f-string of the release's own refusal, as written in its source.

Only the files named above are read from each wheel (HTTP range requests for the zip's central directory and
those members, as tools/gen_vllm_quantization.py does), for every release on the index from 0.2.0 (post releases
are folded into their release: vramlint numbers them the same, so the architectures of both are kept, which can
only leave out a refusal, never invent one):

    python tools/gen_vllm_architectures.py

A downloaded wheel is read from its file (``pip download vllm==X --no-deps -d /tmp/vllmwheels``), and a new
release is added without reading the older ones again:

    python tools/gen_vllm_architectures.py --append /tmp/vllmwheels/vllm-0.35.0-*.whl
    python tools/gen_vllm_architectures.py --append 0.35.0

A release whose registry this script cannot read as described stops it with a message, rather than writing a
table that is wrong for that release.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gen_vllm_modules import INDEX, _get, _release  # noqa: E402
from gen_vllm_quantization import _key, _open  # noqa: E402

from vramlint.versions import parse_version  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "vramlint" / "data"
# where the registry is: registry.py (0.6.1+), models/__init__.py (0.2.5 - 0.6.0), model_loader.py's
# _MODEL_REGISTRY of imported classes (0.2.0 - 0.2.4)
REGISTRY = ("vllm/model_executor/models/registry.py", "vllm/model_executor/models/__init__.py",
            "vllm/model_executor/model_loader.py")
FINAL_DICTS = ("_VLLM_MODELS", "_MODELS", "_MODEL_REGISTRY")
LOADERS = ("vllm/model_executor/model_loader/utils.py", "vllm/model_executor/model_loader.py")
PLUGINS = "vllm/plugins/__init__.py"
REFUSAL = "are not supported for now"
OLDEST = (0, 2, 0)


def _bound(tree: ast.Module) -> dict[str, ast.expr]:
    bound: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            bound[node.target.id] = node.value
    return bound


def architectures(source: str) -> list[str]:
    """The keys of the registry's final dict (the first of FINAL_DICTS the module binds), merges followed."""
    bound = _bound(ast.parse(source))
    final = next((name for name in FINAL_DICTS if name in bound), None)
    if final is None:
        raise SystemExit("no " + ", ".join(FINAL_DICTS) + " dict in the registry")
    used: set[str] = set()

    def keys(node: ast.expr, depth: int = 0) -> list[str]:
        if depth > 20:
            raise SystemExit("registry dicts nest deeper than this script follows")
        if isinstance(node, ast.Name):
            if node.id not in bound:
                raise SystemExit(f"registry merges {node.id}, which is not a top-level dict")
            used.add(node.id)
            return keys(bound[node.id], depth + 1)
        if isinstance(node, ast.Dict):
            out: list[str] = []
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    out.extend(keys(v, depth + 1))
                elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                    out.append(k.value)
                else:
                    raise SystemExit(f"registry key {ast.unparse(k)} is not a string literal")
            return out
        if isinstance(node, ast.DictComp) and len(node.generators) == 1:
            # `{k: v for k, v in _TEXT_GENERATION_MODELS.items() if ...}` (0.34's embedding aliases): a subset of a
            # dict that the final one must hold itself, so its keys are already counted
            it = node.generators[0].iter
            if (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"
                    and isinstance(it.func.value, ast.Name)):
                return [f"\0subset of {it.func.value.id}"]
        raise SystemExit(f"registry value {ast.unparse(node)[:80]} is no form this script reads")

    found = keys(bound[final])
    for marker in [k for k in found if k.startswith("\0")]:
        of = marker.split(" of ", 1)[1]
        if of not in used:
            raise SystemExit(f"registry takes a filtered subset of {of}, which the final dict does not hold whole")
    return sorted({k for k in found if not k.startswith("\0")})


def refusal_message(sources: list[str]) -> str:
    """The f-string of ``raise ValueError(f"Model architectures ... are not supported for now. ...")``."""
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.JoinedStr) and REFUSAL in ast.unparse(node):
                return ast.unparse(node)
    raise SystemExit(f"no '{REFUSAL}' refusal in the registry or model loader")


def release_form(wheel) -> dict:
    names = set(wheel.namelist())
    text = lambda name: wheel.read(name).decode("utf-8")  # noqa: E731
    registry = next((n for n in REGISTRY if n in names and any(d in _bound(ast.parse(text(n))) for d in FINAL_DICTS)),
                    None)
    if registry is None:
        raise SystemExit("no model registry (" + ", ".join(FINAL_DICTS) + " in " + ", ".join(REGISTRY) + ")")
    registry_text = text(registry)
    loaders = [text(n) for n in LOADERS if n in names]
    fallback = any(re.search(r"resolve_transformers", s) for s in [registry_text, *loaders])
    plugins = PLUGINS in names and "general_plugins" in text(PLUGINS)
    return {"archs": architectures(registry_text), "fallback": fallback, "plugins": plugins,
            "message": refusal_message([registry_text, *loaders])}


def _final(version: str) -> bool:
    return re.fullmatch(r"\d+\.\d+\.\d+(?:\.\d+)?(?:\.post\d+)?", version) is not None


def main(argv: list[str]) -> int:
    append = "--append" in argv
    argv = [a for a in argv if a != "--append"]
    out_path = DATA / "vllm_architectures.json"
    forms: dict[tuple, tuple[str, dict]] = {}
    if append:
        table = json.loads(out_path.read_text())
        for i, version in enumerate(table["versions"]):
            form = next(f for f in table["forms"] if f["v"][0] <= i <= f["v"][1])
            archs = [a for a, spans in table["archs"].items() if any(s[0] <= i <= s[1] for s in spans)]
            forms[parse_version(version)] = (version, {"archs": archs, "fallback": form["fallback"],
                                                  "plugins": form["plugins"], "message": form["message"]})
    page = None
    if not argv or not all(a.endswith(".whl") for a in argv):
        page = _get(INDEX).decode("utf-8", "replace")
    items = argv
    if not items:
        found = {m.group(1) for m in re.finditer(r"vllm-(\d[\w.]*?)-cp[\w.-]*?x86_64\.whl", page)}
        items = sorted((v for v in found if _final(v) and _key(v)[:3] >= OLDEST), key=_key)
        if not items:
            raise SystemExit(f"no x86_64 vllm wheel from {'.'.join(map(str, OLDEST))} on {INDEX}")
    for item in items:
        version = _release(item)
        # vramlint's own key: a post release is its release (0.6.1.post2 -> (0, 6, 1, 0))
        key = parse_version(version)
        if append and forms and key <= max(forms):
            continue
        try:
            form = release_form(_open(item, page))
        except SystemExit as exc:
            raise SystemExit(f"vllm {version}: {exc}") from None
        if key in forms:
            # a post release: vramlint cannot tell it from its release, so an architecture either has is kept
            first, old = forms[key]
            form["archs"] = sorted(set(old["archs"]) | set(form["archs"]))
            version = first
        forms[key] = (version, form)
        print(f"{version}: {len(form['archs'])} architectures, fallback {form['fallback']}, plugins "
              f"{form['plugins']}", file=sys.stderr)
    ordered = [forms[k] for k in sorted(forms)]
    versions = [v for v, _ in ordered]
    rows: list[dict] = []
    spans: dict[str, list[list[int]]] = {}
    for i, (_, form) in enumerate(ordered):
        head = {k: form[k] for k in ("fallback", "plugins", "message")}
        if rows and all(rows[-1][k] == head[k] for k in head):
            rows[-1]["v"][1] = i
        else:
            rows.append({"v": [i, i], **head})
        for arch in form["archs"]:
            runs = spans.setdefault(arch, [])
            if runs and runs[-1][1] == i - 1:
                runs[-1][1] = i
            else:
                runs.append([i, i])
    out = {"generated_by": "tools/gen_vllm_architectures.py", "versions": versions, "forms": rows,
           "archs": dict(sorted(spans.items()))}
    out_path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
