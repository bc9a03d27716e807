"""The gateway under attack: connections, slots, bounds (docs/gateway.md, Reliability).

Each test reproduces one way a client (or a broken upstream) could hold a
worker, and checks the bound that stops it. The attacks below HTTP use raw
sockets; every count and time is small, and everything is on 127.0.0.1. The
gateway is served as ``streamnorm serve`` serves it (``serve.server_options``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn

from streamnorm.gateway import Gateway, create_app, parse_config
from streamnorm.gateway.serve import GuardedH11Protocol, protocol_class, server_options
from streamnorm.gateway.telemetry import LOGGER

from .gateway_support import (
    GATEWAY_KEY,
    WAIT,
    FakeUpstream,
    Receive,
    Reply,
    Scope,
    Send,
    ServerThread,
    gateway_env,
    gateway_toml,
)
from .support import needs_fixtures

pytestmark = needs_fixtures

HEAD_TIMEOUT = 0.5
BODY_TIMEOUT = 0.5
#: The head and body timeouts of the gateway that holds connections open.
HELD_TIMEOUT = 5.0
#: The stalling upstream's timeout: a close well before it was not the timeout's.
STALL_TIMEOUT = 20.0
MAX_HEAD = 64 * 1024
STALL = 1.5  # how long the stalling upstream takes to answer

CHAT = "/v1/chat/completions"
ANTHROPIC = "/v1/messages"
CHAT_HEADERS = {"authorization": f"Bearer {GATEWAY_KEY}"}
ANTHROPIC_HEADERS = {"x-api-key": GATEWAY_KEY, "anthropic-version": "2023-06-01"}


def chat_body(model: str, *, stream: bool = False) -> dict[str, Any]:
    return {"model": model, "stream": stream, "messages": [{"role": "user", "content": "hi"}]}


@dataclass
class Call:
    """One request the stalling upstream received, and when its client left."""

    model: str
    closed_at: float | None = None


class Stalling:
    """An upstream that answers only after ``STALL`` seconds (a 503 for the
    model ``stall-503``), noting when the gateway closed the connection; the
    model ``stall.limited`` is a 429 at once, with a Retry-After."""

    def __init__(self) -> None:
        self.calls: list[Call] = []

    def of(self, model: str) -> list[Call]:
        return [c for c in self.calls if c.model == model]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        call = Call(json.loads(body).get("model", ""))
        self.calls.append(call)
        if call.model == "stall.limited":  # a rate limit, at once
            headers = [(b"retry-after", b"7"), (b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 429, "headers": headers})
            await send({"type": "http.response.body", "body": b'{"error":{"message":"slow"}}'})
            return
        try:
            await asyncio.wait_for(_disconnect(receive), STALL)
        except asyncio.TimeoutError:
            status = 503 if call.model == "stall-503" else 200
            answer = json.dumps({"error": {"message": "late"}}).encode()
            start = {"type": "http.response.start", "status": status, "headers": []}
            await send(start)
            await send({"type": "http.response.body", "body": answer})
            return
        call.closed_at = time.monotonic()


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class GuardedServer(ServerThread):
    """The gateway under uvicorn with the options ``streamnorm serve`` uses."""

    def __init__(self, app: Gateway, **options: Any) -> None:
        super().__init__(app)
        settings = {**server_options(app.config), **options}
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", **settings)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, daemon=True)


def attack_config(upstream_url: str, stalling_url: str, **gateway: Any) -> dict[str, Any]:
    """The test configuration, plus ``stall.*`` on the stalling upstream and
    ``stall-fallback.*``: a stalling 503, then a second upstream."""
    toml = gateway_toml(upstream_url, **gateway)
    ups = toml["upstreams"]
    stall = {"api": "openai-completions", "base_url": stalling_url, "timeout": STALL_TIMEOUT}
    ups["stall"] = stall
    ups["stall-503"] = {**stall, "model": "stall-503"}
    ups["second"] = {**stall, "model": "second"}
    toml["routes"] += [
        {"models": "stall.*", "upstreams": ["stall"]},
        {"models": "stall-fallback.*", "upstreams": ["stall-503", "second"]},
    ]
    return toml


LOG_LINES: list[str] = []


class _Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LOG_LINES.append(record.getMessage())


def log_line(path_part: str, **match: Any) -> dict[str, Any]:
    """The first log line whose path has ``path_part`` and whose fields match."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for line in list(LOG_LINES):
            data: dict[str, Any] = json.loads(line)
            if path_part in data["path"] and all(data.get(k) == v for k, v in match.items()):
                return data
        time.sleep(0.01)
    raise AssertionError(f"no log line for {path_part} {match}")


