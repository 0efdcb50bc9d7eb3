"""Resolve a served model name to architecture facts (``ModelInfo``), or say why not and how to fix it.

Order (first hit wins):
  1. ``model-aliases`` from the project configuration (served name or path -> Hub id or config.json path)
  2. a local model directory holding ``config.json`` (relative paths from ``options.base_dir``)
  3. the local Hugging Face cache (config.json, plus safetensors headers when those files are cached)
  4. the catalog embedded in the package (``vramlint/data/models/*.json``)
  5. the Hub through huggingface_hub, when allowed (``options.allow_network`` and no ``HF_HUB_OFFLINE``)

The issue lists the Hub before the catalog; the catalog comes first on purpose so that popular models never
touch the network in pre-commit and CI runs: the answer is deterministic, fast, and needs no token for gated
repositories. A Hub answer is cached on disk (``$XDG_CACHE_HOME/vramlint/hub``) keyed by endpoint, repository
and revision, so the network is asked once per model.
"""

from __future__ import annotations

import json
import os
import struct
import threading
from pathlib import Path
from typing import Any

from vramlint.model import ModelInfo, ResolveOptions

CATALOG_DIR = Path(__file__).parent / "data" / "models"
_URL_SCHEMES = ("s3://", "gs://", "gcs://", "pvc://", "oci://", "http://", "https://", "azure://", "file://")
_catalog_cache: dict[str, dict] | None = None
_catalog_lock = threading.Lock()


# ----------------------------------------------------------------------------------------- catalog


def catalog() -> dict[str, dict]:
    """All catalog entries by lower-cased Hub id (loaded once, on first use)."""
    global _catalog_cache
    if _catalog_cache is None:
        with _catalog_lock:
            if _catalog_cache is None:
                entries: dict[str, dict] = {}
                for path in sorted(CATALOG_DIR.glob("*.json")):
                    data = json.loads(path.read_text(encoding="utf-8"))
                    for model_id, entry in data.get("models", {}).items():
                        entries[model_id.lower()] = {"id": model_id, **entry}
                _catalog_cache = entries
    return _catalog_cache


def catalog_entry(model_id: str) -> dict | None:
    entries = catalog()
    entry = entries.get(model_id.lower())
    if entry and "same_as" in entry:
        # A mirror or re-upload with identical weights (e.g. a repo renamed from neuralmagic/ to RedHatAI/).
        base = entries.get(entry["same_as"].lower())
        if base:
            merged = {k: v for k, v in base.items() if k not in ("id", "source")}
            merged.update({k: v for k, v in entry.items() if k != "same_as"})
            return merged
    return entry


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


def resolve_model(name: str, options: ResolveOptions) -> tuple[ModelInfo | None, str | None]:
    """Resolve ``name`` (as written after ``vllm serve`` / ``--model``) to a ``ModelInfo``.

    Returns ``(info, None)`` or ``(None, reason)``; the reason says what was tried and how to fix it.
    """
    if name is None or not str(name).strip():
        return None, "no model is set (vLLM would serve its default, facebook/opt-125m); set --model explicitly"
    name = str(name).strip()
    aliases = options.model_aliases or {}
    target = aliases.get(name)
    if target is None:
        stripped, _ = split_model_name(name)
        target = aliases.get(stripped)
    if target is not None:
        info, reason = _resolve_unaliased(str(target), options, via_alias=name)
        if info is not None:
            info.source = f"config alias ({name} -> {target}); {info.source}"
            return info, None
        return None, f"model-aliases maps {name!r} to {target!r}, which did not resolve: {reason}"
    return _resolve_unaliased(name, options)


def _resolve_unaliased(name: str, options: ResolveOptions, via_alias: str | None = None) -> tuple[ModelInfo | None, str | None]:
    base = Path(options.base_dir or ".")
    if any(name.startswith(s) for s in _URL_SCHEMES) and not name.startswith(("hf://", "huggingface://")):
        return None, (f"{name!r} is a storage URL, not a Hub id: vramlint cannot read the weights there; "
                      + _alias_hint(via_alias or name))
    repo_id, revision = split_model_name(name)
    local = _local_candidate(name, base)
    if local is not None:
        return _from_local(local, name, via_alias)
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
    if cached is not None:
        return cached, None
    # Catalog before the Hub: popular models resolve with no network and no token (see module docstring).
    if revision is None or revision == "main":
        hit = _from_catalog(repo_id)
        if hit:
            return hit, None
    return _from_hub(repo_id, revision, options)


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
    except (OSError, ValueError):  # a name too long for a path, or with a NUL byte: not a local model
        return None
    return None


