"""vLLM 0.11.0's profiling run for Mistral Small 3.1 in the Mistral format (PixtralForConditionalGeneration), worked
by hand from the 0.11.0 wheel (and 0.11.1 for the sampler).

Sampler: ``TopKTopPSampler.__init__`` (v1/sample/ops/topk_topp_sampler.py) takes FlashInfer's kernel whenever
FlashInfer imports and ``VLLM_USE_FLASHINFER_SAMPLER`` is not set to 0 (``is not False``) in 0.11.0, as in 0.10; the
0.11.1 wheel makes it opt-in (``if envs.VLLM_USE_FLASHINFER_SAMPLER``). FlashInfer is an extra of the 0.11.0 wheel,
shipped in vLLM's image.

Encoder dummy batch on one H100 (max_num_seqs 1024, max_num_batched_tokens 8192, max_model_len 16000): the image is
1540 px (mistral_common's max_image_size), 110 x 110 = 12,100 patches of 14 px, 55 x 55 = 3,025 merged tokens; vLLM
counts the placeholder's contiguous length (``get_mm_max_contiguous_tokens``): 55 rows x (55 + 1 break) = 3,080.
Encoder budget max(8192, 3080) = 8192; items min(8192 // 3080, 1024 x min(999, 16000 // 3080)) = 2.
``profile_run`` pads each output to (8192, 5120): 2 x 8192 x 5120 x 2 B = 167,772,160 B; the loop variable keeps the
last output, a view of the one (6050, 5120) adapter output: 2 x 3025 x 5120 x 2 B = 61,952,000 B; the pixel values
(2 x 3 x 1540 x 1540 in bf16) 28,459,200 B. xformers (a wheel dependency on x86-64 Linux; off from compute
capability 10.0) gives a block-diagonal bias, no dense mask: tower peak 24,200 x (2 x 1024 + 3 x 1024 + 2 x 4096)
x 2 B = 644,300,800 B + outputs + pixel values. The text pass then samples 1024 x 131,072 logits with FlashInfer
(14.5 B each) with the 8192 x 5120 hidden states alive: 1,946,157,056 + 83,886,080 B, plus the 258,183,360 B held:
2.13 GiB, against the 2.12 GiB llm-d's H100 log of this run measured (P114 of benchmarks/startup_logs_public.tsv).
"""

from __future__ import annotations

from vramlint import gpus, versions
from vramlint.budget import compute_budget
from vramlint.budget.multimodal import encoder_profile
from vramlint.model import ResolveOptions
from vramlint.models import resolve_model

V = versions.parse_version
GiB = 2**30
MISTRAL = "mistralai/Mistral-Small-3.1-24B-Instruct-2503"
ARGS = {"max_model_len": 16000, "gpu_memory_utilization": 0.95, "block_size": 128, "enable_prefix_caching": True,
        "tokenizer_mode": "mistral", "config_format": "mistral", "load_format": "mistral"}
IMAGE = "vllm/vllm-openai:v0.11.0"
HELD = 167_772_160 + 61_952_000 + 28_459_200


def _info():
    info, why = resolve_model(MISTRAL, ResolveOptions(allow_network=False))
    assert info is not None, why
    return info


def test_the_0_11_dummy_batch_of_the_pixtral_tower():
    facts = _info().extra["facts"]
    h100 = gpus.lookup("H100-SXM")
    enc, why = encoder_profile(facts, ARGS, V("0.11.0"), 1024, 8192, 16000, 2, 1, gpu=h100)
    assert why is None
    assert (enc.items, enc.tokens_per_item, enc.patches_per_item) == (2, 3025, 12100)
    assert enc.held_bytes == HELD
    assert enc.tower_peak_bytes == 644_300_800 + 61_952_000 + 28_459_200
    assert "block attention mask" not in enc.how


def test_the_0_11_tower_builds_a_dense_mask_where_xformers_is_off_and_is_not_guessed_without_a_gpu():
    facts = _info().extra["facts"]
    b200, _ = encoder_profile(facts, ARGS, V("0.11.0"), 1024, 8192, 16000, 2, 1, gpu=gpus.lookup("B200"))
    # generate_block_attention_mask over the 24,200 patches of the batch, bf16
    assert b200.tower_peak_bytes == 644_300_800 + 61_952_000 + 28_459_200 + 24_200**2 * 2
    for gpu in (None, gpus.lookup("GH200")):  # no GPU; a Grace part (no xformers dependency on aarch64)
        enc, why = encoder_profile(facts, ARGS, V("0.11.0"), 1024, 8192, 16000, 2, 1, gpu=gpu)
        assert enc is None and "xformers" in why
    # before 0.11 still not estimated
    assert encoder_profile(facts, ARGS, V("0.10.2"), 1024, 8192, 16000, 2, 1, gpu=gpus.lookup("H100-SXM"))[0] is None


def test_flashinfer_sampler_on_the_0_11_0_image_not_from_0_11_1():
    info, h100 = _info(), gpus.lookup("H100-SXM")
    on = compute_budget(info, h100, ARGS, {}, "0.11.0", 1, image=IMAGE)
    sampler = 1024 * 131072 * 14.5 + 8192 * 5120 * 2
    assert abs(on.activation_gib - (sampler + HELD) / GiB) < 0.005
    assert abs(on.activation_gib - 2.13) < 0.005
    # VLLM_USE_FLASHINFER_SAMPLER=0, a pip install without the extra, and 0.11.1 (opt-in) sort the logits
    sort = (1024 * 131072 * 38.2 + 8192 * 5120 * 2 + HELD) / GiB
    for budget in (compute_budget(info, h100, ARGS, {"VLLM_USE_FLASHINFER_SAMPLER": "0"}, "0.11.0", 1, image=IMAGE),
                   compute_budget(info, h100, ARGS, {}, "0.11.0", 1),
                   compute_budget(info, h100, ARGS, {}, "0.11.1", 1, image="vllm/vllm-openai:v0.11.1")):
        assert abs(budget.activation_gib - sort) < 0.005
