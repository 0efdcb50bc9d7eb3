"""Servers whose memory budget could not be checked, grouped by cause: said once per run, with the one change
that fixes each cause, instead of the same advice on every server.

A server is left unchecked (no budget) when its model or its GPU is not known. The common causes are
the same for many servers of one repository (manifests that let the cluster choose the GPU, models loaded from
a volume), so the reports say each cause once at the end of the run (text), as ``summary.unchecked`` (JSON), as
run-level notifications (SARIF), a section (markdown) or one notice (GitHub). What is particular to one server
(what it needs of a GPU: VRL011; a GPU hint outside the catalog, a part of its command line that cannot be
read: VRL010) stays a finding on that server.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from vramlint.lean_dataclass import dataclass
from vramlint.platforms import CPU_BACKEND

# cause -> (what the servers have in common, the one change that fixes it)
CAUSES: dict[str, tuple[str, str]] = {
    "gpu-not-said": (
        "do not say their GPU",
        "set `gpu:` in .vramlint.yaml (a list when the pods may land on several GPU types) or pass --gpu, or "
        "select the nodes with a node selector on `nvidia.com/gpu.product` (or an instance-type label)"),
    # AMD servers are selected by the AMD GPU node labeller's label (vramlint.gpus.AMD_LABELS), not NVIDIA's
    "amd-gpu-not-said": (
        "run on AMD GPUs and do not say which AMD GPU",
        "set `gpu:` in .vramlint.yaml or pass --gpu (e.g. --gpu MI300X), or select the nodes with a node selector "
        "on `amd.com/gpu.product-name` (the AMD GPU node labeller's label) or an instance-type label"),
    "gpu-not-in-catalog": (
        "name a GPU that is not in vramlint's catalog",
        "give its total memory with `gpu-memory-gib` in .vramlint.yaml (or --gpu-memory-gib)"),
    "other-accelerator": (
        "run on accelerators other than NVIDIA GPUs",
        "nothing to change: vramlint's budget follows vLLM's CUDA path only (the rules that need no budget still "
        "apply)"),
    "cpu-backend": (
        "run vLLM's CPU backend (its KV cache is host memory, VLLM_CPU_KVCACHE_SPACE)",
        "nothing to change: vramlint's budget is GPU memory (the rules that need no budget still apply)"),
    "vllm-omni": (
        "run vLLM-Omni (--omni), whose stages each have their own engine and memory settings",
        "nothing to change: vramlint's budget follows one vLLM engine (the rules that need no budget still apply)"),
    "args-in-code": (
        "run vLLM from application code that sets its engine arguments (a custom Ray Serve application), which "
        "vramlint does not read",
        "serve with Ray Serve LLM's own application (`ray.serve.llm:build_openai_app`, engine arguments in "
        "`engine_kwargs`), which vramlint reads, or check the code's engine arguments by hand"),
    "no-command": (
        "set no command or args (a chart or an operator sets them elsewhere)",
        "scan the chart or operator resource that sets them together with these files"),
    "model-placeholder": (
        "name the model through a placeholder that a step before deployment replaces",
        "scan the files as that step writes them (after the replacement), or write the model in place of the "
        "placeholder"),
    "model-at-run-time": (
        "name no model vramlint can read: a word of the command line is known only at run time (a variable the "
        "files scanned do not set) and may be the model",
        "give the variable a value in the file, or a default (`${MODEL:-org/model}`), or scan the file that sets it "
        "together with this one"),
    "no-model": (
        "name no model (`vllm serve MODEL` or --model)",
        "name the model on the command line, or map the served name with `model-aliases` in .vramlint.yaml"),
    "config-unread": (
        "read their settings from a `--config` file vramlint did not read (the model may be set there)",
        "scan the ConfigMap that holds the file together with these files, or name the model on the command line "
        "(each server's note says why its file was not read)"),
    "model-path": (
        "load the model from a path or storage URL that exists only where they run",
        "map each path to its Hub id (or a config.json in the repository) with `model-aliases` in .vramlint.yaml"),
    # Models outside the catalog, by why the Hub did not give them: the fix named is the one that undoes what
    # the user actually did (vramlint.models words each reason).
    "model-offline-flag": (
        "name a model outside vramlint's catalog, and --offline kept vramlint from asking the Hugging Face Hub",
        "run without --offline (vramlint reads only config.json and safetensors headers), or map each model with "
        "`model-aliases` in .vramlint.yaml"),
    "model-offline-config": (
        "name a model outside vramlint's catalog, and `offline: true` in the configuration kept vramlint from "
        "asking the Hugging Face Hub",
        "remove `offline: true` from the configuration, or map each model with `model-aliases` in .vramlint.yaml"),
    "model-offline-env": (
        "name a model outside vramlint's catalog, and HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) kept vramlint from "
        "asking the Hugging Face Hub",
        "unset HF_HUB_OFFLINE, or map each model with `model-aliases` in .vramlint.yaml"),
    "model-hub-unreachable": (
        "name a model outside vramlint's catalog, and the Hugging Face Hub could not be reached",
        "run where the Hub (HF_ENDPOINT) can be reached, or map each model with `model-aliases` in .vramlint.yaml "
        "(HF_HUB_OFFLINE=1 or --offline skips the attempt)"),
    "model-hub-refused": (
        "name a model the Hugging Face Hub did not give (not found, gated or private, or an answer vramlint "
        "refused)",
        "check the name, set HF_TOKEN to a token with access for a gated model, or map each model with "
        "`model-aliases` in .vramlint.yaml"),
    "model-not-found": (
        "name a model that is not in vramlint's catalog and was not looked up on the Hugging Face Hub",
        "let vramlint reach the Hub (it reads only config.json), or map each model with `model-aliases` in "
        ".vramlint.yaml"),
    "model-not-modelled": (
        "name a model whose architecture vramlint's budget does not model",
        "nothing to change: such a server is not sized (the rules that need no budget still apply)"),
    "model-unresolved": (
        "name a model vramlint could not read",
        "map each model to its Hub id or a config.json with `model-aliases` in .vramlint.yaml"),
}


VENDOR_NAMES = {"amd": "AMD GPU", "intel-gaudi": "Intel Gaudi", "intel-gpu": "Intel GPU", "google-tpu": "Google TPU",
                "aws-neuron": "AWS Neuron", "huawei-ascend": "Huawei Ascend", "rebellions": "Rebellions NPU"}


@dataclass
class UncheckedGroup:
    """Servers left unchecked for one cause."""

    cause: str
    what: str
    fix: str
    servers: list[str] = field(default_factory=list)  # file:line of each server
    items: list[str] = field(default_factory=list)  # distinct models / GPU names / accelerators concerned
    sized: int = 0  # of them, servers that got what they need of a GPU instead (VRL011)

    def text(self) -> str:
        n = len(self.servers)
        head = f"{n} server{'s' if n != 1 else ''} {self.what if n != 1 else _singular(self.what)}"
        if self.items:
            shown = self.items[:3]
            head += f" ({', '.join(shown)}{f' and {len(self.items) - 3} more' if len(self.items) > 3 else ''})"
        if self.sized:
            head += (f" (VRL011 says what {'it needs' if n == 1 else ('each needs' if self.sized == n else f'{self.sized} of them need')}"
                     " of a GPU)")
        return f"{head}: {self.fix}"

    def to_json(self) -> dict[str, Any]:
        return {"cause": self.cause, "count": len(self.servers), "what": self.what, "fix": self.fix,
                "servers": list(self.servers), "items": list(self.items), "gpu_requirement": self.sized,
                "message": self.text()}


def singular(what: str) -> str:
    """A cause's text for one server: "do not say their GPU" -> "does not say its GPU"."""
    return _singular(what)


