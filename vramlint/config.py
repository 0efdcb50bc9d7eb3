"""vramlint's own configuration: ``[tool.vramlint]`` in ``pyproject.toml`` or ``.vramlint.yaml``.

The file format is modelled with pydantic (:func:`vramlint.config_schema.config_model`), whose JSON Schema is
shipped as ``vramlint/schema/vramlint-config.schema.json`` for editors and is what a file is validated against. Keys are
kebab-case in files (``fail-on``, ``model-aliases``) and snake_case in Python.

At run time a file is checked with jsonschema against the shipped schema (so that every mistake is reported
with its file, line and a did-you-mean), then turned into the plain :class:`Config` dataclass. Building the
pydantic model as well would cost ~85 ms on every run for no extra checking: the schema *is* the model's, and
``tests/test_config_schema.py`` holds the model, the schema and the dataclass to the same fields and defaults.
Generating the schema (pydantic) lives in :mod:`vramlint.config_schema`, apart from what runs.
Neither pydantic nor jsonschema is imported when no configuration file exists.

Precedence: command-line flags > the matching ``overrides`` entries (later entries win) > the file's top level >
defaults. ``rules-dir`` deliberately has no configuration key: a configuration file lives in the repository being
scanned, and loading rule code it names would execute that repository's code.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import field, fields, replace
from typing import Any

from vramlint.lean_dataclass import dataclass
from vramlint.model import Location, Problem, ResolveOptions, TrafficProfile
from vramlint.textsafe import shortened
from vramlint.yamlload import to_plain

CONFIG_YAML_NAMES = (".vramlint.yaml", ".vramlint.yml")
PYPROJECT = "pyproject.toml"
SCHEMA_RESOURCE = ("schema", "vramlint-config.schema.json")
SCHEMA_ID = "https://vramlint.dev/schema/vramlint-config.schema.json"

LEVEL_VALUES = ("error", "warning", "note")
SEVERITY_VALUES = ("error", "warning", "note", "off")  # "off" turns the rule off, as `ignore` does
FAIL_ON_VALUES = ("error", "warning", "note", "never")

# Rule selectors: an id (VRL003), an id prefix (VRL0), a rule name (unquantized-weights-small-gpu) or ALL.
# Kept permissive here: which ids exist is known only once the rules (built-in and --rules-dir) are loaded.
SELECTOR_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]*$"
OPTION_NAME_PATTERN = r"^[a-z][a-z0-9]*([-_][a-z0-9]+)*$"
COMPUTE_CAPABILITY_PATTERN = r"^[1-9][0-9]?\.[0-9]$"


def format_problem(problem: Problem) -> str:
    where = problem.file
    if problem.line is not None:
        where += f":{problem.line}"
        if problem.column is not None:
            where += f":{problem.column}"
    return f"{where}: {problem.message}"


# --------------------------------------------------------------------------------------------------------------
# The effective configuration (plain dataclasses: cheap to import and to build)


@dataclass
class Override:
    """Settings for the files matching ``files`` (globs relative to the configuration file's folder)."""

    files: list[str]
    select: list[str] | None = None
    ignore: list[str] | None = None  # added to the top-level list
    severity: dict[str, str] | None = None
    fail_on: str | None = None
    gpu: str | list[str] | None = None  # a list: the pods may land on any of these GPUs
    gpus: int | None = None
    gpu_memory_gib: float | None = None
    vllm_version: str | None = None
    model_aliases: dict[str, str] | None = None
    traffic: TrafficProfile | None = None
    rules: dict[str, dict[str, Any]] | None = None


@dataclass
class CustomGpu:
    """A GPU that is not in the catalog, as the configuration declares it (`custom-gpus`)."""

    name: str
    memory_gib: float  # total memory as CUDA reports it
    compute_capability: str | float  # as written: "8.9" or 8.9
    aliases: list[str] = field(default_factory=list)
    node_labels: dict[str, str | list[str]] = field(default_factory=dict)  # label key -> value(s) selecting it

    def capability(self) -> tuple[int, int]:
        major, _, minor = f"{self.compute_capability}".partition(".")
        return int(major), int(minor or 0)

    def label_pairs(self) -> list[tuple[str, str]]:
        return [(key, value) for key, values in self.node_labels.items()
                for value in (values if isinstance(values, list) else [values])]


@dataclass
class Config:
    """Everything vramlint reads from its configuration file and flags, with where each key was written."""

    select: list[str] | None = None  # None: every rule; else ids, id prefixes, names or ALL
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, str] = field(default_factory=dict)  # rule id or name -> error|warning|note|off
    fail_on: str = "error"
    gpu: str | list[str] | None = None  # a list: the pods may land on any of these GPUs
    gpus: int | None = None
    gpu_memory_gib: float | None = None
    vllm_version: str | None = None
    model_aliases: dict[str, str] = field(default_factory=dict)
    traffic: TrafficProfile = field(default_factory=TrafficProfile)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule id or name -> {option_name: value}
    overrides: list[Override] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    offline: bool = False
    hub_cache_max_age_days: float | None = None  # cached Hub answers older than this are asked again (None: 30)
    render_helm: bool = False  # render charts with Helm when it is available (helm-python-sdk or `helm`)
    helm_values: list[str] = field(default_factory=list)  # `-f` overlays for every chart, in order
    respect_gitignore: bool = True  # the walk leaves out what .gitignore ignores (--[no-]respect-gitignore win)
    walk_scripts: bool = True  # a folder's walk reads the shell scripts that start vLLM (else only Slurm jobs)
    custom_gpus: list[CustomGpu] = field(default_factory=list)

    # Provenance, not configuration keys.
    file: str | None = None  # the configuration file read, as displayed
    root: str = "."  # folder that globs, aliases and local paths in the file are relative to
    rules_dirs: list[str] = field(default_factory=list)  # --rules-dir (command line only)
    positions: dict[tuple, Location] = field(default_factory=dict, repr=False)
    from_flags: set[str] = field(default_factory=set)  # keys (snake_case) that command-line flags set
    values_from_flags: list[str] = field(default_factory=list)  # --values files (the user's: read wherever they are)
    notices: list[Problem] = field(default_factory=list)  # keys of the file that were not applied, and why
    # Configuration files in folders below this one's (a monorepo's teamA/.vramlint.yaml), deepest folder first:
    # a file is checked with the closest one, as ruff does (`owner_of`). Empty when --config names the file.
    nested: list[Config] = field(default_factory=list, repr=False)

    def location_of(self, path: tuple) -> Location | None:
        """Where the key at ``path`` (e.g. ``("rules", "VRL003", "max_weights_share")``) was written.

        Falls back to the nearest enclosing key, then to the file itself (line 1).
        """
        if self.file is None:
            return None
        path = tuple(path)
        while path:
            loc = self.positions.get(path)
            if loc is not None:
                return loc
            path = path[:-1]
        return self.positions.get((), Location(self.file, 1, 1))

    def owner_of(self, file: str | None) -> Config:
        """The configuration closest to ``file``: the nested one whose folder holds it, else this one."""
        if not self.nested or not file:
            return self
        path = os.path.abspath(file)
        for nested in self.nested:
            if path.startswith(os.path.abspath(nested.root) + os.sep):
                return nested
        return self

    def gpu_declarations(self) -> list[tuple[CustomGpu, str]]:
        """Every `custom-gpus` entry of this file and the nested ones, with where it was written (file:line)."""
        out = []
        for config in [self, *self.nested]:
            for index, entry in enumerate(config.custom_gpus):
                loc = config.location_of(("custom-gpus", index))
                out.append((entry, f"{loc.file}:{loc.line}" if loc else (config.file or "configuration")))
        return out

    def overrides_for(self, file: str) -> list[Override]:
        """The overrides whose globs match ``file`` (a path as displayed, relative to the current folder)."""
        if not self.overrides:
            return []
        rel = _relative_to_root(file, self.root)
        return [self.overrides[i] for i in _override_matcher(self.overrides)(rel)]

    def for_file(self, file: str) -> Config:
        """The closest configuration to ``file`` with its overrides matching ``file`` applied."""
        owner = self.owner_of(file)
        if owner is not self:
            return owner.for_file(file)
        matching = self.overrides_for(file)
        if not matching:
            return self
        out = replace(
            self,
            ignore=list(self.ignore),
            severity=dict(self.severity),
            model_aliases=dict(self.model_aliases),
            traffic=replace(self.traffic),
            rules={k: dict(v) for k, v in self.rules.items()},
        )
        for o in matching:
            if o.select is not None and "select" not in self.from_flags:
                out.select = list(o.select)
            if o.ignore:
                out.ignore.extend(o.ignore)
            if o.severity:
                out.severity.update(o.severity)
            for name in ("fail_on", "gpu", "gpus", "gpu_memory_gib", "vllm_version"):
                value = getattr(o, name)
                if value is not None and name not in self.from_flags:
                    setattr(out, name, value)
            if o.model_aliases:
                out.model_aliases.update(o.model_aliases)
            if o.traffic is not None:
                for f in fields(TrafficProfile):
                    value = getattr(o.traffic, f.name)
                    if value is not None:
                        setattr(out.traffic, f.name, value)
            if o.rules:
                for rule, options in o.rules.items():
                    out.rules.setdefault(rule, {}).update(options)
        return out

    def resolve_options(self, file: str | None = None) -> ResolveOptions:
        """What the resolve stage may use for servers in ``file`` (or for all, when no override applies)."""
        owner = self.owner_of(file)
        if owner is not self:
            return owner.resolve_options(file)
        cfg = self.for_file(file) if file is not None else self
        aliases = {}
        for served, target in cfg.model_aliases.items():
            aliases[served] = _resolve_local_target(target, self.root)
        allow_network = not cfg.offline and not _env_true("HF_HUB_OFFLINE") and not _env_true("TRANSFORMERS_OFFLINE")
        offline_reason = None
        if cfg.offline:
            offline_reason = ("--offline was given" if "offline" in self.from_flags
                              else f"`offline: true` is set in {self.file or 'the configuration'}")
        fleet = gpu_names(cfg.gpu)
        return ResolveOptions(
            default_gpu=fleet[0] if len(fleet) == 1 else None,
            default_gpu_fleet=fleet if len(fleet) > 1 else [],
            default_gpu_count=cfg.gpus,
            gpu_memory_gib=cfg.gpu_memory_gib,
            vllm_version=cfg.vllm_version,
            vllm_version_source=self.vllm_version_source(file) if cfg.vllm_version else None,
            model_aliases=aliases,
            allow_network=allow_network,
            offline_reason=offline_reason,
            refresh_hub_cache="refresh_hub_cache" in self.from_flags,
            hub_cache_max_age_days=self.hub_cache_max_age_days,
            base_dir=self.root,
        )

    def vllm_version_for(self, file: str | None = None) -> str | None:
        """The vLLM version configured for servers in ``file`` whose image tag does not say one."""
        owner = self.owner_of(file)
        if owner is not self:
            return owner.vllm_version_for(file)
        return (self.for_file(file) if file else self).vllm_version

    def vllm_version_source(self, file: str | None = None) -> str:
        """Where the version :meth:`vllm_version_for` gives was set: an override, the flag, or the file."""
        owner = self.owner_of(file)
        if owner is not self:
            return owner.vllm_version_source(file)
        if "vllm_version" in self.from_flags:
            return "--vllm-version"
        if file and any(o.vllm_version is not None for o in self.overrides_for(file)):
            return f"configuration ({self.file} overrides)"
        return f"configuration ({self.file})" if self.file else "configuration"

    def exclude_patterns(self) -> list[str]:
        """``exclude`` globs rewritten relative to the current folder, as the file discovery matches them."""
        out = []
        for pattern in self.exclude:
            if "/" not in pattern.strip("/") or self.root in (".", ""):
                out.append(pattern)
                continue
            joined = os.path.normpath(os.path.join(self.root, pattern))
            out.append(os.path.relpath(joined).replace(os.sep, "/") + ("/" if pattern.endswith("/") else ""))
        for nested in self.nested:
            # a nested file's globs apply in its folder only: `*` of the discovery's fnmatch crosses folders
            folder = os.path.relpath(nested.root).replace(os.sep, "/")
            for pattern in nested.exclude:
                pat = pattern.strip().removeprefix("./")
                out.append(f"{folder}/{pat}")
                if "/" not in pat.strip("/"):
                    out.append(f"{folder}/*/{pat}")
        return out


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _resolve_local_target(target: str, root: str) -> str:
    # A Hub id looks like a relative path ("org/name"); only a path that exists or is spelled as one
    # (./x, ../x, /x, ends in .json) is taken as a local file relative to the configuration file.
    if target.startswith(("./", "../", "/", "~")) or target.endswith(".json"):
        expanded = os.path.expanduser(target)
        return os.path.normpath(os.path.join(root, expanded))
    return target


