"""Resolve a served model name to architecture facts (``ModelInfo``), or say why not and how to fix it.

Order (first hit wins):
  1. ``model-aliases`` from the project configuration (served name or path -> Hub id or config.json path)
  2. a local model directory holding ``config.json`` (relative paths from ``options.base_dir``)
  3. the local Hugging Face cache (config.json, plus safetensors headers when those files are cached)
  4. the catalog embedded in the package (``vramlint/data/models/*.json``)
  5. the Hub (``vramlint.hub``), when allowed (``options.allow_network`` and no ``HF_HUB_OFFLINE``)

The issue lists the Hub before the catalog; the catalog comes first on purpose so that popular models never
touch the network in pre-commit and CI runs: the answer is deterministic, fast, and needs no token for gated
repositories. A Hub answer is cached on disk (``$XDG_CACHE_HOME/vramlint/hub``) keyed by endpoint, repository
and revision, with the time it was fetched, once it has been checked (a bad answer is never cached): the
network is asked again when the entry is older than ``hub-cache-max-age-days`` (30 by default; a commit hash
never changes) or with ``--refresh-hub-cache``. Everything read - a local config.json, the HF cache, the Hub,
vramlint's own cache - goes through the same checks (``modelconfig.config_problem``, ``tensors_from_header``):
a bad field makes the model unresolved with a message naming it, never an exception.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import sys
import threading
from pathlib import Path
from typing import Any

from vramlint.model import ModelInfo, ResolveOptions

CATALOG_DIR = Path(__file__).parent / "data" / "models"
# Which catalog file holds each model id (lower-cased), so that resolving one model reads the index and one file,
# not the whole catalog; written by tools/gen_model_index.py, checked against the files by the catalog tests.
CATALOG_INDEX = Path(__file__).parent / "data" / "model_index.json"
# The end of an unresolved reason for a model vramlint's budget does not model (vramlint.unchecked groups on it).
NOT_MODELLED = "vramlint's budget does not model: its memory is not checked (the rules that need no budget still apply)"
_URL_SCHEMES = ("s3://", "gs://", "gcs://", "pvc://", "oci://", "http://", "https://", "azure://", "file://")
_catalog_cache: dict[str, dict] | None = None
_catalog_lock = threading.Lock()
_index_cache: dict[str, str] | None = None
_file_cache: dict[str, dict[str, dict]] = {}


# ----------------------------------------------------------------------------------------- catalog


def _catalog_file(name: str) -> dict[str, dict]:
    """The entries of one catalog file by lower-cased Hub id (each file read once)."""
    cached = _file_cache.get(name)
    if cached is None:
        data = json.loads((CATALOG_DIR / name).read_text(encoding="utf-8"))
        cached = {model_id.lower(): {"id": model_id, **entry} for model_id, entry in data.get("models", {}).items()}
        _file_cache[name] = cached
    return cached


def catalog() -> dict[str, dict]:
    """All catalog entries by lower-cased Hub id (loaded once, on first use)."""
    global _catalog_cache
    if _catalog_cache is None:
        with _catalog_lock:
            if _catalog_cache is None:
                entries: dict[str, dict] = {}
                for path in sorted(CATALOG_DIR.glob("*.json")):
                    entries.update(_catalog_file(path.name))
                _catalog_cache = entries
    return _catalog_cache


def build_catalog_index() -> dict[str, str]:
    """Lower-cased Hub id -> the catalog file that holds it (the last file wins, as in ``catalog()``)."""
    index: dict[str, str] = {}
    for path in sorted(CATALOG_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for model_id in data.get("models", {}):
            index[model_id.lower()] = path.name
    return dict(sorted(index.items()))


def _catalog_index() -> dict[str, str] | None:
    global _index_cache
    if _index_cache is None:
        try:
            data = json.loads(CATALOG_INDEX.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # no index (a source checkout mid-edit): the whole catalog is read instead
        _index_cache = data.get("files", {})
    return _index_cache


def _raw_entry(key: str) -> dict | None:
    if _catalog_cache is None:
        index = _catalog_index()
        if index is not None:
            name = index.get(key)
            return _catalog_file(name).get(key) if name else None
    return catalog().get(key)


def catalog_entry(model_id: str) -> dict | None:
    entry = _raw_entry(model_id.lower())
    if entry and "same_as" in entry:
        # A mirror or re-upload with identical weights (e.g. a repo renamed from neuralmagic/ to RedHatAI/).
        base = _raw_entry(entry["same_as"].lower())
        if base:
            merged = {k: v for k, v in base.items() if k not in ("id", "source")}
            merged.update({k: v for k, v in entry.items() if k != "same_as"})
            return merged
    return entry


UNMODELLED_INDEX = Path(__file__).parent / "data" / "unmodelled_models.json"


def known_unmodelled(model_id: str) -> str | None:
    """Why a model whose config.json vramlint has read (data/unmodelled_models.json, written from
    ``unmodelled_architecture`` of that config) is not sized, or None: such a model is said as not modelled offline
    too, instead of as outside the catalog."""
    try:
        data = json.loads(UNMODELLED_INDEX.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key, entry in data.get("models", {}).items():
        if key.lower() == model_id.lower():
            return f"{model_id!r}: its config.json ({entry['source']}) describes {entry['reason']}, which {NOT_MODELLED}"
    return None


def _from_catalog(model_id: str) -> ModelInfo | None:
    from vramlint.modelconfig import model_info_from_facts

    entry = catalog_entry(model_id)
    if not entry:
        return None
    facts = {k: v for k, v in entry.items() if k not in ("id", "source", "note")}
    return model_info_from_facts(facts, entry["id"], f"catalog ({entry['source']})")


# ------------------------------------------------------------------------------------- name forms


def split_model_name(name: str) -> tuple[str, str | None]:
    """``hf://org/model@rev`` -> (``org/model``, ``rev``). Local paths and other schemes are returned as given."""
    text = name.strip()
    for prefix in ("hf://", "huggingface://"):
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    revision = None
    if "@" in text and not text.startswith(("/", ".", "~")):
        text, revision = text.split("@", 1)
    if ":" in text and _looks_like_hub_id(text.split(":", 1)[0]) and "://" not in text:
        text, revision = text.split(":", 1)  # KubeAI-style org/model:revision
    return text.rstrip("/"), revision or None


