"""The Hub path of model resolution, against a real HTTP server on 127.0.0.1 standing in for the Hub.

vramlint's Hub client (vramlint/hub.py) is pointed at it through HF_ENDPOINT. The server answers the
requests the Hub serves: GET ``/{repo}/resolve/{revision}/{file}`` (with ETag / X-Repo-Commit headers, Range
reads of safetensors headers). No test touches the real network. Hostile answers: test_hub_hostile.py.
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from vramlint.model import ResolveOptions
from vramlint.models import resolve_model

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SECRET = "hf_test_secret_token_do_not_print_12345"

TINY_LLAMA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
    "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
}


def tiny_llama_tensors() -> dict[str, tuple[str, list[int]]]:
    h, i, v, kv = 256, 512, 1000, 2 * 64
    tensors = {"model.embed_tokens.weight": ("BF16", [v, h]), "lm_head.weight": ("BF16", [v, h]),
               "model.norm.weight": ("BF16", [h])}
    for layer in range(2):
        p = f"model.layers.{layer}."
        tensors.update({
            p + "self_attn.q_proj.weight": ("BF16", [h, h]), p + "self_attn.k_proj.weight": ("BF16", [kv, h]),
            p + "self_attn.v_proj.weight": ("BF16", [kv, h]), p + "self_attn.o_proj.weight": ("BF16", [h, h]),
            p + "mlp.gate_proj.weight": ("BF16", [i, h]), p + "mlp.up_proj.weight": ("BF16", [i, h]),
            p + "mlp.down_proj.weight": ("BF16", [h, i]), p + "input_layernorm.weight": ("BF16", [h]),
            p + "post_attention_layernorm.weight": ("BF16", [h]),
        })
    return tensors


def safetensors_bytes(tensors: dict[str, tuple[str, list[int]]]) -> bytes:
    """A safetensors file: header with offsets, then (zero) data."""
    header: dict = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        n = 2
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


class FakeHub:
    """Serves repos as {repo_id: {filename: bytes}}; gated repos answer 401 like the Hub does."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, bytes]] = {}
        self.gated: set[str] = set()
        self.delay_s = 0.0
        self.requests: list[tuple[str, str, dict]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def _serve(self, head: bool) -> None:
                hub.requests.append((self.command, self.path, dict(self.headers)))
                if hub.delay_s:
                    time.sleep(hub.delay_s)
                parts = self.path.split("?")[0].strip("/").split("/")
                # /{org}/{name}/resolve/{revision}/{filename}
                if len(parts) >= 5 and parts[2] == "resolve":
                    repo, filename = "/".join(parts[:2]), "/".join(parts[4:])
                    if repo in hub.gated:
                        self.send_response(401)
                        self.send_header("X-Error-Code", "GatedRepo")
                        self.send_header("X-Error-Message", "Access to this model is restricted.")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    files = hub.repos.get(repo)
                    if files is None:
                        self._error(404, "RepoNotFound")
                        return
                    body = files.get(filename)
                    if body is None:
                        self._error(404, "EntryNotFound")
                        return
                    etag = hashlib.sha256(body).hexdigest()
                    status, payload = 200, body
                    rng = self.headers.get("Range")
                    if rng and rng.startswith("bytes="):
                        start_s, _, end_s = rng[6:].partition("-")
                        start = int(start_s or 0)
                        end = min(int(end_s) if end_s else len(body) - 1, len(body) - 1)
                        status, payload = 206, body[start:end + 1]
                        self.send_response(status)
                        self.send_header("Content-Range", f"bytes {start}-{end}/{len(body)}")
                    else:
                        self.send_response(status)
                    self.send_header("ETag", f'"{etag}"')
                    self.send_header("X-Repo-Commit", COMMIT)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if not head:
                        self.wfile.write(payload)
                    return
                self._error(404, "RepoNotFound")

            def _error(self, code: int, kind: str) -> None:
                self.send_response(code)
                self.send_header("X-Error-Code", kind)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self):  # noqa: N802
                self._serve(head=True)

            def do_GET(self):  # noqa: N802
                self._serve(head=False)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a client that gave up (the timeout tests) leaves a broken pipe: expected

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hub(monkeypatch, tmp_path):
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-home" / "hub"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    with FakeHub() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


def options(**kw) -> ResolveOptions:
    return ResolveOptions(allow_network=True, hub_timeout_s=kw.pop("hub_timeout_s", 10.0), **kw)


