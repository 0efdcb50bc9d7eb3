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
    pod_has_shm,
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


def _persistence(values: Any, controller: str, container: str) -> tuple[list[dict], list[dict]]:
    """The pod volumes and the container's volumeMounts that ``persistence`` makes for one container of one
    controller, in Kubernetes' shape (only what `podspec.pod_has_shm` reads: names, emptyDir medium, paths)."""
    items = values.get("persistence") if is_map(values) else None
    volumes: list[dict] = []
    mounts: list[dict] = []
    if not is_map(items):
        return volumes, mounts
    for identifier, item in items.items():
        if not is_map(item) or not _enabled(item):
            continue
        glob = item.get("globalMounts")
        advanced = item.get("advancedMounts")
        own = advanced.get(controller) if is_map(advanced) else None
        # the volume is in this controller's pod when it is mounted everywhere, in one of this controller's
        # containers, or nowhere said (then everywhere, at /<identifier>)
        if not (glob or (advanced and own) or (not glob and not advanced)):
            continue
        kind = scalar_text(item.get("type")) or "persistentVolumeClaim"
        volume: dict = {"name": str(identifier)}
        if kind == "emptyDir":
            volume["emptyDir"] = {"medium": item.get("medium")} if item.get("medium") is not None else {}
        else:
            volume[kind] = {}
        volumes.append(volume)
        path = f"/{identifier}" if kind != "hostPath" else scalar_text(item.get("hostPath"))
        if glob or advanced:
            listed = list(glob) if is_seq(glob) else []
            mine = own.get(container) if is_map(own) else None
            listed += list(mine) if is_seq(mine) else []
            for mount in listed:
                if is_map(mount) and mount.get("path"):
                    path = scalar_text(mount.get("path"))  # (the library keeps it for the next mount too)
                mounts.append({"name": str(identifier), "mountPath": path})
        else:
            mounts.append({"name": str(identifier), "mountPath": path})
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
    for cid, controller in values["controllers"].items():
        if not is_map(controller) or controller.get("enabled") is False:
            continue
        cpath = join_path(join_path(vpath, "controllers"), cid)
        name = str(cid) if release_name in (None, str(cid)) else f"{release_name}-{cid}"
        ctx = ObjectContext(scalar_text(controller.get("type")) or "Deployment", name, dict(ignore))
        pod = _pod_options(default_pod, controller.get("pod"))
        pod_for_shm = dict(pod) if is_map(pod) else {}
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
                volumes, mounts = _persistence(values, str(cid), str(box_name))
                pod_for_shm["volumes"] = volumes
                shm = pod_has_shm(pod_for_shm, {"volumeMounts": mounts})
                server.shm = None if (shm is False and values_from) else shm
                server.shm_fix = SHM_FIX
                records.servers.append(server)
