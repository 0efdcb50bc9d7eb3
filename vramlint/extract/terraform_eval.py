"""Terraform expressions evaluated as far as the module's own files say, and no further.

A module is one folder: its `variable` blocks (their `default`), its `locals` blocks, and the variable values
Terraform loads by itself from that folder (`terraform.tfvars`, `terraform.tfvars.json`, `*.auto.tfvars`,
`*.auto.tfvars.json`: developer.hashicorp.com/terraform/language/values/variables#variable-definition-precedence,
later files over earlier ones, over the defaults). `path.module` and `path.root` are the folder. A value given
any other way (`-var`, `TF_VAR_x`, a `-var-file`, a caller's module arguments), a resource's or data source's
attribute, `each` and `count` are unknown: a template marker stands in for them (the extractors read it as
unknown), and they are said once per file with the change that makes them known.

Functions: the few a deployment's values are written with (yamlencode, jsonencode, yamldecode, jsondecode, file,
templatefile, merge, concat, lookup, coalesce, try, join, format with %s/%d/%v, tostring, tonumber, tolist, toset,
tomap, lower, upper, trimspace, chomp, replace of plain text); any other call is unknown.

Bounds: MAX_STEPS expressions evaluated a file (all its resources together), MAX_REF_DEPTH references followed within each other (a cycle is
unknown), MAX_TEXT_CHARS characters a value (a call's value, bounded before it is made) and MAX_ITEMS items a concat() / merge(), MAX_MODULE_FILES files and MAX_MODULE_CHARS characters read of a
module folder; `file()` and `templatefile()` read only files inside the scanned tree (`vramlint.fsread`).
"""

from __future__ import annotations

import base64
import json
import os
import re
from typing import Any

from vramlint.extract import hcl
from vramlint.yamlload import TEMPLATE_CLOSE, TEMPLATE_OPEN, LineCol, YamlMap, YamlSeq, has_template_marker

MAX_STEPS = 100_000
MAX_REF_DEPTH = 32
MAX_TEXT_CHARS = 2_000_000
MAX_MODULE_FILES = 200
MAX_MODULE_CHARS = 10_000_000
MAX_READ_FILES = 64  # files a file's expressions read with file() / templatefile()
MAX_ITEMS = 100_000  # items of a list or object a call (concat, merge) makes


class Placed(str):
    """Text whose lines sit in a file: its first line at 0-based ``line`` (column ``col``), each later line at
    column ``indent`` (a heredoc's body, with `<<-`'s indentation removed; a file read with file())."""

    __slots__ = ("file", "line", "col", "indent")

    def __new__(cls, text: str, file: str | None, line: int, col: int, indent: int) -> Placed:
        obj = super().__new__(cls, text)
        obj.file, obj.line, obj.col, obj.indent = file, line, col, indent
        return obj


def marker(width: int) -> str:
    """What stands in for an unknown value: the template marker, as wide as what it replaces."""
    return TEMPLATE_OPEN + "_" * max(0, width - 2) + TEMPLATE_CLOSE


class Unknown(str):
    __slots__ = ()


def unknown(width: int) -> Unknown:
    return Unknown(marker(width))


def is_unknown(value: Any) -> bool:
    return isinstance(value, Unknown) or has_template_marker(value)


class Module:
    """One folder's variables, locals and auto-loaded variable values."""

    def __init__(self, folder: str, display_folder: str) -> None:
        self.folder = folder
        self.display_folder = display_folder
        self.variables: dict[str, tuple[hcl.Attribute | None, str]] = {}  # name -> (its default, file)
        self.locals: dict[str, tuple[hcl.Expr, str]] = {}
        self.values: dict[str, tuple[Any, str]] = {}  # auto-loaded tfvars: name -> (Expr or JSON value, file)
        self.var_files: list[tuple[str, set[str]]] = []  # other *.tfvars of the folder: (file, names it sets)
        self.unread: list[str] = []  # files of the folder not read (limits, syntax): their values are unknown
        self.modules: list[hcl.Block] = []
        self.module_files: list[tuple[str, list[hcl.Block]]] = []  # (file, its module blocks)
        self.callers: list[tuple[hcl.Block, Module, str]] | None = None  # (`module` block, its module, file)
        # the Kubernetes objects its resources create, by (type, name): their metadata block (a pod's ConfigMap,
        # Secret or claim is named `kubernetes_config_map.x.metadata[0].name`)
        self.resources: dict[tuple[str, str], tuple[hcl.Block, str]] = {}
        # `data "template_file" NAME` blocks (the hashicorp/template provider): NAME -> (block, file); its `rendered`
        # is its `template` text rendered with its `vars`, as templatefile() renders a file
        self.template_files: dict[str, tuple[hcl.Block, str]] = {}


def _display(path: str) -> str:
    from vramlint.discover import display_path

    return display_path(path)


# modules read in this process, by folder and what its files are (name, size, mtime): each .tf file of a folder that
# names vLLM reads the same module, which is parsed once
_MODULES: dict[tuple, Module] = {}
_MODULES_KEPT = 32


