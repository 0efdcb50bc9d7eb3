"""`vramlint check PATH...` (also plain `vramlint PATH...`): lint deployments and report findings.

configuration -> scan -> assess -> rules -> severity overrides, select/ignore -> suppressions -> baseline ->
reports -> exit status (0: nothing reached --fail-on; 1: something did; 2: usage or internal error).
"""

from __future__ import annotations

import argparse
import sys

from vramlint.fsread import own_roots
from vramlint.textsafe import eprint

LEVEL_RANK = {"note": 0, "warning": 1, "error": 2}

EPILOG = """\
examples:
  vramlint check deploy/ k8s/
  vramlint check deploy/ --gpu L4 --vllm-version 0.9.2
  vramlint check . --output-format sarif --output-file vramlint.sarif --output-format text
  helm template my-release ./chart -f values.yaml | vramlint check -

exit status: 0 nothing reached --fail-on (default error), 1 a finding did, 2 usage error (a path that does
not exist, a bad option or configuration) or internal failure, 130 interrupted.
"""


class _OutputFormat(argparse.Action):
    """--output-format and --output-file pair up in the order given: each file goes with the format before it."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001 - argparse's signature
        outputs = getattr(namespace, "outputs", None) or []
        if self.dest == "output_format":
            if outputs and outputs[-1][0] is None:
                outputs[-1][0] = values
            else:
                outputs.append([values, None])
        else:
            if outputs and outputs[-1][1] is None:
                outputs[-1][1] = values
            else:
                outputs.append([None, values])
        namespace.outputs = outputs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vramlint.report import FORMATS

    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or directories to lint; '-' reads standard input (default: .)")
    parser.set_defaults(outputs=None)
    conf = parser.add_argument_group("configuration (flags win over the configuration file)")
    conf.add_argument("--config", metavar="FILE",
                      help="configuration file (.vramlint.yaml or pyproject.toml); default: found from the "
                      "scanned paths upward to the repository root")
    conf.add_argument("--gpu", metavar="NAME", help="GPU of servers whose files do not say (T4, A100-80GB, L40S...); "
                      "A10G,L4: the pods may land on any of these (the budget is checked on each)")
    conf.add_argument("--gpus", type=_positive_int, metavar="N", help="GPUs per server when the files do not say")
    conf.add_argument("--gpu-memory-gib", type=float, metavar="GIB",
                      help="total memory (GiB, as CUDA reports it) of the --gpu GPU: needed for one outside the "
                           "catalog, replaces the catalog's total for one in it")
    conf.add_argument("--vllm-version", metavar="X.Y.Z", help="vLLM version when the image tag does not say")
    conf.add_argument("--select", action="append", metavar="RULES",
                      help="only these rules (ids, id prefixes, names; comma-separated; replaces the file's)")
    conf.add_argument("--ignore", action="append", metavar="RULES",
                      help="not these rules (comma-separated; added to the file's)")
    conf.add_argument("--fail-on", choices=("error", "warning", "note", "never"),
                      help="lowest level that makes the exit status 1 (default: error)")
    conf.add_argument("--offline", action="store_true", default=False,
                      help="never ask the Hugging Face Hub for a model's config.json")
    conf.add_argument("--refresh-hub-cache", action="store_true", default=False,
                      help="ask the Hub again for models whose answer vramlint has cached")
    conf.add_argument("--exclude", action="append", metavar="GLOB", help="skip paths matching GLOB (repeatable)")
    conf.add_argument("--rules-dir", action="append", metavar="DIR",
                      help="also load the rule modules in DIR (your own rules; never loaded unless given)")
    add_helm_arguments(conf)
    out = parser.add_argument_group("output")
    out.add_argument("--output-format", "--format", dest="output_format", action=_OutputFormat, choices=FORMATS,
                     help="text (default), json, sarif, github, markdown, gitlab (Code Quality) or junit (XML); repeatable, each paired with the "
                     "--output-file after it (a format without a file goes to standard output)")
    out.add_argument("--output-file", dest="output_file", action=_OutputFormat, metavar="FILE",
                     help="write the preceding --output-format to FILE (its folder is created; without a "
                     "format, .sarif, .json and .md files get that format, others text)")
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                     help="colour text output (auto: on a terminal, unless NO_COLOR is set)")
    out.add_argument("--show-suppressed", action="store_true",
                     help="list suppressed findings in text output too (json and sarif always carry them)")
    out.add_argument("-q", "--quiet", action="store_true",
                     help="text output: only the summary line when something is found, nothing when all is clean")
    out.add_argument("--statistics", action="store_true",
                     help="text output: the number of findings per rule instead of each finding")
    out.add_argument("--exit-zero", action="store_true",
                     help="exit 0 even when findings reach --fail-on (2 is still a usage or internal error)")
    out.add_argument("--stdin-filename", metavar="PATH",
                     help="the path findings from standard input ('-') are reported at (and its overrides "
                     "applied to), e.g. the chart `helm template` rendered")
    fixing = parser.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", default=False,
                        help="apply the safe fixes in place, then report what is left")
    fixing.add_argument("--unsafe-fixes", action="store_true", default=False,
                        help="with --fix or --diff: also the fixes that change behaviour (a shorter context, ...)")
    fixing.add_argument("--diff", action="store_true", default=False,
                        help="print the fixes as a unified diff and change nothing (exit 1 when there is one)")
    base = parser.add_argument_group("baseline")
    base.add_argument("--baseline", metavar="FILE", help="report only findings that are not in this baseline")
    base.add_argument("--write-baseline", metavar="FILE",
                      help="record the current findings in FILE (then they are reported as suppressed)")


def add_helm_arguments(group) -> None:  # noqa: ANN001 - an argparse parser or argument group
    """`--values FILE`, `--render-helm` and `--[no-]respect-gitignore`, shared by check, inventory and explain."""
    group.add_argument("--values", action="append", metavar="FILE",
                       help="Helm values file applied to every scanned chart, as helm's -f (repeatable; later "
                       "files win)")
    group.add_argument("--render-helm", action="store_true", default=False,
                       help="render charts with Helm (helm-python-sdk, else a helm binary on PATH) when available")
    group.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="do not walk into what the git work tree's .gitignore files ignore (rendered output, "
                       "vendored charts); paths named on the command line are read even so (default: the "
                       "configuration's respect-gitignore, else on)")


def helm_settings(args, config) -> tuple[list[str], bool, list]:  # noqa: ANN001
    """(values files, render, notices) for a command that does not apply every check flag: the configuration's
    `helm-values` and `render-helm` with `--values` and `--render-helm` over them, and what of the configuration
    was not applied (for the command's output). Sets the run's roots (`set_run_roots`)."""
    from vramlint.config import apply_flags

    flags = argparse.Namespace(values=getattr(args, "values", None), render_helm=getattr(args, "render_helm", False))
    merged = apply_flags(config, flags)
    check_values_files(merged.helm_values)
    set_run_roots(list(getattr(args, "paths", None) or ["."]), merged)
    return merged.helm_values, merged.render_helm, list(merged.notices)


def set_run_roots(paths: list[str], config) -> None:  # noqa: ANN001
    """Files are read only under the paths named, the `--values` files and the configuration file's folder
    (the repository it sits in): `vramlint.fsread`. The configuration's custom GPUs are known from here on."""
    from vramlint import fsread, gpus

    gpus.use_custom(config.gpu_declarations())

    roots = [p for p in paths if p != "-"] + list(config.values_from_flags)
    if config.file:
        roots.append(config.root)
    fsread.set_run_roots(roots)


def check_values_files(files) -> None:  # noqa: ANN001
    import os

    from vramlint.cli import UsageError

    for path in files or []:
        if not os.path.isfile(path):
            if os.path.exists(path):  # a FIFO or a device (/dev/stdin) would block or never end: not read
                raise UsageError(f"--values {path}: not a regular file")
            raise UsageError(f"--values {path}: no such file")


def check_paths(paths: list[str]) -> None:
    """A path named on the command line that does not exist is a usage error (a typo in a CI path must not
    pass as "nothing found"); pre-commit only passes files that exist."""
    import os

    from vramlint.cli import UsageError

    if paths.count("-") > 1:
        raise UsageError("'-' (standard input) can be given only once")
    for path in paths:
        if path == "-" or os.path.exists(path):
            continue
        if os.path.islink(path):
            raise UsageError(f"{path}: broken symbolic link (it points to {os.readlink(path)}, which does not exist)")
        raise UsageError(f"{path}: no such file or directory{_did_you_mean_path(path)}")


def widen_named_paths(paths: list[str]) -> list[str]:
    """Files that mean nothing alone stand for what they govern (pre-commit passes only the changed files):
    a Helm partial (`templates/_helpers.tpl`) for its chart, a configuration file (`.vramlint.yaml`,
    `pyproject.toml` with `[tool.vramlint]`) for its folder. A `pyproject.toml` without that table is dropped:
    it configures something else."""
    import os

    from vramlint.config import CONFIG_YAML_NAMES, PYPROJECT, _pyproject_has_table

    out: list[str] = []
    for path in paths:
        name = os.path.basename(path)
        widened = path
        if path != "-" and os.path.isfile(path):
            if name in CONFIG_YAML_NAMES:
                widened = os.path.dirname(path) or "."
            elif name == PYPROJECT:
                if not _pyproject_has_table(path):
                    continue
                widened = os.path.dirname(path) or "."
            elif name.endswith(".tpl"):
                widened = _chart_folder(path) or path
        if widened not in out:
            out.append(widened)
    if not out:  # only a pyproject.toml of another tool: nothing of vramlint's changed
        return []
    # a file inside a folder that is also scanned is read once, through the folder, when the folder's walk reads
    # it (YAML and template files); a launch script named beside its folder is read as named
    from vramlint.discover import kind_of

    folders = [os.path.abspath(p) for p in out if p != "-" and os.path.isdir(p)]
    return [p for p in out if p == "-" or os.path.isdir(p) or kind_of(os.path.basename(p)) is None
            or not any(os.path.abspath(p).startswith(f + os.sep) for f in folders)]


def _chart_folder(path: str) -> str | None:
    import os

    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(4):  # templates/_helpers.tpl, templates/sub/x.tpl
        if os.path.isfile(os.path.join(folder, "Chart.yaml")) or os.path.isfile(os.path.join(folder, "Chart.yml")):
            from vramlint.discover import display_path

            return display_path(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _did_you_mean_path(path: str) -> str:
    import difflib
    import os

    trimmed = path.rstrip("/\\") or path
    parent, name = os.path.split(trimmed)
    try:
        siblings = os.listdir(parent or ".")
    except OSError:
        return ""
    close = difflib.get_close_matches(name, siblings, n=1, cutoff=0.7)
    if not close:
        return ""
    suggestion = os.path.join(parent, close[0]) + ("/" if path.endswith(("/", "\\")) else "")
    return f" (did you mean {suggestion}?)"


def read_stdin(paths: list[str]) -> str | None:
    """Standard input's text when `-` is among the paths. Empty input is an error: `helm template ... |
    vramlint check -` whose first command failed must not pass as "nothing found"."""
    if "-" not in paths:
        return None
    from vramlint.cli import UsageError
    from vramlint.fsread import MAX_FILE_BYTES

    text = sys.stdin.read(MAX_FILE_BYTES + 1)  # the cap of a file: `cat /dev/zero |` must not fill memory
    if len(text) > MAX_FILE_BYTES:
        raise UsageError(f"standard input ('-') is longer than {MAX_FILE_BYTES} characters, the limit of one "
                         "input: write it to files and lint the folder")
    if not text.strip():
        raise UsageError("standard input ('-') is empty: nothing to lint. If a command is piped in "
                         "(`helm template ... | vramlint check -`), check that it succeeded")
    return text


def print_scan_notes(inventory) -> None:  # noqa: ANN001
    """Notes said once per run (Helm rendering skipped, template text in a file), on standard error."""
    for note in inventory.notes:
        eprint(f"vramlint: note: {note}")
    for skipped in inventory.skipped:
        eprint(f"vramlint: note: {skipped.file}: skipped ({skipped.reason})")


# Why a file was not read, when it may hold servers that then go unchecked (reported as input errors, which
# fail the run as ruff's E902 does); an empty file, a binary file or a symbolic link loop hides nothing.
_UNREADABLE = ("permission denied", "cannot read", "not UTF-8", "cannot list directory")


def unreadable_as_problems(inventory) -> None:  # noqa: ANN001
    """Move the files that could not be read from `skipped` to `problems` (VRL102), naming the fix."""
    import re

    from vramlint.model import Problem
    from vramlint.textfile import GIT_CRYPT_REASON

    kept = []
    # files a link out of the tree was already said for (by what refers to them: a Chart.yaml, a values file)
    said_outside = {p.file for p in inventory.problems if "outside the scanned tree" in p.message}
    # links said on the line that names them (a Terraform release's `chart = "./link"`), or a folder below one
    named_links = [p.outside_link for p in inventory.problems if p.outside_link]
    for skipped in inventory.skipped:
        if skipped.reason.startswith("not UTF-8 (UTF-32"):
            # refused by kubectl as a file with NUL bytes is (below): the same level, since what the file would
            # be to another tool is not known
            inventory.problems.append(Problem(
                skipped.file, 1, None, f"{skipped.reason}: the file was not read, so any vLLM server in it is not "
                "checked (save it as UTF-8)", level="warning"))
        elif skipped.reason.startswith("not UTF-8") and _script_name(skipped.file):
            # bash reads bytes, not UTF-8: a Latin-1 comment does not stop the script, so its servers may well
            # start; vramlint not reading it is an unknown, not a refusal to fail CI on (walkscripts26)
            inventory.problems.append(Problem(
                skipped.file, None, None,
                f"{skipped.reason}: bash runs it, but vramlint reads only UTF-8 text, so any vLLM server in it is not "
                "checked (save it as UTF-8, or leave it out with --exclude)", level="warning"))
        elif skipped.reason.startswith(_UNREADABLE):
            inventory.problems.append(Problem(
                skipped.file, None, None,
                f"{skipped.reason}: the file was not read, so any vLLM server in it is not checked "
                "(make it readable as UTF-8 text, or leave it out with --exclude)"))
        elif "outside the scanned tree" in skipped.reason:
            # a link out of the repository: what it points to is not the repository's to lint (vramlint.fsread);
            # said once, when what refers to it (a chart's Chart.yaml, a values file) has not said it already
            if skipped.file not in said_outside and not any(
                    link == skipped.file or link.startswith(skipped.file + "/") for link in named_links):
                said_outside.add(skipped.file)
                inventory.problems.append(Problem(skipped.file, None, None, skipped.reason, level="note"))
        elif skipped.reason.startswith("file too large"):
            # servers in it go unchecked: said, at a level that does not fail the default gate
            inventory.problems.append(Problem(skipped.file, None, None, f"{skipped.reason}: the file was not read, "
                                              "so any vLLM server in it is not checked", level="warning"))
        elif skipped.reason == GIT_CRYPT_REASON:
            # encrypted by design, like a `.env` that is not committed: an unknown, and the same words for every
            # such file, so that the run says it once with the count (vramlint.fold)
            inventory.problems.append(Problem(
                skipped.file, None, None, "encrypted with git-crypt (the file holds git-crypt's \\0GITCRYPT\\0 header "
                "and ciphertext): not read, so any vLLM server in it is not checked; run `git-crypt unlock` before "
                "vramlint to check it, or leave it out with --exclude", level="note"))
        elif skipped.reason.startswith("binary file") and skipped.file.lower().endswith((".yaml", ".yml", ".json")):
            # named as a deployment file but holding NUL bytes (UTF-16 without a byte-order mark, or garbage):
            # kubectl refuses it too; said on the line of the first NUL
            m = re.search(r"on line (\d+)", skipped.reason)
            inventory.problems.append(Problem(
                skipped.file, int(m.group(1)) if m else None, None,
                f"{skipped.reason}, which YAML does not allow: the file was not read, so any vLLM server in it is "
                "not checked (UTF-16 needs a byte-order mark)", level="warning"))
        elif skipped.reason.startswith("binary file") and _script_name(skipped.file):
            # a shell script (a Slurm job, or a file without an extension named on the command line) with a NUL
            # byte: bash refuses one on its first line ("cannot execute binary file", check_binary_file) and
            # drops the others as it reads, so the servers of such a script may run unchecked (hostile26: a named
            # `serve` with a NUL said only on stderr)
            m = re.search(r"on line (\d+)", skipped.reason)
            line = int(m.group(1)) if m else None
            said = ("bash refuses to run a script with a NUL byte on its first line (\"cannot execute binary "
                    "file\"), and vramlint does not read it" if line == 1 else
                    "bash runs it, dropping the NUL bytes, but vramlint does not read a file with NUL bytes, so any "
                    "vLLM server in it is not checked (remove the NUL bytes)")
            inventory.problems.append(Problem(skipped.file, line, None, f"{skipped.reason}: {said}", level="note"))
        elif skipped.reason.endswith("not a regular file"):
            # a FIFO or a device where a deployment file was expected: never opened, so never blocks
            inventory.problems.append(Problem(skipped.file, None, None, f"{skipped.reason}: not read",
                                              level="warning"))
        else:
            kept.append(skipped)
    inventory.skipped = kept


def _script_name(name: str) -> bool:
    """A shell script by its name: a script extension, or no extension (named on the command line, or taken
    by the walk for its shell `#!`)."""
    from vramlint.extract.shell_scripts import SCRIPT_EXTENSIONS

    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.lower().endswith(SCRIPT_EXTENSIONS) or ("." not in base and not base.startswith("<"))


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


# ----------------------------------------------------------------------------------------------------------
# The run (everything below imports lazily: `add_arguments` runs for every command)


def _format_of(file: str | None) -> str:
    """The format of an --output-file given without --output-format: its extension says (x.sarif), else text."""
    suffix = (file or "").rsplit(".", 1)[-1].lower()
    return {"sarif": "sarif", "json": "json", "md": "markdown", "xml": "junit"}.get(suffix, "text")


def _outputs(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    import os

    from vramlint.cli import UsageError

    pairs = [(fmt or _format_of(file), file) for fmt, file in (args.outputs or [])] or [("text", None)]
    for fmt, file in pairs:
        if file not in (None, "-") and os.path.isdir(file):
            raise UsageError(f"--output-file {file}: is a folder; name the file to write the {fmt} report to")
    to_stdout = [fmt for fmt, file in pairs if file in (None, "-")]
    if len(to_stdout) > 1:
        raise UsageError(
            f"only one output format can go to standard output (got {', '.join(to_stdout)}); "
            "give the others an --output-file"
        )
    return pairs


class FileReader:
    """Scanned files' lines for suppressions and SARIF regions; standard input from memory.

    Only the files read last are kept (KEEP_FILES): suppressions read each file once, and reports ask for the
    lines of findings sorted by file, so a file is read again at most once more, while a run over 10,000
    files no longer holds every file's lines at once (about 60 MB of the run's peak at 10,000 corpus files).
    """

    KEEP_FILES = 8

    def __init__(self, stdin_name: str, stdin_text: str | None) -> None:
        self.cache: dict[str, list[str] | None] = {}  # the files read last, oldest first
        self.unquoted: dict[str, str] = {}  # files whose lines could not be quoted, and why
        self.stdin_name = stdin_name
        self.stdin_lines = None
        if stdin_text is not None:
            from vramlint.textfile import source_lines

            self.stdin_lines = source_lines(stdin_text, stdin_name)

    def __call__(self, file: str) -> list[str] | None:
        if self.stdin_lines is not None and file == self.stdin_name:
            return self.stdin_lines
        cache = self.cache
        if file in cache:
            lines = cache[file] = cache.pop(file)  # now the newest
            return lines
        from vramlint.fsread import Refusal, read_text

        # lines are quoted in reports (SARIF snippets): only from files the run may read
        try:
            text = read_text(file, errors="replace")
            if isinstance(text, Refusal) or text.startswith("\x00GITCRYPT\x00"):
                lines = cache[file] = None  # git-crypt's ciphertext: nothing to quote
            else:
                from vramlint.textfile import packed_source_lines

                lines = cache[file] = packed_source_lines(text, file)
        except MemoryError:
            # the run's findings are made: a file whose lines no longer fit is not quoted, and that is said
            # (seed 1818 of the fuzz benchmark lost its whole report here, exit 2)
            text = None
            lines = cache[file] = None
            self.unquoted[file] = "out of memory while reading it again to quote its lines"
        if len(cache) > self.KEEP_FILES:
            del cache[next(iter(cache))]
        return lines


def rule_matches(selector: str, rule) -> bool:
    """A selector (id, id prefix, name, ALL) matches ``rule``."""
    text = selector.strip()
    upper = text.upper()
    if upper == "ALL" or upper == rule.id or text.lower() == rule.name:
        return True
    return upper[:1].isalpha() and rule.id.startswith(upper) and upper.rstrip("0123456789") == \
        rule.id.rstrip("0123456789")


def is_meta(rule_id: str) -> bool:
    # vramlint's own findings (a crashed rule, input errors, suppressions) are not deselected by `select`:
    # hiding them would hide that part of the input was not checked. `ignore` still turns them off.
    from vramlint.rule import INTERNAL_RULE_ID

    return rule_id == INTERNAL_RULE_ID or (rule_id.startswith("VRL") and rule_id[3:].isdigit()
                                           and int(rule_id[3:]) >= 100)


class Selection:
    """Per file: which rules run, at which level, and the --fail-on level (overrides applied)."""

    def __init__(self, config, rules) -> None:
        self.config = config
        self.rules = {r.id: r for r in rules}
        self._per_file: dict[str, object] = {}

    def config_for(self, file: str):
        cfg = self._per_file.get(file)
        if cfg is None:
            cfg = self.config.for_file(file)
            self._per_file[file] = cfg
        return cfg

    def enabled(self, rule_id: str, file: str) -> bool:
        rule = self.rules.get(rule_id)
        if rule is None:
            return True
        cfg = self.config_for(file)
        if cfg.select is not None and not is_meta(rule_id) and not any(rule_matches(s, rule) for s in cfg.select):
            return False
        if any(rule_matches(s, rule) for s in cfg.ignore):
            return False
        return self.level(rule_id, file, rule.level) != "off"

    def level(self, rule_id: str, file: str, current: str) -> str:
        rule = self.rules.get(rule_id)
        cfg = self.config_for(file)
        if rule is None or not cfg.severity:
            return current
        for key in (rule.id, rule.name):
            for written, level in cfg.severity.items():
                if written == key or (written.upper() == key and key == rule.id):
                    return level
        return current

    def fails(self, finding) -> bool:
        fail_on = self.config_for(finding.location.file).fail_on
        if fail_on == "never":
            return False
        return LEVEL_RANK.get(finding.level, 0) >= LEVEL_RANK[fail_on]


COMMAND_LINE = "(command line)"


def _refusals_on_the_configuration_line(inventory, config) -> None:  # noqa: ANN001
    """A `helm-values:` file of the configuration that was not read (outside the tree, a FIFO, missing) is said on
    the configuration's line that names it, not at 1:1 of a file the repository may not hold."""
    from dataclasses import replace

    from vramlint.discover import display_path

    named = config.helm_values[:len(config.helm_values) - len(config.values_from_flags)]
    where = {}
    for index, shown in enumerate(named):
        loc = config.location_of(("helm-values", index))
        if loc is not None:
            # an absolute path is kept as written, and its problem is on the path as reports show it
            where.setdefault(shown, loc)
            where.setdefault(display_path(shown), loc)
    if not where:
        return
    for i, problem in enumerate(inventory.problems):
        loc = where.get(problem.file)
        if loc is not None and problem.line is None and problem.message.startswith("values file "):
            inventory.problems[i] = replace(problem, file=loc.file, line=loc.line, column=loc.column)


def print_configuration_problems(problems) -> None:  # noqa: ANN001
    from vramlint.config import format_problem

    for problem in problems:
        if problem.file == COMMAND_LINE:
            eprint(f"vramlint: error: {problem.message}")
        else:
            eprint(f"vramlint: configuration error: {format_problem(problem)}")


def configuration_rule_problems(config, rules) -> list:
    """:func:`validate_rule_references` of the configuration and of every nested configuration under it."""
    problems = validate_rule_references(config, rules)
    for nested in config.nested:
        problems.extend(validate_rule_references(nested, rules))
    return problems


def validate_rule_references(config, rules) -> list:
    """Problems (with file and line) for rule ids, names and options in the configuration that match nothing."""
    from vramlint.model import Problem
    from vramlint.rule import RuleOptionError

    problems = []
    candidates = [r.id for r in rules] + [r.name for r in rules]

    def where(path: tuple):
        loc = config.location_of(path)
        return (loc.file, loc.line, loc.column) if loc else (COMMAND_LINE, None, None)

    def unknown(selector: str, path: tuple, what: str) -> None:
        if any(rule_matches(selector, r) for r in rules):
            return
        import difflib  # only for a selector that matches nothing

        close = difflib.get_close_matches(selector.upper() if selector[:1].isupper() else selector, candidates, 1)
        hint = f"; did you mean {close[0]}?" if close else "; `vramlint rules` lists them"
        file, line, col = where(path)
        if file == COMMAND_LINE and what in ("select:", "ignore:"):
            what = "--" + what.rstrip(":")
        problems.append(Problem(file, line, col, f"{what} {selector!r} matches no rule{hint}"))

    scopes = [((), config)] + [(("overrides", i), o) for i, o in enumerate(config.overrides)]
    for prefix, scope in scopes:
        for key in ("select", "ignore"):
            for i, selector in enumerate(getattr(scope, key) or []):
                unknown(selector, prefix + (key, i), f"{key}:")
        for selector in scope.severity or {}:
            unknown(selector, prefix + ("severity", selector), "severity:")
        for rule_key, options in (scope.rules or {}).items():
            rule = next((r for r in rules if r.id == rule_key.upper() or r.name == rule_key), None)
            if rule is None:
                unknown(rule_key, prefix + ("rules", rule_key), "rules:")
                continue
            for option, value in options.items():
                try:
                    rule.merge_options({option: value})
                except RuleOptionError as exc:
                    kebab = option.replace("_", "-")
                    path = prefix + ("rules", rule_key, kebab)
                    if config.positions and path not in config.positions:
                        path = prefix + ("rules", rule_key, option)
                    file, line, col = where(path)
                    problems.append(Problem(file, line, col, str(exc)))
    return problems


def dedupe_findings(findings: list) -> list:
    """One finding per (rule, place, message).

    A chart is linted once with its `values.yaml` and once per overlay beside it (`values-prod.yaml`): each is
    a release of its own, but a value they share is one line to fix, so its finding is reported once, naming
    the values sets that gave it. A kustomize base built by several overlays is the same, one finding per rule
    and line whatever values each overlay gives it (another vLLM release, another GPU): the most severe of them,
    naming the overlays (`?overlay=` in the server's key, `vramlint.kustomize`).
    """
    kept: dict[tuple, object] = {}
    variants: dict[tuple, list[str]] = {}
    differ: set[tuple] = set()  # overlay findings merged on one line whose messages (numbers) differ
    rank = {"error": 3, "warning": 2, "note": 1}
    for finding in findings:
        loc = finding.location
        key = (finding.rule_id, loc.file, loc.line, loc.column, finding.message)
        variant = None
        if finding.server_key and "?overlay=" in finding.server_key:
            variant = "overlay " + finding.server_key.rsplit("?overlay=", 1)[1]
            # one rule on one line is one root cause, whichever overlay's values (another vLLM, another GPU) it
            # is judged with: said once, at the most severe of the overlays' verdicts
            key = (finding.rule_id, loc.file, loc.line, loc.column, "?overlay")
        elif finding.server_key and "?values=" in finding.server_key:
            variant = finding.server_key.rsplit("?values=", 1)[1]
        elif finding.server_key:
            variant = "values.yaml"
        if key not in kept:
            kept[key] = finding
            variants[key] = [variant] if variant else []
            continue
        if key[-1] == "?overlay":
            first = kept[key]
            if finding.message != first.message:
                differ.add(key)
            if rank.get(finding.level, 0) > rank.get(first.level, 0):
                kept[key] = finding
                if variant in variants[key]:
                    variants[key].remove(variant)
                variants[key].insert(0, variant)  # the message shown is this overlay's
                continue
        if variant and variant not in variants[key]:
            variants[key].append(variant)
    for key, finding in kept.items():
        names = variants[key]
        overlays = [n[len("overlay "):] for n in names if n.startswith("overlay ")]
        if overlays:
            # a kustomize base's line judged through the overlays that include it: which builds say it
            if len(overlays) == 1:
                finding.message += f" (through overlay {overlays[0]})"
            elif key in differ:
                finding.message += (f" (through overlay {overlays[0]}; also through {', '.join(overlays[1:])}, "
                                    "with their own values)")
            else:
                finding.message += f" (the same through each of these overlays: {', '.join(overlays)})"
            continue
        if len(names) > 1 and any(n != "values.yaml" for n in names):
            finding.message += f" (the same with each of these values: {', '.join(names)})"
    return list(kept.values())


def print_hub_notes() -> None:
    """The Hub could not be reached: said once per run, on standard error, after the models were resolved."""
    import sys as _sys

    models = _sys.modules.get("vramlint.models")
    for note in models.hub_notes() if models else []:
        print(f"vramlint: note: {note}", file=sys.stderr)


def assess_all(servers, config):
    """Assess servers, grouping them by the resolve options their files get (overrides may differ)."""
    import sys as _sys

    from vramlint.assess import assess

    if "vramlint.models" in _sys.modules:
        _sys.modules["vramlint.models"].begin_run()

    groups: dict[str, tuple[object, list]] = {}
    per_file: dict[str, tuple[object, str]] = {}  # a file's options, once: 10,000 servers of one file ask once
    for server in servers:
        known = per_file.get(server.file)
        if known is None:
            options = config.resolve_options(server.file)
            known = per_file[server.file] = (options, repr(options))
        options, key = known
        groups.setdefault(key, (options, []))[1].append(server)
    out = []
    for options, members in groups.values():
        out.extend(assess(members, options))
    return out


def _run_rules(assessments, rules, selection):
    """Run the rules; servers whose files get other rule options (overrides) are checked with those."""
    import json
    from dataclasses import replace

    from vramlint.rule import RuleContext, run_rules

    def context(cfg) -> RuleContext:
        return RuleContext(rule_options={k: dict(v) for k, v in cfg.rules.items()}, traffic=replace(cfg.traffic))

    # Only rules enabled for some scanned file run at all; findings are filtered per file afterwards.
    files = {a.server.file for a in assessments} or {"."}
    runnable = [r for r in rules if any(selection.enabled(r.id, f) for f in files)]
    groups: dict[str, tuple[object, list]] = {}
    keys: dict[int, tuple[object, str]] = {}  # by configuration object: 10,000 servers of one file share one
    for assessment in assessments:
        cfg = selection.config_for(assessment.server.file)
        known = keys.get(id(cfg))
        if known is None or known[0] is not cfg:
            known = keys[id(cfg)] = (cfg, json.dumps([cfg.rules, vars(cfg.traffic)], sort_keys=True, default=str))
        groups.setdefault(known[1], (cfg, []))[1].append(assessment)
    if len(groups) <= 1:
        cfg = next(iter(groups.values()))[0] if groups else selection.config
        return run_rules(assessments, runnable, context(cfg))
    findings = []
    per_server = [replace(r, check_all=None) for r in runnable if r.check is not None]
    for cfg, members in groups.values():
        findings.extend(run_rules(members, per_server, context(cfg)))
    across = [replace(r, check=None) for r in runnable if r.check_all is not None]
    findings.extend(run_rules(assessments, across, context(selection.config)))
    return findings


@own_roots
def run(args: argparse.Namespace) -> int:
    import gc

    # What the scan gives (servers, documents, records) lives until the report is written: run() freezes it
    # (see there), out of the garbage collector's passes over the assessment's and rules' short-lived objects;
    # the end of the command gives it back, unless a caller had frozen objects itself.
    frozen_before = gc.get_freeze_count()
    try:
        return _run(args)
    finally:
        if not frozen_before:
            gc.unfreeze()


def _run(args: argparse.Namespace) -> int:
    import gc
    import os
    import time

    from vramlint.cli import UsageError

    started = time.perf_counter()
    if "vramlint.fixes" in sys.modules:
        # texts read by an earlier run in this process (tests, the fuzz benchmark, a library caller) may have
        # changed since: fixes are made on what this run reads
        sys.modules["vramlint.fixes"].forget_texts()
    if args.fix or args.diff or "vramlint.fixes" in sys.modules:
        from vramlint.fixes import keep_all_texts

        keep_all_texts(bool(args.fix or args.diff))  # fixes applied to the texts they were made on
    outputs = _outputs(args)
    paths = list(args.paths) or ["."]
    check_paths(paths)
    if (args.fix or args.diff) and "-" in paths:
        raise UsageError("--fix and --diff rewrite files: give paths, not '-' (standard input)")
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UsageError("--unsafe-fixes goes with --fix or --diff")
    paths = widen_named_paths(paths)
    if args.baseline and args.write_baseline and os.path.abspath(args.baseline) != os.path.abspath(args.write_baseline):
        raise UsageError("--baseline and --write-baseline name different files; give one of them")

    config, rules, problems = usable_configuration(args, paths)
    if problems:
        print_configuration_problems(problems)
        return 2

    from vramlint.meta import assessment_failures, input_error, server_notes
    from vramlint.scan import STDIN_NAME, scan

    stdin_text = read_stdin(paths)
    stdin_name = args.stdin_filename or STDIN_NAME
    if args.stdin_filename and "-" not in paths:
        raise UsageError("--stdin-filename names standard input's findings: give '-' among the paths too")
    check_values_files(config.values_from_flags)  # the configuration's own are said on its lines (scan)
    inventory = scan(paths, exclude=config.exclude_patterns(), stdin_text=stdin_text, stdin_name=stdin_name,
                     respect_gitignore=config.respect_gitignore, walk_scripts=config.walk_scripts,
                     values_files=config.helm_values, render_helm=config.render_helm,
                     vllm_version=config.vllm_version_for, root_values=config.values_from_flags)
    gc.freeze()
    _refusals_on_the_configuration_line(inventory, config)
    inventory.problems.extend(config.notices)
    noticed = {n.file for n in config.notices}  # a configuration file not read is said once, by its notice
    inventory.skipped = [s for s in inventory.skipped if s.file not in noticed]
    unreadable_as_problems(inventory)
    if not args.quiet:
        print_scan_notes(inventory)
    # The assessments and findings live until the report, as what the scan gave does: made with the cyclic
    # collector off (their budgets and requirements hold no cycle to collect), and frozen with the rest; left on,
    # each young collection walked the budgets made since the one before (11,363 KServe servers: 0.08 CPU-s)
    collecting = gc.isenabled()
    gc.disable()
    try:
        assessments = assess_all(inventory.servers, config)
        if not args.quiet:
            print_hub_notes()
        selection = Selection(config, rules)
        findings = _run_rules(assessments, [r for r in rules if r.check or r.check_all], selection)
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
    if not (args.fix or args.diff):
        # the texts and parses the fixes were made on are not looked at again (the report reads its own lines):
        # given back before the reports are built (a 2 MB file's second parse was 84 MB of a 381 MB peak)
        if "vramlint.fixes" in sys.modules:
            sys.modules["vramlint.fixes"].forget_texts()
        if "vramlint.yamlload" in sys.modules:
            sys.modules["vramlint.yamlload"].forget_shared()
    findings.extend(input_error(p) for p in inventory.problems)
    findings.extend(assessment_failures(assessments))
    findings.extend(server_notes(inventory.servers))
    findings = dedupe_findings(findings)

    kept = []
    for finding in findings:
        file = finding.location.file
        finding.level = selection.level(finding.rule_id, file, finding.level)
        if finding.level == "off" or not selection.enabled(finding.rule_id, file):
            continue
        kept.append(finding)

    from vramlint.suppress import apply_suppressions

    reader = FileReader(stdin_name, stdin_text)
    # files the scan found no "vramlint" in are not read again for comments (standard input's name is its own)
    uncommented = inventory.uncommented if stdin_text is None else inventory.uncommented - {stdin_name}
    findings = apply_suppressions(kept, inventory.servers, reader, rules, selection.enabled, uncommented=uncommented)
    findings = [f for f in findings if selection.enabled(f.rule_id, f.location.file)]
    for finding in findings:
        finding.level = selection.level(finding.rule_id, finding.location.file, finding.level)
    findings.sort(key=lambda f: (f.location.file, f.location.line, f.location.column, f.rule_id))

    baseline_file = args.baseline or args.write_baseline
    if args.write_baseline or args.baseline:
        from vramlint.baseline import BaselineError, apply_baseline, write_baseline

        try:
            if args.write_baseline:
                count = write_baseline(args.write_baseline, findings)
                eprint(f"vramlint: wrote {count} finding(s) to the baseline {args.write_baseline}")
            apply_baseline(baseline_file, findings)
        except BaselineError as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"{baseline_file}: {exc.strerror or exc}") from None

    if args.fix or args.diff:
        from vramlint.fixing import apply_fixes

        changed = apply_fixes(findings, unsafe=args.unsafe_fixes, write=not args.diff, skip={stdin_name})
        if args.diff:
            sys.stdout.write(changed.diff)
            sys.stdout.flush()
            eprint(changed.summary(dry_run=True))
            return 1 if changed.fixes_applied else 0
        eprint(changed.summary(dry_run=False))
        if changed.files:
            # the files changed: check them again, and report what is left (a fix that did not remove its
            # finding, or added one, shows here)
            from vramlint.fixes import forget_texts

            forget_texts()
            again = argparse.Namespace(**{**vars(args), "fix": False, "diff": False, "unsafe_fixes": False})
            return run(again)

    from vramlint.fold import fold_repeated

    # the same advice at many places is said once, naming them all; after the suppressions and the baseline, which
    # match each place on its own (vramlint.fold)
    findings = fold_repeated(findings)
    failed = any(selection.fails(f) for f in findings if not f.suppressed)
    exit_status = 1 if failed and not args.exit_zero else 0

    from vramlint.report import Report, render, repository_root, use_color, write

    report = Report(
        findings=findings,
        assessments=assessments,
        rules=rules,
        problems=inventory.problems,
        skipped=inventory.skipped,
        files_scanned=inventory.files_scanned,
        fail_on=config.fail_on,
        exit_status=exit_status,
        show_suppressed=args.show_suppressed,
        quiet=args.quiet,
        statistics=args.statistics,
        config_file=config.file,
        baseline_file=baseline_file,
        source_root=repository_root("."),
        read_lines=reader,
    )
    from vramlint.unchecked import summarise

    report.unchecked = summarise(assessments, enabled=lambda file: selection.enabled("VRL010", file))
    report.elapsed_s = time.perf_counter() - started
    stdout_format = None
    write_errors = []
    for fmt, file in outputs:
        if file in (None, "-"):
            stdout_format = fmt
            continue
        # JSON is written a server at a time and SARIF a result at a time (`write`): never held whole
        text = None if fmt in ("json", "sarif") else render(fmt, report, color=args.color == "always")
        try:
            # a missing folder is created, as ruff does for its --output-file (CI writes to reports/ etc.)
            _make_folder(os.path.dirname(file))
            # errors: a name that is not UTF-8 (surrogate escapes) left by a format's own encoder is written escaped
            with open(file, "w", encoding="utf-8", errors="backslashreplace") as fh:
                if text is None:
                    write(fmt, report, fh)
                else:
                    fh.write(text)
        except OSError as exc:
            # the other reports are still written: one bad path should not lose the SARIF upload
            write_errors.append(f"--output-file {file}: cannot write the {fmt} report: {exc.strerror or exc}")
    if stdout_format is not None:
        write(stdout_format, report, sys.stdout, color=use_color(args.color, sys.stdout))
        sys.stdout.flush()
    if write_errors:
        for message in write_errors:
            eprint(f"vramlint: error: {message}")
        return 2
    return exit_status


def _make_folder(folder: str) -> None:
    import os

    probe = folder  # the nearest folder that exists: a file there would make makedirs say only "File exists"
    while probe and not os.path.exists(probe):
        parent = os.path.dirname(probe)
        probe = parent if parent != probe else ""
    if probe and not os.path.isdir(probe):
        raise NotADirectoryError(0, f"{probe} is a file, not a folder")
    if folder:
        os.makedirs(folder, exist_ok=True)


def usable_configuration(args, paths, with_rules: bool = True):  # noqa: ANN001, ANN201
    """(configuration with the flags applied, the rules, problems) for a run over ``paths``.

    The problems are those of a file named by --config (a usage error: exit 2). A configuration file found in the
    scanned tree is the repository's data, often a pull request's: one that cannot be used (invalid YAML or TOML,
    a schema error, an unknown GPU or rule) is not applied, and each of its problems is an error notice (VRL102 on
    its line) saying which settings apply instead; the run goes on. Each round sets aside at least one more file.
    """
    from vramlint.cli import UsageError
    from vramlint.config import apply_flags, load_config
    from vramlint.meta import meta_rules
    from vramlint.model import Problem
    from vramlint.rule import load_rules

    unusable: dict[str, list] = {}
    rules = None
    while True:
        config, problems = load_config(args.config, paths, nested=True, unusable=unusable)
        if not problems:
            config = apply_flags(config, args)
            set_run_roots(paths, config)
            if config.gpu_memory_gib is None:
                try:
                    check_gpu_flag(config.gpu)
                except UsageError as exc:
                    loc = None if getattr(args, "gpu", None) else config.location_of(("gpu",))
                    if loc is None:
                        raise
                    # the GPU was named by the configuration file: the mistake is on its line
                    problems = [Problem(loc.file, loc.line, loc.column, f"'gpu': {exc}")]
        if not problems and with_rules:
            rules = load_rules(config.rules_dirs) + meta_rules()
            problems = configuration_rule_problems(config, rules)
        if not problems:
            return config, rules, []
        found = {p.file for p in problems if p.file != COMMAND_LINE} - set(unusable)
        if args.config is not None or not found or any(p.file == COMMAND_LINE for p in problems):
            return config, rules, problems
        for problem in problems:
            if problem.file in found:
                unusable.setdefault(problem.file, []).append(problem)


def check_gpu_flag(value) -> None:  # noqa: ANN001 - a name, a list of names (a fleet), or "A10G,L4"
    from vramlint.config import gpu_names

    names = gpu_names(value)
    if len(names) > 1:
        for name in names:
            _check_gpu_name(name, in_list=True)
    elif names:
        _check_gpu_name(names[0])


def _check_gpu_name(name: str, in_list: bool = False) -> None:
    from vramlint import gpus
    from vramlint.cli import UsageError

    if gpus.lookup(name) is not None or gpus.resolve_hint(name) is not None:
        return
    import difflib

    names = gpus.names()
    # "A100" names a family: its sizes are the useful answer, before names that merely look alike
    key = name.upper().replace(" ", "-").removeprefix("NVIDIA-")
    close = [n for n in names if n.upper().startswith(key + "-")]
    close += [n for n in difflib.get_close_matches(key, names, n=3, cutoff=0.5) if n not in close]
    hint = f"did you mean {', '.join(close[:4])}?" if close else f"the catalog has {', '.join(names)}."
    if in_list:
        raise UsageError(f"unknown GPU {name!r} in the list of GPUs; {hint} A list names catalog GPUs only")
    raise UsageError(f"unknown GPU {name!r}; {hint} For a GPU not in the catalog, declare it under `custom-gpus` "
                     "in the configuration, or give its total memory with --gpu-memory-gib")
