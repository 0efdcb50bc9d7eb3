"""`vramlint explain PATH...`: the GPU memory budget vLLM will compute for each server, and why.

Also takes a pasted command line, for people who are not linting files:
``vramlint explain --gpu T4 [--gpus N] [--gpu-memory-gib 14.56] [--vllm-version 0.6.4] -- vllm serve MODEL ARGS...``
"""

from __future__ import annotations

import argparse
import re
import sys

from vramlint.fsread import own_roots
from vramlint.textsafe import eprint, json_safe, safe_output

EPILOG = """\
examples:
  vramlint explain deploy/llama.yaml
  vramlint explain deploy/ --output-format json
  vramlint explain --gpu T4 --vllm-version 0.8.5 -- vllm serve meta-llama/Llama-3.2-3B-Instruct --dtype half
  vramlint explain --gpu MY-GPU --gpu-memory-gib 44.5 -- vllm serve Qwen/Qwen2.5-7B-Instruct

--gpu takes a catalog name or alias (T4, L4, A10G, A100-40GB, A100-80GB, H100-SXM, H200, RTX-4090, ...); a
GPU outside the catalog needs --gpu-memory-gib (total memory as CUDA reports it). With a catalog GPU,
--gpu-memory-gib replaces the catalog's total (it varies with the driver, ECC and MIG).

exit status: 0 the budgets were printed (even of servers that will not start; `check` fails on those),
2 usage error or internal failure.
"""

BAR_WIDTH = 50
_COMMAND_WORDS = ("vllm", "python", "python3")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or directories to scan ('-' reads standard input); or, after '--', "
                             "a `vllm serve MODEL ARGS...` command line")
    parser.add_argument("--output-format", "--format", dest="format", choices=("text", "json"), default="text", help="output format")
    parser.add_argument("--gpu", metavar="NAME", help="GPU of servers whose files do not say (e.g. T4, L4, H100)")
    parser.add_argument("--gpus", type=int, metavar="N", help="GPUs per server when the files do not say")
    parser.add_argument("--gpu-memory-gib", type=float, metavar="X",
                        help="total memory (GiB, as CUDA reports it) of the GPU: needed for one outside the catalog, "
                             "replaces the catalog's total for --gpu NAME in it")
    parser.add_argument("--vllm-version", metavar="V", help="vLLM version of servers whose image tag does not say")
    parser.add_argument("--offline", action="store_true", help="do not contact the Hugging Face Hub")
    parser.add_argument("--refresh-hub-cache", action="store_true",
                        help="ask the Hub again for models whose answer vramlint has cached")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="skip paths matching GLOB (repeatable)")
    parser.add_argument("--config", metavar="FILE", help="configuration file (default: found next to the paths)")
    from vramlint.commands.check import add_helm_arguments

    add_helm_arguments(parser)


def _is_command_line(paths: list[str]) -> bool:
    if not paths:
        return False
    import os

    first = paths[0]
    if first in _COMMAND_WORDS or first.endswith("/vllm"):
        return not (os.path.exists(first) and len(paths) == 1)
    return False


def _config(args: argparse.Namespace, scan_paths: list[str]):
    """The configuration found for ``scan_paths`` with explain's flags applied, as `check` reads it: flags win
    over the file and its ``overrides``, and the overrides matching each server's file apply to it."""
    from vramlint.cli import UsageError
    from vramlint.commands.check import check_values_files
    from vramlint.config import format_problem

    if args.gpus is not None and args.gpus < 1:
        raise UsageError("--gpus must be at least 1")
    if args.gpu_memory_gib is not None and args.gpu_memory_gib <= 0:
        raise UsageError("--gpu-memory-gib must be positive")
    if args.vllm_version:
        from vramlint.versions import normalize_version

        if normalize_version(args.vllm_version) is None:
            raise UsageError(f"--vllm-version {args.vllm_version!r} is not a vLLM version (e.g. 0.6.4, v0.10.1.1)")
    from vramlint.commands.check import usable_configuration

    # a file found in the tree that cannot be used is set aside and said below; --config's problems are fatal
    config, _, problems = usable_configuration(args, scan_paths, with_rules=False)
    if problems:
        raise UsageError("; ".join(format_problem(p) for p in problems))
    check_values_files(config.helm_values)
    for notice in config.notices:
        eprint(f"vramlint: {'configuration error' if notice.level == 'error' else 'note'}: {format_problem(notice)}")
    return config


