"""The request each upstream gets: the client's own, or one re-encoded for its API.

Same API: the client's body as it came (only ``model`` replaced when the
upstream names another), the few client headers that API still needs
(``anthropic-version``, ``anthropic-beta``), never the client's credentials.
An ``anthropic-beta`` feature turns something on with the operator's key,
so only those of the configuration's ``anthropic_betas`` pass; the others
are dropped with a warning (:func:`allowed_betas`).

Cross API: the client's request decoded once to a canonical ``Request``
(``decode_request``; a bad body is a 400 naming the field), then per upstream
given the upstream's model and encoded for its API (``encode_request``, which
sanitizes the history for that target first).

Wherever a model name becomes part of a URL path (Gemini), it must be a plain
name (``doors.PATH_MODEL``), so no model can reach another path.
"""

from __future__ import annotations

import dataclasses

from .._json import dumps_bytes
from ..codec import (
    ResponseHistory,
    UnknownItem,
    UnknownResponse,
    decode_request,
    encode_request,
)
from ..hosts.wire import host_for
from ..providers.openai_responses.request import with_reasoning_continuity
from ..request import Request
from ..sanitize import DEFAULT_FOREIGN_THINKING, ForeignThinking, SanitizeWarning
from .config import DEFAULT_ANTHROPIC_BETAS, Upstream
from .doors import PATH_MODEL, ClientCall
from .errors import GatewayError
from .stored import Prefetched
from .telemetry import bounded
from .upstream import Outgoing

__all__ = ["ClientRequest", "allowed_betas", "same_api_request"]

_FORWARDED = {"anthropic-messages": ("anthropic-version", "anthropic-beta")}
_PATHS = {
    "anthropic-messages": "/v1/messages",
    "openai-responses": "/v1/responses",
    "openai-completions": "/v1/chat/completions",
}
_GEMINI_METHODS = {True: "streamGenerateContent", False: "generateContent"}


def _path_model(model: str) -> str:
    if not PATH_MODEL.fullmatch(model):
        raise GatewayError(400, f"model: {model!r} is not a model name", param="model")
    return model


def _placed(up: Upstream) -> bool:
    """Whether the upstream is a host with its own paths (Vertex, Azure):
    its requests are written for it even from a client of the same API."""
    host = host_for(up.provider, up.api)
    return host is not None and bool(host.paths)


def allowed_betas(
    headers: dict[str, str], allowed: frozenset[str]
) -> tuple[dict[str, str], tuple[SanitizeWarning, ...]]:
    """``headers`` with only the ``allowed`` features left in ``anthropic-beta``
    (the header goes when none is), and a warning for each one dropped."""
    if "anthropic-beta" not in headers:
        return headers, ()
    asked = [b.strip() for b in headers["anthropic-beta"].split(",") if b.strip()]
    kept = [b for b in asked if b in allowed]
    warnings = tuple(
        SanitizeWarning(
            None,
            None,
            "beta_dropped",
            f"anthropic-beta: {bounded(b)} is not enabled here (gateway.anthropic_betas)",
        )
        for b in asked
        if b not in allowed
    )
    rest = {k: v for k, v in headers.items() if k != "anthropic-beta"}
    return ({**rest, "anthropic-beta": ",".join(kept)} if kept else rest), warnings


def same_api_request(
    call: ClientCall,
    up: Upstream,
    headers: dict[str, str],
    betas: frozenset[str] = frozenset(),
) -> tuple[Outgoing, tuple[SanitizeWarning, ...]]:
    """The client's own request for an upstream of the same API, and what
    was dropped from it (``anthropic-beta`` features not in ``betas``)."""
    model = up.model or call.model
    forwarded = {h: headers[h] for h in _FORWARDED.get(call.api, ()) if h in headers}
    forwarded, dropped = allowed_betas(forwarded, betas)
    if call.api == "google-generative-ai":
        path = f"/{call.door.version}/models/{_path_model(model)}:{_GEMINI_METHODS[call.stream]}"
        return Outgoing(path + ("?alt=sse" if call.sse else ""), forwarded, call.raw), dropped
    body = call.raw
    if model != call.model:
        body = dumps_bytes({**call.body, "model": model})
    return Outgoing(_PATHS[call.api], forwarded, body), dropped


