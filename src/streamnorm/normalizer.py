"""``StreamNormalizer``: bytes in, canonical events out (sans-IO).

    bytes ─► framer ─► payload JSON ─► provider decoder ─► MessageBuilder ─► events

The normalizer owns what sits between the layers: choosing the framing and
the api, JSON parsing of payloads, the size limits, and the end-of-input
rules of DESIGN.md §5 (a final event that lacks its terminator still counts
when its data is complete). ``normalize`` and ``anormalize`` are thin loops
around it.

Framing hook. Each decoder class names the framing it arrives in in its
``framing`` class attribute (``"sse"``, Ollama ``"ndjson"``, Bedrock
``"eventstream"``) and any other in ``alt_framings`` (Gemini
``("json-array",)``); `streamnorm.framing` holds the framers (`FRAMERS`:
name → factory of a `Framer` with ``feed``, ``flush`` and ``pending``) and
`sniff_framing`. The framing is always decided from the first bytes,
whatever ``api`` says:

1. `sniff_framing` on the first line (or the first 12 bytes of a binary
   prelude). Bytes that are no framing at all (an HTML page, plain text)
   end the stream at once with ``Error(protocol)``: the rest is never read.
2. With an explicit api whose decoder reads that framing, the decoder is
   bound; otherwise (``auto``, or bytes of another framing) the first
   payload decides: an error object is ``Error(upstream)`` under any api; a
   payload `detect_api` gives to another api than the one asked for is
   ``Error(protocol)`` naming the api it looks like.

``Start`` is the first event of every stream, also of one that is only an
error body, empty, or not a stream: its api is then the api asked for, the
api the error body's shape names, or ``"unknown"``.

Every step is O(bytes of the chunk) plus the builder's own linear work, so a
stream costs O(its bytes) however it is cut; and since no framer's output
depends on chunk boundaries, neither does anything here.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

from . import _json
from .apis import ApiName, resolve_api
from .builder import MessageBuilder
from .codec import response_api_of
from .errors import body_retry_after, error_code, error_type_of
from .events import Event
from .framing import (
    FRAMERS,
    QUOTED,
    Framer,
    FramingError,
    blank_prefix,
    first_line,
    sniff_framing,
)
from .messages import AssistantMessage, StopReason, Usage
from .providers import DECODERS, Decoder, detect_api, detect_frame_api, error_body_api
from .providers.base import error_of
from .providers.bedrock_converse.decoder import BEDROCK_APIS
from .providers.bedrock_converse.decoder import error_body as bedrock_error
from .sse import RawEvent

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_STREAM_BYTES",
    "StreamNormalizer",
    "anormalize",
    "normalize",
]

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024
#: No real answer comes near this (the longest, 128k output tokens as one SSE
#: event each, is about 30 MB); a stream that would exhaust memory passes it.
DEFAULT_MAX_STREAM_BYTES = 128 * 1024 * 1024
DEFAULT_MAX_JSON_DEPTH = 512

#: The framing is decided within this many bytes (the first line, at most).
_HEAD_BYTES = 64 * 1024
#: A chunk longer than this is framed and interpreted slice by slice.
_SLICE = 64 * 1024
#: The api of a message whose stream never said which api it was.
UNKNOWN_API = "unknown"

#: How each framing is named in an error message.
_FRAMING_NAMES = {
    "sse": "a server-sent event stream",
    "ndjson": "newline-delimited JSON",
    "json-array": "a streamed JSON array",
    "json": "a single JSON document",
    "eventstream": "an AWS event stream",
}


class StreamNormalizer:
    """Normalizes one streamed response.

    ``feed(chunk)`` returns the events completed by ``chunk``; ``flush()``
    ends the input and returns the final events, exactly one of them
    terminal (``Done`` or ``Error``). After the terminal event further input
    is ignored; feeding after ``flush()`` is a programming error and raises.

    ``api`` is a wire API name, an alias, or ``"auto"``/``"openai"`` to detect
    it from the first bytes and payload. ``model`` is the model the caller
    asked for, ``provider`` labels the host; both are recorded on the message.
    ``choice`` selects the choice / candidate of an ``n > 1`` stream.
    ``max_event_bytes`` (16 MiB) bounds one line, frame or item and one
    event's data, ``max_stream_bytes`` (128 MiB; None lifts it) the whole
    stream, ``max_json_depth`` (512) the nesting of one payload; exceeding any
    ends the stream with ``Error(kind="limit")`` naming it, in bounded memory.
    No real answer comes near the defaults (docs/robustness.md §2).
    ``keep_content`` False keeps no content (``MessageBuilder``): for a
    caller that only counts the stream, whose memory then does not grow
    with the answer; the events carry their deltas all the same.
    """

    def __init__(
        self,
        api: ApiName = "auto",
        model: str | None = None,
        *,
        provider: str | None = None,
        choice: int = 0,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_stream_bytes: int | None = DEFAULT_MAX_STREAM_BYTES,
        max_json_depth: int = DEFAULT_MAX_JSON_DEPTH,
        keep_content: bool = True,
    ) -> None:
        _check_options(model, provider, choice, max_event_bytes, max_stream_bytes, max_json_depth)
        self._keep_content = keep_content
        self._api: str = resolve_api(api, allow_auto=True)
        self._forced = None if self._api == "auto" else self._api
        self._model = model
        self._provider = provider
        self._choice = choice
        self._max_event_bytes = max_event_bytes
        self._max_stream_bytes = max_stream_bytes
        self._max_json_depth = max_json_depth
        self._parse = _json.fast_parser(max_json_depth)
        self._framing: str | None = None
        self._framer: Framer | None = None
        self._head = bytearray()  # the bytes before the framing is known
        self._blank = True  # only whitespace so far
        self._bytes = 0
        # Payloads read by _interpret: whether one was read yet (the hot loop
        # of _interpret_all, which counts none, runs only once one was).
        self._payloads = 0
        self._flushed = False
        self._builder: MessageBuilder | None = None
        self._decoder: Decoder | None = None

    # ------------------------------------------------------------------

    @property
    def api(self) -> str:
        """The wire API: as given, or as detected (``"auto"`` until then)."""
        return self._api

    @property
    def closed(self) -> bool:
        """Whether the terminal event has been emitted."""
        return self._builder is not None and self._builder.closed

    @property
    def settled(self) -> bool:
        """Whether the answer is whole though the bytes have not ended: the
        event that carries the stop value was read, the wire API sends
        nothing after it (Gemini has no terminal event), and the stream
        carried no other candidate than the one read. ``flush()`` then
        gives the terminal event, as at the end of the bytes, so a caller
        reading a connection the server holds open need not wait for it."""
        decoder = self._decoder
        return (
            decoder is not None
            and decoder.last_event_has_stop
            and decoder.builder.stop_seen
            and not decoder.builder.closed
            and not decoder.choices.others_seen
        )

    @property
    def message(self) -> AssistantMessage:
        """The ``AssistantMessage`` so far (the final one after the end)."""
        if self._builder is None:
            return AssistantMessage(
                (), self._api, self._model, StopReason.STOP, None, Usage(), None, self._provider
            )
        return self._builder.message

    def feed(self, chunk: bytes) -> list[Event]:
        """Process the next bytes; returns the events they complete."""
        if self._flushed:
            raise RuntimeError("feed() after flush(): the stream has ended")
        if self.closed or not chunk:
            return []
        if type(chunk) is not bytes:  # a bytearray or memoryview: copied once
            chunk = _as_bytes(chunk)
        total, limit = self._bytes + len(chunk), self._max_stream_bytes
        if limit is not None and total > limit:
            return self._feed_past_limit(chunk, limit)
        self._bytes = total
        if self._blank and not chunk.isspace():
            self._blank = False
        if self._framer is not None:
            self._frame(chunk)
        else:
            self._head_bytes(chunk)
        return self._drain()

    def _feed_past_limit(self, chunk: bytes, limit: int) -> list[Event]:
        """`feed` of a chunk that crosses max_stream_bytes: the part within
        the limit, then the limit error."""
        events = self.feed(chunk[: limit - self._bytes])
        if not self.closed:
            self._fail_limit(
                "max_stream_bytes", f"the stream exceeded max_stream_bytes ({limit} bytes)"
            )
        return events + self._drain()

    def flush(self) -> list[Event]:
        """End of input: returns the final events, exactly one terminal."""
        if self._flushed:
            return []
        self._flushed = True
        self._end_of_bytes()
        if not self.closed:
            if self._decoder is not None and self._payloads:
                self._decoder.end_of_input()
            else:
                self._no_payload()
        return self._drain()

    def abort(self, reason: str = "aborted by the caller") -> list[Event]:
        """The caller gives up: ends the stream with ``Error(kind="aborted")``.

        Returns the final events: a ``BlockEnd`` for every open block (an open
        tool call marked ``error="incomplete"``), then the ``Error``, whose
        message (``stop_reason="aborted"``) holds everything received. Bytes of
        an event not yet complete are dropped. Later ``feed`` calls are ignored
        and ``flush`` returns nothing; after the stream has already ended,
        ``abort`` does nothing and returns ``[]``.
        """
        self._ensure_builder().fail("aborted", reason)
        return self._drain()

    # ------------------------------------------------------------------
    # Framing

    def _head_bytes(self, chunk: bytes) -> None:
        """Bytes before the framing is known: kept (under ``_HEAD_BYTES``)
        until `sniff_framing` can tell. Once it has waited for a first line
        longer than ``2 * QUOTED`` (only a JSON line makes it wait that long),
        it is asked again only when a line ends; a chunk that reaches the
        bound decides. So this is O(len(chunk))."""
        head = self._head
        if not head.strip():  # only spaces so far: at most QUOTED of them
            chunk = bytes(head) + chunk
            chunk = chunk[blank_prefix(chunk) :]  # blank lines mean nothing in any framing
            head.clear()
            if not chunk:
                return
        if len(head) + len(chunk) < _HEAD_BYTES:
            waited = len(head) > 2 * QUOTED
            head += chunk
            if waited and b"\n" not in chunk:
                return
            probe, rest = bytes(head), b""
            framing = sniff_framing(probe, False)
            if framing is None:
                return
            data = probe
        else:
            data, rest = bytes(head), chunk
            probe = data + chunk[: _HEAD_BYTES - len(data)]
            framing = sniff_framing(probe, True)
            assert framing is not None
        self._head = bytearray()
        if self._use_framing(framing, probe):
            self._frame(data)
            if rest and not self.closed:
                self._frame(rest)

    def _use_framing(self, framing: str, head: bytes) -> bool:
        """Build the framer; bind an explicit api that reads this framing.
        False when the bytes are no stream at all (the stream has ended)."""
        factory = FRAMERS.get(framing)
        if factory is None:
            self._fail("protocol", _not_a_stream(framing, first_line(head)))
            return False
        self._framing = framing
        self._framer = factory(self._max_event_bytes)
        forced = self._forced
        if forced is not None and DECODERS[forced].reads(framing):
            self._bind(forced)
        return True

    def _frame(self, chunk: bytes) -> None:
        """Frame and interpret ``chunk``; called once `_framer` is set (no
        assert here: this runs for every chunk)."""
        if len(chunk) > _SLICE:
            self._frame_slices(chunk)
            return
        try:
            self._interpret_all(self._framer.feed(chunk))  # type: ignore[union-attr]
        except FramingError as exc:
            self._framing_failed(exc)

    def _frame_slices(self, chunk: bytes) -> None:
        """`_frame` for a long chunk: a slice at a time, each slice's raw
        events interpreted before the next is framed, so that what waits
        between framer and decoder is one slice's events (a chunk's worth
        only of the output, which `feed` returns)."""
        for start in range(0, len(chunk), _SLICE):
            self._frame(chunk[start : start + _SLICE])
            if self.closed:
                return

    def _framing_failed(self, exc: FramingError) -> None:
        self._interpret_all(exc.events)
        if exc.kind == "limit" and exc.code:
            self._fail_limit(exc.code, exc.reason)
        else:
            self._fail(exc.kind, exc.reason, exc.code)

    def _end_of_bytes(self) -> None:
        """No more bytes: a final event without its terminator counts when
        its data is complete (DESIGN.md §5)."""
        if self.closed:
            return
        if self._framer is None:
            head, self._head = bytes(self._head), bytearray()
            framing = sniff_framing(head, True) if head else None
            if framing is None or not self._use_framing(framing, head):
                return
            self._frame(head)
        assert self._framer is not None
        try:
            events = self._framer.flush()
        except FramingError as exc:
            self._framing_failed(exc)
            return
        self._interpret_all(events)
        pending = self._framer.pending()
        if pending is not None and not self.closed:
            self._interpret(pending[0], pending[1], True)

    # ------------------------------------------------------------------
    # Builder and decoder

    def _bind(self, api: str) -> None:
        decoder_class = DECODERS[api]
        self._builder = MessageBuilder(
            api,
            model=self._model,
            provider=self._provider,
            stop_table=decoder_class.stop_table,
            blocks_end_implicitly=decoder_class.blocks_end_implicitly,
            keep_content=self._keep_content,
        )
        self._decoder = decoder_class(self._builder, self._choice)
        self._api = api

    def _ensure_builder(self, api: str | None = None) -> MessageBuilder:
        if self._builder is None:
            # No decoder: a builder that can only carry a terminal error.
            self._builder = MessageBuilder(
                self._forced or api or UNKNOWN_API,
                model=self._model,
                provider=self._provider,
                stop_table={},
            )
        return self._builder

    def _fail(self, kind: str, reason: str, code: str | None = None) -> None:
        self._ensure_builder().fail(kind, reason, code)

    def _drain(self) -> list[Event]:
        if self._builder is None:
            return []
        events, self._builder.events = self._builder.events, []
        return events

    # ------------------------------------------------------------------
    # Payloads

    def _interpret_all(self, events: list[RawEvent]) -> None:
        """Interpret framed events in order, until the stream ends.

        The hot loop of every stream. Once the api is known and the first
        payload checked, and when jiter's own checks are enough
        (`_json.fast_parser`), a payload that jiter reads as a JSON object
        goes from the event's bytes straight to the provider decoder; anything
        else (``[DONE]``, an array, whatever jiter refuses) takes `_interpret`,
        which decides and words what it is.
        """
        parse = self._parse
        decoder = self._decoder if self._payloads else None
        for name, data, _, _ in events:
            if decoder is not None and parse is not None:
                try:
                    payload = parse(data, allow_inf_nan=False)
                except ValueError:
                    payload = None
                if type(payload) is dict:  # (checked after: cheaper than a look at data[0])
                    try:
                        decoder.handle(name, payload)
                    except Exception as exc:
                        self._decoder_failed(exc, data)
                    if decoder.builder.closed:
                        return
                    continue
            self._interpret(name, data, False)
            if self.closed:
                return
            decoder = self._decoder if self._payloads else None

    def _decoder_failed(self, exc: Exception, data: bytes | str) -> None:
        """A decoder bug must not end the caller's stream: a diagnostic."""
        assert self._builder is not None
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        self._builder.diagnostic("decoder_error", f"{type(exc).__name__}: {exc}", text)

    def _interpret(self, name: str, raw: bytes | str, final: bool) -> None:
        """One event's data, on the general path. ``final`` marks the
        unterminated last event, which counts only when its data is complete."""
        data = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        if data[:1] != "{":  # almost every payload is an object: skip these checks
            data = data.strip()
            if not data:
                return
            if data.startswith("[DONE]"):
                if self._decoder is not None:
                    self._decoder.done_marker()
                return
        try:
            payload = _json.loads(data, max_depth=self._max_json_depth)
        except _json.JSONDepthError:
            self._payloads += 1
            self._fail_limit(
                "max_json_depth",
                f"a payload nests deeper than max_json_depth ({self._max_json_depth})",
            )
            return
        except _json.JSONDecodeError as exc:
            if final:
                return  # cut mid-way: discarded, as the spec says
            self._payloads += 1
            if self._payloads == 1:
                self._fail("protocol", f"the first payload is not JSON: {exc}")
            else:
                self._ensure_builder().diagnostic("invalid_json", str(exc), data)
            return
        self._payloads += 1
        if not isinstance(payload, dict):
            if self._decoder is None:
                self._fail("protocol", f"the first payload is not a JSON object: {data[:200]!r}")
            else:
                self._ensure_builder().diagnostic(
                    "invalid_json", "payload is not a JSON object", data
                )
            return
        if self._payloads == 1 and not self._first_payload(name, payload, data):
            return
        self._handle(name, payload, data)

    def _handle(self, name: str, payload: dict[str, Any], data: str) -> None:
        assert self._decoder is not None
        try:
            self._decoder.handle(name, payload)
        except Exception as exc:
            self._decoder_failed(exc, data)

    def _first_payload(self, name: str, payload: dict[str, Any], data: str) -> bool:
        """Decide the api from the first payload. True when its decoder is
        bound and takes the payload; otherwise the stream has ended."""
        api = detect_api(payload, name, self._framing or "sse")
        forced = self._forced
        if api is None and forced in BEDROCK_APIS and (error := bedrock_error(payload)):
            self._upstream_error_body({"error": error})
            return False
        if api == "error" and forced is None and self._framing == "eventstream":
            api = detect_frame_api(name)  # an exception frame first: Converse reads it
        elif api == "error":
            # An error body: the api's decoder reads its own error shape;
            # anything it leaves open ends as an upstream error all the same.
            if self._decoder is not None and forced is not None:
                self._handle(name, payload, data)
            self._upstream_error_body(payload)
            return False
        framing = _FRAMING_NAMES.get(self._framing or "", "this framing")
        if self._framing in ("json", "ndjson") and self._whole_response(payload):
            return False
        if forced is not None and api not in (None, "error", forced):
            self._fail(
                "protocol",
                f"the stream looks like {api} ({framing}), not {forced}: {data[:200]!r}",
            )
            return False
        if self._decoder is not None:
            return True
        if forced is not None:
            self._fail("protocol", f"the input is {framing}, which {forced} does not use")
            return False
        if api is None or api not in DECODERS:
            self._fail("protocol", f"no known wire api matches the first payload: {data[:200]!r}")
            return False
        if not DECODERS[api].reads(self._framing):
            self._fail("protocol", f"the stream looks like {api}, but arrives as {framing}")
            return False
        self._bind(api)
        return True

    def _whole_response(self, payload: dict[str, Any]) -> bool:
        """A non-streaming response body fed as a stream (a request made
        without ``stream``): ends the stream with ``Error(protocol)`` pointing
        at ``decode_response``, which reads it. False when ``payload`` is no
        such body."""
        api = response_api_of(payload)
        if api is None or api == "error" or (self._decoder is not None and api == self._api):
            return False
        self._fail(
            "protocol",
            f"the input is a non-streaming {api} response (a single JSON document), "
            f"not a stream: read it with streamnorm.decode_response(body, {api!r})",
        )
        return True

    def _upstream_error_body(self, payload: dict[str, Any]) -> None:
        """An error object fed instead of a stream (HTTP error bodies)."""
        error = payload.get("error")
        reason, _ = error_of(error)
        builder = self._ensure_builder(error_body_api(payload, self._framing))
        retry_after = body_retry_after(error)
        builder.fail(
            "upstream", reason, error_code(error), retry_after, error_type=error_type_of(error)
        )

    def _no_payload(self) -> None:
        """End of input before any usable payload."""
        if self._blank:
            self._fail("truncated", "the stream ended before any event")
        else:
            self._fail("truncated", "the stream ended before its first complete event")

    def _source_failed(self, exc: BaseException) -> list[Event]:
        """The byte source raised: the bytes received are interpreted as at
        ``flush`` (a complete final event still counts), then the stream ends
        with ``Error(truncated)`` naming the exception, unless those bytes
        had already ended it. A stop value without its terminal event is not
        enough here: the transport failed, the stream did not end."""
        if self._flushed:
            return []
        self._flushed = True
        self._end_of_bytes()
        self._fail("truncated", f"the byte source failed: {type(exc).__name__}: {exc}")
        return self._drain()

    def _fail_limit(self, limit: str, reason: str) -> None:
        self._fail("limit", reason, limit)


