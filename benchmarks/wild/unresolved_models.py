"""Which wild servers name a known model (the key gives its Hub id) and still get neither a budget nor a GPU
requirement offline, and why: issue 9's target, a budget or a GPU requirement for >= 80% of them.

    python3 benchmarks/wild/unresolved_models.py                 # the list, by cause and by model id
    python3 benchmarks/wild/unresolved_models.py --write-holdout  # once: set aside a third of the model ids

Runs `score.py --misses-json` (the same run and the same pairing of key and reported servers as the score) and
prints each miss's cause, finer than explain's `unchecked` where the run itself says more:

* `not-in-catalog`: explain's `model-offline-flag`, the model is outside the offline catalog (vramlint/data/models);
* `requirement-cap`: explain gives no cause but the GPU is not said and no GPU requirement was computed, because
  the run already holds `requirement.MAX_REQUIREMENTS` distinct ones (checked here: the file alone gets one);
* the other causes as explain names them (other-accelerator, vllm-omni, no-command, model-not-modelled, ...).

Then the distinct model ids per cause with their server and repository counts. `--write-holdout` draws, with a
fixed seed, a third of the distinct model ids of the misses into `unresolved_holdout.json` (a record made before
anything was chosen to add: those ids are kept out of the choosing); later runs say how many of the held-out and of
the other ids now resolve.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HOLDOUT = os.path.join(HERE, "unresolved_holdout.json")
SEED = 20261207


def run_score() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "misses.json")
        proc = subprocess.run([sys.executable, os.path.join(HERE, "score.py"), "--misses-json", out],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-4000:])
            raise SystemExit(f"score.py exited with {proc.returncode}")
        with open(out) as f:
            doc = json.load(f)
    doc["last_line"] = proc.stdout.strip().splitlines()[-1]
    return doc


def sized_alone(miss: dict) -> bool:
    """Whether the miss's file, checked alone, gives its server a budget or a GPU requirement."""
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", os.path.normpath(os.path.join(HERE, "..", "..")))
    proc = subprocess.run([sys.executable, "-m", "vramlint", "explain", miss["file"], "--offline", "--format", "json"],
                          cwd=os.path.join(HERE, "files"), env=env, capture_output=True, text=True, check=False)
    try:
        servers = json.loads(proc.stdout).get("servers", [])
    except json.JSONDecodeError:
        return False
    return any(s.get("line") == miss["line"] and (s.get("budget") or s.get("gpu_requirement")) for s in servers)


def cause_of(miss: dict) -> str:
    # score.py's order of causes puts an accelerator the budget does not model first; a chart's server may miss
    # its cause in explain's `unchecked` (keyed there by the chart's folder), and its own `unresolved` says it
    if miss["cause"] == "model-offline-flag" or (miss["cause"] == "none given" and any(
            "is not in vramlint's catalog" in str(u) for u in miss["unresolved"])):
        return "not-in-catalog"
    if miss["cause"] == "none given" and all(str(u).startswith("GPU type not known") for u in miss["unresolved"]) \
            and sized_alone(miss):
        return "requirement-cap"
    return miss["cause"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-holdout", action="store_true",
                        help=f"draw a third of the model ids into {os.path.basename(HOLDOUT)} (seed {SEED})")
    args = parser.parse_args(argv)
    doc = run_score()
    misses = doc["misses"]
    for miss in misses:
        miss["why"] = cause_of(miss)
    ids = sorted({m["model"] for m in misses})

    print(f"wild servers with a Hub model id: {doc['known']}; with a budget or a GPU requirement: {doc['checked']} "
          f"({100 * doc['checked'] / max(1, doc['known']):.0f}%); without: {len(misses)} servers, {len(ids)} model ids")
    by_cause: dict[str, list[dict]] = collections.defaultdict(list)
    for miss in misses:
        by_cause[miss["why"]].append(miss)
    print("\nby cause (servers, model ids, repositories):")
    for cause, group in sorted(by_cause.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {cause}: {len(group)} servers, {len({m['model'] for m in group})} model ids, "
              f"{len({m['repo'] for m in group})} repositories")
    print("\nby cause and model id (servers / repositories; file:line of the first):")
    for cause, group in sorted(by_cause.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {cause}")
        per_model: dict[str, list[dict]] = collections.defaultdict(list)
        for miss in group:
            per_model[miss["model"]].append(miss)
        for model, where in sorted(per_model.items(), key=lambda kv: (-len(kv[1]), kv[0].lower())):
            print(f"    {model}: {len(where)} / {len({m['repo'] for m in where})}  ({where[0]['file']}:{where[0]['line']})")

    if args.write_holdout:
        if os.path.exists(HOLDOUT):
            raise SystemExit(f"{HOLDOUT} exists: the held-out ids are drawn once")
        held = sorted(random.Random(SEED).sample(ids, len(ids) // 3))
        with open(HOLDOUT, "w") as f:
            json.dump({"seed": SEED, "drawn_from": ids, "held_out": held,
                       "about": "model ids of the wild servers left without a budget or a GPU requirement, and the "
                                "third of them (random.Random(seed).sample) kept out of choosing what to add"},
                      f, indent=1)
            f.write("\n")
        print(f"\nwrote {HOLDOUT}: {len(held)} of {len(ids)} model ids held out")
    if os.path.exists(HOLDOUT):
        with open(HOLDOUT) as f:
            record = json.load(f)
        held, chosen = set(record["held_out"]), set(record["drawn_from"]) - set(record["held_out"])
        left = {m["model"] for m in misses}
        print(f"\nresolved since the draw (a budget or a GPU requirement on every server naming it): "
              f"held out {len(held - left)}/{len(held)}, the others (in-sample) {len(chosen - left)}/{len(chosen)}")
        for label, pool in (("held out", held), ("in-sample", chosen)):
            done = sorted(pool - left)
            if done:
                print(f"  {label}: {', '.join(done)}")
    print(f"\n{doc['last_line']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
