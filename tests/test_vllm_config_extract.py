"""vLLM --config files: standalone servers, and merged into the server that passes --config."""

from pathlib import Path

from vramlint.cmdline import Token, find_vllm_invocation
from vramlint.extract.vllm_config import apply_config_file, extract_vllm_config, is_vllm_config
from vramlint.model import Location, Server
from vramlint.yamlload import load_text

FIX = Path(__file__).parent / "fixtures" / "vllm_config"


def load(name):
    path = FIX / name
    docs, _ = load_text(path.read_text(), str(path))
    return docs[0]


def test_recognised_and_training_config_is_not():
    assert is_vllm_config(load("vllm_config.yaml"))
    assert not is_vllm_config(load("train_config.yaml"))
    assert not is_vllm_config({"name": "x", "replicas": 2})


def test_standalone_values_typed_with_locations():
    servers, problems = extract_vllm_config(load("vllm_config.yaml"))
    s = servers[0]
    assert s.source_format == "vllm-config" and s.gpu is None
    assert s.model == "Qwen/Qwen3-4B-AWQ" and s.model_location.line == 2
    assert s.args["max_model_len"] == 16384  # quoted string typed as vLLM types it
    assert s.args["tensor_parallel_size"] == 2
    assert s.args["served_model_name"] == ["qwen", "qwen-4b"]
    assert s.args["speculative_config"] == {"method": "ngram", "num_speculative_tokens": 5}
    assert s.args["trust_remote_code"] is True
    # no version known: the newest loader, which turns `false` into `--no-enable-prefix-caching`
    assert s.args["enable_prefix_caching"] is False
    assert s.arg_locations["tensor_parallel_size"].line == 6
    assert not problems


def test_command_line_wins_over_config_file():
    inv = find_vllm_invocation([Token("vllm", None), Token("serve", None)],
                               [Token("Qwen/Qwen3-4B-AWQ", None), Token("--config", None), Token("c.yaml", None),
                                Token("--max-model-len", Location("deploy.yaml", 9, 5)), Token("4096", None)],
                               "vllm/vllm-openai:v0.10.2", {})
    server = Server(file="deploy.yaml", location=Location("deploy.yaml", 1), source_format="kubernetes",
                    vllm_version="0.10.2", model=inv.model, args=dict(inv.args),
                    arg_locations=dict(inv.arg_locations))
    apply_config_file(server, load("vllm_config.yaml"))
    assert server.args["max_model_len"] == 4096
    assert server.arg_locations["max_model_len"].file == "deploy.yaml"
    assert server.args["tensor_parallel_size"] == 2
    assert server.arg_locations["tensor_parallel_size"].file.endswith("vllm_config.yaml")


def test_config_inside_a_configmap_block_points_into_the_manifest():
    text = "model: org/m\ngpu-memory-utilization: 0.8\n"
    docs, _ = load_text(text, "<configmap>")
    server = Server(file="cm.yaml", location=Location("cm.yaml", 1), source_format="kubernetes")
    base = Location("cm.yaml", 12, 5, yaml_path="data.config\\.yaml")
    apply_config_file(server, docs[0].data, base)
    loc = server.arg_locations["gpu_memory_utilization"]
    assert (loc.file, loc.line, loc.column) == ("cm.yaml", 13, 5)
    assert server.model == "org/m"


def _config_server(text: str, image: str | None) -> Server:
    from vramlint.versions import version_from_image

    server = Server(file="deploy.yaml", location=Location("deploy.yaml", 1), source_format="kubernetes",
                    image=image)
    server.vllm_version = version_from_image(image)
    docs, _ = load_text(text, "cfg.yaml")
    apply_config_file(server, docs[0])
    return server


def test_config_file_false_per_vllm_version():
    text = "enable-prefix-caching: false\nenable_chunked_prefill: false\nenforce-eager: true\n"
    # 0.28+: `false` becomes `--no-KEY` when the option has that form (written with dashes, as here)
    new = _config_server(text, "vllm/vllm-openai:v0.30.0")
    assert new.args["enable_prefix_caching"] is False
    assert "enable_chunked_prefill" not in new.args  # snake_case key: `--no-enable_chunked_prefill` is no option
    assert new.args["enforce_eager"] is True
    # 0.11.1 .. 0.27: `false` is dropped and the default applies (said in a note)
    mid = _config_server(text, "vllm/vllm-openai:v0.20.0")
    assert "enable_prefix_caching" not in mid.args
    assert any("enable-prefix-caching: false" in n and "0.20.0" in n for n in mid.notes)
    # 0.6.5 .. 0.8.4: StoreBoolean options named by their dest get `--key False`
    old = _config_server(text, "vllm/vllm-openai:v0.7.3")
    assert old.args["enable_chunked_prefill"] is False
    assert "enable_prefix_caching" not in old.args
