"""Serving one front-door request: route, call the upstream, answer the client.

    client call ─► route (model glob) ─► request per upstream ─► open_first (fallbacks)
        ─► stream: relay chunk by chunk     ─► client, in its own API
        ─► whole:  one body, translated or not

A *same-API* upstream gets the client's body as it came (``outgoing.py``)
and its bytes go back unchanged (``relay.Passthrough``). A *cross-API*
upstream gets the request re-encoded for its API, and its answer is
normalized and encoded again for the client (``translate.py``; for a whole
answer ``decode_response`` then ``encode_response``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx

from .._json import dumps_compact
from ..codec import decode_response
from ..encoder import encode_response
from .config import GatewayConfig, Route
from .doors import ClientCall
from .errors import GatewayError, upstream_message
from .exchange import ClientGone, Exchange
from .outgoing import ClientRequest
from .relay import Passthrough, Relay
from .translate import Translate
from .upstream import Opened, open_first

__all__ = ["Proxy"]

#: Most bytes of a non-streaming upstream answer the gateway holds.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class Proxy:
    """The front doors' request handler, sharing one HTTP client to upstreams."""

    def __init__(self, config: GatewayConfig, client: Callable[[], httpx.AsyncClient]) -> None:
        self._config = config
        self._client = client

    async def handle(self, ex: Exchange, call: ClientCall) -> None:
        route = self._route(call)
        request = ClientRequest(call, ex.path, ex.headers)
        opened = await open_first(self._client(), route.upstreams, request.for_upstream)
        up = opened.upstream
        ex.record.upstream, ex.record.upstream_api = up.name, up.api
        ex.record.upstream_model, ex.record.provider = up.model or call.model, up.provider
        ex.record.attempts = opened.attempts
        status = opened.response.status_code
        if 300 <= status < 400:
            raise GatewayError(502, f"upstream {up.name} answered with a redirect (not followed)")
        if status >= 400:
            raise GatewayError(status, upstream_message(opened.first, status))
        if call.stream:
            relay, content_type = _relay(call, opened)
            await _stream(ex, opened, relay, content_type)
        else:
            await _whole(ex, call, opened)

    def _route(self, call: ClientCall) -> Route:
        route = self._config.route(call.model)
        if route is None:
            raise GatewayError(404, f"model: {call.model!r} is not served here", param="model")
        return route


def _relay(call: ClientCall, opened: Opened) -> tuple[Relay, str]:
    """The relay for this pair of APIs, and the content type the client gets."""
    up = opened.upstream
    model = up.model or call.model
    if up.api == call.api:
        content_type = str(opened.response.headers.get("content-type", "text/event-stream"))
        return Passthrough(call.api, model=model, provider=up.provider, sse=call.sse), content_type
    relay = Translate(
        up.api,
        call.api,
        upstream_model=model,
        client_model=call.model,
        provider=up.provider,
        sse=call.sse,
        created=int(time.time()),
    )
    return relay, "text/event-stream" if call.sse else "application/json"


async def _whole(ex: Exchange, call: ClientCall, opened: Opened) -> None:
    """A non-streaming answer: forwarded as it is, or decoded and encoded again."""
    body = bytearray(opened.first)
    body += await _read_rest(opened, MAX_RESPONSE_BYTES - len(body))
    await opened.response.aclose()
    up = opened.upstream
    try:
        message = decode_response(bytes(body), up.api, model=up.model or call.model)
    except ValueError:
        raise GatewayError(
            502, f"upstream {up.name} answered with a body that is not JSON"
        ) from None
    ex.record.count(message.usage)
    if up.api == call.api:
        content_type = str(opened.response.headers.get("content-type", "application/json"))
        await ex.respond(200, content_type, bytes(body))
        return
    out = encode_response(message, call.api, model=call.model, created=int(time.time()))
    await ex.respond(200, "application/json", dumps_compact(out).encode())


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
