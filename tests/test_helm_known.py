"""Values files of well-known charts, read alone (as pre-commit passes them), and the Helm flags and config keys."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from vramlint.scan import scan

HERE = os.path.dirname(__file__)
KNOWN = os.path.relpath(os.path.join(HERE, "fixtures", "helm", "known"))
OVERLAYS = os.path.relpath(os.path.join(HERE, "fixtures", "helm", "overlays"))


def fixture(name: str) -> str:
    return os.path.join(KNOWN, name)


def line_of(path: str, needle: str) -> int:
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if needle in line:
                return i
    raise AssertionError(f"{needle!r} not in {path}")


def run_cli(*argv: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    root = os.path.abspath(os.path.join(HERE, ".."))
    env = dict(os.environ, PYTHONPATH=root, HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "vramlint", *argv], capture_output=True, text=True, cwd=cwd or root,
                          env=env, timeout=120, check=False)


def test_kubeai_models_chart_only_enabled_vllm_entries_are_servers():
    path = fixture("kubeai-models-values.yaml")
    inv = scan([path])
    assert [s.name for s in inv.servers] == ["qwen-small-l4"]  # the disabled entry and the Ollama one are not
    s = inv.servers[0]
    assert s.model == "Qwen/Qwen2.5-1.5B-Instruct"
    assert s.model_location.line == line_of(path, "url: hf://Qwen")
    assert s.args["max_model_len"] == 16384
    assert s.arg_locations["max_model_len"].line == line_of(path, "--max-model-len=16384")
    assert s.gpu.type == "L4" and s.gpu.count == 1
    assert s.gpu.location.line == line_of(path, "nvidia-gpu-l4:1")
    assert s.replicas == 2
    assert s.env["VLLM_ATTENTION_BACKEND"] == "FLASHINFER"


def test_kubeai_models_chart_all_enabled_turns_every_vllm_entry_on(tmp_path):
    text = open(fixture("kubeai-models-values.yaml"), encoding="utf-8").read().replace(
        "all:\n  enabled: false", "all:\n  enabled: true")
    path = tmp_path / "values.yaml"
    path.write_text(text)
    inv = scan([str(path)])
    assert sorted(s.name for s in inv.servers) == ["big-model-h100", "qwen-small-l4"]
    big = next(s for s in inv.servers if s.name == "big-model-h100")
    assert big.gpu.type == "H100-SXM" or big.gpu.type.startswith("H100")
    assert big.gpu.count == 4 and big.args["tensor_parallel_size"] == 4


def test_kubeai_models_chart_with_every_entry_disabled_says_so_once():
    path = fixture("kubeai-models-disabled.yaml")
    inv = scan([path])
    assert inv.servers == []
    said = [p for p in inv.problems if "disabled" in p.message]
    assert len(said) == 1 and said[0].level == "note"
    assert said[0].line == line_of(path, "catalog:")
    assert "2 vLLM catalog entries" in said[0].message


def test_llm_d_sample_application_gives_prefill_and_decode_servers():
    path = fixture("llm-d-values.yaml")
    inv = scan([path])
    roles = {s.name: s for s in inv.servers}
    assert set(roles) == {"prefill", "decode"}
    for s in roles.values():
        assert s.model == "Qwen/Qwen2.5-7B-Instruct"
        assert s.model_location.line == line_of(path, "modelArtifactURI")
        assert s.gpu.count == 2 and s.gpu.location.line == line_of(path, "nvidia.com/gpu: 2")
        assert s.image == "ghcr.io/llm-d/llm-d:0.0.8" and s.vllm_version is None  # llm-d's own versioning
        assert s.args["tensor_parallel_size"] == 2
    assert roles["prefill"].args["max_model_len"] == 8192
    assert roles["prefill"].arg_locations["max_model_len"].line == line_of(path, '"--max-model-len"')
    assert "max_model_len" not in roles["decode"].args
    assert roles["decode"].replicas == 3
    assert not [p for p in inv.problems if "statically" in p.message]


def test_llm_d_model_in_a_pvc_is_not_turned_into_a_hub_id(tmp_path):
    text = open(fixture("llm-d-values.yaml"), encoding="utf-8").read().replace(
        "hf://Qwen/Qwen2.5-7B-Instruct", "pvc://models/Qwen/Qwen2.5-7B-Instruct")
    path = tmp_path / "values.yaml"
    path.write_text(text)
    s = scan([str(path)]).servers[0]
    assert s.model == "pvc://models/Qwen/Qwen2.5-7B-Instruct"
    assert any("pvc://models" in n and "not known" in n for n in s.notes)


def test_vllm_block_camel_case_and_kai_scheduler_gpu_share():
    path = fixture("vllm-block-kai.yaml")
    s = scan([path]).servers[0]
    assert s.model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert s.args["gpu_memory_utilization"] == 0.35
    assert s.arg_locations["gpu_memory_utilization"].line == line_of(path, "gpuMemoryUtilization")
    assert s.args["max_model_len"] == 4096 and s.args["trust_remote_code"] is True
    assert s.args["max_num_seqs"] == 32
    assert s.gpu.count == 1 and s.gpu.memory_gib == pytest.approx(6.0)
    assert s.gpu.location.line == line_of(path, "gpuMemoryMiB")
    assert s.vllm_version == "0.8.5"
    assert any("vllm.enablePrefixCaching" in n for n in s.notes)  # not a flag the chart writes


def test_vllm_block_overlay_without_model_leaves_it_unknown(tmp_path):
    path = tmp_path / "values-small.yaml"
    path.write_text("vllm:\n  gpuMemoryUtilization: 0.2\n")
    s = scan([str(path)]).servers[0]
    assert s.model is None and s.args["gpu_memory_utilization"] == 0.2
    assert any("vllm.model is not set" in n for n in s.notes)


def test_gke_ai_inference_values_with_the_templates_own_flags():
    path = fixture("gke-ai-inference-values.yaml")
    s = scan([path]).servers[0]
    assert s.model == "google/gemma-2-2b-it" and s.model_location.line == line_of(path, "id: google")
    assert s.args["max_model_len"] == 2048 and s.arg_locations["max_model_len"].line == line_of(path, "maxModelLen")
    assert s.args["tensor_parallel_size"] == 1
    assert s.args["gpu_memory_utilization"] == 0.95  # written by the chart's template, said in a note
    assert any("--gpu-memory-utilization=0.95" in n for n in s.notes)
    assert s.gpu.type == "L4" and s.gpu.count == 1
    assert s.replicas == 2


def test_opea_values_model_from_llm_model_id():
    path = fixture("opea-values.yaml")
    s = scan([path]).servers[0]
    assert s.model == "Qwen/Qwen2.5-3B-Instruct"
    assert s.model_location.line == line_of(path, "LLM_MODEL_ID:")
    assert s.args["max_model_len"] == 4096 and s.arg_locations["max_model_len"].line == line_of(path, "extraCmdArgs")
    assert s.args["dtype"] == "bfloat16" and s.arg_locations["dtype"].line == line_of(path, '"--dtype"')
    assert s.gpu.count == 1


def test_opea_overlay_custom_entrypoint_model_unknown_not_a_stray_number():
    path = fixture("opea-rocm-overlay.yaml")
    s = scan([path]).servers[0]
    assert s.model is None  # "2048" after a removed flag must not become the model
    assert s.gpu.vendor == "amd" and s.gpu.count == 1
    assert any("/workspace/api_server.py" in n for n in s.notes)
    assert any("LLM_MODEL_ID is not set" in n for n in s.notes)


def test_custom_image_with_model_env_is_not_guessed():
    path = fixture("custom-image-env-model.yaml")
    inv = scan([path])
    s = inv.servers[0]
    assert s.model is None
    said = [p for p in inv.problems if "env MODEL" in p.message]
    assert len(said) == 1 and said[0].level == "note" and said[0].line == line_of(path, "MODEL:")
    assert not [p for p in inv.problems if "default model" in p.message]


def test_generic_container_block():
    path = fixture("container-block.yaml")
    s = scan([path]).servers[0]
    assert s.model == "Qwen/Qwen2.5-7B-Instruct"
    assert s.args["max_model_len"] == 32768 and s.args["gpu_memory_utilization"] == 0.85
    assert s.arg_locations["gpu_memory_utilization"].line == line_of(path, "0.85")
    assert s.gpu.type == "L4" and s.vllm_version == "0.9.2"


def test_values_file_next_to_its_chart_is_extracted_once(tmp_path):
    """A known-shape values.yaml beside its chart's templates goes through the chart only."""
    chart = tmp_path / "kai"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: kai\nversion: 0.1.0\n")
    shutil.copy(fixture("vllm-block-kai.yaml"), chart / "values.yaml")
    (chart / "templates" / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n"
        "          command: [vllm, serve, {{ .Values.vllm.model | quote }}]\n"
        "          args: [--max-model-len, {{ .Values.vllm.maxModelLen | quote }}]\n")
    inv = scan([str(chart)])
    assert len(inv.servers) == 1
    assert inv.servers[0].file.endswith("templates/deployment.yaml")
    assert inv.servers[0].args["max_model_len"] == 4096


