"""KubeAI `Model` objects: `url: hf://org/name`, `engine: VLLM`, `args`, `env`, `resourceProfile: name:count`.

KubeAI's operator builds the pod (image from its Helm values, `--model` from the url), so the image, shm and
pod scheduling are not in the file; what the Model says is.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import (
    GpuRequest,
    apply_invocation,
    is_map,
    object_context,
    read_env,
    resolve_gpu_hint,
    scalar_text,
    to_int,
    tokens_from,
)
from vramlint.extract.records import Records
from vramlint.model import Location, Problem, Server
from vramlint.yamlload import join_path, value_location

_VENDOR_PREFIX = (("nvidia-gpu-", "nvidia"), ("amd-gpu-", "amd"), ("google-tpu-", "google-tpu"),
                  ("intel-gaudi-", "intel-gaudi"), ("aws-neuron-", "aws-neuron"))


def extract_kubeai(doc: Any, obj: Any, path: str, records: Records) -> None:
    from vramlint.cmdline import Token, find_vllm_invocation

    spec = obj.get("spec")
    if not is_map(spec):
        return
    engine = scalar_text(spec.get("engine")) or ""
    if engine.upper() != "VLLM":
        return
    file = doc.file
    spath = join_path(path, "spec")
    ctx = object_context(doc, obj, path)
    server = Server(file=file, location=Location(file, 1, 1, yaml_path=spath), source_format="kubernetes",
                    kind="Model", name=ctx.name)
    from vramlint.yamlload import node_location

    server.location = node_location(file, spec, spath) or server.location
    read_env(file, spec, spath, server)
    args = tokens_from(file, spec, "args", spath, doc.lines)
    invocation = find_vllm_invocation([Token("vllm", None), Token("serve", None)], args, "vllm/vllm-openai",
                                      dict(server.env))
    if invocation is None:
        return
    apply_invocation(server, invocation)
    records.problems.extend(Problem(file, server.location.line, server.location.column, m)
                            for m in invocation.problems)
    url = scalar_text(spec.get("url"))
    if url:
        url_loc = value_location(file, spec, "url", join_path(spath, "url"))
        for scheme in ("hf://", "pvc://", "s3://", "gs://", "oss://"):
            if url.startswith(scheme):
                if scheme == "hf://":
                    server.model = url[len(scheme):].strip("/")
                    server.model_location = url_loc
                elif server.model is None:
                    server.model = url
                    server.model_location = url_loc
                    server.notes.append(f"the model is loaded from {url}; which model it is is not known from the file")
                break
    if "replicas" in spec:
        server.replicas = to_int(spec.get("replicas"))
    elif "minReplicas" in spec:
        server.replicas = to_int(spec.get("minReplicas"))
    profile = scalar_text(spec.get("resourceProfile"))
    if profile:
        name, _, count = profile.partition(":")
        vendor = "nvidia"
        hint = name
        for prefix, v in _VENDOR_PREFIX:
            if name.startswith(prefix):
                vendor, hint = v, name[len(prefix):]
                break
        resolved = resolve_gpu_hint(hint) or resolve_gpu_hint(name) if vendor == "nvidia" else None
        server.gpu = GpuRequest(type=resolved or name, count=to_int(count) if count else 1,
                                evidence=f"KubeAI resourceProfile: {profile}",
                                location=value_location(file, spec, "resourceProfile", join_path(spath, "resourceProfile")),
                                vendor=vendor)
    server.ignore_rules = dict(ctx.ignore_rules)
    server.notes.append("KubeAI Model: the image (and so the vLLM version) comes from KubeAI's own configuration")
    records.servers.append(server)
