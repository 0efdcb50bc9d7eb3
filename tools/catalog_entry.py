"""Print a catalog entry for vramlint/data/models/*.json from a model's own config.json.

The facts come from ``modelconfig.facts_from_config``, the code path a live config.json takes, so an entry holds
only what the config says (nothing filled by hand, nothing taken from a sibling model). ``--source`` records where
that config.json was read: its Hub URL and the public copy (repository, path, commit) it was taken from.

    python tools/catalog_entry.py MODEL_ID CONFIG_JSON --source "https://huggingface.co/...; copy in ..." \
        [--quant-config hf_quant_config.json] [--index model.safetensors.index.json] [--note "..."]

It prints one line to paste under ``"models"`` and, on standard error, the parameter count from these sizes and,
with ``--index``, the checkpoint's own ``total_size`` next to the bytes vramlint computes, to be said in the note.
Then run ``python tools/gen_model_index.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vramlint.modelconfig import config_problem, facts_from_config  # noqa: E402
from vramlint.weights import count_parameters, weight_bytes  # noqa: E402


def entry_line(model_id: str, cfg: dict, source: str, note: str | None, quant_cfg: dict | None = None) -> str:
    problem = config_problem(cfg)
    if problem:
        raise SystemExit(f"{model_id}: config.json refused by vramlint's checks: {problem}")
    entry: dict = {"source": source}
    if note:
        entry["note"] = note
    # None-valued facts are what the config did not say: left out, as the catalog's other entries do
    entry.update({k: v for k, v in facts_from_config(cfg, quant_cfg).items() if v is not None})
    return f" {json.dumps(model_id)}: {json.dumps(entry, separators=(',', ':'))}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_id")
    ap.add_argument("config")
    ap.add_argument("--source", required=True)
    ap.add_argument("--note")
    ap.add_argument("--quant-config", help="hf_quant_config.json / quant_config.json of the checkpoint")
    ap.add_argument("--index", help="model.safetensors.index.json of the checkpoint (its metadata.total_size)")
    args = ap.parse_args()
    cfg = json.loads(Path(args.config).read_text(encoding="utf-8"))
    quant = json.loads(Path(args.quant_config).read_text(encoding="utf-8")) if args.quant_config else None
    print(entry_line(args.model_id, cfg, args.source, args.note, quant))
    facts = facts_from_config(cfg, quant)
    counted = count_parameters(facts)
    print(f"{args.model_id}: {counted.total:,} parameters counted, {weight_bytes(facts):,} weight bytes computed",
          file=sys.stderr)
    if args.index:
        total = json.loads(Path(args.index).read_text(encoding="utf-8")).get("metadata", {}).get("total_size")
        print(f"{args.model_id}: index total_size {total:,}" if total else f"{args.model_id}: index has no total_size",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
