"""The V2 GPU model runner of vLLM 0.22 - 0.28 (``VllmConfig.use_v2_model_runner``): which deployments run it, and
that its KV cache is sized without a CUDA graph estimate (``profile_cudagraph_memory`` returns 0 there; the graphs
are captured afterwards from what the KV cache left). Shaped after the 0.26 / 0.27 logs whose breakdown shows it
(P61, P66, P131, P132 of benchmarks/startup_logs_public.md: the requested memory less weights, non-torch memory and
the activation peak is the KV cache to 0.01 GiB, the captured graphs' 0.37 - 0.48 GiB not taken)."""

from vramlint import gpus, versions
from vramlint.budget import GiB, compute_budget
from vramlint.model import ModelInfo

# A small dense decoder (Qwen2ForCausalLM shapes, not a catalog checkpoint) and an MoE of the same width.
DENSE = dict(name="test/dense-0.5b", source="test facts", architecture="Qwen2ForCausalLM", num_layers=24,
             hidden_size=896, num_attention_heads=14, num_kv_heads=2, head_dim=64, vocab_size=151936,
             intermediate_size=4864, max_position_embeddings=32768, torch_dtype="bfloat16",
             weight_bytes=int(0.93 * GiB), weight_bytes_source="safetensors metadata", tie_word_embeddings=True)
MOE = dict(DENSE, name="test/moe", architecture="Qwen3MoeForCausalLM", num_experts=8, num_experts_per_tok=2)


def _beh(version, model, args=None, env=None):
    return versions.behavior(version, gpus.lookup("RTX-4090"), args or {}, env or {}, ModelInfo(**model), 32768)


def test_which_deployments_run_the_v2_runner():
    """0.25 - 0.28: any generate model that is not MoE (or whose architecture is listed); 0.24 only the listed
    ones (Qwen3, Llama, Mistral, ...); 0.22 - 0.23 listed, dense and unquantized; the environment variable decides
    when set; ngram speculative decoding is not supported by it; releases outside 0.22 - 0.28 are not decided."""
    assert _beh("0.26.0", DENSE).v2_model_runner
    assert _beh("0.28.0", DENSE).v2_model_runner
    assert not _beh("0.26.0", MOE).v2_model_runner
    assert not _beh("0.24.0", DENSE).v2_model_runner  # Qwen2ForCausalLM is not in 0.24's list
    assert _beh("0.24.0", dict(DENSE, architecture="LlamaForCausalLM")).v2_model_runner
    assert _beh("0.22.0", dict(DENSE, architecture="Qwen3ForCausalLM")).v2_model_runner
    assert not _beh("0.22.0", dict(DENSE, architecture="Qwen3ForCausalLM", quantization="awq")).v2_model_runner
    assert _beh("0.26.0", dict(DENSE, quantization="awq")).v2_model_runner
    assert not _beh("0.26.0", DENSE, env={"VLLM_USE_V2_MODEL_RUNNER": "0"}).v2_model_runner
    assert _beh("0.26.0", MOE, env={"VLLM_USE_V2_MODEL_RUNNER": "1"}).v2_model_runner
    ngram = {"speculative_config": {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}}
    assert not _beh("0.27.1", DENSE, args=ngram).v2_model_runner
    assert _beh("0.27.1", DENSE, args={"speculative_config": {"method": "eagle3", "model": "x/y",
                                                               "num_speculative_tokens": 3}}).v2_model_runner
    hybrid = dict(DENSE, layer_types=["linear_attention", "full_attention"] * 12)
    assert not _beh("0.27.1", hybrid).v2_model_runner
    assert not _beh("0.21.0", DENSE).v2_model_runner


def test_no_graph_estimate_is_taken_before_the_kv_cache():
    """The same deployment on the V1 runner subtracts the graph estimate; on the V2 runner the KV cache is larger
    by it (the graphs are then checked against what the KV cache leaves, as for releases before 0.18)."""
    gpu = gpus.lookup("RTX-4090")
    args = {"gpu_memory_utilization": 0.9, "max_model_len": 8192}
    model = ModelInfo(**DENSE)
    v2 = compute_budget(model, gpu, args, {}, "0.27.1", 1)
    v1 = compute_budget(model, gpu, args, {"VLLM_USE_V2_MODEL_RUNNER": "0"}, "0.27.1", 1)
    assert v1.cudagraph_gib > 0.1 and v2.cudagraph_gib == 0
    # the runners' profile samplers differ too (V1's top-k / top-p path, V2's greedy dummy sampling)
    activation_gap = v1.activation_gib - v2.activation_gib
    # and 0.27+ count the V2 runner's penalty bins before the KV cache (total_consumed)
    assert v2.runner_state_gib > 0.1
    assert abs((v2.kv_cache_gib - v1.kv_cache_gib) - v1.cudagraph_gib - activation_gap + v2.runner_state_gib) < 0.02
    assert "V2 model runner" in v2.sources.get("cudagraph_estimate", "")
    # from 0.29 the V2 runner estimates the graphs as V1 does: nothing changes there
    later = compute_budget(model, gpu, args, {}, "0.29.0", 1)
    assert later.cudagraph_gib > 0.1



