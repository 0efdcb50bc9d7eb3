"""A container whose variables come from ConfigMaps that its own file defines is read with them as soon as the file
is read (`scan._resolve_own_env_refs`): no other file can change which ConfigMap it gets (the one of its own file is
taken first), so its document is not kept for the cross-file join, nor sent back by a pool's worker. What it gives
is what the join gives the same container with its ConfigMaps in a file beside it."""

from __future__ import annotations

import json

from vramlint.cli import main
from vramlint.discover import FileEntry
from vramlint.scan import _scan_chunk

SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: serve-settings
  namespace: {namespace}
data:
  SERVED: "Qwen/Qwen2.5-7B-Instruct"
  LENGTH: "16384"
"""

TUNING = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: serve-tuning
  namespace: inference
data:
  UTIL: "0.85"
"""

WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen
  namespace: inference
spec:
  selector:
    matchLabels: {{app: qwen}}
  template:
    metadata:
      labels: {{app: qwen}}
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: server
          image: vllm/vllm-openai:v0.10.1
          args: ["--model=$(SERVED)", "--max-model-len=$(LENGTH)"{util_arg}]
          env:
            - name: SERVED
              valueFrom:
                configMapKeyRef: {{name: serve-settings, key: SERVED}}
            - name: LENGTH
              valueFrom:
                configMapKeyRef: {{name: serve-settings, key: LENGTH}}
{env_from}          resources:
            limits:
              nvidia.com/gpu: "1"
"""

TUNED = {"util_arg": ', "--gpu-memory-utilization=$(UTIL)"',
         "env_from": "          envFrom:\n            - configMapRef: {name: serve-tuning}\n"}


def _workload(**parts: str) -> str:
    return WORKLOAD.format(**{"util_arg": "", "env_from": "", **parts})


def _servers(path, capsys) -> list[dict]:
    main(["check", str(path), "--offline", "--output-format", "json"])
    return json.loads(capsys.readouterr().out)["servers"]


def _worker_reading(path):
    """What a pool's worker sends back for this one file."""
    import gc

    from vramlint import parallel

    try:
        return _scan_chunk(([FileEntry(str(path), str(path), explicit=False)], True))
    finally:
        parallel.IN_WORKER[0] = False
        gc.unfreeze()


def test_a_configmap_of_the_containers_own_file_is_read_with_the_file(tmp_path, capsys):
    together = tmp_path / "together" / "qwen.yaml"
    together.parent.mkdir()
    together.write_text(SETTINGS.format(namespace="inference") + "---\n" + _workload())
    chunk = _worker_reading(together)
    assert chunk.records.env_refs == []  # nothing left for the join
    [server] = chunk.records.servers
    assert server.model == "Qwen/Qwen2.5-7B-Instruct"
    assert server.args.get("max_model_len") == 16384

    # the same container with its ConfigMap in a file beside it: read by the join, to the same server
    apart = tmp_path / "apart"
    apart.mkdir()
    (apart / "10-settings.yaml").write_text(SETTINGS.format(namespace="inference"))
    (apart / "20-qwen.yaml").write_text("\n" * (SETTINGS.count("\n") + 1) + _workload())  # same lines
    assert len(_worker_reading(apart / "20-qwen.yaml").records.env_refs) == 1  # left for the join
    [joined] = _servers(apart, capsys)
    [read_with_file] = _servers(together.parent, capsys)
    assert read_with_file["model"] == joined["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert read_with_file["env"] == joined["env"]
    assert read_with_file["args"] == joined["args"]


def test_a_configmap_another_file_completes_is_left_for_the_join(tmp_path, capsys):
    # one of the two ConfigMaps is in the file, the other beside it: the file alone cannot read the container
    folder = tmp_path / "mixed"
    folder.mkdir()
    own = folder / "qwen.yaml"
    own.write_text(SETTINGS.format(namespace="inference") + "---\n" + _workload(**TUNED))
    (folder / "tuning.yaml").write_text(TUNING)
    assert len(_worker_reading(own).records.env_refs) == 1
    [server] = _servers(folder, capsys)
    assert server["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert server["env"].get("UTIL") == "0.85"


def test_a_configmap_of_the_file_in_another_namespace_is_not_the_pods(tmp_path, capsys):
    # the file's own ConfigMap names another namespace: the kubelet would not use it, and the one of the folder's
    # other file (the pod's namespace) is the one the join gives
    folder = tmp_path / "namespaces"
    folder.mkdir()
    own = folder / "qwen.yaml"
    own.write_text(SETTINGS.format(namespace="staging") + "---\n" + _workload())
    # (a word of vLLM's in it: a ConfigMap the prefilter passes over is looked for only by a name no scanned file
    # defines, and the other namespace's one is defined)
    (folder / "settings.yaml").write_text(SETTINGS.format(namespace="inference").replace(
        "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-14B-Instruct") + '  VLLM_LOGGING_LEVEL: "INFO"\n')
    assert len(_worker_reading(own).records.env_refs) == 1
    [server] = _servers(folder, capsys)
    assert server["model"] == "Qwen/Qwen2.5-14B-Instruct"
