"""What each vLLM release does at start-up: which engine runs, its defaults, and how it counts memory.

The facts come from the vLLM wheels on PyPI, read release by release (``vllm/engine/arg_utils.py``,
``vllm/config/cache.py``, ``vllm/envs.py`` of the releases named below). Where a change landed between two releases that were read, the later one is used.

Where the version comes from: the image tag (``vllm/vllm-openai:v0.6.4``), else ``--vllm-version`` / the
configuration, else :data:`DEFAULT_VERSION` — the newest release whose start-up arithmetic vramlint was
checked against (0.34.0). A deployment on ``latest`` runs whatever was newest when its image was pulled, so
the default is the newest release we know.
"""

from __future__ import annotations

import re
from dataclasses import field
from functools import lru_cache
from typing import Any

from vramlint.intparse import small_int
from vramlint.lean_dataclass import dataclass
from vramlint.textsafe import shortened

DEFAULT_VERSION = "0.34.0"

# ModelConfig.model's default, which `vllm serve` with no model tag and no --model (and the api_server with no
# --model) serves: "facebook/opt-125m" in vllm/engine/arg_utils.py and vllm/config.py up to 0.9.2,
# "Qwen/Qwen3-0.6B" in vllm/config.py from 0.10.0 (vLLM pull request 20335; vllm/config/model.py later)
DEFAULT_MODEL_QWEN_FROM = (0, 10, 0)


def vllm_default_model(version: str | None) -> str:
    parsed = parse_version(version) if version else None
    return "facebook/opt-125m" if parsed is not None and tuple(parsed[:3]) < DEFAULT_MODEL_QWEN_FROM \
        else "Qwen/Qwen3-0.6B"


VersionKey = tuple[int, int, int, int]

_VERSION_RE = re.compile(
    r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[.-]?(?:post|rc|dev|a|b)\d*)*(?:\+[\w.]+)?(?:-[\w.-]+)?$",
    re.IGNORECASE,
)


def parse_version(text: str | None) -> VersionKey | None:
    """``"0.6.4.post1"`` -> (0, 6, 4, 0); ``"v0.10.1.1"`` -> (0, 10, 1, 1); ``"0.11.0rc1"`` -> (0, 11, 0, 0).

    Pre-releases and dev builds count as the release they lead to (their behaviour is closest to it);
    ``latest``, ``nightly`` and anything that is not a version give None.
    """
    if not text:
        return None
    return _parse_version(text if type(text) is str else str(text))


@lru_cache(maxsize=4096)
def _parse_version(text: str) -> VersionKey | None:
    # a few distinct versions read again for every server and budget stage (10,000 servers: 65,000 calls)
    text = text.strip()
    # no release is written in 128 characters or more (a Docker tag's limit); the pattern's repeated suffix group
    # and its final `-[\w.-]+` read the same `-dev-dev...` in every split, so a long one is quadratic or worse
    if len(text) >= 128:
        return None
    m = _VERSION_RE.match(text)
    if not m:
        return None
    parts = [int(p) if p is not None else 0 for p in m.groups()]
    return (parts[0], parts[1], parts[2], parts[3])


def normalize_version(text: str | None) -> str | None:
    """The version as vramlint prints it (no leading v; post/rc/dev kept), or None if it is not a version."""
    if parse_version(text) is None:
        return None
    return str(text).strip().lstrip("vV")


# A requirement that pins vLLM exactly (`vllm==0.6.6.post1`, `vllm[audio] == 0.8.5`, `vllm===0.7.3; python_version
# >= "3.9"`): what pip installs whatever the image holds. A range (`vllm>=0.6`) or a bare `vllm` names no release.
_PIN_RE = re.compile(r"^\s*vllm\s*(?:\[[^\]]*\])?\s*===?\s*([^\s;,#]+)\s*(?:;.*)?$", re.IGNORECASE)


# a `pip install` command up to the shell operator or line end that ends it
_PIP_INSTALL_RE = re.compile(r"\b(?:uv\s+)?pip3?\s+install\b([^;&|\n]*)")


def pip_installed_vllm(script: str) -> str | None:
    """The vLLM release a shell text's `pip install` commands pin exactly (`pip install vllm==0.6.3`, `uv pip
    install "vllm[audio]==0.8.5"`), or None: no pin, pins of two releases, or a build with a local label
    (`+cu118`), which is not a release."""
    if not isinstance(script, str) or len(script) > 1_000_000:
        return None
    pins = {v for word in pip_install_words(script)
            if (v := pinned_vllm(word) or _vcs_vllm_release(word)) is not None and "+" not in v}
    return next(iter(pins)) if len(pins) == 1 else None


# a requirement naming vLLM itself, pinned or not (`vllm`, `vllm[audio]>=0.6`, `-U vllm`), not `vllm-flash-attn`
_VLLM_REQUIREMENT_RE = re.compile(r"^vllm\s*(?:\[[^\]]*\])?\s*(?:[<>=!~].*)?$", re.IGNORECASE)


def pip_installs_vllm(script: str) -> bool:
    """Whether a shell text's `pip install` commands install vLLM itself, whatever release (see pip_installed_vllm
    for which one)."""
    if not isinstance(script, str) or len(script) > 1_000_000:
        return False
    return any(_VLLM_REQUIREMENT_RE.match(word) or _VCS_VLLM_RE.match(word) for word in pip_install_words(script))


# pip's VCS form of vLLM's own repository (`git+https://github.com/vllm-project/vllm.git@v0.9.2`, also the word after
# `vllm @`): pip builds the ref named after the last `@`. A release tag names that release; a branch or a commit
# names no release (pip_installs_vllm still counts it, so the version is said unknown once).
_VCS_VLLM_RE = re.compile(r"^git\+(?:https?|ssh)://(?:[^/@\s]+@)?github\.com[/:]vllm-project/vllm(?:\.git)?"
                          r"(?:@([^\s#]+))?(?:#.*)?$", re.IGNORECASE)
_RELEASE_TAG_RE = re.compile(r"^v?(\d+\.\d+\.\d+(?:\.\d+)?(?:\.?(?:post|rc)\d+)?)$", re.IGNORECASE)


def _vcs_vllm_release(word: str) -> str | None:
    m = _VCS_VLLM_RE.match(word)
    tag = m.group(1) if m and m.group(1) else None
    t = _RELEASE_TAG_RE.match(tag) if tag else None
    return normalize_version(t.group(1)) if t else None


# pip's VCS form of any repository named `vllm` (vllm-project's or a fork's, on any host: GitHub's forks keep the
# upstream name), the ref after the last `@`. vLLM's plugins (vllm-ascend, vllm-omni, ...) are other names and
# install over a vLLM, so they are not vLLM itself.
_VCS_ANY_VLLM_RE = re.compile(r"^git\+(?:https?|ssh|git)://(?:[^/@\s]+@)?[^/\s]+(?:/[^/\s@]+)*/vllm(?:\.git)?"
                              r"(?:@([^\s#]+))?(?:#.*)?$", re.IGNORECASE)


def pip_vllm_source(script: str) -> tuple[str, str | None] | None:
    """(repository URL, ref) of a `pip install git+<repo>/vllm[@ref]` that builds vLLM from source with no release:
    a fork, or vllm-project's repository at a branch, a commit or no ref (its release tags are releases, see
    pip_installed_vllm). None when no such install is written."""
    if not isinstance(script, str) or len(script) > 1_000_000:
        return None
    for word in pip_install_words(script):
        m = _VCS_ANY_VLLM_RE.match(word)
        if m and _vcs_vllm_release(word) is None:
            return word[4:].split("#", 1)[0].rsplit("@", 1)[0] if m.group(1) else word[4:].split("#", 1)[0], m.group(1)
    return None


def is_vllm_repository(url: str | None) -> bool:
    """A git repository named `vllm` (vllm-project's or a fork's): what `git clone` of it and an install of the
    checkout build is vLLM itself."""
    if not isinstance(url, str) or len(url) > 2000:
        return False
    name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name.lower() in ("vllm", "vllm.git") and ("/" in url or ":" in url)


def release_of_checkout(url: str | None, ref: str | None) -> str | None:
    """The vLLM release a checkout of ``url`` at ``ref`` is: only vllm-project's own repository, at a release tag
    (`v0.9.2`, `tags/v0.9.2`); a fork's tags number the fork's builds, a branch or a commit is no release."""
    if not url or not ref or not re.search(r"(?:^|[/:])vllm-project/vllm(?:\.git)?/?$", url, re.IGNORECASE):
        return None
    t = _RELEASE_TAG_RE.match(ref.removeprefix("refs/").removeprefix("tags/"))
    return normalize_version(t.group(1)) if t else None


