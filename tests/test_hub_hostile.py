"""The Hub as untrusted input: a real HTTP server on 127.0.0.1 (HF_ENDPOINT) that answers the way a broken or
hostile Hub could, and what vramlint does with each answer.

Nothing here reaches the network. Each server runs on an ephemeral port; the caches are under tmp_path.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.test_models_resolve_hub import TINY_LLAMA, safetensors_bytes, tiny_llama_tensors
from vramlint import hub as hub_client
from vramlint.model import ResolveOptions
from vramlint.models import begin_run, hub_notes, resolve_model, resolve_models

SECRET = "hf_planted_secret_token_9f8e7d6c5b4a"
ROOT = Path(__file__).resolve().parent.parent


class HostileHub:
    """Answers each path with the handler registered for it: ``routes[path](request)`` writes the answer."""

    def __init__(self) -> None:
        self.routes: dict[str, object] = {}
        self.requests: list[tuple[str, dict]] = []
        self.sent: dict[str, int] = {}  # path -> body bytes written before the client went away
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802
                hub.requests.append((self.path, dict(self.headers)))
                route = hub.routes.get(self.path.split("?")[0])
                if route is None:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                try:
                    route(self)
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
                    pass  # the client stopped reading: what these tests want

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def file(self, repo: str, name: str, route, revision: str = "main") -> None:
        self.routes[f"/{repo}/resolve/{revision}/{name}"] = route

    def __enter__(self) -> HostileHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def body(data: bytes, status: int = 200, headers: dict | None = None):
    def route(req: BaseHTTPRequestHandler) -> None:
        rng = req.headers.get("Range")
        payload, code = data, status
        req.send_response(code if not rng else 206)
        if rng:
            start, _, end = rng[6:].partition("-")
            payload = data[int(start):int(end) + 1]
        for key, value in (headers or {}).items():
            req.send_header(key, value)
        req.send_header("Content-Length", str(len(payload)))
        req.end_headers()
        req.wfile.write(payload)
    return route


def config(**over) -> bytes:
    return json.dumps({**TINY_LLAMA, **over}).encode()


def endless(hub: HostileHub, path_key: str, total: int, declare_length: bool, ignore_range: bool = True):
    """A body of ``total`` zero bytes written from one 64 KiB buffer (the test never holds it)."""
    chunk = b"\0" * 65536

    def route(req: BaseHTTPRequestHandler) -> None:
        req.send_response(200)
        if declare_length:
            req.send_header("Content-Length", str(total))
        else:
            req.send_header("Connection", "close")
        req.end_headers()
        sent = 0
        hub.sent[path_key] = 0
        while sent < total:
            req.wfile.write(chunk)
            sent += len(chunk)
            hub.sent[path_key] = sent
    return route


@pytest.fixture
def env(monkeypatch, tmp_path):
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "http_proxy",
                "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-home" / "hub"))
    begin_run()
    yield tmp_path
    begin_run()


@pytest.fixture
def hub(env, monkeypatch):
    with HostileHub() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


def options(**kw) -> ResolveOptions:
    return ResolveOptions(allow_network=True, hub_timeout_s=kw.pop("hub_timeout_s", 5.0), **kw)


def cache_files(tmp_path: Path) -> list[Path]:
    return [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]


# ------------------------------------------------------------------------------ numbers and types

BAD_CONFIGS = [
    ("num_hidden_layers", b'{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, '
     b'"num_attention_heads": 4, "num_hidden_layers": ' + b"9" * 400 + b"}"),
    ("num_hidden_layers", config(num_hidden_layers=-3)),
    ("num_hidden_layers", config(num_hidden_layers=10**12)),
    ("num_hidden_layers", config(num_hidden_layers=True)),
    ("hidden_size", config(hidden_size="4096")),
    ("num_attention_heads", config(num_attention_heads=[4])),
    ("max_position_embeddings", config(max_position_embeddings=float("inf"))),  # json.dumps writes Infinity
    ("max_position_embeddings", config(max_position_embeddings=float("nan"))),
    ("intermediate_size", config(intermediate_size=512.5)),
    ("rope_scaling.factor", config(rope_scaling={"type": "linear", "factor": 1e308 * 10})),
    ("text_config.num_hidden_layers", config(text_config={**TINY_LLAMA, "num_hidden_layers": "two"})),
    ("quantization_config.weight_block_size", config(quantization_config={"quant_method": "fp8",
                                                                          "weight_block_size": ["x", 128]})),
    ("nested", b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
    ("nested", b'{"a": ' + b'{"b": ' * 200 + b"1" + b"}" * 200 + b"}"),
    ("digits", b'{"num_hidden_layers": ' + b"7" * 5000 + b"}"),
    ("JSON object", b'[1, 2, 3]'),
    ("not valid JSON", b'{"num_hidden_layers": 2,'),
]


@pytest.mark.parametrize("field,raw", BAD_CONFIGS, ids=[f"{i}-{f}" for i, (f, _) in enumerate(BAD_CONFIGS)])
def test_bad_config_is_unresolved_naming_the_field_and_never_cached(hub, env, field, raw):
    hub.file("acme/bad", "config.json", body(raw))
    info, reason = resolve_model("acme/bad", options())
    assert info is None
    assert field in reason, reason
    assert "model-aliases" in reason
    assert not list((env / "cache" / "vramlint" / "hub").glob("*.json")) if (env / "cache").exists() else True
    # a later run, offline, neither crashes nor finds a poisoned cache entry
    begin_run()
    info, reason = resolve_model("acme/bad", ResolveOptions(allow_network=False))
    assert info is None and "--offline" in reason


def test_bad_answer_then_offline_run_through_the_cli_does_not_crash(hub, env, tmp_path):
    hub.file("acme/bad", "config.json", body(config(num_hidden_layers="9" * 400)))
    manifest = write_manifest(tmp_path, "acme/bad")
    first = run_vramlint(manifest, tmp_path, {"HF_ENDPOINT": hub.url})
    assert first.returncode in (0, 1), first.stderr
    assert "num_hidden_layers" in first.stdout
    second = run_vramlint(manifest, tmp_path, {"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "1"})
    assert second.returncode in (0, 1), second.stderr
    assert "HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) kept vramlint from asking" in second.stdout
    assert "Traceback" not in second.stderr


@pytest.mark.parametrize("content", [
    b"garbage", b'{"format": 2, "fetched_at": 1e400}', b"[" * 50_000,
    json.dumps({"format": 2, "endpoint": "E", "repo": "acme/x", "revision": "main", "fetched_at": 1,
                "config": {**TINY_LLAMA, "num_hidden_layers": 10**400}}).encode(),
])
def test_a_corrupt_cache_entry_is_ignored_offline(env, monkeypatch, content):
    from vramlint.models import _hub_cache_file

    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    path = _hub_cache_file("http://127.0.0.1:9", "acme/x", None)
    path.parent.mkdir(parents=True)
    path.write_bytes(content.replace(b'"E"', b'"http://127.0.0.1:9"'))
    info, reason = resolve_model("acme/x", ResolveOptions(allow_network=False))
    assert info is None and "not usable" in reason


# ------------------------------------------------------------------------------ sizes

def test_a_1_gb_config_with_its_length_declared_is_refused_unread(hub):
    hub.file("acme/huge", "config.json", endless(hub, "config", 2**30, declare_length=True))
    started = time.monotonic()
    info, reason = resolve_model("acme/huge", options())
    assert info is None and "cap" in reason
    assert time.monotonic() - started < 5
    time.sleep(0.2)
    assert hub.sent.get("config", 0) < 64 * 2**20  # what the socket buffers took, not the gigabyte


def test_a_1_gb_config_without_a_length_is_read_up_to_the_cap_only(hub, env):
    hub.file("acme/huge", "config.json", endless(hub, "config", 2**30, declare_length=False))
    started = time.monotonic()
    info, reason = resolve_model("acme/huge", options())
    assert info is None and f"{hub_client.CONFIG_CAP:,}-byte cap" in reason
    assert time.monotonic() - started < 5
    time.sleep(0.2)
    assert hub.sent.get("config", 0) < 64 * 2**20
    assert not cache_files(env)


def test_an_absurd_safetensors_header_length_is_refused_and_weights_are_computed(hub):
    hub.file("acme/tiny", "config.json", body(config()))
    hub.file("acme/tiny", "model.safetensors", body(struct.pack("<Q", 2**60) + b"{}" * 10))
    info, reason = resolve_model("acme/tiny", options())
    assert reason is None and info.weight_bytes_source == "computed from architecture"
    assert "header" in info.source and "cap" in info.source
    ranges = [h.get("Range") for p, h in hub.requests if p.endswith("model.safetensors")]
    assert ranges == ["bytes=0-100000"]  # the absurd length was never asked for


def test_a_server_that_ignores_range_is_cut_at_the_range(hub):
    hub.file("acme/tiny", "config.json", body(config()))
    hub.file("acme/tiny", "model.safetensors", endless(hub, "weights", 2**30, declare_length=True))
    started = time.monotonic()
    info, reason = resolve_model("acme/tiny", options())
    # zeros: a header length of 0 is not a safetensors file; the weights are computed
    assert reason is None and info.weight_bytes_source == "computed from architecture"
    assert time.monotonic() - started < 5
    time.sleep(0.2)
    assert hub.sent.get("weights", 0) < 64 * 2**20


def test_safetensors_header_with_hostile_shapes_is_refused(hub):
    tensors = tiny_llama_tensors()
    good = safetensors_bytes(tensors)
    header = json.dumps({"w": {"dtype": "BF16", "shape": [10**30, 2], "data_offsets": [0, 0]}}).encode()
    hub.file("acme/tiny", "config.json", body(config()))
    hub.file("acme/tiny", "model.safetensors", body(struct.pack("<Q", len(header)) + header))
    info, reason = resolve_model("acme/tiny", options())
    assert reason is None and info.weight_bytes_source == "computed from architecture"
    assert "dimension" in info.source
    assert good  # the well-formed file of the same model is read exactly in test_models_resolve_hub


def test_a_sharded_model_reads_every_shard_header(hub):
    tensors = tiny_llama_tensors()
    names = sorted(tensors)
    half = len(names) // 2
    shards = {"model-00001-of-00002.safetensors": {n: tensors[n] for n in names[:half]},
              "model-00002-of-00002.safetensors": {n: tensors[n] for n in names[half:]}}
    index = {"weight_map": {n: s for s, part in shards.items() for n in part}}
    hub.file("acme/sharded", "config.json", body(config()))
    hub.file("acme/sharded", "model.safetensors.index.json", body(json.dumps(index).encode()))
    for shard, part in shards.items():
        hub.file("acme/sharded", shard, body(safetensors_bytes(part)))
    info, reason = resolve_model("acme/sharded", options())
    assert reason is None and info.weight_bytes_source == "safetensors metadata"
    assert info.weight_bytes == sum(2 * _prod(s) for _, s in tensors.values())


def test_shard_names_with_path_tricks_are_not_requested(hub):
    index = {"weight_map": {"a": "../../../etc/passwd", "b": "model-1.safetensors"}}
    hub.file("acme/sharded", "config.json", body(config()))
    hub.file("acme/sharded", "model.safetensors.index.json", body(json.dumps(index).encode()))
    info, reason = resolve_model("acme/sharded", options())
    assert reason is None and info.weight_bytes_source == "computed from architecture"
    assert not any("passwd" in p or "%2F" in p for p, _ in hub.requests)


# ------------------------------------------------------------------------------ redirects and time

def test_redirect_to_another_port_is_not_followed_and_gets_no_token(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    with HostileHub() as other:
        other.file("acme/tiny", "config.json", body(config()))
        hub.file("acme/tiny", "config.json", body(b"", 302, {"Location": f"{other.url}/acme/tiny/resolve/main/config.json"}))
        info, reason = resolve_model("acme/tiny", options())
        assert info is None and "redirected" in reason and "not followed" in reason
        assert other.requests == []
    assert SECRET not in reason


@pytest.mark.parametrize("location", ["http://[::1" + ":" * 50 + "/x", "http://127.0.0.1:99999/x"])
def test_redirect_to_a_location_that_is_no_url_is_refused_not_a_crash(hub, location):
    # urljoin raises ValueError on a malformed IPv6 host and reading the port of one past 65535 does too
    hub.file("acme/badloc", "config.json", body(b"", 302, {"Location": location}))
    info, reason = resolve_model("acme/badloc", options())
    assert info is None and "not a valid URL" in reason and "not followed" in reason
    assert len(hub.requests) == 1


def test_redirect_loop_ends(hub):
    hub.file("acme/loop", "config.json", body(b"", 302, {"Location": "/acme/loop/resolve/main/config.json"}))
    started = time.monotonic()
    info, reason = resolve_model("acme/loop", options())
    assert info is None and "loop" in reason
    assert time.monotonic() - started < 3 and len(hub.requests) <= hub_client.MAX_REDIRECTS + 1


def test_redirect_chain_is_bounded(hub):
    for i in range(20):
        hub.routes[f"/hop/{i}"] = body(b"", 307, {"Location": f"/hop/{i + 1}"})
    hub.file("acme/chain", "config.json", body(b"", 307, {"Location": "/hop/0"}))
    info, reason = resolve_model("acme/chain", options())
    assert info is None and f"more than {hub_client.MAX_REDIRECTS} redirects" in reason
    assert len(hub.requests) == hub_client.MAX_REDIRECTS + 1


def test_same_host_redirect_of_a_renamed_repo_is_followed_with_the_token(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    hub.file("acme/old", "config.json", body(b"", 307, {"Location": "/acme/new/resolve/main/config.json"}))
    hub.file("acme/new", "config.json", body(config()))
    info, reason = resolve_model("acme/old", options())
    assert reason is None and info.num_layers == 2
    assert all(h.get("Authorization") == f"Bearer {SECRET}" for _, h in hub.requests)


def drip(data: bytes, pause_s: float, header_first: bool = True):
    def route(req: BaseHTTPRequestHandler) -> None:
        if header_first:
            req.send_response(200)
            req.send_header("Content-Length", str(len(data)))
            req.end_headers()
            for i in range(len(data)):
                req.wfile.write(data[i:i + 1])
                req.wfile.flush()
                time.sleep(pause_s)
        else:
            for ch in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000:
                req.wfile.write(bytes([ch]))
                req.wfile.flush()
                time.sleep(pause_s)
    return route


@pytest.mark.parametrize("header_first", [True, False], ids=["slow-body", "slow-headers"])
def test_a_slow_drip_is_cut_at_the_deadline(hub, header_first):
    hub.file("acme/slow", "config.json", drip(config(), 0.05, header_first))
    started = time.monotonic()
    info, reason = resolve_model("acme/slow", options(hub_timeout_s=1.0))
    elapsed = time.monotonic() - started
    assert info is None and elapsed < 2.5, (elapsed, reason)
    assert "1 s" in reason


def test_a_trickle_is_cut_after_a_second_even_with_a_long_deadline(hub):
    hub.file("acme/slow", "config.json", drip(config(), 0.05))
    started = time.monotonic()
    info, reason = resolve_model("acme/slow", options(hub_timeout_s=30.0))
    assert info is None and "trickled" in reason
    assert time.monotonic() - started < 2.5


def test_headers_that_never_end_are_cut_at_the_answer_timeout(hub, monkeypatch):
    monkeypatch.setattr(hub_client, "ANSWER_TIMEOUT_S", 0.5)
    hub.file("acme/slow", "config.json", drip(config(), 0.02, header_first=False))
    started = time.monotonic()
    info, reason = resolve_model("acme/slow", options(hub_timeout_s=30.0))
    assert info is None and "0.5 s" in reason
    assert time.monotonic() - started < 1.5


def test_a_hostile_hub_costs_a_run_its_hub_budget_whatever_the_number_of_models(hub, monkeypatch):
    # each answer comes at 10 KB/s, fast enough not to be cut as a trickle: 200 KB take 20 s a model
    monkeypatch.setattr(hub_client, "RUN_BUDGET_S", 1.5)
    body = config()[:-1] + b" " * 200_000 + b"}"

    def slow(req: BaseHTTPRequestHandler) -> None:
        req.send_response(200)
        req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        for i in range(0, len(body), 1000):
            req.wfile.write(body[i:i + 1000])
            req.wfile.flush()
            time.sleep(0.1)

    names = [f"acme/slow-{i}" for i in range(8)]
    for name in names:
        hub.file(name, "config.json", slow)
    begin_run()
    started = time.monotonic()
    results = resolve_models(names, options(hub_timeout_s=30.0))
    elapsed = time.monotonic() - started
    assert elapsed < 3.0, elapsed
    reasons = [reason for _, reason in results.values()]
    assert all(info is None for info, _ in results.values())
    assert any("1.5 s for Hub requests are spent" in r for r in reasons), reasons


def test_weights_not_read_for_a_slow_connection_are_not_cached(hub, env):
    hub.file("acme/tiny", "config.json", body(config()))
    hub.file("acme/tiny", "model.safetensors", drip(safetensors_bytes(tiny_llama_tensors()), 0.05))
    info, reason = resolve_model("acme/tiny", options())
    assert reason is None and info.weight_bytes_source == "computed from architecture"
    assert "safetensors headers not read" in info.source
    assert not list((env / "cache" / "vramlint" / "hub").glob("*.json"))  # asked again next run
    hub.file("acme/tiny", "model.safetensors", body(safetensors_bytes(tiny_llama_tensors())))
    begin_run()
    info, reason = resolve_model("acme/tiny", options())
    assert info.weight_bytes_source == "safetensors metadata"
    assert list((env / "cache" / "vramlint" / "hub").glob("*.json"))


def test_a_header_over_the_cap_is_refused_unrequested(hub):
    length = hub_client.SAFETENSORS_HEADER_CAP + 1
    hub.file("acme/tiny", "config.json", body(config()))
    hub.file("acme/tiny", "model.safetensors", body(struct.pack("<Q", length) + b"{" + b" " * 200_000))
    info, reason = resolve_model("acme/tiny", options())
    assert reason is None and info.weight_bytes_source == "computed from architecture"
    assert f"{length:,}-byte header" in info.source
    assert [h.get("Range") for p, h in hub.requests if p.endswith("model.safetensors")] == ["bytes=0-100000"]


# ------------------------------------------------------------------------------ names

@pytest.mark.parametrize("name", [
    "acme/model@../../../x", "acme/model@..", "acme/model@/etc/passwd", "acme/model@main/../../x",
    "acme/model@refs/pr/../../x", "acme/model@ma\nin", "acme/model@main\x00", "acme/model:../../x",
    "hf://acme/model@%2e%2e%2fx", "acme/model@" + "a" * 300,
])
def test_revisions_with_path_tricks_are_refused_before_any_request(hub, env, name):
    info, reason = resolve_model(name, options())
    assert info is None and "revision" in reason
    assert hub.requests == []
    written = [p for p in env.rglob("*") if p.is_file()]
    assert written == [], written


def test_a_pull_request_revision_is_sent_encoded(hub):
    hub.routes["/acme/tiny/resolve/refs%2Fpr%2F3/config.json"] = body(config())
    info, reason = resolve_model("acme/tiny@refs/pr/3", options())
    assert reason is None and info.num_layers == 2


# ------------------------------------------------------------------------------ the token

def test_a_hub_that_echoes_the_token_is_refused(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    hub.file("acme/echo", "config.json", body(config(model_type=SECRET, architectures=[SECRET])))
    info, reason = resolve_model("acme/echo", options())
    assert info is None and "token" in reason and SECRET not in reason


def write_manifest(tmp_path: Path, *models: str) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir(exist_ok=True)
    for i, model in enumerate(models):
        (folder / f"d{i}.yaml").write_text(f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: m{i}}}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.2
        args: ["--model", "{model}"]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
""")
    return folder


