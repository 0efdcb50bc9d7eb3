"""llmaz (llmaz.io, inference.llmaz.io): `BackendRuntime`, `OpenModel` and `Playground`, joined as llmaz builds the pod.

A BackendRuntime holds the engine's command (`spec.command`, `spec.commands` in older releases), its image
(`spec.image` + `spec.version`) and named argument sets: `spec.recommendedConfigs[]` (`name`, `args`,
`resources`, `sharedMemorySize`), or `spec.args[]` (`name`, `flags`) with `spec.resources` in older releases.
Each set is a way the runtime can be started, so on its own each is reported as a server, the model unknown.

A Playground serves an OpenModel (`spec.modelClaim.modelName`, or `spec.modelClaims.models[]` with roles main
and draft) with the BackendRuntime named by `spec.backendRuntimeConfig.backendName` (llmaz's default: `vllm`).
llmaz's controller (pkg/controller/inference/playground_controller.go, pkg/controller_helper) picks the
recommendedConfig named by `backendRuntimeConfig.configName`, else `speculative-decoding` when a claimed model
has the draft role, else `default`; fills `{{ .ModelPath }}`, `{{ .ModelName }}` and `{{ .DraftModelPath }}`
from the models; appends `backendRuntimeConfig.args`; merges `backendRuntimeConfig.envs` over the runtime's;
takes the image tag from `backendRuntimeConfig.version` when set; and gives the container the accelerators of
the main model's first flavor (`spec.inferenceConfig.flavors[]`, or the one the claim's `inferenceFlavors`
names first) with its `nodeSelector`. The objects may sit in different files: `scan` joins them (see `join`);
a config used by a scanned Playground is reported through the Playground, not on its own.
"""

from __future__ import annotations

import re
from dataclasses import field, replace
from typing import Any

from vramlint.extract.podspec import (
    apply_invocation,
    combine_gpu,
    gpu_from_resources,
    gpu_from_scheduling,
    is_map,
    is_seq,
    object_context,
    read_env,
    scalar_text,
    to_int,
    tokens_from,
)
from vramlint.extract.records import Records
from vramlint.lean_dataclass import dataclass
from vramlint.model import GpuRequest, Location, Problem, Server
from vramlint.yamlload import (
    TEMPLATE_CLOSE,
    TEMPLATE_OPEN,
    has_template_marker,
    join_path,
    node_location,
    value_location,
)

DEFAULT_BACKEND = "vllm"  # inferenceapi.DefaultBackend; the CRD's `+kubebuilder:default=vllm`
# Backends llmaz ships a BackendRuntime for (chart/templates/backends/) that are not vLLM.
OTHER_BACKENDS = ("sglang", "llamacpp", "ollama", "tgi", "tensorrt-llm")
CONTAINER_MODEL_PATH = "/workspace/models/"  # where llmaz's model loader puts the model
SKIP_MODEL_LOADER = "llmaz.io/skip-model-loader"
_PLACEHOLDER = re.compile(r"\{\{\s*\.(\w+)\s*\}\}")  # llmaz's renderFlags
_HELM_LITERAL = re.compile(r"\{\{`(.*?)`\}\}")  # `{{`{{ .ModelPath }}`}}` in a chart: Helm prints the inside
_MARKER = re.compile(TEMPLATE_OPEN + "_*" + TEMPLATE_CLOSE)


@dataclass
class LlmazObject:
    """An llmaz object kept for the join across files."""

    kind: str  # OpenModel | Playground | BackendRuntime
    name: str | None
    doc: Any
    obj: Any
    path: str
    servers: dict[str, Server] = field(default_factory=dict)  # BackendRuntime: config name -> its own server


def extract_llmaz(doc: Any, obj: Any, path: str, records: Records) -> None:
    kind = scalar_text(obj.get("kind")) or ""
    if kind == "BackendRuntime":
        extract_backend_runtime(doc, obj, path, records)
    elif kind in ("OpenModel", "Playground") and is_map(obj.get("spec")):
        records.llmaz.append(LlmazObject(kind, object_context(doc, obj, path).name, doc, obj, path))


def _image(spec: Any, version: str | None = None) -> str | None:
    image = scalar_text(spec.get("image"))
    version = version or scalar_text(spec.get("version"))
    if image and version and ":" not in image.rsplit("/", 1)[-1]:
        return f"{image}:{version}"
    return image


