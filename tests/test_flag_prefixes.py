"""argparse's abbreviations as vLLM's parser reads them: a unique prefix of a long option (or of a negative form:
`--no-x`, and from 0.33.0 the `--disable-x` of a boolean `--enable-x` and the reverse) names it, a shared one is
ambiguous, an option string written whole is itself. Found by bisection over the sorted options; checked here against a scan of
every option, for every version's table, on every prefix of every option and on words that name none."""

from __future__ import annotations

from vramlint import vllm_args


def _scan(flag, idx, inverse):
    """The reading by a scan of every option (what argparse does; `--` alone is no abbreviation)."""
    candidates = {}
    if len(flag) <= 2:
        return candidates
    for f, spec in idx.items():
        if f.startswith("--") and f.startswith(flag):
            candidates.setdefault(f, (spec, False))
    for f, spec in idx.items():
        for form in vllm_args.negative_forms(spec, f, inverse):
            if form.startswith(flag):
                candidates.setdefault(form, (spec, True))
    if flag in candidates:  # argparse takes an option string written whole before it looks at prefixes
        return {flag: candidates[flag]}
    return candidates


def test_prefixes_read_as_a_scan_of_every_option_reads_them():
    versions = vllm_args._table()["versions"]
    checked = ambiguous = unique = 0
    for version in versions[:: max(1, len(versions) // 6)] + [versions[-1]]:
        idx = vllm_args._index(version)
        inverse = bool(vllm_args.features(version).get("enable_disable"))
        probes = {"--", "--zzz", "--k0", "--no-", "--no-zz", "--max", "--enable-p", "--disable-l", "--disable-p"}
        for f in idx:
            if f.startswith("--"):
                probes.update(f[:n] for n in range(3, len(f) + 1, 2))
                probes.add("--no-" + f[2:5])
                probes.update(vllm_args.negative_forms(idx[f], f, True))
        for flag in sorted(probes):
            if flag in idx:
                continue
            candidates = _scan(flag, idx, inverse)
            want = next(iter(candidates.values())) if len(candidates) == 1 else (None, False)
            got = vllm_args._match(flag, idx, inverse)
            assert (got[0] is want[0], got[1]) == (True, want[1]), (version, flag)
            shared = vllm_args._ambiguous_matches(flag, version)
            assert tuple(shared) == (tuple(sorted(candidates)) if len(candidates) > 1 else ()), (version, flag)
            checked += 1
            ambiguous += len(candidates) > 1
            unique += len(candidates) == 1
    assert checked > 1000 and ambiguous > 100 and unique > 100  # the probes cover all three outcomes
