"""Scan paths for vLLM servers: discover files, read them safely, prefilter, parse, extract, join across files.

Speed comes from the text prefilter: most YAML in a repository is not a vLLM deployment, and a regular
expression over the raw text decides that in microseconds, before the (much slower) YAML parse. The
prefilter is a union of every word extraction depends on, so it cannot drop a file the extractors would
report (benchmarks/corpus_recall.py checks that on the real corpus: with and without it, the same servers).
"""

from __future__ import annotations

import bisect
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from vramlint.discover import FileEntry, discover
from vramlint.fsread import scanned_roots
from vramlint.model import Inventory, Problem, Server, Skipped, internal_problem
from vramlint.parallel import IN_WORKER

# (a leaf module: the readers that use it, Helm charts and compose files, import no scan)
from vramlint.prefilter import PREFILTER_WORDS, prefilter  # noqa: F401 - PREFILTER_WORDS: part of scan's API
from vramlint.textfile import MAX_FILE_BYTES, read_text  # noqa: F401 - MAX_FILE_BYTES: part of scan's API

STDIN_NAME = "<stdin>"

# Template files (.tpl, .tftpl) are read only when they look like YAML documents, not Go `define` blocks.
_YAML_SHAPE = re.compile(r"^(apiVersion|kind|services|image|spec|metadata)\s*:", re.MULTILINE)


class _Collector:
    def __init__(self) -> None:
        from vramlint.extract.records import Records

        self.records = Records()
        self.inventory = Inventory()
        # Texts the prefilter passed over, kept by path so a `--config` ConfigMap reference can still be
        # looked up in them (a ConfigMap with only a `model:` key would not pass the prefilter).
        self.unparsed: list[tuple[str, str]] = []
        # Files read whose text does not hold the word "vramlint" (in any case): no suppression comment to read
        self.uncommented: list[str] = []
        # Compose files the prefilter passed over that build an image (`build:`): read in the join when a scanned
        # Dockerfile starts vLLM, since the service runs what that Dockerfile builds (display, text, folder)
        self.unread_builds: list[tuple[str, str, str]] = []
        # what may start compose services one at a time (extract.compose_starts): the walk's scripts and configs,
        # and the files scanned
        self.starters: list[str] = []
        # (file, first line, last line) of release values a chart of the tree was evaluated with (a Flux
        # HelmRelease's spec.values): their reading on their own as a known chart's values is dropped in the join
        self.released_values: list[tuple[str, int, int]] = []


def scan(paths: list[str], exclude: list[str] | tuple[str, ...] = (), stdin_text: str | None = None,
         use_prefilter: bool = True, values_files: list[str] | tuple[str, ...] = (),
         render_helm: bool = False, vllm_version: str | Callable[[str | None], str | None] | None = None,
         root_values: list[str] | tuple[str, ...] | None = None, stdin_name: str = STDIN_NAME,
         respect_gitignore: bool = True, walk_scripts: bool = True) -> Inventory:
    """Every vLLM server under ``paths`` (files, directories, or "-" for ``stdin_text``).

    Files of a Helm chart (templates, values, overlays) are linted through the chart (`vramlint.helm`), with
    ``values_files`` as `-f` overlays and Helm rendering when ``render_helm`` and Helm is available.
    ``vllm_version``: the vLLM version configured for servers whose image tag does not say one (or a function
    from a file, as displayed, to it): their command lines are read with that version's arguments.

    Files are read only inside ``paths`` and the ``root_values`` overlays (default: every one of
    ``values_files``; a command passes only those the user named, not those of a configuration file in the
    scanned repository), through `vramlint.fsread`. ``stdin_name``: the path standard input's findings name
    (`--stdin-filename`). ``respect_gitignore``: folders and files
    `.gitignore` ignores are not walked (`--no-respect-gitignore` turns it off). ``walk_scripts``: a folder's
    shell scripts that start vLLM are read (`walk-scripts: false` reads only its Slurm jobs).
    """
    roots = [p for p in paths if p != "-"] + list(values_files if root_values is None else root_values)
    _CHART_DIR_CACHE.clear()  # folders are named relative to the working directory: another scan, other folders
    hook = sys.modules.get("vramlint.helm.hook")  # (not imported for this: most runs walk no chart)
    if hook is not None:
        hook.clear_run_caches()
    with scanned_roots(roots):
        if vllm_version is None:
            return _scan(paths, exclude, stdin_text, use_prefilter, values_files, render_helm, stdin_name,
                         respect_gitignore, walk_scripts)
        from vramlint.cmdline import configured_vllm_version

        with configured_vllm_version(vllm_version):
            return _scan(paths, exclude, stdin_text, use_prefilter, values_files, render_helm, stdin_name,
                         respect_gitignore, walk_scripts)


def _scan(paths: list[str], exclude: list[str] | tuple[str, ...], stdin_text: str | None, use_prefilter: bool,
          values_files: list[str] | tuple[str, ...], render_helm: bool, stdin_name: str = STDIN_NAME,
          respect_gitignore: bool = True, walk_scripts: bool = True) -> Inventory:
    col = _Collector()
    file_paths = [p for p in paths if p != "-"]
    found = discover(file_paths, exclude, respect_gitignore=respect_gitignore, walk_scripts=walk_scripts)
    col.inventory.skipped.extend(found.skipped)
    _say_empty_folders(col, file_paths, found)
    entries = _helm_charts(col, found.files, values_files, render_helm)
    # the extension-less files the walk looks at for a shell's `#!` are not starters (most are no scripts)
    col.starters = found.starters + [e.path for e in found.files if not e.shebang_only]
    entries = _kustomizations(col, entries)
    if "-" in paths:
        if stdin_text is None:
            col.inventory.skipped.append(Skipped(stdin_name, "standard input was not read"))
        elif not stdin_text.strip():
            col.inventory.skipped.append(Skipped(stdin_name, "empty input"))
        else:
            _scan_text(col, stdin_text, stdin_name, ".", use_prefilter=use_prefilter)
    _scan_entries(col, entries, use_prefilter)
    import gc

    # The join, like the reading of one file (`_scan_text`), runs with the cyclic collector off: what it makes
    # (servers, a --config file's parse) lives until the report, and every full collection it started walked all
    # the documents kept for it (a 100,000-key --config file in a ConfigMap: 12 of them, 1.0 of 3.2 CPU-s).
    collecting = gc.isenabled()
    gc.disable()
    try:
        _join(col)
    finally:
        if collecting:
            # ... and what it made goes to the oldest generation at once, as what each file leaves does
            # (_scan_entries): the first allocations after the collector is back started a young collection over
            # all of it, and the next generation's walked it again (11,363 KServe servers joined: 0.41 CPU-s)
            gc.freeze()
            gc.unfreeze()
            gc.enable()
    inv = col.inventory
    inv.uncommented = frozenset(col.uncommented)
    inv.servers.sort(key=lambda s: (s.file, s.location.line, s.location.column))
    inv.problems.sort(key=lambda p: (p.file, p.line or 0, p.column or 0))
    return inv


def _say_empty_folders(col: _Collector, paths: list[str], found: Any) -> None:
    """A folder named on the command line with no YAML file in it is said (a wrong folder is the likely cause)."""
    from vramlint.discover import display_path

    for path in paths:
        if not os.path.isdir(path):
            continue
        prefix, shown = os.path.join(path, ""), display_path(path)
        # an extension-less file is an entry only to have its `#!` looked at: a folder of READMEs is still said
        if any(e.path.startswith(prefix) and not e.shebang_only for e in found.files) or any(
                shown == "." or s.file.startswith(shown + "/") for s in found.skipped):
            continue
        col.inventory.notes.append(f"{shown}: no YAML file in this folder or below it (vramlint reads "
                                   "*.yaml and *.yml files in folders; name other files explicitly)")


def _helm_charts(col: _Collector, entries: list[FileEntry], values_files: Any, render: bool) -> list[FileEntry]:
    """Lint chart files through their chart (owned by vramlint.helm); the entries left for plain extraction."""
    # each folder once: a tree of 50,000 files in one folder asks once, not 50,000 times
    if not any(_in_chart_dir(os.path.abspath(d)) for d in {os.path.dirname(e.path) for e in entries}):
        # no Chart.yaml above any file: skip importing the Helm machinery (start-up time)
        _values_unused(col, values_files)
        return entries
    from vramlint.helm import hook

    chart_plan = hook.plan(entries)
    if not chart_plan.charts:
        _values_unused(col, values_files)
        return entries
    servers, problems, notes, fallback = hook.run(chart_plan, list(values_files), render)
    col.records.servers.extend(servers)
    col.inventory.problems.extend(problems)
    col.inventory.notes.extend(notes)
    col.inventory.files_scanned += sum(1 for e in entries if e.path in chart_plan.handled)
    col.released_values = [(r.file, *r.values_span) for rels in chart_plan.releases.values() for r in rels
                           if getattr(r, "values_span", None)]
    return [e for e in entries if e.path not in chart_plan.handled or e.path in fallback]


_KUSTOMIZATION_NAMES = frozenset(("kustomization.yaml", "kustomization.yml", "Kustomization"))


def _kustomizations(col: _Collector, entries: list[FileEntry]) -> list[FileEntry]:
    """Build each kustomization no other one includes (`vramlint.kustomize`): its servers are read from the built
    set, and the files it read (bases, patches) are not read again on their own; the entries left."""
    # the names are vramlint.kustomize's KUSTOMIZATION_NAMES (a test holds them equal), written here so that a run
    # with no kustomization does not import the module (start-up time)
    if not any(os.path.basename(e.path) in _KUSTOMIZATION_NAMES for e in entries):
        return entries  # no kustomization: nothing of it imported (start-up time)
    from vramlint import kustomize

    found = kustomize.plan(entries)
    if not found.roots:
        return entries
    try:
        servers, problems, handled = kustomize.extract(found.roots)
    except Exception as exc:  # noqa: BLE001 - a kustomization vramlint cannot build: its files are read as files
        col.inventory.problems.append(internal_problem(found.roots[0], None, "building the kustomizations", exc))
        return entries
    col.records.servers.extend(servers)
    col.inventory.problems.extend(problems)
    taken = [e for e in entries if os.path.realpath(e.path) in handled]
    col.inventory.files_scanned += len(taken)
    return [e for e in entries if os.path.realpath(e.path) not in handled]


def _values_unused(col: _Collector, values_files: Any) -> None:
    if values_files:
        col.inventory.notes.append(f"--values {', '.join(values_files)}: no Helm chart (Chart.yaml with templates/) "
                                   "among the scanned paths, so the values files were not applied")


_CHART_DIR_CACHE: dict[str, bool] = {}


