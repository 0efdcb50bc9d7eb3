"""bjw-s's app-template chart (its `common` library, v3/v4 values), as a Flux HelmRelease installs it.

The chart makes one workload per entry of ``controllers`` (a Deployment unless its ``type`` says otherwise;
``enabled: false`` makes none), whose pod runs one container per entry of the controller's ``containers``: the
image is ``image.repository`` and ``image.tag`` joined, ``command`` and ``args`` pass as written (a string is one
word), ``env`` is a map of names to values (or ``valueFrom`` mappings) or a Kubernetes list, ``resources`` are
the container's. The pod options (``nodeSelector``, ``affinity``, ``tolerations``, ``runtimeClassName``, ...) are
``defaultPodOptions`` with the controller's ``pod`` merged over them. Volumes and their mounts come from
``persistence`` (`_Persistence`, as the library's ``pod/fields/_volumes.tpl`` and
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


# The top-level keys of the chart's values (bjw-s common library 3.x / 4.x values.yaml), and `enabled`, the usual
# condition of a dependency
VALUES_KEYS = frozenset({
    "global", "defaultPodOptionsStrategy", "defaultPodOptions", "controllers", "serviceAccount", "secrets",
    "configMaps", "service", "ingress", "route", "persistence", "networkpolicies", "rbac", "serviceMonitor",
    "rawResources", "enforceServiceAccountCreation", "enabled",
})


def values_blocks(data: Any) -> list[tuple[str, Any]]:
    """(path, values) of app-template's values in a values file as a whole: the file's top level, or, in the
    values of a chart that depends on app-template (or a fork of it), the mapping under the dependency's name or
    alias (Helm gives a subchart the values under that key: `modelServing: {controllers: ...}`), unless it says
    `enabled: false`. Only a mapping whose every key is one of the chart's values keys is taken."""
    def whole(values: Any) -> bool:
        return is_app_template_values(values) and all(k in VALUES_KEYS for k in values)

    if not is_map(data):
        return []
    if whole(data):
        return [("", data)]
    return [(key, value) for key, value in data.items()
            if isinstance(key, str) and is_map(value) and value.get("enabled") is not False and whole(value)]


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
    _volumeMounts.tpl): whether a container of a controller gets a memory emptyDir at /dev/shm. Each item is its
    own volume (named by its key), so a container has one when some memory item's mounts for it reach /dev/shm.
    The items in every pod (mounted everywhere, or with no mount said: at /<identifier>) are read once for all;
    an item's `advancedMounts` only for its controllers' containers (2,000 controllers x 20,000 items walked every
    item for every container: killed at 30 s). Helm's values are JSON, so the keys of `advancedMounts` are
    compared as strings (a controller `1` is "1")."""

    def __init__(self, values: Any) -> None:
        items = values.get("persistence") if is_map(values) else None
        self.everywhere = False  # a memory item at /dev/shm in every container of every pod
        # controller -> its memory items' (item, kind, globalMounts, advancedMounts of that controller)
        self.by_controller: dict[str, list[tuple[Any, str, str, list, Any]]] = {}
        if not is_map(items):
            return
        for identifier, item in items.items():
            if not is_map(item) or not _enabled(item):
                continue
            kind = scalar_text(item.get("type")) or "persistentVolumeClaim"
            if kind != "emptyDir" or str(item.get("medium", "")) != "Memory":
                continue  # only a memory emptyDir is the shared memory NCCL needs
            name = str(identifier)
            glob = item.get("globalMounts")
            advanced = item.get("advancedMounts")
            glob_list = list(glob) if glob and is_seq(glob) else []
            if (glob or not advanced) and _is_shm(_mount_paths(item, name, kind, glob_list if glob else [None])):
                self.everywhere = True
            if advanced and is_map(advanced):
                for controller, own in advanced.items():
                    if own:
                        self.by_controller.setdefault(str(controller), []).append((item, name, kind, glob_list, own))

    def shm(self, controller: str, container: str) -> bool:
        if self.everywhere:
            return True
        for item, name, kind, glob_list, own in self.by_controller.get(controller, ()):
            mine = {str(k): v for k, v in own.items()}.get(container) if is_map(own) else None
            if _is_shm(_mount_paths(item, name, kind, glob_list + (list(mine) if is_seq(mine) else []))):
                return True
        return False


class _ConfigMapItems:
    """The `configMap` items of a release's ``persistence``, read once (a release of 2,000 controllers and 20,000
    items must not walk every item for every container), as the volumes and mounts they give one container
    (common's pod/fields/_volumes.tpl names the volume after the item and takes the ConfigMap of its `name`;
    container/fields/_volumeMounts.tpl mounts it at each globalMounts path, and at the advancedMounts paths of the
    controller's container, `/<identifier>` when a mount says none), so a `--config` file in it is read. An item
    that names its ConfigMap by `identifier` (the release's own `configMaps` entry, named after the release) is not
    followed: the release name is not in the values."""

    def __init__(self, values: Any) -> None:
        items = values.get("persistence") if is_map(values) else None
        self.items: list[tuple[str, Any, str, list, dict]] = []  # (identifier, item, name, globalMounts, advanced)
        if not is_map(items):
            return
        for identifier, item in items.items():
            if not is_map(item) or not _enabled(item) or scalar_text(item.get("type")) != "configMap":
                continue
            cm_name = scalar_text(item.get("name"))
            if not cm_name:
                continue
            listed = list(item.get("globalMounts") or []) if is_seq(item.get("globalMounts")) else []
            advanced = item.get("advancedMounts")
            by_controller = {str(k): v for k, v in advanced.items()} if is_map(advanced) else {}
            if not listed and not is_map(advanced):
                listed = [None]  # mounted in every container at /<identifier>
            self.items.append((str(identifier), item, cm_name, listed, by_controller))

    def for_container(self, controller: str, container: str) -> tuple[list[dict], list[dict]]:
        volumes: list[dict] = []
        mounts: list[dict] = []
        for identifier, item, cm_name, glob_list, by_controller in self.items:
            own = by_controller.get(controller)
            mine = {str(k): v for k, v in own.items()}.get(container) if is_map(own) else None
            listed = glob_list + (list(mine) if is_seq(mine) else [])
            if not listed:
                continue
            volume: dict = {"name": identifier, "configMap": {"name": cm_name}}
            if is_seq(item.get("items")):
                volume["configMap"]["items"] = list(item["items"])
            volumes.append(volume)
            for mount, path in zip(listed, _mount_paths(item, identifier, "configMap", listed), strict=True):
                entry = {"name": identifier, "mountPath": path or f"/{identifier}"}
                if is_map(mount) and mount.get("subPath"):
                    entry["subPath"] = scalar_text(mount.get("subPath"))
                mounts.append(entry)
        return volumes, mounts


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
    config_maps = _ConfigMapItems(values)
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
            proxy = _container(box, str(box_name))
            volumes, mounts = config_maps.for_container(str(cid), str(box_name))
            box_hit = hit
            if mounts:
                proxy["volumeMounts"] = mounts
                box_hit = PodSpecHit(dict(pod, volumes=volumes) if is_map(pod) else {"volumes": volumes},
                                     hit.path, hit.replicas, None)
            server, problems = container_server(
                doc, ctx, box_hit, i, proxy, shm_known=False, records=records,
                container_path=join_path(join_path(cpath, "containers"), box_name))
            records.problems.extend(problems)
            if server is not None:
                shm = host_ipc or persistence.shm(str(cid), str(box_name))
                server.shm = None if (shm is False and values_from) else shm
                server.shm_fix = SHM_FIX
                records.servers.append(server)
