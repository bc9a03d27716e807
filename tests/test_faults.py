"""Faults: streams cut at every byte, a caller that aborts, a cancelled task,
a byte source that raises.

Truncation (providers.md §7): a stream cut anywhere ends in
``Error(kind="truncated")`` unless its terminal signal had arrived (for
Chat Completions and Gemini, a stop value followed by end of input is a
normal end), and an upstream error that arrived stays ``Error(upstream)``.
The events of a cut stream start with exactly the events of the complete SSE
events before the cut (the still-open blocks then end, tool calls marked
incomplete), so the partial message holds everything that arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pickle
import random
import sys
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz.mutate import split_blocks

from streamnorm import (
    BlockEnd,
    Done,
    Error,
    Event,
    NormalizationError,
    Start,
    StopReason,
    TextBlock,
    TextDelta,
    ToolCallBlock,
    ToolCallDelta,
    UsageUpdate,
    anormalize,
    normalize,
)
from streamnorm.apis import ApiName
from streamnorm.normalizer import StreamNormalizer
from streamnorm.sse import SSEDecoder

from .support import api_of, fixture_id, fixture_paths, load, needs_fixtures, run_bytes, terminal

ALL = fixture_paths()
#: Every fixture is cut around every SSE event boundary (the bytes where a
#: cut changes what counts as received), at one seeded offset inside each
#: event, and at SAMPLED_OFFSETS further seeded offsets anywhere; the seeds
#: are the file name, so the offsets are the same on every run.
BOUNDARY_SPREAD = (-2, -1, 0, 1, 2)
SAMPLED_OFFSETS = 200
#: Cuts per fixture also run from scratch, to check the shortcut below.
DIRECT_CUTS = 20


# --------------------------------------------------------------------------
# Truncation at every offset


def _stop_signal(api: ApiName, payload: Any) -> bool:
    """Whether ``payload`` carries a stop value of choice / candidate 0 that
    makes end of input a normal end (providers.md §7). Independent of the
    decoders on purpose."""
    if not isinstance(payload, dict):
        return False
    if api == "openai-completions":
        choices = payload.get("choices")
        for position, choice in enumerate(choices if isinstance(choices, list) else []):
            if not isinstance(choice, dict):
                continue
            index = choice.get("index")
            if (index if type(index) is int else position) == 0:
                reason = choice.get("finish_reason")
                return isinstance(reason, str) and bool(reason)
        return False
    if api == "google-generative-ai":
        feedback = payload.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            return True
        candidates = payload.get("candidates")
        for candidate in candidates if isinstance(candidates, list) else []:
            if isinstance(candidate, dict) and candidate.get("index", 0) == 0:
                reason = candidate.get("finishReason")
                return isinstance(reason, str) and bool(reason)
    return False


class _Reference:
    """A fixture fed one complete SSE event at a time: the events emitted
    after each, and whether a stop value had arrived by then."""

    def __init__(self, data: bytes, api: ApiName) -> None:
        self.blocks = split_blocks(data)
        self.ends: list[int] = []
        self.counts = [0]
        self.stopped = [False]
        self.closed_at: int | None = None  # blocks fed when the stream closed
        normalizer = StreamNormalizer(api)
        decoder = SSEDecoder()
        self.events: list[Event] = []
        offset = 0
        for i, block in enumerate(self.blocks):
            offset += len(block)
            self.ends.append(offset)
            if i == len(self.blocks) - 1 and not block.endswith((b"\n\n", b"\r\r", b"\r\n\r\n")):
                block += b"\n\n"  # a last event without its blank line: flush forgives
            self.events.extend(normalizer.feed(block))
            self.counts.append(len(self.events))
            stopped = self.stopped[-1]
            for sse in decoder.feed(block):
                with contextlib.suppress(ValueError):
                    stopped = stopped or _stop_signal(api, json.loads(sse.data))
            self.stopped.append(stopped)
            if normalizer.closed and self.closed_at is None:
                self.closed_at = i + 1

    def complete_blocks(self, data: bytes, cut: int) -> int:
        """How many SSE events of ``data[:cut]`` count: those ended by a blank
        line, plus a final one whose data is complete (``flush`` forgives a
        missing blank line, DESIGN.md §5)."""
        k = 0
        while k < len(self.ends) and self.ends[k] <= cut:
            k += 1
        start = self.ends[k - 1] if k else 0
        if k < len(self.ends) and cut > start:
            decoder = SSEDecoder()
            if decoder.feed(data[start:cut]):  # CR LF CR: the CR is a blank line
                return k + 1
            pending = decoder.pending()
            if pending is not None and _complete(pending.data):
                k += 1
        return k


def _complete(data: str) -> bool:
    if data.strip().startswith("[DONE]"):
        return True
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


_TAIL_EVENTS = (BlockEnd, NormalizationError, ToolCallDelta, UsageUpdate)


def _check_cut(data: bytes, api: ApiName, ref: _Reference, cut: int, events: list[Event]) -> None:
    end = terminal(events)
    k = ref.complete_blocks(data, cut)
    expected = ref.events[: ref.counts[k]]
    head = events[: len(expected)]
    assert head == expected, f"cut {cut}: the events of the complete SSE events differ"
    if ref.closed_at is not None and k >= ref.closed_at:
        assert len(events) == len(expected), f"cut {cut}: events after the terminal"
        return
    tail = events[len(expected) : -1]
    if not expected and tail and isinstance(tail[0], Start):
        tail = tail[1:]  # Start is first also when no event was complete
    assert all(isinstance(e, _TAIL_EVENTS) for e in tail), (cut, tail)
    if ref.stopped[k] and api in ("openai-completions", "google-generative-ai"):
        assert isinstance(end, Done) or end.kind == "upstream", (cut, end)
        return
    assert isinstance(end, Error) and end.kind == "truncated", (cut, end)
    assert end.message.stop_reason is StopReason.ERROR
    for e in tail:
        if isinstance(e, BlockEnd) and isinstance(e.block, ToolCallBlock):
            assert e.block.error == "incomplete", f"cut {cut}: an open tool call looks whole"


def _offsets(path: Path, ref: _Reference, size: int) -> list[int]:
    rng = random.Random(path.name)
    cuts = {0, size, *rng.sample(range(size), min(size, SAMPLED_OFFSETS))}
    start = 0
    for end in ref.ends:
        cuts.update(end + d for d in BOUNDARY_SPREAD)
        if end - start > 1:
            cuts.add(rng.randrange(start + 1, end))
        start = end
    return sorted(c for c in cuts if 0 <= c <= size)


def _cut_streams(data: bytes, api: ApiName, cuts: list[int]) -> Iterator[tuple[int, list[Event]]]:
    """``(cut, events of data[:cut] then end of input)`` for each cut, in
    order. The bytes are fed once; each cut's end of input is a copy of the
    normalizer at that point, flushed. By chunk invariance (tests/test_fixtures)
    this is what ``run_bytes(data[:cut])`` gives, at O(size + cuts × state)
    instead of O(size × cuts). The copy is a pickle round trip: a deep copy,
    made in C (``copy.deepcopy`` takes 1.6x as long)."""
    normalizer = StreamNormalizer(api)
    events: list[Event] = []
    fed = 0
    for cut in cuts:
        events += normalizer.feed(data[fed:cut])
        fed = cut
        copied = pickle.loads(pickle.dumps(normalizer, pickle.HIGHEST_PROTOCOL))
        yield cut, events + copied.flush()


@needs_fixtures
@pytest.mark.parametrize("path", ALL, ids=fixture_id)
def test_truncation_at_every_offset(path: Path) -> None:
    data = path.read_bytes()
    api = api_of(path)
    ref = _Reference(data, api)
    assert ref.events == run_bytes(data, api)[: len(ref.events)]
    cuts = _offsets(path, ref, len(data))
    direct = set(random.Random(path.name).sample(cuts, min(len(cuts), DIRECT_CUTS)))
    for cut, events in _cut_streams(data, api, cuts):
        if cut in direct:  # the copy-and-flush shortcut agrees with a fresh run
            assert events == run_bytes(data[:cut], api), f"cut {cut}"
        _check_cut(data, api, ref, cut, events)


def test_reference_counts_a_final_event_without_its_blank_line() -> None:
    data = b'data: {"a":1}\n\ndata: {"b":2}\n\n'
    ref = _Reference(data, "openai-completions")
    assert [ref.complete_blocks(data, c) for c in (0, 14, 15, 27, 28, 29)] == [0, 1, 1, 1, 2, 2]


# --------------------------------------------------------------------------
# abort()

ANTHROPIC_TOOL = "anthropic-messages/tool-use-long-input-json.sse"


def _until(data: bytes, marker: bytes) -> bytes:
    """``data`` up to the end of the SSE event holding the last ``marker``."""
    at = data.rindex(marker)
    return data[: data.index(b"\n\n", at) + 2]


@needs_fixtures
def test_abort_mid_tool_call_keeps_everything() -> None:
    data = load(ANTHROPIC_TOOL)
    head = _until(data[: len(data) // 2], b"input_json_delta")
    n = StreamNormalizer("anthropic-messages")
    events = n.feed(head)
    streamed = "".join(e.raw_json_delta for e in events if isinstance(e, ToolCallDelta))
    final = n.abort("user pressed stop")
    assert [type(e) for e in final][-1] is Error
    error = final[-1]
    assert isinstance(error, Error) and error.kind == "aborted" and error.code is None
    assert error.reason == "user pressed stop"
    assert error.message.stop_reason is StopReason.ABORTED
    ends = [e for e in final if isinstance(e, BlockEnd)]
    assert ends, "the open block ends before the terminal event"
    tool = next(b for b in error.message.content if isinstance(b, ToolCallBlock))
    assert tool.error == "incomplete" and tool.raw_arguments == streamed
    assert n.closed and n.message is error.message
    # Later input is ignored; flush has nothing to add; abort is idempotent.
    assert n.feed(data[len(head) :]) == []
    assert n.flush() == []
    assert n.abort() == []


@needs_fixtures
@pytest.mark.parametrize("path", ALL[::7], ids=fixture_id)
def test_abort_at_every_tenth_of_a_stream(path: Path) -> None:
    data = path.read_bytes()
    api = api_of(path)
    for tenth in range(11):
        n = StreamNormalizer(api)
        events = n.feed(data[: len(data) * tenth // 10])
        if n.closed:
            continue
        events += n.abort()
        end = terminal(events)
        assert isinstance(end, Error) and end.kind == "aborted"
        ended = sorted(e.index for e in events if isinstance(e, BlockEnd))
        assert ended == list(range(len(end.message.content)))


def test_abort_before_any_byte_and_after_the_end() -> None:
    n = StreamNormalizer("openai-responses", model="gpt-x")
    start, error = n.abort()
    assert isinstance(start, Start) and start.api == "openai-responses"
    assert isinstance(error, Error) and error.kind == "aborted"
    assert error.message.content == () and error.message.model == "gpt-x"
    done = StreamNormalizer("openai-completions")
    events = done.feed(b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n')
    events += done.feed(b"data: [DONE]\n\n")
    assert isinstance(terminal(events), Done)
    assert done.abort() == [] and isinstance(terminal(events), Done)


def test_abort_drops_an_incomplete_event() -> None:
    n = StreamNormalizer("openai-completions")
    n.feed(b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n')
    n.feed(b'data: {"choices":[{"index":0,"delta":{"content":"b"}}]}')  # no blank line yet
    error = n.abort()[-1]
    assert isinstance(error, Error)
    assert error.message.content == (TextBlock("a"),)


# --------------------------------------------------------------------------
# Byte sources that raise

_TEXT_DELTA = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%s"}}'
TEXT_PAYLOADS = (
    '{"type":"message_start","message":{"id":"m1","model":"claude"}}',
    '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    _TEXT_DELTA % "Hel",
    _TEXT_DELTA % "lo",
    '{"type":"content_block_stop","index":0}',
    '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}',
    '{"type":"message_stop"}',
)
TEXT_STREAM = "".join(f"data: {p}\n\n" for p in TEXT_PAYLOADS).encode()
CUT = TEXT_STREAM.index(("data: " + _TEXT_DELTA % "lo").encode())


def _failing(data: bytes, exc: BaseException, step: int = 7) -> Iterator[bytes]:
    for i in range(0, len(data), step):
        yield data[i : i + step]
    raise exc


def _assert_source_error(events: list[Event], text: str) -> Error:
    end = terminal(events)
    assert isinstance(end, Error) and end.kind == "truncated", end
    assert text in end.reason, end.reason
    assert end.message.content == (TextBlock("Hel"),)
    return end


def test_source_error_ends_the_stream_as_truncated() -> None:
    events = list(normalize(_failing(TEXT_STREAM[:CUT], OSError("connection reset"))))
    _assert_source_error(events, "OSError: connection reset")


def test_source_error_is_reraised_after_the_events_when_asked() -> None:
    events: list[Event] = []
    with pytest.raises(OSError, match="connection reset"):
        for event in normalize(
            _failing(TEXT_STREAM[:CUT], OSError("connection reset")), raise_source_errors=True
        ):
            events.append(event)
    _assert_source_error(events, "connection reset")


def test_source_error_keeps_a_complete_final_event_without_blank_line() -> None:
    data = TEXT_STREAM[:CUT] + ("data: " + _TEXT_DELTA % "lo").encode()
    end = terminal(list(normalize(_failing(data, TimeoutError("read timeout")))))
    assert isinstance(end, Error) and end.kind == "truncated"
    assert end.message.content == (TextBlock("Hello"),)


def test_source_error_after_a_finish_reason_is_still_truncated() -> None:
    """End of input after a finish_reason is a normal end; a transport that
    fails there is not (documented in docs/robustness.md)."""
    data = (
        b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
        b'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    )
    assert isinstance(terminal(list(normalize([data]))), Done)
    end = terminal(list(normalize(_failing(data, ConnectionError("eof")))))
    assert isinstance(end, Error) and end.kind == "truncated"
    assert end.message.raw_stop_reason == "stop"


def test_source_error_after_the_terminal_event_is_never_seen() -> None:
    events = list(normalize(_failing(TEXT_STREAM, OSError("late")), raise_source_errors=True))
    assert isinstance(terminal(events), Done)


def test_base_exceptions_and_thrown_exceptions_are_not_source_errors() -> None:
    with pytest.raises(KeyboardInterrupt):
        list(normalize(_failing(TEXT_STREAM[:CUT], KeyboardInterrupt())))
    gen = normalize([TEXT_STREAM])
    assert isinstance(gen, Generator)
    next(gen)
    with pytest.raises(ValueError, match="consumer"):
        gen.throw(ValueError("consumer"))


def test_programming_errors_raise() -> None:
    with pytest.raises(ValueError):
        StreamNormalizer("no-such-api")
    n = StreamNormalizer("anthropic-messages")
    n.flush()
    with pytest.raises(RuntimeError):
        n.feed(b"data: {}\n\n")


async def _async_failing(data: bytes, exc: BaseException) -> AsyncIterator[bytes]:
    for i in range(0, len(data), 7):
        yield data[i : i + 7]
        await asyncio.sleep(0)
    raise exc


async def test_async_source_error_ends_the_stream_as_truncated() -> None:
    events = [e async for e in anormalize(_async_failing(TEXT_STREAM[:CUT], OSError("reset")))]
    _assert_source_error(events, "OSError: reset")


async def test_async_source_error_is_reraised_when_asked() -> None:
    events: list[Event] = []
    with pytest.raises(OSError, match="reset"):
        async for event in anormalize(
            _async_failing(TEXT_STREAM[:CUT], OSError("reset")), raise_source_errors=True
        ):
            events.append(event)
    _assert_source_error(events, "reset")


async def test_async_over_a_plain_iterable() -> None:
    events = [e async for e in anormalize(_failing(TEXT_STREAM[:CUT], OSError("x")))]
    _assert_source_error(events, "OSError: x")
    events = [e async for e in anormalize([TEXT_STREAM])]
    assert isinstance(terminal(events), Done)


# --------------------------------------------------------------------------
# Cancellation of anormalize


async def _stalling(data: bytes, started: asyncio.Event) -> AsyncIterator[bytes]:
    yield data
    started.set()
    await asyncio.Event().wait()  # the server goes silent
    yield b""  # pragma: no cover


async def _consume(
    started: asyncio.Event,
    sink: list[Event],
    *,
    until_end: bool = False,
    await_between: bool = False,
) -> None:
    async for event in anormalize(_stalling(TEXT_STREAM[:CUT], started)):
        sink.append(event)
        if await_between:
            await asyncio.sleep(0)
        if until_end and isinstance(event, (Done, Error)):
            break


async def _cancel_while_stalled(**kwargs: Any) -> tuple[asyncio.Task[None], list[Event]]:
    started = asyncio.Event()
    sink: list[Event] = []
    task = asyncio.create_task(_consume(started, sink, **kwargs))
    await started.wait()
    await asyncio.sleep(0.01)
    task.cancel("user went away")
    with pytest.raises(asyncio.CancelledError):
        await task
    return task, sink


async def test_cancellation_yields_aborted_and_propagates() -> None:
    task, sink = await _cancel_while_stalled()
    assert task.cancelled()
    end = terminal(sink)
    assert isinstance(end, Error) and end.kind == "aborted"
    assert "cancelled" in end.reason and "user went away" in end.reason
    assert end.message.stop_reason is StopReason.ABORTED
    assert end.message.content == (TextBlock("Hel"),)
    assert [type(e) for e in sink[-2:]] == [BlockEnd, Error]


async def test_cancellation_is_not_swallowed_when_the_consumer_stops_at_the_end() -> None:
    """A consumer that breaks out at the terminal event never asks the
    generator again: the task must end cancelled anyway."""
    task, sink = await _cancel_while_stalled(until_end=True)
    assert task.cancelled()
    assert isinstance(sink[-1], Error) and sink[-1].kind == "aborted"


async def test_cancellation_hits_a_consumer_that_awaits_between_events() -> None:
    """The cancellation, requested again before the final events, is
    delivered at the consumer's first await: before the ``Error`` event."""
    task, sink = await _cancel_while_stalled(await_between=True)
    assert task.cancelled()
    assert isinstance(sink[-1], BlockEnd)
    assert not any(isinstance(e, (Done, Error)) for e in sink)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="asyncio.timeout is 3.11+")
async def test_timeout_around_the_stream_still_raises_timeout_error() -> None:
    sink: list[Event] = []
    started = asyncio.Event()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):  # type: ignore[attr-defined]
            async for event in anormalize(_stalling(TEXT_STREAM[:CUT], started)):
                sink.append(event)
    end = terminal(sink)
    assert isinstance(end, Error) and end.kind == "aborted"
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_cancelling_the_consumer_while_it_handles_an_event() -> None:
    """The generator is suspended at ``yield``: it only sees ``aclose()``."""
    gate = asyncio.Event()
    sink: list[Event] = []

    async def consume() -> None:
        async for event in anormalize([TEXT_STREAM[:CUT]]):
            sink.append(event)
            if isinstance(event, TextDelta):
                await gate.wait()

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not any(isinstance(e, (Done, Error)) for e in sink)