@dataclass
class Servers:
    fake: FakeUpstream
    stalling: Stalling
    app: Gateway
    url: str
    port: int


@contextlib.contextmanager
def _serving(head_timeout: float, body_timeout: float) -> Iterator[Servers]:
    handler = _Collect()
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    fake, stalling = FakeUpstream(), Stalling()
    fake.script("openai-completions.ok", _chat_reply())
    try:
        with ServerThread(fake) as up, ServerThread(stalling) as slow:
            toml = attack_config(
                up.url,
                slow.url,
                max_head_bytes=MAX_HEAD,
                head_timeout=head_timeout,
                body_timeout=body_timeout,
                max_concurrency=64,
                max_bytes_in_flight=4 * 1024 * 1024,
                anthropic_betas=["claude-code-20250219"],
            )
            app = create_app(parse_config(toml, gateway_env()))
            with GuardedServer(app) as gw:
                yield Servers(fake, stalling, app, gw.url, gw.port)
    finally:
        LOGGER.removeHandler(handler)


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    with _serving(HEAD_TIMEOUT, BODY_TIMEOUT) as running:
        yield running


@pytest.fixture(scope="module")
def held() -> Iterator[Servers]:
    """A gateway whose head and body timeouts leave a loaded machine ample
    time to answer others while connections are held open."""
    with _serving(HELD_TIMEOUT, HELD_TIMEOUT) as running:
        yield running


def _chat_reply() -> Reply:
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ok"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return Reply(200, [json.dumps(answer).encode()], "application/json")


def _answered_while_held(url: str, socks: list[socket.socket]) -> None:
    """``/healthz`` and a keyed request both answer while every one of
    ``socks`` is still held open with no answer: they did not wait for the
    held connections to time out (the order, not a clock, is checked)."""
    with httpx.Client(timeout=HELD_TIMEOUT) as client:
        assert client.get(url + "/healthz").status_code == 200
        r = client.post(url + CHAT, headers=CHAT_HEADERS, json=chat_body("openai-completions.ok"))
    assert r.status_code == 200, r.text
    assert not any(_answered_yet(sock) for sock in socks)


def _answered_yet(sock: socket.socket) -> bool:
    """Whether the gateway has sent ``sock`` anything or closed it (a peek)."""
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return False
    finally:
        sock.setblocking(True)
    return True


def _settled(app: Gateway) -> bool:
    """Whether the gateway soon holds no slot and no byte (a request's
    bookkeeping ends just after its last byte is sent)."""
    deadline = time.monotonic() + WAIT
    while app._in_flight or app.budget.held:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    return sock


