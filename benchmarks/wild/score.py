"""Score vramlint on deployment files from public repositories it was not developed on (benchmarks/wild/).

    python3 benchmarks/wild/score.py              # the code of this tree
    python3 benchmarks/wild/score.py --split held-out   # only the files whose key says `split: held-out`
    PYTHONPATH=/work/main python3 benchmarks/wild/score.py   # another tree's code

INDEX.tsv lists each saved file with its repository, path, commit and license; answers.yaml says, for each file,
which vLLM servers it describes (model, GPU, GPU count, vLLM version), the errors vLLM or Kubernetes would
really hit (line and the rule ids that may report them), what must not be an error, and what is uncertain. The key
was written by reading the files, never from vramlint's output; keep these files out of any tuning, or the
figures stop measuring anything.

The script runs `vramlint check --offline --output-format json` and `vramlint explain --offline --format json`
over all the files at once (as a user scanning a checkout would), then prints:
- servers found / expected (required servers of the key; a server is found when a reported server of the same
  file has the key's model, or the key's name when the model is not in the file; the files of one Helm chart, under
  the folder of its Chart.yaml, count as one file for this, and a server the chart renders with a values file kept
  away from it counts for that file), and extra servers;
- model right and GPU right (type and count per pod) among the found servers;
- error precision and recall: an error finding matches an expected error by file, line (+-2) and rule; findings
  on an `uncertain` line are left out of both; error findings near a `not_errors` line are listed apart;
- the share of found servers with a Hub model id that got a `budget` or a `gpu_requirement`, leaving apart the
  servers that rightly get neither (the key says they use no GPU, `gpus: 0` or `backend: cpu`, and vramlint says
  they run vLLM's CPU backend); the misses are printed grouped by the cause `explain` gives (`unchecked`);
- identical advice repeated: notes and warnings whose (rule, message) text is the same for several servers;
and, as its last line, all of these in one line.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
FILES_DIR = os.path.join(HERE, "files")
REPO_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
LINE_SLACK = 2


def load_index() -> list[dict[str, str]]:
    with open(os.path.join(HERE, "INDEX.tsv"), newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def load_answers() -> dict:
    with open(os.path.join(HERE, "answers.yaml")) as f:
        return yaml.safe_load(f)["files"]


def run_vramlint(args: list[str]) -> dict:
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", REPO_ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "vramlint", *args],
        cwd=FILES_DIR, env=env, capture_output=True, text=True, timeout=1800,
    )
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"vramlint {args[0]} exited with {proc.returncode}")
    return json.loads(proc.stdout)


def norm_path(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def norm_model(model: str | None) -> str | None:
    if model is None:
        return None
    return model.strip().strip("'\"").rstrip("/").lower()


GPU_NOISE = {"nvidia", "geforce", "rtx", "gtx", "tesla", "nvidia.com", "gpu"}


def gpu_family(name: str) -> tuple[str, str | None]:
    """('h100', '80gb') from 'H100-80GB', ('2080ti', None) from 'nvidia-gtx-2080ti', ('tpuv5', None) from a TPU."""
    tokens = [t for t in re.split(r"[-_ .]+", name.lower()) if t and t not in GPU_NOISE]
    memory = next((t for t in tokens if re.fullmatch(r"\d+gb?", t)), None)
    tokens = [t for t in tokens if t != memory]
    family = []
    for i, token in enumerate(tokens):
        family.append(token)
        if re.search(r"\d", token):
            if i + 1 < len(tokens) and tokens[i + 1] in ("ti", "super"):
                family.append(tokens[i + 1])
            break
    return "".join(family), memory


def gpu_matches(expected: str | None, found: str | None) -> bool:
    if expected is None:
        return found is None
    if not found:
        return False
    (e, e_mem), (f, f_mem) = gpu_family(expected), gpu_family(found)
    if e_mem and f_mem and e_mem.rstrip("b") != f_mem.rstrip("b"):
        return False
    if not e or not f:
        return False
    short, long = sorted((e, f), key=len)
    # 'tpuv5' names 'tpuv5e', 'gaudi' names 'gaudi2'; 'l4' does not name 'l40s'
    return long.startswith(short) and (not re.search(r"\d", short) or not re.search(r"\d", long[len(short):]))


# A key that names only the kind of accelerator (the file does not say which TPU): vramlint's vendor is the answer
VENDOR_FAMILIES = {"tpu": "google-tpu", "neuron": "aws-neuron", "gaudi": "intel-gaudi"}


def vendor_family(expected: str | None, vendor: str | None) -> str | None:
    """The key's bare family word when vramlint found that vendor and no type (else None: the type is compared)."""
    word = (expected or "").lower()
    return word if word in VENDOR_FAMILIES and vendor == VENDOR_FAMILIES[word] else None