def _in_chart_dir(directory: str, levels: int = 12) -> bool:
    """A Chart.yaml in ``directory`` or one of its parents (cached per directory)."""
    seen = []
    d = directory
    result = False
    for _ in range(levels):
        if d in _CHART_DIR_CACHE:
            result = _CHART_DIR_CACHE[d]
            break
        seen.append(d)
        if os.path.isfile(os.path.join(d, "Chart.yaml")) or os.path.isfile(os.path.join(d, "Chart.yml")):
            result = True
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for s in seen:
        _CHART_DIR_CACHE[s] = result
    return result


# From this many files on, files are read and extracted by a pool of processes, one a core: below it a pool's
# start costs more than it saves (and one file, the pre-commit case, must start fast). Files are handed out in
# chunks of CHUNK_FILES, in order, and what each chunk gives is added in that order: the output is the same.
PARALLEL_FROM = 200
CHUNK_FILES = 32


def _scan_entries(col: _Collector, entries: list[FileEntry], use_prefilter: bool) -> None:
    import gc

    # The shell scripts of the walk are looked at here, before the pool is chosen: a Slurm job is read as one, and
    # another only when walk-scripts is on and it starts vLLM.
    # Looking at a script's head takes about 27 us, and 3,000 scripts that are all dropped made a pool of workers
    # (1.34x the CPU of one process, and a longer wall time) for nothing.
    entries = [entry for entry in entries if not entry.sbatch_only or entry.explicit or _walked_script_kept(entry)]
    workers = _worker_count(len(entries))
    if workers <= 1:
        # What a file leaves (its records, servers, lines) lives until the report: frozen as soon as the file is
        # done, it is not walked by the collections that the next allocations start (a file's objects are made
        # with the collector off, so the first collection after it walked all of them, and again from the next
        # generation: a fifth of a second after a 5 MB stream of 10,000 Deployments). The unfreeze puts them in
        # the oldest generation, which the frequent young collections do not walk.
        try:
            for entry in entries:
                _scan_entry(col, entry, use_prefilter)
                gc.freeze()
        finally:
            gc.unfreeze()
        return
    import multiprocessing

    chunks = [entries[i:i + CHUNK_FILES] for i in range(0, len(entries), CHUNK_FILES)]
    done = 0
    # What exists before the fork (modules, tables, rules) lives as long as the run: frozen, the workers' garbage
    # collections do not walk it again and again (nor write to its pages, which would copy them into each worker).
    gc.freeze()
    try:
        from concurrent.futures import ProcessPoolExecutor

        # fork: the workers start with this process's state (the configured vLLM version, the scanned roots,
        # rules and caches already loaded), and nothing is imported again. An executor, not multiprocessing's
        # Pool: a worker that dies (killed for its memory) fails the wait at once, and the chunks not done are
        # read here, instead of a wait for ever on the chunk it had.
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            # Unpickling the workers' results makes only live objects, no garbage: collections while they arrive
            # would walk the growing results over and over for nothing.
            collecting = gc.isenabled()
            gc.disable()
            try:
                for part in pool.map(_scan_chunk, [(chunk, use_prefilter) for chunk in chunks]):
                    _add_chunk(col, part)
                    done += 1
                # ... and they live as long as the run: frozen with the rest, the unfreeze below puts them in the
                # oldest generation, which the frequent young collections do not walk (at 3,000 files these
                # walked a million objects each, a tenth of a second)
                gc.freeze()
            finally:
                if collecting:
                    gc.enable()
    except Exception:  # noqa: BLE001 - a pool that cannot run (no fork, no semaphores): the rest in this process
        for chunk in chunks[done:]:
            for entry in chunk:
                _scan_entry(col, entry, use_prefilter)
    finally:
        gc.unfreeze()


def _worker_count(files: int) -> int:
    if files < PARALLEL_FROM:
        return 1
    from vramlint.parallel import cores

    return cores()


def _scan_chunk(job: tuple[list[FileEntry], bool]) -> _Collector:
    import gc

    # In a worker, what exists when a chunk starts (modules, tables, the parses kept for texts seen again) lives
    # until the pool ends: frozen, the collections during the chunk walk only the chunk's own objects.
    gc.freeze()
    IN_WORKER[0] = True
    entries, use_prefilter = job
    col = _Collector()
    for entry in entries:
        _scan_entry(col, entry, use_prefilter)
        gc.freeze()  # as in one process (_scan_entries): what a file leaves is not walked again by each collection
    _pack_join_lines(col.records)
    return col


def _pack_join_lines(records: Any) -> None:
    """The lines of the documents kept for the cross-file join, packed (`PackedLines`) before they are sent:
    at 10,000 files they are alive together until the join. Lines a script reference's tokens also hold stay
    a list (packing one of two holders would send them twice)."""
    from vramlint.yamlload import PackedLines

    shared = {id(ref.doc.lines) for ref in records.script_refs}
    packed: dict[int, Any] = {}
    for kind in (records.runtimes, records.inference_services, records.configmaps, records.llmaz, records.env_refs):
        for record in kind:
            doc = record.doc
            lines = doc.lines
            if type(lines) is not list or id(lines) in shared:
                continue
            if id(lines) not in packed:
                packed[id(lines)] = (lines, PackedLines(lines))  # the list kept alive: ids stay unique
            doc.lines = packed[id(lines)][1]


def _add_chunk(col: _Collector, part: _Collector) -> None:
    _merge(col.records, part.records)
    col.inventory.skipped.extend(part.inventory.skipped)
    col.inventory.problems.extend(part.inventory.problems)
    col.inventory.notes.extend(part.inventory.notes)
    col.inventory.files_scanned += part.inventory.files_scanned
    col.unparsed.extend(part.unparsed)
    col.unread_builds.extend(part.unread_builds)
    col.uncommented.extend(part.uncommented)


def _scan_entry(col: _Collector, entry: FileEntry, use_prefilter: bool) -> None:
    # a file named on the command line is inside by its folder; a symbolic link named there is followed only
    # into the roots (vramlint.fsread.roots_for)
    # (a shell script of the walk is here when it is a Slurm job, or may start vLLM: `_scan_entries` kept it)
    walked_script = entry.sbatch_only and not entry.explicit  # no Slurm job: it starts vLLM
    text, skipped = read_text(entry.path, entry.display)
    if skipped is not None:
        if not walked_script or _head_names_vllm(entry.path):  # a script that may start vLLM, not read: said
            col.inventory.skipped.append(skipped)
        return
    if entry.template and not entry.explicit and not _YAML_SHAPE.search(text):
        return  # a Go template partial (`define` blocks), not a YAML document
    if "vramlint" not in text.lower():
        col.uncommented.append(entry.display)  # its suppressions need not be read again (check.py)
    if walked_script:
        col.records.walked_scripts.append(entry.display)
    _scan_text(col, text, entry.display, os.path.dirname(entry.path) or ".", use_prefilter)


_SLURM_HEAD_BYTES = 16384  # sbatch reads directives only before the first command: a header, not the script


def _walked_script_kept(entry: FileEntry) -> bool:
    """Whether a shell script of the walk is read: a Slurm job (then read as one: ``sbatch_only`` cleared), or,
    with walk-scripts on, one that starts vLLM (`cmdline.script_runs_vllm`), or that cannot be read (`_scan_entry`
    says so when its head names vLLM). An extension-less file is a script only when its `#!` names a shell."""
    if entry.shebang_only and not _shell_shebang(entry.path):
        return False  # an extension-less file that is no shell script (a LICENSE, a Python tool)
    if _slurm_job_head(entry.path):
        entry.sbatch_only = False
        return True
    if not entry.starts_only:
        return False  # walk-scripts is off
    text, skipped = read_text(entry.path, entry.display)
    if skipped is not None:
        return True
    from vramlint.cmdline import script_runs_vllm

    # a folder's scripts are as often tests, installers and benchmarks: one is read when running it starts vLLM
    # (the cheap test first: most scripts never name it). Decided here, before the pool: the few scripts kept
    # seldom make one.
    if "vllm" in text.lower() and script_runs_vllm(text):
        return True
    from vramlint.extract.shell_scripts import calls_sourced_vllm_function

    # `source lib.sh; start_vllm MODEL`: the body that starts vLLM is a sourced file's (read inside the tree only)
    if calls_sourced_vllm_function(text, entry.display):
        return True
    from vramlint.extract import scripts
    from vramlint.extract.shell_scripts import unknown_launcher

    # `"$VLLM_BIN" serve MODEL`, the program known only at run time: read to say so
    return unknown_launcher(scripts.script_token(text, entry.display), text) is not None


_SHEBANG_BYTES = 128


def _shell_shebang(path: str) -> bool:
    """Whether the file's first line is a `#!` naming a shell (sh, bash, zsh, ... directly or through env)."""
    from vramlint.extract.shell_scripts import has_shell_shebang
    from vramlint.fsread import Refusal, read_head

    head = read_head(path, _SHEBANG_BYTES)
    return not isinstance(head, Refusal) and head.startswith(b"#!") and has_shell_shebang(
        head.decode("utf-8", errors="replace"))


def _head_names_vllm(path: str) -> bool:
    """Whether the first bytes of a script the walk could not read (too large, not text) name vLLM: one that does
    not is one of the folder's other scripts, left alone as before."""
    from vramlint.fsread import Refusal, read_head

    head = read_head(path, _SLURM_HEAD_BYTES)
    return not isinstance(head, Refusal) and b"vllm" in head.lower()


def _slurm_job_head(path: str) -> bool:
    """Whether the script's first lines are `#SBATCH` directives (a Slurm job script, `slurm.read_sbatch`)."""
    from vramlint.fsread import Refusal, read_head

    head = read_head(path, _SLURM_HEAD_BYTES)
    if isinstance(head, Refusal) or b"#SBATCH" not in head:
        return False
    from vramlint.extract.slurm import read_sbatch

    return read_sbatch(head.decode("utf-8", errors="replace"), path) is not None


