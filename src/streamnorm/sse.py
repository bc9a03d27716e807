"""Server-Sent Events framing: the WHATWG HTML "event stream interpretation", sans-IO.

`SSEDecoder` turns the bytes of a ``text/event-stream`` body, cut into chunks
anywhere, into `ServerSentEvent` values. It does no I/O and knows nothing about
JSON or any LLM API: feed it bytes, get back the events those bytes completed::

    decoder = SSEDecoder()
    for chunk in body_chunks:
        for event in decoder.feed(chunk):
            handle(event)
    decoder.flush()            # end of input: the spec discards an unfinished block
    last = decoder.pending()   # ...this is what that block would have dispatched

The rules are those of the living standard (html.spec.whatwg.org, "Interpreting
an event stream"):

* the body is UTF-8; invalid bytes become U+FFFD; one leading BOM is dropped;
* lines end with CR LF, LF or CR;
* a line starting with ``:`` is a comment; otherwise the text before the first
  ``:`` is the field name and the text after it, minus one leading space, the
  value; a line without ``:`` is a field with an empty value;
* ``data`` appends its value and a LF to the data buffer, ``event`` sets the
  event type, ``id`` sets the last-event-id buffer unless the value contains
  U+0000, ``retry`` sets the reconnection time if the value is all ASCII digits
  (here: and below 2**63); other fields are ignored;
* a blank line dispatches: if the data buffer is empty nothing is dispatched,
  otherwise an event with the data minus its final LF, of type ``"message"``
  if none was set; then data and type are reset (the last-event-id is kept);
* at the end of the input an unfinished block is discarded.

For any split of the same bytes into chunks, the concatenation of what `feed`
returns (and of what an `SSELimitError` carries) is the same.

How it stays fast: no Python code runs per character. `SSEDecoder.feed`
splits a chunk into lines once, in C (`bytes.split` on LF, or
`bytes.splitlines`, which breaks at exactly CR, LF and CR LF, for chunks that
contain a CR); the unterminated rest waits for the next chunk.
`SSEDecoder.feed_raw` goes further and, in the common case, runs no Python
code per line either: everything up to the last blank line of the input so
far is cut into blocks by one regular expression (one for LF input, one for
CR LF input such as Gemini's), which also picks the event type and data out
of the blocks that are an optional ``event:`` line and one ``data:`` line.
Those are what LLM APIs send, and they cost a dictionary lookup each; any
other block (comments, ``id``, ``retry``, data of many lines, a line ended by
a lone CR or LF in CR LF input) goes through the line interpreter. The
unfinished last block waits, as bytes, for the next chunk. When it grows
large (a long line arriving in many small chunks, or more than
``max_line_bytes``), `feed_raw` reads lines too, where a partial line grows
in place and the limits are checked as lines arrive, and goes back to whole
blocks at the next block boundary. A decoder made with ``comments=True``
reads lines throughout, so that each comment is reported as its line
arrives.

Fields are recognised on bytes and only values are decoded (a repeated event
type is looked up, not decoded again). That is the same as decoding the whole
stream first, because every byte the parser cuts at (LF, CR, ``:``, space)
is ASCII, and UTF-8 never uses an ASCII byte inside a multi-byte sequence,
nor lets a broken sequence swallow one: decoding the pieces gives the same
text, U+FFFD for U+FFFD. Event data is decoded once, at dispatch, or not at
all by `SSEDecoder.feed_raw`, which hands it over as bytes (for a JSON parser
that reads bytes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, NoReturn, TypeAlias, overload

from . import _json
from ._frozen import twin

__all__ = ["Comment", "RawEvent", "SSEDecoder", "SSELimitError", "ServerSentEvent"]


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event.

    `event` is the event type (``"message"`` when the block set none) and
    `data` the data buffer without its final LF. `id` is the last-event-id
    buffer at dispatch time, which the spec keeps across events: an event
    without an ``id`` line carries the id of an earlier one. `retry` is the
    value of the last valid ``retry`` line in this event's block, or None.
    """

    event: str = "message"
    data: str = ""
    id: str = ""
    retry: int | None = None

    def json(self) -> Any:
        """`data` parsed as JSON; raises `streamnorm._json.JSONDecodeError`."""
        return _json.loads(self.data)


