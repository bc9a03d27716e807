"""The gateway's own HTTP/1.1 client for upstream calls (``upstream_client =
"builtin"``, the default).

Why its own: on the gateway benchmark's paced streams (one event per
upstream read), uvicorn with aiohttp forwarding each read and nothing else
costs 3.6 ms of CPU per 12-event request, and the same with this client's
way of reading (an ``asyncio.Protocol`` per connection, httptools' parser,
the server's parser already) 2.5 ms: aiohttp's request machinery and
stream reader are about 90 µs per paced event and 0.3 ms per request that a
gateway pays on every stream. aiohttp and httpx stay selectable.

What it does, and no more: HTTP/1.1 to the upstream's own host over TCP or
TLS (the worker's TLS context), the request in one write, the body
chunked, by ``Content-Length`` or to the connection's end. It reads
whatever the socket holds per read: each body item is every byte that came
since the last. Redirects are answers like any other, proxy variables and
cookies are never read, headers are checked for line breaks. Identity is
asked for; a gzip or deflate body is decoded all the same, any other
content-coding is refused (``UpstreamBroke``), never passed on as if plain.

Connections are kept per (scheme, host, port) and reused most recent first;
one idle for ``keepalive`` seconds is closed on its own timer. A
connection the server closed before any byte of the answer is reported as
``dropped`` (the idle race ``open_first`` retries once).

A body is read as an async iterator or piped: handed to a sink from the
connection's own callback as each read comes, which wakes no task (the
gateway's relay writes to its client from there).

Timeouts: ``connect_timeout`` for the connection, ``timeout`` for the
headers and for each wait for body bytes, the latter one timer per stream
re-armed only when it falls due (a read costs a clock read, not a timer).

Bounds: a head larger than :data:`MAX_HEAD_BYTES` is ``UpstreamBroke``;
reading pauses while :data:`HIGH_WATER` undelivered body bytes wait; a
decoded body item is at most :data:`DECODED_ITEM` bytes, however much a
compressed read inflates to.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import cast
from urllib.parse import urlsplit

import httptools

from .config import Upstream
from .errors import GatewayError
from .upstream import (
    IdleWatch,
    Outgoing,
    UpstreamBroke,
    UpstreamTimeout,
    request_headers,
    request_url,
)

__all__ = ["DECODED_ITEM", "HIGH_WATER", "MAX_HEAD_BYTES", "BuiltinClient"]

#: Most bytes of an upstream's status line and headers.
MAX_HEAD_BYTES = 64 * 1024
#: Undelivered body bytes at which the connection stops being read.
HIGH_WATER = 256 * 1024
#: Most bytes of one decoded body item.
DECODED_ITEM = 256 * 1024

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_UNSAFE_VALUE = re.compile(r"[\r\n\x00]")
#: Headers the client writes itself.
_OWN = frozenset({"host", "content-length", "transfer-encoding", "connection"})
_DEFAULTS = {"accept": "*/*", "user-agent": "streamnorm"}

#: Where a connection goes: (scheme, host, port).
Key = tuple[str, str, int]


class BuiltinClient:
    """:class:`~streamnorm.gateway.upstream.UpstreamClient` over this module's
    pooled connections (module docstring)."""

    def __init__(self, tls: ssl.SSLContext, keepalive: float) -> None:
        self._tls = tls
        self._keepalive = keepalive
        self._idle: dict[Key, dict[_Connection, None]] = {}
        self._open: set[_Connection] = set()

    async def send(
        self, upstream: Upstream, out: Outgoing
    ) -> tuple[_Response, AsyncIterator[bytes]]:
        parts = urlsplit(request_url(upstream, out))
        tls = parts.scheme == "https"
        host = parts.hostname or ""
        key = (parts.scheme, host, parts.port or (443 if tls else 80))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        body = out.body if out.method == "POST" else b""
        authority = parts.netloc.rpartition("@")[2]
        head = _request_head(out.method, target, authority, request_headers(upstream, out), body)
        conn = self._reuse(key) or await self._connect(upstream, key, tls)
        try:
            conn.send(head + body)
            await conn.head(upstream.timeout)
        except UpstreamTimeout:
            conn.close()
            raise UpstreamTimeout(f"upstream {upstream.name} did not answer in time") from None
        except UpstreamBroke as exc:  # dropped unanswered: the idle race, retried once
            conn.close()
            said = "is unreachable" if exc.dropped else f"answered badly: {exc}"
            raise UpstreamBroke(f"upstream {upstream.name} {said}", dropped=exc.dropped) from None
        except BaseException:  # cancelled: the client left while the head was awaited
            conn.close()
            raise
        response = _Response(conn, upstream.timeout)
        return response, response.body()

    def _reuse(self, key: Key) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.popitem()[0]
            if conn.ready():
                return conn
        return None

    async def _connect(self, upstream: Upstream, key: Key, tls: bool) -> _Connection:
        loop = asyncio.get_running_loop()
        conn = _Connection(self._open, self._idle.setdefault(key, {}), self._keepalive, loop)
        try:
            await asyncio.wait_for(
                loop.create_connection(
                    lambda: conn,
                    key[1],
                    key[2],
                    ssl=self._tls if tls else None,
                    server_hostname=key[1] if tls else None,
                ),
                upstream.connect_timeout,
            )
        except asyncio.TimeoutError:
            conn.close()
            raise UpstreamTimeout(f"upstream {upstream.name} did not answer in time") from None
        except OSError:
            conn.close()
            raise UpstreamBroke(f"upstream {upstream.name} is unreachable") from None
        return conn

    async def aclose(self) -> None:
        for conn in list(self._open):
            conn.close()
        self._idle.clear()


def _request_head(
    method: str, target: str, host: str, headers: Mapping[str, str], body: bytes
) -> bytes:
    """The request line and headers; a name that is no token or a value with
    a line break is refused (it would write another header)."""
    lines = [f"{method} {target} HTTP/1.1", f"host: {host}"]
    given = {name.lower() for name in headers}
    lines += [f"{k}: {v}" for k, v in _DEFAULTS.items() if k not in given]
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name) or _UNSAFE_VALUE.search(value):
            raise GatewayError(502, f"upstream header {name[:40]!r}: not a valid HTTP header")
        if name.lower() not in _OWN:
            lines.append(f"{name}: {value}")
    if method == "POST":
        lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


class _Connection(asyncio.Protocol):
    """One upstream connection and the answer being read on it.

    Invariant: at most one request is in flight; bytes that come while none
    is (or after its answer ended) close the connection. The protocol
    callbacks only append and set flags; the reader wakes once per read.
    """

    def __init__(
        self,
        registry: set[_Connection],
        pool: dict[_Connection, None],
        keepalive: float,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self._registry = registry  # the client's open connections
        self._pool = pool  # the idle connections of this one's host
        self._keepalive = keepalive
        # (Its own loop, not asked for at each read: on Python 3.11 every
        # asking is a getpid system call.)
        self.loop = loop
        self._transport: asyncio.Transport | None = None
        self._waiter: asyncio.Future[None] | None = None
        #: Called at each read instead of waking a waiter, while a body is piped.
        self.reader: Callable[[], None] | None = None
        self._idle_timer: asyncio.TimerHandle | None = None
        self.closed = False
        self._begin(None)

    def _begin(self, parser: httptools.HttpResponseParser | None) -> None:
        self._parser = parser
        self.status = 0
        self.headers: list[tuple[str, str]] = []
        self.head_done = False
        self.complete = False
        self.error: Exception | None = None
        self.body: list[bytes] = []
        self._queued = 0
        self._head_bytes = 0
        self._answered = False
        self._paused = False
        self._keep_alive = False

    # -- asyncio.Protocol ------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # (uvloop's transports are no asyncio.Transport instances, in name only.)
        self._transport = cast(asyncio.Transport, transport)
        self._registry.add(self)

    def data_received(self, data: bytes) -> None:
        if self._parser is None or self.complete:  # no request waits for these
            self.close()
            return
        self._answered = True
        if not self.head_done:
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade):
            self.fail(UpstreamBroke("the upstream's answer is not HTTP/1.1"))
            return
        if not self.head_done and self._head_bytes > MAX_HEAD_BYTES:
            self.fail(UpstreamBroke("the upstream's headers exceed the gateway's limit"))
            return
        if self._queued > HIGH_WATER and self._transport is not None:
            self._transport.pause_reading()
            self._paused = True
        if self.reader is not None:  # (_wake's first case, taken here: a call less a read)
            self.reader()
        else:
            self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self._forget()
        if self._parser is not None and not self.complete and self.error is None:
            if self.head_done and self._to_eof():
                self.complete = True
            else:
                broke = "the upstream connection broke"
                self.error = UpstreamBroke(broke, dropped=not self._answered)
        self._wake()

    # -- httptools callbacks ---------------------------------------------------

    def on_message_begin(self) -> None:
        if self.complete:  # a second answer to one request: the connection is spent
            raise ValueError("an answer after the answer")

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.decode("latin-1").lower(), value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        self.status = self._parser.get_status_code()
        self.head_done = True

    def on_body(self, body: bytes) -> None:
        self.body.append(body)
        self._queued += len(body)

    def on_message_complete(self) -> None:
        # (Asked after the feed that ends the message, llhttp says False.)
        assert self._parser is not None
        self._keep_alive = self._parser.should_keep_alive()
        self.complete = True

    # -- the reader's side -----------------------------------------------------

    def ready(self) -> bool:
        """Whether this connection, just taken from the pool, can carry a
        request (its idle timer stopped)."""
        self._stop_idle_timer()
        return not self.closed and self._transport is not None

    def send(self, request: bytes) -> None:
        self._begin(httptools.HttpResponseParser(self))
        assert self._transport is not None
        self._transport.write(request)

    async def head(self, timeout: float) -> None:
        """Until the status and headers are in; ``UpstreamTimeout`` when a
        wait for them lasts ``timeout`` seconds (a timer that fails the
        connection: ``wait_for`` is a waiter, a callback and a timer a wait)."""
        while not self.head_done:
            if self.error is not None:
                raise self.error
            timer = self.loop.call_later(timeout, self._late)
            try:
                await self.next_read()
            finally:
                timer.cancel()

    def _late(self) -> None:
        self.fail(UpstreamTimeout("the upstream did not answer in time"))

    def next_read(self) -> asyncio.Future[None]:
        """Done at the next read, the answer's end or a failure."""
        self._waiter = self.loop.create_future()
        return self._waiter

    def take(self) -> bytes:
        """The body bytes that came since the last take; reading resumes."""
        data = self.body[0] if len(self.body) == 1 else b"".join(self.body)
        self.body.clear()
        self._queued = 0
        if self._paused and self._transport is not None:
            self._paused = False
            self._transport.resume_reading()
        return data

    def keeps(self) -> bool:
        """Whether the connection can serve another request (answer read whole)."""
        return self.complete and self._keep_alive and not self.closed and self.error is None

    def rest(self) -> None:
        """Back to the pool of its host, closed after ``keepalive`` seconds
        unless reused first."""
        self._parser = None
        self._pool[self] = None
        self._idle_timer = self.loop.call_later(self._keepalive, self.close)

    def close(self) -> None:
        if self._transport is not None and not self.closed:
            self._transport.close()
        self._forget()

    def fail(self, error: Exception) -> None:
        """Close; the answer fails with ``error`` unless it was whole already."""
        if self.error is None and not self.complete:
            self.error = error
        self.close()
        self._wake()

    def _forget(self) -> None:
        """Closed: out of the client's connections and of the pool."""
        self.closed = True
        self._registry.discard(self)
        self._pool.pop(self, None)
        self._stop_idle_timer()

    def _stop_idle_timer(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def _wake(self) -> None:
        if self.reader is not None:
            self.reader()
            return
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _to_eof(self) -> bool:
        """Whether the body is delimited by the connection's end (neither
        chunked nor of a stated length)."""
        names = {name for name, _ in self.headers}
        return "content-length" not in names and "transfer-encoding" not in names


class _Headers(Mapping[str, str]):
    """Response headers, looked up case-insensitively; repeated ones joined by ``", "``."""

    __slots__ = ("_values",)

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        values: dict[str, str] = {}
        for name, value in pairs:
            values[name] = f"{values[name]}, {value}" if name in values else value
        self._values = values

    def __getitem__(self, name: str) -> str:
        return self._values[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class _Response:
    """An answer whose head has been read, as a :class:`Response`; closing it
    closes the connection unless the body was read whole (it is pooled then).

    Its body is read either as an async iterator (:meth:`body`) or piped
    (:meth:`pipe`), or the one after the other: both take what the reads
    brought through :meth:`_step`, which keeps the one decoder."""

    __slots__ = ("_coding", "_conn", "_decoder", "_idle", "_pooled", "headers", "status_code")

    def __init__(self, conn: _Connection, idle: float) -> None:
        self._conn = conn
        self._idle = idle  # the longest wait for body bytes
        self._pooled = False  # once pooled, the connection may carry another request
        self.status_code = conn.status
        self.headers = _Headers(conn.headers)
        coding = self.headers.get("content-encoding", "").strip().lower()
        self._coding = "" if coding == "identity" else coding
        self._decoder: zlib._Decompress | None = None

    async def aclose(self) -> None:
        if not self._pooled:
            self._conn.close()

    def ended(self) -> bool:
        """Whether the body has been read to its end, with nothing left
        unread; its connection is then pooled (when it can be kept)."""
        conn = self._conn
        if not self._pooled and conn.complete and not conn.body and conn.error is None:
            self._step()
        return self._pooled

    def _step(self) -> Iterator[bytes] | None:
        """The body bytes the reads brought since the last step, decoded
        (nothing when none came); None once the body has ended, its
        connection then pooled if it can be. Raises the read's error."""
        conn = self._conn
        if self._pooled:  # (the connection may carry another answer now)
            return None
        if self._coding and self._decoder is None:
            self._decoder = _decoder(self._coding)
        decoder = self._decoder
        if conn.body:
            data = conn.take()
            return _decoded(decoder, data) if decoder is not None else iter((data,))
        if conn.error is not None:
            raise conn.error
        if not conn.complete:
            return iter(())
        tail = decoder.flush() if decoder is not None else b""
        if conn.keeps():
            self._pooled = True
            conn.rest()
        return iter((tail,)) if tail else None

    async def body(self) -> AsyncIterator[bytes]:
        conn = self._conn
        watch = IdleWatch(conn.fail, self._idle)
        try:
            while (items := self._step()) is not None:
                got = False
                for item in items:
                    got = True
                    yield item
                if not got and not conn.complete:
                    watch.start()
                    await conn.next_read()
                    watch.since = None
        finally:
            watch.stop()

    def pipe(self, sink: Callable[[bytes], bool]) -> asyncio.Future[None] | None:
        """Hand the body to ``sink`` as it comes, from the connection's own
        callback: no task is woken per read. ``sink`` returns True to stop.
        Done when the body has ended or ``sink`` stopped; failed with the
        read's error or with what ``sink`` raised; cancelling it stops the
        piping. The idle limit holds as for :meth:`body`. None for a body
        with a content-coding (read it with :meth:`body`: a read may decode
        to several items, and an iterator holds those it has not given yet)."""
        if self._coding:
            return None
        return _Pipe(self._conn, self._idle, self._give, sink).done

    def _give(self, sink: Callable[[bytes], bool]) -> bool:
        """What the reads brought, to ``sink`` (an uncoded body: all of it in
        one item): True when that is the end (the body's, or ``sink``
        stopped), False when more is to come."""
        conn = self._conn
        if conn.body and sink(conn.take()):
            return True
        if not (conn.complete or conn.error or conn.body):  # (most reads: wait for the next)
            return False
        return self._step() is None  # (the end, an error, or what came while sink ran)


class _Pipe:
    """A body piped to a sink (:meth:`_Response.pipe`): the connection's
    reader while it lasts, ``done`` when it is over.

    An object, not two closures: closures that name each other are a
    reference cycle, and everything the sink holds (a request's relay, its
    message, its exchange) waited for the cyclic collector after every
    stream. Here the connection's reference ends when the piping stops and
    the future's when its callbacks have run, so a request's objects go as
    soon as the request does."""

    __slots__ = ("_conn", "_give", "_sink", "_watch", "done")

    def __init__(
        self,
        conn: _Connection,
        idle: float,
        give: Callable[[Callable[[bytes], bool]], bool],
        sink: Callable[[bytes], bool],
    ) -> None:
        self._conn = conn
        self._give = give
        self._sink = sink
        self._watch = IdleWatch(conn.fail, idle)
        self.done: asyncio.Future[None] = conn.loop.create_future()
        self.done.add_done_callback(self.stop)  # (cancelled by the task that awaits it)
        conn.reader = self.read
        self.read()

    def read(self) -> None:
        done = self.done
        if done.done():  # cancelled, its callback not run yet: the bytes wait in the body
            self.stop()
            return
        try:
            finished = self._give(self._sink)
        except BaseException as exc:  # to the task that awaits the piping
            self.stop()
            done.set_exception(exc)
            return
        if finished:
            self.stop()
            done.set_result(None)
        else:
            self._watch.start()  # waiting for the next read

    def stop(self, _: object = None) -> None:
        if self._conn.reader == self.read:  # (a bound method of this pipe: equal, not identical)
            self._conn.reader = None
        self._watch.stop()


def _decoder(coding: str) -> zlib._Decompress | None:
    """The decompressor of a ``Content-Encoding``; ``UpstreamBroke`` for one
    the gateway does not decode."""
    coding = coding.strip().lower()
    if coding in ("", "identity"):
        return None
    if coding in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip or zlib, from the header
    raise UpstreamBroke(f"the upstream's body is in content-encoding {coding[:40]!r}, not decoded")


def _decoded(decoder: zlib._Decompress, data: bytes) -> Iterator[bytes]:
    """``data`` decompressed, in items of at most :data:`DECODED_ITEM` bytes."""
    try:
        while data:
            item = decoder.decompress(data, DECODED_ITEM)
            data = decoder.unconsumed_tail
            if item:
                yield item
    except zlib.error:
        raise UpstreamBroke("the upstream's body could not be decoded") from None