def _singular(what: str) -> str:
    for plural, single in (("do not say their", "does not say its"), ("do not say which", "does not say which"), ("set no", "sets no"), ("name ", "names "),
                           ("load ", "loads "), ("run on", "runs on"), ("run vLLM-Omni", "runs vLLM-Omni"), ("run vLLM from", "runs vLLM from"), ("run vLLM's CPU", "runs vLLM's CPU"), ("where they run", "where it runs"),
                           ("read their settings", "reads its settings")):
        what = what.replace(plural, single, 1)
    return what


def causes(assessment) -> list[tuple[str, str | None]]:  # noqa: ANN001 - an Assessment
    """(cause, item) pairs that left this server without a budget; empty when it has one."""
    if assessment.budget is not None:
        return []
    server = assessment.server
    out: list[tuple[str, str | None]] = []
    gpu = server.gpu
    if server.args.get("omni") is True:
        return [("vllm-omni", server.model)]
    if server.engine_args_in_code:
        return [("args-in-code", server.model)]
    if any(u.startswith(CPU_BACKEND) for u in assessment.unresolved):
        return [("cpu-backend", None)]
    if gpu is not None and gpu.vendor and gpu.vendor not in ("nvidia", "amd"):
        out.append(("other-accelerator", VENDOR_NAMES.get(gpu.vendor, gpu.vendor)))
    elif assessment.gpu is None:
        if gpu is not None and gpu.type:
            out.append(("gpu-not-in-catalog", gpu.type))
        elif gpu is not None and gpu.vendor == "amd":
            out.append(("amd-gpu-not-said", None))
        else:
            out.append(("gpu-not-said", None))
    if not server.model:
        if any("no command or args" in u for u in server.unchecked):
            out.append(("no-command", None))
        elif server.unread_config:
            out.append(("config-unread", None))
        elif any("is a placeholder that a step before deployment replaces" in u for u in server.unchecked):
            out.append(("model-placeholder", next((u.split(" is a placeholder")[0].rsplit(" ", 1)[-1]
                                                   for u in server.unchecked if " is a placeholder" in u), None)))
        elif server.opaque_args is not None:
            out.append(("model-at-run-time", None))
        else:
            out.append(("no-model", None))
    elif assessment.model is None:
        reason = next((u for u in assessment.unresolved if u.startswith("model")), "")
        low = reason.lower()
        if "local model path" in low or "storage url" in low:
            out.append(("model-path", server.model))
        elif "vramlint's budget does not model" in low:
            what = reason.split(" describes ", 1)[-1].split(", which vramlint's budget does not model", 1)[0]
            out.append(("model-not-modelled", f"{server.model}: {what}"))
        elif "--offline was given" in low:
            out.append(("model-offline-flag", server.model))
        elif "`offline: true` is set" in low:
            out.append(("model-offline-config", server.model))
        elif "hf_hub_offline is set" in low or "transformers_offline is set" in low:
            out.append(("model-offline-env", server.model))
        elif "could not be reached" in low:
            out.append(("model-hub-unreachable", server.model))
        elif any(k in low for k in ("on the hub (", "the hub's config.json", "the hub's answer",
                                     "did not answer in time")):
            out.append(("model-hub-refused", _with_reason(server.model, reason)))
        elif "not in vramlint's catalog" in low:
            out.append(("model-not-found", server.model))
        else:
            out.append(("model-unresolved", _with_reason(server.model, reason)))
    return out


