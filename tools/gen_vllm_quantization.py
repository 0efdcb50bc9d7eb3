"""Generate vramlint/data/vllm_quantization.json: the quantization methods each vLLM release accepts, and whether
its argument parser refuses another value itself or leaves it to ``ModelConfig._verify_quantization``.

Three files are read from each release's wheel, and only them: HTTP range requests for the zip's central
directory, then for each file's compressed bytes (a few hundred KB per release instead of the 300 MB wheel):

- ``vllm/model_executor/layers/quantization/__init__.py``: the methods, ``QUANTIZATION_METHODS`` (a dict of config
  classes up to 0.6.x, then a list) or the ``QuantizationMethods`` Literal it is made from (0.8+);
- ``vllm/engine/arg_utils.py``: how ``--quantization`` is added: with ``choices=[*QUANTIZATION_METHODS, None]``
  (argparse refuses another value with "invalid choice"), or from ``get_kwargs(ModelConfig)``;
- the module defining ``ModelConfig`` (``vllm/config.py``, ``vllm/config/__init__.py`` or ``vllm/config/model.py``):
  its ``quantization`` annotation, which ``get_kwargs`` turns into choices only when it is a Literal at run time
  (``SkipValidation[Optional[QuantizationMethods]]`` with the name imported for real), and into a free string when
  it also takes ``str`` or the name is bound to ``Any`` outside ``TYPE_CHECKING``.

Run from the repository root (the releases vramlint/data/vllm_args.json lists, from the package index):

    python tools/gen_vllm_quantization.py

A wheel already downloaded is read from its file (`pip download vllm==X --no-deps -d /tmp/vllmwheels`), and a new
release is added without reading the older ones again:

    python tools/gen_vllm_quantization.py --append /tmp/vllmwheels/vllm-0.35.0-*.whl
    python tools/gen_vllm_quantization.py --append 0.35.0

Each release's form is stored once per run of identical releases (``"v": [first, last]`` indexes into
``versions``), as in vllm_args.json. A release whose files this script cannot read as described stops it with a
message, rather than writing a table that is wrong for that release.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_vllm_modules import INDEX, RemoteWheel, _get, _release, wheel_url  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "vramlint" / "data"
QUANT_INIT = "vllm/model_executor/layers/quantization/__init__.py"
ARG_UTILS = "vllm/engine/arg_utils.py"
MODEL_CONFIG = ("vllm/config/model.py", "vllm/config/__init__.py", "vllm/config.py")


def _open(item: str, page: str | None):
    if item.endswith(".whl"):
        import zipfile
        return zipfile.ZipFile(item)
    assert page is not None
    return RemoteWheel(wheel_url(item, page))


def _strings(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        out = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return out if len(out) == len(node.elts) else None
    if isinstance(node, ast.Dict):
        out = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        return out if len(out) == len(node.keys) else None
    if isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "Literal":
        return _strings(node.slice if isinstance(node.slice, ast.Tuple) else ast.Tuple(elts=[node.slice]))
    return None


def methods(source: str) -> list[str]:
    """QUANTIZATION_METHODS in its order (what vLLM's message lists), from the module's top-level assignments."""
    bound: dict[str, ast.expr] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            bound[node.target.id] = node.value
    value = bound.get("QUANTIZATION_METHODS")
    if value is None:
        raise SystemExit("no QUANTIZATION_METHODS in quantization/__init__.py")
    if isinstance(value, ast.Call) and ast.unparse(value) == "list(get_args(QuantizationMethods))":
        value = bound.get("QuantizationMethods")
    found = _strings(value) if value is not None else None
    if not found:
        raise SystemExit(f"QUANTIZATION_METHODS is not a literal list here: {ast.unparse(value) if value else None}")
    return found


def parser_form(arg_utils: str, config_sources: list[str]) -> str:
    """How argparse takes --quantization: "listed" (choices=[*QUANTIZATION_METHODS, None]), "literal" (choices
    from the Literal, sorted, and "None") or "free" (any string; ModelConfig refuses an unknown one)."""
    add = re.search(r"add_argument\(\s*['\"]--quantization['\"](.*?)\)\n", arg_utils, re.S)
    if add is None:
        raise SystemExit("no --quantization add_argument in engine/arg_utils.py")
    call = add.group(1)
    if "choices=[*QUANTIZATION_METHODS, None]" in call:
        return "listed"
    if "choices" in call:
        raise SystemExit(f"--quantization has choices this script does not know: {call.strip()}")
    if 'model_kwargs["quantization"]' not in call and "model_kwargs['quantization']" not in call:
        raise SystemExit(f"--quantization is added in a way this script does not know: {call.strip()}")
    for source in config_sources:
        tree = ast.parse(source)
        model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelConfig"), None)
        if model is None:
            continue
        field = next((n for n in model.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
                      and n.target.id == "quantization"), None)
        if field is None:
            raise SystemExit("ModelConfig has no annotated quantization field")
        annotation = ast.unparse(field.annotation)
        names = set(re.findall(r"\w+", annotation))
        if "str" in names:
            return "free"  # get_kwargs: a Literal with str gives a metavar, not choices
        if "QuantizationMethods" not in names:
            raise SystemExit(f"ModelConfig.quantization: {annotation}, which this script does not know")
        # the name at run time: a top-level import binds the Literal; one under `if TYPE_CHECKING:` with an
        # `else:` binding it to Any leaves get_kwargs a plain string type
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and any(a.name == "QuantizationMethods" for a in node.names):
                return "literal"
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                for alt in node.orelse:
                    if isinstance(alt, ast.ImportFrom) and any(a.name == "QuantizationMethods" for a in alt.names):
                        return "literal"
                    if isinstance(alt, ast.Assign) and any(getattr(t, "id", None) == "QuantizationMethods"
                                                           for t in alt.targets):
                        if ast.unparse(alt.value) in ("Any", "str"):
                            return "free"
        raise SystemExit("ModelConfig.quantization names QuantizationMethods, bound in a way this script does not know")
    raise SystemExit("no ModelConfig class in " + ", ".join(MODEL_CONFIG))


def release_form(wheel) -> dict:
    names = set(wheel.namelist())
    text = lambda name: wheel.read(name).decode("utf-8")  # noqa: E731
    found = methods(text(QUANT_INIT))
    configs = [text(n) for n in MODEL_CONFIG if n in names]
    return {"methods": found, "parser": parser_form(text(ARG_UTILS), configs)}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


def main(argv: list[str]) -> int:
    append = "--append" in argv
    argv = [a for a in argv if a != "--append"]
    out_path = DATA / "vllm_quantization.json"
    versions: list[str] = []
    forms: list[dict] = []
    if append:
        table = json.loads(out_path.read_text())
        versions = list(table["versions"])
        for row in table["forms"]:
            for _ in range(row["v"][0], row["v"][1] + 1):
                forms.append({"methods": row["methods"], "parser": row["parser"]})
        argv = [a for a in argv if _key(_release(a)) > _key(versions[-1])]
        if not argv:
            raise SystemExit(f"no release newer than the table's {versions[-1]}")
    items = argv or json.loads((DATA / "vllm_args.json").read_text())["versions"]
    page = None if all(a.endswith(".whl") for a in items) else _get(INDEX).decode("utf-8", "replace")
    for item in items:
        version = _release(item)
        try:
            form = release_form(_open(item, page))
        except SystemExit as exc:
            raise SystemExit(f"vllm {version}: {exc}") from None
        versions.append(version)
        forms.append(form)
        print(f"{version}: {len(form['methods'])} methods, parser {form['parser']}", file=sys.stderr)
    rows: list[dict] = []
    for i, form in enumerate(forms):
        if rows and rows[-1]["methods"] == form["methods"] and rows[-1]["parser"] == form["parser"]:
            rows[-1]["v"][1] = i
        else:
            rows.append({"v": [i, i], **form})
    out = {"generated_by": "tools/gen_vllm_quantization.py", "versions": versions, "forms": rows}
    out_path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