def _from_local(path: Path, name: str, via_alias: str | None) -> tuple[ModelInfo | None, str | None]:
    from vramlint.fsread import Refusal, read_text
    from vramlint.modelconfig import facts_from_config, model_info_from_facts

    config_path = path if path.is_file() else path / "config.json"
    if not config_path.is_file():
        return None, (f"{name!r} is a directory without config.json; point at the model directory or "
                      + _alias_hint(via_alias or name))
    text = read_text(str(config_path), errors="replace")
    if isinstance(text, Refusal):  # outside the scanned tree, a FIFO, too large: never read (vramlint.fsread)
        return None, f"{config_path} is {text.reason}: not read; " + _alias_hint(via_alias or name)
    try:
        cfg = json.loads(text)
    except ValueError as exc:
        return None, f"cannot read {config_path}: {exc}"
    if not isinstance(cfg, dict):
        return None, f"{config_path} is not a JSON object"
    quant_cfg = _read_json(config_path.parent / "hf_quant_config.json", inside=True)
    facts = facts_from_config(cfg, quant_cfg)
    _apply_safetensors(facts, _local_safetensors_headers(config_path.parent))
    return model_info_from_facts(facts, name, f"local: {config_path}"), None


def _read_json(path: Path, inside: bool = False) -> dict | None:
    """A JSON object from a file; ``inside``: only inside the scanned tree (a model folder of the repository,
    not vramlint's own Hugging Face cache)."""
    from vramlint.fsread import MAX_FILE_BYTES, Refusal, read_text

    # a safetensors index of a large checkpoint runs to megabytes: the cache gets a larger cap
    text = read_text(str(path), limit=MAX_FILE_BYTES if inside else 64 * 2**20, check_inside=inside,
                     errors="replace")
    if isinstance(text, Refusal):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def read_safetensors_header(path: Path, inside: bool = False) -> dict[str, Any] | None:
    """The JSON header of a .safetensors file (8-byte little-endian length, then JSON), without the data."""
    from vramlint.fsread import is_inside

    if (inside and not is_inside(str(path))) or not path.is_file():  # never a FIFO, nor a link out of the tree
        return None
    try:
        with open(path, "rb") as fh:
            raw = fh.read(8)
            if len(raw) != 8:
                return None
            (length,) = struct.unpack("<Q", raw)
            if length > 100 * 2**20:
                return None
            header = json.loads(fh.read(length))
    except (OSError, ValueError):
        return None
    return header if isinstance(header, dict) else None


def _local_safetensors_headers(directory: Path) -> dict[str, tuple[str, list[int]]] | None:
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        return None
    tensors: dict[str, tuple[str, list[int]]] = {}
    for file in files:
        header = read_safetensors_header(file, inside=True)
        if header is None:
            return None  # partial knowledge would understate the weights: fall back to the computation
        for tensor, meta in header.items():
            if tensor != "__metadata__" and isinstance(meta, dict):
                tensors[tensor] = (str(meta.get("dtype")), list(meta.get("shape") or []))
    return tensors


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


def _from_hf_cache(repo_id: str, revision: str | None) -> ModelInfo | None:
    cache = hf_cache_dir()
    repo_dir = os.path.join(cache, "models--" + repo_id.replace("/", "--"))
    if not os.path.isdir(repo_dir):
        return None  # cheap check first: importing huggingface_hub costs ~100 ms
    from huggingface_hub import try_to_load_from_cache

    from vramlint.modelconfig import facts_from_config, model_info_from_facts

    config_path = try_to_load_from_cache(repo_id, "config.json", cache_dir=cache, revision=revision)
    if not isinstance(config_path, str):
        return None
    cfg = _read_json(Path(config_path))
    if cfg is None:
        return None
    quant_path = try_to_load_from_cache(repo_id, "hf_quant_config.json", cache_dir=cache, revision=revision)
    quant_cfg = _read_json(Path(quant_path)) if isinstance(quant_path, str) else None
    facts = facts_from_config(cfg, quant_cfg)
    snapshot = Path(config_path).parent
    tensors = None
    index = _read_json(snapshot / "model.safetensors.index.json")
    if index and isinstance(index.get("weight_map"), dict):
        shards = sorted(set(index["weight_map"].values()))
        if all((snapshot / s).is_file() for s in shards):
            tensors = _local_safetensors_headers_of(snapshot, shards)
    elif (snapshot / "model.safetensors").is_file():
        tensors = _local_safetensors_headers_of(snapshot, ["model.safetensors"])
    _apply_safetensors(facts, tensors)
    return model_info_from_facts(facts, repo_id, f"hf-cache: {config_path}")


