"""Calling upstreams: the request on the wire, credentials, ordered fallbacks.

An upstream is only ever called at its configured ``base_url`` plus a path
the gateway built from a fixed set (the four APIs' paths, a model name
checked against ``doors.PATH_MODEL`` where it enters a path). Redirects are
not followed and the environment's proxy settings are not read, so nothing a
client sends can point the gateway at another host.

Fallbacks: the upstreams of a route are tried in order (or weighted:
``retry.py``) while the attempt fails with a connection error, a timeout, a
429 or a 5xx, each retried first as its ``retries`` say. The gateway has
sent nothing to the client by then (the response starts only with the first
upstream body bytes), so the client sees one answer either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

import httpx

from ..hosts import auth as hosts_auth
from . import otel
from .config import UPSTREAM_CLIENTS, Upstream
from .errors import GatewayError, upstream_message
from .retry import Tries, balance

if TYPE_CHECKING:
    import aiohttp

    from .http1 import BuiltinClient

__all__ = [
    "Client",
    "Clients",
    "Opened",
    "Outgoing",
    "Pipe",
    "Response",
    "UpstreamBroke",
    "UpstreamClient",
    "UpstreamTimeout",
    "auth_headers",
    "fetch",
    "open_first",
    "read_capped",
    "release",
]

#: Most bytes read from an upstream error body.
_MAX_ERROR_BODY = 64 * 1024
#: Idle keep-alive connections are closed after this many seconds, before the
#: usual 5 s server idle timeout, so that a connection the server is closing
#: is rarely reused.
KEEPALIVE_SECONDS = 4.0
#: After a stream's terminal event, the most bytes and seconds spent reading
#: the rest of the upstream's body (its chunked-encoding end, usually in the
#: next read) so that the connection can be kept for the next request: a new
#: one costs a TCP and a TLS handshake.
_DRAIN_BYTES = 64 * 1024
_DRAIN_SECONDS = 0.1


class UpstreamBroke(Exception):
    """The upstream could not be read: the connection failed or broke, or its
    body could not be decoded (bad chunked framing, a corrupt compressed body).
    Every upstream client raises this (or :class:`UpstreamTimeout`), whatever
    its library's own exception was. ``dropped``: the connection closed before
    any answer, as a kept-alive connection the server closed as idle does."""

    def __init__(self, message: str, *, dropped: bool = False) -> None:
        super().__init__(message)
        self.dropped = dropped

    @property
    def timeout(self) -> bool:
        """Whether the upstream went silent (:class:`UpstreamTimeout`)."""
        return isinstance(self, UpstreamTimeout)


class UpstreamTimeout(UpstreamBroke):
    """The upstream did not connect within ``connect_timeout``, or sent nothing
    for ``timeout`` seconds."""


class Response(Protocol):
    """An upstream's response as the proxy reads it (``httpx.Response`` is one)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    async def aclose(self) -> None: ...


#: A response's ``pipe(sink)``, where its client has one (``http1``): the
#: body handed to ``sink`` from the connection's callback as each read comes
#: (True from ``sink`` stops it); an awaitable done at the body's end or the
#: stop, or None when this body must be read as an iterator.
Pipe = Callable[[Callable[[bytes], bool]], Awaitable[None] | None]


class UpstreamClient(Protocol):
    """Sends one request, returns the response once its headers are read and
    an iterator of its body: each item whatever the socket held, decoded.
    Errors are :class:`UpstreamBroke` / :class:`UpstreamTimeout`, on sending
    and while the body is read. Redirects are returned, never followed."""

    async def send(
        self, upstream: Upstream, out: Outgoing
    ) -> tuple[Response, AsyncIterator[bytes]]: ...


