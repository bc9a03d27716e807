"""The HTTP adapters against a real server on 127.0.0.1.

A ``ThreadingHTTPServer`` on an ephemeral loopback port streams recorded
fixtures (and the packaged samples) in small, seeded-random pieces with short
pauses, under several framings:

* ``chunked`` — HTTP/1.1 chunked transfer encoding (what the APIs send);
* ``close`` — no framing, the body ends when the server closes;
* ``length`` — ``Content-Length``;
* ``cut`` / ``cutclose`` — the server drops the connection mid-body;
* ``stall`` — the server stops sending mid-body and holds the connection;
* ``badchunk`` — as ``stall``, after a malformed chunk-size line (``zz``);
* ``gate`` / ``gateclose`` — the server sends the first part and waits until
  the client has produced an event from it: proves events come out while the
  body is still arriving, not after it ended.

No client library is mocked. Every client has a timeout of at most 2 s.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from streamnorm import (
    AssistantMessage,
    Done,
    Error,
    Event,
    Start,
    ThinkingBlock,
    ToolResultMessage,
    UserMessage,
)
from streamnorm import samples as sample_streams
from streamnorm.apis import ApiName
from streamnorm.messages import Message
from streamnorm.normalizer import normalize
from streamnorm.sanitize import sanitize_messages_for_target, validate_history_for_target

from .support import FIXTURES, needs_fixtures

httpx = pytest.importorskip("httpx")
aiohttp = pytest.importorskip("aiohttp")
requests = pytest.importorskip("requests")

from streamnorm.integrations import aiohttp as sn_aiohttp  # noqa: E402
from streamnorm.integrations import httpx as sn_httpx  # noqa: E402
from streamnorm.integrations import requests as sn_requests  # noqa: E402
from streamnorm.integrations import sdk as sn_sdk  # noqa: E402
from streamnorm.integrations.hosts import provider_for_url, with_provider  # noqa: E402
from streamnorm.integrations.idle import IdleTimeout, idle_limited  # noqa: E402

TIMEOUT = 2.0  # the longest any client here may wait for anything
STALL_READ_TIMEOUT = 0.4  # the read timeout used against the stalling server

#: One recorded stream per wire api: thinking, text and tool calls between them.
STREAMS = {
    "anthropic-messages": "anthropic-messages/thinking-then-tool-use.sse",
    "openai-responses": "openai-responses/function-call.sse",
    "openai-completions": "openai-completions/openai-tool-call.sse",
    "google-generative-ai": "google-generative-ai/function-call-thought-signature.sse",
}


def source_bytes(api: str, name: str) -> bytes:
    """``name`` is a fixture file of ``api``, or ``sample`` for the packaged one."""
    if name == "sample":
        return sample_streams.read(api)
    return (FIXTURES / api / name).read_bytes()


#: The ``provider`` the adapters record for this server: the host they talked to.
LOOPBACK = "127.0.0.1"


def expected(data: bytes) -> list[dict[str, Any]]:
    """The events of ``data`` read in memory, labelled with the server's host
    as an adapter labels them."""
    return [e.to_dict() for e in normalize([data], provider=LOOPBACK)]


def as_dicts(events: list[Event]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in events]


# --------------------------------------------------------------------------
# The server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self._serve()

    def _serve(self) -> None:
        # /sse/<mode>/<api>/<file>[/anything the SDK appends]
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) < 4 or parts[0] != "sse":
            self.send_error(404)
            return
        mode, api, name = parts[1], parts[2], parts[3]
        if mode == "error500":
            body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        data = source_bytes(api, name)
        framing = "close" if mode in ("close", "cutclose", "gateclose") else "chunked"
        if mode == "length":
            framing = "length"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if framing == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        elif framing == "length":
            self.send_header("Content-Length", str(len(data)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()

        stop_at = len(data)
        if mode in ("cut", "cutclose", "stall", "badchunk"):
            stop_at = len(data) // 2
        gate_at = len(data) // 3 if mode in ("gate", "gateclose") else -1
        rng = random.Random(len(data))
        sent = 0
        pieces = 0
        try:
            while sent < stop_at:
                if sent >= gate_at >= 0:
                    self.server.gate_opened.append(self.server.gate.wait(TIMEOUT))
                    gate_at = -1
                size = min(rng.randint(1, 600), stop_at - sent)
                if gate_at >= 0:
                    size = min(size, gate_at - sent) or size
                self._send(data[sent : sent + size], framing)
                sent += size
                pieces += 1
                if pieces % 4 == 0:
                    time.sleep(0.001)
            if mode == "badchunk":
                # Once the client has the headers and the first pieces: a
                # malformed line parsed with the headers fails the request.
                self.wfile.flush()
                time.sleep(0.1)
                self.wfile.write(b"zz\r\n")
                self.wfile.flush()
            if mode in ("stall", "badchunk"):
                self.server.stop.wait(5 * TIMEOUT)
                self.close_connection = True
                return
            if mode in ("cut", "cutclose"):
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if framing == "chunked":
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send(self, piece: bytes, framing: str) -> None:
        if framing == "chunked":
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        else:
            self.wfile.write(piece)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stop = threading.Event()
        self.gate = threading.Event()
        self.gate_opened: list[bool] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients drop keep-alive connections and cut-off bodies: expected here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def origin(self) -> str:
        host, port = self.server_address[:2]
        assert isinstance(host, str)
        return f"http://{host}:{port}"

    def url(self, mode: str, api: str, name: str) -> str:
        return f"{self.origin()}/sse/{mode}/{api}/{name}"


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield srv
    finally:
        srv.stop.set()
        srv.gate.set()
        srv.shutdown()
        srv.server_close()
        thread.join(TIMEOUT)


@pytest.fixture
def gate(server: _Server) -> Iterator[_Server]:
    server.gate.clear()
    server.gate_opened.clear()
    yield server
    server.gate.set()


def cases() -> list[Any]:
    out = [pytest.param(api, "sample", id=f"{api}-sample") for api in STREAMS]
    for api, path in STREAMS.items():
        name = path.split("/", 1)[1]
        out.append(pytest.param(api, name, id=f"{api}-fixture", marks=needs_fixtures))
    return out


def assert_truncated(events: list[Event], pattern: str | None = None) -> Error:
    assert events, "no events at all"
    last = events[-1]
    assert isinstance(last, Error), f"expected Error, got {type(last).__name__}"
    assert last.kind == "truncated"
    assert sum(isinstance(e, (Done, Error)) for e in events) == 1
    assert isinstance(events[0], Start)
    if pattern:
        assert re.search(pattern, last.reason, re.IGNORECASE), last.reason
    return last


TIMED_OUT = r"timed? ?out"


# --------------------------------------------------------------------------
# httpx


@pytest.mark.parametrize(("api", "name"), cases())
def test_httpx_sync_streams_equal_in_memory_result(
    server: _Server, api: ApiName, name: str
) -> None:
    with (
        httpx.Client(timeout=TIMEOUT) as client,
        client.stream("POST", server.url("chunked", api, name), json={"stream": True}) as r,
    ):
        events = list(sn_httpx.iter_events(r, api=api))
    assert as_dicts(events) == expected(source_bytes(api, name))
    assert isinstance(events[-1], Done)


@pytest.mark.parametrize("mode", ["close", "length"])
def test_httpx_sync_other_framings(server: _Server, mode: str) -> None:
    api = "google-generative-ai"
    with (
        httpx.Client(timeout=TIMEOUT) as client,
        client.stream("GET", server.url(mode, api, "sample")) as r,
    ):
        events = list(sn_httpx.iter_events(r))
    assert as_dicts(events) == expected(source_bytes(api, "sample"))


@pytest.mark.parametrize(("api", "name"), cases())
async def test_httpx_async_streams_equal_in_memory_result(
    server: _Server, api: ApiName, name: str
) -> None:
    async with (
        httpx.AsyncClient(timeout=TIMEOUT) as client,
        client.stream("POST", server.url("chunked", api, name), json={}) as r,
    ):
        events = [e async for e in sn_httpx.aiter_events(r, api=api)]
    assert as_dicts(events) == expected(source_bytes(api, name))


def test_httpx_sync_events_arrive_while_the_body_streams(gate: _Server) -> None:
    seen_before_end: list[str] = []
    with httpx.Client(timeout=TIMEOUT) as client:
        url = gate.url("gate", "anthropic-messages", "sample")
        with client.stream("GET", url) as r:
            for event in sn_httpx.iter_events(r):
                if not gate.gate.is_set():
                    seen_before_end.append(type(event).__name__)
                    gate.gate.set()
    assert gate.gate_opened == [True]
    assert seen_before_end == ["Start"]


async def test_httpx_async_events_arrive_while_the_body_streams(gate: _Server) -> None:
    async with (
        httpx.AsyncClient(timeout=TIMEOUT) as client,
        client.stream("GET", gate.url("gate", "openai-responses", "sample")) as r,
    ):
        async for event in sn_httpx.aiter_events(r):
            if isinstance(event, Start):
                gate.gate.set()
    assert gate.gate_opened == [True]


def test_httpx_connection_cut_mid_stream(server: _Server) -> None:
    api = "anthropic-messages"
    with (
        httpx.Client(timeout=TIMEOUT) as client,
        client.stream("GET", server.url("cut", api, "sample")) as r,
    ):
        events = list(sn_httpx.iter_events(r))
    error = assert_truncated(events, r"RemoteProtocolError|incomplete|closed")
    assert error.message.content, "what arrived before the cut is kept"


def test_httpx_connection_cut_raises_when_asked(server: _Server) -> None:
    events: list[Event] = []
    with (  # noqa: SIM117 - pytest.raises covers the reading only
        httpx.Client(timeout=TIMEOUT) as client,
        client.stream("GET", server.url("cut", "openai-completions", "sample")) as r,
    ):
        with pytest.raises(httpx.HTTPError):
            for event in sn_httpx.iter_events(r, raise_source_errors=True):
                events.append(event)
    assert_truncated(events)


def test_httpx_close_delimited_body_cut_is_truncated(server: _Server) -> None:
    with (
        httpx.Client(timeout=TIMEOUT) as client,
        client.stream("GET", server.url("cutclose", "openai-responses", "sample")) as r,
    ):
        events = list(sn_httpx.iter_events(r))
    assert_truncated(events)


def test_httpx_sync_read_timeout_is_a_truncated_error(server: _Server) -> None:
    timeout = httpx.Timeout(TIMEOUT, read=STALL_READ_TIMEOUT)
    started = time.monotonic()
    with (
        httpx.Client(timeout=timeout) as client,
        client.stream("GET", server.url("stall", "google-generative-ai", "sample")) as r,
    ):
        events = list(sn_httpx.iter_events(r))
    assert time.monotonic() - started < TIMEOUT
    error = assert_truncated(events, TIMED_OUT)
    assert "ReadTimeout" in error.reason
    assert error.message.content


def test_httpx_sync_read_timeout_raises_when_asked(server: _Server) -> None:
    timeout = httpx.Timeout(TIMEOUT, read=STALL_READ_TIMEOUT)
    events: list[Event] = []
    with (  # noqa: SIM117 - pytest.raises covers the reading only
        httpx.Client(timeout=timeout) as client,
        client.stream("GET", server.url("stall", "anthropic-messages", "sample")) as r,
    ):
        with pytest.raises(httpx.ReadTimeout):
            for event in sn_httpx.iter_events(r, raise_source_errors=True):
                events.append(event)
    assert_truncated(events, TIMED_OUT)


async def test_httpx_async_read_timeout_is_a_truncated_error(server: _Server) -> None:
    timeout = httpx.Timeout(TIMEOUT, read=STALL_READ_TIMEOUT)
    started = time.monotonic()
    async with (
        httpx.AsyncClient(timeout=timeout) as client,
        client.stream("GET", server.url("stall", "openai-responses", "sample")) as r,
    ):
        events = [e async for e in sn_httpx.aiter_events(r)]
    assert time.monotonic() - started < TIMEOUT
    assert_truncated(events, TIMED_OUT)


async def test_httpx_async_idle_timeout_is_a_truncated_error(server: _Server) -> None:
    started = time.monotonic()
    timeout = httpx.Timeout(TIMEOUT, read=None)  # no read timeout: only the idle one
    async with (
        httpx.AsyncClient(timeout=timeout) as client,
        client.stream("GET", server.url("stall", "google-generative-ai", "sample")) as r,
    ):
        events = [e async for e in sn_httpx.aiter_events(r, idle_timeout=IDLE)]
    assert time.monotonic() - started < TIMEOUT
    assert_truncated(events, r"IdleTimeout: .*idle_timeout=0\.3")


# The openai and anthropic SDKs are built on httpx2, a fork of httpx with the
# same API: the adapter reads responses of either client.
try:
    import httpx2
except ImportError:  # pragma: no cover - the dev extra installs it (the SDKs need it)
    HTTPX_LIBS: list[Any] = [httpx]
else:
    HTTPX_LIBS = [httpx, httpx2]


@pytest.mark.parametrize("lib", HTTPX_LIBS, ids=lambda lib: lib.__name__)
def test_httpx_adapter_reads_either_client(server: _Server, lib: Any) -> None:
    api: ApiName = "anthropic-messages"
    with (
        lib.Client(timeout=lib.Timeout(TIMEOUT)) as client,
        client.stream("POST", server.url("chunked", api, "sample"), json={"stream": True}) as r,
    ):
        events = list(sn_httpx.iter_events(r))
    assert as_dicts(events) == expected(source_bytes(api, "sample"))
    assert events[0].to_dict()["api"] == api


@pytest.mark.parametrize("lib", HTTPX_LIBS, ids=lambda lib: lib.__name__)
def test_httpx_adapter_read_timeout_of_either_client(server: _Server, lib: Any) -> None:
    timeout = lib.Timeout(TIMEOUT, read=STALL_READ_TIMEOUT)
    with (
        lib.Client(timeout=timeout) as client,
        client.stream("GET", server.url("stall", "openai-completions", "sample")) as r,
    ):
        events = list(sn_httpx.iter_events(r))
    error = assert_truncated(events, TIMED_OUT)
    assert "ReadTimeout" in error.reason


@pytest.mark.parametrize("lib", HTTPX_LIBS, ids=lambda lib: lib.__name__)
async def test_httpx_adapter_idle_timeout_of_either_async_client(server: _Server, lib: Any) -> None:
    started = time.monotonic()
    async with (
        lib.AsyncClient(timeout=lib.Timeout(TIMEOUT, read=None)) as client,
        client.stream("GET", server.url("stall", "openai-responses", "sample")) as r,
    ):
        events = [e async for e in sn_httpx.aiter_events(r, idle_timeout=IDLE)]
    assert time.monotonic() - started < TIMEOUT
    assert_truncated(events, r"IdleTimeout: .*idle_timeout=0\.3")


async def test_idle_timeout_passes_pieces_and_cancellation_through() -> None:
    async def slow() -> AsyncIterator[bytes]:
        yield b"a"
        await asyncio.sleep(0.05)
        yield b"b"

    assert [p async for p in idle_limited(slow(), 0.5)] == [b"a", b"b"]
    assert [p async for p in idle_limited(slow(), None)] == [b"a", b"b"]
    with pytest.raises(IdleTimeout, match=r"no bytes for 0\.01 s"):
        _ = [p async for p in idle_limited(slow(), 0.01)]
    task = asyncio.ensure_future(_drain(idle_limited(_forever(), 5)))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def _forever() -> AsyncIterator[bytes]:
    yield b"x"
    await asyncio.Event().wait()
    yield b""  # never reached


async def _drain(source: AsyncIterator[bytes]) -> None:
    async for _ in source:
        pass


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "1", True])
def test_idle_timeout_rejects_bad_values_at_the_call(bad: Any) -> None:
    with pytest.raises(ValueError, match="idle_timeout"):
        sn_aiohttp.aiter_events(_NoBody(), idle_timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="idle_timeout"):
        sn_sdk.aiter_chunk_events(_drain_source(), idle_timeout=bad)


class _NoBody:
    """Stands for an ``aiohttp.ClientResponse``: never read, since the bad
    option is refused when the adapter is called."""

    url = "http://127.0.0.1/"
    content: Any = None


async def _drain_source() -> AsyncIterator[bytes]:
    yield b""


async def test_httpx_async_connection_cut_mid_stream(server: _Server) -> None:
    async with (
        httpx.AsyncClient(timeout=TIMEOUT) as client,
        client.stream("GET", server.url("cut", "google-generative-ai", "sample")) as r,
    ):
        events = [e async for e in sn_httpx.aiter_events(r)]
    assert_truncated(events)


def test_httpx_error_status_with_json_body_is_an_upstream_error(server: _Server) -> None:
    with (
        httpx.Client(timeout=TIMEOUT) as client,
        client.stream("POST", server.url("error500", "anthropic-messages", "x")) as r,
    ):
        assert r.status_code == 500
        events = list(sn_httpx.iter_events(r))
    start, error = events  # Start is first, also of an error body
    assert isinstance(start, Start) and start.api == "anthropic-messages"
    assert isinstance(error, Error)
    assert (error.kind, error.code, error.reason) == ("upstream", "overloaded_error", "Overloaded")


# --------------------------------------------------------------------------
# aiohttp


def _aiohttp_session(sock_read: float = TIMEOUT) -> Any:
    timeout = aiohttp.ClientTimeout(total=TIMEOUT * 2, sock_connect=TIMEOUT, sock_read=sock_read)
    return aiohttp.ClientSession(timeout=timeout)


@pytest.mark.parametrize(("api", "name"), cases())
async def test_aiohttp_streams_equal_in_memory_result(
    server: _Server, api: ApiName, name: str
) -> None:
    async with (
        _aiohttp_session() as session,
        session.post(server.url("chunked", api, name), json={}) as r,
    ):
        events = [e async for e in sn_aiohttp.aiter_events(r, api=api)]
    assert as_dicts(events) == expected(source_bytes(api, name))


async def test_aiohttp_close_delimited_body(server: _Server) -> None:
    api = "openai-completions"
    async with _aiohttp_session() as session, session.get(server.url("close", api, "sample")) as r:
        events = [e async for e in sn_aiohttp.aiter_events(r)]
    assert as_dicts(events) == expected(source_bytes(api, "sample"))


async def test_aiohttp_events_arrive_while_the_body_streams(gate: _Server) -> None:
    async with (
        _aiohttp_session() as session,
        session.get(gate.url("gate", "google-generative-ai", "sample")) as r,
    ):
        async for event in sn_aiohttp.aiter_events(r):
            if isinstance(event, Start):
                gate.gate.set()
    assert gate.gate_opened == [True]


async def test_aiohttp_connection_cut_mid_stream(server: _Server) -> None:
    async with (
        _aiohttp_session() as session,
        session.get(server.url("cut", "anthropic-messages", "sample")) as r,
    ):
        events = [e async for e in sn_aiohttp.aiter_events(r)]
    error = assert_truncated(events, r"Payload|closed|incomplete|transfer")
    assert error.message.content


async def test_aiohttp_connection_cut_raises_when_asked(server: _Server) -> None:
    events: list[Event] = []
    async with (
        _aiohttp_session() as session,
        session.get(server.url("cut", "openai-responses", "sample")) as r,
    ):
        with pytest.raises(aiohttp.ClientError):
            async for event in sn_aiohttp.aiter_events(r, raise_source_errors=True):
                events.append(event)
    assert_truncated(events)


async def test_aiohttp_read_timeout_is_a_truncated_error(server: _Server) -> None:
    started = time.monotonic()
    async with (
        _aiohttp_session(sock_read=STALL_READ_TIMEOUT) as session,
        session.get(server.url("stall", "openai-completions", "sample")) as r,
    ):
        events = [e async for e in sn_aiohttp.aiter_events(r)]
    assert time.monotonic() - started < TIMEOUT
    assert_truncated(events, TIMED_OUT)


IDLE = 0.3  # the idle timeout used against the stalling server


async def test_aiohttp_bug_hangs_on_a_malformed_chunk_header(server: _Server) -> None:
    """aiohttp 3.14 waits forever on a malformed chunk-size line once the body
    has started: its ``sock_read`` timer does not fire (bounded here at 1 s)."""

    async def read(r: Any) -> list[Event]:
        return [e async for e in sn_aiohttp.aiter_events(r)]

    async with (
        _aiohttp_session(sock_read=STALL_READ_TIMEOUT) as session,
        session.get(server.url("badchunk", "anthropic-messages", "sample")) as r,
    ):
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(read(r), 1.0)


@pytest.mark.parametrize("mode", ["badchunk", "stall"])
async def test_aiohttp_idle_timeout_is_a_truncated_error(server: _Server, mode: str) -> None:
    started = time.monotonic()
    async with (
        _aiohttp_session(sock_read=TIMEOUT) as session,
        session.get(server.url(mode, "anthropic-messages", "sample")) as r,
    ):
        events = [e async for e in sn_aiohttp.aiter_events(r, idle_timeout=IDLE)]
    assert time.monotonic() - started < TIMEOUT
    error = assert_truncated(events, r"IdleTimeout: no bytes for 0\.3 s \(idle_timeout=0\.3\)")
    assert error.message.content  # what arrived before the stall is kept


async def test_aiohttp_idle_timeout_raises_when_asked(server: _Server) -> None:
    events: list[Event] = []
    async with (
        _aiohttp_session() as session,
        session.get(server.url("badchunk", "openai-responses", "sample")) as r,
    ):
        with pytest.raises(IdleTimeout):
            async for event in sn_aiohttp.aiter_events(
                r, raise_source_errors=True, idle_timeout=IDLE
            ):
                events.append(event)
    assert_truncated(events, "idle_timeout")


async def test_aiohttp_read_timeout_raises_when_asked(server: _Server) -> None:
    events: list[Event] = []
    async with (
        _aiohttp_session(sock_read=STALL_READ_TIMEOUT) as session,
        session.get(server.url("stall", "anthropic-messages", "sample")) as r,
    ):
        with pytest.raises(TimeoutError):
            async for event in sn_aiohttp.aiter_events(r, raise_source_errors=True):
                events.append(event)
    assert_truncated(events)


# --------------------------------------------------------------------------
# requests


@pytest.mark.parametrize(("api", "name"), cases())
def test_requests_streams_equal_in_memory_result(server: _Server, api: ApiName, name: str) -> None:
    with requests.post(
        server.url("chunked", api, name), json={}, stream=True, timeout=TIMEOUT
    ) as r:
        events = list(sn_requests.iter_events(r, api=api))
    assert as_dicts(events) == expected(source_bytes(api, name))


@pytest.mark.parametrize("mode", ["close", "length"])
def test_requests_unframed_bodies(server: _Server, mode: str) -> None:
    api = "anthropic-messages"
    with requests.get(server.url(mode, api, "sample"), stream=True, timeout=TIMEOUT) as r:
        events = list(sn_requests.iter_events(r))
    assert as_dicts(events) == expected(source_bytes(api, "sample"))


@pytest.mark.parametrize("mode", ["gate", "gateclose"])
def test_requests_events_arrive_while_the_body_streams(gate: _Server, mode: str) -> None:
    url = gate.url(mode, "openai-completions", "sample")
    with requests.get(url, stream=True, timeout=TIMEOUT) as r:
        for event in sn_requests.iter_events(r):
            if isinstance(event, Start):
                gate.gate.set()
    assert gate.gate_opened == [True]


def test_requests_without_stream_true_still_normalizes(server: _Server) -> None:
    api = "openai-responses"
    r = requests.get(server.url("chunked", api, "sample"), timeout=TIMEOUT)
    events = list(sn_requests.iter_events(r))
    assert as_dicts(events) == expected(source_bytes(api, "sample"))


def test_requests_connection_cut_mid_stream(server: _Server) -> None:
    with requests.get(
        server.url("cut", "google-generative-ai", "sample"), stream=True, timeout=TIMEOUT
    ) as r:
        events = list(sn_requests.iter_events(r))
    assert_truncated(events, r"ChunkedEncodingError|Connection|incomplete")


def test_requests_connection_cut_raises_when_asked(server: _Server) -> None:
    events: list[Event] = []
    url = server.url("cut", "anthropic-messages", "sample")
    with (
        requests.get(url, stream=True, timeout=TIMEOUT) as r,
        pytest.raises(requests.RequestException),
    ):
        for event in sn_requests.iter_events(r, raise_source_errors=True):
            events.append(event)
    assert_truncated(events)


@pytest.mark.parametrize("mode", ["stall"])
def test_requests_read_timeout_is_a_truncated_error(server: _Server, mode: str) -> None:
    started = time.monotonic()
    url = server.url(mode, "openai-responses", "sample")
    with requests.get(url, stream=True, timeout=(TIMEOUT, STALL_READ_TIMEOUT)) as r:
        events = list(sn_requests.iter_events(r))
    assert time.monotonic() - started < TIMEOUT
    assert_truncated(events, TIMED_OUT)


def test_requests_read_timeout_raises_when_asked(server: _Server) -> None:
    events: list[Event] = []
    url = server.url("stall", "google-generative-ai", "sample")
    with (
        requests.get(url, stream=True, timeout=(TIMEOUT, STALL_READ_TIMEOUT)) as r,
        pytest.raises(requests.ConnectionError),
    ):
        for event in sn_requests.iter_events(r, raise_source_errors=True):
            events.append(event)
    assert_truncated(events, TIMED_OUT)


# --------------------------------------------------------------------------
# The official SDKs, pointed at the local server


try:
    import openai
except ImportError:  # pragma: no cover - the dev extra installs it
    HAVE_OPENAI = False
else:
    HAVE_OPENAI = True
try:
    import anthropic
except ImportError:  # pragma: no cover
    HAVE_ANTHROPIC = False
else:
    HAVE_ANTHROPIC = True

if TYPE_CHECKING:
    from anthropic.types import MessageParam
    from openai.types.chat import ChatCompletionMessageParam

needs_openai = pytest.mark.skipif(not HAVE_OPENAI, reason="the openai SDK is not installed")
needs_anthropic = pytest.mark.skipif(
    not HAVE_ANTHROPIC, reason="the anthropic SDK is not installed"
)

QUESTION = "What's the weather in Paris?"
OPENAI_MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": QUESTION}]
ANTHROPIC_MESSAGES: list[MessageParam] = [{"role": "user", "content": QUESTION}]


def _openai(server: _Server, mode: str, api: str, name: str, **kw: Any) -> Any:
    return openai.OpenAI(
        base_url=server.url(mode, api, name),
        api_key="sk-local-test",
        max_retries=0,
        timeout=kw.pop("timeout", TIMEOUT),
    )


def _anthropic(server: _Server, mode: str, name: str, **kw: Any) -> Any:
    return anthropic.Anthropic(
        base_url=server.url(mode, "anthropic-messages", name),
        api_key="sk-ant-local-test",
        max_retries=0,
        timeout=kw.pop("timeout", TIMEOUT),
    )


def _names() -> list[Any]:
    return [
        pytest.param("sample", id="sample"),
        pytest.param("fixture", id="fixture", marks=needs_fixtures),
    ]


def _file(api: str, which: str) -> str:
    return "sample" if which == "sample" else STREAMS[api].split("/", 1)[1]


@needs_openai
@pytest.mark.parametrize("which", _names())
def test_openai_sdk_chat_completions_with_streaming_response(server: _Server, which: str) -> None:
    api: ApiName = "openai-completions"
    name = _file(api, which)
    client = _openai(server, "chunked", api, name)
    with client.chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=OPENAI_MESSAGES, stream=True
    ) as raw:
        events = list(sn_sdk.iter_events(raw, api=api))
    assert as_dicts(events) == expected(source_bytes(api, name))


@needs_openai
@pytest.mark.parametrize("which", _names())
def test_openai_sdk_responses_with_streaming_response(server: _Server, which: str) -> None:
    api = "openai-responses"
    name = _file(api, which)
    client = _openai(server, "chunked", api, name)
    with client.responses.with_streaming_response.create(
        model="gpt-5", input="What's the weather in Paris?", stream=True
    ) as raw:
        events = list(sn_sdk.iter_events(raw))
    assert as_dicts(events) == expected(source_bytes(api, name))


@needs_openai
def test_openai_sdk_unread_stream_object(server: _Server) -> None:
    api = "openai-completions"
    client = _openai(server, "chunked", api, "sample")
    stream = client.chat.completions.create(model="gpt-4o", messages=OPENAI_MESSAGES, stream=True)
    with stream:
        events = list(sn_sdk.iter_events(stream))
    assert as_dicts(events) == expected(source_bytes(api, "sample"))


@needs_openai
def test_openai_sdk_with_raw_response(server: _Server) -> None:
    api = "openai-responses"
    client = _openai(server, "chunked", api, "sample")
    raw = client.responses.with_raw_response.create(model="gpt-5", input="hi", stream=True)
    try:
        events = list(sn_sdk.iter_events(raw))
    finally:
        raw.http_response.close()
    assert as_dicts(events) == expected(source_bytes(api, "sample"))


@needs_openai
async def test_openai_sdk_async_with_raw_response_and_stream(server: _Server) -> None:
    api = "openai-completions"
    client = openai.AsyncOpenAI(
        base_url=server.url("chunked", api, "sample"),
        api_key="sk-local",
        max_retries=0,
        timeout=TIMEOUT,
    )
    raw = await client.chat.completions.with_raw_response.create(
        model="m", messages=OPENAI_MESSAGES, stream=True
    )
    events = [e async for e in sn_sdk.aiter_events(raw)]
    await raw.http_response.aclose()
    stream = await client.chat.completions.create(model="m", messages=OPENAI_MESSAGES, stream=True)
    from_stream = [e async for e in sn_sdk.aiter_events(stream)]
    await client.close()
    assert as_dicts(events) == as_dicts(from_stream) == expected(source_bytes(api, "sample"))


@needs_openai
@pytest.mark.parametrize("which", _names())
async def test_openai_sdk_async(server: _Server, which: str) -> None:
    api = "openai-completions"
    name = _file(api, which)
    client = openai.AsyncOpenAI(
        base_url=server.url("chunked", api, name),
        api_key="sk-local",
        max_retries=0,
        timeout=TIMEOUT,
    )
    async with client.chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=OPENAI_MESSAGES, stream=True
    ) as raw:
        events = [e async for e in sn_sdk.aiter_events(raw)]
    await client.close()
    assert as_dicts(events) == expected(source_bytes(api, name))


@needs_openai
async def test_openai_sdk_async_idle_timeout(server: _Server) -> None:
    client = openai.AsyncOpenAI(
        base_url=server.origin() + "/sse/stall/openai-completions/sample",
        api_key="test",
        timeout=openai.Timeout(TIMEOUT, read=None),
        max_retries=0,
    )
    async with client.chat.completions.with_streaming_response.create(
        model="gpt-4.1", messages=OPENAI_MESSAGES, stream=True
    ) as raw:
        events = [e async for e in sn_sdk.aiter_events(raw, idle_timeout=IDLE)]
    assert_truncated(events, "idle_timeout=0.3")
    await client.close()


@needs_openai
def test_openai_sdk_connection_cut(server: _Server) -> None:
    client = _openai(server, "cut", "openai-responses", "sample")
    with client.responses.with_streaming_response.create(
        model="gpt-5", input="hi", stream=True
    ) as raw:
        events = list(sn_sdk.iter_events(raw))
    assert_truncated(events)


@needs_openai
def test_openai_sdk_read_timeout(server: _Server) -> None:
    timeout = openai.Timeout(TIMEOUT, read=STALL_READ_TIMEOUT)
    client = _openai(server, "stall", "openai-completions", "sample", timeout=timeout)
    started = time.monotonic()
    with client.chat.completions.with_streaming_response.create(
        model="gpt-4o", messages=OPENAI_MESSAGES, stream=True
    ) as raw:
        events = list(sn_sdk.iter_events(raw))
    assert time.monotonic() - started < TIMEOUT
    assert_truncated(events, TIMED_OUT)


@needs_anthropic
@pytest.mark.parametrize("which", _names())
def test_anthropic_sdk_with_streaming_response(server: _Server, which: str) -> None:
    api = "anthropic-messages"
    name = _file(api, which)
    client = _anthropic(server, "chunked", name)
    with client.messages.with_streaming_response.create(
        model="claude-sonnet-4-6", max_tokens=1024, messages=ANTHROPIC_MESSAGES, stream=True
    ) as raw:
        events = list(sn_sdk.iter_events(raw, api="anthropic"))
    assert as_dicts(events) == expected(source_bytes(api, name))


@needs_anthropic
def test_anthropic_sdk_records_the_requested_model(server: _Server) -> None:
    # a proxy that serves "team-default" as claude-sonnet-4-6
    client = _anthropic(server, "chunked", "sample")
    with client.messages.with_streaming_response.create(
        model="team-default", max_tokens=1024, messages=ANTHROPIC_MESSAGES, stream=True
    ) as raw:
        events = list(sn_sdk.iter_events(raw, model="team-default"))
    done = events[-1]
    assert isinstance(done, Done)
    assert done.message.model == "team-default"
    assert done.message.response_model == "claude-sonnet-4-6"


@needs_anthropic
async def test_anthropic_sdk_async(server: _Server) -> None:
    client = anthropic.AsyncAnthropic(
        base_url=server.url("chunked", "anthropic-messages", "sample"),
        api_key="sk-ant-local",
        max_retries=0,
        timeout=TIMEOUT,
    )
    async with client.messages.with_streaming_response.create(
        model="claude-sonnet-4-6", max_tokens=1024, messages=ANTHROPIC_MESSAGES, stream=True
    ) as raw:
        events = [e async for e in sn_sdk.aiter_events(raw)]
    await client.close()
    assert as_dicts(events) == expected(source_bytes("anthropic-messages", "sample"))


@needs_anthropic
def test_anthropic_sdk_connection_cut(server: _Server) -> None:
    client = _anthropic(server, "cut", "sample")
    with client.messages.with_streaming_response.create(
        model="claude-sonnet-4-6", max_tokens=1024, messages=ANTHROPIC_MESSAGES, stream=True
    ) as raw:
        events = list(sn_sdk.iter_events(raw))
    error = assert_truncated(events)
    assert error.message.content


def test_sdk_adapter_rejects_objects_without_raw_bytes() -> None:
    with pytest.raises(TypeError, match="raw bytes"):
        sn_sdk.iter_events(object())
    with pytest.raises(TypeError, match="raw bytes"):
        sn_sdk.aiter_events(object())


async def test_sdk_sync_adapter_rejects_an_async_response(server: _Server) -> None:
    class AsyncRaw:
        async def _gen(self) -> AsyncIterator[bytes]:
            yield b""

        def iter_bytes(self) -> AsyncIterator[bytes]:
            return self._gen()

    with pytest.raises(TypeError, match="aiter_events"):
        sn_sdk.iter_events(AsyncRaw())


# --------------------------------------------------------------------------


def test_the_core_imports_no_client_library() -> None:
    code = (
        "import sys, streamnorm, streamnorm.cli, streamnorm.integrations, "
        "streamnorm.integrations.httpx, streamnorm.integrations.aiohttp, "
        "streamnorm.integrations.requests, streamnorm.integrations.sdk\n"
        "loaded = {'httpx', 'aiohttp', 'requests', 'openai', 'anthropic', 'urllib3'}"
        " & set(sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)


# --------------------------------------------------------------------------
# Already-parsed chunks (SDK stream objects, LiteLLM chunks, dicts)


def view(events: list[Event]) -> tuple[Any, ...]:
    """What a consumer reads: text, thinking, calls, stop reason, usage."""
    end = events[-1]
    assert isinstance(end, (Done, Error))
    m = end.message
    thinking = [b.thinking for b in m.content if hasattr(b, "thinking")]
    calls = [(c.name, dict(c.arguments), c.error) for c in m.tool_calls]
    return (type(end).__name__, m.api, m.text, thinking, calls, m.stop_reason, m.usage)


@needs_openai
@pytest.mark.parametrize("which", _names())
def test_chunk_events_from_openai_chat_chunk_objects(server: _Server, which: str) -> None:
    api = "openai-completions"
    name = _file(api, which)
    client = _openai(server, "chunked", api, name)
    with client.chat.completions.create(
        model="gpt-4o", messages=OPENAI_MESSAGES, stream=True
    ) as stream:
        chunks = list(stream)
    events = list(sn_sdk.iter_chunk_events(chunks))
    reference = list(normalize([source_bytes(api, name)]))
    assert view(events) == view(reference)
    assert events[-1] == reference[-1]  # the whole final message, signatures included


@needs_openai
def test_chunk_events_from_openai_responses_event_objects(server: _Server) -> None:
    api = "openai-responses"
    client = _openai(server, "chunked", api, "sample")
    with client.responses.create(model="gpt-5", input="hi", stream=True) as stream:
        chunks = list(stream)
    events = list(sn_sdk.iter_chunk_events(chunks))
    assert view(events) == view(list(normalize([source_bytes(api, "sample")])))


@needs_anthropic
def test_chunk_events_from_anthropic_event_objects(server: _Server) -> None:
    client = _anthropic(server, "chunked", "sample")
    with client.messages.create(
        model="claude-sonnet-4-6", max_tokens=1024, messages=ANTHROPIC_MESSAGES, stream=True
    ) as stream:
        chunks = list(stream)
    events = list(sn_sdk.iter_chunk_events(chunks))
    reference = list(normalize([source_bytes("anthropic-messages", "sample")]))
    assert view(events) == view(reference)


@needs_openai
async def test_async_chunk_events(server: _Server) -> None:
    api = "openai-completions"
    client = openai.AsyncOpenAI(
        base_url=server.url("chunked", api, "sample"),
        api_key="sk-local",
        max_retries=0,
        timeout=TIMEOUT,
    )
    stream = await client.chat.completions.create(model="m", messages=OPENAI_MESSAGES, stream=True)
    events = [e async for e in sn_sdk.aiter_chunk_events(stream)]
    await client.close()
    assert view(events) == view(list(normalize([source_bytes(api, "sample")])))


@needs_openai
async def test_async_chunk_events_idle_timeout(server: _Server) -> None:
    """The SDK's own parsed stream from a server that stalls mid-body, with
    no read timeout: the idle timeout ends it, the chunks before kept."""
    client = openai.AsyncOpenAI(
        base_url=server.url("stall", "openai-completions", "sample"),
        api_key="sk-local",
        max_retries=0,
        timeout=openai.Timeout(TIMEOUT, read=None),
    )
    stream = await client.chat.completions.create(model="m", messages=OPENAI_MESSAGES, stream=True)
    started = time.monotonic()
    events = [e async for e in sn_sdk.aiter_chunk_events(stream, idle_timeout=IDLE)]
    assert time.monotonic() - started < TIMEOUT
    await client.close()
    error = assert_truncated(events, r"IdleTimeout: no bytes for 0\.3 s")
    assert error.message.content


def _data_lines(data: bytes) -> list[str]:
    lines = data.decode().replace("\r\n", "\n").split("\n")
    return [ln[6:] for ln in lines if ln.startswith("data: ") and ln != "data: [DONE]"]


@pytest.mark.parametrize("api", list(STREAMS))
def test_chunk_events_from_dicts_and_json_text(api: ApiName) -> None:
    data = source_bytes(api, "sample")
    reference = view(list(normalize([data])))
    texts = _data_lines(data)
    dicts_ = [json.loads(t) for t in texts]
    assert view(list(sn_sdk.iter_chunk_events(dicts_))) == reference
    assert view(list(sn_sdk.iter_chunk_events(texts, api=api))) == reference
    pretty = [json.dumps(d, indent=2) for d in dicts_]  # raw newlines between tokens
    assert view(list(sn_sdk.iter_chunk_events(pretty))) == reference


def test_chunk_events_judge_the_end_by_finish_reason() -> None:
    dicts_ = [json.loads(t) for t in _data_lines(source_bytes("openai-completions", "sample"))]
    finish = next(
        i for i, d in enumerate(dicts_) if d["choices"] and d["choices"][0]["finish_reason"]
    )
    cut = list(sn_sdk.iter_chunk_events(dicts_[:finish]))
    assert_truncated(cut)
    cut_marked = list(sn_sdk.iter_chunk_events(dicts_[:finish], done_marker=True))
    assert isinstance(cut_marked[-1], Done)
    assert any(getattr(e, "kind", None) == "missing_stop_reason" for e in cut_marked)


def test_chunk_events_from_a_failing_iterator() -> None:
    dicts_ = [json.loads(t) for t in _data_lines(source_bytes("anthropic-messages", "sample"))]

    def chunks() -> Iterator[dict[str, Any]]:
        yield from dicts_[:5]
        raise ConnectionResetError("peer went away")

    events = list(sn_sdk.iter_chunk_events(chunks()))
    assert_truncated(events, "peer went away")
    with pytest.raises(TypeError, match="cannot serialize"):
        list(sn_sdk.iter_chunk_events([object()], raise_source_errors=True))


def test_chunk_events_from_google_genai_chunks(server: _Server) -> None:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    api = "google-generative-ai"
    options = types.HttpOptions(
        base_url=f"{server.origin()}/sse/chunked/{api}/sample/", timeout=int(TIMEOUT * 1000)
    )
    client = genai.Client(api_key="local-key", http_options=options)
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="?"))
    events = list(sn_sdk.iter_chunk_events(chunks))
    reference = list(normalize([source_bytes(api, "sample")]))
    assert view(events) == view(reference)
    assert events[-1] == reference[-1]


# --------------------------------------------------------------------------
# The host an adapter talked to, recorded as ``provider``


def test_provider_for_url() -> None:
    assert provider_for_url("https://api.anthropic.com/v1/messages") == "anthropic"
    assert provider_for_url("https://API.OpenAI.com./v1/responses") == "openai"
    google = "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent"
    assert provider_for_url(google + "?alt=sse") == "google"
    # Any other host is its own provider: two Azure resources are two hosts.
    assert provider_for_url("https://res-a.openai.azure.com/openai/v1") == "res-a.openai.azure.com"
    assert provider_for_url(httpx.URL("http://127.0.0.1:8080/x")) == "127.0.0.1"
    assert provider_for_url("http://[::1]:8080/") == "::1"
    assert provider_for_url("not a url") is None and provider_for_url(None) is None
    assert with_provider({"provider": "mine"}, "https://api.openai.com/") == {"provider": "mine"}
    assert with_provider({"model": "m"}, None) == {"model": "m"}


def _provider(events: list[Event]) -> str | None:
    end = events[-1]
    assert isinstance(end, Done), end
    return end.message.provider


def test_sync_adapters_record_the_host(server: _Server) -> None:
    url = server.url("chunked", "anthropic-messages", "sample")
    with httpx.Client(timeout=TIMEOUT) as client:
        with client.stream("GET", url) as r:
            assert _provider(list(sn_httpx.iter_events(r))) == LOOPBACK
        with client.stream("GET", url) as r:
            assert _provider(list(sn_httpx.iter_events(r, provider="anthropic"))) == "anthropic"
    with requests.get(url, stream=True, timeout=TIMEOUT) as r:
        assert _provider(list(sn_requests.iter_events(r))) == LOOPBACK


async def test_async_adapters_record_the_host(server: _Server) -> None:
    url = server.url("chunked", "openai-responses", "sample")
    async with _aiohttp_session() as session, session.get(url) as r:
        assert _provider([e async for e in sn_aiohttp.aiter_events(r)]) == LOOPBACK
    async with httpx.AsyncClient(timeout=TIMEOUT) as client, client.stream("GET", url) as r:
        assert _provider([e async for e in sn_httpx.aiter_events(r)]) == LOOPBACK


@needs_openai
def test_sdk_adapter_records_the_host(server: _Server) -> None:
    client = _openai(server, "chunked", "openai-completions", "sample")
    with client.chat.completions.with_streaming_response.create(
        model="gpt-4.1", messages=OPENAI_MESSAGES, stream=True
    ) as raw:
        assert _provider(list(sn_sdk.iter_events(raw))) == LOOPBACK
    stream = client.chat.completions.create(model="gpt-4.1", messages=OPENAI_MESSAGES, stream=True)
    assert _provider(list(sn_sdk.iter_events(stream))) == LOOPBACK


def test_a_message_read_from_one_host_keeps_its_signatures_only_for_it(server: _Server) -> None:
    """What the recorded host is for: Anthropic-shaped signatures served by
    127.0.0.1 are not Anthropic's, so they do not go to api.anthropic.com."""
    url = server.url("chunked", "anthropic-messages", "sample")
    with httpx.Client(timeout=TIMEOUT) as client, client.stream("GET", url) as r:
        end = list(sn_httpx.iter_events(r, model="claude-sonnet-4-5"))[-1]
    assert isinstance(end, Done)
    msg = end.message
    assert any(isinstance(b, ThinkingBlock) and b.signature for b in msg.content)
    history: list[Message] = [UserMessage("weather?"), msg]
    history += [ToolResultMessage(c.id, c.name, "sunny") for c in msg.tool_calls]
    foreign = sanitize_messages_for_target(history, "anthropic", "claude-sonnet-4-5")
    turn = foreign[1]
    assert isinstance(turn, AssistantMessage)
    assert not any(isinstance(b, ThinkingBlock) for b in turn.content)
    assert validate_history_for_target(history, "anthropic", "claude-sonnet-4-5") != []
    assert validate_history_for_target(foreign, "anthropic", "claude-sonnet-4-5") == []
    own = sanitize_messages_for_target(
        history, LOOPBACK, "claude-sonnet-4-5", api="anthropic-messages"
    )
    assert own == history