def _with_reason(model: str, reason: str) -> str:
    """"org/x: field num_hidden_layers is -3 ..." - why this model was refused is particular to it, and the
    summary is the only place a check run says it."""
    text = reason.split(": ", 1)[1] if reason.startswith("model ") and ": " in reason else reason
    text = text.split("; add `model-aliases", 1)[0].split("; set HF_TOKEN", 1)[0]
    for prefix in (f"{model!r}: ", f"{model!r} "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return f"{model}: {text}" if text else model


def summarise(assessments, enabled=None) -> list[UncheckedGroup]:  # noqa: ANN001
    """The unchecked servers by cause, largest group first; ``enabled(file)`` leaves out files where VRL010 is off."""
    groups: dict[str, UncheckedGroup] = {}
    seen: dict[str, tuple[set[str], set[str]]] = {}  # each group's servers and items, for the membership tests
    for assessment in assessments:
        server = assessment.server
        if enabled is not None and not enabled(server.file):
            continue
        for cause, item in causes(assessment):
            what, fix = CAUSES[cause]
            group = groups.get(cause)
            if group is None:
                group = groups[cause] = UncheckedGroup(cause, what, fix)
                seen[cause] = (set(), set())
            servers, items = seen[cause]
            where = f"{server.file}:{server.location.line}"
            path = server.location.yaml_path or ""
            if "?values=" in path:  # a chart linted with an overlay: a release of its own on the same template line
                where += f" (with {path.rsplit('?values=', 1)[1]})"
            if where not in servers:
                servers.add(where)
                group.servers.append(where)
                if cause in ("gpu-not-said", "amd-gpu-not-said") and assessment.gpu_requirement is not None:
                    group.sized += 1
            if item and item not in items:
                items.add(item)
                group.items.append(item)
    return sorted(groups.values(), key=lambda g: (-len(g.servers), g.cause))
