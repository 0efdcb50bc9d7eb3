"""Generate vramlint/data/vllm_args.json: vLLM's CLI arguments per version, read statically from vLLM's source.

vLLM cannot be imported here (it needs torch and CUDA), so this reads the wheels' Python files with `ast`:

    pip download vllm==0.6.4 --no-deps --only-binary :all: -d /tmp/vllmwheels
    unzip -q /tmp/vllmwheels/vllm-0.6.4-*.whl 'vllm/*.py' -d /tmp/vllmsrc/0.6.4
    python tools/gen_vllm_args.py /tmp/vllmsrc            # one sub-folder per version

It follows what `vllm serve` / the OpenAI api_server register: `make_arg_parser`, the `serve` sub-parser,
`EngineArgs.add_cli_args` / `AsyncEngineArgs.add_cli_args`, `FrontendArgs.add_cli_args`, and, for versions
that build arguments from config dataclasses (`get_kwargs(ModelConfig)` ...), the dataclass fields and their
annotations, mapped to argparse kwargs the way vLLM's `get_kwargs` maps them (newest rules; older versions
differed only in how some values are typed, not in which flags exist).

A new release is added to the table without reading every older wheel again (`--append`):

    pip download vllm==0.34.0 --no-deps --only-binary :all: -d /tmp/vllmwheels
    unzip -q /tmp/vllmwheels/vllm-0.34.0-*.whl 'vllm/*.py' -d /tmp/vsrc2/0.34.0
    unzip -q /tmp/vllmwheels/vllm-0.33.0-*.whl 'vllm/*.py' -d /tmp/vsrc2/0.33.0   # the table's newest
    python tools/gen_vllm_args.py --append /tmp/vsrc2

Each folder whose version is newer than the table's newest is appended: an entry the new release has in the same
form extends its range (only one open at the previous release: a form that disappeared and came back starts a new
entry, as a full build makes it), the others are added. The table's newest release is scanned again when its
folder is there, and its entries must come out as the table holds them (else the scanner changed since the
table was built, and the whole table has to be rebuilt). The result is then the table a full build of all the
releases would write.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ENTRY_FILES = [
    "entrypoints/openai/cli_args.py",
    "entrypoints/launchers/cli_args.py",
    "entrypoints/common/cli_args.py",
    "entrypoints/cli/serve.py",
    "scripts.py",
]
HUMAN_INT_FIELDS = {"max_model_len", "max_num_batched_tokens", "max_num_scheduled_tokens",
                    "kv_cache_memory_bytes", "max_num_queued_tokens"}


def vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


class Source:
    """The parsed modules of one vLLM version, with class and alias indexes built lazily."""

    def __init__(self, root: Path):
        self.root = root / "vllm"
        self.trees: dict[Path, ast.Module] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.aliases: dict[str, ast.expr] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self._indexed_all = False
        for rel in ["engine/arg_utils.py", *ENTRY_FILES, "config.py"]:
            self._load(self.root / rel)
        for p in sorted((self.root / "config").glob("*.py")) if (self.root / "config").is_dir() else []:
            self._load(p)

    def _load(self, path: Path) -> None:
        if path in self.trees or not path.is_file():
            return
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            return
        self.trees[path] = tree
        nodes = []
        for node in tree.body:
            nodes.append(node)
            # aliases defined under `if TYPE_CHECKING:` / `else:` or in try/except import fallbacks
            if isinstance(node, (ast.If, ast.Try)):
                nodes += list(node.body) + list(node.orelse)
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, node)
            elif isinstance(node, ast.FunctionDef):
                self.functions.setdefault(node.name, node)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.aliases.setdefault(node.targets[0].id, node.value)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                # `X: TypeAlias = Literal[...]`
                self.aliases.setdefault(node.target.id, node.value)
            elif isinstance(node, ast.TypeAlias) if hasattr(ast, "TypeAlias") else False:
                self.aliases.setdefault(node.name.id, node.value)

    def find_class(self, name: str) -> ast.ClassDef | None:
        if name in self.classes:
            return self.classes[name]
        if not self._indexed_all:
            # A class defined outside the usual files: look for its definition by text, then parse that file.
            self._indexed_all = True
            pattern = re.compile(rb"^class \w+[(:]", re.M)
            for p in self.root.rglob("*.py"):
                if "tests" in p.parts or "benchmarks" in p.parts or "third_party" in p.parts:
                    continue
                data = p.read_bytes()
                if b"@dataclass" in data or b"@config" in data or b"Args" in data:
                    if pattern.search(data):
                        self._load(p)
        return self.classes.get(name)


# ---------------------------------------------------------------------------------------------------------------
# dataclass fields -> argparse kwargs, as vLLM's get_kwargs does


def _atoms(src: Source, node: ast.expr | None, depth: int = 0) -> list:
    """Flatten an annotation into atoms: 'int', 'None', ('Literal', [...]), ('list', elem), 'dataclass', ..."""
    if node is None or depth > 12:
        return ["other"]
    if isinstance(node, ast.Constant):
        if node.value is None:
            return ["None"]
        if isinstance(node.value, str):
            try:
                return _atoms(src, ast.parse(node.value, mode="eval").body, depth + 1)
            except SyntaxError:
                return ["other"]
        return ["other"]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _atoms(src, node.left, depth + 1) + _atoms(src, node.right, depth + 1)
    if isinstance(node, ast.Name) or isinstance(node, ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        if name in ("bool", "int", "float", "str", "dict", "list", "tuple", "set", "Dict", "List", "Tuple"):
            return [name.lower()]
        if name in ("Any",):
            return ["other"]
        if isinstance(node, ast.Name) and name in src.aliases:
            return _atoms(src, src.aliases[name], depth + 1)
        cls = src.find_class(name) if isinstance(node, ast.Name) else None
        if cls is not None:
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in cls.bases}
            if bases & {"dict", "TypedDict"}:
                return ["dict"]
            if bases & {"Enum", "str", "IntEnum", "StrEnum"}:
                return ["other"]
            decos = ast.unparse(cls.decorator_list) if cls.decorator_list else ""
            if "dataclass" in decos or "config" in decos:
                return ["dataclass"]
        return ["other"]
    if isinstance(node, ast.Subscript):
        base = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
        inner = node.slice
        elts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if base == "Optional":
            return _atoms(src, elts[0], depth + 1) + ["None"]
        if base == "Union":
            out = []
            for e in elts:
                out += _atoms(src, e, depth + 1)
            return out
        if base == "Annotated":
            return _atoms(src, elts[0], depth + 1)
        if base == "Literal":
            # `Literal["auto", RunnerType]`: a nested alias adds its own values; one that cannot be resolved
            # leaves the choices unknown (no choices recorded) rather than incomplete
            vals = []
            for e in elts:
                if isinstance(e, ast.Constant):
                    vals.append(e.value)
                    continue
                nested = _atoms(src, e, depth + 1)
                if not nested or not all(isinstance(a, tuple) and a[0] == "Literal" for a in nested):
                    return ["other"]
                for a in nested:
                    vals += a[1]
            return [("Literal", vals)]
        if base in ("list", "List", "Sequence"):
            return [("list", _atoms(src, elts[0], depth + 1))]
        if base in ("tuple", "Tuple"):
            return [("tuple", _atoms(src, elts[0], depth + 1), any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts))]
        if base in ("set", "Set"):
            return [("list", _atoms(src, elts[0], depth + 1))]
        if base in ("dict", "Dict", "Mapping"):
            return ["dict"]
        if base in ("SkipValidation", "Final", "NotRequired", "Required"):
            return _atoms(src, elts[0], depth + 1)
        return ["other"]
    return ["other"]


def _scalar_type(atoms: list) -> str:
    names = {a for a in atoms if isinstance(a, str)}
    if "int" in names:
        return "int"
    if "float" in names:
        return "float"
    return "str"


def kwargs_for_field(src: Source, name: str, ann: ast.expr) -> dict:
    atoms = _atoms(src, ann)
    names = {a if isinstance(a, str) else a[0] for a in atoms}
    kw: dict = {}
    if "dataclass" in names:
        kw["type"] = "json"
    elif names == {"bool", "str", "None"}:
        kw.update(type="str", nargs="?", const=True)
    elif "bool" in names:
        kw["action"] = "bool_optional"
    elif "Literal" in names:
        choices = []
        for a in atoms:
            if isinstance(a, tuple) and a[0] == "Literal":
                choices += a[1]
        kw["choices"] = [str(c) for c in choices]
        kw["type"] = "int" if choices and all(isinstance(c, int) for c in choices) else "str"
    elif names & {"tuple", "list"}:
        for a in atoms:
            if isinstance(a, tuple) and a[0] in ("tuple", "list"):
                kw["type"] = _scalar_type(a[1])
                kw["nargs"] = "+"
                break
    elif "int" in names:
        kw["type"] = "human_int" if name in HUMAN_INT_FIELDS else "int"
    elif "float" in names:
        kw["type"] = "float"
    elif "dict" in names:
        kw["type"] = "json"
    else:
        kw["type"] = "str"
    if "None" in names and "bool" not in names:
        kw["optional"] = True
    return kw


def dataclass_kwargs(src: Source, cls_name: str, seen: frozenset = frozenset()) -> dict[str, dict]:
    cls = src.find_class(cls_name)
    if cls is None or cls_name in seen:
        return {}
    out: dict[str, dict] = {}
    for base in cls.bases:
        if isinstance(base, ast.Name):
            out.update(dataclass_kwargs(src, base.id, seen | {cls_name}))
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            ann = ast.unparse(stmt.annotation)
            if ann.startswith("ClassVar") or "InitVar" in ann:
                continue
            if stmt.value is not None and isinstance(stmt.value, ast.Call) and "field" in ast.unparse(stmt.value.func):
                if any(k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
                       for k in stmt.value.keywords):
                    continue
            out[stmt.target.id] = kwargs_for_field(src, stmt.target.id, stmt.annotation)
    return out


# ---------------------------------------------------------------------------------------------------------------
# add_argument calls


def _type_of(node: ast.expr) -> tuple[str, bool]:
    """argparse `type=` expression -> (kind, optional)."""
    text = ast.unparse(node)
    optional = text.startswith("optional_") or text.startswith("nullable") or "optional_type" in text
    if "json" in text or "parse_dataclass" in text or "union_dict_and_str" in text or "Config" in text:
        return "json", optional
    if "human_readable_int" in text:
        return "human_int", optional
    if re.search(r"\bint\b", text) or text in ("optional_int", "check_port") or "port" in text:
        return "int", optional
    if re.search(r"\bfloat\b", text) or text == "optional_float":
        return "float", optional
    if "bool" in text:
        return "bool", optional
    return "str", optional


def _const(node: ast.expr):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


class Collector:
    def __init__(self, src: Source):
        self.src = src
        self.args: dict[str, dict] = {}  # dest -> spec
        self.visited: set[str] = set()

    # -- kwargs dict values: {"type": ..., "action": ...} with plain strings
    def _kwargs_from_keywords(self, keywords: list[ast.keyword], env: dict) -> dict:
        out: dict = {}
        for k in keywords:
            if k.arg is None:
                out.update(self._eval_kwargs(k.value, env))
            else:
                out[k.arg] = ("ast", k.value)
        return out

    def _eval_kwargs(self, node: ast.expr, env: dict) -> dict:
        if isinstance(node, ast.Subscript):
            base = node.value
            key = _const(node.slice)
            if isinstance(base, ast.Name) and base.id in env and isinstance(env[base.id], dict):
                return dict(env[base.id].get(key, {}))
        if isinstance(node, ast.Name) and isinstance(env.get(node.id), dict) and env.get(node.id, {}).get("__field__"):
            return {k: v for k, v in env[node.id].items() if k != "__field__"}
        if isinstance(node, ast.Dict):
            out: dict = {}
            for k, v in zip(node.keys, node.values, strict=True):
                if k is None:
                    out.update(self._eval_kwargs(v, env))
                else:
                    out[_const(k)] = ("ast", v)
            return out
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("get_kwargs"):
            return {}
        return {}

    def add(self, flags: list[str], kw: dict) -> None:
        flags = [f for f in flags if isinstance(f, str)]
        if not flags:
            return
        positional = not flags[0].startswith("-")
        spec: dict = {}
        dest = kw.get("dest")
        if isinstance(dest, tuple):
            dest = _const(dest[1])
        if not dest:
            if positional:
                dest = flags[0]
            else:
                longs = [f for f in flags if f.startswith("--")]
                dest = (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")
        spec["dest"] = dest
        if positional:
            spec["positional"] = True
        action = kw.get("action")
        if isinstance(action, tuple):
            text = ast.unparse(action[1])
            action = _const(action[1]) if isinstance(action[1], ast.Constant) else text
        if action is not None:
            a = str(action)
            if "BooleanOptional" in a or a == "bool_optional":
                spec["action"] = "bool_optional"
            elif a in ("store_true", "store_false", "append", "store_const", "count"):
                spec["action"] = a
            elif "StoreBoolean" in a:
                spec["type"] = "bool"
            elif "LoRAParser" in a or "append" in a.lower():
                spec["action"] = "append" if "LoRA" not in a else "store"
                if "LoRA" in a:
                    spec["nargs"] = "+"
        t = kw.get("type")
        if isinstance(t, tuple):
            kind, optional = _type_of(t[1])
            spec["type"] = kind
            if optional:
                spec["optional"] = True
        elif isinstance(t, str):
            spec["type"] = t
        if kw.get("optional") is True:
            spec["optional"] = True
        nargs = kw.get("nargs")
        if isinstance(nargs, tuple):
            nargs = _const(nargs[1])
        if nargs is not None:
            spec["nargs"] = nargs
        choices = kw.get("choices")
        if isinstance(choices, tuple):
            choices = _const(choices[1])
        if isinstance(choices, (list, tuple)) and choices and all(isinstance(c, (str, int)) or c is None for c in choices):
            spec["choices"] = [str(c) for c in choices if c is not None]
        const = kw.get("const")
        if isinstance(const, tuple):
            const = _const(const[1])
        if const is not None and isinstance(const, (bool, int, float, str)):
            spec["const"] = const
        spec.setdefault("type", "str" if spec.get("action") not in ("bool_optional", "store_true", "store_false") else "bool")
        spec["flags"] = sorted(set(flags), key=lambda f: (not f.startswith("--"), f))
        prev = self.args.get(dest)
        if prev is not None and not positional:
            spec["flags"] = sorted(set(prev["flags"]) | set(spec["flags"]), key=lambda f: (not f.startswith("--"), f))
        self.args[dest] = spec

    # -- statement walking
    def run_function(self, fn: ast.FunctionDef, bindings: dict, cls_name: str | None = None) -> None:
        key = f"{cls_name}.{fn.name}" if cls_name else fn.name
        if key in self.visited:
            return
        self.visited.add(key)
        env = dict(bindings)
        self._walk(fn.body, env, cls_name)

    def _walk(self, body: list[ast.stmt], env: dict, cls_name: str | None) -> None:
        for stmt in body:
            self._stmt(stmt, env, cls_name)

    def _stmt(self, stmt: ast.stmt, env: dict, cls_name: str | None) -> None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            value = stmt.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Call):
                fn = ast.unparse(value.func)
                if fn.endswith("get_kwargs") and value.args:
                    arg = value.args[0]
                    name = cls_name if (isinstance(arg, ast.Name) and arg.id == "cls") else ast.unparse(arg).split(".")[-1]
                    env[target.id] = dataclass_kwargs(self.src, name) if name else {}
                    return
                if fn.endswith("_customize_cli_kwargs") and value.args and isinstance(value.args[0], ast.Name):
                    kw = env.get(value.args[0].id, {})
                    if not env.get("__in_customize__"):  # the chain is applied once, base class first
                        self._customize(cls_name, kw)
                    env[target.id] = kw
                    return
            if isinstance(target, ast.Subscript):
                self._mutate(target, stmt.value, env)
            self._calls(stmt, env, cls_name)
            return
        if isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Subscript):
                    d = self._field_dict(t.value, env)
                    if d is not None:
                        d.pop(_const(t.slice), None)
            return
        if isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Call) and ast.unparse(stmt.iter.func).endswith(".items"):
            source = stmt.iter.func.value
            if isinstance(source, ast.Name) and isinstance(env.get(source.id), dict) and isinstance(stmt.target, ast.Tuple):
                kname = stmt.target.elts[0].id if isinstance(stmt.target.elts[0], ast.Name) else None
                vname = stmt.target.elts[1].id if isinstance(stmt.target.elts[1], ast.Name) else None
                for field_name, kw in list(env[source.id].items()):
                    inner = dict(env)
                    inner[kname] = ("fieldname", field_name)
                    inner[vname] = {**kw, "__field__": True}
                    self._walk(stmt.body, inner, cls_name)
                return
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for attr in ("body", "orelse", "finalbody"):
                self._walk(getattr(stmt, attr, []) or [], env, cls_name)
            for h in getattr(stmt, "handlers", []) or []:
                self._walk(h.body, env, cls_name)
            return
        self._calls(stmt, env, cls_name)

    def _field_dict(self, node: ast.Subscript, env: dict) -> dict | None:
        if isinstance(node.value, ast.Name) and isinstance(env.get(node.value.id), dict):
            return env[node.value.id].setdefault(_const(node.slice), {})
        return None

    def _mutate(self, target: ast.Subscript, value: ast.expr, env: dict) -> None:
        # kw["field"]["key"] = value
        if isinstance(target.value, ast.Subscript):
            d = self._field_dict(target.value, env)
            if d is not None:
                key = _const(target.slice)
                if key == "action":
                    d[key] = ("ast", value)
                elif key == "type":
                    d[key] = ("ast", value)
                    if "optional" in ast.unparse(value):
                        d["optional"] = True
                    else:
                        d.pop("optional", None)
                elif key == "flags":
                    d["__flags__"] = [f for f in (_const(value) or []) if isinstance(f, str)]
                else:
                    d[key] = ("ast", value)
        elif isinstance(target.value, ast.Name) and isinstance(env.get(target.value.id), dict):
            # kw["field"] = {...}
            d = self._eval_kwargs(value, env)
            env[target.value.id][_const(target.slice)] = d

    def _customize(self, cls_name: str | None, kw: dict) -> None:
        chain = []
        name = cls_name
        while name:
            cls = self.src.find_class(name)
            if cls is None:
                break
            chain.append(cls)
            bases = [b.id for b in cls.bases if isinstance(b, ast.Name)]
            name = bases[0] if bases else None
        for cls in reversed(chain):
            for item in cls.body:
                if isinstance(item, ast.FunctionDef) and item.name == "_customize_cli_kwargs":
                    params = [a.arg for a in item.args.args if a.arg not in ("cls", "self")]
                    if params:
                        env = {params[0]: kw, "__in_customize__": True}
                        self._walk(item.body, env, cls.name)

    def _calls(self, stmt: ast.stmt, env: dict, cls_name: str | None) -> None:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            if isinstance(fn, ast.Attribute) and fn.attr == "add_argument":
                flags: list = []
                for a in node.args:
                    if isinstance(a, ast.Constant) and isinstance(a.value, str):
                        flags.append(a.value)
                    elif isinstance(a, ast.JoinedStr):
                        flags.append(self._fstring(a, env))
                    elif isinstance(a, ast.Starred):
                        flags += self._starred(a.value, env)
                kw = self._kwargs_from_keywords(node.keywords, env)
                extra = kw.pop("__flags__", None)
                if extra:
                    flags += extra
                kw.pop("__field__", None)
                self.add([f for f in flags if f], kw)
            elif isinstance(fn, ast.Attribute) and fn.attr == "add_cli_args":
                owner = fn.value
                if isinstance(owner, ast.Name):
                    target = cls_name if owner.id == "cls" else owner.id
                    self._run_method(target, "add_cli_args")
                elif isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super" and cls_name:
                    cls = self.src.find_class(cls_name)
                    for b in cls.bases if cls else []:
                        if isinstance(b, ast.Name):
                            self._run_method(b.id, "add_cli_args")
            elif isinstance(fn, ast.Name) and fn.id in self.src.functions and fn.id in ("make_arg_parser",):
                self.run_function(self.src.functions[fn.id], {})

    def _run_method(self, cls_name: str, method: str) -> None:
        name = cls_name
        while name:
            cls = self.src.find_class(name)
            if cls is None:
                return
            for item in cls.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    self.run_function(item, {}, cls_name)
                    return
            bases = [b.id for b in cls.bases if isinstance(b, ast.Name)]
            name = bases[0] if bases else None

    def _fstring(self, node: ast.JoinedStr, env: dict) -> str | None:
        out = ""
        for v in node.values:
            if isinstance(v, ast.Constant):
                out += str(v.value)
            elif isinstance(v, ast.FormattedValue):
                names = [n.id for n in ast.walk(v.value) if isinstance(n, ast.Name)]
                bound = [env.get(n) for n in names if isinstance(env.get(n), tuple) and env.get(n)[0] == "fieldname"]
                if not bound:
                    return None
                field = bound[0][1]
                out += field.replace("_", "-") if "replace" in ast.unparse(v.value) else field
        return out

    def _starred(self, node: ast.expr, env: dict) -> list[str]:
        # `*extra_flags` where extra_flags = value.pop("flags", [])
        for v in env.values():
            if isinstance(v, dict) and v.get("__field__"):
                flags = v.get("__flags__") or []
                return list(flags)
        return []


def scan_version(root: Path) -> tuple[dict[str, dict], dict]:
    src = Source(root)
    col = Collector(src)
    for rel in ENTRY_FILES:
        tree = src.trees.get(src.root / rel)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and (node.name in ("make_arg_parser", "subparser_init") or
                                                      (rel == "scripts.py" and node.name == "main")):
                col.run_function(node, {})
    if not col.args:
        # Before cli_args.py existed: the api_server built its parser in-line.
        tree_path = src.root / "entrypoints/openai/api_server.py"
        src._load(tree_path)
        tree = src.trees.get(tree_path)
        if tree is not None:
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and node.name == "parse_args":
                    col.run_function(node, {})
    # `AsyncEngineArgs.add_cli_args` is always reached through make_arg_parser; make sure of it anyway.
    col._run_method("AsyncEngineArgs", "add_cli_args")
    col._run_method("EngineArgs", "add_cli_args")
    feats = features(src)
    return col.args, feats


def features(src: Source) -> dict:
    text = ""
    for rel in ("utils.py", "utils/__init__.py", "utils/argparse_utils.py"):
        p = src.root / rel
        if p.is_file():
            t = p.read_text(encoding="utf-8")
            if "class FlexibleArgumentParser" in t:
                text = t[t.index("class FlexibleArgumentParser"):]
                break
    feats: dict = {}
    feats["dotted"] = "create_nested_dict" in text
    if "--optimization-level" in text:
        feats["O"] = "optimization_level"
    elif "-O.level" in text:
        feats["O"] = "compilation_level"
    elif "'-O'" in text or '"-O"' in text:
        feats["O"] = "split"
    if "Move <model> to the front" in text:
        feats["serve_model_flag"] = "moved"
    elif "should provide the model as a" in text and "raise ValueError" in text.split("should provide the model")[0][-400:]:
        feats["serve_model_flag"] = "error"
    else:
        feats["serve_model_flag"] = "ok"
    feats["config_file"] = "_pull_args_from_config" in text
    # 0.33.0+: the parser registers EnableDisableAction for BooleanOptionalAction, so a boolean `--enable-x` also
    # answers to `--disable-x` and a `--disable-x` to `--enable-x` (option strings no add_argument call writes)
    if "EnableDisableAction" in text:
        feats["enable_disable"] = True
    return feats


def _entry_body(spec: dict) -> dict | None:
    """A table entry's form of one argument (no version range), or None for what is not an option."""
    if spec.get("positional"):
        return None
    body = {k: spec[k] for k in ("dest", "flags", "type", "action", "nargs", "choices", "const", "optional")
            if k in spec}
    if body.get("action") == "store":
        body.pop("action")
    return body


