"""Launch scripts read in the order the shell runs them: a command's variables are those of the moment it runs
(not of the script's end), and a here-document's body is the text the shell writes (not commands of the script)."""

from __future__ import annotations

import json
import textwrap

from vramlint.cli import main
from vramlint.scan import scan


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def _server(tmp_path, name, text):
    [server] = scan([_write(tmp_path, name, text)]).servers
    return server


def test_a_variable_assigned_after_the_command_does_not_reach_it(tmp_path):
    server = _server(tmp_path, "serve.sh", """\
        #!/bin/bash
        MODEL=Qwen/Qwen2.5-0.5B-Instruct
        TP=1
        vllm serve $MODEL --tensor-parallel-size $TP
        MODEL=meta-llama/Llama-3.1-70B-Instruct
        TP=8
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["tensor_parallel_size"] == 1


def test_a_function_body_sees_the_variables_of_its_call(tmp_path):
    server = _server(tmp_path, "serve.sh", """\
        #!/bin/bash
        MODEL=Qwen/Qwen2.5-0.5B-Instruct
        start_server() {
          local extra="--enforce-eager"
          vllm serve "$MODEL" --max-model-len "$LEN" $extra
        }
        LEN=4096
        start_server
        MODEL=someone/else
        LEN=1
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert server.args["max_model_len"] == 4096 and server.args["enforce_eager"] is True
    assert server.location.line == 5  # where the command is written, inside the function


def test_a_function_never_called_sees_the_end_of_the_script(tmp_path):
    # a script sourced by another, which calls the function after it: every assignment has run by then
    server = _server(tmp_path, "lib.sh", """\
        #!/bin/bash
        function serve {
          vllm serve "$MODEL" --max-model-len 2048
        }
        MODEL=Qwen/Qwen2.5-0.5B-Instruct
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["max_model_len"] == 2048


def test_a_loop_variable_and_what_the_loop_body_assigns_are_unknown_in_the_loop(tmp_path):
    server = _server(tmp_path, "each.sh", """\
        #!/bin/bash
        M=Qwen/Qwen2.5-0.5B-Instruct
        for M in a/b c/d; do
          vllm serve $M &
        done
        """)
    assert server.model is None  # each round's own value, not the one before the loop
    server = _server(tmp_path, "again.sh", """\
        #!/bin/bash
        LEN=4096
        while true; do
          vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len $LEN --max-num-seqs $SEQS
          LEN=8192
          SEQS=4
        done
        """)
    # the second round sees what the first assigned: not known which round's values the server has
    assert server.args.get("max_model_len") is None and server.args.get("max_num_seqs") is None
    assert any("--max-model-len" in u for u in server.unchecked)


def test_an_assignment_after_and_or_may_not_run(tmp_path):
    server = _server(tmp_path, "cond.sh", """\
        #!/bin/bash
        LEN=4096
        [ -n "$LONG" ] && LEN=32768
        vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len $LEN
        """)
    assert server.args.get("max_model_len") is None


def test_docker_run_sees_the_variables_of_its_line(tmp_path):
    server = _server(tmp_path, "run.sh", """\
        #!/bin/bash
        model=Qwen/Qwen2.5-0.5B-Instruct
        docker run --gpus all vllm/vllm-openai:v0.10.0 --model ${model} --max-model-len 4096
        model=other/thing
        """)
    assert server.kind == "docker run" and server.model == "Qwen/Qwen2.5-0.5B-Instruct"


WRITES_LAUNCHER = """\
#!/usr/bin/env bash
PORT="${PORT:-8080}"
MODEL=Qwen/Qwen2.5-1.5B-Instruct
cat > /opt/launch.sh <<EOF
#!/usr/bin/env bash
exec vllm serve '${MODEL}' --port '${PORT}' --max-model-len '${MAX_LEN}' --dtype "\\$DTYPE"
EOF
MODEL=not/this-one
"""


def test_an_unquoted_here_document_writes_the_values_of_its_moment(tmp_path, capsys):
    path = _write(tmp_path, "gen.sh", WRITES_LAUNCHER)
    [server] = scan([path]).servers
    # the shell writes `'Qwen/...'` and `'8080'` into the launcher, whose quotes are then real quotes
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct" and server.args["port"] == 8080
    assert server.location.line == 6
    # MAX_LEN is set nowhere before: unknown, said once; `\$DTYPE` is the launcher's own variable: unknown too
    assert server.args.get("max_model_len") is None and server.args.get("dtype") is None
    assert sum("--max-model-len" in u for u in server.unchecked) == 1
    main(["check", path, "--offline", "--output-format", "json", "--fail-on", "never"])
    report = json.loads(capsys.readouterr().out)
    assert [f for f in report["findings"] if f["rule"] == "VRL005"] == []  # no placeholder read as a value


def test_a_quoted_here_document_is_written_as_it_is(tmp_path):
    server = _server(tmp_path, "gen.sh", """\
        #!/bin/bash
        PORT=9000
        cat > /opt/launch.sh <<'EOF'
        MODEL=Qwen/Qwen2.5-1.5B-Instruct
        exec vllm serve "$MODEL" --port "$PORT"
        EOF
        """)
    # the launcher assigns its own MODEL; PORT is the launcher's environment's, not this script's 9000
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct" and server.args.get("port") is None


def test_the_script_own_command_comes_before_a_launcher_it_writes():
    from vramlint.cmdline import Token, find_vllm_invocation
    from vramlint.model import Location

    script = ("cat > /opt/probe.sh <<'EOF'\nvllm serve other/model --max-model-len 1024\nEOF\n"
              "exec vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len 4096\n")
    at = Location("pod.yaml", 10, 5)
    inv = find_vllm_invocation([Token("/bin/sh", at), Token("-c", at), Token(script, at, block="|", indent=5)], [],
                               "vllm/vllm-openai:v0.10.0", {})
    assert inv.model == "Qwen/Qwen2.5-0.5B-Instruct" and inv.args["max_model_len"] == 4096
    assert inv.location.line == 14  # the block's fourth line (its content starts on line 11)


def test_an_unknown_max_model_len_is_not_said_as_absent(tmp_path, capsys):
    path = _write(tmp_path, "serve.sh", "#!/bin/bash\nvllm serve Qwen/Qwen2.5-1.5B-Instruct --max-model-len $LEN\n")
    main(["check", path, "--offline", "--output-format", "json", "--fail-on", "never"])
    [vrl011] = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "VRL011"]
    text = json.dumps(vrl011)
    assert "known only at run time" in text and "no --max-model-len" not in text