def _looks_like_hub_id(text: str) -> bool:
    if text.startswith(("/", ".", "~")) or "://" in text:
        return False
    parts = text.split("/")
    return len(parts) == 2 and all(parts) and all(_hub_name_ok(p) for p in parts)


def _hub_name_ok(part: str) -> bool:
    return all(ch.isalnum() or ch in "-_." for ch in part) and not part.startswith(("-", "."))


def _alias_hint(name: str) -> str:
    return (f"add `model-aliases: {{'{name}': 'org/model'}}` to .vramlint.yaml (the Hub id whose config.json this "
            "is), or a path to its config.json")


# ------------------------------------------------------------------------------------ resolution


def resolve_model(name: str, options: ResolveOptions, network: bool = True) -> tuple[ModelInfo | None, str | None]:
    """Resolve ``name`` (as written after ``vllm serve`` / ``--model``) to a ``ModelInfo``.

    Returns ``(info, None)`` or ``(None, reason)``; the reason says what was tried and how to fix it. With
    ``network=False`` a name that needs a request to the Hub gives ``(None, NEEDS_HUB)`` instead.
    """
    if name is None or not str(name).strip():
        return None, "no model is set (vLLM would serve its release's default model); set --model explicitly"
    name = str(name).strip()
    aliases = options.model_aliases or {}
    target = aliases.get(name)
    if target is None:
        stripped, _ = split_model_name(name)
        target = aliases.get(stripped)
    if target is not None:
        info, reason = _resolve_unaliased(str(target), options, via_alias=name, network=network)
        if reason == NEEDS_HUB:
            return None, reason
        if info is not None:
            info.source = f"config alias ({name} -> {target}); {info.source}"
            return info, None
        return None, f"model-aliases maps {name!r} to {target!r}, which did not resolve: {reason}"
    return _resolve_unaliased(name, options, network=network)


def _resolve_unaliased(name: str, options: ResolveOptions, via_alias: str | None = None,
                       network: bool = True) -> tuple[ModelInfo | None, str | None]:
    base = Path(options.base_dir or ".")
    if any(name.startswith(s) for s in _URL_SCHEMES) and not name.startswith(("hf://", "huggingface://")):
        return None, (f"{name!r} is a storage URL, not a Hub id: vramlint cannot read the weights there; "
                      + _alias_hint(via_alias or name))
    repo_id, revision = split_model_name(name)
    local = _local_candidate(name, base)
    if local is not None:
        return _from_local(local, name, via_alias)
    if "models--" in name and not _looks_like_hub_id(repo_id):
        dotdot = _cache_path_dotdot(name)
        if dotdot is not None:
            return None, f"{CACHE_DOTDOT}{dotdot}; " + _alias_hint(via_alias or name)
    snapshot = _HF_CACHE_SNAPSHOT.search(name)
    if snapshot is not None and not _looks_like_hub_id(repo_id):
        # huggingface_hub's cache (file_download.repo_folder_name: "models--" + repo_id with "/" as "--") holds
        # the Hub repository's files at that commit: its config.json is the Hub id's (at main, as vramlint reads it)
        org, sep, model = snapshot.group(1).partition("--")
        hub_id = f"{org}/{model}" if sep else org
        info, why = _resolve_unaliased(hub_id, options, via_alias=via_alias, network=network)
        if info is not None:
            info.source = (f"Hugging Face cache snapshot of {hub_id} (revision {snapshot.group(2)[:12]}, read as the "
                           f"Hub's main); {info.source}")
            return info, None
        return None, why
    if not _looks_like_hub_id(repo_id):
        if repo_id.startswith(("/", ".", "~")) or "/" in repo_id.strip("/") or os.sep in repo_id:
            return None, (f"local model path {name!r} does not exist here (it lives on the serving machine); "
                          + _alias_hint(via_alias or name))
        hit = _from_catalog(repo_id)  # a bare name that happens to be a catalog id is still tried
        if hit:
            return hit, None
        return None, (f"{name!r} is neither a Hub id (org/model) nor a local directory with config.json; "
                      + _alias_hint(via_alias or name))
    cached = _from_hf_cache(repo_id, revision)
    if cached is not None and cached[0] is not None:
        return cached
    # Catalog before the Hub: popular models resolve with no network and no token (see module docstring).
    if revision is None or revision == "main":
        hit = _from_catalog(repo_id)
        if hit:
            return hit, None
        refused = known_unmodelled(repo_id)
        if refused:
            return None, refused
    return _from_hub(repo_id, revision, options, network=network)


