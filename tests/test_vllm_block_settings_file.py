"""A `vllm:` block is read as the vllm-helm chart's values when it holds one of the chart's own keys (its flags in
camelCase, `additionalArgs`, `trustRemoteCode`, `env`) or a Chart.yaml above names the chart. An application's
settings file whose `vllm:` block lists engine arguments by their Python names, with no chart beside it, deploys
nothing: it is no server and gets no note about the chart's template."""

from __future__ import annotations

from vramlint.scan import scan

SETTINGS = """\
# continuous batching settings of our Python server
vllm:
  model: meta-llama/Meta-Llama-3-8B-Instruct
  dtype: float16
  tensor_parallel_size: 1
  gpu_memory_utilization: 0.90
  max_num_seqs: 256
"""

CHART_VALUES = """\
vllm:
  model: meta-llama/Meta-Llama-3-8B-Instruct
  maxModelLen: 8192
"""


def _scan(tmp_path, text):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return scan([str(path)])


def test_an_applications_settings_are_no_server(tmp_path):
    result = _scan(tmp_path, SETTINGS)
    assert result.servers == []
    assert not any("vllm-helm" in p.message for p in result.problems)


def test_the_charts_values_are_read(tmp_path):
    [server] = _scan(tmp_path, CHART_VALUES).servers
    assert server.model == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert server.args["max_model_len"] == 8192


def test_a_chart_above_confirms_a_block_of_the_model_alone(tmp_path):
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: vllm\nversion: 0.1.0\n")
    [server] = _scan(tmp_path, "vllm:\n  model: meta-llama/Meta-Llama-3-8B-Instruct\n").servers
    assert server.model == "meta-llama/Meta-Llama-3-8B-Instruct"
