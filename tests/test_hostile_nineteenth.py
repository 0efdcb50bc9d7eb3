"""Hostile round 19 (issue 10), the compose build-context launcher follow: what its first run found, as fixtures of
their own (benchmarks/hostile_nineteenth.py has the cases).

- a Dockerfile past vramlint's 10,000 instructions lost its ENTRYPOINT without a word: the image is not read,
  and that is said on the service;
- a COPY source climbing out of the build context was looked for beside and above the context (BuildKit stops
  `..` at the context's root), and a WORKDIR too long for the file system made the compose document fail;
- ADD of a local tar archive was read as the script (Docker unpacks it: the image holds its members).
"""

from __future__ import annotations

import io
import tarfile
import textwrap

from vramlint.extract.dockerfile import MAX_INSTRUCTIONS, read_built_image
from vramlint.extract.image_files import context_source, is_archive
from vramlint.scan import scan

COMPOSE = textwrap.dedent("""\
    services:
      vllm-engine:
        build: {context: ./engine, dockerfile: Dockerfile}
        deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}
    """)
LAUNCHER = "#!/bin/sh\nexec vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096\n"


def _tree(tmp_path, files):
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return str(tmp_path / "compose.yaml")


def _notes(result):
    return [p.message for p in result.problems if p.file.endswith("compose.yaml")]


def test_a_dockerfile_past_the_instruction_limit_is_said_not_cut(tmp_path):
    dockerfile = ("FROM vllm/vllm-openai:v0.10.1\n" + "LABEL x=y\n" * MAX_INSTRUCTIONS
                  + 'ENTRYPOINT ["/start.sh"]\n')
    built = read_built_image(dockerfile, "engine/Dockerfile", None, {})
    assert isinstance(built, str) and f"more than {MAX_INSTRUCTIONS:,} instructions" in built
    assert f"line {MAX_INSTRUCTIONS + 1}" in built  # FROM and 9,999 LABELs read
    path = _tree(tmp_path, {"compose.yaml": COMPOSE, "engine/Dockerfile": dockerfile, "engine/start.sh": LAUNCHER})
    result = scan([path])
    assert not result.servers
    assert any("instructions (vramlint's limit" in n for n in _notes(result))
    # at the limit exactly it is read
    within = "FROM vllm/vllm-openai:v0.10.1\n" + "LABEL x=y\n" * (MAX_INSTRUCTIONS - 3) + \
        'COPY start.sh /start.sh\nENTRYPOINT ["/start.sh"]\n'
    assert not isinstance(read_built_image(within, "engine/Dockerfile", None, {}), str)


def test_a_copy_source_stops_at_the_context_root(tmp_path):
    built = read_built_image("FROM vllm/vllm-openai:v0.10.1\nCOPY ../../launch.sh /run.sh\n"
                             "COPY ../tools/ /opt/tools/\nENTRYPOINT [\"/run.sh\"]\n", "engine/Dockerfile", None, {})
    assert context_source(built, "/run.sh", lambda rel: False)[0] == "launch.sh"
    assert context_source(built, "/opt/tools/a.sh", lambda rel: rel == "tools")[0] == "tools/a.sh"
    # the file beside the context is not the image's (BuildKit: "/launch.sh": not found); the context's is
    path = _tree(tmp_path, {"compose.yaml": COMPOSE, "launch.sh": LAUNCHER,
                            "engine/Dockerfile": "FROM vllm/vllm-openai:v0.10.1\nCOPY ../launch.sh /run.sh\n"
                                                 "ENTRYPOINT [\"/run.sh\"]\n"})
    result = scan([path])
    assert not result.servers and any("not in the repository" in n for n in _notes(result))
    (tmp_path / "engine" / "launch.sh").write_text(LAUNCHER)
    [server] = scan([path]).servers
    assert server.model_location.file.endswith("engine/launch.sh")


def test_a_workdir_longer_than_the_file_system_takes_is_no_failure(tmp_path):
    path = _tree(tmp_path, {"compose.yaml": COMPOSE,
                            "engine/Dockerfile": "FROM vllm/vllm-openai:v0.10.1\nWORKDIR /" + "d/" * 5000
                                                 + "\nCOPY . .\nENTRYPOINT [\"./start.sh\"]\n"})
    result = scan([path])
    assert not any("failed while reading" in p.message for p in result.problems)
    assert any("start.sh" in n for n in _notes(result))


def _tar(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, text in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return buf.getvalue()


def test_add_of_a_local_tar_is_unpacked_not_read_as_the_script(tmp_path):
    archive = _tar({"start.sh": LAUNCHER})
    assert is_archive(archive[:512]) and not is_archive(LAUNCHER.encode())
    path = _tree(tmp_path, {"compose.yaml": COMPOSE, "engine/app.tar": archive,
                            "engine/Dockerfile": "FROM vllm/vllm-openai:v0.10.1\nADD app.tar /start.sh\n"
                                                 "ENTRYPOINT [\"/start.sh\"]\n"})
    result = scan([path])
    assert not result.servers
    assert any("in the archive app.tar, which ADD (line 2" in n for n in _notes(result))
    # ADD of a plain script is a copy of it, read as COPY's is
    (tmp_path / "engine" / "app.tar").write_text(LAUNCHER)
    [server] = scan([path]).servers
    assert server.args["max_model_len"] == 4096


def test_a_dockerfile_read_alone_does_not_read_an_added_tar_as_its_launcher(tmp_path):
    (tmp_path / "app.tar").write_bytes(_tar({"start.sh": LAUNCHER}))
    (tmp_path / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.10.1\nADD app.tar /start.sh\n"
                                         "ENTRYPOINT [\"/start.sh\"]\n")
    result = scan([str(tmp_path)])
    assert not result.servers
    assert any("app.tar, which ADD (line 2" in p.message and "unpacks into the image" in p.message
               for p in result.problems)
