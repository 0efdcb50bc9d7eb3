"""An image tag that names a release and a commit or build date (`v0.6.1-edb07092-20250118`) is a build from a
commit of that release's line: what the release's own parser refuses is a warning there, not an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._check_util import deployment, run_cli
from vramlint.versions import built_from_commit


def _levels(tmp_path: Path, image: str) -> dict[str, list[str]]:
    text = deployment(image, ["--kv-cache-memory-bytes", "1000000000", "--dtype", "float33"],
                      command=["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct"])
    _, out = run_cli(tmp_path, text, "check", "--output-format", "json")
    found: dict[str, list[str]] = {}
    for f in json.loads(out)["findings"]:
        if f["rule"] in ("VRL005", "VRL009"):
            found.setdefault(f["rule"], []).append(f["level"])
    return found


def test_refusals_of_a_release_are_errors_on_its_own_tag_and_warnings_on_a_build_from_a_commit(tmp_path):
    # --kv-cache-memory-bytes came after 0.9.0 (VRL009), float33 is no --dtype choice (VRL005)
    assert _levels(tmp_path, "vllm/vllm-openai:v0.9.0") == {"VRL005": ["error"], "VRL009": ["error"]}
    assert _levels(tmp_path, "acme/vllm-openai:v0.9.0-cu128") == {"VRL005": ["error"], "VRL009": ["error"]}
    assert _levels(tmp_path, "acme/vllm-openai:v0.9.0-3f9a2c1d-20250601") == {"VRL005": ["warning"],
                                                                                "VRL009": ["warning"]}


@pytest.mark.parametrize(("image", "built"), [
    ("aibrix/vllm-openai:v0.6.1-edb07092-20250118", True),
    ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", True),
    ("vllm/vllm-openai:v0.9.0", False),
    ("intel/vllm:0.10.0-xpu", False),
    ("public.ecr.aws/deep-learning-containers/vllm:0.12.0-gpu-py312-cu129-ubuntu22.04-ec2-v1.0-soci", False),
    ("vllm/vllm-openai:v0.9.0@sha256:" + "a1" * 32, False),  # the digest is not part of the tag
    ("registry:5000/vllm", False),
])
def test_which_tags_name_a_build_from_a_commit(image, built):
    assert built_from_commit(image) is built
