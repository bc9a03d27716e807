"""Tool-call arguments cost work linear in their text, whatever the text and
however it is read (DESIGN.md §6; partial-json.md §4).

Growth tests: the same work for a size n and for 4n, timed in one run (CPU
time, best of a few repetitions); linear work gives a ratio near 4, the
quadratic work these shapes used to cost gives 16 or more, and the bound
asserted is a loose 8. No absolute time is asserted.

The shapes: escapes that the decoder used to rescan the rest of the text for
(lone surrogate escapes in a string that never closes, invalid escapes in a
closed one), through the parsers and through ``normalize()`` for every api;
and the shapes of issue-sized arguments read on every delta (one long
string, a wide object, a wide array, Gemini ``partialArgs`` with many keys),
through ``partial_args``, ``ops`` and ``to_dict()``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from streamnorm import ToolCallBlock, ToolCallDelta, normalize, resolve_api
from streamnorm.partial_json import (
    ArgumentBuffer,
    IncrementalJSONParser,
    parse_final_arguments,
    parse_partial_json,
)
from tests.support import APIS, run_bytes, terminal
from tests.test_limits import WIRES

RATIO = 8


def scale(shape: str, n: int) -> int:
    """``n`` escapes, or fewer for the shape whose unit is a whole member."""
    return n // 5 if shape == "many_short_keys" else n


def growth(prepare: Callable[[int], Callable[[], object]], n: int, reps: int = 3) -> float:
    """CPU time of the work for size 4n over that for size n, best of ``reps``
    runs each; ``prepare(size)`` builds a fresh input and returns the work
    (building is not timed)."""

    def best(size: int) -> float:
        times = []
        for _ in range(reps):
            work = prepare(size)
            start = time.process_time()
            work()
            times.append(time.process_time() - start)
        return max(min(times), 1e-6)

    small = best(n)
    return best(4 * n) / small


def cut(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# --------------------------------------------------------------------------
# Escapes (the decoder used to rescan the rest of the text at each one)

ESCAPE_TEXTS: dict[str, Callable[[int], str]] = {
    # issue 20 item 1: never closed, every escape an unpaired high surrogate
    "lone_high_surrogates_open": lambda n: '{"s":"' + "\\ud83d" * n,
    # issue 20 item 1: closed, every escape invalid
    "invalid_escapes_closed": lambda n: '{"s":"' + "\\xa" * n + '"}',
    "invalid_escapes_open": lambda n: '{"s":"' + "\\xa" * n,
    "invalid_unicode_escapes": lambda n: '{"s":"' + "\\u12x" * n + '"}',
    "high_then_bad_escape": lambda n: '{"s":"' + "\\ud83d\\u00" * n,
    "low_surrogates": lambda n: '{"s":"' + "\\ude00a" * n + '"}',
    "raw_surrogates_and_escapes": lambda n: '{"s":"' + "\ud800\\n" * n,
    "backslash_runs": lambda n: '{"s":"' + "\\\\\\q" * n + '", "t": "' + "\\" * n,
    "many_short_keys": lambda n: "{" + ",".join(f'"\\u00e9{i}\\q": "\\ud800"' for i in range(n)),
}


@pytest.mark.parametrize("shape", list(ESCAPE_TEXTS))
def test_parse_partial_json_is_linear_on_escapes(shape: str) -> None:
    make = ESCAPE_TEXTS[shape]
    assert growth(lambda n: lambda: parse_partial_json(make(n)), scale(shape, 5_000)) < RATIO


@pytest.mark.parametrize("shape", list(ESCAPE_TEXTS))
def test_parse_final_arguments_is_linear_on_escapes(shape: str) -> None:
    make = ESCAPE_TEXTS[shape]
    assert growth(lambda n: lambda: parse_final_arguments(make(n)), scale(shape, 5_000)) < RATIO


@pytest.mark.parametrize("shape", list(ESCAPE_TEXTS))
def test_incremental_feed_is_linear_on_escapes(shape: str) -> None:
    make = ESCAPE_TEXTS[shape]

    def prepare(n: int) -> Callable[[], object]:
        pieces = cut(make(n), 3)

        def work() -> object:
            parser = IncrementalJSONParser()
            for piece in pieces:
                parser.feed(piece)
            return parser.value()

        return work

    assert growth(prepare, scale(shape, 2_000)) < RATIO


def test_escape_results() -> None:
    """The values the linear paths give for the growth shapes (partial-json.md §1.2)."""
    n = 1000
    assert parse_partial_json(ESCAPE_TEXTS["lone_high_surrogates_open"](n)) == {
        "s": "\ufffd" * (n - 1)  # the last one may still pair: held back
    }
    closed = ESCAPE_TEXTS["invalid_escapes_closed"](n)
    assert parse_partial_json(closed) == {"s": "\\xa" * n}
    assert parse_final_arguments(closed) == ({"s": "\\xa" * n}, None, True)
    assert parse_partial_json(ESCAPE_TEXTS["invalid_unicode_escapes"](n)) == {"s": "\\u12x" * n}
    assert parse_partial_json(ESCAPE_TEXTS["high_then_bad_escape"](n)) == {
        "s": "\ufffd\\u00" * (n - 1) + "\ufffd"  # the last "\u00" may still become an escape
    }
    assert parse_partial_json(ESCAPE_TEXTS["low_surrogates"](n)) == {"s": "\ufffda" * n}
    assert parse_partial_json(ESCAPE_TEXTS["raw_surrogates_and_escapes"](n)) == {
        "s": "\ufffd\n" * n
    }
    assert parse_partial_json(ESCAPE_TEXTS["backslash_runs"](n)) == {
        "s": "\\\\q" * n,
        "t": "\\" * (n // 2),
    }
    keys = parse_partial_json(ESCAPE_TEXTS["many_short_keys"](n))
    assert len(keys) == n and keys["é0\\q"] == "\ufffd"


def _stream_escapes(api: str, make: Callable[[int], str], size: int) -> Callable[[int], Any]:
    def prepare(n: int) -> Callable[[], object]:
        data = WIRES[api](cut(make(n), size))
        wire_api = resolve_api(api)
        return lambda: list(normalize([data], api=wire_api))

    return prepare


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("shape", ["lone_high_surrogates_open", "invalid_escapes_closed"])
def test_normalize_is_linear_on_escapes_in_one_delta(api: str, shape: str) -> None:
    """issue 20's repro: no ``partial_args`` read, the final (or incomplete)
    arguments alone used to cost quadratic time."""
    make = ESCAPE_TEXTS[shape]
    assert growth(_stream_escapes(api, make, 10**9), 5_000) < RATIO


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("shape", ["lone_high_surrogates_open", "invalid_escapes_closed"])
def test_normalize_is_linear_on_escapes_in_small_deltas(api: str, shape: str) -> None:
    make = ESCAPE_TEXTS[shape]
    assert growth(_stream_escapes(api, make, 3), 1_000, reps=2) < RATIO


def test_issue_repro_completes_with_the_preview() -> None:
    """issue 20's exact stream: the call is cut, its arguments the preview."""
    args = '{"s":"' + "\\ud83d" * 50000
    body = (
        b'data: {"type":"message_start","message":{"id":"m","model":"c","content":[],'
        b'"usage":{}}}\n\n'
        b'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
        b'"id":"t","name":"f","input":{}}}\n\n'
        b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
        b'"partial_json":' + json.dumps(args).encode() + b"}}\n\n"
    )
    end = terminal(list(normalize([body], api="anthropic")))
    (block,) = end.message.content
    assert isinstance(block, ToolCallBlock) and block.error == "incomplete"
    assert block.arguments == {"s": "\ufffd" * 49999}


