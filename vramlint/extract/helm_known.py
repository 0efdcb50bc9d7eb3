"""Values files of well-known charts, recognised by their shape when the chart's templates are not scanned.

pre-commit passes one changed file, and many repositories keep only an overlay (`values-prod.yaml`) of a
chart published elsewhere. For the charts below, what the chart's templates do with each values key is
known, so the servers are built as the templates would build them and every flag points at the values line
that set it. When the chart's templates are scanned too, `vramlint.helm` evaluates them instead and these
shapes are not used for that chart's values (each values file is extracted once).

- KubeAI models chart (`catalog.<name>`: `enabled`, `url: hf://...`, `engine`, `args`, `env`,
  `resourceProfile: nvidia-gpu-l4:1`, `minReplicas`): the chart renders a KubeAI `Model` for each entry that
  is enabled (or every entry with `all.enabled: true`); only `engine: VLLM` entries run vLLM.
- llm-d deployer (`sampleApplication.model.modelArtifactURI`, `sampleApplication.prefill/decode.extraArgs`,
  `sampleApplication.resources`, `modelservice.vllm.image`): a ModelService whose prefill and decode pods
  run `vllm serve <model>` with the role's `extraArgs`.
- llm-d-modelservice (`modelArtifacts.uri`/`name`, `decode`/`prefill` with `containers[].modelCommand`,
  `parallelism`, `accelerator.type`): each role's vLLM container runs `vllm serve` (modelCommand vllmServe) or the
  image's entrypoint with `--model` (imageDefault), the model from the URI, `--tensor-parallel-size` /
  `--data-parallel-size(-local)` from `parallelism`, then the container's `args`; it requests
  dataLocal x tensor accelerators of the role's type unless the container's limits name that resource.
- Neural Magic's nm-vllm chart (`modelName`, `image`, `service.port`): its deployment template runs
  `python3 -m vllm.entrypoints.openai.api_server --model <modelName> --host 0.0.0.0 --port <service.port>`.
- vllm-helm style `vllm:` block (`model`, `gpuMemoryUtilization`, `maxModelLen`, `tensorParallelSize`,
  `trustRemoteCode`, `additionalArgs`, `env`), with `kaischeduler.gpuMemoryMiB` as a fractional GPU share.
- GKE app-design-center ai-inference (`model.id`, top-level `tensorParallelSize` and `maxModelLen`): the
  template runs `python3 -m vllm.entrypoints.openai.api_server` with flags of its own.
- OPEA GenAIInfra vllm chart (`LLM_MODEL_ID`, `extraCmd.command`, `extraCmdArgs`, `accelDevice`): the template
  passes `--model {{ .Values.LLM_MODEL_ID }}` after the extra arguments.
- A generic container-like block at the top level (`image`, `command`, `args`/`extraArgs`, `env`, `resources`,
  `nodeSelector`) with a vLLM image or vLLM arguments.

The chart that installs an operator vramlint reads by its own resources (KubeAI's `modelServers.<engine>.images`,
the images KubeAI runs its Models with) deploys no vLLM server itself: `operator_configuration` recognises its
values, so a scan does not call their image references orphans.

A chart is recognised by evidence, never by one key: the values must have the chart's shape as a whole (every
top-level key is one the chart's own values.yaml has, or a common Helm key), and when a Chart.yaml sits above
the values file its `name` must be the chart's. An overlay of another chart that happens to share a key (a
`model.id`, a `catalog` of models) is then not read as the known chart, whose templates would add flags and
notes that are false for it; it is read as a generic container block when it is one, else not as a server.
"""

from __future__ import annotations

import re
from typing import Any

from vramlint.extract.podspec import (
    GpuRequest,
    apply_invocation,
    combine_gpu,
    gpu_from_resources,
    gpu_from_scheduling,
    is_map,
    is_seq,
    read_env,
    resolve_gpu_hint,
    scalar_text,
    to_int,
    tokens_from,
)
from vramlint.model import Location, Problem, Server
from vramlint.versions import version_from_image
from vramlint.yamlload import join_path, key_location, node_location, value_location

_ARDGE_FLAGS = {  # vllm-helm `vllm:` key -> the flag its deployment template writes
    "host": "--host",
    "port": "--port",
    "gpuMemoryUtilization": "--gpu-memory-utilization",
    "maxModelLen": "--max-model-len",
    "tensorParallelSize": "--tensor-parallel-size",
}
_ARDGE_OTHER = {"model", "trustRemoteCode", "additionalArgs", "env"}
# Environment variables that name a model for a custom entrypoint; vLLM itself does not read them.
_MODEL_ENV = ("MODEL", "MODEL_ID", "MODEL_NAME", "LLM_MODEL_ID", "HF_MODEL_ID", "MODEL_PATH")
_ARG_KEYS = ("args", "extraArgs", "extraCmdArgs")
_VLLM_WORDS = ("--max-model-len", "--tensor-parallel-size", "--gpu-memory-utilization", "--max-num-seqs",
               "--served-model-name", "--enforce-eager", "--max-num-batched-tokens", "--kv-cache-dtype")