def load_module(folder: str, own: tuple[str, list[Any]] | None = None) -> Module:
    """The module in ``folder``; ``own``: the file being read (its path and parsed body), not parsed again."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return Module(folder, _display(folder))
    key_parts = []
    for name in names:
        if name.endswith((".tf", ".tf.json", ".tfvars", ".tfvars.json")) and len(key_parts) <= MAX_MODULE_FILES:
            try:
                st = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            key_parts.append((name, st.st_size, st.st_mtime_ns))
    key = (folder, _display(folder), tuple(key_parts))
    module = _MODULES.get(key)
    if module is None:
        module = _load_module(folder, names, own)
        if len(_MODULES) >= _MODULES_KEPT:
            _MODULES.clear()
        _MODULES[key] = module
    return module


def _load_module(folder: str, names: list[str], own: tuple[str, list[Any]] | None) -> Module:
    from vramlint.fsread import Refusal, read_text

    module = Module(folder, _display(folder))
    tf = [n for n in names if n.endswith((".tf", ".tf.json"))]
    auto = [n for n in names if n in ("terraform.tfvars", "terraform.tfvars.json")] + \
        [n for n in names if n.endswith((".auto.tfvars", ".auto.tfvars.json"))]
    others = [n for n in names if n.endswith((".tfvars", ".tfvars.json")) and n not in auto]
    budget = MAX_MODULE_CHARS
    read = 0
    for group, names_of in (("tf", tf), ("auto", auto), ("other", others)):
        for name in names_of:
            path = os.path.join(folder, name)
            shown = _display(path)
            if own is not None and os.path.abspath(path) == os.path.abspath(own[0]):
                body: list[Any] | None = own[1]
            else:
                read += 1
                if read > MAX_MODULE_FILES:
                    module.unread.append(f"{shown} (past vramlint's limit of {MAX_MODULE_FILES} files a module)")
                    continue
                text = read_text(path)
                if isinstance(text, Refusal):
                    module.unread.append(f"{shown} ({text.reason})")
                    continue
                budget -= len(text)
                if budget < 0:
                    module.unread.append(f"{shown} (past vramlint's limit of {MAX_MODULE_CHARS:,} characters a "
                                         "module)")
                    continue
                if name.endswith(".json") and group != "tf":
                    _json_values(module, text, shown, group)
                    continue
                try:
                    body = hcl.parse_json(text) if name.endswith(".tf.json") else hcl.parse(text)
                except hcl.HclError as exc:
                    module.unread.append(f"{shown} (line {exc.line + 1}: {exc})")
                    continue
            if group == "tf":
                for item in body:
                    if not isinstance(item, hcl.Block):
                        continue
                    if item.type == "variable" and item.labels:
                        module.variables[item.labels[0]] = (item.attr("default"), shown)
                    elif item.type == "locals":
                        for attr in item.body:
                            if isinstance(attr, hcl.Attribute):
                                module.locals[attr.name] = (attr.expr, shown)
                    elif item.type == "module":
                        module.modules.append(item)
                        if not module.module_files or module.module_files[-1][0] != shown:
                            module.module_files.append((shown, []))
                        module.module_files[-1][1].append(item)
                    elif item.type == "resource" and len(item.labels) >= 2 and item.blocks("metadata"):
                        module.resources[(item.labels[0], item.labels[1])] = (item.blocks("metadata")[0], shown)
                    elif item.type == "data" and len(item.labels) >= 2 and item.labels[0] == "template_file":
                        module.template_files[item.labels[1]] = (item, shown)
            elif group == "auto":
                for attr in body:
                    if isinstance(attr, hcl.Attribute):
                        module.values[attr.name] = (attr.expr, shown)
            else:
                module.var_files.append((shown, {a.name for a in body if isinstance(a, hcl.Attribute)}))
    return module


MAX_CALLER_LEVELS = 4  # folders above a module looked at for the module blocks that call it


def module_callers(module: Module) -> list[tuple[hcl.Block, Module, str]]:
    """The `module` blocks of the folders above ``module`` (up to MAX_CALLER_LEVELS, inside the scanned tree) whose
    local `source` is its folder, with their module and file: the arguments they give are its variables' values."""
    if module.callers is not None:
        return module.callers
    from vramlint.fsread import outside_reason

    module.callers = []
    folder = module.folder
    for _level in range(MAX_CALLER_LEVELS):
        parent = os.path.dirname(folder)
        if parent == folder or outside_reason(parent) is not None:
            break
        folder = parent
        above = load_module(folder)
        for block in above.modules:
            source = block.attr("source")
            text = source.expr.parts[0] if source is not None and isinstance(source.expr, hcl.Template) and \
                len(source.expr.parts) == 1 and isinstance(source.expr.parts[0], str) else None
            if text and text.startswith(("./", "../")) and \
                    os.path.normpath(os.path.join(folder, text)) == os.path.normpath(module.folder):
                file = next((f for f, blocks in above.module_files if block in blocks), above.display_folder)
                module.callers.append((block, above, file))
    return module.callers


def _json_values(module: Module, text: str, shown: str, group: str) -> None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        module.unread.append(f"{shown} (not valid JSON)")
        return
    if not isinstance(data, dict):
        return
    if group == "auto":
        for name, value in data.items():
            module.values[str(name)] = (_JsonValue(value), shown)
    elif group == "other":
        module.var_files.append((shown, set(map(str, data))))