def _configs(spec: Any, spath: str) -> list[tuple[Any, str, str, Any]]:
    """(config node, its path, args key, resources holder) of each argument set of a BackendRuntime spec."""
    if is_seq(spec.get("recommendedConfigs")):
        cpath = join_path(spath, "recommendedConfigs")
        return [(c, join_path(cpath, i), "args", c) for i, c in enumerate(spec["recommendedConfigs"]) if is_map(c)]
    if is_seq(spec.get("args")):
        apath = join_path(spath, "args")
        return [(c, join_path(apath, i), "flags", spec) for i, c in enumerate(spec["args"]) if is_map(c)]
    return []


def _command(doc: Any, spec: Any, spath: str) -> list[Any]:
    return tokens_from(doc.file, spec, "command" if "command" in spec else "commands", spath, doc.lines)


def _env_holder(spec: Any) -> dict[str, Any]:
    return {"env": spec.get("envs") if "envs" in spec else spec.get("env")}


def extract_backend_runtime(doc: Any, obj: Any, path: str, records: Records) -> None:
    from vramlint.cmdline import find_vllm_invocation
    from vramlint.versions import version_from_image

    spec = obj.get("spec")
    if not is_map(spec):
        return
    file = doc.file
    spath = join_path(path, "spec")
    ctx = object_context(doc, obj, path)
    record = LlmazObject("BackendRuntime", ctx.name, doc, obj, path)
    records.llmaz.append(record)
    command = _command(doc, spec, spath)
    image = _image(spec)
    configs = _configs(spec, spath) or [(spec, spath, "", spec)]
    env_holder = _env_holder(spec)
    for config, cpath, args_key, resources_holder in configs:
        location = node_location(file, config, cpath) or Location(file, 1, 1, yaml_path=cpath)
        server = Server(file=file, location=location, source_format="kubernetes", kind="BackendRuntime",
                        name=ctx.name, container=scalar_text(config.get("name")) if args_key else None)
        server.image = image
        server.image_location = value_location(file, spec, "image", join_path(spath, "image"))
        server.vllm_version = version_from_image(image)
        read_env(file, env_holder, spath, server)
        args = tokens_from(file, config, args_key, cpath, doc.lines) if args_key else []
        invocation = find_vllm_invocation(command, args, image, dict(server.env))
        if invocation is None:
            continue
        apply_invocation(server, invocation)
        records.problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
        rpath = cpath if resources_holder is config else spath
        server.gpu = gpu_from_resources(file, resources_holder, rpath)
        if scalar_text(config.get("sharedMemorySize")):
            server.shm = True  # llmaz mounts a memory-backed /dev/shm of that size
        server.ignore_rules = dict(ctx.ignore_rules)
        if args_key:
            server.notes.append(
                f"llmaz BackendRuntime {ctx.name or '(unnamed)'}: config {server.container or '(unnamed)'!r}, one of "
                f"the {len(configs)} ways llmaz starts this runtime (a Playground picks one by name); the model "
                "path and name are filled in by llmaz from the Playground's model")
        records.servers.append(server)
        record.servers[server.container or ""] = server


# --- the join ------------------------------------------------------------------------------------------------


@dataclass
class _Model:
    """What the controller takes from one claimed OpenModel."""

    claim: str  # the name claimed
    obj: LlmazObject | None  # the OpenModel, when scanned
    model: str | None = None  # the model as vramlint names it (Hub id, URI, host path)
    model_location: Location | None = None
    path: str | None = None  # `{{ .ModelPath }}`
    name: str | None = None  # `{{ .ModelName }}`
    notes: list[str] = field(default_factory=list)


class _ByName:
    """Objects of one kind by name: a look-up per Playground, not a scan of every object (linear joins)."""

    def __init__(self, objects: list[LlmazObject]) -> None:
        self.first: dict[str | None, LlmazObject] = {}
        self.first_in_file: dict[tuple[str | None, str], LlmazObject] = {}
        for o in objects:
            self.first.setdefault(o.name, o)
            self.first_in_file.setdefault((o.name, o.doc.file), o)


def _pick(objects: _ByName, name: str, file: str) -> LlmazObject | None:
    """The object named ``name`` in ``file``, else the first of that name in any scanned file."""
    return objects.first_in_file.get((name, file)) or objects.first.get(name)


