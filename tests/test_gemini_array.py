"""Gemini ``streamGenerateContent`` without ``alt=sse``: one streamed JSON array.

Oracles: the same items framed as SSE (items split out by the standard
library's ``json``, not by streamnorm) must give the same events, and
google-genai's own ``Content`` read from each item gives the same text and
function calls. (google-genai itself cannot read the array stream: its line
buffer balances braces only, so ``[{…}`` never parses.)
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Final

import pytest
from google.genai import types

from streamnorm import Error, Start, TextBlock, TextDelta, ToolCallBlock
from streamnorm.framing import FramingError, JSONValuesFramer
from streamnorm.normalizer import StreamNormalizer

from .support import (
    assert_chunk_invariant,
    dicts,
    done,
    extra_fixture_paths,
    failed,
    fixture_id,
    needs_fixtures,
    run_bytes,
    split_every,
)

API: Final = "google-generative-ai"
PATHS = extra_fixture_paths("gemini-json-array")


def as_sse(items: list[Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(i).encode() + b"\r\n\r\n" for i in items)


def chunk(text: str, finish: str | int | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-x", "responseId": "r"}


@needs_fixtures
def test_all_array_fixtures_are_found() -> None:
    assert len(PATHS) == 10


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_fixture_is_chunk_invariant_and_done(path: Path) -> None:
    events = assert_chunk_invariant(path.read_bytes(), API, path.name)
    assert done(events).message.raw_stop_reason == "STOP"


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_array_gives_the_events_of_the_same_items_as_sse(path: Path) -> None:
    data = path.read_bytes()
    assert dicts(run_bytes(data, API)) == dicts(run_bytes(as_sse(json.loads(data)), API))


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_google_genai_reads_the_same_text_and_calls(path: Path) -> None:
    data = path.read_bytes()
    # The SDK's Content, not the whole response: it refuses integer enums
    # (enum-encoding=int) in usage and safety ratings, which hold no content.
    contents = [
        types.Content.model_validate(i["candidates"][0]["content"]) for i in json.loads(data)
    ]
    parts = [p for c in contents for p in c.parts or []]
    text = "".join(p.text for p in parts if p.text and not p.thought)
    calls = [(p.function_call.name, p.function_call.args) for p in parts if p.function_call]
    content = done(run_bytes(data, API)).content
    assert "".join(b.text for b in content if isinstance(b, TextBlock)) == text
    assert [(b.name, b.arguments) for b in content if isinstance(b, ToolCallBlock)] == calls


@needs_fixtures
def test_each_item_is_decoded_as_soon_as_it_is_complete() -> None:
    data = (PATHS[0].parent / "text-after-function-response-gemini-3-flash.json").read_bytes()
    first = json.loads(data)[0]
    first_text = first["candidates"][0]["content"]["parts"][0]["text"]
    end = _item_end(data)
    n = StreamNormalizer(API)
    assert not [e for e in n.feed(data[: end - 1]) if isinstance(e, TextDelta)]
    events = n.feed(data[end - 1 : end])  # the closing brace of the first item
    assert isinstance(events[0], Start)
    assert [e.delta for e in events if isinstance(e, TextDelta)] == [first_text]


def _item_end(data: bytes) -> int:
    """Where the first item ends, by the standard library's parser."""
    start = data.index(b"{")
    _, length = json.JSONDecoder().raw_decode(data[start:].decode())
    return start + len(data[start:].decode()[:length].encode())


def test_error_item_is_upstream() -> None:
    error = {
        "error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}
    }
    for api in ("auto", API, "anthropic-messages"):
        events = run_bytes(json.dumps([error], indent=2).encode(), api)
        end = failed(events)
        assert (end.kind, end.reason) == ("upstream", "Resource exhausted")
        assert isinstance(events[0], Start) and events[0].api != "auto"


