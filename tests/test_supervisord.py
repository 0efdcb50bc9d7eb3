"""supervisord configurations: the vLLM servers their [program:NAME] sections start, read with supervisord's own
rules (INI continuation lines and comments, %(name)s expansions, environment=, numprocs), on their own or through
the image that runs supervisord (a Dockerfile read alone, a compose service built from one)."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


_CONF = """\
    ; two processes: the engine and the UI in front of it
    [supervisord]
    nodaemon=true
    environment=HF_HOME="/data/hf"

    [program:llm]
    command=vllm serve Qwen/Qwen2.5-1.5B-Instruct
        --max-model-len 4096    ; what the UI sends at most
        --gpu-memory-utilization 0.7
        --served-model-name ui#llm
    environment=CUDA_VISIBLE_DEVICES="1",VLLM_LOGGING_LEVEL=DEBUG
    autorestart=true

    [program:ui]
    command=python /srv/ui.py --upstream http://127.0.0.1:8000
    """


def test_a_program_command_with_continuation_lines_and_comments(tmp_path):
    root = _tree(tmp_path, {"deploy/supervisord.conf": _CONF})
    [server] = scan([root]).servers
    assert server.source_format == "supervisord" and server.name == "llm"
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct"
    assert server.location.line == 7 and server.model_location.line == 7
    # the `;` after whitespace is a comment; the `#` inside a word is not
    assert server.args["max_model_len"] == 4096 and server.arg_locations["max_model_len"].line == 8
    assert server.args["gpu_memory_utilization"] == 0.7 and server.arg_locations["gpu_memory_utilization"].line == 9
    assert server.args["served_model_name"] == ["ui#llm"]
    # the [supervisord] section's environment is every child's; the program's own adds to it
    assert server.env["HF_HOME"] == "/data/hf" and server.env["VLLM_LOGGING_LEVEL"] == "DEBUG"
    assert server.gpu is not None and server.gpu.count == 1 and server.gpu.device_ids == ["1"]


def test_expansions_from_the_environment_and_numprocs(tmp_path):
    root = _tree(tmp_path, {"supervisor/engines.conf": """\
        [program:engine]
        process_name=%(program_name)s-%(process_num)d
        numprocs=2
        numprocs_start=1
        environment=MODEL_ID="Qwen/Qwen2.5-0.5B-Instruct"
        command=/usr/bin/env vllm serve %(ENV_MODEL_ID)s --port 80%(process_num)02d
            --max-model-len %(ENV_CTX_LEN)s --gpu-memory-utilization 0.4
        """})
    result = scan([root])
    servers = sorted(result.servers, key=lambda s: s.name)
    assert [s.name for s in servers] == ["engine-1", "engine-2"]
    assert all(s.model == "Qwen/Qwen2.5-0.5B-Instruct" for s in servers)
    assert [s.args["port"] for s in servers] == [8001, 8002]
    # supervisord's own environment (ENV_CTX_LEN) is not in the file: unknown, said once per server
    for server in servers:
        assert "max_model_len" not in server.args or server.args["max_model_len"] is None
        said = [n for n in server.notes + server.unchecked if "%(ENV_CTX_LEN)s" in n]
        assert len(said) == 1 and "run time" in said[0] and "environment=" in said[0]
    assert servers[0].location.yaml_path != servers[1].location.yaml_path


def test_numprocs_without_process_num_is_refused_by_supervisord(tmp_path):
    root = _tree(tmp_path, {"supervisord.conf": """\
        [program:engine]
        numprocs=3
        command=vllm serve Qwen/Qwen2.5-0.5B-Instruct
        """})
    result = scan([root])
    assert result.servers == []
    [problem] = [p for p in result.problems if "supervisord.conf" in p.file]
    assert problem.level == "warning" and "%(process_num)" in problem.message and problem.line == 1


def test_a_bash_c_command_keeps_its_words_places(tmp_path):
    root = _tree(tmp_path, {"supervisord.conf": """\
        [program:api]
        command=/bin/bash -c "exec vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len 2048"
        """})
    [server] = scan([root]).servers
    text = (tmp_path / "supervisord.conf").read_text().splitlines()[1]
    assert server.model_location.line == 2
    assert server.model_location.column == text.index("Qwen/") + 1
    assert server.args["max_model_len"] == 2048


def test_what_the_walk_reads_and_what_it_leaves(tmp_path):
    root = _tree(tmp_path, {
        # no vLLM named: not parsed at all (its line before any section would be a warning if it were)
        "supervisor/worker.conf": "stray line\n[program:worker]\ncommand=celery worker\n",
        # an nginx conf.d file that names vLLM but has no [program:] section: no launcher, nothing said
        "conf.d/proxy.conf": "upstream vllm { server 127.0.0.1:8000; }\n",
        # a *.conf outside supervisord's folders is not a file the walk reads
        "etc/other.conf": "[program:x]\ncommand=vllm serve Qwen/Qwen2.5-0.5B-Instruct\n"})
    result = scan([root])
    assert result.servers == [] and result.problems == []


def test_a_program_that_mentions_vllm_but_runs_a_wrapper_is_said(tmp_path):
    root = _tree(tmp_path, {"supervisord.conf": """\
        [program:vllm]
        command=/opt/run-model.py --engine vllm
        """})
    result = scan([root])
    assert result.servers == []
    [note] = [p for p in result.problems if p.file.endswith("supervisord.conf")]
    assert note.level == "note" and "[program:vllm]" in note.message and note.line == 1


_ENGINE_CONF = """\
    [program:engine]
    command=vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192 --gpu-memory-utilization 0.85
    environment=VLLM_ATTENTION_BACKEND="FLASH_ATTN"
    """


def test_a_dockerfile_that_runs_supervisord_is_the_server_the_conf_starts(tmp_path):
    root = _tree(tmp_path, {
        "app/Dockerfile": """\
            FROM vllm/vllm-openai:v0.10.1
            ENV HF_HOME=/cache
            RUN apt-get update && apt-get install -y supervisor
            COPY ops/engine.conf /etc/supervisor/conf.d/engine.conf
            CMD ["supervisord", "-n", "-c", "/etc/supervisor/conf.d/engine.conf"]
            """,
        "app/ops/engine.conf": _ENGINE_CONF})
    [server] = scan([root]).servers
    assert server.source_format == "dockerfile" and server.file.endswith("app/Dockerfile")
    assert server.image == "vllm/vllm-openai:v0.10.1" and server.vllm_version == "0.10.1"
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.model_location.file.endswith("ops/engine.conf")
    assert server.env["HF_HOME"] == "/cache" and server.env["VLLM_ATTENTION_BACKEND"] == "FLASH_ATTN"
    [note] = [n for n in server.notes if "[program:engine]" in n]
    assert "COPY ops/engine.conf (line 4" in note and "build context" in note


def test_supervisord_without_c_reads_the_debian_conf_d_include(tmp_path):
    root = _tree(tmp_path, {
        "Dockerfile": """\
            FROM vllm/vllm-openai:v0.9.2
            COPY supervisor/ /etc/supervisor/conf.d/
            ENTRYPOINT ["/usr/bin/supervisord"]
            """,
        "supervisor/engine.conf": _ENGINE_CONF})
    [server] = scan([root]).servers
    assert server.source_format == "dockerfile" and server.vllm_version == "0.9.2"
    assert server.args["max_model_len"] == 8192


def test_a_compose_service_built_to_run_supervisord_takes_its_gpus(tmp_path):
    root = _tree(tmp_path, {
        "compose.yaml": """\
            services:
              llm:
                build: ./engine
                deploy:
                  resources:
                    reservations:
                      devices:
                        - driver: nvidia
                          device_ids: ["0", "1"]
                          capabilities: [gpu]
            """,
        "engine/Dockerfile": """\
            FROM vllm/vllm-openai:v0.10.1
            COPY engine.conf /etc/supervisord.conf
            CMD ["supervisord"]
            """,
        "engine/engine.conf": _ENGINE_CONF.replace("--max-model-len 8192", "--max-model-len 8192 -tp 2")})
    [server] = scan([root]).servers
    assert server.source_format == "compose" and server.name == "llm"
    assert server.gpu is not None and server.gpu.count == 2
    assert server.args["tensor_parallel_size"] == 2 and server.vllm_version == "0.10.1"
    assert server.env["VLLM_ATTENTION_BACKEND"] == "FLASH_ATTN"


def test_a_dockerfile_whose_copy_of_the_conf_is_from_another_stage_leaves_the_conf_its_own_server(tmp_path):
    root = _tree(tmp_path, {
        "Dockerfile": """\
            FROM alpine AS cfg
            RUN echo > /engine.conf
            FROM vllm/vllm-openai:v0.10.1
            COPY --from=cfg /engine.conf /etc/supervisord.conf
            CMD ["supervisord", "-c", "/etc/supervisord.conf"]
            """,
        "supervisord.conf": _ENGINE_CONF})
    result = scan([root])
    [server] = result.servers
    assert server.source_format == "supervisord"  # what the image runs is not the repository's file
    [note] = [p for p in result.problems if p.file == "Dockerfile" or p.file.endswith("/Dockerfile")]
    assert note.level == "note" and "supervisord" in note.message


def test_a_program_running_a_script_of_the_repository_through_here_is_followed(tmp_path):
    root = _tree(tmp_path, {
        "ops/supervisor/engine.conf": """\
            [program:vllm-engine]
            command=%(here)s/../bin/run-engine.sh
            environment=ENGINE_MODEL="Qwen/Qwen2.5-3B-Instruct",ENGINE_CTX="12288"
            autostart=false
            """,
        "ops/bin/run-engine.sh": """\
            #!/usr/bin/env bash
            MODEL="${ENGINE_MODEL:-facebook/opt-125m}"
            exec vllm serve "$MODEL" --max-model-len "${ENGINE_CTX:-2048}"
            """,
        "ops/supervisor/relative.conf": """\
            [program:relative]
            command=bin/run-engine.sh --engine vllm
            """})
    result = scan([root])
    [server] = result.servers
    # the program's environment= is what the script sees
    assert server.model == "Qwen/Qwen2.5-3B-Instruct" and server.args["max_model_len"] == 12288
    assert server.file.endswith("supervisor/engine.conf") and server.model_location.file.endswith("run-engine.sh")
    assert any("autostart=false" in n for n in server.notes)
    # a relative path with no directory= is relative to where supervisord was started: said, not guessed
    [note] = [p for p in result.problems if p.file.endswith("relative.conf")]
    assert note.level == "note" and "directory=" in note.message and note.line == 2


def test_a_compose_service_running_supervisord_on_a_bind_mounted_conf(tmp_path):
    root = _tree(tmp_path, {
        "compose.yaml": """\
            services:
              engine:
                image: vllm/vllm-openai:v0.10.1
                entrypoint: ["supervisord", "-n", "-c", "/etc/supervisor/engine.conf"]
                volumes:
                  - ./supervisor:/etc/supervisor:ro
                gpus: all
            """,
        "supervisor/engine.conf": _ENGINE_CONF})
    [server] = scan([root]).servers
    assert server.source_format == "compose" and server.vllm_version == "0.10.1"
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.model_location.file.endswith("engine.conf")


def test_environment_keys_are_placed_in_order_also_when_one_is_a_prefix_of_another(tmp_path):
    # each key is looked for after the one before (a search of the whole value per key was quadratic: 200,000
    # pairs took 104 CPU-s, now 1.6)
    from vramlint.extract.supervisord import read_programs

    text = ('[program:engine]\nenvironment=A10="x",A1="y",\n  B=1\n'
            'command=vllm serve facebook/opt-125m --max-model-len 2048\n')
    [program] = read_programs(text, "supervisord.conf")[0]
    where = {k: (loc.line, loc.column) for k, loc in program.env_locations.items()}
    assert where == {"A10": (2, 13), "A1": (2, 21), "B": (3, 3)}
