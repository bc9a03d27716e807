"""Throughput of `streamnorm.sse.SSEDecoder` against the floor ``body.split(b"\\n\\n")``.

Builds a realistic ~5 MB event stream (JSON-ish ``data:`` payloads of 200-2,000
bytes, ``event:`` lines on about half the events, some multi-line data,
non-ASCII text in about one event in twenty, the odd keep-alive comment) and
feeds it to the decoder in random 1-4 KiB chunks, as a socket delivers it;
then the same with CRLF line ends. The floor is the cheapest conceivable
framing of the same body: one ``bytes.split`` of the whole of it on blank
lines, without decoding or parsing anything. `SSEDecoder.feed_raw` (the same
events with the data left as bytes, what `StreamNormalizer` reads) is timed
too, and httpx-sse, when installed, for context.

Then the same for a stream of short events shaped like Anthropic's text
deltas (``event: content_block_delta`` and a ``data:`` line of ~150 bytes in
all), where the cost per event rather than per byte dominates: the figure
that matters for LLM APIs, given in microseconds per event too.

Each figure is the median of several runs, taken in turn in the same process,
in CPU time (so that other busy processes on a shared machine do not count)
and with the garbage collector paused, as `timeit` does.

Then a growth check: one event of 1 MB and one of 2 MB, fed one byte per call.
A decoder that rescanned its buffer would take four times as long for the
second; a linear one takes twice as long.

Last, bodies that no API sends and an attacker may: 16 MiB of nothing but
blank lines (LF, CR LF, lone CR) in 1 MiB chunks and as one chunk, and one
event of 16 MiB of short ``data: x`` lines fed as one chunk. Each gives its
throughput through `feed_raw` and the peak of the memory the decoder
allocates while reading it, traced by `tracemalloc` in a separate run, as a
multiple of the body's size (the body itself not counted).

Run: ``python benchmarks/sse.py [--repeat N] [--check]``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path

try:
    from streamnorm.sse import SSEDecoder
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from streamnorm.sse import SSEDecoder

from workloads import chunked  # (this folder: seeded 1-4 KiB chunks, as run.py cuts them)

WORDS = [
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "with", "was", "on", "be",
    "by", "this", "are", "or", "from", "at", "an", "function", "return", "value", "stream",
    "token", "model", "response", "delta", "index", "content", "text", "tool", "call",
    "arguments", "json", "schema", "result", "error", "usage", "input", "output", "cache",
]  # fmt: skip
# English model output is mostly ASCII; some events carry other scripts or emoji.
NON_ASCII = ["café", "naïve", "—", "’s", "über", "東京", "数据", "🙂", "±"]


def _sentence(rng: random.Random, size: int) -> str:
    out: list[str] = []
    n = 0
    words = WORDS + NON_ASCII if rng.random() < 0.05 else WORDS
    while n < size:
        w = rng.choice(words)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def build_stream(target: int = 5_000_000, *, seed: int = 7) -> bytes:
    """A body of about `target` bytes resembling an LLM API's event stream."""
    rng = random.Random(seed)
    parts: list[bytes] = []
    total = 0
    i = 0
    while total < target:
        size = rng.randint(200, 2000)
        roll = rng.random()
        if roll < 0.45:  # Anthropic style: named events
            text = _sentence(rng, size - 90).replace('"', "'")
            block = (
                "event: content_block_delta\n"
                f'data: {{"type":"content_block_delta","index":0,'
                f'"delta":{{"type":"text_delta","text":"{text}"}}}}\n\n'
            )
        elif roll < 0.90:  # Chat Completions style: data only
            text = _sentence(rng, size - 120).replace('"', "'")
            block = (
                f'data: {{"id":"chatcmpl-{i}","object":"chat.completion.chunk",'
                f'"choices":[{{"index":0,"delta":{{"content":"{text}"}}}}]}}\n\n'
            )
        elif roll < 0.98:  # multi-line data
            lines = [_sentence(rng, rng.randint(40, 200)) for _ in range(max(1, size // 150))]
            block = "".join(f"data: {line}\n" for line in lines) + f"id: {i}\n\n"
        else:  # keep-alive
            block = ": ping\n\n"
        raw = block.encode()
        parts.append(raw)
        total += len(raw)
        i += 1
    return b"".join(parts)


def build_api_stream(target: int = 5_000_000, *, seed: int = 7) -> bytes:
    """About `target` bytes of short text-delta events, as Anthropic sends them."""
    rng = random.Random(seed)
    parts: list[bytes] = []
    total = 0
    while total < target:
        if rng.random() < 0.01:
            block = 'event: ping\ndata: {"type": "ping"}\n\n'
        else:
            text = _sentence(rng, rng.randint(5, 60)).replace('"', "'")
            block = (
                "event: content_block_delta\n"
                f'data: {{"type":"content_block_delta","index":0,'
                f'"delta":{{"type":"text_delta","text":"{text}"}}}}\n\n'
            )
        raw = block.encode()
        parts.append(raw)
        total += len(raw)
    return b"".join(parts)


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


def decode_all(chunks: list[bytes], raw: bool = False) -> int:
    """Decode every chunk with `SSEDecoder.feed`, or with `feed_raw` (the same
    events with undecoded data, as `StreamNormalizer` reads them)."""
    decoder = SSEDecoder()
    feed = decoder.feed_raw if raw else decoder.feed
    n = 0
    for chunk in chunks:
        n += len(feed(chunk))
    decoder.flush()
    return n


def httpx_sse_all(chunks: list[bytes]) -> int:
    """The same chunks through httpx-sse, as its users run it: on an httpx.Response."""
    import httpx
    from httpx_sse import EventSource

    headers = {"content-type": "text/event-stream"}
    response = httpx.Response(200, headers=headers, content=iter(chunks))
    return sum(1 for _ in EventSource(response).iter_sse())


def throughput(title: str, lf_body: bytes, repeat: int) -> float:
    """Print the throughput table; return the ratio of SSEDecoder to the floor on LF."""
    crlf_body = lf_body.replace(b"\n", b"\r\n")
    lf_chunks, crlf_chunks = chunked(lf_body, 11), chunked(crlf_body, 11)
    rows: list[tuple[str, int, Callable[[], object]]] = [
        ("floor: body.split(b'\\n\\n')", len(lf_body), lambda: lf_body.split(b"\n\n")),
        ("SSEDecoder, LF", len(lf_body), lambda: decode_all(lf_chunks)),
        ("CRLF body.split(b'\\r\\n\\r\\n')", len(crlf_body), lambda: crlf_body.split(b"\r\n\r\n")),
        ("SSEDecoder, CRLF", len(crlf_body), lambda: decode_all(crlf_chunks)),
        ("SSEDecoder.feed_raw, LF", len(lf_body), lambda: decode_all(lf_chunks, raw=True)),
        ("SSEDecoder.feed_raw, CRLF", len(crlf_body), lambda: decode_all(crlf_chunks, raw=True)),
    ]
    if importlib.util.find_spec("httpx_sse") and importlib.util.find_spec("httpx"):
        rows.append(("httpx-sse (for context), LF", len(lf_body), lambda: httpx_sse_all(lf_chunks)))
    # Each decoder is timed in turn with its floor only, so the others cannot disturb it.
    times = median_times([rows[0][2], rows[1][2]], repeat)
    times += median_times([rows[2][2], rows[3][2]], repeat)
    times += median_times([rows[0][2], rows[4][2]], repeat)[1:]
    times += median_times([rows[2][2], rows[5][2]], repeat)[1:]
    times += median_times([fn for _, _, fn in rows[6:]], repeat)
    floor = times[0]
    events = decode_all(lf_chunks)
    print(
        f"{title}: {len(lf_body) / 1e6:.2f} MB, {events} events of "
        f"{len(lf_body) / events:.0f} bytes on average, {len(lf_chunks)} chunks of 1-4 KiB; "
        f"median of {repeat} runs"
    )
    for (label, size, _), t in zip(rows, times, strict=True):
        print(
            f"  {label:34} {size / 1e6 / t:7.0f} MB/s  {t * 1e3:7.2f} ms  "
            f"{t / events * 1e6:5.2f} µs/event  {t / floor:5.2f}x floor"
        )
    print(f"  CRLF decoding vs its own split: {times[3] / times[2]:.2f}x")
    return times[1] / floor


def one_byte_at_a_time(sizes: Sequence[int]) -> list[float]:
    """Seconds to decode one event of each size, fed one byte per feed() call."""
    runs = []
    for size in sizes:
        body = b"data: " + b"x" * size + b"\n\n"
        chunks = [body[i : i + 1] for i in range(len(body))]

        def run(chunks: list[bytes] = chunks, size: int = size) -> None:
            feed = SSEDecoder().feed
            out = []
            for chunk in chunks:
                out += feed(chunk)
            assert len(out) == 1 and len(out[0].data) == size

        runs.append(run)
    return median_times(runs, 3)


def _traced_peak(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def hostile(repeat: int, size: int = 16 * 1024 * 1024) -> None:
    """Throughput and traced peak memory on blank-line floods and one huge chunk."""
    mib = 1024 * 1024
    cases: list[tuple[str, list[bytes]]] = []
    for name, unit in (("LF", b"\n"), ("CR LF", b"\r\n"), ("CR", b"\r")):
        flood = unit * (size // len(unit))
        cases.append((f"blank lines, {name}, 1 MiB chunks", chunked_every(flood, mib)))
        cases.append((f"blank lines, {name}, one chunk", [flood]))
    cases.append(("one event of data: x lines, one chunk", [b"data: x\n" * (size // 8)]))
    print(f"hostile bodies: {size // mib} MiB each, feed_raw; median of {repeat} runs")
    for (name, chunks), seconds in zip(
        cases,
        median_times([functools.partial(decode_all, c, raw=True) for _, c in cases], repeat),
        strict=True,
    ):
        peak = _traced_peak(functools.partial(decode_all, chunks, raw=True))
        print(f"  {name:40} {size / mib / seconds:7.0f} MB/s   peak {peak / size:5.2f}x body")


def chunked_every(body: bytes, size: int) -> list[bytes]:
    """``body`` in pieces of ``size`` bytes."""
    return [body[i : i + size] for i in range(0, len(body), size)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=9, help="runs per figure (median)")
    parser.add_argument("--size", type=int, default=5_000_000, help="stream size in bytes")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 unless ratio <= 2.0 and growth <= 2.5"
    )
    args = parser.parse_args()

    ratio = throughput("mixed stream", build_stream(args.size), args.repeat)
    api_ratio = throughput("short text deltas", build_api_stream(args.size), args.repeat)
    t1, t2 = one_byte_at_a_time([1_000_000, 2_000_000])
    growth = t2 / t1
    print(
        f"one byte per feed(): 1 MB event {t1:.2f} s, 2 MB event {t2:.2f} s, "
        f"growth {growth:.2f} (linear 2, quadratic 4)"
    )
    print(f"SSEDecoder / floor on the LF stream: {ratio:.2f} (target <= 2.0)")
    print(f"SSEDecoder / floor on the short text deltas, LF: {api_ratio:.2f}")
    hostile(max(1, args.repeat // 3))
    if args.check and (ratio > 2.0 or growth > 2.5):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