def _scan_text(col: _Collector, text: str, display: str, base_dir: str, use_prefilter: bool) -> None:
    import gc

    from vramlint.extract.dockerfile import is_dockerfile_name

    if is_dockerfile_name(display):
        _scan_dockerfile(col, text, display, base_dir, use_prefilter)
        return
    from vramlint.discover import supervisord_kind, systemd_drop_in_kind, systemd_kind

    if systemd_kind(display.replace("\\", "/").rsplit("/", 1)[-1]) is not None:
        _scan_systemd(col, text, display, base_dir, use_prefilter)
        return
    if systemd_drop_in_kind(display) is not None:
        col.inventory.files_scanned += 1
        if not use_prefilter or "vllm" in text.lower():
            from vramlint.extract.systemd import read_drop_in_servers

            _read_launcher(col, text, display, base_dir, read_drop_in_servers, "systemd drop-in")
        return
    if supervisord_kind(display) is not None or (display.lower().endswith((".conf", ".ini")) and "[program:" in text):
        _scan_supervisord(col, text, display, base_dir, use_prefilter)
        return
    if display.lower().endswith((".tf", ".tf.json")):  # discover.TERRAFORM_EXTENSIONS
        _scan_terraform(col, text, display, base_dir, use_prefilter)
        return
    other = _other_format(display) or _apptainer_definition(display, text)
    if other is not None:
        col.inventory.skipped.append(Skipped(display, other))
        return
    col.inventory.files_scanned += 1
    servers_before, problems_before = len(col.records.servers), len(col.inventory.problems)
    # While one file is read the cyclic garbage collector is off: what the file makes lives until the file is done
    # (its documents, records and servers), and the loader breaks the one reference cycle it makes. Left on, each
    # full collection walked every document read so far: on a 5 MB stream of 10,000 Deployments, 7 of them took
    # 1.3 of its 4 CPU-seconds. The file's objects are collected with the rest once it is done.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _scan_text_unguarded(col, text, display, base_dir, use_prefilter)
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run (MemoryError, RecursionError too)
        # what this file added before failing is dropped with it: half a server would be reported as if whole
        del col.records.servers[servers_before:]
        del col.inventory.problems[problems_before:]
        col.inventory.problems.append(internal_problem(display, None, "reading this file", exc))
    finally:
        if collecting:
            gc.enable()


def _scan_dockerfile(col: _Collector, text: str, display: str, base_dir: str, use_prefilter: bool) -> None:
    """A Dockerfile: the vLLM server its final stage starts (`extract.dockerfile.read_dockerfile_servers`), joined
    with the compose services that build it (`_join_dockerfiles`). Only one that names vLLM is read."""
    col.inventory.files_scanned += 1
    if use_prefilter and "vllm" not in text.lower():
        return
    from vramlint.extract.dockerfile import read_dockerfile_servers

    path = os.path.join(base_dir, display.replace("\\", "/").rsplit("/", 1)[-1])
    try:
        col.records.dockerfiles.append(read_dockerfile_servers(text, display, path))
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
        col.inventory.problems.append(internal_problem(display, None, "reading this Dockerfile", exc))


def _scan_supervisord(col: _Collector, text: str, display: str, base_dir: str, use_prefilter: bool) -> None:
    """A supervisord configuration (`extract.supervisord`): its vLLM programs, kept apart until the join drops the
    ones an image in the tree runs (read through it). Only one that names vLLM is read; one with no `[program:`
    section (an nginx `conf.d/*.conf`) is not a launcher."""
    col.inventory.files_scanned += 1
    if (use_prefilter and "vllm" not in text.lower()) or "[program:" not in text:
        return
    from vramlint.extract.supervisord import is_supervisord_file, read_supervisord_servers

    if is_supervisord_file(display, text):
        _read_launcher(col, text, display, base_dir, read_supervisord_servers, "supervisord configuration")


def _scan_systemd(col: _Collector, text: str, display: str, base_dir: str, use_prefilter: bool) -> None:
    """A systemd service unit (`extract.systemd`): the vLLM servers its ExecStart= lines start. Only one that names
    vLLM is read."""
    col.inventory.files_scanned += 1
    from vramlint.extract.systemd import unit_name

    # a role's unit template may run a script the role's template task writes, which names vLLM where the unit
    # does not: read (a few per role)
    templated = unit_name(display) != display.replace("\\", "/").rsplit("/", 1)[-1]
    if use_prefilter and "vllm" not in text.lower() and not templated:
        return
    from vramlint.extract.systemd import read_systemd_servers

    _read_launcher(col, text, display, base_dir, read_systemd_servers, "systemd unit")


def _may_start_vm_script(text: str) -> bool:
    from vramlint.extract.terraform_vms import may_start_vm_script

    return may_start_vm_script(text)


def _scan_terraform(col: _Collector, text: str, display: str, base_dir: str, use_prefilter: bool) -> None:
    """A Terraform file (`extract.terraform`): the vLLM servers of the Kubernetes objects and Helm releases its
    resources create, kept apart until the join. Only one the prefilter passes is read (the module's other files
    are read by it for their variables and locals)."""
    col.inventory.files_scanned += 1
    # (a module's ConfigMaps need not name vLLM: a container of another file takes its variables from them)
    releases_only = False
    if use_prefilter and not prefilter(text) and "kubernetes_config_map" not in text and not _may_start_vm_script(text):
        # a release of a chart in the tree that names vLLM gives it its values, though the .tf names no vLLM
        # (groundx-on-prem's operator/*.tf installing modules/*/helm_chart): read for those releases alone
        if "helm_release" not in text:
            return
        from vramlint.extract.terraform import may_release_local_chart

        if not may_release_local_chart(text):
            return
        releases_only = True
    from vramlint.extract import extract_records
    from vramlint.extract.terraform import read_terraform

    path = os.path.join(base_dir, display.replace("\\", "/").rsplit("/", 1)[-1])
    if _utf16_marked(path):
        # the reader decodes UTF-16 by its byte-order mark, as kubectl and go-yaml do; HCL takes UTF-8 only and
        # Terraform refuses the file (hclsyntax's TokenBadUTF8), so its resources are never applied
        col.inventory.problems.append(Problem(display, 1, 1, (
            "Terraform refuses this file: \"Invalid character encoding: All input files must be UTF-8 encoded\" (it "
            "is UTF-16 by its byte-order mark): its resources are not read; save it as UTF-8"), level="warning"))
        return
    problems_before = len(col.inventory.problems)
    try:
        col.records.terraform.append(read_terraform(text, display, path, col.records, extract_records,
                                                   releases_only))
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run (RecursionError, MemoryError too)
        del col.inventory.problems[problems_before:]
        col.inventory.problems.append(internal_problem(display, None, "reading this Terraform file", exc))


def _drop_released_values(col: _Collector) -> None:
    """A Flux HelmRelease's spec.values read as a known chart's values (extract/flux.py) when the chart of the tree
    it installs was evaluated with them: the chart's servers are what it deploys, the values' own reading a second
    copy of each."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for file, first, last in col.released_values:
        spans.setdefault(file, []).append((first, last))

    def released(file: str, line: int | None) -> bool:
        return line is not None and any(a <= line <= b for a, b in spans.get(file, ()))

    # (the file's problems stay: one of its YAML is said whichever reading it came from)
    rec = col.records
    rec.servers[:] = [s for s in rec.servers if s.source_format != "helm-values" or not released(
        s.location.file, s.location.line)]


def _utf16_marked(path: str) -> bool:
    from vramlint.fsread import Refusal, read_bytes

    raw = read_bytes(path)
    return not isinstance(raw, Refusal) and raw.startswith((b"\xff\xfe", b"\xfe\xff"))


def _join_terraform(col: _Collector) -> None:
    """The Terraform files' servers, in place of the readings they replace: a chart in the tree that a
    `helm_release` installs was evaluated with the release's values (its evaluation on its own defaults is not what
    is deployed), and a file read with `file()` / `templatefile()` was read with the module's values."""
    rec = col.records
    replaced = [c.rstrip("/") + "/" for t in rec.terraform for c in t.released_charts]
    consumed = {f for t in rec.terraform for f in t.consumed_files}
    if replaced or consumed:
        def stale(file: str) -> bool:
            return file in consumed or any(file.startswith(c) for c in replaced)

        rec.servers[:] = [s for s in rec.servers if not stale(s.file)]
        col.inventory.problems[:] = [p for p in col.inventory.problems if not stale(p.file)]
    for record in rec.terraform:
        rec.servers.extend(record.servers)
        rec.problems.extend(record.problems)
        col.inventory.notes.extend(n for n in record.notes if n not in col.inventory.notes)
    rec.terraform = []


def _read_launcher(col: _Collector, text: str, display: str, base_dir: str, reader: Any, what: str) -> None:
    """A launcher file's servers (supervisord, systemd), kept apart until the join drops the ones an image in the
    tree runs (read through it); one that fails to read is said, and the run goes on."""
    from vramlint.extract.dockerfile import DockerfileRecord

    path = os.path.join(base_dir, display.replace("\\", "/").rsplit("/", 1)[-1])
    try:
        servers, problems = reader(text, display, path)
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
        col.inventory.problems.append(internal_problem(display, None, f"reading this {what}", exc))
        return
    from vramlint.fsread import real_path

    # the folder's resolution made once a folder (a realpath of a unit 300 folders deep: 7 ms each)
    col.records.launchers.append(DockerfileRecord(real_path(os.path.abspath(path)), servers, problems))


def _other_format(display: str) -> str | None:
    """Why a file named on the command line is no file vramlint reads, by its name: a dotenv or TOML file
    (`vramlint check $(git ls-files)` names them) read as YAML fails on its first `KEY=value` or `[table]`, an
    error about a file nothing parses as YAML. None for every other name."""
    from vramlint.discover import TEMPLATE_EXTENSIONS, YAML_EXTENSIONS
    from vramlint.extract.shell_scripts import SCRIPT_EXTENSIONS

    name = display.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if name.endswith(YAML_EXTENSIONS + TEMPLATE_EXTENSIONS + SCRIPT_EXTENSIONS):
        return None
    if name == ".env" or name.startswith(".env.") or name.endswith(".env") or ".env." in name:
        return ("a dotenv file: vramlint reads one through the compose `env_file:` that names it (or the `.env` "
                "beside the compose file)")
    if name.endswith(".toml"):
        return "a TOML file: vramlint reads YAML deployment files, Helm charts and launch scripts"
    suffix = name.rsplit(".", 1)[-1] if "." in name else ""
    if suffix in _NOT_YAML:
        # read as YAML, an INI-style file fails on its first `[section]` or `key=value` line: an error about a file
        # nothing parses as YAML (a systemd unit's `*.service` has its own reader, before this)
        return (f"{_NOT_YAML[suffix]} (.{suffix}): a format vramlint does not read (it reads YAML deployment files, "
                "Helm charts, Dockerfiles, launch scripts, supervisord configurations with [program:] sections and "
                "systemd `.service` units)")
    return None


# Apptainer's definition file (apptainer's pkg/build/types/parser/deffile.go): its stages begin at a `bootstrap:`
# line (any case), the header's `key: value` lines before the first `%section`, `#` comments and blank lines skipped
_APPTAINER_HEADER = re.compile(r"\A(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*Bootstrap[ \t]*:", re.I)


def _apptainer_definition(display: str, text: str) -> str | None:
    """Why an Apptainer / Singularity definition file (`*.def` with a `Bootstrap:` header) named on the command
    line is not read: read as YAML, its `%post` section fails on the first line (a false "invalid YAML" error,
    audit23 M4). The image it builds runs where a script runs it (`apptainer exec|run IMAGE COMMAND`), which is
    read with that script."""
    if not display.lower().endswith(".def") or not _APPTAINER_HEADER.match(text):
        return None
    return ("an Apptainer/Singularity definition file (.def): it builds an image (never built here), and vramlint "
            "reads the vLLM server where a script runs that image (`apptainer exec|run IMAGE COMMAND`, or "
            "`singularity`'s); its %runscript and %startscript sections are not read")