class _JsonValue:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Context:
    """One file's evaluation: where its values land, and what stayed unknown or came from elsewhere."""

    def __init__(self, module: Module, display: str, budget: list[int] | None = None,
                 refused: list[tuple[str, int, int, str, str]] | None = None) -> None:
        self.module = module
        self.display = display
        self.budget = budget if budget is not None else [MAX_STEPS]  # shared by a file's resources
        # what Terraform or the reader refuses, said on its line whether or not a server takes the value (shared by
        # a file's resources): file() / templatefile() of a file not read, a cycle of locals, a variable default
        # that is not a constant; (file, 0-based line, column, message, level)
        self.refused = refused if refused is not None else []
        self.scope: dict | None = None  # `each` / `count` of the resource instance being read
        self.unknown: dict[str, str] = {}  # reference -> why it is unknown
        self.taken: dict[str, str] = {}  # var.x / local.x -> where its value was taken from
        self.resolving: list[str] = []
        self.read_files: list[str] = []  # files read with file() / templatefile()
        self.over_budget = False
        self._in_template: tuple[int, int, str] | None = None  # the templatefile() call being rendered: its place
        self.unknown_lines: dict[str, set[int]] = {}  # reference -> 0-based lines of this file it was used on
        self.taken_lines: dict[str, set[int]] = {}
        self._line = 0

    def _mark(self, name: str, why: str) -> None:
        self.unknown.setdefault(name, why)
        lines = self.unknown_lines.setdefault(name, set())
        if len(lines) < 64:
            lines.add(self._line)

    # --- positions
    def _pos(self, expr: hcl.Expr, here: tuple[int, int] | None) -> tuple[int, int]:
        return here if here is not None else (expr.line, expr.col)

    def evaluate(self, expr: hcl.Expr, here: tuple[int, int] | None = None, scope: dict | None = None) -> Any:
        """``expr``'s value: scalars, YamlMap / YamlSeq (with positions), `Placed` text, or `Unknown`. ``here``:
        the position every value takes (the place a variable or local is used, when its value is written in
        another file); ``scope``: names a templatefile() gives its template."""
        if scope is None:
            scope = self.scope
        self.budget[0] -= 1
        self._line = here[0] if here is not None else expr.line
        if self.budget[0] < 0:
            self.over_budget = True
            return unknown(2)
        if isinstance(expr, hcl.Literal):
            return expr.value
        if isinstance(expr, hcl.Template):
            return self._template(expr, here, scope)
        if isinstance(expr, hcl.TupleExpr):
            seq = YamlSeq(self.evaluate(item, here, scope) for item in expr.items)
            line, col = self._pos(expr, here)
            seq.lc = LineCol(line, col)
            seq.lc.data = {i: list(self._pos(item, here)) for i, item in enumerate(expr.items)}
            return seq
        if isinstance(expr, hcl.ObjectExpr):
            return self._object(expr, here, scope)
        if isinstance(expr, hcl.Ref):
            return self._ref(expr, here, scope)
        if isinstance(expr, hcl.Call):
            return self._call(expr, here, scope)
        if isinstance(expr, hcl.Opaque):
            if expr.compare is not None:
                op, left, right = expr.compare
                a, b = self.evaluate(left, here, scope), self.evaluate(right, here, scope)
                if not (is_unknown(a) or is_unknown(b) or isinstance(a, (dict, list)) or isinstance(b, (dict, list))):
                    # Terraform compares type and value: "1" == 1 is false, as in Python (a bool is no number)
                    same = a == b and (isinstance(a, bool) == isinstance(b, bool))
                    return same if op == "==" else not same
            if expr.cond is not None:
                cond = self.evaluate(expr.cond[0], here, scope)
                if isinstance(cond, bool):
                    return self.evaluate(expr.cond[1] if cond else expr.cond[2], here, scope)
            for ref in expr.refs:
                self._said_unknown(ref, scope)
            if not expr.refs:
                self._mark(_short(expr.text), "an expression vramlint does not evaluate")
            return unknown(len(expr.text.split("\n", 1)[0]))
        return unknown(2)

    def _said_unknown(self, ref: hcl.Ref, scope: dict | None) -> None:
        if scope is not None and ref.root in scope:
            return
        value = self._ref(ref, None, scope, quiet=True)
        if is_unknown(value) and ref.root not in ("var", "local"):
            self._mark(_ref_name(ref), _why(ref.root))

    def _object(self, expr: hcl.ObjectExpr, here: tuple[int, int] | None, scope: dict | None) -> YamlMap:
        out = YamlMap()
        line, col = self._pos(expr, here)
        out.lc = LineCol(line, col)
        out.lc.data = {}
        for item in expr.items:
            if item.bare is not None:
                key: Any = item.bare
            else:
                key = self.evaluate(item.key, here, scope)
                if isinstance(key, (YamlMap, YamlSeq)) or key is None:
                    key = unknown(2)
                key = str(key)
            out[key] = self.evaluate(item.value, here, scope)
            kl, kc = self._pos(item.key, here)
            vl, vc = self._pos(item.value, here)
            out.lc.data[key] = [kl, kc, vl, vc]
        return out

    def _template(self, expr: hcl.Template, here: tuple[int, int] | None, scope: dict | None) -> Any:
        # a string of one interpolation is that value itself (a number, a list, an object), as in Terraform
        if len(expr.parts) == 1 and isinstance(expr.parts[0], hcl.Interp) and not expr.heredoc:
            return self.evaluate(expr.parts[0].expr, here, scope)
        indent = _flush_indent(expr.parts) if expr.flush else 0
        out: list[str] = []
        size = 0
        at_start = True
        for part in expr.parts:
            if isinstance(part, str):
                text = _strip_indent(part, indent, at_start) if indent else part
                at_start = text.endswith("\n") or (not text and at_start)
                out.append(text)
                size += len(text)
            elif isinstance(part, hcl.Interp):
                value = self.evaluate(part.expr, here, scope)
                text = _as_text(value, part.stop - part.start)
                out.append(text)
                size += len(text)
                at_start = False
            else:
                # left out: what its branches hold is read as written (a directive alone on a line leaves it blank,
                # as `~` would), and said
                self._mark(f"%{{{_short(part.text)}}}", "a template directive vramlint does not "
                           "evaluate (the text of all its branches is read as written)")
                at_start = False
            if size > MAX_TEXT_CHARS:
                self.over_budget = True
                return unknown(2)
        text = "".join(out)
        if expr.flat:  # a JSON string: every line of it at the string's place (indent -1 says so)
            at = here if here is not None else (expr.line, expr.col)
            return Placed(text, None, at[0], at[1], -1)
        if here is not None:
            return Placed(text, None, here[0], here[1], here[1])
        if expr.heredoc:
            return Placed(text, None, expr.body_line, indent, indent)
        return Placed(text, None, expr.line, expr.col + 1, expr.col + 1)

    # --- references
    def _ref(self, ref: hcl.Ref, here: tuple[int, int] | None, scope: dict | None, quiet: bool = False) -> Any:
        width = len(ref.text) or 2
        at = here if here is not None else (ref.line, ref.col)
        self._line = at[0]
        if scope is not None and ref.root in scope:
            return self._steps(scope[ref.root], ref.steps, width, here, scope)
        if ref.root in ("var", "local") and ref.steps and isinstance(ref.steps[0], str):
            name = f"{ref.root}.{ref.steps[0]}"
            if name in self.resolving or len(self.resolving) >= MAX_REF_DEPTH:
                if not quiet:
                    self._mark(name, "refers to itself, or through more than "
                                            f"{MAX_REF_DEPTH} other values")
                if name in self.resolving and ref.root == "local" and ref.steps[0] in self.module.locals:
                    self._cycle(name)
                return unknown(width)
            self.resolving.append(name)
            try:
                value = self._named(ref.root, ref.steps[0], at, quiet)
            finally:
                self.resolving.pop()
            used = self.taken_lines.setdefault(name, set())
            if len(used) < 64:
                used.add(at[0])
            return self._steps(value, ref.steps[1:], width, here, scope)
        if ref.root == "data" and len(ref.steps) >= 3 and ref.steps[0] == "template_file" and \
                isinstance(ref.steps[1], str) and ref.steps[1] in self.module.template_files:
            value = self._template_file(ref, width)
            if value is not None:
                return value
        if len(ref.steps) >= 3 and isinstance(ref.steps[0], str) and (ref.root, ref.steps[0]) in self.module.resources:
            value = self._metadata(ref, at)
            if value is not None:
                return value
        if ref.root == "path" and ref.steps and ref.steps[0] in ("module", "root", "cwd"):
            return Placed(self.module.display_folder, None, at[0], at[1], at[1])
        if not quiet and ref.root not in ("var", "local"):
            self._mark(_ref_name(ref), _why(ref.root))
        return unknown(width)

    def _template_file(self, ref: hcl.Ref, width: int) -> Any:
        """`data.template_file.NAME[.INDEX].rendered`: the block's `template` text rendered with its `vars` (the
        hashicorp/template provider renders Terraform's template syntax with those names alone, as templatefile()
        does; audit24: a production-stack release whose values are `data.template_file.vllm_values[0].rendered`
        of a `file()` of the module's values template). None when the reference is not to `rendered`."""
        rest = list(ref.steps[2:])
        if len(rest) == 2 and str(getattr(rest[0], "value", rest[0])).isdigit():
            rest = rest[1:]  # one instance of its count: each is rendered from the same arguments
        if rest != ["rendered"]:
            return None
        name = f"data.template_file.{ref.steps[1]}"
        block, _file = self.module.template_files[ref.steps[1]]
        template = block.attr("template")
        if template is None or name in self.resolving or len(self.resolving) >= MAX_REF_DEPTH:
            return None
        self.resolving.append(name)
        try:
            text = self.evaluate(template.expr)
            names = self.evaluate(block.attr("vars").expr) if block.attr("vars") is not None else YamlMap()
        finally:
            self.resolving.pop()
        if not isinstance(text, str) or is_unknown(text) or not isinstance(names, dict):
            self._mark(name, "its template or vars are not known")
            return unknown(width)
        try:
            body = hcl.parse_template(str(text))
        except hcl.HclError as exc:
            self._mark(name, f"its template, line {exc.line + 1}: {exc}")
            return unknown(width)
        rendered = self._template(body, None, dict(names))
        if is_unknown(rendered):
            # past MAX_TEXT_CHARS (10,000 `${x}` of a 100,000-character var: 1 GB), cut as it grows; said on the
            # block's template, which was silent but for the release's "values not known" (hostile26)
            said = (_file, template.line, template.col, (
                f"{name}: its rendered text would be past vramlint's limit of {MAX_TEXT_CHARS:,} characters a "
                "value: not rendered, so what it sets is unknown"), "note")
            if said not in self.refused:
                self.refused.append(said)
            return unknown(width)
        return Placed(str(rendered), getattr(text, "file", None), getattr(text, "line", 0), 0, 0)

    def _cycle(self, name: str) -> None:
        """Locals that refer to each other: Terraform's graph walk refuses the configuration ("Cycle: ..."), said on
        the first of them as written."""
        chain = self.resolving[self.resolving.index(name):]
        names = [n for n in chain if n.startswith("local.")]
        expr, file = self.module.locals[name[len("local."):]]
        self.refused.append((file, expr.line, expr.col, (
            f"{' -> '.join([*chain, name])}: these locals refer to each other, which Terraform refuses (`terraform "
            f"plan` stops with \"Cycle: {', '.join(names)}\"), so nothing of this module is deployed as written"),
            "warning"))

    def _metadata(self, ref: hcl.Ref, at: tuple[int, int]) -> Any:
        """`TYPE.NAME.metadata[0].name` (or `.namespace`, `.metadata.0.name`) of a Kubernetes resource of the
        module: what its metadata block says, when it says it literally or through known values."""
        steps = ref.steps[1:]
        if steps and steps[0] == "metadata":
            rest = steps[1:]
            if rest and isinstance(rest[0], (hcl.Literal, str)) and str(getattr(rest[0], "value", rest[0])) == "0":
                rest = rest[1:]
            if len(rest) == 1 and rest[0] in ("name", "namespace"):
                block, _file = self.module.resources[(ref.root, ref.steps[0])]
                attr = block.attr(rest[0])
                if attr is not None and f"{ref.root}.{ref.steps[0]}" not in self.resolving:
                    self.resolving.append(f"{ref.root}.{ref.steps[0]}")
                    try:
                        value = self.evaluate(attr.expr, at)
                    finally:
                        self.resolving.pop()
                    if isinstance(value, str) and not is_unknown(value):
                        return value
        return None

    def _named(self, root: str, name: str, at: tuple[int, int], quiet: bool) -> Any:
        module = self.module
        if root == "local":
            found = module.locals.get(name)
            if found is None:
                if not quiet:
                    self._mark(f"local.{name}", f"no `locals` block in {module.display_folder} "
                                            "defines it")
                return unknown(len(name) + 6)
            expr, file = found
            value = self.evaluate(expr, at if file != self.display else None)
            if not is_unknown(value) and file != self.display:  # (one in this file is read where it is)
                self.taken.setdefault(f"local.{name}", f"locals in {file}")
            return value
        callers = module_callers(module)
        if len(callers) == 1 and callers[0][0].attr(name) is not None:
            block, caller, file = callers[0]
            sub = Context(caller, file, self.budget)  # (its refusals are on the caller's lines, not this file's)
            sub.resolving = self.resolving
            value = sub.evaluate(block.attr(name).expr, at)
            for key, why in sub.unknown.items():
                self._mark(key, f"{why} (in {file}, whose module {block.labels[0] if block.labels else '?'} "
                           "calls this one)")
            self.taken.update((k, v) for k, v in sub.taken.items() if k not in self.taken)
            if not is_unknown(value):
                self.taken.setdefault(f"var.{name}", f"module {block.labels[0] if block.labels else '?'} in {file}, "
                                      "which calls this module")
            return value
        if len(callers) > 1 and not quiet and any(c[0].attr(name) is not None for c in callers):
            self.taken.setdefault(f"var.{name}", f"this module's own values ({len(callers)} modules call it, "
                                  f"each with its own: {', '.join(c[2] for c in callers[:3])})")
        if name in module.values:
            expr, file = module.values[name]
            value = expr.value if isinstance(expr, _JsonValue) else self.evaluate(expr, at)
            if isinstance(expr, _JsonValue):
                value = _placed_json(value, at)
            self.taken.setdefault(f"var.{name}", f"{file} (which Terraform loads by itself)")
            return value
        declared = module.variables.get(name)
        if declared is None or declared[0] is None:
            if not quiet:
                setters = [f for f, names in module.var_files if name in names]
                where = f"; set in {', '.join(setters[:3])}, which `terraform apply -var-file` would have to " \
                    "name" if setters else ""
                why = f"variable {name} is not declared in {module.display_folder}" if declared is None else \
                    f"variable {name} has no default (set with -var, TF_VAR_{name} or a .tfvars file{where})"
                self._mark(f"var.{name}", why)
            return unknown(len(name) + 4)
        attr, file = declared
        held = _first_reference(attr.expr)
        if held is not None:
            # Terraform takes a default only as a constant (configs.decodeVariableBlock): "Variables not allowed" /
            # "Function calls not allowed", and the module is not loaded
            what = ("Function calls not allowed", "a function call") if isinstance(held, hcl.Call) else \
                ("Variables not allowed", "a reference")
            self._mark(f"var.{name}", f"its default holds {what[1]}, which Terraform refuses")
            self.refused.append((file, held.line, held.col, (
                f"variable {name}: its default holds {what[1]} ({_short(getattr(held, 'text', '') or '?')}), which "
                f"Terraform refuses (\"{what[0]}\": a default must be a constant), so this module is not loaded"),
                "warning"))
            return unknown(len(name) + 4)
        value = self.evaluate(attr.expr, at if file != self.display else None)
        setters = [f for f, names in module.var_files if name in names]
        also = f"; {', '.join(setters[:3])} sets another when given with -var-file" if setters else ""
        self.taken.setdefault(f"var.{name}", f"its default in {file}{also}")
        return value

    def _steps(self, value: Any, steps: list[Any], width: int, here: tuple[int, int] | None,
               scope: dict | None) -> Any:
        for step in steps:
            if is_unknown(value):
                return unknown(width)
            key = step if isinstance(step, str) else self.evaluate(step, here, scope)
            if isinstance(value, dict):
                if isinstance(key, (int, float)) and not isinstance(key, bool):
                    key = str(key)
                if not isinstance(key, str) or key not in value:
                    return unknown(width)
                value = value[key]
            elif isinstance(value, list) and isinstance(key, int) and not isinstance(key, bool) and \
                    0 <= key < len(value):
                value = value[key]
            else:
                return unknown(width)
        return value

    # --- functions
    def _call(self, call: hcl.Call, here: tuple[int, int] | None, scope: dict | None) -> Any:
        name = call.name.rsplit("::", 1)[-1]
        width = len(call.text.split("\n", 1)[0])
        if name in ("yamlencode", "jsonencode", "tolist", "toset", "tomap") and len(call.args) == 1:
            # the value as written: read as the object it encodes (its positions stay those of its keys)
            return self.evaluate(call.args[0], here, scope)
        if name in ("yamldecode", "jsondecode") and len(call.args) == 1:
            return self.evaluate(call.args[0], here, scope)  # text read as YAML by the caller
        if name in ("file", "templatefile") and call.args:
            return self._file(call, name, here, scope)
        if name == "try":
            for arg in call.args:
                value = self.evaluate(arg, here, scope)
                if not is_unknown(value):
                    return value
            return unknown(width)
        args = [self.evaluate(a, here, scope) for a in call.args]
        if any(is_unknown(a) for a in args if not isinstance(a, (dict, list))):
            return unknown(width)
        size = _result_size(name, args)
        if size > (MAX_ITEMS if name in ("concat", "merge") else MAX_TEXT_CHARS):
            # a call that makes its value longer than its arguments (base64encode, replace, format, join,
            # concat), nested or chained: bounded before it is made, said on the call
            self.over_budget = True
            line, col = self._pos(call, here)
            unit = "items" if name in ("concat", "merge") else "characters"
            limit = MAX_ITEMS if name in ("concat", "merge") else MAX_TEXT_CHARS
            said = (self.display, line, col, (
                f"{_short(call.text)}: its value would be about {size:,} {unit}, past vramlint's limit of "
                f"{limit:,} {unit} a value: not evaluated, so what it sets is unknown"), "note")
            if said not in self.refused:
                self.refused.append(said)
            return unknown(width)
        try:
            value = _pure(name, args)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError):
            if name == "base64decode":
                # Terraform's base64decode fails on text that is not Base64 or whose bytes are not UTF-8, and
                # `terraform plan` stops there: said on the call
                self._refuse(call, here, f"{_short(call.text)}: Terraform refuses it (base64decode takes Base64 text "
                             "whose bytes are UTF-8; `terraform plan` stops with \"Error in function call\"), so what "
                             "it sets is unknown")
            value = None
            self._mark(_short(call.text), "a call vramlint could not evaluate with these values")
            return unknown(width)
        if value is _NOT_KNOWN:
            self._mark(f"{call.name}()", "a function vramlint does not evaluate")
            return unknown(width)
        if isinstance(value, str) and not isinstance(value, Placed):
            line, col = here if here is not None else (call.line, call.col)
            return Placed(value, None, line, col, col)
        return value

    def _refuse(self, call: hcl.Call, here: tuple[int, int] | None, message: str, level: str = "warning") -> None:
        """What Terraform refuses, said once on the call's line (on the templatefile() call of this file when the
        call is in a template it renders)."""
        if self._in_template is not None:
            line, col, shown = self._in_template
            message = f"in {shown} (line {call.line + 1}): {message}"
        else:
            line, col = self._pos(call, here)
        said = (self.display, line, col, message, level)
        if said not in self.refused:
            self.refused.append(said)

    def _file(self, call: hcl.Call, name: str, here: tuple[int, int] | None, scope: dict | None) -> Any:
        from vramlint.fsread import Refusal, read_text

        width = len(call.text.split("\n", 1)[0])
        if name == "templatefile" and self._in_template is not None:
            # Terraform stubs templatefile out inside a template it renders (funcs.MakeTemplateFileFunc: "cannot
            # recursively call templatefile from inside templatefile call"): the outer call fails
            self._refuse(call, here, f"{_short(call.text)}: Terraform refuses templatefile() inside a template "
                         "(\"cannot recursively call templatefile from inside templatefile call\"), so what the "
                         "outer templatefile() gives is unknown")
            return unknown(width)
        path = self.evaluate(call.args[0], here, scope)
        if not isinstance(path, str) or is_unknown(path):
            self._mark(_short(call.text), "the path it reads is not known")
            return unknown(width)
        if len(self.read_files) >= MAX_READ_FILES:
            self._mark(_short(call.text), f"past vramlint's limit of {MAX_READ_FILES} files read a file")
            return unknown(width)
        # Terraform resolves a relative path against the working directory, which is the root module's folder:
        # path.module in it (already the folder when written `${path.module}/x`)
        full = path if os.path.isabs(path) else os.path.join(self.module.folder, os.path.relpath(
            path, self.module.display_folder)) if _under_display(path, self.module.display_folder) else \
            os.path.join(self.module.folder, path)
        text = read_text(full)
        shown = _display(full)
        if isinstance(text, Refusal):
            self._mark(_short(call.text), f"{shown} is {text.reason}: not read")
            line, col = self._pos(call, here)
            what = "not in the repository" if text.missing else text.reason
            self.refused.append((self.display, line, col, f"{name}() of {shown}: the file is {what}: not read, so what it gives "
                                 "is unknown", "note" if text.missing else "warning"))
            return unknown(width)
        self.read_files.append(shown)
        if name == "templatefile":
            names = self.evaluate(call.args[1], here, scope) if len(call.args) > 1 else YamlMap()
            if not isinstance(names, dict):
                self._mark(_short(call.text), "the values it gives its template are not known")
                return unknown(width)
            try:
                body = hcl.parse_template(text)
            except hcl.HclError as exc:
                self._mark(_short(call.text), f"{shown} line {exc.line + 1}: {exc}")
                return unknown(width)
            line, col = self._pos(call, here)
            self._in_template = (line, col, shown)
            try:
                rendered = self._template(body, None, dict(names))
            finally:
                self._in_template = None
            return Placed(str(rendered), shown, 0, 0, 0)
        return Placed(text, shown, 0, 0, 0)


