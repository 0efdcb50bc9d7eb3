"""KServe: ServingRuntime / ClusterServingRuntime + InferenceService, joined the way KServe builds the pod.

KServe starts the runtime's container with the runtime's command and args, then appends the
InferenceService's ``predictor.model.args``; the model's env and resources override the runtime's, and the
model files from ``storageUri`` appear at /mnt/models. A runtime is matched by ``predictor.model.runtime`` or,
without one, by ``modelFormat.name`` among runtimes with ``autoSelect``. When no runtime is in the scanned files
the server is still reported with what the InferenceService says, and a note names what is missing.

KServe's Hugging Face runtime (config/runtimes/kserve-huggingfaceserver*.yaml; its image's ENTRYPOINT is
`python3 -m huggingfaceserver`) serves with vLLM when `--backend` is `vllm`, or `auto` (the default) and vLLM
supports the model's architecture. It is read as that server: chosen by `modelFormat: huggingface` without a
runtime, by a runtime named kserve-huggingfaceserver*, or by a scanned runtime whose image is
kserve/huggingfaceserver; its own flags (--model_id, --model_dir, --max_length, --backend...) are read in
`cmdline` as python/huggingfaceserver/huggingfaceserver/__main__.py (kserve 00397f1) parses them, with
parse_known_args, so an argument neither it nor vLLM knows is dropped, not refused.
"""

from __future__ import annotations

from typing import Any

from vramlint.cmdline import Token, find_vllm_invocation, split_shell
from vramlint.extract.podspec import (
    ConfigRef,
    ObjectContext,
    PodSpecHit,
    apply_invocation,
    combine_gpu,
    configmap_mounts,
    container_server,
    dev_shm_mounts,
    extract_pod_objects,
    gpu_from_resources,
    gpu_from_scheduling,
    is_map,
    is_seq,
    object_context,
    pod_has_shm,
    read_env,
    scalar_text,
    to_int,
    tokens_from,
)
from vramlint.extract.records import Records
from vramlint.lean_dataclass import dataclass
from vramlint.model import GpuRequest, Location, Problem, Server
from vramlint.versions import version_from_image
from vramlint.yamlload import join_path, node_location, value_location

MODEL_MOUNT = "/mnt/models"
@dataclass
class RuntimeRecord:
    name: str
    kind: str
    doc: Any
    obj: Any
    path: str
    formats: list[tuple[str, bool]]  # (modelFormat name, autoSelect)
    used: bool = False


@dataclass
class IsvcRecord:
    name: str
    doc: Any
    obj: Any
    path: str
    predictor: Any
    model: Any  # predictor.model mapping
    runtime: str | None
    model_format: str | None
    storage_uri: str | None


def extract_kserve(doc: Any, obj: Any, path: str, records: Records) -> bool:
    """Record KServe objects; True when handled here (False: walk it as a generic pod object)."""
    kind = scalar_text(obj.get("kind")) or ""
    spec = obj.get("spec")
    if not is_map(spec):
        return True
    metadata = obj.get("metadata")
    name = scalar_text(metadata.get("name")) if is_map(metadata) else None
    if kind in ("ServingRuntime", "ClusterServingRuntime"):
        formats = []
        if is_seq(spec.get("supportedModelFormats")):
            for fmt in spec["supportedModelFormats"]:
                if is_map(fmt) and fmt.get("name") is not None:
                    formats.append((str(fmt.get("name")).lower(), fmt.get("autoSelect") is True))
        records.runtimes.append(RuntimeRecord(name or "", kind, doc, obj, path, formats))
        return True
    if kind == "InferenceService":
        predictor = spec.get("predictor")
        if not is_map(predictor):
            return True
        model = predictor.get("model")
        ppath = join_path(join_path(path, "spec"), "predictor")
        if is_map(model):
            fmt = model.get("modelFormat")
            records.inference_services.append(IsvcRecord(
                name or "", doc, obj, path, predictor, model,
                scalar_text(model.get("runtime")),
                scalar_text(fmt.get("name")).lower() if is_map(fmt) and fmt.get("name") is not None else None,
                scalar_text(model.get("storageUri")),
            ))
        if is_seq(predictor.get("containers")):
            ctx = object_context(doc, obj, path)
            extract_pod_objects(doc, predictor, ppath, records, ctx=ctx)
        return True
    return False  # LLMInferenceService and others: generic pod walk, see kubernetes._extract_object


