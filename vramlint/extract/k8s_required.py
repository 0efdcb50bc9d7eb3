"""Fields the Kubernetes API server requires in a pod template, checked where their absence is certain.

The API server rejects a workload whose pod template lacks a required field (the OpenAPI schema of
io.k8s.api.core.v1: `Container.name`, `VolumeMount.name` and `VolumeMount.mountPath`, `Volume.name`,
`EnvVar.name`), with `<Kind> "<name>" is invalid: <field>: Required value`; `kubectl apply` fails and nothing
is deployed. Checked for the built-in workload kinds (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet,
ReplicationController, Job, CronJob, PodTemplate) and LeaderWorkerSet, whose CRD schema embeds the same
PodTemplateSpec. Never for a document written with template expressions (a Helm template may add the field
under a condition) or for a strategic-merge patch (`$patch`), where the object is completed elsewhere.

Also checked there: a resource that cannot be overcommitted (an extended resource such as `nvidia.com/gpu`, any name
with a domain outside `kubernetes.io/`, and `hugepages-*`) requested with another quantity than its limit, or
requested with no limit (pkg/apis/core/validation ValidateResourceRequirements, helper.IsOvercommitAllowed).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from vramlint.extract.podspec import find_podspecs, is_map, is_seq, scalar_text
from vramlint.model import Location, Problem
from vramlint.textsafe import shortened
from vramlint.yamlload import (
    TEMPLATE_OPEN,
    has_deploy_time_marker,
    has_template_marker,
    join_path,
    key_location,
    lines_text,
    node_location,
    value_location,
)

_BUILT_IN = frozenset({"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController",
                       "Job", "CronJob", "PodTemplate"})
_GROUPS = {"Deployment": "apps", "StatefulSet": "apps", "DaemonSet": "apps", "ReplicaSet": "apps",
           "Job": "batch", "CronJob": "batch", "LeaderWorkerSet": "leaderworkerset.x-k8s.io"}


# Characters that are in no RFC 1123 subdomain and in no template or placeholder syntax: C0 and C1 controls,
# whitespace, zero-width and bidirectional formatting, line and paragraph separators, the byte-order mark; and the
# file's own U+2983/U+2984 (textsafe.without_own_marks: read as U+E983/U+E984, never vramlint's unknown mark)
_NOT_IN_A_NAME = re.compile("[\x00-\x20\x7f-\xa0\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff"
                            "\ue983\ue984]")


def _held(name: str) -> str:
    if re.search("[\ue983\ue984]", name) and not re.search("[^\ue983\ue984]", "".join(_NOT_IN_A_NAME.findall(name))):
        return "the bracket U+2983 or U+2984"
    return "control, invisible or space characters"


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
        text = lines_text(lines)  # (none of these holds a line break: a search of the text is a search of its lines)
        _LAST_TEMPLATED[:] = [lines, "{{" in text or TEMPLATE_OPEN in text, "%{" in text]
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
    if kind == "Secret" and api == "v1" and not _templated(doc.lines):
        return _secret_data_problems(doc, obj, path)
    if not _checked_kind(api, kind) or _templated(doc.lines):
        return []
    meta = obj.get("metadata")
    name = scalar_text(meta.get("name")) if is_map(meta) else None
    group = _GROUPS.get(kind)
    label = f'{kind}.{group} "{name or ""}"' if group else f'{kind} "{name or ""}"'
    problems: list[Problem] = []
    if name and _NOT_IN_A_NAME.search(name):
        # ValidateObjectMeta (NameIsDNSSubdomain for these kinds and a CRD's objects): a character no template or
        # placeholder writes, and no RFC 1123 name holds, is refused whatever the rest of the name is
        npath = join_path(join_path(path, "metadata"), "name")
        loc = value_location(doc.file, meta, "name", npath) or Location(doc.file, 1, 1)
        shown = name.encode("unicode_escape").decode("ascii")
        shown_label = label.replace(name, shown)
        problems.append(Problem(doc.file, loc.line, loc.column, f"the API server rejects this object: {shown_label} is "
                                f'invalid: metadata.name: Invalid value: "{shown}": a lowercase RFC 1123 subdomain must '
                                "consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                                f"with an alphanumeric character (this one holds {_held(name)}). Nothing in it is "
                                "deployed until it is renamed"))

    def shown(parts: tuple[Any, ...]) -> str:
        out = parts[0]  # the path of the pod spec's object, or of a pod spec found by its shape
        for part in parts[1:]:
            out = join_path(out, part)
        return out

    def missing(node: Any, parts: tuple[Any, ...], field: str) -> None:
        node_path = shown(parts)
        loc = node_location(doc.file, node, node_path) or Location(doc.file, 1, 1)
        problems.append(Problem(doc.file, loc.line, loc.column,
                                f"the API server rejects this object: {label} is invalid: "
                                f"{join_path(_relative(node_path, path), field)}: Required value. Nothing in it is "
                                "deployed until the field is written"))

    def wrong_type(parent: Any, key: Any, parts: tuple[Any, ...], want: str, refusal: str = "") -> None:
        value = parent[key]
        node_path = shown(parts + (key,))
        loc = value_location(doc.file, parent, key, node_path) or key_location(doc.file, parent, key, node_path) \
            or Location(doc.file, 1, 1)
        got = _go_type(value)
        refusal = refusal or f"cannot unmarshal {got} into the field"
        problems.append(Problem(doc.file, loc.line, loc.column,
                                f"the API server rejects this object: {label}: {_relative(node_path, path)} must be "
                                f"{want}, not {got} (kubectl: {refusal}). Nothing in it is deployed until it is "
                                "written as one"))

    pods = _pod_specs(obj, kind, path, wrong_type)
    at_fixed_paths = {id(pod) for pod, _ in pods}
    pods += [(hit.node, (hit.path,)) for hit in find_podspecs(obj, path) if id(hit.node) not in at_fixed_paths]
    scalars_converted = _terraform_template(doc)
    refused_quantity: list[Problem] = []
    for pod, parts in pods:
        _check_shape(pod, parts, _POD_SPEC, wrong_type, missing, scalars_converted)
        # one walk checks the shapes; the quantities of each container's requests and limits are compared here
        if _patch(pod):
            continue
        for list_key in ("containers", "initContainers"):
            containers = pod.get(list_key)
            if not is_seq(containers):
                continue
            for ci, container in enumerate(containers):
                if is_map(container) and not _patch(container):
                    cpath = join_path(join_path(shown(parts), list_key), ci)
                    if not refused_quantity:
                        refused_quantity = _quantity_form_problems(doc, container, cpath, label)
                        problems.extend(refused_quantity)
                    problems.extend(_overcommit_problems(doc, container, cpath, path, label, kind == "Pod"))
                    problems.extend(_env_from_problems(doc, container, cpath, path, label))
    return problems


def _env_from_problems(doc: Any, container: Any, cpath: str, path: str, label: str) -> list[Problem]:
    """An `envFrom` entry must name exactly one source (pkg/apis/core/validation ValidateEnvFrom): with neither
    `configMapRef` nor `secretRef` (a null one: `- secretRef:` with its `name` one level too far out) the API
    server refuses the object ("must specify one of: `configMapRef` or `secretRef`"), with both of them too."""
    sources = container.get("envFrom")
    if not is_seq(sources):
        return []
    problems: list[Problem] = []
    epath = join_path(cpath, "envFrom")
    for i, item in enumerate(sources):
        if not is_map(item) or _patch(item):
            continue
        given = [k for k in ("configMapRef", "secretRef") if item.get(k) is not None]
        if len(given) == 1:
            continue
        loc = node_location(doc.file, item, join_path(epath, i)) or Location(doc.file, 1, 1)
        if given:
            why = "may not have more than one field specified at a time"
        else:
            why = "must specify one of: `configMapRef` or `secretRef`"
        stray = [str(k) for k in item if k not in ("configMapRef", "secretRef", "prefix")]
        hint = (f" ({', '.join(stray)} is no field of an envFrom source: indented under the ref it belongs to, "
                "it names the source)") if stray and not given else ""
        problems.append(Problem(doc.file, loc.line, loc.column,
                                f"the API server rejects this object: {label} is invalid: "
                                f"{_relative(epath, path)}: Invalid value: \"\": {why}{hint}. Nothing in it is "
                                "deployed until the entry names one source"))
    return problems


_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")
_SUBSTITUTED = re.compile(r"\$(?:\{|[A-Za-z_])")


def _secret_data_problems(doc: Any, obj: Any, path: str) -> list[Problem]:
    """A Secret's `data` values are decoded as base64 by the API server (k8s.io/api/core/v1 Secret.Data is
    map[string][]byte, which encoding/json reads with base64.StdEncoding: padded, line breaks skipped): a value
    that is not base64 (`$(echo -n ... | base64)`, a plain token; `stringData` takes those) makes the object
    undecodable, and kubectl apply fails ("illegal base64 data"). The first such value is said."""
    data = obj.get("data")
    if not is_map(data):
        return []
    meta = obj.get("metadata")
    name = scalar_text(meta.get("name")) if is_map(meta) else None
    dpath = join_path(path, "data")
    for key, value in data.items():
        if value is None:
            continue
        text = value if isinstance(value, str) else None
        if text is not None and (_SUBSTITUTED.search(text) or re.fullmatch(r"\s*<[^<>]*>\s*", text)
                                 or has_template_marker(text)):
            # a variable envsubst fills (`$NAME`, `${NAME}`; it leaves `$(...)` as written), a placeholder to
            # replace, or what vramlint's own template or Terraform evaluation left unknown: known when applied
            continue
        if text is not None:
            compact = text.replace("\r", "").replace("\n", "")
            if len(compact) % 4 == 0 and _BASE64.match(compact):
                continue
        loc = value_location(doc.file, data, key, join_path(dpath, str(key))) or Location(doc.file, 1, 1)
        # the value is a secret: never quoted, only what makes it not base64
        why = (f"{len(compact)} characters, not a multiple of 4" if text is not None and len(compact) % 4 else
               "it holds characters outside the base64 alphabet" if text is not None else
               f"a YAML {type(value).__name__}, not a string")
        return [Problem(doc.file, loc.line, loc.column,
                        f'the API server rejects this object: Secret "{name or ""}": data.{key} is not base64 '
                        f"({why}; the value is not shown): a Secret's data values are base64-encoded bytes "
                        "(illegal base64 data); write the plain value under stringData instead, or encode it. "
                        "Nothing in it is created until it is")]
    return []


def _quantity_form_problems(doc: Any, container: Any, cpath: str, label: str) -> list[Problem]:
    """The API server's refusal of a requests or limits quantity written in no form ParseQuantity reads (`2x`,
    `１`, `0x10`, a million digits and a letter): the object cannot be decoded, so the first one is said, once
    per object, on its line. Numbers (YAML ints and floats) and values holding a template or a deploy-time
    marker (Zarf's `###ZARF_VAR_X###`) are not judged."""
    resources = container.get("resources")
    if not is_map(resources):
        return []
    for section in ("limits", "requests"):
        block = resources.get(section)
        if not is_map(block):
            continue
        for name, value in block.items():
            if not isinstance(value, str) or TEMPLATE_OPEN in value or "{{" in value or "$" in value \
                    or has_deploy_time_marker(value):
                continue
            if _QUANTITY_FORM.fullmatch(value.strip()):  # (Quantity.UnmarshalJSON trims blanks first)
                continue
            qpath = join_path(join_path(join_path(cpath, "resources"), section), name)
            loc = value_location(doc.file, block, name, qpath) or Location(doc.file, 1, 1)
            shown = shortened(value, 40)
            return [Problem(doc.file, loc.line, loc.column, (
                f"the API server rejects this object: {label} cannot be decoded: {cpath}.resources.{section}"
                f"[{name}] is {shown!r}, and quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'. Nothing in it is deployed until it is written as "
                "a quantity (`1`, `500m`, `16Gi`)"))]
    return []


def _overcommit_problems(doc: Any, container: Any, cpath: str, path: str, label: str, bare_pod: bool
                         ) -> list[Problem]:
    """The API server's refusal of a container that requests a resource it may not overcommit with another
    quantity than its limit, or with no limit; said on the request's line. A limit with no request is allowed
    (the request defaults to the limit); quantities vramlint cannot read (a variable) are not judged."""
    resources = container.get("resources")
    if not is_map(resources) or _patch(resources):
        return []
    requests, limits = resources.get("requests"), resources.get("limits")
    if not is_map(requests) or (limits is not None and not is_map(limits)):
        return []  # a value of the wrong type is refused as that
    field_path = cpath[len(path) + 1:] if path and cpath.startswith(path + ".") else cpath
    problems = []
    for name, requested in requests.items():
        if not isinstance(name, str) or _overcommit_allowed(name):
            continue
        request = _quantity(requested)
        if request is None:
            continue
        rpath = join_path(join_path(join_path(cpath, "resources"), "requests"), name)
        loc = value_location(doc.file, requests, name, rpath) or Location(doc.file, 1, 1)
        where = f"{label} is invalid: {field_path}.resources"
        if is_map(limits) and name in limits:
            limit = _quantity(limits[name])
            if limit is None or limit == request:
                continue
            problems.append(Problem(doc.file, loc.line, loc.column, (
                f"the API server rejects this object: {where}.requests[{name}]: Invalid value: "
                f"\"{scalar_text(requested)}\": must be equal to {name} limit of {scalar_text(limits[name])} "
                f"({name} cannot be overcommitted). Nothing in it is deployed until requests and limits of {name} "
                "are written equal (or only the limit: the request defaults to it)")))
        else:
            # A bare Pod goes through the LimitRanger admission plugin before it is validated: a LimitRange of its
            # namespace may give it a default limit. A pod template is validated as written.
            unless = " unless a LimitRange of its namespace sets a default limit" if bare_pod else ""
            problems.append(Problem(doc.file, loc.line, loc.column, (
                f"the API server rejects this object{unless}: {where}.limits: Required value: Limit must be set "
                f"for non overcommitable resources ({name} is requested, with no limit). Nothing in it is "
                f"deployed until limits.{name} is written (equal to the request)"), "warning" if bare_pod else "error"))
    return problems


def _overcommit_allowed(name: str) -> bool:
    """k8s.io/kubernetes pkg/apis/core/helper.IsOvercommitAllowed: native resources (no domain, or in
    kubernetes.io/) except huge pages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


# The form resource.ParseQuantity reads (k8s.io/apimachinery pkg/api/resource/quantity.go): a signed decimal
# number, then a binary-SI, decimal-SI or exponent suffix. Written without `[0-9]+\.?[0-9]*`'s two ways to read
# a run of digits, so a long run that does not match fails in linear time.
_QUANTITY_FORM = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE]?)")
_QUANTITY_SUFFIX = {"": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3,
                    "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20,
                    "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def _quantity(value: Any) -> Fraction | None:
    """A resource.Quantity's exact value (`"2"`, `2`, `1000m`, `1Gi`, `1e3`); None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value).strip()
    if len(text) > 64:  # no quantity a resource list holds is written that long; its exact value is not needed
        return None
    m = _QUANTITY_FORM.fullmatch(text)
    if m is None:
        return None
    number, suffix = Fraction(m.group(1)), m.group(2)
    if suffix[:1] in ("e", "E"):
        exponent = int(suffix[1:])
        return number * Fraction(10) ** exponent if abs(exponent) <= 64 else None
    return number * _QUANTITY_SUFFIX[suffix]


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


def _pod_specs(obj: Any, kind: str, path: str, wrong_type: Any) -> list[tuple[Any, tuple[Any, ...]]]:
    """The pod specs at the places the API server decodes them for ``kind``, with their path as parts (``path``,
    then keys); an object on the way given as another type is refused there (said through ``wrong_type``), and
    nothing under it is checked."""
    found = []
    for keys in _POD_SPEC_AT.get(kind, (_TEMPLATE_SPEC,)):
        node = obj
        for depth, key in enumerate(keys):
            child = node.get(key)
            if child is None:
                break
            if not is_map(child):
                wrong_type(node, key, (path, *keys[:depth]), "an object")
                break
            node = child
        else:
            found.append((node, (path, *keys)))
    return found


def _relative(node_path: str, base: str) -> str:
    return node_path[len(base) + 1:] if base and node_path.startswith(base + ".") else node_path


# The JSON types the API server decodes a pod spec's fields into (k8s.io/api/core/v1 types.go). A value of another
# type is refused whole: `cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers of
# type []v1.Container`, and nothing is deployed. A null is decoded as the zero value (not refused), and so is not
# judged; a date is text in the API server's YAML reading, and is not judged either.
# field -> (what it must be, said as; the shape of what it holds)
_STRING = "string"
_QUANTITY = "quantity"
_REQUIRED_FIELDS = "!required"  # in an object's shape: the fields it must have (`Required value` when absent)
_RESOURCE_LIST = {"*": ("a quantity (a string or a number)", _QUANTITY)}
_CONTAINER: dict[str, Any] = {
    _REQUIRED_FIELDS: ("name",),
    "name": ("a string", _STRING),
    "image": ("a string", _STRING),
    "command": ("a list of strings", [("a string", _STRING)]),
    "args": ("a list of strings", [("a string", _STRING)]),
    "env": ("a list of variables", [("a variable (an object)", {_REQUIRED_FIELDS: ("name",),
                                                                 "name": ("a string", _STRING),
                                                                 "value": ("a string", _STRING)})]),
    "envFrom": ("a list of sources", [("a source (an object)", {})]),
    "ports": ("a list of ports", [("a port (an object)", {"containerPort": ("an integer", int)})]),
    "volumeMounts": ("a list of volume mounts", [("a volume mount (an object)", {
        _REQUIRED_FIELDS: ("name", "mountPath"), "name": ("a string", _STRING), "mountPath": ("a string", _STRING)})]),
    "resources": ("an object", {"limits": ("an object", _RESOURCE_LIST), "requests": ("an object", _RESOURCE_LIST)}),
}
_POD_SPEC: dict[str, Any] = {
    "containers": ("a list of containers", [("a container (an object)", _CONTAINER)]),
    "initContainers": ("a list of containers", [("a container (an object)", _CONTAINER)]),
    "volumes": ("a list of volumes", [("a volume (an object)", {_REQUIRED_FIELDS: ("name",),
                                                                "name": ("a string", _STRING)})]),
    "nodeSelector": ("an object", {"*": ("a string", _STRING)}),
}
# resource.Quantity's own decoder: anything but a string or a number fails its parse
_QUANTITY_REFUSAL = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _check_shape(node: Any, parts: tuple[Any, ...], fields: dict[str, Any], wrong_type: Any, missing: Any,
                 scalars_converted: bool = False) -> None:
    """Each field of the mapping ``node`` (at ``parts``) against ``fields`` (see _POD_SPEC), depth first, and the
    fields it requires; a strategic-merge patch entry (`$patch`, `$setElementOrder`) is completed elsewhere and is
    not judged. ``scalars_converted``: a scalar of another type is converted (Terraform's), so only an object or
    a list where the other is wanted, or either where a scalar is, is refused."""
    if _patch(node):
        return
    for field in fields.get(_REQUIRED_FIELDS, ()):
        if _absent(node.get(field)):
            missing(node, parts, field)
    get = fields.get  # (its keys are text: a key of another type finds nothing, as `isinstance(key, str)` said)
    star = get("*")
    for key, value in node.items():
        if value is None:
            continue
        spec = get(key, star)
        if spec is None:
            continue
        want, shape = spec
        shape_type = type(shape)
        if shape_type is dict:
            if not isinstance(value, dict):
                wrong_type(node, key, parts, want)
            elif value:
                _check_shape(value, (*parts, key), shape, wrong_type, missing, scalars_converted)
        elif shape_type is list:
            if not isinstance(value, list):
                wrong_type(node, key, parts, want)
            else:
                item_want, item_shape = shape[0]
                walk = type(item_shape) is dict
                for i, item in enumerate(value):
                    if item is None:
                        continue
                    if not _fits(item, item_shape, scalars_converted):
                        wrong_type(value, i, (*parts, key), item_want)
                    elif walk and (item or _REQUIRED_FIELDS in item_shape):
                        _check_shape(item, (*parts, key, i), item_shape, wrong_type, missing, scalars_converted)
        elif not _fits(value, shape, scalars_converted):
            wrong_type(node, key, parts, want, _QUANTITY_REFUSAL if shape is _QUANTITY else "")


def _fits(value: Any, shape: Any, scalars_converted: bool) -> bool:
    if type(shape) is dict:
        return isinstance(value, dict)
    if type(shape) is list:
        return isinstance(value, list)
    if scalars_converted:
        return not isinstance(value, (dict, list))
    if shape is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if shape is _QUANTITY:
        return isinstance(value, (str, int, float)) and not isinstance(value, bool)
    return not isinstance(value, (bool, int, float, dict, list))  # a string (or a date, text to the API server)


def _patch(node: Any) -> bool:
    """A strategic-merge patch entry (`$patch`, `$setElementOrder`): completed elsewhere, not judged."""
    for k in node:
        if isinstance(k, str) and k.startswith("$"):
            return True
    return False


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
