"""The cross-file joins look runtimes up by name (and file) instead of scanning them: same choice as before."""

from __future__ import annotations

import os

from vramlint.scan import scan

RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: {name}
spec:
  supportedModelFormats:
    - name: {fmt}
      autoSelect: {auto}
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:{tag}
      command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
      args: ["--port=8080"]
"""

ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: {name}
spec:
  predictor:
    model:
      modelFormat:
        name: {fmt}
{runtime}      args: ["--model=org/{name}"]
"""


def write(path, text):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def isvc(name, fmt="vllm", runtime=None):
    return ISVC.format(name=name, fmt=fmt, runtime=f"      runtime: {runtime}\n" if runtime else "")


def test_named_runtime_in_own_file_wins_else_first_scanned(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("a.yaml", RUNTIME.format(name="rt", fmt="x", auto="false", tag="v0.6.4"))
    write("b.yaml", RUNTIME.format(name="rt", fmt="x", auto="false", tag="v0.8.5") + "---\n" + isvc("in-b", runtime="rt"))
    write("c.yaml", isvc("in-c", runtime="rt"))
    inv = scan(["."])
    by_name = {s.name: s for s in inv.servers}
    assert by_name["in-b"].vllm_version == "0.8.5"  # the runtime of that name in its own file
    assert by_name["in-c"].vllm_version == "0.6.4"  # else the first of that name in scanned order
    assert len(inv.servers) == 2  # both runtimes used: neither is reported as a server of its own


def test_model_format_picks_first_runtime_that_auto_selects_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("a.yaml", RUNTIME.format(name="rt-no", fmt="fmt1", auto="false", tag="v0.5.5"))
    write("b.yaml", RUNTIME.format(name="rt-yes", fmt="fmt1", auto="true", tag="v0.6.4"))
    write("c.yaml", RUNTIME.format(name="rt-too", fmt="fmt1", auto="true", tag="v0.8.5"))
    write("d.yaml", isvc("svc", fmt="fmt1"))
    inv = scan(["."])
    served = [s for s in inv.servers if s.name == "svc"]
    assert [s.vllm_version for s in served] == ["0.6.4"]
    assert os.path.basename(served[0].file) == "d.yaml"
