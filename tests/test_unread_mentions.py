"""A file that plainly mentions vLLM but yields no server says so, on the line that mentions it, with the
reason no server was read; prose that only names vLLM stays silent."""

from pathlib import Path

from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "mentions"


def _note(name):
    inv = scan([str(FIX / name)])
    assert inv.servers == []
    notes = [p for p in inv.problems if p.level == "note"]
    assert len(notes) <= 1
    return notes[0] if notes else None


def test_unknown_operator_kind_names_the_kind_and_the_line():
    note = _note("unknown-operator.yaml")
    assert note.line == 8 and "engine: vllm" in note.message
    assert "LLMDeployment (serving.example.dev/v1) is not a kind vramlint reads" in note.message


def test_values_of_an_unknown_chart():
    note = _note("values.yaml")
    assert note.line == 5 and "vllm/vllm-openai" in note.message and "lint the chart itself" in note.message


def test_ci_workflow_step():
    # GitLab CI's `script:` lines are not read as deployments (GitHub Actions' `run:` steps are)
    note = _note("gitlab-ci.yml")
    assert note.line == 7 and "CI workflow" in note.message  # not `pip install vllm` on line 6


def test_github_actions_run_step_is_a_server():
    [server] = scan([str(FIX / "workflow.yml")]).servers
    assert server.source_format == "github-actions" and server.model == "facebook/opt-125m"
    assert server.location.line == 8 and server.args["max_model_len"] == 512


def test_kustomization_image_override():
    # the kustomization is built (vramlint.kustomize): the vLLM image it sets goes to the objects of its
    # resources, and the one it lists is not in the repository, which is what the note says
    note = _note("kustomization.yaml")
    assert note.line == 4 and "deployment.yaml is not in the repository" in note.message
    assert "kustomize build" in note.message


def test_prose_mentions_are_not_servers():
    assert _note("prose.yaml") is None


def test_template_that_renders_to_nothing_readable(tmp_path):
    (tmp_path / "values.yaml").write_text(
        "server:\n  image: \"vllm/vllm-openai:{{ .Values.tag }}\"\n  {{- if .Values.gpu }}\n  gpus: 1\n  {{- end }}\n")
    inv = scan([str(tmp_path)])
    notes = [p for p in inv.problems if "template" in p.message]
    assert inv.servers == [] and len(notes) == 1 and notes[0].line == 2


def test_a_file_with_a_server_gets_no_such_note():
    inv = scan([str(Path(__file__).parent / "fixtures" / "operators" / "vllmruntime.yaml")])
    assert len(inv.servers) == 1 and not [p for p in inv.problems if "is not a kind vramlint reads" in p.message]


def test_known_chart_values_with_every_model_disabled(tmp_path):
    (tmp_path / "values.yaml").write_text(
        "servingEngineSpec:\n  modelSpec:\n  - name: opt125m\n    repository: vllm/vllm-openai\n    tag: latest\n"
        "    modelURL: facebook/opt-125m\n    enabled: false\n    requestGPU: 1\n")
    inv = scan([str(tmp_path)])
    [note] = [p for p in inv.problems if p.level == "note"]
    assert inv.servers == [] and note.line == 4 and "a chart vramlint knows" in note.message


def test_compose_service_built_from_a_vllm_dockerfile_is_said(tmp_path):
    (tmp_path / "compose.yaml").write_text(
        "services:\n  llm:\n    build:\n      context: ./services/llm\n      args:\n        BASE: vllm/vllm-openai\n"
        "    command: >\n      ${MODEL_SPEC}\n")
    inv = scan([str(tmp_path)])
    [note] = [p for p in inv.problems if p.level == "note" and "ENTRYPOINT" in p.message]
    assert inv.servers == [] and note.line == 2 and "./services/llm/Dockerfile" in note.message


def test_vllm_image_with_an_unknown_model_word_is_still_a_server(tmp_path):
    # compose `command` is the image's `vllm serve` arguments: an unknown first word is the (unknown) model
    (tmp_path / "compose.yaml").write_text(
        "services:\n  llm:\n    image: vllm/vllm-openai:v0.10.2\n    command:\n      - ${MODEL_PATH}\n"
        "      - --max-model-len\n      - \"32768\"\n")
    [s] = scan([str(tmp_path)]).servers
    assert s.model is None and s.args["max_model_len"] == 32768