# The start of the reason a Hugging Face cache path with `..` is not a snapshot of a Hub model: said on the line
# that names the model (vramlint.assess), not only in the run's summary (hostile24 leftover)
CACHE_DOTDOT = "Hugging Face cache path with `..`: "


def _cache_path_dotdot(name: str) -> str | None:
    """Why a path into huggingface_hub's cache (`.../models--ORG--NAME/snapshots/COMMIT`) with `..` in it names
    no snapshot of a Hub model, or None: a `..` segment leaves the snapshot (to a folder only the serving machine
    has), and `..` in the cache folder's name is no Hub repository id (huggingface_hub's validate_repo_id refuses
    `..` in one)."""
    import posixpath

    parts = name.split("/")
    folder = next((p for p in parts if p.startswith("models--")), "")
    if ".." in folder.split("--"):
        return (f"its cache folder {shortened_name(folder)} names no Hub repository (`..` is no part of a repository "
                "id), so which model it holds is not known")
    if ".." in parts:
        lands = posixpath.normpath(name)
        return (f"it leads out of its snapshot with `..`, to {shortened_name(lands)}, a folder only the serving "
                "machine has: no snapshot of a Hub model, so which model it is is not known")
    return None


def shortened_name(text: str, width: int = 120) -> str:
    return text if len(text) <= width else f"{text[:width - 20]}...{text[-16:]}"


_HF_CACHE_SNAPSHOT = re.compile(r"(?:^|/)models--([A-Za-z0-9][\w.-]*)/snapshots/([0-9a-f]{7,64})/?$")


def _local_candidate(name: str, base: Path) -> Path | None:
    raw = os.path.expanduser(name[len("file://"):] if name.startswith("file://") else name)
    path = Path(raw)
    if not path.is_absolute():
        path = base / path
    try:
        if path.is_file() and path.name.endswith(".json"):
            return path
        if path.is_dir():
            return path
        if os.path.lexists(path):
            from vramlint.fsread import outside_reason

            if outside_reason(str(path)) is not None:
                # a file of this machine outside the scanned tree (an alias to /proc/self/environ): said as
                # outside and not read, not as a path that exists only where the server runs (hostile21)
                return path
    except (OSError, ValueError):  # a name too long for a path, or with a NUL byte: not a local model
        return None
    return None


# The start of a reason a model folder of the scanned tree was not usable (its config.json unreadable, not JSON,
# or refused): a file of the repository, said on the line that names the model (vramlint.assess), not only in the
# run's summary as a model vramlint could not read
IN_THE_TREE = "in the scanned tree: "


def _from_local(path: Path, name: str, via_alias: str | None) -> tuple[ModelInfo | None, str | None]:
    from vramlint.fsread import outside_reason

    outside = outside_reason(str(path))
    if outside is not None:
        # a folder of this machine outside the scanned paths (/proc/self, a link out of the tree): not looked into
        return None, f"{path} is {outside}: not read; " + _alias_hint(via_alias or name)
    config_path = path if path.is_file() else path / "config.json"
    if not config_path.is_file():
        return None, (f"{name!r} is a directory without config.json; point at the model directory or "
                      + _alias_hint(via_alias or name))
    # a model folder of the scanned repository: read only inside the scanned tree (vramlint.fsread)
    cfg, problem = _load_json_file(config_path, CONFIG_FILE_CAP, inside=True)
    if cfg is None:
        return None, f"{IN_THE_TREE}{config_path} is {problem}: not read; " + _alias_hint(via_alias or name)
    quant_cfg = None
    if (config_path.parent / "hf_quant_config.json").is_file():
        quant_cfg, _ = _load_json_file(config_path.parent / "hf_quant_config.json", CONFIG_FILE_CAP, inside=True)
    info, problem = _info_from_answer(cfg, quant_cfg, _local_safetensors_headers(config_path.parent), name,
                                      f"local: {config_path}", str(config_path))
    if info is None:
        return None, IN_THE_TREE + problem
    return info, None


def read_safetensors_header(path: Path, inside: bool = False) -> dict[str, Any] | None:
    """The JSON header of a .safetensors file (8-byte little-endian length, then JSON), without the data."""
    import stat

    from vramlint.fsread import is_inside

    if inside and not is_inside(str(path)):  # nor a link out of the tree
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # never a FIFO
            return None
        with open(path, "rb") as fh:
            raw = fh.read(8)
            if len(raw) != 8:
                return None
            (length,) = struct.unpack("<Q", raw)
            if length > SAFETENSORS_HEADER_FILE_CAP:
                return None
            header, problem = _parse_json(fh.read(length))
    except (OSError, ValueError):
        return None
    return header if problem is None and isinstance(header, dict) else None


def _local_safetensors_headers(directory: Path) -> dict[str, tuple[str, list[int]]] | None:
    files = sorted(directory.glob("*.safetensors"))
    if not files or len(files) > MAX_SHARDS:
        return None
    # partial knowledge would understate the weights: one unreadable file and the weights are computed instead
    return _local_safetensors_headers_of(directory, [f.name for f in files], inside=True)