def test_error_after_content_keeps_the_content() -> None:
    error = {"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}
    end = failed(run_bytes(json.dumps([chunk("Hel"), error]).encode(), API))
    assert end.kind == "upstream" and end.message.content == (TextBlock("Hel"),)


def test_cut_array_is_truncated_with_its_content() -> None:
    data = json.dumps([chunk("Hel"), chunk("lo"), chunk("!", finish="STOP")]).encode()
    cut = data[: data.index(b'"!"')]
    end = failed(run_bytes(cut, API))
    assert end.kind == "truncated" and end.message.content == (TextBlock("Hello"),)
    # Cut after the last item but before "]": the stop was seen, as with SSE.
    assert done(run_bytes(data[:-1], API)).content == (TextBlock("Hello!"),)


def test_integer_finish_reason() -> None:
    data = json.dumps([chunk("a"), chunk("b", finish=1)]).encode()
    assert done(run_bytes(data, API)).message.raw_stop_reason == "STOP"
    data = json.dumps([chunk("a", finish=2)]).encode()
    assert done(run_bytes(data, API)).stop_reason == "length"


def test_bad_structure_between_items_is_a_protocol_error_after_the_content() -> None:
    data = b"[" + json.dumps(chunk("Hel")).encode() + b" x " + json.dumps(chunk("lo")).encode()
    end = failed(run_bytes(data, API))
    assert end.kind == "protocol" and end.message.content == (TextBlock("Hel"),)


def test_an_item_over_max_event_bytes_is_refused_while_it_arrives() -> None:
    data = json.dumps([chunk("x" * 10_000, finish="STOP")]).encode()
    for chunks in ([data], split_every(data, 512), [data[:5000]]):
        n = StreamNormalizer(API, max_event_bytes=2000)
        events = [e for c in chunks for e in n.feed(c)] + n.flush()
        end = failed(events)
        assert isinstance(end, Error) and (end.kind, end.code) == ("limit", "max_event_bytes")


def test_framer_strings_escapes_and_nesting() -> None:
    items = [{"a": '}]\\"{[', "b": [[{}], {"c": "\\\\"}]}, {"d": "é\u2028"}, [1, 2], "s", 3.5, None]
    data = json.dumps(items, ensure_ascii=False).encode()
    for size in (1, 2, 3, 7, len(data)):
        framer = JSONValuesFramer(1 << 20)
        out = [e for c in split_every(data, size) for e in framer.feed(c)] + framer.flush()
        assert [json.loads(d) for _, d, _, _ in out] == items


def test_framer_rejects_bytes_after_the_array() -> None:
    framer = JSONValuesFramer(1 << 20)
    assert framer.feed(b'[{"a":1}] \r\n') == [("message", b'{"a":1}', "", None)]
    with pytest.raises(FramingError) as info:
        framer.feed(b"junk")
    assert info.value.kind == "protocol"


def _framer_time(data: bytes, size: int) -> float:
    """CPU time of framing ``data`` in ``size``-byte chunks (CPU time, not wall
    time: the suite's other workers share the machine)."""
    framer = JSONValuesFramer(1 << 26)
    started = time.process_time()
    for i in range(0, len(data), size):
        framer.feed(data[i : i + size])
    framer.flush()
    return time.process_time() - started


@pytest.mark.parametrize(
    "item",
    [
        lambda n: b'{"t":"' + b"x" * n + b'"}',
        lambda n: b'{"t":"' + b'\\\\\\u00e9\\"' * (n // 10) + b'"}',
        lambda n: b"[" * (n // 4) + b"]" * (n // 4),
        lambda n: b'{"a":' + b'"}],[{",' * (n // 8) + b"0}",
    ],
    ids=["long-string", "escapes", "deep", "brackets-in-strings"],
)
def test_framer_cost_is_linear(item: Any) -> None:
    """n and 4n bytes of one item in 16-byte chunks: the time grows about 4x
    (asserted loosely, < 8x), never with the square."""
    n = 128 * 1024
    small, large = (b"[" + item(k) + b"]" for k in (n, 4 * n))
    # The best of three runs each, so that a busy machine does not decide.
    ratio = min(_framer_time(large, 16) for _ in range(3)) / max(
        min(_framer_time(small, 16) for _ in range(3)), 1e-6
    )
    assert ratio < 8, f"x{ratio:.1f} for x4 bytes"