# Names that say a file is not YAML (JSON is YAML, and is read)
_NOT_YAML = {"conf": "a configuration file", "ini": "an INI file", "cfg": "a configuration file",
             "cnf": "a configuration file", "properties": "a Java properties file",
             **{unit: f"a systemd .{unit} unit" for unit in ("socket", "timer", "target", "path", "mount", "slice")}}


# an Ansible task that runs a container whose image is a variable need not name vLLM or any of its options
_TEMPLATED_CONTAINER_RUNS = ("docker run", "podman run", "docker_container:", "podman_container:")


_TASKS_SHAPE = re.compile(r"^\s*-\s+name\s*:|^\s*(?:tasks|hosts)\s*:", re.M)


def _templated_container_run(text: str, display: str) -> bool:
    """An Ansible tasks file or playbook (a tasks/ folder's file, or a list of named tasks, or plays) that runs a
    container, its image a Jinja2 expression."""
    if "{{" not in text:
        return False
    low = text.lower()
    if not any(word in low for word in _TEMPLATED_CONTAINER_RUNS):
        return False
    return "/tasks/" in "/" + display.replace("\\", "/") or bool(_TASKS_SHAPE.search(text))


def _unit_written_by_script(text: str, display: str, unit: str) -> tuple[list[Server], list[Problem]]:
    """The servers of a systemd unit a script's here-document writes to ``unit`` (its text on the script's
    lines): the host's file, not the repository's, so no drop-in beside it is read."""
    from vramlint.extract.systemd import read_systemd_servers

    return read_systemd_servers(text, display, None, given_drop_ins=[], unit=unit)


def _submits_slurm_jobs(text: str, display: str) -> bool:
    """A shell script that may submit a Slurm job (`sbatch JOB`): the job script it names may start vLLM where
    the script itself names no vLLM (`shell_scripts._submitted_jobs` follows it)."""
    from vramlint.extract.shell_scripts import is_shell_script

    return is_shell_script(display, text) and re.search(r"(?:^|[\s;&|(`])sbatch\s", text) is not None


def _scan_text_unguarded(col: _Collector, text: str, display: str, base_dir: str, use_prefilter: bool) -> None:
    if use_prefilter and not prefilter(text) and not _templated_container_run(text, display) and not (
            "sbatch" in text and _submits_slurm_jobs(text, display)):
        if any(kind in text for kind in _JOINED_KINDS):
            col.unparsed.append((display, text))
        if "build:" in text and "services:" in text:
            col.unread_builds.append((display, text, base_dir))
        return
    from vramlint.extract import shell_scripts

    refs_before, configmaps_before = len(col.records.script_refs), len(col.records.configmaps)
    if shell_scripts.is_shell_script(display, text):  # a launch script named on the command line: not YAML
        records = shell_scripts.read_script_records(text, display, lambda doc: _kubernetes_records(doc, base_dir),
                                                    _unit_written_by_script)
        col.inventory.problems.extend(records.problems)
        records.problems = []
        _merge(col.records, records)
        if len(col.records.script_refs) > refs_before:
            _resolve_own_script_refs(col.records, refs_before, configmaps_before)
        return
    from vramlint.extract import extract_records
    from vramlint.yamlload import load_shared

    if use_prefilter and text.count("\n---") >= MANY_DOCUMENTS:
        text = _only_candidate_documents(text)
    ansible_note = None
    origin = None  # where each line of a rendered template was written, when the rendering moved lines
    if "{{" in text and os.path.basename(os.path.dirname(display)) == "templates":
        from vramlint.extract.ansible import render_role_template  # an Ansible role's Jinja2 template

        rendered = render_role_template(text, display)
        if rendered is not None:
            text, ansible_note = rendered[0], rendered[1]
            origin = rendered[2] if len(rendered) > 2 else None
    problems_at, record_problems_at = len(col.inventory.problems), len(col.records.problems)
    template_syntax = "{{" in text or "${" in text or "%{" in text
    if not template_syntax and len(text) > STREAM_FROM_CHARS:
        _scan_each_document(col, text, display, base_dir)
        return
    # a template's plain reading is needed only when its reading as a template fails too
    # nothing below changes the documents' contents: a text seen before (a copied file) is not parsed again
    docs, problems = load_shared(text, display, quick_refusal=template_syntax)
    templated = False
    # A file named as a template (`x.yaml.tpl`) is rendered by another tool (envsubst, Jinja, Terraform) before it
    # is applied, even when it parses as YAML as written: its `${VAR}` / `{{ }}` values are what that tool fills in,
    # unknown here, not the literal text Kubernetes would refuse.
    if template_syntax and (any(p.level == "error" for p in problems) or _template_name(display) is not None):
        from vramlint.helm.templated import load_templated_text  # Go/Terraform templates, <PLACEHOLDER>s

        docs2, problems2, template_note = load_templated_text(text, display)
        if not any(p.level == "error" for p in problems2):
            # With the template actions replaced, both branches of an `{{ if }} ... {{ else }}` stand side by side,
            # so a key written in each is a duplicate of the placeholder text, not of what Helm renders: not said.
            docs, templated = docs2, True
            problems = [p for p in problems2 if not p.message.startswith("duplicate key")]
        else:
            if not docs:  # perhaps libyaml's quick refusal: ruamel's reading, its words and the documents before
                docs, problems = load_shared(text, display)
            hint = _render_hint(display, text)
            problems = [Problem(p.file, p.line, p.column, p.message + hint) for p in problems]
    problems = _template_file_problems(display, problems)
    if docs and any(p.message.startswith(_DUPLICATE_KEY) for p in problems):
        from vramlint.extract import document_kind

        if any(document_kind(doc) == "compose" for doc in docs):
            problems, docs = _compose_refuses_duplicate_keys(display, problems), []
    col.inventory.problems.extend(problems)
    found_before = len(col.records.servers)
    refs_before, configmaps_before = len(col.records.script_refs), len(col.records.configmaps)
    env_refs_before = len(col.records.env_refs)
    produced = []  # whether each document gave a server, a note or a piece another document completes
    for doc in docs:
        try:
            rec = extract_records(doc, base_dir)
        except RecursionError:
            col.inventory.problems.append(Problem(display, _doc_line(doc), None, "YAML nested too deeply to read"))
            produced.append(True)  # said
            continue
        except Exception as exc:  # noqa: BLE001 - one document's failure leaves the file's other documents
            col.inventory.problems.append(internal_problem(display, _doc_line(doc), "reading this document", exc))
            produced.append(True)
            continue
        if templated:
            from vramlint.yamlload import has_template_marker

            for server in rec.servers:
                if has_template_marker(server.image):
                    server.image, server.vllm_version = None, None  # unknown until rendered, never marker text
                if has_template_marker(server.name):
                    server.name = None
                # notes are prose: say where a template stood rather than print the marker
                server.notes = [re.sub("\u2983[_\u2984]*", "(template)", n) for n in server.notes]
                server.notes.append(f"template syntax ({_syntax_shown(text)}) replaced: values written as template "
                                    "expressions are unknown until rendered")
        produced.append(any((rec.servers, rec.problems, rec.runtimes, rec.inference_services, rec.configmaps,
                             rec.config_refs, rec.llmaz, rec.script_refs)))
        _merge(col.records, rec)
    if len(col.records.script_refs) > refs_before:
        _resolve_own_script_refs(col.records, refs_before, configmaps_before)
    if ansible_note is not None:
        for server in col.records.servers[found_before:]:
            server.notes.append(ansible_note)
    if len(col.records.env_refs) > env_refs_before:  # after every note the join found on the servers
        _resolve_own_env_refs(col.records, env_refs_before, configmaps_before, found_before)
    if origin is not None:
        _place_on_template(col, display, origin, found_before, problems_at, record_problems_at)
    if templated and template_note and len(col.records.servers) > found_before:
        col.inventory.notes.append(template_note)  # said once per file
    if not problems and not any(produced) and _may_mention(text):
        _say_unread_mention(col, text, display, templated, docs)


_DUPLICATE_KEY = "duplicate key "
_DUPLICATE_KEY_WORDS = re.compile(r"^duplicate key (?P<key>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
                                  r"(?: \(first at line (?P<first>\d+)\))?:")


def _compose_refuses_duplicate_keys(display: str, problems: list[Problem]) -> list[Problem]:
    """The duplicate-key warnings of a compose file made the one error compose gives. compose-go's loader walks
    every mapping of each document (loader/reset.go `resolveContainer`, before yaml decodes it) and stops at the
    first key written twice, at any depth: `failed to parse FILE: line N: mapping key "K" already defined at line
    M`, so `docker compose` starts no service of the file (the last key is kept only by Kubernetes' API server)."""
    import ast
    import json

    duplicates = [p for p in problems if p.message.startswith(_DUPLICATE_KEY)]
    first = min(duplicates, key=lambda p: (p.line or 0, p.column or 0))
    m = _DUPLICATE_KEY_WORDS.match(first.message)
    key = ast.literal_eval(m.group("key")) if m else None
    quoted = json.dumps(key) if isinstance(key, str) else "a key"
    where = f" already defined at line {m.group('first')}" if m and m.group("first") else " already defined"
    others = sorted(p.line for p in duplicates if p is not first and p.line)
    plural = "s" if len(others) > 1 else ""
    more = (f"; {len(others)} more duplicate key{plural} (line{plural} {', '.join(map(str, others[:10]))}"
            f"{' ...' if len(others) > 10 else ''}) would stop it once this one is mended") if others else ""
    name = os.path.basename(display)
    message = (f"duplicate key {quoted}: docker compose refuses the whole file (failed to parse {name}: line "
               f"{first.line}: mapping key {quoted}{where}), so none of its services starts; no server is read "
               f"from it{more}. Fix: keep one of the two (rename a service that should run beside the other)")
    return [p for p in problems if not p.message.startswith(_DUPLICATE_KEY)] + [
        Problem(first.file, first.line, first.column, message, level="error")]


