"""The generated vLLM argument table: versions whose frontend arguments moved to another module."""

import pytest

from vramlint import vllm_args
from vramlint.cmdline import Token, parse_vllm_args


@pytest.mark.parametrize("version", ["0.28.0", "0.29.0", "0.30.0", "0.32.0", "0.33.0"])
def test_frontend_arguments_and_positional_model_in_every_recent_version(version):
    # vLLM 0.29-0.32 define the API server's arguments in entrypoints/launchers/cli_args.py
    assert vllm_args.lookup("--port", version) is not None
    assert vllm_args.has_positional_model(version)
    inv = parse_vllm_args([Token("Qwen/Qwen3-8B", None), Token("--port", None), Token("8000", None),
                           Token("--no-enable-prefix-caching", None)], version=version)
    assert inv.model == "Qwen/Qwen3-8B"
    assert not inv.unknown_args and not [p for p in inv.problems if "positional" in p]
    assert inv.args["enable_prefix_caching"] is False