def pip_install_words(script: str):
    """The words of each `pip install` command, up to the shell operator that ends it, unquoted."""
    for m in _PIP_INSTALL_RE.finditer(script):
        for word in m.group(1).split():
            yield word.strip("'\"\\")


def pinned_vllm(requirement: object) -> str | None:
    """The vLLM version a pip requirement pins exactly, or None (another package, a range, a URL)."""
    if not isinstance(requirement, str) or len(requirement) > 500:
        return None
    m = _PIN_RE.match(requirement)
    return normalize_version(m.group(1)) if m else None


# The major version of the newest vLLM release vramlint knows: a tag naming a higher one is not a vLLM release.
_NEWEST_MAJOR = int(DEFAULT_VERSION.split(".", 1)[0])

# A tag that starts with the version: `v0.6.4`, `0.8.5.post1`, `v0.10.1.1`, `v0.10.1-cu128`, `v0.7.0rc1`.
_TAG_VERSION_RE = re.compile(
    r"^v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?(?:post|rc|dev)\d*)?)(?:$|[-+_])", re.IGNORECASE
)
# Vendor builds name the vLLM release inside a longer tag: `rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521`.
_EMBEDDED_VERSION_RE = re.compile(
    r"vllm[-_]v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?(?:post|rc|dev)\d*)?)(?:$|[-+_])", re.IGNORECASE
)
# The repositories vLLM's release pipeline pushes each release to under its version tag (.buildkite's release
# pipeline: `vllm/vllm-openai:v<version>` and its -rocm/-cpu/-tpu siblings on Docker Hub, the `q9t5s3a7/vllm-*-release-repo`
# repositories on public ECR), also behind a registry prefix that keeps their path (a mirror or pull-through cache:
# `mirror.gcr.io/vllm/vllm-openai`, `harbor.example/dockerhub/vllm/vllm-openai`). Only there is a plain version tag
# evidence of the release the image holds: other repositories number their own builds, whatever their tags look
# like (`vllm-cpu-openai-ubi9:0.3` is built from a fork's commit; AWS's, Red Hat's and llm-d's images count their own
# releases; a local `gemma4-vllm:0.20.1-cu129` says what its builder chose). A tag that names vLLM's release inside
# it (`rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521`) is the vendor saying which release it packaged, read anywhere.
_RELEASE_REPOSITORY_RE = re.compile(r"(?:^|/)(?:vllm/vllm-[\w.-]+|vllm-openai(?:-rocm|-cpu)?|q9t5s3a7/vllm[\w.-]*-release-repo)$",
                                    re.IGNORECASE)

# Repositories whose tags follow another project's versioning (NGC's YY.MM, LMCache, Ray), not vLLM's. Neural
# Magic's nm-vllm numbers its own releases: its 0.3.0 came out in May 2024 (neuralmagic/nm-vllm#241), when vLLM
# was at 0.4.2. NVIDIA Dynamo's runtime images (nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0) carry Dynamo's release.
_OTHER_VERSIONING_RE = re.compile(r"(^|/)(lmcache|nvidia/vllm|ray-llm|ray-ml|ray|nm-vllm[\w-]*|ai-dynamo)(:|$|/)",
                                  re.IGNORECASE)


def version_from_image(image: str | None) -> str | None:
    """The vLLM version an image tag names: ``vllm/vllm-openai:v0.9.2`` -> "0.9.2"; ``:latest`` -> None.

    Only images whose repository says vLLM are read (a ``python:3.11`` tag is not a vLLM version), and not
    those whose tags count another project's releases (``nvcr.io/nvidia/vllm:25.09-py3`` is an NGC monthly
    container, ``lmcache/vllm-openai:v0.3.9`` an LMCache release). A bare digest (``@sha256:``) says nothing;
    with ``tag@digest`` the tag names the release the digest was taken from.
    """
    if not image or not isinstance(image, str):
        return None
    return _version_from_image(str(image))


@lru_cache(maxsize=4096)
def _version_from_image(image: str) -> str | None:
    ref = image.split("@", 1)[0]
    repo, _, tag = ref.rpartition(":")
    if not repo or "/" in tag:  # `registry:5000/name` has no tag
        return None
    if "vllm" not in repo.lower():
        return None
    m = _EMBEDDED_VERSION_RE.search(tag)
    if m is None:
        if _OTHER_VERSIONING_RE.search(repo) or not _RELEASE_REPOSITORY_RE.search(repo):
            # a plain version tag is vLLM's release only on vLLM's own release repositories (or a mirror that
            # keeps their path): another project's image numbers its own builds
            return None
        m = _TAG_VERSION_RE.match(tag)
        if m is None:
            return None
        major = small_int(m.group(1).split(".", 1)[0])
        if major is None or major > _NEWEST_MAJOR:
            # vLLM has released no such major version (every release up to DEFAULT_VERSION is 0.x): the tag
            # counts another project's releases (Red Hat AI Inference Server's `rhaiis/vllm-cuda-rhel9:3.2.0`)
            # or is a vendor's date (`2024.10`)
            return None
    return normalize_version(m.group(1))


# How a version read from the tag of an image outside vLLM's release repositories is named (see
# assumed_version_from_tag): evidence short of certainty, checked as an assumed version.
OUTSIDE_RELEASE_REPOSITORIES = "an image outside vLLM's release repositories"


def assumed_version_from_tag(image: str | None) -> str | None:
    """The vLLM release a third-party image's plain tag looks like (``substratusai/vllm-gh200:v0.8.3`` ->
    "0.8.3"), when ``version_from_image`` reads none: a builder often tags a rebuild of vLLM with the release it
    built from, but nothing makes it so (other projects number their own builds), so the release is an assumption:
    arguments are checked against it and what holds only for it is a warning. None for repositories whose tags
    follow another project's numbering, and for tags that name no release vLLM has a major version of."""
    if not image or not isinstance(image, str) or version_from_image(image) is not None:
        return None
    ref = image.split("@", 1)[0]
    repo, _, tag = ref.rpartition(":")
    if not repo or "/" in tag or "vllm" not in repo.lower() or _OTHER_VERSIONING_RE.search(repo):
        return None
    m = _TAG_VERSION_RE.match(tag)
    # vLLM numbers every release major.minor.patch; a shorter number (`vllm-cpu-openai-ubi9:0.3`) is a project's own
    if m is None or m.group(1).count(".") < 2:
        return None
    major = small_int(m.group(1).split(".", 1)[0])
    if major is None or major > _NEWEST_MAJOR:
        return None
    key = parse_version(m.group(1))
    if key is not None and key[:3] < OLDEST_TABLED_RELEASE:
        # older than every release whose arguments vramlint has read: a builder's own numbering (`vllm-dev:0.1.0`
        # for a container that installs vLLM from source) far likelier than a 2023 vLLM, and checking the flags of
        # today's `vllm serve` against 0.4.3's table would refuse most of them
        return None
    return normalize_version(m.group(1))


# the oldest release vramlint/data/vllm_args.json covers (a test keeps the two the same)
OLDEST_TABLED_RELEASE = (0, 4, 3)


def assumed_tag_source(image: str) -> str:
    """Where an assumed version read from a third-party tag came from, in the words findings use."""
    return f"the tag of {image}, {OUTSIDE_RELEASE_REPOSITORIES}"


def assumed_caveat(source: str | None) -> str:
    """Why an assumed version may not be the one that runs: the operator's release, or the image's builder."""
    if source and OUTSIDE_RELEASE_REPOSITORIES in source:
        return "the release the image was built from is not known"
    return "the operator release installed is not known"


# vLLM's own images on Docker Hub (docker/Dockerfile's vllm-openai target and its CPU/ROCm/TPU siblings): their
# `latest` tags move to each release when it is published.
_OWN_IMAGE_RE = re.compile(r"^(?:(?:docker\.io|index\.docker\.io|registry-1\.docker\.io)/)?vllm/vllm-[\w.-]+$",
                           re.IGNORECASE)


def image_parts(image: str) -> tuple[str, str]:
    """(repository, tag) of an image reference, its digest left out; the tag is "" when none is written (the
    port of `registry:5000/name` is no tag)."""
    ref = image.split("@", 1)[0]
    repo, colon, tag = ref.rpartition(":")
    if not colon or "/" in tag:
        return ref, ""
    return repo, tag


def is_own_vllm_image(image: str | None) -> bool:
    """An image of vLLM's own on Docker Hub (vllm/vllm-openai and its siblings), whatever its tag: it holds no model."""
    if not image or not isinstance(image, str):
        return False
    return bool(_OWN_IMAGE_RE.match(image_parts(image)[0]))