def _model(claim: str, found: LlmazObject | None, skip_loader: bool) -> _Model:
    """llmaz's ModelSourceProvider: the model path and name it substitutes (pkg/controller_helper/modelsource)."""
    out = _Model(claim, found)
    if found is None:
        return out
    file = found.doc.file
    spec = found.obj.get("spec")
    source = spec.get("source") if is_map(spec) else None
    spath = join_path(join_path(found.path, "spec"), "source")
    hub = source.get("modelHub") if is_map(source) else None
    uri = scalar_text(source.get("uri")) if is_map(source) else None
    out.name = found.name
    if is_map(hub) and scalar_text(hub.get("modelID")):
        model_id = scalar_text(hub.get("modelID")) or ""
        hpath = join_path(spath, "modelHub")
        out.model = model_id
        out.model_location = value_location(file, hub, "modelID", join_path(hpath, "modelID"))
        filename = scalar_text(hub.get("filename"))
        if skip_loader:
            out.path = model_id
        elif filename:
            out.path = CONTAINER_MODEL_PATH + filename
            out.notes.append(f"model {model_id}: only its file {filename} is loaded (llmaz passes {out.path})")
        else:
            out.path = CONTAINER_MODEL_PATH + "models--" + model_id.replace("/", "--")
        hub_name = scalar_text(hub.get("name"))
        if hub_name and hub_name.lower() == "modelscope":
            out.notes.append(f"model {model_id} is a ModelScope id: vramlint reads model configurations from the "
                             "Hugging Face Hub, where the same id may name another repository or none (set a "
                             "model alias if so)")
    elif uri:
        out.model = uri
        out.model_location = value_location(file, source, "uri", join_path(spath, "uri"))
        protocol, _, rest = uri.partition("://")
        last = rest.rstrip("/").rsplit("/", 1)[-1]
        if protocol.lower() == "host":
            out.path = out.model = rest
        elif protocol.lower() == "ollama":
            out.path, out.name = rest, rest
        elif skip_loader:
            out.path = uri
        else:
            out.path = CONTAINER_MODEL_PATH + (last if ".gguf" in rest else "models--" + last)
    else:
        out.notes.append(f"OpenModel {found.name!r} in {file} names no model source (spec.source.modelHub.modelID "
                         "or spec.source.uri)")
    return out


def _claims(spec: Any, spath: str) -> tuple[list[tuple[str, str]], list[str]]:
    """([(model name, role)], the inferenceFlavors named) of a Playground, main model first (fetchModels)."""
    claim = spec.get("modelClaim")
    claims = spec.get("modelClaims")
    out: list[tuple[str, str]] = []
    flavors: Any = None
    if is_map(claim):
        name = scalar_text(claim.get("modelName"))
        if name:
            out.append((name, "main"))
        flavors = claim.get("inferenceFlavors")
    elif is_map(claims):
        for ref in claims.get("models") or []:
            if is_map(ref) and scalar_text(ref.get("name")):
                role = scalar_text(ref.get("role")) or "main"  # the CRD's `+kubebuilder:default=main`
                entry = (scalar_text(ref.get("name")) or "", role)
                if role == "main":
                    out.insert(0, entry)
                else:
                    out.append(entry)
        flavors = claims.get("inferenceFlavors")
    names = [scalar_text(f) or "" for f in flavors] if is_seq(flavors) else []
    return out, names


def _config_name(spec: Any, brc: Any) -> str:
    """helper.RecommendedConfigName: `configName`, else speculative-decoding when a model has the draft role."""
    if is_map(brc) and scalar_text(brc.get("configName")):
        return scalar_text(brc.get("configName")) or "default"
    if not is_map(spec.get("modelClaim")) and is_map(spec.get("modelClaims")):
        for ref in spec["modelClaims"].get("models") or []:
            if is_map(ref) and scalar_text(ref.get("role")) == "draft":
                return "speculative-decoding"
    return "default"


