"""Which vLLM releases accept a flag, and the closest known flag, computed cheaply: the same answers as asking
each release's whole argument index, without building those indexes."""

import difflib

from vramlint import vllm_args

# shapes of what is written: exact, `=value`, underscores, `--no-` forms, abbreviations (unique and ambiguous),
# misspellings, dotted JSON keys, -O levels, short options, and flags that only some releases have
WRITTEN = [
    "--model", "--max-model-len=8192", "--max_model_len", "--max-model-length", "--max-model", "--max",
    "--disable-log-requests", "--enable-log-requests", "--no-enable-prefix-caching", "--no-enable-prefix",
    "--enable-prefix-caching", "--no-such-flag", "--tensor-paralel-size", "--gpu-memory-util", "--swap-space",
    "--compilation-config.level", "--compilation-config.cudagraph_capture_sizes+", "-O.level", "-O3", "-O",
    "-tp", "-tpx", "-q", "--served-model", "--kv-cache-dtipe", "--speculative-config.num_speculative_tokens",
    "--no-", "--", "--x", "--enable-chunked-prefill", "--no-enable-chunked-prefill", "--guided-decoding-backend",
    "--use-v2-block-manager", "--worker-use-ray", "--async-scheduling", "--hf-overrides.architectures",
    "--disable-prefix-caching", "--disable-log-req", "--no-disable-log-requests", "--disable-chunked-prefill",
]


def test_versions_knowing_agrees_with_each_release_lookup():
    for flag in WRITTEN:
        name = flag.split("=", 1)[0]
        each = tuple(v for v in vllm_args.versions() if vllm_args.lookup(name, v) is not None)
        assert vllm_args.versions_knowing(flag) == each, flag
    # both kinds of answer occur: a flag removed (known to old releases only) and one added later
    assert vllm_args.versions_knowing("--use-v2-block-manager")[0] == vllm_args.versions()[0]
    assert vllm_args.versions_knowing("--use-v2-block-manager")[-1] != vllm_args.versions()[-1]
    assert vllm_args.versions_knowing("--async-scheduling")[-1] == vllm_args.versions()[-1]
    assert vllm_args.versions_knowing("--async-scheduling")[0] != vllm_args.versions()[0]


def test_versions_knowing_builds_no_release_index():
    vllm_args.versions_knowing.cache_clear()
    vllm_args._index.cache_clear()
    vllm_args.versions_knowing("--max-model-length")
    vllm_args.versions_knowing("--disable-log-requests")
    assert vllm_args._index.cache_info().currsize == 0


def test_closest_is_difflib_closest_match():
    for version in ("0.4.3", "0.10.2", None):
        for flag in WRITTEN:
            name = vllm_args.normalise(flag.split("=", 1)[0])
            known = sorted(f for f in vllm_args.known_flags(version) if f.startswith("--") == name.startswith("--"))
            plain = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            assert vllm_args.closest(flag, version) == (plain[0] if plain else None), (flag, version)


def test_the_prefilter_keeps_every_candidate_that_reaches_the_cutoff():
    # ratio 2*M/T: the LCS bound must never drop a candidate difflib would score at or above the cutoff
    candidates = sorted(vllm_args.known_flags("0.33.0"))
    for word in ("--max-model-length", "--enable-prefix-cacheing", "-tpx", "--zzz", "--kv-cache-dtipe"):
        kept = set(vllm_args._may_reach(word, candidates, 0.6))
        reaching = {c for c in candidates if difflib.SequenceMatcher(None, c, word).ratio() >= 0.6}
        assert reaching <= kept, word
        assert len(kept) < len(candidates) / 4  # and it does drop most of them


def test_one_release_index_makes_only_that_release_specs():
    # a one-file check reads one release's arguments: the other releases' forms are not built
    vllm_args._index.cache_clear()
    vllm_args._specs.cache_clear()
    i = vllm_args.versions().index("0.10.2")
    index = vllm_args._index("0.10.2")
    made = [spec is not None for spec in vllm_args._specs()]
    alive = [lo <= i <= hi for lo, hi in (a["v"] for a in vllm_args._table()["args"])]
    assert made == alive and not all(alive)
    row = next(r for r, a in enumerate(vllm_args._table()["args"]) if "--max-model-len" in a["flags"] and alive[r])
    assert index["--max-model-len"] is vllm_args._spec(row)  # made once, shared by the releases with that form
