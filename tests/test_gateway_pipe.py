"""A piped upstream body (``http1._Response.pipe``) and the client writes made
from its callback (``Exchange.write_now``): each read goes through the relay
to the client without a task being woken, and nothing changes for a client
that cannot keep up, an upstream that stalls or a body that must be decoded."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import gzip
import os
import types
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from streamnorm.gateway.app import create_app
from streamnorm.gateway.config import parse_config
from streamnorm.gateway.exchange import ClientGone, Exchange
from streamnorm.gateway.http1 import BuiltinClient
from streamnorm.gateway.telemetry import RequestRecord
from streamnorm.gateway.upstream import Clients, Opened, Pipe, UpstreamTimeout, open_first

from .test_gateway_upstream import (
    BODY,
    Message,
    _asgi,
    chunked,
    events,
    keep_alive,
    paced_server,
    raw_server,
    upstream,
)


def _pipe(opened: Opened, sink: Callable[[bytes], bool]) -> Awaitable[None]:
    """``opened``'s body piped to ``sink`` (the builtin client's, uncoded)."""
    pipe: Pipe = opened.response.pipe  # type: ignore[attr-defined]
    piping = pipe(sink)
    assert piping is not None
    return piping


def _keeper(into: list[bytes]) -> Callable[[bytes], bool]:
    """A sink that keeps every read and never stops."""

    def keep(chunk: bytes) -> bool:
        into.append(chunk)
        return False

    return keep


@contextlib.asynccontextmanager
async def _paced(parts: list[bytes], pause: float) -> AsyncIterator[tuple[Clients, Opened]]:
    """A paced upstream's answer of ``parts``, opened on the builtin client."""
    url, thread = paced_server(parts, pause)
    clients = Clients()
    try:
        yield clients, await open_first(clients.get(), [upstream(url)], lambda _: BODY)
    finally:
        await clients.aclose()
        thread.join(5)


ROUTES = [("/v1/chat/completions", {}), ("/v1/messages", {"max_tokens": 9})]
IDS = ["same-API", "cross-API"]


def _gateway(url: str, client: str) -> Any:
    """A gateway serving every model from the Chat upstream at ``url`` on ``client``."""
    config = parse_config(
        {
            "gateway": {"upstream_client": client},
            "upstreams": {"chat": {"api": "openai-completions", "base_url": url}},
            "routes": [{"models": "*", "upstreams": ["chat"]}],
        }
    )
    return create_app(config)


async def _relayed(
    url: str,
    path: str,
    extra: dict[str, Any],
    client: str,
    *,
    waits: bool = False,
    app: Any = None,
) -> tuple[bytes, list[bool]]:
    """The body an ASGI server is sent for one streamed request through a
    gateway on ``client`` (or through ``app``, whose upstream connections are
    then left open), and for each body message whether it was sent from
    inside a task. With ``waits`` the server's send waits (as uvicorn's does
    while the client's socket is full) at every other body message."""
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    in_task: list[bool] = []

    async def seen(message: Message) -> None:
        if message["type"] == "http.response.body":
            in_task.append(asyncio.current_task() is not None)
            if waits and len(in_task) % 2:
                await asyncio.sleep(0.01)

    given = app is not None
    bodies = await _asgi(
        app if given else _gateway(url, client),
        path,
        {**body, **extra},
        seen=seen,
        keep_clients=given,
    )
    return b"".join(bodies), in_task


@pytest.mark.parametrize(("path", "extra"), ROUTES, ids=IDS)
async def test_a_paced_stream_is_written_from_the_upstream_reads_callback(
    path: str, extra: dict[str, Any]
) -> None:
    """On the builtin client, the events after the first read reach the
    server from the connection's callback (no task), the same bytes aiohttp's
    iterator gives."""
    parts = events()[:20]
    got = {}
    for client in ("builtin", "aiohttp"):
        url, thread = paced_server(parts, 0.01)
        got[client] = await _relayed(url, path, extra, client)
        thread.join(5)
    (piped, in_task), (iterated, aiohttp_in_task) = got["builtin"], got["aiohttp"]
    assert piped == iterated and piped.count(b"data:") >= 10
    assert in_task.count(False) >= 10, in_task  # read by read, outside any task
    assert all(aiohttp_in_task)


