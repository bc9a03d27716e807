"""Limits, memory and adversarial tool arguments.

* ``max_event_bytes`` (default 16 MiB), ``max_stream_bytes`` (default None) and
  ``max_json_depth`` (default 512): exceeding one ends the stream with
  ``Error(kind="limit", code=<the option's name>)``, keeps what arrived
  before, and holds no more than about the limit in memory.
* Memory, measured with ``tracemalloc``: a 1 GB body without a newline is
  refused after ``max_event_bytes`` (pulled lazily from a generator, which
  stops being read), and a 100 MB valid stream costs about its final
  message.
* Tool arguments built to hurt (100k-deep nesting, 10 MB strings, lone
  surrogate escapes, duplicate keys, 10,000-digit numbers) streamed through
  every api: nothing raises, previews and the final parse stay linear.
"""

from __future__ import annotations

import itertools
import json
import time
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fuzz.check import check

from streamnorm import (
    Done,
    Error,
    NormalizationError,
    StopReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ToolCallBlock,
    ToolCallDelta,
    normalize,
)
from streamnorm.apis import ApiName
from streamnorm.normalizer import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_STREAM_BYTES,
    StreamNormalizer,
)

from .support import done, failed, fixture_paths, run, run_bytes, terminal

MiB = 1024 * 1024
API: ApiName = "anthropic-messages"


def sse(*payloads: Any, crlf: bool = False) -> bytes:
    out = "".join(
        f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n" for p in payloads
    ).encode()
    return out.replace(b"\n", b"\r\n") if crlf else out


START = {"type": "message_start", "message": {"id": "msg_1", "model": "claude"}}
TEXT_START = {
    "type": "content_block_start",
    "index": 0,
    "content_block": {"type": "text", "text": ""},
}


def text_delta(text: str, index: int = 0) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "text_delta", "text": text},
    }


HEAD = sse(START, TEXT_START, text_delta("kept"))


def assert_limit(events: list[Any], code: str) -> Error:
    end = terminal(events)
    assert isinstance(end, Error) and end.kind == "limit", end
    assert end.code == code and code in end.reason
    assert end.message.stop_reason is StopReason.ERROR
    return end


# --------------------------------------------------------------------------
# max_event_bytes


def test_default_limits() -> None:
    assert 16 * MiB == DEFAULT_MAX_EVENT_BYTES
    n = StreamNormalizer(API)
    assert n.feed(HEAD)  # nothing is refused at these sizes


def test_a_line_over_max_event_bytes() -> None:
    data = HEAD + sse(text_delta("x" * 2000)) + sse(text_delta("never seen"))
    end = assert_limit(run_bytes(data, API, max_event_bytes=1000), "max_event_bytes")
    assert end.message.content == (TextBlock("kept"),)


def test_a_line_exactly_at_max_event_bytes_passes() -> None:
    line = sse(text_delta("y" * 500))
    limit = len(line) - 2  # the line without its terminator and blank line
    events = run_bytes(HEAD + line, API, max_event_bytes=limit)
    assert not any(isinstance(e, Error) for e in events[:-1])
    assert failed(events).kind == "truncated"  # no message_stop: only truncated
    events = run_bytes(HEAD + line, API, max_event_bytes=limit - 1)
    assert_limit(events, "max_event_bytes")


def test_many_short_data_lines_over_max_event_bytes() -> None:
    """The data of one event is bounded too, however its lines are cut."""
    data = HEAD + b"data: [\n" + b"data: 1,\n" * 400 + b"data: 1]\n\n"
    end = assert_limit(run_bytes(data, API, max_event_bytes=1000), "max_event_bytes")
    assert end.message.content == (TextBlock("kept"),)


def test_max_event_bytes_is_chunk_invariant() -> None:
    data = HEAD + sse(text_delta("z" * 3000))
    whole = run([data], API, max_event_bytes=1000)
    for size in (1, 7, 1000, 1001):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert [e.to_dict() for e in run(chunks, API, max_event_bytes=1000)] == [
            e.to_dict() for e in whole
        ]


# --------------------------------------------------------------------------
# max_stream_bytes


def test_max_stream_bytes() -> None:
    tail = sse(text_delta("-more"), {"type": "message_stop"})
    events = run_bytes(HEAD + tail, API, max_stream_bytes=len(HEAD) + 10)
    end = assert_limit(events, "max_stream_bytes")
    assert end.message.content == (TextBlock("kept"),)
    events = run_bytes(HEAD + tail, API, max_stream_bytes=len(HEAD + tail))
    assert isinstance(terminal(events), Done)


