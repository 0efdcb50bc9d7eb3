"""bjw-s app-template: /dev/shm from the chart's `persistence` items, as common 4.x's templates mount them."""

import json
from pathlib import Path

import pytest

from vramlint.scan import scan

APP_TEMPLATE_TP2 = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: llm\nspec:\n"
                    "  chartRef: {{kind: OCIRepository, name: app-template}}\n{values_from}  values:\n"
                    "    controllers:\n      vllm:\n        containers:\n          app:\n"
                    "            image: {{repository: vllm/vllm-openai, tag: v0.10.0}}\n"
                    "            args: [--model, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, '2']\n"
                    "            resources: {{limits: {{nvidia.com/gpu: 2}}}}\n"
                    "{persistence}")


def _app_template_tp2(tmp_path: Path, persistence: str, values_from: str = ""):
    f = tmp_path / "helmrelease.yaml"
    f.write_text(APP_TEMPLATE_TP2.format(persistence=persistence, values_from=values_from))
    servers = scan([str(f)]).servers
    assert len(servers) == 1
    return servers[0], f


@pytest.mark.parametrize("persistence, shm", [
    # the library's common 4.x: a memory emptyDir mounted at /dev/shm everywhere, or in this container only
    ("    persistence:\n      shm:\n        type: emptyDir\n        medium: Memory\n"
     "        globalMounts: [{path: /dev/shm}]\n", True),
    ("    persistence:\n      dshm:\n        type: emptyDir\n        medium: Memory\n"
     "        advancedMounts: {vllm: {app: [{path: /dev/shm}]}}\n", True),
    # no mounts said: mounted at /<identifier>, so an item named for the path is not /dev/shm
    ("    persistence:\n      shm:\n        type: emptyDir\n        medium: Memory\n", False),
    # mounted in another controller's container only; a disk-backed emptyDir; a disabled item
    ("    persistence:\n      shm:\n        type: emptyDir\n        medium: Memory\n"
     "        advancedMounts: {other: {app: [{path: /dev/shm}]}}\n", False),
    ("    persistence:\n      shm:\n        type: emptyDir\n        globalMounts: [{path: /dev/shm}]\n", False),
    ("    persistence:\n      shm:\n        enabled: false\n        type: emptyDir\n        medium: Memory\n"
     "        globalMounts: [{path: /dev/shm}]\n", False),
    ("", False),
])
def test_app_template_shared_memory_comes_from_its_persistence_items(tmp_path: Path, persistence, shm):
    server, _ = _app_template_tp2(tmp_path, persistence)
    assert server.shm is shm


def test_app_template_without_shared_memory_gets_the_charts_advice_and_no_edit(tmp_path: Path):
    from vramlint.cli import main

    _, f = _app_template_tp2(tmp_path, "")
    before = f.read_text()
    out = tmp_path / "out.json"
    main(["check", str(f), "--offline", "--select", "VRL008", "--format", "json", "--output-file", str(out),
          "--fix"])
    findings = [x for x in json.loads(out.read_text())["findings"] if x["rule"] == "VRL008"]
    assert len(findings) == 1 and "persistence item with type: emptyDir" in findings[0]["fix"]["description"]
    assert f.read_text() == before  # the pod spec is the chart's: nothing inserted into the values


def test_app_template_values_from_outside_leaves_shared_memory_unknown(tmp_path: Path):
    server, _ = _app_template_tp2(tmp_path, "", values_from="  valuesFrom:\n    - {kind: ConfigMap, name: extra}\n")
    assert server.shm is None
