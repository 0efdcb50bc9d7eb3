"""vLLM 0.33.0+ pairs every boolean `--enable-x` with `--disable-x` (EnableDisableAction, registered by
FlexibleArgumentParser for argparse.BooleanOptionalAction): such a `--disable-x` is no unknown argument there,
while 0.17.0-0.32.0 still refuse `--disable-log-requests`."""

from __future__ import annotations

import json
from pathlib import Path

from vramlint import vllm_args
from vramlint.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "enable_disable" / "chat-server.yaml"


def _vrl009(tmp_path, capsys, image=None):
    path = FIXTURE
    if image is not None:
        path = tmp_path / FIXTURE.name
        path.write_text(FIXTURE.read_text().replace("vllm/vllm-openai:latest", image))
    main(["check", str(path), "--offline", "--output-format", "json"])
    return [f for f in json.loads(capsys.readouterr().out)["findings"] if f["rule"] == "VRL009"]


def test_on_latest_only_the_removed_flag_is_refused(tmp_path, capsys):
    [finding] = _vrl009(tmp_path, capsys)
    assert finding["level"] == "error" and "--swap-space" in finding["message"]


def test_a_release_before_the_pairing_refuses_the_disable_forms(tmp_path, capsys):
    refused = {f["message"].split(" does not know ")[1].split(":")[0]: f["level"]
               for f in _vrl009(tmp_path, capsys, "vllm/vllm-openai:v0.32.0")}
    assert refused == {"--swap-space": "error", "--disable-log-requests": "error",
                       "--disable-prefix-caching": "error"}


def test_the_inverse_form_sets_the_option_false_and_only_from_0_33():
    spec, _, value = vllm_args.resolve_flag("--disable-log-requests", "0.34.0")
    assert (spec.dest, value) == ("enable_log_requests", False)
    spec, _, value = vllm_args.resolve_flag("--disable-prefix-caching", "0.33.0")
    assert (spec.dest, value) == ("enable_prefix_caching", False)
    assert vllm_args.lookup("--disable-log-requests", "0.32.0") is None
    # BooleanOptionalAction gives `--no-` only to the strings add_argument wrote: `--no-disable-x` stays unknown
    assert vllm_args.lookup("--no-disable-log-requests", "0.34.0") is None
    assert "--disable-log-requests" in vllm_args.known_flags("0.34.0")
    assert "--disable-log-requests" not in vllm_args.known_flags("0.32.0")
    # an abbreviation now reaches the inverse strings too, as argparse's prefix match does
    assert "--disable-log-requests" in vllm_args.ambiguous_matches("--disable-log", "0.34.0")
