"""Relays: what becomes of the upstream's stream bytes on the way to the client.

A relay is sans-IO, like the normalizer it wraps: ``feed(chunk)`` returns
the bytes to send for an upstream chunk, ``close()`` the bytes that end a
stream the upstream ended, ``fail(message)`` the bytes that end a stream
whose upstream connection broke (the client API's in-stream error event).
``message`` is the canonical message so far, for accounting.

``Passthrough`` serves a client of the upstream's own API: the bytes go out
unchanged and a normalizer reads them on the side, only to count tokens and
to notice a stream that stopped early. Its cost is the normalizer's: linear
in the bytes.
"""

from __future__ import annotations

from typing import Protocol

from ..apis import resolve_api
from ..events import Error
from ..messages import AssistantMessage
from ..normalizer import StreamNormalizer
from .errors import stream_error

__all__ = ["Passthrough", "Relay"]


class Relay(Protocol):
    def feed(self, chunk: bytes) -> bytes: ...

    def close(self) -> bytes: ...

    def fail(self, message: str) -> bytes: ...

    @property
    def message(self) -> AssistantMessage: ...

    @property
    def closed(self) -> bool:
        """Whether the stream's terminal event has been read."""
        ...


class Passthrough:
    """Forward the upstream's bytes unchanged; normalize them on the side.

    When the upstream ends without its terminal signal, or its connection
    breaks, the client gets its API's error event after the bytes so far,
    so that it never takes a cut stream for a whole one.
    """

    def __init__(self, api: str, *, model: str | None, provider: str | None, sse: bool) -> None:
        self._api = api
        self._sse = sse
        self._normalizer = StreamNormalizer(resolve_api(api), model=model, provider=provider)
        self._events = 0
        self._last = 0
        self._sent = False

    @property
    def message(self) -> AssistantMessage:
        return self._normalizer.message

    @property
    def closed(self) -> bool:
        return self._normalizer.closed

    def feed(self, chunk: bytes) -> bytes:
        self._normalizer.feed(chunk)
        # SSE events so far, for the Responses error's sequence_number; a
        # blank line split across two chunks is counted once.
        self._events += chunk.count(b"\n\n") + (self._last == 10 and chunk[:1] == b"\n")
        self._last = chunk[-1] if chunk else self._last
        self._sent = self._sent or bool(chunk)
        return chunk

    def close(self) -> bytes:
        end = [e for e in self._normalizer.flush() if isinstance(e, Error)]
        if end and end[0].kind == "truncated":
            return self._error("the upstream stream ended before its last event")
        return b""

    def fail(self, message: str) -> bytes:
        if not self._normalizer.closed:
            self._normalizer.flush()
        return self._error(message)

    def _error(self, message: str) -> bytes:
        if self._api == "google-generative-ai" and not self._sse:
            body = stream_error(self._api, 502, message).removeprefix(b"data: ").rstrip()
            return (b",\r\n" + body + b"]") if self._sent else (b"[" + body + b"]")
        return stream_error(self._api, 502, message, sequence_number=self._events)