def _check_options(
    model: object,
    provider: object,
    choice: object,
    max_event_bytes: object,
    max_stream_bytes: object,
    max_json_depth: object,
) -> None:
    """Raise ``TypeError``/``ValueError`` naming the first bad option."""
    for name, value in (("model", model), ("provider", provider)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a str or None, not {type(value).__name__}")
    counts = (
        ("choice", choice, 0),
        ("max_event_bytes", max_event_bytes, 1),
        ("max_stream_bytes", max_stream_bytes, 0),
        ("max_json_depth", max_json_depth, 0),
    )
    for name, value, least in counts:
        if value is None and name == "max_stream_bytes":
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if value < least:
            raise ValueError(f"{name} must be >= {least}, got {value}")


def _as_bytes(chunk: object) -> bytes:
    """A chunk that is not ``bytes``: a bytearray or memoryview copied once;
    anything else (a ``str``, an int from iterating a ``bytes`` object) is
    the caller's mistake, refused with a ``TypeError`` saying what to pass."""
    if isinstance(chunk, (bytearray, memoryview)):
        return bytes(chunk)
    if isinstance(chunk, str):
        raise TypeError(
            "a chunk must be bytes, not str: pass the raw bytes off the socket "
            "(or text.encode('utf-8'))"
        )
    raise TypeError(f"a chunk must be bytes, bytearray or memoryview, not {type(chunk).__name__}")


def _chunks_of(chunks: object) -> Any:
    """The chunk source of `normalize`/`anormalize`: a whole stream given as
    one ``bytes``/``bytearray``/``memoryview`` is one chunk (iterating it would
    give ints); a ``str`` is refused with a ``TypeError`` saying what to pass.
    Checked once, at the call: the per-chunk path stays as it was."""
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        return (chunks,)
    if isinstance(chunks, str):
        raise TypeError(
            "normalize() reads bytes, not str: pass the raw bytes of the stream "
            "(samples.read() and files opened in 'rb' mode give them) or an iterable of "
            "byte chunks"
        )
    return chunks


def _not_a_stream(framing: str, quoted: bytes) -> str:
    if framing == "eventstream":
        return "the input is an AWS event stream, which no installed decoder reads"
    if framing == "binary":
        return f"the input is binary data, not a stream: {quoted!r}"
    return f"the input is not a stream: {quoted!r}"


def normalize(
    chunks: Iterable[bytes] | bytes | bytearray | memoryview,
    api: ApiName = "auto",
    *,
    model: str | None = None,
    provider: str | None = None,
    choice: int = 0,
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    max_stream_bytes: int | None = DEFAULT_MAX_STREAM_BYTES,
    max_json_depth: int = DEFAULT_MAX_JSON_DEPTH,
    keep_content: bool = True,
    raise_source_errors: bool = False,
) -> Iterator[Event]:
    """Normalize a stream given as any iterable of byte chunks, or as the
    bytes of the whole stream (one chunk).

    Yields every event, exactly one terminal event last. Iteration of
    ``chunks`` stops as soon as the terminal event has been produced.

    The arguments are checked when ``normalize`` is called, before the first
    event is asked for: an unknown api or option, or a bad value, raises here.
    The options are those of :class:`StreamNormalizer`.

    An ``Exception`` raised by ``chunks`` (a dropped connection, a read
    timeout) ends the events with ``Error(kind="truncated")`` whose
    ``reason`` names the exception and whose message holds everything
    received; the exception itself is swallowed, or re-raised right after
    that event with ``raise_source_errors=True``. ``BaseException``s that are
    not ``Exception``s (``KeyboardInterrupt``, ``GeneratorExit``) propagate
    untouched. Exceptions thrown into this generator by its consumer are not
    source errors and propagate too.
    """
    normalizer = StreamNormalizer(
        api,
        model,
        provider=provider,
        choice=choice,
        max_event_bytes=max_event_bytes,
        max_stream_bytes=max_stream_bytes,
        max_json_depth=max_json_depth,
        keep_content=keep_content,
    )
    return _normalize(normalizer, _chunks_of(chunks), raise_source_errors)


def _normalize(
    normalizer: StreamNormalizer, chunks: Iterable[bytes], raise_source_errors: bool
) -> Iterator[Event]:
    source = iter(chunks)
    while not normalizer.closed:
        try:
            chunk = next(source)
        except StopIteration:
            break
        except Exception as exc:
            yield from normalizer._source_failed(exc)
            if raise_source_errors:
                raise
            return
        yield from normalizer.feed(chunk)
    yield from normalizer.flush()


def anormalize(
    chunks: AsyncIterable[bytes] | Iterable[bytes] | bytes | bytearray | memoryview,
    api: ApiName = "auto",
    *,
    model: str | None = None,
    provider: str | None = None,
    choice: int = 0,
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    max_stream_bytes: int | None = DEFAULT_MAX_STREAM_BYTES,
    max_json_depth: int = DEFAULT_MAX_JSON_DEPTH,
    keep_content: bool = True,
    raise_source_errors: bool = False,
) -> AsyncIterator[Event]:
    """Async twin of :func:`normalize`, over an async (or plain) iterable.

    Arguments are checked at the call and source errors handled as by
    :func:`normalize`.

    Cancellation: when the task running this generator is cancelled while
    it awaits ``chunks``, the stream ends with ``Error(kind="aborted")``
    (preceded by a ``BlockEnd`` for every open block) carrying the partial
    message, and the cancellation is *not* swallowed:

    * the generator asks for the task's cancellation again before it yields
      those events (``Task.uncancel()`` then ``Task.cancel()``, so the
      cancellation count that ``asyncio.timeout`` and ``TaskGroup`` rely on
      is unchanged). The consumer receives the events from the
      ``__anext__`` calls it makes without suspending; its next suspension
      (any ``await`` that does not complete at once) raises
      ``CancelledError``, and a task that finishes without suspending ends
      cancelled all the same;
    * if the consumer asks for more after the ``Error``, that request
      raises ``CancelledError``.

    When the consumer itself is cancelled while it handles an event (the
    generator suspended at ``yield``), the generator sees only ``aclose()``
    and emits nothing more.
    """
    normalizer = StreamNormalizer(
        api,
        model,
        provider=provider,
        choice=choice,
        max_event_bytes=max_event_bytes,
        max_stream_bytes=max_stream_bytes,
        max_json_depth=max_json_depth,
        keep_content=keep_content,
    )
    return _anormalize(normalizer, _chunks_of(chunks), raise_source_errors)


async def _anormalize(
    normalizer: StreamNormalizer,
    chunks: AsyncIterable[bytes] | Iterable[bytes],
    raise_source_errors: bool,
) -> AsyncIterator[Event]:
    if isinstance(chunks, AsyncIterable):
        source = aiter(chunks)
        while not normalizer.closed:
            try:
                chunk = await anext(source)
            except StopAsyncIteration:
                break
            except asyncio.CancelledError as exc:
                again = _cancel_again(exc)
                for event in normalizer.abort(_cancel_reason(exc)):
                    yield event
                if not again:
                    raise
                # Asked for more: the cancellation requested again is
                # delivered here, once. Had the consumer already received and
                # handled it, the stream is simply over.
                await asyncio.sleep(0)
                return
            except Exception as exc:
                for event in normalizer._source_failed(exc):
                    yield event
                if raise_source_errors:
                    raise
                return
            for event in normalizer.feed(chunk):
                yield event
    else:
        sync_source = iter(chunks)
        while not normalizer.closed:
            try:
                chunk = next(sync_source)
            except StopIteration:
                break
            except Exception as exc:
                for event in normalizer._source_failed(exc):
                    yield event
                if raise_source_errors:
                    raise
                return
            for event in normalizer.feed(chunk):
                yield event
    for event in normalizer.flush():
        yield event


def _cancel_reason(exc: asyncio.CancelledError) -> str:
    detail = f": {exc.args[0]}" if exc.args and exc.args[0] else ""
    return f"the task was cancelled{detail}"


def _cancel_again(exc: asyncio.CancelledError) -> bool:
    """Re-request the cancellation that ``exc`` delivered, so that catching
    it here to emit the final events cannot swallow it. False when there is
    no asyncio task to ask (the caller then re-raises ``exc``)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running asyncio loop (another event loop library)
        return False
    if task is None:
        return False
    uncancel = getattr(task, "uncancel", None)  # Python 3.11+
    if uncancel is not None:
        uncancel()
    task.cancel(exc.args[0] if exc.args else None)
    return True