# A tag part that names a commit (7 to 40 hex digits, one of them a letter) or a build date (20YYMMDD)
_BUILD_PART_RE = re.compile(r"(?:^|[-_.+])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?:$|[-_.+])"
                            r"|(?:^|[-_.+])20\d{6}(?:$|[-_.+])", re.IGNORECASE)


def built_from_commit(image: str | None) -> bool:
    """A tag that names a release and also a commit or a build date (``aibrix/vllm-openai:v0.6.1-edb07092-20250118``):
    an image built from a commit of that release's line, which may hold later arguments and choices than the
    release itself, so what the release's parser refuses may be accepted there."""
    if not image or not isinstance(image, str):
        return False
    tag = image_parts(image)[1]
    if not tag:
        return False
    m = _TAG_VERSION_RE.match(tag)
    rest = tag[m.end():] if m else tag
    return bool(_BUILD_PART_RE.search(rest))


def runs_newest_release(image: str | None) -> bool:
    """An image of vLLM's own tagged ``latest`` (or ``latest-<arch>``): it runs the newest release.

    Kubernetes pulls a `:latest` image again for each new container (imagePullPolicy defaults to Always for it),
    and any machine that pulls it now gets the newest release, so what that release refuses is refused where the
    deployment starts. A digest, a custom build or another registry's copy says nothing about the release, and
    neither does a name without a tag: extractors stand one in for an image an operator or a chart picks."""
    if not image or not isinstance(image, str) or "@" in image:
        return False
    repo, colon, tag = image.rpartition(":")
    if not colon or "/" in tag or not _OWN_IMAGE_RE.match(repo):
        return False
    return tag.lower() == "latest" or tag.lower().startswith("latest-")


def why_no_version(image: str | None) -> str:
    """Why the image says no release, in the words a finding uses: a bare digest (``repo@sha256:...``) pins one
    image but names no release, and vramlint knows no digest's release (registries are not asked, and vLLM's own
    sources record none); otherwise the tag says none."""
    if image and isinstance(image, str) and "@" in image:
        ref, _, digest = image.partition("@")
        if ":" not in ref.rsplit("/", 1)[-1]:
            short = digest if len(digest) <= 19 else digest[:19] + "..."
            return (f"the image is pinned by digest ({ref}@{short}), which names no release: vramlint knows no "
                    "digest's release")
    return "the image tag does not say the version"


def at_least(key: VersionKey, *target: int) -> bool:
    return key >= target + (0,) * (4 - len(target))  # called tens of times per budget: no list built


@dataclass
class Behavior:
    """How one vLLM version will size memory for one server (engine, defaults, profiler, concurrency)."""

    version: str
    key: VersionKey
    engine: str  # v0 | v1
    engine_reason: str
    profiler: str  # v0-legacy | v0-0.6.4 | v0-snapshot | v1-peak | v1-snapshot | v1-consumed
    counts_cuda_context: bool  # non-torch memory includes the CUDA context (V0 0.6.4, V1 0.7 - 0.9.0)
    gpu_memory_utilization: float
    block_size: int
    chunked_prefill: bool
    max_num_seqs: int
    max_num_batched_tokens: int
    cudagraph_in_budget: bool
    concurrency: str  # v0 (blocks*block/len) | v1-tokens (0.8: tokens/len) | v1-blocks (blocks / blocks per request)
    hybrid_kv_manager: bool  # sliding-window layers sized by their window (V1 0.9.2+)
    mla_supported: bool  # MLA latent cache (0.7+); before, DeepSeek-V2 caches full K/V
    bf16_fallback: bool  # --dtype auto on a GPU without bf16 falls back to fp16 (0.9.0+) instead of failing
    # --performance-mode (V1 0.17+): "interactivity" captures every batch size up to 32 (_set_cudagraph_sizes)
    performance_mode: str = "balanced"
    # 0.34+: the KV cache is reserved as virtual memory and committed after warmup, sized from measured memory
    # (extensible_kv_cache below); the default utilisation is then 1.0
    extensible_kv_cache: bool = False
    # the V2 GPU model runner (vllm/v1/worker/gpu/): 0.22+ as v2_model_runner decides, always from 0.34
    v2_model_runner: bool = False
    sources: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)