def _signature(body: dict) -> str:
    return json.dumps(body, sort_keys=True)


def _scan(src_dir: Path, versions: list[str]) -> tuple[dict[str, dict], dict[str, dict]]:
    per_version, feats = {}, {}
    for v in versions:
        args, f = scan_version(src_dir / v)
        f["positional_model"] = "model_tag" in args
        per_version[v] = args
        feats[v] = f
        print(f"{v}: {len(args)} arguments", file=sys.stderr)
    return per_version, feats


def _merge(table: dict, per_version: dict[str, dict], feats: dict[str, dict]) -> dict:
    """``table`` with the releases of ``per_version`` appended (all newer than its newest, oldest first)."""
    versions = list(table["versions"])
    merged = [dict(e, v=list(e["v"])) for e in table["args"]]
    # the entry of each form still open at the table's newest release: only it can be extended
    open_entries = {_signature({k: x for k, x in e.items() if k != "v"}): e for e in merged
                    if versions and e["v"][1] == len(versions) - 1}
    for v in sorted(per_version, key=vkey):
        i = len(versions)
        versions.append(v)
        for _dest, spec in sorted(per_version[v].items()):
            body = _entry_body(spec)
            if body is None:
                continue
            sig = _signature(body)
            entry = open_entries.get(sig)
            if entry is not None and entry["v"][1] == i - 1:
                entry["v"][1] = i
            else:
                entry = {**body, "v": [i, i]}
                open_entries[sig] = entry
                merged.append(entry)
    merged.sort(key=lambda e: (e["dest"], e["v"][0]))
    return {"generated_by": "tools/gen_vllm_args.py", "versions": versions,
            "features": {**table.get("features", {}), **feats}, "args": merged}


