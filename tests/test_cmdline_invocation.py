"""Finding the vLLM server in command + args, and reading its arguments as vLLM does."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vramlint.cmdline import Token, find_vllm_invocation, is_vllm_image
from vramlint.model import Location
from vramlint.versions import version_from_image


def toks(*words, line=1):
    return [Token(w, Location("f", line + i, 5)) for i, w in enumerate(words)]


def find(command=(), args=(), image=None, env=None, **kw):
    return find_vllm_invocation(toks(*command), toks(*args, line=100), image, env or {}, **kw)


def test_args_alone_with_vllm_image():
    inv = find(args=["--model", "org/m", "--max-model-len", "8192", "--gpu-memory-utilization=0.85", "-tp", "2"],
               image="vllm/vllm-openai:v0.6.4")
    assert inv.model == "org/m"
    assert inv.args == {"max_model_len": 8192, "gpu_memory_utilization": 0.85, "tensor_parallel_size": 2}
    assert inv.arg_locations["max_model_len"].line == 102
    assert inv.model_location.line == 101
    assert inv.version_table == "0.6.4"


def test_positional_model_after_serve_wins_over_dash_dash_model():
    inv = find(command=["vllm", "serve", "org/pos"], args=["--max_model_len", "4096"], image="x:1",
               version="0.33.0")
    assert inv.model == "org/pos" and inv.args == {"max_model_len": 4096}


def test_python_module_entrypoints():
    for module in ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server"):
        inv = find(command=["python3", "-m", module, "--model", "org/m"], image="my/img:1")
        assert inv is not None and inv.model == "org/m"


def test_shell_script_with_chain_exec_env_assignment_and_k8s_vars():
    script = ("pip install -U transformers && MODEL=org/m; "
              "VLLM_USE_V1=0 exec vllm serve $MODEL --max-model-len $(LEN) --dtype ${DTYPE:-half}")
    inv = find(command=["/bin/sh", "-ec"], args=[script], image="vllm/vllm-openai:v0.8.5",
               env={"LEN": "2048"})
    assert inv.model == "org/m"
    assert inv.args["max_model_len"] == 2048
    assert inv.args["dtype"] == "half"
    assert inv.env == {"VLLM_USE_V1": "0"}


def test_k8s_value_from_is_unknown_not_empty():
    inv = find(args=["--model", "$(MODEL)", "--max-model-len", "$(LEN)"], image="vllm/vllm-openai:v0.6.4",
               env={"MODEL": None, "LEN": None})
    assert inv.model is None
    assert "max_model_len" in inv.args and inv.args["max_model_len"] is None


def test_k8s_escaped_and_unset_references_stay_literal():
    inv = find(args=["--model", "$$(X)", "--served-model-name", "$(NOT_IN_ENV)"], image="vllm/vllm-openai:v0.6.4")
    assert inv.model == "$(X)"
    assert inv.args["served_model_name"] == ["$(NOT_IN_ENV)"]


@pytest.mark.parametrize("command,args,image", [
    ([], ["--model-id", "bigscience/bloom"], "ghcr.io/huggingface/text-generation-inference:2.0"),
    (["text-generation-launcher"], ["--model-id", "m"], None),
    (["python", "-m", "sglang.launch_server"], ["--model-path", "m"], "lmsysorg/sglang:latest"),
    ([], ["--model_name=m", "--backend=huggingface"], "kserve/huggingfaceserver:v0.13"),
    (["python", "-m", "huggingfaceserver"], ["--backend", "huggingface", "--model_id", "m"], "kserve/vllm-server:1"),
    ([], [], "nvcr.io/nim/meta/llama3-8b-instruct:1.0.0"),
    (["sleep", "infinity"], [], "vllm/vllm-openai:v0.6.4"),
    (["bash"], [], "vllm/vllm-openai:v0.6.4"),
    (["/bin/sh", "-c", "sleep infinity"], [], "vllm/vllm-openai:v0.6.4"),
])
def test_lookalikes_are_not_vllm(command, args, image):
    assert find(command=command, args=args, image=image) is None


def test_images():
    assert is_vllm_image("vllm/vllm-openai:v0.6.4")
    assert is_vllm_image("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521")
    assert is_vllm_image("nvcr.io/nvidia/vllm:25.09-py3")
    assert not is_vllm_image("nvcr.io/nim/meta/llama-3.1-8b-instruct:latest")
    assert not is_vllm_image("ghcr.io/huggingface/text-generation-inference:2.0")
    assert version_from_image("vllm/vllm-openai:v0.6.4.post1") == "0.6.4.post1"
    assert version_from_image("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521") == "0.8.5"
    assert version_from_image("nvcr.io/nvidia/vllm:25.09-py3") is None
    assert version_from_image("vllm/vllm-openai:latest") is None


def test_booleans_and_no_forms():
    inv = find(args=["--model", "m", "--enable-prefix-caching", "--no-enable-chunked-prefill",
                     "--trust-remote-code"], image="vllm/vllm-openai:v0.10.2")
    assert inv.args == {"enable_prefix_caching": True, "enable_chunked_prefill": False,
                        "trust_remote_code": True}


def test_no_form_does_not_exist_for_store_true_in_old_versions():
    inv = find(args=["--model", "m", "--no-enable-prefix-caching"], image="vllm/vllm-openai:v0.5.5")
    assert "--no-enable-prefix-caching" in inv.unknown_args


def test_abbreviations_follow_argparse():
    inv = find(args=["--model", "m", "--max-num-seq", "8"], image="vllm/vllm-openai:v0.6.4")
    assert inv.args == {"max_num_seqs": 8}
    # `--max-num` is a prefix of several options: argparse rejects it as ambiguous
    inv = find(args=["--model", "m", "--max-num", "8"], image="vllm/vllm-openai:v0.6.4")
    assert "--max-num" in inv.unknown_args


def test_json_values_and_dotted_keys():
    inv = find(args=["m", "--rope-scaling", '{"rope_type":"yarn","factor":4.0}',
                     "--compilation-config.level", "3", "--hf-overrides", '{"max_position_embeddings": 65536}'],
               image="vllm/vllm-openai:v0.11.0")
    assert inv.args["rope_scaling"] == {"rope_type": "yarn", "factor": 4.0}
    assert inv.args["compilation_config"] == {"level": 3}
    assert inv.args["hf_overrides"] == {"max_position_embeddings": 65536}


def test_optimization_level_shorthand_by_version():
    old = find(args=["m", "-O3"], image="vllm/vllm-openai:v0.10.2")
    assert old.args == {"compilation_config": {"level": 3}}
    new = find(command=["vllm", "serve", "m", "-O3"], version="0.33.0")
    assert new.args == {"optimization_level": 3}


def test_short_aliases():
    inv = find(args=["m", "-tp", "4", "-pp", "2", "-q", "awq"], image="vllm/vllm-openai:v0.10.2")
    assert inv.args == {"tensor_parallel_size": 4, "pipeline_parallel_size": 2, "quantization": "awq"}


def test_unknown_flags_are_recorded_with_location_and_closest():
    from vramlint import vllm_args

    inv = find(args=["m", "--max-modle-len", "4096", "--gpu-memory-utilization", "0.9"],
               image="vllm/vllm-openai:v0.10.2")
    assert inv.unknown_args["--max-modle-len"].line == 101
    assert inv.args == {"gpu_memory_utilization": 0.9}
    assert vllm_args.closest("--max-modle-len", "0.10.2") == "--max-model-len"


def test_bad_values_are_startup_errors_and_unknown_values():
    inv = find(args=["--model", "m", "--max-model-len", "lots"], image="vllm/vllm-openai:v0.6.4")
    assert "max_model_len" in inv.args and inv.args["max_model_len"] is None  # set, but to nothing vLLM accepts
    assert not inv.problems
    (error,) = inv.startup_errors
    assert error["message"] == "argument --max-model-len: invalid int value: 'lots'"
    assert error["arg"] == "max_model_len" and error["version"] == "0.6.4"


def test_invalid_choice_is_a_startup_error_with_argparse_text():
    inv = find(command=["vllm", "serve", "m", "--dtype", "float8"], version="0.10.2")
    (error,) = inv.startup_errors
    assert error["message"].startswith("argument --dtype: invalid choice: 'float8' (choose from 'auto', ")


def test_runner_pooling_is_a_valid_choice():
    # `runner: Literal["auto", RunnerType]`: the nested alias's values are choices too
    for version in ("0.10.2", "0.20.0", "0.33.0"):
        inv = find(command=["vllm", "serve", "m", "--runner", "pooling"], version=version)
        assert inv.args["runner"] == "pooling" and not inv.startup_errors, version


def test_human_readable_max_model_len_in_new_versions():
    inv = find(command=["vllm", "serve", "m", "--max-model-len", "32k"], version="0.33.0")
    assert inv.args["max_model_len"] == 32000


def test_model_flag_with_serve_rejected_where_vllm_rejects_it():
    inv = find(command=["vllm", "serve", "--model", "m"], version="0.11.0")
    assert inv.model == "m"
    (error,) = inv.startup_errors
    assert error["code"] == "serve-model-flag" and "instead of via the `--model` option" in error["message"]


def test_model_flag_with_serve_by_version():
    def errors(command, version):
        return [e["message"] for e in find(command=command, version=version).startup_errors]

    # 0.8.3-0.11.0 look for the exact word `--model`; `--model=m` passes
    assert errors(["vllm", "serve", "--model=m"], "0.10.2") == []
    # from 0.11.1 the flag is moved in front with a warning
    assert errors(["vllm", "serve", "--model", "m"], "0.11.1") == []
    # before 0.8.3 the positional model is required
    assert errors(["vllm", "serve", "--model", "m"], "0.6.1") == ["the following arguments are required: model_tag"]
    assert errors(["vllm", "serve", "m", "--max-model-len", "4096"], "0.6.1") == []
    # ... and a --model other than the default beside it is refused (0.5.5+)
    assert "instead of via the `--model` option" in errors(["vllm", "serve", "a", "--model", "b"], "0.8.2")[0]


def test_config_file_is_collected():
    inv = find(command=["vllm", "serve", "m", "--config", "/etc/vllm/config.yaml"], version="0.11.0")
    assert inv.config_files[0][0] == "/etc/vllm/config.yaml"


def test_image_without_command_uses_entrypoint_and_unknown_version_is_said():
    inv = find(args=["org/m", "--max-model-len", "1024"], image="registry.example.com/vllm-server:prod")
    assert inv.model == "org/m"
    assert "version unknown" in inv.version_note and not inv.problems


def test_latest_of_vllms_own_image_is_read_as_the_newest_release():
    inv = find(args=["org/m", "--max-model-len", "1024"], image="vllm/vllm-openai:latest")
    assert inv.model == "org/m" and inv.version_note is None and not inv.problems


def test_options_in_command_instead_of_args_stop_the_container():
    # `command` replaces the image's entrypoint: its first word is executed, and "--model" is no program
    inv = find(command=["--model", "org/m", "--max-model-len", "1024"], image="vllm/vllm-openai:v0.9.2")
    assert inv.model == "org/m"
    [error] = [e for e in inv.startup_errors if e["code"] == "exec"]
    assert "--model" in error["message"] and error["shell"]
    # the same words as `args` run with the image's entrypoint
    assert not find(args=["--model", "org/m"], image="vllm/vllm-openai:v0.9.2").startup_errors


_values = st.integers(min_value=1, max_value=1 << 20)


@given(_values, st.floats(min_value=0.05, max_value=0.99, allow_nan=False))
def test_equals_and_space_forms_parse_the_same(n, f):
    a = find(args=["m", f"--max-model-len={n}", f"--gpu-memory-utilization={f}"], image="vllm/vllm-openai:v0.8.5")
    b = find(args=["m", "--max-model-len", str(n), "--gpu-memory-utilization", str(f)], image="vllm/vllm-openai:v0.8.5")
    assert a.args == b.args == {"max_model_len": n, "gpu_memory_utilization": f}


@given(_values)
def test_underscore_and_dash_names_agree(n):
    a = find(args=["m", "--max_num_seqs", str(n)], image="vllm/vllm-openai:v0.8.5")
    b = find(args=["m", "--max-num-seqs", str(n)], image="vllm/vllm-openai:v0.8.5")
    assert a.args == b.args == {"max_num_seqs": n}


def test_an_argument_with_a_space_is_a_positional_for_argparse():
    """`"--quantization awq"` as one list item: argparse reads an argument with a space as a positional
    (argparse._parse_optional); with --model given it is an unrecognized argument, and vLLM stops there. What it
    would hit past that word is read on the command line the fix writes (the flag and its value as two words)."""
    from vramlint.cmdline import Token, parse_vllm_args
    from vramlint.model import Location

    def toks(*words):
        return [Token(w, Location("f.yaml", i + 1)) for i, w in enumerate(words)]

    inv = parse_vllm_args(toks("Qwen/Qwen2.5-1.5B-Instruct", "--quantization fp8"), "0.9.2", entry="serve")
    assert inv.args["quantization"] == "fp8" and "--quantization fp8" not in inv.unknown_args
    [error] = inv.startup_errors
    assert error["message"] == "unrecognized arguments: --quantization fp8" and "--quantization=fp8" in error["fix"]
    # `--flag=value with space` names a known flag: an ordinary option
    inv = parse_vllm_args(toks("m/m", "--served-model-name=my model"), "0.9.2", entry="serve")
    assert inv.args["served_model_name"] in ("my model", ["my model"]) and not inv.startup_errors
    # the api_server: ignored as its optional model tag in some releases, refused in others: a warning
    inv = parse_vllm_args(toks("--model", "m/m", "--quantization bitsandbytes"), "0.11.0", entry="openai.api_server")
    [error] = inv.startup_errors
    assert error["level"] == "warning" and inv.model == "m/m" and "quantization" not in inv.args


def test_a_word_after_a_flag_without_value_becomes_the_model_tag():
    from vramlint.cmdline import Token, parse_vllm_args
    from vramlint.model import Location

    words = ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--enforce-eager", "false"]
    inv = parse_vllm_args([Token(w, Location("f.yaml", i + 1)) for i, w in enumerate(words)], "0.20.0",
                          entry="serve")
    [error] = inv.startup_errors
    assert "model named 'false'" in error["message"] and error["location"].line == 4


def test_a_value_argparse_refuses_is_unknown_to_the_budget(tmp_path):
    """`--max-num-seqs å1` is vLLM's own "invalid int value" at start-up; the budget must see an unknown, not the
    text (the fuzz suite found it reaching int() in the budget as a VRL000 crash)."""
    from vramlint.cmdline import Token, parse_vllm_args
    from vramlint.model import Location

    words = ["facebook/opt-125m", "--max-num-seqs", "å1", "--block-size", "true", "--max-model-len", "/"]
    inv = parse_vllm_args([Token(w, Location("f.yaml", i + 1)) for i, w in enumerate(words)], "0.9.2")
    assert inv.args["max_num_seqs"] is None and inv.args["block_size"] is None and inv.args["max_model_len"] is None
    assert len(inv.startup_errors) == 3

    import subprocess
    import sys

    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: vllm\n"
                   "    image: vllm/vllm-openai:v0.9.2\n"
                   "    args: [--model, facebook/opt-125m, --max-num-seqs, 'å1', --block-size, 'true']\n"
                   "    resources: {limits: {nvidia.com/gpu: 1}}\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", str(pod), "--offline", "--gpu", "L4"],
                          capture_output=True, text=True, timeout=120, env={**__import__("os").environ,
                                                                             "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 1 and "VRL000" not in proc.stdout and "invalid int value: 'å1'" in proc.stdout


def test_an_unset_k8s_variable_in_a_typed_value_is_not_certain():
    # `$(NAME)` stays as written only when nothing defines NAME; an overlay, patch or envFrom may
    inv = find(command=["python3", "-m", "vllm.entrypoints.openai.api_server"],
               args=["--model=org/m", "--tensor-parallel-size=$(TP)"], image="vllm/vllm-openai:v0.9.2")
    [error] = inv.startup_errors
    assert error["level"] == "warning" and "does not define TP" in error["message"]
    [error] = find(command=["python3", "-m", "vllm.entrypoints.openai.api_server"],
                   args=["--model=org/m", "--tensor-parallel-size=two"], image="vllm/vllm-openai:v0.9.2").startup_errors
    assert "level" not in error


def test_a_stray_word_after_vllm_serve_is_refused_whatever_the_version():
    inv = find(command=["vllm", "serve", "org/m", "--enforce-eager", "false"], image="registry.example.com/vllm:prod")
    [error] = inv.startup_errors
    assert error["version_known"] and "false" in error["message"]


def test_an_envfrom_source_the_file_does_not_show_makes_an_undefined_variable_unknown():
    from vramlint.cmdline import ENV_FROM_UNSEEN

    inv = find(command=["python3", "-m", "vllm.entrypoints.openai.api_server"],
               args=["--model=$(MODEL)", "--port=$(PORT)"], image="vllm/vllm-openai:v0.9.2", env={ENV_FROM_UNSEEN: None})
    assert not inv.startup_errors and inv.model is None and inv.args.get("port") is None


def test_ray_job_submit_runs_the_words_after_dash_dash_on_the_cluster():
    inv = find(command=["bash", "-c", 'RAY_ADDRESS="http://$HEAD:8265" ray job submit --working-dir src --no-wait '
                        "--job-id srv -- vllm serve org/m --tensor-parallel-size 8 --pipeline-parallel-size 2"],
               image=None)
    assert inv is not None and inv.model == "org/m"
    assert inv.args == {"tensor_parallel_size": 8, "pipeline_parallel_size": 2}
    # without `--` the entrypoint cannot be told from an option's value: not read, not guessed
    assert find(command=["ray", "job", "submit", "--job-id", "vllm", "serve", "org/m"], image=None) is None
    # other ray subcommands start nothing
    assert find(command=["ray", "job", "logs", "--", "vllm", "serve", "org/m"], image=None) is None


def test_a_prefix_assignment_of_unknown_value_does_not_hide_the_command():
    # `VAR=$UNSET cmd`: the variable's value is unknown, the command after it is still read (and the variable is
    # unknown to it, not taken as the assignment's text)
    inv = find(command=["sh", "-c", "CUDA_VISIBLE_DEVICES=$GPUS vllm serve org/m --max-model-len 4096"], image=None)
    assert inv is not None and inv.model == "org/m" and inv.args == {"max_model_len": 4096}
    assert "CUDA_VISIBLE_DEVICES" not in inv.env or inv.env["CUDA_VISIBLE_DEVICES"] is None


def test_a_brace_in_a_quoted_default_does_not_close_the_expansion():
    # bash: `}` inside double quotes in `${P:-"..."}` is part of the default; the script after it is still read
    script = 'PROMPT=${PROMPT:-"{{ instruction }}"}\nvllm serve org/m --max-model-len 2048'
    inv = find(command=["sh", "-c", script], image=None)
    assert inv is not None and inv.model == "org/m" and inv.args == {"max_model_len": 2048}


def test_word_after_an_unknown_flag_is_not_the_model_when_model_flag_gives_one():
    # `--model $(MODEL) ... --max-seq-len-to-capture 2048` on a release without that flag: the last word is the
    # unknown flag's value, not a positional model replacing the --model set at run time
    inv = find(args=["--model", "$(MODEL)", "--max-num-seqs", "256", "--max-seq-len-to-capture", "2048"],
               image="acme/vllm-fork:1.22.0", env={"MODEL": None}, version="0.33.0")
    assert inv.model is None
    assert "--max-seq-len-to-capture" in inv.unknown_args
    assert inv.args.get("max_num_seqs") == 256 and "model_tag" not in inv.args
    # with no model given, the last word after an unknown flag may still be the positional model
    inv = find(command=["vllm", "serve"], args=["--max-seq-len-to-capture", "org/m"], image="acme/vllm-fork:1",
               version="0.33.0")
    assert inv.model == "org/m"


def test_a_value_a_k8s_reference_gives_whole_points_at_the_env_entry():
    env = {"LEN": "32768", "TP": "2", "FROM_SECRET": None}
    where = {"LEN": Location("f", 7, 22), "TP": Location("f", 9, 22), "FROM_SECRET": Location("f", 11, 15)}
    inv = find(args=["--max-model-len=$(LEN)", "--tensor-parallel-size", "$(TP)", "--max-num-seqs=$(TP)0",
                     "--kv-cache-dtype=$(FROM_SECRET)", "--no-such-flag=$(LEN)"],
               image="vllm/vllm-openai:v0.8.5", env=env, env_locations=where)
    assert inv.args["max_model_len"] == 32768 and inv.args["tensor_parallel_size"] == 2
    assert inv.arg_locations["max_model_len"].line == 7  # `--flag=$(NAME)`: the value's own line
    assert inv.arg_locations["tensor_parallel_size"].line == 9  # `--flag`, `$(NAME)`: likewise
    # part of the value written on the item: the item's line; an unknown value (valueFrom): the item's line
    assert inv.args["max_num_seqs"] == 20 and inv.arg_locations["max_num_seqs"].line == 103
    assert inv.arg_locations["kv_cache_dtype"].line == 104
    # a flag vLLM does not know is the item's defect, not the value's
    assert inv.unknown_args["--no-such-flag"].line == 105
    # without the places (other formats' callers), as before
    assert find(args=["--max-model-len=$(LEN)"], image="vllm/vllm-openai:v0.8.5",
                env=env).arg_locations["max_model_len"].line == 100