# Keys most charts' values have (helm create's scaffold, Bitnami's common chart): no evidence either way.
COMMON_KEYS = frozenset({
    "global", "nameOverride", "fullnameOverride", "imagePullSecrets", "podAnnotations", "podLabels",
    "podSecurityContext", "securityContext", "tolerations", "affinity", "serviceAccount", "commonLabels",
    "commonAnnotations", "extraDeploy", "kubeVersion", "clusterDomain",
})
# shape -> (names the chart's Chart.yaml gives it, the top-level keys of its published values.yaml).
_CHARTS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # substratusai/kubeai charts/models (Chart.yaml `name: models`)
    "kubeai-models": (frozenset({"models", "kubeai-models"}), frozenset({"all", "catalog"})),
    # llm-d/llm-d-deployer charts/llm-d (`name: llm-d`)
    "llm-d": (frozenset({"llm-d"}), frozenset({"test", "common", "sampleApplication", "gateway", "ingress",
                                               "modelservice", "redis"})),
    # llm-d-incubation/llm-d-modelservice charts/llm-d-modelservice (`name: llm-d-modelservice`), keys of all its
    # values.yaml versions
    "llm-d-modelservice": (frozenset({"llm-d-modelservice"}), frozenset({
        "common", "enabled", "fullnameOverride", "nameOverride", "serviceAccountOverride", "tracing", "modelArtifacts",
        "multinode", "accelerator", "requester", "routing", "decode", "prefill", "extraObjects", "dra", "global",
        "inferencePool", "httpRoute", "endpointPicker", "schedulerName"})),
    # neuralmagic/helm-charts charts/nm-vllm (Chart.yaml `name: vllm`): its values.yaml
    "nm-vllm": (frozenset({"vllm", "nm-vllm"}), frozenset({
        "affinity", "apiServer", "fullnameOverride", "image", "livenessProbe", "modelName", "nameOverride",
        "nodeSelector", "podAnnotations", "podLabels", "podSecurityContext", "readinessProbe", "replicaCount",
        "resources", "securityContext", "service", "tolerations", "volumeMounts", "volumes"})),
    # ardge-timwu/vllm-helm (`name: vllm`): its values.yaml and values.schema.json
    "vllm-block": (frozenset({"vllm", "vllm-helm"}), frozenset({
        "replicaCount", "image", "imagePullSecrets", "nameOverride", "fullnameOverride", "serviceAccount",
        "podAnnotations", "podSecurityContext", "securityContext", "init_drop_cache", "service", "ingress",
        "resources", "autoscaling", "nodeSelector", "tolerations", "affinity", "kaischeduler", "vllm", "persistence",
        "startupProbe", "livenessProbe", "readinessProbe", "monitoring"})),
    # GoogleCloudPlatform/kubernetes-engine-samples app-design-center/ai-inference (`name: gemma`)
    "gke-ai-inference": (frozenset({"gemma", "ai-inference"}), frozenset({
        "replicaCount", "image", "model", "resources", "nodeSelector", "hpa", "tensorParallelSize", "maxModelLen",
        "service", "pdb"})),
    # opea-project/GenAIInfra helm-charts/common/vllm (`name: vllm`) and its accelerator overlays; its ConfigMap
    # template also turns upper-case keys (VLLM_CPU_KVCACHE_SPACE, PT_HPU_...) into environment variables
    "opea-vllm": (frozenset({"vllm"}), frozenset({
        "replicaCount", "port", "shmSize", "image", "service", "resources", "extraCmd", "extraCmdArgs",
        "livenessProbe", "readinessProbe", "startupProbe", "nodeSelector", "accelDevice", "autoscaling",
        "updateStrategy", "env", "tdxEnabled"})),
}
# Charts that install an operator vramlint reads by its own resources: their values pin the images the operator
# runs those resources with (read by that operator's extractor), and deploy no vLLM server themselves.
# shape -> (names its Chart.yaml gives it, the top-level keys of every version of its values.yaml).
_OPERATOR_CHARTS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # substratusai/kubeai charts/kubeai (`name: kubeai`), every values.yaml to 2f32ef4: `modelServers.<engine>
    # .images.<name>` (`.gpuImage` in the first ones) is the image a Model runs with (vramlint.extract.kubeai
    # reads it for the Models scanned)
    "kubeai": (frozenset({"kubeai"}), frozenset({
        "crds", "secrets", "modelServers", "modelLoading", "modelLoaders", "modelServerPods", "modelRollouts",
        "metrics", "resourceProfiles", "cacheProfiles", "modelAutoscaling", "messaging", "open-webui", "openwebui",
        "replicaCount", "image", "imagePullSecrets", "nameOverride", "fullnameOverride", "command", "args",
        "serviceAccount", "modelServiceAccount", "podAnnotations", "podLabels", "podSecurityContext", "env",
        "securityContext", "service", "ingress", "resources", "livenessProbe", "readinessProbe", "autoscaling",
        "volumes", "volumeMounts", "nodeSelector", "tolerations", "affinity"})),
}


def operator_configuration(data: Any, file: str | None = None) -> str | None:
    """The operator whose chart values these are (its shape as a whole, confirmed by a Chart.yaml above when there
    is one), or None: values that configure how an operator runs its resources, not a server of their own."""
    if not is_map(data) or "kind" in data or "apiVersion" in data:
        return None
    servers = data.get("modelServers")
    # `images: {default: ...}` since late 2024, `gpuImage` / `cpuImage` / `image` before
    if not (is_map(servers) and any(is_map(v) and (is_map(v.get("images")) or any(
            str(k).lower().endswith("image") for k in v)) for v in servers.values())):
        return None
    names, keys = _OPERATOR_CHARTS["kubeai"]
    chart = chart_name_above(file)
    if (chart is not None and chart not in names) or not all(k in keys or k in COMMON_KEYS for k in data):
        return None
    return "kubeai"


