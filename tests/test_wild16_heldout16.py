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


ISVC = ("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: llama\nspec:\n"
        "  predictor:\n    model:\n      modelFormat:\n        name: {fmt}\n      runtime: {runtime}\n"
        "      args: ['--tensor-parallel-size=2', '--max-model-len=8192']\n"
        "      storageUri: oci://registry.example/modelcar:1\n"
        "      resources:\n        limits:\n          nvidia.com/gpu: '2'\n")
TEMPLATE = ("apiVersion: template.openshift.io/v1\nkind: Template\nmetadata:\n  name: rt-template\nobjects:\n"
            "- apiVersion: serving.kserve.io/v1alpha1\n  kind: ServingRuntime\n  metadata:\n    name: site-runtime\n"
            "  spec:\n    supportedModelFormats:\n    - name: vLLM\n      autoSelect: true\n    containers:\n"
            "    - name: kserve-container\n      image: vllm/vllm-openai:v0.10.0\n"
            "      command: [python, -m, vllm.entrypoints.openai.api_server]\n"
            "      args: ['--port=8080', '--model=/mnt/models']\n")


def test_an_inference_service_on_the_vllm_format_with_its_runtime_elsewhere_is_a_server(tmp_path: Path):
    f = tmp_path / "isvc.yaml"
    f.write_text(ISVC.format(fmt="vLLM", runtime="site-runtime"))
    servers = scan([str(f)]).servers
    assert len(servers) == 1 and servers[0].kind == "InferenceService" and servers[0].name == "llama"
    assert servers[0].args.get("tensor_parallel_size") == 2 and servers[0].gpu.count == 2
    assert any("'site-runtime' is not among the scanned files" in n for n in servers[0].notes)
    other = tmp_path / "other.yaml"
    other.write_text(ISVC.format(fmt="sklearn", runtime="site-runtime"))
    assert scan([str(other)]).servers == []  # another model format: not a vLLM server


def test_a_serving_runtime_in_an_openshift_template_is_the_runtime_an_inference_service_names(tmp_path: Path):
    (tmp_path / "isvc.yaml").write_text(ISVC.format(fmt="vLLM", runtime="site-runtime"))
    (tmp_path / "template.yaml").write_text(TEMPLATE)
    servers = scan([str(tmp_path)]).servers
    assert len(servers) == 1
    server = servers[0]
    assert server.name == "llama" and server.image == "vllm/vllm-openai:v0.10.0"
    assert server.model == "/mnt/models" and server.args.get("tensor_parallel_size") == 2 and server.gpu.count == 2
    assert str(server.vllm_version) == "0.10.0"
    assert not any("not among the scanned files" in n for n in server.notes)


RELEASE = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: stack\nspec:\n"
           "  chart:\n    spec:\n      chart: vllm-stack\n      sourceRef: {kind: HelmRepository, name: vllm}\n"
           "  valuesFrom:\n    - kind: Secret\n      name: hf\n      valuesKey: token\n"
           "      targetPath: servingEngineSpec.modelSpec[1].hf_token\n"
           "  values:\n    servingEngineSpec:\n      modelSpec:\n"
           "        - name: small\n          repository: vllm/vllm-openai\n          tag: v0.8.0\n"
           "          modelURL: Qwen/Qwen2.5-7B-Instruct\n          requestGPU: 2\n"
           "          vllmConfig:\n            tensorParallelSize: 2\n            maxModelLen: 8192\n"
           "        - name: other\n          repository: vllm/vllm-openai\n          tag: v0.8.0\n"
           "          modelURL: Qwen/Qwen2.5-1.5B-Instruct\n          requestGPU: 1\n")


def test_a_flux_helm_release_of_a_known_chart_is_read_as_its_values(tmp_path: Path):
    f = tmp_path / "helmrelease.yaml"
    f.write_text(RELEASE)
    servers = sorted(scan([str(f)]).servers, key=lambda s: s.name)
    assert [s.name for s in servers] == ["other", "small"]
    other, small = servers
    assert small.model == "Qwen/Qwen2.5-7B-Instruct" and small.args.get("tensor_parallel_size") == 2
    assert small.gpu.count == 2 and str(small.vllm_version) == "0.8.0"
    assert small.location.line == 18 and small.location.yaml_path == "spec.values.servingEngineSpec.modelSpec[0]"
    # the chart key that renders --gpu-memory-utilization sits under this entry's vllmConfig, in spec.values
    assert small.values_keys["gpu_memory_utilization"][0] == "spec.values.servingEngineSpec.modelSpec[0].vllmConfig"
    # the valuesFrom entry targets the second model entry only
    assert any("modelSpec[1].hf_token from Secret hf" in n for n in other.notes)
    assert not any("valuesFrom" in n for n in small.notes)


