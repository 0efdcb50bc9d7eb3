"""An argument that the vLLM version in use does not know: vLLM refuses to start.

`vllm serve` parses its command line with argparse, so an unknown flag (a typo such as
`--max-model-length`, or a flag that the image's vLLM version does not have yet or no longer has) ends the
process at once with `vllm: error: unrecognized arguments: ...`. The flag is checked against the arguments
of the detected vLLM version (from the image tag, the configuration, or the newest version vramlint knows),
and the finding suggests the closest known argument and says which vLLM versions accept the flag (a flag
removed in a newer version, such as `--swap-space`, is valid for an older image). The negative forms of boolean
options count as vLLM's parser makes them: `--no-x` for every boolean `--x`, and from vLLM 0.33.0, whose parser
pairs `--enable-x` with `--disable-x` (EnableDisableAction), `--disable-x` for a boolean `--enable-x` and
`--enable-x` for a boolean `--disable-x`: `--disable-log-requests`, gone after 0.16.0, is accepted again there as
the inverse of `--enable-log-requests`.

When the image tag does not say the version, vramlint checks against its default (newest) version; a flag
that older versions accept is then a warning, not an error, since the image may run one of them. An image pinned
by a bare digest (`vllm/vllm-openai@sha256:...`) is such an image: the digest names no release and vramlint knows
no digest's release, so a flag that only some releases refuse stays a warning there too. Set
`vllm-version` in the configuration to make it exact. Such a warning says the same for every server with the
same flag and the same assumed version, so it is said once, on the first, "(and N more servers: ...)" naming the
others (related locations; its fix removes the flag at each), as are VRL010's identical "partly checked" notes and
VRL004's note that a GPU cannot run FlashAttention; an error stays on each of its lines. vLLM's own images tagged `latest` (`vllm/vllm-openai:latest`)
run the newest release, so a flag it no longer has is an error there: Kubernetes pulls `:latest` again for each
new container, and any machine pulling it now gets the newest release.

vLLM built from source (a Dockerfile's `git clone` of a fork, a branch or a commit and `pip install -e .` there, or
`pip install git+.../<fork>/vllm`) is no release: its arguments are that checkout's, so none of its servers' flags
is judged, and one note per build, on the install line, names the flags left unjudged; set `vllm-version` in the
configuration to the release it follows to have them checked. vllm-project's repository checked out at a release
tag is that release, and is checked as one.

Fix (unsafe: the flag was written for a reason): the closest known argument when no vLLM version knows the
flag and most of its name is kept (a misspelling, never its opposite: `--disable-x` is not `--enable-x`), else
the flag and the value vLLM would read with it removed (a flag that other versions know, removed or added
since: vLLM's renames changed meaning, as `--disable-log-requests` to `--enable-log-requests`).

Failing example:

```yaml
args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-length", "8192"]
```

Passing example:

```yaml
args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
```

What vramlint prints for `tests/rules/fixtures/vrl009/fail_typo.yaml`, and the edit of its fix (`--diff` --unsafe-fixes):

<!-- output: vramlint check tests/rules/fixtures/vrl009/fail_typo.yaml --select VRL009 -->
```text
VRL009 [error] vLLM 0.10.2 does not know --max-model-length: it stops at start-up with "unrecognized arguments"
  --> tests/rules/fixtures/vrl009/fail_typo.yaml:21:15
   |
21 |             - --max-model-length
   |               ^^^^^^^^^^^^^^^^^^
   = note: vLLM 0.10.2 (from the image tag) does not know the argument --max-model-length: it stops at
           start-up with "unrecognized arguments: --max-model-length"; did you mean --max-model-len?
   = help: write --max-model-len instead of --max-model-length (unsafe fix: --fix --unsafe-fixes applies it)

Found 1 finding (1 error) in 1 server, 1 file. Failing: findings at or above error. 1 fixable with --fix --unsafe-fixes (--diff --unsafe-fixes shows them).
```

<!-- output: vramlint check tests/rules/fixtures/vrl009/fail_typo.yaml --select VRL009 --diff --unsafe-fixes -->
```text
--- a/tests/rules/fixtures/vrl009/fail_typo.yaml
+++ b/tests/rules/fixtures/vrl009/fail_typo.yaml
@@ -18,7 +18,7 @@
           args:
             - --model
             - "meta-llama/Llama-3.1-8B-Instruct"
-            - --max-model-length
+            - --max-model-len
             - "8192"
           resources:
             limits:
```
"""

from __future__ import annotations

from functools import lru_cache

from vramlint.rule import version_tuple
from vramlint.versions import OUTSIDE_RELEASE_REPOSITORIES, assumed_caveat, built_from_commit, why_no_version

ID = "VRL009"
NAME = "unknown-vllm-argument"
LEVEL = "error"
OPTIONS: dict = {}
# Past this many unknown arguments in one server, the rest are one finding that counts them: vLLM refuses them all
# in one "unrecognized arguments" error, and each one's history and closest name cost ~2 ms (a kthena config of
# 10,000 keys: 18.5 CPU-s)
MAX_DETAILED = 200


