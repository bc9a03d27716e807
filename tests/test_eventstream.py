"""The AWS event-stream framing (`streamnorm.eventstream`), checked against
botocore's own parser (`botocore.eventstream.EventStreamBuffer`):

* every recorded Bedrock stream gives the frames botocore gives, whole, one
  byte at a time and in seeded random chunks;
* every header value type reads as botocore reads it;
* a flipped CRC byte, an impossible length, malformed headers are
  ``protocol`` errors carrying the frames before; a frame over the limit is
  refused from its prelude; the end of input inside a frame is ``truncated``.
"""

from __future__ import annotations

import binascii
import json
import random
import struct
import uuid
from pathlib import Path
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer

from streamnorm.eventstream import (
    EventStreamDecoder,
    EventStreamError,
    EventStreamMessage,
    Timestamp,
    looks_like_event_stream,
)

from .support import (
    EXTRA_FIXTURES,
    aws_event,
    aws_frame,
    aws_frame_ends,
    needs_fixtures,
    random_split,
    split_every,
)

BEDROCK = sorted(
    [
        *EXTRA_FIXTURES.glob("bedrock-converse-stream/*.bin"),
        *EXTRA_FIXTURES.glob("bedrock-invoke-stream/*.bin"),
    ]
)


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def botocore_frames(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(dict(m.headers), m.payload) for m in buffer]


def ours(messages: list[EventStreamMessage]) -> list[tuple[dict[str, Any], bytes]]:
    """Our frames as botocore shows them (a UUID as its 16 bytes)."""
    return [
        ({k: v.bytes if isinstance(v, uuid.UUID) else v for k, v in m.headers.items()}, m.payload)
        for m in messages
    ]


def decode(chunks: list[bytes]) -> list[EventStreamMessage]:
    decoder = EventStreamDecoder()
    out: list[EventStreamMessage] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    decoder.flush()
    return out


@needs_fixtures
def test_all_bedrock_fixtures_are_found() -> None:
    assert len(BEDROCK) == 21


@needs_fixtures
@pytest.mark.parametrize("path", BEDROCK, ids=_id)
def test_frames_agree_with_botocore(path: Path) -> None:
    data = path.read_bytes()
    expected = botocore_frames(data)
    assert expected and sum(len(p) for _, p in expected) > 0
    assert ours(decode([data])) == expected
    assert ours(decode(split_every(data, 1))) == expected
    for seed in range(5):
        assert ours(decode(random_split(data, random.Random(seed), 300))) == expected


@needs_fixtures
@pytest.mark.parametrize("path", BEDROCK, ids=_id)
def test_feed_raw_names_and_payloads(path: Path) -> None:
    data = path.read_bytes()
    raw = []
    decoder = EventStreamDecoder()
    for chunk in random_split(data, random.Random(1), 97):
        raw += decoder.feed_raw(chunk)
    expected = [(h[":event-type"], payload, "event", None) for h, payload in botocore_frames(data)]
    assert raw == expected


def test_every_header_type_reads_as_botocore_reads_it() -> None:
    the_uuid = uuid.UUID("12345678-1234-5678-1234-567812345678")
    headers = {
        "t": True,
        "f": False,
        "byte": (2, struct.pack(">b", -5)),
        "short": (3, struct.pack(">h", -300)),
        "int": (4, struct.pack(">i", -70000)),
        "long": (5, struct.pack(">q", -(2**40))),
        "blob": (6, struct.pack(">H", 3) + b"\x00\xff\x10"),
        "text": (7, struct.pack(">H", 6) + "héllo".encode()),
        "time": (8, struct.pack(">q", 1_700_000_000_123)),
        "id": (9, the_uuid.bytes),
    }
    frame = aws_frame(headers, b"payload")
    [message] = decode([frame])
    assert ours([message]) == botocore_frames(frame)
    assert dict(message.headers) == {
        "t": True,
        "f": False,
        "byte": -5,
        "short": -300,
        "int": -70000,
        "long": -(2**40),
        "blob": b"\x00\xff\x10",
        "text": "héllo",
        "time": 1_700_000_000_123,
        "id": the_uuid,
    }
    assert isinstance(message.headers["time"], Timestamp)
    assert not isinstance(message.headers["long"], Timestamp)
    assert message.payload == b"payload"
    assert message.message_type == "event" and message.name == ""