def server_from_command_line(words: list[str], version: str | None = None):
    """A :class:`Server` for a pasted ``vllm serve MODEL ARGS...`` command line (None if it runs no vLLM server).

    ``version``: the vLLM version to read its arguments with (--vllm-version / configuration; default the newest).
    """
    from vramlint.cmdline import Token, find_vllm_invocation
    from vramlint.model import Location, Server

    file = "<command line>"
    tokens = []
    column = 1
    for w in words:
        tokens.append(Token(w, Location(file, 1, column)))
        column += len(w) + 1
    inv = find_vllm_invocation(tokens, [], None, {}, version=version)
    if inv is None:
        return None
    server = Server(file=file, location=Location(file, 1, 1), source_format="command-line", model=inv.model,
                    model_location=inv.model_location, args=dict(inv.args), arg_locations=dict(inv.arg_locations),
                    unknown_args=dict(inv.unknown_args), env=dict(inv.env))
    server.notes.extend(inv.problems)
    server.startup_errors = list(inv.startup_errors)
    server.unchecked = list(inv.unchecked)
    server.opaque_args = inv.opaque_args
    server.model_default = inv.model_default
    server.notes.extend(f"vLLM rejects this command line: {e['message']}" for e in inv.startup_errors)
    return server


@own_roots
def run(args: argparse.Namespace) -> int:
    import os

    from vramlint.assess import assess
    from vramlint.cli import UsageError
    from vramlint.model import Inventory

    paths = list(args.paths)
    if getattr(args, "dashdash", False) and not paths:
        raise UsageError("nothing after '--': give the command line to explain, e.g. "
                         "`vramlint explain --gpu T4 -- vllm serve meta-llama/Llama-3.2-3B-Instruct`")
    if _is_command_line(paths) or (getattr(args, "dashdash", False) and not any(os.path.exists(p) for p in paths)):
        config = _config(args, ["."])
        server = server_from_command_line(paths, version=config.vllm_version)
        if server is None:
            raise UsageError("the command line after '--' does not run a vLLM server (expected `vllm serve MODEL ...`)")
        inventory = Inventory(servers=[server], files_scanned=0)
        if "vramlint.models" in sys.modules:
            sys.modules["vramlint.models"].begin_run()
        assessments = assess(inventory.servers, config.resolve_options())
    else:
        from vramlint.commands.check import assess_all, check_paths, read_stdin
        from vramlint.scan import scan

        paths = paths or ["."]
        check_paths(paths)
        config = _config(args, [p for p in paths if p != "-"] or ["."])
        stdin_text = read_stdin(paths)
        inventory = scan(paths, exclude=config.exclude_patterns(), stdin_text=stdin_text,
                         respect_gitignore=config.respect_gitignore, walk_scripts=config.walk_scripts,
                         values_files=config.helm_values, render_helm=config.render_helm,
                         vllm_version=config.vllm_version_for, root_values=config.values_from_flags)
        for note in inventory.notes:
            eprint(f"vramlint: note: {note}")
        assessments = assess_all(inventory.servers, config)
    from vramlint.commands.check import print_hub_notes

    print_hub_notes()
    if args.format == "json":
        import json

        out = inventory.to_json()
        out["servers"] = [dict(a.to_json(), verdict=_verdict_json(a)) for a in assessments]
        from vramlint.unchecked import summarise

        # why servers have no budget, once per cause with its fix (each server's `unresolved` says its own)
        out["unchecked"] = [g.to_json() for g in summarise(assessments)]
        sys.stdout.write(json_safe(json.dumps(out, indent=2, default=str)))
        sys.stdout.write("\n")
    else:
        from vramlint.report.text import wrap_width

        # names and values from the files: vramlint.textsafe
        sys.stdout.write(safe_output(wrap_lines(render_text(assessments, inventory), wrap_width())))
    return 0


