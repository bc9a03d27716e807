"""The token count endpoints: what a request would cost, asked of the upstream.

Claude Code meters its context with ``POST /v1/messages/count_tokens``; the
Responses API has ``POST /v1/responses/input_tokens`` and Gemini
``:countTokens``. The gateway routes such a request by its model like any
other and asks the route's upstream to count it, in the upstream's own API
(the client's body as it came for the same API, with the headers that
change its meaning — ``anthropic-beta`` only as far as the configuration
allows, as for a message — else translated by ``tokens.count_request``). Where the
upstream's API has no count endpoint (Chat Completions), or the upstream
does not answer one, the count is the local estimate
(``tokens.estimate_tokens``). The answer is in the client's shape either
way, and its ``x-streamnorm-token-count`` header says which it is:
``exact`` or ``estimate``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .._json import dumps_bytes
from ..codec import KEPT_HEADERS, decode_request
from ..request import Request
from ..tokens import COUNT_APIS, count_request, estimate_tokens, read_count
from .config import BEDROCK_APIS, GatewayConfig, Upstream
from .doors import PATH_MODEL, ClientCall
from .errors import GatewayError, redact
from .exchange import Exchange
from .outgoing import allowed_betas
from .upstream import Client, Outgoing, fetch

__all__ = ["COUNT_HEADER", "Counter"]

#: The API whose token rates estimate a count for an upstream that has none
#: (Bedrock serves Claude, in Converse's or Anthropic's own shape).
_ESTIMATED_AS = {api: "anthropic-messages" for api in BEDROCK_APIS}

#: The response header that says whether a count is the provider's or an estimate.
COUNT_HEADER = "x-streamnorm-token-count"


class Counter:
    """Answers the three count doors."""

    def __init__(self, config: GatewayConfig, client: Callable[[], Client]) -> None:
        self._config = config
        self._client = client

    async def handle(self, ex: Exchange, call: ClientCall) -> None:
        route = self._config.route(call.model)
        if route is None:
            raise GatewayError(404, f"model: {call.model!r} is not served here", param="model")
        request = _canonical(call, ex)
        exact = [u for u in route.upstreams if u.api in COUNT_APIS and not u.missing_key]
        tokens: int | None = None
        if exact:
            tokens = await self._ask(ex, call, request, exact)
        kind = "exact"
        if tokens is None:
            up = route.upstreams[0]
            ex.record.upstream, ex.record.upstream_api = up.name, up.api
            tokens = estimate_tokens(_for(request, call, up), _ESTIMATED_AS.get(up.api, up.api))
            kind = "estimate"
        body = dumps_bytes(_answer(call.api, tokens))
        await ex.respond(200, "application/json", body, {COUNT_HEADER: kind})

    async def _ask(
        self, ex: Exchange, call: ClientCall, request: Request, ups: list[Upstream]
    ) -> int | None:
        """The count of the first upstream that gives one; None: none did."""

        def build(up: Upstream) -> Outgoing:
            if up.api == call.api and call.api != "google-generative-ai":
                body = {**call.body, "model": up.model or call.model}
                kept = {h: ex.headers[h] for h in KEPT_HEADERS.get(call.api, ()) if h in ex.headers}
                kept, dropped = allowed_betas(kept, self._config.anthropic_betas)
                ex.record.warnings += [str(w) for w in dropped]
                return Outgoing(ex.path, kept, dumps_bytes(body))
            wire = count_request(_for(request, call, up), up.api, provider=up.provider)
            return Outgoing(wire.path, dict(wire.headers), dumps_bytes(wire.body))

        try:
            up, status, body = await fetch(self._client(), ups, build)
            ex.record.upstream, ex.record.upstream_api = up.name, up.api
            if status >= 300:
                raise GatewayError(status, f"upstream {up.name} answered {status}")
            return read_count(body, up.api)
        except (GatewayError, ValueError) as exc:
            # the upstream's message may echo its key: cut out before it is shown
            reason = redact(str(exc), self._config.secrets())
            ex.record.warnings.append(f"count: estimated ({reason})")
            return None


def _for(request: Request, call: ClientCall, up: Upstream) -> Request:
    model = up.model or call.model
    if up.api == "google-generative-ai" and not PATH_MODEL.fullmatch(model):
        raise GatewayError(400, f"model: {model!r} is not a model name", param="model")
    return dataclasses.replace(request, model=model)


def _canonical(call: ClientCall, ex: Exchange) -> Request:
    """The client's count body as a canonical request (400 naming the field)."""
    body: Any = call.body
    if call.api == "google-generative-ai" and isinstance(body.get("generateContentRequest"), dict):
        body = {k: v for k, v in body["generateContentRequest"].items() if k != "model"}
    try:
        return decode_request(body, call.api, path=ex.path, headers=ex.headers)
    except ValueError as exc:
        message = str(exc)
        field = message.split(":", 1)[0] if ":" in message else None
        raise GatewayError(400, message, param=field) from None


def _answer(api: str, tokens: int) -> dict[str, Any]:
    """A count answer in ``api``'s shape."""
    if api == "google-generative-ai":
        return {"totalTokens": tokens}
    if api == "openai-responses":
        return {"object": "response.input_tokens", "input_tokens": tokens}
    return {"input_tokens": tokens}
