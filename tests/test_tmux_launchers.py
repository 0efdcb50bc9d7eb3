"""vLLM servers started in tmux panes: `tmux new-session -d CMD` (and new-window, split-window) runs CMD there,
`tmux send-keys -t PANE "LINE" C-m` types LINE into the pane's shell, which runs it at the Enter key."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan


def _script(tmp_path, text):
    path = tmp_path / "serve.sh"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_new_session_runs_its_shell_command(tmp_path):
    path = _script(tmp_path, """\
        #!/bin/bash
        tmux new-session -d -s vllm "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --max-model-len 8192"
        """)
    [server] = scan([path]).servers
    assert server.model == "Qwen/Qwen3-8B"
    assert server.args["tensor_parallel_size"] == 2 and server.args["max_model_len"] == 8192
    assert server.location.line == 2


def test_new_window_runs_its_program_with_the_environment_it_is_given(tmp_path):
    path = _script(tmp_path, """\
        #!/bin/bash
        tmux new-window -t work -n engine -e VLLM_USE_V1=1 vllm serve Qwen/Qwen3-8B --port 8001
        """)
    [server] = scan([path]).servers
    assert server.model == "Qwen/Qwen3-8B" and server.args["port"] == 8001
    assert server.env.get("VLLM_USE_V1") == "1"


def test_send_keys_line_run_at_enter_with_a_variable_known_only_at_run_time(tmp_path):
    path = _script(tmp_path, """\
        #!/bin/bash
        while getopts "m:" opt; do
            case $opt in
                m) MODEL_PATH=$OPTARG ;;
            esac
        done
        tmux new-session -d -s serve
        for port in 8000 8001; do
            tmux -S /tmp/sock send-keys -t serve:0 "conda activate vllm" C-m
            tmux -S /tmp/sock send-keys -t serve:0 "vllm serve $MODEL_PATH --port $port --max-model-len 4096" C-m
        done
        """)
    [server] = scan([path]).servers
    assert server.model is None and server.opaque_args is not None  # the model word is $MODEL_PATH
    assert server.args["max_model_len"] == 4096
    assert server.location.line == 10


def test_send_keys_without_enter_or_literal_runs_nothing(tmp_path):
    path = _script(tmp_path, """\
        #!/bin/bash
        tmux send-keys -t serve:0 "vllm serve Qwen/Qwen3-8B --port 8000"
        tmux send-keys -l -t serve:0 "vllm serve Qwen/Qwen3-8B --port 8000" C-m
        """)
    inv = scan([path])
    assert inv.servers == []


def test_tmux_commands_that_start_nothing_are_no_server(tmp_path):
    path = _script(tmp_path, """\
        #!/bin/bash
        tmux kill-session -t vllm
        tmux capture-pane -p -t vllm | grep "vllm serve"
        """)
    assert scan([path]).servers == []
