"""TorchServe model configs (`model-config.yaml`) for its vLLM handler: `handler.vllm_engine_config`.

TorchServe's vLLM handler (pytorch/serve, ts/torch_handler/vllm_handler.py) builds `AsyncEngineArgs(model=...)`
and sets each key of `handler.vllm_engine_config` that is one of its attributes (others are skipped without a
word), then starts `AsyncLLMEngine` from them. The model is `vllm_engine_config.model`, else `handler.model_path`
under the model archive's directory (or as written when that path does not exist there). The GPUs are the ones
TorchServe gives its worker (`deviceType: gpu`), not said in the file, and the vLLM version is the one installed
where TorchServe runs.
"""

from __future__ import annotations

from typing import Any

from vramlint.model import Location, Problem, Server
from vramlint.yamlload import key_location, value_location


def is_torchserve(doc: Any) -> bool:
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return False
    handler = data.get("handler")
    return isinstance(handler, dict) and isinstance(handler.get("vllm_engine_config"), dict)


def extract_torchserve(doc: Any) -> tuple[list[Server], list[Problem]]:
    from vramlint import vllm_args
    from vramlint.extract import vllm_config
    from vramlint.extract.podspec import scalar_text

    data = doc.data
    file = doc.file
    handler = data["handler"]
    engine = handler["vllm_engine_config"]
    known = vllm_args.all_dests()
    skipped = sorted(str(k) for k in engine if str(k).replace("-", "_") not in known)
    location = key_location(file, handler, "vllm_engine_config", "handler.vllm_engine_config") \
        or Location(file, 1, 1, yaml_path="handler.vllm_engine_config")
    server = Server(file=file, location=location, source_format="torchserve", kind="TorchServe vLLM handler",
                    name=None)
    problems: list[Problem] = []
    base = Location(file, location.line, location.column, yaml_path="handler.vllm_engine_config")
    vllm_config._merge(server, engine, file, None, problems, overwrite=True)
    # the handler sets only AsyncEngineArgs' attributes: other keys are ignored, not refused as argparse would
    for key in skipped:
        for flag in (f"--{key}", f"--{key.replace('_', '-')}"):
            server.unknown_args.pop(flag, None)
    if server.model is None:
        model_path = scalar_text(handler.get("model_path"))
        if model_path:
            server.model = model_path
            server.model_location = value_location(file, handler, "model_path", "handler.model_path") or base
    served = engine.get("served_model_name")
    server.name = str(served[0] if isinstance(served, list) and served else served or server.model or "torchserve")
    if skipped:
        server.notes.append(f"TorchServe's vLLM handler ignores keys that are not engine arguments: {', '.join(skipped)}")
    return [server], problems