#: What the upstream functions take: an :class:`UpstreamClient`, or an
#: ``httpx.AsyncClient`` (its transport is then the caller's: a test's mock).
Client = UpstreamClient | httpx.AsyncClient


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One request for one upstream: a path under its base URL, headers, body
    (a ``GET`` has none)."""

    path: str
    headers: dict[str, str]
    body: bytes
    method: str = "POST"


@dataclass(slots=True)
class Opened:
    """An upstream that answered 2xx (or a non-retryable error), first bytes read."""

    upstream: Upstream
    response: Response
    first: bytes
    rest: AsyncIterator[bytes]
    attempts: list[str] = field(default_factory=list)


class Clients:
    """The worker's upstream client, created on first use (or at startup).

    ``kind`` is ``"builtin"`` (the default: the gateway's own HTTP/1.1
    client, ``http1.py``), ``"aiohttp"`` (one pooled session) or ``"httpx"``.
    The first two return everything the socket holds at each body read. All
    keep connections alive per upstream host and close idle ones after
    :data:`KEEPALIVE_SECONDS`; builtin's and aiohttp's pools do so on a
    timer, whether or not another request comes.
    """

    def __init__(self, kind: str = "builtin", *, keepalive: float = KEEPALIVE_SECONDS) -> None:
        if kind not in UPSTREAM_CLIENTS:
            raise ValueError(f"upstream_client: one of {UPSTREAM_CLIENTS}, not {kind!r}")
        self._kind = kind
        self._keepalive = keepalive
        self._client: AiohttpClient | HttpxClient | BuiltinClient | None = None

    def open(self) -> None:
        """Create the client (at startup: it builds a TLS context). Call it in
        the event loop that will use it."""
        if self._client is None:
            tls = ssl.create_default_context()
            if self._kind == "httpx":
                self._client = HttpxClient.pooled(tls, self._keepalive)
            elif self._kind == "aiohttp":
                self._client = AiohttpClient(tls, self._keepalive)
            else:
                self._client = _builtin(tls, self._keepalive)

    def get(self) -> UpstreamClient:
        self.open()
        assert self._client is not None
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def _builtin(tls: ssl.SSLContext, keepalive: float) -> BuiltinClient:
    """The gateway's own client, or a ``ValueError`` saying what it needs."""
    try:
        from .http1 import BuiltinClient
    except ImportError:
        raise ValueError(
            'upstream_client "builtin" needs httptools (pip install "streamnorm[gateway]");'
            ' or set upstream_client = "aiohttp" or "httpx"'
        ) from None
    return BuiltinClient(tls, keepalive)


def request_headers(upstream: Upstream, out: Outgoing) -> dict[str, str]:
    """What the upstream is sent: the request's headers, the upstream's own,
    and its key in its API's header or its cloud auth scheme's signature
    (never another upstream's)."""
    headers = {
        **({"content-type": "application/json"} if out.method == "POST" else {}),
        "accept-encoding": "identity",
        **out.headers,
        **dict(upstream.headers),
        **auth_headers(upstream),
    }
    if upstream.auth is not None:
        body = out.body if out.method == "POST" else b""
        headers.update(_signed(upstream, out.method, request_url(upstream, out), headers, body))
    return headers


def request_url(upstream: Upstream, out: Outgoing) -> str:
    url = upstream.base_url + out.path
    if urlsplit(url).netloc != urlsplit(upstream.base_url).netloc:  # pragma: no cover - guard
        raise GatewayError(400, "model: not a valid model name", param="model")
    return url


