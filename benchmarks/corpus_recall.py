"""How many of the vLLM servers described by the corpus index does `scan` find, with the right model?

    python3 benchmarks/corpus_recall.py [/work/shared/corpus]

INDEX.tsv describes each saved file in prose: where its vLLM arguments live and which model it serves. A row
counts as one expected server (or several, when its model column names several Hub ids) unless the index
says the file holds no vLLM server of its own (NEGATIVE rows, operator presets, NIM engines, ...: see
`NOT_A_SERVER`, each with the index's reason); a draft model named beside its main model runs in the main
model's server (`DRAFT_MODELS`). A server is found when the file yields a server; when the model column
states a Hub id (`org/name`), some server of the file must name that model (case-insensitive; a local
path ending in the id, as `/mnt/models/org/name`, counts). Also checked: no file crashes the scan, and the
prefilter drops no server (the same scan without it finds the same servers). Servers vramlint does not read on
purpose (a custom launcher builds the command from env vars) stay misses, listed apart as explained misses
(`EXPLAINED_MISSES`), and each such file must still say so (a note problem or a server note).
"""

from __future__ import annotations

import csv
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from vramlint.scan import scan  # noqa: E402

# Files the index describes as holding no vLLM server of their own, with the index's reason.
NOT_A_SERVER = {
    "kserve__kserve/docs__samples__storage__hf__hf_isvc.yaml": "NEGATIVE: --backend=huggingface",
    "NVIDIA__nim-deploy/kserve__nim-models__llama3-70b-instruct_4xh100_1.0.0.yaml": "NEGATIVE: NIM runtime",
    "NVIDIA__nim-deploy/cloud-service-providers__azure__blueprints__vss-blueprint-aks__overrides-single-gpu.yaml":
        "NIM/VSS engine knobs as app env, not a vLLM command line",
    "robertgshaw2-neuralmagic__vllm-k8s/vllm-kserve-pvc__serving-runtime.yml": "NEGATIVE: sleep infinity",
    "substratusai__kubeai/charts__kubeai__values-gke.yaml": "none: profile overlay",
    "substratusai__kubeai/charts__kubeai__values.yaml": "operator chart values (images per profile), no engine",
    "vllm-project__production-stack/helm__values.yaml": "its only modelSpec entry has enabled: false (not rendered)",
    "substratusai__kubeai/charts__models__values.yaml":
        "every catalog entry has enabled: false and all.enabled is false (the chart renders no Model)",
}

# Hub ids the index's model column names that are not servers of their own: a draft model for speculative
# decoding runs inside the main model's server.
DRAFT_MODELS = {
    "InftyAI__llmaz/docs__examples__speculative-decoding__vllm__playground.yaml":
        ("facebook/opt-125m", "llmaz Playground's draft model (role: draft), served by the same vLLM server"),
}

# Files that are not valid YAML as saved: the right output is a problem with line and column, not a server.
INVALID_YAML = {
    "GoogleCloudPlatform__kubernetes-engine-samples/ai-ml__infw-gw__examples__getting-started__vllm-llama3-8b-instruct.yaml":
        "document indented under apiVersion (YAML error at 17:9)",
}

# Servers the index describes that vramlint does not read, on purpose, with why. They stay misses in the figure
# (they are servers), listed apart; each file must still say something (a note problem or a server note).
EXPLAINED_MISSES = {
    "awslabs__ai-on-eks/blueprints__inference__vllm-llama3.1-405b-trn1__llama3-405b-vllm-lws-deployment.yaml":
        "custom launcher script (/usr/local/bin/run.sh) builds the vLLM command from env vars: not guessed",
    "civo-learn__civo-vllm-docker/examples__k8s__manifest__llama3.yaml":
        "custom image whose entrypoint builds the command from env MODEL: not guessed",
    "civo-learn__civo-vllm-docker/examples__k8s__helm__values.yaml":
        "custom image whose entrypoint builds the command from env MODEL: not guessed",
    "volcano-sh__kthena/cli__kthena__helm__templates__Qwen__Qwen3-8B.yaml":
        "model is a template expression whose default is hf://Qwen/Qwen3-8B: a values file may override it, so the "
        "server is found with the model unknown and a note naming the default",
    "laureano-arcanio__balanced-vllm-docker/docker-compose.yml":
        "custom launcher (python /app/scripts/vllm_launcher.py) reads VLLM_* env vars: not guessed",
}

_HUB_ID = re.compile(r"(?<![\w$/{.-])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)")


