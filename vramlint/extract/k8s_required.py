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


_LAST_TEMPLATED: list[Any] = [None, False, False]  # (the lines of the file last asked about, the answers)


def _templated(lines: list[str]) -> bool:
    """Template syntax anywhere in the file. Every document of a file shares its list of lines: the answer is
    kept for the last file, so a stream of thousands of documents is read once, not once per document."""
    if _LAST_TEMPLATED[0] is not lines:
        _LAST_TEMPLATED[:] = [lines, any("{{" in line or has_template_marker(line) for line in lines),
                              any("%{" in line for line in lines)]
    return _LAST_TEMPLATED[1]


def _terraform_template(doc: Any) -> bool:
    """A Terraform template (a .tftpl file, or `%{ }` directives): Terraform renders it, and its kubernetes_manifest
    resource converts each value to the type the object's schema gives (a number to a string), so a value of
    another type is not a refusal there. Required fields are still required."""
    _templated(doc.lines)
    return _LAST_TEMPLATED[2] or str(doc.file).endswith(".tftpl")


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

    def wrong_type(parent: Any, key: Any, parent_path: str, want: str, refusal: str = "") -> None:
        value = parent[key]
        node_path = join_path(parent_path, key)
        loc = value_location(doc.file, parent, key, node_path) or key_location(doc.file, parent, key, node_path) \
            or Location(doc.file, 1, 1)
        field_path = node_path[len(path) + 1:] if path and node_path.startswith(path + ".") else node_path
        got = _go_type(value)
        refusal = refusal or f"cannot unmarshal {got} into the field"
        problems.append(Problem(doc.file, loc.line, loc.column,
                                f"the API server rejects this object: {label}: {field_path} must be {want}, not "
                                f"{got} (kubectl: {refusal}). Nothing in it is deployed until it is written as one"))

    pods = _pod_specs(obj, kind, path, wrong_type)
    at_fixed_paths = {id(pod) for pod, _ in pods}
    pods += [(hit.node, hit.path) for hit in find_podspecs(obj, path) if id(hit.node) not in at_fixed_paths]
    scalars_converted = _terraform_template(doc)
    for pod, pod_path in pods:
        _check_shape(pod, pod_path, _POD_SPEC, wrong_type, scalars_converted)
        volumes = pod.get("volumes")
        if is_seq(volumes):
            for i, volume in enumerate(volumes):
                if is_map(volume) and not patch(volume) and _absent(volume.get("name")):
                    missing(volume, join_path(join_path(pod_path, "volumes"), i), "name")
        for list_key in _CONTAINER_LISTS:
            containers = pod.get(list_key)
            if not is_seq(containers):
                continue
            for ci, container in enumerate(containers):
                if not is_map(container) or patch(container):
                    continue
                cpath = join_path(join_path(pod_path, list_key), ci)
                if _absent(container.get("name")):
                    missing(container, cpath, "name")
                for key, fields in _REQUIRED.items():
                    entries = container.get(key)
                    if not is_seq(entries):
                        continue
                    for ei, entry in enumerate(entries):
                        if not is_map(entry) or patch(entry):
                            continue
                        for field in fields:
                            if _absent(entry.get(field)):
                                missing(entry, join_path(join_path(cpath, key), ei), field)
    return problems


# Where each checked kind holds its pod spec (k8s.io/api: PodSpec, PodTemplateSpec.spec, JobTemplateSpec; the
# LeaderWorkerSet CRD's leaderTemplate and workerTemplate).
_TEMPLATE_SPEC = ("spec", "template", "spec")
_POD_SPEC_AT = {
    "Pod": (("spec",),),
    "PodTemplate": (("template", "spec"),),
    "CronJob": (("spec", "jobTemplate", "spec", "template", "spec"),),
    "LeaderWorkerSet": (("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"),
                        ("spec", "leaderWorkerTemplate", "workerTemplate", "spec")),
}


def _pod_specs(obj: Any, kind: str, path: str, wrong_type: Any) -> list[tuple[Any, str]]:
    """The pod specs at the places the API server decodes them for ``kind``; an object on the way given as
    another type is refused there (said through ``wrong_type``), and nothing under it is checked."""
    found = []
    for keys in _POD_SPEC_AT.get(kind, (_TEMPLATE_SPEC,)):
        node, node_path = obj, path
        for key in keys:
            child = node.get(key)
            if child is None:
                break
            if not is_map(child):
                wrong_type(node, key, node_path, "an object")
                break
            node, node_path = child, join_path(node_path, key)
        else:
            found.append((node, node_path))
    return found