def _place_on_template(col: _Collector, display: str, origin: Callable[[int, int], tuple[int, int]],
                       servers_at: int, problems_at: int, record_problems_at: int) -> None:
    """What was read from a rendered template (servers, problems) placed on the template's lines: a `{% for %}`
    that wrote several services, an `{% if %}` left out, moved the rendered lines."""
    import dataclasses

    from vramlint.model import Location

    def moved(loc: Location) -> Location:
        if loc.file != display or not loc.line:
            return loc
        line, column = origin(loc.line, loc.column or 1)
        end_line = end_column = None
        if loc.end_line and loc.end_line == loc.line and loc.end_column:
            end_line, end_column = line, column + (loc.end_column - (loc.column or 1))
        return dataclasses.replace(loc, line=line, column=column, end_line=end_line, end_column=end_column)

    def walk(node: Any, depth: int) -> None:
        if depth > 3 or not dataclasses.is_dataclass(node):
            return
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            if isinstance(value, Location):
                setattr(node, f.name, moved(value))
            elif isinstance(value, dict) and any(isinstance(v, Location) for v in value.values()):
                setattr(node, f.name, {k: moved(v) if isinstance(v, Location) else v for k, v in value.items()})
            elif isinstance(value, list) and any(isinstance(v, Location) for v in value):
                setattr(node, f.name, [moved(v) if isinstance(v, Location) else v for v in value])
            elif dataclasses.is_dataclass(value) and not isinstance(value, type):
                walk(value, depth + 1)

    for server in col.records.servers[servers_at:]:
        walk(server, 0)
    for problems, at in ((col.inventory.problems, problems_at), (col.records.problems, record_problems_at)):
        for k in range(at, len(problems)):
            p = problems[k]
            if p.file == display and p.line:
                line, column = origin(p.line, p.column or 1)
                problems[k] = dataclasses.replace(p, line=line, column=column if p.column else None)


_USED_AS_WRITTEN = re.compile(r"(?:^|/)(?:\.github/workflows/[^/]+|action\.ya?ml|(?:docker-)?compose[^/]*\.ya?ml|"
                               r"kustomization\.ya?ml|Kustomization)$")
# Ansible's YAML files: a playbook, a role's tasks/handlers/vars/defaults/meta, an inventory's group_vars/host_vars
# (a role's templates/ are Jinja2 rendered by the template module: not these)
_ANSIBLE_PATH = re.compile(r"(?:^|/)(?:playbooks/[^/]+|roles/[^/]+/(?:tasks|handlers|vars|defaults|meta)/.+|"
                           r"(?:group|host)_vars/.+)\.ya?ml$")
_PLAY = re.compile(r"^-\s+(?:hosts|import_playbook|ansible\.builtin\.import_playbook)\s*:", re.MULTILINE)
# Argo Workflows' kinds: `{{inputs.parameters.x}}` is substituted by the controller in the parsed spec
_ARGO_API = re.compile(r"^apiVersion:\s*[\"']?argoproj\.io/", re.MULTILINE)
_ARGO_WORKFLOW_KIND = re.compile(r"^kind:\s*[\"']?(?:Workflow|WorkflowTemplate|ClusterWorkflowTemplate|CronWorkflow)"
                                 r"[\"']?\s*$", re.MULTILINE)


def _parsed_before_rendering(display: str, text: str) -> bool:
    """Whether the tool that uses the file parses its YAML as written and fills in its `{{ }}` / `${ }` values
    afterwards, in the parsed strings: GitHub workflows and actions (`${{ }}`: GitHub's expressions), compose files
    (`${VAR}`: compose's interpolation), Kustomizations (kustomize has no templating), Ansible playbooks, task and
    variables files (Ansible loads them with PyYAML, AnsibleLoader, and renders Jinja2 in a task's values when it
    runs) and Argo Workflows (its controller substitutes `{{ }}` in the parsed template). No render step makes their
    YAML valid."""
    path = display.replace("\\", "/")
    if _USED_AS_WRITTEN.search(path):
        return True
    if "/templates/" in f"/{path}" or path.endswith((".j2", ".jinja2", ".jinja")):
        return False
    if _ANSIBLE_PATH.search(path) or _PLAY.search(text):
        return True
    return _ARGO_API.search(text) is not None and _ARGO_WORKFLOW_KIND.search(text) is not None


def _render_hint(display: str, text: str) -> str:
    """What an invalid-YAML error adds when the file holds template syntax: the render step, if the file has one
    (none for a file its tool parses before rendering, `_parsed_before_rendering`)."""
    if _parsed_before_rendering(display, text):
        return ""
    example = ("`helm template . | vramlint inventory -`" if "{{" in text else
               "`envsubst < FILE | vramlint check -`" if "${" in text else "`terraform console` / templatefile")
    return f" (the file has {_syntax_shown(text)} template syntax: render it first, e.g. {example})"


def _may_mention(text: str) -> bool:
    """Whether the text may mention vLLM (vramlint.extract.mentions): it names vLLM, or it passes options only
    vLLM's server takes (a container whose image is a template expression)."""
    if "vllm" in text.lower():
        return True
    if "--" not in text:
        return False
    from vramlint.extract.mentions import has_vllm_only_option

    return has_vllm_only_option(text)


def _syntax_shown(text: str) -> str:
    """The template syntax a file holds, as a reader would name it: `{{ }}`, `${ }`, `%{ }`."""
    return ", ".join(shown for mark, shown in (("{{", "{{ }}"), ("${", "${ }"), ("%{", "%{ }")) if mark in text) or "{{ }}"


_TEMPLATE_INFIX = re.compile(r"\.(?:tmpl|tpl|template|j2|jinja2?|tftpl)\.ya?ml$")


def _template_name(display: str) -> str | None:
    """The template suffix a file's name carries (`.yaml.tpl`, `.tftpl`, `.tmpl.yaml`), or None."""
    from vramlint.discover import TEMPLATE_EXTENSIONS

    low = display.lower()
    ext = next((e for e in TEMPLATE_EXTENSIONS if low.endswith(e)), None)
    if ext is None:
        # `deployment.tmpl.yaml`, `model.template.yaml`: the name says template before the YAML extension
        named = _TEMPLATE_INFIX.search(low)
        ext = named.group(0) if named else None
    return ext


def _template_file_problems(display: str, problems: list[Problem]) -> list[Problem]:
    """A file named as a template (`x.yaml.tpl`, `.j2`, `.tmpl`, `.tftpl`) is the input of another tool (Python's
    `str.format`, Jinja, Terraform, a Go program), which renders it before anything reads it as YAML: what it is as
    written is refused by no one, so a YAML error in it is not an error of the deployment. It is said as a note (the
    file could not be read: its servers are not checked), with the change that lets vramlint read it."""
    if not problems:
        return problems  # (most files: the name is not looked at)
    ext = _template_name(display)
    if ext is None:
        chart = _chart_of_data_file(display) if any(
            p.level == "error" and p.message.startswith("invalid YAML") for p in problems) else None
        if chart is None:
            return problems
        # a file of a chart's folder that is none of Helm's own (templates/, values, Chart.yaml): the chart's data,
        # read by its templates through .Files.Get / .Files.Glob (often a `tpl` input), never applied as written
        return [Problem(p.file, p.line, p.column,
                        f"{p.message}; the file is data of the Helm chart {chart} (its templates read it with "
                        ".Files.Get or .Files.Glob), not a manifest Helm applies: not checked as one", level="note")
                if p.level == "error" and p.message.startswith("invalid YAML") else p for p in problems]
    out = []
    for p in problems:
        if p.level == "error" and p.message.startswith("invalid YAML"):
            advice = "" if "render it first" in p.message else (
                " (render it and scan the output, e.g. `<your render step> | vramlint check -`)")
            p = Problem(p.file, p.line, p.column,
                        f"{p.message}; the file is a template ({ext}) that another tool renders before it is used, "
                        "so as written it is not what Kubernetes or Compose reads: vramlint could not read it and its "
                        f"servers are not checked{advice}", level="note")
        out.append(p)
    return out


def _chart_of_data_file(display: str) -> str | None:
    """The chart folder (a Chart.yaml up to four folders above) a file lies in outside its templates/, or None."""
    if display in ("-", "") or display.startswith("<"):
        return None
    d = os.path.dirname(os.path.abspath(display))
    parts: list[str] = []
    for _ in range(4):
        if os.path.isfile(os.path.join(d, "Chart.yaml")):
            if not parts or parts[-1] in ("templates", "charts"):
                return None  # the chart's own files (values overlays at its root), a template, a subchart's file
            return os.path.relpath(d) if not os.path.isabs(display) else d
        parts.append(os.path.basename(d))
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


# A file larger than this (and with no template syntax, whose reading may be redone as a template) is read one
# document at a time: each is extracted as soon as it is built and then dropped (a 5 MB stream of 10,000
# Deployments held 130 MB of documents at once).
STREAM_FROM_CHARS = 1 << 20


def _scan_each_document(col: _Collector, text: str, display: str, base_dir: str) -> None:
    """`_scan_text_unguarded` for a file with no template syntax, one document at a time (the same results, in
    the same order). A stream large enough is read in pieces by both cores (`_stream_pieces`)."""
    from vramlint.yamlload import load_each

    pieces = _stream_pieces(text)
    if pieces is not None:
        read = _read_pieces(text, display, base_dir, pieces)
        if read is not None:
            _add_stream(col, text, display, *read)
            return
    outcomes, kept, problems = _read_stream(display, base_dir, lambda each, restart: load_each(
        text, display, each, restart))
    _add_stream(col, text, display, outcomes, kept, problems)


def _read_stream(display: str, base_dir: str, load: Callable[[Any, Any], list[Problem]]
                 ) -> tuple[list[tuple[Any, Problem | None]], list[Any] | None, list[Problem]]:
    """Each document ``load`` hands over, extracted as soon as it is built: per document its records or the
    problem reading it, the documents while none gave anything (None once one did), and ``load``'s problems."""
    from vramlint.extract import extract_records

    outcomes: list[tuple[Any, Problem | None]] = []  # per document: its records, or the problem reading it
    kept: list[Any] | None = []  # the documents while none gave anything (a file that gives nothing says why)

    def each(doc: Any) -> None:
        nonlocal kept
        try:
            rec = extract_records(doc, base_dir)
        except RecursionError:
            outcomes.append((None, Problem(display, _doc_line(doc), None, "YAML nested too deeply to read")))
            kept = None
            return
        except Exception as exc:  # noqa: BLE001 - one document's failure leaves the file's other documents
            outcomes.append((None, internal_problem(display, _doc_line(doc), "reading this document", exc)))
            kept = None
            return
        outcomes.append((rec, None))
        if kept is not None:
            if any((rec.servers, rec.problems, rec.runtimes, rec.inference_services, rec.configmaps, rec.config_refs,
                    rec.llmaz, rec.script_refs)):
                kept = None
            else:
                kept.append(doc)

    def restart() -> None:
        nonlocal kept
        outcomes.clear()
        kept = []

    problems = load(each, restart)
    return outcomes, kept, problems