# a budget table row: "    label   12.34 GiB  where it came from"; its continuation lines start under the source
_ROW = re.compile(r"^( +.{22} +-?[0-9.]+ GiB  )")


def wrap_lines(text: str, width: int) -> str:
    """``text`` with each line longer than ``width`` wrapped at spaces: a budget row's continuation under its
    source column, any other line four columns in from its own indentation. Words are never split (a URL or
    a path longer than the width stays whole)."""
    import textwrap

    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        row = _ROW.match(line)
        lead = row.group(1) if row else line[: len(line) - len(line.lstrip(" "))]
        hang = " " * len(lead) if row else lead + "    "
        body = line[len(lead):]
        rows = textwrap.wrap(body, max(20, width - len(hang)), break_long_words=False, break_on_hyphens=False)
        out.append(lead + rows[0] if rows else line)
        out.extend(hang + r for r in rows[1:])
    return "\n".join(out)


def _kv_blocks(b) -> str:
    """Blocks and tokens; with several layer groups (sliding window, hybrid state) vLLM's token figure is not
    blocks x block size: each block holds one group's layers, and from 0.21 it reports concurrency x length."""
    if b.kv_tokens == b.num_gpu_blocks * b.block_size:
        return f"{b.num_gpu_blocks} blocks x {b.block_size} tokens = {b.kv_tokens} tokens"
    return (f"{b.num_gpu_blocks} blocks of {b.block_size} tokens shared by the layer groups = {b.kv_tokens} tokens "
            "as vLLM reports them")


def _bar(b) -> str:
    total = b.total_gib or 1.0
    parts = [("W", b.weights_gib), ("n", b.non_torch_gib), ("a", b.activation_gib), ("g", b.cudagraph_gib),
             ("K", max(0.0, b.kv_cache_gib))]
    cells = []
    for ch, gib in parts:
        n = int(round(BAR_WIDTH * max(0.0, gib) / total))
        if gib > 0 and n == 0:
            n = 1
        cells.append(ch * n)
    used = "".join(cells)[:BAR_WIDTH]
    return "[" + used + "." * (BAR_WIDTH - len(used)) + "]"


def _version_origin(assessment) -> str:
    """Where the vLLM version came from: image tag, --vllm-version, configuration (FILE) or default."""
    if assessment.version_source == "configuration" and assessment.budget is not None:
        return assessment.budget.sources.get("vllm_version") or "configuration"
    return assessment.version_source or "default"


def render_text(assessments, inventory=None) -> str:
    lines: list[str] = []
    for a in assessments:
        s = a.server
        who = "/".join(x for x in (s.kind, s.name, s.container) if x)
        lines.append(f"{s.file}:{s.location.line}" + (f"  {who}" if who else ""))
        if a.fleet:
            gpus = ", ".join(b.gpu for b in a.fleet)
            lines.append(f"  the pods may land on any of {gpus} ({a.budget.sources.get('gpu', 'configuration')}): the "
                         "budget on each")
            for b in a.fleet:
                _budget_lines(a, b, lines)
            lines.append("")
            continue
        b = a.budget
        if b is None and a.gpu_requirement is not None:
            _requirement_lines(a, a.gpu_requirement, lines)
            lines.append("")
            continue
        if b is None:
            from vramlint.unchecked import CAUSES, causes, singular

            found = causes(a)
            for cause, item in found:
                lines.append(f"  not checked: it {singular(CAUSES[cause][0])}" + (f" ({item})" if item else ""))
            if not found:  # nothing a summary cause covers (a budget that could not be computed, ...)
                for why in a.unresolved:
                    lines.append(f"  unresolved: {why}")
            lines.append("")
            continue
        _budget_lines(a, b, lines)
        lines.append("")
    if inventory is not None:
        for p in inventory.problems:
            where = p.file + (f":{p.line}:{p.column}" if p.line is not None else "")
            lines.append(f"problem: {where}: {p.message}")
    if not assessments:
        lines.append("no vLLM servers found")
    from vramlint.unchecked import summarise

    groups = summarise(assessments)
    if groups:
        count = len({where for g in groups for where in g.servers})
        lines.append(f"Servers without a memory budget ({count}), by cause:")
        lines.extend(f"  - {g.text()}" for g in groups)
    return "\n".join(lines).rstrip("\n") + "\n"