def _apply_safetensors(facts: dict, tensors: dict[str, tuple[str, list[int]]] | None) -> None:
    from vramlint.weights import bytes_from_safetensors

    if not tensors:
        return
    loaded = bytes_from_safetensors(tensors, facts)
    facts["weight_bytes"] = loaded
    facts["weight_bytes_source"] = "safetensors metadata"


# ------------------------------------------------------------------------------------ HF cache


def hf_cache_dir() -> str:
    """The Hugging Face hub cache as huggingface_hub computes it, read from the environment now."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return os.environ["HUGGINGFACE_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    return os.path.join(home, "hub")


def _hf_cache_snapshot(repo_dir: str, revision: str | None) -> Path | None:
    """The snapshot folder of ``revision`` in huggingface_hub's cache layout (``refs/<rev>`` holds the commit)."""
    from vramlint.hubnames import is_commit_hash

    commit = revision if is_commit_hash(revision) else None
    if commit is None:
        raw = _read_capped(Path(repo_dir) / "refs" / (revision or "main"), 256)
        commit = raw.decode("ascii", "replace").strip() if isinstance(raw, bytes) else None
        if not is_commit_hash(commit):
            return None
    snapshot = Path(repo_dir) / "snapshots" / commit
    return snapshot if snapshot.is_dir() else None


def _from_hf_cache(repo_id: str, revision: str | None) -> tuple[ModelInfo | None, str | None] | None:
    """What huggingface_hub (transformers, vLLM) cached on this machine, read-only; None when nothing is."""
    from vramlint.hubnames import repo_id_problem, revision_problem

    if repo_id_problem(repo_id) or (revision and revision_problem(revision)):
        return None
    repo_dir = os.path.join(hf_cache_dir(), "models--" + repo_id.replace("/", "--"))
    if not os.path.isdir(repo_dir):
        return None
    snapshot = _hf_cache_snapshot(repo_dir, revision)
    if snapshot is None or not (snapshot / "config.json").is_file():
        return None
    config_path = snapshot / "config.json"
    cfg, problem = _load_json_file(config_path, CONFIG_FILE_CAP)
    if cfg is None:
        return None, f"{repo_id!r}: the cached {config_path} cannot be read: {problem}"
    quant_cfg = None
    if (snapshot / "hf_quant_config.json").is_file():
        quant_cfg, _ = _load_json_file(snapshot / "hf_quant_config.json", CONFIG_FILE_CAP)
    tensors = None
    index, _ = _load_json_file(snapshot / "model.safetensors.index.json", INDEX_FILE_CAP) \
        if (snapshot / "model.safetensors.index.json").is_file() else (None, None)
    if index and isinstance(index.get("weight_map"), dict):
        shards = sorted({s for s in index["weight_map"].values() if isinstance(s, str)})
        if shards and all(_plain_file_name(s) and (snapshot / s).is_file() for s in shards):
            tensors = _local_safetensors_headers_of(snapshot, shards)
    elif (snapshot / "model.safetensors").is_file():
        tensors = _local_safetensors_headers_of(snapshot, ["model.safetensors"])
    return _info_from_answer(cfg, quant_cfg, tensors, repo_id, f"hf-cache: {config_path}",
                             f"the cached {config_path}")


def _plain_file_name(name: str) -> bool:
    from vramlint.hubnames import file_name_problem

    return file_name_problem(name) is None


def _local_safetensors_headers_of(directory: Path, names: list[str], inside: bool = False
                                  ) -> dict[str, tuple[str, list[int]]] | None:
    tensors: dict[str, tuple[str, list[int]]] = {}
    for name in names:
        header = read_safetensors_header(directory / name, inside=inside)
        if header is None:
            return None
        part, problem = tensors_from_header(header)
        if part is None or len(tensors) + len(part) > MAX_TENSORS:
            return None
        tensors.update(part)
    return tensors


# ------------------------------------------------------------------------------------------ checks

CONFIG_FILE_CAP = 4 * 2**20
INDEX_FILE_CAP = 32 * 2**20
HUB_CACHE_FILE_CAP = 64 * 2**20
SAFETENSORS_HEADER_FILE_CAP = 8 * 2**20  # as vramlint.hub.SAFETENSORS_HEADER_CAP: memory, not the file, is the limit
# The largest checkpoints hold ~250,000 tensors (NVFP4 MoE: weight and three scales per expert projection);
# every tensor kept costs ~200 bytes, so a hostile header set stops well below the memory bound.
MAX_TENSORS = 400_000
MAX_SHARDS = 4096
_MAX_DIM = 2**40
_MAX_ELEMENTS = 2**48


def _read_capped(path: Path, cap: int, inside: bool = False) -> bytes | str:
    """The bytes of a regular file of at most ``cap`` bytes, or why it was not read (vramlint.fsread)."""
    from vramlint.fsread import Refusal, read_bytes

    raw = read_bytes(str(path), limit=cap, check_inside=inside)
    return raw.reason if isinstance(raw, Refusal) else raw


def _parse_json(raw: bytes) -> tuple[Any, str | None]:
    try:
        return json.loads(raw.decode("utf-8-sig")), None
    except RecursionError:
        return None, "the JSON is nested too deeply"
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except ValueError as exc:  # includes integers over Python's int-string limit
        text = str(exc)
        if "integer string conversion" in text or "Exceeds the limit" in text:
            return None, "the JSON holds an integer of thousands of digits"
        return None, f"not valid JSON ({text.split(':')[0][:80]})"


