"""bjw-s's app-template chart (its `common` library, v3/v4 values), as a Flux HelmRelease installs it.

The chart makes one workload per entry of ``controllers`` (a Deployment unless its ``type`` says otherwise;
``enabled: false`` makes none), whose pod runs one container per entry of the controller's ``containers``: the
image is ``image.repository`` and ``image.tag`` joined, ``command`` and ``args`` pass as written (a string is one
word), ``env`` is a map of names to values (or ``valueFrom`` mappings) or a Kubernetes list, ``resources`` are
the container's. The pod options (``nodeSelector``, ``affinity``, ``tolerations``, ``runtimeClassName``, ...) are
``defaultPodOptions`` with the controller's ``pod`` merged over them. Volumes and their mounts come from
``persistence`` (`_persistence`, as the library's ``pod/fields/_volumes.tpl`` and
``container/fields/_volumeMounts.tpl`` of common 4.x build them), so a memory ``emptyDir`` mounted at /dev/shm is
seen; a release that takes values from ``valuesFrom`` (not in the file) may add one, so there /dev/shm without one
is unknown. Each container is read by the shared PodSpec reading (`podspec.container_server`), so only one that
runs vLLM is a server.
"""

from __future__ import annotations

import copy
from typing import Any

from vramlint.extract.podspec import (
    ObjectContext,
    PodSpecHit,
    container_server,
    ignore_rules_from,
    is_map,
    is_seq,
    scalar_text,
    to_int,
)
from vramlint.extract.records import Records
from vramlint.yamlload import join_path

CHART = "app-template"

# VRL008's advice for these pods: their volumes are the chart's `persistence` items, not a pod spec's to edit
SHM_FIX = ("add a persistence item with type: emptyDir, medium: Memory and globalMounts: [{path: /dev/shm}] "
           "(the chart makes the volume and its mount)")


def is_app_template_values(values: Any) -> bool:
    """The values shape as a whole: controllers holding containers whose image is a repository mapping."""
    controllers = values.get("controllers") if is_map(values) else None
    if not is_map(controllers) or not controllers:
        return False
    return all(is_map(c) and is_map(c.get("containers")) for c in controllers.values()) and any(
        is_map(box) and is_map(box.get("image")) and "repository" in box["image"]
        for c in controllers.values() for box in c["containers"].values())


def _pod_options(default: Any, own: Any) -> Any:
    if not is_map(own) or not own:
        return default if is_map(default) else {}
    if not is_map(default) or not default:
        return own
    merged = dict(default)  # the controller's own options win, key by key (positions kept in each part)
    merged.update(own)
    return merged


def _enabled(item: Any) -> bool:
    return not (is_map(item) and "enabled" in item and item.get("enabled") in (False, None, "", 0))


def _mount_paths(item: Any, identifier: str, kind: str, listed: list) -> list[str | None]:
    """The mount paths one persistence item gives one container: each listed mount's `path`, the one before it
    where a mount has none (the library keeps it for the next mount too), `/<identifier>` first."""
    path = f"/{identifier}" if kind != "hostPath" else scalar_text(item.get("hostPath"))
    paths: list[str | None] = []
    for mount in listed:
        if is_map(mount) and mount.get("path"):
            path = scalar_text(mount.get("path"))
        paths.append(path)
    return paths


def _is_shm(paths: list[str | None]) -> bool:
    return any(str(p if p is not None else "").rstrip("/") == "/dev/shm" for p in paths)


