"""Canonical events back into a wire API: ``StreamEncoder``, ``encode_stream``,
``aencode_stream`` and ``encode_response`` (DESIGN.md §5a).

The per-api writers live beside their decoders in
``providers/<api>/encoder.py``; this module picks one by api name.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from typing import Any

from .apis import ApiName, resolve_spoken_api
from .events import Event
from .messages import AssistantMessage
from .providers.anthropic import encoder as anthropic
from .providers.google import encoder as google
from .providers.openai_completions import encoder as completions
from .providers.openai_responses import encoder as responses
from .providers.wire_writer import ProviderMismatchWarning, WireEncoder

__all__ = [
    "ProviderMismatchWarning",
    "StreamEncoder",
    "aencode_stream",
    "encode_response",
    "encode_stream",
]

_ENCODERS: dict[str, type[WireEncoder]] = {
    "anthropic-messages": anthropic.AnthropicEncoder,
    "openai-responses": responses.ResponsesEncoder,
    "openai-completions": completions.CompletionsEncoder,
    "google-generative-ai": google.GoogleEncoder,
}

_RESPONSES: dict[str, Callable[..., dict[str, Any]]] = {
    "anthropic-messages": anthropic.encode_response,
    "openai-responses": responses.encode_response,
    "openai-completions": completions.encode_response,
    "google-generative-ai": google.encode_response,
}


class StreamEncoder:
    """Canonical events in, the SSE bytes of ``api`` out (sans-IO).

    ``feed(event)`` returns the bytes that event completes (maybe ``b""``);
    ``close()`` the bytes that end the stream — the target's own error event
    when no terminal event was fed. ``model`` is the model name the client
    sees (default: the stream's); ``response_id`` the response id (default:
    the source's when valid for ``api``, else one derived from it);
    ``created`` the Unix time the Chat and Responses bodies carry;
    ``provider`` the host the events came from, named as the issuer in the
    envelopes of another API's opaque state (so that sanitize returns that
    state to that host only); by default the provider the ``Start`` event
    names (the normalizer's, an adapter's, or the one its id proves). An
    explicit ``provider`` wins; when it differs from the events' a
    :class:`ProviderMismatchWarning` says so. ``request`` is the client's
    Responses request body, whose options (instructions, temperature, tools,
    store …) the Responses ``response`` object echoes (other APIs' streams
    carry none). Feeding after ``close()`` raises ``RuntimeError``.
    """

    __slots__ = ("_writer", "api", "feed")

    #: ``feed(event)``: the bytes ``event`` completes; the API's writer's own
    #: method, bound once (a call less on every event).
    feed: Callable[[Event], bytes]

    def __init__(
        self,
        api: ApiName,
        *,
        model: str | None = None,
        response_id: str | None = None,
        created: int = 0,
        provider: str | None = None,
        request: Mapping[str, Any] | None = None,
    ) -> None:
        self.api = resolve_spoken_api(api)
        echo = {"request": request} if self.api == "openai-responses" else {}
        self._writer = _ENCODERS[self.api](
            model=model, response_id=response_id, created=created, provider=provider, **echo
        )
        self.feed = self._writer.feed

    def opening(self) -> bytes:
        """The stream's opening event now, when ``api`` has one that needs no
        content (Anthropic's ``message_start``) and a ``Start`` has been fed;
        ``b""`` otherwise, or once it has gone out. Without this call it goes
        out with the first content. A relay calls it after the events of each
        upstream read, so that its client hears of the answer as soon as the
        upstream named it (a Chat stream's role-only first chunk), with the
        usage that read carried."""
        return self._writer.opening()

    def close(self) -> bytes:
        return self._writer.close()


def encode_stream(events: Iterable[Event], api: ApiName, **options: Any) -> Iterator[bytes]:
    """The bytes of ``events`` encoded for ``api``, one non-empty chunk per
    event that produced any. ``options`` are those of :class:`StreamEncoder`."""
    encoder = StreamEncoder(api, **options)
    for event in events:
        out = encoder.feed(event)
        if out:
            yield out
    out = encoder.close()
    if out:
        yield out


async def aencode_stream(
    events: AsyncIterable[Event] | Iterable[Event], api: ApiName, **options: Any
) -> AsyncIterator[bytes]:
    """Async twin of :func:`encode_stream`, over an async (or plain) iterable."""
    encoder = StreamEncoder(api, **options)
    if isinstance(events, AsyncIterable):
        async for event in events:
            out = encoder.feed(event)
            if out:
                yield out
    else:
        for event in events:
            out = encoder.feed(event)
            if out:
                yield out
    out = encoder.close()
    if out:
        yield out


def encode_response(
    message: AssistantMessage,
    api: ApiName,
    *,
    model: str | None = None,
    created: int = 0,
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The non-streaming response JSON of ``api`` for ``message``; ``request``
    as for :class:`StreamEncoder`."""
    target = resolve_spoken_api(api)
    if target == "openai-responses":
        return responses.encode_response(message, model=model, created=created, request=request)
    if target == "openai-completions":
        return _RESPONSES[target](message, model=model, created=created)
    return _RESPONSES[target](message, model=model)
