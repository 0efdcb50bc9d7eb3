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
        if [ -f /models/big ]; then
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


# --- bash arrays: `ARGS=(...)`, `ARGS+=(...)`, `"${ARGS[@]}"` ------------------------------------------------


def test_an_array_of_arguments_is_read_as_its_elements(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        MODEL=Qwen/Qwen2.5-7B-Instruct
        ARGS=(
          --max-model-len 4096   # short prompts only
          --gpu-memory-utilization "0.8"
        )
        ARGS+=(--served-model-name "chat model")
        vllm serve "$MODEL" "${ARGS[@]}"
        """)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.args["max_model_len"] == 4096 and server.args["gpu_memory_utilization"] == 0.8
    assert server.args["served_model_name"] in ("chat model", ["chat model"])
    assert server.opaque_args is None


def test_a_whole_command_in_an_array(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        declare -a CMD=(vllm serve Qwen/Qwen2.5-0.5B-Instruct --tensor-parallel-size 2)
        exec "${CMD[@]}"
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["tensor_parallel_size"] == 2


def test_an_empty_array_adds_no_word(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        EXTRA=()
        vllm serve Qwen/Qwen2.5-0.5B-Instruct "${EXTRA[@]}" --max-model-len 2048
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["max_model_len"] == 2048
    assert server.opaque_args is None


def test_an_array_filled_in_a_branch_is_not_known(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        ARGS=(--max-model-len 4096)
        if grep -q long /etc/profile; then
          ARGS=(--max-model-len 131072)
        fi
        vllm serve Qwen/Qwen2.5-0.5B-Instruct "${ARGS[@]}"
        """)
    assert "max_model_len" not in server.args or server.args["max_model_len"] is None
    assert server.opaque_args is not None


def test_an_array_set_in_a_subshell_stays_there(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        ARGS=(--max-model-len 4096)
        ( ARGS=(--max-model-len 8) )
        vllm serve Qwen/Qwen2.5-0.5B-Instruct "${ARGS[@]}"
        """)
    assert server.args["max_model_len"] == 4096


def test_an_element_and_the_joined_form(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        MODELS=(Qwen/Qwen2.5-0.5B-Instruct meta-llama/Llama-3.1-8B-Instruct)
        LENS=(2048 4096)
        vllm serve ${MODELS[1]} --max-model-len "${LENS[*]:-x}" --served-model-name $MODELS
        """)
    assert server.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert server.args["max_model_len"] is None  # `${LENS[*]:-x}` is not a form the walk reads: unknown
    assert server.args["served_model_name"] in ("Qwen/Qwen2.5-0.5B-Instruct", ["Qwen/Qwen2.5-0.5B-Instruct"])


def test_a_huge_array_is_bounded(tmp_path):
    words = " ".join(f"w{k}" for k in range(20000))
    server = _server(tmp_path, f"#!/bin/bash\nA=({words})\nvllm serve Qwen/Qwen2.5-0.5B-Instruct \"${{A[@]}}\"\n")
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.opaque_args is not None