def _relative_to_root(file: str, root: str) -> str:
    if root in (".", ""):
        rel = os.path.normpath(file)
    else:
        rel = os.path.relpath(os.path.abspath(file), os.path.abspath(root))
    return rel.replace(os.sep, "/")


# --------------------------------------------------------------------------------------------------------------
# Globs: `*` within a path segment, `**` across segments; a pattern without `/` matches a name at any depth;
# a pattern naming a folder matches everything below it (as .gitignore does).

_GLOB_CACHE: dict[str, re.Pattern[str]] = {}


def _glob_regex(pattern: str) -> re.Pattern[str]:
    cached = _GLOB_CACHE.get(pattern)
    if cached is not None:
        return cached
    compiled = _linear_regex(_glob_source(pattern))
    _GLOB_CACHE[pattern] = compiled
    return compiled


# The matcher of a configuration's `overrides` (its list, kept so that its id stays its own): every file of a run
# is matched against every glob of every entry, and a repository's file of 5,000 entries over 2,000 files was
# 20 million regex matches (killed at 30 s). RE2's Set matches one path against all of them in one pass.
_OVERRIDE_MATCHERS: dict[int, tuple[list, Any]] = {}
_GLOBS_PER_SET = 256


def _override_matcher(overrides: list) -> Any:
    """A function of a repository-relative path: the indices, in order, of the ``overrides`` whose globs match it."""
    found = _OVERRIDE_MATCHERS.get(id(overrides))
    if found is not None and found[0] is overrides:
        return found[1]
    owners = [i for i, o in enumerate(overrides) for _ in o.files]
    globs = [p for o in overrides for p in o.files]
    one_by_one = list(range(len(globs)))
    sets: list[tuple[Any, list[int]]] = []  # RE2 Sets of a few hundred globs each (one of 10,000 outgrows RE2's memory)
    try:
        import re2
    except ImportError:
        re2 = None
    if re2 is not None:
        opts = re2.Options()
        opts.log_errors = False
        one_by_one = []
        for start in range(0, len(globs), _GLOBS_PER_SET):
            chunk = range(start, min(start + _GLOBS_PER_SET, len(globs)))
            matched_set = re2.Set.SearchSet(opts)
            in_set: list[int] = []
            for k in chunk:
                try:
                    matched_set.Add(_glob_source(globs[k]))
                    in_set.append(k)
                except re2.error:
                    one_by_one.append(k)  # a character class RE2 does not read: Python's re decides, as glob_match
            try:
                matched_set.Compile()
                sets.append((matched_set, in_set))
            except re2.error:
                one_by_one.extend(in_set)
        one_by_one.sort()
    memo: dict[str, list[int]] = {}

    def match(rel: str) -> list[int]:
        path = rel.replace(os.sep, "/")
        if path.startswith("./"):
            path = path[2:]
        hit = memo.get(path)
        if hit is not None:
            return hit
        ks = [in_set[k] for matched_set, in_set in sets for k in (matched_set.Match(path) or [])]
        ks += [k for k in one_by_one if _glob_regex(globs[k]).match(path) is not None]
        hit = sorted({owners[k] for k in ks})
        if len(memo) < 100_000:
            memo[path] = hit
        return hit

    if len(_OVERRIDE_MATCHERS) > 64:
        _OVERRIDE_MATCHERS.clear()
    _OVERRIDE_MATCHERS[id(overrides)] = (overrides, match)
    return match


