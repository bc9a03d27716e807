"""Framings: how one wire API cuts its byte stream into payloads, sans-IO.

A *framer* turns the bytes of a response body, cut into chunks anywhere, into
`RawEvent` tuples ``(event_name, data_bytes, id, retry)`` — the shape
`SSEDecoder.feed_raw` returns — for the normalizer to parse and hand to a
provider decoder. Every framer has the same three methods::

    framer = FRAMERS[name](max_event_bytes)
    events = framer.feed(chunk)      # -> list[RawEvent], the events this chunk completed
    events = framer.flush()          # end of input -> list[RawEvent]
    last = framer.pending()          # after flush: the unterminated last event, or None;
                                     # it counts only when its data is complete JSON

A framer raises `FramingError` when the bytes break its framing (``kind``
``"protocol"``), end inside a frame (``"truncated"``), carry an error frame
(``"upstream"``) or exceed the limit (``"limit"``, ``code="max_event_bytes"``);
the error carries the events completed before that point. For any split of
the same bytes, the concatenation of what a framer returns is the same.

Each provider decoder names its framing in its ``framing`` class attribute
(and any other it may arrive in, in ``alt_framings``); the normalizer picks the framing from
the first bytes with `sniff_framing` and builds the framer from `FRAMERS`.
To plug in a framing, add its factory to `FRAMERS` under the name `sniff_framing`
returns for it and name it in the decoders' ``framing``:

=============== ==================================== ==============================
name            first bytes                          framer
=============== ==================================== ==============================
``sse``         ``data:``, ``event:``, ``:`` …       `SSEFramer` (WHATWG, sse.py)
``ndjson``      ``{`` and a first line ending ``}``  `NDJSONFramer`: one JSON per line
``json-array``  ``[``                                `JSONValuesFramer` (array items)
``json``        ``{`` on a line of its own           `JSONValuesFramer` (a JSON body)
``eventstream`` a binary prelude whose CRC32 holds   `EventStreamFramer` (eventstream.py)
=============== ==================================== ==============================

``json`` (a pretty-printed JSON document, as error bodies are) is read by no
decoder: its one value is an error body or a non-stream response. Bytes that
match no framing (an HTML page, plain text) are refused from the first line,
without reading the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, Protocol

from .eventstream import EventStreamDecoder, EventStreamError, looks_like_event_stream
from .sse import RawEvent, SSEDecoder, SSELimitError

__all__ = [
    "FRAMERS",
    "EventStreamFramer",
    "Framer",
    "FramingError",
    "JSONValuesFramer",
    "NDJSONFramer",
    "SSEFramer",
    "blank_prefix",
    "first_line",
    "sniff_framing",
]


class Framer(Protocol):
    """What the normalizer needs of a framing (see the module docstring)."""

    def feed(self, chunk: bytes) -> list[RawEvent]: ...

    def flush(self) -> list[RawEvent]: ...

    def pending(self) -> RawEvent | None: ...


class FramingError(Exception):
    """The bytes broke the framing. ``kind`` is an ``Error.kind``
    (``protocol``, ``truncated``, ``upstream``, ``limit``), ``code`` the
    limit's name or the provider's error type, ``events`` what was complete
    before. The framer is unusable afterwards."""

    def __init__(
        self,
        kind: str,
        reason: str,
        code: str | None = None,
        events: list[RawEvent] | None = None,
    ) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.code = code
        self.events: list[RawEvent] = [] if events is None else events


def _limit(max_bytes: int, what: str, events: list[RawEvent]) -> FramingError:
    return FramingError(
        "limit", f"{what} exceeded max_event_bytes ({max_bytes} bytes)", "max_event_bytes", events
    )


# ----------------------------------------------------------------------
# SSE


class SSEFramer:
    """`SSEDecoder` seen as a framer: its limit error becomes a `FramingError`."""

    def __init__(self, max_event_bytes: int) -> None:
        self._sse = SSEDecoder(max_line_bytes=max_event_bytes)
        self._max = max_event_bytes

    def feed(self, chunk: bytes) -> list[RawEvent]:
        try:
            return self._sse.feed_raw(chunk)
        except SSELimitError as exc:
            what = "a line" if exc.part == "line" else "the data of one event"
            raise _limit(self._max, what, exc.events) from None

    def flush(self) -> list[RawEvent]:
        # Per the spec, flush completes nothing; pending() is the last block.
        try:
            self._sse.flush()
        except SSELimitError as exc:
            what = "a line" if exc.part == "line" else "the data of one event"
            raise _limit(self._max, what, exc.events) from None
        return []

    def pending(self) -> RawEvent | None:
        event = self._sse.pending()
        if event is None:
            return None
        return (event.event, event.data.encode(), event.id, event.retry)


# ----------------------------------------------------------------------
# AWS event stream


class EventStreamFramer:
    """`EventStreamDecoder.feed_raw` seen as a framer: frames as events named
    by their ``:event-type`` (exception and error frames ``exception:<type>``,
    ``error:<code>``, for the Bedrock decoders); its errors become
    `FramingError`s (a frame cut by the end of input: ``truncated``)."""

    def __init__(self, max_event_bytes: int) -> None:
        self._frames = EventStreamDecoder(max_frame_bytes=max_event_bytes)

    def feed(self, chunk: bytes) -> list[RawEvent]:
        try:
            return self._frames.feed_raw(chunk)
        except EventStreamError as exc:
            raise _frame_error(exc) from None

    def flush(self) -> list[RawEvent]:
        try:
            self._frames.flush()
        except EventStreamError as exc:
            raise _frame_error(exc) from None
        return []

    def pending(self) -> RawEvent | None:
        return None


def _frame_error(exc: EventStreamError) -> FramingError:
    events: list[RawEvent] = exc.messages  # type: ignore[assignment]  # feed_raw's
    if exc.kind == "limit":
        return FramingError("limit", f"{exc} (max_event_bytes)", "max_event_bytes", events)
    return FramingError(exc.kind, str(exc), None, events)


# ----------------------------------------------------------------------
# NDJSON


_BOM: Final = b"\xef\xbb\xbf"


class NDJSONFramer:
    """Newline-delimited JSON (Ollama): each non-blank line is one event.

    Lines end with LF (a CR before it is dropped); JSON text cannot hold a raw
    LF, so a line is complete exactly when its LF arrives. Lines are split in C
    (`bytes.split`); only the unterminated last line is kept, and it may not
    grow past ``max_event_bytes``. Cost O(len(chunk)) per chunk.
    """

    def __init__(self, max_event_bytes: int) -> None:
        self._max = max_event_bytes
        self._tail = bytearray()
        self._first = True

    def feed(self, chunk: bytes) -> list[RawEvent]:
        if self._first:
            if len(self._tail) + len(chunk) < len(_BOM) and _BOM.startswith(self._tail + chunk):
                self._tail += chunk
                return []
            chunk = (bytes(self._tail) + chunk).removeprefix(_BOM)
            self._tail.clear()
            self._first = False
        if b"\n" not in chunk:
            self._grow(chunk, [])
            return []
        lines = chunk.split(b"\n")
        lines[0] = bytes(self._tail) + lines[0]
        self._tail.clear()
        events: list[RawEvent] = []
        for line in lines[:-1]:
            if len(line) > self._max:
                raise _limit(self._max, "a line", events)
            if line and not line.isspace():
                events.append(_line_event(line))
        self._grow(lines[-1], events)
        return events

    def _grow(self, piece: bytes, events: list[RawEvent]) -> None:
        if len(self._tail) + len(piece) > self._max:
            raise _limit(self._max, "a line", events)
        self._tail += piece

    def flush(self) -> list[RawEvent]:
        return []

    def pending(self) -> RawEvent | None:
        line = bytes(self._tail).removeprefix(_BOM) if self._first else bytes(self._tail)
        return _line_event(line) if line and not line.isspace() else None


def _line_event(line: bytes) -> RawEvent:
    return ("message", line.removesuffix(b"\r"), "", None)


# ----------------------------------------------------------------------
# JSON values: the items of one top-level array, or a sequence of documents


#: Inside a string, the next byte that matters.
_IN_STRING: Final = re.compile(rb'["\\]')
#: A run of bytes that are no bracket, and of whole strings (possessive: no
#: backtracking, so linear); it stops at a bracket, a string not yet ended,
#: or a stray backslash.
_RUN: Final = re.compile(rb'(?:[^"\[\]{}\\]++|"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+")*+')
#: The end of a bare scalar (number, true, false, null).
_SCALAR_END: Final = re.compile(rb"[\s,\]\[{}\"]")
#: Bytes no JSON value starts with: an item begun there would be empty and
#: consume nothing, so the scan would never move on (they are an error).
_NO_VALUE_START: Final = frozenset(b",:]}")
_WS: Final = re.compile(rb"[ \t\r\n]*")

# Scanner states.
_BEFORE_ARRAY, _BEFORE_ITEM, _IN_ITEM, _AFTER_ITEM, _AFTER_ARRAY = range(5)


class JSONValuesFramer:
    """The items of a streamed JSON array (Gemini without ``alt=sse``:
    ``[{…},\\r\\n{…}]``), each an event as soon as its closing bracket
    arrives; or, with ``array=False``, consecutive top-level JSON values (a
    pretty-printed body).

    The scanner never parses: it finds where an item ends by tracking nesting
    and strings, jumping with one regular expression from one quote or
    bracket to the next (in C), so the Python work is per structural
    character, not per byte, and each byte is scanned once. Only the item
    being read is kept; one longer than ``max_event_bytes`` is refused while
    it arrives. Bad structure between items (a missing comma, bytes after the
    closing bracket) is a ``protocol`` `FramingError`.
    """

    def __init__(self, max_event_bytes: int, *, array: bool = True) -> None:
        self._max = max_event_bytes
        self._array = array
        self._buf = bytearray()
        self._pos = 0  # scan position in _buf
        self._start = 0  # start of the current item in _buf
        self._state = _BEFORE_ARRAY if array else _BEFORE_ITEM
        self._depth = 0
        self._in_string = False
        self._scalar = False
        self._bom = True

    @property
    def ended(self) -> bool:
        """Whether the array's closing bracket has been read."""
        return self._state == _AFTER_ARRAY

    def feed(self, chunk: bytes) -> list[RawEvent]:
        buf = self._buf
        buf += chunk
        if self._bom:
            if len(buf) < len(_BOM) and _BOM.startswith(buf):
                return []
            if buf.startswith(_BOM):
                del buf[: len(_BOM)]
            self._bom = False
        events: list[RawEvent] = []
        try:
            self._scan(events)
        except FramingError as exc:
            exc.events = events
            raise
        # Drop what is consumed: O(the unfinished rest), which is within this chunk
        # unless an item is still open (then nothing before its start is kept).
        keep = self._start if self._state == _IN_ITEM else self._pos
        if keep:
            del buf[:keep]
            self._pos -= keep
            self._start -= keep
        if self._state == _IN_ITEM and len(buf) - self._start > self._max:
            raise _limit(self._max, "one JSON item", events)
        return events

    def _scan(self, events: list[RawEvent]) -> None:
        buf = self._buf
        end = len(buf)
        while self._pos < end:
            state = self._state
            if state == _IN_ITEM:
                if not self._scan_item(end):
                    return
                if self._pos - self._start > self._max:
                    raise _limit(self._max, "one JSON item", events)
                events.append(("message", bytes(buf[self._start : self._pos]), "", None))
                self._state = _AFTER_ITEM
                continue
            self._pos = _WS.match(buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos >= end:
                return
            self._between(buf[self._pos])

    def _between(self, byte: int) -> None:
        """One structural byte outside any item."""
        state = self._state
        if (state == _BEFORE_ARRAY and byte == 0x5B) or (
            state == _AFTER_ITEM and self._array and byte == 0x2C
        ):  # [
            self._state = _BEFORE_ITEM
            self._pos += 1
        elif self._array and byte == 0x5D and state in (_AFTER_ITEM, _BEFORE_ITEM):  # ]
            self._state = _AFTER_ARRAY
            self._pos += 1
        elif byte not in _NO_VALUE_START and (
            state == _BEFORE_ITEM or (state == _AFTER_ITEM and not self._array)
        ):
            self._state = _IN_ITEM
            self._start = self._pos
            self._depth = 0
            self._in_string = byte == 0x22  # a string item: read as a string from here
            self._scalar = byte not in b'{["'
            self._pos += self._in_string
        else:
            # Only the byte itself: what follows it may not have arrived yet,
            # and the reason must not depend on where the chunks end.
            where = "after the array" if state == _AFTER_ARRAY else "between JSON items"
            raise FramingError("protocol", f"unexpected byte {where}: {bytes([byte])!r}")

    def _scan_item(self, end: int) -> bool:
        """Advance through the current item; True when it ended at ``_pos``."""
        buf = self._buf
        pos = self._pos
        if self._scalar:
            match = _SCALAR_END.search(buf, pos)
            self._pos = match.start() if match else end
            return match is not None
        while True:
            if self._in_string:
                match = _IN_STRING.search(buf, pos)
                if match is None:
                    self._pos = end
                    return False
                pos = match.start()
                if buf[pos] == 0x5C:  # backslash: skip the escaped byte
                    if pos + 1 >= end:
                        self._pos = pos  # rescan the backslash when more arrives
                        return False
                    pos += 2
                    continue
                self._in_string = False
                pos += 1
                if self._depth == 0:
                    self._pos = pos
                    return True
                continue
            # Skip, in C, every byte that is no bracket and every whole string.
            pos = _RUN.match(buf, pos).end()  # type: ignore[union-attr]
            if pos >= end:
                self._pos = end
                return False
            byte = buf[pos]
            pos += 1
            if byte == 0x22:  # a string that has not ended yet: read it as it arrives
                self._in_string = True
            elif byte in b"[{":
                self._depth += 1
            elif byte != 0x5C:  # a backslash outside a string is no structure
                self._depth -= 1
                if self._depth <= 0:
                    self._pos = pos
                    return True

    def flush(self) -> list[RawEvent]:
        if self._state == _IN_ITEM and self._scalar and not self._in_string:
            # A bare scalar ended by the end of input.
            self._state = _AFTER_ITEM
            return [("message", bytes(self._buf[self._start :]), "", None)]
        return []

    def pending(self) -> RawEvent | None:
        if self._state == _IN_ITEM:
            return ("message", bytes(self._buf[self._start :]), "", None)
        return None


# ----------------------------------------------------------------------
# Registry and detection


#: Framing name → factory taking ``max_event_bytes``.
FRAMERS: dict[str, Callable[[int], Framer]] = {
    "sse": SSEFramer,
    "eventstream": EventStreamFramer,
    "ndjson": NDJSONFramer,
    "json-array": JSONValuesFramer,
    "json": lambda max_event_bytes: JSONValuesFramer(max_event_bytes, array=False),
}

#: How an SSE stream starts: a field or a comment.
_SSE_FIELDS: Final = (b"data", b"event", b"id", b"retry")
_LEADING: Final = b" \t\r\n"
#: Bytes of an AWS event-stream prelude: total length, headers length, CRC32.
_PRELUDE: Final = 12
#: How much of a first line that is not a stream an error quotes.
QUOTED: Final = 80


def sniff_framing(head: bytes, final: bool) -> str | None:
    """The framing of a body from its first bytes, or None when more are needed.

    ``final`` says no more bytes will come (or enough have been seen). Besides
    the names of `FRAMERS` it answers ``"eventstream"`` for an AWS binary
    prelude whose CRC32 holds, ``"binary"`` for other binary data and
    ``"text"`` for anything else that is not a stream (an HTML page). Looks at
    the first line at most.
    """
    if head[:1] and head[0] < 0x09:  # a prelude's length starts with a zero byte
        prelude = looks_like_event_stream(head[:_PRELUDE])
        if prelude is None:  # at the end of input: a prelude cut short
            return "eventstream" if final else None
        return "eventstream" if prelude else "binary"
    body = head.removeprefix(_BOM)
    start = blank_prefix(body)
    if start == len(body) or not body[start:].strip():
        return "sse" if final and body else None  # blank lines are valid SSE
    newline = body.find(b"\n", start)
    line = body[start:] if newline < 0 else body[start:newline]
    complete = newline >= 0 or final
    first = line.lstrip(b" \t")[:1]
    if first == b"[":
        return "json-array"
    if first == b"{":
        if not complete:
            return None
        return "ndjson" if newline < 0 or line.rstrip().endswith(b"}") else "json"
    if _sse_line(line, complete=complete) or (complete and not first):
        return "sse"
    if not complete:
        # A field name cut short, or not a stream: said once QUOTED bytes are
        # in, so that the error, which quotes them, is the same however the
        # bytes arrive.
        return None if len(line) < QUOTED else "text"
    return "sse" if newline < 0 and _sse_prefix(line) else "text"  # cut in the first name


def blank_prefix(data: bytes) -> int:
    """Where the lines of ``data`` that hold only whitespace end: in every
    framing such lines before the first payload mean nothing."""
    rest = len(data) - len(data.lstrip(_LEADING))
    return max(data.rfind(b"\n", 0, rest), data.rfind(b"\r", 0, rest)) + 1


def _sse_line(line: bytes, *, complete: bool) -> bool:
    """Whether a line is an SSE comment or one of the fields streams send
    (a field without a colon only once the line is whole)."""
    if line.startswith(b":"):
        return True
    name, colon, _ = line.partition(b":")
    return name in _SSE_FIELDS and (bool(colon) or (complete and line == name))


def _sse_prefix(line: bytes) -> bool:
    """Whether more bytes could still make ``line`` an SSE field."""
    return any(field.startswith(line) for field in _SSE_FIELDS)


def first_line(head: bytes) -> bytes:
    """What an error quotes of a body that is not a stream: its first line,
    at most `QUOTED` bytes (binary data: the prelude's bytes)."""
    if head[:1] and head[0] < 0x09:
        return head[:_PRELUDE]
    body = head.removeprefix(_BOM)
    return body[blank_prefix(body) :].split(b"\n", 1)[0][:QUOTED]
