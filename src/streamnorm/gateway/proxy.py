"""Serving one front-door request: route, call the upstream, answer the client.

    client call ─► route (model glob) ─► plan per upstream ─► open_first (fallbacks)
        ─► stream: relay chunk by chunk     ─► client, in its own API
        ─► whole:  one body, translated or not

A *same-API* upstream gets the client's body as it came (only the model
replaced when the upstream names another) and its bytes go back unchanged.
A *cross-API* upstream gets the request re-encoded for its API, and its
answer is normalized and encoded again for the client (``translate.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx

from .._json import dumps_compact
from .config import GatewayConfig, Route, Upstream
from .doors import PATH_MODEL, ClientCall
from .errors import GatewayError, upstream_message
from .exchange import ClientGone, Exchange
from .relay import Passthrough, Relay
from .upstream import Opened, Outgoing, open_first

__all__ = ["Proxy"]

#: Most bytes of a non-streaming upstream answer the gateway holds.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
#: Client headers a same-API upstream still needs (the client's credentials never pass).
_FORWARDED = {"anthropic-messages": ("anthropic-version", "anthropic-beta")}
_GEMINI_METHODS = {True: "streamGenerateContent", False: "generateContent"}


class Proxy:
    """The front doors' request handler, sharing one HTTP client to upstreams."""

    def __init__(self, config: GatewayConfig, client: Callable[[], httpx.AsyncClient]) -> None:
        self._config = config
        self._client = client

    async def handle(self, ex: Exchange, call: ClientCall) -> None:
        route = self._route(call)
        opened = await open_first(
            self._client(), route.upstreams, lambda u: self._plan(ex, call, u)
        )
        up = opened.upstream
        ex.record.upstream, ex.record.upstream_api = up.name, up.api
        ex.record.attempts = opened.attempts
        status = opened.response.status_code
        if 300 <= status < 400:
            raise GatewayError(502, f"upstream {up.name} answered with a redirect (not followed)")
        if status >= 400:
            raise GatewayError(status, upstream_message(opened.first, status))
        relay = self._relay(call, up)
        if call.stream:
            await _stream(ex, opened, relay, self._content_type(call, opened))
        else:
            await self._whole(ex, call, opened)

    def _route(self, call: ClientCall) -> Route:
        route = self._config.route(call.model)
        if route is None:
            raise GatewayError(404, f"model: {call.model!r} is not served here", param="model")
        return route

    def _plan(self, ex: Exchange, call: ClientCall, up: Upstream) -> Outgoing:
        if up.api != call.api:
            raise GatewayError(501, f"{call.api} clients cannot use {up.api} upstreams yet")
        return same_api_request(call, up, ex.headers)

    def _relay(self, call: ClientCall, up: Upstream) -> Relay:
        return Passthrough(
            call.api, model=up.model or call.model, provider=up.provider, sse=call.sse
        )

    def _content_type(self, call: ClientCall, opened: Opened) -> str:
        return str(opened.response.headers.get("content-type", "text/event-stream"))

    async def _whole(self, ex: Exchange, call: ClientCall, opened: Opened) -> None:
        body = bytearray(opened.first)
        body += await _read_rest(opened, MAX_RESPONSE_BYTES - len(body))
        await opened.response.aclose()
        content_type = str(opened.response.headers.get("content-type", "application/json"))
        await ex.respond(200, content_type, bytes(body))


def same_api_request(call: ClientCall, up: Upstream, headers: dict[str, str]) -> Outgoing:
    """The client's own request, for an upstream of the same API."""
    model = up.model or call.model
    forwarded = {h: headers[h] for h in _FORWARDED.get(call.api, ()) if h in headers}
    if call.api == "google-generative-ai":
        if not PATH_MODEL.fullmatch(model):
            raise GatewayError(400, f"model: {model!r} is not a model name", param="model")
        path = f"/{call.door.version}/models/{model}:{_GEMINI_METHODS[call.stream]}"
        return Outgoing(path + ("?alt=sse" if call.sse else ""), forwarded, call.raw)
    path = {"anthropic-messages": "/v1/messages", "openai-responses": "/v1/responses"}.get(
        call.api, "/v1/chat/completions"
    )
    body = (
        call.raw if model == call.model else dumps_compact({**call.body, "model": model}).encode()
    )
    return Outgoing(path, forwarded, body)


async def _read_rest(opened: Opened, limit: int) -> bytes:
    buf = bytearray()
    try:
        async for chunk in opened.rest:
            buf += chunk
            if len(buf) > limit:
                raise GatewayError(502, "the upstream answer exceeds the gateway's response limit")
    except httpx.TransportError:
        raise GatewayError(502, "the upstream connection broke before the answer ended") from None
    return bytes(buf)


async def _stream(ex: Exchange, opened: Opened, relay: Relay, content_type: str) -> None:
    """Relay the stream until it ends or the client goes; the upstream is closed either way."""
    pump = asyncio.create_task(_pump(ex, opened, relay, content_type))
    gone = asyncio.create_task(ex.wait_disconnect())
    try:
        await asyncio.wait({pump, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (pump, gone):
            task.cancel()
        await asyncio.gather(pump, gone, return_exceptions=True)
        await opened.response.aclose()
        ex.record.count(relay.message.usage)
    if pump.cancelled():  # cancelled above because the client went first
        raise ClientGone
    error = pump.exception()
    if error is not None:
        raise error


async def _pump(ex: Exchange, opened: Opened, relay: Relay, content_type: str) -> None:
    out = relay.feed(opened.first)
    await ex.start(200, content_type, {"cache-control": "no-cache"})
    await ex.write(out)
    try:
        async for chunk in opened.rest:
            data = relay.feed(chunk)
            if data:
                await ex.write(data)
        tail = relay.close()
    except httpx.TimeoutException:
        tail = relay.fail("the upstream stopped sending before the stream ended")
        ex.record.error = "upstream_timeout"
    except httpx.TransportError:
        tail = relay.fail("the upstream connection broke before the stream ended")
        ex.record.error = "upstream_broke"
    await ex.write(tail, more=False)
