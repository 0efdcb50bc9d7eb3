"""The rule API: one module per rule, loaded by file path, run against assessed servers.

A rule module (built-in ones live in the top-level ``rules/`` directory, installed as ``vramlint/rules/``;
a user's own live in any directory passed as ``--rules-dir``) defines::

    \"\"\"One-line summary.

    What the rule checks and why, then a failing and a passing example:

    Failing example:

    ```yaml
    ...
    ```

    Passing example:

    ```yaml
    ...
    ```
    \"\"\"
    ID = "VRL001"                       # stable; letters then 3-4 digits
    NAME = "max-model-len-at-maximum"   # stable, kebab-case
    LEVEL = "warning"                   # error | warning | note
    OPTIONS = {"min_concurrency": 8}    # defaults; a user's configuration may override them

    def check(assessment, ctx):         # one server -> findings
        ...
    def check_all(assessments, ctx):    # optional: rules that compare servers
        ...

Built-in rules and user rules go through the same loader (``load_rules``) and the same validation: a
broken module is a ``RuleLoadError`` that names the file, never a traceback. Modules are imported only when
their directory is asked for; the built-in directory is the only one loaded by default.

``run_rules`` runs each rule on each assessment; a rule that raises becomes an error finding
(``VRL000 rule-failed``) on that server instead of stopping the run.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from vramlint.cli import UsageError
from vramlint.lean_dataclass import dataclass
from vramlint.model import LEVELS, Assessment, Budget, Finding, Fix, Level, Location, Server, TrafficProfile
from vramlint.versions import parse_version

ID_RE = re.compile(r"^[A-Z]{2,8}[0-9]{3,4}$")
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
INTERNAL_RULE_ID = "VRL000"
INTERNAL_RULE_NAME = "rule-failed"


class RuleLoadError(UsageError):
    """A rule module that cannot be used (bad id, missing docstring, import error): exit status 2."""


class RuleOptionError(UsageError):
    """An option given for a rule that the rule does not have, or of the wrong type."""


@dataclass
class Rule:
    """One loaded rule module."""

    id: str
    name: str
    level: Level
    options: dict[str, Any]  # defaults, as the module declares them
    doc: str  # the module docstring, dedented
    summary: str  # its first line
    check: Callable[[Assessment, RuleContext], Iterable[Finding]] | None
    check_all: Callable[[list[Assessment], RuleContext], Iterable[Finding]] | None
    path: str  # the module file
    builtin: bool = False

    def merge_options(self, given: dict[str, Any] | None) -> dict[str, Any]:
        """Defaults overridden by ``given``; unknown names and wrong types raise RuleOptionError."""
        merged = dict(self.options)
        for key, value in (given or {}).items():
            name = key.replace("-", "_")
            if name not in self.options:
                known = ", ".join(sorted(self.options)) or "none"
                raise RuleOptionError(f"rule {self.id} ({self.name}) has no option {key!r}; its options: {known}")
            default = self.options[name]
            if not _same_kind(default, value):
                raise RuleOptionError(
                    f"rule {self.id} ({self.name}) option {key!r} must be {_kind_name(default)}, got {value!r}"
                )
            merged[name] = float(value) if isinstance(default, float) and isinstance(value, int) else value
        return merged


def _same_kind(default: Any, value: Any) -> bool:
    if default is None or value is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, int):
        return isinstance(value, int)
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple))
    return isinstance(value, type(default))


def _kind_name(default: Any) -> str:
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, float):
        return "a number"
    if isinstance(default, int):
        return "an integer"
    if isinstance(default, (list, tuple)):
        return "a list"
    if isinstance(default, str):
        return "a string"
    return type(default).__name__


@dataclass
class RuleContext:
    """What a rule sees besides the assessment.

    The caller (``vramlint check``) builds one with every rule's configured options, severity overrides and the
    traffic profile; ``run_rules`` hands each rule a copy bound to it (``rule``, merged ``options``).
    Option and severity keys may be a rule's id or its name.
    """

    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    severity: dict[str, Level] = field(default_factory=dict)
    traffic: TrafficProfile = field(default_factory=TrafficProfile)
    rule: Rule | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def p99_context_tokens(self) -> int | None:
        return self.traffic.p99_context_tokens

    @property
    def peak_concurrent_requests(self) -> int | None:
        return self.traffic.peak_concurrent_requests

    def for_rule(self, rule: Rule) -> RuleContext:
        given: dict[str, Any] = {}
        for key in (rule.name, rule.id):  # the id wins when both are given
            given.update(self.rule_options.get(key) or {})
        return replace(self, rule=rule, options=rule.merge_options(given))

    def level_override(self, rule: Rule) -> str | None:
        """error | warning | note | off, as configured for the rule (by id, else by name), or None."""
        return self.severity.get(rule.id) or self.severity.get(rule.name)

    @classmethod
    def from_config(cls, config: Any) -> RuleContext:
        """A context from anything with ``rules``, ``severity`` and ``traffic`` attributes (config.Config)."""
        traffic = getattr(config, "traffic", None)
        return cls(
            rule_options={k: dict(v or {}) for k, v in (getattr(config, "rules", None) or {}).items()},
            severity=dict(getattr(config, "severity", None) or {}),
            traffic=TrafficProfile(
                p99_context_tokens=getattr(traffic, "p99_context_tokens", None),
                peak_concurrent_requests=getattr(traffic, "peak_concurrent_requests", None),
            ),
        )

    def finding(
        self,
        where: Assessment | Server,
        message: str,
        location: Location | None = None,
        level: Level | None = None,
        fix: Fix | None = None,
        related: list[Location] | None = None,
        detail: str | None = None,
        shared: bool = False,
    ) -> Finding:
        """A finding of the bound rule on a server; ``location`` defaults to the server's container.

        ``fix``: what removes it (built with vramlint.fixes); ``related``: other lines the message names.
        ``detail``: the rest of the message when ``message`` is the one-line headline (what is wrong and the
        number that proves it, at most ~120 characters); the finding's message is both, the text report prints
        the headline on the finding's line and the detail below it. ``shared``: the text is an unknown or advice
        that other servers share word for word, said once for all of them (vramlint.fold)."""
        assert self.rule is not None, "finding() needs a context bound to a rule (ctx.for_rule)"
        server = where.server if isinstance(where, Assessment) else where
        summary = None
        if detail:
            summary = message
            first = detail.split(" ", 1)[0]
            if first.isalpha() and first.islower():  # a sentence of its own ("the KV cache", not "vLLM", "--flag")
                detail = detail[0].upper() + detail[1:]
            message = f"{message}{'' if message.endswith(('.', ':', ';')) else '.'} {detail}"
        return Finding(
            rule_id=self.rule.id,
            rule_name=self.rule.name,
            level=level or self.rule.level,
            message=message,
            summary=summary,
            location=location or server.location,
            server_key=server.key,
            server_id=id(server),
            fix=fix,
            related=[r for r in (related or []) if r is not None and r.file and r.line >= 1],
            shared=shared,
        )


# --------------------------------------------------------------------------------------------------------
# Loading


def builtin_rules_dir() -> Path:
    """``vramlint/rules`` in an installed wheel, ``<repo>/rules`` in the source tree."""
    package_dir = Path(__file__).resolve().parent
    installed = package_dir / "rules"
    if installed.is_dir():
        return installed
    return package_dir.parent / "rules"


def load_rules(extra_dirs: Iterable[str] = (), builtin: bool = True) -> list[Rule]:
    """The built-in rules, then the rules of each directory in ``extra_dirs``, sorted by id.

    Every problem found (in any module) is collected and raised together as one RuleLoadError.
    """
    errors: list[str] = []
    rules: list[Rule] = []
    dirs: list[tuple[Path, bool]] = []
    if builtin:
        dirs.append((builtin_rules_dir(), True))
    for d in extra_dirs:
        dirs.append((Path(d), False))
    for directory, is_builtin in dirs:
        if not directory.is_dir():
            errors.append(f"{directory}: rules directory not found")
            continue
        for path in sorted(directory.glob("*.py")):
            if path.name.startswith("_"):
                continue  # __init__.py and private helper modules are not rules
            rule, problems = load_rule_file(path, builtin=is_builtin)
            errors.extend(problems)
            if rule is not None:
                rules.append(rule)
    seen_ids: dict[str, Rule] = {}
    seen_names: dict[str, Rule] = {}
    for rule in rules:
        if rule.id in seen_ids:
            errors.append(f"{rule.path}: rule id {rule.id} is already used by {seen_ids[rule.id].path}")
        elif rule.name in seen_names:
            errors.append(f"{rule.path}: rule name {rule.name} is already used by {seen_names[rule.name].path}")
        seen_ids.setdefault(rule.id, rule)
        seen_names.setdefault(rule.name, rule)
    if errors:
        raise RuleLoadError("cannot load rules:\n  " + "\n  ".join(errors))
    return sorted(rules, key=lambda r: r.id)


def load_rule_file(path: str | Path, builtin: bool = False) -> tuple[Rule | None, list[str]]:
    """Import one rule module by path and validate it: (rule or None, problems naming the file)."""
    path = Path(path)
    shown = str(path)
    if builtin:
        module_name = f"vramlint.rules.{path.stem}"
    else:  # two folders may both hold a `my_rule.py`: the folder's digest keeps their modules apart
        import hashlib  # only for user rule folders: OpenSSL's start-up costs every run a few ms

        digest = hashlib.sha1(str(path.resolve().parent).encode()).hexdigest()[:10]
        module_name = f"vramlint_user_rules_{digest}.{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        return None, [f"{shown}: cannot be imported as a Python module"]
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look a module up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        return None, [f"{shown}:{exc.lineno}: syntax error: {exc.msg}"]
    except Exception as exc:  # noqa: BLE001 - any import failure of a rule module is reported, not raised
        sys.modules.pop(module_name, None)
        line = _traceback_line(exc, path)
        where = f"{shown}:{line}" if line else shown
        return None, [f"{where}: importing the rule failed: {type(exc).__name__}: {exc}"]

    problems: list[str] = []
    rule_id = getattr(module, "ID", None)
    name = getattr(module, "NAME", None)
    level = getattr(module, "LEVEL", None)
    options = getattr(module, "OPTIONS", {})
    doc = module.__doc__
    check = getattr(module, "check", None)
    check_all = getattr(module, "check_all", None)
    if not isinstance(rule_id, str) or not ID_RE.match(rule_id):
        problems.append(f"{shown}: ID must be a string of 2-8 capital letters then 3-4 digits (e.g. VRL001), got {rule_id!r}")
    if not isinstance(name, str) or not NAME_RE.match(name):
        problems.append(f"{shown}: NAME must be a kebab-case string (e.g. max-model-len-at-maximum), got {name!r}")
    if level not in LEVELS:
        problems.append(f"{shown}: LEVEL must be one of {', '.join(LEVELS)}, got {level!r}")
    if not isinstance(options, dict) or not all(isinstance(k, str) and k.isidentifier() for k in options):
        problems.append(f"{shown}: OPTIONS must be a dict of option names (identifiers) to default values")
    if not isinstance(doc, str) or not doc.strip():
        problems.append(f"{shown}: the module docstring is the rule's documentation and must not be empty")
    if check is not None and not callable(check):
        problems.append(f"{shown}: check must be a function check(assessment, ctx)")
    if check_all is not None and not callable(check_all):
        problems.append(f"{shown}: check_all must be a function check_all(assessments, ctx)")
    if check is None and check_all is None:
        problems.append(f"{shown}: defines neither check(assessment, ctx) nor check_all(assessments, ctx)")
    if problems:
        return None, problems
    doc_text = _dedent_doc(doc)
    return (
        Rule(
            id=rule_id,
            name=name,
            level=level,
            options=dict(options),
            doc=doc_text,
            summary=doc_text.splitlines()[0].strip(),
            check=check,
            check_all=check_all,
            path=shown,
            builtin=builtin,
        ),
        [],
    )


def _traceback_line(exc: BaseException, path: Path) -> int | None:
    tb = exc.__traceback__
    line = None
    target = str(path.resolve())
    while tb is not None:
        if str(Path(tb.tb_frame.f_code.co_filename).resolve()) == target:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _dedent_doc(doc: str) -> str:
    import inspect

    return inspect.cleandoc(doc)


def find_rule(rules: list[Rule], key: str) -> Rule | None:
    """A rule by id (case-insensitive) or name."""
    for rule in rules:
        if rule.id.lower() == key.lower() or rule.name == key.lower():
            return rule
    return None


# --------------------------------------------------------------------------------------------------------
# Running


def run_rules(assessments: list[Assessment], rules: list[Rule], ctx: RuleContext | None = None) -> list[Finding]:
    """Every rule on every assessment (``check``) and on all of them (``check_all``).

    Option errors raise RuleOptionError before anything runs (a configuration mistake, exit 2). A rule that
    raises while checking becomes a VRL000 error finding on the server it failed on, and the run goes on.
    Severity overrides in ``ctx.severity`` are applied to the findings; a rule set to ``off`` is not run.
    """
    ctx = ctx or RuleContext()
    bound = [(rule, ctx.for_rule(rule)) for rule in rules]  # raises on bad options, before any output
    _REBUDGETS.clear()  # models and catalogs may have changed since an earlier run in this process
    findings: list[Finding] = []
    for rule, rule_ctx in bound:
        override = ctx.level_override(rule)
        if override == "off":
            continue
        produced: list[Finding] = []
        if rule.check is not None:
            for assessment in assessments:
                try:
                    produced.extend(rule.check(assessment, rule_ctx) or ())
                except Exception as exc:  # noqa: BLE001 - one broken rule must not stop the lint run
                    findings.append(_internal_finding(rule, exc, assessment.server))
        if rule.check_all is not None and assessments:
            try:
                produced.extend(rule.check_all(assessments, rule_ctx) or ())
            except Exception as exc:  # noqa: BLE001
                findings.append(_internal_finding(rule, exc, assessments[0].server))
        for finding in produced:
            if not isinstance(finding, Finding):
                findings.append(
                    _internal_finding(rule, TypeError(f"yielded {type(finding).__name__}, not a Finding"), None,
                                      assessments[0].server if assessments else None)
                )
                continue
            if override:
                finding.level = override
            findings.append(finding)
    findings.sort(key=lambda f: (f.location.file, f.location.line, f.location.column, f.rule_id))
    return findings


def _internal_finding(rule: Rule, exc: BaseException, server: Server | None, fallback: Server | None = None) -> Finding:
    server = server or fallback
    where = _traceback_line(exc, Path(rule.path))
    at = f" at {rule.path}:{where}" if where else f" ({rule.path})"
    location = server.location if server else Location(file=rule.path, line=where or 1)
    return Finding(
        rule_id=INTERNAL_RULE_ID,
        rule_name=INTERNAL_RULE_NAME,
        level="error",
        message=f"rule {rule.id} ({rule.name}) failed on this server{at}: {type(exc).__name__}: {exc}; "
        "its verdict is missing (a bug in the rule, please report it)",
        location=location,
        server_key=server.key if server else None,
        server_id=id(server) if server else None,
    )


# --------------------------------------------------------------------------------------------------------
# Helpers for rule modules (built-in and user rules alike)


def gib(value: float | None) -> str:
    """GiB to two decimals, as vLLM logs them."""
    return "?" if value is None else f"{value:.2f} GiB"


def tokens(value: int | float | None) -> str:
    return "?" if value is None else f"{int(value):,}"


def times(value: float | None) -> str:
    """A concurrency, as vLLM logs it (``12.34x``)."""
    return "?" if value is None else f"{value:.2f}x"


def arg_location(server: Server, *names: str) -> Location:
    """Where the first of ``names`` was set (vLLM dest names, ``model``, env names), else the container."""
    for name in names:
        if name in server.arg_locations:
            return server.arg_locations[name]
        if name == "model" and server.model_location is not None:
            return server.model_location
        if name == "gpu" and server.gpu is not None and server.gpu.location is not None:
            return server.gpu.location
        if name in server.env_locations:
            return server.env_locations[name]
    return server.location


def int_arg(server: Server, name: str, default: int | None = None) -> int | None:
    """An integer argument; ``default`` when not set; None when set to something unknown or not a number."""
    if name not in server.args:
        return default
    return as_int(server.args[name])


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip().lower().replace("_", "")
        scale = 1
        # vLLM (0.10+) takes human-readable lengths: "32k" is 32000, "32K" is 32768 (binary when upper case)
        if value.strip()[-1:] in "kKmMgG" and len(text) > 1:
            binary = value.strip()[-1].isupper()
            scale = {"k": 1, "m": 2, "g": 3}[text[-1]]
            scale = (1024 if binary else 1000) ** scale
            text = text[:-1]
        try:
            number = float(text)
        except ValueError:
            return None
        if math.isfinite(number) and (number * scale).is_integer():
            return int(number * scale)
    return None


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """``"0.10.2"``/``"v0.8.5.post1"`` -> (0, 10, 2); None when it does not read as a release."""
    key = parse_version(version)
    return key[:3] if key is not None else None


def rebudget(assessment: Assessment, model=None, **args: Any) -> Budget | None:
    """The budget again with some arguments changed (or another ModelInfo): what a suggested fix would give.

    None when the assessment has no budget to start from, or the engine cannot compute the changed one.
    """
    if assessment.budget is None or assessment.model is None or assessment.gpu is None:
        return None
    from vramlint.assess import compute_budget

    new_args = dict(assessment.server.args)
    new_args.update(args)
    facts = model or assessment.model
    # A budget depends only on these inputs (see vramlint.assess._budget): servers of the same settings (copies
    # of a manifest, environments of one chart) ask the same "what if" and get the one budget computed for it. A
    # model made for the question (VRL003's quantized variants, made anew each time) is known by its contents.
    key = (id(facts) if model is None else repr(facts), repr(assessment.gpu), repr(new_args),
           repr(assessment.server.env), assessment.budget.vllm_version, assessment.gpu_count, assessment.server.image)
    found = _REBUDGETS.get(key)
    if found is not None:
        return found[1]
    from vramlint.budget.common import NotSized

    try:
        budget = compute_budget(
            facts,
            assessment.gpu,
            new_args,
            dict(assessment.server.env),
            assessment.budget.vllm_version,
            assessment.gpu_count,
            image=assessment.server.image,
        )
    except NotSized:
        return None  # the changed settings are past what vramlint sizes: no "what if" to offer
    if len(_REBUDGETS) >= _REBUDGETS_MAX:
        _REBUDGETS.clear()
    _REBUDGETS[key] = (facts, budget)  # the model kept: its id stays its own while the entry lives
    return budget


# `rebudget`'s budgets of this run (run_rules starts each run with none), by their inputs, with the model they
# were computed for
_REBUDGETS: dict[tuple, tuple[Any, Budget]] = {}
_REBUDGETS_MAX = 4096


def max_num_seqs_over_capacity(budget: Budget, typical: int, min_concurrency: float,
                               peak: int | None = None) -> tuple[int, float] | None:
    """VRL002's test: (the --max-num-seqs the KV cache holds, the cache's capacity in ``typical``-token requests)
    when vLLM would admit more requests than that, else None. Shared with fixes that shrink the cache (VRL005),
    so that their result does not raise VRL002."""
    typical = min(typical, budget.max_model_len) if budget.max_model_len else typical
    if typical <= 0:
        return None
    capacity = concurrency_at(budget, typical)
    held = math.floor(capacity)
    if budget.max_num_seqs <= held:
        return None
    if peak is not None:
        return (max(held, 1), capacity) if peak > held else None
    return (max(held, 1), capacity) if capacity < min_concurrency else None


def concurrency_at(budget: Budget, length: int) -> float:
    """How many requests of ``length`` tokens the KV cache holds, counting whole blocks as vLLM does."""
    if length <= 0:
        return 0.0
    if length == budget.max_model_len and budget.max_concurrency:
        return budget.max_concurrency  # the engine's own figure, as vLLM logs it
    block = budget.block_size or 16
    if budget.num_gpu_blocks and budget.kv_tokens == budget.num_gpu_blocks * block:
        return budget.num_gpu_blocks / math.ceil(length / block)
    # hybrid / sliding-window models: the engine's own concurrency scales with length
    if budget.max_concurrency and budget.max_model_len:
        return budget.max_concurrency * budget.max_model_len / length
    return budget.kv_tokens / length


# --------------------------------------------------------------------------------------------------------
# Documentation


def rule_markdown(rule: Rule, heading: str = "##") -> str:
    """One rule's documentation as markdown: heading, level, options with defaults, then its docstring."""
    out = [f"{heading} {rule.id} {rule.name}", "", f"Default level: **{rule.level}**", ""]
    if rule.options:
        out.append("Options (defaults):")
        out.append("")
        for key, value in rule.options.items():
            out.append(f"- `{key.replace('_', '-')}`: `{_yaml_value(value)}`")
        out.append("")
    out.append(_demote_headings(rule.doc, heading))
    return "\n".join(out).rstrip() + "\n"