def _answer_of(sock: socket.socket, timeout: float) -> bytes:
    """What the server sends before it closes (b"" if it only closes); a
    socket timeout when it neither answers nor closes."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


# -- item 1: a request head without bound -------------------------------------


@pytest.fixture(params=["h11", "httptools"])
def protocol(request: pytest.FixtureRequest) -> type[asyncio.Protocol]:
    if request.param == "h11":
        return GuardedH11Protocol
    pytest.importorskip("httptools")
    return protocol_class()


def test_the_installed_http_parser_is_guarded() -> None:
    pytest.importorskip("httptools")
    assert protocol_class().__name__ == "GuardedHttpToolsProtocol"


@pytest.mark.parametrize("where", ["header", "url"])
def test_an_endless_request_head_is_cut_at_the_limit(
    servers: Servers, protocol: type[asyncio.Protocol], where: str
) -> None:
    """8 MB of head without its end: 431 and a closed connection once the
    limit is passed, whatever parser serves (httptools alone reads it all)."""
    with GuardedServer(servers.app, http=protocol) as gw, _connect(gw.port) as sock:
        start = b"GET /healthz?" if where == "url" else b"GET /healthz HTTP/1.1\r\nx-big: "
        sent = 0
        try:
            sock.sendall(start)
            while sent < 8 * 1024 * 1024:
                sock.sendall(b"a" * 65536)
                sent += 65536
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = _answer_of(sock, 2.0)
    # The kernel's buffers take a few MB the server never reads; the server
    # must have answered and closed before all 8 MB were taken.
    assert sent < 8 * 1024 * 1024
    assert answer.startswith((b"HTTP/1.1 431", b"HTTP/1.1 400"))


def test_a_head_just_under_the_limit_is_served(servers: Servers) -> None:
    headers = {**CHAT_HEADERS, "x-pad": "p" * (MAX_HEAD - 1024)}
    r = httpx.get(servers.url + "/healthz", headers=headers, timeout=WAIT)
    assert r.status_code == 200


# -- item 2a: half-open connections --------------------------------------------


def test_half_open_connections_are_closed_after_the_head_timeout(held: Servers) -> None:
    """1,000 connections that send nothing or half a head: the gateway keeps
    answering others while they are held, and closes each of them after
    ``head_timeout``."""
    socks = [_connect(held.port) for _ in range(1000)]
    try:
        for i, sock in enumerate(socks):
            if i % 2:
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthor")
        _answered_while_held(held.url, socks)
        answers = {_answer_of(sock, HELD_TIMEOUT + WAIT)[:12] for sock in socks}
    finally:
        for sock in socks:
            sock.close()
    assert answers == {b"HTTP/1.1 408"}


def test_a_kept_alive_connection_gets_the_head_timeout_again(servers: Servers) -> None:
    with _connect(servers.port) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b'{"status":"ok"}'):
            first += sock.recv(65536)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHo")
        answer = _answer_of(sock, 2.0)
    assert first.startswith(b"HTTP/1.1 200")
    assert answer.startswith(b"HTTP/1.1 408")


# -- item 2b: slow bodies --------------------------------------------------------


def _half_body(port: int) -> socket.socket:
    body = json.dumps(chat_body("openai-completions.ok")).encode()
    sock = _connect(port)
    head = (
        f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {GATEWAY_KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body[: len(body) // 2])
    return sock


def test_slow_bodies_hold_no_slot_and_time_out(held: Servers) -> None:
    """64 keyed clients (the concurrency limit) that send half a body: others
    are served while they hold on, and each slow one gets a 408 in its API's
    format."""
    socks = [_half_body(held.port) for _ in range(64)]
    try:
        _answered_while_held(held.url, socks)
        answers = [_answer_of(sock, HELD_TIMEOUT + WAIT) for sock in socks]
    finally:
        for sock in socks:
            sock.close()
    for answer in answers:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), answer[:200]
        assert json.loads(body)["error"]["param"] == "body"
    assert _settled(held.app)


# -- item 4: clients that leave ---------------------------------------------------


def _leave_after(url: str, body: dict[str, Any], seconds: float) -> float:
    """Send ``body``, then close the connection after ``seconds``; when it closed."""
    raw = json.dumps(body).encode()
    port = int(url.rsplit(":", 1)[1])
    with _connect(port) as sock:
        head = (
            f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {GATEWAY_KEY}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\n\r\n"
        )
        sock.sendall(head.encode() + raw)
        time.sleep(seconds)
    return time.monotonic()


@pytest.mark.parametrize("stream", [False, True])
def test_a_client_that_leaves_before_the_first_byte_closes_the_upstream(
    servers: Servers, stream: bool
) -> None:
    model = f"stall.{'stream' if stream else 'whole'}"
    left = _leave_after(servers.url, chat_body(model, stream=stream), 0.3)
    deadline = left + STALL_TIMEOUT / 2
    while time.monotonic() < deadline and not any(c.closed_at for c in servers.stalling.of(model)):
        time.sleep(0.01)
    calls = servers.stalling.of(model)
    assert len(calls) == 1 and calls[0].closed_at is not None
    assert calls[0].closed_at - left < STALL_TIMEOUT / 2  # the client's leaving closed it
    line = log_line(CHAT, model=model)
    assert line["disconnected"] is True
    assert _settled(servers.app)


def test_no_fallback_is_called_for_a_client_that_left(servers: Servers) -> None:
    _leave_after(servers.url, chat_body("stall-fallback.x"), 0.3)
    time.sleep(STALL + 0.5)  # the first upstream's 503 would have come by now
    assert len(servers.stalling.of("stall-503")) == 1
    assert servers.stalling.of("second") == []


# -- item 11: bytes in flight -------------------------------------------------------


def test_bodies_beyond_the_workers_bytes_in_flight_are_503(servers: Servers) -> None:
    """Two 3 MB bodies at once pass the 4 MB budget: the second is refused;
    alone, each is served. Nothing stays held afterwards."""
    pad = "x" * (3 * 1024 * 1024)
    first = _half_body_of(servers.port, {**chat_body("openai-completions.ok"), "user": pad})
    try:
        r = httpx.post(
            servers.url + CHAT,
            headers=CHAT_HEADERS,
            json={**chat_body("openai-completions.ok"), "user": pad},
            timeout=WAIT,
        )
    finally:
        first.close()
    assert r.status_code == 503, r.text
    assert "bytes in flight" in r.json()["error"]["message"]
    time.sleep(BODY_TIMEOUT + 0.5)
    assert _settled(servers.app)
    r = httpx.post(
        servers.url + CHAT,
        headers=CHAT_HEADERS,
        json={**chat_body("openai-completions.ok"), "user": pad},
        timeout=WAIT,
    )
    assert r.status_code == 200, r.text


def _flood(chunks: int) -> list[bytes]:
    """A Chat stream of ``chunks`` 64 KiB text deltas, with no end."""
    delta = {"choices": [{"index": 0, "delta": {"content": "a" * 65536}}]}
    event = b"data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", **delta}).encode()
    return [event + b"\n\n"] * chunks


def test_an_upstream_flood_past_the_bytes_in_flight_ends_the_stream_with_an_error(
    servers: Servers,
) -> None:
    """6 MB of stream against a 4 MB budget: the client's stream ends with
    its API's error event, not cut silently, and the bytes are given back."""
    servers.fake.script("openai-completions.flood", Reply(200, _flood(96), hang=5.0))
    body = chat_body("openai-completions.flood", stream=True)
    with (
        httpx.Client(timeout=WAIT) as client,
        client.stream("POST", servers.url + CHAT, headers=CHAT_HEADERS, json=body) as r,
    ):
        data = r.read()
    assert r.status_code == 200
    assert b"bytes in flight" in data.rsplit(b"data: ", 1)[-1]
    line = log_line(CHAT, model="openai-completions.flood")
    assert "bytes in flight" in line["error"]
    assert _settled(servers.app)


