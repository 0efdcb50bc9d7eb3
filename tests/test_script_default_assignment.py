"""`${NAME:=word}` and `${NAME=word}` assign NAME when their default is used, as bash does: `: ${MODEL:=x}` is
how many launch scripts set their defaults, and the server was read as naming no model."""

from __future__ import annotations

import textwrap

from vramlint.scan import scan


def _server(tmp_path, text, name="serve.sh"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    [server] = scan([str(path)]).servers
    return server


def test_colon_builtin_with_default_assignments_sets_the_variables(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        : ${MODEL:=Qwen/Qwen2.5-7B-Instruct}
        : "${MAX_LEN:=8192}"
        exec vllm serve "$MODEL" --max-model-len "$MAX_LEN"
        """)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 8192


def test_an_assignment_made_inside_the_command_reaches_its_later_words(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        vllm serve ${MODEL:=Qwen/Qwen2.5-0.5B-Instruct} --served-model-name "$MODEL" --max-model-len ${LEN=2048}
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["max_model_len"] == 2048
    assert server.args["served_model_name"] in ("Qwen/Qwen2.5-0.5B-Instruct", ["Qwen/Qwen2.5-0.5B-Instruct"])


def test_a_variable_already_set_keeps_its_value(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        MODEL=meta-llama/Llama-3.1-8B-Instruct
        : ${MODEL:=Qwen/Qwen2.5-7B-Instruct}
        vllm serve "$MODEL"
        """)
    assert server.model == "meta-llama/Llama-3.1-8B-Instruct"


def test_an_empty_variable_takes_the_default_only_with_the_colon_form(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        LEN=
        A=
        : ${LEN=4096} ${A:=Qwen/Qwen2.5-7B-Instruct}
        vllm serve "$A" --max-model-len "${LEN:-1024}"
        """)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 1024


def test_single_quoted_text_assigns_nothing(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        echo 'set ${MODEL:=someone/else} yourself'
        vllm serve ${MODEL:-Qwen/Qwen2.5-0.5B-Instruct}
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct"


def test_a_default_assigned_in_a_branch_is_not_known(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        if [ -n "$BIG" ]; then
          : ${MODEL:=meta-llama/Llama-3.1-70B-Instruct}
        fi
        vllm serve "${MODEL:-Qwen/Qwen2.5-0.5B-Instruct}"
        """)
    assert server.model is None  # the branch may have set it: said as unknown, not guessed


def test_an_assignment_in_a_subshell_does_not_reach_the_script(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        MODEL=Qwen/Qwen2.5-7B-Instruct
        (MODEL=meta-llama/Llama-3.1-70B-Instruct; echo "$MODEL")
        (cd /tmp && LEN=1 && (LEN=2))
        vllm serve $MODEL --max-model-len ${LEN:-4096}
        """)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 4096


def test_a_server_started_in_a_subshell_sees_the_subshell_variables(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        MODEL=Qwen/Qwen2.5-7B-Instruct
        (MODEL=Qwen/Qwen2.5-0.5B-Instruct; vllm serve "$MODEL") &
        wait
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct"


def test_a_case_pattern_inside_a_subshell_does_not_close_it(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        MODEL=Qwen/Qwen2.5-7B-Instruct
        (
          case "$X" in
            big) LEN=1 ;;
          esac
          MODEL=meta-llama/Llama-3.1-70B-Instruct
        )
        vllm serve $MODEL
        """)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"


def test_thousands_of_nested_subshells_stay_bounded(tmp_path):
    depth = 5000
    text = "#!/bin/bash\nMODEL=Qwen/Qwen2.5-7B-Instruct\n" + "(" * depth + "MODEL=x/y" + ")" * depth + "\n"
    server = _server(tmp_path, text + "vllm serve $MODEL\n")
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"


def test_an_array_inside_a_subshell_does_not_end_it(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        MODEL=Qwen/Qwen2.5-7B-Instruct
        ( EXTRA=(--enforce-eager); MODEL=meta-llama/Llama-3.1-70B-Instruct )
        vllm serve $MODEL
        """)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