def model_matches(expected: str | None, found: str | None, alternatives: list[str] | None = None) -> bool:
    if any(model_matches(alt, found) for alt in alternatives or []):
        return True
    e, f = norm_model(expected), norm_model(found)
    if e is None:
        return f is None or "$" in f
    return f is not None and (f == e or f.endswith("/" + e.lstrip("/")))


def name_matches(expected: str, server: dict) -> bool:
    e = expected.lower()
    names = [str(server.get(k) or "").lower() for k in ("name", "container", "yaml_path")]
    return any(e == n or e in n for n in names if n)


def match_servers(expected: list[dict], found: list[dict]) -> tuple[list[tuple[dict, dict]], list[dict], list[dict]]:
    """Pair expected and found servers of one file: by model (when the key has one), then by name. In a chart's
    group, an entry of a values file the chart is linted with (`?values=<file>` in the found server's path) is
    paired first with that release's server, and an entry of the chart's own files with the release of its
    values.yaml: a chart's releases share their name and template line."""
    pairs, left = [], list(found)
    unmatched = []
    variants = {_variant(s) for s in found}
    for exp in expected:
        hit = None
        own = os.path.basename(exp.get("_file") or "")
        for pool in ([s for s in left if _variant(s) == (own if own in variants else "")], left):
            if exp.get("model") is not None:
                hit = next((s for s in pool if model_matches(exp["model"], s.get("model"))
                            and name_matches(exp["name"], s)), None)
                hit = hit or next((s for s in pool if model_matches(exp["model"], s.get("model"))), None)
            hit = hit or next((s for s in pool if name_matches(exp["name"], s)), None)
            if hit is not None or "_file" not in exp:
                break
        if hit is None:
            unmatched.append(exp)
        else:
            pairs.append((exp, hit))
            left.remove(hit)
    for exp in [e for e in unmatched if not e.get("required", True)]:
        # an optional server (chart values, runtime template) has no name of its own in the file: any server
        # left in the file once every entry has taken the one its model or name picks is it
        hit = next(iter(left), None)
        if hit is not None:
            unmatched.remove(exp)
            pairs.append((exp, hit))
            left.remove(hit)
    if len(unmatched) == 1 and len(left) == 1 and unmatched[0].get("model") is None \
            and left[0].get("kind") == "script":
        # a launch script's one server has no name of its own (vramlint names it by the file): the key's one
        # server of the file, whose model the script leaves to its caller, is that one
        pairs.append((unmatched.pop(), left.pop()))
    return pairs, unmatched, left


def _variant(server: dict) -> str:
    return (server.get("yaml_path") or "").partition("?values=")[2]


def chart_root(saved: str) -> str | None:
    """The folder under files/ holding the Chart.yaml that ``saved`` belongs to, or None."""
    d = os.path.dirname(saved)
    while d:
        if os.path.isfile(os.path.join(FILES_DIR, d, "Chart.yaml")):
            return d
        d = os.path.dirname(d)
    return None


def chart_groups(files: list[str]) -> list[tuple[str, list[str]]]:
    """(name, files) per unit of server matching: each file alone, or all files of one Helm chart together."""
    groups: dict[str, list[str]] = {}
    for saved in files:
        groups.setdefault(chart_root(saved) or saved, []).append(saved)
    return list(groups.items())


def gpu_count_matches(expected: int | None, gpu: dict) -> bool:
    found = gpu.get("count") if isinstance(gpu, dict) else None
    if expected is None:
        return True
    if expected == 0:
        return found in (None, 0)
    return found == expected


# The cause said for a miss, when explain gives several: the first of these that applies (a model added to the
# catalog does not size a server on an accelerator the budget does not model)
MISS_CAUSE_ORDER = ("cpu-backend", "vllm-omni", "other-accelerator", "no-command", "config-unread", "no-model",
                    "model-at-run-time",
                    "model-path")