def forms_at(table: dict, version: str) -> set[str]:
    """The signatures of the argument forms ``table`` holds for ``version``."""
    i = table["versions"].index(version)
    return {_signature({k: x for k, x in e.items() if k != "v"}) for e in table["args"] if e["v"][0] <= i <= e["v"][1]}


def build(src_dir: Path) -> dict:
    versions = sorted((p.name for p in src_dir.iterdir() if (p / "vllm").is_dir()), key=vkey)
    per_version, feats = _scan(src_dir, versions)
    return _merge({"versions": [], "features": {}, "args": []}, per_version, feats)


def append(table: dict, src_dir: Path) -> dict:
    """``table`` with every release under ``src_dir`` newer than its newest appended (see the module's text)."""
    newest = table["versions"][-1]
    found = sorted((p.name for p in src_dir.iterdir() if (p / "vllm").is_dir()), key=vkey)
    new = [v for v in found if vkey(v) > vkey(newest)]
    if not new:
        raise SystemExit(f"{src_dir}: no release newer than the table's {newest}")
    if newest in found:
        again, _ = _scan(src_dir, [newest])
        check = _merge({"versions": [], "features": {}, "args": []}, again, {})
        if forms_at(check, newest) != forms_at(table, newest):
            raise SystemExit(f"{newest} scanned again differs from the table's entries: the scanner changed since "
                             "the table was built, rebuild it from every release")
    per_version, feats = _scan(src_dir, new)
    return _merge(table, per_version, feats)


def main(argv: list[str]) -> int:
    rest = [a for a in argv[1:] if a != "--append"]
    src_dir = Path(rest[0] if rest else "/tmp/vllmsrc")
    out = Path(rest[1] if len(rest) > 1 else Path(__file__).resolve().parent.parent / "vramlint/data/vllm_args.json")
    if "--append" in argv[1:]:
        table = append(json.loads(out.read_text(encoding="utf-8")), src_dir)
    else:
        table = build(src_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(table, separators=(",", ":"), sort_keys=False)
    out.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(table['args'])} entries, {len(table['versions'])} versions, {len(text)} bytes",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
