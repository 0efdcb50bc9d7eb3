"""`Dockerfile_vllm` / `Dockerfile-vllm` (and Containerfile's) are Dockerfiles for a folder's walk: `docker build
-f` takes any name, and these spellings of a second Dockerfile are common (audit23 M4, D7). A name of that shape
with an extension (`Dockerfile-notes.md`, `dockerfile_test.go`) stays no Dockerfile."""

from __future__ import annotations

import json

import pytest

from vramlint.cli import main
from vramlint.discover import kind_of
from vramlint.extract.dockerfile import is_dockerfile_name

# shaped after an HPC site's image for vLLM: a PyTorch base, vLLM installed, the module run with no model
_DOCKERFILE = """\
FROM nvcr.io/nvidia/pytorch:24.05-py3
RUN pip install --no-cache-dir vllm==0.6.3
WORKDIR /workspace
EXPOSE 8000
CMD ["python", "-m", "vllm.entrypoints.openai.api_server"]
"""


@pytest.mark.parametrize("name", ["Dockerfile_vllm", "Dockerfile-vllm", "dockerfile_rocm", "Containerfile-cuda",
                                  "Containerfile_x86", "Dockerfile-cuda12.4", "Dockerfile_ubuntu22.04"])
def test_underscore_and_dash_spellings_are_dockerfiles(name):
    assert kind_of(name) == "dockerfile"
    assert is_dockerfile_name("containers/" + name)


@pytest.mark.parametrize("name", ["Dockerfile-notes.md", "Dockerfile_README.txt", "Dockerfile-build.sh",
                                  "Dockerfile_vllm.dockerignore", "Dockerfile-", "Dockerfiles", "Dockerfile_gen.py",
                                  "Dockerfile-vllm.yaml", "dockerfile_test.go", "Dockerfile_vllm.gpu"])
def test_other_files_named_after_a_dockerfile_are_not_dockerfiles(name):
    assert kind_of(name) != "dockerfile"
    assert not is_dockerfile_name(name)


def test_a_folder_walk_reads_a_dockerfile_spelled_with_an_underscore(tmp_path, capsys, monkeypatch):
    (tmp_path / "containers").mkdir()
    (tmp_path / "containers" / "Dockerfile_vllm").write_text(_DOCKERFILE)
    (tmp_path / "containers" / "Dockerfile-notes.md").write_text("# How the vLLM image is built\n")
    monkeypatch.chdir(tmp_path)
    code = main(["check", ".", "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    [server] = report["servers"]  # before: "No vLLM server found in 0 files"
    assert (server["file"], server["line"]) == ("containers/Dockerfile_vllm", 5)
    assert server["vllm_version"] == "0.6.3"