def test_max_stream_bytes_counts_every_chunk_and_stops_the_source() -> None:
    pulled = []

    def chunks() -> Iterator[bytes]:
        yield HEAD
        for i in itertools.count():
            pulled.append(i)
            yield sse(text_delta("."))

    events = list(normalize(chunks(), API, max_stream_bytes=10_000))
    assert_limit(events, "max_stream_bytes")
    per_chunk = len(sse(text_delta(".")))
    assert len(pulled) == (10_000 - len(HEAD)) // per_chunk + 1


def test_max_stream_bytes_zero_refuses_everything() -> None:
    end = assert_limit(run_bytes(HEAD, API, max_stream_bytes=0), "max_stream_bytes")
    assert end.message.content == ()


# --------------------------------------------------------------------------
# max_json_depth


def nested(depth: int) -> str:
    return '{"type":"ping","x":' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_json_depth_default_boundary() -> None:
    ok = run_bytes(HEAD + sse(nested(512)), API)
    assert failed(ok).kind == "truncated"
    end = assert_limit(run_bytes(HEAD + sse(nested(513)), API), "max_json_depth")
    assert end.message.content == (TextBlock("kept"),)


def test_json_depth_custom_and_huge() -> None:
    assert_limit(run_bytes(HEAD + sse(nested(6)), API, max_json_depth=5), "max_json_depth")
    events = run_bytes(HEAD + sse(nested(100_000)) + sse({"type": "message_stop"}), API)
    end = assert_limit(events, "max_json_depth")
    assert end.message.content == (TextBlock("kept"),)


def test_json_depth_of_the_first_payload() -> None:
    end = assert_limit(run_bytes(sse("[" * 600 + "]" * 600)), "max_json_depth")
    assert end.message.content == ()


def test_limits_after_a_limit_nothing_more() -> None:
    n = StreamNormalizer(API, max_event_bytes=100)
    events = n.feed(HEAD + b"data: " + b"x" * 200)
    assert_limit(events, "max_event_bytes")
    assert n.feed(b"\n\n" + sse({"type": "message_stop"})) == []
    assert n.flush() == []


# --------------------------------------------------------------------------
# Memory