@dataclass(frozen=True, slots=True)
class Comment:
    """A comment line (one that starts with ``:``), usually a keep-alive.

    Only returned by a decoder made with ``comments=True``. `text` is what
    follows the colon, verbatim (``": ping"`` gives ``" ping"``). A type of its
    own rather than an event named ``"comment"``, so that a keep-alive can never
    be mistaken for a real event of that name.
    """

    text: str


#: An event as `SSEDecoder.feed_raw` returns it: ``(event, data, id, retry)``,
#: the fields of `ServerSentEvent` with the data still UTF-8 bytes, undecoded
#: (they may hold invalid UTF-8, which `ServerSentEvent.data` shows as U+FFFD).
RawEvent: TypeAlias = "tuple[str, bytes, str, int | None]"


class SSELimitError(Exception):
    """The input broke `SSEDecoder`'s ``max_line_bytes`` limit.

    `SSEDecoder.feed` raises it as soon as either

    * a line, without its terminator, is longer than ``max_line_bytes`` bytes.
      An unterminated line counts while it is still arriving, so an endless
      line fails when it crosses the limit, not at a newline that never comes;
    * the data of one event (its ``data`` values as UTF-8 bytes, joined by LF,
      as it would be dispatched) is longer than ``max_line_bytes`` bytes.

    `limit` names the limit (``"max_line_bytes"``) and `value` is its setting;
    `part` says what broke it, ``"line"`` or ``"data"``. `events` holds what the
    failing `feed` call had completed before that point, in order, so that
    nothing before the offending input is lost: the same kind of items as
    `feed` returns (typed loosely, since an exception cannot know the decoder's
    type parameter). The decoder is unusable
    afterwards: every later `feed` or `flush` raises again.
    """

    limit: str
    value: int
    part: str
    events: list[Any]

    def __init__(self, part: str, value: int, events: list[Any] | None = None) -> None:
        what = "a line" if part == "line" else "the data of one event"
        super().__init__(f"{what} is longer than max_line_bytes={value}")
        self.limit = "max_line_bytes"
        self.value = value
        self.part = part
        self.events = [] if events is None else events

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.part, self.value, self.events))


if TYPE_CHECKING:
    # What feed() returns a list of: events, and comments too if comments=True.
    # The default lets a plain `SSEDecoder` annotation mean the usual case.
    # typing_extensions is needed by type checkers only (they bundle it).
    from typing_extensions import TypeVar

    _Item = TypeVar("_Item", ServerSentEvent, ServerSentEvent | Comment, default=ServerSentEvent)
else:
    from typing import TypeVar

    _Item = TypeVar("_Item")

_BOM: Final = b"\xef\xbb\xbf"
# A retry of 2**63 ms or more is ignored. Nothing can wait that long, and it
# keeps int() (quadratic in the number of digits) away from huge digit strings.
_RETRY_DIGITS: Final = 19
_RETRY_MAX: Final = 2**63
# Every _FOLD_BYTES of data, the data lines kept so far are joined into one
# bytearray, so that the per-object overhead of many short lines stays bounded.
_FOLD_BYTES: Final = 64 * 1024
# A decoder remembers the event type of up to _TYPES "event:" lines of up to
# _TYPE_LINE bytes each (a few KB at most), so that a stream that repeats a few
# types, as LLM APIs do on every event, does not decode them again each time.
_TYPES: Final = 64
_TYPE_LINE: Final = 128
# Reading whole blocks, the unfinished block is copied again with each chunk
# only while it is at most _SMALL bytes or the size of that chunk, so copying
# costs O(len(chunk) + _SMALL) per chunk. A larger one is read line by line.
_SMALL: Final = 4096

