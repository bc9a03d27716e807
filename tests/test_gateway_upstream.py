"""The gateway's upstream client against raw sockets: what it reads per
iteration, its pool, its timeouts, what it never does (proxies, redirects).

Each test runs a bare asyncio server on 127.0.0.1 whose handler writes the
exact bytes of its answer, so that what reaches the socket at once, what a
connection does after its answer, and a stall inside the chunked framing
are under the test's control.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from streamnorm import StreamEncoder, Usage
from streamnorm.events import Start, TextDelta, UsageUpdate
from streamnorm.gateway import create_app, parse_config
from streamnorm.gateway.config import Upstream
from streamnorm.gateway.translate import Translate
from streamnorm.gateway.upstream import (
    Clients,
    Outgoing,
    UpstreamBroke,
    UpstreamTimeout,
    fetch,
    open_first,
)

from .gateway_support import sse_events
from .support import FIXTURES

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "Served"], Awaitable[None]]

CHAT = FIXTURES / "openai-completions"
BODY = Outgoing("/v1/chat/completions", {}, b'{"model":"m","stream":true}')


@dataclass
class Served:
    """What the raw server saw: connections opened and still open, requests."""

    opened: int = 0
    open: int = 0
    requests: list[bytes] = field(default_factory=list)


async def read_request(reader: asyncio.StreamReader, served: Served) -> bool:
    """One request (head and a Content-Length body); False at end of connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return False
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    served.requests.append(head + await reader.readexactly(length))
    return True


def chunked(parts: list[bytes], *, headers: bytes = b"") -> bytes:
    """A 200 SSE response with one chunked-encoding chunk per part, all in one piece."""
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        b"transfer-encoding: chunked\r\n" + headers + b"\r\n"
    )
    return head + b"".join(map(_chunk, parts)) + b"0\r\n\r\n"


def _chunk(part: bytes) -> bytes:
    """``part`` as one chunked-encoding chunk."""
    return b"%x\r\n%s\r\n" % (len(part), part)


@contextlib.asynccontextmanager
async def raw_server(handler: Handler) -> AsyncIterator[tuple[str, Served]]:
    served = Served()
    handlers: set[asyncio.Task[Any]] = set()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        served.opened += 1
        served.open += 1
        try:
            await handler(reader, writer, served)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            served.open -= 1
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", served
    finally:
        server.close()
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)


def keep_alive(answer: bytes) -> Handler:
    """Answer every request on a connection with ``answer``, keeping it open."""

    async def handler(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served
    ) -> None:
        while await read_request(reader, served):
            writer.write(answer)
            await writer.drain()

    return handler


def upstream(base_url: str, **kw: Any) -> Upstream:
    return Upstream("up", "openai-completions", base_url, **kw)


async def read_all(clients: Clients, up: Upstream) -> list[bytes]:
    opened = await open_first(clients.get(), [up], lambda _: BODY)
    items = [opened.first]
    try:
        items += [chunk async for chunk in opened.rest]
    finally:
        await opened.response.aclose()
    return items


@pytest.fixture(params=["builtin", "aiohttp"])
def kind(request: pytest.FixtureRequest) -> str:
    """The upstream clients that read whatever the socket holds: each test runs on both."""
    return str(request.param)


def events() -> list[bytes]:
    return sse_events((CHAT / "deepseek-tool-call.sse").read_bytes())


async def test_a_whole_answer_in_the_socket_comes_in_a_few_reads(kind: str) -> None:
    """An answer written at once (one chunked-encoding chunk per event) is read
    in a few pieces, not one per chunk: each read takes what the socket holds."""
    parts = events() * 4
    async with raw_server(keep_alive(chunked(parts))) as (url, _):
        clients = Clients(kind)
        try:
            items = await read_all(clients, upstream(url))
        finally:
            await clients.aclose()
    assert b"".join(items) == b"".join(parts)
    assert len(parts) > 200 and len(items) <= 4


