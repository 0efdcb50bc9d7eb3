"""The model architectures each vLLM release's registry has, and what it does with one it has not.

The table (`vramlint/data/vllm_architectures.json`, from `tools/gen_vllm_architectures.py`, which reads the
registry of every release's wheel from 0.2.0) holds each architecture's releases and, per release, its refusal
and what can still run an architecture the registry lacks:

- up to 0.7.1 nothing else does: the release raises ``ValueError: Model architectures [...] are not supported
  for now`` (in ``get_model`` up to 0.6.x, in ``ModelConfig`` from the registry's ``inspect_model_cls`` later);
- from 0.5.5 a ``vllm.general_plugins`` entry point of a package the image installs can register one
  (``ModelRegistry.register_model``): certain only for vLLM's own images, which install no plugin;
- from 0.7.2 an architecture the registry lacks falls back to the Transformers implementation
  (``resolve_transformers_fallback``, later ``_try_resolve_transformers``), which runs when the transformers of the
  image has a class of that name that vLLM's backend can drive: not decided by the release, so a note.

Loaded only when a budget is computed for a model whose architecture is known.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from vramlint.versions import is_own_vllm_image, parse_version


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    try:
        return json.loads((Path(__file__).parent / "data" / "vllm_architectures.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"versions": [], "forms": [], "archs": {}}


def _has(arch: str, index: int) -> bool:
    return any(first <= index <= last for first, last in _table()["archs"].get(arch, ()))


def _history(arch: str, index: int) -> str:
    """When the architecture came to or left vLLM, seen from release ``index``."""
    versions = _table()["versions"]
    having = [i for i in range(len(versions)) if _has(arch, i)]
    if not having:
        return f"no vLLM release from {versions[0]} to {versions[-1]} has it"
    later = [i for i in having if i > index]
    if later:
        return f"added in {versions[later[0]]}"
    return f"supported up to {versions[having[-1]]}"


def refusal(arch: str | None, version: str | None, image: str | None = None) -> dict | None:
    """How vLLM ``version`` refuses a checkpoint of architecture ``arch``: ``{"code", "message", "short", "arg",
    "fix", "certain"}``, or None when the release has it or the table cannot tell (no architecture, a version
    outside the table). ``certain`` is False where something outside the release (a plugin, the image's
    transformers) may still run it."""
    table = _table()
    versions = table["versions"]
    key = parse_version(version) if version else None
    if not arch or key is None or not versions:
        return None
    keys = [parse_version(v) or () for v in versions]
    if key < keys[0] or key > keys[-1]:
        return None  # before the table, or a release (or nightly) newer than it: its registry is not read
    index = max(i for i, k in enumerate(keys) if k <= key)
    if keys[index] != key or _has(arch, index):
        return None  # a number between two releases is no release whose registry was read
    form = next(row for row in table["forms"] if row["v"][0] <= index <= row["v"][1])
    release = versions[index]
    history = _history(arch, index)
    message = (f"Model architectures ['{arch}'] are not supported for now. Supported architectures: [...] "
               f"(vLLM {release}'s registry has no {arch}; {history})")
    if form["fallback"]:
        certain, why = False, (f"vLLM {release} runs it only through its Transformers backend, if the image's "
                               f"transformers has a {arch} class that backend can drive")
    elif form["plugins"] and not is_own_vllm_image(image):
        certain, why = False, (f"unless a vLLM plugin installed in the image registers {arch} "
                               "(ModelRegistry.register_model)")
    else:
        certain, why = True, ""
    if history.startswith("added in"):
        fix = f"run a vLLM release that has {arch} ({history.removeprefix('added in ')} or later)"
    elif history.startswith("supported up to"):
        fix = f"run a vLLM release that has {arch} ({history.removeprefix('supported up to ')} or earlier)"
    else:
        # no release has it: only the Transformers backend (or a plugin) can run it
        fallback = next((versions[row["v"][0]] for row in table["forms"] if row["fallback"]), None)
        fix = (f"run vLLM {fallback} or later, whose Transformers backend may run {arch}, or install a vLLM "
               f"plugin that registers it" if fallback else f"install a vLLM plugin that registers {arch}")
    return {"code": "architecture-unsupported", "message": message, "arg": "model",
            "short": f"it does not support {arch} ({history})", "fix": fix, "certain": certain, "why": why}