def _flavor_gpu(model: _Model, wanted: list[str]) -> GpuRequest | None:
    """The accelerators of the main model's first assigned flavor (helper.FirstAssignedFlavor)."""
    if model.obj is None:
        return None
    found = model.obj
    spec = found.obj.get("spec")
    config = spec.get("inferenceConfig") if is_map(spec) else None
    flavors = config.get("flavors") if is_map(config) else None
    if not is_seq(flavors) or not flavors:
        return None
    fpath = join_path(join_path(join_path(found.path, "spec"), "inferenceConfig"), "flavors")
    index = 0
    if wanted:
        names = [scalar_text(f.get("name")) if is_map(f) else None for f in flavors]
        if wanted[0] not in names:
            return None
        index = names.index(wanted[0])
    flavor = flavors[index]
    if not is_map(flavor):
        return None
    fpath = join_path(fpath, index)
    file = found.doc.file
    label = f"OpenModel {found.name} flavor {scalar_text(flavor.get('name')) or index!r}"
    # a flavor's `limits` is a container's `resources.limits`: read it with the same helper, then say where it is
    counted = gpu_from_resources(file, {"resources": {"limits": flavor.get("limits")}}, fpath)
    if counted is not None:
        counted.location, counted.count_location = _flavor_path(counted.location), _flavor_path(counted.count_location)
        counted.evidence = f"{label}: {(counted.evidence or '').replace('resources.limits ', 'limits ', 1)}"
    scheduled = gpu_from_scheduling(file, flavor, fpath)
    if scheduled is not None:
        scheduled.evidence = f"{label}: {scheduled.evidence}"
    return combine_gpu(counted, scheduled)


def _flavor_path(loc: Location | None) -> Location | None:
    return replace(loc, yaml_path=loc.yaml_path.replace(".resources.limits", ".limits", 1)) if loc is not None else None


def _original_text(doc: Any, raw: str, token: Any) -> str:
    """The text template markers stand for: a templated file is parsed with each expression replaced by a
    marker of the same width, and ``doc.lines`` keeps the file's own text."""
    loc = token.location
    if loc is None or not doc.lines or not 0 < loc.line <= len(doc.lines):
        return raw
    line = doc.lines[loc.line - 1]
    start = loc.column - 1 + (1 if token.quoted else 0)
    original = line[start:start + len(raw)]
    if len(original) != len(raw):
        return raw
    pos = 0
    for m in _MARKER.finditer(raw):  # the text between markers must be the same, else the columns do not match
        if original[pos:m.start()] != raw[pos:m.start()]:
            return raw
        pos = m.end()
    return original if original[pos:] == raw[pos:] else raw


def _filled_args(doc: Any, config: Any, key: str, cpath: str, values: dict[str, str | None]) -> tuple[list[Any], set[str]]:
    """The config's args with llmaz's placeholders filled in (renderFlags); the placeholders used."""
    from vramlint.cmdline import yaml_token

    tokens = tokens_from(doc.file, config, key, cpath, doc.lines)
    items = config.get(key) if is_map(config) else None
    used: set[str] = set()
    if not is_seq(items) or len(items) != len(tokens):
        return tokens, used
    kpath = join_path(cpath, key)
    out = []
    for i, (item, tok) in enumerate(zip(items, tokens, strict=True)):
        if not isinstance(item, str) or ("{{" not in item and not has_template_marker(item)):
            out.append(tok)
            continue
        raw = yaml_token(doc.file, items, i, join_path(kpath, i), doc.lines)
        text = _original_text(doc, item, raw) if has_template_marker(item) else item
        text = _HELM_LITERAL.sub(r"\1", text)
        names = _PLACEHOLDER.findall(text)
        if not names:
            out.append(tok)
            continue
        used.update(names)
        filled: str | None = _PLACEHOLDER.sub(lambda m: values.get(m.group(1)) or "\0", text)
        if filled is None or "\0" in filled or "{{" in filled:
            filled = None  # a value llmaz fills in that is not known here (or another template expression)
        out.append(replace(raw, text=filled))
    return out, used


def join(objects: list[LlmazObject]) -> tuple[list[Server], list[Problem], list[Server]]:
    """Servers of the Playgrounds among ``objects``, the problems met, and the BackendRuntime config servers
    they replace (a config a Playground uses is reported through it)."""
    models = _ByName([o for o in objects if o.kind == "OpenModel"])
    runtimes = _ByName([o for o in objects if o.kind == "BackendRuntime"])
    servers: list[Server] = []
    problems: list[Problem] = []
    replaced: list[Server] = []
    for pg in objects:
        if pg.kind == "Playground":
            server = _playground_server(pg, models, runtimes, problems, replaced)
            if server is not None:
                servers.append(server)
    return servers, problems, replaced


# llmaz's chart: backendRuntime.vllm.image (InftyAI/llmaz 11c05fd chart/values.global.yaml)
LLMAZ_VLLM_IMAGE = "vllm/vllm-openai"
LLMAZ_PINNED_IMAGE = "vllm/vllm-openai:v0.7.3"
LLMAZ_PIN_SOURCE = "the version llmaz's chart pins (InftyAI/llmaz 11c05fd chart/values.global.yaml)"