class _Persistence:
    """A release's ``persistence`` read once (common 4.x pod/fields/_volumes.tpl, container/fields/
    _volumeMounts.tpl): whether a container of a controller gets a memory emptyDir at /dev/shm. The items every
    pod gets are read once for all; an item's `advancedMounts` for one controller only for that controller's
    containers (2,000 controllers x 20,000 items walked every item for every container: killed at 30 s).
    Helm's values are JSON, so the keys of `advancedMounts` are compared as strings (a controller `1` is "1")."""

    def __init__(self, values: Any) -> None:
        items = values.get("persistence") if is_map(values) else None
        self.memory: dict[str, int] = {}  # volume name -> items of every pod making it a memory emptyDir
        self.at_shm: dict[str, int] = {}  # volume name -> items of every pod mounting it at /dev/shm everywhere
        self.by_controller: dict[str, list[tuple[str, Any, str, bool, bool, bool, list, dict]]] = {}
        self.both: set[str] = set()  # a memory volume at /dev/shm in every pod
        if not is_map(items):
            return
        for identifier, item in items.items():
            if not is_map(item) or not _enabled(item):
                continue
            name = str(identifier)
            glob = item.get("globalMounts")
            advanced = item.get("advancedMounts")
            kind = scalar_text(item.get("type")) or "persistentVolumeClaim"
            memory = kind == "emptyDir" and str(item.get("medium", "")) == "Memory"
            glob_list = list(glob) if glob and is_seq(glob) else []
            # without this controller among its advancedMounts: in the pod when mounted everywhere, or when no
            # mount is said at all (then everywhere, at /<identifier>)
            everywhere = bool(glob) or (not glob and not advanced)
            static_shm = _is_shm(_mount_paths(item, name, kind, glob_list if (glob or advanced) else [None]))
            if everywhere:
                self._count(name, memory, static_shm, 1)
            if advanced and is_map(advanced):
                own_by_name: dict[str, Any] = {}
                for controller, own in advanced.items():
                    own_by_name.setdefault(str(controller), own)
                for controller, own in own_by_name.items():
                    if own:
                        self.by_controller.setdefault(controller, []).append(
                            (name, item, kind, memory, everywhere, static_shm, glob_list, own))
        self.both = {n for n in self.memory if n in self.at_shm}

    def _count(self, name: str, memory: bool, shm: bool, by: int) -> None:
        if memory:
            self.memory[name] = self.memory.get(name, 0) + by
        if shm:
            self.at_shm[name] = self.at_shm.get(name, 0) + by

    def shm(self, controller: str, container: str) -> bool:
        own_items = self.by_controller.get(controller, ())
        if not own_items:
            return bool(self.both)
        memory = dict(self.memory)
        at_shm = dict(self.at_shm)
        touched = set()
        for name, item, kind, is_memory, everywhere, static_shm, glob_list, own in own_items:
            touched.add(name)
            if everywhere:  # this controller's pod has it another way: its contribution is the one below
                for table, hit in ((memory, is_memory), (at_shm, static_shm)):
                    if hit:
                        table[name] -= 1
                        if not table[name]:
                            del table[name]
            mine = {str(k): v for k, v in own.items()}.get(container) if is_map(own) else None
            listed = glob_list + (list(mine) if is_seq(mine) else [])
            if is_memory:
                memory[name] = memory.get(name, 0) + 1
            if _is_shm(_mount_paths(item, name, kind, listed)):
                at_shm[name] = at_shm.get(name, 0) + 1
        return any(n in memory for n in touched if n in at_shm) or any(n not in touched for n in self.both)


def _container(box: Any, name: str) -> Any:
    proxy = copy.copy(box)  # the same positions (lc), with the fields a Kubernetes container has
    image = box.get("image")
    if is_map(image) and image.get("repository") is not None:
        repository, tag = scalar_text(image.get("repository")), scalar_text(image.get("tag"))
        proxy["image"] = f"{repository}:{tag}" if tag and not tag.startswith("@") else f"{repository}{tag or ''}"
    proxy["name"] = name
    for key in ("command", "args"):
        if isinstance(box.get(key), str) and "\n" not in box[key]:
            proxy[key] = [box[key]]  # one word, as the chart writes it into the list
    return proxy


def read_app_template(doc: Any, release: Any, values: Any, vpath: str, records: Records) -> None:
    metadata = release.get("metadata")
    release_name = scalar_text(metadata.get("name")) if is_map(metadata) else None
    ignore = ignore_rules_from(doc.file, metadata, "metadata")
    default_pod = values.get("defaultPodOptions")
    spec = release.get("spec")
    values_from = is_map(spec) and is_seq(spec.get("valuesFrom")) and bool(spec.get("valuesFrom"))
    persistence = _Persistence(values)
    for cid, controller in values["controllers"].items():
        if not is_map(controller) or controller.get("enabled") is False:
            continue
        cpath = join_path(join_path(vpath, "controllers"), cid)
        name = str(cid) if release_name in (None, str(cid)) else f"{release_name}-{cid}"
        ctx = ObjectContext(scalar_text(controller.get("type")) or "Deployment", name, dict(ignore))
        pod = _pod_options(default_pod, controller.get("pod"))
        host_ipc = is_map(pod) and pod.get("hostIPC") is True  # /dev/shm is the host's
        replicas = to_int(controller.get("replicas")) if "replicas" in controller else 1
        hit = PodSpecHit(pod, join_path(cpath, "pod"), replicas, None)
        for i, (box_name, box) in enumerate(controller["containers"].items()):
            if not is_map(box) or box.get("enabled") is False:
                continue
            server, problems = container_server(
                doc, ctx, hit, i, _container(box, str(box_name)), shm_known=False, records=records,
                container_path=join_path(join_path(cpath, "containers"), box_name))
            records.problems.extend(problems)
            if server is not None:
                shm = host_ipc or persistence.shm(str(cid), str(box_name))
                server.shm = None if (shm is False and values_from) else shm
                server.shm_fix = SHM_FIX
                records.servers.append(server)