def _demote_headings(doc: str, heading: str) -> str:
    """Headings inside a rule's docstring sit below the rule's own heading."""
    lines = []
    fenced = False
    for line in doc.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#"):
            line = heading + line
        lines.append(line)
    return "\n".join(lines)


def _yaml_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    return str(value)


def rules_markdown(rules: list[Rule]) -> str:
    """``docs/rules.md``: a table of every rule, then each rule's documentation."""
    out = [
        "# vramlint rules",
        "",
        "<!-- Generated from the rule modules in rules/ by `python -m vramlint rules --markdown`; do not edit. -->",
        "",
        "Options are set per rule in the configuration (`[tool.vramlint.rules.<id or name>]` in pyproject.toml or",
        "`rules:` in `.vramlint.yaml`); names may be written with `-` or `_`.",
        "",
        "| id | name | level | summary |",
        "|---|---|---|---|",
    ]
    for rule in rules:
        out.append(f"| [{rule.id}](#{_anchor(rule)}) | {rule.name} | {rule.level} | {rule.summary} |")
    out.append("")
    for rule in rules:
        out.append(rule_markdown(rule))
    return "\n".join(out).rstrip() + "\n"


def _anchor(rule: Rule) -> str:
    return f"{rule.id} {rule.name}".lower().replace(" ", "-")
