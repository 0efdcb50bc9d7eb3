"""vllm_args.versions_knowing finds the releases that know a flag through an index of every option string (and
negative form) by prefix: it must say what resolving the flag in each release's whole parser says."""

from __future__ import annotations

from vramlint import vllm_args


def _flags() -> list[str]:
    table = vllm_args._table()
    out = {"--k1", "--max", "--max-model", "-O.level", "--compilation-config.level", "--no-enforce-eager",
           "--disable-log-requests", "--enable-log-requests", "--model_impl", "-tp", "--x=1"}
    for row, entry in enumerate(table["args"]):
        if row % 9:
            continue
        for flag in entry["flags"]:
            out.update({flag, flag[: max(3, len(flag) // 2)], "--no-" + flag[2:], flag.replace("-", "_") + "=2",
                        "--disable-" + flag[2:], flag + ".key"})
    return sorted(out)


def test_the_releases_that_know_a_flag_are_those_whose_parser_resolves_it():
    versions = vllm_args._table()["versions"]
    for flag in _flags():
        name = vllm_args.normalise(flag.split("=", 1)[0])
        expected = tuple(v for v in versions if vllm_args.resolve_flag(name, v)[0] is not None)
        assert vllm_args.versions_knowing(flag) == expected, flag