# --------------------------------------------------------------------------
# Issue-sized shapes read on every delta (issue 19 item 6)


def long_string(n: int) -> str:
    return json.dumps({"path": "a.py", "content": "0123456789abcdef\n" * (n // 17)})


def wide_object(n: int) -> str:
    return json.dumps({f"k{i}": i for i in range(n // 12)})


def wide_array(n: int) -> str:
    return json.dumps({"a": list(range(100_000, 100_000 + n // 8))})


SHAPES: dict[str, tuple[Callable[[int], str], int]] = {
    # text maker, delta size
    "long_string": (long_string, 50),
    "wide_object": (wide_object, 3),
    "wide_array": (wide_array, 3),
}


def _deltas(shape: str, n: int) -> list[ToolCallDelta]:
    make, size = SHAPES[shape]
    data = WIRES["anthropic-messages"](cut(make(n), size))
    return [e for e in run_bytes(data, "anthropic-messages") if isinstance(e, ToolCallDelta)]


def _gemini_keys(n: int) -> list[ToolCallDelta]:
    """Gemini ``partialArgs``: one number per key, ``n`` keys, one chunk each."""

    def part(call: dict[str, Any]) -> dict[str, Any]:
        return {"candidates": [{"content": {"parts": [{"functionCall": call}]}, "index": 0}]}

    chunks = [part({"name": "f", "willContinue": True})]
    chunks += [
        part({"partialArgs": [{"jsonPath": f"$.k{i}", "numberValue": i}], "willContinue": True})
        for i in range(n)
    ]
    chunks.append(part({}))
    data = b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)
    events = run_bytes(data, "google-generative-ai")
    return [e for e in events if isinstance(e, ToolCallDelta)]


READS: dict[str, Callable[[ToolCallDelta], object]] = {
    "partial_args": lambda e: e.partial_args,
    "ops": lambda e: e.ops,
    "to_dict": lambda e: json.dumps(e.to_dict()),
}


@pytest.mark.parametrize("read", list(READS))
@pytest.mark.parametrize("shape", [*SHAPES, "gemini_keys"])
def test_reading_every_delta_is_linear(shape: str, read: str) -> None:
    """A UI reading every delta's preview (and letting the previous one go),
    its operations, or the CLI printing every event's dict: O(total text)."""
    sizes = {"long_string": 50_000, "wide_object": 12_000, "wide_array": 12_000}
    reader = READS[read]

    def prepare(n: int) -> Callable[[], object]:
        events = _gemini_keys(n) if shape == "gemini_keys" else _deltas(shape, n)

        def work() -> None:
            for event in events:
                reader(event)

        return work

    assert growth(prepare, sizes.get(shape, 1_500), reps=2) < RATIO


def test_the_previews_read_on_every_delta_are_right() -> None:
    """The linear paths give what a fresh parse of each prefix gives."""
    for shape in SHAPES:
        events = _deltas(shape, 3_000)
        raw = ""
        for k, event in enumerate(events):
            raw += event.raw_json_delta
            if k % 97 == 0 or k == len(events) - 1:
                assert event.partial_args == parse_partial_json(raw), (shape, k)
        assert events[-1].partial_args == json.loads(raw)


def test_events_keep_no_preview() -> None:
    """A preview is built once per read and kept by nobody but its reader: the
    events hold the shared buffer and their own O(delta) operations only."""
    events = _deltas("long_string", 20_000)
    for event in events:
        event.partial_args  # noqa: B018
        event.ops  # noqa: B018
    import gc

    for event in events[1:]:
        held = gc.get_referents(event)
        assert not any(isinstance(x, dict) for x in held)
        assert sum(len(op.value) for op in event.ops) <= len(event.raw_json_delta)


def test_a_preview_held_by_its_reader_never_changes() -> None:
    """Copy on write: what a reader keeps stays as it was when read."""
    buffer = ArgumentBuffer()
    kept: list[tuple[dict[str, Any], str]] = []
    text = long_string(2_000)
    for piece in cut(text, 50):
        end = buffer.append(piece)
        preview = buffer.partial(end)
        if len(kept) % 5 == 0:
            kept.append((preview, json.dumps(preview)))
    for preview, dumped in kept:
        assert json.dumps(preview) == dumped


def test_reading_the_events_again_is_linear() -> None:
    """A second pass over the same events restarts the scanner once, at the
    first old event, and goes on in order from there."""

    def prepare(n: int) -> Callable[[], object]:
        events = _deltas("wide_object", n)
        for event in events:
            event.partial_args  # noqa: B018

        def work() -> None:
            for event in events:
                event.partial_args  # noqa: B018

        return work

    assert growth(prepare, 12_000, reps=2) < RATIO