def test_v2_dummy_sampling_holds_the_logits_only():
    """The V2 runner samples the profile batch greedily (its dummy requests were never added: temperature 0, no
    top-k / top-p): 0.26+ keep only the model-dtype logits (with the rank's partial logits beside the gathered
    ones at TP > 1), 0.22 - 0.25 add an fp32 copy; V1's sampler on the same 1,024 sequences holds several times
    more. Eager, so no compile benchmark hides the sampler."""
    from vramlint.budget.profile import activation_peak_bytes

    model = ModelInfo(**DENSE)
    seqs, tokens, vocab = 1024, 8192, 151936
    v2, how = activation_peak_bytes(model, 1, tokens, seqs, 2, "v2")
    assert "V2 model runner" in how
    assert v2 == seqs * vocab * 2 + tokens * model.hidden_size * 2
    v2_tp2, _ = activation_peak_bytes(model, 2, tokens, seqs, 2, "v2")
    assert v2_tp2 - tokens * model.hidden_size * 2 == seqs * vocab * 3
    fp32, _ = activation_peak_bytes(model, 1, tokens, seqs, 2, "v2-fp32")
    assert fp32 - v2 == seqs * vocab * 4
    v1, _ = activation_peak_bytes(model, 1, tokens, seqs, 2, "flashinfer")
    assert v1 > 3 * v2
    gpu = gpus.lookup("H100-SXM")
    args = {"max_model_len": 8192, "enforce_eager": True}
    for version, path in (("0.24.0", "v2-fp32"), ("0.27.1", "v2")):
        arch = "LlamaForCausalLM" if version == "0.24.0" else "Qwen2ForCausalLM"
        budget = compute_budget(ModelInfo(**dict(DENSE, architecture=arch)), gpu, args, {}, version, 1)
        assert "V2 model runner's greedy dummy sampling" in budget.sources["activation"], version
        assert ("fp32 copy" in budget.sources["activation"]) == (path == "v2-fp32")