_ENV_STYLE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Za-z0-9]+)*$")  # LLM_MODEL_ID, OMPI_MCA_btl_vader_...
_CHART_NAME = re.compile(r"^name:\s*[\"']?([A-Za-z0-9._-]+)", re.MULTILINE)


def chart_name_above(file: str | None, levels: int = 3) -> str | None:
    """The `name` of the Chart.yaml in the values file's directory or up to ``levels`` - 1 parents (values
    overlays often sit in `values/` or `ci/`), or None when there is none or it names nothing."""
    # a Chart.yaml above the scanned folder is still read (its `name` only): a regular file
    found = _chart_yaml_above(file, levels, check_inside=False)
    match = _CHART_NAME.search(found[1]) if found else None
    return match.group(1) if match else None


def _chart_yaml_above(file: str | None, levels: int, check_inside: bool = True) -> tuple[str, str] | None:
    """(folder, text) of the first Chart.yaml in the file's folder or its ``levels`` - 1 parents."""
    if not file:
        return None
    import os

    from vramlint.textfile import read_text

    directory = os.path.dirname(os.path.abspath(file))
    for _ in range(levels):
        for name in ("Chart.yaml", "Chart.yml"):
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                text, _skipped = read_text(path, path, check_inside=check_inside)
                return directory, text or ""
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return None


def missing_dependencies(file: str | None) -> list[str]:
    """The dependencies that the chart of a values file (its Chart.yaml beside it or in the parent folder, inside
    the scanned paths) declares but that are not unpacked under its `charts/`: each said as Helm fetches it
    (`name version from repository`, or `packaged as charts/x.tgz`). Values for such a dependency configure a
    workload whose templates vramlint cannot see."""
    import os

    from vramlint.yamlload import load_text

    found = _chart_yaml_above(file, 2)
    if not found or "dependencies" not in found[1]:
        return []
    directory, text = found
    docs = load_text(text, os.path.join(directory, "Chart.yaml"))[0]
    deps = docs[0].data.get("dependencies") if docs and is_map(docs[0].data) else None
    out = []
    for dep in deps if is_seq(deps) else []:
        name = scalar_text(dep.get("name")) if is_map(dep) else None
        if not name or os.path.isfile(os.path.join(directory, "charts", name, "Chart.yaml")):
            continue
        version, repo = scalar_text(dep.get("version")), scalar_text(dep.get("repository"))
        packed = [f for f in _listdir(os.path.join(directory, "charts")) if f.startswith(name) and f.endswith(".tgz")]
        if packed:
            out.append(f"{name} (packaged as charts/{packed[0]}, which vramlint does not unpack)")
        else:
            out.append(name + (f" {version}" if version else "") + (f" from {repo}" if repo else ""))
    return out


def _listdir(path: str) -> list[str]:
    import os

    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _whole_shape(data: Any, shape: str, chart: str | None) -> bool:
    """The values are the known chart's as a whole: its Chart.yaml name (when there is one) and its keys."""
    names, keys = _CHARTS[shape]
    if chart is not None and chart not in names:
        return False
    env_keys = shape == "opea-vllm"
    return all(k in keys or k in COMMON_KEYS or (env_keys and _ENV_STYLE.match(str(k))) for k in data)


def detect(data: Any, file: str | None = None) -> str | None:
    """Which known chart a values mapping belongs to, or None. ``file`` (the values file) lets a Chart.yaml above
    it confirm or rule out a chart."""
    if not is_map(data) or "kind" in data or "apiVersion" in data:
        return None
    shape = _candidate(data)
    chart = chart_name_above(file) if shape in _CHARTS else None
    if shape in _CHARTS and not _whole_shape(data, shape, chart):
        return "container" if data.get("image") is not None and _container_like(data) else None
    if shape == "vllm-block" and chart is None and not _chart_keys_in_vllm_block(data["vllm"]):
        # `vllm: {model: ..., dtype: ..., tensor_parallel_size: ...}` with no chart above: an application's own
        # settings (engine arguments by their Python names), not the chart's values, whose block writes its flags
        # in camelCase (gpuMemoryUtilization, maxModelLen, additionalArgs)
        return None
    return shape


def _chart_keys_in_vllm_block(block: Any) -> bool:
    """The vllm-helm chart's own keys in a `vllm:` block, besides `model` (which any settings file may have)."""
    return any(k in _ARDGE_FLAGS or (k in _ARDGE_OTHER and k != "model") for k in block)


def _candidate(data: Any) -> str | None:
    """The chart the values' distinctive keys point at (confirmed by `detect`)."""
    catalog = data.get("catalog")
    if is_map(catalog) and any(is_map(v) and ("engine" in v or "url" in v) for v in catalog.values()):
        return "kubeai-models"
    sample = data.get("sampleApplication")
    if is_map(sample) and (is_map(sample.get("model")) or "prefill" in sample or "decode" in sample):
        return "llm-d"
    if isinstance(data.get("modelName"), str) and ("apiServer" in data or "nm-vllm" in (_image_text(data.get("image"))
                                                                                        or "")):
        return "nm-vllm"
    artifacts = data.get("modelArtifacts")
    if is_map(artifacts) and "uri" in artifacts and any(is_map(data.get(r)) for r in ("decode", "prefill")):
        return "llm-d-modelservice"
    vllm = data.get("vllm")
    if is_map(vllm) and ("model" in vllm or any(k in vllm for k in _ARDGE_FLAGS)):
        return "vllm-block"
    model = data.get("model")
    if is_map(model) and "id" in model and ("tensorParallelSize" in data or "maxModelLen" in data):
        return "gke-ai-inference"
    image = data.get("image")
    if "LLM_MODEL_ID" in data or "extraCmdArgs" in data or is_map(data.get("extraCmd")):
        if _image_text(image) and "vllm" in (_image_text(image) or "").lower():
            return "opea-vllm"
        if "LLM_MODEL_ID" in data and ("accelDevice" in data or "extraCmdArgs" in data):
            return "opea-vllm"
    if is_map(image) and "command" in image:
        return None  # the vLLM example chart (`image.command`), read by helm_values
    if image is not None and _container_like(data):
        return "container"
    return None