def test_a_helm_release_of_a_chart_vramlint_does_not_know_gives_no_server(tmp_path: Path):
    f = tmp_path / "helmrelease.yaml"
    f.write_text("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\nspec:\n"
                 "  chartRef: {kind: OCIRepository, name: some-chart}\n  values:\n    replicas: 2\n"
                 "    image: {repository: nginx, tag: '1.27'}\n")
    result = scan([str(f)])
    assert result.servers == [] and [p for p in result.problems if p.level == "error"] == []


def test_a_production_stack_model_entry_with_its_own_resources_requests_those_gpus(tmp_path: Path):
    f = tmp_path / "values.yaml"
    f.write_text("servingEngineSpec:\n  modelSpec:\n    - name: m\n      repository: vllm/vllm-openai\n"
                 "      tag: v0.10.0\n      modelURL: Qwen/Qwen2.5-7B-Instruct\n      requestGPU: 4\n"
                 "      resources:\n        limits:\n          nvidia.com/gpu: '2'\n")
    servers = scan([str(f)]).servers
    assert len(servers) == 1 and servers[0].gpu.count == 2  # the chart ignores requestGPU then


APP_TEMPLATE = ("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: llm\nspec:\n"
                "  chartRef: {{kind: OCIRepository, name: {chart}}}\n  values:\n    defaultPodOptions:\n"
                "      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-L4\n    controllers:\n"
                "      chat:\n        containers:\n          app:\n"
                "            image: {{repository: ghcr.io/ggml-org/llama.cpp, tag: server}}\n"
                "            args: [-hf, unsloth/some-model-GGUF]\n"
                "      vllm:\n        replicas: 2\n        containers:\n          app:\n"
                "            image:\n              repository: vllm/vllm-openai\n              tag: v0.10.0\n"
                "            args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '8192']\n"
                "            env:\n              HF_HOME: /cache\n"
                "            resources:\n              limits:\n                nvidia.com/gpu: 1\n")


def test_an_app_template_release_is_read_as_the_pods_its_controllers_make(tmp_path: Path):
    f = tmp_path / "helmrelease.yaml"
    f.write_text(APP_TEMPLATE.format(chart="app-template"))
    servers = scan([str(f)]).servers
    assert len(servers) == 1  # the llama.cpp controller runs no vLLM
    server = servers[0]
    assert server.name == "llm-vllm" and server.container == "app" and server.replicas == 2
    assert server.image == "vllm/vllm-openai:v0.10.0" and str(server.vllm_version) == "0.10.0"
    assert server.model == "Qwen/Qwen2.5-7B-Instruct" and server.args.get("max_model_len") == 8192
    assert server.gpu.count == 1 and server.gpu.type == "L4"  # defaultPodOptions' node selector
    assert server.env.get("HF_HOME") == "/cache" and server.location.line == 21


def test_controllers_of_another_chart_are_not_read_as_app_template(tmp_path: Path):
    f = tmp_path / "helmrelease.yaml"
    f.write_text(APP_TEMPLATE.format(chart="my-own-chart"))
    assert scan([str(f)]).servers == []


def test_a_helm_release_of_an_unknown_chart_naming_vllm_says_why_it_is_not_read(tmp_path: Path):
    f = tmp_path / "helmrelease.yaml"
    f.write_text("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: llm\nspec:\n"
                 "  chartRef: {kind: OCIRepository, name: my-chart}\n  values:\n"
                 "    server:\n      image: vllm/vllm-openai:v0.10.0\n")
    result = scan([str(f)])
    assert result.servers == []
    said = [p for p in result.problems if p.line == 9]
    assert len(said) == 1 and said[0].level == "note"
    assert "Flux HelmRelease whose spec.values are not those of a chart vramlint knows" in said[0].message
