"""Relays: what becomes of the upstream's stream bytes on the way to the client.

A relay is sans-IO, like the normalizer it wraps: ``feed(chunk)`` returns
the bytes to send for an upstream chunk, ``close()`` the bytes that end a
stream the upstream ended, ``fail(message)`` the bytes that end a stream
whose upstream connection broke (the client API's in-stream error event).
``message`` is the canonical message so far, for accounting.

``Passthrough`` serves a client of the upstream's own API: the bytes go out
unchanged and a normalizer reads them on the side, only to count tokens and
to notice a stream that stopped early. Its cost is the normalizer's: linear
in the bytes. Its memory does not grow with the answer: the normalizer keeps
no content (``keep_content``) unless the message is wanted whole (a stored
Responses answer, content in the log).

The side reading waits for a reason: a chunk that holds none of the API's
closing words (``Decoder.closing_words``: every event that can end or fail
the stream holds one) is forwarded at once and set aside unread; what was
set aside is read with the next chunk that holds one, once
:data:`ASIDE_BYTES` wait, before the stream's byte limit could be crossed,
and at the end. At a model's pace each event is a chunk of its own, and
parsing them one wakeup at a time cost more than relaying them (a parse
each, on cold caches); a batch is parsed in one pass. The client gets the
same bytes at the same moments, and the end is noticed in the chunk that
holds it. Noticed later than the bytes: bytes of no API in the middle of a
stream, one event past a nesting or size limit.
"""

from __future__ import annotations

from typing import Protocol

from ..apis import resolve_api
from ..events import Error, Event
from ..framing import FramingError, JSONValuesFramer, sniff_framing
from ..messages import AssistantMessage
from ..normalizer import DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_STREAM_BYTES, StreamNormalizer
from ..providers import DECODERS
from .errors import stream_error

__all__ = ["Passthrough", "Relay", "settle"]

#: The first bytes of an upstream body that tell its framing.
_SNIFF = 4096
#: Most bytes a passthrough sets aside unread (per stream).
ASIDE_BYTES = 16 * 1024


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


def settle(normalizer: StreamNormalizer, events: list[Event]) -> list[Event]:
    """``events``, then the terminal ones if the answer is whole though its
    bytes have not ended (``StreamNormalizer.settled``: a Gemini stream after
    its finish reason), so that the relay is closed and the upstream is not
    waited for: it may hold its connection open until its ``timeout``."""
    return events + normalizer.flush() if normalizer.settled else events