@pytest.mark.parametrize(("path", "extra"), ROUTES, ids=IDS)
@pytest.mark.parametrize("client", ["builtin", "aiohttp"])
async def test_a_client_that_cannot_keep_up_gets_every_byte_in_order(
    path: str, extra: dict[str, Any], client: str
) -> None:
    """The server's send waits at every other body message: the write is
    finished in the handler's task, reading resumes after it, and the client
    gets what it gets when it never waits."""
    parts = events()[:20]
    url, thread = paced_server(parts, 0.005)
    waited, in_task = await _relayed(url, path, extra, client, waits=True)
    thread.join(5)
    url, thread = paced_server(parts, 0.005)
    straight, _ = await _relayed(url, path, extra, client)
    thread.join(5)
    assert waited == straight and waited.count(b"data:") >= 10
    assert len(in_task) >= 10


async def test_a_gzip_stream_is_read_as_an_iterator_and_relayed_whole() -> None:
    """A coded body is not piped (a read may decode to several items): the
    gateway reads it as before and the client gets it decoded."""
    parts = events()
    answer = chunked([gzip.compress(b"".join(parts))], headers=b"content-encoding: gzip\r\n")
    async with raw_server(keep_alive(answer)) as (url, _):
        body, _ = await _relayed(url, "/v1/chat/completions", {}, "builtin")
    assert body == b"".join(parts)


async def test_a_piped_body_that_stalls_times_out() -> None:
    """The idle limit holds while a body is piped: an upstream that stops
    sending fails the piping with UpstreamTimeout after ``timeout``."""
    stalled = chunked(events()[:3])[: -len(b"0\r\n\r\n")]

    async def handler(reader: Any, writer: Any, served: Any) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(stalled)
        await writer.drain()
        await asyncio.sleep(5)

    async with raw_server(handler) as (url, _):
        clients = Clients()
        try:
            opened = await open_first(clients.get(), [upstream(url, timeout=0.3)], lambda _: BODY)
            seen: list[bytes] = []
            piping = _pipe(opened, _keeper(seen))
            started = asyncio.get_running_loop().time()
            with pytest.raises(UpstreamTimeout):
                await asyncio.wait_for(piping, 3)
            assert asyncio.get_running_loop().time() - started < 2
        finally:
            await clients.aclose()


async def test_a_stopped_pipe_leaves_the_rest_to_the_iterator_and_pools_the_connection() -> None:
    """``sink`` stops after the second read: the iterator reads on from
    there, not one byte twice or lost, and the connection is kept."""
    parts = events()[:12]
    async with _paced(parts, 0.01) as (clients, opened):
        piped: list[bytes] = []

        def sink(chunk: bytes) -> bool:
            piped.append(chunk)
            return len(piped) == 2

        await _pipe(opened, sink)
        rest = [chunk async for chunk in opened.rest]
        assert opened.first + b"".join(piped + rest) == b"".join(parts)
        assert len(piped) == 2
        await opened.response.aclose()
        client = clients.get()
        assert isinstance(client, BuiltinClient)
        assert [len(pool) for pool in client._idle.values()] == [1]


async def test_a_cancelled_pipe_hands_later_reads_to_the_iterator() -> None:
    """Cancelling the piping (the client left) stops it at once: what comes
    after is read by the iterator, none of it given to the sink."""
    parts = events()[:12]
    async with _paced(parts, 0.02) as (_, opened):
        piped: list[bytes] = []
        piping = _pipe(opened, _keeper(piped))
        await asyncio.sleep(0.05)
        assert isinstance(piping, asyncio.Future)
        piping.cancel()
        given = len(piped)
        rest = [chunk async for chunk in opened.rest]
        assert len(piped) == given
        assert opened.first + b"".join(piped + rest) == b"".join(parts)


def _exchange(send: Any) -> Exchange:
    scope = {"type": "http", "method": "POST", "path": "/", "headers": []}

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    return Exchange(scope, receive, send, RequestRecord("req_1", "POST", "/"))