def _budget_lines(a, b, lines: list[str]) -> None:
    s = a.server
    src = b.sources
    lines.append(f"  {s.model} on {b.gpus} x {b.gpu}, vLLM {b.vllm_version} ({_version_origin(a)}), engine {b.engine}")
    lines.append(f"  {_bar(b)}  W weights  n non-torch  a activations  g CUDA graphs  K KV cache  . headroom")
    headroom = b.total_gib - b.usable_gib
    measured = str(src.get("kv_cache", "")).startswith("extensible KV cache")
    headroom_why = ("1 - utilisation: CUDA context, graphs not budgeted, other processes" if not measured else
                    "1 - utilisation (a cap only: the extensible KV cache is sized from the memory free after "
                    "warmup, keeping its margin and transient reserve free)")
    # the rows under the stages of vLLM's start-up the budget follows (vramlint.budget.STAGES)
    stages = [
        ("configuration", [
            ("total", b.total_gib, src.get("total_gib", "catalog")),
            (f"x utilisation {b.gpu_memory_utilization:g}", b.usable_gib, src.get("gpu_memory_utilization", "")),
            ("headroom", headroom, headroom_why),
        ]),
        ("weights", [("weights", b.weights_gib, src.get("weights", ""))]),
        ("profile", [
            ("non-torch", b.non_torch_gib, src.get("non_torch", "")),
            ("activation peak", b.activation_gib, src.get("activation", "")),
            ("CUDA graphs", b.cudagraph_gib, src.get("cudagraph", "")),
        ] + ([("held after loading" if src.get("offload_pool") else "runner state", b.runner_state_gib,
               "; ".join(x for x in (src.get("runner_state"), src.get("offload_pool")) if x))]
             if b.runner_state_gib else [])),
        ("KV cache", [
            ("KV cache", b.kv_cache_gib, f"{_kv_blocks(b)}; "
                                         f"{b.kv_bytes_per_token} B/token ({src.get('kv_bytes_per_token', '')})"
                                         + (f"; {src['kv_cache']}" if measured else "")),
        ]),
    ]
    for number, (stage, rows) in enumerate(stages, 1):
        lines.append(f"  {number} {stage}")
        for label, gib, why in rows:
            lines.append(f"    {label:<22} {gib:8.2f} GiB  {why}")
    lines.append(f"    max concurrency {b.max_concurrency:.2f}x at max_model_len {b.max_model_len} "
                 f"({src.get('max_model_len', '')}); max_num_seqs {b.max_num_seqs}, "
                 f"max_num_batched_tokens {b.max_num_batched_tokens}")
    if b.kv_cache_gib > 0 and measured:
        lines.append("    vLLM 0.34 measures the memory free after warmup and CUDA-graph capture and gives the KV cache "
                     "all of it but a margin and the transient reserve, whatever max_model_len is, so max_model_len "
                     f"only decides how many requests of that length fit ({b.max_concurrency:.2f} at "
                     f"{b.max_model_len} tokens)")
    elif b.kv_cache_gib > 0 and "kv-cache-memory-bytes" not in str(src.get("kv_cache", "")):
        # The forum question behind vramlint: a smaller --max-model-len does not lower vLLM's memory use.
        lines.append(f"    vLLM takes total x utilisation ({b.usable_gib:.2f} GiB) whatever max_model_len is: the KV "
                     "cache gets everything left after the weights, non-torch memory and activations, so "
                     f"max_model_len only decides how many requests of that length fit ({b.max_concurrency:.2f} at "
                     f"{b.max_model_len} tokens)")
    lines.append(f"  {len(stages) + 1} verdict")
    refusals = verdict_findings(a, b)
    if not refusals:
        lines.append("    starts: yes")
    for finding in refusals:
        said = "FAILS" if finding.level == "error" else "may not start"
        lines.append(f"    {said} [{finding.rule_id} at line {finding.location.line}]: {finding.message}")
    lines.append("  inputs:")
    lines.extend(f"    {k}: {v}" for k, v in src.items()
                 if k in ("vllm_version", "model", "gpu", "gpu_count", "engine", "block_size", "max_num_seqs",
                          "max_num_batched_tokens", "enable_chunked_prefill", "kv_cache_dtype", "tensor_parallel_size"))
    for note in b.notes + s.notes:
        lines.append(f"  note: {note}")