def _playground_server(pg: LlmazObject, models: _ByName, runtimes: _ByName,
                       problems: list[Problem], replaced: list[Server]) -> Server | None:
    from vramlint.cmdline import find_vllm_invocation
    from vramlint.versions import version_from_image

    file = pg.doc.file
    spec = pg.obj.get("spec")
    spath = join_path(pg.path, "spec")
    ctx = object_context(pg.doc, pg.obj, pg.path)
    location = node_location(file, spec, spath) or Location(file, 1, 1, yaml_path=spath)
    brc = spec.get("backendRuntimeConfig")
    bpath = join_path(spath, "backendRuntimeConfig")
    if not is_map(brc):
        brc = {}
    backend = scalar_text(brc.get("backendName")) or DEFAULT_BACKEND
    runtime = _pick(runtimes, backend, file)
    if runtime is None:
        if backend.lower() in OTHER_BACKENDS:
            return None  # llmaz's own BackendRuntime of another engine
        if "vllm" not in backend.lower():
            problems.append(Problem(file, location.line, location.column,
                                    f"llmaz Playground {pg.name or '(unnamed)'} uses BackendRuntime {backend!r}, which "
                                    "is not among the scanned files: whether it runs vLLM is not known (scan the file "
                                    "that defines it)", level="note"))
            return None
    elif not runtime.servers:
        return None  # the BackendRuntime does not run vLLM
    annotations = (pg.obj.get("metadata") or {}).get("annotations") if is_map(pg.obj.get("metadata")) else None
    skip_loader = is_map(annotations) and scalar_text(annotations.get(SKIP_MODEL_LOADER)) == "true"
    claims, flavor_names = _claims(spec, spath)
    main = _model(claims[0][0], _pick(models, claims[0][0], file), skip_loader) if claims else None
    draft_claim = claims[1] if len(claims) > 1 else None  # llmaz: the second model is the draft (DraftModelPath)
    draft = _model(draft_claim[0], _pick(models, draft_claim[0], file), skip_loader) if draft_claim else None
    config_name = _config_name(spec, brc)

    server = Server(file=file, location=location, source_format="kubernetes", kind="Playground", name=pg.name,
                    container="model-runner")
    server.ignore_rules = dict(ctx.ignore_rules)
    pg_args = tokens_from(file, brc, "args", bpath, pg.doc.lines)
    command: list[Any] = []
    args: list[Any] = []
    image = None
    env_holders = [(file, _env_holder(brc), bpath)]
    config = None
    if runtime is not None:
        rt_file = runtime.doc.file
        rt_spec = runtime.obj.get("spec")
        rt_spath = join_path(runtime.path, "spec")
        config = next((c for c in _configs(rt_spec, rt_spath) if scalar_text(c[0].get("name")) == config_name), None)
        image = _image(rt_spec, scalar_text(brc.get("version")))
        env_holders.insert(0, (rt_file, _env_holder(rt_spec), rt_spath))
        if config is None:
            server.notes.append(f"llmaz BackendRuntime {runtime.name!r} in {rt_file} has no config named "
                                f"{config_name!r}, which this Playground uses: llmaz cannot start it, and its "
                                "arguments are not known")
            server.unchecked.append(f"the arguments of BackendRuntime {runtime.name!r} config {config_name!r}")
        else:
            command = _command(runtime.doc, rt_spec, rt_spath)
            values = {"ModelPath": main.path if main else None, "ModelName": main.name if main else None,
                      "DraftModelPath": draft.path if draft else None}
            args, used = _filled_args(runtime.doc, config[0], config[2], config[1], values)
            if "DraftModelPath" in used and draft is None:
                server.notes.append(f"config {config_name!r} passes {{{{ .DraftModelPath }}}} but the Playground "
                                    "claims no draft model: llmaz cannot render its arguments")
            if config_name in runtime.servers:
                replaced.append(runtime.servers[config_name])
            server.notes.append(f"runtime: llmaz BackendRuntime {runtime.name!r} config {config_name!r} from {rt_file}")
        if has_template_marker(image):
            image = None
            server.notes.append(f"the image of BackendRuntime {runtime.name!r} is a template expression: unknown "
                                "until rendered")
    else:
        server.notes.append(f"the command, arguments and image come from llmaz BackendRuntime {backend!r} (config "
                            f"{config_name!r}), which is not among the scanned files: only the Playground's own "
                            "args are read (scan the file that defines it)")
        server.unchecked.append(f"the arguments of llmaz BackendRuntime {backend!r} (not among the scanned files)")
    server.image = image
    if runtime is not None and image is not None:
        server.image_location = value_location(runtime.doc.file, runtime.obj["spec"], "image",
                                               join_path(join_path(runtime.path, "spec"), "image"))
    server.vllm_version = version_from_image(image)
    for env_file, holder, epath in env_holders:
        read_env(env_file, holder, epath, server)  # the Playground's envs merged over the runtime's
    pinned = None
    if runtime is None:
        from vramlint.cmdline import Token

        stated = scalar_text(brc.get("version"))
        if stated and backend == DEFAULT_BACKEND and not has_template_marker(stated):
            # llmaz's own vllm BackendRuntime runs vllm/vllm-openai; backendRuntimeConfig.version is its tag
            server.image = f"{LLMAZ_VLLM_IMAGE}:{stated}"
            server.image_location = value_location(file, brc, "version", join_path(bpath, "version"))
            server.vllm_version = version_from_image(server.image)
        elif backend == DEFAULT_BACKEND:
            pinned = version_from_image(LLMAZ_PINNED_IMAGE)
            server.assumed_version, server.assumed_version_source = pinned, LLMAZ_PIN_SOURCE
            server.notes.append(f"llmaz's vllm BackendRuntime runs {LLMAZ_PINNED_IMAGE} in llmaz's chart "
                                "(InftyAI/llmaz 11c05fd chart/values.global.yaml); the llmaz release installed may "
                                "pin another")
        invocation = find_vllm_invocation([Token("vllm", None), Token("serve", None)], pg_args, "vllm/vllm-openai",
                                          dict(server.env), version=server.vllm_version or pinned)
        if invocation is not None and pinned:
            from vramlint.extract.podspec import mark_assumed

            mark_assumed(invocation, LLMAZ_PIN_SOURCE)
    else:
        invocation = find_vllm_invocation(command, args + pg_args, image, dict(server.env))
    if invocation is None:
        return None
    apply_invocation(server, invocation)
    problems.extend(Problem(file, location.line, location.column, m) for m in invocation.problems)
    _place_model(server, main, claims)
    if draft is not None:
        what = f"OpenModel {draft.claim!r}" + (f" ({draft.model})" if draft.model else " (not among the scanned files)")
        server.notes.append(f"draft model for speculative decoding: {what}; the budget says whether it is counted")
    for m in (main, draft):
        if m is not None:
            server.notes.extend(m.notes)
    # accelerators: the main model's flavor, else the Playground's resources, else the config's
    gpu = _flavor_gpu(main, flavor_names) if main else None
    if gpu is None or gpu.count is None:
        counted = gpu_from_resources(file, brc, bpath)
        if counted is None and config is not None and runtime is not None:
            holder, cpath = config[3], config[1] if config[3] is config[0] else join_path(runtime.path, "spec")
            counted = gpu_from_resources(runtime.doc.file, holder, cpath)
        if counted is not None:
            gpu = combine_gpu(counted, gpu)
    server.gpu = gpu
    shm_in = [brc] + ([config[0]] if config is not None else [])
    if any(scalar_text(h.get("sharedMemorySize")) for h in shm_in):
        server.shm = True  # llmaz mounts a memory-backed /dev/shm of that size
    server.replicas = to_int(spec.get("replicas")) if "replicas" in spec else 1  # the CRD's default
    return server


def _place_model(server: Server, main: _Model | None, claims: list[tuple[str, str]]) -> None:
    """The model is the main OpenModel's source, not the path llmaz's model loader writes it to."""
    if main is None:
        server.notes.append("the Playground claims no model (spec.modelClaim.modelName or spec.modelClaims.models)")
        return
    if main.obj is None:
        server.notes.append(f"OpenModel {main.claim!r}, the model this Playground serves, is not among the scanned "
                            "files: the model is not known (scan the file that defines it)")
        if server.model is None or server.model == main.path:
            server.model, server.model_location = None, None
        return
    if server.model is None or server.model == main.path:
        if main.path and server.model == main.path and main.path != main.model:
            server.notes.append(f"llmaz passes the model as {main.path}, where its model loader puts {main.model}")
        server.model, server.model_location = main.model, main.model_location