def test_hub_config_and_safetensors_header_give_exact_weight_bytes(hub):
    tensors = tiny_llama_tensors()
    hub.repos["acme/tiny-llama"] = {"config.json": json.dumps(TINY_LLAMA).encode(),
                                    "model.safetensors": safetensors_bytes(tensors)}
    info, reason = resolve_model("acme/tiny-llama", options())
    assert reason is None
    assert info.num_layers == 2 and info.num_kv_heads == 2 and info.head_dim == 64
    expected = sum(2 * _prod(shape) for _, shape in tensors.values())
    assert info.weight_bytes == expected
    assert info.weight_bytes_source == "safetensors metadata"
    assert info.source.startswith(f"hub ({hub.url}")
    # only the header of the weights file was read, with Range requests
    weight_gets = [r for r in hub.requests if r[0] == "GET" and r[1].endswith("model.safetensors")]
    assert weight_gets and all("Range" in r[2] or "range" in r[2] for r in weight_gets)


def test_hub_answer_is_cached_on_disk_and_reused_without_requests(hub, tmp_path):
    hub.repos["acme/tiny-llama"] = {"config.json": json.dumps(TINY_LLAMA).encode()}
    first, reason = resolve_model("hf://acme/tiny-llama", options())
    assert reason is None and first.weight_bytes_source == "computed from architecture"
    assert list((tmp_path / "cache" / "vramlint" / "hub").glob("*.json"))
    seen = len(hub.requests)
    second, reason = resolve_model("acme/tiny-llama", options())
    assert reason is None and len(hub.requests) == seen
    assert "cached" in second.source and second.param_count == first.param_count


def test_gated_repo_is_unresolved_with_hf_token_advice(hub, capsys):
    hub.gated.add("acme/gated-model")
    info, reason = resolve_model("acme/gated-model", options())
    assert info is None
    assert "HF_TOKEN" in reason and "gated" in reason and "model-aliases" in reason


def test_refused_token_is_never_printed(hub, monkeypatch, capsys, caplog):
    hub.gated.add("acme/gated-model")
    monkeypatch.setenv("HF_TOKEN", SECRET)
    info, reason = resolve_model("acme/gated-model", options())
    assert info is None and "refused" in reason
    # the token was sent to the (fake) Hub, but appears nowhere in what vramlint says or logs
    assert any(SECRET in str(r[2].get("authorization", r[2].get("Authorization", ""))) for r in hub.requests)
    out = capsys.readouterr()
    assert SECRET not in reason + out.out + out.err + caplog.text


def test_unknown_repo_says_not_found_and_how_to_fix(hub):
    info, reason = resolve_model("acme/does-not-exist", options())
    assert info is None
    assert "not found" in reason and "model-aliases" in reason


def test_slow_hub_is_abandoned_within_the_timeout(hub):
    hub.repos["acme/slow"] = {"config.json": json.dumps(TINY_LLAMA).encode()}
    hub.delay_s = 3.0
    started = time.monotonic()
    info, reason = resolve_model("acme/slow", options(hub_timeout_s=0.5))
    elapsed = time.monotonic() - started
    assert info is None and elapsed < 2.0
    assert "0.5 s" in reason or "timed out" in reason


def test_offline_never_touches_the_server(hub, monkeypatch):
    hub.repos["acme/tiny-llama"] = {"config.json": json.dumps(TINY_LLAMA).encode()}
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    info, reason = resolve_model("acme/tiny-llama", options())
    assert info is None and "HF_HUB_OFFLINE" in reason
    assert hub.requests == []


def test_network_off_never_touches_the_server(hub):
    hub.repos["acme/tiny-llama"] = {"config.json": json.dumps(TINY_LLAMA).encode()}
    info, reason = resolve_model("acme/tiny-llama", ResolveOptions(allow_network=False))
    # the message names what the user did (the default cause of allow_network=False is --offline)
    assert info is None and "--offline was given" in reason and "run without --offline" in reason
    assert "HF_HUB_OFFLINE" not in reason
    assert hub.requests == []


def test_catalog_model_never_touches_the_server(hub):
    info, reason = resolve_model("meta-llama/Llama-3.1-8B-Instruct", options())
    assert reason is None and info.source.startswith("catalog (")
    assert hub.requests == []


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def test_a_hub_that_timed_out_is_not_asked_again_in_the_same_run(hub):
    # Without network every model outside the catalog would wait the full timeout; one wait is enough.
    hub.repos["acme/slow"] = {"config.json": json.dumps(TINY_LLAMA).encode()}
    hub.repos["acme/other"] = {"config.json": json.dumps(TINY_LLAMA).encode()}
    hub.delay_s = 3.0
    resolve_model("acme/slow", options(hub_timeout_s=0.5))
    asked = len(hub.requests)
    started = time.monotonic()
    info, reason = resolve_model("acme/other", options(hub_timeout_s=0.5))
    assert info is None and time.monotonic() - started < 0.2
    assert "could not be reached" in reason
    assert len(hub.requests) == asked
