"""Tests for streamnorm.sse, the WHATWG event-stream decoder.

The spec vectors below are written from the HTML standard's "Interpreting an
event stream" section. Every vector is decoded whole, at every 2-way split, one
byte at a time and under generated chunkings, and must give the same events
every time. Property tests compare the decoder with a literal, per-character
transcription of the spec on generated inputs.
"""

from __future__ import annotations

import pickle
import tracemalloc
from collections.abc import Iterable, Sequence
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamnorm.sse import Comment, ServerSentEvent, SSEDecoder, SSELimitError

Item = ServerSentEvent | Comment


def E(data: str, event: str = "message", id: str = "", retry: int | None = None) -> ServerSentEvent:
    return ServerSentEvent(event=event, data=data, id=id, retry=retry)


# -- driving the decoder ----------------------------------------------------


def chunks_at(raw: bytes, cuts: Iterable[int]) -> list[bytes]:
    """`raw` cut at the given offsets (duplicates give empty chunks)."""
    out = []
    prev = 0
    for cut in sorted(cuts):
        out.append(raw[prev:cut])
        prev = cut
    out.append(raw[prev:])
    return out


#: How a test feeds the decoder: `feed`, `feed_raw` (which reads whole blocks
#: where `feed` reads lines), or the two in turn, chunk by chunk (every switch
#: between the two ways of reading).
MODES = ("feed", "feed_raw", "alternating")


def cooked(items: list[Any]) -> list[Item]:
    """`feed_raw` items as `feed` returns them."""
    return [
        ServerSentEvent(i[0], i[1].decode("utf-8", "replace"), i[2], i[3])
        if isinstance(i, tuple)
        else i
        for i in items
    ]


def feed_in(decoder: SSEDecoder[Any], chunk: bytes, mode: str, n: int) -> list[Item]:
    """Feed the `n`-th chunk the way `mode` says; items as `feed` returns them."""
    if mode == "feed" or (mode == "alternating" and n % 2):
        return decoder.feed(chunk)
    raw: list[Any] = decoder.feed_raw(chunk)
    assert all(type(i[1]) is bytes for i in raw if isinstance(i, tuple))
    return cooked(raw)


def decode(
    chunks: Iterable[bytes],
    *,
    comments: bool = False,
    max_line_bytes: int = 1 << 24,
    mode: str = "feed",
) -> tuple[list[Item], ServerSentEvent | None]:
    decoder = SSEDecoder(comments=comments, max_line_bytes=max_line_bytes)
    out: list[Item] = []
    for n, chunk in enumerate(chunks):
        out += feed_in(decoder, chunk, mode, n)
    out += decoder.flush()
    return out, decoder.pending()


def outcome(
    chunks: Iterable[bytes], *, comments: bool = True, max_line_bytes: int, mode: str = "feed"
) -> tuple[list[Item], str | None, ServerSentEvent | None]:
    """Everything a caller gets: items (incl. those carried by the error), error part, pending."""
    decoder = SSEDecoder(comments=comments, max_line_bytes=max_line_bytes)
    out: list[Item] = []
    try:
        for n, chunk in enumerate(chunks):
            out += feed_in(decoder, chunk, mode, n)
        out += decoder.flush()
    except SSELimitError as e:
        return out + cooked(e.events), e.part, None
    return out, None, decoder.pending()


# -- a literal transcription of the spec, one character at a time ------------


@dataclass
class _Buffers:
    data: str = ""
    event: str = ""
    id: str = ""
    retry: int | None = None  # the reconnection time set in the current block


def reference(raw: bytes, *, comments: bool = False) -> tuple[list[Item], ServerSentEvent | None]:
    """The spec's algorithm, written for clarity, not speed; no limits."""
    text = raw.decode("utf-8", "replace")  # the spec's "UTF-8 decode"...
    if text.startswith("\ufeff"):  # ...which strips one leading BOM
        text = text[1:]
    lines: list[str] = []
    current = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\r":
            lines.append(current)
            current = ""
            if i + 1 < len(text) and text[i + 1] == "\n":
                i += 1
        elif ch == "\n":
            lines.append(current)
            current = ""
        else:
            current += ch
        i += 1

    out: list[Item] = []
    state = _Buffers()

    def process(line: str) -> None:
        if line.startswith(":"):
            if comments:
                out.append(Comment(line[1:]))
            return
        if ":" in line:
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        if name == "event":
            state.event = value
        elif name == "data":
            state.data += value + "\n"
        elif name == "id":
            if "\0" not in value:
                state.id = value
        elif name == "retry" and value and set(value) <= set("0123456789"):
            n = int(value)
            state.retry = n if n < 2**63 else state.retry  # beyond the spec: huge ones ignored

    def dispatch() -> ServerSentEvent | None:
        data = state.data
        event = None
        if data:
            if data.endswith("\n"):
                data = data[:-1]
            event = E(data, state.event or "message", state.id, state.retry)
        state.data = ""
        state.event = ""
        state.retry = None
        return event

    for line in lines:
        if line == "":
            event = dispatch()
            if event is not None:
                out.append(event)
        else:
            process(line)
    # What the unfinished final block would have been (the spec discards it).
    if current:
        comments_before = len(out)
        process(current)
        del out[comments_before:]  # an unterminated comment is not returned
    return out, dispatch()


# -- spec vectors ------------------------------------------------------------


@dataclass(frozen=True)
class Vector:
    name: str
    raw: bytes
    events: Sequence[Item]
    pending: ServerSentEvent | None = None
    comments: bool = False
    tags: tuple[str, ...] = field(default=())