_NOT_KNOWN = object()


def _result_size(name: str, args: list[Any]) -> int:
    """An upper bound of the length of what ``name`` makes of ``args`` (characters; items for concat and merge),
    worked out without making it; 0 for a function whose value is no longer than its arguments."""
    texts = [a for a in args if isinstance(a, str)]
    if name == "base64encode":
        return sum(len(t) for t in texts) * 4 // 3 + 4  # (of the text's UTF-8 bytes; ASCII here)
    if name == "replace" and len(args) == 3 and all(isinstance(a, str) for a in args):
        text, old, new = args
        return len(text) + (text.count(old) * max(len(new) - len(old), 0) if old else 0)
    if name == "join" and len(args) == 2 and isinstance(args[1], list):
        items = args[1]
        return sum(len(i) if isinstance(i, str) else 32 for i in items) + len(str(args[0])) * len(items)
    if name in ("concat", "merge"):
        return sum(len(a) for a in args if isinstance(a, (list, dict)))
    if name == "format":
        return sum(len(t) for t in texts) + 32 * len(args)
    return 0  # (the other functions make nothing longer than their arguments, which are bounded already)


def _first_reference(expr: Any, depth: int = 0) -> hcl.Ref | hcl.Call | None:
    """The first reference or function call in ``expr`` (a variable default must have neither), or None."""
    if depth > hcl.MAX_DEPTH or expr is None:
        return None
    if isinstance(expr, (hcl.Ref, hcl.Call)):
        return expr
    if isinstance(expr, hcl.Opaque):
        return expr.refs[0] if expr.refs else None
    if isinstance(expr, hcl.Template):
        items = [p.expr for p in expr.parts if isinstance(p, hcl.Interp)]
    elif isinstance(expr, hcl.TupleExpr):
        items = expr.items
    elif isinstance(expr, hcl.ObjectExpr):
        items = [v for item in expr.items for v in ((item.value,) if item.bare is not None else (item.key, item.value))]
    else:
        return None
    for item in items:
        found = _first_reference(item, depth + 1)
        if found is not None:
            return found
    return None