def _add_stream(col: _Collector, text: str, display: str, outcomes: list[tuple[Any, Problem | None]],
                kept: Any, problems: list[Problem]) -> None:
    """What `_read_stream` read of a file, into ``col``. ``kept``: the documents, or what `_unread_flags` says
    of them, when none gave anything; else None. The problems of reading the file are said in file order (the
    load says them by kind, per part it reads: read in pieces, the parts are others)."""
    col.inventory.problems.extend(sorted(problems, key=lambda p: (p.line or 0, p.column or 0)))
    refs_before, configmaps_before = len(col.records.script_refs), len(col.records.configmaps)
    env_refs_before, servers_before = len(col.records.env_refs), len(col.records.servers)
    for rec, problem in outcomes:
        if problem is not None:
            col.inventory.problems.append(problem)
        else:
            _merge(col.records, rec)
    if len(col.records.script_refs) > refs_before:
        _resolve_own_script_refs(col.records, refs_before, configmaps_before)
    if len(col.records.env_refs) > env_refs_before:
        _resolve_own_env_refs(col.records, env_refs_before, configmaps_before, servers_before)
    if not problems and kept is not None and _may_mention(text):
        _say_unread_mention(col, text, display, False, kept if isinstance(kept, list) else [],
                            None if isinstance(kept, list) else kept)


# A stream of this many characters or more is read in pieces, one per core (up to MAX_STREAM_PIECES), when
# there are cores to spare: a 5 MB stream of 10,000 vLLM Deployments took 6 CPU-seconds to read and extract.
PARALLEL_STREAM_FROM = 1 << 20
MAX_STREAM_PIECES = 8


def _stream_pieces(text: str, count: int | None = None) -> list[tuple[int, int, int, int]] | None:
    """Where to cut ``text`` (a stream of documents) into pieces read apart, as (start, end, first line, first
    document index) each, or None to read it whole. Cut only at a `---` line: YAML forbids one inside any
    content ("c-forbidden"), anchors do not cross documents, and so each piece reads as it does in the stream.
    Not cut: a stream with a directive or an end marker (`...`, after which a document need not start with
    `---`), whose document count the cut would have to guess, nor one with line breaks other than LF and CR LF,
    nor (by default) one of many documents the join keeps, which are slower to send back than to read. ``count``: how many pieces (default: one per core
    when the stream is large enough)."""
    automatic = count is None
    if count is None:
        if len(text) < PARALLEL_STREAM_FROM:
            return None
        count = _worker_count(PARALLEL_FROM)
    if count < 2 or text.startswith(("%", "...")) or "\n%" in text or "\n..." in text:
        return None
    if text.count("\r") != text.count("\r\n") or any(brk in text for brk in ("\x85", "\u2028", "\u2029")):
        return None  # a line break other than LF (libyaml counts a lone CR, NEL, LS and PS): a piece is padded by LFs
    starts = [m.start() for m in _DOCUMENT_START.finditer(text)]
    if len(starts) < 2:
        return None
    if automatic and sum(text.count(kind) for kind in _KEPT_FOR_THE_JOIN) * 4 > len(starts):
        # Documents the cross-file join keeps (KServe objects, ConfigMaps, llmaz objects) go back whole from a
        # worker, and the join after them runs here: a 5 MB stream of 11,000 InferenceServices read in pieces took
        # 1.1x the time and 46 MB more (farm-bench -n 3, paired). Many such documents: read whole.
        return None
    count = min(count, MAX_STREAM_PIECES)
    cuts: list[int] = []
    for k in range(1, count):
        i = bisect.bisect_left(starts, len(text) * k // count)
        if i < len(starts) and starts[i] > (cuts[-1] if cuts else 0):
            cuts.append(starts[i])
    if not cuts:
        return None
    # the documents before the first cut: one per `---` line, and one before the first of them if anything but
    # comments and blank lines comes before it (a stream's first document need not start with `---`)
    head = text[:starts[0]].lstrip("\ufeff")
    before_first = 1 if any(line.strip() and not line.lstrip().startswith("#") for line in head.splitlines()) else 0
    pieces = []
    bounds = [0] + cuts + [len(text)]
    line = 0
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        first_doc = 0 if a == 0 else before_first + bisect.bisect_left(starts, a)
        pieces.append((a, b, line, first_doc))
        line += text.count("\n", a, b)
    return pieces


# Words of the documents the cross-file join keeps whole (vramlint.scan._pack_join_lines' kinds)
_KEPT_FOR_THE_JOIN = ("InferenceService", "ServingRuntime", "ConfigMap", "llmaz.io")

# What the workers of `_read_pieces` read: set before the fork, read by them as their own copy
_STREAM_JOB: list[Any] = []


def _read_pieces(text: str, display: str, base_dir: str, pieces: list[tuple[int, int, int, int]]) -> Any:
    """`_read_stream` of each piece, the first here and the others by a pool of forked workers at the same
    time, put together in order; None when that could not be done as one reading of the whole stream would (a
    document blanked by the bounds, which apply to the stream as a whole; a piece with an error, after which
    the stream may be read no further; a pool that cannot run): the caller reads it whole."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from vramlint.yamlload import MAX_DOCUMENT_NODES, MAX_NUMBER_PROBLEMS, _bounded

    bounded, bound_problems = _bounded(text, display, MAX_DOCUMENT_NODES)
    if bounded is not text:
        return None  # documents blanked for their depth or size: read whole, as the bounds say of the whole
    lines = text.splitlines()
    _STREAM_JOB[:] = [text, display, base_dir, pieces, lines]
    try:
        # (an executor, not multiprocessing's Pool: a worker that dies, killed for its memory, fails the wait
        # here at once instead of leaving it waiting for ever)
        with ProcessPoolExecutor(len(pieces) - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            later = [pool.submit(_read_piece_job, k) for k in range(1, len(pieces))]
            first = _read_piece(0)
            results = [first] + [_unpickle_piece(job.result(), lines) for job in later]
    except Exception:  # noqa: BLE001 - a pool that cannot run (no semaphores, a worker killed): read it whole
        return None
    finally:
        _STREAM_JOB.clear()
    outcomes: list[tuple[Any, Problem | None]] = []
    problems: list[Problem] = list(bound_problems)
    flags: tuple[bool, bool] | None = (False, False)  # what `_unread_flags` says of them while no piece gave anything
    # the numbers said one by one up to MAX_NUMBER_PROBLEMS in a file, by the words of their warnings
    numbers = dict.fromkeys(("beyond any float64", "too large to be a number"), 0)
    for k, (piece_outcomes, kept, piece_problems) in enumerate(results):
        if k + 1 < len(pieces) and any(p.level == "error" for p in piece_problems):
            return None  # the stream may stop there: what comes after is read (or not) as the whole is
        for kind, seen in numbers.items():
            numbers[kind] = seen + sum(kind in p.message for p in piece_problems)
            if numbers[kind] > MAX_NUMBER_PROBLEMS:
                return None  # said once past so many in a file (yamlload._folded): the whole file's count
        outcomes.extend(piece_outcomes)
        problems.extend(piece_problems)
        if kept is None:
            flags = None
        elif flags is not None:
            said = _unread_flags(kept) if isinstance(kept, list) else kept
            flags = (flags[0] or said[0], flags[1] or said[1])
    return outcomes, flags, problems


def _read_piece(k: int) -> tuple[list[Any], Any, list[Problem]]:
    """Piece ``k`` of `_STREAM_JOB` read by `_read_stream`: padded with line breaks to its first line (positions
    stay the file's), its documents given the file's lines and their index in the stream."""
    from vramlint.yamlload import load_each_unbounded

    text, display, base_dir, pieces, lines = _STREAM_JOB
    start, end, first_line, first_doc = pieces[k]
    piece = "\n" * first_line + text[start:end]

    def load(each: Any, restart: Any) -> list[Problem]:
        def placed(doc: Any) -> None:
            doc.lines = lines
            doc.index += first_doc
            each(doc)

        return load_each_unbounded(piece, display, placed, restart)

    return _read_stream(display, base_dir, load)


def _read_piece_job(k: int) -> bytes:
    import gc
    import io
    import pickle

    IN_WORKER[0] = True
    gc.disable()  # a worker's objects live until it ends, soon (as `_scan_text` does while a file is read)
    outcomes, kept, problems = _read_piece(k)
    if kept is not None:
        kept = _unread_flags(kept)  # what the parent needs of the documents, not the documents
    lines = _STREAM_JOB[4]
    out = io.BytesIO()

    class _Pickler(pickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:
            return "lines" if obj is lines else None  # the file's lines: the parent has them already

    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump((outcomes, kept, problems))
    return out.getvalue()


def _unpickle_piece(data: bytes, lines: list[str]) -> Any:
    import io
    import pickle

    class _Unpickler(pickle.Unpickler):
        def persistent_load(self, pid: Any) -> Any:
            if pid == "lines":
                return lines
            raise pickle.UnpicklingError(f"unknown reference {pid!r}")

    return _Unpickler(io.BytesIO(data)).load()


def _kubernetes_records(doc: Any, base_dir: str) -> Any:
    """The Records of a document a script's here-document writes, when it is a Kubernetes manifest (else None:
    a values file, a compose file or text written the same way is not what kubectl applies)."""
    from vramlint.extract import document_kind, extract_records

    if document_kind(doc) not in ("kubernetes", "list"):
        return None
    return extract_records(doc, base_dir)


def _resolve_own_script_refs(records: Any, refs_before: int, configmaps_before: int) -> None:
    """Read now the scripts of this file's containers that no other file can change: a script not mounted from
    a ConfigMap, or mounted from one this file defines (the join prefers the container's own file's ConfigMap).
    What the join would say is said the same; the container's document is not kept for it (memory: thousands
    of files)."""
    from vramlint.extract import script_refs

    own: dict[str, list[Any]] = {}
    for cm in records.configmaps[configmaps_before:]:
        own.setdefault(cm.name, []).append(cm)
    now, later = [], []
    for ref in records.script_refs[refs_before:]:
        key = script_refs.script_key(ref)[1]
        if key is None or any(cm.file == ref.doc.file for cm in own.get(key[0], ())):
            now.append(ref)
        else:
            later.append(ref)
    if now:
        del records.script_refs[refs_before:]
        records.script_refs.extend(later)
        script_refs.resolve_script_refs(now, own, records)


def _resolve_own_env_refs(records: Any, refs_before: int, configmaps_before: int, servers_before: int) -> None:
    """Read now the variables of this file's containers whose every ConfigMap this file defines: the join takes a
    fitting ConfigMap of the container's own file over any other (`env_refs.configmap_for`), so no other file can
    change what they get, and the container's document need not be kept (and sent back by a worker) for the join
    (the 557-line production-stack template: 158 KB a copy). A ref whose reading fails is left for the join, which
    says the failure as before."""
    from vramlint.extract import env_refs
    from vramlint.extract.podspec import configmap_refs

    own: dict[str, list[Any]] = {}
    for cm in records.configmaps[configmaps_before:]:
        own.setdefault(cm.name, []).append(cm)
    if not own:
        return
    now = []
    for ref in records.env_refs[refs_before:]:
        keyed, whole = configmap_refs(ref.container)
        names = {name for name, _key in keyed.values()}.union(whole)
        if all(getattr(env_refs.configmap_for(ref, name, own), "file", None) == ref.doc.file for name in names):
            now.append(ref)
    if not now:
        return
    servers = records.servers[servers_before:]
    done = set()
    for ref in now:
        try:
            env_refs.resolve_env_refs([ref], own, servers)
        except Exception:  # noqa: BLE001 - the join reads it again and says the failure where it always did
            break
        done.add(id(ref))
    records.env_refs[refs_before:] = [ref for ref in records.env_refs[refs_before:] if id(ref) not in done]


# Kinds other documents' servers are completed with, which need not mention vLLM: the prefilter keeps their texts
_JOINED_KINDS = ("ConfigMap", "NodePool", "ComputeClass", "ResourceClaim")


# A stream of this many documents is prefiltered document by document (a 100,000-document file that mentions
# vLLM once must not be parsed whole).
MANY_DOCUMENTS = 1000
_DOCUMENT_START = re.compile(r"^---(?=[ \t\r]|$)", re.MULTILINE)


def _only_candidate_documents(text: str) -> str:
    """``text`` with the documents the prefilter rules out (and that hold no ConfigMap a `--config` may name)
    blanked out, line for line, so that positions stay those of the file."""
    starts = [m.start() for m in _DOCUMENT_START.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    starts.append(len(text))
    out = []
    for begin, end in zip(starts, starts[1:], strict=False):
        chunk = text[begin:end]
        keep = prefilter(chunk) or any(kind in chunk for kind in _JOINED_KINDS)
        if keep:
            out.append(chunk)
        else:
            # its `---` stays: a flow collection left open in the document before ends there, as in the file (the
            # YAML error is said on that line, not on the next marker kept), and documents keep their index
            out.append(("---" if chunk.startswith("---") else "") + "\n" * chunk.count("\n"))
    return "".join(out)


def _say_unread_mention(col: _Collector, text: str, display: str, templated: bool, docs: list[Any],
                        flags: tuple[bool, bool] | None = None) -> None:
    """A file that plainly mentions vLLM but gave nothing to read: say where, and why no server was read.
    ``flags``: what `_unread_flags` says of the documents, when they were read apart (`_read_pieces`)."""
    from vramlint.extract.mentions import (
        ansible_variables,
        first_mention,
        shared_reason,
        unread_reason,
        unread_shape,
    )

    mention = first_mention(text)
    if mention is None:
        return
    from vramlint.extract.helm_known import missing_dependencies

    operator_settings, known_values = _unread_flags(docs) if flags is None else flags
    if operator_settings:
        return  # an operator's own settings (the images it runs its resources with): no server of their own
    dependencies = missing_dependencies(display) if flags is not None else \
        missing_dependencies(docs[0].file) if docs else []
    own_chart = _own_chart_folder(display if flags is not None else docs[0].file if docs else None)
    reason = unread_reason(text, mention, templated, known_values, dependencies, own_chart,
                           ansible_variables(display if flags is not None else docs[0].file if docs else display),
                           unread_shape(docs, mention))
    col.inventory.problems.append(Problem(display, mention.line, 1, reason, level="note",
                                          advice=shared_reason(reason, mention)))


def _unread_flags(docs: list[Any]) -> tuple[bool, bool]:
    """Of the documents of a file that gave nothing: whether one is an operator's own settings, and whether one
    is read by its shape as a whole as the values of a chart vramlint knows (generic container values are not)."""
    from vramlint.extract import document_kind
    from vramlint.extract.helm_known import detect, operator_configuration

    if any(operator_configuration(doc.data, doc.file) for doc in docs):
        return True, False
    return False, any(document_kind(doc) == "helm-values" and detect(doc.data, doc.file) != "container"
                      for doc in docs)


def _own_chart_folder(file: str | None) -> str | None:
    """The chart folder (Chart.yaml and templates/ beside ``file``) whose values ``file`` is, else None: such a
    chart was evaluated with it (vramlint.helm) and gave its values back only because it rendered no server."""
    if not file:
        return None
    folder = os.path.dirname(os.path.abspath(file))
    if os.path.basename(file) in ("values.yaml", "values.yml") and os.path.isdir(os.path.join(folder, "templates")) \
            and any(os.path.isfile(os.path.join(folder, n)) for n in ("Chart.yaml", "Chart.yml")):
        return os.path.dirname(file) or "."
    return None


def _doc_line(doc: Any) -> int | None:
    from vramlint.yamlload import node_location

    loc = node_location(doc.file, doc.data)
    return loc.line if loc else None


def _merge(into: Any, rec: Any) -> None:
    into.servers.extend(rec.servers)
    into.problems.extend(rec.problems)
    into.runtimes.extend(rec.runtimes)
    into.inference_services.extend(rec.inference_services)
    into.configmaps.extend(rec.configmaps)
    into.config_refs.extend(rec.config_refs)
    into.llmaz.extend(rec.llmaz)
    into.script_refs.extend(rec.script_refs)
    into.env_refs.extend(rec.env_refs)
    into.node_pools.extend(rec.node_pools)
    into.device_claims.extend(rec.device_claims)
    into.dockerfiles.extend(rec.dockerfiles)
    into.built_dockerfiles.extend(rec.built_dockerfiles)
    into.launchers.extend(rec.launchers)
    into.terraform.extend(rec.terraform)
    into.ray_pods.extend(rec.ray_pods)
    into.services.extend(rec.services)
    into.walked_scripts.extend(rec.walked_scripts)


def _drop_jobs_read_as_submitted(rec: Any) -> None:
    """A Slurm job script read alone (walked, or named) and through a scanned script's `sbatch` command that
    submits it (`shell_scripts._submitted_jobs`): the server is the one the submission starts, whose command-line
    options sbatch reads over the script's directives; the reading alone is dropped (one server, not two)."""
    submitted = {s.file for s in rec.servers if s.kind == "Slurm job"}
    if submitted:
        rec.servers[:] = [s for s in rec.servers if s.kind != "script" or s.file not in submitted]