def test_a_frame_without_headers_or_payload() -> None:
    frame = aws_frame({})
    assert len(frame) == 16
    [message] = decode([frame])
    assert dict(message.headers) == {} and message.payload == b""
    assert botocore_frames(frame) == [({}, b"")]


def test_exception_and_error_frames_in_feed_raw() -> None:
    exception = aws_frame(
        {":message-type": "exception", ":exception-type": "throttlingException"},
        b'{"message":"slow down"}',
    )
    not_json = aws_frame(
        {":message-type": "exception", ":exception-type": "internalServerException"}, b"boom"
    )
    error = aws_frame(
        {":message-type": "error", ":error-code": "InternalFailure", ":error-message": "oops"}
    )
    raw = EventStreamDecoder().feed_raw(exception + not_json + error)
    assert [(name, json.loads(data), kind) for name, data, kind, _ in raw] == [
        (
            "exception:throttlingException",
            {"error": {"type": "throttlingException", "message": "slow down"}},
            "exception",
        ),
        (
            "exception:internalServerException",
            {"error": {"type": "internalServerException", "message": "boom"}},
            "exception",
        ),
        (
            "error:InternalFailure",
            {"error": {"type": "InternalFailure", "message": "oops"}},
            "error",
        ),
    ]
    # feed() gives the frames as they are.
    messages = EventStreamDecoder().feed(exception + not_json + error)
    assert [(m.message_type, m.name, m.payload) for m in messages] == [
        ("exception", "throttlingException", b'{"message":"slow down"}'),
        ("exception", "internalServerException", b"boom"),
        ("error", "InternalFailure", b""),
    ]


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


@needs_fixtures
@pytest.mark.parametrize("path", BEDROCK, ids=_id)
def test_a_flipped_crc_byte_is_a_protocol_error(path: Path) -> None:
    data = path.read_bytes()
    ends = aws_frame_ends(data)
    starts = [0, *ends[:-1]]
    expected = botocore_frames(data)
    rng = random.Random(len(data))
    for n, start in enumerate(starts):
        # A byte of the prelude CRC, of the message CRC, and one anywhere in the frame.
        for at in (start + 8 + rng.randrange(4), ends[n] - 1 - rng.randrange(4)):
            decoder = EventStreamDecoder()
            with pytest.raises(EventStreamError) as info:
                decoder.feed(_flip(data, at))
            assert info.value.kind == "protocol", info.value
            assert info.value.offset == start
            assert ours(info.value.messages) == expected[:n]  # type: ignore[arg-type]
            with pytest.raises(EventStreamError):  # unusable afterwards
                decoder.feed(b"")
            # Cut into pieces, the frames before come out the same, and the same error.
            decoder, got = EventStreamDecoder(), []
            with pytest.raises(EventStreamError) as info:
                for piece in random_split(_flip(data, at), random.Random(at), 37):
                    got += ours(decoder.feed(piece))
            got += ours(info.value.messages)  # type: ignore[arg-type]
            assert (info.value.kind, info.value.offset, got) == ("protocol", start, expected[:n])


@needs_fixtures
@pytest.mark.parametrize("path", BEDROCK, ids=_id)
def test_any_flipped_byte_is_refused(path: Path) -> None:
    """A CRC32 catches every single-bit error: nothing of a damaged frame
    is ever returned."""
    data = path.read_bytes()
    ends = aws_frame_ends(data)
    rng = random.Random(7)
    for at in sorted(rng.sample(range(len(data)), min(40, len(data)))):
        frame = next(n for n, end in enumerate(ends) if at < end)
        with pytest.raises(EventStreamError) as info:
            decode([_flip(data, at)])
        assert info.value.kind == "protocol"
        assert len(info.value.messages) == frame