# One block (with its blank line), at a line start, in input whose line
# terminators are all LF (_BLOCK_LF), or mostly CR LF (_BLOCK_CRLF). Group 1
# and 2: the "event" line and the data of a block that is an optional "event"
# line and one "data" line (one optional space after each colon, as the spec
# strips); group 3: blank lines with no block before them (a whole run of
# them is one match, so a flood of blank lines costs no object per line; in
# CR LF input the run may hold lone CR or LF too: at a block start every line
# terminator in a row ends a blank line that does nothing);
# group 4: the lines of any other block, each with its terminator. In
# LF input every line start meets one of these, and input that ends with a
# blank line ends with a match, so matches tile the input with no gap:
# `findall` sees every block. In CR LF input a lone CR can stop the tiling:
# group 5 then takes all the rest, to be read line by line. Values are matched
# as ``[^\n]*`` or ``[^\r]*``, the fastest repeat `re` has; in CR LF input
# such a value may hold a lone LF, which `SSEDecoder._blocks` checks for.
# Linear: each alternative fails within one line or two.
_BLOCK_LF: Final = re.compile(
    rb"(?:(event: ?[^\n]*)\n)?data: ?([^\n]*)\n\n|(\n+)|((?:[^\n]+\n)+)\n|([\s\S]+)"
)
_BLOCK_CRLF: Final = re.compile(
    rb"(?:(event: ?[^\r]*)\r\n)?data: ?([^\r]*)\r\n\r\n|(\r\n[\r\n]*)"
    rb"|((?:[^\r\n][^\r]*\r\n)+)\r\n|([\s\S]+)"
)
# Every way to end a blank line but CR LF CR LF (CR CR, LF LF, LF CR, and
# those followed by more) contains one of these.
_OTHER_BLANK: Final = re.compile(rb"\r\r|\n\n|\n\r")
# Two line terminators or more in a row: the first ends a line, the second
# ends a blank line (which dispatches and resets the block), and every later
# one ends a blank line with nothing to dispatch or reset, which does nothing.
# Reading lines, a chunk of at least _SHORT_LINES bytes whose lines average
# under 8 bytes (no API sends such lines; a flood of blank lines is one) is
# split again with its runs cut to two LF: a C pass or two rather than a loop
# turn per line, for one len() on every chunk. (The rest of a run cut at a
# chunk boundary is blank lines of that no-op kind too, and so is a LF after
# a CR the cut run ended with.) Measuring the split needs no scan of its own,
# where a search for three LF would cost as much as the split.
_SHORT_LINES: Final = 512
# A run of three CR or LF bytes or more holds two terminators or more, so
# it can be cut to two LF whatever its mix; one character class keeps `re`
# from keeping state per repetition (a repeated group does, 130 bytes each).
_BLANK_RUN_LF: Final = re.compile(rb"\n{3,}")
_BLANK_RUN: Final = re.compile(rb"[\r\n]{3,}")
# A chunk longer than this is decoded in slices of this size, one after the
# other (the output does not depend on where chunks are cut): the lines, the
# matches and the copies that decoding makes then exist for one slice at a
# time, so one huge chunk costs memory bounded by the limit and the slice,
# besides the chunk itself and the events it completes.
_SLICE: Final = 64 * 1024


_EventFields = twin(ServerSentEvent)


def _new_event(event: str, data: str, id: str, retry: int | None) -> ServerSentEvent:
    """A ServerSentEvent, made the fast way (see ``_frozen``)."""
    ev = _EventFields()
    ev.event = event
    ev.data = data
    ev.id = id
    ev.retry = retry
    ev.__class__ = ServerSentEvent
    return ev  # type: ignore[no-any-return]


def _text(raw: bytes | bytearray) -> str:
    return raw.decode("utf-8", "replace")


def _retry(value: bytes) -> int | None:
    """The reconnection time that a ``retry`` value sets, or None if it sets none."""
    if not value.isdigit():  # bytes.isdigit(): non-empty, ASCII 0-9 only
        return None
    value = value.lstrip(b"0") or b"0"
    if len(value) > _RETRY_DIGITS:
        return None
    n = int(value)
    return n if n < _RETRY_MAX else None


def _fold(first: bytes | bytearray, more: list[bytes]) -> bytearray:
    """The items of a data buffer (`first`, then those of `more`) joined by LF.

    `more` is emptied: the result is the buffer's one item from now on.
    Amortized linear: the bytearray of an earlier fold is extended in place.
    """
    if type(first) is not bytearray:
        first = bytearray(first)
    if more:
        first += b"\n"
        first += b"\n".join(more)
        more.clear()
    return first