def _drop_scripts_read_otherwise(col: _Collector, servers: list[Server]) -> list[Server]:
    """A shell script the walk read because it starts vLLM (walk-scripts) and that another reading also reaches:
    named, sourced for its variables, run by a container's command, a Dockerfile's CMD, a systemd unit's
    ExecStart, submitted by `sbatch` (a server whose settings are read on the script's lines). That reading has
    the context the script runs in (the image, the unit's environment, the job's options): its server is kept,
    the walk's reading of the script alone is dropped (one server, not two), as `_drop_jobs_read_as_submitted`
    does for Slurm jobs. What the script's reading said of its lines (a file it sources not read) stays: it is
    true of the script whoever runs it, and said once with the other reading's same words (check.dedupe_findings)."""
    walked = set(col.records.walked_scripts)
    reached: set[str] = set()
    for server in servers:
        if server.file in walked:
            continue
        places = [server.location, server.model_location, server.image_location,
                  *server.arg_locations.values(), *server.env_locations.values()]
        reached.update(place.file for place in places if place is not None and place.file in walked)
    return [s for s in servers if s.file not in reached] if reached else servers


def _join(col: _Collector) -> None:
    """Cross-document resolution: KServe runtime + InferenceService, llmaz Playground + OpenModel + BackendRuntime,
    `--config` files from ConfigMaps."""
    rec = col.records
    if col.released_values:
        _drop_released_values(col)
    if rec.terraform:
        _join_terraform(col)
    _drop_jobs_read_as_submitted(rec)
    if rec.dockerfiles or rec.launchers:
        _join_dockerfiles(col)
    if rec.built_dockerfiles:
        _drop_handed_configs(col)
    if rec.env_refs:
        try:
            _resolve_env_refs(col)
        except Exception as exc:  # noqa: BLE001 - the join's failure costs those variables, not the run
            rec.problems.append(internal_problem(*_record_place(rec.env_refs[0].server),
                                                 "reading container variables from ConfigMaps", exc))
    if rec.script_refs:
        from vramlint.extract import script_refs  # scripts run from ConfigMaps, in any scanned files

        script_refs.resolve_script_refs(rec.script_refs, _configmaps_by_name(col), rec)
    if rec.ray_pods and rec.services:
        from vramlint.extract import ray_pods  # a Ray cluster of plain workloads, joined through a Service

        try:
            ray_pods.join(rec.ray_pods, rec.services)
        except Exception as exc:  # noqa: BLE001 - the join's failure costs the group, not the run
            rec.problems.append(internal_problem(*_record_place(rec.ray_pods[0].server), "joining Ray worker "
                                                 "pods with their head", exc))
    servers: list[Server] = list(rec.servers)
    try:
        if rec.runtimes or rec.inference_services:  # else nothing to join (and no import: start-up time)
            from vramlint.extract import kserve

            joined, problems, refs = kserve.join(rec.runtimes, rec.inference_services)
        else:
            joined, problems, refs = [], [], []
        servers.extend(joined)
        rec.problems.extend(problems)
        rec.config_refs.extend(refs)
    except Exception as exc:  # noqa: BLE001 - the join's failure costs the KServe servers, not the run
        first = (rec.inference_services or rec.runtimes or [None])[0]
        rec.problems.append(internal_problem(*_record_place(first), "joining KServe InferenceServices with "
                                             "their ServingRuntimes", exc))
    if rec.llmaz:
        from vramlint.extract import llmaz  # Playground + OpenModel + BackendRuntime, in any scanned files

        try:
            joined, problems, replaced = llmaz.join(rec.llmaz)
            replaced_ids = {id(r) for r in replaced}  # by identity: a set, not a scan per server
            servers = [s for s in servers if id(s) not in replaced_ids] + joined
            rec.problems.extend(problems)
        except Exception as exc:  # noqa: BLE001
            rec.problems.append(internal_problem(*_record_place(rec.llmaz[0]), "joining llmaz Playgrounds with "
                                                 "their models and runtimes", exc))
    try:  # before the NodePools, whose GPU a claimed device's selector may already say
        _join_device_claims(col, servers)
    except Exception as exc:  # noqa: BLE001
        rec.problems.append(internal_problem(*_record_place((rec.device_claims or [None])[0]),
                                             "reading the devices of DRA resource claims", exc))
    try:  # before the --config join, which lets the unparsed texts go
        _join_node_pools(col, servers)
    except Exception as exc:  # noqa: BLE001
        rec.problems.append(internal_problem(*_record_place((rec.node_pools or [None])[0]),
                                             "reading the GPU of Karpenter NodePools", exc))
    if rec.walked_scripts:  # once every reading that may reach a script (containers, images, units) is joined
        servers = _drop_scripts_read_otherwise(col, servers)
    _narrow_visible_devices(servers)  # once every source of the count (DRA claims included) is read
    try:
        _resolve_config_refs(col)
    except Exception as exc:  # noqa: BLE001
        ref = col.records.config_refs[0] if col.records.config_refs else None
        rec.problems.append(internal_problem(*_record_place(getattr(ref, "server", None)),
                                             "reading --config files from ConfigMaps", exc))
    from vramlint.extract import clear_template_values

    kept = []
    for server in servers:
        try:
            clear_template_values(server)
            kept.append(server)
        except Exception as exc:  # noqa: BLE001
            rec.problems.append(internal_problem(*_record_place(server), "reading this server", exc))
    servers = kept
    try:
        if any(s.source_format == "compose" and s.gpu is not None and s.gpu.shared_key for s in servers):
            from vramlint.extract.compose_starts import mark_started_alone  # compose engines sharing a GPU

            mark_started_alone(servers, col.starters)
    except Exception as exc:  # noqa: BLE001 - the evidence's failure costs that downgrade, not the run
        rec.problems.append(internal_problem(*_record_place(servers[0] if servers else None),
                                             "reading how compose services are started", exc))
    col.inventory.servers.extend(servers)
    col.inventory.problems.extend(rec.problems)
    _drop_answered_variable_notes(col, servers)