VECTORS = [
    # fields and values
    Vector("simple", b"data: hello\n\n", [E("hello")]),
    Vector("no space after colon", b"data:hello\n\n", [E("hello")]),
    Vector("only one leading space removed", b"data:  hello\n\n", [E(" hello")]),
    Vector("tab is not a space", b"data:\thello\n\n", [E("\thello")]),
    Vector("trailing spaces kept", b"data: a  \n\n", [E("a  ")]),
    Vector("colons in the value", b"data: a:b: c\n\n", [E("a:b: c")]),
    Vector("multi-line data joined by LF", b"data: a\ndata: b\ndata: c\n\n", [E("a\nb\nc")]),
    Vector("spec example YHOO", b"data: YHOO\ndata: +2\ndata: 10\n\n", [E("YHOO\n+2\n10")]),
    Vector("empty value dispatches empty data", b"data:\n\n", [E("")]),
    Vector("space-only value", b"data: \n\n", [E("")]),
    Vector("data without colon", b"data\n\n", [E("")]),
    Vector("two empty data lines", b"data\ndata\n\n", [E("\n")]),
    Vector("trailing empty data line", b"data: a\ndata\n\n", [E("a\n")]),
    Vector("leading empty data line", b"data\ndata: a\n\n", [E("\na")]),
    Vector(
        "spec example: empty data",
        b"data\n\ndata\ndata\n\ndata:",
        [E(""), E("\n")],
        pending=E(""),
    ),
    Vector("spec example: same event twice", b"data:test\n\ndata: test\n\n", [E("test")] * 2),
    Vector("NUL in data kept", b"data: a\x00b\n\n", [E("a\x00b")]),
    Vector("field names are case-sensitive", b"Data: x\n\nDATA: y\n\n", []),
    Vector("space before colon is part of the name", b"data : x\n\n", []),
    Vector("unknown fields ignored", b"foo: bar\ndata: x\nbaz\n\n", [E("x")]),
    # event type
    Vector("event type", b"event: add\ndata: x\n\n", [E("x", event="add")]),
    Vector(
        "event type reset after dispatch",
        b"event: add\ndata: x\n\ndata: y\n\n",
        [E("x", event="add"), E("y")],
    ),
    Vector("empty event type is message", b"event:\ndata: x\n\n", [E("x")]),
    Vector("event without data dispatches nothing", b"event: a\n\n", []),
    Vector(
        "event type reset even without dispatch",
        b"event: a\n\ndata: y\n\n",
        [E("y")],
    ),
    Vector("last event line wins", b"event: a\nevent: b\ndata: x\n\n", [E("x", event="b")]),
    Vector("event line after data", b"data: x\nevent: late\n\n", [E("x", event="late")]),
    Vector("event name not trimmed", b"event:  a \ndata: x\n\n", [E("x", event=" a ")]),
    # id
    Vector("id", b"id: 1\ndata: x\n\n", [E("x", id="1")]),
    Vector(
        "id persists across events",
        b"id: 1\ndata: x\n\ndata: y\n\n",
        [E("x", id="1"), E("y", id="1")],
    ),
    Vector(
        "id with NUL ignored",
        b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n",
        [E("a", id="1"), E("b", id="1")],
    ),
    Vector(
        "empty id resets",
        b"id: 1\ndata: a\n\nid\ndata: b\n\nid: 2\ndata: c\n\nid:\ndata: d\n\n",
        [E("a", id="1"), E("b"), E("c", id="2"), E("d")],
    ),
    Vector("id set by a block without data", b"id: 7\n\ndata: x\n\n", [E("x", id="7")]),
    Vector("id after data in the block", b"data: x\nid: 9\n\n", [E("x", id="9")]),
    Vector(
        "spec example: ids",
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
        b"data:  third event\n",
        [E("first event", id="1"), E("second event")],
        pending=E(" third event"),
    ),
    # retry
    Vector("retry", b"retry: 1500\ndata: x\n\n", [E("x", retry=1500)]),
    Vector("retry zero", b"retry: 0\ndata: x\n\n", [E("x", retry=0)]),
    Vector("retry leading zeros", b"retry: 000123\ndata: x\n\n", [E("x", retry=123)]),
    Vector(
        "retry many leading zeros",
        b"retry: " + b"0" * 40 + b"7\ndata: x\n\n",
        [E("x", retry=7)],
    ),
    Vector("retry with unit ignored", b"retry: 15s\ndata: x\n\n", [E("x")]),
    Vector("retry negative ignored", b"retry: -1\ndata: x\n\n", [E("x")]),
    Vector("retry empty ignored", b"retry:\ndata: x\n\nretry\ndata: y\n\n", [E("x"), E("y")]),
    Vector("retry with extra space ignored", b"retry:  10\ndata: x\n\n", [E("x")]),
    Vector(
        "retry non-ASCII digits ignored",
        "retry: ١٢\ndata: x\n\n".encode(),
        [E("x")],
    ),
    Vector("retry too large ignored", b"retry: 99999999999999999999999\ndata: x\n\n", [E("x")]),
    Vector(
        "retry belongs to its block",
        b"retry: 5\ndata: a\n\ndata: b\n\n",
        [E("a", retry=5), E("b")],
    ),
    Vector("retry invalid keeps earlier", b"retry: 5\nretry: x\ndata: a\n\n", [E("a", retry=5)]),
    # comments
    Vector("comment ignored", b": hello\ndata: x\n\n", [E("x")]),
    Vector("comment-only block", b": keep-alive\n\n:\n\n", []),
    Vector(
        "comments exposed",
        b": ping\ndata: x\n\n:\n\n::x\n",
        [Comment(" ping"), E("x"), Comment(""), Comment(":x")],
        comments=True,
    ),
    Vector(
        "unterminated comment not exposed",
        b"data: x\n\n: tail",
        [E("x")],
        comments=True,
    ),
    # line terminators
    Vector("CRLF", b"data: a\r\ndata: b\r\n\r\n", [E("a\nb")]),
    Vector("CR", b"data: a\rdata: b\r\r", [E("a\nb")]),
    # CR LF streams with a lone terminator somewhere (read whole blocks, these
    # take the line interpreter for the blocks that need it)
    Vector(
        "lone LF inside a CR LF block",
        b"event: e\r\ndata: a\nb\r\n\r\ndata: c\r\n\r\n",
        [E("a", event="e"), E("c")],
    ),
    Vector(
        "lone CR inside a CR LF stream",
        b"data: a\rdata: b\r\n\r\ndata: c\r\n\r\n",
        [E("a\nb"), E("c")],
    ),
    Vector(
        "LF blank line after CR LF blocks",
        b"data: a\r\n\r\ndata: b\n\ndata: c\r\n",
        [E("a"), E("b")],
        pending=E("c"),
    ),
    Vector("mixed terminators", b"data: a\r\ndata: b\rdata: c\n\r\n", [E("a\nb\nc")]),
    Vector("LF CR is two line ends", b"data: a\n\rdata: b\n\n", [E("a"), E("b")]),
    Vector("CR CR LF is two line ends", b"data: a\r\r\ndata: b\n\n", [E("a"), E("b")]),
    Vector("final CR terminates", b"data: a\r\r", [E("a")]),
    Vector("lone final CR", b"data: a\r", [], pending=E("a")),
    Vector(
        "other Unicode line breaks are not terminators",
        b"data: a\x0bb\x0cc\x1cd\x1de\x1ef\xc2\x85g\xe2\x80\xa8h\xe2\x80\xa9i\n\n",
        [E("a\x0bb\x0cc\x1cd\x1de\x1ef\x85g\u2028h\u2029i")],
    ),
    Vector("blank lines only", b"\n\n\r\n\r\r\n\n", []),
    Vector("empty input", b"", []),
    Vector("many blank lines after an event", b"data: x\n\n\n\n\n", [E("x")]),
    # BOM
    Vector("BOM stripped", b"\xef\xbb\xbfdata: x\n\n", [E("x")]),
    Vector(
        "only one BOM stripped",
        b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n",
        [E("y")],
    ),
    Vector("BOM only", b"\xef\xbb\xbf", []),
    Vector(
        "BOM later is not stripped",
        b"data: a\n\n\xef\xbb\xbfdata: b\n\n",
        [E("a")],
    ),
    Vector("BOM in a value kept", b"data: \xef\xbb\xbfx\n\n", [E("\ufeffx")]),
    Vector(
        "partial BOM is not a BOM",
        b"\xef\xbbdata: x\n\ndata: y\n\n",
        [E("y")],
    ),
    Vector(
        "BOM then CRLF",
        b"\xef\xbb\xbf\r\ndata: x\r\n\r\n",
        [E("x")],
    ),
    # UTF-8
    Vector("multi-byte characters", "data: € é 🙂 東京\n\n".encode(), [E("€ é 🙂 東京")]),
    Vector("invalid byte becomes U+FFFD", b"data: a\xffb\n\n", [E("a\ufffdb")]),
    Vector("truncated sequence before LF", b"data: \xe2\x82\n\n", [E("\ufffd")]),
    Vector("truncated sequence before colon", b"\xe2\x82:x\ndata: y\n\n", [E("y")]),
    Vector("encoded surrogate", b"data: \xed\xa0\x80\n\n", [E("\ufffd\ufffd\ufffd")]),
    Vector("overlong encoding", b"data: \xc0\xaf\n\n", [E("\ufffd\ufffd")]),
    Vector("stray continuation bytes", b"data: \x80\x80x\n\n", [E("\ufffd\ufffdx")]),
    Vector("invalid bytes in event name", b"event: \xff\ndata: x\n\n", [E("x", event="\ufffd")]),
    Vector("invalid bytes in a field name", b"dat\xff: x\n\n", []),
    Vector("lead byte before LF then data", b"data: \xf0\ndata: \x9f\n\n", [E("\ufffd\n\ufffd")]),
    # end of input
    Vector("unterminated final block discarded", b"data: a\n\ndata: b\n", [E("a")], E("b")),
    Vector(
        "final line without terminator",
        b'data: {"type":"message_stop"}',
        [],
        pending=E('{"type":"message_stop"}'),
    ),
    Vector(
        "final block keeps event, id and retry",
        b"id: 3\nevent: done\nretry: 9\ndata: [DONE]",
        [],
        pending=E("[DONE]", event="done", id="3", retry=9),
    ),
    Vector("final block without data", b"data: a\n\nevent: x\n", [E("a")], pending=None),
    Vector("complete stream has nothing pending", b"data: a\n\n", [E("a")], pending=None),
    Vector("final bare data line", b"data: a\ndata", [], pending=E("a\n")),
    Vector("final retry line", b"data: a\nretry: 5", [], pending=E("a", retry=5)),
    Vector(
        "final line after blank is its own block",
        b"data: a\n\nid: 5",
        [E("a")],
        pending=None,
    ),
]