def expected_models(model_column: str) -> list[str]:
    """Hub ids the index's model column states (placeholders and paths are not model names)."""
    out = []
    for m in _HUB_ID.finditer(model_column.replace("hf://", " ")):
        text = m.group(1).rstrip(".,)")
        if "{" in text or "$" in text or text == "n/a" or text.startswith(("mnt/", "data/", "tmp/", "models/")):
            continue
        if model_column[max(0, m.start() - 8): m.start()].lower().endswith(("s3://", "gs://", "pvc://", "s3 path ")):
            continue  # an object-store path (`downloaded from S3 path a/b`), not a Hub id
        out.append(text)
    return out


def model_matches(found: str | None, wanted: str) -> bool:
    if not found:
        return False
    f = found.lower().rstrip("/")
    w = wanted.lower()
    return f == w or f.endswith("/" + w) or f.startswith("hf://" + w) or f.replace("--", "/").endswith(w)


def main(argv: list[str]) -> int:
    corpus = argv[1] if len(argv) > 1 else "/work/shared/corpus"
    with open(os.path.join(corpus, "INDEX.tsv"), newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    t0 = time.perf_counter()
    crashes = []
    by_file: dict[str, list] = {}
    problems_by_file: dict[str, list] = {}
    for row in rows:
        path = os.path.join(corpus, row["saved_file"])
        try:
            inv = scan([path])
        except Exception as exc:  # noqa: BLE001 - counting crashes is the point
            crashes.append((row["saved_file"], repr(exc)))
            continue
        by_file[row["saved_file"]] = inv.servers
        problems_by_file[row["saved_file"]] = inv.problems
    elapsed = time.perf_counter() - t0
    # The whole corpus in one run, with and without the prefilter: it must not drop a server.
    with_pf = scan([corpus])
    without_pf = scan([corpus], use_prefilter=False)
    keys_with = {s.key for s in with_pf.servers}
    keys_without = {s.key for s in without_pf.servers}
    dropped = sorted(keys_without - keys_with)

    expected_total = found_total = 0
    misses = []
    explained = []
    false_positives = []
    for row in rows:
        name = row["saved_file"]
        servers = by_file.get(name, [])
        if name in INVALID_YAML:
            said = any(p.line for p in problems_by_file.get(name, []) if "YAML" in p.message)
            print(f"  not counted (invalid YAML, {'reported' if said else 'NOT reported'} as a problem): {name}")
            continue
        if name in NOT_A_SERVER:
            if servers:
                false_positives.append((name, NOT_A_SERVER[name], [s.model for s in servers]))
            continue
        models = expected_models(row["model"])
        if name in DRAFT_MODELS:
            models = [m for m in models if m != DRAFT_MODELS[name][0]]
        wanted = models or [None]
        for model in wanted:
            expected_total += 1
            if model is None:
                if servers:
                    found_total += 1
                    continue
                why = "no server found"
            elif any(model_matches(s.model, model) for s in servers):
                found_total += 1
                continue
            else:
                why = f"model {model!r} not found (got {[s.model for s in servers] or 'no server'})"
            if name in EXPLAINED_MISSES:
                said = any(p.level == "note" for p in problems_by_file.get(name, [])) or any(s.notes for s in servers)
                explained.append((name, EXPLAINED_MISSES[name], said))
            else:
                misses.append((name, why, row["where_vllm_args_live"][:90]))
    print(f"corpus: {corpus} ({len(rows)} files, scanned one by one in {elapsed:.2f} s)")
    print(f"crashes: {len(crashes)}")
    for name, exc in crashes:
        print(f"  CRASH {name}: {exc}")
    print(f"servers described by the index: {expected_total}; found with the right model: {found_total} "
          f"({100.0 * found_total / max(1, expected_total):.1f}%)")
    for name, why, where in misses:
        print(f"  MISS {name}: {why}  [index: {where}]")
    print(f"explained misses (counted as misses above): {len(explained)}")
    for name, why, said in explained:
        print(f"  EXPLAINED {name}: {why}{'' if said else '  (BUT THE FILE SAYS NOTHING ABOUT IT)'}")
    print(f"files the index says hold no vLLM server, reported anyway: {len(false_positives)}")
    for name, reason, models in false_positives:
        print(f"  FALSE POSITIVE {name} ({reason}): {models}")
    print(f"prefilter: {len(keys_with)} servers with it, {len(keys_without)} without; dropped by it: {len(dropped)}")
    for key in dropped:
        print(f"  DROPPED {key}")
    ok = not crashes and not dropped and found_total >= 0.95 * expected_total
    print("RESULT:", "ok" if ok else "below target")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