# what a server read from an Ansible role's template says of it (vramlint.extract.ansible)
_ANSIBLE_READ = ("read as the Ansible role's template", "Jinja2 values taken from", "Jinja2 values unknown")


def _drop_answered_variable_notes(col: _Collector, servers: list[Server]) -> None:
    """The note that an Ansible role's (or inventory's) vLLM image was not read where a server of the role or play
    was read with that file's variables (its notes name the file): one root cause, one finding."""
    from vramlint.extract.mentions import ANSIBLE_VARIABLES_UNREAD

    problems = col.inventory.problems
    marked = [p for p in problems if p.level == "note" and ANSIBLE_VARIABLES_UNREAD in p.message]
    if not marked:
        return
    from vramlint.extract.mentions import ansible_variables

    answered = set()
    for problem in marked:
        owner = ansible_variables(problem.file)
        if owner is None:
            continue
        if owner[0] == "role":
            # a server the role's own tasks or templates start, read with the play's values (the role's, or the
            # inventory's over them)
            prefix = "" if owner[1] in ("", ".") else owner[1].rstrip("/") + "/"
            read = any(s.file.startswith(prefix) and (s.source_format == "ansible" or any(
                marker in note for note in s.notes for marker in _ANSIBLE_READ)) for s in servers)
        else:
            read = any(problem.file in note for s in servers for note in s.notes)  # a value taken from the file
        if read:
            answered.add(id(problem))
    if answered:
        problems[:] = [p for p in problems if id(p) not in answered]


def _narrow_visible_devices(servers: list[Server]) -> None:
    """The devices a pod's engine sees among those its containers are given (CUDA_VISIBLE_DEVICES and its
    ROCm and Level Zero counterparts; compose services and scripts read them where they are read)."""
    pods = [s for s in servers if s.source_format in ("kubernetes", "helm-values") and s.gpu is not None
            and any(name.endswith(("VISIBLE_DEVICES", "AFFINITY_MASK")) for name in s.env)]
    if not pods:
        return
    from vramlint.extract.podspec import narrow_to_visible_devices

    for server in pods:
        narrow_to_visible_devices(server.gpu, server.env, server.env_locations)


def _drop_handed_configs(col: _Collector) -> None:
    """A vLLM config file that a compose service hands to its own program (PaddleOCR's `--backend_config`) is that
    program's input: its server is the service's, which is not a vLLM command line vramlint reads, so the file's
    standalone reading is no server of its own (a `vllm serve --config` of it merges it into that server)."""
    rec = col.records
    built = set(rec.built_dockerfiles)
    handed = [s for s in rec.servers if s.source_format == "vllm-config" and os.path.realpath(s.file) in built]
    if handed:
        gone = {id(s) for s in handed}
        rec.servers[:] = [s for s in rec.servers if id(s) not in gone]
        for server in handed:
            rec.problems.append(Problem(server.file, server.location.line, server.location.column, (
                "this vLLM config file is given by path to the program of a compose service that is not a vLLM "
                "command line (a launcher that starts vLLM itself): not counted as a server of its own"),
                level="note"))


def _join_dockerfiles(col: _Collector) -> None:
    """A scanned Dockerfile's server counts unless a scanned compose service builds that Dockerfile: the service
    runs the image with its own `entrypoint`/`command` where it sets them (they replace ENTRYPOINT/CMD), and is
    read with the Dockerfile already (compose `build:`), so the Dockerfile's reading is dropped with what it said.
    A compose file that names no vLLM word but builds an image is read now: its service may run this Dockerfile."""
    rec = col.records
    if any(record.servers or record.problems for record in rec.dockerfiles):
        pending, col.unread_builds = col.unread_builds, []
        ours = {record.path for record in rec.dockerfiles}
        for display, text, base_dir in pending:
            servers, problems, said = len(rec.servers), len(rec.problems), len(col.inventory.problems)
            built_before = len(rec.built_dockerfiles)
            try:
                _scan_text_unguarded(col, text, display, base_dir, use_prefilter=False)
            except Exception:  # noqa: BLE001 - a file the prefilter passed over: it had nothing to say before
                # and its failure must not take the Dockerfile's own server with it: as if never read
                del rec.built_dockerfiles[built_before:]
            if not ours.intersection(rec.built_dockerfiles[built_before:]):
                # builds none of the scanned vLLM Dockerfiles: what it says is what it said before, nothing
                del rec.servers[servers:], rec.problems[problems:], col.inventory.problems[said:]
    built = set(rec.built_dockerfiles)
    for record in rec.dockerfiles:
        if record.path in built:
            continue
        rec.servers.extend(record.servers)
        rec.problems.extend(record.problems)
        built.update(record.followed)
    # a supervisord configuration an image in the tree runs is read through that image (its FROM, ENV, GPUs)
    for record in rec.launchers:
        if record.path not in built:
            rec.servers.extend(record.servers)
            rec.problems.extend(record.problems)
    rec.dockerfiles, rec.launchers = [], []


def _join_device_claims(col: _Collector, servers: list[Server]) -> None:
    """The accelerators of the DRA claims the pods use (`vramlint.extract.resource_claims`)."""
    pending = [s for s in servers if s.device_claims]
    if not pending:
        return
    from vramlint.extract.resource_claims import join_device_claims, read_claim_object
    from vramlint.yamlload import load_text

    claims = list(col.records.device_claims)
    for display, text in col.unparsed:  # claims do not mention vLLM: the prefilter passed over their files
        if "ResourceClaim" not in text or "resource.k8s.io/" not in text:
            continue
        for doc in load_text(text, display)[0]:
            claim = read_claim_object(doc, doc.data, "") if hasattr(doc.data, "get") else None
            if claim is not None:
                claims.append(claim)
                col.inventory.problems.extend(claim.problems)
    join_device_claims(pending, claims)


def _join_node_pools(col: _Collector, servers: list[Server]) -> None:
    """The GPU of the NodePools the pods select, when the pods do not say it (`vramlint.extract.node_pools`)."""
    selecting = [s for s in servers if s.gpu is not None and s.gpu.node_selection is not None]
    if not selecting:
        return
    from vramlint.extract.podspec import FAMILY_ONLY  # already imported: it made the node selections

    pending = [s for s in selecting if s.gpu.type is None or s.gpu.type in FAMILY_ONLY]
    if not pending:
        return
    from vramlint.extract.node_pools import MAX_POOLS, join_node_pools, read_compute_class, read_node_pool
    from vramlint.yamlload import load_text

    pools = list(col.records.node_pools)
    for display, text in col.unparsed:  # NodePools do not mention vLLM: the prefilter passed over their files
        if not (("NodePool" in text and "karpenter.sh/" in text) or "ComputeClass" in text):
            continue
        docs, _problems = load_text(text, display)
        for doc in docs:
            if not hasattr(doc.data, "get"):
                continue
            if doc.data.get("kind") == "NodePool":
                pool = read_node_pool(doc, doc.data, "")
                if pool is not None:
                    pools.append(pool)
            elif doc.data.get("kind") == "ComputeClass":
                pools.extend(read_compute_class(doc, doc.data, ""))
    left_out = join_node_pools(pending, pools[:MAX_POOLS])
    if left_out:
        col.inventory.notes.append(f"{left_out} servers whose pods select nodes were not compared with the "
                                   f"{min(len(pools), MAX_POOLS)} Karpenter NodePools and GKE ComputeClasses found (vramlint's limit on "
                                   "comparisons): the GPU of their node pools is not read")


def _record_place(record: Any) -> tuple[str, int | None]:
    """(file, line) of an extracted record (a server, a KServe or llmaz object), for a problem about it."""
    location = getattr(record, "location", None)
    doc = getattr(record, "doc", None)
    if location is None and doc is not None:
        from vramlint.yamlload import node_location

        location = node_location(doc.file, getattr(record, "obj", None))
    file = getattr(location, "file", None) or getattr(doc, "file", None) or getattr(record, "file", None) or "."
    return file, getattr(location, "line", None)


def _configmaps_by_name(col: _Collector) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for cm in col.records.configmaps:
        out.setdefault(cm.name, []).append(cm)
    return out


def _late_configmaps(col: _Collector, wanted: set[str], keep: bool = False) -> None:
    """Parse prefiltered-out files that may define a ConfigMap a server mounts (``keep``: the files not parsed
    stay for a later join)."""
    from vramlint.extract import kubernetes
    from vramlint.yamlload import load_text

    left = []
    for display, text in col.unparsed:
        if not any(re.search(r"name:\s*['\"]?" + re.escape(name) + r"\b", text) for name in wanted):
            left.append((display, text))
            continue
        docs, _problems = load_text(text, display)
        for doc in docs:
            if hasattr(doc.data, "get") and doc.data.get("kind") in ("ConfigMap", "List"):
                col.records.configmaps.extend(kubernetes.extract_records(doc).configmaps)
    col.unparsed = left if keep else []


def _resolve_env_refs(col: _Collector) -> None:
    from vramlint.extract import env_refs

    wanted = env_refs.wanted_configmaps(col.records.env_refs)
    by_name = _configmaps_by_name(col)
    if wanted - set(by_name) and col.unparsed:
        _late_configmaps(col, wanted - set(by_name), keep=True)
        by_name = _configmaps_by_name(col)
    env_refs.resolve_env_refs(col.records.env_refs, by_name, col.records.servers)


def _resolve_config_refs(col: _Collector) -> None:
    refs = col.records.config_refs
    if not refs:
        return
    from vramlint.extract.config_join import join_config_refs
    from vramlint.extract.podspec import config_key_for

    wanted = set()
    for ref in refs:
        for path, _loc in ref.files:
            key = config_key_for(path, ref.mounts) if path else None
            if key:
                wanted.add(key[0])
    by_name = _configmaps_by_name(col)
    if wanted - set(by_name) and col.unparsed:
        _late_configmaps(col, wanted - set(by_name))
        by_name = _configmaps_by_name(col)
    join_config_refs(refs, by_name, col.records.problems)