def _vector_id(v: Vector) -> str:
    return v.name


def test_enough_vectors() -> None:
    assert len(VECTORS) >= 40
    assert len({v.name for v in VECTORS}) == len(VECTORS)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("v", VECTORS, ids=_vector_id)
def test_vector_whole(v: Vector, mode: str) -> None:
    assert decode([v.raw], comments=v.comments, mode=mode) == (list(v.events), v.pending)


@pytest.mark.parametrize("v", VECTORS, ids=_vector_id)
def test_vector_matches_reference(v: Vector) -> None:
    assert reference(v.raw, comments=v.comments) == (list(v.events), v.pending)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("v", VECTORS, ids=_vector_id)
def test_vector_every_two_way_split(v: Vector, mode: str) -> None:
    expected = (list(v.events), v.pending)
    for cut in range(len(v.raw) + 1):
        assert decode(chunks_at(v.raw, [cut]), comments=v.comments, mode=mode) == expected, cut


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("v", VECTORS, ids=_vector_id)
def test_vector_one_byte_at_a_time(v: Vector, mode: str) -> None:
    chunks = [v.raw[i : i + 1] for i in range(len(v.raw))]
    assert decode(chunks, comments=v.comments, mode=mode) == (list(v.events), v.pending)


@st.composite
def vector_and_cuts(draw: st.DrawFn) -> tuple[Vector, list[int]]:
    v = draw(st.sampled_from(VECTORS))
    cuts = draw(st.lists(st.integers(0, len(v.raw)), max_size=12))
    return v, cuts