def _pure(name: str, args: list[Any]) -> Any:
    """The functions whose value follows from their arguments alone."""
    if name == "merge":
        out = YamlMap()
        out.lc = LineCol(0, 0)
        out.lc.data = {}
        for arg in args:
            if not isinstance(arg, dict):
                raise TypeError("merge of a non-object")
            for k, v in arg.items():
                out[k] = v
                entry = getattr(getattr(arg, "lc", None), "data", None) or {}
                if k in entry:
                    out.lc.data[k] = entry[k]
            if getattr(arg, "lc", None) is not None and out.lc.line == 0:
                out.lc.line, out.lc.col = arg.lc.line, arg.lc.col
        return out
    if name == "concat":
        out_seq = YamlSeq()
        out_seq.lc = LineCol(0, 0)
        out_seq.lc.data = {}
        for arg in args:
            for i, item in enumerate(arg):
                entry = getattr(getattr(arg, "lc", None), "data", None) or {}
                if i in entry:
                    out_seq.lc.data[len(out_seq)] = entry[i]
                out_seq.append(item)
        return out_seq
    if name == "lookup" and len(args) in (2, 3):
        return args[0][args[1]] if args[1] in args[0] or len(args) == 2 else args[2]
    if name == "coalesce":
        for a in args:
            if a is not None and a != "":
                return a
        # Terraform stops on it ("no non-null, non-empty-string arguments", go-cty's CoalesceFunc) unless a -var
        # gives one at plan time: with the module's values alone that is not known, so unknown (the caller)
        raise ValueError("coalesce: no non-null, non-empty-string arguments")
    if name == "join" and len(args) == 2:
        return str(args[0]).join(_as_text(a, 2) for a in args[1])
    if name == "format" and args:
        return _format(str(args[0]), args[1:])
    if name == "tostring" and len(args) == 1:
        return _as_text(args[0], 2)
    if name == "tonumber" and len(args) == 1:
        text = str(args[0])
        return int(text) if re.fullmatch(r"-?[0-9]+", text) else float(text)
    if name in ("lower", "upper", "trimspace", "chomp") and len(args) == 1:
        text = str(args[0])
        return {"lower": text.lower, "upper": text.upper, "trimspace": text.strip,
                "chomp": lambda: text.rstrip("\r\n")}[name]()
    if name == "base64encode" and len(args) == 1 and isinstance(args[0], str):
        # Terraform encodes the string's UTF-8 bytes (funcs/encoding.go Base64EncodeFunc)
        return base64.b64encode(args[0].encode("utf-8")).decode("ascii")
    if name == "base64decode" and len(args) == 1 and isinstance(args[0], str):
        # Terraform refuses text that is not base64 or whose bytes are not UTF-8: ValueError, unknown here
        return base64.b64decode(args[0], validate=True).decode("utf-8")
    if name == "replace" and len(args) == 3 and not str(args[1]).startswith("/"):
        return str(args[0]).replace(str(args[1]), str(args[2]))
    return _NOT_KNOWN