def test_a_whole_answer_past_the_bytes_in_flight_is_503(servers: Servers) -> None:
    big = {"id": "c", "object": "chat.completion", "pad": "a" * (6 * 1024 * 1024)}
    reply = Reply(200, [json.dumps(big).encode()], "application/json")
    servers.fake.script("openai-completions.big", reply)
    body = chat_body("openai-completions.big")
    r = httpx.post(servers.url + CHAT, headers=CHAT_HEADERS, json=body, timeout=WAIT)
    assert r.status_code == 503 and "bytes in flight" in r.json()["error"]["message"]
    assert _settled(servers.app)


def _half_body_of(port: int, body: dict[str, Any]) -> socket.socket:
    """A connection that sent all its body but its last byte."""
    raw = json.dumps(body).encode()
    sock = _connect(port)
    head = (
        f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {GATEWAY_KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\n\r\n"
    )
    sock.sendall(head.encode() + raw[:-1])
    time.sleep(0.2)  # read by the gateway
    return sock


# -- item 12: echoes, betas, the upstream's credentials --------------------------------


def test_a_long_path_is_bounded_in_the_404_and_the_log(servers: Servers) -> None:
    path = "/x" * 30_000
    r = httpx.get(servers.url + path, headers=CHAT_HEADERS, timeout=WAIT)
    assert r.status_code == 404
    assert len(r.content) < 2000
    assert "more characters" in r.json()["error"]["message"]
    line = log_line("/x/x/x", status=404)
    assert len(json.dumps(line)) < 3000


def test_anthropic_beta_passes_only_the_configured_features(servers: Servers) -> None:
    servers.fake.script("anthropic-messages.beta", Reply(400, [b"{}"], "application/json"))
    headers = {**ANTHROPIC_HEADERS, "anthropic-beta": "claude-code-20250219, dangerous-2099-01-01"}
    body = {
        "model": "anthropic-messages.beta",
        "max_tokens": 8,
        "messages": [{"role": "user", "content": "hi"}],
    }
    r = httpx.post(servers.url + ANTHROPIC, headers=headers, json=body, timeout=WAIT)
    sent = servers.fake.requests_for("anthropic-messages.beta")[-1]
    assert sent.headers["anthropic-beta"] == "claude-code-20250219"
    assert "dangerous-2099-01-01" in r.headers["x-streamnorm-warnings"]


def test_an_upstream_that_refuses_the_gateways_key_is_a_502(servers: Servers) -> None:
    """The operator's key is wrong: the client must not take it for its own 401."""
    for status in (401, 403):
        model = f"openai-completions.refused-{status}"
        err = {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}
        servers.fake.script(model, Reply(status, [json.dumps(err).encode()], "application/json"))
        r = httpx.post(
            servers.url + CHAT, headers=CHAT_HEADERS, json=chat_body(model), timeout=WAIT
        )
        assert r.status_code == 502, r.text
        assert "refused the gateway's credentials" in r.json()["error"]["message"]


def test_an_upstreams_retry_after_reaches_the_client(servers: Servers) -> None:
    body = chat_body("stall.limited")
    r = httpx.post(servers.url + CHAT, headers=CHAT_HEADERS, json=body, timeout=WAIT)
    assert r.status_code == 429
    assert r.headers["retry-after"] == "7"