async def test_write_now_returns_what_is_left_of_a_write_that_waits() -> None:
    """A send that waits is not lost: ``write_now`` returns its rest, and the
    bytes are sent when that is awaited (a send that waits for nothing is
    done at once, ``None``)."""
    gate = asyncio.Event()
    sent: list[bytes] = []

    async def send(message: Message) -> None:
        if message["body"] == b"wait":
            await gate.wait()
        sent.append(message["body"])

    ex = _exchange(send)
    assert ex.write_now(b"now") is None and sent == [b"now"]
    rest = ex.write_now(b"wait")
    assert rest is not None and sent == [b"now"]
    asyncio.get_running_loop().call_later(0.01, gate.set)
    await rest
    assert sent == [b"now", b"wait"]


async def test_write_now_to_a_client_gone_is_client_gone() -> None:
    async def send(message: Message) -> None:
        raise OSError("the client went away")

    with pytest.raises(ClientGone):
        _exchange(send).write_now(b"x")


async def test_a_waiting_write_that_is_cancelled_sees_the_cancellation() -> None:
    """Cancelling the task that awaits a write's rest reaches the send where
    it waits (its cleanup runs), and the task ends cancelled."""
    cleaned: list[bool] = []

    async def send(message: Message) -> None:
        try:
            await asyncio.sleep(10)
        finally:
            cleaned.append(True)

    rest = _exchange(send).write_now(b"x")
    assert rest is not None

    async def wait() -> None:
        await rest

    task = asyncio.create_task(wait())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned == [True]


@pytest.mark.parametrize(("path", "extra"), ROUTES, ids=IDS)
async def test_a_stream_whose_end_came_with_its_last_event_starts_no_task(
    path: str, extra: dict[str, Any]
) -> None:
    """The upstream's body ended in the read that held the stream's end: its
    connection is pooled as the stream is released, with no drain task (the
    drain of a body still open is ``wait_for``'s task); the watch on the
    client is no task either. The request makes no task at all."""
    loop = asyncio.get_running_loop()
    started: list[tuple[str, str]] = []  # (name, file) of each task's coroutine
    create_task = loop.create_task

    def counted(coro: Any, **kw: Any) -> asyncio.Task[Any]:
        code = getattr(coro, "cr_code", None)
        started.append((coro.__qualname__, code.co_filename if code is not None else ""))
        return create_task(coro, **kw)

    async with raw_server(keep_alive(chunked(events()))) as (url, _):
        loop.create_task = counted  # type: ignore[method-assign]
        try:
            body, _ = await _relayed(url, path, extra, "builtin")
        finally:
            del loop.create_task
    assert body.count(b"data:") >= 10
    assert any(name == "Gateway.__call__" for name, _ in started)  # (the test's own: counted)
    made = [n for n, file in started if "streamnorm" in file and n != "Gateway.__call__"]
    assert made == [], made


def _ours(thing: object) -> bool:
    """Whether ``thing`` is one of the gateway's objects or functions."""
    if isinstance(thing, types.FunctionType):
        return (thing.__module__ or "").startswith("streamnorm")
    if isinstance(thing, types.CoroutineType):
        return f"{os.sep}streamnorm{os.sep}" in thing.cr_code.co_filename
    return type(thing).__module__.startswith("streamnorm")


@pytest.mark.parametrize(("path", "extra"), ROUTES, ids=IDS)
@pytest.mark.parametrize("client", ["builtin", "aiohttp"])
async def test_a_relayed_request_leaves_nothing_for_the_cyclic_collector(
    path: str, extra: dict[str, Any], client: str
) -> None:
    """Once a streamed request is over, its objects (the relay, the message,
    the exchange, the upstream response) are freed by reference counting:
    none is left in a reference cycle, where it would wait for the cyclic
    collector and be promoted, under load, to generations collected rarely.
    The gateway itself stays (its pooled connections, its caches)."""
    url, thread = paced_server(events()[:20], 0.001)
    app = _gateway(url, client)
    collecting = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        body, _ = await _relayed(url, path, extra, client, app=app)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [repr(thing)[:80] for thing in gc.garbage if _ours(thing)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if collecting:
            gc.enable()
        await app._clients.aclose()
        thread.join(5)
    assert body.count(b"data:") >= 10
    assert left == []