def _load_json_file(path: Path, cap: int, inside: bool = False) -> tuple[dict | None, str | None]:
    """A JSON object from a file, or why not. ``inside``: a file of the scanned repository (only inside the
    scanned tree); otherwise a cache of this machine (huggingface_hub's, vramlint's own)."""
    raw = _read_capped(path, cap, inside)
    if isinstance(raw, str):
        return None, raw
    data, problem = _parse_json(raw)
    if problem:
        return None, problem
    if not isinstance(data, dict):
        return None, "not a JSON object"
    return data, None


def tensors_from_header(header: Any) -> tuple[dict[str, tuple[str, list[int]]] | None, str | None]:
    """(name -> (dtype, shape)) of a safetensors header, or (None, why) when it is not a plausible header."""
    from vramlint.weights import SAFETENSORS_DTYPE_BYTES

    if not isinstance(header, dict):
        return None, "the safetensors header is not a JSON object"
    if len(header) > MAX_TENSORS:
        return None, f"the safetensors header lists more than {MAX_TENSORS:,} tensors"
    out: dict[str, tuple[str, list[int]]] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(meta, dict) or len(name) > 1024:
            return None, "a safetensors tensor entry is not an object with a short name"
        dtype, shape = meta.get("dtype"), meta.get("shape")
        if not isinstance(dtype, str) or len(dtype) > 16 or not isinstance(shape, list) or len(shape) > 16:
            return None, f"tensor {name[:80]!r}: dtype or shape is not what safetensors writes"
        if dtype not in SAFETENSORS_DTYPE_BYTES:
            # safetensors reads the dtype by its exact name (serde, its `Dtype` enum) and refuses the file otherwise,
            # so vLLM cannot load it; its size is not known either (it was counted as 2 bytes an element)
            return None, f"tensor {name[:80]!r}: dtype {dtype[:16]!r} is not one safetensors reads"
        elements = 1
        for dim in shape:
            if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim <= _MAX_DIM:
                return None, f"tensor {name[:80]!r}: a dimension is not a size"
            elements *= dim
        if elements > _MAX_ELEMENTS:
            return None, f"tensor {name[:80]!r}: over {_MAX_ELEMENTS:,} elements"
        out[name] = (sys.intern(dtype), shape)
    return out, None


def _info_from_answer(cfg: Any, quant_cfg: Any, tensors: dict | None, name: str, source: str,
                      what: str) -> tuple[ModelInfo | None, str | None]:
    """A ``ModelInfo`` from a config.json (and safetensors tensors), or why that config cannot be used."""
    from vramlint.modelconfig import (
        config_problem,
        facts_from_config,
        model_info_from_facts,
        unmodelled_architecture,
    )

    problem = config_problem(cfg, quant_cfg)
    if problem:
        return None, f"{name!r}: {what} is not usable: {problem}; " + _alias_hint(name)
    unmodelled = unmodelled_architecture(cfg)
    if unmodelled:
        # nothing to map or fix in the deployment: said once per run as its own cause (vramlint.unchecked)
        return None, f"{name!r}: {what} describes {unmodelled}, which {NOT_MODELLED}"
    try:
        facts = facts_from_config(cfg, quant_cfg)
        _apply_safetensors(facts, tensors)
        return model_info_from_facts(facts, name, source), None
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as exc:
        return None, (f"{name!r}: {what} is not usable: it could not be read as a model config "
                      f"({type(exc).__name__}); " + _alias_hint(name))


# ------------------------------------------------------------------------------------------ Hub


def _offline() -> bool:
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().lower() in ("1", "true", "yes", "on")


def _offline_variable() -> str:
    return "HF_HUB_OFFLINE" if os.environ.get("HF_HUB_OFFLINE") else "TRANSFORMERS_OFFLINE"


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def _hub_token() -> str | None:
    """HF_TOKEN, else the token `huggingface-cli login` stored (HF_TOKEN_PATH, else $HF_HOME/token), as
    huggingface_hub finds it; never printed, never cached."""
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    if token:
        return token.strip() or None
    if (os.environ.get("HF_HUB_DISABLE_IMPLICIT_TOKEN") or "").strip().lower() in ("1", "true", "yes", "on"):
        return None
    raw = _read_capped(Path(_token_path()), 4096)
    if not isinstance(raw, bytes):
        return None
    token = raw.decode("utf-8", "replace").strip()
    # a token is one printable word; anything else in that file is not sent as a header
    return token if token and token.isprintable() and " " not in token else None