@settings(max_examples=400, deadline=None)
@given(vector_and_cuts(), st.sampled_from(MODES))
def test_vector_any_chunking(case: tuple[Vector, list[int]], mode: str) -> None:
    v, cuts = case
    expected = (list(v.events), v.pending)
    assert decode(chunks_at(v.raw, cuts), comments=v.comments, mode=mode) == expected


# -- generated inputs ----------------------------------------------------------

TOKENS = [
    b"data", b"data", b"data: ", b"event", b"id", b"retry", b"foo", b"message",
    b":", b":", b": ", b" ", b"  ", b"\t",
    b"\n", b"\n", b"\n\n", b"\r", b"\r\n", b"\r\n\r\n",
    b"x", b"[DONE]", b'{"a": 1}', b"0", b"12", b"007",
    b"\x00", b"\xef\xbb\xbf", b"\xef", b"\xbb", b"\xbf", b"\xe2\x82", b"\xac", b"\xff",
    b"\xc3", b"\xa9", b"\xf0\x9f\x99\x82", b"\xf0\x9f", b"\x0b", b"\xc2\x85", b"\xe2\x80\xa8",
]  # fmt: skip

sse_bytes = st.lists(st.sampled_from(TOKENS), max_size=50).map(b"".join)
any_bytes = st.binary(max_size=200)


@st.composite
def bytes_and_cuts(draw: st.DrawFn, source: st.SearchStrategy[bytes]) -> tuple[bytes, list[int]]:
    raw = draw(source)
    return raw, draw(st.lists(st.integers(0, len(raw)), max_size=10))


@settings(max_examples=500, deadline=None)
@given(bytes_and_cuts(sse_bytes), st.booleans(), st.sampled_from(MODES))
def test_matches_reference_under_any_chunking(
    case: tuple[bytes, list[int]], comments: bool, mode: str
) -> None:
    raw, cuts = case
    expected = reference(raw, comments=comments)
    assert decode([raw], comments=comments, mode=mode) == expected
    assert decode(chunks_at(raw, cuts), comments=comments, mode=mode) == expected


@settings(max_examples=300, deadline=None)
@given(bytes_and_cuts(any_bytes), st.booleans(), st.sampled_from(MODES))
def test_arbitrary_bytes_match_reference(
    case: tuple[bytes, list[int]], comments: bool, mode: str
) -> None:
    raw, cuts = case
    expected = reference(raw, comments=comments)
    assert decode(chunks_at(raw, cuts), comments=comments, mode=mode) == expected


@settings(max_examples=150, deadline=None)
@given(sse_bytes, st.sampled_from(MODES))
def test_one_byte_at_a_time_matches_whole(raw: bytes, mode: str) -> None:
    chunks = [raw[i : i + 1] for i in range(len(raw))]
    assert decode(chunks, mode=mode) == decode([raw])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bytes_and_cuts(sse_bytes), st.integers(1, 40), st.booleans(), st.sampled_from(MODES))
def test_limits_are_chunking_invariant(
    case: tuple[bytes, list[int]], limit: int, comments: bool, mode: str
) -> None:
    """Same events, same error (or none) and same pending, however the input is
    cut and whichever way it is fed."""
    raw, cuts = case
    whole = outcome([raw], max_line_bytes=limit, comments=comments)
    assert (
        outcome(chunks_at(raw, cuts), max_line_bytes=limit, comments=comments, mode=mode) == whole
    )
    one_by_one = [raw[i : i + 1] for i in range(len(raw))]
    assert outcome(one_by_one, max_line_bytes=limit, comments=comments, mode=mode) == whole
    if whole[1] is None:  # within the limit, the limit changes nothing
        assert (whole[0], whole[2]) == decode([raw], comments=comments)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=100), st.lists(st.integers(0, 100), max_size=8))
def test_decoding_pieces_cut_at_ascii_equals_decoding_whole(raw: bytes, cuts: list[int]) -> None:
    """The premise of decoding field values separately: UTF-8 resynchronises at ASCII."""
    # Cuts right before or right after an ASCII byte, as the parser makes them.
    edges = sorted({j for i, b in enumerate(raw) if b < 0x80 for j in (i, i + 1)})
    cut_at = sorted({edges[c % len(edges)] for c in cuts}) if edges else []
    pieces = chunks_at(raw, cut_at)
    assert "".join(p.decode("utf-8", "replace") for p in pieces) == raw.decode("utf-8", "replace")


# Streams shaped like those of LLM APIs: blocks of a few kinds, most of them one
# "event: TYPE" line and one "data: VALUE" line, with types from a small pool so
# that they repeat, as they do on the wire.
EVENT_TYPES = [
    b"content_block_delta", b"message_delta", b"ping", b"", b"caf\xc3\xa9", b"bad\xff",
    b" spaced ", b"x" * 200, b"response.output_text.delta", b"message",
]  # fmt: skip
VALUES = [b"", b"x", b'{"type":"text_delta","text":"hi"}', b"\xe6\x9d\xb1", b"a\xffb", b" lead"]


