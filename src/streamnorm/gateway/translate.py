"""The cross-API route's stream: upstream bytes ─► normalize ─► encode for the client.

``Translate`` is a relay (see ``relay.py``): the upstream API's normalizer
turns each chunk into canonical events, and the client API's stream encoder
turns those into the bytes the client's own server would have sent. Both are
sans-IO and linear in the bytes, so the relay is too.

The normalizer records the *upstream's* api, host and model on the message,
so that the encoder wraps the upstream's opaque reasoning state in an
envelope naming its issuer (encoding.md §9); the client gets back the model
name it asked for. ``response_id`` and ``request`` (the client's body) go to
the encoder: a Responses client gets the gateway's own id and an object that
echoes its request.

A Gemini client that streams without ``alt=sse`` expects one JSON array
rather than SSE; ``JsonArray`` reframes the encoder's events into it.

The usage of the upstream's first chunk is handed to the encoder before that
chunk's content (Gemini reports the prompt's count on every chunk, after its
parts): an Anthropic client then reads the input count in ``message_start``,
which goes out with the first chunk's content, no later.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..apis import resolve_api
from ..encoder import StreamEncoder
from ..events import Error, Event, Start, UsageUpdate
from ..messages import AssistantMessage
from ..normalizer import DEFAULT_MAX_STREAM_BYTES, StreamNormalizer
from ..sse import SSEDecoder
from .relay import settle

__all__ = ["JsonArray", "Translate"]


def usage_first(events: list[Event]) -> list[Event]:
    """``events`` with a copy of their last usage right after their ``Start``:
    usage is a whole snapshot, so reading it early changes no total."""
    usage = [e for e in events if isinstance(e, UsageUpdate)]
    starts = [i for i, e in enumerate(events) if isinstance(e, Start)]
    if not usage or not starts:
        return events
    at = starts[0] + 1
    return [*events[:at], usage[-1], *events[at:]]


class JsonArray:
    """SSE events in, the elements of one streamed JSON array out (``[{…},\\r\\n{…}]``)."""

    def __init__(self) -> None:
        self._sse = SSEDecoder()
        self._open = False

    def feed(self, data: bytes) -> bytes:
        out = bytearray()
        for event in self._sse.feed(data):
            out += b",\r\n" if self._open else b"["
            out += event.data.encode()
            self._open = True
        return bytes(out)

    def close(self) -> bytes:
        return self.feed(b"\n\n") + (b"]" if self._open else b"[]")


class Translate:
    """Relay an upstream of one API to a client of another."""

    def __init__(
        self,
        upstream_api: str,
        client_api: str,
        *,
        upstream_model: str,
        client_model: str,
        provider: str | None,
        sse: bool,
        created: int,
        response_id: str | None = None,
        request: Mapping[str, Any] | None = None,
        max_stream_bytes: int | None = DEFAULT_MAX_STREAM_BYTES,
    ) -> None:
        self._normalizer = StreamNormalizer(
            resolve_api(upstream_api),
            model=upstream_model,
            provider=provider,
            max_stream_bytes=max_stream_bytes,
        )
        self._encoder = StreamEncoder(
            client_api,
            model=client_model,
            created=created,
            provider=provider,
            response_id=response_id,
            request=request,
        )
        self._array = JsonArray() if client_api == "google-generative-ai" and not sse else None
        self._started = False  # whether the upstream's Start has been read
        self._opened = False  # whether the client's opening event has gone out

    @property
    def message(self) -> AssistantMessage:
        return self._normalizer.message

    @property
    def closed(self) -> bool:
        return self._normalizer.closed

    def _encode(self, events: list[Event]) -> bytes:
        feed = self._encoder.feed
        # (One event, most reads at a model's pace: no list, no join.)
        out = feed(events[0]) if len(events) == 1 else b"".join([feed(e) for e in events])
        return self._array.feed(out) if self._array is not None and out else out

    def feed(self, chunk: bytes) -> bytes:
        # The opening event as soon as the upstream has named its answer,
        # not with the first content: the client's first byte does not wait
        # (Gemini, the one JSON-array client, has no opening event).
        events = settle(self._normalizer, self._normalizer.feed(chunk))
        if self._opened:
            return self._encode(events)
        if not self._started:  # (the read that holds the Start: its usage first)
            self._started = any(type(event) is Start for event in events)
            events = usage_first(events)
        out = self._encode(events)
        # (Whatever an encoder writes first begins with its opening event.)
        out += self._encoder.opening()
        self._opened = bool(out)
        return out

    def close(self) -> bytes:
        return self._end(self._normalizer.flush())

    def fail(self, message: str) -> bytes:
        # The normalizer ends a stream cut short with Error(kind="truncated"),
        # which the encoder writes as the client API's in-stream error: with
        # ``message``, which says why it was cut.
        events = self._normalizer.flush()
        last = events[-1] if events else None
        if isinstance(last, Error) and last.kind == "truncated":
            events[-1] = dataclasses.replace(last, reason=message)
        return self._end(events)

    def _end(self, events: list[Event]) -> bytes:
        out = self._encode(events)
        tail = self._encoder.close()
        if self._array is None:
            return out + tail
        return out + self._array.feed(tail) + self._array.close()
