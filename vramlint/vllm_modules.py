"""Which modules of vLLM's own package each release ships, where a command line names one.

`--middleware MODULE.NAME` is imported by the API server's `build_app` (`importlib.import_module` of what is
before the last dot, then `getattr`), once the engine has loaded: a module the release does not have stops the
server with ModuleNotFoundError. The table (`vramlint/data/vllm_modules.json`, from `tools/gen_vllm_modules.py`,
which reads each wheel's file list) is whole for the top level of `vllm` (`vllm.X`) and for everything under
`vllm.entrypoints`; deeper names elsewhere in `vllm` are not known either way.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    try:
        return json.loads((Path(__file__).parent / "data" / "vllm_modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"versions": [], "modules": {}}


def _has(module: str, index: int) -> bool:
    return any(lo <= index <= hi for lo, hi in _table()["modules"].get(module, ()))


def missing_module(module: str, table_version: str | None) -> str | None:
    """The first package or module of dotted ``module`` that vLLM ``table_version`` does not ship (what
    ModuleNotFoundError names), or None when it ships all of them or the table cannot tell."""
    parts = module.split(".")
    table = _table()
    if parts[0] != "vllm" or len(parts) < 2 or table_version not in table["versions"]:
        return None
    index = table["versions"].index(table_version)
    for depth in range(2, len(parts) + 1):
        if depth > 2 and parts[1] != "entrypoints":
            return None  # below the top level, only vllm.entrypoints is listed whole
        head = ".".join(parts[:depth])
        if not _has(head, index):
            return head
    return None


def last_release_with(module: str) -> str | None:
    """The newest release in the table that ships ``module`` (None when none does, or it still ships)."""
    table = _table()
    spans = table["modules"].get(module)
    if not spans:
        return None
    last = max(hi for _, hi in spans)
    return None if last >= len(table["versions"]) - 1 else table["versions"][last]
