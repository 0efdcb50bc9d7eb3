"""VRL006 tensor-parallel-mismatch, through scan -> assess -> rules."""

from __future__ import annotations

from rules_harness import line_of


def test_tp_larger_than_the_gpus_requested(lint):
    [finding] = lint("vrl006/fail_too_few_gpus.yaml", rule="VRL006").of("VRL006")
    assert finding.level == "error"
    assert finding.location.line == line_of("vrl006/fail_too_few_gpus.yaml", "--tensor-parallel-size")
    assert "needs 4 GPUs" in finding.message and "requests 2" in finding.message
    assert f"line {line_of('vrl006/fail_too_few_gpus.yaml', 'nvidia.com/gpu: 2')}" in finding.message


def test_tp_not_dividing_heads_when_the_gpu_is_unknown(lint):
    result = lint("vrl006/fail_heads_no_gpu_type.yaml", rule="VRL006")
    assert result.budget is None  # no GPU: the budget engine cannot say it, so this rule does
    [finding] = result.of("VRL006")
    assert finding.location.line == line_of("vrl006/fail_heads_no_gpu_type.yaml", "--tensor-parallel-size")
    assert "32 attention heads" in finding.message and "tensor-parallel-size 3" in finding.message


def test_not_repeated_when_the_budget_already_says_it(lint):
    result = lint("vrl006/fail_heads_no_gpu_type.yaml", gpu="H100")
    assert any(e["code"] == "tp-heads" for e in result.budget.errors)
    assert [f.rule_id for f in result.findings if "attention heads" in f.message] == ["VRL005"]


def test_idle_gpus_are_a_warning(lint):
    [finding] = lint("vrl006/warn_idle.yaml", rule="VRL006").of("VRL006")
    assert finding.level == "warning"
    assert finding.location.line == line_of("vrl006/warn_idle.yaml", "nvidia.com/gpu: 4")
    assert "3 GPU(s) sit idle" in finding.message
    assert lint("vrl006/warn_idle.yaml", rule="VRL006", options={"report_idle_gpus": False}).of("VRL006") == []


def test_quiet_when_tp_matches(lint):
    assert lint("vrl006/pass.yaml", rule="VRL006").of("VRL006") == []


def test_one_pipeline_stage_per_pod_is_taken_as_multi_node(lint):
    result = lint("vrl006/pass_one_stage_per_pod.yaml", rule="VRL006")
    assert result.inventory.servers[0].args["pipeline_parallel_size"] == 2
    assert result.of("VRL006") == []


def test_compose_device_ids_from_an_unset_variable_are_not_one_gpu(lint, tmp_path):
    # shaped after NapthaAI/node compose files: `device_ids: ["${GPU_ID_...:?error}"]` set where compose runs
    path = tmp_path / "docker-compose.yml"
    path.write_text("""\
services:
  qwq:
    image: vllm/vllm-openai:v0.8.5
    entrypoint: ["vllm", "serve", "Qwen/QwQ-32B-Preview", "--tensor-parallel-size", "2"]
    ipc: host
    deploy:
      resources:
        reservations:
          devices:
            - driver: "nvidia"
              capabilities: ["gpu"]
              device_ids: ["${GPU_ID_qwq:?error}"]
""")
    result = lint(str(path), rule="VRL006")
    assert result.inventory.servers[0].gpu.count is None
    assert result.of("VRL006") == []
    # the same with the devices written out: one device, TP 2 fails
    path.write_text(path.read_text().replace('"${GPU_ID_qwq:?error}"', '"0"'))
    [finding] = lint(str(path), rule="VRL006").of("VRL006")
    assert finding.level == "error"
    # a comma-separated entry names two devices
    path.write_text(path.read_text().replace('device_ids: ["0"]', 'device_ids: ["0,1"]'))
    result = lint(str(path), rule="VRL006")
    assert result.inventory.servers[0].gpu.count == 2 and result.of("VRL006") == []