def test_engine_type_written_as_a_block(tmp_path):
    (tmp_path / "md.yaml").write_text(
        "apiVersion: runway.example.io/v1alpha1\nkind: ModelDeployment\nmetadata:\n  name: m\nspec:\n"
        "  model:\n    id: org/model\n    type: vllm-unrelated\n  engine:\n    # the engine\n    type: vllm\n")
    inv = scan([str(tmp_path)])
    [note] = [p for p in inv.problems if p.level == "note"]
    assert note.line == 11 and "ModelDeployment (runway.example.io/v1alpha1)" in note.message


def test_kustomize_helm_charts_naming_a_vllm_chart(tmp_path):
    # Kustomize's helmCharts inflates a chart at build time: from `repo` (not in the repository) or from its
    # chartHome folder; the server it deploys is not in the files, so the note says where it comes from
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: inference\n"
        "resources:\n  - namespace.yaml\nhelmCharts:\n  - name: ingress-nginx\n    repo: https://example.test/charts\n"
        "  - name: acme-vllm-serving   # the model server\n    releaseName: chat\n    version: 1.2.3\n"
        "    repo: https://charts.example.test/\n    valuesFile: values-chat.yaml\n")
    inv = scan([str(tmp_path / "kustomization.yaml")])
    [note] = [p for p in inv.problems if p.level == "note"]
    assert note.line == 9 and "Kustomize renders that chart" in note.message
    assert "https://charts.example.test/ version 1.2.3, not in the repository" in note.message
    assert "with values-chat.yaml" in note.message and "kustomize build --enable-helm" in note.message
    local = tmp_path / "local"
    local.mkdir()
    (local / "kustomization.yaml").write_text(
        "kind: Kustomization\nhelmCharts:\n- name: vllm\n  valuesInline:\n    replicaCount: 1\n")
    [note] = [p for p in scan([str(local / "kustomization.yaml")]).problems if p.level == "note"]
    assert note.line == 3 and "from its chartHome folder" in note.message


def test_a_chart_named_vllm_outside_helm_charts_is_not_a_mention(tmp_path):
    (tmp_path / "list.yaml").write_text("kind: Kustomization\ncomponents:\n  - name: vllm-notes\n")
    assert [p for p in scan([str(tmp_path / "list.yaml")]).problems if p.level == "note"] == []