# ---------------------------------------------------------------------------------------------- overlays dedupe


def test_findings_shared_by_overlays_are_reported_once_naming_the_values_sets():
    proc = run_cli("check", OVERLAYS, "--offline", "--output-format", "json")
    findings = json.loads(proc.stdout)["findings"]
    vrl005 = [f for f in findings if f["rule"] == "VRL005"]
    assert len(vrl005) == 1, vrl005
    assert vrl005[0]["file"].endswith("overlays/values.yaml")
    assert vrl005[0]["line"] == line_of(os.path.join(OVERLAYS, "values.yaml"), "maxModelLen")
    for name in ("values.yaml", "values-prod.yaml", "values-staging.yaml"):
        assert name in vrl005[0]["message"]


def test_dedupe_keeps_findings_that_differ():
    from vramlint.commands.check import dedupe_findings
    from vramlint.model import Finding, Location

    loc = Location("v.yaml", 3, 5)
    a = Finding("VRL001", "x", "warning", "m", loc, server_key="c.yaml#p")
    b = Finding("VRL001", "x", "warning", "m", loc, server_key="c.yaml#p?values=values-prod.yaml")
    c = Finding("VRL001", "x", "warning", "other", loc, server_key="c.yaml#p?values=values-gpu.yaml")
    out = dedupe_findings([a, b, c])
    assert len(out) == 2
    assert "values.yaml, values-prod.yaml" in out[0].message and out[1].message == "other"


