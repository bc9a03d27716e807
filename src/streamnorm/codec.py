"""The other direction: canonical requests to each api's HTTP request, client
requests back to canonical ones, and non-streaming responses to the message
the streaming form gives (DESIGN.md §5a; reference requests.md).

Each api's codec lives in ``providers/<api>/request.py`` and
``providers/<api>/response.py``; this module resolves the api name and, for
encoding, runs the history through ``sanitize_messages_for_target`` first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from ._json import loads
from .apis import ApiName, resolve_api, resolve_spoken_api
from .events import Event
from .hosts.wire import host_for, place
from .messages import AssistantMessage, Message, ToolCallBlock, ToolResultMessage
from .providers.anthropic import request as anthropic_request
from .providers.anthropic import response as anthropic_response
from .providers.bedrock_converse import request as converse_request
from .providers.bedrock_converse import response as converse_response
from .providers.bedrock_invoke import request as invoke_request
from .providers.bedrock_invoke import response as invoke_response
from .providers.codecbase import MediaTypes, check_parts
from .providers.google import request as google_request
from .providers.google import response as google_response
from .providers.openai_completions import request as completions_request
from .providers.openai_completions import response as completions_response
from .providers.openai_responses import request as responses_request
from .providers.openai_responses import response as responses_response
from .providers.server_tools import translate_server_tools
from .request import Request, WireRequest
from .sanitize import (
    DEFAULT_FOREIGN_THINKING,
    ForeignThinking,
    SanitizeWarning,
    sanitize_with_warnings,
)
from .sanitize.target import provider_in_history

__all__ = [
    "KEPT_HEADERS",
    "ResponseHistory",
    "UnknownItem",
    "UnknownResponse",
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

    @property
    def MEDIA(self) -> MediaTypes: ...  # the modules' constant: what the api takes


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
    "bedrock-converse-stream": converse_request,
    "bedrock-invoke-stream": invoke_request,
}

#: Request apis whose host is known without being named, and the api whose
#: rules ``sanitize`` applies to their history (Bedrock serves Claude's
#: signatures and ids, in Converse's or Anthropic's own shape).
_BEDROCK_APIS = {
    "bedrock-converse-stream": "anthropic-messages",
    "bedrock-invoke-stream": "anthropic-messages",
}

_RESPONSES: dict[str, _ResponseCodec] = {
    "anthropic-messages": anthropic_response,
    "openai-responses": responses_response,
    "openai-completions": completions_response,
    "google-generative-ai": google_response,
    "bedrock-converse-stream": converse_response,
    "bedrock-invoke-stream": invoke_response,
}


def _request_api(api: ApiName) -> str:
    """The request api ``api`` names: one of the four, or Bedrock's
    Converse or Invoke (their bodies are written and read too)."""
    name = resolve_api(api)
    return name if name in _BEDROCK_APIS else resolve_spoken_api(name)


def _codec(api: ApiName) -> _RequestCodec:
    return _REQUESTS[_request_api(api)]


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
    request: Request,
    api: ApiName,
    *,
    provider: str | None = None,
    sanitize: bool = True,
    foreign_thinking: ForeignThinking = DEFAULT_FOREIGN_THINKING,
    server_tools: str = "warn",
    host_params: Mapping[str, str] | None = None,
) -> WireRequest:
    """``request`` as ``api``'s HTTP request (path, non-secret headers, body).

    ``provider`` names the host the request goes to; without it, the host of
    the newest assistant turn of the same api and model is taken (a history
    read from a host goes back to it), else the host is unknown. A host of
    the host table (``streamnorm.hosts``: a provider such as ``vertex``,
    ``azure``, ``bedrock``, or a table name such as ``vertex-anthropic``)
    gets its own path and body (``host_params`` fills its path's
    placeholders, Azure's ``api_version``). With
    ``sanitize`` the history first goes through ``sanitize_messages_for_target``:
    another issuer's reasoning becomes text as ``foreign_thinking`` says
    (``"tagged"``, ``"text"`` or ``"drop"``), its signatures are removed, ids
    rewritten, results paired. Another API's server tools become ``api``'s own
    where it has their like (``providers.server_tools``); the others are
    dropped with a warning (``server_tools="warn"``) or refused with
    ``ValueError`` (``"refuse"``). ``WireRequest.warnings`` names every block
    that lost opaque state on the way, and the tools and settings the api
    could not take as given.
    """
    name = _request_api(api)
    codec = _codec(name)
    part_warnings = check_parts(request.messages, name, codec.MEDIA)
    request, tool_warnings = translate_server_tools(request, name, server_tools)
    messages = list(request.messages)
    if provider is None:
        provider = provider_in_history(messages, name, request.model)
    if provider is None and name in _BEDROCK_APIS:
        provider = "bedrock"
    host = host_for(provider, name)
    if host is not None:
        provider = host.provider
    history_warnings: tuple[SanitizeWarning, ...] = ()
    if sanitize:
        messages = _bedrock_turns(messages, name)
        messages, history_warnings = sanitize_with_warnings(
            messages,
            provider,
            request.model,
            api=_BEDROCK_APIS.get(name, name),
            foreign_thinking=foreign_thinking,
        )
    wire = codec.encode_request(request, messages, provider)
    warnings = (
        *part_warnings,
        *tool_warnings,
        *history_warnings,
        *wire.warnings,
        *_settings_dropped(request, wire),
    )
    own = (request.headers or {}).get(name)
    if own:
        wire = replace(wire, headers={**wire.headers, **own})
    if host is not None:
        wire = place(wire, host, request.model, request.stream, host_params)
    return replace(wire, warnings=warnings) if warnings else wire


def _bedrock_turns(messages: list[Message], api: str) -> list[Message]:
    """For a Bedrock api, the turns Bedrock issued through Converse or
    Invoke labelled with the api whose rules ``sanitize`` applies: their
    signatures are the same model's on the same host, valid in either."""
    target = _BEDROCK_APIS.get(api)
    if target is None:
        return messages
    return [
        replace(m, api=target) if isinstance(m, AssistantMessage) and m.api in _BEDROCK_APIS else m
        for m in messages
    ]


def _settings_dropped(request: Request, wire: WireRequest) -> tuple[SanitizeWarning, ...]:
    """Reasoning the request asked for that the body does not carry: Anthropic
    turns thinking off for a tool loop whose last assistant turn does not
    start with thinking (it refuses the request otherwise)."""
    reasoning = request.reasoning
    if wire.path != "/v1/messages" or reasoning is None or "thinking" in wire.body:
        return ()
    if not reasoning.enabled or reasoning.effort == "none":
        return ()
    turns = [i for i, m in enumerate(request.messages) if isinstance(m, AssistantMessage)]
    return (
        SanitizeWarning(
            turns[-1] if turns else len(request.messages) - 1,
            None,
            "thinking_off",
            "thinking turned off: the tool loop's last assistant turn does not start "
            "with reasoning this model can verify",
        ),
    )


class ResponseHistory(Protocol):
    """Where stored Responses live (``streamnorm.gateway.state`` has two)."""

    def history(self, response_id: str) -> Sequence[Message] | None:
        """The conversation up to and including that response; None: unknown."""
        ...

    def item(self, item_id: str) -> Mapping[str, Any] | None:
        """A stored response's output item, as the response gave it, by its
        ``id`` (what an ``item_reference`` names); None: unknown."""
        ...


class UnknownResponse(ValueError):
    """``previous_response_id`` names no stored response (unknown, expired or deleted)."""

    def __init__(self, response_id: str) -> None:
        super().__init__(
            f"previous_response_id: no stored response {response_id!r} "
            "(unknown, expired or deleted)"
        )
        self.response_id = response_id


class UnknownItem(ValueError):
    """An ``item_reference`` names no stored item (unknown, expired or deleted)."""

    def __init__(self, item_id: str, where: str) -> None:
        super().__init__(f"{where}.id: no stored item {item_id!r} (unknown, expired or deleted)")
        self.item_id, self.where = item_id, where


def _is_reference(item: Any) -> bool:
    return isinstance(item, Mapping) and item.get("type") == "item_reference"


def _referenced(item: Any, where: str, store: ResponseHistory) -> Any:
    """``item`` itself, or the stored item an ``item_reference`` names."""
    if not _is_reference(item):
        return item
    item_id = item.get("id")
    if not isinstance(item_id, str) or not item_id:
        raise ValueError(f"{where}.id: a non-empty string is required")
    found = store.item(item_id)
    if found is None:
        raise UnknownItem(item_id, where)
    return found


def _with_items(body: Mapping[str, Any], store: ResponseHistory | None) -> Mapping[str, Any]:
    """A Responses body whose ``item_reference`` inputs are the items they name.

    Without a store the references stay as they are (opaque blocks only a
    Responses upstream that holds the items can resolve). Cost: one pass over
    ``input`` and one store lookup per reference.
    """
    items = body.get("input")
    if store is None or not isinstance(items, list) or not any(map(_is_reference, items)):
        return body
    resolved = [_referenced(item, f"input[{i}]", store) for i, item in enumerate(items)]
    return {**body, "input": resolved}


def _expand(request: Request, body: Mapping[str, Any], store: ResponseHistory | None) -> Request:
    """A Responses request with ``previous_response_id`` as the whole history
    it stands for: the stored turns, then the request's own items."""
    previous = body.get("previous_response_id")
    if previous is None:
        return request
    if not isinstance(previous, str) or not previous:
        raise ValueError("previous_response_id: a non-empty string is required")
    if store is None:
        raise ValueError(
            "previous_response_id: the request continues a stored response, and no "
            "response store was given to expand it (decode_request(..., store=...))"
        )
    history = store.history(previous)
    if history is None:
        raise UnknownResponse(previous)
    own = dict((request.extra or {}).get("openai-responses", {}))
    own.pop("previous_response_id", None)
    extra = {**(request.extra or {}), "openai-responses": own}
    return replace(request, messages=_named_results((*history, *request.messages)), extra=extra)


def _named_results(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Tool results given the name of their call (a Responses
    ``function_call_output`` has none; Gemini's ``functionResponse`` needs it)."""
    names = {
        b.id: b.name
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolCallBlock)
    }
    return tuple(
        replace(m, tool_name=names[m.tool_call_id])
        if isinstance(m, ToolResultMessage) and not m.tool_name and m.tool_call_id in names
        else m
        for m in messages
    )


def decode_request(
    body: bytes | str | Mapping[str, Any],
    api: ApiName,
    *,
    path: str | None = None,
    headers: Mapping[str, str] | None = None,
    provider: str | None = None,
    store: ResponseHistory | None = None,
) -> Request:
    """A client's request body of ``api`` as a canonical request.

    ``path`` gives Gemini's model and streaming method (and the model of a
    Vertex or Bedrock Claude body); ``provider`` names the host the client
    spoke to, recorded as the issuer of the turns that carry no envelope.
    Of ``headers``, the few that change what the body means
    (:data:`KEPT_HEADERS`) go to ``Request.headers``; nothing else is read
    (credentials in particular). Raises ``ValueError`` naming the field of a
    bad body.

    A Responses body with ``previous_response_id`` continues a stored
    response: ``store`` gives its history, which becomes the start of
    ``messages``. Without a store that is a ``ValueError`` naming the field
    (decoding on would lose the conversation); an id the store does not
    hold is :class:`UnknownResponse`. Its ``item_reference`` inputs become
    the stored items they name (:class:`UnknownItem` for one the store does
    not hold); without a store they stay opaque blocks of the Responses API.
    """
    name = _request_api(api)
    data = _json_body(body, "body")
    if name == "openai-responses":
        data = _with_items(data, store)
    request = _codec(name).decode_request(data, path=path, provider=provider)
    if name == "openai-responses":
        request = _expand(request, data, store)
    kept = {
        key.lower(): value
        for key, value in (headers or {}).items()
        if key.lower() in KEPT_HEADERS.get(name, ()) and isinstance(value, str)
    }
    if kept:  # (the request is new and nobody else's: set in place, not copied)
        object.__setattr__(request, "headers", {name: kept})
    return request


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
    """A non-streaming response (or error body) of ``api`` (one of the four,
    or Bedrock's Converse or Invoke) as the message the
    streaming form of the same answer gives; an error body gives a message
    with ``stop_reason="error"`` and ``error`` set. ``model`` (the model the
    caller asked for) and ``provider`` (the host) are as for
    ``StreamNormalizer``."""
    codec = _RESPONSES[_request_api(api)]
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
    codec = _RESPONSES[_request_api(api)]
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