def _glob_source(pattern: str) -> str:
    """The regular expression of a glob (anchored at both ends)."""
    pat = pattern.strip()
    if pat.startswith("./"):
        pat = pat[2:]
    anchored = "/" in pat.rstrip("/")
    pat = pat.strip("/")
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            while pat.startswith("*", i + 1) and not pat.startswith("**", i):
                i += 1
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pat.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pat[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return f"^{prefix}{''.join(out)}(?:/.*)?$"


def _linear_regex(source: str) -> Any:
    """``source`` compiled by RE2 (linear time: a glob of the repository's configuration such as
    `*a*a*a*a*a*a*a*a*a*a*b` makes Python's re backtrack for minutes on one long file name), else by re."""
    try:
        import re2
    except ImportError:
        return re.compile(source)
    opts = re2.Options()
    opts.log_errors = False
    try:
        return re2.compile(source, opts)
    except re2.error:
        return re.compile(source)  # a character class RE2 does not read: re decides (and says) as before


def glob_match(pattern: str, path: str) -> bool:
    path = path.replace(os.sep, "/")
    if path.startswith("./"):
        path = path[2:]
    return _glob_regex(pattern).match(path) is not None


# --------------------------------------------------------------------------------------------------------------
# Finding and loading the file


def find_config_file(scan_paths: list[str] | tuple[str, ...]) -> str | None:
    """The configuration for ``scan_paths``: searched from their common folder upward to the repository root.

    In each folder ``.vramlint.yaml`` (or ``.yml``) is taken before a ``pyproject.toml`` with a
    ``[tool.vramlint]`` table; a ``pyproject.toml`` without one is passed over. The search stops after the
    folder holding ``.git`` (the repository root) or at the filesystem root.
    """
    start = _common_folder(scan_paths)
    current = start
    while True:
        for name in CONFIG_YAML_NAMES:
            candidate = os.path.join(current, name)
            # anything by that name is taken: one that is not a regular file (a FIFO, a folder, a device) is not
            # read, and its notice says so (`_load_one`), rather than the file being passed over unsaid
            if os.path.lexists(candidate):
                return candidate
        candidate = os.path.join(current, PYPROJECT)
        if os.path.isfile(candidate) and _pyproject_has_table(candidate):
            return candidate
        if os.path.exists(os.path.join(current, ".git")):
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _common_folder(scan_paths: list[str] | tuple[str, ...]) -> str:
    folders = []
    for path in scan_paths:
        if path == "-":
            folders.append(os.getcwd())
            continue
        absolute = os.path.abspath(path)
        folders.append(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))
    if not folders:
        return os.getcwd()
    try:
        return os.path.commonpath(folders)
    except ValueError:  # different drives
        return folders[0]