def test_a_ray_serve_application_whose_code_starts_vllm_without_a_model_vramlint_reads(tmp_path):
    serve_config = (
        "  serveConfigV2: |\n    applications:\n    - name: llm\n      route_prefix: /\n"
        "      import_path: apps.vllm_app:deployment\n      args:\n        model: /data/model\n")
    (tmp_path / "rayservice.yaml").write_text(
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata:\n  name: chat\nspec:\n" + serve_config)
    [note] = [p for p in scan([str(tmp_path / "rayservice.yaml")]).problems if p.level == "note"]
    assert note.line == 10 and "Ray Serve application naming vLLM" in note.message
    assert "engine arguments are not visible" in note.message and "not a kind" not in note.message
    # an operator kind that embeds the same application says its kind too
    (tmp_path / "workload.yaml").write_text(
        "apiVersion: serving.example.dev/v1\nkind: GpuService\nmetadata:\n  name: chat\nspec:\n  ray: true\n"
        + serve_config)
    [note] = [p for p in scan([str(tmp_path / "workload.yaml")]).problems if p.level == "note"]
    assert note.line == 11 and "of GpuService (serving.example.dev/v1)" in note.message
    # the model named in runtime_env.env_vars: a server is read, nothing to say
    (tmp_path / "with-model.yaml").write_text(
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata:\n  name: chat\nspec:\n" + serve_config
        + "      runtime_env:\n        env_vars:\n          MODEL_ID: Qwen/Qwen2.5-7B-Instruct\n")
    inv = scan([str(tmp_path / "with-model.yaml")])
    assert [s.model for s in inv.servers] == ["Qwen/Qwen2.5-7B-Instruct"]
    assert not [p for p in inv.problems if "Ray Serve application naming vLLM" in p.message]


def test_a_whole_vllm_image_reference_under_a_key_of_the_charts_own(tmp_path):
    # a subchart's values that name the image under a key of their own (`service.image.version`)
    values = ("serving:\n  service:\n    image:\n      version: \"vllm/vllm-openai:v0.19.0\"  # pinned\n"
              "      pullPolicy: IfNotPresent\n  llm:\n    hfModelName: Qwen/Qwen2.5-1.5B-Instruct\n")
    (tmp_path / "values.yaml").write_text(values)
    [note] = [p for p in scan([str(tmp_path / "values.yaml")]).problems if p.level == "note"]
    assert note.line == 4 and "version: \"vllm/vllm-openai:v0.19.0\"" in note.message
    assert "lint the chart itself" in note.message
    # a digest is a whole reference too; a bare name, a URL, a stand-in image or a non-vLLM image are not
    (tmp_path / "values.yaml").write_text("app:\n  runtime: registry.example.test:5000/ml/vllm-rocm@sha256:"
                                          + "ab" * 32 + "\n")
    [note] = [p for p in scan([str(tmp_path / "values.yaml")]).problems if p.level == "note"]
    assert note.line == 2
    for value in ("vllm", "vllm-openai", "https://docs.vllm.ai/en/latest", "org/mock-vllm:v1", "nginx:1.27",
                  "vllm/vllm-openai"):
        (tmp_path / "values.yaml").write_text(f"app:\n  ref: {value}\n  replicas: 1\n")
        assert [p for p in scan([str(tmp_path / "values.yaml")]).problems if p.level == "note"] == [], value


def test_values_of_a_chart_whose_workload_is_a_dependency_not_in_the_files(tmp_path):
    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: inference\nversion: 0.2.0\ndependencies:\n  - name: llm-serving\n"
        "    version: \"0.1.3\"\n    repository: https://charts.example.test\n  - name: common\n"
        "    version: 2.x.x\n    repository: oci://registry.example.test/charts\n")
    (chart / "values.yaml").write_text("llm-serving:\n  service:\n    image:\n"
                                       "      version: vllm/vllm-openai:v0.19.0\n")
    (chart / "charts" / "common").mkdir(parents=True)
    (chart / "charts" / "common" / "Chart.yaml").write_text("apiVersion: v2\nname: common\nversion: 2.0.0\n")
    [note] = [p for p in scan([str(chart)]).problems if p.level == "note"]
    assert note.line == 4 and note.file.endswith("values.yaml")
    # the one dependency not unpacked under charts/ is named, as Helm would fetch it
    assert "its dependency llm-serving 0.1.3 from https://charts.example.test," in note.message
    assert "common" not in note.message and "helm dependency build" in note.message
    (chart / "charts" / "llm-serving-0.1.3.tgz").write_bytes(b"\x1f\x8b")
    [note] = [p for p in scan([str(chart)]).problems if p.level == "note"]
    assert "llm-serving (packaged as charts/llm-serving-0.1.3.tgz, which vramlint does not unpack)" in note.message


_KUBEAI_SETTINGS = (
    "secrets:\n  huggingface:\n    create: true\nmodelServers:\n  VLLM:\n    images:\n"
    "      default: \"vllm/vllm-openai:v0.8.3\"\n      cpu: \"substratusai/vllm:v0.6.3.post1-cpu\"\n"
    "  OLlama:\n    images:\n      default: \"ollama/ollama:latest\"\nresourceProfiles:\n  nvidia-gpu-l4:\n"
    "    limits:\n      nvidia.com/gpu: \"1\"\nimage:\n  repository: substratusai/kubeai\nreplicaCount: 1\n")


