"""A Dockerfile among the scanned files whose final stage starts vLLM is a server of its own (issue 9, section 3):
ENTRYPOINT/CMD by Docker's rules (exec and shell form, the base image's entrypoint kept when the Dockerfile sets
none), ENV and ARG defaults, the image and version of the FROM the stage starts from. One that a scanned compose
service builds is read through that service only, and one that only builds an image is no server."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main
from vramlint.discover import discover


def _write(root, name, text):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _check(capsys, *paths):
    code = main(["check", *map(str, paths), "--offline", "--output-format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_a_folder_walk_lists_dockerfiles_by_their_names(tmp_path):
    for name in ("Dockerfile", "serve/Dockerfile.vllm", "gpu/vllm.Dockerfile", "p/Containerfile", "notes.md",
                 "Dockerfile.yaml", "mydockerfile"):
        _write(tmp_path, name, "FROM scratch\n")
    # (an extension-less file is also an entry to have its `#!` looked at, as a shell script: not a Dockerfile)
    found = sorted(e.path.replace(str(tmp_path) + "/", "") for e in discover([str(tmp_path)]).files
                   if not e.shebang_only)
    assert found == ["Dockerfile", "Dockerfile.yaml", "gpu/vllm.Dockerfile", "p/Containerfile", "serve/Dockerfile.vllm"]


def test_cmd_for_the_vllm_image_entrypoint_with_the_tag_from_an_arg_default(tmp_path, capsys):
    _write(tmp_path, "svc/Dockerfile", """\
        ARG VLLM_TAG=v0.6.3
        FROM vllm/vllm-openai:${VLLM_TAG}
        CMD ["--model", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "3"]
        """)
    code, report = _check(capsys, tmp_path)
    [server] = report["servers"]
    assert (server["model"], server["vllm_version"], server["image"]) == (
        "Qwen/Qwen2.5-7B-Instruct", "0.6.3", "vllm/vllm-openai:v0.6.3")
    # 28 heads, TP 3: vLLM refuses it; said on the Dockerfile's CMD line
    [error] = [f for f in report["findings"] if f["level"] == "error"]
    assert (error["rule"], error["file"].endswith("svc/Dockerfile"), error["line"]) == ("VRL006", True, 3)
    assert code == 1


def test_exec_form_entrypoint_of_the_api_server_module_with_cmd_arguments(tmp_path, capsys):
    _write(tmp_path, "Dockerfile.serve", """\
        FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
        RUN pip install vllm
        ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "facebook/opt-125m"]
        CMD ["--max-model-len", "1024"]
        """)
    _, report = _check(capsys, tmp_path)
    [server] = report["servers"]
    assert (server["model"], server["line"], server["vllm_version"]) == ("facebook/opt-125m", 3, None)
    assert server["args"]["max_model_len"] == 1024


def test_shell_form_cmd_takes_env_values_and_the_last_stage(tmp_path, capsys):
    _write(tmp_path, "app/vllm.Dockerfile", """\
        FROM vllm/vllm-openai:v0.8.5 AS runtime
        ENV MODEL=facebook/opt-125m
        FROM python:3.12-slim AS docs
        CMD ["python", "-m", "http.server"]
        FROM runtime
        ENV MAX_LEN=2048
        ENTRYPOINT vllm serve $MODEL \\
            --max-model-len $MAX_LEN
        """)
    _, report = _check(capsys, tmp_path)
    [server] = report["servers"]
    assert (server["model"], server["vllm_version"], server["line"]) == ("facebook/opt-125m", "0.8.5", 7)
    assert server["args"]["max_model_len"] == 2048


def test_an_image_only_build_is_no_server_and_says_nothing(tmp_path, capsys):
    _write(tmp_path, "Dockerfile", "FROM vllm/vllm-openai:v0.9.2\nRUN pip install flash-attn\n")
    code, report = _check(capsys, tmp_path)
    assert (code, report["servers"], report["findings"]) == (0, [], [])


def test_a_dockerfile_without_vllm_is_not_read(tmp_path, capsys):
    _write(tmp_path, "Dockerfile", 'FROM python:3.12\nCMD ["--max-model-len", "-3"]\n')
    _, report = _check(capsys, tmp_path)
    assert (report["servers"], report["findings"]) == ([], [])


def test_a_dockerfile_naming_vllm_that_starts_no_server_says_why_once(tmp_path, capsys):
    _write(tmp_path, "Dockerfile", 'FROM vllm/vllm-openai:v0.9.2\nCOPY start.sh /start.sh\nCMD ["/start.sh"]\n')
    _, report = _check(capsys, tmp_path)
    assert report["servers"] == []
    [note] = report["findings"]
    assert note["level"] == "note" and note["line"] == 3 and "/start.sh" in note["message"]


def test_an_unknown_from_variable_leaves_image_and_version_unknown(tmp_path, capsys):
    _write(tmp_path, "Dockerfile", 'ARG BASE\nFROM ${BASE}\nCMD ["vllm", "serve", "facebook/opt-125m"]\n')
    _, report = _check(capsys, tmp_path)
    [server] = report["servers"]
    assert (server["image"], server["vllm_version"]) == (None, None)
    assert any("needs BASE" in n for n in server["notes"])


def test_a_dockerfile_that_compose_builds_is_one_server_with_the_service_command(tmp_path, capsys):
    _write(tmp_path, "server/Dockerfile", """\
        FROM vllm/vllm-openai:v0.9.2
        CMD ["--model", "facebook/opt-125m", "--tensor-parallel-size", "3"]
        """)
    # compose's `command` replaces the CMD: the Dockerfile's TP 3 never runs
    _write(tmp_path, "compose.yaml", """\
        services:
          llm:
            build: ./server
            command: [--model, Qwen/Qwen2.5-0.5B-Instruct]
        """)
    code, report = _check(capsys, tmp_path)
    [server] = report["servers"]
    assert (server["file"].endswith("compose.yaml"), server["model"]) == (True, "Qwen/Qwen2.5-0.5B-Instruct")
    assert not [f for f in report["findings"] if f["file"].endswith("Dockerfile")]
    assert code == 0


def test_a_compose_service_that_builds_and_runs_something_else_drops_the_dockerfile_too(tmp_path, capsys):
    _write(tmp_path, "img/Dockerfile.gpu", 'FROM vllm/vllm-openai:v0.9.2\nCMD ["--model", "facebook/opt-125m"]\n')
    _write(tmp_path, "docker-compose.yml", """\
        services:
          worker:
            build: {context: ./img, dockerfile: Dockerfile.gpu}
            entrypoint: [python, -m, my_worker]
        """)
    _, report = _check(capsys, tmp_path)
    assert report["servers"] == []


def test_a_shell_form_entrypoint_ignores_the_cmd(tmp_path, capsys):
    # Docker: the shell form of ENTRYPOINT runs `/bin/sh -c`, and the CMD words become the script's $0 $1 ...,
    # which it does not use: the CMD's --max-model-len never reaches vLLM
    _write(tmp_path, "Dockerfile", 'FROM vllm/vllm-openai:v0.9.2\nENTRYPOINT vllm serve facebook/opt-125m\n'
                                   'CMD ["--max-model-len", "99999999"]\n')
    code, report = _check(capsys, tmp_path)
    [server] = report["servers"]
    assert (server["model"], server["args"]) == ("facebook/opt-125m", {})
    assert code == 0


def test_another_program_on_the_vllm_image_is_no_server_and_named_in_one_note(tmp_path, capsys):
    # a benchmark client installed on vLLM's image: its ENTRYPOINT replaces the image's `vllm serve`
    _write(tmp_path, "Containerfile.bench", 'ARG BASE=vllm/vllm-openai\nFROM $BASE\nRUN pip install bench\n'
                                            'ENTRYPOINT ["bench"]\nCMD ["run"]\n')
    code, report = _check(capsys, tmp_path)
    assert (code, report["servers"]) == (0, [])
    [note] = report["findings"]
    assert (note["level"], note["line"]) == ("note", 4) and "`bench run`" in note["message"]


def test_a_run_pip_install_pin_is_the_version_the_built_server_runs(tmp_path, capsys):
    # pip puts the pinned release over whatever the base holds; the pin is in the stage the final one is FROM
    _write(tmp_path, "Dockerfile", """\
        FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04 AS base
        RUN apt-get update && \\
            pip install --no-cache-dir "vllm==0.6.3.post1" ray
        FROM base
        CMD ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "4096"]
        """)
    _, report = _check(capsys, tmp_path)
    [server] = report["servers"]
    assert server["vllm_version"] == "0.6.3.post1"
    text = json.dumps(report)
    assert "is not a vLLM image vramlint knows" not in text
    assert "the vLLM version is not known" not in text


def test_no_exact_pin_or_two_pins_leave_the_version_unknown(tmp_path, capsys):
    for folder, run in (("a", "pip install 'vllm>=0.6'"), ("b", "pip install vllm==0.6.3 && pip install vllm==0.7.0"),
                        ("c", "pip install vllm==0.6.3+cu118")):
        _write(tmp_path, f"{folder}/Dockerfile", f"""\
            FROM python:3.11
            RUN {run}
            CMD ["vllm", "serve", "facebook/opt-125m"]
            """)
    _, report = _check(capsys, tmp_path)
    assert sorted(s["vllm_version"] is None for s in report["servers"]) == [True, True, True]


def test_a_compose_service_built_from_a_pinning_dockerfile_runs_that_release(tmp_path, capsys):
    _write(tmp_path, "Dockerfile", """\
        FROM python:3.11-slim
        RUN uv pip install --system vllm==0.8.5
        """)
    _write(tmp_path, "compose.yaml", """\
        services:
          llm:
            build: .
            command: ["vllm", "serve", "facebook/opt-125m", "--max-model-len", "2048"]
        """)
    _, report = _check(capsys, tmp_path / "compose.yaml")
    [server] = report["servers"]
    assert server["vllm_version"] == "0.8.5"
    assert "vLLM 0.8.5 from its RUN pip install (line 2)" in json.dumps(report)


def test_an_unpinned_pip_install_over_a_vllm_base_makes_the_version_unknown(tmp_path, capsys):
    _write(tmp_path, "a/Dockerfile", """\
        FROM vllm/vllm-openai:v0.6.3
        RUN pip install -U vllm
        CMD ["--model", "facebook/opt-125m"]
        """)
    # `vllm` after the command that ends the install is not a requirement: the base's release stays
    _write(tmp_path, "b/Dockerfile", """\
        FROM vllm/vllm-openai:v0.6.3
        RUN pip install flash-attn && python3 -c "import vllm"
        CMD ["--model", "facebook/opt-125m"]
        """)
    _, report = _check(capsys, tmp_path)
    versions = {s["file"].rsplit("/", 2)[-2]: s["vllm_version"] for s in report["servers"]}
    assert versions == {"a": None, "b": "0.6.3"}
    assert "installs vLLM with pip without pinning one release" in json.dumps(report)
