"""kthena `ModelBooster` (workload.serving.volcano.sh): a model and a vLLM backend, turned into pods by kthena.

`spec.backend` (`spec.backends[]` in early releases) names the engine (`type: vLLM` or `vLLMDisaggregated`;
SGLang and MindIE backends are not vLLM), the model (`modelURI`: `hf://org/name`, `s3://...`, `pvc://...`),
`minReplicas`, and `workers[]` (`type: server`, or `prefill` / `decode` when disaggregated; `image`,
`replicas`, `pods`, `resources`, `config`). kthena's model-booster controller
(pkg/model-booster-controller/convert/model_serving.go, `buildCommands`) downloads the model into its cache
and starts `python3 -m vllm.entrypoints.openai.api_server --model <cached copy>`, then every `config` key as
`--key value`, sorted by key, underscores written as dashes, an empty string as the bare flag
(utils `ConvertEngineArgsFromJson`). A worker with `pods` > 1 runs vLLM over a Ray cluster of that many pods
(`--distributed_executor_backend ray`); /dev/shm is a memory-backed volume.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import (
    apply_invocation,
    gpu_from_resources,
    is_map,
    is_seq,
    object_context,
    read_env,
    scalar_text,
    to_int,
)
from vramlint.extract.records import Records
from vramlint.model import Location, Problem, Server
from vramlint.yamlload import has_template_marker, join_path, key_location, node_location, value_location

_VLLM_TYPES = {"vllm": ("server",), "vllmdisaggregated": ("prefill", "decode")}


def _template_default(doc: Any, loc: Location | None) -> str | None:
    from vramlint.helm.templated import template_default

    return template_default(doc.lines, loc.line if loc else None, loc.column if loc else None)


def _templated(doc: Any, value: Any, loc: Location | None) -> bool:
    """A value written as a template expression: replaced by a marker, or (in a file that is valid YAML as it
    stands) `{{ .Values.x }}` read by YAML as a nested flow mapping."""
    if isinstance(value, str):
        return has_template_marker(value) or "{{" in value
    if isinstance(value, dict) and loc is not None and doc.lines and 0 < loc.line <= len(doc.lines):
        return doc.lines[loc.line - 1][loc.column - 1:].lstrip().startswith("{{")
    return False


def _written(doc: Any, node: Any, key: str, path: str) -> tuple[str | None, Location | None, str | None]:
    """(value, where, the template's literal default when the value is a template expression)."""
    loc = value_location(doc.file, node, key, join_path(path, key))
    raw = node.get(key)
    if _templated(doc, raw, loc):
        return None, loc, _template_default(doc, loc)
    return scalar_text(raw), loc, None


def _config_tokens(doc: Any, config: Any, path: str) -> list[Any]:
    from vramlint.cmdline import Token

    out = []
    for key in sorted(config, key=str):
        kpath = join_path(path, key)
        out.append(Token("--" + str(key).replace("_", "-"), key_location(doc.file, config, key, kpath)))
        value = config[key]
        value_loc = value_location(doc.file, config, key, kpath)
        if _templated(doc, value, value_loc):
            out.append(Token(None, value_loc))
            continue
        if isinstance(value, bool):
            text: str | None = "true" if value else "false"
        elif isinstance(value, (dict, list)):
            import json

            text = json.dumps(value)
        else:
            text = scalar_text(value)
        if text == "":
            continue  # an empty string is the bare switch
        out.append(Token(text, value_loc))
    return out


def extract_model_booster(doc: Any, obj: Any, path: str, records: Records) -> None:
    spec = obj.get("spec")
    if not is_map(spec):
        return
    spath = join_path(path, "spec")
    if is_map(spec.get("backend")):
        backends = [(spec["backend"], join_path(spath, "backend"))]
    elif is_seq(spec.get("backends")):
        backends = [(b, join_path(join_path(spath, "backends"), i)) for i, b in enumerate(spec["backends"]) if is_map(b)]
    else:
        return
    ctx = object_context(doc, obj, path)
    for backend, bpath in backends:
        _backend(doc, ctx, backend, bpath, records)


def _backend(doc: Any, ctx: Any, backend: Any, bpath: str, records: Records) -> None:
    file = doc.file
    btype, type_loc, type_default = _written(doc, backend, "type", bpath)
    notes = []
    if btype is None and type_default is not None and type_default.lower() in _VLLM_TYPES:
        btype = type_default
        notes.append(f"the backend type is a template expression whose default is {type_default}; read as a vLLM "
                     "backend (pass --values or lint the chart to check it)")
    elif btype is None and "type" in backend:
        loc = type_loc or Location(file, 1, 1)
        records.problems.append(Problem(file, loc.line, loc.column, "kthena ModelBooster backend type is a template "
                                        "expression: whether it runs vLLM is known only when rendered", level="note"))
        return
    if (btype or "vLLM").lower() not in _VLLM_TYPES:
        return  # SGLang, MindIE: not vLLM
    roles = _VLLM_TYPES[(btype or "vLLM").lower()]
    uri, uri_loc, uri_default = _written(doc, backend, "modelURI", bpath)
    min_replicas = None if _templated(doc, backend.get("minReplicas"), None) else to_int(backend.get("minReplicas"))
    workers = backend.get("workers")
    if not is_seq(workers):
        return
    wpath_base = join_path(bpath, "workers")
    for i, worker in enumerate(workers):
        if not is_map(worker):
            continue
        wpath = join_path(wpath_base, i)
        wtype, _loc, wtype_default = _written(doc, worker, "type", wpath)
        wtype = wtype or wtype_default or "server"
        if wtype not in roles:
            continue
        server = _worker_server(doc, ctx, backend, bpath, worker, wpath, uri, uri_loc, uri_default, records)
        if server is None:
            continue
        server.notes[:0] = notes
        if len(roles) > 1:
            server.notes.append(f"disaggregated prefill/decode: this is the {wtype} engine")
        per_backend = to_int(worker.get("replicas")) if "replicas" in worker else 1
        if min_replicas is not None and per_backend is not None:
            server.replicas = min_replicas * per_backend
        records.servers.append(server)


def _worker_server(doc: Any, ctx: Any, backend: Any, bpath: str, worker: Any, wpath: str, uri: str | None,
                   uri_loc: Location | None, uri_default: str | None, records: Records) -> Server | None:
    from vramlint.cmdline import Token, find_vllm_invocation
    from vramlint.versions import version_from_image

    file = doc.file
    location = node_location(file, worker, wpath) or Location(file, 1, 1, yaml_path=wpath)
    server = Server(file=file, location=location, source_format="kubernetes", kind="ModelBooster", name=ctx.name,
                    container=scalar_text(worker.get("type")) or "server")
    image_value, _image_loc, _default = _written(doc, worker, "image", wpath)
    image = image_value
    server.image = image
    if image is not None:
        server.image_location = value_location(file, worker, "image", join_path(wpath, "image"))
    server.vllm_version = version_from_image(image)
    read_env(file, backend, bpath, server)
    model_text = uri[len("hf://"):].strip("/") if uri and uri.startswith("hf://") else uri
    args = [Token("--model", uri_loc), Token(model_text, uri_loc)]
    config = worker.get("config")
    if is_map(config):
        args += _config_tokens(doc, config, join_path(wpath, "config"))
    pods = to_int(worker.get("pods"))
    if pods is not None and pods > 1:
        args += [Token("--distributed_executor_backend", None), Token("ray", None)]
        server.notes.append(f"kthena runs this engine over a Ray cluster of {pods} pods (pods: {pods})")
    command = [Token("python3", None), Token("-m", None), Token("vllm.entrypoints.openai.api_server", None)]
    invocation = find_vllm_invocation(command, args, image, dict(server.env))
    if invocation is None:
        return None
    apply_invocation(server, invocation)
    records.problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
    if uri is None:
        default = f"; the template's default is {uri_default}" if uri_default else ""
        server.notes.append(f"the model (modelURI) is a template expression{default}; pass --values or lint the "
                            "chart to check it")
    elif uri.startswith("hf://"):
        server.notes.append(f"kthena downloads {uri} into its model cache and serves that copy")
    else:
        server.notes.append(f"the model is loaded from {uri}; which model it is is not known from the file")
    server.gpu = gpu_from_resources(file, worker, wpath)
    server.shm = True  # kthena mounts a memory-backed volume on /dev/shm for vLLM
    server.ignore_rules = dict(ctx.ignore_rules)
    return server