def _format(spec: str, args: list[Any]) -> str:
    it = iter(args)

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "%%":
            return "%"
        for value in it:
            return _as_text(value, 2)
        # Terraform refuses a verb without its argument (go-cty's format: "not enough arguments"): the caller's
        # ValueError makes the call unknown
        raise ValueError("format: not enough arguments")

    return re.sub(r"%%|%[-+ #0-9.]*[sdvqtf]", one, spec)


def _as_text(value: Any, width: int) -> str:
    """A value as an interpolation writes it into a string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float, str)):
        return str(value)
    return marker(width)  # a list or an object in a string: Terraform refuses it; unknown here


def _flush_indent(parts: list[Any]) -> int:
    """`<<-`: the smallest indentation of the heredoc's lines that hold anything (Terraform's flush heredoc)."""
    text = "".join(p if isinstance(p, str) else "\x00" for p in parts)
    widths = [len(line) - len(line.lstrip(" \t")) for line in text.split("\n") if line.strip(" \t\r")]
    return min(widths) if widths else 0


def _strip_indent(text: str, indent: int, at_start: bool) -> str:
    lines = text.split("\n")
    out = []
    for k, line in enumerate(lines):
        if k > 0 or at_start:
            cut = 0
            while cut < indent and cut < len(line) and line[cut] in " \t":
                cut += 1
            line = line[cut:]
        out.append(line)
    return "\n".join(out)


def _placed_json(value: Any, at: tuple[int, int]) -> Any:
    if isinstance(value, dict):
        out = YamlMap()
        out.lc = LineCol(*at)
        out.lc.data = {}
        for k, v in value.items():
            out[str(k)] = _placed_json(v, at)
            out.lc.data[str(k)] = [at[0], at[1], at[0], at[1]]
        return out
    if isinstance(value, list):
        seq = YamlSeq(_placed_json(v, at) for v in value)
        seq.lc = LineCol(*at)
        seq.lc.data = {i: list(at) for i in range(len(seq))}
        return seq
    return value


def _under_display(path: str, folder: str) -> bool:
    return folder not in ("", ".") and (path == folder or path.startswith(folder.rstrip("/") + "/"))


def _short(text: str) -> str:
    first = text.split("\n", 1)[0]
    return first if len(first) <= 60 else first[:57] + "..."


def _ref_name(ref: hcl.Ref) -> str:
    """The part of a reference that names what is unknown: `module.eks`, `aws_efs_file_system.models`, `each.value`."""
    names = [s for s in ref.steps if isinstance(s, str)]
    if ref.root in ("module", "data", "each", "count", "self", "terraform"):
        return ".".join([ref.root] + names[:2 if ref.root == "data" else 1])
    return ".".join([ref.root] + names[:1])


def _why(root: str) -> str:
    if root == "each":
        return "one value per instance of the resource's for_each, which vramlint does not expand"
    if root == "count":
        return "one value per instance of the resource's count"
    if root == "module":
        return "an output of another module, known when Terraform applies it"
    if root == "data":
        return "a data source's attribute, read from the provider when Terraform runs"
    return "an attribute of another resource, known when Terraform applies it"
