"""--middleware: what vLLM's build_app does with the value (module import, then getattr) for a given release."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vramlint.vllm_modules import missing_module

ROOT = Path(__file__).resolve().parent.parent


def _deployment(image: str, middleware: str) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: {image}
          args:
            - --model
            - Qwen/Qwen2.5-1.5B-Instruct
            - --middleware
            - {middleware}
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def _check(tmp_path: Path, image: str, middleware: str) -> list[dict]:
    (tmp_path / "deploy.yaml").write_text(_deployment(image, middleware), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", "deploy.yaml", "--offline",
                           "--output-format", "json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "VRL005"]


def test_a_vllm_module_the_release_does_not_ship_stops_the_server(tmp_path):
    found = _check(tmp_path, "vllm/vllm-openai:v0.9.0", "vllm.entrypoints.openai.middleware.log_opc_header")
    assert [(f["level"], f["line"]) for f in found] == [("error", 15)]
    assert "No module named 'vllm.entrypoints.openai.middleware'" in found[0]["message"]


def test_a_module_the_release_ships_and_one_outside_vllm_are_not_findings(tmp_path):
    assert _check(tmp_path, "vllm/vllm-openai:v0.33.0",
                  "vllm.entrypoints.serve.middleware.x_request_id.XRequestIdMiddleware") == []
    assert _check(tmp_path, "vllm/vllm-openai:v0.9.0", "my_company.middleware.audit") == []


def test_a_module_added_in_a_later_release_is_refused_by_the_earlier_one(tmp_path):
    found = _check(tmp_path, "vllm/vllm-openai:v0.28.0",
                   "vllm.entrypoints.serve.middleware.x_request_id.XRequestIdMiddleware")
    # the package above it is new too: Python names the first part it cannot find
    assert len(found) == 1 and "No module named 'vllm.entrypoints.serve.middleware'" in found[0]["message"]


def test_a_value_without_a_dot_cannot_be_split_into_module_and_name(tmp_path):
    found = _check(tmp_path, "vllm/vllm-openai:v0.20.0", "audit")
    assert len(found) == 1 and "ValueError: not enough values to unpack" in found[0]["message"]


@pytest.mark.parametrize("module, version, missing", [
    ("vllm.nosuchpackage.x", "0.20.0", "vllm.nosuchpackage"),  # the top level is listed whole
    ("vllm.model_executor.nosuchmodule", "0.20.0", None),  # below it, only vllm.entrypoints is
    ("vllm.entrypoints.openai.api_server", "0.4.3", None),
    ("vllm.entrypoints.openai.api_server.sub", "0.20.0", "vllm.entrypoints.openai.api_server.sub"),
    ("vllm.entrypoints.openai.middleware", "0.99.0", None),  # a release the table does not have
    ("torch.nn", "0.20.0", None),
])
def test_missing_module_names_the_first_missing_part_where_the_listing_is_whole(module, version, missing):
    assert missing_module(module, version) == missing


def test_only_the_first_middleware_that_fails_is_an_error_the_later_ones_are_folded_into_it(tmp_path):
    # build_app imports the --middleware values in order and stops at the first it cannot import: 20,000 failing
    # values are one root cause, one finding (they were 20,000 errors)
    many = "\n".join(f"            - --middleware\n            - vllm.x{i}.y" for i in range(2000))
    text = _deployment("vllm/vllm-openai:v0.9.0", "my_company.middleware.audit").replace(
        "            - my_company.middleware.audit\n", "            - my_company.middleware.audit\n" + many + "\n")
    (tmp_path / "deploy.yaml").write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "vramlint", "check", "deploy.yaml", "--offline",
                           "--output-format", "json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    found = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "VRL005"]
    assert [(f["level"], f["line"]) for f in found] == [("error", 17)]
    assert "No module named 'vllm.x0'" in found[0]["message"]
    assert "(and 1999 later --middleware values that would fail too)" in found[0]["message"]


@pytest.mark.parametrize(("value", "said"), [
    ("vllm..audit", "No module named 'vllm.'"),  # importlib looks up 'vllm.' (an empty part)
    (".audit", "ValueError: Empty module name"),
    ("..audit", "TypeError: the 'package' argument is required to perform a relative import for '.'"),
])
def test_an_empty_or_relative_module_path_is_what_importlib_refuses(tmp_path, value, said):
    import importlib

    module = value.rsplit(".", 1)[0]
    with pytest.raises((ImportError, ValueError, TypeError)) as raised:
        importlib.import_module(module)  # what Python itself says, the text the finding quotes
    assert said.split(": ", 1)[-1].split(" (")[0] in f"{type(raised.value).__name__}: {raised.value}" or \
        said.startswith("No module")
    found = _check(tmp_path, "vllm/vllm-openai:v0.9.0", value)
    assert [f["level"] for f in found] == ["error"]
    assert said in found[0]["message"]
