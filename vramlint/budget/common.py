"""What every stage of the budget shares: units, reading vLLM's arguments, the model's shape per rank, and
the record each stage returns (its results, the start-up errors and notes it found, and where each input came
from)."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from vramlint.lean_dataclass import dataclass
from vramlint.model import GpuSpec, ModelInfo

GiB = 1 << 30

DTYPE_BYTES = {
    "float16": 2, "half": 2, "fp16": 2, "bfloat16": 2, "bf16": 2, "float32": 4, "float": 4, "fp32": 4,
}
# vLLM's OpenAI server options that no stage of the budget reads (the API server's address, names, logging, TLS,
# CORS, middleware, tool parsing): servers that differ only in these have the same budget, and a run computes it
# once (a fleet of 8,000 compose services on their own ports computed 44 budgets for each).
# tests/test_large_inputs.py checks that compute_budget reads none of them.
FRONTEND_ONLY = frozenset({
    "host", "port", "uds", "api_key", "served_model_name", "uvicorn_log_level", "disable_uvicorn_access_log",
    "allow_credentials", "allowed_origins", "allowed_methods", "allowed_headers", "root_path", "ssl_keyfile",
    "ssl_certfile", "ssl_ca_certs", "ssl_cert_reqs", "response_role", "chat_template", "disable_log_requests",
    "disable_log_stats", "enable_log_requests", "max_log_len", "middleware", "enable_auto_tool_choice",
    "tool_call_parser", "disable_fastapi_docs", "otlp_traces_endpoint",
})


class NotSized(Exception):
    """An input past what vramlint sizes (a value that is no finite number where vLLM takes an integer, CUDA-graph
    capture sizes by the billion): the server's budget is not computed, said once on the flag ``dest`` (VRL010)."""

    def __init__(self, dest: str, why: str) -> None:
        super().__init__(why)
        self.dest = dest
        self.why = why


def sizing_args(args: dict) -> dict:
    """``args`` without the options no budget stage reads (`FRONTEND_ONLY`): what a budget's cache key holds."""
    if FRONTEND_ONLY.isdisjoint(args):
        return args
    return {k: v for k, v in args.items() if k not in FRONTEND_ONLY}


def round_gib(x: float) -> float:
    return round(x / GiB, 2)


def arg_or(args: dict, key: str, default: Any = None) -> Any:
    value = args.get(key)
    return default if value is None else value


def int_arg(args: dict, key: str) -> int | None:
    value = args.get(key)
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(str(value).replace("_", ""))
    except ValueError:
        return None


def config_arg(args: dict, key: str) -> dict | None:
    """A JSON-valued argument (``--compilation-config``, ``--speculative-config``, ``--limit-mm-per-prompt``) as
    vLLM reads it: the mapping given, or its JSON text parsed; None when it is neither (unset, not JSON, a list)."""
    value = args.get(key)
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def per_stage_text(values: list[str]) -> str:
    """One figure per pipeline stage, "a/b/c"; past 8 stages a run of equal figures is said once with its count
    ("0.00 x 4,084"), so that 4,096 stages make a line, not 20 KB of text in every report."""
    if len(values) <= 8:
        return "/".join(values)
    from itertools import groupby

    runs = []
    for value, run in groupby(values):
        count = sum(1 for _ in run)
        runs.append(value if count == 1 else f"{value} x {count:,}")
    return "/".join(runs)


def truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("1", "true", "yes", "on")


def parse_len(value: Any) -> int | None:
    """``32768``, ``"32k"``, ``"1M"`` (vLLM accepts k/m suffixes, 1k = 1024 since 0.10) -> int, else None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip().lower()
    mult = 1
    if text.endswith("k"):
        mult, text = 1024, text[:-1]
    elif text.endswith("m"):
        mult, text = 1024 * 1024, text[:-1]
    try:
        return int(float(text) * mult)
    except (ValueError, OverflowError):  # not a number, or inf/nan (`1e999`): vLLM's parser refuses both
        return None


def device_name(gpu: GpuSpec) -> str:
    from vramlint import gpus

    return gpus.device_name(gpu.name)


def cc_text(gpu: GpuSpec) -> str:
    return f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}"


def vllm_image(image: str | None) -> bool:
    """Whether the container runs a vLLM image (the official one or one built on it), not a bare pip install."""
    return bool(image) and "vllm" in str(image).lower()


def kv_heads_per_rank(model: ModelInfo, tp: int) -> int:
    """``ModelConfig.get_num_kv_heads``: KV heads split over TP ranks, replicated when fewer than ranks."""
    total = model.num_kv_heads or model.num_attention_heads or 1
    return max(1, total // max(1, tp))


def head_dim(model: ModelInfo) -> int:
    if model.head_dim:
        return model.head_dim
    return model.hidden_size // max(1, model.num_attention_heads)


def padded_vocab(vocab: int) -> int:
    pad = 64
    return -(-vocab // pad) * pad if vocab else 0


@dataclass(kw_only=True)
class StageResult:
    """What a stage found besides its numbers, in the order vLLM meets them: start-up errors (vLLM's text,
    ``{"code", "message", "arg"}``), notes, and ``sources``: where each value the stage settled came from
    (merged into :attr:`vramlint.model.Budget.sources`; a later stage may restate an earlier stage's entry)."""

    errors: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