def _pyproject_has_table(path: str) -> bool:
    # A text test first: parsing every pyproject.toml on the way up would cost more than it tells.
    from vramlint.fsread import Refusal, read_text

    text = read_text(path, check_inside=False, errors="replace")
    if isinstance(text, Refusal):
        return False
    return re.search(r"^\s*\[\[?\s*tool\s*\.\s*[\"']?vramlint\b", text, re.M) is not None


def load_config(path: str | None, scan_paths: list[str] | tuple[str, ...] = (".",),
                nested: bool = False, unusable: dict[str, list[Problem]] | None = None
                ) -> tuple[Config, list[Problem]]:
    """Read the configuration file ``path`` (or the one found for ``scan_paths`` when None).

    Returns the configuration and the problems found in it (each with file, line, column). A run must not go
    on with a configuration that has problems: the keys it did not understand would be silently dropped.
    With no file at all, the defaults and no problems. With ``nested`` (the commands that walk ``scan_paths``)
    and no ``path`` named, the configuration files in folders below the scanned folders are read too
    (`Config.nested`): each file is checked with the closest one.

    ``unusable``: found files (as displayed) known to have problems, with them. Such a file is not applied (the
    top one gives way to the defaults, a nested one to the closest configuration above it) and each of its
    problems becomes an error notice saying so: a file found in the scanned tree is a pull request's data, and
    its mistakes are findings, not a failed run (`usable_configuration` in vramlint.commands.check).
    """
    if path is not None:
        config, problems = _load_one(path, explicit=True)
        return config, problems or _custom_gpu_problems(config)
    unusable = unusable or {}
    found = find_config_file(scan_paths)
    if found and _display(found) in unusable:
        config, problems = Config(), []
    else:
        config, problems = _load_one(found, explicit=False) if found else (Config(), [])
    if problems or not nested:
        _add_unusable_notices(config, unusable, _display(found) if found else None)
        return config, problems or _custom_gpu_problems(config)
    main_folder = os.path.dirname(os.path.abspath(found)) if found else None
    for nested_path in find_nested_config_files(scan_paths, config.exclude_patterns()):
        if main_folder is not None and os.path.dirname(os.path.abspath(nested_path)) == main_folder:
            continue
        if _display(nested_path) in unusable:
            continue
        inner, inner_problems = _load_one(nested_path, explicit=False)
        problems.extend(inner_problems)
        if inner.file is None:  # not read (a link out of the repository): its notice says so
            config.notices.extend(inner.notices)
            continue
        for key in ("helm-values", "hub-cache-max-age-days", "respect-gitignore", "walk-scripts"):
            loc = inner.positions.get((key,))
            if loc is not None:
                inner.notices.append(Problem(
                    inner.file, loc.line, loc.column, f"{key} in a nested configuration file is not applied: it "
                    f"is a setting of the whole run, read from {config.file or 'the top configuration file'} "
                    "(the one found from the scanned folder upward)", level="note"))
        config.notices.extend(inner.notices)
        inner.notices = []
        config.nested.append(inner)
    config.nested.sort(key=lambda c: -len(os.path.abspath(c.root)))
    _add_unusable_notices(config, unusable, _display(found) if found else None)
    return config, problems or _custom_gpu_problems(config)


def _version_problems(data: Any, shown: str, positions: dict[tuple, Location]) -> list[Problem]:
    """A `vllm-version` (top level or in an override) that is no version vramlint reads: the file is not applied,
    rather than its servers checked as of a version it does not name."""
    from vramlint.versions import parse_version

    if not isinstance(data, dict):
        return []
    places = [(("vllm-version",), data.get("vllm-version"))]
    overrides = data.get("overrides")
    if isinstance(overrides, list):
        places += [(("overrides", i, "vllm-version"), o.get("vllm-version")) for i, o in enumerate(overrides)
                   if isinstance(o, dict)]
    out = []
    for path, value in places:
        if isinstance(value, str) and parse_version(value) is None:
            loc = _locate(positions, path, value=True, shown=shown)
            shown_value = shortened(value, 40)
            out.append(Problem(shown, loc.line, loc.column, f"{_key_label(path, 'the configuration')}: "
                               f"{shown_value!r} is not a vLLM version (such as 0.10.1)"))
    return out


def _add_unusable_notices(config: Config, unusable: dict[str, list[Problem]], top: str | None) -> None:
    """Each problem of a found file that is not applied, as an error notice saying what applies instead."""
    for shown, problems in unusable.items():
        if shown == top:
            instead = "the defaults"
            scope = "the files it covers"
        else:
            folder = os.path.dirname(shown) or "."
            inside = os.path.abspath(folder) + os.sep
            above = [c for c in config.nested if inside.startswith(os.path.abspath(c.root) + os.sep)]
            if above:
                instead = f"the settings of {above[0].file}"
            elif config.file:
                instead = f"the settings of {config.file}"
            else:
                instead = "the defaults"
            scope = f"the files under {folder}/"
        for problem in problems:
            config.notices.append(Problem(
                problem.file, problem.line, problem.column,
                f"{problem.message}; this configuration file is not applied: {scope} are checked with {instead}",
                level="note" if problem.level == "note" else "error"))


