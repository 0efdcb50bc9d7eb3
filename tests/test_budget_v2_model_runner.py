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
    assert not _beh("0.21.0", DENSE).v2_model_runner and not _beh("0.29.0", DENSE).v2_model_runner


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
    assert abs((v2.kv_cache_gib - v1.kv_cache_gib) - v1.cudagraph_gib - activation_gap) < 0.02
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