SOURCES = {
    "image tag": "from the image tag",
    "configuration": "set in the configuration",
    "latest tag": "the newest release, which the image's `latest` tag runs",
    "default": "vramlint's default version",
}


@lru_cache(maxsize=512)
def _closest(flag: str, version: str | None) -> str | None:
    try:
        from vramlint.vllm_args import closest
    except ImportError:
        return None
    suggestion = closest(flag, version)
    if isinstance(suggestion, (list, tuple)):
        suggestion = suggestion[0] if suggestion else None
    return suggestion or None


def _versions_knowing(flag: str) -> tuple[str, ...]:
    """The vLLM versions (of those vramlint has tables for) that accept ``flag``, oldest first."""
    try:
        from vramlint.vllm_args import versions_knowing
    except ImportError:
        return ()
    return versions_knowing(flag)


def check(assessment, ctx):
    server = assessment.server
    if not server.unknown_args:
        return
    version = assessment.vllm_version or server.vllm_version
    source = assessment.version_source or ("image tag" if server.vllm_version else None)
    if _unjudged(assessment):
        return  # vLLM of no release: said once per source build (check_all)
    if source == "operator":
        which = f"vLLM {version} ({server.assumed_version_source}; {assumed_caveat(server.assumed_version_source)})"
    else:
        which = f"vLLM {version}" + (f" ({SOURCES.get(source, source)})" if source else "") if version else "vLLM"
    assumed = source in ("default", "operator")
    # a tag that names a commit or build date past the release: its parser may know later arguments
    other_build = source == "image tag" and built_from_commit(server.image)
    current = version_tuple(version)
    for n, (flag, location) in enumerate(server.unknown_args.items()):
        if location is None or not location.file or location.line < 1:
            location = server.location  # a flag with no position of its own (synthesized by an extractor)
        if n == MAX_DETAILED:
            yield _the_rest(assessment, ctx, server, location, version, which, assumed or other_build)
            return
        suggestion = _closest(flag, version)
        hint = f"; did you mean {suggestion}?" if suggestion and suggestion != flag.split("=", 1)[0] else ""
        knowing = _versions_knowing(flag)
        history = ""
        if knowing and current is not None:
            first, last = knowing[0], knowing[-1]
            if version_tuple(first) > current:
                history = f" (it was added in vLLM {first})"
            elif version_tuple(last) < current:
                history = f" (vLLM {first} to {last} accept it; it was removed after {last})"
            else:
                history = f" (some vLLM versions from {first} to {last} accept it)"
        short = f"vLLM {version}" if version else "vLLM"
        refusal = f"unrecognized arguments: {flag}"
        try:
            from vramlint.vllm_args import ambiguous_matches

            several = ambiguous_matches(flag, version)
        except ImportError:
            several = []
        if several:
            # argparse's abbreviation: a prefix of several long options is refused as ambiguous
            refusal = f"ambiguous option: {flag.split('=', 1)[0]} could match {', '.join(several)}"
        # uncertain: the version is assumed, or the image is a build from a commit past the release
        why_uncertain = None
        if assumed and knowing:
            from_tag = source == "operator" and OUTSIDE_RELEASE_REPOSITORIES in (server.assumed_version_source or "")
            why_uncertain = ("assumed" if source == "default" else "assumed from the image tag" if from_tag
                             else "the operator pins",
                             f"if the image runs a version without it, vLLM stops at start-up with \"{refusal}\"{hint}. "
                             + ("Its builder's tag is evidence of the release, not proof, so" if from_tag else
                                "The file does not say the image, so" if source == "operator" else
                                f"{_capital(why_no_version(server.image))}, so")
                             + " set vllm-version in the configuration to check against yours")
        elif source == "default" and not knowing and not (suggestion and _close(flag.split("=", 1)[0], suggestion)):
            # No release knows the flag and it is no misspelling of one; the image names no release either (a
            # build from source, a fork, a nightly): a build past or beside the releases may have it
            why_uncertain = ("assumed",
                             f"no vLLM release knows it, but {why_no_version(server.image)}: a build from a commit "
                             f"past the newest release or from a fork may accept it, and upstream vLLM {version} "
                             f"stops at start-up with \"{refusal}\"{hint}. Set vllm-version in the configuration to "
                             "the release the image runs to check against it")
        elif other_build:
            why_uncertain = (f"the tag of {server.image} names a build from a commit",
                             f"upstream vLLM {version} stops at start-up with \"{refusal}\"{hint}. The tag also names "
                             "a commit or build date: a build from a later commit may accept it; set vllm-version in "
                             "the configuration to the release it was built from")
        if why_uncertain is not None:
            yield ctx.finding(
                assessment,
                f"{short} ({why_uncertain[0]}) does not know {flag}: unrecognized arguments at start-up",
                location,
                level="warning",
                fix=_fix(server, flag, location, suggestion if hint else None),
                detail=f"{which} does not know the argument {flag}{history}: {why_uncertain[1]}",
                shared=True,  # the unknown version is the servers' one cause: said once (vramlint.fold)
            )
            continue
        yield ctx.finding(
            assessment,
            f"{short} does not know {flag}: it stops at start-up with \"{refusal.split(':', 1)[0]}\"",
            location,
            fix=_fix(server, flag, location, suggestion if hint else None),
            detail=f"{which} does not know the argument {flag}{history}: it stops at start-up with "
            f"\"{refusal}\"{hint}",
        )


