"""A values file kept away from its chart (a cluster profile under deploy/clusters/<name>/values/, applied with
`helm -f`) is linted through the chart among the scanned files whose values.yaml has its shape as a whole, never
on one key, and never when two charts fit it equally."""

from pathlib import Path

from vramlint.scan import scan

CHART_VALUES = """\
replicaCount: 1
image:
  repository: vllm/vllm-openai
  tag: v0.11.0
model:
  name: Qwen/Qwen2.5-7B-Instruct
  maxModelLen: "8192"
accelerator:
  resourceName: nvidia.com/gpu
  count: 1
podLabels: {}
extraArgs: []
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicaCount }}
  template:
    metadata:
      labels:
        {{- toYaml .Values.podLabels | nindent 8 }}
    spec:
      containers:
        - name: vllm
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          args:
            - --model
            - {{ .Values.model.name | quote }}
            - --max-model-len
            - {{ .Values.model.maxModelLen | quote }}
            {{- range .Values.extraArgs }}
            - {{ . | quote }}
            {{- end }}
          resources:
            limits:
              {{ .Values.accelerator.resourceName }}: {{ .Values.accelerator.count }}
"""

PROFILE = """\
fullnameOverride: serve
image:
  repository: vllm/vllm-openai-rocm
  tag: v0.11.0
model:
  name: Qwen/Qwen2.5-14B-Instruct
accelerator:
  resourceName: amd.com/gpu
  count: 2
podLabels:
  team: platform
extraArgs: [--tensor-parallel-size, "2"]
"""


def _repo(tmp_path: Path, profile: str = PROFILE, second_chart: bool = False) -> Path:
    for name in ["serve"] + (["serve-copy"] if second_chart else []):
        chart = tmp_path / "deploy" / "charts" / name
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
        (chart / "values.yaml").write_text(CHART_VALUES)
        (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    values = tmp_path / "deploy" / "clusters" / "lab" / "values"
    values.mkdir(parents=True)
    (values / "serve-amd.yaml").write_text(profile)
    return tmp_path


def test_a_cluster_profile_is_linted_through_the_chart_whose_shape_it_has(tmp_path):
    inv = scan([str(_repo(tmp_path))])
    models = sorted(s.model for s in inv.servers)
    assert models == ["Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-7B-Instruct"]  # the chart's defaults, and the profile
    [profiled] = [s for s in inv.servers if s.model == "Qwen/Qwen2.5-14B-Instruct"]
    assert (profiled.gpu.vendor, profiled.gpu.count) == ("amd", 2) and profiled.args["tensor_parallel_size"] == 2
    assert profiled.model_location.file.endswith("serve-amd.yaml") and profiled.model_location.line == 6
    assert profiled.location.yaml_path.endswith("?values=serve-amd.yaml")
    [note] = [n for n in inv.notes if "read as values of chart" in n]
    assert "serve-amd.yaml" in note and "deploy/charts/serve" in note


def test_one_key_in_common_a_key_the_chart_lacks_or_two_charts_that_fit_are_no_evidence(tmp_path):
    for profile in ("image:\n  repository: vllm/vllm-openai-rocm\n",  # shares too little
                    PROFILE + "gpuOperator:\n  enabled: true\n",  # a key the chart's values never had
                    PROFILE.replace("  count: 2\n", "  count: 2\n  vendor: amd\n")):  # nor under accelerator
        inv = scan([str(_repo(tmp_path / str(abs(hash(profile))), profile))])
        assert not [n for n in inv.notes if "read as values of chart" in n]
        assert "Qwen/Qwen2.5-14B-Instruct" not in [s.model for s in inv.servers if s.source_format != "helm-values"]
    inv = scan([str(_repo(tmp_path / "two", second_chart=True))])
    assert not [n for n in inv.notes if "read as values of chart" in n]


def test_past_the_comparison_limit_the_other_files_are_said_and_read_on_their_own(tmp_path, monkeypatch):
    from vramlint.helm import hook

    repo = _repo(tmp_path)
    (repo / "deploy" / "clusters" / "lab" / "values" / "a-first.yaml").write_text("replicaCount: 2\n")
    monkeypatch.setattr(hook, "MAX_PROFILE_CANDIDATES", 1)
    inv = scan([str(repo)])
    assert any("up to vramlint's limit (1 files" in n for n in inv.notes)
    assert not [n for n in inv.notes if "read as values of chart" in n]


def _chart_with_own_overlay(tmp_path: Path, rel: str, overlay: str) -> Path:
    chart = tmp_path / "serve"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: serve\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(CHART_VALUES)
    (chart / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    (chart / rel).parent.mkdir(parents=True, exist_ok=True)
    (chart / rel).write_text(overlay)
    return chart


def test_an_overlay_in_the_charts_own_folder_is_linted_through_that_chart(tmp_path):
    # (`overrides/models/<model>.yaml` of AMD's vLLM chart; chart-testing's `ci/*-values.yaml`): applied with
    # `helm -f`, so each is a release of its own; below the top level a key the defaults do not list is allowed
    # there (a label of its own under podLabels, which has none by default, and one under model)
    overlay = PROFILE.replace("model:\n  name: Qwen/Qwen2.5-14B-Instruct\n",
                              "model:\n  name: Qwen/Qwen2.5-14B-Instruct\n  revision: main\n")
    for rel in ("overrides/models/qwen-14b.yaml", "ci/amd-values.yaml"):
        chart = _chart_with_own_overlay(tmp_path / rel.split("/")[0], rel, overlay)
        inv = scan([str(chart)])
        assert sorted(s.model for s in inv.servers) == ["Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-7B-Instruct"]
        [variant] = [s for s in inv.servers if s.model == "Qwen/Qwen2.5-14B-Instruct"]
        assert variant.location.yaml_path.endswith("?values=" + rel.rsplit("/", 1)[1])
        assert (variant.gpu.vendor, variant.gpu.count) == ("amd", 2)


def test_a_file_in_the_charts_folder_with_a_key_the_chart_lacks_is_not_an_overlay(tmp_path):
    for i, overlay in enumerate((PROFILE + "gpuOperator:\n  enabled: true\n",  # a top-level key the chart lacks
                                 "image:\n  tag: v0.11.1\n")):  # shares too little to be evidence
        chart = _chart_with_own_overlay(tmp_path / str(i), "overrides/x.yaml", overlay)
        inv = scan([str(chart)])
        assert not [s for s in inv.servers if "?values=" in (s.location.yaml_path or "")]
        assert not [n for n in inv.notes if "read as values of chart" in n]
