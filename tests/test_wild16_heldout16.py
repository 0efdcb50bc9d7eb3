"""Fixes made with the held-out-16 batch in view, each on fixtures of its own: a tab where Kubernetes' YAML
parser (go-yaml) allows one, a KServe InferenceService on the vLLM model format whose runtime is not scanned or
sits in an OpenShift Template, and a Flux HelmRelease whose values are a chart vramlint knows."""
from pathlib import Path

from vramlint import yamlload
from vramlint.scan import scan

TABBED = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n"
          "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.10.0\n"
          "          args: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\"]\t# the model\n"
          "          resources:\n            limits:\t\t# per pod\n              nvidia.com/gpu: '1'\t# one GPU\n")


def test_a_tab_after_a_value_or_a_key_is_read_as_kubernetes_reads_it():
    docs, problems = yamlload.load_text("k: v\t# c\na:\t1\nm:\n  requests:\t# c\n    cpu: '2'\t\t# c\n", "f.yaml")
    assert problems == []
    assert docs[0].data == {"k": "v", "a": 1, "m": {"requests": {"cpu": "2"}}}
    assert docs[0].data["m"]["requests"].lc.line == 4  # positions kept (0-based line of `cpu`)


def test_a_tab_as_indentation_is_still_invalid_yaml_with_its_line():
    docs, problems = yamlload.load_text("m:\n\tx: 1\n", "f.yaml")
    assert docs == [] and len(problems) == 1 and problems[0].line == 2 and problems[0].level == "error"


def test_a_manifest_with_tabs_before_comments_is_a_server_and_no_error(tmp_path: Path):
    f = tmp_path / "deploy.yaml"
    f.write_text(TABBED)
    result = scan([str(f)])
    assert [p for p in result.problems if p.level == "error"] == []
    assert len(result.servers) == 1
    server = result.servers[0]
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.gpu.count == 1