@st.composite
def api_block(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 9))
    type_ = draw(st.sampled_from(EVENT_TYPES))
    value = draw(st.sampled_from(VALUES))
    if kind < 4:
        return b"event: " + type_ + b"\ndata: " + value + b"\n\n"
    if kind < 6:
        return b"data: " + value + b"\n\n"
    if kind == 6:  # multi-line data, a type after the data, an id
        more = draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=4))
        lines = b"".join(b"data: " + v + b"\n" for v in [value, *more])
        return lines + b"event: " + type_ + b"\nid: 7\n\n"
    if kind == 7:
        return b"retry: 250\nevent:" + type_ + b"\ndata:" + value + b"\n\n"
    if kind == 8:
        return b": ping\n\n"
    return b"event: " + type_ + b"\n\n"  # no data: no event


@st.composite
def api_stream_and_cuts(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    raw = b"".join(draw(st.lists(api_block(), max_size=30)))
    raw += draw(st.sampled_from([b"", b"event: ping\ndata: tail", b"data: x\n"]))
    if draw(st.booleans()):
        raw = raw.replace(b"\n", b"\r\n")
    return raw, draw(st.lists(st.integers(0, len(raw)), max_size=12))


@settings(max_examples=300, deadline=None)
@given(api_stream_and_cuts(), st.booleans(), st.sampled_from(MODES))
def test_api_like_streams_match_reference(
    case: tuple[bytes, list[int]], comments: bool, mode: str
) -> None:
    raw, cuts = case
    expected = reference(raw, comments=comments)
    assert decode([raw], comments=comments, mode=mode) == expected
    assert decode(chunks_at(raw, cuts), comments=comments, mode=mode) == expected
    one_by_one = [raw[i : i + 1] for i in range(len(raw))]
    assert decode(one_by_one, comments=comments, mode=mode) == expected


@pytest.mark.parametrize("mode", MODES)
def test_many_event_types_match_reference(mode: str) -> None:
    """More distinct types than a decoder remembers, long ones, each seen again later."""
    types = [f"type-{i}".encode() for i in range(150)]
    types += [b"t" * 127, b"u" * 128, b"v" * 5000, b"", b"\xff\xfe", "東京".encode()]
    raw = b"".join(b"event: " + t + b"\ndata: " + t[:20] + b"\n\n" for t in types * 3)
    expected = reference(raw)
    assert len(expected[0]) == len(types) * 3
    for size in (len(raw), 4096, 100, 7):
        chunks = [raw[i : i + size] for i in range(0, len(raw), size)]
        assert decode(chunks, mode=mode) == expected


@pytest.mark.parametrize("mode", ["feed", "feed_raw"])
def test_remembered_event_types_stay_bounded(mode: str) -> None:
    decoder = SSEDecoder()
    for i in range(1000):
        feed_in(
            decoder,
            b"event: t%d\ndata: x\n\nevent: %s\ndata: y\n\n" % (i, b"L" * (200 + i)),
            mode,
            0,
        )
    assert 0 < len(decoder._types) <= 64
    assert max(map(len, decoder._types)) <= 128


def test_feed_raw_gives_the_data_undecoded() -> None:
    decoder = SSEDecoder()
    raw = b'event: delta\ndata: {"t":"\xe6\x9d\xb1"}\n\nid: 4\ndata: a\xffb\ndata: c\n\ndata: x'
    assert decoder.feed_raw(raw) == [
        ("delta", b'{"t":"\xe6\x9d\xb1"}', "", None),
        ("message", b"a\xffb\nc", "4", None),
    ]
    assert decoder.feed_raw(b"\r\n\r\n") == [("message", b"x", "4", None)]
    with pytest.raises(SSELimitError) as info:
        SSEDecoder(max_line_bytes=10).feed_raw(b"data: a\n\ndata: 0123456789\n\n")
    assert info.value.events == [("message", b"a", "", None)]


# -- limits ----------------------------------------------------------------------


def test_limit_error_attributes() -> None:
    decoder = SSEDecoder(max_line_bytes=10)
    with pytest.raises(SSELimitError) as info:
        decoder.feed(b"data: 0123456789")
    err = info.value
    assert (err.limit, err.value, err.part, err.events) == ("max_line_bytes", 10, "line", [])
    assert "max_line_bytes=10" in str(err)
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.limit, copy.value, copy.part, copy.events) == ("max_line_bytes", 10, "line", [])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("step", [1, 3, 7, 100])
def test_unterminated_line_fails_as_soon_as_it_is_too_long(step: int, mode: str) -> None:
    limit = 50
    raw = b"data: " + b"x" * 200
    decoder = SSEDecoder(max_line_bytes=limit)
    fed = 0
    with pytest.raises(SSELimitError) as info:
        for i in range(0, len(raw), step):
            feed_in(decoder, raw[i : i + step], mode, i)
            fed += len(raw[i : i + step])
    assert info.value.part == "line"
    assert fed <= limit < fed + step  # failed in the first chunk that went over


@pytest.mark.parametrize("terminator", [b"\n", b"\r", b"\r\n"])
def test_line_exactly_at_the_limit_passes(terminator: bytes) -> None:
    line = b"data: " + b"x" * 44  # 50 bytes
    for chunks in (
        [line + terminator * 2],
        [line, terminator * 2],
        [line[:7], line[7:], terminator * 2],
    ):
        assert decode(chunks, max_line_bytes=50)[0] == [E("x" * 44)]
        with pytest.raises(SSELimitError):
            decode(chunks, max_line_bytes=49)


