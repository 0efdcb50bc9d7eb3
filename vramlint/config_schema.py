"""The pydantic model of a vramlint configuration file, and the JSON Schema generated from it.

Only needed to regenerate ``vramlint/schema/vramlint-config.schema.json`` and by the tests that hold the
model, the schema and :class:`vramlint.config.Config` to the same fields and defaults; a run validates a
file against the shipped schema with jsonschema and never imports pydantic.

    python -m vramlint.config_schema --write-schema
"""

from __future__ import annotations

import json
from typing import Any

from vramlint.config import (
    COMPUTE_CAPABILITY_PATTERN,
    OPTION_NAME_PATTERN,
    SCHEMA_ID,
    SCHEMA_RESOURCE,
    SELECTOR_PATTERN,
)

_MODELS: dict[str, Any] = {}


def config_model() -> Any:
    """The pydantic model of a configuration file (``[tool.vramlint]`` / ``.vramlint.yaml``)."""
    if "Config" in _MODELS:
        return _MODELS["Config"]
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field, StringConstraints

    def kebab(name: str) -> str:
        return name.replace("_", "-")

    base = ConfigDict(extra="forbid", alias_generator=kebab, populate_by_name=True, strict=True)
    Selector = Annotated[str, StringConstraints(pattern=SELECTOR_PATTERN)]
    OptionName = Annotated[str, StringConstraints(pattern=OPTION_NAME_PATTERN)]
    Severity = Literal["error", "warning", "note", "off"]
    FailOn = Literal["error", "warning", "note", "never"]
    Glob = Annotated[str, StringConstraints(min_length=1)]
    GpuName = Annotated[str, StringConstraints(min_length=1)]
    GpuFleet = Annotated[list[GpuName], Field(min_length=1)]
    # "8.9" as a string or a number (YAML and TOML read 8.9 as a float; "10.0" keeps its zero as a string)
    ComputeCapability = Annotated[str, StringConstraints(pattern=COMPUTE_CAPABILITY_PATTERN)] | Annotated[
        float, Field(ge=1, lt=100)]
    LabelKey = Annotated[str, StringConstraints(min_length=1, max_length=317)]  # prefix (253) / name (63)
    LabelValue = Annotated[str, StringConstraints(min_length=1, max_length=63)]

    class Traffic(BaseModel):
        """The traffic the deployments are expected to serve."""

        model_config = ConfigDict(**base, title="Traffic")
        p99_context_tokens: int | None = Field(
            None, ge=1, description="Prompt plus output tokens of the 99th-percentile request."
        )
        peak_concurrent_requests: int | None = Field(
            None, ge=1, description="Requests served at the same time at peak, per engine replica."
        )

    class CustomGpu(BaseModel):
        """A GPU that is not in vramlint's catalog: what vLLM's budget needs of it, and how deployments name it."""

        model_config = ConfigDict(**base, title="CustomGpu")
        name: GpuName = Field(..., description="The name `--gpu` and `gpu:` use for it (e.g. RTX-PRO-4500).")
        memory_gib: float = Field(
            ..., gt=0, le=4096, description="Total memory as CUDA reports it, in GiB: what vLLM logs as the GPU's "
            "total memory (torch.cuda.mem_get_info()[1] / 2**30), a few percent below the size on the box."
        )
        compute_capability: ComputeCapability = Field(
            ..., description="CUDA compute capability, e.g. \"8.9\" (torch.cuda.get_device_capability()); it decides "
            "bfloat16 (8.0+), FP8 (8.9+), FlashAttention and the quantization kernels vLLM can run, as for catalog GPUs."
        )
        aliases: list[GpuName] = Field(
            default_factory=list, description="Other names it goes by (the product name nvidia-smi prints, ...)."
        )
        node_labels: dict[LabelKey, LabelValue | Annotated[list[LabelValue], Field(min_length=1)]] = Field(
            default_factory=dict, description="Node labels whose value says a node has this GPU (label key -> "
            "value, or a list of values): a nodeSelector or required node affinity matching one resolves to it."
        )

    descriptions = {
        "select": "Rules to run: ids (VRL003), id prefixes (VRL0), names, or ALL. Default: every rule.",
        "ignore": "Rules not to run: ids, id prefixes or names.",
        "severity": "Level of a rule's findings, by rule id or name: error, warning, note, or off.",
        "fail_on": "Lowest level that makes vramlint exit with status 1 (never: always 0).",
        "gpu": "GPU of servers whose files do not say (a catalog name or alias: T4, A100-80GB, L40S), or a list "
               "of them when the pods may land on any of these (the budget is checked on each).",
        "gpus": "GPUs per engine replica for servers whose files do not say.",
        "gpu_memory_gib": ("Total memory of the `gpu` GPU as CUDA reports it, in GiB: needed for a GPU that is not in the "
                           "catalog, replaces the catalog's total for one that is."),
        "vllm_version": "vLLM version of servers whose image tag does not say (e.g. 0.10.1).",
        "model_aliases": "Served model path or name -> Hugging Face id or path to a config.json.",
        "traffic": "The traffic profile rules size their suggestions for.",
        "rules": "Options of each rule, by rule id or name.",
    }

    class Override(BaseModel):
        """Settings for the files matching ``files``."""

        model_config = ConfigDict(**base, title="Override")
        files: list[Glob] = Field(
            ..., min_length=1, description="Globs, relative to the configuration file's folder."
        )
        select: list[Selector] | None = Field(None, description=descriptions["select"])
        ignore: list[Selector] | None = Field(None, description=descriptions["ignore"] + " Added to the top level.")
        severity: dict[Selector, Severity] | None = Field(None, description=descriptions["severity"])
        fail_on: FailOn | None = Field(None, description=descriptions["fail_on"])
        gpu: GpuName | GpuFleet | None = Field(None, description=descriptions["gpu"])
        gpus: int | None = Field(None, ge=1, description=descriptions["gpus"])
        gpu_memory_gib: float | None = Field(None, gt=0, description=descriptions["gpu_memory_gib"])
        vllm_version: str | None = Field(None, min_length=1, description=descriptions["vllm_version"])
        model_aliases: dict[str, str] | None = Field(None, description=descriptions["model_aliases"])
        traffic: Traffic | None = Field(None, description=descriptions["traffic"])
        rules: dict[Selector, dict[OptionName, Any]] | None = Field(None, description=descriptions["rules"])

    class Config(BaseModel):
        """vramlint configuration: [tool.vramlint] in pyproject.toml, or .vramlint.yaml."""

        model_config = ConfigDict(**base, title="vramlint configuration")
        select: list[Selector] | None = Field(None, description=descriptions["select"])
        ignore: list[Selector] = Field(default_factory=list, description=descriptions["ignore"])
        severity: dict[Selector, Severity] = Field(default_factory=dict, description=descriptions["severity"])
        fail_on: FailOn = Field("error", description=descriptions["fail_on"])
        gpu: GpuName | GpuFleet | None = Field(None, description=descriptions["gpu"])
        gpus: int | None = Field(None, ge=1, description=descriptions["gpus"])
        gpu_memory_gib: float | None = Field(None, gt=0, description=descriptions["gpu_memory_gib"])
        vllm_version: str | None = Field(None, min_length=1, description=descriptions["vllm_version"])
        model_aliases: dict[str, str] = Field(default_factory=dict, description=descriptions["model_aliases"])
        traffic: Traffic = Field(default_factory=Traffic, description=descriptions["traffic"])
        rules: dict[Selector, dict[OptionName, Any]] = Field(
            default_factory=dict, description=descriptions["rules"]
        )
        overrides: list[Override] = Field(
            default_factory=list, description="Per-path settings; later entries win over earlier ones."
        )
        exclude: list[Glob] = Field(
            default_factory=list, description="Globs of files and folders not to scan (relative to this file)."
        )
        offline: bool = Field(False, description="Never ask the Hugging Face Hub (also: HF_HUB_OFFLINE=1).")
        hub_cache_max_age_days: float | None = Field(
            None, ge=0, description="Ask the Hub again for a model whose cached answer is older than this many days "
            "(default 30; 0: every run; answers for a commit hash never expire). Also: --refresh-hub-cache."
        )
        render_helm: bool = Field(
            False, description="Not applied from a file in the scanned repository: a configuration file cannot make "
            "vramlint run Helm (pass --render-helm, or the action's render-helm input). Kept so that such a file "
            "still validates; vramlint says where it was ignored."
        )
        helm_values: list[Glob] = Field(
            default_factory=list, description="Values files applied to every scanned Helm chart, in order, as "
            "helm's -f (relative to this file; --values files come after them)."
        )
        respect_gitignore: bool = Field(
            True, description="Leave out of the walk what the git work tree's .gitignore files ignore (rendered "
            "output, vendored charts); a path named on the command line is always read. --no-respect-gitignore / "
            "--respect-gitignore win over it."
        )
        walk_scripts: bool = Field(
            True, description="A folder's walk reads its shell scripts (*.sh, *.bash, extension-less files whose #! "
            "names a shell) that start vLLM (`vllm serve`, `python -m vllm.entrypoints...`, `docker run` of a vLLM "
            "image); false: only Slurm job scripts, as before. A script named on the command line is always read."
        )
        custom_gpus: list[CustomGpu] = Field(
            default_factory=list, description="GPUs that are not in the catalog, usable by name in --gpu and `gpu:` "
            "and found through their node labels. An entry whose name is a catalog GPU's replaces it in this run."
        )

    _MODELS.update(Config=Config, Override=Override, Traffic=Traffic, CustomGpu=CustomGpu)
    return Config


