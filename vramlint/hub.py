"""A small HTTP client for the Hugging Face Hub that treats every answer as untrusted input.

vramlint asks the Hub for three kinds of file of a model repository: ``config.json`` (plus
``hf_quant_config.json``), ``model.safetensors.index.json``, and the JSON header at the start of each
``*.safetensors`` file (a range request, never the weights). huggingface_hub's ``hf_hub_download`` is not
used: it keeps a copy of every file it fetches, whatever its size, and writes ``refs/<revision>`` under its
cache, so a revision such as ``../../../x`` wrote outside the cache. Here, by contrast:

* repository ids and revisions are checked before any request (no ``..``, no absolute paths, no control
  characters); the revision is sent percent-encoded, as huggingface_hub does;
* nothing is written to disk (the caller caches the validated facts);
* each body is read up to a cap and no further; a longer one is refused, a safetensors header length beyond
  its cap is refused before it is requested;
* every request has an overall deadline, enforced by shutting its socket down, so a server that sends one
  byte a second cannot hold the run;
* redirects are followed only to the endpoint itself or, over HTTPS, to the Hub's CDN (``*.hf.co``,
  ``*.huggingface.co``, or a subdomain of the endpoint's host), at most ``MAX_REDIRECTS`` times, and the
  token (``HF_TOKEN``) is only ever sent to the endpoint's own scheme, host and port;
* an answer that contains the token is refused, so a Hub that echoes it cannot put it into a report.

Reachability is decided once per run and endpoint: the first request is the only connection attempt
(``CONNECT_TIMEOUT_S`` to connect, ``ANSWER_TIMEOUT_S`` for the answer to begin); when it gets no answer,
every later request to that endpoint in the run fails at once with the same reason.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from dataclasses import field
from urllib.parse import quote, urljoin, urlsplit

# checked before any request; kept apart so that resolving a model from the cache or the catalog does not load
# this client (sockets, threads, URL parsing)
from vramlint.hubnames import file_name_problem, is_commit_hash, repo_id_problem, revision_problem  # noqa: F401
from vramlint.lean_dataclass import dataclass

CONNECT_TIMEOUT_S = 3.0  # TCP (and TLS) connection to the Hub
ANSWER_TIMEOUT_S = 4.0  # from the request sent to the end of the response headers, and between two reads
MIN_BODY_RATE = 4096  # bytes per second, after the first second of a body: slower is a drip, not a network
MAX_REDIRECTS = 5
# Wall-clock time all of a run's requests to one endpoint may take together, from the first. A hostile endpoint
# (HF_ENDPOINT, or a model repository made to be slow) costs at most this, whatever the number of models it is
# asked about; what is not fetched by then is said unresolved (a config.json) or computed from the architecture
# (safetensors headers), and asked again next run, since only complete answers are cached.
RUN_BUDGET_S = 5.0
CHUNK = 64 * 1024

# Body caps, in bytes. The largest config.json on the Hub are a few hundred KB (vision towers, id2label);
# the largest safetensors indexes (DeepSeek-V3, Kimi-K2: ~90,000 tensors) about 10 MB.
CONFIG_CAP = 4 * 2**20
QUANT_CONFIG_CAP = 1 * 2**20
INDEX_CAP = 32 * 2**20
# huggingface_hub allows 25,000,000 bytes; parsed, a header of tiny entries takes ~10x its size in memory, so
# vramlint stops at 8 MiB: ~100,000 tensors in one file, where a real shard holds a few thousand (~1 MB).
SAFETENSORS_HEADER_CAP = 8 * 2**20
SAFETENSORS_FIRST_READ = 100_000  # one range request covers most headers, as huggingface_hub does

_CDN_SUFFIXES = (".hf.co", ".huggingface.co")


class HubError(Exception):
    """A request that gave no usable answer. ``kind`` says why, for the message the user gets:

    ``unreachable`` (no connection or no answer: the endpoint is treated as offline for the run), ``timeout``
    (an answer began but did not end within the deadline), ``not_found``, ``gated`` (401/403), ``too_large``,
    ``redirect`` (refused), ``invalid`` (not what the Hub sends), ``http`` (another status).
    """

    def __init__(self, kind: str, detail: str, status: int | None = None, first_contact: bool | None = None) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.status = status
        self.first_contact = first_contact  # for "unreachable": this request was the run's attempt (or came after it)


def printable_host(host: str) -> str:
    """A host name as it may appear in a message (it comes from the server: nothing but host characters)."""
    return re.sub(r"[^A-Za-z0-9.:\[\]-]", "?", host)[:100]


@dataclass
class _Origin:
    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> _Origin:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        return cls(scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80))


def _redirect_target(url: str, location: str) -> str:
    """The URL a redirect's Location names, resolved against ``url``. The Location is the server's, as untrusted as
    its body: one that is no URL (`http://[::1:::/`, a port past 65535) raises ValueError in urljoin or in reading
    its port, which is a refused redirect, not a crash of the run."""
    try:
        target = urljoin(url, location)
        urlsplit(target).port  # noqa: B018 - raises on a port out of range
    except ValueError:
        raise HubError("redirect", "redirected to a Location that is not a valid URL: not followed") from None
    return target


def endpoint_problem(endpoint: str) -> str | None:
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment \
            or parts.username or parts.password:
        return f"HF_ENDPOINT {endpoint!r} is not an http(s) URL of a Hub"
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        return f"HF_ENDPOINT {endpoint!r} has an invalid port"
    return None


@dataclass
class _EndpointState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    contacted: threading.Event = field(default_factory=threading.Event)
    started: bool = False
    unreachable: str | None = None  # why the first contact got no answer
    budget_ends: float | None = None  # time.monotonic() when the run's RUN_BUDGET_S for this endpoint is spent


_STATES: dict[str, _EndpointState] = {}
_STATES_LOCK = threading.Lock()


def reset() -> None:
    """Forget what this process learnt about endpoints (a new run asks again)."""
    with _STATES_LOCK:
        _STATES.clear()


def unreachable_reason(endpoint: str) -> str | None:
    state = _STATES.get(endpoint)
    return state.unreachable if state else None


class HubClient:
    """Requests to one endpoint (``HF_ENDPOINT``), with the token sent to that endpoint only."""

    def __init__(self, endpoint: str, token: str | None, deadline_s: float = 10.0,
                 connect_timeout_s: float | None = None, answer_timeout_s: float | None = None) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.origin = _Origin.of(self.endpoint)
        self.token = token or None
        self.deadline_s = deadline_s
        self.connect_timeout_s = min(CONNECT_TIMEOUT_S if connect_timeout_s is None else connect_timeout_s, deadline_s)
        self.answer_timeout_s = min(ANSWER_TIMEOUT_S if answer_timeout_s is None else answer_timeout_s, deadline_s)
        with _STATES_LOCK:
            self.state = _STATES.setdefault(self.endpoint, _EndpointState())

    # ------------------------------------------------------------------------------------------ files

    def file_url(self, repo_id: str, revision: str | None, filename: str) -> str:
        return f"{self.endpoint}/{repo_id}/resolve/{quote(revision or 'main', safe='')}/{quote(filename)}"

    def get_file(self, repo_id: str, revision: str | None, filename: str, cap: int,
                 byte_range: tuple[int, int] | None = None) -> bytes:
        """The body of a repository file, at most ``cap`` bytes (a longer body is refused, not truncated,
        unless ``byte_range`` asked for part of it)."""
        problem = repo_id_problem(repo_id) or (revision_problem(revision) if revision else None) \
            or file_name_problem(filename)
        if problem:
            raise HubError("invalid", problem)
        return self.get(self.file_url(repo_id, revision, filename), cap, byte_range)

    # -------------------------------------------------------------------------------------- requests

    def get(self, url: str, cap: int, byte_range: tuple[int, int] | None = None) -> bytes:
        first = False
        with self.state.lock:
            if not self.state.started:
                self.state.started = first = True
            if self.state.budget_ends is None:
                self.state.budget_ends = time.monotonic() + RUN_BUDGET_S
        if not first:
            # Another thread makes the one connection attempt of the run; wait for its outcome.
            self.state.contacted.wait(self.connect_timeout_s + self.answer_timeout_s + 1.0)
            if self.state.unreachable:
                raise HubError("unreachable", self.state.unreachable, first_contact=False)
        try:
            return self._get(url, cap, byte_range)
        except HubError as exc:
            if first and exc.kind == "unreachable":
                self.state.unreachable = exc.detail
            raise
        finally:
            if first:
                self.state.contacted.set()

    def _get(self, url: str, cap: int, byte_range: tuple[int, int] | None) -> bytes:
        started = time.monotonic()
        seen: set[str] = set()
        for _ in range(MAX_REDIRECTS + 1):
            remaining = self.deadline_s - (time.monotonic() - started)
            if remaining <= 0:
                raise HubError("timeout", f"no complete answer within {self.deadline_s:g} s")
            run_left = (self.state.budget_ends or 0.0) - time.monotonic()
            if run_left <= 0:
                raise HubError("timeout", f"this run's {RUN_BUDGET_S:g} s for Hub requests are spent, so it was not "
                                          "asked")
            remaining = min(remaining, run_left)
            target = _Origin.of(url)
            same_origin = target == self.origin
            headers = {"User-Agent": "vramlint", "Accept-Encoding": "identity"}
            if byte_range is not None:
                headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
            if self.token and same_origin:
                headers["Authorization"] = f"Bearer {self.token}"
            status, location, body, error_code = _request(
                url, headers, cap, remaining, self.connect_timeout_s, self.answer_timeout_s,
                first_contact=same_origin, byte_range=byte_range)
            if status in (301, 302, 303, 307, 308):
                if not location:
                    raise HubError("invalid", f"a redirect ({status}) without a Location")
                url = _redirect_target(url, location)
                if url in seen:
                    raise HubError("redirect", "redirected in a loop")
                seen.add(url)
                why = self._redirect_problem(url)
                if why:
                    raise HubError("redirect", why)
                continue
            if status in (200, 206):
                if self.token and _holds_token(body, self.token):
                    raise HubError("invalid", "the answer contains the token vramlint sent: refused")
                return body
            if status in (401, 403) and error_code != "RepoNotFound":
                raise HubError("gated", f"HTTP {status}", status)
            if status == 404 or error_code in ("RepoNotFound", "EntryNotFound", "RevisionNotFound"):
                raise HubError("not_found", error_code or f"HTTP {status}", status)
            raise HubError("http", f"HTTP {status}", status)
        raise HubError("redirect", f"more than {MAX_REDIRECTS} redirects")

    def _redirect_problem(self, url: str) -> str | None:
        target = _Origin.of(url)
        if target == self.origin:
            return None
        if target.scheme != "https":
            return f"redirected to {target.scheme}://{printable_host(target.host)} (not HTTPS on another host): not followed"
        host = target.host
        own = self.origin.host
        if host.endswith("." + own) or (host.endswith(_CDN_SUFFIXES) and own in ("huggingface.co", "hf.co")
                                         or own.endswith(_CDN_SUFFIXES)):
            return None
        return f"redirected to another host ({printable_host(host)}:{target.port}): not followed"


# a JSON string escape: what json.loads makes of an answer, so `"\\u0068f_..."` is the token once decoded
_JSON_ESCAPE = re.compile(rb"\\(?:u([0-9A-Fa-f]{4})|(.))", re.DOTALL)


def _holds_token(body: bytes, token: str) -> bool:
    """Whether the answer holds the token as written or once its JSON escapes are decoded (`\\u0068` is `h`): a
    Hub that echoes the token escaped would otherwise have it decoded into a report or the cache."""
    raw = token.encode()
    if raw in body:
        return True
    if b"\\" not in body:
        return False

    def decoded(m: re.Match) -> bytes:
        if m.group(1) is not None:
            code = int(m.group(1), 16)
            return chr(code).encode("utf-8", "surrogatepass")
        return m.group(2)

    return raw in _JSON_ESCAPE.sub(decoded, body)


def _proxy_for(scheme: str, host: str) -> str | None:
    import urllib.request

    if host in ("127.0.0.1", "localhost", "::1"):
        return None
    proxies = urllib.request.getproxies()
    proxy = proxies.get(scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return proxy


def _request(url: str, headers: dict[str, str], cap: int, deadline_s: float, connect_timeout_s: float,
             answer_timeout_s: float, first_contact: bool,
             byte_range: tuple[int, int] | None) -> tuple[int, str | None, bytes, str | None]:
    """One GET: (status, Location, body, X-Error-Code). The body is read only for 200/206, up to ``cap``."""
    import http.client

    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    port = parts.port or (443 if scheme == "https" else 80)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    proxy = _proxy_for(scheme, host)
    conn: http.client.HTTPConnection
    if proxy:
        pp = urlsplit(proxy)
        proxy_headers = {}
        if pp.username:
            import base64
            from urllib.parse import unquote

            creds = f"{unquote(pp.username)}:{unquote(pp.password or '')}".encode()
            proxy_headers["Proxy-Authorization"] = "Basic " + base64.b64encode(creds).decode()
        if scheme == "https":
            conn = http.client.HTTPSConnection(pp.hostname, pp.port or 80, timeout=connect_timeout_s,
                                               context=_ssl_context())
            conn.set_tunnel(host, port, headers=proxy_headers)
        else:
            conn = http.client.HTTPConnection(pp.hostname, pp.port or 80, timeout=connect_timeout_s)
            headers = {**headers, **proxy_headers}
            path = url
    elif scheme == "https":
        conn = http.client.HTTPSConnection(host, port, timeout=connect_timeout_s, context=_ssl_context())
    else:
        conn = http.client.HTTPConnection(host, port, timeout=connect_timeout_s)
    started = time.monotonic()
    expired = threading.Event()  # the request's deadline passed
    headers_late = threading.Event()  # the response headers did not all come within answer_timeout_s

    def abort(flag: threading.Event) -> None:
        flag.set()
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(deadline_s, abort, (expired,))
    timer.daemon = True
    timer.start()
    header_timer = None
    try:
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            raise HubError("unreachable" if first_contact else "http", _connect_reason(exc)) from None
        conn.sock.settimeout(min(answer_timeout_s, max(0.01, deadline_s - (time.monotonic() - started))))
        # a server may send its status line and headers one byte at a time, each within the socket timeout
        header_timer = threading.Timer(answer_timeout_s, abort, (headers_late,))
        header_timer.daemon = True
        header_timer.start()
        try:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            header_timer.cancel()
            if headers_late.is_set() or expired.is_set():
                # the socket was shut down mid-headers, which http.client may read as their end
                raise TimeoutError
        except (OSError, http.client.HTTPException) as exc:
            if headers_late.is_set() and not expired.is_set():
                raise HubError("unreachable" if first_contact else "timeout",
                               f"connected, but no complete answer within {answer_timeout_s:.2g} s") from None
            if expired.is_set():
                raise HubError("unreachable" if first_contact else "timeout",
                               f"no answer within {deadline_s:.2g} s") from None
            if isinstance(exc, (TimeoutError, socket.timeout)):
                raise HubError("unreachable" if first_contact else "timeout",
                               f"connected, but no answer within {answer_timeout_s:.2g} s") from None
            raise HubError("unreachable" if first_contact else "http", _connect_reason(exc)) from None
        status = response.status
        location = response.getheader("Location")
        error_code = response.getheader("X-Error-Code")
        if status not in (200, 206) or (status == 206 and byte_range is None):
            return status, location, b"", error_code
        if byte_range is not None:
            # 206: the part asked for. 200: a server that ignores Range sends the whole file from byte 0;
            # read up to the end of the range and cut it out.
            want = byte_range[1] + 1 - (byte_range[0] if status == 206 else 0)
            if want > cap + (0 if status == 206 else byte_range[0]):
                raise HubError("too_large", f"the range asked for is over the {cap:,}-byte cap")
            body = _read_body(response, want, deadline_s, answer_timeout_s, expired, stop_at_limit=True)
            return status, location, body if status == 206 else body[byte_range[0]:], error_code
        declared = response.getheader("Content-Length")
        if declared is not None and declared.strip().isdigit() and len(declared.strip()) < 20 \
                and int(declared) > cap:
            raise HubError("too_large", f"the answer is {int(declared):,} bytes, over the {cap:,}-byte cap")
        return status, location, _read_body(response, cap, deadline_s, answer_timeout_s, expired), error_code
    finally:
        timer.cancel()
        if header_timer is not None:
            header_timer.cancel()
        conn.close()


def _read_body(response, limit: int, deadline_s: float, answer_timeout_s: float, expired: threading.Event,
               stop_at_limit: bool = False) -> bytes:
    """At most ``limit`` bytes of the body; beyond it the answer is refused (or, for a range, cut)."""
    import http.client

    chunks: list[bytes] = []
    size = 0
    began = time.monotonic()
    while True:
        try:
            chunk = response.read1(min(CHUNK, limit + 1 - size))
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if expired.is_set():
                raise HubError("timeout", f"the answer did not end within {deadline_s:.2g} s") from None
            if isinstance(exc, (TimeoutError, socket.timeout)):
                raise HubError("timeout", f"the answer stalled for {answer_timeout_s:.2g} s") from None
            raise HubError("http", f"the answer broke off ({type(exc).__name__})") from None
        if expired.is_set():
            raise HubError("timeout", f"the answer did not end within {deadline_s:.2g} s")
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        chunks.append(chunk)
        elapsed = time.monotonic() - began
        if elapsed > 1.0 and size < MIN_BODY_RATE * elapsed and size < limit:
            raise HubError("timeout", f"the answer trickled in ({size:,} bytes in {elapsed:.2g} s)")
        if size > limit:
            if stop_at_limit:
                return b"".join(chunks)[:limit]
            raise HubError("too_large", f"the answer is over the {limit:,}-byte cap")


def _connect_reason(exc: BaseException) -> str:
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return "no connection within the timeout"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return "host name not resolved"
    import ssl

    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or type(exc).__name__})"
    text = getattr(exc, "strerror", None) or type(exc).__name__
    return re.sub(r"[^\w .,:()'-]", "?", str(text))[:120]


_SSL = None


def _ssl_context():
    global _SSL
    if _SSL is None:
        import ssl

        cafile = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("SSL_CERT_FILE") or None
        _SSL = ssl.create_default_context(cafile=cafile)
    return _SSL
