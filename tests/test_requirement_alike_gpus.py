"""VRL011's requirement evaluates each catalog GPU once per kind of GPU; GPUs alike in memory but not in what the
budget reads (the name vLLM's scheduler defaults look at, SM count, L2) must get their own budgets."""

from vramlint import gpus, versions
from vramlint.budget import GiB, compute_budget
from vramlint.model import Location, ModelInfo, Server
from vramlint.requirement import gpu_requirement

# A dense model with a large vocabulary, so that the scheduler's default max_num_seqs (256 on an A100, 1024 on
# other GPUs of 70 GiB or more from vLLM 0.9) moves the sampler's profile and warm-up memory by gigabytes.
WIDE_VOCAB = dict(name="test/wide-vocab-30b", source="test", num_layers=48, hidden_size=6144,
                  num_attention_heads=48, num_kv_heads=8, head_dim=128, intermediate_size=20480,
                  vocab_size=262144, max_position_embeddings=131072, torch_dtype="bfloat16",
                  architecture="LlamaForCausalLM", weight_bytes=int(45.0 * GiB),
                  weight_bytes_source="safetensors metadata")


def _server(max_model_len: int) -> Server:
    return Server(file="x.yaml", location=Location(file="x.yaml", line=1), source_format="kubernetes",
                  image="vllm/vllm-openai:v0.20.0", model=WIDE_VOCAB["name"],
                  args={"max_model_len": max_model_len})


def test_name_traits_follow_vllm_device_name_checks():
    assert versions.device_name_traits("A100-80GB") == (False, True)
    assert versions.device_name_traits("A800-80GB") == (False, False)
    assert versions.device_name_traits("H200") == (True, False)


def test_requirement_agrees_with_each_gpus_own_budget():
    model = ModelInfo(**WIDE_VOCAB)
    a100, a800 = gpus.lookup("A100-80GB"), gpus.lookup("A800-80GB")
    assert (a100.total_gib, a100.compute_capability) == (a800.total_gib, a800.compute_capability)
    verdicts = set()
    for max_model_len in (8192, 65536, 131072):
        server = _server(max_model_len)
        req = gpu_requirement(model, server, "0.20.0", 1)
        for spec in (a100, a800):
            own = compute_budget(model, spec, server.args, server.env, "0.20.0", 1, image=server.image)
            assert (spec.name in req.fits) == own.starts, (max_model_len, spec.name)
        verdicts.add((a100.name in req.fits, a800.name in req.fits))
    # at 131072 tokens the A100's smaller default max_num_seqs leaves it room for one request and the A800 not
    assert (True, False) in verdicts