def _image_text(image: Any) -> str | None:
    if isinstance(image, str):
        return image
    if not is_map(image):
        return None
    repo = scalar_text(image.get("repository"))
    if not repo:
        return None
    registry = scalar_text(image.get("registry"))
    if registry and not repo.startswith(registry):
        repo = f"{registry}/{repo}"
    tag = scalar_text(image.get("tag"))
    return f"{repo}:{tag}" if tag else repo


def _container_like(data: Any) -> bool:
    from vramlint.cmdline import is_vllm_image

    image = _image_text(data.get("image"))
    if image and is_vllm_image(image):
        return True
    for key in _ARG_KEYS + ("command",):
        value = data.get(key)
        words = [str(w) for w in value] if is_seq(value) else [str(value)] if isinstance(value, str) else []
        if any(w.split("=", 1)[0] in _VLLM_WORDS for w in words) or any("vllm" in w.lower() for w in words):
            return True
    return False


def extract_known(doc: Any, shape: str) -> tuple[list[Server], list[Problem]]:
    data = doc.data
    servers: list[Server] = []
    problems: list[Problem] = []
    if shape == "kubeai-models":
        _kubeai_catalog(doc, data, servers, problems)
    elif shape == "llm-d":
        _llm_d(doc, data, servers, problems)
    elif shape == "nm-vllm":
        _nm_vllm(doc, data, servers, problems)
    elif shape == "llm-d-modelservice":
        _llm_d_modelservice(doc, data, servers, problems)
    elif shape == "vllm-block":
        _vllm_block(doc, data, servers, problems)
    elif shape == "gke-ai-inference":
        _gke_ai_inference(doc, data, servers, problems)
    elif shape == "opea-vllm":
        _opea(doc, data, servers, problems)
    elif shape == "container":
        _container(doc, data, servers, problems)
    return servers, problems


# ---------------------------------------------------------------------------------------------------- helpers


def _tok(text: Any, loc: Location | None):
    from vramlint.cmdline import Token

    return Token(None if text is None else scalar_text(text), loc)


def _at(file: str, node: Any, key: str, path: str) -> Location | None:
    return value_location(file, node, key, join_path(path, key))


def _new_server(doc: Any, node: Any, path: str, kind: str, name: str | None) -> Server:
    file = doc.file
    location = (node_location(file, node, path) if path else None) or Location(file, 1, 1, yaml_path=path)
    return Server(file=file, location=location, source_format="helm-values", kind=kind, name=name,
                  container="vllm")


def _set_image(server: Server, file: str, parent: Any, key: str, path: str) -> None:
    image = parent.get(key) if is_map(parent) else None
    text = _image_text(image)
    if not text:
        return
    server.image = text
    if is_map(image):
        sub = "tag" if "tag" in image else "repository"
        server.image_location = _at(file, image, sub, join_path(path, key))
    else:
        server.image_location = _at(file, parent, key, path)
    server.vllm_version = version_from_image(text)


def _finish(server: Server, invocation: Any, problems: list[Problem]) -> None:
    apply_invocation(server, invocation)
    loc = server.location
    problems.extend(Problem(server.file, loc.line, loc.column, m) for m in invocation.problems)


def _unknown_template(tokens: list[Any]) -> list[Any]:
    from dataclasses import replace

    from vramlint.yamlload import has_template_marker

    return [replace(t, text=None) if t.text and ("{{" in t.text or has_template_marker(t.text)) else t
            for t in tokens]


# What the nm-vllm and GKE charts' templates run: the OpenAI server module, not `vllm serve`.
_API_SERVER_COMMAND = ("python3", "-m", "vllm.entrypoints.openai.api_server")


def _top_level_replicas_and_gpu(server: Server, file: str, data: Any) -> None:
    """The charts whose values keep `replicaCount` and the GPU request at the top level."""
    if "replicaCount" in data:
        server.replicas = to_int(data.get("replicaCount"))
    server.gpu = _gpu(file, data, "")


def _gpu(file: str, node: Any, path: str) -> GpuRequest | None:
    return combine_gpu(gpu_from_resources(file, node, path), gpu_from_scheduling(file, node, path))


def _model_from_uri(server: Server, uri: str | None, loc: Location | None) -> None:
    if not uri:
        return
    if uri.startswith("hf://"):
        server.model = uri[len("hf://"):].strip("/")
        server.model_location = loc
        return
    server.model = uri
    server.model_location = loc
    server.notes.append(f"the model is loaded from {uri}; which model it is is not known from the file")


# ---------------------------------------------------------------------------------------------------- KubeAI