def _name_filter(isvc_name: str):
    def apply(tokens: list[Any]) -> list[Any]:
        out = []
        for tok in tokens:
            if tok.text is not None and "{{" in tok.text:
                text = tok.text.replace("{{.Name}}", isvc_name).replace("{{ .Name }}", isvc_name)
                tok = Token(None if "{{" in text else text, tok.location)
            out.append(tok)
        return out

    return apply


def _runtime_hits(rt: RuntimeRecord) -> list[PodSpecHit]:
    spec = rt.obj.get("spec")
    if not is_map(spec) or not is_seq(spec.get("containers")):
        return []
    return [PodSpecHit(spec, join_path(rt.path, "spec"), None, None)]


def _runtime_servers(rt: RuntimeRecord, records: Records) -> list[Server]:
    ctx = object_context(rt.doc, rt.obj, rt.path)
    out = []
    for hit in _runtime_hits(rt):
        for i, container in enumerate(hit.node.get("containers")):
            if not is_map(container):
                continue
            server, problems = container_server(rt.doc, ctx, hit, i, container, records=records,
                                                token_filter=_name_filter("{{.Name}}"))
            records.problems.extend(problems)
            if server is not None:
                server.notes.append(f"{rt.kind} {rt.name!r}: a runtime template; no InferenceService using it was "
                                    "among the scanned files")
                out.append(server)
    return out


def _storage_model(uri: str | None) -> str | None:
    if uri and uri.startswith("hf://"):
        return uri[len("hf://"):].strip("/") or None
    return None


def _fix_model(server: Server, isvc: IsvcRecord) -> None:
    """Name the model when the command line points at the storage mount (``--model /mnt/models``)."""
    model_loc = value_location(isvc.doc.file, isvc.model, "storageUri",
                               join_path(_model_path(isvc), "storageUri")) if isvc.storage_uri else None
    hub_id = _storage_model(isvc.storage_uri)
    if server.model is None or (isinstance(server.model, str) and server.model.rstrip("/") == MODEL_MOUNT):
        if hub_id:
            server.model = hub_id
            server.model_location = model_loc
        elif isvc.storage_uri:
            if server.model is None:
                server.model = MODEL_MOUNT
                server.model_location = model_loc
            server.notes.append(f"the model is downloaded from storageUri {isvc.storage_uri} to {MODEL_MOUNT}; "
                                "which model it is is not known from the files (set a model alias)")
    elif isvc.storage_uri and isinstance(server.model, str) and server.model.startswith(MODEL_MOUNT + "/"):
        server.notes.append(f"{MODEL_MOUNT} holds storageUri {isvc.storage_uri}")


def _model_path(isvc: IsvcRecord) -> str:
    return join_path(join_path(join_path(isvc.path, "spec"), "predictor"), "model")


class _RuntimeIndex:
    """The runtimes by name and by auto-selected model format, so that finding each InferenceService's runtime
    costs a dictionary look-up, not a scan of every runtime (a tree of thousands of pairs stays linear).

    Same choice as a scan in the scanned order: a runtime of that name in the InferenceService's own file, else
    the first of that name anywhere; for a model format, the first runtime that auto-selects it."""

    def __init__(self, runtimes: list[RuntimeRecord]) -> None:
        self.by_name: dict[str, RuntimeRecord] = {}
        self.by_name_in_file: dict[tuple[str, str], RuntimeRecord] = {}
        self.by_format: dict[str, RuntimeRecord] = {}
        for rt in runtimes:
            self.by_name.setdefault(rt.name, rt)
            self.by_name_in_file.setdefault((rt.name, rt.doc.file), rt)
            for fmt, auto in rt.formats:
                if auto:
                    self.by_format.setdefault(fmt, rt)

    def find(self, isvc: IsvcRecord) -> RuntimeRecord | None:
        if isvc.runtime:
            return self.by_name_in_file.get((isvc.runtime, isvc.doc.file)) or self.by_name.get(isvc.runtime)
        if isvc.model_format:
            return self.by_format.get(isvc.model_format)
        return None