def paced_server(parts: list[bytes], pause: float) -> tuple[str, threading.Thread]:
    """A server in a thread of its own (its waits are no timers of the test's
    loop) that answers one request with ``parts``, one chunk every ``pause``
    seconds."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with listener, listener.accept()[0] as conn:
            conn.settimeout(5)
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            conn.sendall(chunked([])[: -len(b"0\r\n\r\n")])
            for part in parts:
                time.sleep(pause)
                conn.sendall(_chunk(part))
            conn.sendall(b"0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", thread


async def test_a_paced_body_arms_no_timer_per_read(kind: str) -> None:
    """A body read event by event re-arms no timer per read: the idle timeout
    is one timer per stream (each timer set and cancelled is CPU at every
    event of every stream)."""
    parts = events()[:30]
    url, thread = paced_server(parts, 0.005)
    loop = asyncio.get_running_loop()
    timers: list[object] = []
    call_at = loop.call_at

    def counted(when: float, callback: Any, *args: Any, **kw: Any) -> asyncio.TimerHandle:
        timers.append(callback)
        return call_at(when, callback, *args, **kw)

    clients = Clients(kind)
    loop.call_at = counted  # type: ignore[method-assign,assignment]
    try:
        items = await read_all(clients, upstream(url))
    finally:
        del loop.call_at
        await clients.aclose()
        thread.join(5)
    assert b"".join(items) == b"".join(parts)
    assert len(items) >= 10  # read event by event, or the count says nothing
    assert len(timers) <= 6, timers


async def test_idle_connections_are_closed_on_a_timer_without_another_request(kind: str) -> None:
    """After a burst of concurrent streams the pool's idle connections close
    on their own once idle for the keep-alive time, with no request after."""
    async with raw_server(keep_alive(chunked(events()))) as (url, served):
        clients = Clients(kind, keepalive=0.3)
        try:
            up = upstream(url)
            await asyncio.gather(*(read_all(clients, up) for _ in range(30)))
            assert served.opened >= 10 and served.open >= 10
            deadline = time.monotonic() + 3.0
            while served.open and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert served.open == 0
        finally:
            await clients.aclose()


async def test_a_kept_alive_connection_is_reused(kind: str) -> None:
    async with raw_server(keep_alive(chunked(events()))) as (url, served):
        clients = Clients(kind)
        try:
            for _ in range(5):
                await read_all(clients, upstream(url))
        finally:
            await clients.aclose()
    assert len(served.requests) == 5 and served.opened == 1


async def test_a_connection_the_upstream_dropped_as_idle_is_retried_once(kind: str) -> None:
    """The upstream closes its kept-alive connection as the next request
    arrives (the idle race): the request goes again on a new connection."""
    answer = chunked(events())

    async def handler(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served
    ) -> None:
        first = served.opened == 1
        while await read_request(reader, served):
            if first and len(served.requests) > 1:
                return  # closed without an answer
            writer.write(answer)
            await writer.drain()

    async with raw_server(handler) as (url, served):
        clients = Clients(kind)
        try:
            await read_all(clients, upstream(url))
            items = await read_all(clients, upstream(url))
        finally:
            await clients.aclose()
    assert b"".join(items) == b"".join(events())
    assert served.opened == 2 and len(served.requests) == 3


@pytest.mark.parametrize("broken", [b"1", b"zz\r\n"], ids=["half-a-size", "malformed-size"])
async def test_a_stall_inside_the_chunked_framing_times_out(broken: bytes, kind: str) -> None:
    """Headers, one event, then half a chunk-size line or a malformed one, and
    silence: the read ends with UpstreamTimeout after ``timeout`` seconds,
    not never (aiohttp's own read timer is not armed after ``zz``). The
    builtin client's parser refuses ``zz`` as it comes: UpstreamBroke at once."""

    async def handler(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served
    ) -> None:
        await read_request(reader, served)
        whole = chunked(events()[:1])
        writer.write(whole[: -len(b"0\r\n\r\n")])
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.write(broken)
        await writer.drain()
        await asyncio.sleep(10)

    async with raw_server(handler) as (url, _):
        clients = Clients(kind)
        try:
            started = time.monotonic()
            refused = kind == "builtin" and broken != b"1"
            with pytest.raises(UpstreamBroke) as caught:
                await asyncio.wait_for(read_all(clients, upstream(url, timeout=0.5)), 5)
            assert isinstance(caught.value, UpstreamTimeout) is not refused
            assert time.monotonic() - started < (0.4 if refused else 3.0)
        finally:
            await clients.aclose()


async def test_an_upstream_silent_before_its_headers_is_a_504(kind: str) -> None:
    async def handler(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served
    ) -> None:
        await read_request(reader, served)
        await asyncio.sleep(10)

    async with raw_server(handler) as (url, _):
        clients = Clients(kind)
        try:
            with pytest.raises(Exception) as caught:
                await fetch(clients.get(), [upstream(url, timeout=0.5)], lambda _: BODY)
        finally:
            await clients.aclose()
    assert getattr(caught.value, "status", None) == 504


async def test_a_corrupt_compressed_body_is_upstream_broke(kind: str) -> None:
    """A gzip body that breaks after its first piece surfaces as UpstreamBroke,
    the one type the relay ends a stream on, not as the client library's own
    exception."""
    good = gzip.compress(b"".join(events()) * 20)
    half = len(good) // 2
    bad = bytes(b ^ 0x55 for b in good[half:])

    async def handler(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served
    ) -> None:
        await read_request(reader, served)
        head, _, end = chunked([good[:half], bad], headers=b"content-encoding: gzip\r\n").partition(
            b"\r\n%x\r\n" % len(bad)
        )
        writer.write(head + b"\r\n")
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.write(b"%x\r\n" % len(bad) + end)
        await writer.drain()

    async with raw_server(handler) as (url, _):
        clients = Clients(kind)
        try:
            opened = await open_first(clients.get(), [upstream(url)], lambda _: BODY)
            assert opened.first
            with pytest.raises(UpstreamBroke):
                async for _ in opened.rest:
                    pass
        finally:
            await clients.aclose()


async def test_proxy_variables_of_the_environment_are_not_read(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    async with (
        raw_server(keep_alive(chunked(events()))) as (url, served),
        raw_server(keep_alive(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")) as (
            proxy,
            via_proxy,
        ),
    ):
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(name, proxy)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        clients = Clients(kind)
        try:
            items = await read_all(clients, upstream(url))
        finally:
            await clients.aclose()
    assert b"".join(items) == b"".join(events())
    assert via_proxy.opened == 0 and len(served.requests) == 1


async def test_a_redirect_is_returned_not_followed(kind: str) -> None:
    async with raw_server(keep_alive(chunked(events()))) as (elsewhere, followed):
        moved = f"HTTP/1.1 307 Temporary Redirect\r\nlocation: {elsewhere}/v1/chat/completions"
        answer = (moved + "\r\ncontent-length: 0\r\n\r\n").encode()
        async with raw_server(keep_alive(answer)) as (url, _):
            clients = Clients(kind)
            try:
                opened = await open_first(clients.get(), [upstream(url)], lambda _: BODY)
            finally:
                await clients.aclose()
    assert opened.response.status_code == 307 and followed.opened == 0


async def test_each_upstream_gets_only_its_own_key(kind: str) -> None:
    async with raw_server(keep_alive(chunked(events()))) as (url, served):
        a = Upstream("a", "anthropic-messages", url, api_key="key-a-SECRET")
        b = Upstream("b", "openai-completions", url, api_key="key-b-SECRET")
        clients = Clients(kind)
        try:
            await read_all(clients, a)
            await read_all(clients, b)
        finally:
            await clients.aclose()
    first, second = (r.lower() for r in served.requests)
    assert b"x-api-key: key-a-secret" in first and b"key-b" not in first
    assert b"authorization: bearer key-b-secret" in second and b"key-a" not in second


Message = MutableMapping[str, Any]


async def test_what_one_upstream_read_yields_goes_to_the_client_in_one_send(
    tmp_path: Path,
) -> None:
    """Through the ASGI app: a 200-event answer the upstream wrote at once
    reaches the server in a few ``http.response.body`` messages, same API
    and cross API."""
    parts = events() * 4
    async with raw_server(keep_alive(chunked(parts))) as (url, _):
        config = parse_config(
            {
                "upstreams": {"chat": {"api": "openai-completions", "base_url": url}},
                "routes": [{"models": "*", "upstreams": ["chat"]}],
            }
        )
        app = create_app(config)
        for path, body in (
            ("/v1/chat/completions", {"model": "m", "stream": True, "messages": [_user()]}),
            (
                "/v1/messages",
                {"model": "m", "stream": True, "max_tokens": 9, "messages": [_user()]},
            ),
        ):
            bodies = await _asgi(app, path, body)
            assert b"".join(bodies).count(b"data:") >= 30
            assert len(bodies) <= 6, (path, len(bodies))


def _user() -> dict[str, str]:
    return {"role": "user", "content": "hi"}


async def _asgi(
    app: Any,
    path: str,
    body: dict[str, Any],
    times: list[float] | None = None,
    *,
    sent: list[Message] | None = None,
    keep_clients: bool = False,
    seen: Callable[[Message], Awaitable[None]] | None = None,
) -> list[bytes]:
    """The non-empty bodies ``app`` sends for one request (``times``: when
    each was sent, by the monotonic clock; ``sent``: every message; ``seen``
    is awaited with each in the server's ``send``). The app's upstream
    connections are closed after it unless ``keep_clients``."""
    import json

    sent = [] if sent is None else sent
    done = asyncio.Event()
    request = [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]

    async def receive() -> Message:
        if request:
            return request.pop()
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if seen is not None:
            await seen(message)
        sent.append(message)
        if times is not None and message.get("body"):
            times.append(time.monotonic())
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    scope = {"type": "http", "method": "POST", "path": path, "headers": [], "query_string": b""}
    try:
        await asyncio.wait_for(app(scope, receive, send), 10)
    finally:
        if not keep_clients:
            await app._clients.aclose()
    assert sent[0]["status"] == 200
    return [m["body"] for m in sent if m["type"] == "http.response.body" and m["body"]]


@pytest.mark.parametrize(
    ("path", "extra"),
    [("/v1/chat/completions", {}), ("/v1/messages", {"max_tokens": 9})],
    ids=["same-API", "cross-API"],
)
async def test_an_event_is_not_held_back_for_the_next(path: str, extra: dict[str, Any]) -> None:
    """The upstream sends its first events, then pauses: what it sent reaches
    the client at once, not with what follows the pause."""
    parts = events()

    async def handler(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served
    ) -> None:
        await read_request(reader, served)
        whole = chunked(parts[:3])[: -len(b"0\r\n\r\n")]
        writer.write(whole)
        await writer.drain()
        await asyncio.sleep(1.0)
        writer.write(chunked(parts[3:]).split(b"\r\n\r\n", 1)[1])
        await writer.drain()

    async with raw_server(handler) as (url, _):
        config = parse_config(
            {
                "upstreams": {"chat": {"api": "openai-completions", "base_url": url}},
                "routes": [{"models": "*", "upstreams": ["chat"]}],
            }
        )
        body = {"model": "m", "stream": True, "messages": [_user()], **extra}
        times: list[float] = []
        started = time.monotonic()
        bodies = await _asgi(create_app(config), path, body, times)
    assert b"data:" in bodies[0] and times[0] - started < 0.5
    assert times[-1] - started >= 1.0


def _ends_later(parts: list[bytes]) -> Handler:
    """Answer every request with ``parts``, then, after a pause, the end of
    the chunked body (as an upstream does that ends its body after its last
    event), keeping the connection open."""
    whole = chunked(parts)
    end = len(b"0\r\n\r\n")

    async def handler(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, served: Served
    ) -> None:
        while await read_request(reader, served):
            writer.write(whole[:-end])
            await writer.drain()
            await asyncio.sleep(0.02)
            writer.write(whole[-end:])
            await writer.drain()

    return handler


_ROUTES = [
    ("/v1/chat/completions", {}, b"data: [DONE]"),
    ("/v1/messages", {"max_tokens": 9}, b"event: message_stop"),
]


@pytest.mark.parametrize(("path", "extra", "last"), _ROUTES, ids=["same-API", "cross-API"])
async def test_a_relayed_stream_leaves_its_upstream_connection_for_the_next(
    path: str, extra: dict[str, Any], last: bytes
) -> None:
    """The stream is over for the client at its terminal event; the end of
    the upstream's body, read after it, puts the connection back in the pool
    (it used to be closed: a new connection, and a TLS handshake, per request)."""
    async with raw_server(_ends_later(events())) as (url, served):
        config = parse_config(
            {
                "upstreams": {"chat": {"api": "openai-completions", "base_url": url}},
                "routes": [{"models": "*", "upstreams": ["chat"]}],
            }
        )
        app = create_app(config)
        body = {"model": "m", "stream": True, "messages": [_user()], **extra}
        try:
            for _ in range(3):
                bodies = await _asgi(app, path, body, keep_clients=True)
                assert last in bodies[-1]
        finally:
            await app._clients.aclose()
    assert len(served.requests) == 3 and served.opened == 1


@pytest.mark.parametrize(("path", "extra", "last"), _ROUTES, ids=["same-API", "cross-API"])
async def test_the_last_event_goes_out_with_the_end_of_the_response(
    path: str, extra: dict[str, Any], last: bytes
) -> None:
    """The stream's terminal event and the response's end are one message
    (one write to the client's socket), not two."""
    async with raw_server(_ends_later(events())) as (url, _):
        config = parse_config(
            {
                "upstreams": {"chat": {"api": "openai-completions", "base_url": url}},
                "routes": [{"models": "*", "upstreams": ["chat"]}],
            }
        )
        sent: list[Message] = []
        body = {"model": "m", "stream": True, "messages": [_user()], **extra}
        await _asgi(create_app(config), path, body, sent=sent)
    assert sent[-1]["type"] == "http.response.body" and not sent[-1].get("more_body")
    assert last in sent[-1]["body"]


def test_the_upstream_client_is_chosen_in_the_configuration() -> None:
    base = {
        "upstreams": {"chat": {"api": "openai-completions", "base_url": "http://127.0.0.1:9"}},
        "routes": [{"models": "*", "upstreams": ["chat"]}],
    }
    assert parse_config(base).upstream_client == "builtin"
    for kind in ("aiohttp", "httpx"):
        chosen = parse_config({**base, "gateway": {"upstream_client": kind}})
        assert chosen.upstream_client == kind
    with pytest.raises(ValueError, match=r"gateway\.upstream_client"):
        parse_config({**base, "gateway": {"upstream_client": "curl"}})


@pytest.mark.parametrize("chosen", ["builtin", "aiohttp", "httpx"])
async def test_every_client_relays_the_same_bytes(chosen: str) -> None:
    parts = events()
    async with raw_server(keep_alive(chunked(parts))) as (url, _):
        clients = Clients(chosen)
        try:
            items = await read_all(clients, upstream(url))
        finally:
            await clients.aclose()
    assert b"".join(items) == b"".join(parts)


@pytest.mark.parametrize(
    ("upstream_api", "stem"),
    [
        ("openai-completions", "anthropic-openai-compat-tool-call"),
        ("openai-completions", "deepseek-tool-call"),
        ("openai-responses", "apply-patch-tool"),
    ],
)
def test_an_anthropic_client_gets_message_start_from_the_upstreams_first_chunk(
    upstream_api: str, stem: str
) -> None:
    """A Chat stream's role-only first chunk, a Responses stream's
    ``response.created``: the Anthropic client's ``message_start`` goes out at
    once, not with the first content one upstream gap later."""
    chunks = sse_events((FIXTURES / upstream_api / f"{stem}.sse").read_bytes())
    relay = Translate(
        upstream_api,
        "anthropic-messages",
        upstream_model="m",
        client_model="m",
        provider=None,
        sse=True,
        created=1,
    )
    first = relay.feed(chunks[0])
    assert first.startswith(b"event: message_start\n") and first.count(b"event:") == 1
    rest = b"".join(relay.feed(c) for c in chunks[1:]) + relay.close()
    assert b"message_start" not in rest and rest.rstrip().endswith(b'{"type":"message_stop"}')


def test_message_start_waits_for_the_usage_of_the_same_read() -> None:
    """An upstream read that names the answer and reports usage gives one
    ``message_start`` carrying that usage."""
    encoder = StreamEncoder("anthropic-messages")
    assert encoder.opening() == b""  # nothing named yet
    encoder.feed(Start("openai-completions", "m", "chatcmpl-1"))
    encoder.feed(UsageUpdate(Usage.of(input_tokens=12)))
    out = encoder.opening()
    assert b'"input_tokens":12' in out and encoder.opening() == b""
    assert b"message_start" not in encoder.feed(TextDelta(0, "hi"))
