"""The other direction: canonical requests to each api's HTTP request, client
requests back to canonical ones, and non-streaming responses to the message
the streaming form gives (DESIGN.md §5a; reference requests.md).

Each api's codec lives in ``providers/<api>/request.py`` and
``providers/<api>/response.py``; this module resolves the api name and, for
encoding, runs the history through ``sanitize_messages_for_target`` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from ._json import loads
from .apis import ApiName, resolve_spoken_api
from .events import Event
from .messages import AssistantMessage, Message
from .providers.anthropic import request as anthropic_request
from .providers.anthropic import response as anthropic_response
from .providers.google import request as google_request
from .providers.google import response as google_response
from .providers.openai_completions import request as completions_request
from .providers.openai_completions import response as completions_response
from .providers.openai_responses import request as responses_request
from .providers.openai_responses import response as responses_response
from .request import Request, WireRequest
from .sanitize import sanitize_messages_for_target

__all__ = [
    "KEPT_HEADERS",
    "decode_request",
    "decode_response",
    "detect_response_api",
    "encode_request",
    "response_api_of",
    "response_events",
    "validate_request_body",
]


#: Request headers that change what a body means, by api: kept by
#: ``decode_request`` and sent again to the same api. Never a credential.
KEPT_HEADERS: dict[str, tuple[str, ...]] = {
    "anthropic-messages": ("anthropic-version", "anthropic-beta"),
    "openai-responses": ("openai-beta",),
    "openai-completions": ("openai-beta",),
}


class _RequestCodec(Protocol):
    def encode_request(
        self, request: Request, messages: list[Message], provider: str | None = None
    ) -> WireRequest: ...

    def decode_request(
        self, body: Mapping[str, Any], *, path: str | None = None, provider: str | None = None
    ) -> Request: ...

    def validate_body(self, body: Mapping[str, Any]) -> list[str]: ...


class _ResponseCodec(Protocol):
    def decode_response(
        self,
        body: Mapping[str, Any],
        *,
        model: str | None = None,
        provider: str | None = None,
        events: list[Event] | None = None,
    ) -> AssistantMessage: ...


_REQUESTS: dict[str, _RequestCodec] = {
    "anthropic-messages": anthropic_request,
    "openai-responses": responses_request,
    "openai-completions": completions_request,
    "google-generative-ai": google_request,
}

_RESPONSES: dict[str, _ResponseCodec] = {
    "anthropic-messages": anthropic_response,
    "openai-responses": responses_response,
    "openai-completions": completions_response,
    "google-generative-ai": google_response,
}


def _codec(api: ApiName) -> _RequestCodec:
    return _REQUESTS[resolve_spoken_api(api)]


def _json_body(body: bytes | str | Mapping[str, Any], what: str) -> Mapping[str, Any]:
    if isinstance(body, (bytes, bytearray, str)):
        try:
            value = loads(body)
        except ValueError as exc:
            raise ValueError(f"{what}: not JSON ({exc})") from None
    else:
        value = body
    if not isinstance(value, Mapping):
        raise ValueError(f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


def encode_request(
    request: Request, api: ApiName, *, provider: str | None = None, sanitize: bool = True
) -> WireRequest:
    """``request`` as ``api``'s HTTP request (path, non-secret headers, body).

    With ``sanitize`` the history first goes through
    ``sanitize_messages_for_target(messages, provider, request.model, api=api)``:
    another issuer's signatures are demoted, ids rewritten, results paired.
    """
    name = resolve_spoken_api(api)
    messages = list(request.messages)
    if sanitize:
        messages = sanitize_messages_for_target(messages, provider, request.model, api=name)
    wire = _codec(name).encode_request(request, messages, provider)
    own = (request.headers or {}).get(name)
    if not own:
        return wire
    return replace(wire, headers={**wire.headers, **own})


def decode_request(
    body: bytes | str | Mapping[str, Any],
    api: ApiName,
    *,
    path: str | None = None,
    headers: Mapping[str, str] | None = None,
    provider: str | None = None,
) -> Request:
    """A client's request body of ``api`` as a canonical request.

    ``path`` gives Gemini's model and streaming method (and the model of a
    Vertex or Bedrock Claude body); ``provider`` names the host the client
    spoke to, recorded as the issuer of the turns that carry no envelope.
    Of ``headers``, the few that change what the body means
    (:data:`KEPT_HEADERS`) go to ``Request.headers``; nothing else is read
    (credentials in particular). Raises ``ValueError`` naming the field of a
    bad body.
    """
    name = resolve_spoken_api(api)
    request = _codec(name).decode_request(_json_body(body, "body"), path=path, provider=provider)
    kept = {
        key.lower(): value
        for key, value in (headers or {}).items()
        if key.lower() in KEPT_HEADERS.get(name, ()) and isinstance(value, str)
    }
    return replace(request, headers={name: kept}) if kept else request


def validate_request_body(body: Mapping[str, Any], api: ApiName) -> list[str]:
    """Problems ``api`` would reject in a request body (requests.md §9), as
    far as its structural rules go; empty when none is broken."""
    return _codec(api).validate_body(body)


def decode_response(
    body: bytes | str | Mapping[str, Any],
    api: ApiName,
    *,
    model: str | None = None,
    provider: str | None = None,
) -> AssistantMessage:
    """A non-streaming response (or error body) of ``api`` as the message the
    streaming form of the same answer gives; an error body gives a message
    with ``stop_reason="error"`` and ``error`` set. ``model`` (the model the
    caller asked for) and ``provider`` (the host) are as for
    ``StreamNormalizer``."""
    codec = _RESPONSES[resolve_spoken_api(api)]
    return codec.decode_response(_json_body(body, "response"), model=model, provider=provider)


def response_events(
    body: bytes | str | Mapping[str, Any],
    api: ApiName,
    *,
    model: str | None = None,
    provider: str | None = None,
) -> list[Event]:
    """The canonical events of a non-streaming response: those its streaming
    form gives, from ``Start`` to the terminal event whose message is
    :func:`decode_response`'s."""
    events: list[Event] = []
    codec = _RESPONSES[resolve_spoken_api(api)]
    codec.decode_response(
        _json_body(body, "response"), model=model, provider=provider, events=events
    )
    return events


def detect_response_api(body: bytes | str | Mapping[str, Any]) -> str | None:
    """The api of a non-streaming JSON response body (its bytes, its text,
    or the parsed object), or None when ``body`` is not one (a stream, or
    anything else). Error bodies of unknown origin give ``"error"``."""
    if isinstance(body, Mapping):
        return response_api_of(body)
    if not isinstance(body, (bytes, str)):
        raise TypeError(
            f"body must be bytes, str or a parsed JSON object, not {type(body).__name__}"
        )
    text = body.lstrip()
    if text[:1] not in (b"{", "{"):
        return None
    try:
        value = loads(text)
    except ValueError:
        return None
    return response_api_of(value) if isinstance(value, dict) else None


def response_api_of(value: Mapping[str, Any]) -> str | None:
    """The api whose non-streaming response (or error body) ``value`` is
    shaped as, ``"error"`` for an error body of unknown origin, else None."""
    kind = value.get("type")
    if kind == "message" or (kind == "error" and "error" in value):
        return "anthropic-messages"
    obj = value.get("object")
    if obj in ("response", "response.compaction"):
        return "openai-responses"
    if obj in ("chat.completion", "text_completion") or "choices" in value:
        return "openai-completions"
    if "candidates" in value or "usageMetadata" in value or "promptFeedback" in value:
        return "google-generative-ai"
    if "error" in value:
        return "error"
    return None
