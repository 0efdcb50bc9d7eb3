"""`--config FILE` read from the ConfigMap a server mounts at FILE: the join shared by a scan (ConfigMaps of any
scanned file) and a Helm chart (ConfigMaps the same chart renders).

vLLM reads the file itself (`vllm serve --config`), so the file's keys become the server's arguments, the
command line winning (`vramlint.extract.vllm_config.apply_config_file`). When the file cannot be read, the server
says why once, and `Server.unread_config` keeps it, so that a server whose model is only in that file is said to
have an unread config file rather than no model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vramlint.model import Location, Problem, Server

# relocate(server, before, configmap): where a chart's rendered ConfigMap text came from (values lines)
Relocate = Callable[[Server, "Snapshot", Any], None]


class Snapshot:
    """What a server held before a config file was merged into it: what the merge adds is what is new."""

    __slots__ = ("args", "unknown", "errors", "model_location", "notes")

    def __init__(self, server: Server):
        self.args = set(server.args) | set(server.arg_locations)
        self.unknown = set(server.unknown_args)
        self.errors = len(server.startup_errors)
        self.model_location = server.model_location
        self.notes = len(server.notes)


NOT_SCANNED = "is not among the scanned files; its settings are not included (scan the file that defines it)"


def join_config_refs(refs: list[Any], by_name: dict[str, list[Any]], problems: list[Problem],
                     relocate: Relocate | None = None, absent: str = NOT_SCANNED) -> None:
    """Merge into each ref's server the `--config` files its ConfigMap mounts show (``by_name``: ConfigMap name
    -> ConfigMapRecords; one in the server's own file is preferred). Problems of the config text go to
    ``problems``; ``relocate`` moves what a merge added from rendered text to where it was written; ``absent``
    says why a ConfigMap not in ``by_name`` was not read."""
    from vramlint.extract.podspec import config_key_for, is_block_scalar
    from vramlint.yamlload import load_embedded, value_location

    apply = _apply_config_file()
    for ref in refs:
        server = ref.server
        for path, loc in ref.files:
            label = ref.label or f"--config {path}"
            if path is None:
                _unread(server, loc, "--config", "--config is given a value that is not known statically; its settings "
                        "are not included")
                continue
            body = (ref.written or {}).get(path)
            if body is not None:
                from vramlint.extract.vllm_config import read_written_config

                read, note = read_written_config(server, path, body)
                server.notes.append(note)
                if not read and server.unread_config is None:
                    server.unread_config = label
                continue
            key = config_key_for(path, ref.mounts)
            if key is None:
                _unread(server, loc, label, f"--config {path}: the file is not mounted from a ConfigMap in this "
                        "manifest; its settings are not included")
                continue
            cm_name, data_key = key
            candidates = by_name.get(cm_name, [])
            cm = next((c for c in candidates if c.file == server.file), candidates[0] if candidates else None)
            if cm is None:
                _unread(server, loc, label, f"{label}: ConfigMap {cm_name!r} (key {data_key!r}) {absent}")
                continue
            content = cm.data.get(data_key)
            if not isinstance(content, str):
                _unread(server, loc, label, f"{label}: ConfigMap {cm_name!r} in {cm.file} has no key {data_key!r}")
                continue
            loc = value_location(cm.file, cm.data, data_key, f"{cm.path}.{data_key}")
            docs, found = load_embedded(content, cm.file, cm.doc.lines, loc, is_block_scalar(content))
            problems.extend(found)
            if not docs:
                _unread(server, loc, label, None)  # the text's own problem is said where it is
                continue
            before = Snapshot(server)
            if ref.apply is not None:
                ref.apply(server, docs[0], cm)
            elif apply is None:
                _unread(server, loc, label, f"--config {path}: ConfigMap {cm_name!r} found in {cm.file}, but config "
                        "files cannot be merged in this build")
                continue
            else:
                apply(server, docs[0], None)  # positions already point into the ConfigMap's file
                server.notes.append(f"--config {path}: settings read from ConfigMap {cm_name!r} key {data_key!r} "
                                    f"in {cm.file}")
            if relocate is not None:
                relocate(server, before, cm)


def _unread(server: Server, loc: Location | None, label: str, note: str | None) -> None:
    if note is not None:
        server.notes.append(note)
        if loc is not None:
            # the note goes on the `--config` flag's line (meta.server_notes), not the container's (hostile24
            # leftover: `--config /proc/self/environ` said on the container's line)
            server.arg_locations.setdefault("config", loc)
    if server.unread_config is None:
        server.unread_config = label


def _apply_config_file():
    try:
        from vramlint.extract.vllm_config import apply_config_file
    except ImportError:
        return None
    return apply_config_file


__all__ = ["Snapshot", "join_config_refs"]