def generate_schema() -> dict[str, Any]:
    """The JSON Schema of a configuration file, generated from :func:`config_model`."""
    from pydantic.json_schema import GenerateJsonSchema

    class FileSchema(GenerateJsonSchema):
        # In a file a key is either written with a value or left out; `null` is never a useful value.
        def nullable_schema(self, schema):  # noqa: ANN001 - pydantic's signature
            return self.generate_inner(schema["schema"])

    schema = config_model().model_json_schema(by_alias=True, schema_generator=FileSchema)
    schema = _tidy_schema(schema)
    out = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID}
    out.update(schema)
    return out


def _tidy_schema(node: Any, top: bool = True) -> Any:
    if isinstance(node, list):
        return [_tidy_schema(v, False) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "title" and not top and isinstance(value, str):
            continue  # pydantic's titles ("Fail-On") only repeat the key
        if key == "default" and value is None:
            continue
        out[key] = _tidy_schema(value, False) if key not in ("properties", "$defs") else {
            k: _tidy_schema(v, False) for k, v in value.items()
        }
    # pydantic writes constrained dict keys as patternProperties, which lets a non-matching key through;
    # propertyNames rejects it.
    pattern_props = out.get("patternProperties")
    if isinstance(pattern_props, dict) and len(pattern_props) == 1 and out.get("type") == "object":
        (pattern, value_schema), = pattern_props.items()
        del out["patternProperties"]
        out["propertyNames"] = {"pattern": pattern}
        out["additionalProperties"] = value_schema
    if top and "$defs" in out:
        out["$defs"] = {k: _tidy_def(v) for k, v in out["$defs"].items()}
    return out


def _tidy_def(node: dict) -> dict:
    tidy = _tidy_schema(node, top=False)
    if "title" in node:
        tidy = {"title": node["title"], **tidy}
    return tidy


def schema_text() -> str:
    return json.dumps(generate_schema(), indent=2, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m vramlint.config_schema --write-schema`` regenerates the shipped schema file."""
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    text = schema_text()
    if argv == ["--write-schema"]:
        from pathlib import Path

        target = Path(__file__).parent / SCHEMA_RESOURCE[0] / SCHEMA_RESOURCE[1]
        target.parent.mkdir(exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