def test_neuron_devices_hold_several_cores(lint, tmp_path):
    # shaped after aws-samples/gen-ai-on-eks vllm-deployment-neuron.yaml: TP 2 on one Inferentia2 device (2 cores)
    path = tmp_path / "neuron.yaml"
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm-neuron}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
        - name: vllm
          image: public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1
          command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--device", "neuron", "--tensor-parallel-size", "2"]
          env:
            - {name: NEURON_RT_NUM_CORES, value: "2"}
          resources:
            limits: {aws.amazon.com/neuron: 1}
"""
    path.write_text(text)
    assert lint(str(path), rule="VRL006").of("VRL006") == []
    # counted in cores, the comparison holds
    path.write_text(text.replace("aws.amazon.com/neuron: 1", "aws.amazon.com/neuroncore: 1"))
    [finding] = lint(str(path), rule="VRL006").of("VRL006")
    assert finding.level == "error"


def test_neuron_counts_cores_not_devices(lint, tmp_path):
    """vLLM on Neuron counts NeuronCores: TP 2 on one aws.amazon.com/neuron device (2 cores on trn1/inf2) starts;
    a neuroncore request is compared core for core."""
    def manifest(resource: str, count: int, tp: int) -> str:
        path = tmp_path / f"{resource.split('/')[-1]}-{count}-{tp}.yaml"
        path.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: neuron}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: vllm\n        image: public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1\n"
            "        command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --device, neuron,"
            f" --tensor-parallel-size, '{tp}']\n"
            f"        resources: {{limits: {{{resource}: {count}}}}}\n")
        return str(path)

    assert lint(manifest("aws.amazon.com/neuron", 1, 2), rule="VRL006").of("VRL006") == []
    [short] = lint(manifest("aws.amazon.com/neuroncore", 1, 2), rule="VRL006").of("VRL006")
    assert "NeuronCores" in short.message and short.level == "error"
    [far] = lint(manifest("aws.amazon.com/neuron", 1, 32), rule="VRL006").of("VRL006")
    assert "at most 8 per Neuron device" in far.message


def _tpu_manifest(tmp_path, accelerator: str, chips: int, tp: int, dp: int = 1) -> str:
    path = tmp_path / f"{accelerator}-{chips}-{tp}-{dp}.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm-tpu}\nspec:\n  template:\n    spec:\n"
        f"      nodeSelector: {{cloud.google.com/gke-tpu-accelerator: {accelerator}}}\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-tpu:v0.11.1\n"
        "        command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct,"
        f" --tensor-parallel-size, '{tp}', --data-parallel-size, '{dp}']\n"
        f"        resources: {{limits: {{google.com/tpu: '{chips}'}}}}\n")
    return str(path)


def test_tpu7x_chips_hold_two_devices(lint, tmp_path):
    """vLLM counts JAX devices; a TPU7x chip is two of them (two TensorCores, no megacore), so TP 8 (or DP 4 x TP 2)
    on 4 chips starts, and only more than twice the chips is short."""
    assert lint(_tpu_manifest(tmp_path, "tpu7x", 4, 8), rule="VRL006").of("VRL006") == []
    assert lint(_tpu_manifest(tmp_path, "tpu7x", 4, 2, dp=4), rule="VRL006").of("VRL006") == []
    [short] = lint(_tpu_manifest(tmp_path, "tpu7x", 4, 16), rule="VRL006").of("VRL006")
    assert short.level == "error" and "needs 16 TPU devices" in short.message and "requests 8" in short.message


def test_one_device_tpu_chips_are_counted_chip_for_chip(lint, tmp_path):
    # v6e and v5e have one TensorCore per chip; v5p joins its two as one megacore device
    [short] = lint(_tpu_manifest(tmp_path, "tpu-v6e-slice", 4, 8), rule="VRL006").of("VRL006")
    assert short.level == "error" and "needs 8 TPU chips" in short.message and "requests 4 TPU chips" in short.message
    assert lint(_tpu_manifest(tmp_path, "tpu-v5p-slice", 4, 4), rule="VRL006").of("VRL006") == []
    [short] = lint(_tpu_manifest(tmp_path, "tpu-v5p-slice", 4, 8), rule="VRL006").of("VRL006")
    assert short.level == "error"
