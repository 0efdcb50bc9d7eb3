import pytest

from vramlint import gpus, versions


@pytest.mark.parametrize(
    "text, key",
    [("0.6.4.post1", (0, 6, 4, 0)), ("v0.10.1.1", (0, 10, 1, 1)), ("0.11.0rc1", (0, 11, 0, 0)),
     ("0.10.1.dev101+gbda9d0535", (0, 10, 1, 0)), ("0.9", (0, 9, 0, 0)), ("latest", None), ("nightly", None), ("", None)],
)
def test_parse_version(text, key):
    assert versions.parse_version(text) == key


@pytest.mark.parametrize(
    "image, version",
    [("vllm/vllm-openai:v0.6.4", "0.6.4"), ("vllm/vllm-openai:v0.10.1.1", "0.10.1.1"),
     ("docker.io/vllm/vllm-openai:v0.11.0rc1@sha256:abc", "0.11.0rc1"), ("vllm/vllm-openai:latest", None),
     ("vllm/vllm-openai@sha256:abc", None), ("python:3.11", None), ("registry:5000/vllm:0.8.5.post1", None)],
)
def test_version_from_image(image, version):
    assert versions.version_from_image(image) == version


@pytest.mark.parametrize(
    "image, version",
    [("vllm/vllm-openai:v0.7.0rc1", "0.7.0rc1"),  # a release candidate is not the release
     ("vllm/vllm-openai:v0.10.1-cu128", "0.10.1"), ("vllm/vllm-openai:v0.10.1.dev101", "0.10.1.dev101"),
     ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "0.8.5"),  # not ROCm's 6.3.1
     ("nvcr.io/nvidia/vllm:25.09-py3", None),  # an NGC monthly container, not vLLM 25.09
     ("lmcache/vllm-openai:v0.3.9", None), ("quay.io/acme/vllm:2024.10", None),
     # Red Hat AI Inference Server numbers its own releases (3.2.0 ships a vLLM 0.x): no vLLM release is 3.x
     ("registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.2.0-1754088865-hotfix-1", None),
     ("quay.io/acme/vllm-build:1.4.2", None), ("quay.io/acme/vllm-build:v0.11.2", None),
     ("vllm/vllm-openai:nightly", None), ("vllm/vllm-tpu:nightly-0.9.1", None)],
)
def test_version_from_image_vendor_tags(image, version):
    assert versions.version_from_image(image) == version


@pytest.mark.parametrize(
    "image, version",
    [  # vLLM's release repositories, also behind a mirror's prefix that keeps their path
     ("mirror.gcr.io/vllm/vllm-openai:v0.9.1", "0.9.1"), ("harbor.example/dockerhub/vllm/vllm-openai-rocm:v0.10.0", "0.10.0"),
     ("public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.8.5", "0.8.5"),
     # a republish of vLLM's server image under its name keeps vLLM's tags
     ("quay.io/someone/vllm-openai:v0.10.0-macos", "0.10.0"),
     # other repositories number their own builds: a CPU image built from a fork's commit, a local build, llm-d's
     # and AWS's own releases
     ("quay.io/rh-aiservices-bu/vllm-cpu-openai-ubi9:0.3", None), ("gemma4-vllm:0.20.1-cu129", None),
     ("ghcr.io/llm-d/llm-d-cuda:v0.3.1", None), ("763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:0.8.5-gpu-py312-ec2", None),
     # the vendor names vLLM's release inside the tag: read wherever the image lives
     ("registry.example/team/vllm-build:cu128_vllm_0.9.2", "0.9.2")],
)
def test_a_plain_tag_is_a_release_only_on_vllms_release_repositories(image, version):
    assert versions.version_from_image(image) == version


def test_every_extractor_reads_the_tag_the_same_way(tmp_path):
    # The Kubernetes and compose extractors and the argument table all use versions.version_from_image:
    # an NGC tag stays unknown (the default version, said so), a release candidate picks its release's table.
    from vramlint.assess import resolve_version
    from vramlint.model import ResolveOptions
    from vramlint.scan import scan

    (tmp_path / "deploy.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: a\n    image: nvcr.io/nvidia/vllm:25.09-py3\n    command: [vllm, serve, org/m]\n"
        "  - name: b\n    image: vllm/vllm-openai:v0.11.0rc1\n    args: [org/m]\n"
    )
    (tmp_path / "compose.yaml").write_text(
        "services:\n  c:\n    image: nvcr.io/nvidia/vllm:25.09-py3\n    command: vllm serve org/m\n"
    )
    servers = {s.container or s.name: s for s in scan([str(tmp_path)]).servers}
    assert servers["a"].vllm_version is None and servers["c"].vllm_version is None
    version, source = resolve_version(servers["c"], ResolveOptions())
    assert version == versions.DEFAULT_VERSION and "names no version" in source
    assert servers["b"].vllm_version == "0.11.0rc1"