def _kubeai_catalog(doc: Any, data: Any, servers: list[Server], problems: list[Problem]) -> None:
    from vramlint.cmdline import find_vllm_invocation
    from vramlint.extract.kubeai import _VENDOR_PREFIX

    file = doc.file
    catalog = data["catalog"]
    all_block = data.get("all")
    all_enabled = is_map(all_block) and all_block.get("enabled") is True
    disabled = 0
    for name, entry in catalog.items():
        if not is_map(entry):
            continue
        if (scalar_text(entry.get("engine")) or "").upper() != "VLLM":
            continue  # Ollama, Infinity, FasterWhisper: not vLLM
        if not (entry.get("enabled") is True or all_enabled):
            disabled += 1
            continue
        path = join_path("catalog", str(name))
        server = _new_server(doc, entry, path, "Model", str(name))
        read_env(file, entry, path, server)
        args = _unknown_template(tokens_from(file, entry, "args", path, doc.lines))
        from vramlint.extract.kubeai import _KUBEAI_PIN_SOURCE, kubeai_pinned_image, kubeai_pinned_version
        from vramlint.extract.podspec import mark_assumed

        pinned = kubeai_pinned_version(kubeai_pinned_image(scalar_text(entry.get("resourceProfile"))))
        invocation = find_vllm_invocation([_tok("vllm", None), _tok("serve", None)], args, "vllm/vllm-openai",
                                          dict(server.env), version=pinned)
        if invocation is None:
            continue
        if pinned:
            # the operator's pin, not the installed release: refusals only some releases make stay warnings
            server.assumed_version, server.assumed_version_source = pinned, _KUBEAI_PIN_SOURCE
            mark_assumed(invocation, _KUBEAI_PIN_SOURCE)
        _finish(server, invocation, problems)
        _model_from_uri(server, scalar_text(entry.get("url")), _at(file, entry, "url", path))
        for key in ("replicas", "minReplicas"):
            if key in entry:
                server.replicas = to_int(entry.get(key))
                break
        profile = scalar_text(entry.get("resourceProfile"))
        if profile:
            pname, _, count = profile.partition(":")
            vendor, hint = "nvidia", pname
            for prefix, v in _VENDOR_PREFIX:
                if pname.startswith(prefix):
                    vendor, hint = v, pname[len(prefix):]
                    break
            resolved = (resolve_gpu_hint(hint) or resolve_gpu_hint(pname)) if vendor == "nvidia" else None
            if pname.startswith("cpu"):
                server.notes.append(f"resourceProfile {profile}: a CPU profile, no GPU")
            else:
                server.gpu = GpuRequest(type=resolved or pname, count=to_int(count) if count else 1,
                                        evidence=f"KubeAI resourceProfile: {profile}",
                                        location=_at(file, entry, "resourceProfile", path), vendor=vendor)
        server.notes.append("KubeAI models chart: the image (and so the vLLM version) comes from KubeAI's own "
                            "configuration (modelServers.VLLM.images)")
        servers.append(server)
    if not servers and disabled:
        loc = key_location(file, data, "catalog", "catalog") or Location(file, 1, 1)
        problems.append(Problem(file, loc.line, loc.column,
                                f"KubeAI models chart: {disabled} vLLM catalog entr{'y is' if disabled == 1 else 'ies are'}"
                                " all disabled, so nothing is deployed or checked (set catalog.<name>.enabled: true, "
                                "or all.enabled: true, in the values that deploy them)", level="note"))


# ---------------------------------------------------------------------------------------------------- llm-d


def _llm_d(doc: Any, data: Any, servers: list[Server], problems: list[Problem]) -> None:
    from vramlint.cmdline import find_vllm_invocation

    file = doc.file
    sample = data["sampleApplication"]
    modelservice = data.get("modelservice")
    if sample.get("enabled") is False or (is_map(modelservice) and modelservice.get("enabled") is False):
        return
    model_block = sample.get("model")
    uri = scalar_text(model_block.get("modelArtifactURI")) if is_map(model_block) else None
    uri_loc = _at(file, model_block, "modelArtifactURI", "sampleApplication.model") if uri else None
    vllm_block = modelservice.get("vllm") if is_map(modelservice) else None
    gpu_node = sample
    for role, port in (("prefill", "8000"), ("decode", "8001")):
        block = sample.get(role)
        if not is_map(block):
            continue
        replicas = to_int(block.get("replicas")) if "replicas" in block else None
        if replicas == 0:
            continue
        path = join_path("sampleApplication", role)
        server = _new_server(doc, block, path, "ModelService", role)
        server.container = "vllm"
        if is_map(vllm_block):
            _set_image(server, file, vllm_block, "image", "modelservice.vllm")
        model_tok = _tok(uri[len("hf://"):].strip("/") if uri and uri.startswith("hf://") else uri, uri_loc)
        args = [_tok("--port", None), _tok(port, None)]
        args += _unknown_template(tokens_from(file, block, "extraArgs", path, doc.lines))
        command = [_tok("vllm", None), _tok("serve", None)] + ([model_tok] if uri else [])
        invocation = find_vllm_invocation(command, args, server.image, {})
        if invocation is None:
            continue
        _finish(server, invocation, problems)
        _model_from_uri(server, uri, uri_loc)
        server.replicas = replicas
        server.gpu = _gpu(file, gpu_node, "sampleApplication")
        server.shm = True  # the preset mounts a memory-backed /dev/shm
        server.notes.append(f"llm-d {role} pods: the modelservice controller builds them from the preset "
                            f"ConfigMap {scalar_text(sample.get('baseConfigMapRefName')) or '(chart default)'}; "
                            "flags the preset itself adds are not included")
        servers.append(server)


