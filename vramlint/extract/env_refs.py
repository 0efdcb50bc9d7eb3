"""Container variables set from ConfigMaps (`env[].valueFrom.configMapKeyRef`, `envFrom[].configMapRef`), read
once every scanned file's ConfigMaps are known.

The kubelet fills those variables from the ConfigMap before the container starts, and Kubernetes expands
`$(NAME)` in `command` and `args` from them, so `--model=$(MODEL_NAME)` with MODEL_NAME from a ConfigMap in the
scanned files names that ConfigMap's value. Only a ConfigMap the kubelet would use is taken: of the same name, in
the workload's file or folder (a manifests folder or kustomize base applied together), and not in another
namespace when both say theirs. The server is then read again with those values (`podspec.container_server`) and
updated in place, so what already holds it (engine groups, `--config` references) still does.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from vramlint.extract.podspec import configmap_refs, workload_namespace
from vramlint.extract.records import EnvRef


def configmap_for(ref: EnvRef, name: str, by_name: dict[str, list[Any]]) -> Any:
    """The ConfigMap ``name`` the kubelet would give ``ref``'s pod among the scanned ones, or None."""
    folder = os.path.dirname(ref.doc.file)
    fits = []
    for cm in by_name.get(name, []):
        if cm.file != ref.doc.file and os.path.dirname(cm.file) != folder:
            continue
        cm_namespace = workload_namespace(cm.doc.data) if hasattr(cm.doc.data, "get") else None
        if ref.namespace and cm_namespace and ref.namespace != cm_namespace:
            continue
        fits.append(cm)
    same_file = [cm for cm in fits if cm.file == ref.doc.file]
    return (same_file or fits or [None])[0]


def wanted_configmaps(refs: list[EnvRef]) -> set[str]:
    names: set[str] = set()
    for ref in refs:
        keyed, whole = configmap_refs(ref.container)
        names.update(cm for cm, _key in keyed.values())
        names.update(whole)
    return names


def resolve_env_refs(refs: list[EnvRef], by_name: dict[str, list[Any]], servers: list[Any]) -> None:
    """Read each ref's server again with the variables its ConfigMaps give, in place; a ref whose server is no
    longer among ``servers`` (dropped by its object's extractor) or whose ConfigMaps are not found is left."""
    from vramlint.extract.podspec import container_server, is_map, is_seq, scalar_text
    from vramlint.extract.records import Records
    from vramlint.yamlload import value_location

    kept = {id(s) for s in servers}
    for ref in refs:
        if id(ref.server) not in kept:
            continue
        keyed, whole = configmap_refs(ref.container)
        values: dict[str, tuple[str, Any]] = {}
        read_from: dict[tuple[str, str], list[str]] = {}  # (ConfigMap, file) -> the variables read from it
        for var, (name, key) in keyed.items():
            cm = configmap_for(ref, name, by_name)
            value = cm.data.get(key) if cm is not None else None
            if value is not None and not is_map(value) and not is_seq(value):
                values[var] = (scalar_text(value) or "", value_location(cm.file, cm.data, key, f"{cm.path}.{key}"))
                read_from.setdefault((name, cm.file), []).append(var)
        whole_read = []
        for name in whole:
            cm = configmap_for(ref, name, by_name)
            if cm is None:
                continue
            whole_read.append(name)
            for key, value in cm.data.items():
                if isinstance(key, str) and not is_map(value) and not is_seq(value) and key not in values:
                    values.setdefault(key, (scalar_text(value) or "",
                                            value_location(cm.file, cm.data, key, f"{cm.path}.{key}")))
            read_from.setdefault((name, cm.file), []).append("envFrom")
        if not values and not whole_read:
            continue
        explicit = {item["name"] for item in (ref.container.get("env") or [])
                    if is_map(item) and isinstance(item.get("name"), str) and "valueFrom" not in item}

        def fill(server: Any, values: dict = values, whole_read: list = whole_read, whole: list = whole,
                 explicit: set = explicit) -> None:
            for var, (text, loc) in values.items():
                if var in explicit:  # `env` wins over what envFrom sets
                    continue
                server.env[var] = text
                if loc is not None:
                    server.env_locations[var] = loc
            if whole and len(whole_read) == len(whole):
                server.env_from_unseen = False
            server.notes[:] = [n for n in server.notes if not any(
                n.startswith(f"envFrom configMapRef {name}:") for name in whole_read)]

        new, _problems = container_server(ref.doc, ref.ctx, ref.hit, ref.index, ref.container,
                                          shm_known=ref.shm_known, records=Records(), before_invocation=fill,
                                          container_path=ref.container_path)
        if new is None:
            continue
        old = ref.server
        added_by_caller = old.notes[ref.notes_at:]
        for f in dataclasses.fields(old):
            if f.name in ("engine_group", "notes") or (f.name == "replicas" and new.replicas is None):
                continue
            setattr(old, f.name, getattr(new, f.name))
        old.notes = list(new.notes) + [n for n in added_by_caller if n not in new.notes]
        old.notes.append("variables set from ConfigMaps of the scanned files: " + "; ".join(
            f"{', '.join(names)} from ConfigMap {cm!r} in {file}" for (cm, file), names in read_from.items()))