def test_an_operators_own_settings_pin_images_for_its_resources_and_are_no_orphan_mention(tmp_path):
    # KubeAI's chart values: the images KubeAI runs its Models with (read with the Models), no server of their own
    (tmp_path / "values.yaml").write_text(_KUBEAI_SETTINGS)
    inv = scan([str(tmp_path / "values.yaml")])
    assert inv.servers == [] and inv.problems == []
    # the first chart versions: `gpuImage` / `cpuImage`
    (tmp_path / "values.yaml").write_text(_KUBEAI_SETTINGS.replace(
        "    images:\n      default: \"vllm/vllm-openai:v0.8.3\"\n      cpu:", "    gpuImage: \"vllm/vllm-openai:v0.5.5\"\n"
        "    cpuImage:"))
    assert scan([str(tmp_path / "values.yaml")]).problems == []
    # the same keys under a chart of another name, or beside keys KubeAI's values never had, are not KubeAI's
    (tmp_path / "values.yaml").write_text(_KUBEAI_SETTINGS + "inferenceServer:\n  enabled: true\n")
    [note] = [p for p in scan([str(tmp_path / "values.yaml")]).problems if p.level == "note"]
    assert note.line == 7 and "no container running it" in note.message
    chart = tmp_path / "chart"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: platform\nversion: 1.0.0\n")
    (chart / "values.yaml").write_text(_KUBEAI_SETTINGS)
    [note] = [p for p in scan([str(chart / "values.yaml")]).problems if p.level == "note"]
    assert note.line == 7
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: kubeai\nversion: 0.21.0\n")
    assert scan([str(chart / "values.yaml")]).problems == []


def test_a_compose_service_whose_image_is_a_variable_the_files_do_not_set(tmp_path):
    # compose fills ${NAME} from the environment or a .env beside the file; a .env made from a template is not
    # committed: the note says the image is unknown, not that the file's shape is one vramlint does not read
    (tmp_path / "docker-compose.yaml").write_text(
        "services:\n  llm-gpu:\n    profiles: [gpu]\n    image: ${VLLM_IMAGE}\n    ipc: host\n"
        "  web:\n    image: nginx:1.27\n", encoding="utf-8")
    (tmp_path / ".env.example").write_text("VLLM_IMAGE=vllm/vllm-openai:v0.11.0\n", encoding="utf-8")
    inv = scan([str(tmp_path / "docker-compose.yaml")])
    assert inv.servers == []
    [note] = [p for p in inv.problems if p.level == "note"]
    assert note.line == 4 and "the variable VLLM_IMAGE" in note.message and ".env" in note.message
    assert "shape is not one vramlint reads" not in note.message


def test_the_values_of_a_chart_in_the_scan_whose_templates_render_no_server_say_the_chart(tmp_path):
    # a chart whose templates run vLLM from its own Ray Serve application: evaluated, it renders no server, and
    # its values.yaml (generic image values) is given back to plain reading; the note names the chart, not "a
    # chart vramlint knows"
    chart = tmp_path / "llm"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: llm\nversion: 0.1.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text(
        "image:\n  repository: registry.example.com/team/vllm-openai\n  tag: v0.8.5-ray\n"
        "engine:\n  config:\n    model: Qwen/Qwen2.5-7B-Instruct\n", encoding="utf-8")
    (chart / "templates" / "rayservice.yaml").write_text(
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
        "  serveConfigV2: |\n    applications:\n      - name: app\n        import_path: serve:model\n"
        "  rayClusterConfig:\n    headGroupSpec:\n      rayStartParams: {}\n      template:\n        spec:\n"
        "          containers:\n          - name: ray-head\n"
        "            image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n", encoding="utf-8")
    inv = scan([str(chart)])
    assert inv.servers == []
    notes = [p for p in inv.problems if p.level == "note" and p.file.endswith("values.yaml")]
    assert len(notes) == 1 and notes[0].line == 2
    assert "the chart in" in notes[0].message and "renders no container" in notes[0].message
    assert "a chart vramlint knows" not in notes[0].message
    # a dependency not in the files is said beside it, not as the place the workload comes from
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: llm\nversion: 0.1.0\ndependencies:\n"
                                      "- name: kuberay-operator\n  version: 1.2.2\n"
                                      "  repository: file://./charts/kuberay-operator\n", encoding="utf-8")
    [note] = [p for p in scan([str(chart)]).problems if p.level == "note" and p.file.endswith("values.yaml")]
    assert "the chart in" in note.message and "kuberay-operator" in note.message
    assert "whose workload comes from" not in note.message
