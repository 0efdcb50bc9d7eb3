"""An argument that the vLLM version in use does not know: vLLM refuses to start.

`vllm serve` parses its command line with argparse, so an unknown flag (a typo such as
`--max-model-length`, or a flag that the image's vLLM version does not have yet or no longer has) ends the
process at once with `vllm: error: unrecognized arguments: ...`. The flag is checked against the arguments
of the detected vLLM version (from the image tag, the configuration, or the newest version vramlint knows),
and the finding suggests the closest known argument.

Failing example:

```yaml
args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-length", "8192"]
```

Passing example:

```yaml
args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
```
"""

from __future__ import annotations

ID = "VRL009"
NAME = "unknown-vllm-argument"
LEVEL = "error"
OPTIONS: dict = {}


SOURCES = {
    "image tag": "from the image tag",
    "configuration": "set in the configuration",
    "default": "vramlint's default version; set vllm-version in the configuration to check yours",
}


def _closest(flag: str, version: str | None) -> str | None:
    try:
        from vramlint.vllm_args import closest
    except ImportError:
        return None
    try:
        suggestion = closest(flag, version)
    except (KeyError, ValueError, LookupError):
        return None
    if isinstance(suggestion, (list, tuple)):
        suggestion = suggestion[0] if suggestion else None
    return suggestion or None


def check(assessment, ctx):
    server = assessment.server
    if not server.unknown_args:
        return
    version = assessment.vllm_version or server.vllm_version
    source = assessment.version_source or ("image tag" if server.vllm_version else None)
    which = f"vLLM {version}" + (f" ({SOURCES.get(source, source)})" if source else "") if version else "vLLM"
    for flag, location in server.unknown_args.items():
        suggestion = _closest(flag, version)
        hint = f"; did you mean {suggestion}?" if suggestion and suggestion != flag else ""
        yield ctx.finding(
            assessment,
            f"{which} does not know the argument {flag}: it stops at start-up with "
            f"\"unrecognized arguments: {flag}\"{hint}",
            location,
        )