def _unjudged(assessment) -> bool:
    """A server whose vLLM is built from a git checkout of no release, with no version set in the configuration:
    no release's parser is its parser, so none of its flags is judged."""
    return assessment.server.vllm_source_build is not None and assessment.version_source == "default"


def check_all(assessments, ctx):
    """One note per source build of vLLM (a Dockerfile's install line): its version is no release, and its servers'
    flags are not judged against releases."""
    builds: dict[tuple, list] = {}
    for a in assessments:
        if _unjudged(a):
            where = a.server.vllm_source_build.installed
            builds.setdefault((where.file, where.line, a.server.vllm_source_build.url), []).append(a)
    for group in builds.values():
        build = group[0].server.vllm_source_build
        version = group[0].vllm_version
        flags = list(dict.fromkeys(f.split("=", 1)[0] for a in group for f in a.server.unknown_args))
        servers = f"{len(group)} server{'s' if len(group) > 1 else ''}"
        if flags:
            known = sum(1 for f in flags if _versions_knowing(f))
            shown = ", ".join(flags[:6]) + (", ..." if len(flags) > 6 else "")
            unjudged = (f"the {len(flags)} flag{'s' if len(flags) > 1 else ''} of its {servers} that vLLM {version} "
                        f"does not know ({shown}"
                        + (f"; {known} of them some release accepts" if known else "") + ") are not judged")
        else:
            unjudged = f"no flag of its {servers} is judged against a release (vLLM {version} knows them all)"
        yield ctx.finding(
            group[0],
            f"vLLM built from source ({build.label()}): no release, flags not judged",
            build.installed,
            level="note",
            related=[a.server.location for a in group[:20]],
            detail=f"{build.describe()}, which is no vLLM release: its arguments are that checkout's, so {unjudged}; "
            f"the budget uses vLLM {version}'s start-up defaults. "
            + ("Set vllm-version in .vramlint.yaml (an `overrides` entry for these files) to the release this "
               "checkout is, to have them checked" if build.wheel_stage is not None else
               "Install a vLLM release (vllm==X, or a checkout of vllm-project/vllm at a release tag), or set "
               "vllm-version in .vramlint.yaml (an `overrides` entry for these files) to the release the checkout "
               "follows, to have them checked"),
        )


def _the_rest(assessment, ctx, server, location, version, which, uncertain):
    """One finding for the unknown arguments past MAX_DETAILED, on the first of them, naming the lines they span."""
    rest = list(server.unknown_args.items())[MAX_DETAILED:]
    lines = [loc.line for _, loc in rest if loc is not None and loc.file == location.file and loc.line >= 1]
    span = f" (lines {min(lines)} to {max(lines)})" if lines else ""
    short = f"vLLM {version}" if version else "vLLM"
    names = ", ".join(flag for flag, _ in rest[:5]) + (", ..." if len(rest) > 5 else "")
    return ctx.finding(
        assessment,
        f"{short} does not know {len(rest):,} more arguments{span}: unrecognized arguments at start-up",
        location,
        level="warning" if uncertain else None,
        detail=f"{which} does not know {len(rest):,} more arguments after the first {MAX_DETAILED} said above ({names})"
        f"{span}: it stops at start-up with \"unrecognized arguments\" naming them all; they are counted here, "
        "not said one by one",
    )


def _capital(text):
    return text[:1].upper() + text[1:]


def _fix(server, flag, location, suggestion):
    """Write the flag's closest known name when it is a misspelling (no vLLM version knows it), else remove it and
    the value vLLM would read with it (a flag other versions know: vramlint has no table of renames, and
    vLLM's renames changed meaning, `--disable-log-requests` -> `--enable-log-requests`). Both unsafe: the flag
    was written for a reason a person knows."""
    from vramlint.fixes import remove_flag, rename_flag
    from vramlint.model import Fix

    if suggestion and not _versions_knowing(flag) and _close(flag.split("=", 1)[0], suggestion):
        edits, why = rename_flag(server, flag, suggestion, location)
        return Fix(f"write {suggestion} instead of {flag.split('=', 1)[0]}", False, edits, why)
    edits, why = remove_flag(server, flag, location)
    return Fix(f"remove {flag.split('=', 1)[0]} (and its value)", False, edits, why)


def _close(flag, suggestion):
    """A misspelling (most of the name kept), not merely the nearest name vLLM knows, nor its opposite
    (`--disable-x` is not `--enable-x`)."""
    from difflib import SequenceMatcher

    words, other = set(flag.lstrip("-").replace("_", "-").split("-")), set(suggestion.lstrip("-").split("-"))
    if (words ^ other) & {"enable", "disable", "no"}:
        return False
    return SequenceMatcher(None, flag.lstrip("-"), suggestion.lstrip("-")).ratio() >= 0.8