def _custom_gpu_problems(config: Config) -> list[Problem]:
    """A GPU name declared twice with different figures (in one file, or in two files of a monorepo): the run
    has one GPU of each name, so which one a server gets would depend on the order files were found."""
    problems = []
    first: dict[str, tuple[CustomGpu, str]] = {}
    for entry, where in config.gpu_declarations():
        key = entry.name.strip().lower()
        if key in first and first[key][0] != entry:
            file, _, line = where.rpartition(":")
            problems.append(Problem(file, int(line) if line.isdigit() else None, None,
                                    f"custom GPU {entry.name!r} is declared again with other values (first at "
                                    f"{first[key][1]}): give each GPU one entry"))
        first.setdefault(key, (entry, where))
    return problems


def find_nested_config_files(scan_paths: list[str] | tuple[str, ...], exclude: list[str] | tuple[str, ...] = ()
                             ) -> list[str]:
    """Configuration files in the folders below the scanned folders (not in them: `find_config_file` finds that
    one), one per folder as `find_config_file` chooses it. Folders discovery skips (.git, vendor, ``exclude``)
    and symbolic links are not entered."""
    from vramlint.discover import SKIP_DIRS, display_path, excluded

    out: list[str] = []
    seen: set[str] = set()
    for top in scan_paths:
        if top == "-" or not os.path.isdir(top):
            continue
        for folder, dirs, files in os.walk(top):
            shown = display_path(folder)
            prefix = "" if shown == "." else shown + "/"
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not os.path.islink(os.path.join(folder, d))
                             and not (exclude and excluded(prefix + d, d, list(exclude))))
            absolute = os.path.abspath(folder)
            if absolute in seen or os.path.samefile(folder, top):
                seen.add(absolute)
                continue
            seen.add(absolute)
            names = set(files)
            chosen = next((n for n in CONFIG_YAML_NAMES if n in names), None)
            if chosen is None and PYPROJECT in names and _pyproject_has_table(os.path.join(folder, PYPROJECT)):
                chosen = PYPROJECT
            if chosen is not None:
                out.append(os.path.join(folder, chosen))
    return out


def _load_one(path: str, explicit: bool) -> tuple[Config, list[Problem]]:
    shown = _display(path)
    from vramlint.fsread import Refusal, outside_reason, read_text, roots_for

    # Not confined to the scanned paths (it is found above them, or named by the user), but a regular file of
    # bounded size: a FIFO named .vramlint.yaml must not block the run. One found in the repository that links
    # out of its folder (to /proc/self/environ, to a runner's file) is data from a pull request: not read.
    outside = None if explicit else outside_reason(path, roots_for([os.path.dirname(os.path.abspath(path))]))
    text = Refusal(outside) if outside else read_text(path, check_inside=False)
    if isinstance(text, Refusal):
        if not explicit:
            what = "a broken symbolic link" if text.missing else text.reason
            notice = Problem(shown, None, None, f"configuration file {shown} is {what}: not read; the "
                             "defaults apply", level="warning")
            return Config(notices=[notice]), []
        if text.missing:
            why = "configuration file not found" if explicit else "cannot read configuration file"
        else:
            why = f"cannot read configuration file: {text.reason}"
        return Config(file=shown), [Problem(shown, None, None, why)]
    root = os.path.dirname(shown) or "."
    if os.path.basename(path) == PYPROJECT or path.endswith(".toml"):
        data, positions, problems = _read_toml(text, shown, is_pyproject=os.path.basename(path) == PYPROJECT)
        where = "[tool.vramlint]" if os.path.basename(path) == PYPROJECT else "the configuration"
    else:
        data, positions, problems = _read_yaml(text, shown)
        where = "the configuration"
    if data is not None:
        # every mistake on its line: a version that is none is said also beside an unknown key (the schema knows
        # no version syntax, so the two never say one thing twice)
        problems = sorted(problems + validate(data, shown, positions, where) + _version_problems(data, shown, positions),
                          key=lambda p: (p.line or 0, p.column or 0))
    if problems:
        if not explicit and isinstance(data, dict) and data.get("render-helm") is True:
            # said though nothing of the file applies: render-helm never does from the repository (hostile21
            # pyproject_rules_dir_and_render_helm: only the other key's error was said)
            problems.append(_render_helm_notice(shown, positions.get(("render-helm",))))
        return Config(file=shown, root=root, positions=positions), problems
    config = config_from_data(data)
    config.file = shown
    config.root = root
    config.positions = positions
    if config.render_helm:
        # The file is part of the repository being linted (often a pull request's): it may not make vramlint
        # run Helm, which follows symlinks and reads files for `.Files.Get`. Only the user's command line may.
        config.render_helm = False
        config.notices.append(_render_helm_notice(shown, config.location_of(("render-helm",))))
    return config, []


def _render_helm_notice(shown: str, loc: Location | None) -> Problem:
    loc = loc or Location(shown, 1, 1)
    return Problem(shown, loc.line, loc.column, "render-helm in a configuration file is not applied: a file in the "
                   "scanned repository cannot make vramlint run Helm; pass --render-helm (the action's "
                   "`render-helm: true` input) to render charts with Helm", level="note")


def _display(path: str) -> str:
    from vramlint.discover import display_path

    return display_path(path)


# --------------------------------------------------------------------------------------------------------------
# YAML: ruamel keeps the position of every key and item.


