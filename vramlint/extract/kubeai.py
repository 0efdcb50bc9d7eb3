"""KubeAI `Model` objects: `url: hf://org/name`, `engine: VLLM`, `args`, `env`, `resourceProfile: name:count`.

KubeAI's operator builds the pod (image from its Helm values, `--model` from the url), so the image, shm and
pod scheduling are not in the file; what the Model says is. The image is the Model's `spec.image` when set;
else the one KubeAI's chart pins for the resource profile's `imageName` (charts/kubeai/values.yaml
`modelServers.VLLM.images`, substratusai/kubeai 2f32ef4: vllm/vllm-openai:v0.8.3 for `default`/`nvidia-gpu`,
substratusai/vllm-gh200:v0.8.3 for the GH200 profile, v0.6.3.post1 for `cpu`, v0.6.4.post1 for `google-tpu`).
That pin is the vLLM version the flags are checked against instead of the newest; the KubeAI release installed
is not known, so what only some releases refuse is a warning.
"""

from __future__ import annotations

from typing import Any

from vramlint.extract.podspec import (
    GpuRequest,
    apply_invocation,
    is_map,
    mark_assumed,
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


# resourceProfile name -> the chart's imageName for it (charts/kubeai/values.yaml resourceProfiles, 2f32ef4)
_KUBEAI_PIN_SOURCE = "the version KubeAI's chart pins (substratusai/kubeai 2f32ef4 charts/kubeai/values.yaml)"
_KUBEAI_IMAGES = {
    "default": "vllm/vllm-openai:v0.8.3",
    "nvidia-gpu": "vllm/vllm-openai:v0.8.3",
    "gh200": "substratusai/vllm-gh200:v0.8.3",
    "cpu": "substratusai/vllm:v0.6.3.post1-cpu",
    "google-tpu": "substratusai/vllm:v0.6.4.post1-tpu",
}


def _image_key(profile: str | None) -> str | None:
    name = (profile or "").partition(":")[0]
    if not name:
        key = "default"
    elif name == "nvidia-gpu-gh200":
        key = "gh200"
    elif name.startswith("nvidia-gpu-"):
        key = "nvidia-gpu"
    elif name == "cpu" or name.startswith("cpu-"):
        key = "cpu"
    elif name.startswith("google-tpu-"):
        key = "google-tpu"
    elif name.startswith("amd-gpu-"):
        return None  # substratusai/vllm-rocm:nightly: no release version
    else:
        key = "default"  # a profile the chart does not define: KubeAI falls back to the default image
    return key


def kubeai_pinned_image(profile: str | None) -> str | None:
    """The vLLM image KubeAI's chart (2f32ef4) pins for a resource profile name (None: a fork without a version)."""
    key = _image_key(profile)
    return _KUBEAI_IMAGES[key] if key else None


def kubeai_pinned_version(image: str | None) -> str | None:
    """The vLLM release of an image KubeAI's chart pins: its tag (vLLM's own image), or, for KubeAI's own builds
    (`substratusai/vllm-gh200:v0.8.3`, outside vLLM's release repositories), the release its tag names, which the
    pin already makes an assumption."""
    from vramlint.versions import assumed_version_from_tag, version_from_image

    return version_from_image(image) or assumed_version_from_tag(image)


def repository_chart_image(file: str, profile: str | None) -> tuple[str, str] | None:
    """The image the KubeAI chart *in the scanned repository* pins for the profile (KubeAI's own repository, or a
    fork vendoring the chart): ``(image, chart values path)``, found within a few folders above the Model file
    and only among the scanned files; then the release is the repository's own and known."""
    import os

    from vramlint.textfile import read_text
    from vramlint.yamlload import load_text

    key = _image_key(profile)
    if key is None:
        return None
    directory = os.path.dirname(os.path.abspath(file))
    for _ in range(6):
        candidate = os.path.join(directory, "charts", "kubeai", "values.yaml")
        if os.path.isfile(candidate):
            text, _skipped = read_text(candidate, candidate)  # refused outside the scanned paths
            docs = load_text(text, candidate)[0] if text else []
            data = docs[0].data if docs else None
            servers = data.get("modelServers") if is_map(data) else None
            vllm = servers.get("VLLM") if is_map(servers) else None
            images = vllm.get("images") if is_map(vllm) else None
            if is_map(images):
                image = scalar_text(images.get(key)) or scalar_text(images.get("default"))
                if image:
                    return image, os.path.relpath(candidate)
            return None
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return None


def _tokens(words: list[str]) -> list[Any]:
    from vramlint.cmdline import Token

    return [Token(w, None) for w in words]


# The container KubeAI's operator builds for a vLLM Model (internal/modelcontroller/engine_vllm.go,
# `vLLMPodForModel`, at 2f32ef4 and since): its own command, not the image's entrypoint, so the arguments are
# the api_server module's (no positional model, which `vllm serve` before 0.8.3 requires).
_OPERATOR_COMMAND = ["python3", "-m", "vllm.entrypoints.openai.api_server"]


def _operator_args(spec: Any, name: str | None) -> list[Any]:
    """The arguments the operator puts before `spec.args`: `--model=<the url's reference>` (the Hub repository,
    `/model` for a PVC; a cache profile's directory is the operator's, so it is left out here, and the model
    is read from the url below), `--served-model-name=<Model name>`, `--enable-lora` when adapters are set."""
    words: list[str] = []
    url = scalar_text(spec.get("url")) or ""
    if not scalar_text(spec.get("cacheProfile")):
        if url.startswith("hf://") and url[len("hf://"):].strip("/"):
            words.append("--model=" + url[len("hf://"):].strip("/"))
        elif url.startswith("pvc://"):
            words.append("--model=/model")
    if name:
        words.append("--served-model-name=" + name)
    if spec.get("adapters"):
        words.append("--enable-lora")
    return _tokens(words)


def extract_kubeai(doc: Any, obj: Any, path: str, records: Records) -> None:
    from vramlint.cmdline import find_vllm_invocation

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
    from vramlint.versions import version_from_image

    image = scalar_text(spec.get("image"))
    pinned = None
    in_repo = None if image else repository_chart_image(file, scalar_text(spec.get("resourceProfile")))
    if image:
        server.image = image
        server.image_location = value_location(file, spec, "image", join_path(spath, "image"))
        server.vllm_version = version_from_image(image)
    elif in_repo is not None:
        image = in_repo[0]
        server.image = image
        server.vllm_version = version_from_image(image)
        server.notes.append(f"KubeAI Model: the image is {image}, which the KubeAI chart of this repository pins "
                            f"for its resource profile ({in_repo[1]} modelServers.VLLM.images)")
    else:
        pinned_image = kubeai_pinned_image(scalar_text(spec.get("resourceProfile")))
        pinned = kubeai_pinned_version(pinned_image)
        if pinned:
            server.assumed_version, server.assumed_version_source = pinned, _KUBEAI_PIN_SOURCE
            server.notes.append(f"KubeAI Model: no spec.image, so KubeAI's chart picks the image by resource "
                                f"profile: {pinned_image} in substratusai/kubeai 2f32ef4 (the KubeAI release "
                                "installed may pin another)")
    invocation = find_vllm_invocation(_tokens(_OPERATOR_COMMAND), _operator_args(spec, ctx.name) + args,
                                      image or "vllm/vllm-openai", dict(server.env),
                                      version=server.vllm_version or pinned)
    if invocation is None:
        return
    if pinned and not server.vllm_version:
        mark_assumed(invocation, _KUBEAI_PIN_SOURCE)
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
    if profile and _image_key(profile) == "cpu":
        # KubeAI's chart's `cpu` profile (charts/kubeai/values.yaml resourceProfiles.cpu, 2f32ef4) requests CPU and
        # memory and no accelerator, and runs the CPU image: `cpu:2` is two of those shares, not two GPUs
        if not image:
            server.cpu_build = (f"KubeAI resourceProfile {profile}: the chart's `cpu` profile requests no GPU and "
                                "runs its CPU image")
    elif profile:
        name, _, count = profile.partition(":")
        vendor = "nvidia"
        hint = name
        for prefix, v in _VENDOR_PREFIX:
            if name.startswith(prefix):
                vendor, hint = v, name[len(prefix):]
                break
        # the catalog names NVIDIA and AMD GPUs (an AMD profile names its GPU too: amd-gpu-mi300x is an MI300X)
        resolved = resolve_gpu_hint(hint) or resolve_gpu_hint(name) if vendor in ("nvidia", "amd") else None
        server.gpu = GpuRequest(type=resolved or name, count=to_int(count) if count else 1,
                                evidence=f"KubeAI resourceProfile: {profile}",
                                location=value_location(file, spec, "resourceProfile", join_path(spath, "resourceProfile")),
                                vendor=vendor)
    server.ignore_rules = dict(ctx.ignore_rules)
    if not image and not pinned:
        server.notes.append("KubeAI Model: the image (and so the vLLM version) comes from KubeAI's own configuration")
    records.servers.append(server)

