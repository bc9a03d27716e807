"""AWS ``application/vnd.amazon.eventstream`` framing, sans-IO.

AWS streaming APIs (Bedrock ``ConverseStream`` and
``InvokeModelWithResponseStream`` among them) send a body of binary frames
("messages"), each laid out as::

    total length   uint32, big-endian: the whole frame, these 4 bytes included
    headers length uint32, big-endian
    prelude CRC    uint32: CRC32 of the 8 bytes above
    headers        headers-length bytes of (name, type, value) entries
    payload        total - headers - 16 bytes
    message CRC    uint32: CRC32 of everything before it, the prelude included

A header is a name (1-byte length, UTF-8), a type byte and a value:
0 true and 1 false (no value bytes), 2 int8, 3 int16, 4 int32, 5 int64,
6 bytes (2-byte length), 7 UTF-8 string (2-byte length), 8 timestamp (int64
milliseconds since the epoch), 9 UUID (16 bytes). Integers are big-endian and
signed. ``:message-type`` says what a frame is: ``event`` (``:event-type``
names it), ``exception`` (``:exception-type`` names a modelled error; the
payload is JSON with a ``message``) or ``error`` (``:error-code`` and
``:error-message`` headers, for errors outside the model).

`EventStreamDecoder` turns the bytes, cut into chunks anywhere, into
`EventStreamMessage` values; `EventStreamDecoder.feed_raw` gives the same
frames in the shape of `streamnorm.sse.RawEvent`, for a JSON decoder to read.
For any split of the same bytes into chunks, the concatenation of what `feed`
returns (and of what an `EventStreamError` carries) is the same.

Every frame is checked before anything of it is returned: the prelude CRC
before its lengths are trusted, then that the lengths are possible (a frame
is at least 16 bytes and holds its headers), then the size limit, before any
byte after the prelude is kept, so that memory stays bounded by the limit
whatever the lengths claim; and the message CRC and the headers once the
frame is whole. A frame that fails any check raises `EventStreamError` with
the frames before it; the end of the input inside a frame is reported by
`EventStreamDecoder.flush`.

Cost: O(len(chunk)) per `feed`. A frame's bytes are copied into the buffer
once at most (only a frame cut by a chunk boundary is buffered, and it is
not scanned again until enough bytes for it have arrived), checksummed once
(``binascii.crc32``, in C) and sliced once. Header blocks are parsed in
Python, so the decoder remembers a few dozen small ones: a stream repeats
the same three headers on every frame of a type, and those then cost a
dictionary lookup.
"""

from __future__ import annotations

import struct
import uuid
from binascii import crc32
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, NoReturn, TypeAlias

from ._json import dumps_compact
from .sse import RawEvent

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "EventStreamDecoder",
    "EventStreamError",
    "EventStreamMessage",
    "HeaderValue",
    "Timestamp",
    "looks_like_event_stream",
]


class Timestamp(int):
    """A timestamp header's value (type 8): milliseconds since the Unix epoch.

    An ``int``, so that it compares with plain integers; a type of its own so
    that a timestamp can be told from an int64 header (type 5).
    """

    __slots__ = ()


#: What a header value can be: ``bool`` (types 0, 1), ``int`` (2-5),
#: ``bytes`` (6), ``str`` (7), `Timestamp` (8) or ``uuid.UUID`` (9).
HeaderValue: TypeAlias = "bool | int | bytes | str | uuid.UUID"

DEFAULT_MAX_FRAME_BYTES: Final = 16 * 1024 * 1024

#: Prelude (12 bytes) plus message CRC (4): the smallest possible frame.
_OVERHEAD: Final = 16
_PRELUDE: Final = struct.Struct(">III")
_U32: Final = struct.Struct(">I")
_U16: Final = struct.Struct(">H")
#: What the format allows for one frame's headers (the AWS SDKs enforce it).
_MAX_HEADERS: Final = 128 * 1024
#: Up to _CACHE header blocks of at most _CACHED_BLOCK bytes are remembered.
_CACHE: Final = 64
_CACHED_BLOCK: Final = 1024