def test_complete_long_line_inside_a_chunk_fails_after_earlier_events() -> None:
    raw = b"data: a\n\ndata: b\n\n" + b"data: " + b"y" * 100 + b"\n\ndata: c\n\n"
    with pytest.raises(SSELimitError) as info:
        SSEDecoder(max_line_bytes=50).feed(raw)
    assert info.value.part == "line"
    assert info.value.events == [E("a"), E("b")]


def test_comment_and_unknown_lines_count_too() -> None:
    with pytest.raises(SSELimitError):
        SSEDecoder(max_line_bytes=8).feed(b": a long comment\n")
    with pytest.raises(SSELimitError):
        SSEDecoder(max_line_bytes=8).feed(b"unknown-field\n")


def test_data_limit_counts_joined_data() -> None:
    # Two lines of 30 data bytes each: the data is 30 + 1 + 30 = 61 bytes.
    raw = b"data: " + b"a" * 30 + b"\ndata: " + b"b" * 30 + b"\n\n"
    assert decode([raw], max_line_bytes=61)[0] == [E("a" * 30 + "\n" + "b" * 30)]
    for chunks in ([raw], [raw[i : i + 1] for i in range(len(raw))]):
        with pytest.raises(SSELimitError) as info:
            decode(chunks, max_line_bytes=60)
        assert info.value.part == "data"


def test_data_limit_with_many_short_lines() -> None:
    limit = 200_000  # the data buffer is folded several times before the limit
    line = b"data: ab\n"  # n such lines make 3 * n - 1 bytes of data
    n = (limit + 1) // 3
    at_limit = line * n + b"\n"
    assert 3 * n - 1 == limit
    chunks = [at_limit[i : i + 4096] for i in range(0, len(at_limit), 4096)]
    assert decode(chunks, max_line_bytes=limit)[0] == [E("\n".join(["ab"] * n))]
    over = line * (n + 1) + b"\n"
    for chunks in ([over], [over[i : i + 4096] for i in range(0, len(over), 4096)]):
        with pytest.raises(SSELimitError) as info:
            decode(chunks, max_line_bytes=limit)
        assert info.value.part == "data"


def test_data_limit_applies_to_each_event_afresh() -> None:
    limit = 200_000  # each event below is folded several times
    line = b"data: ab\n"  # n such lines make 3 * n - 1 bytes of data
    n = (limit + 1) // 3
    big = line * n + b"\n"  # data of exactly `limit` bytes
    raw = big + b"data: s\n\n" + b"event: e\n" + big + b"data: t\n\n" + big
    joined = "\n".join(["ab"] * n)
    expected = [E(joined), E("s"), E(joined, event="e"), E("t"), E(joined)]
    chunked = [raw[i : i + 4096] for i in range(0, len(raw), 4096)]
    for chunks in ([raw], chunked):
        assert decode(chunks, max_line_bytes=limit)[0] == expected
    over = raw + line * (n + 1) + b"\n"
    for chunks in ([over], [over[i : i + 4096] for i in range(0, len(over), 4096)]):
        out, part, _ = outcome(chunks, comments=False, max_line_bytes=limit)
        assert (out, part) == (expected, "data")


def test_data_limit_afresh_after_an_event_folded_on_its_last_line() -> None:
    limit = 100_000
    folded = b"data: " + b"a" * 65_530 + b"\ndata: " + b"b" * 10 + b"\n\n"  # over 64 KiB
    at_limit = b"data: " + b"c" * 60_000 + b"\ndata: " + b"d" * 39_999 + b"\n\n"
    expected = [E("a" * 65_530 + "\n" + "b" * 10), E("c" * 60_000 + "\n" + "d" * 39_999)]
    assert decode([folded + at_limit], max_line_bytes=limit)[0] == expected


def test_data_at_the_limit_passes_when_a_fold_is_due() -> None:
    limit = 100_000  # data buffers are folded at every 64 KiB
    raw = b"data: " + b"a" * 60_000 + b"\ndata: " + b"b" * 39_999 + b"\n\n"
    assert decode([raw], max_line_bytes=limit)[0] == [E("a" * 60_000 + "\n" + "b" * 39_999)]
    with pytest.raises(SSELimitError):
        decode([raw.replace(b"b\n", b"bb\n")], max_line_bytes=limit)


def test_data_limit_carries_earlier_events_and_comments() -> None:
    raw = b"data: a\n\n: c\ndata: 0123456789\ndata: 0123456789\n\ndata: z\n\n"
    with pytest.raises(SSELimitError) as info:
        SSEDecoder(comments=True, max_line_bytes=20).feed(raw)
    assert info.value.part == "data"
    assert info.value.events == [E("a"), Comment(" c")]


def test_decoder_is_unusable_after_a_limit_error() -> None:
    decoder = SSEDecoder(max_line_bytes=5)
    with pytest.raises(SSELimitError):
        decoder.feed(b"data: x\n\n")
    with pytest.raises(SSELimitError):
        decoder.feed(b"\n")
    with pytest.raises(SSELimitError):
        decoder.flush()
    assert decoder.pending() is None


@pytest.mark.parametrize("mode", MODES)
def test_memory_stays_bounded_by_the_limit_for_an_endless_line(mode: str) -> None:
    limit = 4 * 1024 * 1024
    chunk = b"x" * (1024 * 1024)
    decoder = SSEDecoder(max_line_bytes=limit)
    fed = 0
    tracemalloc.start()
    try:
        with pytest.raises(SSELimitError) as info:
            feed_in(decoder, b"data: ", mode, 0)
            fed += 6
            for n in range(50):  # 50 MB
                feed_in(decoder, chunk, mode, n)
                fed += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.part == "line"
    assert fed <= limit < fed + len(chunk)  # raised at the first chunk past 4 MB
    assert peak < limit * 1.5, peak


