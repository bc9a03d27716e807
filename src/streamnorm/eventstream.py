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

Cost: O(len(chunk)) per `feed`. Only a frame cut by a chunk boundary is
buffered; it is not looked at again until enough bytes for it have arrived,
then joined with the chunk that brings them and scanned with it in one pass
(a chunk over 256 KiB is not copied: the frame is completed from its first
bytes and the rest read in place). So a byte is copied twice at most, and
each `feed` scans once. Each frame is checksummed twice (prelude and
message, in C: zlib-ng's CRC32 with the ``bedrock`` extra, which is 2.5x
faster on frame-sized input, else ``binascii.crc32``) and sliced into
header block and payload. Header blocks are parsed in Python, so the
decoder remembers a few dozen small ones: a stream repeats the same three
headers on every frame of a type, and an event's then costs one dictionary
lookup. `benchmarks/eventstream.py` has the figures.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, NoReturn, TypeAlias

from ._json import dumps_bytes, loads
from .sse import RawEvent

try:  # the same CRC32, 2.5x faster on frame-sized input (the ``bedrock`` extra)
    from zlib_ng.zlib_ng import crc32
except ImportError:  # pragma: no cover - exercised by a test that hides zlib_ng
    from binascii import crc32

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
#: A message CRC and the prelude of the frame after it.
_NEXT: Final = struct.Struct(">IIII")
#: What the format allows for one frame's headers (the AWS SDKs enforce it).
_MAX_HEADERS: Final = 128 * 1024
#: Up to _CACHE header blocks of at most _CACHED_BLOCK bytes are remembered.
_CACHE: Final = 64
_CACHED_BLOCK: Final = 1024
#: A chunk up to this long is joined to the frame it completes and scanned
#: with it in one pass; a longer one is read in place, not copied.
_JOIN: Final = 256 * 1024

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

    __slots__ = ("_buf", "_cache", "_error", "_events", "_max", "_need", "_offset")

    def __init__(self, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._max = max_frame_bytes
        self._buf = bytearray()  # the start of a frame that is not whole yet
        self._need = 0  # its total length, once its prelude has been checked
        self._offset = 0  # stream offset of _buf[0]
        self._cache: dict[bytes, _Known] = {}  # header block -> what it says
        self._events: dict[bytes, str] = {}  # the same, for an event: its name
        self._error: EventStreamError | None = None

    @property
    def buffered(self) -> int:
        """Bytes of a frame that has not arrived whole yet."""
        return len(self._buf)

    def feed(self, chunk: bytes) -> list[EventStreamMessage]:
        """The frames that ``chunk`` completes; raises `EventStreamError`."""
        out: list[EventStreamMessage] = []
        _, bad = self._frames(chunk, out)
        if bad is not None:
            self._fail(bad, out)
        return out

    def feed_raw(self, chunk: bytes) -> list[RawEvent]:
        """`feed`, each frame as ``(name, payload, message_type, None)``, the
        shape of `streamnorm.sse.RawEvent` with the message type in the place
        of the event id. ``name`` is as `EventStreamMessage.name` says, with
        ``message_type + ":"`` before it for frames that are not events
        (``exception:throttlingException``), a name no event type has.

        The payload is what a JSON decoder reads: an event's as sent; for an
        exception or an error, the error body ``{"error": {"type": <its
        name>, "message": <its text>, …}}``, with the fields of an
        exception's JSON payload, or its text as the message; an error's
        text is its ``:error-message`` header.
        """
        out, bad = self._frames(chunk, None)
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
            if not self._offset and looks_like_event_stream(bytes(self._buf)) is False:
                self._fail(_Bad("protocol", "the input is not an AWS event stream"), [])
            detail = (
                f"the stream ended inside a frame ({got} of its {need} bytes)"
                if need
                else f"the stream ended inside a frame's prelude ({got} of 12 bytes)"
            )
            self._fail(_Bad("truncated", detail, self._offset), [])

    # -- internals --------------------------------------------------------

    def _frames(
        self, chunk: bytes, messages: list[EventStreamMessage] | None
    ) -> tuple[list[RawEvent], _Bad | None]:
        """The whole frames of the input so far, checked, as `feed_raw` gives
        them (and as `EventStreamMessage` values into ``messages`` if given),
        and the check that failed (None if none did).

        The start of an unfinished frame waits in _buf, not looked at again
        until enough bytes for it have arrived (`_wait`); then it is joined
        with the chunk that completes it and the two are scanned as one. So
        a byte is copied into _buf once at most and out of it once, and each
        call scans once: O(len(chunk)) plus the frame it completes."""
        if self._error is not None:
            raise self._error
        frames: list[RawEvent] = []
        data, pos, base = chunk, 0, self._offset
        if self._buf:
            try:
                if self._wait(chunk):
                    return frames, None
            except _Bad as exc:
                exc.offset = self._offset
                return frames, exc
            data, pos = self._join(chunk)
            if pos:  # a long chunk: its first frame was completed apart
                end, bad = self._scan(data, 0, base, frames, messages)
                if bad is not None:
                    return frames, bad
                data, base = chunk, base + end - pos
        end, bad = self._scan(data, pos, base, frames, messages)
        if bad is None:
            self._offset = base + end
            self._buf += data[end:]  # one frame at most, within the limit (or < 12 bytes)
        return frames, bad

    def _join(self, chunk: bytes) -> tuple[bytes, int]:
        """The frame begun in _buf, now whole, and what ``chunk`` brings
        after it, as one block to scan; empties _buf. A chunk longer than
        _JOIN is not copied: the block is then the frame alone, and the
        second value says where in ``chunk`` the frame ended (0 otherwise)."""
        buf, self._buf = self._buf, bytearray()
        if len(chunk) <= _JOIN:
            return b"".join((buf, chunk)), 0
        take = self._need - len(buf)
        return b"".join((buf, chunk[:take])), take

    def _wait(self, chunk: bytes) -> bool:
        """Whether the frame begun in _buf is still not whole with ``chunk``;
        if so, ``chunk`` joins it in _buf. Checks its prelude as soon as that
        is whole (raising `_Bad`), before more than 12 bytes are kept."""
        buf = self._buf
        if not self._need:  # the prelude itself is not whole yet
            if len(buf) + len(chunk) < 12:
                buf += chunk
                return True
            prelude = bytes(buf) + chunk[: 12 - len(buf)]
            _check_prelude(prelude, 0, self._max)
            self._need = _U32.unpack_from(prelude)[0]
        if len(buf) + len(chunk) < self._need:
            buf += chunk
            return True
        return False

    def _scan(
        self,
        data: bytes,
        pos: int,
        base: int,
        frames: list[RawEvent],
        messages: list[EventStreamMessage] | None,
    ) -> tuple[int, _Bad | None]:
        """Check and cut the whole frames of ``data`` from ``pos`` on into
        ``frames`` (see `_frames`); returns where the first unfinished frame
        starts and the check that failed, whose offset is ``base`` (the
        stream offset of ``data[0]``) plus where it is in ``data``.

        The hot loop: per frame, two CRCs, three slices, one ``unpack`` and a
        dictionary lookup of the header block, all in C. The one ``unpack``
        reads a frame's message CRC together with the next frame's prelude,
        which follows it."""
        unpack, word, limit = _NEXT.unpack_from, _U32.unpack_from, self._max
        events, append = self._events.get, frames.append
        end = len(data)
        self._need = 0
        if end - pos < 12:
            return pos, None
        total, length, crc = _PRELUDE.unpack_from(data, pos)
        try:
            while True:
                if crc32(data[pos : pos + 8]) != crc or not 16 + length <= total <= limit:
                    _check_prelude(data, pos, limit)  # raises
                stop = pos + total
                if stop > end:
                    self._need = total  # the prelude holds: the frame is not whole yet
                    break
                last, start = stop - 4, pos + 12 + length
                more = end - stop >= 12
                if more:  # the message CRC, then the next prelude
                    check, total, length, following = unpack(data, last)
                else:
                    check = word(data, last)[0]
                if crc32(data[pos + 8 : last], crc) != check:
                    raise _Bad("protocol", "the message CRC does not match")
                block = data[pos + 12 : start]
                name = events(block)
                if name is None or messages is not None:
                    self._other(block, data[start:last], frames, messages)
                else:
                    append((name, data[start:last], "event", None))
                pos = stop
                if not more:
                    break
                crc = following
        except _Bad as bad:
            bad.offset = base + pos
            return pos, bad
        return pos, None

    def _other(
        self,
        block: bytes,
        payload: bytes,
        frames: list[RawEvent],
        messages: list[EventStreamMessage] | None,
    ) -> None:
        """The frame the hot loop leaves: one whose header block is new, or
        is not an event's, or whose headers `feed` returns."""
        known = self._cache.get(block) or self._learn(block)
        frames.append(
            (known[1], payload, "event", None) if known[3] else _raw_error(known, payload)
        )
        if messages is not None:
            messages.append(EventStreamMessage(known[0], payload))

    def _learn(self, block: bytes) -> _Known:
        """Parse a header block not seen yet; remember it if there is room
        (an event's name in _events too, for the hot loop)."""
        if len(block) > _MAX_HEADERS:
            raise _Bad(
                "protocol", f"{len(block)} bytes of headers (at most {_MAX_HEADERS} allowed)"
            )
        known = _describe(_parse_headers(block))
        if len(block) <= _CACHED_BLOCK and len(self._cache) < _CACHE:
            self._cache[block] = known
            if known[3]:
                self._events[block] = known[1]
        return known

    def _fail(self, bad: _Bad, done: list[EventStreamMessage] | list[RawEvent]) -> NoReturn:
        self._buf = bytearray()
        self._need = 0
        self._error = EventStreamError(bad.kind, bad.detail, bad.offset, done)
        raise self._error


#: What the decoder knows of a header block: headers, name, message type,
#: and whether that is ``event``.
_Known: TypeAlias = "tuple[Mapping[str, HeaderValue], str, str, bool]"


def _check_prelude(data: bytes, pos: int, limit: int) -> None:
    """Raise the `_Bad` that the prelude at ``pos`` deserves, if any (the
    hot loop calls it only for one that fails). The CRC comes first: until
    it holds, the lengths are noise."""
    total, length, crc = _PRELUDE.unpack_from(data, pos)
    if crc32(data[pos : pos + 8]) != crc:
        raise _Bad("protocol", "the prelude CRC does not match")
    if total < _OVERHEAD or length > total - _OVERHEAD:
        raise _Bad(
            "protocol",
            f"impossible lengths: a frame of {total} bytes with {length} bytes of headers",
        )
    if total > limit:
        raise _Bad("limit", f"a frame of {total} bytes exceeds max_frame_bytes ({limit})")


def _describe(headers: dict[str, HeaderValue]) -> _Known:
    """Headers (read-only), the frame's name and its message type."""
    kind = headers.get(":message-type")
    if not isinstance(kind, str):
        kind = "event"
    name = headers.get(_NAME_HEADER.get(kind, ":event-type"))
    return MappingProxyType(headers), name if isinstance(name, str) else "", kind, kind == "event"


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


def _raw_error(known: _Known, payload: bytes) -> RawEvent:
    """An exception or error frame as `EventStreamDecoder.feed_raw` gives it:
    the error object every decoder and the normalizer read (once a stream)."""
    headers, name, kind, _ = known
    error: dict[str, object] = {}
    if kind == "exception":
        try:
            body = loads(payload)
        except ValueError:
            body = None
        if isinstance(body, dict):
            error.update(body)
        else:
            error["message"] = payload.decode("utf-8", "replace")
    else:
        message = headers.get(":error-message")
        error["message"] = message if isinstance(message, str) else ""
    error["type"] = name
    return (f"{kind}:{name}", dumps_bytes({"error": error}), kind, None)