_VERDICT_RULE = "vrl005_will_not_start.py"


def verdict_findings(assessment, budget) -> list:
    """What rule VRL005 says of ``budget`` (the server's, or one of its fleet's), as `check` says it: the verdict's
    one source. Its configured options do not change whether vLLM starts, so the rule's defaults are used."""
    from vramlint.rule import RuleContext, builtin_rules_dir, load_rule_file

    module = sys.modules.get(f"vramlint.rules.{_VERDICT_RULE[:-3]}")
    rule = _VERDICT_CACHE.get("rule")
    if rule is None or module is None:
        rule, problems = load_rule_file(builtin_rules_dir() / _VERDICT_RULE, builtin=True)
        if rule is None:
            raise RuntimeError("; ".join(problems))
        _VERDICT_CACHE["rule"] = rule
        module = sys.modules[f"vramlint.rules.{_VERDICT_RULE[:-3]}"]
    return module.verdict(assessment, RuleContext().for_rule(rule), budget)


_VERDICT_CACHE: dict = {}


def server_refusals(assessment) -> list:
    """VRL005's findings on the server (on each GPU a fleet may land on, as `check` folds them): what `explain` and
    `diff` call the verdict, so that neither can disagree with `check`."""
    if not assessment.fleet:
        return verdict_findings(assessment, assessment.budget)
    found: list = []
    for budget in assessment.fleet:
        found.extend(f for f in verdict_findings(assessment, budget) if f.message not in {g.message for g in found})
    return found


def _verdict_json(assessment) -> dict:
    found = server_refusals(assessment)
    return {"starts": not any(f.level == "error" for f in found),
            "refusals": [{"rule": f.rule_id, "level": f.level, "line": f.location.line, "message": f.message}
                         for f in found]}


def _requirement_lines(a, req, lines: list[str]) -> None:
    """What a server whose GPU is not named needs of one: the budget on every catalog GPU, summarised."""
    from vramlint.requirement import describe

    s = a.server
    lines.append(f"  {s.model}, vLLM {req.vllm_version} ({a.version_source or 'default'}): the GPU is not named, so the "
                 "budget was computed on every GPU of the catalog")
    n = req.needs
    if req.min_total_gib is not None:
        lines.append(f"  needs >= {req.min_total_gib:.1f} GiB per GPU ({req.gpus_per_engine} per engine) to start at "
                     f"max_model_len {req.max_model_len}, gpu_memory_utilization {req.gpu_memory_utilization:g}:")
        rows = [("weights", n.get("weights")), ("non-torch", n.get("non_torch")),
                ("activation peak", n.get("activation")), ("CUDA graphs", n.get("cudagraph"))]
        if n.get("runner_state"):
            rows.append(("runner state (V2 penalty bins)", n.get("runner_state")))
        rows.append((f"KV of one {req.max_model_len}-token request", n.get("one_request_kv")))
        for label, gib in rows:
            lines.append(f"    {label:<30} {gib or 0:8.2f} GiB")
        lines.append(f"    {'/ utilisation':<30} {req.gpu_memory_utilization:8g}")
    lines.append(f"  {describe(req.fits, req.does_not_fit, req.why_not)}")
    if req.fits:
        lines.append(f"  starts on: {', '.join(req.fits)}")
    by_reason: dict[str, list[str]] = {}
    for name, why in req.why_not.items():
        by_reason.setdefault(why, []).append(name)
    for why, names in by_reason.items():
        lines.append(f"  does not start ({why}): {', '.join(names)}")
    for err in req.errors:
        lines.append(f"  FAILS on every GPU: {err['message']}")
