"""bjw-s's app-template chart (its `common` library, v3/v4 values), as a Flux HelmRelease installs it.

The chart makes one workload per entry of ``controllers`` (a Deployment unless its ``type`` says otherwise;
``enabled: false`` makes none), whose pod runs one container per entry of the controller's ``containers``: the
image is ``image.repository`` and ``image.tag`` joined, ``command`` and ``args`` pass as written (a string is one
word), ``env`` is a map of names to values (or ``valueFrom`` mappings) or a Kubernetes list, ``resources`` are
the container's. The pod options (``nodeSelector``, ``affinity``, ``tolerations``, ``runtimeClassName``, ...) are
``defaultPodOptions`` with the controller's ``pod`` merged over them. Volumes come from ``persistence`` and are
not read, so whether /dev/shm is a memory volume is left unknown. Each container is read by the shared PodSpec
reading (`podspec.container_server`), so only one that runs vLLM is a server.
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
    scalar_text,
    to_int,
)
from vramlint.extract.records import Records
from vramlint.yamlload import join_path

CHART = "app-template"


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
    for cid, controller in values["controllers"].items():
        if not is_map(controller) or controller.get("enabled") is False:
            continue
        cpath = join_path(join_path(vpath, "controllers"), cid)
        name = str(cid) if release_name in (None, str(cid)) else f"{release_name}-{cid}"
        ctx = ObjectContext(scalar_text(controller.get("type")) or "Deployment", name, dict(ignore))
        pod = _pod_options(default_pod, controller.get("pod"))
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
                records.servers.append(server)