# Fixed-size header values: type byte -> (struct, size).
_FIXED: Final[dict[int, struct.Struct]] = {
    2: struct.Struct(">b"),
    3: struct.Struct(">h"),
    4: struct.Struct(">i"),
    5: struct.Struct(">q"),
    8: struct.Struct(">q"),
}


@dataclass(frozen=True, slots=True)
class EventStreamMessage:
    """One frame: its headers (read-only, in wire order) and its payload."""

    headers: Mapping[str, HeaderValue]
    payload: bytes

    @property
    def message_type(self) -> str:
        """``:message-type`` (``event``, ``exception`` or ``error``); ``event``
        when the header is absent or not a string, as the AWS SDKs read it."""
        value = self.headers.get(":message-type")
        return value if isinstance(value, str) else "event"

    @property
    def name(self) -> str:
        """What the frame is called: ``:event-type`` of an event,
        ``:exception-type`` of an exception, ``:error-code`` of an error
        (``""`` when that header is missing)."""
        value = self.headers.get(_NAME_HEADER.get(self.message_type, ":event-type"))
        return value if isinstance(value, str) else ""


_NAME_HEADER: Final = {
    "event": ":event-type",
    "exception": ":exception-type",
    "error": ":error-code",
}

ErrorKind: TypeAlias = Literal["protocol", "limit", "truncated"]


class EventStreamError(Exception):
    """The bytes are not (or no longer) a valid event stream.

    `kind` is ``"protocol"`` (a CRC does not match, a length is impossible,
    the headers are malformed), ``"limit"`` (a frame is longer than
    ``max_frame_bytes``; it was refused from its prelude, nothing of it
    buffered) or ``"truncated"`` (`EventStreamDecoder.flush`: the input ended
    inside a frame). `offset` is where the offending frame starts in the
    stream. `messages` holds what the failing call had completed before that
    point, in order (`EventStreamMessage` values from `feed`, raw events from
    `feed_raw`), so that nothing before the bad frame is lost. The decoder is
    unusable afterwards: every later `feed` or `flush` raises again.
    """

    kind: ErrorKind
    detail: str
    offset: int
    messages: list[EventStreamMessage] | list[RawEvent]

    def __init__(
        self,
        kind: ErrorKind,
        detail: str,
        offset: int,
        messages: list[EventStreamMessage] | list[RawEvent] | None = None,
    ) -> None:
        super().__init__(f"{detail} (frame at byte {offset})")
        self.kind = kind
        self.detail = detail
        self.offset = offset
        self.messages = [] if messages is None else messages


class _Bad(Exception):
    """A frame failed a check (internal; becomes an `EventStreamError`)."""

    def __init__(self, kind: ErrorKind, detail: str, offset: int = 0) -> None:
        super().__init__(detail)
        self.kind: ErrorKind = kind
        self.detail = detail
        self.offset = offset


def looks_like_event_stream(head: bytes) -> bool | None:
    """Whether a body that starts with ``head`` is an event stream: True when
    its first 12 bytes are a prelude whose CRC matches, False when they cannot
    be, None while fewer than 12 bytes (and no other evidence) have arrived.

    Text streams (SSE, JSON, NDJSON) start with a printable byte or
    whitespace; a prelude starts with the high byte of a length, which is 0
    for any frame under 16 MiB, so one byte already rules most bodies out.
    """
    if head[:1] and head[0] > 0x08:
        return False
    if len(head) < 12:
        return None
    _, _, crc = _PRELUDE.unpack_from(head)
    return bool(crc32(head[:8]) == crc)


