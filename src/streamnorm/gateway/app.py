"""``create_app(config)``: the gateway as one ASGI application.

Endpoints: the four front doors and their token count doors (``doors.py``,
``counting.py``), the model lists ``GET /v1/models[/{id}]`` and
``GET /v1beta/models[/{model}]`` (``listing.py``), the stored Responses
(``stored.py``), ``HEAD /`` (clients probe it), ``GET /healthz`` and
``GET /metrics``. Any other path is a 404 in the client's own error shape
whose OpenAI code is ``unknown_url``.

Checks, in order, each answered in the client's API: the client key (401),
the concurrency limit (429), the body size (413), the body itself (400),
the model (404). The app holds no state between requests beyond counters;
stored Responses live in the configured store, shared by every worker, so
any number of workers can serve the same conversations.
"""

from __future__ import annotations

import hmac
import uuid
from typing import Any

from .._json import dumps_compact
from .config import GatewayConfig
from .counting import Counter
from .doors import Door, client_api, find_door, parse_call, presented_keys
from .errors import UNKNOWN_URL, GatewayError, error_body, redact
from .exchange import ClientGone, Exchange, Receive, Scope, Send
from .listing import Listing, list_body, model_body
from .proxy import Proxy
from .stored import StoredResponses, stored_path
from .telemetry import LOGGER, Metrics, RequestRecord, key_label
from .upstream import Clients

__all__ = ["Gateway", "create_app"]

_JSON = "application/json"
#: Where the model lists are (a model's name may follow).
_LIST_PATHS = ("/v1/models", "/v1beta/models")


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
        self._in_flight = 0

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
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        record = RequestRecord(f"req_{uuid.uuid4().hex}", scope["method"], scope["path"])
        ex = Exchange(scope, receive, send, record)
        try:
            await self._dispatch(ex)
        except GatewayError as exc:
            await self._fail(ex, exc)
        except ClientGone:
            record.disconnected = True
        finally:
            record.finish()
            LOGGER.info(record.line())
            self.metrics.observe(record)

    async def _fail(self, ex: Exchange, exc: GatewayError) -> None:
        message = redact(exc.message, self._secrets)
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
        try:
            await ex.respond(exc.status, _JSON, body)
        except ClientGone:
            ex.record.disconnected = True

    async def _dispatch(self, ex: Exchange) -> None:
        door = find_door(ex.method, ex.path)
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
            self._authorize(presented_keys("openai-responses", ex.headers, ex.query))
            await self.stored.serve(ex, stored)
        else:
            ex.record.client_api = client_api(ex.path, ex.headers, ex.query)
            raise GatewayError(404, f"no such endpoint: {ex.method} {ex.path}", code=UNKNOWN_URL)

    async def _front_door(self, ex: Exchange, door: Door) -> None:
        ex.record.client_api = door.api
        key = self._authorize(presented_keys(door.api, ex.headers, ex.query))
        ex.record.client_key = key_label(key)
        if self._in_flight >= self.config.max_concurrency:
            raise GatewayError(429, "the gateway is serving its maximum of concurrent requests")
        self._in_flight += 1
        try:
            raw = await ex.read_body(self.config.max_body_bytes)
            call = parse_call(door, raw, ex.query)
            ex.record.model, ex.record.stream = call.model, call.stream
            if self.config.log_content:
                ex.record.content = {"request": raw.decode("utf-8", "replace")}
            if door.count:
                await self._counter.handle(ex, call)
            else:
                await self._proxy.handle(ex, call)
        finally:
            self._in_flight -= 1

    def _authorize(self, presented: list[str]) -> str | None:
        """The configured key the client presented (None when the gateway
        takes no keys); 401 when it presented none of them."""
        if not self.config.keys:
            return None
        # compare_digest on every configured key: the time taken says nothing
        # about which key, or how much of one, matched.
        matched = None
        for key in presented:
            for expected in self.config.keys:
                if hmac.compare_digest(key.encode(), expected.encode()):
                    matched = expected
        if matched is None:
            raise GatewayError(401, "a valid gateway key is required")
        return matched

    async def _models(self, ex: Exchange) -> None:
        """A model list, or one model (404 when no route serves it), in the client's shape."""
        api = client_api(ex.path, ex.headers, ex.query)
        ex.record.client_api = api
        self._authorize(presented_keys(api, ex.headers, ex.query))
        name = ex.path[len(_list_prefix(ex.path) or "") :].strip("/")
        body: dict[str, Any]
        if not name:
            body = list_body(api, await self._listing.names())
        elif self.config.route(name) is None:
            raise GatewayError(404, f"model: {name!r} is not served here", param="model")
        else:
            body = model_body(api, name)
        await ex.respond(200, _JSON, dumps_compact(body).encode())


def _list_prefix(path: str) -> str | None:
    """The model list path ``path`` is, or names a model under; None: neither."""
    return next((p for p in _LIST_PATHS if path == p or path.startswith(p + "/")), None)
