"""A compose override file (`docker compose -f docker-compose.yml -f docker-compose.h2.yml`): its services have
neither image nor build, which Compose refuses in a file on its own and merges over the base file's service of the
same name. audit24 held out HM3: 13 such files of a vLLM benchmark were silent."""

from __future__ import annotations

import json

from vramlint.cli import main

OVERRIDE = """\
# Usage: docker compose -f docker-compose.yml -f docker-compose.spec.yml up -d
services:
  vllm:
    environment:
      VLLM_ATTENTION_BACKEND: FLASH_ATTN
    command:
      - --model
      - Qwen/Qwen2.5-7B-Instruct
      - --speculative-config
      - '{"method": "ngram", "num_speculative_tokens": 4}'
"""

BASE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.10.2
    command: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
"""


def _notes(tmp_path, capsys):
    main(["check", str(tmp_path), "--offline", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    return [f for f in report["findings"] if "compose override file" in f["message"]]


def test_an_override_file_alone_says_it_is_one(tmp_path, capsys):
    (tmp_path / "docker-compose.spec.yml").write_text(OVERRIDE)
    [note] = _notes(tmp_path, capsys)
    assert note["level"] == "note" and note["line"] == 3
    assert "service vllm has neither image nor build" in note["message"]
    assert "no compose file of a default name is beside it" in note["message"]


def test_an_override_beside_its_base_names_the_base(tmp_path, capsys):
    (tmp_path / "docker-compose.spec.yml").write_text(OVERRIDE)
    (tmp_path / "docker-compose.yml").write_text(BASE)
    [note] = _notes(tmp_path, capsys)
    assert note["file"].endswith("docker-compose.spec.yml")
    assert "docker compose -f docker-compose.yml -f docker-compose.spec.yml" in note["message"]


def test_the_default_override_beside_its_base_is_read_with_it_not_said(tmp_path, capsys):
    (tmp_path / "docker-compose.override.yml").write_text(OVERRIDE)
    (tmp_path / "docker-compose.yml").write_text(BASE)
    assert _notes(tmp_path, capsys) == []


def test_a_service_of_another_program_without_an_image_is_not_said(tmp_path, capsys):
    (tmp_path / "docker-compose.dev.yml").write_text("services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.2\n"
                                                     "  web:\n    environment:\n      DEBUG: '1'\n")
    assert _notes(tmp_path, capsys) == []


DEFAULT_OVERRIDE = """\
services:
  vllm:
    command: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "32768"]
    environment:
      VLLM_ATTENTION_BACKEND: FLASH_ATTN
"""


def _servers(tmp_path, capsys):
    main(["check", str(tmp_path), "--offline", "--format", "json"])
    return json.loads(capsys.readouterr().out)["servers"]


def test_the_default_override_is_merged_over_its_base(tmp_path, capsys):
    # `docker compose up` in the folder reads docker-compose.yml, then docker-compose.override.yml over it: the
    # override's `command` replaces the base's, the base's image and GPU stay
    (tmp_path / "docker-compose.yml").write_text(BASE)
    (tmp_path / "docker-compose.override.yml").write_text(DEFAULT_OVERRIDE)
    [server] = _servers(tmp_path, capsys)
    assert server["args"]["max_model_len"] == 32768
    where = server["arg_locations"]["max_model_len"]
    assert where["file"].endswith("/docker-compose.override.yml") and where["line"] == 3
    assert server["env"] == {"VLLM_ATTENTION_BACKEND": "FLASH_ATTN"}
    assert server["image"] == "vllm/vllm-openai:v0.10.2" and server["gpu"]["count"] == 1


def test_an_override_of_another_name_is_not_merged(tmp_path, capsys):
    (tmp_path / "docker-compose.yml").write_text(BASE)
    (tmp_path / "docker-compose.long.yml").write_text(DEFAULT_OVERRIDE)
    [server] = _servers(tmp_path, capsys)
    assert server["args"]["max_model_len"] == 8192


def test_the_overrides_deploy_merges_per_key_over_the_bases(tmp_path, capsys):
    """compose-go's override.MergeYaml: `deploy` is a mapping merged key by key, so an override that sets only
    `deploy.replicas` and `deploy.resources.limits` keeps the base's `reservations.devices`; a device list in both
    is appended (the base's requests, then the override's), and moby's NVIDIA driver writes NVIDIA_VISIBLE_DEVICES
    once per request, of which the container runtime hook keeps the last (its env map): the override's."""
    (tmp_path / "docker-compose.yml").write_text(BASE.replace("count: 1", "count: 2"))
    (tmp_path / "docker-compose.override.yml").write_text(
        "services:\n  vllm:\n    deploy:\n      replicas: 1\n      resources:\n        limits:\n          memory: 32g\n")
    [server] = _servers(tmp_path, capsys)
    assert server["gpu"]["count"] == 2
    (tmp_path / "docker-compose.override.yml").write_text(
        "services:\n  vllm:\n    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              device_ids: ['3']\n              capabilities: [gpu]\n")
    [server] = _servers(tmp_path, capsys)
    assert server["gpu"]["count"] == 1 and server["gpu"]["device_ids"] == ["3"]
