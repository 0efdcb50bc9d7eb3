"""A Dockerfile named on the command line (`vramlint check $(git ls-files)`, a CI job's file list) is neither
YAML nor a script: it is read as a Dockerfile, and a compose `build:` in the same run reads it as that service's
image (one server, not two)."""

from __future__ import annotations

import json
import textwrap

import pytest

from vramlint.cli import main
from vramlint.extract.dockerfile import is_dockerfile_name

# a comment between instructions ends the plain scalar a YAML reading makes of the first lines: invalid YAML
_DOCKERFILE = """\
    FROM vllm/vllm-openai:v0.9.2
    # curl for the health check
    RUN apt-get update && apt-get install -y curl && rm -rf /var/lib/apt/lists/*
    HEALTHCHECK --interval=30s \\
        CMD curl -f http://localhost:8000/health || exit 1
    CMD ["--model", "facebook/opt-125m", "--max-model-len", "1024"]
    """


@pytest.mark.parametrize("name", ["Dockerfile", "dockerfile", "Containerfile", "Dockerfile.rocm", "gpu.Dockerfile",
                                  "svc/vllm/Dockerfile", "svc\\vllm\\serve.containerfile"])
def test_dockerfile_names(name):
    assert is_dockerfile_name(name)


@pytest.mark.parametrize("name", ["Dockerfile.yaml", "dockerfile.yml", "Dockerfile.tpl", "compose.yaml",
                                  "docker-compose.dockerfile-notes.md", "deploy/dockerfiles.yaml", "mydockerfile"])
def test_names_that_are_not_dockerfiles(name):
    assert not is_dockerfile_name(name)


def _run(capsys, *paths):
    code = main(["check", *map(str, paths), "--offline", "--output-format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["Dockerfile", "Containerfile", "serve.Dockerfile", "Dockerfile.cuda"])
def test_a_named_dockerfile_is_read_as_a_dockerfile_not_as_yaml(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_text(textwrap.dedent(_DOCKERFILE))
    code, report = _run(capsys, path)
    assert code == 0
    assert not [f for f in report["findings"] if f["level"] == "error"]
    assert report["skipped"] == []
    [server] = report["servers"]
    # the CMD of line 6 runs the vllm/vllm-openai image's own entrypoint
    assert (server["model"], server["vllm_version"], server["line"]) == ("facebook/opt-125m", "0.9.2", 6)


def test_the_compose_build_still_reads_the_dockerfile_named_beside_it(tmp_path, capsys):
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "Dockerfile").write_text(textwrap.dedent(_DOCKERFILE))
    (tmp_path / "compose.yaml").write_text("services:\n  vllm:\n    build: ./server\n")
    code, report = _run(capsys, tmp_path / "compose.yaml", tmp_path / "server" / "Dockerfile")
    assert code == 0
    assert not [f for f in report["findings"] if f["level"] == "error"]
    [server] = report["servers"]
    assert (server["model"], server["vllm_version"]) == ("facebook/opt-125m", "0.9.2")


def test_a_yaml_file_named_like_a_dockerfile_is_still_yaml(tmp_path, capsys):
    (tmp_path / "Dockerfile.yaml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.9.2\n"
                                              "    command: [--model, facebook/opt-125m]\n")
    _, report = _run(capsys, tmp_path / "Dockerfile.yaml")
    assert [s["model"] for s in report["servers"]] == ["facebook/opt-125m"]
