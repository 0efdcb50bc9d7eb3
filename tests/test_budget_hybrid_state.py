"""KV / state arithmetic of hybrid attention + gated-delta-net (Mamba-style) models in the V1 engine."""

from vramlint import gpus
from vramlint.budget import GiB, compute_budget, mamba_state_bytes
from vramlint.modelconfig import model_info_from_config

# Shaped like a Qwen3.5-27B text config: 64 layers, every fourth full attention (4 KV heads x 256), the rest
# gated delta net (16 key heads x 128, 48 value heads x 128, conv kernel 4), recurrent state in float32.
QWEN35_27B = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5_text", "num_hidden_layers": 64,
    "hidden_size": 5120, "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256,
    "intermediate_size": 17408, "vocab_size": 248320, "max_position_embeddings": 262144, "torch_dtype": "bfloat16",
    "full_attention_interval": 4, "linear_num_key_heads": 16, "linear_key_head_dim": 128,
    "linear_num_value_heads": 48, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
    "attn_output_gate": True, "mamba_ssm_dtype": "float32",
}


def qwen35():
    return model_info_from_config(QWEN35_27B, "Qwen/Qwen3.5-27B", "test config")


def test_state_page_and_block_size_match_a_real_log():
    """A public vLLM start-up log of a Qwen3.5 27B model on an RTX A6000 prints "Setting attention block size to
    1568 tokens to ensure that attention page size is >= mamba page size." and "Padding mamba page size by 0.13%
    ...". The arithmetic gives exactly that with an fp8 KV cache (2048 B per token per attention layer) and the
    float32 recurrent state the config asks for: state page 3 x 10240 x 2 B + 48 x 128 x 128 x 4 B = 3,207,168 B;
    16 x cdiv(3207168, 16 x 2048) = 1568 tokens; 1568 x 2048 = 3,211,264 B, 0.13% more than the state."""
    m = qwen35()
    assert mamba_state_bytes(m, 1, 2, 4) == (3207168, "gated delta net state")
    b = compute_budget(m, gpus.lookup("RTX A6000"), {"kv_cache_dtype": "fp8", "max_model_len": 32768}, {}, "0.19.0", 1)
    assert b.block_size == 1568
    assert "Setting attention block size to 1568 tokens to ensure that attention page size is >= mamba page size." in b.notes
    assert any(n.startswith("Padding mamba page size by 0.13%") for n in b.notes)


def test_blocks_and_concurrency_count_one_state_page_per_request():
    m = qwen35()
    kv = 20 * GiB
    b = compute_budget(m, gpus.lookup("H100"), {"kv_cache_memory_bytes": kv, "max_model_len": 32768}, {}, "0.19.0", 1)
    # bf16 KV: 4 x 256 x 2 x 2 B = 4096 B per token per attention layer; the float32 state page needs
    # cdiv(3207168, 16 x 4096) x 16 = 784 tokens per block; 16 attention and 48 state layers -> groups of 16:
    # one attention group, three state groups; a pool block is 16 layers x 784 x 4096 B.
    assert b.block_size == 784
    page = 784 * 4096
    assert b.num_gpu_blocks == kv // (16 * page)
    per_request = -(-32768 // 784) + 3  # attention blocks for the length + one state page per state group
    assert b.max_concurrency == round(b.num_gpu_blocks / per_request, 2)
    # the state does not grow with the length: doubling max_model_len less than halves concurrency
    longer = compute_budget(m, gpus.lookup("H100"), {"kv_cache_memory_bytes": kv, "max_model_len": 65536}, {}, "0.19.0", 1)
    assert longer.max_concurrency > b.max_concurrency / 2


def test_state_dtype_follows_the_version_and_flags():
    m = qwen35()
    h100 = gpus.lookup("H100")
    # before 0.17 the gated delta net state used the conv dtype (bf16): a smaller state page, smaller blocks
    old = compute_budget(m, h100, {"max_model_len": 32768}, {}, "0.14.1", 1)
    assert old.block_size == 16 * -(-(3 * 10240 * 2 + 48 * 128 * 128 * 2) // (16 * 4096))
    forced = compute_budget(m, h100, {"max_model_len": 32768, "mamba_ssm_cache_dtype": "bfloat16"}, {}, "0.19.0", 1)
    assert forced.block_size == old.block_size
    # TP 4 splits the state heads and the KV heads alike
    tp4 = compute_budget(m, h100, {"max_model_len": 32768, "tensor_parallel_size": 4}, {}, "0.19.0", 4)
    assert tp4.block_size == 784


def test_reported_kv_tokens_follow_the_version():
    """vLLM up to 0.20 logs `GPU KV cache size` as num_blocks // groups x block_size; from 0.21 it logs the
    group-aware capacity, int(max_concurrency x max_model_len). For a hybrid model the two differ."""
    m = qwen35()
    kv = {"kv_cache_memory_bytes": 20 * GiB, "max_model_len": 32768}
    for version in ("0.19.0", "0.20.0"):
        b = compute_budget(m, gpus.lookup("H100"), kv, {}, version, 1)
        assert b.kv_tokens == (b.num_gpu_blocks // 4) * b.block_size  # one attention and three state groups
    for version in ("0.21.0", "0.26.0", "0.33.0"):
        b = compute_budget(m, gpus.lookup("H100"), kv, {}, version, 1)
        per_request = -(-32768 // b.block_size) + 3
        assert b.kv_tokens == int(b.num_gpu_blocks / per_request * 32768)
