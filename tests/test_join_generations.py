"""What the scan's cross-file join makes lives until the report: it leaves the join in the collector's oldest
generation, as what each file leaves does, so that the young collections the next allocations start do not walk
it (11,363 KServe servers joined: 0.4 CPU-s of such walks)."""

from __future__ import annotations

import gc

from vramlint.model import Server
from vramlint.scan import scan

ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: granite-{i}
spec:
  predictor:
    model:
      modelFormat:
        name: huggingface
      args: [--max-model-len={n}]
      storageUri: hf://Qwen/Qwen2.5-1.5B-Instruct
      resources:
        limits:
          nvidia.com/gpu: "1"
"""


def test_servers_joined_from_inference_services_are_not_in_the_young_generations(tmp_path):
    (tmp_path / "isvc.yaml").write_text("---\n".join(ISVC.format(i=i, n=1024 + i) for i in range(20)))
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        inventory = scan([str(tmp_path)])
        young = [o for generation in (0, 1) for o in gc.get_objects(generation) if isinstance(o, Server)]
    finally:
        if not was_enabled:
            gc.disable()
    assert len(inventory.servers) == 20
    assert {s.kind for s in inventory.servers} == {"InferenceService"}  # made by the join, not by a file's reading
    assert young == []
