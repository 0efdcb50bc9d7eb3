"""Templates found without their chart: control blocks read as one rendering, llmaz BackendRuntime and kthena
ModelBooster objects, templated values unknown (never a template's default)."""

from pathlib import Path

from vramlint.helm.templated import resolve_blocks, template_default
from vramlint.scan import scan

FIX = Path(__file__).parent / "fixtures" / "templates_nochart"


def _one(name):
    inv = scan([str(FIX / name)])
    return inv, inv.servers


def test_blocks_keep_lines_and_read_alternatives_as_one_entry():
    text = ("args:\n{{- if .a }}\n- \"--enable-x\"\n{{- else }}\n- \"--no-enable-x\"\n{{- end }}\n"
            "{{- if .b }}\n- \"--switch\"\n{{- end }}\n{{- range .extra }}\n- {{ . | quote }}\n{{- end }}\n"
            "cmd:\n{{- if .c }}\n- \"/opt/bin/vllm\"\n{{- else }}\n- \"vllm\"\n{{- end }}\n")
    out, left_out = resolve_blocks(text)
    lines = out.split("\n")
    assert len(lines) == len(text.split("\n"))
    assert lines[2].startswith("- \u2983") and len(lines[2]) == len('- "--enable-x"')  # value unknown, same width
    assert lines[4] == ""  # the other branch is the same entry
    assert lines[7] == '- "--switch=\u2983\u2984"'  # passed or not: unknown
    assert lines[10] == ""  # how many loop items: unknown, left out and said
    assert left_out == ["`{{ range .extra }}` (line 10)"]
    assert lines[14] == '- "/opt/bin/vllm"'  # the same program either way


def test_template_default_is_read_but_only_as_a_literal():
    lines = ['  uri: {{ .Values.uri | default "hf://org/m" | quote }}', "  n: {{ .Values.n | default .Values.m }}"]
    assert template_default(lines, 1, 8) == "hf://org/m"
    assert template_default(lines, 2, 6) is None


def test_range_over_engines_is_one_server_with_unknown_loop_values():
    inv, [server] = _one("looped-engines.yaml")
    assert server.model is None and server.image is None
    assert server.args["gpu_memory_utilization"] == 0.85
    assert "max_model_len" in server.args and server.args["max_model_len"] is None  # under `if hasKey`
    assert "enable_lora" in server.args and server.args["enable_lora"] is None  # optional switch
    assert "enable_prefix_caching" not in server.args  # --enable/--no-enable alternatives: the word is unknown
    assert server.env["HF_HOME"] is None
    assert server.gpu.count == 1
    assert any("`{{ if .more }}` (line 39)" in n for n in inv.notes)
    assert "\u2983" not in repr(server.to_json())


def test_templated_image_with_vllm_args_and_a_vllm_chart_helper():
    inv, [server] = _one("chart-named-engine.yaml")
    assert server.model is None and server.image is None
    assert server.args["download_dir"] == "/cache"
    assert any('include "vllm.fullname"' in n for n in server.notes)
    assert any("customCommand" in n and "extraArgs" in n for n in inv.notes)
    # the same container in a template that does not say vLLM anywhere is not guessed to be vLLM
    assert scan([str(FIX / "chart-unnamed-engine.yaml")]).servers == []


def test_llmaz_backend_runtime_one_server_per_recommended_config():
    _inv, servers = _one("backend-runtime.yaml")
    by_config = {s.container: s for s in servers}
    assert set(by_config) == {"default", "two-gpus"}
    default, two = by_config["default"], by_config["two-gpus"]
    assert default.model is None and two.model is None  # llmaz fills in {{ .ModelPath }} at run time
    assert default.shm is True and default.gpu is None
    assert two.args["tensor_parallel_size"] == 2 and two.args["max_model_len"] == 16384
    assert two.gpu.count == 2 and two.arg_locations["max_model_len"].line == 33
    assert all("Playground" in " ".join(s.notes) for s in servers)


def test_templated_model_booster_keeps_the_default_model_unknown():
    _inv, [server] = _one("booster-templated.yaml")
    assert server.model is None  # a values file may override the default
    assert any("the template's default is hf://example-org/Small-Chat-3B; pass --values" in n for n in server.notes)
    assert any("default is vLLM" in n for n in server.notes)
    assert server.image is None and server.replicas is None
    assert server.args["max_model_len"] == 8192 and server.args["enforce_eager"] is True
    assert server.args["tensor_parallel_size"] is None
    assert server.gpu.count == 1 and server.shm is True


def test_literal_model_booster_disaggregated_and_other_engines():
    _inv, servers = _one("booster-literal.yaml")
    assert [s.container for s in servers] == ["prefill", "decode"]  # the SGLang backend is not vLLM
    prefill, decode = servers
    assert prefill.model == decode.model == "example-org/Mid-Chat-8B"
    assert prefill.args == {"gpu_memory_utilization": 0.8, "max_model_len": 4096}  # max_model_len: dashes
    assert prefill.vllm_version == "0.10.1"
    assert (prefill.replicas, decode.replicas) == (2, 6)  # minReplicas x worker replicas


def test_keys_in_both_branches_of_an_if_are_not_duplicates(tmp_path):
    """`{{ if }} affinity: ... {{ else }} affinity: ... {{ end }}`: with the actions replaced both keys stand side
    by side; the file is still read as a template, and no duplicate-key warning is made of it."""
    from vramlint.scan import scan

    path = tmp_path / "deployment.yaml"
    path.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      {{- if .Values.affinity }}
      affinity: {{ toYaml .Values.affinity | nindent 8 }}
      {{- else }}
      affinity: {}
      {{- end }}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.2
          args: ["--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "{{ .Values.maxModelLen }}"]
          resources: {limits: {nvidia.com/gpu: 1}}
""")
    inventory = scan([str(path)])
    assert [s.model for s in inventory.servers] == ["Qwen/Qwen2.5-1.5B-Instruct"]
    assert not any("duplicate key" in p.message for p in inventory.problems)