class SSEDecoder(Generic[_Item]):
    """Incremental, sans-IO decoder of one ``text/event-stream`` body.

    Call `feed` with each chunk of bytes as it arrives (any size, cut anywhere)
    and `flush` once at the end; `pending` then tells what an unfinished final
    block would have dispatched. `feed_raw` is `feed` with the event data left
    as bytes.

    With ``comments=True``, comment lines come back too, as `Comment` values in
    stream order among the events. The return type follows the option:
    ``SSEDecoder()`` is an ``SSEDecoder[ServerSentEvent]``, whose `feed` returns
    ``list[ServerSentEvent]``; ``SSEDecoder(comments=True)`` is an
    ``SSEDecoder[ServerSentEvent | Comment]``. A plain ``SSEDecoder`` annotation
    means the former.

    ``max_line_bytes`` bounds memory (see `SSELimitError` for the exact rules):
    besides the chunk being fed, the decoder keeps at most one partial line and
    the data of one event, each within the limit (and a few KB of event types),
    so memory is O(max_line_bytes) whatever the input.

    `last_event_id` is the spec's "last event ID string", updated at every
    blank line: what a reconnecting client sends as ``Last-Event-ID``.
    `reconnection_time` is the last valid ``retry`` value (milliseconds) or
    None; unlike the `retry` of events, it also sees blocks without data.

    Cost: O(len(chunk)) per `feed`, with a small constant per chunk and per
    event (and per line in blocks of unusual shape). Nothing is rescanned
    more than a bounded number of times: an unfinished block is copied only
    while it is small next to the chunks that bring it, and a line that
    arrives in many pieces grows in place; so feeding one byte at a time is
    linear too.
    """

    __slots__ = (
        "_at_start",
        "_bom_head",
        "_buf",
        "_comments",
        "_error",
        "_event",
        "_finished",
        "_first",
        "_first_mark",
        "_id",
        "_last_event_id",
        "_line_mode",
        "_long",
        "_mark",
        "_max",
        "_more",
        "_pending",
        "_prelude",
        "_reconnection_time",
        "_retry",
        "_size",
        "_skip_lf",
        "_tail",
        "_types",
    )

    @overload
    def __init__(
        self: SSEDecoder[ServerSentEvent],
        *,
        comments: Literal[False] = False,
        max_line_bytes: int = 16 * 1024 * 1024,
    ) -> None: ...
    @overload
    def __init__(
        self: SSEDecoder[ServerSentEvent | Comment],
        *,
        comments: bool,
        max_line_bytes: int = 16 * 1024 * 1024,
    ) -> None: ...
    def __init__(self, *, comments: bool = False, max_line_bytes: int = 16 * 1024 * 1024) -> None:
        if isinstance(max_line_bytes, bool) or not isinstance(max_line_bytes, int):
            raise TypeError("max_line_bytes must be an int")
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        self._comments = bool(comments)
        self._max = max_line_bytes
        # Input, after line terminators are made LF. Two modes (module doc):
        # reading whole blocks, the unfinished block is _buf (it starts at a
        # block start, so the line interpreter's block state below is empty);
        # reading lines (_line_mode), _buf is empty and the partial line (the
        # bytes after the last LF, never one) is _tail, or _long while it spans
        # more than one chunk, when it must grow in place; at most one of the
        # two is non-empty and its length is at most _max.
        self._buf = b""
        self._line_mode = self._comments  # comments are reported line by line
        self._tail = b""
        self._long = bytearray()
        self._at_start = True  # still where a BOM may be
        self._bom_head = b""  # a proper prefix of the BOM, seen at the very start
        self._skip_lf = False  # the last chunk ended with CR: a LF next is part of CR LF
        # True while anything above or below needs attention at the next chunk.
        self._prelude = True
        self._error: SSELimitError | None = None
        self._finished = False
        self._pending: ServerSentEvent | None = None
        # The block being read line by line. The spec's data buffer is _first
        # (None when the buffer is empty) and then the items of _more, each
        # followed by LF. Single-line data, by far the most common, is thus
        # _first alone, without a list per event. _size is the buffer's length
        # in bytes once it holds two items or more, else 0: one item is at most
        # one line, so within the limit. _mark is the _size at which the next
        # fold, or the check against the limit, is due. A fold joins all items
        # into _first.
        self._first: bytes | bytearray | None = None
        self._more: list[bytes] = []
        self._size = 0
        self._first_mark = min(_FOLD_BYTES, max_line_bytes + 1)
        self._mark = self._first_mark
        self._event = ""
        self._id = ""
        self._retry: int | None = None
        self._last_event_id = ""
        self._reconnection_time: int | None = None
        self._types: dict[bytes, str] = {}  # "event:" line -> type; see _TYPES

    @property
    def last_event_id(self) -> str:
        """The last event ID string: the id buffer as of the latest blank line."""
        return self._last_event_id

    @property
    def reconnection_time(self) -> int | None:
        """The latest valid ``retry`` value in milliseconds, or None."""
        self._read_lines()  # a retry line may wait in an unfinished block
        return self._reconnection_time

    def feed(self, chunk: bytes) -> list[_Item]:
        """Decode the next chunk; return the events (and comments) it completes.

        Raises `SSELimitError` when the input breaks the limit, and
        `RuntimeError` after `flush`.
        """
        return self._decode(chunk, False)

    @overload
    def feed_raw(self: SSEDecoder[ServerSentEvent], chunk: bytes) -> list[RawEvent]: ...
    @overload
    def feed_raw(
        self: SSEDecoder[ServerSentEvent | Comment], chunk: bytes
    ) -> list[RawEvent | Comment]: ...
    def feed_raw(self, chunk: bytes) -> list[Any]:
        """`feed`, with each event as a `RawEvent` tuple whose data is bytes.

        For a consumer that parses the data itself from bytes (JSON parsers
        read UTF-8 bytes directly): it saves decoding the data and building an
        object per event. ``data.decode("utf-8", "replace")`` gives what
        `feed` would have returned. Comments are `Comment` values, as in
        `feed`. `SSELimitError.events` holds `RawEvent` tuples here.
        """
        if len(chunk) <= _SLICE:  # (_decode's first steps, taken here: calls less)
            if not (self._prelude or self._line_mode) and len(self._buf) <= _SMALL:
                return self._feed_blocks(chunk)  # (the steady state of _decode_slice)
            return self._decode_slice(chunk, True)
        return self._decode(chunk, True)

    def flush(self) -> list[_Item]:
        """End the input; return the events this completes (per the spec, none).

        The spec discards an unfinished final block (one not closed by a blank
        line), so this returns an empty list; `pending` tells what the block
        would have been. Afterwards `feed` raises `RuntimeError`; `flush` may be
        called again.
        """
        if self._error is not None:
            self._fail(self._error.part, [])
        if not self._finished:
            self._read_lines()
            self._pending = self._would_dispatch()
            self._finished = self._prelude = True
            self._tail = b""
            self._long = bytearray()
            self._first = None
            self._more = []
        return []

    def pending(self) -> ServerSentEvent | None:
        """The event that the unfinished final block would dispatch, or None.

        After `flush`, this is the block that the spec made `flush` discard:
        the lines after the last blank line, including a last line with no
        terminator at all (``b'data: {"x": 1}'`` at the end of the input),
        read as if a blank line followed. None if that block has no data.
        Before `flush` it answers the same question for the input so far.

        It never raises and does not apply the data limit. Cost: O(size of the
        block).
        """
        if self._finished:
            return self._pending
        if self._error is not None:
            return None
        self._read_lines()
        return self._would_dispatch()

    # -- internals --------------------------------------------------------

    def _decode(self, chunk: bytes, raw: bool) -> list[Any]:
        """`feed`, or `feed_raw` if ``raw``: a long chunk slice by slice (see _SLICE)."""
        if len(chunk) <= _SLICE:
            return self._decode_slice(chunk, raw)
        out: list[Any] = []
        try:
            for start in range(0, len(chunk), _SLICE):
                out += self._decode_slice(chunk[start : start + _SLICE], raw)
        except SSELimitError as exc:
            exc.events[:0] = out  # what the earlier slices completed counts too
            raise
        return out

    def _decode_slice(self, chunk: bytes, raw: bool) -> list[Any]:
        """`_decode` for a chunk of at most _SLICE bytes.

        Cost: each byte is copied into _buf once, and copied again with a
        later chunk only while _buf is at most _SMALL bytes or the size of
        that chunk: O(len(chunk) + _SMALL) per chunk.
        """
        if self._prelude:
            chunk = self._start_chunk(chunk)
            if not chunk:
                return []
        if not self._line_mode:
            if raw and (len(self._buf) <= _SMALL or len(self._buf) <= len(chunk)):
                return self._feed_blocks(chunk)
            # `feed` reads lines; so does `feed_raw` once the unfinished block
            # is too big to copy again (from here a partial line grows in place).
            self._read_lines()
            if self._skip_lf:  # _buf ended with CR: a LF that starts this chunk ends that line
                chunk = self._start_chunk(chunk)
        out = self._feed_lines(chunk, raw)
        if (
            raw
            and self._first is None
            and not self._event
            and self._retry is None
            and not self._long
            and len(self._tail) <= _SMALL
            and not self._comments
        ):  # at a block start again, with a small partial line: whole blocks
            self._buf, self._tail = self._tail, b""
            self._line_mode = False
        return out

    def _feed_blocks(self, chunk: bytes) -> list[Any]:
        """Read whole blocks; the unfinished one waits in _buf.

        The caller has checked that copying _buf once more costs O(len(chunk)).
        """
        data = self._buf + chunk if self._buf else chunk
        if len(data) <= self._max:
            if 0x0D not in data:  # (an int needle is a memchr: several times faster)
                end = data.rfind(b"\n\n") + 2  # each LF LF ends a blank line, so a block
                if end == 1:
                    self._buf = data
                    return []
                self._buf = data[end:]
                return self._blocks(_BLOCK_LF.findall(data, 0, end), False)
            # CR LF, as Gemini sends. CR LF CR LF ends a blank line; if a
            # blank line ends in any other way after the last of those, lines
            # are read instead.
            end = data.rfind(b"\r\n\r\n") + 4
            if end < 4:
                if _OTHER_BLANK.search(data) is None:
                    self._buf = data
                    return []
            else:
                rest = data[end:]  # (mostly cut inside a line: two memchr say so)
                if (0x0A not in rest and 0x0D not in rest) or _OTHER_BLANK.search(rest) is None:
                    self._buf = rest
                    return self._blocks(_BLOCK_CRLF.findall(data, 0, end), True)
        # A line here might break the limit (lines check it as they come), or
        # the terminators are mixed: read lines.
        self._buf = b""
        self._line_mode = True
        return self._feed_lines(data, True)

    def _blocks(self, matches: list[tuple[bytes, ...]], crlf: bool) -> list[RawEvent]:
        """The events of whole blocks, as `_BLOCK_LF` or (``crlf``)
        `_BLOCK_CRLF` found them. The line interpreter's block state is empty
        before and after each, and no block can break the limit: they come
        from at most _max bytes."""
        types = self._types
        last_id = self._id
        out: list[Any] = []
        for event_line, value, run, other, rest in matches:
            if not (other or run or rest):
                if not (crlf and (0x0A in value or 0x0A in event_line)):
                    name = types.get(event_line)
                    if name is None:
                        name = self._type(event_line)
                    out.append((name, value, last_id, None))
                    continue
                # A lone LF ends a line in there: read the block's lines.
                head = event_line + b"\n" if event_line else b""
                other = head + b"data: " + value + b"\n"
            elif run:
                continue
            # The lines, then "", the blank line that ends the block (or more).
            lines = (other or rest).splitlines() if crlf else other.split(b"\n")
            if crlf:
                lines.append(b"")
            out += self._lines(lines, True)
            last_id = self._id
        return out

    def _split_cr(self, chunk: bytes) -> list[bytes]:
        """Split a chunk that contains a CR as `bytes.split` on LF would.

        bytes.splitlines() breaks at exactly CR, LF and CR LF (str.splitlines
        knows more terminators) but leaves out the empty item after a final
        terminator, which is put back here.
        """
        lines = chunk.splitlines()
        if len(lines) > len(chunk) >> 3 and len(chunk) >= _SHORT_LINES:
            lines = _BLANK_RUN.sub(b"\n\n", chunk).splitlines()
        last = chunk[-1]
        if last == 0x0D:  # CR LF may straddle chunks: drop a LF that starts the next
            self._skip_lf = self._prelude = True
        if last == 0x0D or last == 0x0A:
            lines.append(b"")
        return lines

    def _read_lines(self) -> None:
        """Switch to reading lines, with the unfinished block's complete lines
        read. Invisible from outside: those lines cannot dispatch (there is no
        blank line among them) and no comment is waiting (comments are read
        line by line from the start); only a ``retry`` or ``id`` among them
        takes effect now rather than with the block."""
        if self._line_mode:
            return
        buf, self._buf = self._buf, b""
        self._line_mode = True
        cut = max(buf.rfind(b"\n"), buf.rfind(b"\r")) + 1
        if cut:
            self._feed_lines(buf[:cut], True)
            if cut < len(buf):  # a CR it ended with is followed by more than a LF
                self._skip_lf = False
        self._tail = buf[cut:]  # the partial line (within the limit, as all of _buf is)

    def _start_chunk(self, chunk: bytes) -> bytes:
        """The rare per-chunk work: failure, end, BOM, CR LF split, long line."""
        if self._error is not None:
            self._fail(self._error.part, [])
        if self._finished:
            raise RuntimeError("SSEDecoder.feed() called after flush()")
        if self._at_start:
            head = self._bom_head + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._bom_head = head  # too short to tell yet
                return b""
            self._at_start = False
            self._bom_head = b""
            chunk = head[len(_BOM) :] if head.startswith(_BOM) else head
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        if self._long:
            if 0x0A not in chunk and 0x0D not in chunk:  # it grows: O(len(chunk))
                if len(self._long) + len(chunk) > self._max:
                    self._fail("line", [])
                self._long += chunk
                return b""
            # The long line ends in this chunk: hand it to feed() as _tail.
            self._tail = bytes(self._long)
            self._long = bytearray()
        self._prelude = self._skip_lf  # (_at_start is False by now)
        return chunk

    def _feed_lines(self, chunk: bytes, raw: bool) -> list[Any]:
        """Read input line by line (the partial line is _tail or _long)."""
        if 0x0D in chunk:
            lines = self._split_cr(chunk)
        else:
            lines = chunk.split(b"\n")
            if len(lines) > len(chunk) >> 3 and len(chunk) >= _SHORT_LINES:
                lines = _BLANK_RUN_LF.sub(b"\n\n", chunk).split(b"\n")
        # Invariant: lines[0] completes the partial line, lines[-1] is the next.
        tail = self._tail
        if len(lines) == 1 or len(tail) + len(chunk) > self._max:
            # No terminator, or a line here might be over the limit.
            return self._feed_rare(chunk, lines, raw)
        if tail:
            lines[0] = tail + lines[0]
        self._tail = lines.pop()
        return self._lines(lines, raw)

    def _feed_rare(self, chunk: bytes, lines: list[bytes], raw: bool) -> list[Any]:
        """`_feed_lines` for a chunk without terminator, or one that may break the limit."""
        limit = self._max
        if len(lines) == 1:  # the partial line grows; from now on in place, in _long
            if len(self._tail) + len(chunk) > limit:
                self._fail("line", [])
            self._long += self._tail
            self._long += chunk
            self._tail = b""
            self._prelude = True
            return []
        if self._tail:
            lines[0] = self._tail + lines[0]
        self._tail = lines.pop()
        for i, line in enumerate(lines):
            if len(line) > limit:
                self._fail("line", self._lines(lines[:i], raw))  # what came before counts
        out = self._lines(lines, raw)
        if len(self._tail) > limit:
            self._fail("line", out)
        return out

    def _fail(self, part: str, out: list[Any]) -> NoReturn:
        self._error = SSELimitError(part, self._max)
        self._prelude = True
        raise SSELimitError(part, self._max, out)

    def _lines(self, lines: list[bytes], raw: bool) -> list[Any]:
        """Interpret complete lines (without terminators); return what they dispatch.

        The block's state lives in locals and is stored back at the end. Per
        line, one slice-and-compare recognises ``data: `` or ``event: ``, and
        other lines cost a find(); a repeated event type costs a dict lookup,
        not a decode. Per event there is one object (a `RawEvent` if ``raw``),
        and a list and a join only for multi-line data.
        """
        out: list[Any] = []
        first = self._first
        more: list[bytes] = self._more
        size = self._size
        mark = self._mark
        event = self._event
        last_id = self._id
        seen_id = self._last_event_id
        retry = self._retry
        types = self._types
        for line in lines:
            if not line:  # blank line: dispatch
                if first is not None:
                    data = b"\n".join([first, *more]) if more else first
                    if raw:
                        out.append((event or "message", bytes(data), last_id, retry))
                    else:  # _new_event(event or "message", _text(data), ...), inlined
                        ev = _EventFields()
                        ev.event = event or "message"
                        ev.data = data.decode("utf-8", "replace")
                        ev.id = last_id
                        ev.retry = retry
                        ev.__class__ = ServerSentEvent
                        out.append(ev)
                    first = None
                    if size:  # there were two items or more
                        more = []
                        size = 0
                        mark = self._first_mark
                event = ""
                retry = None
                seen_id = last_id
                continue
            if line[:6] == b"data: ":
                value = line[6:]
            elif line in types:  # an "event" line seen before
                event = types[line]
                continue
            elif line[:7] == b"event: ":
                event = self._type(line)
                continue
            else:
                field, event, last_id, retry = self._field(line, out, event, last_id, retry)
                if field is None:
                    continue
                value = field
            if first is None:
                first = value
                continue
            more.append(value)
            size += len(value) + 1 if size else len(first) + len(value) + 2
            if size > mark:
                if size - 1 > self._max:  # dispatched data has no final LF
                    self._fail("data", out)
                first = _fold(first, more)
                mark = min(size + _FOLD_BYTES, self._max + 1)
        self._first = first
        self._more = more
        self._size = size
        self._mark = mark
        self._event = event
        self._id = last_id
        self._last_event_id = seen_id
        self._retry = retry
        return out

    def _field(
        self, line: bytes, out: list[Any], event: str, last_id: str, retry: int | None
    ) -> tuple[bytes | None, str, str, int | None]:
        """A line other than ``data: `` and ``event: `` (the rare ones): a
        comment, a field written without a space, ``id``, ``retry`` or an
        unknown field, which is ignored. Returns the value of a ``data``
        field (None for every other line) and the event type, last event id
        and retry after the line."""
        colon = line.find(b":")
        if colon == 0:
            if self._comments:
                out.append(Comment(_text(line[1:])))
            return None, event, last_id, retry
        if colon < 0:
            name, value = line, b""
        else:
            name = line[:colon]
            if line[colon + 1 : colon + 2] == b" ":
                colon += 1
            value = line[colon + 1 :]
        if name == b"data":
            return value, event, last_id, retry
        if name == b"event":
            event = _text(value)
        elif name == b"id":
            if 0 not in value:
                last_id = _text(value)
        elif name == b"retry":
            n = _retry(value)
            if n is not None:
                retry = self._reconnection_time = n
        return None, event, last_id, retry

    def _type(self, line: bytes) -> str:
        """The type an event gets from its ``event:`` line (b"" for none),
        remembered if there is room. An empty type buffer dispatches as
        "message", so that is what it is set to here: the same events."""
        event = (line[7:] if line[6:7] == b" " else line[6:]).decode("utf-8", "replace")
        event = event or "message"
        if len(self._types) < _TYPES and len(line) <= _TYPE_LINE:
            self._types[line] = event
        return event

    def _would_dispatch(self) -> ServerSentEvent | None:
        """What a blank line would dispatch now, after the partial line if any."""
        data = [] if self._first is None else [self._first, *self._more]
        event = self._event
        last_id = self._id
        retry = self._retry
        line = self._bom_head + bytes(self._long) + self._tail
        colon = line.find(b":")
        if line and colon != 0:
            if colon < 0:
                name, value = line, b""
            else:
                name = line[:colon]
                start = colon + 2 if line[colon + 1 : colon + 2] == b" " else colon + 1
                value = line[start:]
            if name == b"data":
                data.append(value)
            elif name == b"event":
                event = _text(value)
            elif name == b"id":
                if 0 not in value:
                    last_id = _text(value)
            elif name == b"retry":
                n = _retry(value)
                if n is not None:
                    retry = n
        if not data:
            return None
        return _new_event(event or "message", _text(b"\n".join(data)), last_id, retry)
