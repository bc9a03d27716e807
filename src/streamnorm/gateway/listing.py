"""The model lists: ``GET /v1/models`` (and ``/v1/models/{id}``), ``GET /v1beta/models``
(and ``/v1beta/models/{model}``).

A client can name a route's literal model names, and every model an
upstream lists that the route's globs match (the first matching route being
the one that serves it). Upstream lists are asked for at their API's own
path with the upstream's key and kept for five minutes; an upstream that
renames every model (``model = …``) or does not answer adds nothing.

Each client API gets its own list shape. ``/v1/models`` is shared by
Anthropic and OpenAI clients: one that sends ``anthropic-version`` or
``x-api-key`` (Claude Code, the Anthropic SDKs) gets Anthropic's shape, any
other OpenAI's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from .._json import loads
from .config import GatewayConfig, Upstream
from .errors import GatewayError
from .upstream import Client, Outgoing, fetch

__all__ = ["Listing", "list_body", "model_body"]

#: Seconds an upstream's model list is kept.
TTL = 300.0
#: Most bytes of an upstream's model list read.
_MAX_LIST = 4 * 1024 * 1024
_LIST_PATHS = {
    "anthropic-messages": "/v1/models?limit=1000",
    "openai-responses": "/v1/models",
    "openai-completions": "/v1/models",
    "google-generative-ai": "/v1beta/models?pageSize=1000",
}
_GEMINI_METHODS = ["generateContent", "streamGenerateContent", "countTokens"]


class Listing:
    """The model names the gateway serves, with each upstream's list cached."""

    def __init__(
        self,
        config: GatewayConfig,
        client: Callable[[], Client],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._client = client
        self._clock = clock
        self._cache: dict[str, tuple[float, list[str]]] = {}

    async def names(self) -> list[str]:
        """Literal route names first, then upstream models the routes serve
        (the upstreams asked at once: one slow upstream delays the list by its
        own timeout only)."""
        names = dict.fromkeys(self._config.listed_models())
        # Bedrock lists its models in another service than the one it answers in.
        ups = {
            u.name: u
            for r in self._config.routes
            for u in r.upstreams
            if u.model is None and u.api in _LIST_PATHS
        }
        listed = await asyncio.gather(*(self._upstream_models(u) for u in ups.values()))
        models = dict(zip(ups, listed, strict=True))
        for route in self._config.routes:
            for up in route.upstreams:
                found = models.get(up.name, [])
                names.update((n, None) for n in found if self._config.route(n) is route)
        return list(names)

    async def _upstream_models(self, up: Upstream) -> list[str]:
        cached = self._cache.get(up.name)
        if cached is not None and self._clock() - cached[0] < TTL:
            return cached[1]
        headers = {"anthropic-version": "2023-06-01"} if up.api == "anthropic-messages" else {}
        out = Outgoing(_LIST_PATHS[up.api], headers, b"", "GET")
        try:
            _, status, body = await fetch(self._client(), [up], lambda _: out, _MAX_LIST)
            ids = _ids(up.api, body) if status < 300 else []
        except GatewayError:
            ids = []
        self._cache[up.name] = (self._clock(), ids)
        return ids


def _ids(api: str, body: bytes) -> list[str]:
    """The model ids of an upstream's list answer (nothing when unreadable)."""
    try:
        data = loads(body)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    if api == "google-generative-ai":
        items = data.get("models")
        key, prefix = "name", "models/"
    else:
        items = data.get("data")
        key, prefix = "id", ""
    if not isinstance(items, list):
        return []
    found = (item.get(key) for item in items if isinstance(item, dict))
    return [name.removeprefix(prefix) for name in found if isinstance(name, str) and name]


def model_body(api: str, name: str) -> dict[str, Any]:
    """One model in ``api``'s shape."""
    if api == "anthropic-messages":
        return {
            "type": "model",
            "id": name,
            "display_name": name,
            "created_at": "1970-01-01T00:00:00Z",
        }
    if api == "google-generative-ai":
        return {
            "name": f"models/{name}",
            "version": "",
            "displayName": name,
            "description": "",
            "supportedGenerationMethods": list(_GEMINI_METHODS),
        }
    return {"id": name, "object": "model", "created": 0, "owned_by": "streamnorm"}


def list_body(api: str, names: list[str]) -> dict[str, Any]:
    """A model list in ``api``'s shape, complete on one page."""
    data = [model_body(api, n) for n in names]
    if api == "anthropic-messages":
        first, last = (names[0], names[-1]) if names else (None, None)
        return {"data": data, "has_more": False, "first_id": first, "last_id": last}
    if api == "google-generative-ai":
        return {"models": data}
    return {"object": "list", "data": data}
