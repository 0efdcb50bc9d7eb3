"""`vramlint diff BASE [PATH...]`: what a change does to each server's memory budget.

Every server's budget and findings are computed twice with the same pipeline as `check` (scan -> assess ->
rules -> suppressions): at the git revision BASE and in the working tree. BASE's files are read from git's
object store (`git ls-tree` + `git cat-file --batch`) into a temporary folder that mirrors the repository's
paths, never by checking anything out: the working tree is not touched. Servers are matched by file and YAML
path (`Server.key`, as baselines match findings), following the files git sees as renamed between BASE and
HEAD. Each side is checked with its own configuration (BASE's configuration files are read from git too, from
the paths upward to the repository's root and below them), so a change to `.vramlint.yaml` (another `gpu:`, a
custom GPU) shows in the diff as the deployment files' changes do; the command line's flags apply to both, and
`--config FILE` names one file for both sides.

Git is run with nothing from the repository's configuration that executes code: no hooks, no fsmonitor, and
only plumbing that never runs filters, textconv or external diff drivers.

Exit status: 0 the diff was computed (it is information), 1 with `--fail-on` a finding added reached that
level, 2 usage error (no git history, a BASE that does not resolve, a path outside the repository).
"""

from __future__ import annotations

import argparse
import os
import sys

from vramlint.fsread import own_roots
from vramlint.textsafe import json_safe, neutralise_commands, safe_output

MARKER = "<!-- vramlint-diff -->"

EPILOG = """\
examples:
  vramlint diff main                          every server under . at main against the working tree
  vramlint diff HEAD~1 deploy/ --format markdown
  vramlint diff origin/main --format json --output-file diff.json

BASE defaults, in a GitHub pull request (GITHUB_BASE_REF set), to the merge base of HEAD with the base branch.

exit status: 0 the diff was computed, 1 with --fail-on a finding added reached that level, 2 usage error (no
git repository, BASE does not resolve) or internal failure.
"""

GIT_SAFE = ("-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null", "-c", "core.useBuiltinFSMonitor=false")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from vramlint.commands.check import _positive_int, add_helm_arguments

    parser.add_argument("base", nargs="?", metavar="BASE",
                        help="git revision to compare with (default in a pull request: the merge base with "
                        "GITHUB_BASE_REF)")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to compare (default: .)")
    parser.add_argument("--output-format", "--format", dest="format", choices=("text", "json", "markdown"),
                        default="text", help="output format (--format: the same)")
    parser.add_argument("--output-file", metavar="FILE", help="write the output to FILE instead of standard output")
    parser.add_argument("--config", metavar="FILE", help="configuration file (default: found next to the paths)")
    parser.add_argument("--gpu", metavar="NAME", help="GPU of servers whose files do not say")
    parser.add_argument("--gpus", type=_positive_int, metavar="N", help="GPUs per server when the files do not say")
    parser.add_argument("--gpu-memory-gib", type=float, metavar="GIB",
                        help="total memory (GiB, as CUDA reports it) of the --gpu GPU: needed for one outside the "
                             "catalog, replaces the catalog's total for one in it")
    parser.add_argument("--vllm-version", metavar="X.Y.Z", help="vLLM version when the image tag does not say")
    parser.add_argument("--offline", action="store_true", default=False,
                        help="never ask the Hugging Face Hub for a model's config.json")
    parser.add_argument("--exclude", action="append", metavar="GLOB", help="skip paths matching GLOB (repeatable)")
    parser.add_argument("--fail-on", choices=("error", "warning", "note", "never"),
                        help="exit 1 when a finding added reaches this level (default: never)")
    add_helm_arguments(parser)


# ----------------------------------------------------------------------------------------------------------
# git


class GitError(Exception):
    pass