# The JSON types the API server decodes a pod spec's fields into (k8s.io/api/core/v1 types.go). A value of another
# type is refused whole: `cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers of
# type []v1.Container`, and nothing is deployed. A null is decoded as the zero value (not refused), and so is not
# judged; a date is text in the API server's YAML reading, and is not judged either.
# field -> (what it must be, said as; the shape of what it holds)
_STRING = "string"
_QUANTITY = "quantity"
_RESOURCE_LIST = {"*": ("a quantity (a string or a number)", _QUANTITY)}
_CONTAINER: dict[str, Any] = {
    "name": ("a string", _STRING),
    "image": ("a string", _STRING),
    "command": ("a list of strings", [("a string", _STRING)]),
    "args": ("a list of strings", [("a string", _STRING)]),
    "env": ("a list of variables", [("a variable (an object)", {"name": ("a string", _STRING),
                                                                 "value": ("a string", _STRING)})]),
    "envFrom": ("a list of sources", [("a source (an object)", {})]),
    "ports": ("a list of ports", [("a port (an object)", {"containerPort": ("an integer", int)})]),
    "volumeMounts": ("a list of volume mounts", [("a volume mount (an object)", {
        "name": ("a string", _STRING), "mountPath": ("a string", _STRING)})]),
    "resources": ("an object", {"limits": ("an object", _RESOURCE_LIST), "requests": ("an object", _RESOURCE_LIST)}),
}
_POD_SPEC: dict[str, Any] = {
    "containers": ("a list of containers", [("a container (an object)", _CONTAINER)]),
    "initContainers": ("a list of containers", [("a container (an object)", _CONTAINER)]),
    "volumes": ("a list of volumes", [("a volume (an object)", {"name": ("a string", _STRING)})]),
    "nodeSelector": ("an object", {"*": ("a string", _STRING)}),
}
# resource.Quantity's own decoder: anything but a string or a number fails its parse
_QUANTITY_REFUSAL = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _check_shape(node: Any, node_path: str, fields: dict[str, Any], wrong_type: Any,
                 scalars_converted: bool = False) -> None:
    """Each field of the mapping ``node`` against ``fields`` (see _POD_SPEC), depth first; a strategic-merge
    patch entry (`$patch`, `$setElementOrder`) is completed elsewhere and is not judged. ``scalars_converted``:
    a scalar of another type is converted (Terraform's), so only an object or a list where the other is wanted,
    or either where a scalar is, is refused."""
    if any(isinstance(k, str) and k.startswith("$") for k in node):
        return
    for key, value in node.items():
        spec = fields.get(key) if isinstance(key, str) else None
        if spec is None:
            spec = fields.get("*")
        if spec is None or value is None:
            continue
        want, shape = spec
        if not _fits(value, shape, scalars_converted):
            wrong_type(node, key, node_path, want, _QUANTITY_REFUSAL if shape is _QUANTITY else "")
        elif is_map(value):
            _check_shape(value, join_path(node_path, key), shape, wrong_type, scalars_converted)
        elif is_seq(value):
            item_want, item_shape = shape[0]
            item_path = join_path(node_path, key)
            for i, item in enumerate(value):
                if item is None:
                    continue
                if not _fits(item, item_shape, scalars_converted):
                    wrong_type(value, i, item_path, item_want)
                elif is_map(item):
                    _check_shape(item, join_path(item_path, i), item_shape, wrong_type, scalars_converted)


def _fits(value: Any, shape: Any, scalars_converted: bool) -> bool:
    if isinstance(shape, dict):
        return is_map(value)
    if isinstance(shape, list):
        return is_seq(value)
    if scalars_converted:
        return not isinstance(value, (dict, list))
    if shape is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if shape is _QUANTITY:
        return isinstance(value, (str, int, float)) and not isinstance(value, bool)
    return not isinstance(value, (bool, int, float, dict, list))  # a string (or a date, text to the API server)


def _absent(value: Any) -> bool:
    """A required field not written, or written empty (a value of the wrong type is refused as that instead)."""
    return value is None or value == ""


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