GPU_NOT_SAID = ("gpu-not-said", "amd-gpu-not-said", "gpu-not-in-catalog")


def error_findings(report: dict) -> list[dict]:
    seen, out = set(), []
    for finding in report.get("findings", []):
        if finding.get("level") != "error" or finding.get("suppressed"):
            continue
        key = (norm_path(finding["file"]), finding.get("line"), finding.get("rule"))
        if key not in seen:
            seen.add(key)
            out.append({"file": key[0], "line": key[1], "rule": key[2], "message": finding.get("message", "")})
    for problem in report.get("problems", []):
        if problem.get("level", "error") != "error":
            continue
        key = (norm_path(problem["file"]), problem.get("line"), "VRL102")
        if key not in seen:
            seen.add(key)
            out.append({"file": key[0], "line": key[1], "rule": "VRL102", "message": problem.get("message", "")})
    return out


def near(line_a: int | None, line_b: int | None) -> bool:
    return line_a is not None and line_b is not None and abs(line_a - line_b) <= LINE_SLACK


def pct(num: int, den: int) -> str:
    return f"{num}/{den} ({100.0 * num / den:.0f}%)" if den else f"{num}/0 (n/a)"


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Score vramlint on benchmarks/wild/.")
    parser.add_argument("--split", help="score only the files whose answer key has this `split:` (held-out)")
    parser.add_argument("--misses-json", metavar="PATH",
                        help="also write the servers with a Hub model id and neither budget nor gpu_requirement, "
                             "with their causes, as JSON (benchmarks/wild/unresolved_models.py reads it)")
    options = parser.parse_args()
    split = options.split
    index = load_index()
    answers = load_answers()
    if split:
        index = [row for row in index if (answers.get(row["saved_file"]) or {}).get("split") == split]
        if not index:
            raise SystemExit(f"no file in answers.yaml has split: {split}")
    files = [row["saved_file"] for row in index]
    missing = [f for f in files if f not in answers]
    if missing:
        raise SystemExit(f"answers.yaml has no entry for: {missing}")

    started = time.monotonic()
    check = run_vramlint(["check", *files, "--offline", "--output-format", "json", "--fail-on", "never"])
    explain = run_vramlint(["explain", *files, "--offline", "--format", "json"])
    elapsed = time.monotonic() - started

    found_by_file: dict[str, list[dict]] = defaultdict(list)
    by_basename = {os.path.basename(f): f for f in files}
    for server in check.get("servers", []):
        # a chart's server rendered with a values file kept away from the chart (`?values=<file>` in its path)
        # is that values file's deployment
        variant = (server.get("yaml_path") or "").partition("?values=")[2]
        away = by_basename.get(variant)
        if away is not None and chart_root(away) is None:
            found_by_file[away].append(server)
        else:
            found_by_file[norm_path(server["file"])].append(server)
    explain_by_key = {(norm_path(s["file"]), s.get("line"), s.get("name")): s for s in explain.get("servers", [])}
    # file:line -> the causes explain gives for a server left without a budget (GPU not said is no miss here: a
    # gpu_requirement answers it)
    causes_at: dict[str, list[str]] = defaultdict(list)
    for group in explain.get("unchecked") or []:
        for where in group.get("servers") or []:
            causes_at[norm_path(where.rpartition(":")[0]) + ":" + where.rpartition(":")[2]].append(group["cause"])

    required = found_required = optional_found = extra = 0
    model_right = gpu_right = version_right = compared = 0
    known = known_checked = resolved = resolved_checked = rightly_none = 0
    misses_by_cause: dict[str, list[str]] = defaultdict(list)
    misses: list[dict] = []
    figure_without_gpu: list[str] = []
    missed, extras, wrong_model, wrong_gpu, wrong_version, not_servers_found, unchecked_known = [], [], [], [], [], [], []

    for saved, group in chart_groups(files):
        # a Helm chart's files are one unit: its servers may be reported on the values file or on a template
        key = {"not_servers": [n for f in group for n in (answers[f] or {}).get("not_servers") or []]}
        expected = [dict(exp, _file=f) if len(group) > 1 else exp
                    for f in group for exp in (answers[f] or {}).get("servers") or []]
        found = [srv for f in group for srv in found_by_file.get(f, [])]
        pairs, unmatched, left = match_servers(expected, found)
        for exp in unmatched:
            if exp.get("required", True):
                required += 1
                missed.append(f"{saved}: {exp['name']} ({exp.get('model')})")
        for srv in left:
            if any(name_matches(n, srv) for n in key.get("not_servers") or []):
                not_servers_found.append(f"{saved}:{srv.get('line')}: {srv.get('kind')}/{srv.get('name')}")
            extra += 1
            extras.append(f"{saved}:{srv.get('line')}: {srv.get('kind')}/{srv.get('name')} model={srv.get('model')}")
        for exp, srv in pairs:
            if exp.get("required", True):
                required += 1
                found_required += 1
            else:
                optional_found += 1
            compared += 1
            where = f"{saved}:{srv.get('line')}: {srv.get('name')}"
            if model_matches(exp.get("model"), srv.get("model"), exp.get("model_alt")):
                model_right += 1
            else:
                wrong_model.append(f"{where}: model {srv.get('model')!r}, key {exp.get('model')!r}")
            gpu = srv.get("gpu") or {}
            if gpu_matches(exp.get("gpu"), gpu.get("type") or vendor_family(exp.get("gpu"), gpu.get("vendor"))) \
                    and gpu_count_matches(exp.get("gpus"), gpu):
                gpu_right += 1
            else:
                wrong_gpu.append(f"{where}: gpu {gpu.get('type')!r} x{gpu.get('count')}, key {exp.get('gpu')!r} x{exp.get('gpus')}")
            if str(exp.get("vllm")) == str(srv.get("vllm_version")) or (exp.get("vllm") is None and srv.get("vllm_version") is None):
                version_right += 1
            else:
                wrong_version.append(f"{where}: vLLM {srv.get('vllm_version')!r}, key {exp.get('vllm')!r}")
            if exp.get("hub_id"):
                ex = explain_by_key.get((norm_path(srv["file"]), srv.get("line"), srv.get("name")), srv)
                checked = bool(ex.get("budget") or ex.get("gpu_requirement"))
                at = f"{norm_path(ex['file'])}:{ex.get('line')}"
                no_gpu = exp.get("gpus") == 0 or exp.get("backend") == "cpu"
                if no_gpu and not checked and "cpu-backend" in causes_at.get(at, []):
                    # vLLM's CPU backend: no GPU memory figure is the right answer, not a miss
                    rightly_none += 1
                    continue
                if no_gpu and checked:
                    figure_without_gpu.append(f"{where} ({exp.get('model')})")
                known += 1
                # "model: the server names no model" is no resolved model either
                model_unresolved = any(str(u).startswith(("model ", "model:")) for u in ex.get("unresolved") or [])
                known_checked += checked
                if not model_unresolved:
                    resolved += 1
                    resolved_checked += checked
                if not checked:
                    unchecked_known.append(f"{where} ({exp.get('model')}): {'; '.join(ex.get('unresolved') or [])[:160]}")
                    cause = next((c for c in MISS_CAUSE_ORDER if c in causes_at.get(at, [])), None)
                    if cause is None:
                        cause = next((c for c in causes_at.get(at, []) if c not in GPU_NOT_SAID), "none given")
                    misses_by_cause[cause].append(f"{where} ({exp.get('model')})")
                    misses.append({"file": saved, "repo": saved.split("/", 1)[0], "line": srv.get("line"),
                                   "name": srv.get("name"), "model": exp.get("model"), "found_model": srv.get("model"),
                                   "cause": cause, "causes": causes_at.get(at, []),
                                   "unresolved": ex.get("unresolved") or []})

    # Errors.
    errors = error_findings(check)
    expected_errors = [(saved, e) for saved in files for e in (answers[saved] or {}).get("errors") or []]
    matched_expected = set()
    true_pos = uncertain_skipped = 0
    false_errors, near_not_errors = [], []
    for err in errors:
        key = answers.get(err["file"]) or {}
        hit = next((i for i, (saved, e) in enumerate(expected_errors)
                    if saved == err["file"] and near(e["line"], err["line"]) and err["rule"] in e["rules"]), None)
        if hit is not None:
            true_pos += 1
            matched_expected.add(hit)
            continue
        if any(near(u["line"], err["line"]) for u in key.get("uncertain") or []):
            uncertain_skipped += 1
            continue
        false_errors.append(f"{err['file']}:{err['line']}: {err['rule']}: {err['message'][:200]}")
        close = [n for n in key.get("not_errors") or [] if near(n["line"], err["line"])]
        if close:
            why = " ".join(min(close, key=lambda n: abs(n["line"] - err["line"]))["why"].split())
            near_not_errors.append(f"{err['file']}:{err['line']}: {err['rule']} (key: {why[:160]})")
    missed_errors = [f"{saved}:{e['line']}: {'/'.join(e['rules'])}: {' '.join(e['what'].split())[:200]}"
                     for i, (saved, e) in enumerate(expected_errors) if i not in matched_expected]
    scored_errors = len(errors) - uncertain_skipped

    # Identical advice repeated across servers (or within one).
    texts = Counter()
    within = 0
    for server in check.get("servers", []):
        # advice: notes and warnings (an error repeated on several servers is several defects)
        seen = Counter((f.get("rule"), f.get("message")) for f in server.get("findings", [])
                       if f.get("level") in ("note", "warning"))
        within += sum(n - 1 for n in seen.values() if n > 1)
        texts.update(seen.keys())
    repeated = {k: n for k, n in texts.items() if n > 1}
    repeat_extra = sum(n - 1 for n in repeated.values())

    def section(title: str, lines: list[str]) -> None:
        print(f"\n{title} ({len(lines)})")
        for line in lines:
            print(f"  {line}")

    repos = {row["repo"] for row in index}
    print(f"wild benchmark{f' ({split} split)' if split else ''}: {len(files)} files from {len(repos)} repositories; "
          f"vramlint ran {elapsed:.1f} s "
          f"(check + explain, --offline)")
    section("missed servers", missed)
    section("extra servers (not in the key)", extras)
    section("  of which the key says are not vLLM servers", not_servers_found)
    section("wrong model", wrong_model)
    section("wrong GPU (type or count per pod)", wrong_gpu)
    section("wrong vLLM version", wrong_version)
    section("false errors", false_errors)
    section("  of which on a line the key says must not be an error", near_not_errors)
    section("missed errors", missed_errors)
    section("servers with a Hub model id and neither budget nor gpu_requirement", unchecked_known)
    print(f"\n  by cause (explain's `unchecked`; {rightly_none} CPU-backend servers rightly have neither, not counted):")
    for cause, where in sorted(misses_by_cause.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"    {cause}: {len(where)}")
        for w in where:
            print(f"      {w}")
    section("budget or gpu_requirement for a server whose key says gpus 0 (a CUDA image with no GPU request, or a CPU build "
            "vramlint does not recognise; counted above as checked)", figure_without_gpu)
    top = sorted(repeated.items(), key=lambda kv: -kv[1])[:5]
    section("identical advice repeated across servers (top 5)", [f"x{n} {rule}: {msg[:150]}" for (rule, msg), n in top])

    if options.misses_json:
        with open(options.misses_json, "w") as f:
            json.dump({"split": split, "known": known, "checked": known_checked, "misses": misses}, f, indent=1)
    precision = f"{true_pos}/{scored_errors}" if scored_errors else "0/0"
    print()
    print(
        f"wild: servers {pct(found_required, required)} (+{optional_found} optional, {extra} extra); "
        f"model right {pct(model_right, compared)}; GPU right {pct(gpu_right, compared)}; "
        f"version right {pct(version_right, compared)}; "
        f"error precision {precision}"
        f"{f' ({100.0 * true_pos / scored_errors:.0f}%)' if scored_errors else ' (n/a)'}, "
        f"recall {pct(len(matched_expected), len(expected_errors))}"
        f"{f', {uncertain_skipped} on uncertain lines' if uncertain_skipped else ''}; "
        f"budget or gpu_requirement {pct(known_checked, known)} of found servers with a Hub model id "
        f"({pct(resolved_checked, resolved)} of those whose model vramlint resolved offline; "
        f"+{rightly_none} on vLLM's CPU backend, rightly neither); "
        f"repeated advice {repeat_extra} findings in {len(repeated)} texts (+{within} within a server)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