def _git(repo: str, *args: str, stdin: bytes | None = None) -> bytes:
    import subprocess

    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", GIT_LITERAL_PATHSPECS="1",
               GIT_NO_REPLACE_OBJECTS="1", LC_ALL="C")
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_EXTERNAL_DIFF"):
        env.pop(name, None)
    try:
        done = subprocess.run(["git", *GIT_SAFE, "-C", repo, *args], input=stdin, capture_output=True, env=env,
                              check=False)
    except FileNotFoundError:
        raise GitError("git is not installed (it is needed to read BASE's files)") from None
    if done.returncode != 0:
        raise GitError(done.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return done.stdout


def repository_root(path: str) -> str:
    from vramlint.cli import UsageError

    folder = path if os.path.isdir(path) else (os.path.dirname(path) or ".")
    try:
        top = _git(folder, "rev-parse", "--show-toplevel").decode("utf-8", "surrogateescape").strip()
    except GitError as exc:
        raise UsageError(f"{path}: not in a git repository, so there is no BASE to compare with ({exc})") from None
    return os.path.realpath(top)


def resolve_base(repo: str, base: str | None) -> tuple[str, str]:
    """(the revision as shown, its commit id)."""
    from vramlint.cli import UsageError

    if base is None:
        ref = os.environ.get("GITHUB_BASE_REF", "").strip()
        if not ref:
            raise UsageError("give BASE, the git revision to compare with (e.g. `vramlint diff main`); it defaults "
                             "to the pull request's base branch only when GITHUB_BASE_REF is set")
        for candidate in (f"origin/{ref}", ref):
            try:
                commit = _rev(repo, candidate)
                merge_base = _git(repo, "merge-base", commit, "HEAD").decode().strip()
            except GitError:
                continue
            return f"merge base of HEAD and {candidate}", merge_base
        raise UsageError(f"GITHUB_BASE_REF is {ref!r}, but neither origin/{ref} nor {ref} has a merge base with HEAD "
                         "in this clone: fetch the history (actions/checkout with fetch-depth: 0), or give BASE")
    try:
        return base, _rev(repo, base)
    except GitError as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise UsageError(f"BASE {base!r} is not a commit of this repository"
                         + (f" ({first})" if first else "")
                         + "; a shallow clone may lack it: fetch it (git fetch origin REV) or clone with full "
                         "history") from None


def _rev(repo: str, revision: str) -> str:
    if revision.startswith("-"):
        raise GitError("a revision cannot start with '-'")
    out = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}")
    return out.decode().strip()


