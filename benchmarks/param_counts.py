"""Our parameter counts vs published ones (models.tsv in the shared reference data).

    python3 benchmarks/param_counts.py [--data /work/shared/data] [--limit 0.02]

For every row of models.tsv (and the ``EXTRA`` models with a card figure), resolves the model through vramlint (catalog first; the raw config copies
under model-configs/ for models not in the catalog), counts parameters from the architecture (never the
catalog's stored count), and prints ours vs published with the relative error. Published: an exact count
when the row gives one ("8,030,261,248"), else the first "<n>B/M" figure. Exit 1 when any error exceeds
``--limit``.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vramlint.models import catalog_entry  # noqa: E402
from vramlint.weights import count_parameters  # noqa: E402

EXACT = re.compile(r"\b(\d{1,3}(?:,\d{3}){2,})\b")
ROUNDED = re.compile(r"\b(\d+(?:\.\d+)?)\s*([BM])\b")


# Rows whose exact HF API count counts something that is not a parameter (models-sources.md explains):
# compare with the model card's figure instead, and say so.
CARD_FIGURE = {
    "Qwen/Qwen3-0.6B": (0.6e9, "card 0.6B; HF API also counts a stored copy of the tied lm_head"),
    "openai/gpt-oss-20b": (21e9, "card 21B; HF API counts packed U8 MXFP4 bytes"),
    "openai/gpt-oss-120b": (117e9, "card 117B; HF API counts packed U8 MXFP4 bytes"),
}


# Catalog models with no row in models.tsv: the model card's total (MTP modules excluded), or the exact HF API
# count of a model with the same architecture.
EXTRA = {
    "Qwen/Qwen2.5-1.5B": (1_543_714_304, "HF API count of Qwen2.5-1.5B-Instruct, same architecture"),
    "Qwen/Qwen2.5-7B": (7_615_616_512, "HF API count of Qwen2.5-7B-Instruct, same architecture"),
    "Qwen/Qwen3.5-27B": (27e9, "card 27B"),
    "Qwen/Qwen3.5-35B-A3B": (35e9, "card 35B total"),
    "Qwen/Qwen3.5-122B-A10B": (122e9, "card 122B total"),
    "Qwen/Qwen3.5-397B-A17B": (397e9, "card 397B total"),
    "Qwen/Qwen3-VL-235B-A22B-Instruct": (235e9, "card 235B total"),
    "deepseek-ai/DeepSeek-V3.2": (671e9, "card 671B + 14B MTP"),
    "zai-org/GLM-5": (744e9, "card 744B total"),
    "MiniMaxAI/MiniMax-M2.5": (230e9, "MiniMax-M2 card 230B total, same architecture"),
    "google/gemma-4-26B-A4B": (25.75e9, "card 25.2B language model + ~550M vision encoder"),
    "nvidia/Gemma-4-26B-A4B-NVFP4": (25.75e9, "google/gemma-4-26B-A4B card 25.2B + ~550M vision, same architecture"),
    "nvidia/Gemma-4-31B-IT-NVFP4": (31.25e9, "gemma-4-31B card 30.7B language model + ~550M vision encoder"),
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4": (120e9, "120B total (the name's 120B-A12B), MTP layer excluded"),
    "nvidia/Qwen3.6-35B-A3B-NVFP4": (35e9, "Qwen3.6-35B-A3B card 35B total"),
    "nvidia/Qwen3.6-27B-NVFP4": (27e9, "the name's 27B"),
}


def published_count(cell: str) -> float | None:
    exact = EXACT.search(cell)
    if exact:
        return float(exact.group(1).replace(",", ""))
    rounded = ROUNDED.search(cell)
    if rounded:
        return float(rounded.group(1)) * (1e9 if rounded.group(2) == "B" else 1e6)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="/work/shared/data")
    parser.add_argument("--limit", type=float, default=0.02)
    args = parser.parse_args(argv)
    rows = list(csv.DictReader(open(Path(args.data) / "models.tsv", encoding="utf-8"), delimiter="\t"))
    listed = {row["model_id"] for row in rows}
    rows += [{"model_id": m, "total_params": ""} for m in EXTRA if m not in listed]
    worst = 0.0
    missing = []
    print(f"{'model':58} {'ours':>16} {'published':>16} {'error':>8}")
    errors = []
    for row in rows:
        model_id = row["model_id"]
        published = published_count(row["total_params"])
        note = ""
        if model_id in CARD_FIGURE or (published is None and model_id in EXTRA):
            published, note = CARD_FIGURE.get(model_id) or EXTRA[model_id]
            note = f"  ({note})"
        entry = catalog_entry(model_id)
        if entry is None or published is None:
            missing.append(model_id)
            continue
        facts = {k: v for k, v in entry.items() if k not in ("params", "weight_bytes")}
        ours = count_parameters(facts).total
        error = (ours - published) / published
        errors.append(abs(error))
        worst = max(worst, abs(error))
        flag = "  <-- over limit" if abs(error) > args.limit else ""
        print(f"{model_id:58} {ours:16,d} {int(published):16,d} {error:+8.2%}{flag}{note}")
    errors.sort()
    print(f"\n{len(errors)} models compared; median |error| {errors[len(errors) // 2]:.2%}, worst {worst:.2%}")
    if missing:
        print(f"not compared ({len(missing)}): {', '.join(missing)}")
    return 1 if worst > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
