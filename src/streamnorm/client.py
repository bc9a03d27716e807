"""The one-call client: a canonical request to any host of the host table,
canonical events back (docs/client.md).

    client = Client()
    request = Request(model="claude-sonnet-4-5", messages=history)
    message = client.complete(request, host="anthropic")
    for event in client.stream(request, host="bedrock"): ...
    async for event in client.astream(request, host="vertex-anthropic"): ...

Built on the request codec (``encode_request`` places the body on the host),
the normalizer (the host's stream API, the host recorded as the issuer) and
httpx (the ``httpx`` extra). The base URL and the key come from the host
table and the environment (``ANTHROPIC_BASE_URL``, ``OPENAI_API_KEY`` …) or
from the caller; SigV4, Google OAuth and Entra tokens from
:mod:`streamnorm.hosts.auth`.

Retries: a connection that fails, and an answer whose error is retryable
(429, 5xx, 529 overloaded), are tried again after an exponential backoff
with jitter, or after the ``Retry-After`` the host named, up to
``max_retries`` times. Nothing is retried once the first byte of a stream
has arrived: the stream ends with its ``Error`` instead. A bad request, bad
credentials or an overflowing prompt are never retried.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ._json import dumps_bytes
from .codec import encode_request
from .errors import retry_after_of
from .events import Done, Error, Event
from .hosts.auth import Signer, auth_headers, azure_entra, google_oauth, sigv4
from .hosts.table import HOSTS, Host
from .hosts.wire import base_url, url
from .messages import AssistantMessage
from .normalizer import StreamNormalizer, anormalize, normalize
from .request import Request

if TYPE_CHECKING:
    import httpx

__all__ = ["Client", "ClientError", "RetryPolicy"]


class ClientError(Exception):
    """``complete`` ended with an error: ``error`` is the terminal
    :class:`~streamnorm.events.Error` (its ``category``, ``retryable``,
    ``status``, ``retry_after`` and the partial ``message``)."""

    def __init__(self, error: Error) -> None:
        super().__init__(f"{error.category}: {error.reason}")
        self.error = error


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``max_retries`` tries after the first; the n-th waits
    ``min(max_delay, initial * 2**n)`` scaled by a random factor in
    [0.5, 1], or the ``Retry-After`` the host named when it is at most
    ``max_retry_after`` (a longer wait is not waited: the error is returned)."""

    max_retries: int = 2
    initial: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before try ``attempt + 1``; None: do not retry."""
        if attempt >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        backoff: float = min(self.max_delay, self.initial * 2**attempt)
        return backoff * (0.5 + random.random() / 2)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """One request ready to send: where, what, and how to read the answer."""

    host: Host
    url: str
    headers: dict[str, str]
    body: bytes
    model: str | None


class Client:
    """Send canonical requests to the hosts of :data:`streamnorm.hosts.HOSTS`.

    ``keys`` and ``base_urls`` (by host name) override the environment;
    ``host_params`` fill the hosts' placeholders (``region``, ``project``,
    ``location``, ``resource``, ``api_version``); ``signers`` (by host
    name) replace a host's auth (a SigV4 signer with given credentials, a
    token provider). ``env`` is the environment read (``os.environ``).
    ``timeout`` bounds each read and the connection; ``connect_timeout``
    the connection alone.
    """

    def __init__(
        self,
        *,
        keys: Mapping[str, str] | None = None,
        base_urls: Mapping[str, str] | None = None,
        host_params: Mapping[str, str] | None = None,
        signers: Mapping[str, Signer] | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 600.0,
        connect_timeout: float = 10.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._keys = dict(keys or {})
        self._base_urls = dict(base_urls or {})
        self._params = dict(host_params or {})
        self._signers = dict(signers or {})
        self.retry = retry or RetryPolicy()
        self._timeout = (timeout, connect_timeout)
        self._env = env

    def __repr__(self) -> str:  # never the keys
        return f"Client(hosts={sorted(self._keys) or 'from environment'})"

    # -- preparing -----------------------------------------------------------

    def _host(self, name: str) -> Host:
        host = HOSTS.get(name)
        if host is None:
            raise ValueError(f"host: unknown host {name!r}; valid hosts: {', '.join(HOSTS)}")
        return host

    def _environ(self) -> Mapping[str, str]:
        return os.environ if self._env is None else self._env

    def _params_for(self, host: Host) -> dict[str, str]:
        env = self._environ()
        found = {
            name: next(env[v] for v in variables if env.get(v))
            for name, variables in host.params.items()
            if any(env.get(v) for v in variables)
        }
        return {**host.defaults, **found, **self._params}

    def _signer(self, host: Host, params: Mapping[str, str]) -> Signer | None:
        if host.name in self._signers:
            return self._signers[host.name]
        key = self._key(host)
        if host.auth == "sigv4":
            return sigv4(params["region"]) if "region" in params else _no_region()
        if host.auth == "google-oauth":
            return google_oauth()
        if host.auth == "api-key" and key is None:
            return azure_entra()
        return None

    def _key(self, host: Host) -> str | None:
        if host.name in self._keys:
            return self._keys[host.name]
        env = self._environ()
        return next((env[v] for v in host.key_env if env.get(v)), None)

    def _prepare(self, request: Request, host: Host, stream: bool) -> _Prepared:
        params = self._params_for(host)
        wire = encode_request(
            replace(request, stream=stream), host.api, provider=host.name, host_params=params
        )
        base = self._base_urls.get(host.name) or base_url(host, params, self._environ())
        target = url(base, wire.path)
        body = dumps_bytes(wire.body)
        headers = dict(wire.headers)
        signer = self._signer(host, params)
        if signer is not None:
            headers.update(signer(wire.method, target, headers, body))
        else:
            key = self._key(host)
            if key is None and host.auth != "none" and not host.key_optional:
                where = ", ".join(host.key_env)
                raise ValueError(f"{host.name}: no key (set {where}, or pass keys={{...}})")
            headers.update(auth_headers(host.auth, key))
        return _Prepared(host, target, headers, body, request.model)

    def _options(self, prepared: _Prepared) -> dict[str, Any]:
        return {"model": prepared.model, "provider": prepared.host.provider}

    def _httpx_timeout(self) -> httpx.Timeout:
        import httpx

        read, connect = self._timeout
        return httpx.Timeout(read, connect=connect)

    # -- sync ------------------------------------------------------------------

    def stream(self, request: Request, host: str) -> Iterator[Event]:
        """Canonical events of ``request`` streamed from ``host`` (a name of
        the host table), from ``Start`` to one terminal ``Done`` or ``Error``."""
        import httpx

        prepared = self._prepare(request, self._host(host), stream=True)
        with httpx.Client(timeout=self._httpx_timeout()) as http:
            yield from self._attempts(http, prepared)

    def _attempts(self, http: httpx.Client, prepared: _Prepared) -> Iterator[Event]:
        import httpx

        attempt = 0
        while True:
            try:
                with http.stream(
                    "POST", prepared.url, content=prepared.body, headers=prepared.headers
                ) as response:
                    if response.status_code >= 400:
                        events = self._error_events(prepared, response.read(), response)
                        wait = _retry_wait(self.retry, attempt, events[-1])
                        if wait is None:
                            yield from events
                            return
                    else:
                        chunks = response.iter_bytes()
                        first = _first_chunk(chunks)
                        yield from normalize(
                            _chain(first, chunks),
                            prepared.host.reads,
                            **self._options(prepared),
                        )
                        return
            except httpx.TransportError as exc:
                wait = self.retry.delay(attempt, None)
                if wait is None:
                    yield from _failed(prepared, exc)
                    return
            time.sleep(wait)
            attempt += 1

    def _error_events(self, prepared: _Prepared, body: bytes, response: Any) -> list[Event]:
        """The events of an error answer, its status and Retry-After on the ``Error``."""
        events = list(normalize([body], prepared.host.reads, **self._options(prepared)))
        last = events[-1]
        if isinstance(last, Error):
            retry_after = retry_after_of(response.headers) or last.retry_after
            events[-1] = replace(last, status=response.status_code, retry_after=retry_after)
        return events

    def complete(self, request: Request, host: str) -> AssistantMessage:
        """The whole answer to ``request`` from ``host``: the final message
        (streamed and gathered, so long answers do not time out idle).
        Raises :class:`ClientError` when the answer ended with an error."""
        return _final(list(self.stream(request, host)))

    # -- async -----------------------------------------------------------------

    async def astream(self, request: Request, host: str) -> AsyncIterator[Event]:
        """:meth:`stream` for asyncio."""
        import httpx

        prepared = self._prepare(request, self._host(host), stream=True)
        async with httpx.AsyncClient(timeout=self._httpx_timeout()) as http:
            async for event in self._aattempts(http, prepared):
                yield event

    async def _aattempts(
        self, http: httpx.AsyncClient, prepared: _Prepared
    ) -> AsyncIterator[Event]:
        import httpx

        attempt = 0
        while True:
            try:
                async with http.stream(
                    "POST", prepared.url, content=prepared.body, headers=prepared.headers
                ) as response:
                    if response.status_code >= 400:
                        events = self._error_events(prepared, await response.aread(), response)
                        wait = _retry_wait(self.retry, attempt, events[-1])
                        if wait is None:
                            for event in events:
                                yield event
                            return
                    else:
                        chunks = response.aiter_bytes()
                        first = await _afirst_chunk(chunks)
                        async for event in anormalize(
                            _achain(first, chunks), prepared.host.reads, **self._options(prepared)
                        ):
                            yield event
                        return
            except httpx.TransportError as exc:
                wait = self.retry.delay(attempt, None)
                if wait is None:
                    for event in _failed(prepared, exc):
                        yield event
                    return
            await asyncio.sleep(wait)
            attempt += 1

    async def acomplete(self, request: Request, host: str) -> AssistantMessage:
        """:meth:`complete` for asyncio."""
        return _final([event async for event in self.astream(request, host)])


def _no_region() -> Signer:
    raise ValueError("sigv4: no region (set AWS_REGION, or pass host_params={'region': ...})")


def _retry_wait(policy: RetryPolicy, attempt: int, last: Event) -> float | None:
    """The wait before retrying an error answer; None: it is the answer."""
    if not isinstance(last, Error) or not last.retryable:
        return None
    return policy.delay(attempt, last.retry_after)


def _first_chunk(chunks: Iterator[bytes]) -> bytes:
    """The first non-empty chunk; a transport error before it propagates
    (nothing was streamed yet, so the request may be retried)."""
    for chunk in chunks:
        if chunk:
            return chunk
    return b""


async def _afirst_chunk(chunks: AsyncIterator[bytes]) -> bytes:
    async for chunk in chunks:
        if chunk:
            return chunk
    return b""


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


async def _achain(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for chunk in rest:
        yield chunk


def _failed(prepared: _Prepared, exc: Exception) -> list[Event]:
    """``Start`` and ``Error(truncated)`` for a host that could not be reached."""
    normalizer = StreamNormalizer(
        prepared.host.reads, model=prepared.model, provider=prepared.host.provider
    )
    events = normalizer.flush()
    last = events[-1]
    if isinstance(last, Error):
        reason = f"could not reach {prepared.host.name}: {type(exc).__name__}: {exc}"
        events[-1] = replace(last, reason=reason, message=replace(last.message, error=reason))
    return events


def _final(events: list[Event]) -> AssistantMessage:
    last = events[-1]
    if isinstance(last, Done):
        return last.message
    assert isinstance(last, Error)
    raise ClientError(last)