def _merged_server(isvc: IsvcRecord, rt: RuntimeRecord, records: Records) -> list[Server]:
    file = isvc.doc.file
    mpath = _model_path(isvc)
    isvc_args = tokens_from(file, isvc.model, "args", mpath, isvc.doc.lines)
    ctx = object_context(isvc.doc, isvc.obj, isvc.path)
    ctx = ObjectContext("InferenceService", isvc.name, ctx.ignore_rules,
                        [f"runtime: {rt.kind} {rt.name!r} from {rt.doc.file}"])

    def overlay_env(server: Server) -> None:
        read_env(file, isvc.model, mpath, server)

    out = []
    for hit in _runtime_hits(rt):
        for i, container in enumerate(hit.node.get("containers")):
            if not is_map(container):
                continue
            # Only the serving container gets the model's args (KServe names it kserve-container).
            if len(hit.node.get("containers")) > 1 and scalar_text(container.get("name")) != "kserve-container":
                continue
            server, problems = container_server(rt.doc, ctx, hit, i, container, extra_args=isvc_args,
                                                records=records, before_invocation=overlay_env,
                                                token_filter=_name_filter(isvc.name))
            records.problems.extend(problems)
            if server is None:
                continue
            _place_on_isvc(server, isvc, container, hit)
            out.append(server)
    return out


def _place_on_isvc(server: Server, isvc: IsvcRecord, container: Any, hit: PodSpecHit | None
                   ) -> tuple[GpuRequest | None, GpuRequest | None]:
    """Place ``server`` on the InferenceService; the GPUs its predictor asks for (resources, scheduling), read
    once for a caller that needs them again."""
    file = isvc.doc.file
    mpath = _model_path(isvc)
    server.file = file
    server.location = node_location(file, isvc.model, mpath) or Location(file, 1, 1, yaml_path=mpath)
    server.kind = "InferenceService"
    server.name = isvc.name
    ppath = join_path(join_path(isvc.path, "spec"), "predictor")
    # The InferenceService's resources and node selection override the runtime container's.
    isvc_resources = gpu_from_resources(file, isvc.model, mpath)
    isvc_scheduling = gpu_from_scheduling(file, isvc.predictor, ppath)
    if isvc_resources is not None or isvc_scheduling is not None:
        runtime_gpu = server.gpu
        server.gpu = combine_gpu(isvc_resources or runtime_gpu, isvc_scheduling)
    if "minReplicas" in isvc.predictor:
        server.replicas = to_int(isvc.predictor.get("minReplicas"))
    image = scalar_text(isvc.model.get("image")) if is_map(isvc.model) else None
    if image:
        server.image = image
        server.image_location = value_location(file, isvc.model, "image", join_path(mpath, "image"))
        server.vllm_version = version_from_image(image)
    if hit is not None:
        server.shm = pod_has_shm(hit.node, container) or pod_has_shm(isvc.predictor, isvc.model)
    _fix_model(server, isvc)
    return isvc_resources, isvc_scheduling


def _builtin_hf_server(isvc: IsvcRecord, records: Records) -> Server | None:
    """An InferenceService on KServe's Hugging Face runtime (vLLM backend unless told otherwise)."""
    file = isvc.doc.file
    mpath = _model_path(isvc)
    tokens = tokens_from(file, isvc.model, "args", mpath, isvc.doc.lines)
    # The runtime's container runs `python3 -m huggingfaceserver` (its image's ENTRYPOINT) with these args; its
    # own flags (--model_id, --model_dir, --backend, --max_length...) are read as cmdline reads that server.
    command = [Token("python3", None), Token("-m", None), Token("huggingfaceserver", None)]
    server = Server(file=file, location=node_location(file, isvc.model, mpath) or Location(file, 1, 1, yaml_path=mpath),
                    source_format="kubernetes", kind="InferenceService", name=isvc.name)
    read_env(file, isvc.model, mpath, server)
    invocation = find_vllm_invocation(command, tokens, "kserve/huggingfaceserver", dict(server.env))
    if invocation is None:
        return None  # --backend huggingface / triton: not vLLM
    apply_invocation(server, invocation)
    records.problems.extend(Problem(file, server.location.line, server.location.column, m) for m in invocation.problems)
    server.container = "kserve-container"
    server.notes.append(
        f"runtime: KServe's Hugging Face runtime{f' {isvc.runtime!r}' if isvc.runtime else ''} (not among the "
        "scanned files), which serves with vLLM (--backend auto or vllm) when vLLM supports the model's "
        "architecture, else with Transformers; its image, and so the vLLM version, is not known"
    )
    resources, scheduling = _place_on_isvc(server, isvc, None, None)
    server.shm = None
    server.gpu = combine_gpu(resources, scheduling)
    return server