class HttpxClient:
    """:class:`UpstreamClient` over an ``httpx.AsyncClient`` (one body item per
    chunked-encoding chunk)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client

    @classmethod
    def pooled(cls, tls: ssl.SSLContext, keepalive: float) -> HttpxClient:
        limits = httpx.Limits(
            max_connections=None, max_keepalive_connections=32, keepalive_expiry=keepalive
        )
        return cls(
            httpx.AsyncClient(limits=limits, verify=tls, follow_redirects=False, trust_env=False)
        )

    async def send(
        self, upstream: Upstream, out: Outgoing
    ) -> tuple[Response, AsyncIterator[bytes]]:
        timeout = httpx.Timeout(upstream.timeout, connect=upstream.connect_timeout)
        request = self._client.build_request(
            out.method,
            request_url(upstream, out),
            headers=request_headers(upstream, out),
            content=out.body if out.method == "POST" else None,
            extensions={"timeout": timeout.as_dict()},
        )
        try:
            response = await self._client.send(request, stream=True)
        except httpx.TimeoutException:
            raise UpstreamTimeout(f"upstream {upstream.name} did not answer in time") from None
        except httpx.TransportError as exc:
            dropped = isinstance(exc, httpx.RemoteProtocolError)
            raise UpstreamBroke(
                f"upstream {upstream.name} is unreachable", dropped=dropped
            ) from None
        return response, _httpx_body(response)

    async def aclose(self) -> None:
        await self._client.aclose()


async def _httpx_body(response: httpx.Response) -> AsyncIterator[bytes]:
    try:
        async for chunk in response.aiter_bytes():
            yield chunk
    except httpx.TimeoutException:
        raise UpstreamTimeout("the upstream stopped sending") from None
    except httpx.DecodingError:
        raise UpstreamBroke("the upstream's body could not be decoded") from None
    except httpx.TransportError:
        raise UpstreamBroke("the upstream connection broke") from None


def auth_headers(upstream: Upstream) -> dict[str, str]:
    """The upstream's credential in its API's own header, or in the header
    of the key scheme its ``auth`` names (none without a key)."""
    key = upstream.api_key
    if not key:
        return {}
    if upstream.auth is not None:
        return hosts_auth.auth_headers(upstream.auth, key)
    if upstream.api == "anthropic-messages":
        return {"x-api-key": key}
    if upstream.api == "google-generative-ai":
        return {"x-goog-api-key": key}
    return {"authorization": f"Bearer {key}"}


class AiohttpClient:
    """:class:`UpstreamClient` over one pooled ``aiohttp.ClientSession``.

    A body read returns everything the socket holds, so an answer that
    arrives at once is relayed at once. Proxy variables are not read
    (``trust_env`` off), redirects are returned, not followed, and no cookie
    is kept from one request to the next. Idle connections are closed on the
    pool's own timer after ``keepalive`` seconds.
    """

    def __init__(self, tls: ssl.SSLContext, keepalive: float) -> None:
        import aiohttp
        import yarl

        self._aiohttp = aiohttp
        self._encoding_error = aiohttp.http_exceptions.ContentEncodingError
        self._url = yarl.URL
        connector = aiohttp.TCPConnector(limit=0, ssl=tls, keepalive_timeout=keepalive)
        self._session = aiohttp.ClientSession(
            connector=connector,
            trust_env=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None),
        )

    async def send(
        self, upstream: Upstream, out: Outgoing
    ) -> tuple[Response, AsyncIterator[bytes]]:
        aiohttp = self._aiohttp
        timeout = aiohttp.ClientTimeout(
            total=None, connect=upstream.connect_timeout, sock_read=upstream.timeout
        )
        try:
            response = await self._session.request(
                out.method,
                self._url(request_url(upstream, out), encoded=True),
                headers=request_headers(upstream, out),
                data=out.body if out.method == "POST" else None,
                allow_redirects=False,
                timeout=timeout,
            )
        except asyncio.TimeoutError:
            raise UpstreamTimeout(f"upstream {upstream.name} did not answer in time") from None
        except aiohttp.ClientError as exc:
            dropped = isinstance(exc, aiohttp.ServerDisconnectedError)
            raise UpstreamBroke(
                f"upstream {upstream.name} is unreachable", dropped=dropped
            ) from None
        return _AiohttpResponse(response), self._body(response, upstream.timeout)

    async def _body(self, response: aiohttp.ClientResponse, idle: float) -> AsyncIterator[bytes]:
        """Everything the socket holds at each read; :class:`UpstreamTimeout`
        after ``idle`` seconds of waiting for bytes."""
        reader = response.content
        # Once the headers are in, the idle timeout is the watch's alone:
        # aiohttp's ``sock_read`` would cancel a timer and set a new one at
        # every read (the next request on the connection sets it again).
        protocol = response.connection.protocol if response.connection else None
        if protocol is not None:
            protocol.read_timeout = None
        watch = IdleWatch(reader.set_exception, idle)
        try:
            while True:
                watch.start()
                chunk = await reader.readany()
                watch.since = None
                if not chunk:
                    return
                yield chunk
        except asyncio.TimeoutError:
            raise UpstreamTimeout("the upstream stopped sending") from None
        except self._aiohttp.ClientError as exc:
            if isinstance(exc.__cause__, self._encoding_error):
                raise UpstreamBroke("the upstream's body could not be decoded") from None
            raise UpstreamBroke("the upstream connection broke") from None
        finally:
            watch.stop()

    async def aclose(self) -> None:
        await self._session.close()


class _AiohttpResponse:
    """An ``aiohttp.ClientResponse`` as a :class:`Response`. Closing it closes
    the connection unless the whole body was read (then the connection is
    back in the pool already)."""

    __slots__ = ("_response",)

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    @property
    def status_code(self) -> int:
        return self._response.status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    async def aclose(self) -> None:
        self._response.close()


class IdleWatch:
    """Ends a body read that has waited ``seconds`` for bytes: a body's one
    idle timer, re-armed only when it falls due, so a read costs two clock
    reads (``start``, and ``since = None`` once bytes came); time the
    consumer spends elsewhere (writing to a slow client) does not count.
    ``expire`` is called with the :class:`UpstreamTimeout` that ends the read."""

    __slots__ = ("_expire", "_handle", "_loop", "_seconds", "since")

    def __init__(self, expire: Callable[[Exception], None], seconds: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._expire = expire
        self._seconds = seconds
        #: When the pending read began (None: no read pending).
        self.since: float | None = None
        self._handle = self._loop.call_later(seconds, self._check)

    def start(self) -> None:
        self.since = self._loop.time()

    def _check(self) -> None:
        since = self.since
        if since is not None and self._loop.time() - since >= self._seconds:
            self._expire(UpstreamTimeout("the upstream stopped sending"))
            return
        due = self._loop.time() if since is None else since
        self._handle = self._loop.call_at(due + self._seconds, self._check)

    def stop(self) -> None:
        self._handle.cancel()


def _signed(
    upstream: Upstream, method: str, url: str, headers: dict[str, str], body: bytes
) -> Mapping[str, str]:
    """The headers of the upstream's cloud auth scheme (SigV4, Google OAuth,
    Entra); a missing library or credential is the upstream's 502."""
    try:
        region = dict(upstream.host_params).get("region")
        signer = hosts_auth.kept_signer(upstream.auth or "none", region)
        return signer(method, url, headers, body) if signer is not None else {}
    except (ImportError, ValueError) as exc:
        raise GatewayError(502, f"upstream {upstream.name}: {exc}") from None


