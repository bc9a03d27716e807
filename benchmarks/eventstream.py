"""Throughput of `streamnorm.eventstream.EventStreamDecoder` against a floor.

Builds a ~5 MB AWS event stream shaped like Bedrock ConverseStream text
deltas (the three headers Bedrock sends, a JSON payload of 80-250 bytes with
the random-length ``p`` padding field) and one shaped like
InvokeModelWithResponseStream (``chunk`` frames whose payload is
``{"bytes": <base64 of an Anthropic event>}``). Each is read:

* by the floor: the cheapest conceivable framing of the whole body at once,
  walking the frames with ``struct.unpack_from`` on the prelude and slicing
  out each payload, without checking a CRC or reading a header, and parsing
  each payload with orjson;
* by the same walk computing both CRC32s of each frame with the CRC32 the
  decoder uses (zlib-ng's with the ``bedrock`` extra, else
  ``binascii.crc32``), for context: the least work any reader that checks
  the frames does;
* by `EventStreamDecoder.feed_raw` (what `StreamNormalizer` reads), fed the
  body in seeded random 1-4 KiB chunks as a socket delivers it, both CRC32s
  checked and the headers read, and each payload parsed with orjson.

The target is at most 2x the first floor. Each figure is the median of several
runs, taken in turn in the same process, in CPU time with the garbage
collector paused. Then a growth check: one frame of 1 MB and one of 2 MB, fed
one byte per call: a decoder that rescanned its buffer would take four times
as long for the second; a linear one takes twice as long.

Run: ``python benchmarks/eventstream.py [--repeat N] [--check]``.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import gc
import json
import random
import statistics
import struct
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson

try:
    from streamnorm.eventstream import EventStreamDecoder, crc32
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from streamnorm.eventstream import EventStreamDecoder, crc32

from workloads import chunked  # (this folder: seeded 1-4 KiB chunks, as run.py cuts them)

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "or",
    "from",
    "at",
    "an",
]
PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def frame(event_type: str, payload: bytes) -> bytes:
    """One event frame with Bedrock's three headers."""
    block = b""
    for name, value in (
        (":event-type", event_type),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ):
        raw = value.encode()
        block += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    prelude = struct.pack(">II", 16 + len(block) + len(payload), len(block))
    head = prelude + struct.pack(">I", binascii.crc32(prelude)) + block + payload
    return head + struct.pack(">I", binascii.crc32(head))


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 30)))