def _local_safetensors_headers_of(directory: Path, names: list[str]) -> dict[str, tuple[str, list[int]]] | None:
    tensors: dict[str, tuple[str, list[int]]] = {}
    for name in names:
        header = read_safetensors_header(directory / name)
        if header is None:
            return None
        for tensor, meta in header.items():
            if tensor != "__metadata__" and isinstance(meta, dict):
                tensors[tensor] = (str(meta.get("dtype")), list(meta.get("shape") or []))
    return tensors


# ------------------------------------------------------------------------------------------ Hub


def _offline() -> bool:
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().lower() in ("1", "true", "yes", "on")


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def user_cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "vramlint"


def _hub_cache_file(endpoint: str, repo_id: str, revision: str | None) -> Path:
    import hashlib  # only when the Hub is asked: loading OpenSSL costs every run a few ms

    key = hashlib.sha256(f"{endpoint}\n{repo_id}\n{revision or 'main'}".encode()).hexdigest()[:32]
    return user_cache_dir() / "hub" / f"{key}.json"


def _not_found_reason(repo_id: str, why: str) -> str:
    return (f"{repo_id!r} is not in vramlint's catalog and {why}; " + _alias_hint(repo_id)
            + ", or run with network access (and HF_TOKEN for a gated model)")


def _from_hub(repo_id: str, revision: str | None, options: ResolveOptions) -> tuple[ModelInfo | None, str | None]:
    from vramlint.modelconfig import facts_from_config, model_info_from_facts

    endpoint = hub_endpoint()
    cache_file = _hub_cache_file(endpoint, repo_id, revision)
    cached = _read_json(cache_file)
    if cached and isinstance(cached.get("config"), dict):
        facts = facts_from_config(cached["config"], cached.get("hf_quant_config"))
        if cached.get("tensors"):
            _apply_safetensors(facts, {k: (v[0], v[1]) for k, v in cached["tensors"].items()})
        return model_info_from_facts(facts, repo_id, f"hub ({endpoint}, cached {cache_file})"), None
    if _offline():
        return None, _not_found_reason(repo_id, "HF_HUB_OFFLINE is set, so the Hub was not asked")
    if not options.allow_network:
        return None, _not_found_reason(repo_id, "network access is off (--offline)")

    if endpoint in _HUB_UNREACHABLE:
        return None, _not_found_reason(
            repo_id, f"the Hub {_HUB_UNREACHABLE[endpoint]} earlier in this run, so it was not asked again")
    result: dict[str, Any] = {}
    worker = threading.Thread(target=_hub_fetch, args=(endpoint, repo_id, revision, options.hub_timeout_s, result),
                              daemon=True)
    worker.start()
    worker.join(options.hub_timeout_s)
    if worker.is_alive():
        _HUB_UNREACHABLE[endpoint] = f"({endpoint}) did not answer within {options.hub_timeout_s:g} s"
        return None, _not_found_reason(repo_id, f"the Hub ({endpoint}) did not answer within {options.hub_timeout_s:g} s")
    if "error" in result:
        if result.get("unreachable"):
            _HUB_UNREACHABLE[endpoint] = f"({endpoint}) could not be reached"
        return None, result["error"]
    cfg = result["config"]
    tensors = result.get("tensors")
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        payload = {"endpoint": endpoint, "repo": repo_id, "revision": revision or "main", "config": cfg,
                   "hf_quant_config": result.get("hf_quant_config"),
                   "tensors": {k: [d, s] for k, (d, s) in tensors.items()} if tensors else None}
        tmp = cache_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        os.replace(tmp, cache_file)
    except OSError:
        pass  # a read-only home is no reason to fail the run
    facts = facts_from_config(cfg, result.get("hf_quant_config"))
    _apply_safetensors(facts, tensors)
    return model_info_from_facts(facts, repo_id, f"hub ({endpoint})"), None