def _truthy(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def select_engine(key: VersionKey, cc: tuple[int, int], args: dict, env: dict, model: Any = None) -> tuple[str, str, list]:
    """(engine, reason, errors) V0 up to 0.7 (V1 opt-in), V1 from 0.8 with fallbacks."""
    use_v1_env = env.get("VLLM_USE_V1")
    use_v1 = _truthy(use_v1_env)
    errors: list[dict[str, Any]] = []
    if not at_least(key, 0, 7):
        return "v0", "vLLM before 0.7 has only the V0 engine", errors
    if not at_least(key, 0, 8):
        if use_v1:
            return "v1", "VLLM_USE_V1=1 (V1 is opt-in in 0.7.x)", errors
        return "v0", "V0 is the default engine in 0.7.x", errors
    if at_least(key, 0, 11):
        return "v1", "vLLM 0.11+ has only the V1 engine", errors
    if use_v1 is False:
        return "v0", "VLLM_USE_V1=0", errors
    if at_least(key, 0, 10, 2):
        return "v1", "V1 is the default engine (0.10.2 no longer falls back to V0)", errors
    # 0.8.0 - 0.10.1.1: arg_utils._is_v1_supported_oracle falls back to V0 for unsupported features, or raises
    # when VLLM_USE_V1=1 was set explicitly.
    unsupported: list[tuple[str, str]] = []
    if cc < (8, 0):
        unsupported.append(("Compute Capability < 8.0", "tensor_parallel_size"))
    kv_dtype = str(args.get("kv_cache_dtype") or "auto")
    if not v1_kv_cache_dtype_supported(key, cc, kv_dtype, env):
        unsupported.append(("--kv-cache-dtype", "kv_cache_dtype"))
    dtype = str(args.get("dtype") or "auto").lower()
    if dtype in ("float32", "float"):
        unsupported.append(("--dtype", "dtype"))
    if str(args.get("quantization") or "").lower() == "gguf":
        unsupported.append(("--quantization gguf", "quantization"))
    layer_types = getattr(model, "layer_types", None) or []
    if any(t in ("mamba", "linear_attention") for t in layer_types) and not at_least(key, 0, 10):
        unsupported.append(("Mamba/hybrid models", "model"))
    if not unsupported:
        return "v1", "V1 is the default engine from 0.8", errors
    feature, arg = unsupported[0]
    if use_v1:
        errors.append({
            "code": "v1-unsupported",
            "message": f"VLLM_USE_V1=1 is not supported with {feature}.",
            "arg": arg,
        })
        return "v1", f"VLLM_USE_V1=1 with {feature}", errors
    return "v0", f"{feature} is not supported by the V1 Engine. Falling back to V0.", errors


def v1_kv_cache_dtype_supported(key: VersionKey, cc: tuple[int, int], kv_dtype: str, env: dict) -> bool:
    """Whether ``_is_v1_supported_oracle`` of 0.8.0 - 0.10.1.1 accepts this ``--kv-cache-dtype`` on a CUDA GPU.

    Read from the wheels' vllm/engine/arg_utils.py: 0.8.0 and 0.8.1 refuse every value but "auto"; from 0.8.2 an
    fp8 KV cache is accepted when FlashAttention will run (VLLM_ATTENTION_BACKEND unset or FLASH_ATTN_VLLM_V1) and
    ``flash_attn_supports_fp8()`` holds: FlashAttention 3 (the default on compute capability 9.x unless
    VLLM_FLASH_ATTN_VERSION=2) on a 9.x GPU; 0.10.0 - 0.10.1.1 (platforms/cuda.py is_kv_cache_dtype_supported)
    also accept compute capability 10.0.
    """
    kv_dtype = str(kv_dtype or "auto").lower()
    if kv_dtype == "auto":
        return True
    if not at_least(key, 0, 8, 2):
        return False
    if at_least(key, 0, 10) and tuple(cc) == (10, 0):
        return True
    backend = env.get("VLLM_ATTENTION_BACKEND")
    will_use_fa = backend is None or str(backend) == "FLASH_ATTN_VLLM_V1"
    fa3 = cc[0] == 9 and str(env.get("VLLM_FLASH_ATTN_VERSION") or "3").strip() != "2"
    return kv_dtype.startswith("fp8") and will_use_fa and fa3


def v1_forced_kv_cache_refusal(key: VersionKey, args: dict, env: dict) -> dict | None:
    """vLLM's NotImplementedError for ``VLLM_USE_V1=1`` with a ``--kv-cache-dtype`` the V1 engine of 0.8.0 -
    0.10.1.1 does not support (``_raise_or_fallback``), when the GPU is not known (with a known GPU,
    :func:`select_engine` decides).

    ``accepted_on`` names the GPUs on which the release accepts it (none for 0.8.0 and 0.8.1; Hopper from
    0.8.2, B200 too from 0.10). None when vLLM starts, or falls back to V0 (it does unless VLLM_USE_V1=1 is set).
    """
    if not _truthy(env.get("VLLM_USE_V1")) or not at_least(key, 0, 8) or at_least(key, 0, 10, 2):
        return None
    kv_dtype = args.get("kv_cache_dtype")
    if kv_dtype is None or str(kv_dtype).lower() == "auto":
        return None
    accepted_on = []
    if v1_kv_cache_dtype_supported(key, (9, 0), str(kv_dtype), env):
        accepted_on.append("Hopper (compute capability 9.x: H100, H200, H20, GH200)")
    if v1_kv_cache_dtype_supported(key, (10, 0), str(kv_dtype), env):
        accepted_on.append("B200 (compute capability 10.0)")
    return {
        "code": "v1-unsupported",
        "message": "NotImplementedError: VLLM_USE_V1=1 is not supported with --kv-cache-dtype.",
        "arg": "kv_cache_dtype",
        "accepted_on": accepted_on,
    }


def kv_connector_expandable_segments_refusal(key: VersionKey, args: dict, env: dict) -> dict | None:
    """vLLM's ValueError for a KV connector with ``PYTORCH_CUDA_ALLOC_CONF`` holding ``expandable_segments:True``
    (``VllmConfig._verify_kv_transfer_compat``, called from ``__post_init__`` after the connector that
    ``--kv-offloading-size`` makes is set up): from 0.21, whatever the connector, as PyTorch's VMM allocator can
    remap the KV cache's pages under the memory a connector registered. Exempt: 0.21 with ``--enable-sleep-mode``,
    0.22+ with the cumem allocator (``--enable-cumem-allocator``, or ``--enable-sleep-mode``, which turns it on:
    ``ModelConfig.__post_init__``). The test is vLLM's own, a case-sensitive substring of that one variable
    (``PYTORCH_ALLOC_CONF`` is not read). Read in the 0.19.0, 0.19.1, 0.20.0, 0.20.2 (absent), 0.21.0 - 0.32.0 and
    0.34.0 wheels. None where vLLM starts, or where the connector's name is not known (a
    ``--kv-transfer-config`` vramlint cannot read)."""
    if not at_least(key, 0, 21):
        return None
    conf = env.get("PYTORCH_CUDA_ALLOC_CONF")
    if not isinstance(conf, str) or "expandable_segments:True" not in conf:
        return None
    configured, name = kv_connector_name(key, args, env)
    if not configured or not name:
        return None
    sleep = bool(_truthy(args.get("enable_sleep_mode")))
    if sleep or (at_least(key, 0, 22) and _truthy(args.get("enable_cumem_allocator"))):
        return None
    if at_least(key, 0, 22):
        exempt, remedy = ("enable_cumem_allocator", "enable the cumem allocator (sleep mode does this "
                          "automatically and also routes KV allocations through CuMemAllocator's pool, where "
                          "expandable_segments is automatically disabled).")
        fix = ("remove expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF, or add --enable-cumem-allocator "
               "(or --enable-sleep-mode)")
    else:
        exempt, remedy = ("enable_sleep_mode", "enable sleep mode (which routes KV allocations through "
                          "CuMemAllocator's pool, where expandable_segments is automatically disabled).")
        fix = "remove expandable_segments:True from PYTORCH_CUDA_ALLOC_CONF, or add --enable-sleep-mode"
    return {
        "code": "kv-connector-expandable-segments",
        "message": (f"ValueError: KV connector {name} is incompatible with "
                    f"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True unless {exempt} is also enabled. PyTorch's "
                    "CUDA VMM allocator can remap KV cache virtual addresses to different physical pages, "
                    "invalidating any pinned/registered KV memory (e.g. IB memory regions registered by NIXL or "
                    f"Mooncake). Either unset expandable_segments:True or {remedy}"),
        "arg": "PYTORCH_CUDA_ALLOC_CONF",
        "short": (f"the {name} KV connector with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True is refused "
                  f"(VllmConfig, 0.21+) unless {'the cumem allocator' if at_least(key, 0, 22) else 'sleep mode'} "
                  "is on"),
        "also": ("kv_transfer_config", "kv_offloading_size"),  # the env var comes from elsewhere (envFrom)
        "fix": fix,
        "version_dependent": True,
    }


def removed_v1_runner_refusal(key: VersionKey, env: dict) -> dict | None:
    """vLLM 0.34's ValueError for ``VLLM_USE_V2_MODEL_RUNNER`` set to anything but "1" (the V1 model runner is
    gone): ``Platform.validate_environ`` (vllm/platforms/interface.py), which ``EngineArgs.create_engine_config``
    calls whatever ``--fail-on-environ-validation`` says; "1" only warns that it is redundant. It compares the
    variable's text, so "true" is refused too."""
    if not at_least(key, 0, 34) or "VLLM_USE_V2_MODEL_RUNNER" not in env:
        return None
    value = env.get("VLLM_USE_V2_MODEL_RUNNER")
    if not isinstance(value, str) or value == "1":
        return None  # a value vramlint cannot read (a template) is not judged
    return {
        "code": "v1-model-runner-removed",
        "message": (f"ValueError: VLLM_USE_V2_MODEL_RUNNER={value} is no longer supported: Model Runner V1 has been "
                    "removed. Unset this variable."),
        "arg": "VLLM_USE_V2_MODEL_RUNNER",
        "short": (f"VLLM_USE_V2_MODEL_RUNNER={value} is refused by vLLM 0.34 (Model Runner V1 removed; only \"1\" "
                  "is accepted, and it is redundant)"),
        "fix": "remove VLLM_USE_V2_MODEL_RUNNER from the environment",
        "version_dependent": True,
    }


def min_compute_capability(key: VersionKey) -> tuple[int, int]:
    """The lowest compute capability the CUDA kernels of the official build of this release run on.

    Read from the ``sm_XX`` cubins embedded in the PyPI wheels' extensions (``vllm/_C*.so``, ``_moe_C*.so``):
    0.4.3, 0.6.4, 0.8.5, 0.10.1, 0.11.0 and 0.14.0 - 0.19.0 carry sm_70 (Volta) code and nothing older; 0.20.0
    (the first CUDA 13 wheel, pinning torch 2.11, itself built for sm_75 and up), 0.21.0, 0.26.0 and 0.33.0
    start at sm_75 (Turing). A cubin runs on its own and later minor versions of the same major (sm_70 on 7.5,
    not the reverse), and no release ships sm_6x code or PTX for its kernels (from 0.6 one stray sm_52 kernel
    aside), so on a GPU below this the first vLLM kernel fails at start-up.
    """
    return (7, 5) if at_least(key, 0, 20) else (7, 0)


def default_utilization(key: VersionKey, extensible: bool = False) -> float:
    # vllm/config/cache.py: Field(default=0.92) from 0.20.0 (checked in the 0.20.0 wheel), 0.9 before; from 0.34
    # Field(default=None), which CacheConfig.resolved_gpu_memory_utilization reads as 1.0 with the extensible KV
    # cache and DEFAULT_GPU_MEMORY_UTILIZATION (0.92) without it (the 0.34.0 wheel).
    if extensible:
        return 1.0
    return 0.92 if at_least(key, 0, 20) else 0.9


# How each KV connector reaches the device KV cache (``KVConnectorBase_V1.kv_cache_access`` and its overrides,
# 0.34.0 wheel): LEGACY_IPC cannot share a driver-mapped cache; REGISTERS (UCX / RDMA registration) needs one
# physical allocation per segment, which ROCm's UCX cannot register yet; NIXL on device buffers also exports
# FABRIC handles, which need an IMEX channel. The others are IN_PROCESS.
_KV_ACCESS_LEGACY_IPC = frozenset({"LMCacheMPConnector"})
_KV_ACCESS_REGISTERS = frozenset({"MooncakeConnector", "MoRIIOConnector", "UMBPStoreConnector", "NixlConnector",
                                  "NixlPullConnector", "NixlPushConnector"})
_KV_ACCESS_FABRIC = frozenset({"NixlConnector", "NixlPullConnector", "NixlPushConnector"})


def _connector_access(name: str | None, transfer: Any) -> set[str]:
    """The KVCacheAccess flags of a connector by its registered name (MultiConnector: its children's union)."""
    if not name:
        return set()
    if name == "MultiConnector":
        extra = transfer.get("kv_connector_extra_config") if isinstance(transfer, dict) else None
        children = extra.get("connectors") if isinstance(extra, dict) else None
        out: set[str] = set()
        for child in children if isinstance(children, list) else []:
            if isinstance(child, dict):
                out |= _connector_access(child.get("kv_connector"), child)
        return out
    device = str(transfer.get("kv_buffer_device") or "cuda").lower() if isinstance(transfer, dict) else "cuda"
    if name in _KV_ACCESS_FABRIC and device == "cpu":
        return set()  # NIXL registers host staging buffers
    flags = set()
    if name in _KV_ACCESS_LEGACY_IPC:
        flags.add("legacy_ipc")
    if name in _KV_ACCESS_REGISTERS:
        flags.add("registers")
    if name in _KV_ACCESS_FABRIC:
        flags.add("fabric")
    return flags


def _custom_mem_pool(transfer: Any) -> bool:
    """``KVTransferConfig.uses_custom_mem_pool``: ``custom_mem_pool`` in the extra config, or a child's."""
    if not isinstance(transfer, dict):
        return False
    extra = transfer.get("kv_connector_extra_config")
    configs = [extra] if isinstance(extra, dict) else []
    if transfer.get("kv_connector") == "MultiConnector" and isinstance(extra, dict):
        configs += [c.get("kv_connector_extra_config") or {} for c in extra.get("connectors") or []
                    if isinstance(c, dict)]
    return any(isinstance(c, dict) and c.get("custom_mem_pool") for c in configs)


def extensible_kv_cache(key: VersionKey, engine: str, vendor: str, args: dict,
                        env: dict) -> tuple[bool, str, dict[str, Any] | None]:
    """(whether the extensible KV cache runs, why, vLLM's refusal when it was asked for where it cannot run), from
    ``VllmConfig._resolve_extensible_kv_cache`` (vllm/config/vllm.py, 0.34.0 wheel): unset, it is on on CUDA and
    ROCm unless ``--kv-cache-memory-bytes`` or ``--num-gpu-blocks-override`` sizes the cache, elastic EP runs, a
    KV connector shares the cache through legacy CUDA IPC (LMCacheMPConnector) or allocates it from its own
    ``custom_mem_pool``, or, on ROCm, a connector registers it (NIXL, Mooncake, MoRIIO, UMBP); NIXL on device
    buffers also needs an IMEX channel, without which it is left off. ``--enable-extensible-kv-cache`` where one
    of these holds is a ValueError; ``--no-enable-extensible-kv-cache`` turns it off."""
    if engine != "v1" or not at_least(key, 0, 34):
        return False, "", None
    requested = _truthy(args.get("enable_extensible_kv_cache"))
    transfer = _json_value(args.get("kv_transfer_config"))
    _, name = kv_connector_name(key, args, env)
    access = _connector_access(name, transfer)
    unsupported = None
    if vendor not in ("nvidia", "amd"):
        unsupported = "it is only supported on CUDA and ROCm"
    elif args.get("kv_cache_memory_bytes") not in (None, ""):
        unsupported = "it sizes the KV cache from measured memory, which kv_cache_memory_bytes overrides"
    elif args.get("num_gpu_blocks_override") not in (None, ""):
        unsupported = "it sizes the KV cache from measured memory, which num_gpu_blocks_override overrides"
    elif _truthy(args.get("enable_elastic_ep")):
        unsupported = ("elastic EP scale-up skips warmup and reuses the profiled KV cache size, so no measurement "
                       "would size the cache")
    elif "legacy_ipc" in access:
        unsupported = ("a KV connector (e.g. LMCacheMPConnector) shares the KV cache through legacy CUDA IPC, which "
                       "cannot export driver-mapped memory")
    elif _custom_mem_pool(transfer):
        unsupported = ("custom_mem_pool allocates the KV cache from a connector's memory pool, which a "
                       "driver-mapped cache cannot use")
    elif vendor == "amd" and access & {"registers", "fabric"}:
        unsupported = ("on ROCm, UCX and RDMA cannot yet register driver-mapped memory, which connectors that "
                       "register the KV cache (e.g. NIXL, Mooncake, MoRIIO, UMBP) require")
    if requested is False:
        return False, "off: --no-enable-extensible-kv-cache", None
    if requested and unsupported:
        return False, f"refused: {unsupported}", {
            "code": "extensible-kv-cache-unsupported",
            "message": f"enable_extensible_kv_cache: {unsupported}.",
            "arg": "enable_extensible_kv_cache",
        }
    if unsupported:
        return False, f"off: {unsupported}", None
    if "fabric" in access and not requested:
        # imex_channel_available() reads /dev/nvidia-caps-imex-channels, which a pod has only when a driver or a
        # DRA ComputeDomain gives it one: not shown by a manifest, and absent on an ordinary GPU node
        return False, (f"off: {name} exports the KV cache through FABRIC handles, which need an IMEX channel "
                       "(assumed absent: a plain GPU node has none; --enable-extensible-kv-cache turns it on)"), None
    return True, ("--enable-extensible-kv-cache" if requested else
                  "on by default in vLLM 0.34+ on CUDA and ROCm (VllmConfig._resolve_extensible_kv_cache)"), None


# KV connectors whose class subclasses SupportsHMA (vllm/distributed/kv_transfer/kv_connector/v1/*, by the name
# kv_transfer_config.kv_connector registers in kv_connector/factory.py), from the release whose VllmConfig consults
# it (0.22): the 0.22.0 - 0.26.0, 0.27.1 and 0.33.0 wheels. The others (LMCacheConnectorV1,
# LMCacheMPConnector, P2pNcclConnector, ExampleConnector, FlexKV, ...) turn the hybrid manager off.
_HMA_CONNECTORS: tuple[tuple[tuple[int, int], frozenset[str]], ...] = (
    ((0, 22), frozenset({"DecodeBenchConnector", "ExampleHiddenStatesConnector", "MooncakeConnector",
                         "MooncakeStoreConnector", "NixlConnector", "OffloadingConnector",
                         "SimpleCPUOffloadConnector"})),
    ((0, 24), frozenset({"NixlPullConnector", "NixlPushConnector"})),  # NixlBaseConnector's subclasses
    ((0, 33), frozenset({"HiSparseConnector", "MoRIIOConnector", "UMBPStoreConnector"})),
)


def _json_value(value: Any) -> Any:
    """A --*-config value as vLLM reads it: a dict, or JSON text."""
    if isinstance(value, str):
        import json
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def kv_connector_name(key: VersionKey, args: dict, env: dict) -> tuple[bool, str | None]:
    """(whether the engine runs a KV connector, its registered name when one is known).

    ``--kv-transfer-config`` names it; ``--kv-offloading-size`` (0.11.1+) makes one
    (``VllmConfig._post_init_kv_transfer_config``): OffloadingConnector for the native backend
    (SimpleCPUOffloadConnector with VLLM_USE_SIMPLE_KV_OFFLOAD, 0.19+), LMCache's connector for ``lmcache``
    (LMCacheConnectorV1, LMCacheMPConnector from 0.23)."""
    transfer = _json_value(args.get("kv_transfer_config"))
    name = None
    configured = transfer not in (None, "", {})
    if isinstance(transfer, dict) and isinstance(transfer.get("kv_connector"), str):
        # (KVTransferConfig.kv_connector is a str: a list or mapping there names no connector vramlint knows)
        name = transfer.get("kv_connector") or None
    offload = args.get("kv_offloading_size")
    if offload not in (None, "") and at_least(key, 0, 11, 1):
        configured = True
        backend = str(args.get("kv_offloading_backend") or "native").strip().lower()
        if backend == "lmcache":
            name = "LMCacheMPConnector" if at_least(key, 0, 23) else "LMCacheConnectorV1"
        elif backend == "native":
            simple = at_least(key, 0, 19) and _truthy(env.get("VLLM_USE_SIMPLE_KV_OFFLOAD"))
            name = "SimpleCPUOffloadConnector" if simple else "OffloadingConnector"
    return configured, (str(name) if name is not None else None)


def _connector_supports_hma(key: VersionKey, name: str | None, transfer: Any, depth: int = 0) -> bool:
    """``KVConnectorFactory.supports_hma_config`` (0.22+): the connector class subclasses SupportsHMA;
    MultiConnector only when every child connector does (MultiConnectors nested past 32 levels, which no
    deployment writes, are not followed: taken as not SupportsHMA, the manager off)."""
    if not name or not isinstance(name, str) or depth > 32:
        return False
    if name == "MultiConnector":
        extra = transfer.get("kv_connector_extra_config") if isinstance(transfer, dict) else None
        children = extra.get("connectors") if isinstance(extra, dict) else None
        if not isinstance(children, list) or not children:
            return False
        return all(isinstance(c, dict) and _connector_supports_hma(key, c.get("kv_connector"), c, depth + 1)
                   for c in children)
    return any(at_least(key, *since) and name in names for since, names in _HMA_CONNECTORS)


def hybrid_kv_cache_manager(key: VersionKey, engine: str, args: dict, env: dict,
                            model: Any) -> tuple[bool, str | None, dict[str, Any] | None]:
    """(whether V1's hybrid KV cache manager runs, why it is off when it is, the refusal when the user asked for it
    where vLLM cannot run it), from ``VllmConfig.__post_init__`` (vllm/config.py 0.9.2 - 0.10.0,
    vllm/config/__init__.py 0.10.1 - 0.11, vllm/config/vllm.py 0.12+; the 0.9.2, 0.10.0 - 0.14.0, 0.19.0 - 0.27.1
    and 0.33.0 wheels):

    * up to 0.12 a bool: off with --disable-hybrid-kv-cache-manager, a KV connector (--kv-transfer-config, or
      --kv-offloading-size), a --kv-events-config, or chunked local attention (Llama 4) with an EAGLE / MTP
      draft; from 0.10.1 chunked local attention alone too, unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE;
    * from 0.13 three states: with no preference it is off for those (KV events up to 0.19 only) and for a KV
      connector, from 0.22 only one that does not subclass SupportsHMA; --disable-hybrid-kv-cache-manager turns
      it off; --no-disable-hybrid-kv-cache-manager keeps it for a connector, and vLLM refuses it where it has
      to be off (ValueError)."""
    if engine != "v1" or not at_least(key, 0, 9, 2):
        return False, None, None
    explicit = _truthy(args.get("disable_hybrid_kv_cache_manager"))
    if explicit:
        return False, "off: --disable-hybrid-kv-cache-manager", None
    transfer = _json_value(args.get("kv_transfer_config"))
    connector, name = kv_connector_name(key, args, env)
    events = args.get("kv_events_config") not in (None, "", {})
    chunked = bool(getattr(model, "attention_chunk_size", None)) if model is not None else False
    spec = _json_value(args.get("speculative_config"))
    method = str(spec.get("method") or "").lower() if isinstance(spec, dict) else ""
    eagle = method in (("eagle", "eagle3", "mtp") if at_least(key, 0, 11) else ("eagle", "eagle3", "deepseek_mtp"))
    must: list[str] = []  # what turns it off whatever the user says (need_disable_hybrid_kv_cache_manager)
    if events and not at_least(key, 0, 20):
        must.append("--kv-events-config")
    if chunked and eagle:
        must.append(f"chunked local attention with the {method} draft")
    elif chunked and at_least(key, 0, 10, 1) and not _truthy(env.get("VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE")):
        must.append("chunked local attention (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE unset)")
    label = f"the {shortened(name, 80)} KV connector" if name else "a KV connector (--kv-transfer-config)"
    if not at_least(key, 0, 13):
        if connector:
            must.insert(0, label)
        if must:
            return False, "off: " + ", ".join(must), None
        return True, None, None
    if explicit is False:
        if must:
            return True, None, {
                "code": "hybrid-kv-manager-unsupported",
                "message": ("Hybrid KV cache manager was explicitly enabled but is not supported in this "
                            "configuration. Consider omitting the --no-disable-hybrid-kv-cache-manager flag to let "
                            f"vLLM decide automatically. (vramlint: {', '.join(must)})"),
                "arg": "disable_hybrid_kv_cache_manager",
            }
        return True, None, None
    if connector and not (at_least(key, 0, 22) and _connector_supports_hma(key, name, transfer)):
        must.insert(0, label + (" (not a SupportsHMA connector)" if at_least(key, 0, 22) else ""))
    if must:
        return False, "off: " + ", ".join(must), None
    return True, None, None


# DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES of vllm/config/vllm.py, by the release that introduced each list (read in
# the 0.22.0 - 0.28.0 wheels; 0.25's is also 0.25.1's).
_V2_RUNNER_ARCHITECTURES: tuple[tuple[VersionKey, frozenset[str]], ...] = (
    ((0, 28), frozenset({"DeepseekV2ForCausalLM", "DeepseekV4ForCausalLM", "GraniteMoeForCausalLM", "InklingForCausalLM",
                         "InklingForConditionalGeneration", "KimiK3ForConditionalGeneration",
                         "LongcatFlashNgramForCausalLM", "Qwen2MoeForCausalLM"})),
    ((0, 27), frozenset({"DeepseekV2ForCausalLM", "GraniteMoeForCausalLM", "InklingForCausalLM",
                         "InklingForConditionalGeneration", "KimiK3ForConditionalGeneration",
                         "LongcatFlashNgramForCausalLM", "Qwen2MoeForCausalLM"})),
    ((0, 26), frozenset({"DeepseekV2ForCausalLM", "GraniteMoeForCausalLM", "InklingForCausalLM",
                         "InklingForConditionalGeneration", "LongcatFlashNgramForCausalLM", "Qwen2MoeForCausalLM"})),
    ((0, 25), frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM"})),
    ((0, 24), frozenset({"Qwen3ForCausalLM", "DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM",
                         "LlamaForCausalLM", "MistralForCausalLM"})),
    ((0, 23), frozenset({"LlamaForCausalLM", "MistralForCausalLM", "Qwen3ForCausalLM"})),
    ((0, 22), frozenset({"Qwen3ForCausalLM"})),
)
_V2_SPEC_METHODS: tuple[tuple[VersionKey, tuple[str, ...]], ...] = (
    ((0, 26), ("eagle", "eagle3", "mtp", "dflash", "dspark")),
    ((0, 24), ("eagle", "eagle3", "mtp", "dflash")),
    ((0, 22), ("eagle", "eagle3", "mtp")),
)


# What ``_get_v2_model_runner_unsupported_features`` (vllm/config/vllm.py) lists from 0.29, when the V2 runner
# became the default for every model family, by the release that introduced each list (read in the 0.29.0 -
# 0.33.0 wheels): speculative methods the V2 runner lacks (0.29: any but the listed ones), and whether stock
# torch.compile, sequence parallelism at TP > 1, EAGLE-3 with pipeline parallelism, dual batch overlap, elastic
# EP, custom logits processors, KV-sharing fast prefill and mamba cache mode "all" still send a deployment to V1.
_V2_DEFAULT_BLOCKERS: tuple[tuple[VersionKey, dict], ...] = (
    ((0, 33), {"spec": ("suffix", "custom_class"), "flags": ()}),
    ((0, 32), {"spec": ("suffix", "medusa", "mlp_speculator", "custom_class"), "flags": ()}),
    ((0, 31), {"spec": ("ngram", "ngram_gpu", "suffix", "medusa", "mlp_speculator", "custom_class"),
               "flags": ("stock_compile", "sequence_parallel", "elastic_ep", "mamba_all")}),
    ((0, 30), {"spec": ("ngram", "ngram_gpu", "draft_model", "suffix", "medusa", "mlp_speculator", "custom_class"),
               "flags": ("stock_compile", "sequence_parallel", "elastic_ep", "logits_processors", "mamba_all")}),
    ((0, 29), {"spec_supported": ("eagle", "eagle3", "mtp", "dflash", "dspark", "extract_hidden_states"),
               "flags": ("stock_compile", "sequence_parallel", "eagle3_pp", "dbo", "elastic_ep", "logits_processors",
                         "kv_sharing_fast_prefill")}),
)
# ROCM_DEFAULT_MRV1_ARCHITECTURES (vllm/config/vllm.py): V1 on ROCm for these, 0.29 - 0.31 (0.32 dropped it)
_ROCM_V1_ARCHITECTURES: tuple[tuple[VersionKey, frozenset[str]], ...] = (
    ((0, 32), frozenset()),
    ((0, 30), frozenset({"DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM", "GlmMoeDsaForCausalLM"})),
    ((0, 29), frozenset({"DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM"})),
)


def _v2_default_blockers(key: VersionKey, args: dict, model: Any, vendor: str) -> list[str]:
    """What sends a deployment of 0.29 - 0.33 to the V1 runner although V2 is the default (see
    _V2_DEFAULT_BLOCKERS), as far as a command line says it."""
    table = next(t for since, t in _V2_DEFAULT_BLOCKERS if at_least(key, *since))
    found: list[str] = []
    arch = str(getattr(model, "architecture", "") or "")
    rocm_v1 = next(a for since, a in _ROCM_V1_ARCHITECTURES if at_least(key, *since))
    if vendor == "amd" and arch in rocm_v1:
        found.append(f"{arch} on ROCm (ROCM_DEFAULT_MRV1_ARCHITECTURES)")
    pp = int(args.get("pipeline_parallel_size") or 1)
    if str(args.get("distributed_executor_backend") or "") == "external_launcher" and pp > 1:
        found.append("pipeline parallelism with external_launcher")
    spec = _json_value(args.get("speculative_config"))
    if isinstance(spec, dict) or args.get("speculative_model"):
        method = str((spec or {}).get("method") or "").lower() if isinstance(spec, dict) else ""
        if not method:
            # SpeculativeConfig.__post_init__: "ngram" as the model, or a draft whose name says EAGLE
            draft = str((spec or {}).get("model") if isinstance(spec, dict) else args.get("speculative_model"))
            method = ("ngram" if draft in ("ngram", "[ngram]") else "eagle3" if "eagle3" in draft.lower()
                      else "eagle" if "eagle-" in draft.lower() else "draft_model")
        if method.endswith("_mtp"):
            method = "mtp"  # the model-specific MTP names are MTP (SpeculativeConfig.__post_init__)
        if "spec_supported" in table:
            if method not in table["spec_supported"]:
                found.append(f"speculative method {method!r}")
        elif method in table["spec"]:
            found.append(f"speculative method {method!r}")
        if isinstance(spec, dict) and _truthy(spec.get("parallel_drafting")) and method not in ("dflash", "dspark"):
            found.append("parallel drafting for EAGLE")
        if "eagle3_pp" in table["flags"] and method == "eagle3" and pp > 1:
            found.append("EAGLE3 with pipeline parallelism")
    flags = table["flags"]
    compilation = _json_value(args.get("compilation_config"))
    compilation = compilation if isinstance(compilation, dict) else {}
    if "stock_compile" in flags and str(compilation.get("mode", compilation.get("level", ""))).upper() in (
            "1", "STOCK_TORCH_COMPILE"):
        found.append("stock torch.compile")
    passes = compilation.get("pass_config") if isinstance(compilation.get("pass_config"), dict) else {}
    if ("sequence_parallel" in flags and _truthy(passes.get("enable_sp"))
            and int(args.get("tensor_parallel_size") or 1) > 1):
        found.append("sequence parallelism")
    for flag, arg, what in (("dbo", "enable_dbo", "dual batch overlap"),
                            ("elastic_ep", "enable_elastic_ep", "elastic expert parallelism"),
                            ("logits_processors", "logits_processors", "custom logits processors"),
                            ("kv_sharing_fast_prefill", "kv_sharing_fast_prefill", "KV sharing fast prefill")):
        if flag in flags and args.get(arg) not in (None, False, "", [], {}):
            found.append(what)
    if "mamba_all" in flags and str(args.get("mamba_cache_mode") or "") == "all":
        found.append("mamba cache mode 'all'")
    return found


def v2_model_runner(key: VersionKey, engine: str, args: dict, env: dict, model: Any,
                    vendor: str = "nvidia") -> tuple[bool, str | None]:
    """(whether the V2 GPU model runner runs, why), from ``VllmConfig.use_v2_model_runner`` (vllm/config/vllm.py,
    read in the 0.22.0 - 0.33.0 wheels; 0.34.0 removed the V1 model runner, so it always runs there).

    From 0.29 the V2 runner is the default for every model (vLLM's MRV2 migration): ``VLLM_USE_V2_MODEL_RUNNER``
    decides when set, and otherwise only what ``_get_v2_model_runner_unsupported_features`` lists for the release
    (:func:`_v2_default_blockers`) sends a deployment to V1. Up to 0.28:

    * ``VLLM_USE_V2_MODEL_RUNNER`` set decides;
    * otherwise a generate model whose architecture is in the release's list, or (0.25+) any model that is not
      MoE; 0.22 - 0.23 also not quantized; not hybrid (0.25+: ``is_hybrid``; 0.22: ``has_inner_state``),
      attention-free or a pooling runner;
    * and none of what ``_get_v2_model_runner_unsupported_features`` lists that a command line can ask for:
      ngram or other speculative methods than EAGLE / EAGLE-3 / MTP (DFlash 0.24+, DSpark 0.26+), EAGLE-3 with
      pipeline parallelism, parallel drafting, dual batch overlap, routed-experts capture, logits processors,
      prompt embeddings, KV-sharing fast prefill, an EC transfer config, stock torch.compile (0.22: a reasoning
      budget)."""
    if engine != "v1" or not at_least(key, 0, 22):
        return False, None
    if at_least(key, 0, 34):
        return True, "the V2 model runner, the only one vLLM 0.34 has (Model Runner V1 removed)"
    explicit = _truthy(env.get("VLLM_USE_V2_MODEL_RUNNER"))
    if explicit is not None:
        return explicit, f"VLLM_USE_V2_MODEL_RUNNER={env.get('VLLM_USE_V2_MODEL_RUNNER')}"
    if at_least(key, 0, 29):
        blockers = _v2_default_blockers(key, args, model, vendor)
        if blockers:
            return False, None
        return True, f"the V2 model runner, vLLM {key[0]}.{key[1]}'s default for every model family"
    if model is None:
        return False, None
    if str(args.get("runner") or "") == "pooling" or str(args.get("task") or "") in ("embed", "embedding", "score",
                                                                                     "classify", "reward"):
        return False, None
    arch = str(getattr(model, "architecture", "") or "")
    listed = next(archs for since, archs in _V2_RUNNER_ARCHITECTURES if at_least(key, *since))
    in_list = arch in listed
    moe = bool(getattr(model, "num_experts", None))
    layer_types = getattr(model, "layer_types", None) or []
    hybrid = any(t in ("mamba", "linear_attention") for t in layer_types)
    quantized = bool(getattr(model, "quantization", None) or args.get("quantization"))
    if at_least(key, 0, 25):
        default = in_list or not moe
        if hybrid and not (in_list and at_least(key, 0, 27)):
            default = False
    elif at_least(key, 0, 24):
        default = in_list and not hybrid
    else:
        default = in_list and not moe and not quantized and not hybrid
    if not default:
        return False, None
    unsupported: list[str] = []
    spec = _json_value(args.get("speculative_config"))
    if isinstance(spec, dict) or args.get("speculative_model"):
        method = str((spec or {}).get("method") or "").lower() if isinstance(spec, dict) else ""
        methods = next(m for since, m in _V2_SPEC_METHODS if at_least(key, *since))
        if method not in methods:
            unsupported.append(f"speculative method {method or 'draft_model'!r}")
        elif method == "eagle3" and int(args.get("pipeline_parallel_size") or 1) > 1:
            unsupported.append("EAGLE3 with pipeline parallelism")
        if isinstance(spec, dict) and _truthy(spec.get("parallel_drafting")) and method not in ("dflash", "dspark"):
            unsupported.append("parallel drafting")
    for flag, what in (("enable_dbo", "dual batch overlap"), ("enable_return_routed_experts", "routed experts capture"),
                       ("logits_processors", "custom logits processors"), ("enable_prompt_embeds", "prompt embeds"),
                       ("kv_sharing_fast_prefill", "KV sharing fast prefill"), ("ec_transfer_config", "EC transfer")):
        if args.get(flag) not in (None, False, "", [], {}):
            unsupported.append(what)
    if not at_least(key, 0, 23) and args.get("reasoning_config") not in (None, "", {}):
        unsupported.append("reasoning budget enforcement")
    compilation = _json_value(args.get("compilation_config"))
    if isinstance(compilation, dict) and str(compilation.get("mode", compilation.get("level", ""))) in ("1",
                                                                                                           "STOCK_TORCH_COMPILE"):
        unsupported.append("stock torch.compile")
    if unsupported:
        return False, None
    why = (f"the V2 model runner, vLLM's default here for {arch or 'this model'} ("
           + ("in DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES" if in_list else "not MoE") + ")")
    return True, why


def device_name_traits(name: str | None) -> tuple[bool, bool]:
    """What vLLM's scheduler defaults read from the device's name (not from its memory): whether it names an
    H100/H200 (before 0.8.5) and whether it names an A100 (0.9+, ``"a100" not in device_name``)."""
    lowered = (name or "").lower()
    return ("h100" in lowered or "h200" in lowered), ("a100" in lowered)


def behavior(version: str, gpu: Any, args: dict, env: dict, model: Any, max_model_len: int,
             usage_context: str = "serve") -> Behavior:
    """The start-up behaviour of ``version`` for this GPU, arguments, environment and model.

    ``gpu`` is a :class:`~vramlint.model.GpuSpec`; ``model`` a :class:`~vramlint.model.ModelInfo` (or None);
    ``max_model_len`` the length already derived (it decides V0's chunked-prefill and batch defaults).
    ``usage_context`` is "serve" (``vllm serve`` / the OpenAI server: what deployments run) or "llm" (``LLM()``).
    """
    key = parse_version(version) or parse_version(DEFAULT_VERSION)
    cc = tuple(gpu.compute_capability)
    engine, reason, errors = select_engine(key, cc, args, env, model)
    sources: dict[str, str] = {}
    notes: list[str] = []
    vdesc = f"default for vLLM {version}"

    # How non-KV memory is measured (worker.determine_num_available_blocks / gpu_worker, by release).
    if engine == "v0":
        if not at_least(key, 0, 6, 4):
            profiler = "v0-legacy"
        elif not at_least(key, 0, 6, 5):
            profiler = "v0-0.6.4"
        else:
            profiler = "v0-snapshot"
    else:
        if not at_least(key, 0, 9, 1):
            profiler = "v1-peak"
        elif not at_least(key, 0, 27):  # total_consumed + transient_peak_headroom: in 0.27.1, not in 0.26.0
            profiler = "v1-snapshot"
        else:
            profiler = "v1-consumed"
    counts_ctx = profiler in ("v0-0.6.4", "v1-peak")

    is_mla = bool(getattr(model, "is_mla", False)) and at_least(key, 0, 7) and not _truthy(env.get("VLLM_MLA_DISABLE"))
    # Block size: 16 everywhere; V1 forces 64 for FlashMLA (Hopper) and 128 for CUTLASS MLA (Blackwell).
    block_size = int(args["block_size"]) if args.get("block_size") else 16
    sources["block_size"] = "--block-size" if args.get("block_size") else vdesc
    if engine == "v1" and is_mla and cc >= (9, 0):
        forced = 128 if cc[0] >= 10 else 64
        if block_size != forced:
            block_size = forced
            sources["block_size"] = f"forced to {forced} by the MLA attention backend on compute capability {cc[0]}.{cc[1]}"

    # Chunked prefill.
    explicit_chunked = _truthy(args.get("enable_chunked_prefill"))
    multimodal = bool(getattr(model, "extra", {}).get("multimodal")) if model is not None else False
    if engine == "v1":
        chunked = True
        sources["enable_chunked_prefill"] = "always on in the V1 engine"
        if explicit_chunked is False:
            notes.append("--no-enable-chunked-prefill is ignored for generative models by the V1 engine")
    elif explicit_chunked is not None:
        chunked = explicit_chunked
        sources["enable_chunked_prefill"] = "--enable-chunked-prefill"
    else:
        sliding = bool(getattr(model, "sliding_window", None))
        auto = at_least(key, 0, 5, 5) and max_model_len > 32768 and not sliding and not multimodal and not args.get("enable_lora")
        chunked = auto
        sources["enable_chunked_prefill"] = (
            f"on by default in vLLM {version} because max_model_len {max_model_len} > 32768" if auto
            else f"off by default in vLLM {version} (V0)"
        )

    # Scheduler defaults (arg_utils.get_batch_defaults in 0.20.0; EngineArgs defaults before).
    device_gib = gpu.total_gib
    hopper_named, a100_named = device_name_traits(gpu.name)
    big = False
    if engine == "v0":
        seqs_default = 256
    else:
        if not at_least(key, 0, 8, 5):
            big = hopper_named
            seqs_default = 1024
        elif not at_least(key, 0, 9):
            big = device_gib >= 70
            seqs_default = 1024 if big else 256
        else:
            big = device_gib >= 70 and not a100_named
            if at_least(key, 0, 28) and device_gib >= 160:
                big = True
            seqs_default = 1024 if big else 256
    # --performance-mode throughput (0.17+, EngineArgs._set_default_max_num_seqs_and_batched_tokens_args) doubles
    # the defaults of max_num_batched_tokens and max_num_seqs that were not given, before they are clamped.
    throughput = engine == "v1" and at_least(key, 0, 17) and str(args.get("performance_mode") or "") == "throughput"
    doubled = " x 2 (--performance-mode throughput)" if throughput else ""
    if throughput:
        seqs_default *= 2
    max_num_seqs = int(args["max_num_seqs"]) if args.get("max_num_seqs") else seqs_default
    sources["max_num_seqs"] = "--max-num-seqs" if args.get("max_num_seqs") else (
        f"{vdesc} ({'>= 70 GiB GPU' if big else 'GPU below 70 GiB or A100'}){doubled}" if engine == "v1" else vdesc)

    if args.get("max_num_batched_tokens"):
        mnbt = int(args["max_num_batched_tokens"])
        sources["max_num_batched_tokens"] = "--max-num-batched-tokens"
    elif engine == "v0":
        if chunked:
            mnbt = 2048 if at_least(key, 0, 6, 5) else 512
        else:
            mnbt = max(max_model_len, 2048)
            if multimodal:
                mnbt = max(mnbt, 5120)
        sources["max_num_batched_tokens"] = vdesc + (" (chunked prefill)" if chunked else " (max(max_model_len, 2048))")
    else:
        if at_least(key, 0, 28) and device_gib >= 160:
            serve, llm = 16384, 16384
        elif big:
            serve, llm = 8192, 16384
        else:
            serve, llm = 2048, 8192
        mnbt = serve if usage_context == "serve" else llm
        if throughput:
            mnbt *= 2
        if at_least(key, 0, 9):
            mnbt = min(mnbt, max_num_seqs * max_model_len)
        sources["max_num_batched_tokens"] = f"{vdesc} for `vllm serve` on {gpu.name}{doubled}"

    # CUDA graph memory: budgeted by V1 0.18+ when VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is on (default on
    # from 0.20.0, checked in the 0.20.0 wheel's envs.py); never with --enforce-eager.
    est_env = _truthy(env.get("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"))
    cudagraph = False
    if engine == "v1" and at_least(key, 0, 18) and not _truthy(args.get("enforce_eager")):
        cudagraph = est_env if est_env is not None else at_least(key, 0, 20)
    v2_runner, v2_why = v2_model_runner(key, engine, args, env, model, getattr(gpu, "vendor", "nvidia"))
    if v2_runner:
        sources["model_runner"] = v2_why or "the V2 model runner"
        if cudagraph and not at_least(key, 0, 29):
            # its profile_cudagraph_memory returns 0: the graphs are captured after the KV cache, from what is left
            cudagraph = False
            sources["cudagraph_estimate"] = ("not subtracted: the V2 model runner's profile_cudagraph_memory returns 0 "
                                             f"in vLLM {version} (vllm/v1/worker/gpu/model_runner.py, 0.22 - 0.28)")

    if engine == "v0":
        concurrency = "v0"
    elif not at_least(key, 0, 9):
        concurrency = "v1-tokens"
    else:
        concurrency = "v1-blocks"

    hybrid, hybrid_why, hybrid_error = hybrid_kv_cache_manager(key, engine, args, env, model)
    if hybrid_why:
        sources["hybrid_kv_cache_manager"] = hybrid_why
    if hybrid_error:
        errors.append(hybrid_error)
    if engine == "v1" and (allocator := kv_connector_expandable_segments_refusal(key, args, env)):
        errors.append(allocator)
    if engine == "v1" and (runner_env := removed_v1_runner_refusal(key, env)):
        errors.append(runner_env)

    extensible, extensible_why, extensible_error = extensible_kv_cache(key, engine, getattr(gpu, "vendor", "nvidia"),
                                                                       args, env)
    if extensible_why:
        sources["extensible_kv_cache"] = extensible_why
    if extensible_error:
        errors.append(extensible_error)
    util_default = default_utilization(key, extensible)
    mode = str(args.get("performance_mode") or "balanced")
    return Behavior(
        performance_mode=mode if engine == "v1" and at_least(key, 0, 17) else "balanced",
        version=version,
        key=key,
        engine=engine,
        engine_reason=reason,
        profiler=profiler,
        counts_cuda_context=counts_ctx,
        gpu_memory_utilization=util_default,
        block_size=block_size,
        chunked_prefill=chunked,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=mnbt,
        cudagraph_in_budget=cudagraph,
        concurrency=concurrency,
        hybrid_kv_manager=hybrid,
        mla_supported=is_mla,
        bf16_fallback=at_least(key, 0, 9),
        extensible_kv_cache=extensible,
        v2_model_runner=v2_runner,
        sources=sources,
        notes=notes,
        errors=errors,
    )
