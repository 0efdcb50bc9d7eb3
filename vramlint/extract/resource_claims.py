"""The accelerators a pod claims through Dynamic Resource Allocation (resource.k8s.io) instead of a device
plugin's resource name.

A container's `resources.claims` entry names one of the pod's `resourceClaims`, which names a ResourceClaimTemplate
(`resourceClaimTemplateName`; Kubernetes makes one ResourceClaim per pod from it) or a ResourceClaim
(`resourceClaimName`); `source:` wraps either in the v1alpha2 API. The claim's `spec.devices.requests` (in a
template, `spec.spec.devices.requests`) each say, in resource.k8s.io/v1 under `exactly:` and in v1beta1 on the
request itself: the DeviceClass (`deviceClassName`), how many devices (`allocationMode: ExactCount`, the default,
with `count`, default 1; `All`: every matching device of the node, a number the file does not say) and CEL
`selectors`. A container entry's `request:` narrows it to one request. `firstAvailable` lists alternatives the
scheduler tries in order: the count and class are known only when every alternative says the same.

The DeviceClass names the vendor's DRA driver: NVIDIA's k8s-dra-driver-gpu (`gpu.nvidia.com`, `mig.nvidia.com`),
AMD's (`gpu.amd.com`), Intel's (`gpu.intel.com`, `gaudi.intel.com`), Google's TPU driver (`tpu.google.com`) and
the AWS Neuron DRA driver (`neuron.aws.com`: whole Neuron devices); other classes (network devices, NVIDIA's
compute-domain channels) are not accelerators. A selector comparing the attribute that names the chip
(`== 'NVIDIA L4'`, `in ['...', '...']`) names the accelerator: the NVIDIA driver's `productName`, Intel Gaudi's
`model` (`'Gaudi3'`), the Neuron driver's `instanceType` (`'trn2.48xlarge'`: Trainium2).
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Any

from vramlint.extract.podspec import ClaimUse, is_map, is_seq, resolve_gpu_hint, scalar_text, to_int
from vramlint.lean_dataclass import dataclass
from vramlint.model import GpuRequest, Location, Problem, Server
from vramlint.yamlload import join_path, node_location, value_location

RESOURCE_GROUP = "resource.k8s.io/"
CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim")
MAX_CLAIMS = 1000  # claim objects kept per scan: a cluster has a handful
# resource.k8s.io AllocationResultsMaxSize: the devices one claim may be allocated; the scheduler's allocator
# refuses a claim whose requests ask for more ("number of requested devices N exceeds the claim limit of 32")
CLAIM_DEVICES_MAX = 32
INT64_MAX = 2 ** 63 - 1  # `count` is an int64: the API server cannot decode a larger number

# DeviceClass (as each driver installs it) -> vendor
_DEVICE_CLASSES = {
    "gpu.nvidia.com": "nvidia",
    "mig.nvidia.com": "nvidia",
    "gpu.amd.com": "amd",
    "gpu.intel.com": "intel-gpu",
    "gaudi.intel.com": "intel-gaudi",
    "tpu.google.com": "google-tpu",
    "neuron.aws.com": "aws-neuron",
}
# The attribute each driver publishes that names the chip, compared in a CEL selector (`== '...'`, `in [...]`):
# NVIDIA's productName, Intel Gaudi's model ('Gaudi2', 'Gaudi3'), the Neuron driver's instanceType
# ('trn2.48xlarge': the instance type says the chip)
_PRODUCT_ATTRIBUTES = {"nvidia": "productName", "intel-gaudi": "model", "aws-neuron": "instanceType"}
_PRODUCT_EQ = re.compile(r"\.(productName|model|instanceType)\s*==\s*['\"]([^'\"]+)['\"]")
_PRODUCT_IN = re.compile(r"\.(productName|model|instanceType)\s+in\s*\[([^\]]*)\]")
_QUOTED = re.compile(r"['\"]([^'\"]+)['\"]")


@dataclass
class DeviceRequest:
    name: str | None
    device_class: str | None
    count: int | None  # None: every matching device of the node (allocationMode All), or not known
    every_device: bool
    products: list[str]
    location: Location | None
    count_location: Location | None = None
    count_written: Any = None  # the count as written, when it is no count Kubernetes takes


@dataclass
class DeviceClaimRecord:
    kind: str  # ResourceClaimTemplate | ResourceClaim
    name: str
    file: str
    location: Location | None
    requests: list[DeviceRequest] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # what Kubernetes refuses of the claim, on its line


# --- reading ----------------------------------------------------------------------------------------------


def read_claim_object(doc: Any, obj: Any, path: str) -> DeviceClaimRecord | None:
    """A ResourceClaimTemplate or ResourceClaim as plain data; None for anything else."""
    api = scalar_text(obj.get("apiVersion")) or ""
    kind = scalar_text(obj.get("kind")) or ""
    if kind not in CLAIM_KINDS or not api.startswith(RESOURCE_GROUP):
        return None
    meta = obj.get("metadata")
    name = scalar_text(meta.get("name")) if is_map(meta) else None
    spec, spath = obj.get("spec"), join_path(path, "spec")
    if kind == "ResourceClaimTemplate" and is_map(spec):
        spec, spath = spec.get("spec"), join_path(spath, "spec")
    devices = spec.get("devices") if is_map(spec) else None
    requests = devices.get("requests") if is_map(devices) else None
    if not name or not is_seq(requests):
        return None
    file = doc.file
    record = DeviceClaimRecord(kind, name, file, node_location(file, obj, path))
    rpath = join_path(join_path(spath, "devices"), "requests")
    for i, request in enumerate(requests):
        if is_map(request):
            record.requests.append(_request(file, request, join_path(rpath, i)))
    total = 0
    for request in record.requests:
        where = request.count_location or request.location or record.location or Location(file, 1, 1)
        if request.count_written is not None:
            record.problems.append(Problem(file, where.line, where.column, f"the API server rejects this {kind} "
                                           f"{name}: count {str(request.count_written)[:40]} does not fit the int64 "
                                           "field it is decoded into, so the claim is never made and a pod that "
                                           "uses it never starts"))
            continue
        total += request.count or 0
        if request.count and total > CLAIM_DEVICES_MAX:
            record.problems.append(Problem(file, where.line, where.column, f"{kind} {name} asks for {total:,} devices, "
                                           f"more than one claim may be allocated ({CLAIM_DEVICES_MAX}, resource.k8s.io "
                                           "AllocationResultsMaxSize): the scheduler never allocates it, so a pod that "
                                           "uses it stays Pending"))
            break
    return record


def _request(file: str, request: Any, path: str) -> DeviceRequest:
    name = scalar_text(request.get("name"))
    body, bpath = request, path
    if is_map(request.get("exactly")):  # resource.k8s.io/v1
        body, bpath = request["exactly"], join_path(path, "exactly")
    alternatives = request.get("firstAvailable")
    if is_seq(alternatives) and alternatives and not body.get("deviceClassName"):
        read = [_request(file, alt, join_path(join_path(path, "firstAvailable"), i))
                for i, alt in enumerate(alternatives) if is_map(alt)]
        same = read and all((r.device_class, r.count, r.every_device) == (read[0].device_class, read[0].count,
                                                                           read[0].every_device) for r in read)
        first = read[0] if read else None
        return DeviceRequest(name, first.device_class if same else None, first.count if same else None,
                             bool(same and first.every_device), sorted({p for r in read for p in r.products}),
                             first.location if first else node_location(file, request, path))
    device_class = scalar_text(body.get("deviceClassName"))
    every = (scalar_text(body.get("allocationMode")) or "ExactCount") == "All"
    count = None if every else (to_int(body.get("count")) if "count" in body else 1)
    written = None
    if count is not None and count > INT64_MAX or (not every and _long_integer_text(body.get("count"))):
        count, written = None, body.get("count")
    products: list[str] = []
    selectors = body.get("selectors")
    for selector in selectors if is_seq(selectors) else []:
        cel = selector.get("cel") if is_map(selector) else None
        expression = scalar_text(cel.get("expression")) if is_map(cel) else None
        for text in [expression] if expression else []:
            products += [f"{attribute}={value}" for attribute, value in _PRODUCT_EQ.findall(text)]
            for attribute, listed in _PRODUCT_IN.findall(text):
                products += [f"{attribute}={value}" for value in _QUOTED.findall(listed)]
    location = value_location(file, body, "deviceClassName", join_path(bpath, "deviceClassName")) \
        or node_location(file, request, path)
    count_location = value_location(file, body, "count", join_path(bpath, "count")) if "count" in body else None
    return DeviceRequest(name, device_class, count, every, list(dict.fromkeys(products)), location, count_location,
                         written)


def _long_integer_text(value: Any) -> bool:
    """An integer too long to be a number, kept as its text by the YAML reader (over 308 digits)."""
    return isinstance(value, str) and len(value) > 18 and value.lstrip("+-").isdigit()


# --- joining ----------------------------------------------------------------------------------------------


def join_device_claims(servers: list[Server], records: list[DeviceClaimRecord]) -> None:
    """Give each server whose containers use DRA claims the accelerators those claims ask for."""
    by_name: dict[tuple[str, str], list[DeviceClaimRecord]] = {}
    for record in records[:MAX_CLAIMS]:
        by_name.setdefault((record.kind, record.name), []).append(record)
    for server in servers:
        if server.device_claims:
            _apply(server, server.device_claims, by_name)
            server.device_claims = []


def _apply(server: Server, uses: list[ClaimUse], by_name: dict[tuple[str, str], list[DeviceClaimRecord]]) -> None:
    chosen: list[tuple[ClaimUse, DeviceClaimRecord, DeviceRequest, str]] = []
    for use in uses:
        found = by_name.get((use.kind, use.source), [])
        # the claim object in the server's own file first (a chart or a manifest that writes both)
        record = next((r for r in found if r.file == server.file), found[0] if found else None)
        if record is None:
            server.notes.append(f"resources.claims {use.claim}: {use.kind} {use.source} is not among the scanned "
                                "files, so the devices it claims are not known")
            continue
        for request in record.requests:
            vendor = _DEVICE_CLASSES.get(request.device_class or "")
            if (use.request is None or request.name == use.request) and vendor:
                chosen.append((use, record, request, vendor))
    if not chosen:
        return
    vendors = {vendor for *_rest, vendor in chosen}
    if len(vendors) > 1:
        server.notes.append(f"the pod's DRA claims ask for {' and '.join(sorted(vendors))} devices together: the "
                            "accelerator it runs on is not known")
        return
    vendor = vendors.pop()
    every = any(request.every_device or request.count is None for _u, _r, request, _v in chosen)
    count = None if every else sum(request.count or 0 for _u, _r, request, _v in chosen)
    said = []
    for use, record, request, _v in chosen:
        how = "allocationMode All (every such device of the node)" if request.every_device else \
            f"count {request.count}" if request.count is not None else "a count that is not known"
        where = f"{record.location.file}:{record.location.line}" if record.location else record.file
        said.append(f"resources.claims {use.claim} -> {record.kind} {record.name} ({where}): deviceClassName "
                    f"{request.device_class}, {how}")
    attribute = _PRODUCT_ATTRIBUTES.get(vendor)
    products = list(dict.fromkeys(p.split("=", 1)[1] for _u, _r, request, _v in chosen for p in request.products
                                  if p.split("=", 1)[0] == attribute))
    evidence = "; ".join(said)
    gpu = server.gpu
    if gpu is None:
        gpu = server.gpu = GpuRequest(type=None, count=count, evidence=evidence, location=chosen[0][2].location,
                                      vendor=vendor)
    elif gpu.vendor != vendor and (gpu.type is not None or gpu.count is not None):
        server.notes.append(f"{evidence}: {vendor} devices, besides the {gpu.vendor} accelerator the container "
                            "asks for by resource name or node label: the accelerator it runs on is not known")
        return
    else:
        # a node label may have said the model already; a device plugin's count adds to the claimed devices
        if gpu.type is None:
            gpu.vendor = vendor
        gpu.count = count if gpu.count is None else (gpu.count + count if count is not None else None)
        gpu.evidence = f"{gpu.evidence}; {evidence}" if gpu.evidence else evidence
        gpu.location = gpu.location or chosen[0][2].location
    if products and vendor == "nvidia" and gpu.type is None:
        resolved = [r for r in (resolve_gpu_hint(p) for p in products) if r]
        if len(resolved) == len(products) and len(set(resolved)) == 1:
            gpu.type = resolved[0]
        elif len(resolved) == len(products):
            gpu.fleet = list(dict.fromkeys(resolved))  # the pods may land on any of these
        gpu.evidence += f" (selector productName: {', '.join(products)})"
    elif products and gpu.type is None and gpu.vendor == vendor:
        chips = [_chip(vendor, p) for p in products]
        if None not in chips and len(set(chips)) == 1:
            gpu.type = chips[0]
        gpu.evidence += f" (selector {attribute}: {', '.join(products)})"


def _chip(vendor: str, value: str) -> str | None:
    """The chip a Gaudi model or a Neuron instance type names: 'Gaudi2' as written, trn2.48xlarge -> Trainium2."""
    if vendor == "aws-neuron":
        from vramlint.gpus import neuron_instance

        return neuron_instance(value)
    return value.strip() or None


__all__ = ["CLAIM_KINDS", "DeviceClaimRecord", "join_device_claims", "read_claim_object"]