# Set once the Hub has timed out or refused connections: without network (an air-gapped CI runner) every
# further model would wait the full timeout again, turning one slow answer into minutes per run.
# Keyed by endpoint, for this process only.
_HUB_UNREACHABLE: dict[str, str] = {}


def _hub_fetch(endpoint: str, repo_id: str, revision: str | None, timeout: float, out: dict) -> None:
    """Runs in a worker thread so the caller can give up after ``timeout`` whatever the HTTP stack does."""
    try:
        out.update(_hub_fetch_inner(endpoint, repo_id, revision, timeout))
    except Exception as exc:  # noqa: BLE001 - every failure becomes a reason, never a crash
        out["error"] = _hub_error_reason(repo_id, endpoint, exc)
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status is None and type(exc).__name__ not in _HUB_ANSWERS:
            out["unreachable"] = True


# Errors that mean the Hub answered (the repository or file is missing or gated), as opposed to no answer.
_HUB_ANSWERS = {"GatedRepoError", "RepositoryNotFoundError", "RevisionNotFoundError", "EntryNotFoundError",
                "ValueError", "JSONDecodeError"}


def _hub_fetch_inner(endpoint: str, repo_id: str, revision: str | None, timeout: float) -> dict:
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.utils import logging as hf_logging

    # Its retry warnings would land in the middle of vramlint's report; failures become reasons instead.
    hf_logging.set_verbosity_error()
    # huggingface_hub reads HF_HUB_OFFLINE once, at import; the caller has just checked the environment.
    from huggingface_hub import constants as hf_constants

    hf_constants.HF_HUB_OFFLINE = False

    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN") or None
    files_dir = str(user_cache_dir() / "hub-files")
    config_path = hf_hub_download(repo_id, "config.json", revision=revision, endpoint=endpoint, token=token,
                                  cache_dir=files_dir, etag_timeout=timeout)
    cfg = _read_json(Path(config_path))
    if cfg is None:
        raise ValueError("config.json on the Hub is not a JSON object")
    out: dict[str, Any] = {"config": cfg}
    api = HfApi(endpoint=endpoint, token=token)
    if not cfg.get("quantization_config"):
        try:
            if api.file_exists(repo_id, "hf_quant_config.json", revision=revision, token=token):
                quant_path = hf_hub_download(repo_id, "hf_quant_config.json", revision=revision, endpoint=endpoint,
                                             token=token, cache_dir=files_dir, etag_timeout=timeout)
                out["hf_quant_config"] = _read_json(Path(quant_path))
        except Exception:  # noqa: BLE001 - optional file
            pass
    try:
        meta = api.get_safetensors_metadata(repo_id, revision=revision, token=token, timeout=timeout)
        tensors: dict[str, tuple[str, list[int]]] = {}
        for file_meta in meta.files_metadata.values():
            for tensor, info in file_meta.tensors.items():
                tensors[tensor] = (str(info.dtype), list(info.shape))
        out["tensors"] = tensors
    except Exception:  # noqa: BLE001 - no safetensors (or unreadable headers): weights are computed instead
        pass
    return out


def _hub_error_reason(repo_id: str, endpoint: str, exc: Exception) -> str:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    kind = type(exc).__name__
    if kind == "GatedRepoError" or status in (401, 403):
        has_token = bool(os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN"))
        what = "the token in HF_TOKEN was refused" if has_token else "no HF_TOKEN is set"
        return (f"{repo_id!r} is gated or private on the Hub ({endpoint}) and {what}: set HF_TOKEN to a token "
                f"with access, or " + _alias_hint(repo_id))
    if kind in ("RepositoryNotFoundError", "RevisionNotFoundError") or status == 404:
        return (f"{repo_id!r} was not found on the Hub ({endpoint}) (a typo, a private repo without HF_TOKEN, or "
                "a local name); " + _alias_hint(repo_id))
    if kind == "EntryNotFoundError":
        return f"{repo_id!r} has no config.json on the Hub ({endpoint}); " + _alias_hint(repo_id)
    if "Timeout" in kind or "timed out" in str(exc).lower():
        return _not_found_reason(repo_id, f"the Hub ({endpoint}) timed out")
    return _not_found_reason(repo_id, f"the Hub ({endpoint}) could not be read ({kind})")