async def read_capped(response: AsyncIterator[bytes], limit: int) -> bytes:
    """Up to ``limit`` bytes of a body; the rest is not read."""
    buf = bytearray()
    async for chunk in response:
        buf += chunk
        if len(buf) >= limit:
            break
    return bytes(buf[:limit])


async def release(opened: Opened) -> None:
    """Close a response whose stream the client has had whole: what is left
    of its body is read first (bounded by :data:`_DRAIN_BYTES` and
    :data:`_DRAIN_SECONDS`), so that a connection whose body ends there goes
    back to the pool instead of being closed."""
    ended: Callable[[], bool] | None = getattr(opened.response, "ended", None)  # (builtin)
    if ended is not None and ended():  # read to its end already: its reader ends at once
        await read_capped(opened.rest, _DRAIN_BYTES)  # (no wait: no time limit, no task)
    else:
        with contextlib.suppress(asyncio.TimeoutError, UpstreamBroke):
            await asyncio.wait_for(read_capped(opened.rest, _DRAIN_BYTES), _DRAIN_SECONDS)
    await opened.response.aclose()


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


def _client(client: Client) -> UpstreamClient:
    return HttpxClient(client) if isinstance(client, httpx.AsyncClient) else client


async def open_first(
    client: Client,
    upstreams: Sequence[Upstream],
    build: Callable[[Upstream], Outgoing],
) -> Opened:
    """Open the first upstream that answers; raise ``GatewayError`` if none does.

    The last failure decides the error: the upstream's status and message,
    502 when it could not be reached, 504 when it did not answer in time.
    A non-retryable error status (400, 401, 404 …, or a redirect, which is
    never followed) is returned as it is, with its body as ``first``, for the
    caller to translate.

    The order, the retries on one upstream and their waits are
    ``retry.py``'s (weights, cool-down, ``retries``, ``backoff``,
    ``Retry-After``). A connection the upstream closed before answering (the
    race between reusing a kept-alive connection and the server closing it
    as idle) is tried again on the same upstream.
    """
    sender = _client(client)
    failure = GatewayError(502, "no upstream configured")
    attempts: list[str] = []
    for upstream in balance(upstreams):
        attempts.append(upstream.name)
        if upstream.missing_key:
            failure = GatewayError(
                502, f"upstream {upstream.name} has no key: {upstream.api_key_env} is not set"
            )
            continue
        request = build(upstream)
        tries = Tries(upstream)
        while True:
            with otel.attempt(upstream) as span:
                result = await _attempt(sender, upstream, span.outgoing(request))
                span.status(
                    result.response.status_code if isinstance(result, Opened) else result[0].status
                )
            if isinstance(result, Opened):
                tries.succeeded()
                result.attempts = attempts
                return result
            failure, stale = result
            if not await tries.again(failure, stale):
                break
    raise failure