class Passthrough:
    """Forward the upstream's bytes unchanged; normalize them on the side.

    The bytes are held back until they look like a stream of this API (its
    framing, or the normalizer's first event): a 200 whose body is no stream of this API (an HTML
    error page, garbage) or is one JSON error object reaches the client as
    its API's error event instead, as on a translated route. When the
    upstream ends without its terminal signal, its connection breaks, or the
    stream crosses a limit, the client gets that error event after the bytes
    so far, so that it never takes a cut stream for a whole one; a stream
    that had ended gets nothing more.
    """

    def __init__(
        self,
        api: str,
        *,
        model: str | None,
        provider: str | None,
        sse: bool,
        max_stream_bytes: int | None = DEFAULT_MAX_STREAM_BYTES,
        keep_content: bool = False,
    ) -> None:
        self._api = api
        self._array = api == "google-generative-ai" and not sse
        self._limit = max_stream_bytes
        self._closing = DECODERS[resolve_api(api)].closing_words
        # How far before a chunk a word cut across chunks may start.
        self._reach = max(map(len, self._closing), default=1) - 1
        self._normalizer = StreamNormalizer(
            resolve_api(api),
            model=model,
            provider=provider,
            max_stream_bytes=max_stream_bytes,
            keep_content=keep_content,
        )
        # A Gemini array ends at its closing bracket, whatever the connection does.
        self._brackets = JSONValuesFramer(DEFAULT_MAX_EVENT_BYTES) if self._array else None
        self._held = bytearray()
        self._aside = bytearray()
        self._total = 0  # bytes fed: read or set aside
        self._recognised = False
        self._refused = False
        self._events = 0
        self._tail = b""
        self._last_sent = b""
        self._sent = False

    @property
    def message(self) -> AssistantMessage:
        """The message of the bytes so far (those set aside are read first:
        the events they complete are the client's already, as bytes)."""
        if self._aside and not self._normalizer.closed:
            self._normalizer.feed(self._take_aside())
        return self._normalizer.message

    @property
    def closed(self) -> bool:
        """Whether the stream is over for the client (its end read, or refused)."""
        ended = self._brackets is not None and self._brackets.ended
        return self._refused or ended or self._normalizer.closed

    def feed(self, chunk: bytes) -> bytes:
        if self.closed:
            return b""
        self._total += len(chunk)
        if self._recognised and self._set_aside(chunk):
            return self._forward(chunk)
        # (Not set aside: with those that were, if any.)
        events = self._normalizer.feed(self._take_aside() if self._aside else chunk)
        # (A Gemini array ends at its bracket: the client gets the upstream's own.)
        return self._after(events if self._array else settle(self._normalizer, events), chunk)

    def _set_aside(self, chunk: bytes) -> bool:
        """Whether ``chunk`` can wait unread (module docstring): it holds no
        closing word, a word cut across chunks included, and neither bound
        is near. The chunk joins what waits either way (when it cannot wait,
        the caller reads them all). One search of the chunk and of a word's
        length before it, per word."""
        words = self._closing
        if not words:
            return False
        aside = self._aside
        start = max(len(aside) - self._reach, 0)
        aside += chunk
        if len(aside) >= ASIDE_BYTES or (self._limit is not None and self._total > self._limit):
            return False
        # (A find per word: a fraction of one regex's scan of the chunk.)
        return all(aside.find(word, start) < 0 for word in words)

    def _take_aside(self) -> bytes:
        data = bytes(self._aside)
        self._aside.clear()
        return data

    def close(self) -> bytes:
        return self._end("the upstream stream ended before its last event")

    def fail(self, message: str) -> bytes:
        return self._end(message)

    def _end(self, message: str) -> bytes:
        """The last bytes: the held ones, then the error event unless the
        stream had ended (a Gemini array cut after its last element gets its
        ``]``)."""
        if self._refused or self._normalizer.closed:
            return b""
        events = self._normalizer.feed(self._take_aside())
        if self._normalizer.closed:  # the end was among the bytes set aside
            return self._after(events, b"")
        events += self._normalizer.flush()
        out = self._after(events, b"")
        if self._refused or (self._brackets is not None and self._brackets.ended):
            return out
        if any(isinstance(e, Error) for e in events):
            return out + self._error(message)
        return out + (b"]" if self._array and self._last_sent != b"]" else b"")

    def _after(self, events: list[Event], chunk: bytes) -> bytes:
        """What the client gets for ``chunk`` given the events it completed."""
        if not self._recognised:
            self._held += chunk
            expected = "json-array" if self._array else "sse"
            head = bytes(self._held[:_SNIFF])  # bounded: each chunk costs the same
            framing = sniff_framing(head, bool(events) or len(self._held) >= _SNIFF)
            if not events and framing != expected:
                return b""
            self._recognised = True
            if framing != expected or _failed_at_once(events):
                self._refused = True
                return self._error(_not_a_stream(events))
            chunk, self._held = bytes(self._held), bytearray()
        out = self._forward(chunk)
        error = next((e for e in events if isinstance(e, Error) and e.kind == "limit"), None)
        return out + self._error(error.reason) if error is not None else out

    def _forward(self, chunk: bytes) -> bytes:
        # SSE events so far, for the Responses error's sequence_number; a
        # blank line split across two chunks is counted once.
        self._events += chunk.count(b"\n\n") + (self._tail[-1:] == b"\n" and chunk[:1] == b"\n")
        self._tail = (self._tail + chunk)[-4:]
        self._last_sent = chunk.rstrip()[-1:] or self._last_sent
        self._sent = self._sent or bool(chunk)
        if self._brackets is not None and chunk:
            try:
                self._brackets.feed(chunk)
            except FramingError:  # the normalizer reports it; the end is not known
                self._brackets = None
        return chunk

    def _error(self, message: str) -> bytes:
        if self._array:
            body = stream_error(self._api, 502, message).removeprefix(b"data: ").rstrip()
            return (b",\r\n" + body + b"]") if self._sent else (b"[" + body + b"]")
        # An event cut short is ended first, so that the error is read as its own event.
        cut = self._sent and not self._tail.endswith((b"\n\n", b"\r\r", b"\r\n\r\n"))
        error = stream_error(self._api, 502, message, sequence_number=self._events)
        return b"\n\n" + error if cut else error


def _failed_at_once(events: list[Event]) -> bool:
    """Whether the first events read are the stream's failure: bytes of no API."""
    return len(events) == 2 and isinstance(events[1], Error) and events[1].kind == "protocol"


def _not_a_stream(events: list[Event]) -> str:
    """The client's message for an upstream 200 whose body was no stream
    (an error body's own message where it was one)."""
    error = events[-1] if events else None
    if isinstance(error, Error) and error.kind == "upstream" and len(events) == 2:
        return error.reason
    return "the upstream answered 200 with a body that is not a stream of its API"
