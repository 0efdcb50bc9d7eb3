"""Launch scripts named on the command line: the vLLM server a shell script starts, never YAML errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from vramlint.scan import scan


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_vllm_serve_in_a_script_is_a_server_not_invalid_yaml(tmp_path):
    path = _write(tmp_path, "serve.sh", """\
        #!/bin/bash
        set -e
        export CUDA_VISIBLE_DEVICES=2,3
        MODEL=Qwen/Qwen2.5-7B-Instruct
        echo "starting: $MODEL"
        vllm serve "$MODEL" \\
            --tensor-parallel-size 2 \\
            --max-model-len 8192
        """)
    inv = scan([path])
    assert inv.problems == []  # `echo "starting: ..."` is a shell line, not a YAML mapping
    [server] = inv.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.args["tensor_parallel_size"] == 2 and server.args["max_model_len"] == 8192
    assert server.location.line == 6 and server.source_format == "script"
    assert server.gpu.count == 2 and server.gpu.device_ids == ["2", "3"]


def test_devices_from_the_environment_are_not_assumed(tmp_path):
    path = _write(tmp_path, "serve.sh", """\
        export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}
        python3 -m vllm.entrypoints.openai.api_server --model facebook/opt-125m
        """)
    [server] = scan([path]).servers
    assert server.gpu is None  # the default holds only where nothing sets the variable


def test_docker_run_of_a_vllm_image(tmp_path):
    path = _write(tmp_path, "run.sh", """\
        docker run --runtime nvidia --gpus '"device=0,1"' \\
            -v ~/.cache/huggingface:/root/.cache/huggingface -p 8000:8000 \\
            --env "HF_TOKEN=$HF_TOKEN" -e VLLM_LOGGING_LEVEL=DEBUG --ipc=host --name chat \\
            vllm/vllm-openai:v0.8.5 \\
            --model meta-llama/Llama-3.1-8B-Instruct \\
            --tensor-parallel-size 2
        """)
    [server] = scan([path]).servers
    assert server.image == "vllm/vllm-openai:v0.8.5" and server.vllm_version == "0.8.5"
    assert server.name == "chat" and server.kind == "docker run"
    assert server.model == "meta-llama/Llama-3.1-8B-Instruct" and server.args["tensor_parallel_size"] == 2
    assert server.location.line == 4  # the image: what runs
    assert server.gpu.count == 2 and server.env["VLLM_LOGGING_LEVEL"] == "DEBUG"
    assert server.shm is True


def test_docker_run_of_another_image_is_no_server(tmp_path):
    path = _write(tmp_path, "run.sh", """\
        docker run -d --rm -p 8080:80 ghcr.io/huggingface/text-generation-inference:2.0 --model-id x/y
        """)
    inv = scan([path])
    assert inv.servers == [] and inv.problems == []


def test_a_script_that_mentions_vllm_but_starts_none_says_so(tmp_path):
    # a helper that installs and queries vLLM launches nothing: nothing to say
    path = _write(tmp_path, "bench.sh", """\
        pip install vllm
        curl http://localhost:8000/v1/models
        """)
    inv = scan([path])
    assert inv.servers == [] and inv.problems == []
    # a start vramlint cannot read (after a launcher's option it does not know, which may take a value) is said
    path = _write(tmp_path, "serve.sh", """\
        srun --frobnicate 3 vllm serve facebook/opt-125m --port 8000
        """)
    inv = scan([path])
    assert inv.servers == []
    [note] = inv.problems
    assert note.level == "note" and "mentions vLLM" in note.message


def test_shebang_without_extension(tmp_path):
    path = _write(tmp_path, "launch", """\
        #!/usr/bin/env bash
        exec vllm serve facebook/opt-125m --max-model-len 1024
        """)
    [server] = scan([path]).servers
    assert server.model == "facebook/opt-125m"


def test_removed_option_on_latest_fails_the_check(tmp_path):
    path = _write(tmp_path, "run.sh", """\
        docker run --gpus all vllm/vllm-openai:latest \\
            --model facebook/opt-125m \\
            --swap-space 8
        """)
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", path, "--offline", "--output-format", "json"],
                          capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stdout)
    [error] = [f for f in report["findings"] if f["level"] == "error"]
    assert error["rule"] == "VRL009" and error["line"] == 3 and proc.returncode == 1


def test_docker_run_on_amd_gpus_counts_what_rocr_and_hip_visible_devices_leave(tmp_path):
    # `--device /dev/kfd --device /dev/dri` passes every AMD GPU of the host; ROCR_VISIBLE_DEVICES narrows what the
    # ROCm runtime shows, HIP_VISIBLE_DEVICES picks among those (numbered from 0)
    path = _write(tmp_path, "serve-amd.sh", """\
        #!/bin/bash
        docker run -d --name one --device=/dev/kfd --device=/dev/dri --group-add video --ipc=host \\
            -e ROCR_VISIBLE_DEVICES=3 rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521 \\
            vllm serve Qwen/Qwen2.5-0.5B-Instruct --port 8001
        docker run -d --name two --device /dev/kfd --device /dev/dri \\
            -e ROCR_VISIBLE_DEVICES=4,5,6 -e HIP_VISIBLE_DEVICES=0,2 rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521 \\
            vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 --port 8002
        docker run -d --name host --device /dev/kfd --device /dev/dri -e HIP_VISIBLE_DEVICES \\
            rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521 vllm serve Qwen/Qwen2.5-0.5B-Instruct --port 8003
        """)
    servers = {s.name: s for s in scan([path]).servers}
    one, two, host = servers["one"].gpu, servers["two"].gpu, servers["host"].gpu
    assert (one.vendor, one.count, one.device_ids) == ("amd", 1, ["3"])
    assert (two.vendor, two.count, two.device_ids) == ("amd", 2, ["4", "6"])
    assert "ROCR_VISIBLE_DEVICES=4,5,6" in two.evidence and "HIP_VISIBLE_DEVICES=0,2" in two.evidence
    # `-e HIP_VISIBLE_DEVICES` passes the shell's value: how many devices is not known
    assert host.vendor == "amd" and host.count is None and host.device_ids is None


def test_a_script_named_beside_its_folder_is_read(tmp_path, capsys):
    # the folder's walk reads only YAML, so the script named with it was dropped as "read through the folder"
    from vramlint.cli import main

    script = _write(tmp_path, "serve.sh", """\
        #!/bin/sh
        exec vllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len 999999999
        """)
    _write(tmp_path, "deploy.yaml", "kind: ConfigMap\nmetadata: {name: x}\n")
    main(["check", str(tmp_path), script, "--offline", "--output-format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert [(f["file"].rsplit("/", 1)[-1], f["line"]) for f in report["findings"] if f["rule"] == "VRL005"] == [
        ("serve.sh", 2)]
    assert report["summary"]["files_scanned"] == 2


def test_a_long_launch_script_is_read_in_seconds(tmp_path):
    # 100,000 lines before the server: each word was placed (a Token with its line) in four readings of the
    # whole script; now a script is split at most twice and only a command that may start vLLM is placed
    import time

    shapes = ('V{i}="value-{i}"', 'echo "step {i}: $V{i}"', 'test -n "$V{i}" && export V{i}', "# note {i}")
    lines = ["#!/bin/sh"] + [shapes[i % 4].format(i=i) for i in range(100_000)]
    path = _write(tmp_path, "serve.sh", "\n".join(lines + ['exec vllm serve Qwen/Qwen2.5-1.5B-Instruct '
                                                           '--served-model-name "$V8" --max-model-len 4096']) + "\n")
    started = time.process_time()
    [server] = scan([path]).servers
    assert time.process_time() - started < 5  # CPU time: the neighbours of a shared machine do not count
    assert server.location.line == len(lines) + 1 and server.args["served_model_name"] == ["value-8"]
    assert server.args["max_model_len"] == 4096


def test_a_long_launch_script_is_read_without_holding_all_its_words(tmp_path):
    # A script is read one simple command at a time: holding every word of it as (text, start, end) took about
    # 70 bytes of memory per byte of script (360 MB for a 5 MB script, twice over: as written and with its own
    # assignments); one command's words are all a reader needs to find the server and the variables it uses.
    import tracemalloc

    shapes = ('V{i}="value-{i}"', 'echo "step {i}: $V{i}"', 'test -n "$V{i}" && export V{i}', "# note {i}")
    lines = ["#!/bin/sh"] + [shapes[i % 4].format(i=i) for i in range(6_000)]
    text = "\n".join(lines + ['exec vllm serve Qwen/Qwen2.5-1.5B-Instruct --served-model-name "$V8"']) + "\n"
    path = _write(tmp_path, "serve.sh", text)
    scan([_write(tmp_path, "warm.sh", "vllm serve Qwen/Qwen2.5-1.5B-Instruct\n")])  # imports, caches
    tracemalloc.start()
    try:
        [server] = scan([path]).servers
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert server.location.line == len(lines) + 1 and server.args["served_model_name"] == ["value-8"]
    assert peak < 20 * len(text), f"{peak:,} bytes for a script of {len(text):,}"


def test_a_long_script_split_a_command_at_a_time_gives_the_words_of_the_whole_split():
    from vramlint.cmdline import _command_spans, _command_words, _lex_words

    text = "\n".join(f'A{i}="x $B{i}" ; echo "$A{i}" | tee >/dev/null && f() (cd /; ls) # c\n' for i in range(400))
    assert len(text) > 16_384  # past the cache of short scripts: the streamed reading
    for env in (None, {"B3": "three words here"}):
        words, _ = _lex_words(text, env, [])
        assert list(_command_words(text, env, [])) == [words[a:b] for a, b in _command_spans(words)]


def test_a_here_string_is_a_word_not_an_unread_here_document(tmp_path):
    # `read -a parts <<< "$list"` (a here-string) gives read one word; only a here-document (`<<EOF`) has body
    # lines, which are data the command reads
    path = _write(tmp_path, "run_model.sh", """\
        #!/bin/bash
        adapters="a/b;c/d"
        IFS=';' read -r -a parts <<< "$adapters"
        vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len 4096
        """)
    [server] = scan([path]).servers
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["max_model_len"] == 4096
    assert not any("here-document" in u for u in server.unchecked), server.unchecked
    heredoc = _write(tmp_path, "with_heredoc.sh", """\
        #!/bin/bash
        cat > notes.txt <<EOF
        anything
        EOF
        vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len 4096
        """)
    [server] = scan([heredoc]).servers
    # the body is the text cat writes, not commands of the script: nothing of it is left unread
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["max_model_len"] == 4096
    assert not any("here-document" in u for u in server.unchecked), server.unchecked


def test_sourced_files_give_their_variables_and_outside_ones_are_said_on_their_line(tmp_path):
    # hostile22/23 leftover: `source ./env.sh` was not followed, and a `source` of an outside file not said
    from vramlint.scan import scan

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "planted.env").write_text("MODEL=planted/outside-model\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "env.sh").write_text('export MODEL="Qwen/Qwen2.5-7B-Instruct"\nLEN=$((4096 * 2))\n')
    (repo / "start.sh").write_text(f"#!/bin/sh\nsource {outside / 'planted.env'}\n. /proc/self/environ\n"
                                   ". ./env.sh\nvllm serve $MODEL --max-model-len 8192\n")
    inv = scan([str(repo / "start.sh")])
    [server] = inv.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    said = {p.line: p for p in inv.problems}
    assert said[2].level == "warning" and "outside the scanned tree" in said[2].message
    assert said[3].level == "warning" and "/proc/self/environ" in said[3].message
    assert not any("outside-model" in p.message for p in inv.problems)


def test_sources_of_sources_are_followed_and_loops_cuts_and_outside_ones_are_said_where_they_stop(tmp_path):
    # hostile24: a file a sourced file sources was not followed (its MODEL unknown, its `. /proc/self/environ`
    # said nowhere), and `source` lines past the 16th were dropped without a word
    import os

    from vramlint.scan import scan

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.sh").write_text(". /proc/self/environ\nsource ./b.sh\nLEN=4096\n")
    (repo / "b.sh").write_text("source ./a.sh\nMODEL=Qwen/Qwen2.5-7B-Instruct\n")
    (repo / "start.sh").write_text('#!/bin/bash\nsource ./a.sh\nvllm serve "$MODEL" --max-model-len "$LEN"\n')
    inv = scan([str(repo / "start.sh")])
    [server] = inv.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 4096
    said = {(os.path.basename(p.file), p.line): p for p in inv.problems}
    assert said[("a.sh", 1)].level == "warning" and "/proc/self/environ" in said[("a.sh", 1)].message
    assert "sources a file that sources it" in said[("b.sh", 1)].message

    (repo / "many.sh").write_text("#!/bin/bash\n" + "source ./b.sh\n" * 40 + 'vllm serve "$MODEL"\n')
    inv = scan([str(repo / "many.sh")])
    [cut] = [p for p in inv.problems if "past vramlint's limit of 16 sourced files" in p.message]
    # each `source ./b.sh` follows four: b.sh, its a.sh, a.sh's /proc/self/environ and its b.sh (the loop); the
    # fifth line is where following stops
    assert cut.file.endswith("many.sh") and cut.line == 6 and cut.level == "note"