@pytest.mark.parametrize("mode", MODES)
def test_memory_stays_bounded_by_the_limit_for_endless_data(mode: str) -> None:
    limit = 4 * 1024 * 1024
    chunk = (b"data: " + b"y" * 1017 + b"\n") * 1024  # 1 MiB of 1 KiB data lines
    decoder = SSEDecoder(max_line_bytes=limit)
    fed = 0
    tracemalloc.start()
    try:
        with pytest.raises(SSELimitError) as info:
            for n in range(50):
                feed_in(decoder, chunk, mode, n)
                fed += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.part == "data"
    assert fed <= limit < fed + len(chunk)
    # The data so far (up to the limit) plus the lines of one chunk.
    assert peak < limit * 1.5 + 2 * len(chunk), peak


def test_max_line_bytes_must_be_a_positive_int() -> None:
    with pytest.raises(ValueError):
        SSEDecoder(max_line_bytes=0)
    with pytest.raises(TypeError):
        SSEDecoder(max_line_bytes=1.5)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        SSEDecoder(max_line_bytes=True)


# -- API -------------------------------------------------------------------------


def test_event_defaults_and_immutability() -> None:
    ev = ServerSentEvent()
    assert (ev.event, ev.data, ev.id, ev.retry) == ("message", "", "", None)
    with pytest.raises(FrozenInstanceError):
        ev.data = "x"  # type: ignore[misc]
    assert not hasattr(ev, "__dict__")


def test_decoded_events_are_plain_server_sent_events() -> None:
    (ev,), _ = decode([b'event: e\nid: 1\nretry: 2\ndata: {"a": [1, 2]}\n\n'])
    assert type(ev) is ServerSentEvent
    assert ev == ServerSentEvent("e", '{"a": [1, 2]}', "1", 2)
    assert hash(ev) == hash(ServerSentEvent("e", '{"a": [1, 2]}', "1", 2))
    assert repr(ev) == repr(ServerSentEvent("e", '{"a": [1, 2]}', "1", 2))
    assert pickle.loads(pickle.dumps(ev)) == ev
    with pytest.raises(FrozenInstanceError):
        ev.event = "x"  # type: ignore[misc]
    assert ev.json() == {"a": [1, 2]}
    match ev:
        case ServerSentEvent(event="e", data=data):
            assert data.startswith("{")
        case _:
            pytest.fail("no match")


def test_comment_is_not_an_event() -> None:
    items, _ = decode([b": hi\nevent: comment\ndata: x\n\n"], comments=True)
    assert items == [Comment(" hi"), E("x", event="comment")]
    assert not isinstance(items[0], ServerSentEvent)


def test_last_event_id_and_reconnection_time() -> None:
    decoder = SSEDecoder()
    assert (decoder.last_event_id, decoder.reconnection_time) == ("", None)
    decoder.feed(b"id: 1\nretry: 300\n")
    assert decoder.last_event_id == ""  # updated at the blank line
    assert decoder.reconnection_time == 300  # set at once, as the spec says
    decoder.feed(b"\n")
    assert decoder.last_event_id == "1"
    decoder.feed(b"id: 2\ndata: x\nretry: nope\n\n")
    assert (decoder.last_event_id, decoder.reconnection_time) == ("2", 300)


def test_feed_after_flush_raises_and_flush_is_repeatable() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: b") == [E("a")]
    assert decoder.flush() == []
    assert decoder.flush() == []
    assert decoder.pending() == E("b")
    with pytest.raises(RuntimeError):
        decoder.feed(b"\n\n")


def test_pending_before_flush_is_the_block_so_far() -> None:
    decoder = SSEDecoder()
    assert decoder.pending() is None
    decoder.feed(b"data: a\nda")
    assert decoder.pending() == E("a")
    decoder.feed(b"ta: b")
    assert decoder.pending() == E("a\nb")
    assert decoder.feed(b"\n\n") == [E("a\nb")]
    assert decoder.pending() is None


def test_pending_sees_data_of_many_lines() -> None:
    lines = [b"%05d" % i for i in range(30_000)]  # 180 KB of data: folded on the way
    raw = b"event: e\n" + b"".join(b"data: " + v + b"\n" for v in lines)
    decoder = SSEDecoder()
    for i in range(0, len(raw), 1000):
        decoder.feed(raw[i : i + 1000])
    expected = E("\n".join(v.decode() for v in lines), event="e")
    assert decoder.pending() == expected
    decoder.feed(b"data: last")
    assert decoder.pending() == E(expected.data + "\nlast", event="e")
    assert decoder.feed(b"\n\n") == [E(expected.data + "\nlast", event="e")]
    assert decoder.pending() is None


def test_empty_chunks_are_harmless() -> None:
    decoder = SSEDecoder()
    out: list[Any] = []
    for chunk in [b"", b"\xef", b"", b"\xbb\xbf", b"", b"data: x\r", b"", b"\n", b"", b"\n"]:
        out += decoder.feed(chunk)
    assert out == [E("x")]


@pytest.mark.parametrize("mode", MODES)
def test_long_line_over_many_chunks_then_more_events(mode: str) -> None:
    body = "é" * 50_000
    raw = ("data: " + body + "\n\ndata: after\n\n").encode()
    chunks = [raw[i : i + 7] for i in range(0, len(raw), 7)]
    assert decode(chunks, mode=mode)[0] == [E(body), E("after")]


