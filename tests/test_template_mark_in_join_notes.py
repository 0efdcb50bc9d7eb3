"""A note written by a cross-file join (a KServe InferenceService whose runtime is not scanned) says where a
template expression stood, as the other notes do, and never prints vramlint's own marker characters."""

from __future__ import annotations

from vramlint.scan import scan

SCRIPT = """\
#!/bin/bash
runtime_name="$1"
oc apply -f - <<EOF
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: chat
spec:
  predictor:
    model:
      modelFormat:
        name: vLLM
      runtime: ${runtime_name}
      args:
        - --max-model-len=8192
      storageUri: hf://Qwen/Qwen2.5-7B-Instruct
EOF
"""


def test_the_runtime_written_as_a_variable_is_said_as_a_template(tmp_path):
    path = tmp_path / "deploy.sh"
    path.write_text(SCRIPT)
    [server] = scan([str(path)]).servers
    [note] = [n for n in server.notes if "is not among the scanned files" in n]
    assert note.startswith("runtime '(template)'")
    assert not any("\u2983" in n or "\u2984" in n for n in server.notes)