def _isvc_only_server(isvc: IsvcRecord) -> Server | None:
    """An InferenceService on a vLLM runtime (by its name, or the vLLM model format) not among the scanned files."""
    file = isvc.doc.file
    mpath = _model_path(isvc)
    tokens = tokens_from(file, isvc.model, "args", mpath, isvc.doc.lines)
    server = Server(file=file, location=node_location(file, isvc.model, mpath) or Location(file, 1, 1, yaml_path=mpath),
                    source_format="kubernetes", kind="InferenceService", name=isvc.name)
    read_env(file, isvc.model, mpath, server)
    invocation = find_vllm_invocation([Token("vllm", None), Token("serve", None)], tokens, "vllm/vllm-openai",
                                      dict(server.env))
    if invocation is None:
        return None
    apply_invocation(server, invocation)
    runtime = (f"runtime {isvc.runtime!r}" if isvc.runtime
               else "the runtime KServe selects for model format vLLM (autoSelect)")
    server.notes.append(f"{runtime} is not among the scanned files: its command, args, image and resources are not "
                        "included (scan the file that defines it)")
    resources, scheduling = _place_on_isvc(server, isvc, None, None)
    server.shm = None
    server.gpu = combine_gpu(resources, scheduling)
    return server


def join(runtimes: list[RuntimeRecord], isvcs: list[IsvcRecord]) -> tuple[list[Server], list[Problem], list[ConfigRef]]:
    """Servers from InferenceServices joined with their runtimes; unused vLLM runtimes as servers themselves."""
    records = Records()
    servers: list[Server] = []
    for rt in runtimes:
        rt.used = False
    index = _RuntimeIndex(runtimes)
    for isvc in isvcs:
        rt = index.find(isvc)
        if rt is not None:
            rt.used = True
            servers.extend(_merged_server(isvc, rt, records))
            continue
        if (isvc.runtime is None and isvc.model_format in ("huggingface", None)) or _is_hf_runtime(isvc.runtime):
            server = _builtin_hf_server(isvc, records)
        elif (isvc.runtime and "vllm" in isvc.runtime.lower()) or isvc.model_format == "vllm":
            # the vLLM model format is served only by runtimes that declare it: vLLM's, whatever their name
            # (OpenShift AI's rhaiis-cuda-runtime, vllm-cuda-runtime, ...)
            server = _isvc_only_server(isvc)
        else:
            server = None
        if server is not None:
            servers.append(server)
    for rt in runtimes:
        if not rt.used:
            servers.extend(_runtime_servers(rt, records))
    return servers, records.problems, records.config_refs


def _is_hf_runtime(name: str | None) -> bool:
    """KServe's own Hugging Face runtimes by name (config/runtimes: kserve-huggingfaceserver, -multinode)."""
    return bool(name) and name.lower().startswith("kserve-huggingfaceserver")


def standalone_servers(runtimes: list[RuntimeRecord], isvcs: list[IsvcRecord]) -> list[Server]:
    return join(runtimes, isvcs)[0]


__all__ = ["extract_kserve", "join", "standalone_servers", "configmap_mounts"]


# --- LLMInferenceService -------------------------------------------------------------------------------------

# spec.parallelism key -> the vLLM flag KServe's LLMInferenceService controller writes for it.
_PARALLELISM_FLAGS = {
    "tensor": "--tensor-parallel-size",
    "pipeline": "--pipeline-parallel-size",
    "data": "--data-parallel-size",
    "dataLocal": "--data-parallel-size-local",
}