# ---------------------------------------------------------------------------------------------------- nm-vllm


def _nm_vllm(doc: Any, data: Any, servers: list[Server], problems: list[Problem]) -> None:
    """neuralmagic/helm-charts charts/nm-vllm templates/deployment.yaml: the command line is written by the
    template from `modelName` and `service.port` alone (`apiServer.extraArgs` is not used by it)."""
    from vramlint.cmdline import find_vllm_invocation

    file = doc.file
    server = _new_server(doc, data, "", "Deployment", None)
    server.location = key_location(file, data, "modelName", "modelName") or server.location
    _set_image(server, file, data, "image", "")
    service = data.get("service")
    port = scalar_text(service.get("port")) if is_map(service) and service.get("port") is not None else "80"
    command = [_tok(word, None) for word in _API_SERVER_COMMAND]
    args = [_tok("--model", None), _tok(data.get("modelName"), _at(file, data, "modelName", "")),
            _tok("--host", None), _tok("0.0.0.0", None), _tok("--port", None), _tok(port, None)]
    invocation = find_vllm_invocation(command, args, server.image or "vllm/vllm-openai", {})
    if invocation is None:
        return
    _finish(server, invocation, problems)
    _top_level_replicas_and_gpu(server, file, data)
    api = data.get("apiServer")
    if is_map(api) and is_seq(api.get("extraArgs")) and api.get("extraArgs"):
        server.notes.append("apiServer.extraArgs is not passed to vLLM by the nm-vllm chart's deployment template")
    servers.append(server)


# ---------------------------------------------------------------------------------------------------- llm-d-modelservice

# accelerator.resources of the chart's values.yaml: the resource each accelerator type requests
_MS_ACCELERATOR_RESOURCES = {"nvidia": "nvidia.com/gpu", "intel-i915": "gpu.intel.com/i915",
                             "intel-xe": "gpu.intel.com/xe", "intel-gaudi": "habana.ai/gaudi", "amd": "amd.com/gpu",
                             "google": "google.com/tpu", "rebellions-atom": "rebellions.ai/ATOM"}


def _ms_model_arg(uri: str, mount_path: str) -> str | None:
    """The model argument the chart's argsByProtocol writes for modelArtifacts.uri (None: oci, which it refuses)."""
    protocol, _, other = uri.partition("://")
    if protocol == "hf":
        return other
    if protocol == "pvc":
        return f"{mount_path}/{other.split('/', 1)[1] if '/' in other else ''}"
    if protocol == "pvc+hf":
        parts = other.split("/")
        return "/".join(parts[-2:]) if len(parts) >= 2 else other
    return None


def _llm_d_modelservice(doc: Any, data: Any, servers: list[Server], problems: list[Problem]) -> None:
    from vramlint.cmdline import find_vllm_invocation

    file = doc.file
    artifacts = data["modelArtifacts"]
    uri = scalar_text(artifacts.get("uri")) or ""
    uri_loc = _at(file, artifacts, "uri", "modelArtifacts")
    served = scalar_text(artifacts.get("name"))
    model = _ms_model_arg(uri, scalar_text(artifacts.get("mountPath")) or "/model-cache")
    accelerator = data.get("accelerator")
    requester = data.get("requester")
    if data.get("enabled") is False or data.get("multinode") is True or \
            (is_map(requester) and requester.get("enable") is True):
        return  # LeaderWorkerSets / requester ReplicaSets: other templates, not read here
    for role in ("prefill", "decode"):
        block = data.get(role)
        if not is_map(block) or block.get("create") is False or not is_seq(block.get("containers")):
            continue
        parallelism = block.get("parallelism") if is_map(block.get("parallelism")) else {}
        ppath = join_path(role, "parallelism")
        tensor = to_int(parallelism.get("tensor")) or 1
        data_par = to_int(parallelism.get("data")) or 1
        data_local = to_int(parallelism.get("dataLocal")) or data_par
        role_accel = block.get("accelerator")
        accel_type = (scalar_text(role_accel.get("type")) if is_map(role_accel) and "type" in role_accel else None) \
            or (scalar_text(accelerator.get("type")) if is_map(accelerator) else None) or "nvidia"
        table = accelerator.get("resources") if is_map(accelerator) and is_map(accelerator.get("resources")) else {}
        resource = None if accel_type == "cpu" else \
            scalar_text(table.get(accel_type)) or _MS_ACCELERATOR_RESOURCES.get(accel_type, "nvidia.com/gpu")
        for ci, container in enumerate(block["containers"]):
            command_kind = scalar_text(container.get("modelCommand")) if is_map(container) else None
            if command_kind not in ("vllmServe", "imageDefault"):
                continue  # `custom`: the container's own command, read by the generic container reading if at all
            cpath = join_path(join_path(role, "containers"), ci)
            server = _new_server(doc, container, cpath, "ModelService", role)
            server.container = scalar_text(container.get("name")) or "vllm"
            _set_image(server, file, container, "image", cpath)
            read_env(file, container, cpath, server)
            cmd_loc = _at(file, container, "modelCommand", cpath)
            model_tok = _tok(model, uri_loc)
            if command_kind == "vllmServe":
                command, args = [_tok("vllm", cmd_loc), _tok("serve", cmd_loc), model_tok], []
            else:
                command, args = [], [_tok("--model", uri_loc), model_tok]
            args += [_tok("--port", None), _tok("8000", None)]
            for flag, value, key in (("--tensor-parallel-size", tensor, "tensor"),
                                     ("--data-parallel-size", data_par, "data"),
                                     ("--data-parallel-size-local", data_local, "dataLocal")):
                if value > 1:
                    loc = _at(file, parallelism, key, ppath) or _at(file, parallelism, "data", ppath)
                    args += [_tok(flag, loc), _tok(str(value), loc)]
            if served:
                args += [_tok("--served-model-name", _at(file, artifacts, "name", "modelArtifacts")), _tok(served, None)]
            args += _unknown_template(tokens_from(file, container, "args", cpath, doc.lines))
            # imageDefault: the chart's contract is that the image's entrypoint is vLLM's server, whatever its name
            parse_image = server.image if command_kind == "vllmServe" and server.image else "vllm/vllm-openai"
            invocation = find_vllm_invocation(command, args, parse_image, dict(server.env))
            if invocation is None:
                continue
            _finish(server, invocation, problems)
            if "replicas" in block:
                server.replicas = to_int(block.get("replicas"))
            server.gpu = _ms_gpu(file, container, cpath, block, role, resource, data_local * tensor,
                                 _at(file, parallelism, "tensor", ppath))
            server.notes.append(f"llm-d-modelservice {role} pods: the chart's template writes the vLLM command "
                                f"line (modelCommand {command_kind}) from modelArtifacts and {role}.parallelism")
            servers.append(server)


