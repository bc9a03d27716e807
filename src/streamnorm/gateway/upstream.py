"""Calling upstreams: the request on the wire, credentials, ordered fallbacks.

An upstream is only ever called at its configured ``base_url`` plus a path
the gateway built from a fixed set (the four APIs' paths, a model name
checked against ``doors.PATH_MODEL`` where it enters a path). Redirects are
not followed and the environment's proxy settings are not read, so nothing a
client sends can point the gateway at another host.

Fallbacks: the upstreams of a route are tried in order while the attempt
fails with a connection error, a timeout, a 429 or a 5xx. The gateway has
sent nothing to the client by then (the response starts only with the first
upstream body bytes), so the client sees one answer either way.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from ..hosts import auth as hosts_auth
from .config import Upstream
from .errors import GatewayError, upstream_message

__all__ = ["Clients", "Opened", "Outgoing", "auth_headers", "fetch", "open_first", "read_capped"]

#: Most bytes read from an upstream error body.
_MAX_ERROR_BODY = 64 * 1024


class Clients:
    r"""A few ``httpx.AsyncClient``\ s taken in turn, created on first use.

    httpcore's pool scans all its connections whenever a request starts or
    ends, so one pool under n concurrent streams costs O(n²); ``shards``
    pools of n/shards each cut that by the number of shards. Idle
    connections are dropped after 4 s, before the usual 5 s server idle
    timeout, so that a connection the server is closing is rarely reused.
    """

    def __init__(self, shards: int = 8) -> None:
        self._shards = shards
        self._clients: list[httpx.AsyncClient] = []
        self._next = 0

    def open(self) -> None:
        """Create the clients (at startup: building them costs a TLS context each)."""
        if not self._clients:
            tls = ssl.create_default_context()
            limits = httpx.Limits(
                max_connections=None, max_keepalive_connections=32, keepalive_expiry=4.0
            )
            self._clients = [
                httpx.AsyncClient(
                    limits=limits, verify=tls, follow_redirects=False, trust_env=False
                )
                for _ in range(self._shards)
            ]

    def get(self) -> httpx.AsyncClient:
        self.open()
        self._next = (self._next + 1) % self._shards
        return self._clients[self._next]

    async def aclose(self) -> None:
        clients, self._clients = self._clients, []
        for client in clients:
            await client.aclose()


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
    response: httpx.Response
    first: bytes
    rest: AsyncIterator[bytes]
    attempts: list[str] = field(default_factory=list)


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


def _request(client: httpx.AsyncClient, upstream: Upstream, out: Outgoing) -> httpx.Request:
    url = upstream.base_url + out.path
    if urlsplit(url).netloc != urlsplit(upstream.base_url).netloc:  # pragma: no cover - guard
        raise GatewayError(400, "model: not a valid model name", param="model")
    headers = {
        **({"content-type": "application/json"} if out.method == "POST" else {}),
        "accept-encoding": "identity",
        **out.headers,
        **dict(upstream.headers),
        **auth_headers(upstream),
    }
    timeout = httpx.Timeout(upstream.timeout, connect=upstream.connect_timeout)
    content = out.body if out.method == "POST" else None
    if upstream.auth is not None:
        headers.update(_signed(upstream, out.method, url, headers, content or b""))
    return client.build_request(
        out.method, url, headers=headers, content=content, extensions={"timeout": timeout.as_dict()}
    )


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


async def read_capped(response: httpx.Response, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``response``'s body; the rest is not read."""
    buf = bytearray()
    async for chunk in response.aiter_bytes():
        buf += chunk
        if len(buf) >= limit:
            break
    return bytes(buf[:limit])


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


async def _first_bytes(response: httpx.Response) -> tuple[bytes, AsyncIterator[bytes]]:
    rest = response.aiter_bytes()
    try:
        first = await rest.__anext__()
    except StopAsyncIteration:
        first = b""
    return first, rest


async def open_first(
    client: httpx.AsyncClient,
    upstreams: Sequence[Upstream],
    build: Callable[[Upstream], Outgoing],
) -> Opened:
    """Open the first upstream that answers; raise ``GatewayError`` if none does.

    The last failure decides the error: the upstream's status and message,
    502 when it could not be reached, 504 when it did not answer in time.
    A non-retryable error status (400, 401, 404 …, or a redirect, which is
    never followed) is returned as it is, with its body as ``first``, for the
    caller to translate.

    A connection the upstream closed before answering (the race between
    reusing a kept-alive connection and the server closing it as idle) is
    retried once on the same upstream before the next one is tried.
    """
    failure = GatewayError(502, "no upstream configured")
    attempts: list[str] = []
    for upstream in upstreams:
        attempts.append(upstream.name)
        if upstream.missing_key:
            failure = GatewayError(
                502, f"upstream {upstream.name} has no key: {upstream.api_key_env} is not set"
            )
            continue
        request = build(upstream)
        for _ in range(2):
            result = await _attempt(client, upstream, request)
            if isinstance(result, Opened):
                result.attempts = attempts
                return result
            failure, stale = result
            if not stale:
                break
    raise failure


async def _attempt(
    client: httpx.AsyncClient, upstream: Upstream, out: Outgoing
) -> Opened | tuple[GatewayError, bool]:
    """One try: the opened upstream, or (the failure, whether it was a dropped connection)."""
    response: httpx.Response | None = None
    try:
        response = await client.send(_request(client, upstream, out), stream=True)
        if response.status_code >= 300:
            body = await read_capped(response, _MAX_ERROR_BODY)
            await response.aclose()
            if not _retryable(response.status_code):
                return Opened(upstream, response, body, _empty())
            return GatewayError(
                response.status_code, upstream_message(body, response.status_code)
            ), False
        first, rest = await _first_bytes(response)
        return Opened(upstream, response, first, rest)
    except httpx.TimeoutException:
        failure = GatewayError(504, f"upstream {upstream.name} did not answer in time"), False
    except httpx.TransportError as exc:
        dropped = response is None and isinstance(exc, httpx.RemoteProtocolError)
        failure = GatewayError(502, f"upstream {upstream.name} is unreachable"), dropped
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
    client: httpx.AsyncClient,
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
    except httpx.TransportError:
        raise GatewayError(502, f"upstream {opened.upstream.name} broke off its answer") from None
    finally:
        await opened.response.aclose()
    return opened.upstream, opened.response.status_code, bytes(body)