def run_vramlint(folder: Path, tmp_path: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    full.update({"XDG_CACHE_HOME": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf-home"),
                 "PYTHONPATH": str(ROOT), **env})
    return subprocess.run([sys.executable, "-m", "vramlint", "check", str(folder), *extra], capture_output=True,
                          text=True, env=full, cwd=tmp_path, timeout=120)


def test_planted_token_appears_in_no_report_stderr_or_cache(hub, tmp_path):
    hub.file("acme/tiny", "config.json", body(config()))
    hub.file("acme/tiny", "model.safetensors", body(safetensors_bytes(tiny_llama_tensors())))
    hub.file("acme/echo", "config.json", body(config(model_type=SECRET)))
    hub.file("acme/gated", "config.json", body(SECRET.encode(), 401, {"X-Error-Code": "GatedRepo",
                                                                       "X-Error-Message": SECRET}))
    with HostileHub() as other:
        hub.file("acme/away", "config.json", body(b"", 302, {"Location": f"{other.url}/{SECRET}"}))
        manifest = write_manifest(tmp_path, "acme/tiny", "acme/echo", "acme/gated", "acme/away")
        outputs = []
        for fmt in ("text", "json", "sarif", "github", "markdown"):
            outputs += ["--output-format", fmt, "--output-file", str(tmp_path / f"report.{fmt}")]
        proc = run_vramlint(manifest, tmp_path, {"HF_ENDPOINT": hub.url, "HF_TOKEN": SECRET}, *outputs)
        assert proc.returncode in (0, 1), proc.stderr
        assert not any(SECRET in json.dumps(h) for _, h in other.requests)
    # the token went to the Hub itself (that is what it is for), and nowhere else
    assert any(h.get("Authorization") == f"Bearer {SECRET}" for _, h in hub.requests)
    reports = {fmt: (tmp_path / f"report.{fmt}").read_text() for fmt in ("text", "json", "sarif", "github", "markdown")}
    assert "acme/gated" in reports["text"] and "gated" in reports["text"]
    for fmt, text in reports.items():
        assert SECRET not in text, fmt
    assert SECRET not in proc.stdout + proc.stderr
    files = cache_files(tmp_path)
    assert files  # acme/tiny was cached
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path


def test_the_token_stored_by_a_login_is_used_like_huggingface_hub_does(hub, env):
    (env / "hf-home").mkdir(exist_ok=True)
    (env / "hf-home" / "token").write_text(SECRET + "\n")
    hub.file("acme/tiny", "config.json", body(config()))
    info, reason = resolve_model("acme/tiny", options())
    assert reason is None
    assert [h.get("Authorization") for _, h in hub.requests] == [f"Bearer {SECRET}"] * len(hub.requests)
    for path in cache_files(env):
        assert SECRET.encode() not in path.read_bytes()


# ------------------------------------------------------------------------------ the cache's age

def test_cached_answer_has_an_age_and_can_be_refreshed(hub, env):
    hub.file("acme/tiny", "config.json", body(config()))
    info, reason = resolve_model("acme/tiny", options())
    assert reason is None
    asked = len(hub.requests)
    cached, _ = resolve_model("acme/tiny", options())
    assert len(hub.requests) == asked and "cached 0 s ago" in cached.source
    resolve_model("acme/tiny", options(refresh_hub_cache=True))
    assert len(hub.requests) > asked
    asked = len(hub.requests)
    resolve_model("acme/tiny", options(hub_cache_max_age_days=0))
    assert len(hub.requests) > asked
    stored = json.loads(next((env / "cache" / "vramlint" / "hub").glob("*.json")).read_text())
    assert abs(stored["fetched_at"] - time.time()) < 60


def test_an_expired_entry_is_still_used_when_the_hub_cannot_be_reached(hub, env, monkeypatch):
    hub.file("acme/tiny", "config.json", body(config()))
    resolve_model("acme/tiny", options())
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    hub.routes.clear()
    hub.server.shutdown()
    hub.server.server_close()
    begin_run()
    info, reason = resolve_model("acme/tiny", options(hub_cache_max_age_days=0))
    assert reason is None and "not refreshed" in info.source and "could not be reached" in info.source


# ------------------------------------------------------------------------------ no network

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def blackhole():
    """A socket that listens and never accepts: connections complete in the kernel, no answer ever comes."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


@pytest.mark.parametrize("where", ["closed", "blackhole"])
def test_an_unreachable_hub_costs_one_short_wait_for_five_models(env, monkeypatch, blackhole, where):
    monkeypatch.setattr(hub_client, "CONNECT_TIMEOUT_S", 0.5)
    monkeypatch.setattr(hub_client, "ANSWER_TIMEOUT_S", 0.5)
    endpoint = blackhole if where == "blackhole" else f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    names = [f"acme/unknown-{i}" for i in range(5)]
    started = time.monotonic()
    results = resolve_models(names, options())
    elapsed = time.monotonic() - started
    assert elapsed < 1.5, elapsed  # one wait of at most 0.5 + 0.5 s, not five
    reasons = {name: reason for name, (_, reason) in results.items()}
    assert all("could not be reached" in r for r in reasons.values())
    assert len({r.replace(n, "") for n, r in reasons.items()}) == 1  # the same words for each
    notes = hub_notes()
    assert len(notes) == 1 and "5 models outside the catalog were not resolved" in notes[0]
    assert "HF_HUB_OFFLINE=1" in notes[0] and "--offline" in notes[0]


def test_the_cli_says_the_hub_note_once(env, tmp_path):
    manifest = write_manifest(tmp_path, *(f"acme/unknown-{i}" for i in range(5)))
    started = time.monotonic()
    proc = run_vramlint(manifest, tmp_path, {"HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"})
    assert time.monotonic() - started < 20
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stderr.count("could not be reached") == 1
    assert "5 models outside the catalog" in proc.stderr
    assert "the Hugging Face Hub could not be reached" in proc.stdout  # the end-of-run summary's cause
    assert "run without --offline" not in proc.stdout  # the user did not pass it: nothing tells them to remove it


@pytest.mark.parametrize("how,expected", [
    (("--offline",), "--offline kept vramlint from asking the Hugging Face Hub (acme/unknown): run without --offline"),
    ((), "HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) kept vramlint from asking the Hugging Face Hub (acme/unknown): "
         "unset HF_HUB_OFFLINE"),
])
def test_messages_name_what_the_user_did(env, tmp_path, how, expected):
    manifest = write_manifest(tmp_path, "acme/unknown")
    extra_env = {"HF_ENDPOINT": "http://127.0.0.1:9"}
    if not how:
        extra_env["HF_HUB_OFFLINE"] = "1"
    proc = run_vramlint(manifest, tmp_path, extra_env, *how)
    assert expected in proc.stdout, proc.stdout
    assert "could not be reached" not in proc.stderr


def test_offline_in_the_configuration_file_is_named(env, tmp_path):
    manifest = write_manifest(tmp_path, "acme/unknown")
    (manifest / ".vramlint.yaml").write_text("offline: true\n")
    proc = run_vramlint(manifest, tmp_path, {"HF_ENDPOINT": "http://127.0.0.1:9"})
    assert "`offline: true` in the configuration kept vramlint from asking" in proc.stdout
    assert "remove `offline: true`" in proc.stdout and "--offline" not in proc.stdout


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n