def _ms_gpu(file: str, container: Any, cpath: str, block: Any, role: str, resource: str | None, count: int,
            count_loc: Location | None) -> GpuRequest | None:
    """The accelerators the chart requests: the container's own limit for the resource, else dataLocal x tensor."""
    limits = container.get("resources", {}).get("limits") if is_map(container.get("resources")) else None
    if resource is None:
        return gpu_from_scheduling(file, block, role)
    if is_map(limits) and resource in limits:
        request = gpu_from_resources(file, container, cpath)
    else:
        request = gpu_from_resources(file, {"resources": {"limits": {resource: count}}}, join_path(role, "parallelism"))
        if request is not None:
            request.location = request.count_location = count_loc
            request.evidence = f"{role}.parallelism: {count} x {resource} (the chart requests dataLocal x tensor)"
    return combine_gpu(request, gpu_from_scheduling(file, block, role))


# ---------------------------------------------------------------------------------------------------- vllm: block


def _vllm_block(doc: Any, data: Any, servers: list[Server], problems: list[Problem]) -> None:
    from vramlint.cmdline import find_vllm_invocation

    file = doc.file
    block = data["vllm"]
    server = _new_server(doc, block, "vllm", "Deployment", None)
    _set_image(server, file, data, "image", "")
    read_env(file, block, "vllm", server)
    command = [_tok("vllm", None), _tok("serve", None)]
    if "model" in block:
        command.append(_tok(block.get("model"), _at(file, block, "model", "vllm")))
    args = []
    for key, flag in _ARDGE_FLAGS.items():
        if key in block:
            loc = _at(file, block, key, "vllm")
            args += [_tok(flag, loc), _tok(block.get(key), loc)]
    if block.get("trustRemoteCode") is True:
        args.append(_tok("--trust-remote-code", _at(file, block, "trustRemoteCode", "vllm")))
    args += _unknown_template(tokens_from(file, block, "additionalArgs", "vllm", doc.lines))
    server.values_keys.update({flag[2:].replace("-", "_"): ("vllm", key) for key, flag in _ARDGE_FLAGS.items()
                               if key not in block})
    for key in block:
        if key not in _ARDGE_FLAGS and key not in _ARDGE_OTHER:
            server.notes.append(f"vllm.{key} is not turned into a vLLM flag by the vllm-helm chart's template; "
                                "put it in vllm.additionalArgs")
    invocation = find_vllm_invocation(command, args, server.image, dict(server.env))
    if invocation is None:
        return
    _finish(server, invocation, problems)
    if "replicaCount" in data:
        server.replicas = to_int(data.get("replicaCount"))
    kai = data.get("kaischeduler")
    if is_map(kai) and kai.get("gpuMemoryMiB") is not None:
        mib = to_int(kai.get("gpuMemoryMiB"))
        loc = _at(file, kai, "gpuMemoryMiB", "kaischeduler")
        # With the KAI scheduler the chart drops nvidia.com/gpu from the resources and asks for a memory share.
        server.gpu = GpuRequest(count=1, evidence=f"kaischeduler.gpuMemoryMiB: {mib} (KAI scheduler GPU share)",
                                location=loc, memory_gib=(mib / 1024.0) if mib else None, count_location=loc)
        sched = gpu_from_scheduling(file, data, "")
        if sched is not None and sched.type:
            server.gpu.type = sched.type
    else:
        server.gpu = _gpu(file, data, "")
    if "model" not in block:
        server.notes.append("vllm.model is not set in this file: the chart's values.yaml default applies")
    servers.append(server)


# ---------------------------------------------------------------------------------------------------- GKE


_GKE_FIXED_ARGS = ("--disable-log-requests", "--max-num-seq=512", "--gpu-memory-utilization=0.95",
                   "--num-scheduler-steps=8")


