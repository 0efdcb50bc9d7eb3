"""Helm values and chart files of the corpus: are each server's model and GPU found, and do locations land in
values files?

Usage: python3 benchmarks/corpus_helm.py [/work/shared/corpus]

Every file whose INDEX.tsv format is helm-values or helm-template is scanned on its own (as pre-commit would
pass it). Where the corpus holds both a chart's templates and its values.yaml, the chart is also rebuilt in a
temporary directory (with a minimal Chart.yaml when the corpus lacks one) and linted through its templates,
without Helm and, when helm-python-sdk is installed, rendered by Helm.
"""

from __future__ import annotations

import csv
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from vramlint.helm import extract_charts  # noqa: E402
from vramlint.helm.render import sdk_available  # noqa: E402
from vramlint.scan import scan  # noqa: E402


def is_values_file(path: str) -> bool:
    return "values" in os.path.basename(path).lower() or "templates" not in path


def summarize(servers, label: str) -> dict:
    n = len(servers)
    model = sum(1 for s in servers if s.model)
    gpu = sum(1 for s in servers if s.gpu and (s.gpu.count is not None or s.gpu.type))
    locs = []
    for s in servers:
        locs += list(s.arg_locations.values())
        if s.model_location:
            locs.append(s.model_location)
        if s.gpu and s.gpu.location:
            locs.append(s.gpu.location)
    in_values = sum(1 for loc in locs if is_values_file(loc.file))
    print(f"  {label}: servers={n} model={model} gpu={gpu} locations={len(locs)} in_values_files={in_values}")
    return {"servers": n, "model": model, "gpu": gpu, "locs": len(locs), "in_values": in_values}


def main(corpus: str) -> int:
    rows = []
    with open(os.path.join(corpus, "INDEX.tsv"), encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["format"] in ("helm-values", "helm-template"):
                rows.append(row)
    totals = {"servers": 0, "model": 0, "gpu": 0, "locs": 0, "in_values": 0}
    print(f"{len(rows)} Helm files in {corpus}/INDEX.tsv\n== each file on its own")
    for row in rows:
        path = os.path.join(corpus, row["saved_file"])
        inv = scan([path])
        print(f"{row['saved_file']} ({row['format']})")
        res = summarize(inv.servers, "scan")
        for k in totals:
            totals[k] += res[k]
        for n in inv.notes:
            print(f"    note: {n[:160]}")
        for p in inv.problems:
            print(f"    problem: {p.file}:{p.line}: {p.message[:120]}")
    print(f"TOTAL single files: {totals}")

    print("\n== charts rebuilt from the corpus (templates + values.yaml of the same chart)")
    by_chart: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        repo_path = row["path"]
        if "/templates/" in repo_path:
            root = repo_path.split("/templates/", 1)[0]
        elif os.path.basename(repo_path) == "values.yaml":
            root = os.path.dirname(repo_path)
        else:
            continue
        by_chart.setdefault((row["repo"], root), []).append(row)
    ctotals = {"servers": 0, "model": 0, "gpu": 0, "locs": 0, "in_values": 0}
    for (repo, root), members in sorted(by_chart.items()):
        if not any("/templates/" in m["path"] for m in members) or not any(
            m["path"].endswith("values.yaml") for m in members
        ):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            chart_dir = os.path.join(tmp, os.path.basename(root) or "chart")
            for m in members:
                rel = os.path.relpath(m["path"], root)
                dst = os.path.join(chart_dir, rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(os.path.join(corpus, m["saved_file"]), dst)
            if not os.path.exists(os.path.join(chart_dir, "Chart.yaml")):
                with open(os.path.join(chart_dir, "Chart.yaml"), "w", encoding="utf-8") as fh:
                    fh.write(f"apiVersion: v2\nname: {os.path.basename(chart_dir)}\nversion: 0.0.0\n")
            print(f"{repo} {root}/ ({len(members)} files)")
            for render in (False, True) if sdk_available() else (False,):
                servers, problems, notes = extract_charts([chart_dir], render=render)
                res = summarize(servers, "rendered by Helm" if render else "evaluated without Helm")
                if not render:
                    for k in ctotals:
                        ctotals[k] += res[k]
                for s in servers:
                    mloc = s.model_location
                    print(f"    {s.name}: model={s.model} @ {mloc and os.path.relpath(mloc.file, tmp)}:"
                          f"{mloc and mloc.line} gpu={s.gpu and (s.gpu.count, s.gpu.type)}")
                for p in problems:
                    print(f"    problem: {os.path.relpath(p.file, tmp)}:{p.line}: {p.message[:140]}")
                for n in notes:
                    print(f"    note: {n.replace(tmp + '/', '')[:200]}")
    print(f"TOTAL rebuilt charts (without Helm): {ctotals}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/corpus"))