@needs_fixtures
@pytest.mark.parametrize("path", BEDROCK, ids=_id)
def test_a_cut_inside_a_frame_is_truncated(path: Path) -> None:
    data = path.read_bytes()
    ends = aws_frame_ends(data)
    expected = botocore_frames(data)
    rng = random.Random(3)
    cuts = sorted({*ends[:-1], *(rng.randrange(1, len(data)) for _ in range(30))})
    for cut in cuts:
        whole = sum(1 for end in ends if end <= cut)
        decoder = EventStreamDecoder()
        got = ours(decoder.feed(data[:cut]))
        assert got == expected[:whole]
        if cut in ends:
            decoder.flush()  # at a frame boundary the framing itself is whole
            continue
        with pytest.raises(EventStreamError) as info:
            decoder.flush()
        assert info.value.kind == "truncated"
        assert info.value.offset == (ends[whole - 1] if whole else 0)


def _prelude(total: int, headers: int) -> bytes:
    head = struct.pack(">II", total, headers)
    return head + struct.pack(">I", binascii.crc32(head))


@pytest.mark.parametrize(
    ("total", "headers"),
    [(0, 0), (15, 0), (16, 1), (100, 85), (2**32 - 1, 2**32 - 1)],
)
def test_impossible_lengths_are_protocol_errors(total: int, headers: int) -> None:
    good = aws_event("messageStart", {"role": "assistant"})
    with pytest.raises(EventStreamError) as info:
        EventStreamDecoder().feed(good + _prelude(total, headers) + b"\x00" * 64)
    assert info.value.kind == "protocol"
    assert info.value.offset == len(good)
    assert [m.name for m in info.value.messages] == ["messageStart"]  # type: ignore[union-attr]


def test_a_frame_over_the_limit_is_refused_from_its_prelude() -> None:
    decoder = EventStreamDecoder(max_frame_bytes=1024)
    good = aws_event("messageStart", {"role": "assistant"})
    assert [m.name for m in decoder.feed(good)] == ["messageStart"]
    with pytest.raises(EventStreamError) as info:
        decoder.feed(_prelude(10**9, 0))  # claims a gigabyte: nothing more is awaited
    assert info.value.kind == "limit"
    assert decoder.buffered == 0
    # The same prelude a byte at a time: refused at its twelfth byte.
    decoder = EventStreamDecoder(max_frame_bytes=1024)
    prelude = _prelude(10**9, 0)
    for byte in split_every(prelude[:11], 1):
        assert decoder.feed(byte) == []
    with pytest.raises(EventStreamError) as info:
        decoder.feed(prelude[11:] + b"x" * 100)
    assert (info.value.kind, info.value.offset) == ("limit", 0)
    # A frame at exactly the limit passes.
    exact = aws_frame({}, b"x" * (1024 - 16))
    assert len(decoder_feed(EventStreamDecoder(max_frame_bytes=1024), exact)) == 1


def decoder_feed(decoder: EventStreamDecoder, data: bytes) -> list[EventStreamMessage]:
    out = decoder.feed(data)
    decoder.flush()
    return out


def test_headers_over_the_format_limit_are_refused() -> None:
    frame = aws_frame({"big": b"x" * 60_000, "bigger": b"y" * 60_000, "more": b"z" * 20_000})
    with pytest.raises(EventStreamError) as info:
        decode([frame])
    assert info.value.kind == "protocol" and "headers" in info.value.detail


@pytest.mark.parametrize(
    ("block", "what"),
    [
        (b"\x01a\x0a", "unknown header value type"),
        (b"\x01a", "no value type"),
        (b"\x01a\x04\x00\x00", "past the headers"),
        (b"\x01a\x07\x00\x09abc", "past the headers"),
        (b"\x01a\x09" + b"\x00" * 15, "past the headers"),
        (b"\x01\xff\x00", "not UTF-8"),
        (b"\x01a\x07\x00\x01\xff", "not UTF-8"),
        (b"\x01a\x00\x01a\x01", "appears twice"),
    ],
)
def test_malformed_headers_are_protocol_errors(block: bytes, what: str) -> None:
    total = 16 + len(block)
    head = struct.pack(">II", total, len(block))
    head += struct.pack(">I", binascii.crc32(head)) + block
    frame = head + struct.pack(">I", binascii.crc32(head))
    with pytest.raises(EventStreamError) as info:
        decode([aws_event("messageStart", {}) + frame])
    assert info.value.kind == "protocol"
    assert what in info.value.detail
    assert len(info.value.messages) == 1


