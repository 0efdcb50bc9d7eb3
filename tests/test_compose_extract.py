"""docker compose services -> vLLM servers (fixtures in tests/fixtures/compose)."""

from pathlib import Path

import pytest

from vramlint.extract.compose import extract_compose, is_compose, parse_size
from vramlint.yamlload import load_text

FIX = Path(__file__).parent / "fixtures" / "compose"


def load(rel, env_dir=True):
    path = FIX / rel
    docs, problems = load_text(path.read_text(), str(path))
    assert not problems
    servers, problems = extract_compose(docs[0], str(path.parent) if env_dir else None)
    return {s.name: s for s in servers}, problems, docs[0]


def test_recognises_compose_only():
    _, _, doc = load("basic/docker-compose.yml")
    assert is_compose(doc)
    assert not is_compose({"apiVersion": "v1", "kind": "Pod", "services": {"a": {"image": "x"}}})
    assert not is_compose({"model": "m"})


def test_servers_found_and_lookalikes_skipped():
    servers, _, _ = load("basic/docker-compose.yml")
    assert set(servers) == {"chat", "coder", "api", "base", "derived"}  # not tgi, not `sleep infinity`


def test_dotenv_values_and_defaults():
    servers, _, _ = load("basic/docker-compose.yml")
    chat = servers["chat"]
    assert chat.model == "meta-llama/Llama-3.2-3B-Instruct"  # from .env, not the default
    assert chat.args["max_model_len"] == 32768
    assert chat.args["tensor_parallel_size"] == 2
    assert chat.vllm_version == "0.6.4"
    assert chat.env["HF_TOKEN"] is None  # passed from the shell: unknown


def test_without_dotenv_defaults_apply_and_unset_is_unknown():
    servers, _, _ = load("basic/docker-compose.yml", env_dir=False)
    assert servers["chat"].model == "Qwen/Qwen2.5-7B-Instruct"
    assert servers["chat"].args["max_model_len"] == 8192
    api = servers["api"]
    assert api.model is None
    assert any("UNSET_MODEL" in n for n in api.notes)


def test_folded_command_locations():
    servers, _, _ = load("basic/docker-compose.yml")
    chat = servers["chat"]
    assert chat.model_location.line == 16
    assert chat.arg_locations["max_model_len"].line == 17
    assert chat.arg_locations["tensor_parallel_size"].line == 18


def test_bash_script_in_list_item_with_dollar_escape():
    servers, problems, _ = load("basic/docker-compose.yml")
    coder = servers["coder"]
    assert coder.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert coder.args["max_num_seqs"] == 16  # `--max_num_seq`: underscores and an unambiguous prefix
    assert coder.args["enable_prefix_caching"] is False
    assert "--bogus-flag" in coder.unknown_args
    assert coder.unknown_args["--bogus-flag"].line == 33
    assert coder.shm is True
    # ${API_KEY:?...} with no .env value: an unknown said as a note on its line (the shell or an uncommitted
    # .env may set it; the repository cannot say that compose fails)
    assert any("API_KEY" in p.message and p.line == 36 and p.level == "note" for p in problems)


def test_gpu_forms_and_shm():
    servers, _, _ = load("basic/docker-compose.yml")
    chat, api, base = servers["chat"], servers["api"], servers["base"]
    assert chat.gpu.count == 1 and chat.gpu.device_ids == ["0"]
    assert chat.shm is False  # TP 2 with docker's default 64 MB /dev/shm
    assert api.gpu.count is None and api.gpu.evidence == "gpus: all"
    assert api.shm is True  # ipc: host
    assert base.gpu.count == 2 and base.gpu.device_ids == ["0", "1"]


def test_extends_in_same_file():
    servers, _, _ = load("basic/docker-compose.yml")
    derived = servers["derived"]
    assert derived.args["max_model_len"] == 4096
    assert derived.gpu.device_ids == ["0", "1"]  # inherited from `base`
    assert derived.image == "vllm/vllm-openai:v0.8.5"


def test_shared_devices_get_the_same_key():
    servers, _, _ = load("shared/compose.yaml")
    ocr, embed, big = servers["ocr"], servers["embed"], servers["big"]
    assert ocr.gpu.shared_key == embed.gpu.shared_key  # count: 1 is device 0, like device_ids ["0"]
    assert big.gpu.device_ids == ["2", "3"] and big.gpu.shared_key != ocr.gpu.shared_key
    assert big.gpu.count == 2


def test_subcommand_first_and_env_file_long_form():
    servers, problems, _ = load("shared/compose.yaml")
    embed = servers["embed"]
    assert embed.model == "Qwen/Qwen3-Embedding-0.6B"
    assert embed.env["VLLM_USE_V1"] == "1" and embed.env["HF_HOME"] == "/data/hf"
    assert not [p for p in problems if "missing.env" in p.message]  # required: false