def test_an_array_after_a_keyword_on_one_line(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        ARGS=(--max-model-len 4096)
        if [ -e /long ]; then ARGS=(--max-model-len 131072); fi
        vllm serve Qwen/Qwen2.5-0.5B-Instruct "${ARGS[@]}"
        """)
    assert server.args.get("max_model_len") is None and server.opaque_args is not None


def test_elements_a_branch_may_add_are_one_unknown_word_after_the_known_ones(tmp_path):
    server = _server(tmp_path, """\
        #!/usr/bin/env bash
        MODEL="${MODEL:-Qwen/Qwen2.5-0.5B-Instruct}"
        MAX_MODEL_LEN="${MAX_MODEL_LEN:-}"
        cmd=(vllm serve "${MODEL}" --dtype auto)
        if [[ -n "${MAX_MODEL_LEN}" ]]; then
          cmd+=(--max-model-len "${MAX_MODEL_LEN}")
        fi
        if [[ -n "$HOSTNAME" && -f /etc/extra ]]; then
          cmd+=(--enforce-eager)
        fi
        exec "${cmd[@]}"
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["dtype"] == "auto"
    assert server.opaque_args is not None  # the branch may add --max-model-len: not certain it is unset


# --- a function's arguments: `$1`, `shift`, `"$@"` ------------------------------------------------------------


def test_a_function_sees_the_arguments_of_its_call(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        start_server() {
          server_type=$1
          model_name=$2
          shift 2
          if [ "$server_type" = "vllm" ]; then
            vllm serve $model_name --port 30000 "$@" &
          fi
        }
        start_server vllm "Qwen/Qwen2.5-VL-7B-Instruct" --max-model-len 8192
        """)
    assert server.model == "Qwen/Qwen2.5-VL-7B-Instruct" and server.args["max_model_len"] == 8192
    assert server.opaque_args is None


def test_braced_and_defaulted_arguments(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        serve() {
          vllm serve "${1}" --max-model-len "${3:-4096}" --tensor-parallel-size "${2:-1}" --max-num-seqs $#
        }
        serve Qwen/Qwen2.5-0.5B-Instruct 2
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert server.args["max_model_len"] == 4096 and server.args["tensor_parallel_size"] == 2
    assert server.args["max_num_seqs"] == 2


def test_an_unknown_argument_leaves_the_rest_unknown(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        serve() { vllm serve "$1" --max-model-len "$2"; }
        serve Qwen/Qwen2.5-0.5B-Instruct $LEN_FROM_ENV $MORE
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct"
    # $LEN_FROM_ENV comes from the environment the script runs in: not known, nor what follows it
    assert server.args.get("max_model_len") is None and server.opaque_args is None


def test_the_scripts_own_arguments_stay_unknown_but_their_defaults_are_taken(tmp_path):
    # read as run with no arguments (said in a note): `${1:-X}` is X, a bare `$2` is not known
    server = _server(tmp_path, """\
        #!/bin/bash
        vllm serve "${1:-Qwen/Qwen2.5-0.5B-Instruct}" --max-model-len "$2"
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args.get("max_model_len") is None
    assert any("read as run with no arguments" in n for n in server.notes)


def test_a_shift_in_a_branch_makes_the_arguments_unknown(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        run() {
          if [ -f /etc/eager ]; then shift; fi
          vllm serve "$1"
        }
        run --eager Qwen/Qwen2.5-0.5B-Instruct
        """)
    assert server.model is None


def test_a_shift_in_a_branch_the_arguments_decide(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        run() {
          if [ "$1" = "--eager" ]; then shift; EAGER=1; fi
          vllm serve "$1" ${EAGER:+--enforce-eager}
        }
        run --eager Qwen/Qwen2.5-0.5B-Instruct
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["enforce_eager"] is True


# --- `if` tests the variables decide ------------------------------------------------------------------------


def test_a_default_set_when_the_variable_is_empty(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        if [ -z "$MODEL" ]; then
          MODEL=Qwen/Qwen2.5-7B-Instruct
        fi
        MAX_LEN="${MAX_LEN:-}"
        ARGS=()
        if [[ -n "${MAX_LEN}" ]]; then ARGS+=(--max-model-len "$MAX_LEN"); else ARGS+=(--max-model-len 8192); fi
        vllm serve "$MODEL" "${ARGS[@]}"
        """)
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args["max_model_len"] == 8192
    assert server.opaque_args is None


def test_elif_and_else_follow_the_first_branch_that_runs(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        SIZE=small
        if [ "$SIZE" = "big" ]; then
          MODEL=meta-llama/Llama-3.1-70B-Instruct
        elif [ "$SIZE" == "small" ]; then
          MODEL=Qwen/Qwen2.5-0.5B-Instruct
        elif [ "$SIZE" != "big" ]; then
          MODEL=someone/else
        else
          MODEL=someone/other
        fi
        vllm serve "$MODEL"
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct"


def test_a_variable_the_environment_gives_decides_the_test(tmp_path):
    # a variable set to a value not known (a Secret, `$(cmd)`) leaves the branch not known
    server = _server(tmp_path, """\
        #!/bin/bash
        SIZE=$(cat /etc/size)
        MODEL=Qwen/Qwen2.5-0.5B-Instruct
        if [ "$SIZE" = "big" ]; then MODEL=meta-llama/Llama-3.1-70B-Instruct; fi
        vllm serve "$MODEL"
        """)
    assert server.model is None


def test_a_pattern_test_is_not_decided(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        MODEL=Qwen/Qwen2.5-0.5B-Instruct
        if [[ "$MODEL" == *Qwen* ]]; then LEN=4096; fi
        vllm serve "$MODEL" --max-model-len "${LEN:-2048}"
        """)
    assert server.args.get("max_model_len") is None


def test_a_case_whose_word_is_known_runs_its_matching_clause(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        SIZE="${SIZE:-small}"
        case "$SIZE" in
          big|huge) MODEL=meta-llama/Llama-3.1-70B-Instruct; TP=4 ;;
          (sm*)
            MODEL=Qwen/Qwen2.5-0.5B-Instruct
            TP=1
            ;;
          *) MODEL=someone/else ;;
        esac
        case $MODEL in Qwen/*) LEN=4096;; esac
        vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-model-len "$LEN"
        """)
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert server.args["tensor_parallel_size"] == 1 and server.args["max_model_len"] == 4096


def test_a_case_on_the_scripts_arguments_is_not_known(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        MODEL=Qwen/Qwen2.5-0.5B-Instruct
        while [[ $# -gt 0 ]]; do
          case $1 in
            --model) MODEL="$2"; shift 2 ;;
            *) shift ;;
          esac
        done
        vllm serve "$MODEL"
        """)
    assert server.model is None


def test_the_default_clause_runs_when_nothing_else_matches(tmp_path):
    server = _server(tmp_path, """\
        #!/bin/bash
        case "$GPU" in
          a100) LEN=32768 ;;
          *) LEN=8192 ;;
        esac
        vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len $LEN
        """)
    assert server.args["max_model_len"] == 8192


def test_sh_c_gives_its_script_the_words_after_the_name(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("""\
apiVersion: v1
kind: Pod
metadata: {name: chat}
spec:
  containers:
    - name: vllm
      image: vllm/vllm-openai:v0.10.2
      command: ["/bin/sh", "-c", 'vllm serve "$1" --max-model-len "${2:-2048}"', "sh", "Qwen/Qwen2.5-0.5B-Instruct"]
      resources: {limits: {nvidia.com/gpu: 1}}
""")
    [server] = scan([str(path)]).servers
    assert server.model == "Qwen/Qwen2.5-0.5B-Instruct" and server.args["max_model_len"] == 2048
