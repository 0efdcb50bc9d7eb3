"""vLLM's own image build (docker/Dockerfile in vllm-project/vllm and its forks): a multi-stage file whose `build`
stage copies the whole build context and builds a wheel (`setup.py bdist_wheel`, `uv build --wheel`), whose
final stage installs that wheel (a bind mount from the build stage, or `COPY --from=`) and runs vLLM's server.
The stage that runs is the last one; the version is the checkout's (setuptools-scm, from git), never guessed."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main

# shaped after the releases' docker/Dockerfile (0.9-era: the api_server module as ENTRYPOINT, a wheel mounted from
# the build stage; later: `vllm serve`, a venv, the wheel copied), written for these tests
MOUNTED_WHEEL = """\
    ARG CUDA_VERSION=12.8.1
    ARG BUILD_BASE_IMAGE=nvidia/cuda:${CUDA_VERSION}-devel-ubuntu20.04
    ARG FINAL_BASE_IMAGE=nvidia/cuda:${CUDA_VERSION}-devel-ubuntu22.04

    FROM ${BUILD_BASE_IMAGE} AS base
    RUN apt-get update -y && apt-get install -y python3 git && python3 -m pip install uv
    WORKDIR /workspace
    COPY requirements/cuda.txt requirements/cuda.txt
    RUN uv pip install --system -r requirements/cuda.txt

    FROM base AS build
    COPY . .
    ARG max_jobs=2
    RUN --mount=type=cache,target=/root/.cache/ccache --mount=type=bind,source=.git,target=.git \\
        python3 setup.py bdist_wheel --dist-dir=dist --py-limited-api=cp38

    FROM ${FINAL_BASE_IMAGE} AS vllm-base
    WORKDIR /vllm-workspace
    RUN --mount=type=bind,from=build,src=/workspace/dist,target=/vllm-workspace/dist \\
        uv pip install --system dist/*.whl --verbose

    FROM vllm-base AS vllm-openai-base
    RUN uv pip install --system accelerate hf_transfer boto3
    ENV VLLM_USAGE_SOURCE production-docker-image

    FROM vllm-openai-base AS vllm-sagemaker
    COPY examples/sagemaker-entrypoint.sh .
    ENTRYPOINT ["./sagemaker-entrypoint.sh"]

    FROM vllm-openai-base AS vllm-openai
    ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    """

COPIED_WHEEL = """\
    ARG VLLM_VERSION=0.10.1
    FROM nvidia/cuda:12.8.1-devel-ubuntu22.04 AS build
    ARG VLLM_VERSION
    WORKDIR /workspace
    COPY . .
    RUN SETUPTOOLS_SCM_PRETEND_VERSION="${VLLM_VERSION}" uv build --wheel --out-dir dist .

    FROM nvidia/cuda:12.8.1-base-ubuntu22.04 AS vllm-openai
    COPY --from=build /workspace/dist /tmp/dist
    RUN uv pip install --python /opt/venv/bin/python3 /tmp/dist/*.whl
    ENTRYPOINT ["vllm", "serve"]
    """


def _write(tmp_path, dockerfile, compose=None):
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "Dockerfile").write_text(textwrap.dedent(dockerfile))
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "vllm"\ndynamic = ["version"]\n')
    if compose:
        (tmp_path / "compose.yaml").write_text(compose)


def _check(capsys, *paths):
    main(["check", *map(str, paths), "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)


def test_the_final_stage_runs_the_wheel_the_build_stage_made_from_this_checkout(tmp_path, capsys):
    _write(tmp_path, MOUNTED_WHEEL)
    report = _check(capsys, tmp_path / "docker" / "Dockerfile")
    [server] = report["servers"]
    assert server["line"] == 31 and server["vllm_version"] is None  # vllm-openai, not the sagemaker stage
    [note] = report["findings"]
    assert (note["rule"], note["level"], note["line"]) == ("VRL009", "note", 19)
    assert "this repository's checkout" in note["message"]
    assert "stage build builds on line 14 from the build context" in note["message"]
    assert "setuptools-scm" in note["message"] and "vllm-version" in note["message"]
    assert "is not a vLLM image vramlint knows" not in json.dumps(report)


def test_a_declared_pretend_version_is_said_and_a_copied_wheel_is_followed(tmp_path, capsys):
    _write(tmp_path, COPIED_WHEEL)
    report = _check(capsys, tmp_path / "docker" / "Dockerfile")
    [note] = report["findings"]
    assert note["line"] == 10 and "SETUPTOOLS_SCM_PRETEND_VERSION declares 0.10.1" in note["message"]
    assert report["servers"][0]["vllm_version"] is None  # declared by the build, not a release of vllm-project


def test_a_service_built_from_it_has_its_flags_left_unjudged(tmp_path, capsys):
    compose = ("services:\n  engine:\n    build: {context: ., dockerfile: docker/Dockerfile}\n"
               "    command: [--model, facebook/opt-125m, --max-model-len, '2048', --lab-kernel, x]\n")
    _write(tmp_path, MOUNTED_WHEEL, compose)
    report = _check(capsys, tmp_path)
    assert not [f for f in report["findings"] if f["level"] in ("error", "warning")]
    [note] = [f for f in report["findings"] if f["rule"] == "VRL009"]
    assert note["level"] == "note" and "--lab-kernel" in note["message"]


def test_a_wheel_built_from_a_subfolder_is_not_this_checkout(tmp_path, capsys):
    # only a copy of the whole context makes the wheel this repository's own
    _write(tmp_path, MOUNTED_WHEEL.replace("    COPY . .\n", "    COPY plugin/ plugin/\n"))
    report = _check(capsys, tmp_path / "docker" / "Dockerfile")
    assert not [f for f in report["findings"] if f["rule"] == "VRL009"]


def test_another_wheel_of_the_build_stage_is_not_vllm(tmp_path, capsys):
    # the build stage also builds kernels into another folder; only the wheel of the context's build is vLLM
    dockerfile = MOUNTED_WHEEL.replace(
        "        python3 setup.py bdist_wheel --dist-dir=dist --py-limited-api=cp38\n",
        "        python3 setup.py bdist_wheel --dist-dir=dist --py-limited-api=cp38\n"
        "    RUN cd /tmp/kernels && pip wheel -w /tmp/kernels/dist deep_ep\n").replace(
        "    FROM vllm-base AS vllm-openai-base\n",
        "    RUN --mount=type=bind,from=build,src=/tmp/kernels/dist,target=/opt/kernels \\\n"
        "        uv pip install --system /opt/kernels/*.whl\n    FROM vllm-base AS vllm-openai-base\n")
    _write(tmp_path, dockerfile)
    report = _check(capsys, tmp_path / "docker" / "Dockerfile")
    [note] = report["findings"]
    assert note["line"] == 20 and "stage build builds on line 14" in note["message"]
    # a wheel from a folder no context build writes installs no vLLM
    (tmp_path / "x").mkdir()
    _write(tmp_path / "x", MOUNTED_WHEEL.replace("src=/workspace/dist", "src=/tmp/kernels/dist"))
    report = _check(capsys, tmp_path / "x" / "docker" / "Dockerfile")
    assert not [f for f in report["findings"] if f["rule"] == "VRL009"]


# the newer form: a csrc-build stage makes a wheel of the kernels only (part of the tree, a dummy version), the
# build stage copies it and the whole context and builds vLLM's wheel; the final stage runs `vllm serve`
SPLIT_BUILD = """\
    FROM nvidia/cuda:13.0.1-devel-ubuntu22.04 AS base
    WORKDIR /workspace

    FROM base AS csrc-build
    COPY pyproject.toml setup.py CMakeLists.txt ./
    COPY csrc csrc/
    ENV SETUPTOOLS_SCM_PRETEND_VERSION="0.0.0+csrc.build"
    RUN python3 setup.py bdist_wheel --dist-dir=dist --py-limited-api=cp38

    FROM base AS build
    COPY --from=csrc-build /workspace/dist /precompiled-wheels
    COPY . .
    RUN --mount=type=bind,source=.git,target=.git \\
        export VLLM_USE_PRECOMPILED=1 && python3 setup.py bdist_wheel --dist-dir=dist --py-limited-api=cp38

    FROM nvidia/cuda:13.0.1-base-ubuntu22.04 AS vllm-base
    WORKDIR /vllm-workspace
    RUN --mount=type=bind,from=build,src=/workspace/dist,target=/vllm-workspace/dist \\
        --mount=type=cache,target=/opt/uv/cache \\
        if [ "${PYTORCH_NIGHTLY}" = "1" ]; then \\
            uv pip install --system $(cat torch_lib_versions.txt | xargs) --pre && uv pip install --system dist/*.whl; \\
        else \\
            uv pip install --system dist/*.whl --verbose; \\
        fi

    FROM vllm-base AS vllm-openai
    ENTRYPOINT ["vllm", "serve"]
    """


def test_the_newer_split_build_is_the_build_stages_wheel_not_the_kernels_dummy_version(tmp_path, capsys):
    _write(tmp_path, SPLIT_BUILD)
    report = _check(capsys, tmp_path / "docker" / "Dockerfile")
    [note] = report["findings"]
    assert note["line"] == 18 and "stage build builds on line 13" in note["message"]
    assert "0.0.0+csrc.build" not in note["message"] and "setuptools-scm" in note["message"]