def _token_path() -> str:
    if os.environ.get("HF_TOKEN_PATH"):
        return os.path.expanduser(os.environ["HF_TOKEN_PATH"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    return os.path.join(os.path.expanduser(home), "token")


def _token_name() -> str:
    if os.environ.get("HF_TOKEN"):
        return "the token in HF_TOKEN"
    if os.environ.get("HUGGING_FACE_HUB_TOKEN"):
        return "the token in HUGGING_FACE_HUB_TOKEN"
    return "the token stored by `huggingface-cli login`"


def user_cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "vramlint"


def _hub_cache_file(endpoint: str, repo_id: str, revision: str | None) -> Path:
    import hashlib  # only when the Hub is asked: loading OpenSSL costs every run a few ms

    key = hashlib.sha256(f"{endpoint}\n{repo_id}\n{revision or 'main'}".encode()).hexdigest()[:32]
    return user_cache_dir() / "hub" / f"{key}.json"


HUB_CACHE_FORMAT = 2
DEFAULT_HUB_CACHE_MAX_AGE_DAYS = 30.0


def _read_hub_cache(cache_file: Path, endpoint: str, repo_id: str, revision: str | None
                    ) -> tuple[ModelInfo | None, float | None, str | None]:
    """(info, age in seconds, problem) of a cached Hub answer; (None, None, None) when there is none."""
    import time

    if not cache_file.is_file():
        return None, None, None
    data, problem = _load_json_file(cache_file, HUB_CACHE_FILE_CAP)
    if data is None or data.get("format") != HUB_CACHE_FORMAT \
            or (data.get("endpoint"), data.get("repo"), data.get("revision")) != (endpoint, repo_id, revision or "main"):
        return None, None, problem or "written by another version of vramlint"
    fetched = data.get("fetched_at")
    if isinstance(fetched, bool) or not isinstance(fetched, (int, float)) or not math.isfinite(fetched):
        return None, None, "it has no valid date"
    tensors = None
    if data.get("tensors") is not None:
        raw = data["tensors"]
        if not isinstance(raw, dict):
            return None, None, "its tensors are not a JSON object"
        tensors, problem = tensors_from_header({k: {"dtype": v[0], "shape": v[1]} if isinstance(v, list) and len(v) == 2
                                                else None for k, v in raw.items()})
        if tensors is None:
            return None, None, problem
    age = max(0.0, time.time() - fetched)
    info, problem = _info_from_answer(data.get("config"), data.get("hf_quant_config"), tensors, repo_id,
                                      f"hub ({endpoint}, cached {_age_text(age)} ago)", "the cached Hub answer")
    if info is None:
        return None, None, problem
    return info, age, None


def _age_text(seconds: float) -> str:
    if seconds < 120:
        return f"{int(seconds)} s"
    if seconds < 7200:
        return f"{int(seconds // 60)} min"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"


def _write_hub_cache(cache_file: Path, payload: dict) -> None:
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_name(f"{cache_file.stem}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(tmp, cache_file)
    except (OSError, ValueError):
        pass  # a read-only home is no reason to fail the run


def _fix_without_hub(repo_id: str, offline_reason: str | None) -> str:
    return _alias_hint(repo_id) + (f", or {offline_reason}" if offline_reason else "")


_GATED = " (and set HF_TOKEN for a gated model)"


# What the user can change so that the Hub is asked, by why it was not.
def _offline_cause(options: ResolveOptions) -> tuple[str, str]:
    """(why the Hub was not asked, what to change) when network access is off."""
    if _offline():
        var = _offline_variable()
        return f"{var} is set, so the Hub was not asked", f"unset {var} to let vramlint ask the Hub{_GATED}"
    why = options.offline_reason or "--offline was given"
    if why.startswith("--offline"):
        return f"{why}, so the Hub was not asked", "run without --offline to let vramlint ask the Hub" + _GATED
    return f"{why}, so the Hub was not asked", "remove it to let vramlint ask the Hub" + _GATED


def _from_hub(repo_id: str, revision: str | None, options: ResolveOptions,
              network: bool = True) -> tuple[ModelInfo | None, str | None]:
    from vramlint import hub

    problem = hub.repo_id_problem(repo_id)
    if problem:
        return None, f"{repo_id!r} is not a Hub model id ({problem}); " + _alias_hint(repo_id)
    if revision is not None:
        problem = hub.revision_problem(revision)
        if problem:
            return None, f"revision {revision[:80]!r} of {repo_id!r} is {problem}; " + _alias_hint(repo_id)
    endpoint = hub_endpoint()
    problem = hub.endpoint_problem(endpoint)
    if problem:
        return None, f"{repo_id!r} is not in vramlint's catalog and {problem}, so the Hub was not asked; " \
            + _alias_hint(repo_id) + ", or set HF_ENDPOINT to the Hub's URL"
    cache_file = _hub_cache_file(endpoint, repo_id, revision)
    cached, age, cache_problem = _read_hub_cache(cache_file, endpoint, repo_id, revision)
    max_age = options.hub_cache_max_age_days
    max_age = DEFAULT_HUB_CACHE_MAX_AGE_DAYS if max_age is None else max_age
    fresh = cached is not None and not options.refresh_hub_cache and (
        hub.is_commit_hash(revision) or age <= max_age * 86400)
    if fresh:
        return cached, None
    offline = _offline() or not options.allow_network
    if offline:
        why, change = _offline_cause(options)
        if cached is not None:
            cached.source += f"; not refreshed: {why.split(',')[0]}"
            return cached, None
        stale = f" (the cached answer is not usable: {cache_problem})" if cache_problem else ""
        return None, f"{repo_id!r} is not in vramlint's catalog and {why}{stale}; " + _alias_hint(repo_id) \
            + f", or {change}"
    if not network:
        return None, NEEDS_HUB
    # Without network every model would otherwise wait for its own attempt: one attempt per run, and the
    # same words for every model it left unresolved (the order the threads ran in must not show).
    reason = hub.unreachable_reason(endpoint)
    if reason is None:
        try:
            answer = _hub_fetch(endpoint, repo_id, revision, options.hub_timeout_s)
        except hub.HubError as exc:
            if exc.kind == "unreachable":
                reason = exc.detail
            else:
                if cached is not None:
                    cached.source += f"; not refreshed: {_hub_error_reason(repo_id, endpoint, exc).split(';')[0]}"
                    return cached, None
                return None, _hub_error_reason(repo_id, endpoint, exc)
    if reason is not None:
        _note_unreachable(endpoint, repo_id)
        if cached is not None:
            cached.source += f"; not refreshed: the Hub could not be reached ({reason})"
            return cached, None
        return None, (f"{repo_id!r} is not in vramlint's catalog and the Hub at {endpoint} could not be reached "
                      f"({reason}); " + _alias_hint(repo_id) + ", or run where the Hub can be reached")
    cfg, quant_cfg, tensors, weights_note, cacheable = answer
    info, problem = _info_from_answer(cfg, quant_cfg, tensors, repo_id, f"hub ({endpoint})",
                                      f"the Hub's config.json ({endpoint})")
    if info is None:
        return None, problem  # never cached: the next run asks again
    if weights_note:
        info.source += f"; {weights_note}"
    if not cacheable:
        return info, None
    import time

    _write_hub_cache(cache_file, {
        "format": HUB_CACHE_FORMAT, "endpoint": endpoint, "repo": repo_id, "revision": revision or "main",
        "fetched_at": time.time(), "config": cfg, "hf_quant_config": quant_cfg,
        "tensors": {k: [d, s] for k, (d, s) in tensors.items()} if tensors else None})
    return info, None


NEEDS_HUB = "\x00needs the Hub"  # resolve_models: resolved later, concurrently with the others

# Per run (see begin_run): endpoint -> models that could not be resolved because it was unreachable.
_UNREACHABLE_MODELS: dict[str, set[str]] = {}
_RUN_LOCK = threading.Lock()


def _note_unreachable(endpoint: str, repo_id: str) -> None:
    with _RUN_LOCK:
        _UNREACHABLE_MODELS.setdefault(endpoint, set()).add(repo_id)


def begin_run() -> None:
    """Forget what an earlier run in this process learnt about the Hub (reachability, notes)."""
    import sys

    if "vramlint.hub" in sys.modules:
        sys.modules["vramlint.hub"].reset()
    with _RUN_LOCK:
        _UNREACHABLE_MODELS.clear()


def hub_notes() -> list[str]:
    """Notes for the whole run, said once: the Hub endpoints that could not be reached."""
    with _RUN_LOCK:
        items = sorted(_UNREACHABLE_MODELS.items())
    if not items:
        return []
    from vramlint import hub

    notes = []
    for endpoint, repos in items:
        reason = hub.unreachable_reason(endpoint) or "no answer"
        n = len(repos)
        notes.append(
            f"the Hub at {endpoint} could not be reached ({reason}); {n} model{'s' if n != 1 else ''} outside "
            f"the catalog {'were' if n != 1 else 'was'} not resolved ({', '.join(sorted(repos)[:5])}"
            f"{', ...' if n > 5 else ''}). Set HF_HUB_OFFLINE=1 or pass --offline to skip the attempt, set "
            "HF_ENDPOINT to a Hub mirror that can be reached, or add `model-aliases` to .vramlint.yaml")
    return notes


def resolve_models(names: list[str], options: ResolveOptions, workers: int = 4
                   ) -> dict[str, tuple[ModelInfo | None, str | None]]:
    """``resolve_model`` for each name; those that need the Hub are asked for concurrently."""
    out: dict[str, tuple[ModelInfo | None, str | None]] = {}
    pending: list[str] = []
    for name in dict.fromkeys(names):
        info, reason = resolve_model(name, options, network=False)
        if reason == NEEDS_HUB:
            pending.append(name)
        else:
            out[name] = (info, reason)
    if len(pending) == 1:
        out[pending[0]] = resolve_model(pending[0], options)
    elif pending:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(workers, len(pending)), thread_name_prefix="vramlint-hub") as pool:
            for name, result in zip(pending, pool.map(lambda n: resolve_model(n, options), pending), strict=True):
                out[name] = result
    return {name: out[name] for name in dict.fromkeys(names)}


TENSORS_BUDGET_S = 30.0  # all safetensors headers of one model (a 163-shard checkpoint takes ~10 s)


def _hub_fetch(endpoint: str, repo_id: str, revision: str | None, timeout: float
               ) -> tuple[dict, dict | None, dict | None, str | None, bool]:
    """(config.json, hf_quant_config.json, safetensors tensors, why the tensors are missing, whether the answer
    may be cached) from the Hub."""
    from vramlint import hub

    client = hub.HubClient(endpoint, _hub_token(), deadline_s=timeout)
    cfg, problem = _parse_json(client.get_file(repo_id, revision, "config.json", hub.CONFIG_CAP))
    if problem or not isinstance(cfg, dict):
        raise hub.HubError("invalid", f"config.json: {problem}" if problem else "config.json is not a JSON object")
    quant_cfg = None
    if not cfg.get("quantization_config"):
        try:
            quant_cfg, _ = _parse_json(client.get_file(repo_id, revision, "hf_quant_config.json", hub.QUANT_CONFIG_CAP))
        except hub.HubError as exc:
            if exc.kind not in ("not_found", "gated"):
                raise
    import time

    try:
        tensors = _hub_tensors(client, repo_id, revision, time.monotonic() + TENSORS_BUDGET_S)
        note = None if tensors else "no safetensors files: weights computed from the architecture"
        cacheable = True
    except hub.HubError as exc:
        if exc.kind == "unreachable":
            raise
        tensors, note = None, f"safetensors headers not read ({exc.detail}): weights computed from the architecture"
        # a header that is not one is an answer; a slow or broken connection is not, and is asked again next run
        cacheable = exc.kind in ("invalid", "too_large", "not_found")
    return cfg, quant_cfg, tensors, note, cacheable


def _hub_tensors(client, repo_id: str, revision: str | None, until: float) -> dict[str, tuple[str, list[int]]] | None:
    from vramlint import hub

    try:
        return _hub_header(client, repo_id, revision, "model.safetensors", until)
    except hub.HubError as exc:
        if exc.kind != "not_found":
            raise
    try:
        raw = client.get_file(repo_id, revision, "model.safetensors.index.json", hub.INDEX_CAP)
    except hub.HubError as exc:
        if exc.kind == "not_found":
            return None
        raise
    index, problem = _parse_json(raw)
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if problem or not isinstance(weight_map, dict):
        raise hub.HubError("invalid", "model.safetensors.index.json has no weight_map")
    shards = sorted({v for v in weight_map.values() if isinstance(v, str)})
    if len(shards) > MAX_SHARDS:
        raise hub.HubError("too_large", f"model.safetensors.index.json names {len(shards):,} shards, more than "
                                        f"{MAX_SHARDS:,}")
    if not shards or any(hub.file_name_problem(s) for s in shards):
        raise hub.HubError("invalid", "model.safetensors.index.json names shards that are not plain file names")
    from concurrent.futures import ThreadPoolExecutor

    tensors: dict[str, tuple[str, list[int]]] = {}
    with ThreadPoolExecutor(max_workers=min(4, len(shards)), thread_name_prefix="vramlint-shard") as pool:
        for part in pool.map(lambda s: _hub_header(client, repo_id, revision, s, until), shards):
            tensors.update(part)
            if len(tensors) > MAX_TENSORS:
                raise hub.HubError("too_large", f"more than {MAX_TENSORS:,} tensors")
    return tensors


_PARSE_LOCK = threading.Lock()


def _hub_header(client, repo_id: str, revision: str | None, filename: str, until: float
                ) -> dict[str, tuple[str, list[int]]]:
    """The tensors of one safetensors file: its 8-byte header length, then the header, by range requests."""
    import time

    from vramlint import hub

    if time.monotonic() > until:
        raise hub.HubError("timeout", f"the headers took over {TENSORS_BUDGET_S:g} s")
    first = client.get_file(repo_id, revision, filename, hub.SAFETENSORS_FIRST_READ + 1,
                            byte_range=(0, hub.SAFETENSORS_FIRST_READ))
    if len(first) < 8:
        raise hub.HubError("invalid", f"{filename} is shorter than a safetensors header")
    (length,) = struct.unpack("<Q", first[:8])
    if length < 2 or length > hub.SAFETENSORS_HEADER_CAP:
        raise hub.HubError("too_large" if length > 2 else "invalid",
                           f"{filename} declares a {length:,}-byte header (cap {hub.SAFETENSORS_HEADER_CAP:,})")
    if length <= len(first) - 8:
        raw = first[8:8 + length]
    else:
        raw = client.get_file(repo_id, revision, filename, length, byte_range=(8, length + 7))
        if len(raw) != length:
            raise hub.HubError("invalid", f"{filename}: the header is shorter than it declares")
    with _PARSE_LOCK:  # shards download in parallel, but one parsed header at a time is held in memory
        header, problem = _parse_json(raw)
        del raw
        if problem:
            raise hub.HubError("invalid", f"{filename}: the header is {problem}")
        tensors, problem = tensors_from_header(header)
        del header
    if tensors is None:
        raise hub.HubError("invalid", f"{filename}: {problem}")
    return tensors


def _hub_error_reason(repo_id: str, endpoint: str, exc: Exception) -> str:
    kind = getattr(exc, "kind", "")
    detail = getattr(exc, "detail", type(exc).__name__)
    if kind == "gated":
        what = f"{_token_name()} was refused" if _hub_token() else "no HF_TOKEN is set"
        return (f"{repo_id!r} is gated or private on the Hub ({endpoint}) and {what}: set HF_TOKEN to a token "
                f"with access, or " + _alias_hint(repo_id))
    if kind == "not_found":
        if detail == "EntryNotFound":
            return f"{repo_id!r} has no config.json on the Hub ({endpoint}); " + _alias_hint(repo_id)
        if detail == "RevisionNotFound":
            return f"{repo_id!r} has no such revision on the Hub ({endpoint}); " + _alias_hint(repo_id)
        token = "" if _hub_token() else ", a private repo without HF_TOKEN"
        return (f"{repo_id!r} was not found on the Hub ({endpoint}) (a typo{token}, or a local name); "
                + _alias_hint(repo_id))
    if kind == "timeout":
        return (f"{repo_id!r} is not in vramlint's catalog and the Hub ({endpoint}) did not answer in time ({detail}); "
                + _alias_hint(repo_id))
    return (f"{repo_id!r} is not in vramlint's catalog and the Hub's answer ({endpoint}) was refused: {detail}; "
            + _alias_hint(repo_id))