#: What to do about an ``item_reference`` the gateway cannot resolve.
_ITEM_HINT = (
    "; an item_reference resolves only to an answer this gateway kept (gateway.store set, "
    "the request's store not false): otherwise send the items whole (store: false)"
)


class ClientRequest:
    """A client call and its canonical form, decoded on first need.

    ``foreign_thinking`` and ``server_tools`` are the route's and the
    configuration's choices for reasoning an upstream cannot verify and for
    server tools it cannot run, ``anthropic_betas`` the beta features a
    same-API upstream may be asked for; ``warnings`` holds, by upstream name, what its
    translated request lost on the way. ``stored`` is the stored response a Responses call continues
    (``previous_response_id``): when the gateway holds it, the request is
    expanded to its history and translated even for a Responses upstream;
    otherwise only a Responses upstream gets the id (it may hold it).
    """

    def __init__(
        self,
        call: ClientCall,
        path: str,
        headers: dict[str, str],
        *,
        stored: ResponseHistory | None = None,
        foreign_thinking: ForeignThinking = DEFAULT_FOREIGN_THINKING,
        server_tools: str = "warn",
        anthropic_betas: frozenset[str] = frozenset(DEFAULT_ANTHROPIC_BETAS),
    ) -> None:
        self.call = call
        self._betas = anthropic_betas
        self._path = path
        self._headers = headers
        self._foreign_thinking = foreign_thinking
        self._server_tools = server_tools
        self._stored = stored
        self._canonical: Request | None = None
        self.warnings: dict[str, tuple[SanitizeWarning, ...]] = {}

    @property
    def expanded(self) -> bool:
        """Whether the gateway itself holds the history the call continues."""
        return isinstance(self._stored, Prefetched) and self._stored.holds_any

    def canonical(self) -> Request:
        if self._canonical is None:
            try:
                self._canonical = decode_request(
                    self.call.body,
                    self.call.api,
                    path=self._path,
                    headers=self._headers,
                    store=self._stored,
                )
            except UnknownResponse as exc:
                raise GatewayError(
                    400, str(exc), param="previous_response_id", code="previous_response_not_found"
                ) from None
            except UnknownItem as exc:
                raise GatewayError(400, f"{exc}{_ITEM_HINT}", param=f"{exc.where}.id") from None
            except ValueError as exc:
                message = str(exc)
                field = message.split(":", 1)[0] if ":" in message else None
                raise GatewayError(400, message, param=field) from None
        return self._canonical

    def for_upstream(self, up: Upstream) -> Outgoing:
        """What ``up`` is sent: the same request, or the translated one."""
        if up.api == self.call.api and not self.expanded and not _placed(up):
            outgoing, self.warnings[up.name] = same_api_request(
                self.call, up, self._headers, self._betas
            )
            return outgoing
        if up.api != self.call.api and "conversation" in self.call.body:
            raise GatewayError(
                400,
                "conversation: stored conversations are not kept by this gateway; "
                "send the history, or previous_response_id",
                param="conversation",
            )
        request, model = self.canonical(), up.model or self.call.model
        if request.model != model or request.stream != self.call.stream:
            request = dataclasses.replace(request, model=model, stream=self.call.stream)
        if up.api == "google-generative-ai":
            _path_model(request.model or "")
        if up.api == "openai-responses":
            request = with_reasoning_continuity(request)
        try:
            wire = encode_request(
                request,
                up.api,
                provider=up.provider,
                foreign_thinking=self._foreign_thinking,
                server_tools=self._server_tools,
                host_params=dict(up.host_params),
            )
        except ValueError as exc:  # the request cannot be said in the upstream's API
            raise GatewayError(400, str(exc)) from None
        self.warnings[up.name] = wire.warnings
        return Outgoing(wire.path, dict(wire.headers), dumps_bytes(wire.body))
