"""vLLM built from a git checkout in a Dockerfile (issue 9, audit19 H3-H10): a fork, a branch or a commit is no
release, so its servers' flags are not judged against releases and that is said once per build; vllm-project's
repository at a release tag is that release."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main
from vramlint.extract.source_build import read_run
from vramlint.model import Location

FORK_DOCKERFILE = """\
    FROM nvcr.io/nvidia/pytorch:25.01-py3
    ARG FORK_REPO=https://gitlab.example.org/lab/vllm.git
    ARG FORK_REF=9c1e2d4f00aa
    WORKDIR /src
    RUN apt-get update && apt-get install -y git
    RUN --mount=type=cache,target=/cache \\
        if [ -d /cache/vllm ]; then cp -a /cache/vllm /src/engine; \\
        else git clone "${FORK_REPO}" engine; fi && \\
        cd engine && git checkout ${FORK_REF}
    RUN git clone https://github.com/lab/flashinfer.git && cd flashinfer && pip install -e .
    WORKDIR /src/engine
    RUN --mount=type=cache,target=/root/.cache/uv uv pip install --no-build-isolation -e .
    """


def _service(name, flag, build=True, image="lab-vllm:dev"):
    built = "    build: {context: ., dockerfile: Dockerfile.engine}\n" if build else ""
    return (f"  {name}:\n{built}    image: {image}\n"
            f"    command: [vllm, serve, facebook/opt-125m, --max-model-len, '2048', {flag}, x]\n")


def _run(args, capsys):
    main([*args, "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)


def test_services_built_from_a_forks_checkout_get_one_note_and_no_flag_warning(tmp_path, capsys):
    (tmp_path / "Dockerfile.engine").write_text(textwrap.dedent(FORK_DOCKERFILE))
    (tmp_path / "compose.yaml").write_text("services:\n" + _service("a", "--lab-kernel") + _service("b", "--lab-kernel")
                                           + _service("c", "--lab-layers"))
    report = _run(["check", str(tmp_path)], capsys)
    assert len(report["servers"]) == 3
    assert all(s["vllm_version"] is None for s in report["servers"])
    vrl009 = [f for f in report["findings"] if f["rule"] == "VRL009"]
    assert [(f["level"], f["file"].rsplit("/", 1)[-1], f["line"]) for f in vrl009] == [
        ("note", "Dockerfile.engine", 12)]
    note = vrl009[0]["message"]
    assert "lab/vllm at 9c1e2d4f00aa" in note and "--lab-kernel, --lab-layers" in note and "3 servers" in note
    assert "vllm-version" in note  # what removes it
    assert not [f for f in report["findings"] if f["level"] in ("error", "warning")]


def test_the_version_set_in_the_configuration_judges_the_flags_again(tmp_path, capsys):
    (tmp_path / "Dockerfile.engine").write_text(textwrap.dedent(FORK_DOCKERFILE))
    (tmp_path / "compose.yaml").write_text("services:\n" + _service("a", "--lab-kernel"))
    (tmp_path / ".vramlint.yaml").write_text("vllm-version: 0.9.2\n")
    report = _run(["check", str(tmp_path)], capsys)
    vrl009 = [f for f in report["findings"] if f["rule"] == "VRL009"]
    assert [f["level"] for f in vrl009] == ["error"] and "--lab-kernel" in vrl009[0]["message"]


def test_a_service_running_the_image_another_service_builds_is_that_build(tmp_path, capsys):
    (tmp_path / "Dockerfile.engine").write_text(textwrap.dedent(FORK_DOCKERFILE))
    (tmp_path / "compose.yaml").write_text("services:\n" + _service("a", "--lab-kernel")
                                           + _service("b", "--lab-layers", build=False))
    report = _run(["check", str(tmp_path)], capsys)
    levels = [(f["rule"], f["level"]) for f in report["findings"] if f["rule"] == "VRL009"]
    assert levels == [("VRL009", "note")]
    assert "2 servers" in next(f["message"] for f in report["findings"] if f["rule"] == "VRL009")


def test_vllms_own_repository_at_a_release_tag_is_that_release(tmp_path, capsys):
    (tmp_path / "Dockerfile").write_text(textwrap.dedent("""\
        FROM nvidia/cuda:12.4.1-devel-ubuntu22.04
        RUN git clone --depth 1 --branch v0.9.2 https://github.com/vllm-project/vllm.git /opt/vllm && \\
            cd /opt/vllm && python3 setup.py develop
        CMD ["vllm", "serve", "facebook/opt-125m", "--kv-cache-memory-bytes", "2000000000"]
        """))
    report = _run(["check", str(tmp_path)], capsys)
    assert [s["vllm_version"] for s in report["servers"]] == ["0.9.2"]
    vrl009 = [f for f in report["findings"] if f["rule"] == "VRL009"]
    # the flag came after 0.9.2: the release's parser refuses it
    assert [f["level"] for f in vrl009] == ["error"] and "--kv-cache-memory-bytes" in vrl009[0]["message"]


def test_a_dockerfile_alone_that_installs_a_forks_vcs_url_is_said_once(tmp_path, capsys):
    (tmp_path / "Dockerfile").write_text(textwrap.dedent("""\
        FROM vllm/vllm-openai:v0.8.5
        RUN pip install "git+https://github.com/someone/vllm.git@spec-decode-x#egg=vllm"
        CMD ["vllm", "serve", "facebook/opt-125m", "--draft-kernel", "fast"]
        """))
    report = _run(["check", str(tmp_path)], capsys)
    assert [s["vllm_version"] for s in report["servers"]] == [None]
    vrl009 = [f for f in report["findings"] if f["rule"] == "VRL009"]
    assert [(f["level"], f["line"]) for f in vrl009] == [("note", 2)]
    assert "someone/vllm at spec-decode-x" in vrl009[0]["message"]


def _walk(script, workdir="/", clones=None):
    return read_run(script, workdir, {} if clones is None else clones, lambda w: None, Location("D", 1, 1))


def test_what_is_read_as_vllm_built_from_a_checkout():
    clones: dict = {}
    assert _walk("git clone https://github.com/acme/vllm && cd vllm && git checkout 1a2b3c4", "/w", clones) is None
    # the checkout is installed by a later RUN, in its folder or by path
    assert _walk("pip install -e .", "/w/vllm", clones).ref == "1a2b3c4"
    assert _walk("python3 -m pip install --no-deps /w/vllm", "/", clones).url == "https://github.com/acme/vllm"
    # a name is a requirement, not the folder (pip reads a word as a path only if it looks like one)
    assert _walk("pip install vllm", "/w", clones) is None
    # another folder, another repository: a plugin of vLLM is not vLLM itself
    assert _walk("pip install -e .", "/w", clones) is None
    assert _walk("git clone https://github.com/vllm-project/vllm-ascend && pip install -e vllm-ascend") is None
    # a release tag of a fork numbers the fork's builds; vllm-project's is the release
    assert _walk("git clone -b v0.9.2 https://github.com/acme/vllm && pip install ./vllm").release is None
    assert _walk("git clone https://github.com/vllm-project/vllm && cd vllm && git fetch origin v0.10.1 && "
                 "git checkout FETCH_HEAD && VLLM_USE_PRECOMPILED=1 uv pip install -e '.[bench]'").release == "0.10.1"


def test_a_run_past_the_command_bound_says_so(tmp_path, capsys):
    from vramlint.extract.source_build import MAX_COMMANDS

    body = " && ".join("cd /a" for _ in range(MAX_COMMANDS + 5))
    (tmp_path / "Dockerfile").write_text(f"FROM python:3.11\nRUN git clone https://github.com/x/vllm /a && {body}\n"
                                         'CMD ["vllm", "serve", "facebook/opt-125m"]\n')
    report = _run(["check", str(tmp_path)], capsys)
    said = [f for f in report["findings"] if "commands, past vramlint's limit" in f["message"]]
    assert [(f["level"], f["line"]) for f in said] == [("warning", 2)]


def test_only_the_tag_a_build_makes_is_shared_not_its_base(tmp_path, capsys):
    # the build is FROM vLLM's own latest image, then a fork over it; another service runs that base image itself
    (tmp_path / "Dockerfile").write_text(textwrap.dedent("""\
        FROM vllm/vllm-openai:latest
        RUN pip install git+https://github.com/lab/vllm.git@exp
        """))
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  fork:\n    build: .\n    command: [--model, facebook/opt-125m, --lab-kernel, x]\n"
        "  stock:\n    image: vllm/vllm-openai:latest\n    command: [--model, facebook/opt-125m, --lab-kernel, x]\n")
    report = _run(["check", str(tmp_path)], capsys)
    vrl009 = sorted((f["level"], f["file"].rsplit("/", 1)[-1]) for f in report["findings"] if f["rule"] == "VRL009")
    # the stock image runs the newest release, which refuses the fork's flag; the fork's build is said once
    assert vrl009 == [("error", "compose.yaml"), ("note", "Dockerfile")]