@pytest.mark.parametrize("mode", MODES)
def test_large_realistic_stream_any_chunk_size(mode: str) -> None:
    blocks = []
    for i in range(300):
        data = f'{{"i": {i}, "text": "{"ü" * (i % 17)}{"x" * i}"}}'
        head = f"event: e{i % 3}\n" if i % 2 else ""
        blocks.append(f"{head}id: {i}\ndata: {data}\n\n")
    raw = "".join(blocks).encode()
    expected, _ = decode([raw])
    assert len(expected) == 300
    for size in (1, 2, 3, 64, 1000, 4096):
        assert (
            decode([raw[i : i + size] for i in range(0, len(raw), size)], mode=mode)[0] == expected
        )
    crlf = raw.replace(b"\n", b"\r\n")
    for size in (1, 2, 5, 4096):
        assert (
            decode([crlf[i : i + size] for i in range(0, len(crlf), size)], mode=mode)[0]
            == expected
        )


# -- one huge chunk, blank-line floods ----------------------------------------


def _peak_of(call: Any) -> tuple[Any, int]:
    """What ``call()`` returns (or the SSELimitError it raises) and the peak of
    the memory it allocated, traced (deterministic: no timing involved)."""
    tracemalloc.start()
    try:
        try:
            result = call()
        except SSELimitError as exc:
            result = exc
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


@pytest.mark.parametrize("mode", ("feed", "feed_raw"))
def test_one_huge_chunk_of_short_data_lines_is_read_in_bounded_memory(mode: str) -> None:
    # 32 MiB of "data: x" lines in one event, fed at once: the data limit
    # (1 MiB) is crossed a quarter of the way in. Splitting the whole chunk
    # into lines first would hold 4M line objects (about 190 MiB).
    limit = 1024 * 1024
    chunk = b"data: x\n" * (4 * 1024 * 1024)
    decoder = SSEDecoder(max_line_bytes=limit)
    result, peak = _peak_of(lambda: getattr(decoder, mode)(chunk))
    assert isinstance(result, SSELimitError) and result.part == "data"
    # The data up to the limit (and its fold), the lines of one slice, the
    # short values since the last fold: a bound that does not grow with the chunk.
    assert peak < 2 * limit + 3 * 1024 * 1024, peak


@pytest.mark.parametrize("mode", ("feed", "feed_raw"))
def test_one_huge_chunk_of_events_gives_every_event_in_bounded_extra_memory(mode: str) -> None:
    # Events each ending in a long run of blank lines: the events come back
    # (they are the answer), the runs cost no memory of their own.
    event = b"data: " + b"z" * 1000 + b"\n" + b"\n" * 100_000
    chunk = event * 64  # 6.2 MiB
    events, peak = _peak_of(lambda: getattr(SSEDecoder(), mode)(chunk))
    assert len(events) == 64
    assert peak < 1024 * 1024, peak


@pytest.mark.parametrize("terminator", (b"\n", b"\r\n", b"\r"))
@pytest.mark.parametrize("mode", MODES)
def test_a_blank_line_flood_costs_no_memory_per_line(mode: str, terminator: bytes) -> None:
    flood = terminator * (1024 * 1024)
    decoder = SSEDecoder()
    decoder.feed(b"data: before\n\n")
    out, peak = _peak_of(lambda: [feed_in(decoder, flood, mode, n) for n in range(4)])
    assert out == [[], [], [], []]
    assert peak < 1024 * 1024, peak  # today: 88 bytes per blank line
    assert feed_in(decoder, b"data: after\n\n", mode, 0) == [E("after")]


@pytest.mark.parametrize("mode", MODES)
def test_blank_line_runs_between_events_in_any_chunking(mode: str) -> None:
    raw = b"\n\n\ndata: a\n\n\n\n\n\nevent: e\ndata: b\n\n" + b"\n" * 5000 + b"id: 7\ndata: c\n\n\n"
    expected = [E("a"), E("b", event="e"), E("c", id="7")]
    for crlf in (False, True):
        body = raw.replace(b"\n", b"\r\n") if crlf else raw
        for size in (1, 2, 3, 7, 4096, len(body)):
            chunks = [body[i : i + size] for i in range(0, len(body), size)]
            assert decode(chunks, mode=mode)[0] == expected, (crlf, size)


def test_a_limit_error_inside_a_huge_chunk_keeps_the_events_before_it() -> None:
    head = b"".join(b"data: %d\n\n" % i for i in range(20_000))  # 218 KB of events
    chunk = head + b"\n" * 600_000 + b"data: " + b"w" * 2_000_000 + b"\n\n"
    for mode in ("feed", "feed_raw"):
        with pytest.raises(SSELimitError) as info:
            getattr(SSEDecoder(max_line_bytes=1_000_000), mode)(chunk)
        assert info.value.part == "line"
        got = info.value.events if mode == "feed" else cooked(info.value.events)
        assert got == [E(str(i)) for i in range(20_000)]


RUNS = [b"\n", b"\r\n", b"\r", b"\n\r", b"\r\r\n"]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(sse_bytes, st.sampled_from(RUNS), st.integers(0, 3000)), min_size=1),
    st.booleans(),
    st.sampled_from(MODES),
)
def test_chunks_longer_than_a_slice_match_reference(
    parts: list[tuple[bytes, bytes, int]], comments: bool, mode: str
) -> None:
    # Generated blocks, each followed by a run of terminators, repeated past
    # several 64 KiB slices: decoded whole, in 1-4 KiB chunks and by the spec.
    unit = b"".join(raw + run * count for raw, run, count in parts)
    body = unit * (200_000 // max(len(unit), 1) + 1)
    expected = reference(body, comments=comments)
    assert decode([body], comments=comments, mode=mode) == expected
    assert decode(chunks_at(body, range(0, len(body), 3001)), comments=comments, mode=mode) == (
        expected
    )