def test_looks_like_event_stream() -> None:
    frame = aws_event("chunk", {"bytes": ""})
    assert looks_like_event_stream(frame) is True
    assert looks_like_event_stream(frame[:5]) is None
    assert looks_like_event_stream(b"data: {}") is False
    assert looks_like_event_stream(b"{") is False
    assert looks_like_event_stream(b"\x00" * 12) is False  # the CRC does not hold


def test_flush_at_the_start_or_after_whole_frames_is_quiet() -> None:
    EventStreamDecoder().flush()
    decoder = EventStreamDecoder()
    decoder.feed(aws_event("messageStart", {}))
    decoder.flush()
    decoder = EventStreamDecoder()
    decoder.feed(b"\x00\x00")
    with pytest.raises(EventStreamError) as info:
        decoder.flush()
    assert info.value.kind == "truncated" and "prelude" in info.value.detail
    decoder = EventStreamDecoder()
    decoder.feed(b"data:")  # too short for a prelude, but text: not a cut stream
    with pytest.raises(EventStreamError) as info:
        decoder.flush()
    assert info.value.kind == "protocol"


def test_a_long_chunk_after_a_cut_frame_is_read_in_place() -> None:
    # A chunk longer than the decoder joins with a buffered frame (256 KiB)
    # completes that frame apart and is read where it is: the frames, and the
    # offset of a bad one, are those of the stream fed whole.
    frames = [
        aws_event("contentBlockDelta", {"delta": {"text": f"{i:05d}" * 40}}) for i in range(2000)
    ]
    data = b"".join(frames)
    assert len(data) > 2 * 256 * 1024
    expected = botocore_frames(data)
    for cut in (5, len(frames[0]) - 3, len(frames[0]) + 20):
        assert len(data) - cut > 256 * 1024
        assert ours(decode([data[:cut], data[cut:]])) == expected
    bad = bytearray(data)
    at = sum(len(f) for f in frames[:1500])
    bad[at + 30] ^= 0x01  # inside frame 1500's headers: its message CRC fails
    decoder = EventStreamDecoder()
    assert decoder.feed(bytes(bad[:7])) == []
    with pytest.raises(EventStreamError) as info:
        decoder.feed(bytes(bad[7:]))
    assert (info.value.kind, info.value.offset, len(info.value.messages)) == ("protocol", at, 1500)


@needs_fixtures
def test_the_decoder_without_zlib_ng_reads_the_same_frames(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The module takes zlib-ng's CRC32 when the ``bedrock`` extra is there
    # and binascii's otherwise: the same function, so the same frames, and a
    # flipped byte refused either way.
    import zlib_ng.zlib_ng as zlib_ng  # in the dev extra

    import streamnorm.eventstream as module

    assert vars(module)["crc32"] is zlib_ng.crc32
    rng = random.Random(5)
    for size in (0, 1, 7, 8, 13, 240, 4096):
        data = rng.randbytes(size)
        assert zlib_ng.crc32(data) == binascii.crc32(data)
        assert zlib_ng.crc32(data, 0xDEADBEEF) == binascii.crc32(data, 0xDEADBEEF)
    monkeypatch.setattr(module, "crc32", binascii.crc32)
    for path in BEDROCK:
        data = path.read_bytes()
        assert ours(decode(random_split(data, random.Random(2), 300))) == botocore_frames(data)
        flipped = bytearray(data)
        flipped[len(data) // 2] ^= 0x10
        with pytest.raises(EventStreamError):
            decode([bytes(flipped)])
