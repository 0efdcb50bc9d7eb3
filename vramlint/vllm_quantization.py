"""The quantization methods each vLLM release accepts for ``--quantization``, and who refuses another value.

The table (`vramlint/data/vllm_quantization.json`, from `tools/gen_vllm_quantization.py`, which reads three files
of each release's wheel) holds each release's ``QUANTIZATION_METHODS`` in vLLM's order and the form of its parser:

- ``listed`` (0.4 - 0.8): ``add_argument('--quantization', choices=[*QUANTIZATION_METHODS, None])``: argparse refuses
  any other word, as written (upper case too), with "invalid choice";
- ``literal`` (0.9.0, 0.9.1, 0.10.x): ``get_kwargs(ModelConfig)`` turns the ``QuantizationMethods`` Literal into
  ``choices=sorted(...) + ["None"]``: the same refusal, the choices sorted;
- ``free`` (0.9.2, 0.11+): the annotation is a plain string at run time, argparse takes any word, and
  ``ModelConfig`` lowercases it (``validate_quantization_before``) and ``_verify_quantization`` raises
  ``ValueError: Unknown quantization method: X. Must be one of [...]``. A vLLM plugin can add a method there
  (``register_quantization_config``), so an unknown word that is no misspelling of a method is not certain.

Loaded only when a command line sets ``--quantization``: most runs never read it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from vramlint.versions import parse_version


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    try:
        return json.loads((Path(__file__).parent / "data" / "vllm_quantization.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"versions": [], "forms": []}


def _form(index: int) -> dict | None:
    return next((row for row in _table()["forms"] if row["v"][0] <= index <= row["v"][1]), None)


def _index(version: str | None) -> int | None:
    """The table release used for ``version``: the newest at or below it (as the argument table does)."""
    versions = _table()["versions"]
    key = parse_version(version) if version else None
    if not versions or key is None:
        return None
    best = None
    for i, v in enumerate(versions):
        if (parse_version(v) or ()) <= key:
            best = i
    return best if best is not None else 0


def releases_accepting(method: str) -> list[str]:
    """The table's releases whose ``QUANTIZATION_METHODS`` has ``method``, oldest first."""
    versions = _table()["versions"]
    return [versions[i] for row in _table()["forms"] if method in row["methods"]
            for i in range(row["v"][0], row["v"][1] + 1)]


def _history(method: str, version: str) -> str:
    accepting = releases_accepting(method)
    if not accepting:
        versions = _table()["versions"]
        return f"no vLLM release from {versions[0]} to {versions[-1]} has it"
    first, last = accepting[0], accepting[-1]
    key = parse_version(version) or ()
    if (parse_version(first) or ()) > key:
        return f"vLLM {first} added it"
    if (parse_version(last) or ()) < key:
        return f"vLLM {first} to {last} have it; it was removed after {last}"
    return f"some vLLM releases from {first} to {last} have it"


def refusal(value: str, version: str | None, flags: tuple[str, ...]) -> dict | None:
    """How vLLM ``version`` refuses ``--quantization value`` at start-up, or None when it accepts it (or the
    table cannot tell): ``{"message", "fix", "certain", "everywhere", "code"}``. ``certain`` is False where only
    ModelConfig checks the word and it may be a plugin's own method (no release has it, and it is no misspelling
    of one); ``everywhere``: no release has it."""
    index = _index(version)
    if index is None:
        return None
    form = _form(index)
    if form is None:
        return None
    methods: list[str] = form["methods"]
    word = value.strip()
    if form["parser"] == "free":
        word = word.lower()
    if word in methods:
        return None
    release = _table()["versions"][index]
    from difflib import get_close_matches

    lowered = word.lower()
    close = [lowered] if lowered in methods else get_close_matches(lowered, methods, n=1, cutoff=0.75)
    everywhere = not any(lowered in row["methods"] for row in _table()["forms"])
    history = _history(lowered, release)
    if lowered in methods:
        # only the case differs: argparse tests the word as written; ModelConfig lowercases it only where the
        # parser takes any word (0.9.2, 0.11 and later)
        history = f"vLLM {release}'s parser compares it as written, and its choices are lower case"
    if form["parser"] == "free":
        message = (f"Unknown quantization method: {word}. Must be one of {methods}. ({history}; vLLM's ModelConfig "
                   "refuses it, or stops one check earlier with 'Quantization method specified in the model config "
                   "(...) does not match' when the checkpoint is quantized)")
        code = "quantization-unknown"
    else:
        choices = [*methods, None] if form["parser"] == "listed" else [*sorted(methods), "None"]
        message = (f"argument {'/'.join(flags)}: invalid choice: {value!r} (choose from "
                   f"{', '.join(repr(c) for c in choices)}) ({history})")
        code = "argparse"
    if close and close[0] == lowered:
        fix = f"write --quantization {lowered} (the choices are lower case)"
    elif close:
        fix = f"use --quantization {close[0]} if that is the method meant"
    else:
        fix = ("remove --quantization (vLLM reads a quantized checkpoint's method from its quantization_config), "
               "or use a method this release has")
    accepting = releases_accepting(lowered)
    if accepting and (parse_version(accepting[0]) or ()) > (parse_version(release) or ()):
        fix += f", or an image of vLLM {accepting[0]} or later"
    return {"message": message, "fix": fix, "code": code, "everywhere": everywhere,
            "certain": form["parser"] != "free" or bool(close) or bool(accepting)}