def build_converse(target: int, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    parts, total = [], 0
    while total < target:
        payload = {
            "contentBlockIndex": 0,
            "delta": {"text": _text(rng)},
            "p": PADDING[: rng.randint(1, len(PADDING))],
        }
        raw = frame("contentBlockDelta", json.dumps(payload, separators=(",", ":")).encode())
        parts.append(raw)
        total += len(raw)
    return b"".join(parts)


def build_invoke(target: int, seed: int = 8) -> bytes:
    rng = random.Random(seed)
    parts, total = [], 0
    while total < target:
        inner = {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": _text(rng)},
        }
        encoded = base64.b64encode(json.dumps(inner).encode()).decode()
        raw = frame("chunk", json.dumps({"bytes": encoded, "p": PADDING[:12]}).encode())
        parts.append(raw)
        total += len(raw)
    return b"".join(parts)


def floor(body: bytes) -> int:
    """Walk the frames (prelude lengths only) and parse each payload."""
    unpack = struct.Struct(">II").unpack_from
    loads = orjson.loads
    pos, end, n = 0, len(body), 0
    while pos < end:
        total, headers = unpack(body, pos)
        loads(body[pos + 12 + headers : pos + total - 4])
        pos += total
        n += 1
    return n


def floor_with_crcs(body: bytes) -> int:
    """`floor`, computing the prelude and message CRC32s of each frame too."""
    unpack = struct.Struct(">III").unpack_from
    loads = orjson.loads
    pos, end, n = 0, len(body), 0
    while pos < end:
        total, headers, crc = unpack(body, pos)
        crc32(body[pos : pos + 8])
        crc32(body[pos + 8 : pos + total - 4], crc)
        loads(body[pos + 12 + headers : pos + total - 4])
        pos += total
        n += 1
    return n


def decode(chunks: list[bytes]) -> int:
    """Frame with `EventStreamDecoder.feed_raw`, parse each payload."""
    decoder = EventStreamDecoder()
    feed = decoder.feed_raw
    loads = orjson.loads
    n = 0
    for chunk in chunks:
        for _, payload, _, _ in feed(chunk):
            loads(payload)
            n += 1
    decoder.flush()
    return n


def median_times(fns: Sequence[Callable[[], object]], repeat: int) -> list[float]:
    """Median CPU seconds of each function, run in turn so that load changes hit all."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, samples in zip(fns, times, strict=True):
            gc.collect()
            gc.disable()
            try:
                t0 = time.process_time()
                fn()
                samples.append(time.process_time() - t0)
            finally:
                gc.enable()
    return [statistics.median(samples) for samples in times]


def throughput(title: str, body: bytes, repeat: int) -> float:
    """Print one table; return the ratio of the decoder to the floor."""
    chunks = chunked(body, 11)
    frames = floor(body)
    assert decode(chunks) == frames
    t_floor, t_crcs, t_ours = median_times(
        [lambda: floor(body), lambda: floor_with_crcs(body), lambda: decode(chunks)], repeat
    )
    print(
        f"{title}: {len(body) / 1e6:.2f} MB, {frames} frames of {len(body) / frames:.0f} bytes "
        f"on average, {len(chunks)} chunks of 1-4 KiB; median of {repeat} runs"
    )
    for label, t in (
        ("floor: struct.unpack + orjson", t_floor),
        ("the floor + both CRC32s (context)", t_crcs),
        ("EventStreamDecoder.feed_raw + orjson", t_ours),
    ):
        print(
            f"  {label:38} {len(body) / 1e6 / t:6.0f} MB/s  {t * 1e3:7.2f} ms  "
            f"{t / frames * 1e6:5.2f} µs/frame  {t / t_floor:5.2f}x floor"
        )
    return t_ours / t_floor


def one_byte_at_a_time(sizes: Sequence[int]) -> list[float]:
    """Seconds to decode one frame of each payload size, fed one byte per call."""
    runs = []
    for size in sizes:
        body = frame("contentBlockDelta", b"x" * size)
        chunks = [body[i : i + 1] for i in range(len(body))]

        def run(chunks: list[bytes] = chunks, size: int = size) -> None:
            decoder = EventStreamDecoder()
            out = []
            for chunk in chunks:
                out += decoder.feed(chunk)
            assert len(out) == 1 and len(out[0].payload) == size

        runs.append(run)
    return median_times(runs, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs per figure (median)")
    parser.add_argument("--size", type=int, default=5_000_000, help="stream size in bytes")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 unless both ratios <= 2.0, growth <= 2.5"
    )
    args = parser.parse_args()
    print(f"CRC32: {crc32.__module__}.crc32")
    converse = throughput("ConverseStream text deltas", build_converse(args.size), args.repeat)
    invoke = throughput("Invoke chunks (outer payload)", build_invoke(args.size), args.repeat)
    t1, t2 = one_byte_at_a_time([1_000_000, 2_000_000])
    growth = t2 / t1
    print(
        f"one byte per feed(): 1 MB frame {t1:.2f} s, 2 MB frame {t2:.2f} s, "
        f"growth {growth:.2f} (linear 2, quadratic 4)"
    )
    print(f"EventStreamDecoder / floor: Converse {converse:.2f}, Invoke {invoke:.2f} (target <= 2)")
    if args.check and (converse > 2.0 or invoke > 2.0 or growth > 2.5):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