def _read_yaml(text: str, shown: str) -> tuple[Any, dict[tuple, Location], list[Problem]]:
    from vramlint.yamlload import load_text

    docs, problems = load_text(text, shown)
    if problems and not (len(docs) == 1 and all(p.line for p in problems)):
        return None, {}, problems
    if not docs:
        return {}, {(): Location(shown, 1, 1)}, []
    if len(docs) > 1:
        return None, {}, [Problem(shown, None, None, "a configuration file holds one YAML document")]
    data = docs[0].data
    positions: dict[tuple, Location] = {(): Location(shown, 1, 1)}
    _yaml_positions(data, (), shown, positions, 0)
    # a document read whole with problems on their lines (a number past float64 read as a string, a duplicate
    # key): it is not applied, and what the schema says of it is said too, each mistake on its own line, rather
    # than one at a time over as many runs
    return to_plain(data), positions, problems


def _yaml_positions(node: Any, path: tuple, shown: str, out: dict[tuple, Location], depth: int) -> None:
    if depth > 50:
        return
    lc = getattr(node, "lc", None)
    if isinstance(node, dict):
        for key, value in node.items():
            entry = lc.data.get(key) if lc is not None and isinstance(lc.data, dict) else None
            if entry is not None:
                out[path + (key,)] = Location(shown, entry[0] + 1, entry[1] + 1)
                if len(entry) >= 4:
                    out[path + (key, "<value>")] = Location(shown, entry[2] + 1, entry[3] + 1)
            _yaml_positions(value, path + (key,), shown, out, depth + 1)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            entry = lc.data.get(index) if lc is not None and isinstance(lc.data, dict) else None
            if entry is not None:
                out[path + (index,)] = Location(shown, entry[0] + 1, entry[1] + 1)
            _yaml_positions(value, path + (index,), shown, out, depth + 1)


# --------------------------------------------------------------------------------------------------------------
# TOML: tomllib gives values but no positions, so key lines are found by reading the text table by table.

# (the name keeps its blanks, which _split_dotted reads: `\s*(.+?)\s*` re-read a run of blanks inside a quoted
# name at every step of the lazy name, quadratic in a line of a million)
_TOML_HEADER = re.compile(r"^\s*(\[\[?)(.+?)(\]\]?)\s*(#.*)?$")
_TOML_KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_TOML_INLINE_KEY = re.compile(r"""(?:[{,]\s*)([A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*=""")
_TOML_STRING = re.compile(r""""(?:[^"\\]|\\.)*"|'[^']*'""")


def _split_dotted(text: str) -> list[str]:
    parts = []
    for m in re.finditer(r"""\s*("([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?:\.|$)""", text):
        if m.group(2) is not None:
            parts.append(m.group(2))
        elif m.group(3) is not None:
            parts.append(m.group(3))
        else:
            parts.append(m.group(4))
    return parts


def _toml_positions(text: str, shown: str, prefix: tuple) -> dict[tuple, Location]:
    """Line and column of each key below ``prefix`` (e.g. ``("tool", "vramlint")``), keyed by its path."""
    out: dict[tuple, Location] = {}
    table: tuple | None = None  # current table path relative to prefix, None when outside
    array_counts: dict[tuple, int] = {}
    lines = text.splitlines()
    in_multiline_string = False
    array_path: tuple | None = None  # an array value spanning lines: where its items go
    array_index = 0
    depth = 0
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if in_multiline_string:
            if stripped.count('"""') % 2 == 1 or stripped.count("'''") % 2 == 1:
                in_multiline_string = False
            continue
        if array_path is not None:
            for m in _TOML_STRING.finditer(_strip_toml_comment(line)):
                out[array_path + (array_index,)] = Location(shown, number, m.start() + 1)
                array_index += 1
            depth += _bracket_balance(_strip_toml_comment(line))
            if depth <= 0:
                array_path = None
            continue
        header = _TOML_HEADER.match(line)
        if header and not _TOML_KEY.match(line):
            keys = tuple(_split_dotted(header.group(2)))
            if keys[: len(prefix)] == prefix:
                rel = keys[len(prefix) :]
                if header.group(1) == "[[":
                    index = array_counts.get(rel, 0)
                    array_counts[rel] = index + 1
                    rel = rel + (index,)
                    out.setdefault(rel[:-1], Location(shown, number, 1))
                table = rel
                out.setdefault(rel, Location(shown, number, 1))
            else:
                table = None
            continue
        if table is None:
            # Dotted keys at the document or [tool] level: `tool.vramlint.fail-on = "warning"`.
            m = _TOML_KEY.match(line)
            if not m:
                continue
            keys = tuple(_split_dotted(m.group(1)))
            current_header = _current_header(lines, number)
            full = current_header + keys
            if full[: len(prefix)] != prefix:
                continue
            rel = full[len(prefix) :]
        else:
            m = _TOML_KEY.match(line)
            if not m:
                continue
            rel = table + tuple(_split_dotted(m.group(1)))
        column = m.start(1) + 1
        out[rel] = Location(shown, number, column)
        value_text = line[m.end() :]
        value_col = m.end() + (len(value_text) - len(value_text.lstrip())) + 1
        out[rel + ("<value>",)] = Location(shown, number, value_col)
        for inline in _TOML_INLINE_KEY.finditer(value_text):
            key = inline.group(1).strip("\"'")
            out.setdefault(rel + (key,), Location(shown, number, m.end() + inline.start(1) + 1))
        stripped_value = _strip_toml_comment(value_text).strip()
        if stripped_value.startswith(('"""', "'''")) and stripped_value.count(stripped_value[:3]) == 1:
            in_multiline_string = True
        elif stripped_value.startswith("["):
            for index, sm in enumerate(_TOML_STRING.finditer(stripped_value)):
                out[rel + (index,)] = Location(shown, number, value_col + sm.start())
            balance = _bracket_balance(stripped_value)
            if balance > 0:
                array_path = rel
                array_index = len(_TOML_STRING.findall(stripped_value))
                depth = balance
    return out


