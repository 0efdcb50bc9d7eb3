"""systemd service units: the vLLM servers their ExecStart= lines start, read with systemd's own rules (comments,
backslash continuation, ExecStart prefixes and quoting, `$VAR` split vs `${VAR}` whole, Environment= and
EnvironmentFile=, specifiers, WorkingDirectory=), on their own or through the launcher script they run."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main
from vramlint.scan import scan


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


_UNIT = """\
    [Unit]
    Description=OpenAI-compatible LLM endpoint (vLLM)
    After=network-online.target

    [Service]
    Type=simple
    User=inference
    ; several quoted assignments on a line; a later one wins
    Environment="SERVED=mistralai/Mistral-7B-Instruct-v0.3" "TUNING=--enable-prefix-caching --max-num-seqs 48"
    Environment=CUDA_VISIBLE_DEVICES=2,3 SERVED=Qwen/Qwen2.5-14B-Instruct
    ExecStart=-/opt/llm/.venv/bin/vllm serve ${SERVED} \\
        --tensor-parallel-size 2 \\
    # a comment between the continued lines is not part of the value
        --max-model-len 20480 $TUNING \\
        --served-model-name "assistant model"
    Restart=on-failure

    [Install]
    WantedBy=multi-user.target
    """


def test_a_unit_execstart_with_continuations_environment_and_a_prefix(tmp_path):
    root = _tree(tmp_path, {"deploy/systemd/llm.service": _UNIT})
    [server] = scan([root]).servers
    assert server.source_format == "systemd" and server.name == "llm"
    # `${SERVED}` is one word, from the later assignment
    assert server.model == "Qwen/Qwen2.5-14B-Instruct"
    assert server.location.line == 11 and server.model_location.line == 11
    assert server.args["tensor_parallel_size"] == 2 and server.arg_locations["tensor_parallel_size"].line == 12
    assert server.args["max_model_len"] == 20480 and server.arg_locations["max_model_len"].line == 14
    # `$TUNING` alone is split on whitespace into several words
    assert server.args["enable_prefix_caching"] is True and server.args["max_num_seqs"] == 48
    assert server.args["served_model_name"] == ["assistant model"]
    # CUDA_VISIBLE_DEVICES gives the count, as for a supervisord program
    assert server.gpu is not None and server.gpu.count == 2 and server.gpu.device_ids == ["2", "3"]
    assert server.gpu.location.line == 10


def test_the_walk_reads_units_that_name_vllm_only(tmp_path):
    root = _tree(tmp_path, {
        "units/vllm.service": _UNIT,
        "units/web.service": "[Service]\nExecStart=/usr/sbin/nginx -g 'daemon off;'\n",
        "units/vllm.socket": "[Socket]\nListenStream=8000\n"})
    result = scan([root])
    assert [s.file for s in result.servers] == ["units/vllm.service"] or \
        [s.file.rsplit("/", 2)[-2:] for s in result.servers] == [["units", "vllm.service"]]
    assert not any(p.file.endswith(("web.service", "vllm.socket")) for p in result.problems)


def test_python_module_entrypoint_with_at_and_colon_prefixes(tmp_path):
    root = _tree(tmp_path, {"api.service": """\
        [Service]
        Environment=MODEL_PATH=facebook/opt-1.3b
        ExecStart=@/usr/bin/python3 vllm-api -m vllm.entrypoints.openai.api_server --model ${MODEL_PATH} --dtype half
        """, "raw.service": """\
        [Unit]
        Description=vllm without substitution
        [Service]
        Environment=MODEL_PATH=facebook/opt-1.3b
        ExecStart=:/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model ${MODEL_PATH}
        """})
    servers = {s.name: s for s in scan([root]).servers}
    # `@`: the second word is argv[0], not an argument of the program
    assert servers["api"].model == "facebook/opt-1.3b" and servers["api"].args["dtype"] == "half"
    # `:`: no substitution, vLLM gets the text as written
    assert servers["raw"].model == "${MODEL_PATH}"


def test_a_unit_running_a_launcher_script_of_the_tree_passes_its_environment(tmp_path):
    script = tmp_path / "srv" / "bin" / "start-llm.sh"
    root = _tree(tmp_path, {
        "srv/bin/start-llm.sh": """\
            #!/usr/bin/env bash
            set -euo pipefail
            exec vllm serve "${MODEL_REPO:?}" --max-model-len "${MAX_LEN:-4096}" \\
                --gpu-memory-utilization "${GPU_UTIL:-0.9}"
            """,
        "srv/systemd/llm-speed.service": f"""\
            [Unit]
            Description=vLLM behind the launcher
            [Service]
            Environment=MODEL_REPO=Qwen/Qwen2.5-3B-Instruct
            Environment=MAX_LEN=12288 GPU_UTIL=0.8
            ExecStart={script}
            """,
        "srv/systemd/relative.service": """\
            [Unit]
            Description=vLLM launched by a relative script
            [Service]
            ExecStart=/bin/bash bin/start-llm.sh
            """})
    result = scan([root])
    [server] = result.servers
    assert server.model == "Qwen/Qwen2.5-3B-Instruct"
    assert server.args["max_model_len"] == 12288 and server.args["gpu_memory_utilization"] == 0.8
    assert server.file.endswith("llm-speed.service") and server.model_location.file.endswith("start-llm.sh")
    # a relative script without WorkingDirectory= is said, not guessed
    [note] = [p for p in result.problems if p.file.endswith("relative.service")]
    assert note.level == "note" and "WorkingDirectory=" in note.message and note.line == 4


def test_working_directory_places_a_relative_script(tmp_path):
    root = _tree(tmp_path, {
        "app/run.sh": "#!/bin/sh\nexec vllm serve \"$M\" --max-model-len 2048\n",
        "app/vllm.service": f"""\
            [Unit]
            Description=vLLM, relative to its folder
            [Service]
            WorkingDirectory={tmp_path / 'app'}
            Environment=M=Qwen/Qwen2.5-0.5B-Instruct
            ExecStart=/bin/sh run.sh
            """})
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["max_model_len"] == 2048


def test_environment_file_in_the_tree_wins_over_environment(tmp_path):
    env = tmp_path / "etc" / "vllm.env"
    root = _tree(tmp_path, {
        "etc/vllm.env": "# the served model\nMODEL='Qwen/Qwen2.5-7B-Instruct'\nCTX=\"8192\"\n",
        "vllm.service": f"""\
            [Service]
            EnvironmentFile={env}
            Environment=MODEL=facebook/opt-125m
            ExecStart=/usr/local/bin/vllm serve $MODEL --max-model-len ${{CTX}}
            """})
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 8192


def test_an_environment_file_outside_the_tree_is_an_unknown_said_once(tmp_path):
    root = _tree(tmp_path, {"vllm.service": """\
        [Service]
        EnvironmentFile=-/etc/default/vllm
        ExecStart=/usr/local/bin/vllm serve $MODEL --max-model-len ${CTX} --port 8000
        """})
    [server] = scan([root]).servers
    # said once, where the words it leaves unknown are said
    said = [n for n in server.notes + server.unchecked if "EnvironmentFile=" in n or "$MODEL" in n]
    assert len(said) == 1 and "/etc/default/vllm" in said[0] and "$MODEL, $CTX" in said[0]
    assert server.model is None and server.args.get("max_model_len") is None and server.args["port"] == 8000


def test_a_template_unit_has_its_instance_unknown(tmp_path):
    root = _tree(tmp_path, {"vllm@.service": """\
        [Service]
        ExecStart=/usr/bin/vllm serve Qwen/Qwen2.5-1.5B-Instruct --port 80%i --served-model-name %p-%%
        """})
    [server] = scan([root]).servers
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct"
    assert server.args.get("port") is None  # `80%i` is known only for an instance
    assert server.args["served_model_name"] == ["vllm-%"]
    assert sum("%i" in n for n in server.notes + server.unchecked) == 1


def test_oneshot_reads_each_execstart_and_other_types_are_refused(tmp_path):
    root = _tree(tmp_path, {"pair.service": """\
        [Service]
        Type=oneshot
        ExecStart=/usr/bin/vllm serve facebook/opt-125m --port 8001
        ExecStart=/usr/bin/vllm serve facebook/opt-350m --port 8002
        """, "twice.service": """\
        [Service]
        ExecStart=/usr/bin/vllm serve facebook/opt-125m
        ExecStart=/usr/bin/vllm serve facebook/opt-350m
        """, "reset.service": """\
        [Service]
        Type=oneshot
        ExecStart=/usr/bin/vllm serve facebook/opt-125m
        ExecStart=
        ExecStart=/usr/bin/vllm serve facebook/opt-1.3b
        """})
    result = scan([root])
    by_file = {}
    for s in result.servers:
        by_file.setdefault(s.file.rsplit("/", 1)[-1], []).append(s.model)
    assert by_file["pair.service"] == ["facebook/opt-125m", "facebook/opt-350m"]
    assert by_file["reset.service"] == ["facebook/opt-1.3b"]  # an empty ExecStart= resets the list
    assert "twice.service" not in by_file
    [refused] = [p for p in result.problems if p.file.endswith("twice.service")]
    assert refused.level == "warning" and "Type=oneshot" in refused.message and refused.line == 3


def test_a_unit_named_on_the_command_line_is_not_read_as_yaml(tmp_path, capsys):
    path = tmp_path / "vllm.service"
    path.write_text(textwrap.dedent(_UNIT))
    main(["check", str(path), "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert not any(f["rule"] == "VRL102" and f["level"] == "error" for f in report["findings"])
    assert [s["name"] for s in report["servers"]] == ["vllm"]


def test_other_ini_style_files_named_are_skipped_with_the_reason(tmp_path, capsys):
    (tmp_path / "proxy.conf").write_text("upstream vllm {\n  server 127.0.0.1:8000;\n}\n")
    (tmp_path / "engine.ini").write_text("[vllm]\nmodel: facebook/opt-125m\nport=8000\n")
    code = main(["check", str(tmp_path / "proxy.conf"), str(tmp_path / "engine.ini"), "--offline",
                 "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["findings"] == []
    assert sorted(s["reason"].split(" (")[0] for s in report["skipped"]) == ["a configuration file", "an INI file"]


def test_a_unit_that_mentions_vllm_but_starts_no_server_is_said(tmp_path):
    root = _tree(tmp_path, {"vllm-proxy.service": """\
        [Unit]
        Description=proxy in front of vllm
        [Service]
        ExecStart=/opt/vllm-gateway/bin/gateway --upstream 127.0.0.1:8000
        """, "ui.service": """\
        [Unit]
        After=vllm.service
        [Service]
        ExecStart=/usr/bin/node /srv/ui/server.js
        """})
    result = scan([root])
    assert result.servers == []
    # one that names vLLM only in its ordering (After=) launches something else: nothing said
    [note] = result.problems
    assert note.file.endswith("vllm-proxy.service")
    assert note.level == "note" and "no ExecStart= starts a vLLM server" in note.message and note.line == 2


def test_a_script_under_working_directory_is_the_checkout_of_the_repository(tmp_path):
    # the unit is kept in the repository it is run from: WorkingDirectory= is where that repository is checked out
    root = _tree(tmp_path, {
        "llm-serve/deploy/serve.service": """\
            [Unit]
            Description=vLLM (launcher of this repository)
            [Service]
            WorkingDirectory=/home/ops/llm-serve
            Environment=MODEL_REPO=Qwen/Qwen2.5-7B-Instruct MAX_MODEL_LEN=32768
            ExecStart=/home/ops/llm-serve/bin/serve.sh
            """,
        "llm-serve/bin/serve.sh": """\
            #!/usr/bin/env bash
            exec vllm serve "${MODEL_REPO}" --max-model-len "${MAX_MODEL_LEN:-8192}"
            """,
        "llm-serve/deploy/other.service": """\
            [Service]
            WorkingDirectory=/home/ops/llm-serve
            ExecStart=/home/ops/llm-serve/bin/missing-vllm.sh
            """,
        "llm-serve/deploy/shell.service": """\
            [Unit]
            Description=vLLM from a folder named by a specifier
            [Service]
            WorkingDirectory=/home/%u/llm-serve
            Environment=MODEL_REPO=Qwen/Qwen2.5-3B-Instruct
            ExecStart=/usr/bin/env bash bin/serve.sh
            """})
    result = scan([root])
    servers = {s.name: s for s in result.servers}
    assert sorted(servers) == ["serve", "shell"]
    server = servers["serve"]
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 32768
    assert any("WorkingDirectory=/home/ops/llm-serve taken to be the checkout" in n for n in server.notes)
    # `env` runs the shell; the working directory is not known (%u), its relative script found in the checkout
    assert servers["shell"].model == "Qwen/Qwen2.5-3B-Instruct" and servers["shell"].args["max_model_len"] == 8192
    # a script the checkout does not hold is said as not read
    [note] = [p for p in result.problems if p.file.endswith("other.service")]
    assert "missing-vllm.sh" in note.message and note.level == "note"


def test_shell_c_docker_run_and_a_user_units_home(tmp_path):
    root = _tree(tmp_path, {
        "shell.service": """\
            [Service]
            Environment=CTX=6144
            ExecStart=/bin/bash -lc 'source /opt/venv/bin/activate && \\
                exec vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len "$CTX"'
            """,
        "container.service": """\
            [Unit]
            Description=vLLM in its container
            [Service]
            ExecStartPre=-/usr/bin/docker rm -f llm
            ExecStart=/usr/bin/docker run --rm --name llm --gpus all vllm/vllm-openai:v0.6.3 \\
                --model facebook/opt-125m --max-model-len 1024
            """,
        "user/home.service": """\
            [Service]
            ExecStart=%h/.venv/bin/vllm serve facebook/opt-350m --max-model-len 1536
            [Install]
            WantedBy=default.target
            """})
    servers = {s.name: s for s in scan([root]).servers}
    # the shell of `bash -c` expands $CTX from the process environment the unit gives it
    assert servers["shell"].model == "Qwen/Qwen2.5-1.5B-Instruct" and servers["shell"].args["max_model_len"] == 6144
    # ExecStartPre= starts nothing that is checked; the `docker run` of ExecStart= is the server
    container = servers["container"]
    assert container.image == "vllm/vllm-openai:v0.6.3" and container.args["max_model_len"] == 1024
    assert container.source_format == "systemd" and container.location.line == 5
    # a user unit's %h is not known, but the program it names is
    home = servers["home"]
    assert home.model == "facebook/opt-350m" and home.args["max_model_len"] == 1536
    assert sum("%h" in n for n in home.notes) == 1


def test_a_setting_continued_past_systemds_line_limit_is_a_refused_unit(tmp_path):
    # systemd's config_parse refuses a line over LONG_LINE_MAX (1 MiB, continuations joined) and loads nothing;
    # the continued text is joined once (joining at every line took minutes for 100,000 continued lines)
    from vramlint.extract.systemd import LONG_LINE_MAX, parse_unit

    continued = "[Service]\nExecStart=/usr/bin/vllm serve facebook/opt-125m \\\n" + " --max-num-seqs 8 \\\n" * 100_000
    unit, errors = parse_unit(continued + " --port 8000\n")
    assert not unit.sections and errors[0][0] == 2 and "not loaded" in errors[0][1]
    path = tmp_path / "engine.service"
    path.write_text("[Service]\nEnvironment=" + "A" * (LONG_LINE_MAX + 1) + "=1\nExecStart=vllm serve x\n")
    inv = scan([str(path)])
    assert inv.servers == []
    assert [(p.line, p.level) for p in inv.problems if "systemd refuses" in p.message] == [(2, "warning")]
    # under the limit, a long continued ExecStart is read, its words on their own lines
    unit, errors = parse_unit("[Service]\nExecStart=/usr/bin/vllm serve facebook/opt-125m \\\n"
                              + " --max-num-seqs 8 \\\n" * 1_000 + " --port 8000\n")
    [setting] = unit.sections["Service"]
    assert setting.value.endswith("--port 8000") and setting.places[-1][0] == 1_003


def test_an_unread_environment_file_is_said_on_its_own_line(tmp_path):
    # hostile22: the note was on the ExecStart= line (the server's), not on the line that names the file
    unit = tmp_path / "engine.service"
    unit.write_text("[Unit]\nDescription=x\n[Service]\nEnvironmentFile=/etc/engine/engine.env\n"
                    "EnvironmentFile=-/proc/self/environ\n"
                    "ExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len ${MML}\n")
    inv = scan([str(tmp_path)])
    [server] = inv.servers
    said = [p for p in inv.problems if "EnvironmentFile=" in p.message]
    assert [(p.line, p.level) for p in said] == [(4, "note")]
    assert "/etc/engine/engine.env" in said[0].message and "1 more EnvironmentFile=" in said[0].message
    assert not any(n.startswith("EnvironmentFile=") for n in server.notes)


def test_drop_ins_past_the_bound_leave_the_unit_unchecked_and_said(tmp_path):
    from vramlint.extract.systemd import MAX_DROP_INS

    (tmp_path / "engine.service").write_text(
        "[Service]\nExecStart=/opt/venv/bin/vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096\n")
    folder = tmp_path / "engine.service.d"
    folder.mkdir()
    for k in range(MAX_DROP_INS + 5):
        (folder / f"{k:04d}.conf").write_text(f"[Service]\nEnvironment=N={k}\n")
    # the last drop-in, which systemd applies last, starts another model: no reading of the first ones is right
    (folder / "zz-last.conf").write_text("[Service]\nExecStart=\nExecStart=/opt/venv/bin/vllm serve other/model\n")
    inv = scan([str(tmp_path)])
    assert inv.servers == []
    [said] = [p for p in inv.problems if "drop-ins" in p.message]
    assert said.level == "warning" and said.file.endswith(f"{MAX_DROP_INS:04d}.conf") and said.line == 1
    assert f"{MAX_DROP_INS + 6:,} drop-ins" in said.message
