"""A third-party image with vLLM in its name whose command is its own CLI (`PROGRAM SUBCOMMAND --opts`) is not read
as words for an assumed `vllm serve` entrypoint (audit22 D7: PaddleOCR's `paddleocr genai_server ... --backend
vllm` gave four false warnings and the model "paddleocr")."""

from __future__ import annotations

from pathlib import Path

from vramlint.scan import scan

SERVICE = """services:
  ocr:
    image: {image}
    command: {command}
    deploy: {{resources: {{reservations: {{devices: [{{driver: nvidia, count: 1, capabilities: [gpu]}}]}}}}}}
"""


def _scan(tmp_path: Path, image: str, command: str):
    f = tmp_path / "compose.yaml"
    f.write_text(SERVICE.format(image=image, command=command))
    return scan([str(f)])


def test_a_launchers_subcommand_in_a_third_party_image_is_not_vllm_arguments(tmp_path: Path):
    result = _scan(tmp_path, "example.com/acme/ocr-vllm-server:1.0",
                   "ocrtool genai_server --model_name OCR-0.9B --port 8080 --backend vllm")
    assert result.servers == []
    [note] = [p for p in result.problems if "custom command" in p.message]
    assert note.level == "note" and note.line == 2


def test_a_model_word_for_the_same_image_is_still_read_as_its_vllm_serve(tmp_path: Path):
    [server] = _scan(tmp_path, "example.com/acme/ocr-vllm-server:1.0",
                     "Qwen/Qwen2.5-1.5B-Instruct --max-model-len 4096").servers
    assert server.model == "Qwen/Qwen2.5-1.5B-Instruct" and server.args["max_model_len"] == 4096


def test_vllms_own_image_keeps_reading_two_positional_words_as_its_refusal(tmp_path: Path):
    [server] = _scan(tmp_path, "vllm/vllm-openai:v0.9.2", "mymodel extra --max-model-len 4096").servers
    assert server.model == "mymodel"