def _current_header(lines: list[str], number: int) -> tuple:
    for line in reversed(lines[: number - 1]):
        header = _TOML_HEADER.match(line)
        if header and not _TOML_KEY.match(line):
            return tuple(_split_dotted(header.group(2)))
    return ()


def _strip_toml_comment(text: str) -> str:
    # Drops a trailing comment, leaving `#` inside strings alone.
    out = []
    quote = None
    for c in text:
        if quote:
            out.append(c)
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            out.append(c)
        elif c == "#":
            break
        else:
            out.append(c)
    return "".join(out)


def _bracket_balance(text: str) -> int:
    return _TOML_STRING.sub("", text).count("[") - _TOML_STRING.sub("", text).count("]")


_TOML_MAX_DEPTH = 100


def _toml_too_deep(text: str) -> tuple[int | None, int | None]:
    """Line and column where arrays and inline tables (outside strings and comments) pass _TOML_MAX_DEPTH."""
    depth = 0
    quote = None
    line, column = 1, 0
    comment = False
    for c in text:
        column += 1
        if c == "\n":
            line, column, comment = line + 1, 0, False
            if quote in ('"', "'"):
                quote = None  # a basic or literal string ends at the line's end (else TOML errs first)
            continue
        if comment:
            continue
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            comment = True
        elif c in "[{":
            depth += 1
            if depth > _TOML_MAX_DEPTH:
                return line, column
        elif c in "]}":
            depth -= 1
    return None, None


def _read_toml(text: str, shown: str, is_pyproject: bool) -> tuple[Any, dict[tuple, Location], list[Problem]]:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            return None, {}, [Problem(shown, None, None, "reading TOML on Python 3.10 needs the 'tomli' package")]
    try:
        document = tomllib.loads(text)
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively: `x = [[[[...]]]]` 10,000 deep is legal TOML
        line, column = _toml_too_deep(text)
        return None, {}, [Problem(shown, line, column, f"TOML nested more than {_TOML_MAX_DEPTH} levels deep here "
                                                       "(arrays and inline tables): not read")]
    except tomllib.TOMLDecodeError as exc:
        line = column = None
        m = re.search(r"at line (\d+), column (\d+)", str(exc))
        if m:
            line, column = int(m.group(1)), int(m.group(2))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        return None, {}, [Problem(shown, line, column, f"invalid TOML: {message}")]
    prefix: tuple = ("tool", "vramlint") if is_pyproject else ()
    data: Any = document
    for key in prefix:
        data = data.get(key, {}) if isinstance(data, dict) else {}
    positions = _toml_positions(text, shown, prefix)
    positions.setdefault((), Location(shown, 1, 1))
    return data, positions, []


# --------------------------------------------------------------------------------------------------------------
# Validation with jsonschema, mapped back to lines


def shipped_schema() -> dict[str, Any]:
    from importlib import resources

    package, name = SCHEMA_RESOURCE
    return json.loads(resources.files("vramlint").joinpath(package, name).read_text(encoding="utf-8"))


def validate(data: Any, shown: str, positions: dict[tuple, Location], where: str) -> list[Problem]:
    """Every schema violation in ``data``, each with the file, line and column of the key at fault."""
    schema = shipped_schema()
    # Importing jsonschema costs more than the rest of a one-file run (pre-commit runs on every commit), and a
    # repository's configuration rarely changes: remember which (schema, configuration) pairs were valid.
    marker = _valid_marker(schema, data)
    if marker is not None and marker.exists():
        return []
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    problems: list[Problem] = []
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        problems.extend(_describe(error, shown, positions, where))
    problems.sort(key=lambda p: (p.line or 0, p.column or 0))
    if not problems and marker is not None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
        except OSError:
            pass  # a read-only cache only costs the validation next time
    return problems


def _valid_marker(schema: dict[str, Any], data: Any) -> Any:
    """The cache file whose existence says this configuration was valid against this schema, or None."""
    import hashlib

    from vramlint.models import user_cache_dir  # imported by every run that resolves a model anyway

    try:
        text = json.dumps([schema, data], sort_keys=True, default=str)
    except (TypeError, ValueError):
        return None
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return user_cache_dir() / "valid-config" / digest


def _locate(positions: dict[tuple, Location], path: tuple, value: bool, shown: str) -> Location:
    if value and path + ("<value>",) in positions:
        return positions[path + ("<value>",)]
    probe = path
    while probe:
        if probe in positions:
            return positions[probe]
        probe = probe[:-1]
    return positions.get((), Location(shown, 1, 1))


def _key_label(path: tuple, where: str) -> str:
    if not path:
        return where
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return f"'{out}'"


MAX_UNKNOWN_KEYS_SAID = 200  # one mapping's unknown keys said one by one; the rest in one finding


def _describe(error: Any, shown: str, positions: dict[tuple, Location], where: str) -> list[Problem]:
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = list(error.schema.get("properties", {}))
        out = []
        unknown = [key for key in error.instance if key not in allowed]
        for n, key in enumerate(unknown):
            loc = _locate(positions, path + (key,), value=False, shown=shown)
            if n == MAX_UNKNOWN_KEYS_SAID:
                # each key's closest name is a difflib search: 20,000 unknown keys took 4 s (and made 20,000 findings)
                last = _locate(positions, path + (unknown[-1],), value=False, shown=shown)
                out.append(Problem(shown, loc.line, loc.column, f"{len(unknown) - n:,} more unknown keys in "
                                   f"{_key_label(path, where)}, from line {loc.line} to line {last.line} "
                                   f"(allowed: {', '.join(allowed)})"))
                break
            text = str(key)
            said = shortened(text)
            message = f"unknown key '{said}' in {_key_label(path, where)}"
            hint = _did_you_mean(text[:80], allowed)
            if not path and text in ("rules-dir", "rules_dir"):
                # no such key on purpose (module docstring): code from the scanned repository is never loaded
                message += ("; rules-dir has no configuration key, so a file in the scanned repository cannot make "
                            "vramlint import code: pass --rules-dir on the command line")
            elif hint:
                message += f"; did you mean '{hint}'?"
            elif allowed:
                message += f" (allowed: {', '.join(allowed)})"
            out.append(Problem(shown, loc.line, loc.column, message))
        return out
    if error.validator == "propertyNames":
        loc = _locate(positions, path + (error.instance,), value=False, shown=shown)
        message = f"{error.instance!r} in {_key_label(path, where)} is not a rule id or name"
        return [Problem(shown, loc.line, loc.column, message)]
    loc = _locate(positions, path, value=True, shown=shown)
    return [Problem(shown, loc.line, loc.column, f"{_key_label(path, where)}: {_plain_message(error)}")]