def extract_llmisvc(doc: Any, obj: Any, path: str, records: Records) -> None:
    """KServe LLMInferenceService: its containers when they run vLLM, else the command KServe builds for it.

    KServe (pkg/apis/serving/v1alpha1 LLMModelSpec, config/llmisvcconfig/config-llm-*-template.yaml) downloads
    `spec.model.uri` into /mnt/models with its storage initializer and runs `vllm serve /mnt/models
    --served-model-name <spec.model.name>`: the weights are the URI's, the name is only what clients ask for, so
    only an hf:// URI names the model (pkg/controller/v1alpha2/llmisvc/workload_storage.go: oci://, oci+native://,
    pvc://, s3:// are mounted or downloaded as they are). With
    `spec.prefill` it runs a second workload of the same command for prompt processing, with its own template,
    replicas and parallelism (`.Spec.Prefill.Parallelism.Tensor`)."""
    spec = obj.get("spec")
    if not is_map(spec):
        return
    file = doc.file
    spath = join_path(path, "spec")
    model = spec.get("model")
    mpath = join_path(spath, "model")
    hub_id = loc = uri = None
    if is_map(model):
        uri = scalar_text(model.get("uri"))
        hub_id = _storage_model(uri)
        if uri:
            loc = value_location(file, model, "uri", join_path(mpath, "uri"))
    _say_base_refs(file, spec, spath, records)
    before = len(records.servers)
    ctx = object_context(doc, obj, path)
    extract_pod_objects(doc, obj, path, records, ctx=ctx)
    workloads = [(spec, spath, ctx.name)]
    prefill = spec.get("prefill")
    if is_map(prefill):
        workloads.append((prefill, join_path(spath, "prefill"), f"{ctx.name}-prefill"))
    # A `main` container without a command takes the command of KServe's preset (the config merge), whatever its
    # image's own entrypoint: such a container is read as the command KServe builds, not as its image alone
    built_by_kserve = {cpath for workload, wpath, _ in workloads for cpath, _ in _preset_mains(workload, wpath)}
    records.servers[before:] = [s for s in records.servers[before:]
                                if not (s.location and s.location.yaml_path in built_by_kserve)]
    found = records.servers[before:]
    for server in found:
        if is_map(prefill) and server.name == ctx.name and server.location \
                and server.location.yaml_path.startswith(join_path(spath, "prefill") + "."):
            server.name = f"{ctx.name}-prefill"
    built: list[Server] = []
    for workload, wpath, name in workloads:
        built += _built_llmisvc_server(file, workload, wpath, ctx, name, records)
    if built:
        # one cause for the object's workloads: said once, on the first
        what = "the decode and prefill workloads' vLLM commands" if len(built) > 1 else "the vLLM command"
        built[0].notes.append(f"LLMInferenceService: KServe builds {what} (model at /mnt/models, "
                              "spec.parallelism, VLLM_ADDITIONAL_ARGS); flags its controller adds are not known")
        found += built
    said = False
    for server in found:
        at_mount = server.model is None or str(server.model).rstrip("/") == MODEL_MOUNT
        if hub_id and at_mount:
            server.model, server.model_location = hub_id, loc
        elif uri and at_mount:
            # an OCI modelcar, s3://, pvc://: KServe puts the weights at /mnt/models and gives spec.model.name to
            # vLLM only as --served-model-name, a label clients ask for, so the files do not say which model it is
            server.model, server.model_location = MODEL_MOUNT, loc
            if not said:  # one cause for the object's workloads
                name = scalar_text(model.get("name")) if is_map(model) else None
                alias = (f"spec.model.name {name} has the shape of a Hub id: if the URI holds that model, map "
                         f"{MODEL_MOUNT} to it with `model-aliases` in .vramlint.yaml" if name and "/" in name
                         else "set a model alias")
                server.notes.append(f"KServe puts spec.model.uri {uri} at {MODEL_MOUNT} (`vllm serve {MODEL_MOUNT} "
                                    "--served-model-name <spec.model.name>`); which model it is is not known from "
                                    f"the files ({alias})")
                said = True
        if server.replicas is None and "replicas" in spec:
            server.replicas = to_int(spec.get("replicas"))