# ---------------------------------------------------------------------------------------------- flags and config


def test_values_flag_applies_overlays_in_order_later_wins(tmp_path):
    first = tmp_path / "first.yaml"
    first.write_text("maxModelLen: 2048\nreplicas: 3\n")
    second = tmp_path / "second.yaml"
    second.write_text("maxModelLen: 4096\n")
    proc = run_cli("inventory", OVERLAYS, "--values", str(first), "--values", str(second), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    servers = json.loads(proc.stdout)["servers"]
    assert len(servers) == 1  # given overlays replace the ones beside the chart
    assert servers[0]["args"]["max_model_len"] == 4096
    assert servers[0]["arg_locations"]["max_model_len"]["file"].endswith("second.yaml")
    assert servers[0]["replicas"] == 3


def test_values_flag_missing_file_is_a_usage_error():
    proc = run_cli("check", OVERLAYS, "--values", "no-such-values.yaml")
    assert proc.returncode == 2 and "no-such-values.yaml" in proc.stderr


def test_values_flag_without_a_chart_is_said(tmp_path):
    overlay = tmp_path / "o.yaml"
    overlay.write_text("replicas: 2\n")
    proc = run_cli("inventory", fixture("container-block.yaml"), "--values", str(overlay))
    assert proc.returncode == 0
    assert "no Helm chart" in proc.stdout


def test_config_keys_helm_values_and_render_helm(tmp_path):
    chart = tmp_path / "chart"
    shutil.copytree(OVERLAYS, chart)
    for extra in ("values-prod.yaml", "values-staging.yaml"):
        (chart / extra).unlink()
    (tmp_path / "long.yaml").write_text("maxModelLen: 1024\n")
    (tmp_path / ".vramlint.yaml").write_text("helm-values: [long.yaml]\nrender-helm: true\n")
    (tmp_path / ".git").mkdir()
    proc = run_cli("inventory", "chart", "--format", "json", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["servers"][0]["args"]["max_model_len"] == 1024
    from vramlint.helm.render import backend

    if backend()[0] is None:
        assert any("Helm rendering skipped" in n for n in out.get("notes", []))


def test_render_helm_without_helm_says_once_and_lints_values(tmp_path, monkeypatch):
    from vramlint.helm import render

    monkeypatch.setattr(render, "sdk_available", lambda: False)
    monkeypatch.setattr(render, "helm_binary", lambda: None)
    second = tmp_path / "second"
    shutil.copytree(OVERLAYS, second)
    inv = scan([OVERLAYS, str(second)], render_helm=True)
    skipped = [n for n in inv.notes if "Helm rendering skipped" in n]
    assert len(skipped) == 1
    assert len(inv.servers) == 6  # values.yaml and two overlays, for each of the two charts
    assert all("evaluated without Helm" in " ".join(s.notes) for s in inv.servers)


def test_config_schema_has_the_helm_keys():
    from vramlint.config import shipped_schema

    props = shipped_schema()["properties"]
    assert props["render-helm"]["type"] == "boolean"
    assert props["helm-values"]["type"] == "array"


def test_sdk_render_that_runs_too_long_is_stopped_and_reported(tmp_path):
    from vramlint.helm import extract_charts
    from vramlint.helm import render as helm_render

    if not helm_render.sdk_available():
        pytest.skip("helm-python-sdk not installed (pip install 'vramlint[helm]')")
    chart = tmp_path / "slow"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: slow\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("n: 1\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: |\n"
        "{{- range $i := until 200000000 }}{{ $i }}{{- end }}\n")
    import time

    started = time.perf_counter()
    servers, problems, _notes = extract_charts([str(chart)], render=True, timeout_s=1.0)
    assert time.perf_counter() - started < 30
    assert any("longer than 1 s" in p.message for p in problems)


def test_template_without_chart_configmap_holding_a_deployment_for_a_controller():
    path = os.path.relpath(os.path.join(HERE, "fixtures", "helm", "plain", "preset-configmap.yaml"))
    inv = scan([path])
    assert len(inv.servers) == 1
    s = inv.servers[0]
    assert s.model is None  # a second-stage template expression, never its text
    assert s.args["max_model_len"] == 8192
    assert s.arg_locations["max_model_len"].line == line_of(path, '"--max-model-len"')
    assert s.image is None
    assert any("ConfigMap gpu-preset key 'servingDeployment'" in n for n in s.notes)
    assert len([n for n in inv.notes if "not part of a Helm chart" in n]) == 1  # once for the file
    assert not inv.problems


# ---------------------------------------------------------------------------------------- known chart by evidence

_OTHER_CHART_OVERLAY = """\
# An overlay of a team's own chart: it shares `model.id` and `maxModelLen` with the GKE ai-inference chart,
# but its templates are not that chart's (no fixed --num-scheduler-steps / --disable-log-requests).
image:
  repository: vllm/vllm-openai
  tag: v0.19.1
model:
  id: Qwen/Qwen2.5-7B-Instruct
maxModelLen: 8192
tensorParallelSize: 1
extraArgs:
  - --gpu-memory-utilization=0.85
ingressRoute:
  host: llm.example.com
"""


def test_overlay_of_another_chart_sharing_keys_is_not_the_gke_chart(tmp_path):
    from vramlint.extract.helm_known import detect
    from vramlint.yamlload import load_text

    path = tmp_path / "values-prod.yaml"
    path.write_text(_OTHER_CHART_OVERLAY)
    [doc] = load_text(_OTHER_CHART_OVERLAY, str(path))[0]
    # `ingressRoute` is no key of the GKE chart's values: the shape as a whole is not that chart's
    assert detect(doc.data, str(path)) != "gke-ai-inference"
    inv = scan([str(path)])
    for server in inv.servers:
        # none of the GKE template's own flags are made up for it
        assert "num_scheduler_steps" not in server.args and "disable_log_requests" not in server.args
        assert not any("GKE ai-inference" in n for n in server.notes)


def test_chart_yaml_naming_another_chart_rules_the_known_chart_out(tmp_path):
    from vramlint.extract.helm_known import detect
    from vramlint.yamlload import load_text

    text = open(fixture("gke-ai-inference-values.yaml"), encoding="utf-8").read()
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: acme-llm\nversion: 0.1.0\n")
    values_dir = tmp_path / "values"
    values_dir.mkdir()
    path = values_dir / "values-l4.yaml"
    path.write_text(text)
    [doc] = load_text(text, str(path))[0]
    assert detect(doc.data, str(path)) != "gke-ai-inference"
    # the same values under the GKE chart's own Chart.yaml (`name: gemma`) are that chart's
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: gemma\nversion: 0.2.0\n")
    assert detect(doc.data, str(path)) == "gke-ai-inference"


def test_gke_chart_values_alone_are_still_recognised_by_their_whole_shape():
    from vramlint.extract.helm_known import detect
    from vramlint.yamlload import load_text

    path = fixture("gke-ai-inference-values.yaml")
    text = open(path, encoding="utf-8").read()
    [doc] = load_text(text, path)[0]
    assert detect(doc.data, path) == "gke-ai-inference"


MODELSERVICE_VALUES = """\
modelArtifacts:
  uri: "hf://Qwen/Qwen2.5-7B-Instruct"
  name: "Qwen/Qwen2.5-7B-Instruct"
accelerator:
  type: nvidia
decode:
  create: true
  replicas: 2
  parallelism:
    tensor: 2
  containers:
  - name: vllm
    image: ghcr.io/llm-d/llm-d-cuda:v0.4.0
    modelCommand: vllmServe
    args:
      - "--max-model-len"
      - "8192"
prefill:
  create: true
  replicas: 1
  accelerator:
    type: intel-gaudi
  containers:
  - name: vllm
    image: ghcr.io/llm-d/llm-d-cuda:v0.4.0
    modelCommand: imageDefault
    resources:
      limits:
        habana.ai/gaudi: 4
  - name: sidecar
    image: busybox
    command: ["sleep", "infinity"]
"""


def test_llm_d_modelservice_values_give_the_roles_the_chart_renders(tmp_path):
    path = tmp_path / "values.yaml"
    path.write_text(MODELSERVICE_VALUES)
    servers = {s.name: s for s in scan([str(path)]).servers}
    assert set(servers) == {"prefill", "decode"}
    decode, prefill = servers["decode"], servers["prefill"]
    for s in (decode, prefill):
        assert s.model == "Qwen/Qwen2.5-7B-Instruct" and s.model_location.line == 2
        assert s.vllm_version is None  # llm-d's release number, not vLLM's
    # vllmServe: `vllm serve MODEL`, --tensor-parallel-size from parallelism.tensor, then the container's args
    assert decode.args["tensor_parallel_size"] == 2 and decode.arg_locations["tensor_parallel_size"].line == 10
    assert decode.args["max_model_len"] == 8192 and decode.replicas == 2
    assert (decode.gpu.count, decode.gpu.vendor) == (2, "nvidia")  # dataLocal x tensor, requested by the chart
    # the role's accelerator type and the container's own limit for its resource win
    assert (prefill.gpu.count, prefill.gpu.vendor) == (4, "intel-gaudi")
    assert not decode.unknown_args and not prefill.unknown_args


def test_a_vllm_block_in_another_charts_values_is_not_the_vllm_helm_chart(tmp_path):
    """Values of a chart of its own that happen to have a `vllm:` block with `maxModelLen` (shaped after
    rh-ai-quickstart/private-coding-assistant's pca-ai-serving) are not vllm-helm's: its other top-level keys are
    no key of that chart, so no server is built with the flags vllm-helm's template would write."""
    path = tmp_path / "values.yaml"
    path.write_text("namespace: ai-serving\nmodel:\n  id: Qwen/Qwen3-8B\ntokens:\n  total: 32000\n"
                    "vllm:\n  maxModelLen: \"\"\n  image: vllm/vllm-openai:v0.19.0\nhardware:\n  gpuCount: 1\n")
    assert scan([str(path)]).servers == []
    # the vllm-helm chart's own shape still is
    path.write_text("replicaCount: 1\nvllm:\n  model: Qwen/Qwen3-8B\n  maxModelLen: 8192\n")
    [server] = scan([str(path)]).servers
    assert server.model == "Qwen/Qwen3-8B" and server.args["max_model_len"] == 8192


def test_nm_vllm_chart_values_give_the_command_its_template_writes(tmp_path):
    path = tmp_path / "values.yaml"
    path.write_text("apiServer:\n  extraArgs: []\n  host: 0.0.0.0\n  port: 80\n"
                    "image:\n  repository: ghcr.io/neuralmagic/nm-vllm-openai\n  tag: v0.1.0\n"
                    "modelName: mistralai/Mistral-7B-v0.1\nservice:\n  port: 80\nresources: {}\n")
    [server] = scan([str(path)]).servers
    assert server.model == "mistralai/Mistral-7B-v0.1" and server.model_location.line == 8
    assert server.image == "ghcr.io/neuralmagic/nm-vllm-openai:v0.1.0"
    assert server.vllm_version is None  # nm-vllm numbers its own releases, not vLLM's
    assert server.args["port"] == 80 and not server.unknown_args