def materialise(repo: str, commit: str, rel_paths: list[str], dest: str) -> int:
    """Write the regular files under ``rel_paths`` (repository-relative) at ``commit`` below ``dest``, at the
    same relative paths; returns how many. Symbolic links (mode 120000) and submodules are not written; a blob
    over the file cap becomes a sparse file of its size, so the scan says "too large" as it does for the
    working tree's."""
    import subprocess

    from vramlint.fsread import MAX_FILE_BYTES

    specs = [p for p in rel_paths if p not in ("", ".")]
    listing = _git(repo, "ls-tree", "-r", "-z", "--long", "--full-tree", commit, "--",
                   *(specs if len(specs) == len(rel_paths) else []))
    wanted: list[tuple[str, str]] = []
    real_dest = os.path.realpath(dest)
    entries = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_name = entry.partition(b"\t")
        mode, kind, obj, size = meta.split()
        name = raw_name.decode("utf-8", "surrogateescape")
        if kind != b"blob" or mode not in (b"100644", b"100755"):
            continue
        parts = name.split("/")
        if any(p in ("", ".", "..", ".git") for p in parts):
            continue  # git refuses such trees; one crafted by hand must not write outside dest
        entries.append((parts, obj, size))
    # a tree made by hand (git mktree) can hold a file and a folder of one name, which no checkout can write (git
    # fsck: duplicateEntries): neither is compared, and stderr says so
    folders = {"/".join(parts[:i]) for parts, _, _ in entries for i in range(1, len(parts))}
    clashing = sorted({"/".join(parts) for parts, _, _ in entries if "/".join(parts) in folders})
    if clashing:
        from vramlint.textsafe import eprint, escape_name

        eprint(f"vramlint: note: BASE's tree holds {len(clashing)} path(s) that are both a file and a folder "
               f"({escape_name(clashing[0])}{', ...' if len(clashing) > 1 else ''}), which git cannot check out: "
               "not compared")
    clash = set(clashing)
    for parts, obj, size in entries:
        if "/".join(parts) in folders or any("/".join(parts[:i]) in clash for i in range(1, len(parts))):
            continue
        target = os.path.join(real_dest, *parts)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if int(size) > MAX_FILE_BYTES:
            with open(target, "wb") as fh:
                fh.truncate(int(size))
            continue
        wanted.append((obj.decode(), target))
    if not wanted:
        return 0
    env = dict(os.environ, GIT_NO_REPLACE_OBJECTS="1")
    with subprocess.Popen(["git", *GIT_SAFE, "-C", repo, "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, env=env) as proc:
        import threading

        def feed() -> None:
            try:
                proc.stdin.write(b"".join(obj.encode() + b"\n" for obj, _ in wanted))
            finally:
                proc.stdin.close()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        for obj, target in wanted:
            header = proc.stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise GitError(f"git cat-file: unexpected answer for {obj}: {b' '.join(header)!r}")
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)
            with open(target, "wb") as fh:
                fh.write(data)
        writer.join()
    return len(wanted)


SETTINGS_FILES = (".vramlint.yaml", ".vramlint.yml", "pyproject.toml", ".gitignore")


def _settings_files(paths: list[str], rel_paths: list[str]) -> list[str]:
    """Repository paths of the configuration and .gitignore files that may apply to ``paths`` from the folders
    above them, up to the repository's root (pathspecs for `git ls-tree`: a file BASE lacks is just not listed)."""
    out: list[str] = []
    for path, rel in zip(paths, rel_paths, strict=True):
        folder = rel if os.path.isdir(path) else os.path.dirname(rel)
        folder = "" if folder == "." else folder
        while True:
            out.extend(f"{folder}/{name}" if folder else name for name in SETTINGS_FILES)
            if not folder:
                break
            folder = os.path.dirname(folder)
    return list(dict.fromkeys(out))


def _base_config(base_paths: list[str], args: argparse.Namespace, rules, shown_base: str):  # noqa: ANN001
    """BASE's own configuration (found from BASE's paths upward, and the nested files, as `check` finds them) with
    the command line's flags over it; None, said on standard error, when it has problems (the working tree's is
    used for both sides then)."""
    from vramlint.commands.check import configuration_rule_problems
    from vramlint.config import apply_flags, format_problem, load_config

    config, problems = load_config(None, base_paths, nested=True)
    if not problems:
        config = apply_flags(config, args)
        problems = configuration_rule_problems(config, rules)
    if problems:
        print(f"vramlint: note: the configuration at {shown_base} has problems ({format_problem(problems[0])}); "
              "its files are checked with the working tree's configuration", file=sys.stderr)
        return None
    return config


def renames(repo: str, commit: str, rel_paths: list[str]) -> dict[str, str]:
    """Files git sees as renamed or moved between ``commit`` and HEAD: new repository path -> old."""
    specs = [p for p in rel_paths if p not in ("", ".")]
    try:
        out = _git(repo, "diff-tree", "-r", "-z", "-M", "--name-status", "--no-ext-diff", "--no-textconv",
                   commit, "HEAD", "--", *(specs if len(specs) == len(rel_paths) else []))
    except GitError:
        return {}  # no HEAD yet (an unborn branch): nothing was moved
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    moved: dict[str, str] = {}
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                moved[fields[i + 2]] = fields[i + 1]
            i += 3
        else:
            i += 2
    return moved


# ----------------------------------------------------------------------------------------------------------
# one side: the check pipeline, kept to what the diff needs


def evaluate(paths: list[str], config, rules, notices: list | None = None) -> tuple[list, list]:  # noqa: ANN001
    """(assessments, active findings) for ``paths`` as `check` computes them. ``notices``: the configuration's
    problems to report among them (the working tree's side only: BASE's configuration is said on stderr)."""
    from vramlint.commands.check import (
        FileReader,
        Selection,
        _run_rules,
        assess_all,
        dedupe_findings,
        set_run_roots,
        unreadable_as_problems,
    )
    from vramlint.meta import assessment_failures, input_error, server_notes
    from vramlint.scan import STDIN_NAME, scan
    from vramlint.suppress import apply_suppressions

    set_run_roots(paths, config)
    inventory = scan(paths, exclude=config.exclude_patterns(), respect_gitignore=config.respect_gitignore,
                     walk_scripts=config.walk_scripts,
                     values_files=config.helm_values,
                     render_helm=config.render_helm, vllm_version=config.vllm_version_for,
                     root_values=config.values_from_flags)
    if notices:
        inventory.problems.extend(notices)
        noticed = {n.file for n in notices}  # a configuration file not read is said once, by its notice
        inventory.skipped = [s for s in inventory.skipped if s.file not in noticed]
    unreadable_as_problems(inventory)
    assessments = assess_all(inventory.servers, config)
    selection = Selection(config, rules)
    findings = _run_rules(assessments, [r for r in rules if r.check or r.check_all], selection)
    findings.extend(input_error(p) for p in inventory.problems)
    findings.extend(assessment_failures(assessments))
    findings.extend(server_notes(inventory.servers))
    kept = []
    for finding in dedupe_findings(findings):
        finding.level = selection.level(finding.rule_id, finding.location.file, finding.level)
        if finding.level != "off" and selection.enabled(finding.rule_id, finding.location.file):
            kept.append(finding)
    reader = FileReader(STDIN_NAME, None)
    findings = apply_suppressions(kept, inventory.servers, reader, rules, selection.enabled)
    findings = [f for f in findings if not f.suppressed and selection.enabled(f.rule_id, f.location.file)]
    return assessments, findings


def summary(assessment) -> dict:  # noqa: ANN001
    """The figures the diff compares (JSON contract: docs/diff.md)."""
    from vramlint.commands.explain import server_refusals

    b = assessment.budget
    server = assessment.server
    if any(f.level == "error" for f in server_refusals(assessment)):
        verdict = "will not start"
    elif b is not None:
        verdict = "starts"
    else:
        verdict = "unknown"
    gpu = b.gpu if b else (assessment.gpu.name if assessment.gpu else None)
    return {
        "model": assessment.model.name if assessment.model else server.model,
        "gpu": gpu,
        "gpus": b.gpus if b else assessment.gpu_count,
        "vllm_version": assessment.vllm_version,
        "max_model_len": b.max_model_len if b else None,
        "kv_cache_gib": round(b.kv_cache_gib, 2) if b else None,
        "kv_tokens": b.kv_tokens if b else None,
        "max_concurrency": round(b.max_concurrency, 2) if b else None,
        "weights_gib": round(b.weights_gib, 2) if b else None,
        "verdict": verdict,
        "unknown": assessment.unresolved[:1] if b is None else [],
    }


def _inputs(server) -> dict:  # noqa: ANN001
    gpu = server.gpu.to_json() if server.gpu else None
    if isinstance(gpu, dict):
        gpu = {k: v for k, v in gpu.items() if k not in ("location", "count_location")}
    return {"model": server.model, "image": server.image, "args": server.args, "env": server.env, "gpu": gpu,
            "replicas": server.replicas}


def _finding_json(finding) -> dict:  # noqa: ANN001
    loc = finding.location
    return {"rule": finding.rule_id, "name": finding.rule_name, "level": finding.level, "message": finding.message,
            "line": loc.line, "yaml_path": loc.yaml_path}


def _identity(finding) -> tuple[str, str]:  # noqa: ANN001
    return finding.rule_id, finding.location.yaml_path or f"message:{finding.message}"


def _multiset_diff(before: list, after: list) -> tuple[list, list]:
    from collections import Counter

    b = Counter(_identity(f) for f in before)
    a = Counter(_identity(f) for f in after)
    added, gone = [], []
    seen: Counter = Counter()
    for f in after:
        key = _identity(f)
        seen[key] += 1
        if seen[key] > b[key]:
            added.append(_finding_json(f))
    seen = Counter()
    for f in before:
        key = _identity(f)
        seen[key] += 1
        if seen[key] > a[key]:
            gone.append(_finding_json(f))
    return added, gone


# ----------------------------------------------------------------------------------------------------------


class _Side:
    """One revision's servers and findings, with files as the working tree shows them.

    Servers are keyed by `Server.key` (file and YAML path). Several documents of one file can hold a server at
    the same YAML path; those keys get the object's kind and name (`#...@Deployment/name`), so each is matched
    with its namesake, and each finding goes to the nearest server at or above its line.
    """

    def __init__(self, assessments, findings, show) -> None:  # noqa: ANN001
        from dataclasses import replace

        self.entries = []  # (Server.key as shown, file as shown, assessment)
        for a in assessments:
            file = show(a.server.file)
            self.entries.append((f"{file}#{a.server.location.yaml_path}", file, a))
        self.findings = []
        for f in findings:
            f.location = replace(f.location, file=show(f.location.file))
            key = None
            if f.server_key:
                file, _, path = f.server_key.partition("#")
                key = f"{show(file)}#{path}"
            self.findings.append((key, f))

    def finish(self, shared: set[str]) -> None:
        """Key the servers, naming those whose Server.key is in ``shared`` (not unique on some side)."""
        from collections import Counter

        self.servers: dict[str, object] = {}
        self.files: dict[str, str] = {}
        by_plain: dict[str, list[tuple[int, str]]] = {}
        used: Counter = Counter()
        for plain, file, a in self.entries:
            key = plain
            if plain in shared:
                key = f"{plain}@{a.server.kind or '?'}/{a.server.name or '?'}"
                used[key] += 1
                if used[key] > 1:
                    key += f"@{used[key]}"
            self.servers[key] = a
            self.files[key] = file
            by_plain.setdefault(plain, []).append((a.server.location.line, key))
        self.by_server: dict[str, list] = {}
        self.other: list = []
        for plain, f in self.findings:
            candidates = sorted(by_plain.get(plain, []))
            if not candidates:
                self.other.append(f)
                continue
            key = candidates[0][1]
            for line, name in candidates:
                if line <= f.location.line:
                    key = name
            self.by_server.setdefault(key, []).append(f)


def _shared_keys(*sides: _Side) -> set[str]:
    from collections import Counter

    shared: set[str] = set()
    for side in sides:
        counts = Counter(plain for plain, _, _ in side.entries)
        shared |= {k for k, n in counts.items() if n > 1}
    return shared


def compare(base: _Side, head: _Side, moved: dict[str, str], repo_path) -> tuple[list[dict], list, list]:  # noqa: ANN001
    """The changed servers (JSON contract) and the findings tied to no server, added and gone."""
    shared = _shared_keys(base, head)
    base.finish(shared)
    head.finish(shared)
    by_repo_file = {repo_path(file): file for file in set(base.files.values())}
    entries = []
    matched: set[str] = set()
    for key, after in head.servers.items():
        file = head.files[key]
        path = key[len(file) + 1:]  # the YAML path, with the object's name when documents share it
        status, before_key = "changed", key
        if key not in base.servers:
            old = moved.get(repo_path(file))
            old_file = by_repo_file.get(old) if old else None
            if old_file is not None and f"{old_file}#{path}" in base.servers:
                status, before_key = "renamed", f"{old_file}#{path}"
            else:
                status, before_key = "added", None
        before = base.servers.get(before_key) if before_key else None
        if before_key:
            matched.add(before_key)
        added, gone = _multiset_diff(base.by_server.get(before_key, []) if before_key else [],
                                     head.by_server.get(key, []))
        entry = {
            "key": key,
            "file": file,
            "yaml_path": after.server.location.yaml_path,
            "name": after.server.name,
            "status": status,
            "previous_file": base.files[before_key] if status == "renamed" else None,
            "before": summary(before) if before is not None else None,
            "after": summary(after),
            "inputs_changed": _inputs_changed(before.server, after.server) if before is not None else [],
            "findings_added": added,
            "findings_gone": gone,
        }
        if status == "changed" and entry["before"] == entry["after"] and not added and not gone \
                and not entry["inputs_changed"]:
            continue
        entries.append(entry)
    for key, before in base.servers.items():
        if key in matched:
            continue
        file = base.files[key]
        _, gone = _multiset_diff(base.by_server.get(key, []), [])
        entries.append({"key": key, "file": file, "yaml_path": before.server.location.yaml_path,
                        "name": before.server.name,
                        "status": "removed", "previous_file": None, "before": summary(before), "after": None,
                        "inputs_changed": [], "findings_added": [], "findings_gone": gone})
    entries.sort(key=lambda e: (e["file"], e["yaml_path"]))
    other_added, other_gone = [], []
    head_by_repo = {repo_path(f.location.file): f.location.file for f in head.other}
    new_of = {}  # a renamed file's findings are compared with those of its new name
    for new, old in moved.items():
        if old in by_repo_file or any(repo_path(f.location.file) == old for f in base.other):
            new_of[old] = head_by_repo.get(new, new)

    def now(file: str) -> str:
        return new_of.get(repo_path(file), file)

    files = sorted({f.location.file for f in head.other} | {now(f.location.file) for f in base.other})
    for file in files:
        added, gone = _multiset_diff([f for f in base.other if now(f.location.file) == file],
                                     [f for f in head.other if f.location.file == file])
        other_added += [{"file": file, **f} for f in added]
        other_gone += [{"file": file, **f} for f in gone]
    return entries, other_added, other_gone


def _inputs_changed(before, after) -> list[str]:  # noqa: ANN001
    a, b = _inputs(before), _inputs(after)
    out = []
    for name in ("model", "image", "gpu", "replicas"):
        if a[name] != b[name]:
            out.append(name)
    for group in ("args", "env"):
        for key in sorted(set(a[group]) | set(b[group])):
            if a[group].get(key) != b[group].get(key):
                out.append(f"{group}.{key}")
    return out


@own_roots
def run(args: argparse.Namespace) -> int:
    import shutil
    import tempfile
    from dataclasses import replace

    from vramlint.cli import UsageError
    from vramlint.commands.check import (
        check_paths,
        check_values_files,
        print_configuration_problems,
        print_hub_notes,
        usable_configuration,
    )

    paths = list(args.paths) or ["."]
    if "-" in paths:
        raise UsageError("diff reads files from git and the working tree; standard input ('-') has no BASE")
    check_paths(paths)
    repo = repository_root(paths[0])
    cwd = os.getcwd()
    rel_paths = []
    for path in paths:
        rel = os.path.relpath(os.path.realpath(path), repo).replace(os.sep, "/")
        if rel == ".." or rel.startswith("../"):
            raise UsageError(f"{path} is outside the git repository {repo} that holds {paths[0]}")
        rel_paths.append(rel)
    shown_base, commit = resolve_base(repo, args.base)

    # as `check` does: a configuration file found in the working tree that cannot be used is not applied and each
    # of its problems is a VRL102 error on its line among the working tree's findings; --config's are a usage error
    config, rules, problems = usable_configuration(args, paths)
    if problems:
        print_configuration_problems(problems)
        return 2
    check_values_files(config.helm_values)

    head_assessments, head_findings = evaluate(paths, config, rules, notices=config.notices)
    real_cwd = os.path.realpath(cwd)

    def shown(path: str) -> str:
        """Both sides' files as one name: relative to the current folder below it, else absolute."""
        rel = os.path.relpath(path, real_cwd)
        return path if rel == ".." or rel.startswith(".." + os.sep) else rel
    cwd_rel = os.path.relpath(real_cwd, repo)
    inside = not (cwd_rel == ".." or cwd_rel.startswith("../"))
    tmp = tempfile.mkdtemp(prefix="vramlint-diff-")
    try:
        mirror = os.path.join(os.path.realpath(tmp), "repo")
        os.makedirs(mirror)
        try:
            materialise(repo, commit, rel_paths, mirror)
            if args.config is None:
                # BASE's own configuration files above the paths (and .gitignore files, which decide the walk
                # as in the working tree); those below them came with the paths. The `.git` folder marks the
                # mirror as the repository's root, where the configuration search and .gitignore stop.
                materialise(repo, commit, _settings_files(paths, rel_paths), mirror)
                os.makedirs(os.path.join(mirror, ".git"), exist_ok=True)
        except GitError as exc:
            raise UsageError(f"cannot read the files of {shown_base} from git: {exc}") from None
        # BASE's paths are written as the user wrote the working tree's (the same relative paths, from the
        # mirror of the current folder), so files show, match overrides and group the same on both sides.
        base_paths = []
        for path, rel in zip(paths, rel_paths, strict=True):
            if os.path.isabs(path) or not inside:
                base_paths.append(os.path.normpath(os.path.join(mirror, rel)))
            else:
                base_paths.append(path)
        for base_path, rel in zip(base_paths, rel_paths, strict=True):
            if not os.path.exists(base_path if os.path.isabs(base_path) else os.path.join(mirror, cwd_rel, base_path)):
                os.makedirs(os.path.join(mirror, rel) if rel != "." else mirror, exist_ok=True)
        os.chdir(os.path.join(mirror, cwd_rel) if inside else cwd)
        try:
            base_config = None
            if args.config is None:
                base_config = _base_config(base_paths, args, rules, shown_base)
            if base_config is None:  # --config names one file for both sides, or BASE's could not be used
                base_config = config
                if os.path.isabs(config.root):
                    root_rel = os.path.relpath(os.path.realpath(config.root), repo)
                    if not root_rel.startswith(".."):
                        base_config = replace(config, root=os.path.normpath(os.path.join(mirror, root_rel)))
            base_assessments, base_findings = evaluate(base_paths, base_config, rules)
        finally:
            os.chdir(cwd)
        print_hub_notes()

        base_cwd = os.path.join(mirror, cwd_rel) if inside else real_cwd

        def show_base(file: str) -> str:
            path = os.path.normpath(os.path.join(base_cwd, file))
            if path == mirror or path.startswith(mirror + os.sep):
                path = os.path.join(repo, os.path.relpath(path, mirror))
            return shown(path)

        base_side = _Side(base_assessments, base_findings, show_base)
        head_side = _Side(head_assessments, head_findings,
                          lambda file: shown(os.path.normpath(os.path.join(real_cwd, file))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def repo_path(file: str) -> str:
        return os.path.relpath(os.path.realpath(os.path.join(real_cwd, file)), repo).replace(os.sep, "/")

    entries, other_added, other_gone = compare(base_side, head_side, renames(repo, commit, rel_paths), repo_path)
    document = {"base": shown_base, "base_commit": commit, "servers": entries,
                "findings_added": other_added, "findings_gone": other_gone}
    if args.format == "json":
        import json

        text = json_safe(json.dumps(document, indent=2)) + "\n"
    elif args.format == "markdown":
        # printed to the job log too (and the step summary is a file the runner does not read as commands, but
        # standard output is): a file name holding `##[` or a line starting `::` cannot start a workflow command
        text = neutralise_commands(render_markdown(document))
    else:
        text = safe_output(render_text(document))
    if args.output_file:
        try:
            folder = os.path.dirname(args.output_file)
            if folder:
                os.makedirs(folder, exist_ok=True)
            with open(args.output_file, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise UsageError(f"--output-file {args.output_file}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    from vramlint.commands.check import LEVEL_RANK

    if args.fail_on not in (None, "never"):
        added = [f for e in entries for f in e["findings_added"]] + other_added
        if any(LEVEL_RANK.get(f["level"], 0) >= LEVEL_RANK[args.fail_on] for f in added):
            return 1
    return 0


# ----------------------------------------------------------------------------------------------------------
# output

FIELDS = (  # (JSON key, label, unit)
    ("kv_cache_gib", "KV cache", " GiB"),
    ("kv_tokens", "KV cache tokens", ""),
    ("max_concurrency", "max concurrency at max_model_len", ""),
    ("max_model_len", "max_model_len", ""),
    ("weights_gib", "weights", " GiB"),
    ("gpu", "GPU", ""),
    ("verdict", "verdict", ""),
)


def _number(value) -> str:  # noqa: ANN001
    if value is None:
        return "?"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def change(before, after, unit: str = "") -> str:  # noqa: ANN001
    """`before -> after (+x%)`, or the value alone when it did not change."""
    if before == after:
        return _number(after) + unit if after is not None else "?"
    text = f"{_number(before)}{unit if before is not None else ''} -> {_number(after)}{unit if after is not None else ''}"
    if isinstance(before, (int, float)) and isinstance(after, (int, float)) and not isinstance(before, bool):
        if before:
            text += f" ({(after - before) / abs(before) * 100:+.1f}%)"
    return text


def _gpu(s: dict | None):  # noqa: ANN202
    if s is None or s["gpu"] is None:
        return None
    return f"{s['gpus']}x {s['gpu']}" if s["gpus"] and s["gpus"] > 1 else s["gpu"]


def _value(s: dict | None, key: str):  # noqa: ANN202
    if s is None:
        return None
    return _gpu(s) if key == "gpu" else s.get(key)


def _title(entry: dict) -> str:
    where = f"{entry['file']} {entry['yaml_path']}".strip()
    name = f" ({entry['name']})" if entry.get("name") else ""
    status = entry["status"]
    if status == "renamed":
        status = f"moved from {entry['previous_file']}"
    return f"{where}{name}: {status}"


def render_text(document: dict) -> str:
    lines = [f"vramlint diff against {document['base']} ({document['base_commit'][:12]})"]
    if not document["servers"] and not document["findings_added"] and not document["findings_gone"]:
        lines.append("no server's inputs, budget or findings changed")
    for entry in document["servers"]:
        lines.append("")
        lines.append(_title(entry))
        if entry["inputs_changed"]:
            lines.append(f"  changed: {', '.join(entry['inputs_changed'])}")
        unknown = (entry["after"] or entry["before"])["unknown"]
        if unknown:
            lines.append(f"  budget not computed: {unknown[0]}")
        for key, label, unit in FIELDS:
            lines.append(f"  {label + ':':<34} {change(_value(entry['before'], key), _value(entry['after'], key), unit)}")
        for title, items in (("finding added", entry["findings_added"]), ("finding gone", entry["findings_gone"])):
            for f in items:
                lines.append(f"  {title}: {f['rule']} {f['level']} line {f['line']}: {f['message']}")
    for title, items in (("finding added", document["findings_added"]), ("finding gone", document["findings_gone"])):
        for f in items:
            lines.append(f"{title}: {f['file']}:{f['line']}: {f['rule']} {f['level']}: {f['message']}")
    return "\n".join(lines) + "\n"


def render_markdown(document: dict) -> str:
    """A table for the job summary and the sticky PR comment (which finds itself by MARKER)."""
    from vramlint.report.markdown import cell, code

    out = [MARKER, f"### vramlint: memory budget changes against {code(document['base'])}", ""]
    if not document["servers"] and not document["findings_added"] and not document["findings_gone"]:
        out.append("No vLLM server's inputs, budget or findings changed.")
        return "\n".join(out) + "\n"
    if document["servers"]:
        out.append("| Server | Change | KV cache | Max concurrency at max_model_len | max_model_len | Weights | GPU "
                   "| Verdict | Findings |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for entry in document["servers"]:
            b, a = entry["before"], entry["after"]
            status = entry["status"]
            if status == "renamed":
                status = f"moved from {code(entry['previous_file'])}"
            cells = [f"{code(entry['file'])} {cell(entry['name'] or entry['yaml_path'])}", status]
            for key, unit in (("kv_cache_gib", " GiB"), ("max_concurrency", ""), ("max_model_len", ""),
                              ("weights_gib", " GiB"), ("gpu", ""), ("verdict", "")):
                text = change(_value(b, key), _value(a, key), unit)
                if key == "kv_cache_gib":
                    tokens = change(_value(b, "kv_tokens"), _value(a, "kv_tokens"))
                    text += f" ({tokens} tokens)"
                cells.append(cell(text.replace("->", "→")))
            cells.append(f"+{len(entry['findings_added'])} / −{len(entry['findings_gone'])}")
            out.append("| " + " | ".join(cells) + " |")
    details = []
    for entry in document["servers"]:
        for sign, items in (("added", entry["findings_added"]), ("gone", entry["findings_gone"])):
            for f in items:
                details.append(f"- {sign}: {code(entry['file'])}:{f['line']} **{f['rule']}** {f['level']}: "
                               f"{cell(f['message'])}")
    for sign, items in (("added", document["findings_added"]), ("gone", document["findings_gone"])):
        for f in items:
            details.append(f"- {sign}: {code(f['file'])}:{f['line']} **{f['rule']}** {f['level']}: {cell(f['message'])}")
    if details:
        out += ["", "<details><summary>Findings added and gone</summary>", "", *details, "", "</details>"]
    return "\n".join(out) + "\n"