def _gke_ai_inference(doc: Any, data: Any, servers: list[Server], problems: list[Problem]) -> None:
    from vramlint.cmdline import find_vllm_invocation

    file = doc.file
    server = _new_server(doc, data, "", "Deployment", None)
    server.location = key_location(file, data, "model", "model") or server.location
    _set_image(server, file, data, "image", "")
    model = data["model"]
    args = [_tok(f"--model={scalar_text(model.get('id'))}", _at(file, model, "id", "model"))]
    args += [_tok(a, None) for a in _GKE_FIXED_ARGS[:1]]
    if "tensorParallelSize" in data:
        args.append(_tok(f"--tensor-parallel-size={scalar_text(data.get('tensorParallelSize'))}",
                         _at(file, data, "tensorParallelSize", "")))
    args += [_tok(a, None) for a in _GKE_FIXED_ARGS[1:]]
    if "maxModelLen" in data:
        args.append(_tok(f"--max-model-len={scalar_text(data.get('maxModelLen'))}", _at(file, data, "maxModelLen", "")))
    command = [_tok(word, None) for word in _API_SERVER_COMMAND]
    invocation = find_vllm_invocation(command, args, server.image, {})
    if invocation is None:
        return
    _finish(server, invocation, problems)
    _top_level_replicas_and_gpu(server, file, data)
    server.values_keys.update({dest: ("", key) for dest, key in (("tensor_parallel_size", "tensorParallelSize"),
                                                                  ("max_model_len", "maxModelLen")) if key not in data})
    server.shm = True
    server.notes.append("GKE ai-inference chart: " + " ".join(_GKE_FIXED_ARGS) + " are written by the chart's "
                        "templates/deployment.yaml itself, not by this file")
    servers.append(server)


# ---------------------------------------------------------------------------------------------------- OPEA


def _opea(doc: Any, data: Any, servers: list[Server], problems: list[Problem]) -> None:
    from vramlint.cmdline import find_vllm_invocation

    file = doc.file
    anchor = next((k for k in ("extraCmdArgs", "LLM_MODEL_ID", "extraCmd", "image") if k in data), None)
    server = _new_server(doc, data, "", "Deployment", None)
    if anchor:
        server.location = key_location(file, data, anchor, anchor) or server.location
    _set_image(server, file, data, "image", "")
    extra_cmd = data.get("extraCmd")
    command = tokens_from(file, extra_cmd, "command", "extraCmd", doc.lines) if is_map(extra_cmd) else []
    args = _unknown_template(tokens_from(file, data, "extraCmdArgs", "", doc.lines))
    if "LLM_MODEL_ID" in data:
        loc = _at(file, data, "LLM_MODEL_ID", "")
        args += [_tok("--model", loc), _tok(data.get("LLM_MODEL_ID"), loc)]
    else:
        # The template always writes `--model {{ .Values.LLM_MODEL_ID }}`; here its value is not known.
        args += [_tok("--model", None), _tok(None, None)]
        server.notes.append("LLM_MODEL_ID is not set in this file: the model comes from the chart's values.yaml "
                            "(or the parent chart); it is unknown here")
    if "port" in data:
        loc = _at(file, data, "port", "")
        args += [_tok("--port", loc), _tok(data.get("port"), loc)]
    invocation = find_vllm_invocation(command, args, server.image, {})
    if invocation is None and command:
        from vramlint.cmdline import is_vllm_image

        if is_vllm_image(server.image):
            words = " ".join(t.text or "?" for t in command)
            server.notes.append(f"extraCmd.command `{words}` is not vLLM's own entry point; its arguments are "
                                "read as vLLM's because the image is a vLLM build")
            invocation = find_vllm_invocation([], args, server.image, {})
    if invocation is None:
        return
    _finish(server, invocation, problems)
    _top_level_replicas_and_gpu(server, file, data)
    if "shmSize" in data:
        server.shm = True
    servers.append(server)


# ---------------------------------------------------------------------------------------------------- generic


def _container(doc: Any, data: Any, servers: list[Server], problems: list[Problem]) -> None:
    from vramlint.cmdline import find_vllm_invocation

    file = doc.file
    server = _new_server(doc, data, "", "Deployment", None)
    server.location = key_location(file, data, "image", "image") or server.location
    _set_image(server, file, data, "image", "")
    read_env(file, data, "", server)
    command = _unknown_template(tokens_from(file, data, "command", "", doc.lines))
    args = []
    for key in _ARG_KEYS:
        args += _unknown_template(tokens_from(file, data, key, "", doc.lines))
    invocation = find_vllm_invocation(command, args, server.image, dict(server.env))
    if invocation is None:
        return
    _finish(server, invocation, problems)
    if server.model is None and not command and not args:
        named = [n for n in _MODEL_ENV if server.env.get(n)]
        if named:
            # A custom image's entrypoint reads the variable; vLLM's default model would be a wrong guess.
            problems[:] = [p for p in problems if "default model" not in p.message]
        for name in named:
            value = server.env[name]
            loc = server.env_locations.get(name) or server.location
            problems.append(Problem(file, loc.line, loc.column,
                                    f"env {name} names {value!r}, but no vLLM command line is written here: the "
                                    f"image {server.image or '(unknown)'} decides how it is used, so the model "
                                    "is left unknown (give the vLLM arguments in args)", level="note"))
            break
    _top_level_replicas_and_gpu(server, file, data)
    servers.append(server)
