"""`vramlint inventory PATH...`: list every vLLM server found, with where each setting was written."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from vramlint.fsread import own_roots
from vramlint.textsafe import json_safe, safe_output

EPILOG = """\
examples:
  vramlint inventory deploy/
  vramlint inventory deploy/ --output-format json
  helm template my-release ./chart | vramlint inventory -

exit status: 0 the files were read (servers found or not), 2 usage error or internal failure.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or directories to scan; '-' reads standard input (default: .)")
    parser.add_argument("--output-format", "--format", dest="format", choices=("table", "json"), default="table", help="output format")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="skip paths matching GLOB (repeatable)")
    from vramlint.commands.check import add_helm_arguments

    add_helm_arguments(parser)


@own_roots
def run(args: argparse.Namespace) -> int:
    from vramlint.commands.check import check_paths, read_stdin
    from vramlint.scan import scan

    paths = list(args.paths) or ["."]
    check_paths(paths)
    values, render, vllm_version, respect_gitignore, walk_scripts, notices = _settings(args, paths)
    stdin_text = read_stdin(paths)
    inventory = scan(paths, exclude=args.exclude, stdin_text=stdin_text, respect_gitignore=respect_gitignore,
                     walk_scripts=walk_scripts, values_files=values, render_helm=render,
                     vllm_version=vllm_version, root_values=list(getattr(args, "values", None) or []))
    # the configuration's problems are the output's, as check's findings hold them (a file not read said once)
    inventory.problems.extend(notices)
    noticed = {n.file for n in notices}
    inventory.skipped = [s for s in inventory.skipped if s.file not in noticed]
    if args.format == "json":
        import json

        sys.stdout.write(json_safe(json.dumps(inventory.to_json(), indent=2, sort_keys=False, default=str)))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(safe_output(render_table(inventory)))  # names and values from the files: vramlint.textsafe
    return 0


def _settings(args: argparse.Namespace, paths: list[str]) -> tuple[list[str], bool, Any, bool, bool, list]:
    """`--values`/`--render-helm` over the configuration file's `helm-values`/`render-helm`, the vLLM version
    it sets per file (command lines are read with that version's arguments, as `check` reads them), whether
    the walk respects .gitignore (`--[no-]respect-gitignore` over `respect-gitignore`), whether it reads the shell
    scripts that start vLLM (`walk-scripts`), and the configuration's
    notices (a file found that cannot be used: not applied, each problem on its line)."""
    from vramlint.cli import UsageError
    from vramlint.commands.check import helm_settings
    from vramlint.config import format_problem, load_config

    scan_paths = [p for p in paths if p != "-"] or ["."]
    unusable: dict = {}
    while True:  # a found file that cannot be used is not applied, and said (as `check` does)
        config, problems = load_config(None, scan_paths, nested=True, unusable=unusable)
        fresh = {p.file for p in problems} - set(unusable)
        if not problems or not fresh:
            break
        for problem in problems:
            unusable.setdefault(problem.file, []).append(problem)
    if problems:
        raise UsageError("; ".join(format_problem(p) for p in problems))
    respect = config.respect_gitignore if args.respect_gitignore is None else args.respect_gitignore
    values, render, notices = helm_settings(args, config)
    return values, render, config.vllm_version_for, respect, config.walk_scripts, notices


def _cell(value: object) -> str:
    if value is None:
        return "?"
    return str(value)


def render_table(inventory) -> str:
    rows = [("LOCATION", "KIND/NAME", "MODEL", "VLLM", "GPU", "ARGS")]
    for s in inventory.servers:
        gpu = "?"
        if s.gpu is not None:
            gpu = f"{_cell(s.gpu.count)} x {_cell(s.gpu.type)}"
            if s.gpu.vendor != "nvidia":
                gpu += f" ({s.gpu.vendor})"
            if s.gpu.mig_profile:
                gpu += f" mig {s.gpu.mig_profile}"
        args = " ".join(f"{k}={_cell(v)}" for k, v in s.args.items())
        if len(args) > 80:
            args = args[:77] + "..."
        name = "/".join(x for x in (s.kind, s.name, s.container) if x)
        rows.append((f"{s.file}:{s.location.line}", name, _cell(s.model), _cell(s.vllm_version), gpu, args))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1])
    out = "\n".join(line.rstrip() for line in lines) + "\n"
    out += f"\n{len(inventory.servers)} server(s) in {inventory.files_scanned} file(s)"
    if inventory.skipped:
        out += f"; {len(inventory.skipped)} skipped"
    if inventory.problems:
        out += f"; {len(inventory.problems)} problem(s)"
    out += "\n"
    for p in inventory.problems:
        where = p.file + (f":{p.line}:{p.column}" if p.line is not None else "")
        out += f"problem: {where}: {p.message}\n"
    for sk in inventory.skipped:
        out += f"skipped: {sk.file}: {sk.reason}\n"
    for note in inventory.notes:
        out += f"note: {note}\n"
    for s in inventory.servers:
        for note in s.notes:
            out += f"note: {s.file}:{s.location.line}: {note}\n"
    return out