def _traced(fn: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def _no_newline_body(total: int, pulled: list[int]) -> Iterator[bytes]:
    chunk = b"x" * MiB
    yield b"data: "
    while pulled[0] < total:
        pulled[0] += len(chunk)
        yield chunk


@pytest.mark.parametrize("limit", [8 * MiB, None], ids=["8MiB", "default-16MiB"])
def test_a_1gb_body_without_newline_is_refused_in_bounded_memory(limit: int | None) -> None:
    options: dict[str, Any] = {} if limit is None else {"max_event_bytes": limit}
    configured = limit or DEFAULT_MAX_EVENT_BYTES
    pulled = [0]
    events, peak = _traced(lambda: list(normalize(_no_newline_body(1024 * MiB, pulled), **options)))
    assert_limit(events, "max_event_bytes")
    assert pulled[0] <= configured + MiB, f"{pulled[0] / MiB:.0f} MiB pulled"
    assert peak < 2 * configured, f"peak {peak / MiB:.1f} MiB"
    print(
        f"\n1 GB no-newline body, limit {configured / MiB:.0f} MiB: pulled "
        f"{pulled[0] / MiB:.0f} MiB, peak {peak / MiB:.1f} MiB"
    )


def _reasoning_stream(total: int, delta: int) -> Iterator[bytes]:
    """An Anthropic stream of about ``total`` bytes: a thinking block, then a
    text block, made of distinct ``delta``-character deltas, generated lazily."""
    yield sse(START)
    counter = itertools.count()
    for index, (kind, field) in enumerate((("thinking", "thinking"), ("text", "text"))):
        block = {"type": kind, field: ""}
        yield sse({"type": "content_block_start", "index": index, "content_block": block})
        sent = 0
        while sent < total // 2:
            events = []
            for _ in range(64):
                word = (f"{next(counter):x} " * (delta // 4 + 1))[:delta]
                delta_ = {"type": f"{kind}_delta", field: word}
                events.append({"type": "content_block_delta", "index": index, "delta": delta_})
            chunk = sse(*events)
            sent += len(chunk)
            yield chunk
        yield sse({"type": "content_block_stop", "index": index})
    yield sse(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    )


def _last(events: Iterator[Any]) -> Any:
    last = None
    for last in events:  # noqa: B007 - only the terminal event is kept
        pass
    return last


def test_a_100mb_valid_stream_costs_about_its_final_message() -> None:
    started = time.monotonic()
    end, peak = _traced(lambda: _last(normalize(_reasoning_stream(100 * MiB, 1000), API)))
    assert isinstance(end, Done)
    thinking, text = end.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    final = len(thinking.thinking) + len(text.text)
    bound = 2 * max(DEFAULT_MAX_EVENT_BYTES, final)
    assert peak < bound, f"peak {peak / MiB:.1f} MiB, final message {final / MiB:.1f} MiB"
    print(
        f"\n100 MB valid stream: final message {final / MiB:.1f} MiB, peak "
        f"{peak / MiB:.1f} MiB ({peak / final:.2f}x), {time.monotonic() - started:.1f}s"
    )


def test_one_huge_block_costs_twice_its_text() -> None:
    """The worst case: one block whose text is the whole message. At its end
    the joined text and its pieces are alive together (2x); tiny deltas do
    not add to that, because the builder joins every 2048 of them."""

    def stream() -> Iterator[bytes]:
        yield sse(START, TEXT_START)
        piece = sse(*(text_delta(f"{i % 10}") for i in range(4096)))
        for _ in range(64):  # 256 Ki one-character deltas
            yield piece
        yield sse({"type": "content_block_stop", "index": 0}, {"type": "message_stop"})

    end, peak = _traced(lambda: _last(normalize(stream(), API)))
    (block,) = end.content
    assert isinstance(block, TextBlock) and len(block.text) == 256 * 1024
    assert peak < 2 * len(block.text) + 4 * MiB, f"peak {peak / MiB:.1f} MiB"
    print(f"\none block of 256 Ki one-character deltas: peak {peak / MiB:.1f} MiB")


def test_folded_fragments_keep_the_text_exact() -> None:
    deltas = [f"<{i}>" for i in range(10_000)]
    data = sse(START, TEXT_START, *(text_delta(d) for d in deltas), {"type": "message_stop"})
    events = run_bytes(data, API)
    end = terminal(events)
    assert isinstance(end, Done) and end.content == (TextBlock("".join(deltas)),)
    assert [e.delta for e in events if isinstance(e, TextDelta)] == deltas


# --------------------------------------------------------------------------
# Adversarial tool arguments, through every api


def _anthropic(fragments: list[str]) -> bytes:
    block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    deltas = [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": f},
        }
        for f in fragments
    ]
    return sse(
        START,
        {"type": "content_block_start", "index": 0, "content_block": block},
        *deltas,
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    )


def _responses(fragments: list[str]) -> bytes:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "f",
        "arguments": "",
    }
    return sse(
        {"type": "response.created", "response": {"id": "resp_1", "model": "gpt"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        *(
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": f}
            for f in fragments
        ),
        {"type": "response.output_item.done", "output_index": 0, "item": {**item, "arguments": ""}},
        {
            "type": "response.completed",
            "response": {"id": "resp_1", "model": "gpt", "status": "completed"},
        },
    )


def _completions(fragments: list[str]) -> bytes:
    def chunk(entry: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [entry]} if entry else {},
                    "finish_reason": finish,
                }
            ],
        }

    first = {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": ""}}
    return sse(
        chunk(first),
        *(chunk({"index": 0, "function": {"arguments": f}}) for f in fragments),
        chunk({}, "tool_calls"),
        "[DONE]",
    )


def _google(fragments: list[str]) -> bytes:
    """Gemini carries arguments as JSON values: the argument *text* becomes
    one ``stringValue`` streamed in pieces under ``$.text``."""

    def part(call: dict[str, Any]) -> dict[str, Any]:
        return {"candidates": [{"content": {"parts": [{"functionCall": call}]}, "index": 0}]}

    pieces = [
        part(
            {
                "partialArgs": [{"jsonPath": "$.text", "stringValue": f, "willContinue": True}],
                "willContinue": True,
            }
        )
        for f in fragments
    ]
    return sse(
        part({"name": "f", "willContinue": True}),
        *pieces,
        part({}),
        {
            "candidates": [
                {"content": {"parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}
            ]
        },
        crlf=True,
    )


WIRES: dict[str, Callable[[list[str]], bytes]] = {
    "anthropic-messages": _anthropic,
    "openai-responses": _responses,
    "openai-completions": _completions,
    "google-generative-ai": _google,
}


def _cut(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _adversarial(name: str, scale: int = 1) -> tuple[str, Callable[[Any, str], None]]:
    """The argument text of one hostile case, and a check of the final call."""
    if name == "deep":
        depth = 100_000 * scale
        text = '{"a":' + "[" * depth + "]" * depth + "}"

        def ok(block: Any, wire: str) -> None:
            assert block.error is not None and "deeper" in block.error

        return text, ok
    if name == "long_string":
        text = '{"s": "' + "é" * (5 * MiB * scale) + '"}'

        def ok(block: Any, wire: str) -> None:
            assert block.error is None and len(block.arguments["s"]) == 5 * MiB * scale

        return text, ok
    if name == "surrogates":
        text = '{"lone": "\\ud800", "low": "\\udc00x", "pair": "\\ud83d\\ude00", "cut": "\\ud83d"}'

        def ok(block: Any, wire: str) -> None:
            assert block.arguments == {
                "lone": "\ufffd",
                "low": "\ufffdx",
                "pair": "😀",
                "cut": "\ufffd",
            }

        return text * 1 if scale == 1 else text, ok
    if name == "duplicate_keys":
        text = "{" + ",".join(f'"k": {i}' for i in range(10_000 * scale)) + "}"

        def ok(block: Any, wire: str) -> None:
            assert block.error is None and block.arguments == {"k": 10_000 * scale - 1}

        return text, ok
    assert name == "digits"
    text = '{"n": ' + "9" * (10_000 * scale) + ', "f": 1.' + "5" * (10_000 * scale) + "}"

    def ok_digits(block: Any, wire: str) -> None:
        assert block.error is not None and "digits" in block.error

    return text, ok_digits


CASES = ("deep", "long_string", "surrogates", "duplicate_keys", "digits")


def _run_arguments(api: str, text: str, fragment: int) -> tuple[list[Any], float]:
    data = WIRES[api](_cut(text, fragment))
    started = time.monotonic()
    events = run_bytes(data, api)
    for event in events:  # every preview, as a UI reading each delta would
        if isinstance(event, ToolCallDelta):
            assert isinstance(event.partial_args, dict)
    return events, time.monotonic() - started


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("api", list(WIRES))
def test_adversarial_tool_arguments(api: str, case: str) -> None:
    text, ok = _adversarial(case)
    fragment = 256 * 1024 if case == "long_string" else 1000
    events, _ = _run_arguments(api, text, fragment)
    end = terminal(events)
    assert isinstance(end, Done), end
    assert not [
        e for e in events if isinstance(e, NormalizationError) and e.kind == "decoder_error"
    ]
    (block,) = end.content
    assert isinstance(block, ToolCallBlock)
    if api == "google-generative-ai":
        # The text arrives as a string value: the call's arguments hold it.
        assert block.error is None
        value = block.arguments["text"]
        assert value.replace("\ufffd", "") == text.replace("\ufffd", "") or "\\ud" in text
    else:
        assert block.raw_arguments == text
        ok(block, api)


def test_gemini_args_object_nested_deeper_than_the_payload_limit() -> None:
    """Gemini sends ``args`` inside the payload: 100k levels are a payload
    over ``max_json_depth``, ended as a limit (with what came before)."""
    deep = '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":' + (
        "[" * 100_000 + "]" * 100_000 + '}}}]},"index":0}]}'
    )
    data = sse(
        {"candidates": [{"content": {"parts": [{"text": "hi"}]}, "index": 0}]}, deep, crlf=True
    )
    end = assert_limit(run_bytes(data, "google-generative-ai"), "max_json_depth")
    assert end.message.content == (TextBlock("hi"),)


def test_gemini_partial_args_path_100k_deep() -> None:
    path = "$" + ".a" * 100_000
    call = {
        "name": "f",
        "willContinue": True,
        "partialArgs": [{"jsonPath": path, "numberValue": 1}],
    }
    data = sse(
        {"candidates": [{"content": {"parts": [{"functionCall": call}]}, "index": 0}]},
        {
            "candidates": [
                {"content": {"parts": [{"functionCall": {}}]}, "finishReason": "STOP", "index": 0}
            ]
        },
        crlf=True,
    )
    events = run_bytes(data, "google-generative-ai")
    for e in events:
        if isinstance(e, ToolCallDelta):
            assert isinstance(e.partial_args, dict)
    (block,) = done(events).content
    assert isinstance(block, ToolCallBlock) and block.error and "deeper" in block.error
    check(data, "google-generative-ai", byte_at_a_time_max=0)


# --------------------------------------------------------------------------
# Bodies no API sends, read in bounded memory (docs/robustness.md)


def test_a_blank_line_flood_costs_no_memory_per_line() -> None:
    # 16 MiB of blank lines after the first event, in 1 MiB chunks as a
    # socket may deliver them: each line used to cost about 88 bytes at once.
    flood = b"\n" * MiB  # (made once, outside the traced call)

    def stream() -> Iterator[bytes]:
        yield HEAD
        for _ in range(16):
            yield flood
        yield sse(text_delta(" and after"), {"type": "message_stop"})

    end, peak = _traced(lambda: _last(normalize(stream(), API)))
    assert done([end]).message.text == "kept and after"
    assert peak < MiB, peak


def test_one_huge_chunk_of_short_data_lines_stops_at_the_limit_in_bounded_memory() -> None:
    # One 64 MiB chunk: an event whose data lines add up past max_event_bytes
    # a quarter of the way in. The chunk used to be split into 8M line
    # objects (about 380 MiB) before the limit was looked at.
    chunk = HEAD + b"data: x\n" * (8 * MiB)
    end, peak = _traced(lambda: _last(normalize([chunk], API, max_event_bytes=4 * MiB)))
    assert assert_limit([end], "max_event_bytes").message.text == "kept"
    assert peak < 2 * 4 * MiB + 3 * MiB, peak  # the data to the limit, one slice's lines


def test_one_huge_chunk_of_tiny_events_holds_its_output_and_one_slice() -> None:
    # One 16 MiB chunk of 140,000 two-character text deltas. What `feed`
    # returns is one event per delta; besides that, only one slice's raw
    # events wait between framer and decoder (the whole chunk's used to:
    # 2.2-2.7x the body at peak, against 0.5x now).
    delta = sse(text_delta("ab"))
    count = 16 * MiB // len(delta)
    normalizer, body = StreamNormalizer(API), HEAD + delta * count
    events, peak = _traced(lambda: normalizer.feed(body))
    assert sum(isinstance(e, TextDelta) for e in events) == count + 1
    assert peak < 16 * MiB, f"peak {peak / MiB:.1f} MiB"
    end = terminal(normalizer.flush())
    assert isinstance(end, Error) and end.kind == "truncated"
    assert end.message.text == "kept" + "ab" * count


# --------------------------------------------------------------------------
# Defaults that protect


def _longer_than_the_default() -> Iterator[bytes]:
    """A valid stream that goes on past the default max_stream_bytes (blank
    lines between two text deltas: cheap to feed, nothing to hold)."""
    flood = b"\n" * (4 * MiB)
    yield HEAD
    for _ in range(DEFAULT_MAX_STREAM_BYTES // len(flood) + 1):
        yield flood
    yield sse(text_delta(" and after"), {"type": "message_stop"})


def test_the_default_stream_limit_refuses_a_stream_no_answer_is_as_long_as() -> None:
    assert 128 * MiB == DEFAULT_MAX_STREAM_BYTES
    end = assert_limit(list(normalize(_longer_than_the_default(), API)), "max_stream_bytes")
    assert end.message.text == "kept"
    assert str(DEFAULT_MAX_STREAM_BYTES) in end.reason


def test_the_default_stream_limit_is_lifted_with_none() -> None:
    events = list(normalize(_longer_than_the_default(), API, max_stream_bytes=None))
    assert done(events).message.text == "kept and after"


def test_the_default_limits_hold_for_every_recorded_answer_many_times_over() -> None:
    bodies = [p.read_bytes() for p in fixture_paths()]
    largest = max(map(len, bodies), default=0)
    largest_event = max(
        (len(e) for b in bodies for e in b.replace(b"\r\n", b"\n").split(b"\n\n")), default=0
    )
    assert 100 * largest < DEFAULT_MAX_STREAM_BYTES
    assert 100 * largest_event < DEFAULT_MAX_EVENT_BYTES