def test_positional_model_in_args_of_vllm_image():
    servers, _, _ = load("shared/compose.yaml")
    assert servers["big"].model == "Qwen/Qwen3-32B"
    assert servers["big"].shm is False


@pytest.mark.parametrize("text,expected", [("16gb", 16 << 30), ("8G", 8 << 30), ("512m", 512 << 20),
                                           ("1024", 1024), ("2GiB", 2 << 30), ("lots", None)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_env_file_not_in_the_repository_is_one_note_for_vllm_services_only(tmp_path):
    # `.env` made from `.env.example` at deploy time is normal practice: unknown variables, not an error
    (tmp_path / "conf").mkdir()
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  a:\n    image: vllm/vllm-openai:v0.8.5\n    env_file: .env\n"
        '    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]\n'
        "  b:\n    image: vllm/vllm-openai:v0.8.5\n    env_file: [.env]\n"
        '    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]\n'
        "  db:\n    image: postgres:16\n    env_file: db.env\n"
        "  c:\n    image: vllm/vllm-openai:v0.8.5\n    env_file: conf\n"
        '    command: ["--model", "Qwen/Qwen2.5-1.5B-Instruct"]\n')
    docs, _ = load_text((tmp_path / "compose.yaml").read_text(), "compose.yaml")
    servers, problems = extract_compose(docs[0], str(tmp_path))
    assert sorted(s.name for s in servers) == ["a", "b", "c"]
    said = [(p.line, p.level, p.message) for p in problems]
    assert said[0][:2] == (4, "note") and said[0][2].startswith("env_file .env is not in the repository")
    assert "the variables it sets are unknown" in said[0][2]
    assert said[1] == (15, "error", "env_file conf is a folder: compose fails to read it")
    assert len(said) == 2  # once for .env (a and b), nothing for the postgres service's db.env


def test_a_variable_unset_in_the_repository_is_said_once_per_file(tmp_path):
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  a:\n    image: vllm/vllm-openai:v0.10.2\n"
        "    command: --model Qwen/Qwen2.5-0.5B-Instruct --api-key ${API_KEY}\n"
        "  b:\n    image: vllm/vllm-openai:v0.10.2\n"
        "    command: --model Qwen/Qwen2.5-1.5B-Instruct --api-key ${API_KEY} --served-model-name ${NAME_B}\n")
    from vramlint.scan import scan

    a, b = scan([str(tmp_path / "compose.yaml")]).servers
    notes = [n for s in (a, b) for n in s.notes if "not set in" in n]
    assert len(notes) == 2 and notes[0].startswith("${API_KEY}") and notes[1].startswith("${NAME_B}")


def test_rocm_devices_are_the_ones_rocr_and_hip_visible_devices_leave():
    # /dev/kfd and /dev/dri give the container every GPU of the host; ROCR_VISIBLE_DEVICES narrows what the ROCr
    # runtime shows (host indices), HIP_VISIBLE_DEVICES picks among those (numbered from 0)
    servers, _, _ = load("rocm/docker-compose.yml")
    a, b, pair = servers["small-a"].gpu, servers["small-b"].gpu, servers["pair"].gpu
    assert (a.vendor, a.count, a.device_ids) == ("amd", 1, ["0"])
    assert (b.count, b.device_ids) == (1, ["1"])
    assert a.shared_key != b.shared_key  # one partition each: not one GPU shared by two engines
    assert (pair.count, pair.device_ids) == (2, ["2", "4"])
    assert "ROCR_VISIBLE_DEVICES=2,3,4" in pair.evidence and "HIP_VISIBLE_DEVICES=0,2" in pair.evidence
    # set where it runs: which devices, and how many, is not known
    shell = servers["from-shell"].gpu
    assert shell.vendor == "amd" and shell.count is None and shell.device_ids is None
    # no variable: every GPU of the host, a number the file does not say
    assert servers["all-of-them"].gpu.count is None


def test_an_extends_chain_is_followed_31_deep_and_its_cut_said_once_on_the_line(tmp_path):
    from vramlint.extract.compose import MAX_EXTENDS_DEPTH

    text = ("services:\n  s0:\n    image: vllm/vllm-openai:v0.8.5\n    command: --model Qwen/Qwen2.5-1.5B-Instruct\n"
            + "".join(f"  s{i}:\n    extends: s{i - 1}\n" for i in range(1, 100)))
    path = tmp_path / "compose.yaml"
    path.write_text(text)
    docs, _ = load_text(text, str(path))
    servers, problems = extract_compose(docs[0], str(tmp_path))
    names = {s.name for s in servers}
    assert names == {f"s{i}" for i in range(MAX_EXTENDS_DEPTH)}  # each server whose chain reaches s0's image
    [cut] = [p for p in problems if "extends chain" in p.message]
    assert cut.level == "warning" and cut.line == 6  # s1's `extends: s0`, where s32's chain was cut
    assert "service s32 is longer than 32 services" in cut.message