def test_argument_table_of_a_release_candidate_is_its_release():
    from vramlint import vllm_args

    assert vllm_args.table_version("0.11.0rc1") == ("0.11.0", None)  # not 0.11.1
    assert vllm_args.table_version("0.6.4.post1") == ("0.6.4", None)


def test_default_version_is_documented_and_parses():
    assert versions.parse_version(versions.DEFAULT_VERSION) is not None
    assert versions.DEFAULT_VERSION in versions.__doc__


def beh(version, gpu="H100", args=None, env=None, max_model_len=8192, model=None):
    return versions.behavior(version, gpus.lookup(gpu), args or {}, env or {}, model, max_model_len)


@pytest.mark.parametrize(
    "version, gpu, env, engine",
    [("0.6.4", "H100", {}, "v0"), ("0.7.3", "H100", {}, "v0"), ("0.7.3", "H100", {"VLLM_USE_V1": "1"}, "v1"),
     ("0.8.0", "H100", {}, "v1"), ("0.8.5", "T4", {}, "v0"), ("0.10.1.1", "V100-16GB", {}, "v0"),
     ("0.10.2", "T4", {}, "v1"), ("0.9.2", "H100", {"VLLM_USE_V1": "0"}, "v0"), ("0.11.0", "T4", {"VLLM_USE_V1": "0"}, "v1")],
)
def test_engine_selection(version, gpu, env, engine):
    assert beh(version, gpu, env=env).engine == engine


def test_fp8_kv_cache_falls_back_to_v0_off_hopper_in_0_8():
    assert beh("0.8.5", "A100-80GB", args={"kv_cache_dtype": "fp8"}).engine == "v0"
    assert beh("0.8.5", "H100", args={"kv_cache_dtype": "fp8"}).engine == "v1"


def test_scheduler_defaults_by_engine_and_gpu():
    v0 = beh("0.6.5", "A100-80GB", max_model_len=8192)
    assert (v0.max_num_seqs, v0.max_num_batched_tokens, v0.chunked_prefill) == (256, 8192, False)
    long = beh("0.6.5", "A100-80GB", max_model_len=65536)
    assert long.chunked_prefill and long.max_num_batched_tokens == 2048
    assert beh("0.6.3", "A100-80GB", max_model_len=65536).max_num_batched_tokens == 512
    h100 = beh("0.11.0", "H100")
    assert (h100.max_num_seqs, h100.max_num_batched_tokens) == (1024, 8192)
    a100 = beh("0.11.0", "A100-80GB")  # excluded by name since 0.9
    assert (a100.max_num_seqs, a100.max_num_batched_tokens) == (256, 2048)
    assert beh("0.8.5", "A100-80GB").max_num_seqs == 1024  # 0.8.5 looked at memory only
    l4 = beh("0.11.0", "L4")
    assert (l4.max_num_seqs, l4.max_num_batched_tokens) == (256, 2048)
    b200 = beh("0.33.0", "B200")
    assert b200.max_num_batched_tokens == 16384
    explicit = beh("0.11.0", "H100", args={"max_num_seqs": 64, "max_num_batched_tokens": 4096})
    assert (explicit.max_num_seqs, explicit.max_num_batched_tokens) == (64, 4096)


def test_profiler_and_cudagraph_accounting_by_version():
    assert beh("0.6.4", "H100").counts_cuda_context
    assert not beh("0.6.5", "H100").counts_cuda_context
    assert beh("0.8.5", "H100").counts_cuda_context  # V1 0.7 - 0.9.0 counts everything on the GPU
    assert not beh("0.9.2", "H100").counts_cuda_context
    assert not beh("0.17.0", "H100").cudagraph_in_budget
    assert beh("0.18.1", "H100", env={"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "1"}).cudagraph_in_budget
    assert beh("0.20.0", "H100").cudagraph_in_budget
    assert not beh("0.20.0", "H100", args={"enforce_eager": True}).cudagraph_in_budget
    assert beh("0.6.5", "H100").concurrency == "v0"
    assert beh("0.8.5", "H100").concurrency == "v1-tokens"
    assert beh("0.11.0", "H100").concurrency == "v1-blocks"


def test_why_an_image_names_no_release():
    from vramlint.versions import why_no_version

    digest = "sha256:" + "0f" * 32
    assert why_no_version(f"vllm/vllm-openai@{digest}") == (
        "the image is pinned by digest (vllm/vllm-openai@sha256:0f0f0f0f0f0f...), which names no release: vramlint "
        "knows no digest's release")
    # a tag before the digest, a port in the registry, no image at all: the tag is what says nothing
    assert why_no_version(f"vllm/vllm-openai:nightly@{digest}") == "the image tag does not say the version"
    assert why_no_version(f"registry.example.test:5000/vllm@{digest}").startswith("the image is pinned by digest")
    assert why_no_version(None) == "the image tag does not say the version"
