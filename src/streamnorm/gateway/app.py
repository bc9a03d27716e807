"""``create_app(config)``: the gateway as one ASGI application.

Endpoints: the four front doors and their token count doors (``doors.py``,
``counting.py``), the model lists ``GET /v1/models[/{id}]`` and
``GET /v1beta/models[/{model}]`` (``listing.py``), the stored Responses
(``stored.py``), ``HEAD /`` (clients probe it), ``GET /healthz`` and
``GET /metrics``. Any other path is a 404 in the client's own error shape
whose OpenAI code is ``unknown_url``.

Checks, in order, each answered in the client's API: the client key (401),
the body size (413) and the time taken to send it (408), the bytes the
worker holds (503), the concurrency limit (429), the body itself (400), the
key's scope and limits (403, 429, the quota error: ``keys.py``), the model
(404). A concurrency slot is taken only once the whole body is in, so
clients that send slowly hold no slot; from then on a client that leaves
cancels its request at once, upstream call and fallbacks included. The app
holds no state between requests beyond counters; stored Responses live in
the configured store, shared by every worker, so any number of workers can
serve the same conversations.
"""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from .._json import dumps_bytes
from .config import GatewayConfig
from .counting import Counter
from .doors import Door, client_api, find_door, parse_call, presented_keys
from .errors import UNKNOWN_URL, GatewayError, error_body, redact
from .exchange import Budget, ClientGone, Exchange, Receive, Scope, Send
from .keys import Accounts
from .listing import Listing, list_body, model_body
from .otel import Tracing
from .proxy import Proxy
from .stored import StoredResponses, stored_path
from .telemetry import Metrics, RequestRecord, bounded, log_info
from .upstream import Clients

__all__ = ["Gateway", "create_app"]

_JSON = "application/json"
#: Where the model lists are (a model's name may follow).
_LIST_PATHS = ("/v1/models", "/v1beta/models")
#: A Retry-After value passed on: seconds, or an HTTP date.
_RETRY_AFTER = re.compile(r"[0-9A-Za-z ,:]{1,64}")


def create_app(config: GatewayConfig) -> Gateway:
    """The ASGI application serving ``config``'s routes."""
    return Gateway(config)


class Gateway:
    """The ASGI callable; one per worker process."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        config.register_models()
        self.metrics = Metrics()
        self._secrets = config.secrets()
        self._clients = Clients(config.upstream_client)
        self.stored = StoredResponses(config.store, config.store_retention, self._secrets)
        self._proxy = Proxy(config, self._clients.get, self.stored)
        self._counter = Counter(config, self._clients.get)
        self._listing = Listing(config, self._clients.get)
        self.accounts = Accounts(config, self._secrets)
        self.tracing = Tracing() if config.otel else None
        self._in_flight = 0
        self.budget = Budget(config.max_bytes_in_flight)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http_request(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._clients.open()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self._clients.aclose()
                self.stored.close()
                self.accounts.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        record = RequestRecord(f"req_{os.urandom(16).hex()}", scope["method"], scope["path"])
        ex = Exchange(scope, receive, send, record, self.budget)
        door = find_door(ex.method, ex.path)
        with self._traced(ex, door):
            try:
                await self._dispatch(ex, door)
            except GatewayError as exc:
                await self._fail(ex, exc)
            except ClientGone:
                record.disconnected = True
            finally:
                ex.release()
                record.finish()
                log_info(record.line())
                self.metrics.observe(record)
                if door is not None and record.status != 401:
                    await self.accounts.record(record)

    def _traced(self, ex: Exchange, door: Door | None) -> AbstractContextManager[None]:
        """The request's OpenTelemetry span (``otel``): front doors that call a model."""
        if self.tracing is None or door is None or door.count:
            return nullcontext()
        return self.tracing.request(ex.headers, ex.record)

    async def _fail(self, ex: Exchange, exc: GatewayError) -> None:
        message = bounded(redact(exc.message, self.config.secrets()))
        ex.record.status, ex.record.error = exc.status, message
        if ex.started:  # pragma: no cover - relays end their own streams
            return
        api = ex.record.client_api or "openai-completions"
        body = error_body(
            api,
            exc.status,
            message,
            param=exc.param,
            code=exc.code,
            request_id=ex.record.request_id,
        )
        # An upstream's Retry-After goes on only when it reads like one.
        headers = {
            k: v for k, v in exc.headers.items() if k != "retry-after" or _RETRY_AFTER.fullmatch(v)
        }
        try:
            await ex.respond(exc.status, _JSON, body, headers)
        except ClientGone:
            ex.record.disconnected = True

    async def _dispatch(self, ex: Exchange, door: Door | None) -> None:
        if door is not None:
            await self._front_door(ex, door)
        elif ex.method == "GET" and ex.path == "/healthz":
            await ex.respond(200, _JSON, b'{"status":"ok"}')
        elif ex.method == "GET" and ex.path == "/metrics":
            body, content_type = self.metrics.render()
            await ex.respond(200, content_type, body)
        elif ex.method == "HEAD" and ex.path == "/":
            await ex.respond(200, _JSON, b"")
        elif ex.method == "GET" and _list_prefix(ex.path) is not None:
            await self._models(ex)
        elif (stored := stored_path(ex.method, ex.path)) is not None:
            ex.record.client_api = "openai-responses"
            await self.accounts.authorize(presented_keys("openai-responses", ex.headers, ex.query))
            await self.stored.serve(ex, stored)
        else:
            ex.record.client_api = client_api(ex.path, ex.headers, ex.query)
            raise GatewayError(
                404, f"no such endpoint: {bounded(ex.method)} {bounded(ex.path)}", code=UNKNOWN_URL
            )

    async def _front_door(self, ex: Exchange, door: Door) -> None:
        ex.record.client_api = door.api
        key = await self.accounts.authorize(presented_keys(door.api, ex.headers, ex.query))
        ex.record.client_key = key.label if key is not None else None
        raw = await ex.read_body(self.config.max_body_bytes, self.config.body_timeout)
        if self._in_flight >= self.config.max_concurrency:
            raise GatewayError(429, "the gateway is serving its maximum of concurrent requests")
        self._in_flight += 1
        try:
            call = parse_call(door, raw, ex.query)
            ex.record.model, ex.record.stream = bounded(call.model), call.stream
            if not door.count:
                await self.accounts.admit(ex.record, key, call.model)
            if self.config.log_content:
                ex.record.content = {"request": raw.decode("utf-8", "replace")}
            handler = self._counter if door.count else self._proxy
            await ex.unless_gone(handler.handle(ex, call))
        finally:
            self._in_flight -= 1

    async def _models(self, ex: Exchange) -> None:
        """A model list, or one model (404 when no route serves it), in the
        client's shape; a scoped key sees only the models its globs allow."""
        api = client_api(ex.path, ex.headers, ex.query)
        ex.record.client_api = api
        key = await self.accounts.authorize(presented_keys(api, ex.headers, ex.query))
        name = ex.path[len(_list_prefix(ex.path) or "") :].strip("/")
        body: dict[str, Any]
        if not name:
            names = await self._listing.names()
            body = list_body(api, [n for n in names if key is None or key.allows(n)])
        elif self.config.route(name) is None or (key is not None and not key.allows(name)):
            raise GatewayError(404, f"model: {name!r} is not served here", param="model")
        else:
            body = model_body(api, name)
        await ex.respond(200, _JSON, dumps_bytes(body))


def _list_prefix(path: str) -> str | None:
    """The model list path ``path`` is, or names a model under; None: neither."""
    return next((p for p in _LIST_PATHS if path == p or path.startswith(p + "/")), None)