def _plain_message(error: Any) -> str:
    if error.validator == "enum":
        options = ", ".join(str(v) for v in error.validator_value)
        return f"{error.instance!r} is not one of: {options}"
    if error.validator == "type":
        wanted = error.validator_value
        wanted = " or ".join(wanted) if isinstance(wanted, list) else wanted
        article = "an" if str(wanted)[:1] in "aeiou" else "a"
        return f"expected {article} {wanted}, got {_json_type(error.instance)} {error.instance!r}"
    if error.validator == "pattern" and error.validator_value == COMPUTE_CAPABILITY_PATTERN:
        return f"{error.instance!r} is not a compute capability (major.minor, e.g. \"8.9\")"
    if error.validator == "pattern" and isinstance(error.instance, str):
        return f"{error.instance!r} is not a valid name (letters, digits, '-' and '_')"
    if error.validator == "anyOf" and error.context:
        # the alternatives' own messages ("not a compute capability", "expected a number"), not "not valid under
        # any of the given schemas"
        return "; or ".join(dict.fromkeys(_plain_message(sub) for sub in error.context))
    if error.validator == "required":
        return error.message.replace("is a required property", "is required")
    return error.message


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table/mapping"
    return "null" if value is None else type(value).__name__


def _did_you_mean(word: str, choices: list[str]) -> str | None:
    kebab = word.replace("_", "-").lower()
    if kebab in choices:
        return kebab
    import difflib  # only when a key is misspelt

    matches = difflib.get_close_matches(kebab, choices, n=1, cutoff=0.6)
    return matches[0] if matches else None


# --------------------------------------------------------------------------------------------------------------
# From validated data to the dataclasses


def _snake(key: str) -> str:
    return key.replace("-", "_")


def _traffic(data: dict[str, Any] | None) -> TrafficProfile:
    data = data or {}
    return TrafficProfile(**{_snake(k): v for k, v in data.items()})


def _rule_options(data: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    return {rule: {_snake(k): v for k, v in (options or {}).items()} for rule, options in (data or {}).items()}


def config_from_data(data: dict[str, Any]) -> Config:
    """A :class:`Config` from file data that passed :func:`validate` (kebab-case keys)."""
    values = {_snake(k): v for k, v in (data or {}).items()}
    if "traffic" in values:
        values["traffic"] = _traffic(values["traffic"])
    if "rules" in values:
        values["rules"] = _rule_options(values["rules"])
    if "custom_gpus" in values:
        values["custom_gpus"] = [CustomGpu(**{_snake(k): v for k, v in entry.items()}) for entry in values["custom_gpus"]]
    if "overrides" in values:
        overrides = []
        for entry in values["overrides"]:
            item = {_snake(k): v for k, v in entry.items()}
            if "traffic" in item:
                item["traffic"] = _traffic(item["traffic"])
            if "rules" in item:
                item["rules"] = _rule_options(item["rules"])
            overrides.append(Override(**item))
        values["overrides"] = overrides
    return Config(**values)


# --------------------------------------------------------------------------------------------------------------
# Command-line flags


def _split_list(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


def gpu_names(value: str | list[str] | None) -> list[str]:
    """The GPU names of `gpu:` (one name, or a list: the pods may land on any) or --gpu (`A10G,L4` for a list)."""
    if not value:
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def apply_flags(config: Config, args: Any) -> Config:
    """``config`` with the command-line flags in ``args`` (an argparse namespace) applied on top.

    ``--select`` replaces the file's list; ``--ignore`` and ``--exclude`` add to the file's lists.
    """
    out = replace(config, ignore=list(config.ignore), exclude=list(config.exclude), rules_dirs=list(config.rules_dirs),
                  from_flags=set(config.from_flags), notices=list(config.notices))
    select = _split_list(getattr(args, "select", None))
    if select:
        out.select = select
        out.from_flags.add("select")
    out.ignore.extend(_split_list(getattr(args, "ignore", None)))
    # Recorded in from_flags so that a matching `overrides` entry does not take the flag's value back.
    for name in ("fail_on", "gpu", "gpus", "gpu_memory_gib", "vllm_version"):
        value = getattr(args, name, None)
        if value is not None and value != "":
            setattr(out, name, value)
            out.from_flags.add(name)
    if getattr(args, "offline", False):
        out.offline = True
        out.from_flags.add("offline")
    if getattr(args, "refresh_hub_cache", False):
        out.from_flags.add("refresh_hub_cache")
    out.exclude.extend(getattr(args, "exclude", None) or [])
    if getattr(args, "render_helm", False):
        out.render_helm = True
    if getattr(args, "respect_gitignore", None) is not None:  # --respect-gitignore / --no-respect-gitignore
        out.respect_gitignore = args.respect_gitignore
    # The file's overlays (relative to its folder) come first; --values given on the command line win.
    out.values_from_flags = list(getattr(args, "values", None) or [])
    out.helm_values = [_display(os.path.join(config.root, p)) if not os.path.isabs(p) else p
                       for p in config.helm_values] + out.values_from_flags
    out.rules_dirs.extend(getattr(args, "rules_dir", None) or [])
    out.nested = [apply_flags(nested, args) for nested in config.nested]
    if out.fail_on not in FAIL_ON_VALUES:
        raise ValueError(f"--fail-on must be one of {', '.join(FAIL_ON_VALUES)}")
    return out