class EventStreamDecoder:
    """Incremental, sans-IO decoder of one ``application/vnd.amazon.eventstream``
    body.

    Call `feed` with each chunk as it arrives and `flush` once at the end.
    ``max_frame_bytes`` bounds the total length of one frame: besides the
    chunk being fed, the decoder keeps at most one partial frame within the
    limit and a few KB of remembered header blocks.
    """

    __slots__ = ("_buf", "_cache", "_error", "_max", "_need", "_offset")

    def __init__(self, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._max = max_frame_bytes
        self._buf = bytearray()  # the start of a frame that is not whole yet
        self._need = 0  # its total length, once its prelude has been checked
        self._offset = 0  # stream offset of _buf[0]
        # header block -> (headers, name, message type)
        self._cache: dict[bytes, tuple[Mapping[str, HeaderValue], str, str]] = {}
        self._error: EventStreamError | None = None

    @property
    def buffered(self) -> int:
        """Bytes of a frame that has not arrived whole yet."""
        return len(self._buf)

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        """The frames that ``chunk`` completes; raises `EventStreamError`."""
        frames, bad = self._frames(chunk)
        out = [EventStreamMessage(headers, payload) for headers, _, _, payload in frames]
        if bad is not None:
            self._fail(bad, out)
        return out

    def feed_raw(self, chunk: bytes) -> list[RawEvent]:
        """`feed`, each frame as ``(name, payload, message_type, None)``, the
        shape of `streamnorm.sse.RawEvent` with the message type in the place
        of the event id. ``name`` is as `EventStreamMessage.name` says, with
        ``message_type + ":"`` before it for frames that are not events
        (``exception:throttlingException``), a name no event type has.

        The payload is what a JSON decoder reads: an event's as sent; an
        exception's as sent when it is a JSON object, else ``{"message":
        <its text>}``; an error's (whose text travels in its ``:error-message``
        header) ``{"message": <that header>}``.
        """
        frames, bad = self._frames(chunk)
        out: list[RawEvent] = []
        for headers, name, kind, payload in frames:
            if kind == "event":
                out.append((name, payload, kind, None))
            else:
                out.append((f"{kind}:{name}", _error_payload(headers, kind, payload), kind, None))
        if bad is not None:
            self._fail(bad, out)
        return out

    def flush(self) -> None:
        """End of input: raises `EventStreamError` (``truncated``) when it
        ended inside a frame, or again the error that stopped the decoder."""
        if self._error is not None:
            raise self._error
        if self._buf:
            got, need = len(self._buf), self._need
            detail = (
                f"the stream ended inside a frame ({got} of its {need} bytes)"
                if need
                else f"the stream ended inside a frame's prelude ({got} of 12 bytes)"
            )
            self._fail(_Bad("truncated", detail, self._offset), [])

    # -- internals --------------------------------------------------------

    def _frames(self, chunk: bytes) -> tuple[list[_Frame], _Bad | None]:
        """The whole frames of the input so far, checked, and the check that
        failed (None if none did); the rest of a frame waits in _buf."""
        if self._error is not None:
            raise self._error
        buf = self._buf
        if buf:
            buf += chunk
            if len(buf) < max(self._need, 12):
                return [], None  # still not whole: O(len(chunk)), nothing rescanned
            data: bytes | bytearray = buf
        else:
            data = chunk
        frames: list[_Frame] = []
        bad: _Bad | None = None
        pos, end = 0, len(data)
        with memoryview(data) as view:
            try:
                while end - pos >= 12:
                    total = self._need or self._check_prelude(view, pos)
                    if end - pos < total:
                        self._need = total
                        break
                    self._need = 0
                    frames.append(self._frame(view, pos, total))
                    pos += total
            except _Bad as exc:
                bad = exc
                bad.offset = self._offset + pos
        if bad is not None:
            return frames, bad
        self._offset += pos
        if buf:
            del buf[:pos]  # (deleting the head of a bytearray is O(1) in CPython)
        elif pos < end:
            buf += chunk[pos:]
        return frames, None

    def _check_prelude(self, view: memoryview, pos: int) -> int:
        """The total length of the frame at ``pos`` once its prelude is
        trusted; raises `_Bad` before anything after the prelude is kept."""
        total, headers, crc = _PRELUDE.unpack_from(view, pos)
        if crc32(view[pos : pos + 8]) != crc:
            raise _Bad("protocol", "the prelude CRC does not match")
        if total < _OVERHEAD or headers > total - _OVERHEAD:
            raise _Bad(
                "protocol",
                f"impossible lengths: a frame of {total} bytes with {headers} bytes of headers",
            )
        if headers > _MAX_HEADERS:
            raise _Bad("protocol", f"{headers} bytes of headers (at most {_MAX_HEADERS} allowed)")
        if total > self._max:
            raise _Bad("limit", f"a frame of {total} bytes exceeds max_frame_bytes ({self._max})")
        return int(total)

    def _frame(self, view: memoryview, pos: int, total: int) -> _Frame:
        """The whole frame at ``pos``: message CRC, headers, payload."""
        last = pos + total - 4
        (crc,) = _U32.unpack_from(view, last)
        if crc32(view[pos:last]) != crc:
            raise _Bad("protocol", "the message CRC does not match")
        (length,) = _U32.unpack_from(view, pos + 4)
        start = pos + 12 + length
        block = view[pos + 12 : start].tobytes()
        known = self._cache.get(block)
        if known is None:
            known = _describe(_parse_headers(block))
            if len(block) <= _CACHED_BLOCK and len(self._cache) < _CACHE:
                self._cache[block] = known
        headers, name, kind = known
        return headers, name, kind, view[start:last].tobytes()

    def _fail(self, bad: _Bad, done: list[EventStreamMessage] | list[RawEvent]) -> NoReturn:
        self._buf = bytearray()
        self._need = 0
        self._error = EventStreamError(bad.kind, bad.detail, bad.offset, done)
        raise self._error


#: A checked frame: headers, name, message type, payload.
_Frame: TypeAlias = "tuple[Mapping[str, HeaderValue], str, str, bytes]"


def _describe(headers: dict[str, HeaderValue]) -> tuple[Mapping[str, HeaderValue], str, str]:
    """Headers (read-only), the frame's name and its message type."""
    kind = headers.get(":message-type")
    if not isinstance(kind, str):
        kind = "event"
    name = headers.get(_NAME_HEADER.get(kind, ":event-type"))
    return MappingProxyType(headers), name if isinstance(name, str) else "", kind


def _parse_headers(block: bytes) -> dict[str, HeaderValue]:
    """The header entries of one frame; raises `_Bad` for anything the format
    does not allow (an entry cut by the end of the block, an unknown type,
    invalid UTF-8, a name given twice). O(len(block))."""
    headers: dict[str, HeaderValue] = {}
    pos, end = 0, len(block)
    try:
        while pos < end:
            size = block[pos]
            name = block[pos + 1 : pos + 1 + size].decode("utf-8")
            pos += 1 + size
            if pos >= end:
                raise _Bad("protocol", f"header {name!r} has no value type")
            value, pos = _value(block, block[pos], pos + 1)
            if pos > end:
                raise _Bad("protocol", f"header {name!r} runs past the headers")
            if name in headers:
                raise _Bad("protocol", f"header {name!r} appears twice")
            headers[name] = value
    except UnicodeDecodeError as exc:
        raise _Bad("protocol", f"a header is not UTF-8: {exc}") from None
    except struct.error:
        raise _Bad("protocol", "a header runs past the headers") from None
    return headers


def _value(block: bytes, kind: int, pos: int) -> tuple[HeaderValue, int]:
    """The value of type ``kind`` at ``pos`` and where it ends (which may be
    past the block: the caller checks)."""
    if kind <= 1:
        return kind == 0, pos
    fixed = _FIXED.get(kind)
    if fixed is not None:
        (number,) = fixed.unpack_from(block, pos)
        return (Timestamp(number) if kind == 8 else int(number)), pos + fixed.size
    if kind in (6, 7):
        (size,) = _U16.unpack_from(block, pos)
        raw, end = block[pos + 2 : pos + 2 + size], pos + 2 + size
        if len(raw) < size:
            raise _Bad("protocol", "a header value runs past the headers")
        return (raw.decode("utf-8") if kind == 7 else raw), end
    if kind == 9:
        raw = block[pos : pos + 16]
        if len(raw) < 16:
            raise _Bad("protocol", "a header value runs past the headers")
        return uuid.UUID(bytes=raw), pos + 16
    raise _Bad("protocol", f"unknown header value type {kind}")


def _error_payload(headers: Mapping[str, HeaderValue], kind: str, payload: bytes) -> bytes:
    """The JSON object a decoder reads for an exception or error frame."""
    if kind == "exception" and payload.lstrip()[:1] == b"{":
        return payload
    if kind == "exception":
        text = payload.decode("utf-8", "replace")
    else:
        message = headers.get(":error-message")
        text = message if isinstance(message, str) else ""
    return dumps_compact({"message": text}).encode()