def _say_base_refs(file: str, spec: Any, spath: str, records: Records) -> None:
    """`spec.baseRefs`: LLMInferenceServiceConfig objects KServe's controller merges under this spec, in order,
    before it builds the workloads (their template, args, parallelism, model). vramlint does not join them, so
    what they set is unknown: said once, on the field (10,000 entries cost one note, three of them named)."""
    refs = spec.get("baseRefs")
    if not is_seq(refs) or not refs:
        return
    names = [scalar_text(r.get("name")) or "?" for r in refs[:3] if is_map(r)]
    more = f" and {len(refs) - len(names):,} more" if len(refs) > len(names) else ""
    loc = value_location(file, spec, "baseRefs", join_path(spath, "baseRefs")) or Location(file, 1, 1)
    records.problems.append(Problem(file, loc.line, loc.column, (
        f"spec.baseRefs: KServe merges the LLMInferenceServiceConfig {', '.join(names)}{more} under this spec before "
        "it builds the vLLM workloads; vramlint does not read them, so what they set (template, args, parallelism) "
        "is not checked"), level="note"))


def _preset_mains(workload: Any, wpath: str) -> list[tuple[str, Any]]:
    """(path, container) of a workload's `main` containers that set no command: KServe's preset gives them theirs."""
    template = workload.get("template")
    containers = template.get("containers") if is_map(template) else None
    if not is_seq(containers):
        return []
    tpath = join_path(join_path(wpath, "template"), "containers")
    return [(join_path(tpath, i), c) for i, c in enumerate(containers)
            if is_map(c) and scalar_text(c.get("name")) == "main" and "command" not in c]


def _built_llmisvc_server(file: str, workload: Any, wpath: str, ctx: Any, name: str, records: Records) -> list[Server]:
    """The server KServe builds for one workload (the main one, or `spec.prefill`) from its `main` container."""

    template = workload.get("template")
    tpath = join_path(wpath, "template")
    built: list[Server] = []
    for cpath, container in _preset_mains(workload, wpath):
        server = Server(file=file, location=node_location(file, container, cpath) or Location(file, 1, 1),
                        source_format="kubernetes", kind="LLMInferenceService", name=name, container="main")
        read_env(file, container, cpath, server)
        tokens = [Token("vllm", None), Token("serve", None), Token(MODEL_MOUNT, None)]
        parallelism = workload.get("parallelism")
        ppath = join_path(wpath, "parallelism")
        if is_map(parallelism):
            for key, flag in _PARALLELISM_FLAGS.items():
                if key in parallelism:
                    ploc = value_location(file, parallelism, key, join_path(ppath, key))
                    tokens += [Token(flag, ploc), Token(scalar_text(parallelism.get(key)), ploc)]
            if parallelism.get("expert") is True:
                tokens.append(Token("--enable-expert-parallel",
                                    value_location(file, parallelism, "expert", join_path(ppath, "expert"))))
        extra = server.env.get("VLLM_ADDITIONAL_ARGS")
        if extra:
            tokens += split_shell(extra, server.env_locations.get("VLLM_ADDITIONAL_ARGS"))
        invocation = find_vllm_invocation(tokens, [], scalar_text(container.get("image")) or "vllm/vllm-openai",
                                          dict(server.env))
        if invocation is None:
            continue
        apply_invocation(server, invocation)
        server.image = scalar_text(container.get("image"))
        hit = PodSpecHit(template, tpath, to_int(workload.get("replicas")), None)
        server.replicas = hit.replicas
        server.gpu = combine_gpu(gpu_from_resources(file, container, cpath), gpu_from_scheduling(file, template, tpath))
        server.shm = pod_has_shm(template, container)
        if server.shm is False and not dev_shm_mounts(container):
            # KServe's well-known configs, which the controller merges this template over (config-llm-template,
            # the prefill, decode and worker templates in config/llmisvcconfig), mount a 1 GiB Memory emptyDir
            # `dshm` at /dev/shm in the main container; only a mount of the user's own replaces it
            server.shm = True
        server.ignore_rules = dict(ctx.ignore_rules)
        records.servers.append(server)
        built.append(server)
    return built