async def _attempt(
    client: UpstreamClient, upstream: Upstream, out: Outgoing
) -> Opened | tuple[GatewayError, bool]:
    """One try: the opened upstream, or (the failure, whether it was a dropped connection)."""
    response: Response | None = None
    try:
        response, body = await client.send(upstream, out)
        status = response.status_code
        if not 200 <= status <= 599:  # no status a client could be given
            await response.aclose()
            return GatewayError(
                502, f"upstream {upstream.name} answered with HTTP status {status}"
            ), False
        if status >= 300:
            first = await read_capped(body, _MAX_ERROR_BODY)
            await response.aclose()
            if not _retryable(status):
                return Opened(upstream, response, first, _empty())
            asked = response.headers.get("retry-after")  # case-insensitive in both clients
            retry_after = {"retry-after": asked} if asked is not None else {}
            return GatewayError(
                status, upstream_message(first, status, response.headers), headers=retry_after
            ), False
        return Opened(upstream, response, await anext(body, b""), body)
    except UpstreamTimeout:
        failure = GatewayError(504, f"upstream {upstream.name} did not answer in time"), False
    except UpstreamBroke as exc:
        message = (
            str(exc) if str(exc).startswith("upstream ") else f"upstream {upstream.name}: {exc}"
        )
        failure = GatewayError(502, message), exc.dropped
    except BaseException:  # cancelled: the client went away while we waited
        if response is not None:
            await response.aclose()
        raise
    if response is not None:
        await response.aclose()
    return failure


async def _empty() -> AsyncIterator[bytes]:
    nothing: tuple[bytes, ...] = ()
    for chunk in nothing:
        yield chunk


async def fetch(
    client: Client,
    upstreams: Sequence[Upstream],
    build: Callable[[Upstream], Outgoing],
    limit: int = _MAX_ERROR_BODY,
) -> tuple[Upstream, int, bytes]:
    """A whole small answer (a count, a model list) from the first upstream
    that answers: (that upstream, its status, up to ``limit`` bytes of body).
    Fails as :func:`open_first` does."""
    opened = await open_first(client, upstreams, build)
    body = bytearray(opened.first)
    try:
        async for chunk in opened.rest:
            body += chunk
            if len(body) > limit:
                raise GatewayError(502, f"upstream {opened.upstream.name} answered too much")
    except UpstreamBroke:
        raise GatewayError(502, f"upstream {opened.upstream.name} broke off its answer") from None
    finally:
        await opened.response.aclose()
    return opened.upstream, opened.response.status_code, bytes(body)