def test_from_029_the_v2_runner_is_every_model_s_default():
    """0.29 made the V2 runner the default for every model family (MoE and hybrid too); what still sends a
    deployment to V1 is the release's _get_v2_model_runner_unsupported_features (0.29: any speculative method but
    EAGLE / EAGLE-3 / MTP / DFlash / DSpark; 0.30 - 0.31 ngram and a few others; 0.33 only suffix and custom
    classes), the environment variable, and on ROCm a few DeepSeek architectures (0.29 - 0.31); 0.34 has no V1
    runner at all."""
    ngram = {"speculative_config": {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}}
    hybrid = dict(DENSE, layer_types=["linear_attention", "full_attention"] * 12)
    for version in ("0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0"):
        assert _beh(version, DENSE).v2_model_runner, version
        assert _beh(version, MOE).v2_model_runner, version
        assert _beh(version, hybrid).v2_model_runner, version
    assert not _beh("0.29.0", DENSE, args=ngram).v2_model_runner
    assert not _beh("0.31.0", DENSE, args=ngram).v2_model_runner
    assert _beh("0.32.0", DENSE, args=ngram).v2_model_runner  # 0.32 dropped ngram from the list
    medusa = {"speculative_config": {"method": "medusa", "model": "x/y", "num_speculative_tokens": 3}}
    assert not _beh("0.32.0", DENSE, args=medusa).v2_model_runner and _beh("0.33.0", DENSE, args=medusa).v2_model_runner
    draft = {"speculative_config": {"model": "x/small", "num_speculative_tokens": 3}}
    assert not _beh("0.29.0", DENSE, args=draft).v2_model_runner  # a draft model: not a method 0.29's V2 has
    assert not _beh("0.30.0", DENSE, args=draft).v2_model_runner and _beh("0.31.0", DENSE, args=draft).v2_model_runner
    named_eagle = {"speculative_config": {"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}}
    assert _beh("0.29.0", DENSE, args=named_eagle).v2_model_runner  # the method follows the draft's name
    assert _beh("0.29.0", DENSE, args={"speculative_config": {"method": "deepseek_mtp",
                                                              "num_speculative_tokens": 1}}).v2_model_runner
    stock = {"compilation_config": {"mode": 1}}
    assert not _beh("0.31.0", DENSE, args=stock).v2_model_runner and _beh("0.32.0", DENSE, args=stock).v2_model_runner
    assert not _beh("0.33.0", DENSE, env={"VLLM_USE_V2_MODEL_RUNNER": "0"}).v2_model_runner
    assert _beh("0.34.0", DENSE, args=ngram, env={"VLLM_USE_V2_MODEL_RUNNER": "0"}).v2_model_runner
    deepseek = dict(MOE, architecture="DeepseekV32ForCausalLM")
    mi300 = gpus.lookup("MI300X")
    on_rocm = {v: versions.behavior(v, mi300, {}, {}, ModelInfo(**deepseek), 32768).v2_model_runner
               for v in ("0.29.0", "0.31.0", "0.32.0")}
    assert on_rocm == {"0.29.0": False, "0.31.0": False, "0.32.0": True}
    assert _beh("0.29.0", deepseek).v2_model_runner  # the ROCm exception is not CUDA's


def test_034_refuses_the_removed_v1_runner_variable():
    """vLLM 0.34 removed Model Runner V1: VLLM_USE_V2_MODEL_RUNNER set to anything but "1" is a ValueError at start-up
    (Platform.validate_environ); "1" only warns."""
    refused = _beh("0.34.0", DENSE, env={"VLLM_USE_V2_MODEL_RUNNER": "0"}).errors
    assert [e["code"] for e in refused] == ["v1-model-runner-removed"]
    assert "VLLM_USE_V2_MODEL_RUNNER=0 is no longer supported" in refused[0]["message"]
    assert not _beh("0.34.0", DENSE, env={"VLLM_USE_V2_MODEL_RUNNER": "1"}).errors
    assert not _beh("0.33.0", DENSE, env={"VLLM_USE_V2_MODEL_RUNNER": "0"}).errors
    budget = compute_budget(ModelInfo(**DENSE), gpus.lookup("RTX-4090"), {"max_model_len": 8192},
                            {"VLLM_USE_V2_MODEL_RUNNER": "false"}, "0.34.0", 1)
    assert not budget.starts and budget.errors[0]["code"] == "v1-model-runner-removed"


def test_v2_penalty_bins_are_taken_from_the_kv_cache_from_027():
    """The V2 runner's Sampler allocates its penalty bins (max_num_seqs x vocab int32 and a bit mask) in
    ``load_model`` after the weights are measured; 0.27+ count everything the process holds after profiling
    (``total_consumed``: the 0.27.0 and 0.27.1 wheels' mem_utils.py), so the KV cache is smaller by them; up to 0.26
    the KV cache was sized from the weights, the peak and the non-torch memory and did not. Only the last
    pipeline stage samples, so only its KV budget loses them."""
    gpu = gpus.lookup("H100-SXM")
    model = ModelInfo(**DENSE)
    args = {"max_model_len": 8192, "max_num_seqs": 512, "enforce_eager": True}
    bins = 512 * 151936 * 4 + 512 * (-(-151936 // 32)) * 4
    v2 = compute_budget(model, gpu, args, {}, "0.29.0", 1)
    v1 = compute_budget(model, gpu, args, {"VLLM_USE_V2_MODEL_RUNNER": "0"}, "0.29.0", 1)
    assert "penalty bins: 512 x 151936" in v2.sources["runner_state"]
    assert "runner_state" not in v1.sources
    gap = (v1.kv_cache_gib - v2.kv_cache_gib) + (v1.activation_gib - v2.activation_gib)
    assert abs(gap - bins / GiB) < 0.02
    older = compute_budget(model, gpu, args, {}, "0.26.0", 1)
    assert "not in vLLM's KV sizing before 0.27" in older.sources["runner_state"]
    first = compute_budget(model, gpu, args, {}, "0.27.0", 1)
    assert "0.27+ counts as consumed" in first.sources["runner_state"]
    assert abs(older.kv_cache_gib - (first.kv_cache_gib + bins / GiB)) < 0.02
    staged = compute_budget(model, gpu, dict(args, pipeline_parallel_size=2), {}, "0.29.0", 1)
    assert "the last stage" in staged.sources["runner_state"]


def test_033_samples_the_profile_batch_again_with_every_parameter():
    """0.33+ run the V2 runner's dummy sampler a second time with SamplingParams.for_sampler_warmup (top-k /
    top-p, penalties, logprobs): the fp32 pipeline beside the logits, several times the greedy pass's logits."""
    from vramlint.budget.profile import activation_peak_bytes

    model = ModelInfo(**DENSE)
    greedy, _ = activation_peak_bytes(model, 1, 8192, 1024, 2, "v2")
    warm, how = activation_peak_bytes(model, 1, 8192, 1024, 2, "v2-warmup")
    assert warm - greedy == 1024 * 151936 * 8
    assert "every sampling parameter" in how
    budget = compute_budget(model, gpus.lookup("H100-SXM"), {"max_model_len": 8192, "enforce_eager": True}, {},
                            "0.33.0", 1)
    assert "second dummy sampling" in budget.sources["activation"]
