"""Fields the Kubernetes API server requires in a pod template, checked where their absence is certain.

The API server rejects a workload whose pod template lacks a required field (the OpenAPI schema of
io.k8s.api.core.v1: `Container.name`, `VolumeMount.name` and `VolumeMount.mountPath`, `Volume.name`,
`EnvVar.name`), with `<Kind> "<name>" is invalid: <field>: Required value`; `kubectl apply` fails and nothing
is deployed. Checked for the built-in workload kinds (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet,
ReplicationController, Job, CronJob, PodTemplate) and LeaderWorkerSet, whose CRD schema embeds the same
PodTemplateSpec. Never for a document written with template expressions (a Helm template may add the field
under a condition) or for a strategic-merge patch (`$patch`), where the object is completed elsewhere.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import find_podspecs, is_map, is_seq, scalar_text
from vramlint.model import Location, Problem
from vramlint.yamlload import has_template_marker, join_path, key_location, node_location, value_location

_BUILT_IN = frozenset({"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController",
                       "Job", "CronJob", "PodTemplate"})
_GROUPS = {"Deployment": "apps", "StatefulSet": "apps", "DaemonSet": "apps", "ReplicaSet": "apps",
           "Job": "batch", "CronJob": "batch", "LeaderWorkerSet": "leaderworkerset.x-k8s.io"}
# list key in the pod spec / container -> the fields each entry requires
_CONTAINER_LISTS = ("containers", "initContainers")
_REQUIRED = {
    "volumeMounts": ("name", "mountPath"),
    "env": ("name",),
}


def _checked_kind(api: str, kind: str) -> bool:
    group = api.split("/")[0] if "/" in api else ""
    if kind in _BUILT_IN:
        return group in ("", "apps", "batch")
    return kind == "LeaderWorkerSet" and group == "leaderworkerset.x-k8s.io"


_LAST_TEMPLATED: list[Any] = [None, False]  # (the lines of the file last asked about, the answer)


def _templated(lines: list[str]) -> bool:
    """Template syntax anywhere in the file. Every document of a file shares its list of lines: the answer is
    kept for the last file, so a stream of thousands of documents is read once, not once per document."""
    if _LAST_TEMPLATED[0] is not lines:
        _LAST_TEMPLATED[:] = [lines, any("{{" in line or has_template_marker(line) for line in lines)]
    return _LAST_TEMPLATED[1]


def required_field_problems(doc: Any, obj: Any, path: str) -> list[Problem]:
    """One error per missing required field of the pod templates in ``obj`` (a Kubernetes object)."""
    if not is_map(obj):
        return []
    kind = scalar_text(obj.get("kind")) or ""
    api = scalar_text(obj.get("apiVersion")) or ""
    if not _checked_kind(api, kind) or _templated(doc.lines):
        return []
    meta = obj.get("metadata")
    name = scalar_text(meta.get("name")) if is_map(meta) else None
    group = _GROUPS.get(kind)
    label = f'{kind}.{group} "{name or ""}"' if group else f'{kind} "{name or ""}"'
    problems: list[Problem] = []

    def missing(node: Any, node_path: str, field: str) -> None:
        loc = node_location(doc.file, node, node_path) or Location(doc.file, 1, 1)
        field_path = join_path(node_path[len(path) + 1:] if path and node_path.startswith(path + ".") else node_path,
                               field)
        problems.append(Problem(doc.file, loc.line, loc.column,
                                f"the API server rejects this object: {label} is invalid: {field_path}: Required "
                                "value. Nothing in it is deployed until the field is written"))

    def patch(node: Any) -> bool:
        return is_map(node) and any(str(k).startswith("$") for k in node)

    def wrong_type(parent: Any, key: Any, parent_path: str, want: str) -> None:
        value = parent[key]
        node_path = join_path(parent_path, key)
        loc = value_location(doc.file, parent, key, node_path) or key_location(doc.file, parent, key, node_path) \
            or Location(doc.file, 1, 1)
        field_path = node_path[len(path) + 1:] if path and node_path.startswith(path + ".") else node_path
        got = _go_type(value)
        problems.append(Problem(doc.file, loc.line, loc.column,
                                f"the API server rejects this object: {label}: {field_path} must be {want}, not "
                                f"{got} (kubectl: cannot unmarshal {got} into the field). Nothing in it is deployed "
                                "until it is written as one"))

    for hit in find_podspecs(obj, path):
        pod = hit.node
        for list_key in _CONTAINER_LISTS:
            value = pod.get(list_key)
            if value is not None and not is_seq(value):
                wrong_type(pod, list_key, hit.path, "a list of containers")
            for ci, container in enumerate(value if is_seq(value) else []):
                if not is_map(container) or patch(container):
                    continue
                cpath = join_path(join_path(hit.path, list_key), ci)
                for key in ("command", "args"):
                    words = container.get(key)
                    if words is None:
                        continue
                    if not is_seq(words):
                        wrong_type(container, key, cpath, "a list of strings")
                        continue
                    for wi, word in enumerate(words):
                        # a null item decodes to "" (Go leaves the string empty); a number or a boolean does not
                        if word is not None and not isinstance(word, str):
                            wrong_type(words, wi, join_path(cpath, key), "a string")
                if container.get("env") is not None and not is_seq(container.get("env")):
                    wrong_type(container, "env", cpath, "a list of variables")
        volumes = pod.get("volumes")
        if is_seq(volumes):
            for i, volume in enumerate(volumes):
                if is_map(volume) and not patch(volume) and not scalar_text(volume.get("name")):
                    missing(volume, join_path(join_path(hit.path, "volumes"), i), "name")
        for list_key in _CONTAINER_LISTS:
            containers = pod.get(list_key)
            if not is_seq(containers):
                continue
            for ci, container in enumerate(containers):
                if not is_map(container) or patch(container):
                    continue
                cpath = join_path(join_path(hit.path, list_key), ci)
                if not scalar_text(container.get("name")):
                    missing(container, cpath, "name")
                for key, fields in _REQUIRED.items():
                    entries = container.get(key)
                    if not is_seq(entries):
                        continue
                    for ei, entry in enumerate(entries):
                        if not is_map(entry) or patch(entry):
                            continue
                        for field in fields:
                            if not scalar_text(entry.get(field)):
                                missing(entry, join_path(join_path(cpath, key), ei), field)
    return problems


def _go_type(value: Any) -> str:
    """The JSON type kubectl's decoder names for a YAML value of the wrong type."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if is_map(value):
        return "object"
    return "array" if is_seq(value) else type(value).__name__
